"""Closed forms for the moments of products, dot products, scaled dot products and sample variances.

Exact arithmetic on numbers (no sampling); :mod:`sdpa_helpers.sampling` checks it by Monte Carlo.
Inputs are checked against the course's range (:mod:`._checks`); a result beyond a float raises
ValueError naming the inputs.
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
    if not math.isfinite(value):
        raise ValueError(f"{what} overflows a float (the result is larger than 1.8e308)")
    return value


class Moments(NamedTuple):
    """Mean and variance of a random variable; ``std`` is ``sqrt(var)`` (ValueError if var < 0 or NaN).
    """

    mean: float
    var: float

    @property
    def std(self) -> float:
        if not self.var >= 0:
            raise ValueError(f"Moments.var must be >= 0 to have a standard deviation, got {self.var}")
        return math.sqrt(self.var)


def product_moments(mean_x: float = 0.0, var_x: float = 1.0,
                    mean_y: float = 0.0, var_y: float = 1.0) -> Moments:
    """Mean and variance of ``X * Y`` for independent ``X`` (mean_x, var_x >= 0) and ``Y`` (mean_y, var_y >= 0).

    ``mean = mu_x mu_y``, ``var = (var_x + mu_x^2)(var_y + mu_y^2) - mu_x^2 mu_y^2``, computed as
    ``var_x var_y + var_x mu_y^2 + var_y mu_x^2`` (no cancellation at large means).

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
    mean = _finite(mean_x * mean_y, what)
    return Moments(mean, _finite(var_x * var_y + var_x * mean_y**2 + var_y * mean_x**2, what))


def dot_product_moments(d_k: int, mean_q: float = 0.0, var_q: float = 1.0,
                        mean_k: float = 0.0, var_k: float = 1.0) -> Moments:
    """Mean and variance of ``q . k`` for ``d_k`` independent component pairs: ``d_k`` times :func:`product_moments`.

    >>> dot_product_moments(64)
    Moments(mean=0.0, var=64.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    mean_q, mean_k = _checks.real("mean_q", mean_q), _checks.real("mean_k", mean_k)
    var_q, var_k = _checks.non_negative("var_q", var_q), _checks.non_negative("var_k", var_k)
    what = f"the dot-product moments of mean_q={mean_q}, var_q={var_q}, mean_k={mean_k}, var_k={var_k} at d_k={d_k}"
    one = _product(mean_q, var_q, mean_k, var_k, what)
    return Moments(_finite(d_k * one.mean, what), _finite(d_k * one.var, what))


def scaled_moments(moments: Moments, scale: float) -> Moments:
    """Mean and variance of ``scale * X`` given ``moments`` of ``X``: ``c E[X]`` and ``c^2 Var(X)``.

    >>> scaled_moments(dot_product_moments(64), 64 ** -0.5)
    Moments(mean=0.0, var=1.0)
    """
    if not isinstance(moments, tuple) or len(moments) != 2:
        raise TypeError(f"moments must be a Moments(mean, var), got {moments!r}")
    mean = _checks.real("moments.mean", moments[0])
    var = _checks.non_negative("moments.var", moments[1])
    scale = _checks.real("scale", scale)
    what = f"scaled_moments with scale={scale}"
    return Moments(_finite(scale * mean, what), _finite(scale**2 * var, what))


def sample_variance_moments(m: int, var: float = 1.0, excess_kurtosis: float = 0.0,
                            ddof: int = 1) -> Moments:
    """Mean and variance of the sample variance ``s2`` of ``m >= 2`` i.i.d. values.

    ``var`` (>= 0) and ``excess_kurtosis`` (>= -2) are those of each value; ``0 <= ddof < m``. With
    ddof=1: ``E[s2] = var``, ``Var(s2) = var^2 (2 / (m - 1) + kappa / m)``; another ddof rescales
    ``s2`` by ``(m - 1) / (m - ddof)``.

    >>> sample_variance_moments(101)
    Moments(mean=1.0, var=0.02)
    """
    m = _checks.count("m", m)
    if m < 2:
        raise ValueError(f"m must be >= 2 (a sample variance needs two values), got {m}")
    var = _checks.non_negative("var", var)
    excess_kurtosis = _checks.excess_kurtosis("excess_kurtosis", excess_kurtosis)
    ddof = _checks.ddof("ddof", ddof, m)
    factor = (m - 1) / (m - ddof)
    what = f"sample_variance_moments with var={var}, excess_kurtosis={excess_kurtosis}"
    spread = _finite(factor**2 * var**2 * (2 / (m - 1) + excess_kurtosis / m), what)
    return Moments(var * factor, spread)


def dot_product_excess_kurtosis(d_k: int, excess_kurtosis_q: float = 0.0,
                                excess_kurtosis_k: float = 0.0) -> float:
    """Excess kurtosis of ``q . k`` for ``d_k`` independent mean-0 pairs: ``((3 + kq)(3 + kk) - 3) / d_k``.

    ``excess_kurtosis_q``/``_k`` (each >= -2) are those of one component (0 normal, -1.2 uniform,
    -2 Rademacher, 3 Laplace).

    >>> dot_product_excess_kurtosis(2), dot_product_excess_kurtosis(4, -2.0, -2.0)
    (3.0, -0.5)
    """
    d_k = _checks.d_k("d_k", d_k)
    kq = _checks.excess_kurtosis("excess_kurtosis_q", excess_kurtosis_q)
    kk = _checks.excess_kurtosis("excess_kurtosis_k", excess_kurtosis_k)
    return _finite(((3 + kq) * (3 + kk) - 3) / d_k,
                   f"dot_product_excess_kurtosis with excess_kurtosis_q={kq}, excess_kurtosis_k={kk}")


def matmul_sample_variance_moments(n: int, d: int, p: int | None = None, ddof: int = 1) -> Moments:
    """Mean and variance of the sample variance of the ``m = n p`` entries of ``A @ B``.

    ``A`` (n, d) and ``B`` (d, p; ``p`` defaults to ``n``) have independent standard normal entries.
    The entries share rows and columns, so (Isserlis) with ddof=1 ``E[s2] = d`` and
    ``Var(s2) = 2 d^2 / (m - 1) + d (2 (n + p + 1)(n p - 2) + 6) / (m - 1)^2``; another ddof
    (``0 <= ddof < m``) rescales by ``(m - 1) / (m - ddof)``.

    >>> mv = matmul_sample_variance_moments(2, 2)  # the 2x2 experiment
    >>> mv.mean, round(mv.var, 4)
    (2.0, 8.4444)
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
    try:  # exact integers until the divisions; a quotient beyond a float raises OverflowError
        var = 2 * d**2 / (m - 1) + d * (2 * (n + p + 1) * (n * p - 2) + 6) / (m - 1) ** 2
        mean = d * factor
    except OverflowError:
        raise ValueError(f"{what} overflows a float (the result is larger than 1.8e308)") from None
    return Moments(_finite(mean, what), _finite(factor**2 * var, what))


def shared_row_square_covariance(d_k: int, var_q: float = 1.0, var_k: float = 1.0,
                                 excess_kurtosis_q: float = 0.0) -> float:
    """``Cov(S_ij^2, S_ik^2)`` for two entries of one row of ``S = Q K^T`` (mean-0 components).

    They share the query, so the covariance is ``var_k^2 Var(|q|^2) = d_k var_k^2 var_q^2 (2 + kappa_q)``
    (``2 d_k`` for normals) although ``Cov(S_ij, S_ik) = 0``.

    >>> shared_row_square_covariance(64), shared_row_square_covariance(64, excess_kurtosis_q=-2.0)
    (128.0, 0.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    var_q = _checks.non_negative("var_q", var_q)
    var_k = _checks.non_negative("var_k", var_k)
    kq = _checks.excess_kurtosis("excess_kurtosis_q", excess_kurtosis_q)
    return _finite(d_k * var_k**2 * var_q**2 * (2 + kq),
                   f"shared_row_square_covariance with d_k={d_k}, var_q={var_q}, var_k={var_k}")


def effective_sample_size(var_s2: float, var: float = 1.0, excess_kurtosis: float = 0.0) -> float:
    """How many independent values (a float > 1) give a sample variance with ``Var(s2) = var_s2 > 0``.

    Solves :func:`sample_variance_moments`' ``var^2 (2 / (m - 1) + kappa / m) = var_s2`` for ``m``
    (``var > 0``, ``kappa >= -2``).

    >>> round(effective_sample_size(sample_variance_moments(50).var), 9)
    50.0
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
    # v is not a safe float: with u = 1 / v = (var / var_s2) * var and B = 1 + (2 + kappa) u,
    # m = B (1 + sqrt(1 - 4 kappa u / B^2)) / 2.
    u = (var / var_s2) * var
    b = 1 + (2 + kappa) * u
    if not (math.isfinite(u) and math.isfinite(b)):
        raise ValueError(f"{what} overflows a float (the effective sample size is larger than 1.8e308)")
    r = 4 * kappa * (u / b) / b
    return _finite(b * (1 + math.sqrt(max(1 - r, 0.0))) / 2, what)


def normal_pdf(x: ArrayLike, mean: float = 0.0, var: float = 1.0) -> np.ndarray:
    """Density of ``N(mean, var)`` at ``x`` (any shape; ``var > 0``); far tails are exactly 0.
    """
    x = _checks.real_array("x", x)
    mean = _checks.real("mean", mean)
    var = _checks.positive("var", var)
    with np.errstate(over="ignore", under="ignore"):
        z2 = ((x - mean) / math.sqrt(var)) ** 2  # inf for the far tails: exp(-inf) = 0
        return np.exp(-0.5 * z2) / math.sqrt(2 * math.pi * var)


def within_row_moments(q: ArrayLike, mean_k: float = 0.0, var_k: float = 1.0) -> Moments:
    """Mean and variance of ``q . k`` for a FIXED query ``q`` over random keys (components mean_k, var_k >= 0).

    ``E = mean_k sum_i q_i`` (a shift of the row, which the softmax ignores) and
    ``Var = var_k ||q||^2``. ``q`` of shape (d_k,) gives floats; (..., d_k) arrays of shape (...).

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
    """``Var(q . k)`` for INDEPENDENT ``q``, ``k`` with symmetric (d_k, d_k) covariances and optional (d_k,) means.

    ``tr(Sigma_q Sigma_k) + mu_k^T Sigma_q mu_k + mu_q^T Sigma_k mu_q``: uncorrelated unit-variance
    components (``Sigma = I``) give ``d_k`` even when they are not independent.

    >>> dot_product_variance_cov([[1.0, 0.5], [0.5, 1.0]], [[1.0, 0.5], [0.5, 1.0]])  # correlated: more than 2
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
        m = np.zeros(d_k) if m is None else _checks.real_array(name, m, min_ndim=1, shape_hint="(d_k,)")
        if m.shape != (d_k,):
            raise ValueError(f"{name} must have shape ({d_k},), got {m.shape}")
        means.append(m)
    mq, mk = means
    with np.errstate(over="ignore", invalid="ignore"):
        var = float(np.sum(cq * ck.T) + mk @ cq @ mk + mq @ ck @ mq)  # tr(Sq Sk) = sum_ij Sq_ij Sk_ji
    return _finite(var, "dot_product_variance_cov of these cov_q, cov_k, mean_q, mean_k")
