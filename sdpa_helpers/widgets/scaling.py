"""Explorer for notebook 04: drag d_k and compare no scaling, 1/sqrt(d_k) and 1/d_k.

- :class:`ScalingExplorer` -- left: where the three logit standard deviations sit on their
  log-log lines; right: one query's softmax weights over ``N_KEYS`` keys for each scaling.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import _checks
from ..attention import entropy, softmax
from ..plots import scaling as sc_plots
from ..sampling import sample_components, sample_dot_products
from . import D_K_CHOICES, Explorer, d_k_slider

__all__ = ["ScalingExplorer", "N_KEYS", "N_STD_SAMPLES", "SEED", "logit_std", "query_weights"]

#: Keys the query attends over, dot products simulated per d_k for the std markers, and the seed.
N_KEYS = 16
N_STD_SAMPLES = 1000
SEED = 4
_PLAIN = {"unscaled": "unscaled", "sqrt": "scaled by 1/√d_k", "inv_d": "scaled by 1/d_k"}


@lru_cache(maxsize=None)
def logit_std(d_k: int) -> float:
    """Standard deviation of ``N_STD_SAMPLES`` unscaled dot products ``q . k`` at ``d_k`` (cached).

    >>> round(logit_std(64) / 8, 1)  # about sqrt(d_k)
    1.0
    """
    return float(sample_dot_products(_checks.positive_int("d_k", d_k), N_STD_SAMPLES, rng=SEED).std())


@lru_cache(maxsize=1)
def _query_and_keys():
    """One query (4096,) and ``N_KEYS`` keys (N_KEYS, 4096); the first d_k columns serve every d_k."""
    q = sample_components(max(D_K_CHOICES), rng=SEED)
    keys = sample_components((N_KEYS, max(D_K_CHOICES)), rng=SEED + 1)
    return q, keys


@lru_cache(maxsize=None)
def query_weights(d_k: int) -> dict:
    """Softmax weights of one query over ``N_KEYS`` keys for each scaling, keys sorted by ``q . k``.

    Returns a dict name -> ndarray, shape (N_KEYS,), largest weight first (cached; do not modify).

    >>> w = query_weights(64)
    >>> sorted(w), w["sqrt"].shape, bool(np.isclose(w["sqrt"].sum(), 1.0))
    (['inv_d', 'sqrt', 'unscaled'], (16,), True)
    """
    d_k = _checks.positive_int("d_k", d_k)
    if d_k > max(D_K_CHOICES):
        raise ValueError(f"d_k must be at most {max(D_K_CHOICES)}, got {d_k}")
    q, keys = _query_and_keys()
    z = keys[:, :d_k] @ q[:d_k]  # (N_KEYS, d_k) @ (d_k,) -> (N_KEYS,)
    z = np.sort(z)[::-1]
    return {name: softmax(sc_plots.scale_of(name, d_k) * z) for name in sc_plots.SCALINGS}


class ScalingExplorer(Explorer):
    """Drag d_k: the three logit spreads on their log-log lines, and what each does to the softmax."""

    figsize = (10.0, 3.9)
    main = "d_k"

    def _controls(self):
        return {"d_k": d_k_slider(64)}

    def _setup(self, fig):
        self.ax_std, self.ax_w = fig.subplots(1, 2)
        sc_plots.logit_std_vs_d_k(ax=self.ax_std)
        self.ax_std.set_title("standard deviation of the logits")
        self.markers, self.lines = {}, {}
        ranks = np.arange(1, N_KEYS + 1)
        for name, (spec, _) in sc_plots.SCALINGS.items():
            (self.markers[name],) = self.ax_std.plot([], [], linestyle="none", marker=spec["marker"], markersize=10,
                                                     color=spec["color"], markeredgecolor="black", animated=True)
            (self.lines[name],) = self.ax_w.plot(ranks, np.full(N_KEYS, 1 / N_KEYS), color=spec["color"],
                                                 linestyle=spec["linestyle"], marker=spec["marker"], markersize=4,
                                                 label=spec["label"], animated=True)
        self.ax_w.axhline(1 / N_KEYS, color="black", linewidth=1, linestyle=(0, (1, 3)))
        self.ax_w.set(xlabel=r"key, sorted by $q\cdot k$", ylabel="softmax weight", ylim=(0, 1.02),
                      xlim=(0.5, N_KEYS + 0.5))
        self.ax_w.legend(loc="upper right")
        self.title = self.ax_w.set_title(" ", animated=True)

    def _update(self, d_k):
        sd = logit_std(d_k)
        weights = query_weights(d_k)
        parts = []
        for name in sc_plots.SCALINGS:
            c = sc_plots.scale_of(name, d_k)
            self.markers[name].set_data([d_k], [c * sd])
            self.lines[name].set_ydata(weights[name])
            parts.append(f"{_PLAIN[name]}: logit std {c * sd:.3g}, "
                         f"largest weight {weights[name][0]:.2f}, entropy {float(entropy(weights[name])):.2f}")
        self.title.set_text(f"one query, {N_KEYS} keys, $d_k$ = {d_k}")
        return (f"d_k = {d_k} (uniform weights would be 1/{N_KEYS} = {1 / N_KEYS:.4f}; "
                f"entropy at most log {N_KEYS} = {np.log(N_KEYS):.2f}).<br>" + "<br>".join(parts))
