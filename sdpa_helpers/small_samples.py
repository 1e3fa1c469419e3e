"""How precise is one sample variance? The numbers behind notebook 03 ("small experiments mislead"): the
thread's numbers (AI Stack Exchange question 21237), cached simulations of ``s2 / n`` for ``n x n`` products,
their exact and i.i.d. spreads, standard errors, and the exact small-case cumulant count (Isserlis)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, theory
from ._numerics import histogram_fractions
from .sampling import sample_matmul_variances

__all__ = ["SIZES", "SEED", "DRAWS_PER_SIZE", "MAX_REPS", "MIN_REPS", "THREAD_2X2", "THREAD_BIG",
           "THREAD_BIG_SCALED", "reps_for", "relative_sample_variances", "exact_relative_sd", "iid_relative_sd",
           "variance_with_se", "relative_sd_with_se", "z_score", "matmul_fourth_cumulant", "matmul_cumulant_sum",
           "REL_BINS", "bin_fractions"]

#: Matrix sizes n of the notebook's simulations and of its explorer's slider: powers of two, 2 ... 64.
#: (Not 128: 500 repetitions of a 128 x 128 product cost seconds, past the explorer's 1 s budget.)
SIZES = tuple(2**i for i in range(1, 7))
#: Bin edges for ``s2 / n`` (the sample variance over its true value): 80 bins over [0, 4].
REL_BINS = np.linspace(0.0, 4.0, 81)
#: Seed of the cached simulations (:func:`relative_sample_variances`).
SEED = 3
#: The thread's 2x2 experiment: the sample variance of the 4 entries of one 2x2 product.
THREAD_2X2 = 1.6
#: The thread's 1111x111 @ 111x1111 experiment: the sample variance of the product's entries ...
THREAD_BIG = 110.56
#: ... and of the same product divided by sqrt(111).
THREAD_BIG_SCALED = 0.99604


#: Random numbers drawn per matrix size n (:func:`reps_for`), the most repetitions, the fewest.
DRAWS_PER_SIZE, MAX_REPS, MIN_REPS = 2**19, 20_000, 500


def reps_for(n: int) -> int:
    """Repetitions simulated for ``n x n`` products: at most :data:`MAX_REPS`, about :data:`DRAWS_PER_SIZE` random
    numbers per n (each repetition draws ``2 n^2``), at least :data:`MIN_REPS` (enough for the SE of the simulated
    spread to be reliable: at n = 16, +-2 SE covered the exact spread 96 % of the time with 500 runs, 86 % with 16).
    """
    n = _checks.positive_int("n", n)
    return int(min(MAX_REPS, max(MIN_REPS, DRAWS_PER_SIZE // (2 * n**2))))


def relative_sample_variances(n: int) -> np.ndarray:
    """``s2 / n`` (ddof=1) of ``n x n`` standard normal products over :func:`reps_for` ``(n)`` repetitions (it
    estimates 1); cached and read-only (shared by every caller).
    """
    return _relative_sample_variances(_checks.positive_int("n", n))


@lru_cache(maxsize=len(SIZES))
def _relative_sample_variances(n: int) -> np.ndarray:
    r = sample_matmul_variances(n, reps_for(n), rng=SEED) / n
    r.flags.writeable = False
    return r


def exact_relative_sd(ns: ArrayLike) -> np.ndarray:
    """Exact standard deviation of ``s2 / n`` for the entries of an ``n x n`` product (ddof=1)."""
    return np.array([theory.matmul_sample_variance_moments(_checks.positive_int("n", n), n).std / n
                     for n in np.ravel(np.asarray(ns, dtype=object))])


def iid_relative_sd(ns: ArrayLike) -> np.ndarray:
    """The i.i.d. formula's standard deviation of ``s2 / n`` for ``n^2`` values of variance n.

    Uses the entries' own excess kurtosis ``6 / n`` but ignores that they share rows and columns.
    """
    out = []
    for n in np.ravel(np.asarray(ns, dtype=object)):
        n = _checks.positive_int("n", n)
        out.append(theory.sample_variance_moments(n * n, 1.0, theory.dot_product_excess_kurtosis(n)).std)
    return np.array(out)


def variance_with_se(values: ArrayLike) -> tuple[float, float]:
    """The sample variance (ddof=1) of ``values`` (R >= 2) and its large-R standard error ``sqrt((m_4 - m_2^2) / R)``
    (central moments of the values; any distribution).
    """
    x = _checks.real_array("values", values, min_ndim=1, shape_hint="(R,)").ravel()
    if x.size < 2:
        raise ValueError(f"values must hold at least 2 numbers, got {x.size}")
    scale = float(np.max(np.abs(x))) or 1.0  # rescale first: squares of huge (or tiny) values over/underflow
    y = x / scale
    y = y - y.mean()
    v = float(y @ y) / (x.size - 1)
    mu4 = float(np.mean(y**4))
    m2 = float(y @ y) / x.size
    se = float(np.sqrt(max(mu4 - m2**2, 0.0) / x.size))
    v, se = v * scale * scale, se * scale * scale
    if not np.isfinite(v) or not np.isfinite(se):
        raise ValueError("values are too large: their variance exceeds the float range")
    return v, se


def relative_sd_with_se(n: int) -> tuple[float, float]:
    """SD of the simulated ``s2 / n`` (:func:`relative_sample_variances`) and its standard error, by the delta
    method ``SE(sd) = SE(var) / (2 sd)``.
    """
    v, se_v = variance_with_se(relative_sample_variances(n))
    sd = math.sqrt(v)
    return sd, se_v / (2 * sd)


def z_score(value: float, expected: float, sd: float) -> float:
    """``(value - expected) / sd``: how many standard deviations ``value`` lies from ``expected``."""
    value, expected = _checks.real("value", value), _checks.real("expected", expected)
    sd = _checks.positive("sd", sd)
    z = (value - expected) / sd
    if not math.isfinite(z):
        raise ValueError(f"(value - expected) / sd is beyond the float range for value={value!r}, "
                         f"expected={expected!r}, sd={sd!r}")
    return z


def bin_fractions(values: ArrayLike, bins: ArrayLike) -> np.ndarray:
    """Fraction of ``values`` (at least one) in each bin; values outside the bins count in the total."""
    return histogram_fractions(values, bins, edges_name="bins")


_PAIRINGS = (((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2)))


def matmul_fourth_cumulant(entries, d: int) -> int:
    """Joint fourth cumulant of four entries ``(i, j)`` of ``A @ B``, standard normal ``A`` (n, d), ``B`` (d, p):
    by Isserlis' theorem ``d`` times the number of ordered pairs of *different* pairings (pi, sigma) with pi
    pairing equal rows and sigma equal columns (one entry four times: ``6 d``).
    """
    d = _checks.positive_int("d", d)
    if len(entries) != 4:
        raise ValueError(f"entries must hold 4 (row, column) pairs, got {len(entries)}")
    count = 0
    for a, pi in enumerate(_PAIRINGS):
        for b, sigma in enumerate(_PAIRINGS):
            if a != b and all(entries[x][0] == entries[y][0] for x, y in pi) \
                    and all(entries[x][1] == entries[y][1] for x, y in sigma):
                count += 1
    return d * count


def matmul_cumulant_sum(n: int, d: int, p: int) -> float:
    """``sum_abce P_ab P_ce kappa_abce`` over every tuple of the ``m = n p`` entries of ``A @ B`` (``2 <= m <= 9``),
    by brute force; ``P = I - 1 1^T / m`` centres them, ``kappa`` is :func:`matmul_fourth_cumulant`. The closed
    form is ``d (2 (n + p + 1)(n p - 2) + 6)``.
    """
    n, d, p = (_checks.positive_int(name, v) for name, v in (("n", n), ("d", d), ("p", p)))
    m = n * p
    if not 2 <= m <= 9:
        raise ValueError(f"n * p must be 2 ... 9 for the brute-force sum (m^4 terms), got n={n}, p={p}")
    entries = [(i, j) for i in range(n) for j in range(p)]
    P = np.eye(m) - 1.0 / m
    total = 0.0
    for a in range(m):
        for b in range(m):
            for c in range(m):
                for e in range(m):
                    kappa = matmul_fourth_cumulant([entries[a], entries[b], entries[c], entries[e]], d)
                    if kappa:
                        total += P[a, b] * P[c, e] * kappa
    return float(round(total, 9))
