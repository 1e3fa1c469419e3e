"""Figures for notebook 04 (no scale, 1/sqrt(d_k), 1/d_k), shared with its explorer:
:class:`LogitStdPanel` (the logits' spread against d_k, log-log) and :class:`SortedWeightsPanel`
(softmax weights by rank: one query's, or the median and a band over many).
"""

from __future__ import annotations

from fractions import Fraction

import matplotlib as mpl
import numpy as np
from matplotlib.ticker import FixedLocator, NullLocator

from .. import _checks, scales, scaling
from ..scales import SCALINGS, check_scaling
from . import OKABE_ITO, SCALING_STYLES, get_axes, new_figure, set_d_k_axis, style

__all__ = ["set_power_of_two_axis", "LogitStdPanel", "logit_std_vs_d_k", "attention_vs_d_k",
           "SortedWeightsPanel", "sorted_weights", "weights_small_multiples"]


def _check_per_scaling(what: str, values: dict, n: int) -> None:
    """``values`` maps scaling names to sequences of length ``n``, or raise naming ``what``."""
    if not isinstance(values, dict):
        raise TypeError(f"{what} must be a dict scaling name -> values, got {type(values).__name__}")
    for name, v in values.items():
        check_scaling(f"the keys of {what}", name)
        if len(v) != n:
            raise ValueError(f"{what}[{name!r}] must have one value per d_k ({n}), got {len(v)}")


def _power_label(v: float, _=None) -> str:
    frac = Fraction(v).limit_denominator(1 << 16)
    return f"{frac.numerator}" if frac.denominator == 1 else f"1/{frac.denominator}"


def set_power_of_two_axis(ax, which: str = "y", lo: int = -6, hi: int = 6, label: str | None = None):
    """A log2 axis with ticks at 2**lo ... 2**hi (every second power), labelled 1/64, 1/16, ..., 64.

    >>> ax = set_power_of_two_axis(get_axes())
    >>> ax.get_yscale(), [t.get_text() for t in ax.get_yticklabels()][:2]
    ('log', ['1/64', '1/16'])
    """
    if which not in ("x", "y"):
        raise ValueError(f"which must be 'x' or 'y', got {which!r}")
    if not (isinstance(lo, int) and isinstance(hi, int) and lo < hi):
        raise ValueError(f"lo and hi must be integers with lo < hi, got lo={lo!r}, hi={hi!r}")
    ticks = [2.0**i for i in range(lo, hi + 1, 2)]
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=2)
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(mpl.ticker.FuncFormatter(_power_label))
    (ax.set_ylim if which == "y" else ax.set_xlim)(2.0 ** (lo - 0.5), 2.0 ** (hi + 0.5))
    if label is not None:
        (ax.set_ylabel if which == "y" else ax.set_xlabel)(label)
    return ax


class LogitStdPanel:
    """Log-log: the standard deviation of the logits ``c q . k`` against d_k for the three scalings,
    theory lines ``d_k**(1/2 + e)`` (slopes 1/2, 0, -1/2) up to ``d_max`` (default: the end of the course's
    grid, ``scales.D_K_CHOICES[-1]``); the y axis spans the three lines' ends, ``d_max**(±1/2)``.
    :meth:`show` puts dots. ``animated``: the explorer's moving markers (large, black-edged)."""

    def __init__(self, ax, d_max: int | None = None, animated: bool = False):
        d_max = scales.D_K_CHOICES[-1] if d_max is None else d_max
        grid = 2.0 ** np.arange(0, int(np.log2(d_max)) + 1)
        half = int(np.ceil(np.log2(d_max) / 2))  # the lines end at d_max**(+-1/2) = 2**(+-half)
        self.dots = {}
        for name, e in SCALINGS.items():
            spec = SCALING_STYLES[name]
            ax.plot(grid, grid ** (0.5 + e), color=spec["color"], linestyle=spec["linestyle"],
                    label=f"{spec['label']}: slope {Fraction(0.5 + e)}")
        for name in SCALINGS:
            spec = SCALING_STYLES[name]
            (self.dots[name],) = ax.plot([], [], linestyle="none", marker=spec["marker"], color=spec["color"],
                                         markersize=10 if animated else 5,
                                         markeredgecolor="black" if animated else spec["color"], animated=animated)
        set_d_k_axis(ax, d_max=d_max)
        set_power_of_two_axis(ax, "y", -half, half, label=r"standard deviation of the logits $c\,q\cdot k$")
        key = [mpl.lines.Line2D([], [], color="grey", label="lines: theory"),
               mpl.lines.Line2D([], [], color="grey", marker="o", linestyle="none", label="markers: simulated")]
        ax.legend(handles=ax.lines[:len(SCALINGS)] + key, loc="upper left")

    def show(self, d_ks, stds: dict) -> None:
        """Dots at ``d_ks`` with ``stds[name]`` (one value per d_k) for each scaling given."""
        for name, values in stds.items():
            self.dots[name].set_data(d_ks, values)


def logit_std_vs_d_k(d_ks=None, sim_std: dict | None = None, ax=None, d_max: int | None = None):
    """:class:`LogitStdPanel` with simulated standard deviations ``sim_std`` (name -> (len(d_ks),)) as dots.

    >>> ax = logit_std_vs_d_k()
    >>> [line.get_label() for line in ax.lines[:3]]
    ['unscaled: slope 1/2', 'scaled by $1/\\\\sqrt{d_k}$: slope 0', 'scaled by $1/d_k$: slope -1/2']
    """
    d_max = scales.D_K_CHOICES[-1] if d_max is None else _checks.positive_int("d_max", d_max)
    if sim_std is not None:
        if d_ks is None:
            raise ValueError("d_ks must be given with sim_std")
        _check_per_scaling("sim_std", sim_std, len(d_ks))
    ax = get_axes(ax, figsize=(6.0, 4.2))
    with style():
        LogitStdPanel(ax, d_max).show(d_ks, sim_std or {})
    return ax


def attention_vs_d_k(d_ks, entropy: dict, max_weight: dict, n_keys: int):
    """Mean softmax entropy (left) and mean largest weight (right) against d_k, from dicts
    name -> (len(d_ks),), with the uniform levels ``ln n`` and ``1/n``.

    >>> fig = attention_vs_d_k([1, 2], {"sqrt": np.ones(2)}, {"sqrt": np.full(2, 0.5)}, n_keys=4)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['mean entropy (natural log)', 'mean largest weight']
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    _check_per_scaling("entropy", entropy, len(d_ks))
    _check_per_scaling("max_weight", max_weight, len(d_ks))
    fig, (ax_h, ax_m) = new_figure(1, 2, figsize=(10.0, 3.6))
    with style():
        for name in entropy:
            spec = SCALING_STYLES[name]
            kw = dict(color=spec["color"], linestyle=spec["linestyle"], marker=spec["marker"], markersize=4,
                      label=spec["label"])
            ax_h.plot(d_ks, entropy[name], **kw)
            ax_m.plot(d_ks, max_weight[name], **kw)
        ref = dict(color=OKABE_ITO["black"], linewidth=1, linestyle=(0, (1, 3)))
        x_right = max(d_ks)
        ax_h.axhline(np.log(n_keys), **ref)
        ax_h.annotate(f"uniform: ln {n_keys} = {np.log(n_keys):.2f}", (x_right, np.log(n_keys)), xytext=(0, 5),
                      textcoords="offset points", fontsize=8, ha="right")
        ax_m.axhline(1.0 / n_keys, **ref)
        ax_m.annotate(f"uniform: 1/n = {1 / n_keys:.4g}", (x_right, 1.0 / n_keys), xytext=(0, -11),
                      textcoords="offset points", fontsize=8, ha="right")
        for ax in (ax_h, ax_m):
            set_d_k_axis(ax, d_max=max(max(d_ks), 4))
        ax_h.set(ylabel="mean entropy (natural log)", ylim=(0, 1.15 * np.log(n_keys)),
                 title=f"entropy of the weights, {n_keys} keys")
        ax_m.set(ylabel="mean largest weight", ylim=(-0.02, 1.05), title=f"largest weight, {n_keys} keys")
        ax_m.legend(loc="center right")  # the curves are far from y = 0.5 at large d_k
    return fig


class SortedWeightsPanel:
    """Softmax weights by rank (keys sorted from the largest ``q . k`` down) for the scalings
    ``names`` over ``n_keys`` keys, with the uniform level ``1/n``; :meth:`show` fills it.
    ``banded``: each scaling is a median line and a band (per rank low, median, high) instead of
    one query's weights."""

    def __init__(self, ax, names, n_keys: int, banded: bool, animated: bool = False, title: str = ""):
        ranks = np.arange(1, n_keys + 1)
        self.lines, self.bands = {}, {}
        for name in names:
            spec = SCALING_STYLES[name]
            (self.lines[name],) = ax.plot(ranks, np.full(n_keys, 1 / n_keys), color=spec["color"],
                                          linestyle=spec["linestyle"], marker=spec["marker"], markersize=4,
                                          label=f"{spec['label']}, median" if banded else spec["label"],
                                          animated=animated)
            if banded:
                (self.bands[name],) = ax.fill(*scaling.band_polygon(np.zeros(n_keys), np.zeros(n_keys)).T,
                                              color=spec["color"], alpha=0.2, linewidth=0, animated=animated)
        ax.axhline(1 / n_keys, color="black", linewidth=1, linestyle=(0, (1, 3)), label=f"uniform: 1/{n_keys}")
        ax.set(xlabel=r"key, sorted by $q\cdot k$", ylabel="softmax weight", ylim=(0, 1.02),
               xlim=(0.5, n_keys + 0.5), title=title)
        ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))

    def show(self, weights: dict) -> None:
        """``weights``: name -> (n_keys,) one query's weights (sorted by the first's order), or (3, n_keys)."""
        first = np.asarray(next(iter(weights.values())))
        order = np.argsort(-first, kind="stable") if first.ndim == 1 else slice(None)
        for name, w in weights.items():
            w = np.asarray(w, dtype=float)
            if w.ndim == 2:
                self.lines[name].set_ydata(w[1])
                self.bands[name].set_xy(scaling.band_polygon(w[0], w[2]))
            else:
                self.lines[name].set_ydata(w[order])


def sorted_weights(weights: dict, ax=None, title: str = ""):
    """:class:`SortedWeightsPanel` of ``weights``: name -> (n_keys,) one query's weights of the same
    keys, or (3, n_keys) per rank the (low, median, high) of many (:func:`sdpa_helpers.scaling.weight_bands`).

    >>> ax = sorted_weights({"sqrt": np.array([0.2, 0.5, 0.3])})
    >>> ax.lines[0].get_ydata().tolist()
    [0.5, 0.3, 0.2]
    """
    if not isinstance(weights, dict) or not weights:
        raise TypeError(f"weights must be a non-empty dict scaling name -> weights, got {weights!r}")
    for name in weights:
        check_scaling("the keys of weights", name)
    first = _checks.real_array("weights", next(iter(weights.values())), min_ndim=1,
                               shape_hint="(n_keys,) or (3, n_keys)")
    if first.ndim == 2 and first.shape[0] != 3 or first.ndim > 2:
        raise ValueError(f"weights must hold arrays of shape (n_keys,) or (3, n_keys), got {first.shape}")
    ax = get_axes(ax)
    with style():
        SortedWeightsPanel(ax, list(weights), first.shape[-1], first.ndim == 2, title=title).show(weights)
    return ax


def weights_small_multiples(weights_by_d_k: dict):
    """A row of :func:`sorted_weights` panels from ``{d_k: {name: weights}}``, one per d_k."""
    if not isinstance(weights_by_d_k, dict) or not weights_by_d_k:
        raise TypeError(f"weights_by_d_k must be a non-empty dict d_k -> weights, got {type(weights_by_d_k).__name__}")
    d_ks = sorted(weights_by_d_k)
    fig, axes = new_figure(1, len(d_ks), figsize=(3.4 * len(d_ks), 3.2), squeeze=False, sharey=True)
    for ax, d_k in zip(axes[0], d_ks):
        sorted_weights(weights_by_d_k[d_k], ax=ax, title=f"$d_k$ = {d_k}")
    handles = axes[0, 0].get_legend_handles_labels()[0]
    if any(a.patches for a in axes[0]):  # banded: say what a band is
        low, _, high = scaling.BAND_PERCENTILES
        handles.append(mpl.patches.Patch(color="grey", alpha=0.3, label=f"band: {low}–{high} % of queries"))
    axes[0, 0].legend(handles=handles, loc="upper right")
    return fig
