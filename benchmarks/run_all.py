"""Measure every budget of DESIGN.md and print one Markdown table (``make bench``).

    python benchmarks/run_all.py                      # everything (about 10 minutes)
    python benchmarks/run_all.py --skip-install-size  # without the fresh-venv install
    python benchmarks/run_all.py --skip-browser --skip-nbval

The table, with the date and a machine summary, is printed and written to
``benchmarks/results.md`` (overwritten on each run). The pieces:

- ``slider_latency.py``   -- one slider update in the kernel, per explorer, cold and warm,
                             vs a naive re-plot (budget: median ≤ 50 ms);
- ``browser_latency.py``  -- the same in JupyterLab and Voila in headless Chromium, key press
                             to new image (runs tests/test_browser.py; budget: median ≤ 250 ms);
- ``sampling_overhead.py`` -- ``sample_dot_products`` ÷ drawing its random numbers (≤ 1.5);
- ``nbval_overhead.py``    -- all notebooks under nbval ÷ (notebooks × empty kernel start) (≤ 2);
- ``install_size.py``      -- a fresh venv with requirements.txt (≤ 500 MB).

The exit code is 0 when every measured budget holds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import browser_latency  # noqa: E402
import common  # noqa: E402
import install_size  # noqa: E402
import nbval_overhead  # noqa: E402
import sampling_overhead  # noqa: E402
import slider_latency  # noqa: E402

RESULTS = HERE / "results.md"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-install-size", action="store_true", help="skip the fresh-venv install (1-2 min)")
    parser.add_argument("--skip-browser", action="store_true", help="skip the browser latencies (several min)")
    parser.add_argument("--skip-nbval", action="store_true", help="skip the nbval run (several min)")
    parser.add_argument("--browser-json", type=Path,
                        help="summarise this browser latency file instead of running the browser tests")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"where to write the table ({RESULTS.name})")
    args = parser.parse_args(argv)

    summary = common.machine_summary()  # before the load we add
    steps = [("slider updates in the kernel", slider_latency.run),
             ("sample_dot_products overhead", sampling_overhead.run)]
    if not args.skip_browser or args.browser_json:
        steps.append(("slider updates in the browser", lambda: browser_latency.run(args.browser_json)))
    if not args.skip_nbval:
        steps.append(("nbval run vs kernel start", nbval_overhead.run))
    if not args.skip_install_size:
        steps.append(("fresh install size", install_size.run))

    rows, skipped = [], [name for flag, name in ((args.skip_browser and not args.browser_json, "browser"),
                                                 (args.skip_nbval, "nbval"),
                                                 (args.skip_install_size, "install size")) if flag]
    start = time.perf_counter()
    for name, step in steps:
        t = time.perf_counter()
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        try:
            rows += step()
        except Exception as exc:  # report the failure in the table, go on with the rest
            rows.append(common.Row(name, f"benchmark failed: {type(exc).__name__}: {exc}", "", None))
        print(f"  done in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)

    text = "\n".join([
        "## Benchmarks",
        "",
        summary + f" The whole run took {(time.perf_counter() - start) / 60:.1f} min"
        + (f" (skipped: {', '.join(skipped)})." if skipped else "."),
        "",
        common.table(rows),
        "",
        "Kernel updates: *cold* is each value's first visit (caches empty, in a fresh process), "
        "*warm* a revisit; *naive re-plot* builds a new explorer (a new figure, full draw and layout) "
        "per value. Browser: from the `keydown` event to the new image decoded in the page; the "
        "slider moves 4 steps one way (first visits) and 4 back. Reproduce with `make bench`.",
        "",
    ])
    print(text)
    args.output.write_text(text, encoding="utf-8")
    return 0 if all(r.ok is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
