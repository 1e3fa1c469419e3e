"""sdpa_helpers.plots.variance (notebook 02's figures), headless, against independent references."""

import numpy as np
import pytest

from conftest import labelled
from sdpa_helpers.plots import variance as vp
from sdpa_helpers.sampling import DISTRIBUTIONS, sample_dot_products
from sdpa_helpers.theory import normal_pdf


def texts(ax):
    return [t.get_text() for t in ax.texts]


def visible(artists):
    """The artists drawn (a HistogramPanel keeps its bars and its stems, one of them hidden)."""
    return [a for a in artists if a.get_visible()]


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace"])
def test_dot_product_histogram(dist):
    s = sample_dot_products(16, 5000, dist=dist, rng=3)
    ax = vp.dot_product_histogram(s, 16, dist)
    assert labelled(ax) and ax.get_title()
    assert ax.get_xlim() == (-18.0, 18.0)
    (patch,) = visible(ax.patches)
    values, edges, _ = patch.get_data()
    assert np.isclose((values * np.diff(edges)).sum(), np.mean((s >= edges[0]) & (s < edges[-1])))
    (curve,) = visible(ax.get_lines())
    assert np.allclose(curve.get_ydata(), normal_pdf(curve.get_xdata(), 0.0, 16.0))


@pytest.mark.parametrize("d_k", [1, 4, 16])
def test_rademacher_is_drawn_as_stems_at_its_values(d_k):
    s = sample_dot_products(d_k, 4000, dist="rademacher", rng=3)
    ax = vp.dot_product_histogram(s, d_k, "rademacher")
    assert not visible(ax.patches)  # no bars: a discrete distribution
    markers = [line for line in visible(ax.get_lines()) if line.get_marker() == "o"][0]
    x, y = markers.get_data()
    lattice = np.arange(-d_k, d_k + 1, 2)
    assert set(x.tolist()) <= set(lattice.tolist())
    for v, h in zip(x, y):  # height = observed probability / 2 (values are 2 apart)
        assert np.isclose(h, np.mean(s == v) / 2)
    (stems,) = visible(ax.collections)
    assert len(stems.get_segments()) == len(x)


def test_histogram_grid_labels_the_outer_axes():
    samples = {dist: {d: sample_dot_products(d, 500, dist=dist, rng=4) for d in (1, 16)} for dist in DISTRIBUTIONS}
    fig = vp.histogram_grid(samples)
    axes = np.array(fig.axes).reshape(len(DISTRIBUTIONS), 2)
    assert [ax.get_title() for ax in axes[0]] == ["$d_k$ = 1", "$d_k$ = 16"]
    assert all(ax.get_xlabel() for ax in axes[-1]) and all(ax.get_ylabel() for ax in axes[:, 0])
    assert [ax.get_ylabel().split("\n")[0] for ax in axes[:, 0]] == list(DISTRIBUTIONS)


def test_covariance_heatmap_prints_the_matrix():
    C = np.array([[1.0, -0.004], [-0.004, 0.98]])
    ax = vp.covariance_heatmap(C)
    assert texts(ax) == ["1.00", "0.00", "0.00", "0.98"] and labelled(ax)


def test_kurtosis_decay_draws_absolute_values_on_log_axes():
    ax = vp.kurtosis_decay([1, 4], {"rademacher": [-2.0, np.nan]}, {"rademacher": [0.01, 0.01]},
                           {"rademacher": [-2.0, -0.5]})
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and labelled(ax)
    theory_line = ax.get_lines()[0]
    assert np.allclose(theory_line.get_ydata(), [2.0, 0.5])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["rademacher (negative)"]


@pytest.mark.parametrize("call,err,match", [
    (lambda: vp.covariance_heatmap(np.ones((2, 3))), ValueError, "C must be a square"),
    (lambda: vp.histogram_grid({"normal": {1: np.ones(3)}, "uniform": {2: np.ones(3)}}), ValueError, "same d_k"),
    (lambda: vp.histogram_grid([]), TypeError, "samples"),
    (lambda: vp.kurtosis_decay([1, 4], {"normal": [1.0]}, {"normal": [1.0]}, {"normal": [1.0]}),
     ValueError, "normal"),
])
def test_variance_plots_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()

