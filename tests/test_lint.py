"""The code stays clean: ruff (lint and import order) and mypy (the math layer's types)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.lint


def run(tool: str, *args: str) -> subprocess.CompletedProcess:
    exe = BIN / tool
    if not exe.exists():
        pytest.fail(f"{tool} is not installed in {BIN}: it is in requirements-test.txt (make test installs it)")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    result = run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_mypy_is_clean_on_the_math_layer():
    result = run("mypy", "--no-incremental", "--cache-dir=/dev/null")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
