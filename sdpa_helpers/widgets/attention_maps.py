"""Explorer for notebook 07: attention weights of random queries and keys, unscaled vs scaled."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..attention import causal_mask, random_attention_weights
from ..plots.attention_maps import WeightsHeatmaps, add_weights_colorbar
from . import Explorer, d_k_slider, seed_slider

__all__ = ["AttentionMapExplorer"]


class AttentionMapExplorer(Explorer):
    """Heatmaps of softmax(QKᵀ) (left) and softmax(QKᵀ/√d_k) (right) for random unit-variance Q, K."""

    figsize = (9.0, 4.2)

    def _controls(self):
        return {
            "d_k": d_k_slider(64),
            "length": W.IntSlider(value=12, min=4, max=32, step=4, description="length",
                                  continuous_update=True, style={"description_width": "initial"}),
            "causal": W.Checkbox(value=False, description="causal mask"),
            "seed": seed_slider(0),
        }

    def _setup(self, fig):
        # every length on the same square (the largest length's): a move redraws the two images only
        axes = fig.subplots(1, 2)
        self.heatmaps = WeightsHeatmaps(axes, n_max=self.controls["length"].max, animated=True)
        add_weights_colorbar(fig, axes)
        self.title = fig.suptitle(" ", animated=True, fontsize=10)  # the controls' values, in the picture

    def _update(self, d_k, length, causal, seed):
        unscaled, scaled = random_attention_weights(d_k, length, seed, bool(causal))
        self.heatmaps.show(unscaled, scaled, d_k, causal_mask(length) if causal else None)  # masked cells: grey
        self.title.set_text(f"d_k = {d_k}, length {length}, {'causal mask' if causal else 'no mask'}")
        max_u, max_s = unscaled.max(axis=1).mean(), scaled.max(axis=1).mean()
        # uniform rows: 1/length each, or 1/(i+1) on row i under the causal mask
        uniform = np.mean(1.0 / np.arange(1, length + 1)) if causal else 1.0 / length
        return (f"d_k = {d_k}, length {length}{', causal' if causal else ''}: mean over rows of the "
                f"largest weight <b>{max_u:.2f}</b> unscaled vs <b>{max_s:.2f}</b> scaled "
                f"(1 = one-hot rows; uniform rows would give {uniform:.2f}).")
