"""Figures for notebook 05, for the notebook and its explorers alike: :class:`WeightBars` (one query's
weights), :class:`CurvePanels` (largest weight, entropy, ``exp(entropy)`` against d_k) and
:class:`TemperaturePanels`; the numbers come from :mod:`sdpa_helpers.saturation`.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from ..scales import check_scaling
from . import OKABE_ITO, SCALING_STYLES, fit_d_k_grid, get_axes, new_figure, set_d_k_axis, style

__all__ = ["WeightBars", "CurvePanels", "TemperaturePanels", "weight_bars", "saturation_small_multiples",
           "format_curve_axes", "saturation_curves_figure", "law_check_figure", "format_temperature_axis",
           "temperature_small_multiples", "CURVE_LABELS", "MEAN_CURVE_LABELS", "REFERENCE", "ONSET"]

#: y-axis labels of the three saturation curves of one query (or one row of weights).
CURVE_LABELS = (r"largest weight $p_{\max}$", r"entropy $H$ (nats)", r"effective keys $e^{H}$")
#: y-axis labels of the three curves against d_k, each a mean over queries (:func:`format_curve_axes`).
MEAN_CURVE_LABELS = (r"mean $p_{\max}$", r"mean entropy $\bar H$ (nats)", r"mean of $e^{H}$ (effective keys)")
#: Line properties of the one-hot / uniform reference lines.
REFERENCE = {"color": OKABE_ITO["black"], "linestyle": ":", "linewidth": 1.0}
#: Line properties of the measured onset of saturation (neither scaling's colour).
ONSET = {"color": OKABE_ITO["black"], "linestyle": "-.", "linewidth": 1.0}
_SCALES = ("unscaled", "sqrt")
_FIELDS = ("max_weight", "entropy", "effective_keys")


def _t_name(t: float) -> str:
    return f"{t:g}" if t >= 1 else f"1/{1 / t:g}"


class WeightBars:
    """Bars of one query's weights (y fixed to 0..1); :meth:`show` moves them.

    ``n_keys`` fixes the x axis to keys 1..n; ``n_keys=None`` puts key j of n at (j - 1/2)/n on
    [0, 1], one axis for every n (the explorer's key slider). An edge of the face colour keeps
    1024 bars at least a pixel wide.
    """

    def __init__(self, ax, color, n_keys: int | None = None, title: str | None = None, animated: bool = False):
        self.ax, self.unit = ax, n_keys is None
        self.bars = PolyCollection([], facecolor=color, edgecolor=color, linewidth=0.6, animated=animated)
        ax.add_collection(self.bars)
        format_weight_axes(ax, 1 if n_keys is None else n_keys, title)
        if n_keys is None:
            ax.set_xlim(0.0, 1.0)
            ax.set_xticks([])
            ax.set_xlabel("key $j$ = 1 … $n$ (left to right)")

    def show(self, weights) -> None:
        h = np.asarray(weights, dtype=float)
        x, width = np.arange(1, h.size + 1, dtype=float), 0.8
        if self.unit:
            x, width = (x - 0.5) / h.size, width / h.size
        verts = np.zeros((h.size, 4, 2))
        verts[:, :2, 0] = (x - width / 2)[:, None]
        verts[:, 2:, 0] = (x + width / 2)[:, None]
        verts[:, 1:3, 1] = h[:, None]
        self.bars.set_verts(list(verts))


def format_weight_axes(ax, n_keys: int, title: str | None = None):
    """Fixed axes for the bars of ``n_keys`` weights: keys 1..n on x, weight 0..1 on y."""
    ax.set_xlim(0.4, n_keys + 0.6)
    ax.set_ylim(0.0, 1.0)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True, steps=[1, 2, 4, 5, 10]))
    ax.set(xlabel="key $j$", ylabel="weight $p_j$")
    if title:
        ax.set_title(title)
    return ax


def weight_bars(weights, scale: str, ax=None, title: str | None = None):
    """One query's weights (shape (n_keys,)) as bars in the colour of ``scale``; returns the Axes.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must have shape (n_keys,), got {w.shape}")
    ax = get_axes(ax)
    with style():
        WeightBars(ax, SCALING_STYLES[check_scaling("scale", scale)]["color"], w.size, title).show(w)
    return ax


def saturation_small_multiples(weights_by_d_k: dict):
    """Bars at a few d_k, from ``{d_k: (unscaled weights, scaled weights)}``: unscaled top, scaled below."""
    d_ks = sorted(weights_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(2.6 * len(d_ks), 4.8), squeeze=False)
    for col, d_k in enumerate(d_ks):
        for row, (w, scale) in enumerate(zip(weights_by_d_k[d_k], _SCALES)):
            title = f"{SCALING_STYLES[scale]['label']}, $d_k$ = {d_k}\nmax {np.max(w):.2f}"
            weight_bars(w, scale, ax=axes[row, col], title=title)
            if col:
                axes[row, col].set_ylabel("")
    return fig


def format_curve_axes(ax_max, ax_entropy, ax_effective, n_max: int):
    """Fixed axes of the three curves against d_k (the course's grid) for up to ``n_max`` keys: largest
    weight on 0..1, entropy on 0..log(n_max), effective keys on a log2 axis 1..n_max."""
    for ax, label in zip((ax_max, ax_entropy, ax_effective), MEAN_CURVE_LABELS):  # each curve a mean over queries
        fit_d_k_grid(set_d_k_axis(ax))
        ax.set_ylabel(label)
    ax_max.set_ylim(0.0, 1.03)
    ax_entropy.set_ylim(-0.05, 1.05 * np.log(n_max))
    ax_effective.set_yscale("log", base=2)
    ax_effective.set_ylim(0.9, n_max * 1.15)
    ax_effective.yaxis.set_major_locator(FixedLocator([2**i for i in range(int(np.log2(n_max)) + 1)]))
    ax_effective.yaxis.set_minor_locator(NullLocator())
    ax_effective.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    return ax_max, ax_entropy, ax_effective


class CurvePanels:
    """Largest weight, entropy and ``exp(entropy)`` against d_k, unscaled and scaled (mean, +-2 SE
    bars), with the one-hot and uniform levels, the measured onset and the law ``ln n - d_k/2``;
    :meth:`show` fills them.

    Parameters
    ----------
    axes : 3 Axes
    n_max : int
        The most keys shown (fixes the y axes).
    law : bool
        Draw the entropy law (with its legend) in the entropy panel.
    animated : bool
        Moving artists animated, for the explorer's blitting.
    annotate : bool
        Label the reference levels in the panels (the static figure; the explorer's ``n`` moves).
    """

    def __init__(self, axes, n_max: int, law: bool = False, animated: bool = False, annotate: bool = True):
        self.axes, self.annotate = tuple(axes), annotate
        format_curve_axes(self.axes[0], self.axes[1], self.axes[2], n_max)
        kw = {"animated": animated}
        self.refs = [[ax.axhline(1.0, **REFERENCE, **kw) for _ in range(2)] for ax in self.axes]
        self.onsets = [ax.axvline(1.0, **ONSET, **kw, visible=False) for ax in self.axes]
        self.lines, self.errors, self.markers = {}, {}, {}
        for ax in self.axes:
            for scale in _SCALES:
                spec = SCALING_STYLES[scale]
                (self.lines[ax, scale],) = ax.plot([], [], color=spec["color"], linestyle=spec["linestyle"],
                                                   marker=None if animated else spec["marker"], markersize=3,
                                                   label=spec["label"], **kw)
                if not animated:  # the static figure's +-2 SE bars (the explorer's readout gives its numbers)
                    self.errors[ax, scale] = ax.add_collection(LineCollection([], colors=spec["color"]))
                (self.markers[ax, scale],) = ax.plot([], [], color=spec["color"], marker=spec["marker"],
                                                     markersize=8, markeredgecolor="black", linestyle="none", **kw)
        ax0 = self.axes[0]
        onset_key = Line2D([], [], label=r"onset: mean $H = \ln n - 1$")  # a key of its own: the lines start hidden
        onset_key.update(ONSET)
        ax0.legend(handles=[self.lines[ax0, s] for s in _SCALES] + [onset_key], loc="center right",
                   fontsize=7 if animated else 8)
        self.law = None
        if law:
            (self.law,) = self.axes[1].plot([], [], color=OKABE_ITO["black"], linewidth=1.0,
                                            label=r"law $\ln n - d_k/2$", **kw)
            self.axes[1].legend(handles=[self.law], loc="lower left", fontsize=7 if animated else 8)
        self.texts: list = []

    def show(self, unscaled, scaled, n_keys: int, onset=None, entropy_law=None, d_k=None) -> None:
        """Draw two :class:`~sdpa_helpers.saturation.SaturationCurves` for ``n_keys`` keys; ``onset``
        (a d_k), ``entropy_law`` (``(d_k, H)``, drawn where H >= 0) and the marked ``d_k`` are optional."""
        levels = ((1.0, 1.0 / n_keys), (0.0, np.log(n_keys)), (1.0, float(n_keys)))
        for refs, level, line in zip(self.refs, levels, self.onsets):
            for ref, y in zip(refs, level):
                ref.set_ydata([y, y])
            line.set_visible(onset is not None)
            if onset is not None:
                line.set_xdata([onset, onset])
        for scale, curves in zip(_SCALES, (unscaled, scaled)):
            d = np.asarray(curves.d_k, dtype=float)
            at = np.flatnonzero(d == d_k)
            for ax, field in zip(self.axes, _FIELDS):
                est = getattr(curves, field)
                self.lines[ax, scale].set_data(d, est.mean)
                if self.errors:
                    lo, hi = est.mean - 2 * est.se, est.mean + 2 * est.se
                    self.errors[ax, scale].set_segments(np.stack([np.stack([d, lo], 1), np.stack([d, hi], 1)], 1))
                self.markers[ax, scale].set_data(d[at], est.mean[at])
        if self.law is not None and entropy_law is not None:
            x, h = (np.asarray(v, dtype=float) for v in entropy_law)
            self.law.set_data(x[h >= 0], h[h >= 0])
        if self.annotate:
            for text in self.texts:
                text.remove()
            self.texts = [ax.text(1.0, y, label, va=va, fontsize=8)
                          for i, (ax, level) in enumerate(zip(self.axes, levels))
                          for y, label, va in ((level[0], " one-hot", "bottom" if i != 0 else "top"),
                                               (level[1], f" uniform over {n_keys}", "bottom" if i else "top"))]


def saturation_curves_figure(unscaled, scaled, n_keys: int, onset=None, entropy_law=None):
    """Largest weight, entropy and ``exp(entropy)`` against d_k (:class:`CurvePanels`), from
    :func:`sdpa_helpers.saturation.saturation_curves` with ``scale="unscaled"`` and ``"sqrt"``.

    >>> from sdpa_helpers.saturation import saturation_curves
    >>> u, s = (saturation_curves([1, 64], 4, 50, scale=c, rng=0) for c in ("unscaled", "sqrt"))
    >>> [ax.get_xlabel() for ax in saturation_curves_figure(u, s, 4, onset=1.39).axes]
    ['$d_k$', '$d_k$', '$d_k$']
    """
    fig, axes = new_figure(1, 3, figsize=(12.0, 3.6))
    with style():
        CurvePanels(axes, n_keys, law=entropy_law is not None).show(unscaled, scaled, n_keys, onset, entropy_law)
        fig.suptitle(f"one query against {n_keys} keys: averages over random queries (bars: ±2 SE)")
    return fig


def law_check_figure(sigma2, measured, n_keys):
    """Measured entropy of i.i.d. N(0, sigma^2) logits against the law ``ln n - sigma^2/2``, one panel per n.

    ``measured``: one array (n_seeds, len(sigma2)) per key count in ``n_keys``
    (:func:`sdpa_helpers.saturation.iid_entropy`), drawn as the median with the range over seeds.

    >>> len(law_check_figure([1.0, 4.0], [np.array([[2.3, 1.2]]), np.array([[6.4, 5.0]])], [16, 1024]).axes)
    2
    """
    x = np.asarray(sigma2, dtype=float)
    fig, axes = new_figure(1, len(n_keys), figsize=(5.2 * len(n_keys), 3.4))
    with style():
        for ax, h, n in zip(np.atleast_1d(axes), measured, n_keys):
            h = np.asarray(h, dtype=float)
            ax.fill_between(x, h.min(axis=0), h.max(axis=0), color=OKABE_ITO["blue"], alpha=0.25)
            ax.plot(x, np.median(h, axis=0), color=OKABE_ITO["blue"], marker="o", markersize=4,
                    label="measured (median, range over seeds)")
            law = np.log(n) - x / 2
            ax.plot(x[law >= 0], law[law >= 0], color=OKABE_ITO["black"], linewidth=1.0,
                    label=r"law $\ln n - \sigma^2/2$")
            ax.axvline(np.log(n), **REFERENCE)
            ax.text(np.log(n), np.log(n), r" $\sigma^2 = \ln n$", fontsize=8, va="top")
            ax.axhline(np.log(n), **REFERENCE)
            ax.set(xlabel=r"logit variance $\sigma^2$", ylabel="entropy $H$ (nats)", ylim=(0, np.log(n) * 1.05),
                   title=f"n = {n} keys")
            ax.legend(loc="lower left", fontsize=8)  # clear of the sigma^2 = ln n label at the top
    return fig


def format_temperature_axis(ax, temperatures):
    """A log2 x axis for the temperature ``T``, ticks labelled as fractions (1/8, 1, 8).

    >>> format_temperature_axis(get_axes(), [0.125, 1.0, 8.0]).get_xscale()
    'log'
    """
    t = np.asarray(temperatures, dtype=float)
    ax.set_xscale("log", base=2)
    ax.set_xlim(t.min() / 1.4, t.max() * 1.4)
    lo, hi = int(np.floor(np.log2(t.min()))), int(np.ceil(np.log2(t.max())))
    ax.xaxis.set_major_locator(FixedLocator([2.0**i for i in range(lo, hi + 1) if i % 2 == 0]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _t_name(v)))
    ax.set_xlabel("temperature $T$")
    return ax


class TemperaturePanels:
    """Bars of ``softmax(z / T)`` of ``n_keys`` logits (one bar panel per temperature shown), then the
    largest weight and ``exp(entropy)`` against ``T`` with a marker at each temperature shown;
    :meth:`show` fills them.

    ``curve_t`` (m,) and ``curve_stats`` (a WeightStats of shape (m,)) are the curves, from
    :func:`sdpa_helpers.saturation.temperature_curves`; ``annotate`` writes each bar panel's
    ``T`` and largest weight in its title and labels the reference levels (the static figure).
    """

    def __init__(self, bar_axes, ax_max, ax_eff, curve_t, curve_stats, n_keys: int, animated: bool = False,
                 annotate: bool = True):
        colour, self.annotate = OKABE_ITO["reddish_purple"], annotate
        t = np.asarray(curve_t, dtype=float)
        self.log_t, self.curves = np.log(t), (curve_stats.max_weight, curve_stats.effective_keys)
        self.bars = [WeightBars(ax, colour, n_keys, None, animated) for ax in bar_axes]
        self.axes, self.markers = (ax_max, ax_eff), []
        for i, (ax, values, level) in enumerate(zip(self.axes, self.curves, (1.0 / n_keys, float(n_keys)))):
            ax.plot(t, values, color=colour, marker=".")
            format_temperature_axis(ax, t)
            ax.set(ylabel=CURVE_LABELS[2 * i], ylim=(0.7, n_keys + 0.3) if i else (0.0, 1.03))
            ax.axhline(1.0, **REFERENCE)
            ax.axhline(level, **REFERENCE)
            if annotate:
                ax.text(t.max(), 1.0, "one-hot ", ha="right", va="bottom" if i else "top", fontsize=8)
                ax.text(t.min(), level, f" uniform ({level:g})", va="top" if i else "bottom", fontsize=8)
            (marker,) = ax.plot([], [], color=colour, marker="o", markersize=8, markeredgecolor="black",
                                linestyle="none", animated=animated)
            self.markers.append(marker)

    def show(self, temperatures, weights) -> None:
        """Bars of ``weights`` (k, n) at ``temperatures`` (k,), markers on the curves there."""
        for bars, t, p in zip(self.bars, temperatures, weights):
            bars.show(p)
            if self.annotate:
                bars.ax.set_title(f"$T$ = {_t_name(t)}: max {np.max(p):.2f}")
        x = np.log(np.asarray(temperatures, dtype=float))
        for marker, values in zip(self.markers, self.curves):
            marker.set_data(np.exp(x), np.interp(x, self.log_t, values))


def temperature_small_multiples(bar_temperatures, bar_weights, curve_temperatures, curve_stats):
    """Bars of ``softmax(z / T)`` at a few temperatures (``bar_weights`` (k, n)), then the largest
    weight and ``exp(entropy)`` against ``T`` (:class:`TemperaturePanels`) with a grey line at each
    bar's ``T``; pass what :func:`sdpa_helpers.saturation.temperature_curves` returns.

    >>> from sdpa_helpers.saturation import temperature_curves
    >>> t = [0.25, 0.5, 1, 2, 4]
    >>> fig = temperature_small_multiples([0.5, 2.0], temperature_curves([0.0, 1.0], [0.5, 2.0])[0], t,
    ...                                   temperature_curves([0.0, 1.0], t)[1])
    >>> len(fig.axes)
    4
    """
    temps = [float(t) for t in bar_temperatures]
    weights = np.asarray(bar_weights, dtype=float)
    if weights.ndim != 2 or weights.shape[0] != len(temps):
        raise ValueError(f"bar_weights must have shape ({len(temps)}, n), got {weights.shape}")
    fig, axes = new_figure(1, len(temps) + 2, figsize=(2.7 * (len(temps) + 2), 3.3))
    with style():
        panels = TemperaturePanels(axes[:-2], axes[-2], axes[-1], curve_temperatures, curve_stats, weights.shape[1])
        panels.show(temps, weights)
        for ax in axes[1:-2]:
            ax.set_ylabel("")
        for i, ax in enumerate(panels.axes):
            for j, t in enumerate(temps):
                ax.axvline(t, color=OKABE_ITO["black"], linewidth=0.6, alpha=0.4,
                           label="_nolegend_" if j else "$T$ of the bars")
            ax.legend(loc="center left" if i else "center right", fontsize=8)
    return fig
