"""Explorer for notebook 06: :class:`JacobianExplorer`, the softmax Jacobian ``diag(p) - p p^T`` of one
query (heatmaps, unscaled vs scaled) and its Frobenius norm against the Monte Carlo curves as d_k grows.
It opens on a typical query (:func:`sdpa_helpers.gradients.typical_query_seed` at :data:`TYPICAL_AT`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.ticker import FuncFormatter

from ..gradients import gradient_curves, jacobian_panels, typical_query_seed
from ..plots import gradients as gradients_plots
from ..saturation import prefix_logits
from ..scales import D_K_CHOICES
from . import Explorer, d_k_slider, seed_slider

__all__ = ["JacobianExplorer"]

#: Queries averaged per d_k in the explorer's curves, and their seed.
N_QUERIES = 2000
CURVE_SEED = 2024
#: The d_k the explorer opens at.
DEFAULT_D_K = 64
#: The d_k at which its opening query is typical (notebook 06's heatmap panels).
TYPICAL_AT = (1, 16, 256, 4096)
#: Smallest norm shown on the log axis; smaller values sit on the bottom edge.
NORM_FLOOR = 1e-16


_SCALES = ("unscaled", "sqrt")


@lru_cache(maxsize=8)
def _one_query(seed: int, n_keys: int):
    """One query against ``n_keys`` keys at every d_k of the slider: its Jacobians and their norms,
    unscaled and scaled (a :class:`~sdpa_helpers.gradients.JacobianPanels`), computed once per seed."""
    return jacobian_panels(D_K_CHOICES, prefix_logits(D_K_CHOICES, n_keys, rng=seed), scales=_SCALES)


@lru_cache(maxsize=4)
def _curves(n_keys: int):
    """Monte Carlo ``||J||_F`` curves (unscaled, scaled): computed once, not per move."""
    return tuple(gradient_curves(D_K_CHOICES, n_keys, N_QUERIES, scale=s, rng=CURVE_SEED).jacobian_norm
                 for s in _SCALES)


class JacobianExplorer(Explorer):
    """The Jacobian of one query's softmax over ``n_keys`` keys, unscaled (left) and scaled (middle),
    and its Frobenius norm against d_k (right: marker = this query, lines = mean and median)."""

    figsize = (11.0, 3.7)
    main = "d_k"
    n_keys = 8

    def _controls(self):
        typical = typical_query_seed(D_K_CHOICES, TYPICAL_AT, self.n_keys, seeds=range(99))
        return {"d_k": d_k_slider(DEFAULT_D_K), "seed": seed_slider(typical)}

    def _setup(self, fig):
        grid = fig.add_gridspec(1, 3, width_ratios=(1.0, 1.0, 1.25))
        self.ax_u, self.ax_s, self.ax_norm = (fig.add_subplot(grid[0, i]) for i in range(3))
        # the same heatmaps as notebook 06's figure; the changing numbers go to the readout
        self.heatmaps = gradients_plots.JacobianHeatmaps((self.ax_u, self.ax_s), _SCALES, self.n_keys,
                                                         numbers_in_titles=False, animated=True)
        self.heatmaps.colorbar(ax=self.ax_s, shrink=0.85)
        unscaled, scaled = _curves(self.n_keys)
        self.norms = gradients_plots.NormPanel(self.ax_norm, gradients_plots.NORM_LABELS[0], D_K_CHOICES,
                                               unscaled, scaled, ylim=(NORM_FLOOR, 1.0), animated=True)
        # plain "1e-8" tick labels: eight mathtext powers of ten cost a visible part of the build
        power_of_ten = FuncFormatter(lambda v, _: f"1e{round(np.log10(v)):d}" if v < 1 else "1")
        self.ax_norm.yaxis.set_major_formatter(power_of_ten)
        self.ax_norm.set_title(f"this query (star) vs {N_QUERIES} random queries")
        self.ax_norm.legend(loc="lower left", fontsize=8)

    def _update(self, d_k, seed):
        panels, col = _one_query(seed, self.n_keys), D_K_CHOICES.index(d_k)
        # accurate even where J's top diagonal entry rounds to 0
        norms = [float(v) for v in panels.frobenius[:, col]]
        self.heatmaps.show(panels.jacobian[:, col], norms, d_k)
        self.norms.show(d_k, norms)
        floor = (f" (below the axis floor {NORM_FLOOR:.0e}: its star sits on the bottom edge)"
                 if norms[0] < NORM_FLOOR else "")
        tie = (" Here unscaled is not smaller: this query's two largest logits are nearly tied, so its "
               "unscaled softmax is not saturated. Such near ties are rare (compare the mean and median lines)."
               if norms[0] >= norms[1] and d_k > 1 else "")
        return (f"d_k = {d_k}, {self.n_keys} keys, this query: ‖J‖_F = {norms[0]:.3g} unscaled{floor}, "
                f"{norms[1]:.3g} scaled. The gradient reaching the logits is J·g, so it is at most "
                f"‖J‖_F·‖g‖.{tie}")
