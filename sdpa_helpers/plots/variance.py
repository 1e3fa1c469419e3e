"""Figures for notebook 02: the distribution of q·k against the normal N(0, d_k).

:class:`HistogramPanel` draws every histogram of ``q . k`` (the static figures and the explorer).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _checks
from ..sampling import check_dist
from ..theory import normal_pdf
from ..variance import histogram_density, histogram_edges
from . import OKABE_ITO, UNSCALED, get_axes, new_figure, set_d_k_axis, style

__all__ = ["DIST_STYLE", "HistogramPanel", "Y_LEVELS",
           "dot_product_histogram", "histogram_grid", "covariance_heatmap", "kurtosis_decay"]

#: Colour, line style and marker of each component distribution (none of the scalings' colours).
DIST_STYLE = {
    "normal": {"color": OKABE_ITO["black"], "linestyle": "-", "marker": "o"},
    "uniform": {"color": OKABE_ITO["orange"], "linestyle": "--", "marker": "s"},
    "rademacher": {"color": OKABE_ITO["reddish_purple"], "linestyle": "-.", "marker": "D"},
    "laplace": {"color": OKABE_ITO["sky_blue"], "linestyle": ":", "marker": "^"},
}

_NORMAL_LINE = {"color": OKABE_ITO["black"], "linewidth": 1.5}


#: y-axis tops of a standardised panel, in units of 1 / sqrt(d_k): the smallest that fits is used.
Y_LEVELS = (0.5, 1.0, 1.6)


class HistogramPanel:
    """One histogram of ``q . k`` (a density) with the ``N(0, d_k)`` density on top; :meth:`show` fills it.

    The x axis spans ±4.5 ``sqrt(d_k)``. Rademacher ``q . k`` is discrete (integers two apart): stems
    of height probability / 2, comparable with the density. ``standardised``: axes in units of
    ``sqrt(d_k)`` (labelled ``2√d_k``, ``0.2/√d_k``; y top from :data:`Y_LEVELS`), so the explorer's
    frame never changes; otherwise real units. ``animated``: for the explorer's blitting.
    """

    def __init__(self, ax, xlabel: bool = True, ylabel: bool = True, legend: bool = True,
                 standardised: bool = False, animated: bool = False):
        self.ax, self.legend, self.standardised = ax, legend, standardised
        self._discrete: bool | None = None  # the legend shows bars or stems: remade when that changes
        colour, kw = UNSCALED["color"], {"animated": animated}
        with style():
            self.bars = ax.stairs([0.0], [0.0, 1.0], fill=True, color=colour, alpha=0.55, **kw)
            self.stems = ax.vlines([], 0.0, [], color=colour, **kw)
            (self.stem_tops,) = ax.plot([], [], "o", color=colour, **kw)
            (self.curve,) = ax.plot([], [], **_NORMAL_LINE, label=r"$N(0, d_k)$")
            if xlabel:
                ax.set_xlabel(r"$q\cdot k$")
            if ylabel:
                ax.set_ylabel("density")
            if standardised:
                ax.set_xlim(-4.5, 4.5)
                ax.set_xticks(range(-4, 5, 2), [f"{i}√d_k".replace("-", "\u2212") if i else "0"
                                                 for i in range(-4, 5, 2)])
                ax.set_yticks(np.arange(0.0, 1.61, 0.2),
                              ["0"] + [f"{v:.1f}/√d_k" for v in np.arange(0.2, 1.61, 0.2)])

    def show(self, samples: np.ndarray, d_k: int, dist: str, title: str | None = None) -> None:
        """Draw ``samples`` of ``q . k`` (``d_k`` components of ``dist``; inputs trusted). ``title``
        defaults to the distribution, ``d_k`` and the sample variance; ``""`` leaves it.
        """
        sd = math.sqrt(d_k)
        x_unit, y_unit = (sd, 1 / sd) if self.standardised else (1.0, 1.0)
        discrete = dist == "rademacher"
        if discrete:  # q·k takes the values -d_k, -d_k + 2, ..., d_k
            values, counts = np.unique(samples, return_counts=True)
            shown = np.abs(values) <= 4.5 * sd
            x, top = values[shown] / x_unit, counts[shown] / samples.size / 2.0 / y_unit  # probability / 2
            self.stems.set_segments(np.stack([np.stack([x, 0 * x], 1), np.stack([x, top], 1)], 1))
            self.stems.set_linewidth(2.0 if d_k <= 64 else 1.0)
            self.stem_tops.set_data(x, top)
            self.stem_tops.set_markersize(4 if d_k <= 64 else 2)
        else:
            edges = histogram_edges(d_k, dist)
            top = histogram_density(samples, edges) / y_unit
            self.bars.set_data(top, edges / x_unit)
        self.bars.set_visible(not discrete)
        self.stems.set_visible(discrete)
        self.stem_tops.set_visible(discrete)
        z = np.linspace(-4.5, 4.5, 301)
        pdf = normal_pdf(z)
        self.curve.set_data(z * sd / x_unit, pdf / sd / y_unit)
        tallest = max(float(pdf.max() / sd / y_unit), float(top.max()) if top.size else 0.0)
        with style():
            if self.standardised:
                self.ax.set_ylim(0, next((y for y in Y_LEVELS if y >= 1.08 * tallest), Y_LEVELS[-1]))
            else:  # what autoscaling would give: a 5 % margin over the tallest of bars and curve
                self.ax.set_xlim(-4.5 * sd, 4.5 * sd)
                self.ax.set_ylim(0, 1.05 * tallest)
            if title != "":
                self.ax.set_title(f"{dist}, $d_k$ = {d_k}: variance {samples.var(ddof=1):.3g}"
                                  if title is None else title)
            if discrete != self._discrete:
                self._discrete = discrete
                self.bars.set_label("_bars" if discrete else r"$q\cdot k$ (simulated)")
                self.stem_tops.set_label(r"$q\cdot k$ (simulated): probability / 2 at each value"
                                         if discrete else "_stems")
                if self.legend:
                    self.ax.legend(handles=[self.stem_tops if discrete else self.bars, self.curve], loc="upper right")


def dot_product_histogram(samples, d_k: int, dist: str = "normal", ax=None, title: str | None = None,
                          xlabel: bool = True, ylabel: bool = True, legend: bool = True):
    """A :class:`HistogramPanel` of ``samples`` (n,) of ``q . k`` with ``d_k`` components of ``dist``;
    returns the Axes. ``title`` defaults to the setting and the sample variance.

    >>> ax = dot_product_histogram(np.random.default_rng(0).standard_normal(1000) * 2, d_k=4)
    >>> tuple(map(float, ax.get_xlim()))
    (-9.0, 9.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    samples = _checks.real_array("samples", samples, min_ndim=1).ravel()
    dist = check_dist("dist", dist)
    ax = get_axes(ax)
    HistogramPanel(ax, xlabel=xlabel, ylabel=ylabel, legend=legend).show(samples, d_k, dist, title)
    return ax


def histogram_grid(samples: dict):
    """Small multiples of :func:`dot_product_histogram` from ``{dist: {d_k: samples}}`` (the same ``d_k``
    in every row): one row per distribution, one column per ``d_k``.
    """
    if not isinstance(samples, dict) or not samples:
        raise TypeError("samples must be a non-empty dict dist -> {d_k: samples}")
    dists = [check_dist("dist", d) for d in samples]
    d_ks = sorted(samples[dists[0]])
    for dist in dists:
        if not isinstance(samples[dist], dict) or sorted(samples[dist]) != d_ks:
            raise ValueError(f"every row needs the same d_k values {d_ks}; {dist!r} has "
                             f"{sorted(samples[dist]) if isinstance(samples[dist], dict) else samples[dist]!r}")
    fig, axes = new_figure(len(dists), len(d_ks), figsize=(2.6 * len(d_ks), 1.9 * len(dists) + 0.5),
                           squeeze=False)
    for i, dist in enumerate(dists):
        for j, d_k in enumerate(d_ks):
            ax = axes[i, j]
            dot_product_histogram(samples[dist][d_k], d_k, dist, ax=ax,
                                  title=f"$d_k$ = {d_k}" if i == 0 else "",
                                  xlabel=i == len(dists) - 1, ylabel=False, legend=False)
            if j == 0:
                ax.set_ylabel(f"{dist}\ndensity")
    with style():
        fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncol=2)
    return fig


def covariance_heatmap(C, ax=None, decimals: int = 2, row: str = "i", col: str = "j"):
    """An annotated heatmap of a covariance matrix ``C`` (d, d); ``row``, ``col`` name the indices.

    >>> [t.get_text() for t in covariance_heatmap(np.eye(2)).texts]
    ['1.00', '0.00', '0.00', '1.00']
    """
    C = _checks.real_array("C", C, min_ndim=2, shape_hint="(d, d)")
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] == 0:
        raise ValueError(f"C must be a square matrix (d, d), got shape {C.shape}")
    d = C.shape[0]
    ax = get_axes(ax, figsize=(1.6 + 0.6 * d, 1.0 + 0.5 * d))
    with style():
        image = ax.imshow(C, cmap="cividis", vmin=min(0.0, C.min()), vmax=max(1.0, C.max()))
        for (i, j), v in np.ndenumerate(C):
            ax.text(j, i, f"{round(float(v), decimals) + 0.0:.{decimals}f}", ha="center", va="center",
                    fontsize=8, color="black" if image.norm(v) > 0.55 else "white")
        ax.grid(False)
        ax.figure.colorbar(image, ax=ax, label="covariance")
        ax.set_xticks(range(d), [str(i + 1) for i in range(d)])
        ax.set_yticks(range(d), [str(i + 1) for i in range(d)])
        ax.set(xlabel=f"term ${col}$", ylabel=f"term ${row}$")
    return ax


def kurtosis_decay(d_ks, sample: dict, se: dict, theory: dict, ax=None):
    """``|excess kurtosis|`` of ``q . k`` against ``d_k`` on log-log axes: theory lines and simulated
    markers with ±2 SE, from ``{dist: (m,)}`` dicts; negative values (Rademacher) hollow.
    """
    d_arr = np.asarray([_checks.positive_int("d_k", d) for d in d_ks], dtype=float)
    ax = get_axes(ax, figsize=(7.6, 4.0))
    handles, labels = [], []
    with style():
        for dist in theory:
            st = DIST_STYLE[check_dist("dist", dist)]
            th = np.asarray(theory[dist], dtype=float)
            sm = np.asarray(sample[dist], dtype=float)
            er = np.asarray(se[dist], dtype=float)
            if th.shape != d_arr.shape or sm.shape != d_arr.shape or er.shape != d_arr.shape:
                raise ValueError(f"sample, se and theory for {dist!r} must each have {d_arr.size} values")
            negative = th[0] < 0
            (line,) = ax.plot(d_arr, np.abs(th), color=st["color"], linestyle=st["linestyle"])
            bars = ax.errorbar(d_arr, np.abs(sm), yerr=2 * er, color=st["color"], linestyle="none",
                               marker=st["marker"], markerfacecolor="white" if negative else st["color"],
                               capsize=2)
            handles.append((line, bars))
            labels.append(f"{dist} (negative)" if negative else dist)
        ax.set_yscale("log")
        set_d_k_axis(ax, d_max=int(d_arr.max()))
        ax.set(ylabel=r"$|$excess kurtosis of $q\cdot k|$",
               title=r"the excess kurtosis falls like $1/d_k$")
        ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.02, 0.5),
                  title="lines: theory\nmarkers: simulation\n± 2 SE", title_fontsize=8)
    return ax
