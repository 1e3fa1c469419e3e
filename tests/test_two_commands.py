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
