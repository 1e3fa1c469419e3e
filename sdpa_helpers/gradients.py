"""Vanishing gradients through the softmax (notebook 06): the Jacobian ``J = diag(p) - p p^T``, its
norm accurate near one-hot, the gradients reaching the logits and the query over random queries
against ``d_k``, one query's Jacobians for heatmaps, and central finite differences (the course's
one numerical derivative, also for :mod:`sdpa_helpers.training`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import _checks, sampling
from ._numerics import by_row_blocks
from .attention import softmax
from .sampling import (
    MCEstimate,
    check_d_k,
    check_d_ks,
    chi_norms,
    curve_draws,
    mc_estimate,
    prefix_logits,
)
from .scales import scale_factor

__all__ = [
    "jacobian_frobenius", "logit_gradient", "one_minus_max",
    "GradientSamples", "gradient_samples", "GradientCurves", "gradient_curves",
    "finite_difference_jacobian", "JacobianPanels", "jacobian_panels", "typical_query_seed",
]


def _top_index(p: np.ndarray) -> np.ndarray:
    return np.argmax(p, axis=-1)[..., None]  # (..., 1)


def jacobian_frobenius(p) -> np.ndarray:
    """``||diag(p) - p p^T||_F`` (shape (...)) of probability vectors ``p`` (..., n), without forming ``J``;
    the terms of the largest ``p_i`` are summed from the other entries, so a nearly one-hot ``p`` gives
    an accurate tiny norm.

    >>> float(jacobian_frobenius([0.5, 0.5]))
    0.5
    """
    return _frobenius(_checks.probabilities("p", p))


def _frobenius(p: np.ndarray) -> np.ndarray:
    # in blocks of rows: bounded temporaries, whatever p's size
    return by_row_blocks(lambda rows: (_frobenius_rows(rows),), p, sampling.CHUNK_ENTRIES)[0]


def _frobenius_rows(p: np.ndarray) -> np.ndarray:
    top = _top_index(p)
    is_top = np.arange(p.shape[-1]) == top  # (..., n)
    others = np.where(is_top, 0.0, p)
    rest = others.sum(axis=-1, keepdims=True)  # 1 - max p, summed from the small entries
    # ||J||_F is of the order of 1 - max p: work in units of u = 1 - max p, so the squares of
    # weights far below it neither underflow nor lose digits (then multiply u back)
    u = np.where(rest > 0, rest, 1.0)
    with np.errstate(under="ignore"):  # a weight negligible next to u may still square to 0: right
        o = others / u
        sq = (p**2).sum(axis=-1, keepdims=True)
        one_minus = np.where(is_top, rest / u, 1.0 - p)
        sq_others = np.where(is_top, (o**2).sum(axis=-1, keepdims=True), sq - p**2)  # no cancellation at the top
        lead = np.where(is_top, p, o)  # every term of the sum carries one factor 1 / u**2
        total = (lead**2 * one_minus**2).sum(axis=-1) + (lead**2 * sq_others).sum(axis=-1)
        return u[..., 0] * np.sqrt(total)


def logit_gradient(p, upstream) -> np.ndarray:
    """The gradient reaching the logits, ``J g`` for ``g = dL/dp`` (``upstream``, broadcast against
    ``p`` (..., n)): ``(J g)_i = p_i (g_i - p . g)``, computed without cancellation at the largest ``p_i``.

    >>> logit_gradient([0.5, 0.5], [1.0, 0.0]).tolist()
    [0.25, -0.25]
    """
    p = _checks.probabilities("p", p)
    g = _checks.real_array("upstream", upstream, min_ndim=1, shape_hint="(..., n)")
    try:
        p, g = np.broadcast_arrays(p, g)
    except ValueError:
        raise ValueError(f"upstream of shape {g.shape} does not broadcast against p of shape {p.shape}") from None
    return _logit_gradient(p, g)


def _logit_gradient(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    with np.errstate(under="ignore"):  # products with tiny weights may underflow to 0: right
        centred = g - (p * g).sum(axis=-1, keepdims=True)  # g_i - p . g
        top = _top_index(p)
        g_top = np.take_along_axis(g, top, axis=-1)  # (..., 1)
        centred_top = (p * (g_top - g)).sum(axis=-1, keepdims=True)  # sum_j p_j (g_top - g_j)
        np.put_along_axis(centred, top, centred_top, axis=-1)
        return p * centred


class GradientSamples(NamedTuple):
    """Per random query (arrays of shape ``(len(d_ks), n_queries)``), as in :class:`GradientCurves`."""

    d_k: np.ndarray
    jacobian_norm: np.ndarray
    logit_grad_norm: np.ndarray
    query_grad_norm: np.ndarray


def gradient_samples(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> GradientSamples:
    """For ``n_queries`` (>= 2) random queries against ``n_keys`` keys at each ``d_k``: ``||J||_F``,
    ``||dL/dz|| = ||J g||`` and ``||dL/dq|| = ||c K^T J g||`` for an upstream ``g ~ N(0, I)``,
    arrays of shape (len(d_ks), n_queries). Exact draws without ``d_k``-long vectors
    (``||K^T v||^2 = (a . v)^2 + ||v||^2 chi^2(d_k - 1)``); key directions and ``g`` shared by every
    ``d_k``; the same seed gives every scale the same draws.

    >>> s = gradient_samples([1, 4096], 8, 1000, scale="unscaled", rng=0)
    >>> s.jacobian_norm.shape, bool(np.median(s.jacobian_norm[1]) < 1e-6)
    ((2, 1000), True)
    """
    d_ks, n_queries, rng, a = curve_draws(d_ks, n_keys, n_queries, rng)
    g = rng.standard_normal(a.shape)  # upstream gradient dL/dp
    rows = []
    for d_k in d_ks.tolist():
        c = scale_factor(scale, d_k)
        norm_q = chi_norms(float(d_k), n_queries, rng)  # (n_queries,)
        perp = rng.chisquare(float(d_k - 1), n_queries) if d_k > 1 else np.zeros(n_queries)
        p = softmax((c * norm_q)[:, None] * a)  # (n_queries, n_keys)
        v = _logit_gradient(p, g)  # dL/dz, (n_queries, n_keys)
        with np.errstate(under="ignore"):  # squares of vanishing gradients may underflow to 0: right
            v_sq = (v**2).sum(axis=-1)
            rows.append((_frobenius(p), np.sqrt(v_sq), c * np.sqrt((a * v).sum(axis=-1) ** 2 + v_sq * perp)))
    return GradientSamples(d_ks, *(np.stack([r[i] for r in rows]) for i in range(3)))


class GradientCurves(NamedTuple):
    """:func:`gradient_samples` summarised over queries: each field an :class:`MCEstimate` of shape (len(d_ks),)."""

    d_k: np.ndarray
    jacobian_norm: MCEstimate
    logit_grad_norm: MCEstimate
    query_grad_norm: MCEstimate


def gradient_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> GradientCurves:
    """:class:`GradientCurves` of :func:`gradient_samples` (same parameters).

    >>> u = gradient_curves([1, 4096], 8, 2000, scale="unscaled", rng=0)
    >>> bool(u.jacobian_norm.median[1] < 1e-6)
    True
    """
    samples = gradient_samples(d_ks, n_keys, n_queries, scale=scale, rng=rng)
    return GradientCurves(samples.d_k, *(mc_estimate(x, axis=1) for x in samples[1:]))


def finite_difference_jacobian(f: Callable, z, h: float = 1e-5, *, z_name: str = "z") -> np.ndarray:
    """Central differences ``(f(z + h e_j) - f(z - h e_j)) / 2h``: shape ``f(z).shape + z.shape`` (for a
    scalar ``f``, the gradient shaped like ``z``). Error about ``h^2`` (truncation) plus ``eps/h``
    (rounding); ``h`` must move every entry of ``z`` (ValueError otherwise); ``z_name`` names ``z`` in errors.

    >>> finite_difference_jacobian(lambda x: np.array([x[0] * x[1], x[0] ** 2]), [2.0, 3.0]).round(6).tolist()
    [[3.0, 2.0], [4.0, 0.0]]
    """
    if not callable(f):
        raise TypeError(f"f must be a function of one array, got {type(f).__name__}")
    z = _checks.real_array(z_name, z, min_ndim=1, shape_hint="(n,)")
    if z.size == 0:
        raise ValueError(f"{z_name} must have at least one entry, got shape {z.shape}")
    h = _checks.positive("h", h)
    stuck = (z + h == z) | (z - h == z)
    if np.any(stuck):
        j = np.unravel_index(int(np.argmax(stuck)), z.shape)
        raise ValueError(f"h = {h:g} is below the spacing of floats at {z_name}[{', '.join(map(str, j))}] = "
                         f"{z[j]:g}: z + h rounds to z; use h of at least {np.spacing(abs(z[j])):.3g}")
    step, parts = np.zeros_like(z), []
    for idx in np.ndindex(z.shape):
        step[idx] = h
        parts.append((np.asarray(f(z + step), dtype=float) - np.asarray(f(z - step), dtype=float)) / (2 * h))
        step[idx] = 0.0
    return np.moveaxis(np.stack(parts), 0, -1).reshape(parts[0].shape + z.shape)


def one_minus_max(p) -> np.ndarray:
    """``1 - max_i p_i`` (shape (...)) of probability vectors (..., n), summed from the other entries.

    >>> float(one_minus_max([1.0, 1e-30]))  # 1.0 - 1.0 would give 0
    1e-30
    """
    p = _checks.probabilities("p", p)
    return np.where(np.arange(p.shape[-1]) == _top_index(p), 0.0, p).sum(axis=-1)


class JacobianPanels(NamedTuple):
    """One query's softmax at a few ``d_k`` (m,), one row per scale: ``weights`` (s, m, n), ``jacobian``
    (s, m, n, n) and ``frobenius`` (s, m) by :func:`jacobian_frobenius`.
    """

    d_k: np.ndarray
    scales: tuple
    weights: np.ndarray
    jacobian: np.ndarray
    frobenius: np.ndarray


def jacobian_panels(d_ks, logits, scales=("unscaled", "sqrt")) -> JacobianPanels:
    """:class:`JacobianPanels` of unscaled ``logits`` (m, n), row ``i`` at ``d_ks[i]``, for each of ``scales``.

    >>> jacobian_panels([1, 4], [[0.0, 0.0], [0.0, 2.0]]).jacobian[0, 0].tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    d_ks = check_d_ks(d_ks)
    z = _checks.real_array("logits", logits, min_ndim=2, shape_hint="(m, n)")
    if z.ndim != 2 or z.shape[0] != d_ks.size or z.shape[1] == 0:
        raise ValueError(f"logits must have shape (len(d_ks), n) = ({d_ks.size}, n), got {z.shape}")
    if isinstance(scales, str) or not len(scales):
        raise TypeError(f"scales must be a non-empty sequence of scales, got {scales!r}")
    factors = np.array([[scale_factor(s, int(d), name="scales") for d in d_ks] for s in scales])  # (s, m)
    with np.errstate(over="ignore"):
        scaled = factors[..., None] * z  # (s, m, n)
    if not np.all(np.isfinite(scaled)):
        raise ValueError("logits times a scale overflow to infinity; pass smaller logits or scales")
    p = softmax(scaled)  # (s, m, n)
    J = p[..., :, None] * (np.eye(z.shape[1]) - p[..., None, :])  # p_i (delta_ij - p_j)
    return JacobianPanels(d_ks, tuple(scales), p, J, _frobenius(p))


def typical_query_seed(d_ks, d_k, n_keys: int, seeds=range(99), scale="unscaled") -> int:
    """The seed among ``seeds`` whose query (drawn as ``prefix_logits(d_ks, n_keys, rng=seed)``) has the
    ``||J||_F`` under ``scale`` closest to the median at ``d_k`` (one or several of ``d_ks``; ranks
    summed; the first on a tie): a first picture that shows the rule, not a rare near tie.

    >>> typical_query_seed([1, 16, 64], (1, 64), 8, seeds=range(5)) in range(5)
    True
    """
    d_ks = check_d_ks(d_ks)
    wanted = [check_d_k("d_k", d) for d in (np.atleast_1d(d_k) if not isinstance(d_k, str) else [d_k])]
    if not wanted:
        raise ValueError("d_k must hold at least one d_k")
    for d in wanted:
        if d not in d_ks.tolist():
            raise ValueError(f"d_k = {d} must be one of d_ks {d_ks.tolist()}")
    n_keys = _checks.positive_int("n_keys", n_keys)
    seeds = [_checks.seed("each entry of seeds", s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    cols = [d_ks.tolist().index(d) for d in wanted]
    c = np.array([scale_factor(scale, d) for d in wanted])
    norms = np.array([_frobenius(softmax(c[:, None] * prefix_logits(d_ks, n_keys, rng=s)[cols]))
                      for s in seeds])  # (len(seeds), len(wanted))
    ranks = np.argsort(np.argsort(norms, axis=0, kind="stable"), axis=0, kind="stable")  # 0 .. len(seeds) - 1
    mid = (len(seeds) - 1) // 2
    return seeds[int(np.argmin(np.abs(ranks - mid).sum(axis=1)))]
