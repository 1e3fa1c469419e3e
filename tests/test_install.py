"""Installing the course: the pinned set resolves for every Python the README claims, the
lowest versions are the floors of the ranges, and `make`'s set-up recovers by itself."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def claimed_oldest_python() -> tuple[int, int]:
    readme = (ROOT / "README.md").read_text()
    major, minor = map(int, re.search(r"`python3` \((\d+)\.(\d+) or newer", readme).groups())
    return major, minor


def test_readme_pyproject_and_binder_claim_the_same_oldest_python():
    oldest = claimed_oldest_python()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'requires-python = ">={oldest[0]}.{oldest[1]}"' in pyproject
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == f"python-{oldest[0]}.{oldest[1]}"


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("python", ["3.11.0", "3.11.2", "3.12", "3.13"])
def test_pinned_set_resolves_for_every_claimed_python(python, tmp_path):
    """The exact pins install on the oldest claimed Python (3.11.0; Debian 12's python3 is 3.11.2)
    and on newer ones: pip resolves them as that interpreter would, without needing it."""
    assert tuple(int(x) for x in python.split(".")[:2]) >= claimed_oldest_python()
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--only-binary=:all:",
         "--python-version", python, "--ignore-installed", "--target", str(tmp_path / "t"),
         "-r", str(ROOT / "binder" / "requirements.txt")],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


def test_lowest_constraints_are_the_floor_of_every_range():
    floors = {}
    for line in requirement_lines(ROOT / "requirements-lowest.txt"):
        name, _, version = line.partition("==")
        floors[name.lower()] = version
    for line in requirement_lines(ROOT / "requirements.txt"):
        req = Requirement(line)
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lower) == 1, f"{req} has no single >= floor"
        floor = floors.get(req.name.lower())
        assert floor is not None, f"{req.name} has no floor in requirements-lowest.txt"
        # the floor is the range's lower bound (2.0 == 2.0.0) and inside the range
        assert [int(x) for x in floor.split(".")] + [0] * 3 >= [int(x) for x in lower[0].split(".")] + [0] * 3
        assert req.specifier.contains(floor), f"{req.name}=={floor} is outside {req}"


def test_lowest_versions_run_in_the_github_workflow():
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert "make test-lowest" in workflow and 'python-version: "3.11"' in workflow


def _make_project(tmp_path: Path) -> Path:
    """A copy of the Makefile with tiny requirement files and a one-module package."""
    proj = tmp_path / "proj"
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
    (proj / "tinypkg.py").write_text("X = 1\n")
    return proj


def _make(proj: Path, *targets: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "MAKE"))}
    return subprocess.run(["make", f"PYTHON={sys.executable}", *targets], cwd=proj, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.network
@pytest.mark.slow
def test_interrupted_setup_and_removed_requirements_recover_by_themselves(tmp_path):
    proj = _make_project(tmp_path)
    # An interrupted set-up: a venv with a Python but no pip, and no stamp.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(proj / ".venv")], check=True)
    result = _make(proj, ".venv/.installed")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    check = subprocess.run([str(proj / ".venv/bin/python"), "-c", "import pip, tinypkg"], capture_output=True)
    assert check.returncode == 0, check.stderr
    # Something installed earlier that the files no longer name does not survive a change of them.
    site = next((proj / ".venv/lib").glob("python3*/site-packages"))
    (site / "leftover_requirement.py").write_text("")
    (proj / "requirements.txt").write_text("# changed\n")
    result = _make(proj, ".venv/.installed")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    site = next((proj / ".venv/lib").glob("python3*/site-packages"))
    assert not (site / "leftover_requirement.py").exists()


def test_a_python_too_old_gets_a_clear_message(tmp_path):
    proj = _make_project(tmp_path)
    fake = tmp_path / "python-old"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Python 3.10.13'; exit 0; fi\nexit 1\n")
    fake.chmod(0o755)
    result = subprocess.run(["make", f"PYTHON={fake}", ".venv/.installed"], cwd=proj, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0
    assert "needs Python 3.11 or newer" in result.stdout + result.stderr
    assert not (proj / ".venv").exists()


def _start_make(proj: Path, *targets: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "MAKE"))}
    return subprocess.Popen(["make", f"PYTHON={sys.executable}", *targets], cwd=proj, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.network
@pytest.mark.slow
def test_two_first_set_ups_at_once_both_end_with_a_working_venv(tmp_path):
    """`make lab` in one terminal and `make test` in another, on a fresh clone: the second waits
    for the first set-up (a lock) and reuses it, and neither prints a misleading message."""
    import time

    proj = _make_project(tmp_path)
    first = _start_make(proj, ".venv/.installed")
    time.sleep(1.0)
    second = _start_make(proj, ".venv/.installed")
    out_first, _ = first.communicate(timeout=600)
    out_second, _ = second.communicate(timeout=600)
    assert first.returncode == 0, out_first[-3000:]
    assert second.returncode == 0, out_second[-3000:]
    for out in (out_first, out_second):
        assert "python3-venv" not in out
    assert "waiting" in out_second or "up to date" in out_second or "reusing" in out_second, out_second
    check = subprocess.run([str(proj / ".venv/bin/python"), "-c", "import pip, tinypkg"], capture_output=True)
    assert check.returncode == 0, check.stderr


def test_the_set_up_holds_a_lock_and_blames_venv_only_when_venv_is_missing():
    dry = subprocess.run(["make", "-n", "-W", "requirements.txt", ".venv/.installed"], cwd=ROOT,
                         capture_output=True, text=True).stdout
    makefile = (ROOT / "Makefile").read_text()
    assert "LOCKED_SETUP" in dry and "fcntl.flock" in makefile, dry
    assert "import ensurepip" in makefile  # the python3-venv hint only when ensurepip is missing


def test_make_lab_with_a_home_it_cannot_write_falls_back_to_a_writable_place(tmp_path):
    """A read-only HOME: Jupyter's runtime, data and IPython dirs go under .venv, and it says so."""
    proj = _make_project(tmp_path)
    bin_dir = proj / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "python"  # `make lab` runs JupyterLab through .venv's python (stopped cleanly on SIGHUP)
    fake.write_text("#!/bin/sh\n"
                    "for d in \"$JUPYTER_RUNTIME_DIR\" \"$JUPYTER_DATA_DIR\" \"$IPYTHONDIR\" \"$MPLCONFIGDIR\"; do\n"
                    "  mkdir -p \"$d\" && touch \"$d/probe\" || { echo \"cannot write $d\"; exit 3; }\n"
                    "done\necho \"runtime=$JUPYTER_RUNTIME_DIR\"\n")
    fake.chmod(0o755)
    (proj / ".venv" / ".installed").touch()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "MAKE", "JUPYTER", "IPYTHON",
                                                                     "MPLCONFIG"))}
    env["HOME"] = str(blocker / "home")  # under a file: no one can create it, root included
    result = subprocess.run(["make", "lab"], cwd=proj, env=env, capture_output=True, text=True, timeout=60)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "not writable" in out and f"runtime={proj}/.venv" in out
    # a writable HOME is left alone
    env["HOME"] = str(tmp_path)
    result = subprocess.run(["make", "lab"], cwd=proj, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 or "not writable" not in result.stdout
