"""What training does: queries and keys correlated as ``k = rho q + sqrt(1 - rho^2) z``.

Then ``E[q . k] = rho d_k`` grows like ``d_k`` while the spread ``sqrt(d_k (1 + rho^2))``
grows like ``sqrt(d_k)`` (Gaussian components). Notebook 08, section 4.
"""

from __future__ import annotations

import numpy as np

from .. import _checks, sampling
from ..sampling import EXCESS_KURTOSIS, check_dist, make_rng, sample_components
from ..scales import scale_factor
from ..theory import Moments

#: Kurtosis E[X^4] / Var(X)^2 of each component distribution of :mod:`sdpa_helpers.sampling`
#: (3 + its :data:`sdpa_helpers.sampling.EXCESS_KURTOSIS`).
KURTOSIS = {dist: 3.0 + kappa for dist, kappa in EXCESS_KURTOSIS.items()}


def _check_rho(rho) -> float:
    rho = _checks.real("rho", rho)
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be a correlation in [-1, 1], got {rho}")
    return rho


def correlated_dot_product_moments(d_k: int, rho: float, kurtosis: float = 3.0,
                                   scale: float | str | None = "unscaled") -> Moments:
    """Mean and variance of ``scale * (q . k)`` for ``k = rho q + sqrt(1 - rho^2) z``.

    ``q`` and ``z`` are independent with independent mean-0, variance-1 components, and
    ``E[q_i^4] = kurtosis`` (3 for Gaussian). Then ``k_i`` has variance 1, correlation
    ``rho`` with ``q_i``, and

    - ``E[q_i k_i] = rho E[q_i^2] = rho``, so ``E[q . k] = rho d_k``;
    - ``E[q_i^2 k_i^2] = rho^2 E[q_i^4] + (1 - rho^2) E[q_i^2] E[z_i^2]``, so
      ``Var(q_i k_i) = rho^2 (kurtosis - 1) + 1 - rho^2`` -- for Gaussian components
      ``2 rho^2 + 1 - rho^2 = 1 + rho^2`` -- and ``Var(q . k) = d_k (1 + rho^2)``.

    Parameters
    ----------
    d_k : int
    rho : float
        Correlation of each ``q_i`` with ``k_i``, in [-1, 1].
    kurtosis : float
        ``E[q_i^4]`` for unit-variance components, >= 1.
    scale : None, {"unscaled", "sqrt", "inv_d"} or float > 0
        What multiplies the dot product, resolved by :func:`sdpa_helpers.scales.scale_factor`;
        default ``"unscaled"``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> correlated_dot_product_moments(64, 0.0)
    Moments(mean=0.0, var=64.0)
    >>> correlated_dot_product_moments(64, 0.5)
    Moments(mean=32.0, var=80.0)
    >>> correlated_dot_product_moments(64, 0.5, scale="sqrt")   # mean rho sqrt(d_k) = 4
    Moments(mean=4.0, var=1.25)
    """
    d_k = _checks.d_k("d_k", d_k)
    rho = _check_rho(rho)
    kurtosis = _checks.real("kurtosis", kurtosis)
    if kurtosis < 1.0:
        raise ValueError(f"kurtosis must be >= 1 (E[X^4] >= E[X^2]^2), got {kurtosis}")
    factor = scale_factor(scale, d_k)
    var_one = rho**2 * (kurtosis - 1.0) + 1.0 - rho**2
    return Moments(factor * rho * d_k, factor**2 * d_k * var_one)


def sample_correlated_qk(n_samples: int, d_k: int, rho: float, dist: str = "normal", rng=None):
    """Draw pairs ``q``, ``k = rho q + sqrt(1 - rho^2) z`` with ``z`` independent of ``q``.

    Parameters
    ----------
    n_samples, d_k : int
    rho : float
        In [-1, 1].
    dist : {"normal", "uniform", "rademacher", "laplace"}
        Distribution of the components of ``q`` (``z`` is always standard normal).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    q, k : ndarray, shape (n_samples, d_k)

    Examples
    --------
    >>> q, k = sample_correlated_qk(100_000, 2, 0.8, rng=0)
    >>> round(float(np.corrcoef(q[:, 0], k[:, 0])[0, 1]), 2), round(float(k.var()), 2)
    (0.8, 1.0)
    """
    n_samples = _checks.positive_int("n_samples", n_samples)
    d_k = _checks.d_k("d_k", d_k)
    rho = _check_rho(rho)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    q = sample_components((n_samples, d_k), dist=dist, rng=rng)
    z = rng.standard_normal((n_samples, d_k))
    return q, rho * q + np.sqrt(1.0 - rho**2) * z


def correlated_dot_product_parts(d_k: int, n_samples: int, dist: str = "normal", rng=None):
    """The two parts of ``q . k`` for correlated pairs: ``q . q`` and ``q . z``.

    With ``k = rho q + sqrt(1 - rho^2) z``, ``q . k = rho (q . q) + sqrt(1 - rho^2) (q . z)``
    exactly, so one draw of the parts gives the dot products for every ``rho``.
    Works in chunks, so memory stays bounded whatever ``d_k`` and ``n_samples`` are.

    Parameters
    ----------
    d_k, n_samples : int
    dist : {"normal", "uniform", "rademacher", "laplace"}
        Distribution of the components of ``q``; ``z`` is standard normal.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    qq, qz : ndarray, shape (n_samples,)

    Examples
    --------
    >>> qq, qz = correlated_dot_product_parts(64, 50_000, rng=0)
    >>> round(float(qq.mean()) / 64, 1), round(float(qz.var()) / 64, 1)   # E[q.q] = d_k, Var(q.z) = d_k
    (1.0, 1.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    qq, qz = np.empty(n_samples), np.empty(n_samples)
    rows = max(1, sampling.CHUNK_ENTRIES // d_k)  # chunks of q (and of z) of at most CHUNK_ENTRIES entries
    for start in range(0, n_samples, rows):
        n = min(rows, n_samples - start)
        q = sample_components((n, d_k), dist=dist, rng=rng)  # (n, d_k)
        z = rng.standard_normal((n, d_k))  # (n, d_k)
        np.einsum("ij,ij->i", q, q, out=qq[start:start + n])  # (n, d_k) -> (n,)
        np.einsum("ij,ij->i", q, z, out=qz[start:start + n])
    return qq, qz


def sample_correlated_dot_products(d_k: int, n_samples: int, rho: float, scale: float | str | None = "unscaled",
                                   dist: str = "normal", rng=None) -> np.ndarray:
    """Draw ``scale * (q . k)`` for ``n_samples`` correlated pairs (see :func:`sample_correlated_qk`).

    Parameters
    ----------
    d_k, n_samples : int
    rho : float
        In [-1, 1].
    scale : None, {"unscaled", "sqrt", "inv_d"} or float > 0
        Resolved by :func:`sdpa_helpers.scales.scale_factor`: ``"sqrt"`` for scaled attention,
        ``"inv_d"`` for muP's ``1/d_k``; default ``"unscaled"``.
    dist : {"normal", "uniform", "rademacher", "laplace"}
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_samples,)

    Examples
    --------
    >>> s = sample_correlated_dot_products(64, 100_000, 0.5, scale="sqrt", rng=0)
    >>> round(float(s.mean()), 1)   # rho sqrt(d_k) = 4
    4.0
    >>> bool(abs(s.var() - 1.25) < 5 * 1.25 * np.sqrt(2 / 100_000))   # 1 + rho^2, within 5 SE
    True
    """
    rho = _check_rho(rho)
    factor = scale_factor(scale, _checks.d_k("d_k", d_k))
    qq, qz = correlated_dot_product_parts(d_k, n_samples, dist=dist, rng=rng)
    return factor * (rho * qq + np.sqrt(1.0 - rho**2) * qz)


def correlated_dot_product_parts_exact(d_k: int, n_samples: int, rng=None):
    """``q . q`` and ``q . z`` for standard normal ``q``, ``z``, drawn exactly in O(n_samples) whatever d_k is.

    ``q . q = |q|^2`` is chi-square with ``d_k`` degrees of freedom, and given ``q``,
    ``q . z`` is ``N(0, |q|^2)`` (a fixed combination of independent standard normals), so
    ``q . z = |q| * N(0, 1)`` with an independent ``N(0, 1)``. The pair has exactly the
    distribution of :func:`correlated_dot_product_parts` with ``dist="normal"``, at a cost that
    does not grow with ``d_k`` (an explorer's first visit to ``d_k = 4096`` stays instant).

    Parameters
    ----------
    d_k, n_samples : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    qq, qz : ndarray, shape (n_samples,)

    Examples
    --------
    >>> qq, qz = correlated_dot_product_parts_exact(64, 200_000, rng=0)
    >>> round(float(qq.mean()) / 64, 2), round(float(qz.var()) / 64, 2)
    (1.0, 1.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    rng = make_rng(rng)
    qq = rng.chisquare(d_k, n_samples)
    return qq, np.sqrt(qq) * rng.standard_normal(n_samples)


def match_weight(d_k: int, rho: float, scale: float | str | None = "sqrt", n_keys: int = 12,
                 n_queries: int = 2000, rng=None) -> np.ndarray:
    """The softmax weight on one matching key among ``n_keys``: per query, the logits are
    ``c q . k_1`` with ``k_1 = rho q + sqrt(1 - rho^2) z`` and ``c q . k_j`` (``j > 1``) with
    ``k_j`` standard normal and independent of ``q`` (drawn as ``|q|`` times a standard normal,
    exactly their distribution given ``q``); ``c`` from :func:`sdpa_helpers.scales.scale_factor`.

    Returns
    -------
    ndarray, shape (n_queries,): the weight on the matching key

    Examples
    --------
    >>> w = match_weight(4096, 0.5, scale="inv_d", rng=0)   # logits -> (rho, 0, ..., 0)
    >>> round(float(w.mean()), 2), round(float(np.exp(0.5) / (np.exp(0.5) + 11)), 2)
    (0.13, 0.13)
    """
    from ..attention import softmax  # noqa: PLC0415

    d_k, n_keys = _checks.positive_int("d_k", d_k), _checks.positive_int("n_keys", n_keys)
    factor = scale_factor(scale, d_k)
    g = make_rng(rng)
    q, k = sample_correlated_qk(n_queries, d_k, rho, rng=g)  # (n_queries, d_k) each
    logits = np.empty((n_queries, n_keys))
    logits[:, 0] = np.einsum("nd,nd->n", q, k)
    logits[:, 1:] = np.linalg.norm(q, axis=1, keepdims=True) * g.standard_normal((n_queries, n_keys - 1))
    return softmax(factor * logits)[:, 0]
