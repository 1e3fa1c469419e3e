"""Explorers for notebook 05: the softmax saturates as d_k grows (unscaled), and temperature.

- :class:`SaturationExplorer` -- drag d_k and the number of keys n: one query's weights,
  unscaled and scaled, and the Monte Carlo curves of the largest weight, the entropy and
  ``exp(entropy)`` with a marker, the measured onset of saturation (the first d_k where the
  mean entropy is 1 nat below ``ln n``: notebook 05's own measurement on integer d_k, median over
  5 seeds, :data:`sdpa_helpers.saturation.MEASURED_ONSETS`) and the entropy law ``ln n - d_k/2``;
- :class:`TemperatureExplorer` -- drag the temperature ``T`` of ``softmax(z / T)`` on fixed logits.

Every number comes from :mod:`sdpa_helpers.saturation`; the curves of every key count are
computed when the explorer is built (an equal, small budget per count), so no control computes
a Monte Carlo curve on its first visit.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np
from matplotlib.collections import PolyCollection

from .. import plots
from ..attention import softmax
from ..plots import saturation as saturation_plots
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


def _bar_verts(heights, width: float = 0.8, unit: bool = False) -> np.ndarray:
    """Rectangles (n, 4, 2) for bars of ``heights`` at x = 1 ... n (``unit``: at (j - 1/2)/n, in [0, 1])."""
    h = np.asarray(heights, dtype=float)
    x = np.arange(1, h.size + 1, dtype=float)
    if unit:
        x, width = (x - 0.5) / h.size, width / h.size
    verts = np.zeros((h.size, 4, 2))
    verts[:, :2, 0] = (x - width / 2)[:, None]
    verts[:, 2:, 0] = (x + width / 2)[:, None]
    verts[:, 1, 1] = h
    verts[:, 2, 1] = h
    return verts


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
        # the onset is section 5's measurement (integer d_k, 5 seeds), not read off the coarse curves
        self.onset_at = dict(MEASURED_ONSETS)
        grid = fig.add_gridspec(2, 6, height_ratios=(1.0, 0.9))
        self.ax_bars = (fig.add_subplot(grid[0, :3]), fig.add_subplot(grid[0, 3:]))
        self.ax_curves = tuple(fig.add_subplot(grid[1, 2 * i:2 * i + 2]) for i in range(3))
        saturation_plots.format_curve_axes(self.ax_curves[0], self.ax_curves[1], self.ax_curves[2],
                                           n_max=max(KEY_COUNTS))
        self.bars = []
        for ax, scale in zip(self.ax_bars, _SCALES):
            saturation_plots.format_weight_axes(ax, 16)
            ax.set_xlim(0.0, 1.0)  # keys at (j - 1/2)/n: one fixed axis for every n, no redraw
            ax.set_xticks([])
            ax.set_xlabel("key $j$ = 1 … $n$ (left to right)")
            colour = plots.SCALING_STYLES[scale]["color"]  # an edge keeps 1024 bars at least a pixel wide
            bars = PolyCollection([], facecolor=colour, edgecolor=colour, linewidth=0.6, animated=True)
            ax.add_collection(bars)
            self.bars.append(bars)
            ax.set_title(_TITLE[scale])  # static: drawn once into the background
        self.lines, self.markers, self.refs, self.onsets = {}, {}, [], []
        for ax in self.ax_curves:
            for _ in ("one-hot", "uniform"):
                (ref,) = ax.plot([], [], animated=True, **saturation_plots.REFERENCE)
                self.refs.append(ref)
            (onset,) = ax.plot([], [], animated=True, label=r"onset: $H = \ln n - 1$", **saturation_plots.ONSET)
            self.onsets.append(onset)
            for scale in _SCALES:
                spec = plots.SCALING_STYLES[scale]
                (line,) = ax.plot([], [], color=spec["color"], linestyle=spec["linestyle"], linewidth=1.5,
                                  animated=True, label=spec["label"])
                (marker,) = ax.plot([], [], color=spec["color"], marker=spec["marker"], markersize=8,
                                    markeredgecolor="black", linestyle="none", animated=True)
                self.lines[ax, scale] = line
                self.markers[ax, scale] = marker
        (self.law,) = self.ax_curves[1].plot([], [], color=plots.OKABE_ITO["black"], linewidth=1.0, animated=True,
                                             label=r"law $\ln n - d_k/2$")
        ax0 = self.ax_curves[0]
        ax0.legend(handles=[self.lines[ax0, s] for s in _SCALES] + [self.onsets[0]], loc="center right", fontsize=7)
        self.ax_curves[1].legend(handles=[self.law], loc="lower left", fontsize=7)
        self._x = np.asarray(D_K_CHOICES, dtype=float)
        self._law_x = np.geomspace(self._x[0], self._x[-1], 200)

    def _update(self, d_k, keys, seed):
        at = D_K_CHOICES.index(d_k)
        z = _one_query(seed)[at, :keys]  # (n,) unscaled logits of this query
        logits = np.stack([scale_factor(s, d_k) * z for s in _SCALES])  # (2, n)
        weights, stats = softmax(logits), weight_stats(logits)
        for i in range(len(_SCALES)):
            self.bars[i].set_verts(list(_bar_verts(weights[i], unit=True)))
        edges = np.array([self._x[0] / 1.4, self._x[-1] * 1.4])
        onset = self.onset_at[keys]
        references = ((1.0, 1.0 / keys), (0.0, np.log(keys)), (1.0, float(keys)))
        for j, (ax, field) in enumerate(zip(self.ax_curves, ("max_weight", "entropy", "effective_keys"))):
            for r, level in enumerate(references[j]):
                self.refs[2 * j + r].set_data(edges, [level, level])
            self.onsets[j].set_data([onset, onset], ax.get_ylim())
            for scale in _SCALES:
                mean = getattr(self.curves[keys, scale], field).mean
                self.lines[ax, scale].set_data(self._x, mean)
                self.markers[ax, scale].set_data([d_k], [mean[at]])
        law = entropy_closed_form(keys, self._law_x)
        self.law.set_data(self._law_x[law >= 0], law[law >= 0])
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
        self.ax_bars, self.ax_max, self.ax_eff = fig.subplots(1, 3)
        saturation_plots.format_weight_axes(self.ax_bars, z.size)
        colour = plots.OKABE_ITO["reddish_purple"]
        self.bars = PolyCollection([], facecolor=colour, edgecolor="none", animated=True)
        self.ax_bars.add_collection(self.bars)
        self.ax_bars.set_title("softmax(z / T) (numbers below)")
        _, curve = temperature_curves(z, 2.0 ** np.linspace(-6, 6, 49))
        self.weights, self.stats = temperature_curves(z, TEMPERATURES)  # every slider value, at build
        curve_t = 2.0 ** np.linspace(-6, 6, 49)
        self.markers = []
        for ax, values, label, ylim in ((self.ax_max, curve.max_weight, saturation_plots.CURVE_LABELS[0], (0, 1.03)),
                                        (self.ax_eff, curve.effective_keys, saturation_plots.CURVE_LABELS[2],
                                         (0.7, z.size + 0.3))):
            saturation_plots.format_temperature_axis(ax, TEMPERATURES)
            ax.plot(curve_t, values, color=colour)
            ax.axhline(1.0, **saturation_plots.REFERENCE)
            ax.axhline(1.0 / z.size if ax is self.ax_max else z.size, **saturation_plots.REFERENCE)
            ax.set(ylabel=label, ylim=ylim)
            (marker,) = ax.plot([], [], color=colour, marker="o", markersize=8, markeredgecolor="black",
                                linestyle="none", animated=True)
            self.markers.append(marker)

    def _update(self, temperature):
        i = TEMPERATURES.index(temperature)
        p, top, eff = self.weights[i], self.stats.max_weight[i], self.stats.effective_keys[i]
        self.bars.set_verts(list(_bar_verts(p)))
        name = f"{temperature:g}" if temperature >= 1 else f"1/{1 / temperature:g}"
        self.markers[0].set_data([temperature], [top])
        self.markers[1].set_data([temperature], [eff])
        return (f"T = {name}: largest weight {top:.2f}, e^H = {eff:.2f}; softmax(z / T) = "
                + ", ".join(f"{w:.3f}" for w in p)
                + f". Small T sharpens toward one-hot; large T flattens toward uniform (1/{p.size} each).")
