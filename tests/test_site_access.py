"""The site serves every reader (issue 30 §2-§4).

- axe-core (from npm, pinned in package-lock.json) on every page (the teacher's guide, talk and
  worksheets included), deep dives folded and open: 0 violations of any impact (its colour-contrast
  rule included); the counts by impact are printed as a table;
- every figure's alt text is its author's (the build refuses a figure without it);
- each page reads at 320 CSS px (a phone) and at 640 px (200 % zoom of a 1280 px window) with no
  sideways scrolling; explorers work by keyboard alone, show a visible focus, and announce their
  readout (an ``aria-live`` region whose text follows the frame); nothing moves under
  ``prefers-reduced-motion: reduce``;
- print: an explorer prints its current frame without its controls; deep dives print open or
  closed as the reader left them;
- links: the checked-in ``OWNER/REPO`` placeholders are the only ones, and the Pages workflow
  fills in the repository it runs in.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import pytest

import test_site as ts

PAGES, SKIP, new_page, probe = ts.PAGES, ts.SKIP, ts.new_page, ts.probe
site, manifest, server, chromium = ts.site, ts.manifest, ts.server, ts.chromium  # the site's fixtures


ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
ALL = ["index", *PAGES]
IMPACTS = ("critical", "serious", "moderate", "minor")


def run_axe(page) -> list[dict]:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))  # the file's text, injected: no request
    return page.evaluate("""async () => {
      const r = await axe.run(document, {resultTypes: ['violations']});
      return r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                     where: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")


def test_axe_core_is_pinned_and_locked_like_mathjax():
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    version = package["devDependencies"]["axe-core"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"axe-core must be pinned exactly, got {version!r}"
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))["packages"]["node_modules/axe-core"]
    assert lock["version"] == version and lock["integrity"].startswith("sha512-")


def _teachers_pages(site) -> list[str]:
    """The guide, the talk and the worksheets (issue 41: axe on every page, these included)."""
    return ["teachers", "talk", *(f"worksheets/{p.stem}" for p in sorted((site / "worksheets").glob("*.html")))]


def _open_any(page, url: str) -> None:
    """A course page (its explorers ready and MathJax done) or a teacher's page (no explorer.js: MathJax done)."""
    page.goto(url, wait_until="load", timeout=30_000)
    if page.evaluate("() => !!document.querySelector('script[src$=\"explorer.js\"]')"):
        page.wait_for_function(probe.READY, timeout=30_000)
    assert page.evaluate(probe.MATH_DONE), "MathJax did not start"


@pytest.mark.browser
def test_axe_core_finds_no_violation_of_any_impact(site, server, chromium):
    """issue 41: 0 violations of any impact (critical, serious, moderate, minor) on every page, deep dives
    folded and open, the guide, the talk and the worksheets included."""
    if SKIP:
        pytest.skip(SKIP)
    if not AXE.is_file():
        pytest.skip("axe-core is missing: npm ci (package-lock.json pins it)")
    table, bad = {}, []
    for stem in ALL + _teachers_pages(site):
        page = new_page(chromium)
        try:
            _open_any(page, server.url + f"{stem}.html")
            counts: Counter = Counter()
            for state in ("folded", "open"):
                if state == "open":
                    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
                for v in run_axe(page):
                    counts[v["impact"]] += v["nodes"]
                    bad.append((stem, state, v))
            table[stem] = counts
            assert page.sdpa_blocked == []
        finally:
            page.context.close()
    lines = ["| page | " + " | ".join(IMPACTS) + " |", "|---|" + "---|" * len(IMPACTS)]
    lines += [f"| {stem} | " + " | ".join(str(c.get(i, 0)) for i in IMPACTS) + " |" for stem, c in table.items()]
    print("\naxe-core violations (nodes), folded + open:\n" + "\n".join(lines))
    assert not bad, bad[:5]


@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(320, 640), (640, 450)])
def test_pages_reflow_without_sideways_scrolling(width, height, server, chromium):
    """320 px: a phone (WCAG's reflow width); 640 px: a 1280 px window at 200 % zoom."""
    if SKIP:
        pytest.skip(SKIP)
    wide = []
    for stem in ALL:
        page = new_page(chromium, viewport={"width": width, "height": height})
        try:
            probe.open_page(page, server.url + f"{stem}.html")
            page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
            page.wait_for_timeout(300)  # the pages react to a deep dive opened (its 'toggle' event)
            w = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            if w[0] > w[1] + 1:
                wide.append((stem, w))
        finally:
            page.context.close()
    assert not wide, f"pages that scroll sideways at {width} px: {wide}"


@pytest.mark.browser
def test_explorers_by_keyboard_visible_focus_and_announced_readout(server, chromium, manifest):
    if SKIP:
        pytest.skip(SKIP)
    stem = next(s for s in PAGES if manifest["pages"][s]["explorers"])
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + f"{stem}.html")
        ex = probe.explorers(page)[0]
        figure = page.locator(f"#explorer-{ex['id']}")
        figure.evaluate("e => { const d = e.closest('details'); if (d) d.open = true; }")  # a folded deep dive: open it
        assert figure.locator(".readout").get_attribute("aria-live") == "polite"
        first = figure.locator("[data-control]").first
        first.focus()
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")  # focus arrives by keyboard: :focus-visible applies
        style = page.evaluate("() => { const s = getComputedStyle(document.activeElement); "
                              "return [s.outlineStyle, s.outlineWidth, document.activeElement.dataset.control]; }")
        assert style[0] != "none" and float(style[1].rstrip("px")) >= 2, style
        k = int(style[2])
        c = ex["controls"][k]
        state = probe.shown(page, ex["id"])["state"]
        alt_before = probe.shown(page, ex["id"])["alt"]
        forward = c["kind"] == "checkbox" or state[k] + 1 < len(c["labels"])
        state[k] = 1 - state[k] if c["kind"] == "checkbox" else state[k] + (1 if forward else -1)
        probe.press(page, ex["id"], k, c["kind"], forward, probe.expected_frame(state, ex["ext"]))
        after = probe.shown(page, ex["id"])
        assert after["alt"] != alt_before and c["labels"][state[k]] in after["alt"]
        readout = page.evaluate(f"""() => {{ const m = window.SDPA_EXPLORERS['{ex['id']}'];
            const e = window.SDPA_LIVE['{ex['id']}']; const d = document.createElement('div');
            d.innerHTML = m.readouts[m.readout_of[m.controls.reduce((k, c, i) => k * c.labels.length + e.state[i], 0)]];
            return d.textContent.replace(/\\s+/g, ' ').trim(); }}""")
        assert " ".join(figure.locator(".readout").inner_text().split()) == readout  # the live region follows
    finally:
        page.context.close()


@pytest.mark.browser
def test_nothing_moves_under_reduced_motion(server, chromium, manifest):
    if SKIP:
        pytest.skip(SKIP)
    page = new_page(chromium)
    try:
        page.emulate_media(reduced_motion="reduce")
        probe.open_page(page, server.url + f"{PAGES[0]}.html")
        moving = page.evaluate("""() => {
          const out = document.getAnimations().map(a => String(a.id || a.constructor.name));
          for (const el of document.querySelectorAll('*')) {
            const s = getComputedStyle(el);
            if (s.animationName !== 'none' || parseFloat(s.transitionDuration) > 0) out.push(el.tagName);
          }
          return out;
        }""")
        assert moving == []
    finally:
        page.context.close()


@pytest.mark.browser
def test_print_shows_the_current_frame_and_the_reader_s_deep_dives(server, chromium, manifest):
    if SKIP:
        pytest.skip(SKIP)
    stem = next(s for s in PAGES if manifest["pages"][s]["explorers"])
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + f"{stem}.html")
        ex = probe.explorers(page)[0]
        page.evaluate(f"""() => {{ let d = document.querySelector('#explorer-{ex["id"]}').closest('details');
                          while (d) {{ d.open = true; d = d.parentElement.closest('details'); }} }}""")
        state = probe.shown(page, ex["id"])["state"]
        k = next(i for i, c in enumerate(ex["controls"]) if len(c["labels"]) > 1)
        c = ex["controls"][k]
        forward = c["kind"] == "checkbox" or state[k] + 1 < len(c["labels"])
        state[k] = 1 - state[k] if c["kind"] == "checkbox" else state[k] + (1 if forward else -1)
        probe.press(page, ex["id"], k, c["kind"], forward, probe.expected_frame(state, ex["ext"]))
        dives = page.locator("details.deep-dive")
        opened = page.evaluate("() => Array.from(document.querySelectorAll('details.deep-dive')).map(d => d.open)")
        page.emulate_media(media="print")
        figure = page.locator(f"#explorer-{ex['id']}")
        assert not figure.locator(".controls").is_visible()
        assert figure.locator(".frame img").is_visible()
        assert figure.locator(".frame img").get_attribute("data-frame") == probe.expected_frame(state, ex["ext"])
        for i, was_open in enumerate(opened):
            body = dives.nth(i).locator(":scope > :not(summary)").first
            if body.count():
                assert body.is_visible() == was_open, (i, was_open)
        assert not page.locator("header.site").is_visible()
        buttons = page.locator("form.exercise button")
        assert buttons.count() == 0 or not buttons.first.is_visible()
        pdf = page.pdf()
        assert pdf[:4] == b"%PDF" and len(pdf) > 10_000
    finally:
        page.context.close()


def test_no_explorer_imports_the_exercise_bank():
    """The frames' key leaves sdpa_helpers/exercises out (build.frames_key): true while no explorer uses it."""
    code = "import sys, sdpa_helpers.widgets as w; w.all_explorers(); " \
           "print(any(m.startswith('sdpa_helpers.exercises') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


# -- author alt text -----------------------------------------------------------------------------

def _build_module():
    """authoring/site/build.py, loaded afresh under its own name (authoring/build.py is ``build`` too)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_build_fresh", ROOT / "authoring" / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_refuses_a_figure_without_author_alt_text(monkeypatch):
    monkeypatch.delenv("SITE_ALLOW_MISSING_ALT", raising=False)
    build = _build_module()
    cell = {"cell_type": "code", "source": "ax = plots.spread(d_ks)\nax.figure", "metadata": {}}
    with pytest.raises(build.MissingAlt, match=r"05_softmax_saturation.ipynb, cell 12 .*ax = plots.spread"):
        build.figure_alt(cell, "05_softmax_saturation.ipynb", 12)
    cell["metadata"]["alt"] = "Log-log plot of the spread against d_k: slope 1/2."
    assert build.figure_alt(cell, "05_softmax_saturation.ipynb", 12) == cell["metadata"]["alt"]
    assert "of this page, drawn by" not in Path(build.__file__).read_text(encoding="utf-8")  # no generated fallback


def test_every_figure_cell_carries_author_alt_text():
    """What the build will refuse, found in the notebooks first: every code cell whose stored output is
    a figure has ``alt`` metadata (``# %% alt="..."`` in authoring/notebooks/)."""
    missing = []
    for nb_path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            figure = any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
            if cell["cell_type"] == "code" and figure and not str(cell["metadata"].get("alt", "")).strip():
                missing.append(f"{nb_path.name} cell {i}")
    assert not missing, f"{len(missing)} figures without author alt text: {missing[:8]}"


# -- links ---------------------------------------------------------------------------------------

#: Where the placeholder OWNER/REPO may stand in the repository, and why.
PLACEHOLDER_FILES = {
    "README.md",  # the site and Binder addresses, explained as placeholders
    "CONTRIBUTING.md",  # what to replace before publishing
    "authoring/site/build.py",  # the default when no --repo is given (a local build)
    "Makefile",  # the comment on SITE_REPO
    "docs/site.md",  # how the workflow fills it in
    "tests/test_site_access.py",  # this test
}


@pytest.mark.git  # it lists the tracked files: skipped, with its reason, in a checkout without git history
def test_the_checked_in_placeholders_are_the_only_ones():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = {}
    for name in files:
        path = ROOT / name
        if path.suffix in (".png", ".webp", ".ipynb", ".lock") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits = re.findall(r"OWNER[/.](?:REPO|github\.io)", text)
        if hits:
            found[name] = len(hits)
    assert set(found) <= PLACEHOLDER_FILES, {k: v for k, v in found.items() if k not in PLACEHOLDER_FILES}


def test_the_pages_workflow_fills_in_its_own_repository():
    import yaml

    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    runs = [s.get("run", "") for job in wf["jobs"].values() for s in job.get("steps", [])]
    assert any("make site" in r and "SITE_REPO=" in r and "${{ github.repository }}" in r for r in runs), runs


def test_a_build_for_a_repository_has_no_placeholder(monkeypatch):
    build = _build_module()
    monkeypatch.setattr(build, "REPO", "someone/why-sqrt-dk")
    page = types.SimpleNamespace(path=Path("05_softmax_saturation.ipynb"))
    text = build.banner(page) + build.rewrite_links('<a href="../README.md">x</a>') + build.exercise_html(
        {"key": "05.stable_softmax", "kind": "function"}, page)
    assert "OWNER" not in text and "REPO" not in text
    assert "mybinder.org/v2/gh/someone/why-sqrt-dk/HEAD" in text and "github.com/someone/why-sqrt-dk" in text


#: What a keyboard reader must reach: the explorers' controls, the exercises' answer boxes and their Check
#: buttons, and the disclosure buttons (``summary``) that open a deep dive or the contents: each is a control
#: (HTML's ``summary`` is an interactive element, a disclosure button to assistive technology).
_CONTROLS = ("figure.explorer [data-control], .exercise input, .exercise select, .exercise textarea, "
             ".exercise button, summary")
_TABBABLE = ("a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex='-1']), "
             "mjx-container[tabindex]:not([tabindex='-1'])")


def _formulas_in_tab_order(page) -> int:
    """Formulas that are Tab stops although they do not scroll (a too-wide one scrolls, and must be one)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('mjx-container[tabindex]'))
        .filter(e => e.getAttribute('tabindex') !== '-1' && !e.hasAttribute('data-scroll-tab')).length""")


def _tab_walk(page, limit: int = 600) -> dict:
    """Press Tab from the top of the page until focus leaves it, as a keyboard reader does (deep dives
    folded, at the page's own viewport). Returns the number of stops, the controls reachable (visible: not
    inside a closed ``details`` unless they are its ``summary``), and the press at which the last of them
    was reached (a radio group counts once)."""
    controls = page.evaluate(f"""() => {{
      const shown = e => {{
        for (let d = e.closest('details'); d; d = d.parentElement && d.parentElement.closest('details')) {{
          const own = d.querySelector(':scope > summary');
          if (!d.open && !(own && (own === e || own.contains(e)))) return false;
        }}
        return !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length) && !e.disabled;
      }};
      // a group of radio buttons is one control and one Tab stop (the arrow keys move inside it)
      const ids = new Map();
      Array.from(document.querySelectorAll({json.dumps(_CONTROLS)})).filter(shown).forEach(e => {{
        const key = e.type === 'radio' && e.name ? 'radio:' + e.name : e;
        if (!ids.has(key)) ids.set(key, String(ids.size));
        e.setAttribute('data-tab-probe', ids.get(key));
      }});
      return ids.size;
    }}""")
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    reached, last, stops, previous = set(), 0, 0, None
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = page.evaluate("""() => { const a = document.activeElement;
            if (!a || a === document.body) return null;
            if (!a.hasAttribute('data-tab-stop')) a.setAttribute('data-tab-stop', Math.random().toString(36).slice(2));
            return [a.getAttribute('data-tab-stop'), a.getAttribute('data-tab-probe')]; }""")
        if now is None or now[0] == previous:
            break
        stops += 1
        previous = now[0]
        if now[1] is not None:
            if now[1] in reached:  # wrapped round to the start
                stops -= 1
                break
            reached.add(now[1])
            last = stops
    return {"stops": stops, "controls": controls, "reached": len(reached), "last": last}


@pytest.mark.browser
def test_tab_reaches_every_control_within_twice_as_many_stops(server, chromium):
    """Pressing Tab from the top of each page (deep dives folded) reaches every control, answer box and
    disclosure button, the last of them within twice as many presses as there are of them (issue 41): formulas
    are out of the Tab order (MathJax's menu setting inTabOrder: false) unless they scroll sideways."""
    if SKIP:
        pytest.skip(SKIP)
    rows, bad = [], []
    for stem in [*ALL, "teachers", "talk", "worksheets/00_start_here"]:
        page = new_page(chromium)
        try:
            page.goto(server.url + f"{stem}.html", wait_until="load")
            page.wait_for_timeout(1000)  # MathJax and the explorers settle
            formulas = _formulas_in_tab_order(page)
            t = _tab_walk(page)
            rows.append(f"{stem:<40} {t['controls']:>4} controls {t['reached']:>4} reached, the last at press "
                        f"{t['last']:>4} of {t['stops']:>4}")
            if formulas:
                bad.append(f"{stem}: {formulas} formulas in the Tab order")
            if t["reached"] != t["controls"]:
                bad.append(f"{stem}: Tab reaches {t['reached']} of its {t['controls']} controls")
            if t["controls"] and t["last"] > 2 * t["controls"]:
                bad.append(f"{stem}: the last of {t['controls']} controls is Tab stop {t['last']}")
        finally:
            page.context.close()
    print("\n".join(rows))
    assert not bad, "\n".join(bad)


@pytest.mark.browser
def test_mathjax_accessibility_explorer_activates_offline(server, chromium):
    """Right-click → Accessibility → Activate loads the explorer and what it needs (input/mml among them)
    from the site itself; no request fails, and the formulas join the Tab order only then."""
    if SKIP:
        pytest.skip(SKIP)
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + "02_mean_and_variance.html")
        assert _formulas_in_tab_order(page) == 0
        page.evaluate("() => MathJax.startup.document.menu.menu.pool.lookup('explorer').setValue(true)")
        page.wait_for_function("() => !!(MathJax._.a11y && MathJax._.a11y.explorer)", timeout=60_000)
        page.wait_for_function("() => document.querySelectorAll('mjx-container[tabindex=\"0\"]').length > 0",
                               timeout=60_000)
        # the speech engine enriched the formulas (its rule files, sre/mathmaps, came from the site)
        assert page.evaluate("() => document.querySelectorAll('mjx-container [data-semantic-type]').length") > 0
        assert not [p for p in probe.problems(page) if p.startswith("request failed")], probe.problems(page)
        assert not page.sdpa_blocked, page.sdpa_blocked
    finally:
        page.context.close()


@pytest.mark.browser
def test_teachers_pages_work_offline_and_no_course_page_links_to_the_key(site, server, chromium):
    """The guide, the worksheets (HTML and PDF) and the talk are built; the talk's explorer works; only the
    contents page links to the key."""
    if SKIP:
        pytest.skip(SKIP)
    assert (site / "teachers.html").is_file() and (site / "talk.html").is_file()
    sheets = sorted((site / "worksheets").glob("*.html"))
    assert len(sheets) == len(PAGES)
    for sheet in sheets:
        pdf = sheet.with_suffix(".pdf")
        assert pdf.is_file() and pdf.read_bytes()[:5] == b"%PDF-", pdf
    for stem in PAGES:
        assert "teachers.html" not in (site / f"{stem}.html").read_text(encoding="utf-8"), stem
    assert 'href="teachers.html"' in (site / "index.html").read_text(encoding="utf-8")
    page = new_page(chromium)
    try:
        page.goto(server.url + "talk.html", wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=30_000)
        assert page.evaluate("() => Reveal.getTotalSlides()") >= 8
        assert page.locator("figure.explorer").count() == 1
        assert not probe.problems(page), probe.problems(page)
        page.goto(server.url + "teachers.html", wait_until="load")
        assert page.locator("a[href='talk.html']").count() == 1
        for v in run_axe(page):
            assert v["impact"] not in ("critical", "serious"), v
    finally:
        page.context.close()
