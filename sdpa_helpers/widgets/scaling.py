"""Explorer for notebook 04: drag d_k and compare no scaling, 1/sqrt(d_k) and 1/d_k.

- :class:`ScalingExplorer` -- left: where the three logit standard deviations sit on their
  log-log lines; right: the softmax weights over ``N_KEYS`` keys, by rank, for each scaling: the
  median over 2000 queries and the band holding the middle 80 % of them.
  The numbers come from :mod:`sdpa_helpers.scaling` (exact draws, cached).
"""

from __future__ import annotations

import numpy as np

from ..plots import SCALING_STYLES
from ..plots import scaling as scaling_plots
from ..scales import SCALINGS, scale_factor
from ..scaling import D_KS, N_KEYS, band_polygon, logit_std, weight_bands
from . import Explorer, d_k_slider

__all__ = ["ScalingExplorer"]

_PLAIN = {"unscaled": "unscaled", "sqrt": "scaled by 1/√d_k", "inv_d": "scaled by 1/d_k"}


class ScalingExplorer(Explorer):
    """Drag d_k: the three logit spreads on their log-log lines, and what each does to the softmax."""

    figsize = (10.0, 3.9)
    main = "d_k"

    def _controls(self):
        return {"d_k": d_k_slider(64, choices=D_KS)}

    def _setup(self, fig):
        self.ax_std, self.ax_w = fig.subplots(1, 2)
        scaling_plots.logit_std_vs_d_k(ax=self.ax_std)
        self.ax_std.set_title("standard deviation of the logits")
        self.markers, self.lines, self.bands = {}, {}, {}
        ranks = np.arange(1, N_KEYS + 1)
        for name in SCALINGS:
            spec = SCALING_STYLES[name]
            (self.markers[name],) = self.ax_std.plot([], [], linestyle="none", marker=spec["marker"], markersize=10,
                                                     color=spec["color"], markeredgecolor="black", animated=True)
            (self.lines[name],) = self.ax_w.plot(ranks, np.full(N_KEYS, 1 / N_KEYS), color=spec["color"],
                                                 linestyle=spec["linestyle"], marker=spec["marker"], markersize=4,
                                                 label=spec["label"], animated=True)
            (self.bands[name],) = self.ax_w.fill(*band_polygon(np.zeros(N_KEYS), np.zeros(N_KEYS)).T,
                                                 color=spec["color"], alpha=0.2, linewidth=0, animated=True)
        self.ax_w.axhline(1 / N_KEYS, color="black", linewidth=1, linestyle=(0, (1, 3)))
        self.ax_w.set(xlabel=r"key, sorted by $q\cdot k$", ylabel="softmax weight", ylim=(0, 1.02),
                      xlim=(0.5, N_KEYS + 0.5))
        self.ax_w.legend(loc="upper right")
        self.title = self.ax_w.set_title(" ", animated=True)
        for d_k in D_KS:  # about 15 ms each: computed once here, so no first visit of a d_k pays for it
            weight_bands(d_k)

    def _update(self, d_k):
        sd = logit_std(d_k)
        bands = weight_bands(d_k)  # name -> (3, N_KEYS): 10th, 50th, 90th percentile per rank
        parts = []
        for name in SCALINGS:
            c = scale_factor(name, d_k)
            self.markers[name].set_data([d_k], [c * sd])
            self.lines[name].set_ydata(bands[name][1])
            self.bands[name].set_xy(band_polygon(bands[name][0], bands[name][2]))
            low, median, high = bands[name][:, 0]
            parts.append(f"{_PLAIN[name]}: logit std {c * sd:.3g}, largest weight: median {median:.2f}, "
                         f"middle 80 % of queries {low:.2f} to {high:.2f}")
        self.title.set_text(f"2000 queries, {N_KEYS} keys, $d_k$ = {d_k}: median, 10-90 % band")
        return f"d_k = {d_k} (uniform weights would be 1/{N_KEYS} = {1 / N_KEYS:.4f}).<br>" + "<br>".join(parts)
