"""Softmax saturation and vanishing gradients, by Monte Carlo: numpy only.

One query ``q`` meets ``n_keys`` keys ``k_j``; all components are independent N(0, 1).
The logits are ``z_j = c * (q . k_j)`` with ``c = 1`` (unscaled) or ``c = 1/sqrt(d_k)``
(scaled). This module measures how peaked ``softmax(z)`` is and how much gradient it
passes back, as ``d_k`` grows.

This module offers:

- :class:`MCEstimate` -- a Monte Carlo mean with its standard error, and the median;
- :func:`mc_estimate` -- that summary of a sample;
- :func:`query_logits` -- exact draws of the logits of random queries against random keys;
- :class:`WeightStats`, :func:`weight_stats` -- largest weight, entropy and effective number
  of keys ``exp(entropy)`` of ``softmax(logits)``, computed stably from the logits;
- :class:`SaturationCurves`, :func:`saturation_curves` -- those three, averaged over queries,
  against ``d_k``;
- :func:`jacobian_frobenius` -- ``||diag(p) - p p^T||_F`` without forming the matrix;
- :func:`logit_gradient` -- ``J g``: the gradient reaching the logits from an upstream ``g``;
- :class:`GradientCurves`, :func:`gradient_curves` -- Jacobian norm and gradient norms
  (to the logits and to ``q``) against ``d_k``;
- :func:`finite_difference_jacobian` -- central differences, to check Jacobians.

The draws use one exact shortcut. For a fixed query, ``q . k_j = ||q|| a_j`` where
``a_j = (q/||q||) . k_j`` are independent N(0, 1) (a unit vector dotted with a standard
normal vector), and ``||q||^2`` is chi-square with ``d_k`` degrees of freedom. So
``n_queries`` rows of logits cost ``n_queries * (n_keys + 1)`` random numbers whatever
``d_k`` is, and the distribution is exactly that of the full vectors.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import _checks
from .sampling import make_rng

__all__ = [
    "MCEstimate", "mc_estimate", "query_logits", "WeightStats", "weight_stats",
    "SaturationCurves", "saturation_curves", "jacobian_frobenius", "logit_gradient",
    "GradientCurves", "gradient_curves", "finite_difference_jacobian",
]


class MCEstimate(NamedTuple):
    """Monte Carlo summary of a quantity: ``mean``, its standard error ``se``, and ``median``.

    Fields are floats or arrays (one entry per ``d_k`` in the curves below).
    """

    mean: np.ndarray
    se: np.ndarray
    median: np.ndarray


def mc_estimate(samples, axis: int = 0) -> MCEstimate:
    """Mean, standard error ``std / sqrt(n)`` and median of ``samples`` along ``axis``.

    Parameters
    ----------
    samples : array_like, shape (n, ...)
        Independent draws along ``axis`` (at least 2).
    axis : int
        The axis holding the draws.

    Returns
    -------
    MCEstimate
        Fields of the shape of ``samples`` without ``axis``.

    Examples
    --------
    >>> est = mc_estimate([1.0, 2.0, 3.0, 4.0])
    >>> float(est.mean), round(float(est.se), 4), float(est.median)
    (2.5, 0.6455, 2.5)
    """
    x = _checks.real_array("samples", samples, min_ndim=1, shape_hint="(n, ...)")
    axis = _checks.axis_index("axis", axis, x.ndim)
    n = x.shape[axis]
    if n < 2:
        raise ValueError(f"samples needs at least 2 draws along axis {axis} for a standard error, got {n}")
    return MCEstimate(x.mean(axis=axis), x.std(axis=axis, ddof=1) / np.sqrt(n), np.median(x, axis=axis))


def _scale(d_k: int, scaled: bool) -> float:
    return 1.0 / np.sqrt(d_k) if scaled else 1.0


def _check_scaled(scaled) -> bool:
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"scaled must be True (divide by sqrt(d_k)) or False (unscaled), got {scaled!r}")
    return bool(scaled)


def _check_d_ks(d_ks) -> np.ndarray:
    try:
        arr = np.asarray(d_ks)
    except Exception:
        raise TypeError(f"d_ks must be a sequence of positive integers, got {d_ks!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of positive integers, got shape {arr.shape}")
    return np.array([_checks.positive_int("each entry of d_ks", d) for d in arr.tolist()])


def query_logits(d_k: int, n_keys: int, n_queries: int, scale: float | None = None, rng=None) -> np.ndarray:
    """Logits ``scale * (q . k_j)`` of ``n_queries`` random queries, each against its own ``n_keys`` keys.

    All components of ``q`` and ``k_j`` are independent N(0, 1). Drawn exactly through the
    shortcut ``q . k_j = ||q|| a_j`` with ``a_j ~ N(0, 1)`` and ``||q||^2 ~ chi^2(d_k)``
    (see the module docstring), so the cost does not grow with ``d_k``.

    Parameters
    ----------
    d_k : int
        Length of ``q`` and of each key, >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Independent queries, >= 1.
    scale : float > 0 or None
        ``None`` means ``1/sqrt(d_k)`` (scaled attention); ``1.0`` is unscaled.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_queries, n_keys)
        Row ``i`` holds the logits of query ``i``; unscaled each has variance ``d_k``.

    Examples
    --------
    >>> z = query_logits(64, 8, 50_000, scale=1.0, rng=0)
    >>> z.shape, round(float(z.var() / 64), 1)
    ((50000, 8), 1.0)
    >>> round(float(query_logits(64, 8, 50_000, rng=0).var()), 1)  # scaled: variance 1
    1.0
    """
    d_k = _checks.positive_int("d_k", d_k)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    c = 1.0 / np.sqrt(d_k) if scale is None else _checks.positive("scale", scale)
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # components of the keys along q/||q||
    norm_q = np.sqrt(rng.chisquare(d_k, n_queries))  # (n_queries,)
    return (c * norm_q)[:, None] * a


class WeightStats(NamedTuple):
    """Per row of logits: the largest softmax weight, the entropy (nats), and ``exp(entropy)``."""

    max_weight: np.ndarray
    entropy: np.ndarray
    effective_keys: np.ndarray


def weight_stats(logits) -> WeightStats:
    """How peaked ``softmax(logits)`` is, row by row, computed stably from the logits.

    ``entropy = -sum_i p_i log p_i`` uses ``log p_i = z_i - logsumexp(z)``, which is exact
    even where ``p_i`` underflows to 0. ``effective_keys = exp(entropy)`` runs from 1
    (one-hot) to ``n`` (uniform): the number of equally weighted keys with that entropy.

    Parameters
    ----------
    logits : array_like, shape (..., n)
        Finite logits; the softmax runs over the last axis.

    Returns
    -------
    WeightStats
        Fields of shape ``(...)``.

    Examples
    --------
    >>> s = weight_stats([[0.0, 0.0, 0.0, 0.0], [0.0, 1e6, 0.0, 0.0]])
    >>> s.max_weight.tolist(), s.entropy.round(4).tolist(), s.effective_keys.round(4).tolist()
    ([0.25, 1.0], [1.3863, 0.0], [4.0, 1.0])
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(..., n)")
    if z.shape[-1] == 0:
        raise ValueError("logits must have at least one entry along the last axis")
    shifted = z - z.max(axis=-1, keepdims=True)  # <= 0, the top entry is 0
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)  # >= 1
    p = e / total
    log_p = shifted - np.log(total)
    h = np.maximum(-(p * log_p).sum(axis=-1), 0.0)
    return WeightStats(p.max(axis=-1), h, np.exp(h))


class SaturationCurves(NamedTuple):
    """Monte Carlo curves against ``d_k`` (each an :class:`MCEstimate` over queries)."""

    d_k: np.ndarray
    max_weight: MCEstimate
    entropy: MCEstimate
    effective_keys: MCEstimate


def saturation_curves(d_ks, n_keys: int, n_queries: int, scaled: bool, rng=None) -> SaturationCurves:
    """Average largest weight, entropy and ``exp(entropy)`` of one query's softmax, against ``d_k``.

    For each ``d_k`` in ``d_ks``, ``n_queries`` independent queries meet ``n_keys`` keys
    each (components N(0, 1)); logits ``c (q . k_j)`` with ``c = 1/sqrt(d_k)`` if
    ``scaled`` else 1. The key directions ``a`` are drawn once and shared by every ``d_k``
    (common random numbers: smooth curves), the query norms afresh per ``d_k``. The same
    ``rng`` seed gives the scaled and unscaled curves the same draws.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Queries per ``d_k``, >= 2.
    scaled : bool
        Divide the logits by ``sqrt(d_k)``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    SaturationCurves
        ``d_k`` (the given values) and one :class:`MCEstimate` per quantity, each field of
        shape ``(len(d_ks),)``.

    Examples
    --------
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scaled=False, rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # unscaled: from spread out to nearly one-hot
    [0.3, 0.98]
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scaled=True, rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # scaled: far from one-hot at every d_k
    [0.3, 0.36]
    """
    d_ks = _check_d_ks(d_ks)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    scaled = _check_scaled(scaled)
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # shared by every d_k
    stats = []
    for d_k in d_ks.tolist():
        norm_q = np.sqrt(rng.chisquare(d_k, n_queries))  # (n_queries,)
        stats.append(weight_stats((_scale(d_k, scaled) * norm_q)[:, None] * a))
    return SaturationCurves(
        d_ks, *(mc_estimate(np.stack([getattr(s, f) for s in stats], axis=1)) for f in WeightStats._fields))


def _top_index(p: np.ndarray) -> np.ndarray:
    return np.argmax(p, axis=-1)[..., None]  # (..., 1)


def jacobian_frobenius(p) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian ``J = diag(p) - p p^T``, without forming ``J``.

    ``||J||_F^2 = sum_i p_i^2 (1 - p_i)^2 + sum_i p_i^2 sum_{j != i} p_j^2``. For the largest
    ``p_i`` both ``1 - p_i`` and ``sum_{j != i} p_j^2`` are summed from the other entries, so
    a nearly one-hot ``p`` gives an accurate tiny norm, not rounding noise.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors summing to 1.

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> float(jacobian_frobenius([0.5, 0.5]))  # J = [[.25, -.25], [-.25, .25]]
    0.5
    >>> p = np.array([1.0 - 1e-12, 1e-12])
    >>> round(float(jacobian_frobenius(p)) / 2e-12, 6)  # about 2 (1 - max p)
    1.0
    """
    p = _checks.probabilities("p", p)
    top = _top_index(p)
    is_top = np.arange(p.shape[-1]) == top  # (..., n)
    others = np.where(is_top, 0.0, p)
    rest = others.sum(axis=-1, keepdims=True)  # 1 - max p, summed from the small entries
    rest_sq = (others**2).sum(axis=-1, keepdims=True)  # sum of p_j^2 over j != top
    sq = (p**2).sum(axis=-1, keepdims=True)
    one_minus = np.where(is_top, rest, 1.0 - p)
    sq_others = np.where(is_top, rest_sq, sq - p**2)  # no cancellation: the top term stays in
    total = (p**2 * one_minus**2).sum(axis=-1) + (p**2 * sq_others).sum(axis=-1)
    return np.sqrt(total)


def logit_gradient(p, upstream) -> np.ndarray:
    """The gradient reaching the logits, ``dL/dz = J^T g = J g`` for ``g = dL/dp``.

    ``(J g)_i = p_i (g_i - p . g) = p_i sum_j p_j (g_i - g_j)``; the second form is used for
    the largest ``p_i``, where the first would subtract two nearly equal numbers.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors (the softmax output).
    upstream : array_like, shape (..., n)
        ``g = dL/dp``, broadcastable against ``p``.

    Returns
    -------
    ndarray, shape (..., n)
        Sums to 0 along the last axis.

    Examples
    --------
    >>> logit_gradient([0.5, 0.5], [1.0, 0.0]).tolist()
    [0.25, -0.25]
    >>> (logit_gradient([1.0, 0.0], [3.0, -2.0]) + 0.0).tolist()  # one-hot: nothing passes back
    [0.0, 0.0]
    """
    p = _checks.probabilities("p", p)
    g = _checks.real_array("upstream", upstream, min_ndim=1, shape_hint="(..., n)")
    try:
        p, g = np.broadcast_arrays(p, g)
    except ValueError:
        raise ValueError(f"upstream of shape {g.shape} does not broadcast against p of shape {p.shape}") from None
    centred = g - (p * g).sum(axis=-1, keepdims=True)  # g_i - p . g
    top = _top_index(p)
    g_top = np.take_along_axis(g, top, axis=-1)  # (..., 1)
    centred_top = (p * (g_top - g)).sum(axis=-1, keepdims=True)  # sum_j p_j (g_top - g_j)
    np.put_along_axis(centred, top, centred_top, axis=-1)
    return p * centred


class GradientCurves(NamedTuple):
    """Monte Carlo curves against ``d_k`` (each an :class:`MCEstimate` over queries).

    - ``jacobian_norm``: ``||J||_F`` with ``J = diag(p) - p p^T``;
    - ``logit_grad_norm``: ``||dL/dz|| = ||J g||`` for an upstream ``g ~ N(0, I)``;
    - ``query_grad_norm``: ``||dL/dq|| = ||c K^T (J g)||`` (``c`` the scale, ``K`` the keys).
    """

    d_k: np.ndarray
    jacobian_norm: MCEstimate
    logit_grad_norm: MCEstimate
    query_grad_norm: MCEstimate


def gradient_curves(d_ks, n_keys: int, n_queries: int, scaled: bool, rng=None) -> GradientCurves:
    """How much gradient one query's softmax passes back, against ``d_k``.

    The loss reaches the weights as ``g = dL/dp ~ N(0, I)``. The chain rule gives
    ``dL/dz = J g`` and, with ``z_j = c (q . k_j)``, ``dL/dq = c sum_j (dL/dz_j) k_j``.
    Writing ``k_j = a_j q/||q|| + k_j_perp`` (``k_j_perp`` orthogonal to ``q``, independent
    of the logits), ``||K^T v||^2 = (a . v)^2 + ||v||^2 chi^2(d_k - 1)`` exactly, so no
    ``d_k``-long vector is drawn. Draws are shared across ``d_k`` and between the scaled
    and unscaled runs of one seed, as in :func:`saturation_curves`.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Queries per ``d_k``, >= 2.
    scaled : bool
        Divide the logits by ``sqrt(d_k)``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    GradientCurves
        Each field of shape ``(len(d_ks),)``.

    Examples
    --------
    >>> u = gradient_curves([1, 4096], 8, 2000, scaled=False, rng=0)
    >>> s = gradient_curves([1, 4096], 8, 2000, scaled=True, rng=0)
    >>> bool(u.jacobian_norm.median[1] < 1e-6 < 0.1 < s.jacobian_norm.median[1])
    True
    """
    d_ks = _check_d_ks(d_ks)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    scaled = _check_scaled(scaled)
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # key components along q, shared by every d_k
    g = rng.standard_normal((n_queries, n_keys))  # upstream gradient dL/dp
    rows = []
    for d_k in d_ks.tolist():
        c = _scale(d_k, scaled)
        norm_q = np.sqrt(rng.chisquare(d_k, n_queries))  # (n_queries,)
        perp = rng.chisquare(d_k - 1, n_queries) if d_k > 1 else np.zeros(n_queries)
        z = (c * norm_q)[:, None] * a  # (n_queries, n_keys)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        v = logit_gradient(p, g)  # dL/dz, (n_queries, n_keys)
        v_sq = (v**2).sum(axis=-1)
        q_grad = c * np.sqrt((a * v).sum(axis=-1) ** 2 + v_sq * perp)
        rows.append((jacobian_frobenius(p), np.sqrt(v_sq), q_grad))
    return GradientCurves(d_ks, *(mc_estimate(np.stack([r[i] for r in rows], axis=1)) for i in range(3)))


def finite_difference_jacobian(f: Callable, z, h: float = 1e-5) -> np.ndarray:
    """Jacobian of ``f`` at ``z`` by central differences: ``(f(z + h e_j) - f(z - h e_j)) / 2h``.

    The error per entry is ``h^2/6`` times a third derivative (truncation) plus about
    ``eps/h`` (rounding), so ``h`` near ``1e-5`` balances the two for well-scaled ``f``.

    Parameters
    ----------
    f : callable
        Maps an array of shape (n,) to an array of shape (m,).
    z : array_like, shape (n,)
        The point.
    h : float > 0
        The step.

    Returns
    -------
    ndarray, shape (m, n)
        Column ``j`` is the derivative with respect to ``z_j``.

    Examples
    --------
    >>> J = finite_difference_jacobian(lambda x: np.array([x[0] * x[1], x[0] ** 2]), [2.0, 3.0])
    >>> J.round(6).tolist()
    [[3.0, 2.0], [4.0, 0.0]]
    """
    if not callable(f):
        raise TypeError(f"f must be a function of one array, got {type(f).__name__}")
    z = _checks.real_array("z", z, min_ndim=1, shape_hint="(n,)")
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"z must have shape (n,) with n >= 1, got shape {z.shape}")
    h = _checks.positive("h", h)
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        up = np.asarray(f(z + step), dtype=float)
        down = np.asarray(f(z - step), dtype=float)
        columns.append((up - down) / (2 * h))
    return np.stack(columns, axis=-1)
