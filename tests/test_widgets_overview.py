"""sdpa_helpers.widgets.overview (notebook 00's explorer), headless; every explorer's common behaviour is
tested in tests/test_widgets.py."""

import sys

import pytest

from sdpa_helpers import overview


@pytest.fixture(scope="module")
def explorer():
    from sdpa_helpers.widgets.overview import ThreeEffectsExplorer

    return ThreeEffectsExplorer()


def test_explorer_precomputes_every_slider_value(explorer, monkeypatch):
    values = explorer.sweep_values()
    assert list(values) == list(overview.D_KS)
    assert set(explorer.density_u) == set(values) == set(explorer.density_s)

    def no_math(*args, **kwargs):
        raise AssertionError("a slider move must not draw or compute new samples")

    monkeypatch.setattr(overview, "effects", no_math)
    monkeypatch.setattr(sys.modules["sdpa_helpers.widgets.overview"], "histogram_density", no_math)
    monkeypatch.setattr(sys.modules["sdpa_helpers.plots.overview"], "histogram_density", no_math)
    fig, image = explorer.fig, explorer.image
    for d_k in (1, 4096, 64):
        before = explorer.renders
        explorer.controls["d_k"].value = d_k
        assert explorer.renders == before + 1
    assert explorer.fig is fig and explorer.image is image  # no new figure per update


def test_explorer_axes_are_fixed_and_never_clip(explorer):
    ax_u, ax_s = explorer.panels.axes[:2]
    assert explorer._background_key(d_k=1) is None  # one background for every d_k: limits never move
    assert ax_u.get_xlim() == pytest.approx((-256.0, 256.0))  # room for d_k = 4096 at every d_k
    assert ax_s.get_ylim()[1] > 1.0  # both histograms are drawn with the tallest bar = 1


def test_explorer_readout_says_what_the_panels_show(explorer):
    explorer.controls["d_k"].value = 1024
    text = explorer.readout.value
    assert "d_k = 1024" in text and "0.96" in text  # the mean largest weight of the notebook's figure
    explorer.controls["d_k"].value = 64
