"""No scale, 1/sqrt(d_k) or 1/d_k (notebook 04): the logits' spread against d_k and its log-log
slopes, and how peaked the softmax is under each scaling (names of :data:`sdpa_helpers.scales.SCALINGS`).
Independent N(0, 1) components, drawn exactly by :func:`sdpa_helpers.sampling.query_logits`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, theory
from .attention import softmax
from .sampling import query_logits
from .saturation import weight_stats
from .scales import D_K_CHOICES, N_KEYS, SCALINGS, SHOWN_D_KS, scale_factor

__all__ = ["D_KS", "N_KEYS", "N_STD_SAMPLES", "SEED", "SHOWN_D_KS", "N_BAND_QUERIES", "BAND_PERCENTILES",
           "simulated_logit_stds",
           "log_log_slopes", "relative_variance_se", "AttentionStats", "attention_by_d_k", "logit_std",
           "weight_bands", "band_polygon"]

#: The course's d_k grid; logits per d_k behind :func:`logit_std`, and its seed.
D_KS = D_K_CHOICES
N_STD_SAMPLES = 1000
SEED = 4
#: Queries behind :func:`weight_bands` (per d_k), and the percentiles of each rank's weight it returns.
N_BAND_QUERIES = 2000
BAND_PERCENTILES = (10, 50, 90)


def _d_ks(d_ks) -> list[int]:
    values = np.ravel(np.asarray(d_ks, dtype=object)).tolist()
    if not values:
        raise ValueError("d_ks must hold at least one d_k")
    return [_checks.positive_int("each entry of d_ks", d) for d in values]


def simulated_logit_stds(d_ks: ArrayLike = D_KS, n: int = 2000, seed: int = 0) -> dict[str, np.ndarray]:
    """Standard deviation of ``n`` simulated logits ``c q . k`` at each d_k (seed ``seed + d_k``), for each
    scaling: name -> (len(d_ks),). The same dot products times each factor, so at one d_k the three
    differ by exactly their factors.

    >>> [round(float(v), 1) for v in simulated_logit_stds([1, 64], n=4000)["sqrt"]]
    [1.0, 1.0]
    """
    d_ks = _d_ks(d_ks)
    n = _checks.positive_int("n", n)
    seed = _checks.seed("seed", seed)
    stds = {name: np.empty(len(d_ks)) for name in SCALINGS}
    for i, d_k in enumerate(d_ks):
        sd = float(query_logits(d_k, 1, n, scale=1.0, rng=seed + d_k).std())
        for name in SCALINGS:
            stds[name][i] = scale_factor(name, d_k) * sd
    return stds


def log_log_slopes(d_ks: ArrayLike, stds: dict, n: int) -> dict[str, tuple[float, float]]:
    """Least-squares slope of ``log2(std)`` against ``log2(d_k)`` and its standard error (points taken
    independent, each with the SE of ``log2`` of a standard deviation of ``n`` values), per scaling:
    name -> (slope, se). Theory: 1/2, 0, -1/2.

    >>> d = [1, 4, 16, 64]
    >>> {k: round(v[0], 6) for k, v in log_log_slopes(d, {"sqrt": np.ones(4), "unscaled": np.sqrt(d)}, n=1000).items()}
    {'sqrt': 0.0, 'unscaled': 0.5}
    """
    d_ks = _d_ks(d_ks)
    n = _checks.positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be >= 2 (a standard deviation needs two values), got {n}")
    if not isinstance(stds, dict) or not stds:
        raise TypeError(f"stds must be a non-empty dict scaling name -> values, got {type(stds).__name__}")
    if len(set(d_ks)) < 2:
        raise ValueError(f"d_ks must hold at least two different d_k to fit a slope, got {d_ks}")
    x = np.log2(d_ks)
    w = (x - x.mean()) / ((x - x.mean()) ** 2).sum()  # slope = w @ log2(std)
    se_point = np.array([theory.sample_variance_moments(n, 1.0, theory.dot_product_excess_kurtosis(d)).std / 2
                         for d in d_ks]) / np.log(2)
    se = float(np.sqrt((w**2 * se_point**2).sum()))
    out = {}
    for name, values in stds.items():
        y = _checks.real_array(f"stds[{name!r}]", values, min_ndim=1, shape_hint="(len(d_ks),)")
        if y.shape != (len(d_ks),) or np.any(y <= 0):
            raise ValueError(f"stds[{name!r}] must hold one positive value per d_k ({len(d_ks)})")
        out[name] = (float(w @ np.log2(y)), se)
    return out


def relative_variance_se(d_k: int, n: int) -> float:
    """Standard error of the sample variance of ``n`` independent ``q . k`` over their true variance ``d_k``
    (about ``sqrt(2 / n)`` for large ``d_k``).

    >>> round(relative_variance_se(4096, 20_000) / float(np.sqrt(2 / 20_000)), 3)
    1.0
    """
    d_k = _checks.d_k("d_k", d_k)
    n = _checks.positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be at least 2 (a sample variance needs two values), got {n}")
    return float(theory.sample_variance_moments(n, 1.0, theory.dot_product_excess_kurtosis(d_k)).std)


class AttentionStats(NamedTuple):
    """Per scaling name, one value per d_k: mean entropy (natural log) and mean largest weight over
    the queries; and, per d_k, every query's ``ln n - entropy`` under the 1/d_k scaling."""

    entropy: dict
    max_weight: dict
    inv_d_entropy_gap: dict


def attention_by_d_k(d_ks: ArrayLike = D_KS, n_keys: int = N_KEYS, n_queries: int = 2000,
                     seed: int = 0) -> AttentionStats:
    """:class:`AttentionStats` of ``n_queries`` random queries against their own ``n_keys`` keys at each
    d_k (seed ``seed + d_k``), the same logits times each scaling's factor.

    >>> s = attention_by_d_k([1, 4096], n_keys=16, n_queries=500)
    >>> round(float(s.entropy["inv_d"][-1]), 2), round(float(np.log(16)), 2)  # 1/d_k: near uniform
    (2.77, 2.77)
    """
    d_ks = _d_ks(d_ks)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    seed = _checks.seed("seed", seed)
    entropy = {name: np.empty(len(d_ks)) for name in SCALINGS}
    max_weight = {name: np.empty(len(d_ks)) for name in SCALINGS}
    gap = {}
    for i, d_k in enumerate(d_ks):
        z = query_logits(d_k, n_keys, n_queries, scale=1.0, rng=seed + d_k)  # (n_queries, n_keys)
        for name in SCALINGS:
            stats = weight_stats(scale_factor(name, d_k) * z)
            entropy[name][i] = stats.entropy.mean()
            max_weight[name][i] = stats.max_weight.mean()
            if name == "inv_d":
                gap[d_k] = np.log(n_keys) - stats.entropy
    return AttentionStats(entropy, max_weight, gap)


def logit_std(d_k: int) -> float:
    """Standard deviation of ``N_STD_SAMPLES`` unscaled logits ``q . k`` at ``d_k`` (exact draws, seed ``SEED``).
    """
    d_k = _checks.d_k("d_k", d_k)
    if d_k > max(D_KS):
        raise ValueError(f"d_k must be at most {max(D_KS)}, got {d_k}")
    return float(query_logits(d_k, 1, N_STD_SAMPLES, scale=1.0, rng=SEED).std())


def weight_bands(d_k: int) -> dict[str, np.ndarray]:
    """Per rank (each query's keys sorted from the largest ``q . k`` down), the 10th, 50th and 90th
    percentile (:data:`BAND_PERCENTILES`) of the softmax weight over :data:`N_BAND_QUERIES` random
    queries of ``N_KEYS`` keys (the draws of ``attention_by_d_k(seed=0)``), for each scaling:
    name -> ndarray (3, N_KEYS).

    >>> b = weight_bands(1024)
    >>> sorted(b), b["sqrt"].shape, float(b["unscaled"][1, 0]) > 0.999
    (['inv_d', 'sqrt', 'unscaled'], (3, 16), True)
    """
    d_k = _checks.d_k("d_k", d_k)
    if d_k not in D_KS:
        raise ValueError(f"d_k must be one of {D_KS}, got {d_k}")
    z = -np.sort(-query_logits(d_k, N_KEYS, N_BAND_QUERIES, scale=1.0, rng=d_k), axis=1)  # each row largest first
    return {name: np.percentile(softmax(scale_factor(name, d_k) * z), BAND_PERCENTILES, axis=0) for name in SCALINGS}


def band_polygon(low: ArrayLike, high: ArrayLike) -> np.ndarray:
    """The outline, shape (2 n, 2), of the band between ``low`` and ``high`` over ranks 1 ... n
    (drawn by :class:`sdpa_helpers.plots.scaling.SortedWeightsPanel`).
    """
    low = _checks.real_array("low", low, min_ndim=1, shape_hint="(n,)")
    high = _checks.real_array("high", high, min_ndim=1, shape_hint="(n,)")
    if low.ndim != 1 or high.shape != low.shape:
        raise ValueError(f"low and high must be 1-D of the same length, got shapes {low.shape} and {high.shape}")
    ranks = np.arange(1, low.size + 1, dtype=float)
    return np.column_stack([np.r_[ranks, ranks[::-1]], np.r_[low, high[::-1]]])
