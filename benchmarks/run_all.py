"""Measure every speed budget (issue 15) and print one Markdown table (``make bench``).

    python benchmarks/run_all.py                      # everything (long: do not run it on a busy machine)
    python benchmarks/run_all.py --skip-install-size --skip-browser
    python benchmarks/run_all.py --explorers VarianceExplorer --notebooks 00 --browser 00 --output /tmp/r.md

The table, with the date and a machine summary, is printed and written to
``benchmarks/results.md``; a full run (no subset chosen) also rewrites the block of
CONTRIBUTING.md between ``<!-- BENCHMARKS -->`` and ``<!-- /BENCHMARKS -->``. The pieces:

- ``controls_latency.py`` -- every control of every explorer in the kernel: each value of a
                             discrete control, a sweep of a continuous one; first visits (fresh
                             processes, repeated) and revisits, median and p95 (≤ 30 / ≤ 80 ms);
                             building each explorer in a fresh process (≤ 1 s);
- ``notebook_time.py``    -- each notebook executed in a fresh kernel ÷ a kernel that imports
                             numpy, matplotlib, ipywidgets and sdpa_helpers (≤ 10×; 09 ≤ 30×);
- ``browser_latency.py``  -- key press → new image in JupyterLab and Voila, headless Chromium
                             (runs tests/test_browser.py; median ≤ 100 ms, p95 ≤ 150 ms);
- ``sampling_overhead.py`` -- ``sample_dot_products`` ÷ drawing its random numbers (≤ 1.5);
- ``explorer_frontend.py`` -- the explorers' one front end (issue 39): key press → painted frame, prefetched
                             in JupyterLab, in Voila, through a 100 ms proxy and on the site; first
                             visits; the time until each grid is in the browser; the floor (a kernel
                             round trip) in the same run, and a first visit split into the kernel's
                             drawing and the rest; one row per explorer, and one wide table after;
- ``prefetch_cpu.py``     -- the kernel CPU each explorer's prefetch grid costs;
- ``install_size.py``      -- a fresh venv with requirements.txt (≤ 500 MB);
- ``suite_times.py``      -- `make test-fast` (≤ 60 s) and `make test`: time and test count;
- ``site_budgets.py``      -- the static site (issue 22): `make site` afresh (≤ 10 min), its size
                             (≤ 50 MB), and per page over a throttled link (10 Mbit/s, 40 ms):
                             bytes and time until the explorers are usable (≤ 5 MB, ≤ 3 s), key
                             press → new frame visible (median ≤ 50 ms, p95 ≤ 100 ms).

A missed budget shows as ❌ in the table; the exit code is 0 when every measured budget holds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import browser_latency  # noqa: E402
import common  # noqa: E402
import controls_latency  # noqa: E402
import explorer_frontend  # noqa: E402
import install_size  # noqa: E402
import notebook_time  # noqa: E402
import prefetch_cpu  # noqa: E402
import sampling_overhead  # noqa: E402
import site_budgets  # noqa: E402
import suite_times  # noqa: E402

RESULTS = HERE / "results.md"
#: The contributors' document holds the latest full run (the README is for learners).
CONTRIBUTING = common.ROOT / "CONTRIBUTING.md"
BLOCK = ("<!-- BENCHMARKS -->", "<!-- /BENCHMARKS -->")
INTRO = ("`make bench` (`benchmarks/run_all.py`) measures every speed budget of issue 15, rewrites "
         "`benchmarks/results.md` and this block, and exits non-zero while any budget is missed "
         "(a missed budget shows as ❌). The latest full run:")


def write_results_block(text: str, document: Path = CONTRIBUTING) -> None:
    """Replace what lies between the BENCHMARKS markers of CONTRIBUTING.md with ``text``."""
    s = document.read_text(encoding="utf-8")
    begin, end = s.index(BLOCK[0]) + len(BLOCK[0]), s.index(BLOCK[1])
    document.write_text(s[:begin] + "\n" + INTRO + "\n\n" + text.strip() + "\n" + s[end:], encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-install-size", action="store_true", help="skip the fresh-venv install (1-2 min)")
    parser.add_argument("--skip-browser", action="store_true", help="skip the browser latencies (several min)")
    parser.add_argument("--skip-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument("--skip-site", action="store_true", help="skip the static site (builds it afresh: minutes)")
    parser.add_argument("--skip-tests", action="store_true",
                        help="skip timing make test-fast and make test (the whole suite: many minutes)")
    parser.add_argument("--explorers", nargs="*", default=(), help="only these explorers (class names)")
    parser.add_argument("--repeats", type=int, default=controls_latency.REPEATS,
                        help="fresh processes per explorer for first visits")
    parser.add_argument("--notebooks", nargs="*", default=(), help="only notebooks starting with these")
    parser.add_argument("--browser", default="", metavar="K", help="only the browser tests pytest -k selects")
    parser.add_argument("--browser-json", type=Path,
                        help="summarise this browser latency file instead of running the browser tests")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"where to write the table ({RESULTS.name})")
    args = parser.parse_args(argv)

    summary = common.machine_summary()  # before the load we add
    frontend: list[dict] = []  # the explorer front end's records (issue 39), for its own wide table
    steps = [("every control of every explorer", lambda: controls_latency.run(args.explorers, args.repeats)),
             ("sample_dot_products overhead", sampling_overhead.run)]
    if not args.skip_notebooks:
        steps.append(("notebook execution vs kernel start", lambda: notebook_time.run(args.notebooks)))
    if not args.skip_browser or args.browser_json:
        steps.append(("slider updates in the browser", lambda: browser_latency.run(args.browser_json, args.browser)))
    if not args.skip_install_size:
        steps.append(("fresh install size", install_size.run))
    if not args.skip_site:
        steps.append(("the static site", site_budgets.run))
    if not args.skip_browser:  # issue 39: one front end; the floor above (browser_latency) beside it
        frontend_json = Path(tempfile.gettempdir()) / "sdpa-explorer-frontend.json"
        modes = [m for m in explorer_frontend.MODES if m != "site" or not args.skip_site]

        def frontend_step() -> list:
            frontend.extend(explorer_frontend.run(list(args.explorers), modes, frontend_json))
            return explorer_frontend.rows(frontend)

        steps.append(("the explorers' front end (the floor, prefetched, first visits, Voila, 100 ms proxy, site)",
                      frontend_step))
        steps.append(("kernel CPU of each explorer's prefetch grid",
                      lambda: prefetch_cpu.rows(prefetch_cpu.run(list(args.explorers)))))
    if not args.skip_tests:
        steps.append(("the edit-test loop and the whole suite", suite_times.run))

    rows, skipped = [], [name for flag, name in ((args.skip_browser and not args.browser_json, "browser"),
                                                 (args.skip_notebooks, "notebooks"),
                                                 (args.skip_install_size, "install size"),
                                                 (args.skip_site, "static site"),
                                                 (args.skip_tests, "test suites")) if flag]
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
        "Kernel: each control of each explorer is stepped through its values (the others at their "
        "defaults), timing the whole move (callback, redraw, PNG); *first visits* in fresh processes "
        f"({args.repeats} per explorer, pooled), *revisits* the same steps again. Build: the constructor "
        "call in a fresh process. Notebooks: executed in a fresh kernel ÷ a kernel that imports the "
        "stack. Browser: from the `keydown` event to the new image decoded in the page; the main "
        "slider moves 4 steps one way (first visits) and 4 back. Reproduce with `make bench`.",
        "",
    ] + ([
        "### The explorers' front end, per explorer, beside the floor (issue 39)",
        "",
        explorer_frontend.markdown(frontend),
        "",
        "Prefetched: after the whole grid is in the browser; first visit: prefetch off, the 4 forward "
        "presses each ask the kernel; the floor: a slider swapping two precomputed PNGs (every move a "
        "kernel round trip, no computation), measured at the start and at the end of the same run. A first "
        "visit's split, measured in the page: the kernel's own drawing time (sent with the frame) and the "
        "rest (key → request, the round trip less the drawing, decode and paint); medians of each part.",
        "",
    ] if frontend else []))
    print(text)
    args.output.write_text(text, encoding="utf-8")
    subset = args.explorers or args.notebooks or args.browser or args.browser_json or skipped
    if not subset and args.output == RESULTS:
        write_results_block(text)
    return 0 if all(r.ok is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
