"""sdpa_helpers.plots.attention_maps (notebook 07's figures), headless."""

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from conftest import labelled
from sdpa_helpers.attention import causal_mask, softmax
from sdpa_helpers.plots import attention_maps as MP


def test_attention_map_plots_are_labelled():
    w = softmax(np.random.default_rng(0).standard_normal((6, 6)))
    ax = MP.weights_heatmap(w)
    assert isinstance(ax, Axes) and labelled(ax) and ax.images[-1].get_clim() == (0.0, 1.0)
    assert ax.images[-1].get_cmap().name == "cividis"
    fig = MP.weights_small_multiples({4: (w, w), 64: (w, w), 1024: (w, w)})
    assert isinstance(fig, Figure) and all(labelled(a) for a in fig.axes[:6])
    # titles name the scale and d_k only: one draw's mean largest weight is noise, not a trend
    titles = [a.get_title() for a in fig.axes[:6]]
    assert all("$d_k$ = " in t and "mean" not in t for t in titles), titles
    fig = MP.mask_and_weights(causal_mask(6), w * causal_mask(6))
    assert all(labelled(a) for a in fig.axes[:2])
    ax = MP.head_scale_histograms(np.random.default_rng(1).normal(0, 8, 500), 64, 512)
    assert labelled(ax) and len(ax.get_legend().get_texts()) == 3



def test_masked_cells_are_white_in_every_weights_heatmap():
    """07 §3 and §5 draw a masked-out cell the same way: white, never the colour of a weight 0."""
    import matplotlib.colors as mcolors
    import pytest

    mask = causal_mask(5)
    w = softmax(np.where(mask, np.random.default_rng(2).standard_normal((5, 5)), -np.inf))
    fig = MP.mask_and_weights(mask, w)
    image = fig.axes[1].images[-1]
    assert np.array_equal(np.ma.getmaskarray(image.get_array()), ~mask)
    assert mcolors.to_rgba(image.get_cmap().get_bad()) == mcolors.to_rgba("white")
    assert mcolors.to_rgba(image.get_cmap()(0.0)) != mcolors.to_rgba("white")
    with pytest.raises(ValueError, match="mask"):
        MP.weights_heatmap(w, mask=mask[:4])
    fig = MP.weights_small_multiples({4: (w, w), 64: (w, w)}, mask=mask)  # 07 §5: the key to white is on the figure
    assert "white: masked out" in fig.get_suptitle()
    assert all(np.array_equal(np.ma.getmaskarray(a.images[-1].get_array()), ~mask) for a in fig.axes[:4])
