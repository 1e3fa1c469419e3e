"""Explorer for notebook 02: drag d_k, pick the component distribution, watch q·k approach N(0, d_k)."""

from __future__ import annotations

import math
from functools import lru_cache

import ipywidgets as W
import numpy as np
from matplotlib.ticker import MaxNLocator

from .. import plots
from ..sampling import DISTRIBUTIONS, EXCESS_KURTOSIS
from ..theory import dot_product_excess_kurtosis, dot_product_moments, normal_pdf
from ..variance import BINS, histogram_density, histogram_edges, sample_dot_products_fast, sample_summary
from . import Explorer, d_k_slider

__all__ = ["VarianceExplorer"]

#: y-axis tops, in units of 1 / sqrt(d_k) (the N(0, 1) peak is 0.399): the smallest that fits.
_Y_LEVELS = (0.5, 1.0, 1.6)


def _fmt(v: float) -> str:
    """A variance for the title: two decimals below 100, whole numbers above."""
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}"


@lru_cache(maxsize=64)
def _samples(d_k: int, dist: str, n: int, seed: int) -> np.ndarray:
    # O(n) exact draws (variance): a first visit at d_k = 4096 costs what d_k = 1 does
    s = sample_dot_products_fast(d_k, n, dist, rng=seed)
    s.flags.writeable = False  # shared through the cache
    return s


@lru_cache(maxsize=64)
def _view(d_k: int, dist: str, n: int, seed: int):
    """Everything one frame needs, computed once per (d_k, dist)."""
    s = _samples(d_k, dist, n, seed)
    edges = histogram_edges(d_k, dist)
    density = histogram_density(s, edges)
    sd = math.sqrt(d_k)
    peak = float(density.max()) * sd  # in units of 1 / sqrt(d_k)
    level = next((y for y in _Y_LEVELS if y >= 1.08 * peak), _Y_LEVELS[-1])
    stats = sample_summary(s)
    if dist == "rademacher":  # discrete: stems at the values, height probability / 2 (values 2 apart)
        values, counts = np.unique(s, return_counts=True)
        shown = np.abs(values) <= BINS[-1] * sd
        stems = (values[shown] / sd, counts[shown] / n / 2.0 * sd)  # standardised units
        level = next((y for y in _Y_LEVELS if y >= 1.08 * float(stems[1].max())), _Y_LEVELS[-1])
    else:
        stems = (np.empty(0), np.empty(0))
    return edges, density, level, stats, stems


class _Ticks:
    """Tick marks, tick labels and grid lines of one axis, drawn as animated artists.

    The axis itself stays in fixed standardised units; ``update(lo, hi, scale)`` labels it
    in real units, ``value = position * scale``, at round values of the real units.
    """

    def __init__(self, ax, which: str, n_max: int = 14, nbins: int = 8):
        self.which = which
        transform = ax.get_xaxis_transform() if which == "x" else ax.get_yaxis_transform()
        kw = {"transform": transform, "animated": True}
        (self.grid,) = ax.plot([], [], color="#b0b0b0", alpha=0.3, linewidth=0.8, **kw)
        (self.marks,) = ax.plot([], [], color="black", linewidth=0.8, clip_on=False, **kw)
        align = {"ha": "center", "va": "top"} if which == "x" else {"ha": "right", "va": "center"}
        self.labels = [ax.text(0, 0, "", fontsize=9, clip_on=False, **align, **kw) for _ in range(n_max)]
        self.locator = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10])

    def update(self, lo: float, hi: float, scale: float) -> None:
        values = [v for v in self.locator.tick_values(lo * scale, hi * scale)
                  if lo * scale - 1e-12 <= v <= hi * scale + 1e-12][:len(self.labels)]
        pos = np.array(values) / scale
        gap = np.full_like(pos, np.nan)
        along = np.stack([pos, pos, gap], axis=1).ravel()
        across_grid = np.tile([0.0, 1.0, np.nan], len(pos))
        tick = 0.02 if self.which == "x" else 0.007  # tick length in axes fractions (about 3.5 pt)
        across_mark = np.tile([0.0, -tick, np.nan], len(pos))
        if self.which == "x":
            self.grid.set_data(along, across_grid)
            self.marks.set_data(along, across_mark)
        else:
            self.grid.set_data(across_grid, along)
            self.marks.set_data(across_mark, along)
        for i, text in enumerate(self.labels):
            if i < len(values):
                text.set_text(f"{values[i] + 0.0:g}".replace("-", "\u2212"))
                text.set_position((pos[i], -0.035) if self.which == "x" else (-0.012, pos[i]))
                text.set_visible(True)
            else:
                text.set_visible(False)

    def texts(self) -> list[str]:
        """The visible tick labels, in order."""
        return [t.get_text() for t in self.labels if t.get_visible()]


class VarianceExplorer(Explorer):
    """Histogram of q·k against the N(0, d_k) density, for the slider's d_k and the chosen components.

    The samples (4000 pairs per setting) are drawn once per ``(d_k, components)`` by the O(n)
    exact sampler :func:`sdpa_helpers.variance.sample_dot_products_fast` and cached, so a
    first visit is fast and moving back to a setting shows the same picture. Rademacher
    components make ``q . k`` discrete: drawn as stems (probability / 2 at each value).
    """

    figsize = (8.0, 3.4)
    n_samples = 4000
    seed = 0

    def _controls(self):
        return {
            "d_k": d_k_slider(16),
            "components": W.Dropdown(options=list(DISTRIBUTIONS), value="normal", description="components",
                                     style={"description_width": "initial"}),
        }

    def _setup(self, fig):
        # The axes live in standardised units (q·k / sqrt(d_k), density * sqrt(d_k)) with fixed
        # limits, so the cached background (frame, legend, the N(0, 1) curve) does not change
        # with d_k; the tick labels, in the real units, are animated artists.
        fig.set_layout_engine("none")
        self.ax = ax = fig.add_axes((0.09, 0.19, 0.89, 0.70))
        self.x_ticks = _Ticks(ax, "x")  # made first, so the grid lines are drawn under the bars
        self.y_ticks = _Ticks(ax, "y", nbins=4)  # few labels: text drawing dominates the frame time
        self.bars = ax.stairs(np.zeros(len(BINS) - 1), BINS, fill=True, color=plots.UNSCALED["color"],
                              alpha=0.55, animated=True, label=rf"$q\cdot k$ ({self.n_samples} simulated pairs)")
        z = np.linspace(BINS[0], BINS[-1], 301)
        (self.curve,) = ax.plot(z, normal_pdf(z), color=plots.OKABE_ITO["black"], linewidth=1.5,
                                label=r"$N(0, d_k)$ density")
        self.stems = ax.vlines([], 0.0, [], color=plots.UNSCALED["color"], linewidth=2.0, animated=True)
        (self.stem_tops,) = ax.plot([], [], "o", color=plots.UNSCALED["color"], markersize=4, animated=True)
        self.title = ax.set_title(" ", animated=True)
        ax.set_xlim(BINS[0], BINS[-1])
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set(xlabel=r"$q\cdot k$", ylabel="density")
        ax.xaxis.set_label_coords(0.5, -0.14)
        ax.yaxis.set_label_coords(-0.075, 0.5)
        ax.legend(handles=[self.bars, self.curve], loc="upper right")

    def _frame(self, d_k, components):
        return _view(d_k, components, self.n_samples, self.seed)

    def _background_key(self, d_k, components):
        return self._frame(d_k, components)[2]  # only the y range (in standardised units) changes

    def _update(self, d_k, components):
        edges, density, level, st, (stem_x, stem_y) = self._frame(d_k, components)
        sd = math.sqrt(d_k)
        self.ax.set_ylim(0, level)
        discrete = components == "rademacher"
        self.bars.set_visible(not discrete)
        self.bars.set_data(density * sd, edges / sd)  # the density of q·k / sqrt(d_k)
        self.stems.set_segments([[(x, 0.0), (x, y)] for x, y in zip(stem_x, stem_y)])
        self.stems.set_linewidth(2.0 if d_k <= 64 else 1.0)
        self.stem_tops.set_data(stem_x, stem_y)
        self.stem_tops.set_markersize(4 if d_k <= 64 else 0)
        self.x_ticks.update(BINS[0], BINS[-1], sd)
        self.y_ticks.update(0.0, level, 1 / sd)
        theory = dot_product_moments(d_k)
        # short title (text drawing dominates the frame time); the mean is in the table below
        self.title.set_text(f"{components} components, $d_k$ = {d_k}: "
                            f"variance {_fmt(st['var'])} (theory {theory.var:g})")
        kappa = EXCESS_KURTOSIS[components]
        kurt = dot_product_excess_kurtosis(d_k, kappa, kappa)
        z_mean = st["mean"] / st["se_mean"]
        z_var = (st["var"] - theory.var) / st["se_var"]
        rows = [
            ("mean", f"{st['mean']:.3f} ± {st['se_mean']:.3f}", f"{theory.mean:g}", f"{z_mean:+.1f}"),
            ("variance", f"{st['var']:.4g} ± {st['se_var']:.3g}", f"{theory.var:g}", f"{z_var:+.1f}"),
            ("excess kurtosis", f"{st['kurt']:.3f}", f"{kurt:.3f}", ""),
        ]
        td = '<td style="padding: 0 10px">'
        cells = "".join(f"<tr>{td}{a}</td>{td}{b}</td>{td}{c}</td>{td}{d}</td></tr>" for a, b, c, d in rows)
        return ("<table><tr><th>q·k</th><th>sample ± SE</th><th>theory</th><th>(sample − theory) / SE</th></tr>"
                f"{cells}</table>"
                "<small>Excess kurtosis: 0 for a normal; its theory (E[x⁴]² − 3)/d_k is derived "
                "in a deep dive of notebook 02.</small>")
