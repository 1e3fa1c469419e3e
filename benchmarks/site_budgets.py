"""The static site's budgets (issue 22 §3): build time, sizes, and the explorers in a throttled browser.

- ``make site`` time: the site built afresh into a scratch folder (≤ 10 min on 2 cores);
- the whole site ≤ 50 MB; per page, its HTML, figures, frames and explorer scripts (reported);
- each page with explorers, in headless Chromium over an emulated 10 Mbit/s link with 40 ms
  latency (DevTools ``Network.emulateNetworkConditions``), cold cache (a fresh context per
  page), from a local static server: the bytes fetched until its explorers are usable
  (``<html data-explorers-ready>``: every explorer's starting frame and its neighbours one step
  away decoded) ≤ 5 MB, and that time ≤ 3 s;
- key press → new frame visible: every control of every explorer stepped through all its
  values and back by keyboard (first visits included), one press every ~150 ms (a learner
  pressing an arrow key; the page then prefetches the next neighbours); from the ``keydown``
  event to the new frame in the DOM, decoded, at the next animation frame: median ≤ 50 ms,
  p95 ≤ 100 ms.

    python benchmarks/site_budgets.py [--site build/site] [--no-build] [--pages 05 07]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

sys.path.insert(0, str(common.ROOT / "authoring" / "site"))
sys.path.insert(0, str(common.ROOT / "tests"))

BUILD_S = 600.0
SITE_MB = 50.0
PAGE_MB, USABLE_S = 5.0, 3.0
MEDIAN_MS, P95_MS = 50.0, 100.0
THROTTLE = {"offline": False, "latency": 40, "downloadThroughput": 10e6 / 8, "uploadThroughput": 10e6 / 8}
PAUSE_S = 0.15

_BYTES_AT_READY = """() => {
  const ready = window.SDPA_READY_AT;
  const nav = performance.getEntriesByType('navigation')[0];
  let bytes = nav ? nav.transferSize : 0;
  for (const e of performance.getEntriesByType('resource')) if (e.responseEnd <= ready) bytes += e.transferSize;
  return {ready: ready, bytes: bytes};
}"""

_WATCH_READY = """() => new Promise((resolve) => {
  if (window.SDPA_READY_AT !== undefined) return resolve();
  new MutationObserver((_, obs) => {
    if (window.SDPA_READY_AT !== undefined) { obs.disconnect(); resolve(); }
  }).observe(document.documentElement, {attributes: true});
})"""


def build(out: Path) -> float:
    python = common.ROOT / ".venv-site" / "bin" / "python"
    start = time.perf_counter()
    subprocess.run([str(python if python.exists() else common.PYTHON), "authoring/site/build.py", "--out", str(out)],
                   cwd=common.ROOT, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def sizes(site: Path) -> tuple[float, dict]:
    total = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    per_page = {}
    for stem, p in manifest["pages"].items():
        own = (site / f"{stem}.html").stat().st_size
        own += sum(f.stat().st_size for f in (site / "img").glob(f"{stem[:2]}-*"))
        own += sum(e["bytes"] for e in p["explorers"])
        per_page[stem] = {"bytes": own, "frames": sum(e["frames"] for e in p["explorers"]),
                          "explorers": len(p["explorers"])}
    return total, per_page


def measure_page(browser, url: str) -> dict:
    """Open one page cold over the throttled link; then step every control of every explorer."""
    import probe

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})
    cdp.send("Network.emulateNetworkConditions", THROTTLE)
    try:
        page.goto(url, wait_until="commit")
        page.evaluate(_WATCH_READY)
        at_ready = page.evaluate(_BYTES_AT_READY)
        latencies = []
        for ex in probe.explorers(page):
            # an explorer inside a folded deep dive: the learner opens the deep dive first
            page.evaluate("""(id) => { let d = document.querySelector(`#explorer-${id}`).closest('details');
              while (d) { d.open = true; d = d.parentElement ? d.parentElement.closest('details') : null; } }""",
                          ex["id"])
            state = probe.shown(page, ex["id"])["state"]
            for k, c in enumerate(ex["controls"]):
                n = len(c["labels"])
                moves = [True] * (n - 1 - state[k]) + [False] * (n - 1) if c["kind"] != "checkbox" else [True, True]
                for forward in moves:
                    state[k] = (1 - state[k]) if c["kind"] == "checkbox" else state[k] + (1 if forward else -1)
                    r = probe.press(page, ex["id"], k, c["kind"], forward, probe.expected_frame(state, ex["ext"]))
                    latencies.append(r["painted"])
                    time.sleep(PAUSE_S)
        return {"ready_s": at_ready["ready"] / 1e3, "bytes": at_ready["bytes"], "latencies": latencies}
    finally:
        context.close()


def run(site: Path | None = None, fresh_build: bool = True, pages=()) -> list[common.Row]:
    import browser_support as bs
    from serve import SiteServer

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if fresh_build:
            site = Path(tmp) / "site"
            seconds = build(site)
            rows.append(common.Row("`make site` (frames rendered afresh, 2 processes)", f"{seconds / 60:.1f} min",
                                   "≤ 10 min on 2 cores", seconds <= BUILD_S))
        site = site or common.ROOT / "build" / "site"
        total, per_page = sizes(site)
        frames = sum(p["frames"] for p in per_page.values())
        rows.append(common.Row("static site: whole folder", f"{total / 1e6:.1f} MB ({frames} frames)",
                               f"≤ {SITE_MB:.0f} MB", total / 1e6 <= SITE_MB))
        for stem, p in per_page.items():
            if p["explorers"]:
                rows.append(common.Row(f"static site {stem[:2]}: page, figures, frames", f"{p['bytes'] / 1e6:.1f} MB "
                                       f"({p['frames']} frames, {p['explorers']} explorer{'s' * (p['explorers'] > 1)})",
                                       "(reported)", None))
        reason = bs.chromium_skip_reason()
        if reason:
            rows.append(common.Row("static site in the browser", f"not measured: {reason}", "", None))
            return rows
        from playwright.sync_api import sync_playwright

        all_latencies = []
        with SiteServer(site) as server, sync_playwright() as p:
            browser = bs.launch_chromium(p)
            try:
                for stem, info in per_page.items():
                    if not info["explorers"] or (pages and not stem.startswith(tuple(pages))):
                        continue
                    m = measure_page(browser, server.url + f"{stem}.html")
                    lat = m["latencies"]
                    all_latencies += lat
                    rows.append(common.Row(f"static site {stem[:2]}: fetched before explorers usable, time",
                                           f"{m['bytes'] / 1e6:.2f} MB in {m['ready_s']:.2f} s",
                                           f"≤ {PAGE_MB:.0f} MB, ≤ {USABLE_S:.0f} s (10 Mbit/s, 40 ms)",
                                           m["bytes"] / 1e6 <= PAGE_MB and m["ready_s"] <= USABLE_S))
                    rows.append(common.Row(f"static site {stem[:2]}: key press → new frame visible",
                                           f"median {common.median(lat):.0f} ms, p95 {common.p95(lat):.0f} ms, "
                                           f"max {max(lat):.0f} ms ({len(lat)} presses)",
                                           f"median ≤ {MEDIAN_MS:.0f} ms, p95 ≤ {P95_MS:.0f} ms",
                                           common.median(lat) <= MEDIAN_MS and common.p95(lat) <= P95_MS))
            finally:
                browser.close()
        if all_latencies:
            rows.append(common.Row("static site, every explorer: key press → new frame visible",
                                   f"median {common.median(all_latencies):.0f} ms, p95 "
                                   f"{common.p95(all_latencies):.0f} ms ({len(all_latencies)} presses)",
                                   f"median ≤ {MEDIAN_MS:.0f} ms, p95 ≤ {P95_MS:.0f} ms",
                                   common.median(all_latencies) <= MEDIAN_MS and common.p95(all_latencies) <= P95_MS))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=None, help="measure this built site (default: build afresh)")
    parser.add_argument("--pages", nargs="*", default=(), help="only pages starting with these")
    args = parser.parse_args(argv)
    rows = run(args.site, fresh_build=args.site is None, pages=args.pages)
    print(common.table(rows))
    return 0 if all(r.ok is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
