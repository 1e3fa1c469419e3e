"""Installed size of a fresh venv with ``pip install -r requirements.txt``.

Creates a venv in a scratch directory with the base ``python3``, installs what a learner
installs (``requirements.txt``, from the configured package index), and sums the sizes of
the files in the venv (symlinks not followed). Takes a minute or two.

Budget (the budgets table in benchmarks/results.md): ≤ 500 MB.

    python benchmarks/install_size.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BUDGET_MB = 500.0


def tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def base_python() -> str:
    """The interpreter the project's venv was made from (``python3`` outside a venv)."""
    return getattr(sys, "_base_executable", None) or shutil.which("python3") or sys.executable


def measure(requirements: Path = common.ROOT / "requirements.txt") -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="sdpa-size-"))
    try:
        venv = tmp / "venv"
        start = time.perf_counter()
        subprocess.run([base_python(), "-m", "venv", str(venv)], check=True)
        pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", "-r", str(requirements)],
                             capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if pip.returncode != 0:
            return {"error": (pip.stderr.strip().splitlines() or ["pip failed"])[-1]}
        freeze = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
                                capture_output=True, text=True).stdout.split()
        return {"bytes": tree_bytes(venv), "seconds": seconds, "packages": len(freeze)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run() -> list[common.Row]:
    m = measure()
    what = "fresh venv + `pip install -r requirements.txt`, installed size"
    if "error" in m:
        return [common.Row(what, f"not measured: {m['error']}", "≤ 500 MB", None)]
    mb = m["bytes"] / 1e6
    return [common.Row(what, f"{mb:.0f} MB ({m['packages']} distributions, installed in {m['seconds']:.0f} s)",
                       "≤ 500 MB", mb <= BUDGET_MB)]


if __name__ == "__main__":
    rows = run()
    print(common.table(rows))
    sys.exit(0 if all(r.ok for r in rows) else 1)
