"""The exact distribution of ``q . k`` for i.i.d. standardised components, and fast exact draws.

Drawing ``n`` dot products the direct way costs ``2 n d_k`` random numbers: at ``d_k = 4096``
and ``n = 4000`` that is 33 million, far too slow for an explorer's first visit. This module
draws the same distribution in O(n) work:

- :func:`sample_dot_products_fast` -- ``n`` draws of ``q . k`` with the distribution of
  :func:`sdpa_helpers.sampling.sample_dot_products`, in O(n):

  * normal: ``q . k = ||q|| a`` with ``a ~ N(0, 1)`` (:func:`sdpa_helpers.sampling.chi_norms`, exact);
  * Rademacher: each product is +-1, so ``q . k = 2 B - d_k`` with ``B ~ Binomial(d_k, 1/2)`` (exact);
  * uniform and Laplace at the grid's d_k from :data:`CF_MIN_D_K` on: inverse-CDF draws from a
    stored table (:data:`CDF_FILE`, written by ``scripts/make_dot_product_cdfs.py`` by inverting
    the characteristic function; CDF error below 1e-4, far below the Monte Carlo noise
    1/sqrt(n)); elsewhere the direct sampler.

Exact moments of small discrete cases (every equally likely outcome enumerated; no sampling):

- :func:`exact_mean`, :func:`exact_var` -- the mean and the variance (by its definition
  ``E[(X - E X)^2]``) of a list of equally likely outcomes, as exact fractions;
- :func:`exact_cov` -- ``Cov(X, Y) = E[(X - E X)(Y - E Y)]`` of a list of equally likely pairs;
- :func:`all_dot_products` -- ``q . k`` for every equally likely ``(q, k)`` whose components are
  drawn independently and uniformly from a short list of values;
- :func:`layer_norm_covariance` -- the covariance matrix of LayerNorm's output components.

And the binning every histogram of ``q . k`` uses (figures and explorer alike):

- :data:`BINS` -- bin edges in units of the standard deviation (width 1/6 over +-4.5);
- :func:`histogram_edges` -- bin edges in units of ``q . k`` for a given ``d_k`` and distribution
  (on the lattice of possible values for Rademacher components);
- :func:`histogram_density` -- a histogram scaled to a density, on those edges.

numpy only.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._numerics import histogram_fractions
from .sampling import check_dist, chi_norms, make_rng, sample_dot_products
from .scales import D_K_CHOICES

__all__ = ["CF_MIN_D_K", "CDF_FILE", "CDF_DISTS", "CDF_D_KS", "BINS", "sample_dot_products_fast",
           "histogram_edges", "histogram_density", "sample_summary",
           "exact_mean", "exact_var", "exact_cov", "all_dot_products", "layer_norm_covariance"]

#: From this d_k on (at the d_k's of the course's grid), uniform and Laplace draws use a stored CDF.
CF_MIN_D_K = 128

#: Where the stored CDFs live, and what they cover: uniform and Laplace components at every d_k of
#: the course's grid from :data:`CF_MIN_D_K` on. ``scripts/make_dot_product_cdfs.py`` writes them.
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
    """Draw ``n_samples`` values of ``q . k`` (unscaled, standardised components) in O(n_samples).

    Same distribution as ``sampling.sample_dot_products(d_k, n_samples, dist)`` (not the same
    numbers): exact for normal and Rademacher components; for uniform and Laplace at
    ``d_k >=`` :data:`CF_MIN_D_K`, inverse-CDF draws from the inverted characteristic function
    (CDF error below 1e-4), and the direct sampler below that.

    Examples
    --------
    >>> s = sample_dot_products_fast(4096, 100_000, "laplace", rng=0)
    >>> s.shape, round(float(s.var()) / 4096, 1)
    ((100000,), 1.0)
    >>> sorted(set(sample_dot_products_fast(3, 1000, "rademacher", rng=0).tolist()))
    [-3.0, -1.0, 1.0, 3.0]
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


# -- Histogram binning of q . k (used by plots.variance and widgets.variance) --------------------

#: Bin edges in units of the standard deviation ``sqrt(d_k)``: 54 bins of width 1/6 over [-4.5, 4.5].
BINS = np.linspace(-4.5, 4.5, 55)


def histogram_edges(d_k: int, dist: str = "normal") -> np.ndarray:
    """Bin edges, in units of ``q . k``, for a histogram of ``q . k`` over about ±4.5 ``sqrt(d_k)``.

    Continuous components get :data:`BINS` times ``sqrt(d_k)``. With Rademacher components
    ``q . k`` is an integer of the parity of ``d_k`` (``-d_k, -d_k + 2, ..., d_k``); its bins
    hold the same number ``m`` of these values each (``2m`` wide, ``m`` the smallest that is
    at least the width of :data:`BINS`, odd when ``d_k`` is even) and no value sits on an
    edge, so no bin is empty or doubled by aliasing.

    Parameters
    ----------
    d_k : int
        Number of components, >= 1.
    dist : {"normal", "uniform", "rademacher", "laplace"}

    Returns
    -------
    ndarray, shape (n_bins + 1,)

    Examples
    --------
    >>> histogram_edges(4)[[0, -1]].tolist()
    [-9.0, 9.0]
    >>> histogram_edges(1, "rademacher").tolist()  # q·k = -1 or 1: one value per bin
    [-8.0, -6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]
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


def histogram_density(samples: ArrayLike, edges: ArrayLike) -> np.ndarray:
    """Counts of ``samples`` in the bins ``edges``, divided by ``len(samples) * bin width``.

    Samples outside the edges count in the total, so the bars integrate to the fraction of
    samples inside. The package's one histogram, :func:`sdpa_helpers._numerics.histogram_fractions`
    (``density=True``, the values named ``samples``): its parameters, checks and errors.

    >>> histogram_density([0.5, 1.5, 1.6, 9.0], [0.0, 1.0, 2.0]).tolist()
    [0.25, 0.5]
    """
    return histogram_fractions(samples, edges, density=True, values_name="samples")


def sample_summary(samples: ArrayLike) -> dict[str, float]:
    """Sample mean, variance (ddof=1), their standard errors, and the sample excess kurtosis.

    ``se_mean = sqrt(var / n)`` and ``se_var = sqrt((m_4 - var^2) / n)`` (the large-n standard
    error of a sample variance, ``m_4`` the fourth central moment); ``kurt = m_4 / var^2 - 3``.
    What :class:`~sdpa_helpers.widgets.variance.VarianceExplorer` prints in its table.

    Parameters
    ----------
    samples : array_like, shape (n,), n >= 2

    Returns
    -------
    dict with keys ``"mean"``, ``"se_mean"``, ``"var"``, ``"se_var"``, ``"kurt"`` (floats)

    Examples
    --------
    >>> st = sample_summary([-1.0, 1.0, -1.0, 1.0])
    >>> st["mean"], round(st["var"], 4), st["se_var"], round(st["kurt"], 4)
    (0.0, 1.3333, 0.0, -2.4375)
    """
    s = _checks.real_array("samples", samples, min_ndim=1).ravel()
    n = s.size
    if n < 2:
        raise ValueError(f"samples must hold at least 2 numbers, got {n}")
    scale = float(np.max(np.abs(s))) or 1.0  # powers of huge or tiny values would over/underflow
    c = s / scale
    mean = float(c.mean())
    c = c - mean
    var = float(c @ c) / (n - 1)
    m4 = float(np.mean(c**4))
    if var == 0.0:
        raise ValueError("samples are all equal: their excess kurtosis is undefined")
    out = {
        "mean": mean * scale, "se_mean": math.sqrt(var / n) * scale,
        "var": var * scale * scale, "se_var": math.sqrt(max(m4 - var**2, 0.0) / n) * scale * scale,
        "kurt": m4 / var**2 - 3.0,
    }
    if not all(math.isfinite(v) for v in out.values()):
        raise ValueError("samples are too large: their variance exceeds the float range")
    return out


# -- Exact moments of small discrete cases (notebook 02's exact checks) -------------------------

#: The largest number of equally likely outcomes :func:`all_dot_products` enumerates.
MAX_OUTCOMES = 2_000_000


def _outcomes(name: str, outcomes) -> list:
    """``outcomes`` as a non-empty list of exact numbers (ints or Fractions; floats as their exact value)."""
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
    """``E[X]`` for equally likely outcomes: their probability-weighted average, as an exact fraction.

    >>> exact_mean([0, 1, 2])
    Fraction(1, 1)
    >>> exact_mean([x * y for x in (0, 1, 2) for y in (0, 1, 2)])  # E[XY] over 9 equally likely pairs
    Fraction(1, 1)
    """
    xs = _outcomes("outcomes", outcomes)
    return sum(xs, Fraction(0)) / len(xs)


def exact_var(outcomes) -> Fraction:
    """``Var(X) = E[(X - E X)^2]`` for equally likely outcomes (the definition), as an exact fraction.

    >>> exact_var([0, 1, 2])
    Fraction(2, 3)
    >>> exact_var([-1, 1])
    Fraction(1, 1)
    """
    xs = _outcomes("outcomes", outcomes)
    mu = sum(xs, Fraction(0)) / len(xs)
    return sum(((x - mu) ** 2 for x in xs), Fraction(0)) / len(xs)


def exact_cov(pairs) -> Fraction:
    """``Cov(X, Y) = E[(X - E X)(Y - E Y)]`` for equally likely pairs ``(x, y)``, as an exact fraction.

    >>> exact_cov([(x, y) for x in (0, 1, 2) for y in (0, 1, 2)])  # independent: 0
    Fraction(0, 1)
    >>> exact_cov([(x, x) for x in (0, 1, 2)])  # Y = X: Cov(X, X) = Var(X)
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
    """``q . k`` for every equally likely ``(q, k)``: each of the ``2 d_k`` components independently
    and uniformly one of ``values``.

    There are ``len(values) ** (2 d_k)`` such pairs, all equally likely, so :func:`exact_mean` and
    :func:`exact_var` of the result are the exact mean and variance of ``q . k`` (at most
    :data:`MAX_OUTCOMES` pairs).

    Parameters
    ----------
    values : list of int or Fraction
        The equally likely values of one component (repeat a value to weight it).
    d_k : int
        Number of components of ``q`` and of ``k``, >= 1.

    Returns
    -------
    list, length ``len(values) ** (2 * d_k)``

    Examples
    --------
    >>> [str(v) for v in all_dot_products([-1, 1], 1)]  # q_1 k_1 over 4 equally likely pairs
    ['1', '-1', '-1', '1']
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
    """Covariance matrix of the ``d`` output components of LayerNorm (``eps = 0``, no gain or bias)
    applied to a vector of i.i.d. continuous components.

    The output ``z`` always has ``sum_i z_i = 0`` and ``sum_i z_i^2 = d``; by symmetry every
    ``E[z_i^2] = 1`` and every ``Cov(z_i, z_j) = c``, and ``0 = Var(sum_i z_i) = d + d (d - 1) c``
    gives ``c = -1 / (d - 1)``: the matrix ``(d I - 1 1^T) / (d - 1)``.

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


def wobble_runs(n_runs: int, n_each: int = WOBBLE_N, mean: float = WOBBLE_MEAN, rng=None,
                chunk: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Repeat a simulation of ``Var(XY)``, ``X, Y`` independent ``N(mean, 1)``, ``n_runs`` times.

    Each run draws ``n_each`` products ``XY`` and reports its sample variance (ddof=1) and the
    standard error :func:`sample_summary` gives it, ``sqrt((m_4 - s^4) / n_each)``.

    Returns
    -------
    var, se : ndarray, shape (n_runs,) each

    >>> v, se = wobble_runs(3, n_each=10, rng=0)
    >>> v.shape, bool(np.all(se > 0))
    ((3,), True)
    """
    from .sampling import sample_components  # noqa: PLC0415  (kept local: this section is an add-on)

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


def wobble_file():
    """Where :func:`write_wobble_counts` stores its counts (``sdpa_helpers/data/variance_wobble.npz``)."""
    from pathlib import Path  # noqa: PLC0415

    return Path(__file__).resolve().parent / "data" / "variance_wobble.npz"


def _wobble_seed(seed: int) -> tuple[int, float, float]:
    """One seed's runs: misses beyond 4 SE of the true variance, the runs' spread, the median SE."""
    from .theory import product_moments  # noqa: PLC0415

    true_var = product_moments(WOBBLE_MEAN, 1.0, WOBBLE_MEAN, 1.0).var
    var, se = wobble_runs(WOBBLE_RUNS, rng=seed)
    return int(np.sum(np.abs(var - true_var) > 4 * se)), float(np.std(var, ddof=1)), float(np.median(se))


def write_wobble_counts(path=None):
    """Run every seed of :data:`WOBBLE_SEEDS` and store the counts (a few minutes on one core).

    Regenerate with ``python -c "from sdpa_helpers import variance; variance.write_wobble_counts()"``.
    """
    rows = np.array([_wobble_seed(s) for s in WOBBLE_SEEDS])  # (seeds, 3)
    path = wobble_file() if path is None else path
    np.savez_compressed(path, seeds=np.array(WOBBLE_SEEDS), runs=WOBBLE_RUNS, n_each=WOBBLE_N, mean=WOBBLE_MEAN,
                        misses=rows[:, 0].astype(np.int64), spread=rows[:, 1], reported_se=rows[:, 2])
    return path


def wobble_counts() -> dict:
    """The stored counts of :func:`write_wobble_counts`: per seed, ``misses`` (runs more than 4 SE
    from the true variance 9, of ``runs``), ``spread`` (std of the runs' variances) and
    ``reported_se`` (the median SE the runs report); an error if they do not match the settings."""
    with np.load(wobble_file()) as f:
        out = {k: f[k] for k in f.files}
    if (tuple(out["seeds"].tolist()), int(out["runs"]), int(out["n_each"]), float(out["mean"])) != (
            WOBBLE_SEEDS, WOBBLE_RUNS, WOBBLE_N, WOBBLE_MEAN):
        raise ValueError("variance_wobble.npz does not match the settings: regenerate it with "
                         "variance.write_wobble_counts()")
    return out
