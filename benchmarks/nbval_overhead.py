"""All notebooks under nbval ÷ (number of notebooks × one empty kernel's start).

Times ``pytest --nbval --nbval-current-env notebooks/`` (what ``make test`` runs on the
notebooks) and the start of an empty kernel (jupyter_client: start, wait until ready,
shut down; the median of 3). A ratio near 1 means the notebooks cost little beyond
starting their kernels.

Budget (the budgets table in benchmarks/results.md): ratio ≤ 2.

    python benchmarks/nbval_overhead.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BUDGET = 2.0


def kernel_start_seconds(repeats: int = 3, code: str = "") -> float:
    """Median seconds to start a kernel until it is ready (and has run ``code``, if given)."""
    from jupyter_client import KernelManager

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        km = KernelManager(kernel_name="python3")
        km.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=120)
            if code:
                reply = kc.execute_interactive(code, timeout=120, output_hook=lambda msg: None)
                assert reply["content"]["status"] == "ok", reply["content"]
            times.append(time.perf_counter() - start)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=False)
    return common.median(times)


def nbval_seconds() -> tuple[float, int, int, str]:
    """(seconds, number of notebooks, exit code, last line of the output)."""
    notebooks = sorted((common.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    start = time.perf_counter()
    out = subprocess.run([common.PYTHON, "-m", "pytest", "--nbval", "--nbval-current-env",
                          "--nbval-cell-timeout=300", "-p", "no:randomly", "-q",
                          *[str(p.relative_to(common.ROOT)) for p in notebooks]],
                         cwd=common.ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    last = (out.stdout.strip().splitlines() or ["no output"])[-1]
    return seconds, len(notebooks), out.returncode, last


#: What every notebook's setup cell imports at least: the floor of a notebook's cost.
STACK = "%matplotlib inline\nimport numpy, matplotlib, ipywidgets, sdpa_helpers.widgets, sdpa_helpers.exercises"


def run() -> list[common.Row]:
    kernel = kernel_start_seconds()
    with_stack = kernel_start_seconds(code=STACK)
    seconds, n, code, last = nbval_seconds()
    ratio = seconds / (n * kernel)
    status = "" if code == 0 else f"; nbval FAILED: {last}"
    return [common.Row(f"nbval over all {n} notebooks ÷ ({n} × an empty kernel's start)",
                       f"{ratio:.2f} ({seconds:.1f} s vs {n} × {kernel:.2f} s; a kernel that also imports "
                       f"the course's stack: {with_stack:.2f} s){status}", "≤ 2",
                       ratio <= BUDGET and code == 0)]


if __name__ == "__main__":
    rows = run()
    print(common.table(rows))
    sys.exit(0 if all(r.ok for r in rows) else 1)
