"""Shared bits of the benchmark scripts: statistics, result rows, the machine summary.

Every benchmark module offers ``run(...) -> list[Row]``; ``run_all.py`` prints the rows of
all of them as one Markdown table.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


@dataclass
class Row:
    """One line of the results table; ``ok`` is None when the budget could not be checked."""

    what: str
    measured: str
    budget: str
    ok: bool | None

    def markdown(self) -> str:
        mark = {True: "✅", False: "❌", None: "–"}[self.ok]
        return f"| {self.what} | {self.measured} | {self.budget} | {mark} |"


def median(values) -> float:
    return float(np.median(values))


def p95(values) -> float:
    return float(np.percentile(values, 95))


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds * 1e3 >= 10 else f"{seconds * 1e3:.1f} ms"


def table(rows) -> str:
    lines = ["| what | measured | budget | ok |", "|---|---|---|---|"]
    return "\n".join(lines + [r.markdown() for r in rows])


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def chromium_version() -> str:
    path = os.environ.get("SDPA_CHROMIUM", "/usr/bin/chromium")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
        return out.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "not found"


def machine_summary() -> str:
    """Date, machine, load and the versions that matter for the numbers."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return (f"Measured {datetime.date.today().isoformat()} on {platform.system()} {platform.machine()}, "
            f"{os.cpu_count()} cores ({cpu_model()}), load average {load} at the start; "
            f"Python {platform.python_version()}, numpy {_version('numpy')}, "
            f"matplotlib {_version('matplotlib')}, ipywidgets {_version('ipywidgets')}, "
            f"JupyterLab {_version('jupyterlab')}, Voila {_version('voila')}, {chromium_version()}.")
