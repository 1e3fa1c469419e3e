"""Explorer for notebook 03: drag the matrix size n and watch the spread of a sample variance shrink."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import plots
from ..plots.small_samples import VarianceHistogramPanel, spread_vs_n
from ..small_samples import REL_BINS, SIZES, exact_relative_sd, relative_sample_variances
from . import Explorer

__all__ = ["VarianceSpreadExplorer"]


class VarianceSpreadExplorer(Explorer):
    """Left: histogram of ``s2 / n`` for ``n x n`` products (square-root y axis, fixed for every n).
    Right: its spread against n (log-log), the slider's n marked. Every n is simulated at construction."""

    figsize = (9.5, 3.6)
    main = "n"

    def __init__(self, **values):
        for n in SIZES:
            relative_sample_variances(n)  # simulate every n before the first frame (cached in the math layer)
        super().__init__(**values)

    def _controls(self):
        return {"n": W.SelectionSlider(options=list(SIZES), value=2, description="n",
                                       continuous_update=True, style={"description_width": "initial"},
                                       layout=W.Layout(width="360px"))}

    def _setup(self, fig):
        ax_h, ax_s = fig.subplots(1, 2)
        self.histogram = VarianceHistogramPanel(ax_h, REL_BINS, 1.0, sqrt_y=True, animated=True)
        self.histogram.mean_line.set_label("mean of the experiments")
        ax_h.set(xlabel=r"$s^2 / n$ (sample variance over the true variance $n$)",
                 title=r"$s^2/n$ over the experiments")
        ax_h.legend(loc="upper right")
        spread_vs_n(SIZES, None, ax=ax_s, n_max=max(SIZES), iid=False)
        (self.marker,) = ax_s.plot([], [], linestyle="none", marker="o", markersize=9, color=plots.OKABE_ITO["black"],
                                   animated=True, label="simulation at this $n$")
        ax_s.legend(loc="lower left")
        ax_s.set_title("spread of $s^2/n$ against $n$")

    def _update(self, n):
        r = relative_sample_variances(n)
        mean, sd = self.histogram.show(r), float(r.std(ddof=1))
        self.marker.set_data([n], [sd])
        return (f"n = {n}: each experiment pools the {n * n} entries of one {n}×{n} product. "
                f"Over {r.size} experiments, s²/n has mean {mean:.3f} (truth 1) and standard deviation "
                f"{sd:.3f} (exact theory {exact_relative_sd([n])[0]:.3f}). "
                f"{100 * np.mean(r > REL_BINS[-1]):.1f}% of the experiments fall beyond the right edge.")
