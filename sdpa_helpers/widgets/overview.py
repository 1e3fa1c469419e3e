"""Explorer for notebook 00: :class:`ThreeEffectsExplorer`, drag d_k and watch the logits' spread,
the softmax weights and the Jacobian's size, unscaled vs scaled. Every slider position is computed
once at construction (:mod:`sdpa_helpers.overview`); a move only swaps the artists' data.
"""

from __future__ import annotations

from .. import overview
from ..plots.overview import EffectsPanels
from ..sampling import histogram_density
from . import Explorer, d_k_slider

__all__ = ["ThreeEffectsExplorer"]


class ThreeEffectsExplorer(Explorer):
    """Unscaled vs scaled at the slider's d_k: logits, softmax weights, softmax Jacobian."""

    figsize = (12.5, 3.1)
    seed = 0

    def _controls(self):
        return {"d_k": d_k_slider(64, choices=overview.D_KS)}

    def _setup(self, fig):
        d_ks = overview.D_KS
        self.rows = {name: dict(zip(d_ks, overview.effects_by_d_k(d_ks, name, seed=self.seed)))
                     for name in overview.COMPARED}
        edges_u = overview.spread_edges(max(d_ks))
        # Histograms of every d_k, once: a slider move draws, it does not count.
        self.density_u = {d: histogram_density(self.rows["unscaled"][d].logits, edges_u) for d in d_ks}
        self.density_s = {d: histogram_density(self.rows["sqrt"][d].logits, overview.SCALED_EDGES)
                          for d in d_ks}
        bands = {name: overview.jacobian_norm_bands(tuple(self.rows[name][d] for d in d_ks))
                 for name in overview.COMPARED}
        fig.set_layout_engine("none")  # fixed margins: no constrained-layout pass at build time
        axes = fig.subplots(1, 4, gridspec_kw={"left": 0.055, "right": 0.99, "bottom": 0.16, "top": 0.9,
                                               "wspace": 0.32})
        self.panels = EffectsPanels(axes, d_ks, bands, overview.N_KEYS, max(d_ks),
                                    animated=True, annotate=False)

    def _update(self, d_k):
        u, s = self.rows["unscaled"][d_k], self.rows["sqrt"][d_k]
        self.panels.show(u, s, self.density_u[d_k], self.density_s[d_k])
        j_u, j_s = (float(overview.jacobian_norm_bands((r,), (0.5,))[0, 0]) for r in (u, s))
        return (f"<b>d_k = {d_k}</b>: the unscaled logits spread about √{d_k} = {d_k ** 0.5:.1f} "
                f"(here {u.logits.std():.1f}; scaled {s.logits.std():.2f}). "
                f"Mean largest of {overview.N_KEYS} weights {float(u.max_weight.mean):.2f} unscaled vs "
                f"{float(s.max_weight.mean):.2f} scaled; median size of J {j_u:.2g} vs {j_s:.2f} "
                f"(unscaled ÷ scaled {j_u / j_s:.2g}).")
