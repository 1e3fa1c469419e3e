"""Figures for notebook 00: q·k as a random walk, and the three effects of the scale side by side
(:class:`EffectsPanels`, shared by the static figure and the explorer).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from ..overview import SCALED_EDGES, Effects, spread_edges
from ..sampling import histogram_density
from . import OKABE_ITO, SCALING_STYLES, get_axes, new_figure, set_d_k_axis, style

__all__ = ["random_walks", "EffectsPanels", "three_effects_figure"]

#: Lower limit of the Jacobian-norm axis (log scale): holds every median up to d_k = 4096 with
#: 16 keys (the lower band edge is cut there at the largest d_k).
JACOBIAN_YMIN = 1e-12
#: The y label of both histograms: the same normalisation in both columns.
HIST_YLABEL = "logits per bin (tallest = 1)"


def random_walks(walks, n_shown: int = 5, ax=None):
    """The first ``n_shown`` of ``walks`` (n_walks, d_k) against the step ``i``, inside the ``±sqrt(i)``
    band and the ``±2 sqrt(i)`` lines; returns the Axes.

    >>> len(random_walks(np.cumsum(np.ones((3, 16)), axis=1), n_shown=2).get_lines())  # 2 walks, 2 envelopes, 0
    5
    """
    walks = np.asarray(walks, dtype=float)
    if walks.ndim != 2 or walks.shape[1] < 1:
        raise ValueError(f"walks must have shape (n_walks, d_k), got shape {walks.shape}")
    ax = get_axes(ax, figsize=(7.0, 3.6))
    d_k = walks.shape[1]
    i = np.arange(1, d_k + 1)
    palette = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish_green", "reddish_purple", "orange",
                                      "sky_blue", "black")]
    with style():
        ax.fill_between(i, -np.sqrt(i), np.sqrt(i), color="0.85", label=r"$\pm\sqrt{i}$ (one standard deviation)")
        for sign in (1, -1):
            ax.plot(i, 2 * sign * np.sqrt(i), color="0.45", linestyle=":",
                    label=r"$\pm 2\sqrt{i}$" if sign > 0 else None)
        for w, path in enumerate(walks[:n_shown]):
            ax.plot(i, path, color=palette[w % len(palette)], linewidth=1.2)
        ax.axhline(0, color="0.3", linewidth=0.8)
        ax.set(xlim=(0, d_k), xlabel=r"step $i$ (components summed so far)",
               ylabel=r"$q_1k_1 + \dots + q_ik_i$",
               title=f"{min(n_shown, len(walks))} random walks: $q\\cdot k$ after $d_k$ = {d_k} steps")
        ax.legend(loc="upper left")
    return ax


class EffectsPanels:
    """Four panels of what the scale does at one ``d_k``; :meth:`show` fills them: (a) the unscaled logits
    on an x axis fixed up to ``d_max`` (``±4 sqrt(d_max)``), (b) the scaled logits (both histograms:
    tallest bar = 1), (c) the sorted softmax weights of ``n_keys`` keys, (d) ``||J||`` against ``d_ks``
    from ``bands`` (``{"unscaled": (3, len(d_ks)), "sqrt": ...}``: 10 %, median, 90 %) with a marker.

    ``animated``: for the explorer's blitting; ``annotate``: the changing numbers in the panels (the
    explorer puts them in its readout); ``curves``: draw (d)'s curves (False for rows sharing (d)).
    """

    def __init__(self, axes, d_ks, bands, n_keys: int, d_max: int, animated: bool = False,
                 annotate: bool = True, curves: bool = True):
        ax_u, ax_s, ax_w, ax_j = axes
        self.axes, self.annotate = (ax_u, ax_s, ax_w, ax_j), annotate
        self.edges_u = spread_edges(d_max)
        u, s = SCALING_STYLES["unscaled"], SCALING_STYLES["sqrt"]
        zeros_u, zeros_s = np.zeros(len(self.edges_u) - 1), np.zeros(len(SCALED_EDGES) - 1)
        kw = {"animated": animated}
        # (a) unscaled logits: one x axis for every d_k, so a wider spread is seen as wider
        self.stairs_u = ax_u.stairs(zeros_u, self.edges_u, fill=True, color=u["color"], alpha=0.7, **kw)
        ax_u.set(xlim=(self.edges_u[0], self.edges_u[-1]), ylim=(0, 1.1), xlabel=r"$q\cdot k$ (unscaled logit)",
                 ylabel=HIST_YLABEL)
        self.title_u = ax_u.set_title(" " if annotate else "unscaled logits")
        # (b) scaled logits, normalised as (a), with the bell curve of spread 1 for reference
        self.stairs_s = ax_s.stairs(zeros_s, SCALED_EDGES, fill=True, color=s["color"], alpha=0.7, **kw)
        x = np.linspace(-4, 4, 201)
        ax_s.plot(x, np.exp(-x**2 / 2), color="0.2", linewidth=1, label="normal curve, spread 1")
        ax_s.set(xlim=(-4, 4), ylim=(0, 1.1), xlabel=r"$q\cdot k/\sqrt{d_k}$ (scaled logit)", ylabel=HIST_YLABEL)
        ax_s.legend(loc="upper right", fontsize=8)
        self.title_s = ax_s.set_title(" " if annotate else "scaled logits")
        # (c) softmax weights of a query, sorted, averaged over queries
        rank = np.arange(1, n_keys + 1)
        self.line_wu, = ax_w.plot(rank, np.zeros(n_keys), color=u["color"], linestyle=u["linestyle"],
                                  marker=u["marker"], markersize=4, label="unscaled", **kw)
        self.line_ws, = ax_w.plot(rank, np.zeros(n_keys), color=s["color"], linestyle=s["linestyle"],
                                  marker=s["marker"], markersize=4, label=r"scaled by $1/\sqrt{d_k}$", **kw)
        ax_w.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax_w.axhline(1 / n_keys, color="0.5", linewidth=0.8, linestyle=":", label=f"1/{n_keys}: all equal")
        ax_w.set(xlim=(0.5, n_keys + 0.5), ylim=(0, 1.02), xlabel="key, by weight (largest first)",
                 ylabel="weight (mean over queries)", title=f"sorted weights of {n_keys} keys")
        self.texts = {}
        if annotate:
            for name, y, spec in (("unscaled", 0.80, u), ("sqrt", 0.68, s)):
                self.texts[name] = ax_w.text(0.97, y, " ", transform=ax_w.transAxes, ha="right",
                                             color=spec["color"], fontsize=9, **kw)
        ax_w.legend(loc="center right")
        # (d) Jacobian norm against d_k: median and 10-90 % band; a marker at the current d_k
        d_ks = np.asarray(d_ks)
        self.bands = {name: np.maximum(np.asarray(bands[name]), JACOBIAN_YMIN) for name in ("unscaled", "sqrt")}
        self.d_ks = d_ks
        self.markers = {}
        for name, spec in (("unscaled", u), ("sqrt", s)):
            lo, med, hi = self.bands[name]
            if curves:
                ax_j.fill_between(d_ks, lo, hi, color=spec["color"], alpha=0.18, linewidth=0)
                ax_j.plot(d_ks, med, color=spec["color"], linestyle=spec["linestyle"], label=spec["label"])
            self.markers[name], = ax_j.plot([d_ks[0]], [med[0]], linestyle="none", marker=spec["marker"],
                                            markersize=8, color=spec["color"], markeredgecolor="black", **kw)
        if curves:
            ax_j.set_yscale("log")
            ax_j.yaxis.set_major_locator(FixedLocator([10.0**e for e in range(-12, 1, 3)]))
            ax_j.yaxis.set_minor_locator(NullLocator())
            set_d_k_axis(ax_j, d_max=int(d_ks.max()))
            ax_j.set(ylim=(JACOBIAN_YMIN, 2.0), ylabel=r"size of $J$: $\|J\|$ (log scale)",
                     title="size of J: median, middle 80 %")
            if not animated:  # the explorer's moving d_k line would cross it; its weights panel has the legend
                ax_j.legend(loc="lower left", fontsize=8)
        self.vline = ax_j.axvline(d_ks[0], color="0.4", linewidth=0.8, **kw) if animated else None

    def show(self, unscaled: Effects, scaled: Effects, density_u=None, density_s=None) -> None:
        """Put one ``d_k``'s data in the panels (densities computed here unless given)."""
        if not isinstance(unscaled, Effects) or not isinstance(scaled, Effects):
            raise TypeError("unscaled and scaled must be Effects (from sdpa_helpers.overview)")
        d_k = unscaled.d_k
        if density_u is None:
            density_u = histogram_density(unscaled.logits, self.edges_u)
        if density_s is None:
            density_s = histogram_density(scaled.logits, SCALED_EDGES)
        self.stairs_u.set_data(density_u / max(float(density_u.max()), 1e-300))
        self.stairs_s.set_data(density_s / max(float(density_s.max()), 1e-300))
        if self.annotate:
            self.title_u.set_text(f"d_k = {d_k}: unscaled, spread {unscaled.logits.std():.1f}")
            self.title_s.set_text(f"scaled, spread {scaled.logits.std():.2f}")
        self.axes[2].set_ylabel(f"weight, mean of {len(unscaled.sorted_weights)} queries")
        self.line_wu.set_ydata(unscaled.sorted_weights.mean(axis=0))
        self.line_ws.set_ydata(scaled.sorted_weights.mean(axis=0))
        for name, fx in (("unscaled", unscaled), ("sqrt", scaled)):
            if name in self.texts:
                self.texts[name].set_text(f"largest: {float(fx.max_weight.mean):.2f}")
        j = int(np.flatnonzero(self.d_ks == d_k)[0]) if d_k in self.d_ks else None
        for name in ("unscaled", "sqrt"):
            marker = self.markers[name]
            marker.set_visible(j is not None)
            if j is not None:
                marker.set_data([d_k], [self.bands[name][1, j]])
        if self.vline is not None:
            self.vline.set_xdata([d_k, d_k])


def three_effects_figure(rows, d_ks, bands, n_keys: int):
    """The static twin of notebook 00's explorer: one row of panels (a)-(c) per ``(unscaled, scaled)``
    pair of :class:`~sdpa_helpers.overview.Effects` in ``rows``, panel (d) once beside them with a
    marker per row (``d_ks``, ``bands``, ``n_keys`` as in :class:`EffectsPanels`).
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must hold at least one (unscaled, scaled) pair")
    d_max = max(u.d_k for u, _ in rows)
    fig, axes = new_figure(len(rows), 4, figsize=(13.5, 2.6 * len(rows) + 0.4), squeeze=False,
                           gridspec_kw={"width_ratios": (1, 1, 1, 1.15)})
    with style():
        grid = axes[0, 3].get_gridspec()
        for ax in axes[:, 3]:
            ax.remove()
        ax_j = fig.add_subplot(grid[:, 3])
        for k, ((u, s), row_axes) in enumerate(zip(rows, axes)):
            EffectsPanels((*row_axes[:3], ax_j), d_ks, bands, n_keys, d_max, curves=k == 0).show(u, s)
        grid_d = [int(d) for d in d_ks]
        for u, _ in rows:  # name each row's marker
            if u.d_k in grid_d:
                y = max(float(bands["unscaled"][1, grid_d.index(u.d_k)]), JACOBIAN_YMIN)
                ax_j.annotate(f"d_k = {u.d_k}", (u.d_k, y), xytext=(6, 6), textcoords="offset points", fontsize=8)
    return fig
