"""Softmax saturation (notebook 05), by Monte Carlo and by a closed form: numpy only.

One query ``q`` meets ``n_keys`` keys ``k_j``; all components are independent N(0, 1).
The logits are ``z_j = c * (q . k_j)`` with ``c`` given by a ``scale`` argument in the
package's one vocabulary (:func:`sdpa_helpers.scales.scale_factor`). This module draws those
logits exactly and cheaply, measures how peaked ``softmax(z)`` is (largest weight, entropy,
effective number of keys) against ``d_k``, compares the entropy with its large-``n`` law
``H ~ ln n - sigma^2/2``, and finds the measured onset of saturation. The gradient that a
saturated softmax passes back is :mod:`sdpa_helpers.gradients` (notebook 06).

The draws use one exact shortcut. For a fixed query, ``q . k_j = ||q|| a_j`` where
``a_j = (q/||q||) . k_j`` are independent N(0, 1) (a unit vector dotted with a standard
normal vector), and ``||q||^2`` is chi-square with ``d_k`` degrees of freedom. So
``n_queries`` rows of logits cost ``n_queries * (n_keys + 1)`` random numbers whatever
``d_k`` is, and the distribution is exactly that of the full vectors.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import _checks, gradients
from .attention import softmax
from .sampling import (  # noqa: F401  (re-exported: notebooks 05 and 06 call them as saturation.*)
    MCEstimate,
    check_d_ks,
    chi_norms,
    curve_draws,
    make_rng,
    mc_estimate,
    prefix_logits,
    query_logits,
)
from .scales import scale_factor

__all__ = [
    "KEY_COUNTS", "explorer_queries", "MCEstimate", "mc_estimate", "query_logits", "prefix_logits",
    "WeightStats", "weight_stats", "SaturationCurves", "saturation_curves",
    "entropy_closed_form", "effective_keys_closed_form", "iid_entropy", "law_holds_up_to", "measured_onset",
    "MEASURED_ONSETS", "onset_grid", "onset_over_seeds", "onset_table", "law_error", "LawCheck", "law_check",
    "slide_medians",
    "temperature_curves",
]


#: Numbers of keys (sequence lengths) offered by notebook 05's explorer.
KEY_COUNTS = (4, 16, 64, 256, 1024)
#: The measured onset of saturation for each of :data:`KEY_COUNTS`: the median over 5 seeds of
#: :func:`onset_over_seeds` (notebook 05's section 5 measures the same live). Stored, so that the
#: explorer builds in well under a second; ``tests/test_saturation.py`` recomputes every value.
MEASURED_ONSETS = {4: 21.397, 16: 4.0074, 64: 2.7455, 256: 2.3443, 1024: 2.2026}


def explorer_queries(n_keys: int, budget: int = 16384) -> int:
    """Queries per ``d_k`` for the explorer's curves at ``n_keys`` keys: ``budget // n`` (at least 32).

    The work per curve point is ``n_queries * n_keys`` softmax entries, so every key count costs
    the same; the entropy of many keys varies less from query to query, so its standard error
    stays small.

    >>> [explorer_queries(n) for n in KEY_COUNTS]
    [4096, 1024, 256, 64, 32]
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return max(32, _checks.positive_int("budget", budget) // n_keys)


class WeightStats(NamedTuple):
    """Per row of logits: the largest softmax weight, the entropy (nats), and ``exp(entropy)``."""

    max_weight: np.ndarray
    entropy: np.ndarray
    effective_keys: np.ndarray


def weight_stats(logits) -> WeightStats:
    """How peaked ``softmax(logits)`` is, row by row, computed stably from the logits.

    ``entropy = -sum_i p_i log p_i`` uses ``log p_i = z_i - logsumexp(z)``, which is exact
    even where ``p_i`` underflows to 0; a term with ``p_i = 0`` contributes 0 (its limit), also
    when the gap to the largest logit overflows (logits near +-1e308). ``effective_keys = exp(entropy)`` runs from 1
    (one-hot) to ``n`` (uniform): the number of equally weighted keys with that entropy.

    Parameters
    ----------
    logits : array_like, shape (..., n)
        Finite logits; the softmax runs over the last axis.

    Returns
    -------
    WeightStats
        Fields of shape ``(...)``.

    Examples
    --------
    >>> s = weight_stats([[0.0, 0.0, 0.0, 0.0], [0.0, 1e6, 0.0, 0.0]])
    >>> s.max_weight.tolist(), s.entropy.round(4).tolist(), s.effective_keys.round(4).tolist()
    ([0.25, 1.0], [1.3863, 0.0], [4.0, 1.0])
    >>> float(weight_stats([1e308, -1e308]).entropy)  # the gap overflows to inf: still one-hot
    0.0
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(..., n)", bounded=False)
    if z.shape[-1] == 0:
        raise ValueError("logits must have at least one entry along the last axis")
    return _weight_stats(z)


def _weight_stats(z: np.ndarray) -> WeightStats:
    """:func:`weight_stats` of checked logits (nested calls trust their inputs)."""
    # a gap beyond the float range becomes -inf, and exp of a large gap underflows: weight exactly 0
    with np.errstate(over="ignore", under="ignore"):
        shifted = z - z.max(axis=-1, keepdims=True)  # <= 0, the top entry is 0
        e = np.exp(shifted)
        total = e.sum(axis=-1, keepdims=True)  # >= 1
        p = e / total
        log_p = shifted - np.log(total)
        terms = np.where(p > 0, p * np.where(p > 0, log_p, 0.0), 0.0)  # 0 log 0 = 0
    h = np.maximum(-terms.sum(axis=-1), 0.0)
    return WeightStats(p.max(axis=-1), h, np.exp(h))


class SaturationCurves(NamedTuple):
    """Monte Carlo curves against ``d_k`` (each an :class:`MCEstimate` over queries)."""

    d_k: np.ndarray
    max_weight: MCEstimate
    entropy: MCEstimate
    effective_keys: MCEstimate


def saturation_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> SaturationCurves:
    """Average largest weight, entropy and ``exp(entropy)`` of one query's softmax, against ``d_k``.

    For each ``d_k`` in ``d_ks``, ``n_queries`` independent queries meet ``n_keys`` keys
    each (components N(0, 1)); logits ``c (q . k_j)`` with ``c = scale_factor(scale, d_k)``.
    The key directions ``a`` are drawn once and shared by every ``d_k`` (common random
    numbers: smooth curves), the query norms afresh per ``d_k``. The same ``rng`` seed gives
    every scale the same draws.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Queries per ``d_k``, >= 2.
    scale : None, str or float > 0
        ``None``/``"sqrt"``: divide by ``sqrt(d_k)``; ``"unscaled"``; ``"inv_d"``; or a factor.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    SaturationCurves
        ``d_k`` (the given values) and one :class:`MCEstimate` per quantity, each field of
        shape ``(len(d_ks),)``.

    Examples
    --------
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scale="unscaled", rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # unscaled: from spread out to nearly one-hot
    [0.3, 0.98]
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scale="sqrt", rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # scaled: far from one-hot at every d_k
    [0.3, 0.36]
    """
    d_ks, n_queries, rng, a = curve_draws(d_ks, n_keys, n_queries, rng)
    stats = []
    for d_k in d_ks.tolist():
        c = scale_factor(scale, d_k)
        norm_q = chi_norms(float(d_k), n_queries, rng)  # (n_queries,)
        stats.append(_weight_stats((c * norm_q)[:, None] * a))
    return SaturationCurves(
        d_ks, *(mc_estimate(np.stack([getattr(s, f) for s in stats], axis=1)) for f in WeightStats._fields))


def _check_sigma2(sigma2) -> np.ndarray:
    s2 = _checks.real_array("sigma2", sigma2)
    if np.any(s2 < 0):
        raise ValueError(f"sigma2 (a variance) must be >= 0, got {s2.min()}")
    return s2


def entropy_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """Entropy (nats) of the softmax of ``n_keys`` i.i.d. N(0, sigma2) logits, for large n: ``ln n - sigma2/2``.

    Derivation: ``H = ln Z - sum_j p_j z_j`` with ``Z = sum_j e^{z_j}``. For large ``n`` both
    sums are close to ``n`` times their means, ``E e^z = e^{sigma2/2}`` (complete the square) and
    ``E[z e^z] = sigma2 e^{sigma2/2}``, so ``ln Z ~ ln n + sigma2/2`` and ``sum_j p_j z_j ~ sigma2``.
    That needs ``Var(Z)/(E Z)^2 = (e^{sigma2} - 1)/n`` to be small. Measured (notebook 05), the law is
    within 5 % only for small ``sigma2``, and at ``sigma2 = ln n`` it is already 13 % low at
    ``n = 1024`` and 26 % low at ``n = 16``; :func:`law_holds_up_to` computes the range.

    Parameters
    ----------
    n_keys : int
        Number of logits, >= 1.
    sigma2 : float or array_like of float >= 0
        Variance of each logit.

    Returns
    -------
    ndarray, the shape of ``sigma2``

    Examples
    --------
    >>> float(entropy_closed_form(1024, 1.0).round(4))  # ln 1024 - 1/2
    6.4315
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return np.log(n_keys) - _check_sigma2(sigma2) / 2


def effective_keys_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """``exp`` of :func:`entropy_closed_form`: ``n e^{-sigma2/2}`` effective keys (same range of validity).

    >>> float(effective_keys_closed_form(16, 2 * np.log(2)).round(6))  # sigma2 = 2 ln 2 halves the keys
    8.0
    """
    return np.exp(entropy_closed_form(n_keys, sigma2))


def measured_onset(d_ks, mean_entropy, n_keys: int, drop: float = 1.0) -> float:
    """The ``d_k`` at which the *measured* mean entropy first falls ``drop`` nats below ``ln n``.

    The course's onset of saturation: with ``drop = 1`` the effective number of keys ``e^H`` is
    down by a factor ``e`` from ``n``. It is read off Monte Carlo curves (for example
    :func:`saturation_curves`' ``entropy.mean``), not off the law :func:`entropy_closed_form`,
    which fails where saturation is strong. Between the two grid points around the first
    crossing, the curve is interpolated linearly in ``d_k``.

    Parameters
    ----------
    d_ks : sequence of int
        Increasing ``d_k`` values, shape (m,).
    mean_entropy : array_like, shape (m,)
        The mean entropy (nats) at each ``d_k``.
    n_keys : int
        Keys per query, >= 2 (``ln n`` is the entropy of the uniform softmax).
    drop : float > 0
        How many nats below ``ln n``.

    Returns
    -------
    float
        The crossing; ``d_ks[0]`` if the first point is already below; a ValueError if none is.

    Examples
    --------
    >>> measured_onset([1, 2, 3, 4], [2.5, 2.0, 1.5, 1.2], 16)  # ln 16 - 1 = 1.77: between 2 and 3
    2.4548
    """
    d_ks = check_d_ks(d_ks)
    h = _checks.real_array("mean_entropy", mean_entropy)
    if h.shape != d_ks.shape or np.any(np.diff(d_ks) <= 0):
        raise ValueError(f"d_ks must be increasing and mean_entropy of its shape, got {d_ks.shape} and {h.shape}")
    n_keys = _checks.positive_int("n_keys", n_keys)
    if n_keys < 2:
        raise ValueError(f"n_keys must be >= 2 (one key has entropy 0 at every d_k), got {n_keys}")
    level = np.log(n_keys) - _checks.positive("drop", drop)
    below = np.flatnonzero(h <= level)
    if below.size == 0:
        raise ValueError(f"mean_entropy never falls {drop:g} nats below ln {n_keys}: extend d_ks")
    i = int(below[0])
    if i == 0:
        return float(d_ks[0])
    t = (h[i - 1] - level) / (h[i - 1] - h[i])  # in (0, 1]
    return round(float(d_ks[i - 1] + t * (d_ks[i] - d_ks[i - 1])), 4)


def onset_grid(n_keys: int) -> np.ndarray:
    """The integer ``d_k`` grid of the onset for ``n_keys`` keys: 1 ... 32 below 16 keys, else 1 ... 8.

    Few keys saturate late (4 keys: near d_k = 21), many keys early (near 2).

    >>> onset_grid(4)[[0, -1]].tolist(), onset_grid(1024)[[0, -1]].tolist()
    ([1, 32], [1, 8])
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return np.arange(1, 33 if n_keys < 16 else 9)


@lru_cache(maxsize=16)
def onset_over_seeds(n_keys: int, n_seeds: int = 5) -> tuple:
    """The measured onset (:func:`measured_onset`, 1 nat) for ``n_keys`` keys, one value per seed 0 ... n_seeds - 1.

    Each seed runs :func:`saturation_curves` (unscaled) on :func:`onset_grid` with
    ``max(1000, 80_000 // n_keys)`` queries. Cached: notebook 05's table and its explorer show the
    same numbers.

    >>> [round(x, 1) for x in onset_over_seeds(1024, 2)]
    [2.1, 2.3]
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_seeds = _checks.positive_int("n_seeds", n_seeds)
    d = onset_grid(n_keys)
    n_queries = max(1000, 80_000 // n_keys)
    return tuple(measured_onset(d, saturation_curves(d, n_keys, n_queries, scale="unscaled", rng=s).entropy.mean,
                                n_keys) for s in range(n_seeds))


def law_error(n_keys: int, sigma2, measured) -> np.ndarray:
    """Relative error ``law / measured - 1`` of :func:`entropy_closed_form` against measured entropies.

    >>> law_error(16, [2.0], [1.90]).round(3).tolist()  # law 1.77: 7 % too low
    [-0.067]
    """
    h = _checks.real_array("measured", measured)
    return entropy_closed_form(n_keys, sigma2) / h - 1


def onset_table(onsets: dict) -> str:
    """A small text table of measured onsets: one row per key count, the median and the range over seeds.

    >>> print(onset_table({16: (3.9, 4.0, 4.1)}))
     keys   onset d_k: median (range over 3 seeds)
       16    4.00 (3.90–4.10)
    """
    if not onsets:
        raise ValueError("onsets must map at least one key count to its onsets")
    n_seeds = {len(o) for o in onsets.values()}
    seeds = f"{n_seeds.pop()} seeds" if len(n_seeds) == 1 else "seeds"
    rows = [f" keys   onset d_k: median (range over {seeds})"]
    for n, o in onsets.items():
        o = _checks.real_array("each entry of onsets", o, min_ndim=1)
        rows.append(f"{n:5d}   {np.median(o):5.2f} ({o.min():.2f}–{o.max():.2f})")
    return "\n".join(rows)


class LawCheck(NamedTuple):
    """The law against Monte Carlo for one key count: ``sigma2`` (the grid, then ``ln n``), the mean
    entropy per seed ``entropy`` (seeds, m), and ``error``, the law's relative error against the median."""

    sigma2: np.ndarray
    entropy: np.ndarray
    error: np.ndarray


def law_check(n_keys: int, sigma2, n_seeds: int = 5, n_entries: int = 400_000) -> LawCheck:
    """:func:`entropy_closed_form` against :func:`iid_entropy` at ``sigma2`` and at ``ln n``, ``n_seeds`` seeds.

    Each seed averages ``n_entries // n_keys`` rows (the same number of logits for every key count).

    >>> c = law_check(1024, [1.0], n_seeds=2, n_entries=100_000)
    >>> c.sigma2.round(2).tolist(), c.entropy.shape, bool(abs(c.error[0]) < 0.01)
    ([1.0, 6.93], (2, 2), True)
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    grid = np.append(_check_sigma2(sigma2), np.log(n_keys))
    n_seeds = _checks.positive_int("n_seeds", n_seeds)
    rows = max(1, _checks.positive_int("n_entries", n_entries) // n_keys)
    h = iid_entropy(n_keys, grid, n_rows=rows, seeds=range(n_seeds))
    return LawCheck(grid, h, law_error(n_keys, grid, np.median(h, axis=0)))


def slide_medians(d_k: int, n_keys: int, n_queries: int, seeds) -> tuple:
    """Past the onset, per seed: the median weight an unscaled query leaves to its other keys, and
    the median Frobenius norm of the softmax Jacobian scaled over unscaled (notebook 06's measure).

    Returns two lists, one entry per seed; seed ``s`` draws both scalings with ``rng=s``.

    >>> left, ratio = slide_medians(4096, 16, 200, seeds=[0])
    >>> left[0] < 1e-9, ratio[0] > 1e6
    (True, True)
    """
    left, ratio = [], []
    for s in seeds:
        p_u, p_s = (softmax(query_logits(d_k, n_keys, n_queries, scale=sc, rng=_checks.seed("seeds", s)))
                    for sc in ("unscaled", "sqrt"))
        left.append(float(np.median(gradients.one_minus_max(p_u))))
        ratio.append(float(np.median(gradients.jacobian_frobenius(p_s)) / np.median(gradients.jacobian_frobenius(p_u))))
    return left, ratio


def law_holds_up_to(sigma2, measured, n_keys: int, rtol: float = 0.05) -> float:
    """The largest ``sigma2`` of a grid up to which :func:`entropy_closed_form` is within ``rtol`` of ``measured``.

    Every grid point from the first up to the returned one has ``|law - measured| <= rtol * measured``;
    the next one (if any) does not. Returns ``nan`` if the first point already fails.

    Parameters
    ----------
    sigma2 : array_like, shape (m,)
        Increasing logit variances.
    measured : array_like, shape (m,)
        The measured mean entropy at each (e.g. a median over seeds of :func:`iid_entropy`).
    n_keys : int
        Logits per softmax.
    rtol : float > 0
        The relative tolerance.

    Examples
    --------
    >>> law_holds_up_to([0.5, 1.0, 2.0], [2.52, 2.27, 1.90], 16)  # law 2.52, 2.27, 1.77
    1.0
    """
    s2 = _check_sigma2(sigma2)
    h = _checks.real_array("measured", measured)
    if s2.ndim != 1 or h.shape != s2.shape or np.any(np.diff(s2) <= 0):
        raise ValueError(f"sigma2 must be increasing and measured of its shape, got {s2.shape} and {h.shape}")
    rtol = _checks.positive("rtol", rtol)
    ok = np.abs(entropy_closed_form(n_keys, s2) - h) <= rtol * np.abs(h)
    n_ok = int(np.argmin(ok)) if not ok.all() else ok.size
    return float(s2[n_ok - 1]) if n_ok else float("nan")


def iid_entropy(n_keys: int, sigma2, n_rows: int, seeds) -> np.ndarray:
    """Monte Carlo entropy of the softmax of ``n_keys`` i.i.d. N(0, sigma2) logits: one mean per seed.

    Parameters
    ----------
    n_keys : int
        Logits per row, >= 1.
    sigma2 : array_like of float >= 0, shape (m,)
        Variances; every variance of one seed reuses the same standard normals (scaled by sigma).
    n_rows : int
        Rows averaged per seed, >= 1.
    seeds : sequence of int
        One independent run per seed.

    Returns
    -------
    ndarray, shape (len(seeds), m)
        The mean entropy (nats) over ``n_rows`` rows, per seed and variance.

    Examples
    --------
    >>> h = iid_entropy(1024, [1.0], 500, seeds=[0, 1])
    >>> bool(np.all(np.abs(h - entropy_closed_form(1024, 1.0)) < 0.01))
    True
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_rows = _checks.positive_int("n_rows", n_rows)
    s2 = np.atleast_1d(_check_sigma2(sigma2))
    if s2.ndim != 1:
        raise ValueError(f"sigma2 must be a number or a 1-D sequence, got shape {s2.shape}")
    seeds = [_checks.seed("each entry of seeds", seed) for seed in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    out = np.empty((len(seeds), s2.size))
    for i, seed in enumerate(seeds):
        x = make_rng(seed).standard_normal((n_rows, n_keys))  # (n_rows, n_keys)
        for j, v in enumerate(s2.tolist()):
            out[i, j] = _weight_stats(np.sqrt(v) * x).entropy.mean()
    return out


def temperature_curves(logits, temperatures):
    """``softmax(logits / T)`` at each temperature, and its :class:`WeightStats`.

    Parameters
    ----------
    logits : array_like, shape (n,)
    temperatures : array_like of float > 0, shape (m,)

    Returns
    -------
    weights : ndarray, shape (m, n)
    stats : WeightStats
        Fields of shape (m,).

    Examples
    --------
    >>> w, s = temperature_curves([0.0, 1.0], [1.0, 1e-9])
    >>> w.round(4).tolist(), s.max_weight.round(4).tolist()
    ([[0.2689, 0.7311], [0.0, 1.0]], [0.7311, 1.0])
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(n,)")
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"logits must have shape (n,) with n >= 1, got {z.shape}")
    t = np.atleast_1d(_checks.real_array("temperatures", temperatures))
    if t.ndim != 1 or np.any(t <= 0):
        raise ValueError("temperatures must be a 1-D sequence of numbers > 0")
    with np.errstate(over="ignore"):
        scaled = z[None, :] / t[:, None]  # (m, n); a logit / tiny T may overflow to +-inf
    if not np.all(np.isfinite(scaled)):
        raise ValueError("logits / temperatures overflows: use larger temperatures or smaller logits")
    return softmax(scaled), _weight_stats(scaled)
