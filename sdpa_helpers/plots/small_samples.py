"""Figures for notebook 03: a sample variance is itself random (:class:`VarianceHistogramPanel`, shared
by the static figure and the explorer), its spread against n, and two logits whose sizes move together."""

from __future__ import annotations

import numpy as np

from .. import _checks
from ..small_samples import bin_fractions, exact_relative_sd, iid_relative_sd
from . import OKABE_ITO, SCALED, get_axes, set_d_k_axis, style

__all__ = ["VarianceHistogramPanel", "variance_histogram", "spread_vs_n", "conditional_spread"]

TRUTH = {"color": OKABE_ITO["black"], "linestyle": "-", "linewidth": 1.5}
EXACT = {"color": OKABE_ITO["blue"], "linestyle": "-", "label": "exact (entries share rows/columns)"}
IID = {"color": OKABE_ITO["orange"], "linestyle": "--", "label": "i.i.d. formula"}


class VarianceHistogramPanel:
    """Histogram (fraction per bin over ``bins``) of sample variances, ``true_var`` (solid black) and their mean
    (dashed) marked; the static figure (:func:`variance_histogram`) and the explorer draw through it.

    ``sqrt_y``: a square-root y axis fixed to 0..1 (a wide histogram and a spike both read); ``animated``: for the
    explorer's blitting.
    """

    def __init__(self, ax, bins, true_var: float, color=None, sqrt_y: bool = False, animated: bool = False):
        self.ax, self.bins, self.sqrt_y = ax, bins, sqrt_y
        color = color or SCALED["color"]
        with style():
            self.stairs = ax.stairs(np.zeros(len(bins) - 1), bins, fill=True, color=color, alpha=0.55,
                                    animated=animated)
            ax.axvline(true_var, **TRUTH, label=f"true variance {true_var:g}")
            self.mean_line = ax.axvline(true_var, color=color, linestyle="--", linewidth=1.5, animated=animated)
            ax.set_xlim(float(bins[0]), float(bins[-1]))
            ax.set(ylabel="fraction of experiments")
            if sqrt_y:
                ax.set_yscale("function", functions=(lambda y: np.sqrt(np.clip(y, 0, None)), np.square))
                ax.set_ylim(0, 1)
                ax.set_yticks([0, 0.01, 0.05, 0.1, 0.25, 0.5, 1])
                ax.set_ylabel("fraction of experiments (√ scale)")

    def show(self, s2) -> float:
        """Put the sample variances ``s2`` (n_reps,) in; returns their mean."""
        self.stairs.set_data(bin_fractions(s2, self.bins))
        mean = float(s2.mean())
        self.mean_line.set_xdata([mean, mean])
        if not self.sqrt_y:  # the y axis follows the bars (the explorer's stays fixed)
            self.ax.relim()
            self.ax.autoscale_view(scalex=False)
        return mean


def variance_histogram(s2, true_var: float, bins=None, ax=None, color=None, label: str = "",
                       xlabel: str = r"sample variance $s^2$", marks: dict | None = None):
    """Histogram (fraction per bin) of sample variances ``s2`` (n_reps,) through a :class:`VarianceHistogramPanel`,
    with a legend: ``true_var`` (solid), the mean (dashed, named by ``label``), ``marks`` (label -> value, dotted).
    ``bins`` default 48 over ``[0, 6 true_var]``. Returns the Axes.
    """
    s2 = _checks.real_array("s2", s2, min_ndim=1, shape_hint="(n_reps,)")
    true_var = _checks.positive("true_var", true_var)
    bins = np.linspace(0.0, 6.0 * true_var, 49) if bins is None else _checks.real_array("bins", bins, min_ndim=1)
    ax = get_axes(ax)
    panel = VarianceHistogramPanel(ax, bins, true_var, color)
    mean = panel.show(s2)
    with style():
        panel.mean_line.set_label(f"mean{' of ' + label if label else ''}: {mean:.2f}")
        for text, value in (marks or {}).items():
            ax.axvline(_checks.real(f"marks[{text!r}]", value), color=OKABE_ITO["reddish_purple"],
                       linestyle=(0, (1, 1.5)), linewidth=2, label=str(text))
        ax.set_xlabel(xlabel)
        ax.legend(loc="upper right")
    return ax


def spread_vs_n(ns, sim_sd=None, ax=None, n_max: int = 256, sim_se=None, iid: bool = True):
    """Log-log: SD of ``s2 / n`` against the matrix size n: the exact theory (solid) and, if ``iid``, the i.i.d.
    formula (dashed) for n = 2 ... ``n_max``; simulated ``sim_sd`` at ``ns`` as dots, with +-2 ``sim_se`` bars if
    given (one value per n). Returns the Axes.
    """
    n_max = _checks.positive_int("n_max", n_max)
    if sim_sd is not None and len(sim_sd) != len(ns):
        raise ValueError(f"sim_sd must have one value per n: got {len(sim_sd)} values for {len(ns)} sizes")
    if sim_se is not None and (sim_sd is None or len(sim_se) != len(ns)):
        raise ValueError("sim_se must have one value per n, and needs sim_sd")
    ax = get_axes(ax)
    grid = 2 ** np.arange(1, int(np.log2(n_max)) + 1)
    with style():
        ax.plot(grid, exact_relative_sd(grid), **EXACT)
        if iid:
            ax.plot(grid, iid_relative_sd(grid), **IID)
        if sim_sd is not None:
            label = "measured" if sim_se is None else "measured ± 2 Monte Carlo errors"
            yerr = None if sim_se is None else 2 * np.asarray(sim_se, dtype=float)
            ax.errorbar(ns, sim_sd, yerr=yerr, linestyle="none", marker="o", color=OKABE_ITO["black"],
                        capsize=3, label=label)
        set_d_k_axis(ax, d_max=n_max, label=r"matrix size $n$ ($n\times n$ @ $n\times n$)")
        ax.set_xticks(grid)
        ax.set_yscale("log")
        ax.set(ylabel=r"SE of $s^2/n$ (its SD over runs)")
        ax.legend(loc="lower left")
    return ax


def conditional_spread(s_ij, s_ik, d_k: int, ax=None, bins=None, color=None, min_count: int = 50):
    """RMS of ``S_ik / sqrt(d_k)`` among pairs whose ``|S_ij| / sqrt(d_k)`` falls in each bin (two logits of one
    query): flat at 1 (dashed) if independent; it rises because a long shared ``q_i`` makes both large.

    ``s_ij``, ``s_ik`` (n,); ``bins`` default 14 over [0, 3.5]; bins with fewer than ``min_count`` pairs are left
    out. Returns the Axes.
    """
    s_ij = _checks.real_array("s_ij", s_ij, min_ndim=1, shape_hint="(n,)")
    s_ik = _checks.real_array("s_ik", s_ik, min_ndim=1, shape_hint="(n,)")
    if s_ij.shape != s_ik.shape:
        raise ValueError(f"s_ij and s_ik must have the same shape, got {s_ij.shape} and {s_ik.shape}")
    d_k = _checks.positive_int("d_k", d_k)
    bins = np.linspace(0.0, 3.5, 15) if bins is None else _checks.real_array("bins", bins, min_ndim=1)
    ax = get_axes(ax)
    x, y = np.abs(s_ij) / np.sqrt(d_k), s_ik / np.sqrt(d_k)
    which = np.digitize(x, bins) - 1  # bin index of every pair
    centres, rms = [], []
    for b in range(len(bins) - 1):
        sel = which == b
        if sel.sum() >= min_count:
            centres.append(0.5 * (bins[b] + bins[b + 1]))
            rms.append(np.sqrt(np.mean(y[sel] ** 2)))
    with style():
        if not any(line.get_label() == "independent" for line in ax.lines):
            ax.axhline(1.0, color=OKABE_ITO["black"], linestyle="--", linewidth=1, label="independent")
        ax.plot(centres, rms, marker="o", markersize=4, color=color, label=f"$d_k$ = {d_k}")
        ax.set_xlim(float(bins[0]), float(bins[-1]))
        ax.set(xlabel=r"$|S_{ij}|/\sqrt{d_k}$ (size of one logit)",
               ylabel=r"RMS of $S_{ik}/\sqrt{d_k}$ (the other logit)")
        ax.legend(loc="upper left")
    return ax
