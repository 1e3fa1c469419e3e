"""Explorers for notebook 05: the softmax saturates as d_k grows (unscaled), and temperature.

- :class:`SaturationExplorer` -- drag d_k: one query's weights, unscaled and scaled, and the
  Monte Carlo curves of the largest weight, the entropy and ``exp(entropy)`` with a marker;
- :class:`TemperatureExplorer` -- drag the temperature ``T`` of ``softmax(z / T)`` on fixed logits.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np
from matplotlib.collections import PolyCollection

from .. import plots
from ..attention import softmax
from ..plots import saturation as sat_plots
from ..sampling import sample_components
from ..saturation import saturation_curves, weight_stats
from . import D_K_CHOICES, Explorer, d_k_slider, seed_slider

__all__ = ["SaturationExplorer", "TemperatureExplorer", "KEY_CHOICES", "TEMPERATURES", "EXAMPLE_LOGITS"]

#: Numbers of keys offered by the "keys" slider.
KEY_CHOICES = (8, 16, 32, 64)
#: Queries averaged per d_k in the explorer's curves, and their seed.
N_QUERIES = 4000
CURVE_SEED = 2024
#: Temperatures offered by the temperature slider: powers of two, 1/64 ... 64.
TEMPERATURES = tuple(2.0**i for i in range(-6, 7))
#: The fixed logits of the temperature explorer (the five logits of notebook 05, section 2).
EXAMPLE_LOGITS = (0.1, -0.2, 0.3, -0.2, 0.5)


@lru_cache(maxsize=4)
def _query_and_keys(seed: int):
    """One query (4096,) and 64 keys (64, 4096); prefixes give every smaller d_k and n."""
    q = sample_components(max(D_K_CHOICES), rng=seed)
    keys = sample_components((max(KEY_CHOICES), max(D_K_CHOICES)), rng=seed + 1000)
    return q, keys


@lru_cache(maxsize=8)
def _curves(n_keys: int):
    """Monte Carlo curves (unscaled, scaled) for ``n_keys``: computed once per n, not per move."""
    return tuple(saturation_curves(D_K_CHOICES, n_keys, N_QUERIES, scaled=s, rng=CURVE_SEED) for s in (False, True))


def _bar_verts(heights, width: float = 0.8) -> np.ndarray:
    """Rectangles (n, 4, 2) for bars of ``heights`` at x = 1 ... n."""
    h = np.asarray(heights, dtype=float)
    x = np.arange(1, h.size + 1, dtype=float)
    verts = np.zeros((h.size, 4, 2))
    verts[:, :2, 0] = (x - width / 2)[:, None]
    verts[:, 2:, 0] = (x + width / 2)[:, None]
    verts[:, 1, 1] = h
    verts[:, 2, 1] = h
    return verts


class SaturationExplorer(Explorer):
    """One query against n random keys: the softmax weights unscaled (left) and scaled (right),
    with the average largest weight, entropy and effective number of keys against d_k below."""

    figsize = (10.0, 5.8)
    main = "d_k"

    def _controls(self):
        keys = W.SelectionSlider(options=list(KEY_CHOICES), value=16, description="keys",
                                 continuous_update=True, style={"description_width": "initial"})
        return {"d_k": d_k_slider(64), "keys": keys, "seed": seed_slider(0)}

    def _setup(self, fig):
        grid = fig.add_gridspec(2, 6, height_ratios=(1.0, 0.9))
        self.ax_bars = (fig.add_subplot(grid[0, :3]), fig.add_subplot(grid[0, 3:]))
        self.ax_curves = tuple(fig.add_subplot(grid[1, 2 * i:2 * i + 2]) for i in range(3))
        sat_plots.format_curve_axes(*self.ax_curves, n_max=max(KEY_CHOICES))
        self.bars, self.titles = [], []
        for ax, spec in zip(self.ax_bars, (plots.UNSCALED, plots.SCALED)):
            sat_plots.format_weight_axes(ax, 16)
            bars = PolyCollection([], facecolor=spec["color"], edgecolor="none", animated=True)
            ax.add_collection(bars)
            self.bars.append(bars)
            self.titles.append(ax.set_title(" ", animated=True))
        self.lines, self.markers, self.refs = {}, {}, []
        for ax in self.ax_curves:
            for level in ("one-hot", "uniform"):
                (ref,) = ax.plot([], [], animated=True, **sat_plots.REFERENCE)
                self.refs.append(ref)
            for name, spec in (("unscaled", plots.UNSCALED), ("scaled", plots.SCALED)):
                (line,) = ax.plot([], [], color=spec["color"], linestyle=spec["linestyle"], linewidth=1.5,
                                  animated=True, label=spec["label"])
                (marker,) = ax.plot([], [], color=spec["color"], marker=spec["marker"], markersize=8,
                                    markeredgecolor="black", linestyle="none", animated=True)
                self.lines[ax, name] = line
                self.markers[ax, name] = marker
        self.ax_curves[0].legend(handles=[self.lines[self.ax_curves[0], n] for n in ("unscaled", "scaled")],
                                 loc="center right")

    def _background_key(self, d_k, keys, seed):
        return keys  # the bars' x range: keys 1 ... n

    def _update(self, d_k, keys, seed):
        q, key_matrix = _query_and_keys(seed)
        z = key_matrix[:keys, :d_k] @ q[:d_k]  # (n, d_k) @ (d_k,) -> (n,)
        for ax in self.ax_bars:
            ax.set_xlim(0.4, keys + 0.6)
        weights = (softmax(z), softmax(z / np.sqrt(d_k)))
        stats = weight_stats(np.stack([z, z / np.sqrt(d_k)]))
        for i, name in enumerate(("unscaled", "scaled")):
            self.bars[i].set_verts(_bar_verts(weights[i]))
            self.titles[i].set_text(f"{name}: max {stats.max_weight[i]:.2f}, "
                                    f"$H$ = {stats.entropy[i]:.2f} nats, $e^H$ = {stats.effective_keys[i]:.1f}")
        curves = dict(zip(("unscaled", "scaled"), _curves(keys)))
        x = np.asarray(D_K_CHOICES, dtype=float)
        at = D_K_CHOICES.index(d_k)
        edges = np.array([x[0] / 1.4, x[-1] * 1.4])
        references = ((1.0, 1.0 / keys), (0.0, np.log(keys)), (1.0, float(keys)))
        for j, (ax, field) in enumerate(zip(self.ax_curves, ("max_weight", "entropy", "effective_keys"))):
            for r, level in enumerate(references[j]):
                self.refs[2 * j + r].set_data(edges, [level, level])
            for name, curve in curves.items():
                mean = getattr(curve, field).mean
                self.lines[ax, name].set_data(x, mean)
                self.markers[ax, name].set_data([d_k], [mean[at]])
        u, s = curves["unscaled"], curves["scaled"]
        return (f"d_k = {d_k}, {keys} keys. Average over {N_QUERIES} random queries: largest weight "
                f"{u.max_weight.mean[at]:.2f} unscaled vs {s.max_weight.mean[at]:.2f} scaled; "
                f"effective keys {u.effective_keys.mean[at]:.1f} vs {s.effective_keys.mean[at]:.1f} "
                f"(uniform: {keys}, one-hot: 1).")


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
        sat_plots.format_weight_axes(self.ax_bars, z.size)
        colour = plots.OKABE_ITO["reddish_purple"]
        self.bars = PolyCollection([], facecolor=colour, edgecolor="none", animated=True)
        self.ax_bars.add_collection(self.bars)
        self.title = self.ax_bars.set_title(" ", animated=True)
        curve_t = 2.0 ** np.linspace(-6, 6, 49)
        self.curve = weight_stats(z[None, :] / curve_t[:, None])
        self.markers = []
        for ax, values, label, ylim in ((self.ax_max, self.curve.max_weight, sat_plots.CURVE_LABELS[0], (0, 1.03)),
                                        (self.ax_eff, self.curve.effective_keys, sat_plots.CURVE_LABELS[2],
                                         (0.7, z.size + 0.3))):
            sat_plots.format_temperature_axis(ax, TEMPERATURES)
            ax.plot(curve_t, values, color=colour)
            ax.axhline(1.0, **sat_plots.REFERENCE)
            ax.axhline(1.0 / z.size if ax is self.ax_max else z.size, **sat_plots.REFERENCE)
            ax.set(ylabel=label, ylim=ylim)
            (marker,) = ax.plot([], [], color=colour, marker="o", markersize=8, markeredgecolor="black",
                                linestyle="none", animated=True)
            self.markers.append(marker)

    def _update(self, temperature):
        z = np.asarray(self.logits, dtype=float)
        p = softmax(z, temperature=temperature)
        stats = weight_stats(z / temperature)
        self.bars.set_verts(_bar_verts(p))
        name = f"{temperature:g}" if temperature >= 1 else f"1/{1 / temperature:g}"
        self.title.set_text(f"$T$ = {name}: max {stats.max_weight:.2f}, $e^H$ = {stats.effective_keys:.2f}")
        self.markers[0].set_data([temperature], [stats.max_weight])
        self.markers[1].set_data([temperature], [stats.effective_keys])
        return (f"T = {name}: softmax(z / T) = "
                + ", ".join(f"{w:.3f}" for w in p)
                + f". Small T sharpens toward one-hot; large T flattens toward uniform (1/{z.size} each).")
