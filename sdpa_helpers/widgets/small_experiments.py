"""Explorer for notebook 03: drag the matrix size n and watch the spread of a sample variance shrink.

- :func:`relative_sample_variances` -- cached ``s2 / n`` for ``n x n`` products (what the
  explorer and its static twin show);
- :class:`VarianceSpreadExplorer` -- histogram of ``s2 / n`` for the slider's n, and where its
  spread sits on the log-log curve of spread against n.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np

from .. import _checks, plots
from ..plots import small_experiments as sx_plots
from ..sampling import sample_matmul_variances
from . import Explorer

__all__ = ["SIZES", "SEED", "reps_for", "relative_sample_variances",
           "VarianceSpreadExplorer"]

#: Matrix sizes n offered by the slider: powers of two, 2 ... 256.
SIZES = tuple(2**i for i in range(1, 9))
#: Seed of the cached simulations.
SEED = 3

def reps_for(n: int) -> int:
    """Repetitions simulated for ``n x n`` products: many for small n, fewer for large n.

    Each repetition draws ``2 n^2`` random numbers; the repetitions are capped at 20 000 and
    at about 2**21 random numbers per n (but at least 48 repetitions), so all sizes together
    take a fraction of a second. The spread of ``s2 / n`` is small for large n, so fewer
    repetitions show it.

    >>> [reps_for(n) for n in (2, 16, 128, 256)]
    [20000, 4096, 64, 48]
    """
    n = _checks.positive_int("n", n)
    return int(min(20_000, max(48, 2**21 // (2 * n**2))))


@lru_cache(maxsize=None)
def relative_sample_variances(n: int) -> np.ndarray:
    """``s2 / n`` (ddof=1) of ``n x n`` products over :func:`reps_for` ``(n)`` repetitions, cached.

    The entries of an ``n x n`` product have variance n, so ``s2 / n`` estimates 1. The
    returned array is read-only (it is shared by every caller).

    >>> r = relative_sample_variances(2)
    >>> r.shape, r.flags.writeable
    ((20000,), False)
    """
    n = _checks.positive_int("n", n)
    r = sample_matmul_variances(n, reps_for(n), rng=SEED) / n
    r.flags.writeable = False
    return r


class VarianceSpreadExplorer(Explorer):
    """Left: histogram of ``s2 / n`` for ``n x n`` products. Right: its spread against n (log-log).

    Construction simulates every n (cached, about 2**21 random numbers each) and draws the
    background of every n once, so that each slider move afterwards only blits.
    """

    figsize = (9.5, 3.6)
    main = "n"

    def __init__(self, **values):
        super().__init__(**values)
        self._prerender()

    def _prerender(self) -> None:
        """Visit every n once, without notifying observers, then come back to the current n."""
        control = self.controls[self.main]
        current = control.value
        control.unobserve(self._on_change, names="value")
        try:
            for n in (*[v for v in SIZES if v != current], current):
                control.value = n
                self.update()
        finally:
            control.observe(self._on_change, names="value")

    def _controls(self):
        return {"n": W.SelectionSlider(options=list(SIZES), value=2, description="n",
                                       continuous_update=True, style={"description_width": "initial"},
                                       layout=W.Layout(width="360px"))}

    def _setup(self, fig):
        self.ax_h, self.ax_s = fig.subplots(1, 2)
        bins = sx_plots.REL_BINS
        self.stairs = self.ax_h.stairs(np.zeros(len(bins) - 1), bins, fill=True, color=plots.SCALED["color"],
                                       alpha=0.6, animated=True)
        self.ax_h.axvline(1.0, **sx_plots.TRUTH, label="true value 1")
        self.mean_line = self.ax_h.axvline(1.0, color=plots.SCALED["color"], linestyle="--", linewidth=1.5,
                                           animated=True, label="mean of the experiments")
        self.ax_h.set_xlim(bins[0], bins[-1])
        self.ax_h.set(xlabel=r"$s^2 / n$ (sample variance over the true variance $n$)",
                      ylabel="fraction of experiments")
        self.ax_h.legend(loc="upper right")
        self.title = self.ax_h.set_title(" ", animated=True)
        sx_plots.spread_vs_n(SIZES, None, ax=self.ax_s, n_max=max(SIZES))
        (self.marker,) = self.ax_s.plot([], [], linestyle="none", marker="o", markersize=9,
                                        color=plots.OKABE_ITO["black"], animated=True,
                                        label="simulation at this $n$")
        self.ax_s.legend(loc="lower left")
        self.ax_s.set_title("spread of $s^2/n$ against $n$")

    def _background_key(self, n):
        return n  # the histogram's y range follows n

    def _update(self, n):
        r = relative_sample_variances(n)
        fractions = sx_plots.bin_fractions(r, sx_plots.REL_BINS)
        self.stairs.set_data(fractions)
        self.ax_h.set_ylim(0, 1.15 * fractions.max())
        mean, sd = float(r.mean()), float(r.std(ddof=1))
        self.mean_line.set_xdata([mean, mean])
        exact, iid = sx_plots.exact_relative_sd([n])[0], sx_plots.iid_relative_sd([n])[0]
        self.marker.set_data([n], [sd])
        self.title.set_text(f"$n$ = {n}: {n * n} entries, SD of $s^2/n$ = {sd:.3f}")
        outside = float(np.mean(r > sx_plots.REL_BINS[-1]))
        return (f"n = {n}: each experiment pools the {n * n} entries of one {n}×{n} product. "
                f"Over {r.size} experiments, s²/n has mean {mean:.3f} (truth 1) and standard deviation "
                f"{sd:.3f} (exact theory {exact:.3f}; the i.i.d. formula would say {iid:.3f}). "
                f"{100 * outside:.1f}% of the experiments fall beyond the right edge.")
