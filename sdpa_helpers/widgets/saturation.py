"""Explorers for notebook 05, drawn by :mod:`sdpa_helpers.plots.saturation`: :class:`SaturationExplorer`
(d_k, n keys, seed: one query's weights and the Monte Carlo curves, computed once) and
:class:`TemperatureExplorer` (the temperature ``T`` of ``softmax(z / T)`` on fixed logits).
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np

from .. import plots
from ..attention import softmax
from ..plots.saturation import CurvePanels, TemperaturePanels, WeightBars
from ..saturation import (
    KEY_COUNTS,
    MEASURED_ONSETS,
    entropy_closed_form,
    explorer_queries,
    prefix_logits,
    saturation_curves,
    temperature_curves,
    weight_stats,
)
from ..scales import D_K_CHOICES, scale_factor
from . import Explorer, d_k_slider, seed_slider

__all__ = ["SaturationExplorer", "TemperatureExplorer"]

#: Seed of the explorer's curves, and their budget: queries x keys per d_k and key count.
CURVE_SEED = 2024
QUERY_BUDGET = 8192
#: Temperatures offered by the temperature slider: powers of two, 1/64 ... 64.
TEMPERATURES = tuple(2.0**i for i in range(-6, 7))
#: The fixed logits of the temperature explorer (the five logits of notebook 05).
EXAMPLE_LOGITS = (0.1, -0.2, 0.3, -0.2, 0.5)
_SCALES = ("unscaled", "sqrt")
_TITLE = {"unscaled": "unscaled", "sqrt": "scaled by 1/√d_k"}


@lru_cache(maxsize=4)
def _one_query(seed: int) -> np.ndarray:
    """Unscaled logits (13, 1024) of one query and 1024 keys at every d_k; the first n keys serve n."""
    return prefix_logits(D_K_CHOICES, max(KEY_COUNTS), rng=seed)


@lru_cache(maxsize=1)
def _all_curves() -> dict:
    """(n, scale) -> SaturationCurves for every key count: one equal budget each, computed once."""
    return {(n, s): saturation_curves(D_K_CHOICES, n, explorer_queries(n, QUERY_BUDGET), scale=s, rng=CURVE_SEED)
            for n in KEY_COUNTS for s in _SCALES}


class SaturationExplorer(Explorer):
    """One query against n random keys: the softmax weights unscaled (left) and scaled (right),
    with the average largest weight, entropy and effective number of keys against d_k below,
    the measured onset of saturation (mean entropy 1 nat below ``ln n``) and the law ``ln n - d_k/2``."""

    figsize = (10.0, 5.8)
    main = "d_k"

    def _controls(self):
        keys = W.SelectionSlider(options=list(KEY_COUNTS), value=16, description="keys n",
                                 continuous_update=True, style={"description_width": "initial"})
        return {"d_k": d_k_slider(64), "keys": keys, "seed": seed_slider(0)}

    def _setup(self, fig):
        self.curves = _all_curves()
        grid = fig.add_gridspec(2, 6, height_ratios=(1.0, 0.9))
        self.bars = [WeightBars(fig.add_subplot(grid[0, 3 * i:3 * i + 3]), plots.SCALING_STYLES[s]["color"],
                                title=_TITLE[s], animated=True) for i, s in enumerate(_SCALES)]
        axes = [fig.add_subplot(grid[1, 2 * i:2 * i + 2]) for i in range(3)]
        self.panels = CurvePanels(axes, max(KEY_COUNTS), law=True, animated=True, annotate=False)
        self._law_x = np.geomspace(D_K_CHOICES[0], D_K_CHOICES[-1], 200)

    def _update(self, d_k, keys, seed):
        at = D_K_CHOICES.index(d_k)
        z = _one_query(seed)[at, :keys]  # (n,) unscaled logits of this query
        logits = np.stack([scale_factor(s, d_k) * z for s in _SCALES])  # (2, n)
        weights, stats = softmax(logits), weight_stats(logits)
        for bars, w in zip(self.bars, weights):
            bars.show(w)
        onset = MEASURED_ONSETS[keys]  # section 5's measurement (integer d_k, 5 seeds)
        self.panels.show(self.curves[keys, "unscaled"], self.curves[keys, "sqrt"], keys, onset,
                         (self._law_x, entropy_closed_form(keys, self._law_x)), d_k)
        u, s = (self.curves[keys, scale] for scale in _SCALES)
        this = "; ".join(f"{name} max {stats.max_weight[i]:.2f}, H {stats.entropy[i]:.2f}, "
                         f"e^H {stats.effective_keys[i]:.1f}" for i, name in enumerate(("unscaled", "scaled")))
        return (f"d_k = {d_k}, n = {keys} keys. This query (bars): {this}. Average over "
                f"{explorer_queries(keys, QUERY_BUDGET)} random queries: largest weight "
                f"{u.max_weight.mean[at]:.2f} unscaled vs "
                f"{s.max_weight.mean[at]:.2f} scaled; effective keys {u.effective_keys.mean[at]:.1f} vs "
                f"{s.effective_keys.mean[at]:.1f} (uniform: {keys}, one-hot: 1). Onset of saturation (unscaled), "
                f"the d_k where the mean entropy falls 1 nat below ln n (section 5's table: integer d_k, median "
                f"over 5 seeds): d_k ≈ {onset:.1f}.")


class TemperatureExplorer(Explorer):
    """``softmax(z / T)`` of fixed logits ``z`` as bars, with the largest weight and ``exp(entropy)``
    against the temperature ``T``."""

    figsize = (10.0, 3.3)
    main = "temperature"
    logits = EXAMPLE_LOGITS

    def _controls(self):
        options = [(f"{t:g}" if t >= 1 else f"1/{1 / t:g}", t) for t in TEMPERATURES]
        slider = W.SelectionSlider(options=options, value=1.0, description="temperature",
                                   continuous_update=True, style={"description_width": "initial"},
                                   layout=W.Layout(width="420px"))
        return {"temperature": slider}

    def _setup(self, fig):
        z = np.asarray(self.logits, dtype=float)
        ax_bars, ax_max, ax_eff = fig.subplots(1, 3)
        ax_bars.set_title("softmax(z / T) (numbers below)")
        curve_t = 2.0 ** np.linspace(-6, 6, 49)
        self.panels = TemperaturePanels([ax_bars], ax_max, ax_eff, curve_t, temperature_curves(z, curve_t)[1],
                                        z.size, animated=True, annotate=False)
        self.weights, self.stats = temperature_curves(z, TEMPERATURES)  # every slider value, at build

    def _update(self, temperature):
        i = TEMPERATURES.index(temperature)
        p, top, eff = self.weights[i], self.stats.max_weight[i], self.stats.effective_keys[i]
        self.panels.show([temperature], [p])
        name = f"{temperature:g}" if temperature >= 1 else f"1/{1 / temperature:g}"
        return (f"T = {name}: largest weight {top:.2f}, e^H = {eff:.2f}; softmax(z / T) = "
                + ", ".join(f"{w:.3f}" for w in p)
                + f". Small T sharpens toward one-hot; large T flattens toward uniform (1/{p.size} each).")
