"""sdpa_helpers.plots.gradients (notebook 06's figures), headless. Panels of a small-multiples row may
carry a title instead of a y label (``labelled(..., title_for_y=True)``)."""

import numpy as np
import pytest

from conftest import labelled
from sdpa_helpers import gradients as S
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.sampling import make_rng


def test_gradient_figures():
    from sdpa_helpers.plots import gradients as P

    panels = S.jacobian_panels([1, 16], [[0.0, 0.0], [0.0, 40.0]])  # d_k = 16 unscaled: nearly one-hot
    fig = P.jacobian_small_multiples(panels)
    assert sum(labelled(a, title_for_y=True) for a in fig.axes) >= 4
    assert np.allclose(fig.axes[0].images[0].get_array(), softmax_jacobian([0.5, 0.5]))
    assert tuple(map(float, fig.axes[0].images[0].get_clim())) == (-0.25, 0.25)
    assert fig.axes[0].images[0].get_cmap().name == "cividis"
    with pytest.raises(ValueError, match="panels"):
        P.jacobian_small_multiples(panels._replace(frobenius=panels.frobenius[:1]))
    with pytest.raises(TypeError, match="panels"):
        P.jacobian_small_multiples({1: ([0.5, 0.5], [0.5, 0.5])})
    u = S.gradient_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.gradient_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    fig = P.gradient_norms_figure(u, s)
    assert len(fig.axes) == 3 and all(labelled(a, title_for_y=True) and a.get_yscale() == "log" for a in fig.axes)
    p = softmax(make_rng(0).standard_normal((50, 4)) * 5)
    ax = P.jacobian_bound_figure(S.one_minus_max(p), S.jacobian_frobenius(p))
    assert labelled(ax, title_for_y=True) and ax.get_xscale() == "log"
    assert np.allclose(ax.collections[0].get_offsets(), np.column_stack([S.one_minus_max(p), S.jacobian_frobenius(p)]))
    with pytest.raises(ValueError, match="frobenius"):
        P.jacobian_bound_figure([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match="gap"):
        P.jacobian_bound_figure([np.nan], [0.5])


def test_jacobian_titles_are_accurate_near_one_hot():
    """Titles use jacobian_frobenius: right where diag(p) - p p^T loses J's top diagonal entry."""
    from sdpa_helpers.plots import gradients as P

    p = softmax(np.array([0.0, -60.0, -80.0]))  # 1 - max p ~ 1e-26: p[0] rounds to exactly 1.0
    exact = S.jacobian_frobenius(p)
    assert np.isclose(exact, 2 * p[1], rtol=1e-6, atol=0)  # two keys in play: ||J||_F = 2 m (1 - m)
    assert not np.isclose(np.linalg.norm(softmax_jacobian(p)), exact, rtol=0.05, atol=0)  # the naive norm is off
    panels = S.jacobian_panels([4], [[0.0, -60.0, -80.0]], scales=("unscaled",))
    assert np.allclose(panels.weights[0, 0], p) and panels.frobenius[0, 0] == exact
    fig = P.jacobian_small_multiples(panels)
    assert P.format_norm(exact) in fig.axes[0].get_title()
