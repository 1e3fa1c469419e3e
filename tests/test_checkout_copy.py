"""A copied, moved or renamed checkout gets an environment of its own (issue 37 item 1).

A checkout copied with its ``.venv`` (``cp -a``, ``rsync -a``, ``tar``) keeps an editable install
and script shebangs that name the original folder, and a stamp whose date says "up to date": its
notebooks would import the *other* checkout's ``sdpa_helpers``; a moved one fails outright
(``bad interpreter``). The stamp records the checkout's real path; ``make`` redoes a set-up made
for another folder, with one line saying why.

The fast tests read ``make -n``'s plan (what it would run) over a checkout holding the real
Makefile and requirement files and a minimal ``.venv`` (a stamp, a ``bin/pip`` with its shebang):
nothing is installed. The slow one sets up a real (tiny) environment, copies it, and imports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQS = ["requirements.txt", "requirements-test.txt", "binder/requirements.txt", "pyproject.toml",
        "requirements-lowest.txt"]
REBUILD = "setting it up again for this one"


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "MAKE"))}


def checkout(folder: Path, stamp: str | None, pip_shebang_of: Path | None = None) -> Path:
    """A checkout with the real Makefile and requirement files, and a set-up made earlier:
    ``.venv/.installed`` holding ``stamp`` (newer than every requirement file)."""
    (folder / "binder").mkdir(parents=True)
    shutil.copy2(ROOT / "Makefile", folder / "Makefile")
    for name in REQS:
        shutil.copy2(ROOT / name, folder / name)
    old = time.time() - 3600
    for name in ["Makefile", *REQS]:
        os.utime(folder / name, (old, old))
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    owner = pip_shebang_of or folder
    (bin_dir / "pip").write_text(f"#!{owner.resolve()}/.venv/bin/python\nimport pip\n")
    if stamp is not None:
        (folder / ".venv" / ".installed").write_text(stamp)
    return folder


def plan(folder: Path, target: str = "lab") -> str:
    """What ``make -n TARGET`` would run there (the set-up's own lock is taken, nothing installed)."""
    result = subprocess.run(["make", "-n", f"PYTHON={sys.executable}", target], cwd=folder, env=_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def rebuilds(out: str) -> bool:
    return "-m venv .venv" in out and "rm -rf .venv" in out


def test_the_checkout_the_venv_was_set_up_for_reuses_it(tmp_path):
    here = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    out = plan(here)
    assert not rebuilds(out) and REBUILD not in out, out
    assert "jupyter lab" in out


def test_a_copy_with_its_venv_sets_up_its_own(tmp_path):
    original = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    copy = tmp_path / "course-backup"
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)
    out = plan(copy)
    assert rebuilds(out), out
    assert f".venv belongs to {original.resolve()} and this checkout is {copy.resolve()}" in out, out
    assert plan(original).count(REBUILD) == 0  # the original keeps its own


def test_a_copy_by_tar_and_a_copy_by_rsync_set_up_their_own(tmp_path):
    original = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    archive = tmp_path / "course.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(original, arcname="course")
    (tmp_path / "unpacked").mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="tar")
    assert rebuilds(plan(tmp_path / "unpacked" / "course"))
    if shutil.which("rsync"):
        subprocess.run(["rsync", "-a", f"{original}/", f"{tmp_path / 'synced'}/"], check=True)
        assert rebuilds(plan(tmp_path / "synced"))


def test_a_moved_or_renamed_checkout_sets_up_its_own(tmp_path):
    original = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    original.rename(moved)
    out = plan(moved)
    assert rebuilds(out) and REBUILD in out, out
    assert plan(moved, "test").count(REBUILD) == 1  # `make test` too
    assert REBUILD in plan(moved, "app")


def test_a_symlinked_path_to_the_same_checkout_is_the_same_checkout(tmp_path):
    here = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    (tmp_path / "link").symlink_to(here)
    assert not rebuilds(plan(tmp_path / "link"))


def test_a_stamp_from_before_the_record_goes_by_pips_shebang(tmp_path):
    """An empty stamp (set-ups made before the stamp recorded the checkout): kept where pip's
    shebang names this checkout, redone where it names another."""
    here = checkout(tmp_path / "course", stamp="")
    assert not rebuilds(plan(here))
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(here), str(copy)], check=True)
    out = plan(copy)
    assert rebuilds(out) and f"belongs to {here.resolve()}" in out, out


def test_the_lowest_versions_venv_is_checked_too(tmp_path):
    here = checkout(tmp_path / "course", stamp=f"{(tmp_path / 'course').resolve()}\n")
    lowest = here / ".venv-lowest"
    shutil.copytree(here / ".venv", lowest)
    (lowest / "bin" / "pip").write_text(f"#!{here.resolve()}/.venv-lowest/bin/python\n")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(here), str(copy)], check=True)
    out = plan(copy, "test-lowest")
    assert ".venv-lowest belongs to" in out and "rm -rf .venv-lowest" in out, out
    assert "rm -rf .venv-lowest" not in plan(here, "test-lowest")


# -- for real: a tiny environment set up, copied, and used ------------------------------------

def _tiny_project(proj: Path) -> Path:
    (proj / "binder").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", proj / "Makefile")
    for name in ("requirements.txt", "requirements-test.txt", "binder/requirements.txt"):
        (proj / name).write_text("# nothing to install\n")
    (proj / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "tinypkg"
        version = "0.1"
        [tool.setuptools]
        py-modules = ["tinypkg"]
        """))
    (proj / "tinypkg.py").write_text("WHERE = 'original'\n")
    return proj


@pytest.mark.network
@pytest.mark.slow
def test_a_copied_checkout_imports_its_own_package(tmp_path):
    original = _tiny_project(tmp_path / "original")
    make = ["make", f"PYTHON={sys.executable}", ".venv/.installed"]
    result = subprocess.run(make, cwd=original, env=_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)
    (copy / "tinypkg.py").write_text("WHERE = 'copy'\n")
    before = subprocess.run([str(copy / ".venv/bin/python"), "-c", "import tinypkg; print(tinypkg.WHERE)"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert before.stdout.strip() == "original"  # the defect: the copy's venv imports the original
    result = subprocess.run(make, cwd=copy, env=_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert REBUILD in result.stdout
    after = subprocess.run([str(copy / ".venv/bin/python"), "-c", "import tinypkg; print(tinypkg.WHERE)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert after.stdout.strip() == "copy", after.stderr
    assert (copy / ".venv/bin/pip").read_text().startswith(f"#!{copy.resolve()}/.venv/bin/python")
    assert (copy / ".venv/.installed").read_text().strip() == str(copy.resolve())
