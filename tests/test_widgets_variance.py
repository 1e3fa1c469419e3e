"""sdpa_helpers.widgets.variance (notebook 02's explorer), headless, against independent draws; every
explorer's common behaviour is tested in tests/test_widgets.py."""

import math

import numpy as np
import pytest

from conftest import labelled
from sdpa_helpers import variance as law
from sdpa_helpers.sampling import DISTRIBUTIONS
from sdpa_helpers.theory import normal_pdf
from sdpa_helpers.variance import sample_dot_products_fast
from sdpa_helpers.widgets import variance as wv


def test_variance_explorer_defaults_and_controls():
    e = wv.VarianceExplorer()
    assert e.main == "d_k" and e.values == {"d_k": 16, "components": "normal"}
    assert list(e.controls["components"].options) == list(DISTRIBUTIONS)
    assert e.controls["components"].description == "components"
    assert labelled(e.ax)


def test_variance_explorer_shows_the_samples_and_their_moments():
    e = wv.VarianceExplorer(d_k=64, components="laplace")
    s = sample_dot_products_fast(64, e.n_samples, "laplace", rng=e.seed)  # an independent draw, same seed
    values, edges, _ = e.panel.bars.get_data()
    counts, _ = np.histogram(s, law.histogram_edges(64, "laplace"))
    # the axes are in units of sqrt(d_k) = 8: the bars are the density of q·k / 8
    assert np.allclose(values / 8 * np.diff(edges * 8) * s.size, counts)
    x, y = e.panel.curve.get_data()
    assert np.allclose(y, normal_pdf(x)) and x.min() == -4.5 and x.max() == 4.5
    assert tuple(map(float, e.ax.get_xlim())) == (-4.5, 4.5)
    assert f"variance {s.var(ddof=1):.2f} (theory 64)" in e.readout.value and "laplace components" in e.readout.value
    assert f"{s.mean():.3f} ± {s.std(ddof=1) / math.sqrt(s.size):.3f}" in e.readout.value


def test_variance_explorer_axes_are_labelled_in_units_of_sqrt_d_k():
    e = wv.VarianceExplorer(d_k=64)
    labels = [t.get_text() for t in e.ax.get_xticklabels()]
    assert labels == ["\u22124√d_k", "\u22122√d_k", "0", "2√d_k", "4√d_k"]
    assert [float(t) for t in e.ax.get_xticks()] == [-4, -2, 0, 2, 4]
    y = dict(zip((round(float(v), 1) for v in e.ax.get_yticks()), (t.get_text() for t in e.ax.get_yticklabels())))
    assert y[0.4] == "0.4/√d_k"  # the N(0, d_k) peak, 0.399 / sqrt(d_k), sits at 0.399 on the axis
    assert "±36" in e.readout.value  # the x axis spans ±4.5 sqrt(64) in real units


def test_variance_explorer_changes_with_the_distribution():
    e = wv.VarianceExplorer(d_k=4)
    before = e.image.value
    e.controls["components"].value = "rademacher"
    assert e.image.value != before and "rademacher components" in e.readout.value


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_variance_explorer_bars_fit_under_the_y_limit(dist):
    e = wv.VarianceExplorer(components=dist)
    for d_k in (1, 2, 4, 8, 16, 64):
        e.controls["d_k"].value = d_k
        tallest = e.panel.stem_tops.get_data()[1].max() if dist == "rademacher" else e.panel.bars.get_data()[0].max()
        assert tallest <= e.ax.get_ylim()[1], f"{dist}, d_k={d_k}: the tallest bar is cut off"


@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_variance_explorer_draws_rademacher_as_stems(d_k):
    e = wv.VarianceExplorer(d_k=d_k, components="rademacher")
    s = sample_dot_products_fast(d_k, e.n_samples, "rademacher", rng=e.seed)  # the same draw, independently
    assert not e.panel.bars.get_visible()
    x, y = e.panel.stem_tops.get_data()
    sd = math.sqrt(d_k)
    values = np.asarray(x) * sd  # back to real units
    assert np.allclose(values, np.round(values)) and set(np.round(values).astype(int) % 2) == {d_k % 2}
    for v, h in zip(values, y):  # height in standardised units: probability / 2 * sqrt(d_k)
        assert np.isclose(h, np.mean(s == round(v)) / 2 * sd)
    assert len(e.panel.stems.get_segments()) == len(values)
    e.controls["components"].value = "normal"
    assert e.panel.bars.get_visible() and not e.panel.stems.get_visible()


def test_variance_explorer_first_visits_draw_o_n_numbers(monkeypatch):
    # the mechanism behind fast first visits: no per-visit draw of n * d_k numbers
    calls = []
    import sdpa_helpers.sampling as sampling_module
    real = sampling_module.sample_dot_products

    def spy(d_k, n_samples, *args, **kwargs):
        calls.append(d_k * n_samples)
        return real(d_k, n_samples, *args, **kwargs)

    monkeypatch.setattr("sdpa_helpers.variance.sample_dot_products", spy)
    wv._frame.cache_clear()
    e = wv.VarianceExplorer(d_k=4096)
    for dist in DISTRIBUTIONS:
        e.controls["components"].value = dist
        e.controls["d_k"].value = 4096
        e.controls["d_k"].value = 1024
    assert all(c <= 128 * e.n_samples for c in calls), calls
