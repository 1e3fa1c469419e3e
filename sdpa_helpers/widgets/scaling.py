"""Explorer for notebook 04: drag d_k and compare no scaling, 1/sqrt(d_k) and 1/d_k.

- :class:`ScalingExplorer` -- left: where the three logit standard deviations sit on their
  log-log lines; right: one query's softmax weights over ``N_KEYS`` keys for each scaling.
  The numbers come from :mod:`sdpa_helpers.scaling` (exact draws, cached).
"""

from __future__ import annotations

import numpy as np

from ..attention import entropy
from ..plots import SCALING_STYLES
from ..plots import scaling as scaling_plots
from ..scales import SCALINGS, scale_factor
from ..scaling import D_KS, N_KEYS, logit_std, query_weights
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
        self.markers = {}
        for name in SCALINGS:
            spec = SCALING_STYLES[name]
            (self.markers[name],) = self.ax_std.plot([], [], linestyle="none", marker=spec["marker"], markersize=10,
                                                     color=spec["color"], markeredgecolor="black", animated=True)
        # the same panel as notebook 04's figure
        self.weights_panel = scaling_plots.SortedWeightsPanel(self.ax_w, SCALINGS, N_KEYS, animated=True)
        self.lines = self.weights_panel.lines
        self.ax_w.axhline(1 / N_KEYS, color="black", linewidth=1, linestyle=(0, (1, 3)))
        self.ax_w.set_xlim(0.5, N_KEYS + 0.5)
        self.ax_w.legend(loc="upper right")
        self.ax_w.set_title(f"one query, {N_KEYS} keys")

    def _update(self, d_k):
        sd = logit_std(d_k)
        weights = query_weights(d_k)
        parts = []
        self.weights_panel.show(weights)
        for name in SCALINGS:
            c = scale_factor(name, d_k)
            self.markers[name].set_data([d_k], [c * sd])
            parts.append(f"{_PLAIN[name]}: logit std {c * sd:.3g}, "
                         f"largest weight {weights[name][0]:.2f}, entropy {float(entropy(weights[name])):.2f}")
        return (f"d_k = {d_k} (uniform weights would be 1/{N_KEYS} = {1 / N_KEYS:.4f}; "
                f"entropy at most ln {N_KEYS} = {np.log(N_KEYS):.2f}).<br>" + "<br>".join(parts))
