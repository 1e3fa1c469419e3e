"""Explorers for notebook 08: what initialisation does to the logits, and what correlation does."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import assumptions as A
from .. import plots
from ..assumptions import D_MODEL_CHOICES, init_scaled_logits_exact
from ..plots.assumptions import LOGIT_RANGE, MATCH, REFERENCE
from ..scales import scale_factor
from ..theory import normal_pdf
from . import D_K_CHOICES, Explorer, d_k_slider

__all__ = ["InitExplorer", "CorrelationExplorer"]

_PROJECTION_LABELS = {
    "one head: d_model → d_k": "head",
    "all heads: d_model → d_model": "all_heads",
    "fused QKV: d_model → 3·d_model": "fused_qkv",
}


class InitExplorer(Explorer):
    """Scaled logits at initialisation for a chosen d_model, initialisation and projection shape.

    Samples come from :func:`sdpa_helpers.assumptions.init_scaled_logits_exact` (one
    independent network per sample, exact for normal weights, drawn once): a move only
    rescales them and redraws.
    """

    figsize = (10.0, 3.8)
    d_k = 64
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
        # One exact sample (independent networks, O(n) whatever the width), drawn once and
        # cached in the math layer: every move of any control only rescales it and redraws.
        self.ax_h, self.ax_v = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1.0]})
        self.bins = np.linspace(*LOGIT_RANGE, 61)
        x = np.linspace(*LOGIT_RANGE, 300)
        self.x = x
        spec = plots.SCALED
        self.hist = self.ax_h.stairs(np.zeros(len(self.bins) - 1), self.bins, fill=True, color=spec["color"],
                                     alpha=0.5, animated=True, label="simulation")
        (self.theory_pdf,) = self.ax_h.plot(x, normal_pdf(x), color=spec["color"], linewidth=1.8,
                                            animated=True, label="theory")
        self.ax_h.plot(x, normal_pdf(x), **REFERENCE)
        self.ax_h.set(xlim=LOGIT_RANGE, ylim=(0, 1.3), xlabel=r"$q\cdot k/\sqrt{d_k}$", ylabel="density")
        self.ax_h.legend(loc="upper right", fontsize=8)
        self.ax_h.set_title("the logit: simulation and theory (numbers below)", fontsize=10)

        d_models = np.array(D_MODEL_CHOICES, dtype=float)
        self.ax_v.axhline(1.0, color="grey", linewidth=0.8, linestyle=":", label="the footnote's assumption: 1")
        (self.theory_line,) = self.ax_v.plot(d_models, np.ones_like(d_models), color=spec["color"],
                                             linestyle=spec["linestyle"], animated=True, label="theory")
        (self.sim_point,) = self.ax_v.plot([512], [1.0], spec["marker"], color=spec["color"], markersize=7,
                                           markeredgecolor="black", animated=True, label="simulation")
        plots.set_d_k_axis(self.ax_v, label=r"$d_\mathrm{model}$")
        self.ax_v.set_xticks(d_models, [f"{d:g}" for d in d_models])
        self.ax_v.set_xlim(48, 5400)
        self.ax_v.set_yscale("log")
        self.ax_v.set_ylim(2e-4, 20)
        self.ax_v.set(ylabel=r"Var$(q\cdot k/\sqrt{d_k})$", title=f"$d_k$ = {self.d_k}, LayerNormed tokens")
        self.ax_v.legend(loc="lower right", fontsize=8)

    def _update(self, d_model, init, projection):  # type: ignore[override]
        s = init_scaled_logits_exact(init, d_model, projection, self.d_k, seed=self.seed)  # (2048,)
        fan_out = A.projection_fan_out(projection, d_model, self.d_k)
        theory = A.init_logit_moments(init, d_model, self.d_k, fan_out=fan_out, scale=self.d_k ** -0.5)
        var_q = A.query_variance(init, d_model, fan_out)
        counts, _ = np.histogram(s, bins=self.bins)
        self.hist.set_data(counts / s.size / np.diff(self.bins))
        self.theory_pdf.set_ydata(normal_pdf(self.x, 0.0, theory.var))
        curve = [A.init_logit_moments(init, d, self.d_k, fan_out=A.projection_fan_out(projection, d, self.d_k),
                                      scale=self.d_k ** -0.5).var for d in D_MODEL_CHOICES]
        self.theory_line.set_ydata(curve)
        estimate, se = (s**2).mean(), (s**2).std(ddof=1) / np.sqrt(s.size)  # independent samples
        self.sim_point.set_data([d_model], [estimate])
        return (f"d_model = {d_model}, fan_out = {fan_out}: Var(W) = "
                f"{A.init_weight_variance(init, d_model, fan_out):.3g}, Var(q_i) = d_model·Var(W) = "
                f"<b>{var_q:.3f}</b>; Var(q·k/√d_k) = Var(q_i)² = <b>{theory.var:.3f}</b> "
                f"(simulation {estimate:.3f} ± {se:.3f} SE).")


class CorrelationExplorer(Explorer):
    """A key correlated with the query (rho) vs an unrelated key: logits scaled by 1/√d_k, and by 1/d_k.

    Left: histograms of ``q . k / sqrt(d_k)`` on a fixed range: the unrelated key stays at
    N(0, 1), the correlated key's logit runs away to ``rho sqrt(d_k)``. Right: the mean of the
    correlated key's logit against d_k for both scales (lines: theory for the current rho;
    markers: simulation at the current d_k). Every axis is fixed, so a move only redraws data.
    """

    figsize = (10.0, 3.8)
    n_samples = 1000
    seed = 0
    x_range = (-8.0, 72.0)

    def _controls(self):
        return {
            "rho": W.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05, description="rho",
                                 continuous_update=True, style={"description_width": "initial"}),
            "d_k": d_k_slider(64),
        }

    def _setup(self, fig):
        self.ax_h, self.ax_m = fig.subplots(1, 2)
        self.edges = np.linspace(*self.x_range, 161)  # bins of width 0.5
        self.x = np.linspace(*self.x_range, 800)
        zeros = np.zeros(len(self.edges) - 1)
        self.h_other = self.ax_h.stairs(zeros, self.edges, fill=True, color=plots.SCALED["color"], alpha=0.45,
                                        animated=True, label=r"unrelated key ($\rho$ = 0)")
        self.h_match = self.ax_h.stairs(zeros, self.edges, fill=True, color=MATCH["color"], alpha=0.45,
                                        animated=True, label="correlated key")
        (self.p_match,) = self.ax_h.plot(self.x, 0 * self.x, color=MATCH["color"], linewidth=1.3, animated=True,
                                         label="theory: normal, same mean and variance")
        self.ax_h.plot(self.x, normal_pdf(self.x), **REFERENCE)
        self.ax_h.set(xlim=self.x_range, ylim=(0, 0.62), xlabel=r"$q\cdot k/\sqrt{d_k}$", ylabel="density")
        self.ax_h.legend(loc="upper right", fontsize=8)
        self.ax_h.set_title("× 1/√d_k: correlated vs unrelated key (numbers below)", fontsize=10)

        d_ks = np.array(D_K_CHOICES, dtype=float)
        self.d_ks = d_ks
        lines = {}
        for key in ("sqrt", "inv_d"):
            spec = plots.SCALING_STYLES[key]
            (mean_line,) = self.ax_m.plot(d_ks, 0 * d_ks, color=spec["color"], linestyle=spec["linestyle"],
                                          animated=True, label=spec["label"] + (" (μP)" if key == "inv_d" else ""))
            (band_hi,) = self.ax_m.plot(d_ks, 0 * d_ks, color=spec["color"], linewidth=0.7, alpha=0.6, animated=True)
            (band_lo,) = self.ax_m.plot(d_ks, 0 * d_ks, color=spec["color"], linewidth=0.7, alpha=0.6, animated=True)
            (point,) = self.ax_m.plot([64], [0], spec["marker"], color=spec["color"], markersize=7,
                                      markeredgecolor="black", animated=True)
            lines[key] = (mean_line, band_lo, band_hi, point)
        self.lines = lines
        plots.set_d_k_axis(self.ax_m)
        self.ax_m.set_xlim(0.7, 6000)
        self.ax_m.set_ylim(-4, 70)
        self.ax_m.set(ylabel="correlated key's logit",
                      title="mean (line) ± 1 std (thin lines); markers: simulation")
        self.ax_m.legend(loc="upper left", fontsize=8)

    def _update(self, rho, d_k):  # type: ignore[override]
        # exact O(n) draws whatever d_k is: q·q ~ chi²(d_k), q·z = |q| N(0, 1) (see the math layer)
        qq, qz = A.correlated_dot_product_parts_exact(d_k, self.n_samples, rng=self.seed)
        other = A.correlated_dot_product_parts_exact(d_k, self.n_samples, rng=self.seed + 1)[1]  # unrelated key
        dots = rho * qq + np.sqrt(1.0 - rho**2) * qz  # q·k with k = rho q + sqrt(1 - rho^2) z
        c = d_k ** -0.5
        widths = np.diff(self.edges)
        self.h_match.set_data(np.histogram(c * dots, bins=self.edges)[0] / dots.size / widths)
        self.h_other.set_data(np.histogram(c * other, bins=self.edges)[0] / other.size / widths)
        theory = A.correlated_dot_product_moments(d_k, rho, scale=c)
        self.p_match.set_ydata(normal_pdf(self.x, theory.mean, theory.var))
        parts = []
        for key, (mean_line, band_lo, band_hi, point) in self.lines.items():
            curve = [A.correlated_dot_product_moments(int(d), rho, scale=scale_factor(key, int(d))) for d in self.d_ks]
            mean = np.array([m.mean for m in curve])
            std = np.array([m.std for m in curve])
            mean_line.set_ydata(mean)
            band_lo.set_ydata(mean - std)
            band_hi.set_ydata(mean + std)
            c_now = scale_factor(key, d_k)
            point.set_data([d_k], [c_now * dots.mean()])
            t = A.correlated_dot_product_moments(d_k, rho, scale=c_now)
            name = "1/√d_k" if key == "sqrt" else "1/d_k"
            parts.append(f"× {name}: mean <b>{t.mean:.2f}</b> (simulation {c_now * dots.mean():.2f}), "
                         f"std {t.std:.2f} (simulation {c_now * dots.std():.2f})")
        return f"ρ = {rho:.2f}, d_k = {d_k}, the correlated key's logit — " + "; ".join(parts) + "."
