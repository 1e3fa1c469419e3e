"""Explorer for notebook 03: drag the matrix size n and watch the spread of a sample variance shrink.

- :class:`VarianceSpreadExplorer` -- histogram of ``s2 / n`` for the slider's n, and where its
  spread sits on the log-log curve of spread against n. The numbers come from
  :mod:`sdpa_helpers.small_samples` (cached simulations, exact and i.i.d. spreads).
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import plots
from ..plots import small_samples as small_samples_plots
from ..small_samples import (
    REL_BINS,
    SIZES,
    bin_fractions,
    exact_relative_sd,
    relative_sample_variances,
)
from . import Explorer

__all__ = ["VarianceSpreadExplorer"]


def _sqrt(y):
    return np.sqrt(np.clip(y, 0, None))


class VarianceSpreadExplorer(Explorer):
    """Left: histogram of ``s2 / n`` for ``n x n`` products. Right: its spread against n (log-log).

    Construction simulates every n once (cached in :mod:`sdpa_helpers.small_samples`); the
    histogram's y axis is fixed for every n (square-root scale, so that both the wide
    histogram of n = 2 and the spike of n = 256 read), so one background serves every n and
    each slider move only blits the moving parts.
    """

    figsize = (9.5, 3.6)
    main = "n"

    def __init__(self, **values):
        for n in SIZES:
            relative_sample_variances(n)  # simulate every n before the first frame
        super().__init__(**values)

    def _controls(self):
        return {"n": W.SelectionSlider(options=list(SIZES), value=2, description="n",
                                       continuous_update=True, style={"description_width": "initial"},
                                       layout=W.Layout(width="360px"))}

    def _setup(self, fig):
        self.ax_h, self.ax_s = fig.subplots(1, 2)
        bins = REL_BINS
        self.stairs = self.ax_h.stairs(np.zeros(len(bins) - 1), bins, fill=True, color=plots.SCALED["color"],
                                       alpha=0.6, animated=True)
        self.ax_h.axvline(1.0, **small_samples_plots.TRUTH, label="true value 1")
        self.mean_line = self.ax_h.axvline(1.0, color=plots.SCALED["color"], linestyle="--", linewidth=1.5,
                                           animated=True, label="mean of the experiments")
        self.ax_h.set_xlim(bins[0], bins[-1])
        self.ax_h.set_yscale("function", functions=(_sqrt, np.square))
        self.ax_h.set_ylim(0, 1)
        self.ax_h.set_yticks([0, 0.01, 0.05, 0.1, 0.25, 0.5, 1])
        self.ax_h.set(xlabel=r"$s^2 / n$ (sample variance over the true variance $n$)",
                      ylabel="fraction of experiments (√ scale)")
        self.ax_h.legend(loc="upper right")
        self.ax_h.set_title(r"$s^2/n$ over the experiments")
        small_samples_plots.spread_vs_n(SIZES, None, ax=self.ax_s, n_max=max(SIZES), iid=False)
        (self.marker,) = self.ax_s.plot([], [], linestyle="none", marker="o", markersize=9,
                                        color=plots.OKABE_ITO["black"], animated=True,
                                        label="simulation at this $n$")
        self.ax_s.legend(loc="lower left")
        self.ax_s.set_title("spread of $s^2/n$ against $n$")

    def _update(self, n):
        r = relative_sample_variances(n)
        fractions = bin_fractions(r, REL_BINS)
        self.stairs.set_data(fractions)
        mean, sd = float(r.mean()), float(r.std(ddof=1))
        self.mean_line.set_xdata([mean, mean])
        exact = exact_relative_sd([n])[0]
        self.marker.set_data([n], [sd])
        outside = float(np.mean(r > REL_BINS[-1]))
        return (f"n = {n}: each experiment pools the {n * n} entries of one {n}×{n} product. "
                f"Over {r.size} experiments, s²/n has mean {mean:.3f} (truth 1) and standard deviation "
                f"{sd:.3f} (exact theory {exact:.3f}). "
                f"{100 * outside:.1f}% of the experiments fall beyond the right edge.")
