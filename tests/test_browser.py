"""The real client: every notebook in JupyterLab, every explorer in JupyterLab and in Voila.

A real ``jupyter lab`` and a real ``voila`` serve a scratch copy of ``notebooks/`` (the
committed notebooks are never opened for writing), and headless Chromium, driven by
Playwright, does what a learner does:

- JupyterLab: open the notebook, *Kernel ▸ Restart Kernel and Run All Cells…*, and find every
  code cell executed in order, no error or stderr output, no "Error displaying widget",
  every image loaded, and every explorer showing its controls and its figure;
- every explorer (drawn by ``explorer.js``, the site's front end, as an anywidget): focus its main
  control, press → / ← (↓ / ↑ on a select) a few times, and see the frame for each new setting, the
  focus kept on the control; the key-press-to-painted-frame latency is measured in the page;
- Voila (app mode): every notebook with an explorer renders without error, and its
  explorers update on a slider move.

The latencies go to ``$SDPA_BROWSER_LATENCY_JSON`` (``benchmarks/browser_latency.py`` reads
it) or to a scratch directory. Screenshots of failures (and of every explorer when
``$SDPA_BROWSER_SCREENSHOTS`` names a directory) help to see what went wrong.

Chromium is Debian's ``/usr/bin/chromium`` or ``$SDPA_CHROMIUM``; it is never downloaded.
Where it is missing these tests skip, saying so.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import time
from pathlib import Path

import pytest

import browser_support as bs

SKIP = bs.chromium_skip_reason()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

NOTEBOOKS = bs.notebooks()
WITH_EXPLORERS = [p for p in NOTEBOOKS if any(c.cls for c in bs.explorer_cells(p))]
#: Seconds allowed for one notebook to open and run (notebook 09 trains for up to two minutes).
TIMEOUT = float(os.environ.get("SDPA_BROWSER_TIMEOUT", "300"))
#: Seconds allowed for widgets to appear once Voila has sent the executed page.
RENDER_TIMEOUT = 120.0
STEPS = 4  # slider steps each way


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A scratch directory holding a copy of notebooks/ (what the servers serve)."""
    home = tmp_path_factory.mktemp("browser")
    root = bs.copy_notebooks(home)
    shots = Path(os.environ.get("SDPA_BROWSER_SCREENSHOTS") or home / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    return {"home": home, "root": root, "shots": shots}


@pytest.fixture(scope="module")
def lab(scratch):
    server = bs.Server("lab", scratch["root"], scratch["home"] / "lab")
    server.home.mkdir()
    with server:
        yield server


@pytest.fixture(scope="module")
def voila(scratch):
    server = bs.Server("voila", scratch["root"], scratch["home"] / "voila")
    server.home.mkdir()
    with server:
        yield server


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        chromium = bs.launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        playwright.stop()


@pytest.fixture(scope="module")
def latency_log(scratch, browser):
    """Collects the slider records; written as JSON when the module ends."""
    log = {"created": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "chromium": browser.version, "records": []}
    yield log
    target = Path(os.environ.get("SDPA_BROWSER_LATENCY_JSON") or scratch["home"] / "browser_latency.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(log, indent=1))
    print(f"\nbrowser latencies written to {target}")


@contextlib.contextmanager
def opened_page(browser, scratch, server, name):
    """A fresh page; on failure a screenshot and the server's log join the error; always closed."""
    page = bs.new_page(browser, [])
    try:
        yield page
    except Exception as exc:
        shot = bs.screenshot(page, scratch["shots"], f"failed-{name}")
        raise AssertionError(f"{exc}\n\nscreenshot: {shot}\n--- end of the {server.kind} log ---\n"
                             f"{server.log_tail()}") from exc
    finally:
        bs.close_page(page)
        if server.kind == "lab":
            server.shutdown_sessions()


def record(log, mode, path, cell, control, steps):
    log["records"].append({"mode": mode, "notebook": path.name, "explorer": cell.class_name,
                           "cell": cell.code_index, "control": control, "steps": steps})


def keep_screenshot(page, scratch, name):
    if os.environ.get("SDPA_BROWSER_SCREENSHOTS"):
        bs.screenshot(page, scratch["shots"], name)


def test_chromium_is_found():
    """Runs only where the others run: Chromium at the configured path answers with a version."""
    import subprocess

    out = subprocess.run([bs.chromium_path(), "--version"], capture_output=True, text=True, timeout=60)
    assert "Chromium" in out.stdout or "Chrome" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_in_jupyterlab(path, lab, browser, latency_log, scratch):
    cells = bs.explorer_cells(path)
    with opened_page(browser, scratch, lab, f"lab-{path.stem}") as page:
        bs.open_in_lab(page, lab, path.name, TIMEOUT)
        seconds = bs.run_all_in_lab(page, TIMEOUT)
        problems = bs.page_problems(page)
        assert not problems, f"{path.name} in JupyterLab:\n" + "\n\n".join(problems)
        counts = bs.execution_counts(page)
        assert counts == [f"[{i}]:" for i in range(1, len(counts) + 1)], \
            f"every code cell runs, in order, once: {counts}"
        print(f"{path.name}: ran all cells in JupyterLab in {seconds:.1f} s")

        bs.unfold_all(page)  # explorers inside deep dives too: a learner opens the deep dive to use one
        # Every stored widget output is live again, and no other cell shows a widget.
        with_widgets = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell'))
            .map((c, i) => c.querySelector('.jp-OutputArea-output .jupyter-widgets, '
                                            + '.jp-OutputArea-output figure.sdpa-explorer') ? i : -1)
            .filter(i => i >= 0)""")
        assert with_widgets == [c.code_index for c in cells], \
            "the code cells showing widgets differ from the stored notebook (rebuild it?)"
        for cell in cells:
            out = bs.lab_cell_output(page, cell.code_index)
            if cell.cls is None:
                continue
            box = out.locator(bs.EXPLORER_BOX)
            box.first.wait_for()
            assert box.count() == 1, f"{cell.label}: one explorer (controls + figure) per cell"
            n_controls = box.locator(".controls [data-control]").count()
            assert n_controls == len(cell.cls().controls), f"{cell.label}: every control is shown"
            bs.wait_for_explorer(page, box)
            img = box.locator(".frame img")
            img.scroll_into_view_if_needed()
            assert img.evaluate("i => i.complete && i.naturalWidth > 0"), f"{cell.label}: the figure shows"
        assert not bs.broken_images(page), f"images that did not load: {bs.broken_images(page)}"

        for cell in cells:
            if cell.cls is None:
                continue
            index, control, step = bs.main_control(cell.cls)
            box = bs.lab_cell_output(page, cell.code_index).locator(bs.EXPLORER_BOX)
            steps = bs.sweep_main_control(page, box, index, steps=STEPS, step=step)
            record(latency_log, "lab", path, cell, control, steps)
            keep_screenshot(page, scratch, f"lab-{path.stem}-{cell.label}")
        problems = bs.page_problems(page)
        assert not problems, f"{path.name} after moving the sliders:\n" + "\n\n".join(problems)


@pytest.mark.parametrize("path", WITH_EXPLORERS, ids=[p.stem for p in WITH_EXPLORERS])
def test_explorers_in_voila(path, voila, browser, latency_log, scratch):
    cells = bs.explorer_cells(path)
    explorers = [c for c in cells if c.cls is not None]
    with opened_page(browser, scratch, voila, f"voila-{path.stem}") as page:
        check_voila(page, path, voila, cells, explorers, latency_log, scratch)


def check_voila(page, path, voila, cells, explorers, latency_log, scratch):
    start = time.perf_counter()
    # Voila streams the page while it runs the notebook; "load" fires when every cell ran.
    page.goto(f"{voila.base}/voila/render/{path.name}", timeout=TIMEOUT * 1000, wait_until="load")
    # Wait for the explorers, or for an error that means they will never come.
    page.wait_for_function(f"""() => document.querySelectorAll('{bs.EXPLORER_BOX}').length >= {len(explorers)}
        || document.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        || /Error displaying widget|There was an error when executing/.test(document.body.innerText)""",
                           timeout=RENDER_TIMEOUT * 1000, polling=250)
    print(f"{path.name}: rendered by Voila in {time.perf_counter() - start:.1f} s")
    problems = bs.page_problems(page, bs.WIDGET_ERRORS + bs.VOILA_ERRORS)
    assert not problems, f"{path.name} in Voila:\n" + "\n\n".join(problems)
    assert page.locator(".jp-OutputArea-output:has(.jupyter-widgets, figure.sdpa-explorer)").count() >= len(cells)
    boxes = page.locator(bs.EXPLORER_BOX)
    assert boxes.count() == len(explorers), "one figure per explorer"
    assert not bs.broken_images(page), f"images that did not load: {bs.broken_images(page)}"
    for k, cell in enumerate(explorers):
        index, control, step = bs.main_control(cell.cls)
        steps = bs.sweep_main_control(page, boxes.nth(k), index, steps=STEPS, step=step)
        record(latency_log, "voila", path, cell, control, steps)
        keep_screenshot(page, scratch, f"voila-{path.stem}-{cell.label}")
    problems = bs.page_problems(page, bs.WIDGET_ERRORS + bs.VOILA_ERRORS)
    assert not problems, f"{path.name} in Voila after moving the sliders:\n" + "\n\n".join(problems)


# -- the floor: the cheapest possible slider move (issue 23) -----------------------------------

#: The floor's notebook (a slider swapping two precomputed PNGs) is browser_support's, shared with
#: benchmarks/explorer_frontend.py, which measures it in the same run as the explorers' front end.
write_floor_notebook = bs.write_floor_notebook

FLOOR_CELL = bs.ExplorerCell(code_index=0, class_name="floor", cls=None)


def test_floor_in_jupyterlab(lab, browser, latency_log, scratch):
    path = write_floor_notebook(scratch["root"])
    with opened_page(browser, scratch, lab, "lab-floor") as page:
        steps = bs.floor_steps(page, lab, path.name, STEPS, TIMEOUT, RENDER_TIMEOUT)
        record(latency_log, "lab", path, FLOOR_CELL, "floor", steps)
        assert len(steps) == 2 * STEPS and all(s["image_ms"] > 0 for s in steps)


def test_floor_in_voila(voila, browser, latency_log, scratch):
    path = write_floor_notebook(scratch["root"])
    with opened_page(browser, scratch, voila, "voila-floor") as page:
        steps = bs.floor_steps(page, voila, path.name, STEPS, TIMEOUT, RENDER_TIMEOUT)
        record(latency_log, "voila", path, FLOOR_CELL, "floor", steps)
        assert len(steps) == 2 * STEPS and all(s["image_ms"] > 0 for s in steps)


# -- a notebook opened WITHOUT running it (issue 12 §2 and §5) -------------------------------

def _cell_count(path) -> int:
    return len(json.loads(Path(path).read_text(encoding="utf-8"))["cells"])


FOLDED_OR_EXPLORING = [p for p in NOTEBOOKS if bs.deep_dives(p) or bs.explorer_cells(p)]


@pytest.mark.parametrize("path", FOLDED_OR_EXPLORING, ids=[p.stem for p in FOLDED_OR_EXPLORING])
def test_opened_without_running(path, lab, browser, scratch):
    """What a learner sees first, before running anything (a fresh clone is untrusted):

    - every explorer cell shows its stored picture (an ``<img>``), never a ``VBox(children=...``
      repr nor a widget error;
    - every deep dive is folded: its heading is collapsed and the cells under it are hidden;
    - one click (on the "N cells hidden" button under the heading) unfolds one deep dive, and
      only that one.
    """
    cells = bs.explorer_cells(path)
    dives = bs.deep_dives(path)
    with opened_page(browser, scratch, lab, f"lab-unrun-{path.stem}") as page:
        bs.open_without_running(page, lab, path.name, _cell_count(path), TIMEOUT)
        for cell in cells:
            out = bs.lab_cell_output(page, cell.code_index)
            img = out.locator(".jp-RenderedImage img")
            img.first.wait_for(state="attached")
            assert img.count() == 1, f"{cell.label}: one stored picture"
            assert img.first.evaluate("async i => { try { await i.decode(); } catch (e) {} "
                                      "return i.complete && i.naturalWidth > 0; }"), f"{cell.label}: picture loads"
            text = out.inner_text()
            assert "VBox(" not in text and "children=" not in text, f"{cell.label} shows a repr: {text[:200]}"
        problems = bs.page_problems(page)
        assert not problems, f"{path.name} opened without running:\n" + "\n\n".join(problems)

        for heading, members in dives:
            h = bs.lab_cell(page, heading)
            assert "jp-MarkdownHeadingCollapsed" in h.get_attribute("class"), \
                f"deep dive at cell {heading} is not collapsed when the notebook opens"
            assert not bs.is_hidden(h), f"the heading of the deep dive at cell {heading} is visible"
            shown = [i for i in members if not bs.is_hidden(bs.lab_cell(page, i))]
            for _ in range(50):  # JupyterLab hides the cells under a collapsed heading a moment after it renders
                if not shown:
                    break
                page.wait_for_timeout(200)
                shown = [i for i in members if not bs.is_hidden(bs.lab_cell(page, i))]
            assert not shown, f"deep dive at cell {heading}: cells {shown} are shown before a click"
        if dives:
            heading, members = dives[0]
            button = bs.lab_cell(page, heading).locator(".jp-showHiddenCellsButton")
            assert button.count() == 1, "a collapsed deep dive says how many cells it hides"
            button.click()
            page.wait_for_function(
                f"() => !document.querySelectorAll('.jp-Notebook .jp-Cell')[{members[0]}]"
                ".classList.contains('lm-mod-hidden')", timeout=10_000)
            hidden = [i for i in members if bs.is_hidden(bs.lab_cell(page, i))]
            assert not hidden, f"after one click, cells {hidden} of the first deep dive are still hidden"
            for later, later_members in dives[1:]:
                assert all(bs.is_hidden(bs.lab_cell(page, i)) for i in later_members), \
                    f"one click unfolds one deep dive, yet the one at cell {later} opened too"


# -- the explorers' front end (issue 39): frames swapped in the browser, also over a slow link -----

FRONT_NAME = "front_end.ipynb"


def write_front_end_notebook(root: Path) -> Path:
    """One cell: notebook 02's explorer (four components × 13 d_k: a 52-frame prefetch grid)."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from sdpa_helpers.widgets.variance import VarianceExplorer\nVarianceExplorer()")])
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    path = Path(root) / FRONT_NAME
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("link", ["direct", "100 ms round trip"])
def test_prefetched_frames_swap_in_the_browser(link, lab, browser, latency_log, scratch):
    """After display every frame of the prefetch grid reaches the browser (asked of the kernel one or
    two at a time), then moves are swapped in the page without the kernel: each press shows the right
    frame, keeps the focus, and no request leaves the machine -- directly and through a proxy adding
    100 ms of round trip (a Binder-like link)."""
    path = write_front_end_notebook(scratch["root"])
    proxy = bs.DelayProxy(lab.port) if link != "direct" else None
    blocked: list = []
    page = bs.new_page(browser, blocked)
    try:
        base = f"http://127.0.0.1:{proxy.port}" if proxy else lab.base
        page.goto(f"{base}/lab/tree/{path.name}?token={lab.token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=TIMEOUT * 1000)
        page.wait_for_function(bs._KERNEL_IDLE, timeout=TIMEOUT * 1000, polling=100)
        bs.wait_for_kernels_idle(lab, TIMEOUT)
        bs.run_all_in_lab(page, TIMEOUT)
        box = bs.lab_cell_output(page, 0).locator(bs.EXPLORER_BOX)
        ident = bs.wait_for_explorer(page, box)
        grid = bs.wait_for_grid(page, ident, 120)
        assert grid["frames"] == 52, grid
        steps = bs.sweep_main_control(page, box, 0, steps=STEPS)
        assert all(s["prefetched"] for s in steps), "every frame of the grid is in the browser before the moves"
        record(latency_log, "lab" if proxy is None else "lab-proxy", path,
               bs.ExplorerCell(0, "VarianceExplorer", None), "d_k", steps)
        assert not blocked, f"requests off the machine: {blocked}"
        assert not bs.page_problems(page), bs.page_problems(page)
    finally:
        bs.close_page(page)
        if proxy:
            proxy.close()
        lab.shutdown_sessions()
