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


def test_variance_explorer_shows_the_cached_samples_and_their_moments():
    e = wv.VarianceExplorer(d_k=64, components="laplace")
    s = sample_dot_products_fast(64, e.n_samples, "laplace", rng=e.seed)  # an independent draw, same seed
    values, edges, _ = e.bars.get_data()
    counts, _ = np.histogram(s, law.histogram_edges(64, "laplace"))
    assert np.allclose(values * np.diff(edges) * s.size, counts)
    # the axes are in standardised units: the N(0, d_k) density of q·k is N(0, 1) in z = q·k / 8
    x, y = e.curve.get_data()
    assert np.allclose(y, normal_pdf(x)) and x.min() == -4.5 and x.max() == 4.5
    assert tuple(map(float, e.ax.get_xlim())) == (-4.5, 4.5)
    assert f"variance {s.var(ddof=1):.2f}" in e.title.get_text() and "(theory 64)" in e.title.get_text()
    assert f"{s.mean():.3f} ± {s.std(ddof=1) / math.sqrt(s.size):.3f}" in e.readout.value


def test_variance_explorer_tick_labels_are_in_real_units():
    e = wv.VarianceExplorer(d_k=64)
    labels = e.x_ticks.texts()
    values = [float(t.replace("\u2212", "-")) for t in labels]
    assert "0" in labels and all(abs(v) <= 36 for v in values) and len(values) >= 5
    positions = [t.get_position()[0] for t in e.x_ticks.labels if t.get_visible()]
    assert np.allclose(np.array(positions) * 8, values)  # label = position * sqrt(d_k)
    y_values = [float(t) for t in e.y_ticks.texts()]
    y_positions = [t.get_position()[1] for t in e.y_ticks.labels if t.get_visible()]
    assert np.allclose(np.array(y_positions) / 8, y_values)  # density of q·k = density of z / sqrt(d_k)
    e.controls["d_k"].value = 4096
    assert max(float(t.replace("\u2212", "-")) for t in e.x_ticks.texts()) >= 200


def test_variance_explorer_changes_with_the_distribution():
    e = wv.VarianceExplorer(d_k=4)
    before = e.image.value
    e.controls["components"].value = "rademacher"
    assert e.image.value != before and "rademacher components" in e.title.get_text()


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_variance_explorer_bars_fit_under_the_y_limit(dist):
    for d_k in (1, 2, 4, 8, 16, 64):
        _, density, level, _, (_, stem_y) = wv._view(d_k, dist, wv.VarianceExplorer.n_samples, wv.VarianceExplorer.seed)
        tallest = stem_y.max() if dist == "rademacher" else density.max() * math.sqrt(d_k)
        assert tallest <= level, f"{dist}, d_k={d_k}: the tallest bar is cut off"


def test_variance_explorer_cache_is_read_only():
    s = wv._samples(4, "normal", 100, 0)
    with pytest.raises(ValueError):
        s[0] = 1.0


@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_variance_explorer_draws_rademacher_as_stems(d_k):
    e = wv.VarianceExplorer(d_k=d_k, components="rademacher")
    s = sample_dot_products_fast(d_k, e.n_samples, "rademacher", rng=e.seed)  # the same draw, independently
    assert not e.bars.get_visible()
    x, y = e.stem_tops.get_data()
    sd = math.sqrt(d_k)
    values = np.asarray(x) * sd  # back to real units
    assert np.allclose(values, np.round(values)) and set(np.round(values).astype(int) % 2) == {d_k % 2}
    for v, h in zip(values, y):  # height in standardised units: probability / 2 * sqrt(d_k)
        assert np.isclose(h, np.mean(s == round(v)) / 2 * sd)
    assert len(e.stems.get_segments()) == len(values)
    e.controls["components"].value = "normal"
    assert e.bars.get_visible() and len(e.stems.get_segments()) == 0


def test_variance_explorer_first_visits_draw_o_n_numbers(monkeypatch):
    # the mechanism behind fast first visits: no per-visit draw of n * d_k numbers
    calls = []
    import sdpa_helpers.sampling as sampling_module
    real = sampling_module.sample_dot_products

    def spy(d_k, n_samples, *args, **kwargs):
        calls.append(d_k * n_samples)
        return real(d_k, n_samples, *args, **kwargs)

    monkeypatch.setattr("sdpa_helpers.variance.sample_dot_products", spy)
    wv._samples.cache_clear()
    wv._view.cache_clear()
    e = wv.VarianceExplorer(d_k=4096)
    for dist in DISTRIBUTIONS:
        e.controls["components"].value = dist
        e.controls["d_k"].value = 4096
        e.controls["d_k"].value = 1024
    assert all(c <= 128 * e.n_samples for c in calls), calls
