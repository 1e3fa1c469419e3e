"""sdpa_helpers.plots.saturation (notebook 05's figures), headless. Panels of a small-multiples row may
carry a title instead of a y label (``labelled(..., title_for_y=True)``)."""

import numpy as np
import pytest

from conftest import labelled
from sdpa_helpers import saturation as S


def test_saturation_figures():
    from sdpa_helpers.plots import saturation as P

    ax = P.weight_bars([0.2, 0.8], "sqrt")
    assert labelled(ax, title_for_y=True) and tuple(map(float, ax.get_ylim())) == (0.0, 1.0)
    fig = P.saturation_small_multiples({1: ([0.5, 0.5], [0.5, 0.5]), 64: ([1.0, 0.0], [0.6, 0.4])})
    assert len(fig.axes) == 4 and all(ax.get_xlabel() for ax in fig.axes)
    u = S.saturation_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.saturation_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    law = (np.array([1.0, 2.0, 4.0]), S.entropy_closed_form(4, [1.0, 2.0, 4.0]))
    fig = P.saturation_curves_figure(u, s, 4, onset=2.5, entropy_law=law)
    assert len(fig.axes) == 3 and all(labelled(ax, title_for_y=True) for ax in fig.axes)
    assert fig.axes[2].get_yscale() == "log"
    onset_lines = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() == "-."]
    assert len(onset_lines) == 3 and all(np.allclose(ln.get_xdata(), 2.5) for ln in onset_lines)
    keys = fig.axes[0].get_legend().legend_handles  # each entry shows its line's style
    assert all(k.get_visible() for k in keys) and "-." in [k.get_linestyle() for k in keys]
    h = np.array([[2.5, 2.2, 1.5], [2.6, 2.3, 1.6]])  # (seeds, variances)
    fig = P.law_check_figure([0.5, 1.0, 2.0], [h, h + 4.1], [16, 1024])
    assert len(fig.axes) == 2 and all(labelled(ax) for ax in fig.axes)
    assert np.allclose(fig.axes[0].get_lines()[0].get_ydata(), np.median(h, axis=0))  # the median over seeds
    t = [0.125, 1, 8]
    curve_t = 2.0 ** np.arange(-3, 4)
    fig = P.temperature_small_multiples(t, S.temperature_curves([0.1, -0.2, 0.3], t)[0], curve_t,
                                        S.temperature_curves([0.1, -0.2, 0.3], curve_t)[1])
    assert len(fig.axes) == 5 and all(labelled(ax, title_for_y=True) for ax in fig.axes)
    with pytest.raises(ValueError, match="weights"):
        P.weight_bars([[0.5, 0.5]], "unscaled")
    with pytest.raises(ValueError, match="scale"):
        P.weight_bars([0.5, 0.5], "scaled")
