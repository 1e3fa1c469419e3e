"""Every control of every explorer, in the kernel: build time, first visits and revisits.

For each explorer class (``sdpa_helpers.widgets.all_explorers()``), ``--repeats`` times, in a
FRESH Python process (so every cache, module-level or per instance, starts empty):

1. time the constructor call (imports excluded): the learner's wait for a working figure;
2. for each control in turn (the others at their defaults), step it through its values --
   each option of a discrete control (slider over choices, dropdown, toggle buttons), an
   evenly spaced sweep of ``SWEEP`` values for a continuous one -- timing each assignment
   (observer callback + redraw + PNG: everything a move costs). These are FIRST VISITS;
3. the same steps again: REVISITS.

Budgets (issue 15): first visits and revisits each median ≤ 30 ms and p95 ≤ 80 ms, per
control; building ≤ 1 s. Medians and p95 pool the repeats.

    python benchmarks/controls_latency.py                         # every explorer
    python benchmarks/controls_latency.py --only SpreadExplorer   # one (name or module:Class)
    python benchmarks/controls_latency.py --json out.json --repeats 3
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

MEDIAN_S, P95_S, BUILD_S = 0.030, 0.080, 1.0
SWEEP = 12  # values of a continuous control
REPEATS = 3


def control_values(control) -> list:
    """Every value of a discrete control; ``SWEEP`` evenly spaced values of a continuous one."""
    options = getattr(control, "options", None)
    if options:
        return [o[1] if isinstance(o, tuple) else o for o in options]
    if isinstance(control.value, bool):  # a checkbox: both states
        return [not control.value, control.value]
    low, high = control.min, control.max
    step = getattr(control, "step", None) or (high - low) / (SWEEP - 1)
    n = int(round((high - low) / step)) + 1
    if n <= SWEEP:
        values = [low + i * step for i in range(n)]
    else:
        values = [low + round(i * (n - 1) / (SWEEP - 1)) * step for i in range(SWEEP)]
    if isinstance(control.value, int):
        values = [int(round(v)) for v in values]
    return list(dict.fromkeys(values))


def measure_one(qualname: str) -> dict:
    """Measure the explorer ``module:Class`` in this process (call it in a fresh one)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    module, name = qualname.split(":")
    cls = getattr(importlib.import_module(module), name)
    start = time.perf_counter()
    explorer = cls()
    build = time.perf_counter() - start
    defaults = dict(explorer.values)
    result = {"explorer": name, "module": module, "build_s": build, "controls": {}}

    def step_through(cname, values):
        control = explorer.controls[cname]
        times = []
        for value in values:
            if value == control.value:
                continue
            renders = explorer.renders
            t = time.perf_counter()
            control.value = value
            times.append(time.perf_counter() - t)
            assert explorer.renders == renders + 1, f"{name}.{cname}: one render per move"
        control.value = defaults[cname]  # back (a revisit of the default)
        return times

    plans = {c: control_values(explorer.controls[c]) for c in explorer.controls}
    for cname, values in plans.items():
        result["controls"][cname] = {"n_values": len(values), "first_s": step_through(cname, values)}
    for cname, values in plans.items():
        result["controls"][cname]["revisit_s"] = step_through(cname, values)
    explorer.close()
    return result


def explorer_names(only=()) -> list[str]:
    from sdpa_helpers.widgets import all_explorers

    names = [f"{c.__module__}:{c.__name__}" for c in all_explorers()]
    if only:
        names = [n for n in names if n in only or n.split(":")[1] in only]
    return names


def measure_all(names=None, repeats: int = REPEATS) -> list[dict]:
    """``repeats`` fresh processes per explorer; the samples of the repeats pooled."""
    results = []
    env = dict(os.environ, MPLBACKEND="Agg")
    for qualname in names or explorer_names():
        runs, error = [], None
        for _ in range(repeats):
            out = subprocess.run([common.PYTHON, __file__, "--one", qualname], capture_output=True,
                                 text=True, env=env, cwd=common.ROOT)
            if out.returncode != 0:
                error = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
                break
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        module, name = qualname.split(":")
        if error:
            results.append({"explorer": name, "module": module, "error": error})
            continue
        pooled = {"explorer": name, "module": module, "repeats": repeats,
                  "build_s": [r["build_s"] for r in runs], "controls": {}}
        for cname in runs[0]["controls"]:
            pooled["controls"][cname] = {
                "n_values": runs[0]["controls"][cname]["n_values"],
                "first_s": [t for r in runs for t in r["controls"][cname]["first_s"]],
                "revisit_s": [t for r in runs for t in r["controls"][cname]["revisit_s"]]}
        results.append(pooled)
    return results


def notebook_of(module: str) -> str:
    """The notebook number(s) whose source imports ``module`` (for the table)."""
    short = module.rsplit(".", 1)[-1]
    found = [s.name[:2] for s in sorted((common.ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
             if module in (text := s.read_text(encoding="utf-8")) or f"widgets.{short} import" in text]
    return ", ".join(found) or "?"


def _stats(samples) -> str:
    return f"{common.ms(common.median(samples))} (p95 {common.ms(common.p95(samples))})"


def _within(samples) -> bool:
    return common.median(samples) <= MEDIAN_S and common.p95(samples) <= P95_S


def rows(results) -> list[common.Row]:
    out = []
    for r in results:
        where = f"{r['explorer']} ({notebook_of(r['module'])})"
        if "error" in r:
            out.append(common.Row(f"explorer {where}", f"failed: {r['error']}", "", False))
            continue
        build = r["build_s"]
        out.append(common.Row(f"build {where} in a fresh process",
                              f"median {common.median(build):.2f} s (max {max(build):.2f} s, {len(build)} runs)",
                              "≤ 1 s", common.median(build) <= BUILD_S))
        for cname, c in r["controls"].items():
            first, again = c["first_s"], c["revisit_s"]
            if not first:
                out.append(common.Row(f"control {where} · {cname}", "a single value", "", None))
                continue
            out.append(common.Row(
                f"control {where} · {cname} ({c['n_values']} values)",
                f"first visits {_stats(first)}; revisits {_stats(again)}",
                "median ≤ 30 ms, p95 ≤ 80 ms", _within(first) and _within(again)))
    return out


def run(only=(), repeats: int = REPEATS) -> list[common.Row]:
    return rows(measure_all(explorer_names(only), repeats))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", metavar="MODULE:CLASS", help="measure one explorer here, print JSON")
    parser.add_argument("--only", nargs="*", default=(), help="explorer names (or module:Class) to measure")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="fresh processes per explorer")
    parser.add_argument("--json", type=Path, help="also write the raw timings to this file")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return 0
    results = measure_all(explorer_names(args.only), args.repeats)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    table = rows(results)
    print(common.table(table))
    return 0 if all(r.ok is not False for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
