"""The README's two commands exist, and CI runs exactly the README's test command."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_leads_with_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1)
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make lab", "make test"]
    assert "urlpath=lab/tree/notebooks/00_start_here.ipynb" in readme


def test_ci_runs_make_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M)
    assert ci.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in ci


@pytest.mark.slow  # runs make several times: in `make test`
def test_makefile_targets_dry_run():
    for target in ("lab", "test", "app", "bench", "notebooks"):
        result = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    lab = subprocess.run(["make", "-n", "-W", "requirements.txt", "lab"], cwd=ROOT, capture_output=True,
                         text=True).stdout
    assert "python3 -m venv" in lab or ".venv/bin/python -m pip install" in lab
    assert "jupyter lab" in lab and "notebooks/00_start_here.ipynb" in lab
    app = subprocess.run(["make", "-n", "app"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "scripts/serve_app.py notebooks" in app and "bin/voila" not in app  # the locked-down launcher


def test_the_fallback_home_is_readable_by_this_user_only(tmp_path):
    """A HOME Jupyter cannot write: `make lab` and `make app` keep Jupyter's files in .venv/home,
    mode 700 even where the checkout is readable by others (the learner's IPython history is there)."""
    import os
    import shutil
    import sys

    proj = tmp_path / "proj"
    (proj / "binder").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", proj / "Makefile")
    for name in ("requirements.txt", "requirements-test.txt", "binder/requirements.txt", "pyproject.toml"):
        (proj / name).write_text("# nothing\n")
    bin_dir = proj / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\nmkdir -p \"$IPYTHONDIR\" && echo \"ipython=$IPYTHONDIR\"\n")
    (bin_dir / "python").chmod(0o755)
    (proj / ".venv" / ".installed").write_text(str(proj.resolve()))
    (proj / ".venv" / "home").mkdir(mode=0o755)  # made by an earlier version: readable by all
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "MAKE", "JUPYTER", "IPYTHON",
                                                                     "MPLCONFIG"))}
    env["HOME"] = str(blocker / "home")  # under a file: no one can create it
    for target in ("lab", "app"):
        result = subprocess.run(["make", f"PYTHON={sys.executable}", target], cwd=proj, env=env,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"ipython={proj.resolve()}/.venv/home/ipython" in result.stdout, result.stdout
        assert (proj / ".venv" / "home").stat().st_mode & 0o777 == 0o700, target
        (proj / ".venv" / "home").chmod(0o755)
