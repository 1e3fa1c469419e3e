"""Binder (repo2docker) configuration: Python version, exact pins, the package installed."""

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def pins():
    out = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"binder/requirements.txt: {line!r} is not an exact == pin"
            out[name.lower().replace("_", "-")] = version
    return out


def test_runtime_is_python_3_11_or_newer():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    major, minor = map(int, re.fullmatch(r"python-(\d+)\.(\d+)", runtime).groups())
    assert (major, minor) >= (3, 11)


@pytest.mark.pinned
def test_pins_satisfy_the_user_requirements_and_are_what_we_test():
    pinned = pins()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        req = Requirement(line)
        name = req.name.lower().replace("_", "-")
        assert name in pinned, f"{req.name} is not pinned in binder/requirements.txt"
        assert req.specifier.contains(pinned[name]), f"pin {name}=={pinned[name]} is outside {req}"
        # `make test` installs with the pins as constraints: the tested version is the pinned one.
        assert metadata.version(req.name) == pinned[name], f"tested {req.name} differs from its pin"


def test_postbuild_installs_the_package():
    post = BINDER / "postBuild"
    assert re.search(r"pip install .*-e \.", post.read_text())


@pytest.mark.git  # a ZIP unpacked by a tool that drops file modes: the checkout says nothing (issue 27)
def test_postbuild_is_committed_executable():
    """Binder runs the committed file: its mode in git is 100755 (whatever the checkout's file says)."""
    staged = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    assert staged.startswith("100755 "), f"postBuild must be committed executable: {staged!r}"


@pytest.mark.skipif(shutil.which("repo2docker", path=str(Path(sys.executable).parent)) is None,
                    reason="jupyter-repo2docker is not installed")
def test_repo2docker_no_build_succeeds():
    exe = str(Path(sys.executable).parent / "repo2docker")
    result = subprocess.run([exe, "--no-build", "--debug", "."], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-3000:]
    assert "python=3.11" in log or "python-3.11" in log
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in log
    assert "./binder/postBuild" in log
