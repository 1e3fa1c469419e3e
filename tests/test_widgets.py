"""Every explorer in the package, headless: builds, updates in place, never grows."""

import ipywidgets as W
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (only to check that explorers make no pyplot figures)

from sdpa_helpers import widgets  # noqa: E402

EXPLORERS = widgets.all_explorers()


def test_explorers_are_found():
    names = {cls.__name__ for cls in EXPLORERS}
    assert "ThreeEffectsExplorer" in names


def test_d_k_slider_is_log_scale():
    s = widgets.d_k_slider()
    assert list(s.options) == [2**i for i in range(13)]
    with pytest.raises(ValueError, match="value"):
        widgets.d_k_slider(3)


@pytest.fixture(params=EXPLORERS, ids=lambda c: c.__name__, scope="module")
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
    children = explorer.widget.children
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
    assert explorer.widget.children == children, "the output does not grow"
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


def test_unknown_control_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown control"):
        EXPLORERS[0](no_such_control=1)


def test_explorer_displays_as_a_widget(explorer):
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_update_time_is_recorded(explorer):
    explorer.update()
    assert np.isfinite(explorer.last_update_seconds) and explorer.last_update_seconds > 0
