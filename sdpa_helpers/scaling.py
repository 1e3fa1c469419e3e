"""No scale, 1/sqrt(d_k) or 1/d_k: the numbers behind notebook 04 ("why sqrt(d_k) and not d_k").

This module offers (the scalings are named as in :data:`sdpa_helpers.scales.SCALINGS`):

- :data:`D_KS`, :data:`N_KEYS`, :data:`SEED` -- the d_k grid, the keys per query and the seed;
- :func:`simulated_logit_stds` -- the standard deviation of simulated logits ``c q . k`` at every
  d_k, for each scaling (the same draws scaled three ways);
- :func:`log_log_slopes` -- the slope of ``log2(std)`` against ``log2(d_k)`` for each scaling,
  with its standard error;
- :func:`attention_by_d_k` -- mean entropy and mean largest softmax weight of random queries
  against ``N_KEYS`` keys, at every d_k, for each scaling;
- :func:`relative_variance_se` -- the standard error of a sample variance of dot products,
  relative to the true variance (the tolerance of notebook 04's first check);
- :func:`logit_std`, :func:`query_weights` -- cached numbers for notebook 04's explorer: the
  spread of 1000 logits, and one typical query's weights over ``N_KEYS`` keys
  (:func:`typical_query`: the rule that picks it).

numpy only. Independent mean-0, variance-1 components throughout: the setting of the
paper's footnote, at initialisation.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, theory
from .attention import softmax
from .sampling import make_rng
from .saturation import prefix_logits, query_logits, weight_stats
from .scales import D_K_CHOICES, SCALINGS, scale_factor

__all__ = ["D_KS", "N_KEYS", "N_STD_SAMPLES", "SEED", "SHOWN_D_KS", "QUERY_SEEDS", "simulated_logit_stds",
           "log_log_slopes", "relative_variance_se", "AttentionStats", "attention_by_d_k", "logit_std",
           "TypicalQuery", "typical_query", "query_weights"]

#: The d_k grid of notebook 04's figures and explorer: the course's grid, powers of two, 1 ... 4096.
D_KS = D_K_CHOICES
#: Keys each query attends over.
N_KEYS = 16
#: Logits per d_k behind the explorer's markers (:func:`logit_std`).
N_STD_SAMPLES = 1000
#: Seed of the explorer's cached numbers.
SEED = 4
#: The d_k of notebook 04's small multiples of one query's weights.
SHOWN_D_KS = (4, 64, 1024)
#: The candidate queries (seeds) among which :func:`typical_query` picks the one shown.
QUERY_SEEDS = range(100)


def _d_ks(d_ks) -> list[int]:
    values = np.ravel(np.asarray(d_ks, dtype=object)).tolist()
    if not values:
        raise ValueError("d_ks must hold at least one d_k")
    return [_checks.positive_int("each entry of d_ks", d) for d in values]


def simulated_logit_stds(d_ks: ArrayLike = D_KS, n: int = 2000, seed: int = 0) -> dict[str, np.ndarray]:
    """Standard deviation of ``n`` simulated logits ``c q . k`` at each d_k, for each scaling.

    At each d_k, ``n`` dot products of independent pairs of standard normal vectors are
    drawn (seed ``seed + d_k``) through the exact shortcut ``q . k = ||q|| a`` of
    :func:`sdpa_helpers.saturation.query_logits` (same distribution as full vectors, at a
    cost that does not grow with d_k), and the same dot products are multiplied by each
    scaling's factor. So the three results at one d_k
    differ by exactly their factors: ``log2`` of their ratio is ``(1/2) log2 d_k`` (sqrt vs
    unscaled) or ``log2 d_k`` (inv_d vs unscaled).

    Returns
    -------
    dict name -> ndarray, shape (len(d_ks),)

    >>> s = simulated_logit_stds([1, 64], n=4000)
    >>> sorted(s), [round(float(v), 1) for v in s["sqrt"]]
    (['inv_d', 'sqrt', 'unscaled'], [1.0, 1.0])
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
    """Least-squares slope of ``log2(std)`` against ``log2(d_k)``, with its standard error, per scaling.

    The standard error treats the points as independent, each with the standard error of
    ``log2`` of a standard deviation of ``n`` values: half the relative standard error of
    their sample variance (:func:`sdpa_helpers.theory.sample_variance_moments`, excess
    kurtosis ``6 / d_k``), divided by ``ln 2``. Theory: slopes 1/2, 0 and -1/2.

    Returns
    -------
    dict name -> (slope, standard error)

    >>> d = [1, 4, 16, 64]
    >>> exact = {"sqrt": np.ones(4), "unscaled": np.sqrt(d)}
    >>> {k: round(v[0], 6) for k, v in log_log_slopes(d, exact, n=1000).items()}
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
    """Standard error of the sample variance of ``n`` independent dot products ``q . k`` (independent
    N(0, 1) components), divided by their true variance ``d_k``.

    From :func:`sdpa_helpers.theory.sample_variance_moments` with the excess kurtosis ``6 / d_k`` of
    ``q . k`` (:func:`sdpa_helpers.theory.dot_product_excess_kurtosis`): about ``sqrt(2 / n)`` for
    large ``d_k``.

    >>> round(relative_variance_se(4096, 20_000) / float(np.sqrt(2 / 20_000)), 3)
    1.0
    """
    d_k = _checks.positive_int("d_k", d_k)
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
    """How peaked the softmax of random queries is, at every d_k, for each scaling.

    At each d_k, ``n_queries`` independent queries each meet their own ``n_keys`` keys
    (standard normal components; drawn exactly by :func:`sdpa_helpers.saturation.query_logits`,
    seed ``seed + d_k``); the same unscaled logits are multiplied by each scaling's factor.

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


@lru_cache(maxsize=len(D_KS))
def _logit_std(d_k: int) -> float:
    return float(query_logits(d_k, 1, N_STD_SAMPLES, scale=1.0, rng=SEED).std())


def logit_std(d_k: int) -> float:
    """Standard deviation of ``N_STD_SAMPLES`` unscaled logits ``q . k`` at ``d_k`` (cached).

    Exact draws whose cost does not depend on d_k (:func:`sdpa_helpers.saturation.query_logits`).

    >>> round(logit_std(64) / 8, 1)  # about sqrt(d_k)
    1.0
    """
    d_k = _checks.positive_int("d_k", d_k)
    if d_k > max(D_KS):
        raise ValueError(f"d_k must be at most {max(D_KS)}, got {d_k}")
    return _logit_std(d_k)


class TypicalQuery(NamedTuple):
    """The query :func:`query_weights` shows: its seed, its largest weight under 1/sqrt(d_k) at each
    d_k of :data:`SHOWN_D_KS`, and the median of the same over the candidates :data:`QUERY_SEEDS`."""

    seed: int
    largest: np.ndarray
    median: np.ndarray


def _largest_scaled_weights(seed: int) -> np.ndarray:
    """One candidate query's largest weight under 1/sqrt(d_k) at each d_k of SHOWN_D_KS."""
    z = prefix_logits(D_KS, N_KEYS, rng=make_rng(seed))  # (len(D_KS), N_KEYS)
    return np.array([softmax(scale_factor("sqrt", d) * z[D_KS.index(d)]).max() for d in SHOWN_D_KS])


@lru_cache(maxsize=1)
def typical_query() -> TypicalQuery:
    """The most typical of the candidate queries :data:`QUERY_SEEDS` (each drawn with its 16 keys as
    :func:`sdpa_helpers.saturation.prefix_logits` does, from ``make_rng(seed)``).

    The rule: at each d_k of :data:`SHOWN_D_KS`, rank the candidates by their largest weight under
    1/sqrt(d_k) (percentile 0 to 100); pick the one whose percentiles are closest to 50, summed over
    those d_k (the first on a tie). A picture of one query then shows the rule, not an outlier.

    >>> t = typical_query()
    >>> t.seed in QUERY_SEEDS, bool(np.all(np.abs(t.largest / t.median - 1) < 0.25))
    (True, True)
    """
    seeds = list(QUERY_SEEDS)
    w = np.array([_largest_scaled_weights(s) for s in seeds])  # (n_seeds, len(SHOWN_D_KS))
    percentile = w.argsort(axis=0).argsort(axis=0) * 100 / (len(seeds) - 1)
    best = int(np.argmin(np.abs(percentile - 50).sum(axis=1)))
    largest, median = w[best].copy(), np.median(w, axis=0)
    largest.flags.writeable = median.flags.writeable = False  # cached: every caller gets the same arrays
    return TypicalQuery(seeds[best], largest, median)


@lru_cache(maxsize=1)
def _prefix_logits() -> np.ndarray:
    """The typical query's unscaled logits against ``N_KEYS`` keys at every d_k of :data:`D_KS`, (13, N_KEYS)."""
    z = prefix_logits(D_KS, N_KEYS, rng=make_rng(typical_query().seed))
    z.flags.writeable = False  # cached
    return z


def query_weights(d_k: int) -> dict[str, np.ndarray]:
    """Softmax weights of one query (:func:`typical_query`) over ``N_KEYS`` keys for each scaling,
    keys sorted by ``q . k``.

    The same query and keys at every d_k, cut to their first d_k components (drawn exactly,
    :func:`sdpa_helpers.saturation.prefix_logits`). Returns a new dict name -> ndarray,
    shape (N_KEYS,), largest weight first.

    >>> w = query_weights(64)
    >>> sorted(w), w["sqrt"].shape, bool(np.isclose(w["sqrt"].sum(), 1.0))
    (['inv_d', 'sqrt', 'unscaled'], (16,), True)
    """
    d_k = _checks.positive_int("d_k", d_k)
    if d_k not in D_KS:
        raise ValueError(f"d_k must be one of {D_KS}, got {d_k}")
    z = np.sort(_prefix_logits()[D_KS.index(d_k)])[::-1]  # (N_KEYS,), largest first
    return {name: softmax(scale_factor(name, d_k) * z) for name in SCALINGS}
