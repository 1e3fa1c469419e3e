"""Closed forms for the moments of products, dot products and scaled dot products.

This module offers:

- :class:`Moments` -- a ``(mean, var)`` pair with a ``std`` property;
- :func:`product_moments` -- mean and variance of ``X * Y`` for independent ``X``, ``Y``;
- :func:`dot_product_moments` -- mean and variance of ``q . k`` over ``d_k`` independent pairs;
- :func:`scaled_moments` -- mean and variance of ``c * X``;
- :func:`sample_variance_moments` -- mean and variance of a sample variance of ``m`` i.i.d. values;
- :func:`dot_product_excess_kurtosis` -- how fast ``q . k`` approaches a normal as ``d_k`` grows;
- :func:`matmul_sample_variance_moments` -- the exact spread of the sample variance of the
  entries of one random matrix product (entries share rows and columns);
- :func:`shared_row_square_covariance` -- ``Cov(S_ij^2, S_ik^2)`` for two logits of one query;
- :func:`effective_sample_size` -- how many i.i.d. values a pooled sample variance is worth;
- :func:`normal_pdf` -- the density of ``N(mean, var)`` (the reference curve of every histogram);
- :func:`within_row_moments` -- mean and variance of ``q . k`` over random keys for one fixed query;
- :func:`dot_product_variance_cov` -- ``Var(q . k)`` for independent ``q``, ``k`` with any
  covariance matrices (``tr(Sigma_q Sigma_k)`` at mean 0): the sharp condition behind ``d_k``.

Everything is exact arithmetic on numbers (no sampling); :mod:`sdpa_helpers.sampling`
checks it by Monte Carlo.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

__all__ = ["Moments", "product_moments", "dot_product_moments", "scaled_moments",
           "sample_variance_moments", "dot_product_excess_kurtosis", "matmul_sample_variance_moments",
           "shared_row_square_covariance", "effective_sample_size",
           "normal_pdf", "within_row_moments", "dot_product_variance_cov"]


def _finite(value: float, what: str) -> float:
    """``value`` if it is a finite float; else a ValueError saying which inputs overflow."""
    if not math.isfinite(value):
        raise ValueError(f"{what} overflows a float (the result is larger than 1.8e308)")
    return value


class Moments(NamedTuple):
    """Mean and variance of a random variable.

    >>> m = Moments(mean=0.0, var=64.0)
    >>> m.std
    8.0
    """

    mean: float
    var: float

    @property
    def std(self) -> float:
        """Standard deviation, ``sqrt(var)``; a ValueError if ``var`` is negative or NaN."""
        if not self.var >= 0:
            raise ValueError(f"Moments.var must be >= 0 to have a standard deviation, got {self.var}")
        return math.sqrt(self.var)


def product_moments(mean_x: float = 0.0, var_x: float = 1.0,
                    mean_y: float = 0.0, var_y: float = 1.0) -> Moments:
    """Mean and variance of ``X * Y`` for independent ``X`` and ``Y``.

    Independence gives ``E[XY] = E[X] E[Y]`` and ``E[X^2 Y^2] = E[X^2] E[Y^2]``, so

    ``mean = mu_x mu_y`` and
    ``var = (var_x + mu_x^2)(var_y + mu_y^2) - mu_x^2 mu_y^2
    = var_x var_y + var_x mu_y^2 + var_y mu_x^2``; the last form is computed (a sum of
    non-negative terms: no cancellation when the means are large). A variance beyond the
    largest float raises ValueError.

    Parameters
    ----------
    mean_x, var_x : float
        Mean and variance (>= 0) of ``X``.
    mean_y, var_y : float
        Mean and variance (>= 0) of ``Y``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> product_moments()
    Moments(mean=0.0, var=1.0)
    >>> product_moments(mean_x=1.0, var_x=1.0, mean_y=2.0, var_y=3.0)
    Moments(mean=2.0, var=10.0)
    """
    mean_x = _checks.real("mean_x", mean_x)
    mean_y = _checks.real("mean_y", mean_y)
    var_x = _checks.non_negative("var_x", var_x)
    var_y = _checks.non_negative("var_y", var_y)
    return _product(mean_x, var_x, mean_y, var_y,
                    f"the product moments of mean_x={mean_x}, var_x={var_x}, mean_y={mean_y}, var_y={var_y}")


def _product(mean_x: float, var_x: float, mean_y: float, var_y: float, what: str) -> Moments:
    """:func:`product_moments` of checked floats; ``what`` names the caller's parameters in errors."""
    mean = _finite(mean_x * mean_y, what)
    terms = (var_x * var_y,
             var_x * mean_y**2,
             var_y * mean_x**2)
    return Moments(mean, _finite(terms[0] + terms[1] + terms[2], what))


def dot_product_moments(d_k: int, mean_q: float = 0.0, var_q: float = 1.0,
                        mean_k: float = 0.0, var_k: float = 1.0) -> Moments:
    """Mean and variance of ``q . k`` for ``d_k`` independent component pairs.

    ``q . k = sum_i q_i k_i`` is a sum of ``d_k`` independent products, so its mean and
    its variance are ``d_k`` times those of one product (:func:`product_moments`).

    Parameters
    ----------
    d_k : int
        Number of components (the key/query dimension), from 1 to 1.8e308 (a float; beyond it
        a ValueError names ``d_k``).
    mean_q, var_q : float
        Mean and variance of every component of ``q``.
    mean_k, var_k : float
        Mean and variance of every component of ``k``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> dot_product_moments(64)
    Moments(mean=0.0, var=64.0)
    >>> dot_product_moments(64).std
    8.0
    >>> dot_product_moments(4, mean_q=1.0, mean_k=1.0)
    Moments(mean=4.0, var=12.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    mean_q, mean_k = _checks.real("mean_q", mean_q), _checks.real("mean_k", mean_k)
    var_q, var_k = _checks.non_negative("var_q", var_q), _checks.non_negative("var_k", var_k)
    what = f"the dot-product moments of mean_q={mean_q}, var_q={var_q}, mean_k={mean_k}, var_k={var_k} at d_k={d_k}"
    one = _product(mean_q, var_q, mean_k, var_k, what)
    return Moments(_finite(d_k * one.mean, what), _finite(d_k * one.var, what))


def scaled_moments(moments: Moments, scale: float) -> Moments:
    """Mean and variance of ``scale * X`` given those of ``X``.

    ``E[cX] = c E[X]`` and ``Var(cX) = c^2 Var(X)``.

    Parameters
    ----------
    moments : Moments
        Mean and variance of ``X``.
    scale : float
        The constant ``c``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> scaled_moments(dot_product_moments(64), 64 ** -0.5)
    Moments(mean=0.0, var=1.0)
    >>> scaled_moments(Moments(2.0, 64.0), 1 / 64)
    Moments(mean=0.03125, var=0.015625)
    """
    if not isinstance(moments, tuple) or len(moments) != 2:
        raise TypeError(f"moments must be a Moments(mean, var), got {moments!r}")
    mean = _checks.real("moments.mean", moments[0])
    var = _checks.non_negative("moments.var", moments[1])
    scale = _checks.real("scale", scale)
    what = f"scaled_moments with scale={scale}"
    return Moments(_finite(scale * mean, what),
                   _finite(scale**2 * var, what))


# -- Sampling spread of a sample variance (notebooks 03 and 04) ------------------------------

def sample_variance_moments(m: int, var: float = 1.0, excess_kurtosis: float = 0.0,
                            ddof: int = 1) -> Moments:
    """Mean and variance of the sample variance of ``m`` i.i.d. values.

    The sample variance ``s2 = sum (x_i - xbar)^2 / (m - ddof)`` is itself random. With
    ``ddof=1`` (the unbiased estimator) and ``sigma^2 = var``, ``kappa = excess_kurtosis``:

    ``E[s2] = sigma^2`` and ``Var(s2) = sigma^4 (2 / (m - 1) + kappa / m)``.

    Another ``ddof`` rescales ``s2`` by ``(m - 1) / (m - ddof)``: ``ddof=0`` (numpy's
    default in ``np.var``) has mean ``sigma^2 (m - 1) / m``.

    Parameters
    ----------
    m : int
        Number of values, from 2 to 1.8e308 (a float; beyond it a ValueError names ``m``).
    var : float
        Variance of each value, >= 0.
    excess_kurtosis : float
        ``E[(x - mu)^4] / sigma^4 - 3`` of each value (0 for a normal), >= -2.
    ddof : int
        Delta degrees of freedom, ``0 <= ddof < m``.

    Returns
    -------
    Moments
        Mean and variance of ``s2``.

    Examples
    --------
    >>> sample_variance_moments(101)  # 101 standard normal values
    Moments(mean=1.0, var=0.02)
    >>> sample_variance_moments(4, var=2.0, ddof=0).mean  # np.var of 4 values of variance 2
    1.5
    """
    m = _checks.count("m", m)
    if m < 2:
        raise ValueError(f"m must be >= 2 (a sample variance needs two values), got {m}")
    var = _checks.non_negative("var", var)
    excess_kurtosis = _checks.excess_kurtosis("excess_kurtosis", excess_kurtosis)
    ddof = _checks.ddof("ddof", ddof, m)
    factor = (m - 1) / (m - ddof)
    what = f"sample_variance_moments with var={var}, excess_kurtosis={excess_kurtosis}"
    bracket = 2 / (m - 1) + excess_kurtosis / m
    spread = _finite(factor**2 * var**2 * bracket, what)
    return Moments(var * factor, spread)


def dot_product_excess_kurtosis(d_k: int, excess_kurtosis_q: float = 0.0,
                                excess_kurtosis_k: float = 0.0) -> float:
    """Excess kurtosis of ``q . k`` for ``d_k`` independent, mean-0 component pairs.

    One product ``q_i k_i`` of independent mean-0 factors has fourth moment
    ``E[q^4] E[k^4]``, so excess kurtosis ``(3 + kappa_q)(3 + kappa_k) - 3`` (6 for normals);
    a sum of ``d_k`` i.i.d. terms divides the excess kurtosis by ``d_k``.

    Parameters
    ----------
    d_k : int
        Number of components, >= 1.
    excess_kurtosis_q, excess_kurtosis_k : float
        Excess kurtosis of each component of ``q`` and of ``k`` (0 for normal, -1.2 for
        uniform, -2 for Rademacher, 3 for Laplace), each >= -2.

    Returns
    -------
    float

    Examples
    --------
    >>> dot_product_excess_kurtosis(2)  # normal components: 6 / d_k
    3.0
    >>> dot_product_excess_kurtosis(4, -2.0, -2.0)  # Rademacher: products are +-1
    -0.5
    """
    d_k = _checks.d_k("d_k", d_k)
    kq = _checks.excess_kurtosis("excess_kurtosis_q", excess_kurtosis_q)
    kk = _checks.excess_kurtosis("excess_kurtosis_k", excess_kurtosis_k)
    return _finite(((3 + kq) * (3 + kk) - 3) / d_k,
                   f"dot_product_excess_kurtosis with excess_kurtosis_q={kq}, excess_kurtosis_k={kk}")


def matmul_sample_variance_moments(n: int, d: int, p: int | None = None, ddof: int = 1) -> Moments:
    """Mean and variance of the sample variance of the ``n * p`` entries of ``A @ B``.

    ``A`` is ``(n, d)`` and ``B`` is ``(d, p)``, all entries independent standard normal.
    Each entry of ``C = A @ B`` has mean 0 and variance ``d``, and the entries are
    uncorrelated, so with ``m = n p`` the unbiased sample variance has ``E[s2] = d``. But the
    entries are *not independent* (entries in one row share a row of ``A``, entries in one
    column share a column of ``B``), and Isserlis' theorem gives

    ``Var(s2) = 2 d^2 / (m - 1) + d (2 (n + p + 1)(n p - 2) + 6) / (m - 1)^2``

    -- larger than the i.i.d. formula ``d^2 (2/(m-1) + 6/(d m))`` of
    :func:`sample_variance_moments`. Another ``ddof`` rescales by ``(m - 1) / (m - ddof)``.

    Parameters
    ----------
    n, d : int
        ``A`` has shape ``(n, d)``; ``d`` is the inner (summed) dimension, ``d_k`` for ``Q K^T``.
    p : int, optional
        ``B`` has shape ``(d, p)``; defaults to ``n``.
    ddof : int
        Delta degrees of freedom, ``0 <= ddof < n p``.

    Returns
    -------
    Moments
        Mean and variance of ``s2``.

    Examples
    --------
    >>> mv = matmul_sample_variance_moments(2, 2)  # the 2x2 experiment
    >>> mv.mean, round(mv.var, 4)
    (2.0, 8.4444)
    >>> matmul_sample_variance_moments(2, 2, ddof=0).mean  # np.var: 2 * 3/4
    1.5
    """
    n = _checks.positive_int("n", n)
    d = _checks.positive_int("d", d)
    p = n if p is None else _checks.positive_int("p", p)
    m = n * p
    if m < 2:
        raise ValueError(f"A @ B must have at least 2 entries (n * p >= 2), got n={n}, p={p}")
    ddof = _checks.ddof("ddof", ddof, m)
    factor = (m - 1) / (m - ddof)
    what = f"matmul_sample_variance_moments with n={n}, d={d}, p={p}"
    try:  # exact integer arithmetic until the divisions; a quotient beyond a float raises OverflowError
        var = 2 * d**2 / (m - 1) + d * (2 * (n + p + 1) * (n * p - 2) + 6) / (m - 1) ** 2
        mean = d * factor
    except OverflowError:
        raise ValueError(f"{what} overflows a float (the result is larger than 1.8e308)") from None
    return Moments(_finite(mean, what), _finite(factor**2 * var, what))


def shared_row_square_covariance(d_k: int, var_q: float = 1.0, var_k: float = 1.0,
                                 excess_kurtosis_q: float = 0.0) -> float:
    """``Cov(S_ij^2, S_ik^2)`` for two entries of ``S = Q K^T`` in the same row (``j != k``).

    Given the shared query ``q_i``, ``S_ij`` and ``S_ik`` are independent with
    ``E[S_ij^2 | q_i] = var_k |q_i|^2``, so the covariance of their squares is
    ``var_k^2 Var(|q_i|^2) = d_k var_k^2 var_q^2 (2 + kappa_q)`` -- ``2 d_k`` for standard
    normal components, although ``Cov(S_ij, S_ik) = 0``. Components have mean 0.

    Parameters
    ----------
    d_k : int
        Length of the query and key vectors, >= 1.
    var_q, var_k : float
        Variance of each component of ``q`` and ``k``, >= 0.
    excess_kurtosis_q : float
        Excess kurtosis of each component of ``q`` (0 for normal), >= -2.

    Returns
    -------
    float

    Examples
    --------
    >>> shared_row_square_covariance(64)
    128.0
    >>> shared_row_square_covariance(64, excess_kurtosis_q=-2.0)  # Rademacher q: |q|^2 = d_k
    0.0
    """
    d_k = _checks.d_k("d_k", d_k)
    var_q = _checks.non_negative("var_q", var_q)
    var_k = _checks.non_negative("var_k", var_k)
    kq = _checks.excess_kurtosis("excess_kurtosis_q", excess_kurtosis_q)
    return _finite(d_k * var_k**2 * var_q**2 * (2 + kq),
                   f"shared_row_square_covariance with d_k={d_k}, var_q={var_q}, var_k={var_k}")


def effective_sample_size(var_s2: float, var: float = 1.0, excess_kurtosis: float = 0.0) -> float:
    """How many *independent* values give a sample variance as precise as one with ``Var(s2) = var_s2``.

    Solves ``var^2 (2 / (m - 1) + kappa / m) = var_s2`` for ``m`` (the formula of
    :func:`sample_variance_moments`): with ``v = var_s2 / var^2``,
    ``m = (v + 2 + kappa + sqrt((v + 2 + kappa)^2 - 4 v kappa)) / (2 v)``.

    Parameters
    ----------
    var_s2 : float
        Variance of the (unbiased) sample variance, > 0.
    var : float
        Variance of each value, > 0.
    excess_kurtosis : float
        Excess kurtosis of each value, >= -2.

    Returns
    -------
    float
        The effective number of values (> 1; not necessarily an integer).

    Examples
    --------
    >>> round(effective_sample_size(sample_variance_moments(50).var), 9)
    50.0
    >>> round(effective_sample_size(matmul_sample_variance_moments(2, 2).var, 2.0, 3.0), 2)
    2.87
    """
    var_s2 = _checks.positive("var_s2", var_s2)
    var = _checks.positive("var", var)
    kappa = _checks.excess_kurtosis("excess_kurtosis", excess_kurtosis)
    what = f"effective_sample_size with var_s2={var_s2}, var={var}, excess_kurtosis={kappa}"
    var2 = var**2
    v = var_s2 / var2 if 1e-290 < var2 < 1e290 else math.nan
    if 1e-150 < v < 1e150 and abs(kappa) < 1e150:
        b = v + 2 + kappa
        return _finite((b + math.sqrt(b * b - 4 * v * kappa)) / (2 * v), what)
    # v = var_s2 / var^2 is not a safe float: use u = 1 / v, computed as (var / var_s2) * var.
    # Dividing the root by v: m = B (1 + sqrt(1 - 4 kappa u / B^2)) / 2 with B = 1 + (2 + kappa) u.
    u = (var / var_s2) * var
    b = 1 + (2 + kappa) * u
    if not (math.isfinite(u) and math.isfinite(b)):
        raise ValueError(f"{what} overflows a float (the effective sample size is larger than 1.8e308)")
    r = 4 * kappa * (u / b) / b
    return _finite(b * (1 + math.sqrt(max(1 - r, 0.0))) / 2, what)


# -- The normal density, the within-row view and the sharp condition (notebooks 01-02) -------

def normal_pdf(x: ArrayLike, mean: float = 0.0, var: float = 1.0) -> np.ndarray:
    """Density of the normal distribution ``N(mean, var)`` at ``x`` (any shape).

    Far tails underflow to exactly 0 (never NaN), whatever the magnitudes.

    Examples
    --------
    >>> round(float(normal_pdf(0.0)), 4)
    0.3989
    >>> round(float(normal_pdf(0.0, var=64.0)), 5)  # 1 / sqrt(2 pi 64)
    0.04987
    >>> float(normal_pdf(1e100))
    0.0
    """
    x = _checks.real_array("x", x)
    mean = _checks.real("mean", mean)
    var = _checks.positive("var", var)
    with np.errstate(over="ignore", under="ignore"):
        z2 = ((x - mean) / math.sqrt(var)) ** 2  # inf for the far tails: exp(-inf) = 0
        return np.exp(-0.5 * z2) / math.sqrt(2 * math.pi * var)


def within_row_moments(q: ArrayLike, mean_k: float = 0.0, var_k: float = 1.0) -> Moments:
    """Mean and variance of ``q . k`` for one FIXED query ``q`` over random keys ``k``.

    Every key has independent components of mean ``mean_k`` and variance ``var_k``. Then

    ``E[q . k | q] = mean_k * sum_i q_i`` and ``Var(q . k | q) = var_k * ||q||^2``.

    The mean is the same for every key of one query: a shift of the whole row of logits,
    which the softmax ignores. What the softmax sees is the spread within the row,
    ``var_k ||q||^2``; with ``E||q||^2 = d_k (var_q + mean_q^2)`` it grows like ``d_k``,
    so ``1/sqrt(d_k)`` normalises it even when the means are not 0.

    Parameters
    ----------
    q : array_like, shape (d_k,) or (..., d_k)
        The query (or a stack of queries: one result per query).
    mean_k, var_k : float
        Mean and variance of every key component (``var_k >= 0``).

    Returns
    -------
    Moments
        Floats for one query; arrays of shape ``(...)`` for a stack.

    Examples
    --------
    >>> within_row_moments([1.0, 2.0, 2.0], mean_k=0.5, var_k=2.0)
    Moments(mean=2.5, var=18.0)
    """
    q = _checks.real_array("q", q, min_ndim=1, shape_hint="(d_k,) or (..., d_k)")
    if q.shape[-1] == 0:
        raise ValueError("q must have at least one component (d_k >= 1)")
    mean_k = _checks.real("mean_k", mean_k)
    var_k = _checks.non_negative("var_k", var_k)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        mean = mean_k * q.sum(axis=-1)
        var = var_k * np.einsum("...i,...i->...", q, q)  # var_k ||q||^2
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var))):
        raise ValueError("within_row_moments overflows a float for this q (its entries are too large)")
    if q.ndim == 1:
        return Moments(float(mean), float(var))
    return Moments(mean, var)


def dot_product_variance_cov(cov_q: ArrayLike, cov_k: ArrayLike, mean_q: ArrayLike | None = None,
                             mean_k: ArrayLike | None = None) -> float:
    """``Var(q . k)`` for INDEPENDENT vectors ``q`` and ``k`` with any covariance matrices.

    With ``E[q q^T] = Sigma_q + mu_q mu_q^T`` (and the same for ``k``) and ``q`` independent
    of ``k``,

    ``Var(q . k) = tr(Sigma_q Sigma_k) + mu_k^T Sigma_q mu_k + mu_q^T Sigma_k mu_q``,

    which is ``tr(Sigma_q Sigma_k)`` at mean 0. So the components of ``q`` need not be
    independent of each other: uncorrelated unit-variance components (``Sigma = I``) give
    ``d_k``, e.g. ``q`` uniform on the sphere of radius ``sqrt(d_k)``. For diagonal covariances
    it reduces to :func:`dot_product_moments`.

    Parameters
    ----------
    cov_q, cov_k : array_like, shape (d_k, d_k)
        Symmetric covariance matrices of ``q`` and of ``k``.
    mean_q, mean_k : array_like, shape (d_k,), optional
        Mean vectors (0 when omitted).

    Returns
    -------
    float

    Examples
    --------
    >>> dot_product_variance_cov(np.eye(3), np.eye(3))
    3.0
    >>> dot_product_variance_cov([[1.0, 0.5], [0.5, 1.0]], [[1.0, 0.5], [0.5, 1.0]])  # correlated: more
    2.5
    """
    mats = []
    for name, c in (("cov_q", cov_q), ("cov_k", cov_k)):
        c = _checks.real_array(name, c, min_ndim=2, shape_hint="(d_k, d_k)")
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
            raise ValueError(f"{name} must be a square (d_k, d_k) matrix, got shape {c.shape}")
        if not np.allclose(c, c.T, rtol=1e-10, atol=0.0):
            raise ValueError(f"{name} must be symmetric (a covariance matrix)")
        mats.append(c)
    cq, ck = mats
    if cq.shape != ck.shape:
        raise ValueError(f"cov_q and cov_k must have the same shape, got {cq.shape} and {ck.shape}")
    d_k = cq.shape[0]
    means = []
    for name, m in (("mean_q", mean_q), ("mean_k", mean_k)):
        if m is None:
            means.append(np.zeros(d_k))
            continue
        m = _checks.real_array(name, m, min_ndim=1, shape_hint="(d_k,)")
        if m.shape != (d_k,):
            raise ValueError(f"{name} must have shape ({d_k},), got {m.shape}")
        means.append(m)
    mq, mk = means
    with np.errstate(over="ignore", invalid="ignore"):
        var = float(np.sum(cq * ck.T) + mk @ cq @ mk + mq @ ck @ mq)  # tr(Sq Sk) = sum_ij Sq_ij Sk_ji
    return _finite(var, "dot_product_variance_cov of these cov_q, cov_k, mean_q, mean_k")
