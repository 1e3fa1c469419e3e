"""Figures for notebook 06: the softmax Jacobian as heatmaps (:class:`JacobianHeatmaps`, shared by
the static figure and the explorer), and gradient sizes against d_k.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter

from .. import _checks
from ..scales import check_scaling
from . import HEATMAP_CMAP, OKABE_ITO, SCALING_STYLES, fit_d_k_grid, get_axes, new_figure, set_d_k_axis, style

__all__ = ["JACOBIAN_LIMIT", "JacobianHeatmaps", "jacobian_small_multiples", "format_norm", "NormPanel",
           "gradient_norms_figure", "jacobian_bound_figure", "NORM_LABELS"]

#: Colour limits of Jacobian heatmaps: ``p_i (1 - p_i) <= 1/4`` and ``p_i p_j <= 1/4``.
JACOBIAN_LIMIT = 0.25

#: y labels of the three gradient-size panels.
NORM_LABELS = (r"$\|J\|_F$", r"$\|\partial L/\partial z\|$", r"$\|\partial L/\partial q\|$")


def _spec(scale: str) -> dict:
    return SCALING_STYLES[check_scaling("scale", scale)]


def _heatmap(ax, n: int, animated: bool = False):
    """An empty n x n Jacobian heatmap on ``ax`` (fixed limits +-1/4, ticks, labels); returns the image."""
    with style():
        image = ax.imshow(np.zeros((n, n)), cmap=HEATMAP_CMAP, vmin=-JACOBIAN_LIMIT, vmax=JACOBIAN_LIMIT,
                          interpolation="nearest", extent=(0.5, n + 0.5, n + 0.5, 0.5), animated=animated)
        ax.grid(False)
        ticks = np.arange(1, n + 1, max(1, n // 8))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set(xlabel="logit $z_j$", ylabel="weight $p_i$")
    return image


class JacobianHeatmaps:
    """The Jacobians of one query at one ``d_k``, one n x n heatmap per scale on ``axes``; :meth:`show`
    fills them. ``numbers_in_titles``: titles carry ``d_k`` and ``||J||_F`` (static figures; the
    explorer names each scale once and puts the numbers in its readout). ``animated``: for blitting.
    """

    def __init__(self, axes, scales, n: int, numbers_in_titles: bool = True, animated: bool = False):
        self.axes, self.scales, self.numbers_in_titles = tuple(axes), tuple(scales), numbers_in_titles
        self.images = [_heatmap(ax, n, animated) for ax in self.axes]
        if not numbers_in_titles:
            with style():
                for ax, scale in zip(self.axes, self.scales):
                    ax.set_title(_spec(scale)["label"])

    def show(self, jacobians, norms, d_k: int) -> None:
        """Put the Jacobians (one (n, n) array per scale) and their Frobenius norms at ``d_k`` in."""
        for ax, image, scale, J, norm in zip(self.axes, self.images, self.scales, jacobians, norms):
            image.set_data(J)
            if self.numbers_in_titles:
                with style():
                    ax.set_title(f"{_spec(scale)['label']}\n$d_k$ = {d_k}: " + r"$\|J\|_F$"
                                 + f" = {format_norm(norm)}")

    def colorbar(self, **kw):
        """One colour bar for the heatmaps (they share the limits +-1/4)."""
        with style():
            return self.axes[0].figure.colorbar(self.images[0], label=r"$\partial p_i/\partial z_j$", **kw)


def jacobian_small_multiples(panels):
    """Softmax Jacobians at a few d_k from :func:`sdpa_helpers.gradients.jacobian_panels`: one row per
    scale, one column of :class:`JacobianHeatmaps` per ``d_k``, one colour bar.

    >>> from sdpa_helpers.gradients import jacobian_panels
    >>> len(jacobian_small_multiples(jacobian_panels([1, 4], [[0.0, 0.0], [0.0, 2.0]])).axes)  # + colour bar
    5
    """
    try:
        d_ks, scales = np.asarray(panels.d_k), tuple(panels.scales)
        jacobians, norms = np.asarray(panels.jacobian, dtype=float), np.asarray(panels.frobenius, dtype=float)
    except AttributeError:
        raise TypeError(f"panels must be a JacobianPanels (sdpa_helpers.gradients.jacobian_panels), "
                        f"got {type(panels).__name__}") from None
    shape = (len(scales), d_ks.size)
    if d_ks.ndim != 1 or not d_ks.size or jacobians.ndim != 4 or jacobians.shape[:2] != shape \
            or jacobians.shape[2] != jacobians.shape[3] or norms.shape != shape:
        raise ValueError(f"panels: jacobian must have shape {shape} + (n, n) and frobenius {shape}, "
                         f"got {jacobians.shape} and {norms.shape}")
    figsize = (2.7 * d_ks.size + 1.0, 2.8 * len(scales))
    fig, axes = new_figure(len(scales), d_ks.size, figsize=figsize, squeeze=False)
    columns = [JacobianHeatmaps(axes[:, col], scales, jacobians.shape[-1]) for col in range(d_ks.size)]
    for col, (column, d_k) in enumerate(zip(columns, d_ks.tolist())):
        column.show(jacobians[:, col], norms[:, col], d_k)
        if col:
            for ax in axes[:, col]:
                ax.set_ylabel("")
    columns[0].colorbar(ax=axes, shrink=0.8)
    return fig


def format_norm(value: float) -> str:
    """A norm for a title: two decimals from 0.01 up, scientific notation below.

    >>> format_norm(0.3812), format_norm(0.0019), format_norm(0.0)
    ('0.38', '1.9e-03', '0')
    """
    value = float(value)
    if value == 0:
        return "0"
    return f"{value:.2f}" if value >= 0.01 else f"{value:.1e}"


class NormPanel:
    """A gradient size against d_k (the course's grid), log-log: for the unscaled and the scaled
    :class:`~sdpa_helpers.sampling.MCEstimate` (m,) over ``d_ks`` (m,), the mean (filled markers,
    +-1 SE bars) and the median (dotted line, hollow markers); :meth:`show` marks one query's sizes at one ``d_k``
    (stars, ``animated`` for the explorer's blitting)."""

    def __init__(self, ax, label: str, d_ks, unscaled, scaled, ylim=(1e-13, 10.0), animated: bool = False):
        fit_d_k_grid(set_d_k_axis(ax))
        ax.set_yscale("log")
        ax.set_ylim(*ylim)
        ax.yaxis.set_major_locator(LogLocator(base=10, numticks=8))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(label)
        d_ks = np.asarray(d_ks, dtype=float)
        self.markers = []
        for estimate, scale in ((unscaled, "unscaled"), (scaled, "sqrt")):
            spec = SCALING_STYLES[scale]
            ax.errorbar(d_ks, estimate.mean, yerr=estimate.se, color=spec["color"], linestyle=spec["linestyle"],
                        marker=spec["marker"], markersize=4, capsize=2, label=f"{spec['label']}: mean")
            ax.plot(d_ks, estimate.median, color=spec["color"], linestyle=":", linewidth=1.6,  # apart from the mean
                    marker=spec["marker"], markersize=5, markerfacecolor="white", alpha=0.9,
                    label=f"{spec['label']}: median (dotted, hollow)")
            (marker,) = ax.plot([], [], color=spec["color"], marker="*", markersize=13, markeredgecolor="black",
                                linestyle="none", animated=animated)
            self.markers.append(marker)

    def show(self, d_k: int, sizes) -> None:
        """Stars at ``d_k`` for the (unscaled, scaled) ``sizes``, raised to the axis floor if below it."""
        floor = self.markers[0].axes.get_ylim()[0]
        for marker, size in zip(self.markers, sizes):
            marker.set_data([d_k], [max(size, floor)])


def gradient_norms_figure(unscaled, scaled):
    """``||J||_F``, ``||dL/dz||`` and ``||dL/dq||`` against d_k (:class:`NormPanel`), unscaled vs
    scaled (two :class:`~sdpa_helpers.gradients.GradientCurves`), log-log.
    """
    fig, axes = new_figure(1, 3, figsize=(12.0, 3.9))
    with style():
        fields = ("jacobian_norm", "logit_grad_norm", "query_grad_norm")
        titles = ("Jacobian of the softmax", "gradient reaching the logits $z$", "gradient reaching the query $q$")
        for ax, field, label, title in zip(axes, fields, NORM_LABELS, titles):
            NormPanel(ax, label, unscaled.d_k, getattr(unscaled, field), getattr(scaled, field))
            ax.set_title(title)
        axes[0].legend(loc="lower left")
    return fig


def jacobian_bound_figure(gap, frobenius, ax=None):
    """``||J||_F`` (``frobenius``, (m,)) against ``gap = 1 - max p`` (m,), log-log, with the bound
    ``2 (1 - max p)``; points with a zero coordinate are left out.
    """
    gap = _checks.real_array("gap", gap, min_ndim=1, shape_hint="(m,)")
    fro = _checks.real_array("frobenius", frobenius, min_ndim=1, shape_hint="(m,)")
    if gap.ndim != 1 or fro.shape != gap.shape:
        raise ValueError(f"gap and frobenius must have the same shape (m,), got {gap.shape} and {fro.shape}")
    keep = (gap > 0) & (fro > 0)
    if not keep.any():
        raise ValueError("gap and frobenius: no point with both coordinates > 0 to draw on log axes")
    ax = get_axes(ax, figsize=(5.5, 4.2))
    with style():
        x = np.geomspace(gap[keep].min(), gap[keep].max(), 50)
        # neither scaling's colours: black dashed bound, reddish-purple points
        ax.plot(x, 2 * x, color=OKABE_ITO["black"], linestyle="--", linewidth=1.0, zorder=1,
                label=r"bound $2\,(1-p_{\max})$")
        ax.scatter(gap[keep], fro[keep], s=10, alpha=0.6, color=OKABE_ITO["reddish_purple"], edgecolors="none",
                   zorder=2, label=r"random $p$")
        ax.set(xscale="log", yscale="log", xlabel=r"$1-p_{\max}$", ylabel=r"$\|J\|_F$",
               title="the Jacobian vanishes as $p$ becomes one-hot")
        ax.legend(loc="upper left")
    return ax
