"""Figures for notebook 05: attention weights as bars, saturation curves against d_k, temperature.

This module offers:

- :func:`weight_bars` -- one query's attention weights as bars (y fixed to 0..1);
- :func:`saturation_small_multiples` -- bars at a few d_k, unscaled (top) and scaled (bottom);
- :func:`format_curve_axes` -- the fixed axes of the three saturation curves;
- :func:`mc_curve` -- a Monte Carlo curve against d_k (mean with standard-error bars);
- :func:`saturation_curves_figure` -- largest weight, entropy and ``exp(entropy)`` against d_k;
- :func:`law_check_figure` -- the entropy law ``ln n - sigma^2/2`` against Monte Carlo, over sigma^2;
- :func:`temperature_small_multiples` -- bars at a few temperatures, and the curves against T.

Scalings are named as in :mod:`sdpa_helpers.scales` (``"unscaled"``, ``"sqrt"``, ``"inv_d"``) and
drawn in :data:`sdpa_helpers.plots.SCALING_STYLES`. Every number drawn comes from the math layer
(:mod:`sdpa_helpers.saturation`); these functions only draw.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from ..scales import check_scaling
from . import OKABE_ITO, SCALING_STYLES, get_axes, new_figure, set_d_k_axis, style

__all__ = ["weight_bars", "saturation_small_multiples", "format_weight_axes", "format_curve_axes",
           "mc_curve", "saturation_curves_figure", "law_check_figure", "format_temperature_axis",
           "temperature_small_multiples",
           "CURVE_LABELS", "REFERENCE", "ONSET"]

#: y-axis labels of the three saturation curves.
CURVE_LABELS = (r"largest weight $p_{\max}$", r"entropy $H$ (nats)", r"effective keys $e^{H}$")

#: Line properties of the one-hot / uniform reference lines.
REFERENCE = {"color": OKABE_ITO["black"], "linestyle": ":", "linewidth": 1.0}


#: Line properties of the measured onset of saturation (neither scaling's colour).
ONSET = {"color": OKABE_ITO["black"], "linestyle": "-.", "linewidth": 1.0}


def _spec(scale: str) -> dict:
    return SCALING_STYLES[check_scaling("scale", scale)]


def format_weight_axes(ax, n_keys: int, title: str | None = None):
    """Fixed axes for the bars of ``n_keys`` weights: keys 1..n on x, weight 0..1 on y.

    >>> ax = format_weight_axes(get_axes(), 8)
    >>> tuple(map(float, ax.get_ylim()))
    (0.0, 1.0)
    """
    ax.set_xlim(0.4, n_keys + 0.6)
    ax.set_ylim(0.0, 1.0)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True, steps=[1, 2, 4, 5, 10]))
    ax.set(xlabel="key $j$", ylabel="weight $p_j$")
    if title:
        ax.set_title(title)
    return ax


def weight_bars(weights, scale: str, ax=None, title: str | None = None):
    """One query's attention weights as bars, in the colour of its scaling, y fixed to 0..1.

    Parameters
    ----------
    weights : array_like, shape (n_keys,)
        A softmax output.
    scale : str
        Which scaling produced them (``"unscaled"``, ``"sqrt"``, ``"inv_d"``: sets the colour).
    ax : Axes, optional
    title : str, optional

    Returns
    -------
    Axes

    >>> ax = weight_bars([0.25, 0.75], "unscaled")
    >>> len(ax.patches), tuple(map(float, ax.get_ylim()))
    (2, (0.0, 1.0))
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must have shape (n_keys,), got {w.shape}")
    ax = get_axes(ax)
    with style():
        ax.bar(np.arange(1, w.size + 1), w, width=0.8, color=_spec(scale)["color"])
        format_weight_axes(ax, w.size, title)
    return ax


def saturation_small_multiples(weights_by_d_k: dict):
    """Bars of one query's weights at a few d_k: unscaled (top row) and scaled (bottom row).

    Parameters
    ----------
    weights_by_d_k : dict int -> (ndarray, ndarray), each shape (n_keys,)
        ``d_k -> (unscaled weights, scaled weights)``.

    Returns
    -------
    Figure

    >>> fig = saturation_small_multiples({4: ([0.5, 0.5], [0.5, 0.5]), 16: ([1.0, 0.0], [0.6, 0.4])})
    >>> len(fig.axes)
    4
    """
    d_ks = sorted(weights_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(2.6 * len(d_ks), 4.8), squeeze=False)
    for col, d_k in enumerate(d_ks):
        unscaled, scaled = weights_by_d_k[d_k]
        for row, (w, scale) in enumerate(((unscaled, "unscaled"), (scaled, "sqrt"))):
            ax = axes[row, col]
            weight_bars(w, scale, ax=ax, title=f"{_spec(scale)['label']}, $d_k$ = {d_k}\nmax {np.max(w):.2f}")
            if col:
                ax.set_ylabel("")
    return fig


def format_curve_axes(ax_max, ax_entropy, ax_effective, n_max: int):
    """Fixed axes for the three saturation curves against d_k (1 ... 4096), for up to ``n_max`` keys.

    Largest weight on 0..1, entropy on 0..log(n_max), effective keys on a log2 axis 1..n_max.

    >>> fig, axes = new_figure(1, 3)
    >>> format_curve_axes(*axes, n_max=16)[2].get_yscale()
    'log'
    """
    for ax, label in zip((ax_max, ax_entropy, ax_effective), CURVE_LABELS):
        set_d_k_axis(ax)
        ax.set_xlim(0.7, 4096 * 1.4)
        ax.set_ylabel(label)
    ax_max.set_ylim(0.0, 1.03)
    ax_entropy.set_ylim(-0.05, 1.05 * np.log(n_max))
    ax_effective.set_yscale("log", base=2)
    ax_effective.set_ylim(0.9, n_max * 1.15)
    ticks = [2**i for i in range(int(np.log2(n_max)) + 1)]
    ax_effective.yaxis.set_major_locator(FixedLocator(ticks))
    ax_effective.yaxis.set_minor_locator(NullLocator())
    ax_effective.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    return ax_max, ax_entropy, ax_effective


def mc_curve(ax, d_ks, estimate, scale: str, label: str | None = None):
    """Draw a Monte Carlo curve (mean, with +-2 standard-error bars) against d_k in a scaling's style.

    Parameters
    ----------
    ax : Axes
    d_ks : array_like, shape (m,)
    estimate : MCEstimate
        ``mean`` and ``se`` of shape (m,).
    scale : str
        A name from :data:`sdpa_helpers.scales.SCALINGS`.
    label : str, optional
        Defaults to the scaling's label.

    Returns
    -------
    Axes

    >>> from sdpa_helpers.saturation import MCEstimate
    >>> ax = mc_curve(get_axes(), [1, 2], MCEstimate(np.array([0.5, 0.6]), np.zeros(2), np.zeros(2)), "sqrt")
    >>> len(ax.lines) >= 1
    True
    """
    spec = _spec(scale)
    ax.errorbar(np.asarray(d_ks), estimate.mean, yerr=2 * np.asarray(estimate.se), color=spec["color"],
                linestyle=spec["linestyle"], marker=spec["marker"], markersize=4, capsize=2,
                label=spec["label"] if label is None else label)
    return ax


def saturation_curves_figure(unscaled, scaled, n_keys: int, iid_limit=None, onset=None, entropy_law=None):
    """Largest weight, entropy and ``exp(entropy)`` against d_k, averaged over random queries.

    Parameters
    ----------
    unscaled, scaled : SaturationCurves
        From :func:`sdpa_helpers.saturation.saturation_curves` with ``scale="unscaled"`` / ``"sqrt"``.
    n_keys : int
        Keys per query (sets the uniform reference lines: ``1/n``, ``log n``, ``n``).
    iid_limit : tuple of 3 floats, optional
        The three values for logits drawn i.i.d. N(0, 1), drawn as a wide grey band (grey: it is
        neither scaling's colour).
    onset : float, optional
        The measured onset of saturation of the unscaled logits (the first d_k where the mean
        entropy is 1 nat below ``ln n``, :func:`sdpa_helpers.saturation.measured_onset`): a
        vertical dash-dotted line.
    entropy_law : (array, array), optional
        ``(d_k, H)`` of the closed form ``H = ln n - d_k/2`` for the unscaled logits, drawn thin
        and black in the entropy panel where it is >= 0.

    Returns
    -------
    Figure

    >>> from sdpa_helpers.saturation import saturation_curves
    >>> u = saturation_curves([1, 64], 4, 50, scale="unscaled", rng=0)
    >>> s = saturation_curves([1, 64], 4, 50, scale="sqrt", rng=0)
    >>> [ax.get_xlabel() for ax in saturation_curves_figure(u, s, 4, onset=1.39).axes]
    ['$d_k$', '$d_k$', '$d_k$']
    """
    fig, axes = new_figure(1, 3, figsize=(12.0, 3.6))
    with style():
        format_curve_axes(axes[0], axes[1], axes[2], n_max=n_keys)
        one_hot = (1.0, 0.0, 1.0)
        uniform = (1.0 / n_keys, np.log(n_keys), float(n_keys))
        for i, (ax, field) in enumerate(zip(axes, ("max_weight", "entropy", "effective_keys"))):
            ax.axhline(one_hot[i], **REFERENCE)
            ax.axhline(uniform[i], **REFERENCE)
            ax.text(1.0, one_hot[i], " one-hot", va="bottom" if i != 0 else "top", fontsize=8)
            ax.text(1.0, uniform[i], f" uniform over {n_keys}", va="bottom" if i else "top", fontsize=8)
            if iid_limit is not None:
                ax.axhline(iid_limit[i], color=OKABE_ITO["black"], linewidth=5.0, alpha=0.2,
                           label="logits i.i.d. $N(0, 1)$")
            if onset is not None:
                ax.axvline(onset, **ONSET, label=r"onset: $H = \ln n - 1$")
            mc_curve(ax, unscaled.d_k, getattr(unscaled, field), "unscaled")
            mc_curve(ax, scaled.d_k, getattr(scaled, field), "sqrt")
        if entropy_law is not None:
            x, h = (np.asarray(v, dtype=float) for v in entropy_law)
            keep = h >= 0
            axes[1].plot(x[keep], h[keep], color=OKABE_ITO["black"], linewidth=1.0,
                         label=r"law $\ln n - d_k/2$")
            axes[1].legend(loc="center right", fontsize=8)
        axes[0].legend(loc="center right", fontsize=8)
        fig.suptitle(f"one query against {n_keys} keys: averages over random queries (bars: ±2 SE)")
    return fig


def law_check_figure(sigma2, measured, n_keys):
    """Measured entropy of i.i.d. N(0, sigma^2) logits against the law ``ln n - sigma^2/2``, one panel per n.

    Parameters
    ----------
    sigma2 : array_like, shape (m,)
        The variances (x axis).
    measured : sequence of arrays, shape (n_seeds, m) each
        Mean entropy per seed (:func:`sdpa_helpers.saturation.iid_entropy`), one array per key count:
        drawn as the median over seeds with the range over seeds as a band.
    n_keys : sequence of int
        The key counts, one per panel; a dotted line marks ``sigma^2 = ln n``.

    Returns
    -------
    Figure

    >>> fig = law_check_figure([1.0, 4.0], [np.array([[2.3, 1.2]]), np.array([[6.4, 5.0]])], [16, 1024])
    >>> len(fig.axes)
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
    """A log2 x axis for the temperature ``T``, with ticks labelled as fractions (1/8, 1, 8).

    >>> format_temperature_axis(get_axes(), [0.125, 1.0, 8.0]).get_xscale()
    'log'
    """
    temperatures = np.asarray(temperatures, dtype=float)
    ax.set_xscale("log", base=2)
    ax.set_xlim(temperatures.min() / 1.4, temperatures.max() * 1.4)
    lo, hi = int(np.floor(np.log2(temperatures.min()))), int(np.ceil(np.log2(temperatures.max())))
    ticks = [2.0**i for i in range(lo, hi + 1) if i % 2 == 0]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}" if v >= 1 else f"1/{1 / v:g}"))
    ax.set_xlabel("temperature $T$")
    return ax


def temperature_small_multiples(bar_temperatures, bar_weights, curve_temperatures, curve_stats):
    """Bars of ``softmax(logits / T)`` at a few temperatures, then the largest weight and
    ``exp(entropy)`` against ``T``. Computes nothing: pass what
    :func:`sdpa_helpers.saturation.temperature_curves` returns.

    Parameters
    ----------
    bar_temperatures : sequence of float > 0, length k
        One bar panel each.
    bar_weights : array_like, shape (k, n)
        The weights at those temperatures.
    curve_temperatures : array_like of float > 0, shape (m,)
        Where the curves are evaluated (log-spaced).
    curve_stats : WeightStats
        Fields ``max_weight`` and ``effective_keys`` of shape (m,).

    Returns
    -------
    Figure

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
    n = weights.shape[1]
    curve_t = np.asarray(curve_temperatures, dtype=float)
    fig, axes = new_figure(1, len(temps) + 2, figsize=(2.7 * (len(temps) + 2), 3.3))
    with style():
        for i, (ax, t, p) in enumerate(zip(axes, temps, weights)):
            name = f"{t:g}" if t >= 1 else f"1/{1 / t:g}"
            ax.bar(np.arange(1, n + 1), p, width=0.8, color=OKABE_ITO["reddish_purple"])
            format_weight_axes(ax, n, f"$T$ = {name}: max {p.max():.2f}")
            if i:
                ax.set_ylabel("")
        ax_max, ax_eff = axes[-2], axes[-1]
        ax_max.plot(curve_t, curve_stats.max_weight, color=OKABE_ITO["reddish_purple"], marker=".")
        ax_eff.plot(curve_t, curve_stats.effective_keys, color=OKABE_ITO["reddish_purple"], marker=".")
        for ax, label, top in ((ax_max, CURVE_LABELS[0], 1.03), (ax_eff, CURVE_LABELS[2], n + 0.3)):
            format_temperature_axis(ax, curve_t)
            ax.set_ylabel(label)
            ax.set_ylim(0.0 if ax is ax_max else 0.7, top)
            ax.axhline(1.0, **REFERENCE)
            ax.text(curve_t.max(), 1.0, "one-hot ", ha="right", va="top" if ax is ax_max else "bottom", fontsize=8)
        for ax, level in ((ax_max, 1.0 / n), (ax_eff, float(n))):
            ax.axhline(level, **REFERENCE)
            ax.text(curve_t.min(), level, f" uniform ({level:g})", va="bottom" if ax is ax_max else "top", fontsize=8)
        for ax in (ax_max, ax_eff):
            for i, t in enumerate(temps):
                ax.axvline(t, color=OKABE_ITO["black"], linewidth=0.6, alpha=0.4,
                           label="_nolegend_" if i else "$T$ of the bars")
            ax.legend(loc="center right" if ax is ax_max else "center left", fontsize=8)
    return fig
