"""Kernel CPU an explorer's prefetch costs (issue 39): every frame the notebook's front end asks for
after display, drawn in this process in the front end's order, with its CPU time.

The front end (``sdpa_helpers/widgets/explorer.js``, ``prefetchOrder``) asks for the neighbours of
the starting setting (one and two steps away), then the rest of each control's prefetch grid by
distance, at most ``PREFETCH_MAX`` frames. This script rebuilds that order from the explorer's own
control specs (the same rule, in Python), draws each frame with the explorer's drawing path
(``Explorer._draw``: the figure's update and the PNG, as a ``want`` message does) and reports the
process's CPU time (``time.process_time``: all threads) and wall time for the whole grid. The kernel
also spends time sending each frame over the websocket; that is not counted here (the browser
benchmark's "grid in browser" time holds it).

    python benchmarks/prefetch_cpu.py [--only VarianceExplorer,...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

FRONT_END = common.ROOT / "sdpa_helpers" / "widgets" / "explorer.js"


def _js_constant(name: str) -> int:
    m = re.search(rf"var {name} = (\d+);", FRONT_END.read_text(encoding="utf-8"))
    if m is None:
        raise RuntimeError(f"{name} not found in {FRONT_END}")
    return int(m.group(1))


def prefetch_order(specs: list[dict]) -> list[list[int]]:
    """The indices the front end asks for after display, in its order (``prefetchOrder``)."""
    short, most = _js_constant("SHORT_LIST"), _js_constant("PREFETCH_MAX")
    state = [s["initial"] for s in specs]
    jumps = [s["kind"] != "range" and len(s["labels"]) <= short for s in specs]
    seen, out = set(), []

    def add(ix):
        if tuple(ix) not in seen:
            seen.add(tuple(ix))
            out.append(list(ix))

    for step in (1, 2):
        for k, s in enumerate(specs):
            n = len(s["labels"])
            deltas = (range(-state[k], n - state[k]) if step == 1 else []) if jumps[k] else (-step, step)
            for d in deltas:
                j = state[k] + d
                if d and 0 <= j < n:
                    add(state[:k] + [j] + state[k + 1:])
    ranges = []
    for k, s in enumerate(specs):
        lo, hi = s["grid"]
        ranges.append(range(min(lo, state[k]), max(hi, state[k] + 1)))

    def dist(ix):
        return sum((ix[k] != state[k]) if jumps[k] else abs(ix[k] - state[k]) for k in range(len(ix)))

    for ix in sorted((list(t) for t in itertools.product(*ranges)), key=dist):  # sorted() is stable, as JS's sort
        add(ix)
    return out[:most]


def measure(cls) -> dict:
    explorer = cls()
    try:
        order = prefetch_order(explorer._specs)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for ix in order:
            explorer._draw(explorer._values_at(ix))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        explorer.close()
    return {"explorer": cls.__name__, "frames": len(order), "cpu_s": cpu, "wall_s": wall}


def run(only: list[str]) -> list[dict]:
    import matplotlib

    matplotlib.use("Agg")
    from sdpa_helpers.widgets import all_explorers

    return [measure(c) for c in all_explorers() if not only or c.__name__ in only]


def rows(records: list[dict]) -> list[common.Row]:
    """The results as rows of ``make bench``'s table (no budget: the kernel CPU a grid costs)."""
    out = []
    for r in records:
        per_frame = 1000 * r["cpu_s"] / max(r["frames"], 1)
        out.append(common.Row(f"prefetch grid, kernel CPU: {r['explorer']}",
                              f"{r['cpu_s']:.2f} s for {r['frames']} frames ({per_frame:.0f} ms a frame)",
                              "reference", None))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    load0 = os.getloadavg()
    records = run([s for s in args.only.split(",") if s])
    print(f"load average {load0[0]:.1f} → {os.getloadavg()[0]:.1f}")
    print("| explorer | frames | kernel CPU (s) | wall (s) | CPU per frame (ms) |\n|---|---|---|---|---|")
    for r in records:
        print(f"| {r['explorer']} | {r['frames']} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} | "
              f"{1000 * r['cpu_s'] / max(r['frames'], 1):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
