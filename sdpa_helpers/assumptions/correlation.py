"""What training does: queries and keys correlated as ``k = rho q + sqrt(1 - rho^2) z`` (notebook 08, section 4):
``E[q . k] = rho d_k`` grows like ``d_k``, the spread ``sqrt(d_k (1 + rho^2))`` like ``sqrt(d_k)``."""

from __future__ import annotations

import numpy as np

from .. import _checks, sampling
from ..attention import softmax
from ..sampling import EXCESS_KURTOSIS, check_dist, make_rng, sample_components
from ..scales import scale_factor
from ..theory import Moments

#: Kurtosis E[X^4] / Var(X)^2 of each component distribution of :mod:`sdpa_helpers.sampling`.
KURTOSIS = {dist: 3.0 + kappa for dist, kappa in EXCESS_KURTOSIS.items()}


def _check_rho(rho) -> float:
    rho = _checks.real("rho", rho)
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be a correlation in [-1, 1], got {rho}")
    return rho


def correlated_dot_product_moments(d_k: int, rho: float, kurtosis: float = 3.0,
                                   scale: float | str | None = "unscaled") -> Moments:
    """:class:`~sdpa_helpers.theory.Moments` of ``scale * (q . k)`` for ``k = rho q + sqrt(1 - rho^2) z``.

    ``q``, ``z`` independent with independent mean-0, variance-1 components, ``E[q_i^4] = kurtosis`` (>= 1; 3 for
    Gaussian): ``E[q . k] = rho d_k``, ``Var(q . k) = d_k (rho^2 (kurtosis - 1) + 1 - rho^2)`` (Gaussian:
    ``d_k (1 + rho^2)``). ``rho`` in [-1, 1]; ``scale`` through :func:`sdpa_helpers.scales.scale_factor`.

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
    """Pairs ``q``, ``k = rho q + sqrt(1 - rho^2) z``, each of shape (n_samples, d_k): ``q``'s components
    from ``dist`` (:mod:`sdpa_helpers.sampling`), ``z`` standard normal and independent of ``q``."""
    n_samples = _checks.positive_int("n_samples", n_samples)
    d_k = _checks.d_k("d_k", d_k)
    rho = _check_rho(rho)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    q = sample_components((n_samples, d_k), dist=dist, rng=rng)
    z = rng.standard_normal((n_samples, d_k))
    return q, rho * q + np.sqrt(1.0 - rho**2) * z


def correlated_dot_product_parts(d_k: int, n_samples: int, dist: str = "normal", rng=None):
    """``q . q`` and ``q . z`` (each (n_samples,)), the parts of ``q . k = rho (q . q) + sqrt(1 - rho^2) (q . z)``:
    one draw gives the dot products for every ``rho``. In chunks: memory bounded whatever d_k and n_samples."""
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
    """``scale * (q . k)`` for ``n_samples`` correlated pairs (:func:`sample_correlated_qk`), shape (n_samples,);
    ``scale`` through :func:`sdpa_helpers.scales.scale_factor` (``"sqrt"``, ``"inv_d"`` for muP's 1/d_k, ...)."""
    rho = _check_rho(rho)
    factor = scale_factor(scale, _checks.d_k("d_k", d_k))
    qq, qz = correlated_dot_product_parts(d_k, n_samples, dist=dist, rng=rng)
    return factor * (rho * qq + np.sqrt(1.0 - rho**2) * qz)


def correlated_dot_product_parts_exact(d_k: int, n_samples: int, rng=None):
    """``q . q`` and ``q . z`` for standard normal ``q``, ``z``, drawn exactly in O(n_samples) whatever d_k is:
    ``q . q`` is chi-square(d_k) and, given ``q``, ``q . z = |q| N(0, 1)``. Same distribution as
    :func:`correlated_dot_product_parts` with ``dist="normal"``."""
    d_k = _checks.d_k("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    rng = make_rng(rng)
    qq = rng.chisquare(d_k, n_samples)
    return qq, np.sqrt(qq) * rng.standard_normal(n_samples)


def match_weight(d_k: int, rho: float, scale: float | str | None = "sqrt", n_keys: int = 12,
                 n_queries: int = 2000, rng=None) -> np.ndarray:
    """The softmax weight on one matching key among ``n_keys``, per query: shape (n_queries,).

    Logits ``c q . k_1`` with ``k_1 = rho q + sqrt(1 - rho^2) z`` and ``c q . k_j`` (``j > 1``) for standard normal
    ``k_j`` independent of ``q`` (drawn as ``|q|`` times a standard normal); ``c`` from
    :func:`sdpa_helpers.scales.scale_factor`.
    """
    d_k, n_keys = _checks.positive_int("d_k", d_k), _checks.positive_int("n_keys", n_keys)
    factor = scale_factor(scale, d_k)
    rho = _check_rho(rho)
    n_queries = _checks.positive_int("n_queries", n_queries)
    g = make_rng(rng)
    # The draws of sample_correlated_qk (q, then z, each (n_queries, d_k)), then the other keys' (n_queries,
    # n_keys - 1); q and z are redrawn block by block from copies of g at their starts, so memory stays
    # a few CHUNK_ENTRIES floats whatever d_k is, and every row is what the whole arrays would give.
    rows = max(1, sampling.CHUNK_ENTRIES // d_k)
    starts = []
    for _ in ("q", "z"):
        starts.append(np.random.Generator(type(g.bit_generator)()))
        starts[-1].bit_generator.state = g.bit_generator.state
        for first in range(0, n_queries, rows):
            g.standard_normal((min(rows, n_queries - first), d_k))
    g_q, g_z = starts
    others = g.standard_normal((n_queries, n_keys - 1))
    logits = np.empty((n_queries, n_keys))
    for first in range(0, n_queries, rows):
        n = min(rows, n_queries - first)
        q = sample_components((n, d_k), rng=g_q)  # (n, d_k)
        k = rho * q + np.sqrt(1.0 - rho**2) * g_z.standard_normal((n, d_k))
        logits[first:first + n, 0] = np.einsum("nd,nd->n", q, k)
        logits[first:first + n, 1:] = np.linalg.norm(q, axis=1, keepdims=True) * others[first:first + n]
    return softmax(factor * logits)[:, 0]
