"""Softmax saturation (notebook 05): how peaked ``softmax(c q . k_j)`` is against ``d_k``, by Monte
Carlo (exact draws from :mod:`sdpa_helpers.sampling`'s chi-square shortcut) and by the large-n law
``H ~ ln n - sigma^2/2``, and the measured onset of saturation.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import _checks, gradients, sampling
from ._numerics import by_row_blocks
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
#: The median over 5 seeds of :func:`onset_over_seeds` for each of :data:`KEY_COUNTS`, stored for the
#: explorer (tests/test_saturation.py recomputes every value).
MEASURED_ONSETS = {4: 21.397, 16: 4.0074, 64: 2.7455, 256: 2.3443, 1024: 2.2026}


def explorer_queries(n_keys: int, budget: int = 16384) -> int:
    """Queries per ``d_k`` for the explorer's curves at ``n_keys`` keys: ``budget // n`` (at least 32),
    the same work for every key count.
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return max(32, _checks.positive_int("budget", budget) // n_keys)


class WeightStats(NamedTuple):
    """Per row of logits: the largest softmax weight, the entropy (nats), and ``exp(entropy)``."""

    max_weight: np.ndarray
    entropy: np.ndarray
    effective_keys: np.ndarray


def weight_stats(logits) -> WeightStats:
    """:class:`WeightStats` of ``softmax(logits)`` over the last axis of ``logits`` (..., n), fields of
    shape (...). Stable for any finite logits: ``log p_i = z_i - logsumexp(z)``, and ``0 log 0 = 0``.

    >>> s = weight_stats([[0.0, 0.0, 0.0, 0.0], [0.0, 1e6, 0.0, 0.0]])
    >>> s.max_weight.tolist(), s.entropy.round(4).tolist(), s.effective_keys.round(4).tolist()
    ([0.25, 1.0], [1.3863, 0.0], [4.0, 1.0])
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(..., n)", bounded=False)
    if z.shape[-1] == 0:
        raise ValueError("logits must have at least one entry along the last axis")
    return _weight_stats(z)


def _weight_stats(z: np.ndarray) -> WeightStats:
    # in blocks of rows: bounded temporaries, whatever z's size
    return WeightStats(*by_row_blocks(_weight_stats_rows, z, sampling.CHUNK_ENTRIES))


def _weight_stats_rows(z: np.ndarray) -> WeightStats:
    # With shifted = z - max (<= 0, the top entry 0) and e = exp(shifted): the largest weight is
    # 1 / sum(e) (the top entry's e is exactly 1), and the entropy -sum p log p, with
    # log p = shifted - log sum(e), is log sum(e) - sum(e * shifted) / sum(e). Four passes over z
    # instead of ten: notebook 05's largest cells spend their time here (benchmarks/results.md).
    # A gap beyond the float range becomes -inf and exp of a large gap underflows: weight exactly 0,
    # and 0 log 0 = 0 (the product is taken only where e > 0).
    with np.errstate(over="ignore", under="ignore"):
        shifted = z - z.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=-1)  # >= 1
        terms = np.multiply(e, shifted, out=np.zeros_like(e), where=e > 0)
    h = np.maximum(np.log(total) - terms.sum(axis=-1) / total, 0.0)
    return WeightStats(1.0 / total, h, np.exp(h))


class SaturationCurves(NamedTuple):
    """Monte Carlo curves against ``d_k`` (each an :class:`MCEstimate` over queries)."""

    d_k: np.ndarray
    max_weight: MCEstimate
    entropy: MCEstimate
    effective_keys: MCEstimate


def saturation_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> SaturationCurves:
    """Mean (:class:`MCEstimate` over ``n_queries`` >= 2 queries) largest weight, entropy and
    ``exp(entropy)`` of one query's softmax over ``n_keys`` keys, at each ``d_k`` of ``d_ks``; fields
    of shape (len(d_ks),). Logits ``scale_factor(scale, d_k) * q . k_j``; the key directions are shared
    by every ``d_k`` (smooth curves) and the same ``rng`` seed gives every scale the same draws.

    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scale="unscaled", rng=0)
    >>> c.max_weight.mean.round(2).tolist()
    [0.3, 0.98]
    """
    d_ks = check_d_ks(d_ks)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    rng = make_rng(rng)
    factors = [scale_factor(scale, d_k) for d_k in d_ks.tolist()]
    # The draws are those of curve_draws -- the key directions a (n_queries, n_keys), then ||q|| per d_k --
    # but a is drawn in blocks of rows and used block by block, so memory stays bounded (a few
    # CHUNK_ENTRIES floats) whatever n_queries * n_keys is; the rows, and so the results, are the same.
    rows = max(1, sampling.CHUNK_ENTRIES // n_keys)
    if rows >= n_queries:  # one block: draw it once
        whole, again = rng.standard_normal((n_queries, n_keys)), None
    else:  # move rng past a as one (n_queries, n_keys) draw would; `again` redraws it block by block
        again = np.random.Generator(type(rng.bit_generator)())
        again.bit_generator.state = rng.bit_generator.state
        for first in range(0, n_queries, rows):
            rng.standard_normal((min(rows, n_queries - first), n_keys))
    norms = [chi_norms(float(d_k), n_queries, rng) for d_k in d_ks.tolist()]  # (n_queries,) each
    stats = {f: np.empty((n_queries, len(d_ks))) for f in WeightStats._fields}
    for first in range(0, n_queries, rows):
        a = whole if again is None else again.standard_normal((min(rows, n_queries - first), n_keys))
        for j, (c, norm_q) in enumerate(zip(factors, norms)):
            block = _weight_stats((c * norm_q[first:first + len(a)])[:, None] * a)
            for f in WeightStats._fields:
                stats[f][first:first + len(a), j] = getattr(block, f)
    return SaturationCurves(d_ks, *(mc_estimate(stats[f]) for f in WeightStats._fields))


def _check_sigma2(sigma2) -> np.ndarray:
    s2 = _checks.real_array("sigma2", sigma2)
    if np.any(s2 < 0):
        raise ValueError(f"sigma2 (a variance) must be >= 0, got {s2.min()}")
    return s2


def entropy_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """The large-n law for the entropy (nats) of ``n_keys`` i.i.d. N(0, sigma2) logits: ``ln n - sigma2/2``
    (shape of ``sigma2``, each >= 0). From ``E e^z = e^{sigma2/2}``; it needs ``(e^{sigma2} - 1)/n``
    small (:func:`law_holds_up_to` measures where it holds).
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return np.log(n_keys) - _check_sigma2(sigma2) / 2


def effective_keys_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """``exp`` of :func:`entropy_closed_form`: ``n e^{-sigma2/2}`` effective keys.

    >>> float(effective_keys_closed_form(16, 2 * np.log(2)).round(6))
    8.0
    """
    return np.exp(entropy_closed_form(n_keys, sigma2))


def measured_onset(d_ks, mean_entropy, n_keys: int, drop: float = 1.0) -> float:
    """The ``d_k`` where the measured ``mean_entropy`` (shape of the increasing ``d_ks``) first falls
    ``drop`` nats below ``ln n_keys`` (n >= 2), interpolated linearly; ``d_ks[0]`` if the first point
    is below already; ValueError if none is.

    >>> measured_onset([1, 2, 3, 4], [2.5, 2.0, 1.5, 1.2], 16)  # ln 16 - 1 = 1.77
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
    """The integer ``d_k`` grid of the onset: 1 ... 32 below 16 keys (few keys saturate late), else 1 ... 8."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    return np.arange(1, 33 if n_keys < 16 else 9)


@lru_cache(maxsize=16)
def onset_over_seeds(n_keys: int, n_seeds: int = 5) -> tuple:
    """:func:`measured_onset` (1 nat) for ``n_keys`` keys, one per seed 0 ... n_seeds - 1: unscaled
    :func:`saturation_curves` on :func:`onset_grid` with ``max(1000, 80_000 // n_keys)`` queries (cached).

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
    """Relative error ``law / measured - 1`` of :func:`entropy_closed_form`.

    >>> law_error(16, [2.0], [1.90]).round(3).tolist()
    [-0.067]
    """
    h = _checks.real_array("measured", measured)
    return entropy_closed_form(n_keys, sigma2) / h - 1


def onset_table(onsets: dict) -> str:
    """A text table of onsets (key count -> one onset per seed): median and range over seeds.

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
    """:func:`entropy_closed_form` against :func:`iid_entropy` at ``sigma2`` and at ``ln n`` (appended),
    ``n_seeds`` seeds of ``n_entries // n_keys`` rows each.

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
    """Per seed (two lists): the median weight an unscaled query leaves to its other keys, and the median
    ``||J||_F`` scaled over unscaled; seed ``s`` draws both scalings with ``rng=s``.

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
    """The largest ``sigma2`` (increasing, shape (m,)) up to which every point has
    ``|law - measured| <= rtol * measured``; ``nan`` if the first point fails.

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
    """Mean entropy (nats) over ``n_rows`` rows of ``n_keys`` i.i.d. N(0, sigma2) logits: shape
    (len(seeds), len(sigma2)); the variances of one seed reuse the same standard normals.

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
    """``softmax(logits / T)`` (m, n) at each of the temperatures (m,) > 0, and its :class:`WeightStats` (m,).

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
