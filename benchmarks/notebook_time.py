"""Each notebook executed top to bottom in a fresh kernel ÷ a kernel that imports the stack.

The denominator is what no notebook can avoid: starting a kernel that imports numpy,
matplotlib, ipywidgets and sdpa_helpers (median of 3). The numerator executes the stored
notebook with nbclient in a fresh kernel (kernel start included, working directory
``notebooks/``, nothing written), as ``authoring/build.py`` does.

Budget (issue 15; it replaces the old "nbval ÷ empty kernel" ratio): ≤ 10×, notebook 09
(which trains hundreds of small models) ≤ 30×.

    python benchmarks/notebook_time.py            # every notebook
    python benchmarks/notebook_time.py 00 05      # notebooks whose names start with these
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from nbval_overhead import kernel_start_seconds  # noqa: E402

BUDGET = {"09": 30.0}
DEFAULT_BUDGET = 10.0
#: What every notebook's setup cell imports at least: the floor of a notebook's cost.
STACK = "%matplotlib inline\nimport numpy, matplotlib, ipywidgets, sdpa_helpers, sdpa_helpers.widgets"


def notebooks(prefixes=()) -> list[Path]:
    found = sorted((common.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not prefixes or any(p.name.startswith(x) for x in prefixes)]


def execute_seconds(path: Path) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def run(prefixes=()) -> list[common.Row]:
    floor = kernel_start_seconds(code=STACK)
    out = []
    for path in notebooks(prefixes):
        budget = BUDGET.get(path.name[:2], DEFAULT_BUDGET)
        try:
            seconds = execute_seconds(path)
        except Exception as exc:  # a failing notebook is a row, not the end of the bench
            out.append(common.Row(f"execute {path.stem}", f"failed: {type(exc).__name__}: {str(exc)[:200]}",
                                  f"≤ {budget:.0f}×", False))
            continue
        ratio = seconds / floor
        out.append(common.Row(f"execute {path.stem} ÷ a kernel importing the stack",
                              f"{ratio:.1f}× ({seconds:.1f} s vs {floor:.2f} s)", f"≤ {budget:.0f}×",
                              ratio <= budget))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*")
    rows = run(parser.parse_args().prefixes)
    print(common.table(rows))
    sys.exit(0 if all(r.ok for r in rows) else 1)
