"""Explorer for notebook 04: drag d_k and compare no scaling, 1/sqrt(d_k) and 1/d_k.

- :class:`ScalingExplorer` -- left, where the three logit spreads sit on their log-log lines; right,
  the softmax weights over ``N_KEYS`` keys by rank for each scaling: the median over 2000 queries
  and the middle 80 % of them. Drawn by the panels of :mod:`sdpa_helpers.plots.scaling`.
"""

from __future__ import annotations

from ..plots.scaling import LogitStdPanel, SortedWeightsPanel
from ..scales import SCALINGS, scale_factor
from ..scaling import D_KS, N_BAND_QUERIES, N_KEYS, logit_std, weight_bands
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
        ax_std, ax_w = fig.subplots(1, 2)
        # every d_k's numbers once (about 15 ms each), so no first visit pays for them
        self.data = {d: (logit_std(d), weight_bands(d)) for d in D_KS}
        self.std_panel = LogitStdPanel(ax_std, animated=True)
        ax_std.set_title("standard deviation of the logits")
        self.weights_panel = SortedWeightsPanel(ax_w, SCALINGS, N_KEYS, banded=True, animated=True,
                                                title=f"{N_BAND_QUERIES} queries, {N_KEYS} keys: median, 10-90 % band")
        ax_w.legend(loc="upper right")

    def _update(self, d_k):
        sd, bands = self.data[d_k]  # bands: name -> (3, N_KEYS), 10th, 50th, 90th percentile per rank
        stds = {name: [scale_factor(name, d_k) * sd] for name in SCALINGS}
        self.std_panel.show([d_k], stds)
        self.weights_panel.show(bands)
        parts = [f"{_PLAIN[name]}: logit std {stds[name][0]:.3g}, largest weight: median {bands[name][1, 0]:.2f}, "
                 f"middle 80 % of queries {bands[name][0, 0]:.2f} to {bands[name][2, 0]:.2f}" for name in SCALINGS]
        return f"d_k = {d_k} (uniform weights would be 1/{N_KEYS} = {1 / N_KEYS:.4f}).<br>" + "<br>".join(parts)
