"""Figures for notebook 07: attention-weight heatmaps (:class:`WeightsHeatmaps`, shared by the static
figure and the explorer), unscaled vs scaled, a mask next to its weights, and per-head spreads."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.patches import Patch

from . import HEATMAP_CMAP, OKABE_ITO, SCALED, UNSCALED, get_axes, new_figure, style

#: A blocked cell in the picture of the causal mask itself (:func:`mask_and_weights`).
MASKED_GREY = "#d9d9d9"
#: A cell the mask forbids in a weights heatmap: white, a colour the weights' scale (cividis) never takes.
MASKED_CELL = "white"

__all__ = ["WEIGHTS_NORM", "WeightsHeatmaps", "label_heatmap", "add_weights_colorbar", "weights_heatmap",
           "weights_small_multiples",
           "mask_and_weights", "head_scale_histograms"]

#: The fixed colour range of every attention-weight heatmap: 0 (no weight) to 1 (all of it).
WEIGHTS_NORM = Normalize(vmin=0.0, vmax=1.0)


def label_heatmap(ax, n_q: int, n_k: int) -> None:
    """Label a heatmap's axes (keys across, queries down) with at most about 8 ticks each."""
    ax.set(xlabel="key $j$", ylabel="query $i$")
    step = max(1, int(np.ceil(max(n_q, n_k) / 8)))
    ax.set_xticks(range(0, n_k, step))
    ax.set_yticks(range(0, n_q, step))
    ax.grid(False)


def weights_heatmap(weights, ax=None, title: str | None = None, mask=None, **imshow_kw):
    """Heatmap of attention weights (n_q, n_k), colours fixed to 0..1 (cividis); ``imshow_kw`` go to ``imshow``.
    With ``mask`` (n_q, n_k; True = may attend) the masked-out cells are drawn white (``MASKED_CELL``).
    Returns the Axes (the image is ``ax.images[-1]``).
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights must have shape (n_q, n_k), got shape {w.shape}")
    cmap = mpl.colormaps[HEATMAP_CMAP]
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != w.shape:
            raise ValueError(f"mask must have the weights' shape {w.shape}, got shape {mask.shape}")
        w, cmap = np.ma.masked_where(~mask, w), cmap.with_extremes(bad=MASKED_CELL)
    ax = get_axes(ax, figsize=(4.0, 3.6))
    with style():
        ax.imshow(w, cmap=cmap, norm=WEIGHTS_NORM, interpolation="nearest", aspect="equal", **imshow_kw)
        label_heatmap(ax, *w.shape)
        if title:
            ax.set_title(title)
    return ax


def add_weights_colorbar(fig, axes, label="attention weight"):
    """One colour bar for the fixed 0..1 weight scale, shared by ``axes``."""
    sm = ScalarMappable(norm=WEIGHTS_NORM, cmap=HEATMAP_CMAP)
    return fig.colorbar(sm, ax=axes, shrink=0.85, label=label)


class WeightsHeatmaps:
    """Unscaled and scaled attention weights at one ``d_k`` on two ``axes``, fixed 0..1 colours; the static figure
    (:func:`weights_small_multiples`, one column per ``d_k``) and the explorer draw through it.

    ``n_max``: every matrix stretched over one fixed ``n_max x n_max`` square, no ticks, titles naming the scale
    only (the explorer: a move redraws the images only); default each matrix at its own size with ``d_k`` in the
    titles. ``animated``: for the explorer's blitting.
    """

    def __init__(self, axes, n_max: int | None = None, animated: bool = False):
        self.axes, self.n_max = tuple(axes), n_max
        extent = None if n_max is None else (-0.5, n_max - 0.5, n_max - 0.5, -0.5)
        with style():
            cmap = mpl.colormaps[HEATMAP_CMAP].with_extremes(bad=MASKED_CELL)  # masked-out cells: white
            self.images = [ax.imshow(np.zeros((4, 4)), cmap=cmap, norm=WEIGHTS_NORM, interpolation="nearest",
                                     extent=extent, aspect="equal", animated=animated) for ax in self.axes]
            if n_max is not None:
                for ax, spec, title in zip(self.axes, (UNSCALED, SCALED),
                                           ("unscaled: softmax(QKᵀ)", "scaled: softmax(QKᵀ/√d_k)")):
                    ax.set_xlim(-0.5, n_max - 0.5)
                    ax.set_ylim(n_max - 0.5, -0.5)
                    ax.set(xlabel="key $j$ →", ylabel="← query $i$", xticks=[], yticks=[])
                    ax.set_title(title, color=spec["color"], fontsize=10)
                    ax.grid(False)

    def show(self, unscaled, scaled, d_k: int, mask=None) -> None:
        """Put the two weight matrices (each (n_q, n_k), entries in [0, 1]) in; cells where the boolean
        ``mask`` is False (may not attend) are drawn white."""
        for ax, image, w, spec in zip(self.axes, self.images, (unscaled, scaled), (UNSCALED, SCALED)):
            image.set_data(w if mask is None else np.ma.masked_where(~np.asarray(mask, dtype=bool), w))
            if self.n_max is None:
                with style():
                    image.set_extent((-0.5, w.shape[1] - 0.5, w.shape[0] - 0.5, -0.5))
                    label_heatmap(ax, *w.shape)
                    # no number in the title: one draw's "mean largest weight" is noise and would read as a trend
                    ax.set_title(f"{spec['label']}\n$d_k$ = {d_k}", color=spec["color"])


def weights_small_multiples(weights_by_d_k: dict, mask=None):
    """Unscaled (top row) and scaled (bottom row) weights per d_k (d_k -> two (n_q, n_k) arrays), through
    :class:`WeightsHeatmaps`; cells where ``mask`` (n_q, n_k) is False are white. Returns the Figure.
    """
    d_ks = sorted(weights_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(2.9 * len(d_ks) + 1.0, 5.6), squeeze=False)
    for j, d_k in enumerate(d_ks):
        unscaled, scaled = (np.asarray(w, dtype=float) for w in weights_by_d_k[d_k])
        WeightsHeatmaps(axes[:, j]).show(unscaled, scaled, d_k, mask)
    add_weights_colorbar(fig, axes)
    if mask is not None:  # the key to white, as in mask_and_weights' title
        fig.suptitle("white: masked out", fontsize=10)
    return fig


def mask_and_weights(mask, weights, title: str = "causal mask"):
    """A boolean mask (n_q, n_k; True = may attend) next to the attention weights computed with it.
    Returns the Figure.
    """
    mask = np.asarray(mask, dtype=bool)
    fig, (ax_m, ax_w) = new_figure(1, 2, figsize=(8.4, 3.9))
    n_q, n_k = mask.shape
    allowed, blocked = OKABE_ITO["bluish_green"], MASKED_GREY
    with style():
        # The mask has its own two-colour scale (allowed / blocked), not the weights' colourbar.
        ax_m.imshow(mask, cmap=ListedColormap([blocked, allowed]), vmin=0, vmax=1)
        label_heatmap(ax_m, n_q, n_k)
        size = max(7.0, min(12.0, 60.0 / max(n_q, n_k)))
        for i in range(n_q):
            for j in range(n_k):
                ax_m.text(j, i, "0" if mask[i, j] else "−∞", ha="center", va="center",
                          color="white" if mask[i, j] else "black", fontsize=size, fontweight="bold")
        ax_m.set_title(f"{title}: added to the logits", fontsize=10)
        ax_m.legend(handles=[Patch(color=allowed, label="0: may attend"), Patch(color=blocked, label="−∞: blocked")],
                    loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=9, frameon=False)
    weights_heatmap(weights, ax=ax_w, title="weights after the softmax (white: masked out)", mask=mask)
    add_weights_colorbar(fig, [ax_w])
    return fig


def head_scale_histograms(logits, d_k: int, d_model: int, ax=None):
    """One head's dot products ``q_h . k_h`` (n,) three ways: unscaled, times 1/sqrt(d_k), times 1/sqrt(d_model).
    Returns the Axes.
    """
    s = np.asarray(logits, dtype=float)
    ax = get_axes(ax, figsize=(7.0, 3.6))
    wrong = {"color": OKABE_ITO["reddish_purple"], "linestyle": "-."}
    series = (
        (s, UNSCALED, f"unscaled: std {s.std():.2f}"),
        (s / np.sqrt(d_k), SCALED, rf"$\times 1/\sqrt{{d_k}}$ = 1/√{d_k}: std {s.std() / np.sqrt(d_k):.2f}"),
        (s / np.sqrt(d_model), wrong,
         rf"$\times 1/\sqrt{{d_\mathrm{{model}}}}$ = 1/√{d_model}: std {s.std() / np.sqrt(d_model):.2f}"),
    )
    bins = np.arange(-12.0, 12.001, 0.25)  # fixed range: the unscaled spread spills past it
    with style():
        for values, spec, label in series:
            ax.hist(values, bins=bins, density=True, histtype="step", linewidth=1.6,
                    color=spec["color"], linestyle=spec["linestyle"], label=label)
        ax.set_xlim(bins[0], bins[-1])
        ax.set(xlabel="logit of one head", ylabel="density",
               title=f"one head of $d_k$ = {d_k} inside $d_\\mathrm{{model}}$ = {d_model}")
        ax.legend(loc="upper right")
    return ax
