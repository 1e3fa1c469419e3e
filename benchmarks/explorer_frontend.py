"""The explorers' front end (issue 39): key press → painted frame, per explorer, in JupyterLab, Voila,
JupyterLab through a link with 100 ms of round-trip time, and the static site — one run.

For each of the 11 explorers (``widgets.all_explorers()``) a one-cell notebook showing it is opened
(a fresh page and kernel each) and its main control is pressed 4 steps one way and 4 back with the
keyboard, the time measured in the page from ``keydown`` to the next animation frame after the new
frame is in the DOM (``authoring/site/probe.py``, the site's own measurement):

- **prefetched** (``lab``, ``voila``, ``proxy``): after every frame of the prefetch grid is in the
  browser (``data-grid-complete``; that time after display is reported as ``grid``);
- **first visit** (``lab-first``): prefetch switched off (``window.SDPA_PREFETCH = false``), so each
  forward press asks the kernel for a frame it has not drawn (the 4 presses back are hits: not counted);
- **proxy**: the browser talks to JupyterLab through an asyncio TCP proxy on 127.0.0.1 that delays
  every chunk by 50 ms each way (100 ms round trip, a Binder-like link), websockets included;
- **site**: the built site (``build/site``, ``make site``), each explorer's page, the same presses.

Budgets (issue 39): prefetched median ≤ 30 ms, p95 ≤ 60 ms in JupyterLab, Voila and through the proxy;
first visit median ≤ 100 ms in JupyterLab; the whole grid in the browser within 10 s of display.

    python benchmarks/explorer_frontend.py [--only VarianceExplorer,...] [--modes lab,voila,proxy,lab-first,site]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests"), str(ROOT / "authoring" / "site")]
import common  # noqa: E402

PREFETCHED_MEDIAN, PREFETCHED_P95, FIRST_MEDIAN, GRID_S = 30.0, 60.0, 100.0, 10.0
DELAY_S = 0.050  # each way
MODES = ("lab", "lab-first", "voila", "proxy", "site")


def notebook(root: Path, cls) -> str:
    import nbformat

    name = f"bench_{cls.__name__}.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"from {cls.__module__} import {cls.__name__}\n"
                                                                    f"{cls.__name__}()")])
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(nb, root / name)
    return name


def measure_page(bs, page, box, main: int, wait_grid: bool) -> dict:
    ident = bs.wait_for_explorer(page, box, 120)
    grid = bs.wait_for_grid(page, ident, 120) if wait_grid else None
    steps = bs.sweep_main_control(page, box, main, steps=4, timeout=60)
    return {"grid": grid, "steps": steps}


def run(only: list[str], modes: list[str], out_json: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    import browser_support as bs
    from sdpa_helpers.widgets import all_explorers

    explorers = [c for c in all_explorers() if not only or c.__name__ in only]
    home = Path(tempfile.mkdtemp(prefix="sdpa-frontend-"))
    root = home / "nb"
    root.mkdir()
    names = {c: notebook(root, c) for c in explorers}
    records: list[dict] = []
    servers = {}
    try:
        if {"lab", "lab-first", "proxy"} & set(modes):
            servers["lab"] = bs.Server("lab", root, home / "lab")
            servers["lab"].home.mkdir()
            servers["lab"].start()
        if "voila" in modes:
            servers["voila"] = bs.Server("voila", root, home / "voila")
            servers["voila"].home.mkdir()
            servers["voila"].start()
        proxy = bs.DelayProxy(servers["lab"].port, DELAY_S) if "proxy" in modes else None
        with sync_playwright() as p:
            browser = bs.launch_chromium(p)
            for cls in explorers:
                main = list(cls().controls).index(cls.main)
                for mode in modes:
                    if mode == "site":
                        continue
                    blocked: list = []
                    page = bs.new_page(browser, blocked)
                    if mode == "lab-first":
                        page.add_init_script("window.SDPA_PREFETCH = false;")
                    try:
                        if mode == "voila":
                            page.goto(f"{servers['voila'].base}/voila/render/{names[cls]}", wait_until="load",
                                      timeout=300_000)
                            box = page.locator(bs.EXPLORER_BOX)
                        else:
                            server = servers["lab"]
                            if mode == "proxy":
                                page.goto(f"http://127.0.0.1:{proxy.port}/lab/tree/{names[cls]}?token={server.token}"
                                          "&reset")
                                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=300_000)
                                page.wait_for_function(bs._KERNEL_IDLE, timeout=300_000, polling=100)
                                bs.wait_for_kernels_idle(server, 300)
                            else:
                                bs.open_in_lab(page, server, names[cls], 300)
                            bs.run_all_in_lab(page, 300)
                            box = bs.lab_cell_output(page, 0).locator(bs.EXPLORER_BOX)
                        got = measure_page(bs, page, box, main, wait_grid=mode != "lab-first")
                        records.append({"explorer": cls.__name__, "mode": mode, **got, "blocked": blocked})
                        print(f"{cls.__name__} {mode}: grid {got['grid']}, painted ms "
                              f"{[round(s['image_ms'], 1) for s in got['steps']]}", flush=True)
                    except Exception as exc:  # one explorer's failure is reported, the others measured
                        records.append({"explorer": cls.__name__, "mode": mode, "error": str(exc)[:500]})
                        print(f"{cls.__name__} {mode}: FAILED {str(exc)[:300]}", flush=True)
                    finally:
                        bs.close_page(page)
                        if mode != "voila" and "lab" in servers:
                            servers["lab"].shutdown_sessions()
            if "site" in modes:
                records += site_records(browser, explorers)
            browser.close()
        if proxy:
            proxy.close()
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(home, ignore_errors=True)
    out_json.write_text(json.dumps({"load": os.getloadavg(), "records": records}, indent=1))
    return records


def site_records(browser, explorers) -> list[dict]:
    import probe

    site = ROOT / "build" / "site"
    if not (site / "manifest.json").is_file():
        return [{"explorer": c.__name__, "mode": "site", "error": "no built site (make site)"} for c in explorers]
    import browser_support as bs
    from serve import SiteServer  # authoring/site/serve.py: serves build/site on 127.0.0.1

    manifest = json.loads((site / "manifest.json").read_text())
    wanted = {c.__name__ for c in explorers}
    out = []
    with SiteServer(site) as server:
        for stem, p in manifest["pages"].items():
            for e in p["explorers"]:
                if e["cls"] not in wanted:
                    continue
                page = bs.new_page(browser, [])
                try:
                    probe.open_page(page, f"{server.url.rstrip('/')}/{stem}.html")
                    ex = next(x for x in probe.explorers(page) if x["id"] == e["id"])
                    cls = next(c for c in explorers if c.__name__ == e["cls"])
                    k = list(ex["controls"][i]["name"] for i in range(len(ex["controls"]))).index(cls.main)
                    state = probe.shown(page, e["id"])["state"]
                    n = len(ex["controls"][k]["labels"])
                    forward = n - 1 - state[k] >= 4 or n - 1 - state[k] >= state[k]
                    m = min(4, n - 1 - state[k] if forward else state[k])
                    steps = []
                    for i, fwd in enumerate([forward] * m + [not forward] * m):
                        state[k] += 1 if fwd else -1
                        t = probe.press(page, e["id"], k, ex["controls"][k]["kind"], fwd,
                                        probe.expected_frame(state, ex["ext"]))
                        steps.append({"image_ms": t["painted"], "first_visit": i < m, "prefetched": True})
                    out.append({"explorer": e["cls"], "mode": "site", "grid": None, "steps": steps})
                except Exception as exc:
                    out.append({"explorer": e["cls"], "mode": "site", "error": str(exc)[:500]})
                finally:
                    bs.close_page(page)
    return out


def rows(records: list[dict]) -> list[common.Row]:
    out = []
    for r in records:
        label = f"explorer front end, {r['mode']}: {r['explorer']}"
        if "error" in r:
            out.append(common.Row(label, f"not measured: {r['error'][:120]}", "", False))
            continue
        if r["mode"] == "lab-first":
            ms = [s["image_ms"] for s in r["steps"] if s["first_visit"]]
            misses = sum(not s["prefetched"] for s in r["steps"] if s["first_visit"])
            med = common.median(ms)
            out.append(common.Row(label, f"first visits {med:.0f} ms median ({misses}/{len(ms)} asked of the kernel)",
                                  f"median ≤ {FIRST_MEDIAN:.0f} ms", med <= FIRST_MEDIAN))
            continue
        ms = [s["image_ms"] for s in r["steps"]]
        med, p95 = common.median(ms), common.p95(ms)
        grid = r.get("grid")
        text = f"{med:.0f} ms median, p95 {p95:.0f} ms"
        ok = med <= PREFETCHED_MEDIAN and p95 <= PREFETCHED_P95
        if grid:
            text += f"; grid of {grid['frames']} frames in the browser {grid['ms'] / 1000:.1f} s after display"
            ok = ok and grid["ms"] <= GRID_S * 1000
        budget = "reference" if r["mode"] == "site" else (
            f"median ≤ {PREFETCHED_MEDIAN:.0f} ms, p95 ≤ {PREFETCHED_P95:.0f}, grid ≤ {GRID_S:.0f} s")
        out.append(common.Row(label, text, budget, None if r["mode"] == "site" else ok))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated explorer class names")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", type=Path, default=Path(tempfile.gettempdir()) / "sdpa-explorer-frontend.json")
    parser.add_argument("--from-json", type=Path)
    args = parser.parse_args(argv)
    if args.from_json:
        records = json.loads(args.from_json.read_text())["records"]
    else:
        before = os.getloadavg()
        records = run([n for n in args.only.split(",") if n], args.modes.split(","), args.json)
        print(f"load average before {before[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    result = rows(records)
    print(common.table(result))
    return 0 if all(r.ok is not False for r in result) else 1


if __name__ == "__main__":
    sys.exit(main())
