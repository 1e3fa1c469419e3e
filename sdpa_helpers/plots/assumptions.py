"""Figures for notebook 08: initialisations, correlated queries and keys, and QK-norm.

This module offers:

- :func:`scaled_logit_histogram`, :func:`init_small_multiples` -- scaled logits
  ``q . k / sqrt(d_k)`` at initialisation against N(0, 1);
- :func:`init_variance_vs_d_model` -- ``Var(q . k / sqrt(d_k))`` against d_model per scheme;
- :func:`correlated_histograms`, :func:`correlated_small_multiples` -- the logit of a key
  correlated with the query next to the logits of unrelated keys, for 1/sqrt(d_k) and 1/d_k;
- :func:`match_weight_vs_d_k` -- the softmax weight on the correlated key against d_k;
- :func:`cosine_small_multiples` -- QK-norm logits ``sqrt(d_k) cos(theta)`` next to scaled logits.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D

from ..scales import scale_factor
from ..theory import normal_pdf
from . import INV_D, OKABE_ITO, SCALED, SCALING_STYLES, get_axes, new_figure, set_d_k_axis, style

__all__ = ["LOGIT_RANGE", "REFERENCE", "MATCH", "QK_NORM", "scaled_logit_histogram",
           "init_small_multiples", "init_variance_vs_d_model", "correlated_range", "correlated_histograms",
           "correlated_small_multiples", "match_weight_vs_d_k", "cosine_small_multiples"]

#: The fixed x range of the scaled-logit histograms at initialisation.
LOGIT_RANGE = (-6.0, 6.0)
#: N(0, 1): what the footnote's assumption promises for the scaled logits.
REFERENCE = {"color": OKABE_ITO["black"], "linestyle": ":", "label": "N(0, 1)"}
#: The key correlated with the query (the "match").
MATCH = {"color": OKABE_ITO["orange"], "linestyle": "-", "label": r"correlated key ($\rho$)"}
#: QK-norm logits.
QK_NORM = {"color": OKABE_ITO["reddish_purple"], "linestyle": "-.", "label": "QK-norm"}

_BINS = np.linspace(*LOGIT_RANGE, 61)


def scaled_logit_histogram(samples, theory_var: float, ax=None, title: str | None = None):
    """Histogram of scaled logits ``q . k / sqrt(d_k)`` with N(0, 1) and N(0, theory_var) curves.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Scaled logits.
    theory_var : float
        Their variance in theory.
    ax : Axes, optional
    title : str, optional

    Returns
    -------
    Axes

    >>> ax = scaled_logit_histogram(np.zeros(10), 1.0)
    >>> tuple(float(v) for v in ax.get_xlim()), ax.get_xlabel()
    ((-6.0, 6.0), '$q\\\\cdot k/\\\\sqrt{d_k}$')
    """
    s = np.asarray(samples, dtype=float).ravel()
    ax = get_axes(ax, figsize=(4.0, 3.2))
    x = np.linspace(*LOGIT_RANGE, 400)
    with style():
        ax.hist(s, bins=_BINS, density=True, color=SCALED["color"], alpha=0.5,
                label=f"simulation: Var {s.var():.2f}")
        ax.plot(x, normal_pdf(x, 0.0, theory_var), color=SCALED["color"], linewidth=1.8,
                label=f"theory: Var {theory_var:.2f}")
        ax.plot(x, normal_pdf(x), **REFERENCE)
        ax.set_xlim(*LOGIT_RANGE)
        ax.set(xlabel=r"$q\cdot k/\sqrt{d_k}$", ylabel="density")
        if title:
            ax.set_title(title)
        ax.legend(loc="upper right")
    return ax


def init_small_multiples(samples_by_label: dict, ncols: int = 3):
    """One :func:`scaled_logit_histogram` per initialisation on a grid, shared axes, one legend.

    Each panel's title gives its variance, theory and simulation; the legend (simulation,
    theory, N(0, 1)) is drawn once, in a spare grid cell when there is one.

    Parameters
    ----------
    samples_by_label : dict str -> (ndarray, float)
        Panel title -> (scaled logits, theoretical variance).
    ncols : int
        Panels per row.

    Returns
    -------
    Figure

    >>> fig = init_small_multiples({"a": (np.zeros(5), 1.0), "b": (np.zeros(5), 0.5)})
    >>> len(fig.axes)
    2
    """
    n = len(samples_by_label)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(3.4 * ncols, 3.0 * nrows + 0.2), squeeze=False,
                           sharex=True, sharey=True)
    flat = axes.ravel()
    for ax, (label, (samples, theory_var)) in zip(flat, samples_by_label.items()):
        s = np.asarray(samples, dtype=float)
        scaled_logit_histogram(s, theory_var, ax=ax,
                               title=f"{label}\nVar: theory {theory_var:.2f}, simulation {s.var():.2f}")
        ax.title.set_fontsize(10)
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in flat[n:]:
        ax.axis("off")
    with style():
        labels = ["simulation (histogram)", "theory: N(0, Var)", "N(0, 1): the footnote"]
        if n < flat.size:
            flat[n].legend(handles, labels, loc="center", fontsize=10, frameon=False)
        else:
            flat[0].legend(handles, labels, loc="upper right", fontsize=8)
    for i, ax in enumerate(flat[:n]):
        if i % ncols:
            ax.set_ylabel("")
    return fig


def init_variance_vs_d_model(d_models, theory_by_label: dict, simulated_by_label: dict | None = None, ax=None):
    """``Var(q . k / sqrt(d_k))`` against d_model for several initialisations (log-log axes).

    Parameters
    ----------
    d_models : array_like, shape (m,)
    theory_by_label : dict str -> array_like, shape (m,)
        Theoretical variance of the scaled logits per scheme.
    simulated_by_label : dict str -> (array_like (m,), array_like (m,)), optional
        Simulated variance and its standard error per scheme.
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = init_variance_vs_d_model([64, 128], {"LeCun": [1.0, 1.0]})
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    d_models = np.asarray(d_models, dtype=float)
    ax = get_axes(ax, figsize=(9.5, 4.2))
    # Every curve here is a *scaled* logit, so the course's reserved looks for "unscaled"
    # (vermillion, dashed) and "1/d_k" (green, dotted) are not used; LeCun, the footnote's case,
    # gets the blue solid line of scaled attention.
    colours = [OKABE_ITO[c] for c in ("blue", "orange", "reddish_purple", "sky_blue", "black", "yellow")]
    styles = ["-", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (8, 2)), (0, (1, 2))]
    markers = ["s", "o", "^", "D", "v", "P"]
    with style():
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":", label="the footnote's assumption: 1")
        for i, (label, theory) in enumerate(theory_by_label.items()):
            c, ls, m = colours[i % 6], styles[i % 6], markers[i % 6]
            ax.plot(d_models, theory, color=c, linestyle=ls, label=label)
            if simulated_by_label and label in simulated_by_label:
                values, se = (np.asarray(a, dtype=float) for a in simulated_by_label[label])
                ax.errorbar(d_models, values, yerr=2 * se, fmt=m, color=c, markersize=4, capsize=2)
        set_d_k_axis(ax, label=r"$d_\mathrm{model}$")
        ax.set_xlim(d_models.min() / 1.3, d_models.max() * 1.3)
        ax.set_xticks(d_models, [f"{d:g}" for d in d_models])
        ax.set_yscale("log")
        ax.set(ylabel=r"Var$(q\cdot k/\sqrt{d_k})$ = Var$(q_i)^2$",
               title=r"scaled logits at initialisation ($d_k$ = 64; markers: simulation ± 2 SE)")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax


def correlated_range(d_k: int, scaling: str) -> tuple[float, float]:
    """The x range that shows both logit clouds for every rho in [0, 1] at this d_k.

    ``scaling="sqrt"``: logits ``q . k / sqrt(d_k)``, the correlated key's mean runs up to
    ``sqrt(d_k)``; ``scaling="inv_d"``: ``q . k / d_k``, mean up to 1, spread ``sqrt(2 / d_k)``
    (the names of :data:`sdpa_helpers.scales.SCALINGS`).

    >>> correlated_range(64, "sqrt")
    (-6.0, 14.0)
    """
    if scaling == "sqrt":
        return (-6.0, float(np.sqrt(d_k)) + 6.0)
    if scaling == "inv_d":
        spread = 4.0 * np.sqrt(2.0 / d_k)
        return (float(-spread), float(1.0 + spread))
    raise ValueError(f"scaling must be 'sqrt' or 'inv_d', got {scaling!r}")


def correlated_histograms(match, other, rho: float, d_k: int, scaling: str = "sqrt", ax=None,
                          xlim: tuple[float, float] | None = None, legend: bool = True):
    """Histograms of the correlated key's logit and of an unrelated key's logit, with theory curves.

    Parameters
    ----------
    match, other : array_like, shape (n,)
        Scaled logits of the key with correlation ``rho`` and of a key with correlation 0.
    rho : float
    d_k : int
    scaling : {"sqrt", "inv_d"}
        Which scale the logits carry: ``1/sqrt(d_k)`` or ``1/d_k`` (sets colours, labels, theory).
    ax : Axes, optional
    xlim : (float, float), optional
        The x range; default :func:`correlated_range` of this d_k. Give the same range to
        every panel of a row so that a runaway shows.
    legend : bool

    Returns
    -------
    Axes

    >>> ax = correlated_histograms(np.full(5, 4.0), np.zeros(5), 0.5, 64)
    >>> tuple(float(v) for v in ax.get_xlim())
    (-6.0, 14.0)
    """
    ax = get_axes(ax, figsize=(5.0, 3.4))
    lo, hi = correlated_range(d_k, scaling) if xlim is None else xlim
    bins = np.linspace(lo, hi, 121)
    x = np.linspace(lo, hi, 600)
    c = scale_factor(scaling, d_k)
    spec = SCALING_STYLES[scaling]
    with style():
        ax.hist(np.asarray(other, dtype=float), bins=bins, density=True, color=spec["color"], alpha=0.45,
                label="unrelated key ($\\rho$ = 0)")
        ax.hist(np.asarray(match, dtype=float), bins=bins, density=True, color=MATCH["color"], alpha=0.45,
                label=f"correlated key ($\\rho$ = {rho:.2f})")
        ax.plot(x, normal_pdf(x, 0.0, c**2 * d_k), color=spec["color"], linewidth=1.4)
        ax.plot(x, normal_pdf(x, c * rho * d_k, c**2 * d_k * (1 + rho**2)), color=MATCH["color"], linewidth=1.4)
        ax.set_xlim(lo, hi)
        what = r"$q\cdot k/\sqrt{d_k}$" if scaling == "sqrt" else r"$q\cdot k/d_k$"
        ax.set(xlabel=what, ylabel="density", title=f"{spec['label']}, $d_k$ = {d_k}")
        if legend:
            handles = [*ax.get_legend_handles_labels()[0], _normal_curve_handle()]
            ax.legend(handles=handles, loc="upper right", fontsize=8)
    return ax


def _normal_curve_handle() -> Line2D:
    """A legend entry for the solid curves of :func:`correlated_histograms`: the normal
    approximation with the exact mean and variance (poor at small d_k, where a sum of few
    products is peaked and skewed)."""
    return Line2D([], [], color="0.3", linewidth=1.4, label="solid curves: normal approximation")


def correlated_small_multiples(logits_by_d_k: dict, rho: float):
    """Top row: logits times 1/sqrt(d_k); bottom row: times 1/d_k; one column per d_k.

    Every panel of a row shares one x range (the union of the rows' ranges, trimmed to rho), so the runaway
    of the correlated key's logit under 1/sqrt(d_k) shows without reading tick labels; one
    legend sits below the figure, clear of the bars.

    Parameters
    ----------
    logits_by_d_k : dict int -> (ndarray, ndarray)
        Unscaled ``(match, other)`` dot products per d_k.
    rho : float

    Returns
    -------
    Figure

    >>> fig = correlated_small_multiples({4: (np.ones(5), np.zeros(5))}, 0.5)
    >>> len(fig.axes)
    2
    """
    d_ks = sorted(logits_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(3.6 * len(d_ks), 6.4), squeeze=False)
    for row, scaling in enumerate(("sqrt", "inv_d")):
        # correlated_range covers every rho up to 1; trim the top to this rho's largest mean
        ranges = [correlated_range(d_k, scaling) for d_k in d_ks]
        xlim = (min(r[0] for r in ranges),
                max(r[1] - (1.0 - rho) * scale_factor(scaling, d_k) * d_k for r, d_k in zip(ranges, d_ks)))
        for j, d_k in enumerate(d_ks):
            c = scale_factor(scaling, d_k)
            match, other = (c * np.asarray(a, dtype=float) for a in logits_by_d_k[d_k])
            ax = correlated_histograms(match, other, rho, d_k, scaling, ax=axes[row, j], xlim=xlim, legend=False)
            ax.set_title(ax.get_title(), fontsize=9)
    (h_top, h_match), (l_top, l_match) = axes[0, 0].get_legend_handles_labels()
    h_bottom = axes[1, 0].get_legend_handles_labels()[0][0]
    curve = _normal_curve_handle()
    with style():
        labels = [l_top + r" × $1/\sqrt{d_k}$", l_top + r" × $1/d_k$", l_match, curve.get_label()]
        fig.legend([h_top, h_bottom, h_match, curve], labels, loc="outside lower center", ncol=2, fontsize=9,
                   frameon=False)
    return fig


def match_weight_vs_d_k(d_ks, weight_sqrt, weight_inv, limit: float | None = None, ax=None):
    """Mean softmax weight on the correlated key against d_k, for the two scales.

    The model behind it keeps every component of ``q`` and ``k`` at variance 1, so under ``1/d_k``
    the correlated key's logit tends to ``rho <= 1``: the figure says so in its title and legend.

    Parameters
    ----------
    d_ks : array_like, shape (m,)
    weight_sqrt, weight_inv : array_like, shape (m,)
        Mean weight with logits times ``1/sqrt(d_k)`` and times ``1/d_k``.
    limit : float, optional
        The large-d_k limit of the ``1/d_k`` curve (drawn as a horizontal line).
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = match_weight_vs_d_k([1, 4, 16], [0.1, 0.2, 0.4], [0.1, 0.1, 0.1])
    >>> tuple(float(v) for v in ax.get_ylim())
    (0.0, 1.05)
    """
    ax = get_axes(ax, figsize=(6.0, 3.8))
    d_ks = np.asarray(d_ks, dtype=float)
    with style():
        ax.plot(d_ks, weight_sqrt, color=SCALED["color"], linestyle=SCALED["linestyle"], marker=SCALED["marker"],
                label=SCALED["label"])
        ax.plot(d_ks, weight_inv, color=INV_D["color"], linestyle=INV_D["linestyle"], marker=INV_D["marker"],
                label=INV_D["label"] + " (μP), components of variance 1")
        if limit is not None:
            ax.axhline(limit, color=INV_D["color"], linewidth=0.8, alpha=0.7,
                       label=rf"$e^\rho/(e^\rho + n - 1)$ = {limit:.3f}")
        set_d_k_axis(ax, d_max=int(d_ks.max()))
        ax.set(ylim=(0.0, 1.05), ylabel="mean weight on the correlated key",
               title="one correlated key among unrelated ones\n(every component of q and k has variance 1)")
        ax.legend(loc="center right")
    return ax


def cosine_small_multiples(qk_norm_by_d_k: dict, scaled_by_d_k: dict):
    """Histograms of QK-norm logits ``sqrt(d_k) cos(theta)`` over those of ``q . k / sqrt(d_k)``.

    Parameters
    ----------
    qk_norm_by_d_k, scaled_by_d_k : dict int -> ndarray, shape (n,)

    Returns
    -------
    Figure

    >>> fig = cosine_small_multiples({4: np.zeros(5)}, {4: np.zeros(5)})
    >>> fig.axes[0].get_xlabel()
    'logit'
    """
    d_ks = sorted(qk_norm_by_d_k)
    fig, axes = new_figure(1, len(d_ks), figsize=(3.3 * len(d_ks), 3.2), squeeze=False, sharey=True)
    x = np.linspace(-4.5, 4.5, 300)
    bins = np.linspace(-4.5, 4.5, 46)
    for ax, d_k in zip(axes[0], d_ks):
        cos_logits = np.asarray(qk_norm_by_d_k[d_k], dtype=float)
        scaled = np.asarray(scaled_by_d_k[d_k], dtype=float)
        with style():
            ax.hist(scaled, bins=bins, density=True, histtype="step", linewidth=1.5, color=SCALED["color"],
                    label=rf"$q\cdot k/\sqrt{{d_k}}$: Var {scaled.var():.2f}")
            ax.hist(cos_logits, bins=bins, density=True, histtype="step", linewidth=1.5, color=QK_NORM["color"],
                    linestyle=QK_NORM["linestyle"], label=rf"$\sqrt{{d_k}}\cos\theta$: Var {cos_logits.var():.2f}")
            ax.plot(x, normal_pdf(x), **REFERENCE)
            ax.set(xlabel="logit", title=f"$d_k$ = {d_k}", xlim=(-4.5, 4.5))
            ax.legend(loc="upper right", fontsize=8)
    axes[0, 0].set_ylabel("density")
    return fig
