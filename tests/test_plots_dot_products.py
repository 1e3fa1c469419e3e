"""sdpa_helpers.plots.dot_products (notebook 01's figures), headless, against independent references."""

import math

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from conftest import labelled
from sdpa_helpers.plots import dot_products as dp


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_score_table_cells_are_the_naive_double_loop():
    rng = np.random.default_rng(0)
    Q = rng.integers(-3, 4, (3, 4)).astype(float)
    K = rng.integers(-3, 4, (5, 4)).astype(float)
    naive = [[sum(Q[i, t] * K[j, t] for t in range(4)) for j in range(5)] for i in range(3)]
    ax = dp.score_table(Q, K, decimals=0)
    assert isinstance(ax, Axes) and labelled(ax) and ax.get_title()
    assert texts(ax) == [f"{v:.0f}" for row in naive for v in row]  # row by row, as imshow shows them
    assert "(3, 4) @ (4, 5)" in ax.get_title()


def test_score_table_bad_input():
    with pytest.raises(ValueError, match="Q has d_k=2 but K has d_k=3"):
        dp.score_table(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Q"):
        dp.score_table(np.ones(3), np.ones((2, 3)))
    with pytest.raises(TypeError, match="K"):
        dp.score_table(np.ones((2, 3)), [["a", "b", "c"]])


def test_frobenius_nesting_panels_hold_a_b_hadamard_rowwise_and_total():
    A = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])
    B = np.array([[2.0, 1.0, 4.0], [-1.0, 5.0, 2.0]])
    fig = dp.frobenius_nesting(A, B)
    assert isinstance(fig, Figure) and len(fig.axes) == 6  # five panels and one colourbar
    a, b, had, row, tot, cbar = fig.axes
    assert texts(a) == [f"{v:.1f}" for v in A.ravel()] and texts(b) == [f"{v:.1f}" for v in B.ravel()]
    assert texts(had) == [f"{A[i, j] * B[i, j] + 0.0:.1f}" for i in range(2) for j in range(3)]
    assert texts(row) == [f"{sum(A[i, j] * B[i, j] for j in range(3)):.1f}" for i in range(2)]
    assert texts(tot) == [f"{np.trace(A.T @ B):.1f}"]  # trace(Aᵀ B), computed another way
    # one colour normalisation, symmetric about 0 and wide enough for every value shown
    limits = {tuple(map(float, ax.images[0].get_clim())) for ax in (a, b, had, row, tot)}
    bound = max(np.abs(A).max(), np.abs(B).max(), np.abs(A * B).max(), np.abs((A * B).sum(axis=1)).max(),
                abs(np.trace(A.T @ B)))
    assert limits == {(-bound, bound)}
    assert cbar.get_ylabel()
    assert all(ax.get_xlabel() for ax in (a, b, had, row, tot))
    with pytest.raises(ValueError, match="same shape"):
        dp.frobenius_nesting(A, B.T)


def test_geometric_picture_draws_each_factor_as_a_density():
    rng = np.random.default_rng(3)
    parts = {d: {"norm": 1 + rng.standard_normal(4000) / np.sqrt(2 * d), "cos": rng.standard_normal(4000),
                 "dot": rng.standard_normal(4000)} for d in (4, 64)}
    fig = dp.geometric_picture(parts)
    assert len(fig.axes) == 3 and all(labelled(ax) for ax in fig.axes)
    for ax, key in zip(fig.axes, ("norm", "cos", "dot")):
        for patch, d in zip(ax.patches, (4, 64)):
            values, edges, _ = patch.get_data()
            inside = np.mean((parts[d][key] >= edges[0]) & (parts[d][key] <= edges[-1]))
            assert np.isclose((values * np.diff(edges)).sum(), inside)  # a density: integrates to the share inside
    assert len(fig.axes[2].get_lines()) == 1  # the N(0, 1) reference
    with pytest.raises(ValueError, match="keys"):
        dp.geometric_picture({4: {"norm": [1.0]}})
    with pytest.raises(TypeError, match="ratios_by_d_k"):
        dp.geometric_picture({})


def test_annotations_never_print_negative_zero():
    fig = dp.frobenius_nesting([[-0.01, 1.0]], [[1.0, 0.0]], decimals=1)
    assert "-0.0" not in texts(fig.axes[0])


def test_spread_growth_plots_the_sample_standard_deviations():
    rng = np.random.default_rng(1)
    samples = {d: rng.standard_normal(500) * math.sqrt(d) for d in (1, 4, 64)}
    fig = dp.spread_growth(samples)
    assert isinstance(fig, Figure) and len(fig.axes) == 2 and all(labelled(ax) for ax in fig.axes)
    ax_std = fig.axes[1]
    points = [line for line in ax_std.get_lines() if line.get_label() == "sample std"][0]
    assert np.allclose(points.get_xdata(), [1, 4, 64])
    assert np.allclose(points.get_ydata(), [np.std(samples[d], ddof=1) for d in (1, 4, 64)])
    assert ax_std.get_xscale() == "log" and ax_std.get_yscale() == "log"


def test_spread_growth_bad_input():
    with pytest.raises(TypeError, match="samples_by_d_k"):
        dp.spread_growth({4: np.ones(3)})
    with pytest.raises(ValueError, match="d_k"):
        dp.spread_growth({0: np.ones(3), 4: np.ones(3)})
