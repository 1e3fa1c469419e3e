"""Slider update in a real browser: key press to new image, per explorer, JupyterLab and Voila.

Runs the browser tests (``tests/test_browser.py``: JupyterLab and Voila in headless
Chromium) with ``SDPA_BROWSER_LATENCY_JSON`` set, then summarises that file. Each explorer's
main slider is moved 4 steps one way (first visits) and 4 back (revisits) by the keyboard;
the time runs, in the page, from the ``keydown`` event to the new ``<img>`` being decoded.

The floor (issue 23): in the same run, the same browser tests move a slider whose observer only
swaps two precomputed ~100 KB PNGs on an ``ipywidgets.Image`` (``tests/test_browser.py``,
``test_floor_*``): the kernel round trip, the transfer and the decode, with no computation and
no drawing. Each explorer's median is reported in ms and as a ratio to that floor.

Budgets (issues 15 and 23): median ≤ 1.5 × the floor of the same run, in JupyterLab and in
Voila; and median ≤ 100 ms, p95 ≤ 150 ms where the floor allows (1.5 × floor ≤ 100 ms).

    python benchmarks/browser_latency.py                    # run the browser tests, then summarise
    python benchmarks/browser_latency.py --from-json f.json # summarise an earlier run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

MEDIAN_MS, P95_MS = 100.0, 150.0
FLOOR_RATIO = 1.5
FLOOR = "floor"
BUDGET = "median ≤ 1.5 × floor; ≤ 100 ms (p95 ≤ 150 ms) where the floor allows"


def run_browser_tests(json_path: Path, select: str = "") -> tuple[int, float, str]:
    """Run tests/test_browser.py (``-k select``) writing latencies to ``json_path``;
    (exit code, seconds, tail of output)."""
    env = dict(os.environ, SDPA_BROWSER_LATENCY_JSON=str(json_path))
    start = time.perf_counter()
    out = subprocess.run([common.PYTHON, "-m", "pytest", "tests/test_browser.py", "-p", "no:randomly", "-q",
                          "-rs", "-s", *(["-k", select] if select else [])],
                         cwd=common.ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    return out.returncode, seconds, "\n".join((out.stdout + out.stderr).strip().splitlines()[-15:])


def summarise(data: dict) -> list[dict]:
    """Per explorer and mode: median and p95 of key press -> decoded image, in ms."""
    groups: dict = {}
    for rec in data["records"]:
        key = (rec["notebook"], rec["explorer"] or f"cell {rec['cell']}")
        groups.setdefault(key, {}).setdefault(rec["mode"], []).extend(rec["steps"])
    out = []
    for (notebook, explorer), modes in sorted(groups.items()):
        entry = {"notebook": notebook, "explorer": explorer}
        for mode, steps in modes.items():
            image = [s["image_ms"] for s in steps]
            first = [s["image_ms"] for s in steps if s["first_visit"]]
            entry[mode] = {"median": common.median(image), "p95": common.p95(image),
                           "first_visit_median": common.median(first) if first else None, "n": len(image)}
        out.append(entry)
    return out


def floors(summary: list[dict]) -> dict[str, float]:
    """The floor's median per mode ("lab", "voila"), from the same run."""
    for e in summary:
        if e["explorer"] == FLOOR:
            return {mode: e[mode]["median"] for mode in ("lab", "voila") if mode in e}
    return {}


def judge(m: dict, floor: float | None) -> bool:
    """Median within 1.5x the floor; the absolute budget too where the floor allows it."""
    ok = True
    if floor:
        ok = m["median"] <= FLOOR_RATIO * floor
    if not floor or FLOOR_RATIO * floor <= MEDIAN_MS:
        ok = ok and m["median"] <= MEDIAN_MS and m["p95"] <= P95_MS
    return ok


def rows(summary: list[dict]) -> list[common.Row]:
    floor = floors(summary)
    out = []
    for e in summary:
        parts, oks = [], []
        for mode, name in (("lab", "JupyterLab"), ("voila", "Voila")):
            if mode in e:
                m = e[mode]
                ratio = f", {m['median'] / floor[mode]:.2f}× floor" if floor.get(mode) else ""
                parts.append(f"{name} {m['median']:.0f} ms{ratio} (p95 {m['p95']:.0f} ms, first visits "
                             f"{m['first_visit_median']:.0f} ms)")
                oks.append(judge(m, floor.get(mode)))
        if e["explorer"] == FLOOR:
            out.append(common.Row("floor: a slider swapping two precomputed 100 KB PNGs (no computation)",
                                  "; ".join(parts), "reference", None))
            continue
        out.append(common.Row(f"slider update in the browser, key press → new image: {e['explorer']} "
                              f"({e['notebook'][:2]})", "; ".join(parts), BUDGET, all(oks) if oks else None))
    return out


def run(from_json: Path | None = None, select: str = "") -> list[common.Row]:
    if from_json is None:
        tmp = Path(tempfile.mkdtemp(prefix="sdpa-bench-"))
        json_path = tmp / "browser_latency.json"
        code, seconds, tail = run_browser_tests(json_path, select)
        if not json_path.exists():
            last = tail.splitlines()[-1] if tail else "no output"
            return [common.Row("slider update in the browser", f"not measured (browser tests: exit {code}: {last})",
                               BUDGET, None)]
        status = common.Row(f"browser tests (JupyterLab + Voila{', -k ' + select if select else ', every notebook'})",
                            f"{'passed' if code == 0 else f'FAILED (exit {code})'} in {seconds / 60:.1f} min",
                            "pass", code == 0)
    else:
        json_path, status = from_json, None
    summary = summarise(json.loads(json_path.read_text()))
    return ([status] if status else []) + rows(summary)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from-json", type=Path, help="summarise this latency file instead of running the tests")
    parser.add_argument("-k", dest="select", default="", help="only the browser tests pytest -k selects")
    args = parser.parse_args(argv)
    result = run(args.from_json, args.select)
    print(common.table(result))
    return 0 if all(r.ok is not False for r in result) else 1


if __name__ == "__main__":
    sys.exit(main())
