"""Figures for notebook 08: initialisations, correlated queries and keys, and QK-norm.

The panels :class:`LogitHistogramPanel`, :class:`InitVariancePanel` and :class:`CorrelatedHistogramPanel`
draw both the notebook's static figures and its explorers (:mod:`sdpa_helpers.widgets.assumptions`);
:class:`CorrelatedMeanPanel` is the correlation explorer's right panel.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D

from ..assumptions import INIT_D_K
from ..scales import scale_factor
from ..theory import normal_pdf
from . import INV_D, OKABE_ITO, SCALED, SCALING_STYLES, get_axes, new_figure, set_d_k_axis, style

__all__ = ["LOGIT_RANGE", "REFERENCE", "MATCH", "QK_NORM", "LogitHistogramPanel", "InitVariancePanel",
           "CorrelatedHistogramPanel", "CorrelatedMeanPanel", "init_small_multiples", "init_variance_vs_d_model",
           "correlated_small_multiples", "match_weight_vs_d_k", "cosine_small_multiples"]

#: The fixed x range of the scaled-logit histograms at initialisation.
LOGIT_RANGE = (-6.0, 6.0)
#: N(0, 1): what the footnote's assumption promises for the scaled logits.
REFERENCE = {"color": OKABE_ITO["black"], "linestyle": ":", "label": "N(0, 1)"}
#: The key correlated with the query (the "match").
MATCH = {"color": OKABE_ITO["orange"], "linestyle": "-", "label": r"correlated key ($\rho$)"}
#: QK-norm logits.
QK_NORM = {"color": OKABE_ITO["reddish_purple"], "linestyle": "-.", "label": "QK-norm"}
#: Looks of the initialisation schemes, in order (every curve is a *scaled* logit: the reserved looks of
#: "unscaled" and "1/d_k" stay free; the first, LeCun, gets scaled attention's blue solid line).
_SCHEME_LOOKS = tuple(zip((OKABE_ITO[c] for c in ("blue", "orange", "reddish_purple", "sky_blue", "black", "yellow")),
                          ("-", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (8, 2)), (0, (1, 2))),
                          "so^DvP"))


def _density(values, edges) -> np.ndarray:
    """Fraction of ``values`` per bin over the bin width (values outside the edges count in the total)."""
    return np.histogram(values, bins=edges)[0] / values.size / np.diff(edges)


class LogitHistogramPanel:
    """Histogram of scaled logits ``q . k / sqrt(d_k)`` with its theory ``N(0, theory_var)`` and ``N(0, 1)``.
    ``ylim``: fixed (the explorer), else fitted at each :meth:`show`; ``animated``: for the explorer's blitting.
    """

    def __init__(self, ax, ylim=None, animated: bool = False):
        self.ax, self.ylim = ax, ylim
        self.edges, self.x = np.linspace(*LOGIT_RANGE, 61), np.linspace(*LOGIT_RANGE, 300)
        with style():
            self.bars = ax.stairs(np.zeros(60), self.edges, fill=True, color=SCALED["color"], alpha=0.5,
                                  animated=animated, label="simulation")
            (self.theory,) = ax.plot(self.x, normal_pdf(self.x), color=SCALED["color"], linewidth=1.8,
                                     animated=animated, label="theory")
            ax.plot(self.x, normal_pdf(self.x), **REFERENCE)
            ax.set(xlim=LOGIT_RANGE, xlabel=r"$q\cdot k/\sqrt{d_k}$", ylabel="density")
            if ylim is not None:
                ax.set_ylim(*ylim)

    def show(self, samples, theory_var: float) -> None:
        """Put the scaled logits ``samples`` (n,) and their theoretical variance in."""
        top = _density(samples, self.edges)
        pdf = normal_pdf(self.x, 0.0, theory_var)
        self.bars.set_data(top)
        self.theory.set_ydata(pdf)
        if self.ylim is None:
            self.ax.set_ylim(0, 1.05 * max(top.max(), pdf.max(), normal_pdf(0.0)))


def init_small_multiples(samples_by_label: dict, ncols: int = 3):
    """One :class:`LogitHistogramPanel` per initialisation on a grid, shared axes, one legend.

    Parameters
    ----------
    samples_by_label : dict str -> (ndarray, float)
        Panel title -> (scaled logits, theoretical variance); each title gets both variances.
    ncols : int
        Panels per row.

    Returns the Figure.
    """
    n = len(samples_by_label)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(3.4 * ncols, 3.0 * nrows + 0.2), squeeze=False,
                           sharex=True, sharey=True)
    flat = axes.ravel()
    tallest = 0.0
    with style():
        for i, (ax, (label, (samples, theory_var))) in enumerate(zip(flat, samples_by_label.items())):
            s = np.asarray(samples, dtype=float).ravel()
            LogitHistogramPanel(ax).show(s, theory_var)
            tallest = max(tallest, ax.get_ylim()[1])
            ax.set_title(f"{label}\nVar: theory {theory_var:.2f}, simulation {s.var():.2f}", fontsize=10)
            ax.xaxis.set_tick_params(labelbottom=True)
            if i % ncols:
                ax.set_ylabel("")
        flat[0].set_ylim(0, tallest)
        for ax in flat[n:]:
            ax.axis("off")
        handles = flat[0].get_legend_handles_labels()[0]
        labels = ["simulation (histogram)", "theory: N(0, Var)", "N(0, 1): the footnote"]
        if n < flat.size:
            flat[n].legend(handles, labels, loc="center", fontsize=10, frameon=False)
        else:
            flat[0].legend(handles, labels, loc="upper right", fontsize=8)
    return fig


class InitVariancePanel:
    """``Var(q . k / sqrt(d_k))`` against ``d_models`` (log-log): per scheme in ``labels`` (sets its look, in
    order) a theory line and simulation markers (with +-2 SE bars when given: static figures only, drawn once).
    ``animated``: for the explorer's blitting.
    """

    def __init__(self, ax, d_models, labels, animated: bool = False):
        d_models = np.asarray(d_models, dtype=float)
        self.ax, self.lines, self.markers = ax, {}, {}
        with style():
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":", label="the footnote's assumption: 1")
            for label, (c, ls, m) in zip(labels, _SCHEME_LOOKS):
                (self.lines[label],) = ax.plot(d_models, np.ones_like(d_models), color=c, linestyle=ls,
                                               label=label, animated=animated)
                (self.markers[label],) = ax.plot([], [], m, color=c, markersize=6, markeredgecolor="black",
                                                 animated=animated, label=f"_{label}: simulation")
            set_d_k_axis(ax, label=r"$d_\mathrm{model}$")
            ax.set_xlim(d_models.min() / 1.3, d_models.max() * 1.3)
            ax.set_xticks(d_models, [f"{d:g}" for d in d_models])
            ax.set_yscale("log")
            ax.set_ylabel(r"Var$(q\cdot k/\sqrt{d_k})$ = Var$(q_i)^2$")

    def show(self, label: str, theory, sim_x=(), sim_y=(), sim_se=()) -> None:
        """One scheme: its theory curve (m,), and simulated variances at ``sim_x`` (``+-2 sim_se`` bars if given)."""
        self.lines[label].set_ydata(theory)
        self.markers[label].set_data(sim_x, sim_y)
        if len(sim_se):  # static figures: +-2 SE bars
            y, se = np.asarray(sim_y, dtype=float), 2 * np.asarray(sim_se, dtype=float)
            with style():
                self.ax.vlines(sim_x, y - se, y + se, color=self.lines[label].get_color())


def init_variance_vs_d_model(d_models, theory_by_label: dict, simulated_by_label: dict | None = None, ax=None,
                             d_k: int = INIT_D_K):
    """``Var(q . k / sqrt(d_k))`` against d_model for several initialisations (an :class:`InitVariancePanel`).

    Parameters
    ----------
    d_models : array_like, shape (m,)
    theory_by_label : dict str -> array_like, shape (m,)
        Theoretical variance of the scaled logits per scheme.
    simulated_by_label : dict str -> (array_like (m,), array_like (m,)), optional
        Simulated variance and its standard error per scheme.
    ax : Axes, optional

    Returns the Axes.
    """
    ax = get_axes(ax, figsize=(9.5, 4.2))
    panel = InitVariancePanel(ax, d_models, list(theory_by_label))
    for label, theory in theory_by_label.items():
        sim = (simulated_by_label or {}).get(label)
        panel.show(label, theory, *((d_models, *sim) if sim is not None else ()))
    ax.relim()  # the lines' new data, and the bars
    for bars in ax.collections:
        ax.update_datalim(bars.get_datalim(ax.transData))
    ax.autoscale_view()
    with style():
        ax.set_title(rf"scaled logits at initialisation ($d_k$ = {d_k}; markers: simulation ± 2 SE)")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax


def _correlated_range(d_k: int, scaling: str) -> tuple[float, float]:
    """The x range that shows both logit clouds for every rho in [0, 1] at this d_k: the correlated key's
    mean runs up to ``sqrt(d_k)`` under ``"sqrt"``, up to 1 (spread ``sqrt(2 / d_k)``) under ``"inv_d"``."""
    if scaling == "sqrt":
        return (-6.0, float(np.sqrt(d_k)) + 6.0)
    spread = 4.0 * np.sqrt(2.0 / d_k)
    return (float(-spread), float(1.0 + spread))


#: The legend's name of the solid curves: the normal approximation with the exact mean and variance
#: (poor at small d_k, where a sum of few products is peaked and skewed).
_NORMAL_CURVE = "solid curves: normal approximation"


class CorrelatedHistogramPanel:
    """The correlated key's logit next to an unrelated key's (histograms over ``xlim``, ``n_bins``) with their
    normal approximations, under ``scaling`` ``"sqrt"`` or ``"inv_d"``. ``numbers_in_titles``: title and label
    carry ``d_k`` and ``rho`` (static figures; else fixed, numbers in the explorer's readout); ``animated``: for
    the explorer's blitting.
    """

    def __init__(self, ax, scaling: str, xlim, n_bins: int = 120, numbers_in_titles: bool = True,
                 animated: bool = False):
        self.ax, self.scaling, self.numbers_in_titles = ax, scaling, numbers_in_titles
        lo, hi = xlim
        self.edges, self.x = np.linspace(lo, hi, n_bins + 1), np.linspace(lo, hi, 600)
        spec, zeros, kw = SCALING_STYLES[scaling], np.zeros(n_bins), {"animated": animated, "fill": True, "alpha": 0.45}
        with style():
            self.other = ax.stairs(zeros, self.edges, color=spec["color"], label="unrelated key ($\\rho$ = 0)", **kw)
            self.match = ax.stairs(zeros, self.edges, color=MATCH["color"], label="correlated key", **kw)
            self.curves = [ax.plot(self.x, 0 * self.x, color=c, linewidth=1.4, animated=animated)[0]
                           for c in (spec["color"], MATCH["color"])]
            what = r"$q\cdot k/\sqrt{d_k}$" if scaling == "sqrt" else r"$q\cdot k/d_k$"
            ax.set(xlim=xlim, xlabel=what, ylabel="density")

    def show(self, match, other, rho: float, d_k: int) -> None:
        """Put the scaled logits of the correlated key (``match``) and of an unrelated key (``other``) in."""
        c = scale_factor(self.scaling, d_k)
        self.other.set_data(_density(other, self.edges))
        self.match.set_data(_density(match, self.edges))
        self.curves[0].set_ydata(normal_pdf(self.x, 0.0, c**2 * d_k))
        self.curves[1].set_ydata(normal_pdf(self.x, c * rho * d_k, c**2 * d_k * (1 + rho**2)))
        if self.numbers_in_titles:
            self.match.set_label(f"correlated key ($\\rho$ = {rho:.2f})")
            with style():
                self.ax.set_title(f"{SCALING_STYLES[self.scaling]['label']}, $d_k$ = {d_k}", fontsize=9)

    def legend_entries(self):
        """(handles, labels): the unrelated key, the correlated key, the solid curves."""
        handles = [self.other, self.match, Line2D([], [], color="0.3", linewidth=1.4, label=_NORMAL_CURVE)]
        return handles, [h.get_label() for h in handles]


def correlated_small_multiples(logits_by_d_k: dict, rho: float):
    """Top row: logits times 1/sqrt(d_k); bottom row: times 1/d_k; one :class:`CorrelatedHistogramPanel` per d_k.

    Every panel of a row shares one x range (trimmed to rho), so the runaway of the correlated key's
    logit under 1/sqrt(d_k) shows without reading tick labels; one legend sits below the figure.

    Parameters
    ----------
    logits_by_d_k : dict int -> (ndarray, ndarray)
        Unscaled ``(match, other)`` dot products per d_k.
    rho : float

    Returns the Figure.
    """
    d_ks = sorted(logits_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(3.6 * len(d_ks), 6.4), squeeze=False)
    first = []
    for row, scaling in enumerate(("sqrt", "inv_d")):
        # the range covers every rho up to 1; trim the top to this rho's largest mean
        ranges = [_correlated_range(d_k, scaling) for d_k in d_ks]
        xlim = (min(r[0] for r in ranges),
                max(r[1] - (1.0 - rho) * scale_factor(scaling, d_k) * d_k for r, d_k in zip(ranges, d_ks)))
        for j, d_k in enumerate(d_ks):
            c = scale_factor(scaling, d_k)
            panel = CorrelatedHistogramPanel(axes[row, j], scaling, xlim)
            match, other = (c * np.asarray(a, dtype=float) for a in logits_by_d_k[d_k])
            panel.show(match, other, rho, d_k)
            axes[row, j].autoscale(axis="y")
            axes[row, j].relim()
            axes[row, j].autoscale_view(scalex=False)
            if not j:
                first.append(panel)
    (h_top, h_match, curve), (l_top, l_match, l_curve) = first[0].legend_entries()
    with style():
        labels = [l_top + r" × $1/\sqrt{d_k}$", l_top + r" × $1/d_k$", l_match, l_curve]
        fig.legend([h_top, first[1].other, h_match, curve], labels, loc="outside lower center", ncol=2, fontsize=9,
                   frameon=False)
    return fig


class CorrelatedMeanPanel:
    """The correlated key's logit against d_k for 1/sqrt(d_k) and 1/d_k: mean (line) +- 1 std (thin lines),
    simulation at one d_k (marker). Axes fixed; :meth:`show` moves the data (the correlation explorer)."""

    def __init__(self, ax, d_ks, animated: bool = False):
        self.d_ks = np.asarray(d_ks, dtype=float)
        self.lines = {}
        with style():
            for key in ("sqrt", "inv_d"):
                spec, kw = SCALING_STYLES[key], {"color": SCALING_STYLES[key]["color"], "animated": animated}
                self.lines[key] = (
                    ax.plot(self.d_ks, 0 * self.d_ks, linestyle=spec["linestyle"],
                            label=spec["label"] + (" (μP)" if key == "inv_d" else ""), **kw)[0],
                    *(ax.plot(self.d_ks, 0 * self.d_ks, linewidth=0.7, alpha=0.6, **kw)[0] for _ in range(2)),
                    ax.plot([], [], spec["marker"], markersize=7, markeredgecolor="black", **kw)[0])
            set_d_k_axis(ax)
            ax.set(xlim=(0.7, 6000), ylim=(-4, 70), ylabel="correlated key's logit",
                   title="mean (line) ± 1 std (thin lines); markers: simulation")
            ax.legend(loc="upper left", fontsize=8)

    def show(self, key: str, mean, std, d_k: int, simulated: float) -> None:
        """One scale (``"sqrt"`` or ``"inv_d"``): theory mean and std per d_k (m,), the simulated mean at ``d_k``."""
        line, low, high, point = self.lines[key]
        line.set_ydata(mean)
        low.set_ydata(mean - std)
        high.set_ydata(mean + std)
        point.set_data([d_k], [simulated])


def match_weight_vs_d_k(d_ks, weight_sqrt, weight_inv, limit: float | None = None, ax=None):
    """Mean softmax weight on the correlated key against d_k, under 1/sqrt(d_k) and 1/d_k (arrays (m,)).

    ``limit``: the 1/d_k curve's large-d_k limit (a horizontal line). The model keeps every component of ``q``
    and ``k`` at variance 1; the title and legend say so. Returns the Axes.
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
    """Histograms of QK-norm logits ``sqrt(d_k) cos(theta)`` over those of ``q . k / sqrt(d_k)``, one panel per d_k
    (dicts d_k -> array (n,)). Returns the Figure.
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
