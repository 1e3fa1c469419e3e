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
- **site**: the built site (``build/site``, ``make site``), each explorer's page, the same presses;
- **floor**: in JupyterLab and in Voila, at the start and at the end of the run, a one-cell notebook
  whose slider only swaps two precomputed ~100 KB PNGs on an ``ipywidgets.Image``
  (``browser_support.write_floor_notebook``, the browser tests' floor): every move is a kernel round
  trip with no computation. A first visit is reported beside it, as a ratio, and split (in the page)
  into the kernel's own drawing time (the ``ms`` each frame carries) and the rest (request, link,
  decode, paint; ``browser_support.split``).

Budgets (issue 39): prefetched median ≤ 30 ms, p95 ≤ 60 ms in JupyterLab, Voila and through the proxy;
first visit median ≤ 100 ms in JupyterLab; the whole grid in the browser within 10 s of display.
:func:`rows` gives one row per explorer for ``run_all.py``'s table (the floor's row first) and
:func:`markdown` the same as one wide table, both from :func:`summary`.

    python benchmarks/explorer_frontend.py [--only VarianceExplorer,...] [--modes floor,lab,lab-first,voila,proxy,site]
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
MODES = ("floor", "lab", "lab-first", "voila", "proxy", "site")
FLOOR = "floor"


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
    page.evaluate(bs._TRACE_SOURCE, ident)  # from display on: the kernel's answers, failures included
    try:
        grid = bs.wait_for_grid(page, ident, 120) if wait_grid else None
    except Exception as exc:  # say where the prefetch stood: frames cached, requests on their way, paused
        where = page.evaluate("""id => { const e = window.SDPA_LIVE[id], s = e.source;
          return {cached: e.cache.size, inflight: s.inflight, pending: s.pending.size, paused: s.paused,
                  window: s.window || null, order: e.prefetchOrder().length, failed: s.__sdpaFailed || null}; }""",
                              ident)
        raise RuntimeError(f"grid not complete within 120 s: {json.dumps(where)}") from exc
    steps = bs.sweep_main_control(page, box, main, steps=4, timeout=60)
    return {"grid": grid, "steps": steps}


def run(only: list[str], modes: list[str], out_json: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    import browser_support as bs
    from sdpa_helpers.widgets import all_explorers

    load_before = os.getloadavg()
    explorers = [c for c in all_explorers() if not only or c.__name__ in only]
    home = Path(tempfile.mkdtemp(prefix="sdpa-frontend-"))
    root = home / "nb"
    root.mkdir()
    names = {c: notebook(root, c) for c in explorers}
    records: list[dict] = []
    servers = {}
    try:
        bs.write_floor_notebook(root)
        if {"lab", "lab-first", "proxy", FLOOR} & set(modes):
            servers["lab"] = bs.Server("lab", root, home / "lab")
            servers["lab"].home.mkdir()
            servers["lab"].start()
        if {"voila", FLOOR} & set(modes):
            servers["voila"] = bs.Server("voila", root, home / "voila")
            servers["voila"].home.mkdir()
            servers["voila"].start()
        proxy = bs.DelayProxy(servers["lab"].port, DELAY_S) if "proxy" in modes else None
        with sync_playwright() as p:
            browser = bs.launch_chromium(p)
            if FLOOR in modes:
                records += floor_records(browser, servers, "start")
            for cls in explorers:
                main = list(cls().controls).index(cls.main)
                for mode in modes:
                    if mode in ("site", FLOOR):
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
            if FLOOR in modes:
                records += floor_records(browser, servers, "end")
            browser.close()
        if proxy:
            proxy.close()
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(home, ignore_errors=True)
    out_json.write_text(json.dumps({"load_before": load_before, "load": os.getloadavg(), "records": records},
                                   indent=1))
    return records


def floor_records(browser, servers: dict, when: str) -> list[dict]:
    """The floor in JupyterLab and in Voila (whichever servers run): a fresh page and kernel each."""
    import browser_support as bs

    out = []
    for mode in ("lab", "voila"):
        if mode not in servers:
            continue
        page = bs.new_page(browser, [])
        try:
            steps = bs.floor_steps(page, servers[mode], bs.FLOOR_NAME, steps=4)
            out.append({"explorer": FLOOR, "mode": mode, "when": when, "grid": None, "steps": steps})
            print(f"floor {mode} ({when}): painted ms {[round(x['image_ms'], 1) for x in steps]}", flush=True)
        except Exception as exc:
            out.append({"explorer": FLOOR, "mode": mode, "when": when, "error": str(exc)[:500]})
            print(f"floor {mode} ({when}): FAILED {str(exc)[:300]}", flush=True)
        finally:
            bs.close_page(page)
            if mode == "lab":
                servers["lab"].shutdown_sessions()
    return out


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


PREFETCHED_MODES = ("lab", "voila", "proxy", "site")
SPLIT_PARTS = ("kernel_draw", "rest", "to_request", "link", "decode_paint")


def _stats(values: list[float]) -> dict | None:
    return {"median": common.median(values), "p95": common.p95(values), "n": len(values)} if values else None


def summary(records: list[dict]) -> dict:
    """The run, summarised: ``floor`` per mode (all its moves, start and end of the run pooled, and each
    pass's median) and, per explorer in the order measured, per mode: prefetched median / p95 / n,
    the first visits (asked of the kernel) with the median of each part of their split
    (``kernel_draw``: the kernel's drawing; ``rest``: key → painted less that, made of ``to_request``,
    ``link`` and ``decode_paint``: ``browser_support.split``; medians of each part, so they need not add up)
    and their ratio to the floor in JupyterLab, the grid (frames, seconds after display) and errors."""
    floor: dict = {}
    explorers: dict = {}
    for r in records:
        if r["explorer"] == FLOOR:
            f = floor.setdefault(r["mode"], {"steps": [], "passes": {}, "errors": []})
            if "error" in r:
                f["errors"].append(r["error"])
                continue
            ms = [x["image_ms"] for x in r["steps"]]
            f["steps"] += ms
            f["passes"][r.get("when", "")] = common.median(ms)
            continue
        e = explorers.setdefault(r["explorer"], {"errors": {}, "grid": {}})
        if "error" in r:
            e["errors"][r["mode"]] = r["error"]
            continue
        if r["mode"] == "lab-first":
            asked = [x for x in r["steps"] if x["first_visit"] and not x["prefetched"]]
            ms = [x["image_ms"] for x in asked]
            first = {"n": len(ms), "of": sum(x["first_visit"] for x in r["steps"])}
            if ms:
                first["median"] = common.median(ms)
                first["p95"] = common.p95(ms)
                for part in SPLIT_PARTS:
                    vals = [x["split"][part] if part != "rest" else x["image_ms"] - x["split"]["kernel_draw"]
                            for x in asked if x.get("split")]
                    if vals:
                        first[part] = common.median(vals)
            e["first"] = first
            continue
        e[r["mode"]] = _stats([x["image_ms"] for x in r["steps"]])
        if r.get("grid"):
            e["grid"][r["mode"]] = r["grid"]["ms"] / 1000
            e["frames"] = r["grid"]["frames"]
    out_floor = {mode: {**_stats(f["steps"]), "passes": f["passes"]} if f["steps"] else {"errors": f["errors"]}
                 for mode, f in floor.items()}
    lab_floor = out_floor.get("lab", {}).get("median")
    for e in explorers.values():
        first = e.get("first")
        if first and "median" in first and lab_floor:
            first["ratio"] = first["median"] / lab_floor
            if "rest" in first:
                first["rest_ratio"] = first["rest"] / lab_floor
    return {"floor": out_floor, "explorers": explorers}


def judge(e: dict) -> tuple[bool | None, list[str]]:
    """(every measured budget holds, None when nothing was measured; the budgets missed, named)."""
    misses, measured = [], False
    for mode in ("lab", "voila", "proxy"):
        m = e.get(mode)
        if m:
            measured = True
            if m["median"] > PREFETCHED_MEDIAN or m["p95"] > PREFETCHED_P95:
                misses.append(f"prefetched {mode}")
    first = e.get("first")
    if first and "median" in first:
        measured = True
        if first["median"] > FIRST_MEDIAN:
            misses.append("first visit")
    for mode, seconds in e.get("grid", {}).items():
        measured = True
        if seconds > GRID_S:
            misses.append(f"grid {mode}")
    for mode in e.get("errors", {}):
        misses.append(f"{mode} not measured")
    if not measured and not misses:
        return None, []
    return not misses, misses


def _pair(m: dict | None) -> str:
    return f"{m['median']:.0f}/{m['p95']:.0f}" if m else "–"


def _first_text(first: dict | None, with_ratio: bool = True) -> str:
    if not first or "median" not in first:
        return "–"
    text = f"{first['median']:.0f} ms"
    if with_ratio and "ratio" in first:
        text += f" = {first['ratio']:.2f}× floor"
    if "kernel_draw" in first:
        link = (f": request {first['to_request']:.0f}, link {first['link']:.0f}, decode/paint "
                f"{first['decode_paint']:.0f}" if "link" in first else "")
        text += f" (medians: kernel draw {first['kernel_draw']:.0f}, rest {first['rest']:.0f}{link})"
    return text


BUDGET = (f"prefetched median ≤ {PREFETCHED_MEDIAN:.0f} ms, p95 ≤ {PREFETCHED_P95:.0f} (Lab, Voila, proxy); "
          f"first visit median ≤ {FIRST_MEDIAN:.0f} ms (Lab); grid ≤ {GRID_S:.0f} s")


def rows(records: list[dict]) -> list[common.Row]:
    """One row for the floor, then one per explorer (every mode measured of it in one line)."""
    s = summary(records)
    out = []
    if s["floor"]:
        parts = []
        for mode, name in (("lab", "JupyterLab"), ("voila", "Voila")):
            f = s["floor"].get(mode)
            if not f:
                continue
            if "median" not in f:
                parts.append(f"{name} not measured: {f['errors'][0][:120]}")
                continue
            passes = ", ".join(f"{k} {v:.0f}" for k, v in f["passes"].items())
            parts.append(f"{name} {f['median']:.0f} ms median, p95 {f['p95']:.0f} ({f['n']} moves; "
                         f"per pass: {passes})")
        out.append(common.Row("explorer front end, floor: a slider swapping two precomputed PNGs "
                              "(every move a kernel round trip, no computation)", "; ".join(parts), "reference", None))
    for name, e in s["explorers"].items():
        parts = []
        prefetched = [f"{label} {_pair(e.get(mode))}" for mode, label in
                      (("lab", "Lab"), ("voila", "Voila"), ("proxy", "proxy"), ("site", "site")) if mode in e]
        if prefetched:
            parts.append("prefetched median/p95 ms: " + ", ".join(prefetched))
        if "first" in e:
            parts.append(f"first visit in Lab {_first_text(e['first'])}")
        if e.get("grid"):
            parts.append(f"grid of {e.get('frames')} frames: " + ", ".join(
                f"{mode} {sec:.1f} s" for mode, sec in e["grid"].items()))
        for mode, err in e["errors"].items():
            parts.append(f"{mode} not measured: {err[:120]}")
        ok, misses = judge(e)
        text = "; ".join(parts) + (f" — missed: {', '.join(misses)}" if misses else "")
        out.append(common.Row(f"explorer front end: {name}", text, BUDGET, ok))
    return out


def markdown(records: list[dict]) -> str:
    """The run as one wide table: per explorer every mode, the floor's row first."""
    s = summary(records)
    head = ["explorer", "Lab prefetched median/p95 (ms)", "Voila prefetched", "proxy prefetched", "site",
            "Lab first visit median (ms)", "÷ floor", "first visit: kernel draw / rest (ms, medians)",
            "rest: request / link / decode+paint (ms, medians)", "grid frames",
            "grid in browser: Lab / Voila / proxy (s)", "budgets"]
    table = [head]

    def num(d: dict, key: str, fmt: str = "{:.0f}") -> str:
        return fmt.format(d[key]) if key in d else "–"

    if s["floor"]:
        lab = s["floor"].get("lab", {})
        voila = s["floor"].get("voila", {})
        table.append(["**floor** (a swap of two ready PNGs: the kernel round trip)",
                      _pair(lab if "median" in lab else None), _pair(voila if "median" in voila else None),
                      "–", "–", num(lab, "median"), "1.00" if "median" in lab else "–",
                      f"0 / {lab['median']:.0f}" if "median" in lab else "–", "–", "–", "–", "reference"])
    for name, e in s["explorers"].items():
        first = e.get("first") or {}
        ok, misses = judge(e)
        grid = e.get("grid", {})
        table.append([
            name, _pair(e.get("lab")), _pair(e.get("voila")), _pair(e.get("proxy")), _pair(e.get("site")),
            num(first, "median"), num(first, "ratio", "{:.2f}"),
            f"{first['kernel_draw']:.0f} / {first['rest']:.0f}" if "kernel_draw" in first else "–",
            (f"{first['to_request']:.0f} / {first['link']:.0f} / {first['decode_paint']:.0f}"
             if "link" in first else "–"),
            str(e.get("frames", "–")),
            " / ".join(f"{grid[m]:.1f}" if m in grid else "–" for m in ("lab", "voila", "proxy")),
            {True: "✅", False: "❌ " + ", ".join(misses), None: "–"}[ok]])
    lines = ["| " + " | ".join(row) + " |" for row in table]
    return "\n".join(lines[:1] + ["|" + "---|" * len(head)] + lines[1:])


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
    print()
    print(markdown(records))
    return 0 if all(r.ok is not False for r in result) else 1


if __name__ == "__main__":
    sys.exit(main())
