"""Every explorer in the package, headless: builds, updates in place, never grows."""

import math

import ipywidgets as W
import matplotlib.pyplot as plt  # only to check that explorers make no pyplot figures (Agg: tests/conftest.py)
import numpy as np
import pytest
from ipywidgets.widgets import widget as widget_module

from sdpa_helpers import plots, widgets
from sdpa_helpers.scales import D_K_CHOICES
from sdpa_helpers.widgets.assumptions import CorrelationExplorer
from sdpa_helpers.widgets.attention_maps import AttentionMapExplorer
from sdpa_helpers.widgets.gradients import JacobianExplorer
from sdpa_helpers.widgets.overview import ThreeEffectsExplorer

EXPLORERS = widgets.all_explorers()
#: The same, with every explorer but the quickest to build marked slow: a check of the shared base class
#: runs on two explorers in the edit-test loop (`make test-fast`) and on all in `make test`. Chosen by
#: name, not by position (the glob's order put the two slowest first: 4.7 s of a 63 s run).
_QUICKEST = ("TemperatureExplorer", "VarianceSpreadExplorer")


def _fast_first(n: int) -> list:
    return [c if c.__name__ in _QUICKEST[:n] else pytest.param(c, marks=pytest.mark.slow) for c in EXPLORERS]


EXPLORERS_TWO_FAST = _fast_first(2)
EXPLORERS_ONE_FAST = _fast_first(1)


def test_explorers_are_found():
    names = {cls.__name__ for cls in EXPLORERS}
    assert "ThreeEffectsExplorer" in names


def test_d_k_slider_is_log_scale():
    s = widgets.d_k_slider()
    assert list(s.options) == list(D_K_CHOICES)  # the course's grid, from its one home (scales)
    with pytest.raises(ValueError, match="value"):
        widgets.d_k_slider(3)


@pytest.fixture(params=EXPLORERS_TWO_FAST, ids=lambda c: c.__name__, scope="module")
def explorer(request):
    return request.param()


def test_every_control_has_a_description(explorer):
    assert explorer.controls, "an explorer has controls"
    for name, control in explorer.controls.items():
        assert isinstance(control, W.ValueWidget)
        assert control.description.strip(), f"control {name!r} has no description"
    assert explorer.main in explorer.controls


def test_figure_axes_are_labelled(explorer):
    for ax in explorer.fig.axes:
        if ax.axison and ax.get_visible() and ax.get_label() != "<colorbar>":
            assert ax.get_xlabel().strip() or ax.get_title().strip(), f"{ax} has no x label"
            assert ax.get_ylabel().strip() or ax.get_title().strip(), f"{ax} has no y label"


def test_a_slider_move_changes_the_figure_in_place(explorer):
    before_figs = plt.get_fignums()
    widget = explorer.widget
    fig = explorer.fig
    image = explorer.image
    control = explorer.controls[explorer.main]
    values = explorer.sweep_values()
    assert len(values) >= 2
    start = control.value
    for value in [v for v in values if v != start][:3]:
        renders, png = explorer.renders, image.value
        control.value = value
        assert explorer.renders == renders + 1, "one render per move"
        assert image.value != png, f"moving {explorer.main} to {value!r} did not change the image"
    control.value = start
    assert explorer.widget is widget, "the output does not grow: one view for life"
    assert explorer.fig is fig and explorer.image is image, "the same figure and image for life"
    assert plt.get_fignums() == before_figs, "explorers make no pyplot figures"
    assert image.value[:4] == b"\x89PNG"


def test_same_values_give_the_same_image(explorer):
    control = explorer.controls[explorer.main]
    values = explorer.sweep_values()
    control.value = values[0]
    first = explorer.image.value
    control.value = values[-1]
    control.value = values[0]
    assert explorer.image.value == first, "an explorer's image depends on its control values only"


def _pixels(png: bytes) -> np.ndarray:
    from io import BytesIO

    from PIL import Image

    return np.asarray(Image.open(BytesIO(png))).astype(int)


def test_every_frame_is_what_a_fresh_draw_shows(explorer):
    """A frame comes from a background cached per key with the moving parts drawn on top: it is
    exactly a fresh draw of the figure (the moving parts on top), at values of every control, first
    visits and revisits -- no stale background, no moving part missing or left behind."""
    animated = explorer.fig.findobj(lambda a: a.get_animated())
    assert animated, "an explorer moves some artists"
    values = explorer.values
    try:
        for name, control in explorer.controls.items():
            options = getattr(control, "options", None)
            if options:
                sweep = [o[1] if isinstance(o, tuple) else o for o in options]
            else:  # a checkbox, or a numeric slider
                sweep = [True, False] if isinstance(control.value, bool) else [control.min, control.max]
            for value in [*sweep[:5], *sweep[-3:], sweep[0]]:
                control.value = value
                frame = _pixels(explorer.image.value)
                with plots.style():  # as the explorer draws
                    explorer.fig.canvas.draw()  # everything but the moving parts, afresh
                    for artist in animated:
                        if artist.get_visible():
                            explorer.fig.draw_artist(artist)
                fresh = np.asarray(explorer.fig.canvas.buffer_rgba()).astype(int)
                diff = np.abs(frame - fresh)
                assert diff.max() == 0, f"{name}={value!r}: the frame differs from a fresh draw by {diff.max()} levels"
    finally:
        for name, value in values.items():
            explorer.controls[name].value = value


def test_unknown_control_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown control"):
        EXPLORERS[0](no_such_control=1)


def test_explorer_displays_as_a_widget(explorer):
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_update_time_is_recorded(explorer):
    explorer.update()
    assert np.isfinite(explorer.last_update_seconds) and explorer.last_update_seconds > 0


# -- what a stored explorer shows before its cell runs (issue 12 §5) -------------------------

def test_display_bundle_carries_a_small_picture_and_the_instruction(explorer):
    import base64

    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle, "the live widget stays"
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) < 40_000, f"fallback picture of {len(png)} bytes: notebooks must stay < 1 MB"
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png))
    width, height = image.size
    assert width == round(explorer.figsize[0] * explorer.dpi), "the figure at its pixel width"
    assert height > round(explorer.figsize[1] * explorer.dpi), "the figure plus the instruction banner"
    text = bundle["text/plain"]
    main = explorer.controls[explorer.main].description
    assert text.startswith("▶ Run this cell to start the explorer — then ") and text.endswith(main), text
    assert "VBox" not in text, "never the widget repr"


# -- memory (issue 11): close(), and dropped explorers are collected ------------------------

def _live_widgets() -> int:
    import gc

    from ipywidgets.widgets import widget as widget_module

    gc.collect()  # explorers dropped earlier close their widgets when collected
    return len(widget_module._instances)


def _live_figures() -> int:
    import gc

    from matplotlib.figure import Figure

    gc.collect()
    return sum(isinstance(o, Figure) for o in gc.get_objects())


@pytest.mark.parametrize("cls", EXPLORERS_ONE_FAST, ids=lambda c: c.__name__)
def test_close_releases_widgets_and_figure(cls):
    before = _live_widgets()
    e = cls()
    assert _live_widgets() > before
    e.close()
    assert e.closed and e.fig is None and not e._backgrounds
    assert _live_widgets() == before, "every widget of the explorer (with layouts and styles) is closed"
    renders = e.renders
    e.update()
    assert e.renders == renders, "a closed explorer does not redraw"
    assert "closed" in e._repr_mimebundle_()["text/plain"] and "image/png" not in e._repr_mimebundle_()
    e.close()  # idempotent


@pytest.mark.parametrize("cls", EXPLORERS_ONE_FAST, ids=lambda c: c.__name__)
def test_a_dropped_explorer_is_collected(cls):
    import gc
    import weakref

    widgets_before, figures_before = _live_widgets(), _live_figures()
    e = cls()
    e.controls[e.main].value = e.sweep_values()[-1]  # the controls have called it back
    e._repr_mimebundle_()
    ref = weakref.ref(e)
    del e
    gc.collect()
    assert ref() is None, "nothing (observers, widgets) keeps an explorer alive"
    assert _live_figures() == figures_before
    assert _live_widgets() == widgets_before, "its widgets are closed when it is collected"


#: A quick explorer for the build-and-drop-30 test (tracemalloc slows every allocation; every
#: class, notebook 00's included, is checked for collection by test_a_dropped_explorer_is_collected).
QUICK = [c for c in EXPLORERS if c.__name__ == "VarianceExplorer"] or EXPLORERS[:1]


@pytest.mark.slow  # builds thirty explorers: in `make test`, not the edit-test loop
@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_thirty_explorers_built_and_dropped_leave_memory_flat(cls):
    """30 explorers (build, move the main control, display, rebuild as a re-run cell does): flat.

    Before the fix each dropped explorer kept its figure and backgrounds (about 11 MB each).
    Traced memory may grow by matplotlib's bounded caches (mathtext, fonts), not per explorer.
    """
    import gc
    import tracemalloc

    def rounds(n):
        for _ in range(n):
            e = cls()
            e.controls[e.main].value = e.sweep_values()[-1]  # a second background, a callback
            e._repr_mimebundle_()
            e = cls()  # `e = X(); e = X()`: re-running the cell
        del e
        gc.collect()

    rounds(2)  # warm the module-level caches
    widgets_before, figures_before = _live_widgets(), _live_figures()
    tracemalloc.start()
    try:
        rounds(5)  # 10 explorers
        after_10 = tracemalloc.get_traced_memory()[0]
        rounds(10)  # 20 more
        after_30 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert _live_figures() == figures_before, "no figure survives its explorer"
    assert _live_widgets() == widgets_before, "no widget survives its explorer"
    per_explorer = (after_30 - after_10) / 20
    assert per_explorer < 50_000, f"{per_explorer / 1e3:.0f} kB kept per dropped explorer"


def test_rerunning_a_cell_closes_the_explorer_it_showed_before(monkeypatch):
    """In a kernel `Out` keeps every displayed explorer; a re-run of its cell closes the old one."""
    cls = QUICK[0]
    run = {"value": ("cell-a", "msg-1")}
    monkeypatch.setattr(widgets, "_current_run", lambda: run["value"])
    monkeypatch.setattr(widgets, "_SHOWN", {})
    first, second = cls(), cls()
    first._repr_mimebundle_()
    second._repr_mimebundle_()  # two explorers shown by one run of a cell: both live
    assert not first.closed and not second.closed
    run["value"] = ("cell-b", "msg-2")
    other = cls()
    other._repr_mimebundle_()  # another cell: nothing closes
    assert not first.closed and not second.closed
    run["value"] = ("cell-a", "msg-3")
    third = cls()
    third._repr_mimebundle_()  # cell a runs again: its old output is gone
    assert first.closed and second.closed and not third.closed and not other.closed
    for e in (other, third):
        e.close()
    assert widgets._SHOWN == {}, "closed explorers are forgotten"


@pytest.mark.parametrize("name", ["AttentionMapExplorer", pytest.param("InitExplorer", marks=pytest.mark.slow),
                                  pytest.param("CorrelationExplorer", marks=pytest.mark.slow)])
def test_explorers_update_in_place(name):
    from sdpa_helpers.widgets import assumptions as WA
    from sdpa_helpers.widgets import attention_maps as WM

    cls = getattr(WA, name, None) or getattr(WM, name)
    e = cls()
    first = e.image.value
    view = e.widget
    values = e.sweep_values()
    e.controls[e.main].value = values[-1] if e.controls[e.main].value != values[-1] else values[0]
    assert e.image.value != first and e.widget is view and e.readout.value
    assert e.widget.png == e.image.value, "the frame is sent to the browser"
    for c in e.controls.values():
        assert c.description


# -- holding against a learner's settings and odd values ---------------------------------------------
# The base :class:`sdpa_helpers.widgets.Explorer` computes under numpy error settings it controls,
# checks every control value it is given (at construction and afterwards) with an error naming
# the control and what it allows, closes what it built when a construction fails, and refuses
# clearly once closed.

def _n_widgets() -> int:
    return len(widget_module._instances)


@pytest.mark.parametrize("cls", [pytest.param(JacobianExplorer, marks=pytest.mark.slow), ThreeEffectsExplorer])
def test_explorers_build_and_update_under_seterr_raise(cls):
    old = np.seterr(all="raise")
    try:
        explorer = cls()
        control = explorer.controls[explorer.main]
        for value in explorer.sweep_values()[:: max(1, len(explorer.sweep_values()) // 4)]:
            control.value = value
        assert np.geterr()["under"] == "raise"  # the learner's setting is untouched
        explorer.close()
    finally:
        np.seterr(**old)


def test_a_d_k_outside_the_slider_names_d_k_and_the_allowed_values():
    with pytest.raises(ValueError) as info:
        AttentionMapExplorer(d_k=3)
    message = str(info.value)
    assert "d_k" in message and "4096" in message and "Invalid selection" not in message


@pytest.mark.parametrize("value", [True, np.True_, 64.0 + 0j, "64"])
def test_a_d_k_of_the_wrong_type_is_refused(value):
    with pytest.raises((TypeError, ValueError), match="d_k"):
        AttentionMapExplorer(d_k=value)


def test_a_failed_construction_leaks_no_widgets():
    AttentionMapExplorer(d_k=64).close()  # warm-up: anything cached at first use
    before = _n_widgets()
    for _ in range(3):
        with pytest.raises(ValueError):
            AttentionMapExplorer(d_k=3)
        with pytest.raises(ValueError):
            AttentionMapExplorer(length=1000)
    assert _n_widgets() == before


def test_a_non_finite_slider_value_is_refused_and_undone():
    explorer = CorrelationExplorer()
    try:
        with pytest.raises(ValueError, match="rho"):
            explorer.controls["rho"].value = math.nan
        assert explorer.controls["rho"].value == 0.5
        explorer.controls["rho"].value = math.inf  # ipywidgets' own validation clips it to the range
        assert explorer.values["rho"] == 1.0
        explorer.controls["rho"].value = 0.5
        assert explorer.controls["rho"].value == 0.5
        explorer.controls["rho"].value = 0.25  # still works
        assert explorer.values["rho"] == 0.25
    finally:
        explorer.close()


def test_a_dropdown_set_to_none_is_refused_and_undone():
    from sdpa_helpers.widgets.assumptions import InitExplorer

    explorer = InitExplorer()
    try:
        before = explorer.controls["init"].value
        with pytest.raises(ValueError) as info:
            explorer.controls["init"].value = None
        assert "init" in str(info.value) and "one of" in str(info.value)
        assert explorer.controls["init"].value == before
    finally:
        explorer.close()


def test_a_closed_explorer_refuses_render_and_paused_clearly():
    explorer = AttentionMapExplorer()
    explorer.close()
    for call in (explorer.render, lambda: explorer.paused().__enter__(), explorer.fallback_png):
        with pytest.raises(ValueError, match="closed"):
            call()
    explorer.update()  # documented: does nothing once closed


# -- one front end (issue 39): the notebook's widget and the static site ship the same explorer.js -----

def test_the_notebook_and_the_site_ship_one_explorer_front_end(tmp_path, monkeypatch):
    """The widget's module is the package's explorer.js plus one export line, and the site's build
    copies that same file (not a second front end of its own)."""
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    front = root / "sdpa_helpers" / "widgets" / "explorer.js"
    assert widgets.FRONT_END == front
    esm = widgets.ExplorerView._esm
    esm = esm if isinstance(esm, str) else str(esm)
    assert esm == front.read_text(encoding="utf-8") + widgets.ESM_EXPORT, "the widget loads explorer.js as it is"
    assert not (root / "authoring" / "site" / "static" / "explorer.js").exists(), \
        "a second explorer.js in the site's static files: the site must copy the package's"
    sys.path.insert(0, str(root / "authoring" / "site"))
    sys.path.insert(0, str(root / "authoring"))
    try:
        spec = importlib.util.spec_from_file_location("_site_build_for_test", root / "authoring" / "site" / "build.py")
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
    except ImportError as exc:  # the site's own environment (mistune, Jinja2) is not installed here
        pytest.skip(f"the site's build does not import here: {exc}")
    finally:
        sys.path.remove(str(root / "authoring" / "site"))
        sys.path.remove(str(root / "authoring"))
    monkeypatch.setattr(build, "MATHJAX", tmp_path / "no-mathjax")
    with pytest.raises(SystemExit):  # stops at MathJax, after the scripts are copied
        build.copy_static(tmp_path)
    assert (tmp_path / "_static" / "explorer.js").read_bytes() == front.read_bytes()


def test_the_browser_gets_frames_it_asks_for_and_moves_update_the_kernel(explorer, monkeypatch):
    """The kernel's side of the protocol: ``want`` → a ``frame`` (PNG bytes as a binary buffer, and the
    readout) equal to what a move there shows; ``move`` sets the controls; nonsense is refused (ValueError)
    and answered ``failed``."""
    sent = []
    monkeypatch.setattr(explorer.widget, "send", lambda content, buffers=None: sent.append((content, buffers)))
    specs = explorer._specs
    at = [s["initial"] for s in specs]
    k = [s["name"] for s in specs].index(explorer.main)
    other = list(at)
    other[k] = 0 if at[k] != 0 else len(specs[k]["_py"]) - 1
    key = "-".join(map(str, other))
    before = explorer.values
    explorer._answer({"type": "want", "key": key, "indices": other})
    (content, buffers), = sent
    assert content == {"type": "frame", "key": key, "readout": content["readout"], "ms": content["ms"]}
    assert buffers[0][:4] == b"\x89PNG" and 0 < content["ms"] == round(1000 * explorer.last_update_seconds, 1)
    assert explorer.values == before, "a prefetched frame leaves the controls where the learner put them"
    explorer._answer({"type": "move", "indices": other})
    assert explorer.controls[explorer.main].value == specs[k]["_py"][other[k]]
    assert explorer.image.value == buffers[0] and explorer.readout.value == content["readout"]
    with pytest.raises(ValueError, match="indices"):
        explorer._answer({"type": "want", "key": "x", "indices": [999] * len(specs)})
    assert sent[-1] == ({"type": "failed", "key": "x", "error": "ValueError"}, None), \
        "the browser is told, never left waiting"


def test_the_front_end_is_told_of_every_control_and_the_first_frame(explorer):
    explorer = type(explorer)()  # as displayed (the shared one was moved by the browser's messages above)
    view = explorer.widget
    names = [c["name"] for c in view.spec["controls"]]
    assert names == list(explorer.controls)
    assert view.png == explorer.image.value and view.readout == explorer.readout.value
    assert view.key == "-".join(map(str, view.state))
    for c in view.spec["controls"]:
        assert len(c["labels"]) == len(c["values"]) and 0 <= c["grid"][0] < c["grid"][1] <= len(c["values"])
        assert c["grid"][1] - c["grid"][0] <= max(widgets.SEED_DRAWS, len(c["values"]) if c["name"] != "seed" else 0)
    explorer.close()
