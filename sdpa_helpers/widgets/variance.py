"""Explorer for notebook 02: drag d_k, pick the component distribution, watch q·k approach N(0, d_k).

- :class:`VarianceExplorer` -- the histogram of q·k against the N(0, d_k) density, drawn by the
  same :class:`sdpa_helpers.plots.variance.HistogramPanel` as the notebook's static figures.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W

from ..plots.variance import HistogramPanel
from ..sampling import DISTRIBUTIONS, EXCESS_KURTOSIS
from ..theory import dot_product_excess_kurtosis, dot_product_moments
from ..variance import sample_dot_products_fast, sample_summary
from . import Explorer, d_k_slider

__all__ = ["VarianceExplorer"]


def _fmt(v: float) -> str:
    """A variance for the title: two decimals below 100, whole numbers above."""
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}"


@lru_cache(maxsize=64)
def _frame(d_k: int, dist: str, n: int, seed: int):
    """The samples of one setting (O(n) exact draws: a first visit at d_k = 4096 costs what d_k = 1 does)
    and their summary, computed once per setting."""
    s = sample_dot_products_fast(d_k, n, dist, rng=seed)
    s.flags.writeable = False  # shared through the cache
    return s, sample_summary(s)


class VarianceExplorer(Explorer):
    """Histogram of q·k against the N(0, d_k) density, for the slider's d_k and the chosen components.

    The samples (4000 pairs per setting) are drawn once per ``(d_k, components)`` by the O(n)
    exact sampler :func:`sdpa_helpers.variance.sample_dot_products_fast`, so a first visit is
    fast and moving back to a setting shows the same picture. Rademacher components make
    ``q . k`` discrete: drawn as stems (probability / 2 at each value).
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
        # Axes in units of sqrt(d_k) (labelled so), fixed for every d_k: the background (frame, ticks,
        # legend, the normal curve) takes a few forms only; the bars or stems move.
        fig.set_layout_engine("none")
        self.ax = fig.add_axes((0.1, 0.17, 0.88, 0.72))
        self.panel = HistogramPanel(self.ax, standardised=True, animated=True)
        self.ax.set_title(f"q·k of {self.n_samples} simulated pairs against the normal N(0, d_k)")

    def _background_key(self, d_k, components):
        return self.ax.get_ylim()[1], components == "rademacher"  # set by the panel in _update

    def _update(self, d_k, components):
        samples, st = _frame(d_k, components, self.n_samples, self.seed)
        theory = dot_product_moments(d_k)
        self.panel.show(samples, d_k, components, title="")
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
        return (f"<b>{components} components, d_k = {d_k}</b>: the x axis spans ±4.5√d_k = "
                f"±{4.5 * d_k ** 0.5:.4g}; variance {_fmt(st['var'])} (theory {theory.var:g})."
                "<table><tr><th>q·k</th><th>sample ± SE</th><th>theory</th><th>(sample − theory) / SE</th></tr>"
                f"{cells}</table>"
                "<small>Excess kurtosis: 0 for a normal; its theory (E[x⁴]² − 3)/d_k is derived "
                "in a deep dive of notebook 02.</small>")
