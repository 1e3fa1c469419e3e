"""The exact distribution of ``q . k`` for i.i.d. standardised components, and fast exact draws.

Drawing ``n`` dot products the direct way costs ``2 n d_k`` random numbers: at ``d_k = 4096``
and ``n = 4000`` that is 33 million, far too slow for an explorer's first visit. This module
draws the same distribution in O(n) work (plus a fixed-size grid):

- :func:`product_cf` -- the characteristic function ``E[exp(i t q_i k_i)]`` of one product of two
  independent standardised components (closed forms or quadrature, per distribution);
- :func:`dot_product_density` -- the density of ``q . k / sqrt(d_k)``, by inverting
  ``product_cf(t / sqrt(d_k)) ** d_k`` (the characteristic function of a sum of i.i.d. terms);
- :func:`sample_dot_products_fast` -- ``n`` draws of ``q . k`` with the distribution of
  :func:`sdpa_helpers.sampling.sample_dot_products`, in O(n):

  * normal: ``q . k = ||q|| a`` with ``a ~ N(0, 1)`` and ``||q||^2 ~ chi^2(d_k)`` (exact);
  * Rademacher: each product is +-1, so ``q . k = 2 B - d_k`` with ``B ~ Binomial(d_k, 1/2)`` (exact);
  * uniform and Laplace with ``d_k >= CF_MIN_D_K``: inverse-CDF draws from
    :func:`dot_product_density` (exact up to the discretisation error of the CDF, below 1e-4,
    far below the Monte Carlo noise 1/sqrt(n) of the samples that use it); below that the
    direct sampler (cheap there).

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

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._numerics import histogram_fractions
from .sampling import check_dist, make_rng, sample_dot_products

__all__ = ["CF_MIN_D_K", "BINS", "product_cf", "dot_product_density", "sample_dot_products_fast",
           "histogram_edges", "histogram_density", "sample_summary",
           "exact_mean", "exact_var", "exact_cov", "all_dot_products", "layer_norm_covariance"]

#: From this d_k on, uniform and Laplace draws use the inverted characteristic function.
CF_MIN_D_K = 128

_LEGENDRE_01 = np.polynomial.legendre.leggauss(48)  # nodes and weights on [-1, 1]
_LAGUERRE = np.polynomial.laguerre.laggauss(80)  # nodes and weights for int_0^inf e^-u f(u) du
_EULER_GAMMA = 0.5772156649015329
_X_MAX = 9.0  # the density grid spans +-9 standard deviations
_X_GRID = np.linspace(-_X_MAX, _X_MAX, 901)  # step 0.02
_T_MAX = 14.0
_T_GRID = np.linspace(0.0, _T_MAX, 281)  # step 0.05: the trapezoid aliasing period 2 pi / 0.05 = 126 >> 18
_X_GRID.flags.writeable = _T_GRID.flags.writeable = False  # shared by every call


def _si_ci_small(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine integrals ``Si(x)``, ``Ci(x)`` for ``0 < x <= 8`` by Gauss-Legendre (entire integrands)."""
    nodes, weights = _LEGENDRE_01
    half = x / 2.0
    s = np.multiply.outer(half, nodes + 1.0)  # (n, 48) nodes on [0, x]
    si = half * (np.sinc(s / math.pi) @ weights)
    cos_minus_one_over_s = -2.0 * np.sin(s / 2.0) ** 2 / s  # (cos s - 1) / s without cancellation
    ci = _EULER_GAMMA + np.log(x) + half * (cos_minus_one_over_s @ weights)
    return si, ci


def _aux_fg(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Auxiliary functions ``f(x) = int_0^inf e^-xw / (1 + w^2) dw`` and ``g(x) = int_0^inf w e^-xw / (1 + w^2) dw``
    for ``x >= 8`` (Gauss-Laguerre after ``v = x w``; the poles at ``v = +-i x`` are far away)."""
    v, w = _LAGUERRE
    r = 1.0 / x  # 0 for x = inf
    with np.errstate(under="ignore"):
        inv = 1.0 / (1.0 + np.multiply.outer(r, v) ** 2)  # (n, 80)
        return r * (inv @ w), r * r * (inv @ (v * w))


def product_cf(t: ArrayLike, dist: str = "normal") -> np.ndarray:
    """Characteristic function ``E[cos(t X Y)]`` of the product of two independent standardised components.

    (The product is symmetric, so the characteristic function is real.) Accurate at any
    magnitude of ``t`` a float can hold:

    - normal: ``1 / sqrt(1 + t^2)``;
    - Rademacher: ``cos t``;
    - uniform on ``[-sqrt3, sqrt3]``: ``Si(3t) / (3t)``;
    - Laplace of variance 1: ``int_0^inf e^-u / (1 + t^2 u^2 / 4) du = x f(x)`` with ``x = 2 / t`` and the
      auxiliary function ``f(x) = Ci(x) sin x - (Si(x) - pi/2) cos x`` (given ``Y``, ``X Y`` is Laplace with
      characteristic function ``1 / (1 + t^2 Y^2 / 2)``; ``|Y| = u / sqrt 2`` with ``u ~ Exp(1)``).

    ``Si`` and ``Ci`` come from Gauss-Legendre quadrature below 8 and from the auxiliary functions
    (Gauss-Laguerre) above, both to about 1e-12.

    Examples
    --------
    >>> [round(float(product_cf(0.5, d)), 6) for d in ("normal", "rademacher", "uniform", "laplace")]
    [0.894427, 0.877583, 0.883122, 0.91677]
    """
    ta = np.abs(_checks.real_array("t", t)).astype(float)
    dist = check_dist("dist", dist)
    if dist == "normal":
        return 1.0 / np.hypot(1.0, ta)  # no overflow of t^2
    if dist == "rademacher":
        return np.cos(ta)
    out = np.empty_like(ta)
    if dist == "uniform":
        with np.errstate(over="ignore"):
            x = 3.0 * ta  # inf beyond 6e307
        small = x <= 8.0
        nodes, weights = _LEGENDRE_01
        v = (nodes + 1.0) / 2.0  # int_0^1 sinc(x v) dv = Si(x) / x, also at x = 0
        out[small] = np.sinc(np.multiply.outer(x[small], v) / math.pi) @ (weights / 2.0)
        xl = x[~small]
        f, g = _aux_fg(xl)
        finite = np.isfinite(xl)
        si = np.full(xl.shape, math.pi / 2)
        si[finite] -= f[finite] * np.cos(xl[finite]) + g[finite] * np.sin(xl[finite])
        out[~small] = (si / 3.0) / ta[~small]
        return out
    small_t = ta < 0.25  # x = 2 / t > 8: integrate directly (poles at u = +-2i / t are far)
    u, w = _LAGUERRE
    out[small_t] = (1.0 / (1.0 + np.multiply.outer(ta[small_t] / 2.0, u) ** 2)) @ w
    x = 2.0 / ta[~small_t]  # (0, 8]
    si, ci = _si_ci_small(x)
    out[~small_t] = x * (ci * np.sin(x) - (si - math.pi / 2) * np.cos(x))
    return out


def dot_product_density(d_k: int, dist: str = "normal", x: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Density of ``z = q . k / sqrt(d_k)`` for ``d_k`` i.i.d. standardised component pairs.

    Inverts the characteristic function ``phi(t) = product_cf(t / sqrt(d_k), dist) ** d_k`` of ``z``:
    ``f(x) = (1 / pi) int_0^T phi(t) cos(t x) dt`` (trapezoid, ``T = 14``). Meant for ``d_k >=``
    :data:`CF_MIN_D_K`, where ``phi`` is below 1e-12 beyond ``T`` (for Rademacher the
    distribution is discrete and this is its smoothed version; use the exact sampler instead).

    Parameters
    ----------
    d_k : int
        Number of components, >= :data:`CF_MIN_D_K`.
    dist : {"normal", "uniform", "laplace"}
    x : array_like, optional
        Where to evaluate (in standard units); default a grid over +-9 with step 0.02.

    Returns
    -------
    (x, density) : two ndarrays of the same shape

    Examples
    --------
    >>> x, f = dot_product_density(256, "laplace")
    >>> round(float(np.trapezoid(f, x)), 5), round(float(np.trapezoid(x**2 * f, x)), 5)
    (1.0, 1.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    dist = check_dist("dist", dist)
    if dist == "rademacher":
        raise ValueError("dist='rademacher' makes q·k discrete (no density): use sample_dot_products_fast")
    if d_k < CF_MIN_D_K:
        raise ValueError(f"d_k must be >= {CF_MIN_D_K} (the inversion grid assumes a near-normal shape), got {d_k}")
    phi = product_cf(_T_GRID / math.sqrt(d_k), dist) ** d_k  # (n_t,)
    w = np.full(_T_GRID.size, _T_GRID[1] - _T_GRID[0])
    w[[0, -1]] /= 2.0  # trapezoid weights
    if x is None:
        xs, cos = _X_GRID.copy(), _cos_table()  # a copy: the caller may change it
    else:
        xs = _checks.real_array("x", x)
        cos = np.cos(np.multiply.outer(xs, _T_GRID))
    density = (cos @ (w * phi)) / math.pi
    return xs, np.maximum(density, 0.0)


_COS_TABLE: list[np.ndarray] = []


def _cos_table() -> np.ndarray:
    """``cos(x t)`` on the default grids, computed once (901 x 281 floats, 2 MB)."""
    if not _COS_TABLE:
        table = np.cos(np.multiply.outer(_X_GRID, _T_GRID))
        table.flags.writeable = False  # cached
        _COS_TABLE.append(table)
    return _COS_TABLE[0]


_CDF_CACHE: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
_CDF_CACHE_MAX = 64


def _cdf(d_k: int, dist: str) -> tuple[np.ndarray, np.ndarray]:
    key = (d_k, dist)
    if key not in _CDF_CACHE:
        if len(_CDF_CACHE) >= _CDF_CACHE_MAX:
            _CDF_CACHE.pop(next(iter(_CDF_CACHE)))  # bounded: drop the oldest
        x, f = dot_product_density(d_k, dist)
        cdf = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2.0 * np.diff(x))])
        cdf = cdf / cdf[-1]
        x.flags.writeable = cdf.flags.writeable = False  # cached
        _CDF_CACHE[key] = (x, cdf)
    return _CDF_CACHE[key]


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
    d_k = _checks.positive_int("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    if dist == "normal":
        return np.sqrt(rng.chisquare(d_k, n_samples)) * rng.standard_normal(n_samples)
    if dist == "rademacher":
        return 2.0 * rng.binomial(d_k, 0.5, n_samples) - d_k
    if d_k < CF_MIN_D_K:
        return sample_dot_products(d_k, n_samples, dist=dist, rng=rng)
    x, cdf = _cdf(d_k, dist)
    return np.interp(rng.random(n_samples), cdf, x) * math.sqrt(d_k)


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
    d_k = _checks.positive_int("d_k", d_k)
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
    d_k = _checks.positive_int("d_k", d_k)
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
