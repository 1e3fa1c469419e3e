"""Explorer for notebook 07: attention weights of random queries and keys, unscaled vs scaled."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np

from .. import plots
from ..attention import causal_mask, scaled_dot_product_attention
from ..plots.attention_maps import WEIGHTS_NORM, add_weights_colorbar, label_heatmap
from ..sampling import make_rng
from . import Explorer, d_k_slider, seed_slider

__all__ = ["AttentionMapExplorer", "attention_weights"]


@lru_cache(maxsize=256)
def _queries_keys(d_k: int, length: int, seed: int):
    """Unit-variance Q and K, both (length, d_k), for one (d_k, length, seed); cached."""
    rng = make_rng(seed)
    return rng.standard_normal((length, d_k)), rng.standard_normal((length, d_k))


@lru_cache(maxsize=512)
def attention_weights(d_k: int, length: int, seed: int, causal: bool):
    """Unscaled and scaled attention weights, each (length, length), of cached random Q and K.

    >>> u, s = attention_weights(64, 8, 0, True)
    >>> u.shape, bool((u[0, 1:] == 0).all())
    ((8, 8), True)
    """
    Q, K = _queries_keys(d_k, length, seed)
    V = np.zeros((length, 1))  # the weights do not depend on V
    mask = causal_mask(length) if causal else None
    _, unscaled = scaled_dot_product_attention(Q, K, V, mask=mask, scale=1.0)
    _, scaled = scaled_dot_product_attention(Q, K, V, mask=mask)
    return unscaled, scaled


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
        self.ax_u, self.ax_s = fig.subplots(1, 2)
        blank = np.zeros((4, 4))
        self.images = []
        for ax in (self.ax_u, self.ax_s):
            image = ax.imshow(blank, cmap=plots.HEATMAP_CMAP, norm=WEIGHTS_NORM, interpolation="nearest",
                              aspect="equal", animated=True)
            self.images.append(image)
            ax.set(xlabel="key $j$", ylabel="query $i$")
            ax.grid(False)
        self.title_u = self.ax_u.set_title(" ", animated=True, color=plots.UNSCALED["color"])
        self.title_s = self.ax_s.set_title(" ", animated=True, color=plots.SCALED["color"])
        add_weights_colorbar(fig, [self.ax_u, self.ax_s])

    def _background_key(self, d_k, length, causal, seed):
        return length  # the axes' extent and ticks follow the sequence length

    def _update(self, d_k, length, causal, seed):
        unscaled, scaled = attention_weights(d_k, length, seed, bool(causal))
        extent = (-0.5, length - 0.5, length - 0.5, -0.5)
        for ax, image, w in ((self.ax_u, self.images[0], unscaled), (self.ax_s, self.images[1], scaled)):
            image.set_data(w)
            image.set_extent(extent)
            ax.set_xlim(extent[0], extent[1])
            ax.set_ylim(extent[2], extent[3])
            label_heatmap(ax, length, length)
        max_u, max_s = unscaled.max(axis=1).mean(), scaled.max(axis=1).mean()
        self.title_u.set_text(f"unscaled: mean max weight {max_u:.2f}")
        self.title_s.set_text(f"scaled by 1/√d_k: mean max weight {max_s:.2f}")
        # uniform rows: 1/length each, or 1/(i+1) on row i under the causal mask
        uniform = np.mean(1.0 / np.arange(1, length + 1)) if causal else 1.0 / length
        return (f"d_k = {d_k}, length {length}{', causal' if causal else ''}: mean over rows of the "
                f"largest weight <b>{max_u:.2f}</b> unscaled vs <b>{max_s:.2f}</b> scaled "
                f"(1 = one-hot rows; uniform rows would give {uniform:.2f}).")
