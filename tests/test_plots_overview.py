"""sdpa_helpers.plots.overview (notebook 00's figures), headless: what each figure draws."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from sdpa_helpers import overview, plots
from sdpa_helpers.plots import overview as overview_plots
from sdpa_helpers.sampling import histogram_density


def test_random_walks_figure():
    S = overview.dot_product_walks(32, 10, rng=0)
    ax = overview_plots.random_walks(S, n_shown=3)
    walk_lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 32 and line.get_linestyle() == "-"]
    assert len(walk_lines) == 3
    assert np.allclose(walk_lines[0].get_ydata(), S[0])
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    with pytest.raises(ValueError, match="walks"):
        overview_plots.random_walks(np.zeros(5))


@pytest.fixture(scope="module")
def small_figure_data():
    d_ks = (1, 16, 256)
    rows = [tuple(overview.effects(d, s, n_queries=300, rng=0) for s in overview.COMPARED) for d in d_ks]
    bands = {s: overview.jacobian_norm_bands(overview.effects_by_d_k(d_ks, s, n_queries=300)) for s in
             overview.COMPARED}
    return d_ks, rows, bands


def test_static_figure_shares_the_unscaled_x_axis_and_draws_the_jacobian_once(small_figure_data):
    d_ks, rows, bands = small_figure_data
    fig = overview_plots.three_effects_figure(rows, d_ks, bands, overview.N_KEYS)
    assert isinstance(fig, Figure) and len(fig.axes) == 3 * len(rows) + 1  # one Jacobian panel for all rows
    grid = np.array(fig.axes[: 3 * len(rows)]).reshape(len(rows), 3)
    ax_j = fig.axes[-1]
    assert len({ax.get_xlim() for ax in grid[:, 0]}) == 1  # one x axis down the unscaled column
    assert grid[0, 0].get_xlim() == pytest.approx((-64.0, 64.0))  # +-4 sqrt(largest d_k)
    for ax in (*grid[:, 0], *grid[:, 1]):  # both histogram columns: tallest bar = 1, never clipped
        (patch,) = [p for p in ax.patches]
        assert patch.get_data()[0].max() == pytest.approx(1.0)
        assert ax.get_ylim()[1] > 1.0 and ax.get_ylabel() == overview_plots.HIST_YLABEL
    for ax in fig.axes:
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip()
    curves = [line for line in ax_j.get_lines() if len(line.get_xdata()) == len(d_ks)]
    assert len(curves) == 2  # the median curve of each scaling, drawn once
    markers = [line for line in ax_j.get_lines() if len(line.get_xdata()) == 1]
    assert len(markers) == 2 * len(rows)  # one marker per scaling and row
    assert ax_j.get_legend() is not None and ax_j.get_ylim()[0] == overview_plots.JACOBIAN_YMIN


def test_jacobian_axis_holds_every_median_with_16_keys():
    """The log axis is cut at JACOBIAN_YMIN: every median of the explorer's grid lies above it."""
    bands = overview.jacobian_norm_bands(overview.effects_by_d_k(overview.D_KS, "unscaled", n_queries=500))
    assert bands[1].min() > overview_plots.JACOBIAN_YMIN


def test_panels_show_the_data(small_figure_data):
    d_ks, rows, bands = small_figure_data
    fig, axes = plots.new_figure(1, 4)
    panels = overview_plots.EffectsPanels(axes, d_ks, bands, overview.N_KEYS, d_max=256)
    u, s = rows[1]
    panels.show(u, s)
    heights_u = panels.stairs_u.get_data()[0]
    expected = histogram_density(u.logits, overview.spread_edges(256))
    assert np.allclose(heights_u, expected / expected.max())  # tallest bar = 1
    expected_s = histogram_density(s.logits, overview.SCALED_EDGES)
    assert np.allclose(panels.stairs_s.get_data()[0], expected_s / expected_s.max())  # the same normalisation
    assert np.allclose(panels.line_wu.get_ydata(), u.sorted_weights.mean(axis=0))
    assert panels.markers["unscaled"].get_ydata()[0] == pytest.approx(bands["unscaled"][1, 1])
    assert f"{float(u.max_weight.mean):.2f}" in panels.texts["unscaled"].get_text()
    with pytest.raises(TypeError, match="Effects"):
        panels.show(u, None)
