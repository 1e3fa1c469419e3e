"""The distribution of ``q . k`` for i.i.d. standardised components (notebook 02): fast exact draws
for the explorer, the histogram bins every figure of ``q . k`` uses, exact moments of small discrete
cases by enumeration, and the stored repetitions of the deep dive on how much a simulation wobbles.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import _checks
from .sampling import (
    check_dist,
    chi_norms,
    histogram_density,
    make_rng,
    sample_components,
    sample_dot_products,
    sample_summary,
)
from .scales import D_K_CHOICES
from .theory import product_moments

__all__ = ["CF_MIN_D_K", "CDF_FILE", "CDF_DISTS", "CDF_D_KS", "BINS", "sample_dot_products_fast",
           "histogram_edges", "histogram_density", "sample_summary",
           "exact_mean", "exact_var", "exact_cov", "all_dot_products", "layer_norm_covariance"]

#: From this d_k on (on the course's grid), uniform and Laplace draws use the CDFs stored in
#: :data:`CDF_FILE` (written by ``scripts/make_dot_product_cdfs.py``).
CF_MIN_D_K = 128
CDF_FILE = Path(__file__).resolve().parent / "data" / "dot_product_cdfs.npz"
CDF_DISTS = ("uniform", "laplace")
CDF_D_KS = tuple(d for d in D_K_CHOICES if d >= CF_MIN_D_K)


@lru_cache(maxsize=1)
def _cdfs() -> dict[str, np.ndarray]:
    """The stored CDFs of ``q . k / sqrt(d_k)`` (read once; read-only arrays)."""
    with np.load(CDF_FILE) as f:
        tables = {name: f[name] for name in f.files}
    for arr in tables.values():
        arr.flags.writeable = False
    return tables


def sample_dot_products_fast(d_k: int, n_samples: int, dist: str = "normal", rng=None) -> np.ndarray:
    """``n_samples`` draws of unscaled ``q . k`` in O(n_samples), with the distribution (not the numbers)
    of :func:`sdpa_helpers.sampling.sample_dot_products`: normal ``||q|| a`` and Rademacher
    ``2 Binomial(d_k, 1/2) - d_k`` exactly; uniform and Laplace at the grid's ``d_k >=`` :data:`CF_MIN_D_K`
    by inverse-CDF from :data:`CDF_FILE` (CDF error below 1e-4), elsewhere the direct sampler.
    """
    d_k = _checks.d_k("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    if dist == "normal":
        return chi_norms(d_k, n_samples, rng) * rng.standard_normal(n_samples)
    if dist == "rademacher":
        return 2.0 * rng.binomial(d_k, 0.5, n_samples) - d_k
    if d_k not in CDF_D_KS:
        return sample_dot_products(d_k, n_samples, dist=dist, rng=rng)
    tables = _cdfs()
    return np.interp(rng.random(n_samples), tables[f"{dist}_{d_k}"], tables["x"]) * math.sqrt(d_k)


#: Bin edges in units of the standard deviation ``sqrt(d_k)``: 54 bins of width 1/6 over [-4.5, 4.5].
BINS = np.linspace(-4.5, 4.5, 55)


def histogram_edges(d_k: int, dist: str = "normal") -> np.ndarray:
    """Bin edges (n_bins + 1,), in units of ``q . k``, over about ±4.5 ``sqrt(d_k)``: :data:`BINS` times
    ``sqrt(d_k)``; for Rademacher components (``q . k`` an integer of the parity of ``d_k``) each bin
    holds the same number of possible values and no value sits on an edge.
    """
    d_k = _checks.d_k("d_k", d_k)
    sd = math.sqrt(d_k)
    if check_dist("dist", dist) != "rademacher":
        return BINS * sd
    m = max(1, math.ceil((BINS[1] - BINS[0]) * sd / 2))
    if d_k % 2 == 0 and m % 2 == 0:
        m += 1
    offset = 0.0 if d_k % 2 else float(m)  # edges on even numbers (odd d_k) or odd multiples of m
    n_side = math.ceil((BINS[-1] * sd - offset) / (2 * m)) + 1
    return offset + 2.0 * m * np.arange(-n_side - (1 if offset else 0), n_side + 1)


# -- Exact moments of small discrete cases (notebook 02's exact checks) -------------------------

#: The largest number of equally likely outcomes :func:`all_dot_products` enumerates.
MAX_OUTCOMES = 2_000_000


def _outcomes(name: str, outcomes) -> list:
    """``outcomes`` as a non-empty list of exact Fractions (a float as its exact binary value)."""
    try:
        items = list(outcomes)
    except TypeError:
        raise TypeError(f"{name} must be a list of numbers, got {type(outcomes).__name__}") from None
    if not items:
        raise ValueError(f"{name} must hold at least one outcome")
    out = []
    for x in items:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, Fraction, np.integer, np.floating)):
            raise TypeError(f"{name} must hold real numbers (ints or Fractions), got {x!r}")
        if isinstance(x, (float, np.floating)) and not math.isfinite(x):
            raise ValueError(f"{name} must hold finite numbers, got {x!r}")
        if isinstance(x, Fraction):
            out.append(x)
        elif isinstance(x, (int, np.integer)):
            out.append(Fraction(int(x)))
        else:
            out.append(Fraction(float(x)))  # the float's exact binary value
    return out


def exact_mean(outcomes) -> Fraction:
    """``E[X]`` of equally likely outcomes, as an exact fraction.

    >>> exact_mean([0, 1, 2])
    Fraction(1, 1)
    """
    xs = _outcomes("outcomes", outcomes)
    return sum(xs, Fraction(0)) / len(xs)


def exact_var(outcomes) -> Fraction:
    """``Var(X) = E[(X - E X)^2]`` of equally likely outcomes, as an exact fraction.

    >>> exact_var([0, 1, 2])
    Fraction(2, 3)
    """
    xs = _outcomes("outcomes", outcomes)
    mu = sum(xs, Fraction(0)) / len(xs)
    return sum(((x - mu) ** 2 for x in xs), Fraction(0)) / len(xs)


def exact_cov(pairs) -> Fraction:
    """``Cov(X, Y) = E[(X - E X)(Y - E Y)]`` of equally likely pairs ``(x, y)``, as an exact fraction.

    >>> exact_cov([(x, x) for x in (0, 1, 2)])  # Cov(X, X) = Var(X)
    Fraction(2, 3)
    """
    try:
        items = [tuple(p) for p in pairs]
    except TypeError:
        raise TypeError(f"pairs must be a list of (x, y) pairs, got {pairs!r:.60}") from None
    if not items or any(len(p) != 2 for p in items):
        raise ValueError("pairs must be a non-empty list of (x, y) pairs")
    xs = _outcomes("pairs", [p[0] for p in items])
    ys = _outcomes("pairs", [p[1] for p in items])
    mx, my = sum(xs, Fraction(0)) / len(xs), sum(ys, Fraction(0)) / len(ys)
    return sum(((x - mx) * (y - my) for x, y in zip(xs, ys)), Fraction(0)) / len(xs)


def all_dot_products(values, d_k: int) -> list:
    """``q . k`` for each of the ``len(values) ** (2 d_k)`` equally likely ``(q, k)`` (at most
    :data:`MAX_OUTCOMES`), every component independently one of ``values`` (ints or Fractions).

    >>> exact_var(all_dot_products([-1, 1], 3))
    Fraction(3, 1)
    """
    vals = _outcomes("values", values)
    d_k = _checks.d_k("d_k", d_k)
    count = len(vals) ** (2 * d_k)
    if count > MAX_OUTCOMES:
        raise ValueError(f"values and d_k give {len(vals)}**{2 * d_k} = {count} pairs (q, k), "
                         f"more than {MAX_OUTCOMES} to enumerate: use fewer values or a smaller d_k")
    vectors = list(itertools.product(vals, repeat=d_k))
    return [sum((a * b for a, b in zip(q, k)), Fraction(0)) for q in vectors for k in vectors]


def layer_norm_covariance(d: int) -> np.ndarray:
    """Covariance matrix ``(d I - 1 1^T) / (d - 1)`` of LayerNorm's ``d`` >= 2 outputs (``eps = 0``, no
    gain or bias) for i.i.d. continuous inputs: the outputs sum to 0 and their squares to ``d``.

    >>> layer_norm_covariance(3) * 2
    array([[ 2., -1., -1.],
           [-1.,  2., -1.],
           [-1., -1.,  2.]])
    """
    d = _checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"d must be >= 2 (LayerNorm of one component is undefined), got {d}")
    return (d * np.eye(d) - np.ones((d, d))) / (d - 1)


# -- How much a simulation wobbles (notebook 02's deep dive), precomputed ------------------------

#: The stored repetitions: seeds, runs per seed, products per run, the components' mean.
WOBBLE_SEEDS = tuple(range(20))
WOBBLE_RUNS = 30_000
WOBBLE_N = 1000
WOBBLE_MEAN = 2.0
WOBBLE_FILE = Path(__file__).resolve().parent / "data" / "variance_wobble.npz"


def wobble_runs(n_runs: int, n_each: int = WOBBLE_N, mean: float = WOBBLE_MEAN, rng=None,
                chunk: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """``n_runs`` repetitions of a simulation of ``Var(XY)`` (X, Y independent N(mean, 1)): each run's
    sample variance of ``n_each`` products and the standard error :func:`sample_summary` would give,
    ``(var, se)``, each of shape (n_runs,).
    """
    n_runs, n_each = _checks.positive_int("n_runs", n_runs), _checks.positive_int("n_each", n_each)
    if n_each < 2:
        raise ValueError(f"n_each must be >= 2, got {n_each}")
    g = make_rng(rng)
    var, se = [], []
    for start in range(0, n_runs, chunk):
        m = min(chunk, n_runs - start)
        P = sample_components((m, n_each), mean=mean, rng=g) * sample_components((m, n_each), mean=mean, rng=g)
        D = P - P.mean(axis=1, keepdims=True)  # (m, n_each): deviations from each run's own mean
        v = (D**2).sum(axis=1) / (n_each - 1)
        var.append(v)
        se.append(np.sqrt(np.maximum(np.mean(D**4, axis=1) - v**2, 0.0) / n_each))
    return np.concatenate(var), np.concatenate(se)


def _wobble_seed(seed: int) -> tuple[int, float, float]:
    """One seed's runs: misses beyond 4 SE of the true variance, the runs' spread, the median SE."""
    true_var = product_moments(WOBBLE_MEAN, 1.0, WOBBLE_MEAN, 1.0).var
    var, se = wobble_runs(WOBBLE_RUNS, rng=seed)
    return int(np.sum(np.abs(var - true_var) > 4 * se)), float(np.std(var, ddof=1)), float(np.median(se))


def write_wobble_counts(path=None):
    """Run every seed of :data:`WOBBLE_SEEDS` and store the counts in :data:`WOBBLE_FILE` (minutes):
    ``python -c "from sdpa_helpers import variance; variance.write_wobble_counts()"``.
    """
    rows = np.array([_wobble_seed(s) for s in WOBBLE_SEEDS])  # (seeds, 3)
    path = WOBBLE_FILE if path is None else path
    np.savez_compressed(path, seeds=np.array(WOBBLE_SEEDS), runs=WOBBLE_RUNS, n_each=WOBBLE_N, mean=WOBBLE_MEAN,
                        misses=rows[:, 0].astype(np.int64), spread=rows[:, 1], reported_se=rows[:, 2])
    return path


def wobble_counts() -> dict:
    """The stored counts per seed: ``misses`` (runs beyond 4 SE of the true variance, of ``runs``),
    ``spread`` (std of the runs' variances), ``reported_se`` (their median SE); an error if the file
    does not match the settings.
    """
    with np.load(WOBBLE_FILE) as f:
        out = {k: f[k] for k in f.files}
    if (tuple(out["seeds"].tolist()), int(out["runs"]), int(out["n_each"]), float(out["mean"])) != (
            WOBBLE_SEEDS, WOBBLE_RUNS, WOBBLE_N, WOBBLE_MEAN):
        raise ValueError("variance_wobble.npz does not match the settings: regenerate it with "
                         "variance.write_wobble_counts()")
    return out
