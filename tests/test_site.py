"""The static site (issue 22), tested as a learner uses it: every page in headless Chromium.

The site is built by ``make site`` (which reuses a build newer than every input), served from
``build/site`` by a static server on 127.0.0.1 (a free port, its own session, stopped by its
PID; it also exits by itself when this test process dies), and opened in Debian's Chromium
with every request outside 127.0.0.1 aborted:

- every page: no console error, no uncaught error, no MathJax error and no unrendered TeX, no
  request outside the site, every image loaded and with alt text; the run note (Binder and
  ``make lab``) at the top; deep dives and solutions folded, one click opens one deep dive;
- every control of every explorer moved through each of its values by keyboard, and each time
  the shown frame is the one for the controls' values (its file name and data attributes);
- a sample of frames equals the live explorer's render at the same values, within a stated
  tolerance (the frames are 128-colour palette images);
- from ``file://`` (no server), and at a phone-sized viewport (no sideways scrolling).

The Pages workflow is validated offline against GitHub's schema (check-jsonschema's vendored one).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import browser_support as bs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "authoring" / "site"))

import frames  # noqa: E402
import probe  # noqa: E402
from serve import SiteServer  # noqa: E402

SITE = Path(os.environ.get("SDPA_SITE_DIR", ROOT / "build" / "site"))
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
SKIP = bs.chromium_skip_reason()
browser = [pytest.mark.browser, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
PAGES = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: A frame vs the live render: the mean absolute difference per channel (0..255) and the share
#: of pixels off by more than 48 in some channel. A 128-colour palette moves antialiased edges
#: and translucent fills by a few levels; a wrong frame (another d_k, another draw) moves far more.
MEAN_TOLERANCE = 2.0
FAR_SHARE = 0.001
SAMPLES = 2  # frames compared per explorer besides its starting one


# -- building and serving ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site() -> Path:
    if "SDPA_SITE_DIR" not in os.environ and not (ROOT / "node_modules" / ".installed").exists() \
            and shutil.which("npm") is None:
        pytest.skip("npm is missing: the site takes MathJax from npm (apt-get install npm; .ci/run installs it)")
    if "SDPA_SITE_DIR" not in os.environ:
        subprocess.run(["make", "-s", "site"], cwd=ROOT, check=True, timeout=1800)
    assert (SITE / "manifest.json").is_file(), f"no built site at {SITE}"
    return SITE


@pytest.fixture(scope="module")
def manifest(site) -> dict:
    return json.loads((site / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def server(site):
    with SiteServer(site) as s:
        yield s


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = bs.launch_chromium(p)
        yield b
        b.close()


def new_page(chromium, viewport=None, allow_file=False):
    """A page in a fresh context (cold cache); requests off the site are aborted and listed."""
    context = chromium.new_context(viewport=viewport or {"width": 1280, "height": 900})
    blocked: list[str] = []
    local = ("http://127.0.0.1", "data:", "blob:") + (("file://",) if allow_file else ())

    def route(r):
        if r.request.url.startswith(local):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.sdpa_errors = []
    page.sdpa_blocked = blocked
    page.on("pageerror", lambda e: page.sdpa_errors.append(f"uncaught: {e}"))
    page.on("console", lambda m: page.sdpa_errors.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("requestfailed", lambda r: page.sdpa_errors.append(f"request failed: {r.url}")
            if r.url.startswith(local) else None)
    return page


# -- static checks ------------------------------------------------------------------------------

@pytest.mark.browser
def test_every_notebook_has_a_page(site, manifest):
    assert sorted(manifest["pages"]) == PAGES
    for stem in PAGES:
        assert (site / f"{stem}.html").is_file()


@pytest.mark.browser
def test_frame_tables_are_data_beside_the_frames(site, manifest):
    """``frames/<id>.json`` is each explorer's frame table (with the key its frames were drawn for, what they were
    built with and each frame's size and hash); the page
    loads the same table as ``frames/<id>.js``; a later build reads the JSON, never the script."""
    for p in manifest["pages"].values():
        for e in p["explorers"]:
            table = json.loads((site / "frames" / f"{e['id']}.json").read_text(encoding="utf-8"))
            assert table.pop("key").endswith(f"-{e['cls']}-" + json.dumps(e["kwargs"], sort_keys=True))
            assert set(table.pop("built_with")) >= {"numpy", "matplotlib", "sdpa_helpers", "site_repo"}
            assert sorted(table.pop("files")) == sorted(f.name for f in (site / "frames" / e["id"]).iterdir())
            script = (site / "frames" / f"{e['id']}.js").read_text(encoding="utf-8").splitlines()[1]
            assert json.loads(script.split(" = ", 1)[1].rstrip(";")) == table
            assert table["controls"] == e["controls"] and table["cls"] == e["cls"]
            assert len(table["readout_of"]) == e["frames"] == len(list((site / "frames" / e["id"]).iterdir()))


@pytest.mark.git  # skipped, with its reason, in a checkout without git history (issue 27)
def test_the_built_site_is_not_committed():
    ignored = subprocess.run(["git", "check-ignore", "-q", "build/site/index.html"], cwd=ROOT)
    assert ignored.returncode == 0, "build/site must be git-ignored"


@pytest.mark.browser
def test_every_page_loads_only_files_of_the_site(site):
    """Scripts, style sheets, images and MathJax are files in the site folder (links may leave it)."""
    import re

    for page in sorted(site.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        for _attr, target in re.findall(r'<(?:script|img|link|source|iframe)\b[^>]*?\b(src|href)="([^"]+)"', text):
            assert not re.match(r"^[a-z]+:|^//", target), f"{page.name} loads {target}"
            assert (site / target.split("#")[0]).is_file(), f"{page.name}: {target} is missing"
    for css in site.rglob("*.css"):
        for target in re.findall(r"url\(([^)]+)\)", css.read_text(encoding="utf-8")):
            assert not re.match(r"^['\"]?(https?:)?//", target), f"{css.name} loads {target}"


def test_mathjax_is_pinned_with_an_integrity_hash():
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    packages = {k: v for k, v in lock["packages"].items() if k}
    assert "node_modules/mathjax" in packages
    for name, spec in packages.items():
        assert spec.get("integrity", "").startswith("sha512-"), f"{name} has no integrity hash"
    wanted = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    assert all(v[0].isdigit() for v in wanted.values()), f"package.json pins exact versions: {wanted}"


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_pages_workflow_is_valid():
    from test_github_workflow import check_jsonschema

    result = check_jsonschema(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    import yaml

    wf = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    runs = "\n".join(s.get("run", "") for job in wf["jobs"].values() for s in job.get("steps", []))
    uses = [s.get("uses", "") for job in wf["jobs"].values() for s in job.get("steps", [])]
    assert "make site" in runs
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)


# -- every page in the browser ------------------------------------------------------------------

@pytest.mark.parametrize("stem", PAGES)
@pytest.mark.browser
def test_page(stem, server, chromium, manifest):
    if SKIP:
        pytest.skip(SKIP)
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + f"{stem}.html")
        assert probe.problems(page) == []
        note = page.locator(".run-note")
        assert note.count() == 1 and "does not run here" in note.inner_text()
        assert "mybinder.org" in note.inner_html() and "make lab" in note.inner_text()
        folded(page)
        for ex in probe.explorers(page):
            open_around(page, ex["id"])  # an explorer inside a deep dive: the learner opens it first
            move_every_control(page, ex)
        assert page.sdpa_errors == []
        assert page.sdpa_blocked == [], f"requests outside the site: {page.sdpa_blocked}"
        expected = [e["id"] for e in manifest["pages"][stem]["explorers"]]
        assert [e["id"] for e in probe.explorers(page)] == expected
    finally:
        page.context.close()


def folded(page) -> None:
    """Deep dives and solutions start folded; one click on a deep dive's summary opens that one only."""
    dives = page.locator("details.deep-dive")
    states = page.evaluate("() => Array.from(document.querySelectorAll('details')).map(d => d.open)")
    assert not any(states), "a <details> starts open"
    if dives.count():
        dives.first.locator("summary").first.click()
        opened = page.evaluate("() => Array.from(document.querySelectorAll('details.deep-dive')).map(d => d.open)")
        assert opened[0] and sum(opened) == 1
        dives.first.locator("summary").first.click()


def open_around(page, explorer_id: str) -> None:
    """Open every folded ``<details>`` (deep dive) that holds the explorer."""
    page.evaluate("""(id) => {
      let d = document.querySelector(`#explorer-${id}`).closest('details');
      while (d) { d.open = true; d = d.parentElement ? d.parentElement.closest('details') : null; }
    }""", explorer_id)


def move_every_control(page, ex: dict) -> None:
    """Each control of the explorer through all its values (forward, then back one), by keyboard."""
    controls = ex["controls"]
    state = probe.shown(page, ex["id"])["state"]
    check_frame(page, ex, state)
    for k, c in enumerate(controls):
        n = len(c["labels"])
        moves = [True] * (n - 1 - state[k]) + [False] * (n - 1) if c["kind"] != "checkbox" else [True, True]
        for forward in moves:
            if c["kind"] == "checkbox":
                state[k] = 1 - state[k]
            else:
                state[k] += 1 if forward else -1
            frame = probe.expected_frame(state, ex["ext"])
            probe.press(page, ex["id"], k, c["kind"], forward, frame)
            check_frame(page, ex, state)


def check_frame(page, ex: dict, state: list) -> None:
    s = probe.shown(page, ex["id"])
    assert s["frame"] == probe.expected_frame(state, ex["ext"]), (ex["id"], s["frame"], state)
    assert s["loaded"], f"{ex['id']}: frame {s['frame']} not loaded"
    assert probe.values_match(ex["controls"], state, s["values"]), (ex["id"], state, s["values"])
    for c, i in zip(ex["controls"], state):
        assert s["attrs"][c["name"].lower()] == frames.js_str(c["values"][i]), (ex["id"], c["name"], s["attrs"])
    assert s["alt"].strip() and all(c["labels"][i] in s["alt"] for c, i in zip(ex["controls"], state))


# -- frames vs the live explorer ----------------------------------------------------------------

@pytest.mark.browser
def test_frames_equal_the_live_explorer(site, manifest):
    """The starting frame and a few others of every explorer, against the live explorer's render."""
    from PIL import Image

    from sdpa_helpers.widgets import all_explorers

    known = {c.__name__: c for c in all_explorers()}
    rng = random.Random(22)
    report = []
    for p in manifest["pages"].values():
        for e in p["explorers"]:
            explorer = known[e["cls"]](**e["kwargs"])
            try:
                combos = list(itertools.product(*[range(len(c["values"])) for c in e["controls"]]))
                start = tuple(c["initial"] for c in e["controls"])
                for combo in [start] + rng.sample(combos, min(SAMPLES, len(combos))):
                    with explorer.paused():
                        for c, i in zip(e["controls"], combo):
                            explorer.controls[c["name"]].value = _value(explorer.controls[c["name"]], c["values"][i])
                    explorer.update()
                    live = np.asarray(Image.open(io.BytesIO(explorer.image.value)).convert("RGB"), dtype=np.int16)
                    name = "-".join(map(str, combo)) + "." + (site / "frames" / e["id"]).iterdir().__next__().suffix[1:]
                    frame = np.asarray(Image.open(site / "frames" / e["id"] / name).convert("RGB"), dtype=np.int16)
                    assert frame.shape == live.shape, (e["id"], name, frame.shape, live.shape)
                    diff = np.abs(frame - live)
                    mean, far = float(diff.mean()), float((diff.max(axis=2) > 48).mean())
                    report.append((e["id"], name, round(mean, 3), round(far, 5)))
                    assert mean <= MEAN_TOLERANCE and far <= FAR_SHARE, report[-1]
            finally:
                explorer.close()
    print(report)


def _value(control, value):
    """The control's own value equal to ``value`` (the manifest stores JSON: tuples become lists)."""
    options = getattr(control, "options", None)
    if options:
        for o in options:
            v = o[1] if isinstance(o, tuple) else o
            if v == value:
                return v
    return value


@pytest.mark.browser
def test_a_wrong_frame_is_caught_by_the_tolerance(site, manifest):
    """The tolerance has teeth: two neighbouring frames of one explorer differ by more than it allows."""
    from PIL import Image

    e = next(e for p in manifest["pages"].values() for e in p["explorers"] if e["frames"] > 1)
    files = sorted((site / "frames" / e["id"]).iterdir())[:2]
    a, b = (np.asarray(Image.open(f).convert("RGB"), dtype=np.int16) for f in files)
    diff = np.abs(a - b)
    assert diff.mean() > MEAN_TOLERANCE or (diff.max(axis=2) > 48).mean() > FAR_SHARE


# -- file:// and a phone -------------------------------------------------------------------------

@pytest.mark.browser
def test_works_from_file_url(site, chromium, manifest, tmp_path):
    """Opened from the folder (no server): pages, math and explorers work, and nothing leaves it."""
    if SKIP:
        pytest.skip(SKIP)
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    stem = next(s for s in PAGES if len(manifest["pages"][s]["explorers"]) > 1) if any(
        len(manifest["pages"][s]["explorers"]) > 1 for s in PAGES) else PAGES[-1]
    for name in ("index", stem):
        page = new_page(chromium, allow_file=True)
        try:
            probe.open_page(page, (copy / f"{name}.html").as_uri())
            assert probe.problems(page) == []
            for ex in probe.explorers(page):
                state = probe.shown(page, ex["id"])["state"]
                k = next(i for i, c in enumerate(ex["controls"]) if len(c["labels"]) > 1)
                c = ex["controls"][k]
                forward = state[k] + 1 < len(c["labels"]) or c["kind"] == "checkbox"
                state[k] = (1 - state[k]) if c["kind"] == "checkbox" else state[k] + (1 if forward else -1)
                probe.press(page, ex["id"], k, c["kind"], forward, probe.expected_frame(state, ex["ext"]))
                check_frame(page, ex, state)
            assert page.sdpa_errors == [] and page.sdpa_blocked == []
        finally:
            page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("stem", [s for s in PAGES if s[:2] in ("00", "07", "09")])
def test_reads_on_a_phone(stem, server, chromium):
    """At 390 x 844 CSS px: no sideways scrolling of the page; the explorer fits and works by touch-free keys."""
    if SKIP:
        pytest.skip(SKIP)
    page = new_page(chromium, viewport={"width": 390, "height": 844})
    try:
        probe.open_page(page, server.url + f"{stem}.html")
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] + 1, f"the page scrolls sideways: {width}"
        for ex in probe.explorers(page):
            box = page.locator(f"#explorer-{ex['id']} .frame img").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 391, box
            state = probe.shown(page, ex["id"])["state"]
            c = ex["controls"][0]
            forward = state[0] + 1 < len(c["labels"]) or c["kind"] == "checkbox"
            state[0] = (1 - state[0]) if c["kind"] == "checkbox" else state[0] + (1 if forward else -1)
            probe.press(page, ex["id"], 0, c["kind"], forward, probe.expected_frame(state, ex["ext"]))
            check_frame(page, ex, state)
        assert page.sdpa_errors == []
    finally:
        page.context.close()


# -- a site copied or uploaded only in part (issue 27) -------------------------------------------

@pytest.mark.browser
def test_a_missing_frame_shows_frame_missing_never_another_value(site, chromium, manifest, tmp_path):
    """Frame files missing (a half-copied site): the picture and readout of the previous value never
    stay up under the new label; a "frame missing" note names the values; other frames still work.
    The starting frame of a second explorer is missing too, a third explorer has no frame table, and
    at the end the script itself goes: its controls stay disabled, never moved away from the picture."""
    if SKIP:
        pytest.skip(SKIP)
    ranges = [(stem, e) for stem in PAGES for e in manifest["pages"][stem]["explorers"]
              if e["controls"][0]["kind"] == "range"
              and len(e["controls"][0]["values"]) >= e["controls"][0]["initial"] + 5]
    (stem, ex), (stem2, ex2), (stem3, ex3) = ranges[0], ranges[1], ranges[2]
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    ext = next((copy / "frames" / ex["id"]).iterdir()).suffix[1:]
    start = [c["initial"] for c in ex["controls"]]
    gone = list(start)
    gone[0] += 3  # three steps right: not prefetched when the page opens, tried again on the move
    (copy / "frames" / ex["id"] / probe.expected_frame(gone, ext)).unlink()
    (copy / "frames" / ex2["id"] / probe.expected_frame([c["initial"] for c in ex2["controls"]], ext)).unlink()
    (copy / "frames" / f"{ex3['id']}.js").unlink()
    with SiteServer(copy) as server:
        page = new_page(chromium)
        try:
            page.goto(server.url + f"{stem}.html", wait_until="load")
            page.wait_for_function(probe.READY, timeout=30_000)
            e = {"id": ex["id"], "ext": ext, "controls": ex["controls"]}
            state = list(start)
            c = ex["controls"][0]
            for _ in range(2):
                state[0] += 1
                probe.press(page, ex["id"], 0, c["kind"], True, probe.expected_frame(state, ext))
                check_frame(page, e, state)
            before = probe.shown(page, ex["id"])
            page.keyboard.press("ArrowRight")  # onto the missing frame
            figure = page.locator(f"#explorer-{ex['id']}")
            figure.locator(".frame-missing").wait_for(timeout=20_000)
            _assert_missing(page, ex["id"], c["label"], c["labels"][gone[0]], before["readout"],
                            probe.expected_frame(gone, ext))
            state[0] += 2  # past it: a picture again, the note gone
            page.keyboard.press("ArrowRight")
            page.wait_for_function("""(id) => !document.querySelector(`#explorer-${id}`).hasAttribute(
                                      'data-frame-missing')""", arg=ex["id"], timeout=20_000)
            page.wait_for_function(f"""() => document.querySelector('#explorer-{ex["id"]} .frame img')
                                          .dataset.frame === '{probe.expected_frame(state, ext)}'""")
            check_frame(page, e, state)
            assert figure.locator(".frame-missing").count() == 0
            assert figure.locator(".frame img").is_visible()
            before = probe.shown(page, ex["id"])
            page.keyboard.press("ArrowLeft")  # back onto it: missing again (tried again, not cached)
            figure.locator(".frame-missing").wait_for(timeout=20_000)
            _assert_missing(page, ex["id"], c["label"], c["labels"][gone[0]], before["readout"],
                            probe.expected_frame(gone, ext))
        finally:
            page.context.close()
        for stem_, ex_, what in ((stem2, ex2, "start"), (stem3, ex3, "table")):
            page = new_page(chromium)
            try:
                page.goto(server.url + f"{stem_}.html", wait_until="load")
                figure = page.locator(f"#explorer-{ex_['id']}")
                figure.evaluate("e => { const d = e.closest('details'); if (d) d.open = true; }")  # a folded deep dive
                figure.locator(".frame-missing").wait_for(timeout=20_000)
                note = figure.locator(".frame-missing").inner_text()
                assert note.startswith("Frame"), note
                if what == "start":
                    assert not figure.locator(".frame img").is_visible(), "the broken starting picture is hidden"
                    c = ex_["controls"][0]
                    assert f"{c['label']} = {c['labels'][c['initial']]}" in note, note
                else:
                    assert f"frames/{ex_['id']}.js" in note, note
                    assert figure.locator("[data-control]").evaluate_all("xs => xs.every(x => x.disabled)")
            finally:
                page.context.close()
        (copy / "_static" / "explorer.js").unlink()  # no script at all: the controls cannot move
        page = new_page(chromium)
        try:
            page.goto(server.url + f"{stem}.html", wait_until="load")
            controls = page.locator(f"#explorer-{ex['id']} [data-control]")
            assert controls.count() and controls.evaluate_all("xs => xs.every(x => x.disabled)")
        finally:
            page.context.close()


def _assert_missing(page, explorer_id, label, value_label, old_readout, frame) -> None:
    figure = page.locator(f"#explorer-{explorer_id}")
    note = figure.locator(".frame-missing").inner_text()
    assert note.startswith("Frame missing") and f"{label} = {value_label}" in note and frame in note, note
    assert figure.get_attribute("data-frame-missing") == frame
    assert not figure.locator(".frame img").is_visible(), "a picture of another value is still shown"
    readout = figure.locator(".readout").inner_html()
    assert readout != old_readout and readout.strip() == "", f"the previous value's readout stays: {readout}"
    assert figure.get_attribute("aria-busy") is None
