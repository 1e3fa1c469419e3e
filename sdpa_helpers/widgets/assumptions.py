"""Explorers for notebook 08: what initialisation does to the logits, and what correlation does."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import assumptions as A
from ..assumptions import D_MODEL_CHOICES, INIT_D_K, init_scaled_logits_exact
from ..plots.assumptions import CorrelatedHistogramPanel, CorrelatedMeanPanel, InitVariancePanel, LogitHistogramPanel
from ..scales import scale_factor
from . import D_K_CHOICES, Explorer, d_k_slider

__all__ = ["InitExplorer", "CorrelationExplorer"]

_PROJECTION_LABELS = {
    "one head: d_model → d_k": "head",
    "all heads: d_model → d_model": "all_heads",
    "fused QKV: d_model → 3·d_model": "fused_qkv",
}


class InitExplorer(Explorer):
    """Scaled logits at initialisation for a chosen d_model, initialisation and projection shape
    (:func:`sdpa_helpers.assumptions.init_scaled_logits_exact`: exact, drawn once; a move rescales and redraws)."""

    figsize = (10.0, 3.8)
    d_k = INIT_D_K
    seed = 0
    main = "d_model"

    def _controls(self):
        return {
            "d_model": W.SelectionSlider(options=list(D_MODEL_CHOICES), value=512, description="d_model",
                                         continuous_update=True, style={"description_width": "initial"},
                                         layout=W.Layout(width="360px")),
            "init": W.Dropdown(options=[(A.INIT_LABELS[s], s) for s in A.INITS], value="pytorch_default",
                               description="init", layout=W.Layout(width="360px")),
            "projection": W.Dropdown(options=list(_PROJECTION_LABELS.items()), value="head",
                                     description="projection", style={"description_width": "initial"},
                                     layout=W.Layout(width="330px")),
        }

    def _setup(self, fig):
        ax_h, ax_v = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1.0]})
        self.histogram = LogitHistogramPanel(ax_h, ylim=(0, 1.3), animated=True)
        ax_h.legend(loc="upper right", fontsize=8)
        ax_h.set_title("the logit: simulation and theory (numbers below)", fontsize=10)
        self.variance = InitVariancePanel(ax_v, D_MODEL_CHOICES, ["theory"], animated=True)
        self.variance.markers["theory"].set_label("simulation")
        ax_v.set_ylim(2e-4, 20)
        ax_v.set(ylabel=r"Var$(q\cdot k/\sqrt{d_k})$", title=f"$d_k$ = {self.d_k}, LayerNormed tokens")
        ax_v.legend(loc="lower right", fontsize=8)

    def _update(self, d_model, init, projection):  # type: ignore[override]
        # one exact sample (independent networks, O(n) whatever the width), cached in the math layer
        s = init_scaled_logits_exact(init, d_model, projection, self.d_k, seed=self.seed)  # (2048,)
        fan_out = A.projection_fan_out(projection, d_model, self.d_k)
        theory = A.init_logit_moments(init, d_model, self.d_k, fan_out=fan_out, scale=self.d_k ** -0.5)
        var_q = A.query_variance(init, d_model, fan_out)
        self.histogram.show(s, theory.var)
        curve = [A.init_logit_moments(init, d, self.d_k, fan_out=A.projection_fan_out(projection, d, self.d_k),
                                      scale=self.d_k ** -0.5).var for d in D_MODEL_CHOICES]
        estimate, se = (s**2).mean(), (s**2).std(ddof=1) / np.sqrt(s.size)  # independent samples
        self.variance.show("theory", curve, [d_model], [estimate])  # its SE goes to the readout
        return (f"d_model = {d_model}, fan_out = {fan_out}: Var(W) = "
                f"{A.init_weight_variance(init, d_model, fan_out):.3g}, Var(q_i) = d_model·Var(W) = "
                f"<b>{var_q:.3f}</b>; Var(q·k/√d_k) = Var(q_i)² = <b>{theory.var:.3f}</b> "
                f"(simulation {estimate:.3f} ± {se:.3f} SE).")


class CorrelationExplorer(Explorer):
    """A key correlated with the query (rho) vs an unrelated key. Left: histograms of ``q . k / sqrt(d_k)``
    (the correlated key's logit runs away to ``rho sqrt(d_k)``); right: its mean against d_k under 1/√d_k
    and 1/d_k (lines: theory; markers: simulation at this d_k). Every axis is fixed."""

    figsize = (10.0, 3.8)
    n_samples = 1000
    seed = 0

    def _controls(self):
        return {
            "rho": W.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05, description="rho",
                                 continuous_update=True, style={"description_width": "initial"}),
            "d_k": d_k_slider(64),
        }

    def _setup(self, fig):
        ax_h, ax_m = fig.subplots(1, 2)
        self.histograms = CorrelatedHistogramPanel(ax_h, "sqrt", (-8.0, 72.0), n_bins=160, numbers_in_titles=False,
                                                   animated=True)  # bins of width 0.5
        ax_h.set_ylim(0, 0.62)
        ax_h.legend(*self.histograms.legend_entries(), loc="upper right", fontsize=8)
        ax_h.set_title("× 1/√d_k: correlated vs unrelated key (numbers below)", fontsize=10)
        self.means = CorrelatedMeanPanel(ax_m, D_K_CHOICES, animated=True)

    def _update(self, rho, d_k):  # type: ignore[override]
        # exact O(n) draws whatever d_k is: q·q ~ chi²(d_k), q·z = |q| N(0, 1) (see the math layer)
        qq, qz = A.correlated_dot_product_parts_exact(d_k, self.n_samples, rng=self.seed)
        other = A.correlated_dot_product_parts_exact(d_k, self.n_samples, rng=self.seed + 1)[1]  # unrelated key
        dots = rho * qq + np.sqrt(1.0 - rho**2) * qz  # q·k with k = rho q + sqrt(1 - rho^2) z
        self.histograms.show(dots / np.sqrt(d_k), other / np.sqrt(d_k), rho, d_k)
        parts = []
        for key, name in (("sqrt", "1/√d_k"), ("inv_d", "1/d_k")):
            curve = [A.correlated_dot_product_moments(d, rho, scale=scale_factor(key, d)) for d in D_K_CHOICES]
            c = scale_factor(key, d_k)
            self.means.show(key, np.array([m.mean for m in curve]), np.array([m.std for m in curve]), d_k,
                            c * dots.mean())
            t = A.correlated_dot_product_moments(d_k, rho, scale=c)
            parts.append(f"× {name}: mean <b>{t.mean:.2f}</b> (simulation {c * dots.mean():.2f}), "
                         f"std {t.std:.2f} (simulation {c * dots.std():.2f})")
        return f"ρ = {rho:.2f}, d_k = {d_k}, the correlated key's logit — " + "; ".join(parts) + "."
