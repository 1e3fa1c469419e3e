"""A checkout without git history (GitHub's "Download ZIP", a tarball, ``git archive``; issue 27).

A test that needs the repository is marked ``git`` (``tests/conftest.py`` skips it, with its
reason, where the project is not a git repository of its own). Here the committed tree -- with
the working tree's changes to tracked files, through ``git stash create`` -- is extracted with
``git archive`` into a scratch folder outside any repository, and pytest runs there the tests
marked ``git``: each must be skipped with the "no git repository" reason, none may fail. (Run
once in CI, inside ``make test``: it collects the suite once, a few seconds.)
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from conftest import git_skip_reason

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.git]  # it needs git itself, to make the extract


def _archive(dest: Path) -> Path:
    # a commit of the working tree's tracked files (nothing is stashed); HEAD where that fails
    ident = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@localhost",
             "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@localhost"}
    stash = subprocess.run(["git", "stash", "create"], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, **ident})
    tree = (stash.returncode == 0 and stash.stdout.strip()) or "HEAD"
    tar = subprocess.run(["git", "archive", "--format=tar", tree], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(dest, filter="data")
    return dest


def test_the_git_tests_skip_with_their_reason_in_a_git_archive_extract(tmp_path):
    extract = _archive(tmp_path / "checkout")
    assert not (extract / ".git").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GIT_"))}
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)  # git must not find a repository above the extract
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    report = tmp_path / "report.xml"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-p", "no:nbval", "-m", "git", "-q", f"--junitxml={report}", "tests"],
                         cwd=extract, env=env, capture_output=True, text=True, timeout=600)
    out = (run.stdout + run.stderr)[-4000:]
    assert run.returncode == 0, out
    cases = ElementTree.parse(report).getroot().iter("testcase")
    outcomes = {f"{c.get('classname')}.{c.get('name')}": [(e.tag, e.get("message", "")) for e in c] for c in cases}
    # this file's two tests and the site's git-ignore test at least; every one skipped for want of git
    assert "tests.test_site.test_the_built_site_is_not_committed" in outcomes, (sorted(outcomes), out)
    assert len(outcomes) >= 3, (sorted(outcomes), out)
    for name, results in outcomes.items():
        assert [tag for tag, _ in results] == ["skipped"], (name, results, out)
        assert "no git repository" in results[0][1], (name, results)


def test_file_modes_dropped_by_an_unzip_tool_fail_no_test(tmp_path):
    """Some tools unpack a ZIP without file modes (Python's zipfile): no executable file then."""
    extract = _archive(tmp_path / "checkout")
    for path in extract.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GIT_"))}
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-p", "no:nbval", "-q", "-rs", "tests/test_binder.py", "-k", "postbuild"],
                         cwd=extract, env=env, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "1 passed, 1 skipped" in out, out[-3000:]


def test_the_reason_is_none_in_this_repository():
    assert git_skip_reason() is None
