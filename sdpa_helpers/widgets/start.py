"""Explorer for notebook 00: drag d_k and watch the spread of q·k, unscaled and scaled."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import plots
from ..sampling import make_rng
from ..theory import dot_product_moments
from ..plots.start import BINS
from . import Explorer, d_k_slider

__all__ = ["SpreadExplorer"]


@lru_cache(maxsize=32)
def _samples(d_k: int, n: int, seed: int) -> np.ndarray:
    """``n`` draws of ``q . k`` for standard normal ``q``, ``k`` of length ``d_k``, in O(n) time.

    Exact in distribution, not an approximation: ``q . k = |q| (u . k)`` with ``u = q / |q|``,
    and for an isotropic Gaussian ``k`` independent of ``q``, ``u . k`` is N(0, 1) whatever ``u``
    is; ``|q|^2`` is chi-square with ``d_k`` degrees of freedom. So a slider move at
    d_k = 4096 costs what it costs at d_k = 1.
    """
    rng = make_rng(seed)
    norm_q = np.sqrt(rng.chisquare(d_k, n))  # |q|
    return norm_q * rng.standard_normal(n)  # |q| * N(0, 1)


class SpreadExplorer(Explorer):
    """Histograms of q·k (unscaled, left) and q·k/√d_k (scaled, right) for the slider's d_k."""

    figsize = (9.0, 3.2)
    n_samples = 5000
    seed = 0

    def _controls(self):
        return {"d_k": d_k_slider(64)}

    def _setup(self, fig):
        self.ax_u, self.ax_s = fig.subplots(1, 2)
        zeros = np.zeros(len(BINS) - 1)
        self.step_u = self.ax_u.stairs(zeros, BINS, fill=True, color=plots.UNSCALED["color"], alpha=0.6,
                                       animated=True)
        self.step_s = self.ax_s.stairs(zeros, BINS, fill=True, color=plots.SCALED["color"], alpha=0.6,
                                       animated=True)
        self.title_u = self.ax_u.set_title(" ", animated=True)
        self.title_s = self.ax_s.set_title(" ", animated=True)
        self.ax_u.set(xlabel=r"$q\cdot k$", ylabel="density")
        self.ax_s.set(xlabel=r"$q\cdot k/\sqrt{d_k}$", ylabel="density", xlim=(-4, 4), ylim=(0, 0.7))

    def _background_key(self, d_k):
        return d_k  # the unscaled panel's x range follows sqrt(d_k)

    def _update(self, d_k):
        s = _samples(d_k, self.n_samples, self.seed)
        sd = np.sqrt(d_k)
        counts, _ = np.histogram(s / sd, bins=BINS)
        unit_density = counts / s.size / np.diff(BINS)  # density of s / sqrt(d_k)
        self.step_u.set_data(unit_density / sd, BINS * sd)
        self.ax_u.set_xlim(-4 * sd, 4 * sd)
        self.ax_u.set_ylim(0, 0.7 / sd)
        self.step_s.set_data(unit_density, BINS)
        theory = dot_product_moments(d_k)
        self.title_u.set_text(f"unscaled: std {s.std():.2f} (theory {theory.std:.2f})")
        self.title_s.set_text(f"scaled: std {s.std() / sd:.2f} (theory 1.00)")
        return (f"d_k = {d_k}: the unscaled spread is about √{d_k} = {theory.std:.1f}; "
                "the scaled spread stays about 1.")
