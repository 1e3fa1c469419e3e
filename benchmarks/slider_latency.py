"""Slider update time in the kernel, per explorer: in-place update vs a naive re-plot.

For every explorer class (``sdpa_helpers.widgets.all_explorers()``), in a fresh Python
process so that every cache starts empty:

1. build it with no arguments;
2. **cold** sweep: set its ``main`` control to each value of ``sweep_values()`` in turn
   (first visits: data caches and cached backgrounds are empty), timing each assignment
   (the observer callback, the redraw, the PNG encoding: everything a slider move costs);
3. **warm** sweep: the same values again (everything cached);
4. **naive** re-plot: for each value, a new explorer with that value (a new Figure, a full
   draw and layout, a PNG) -- what a ``interact`` callback that re-plots from scratch does.
   Data caches are warm by then, so this isolates the plotting cost.

Budget (DESIGN.md): median ≤ 50 ms per move, cold and warm.

    python benchmarks/slider_latency.py              # every explorer, a Markdown table
    python benchmarks/slider_latency.py --json out.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BUDGET_S = 0.050
MAX_VALUES = 25  # sliders with more positions are swept at this many evenly spaced values


def _values(explorer) -> list:
    values = list(explorer.sweep_values())
    if len(values) > MAX_VALUES:
        step = (len(values) - 1) / (MAX_VALUES - 1)
        values = [values[round(i * step)] for i in range(MAX_VALUES)]
    return values


def measure_one(qualname: str) -> dict:
    """Measure the explorer ``module:Class`` in this process (call it in a fresh one)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    module, name = qualname.split(":")
    cls = getattr(importlib.import_module(module), name)
    start = time.perf_counter()
    explorer = cls()
    construct = time.perf_counter() - start
    control = explorer.controls[explorer.main]
    values = _values(explorer)

    def sweep():
        times, callbacks = [], []
        for value in values:
            if value == control.value:
                continue
            renders = explorer.renders
            t = time.perf_counter()
            control.value = value
            times.append(time.perf_counter() - t)
            callbacks.append(explorer.last_update_seconds)
            assert explorer.renders == renders + 1, f"{name}: one render per move"
        return times, callbacks

    cold, cold_cb = sweep()
    warm, warm_cb = sweep()
    naive = []
    for value in values:
        t = time.perf_counter()
        fresh = cls(**{cls.main: value})
        _ = fresh.image.value  # the PNG is made in the constructor
        naive.append(time.perf_counter() - t)
        del fresh
    return {"explorer": name, "module": module, "main": cls.main, "n_values": len(values),
            "construct_s": construct, "cold_s": cold, "warm_s": warm, "naive_s": naive,
            "cold_callback_s": cold_cb, "warm_callback_s": warm_cb}


def explorer_names() -> list[str]:
    from sdpa_helpers.widgets import all_explorers

    return [f"{c.__module__}:{c.__name__}" for c in all_explorers()]


def measure_all(names=None) -> list[dict]:
    """One fresh process per explorer (cold caches), results as dicts."""
    results = []
    env = dict(os.environ, MPLBACKEND="Agg")
    for qualname in names or explorer_names():
        out = subprocess.run([common.PYTHON, __file__, "--one", qualname], capture_output=True, text=True,
                             env=env, cwd=common.ROOT)
        if out.returncode != 0:
            results.append({"explorer": qualname.split(":")[1], "module": qualname.split(":")[0],
                            "error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"})
        else:
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return results


def notebook_of(module: str) -> str:
    """The notebook number(s) whose source imports ``module`` (for the table)."""
    found = []
    for source in sorted((common.ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py")):
        if module in source.read_text(encoding="utf-8"):
            found.append(source.name[:2])
    return ", ".join(found) or "?"


def rows(results) -> list[common.Row]:
    out = []
    for r in results:
        label = f"slider update in the kernel: {r['explorer']} ({notebook_of(r['module'])})"
        if "error" in r:
            out.append(common.Row(label, f"failed: {r['error']}", "median ≤ 50 ms", False))
            continue
        cold, warm, naive = r["cold_s"], r["warm_s"], r["naive_s"]
        measured = (f"cold {common.ms(common.median(cold))} (p95 {common.ms(common.p95(cold))}), "
                    f"warm {common.ms(common.median(warm))} (p95 {common.ms(common.p95(warm))}); "
                    f"naive re-plot {common.ms(common.median(naive))}")
        ok = common.median(cold) <= BUDGET_S and common.median(warm) <= BUDGET_S
        out.append(common.Row(label, measured, "median ≤ 50 ms", ok))
    return out


def run() -> list[common.Row]:
    return rows(measure_all())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", metavar="MODULE:CLASS", help="measure one explorer here, print JSON")
    parser.add_argument("--json", type=Path, help="also write the raw timings to this file")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return 0
    results = measure_all()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(common.table(rows(results)))
    return 0 if all(r.ok for r in rows(results)) else 1


if __name__ == "__main__":
    sys.exit(main())
