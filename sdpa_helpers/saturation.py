"""Softmax saturation and vanishing gradients, by Monte Carlo: numpy only.

One query ``q`` meets ``n_keys`` keys ``k_j``; all components are independent N(0, 1).
The logits are ``z_j = c * (q . k_j)`` with ``c`` given by a ``scale`` argument in the
package's one vocabulary (:mod:`sdpa_helpers.scales`: ``None`` or ``"sqrt"`` is
``1/sqrt(d_k)``, ``"unscaled"`` is 1, ``"inv_d"`` is ``1/d_k``, or a positive number). This
module measures how peaked ``softmax(z)`` is and how much gradient it passes back, as ``d_k``
grows.

This module offers:

- :class:`MCEstimate` -- a Monte Carlo mean with its standard error, and the median;
- :func:`mc_estimate` -- that summary of a sample;
- :func:`query_logits` -- exact draws of the logits of random queries against random keys;
- :func:`prefix_logits` -- one query against ``n`` keys at growing ``d_k``, as if the same
  long vectors were cut to their first ``d_k`` components (exact, without drawing them);
- :class:`WeightStats`, :func:`weight_stats` -- largest weight, entropy and effective number
  of keys ``exp(entropy)`` of ``softmax(logits)``, computed stably from the logits;
- :class:`SaturationCurves`, :func:`saturation_curves` -- those three, averaged over queries,
  against ``d_k``;
- :func:`jacobian_frobenius` -- ``||diag(p) - p p^T||_F`` without forming the matrix;
- :func:`logit_gradient` -- ``J g``: the gradient reaching the logits from an upstream ``g``;
- :class:`GradientCurves`, :func:`gradient_curves` -- Jacobian norm and gradient norms
  (to the logits and to ``q``) against ``d_k``;
- :func:`finite_difference_jacobian` -- central differences, to check Jacobians;
- :func:`one_minus_max` -- ``1 - max p``, summed from the other entries;
- :class:`JacobianPanels`, :func:`jacobian_panels` -- one query's softmax, its Jacobian and
  ``||J||_F`` at a few ``d_k``, per scale (what heatmaps and the explorer draw);
- :func:`entropy_closed_form`, :func:`effective_keys_closed_form` -- the entropy of the
  softmax of ``n`` i.i.d. N(0, sigma^2) logits for large ``n`` and moderate ``sigma``,
  ``H ~ ln n - sigma^2/2``, and ``exp(H)``;
- :func:`saturation_onset` -- the logit variance ``ln n`` where that law says half the
  entropy is gone (and where it stops holding);
- :func:`iid_entropy` -- the same entropy by Monte Carlo, one mean per seed;
- :func:`temperature_curves` -- ``softmax(z / T)`` and its weight statistics over temperatures.

The draws use one exact shortcut. For a fixed query, ``q . k_j = ||q|| a_j`` where
``a_j = (q/||q||) . k_j`` are independent N(0, 1) (a unit vector dotted with a standard
normal vector), and ``||q||^2`` is chi-square with ``d_k`` degrees of freedom. So
``n_queries`` rows of logits cost ``n_queries * (n_keys + 1)`` random numbers whatever
``d_k`` is, and the distribution is exactly that of the full vectors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import _checks
from ._numerics import binary_exponent
from .sampling import make_rng
from .scales import scale_factor

__all__ = [
    "D_K_GRID", "KEY_COUNTS", "explorer_queries", "MCEstimate", "mc_estimate", "query_logits", "prefix_logits",
    "WeightStats", "weight_stats",
    "SaturationCurves", "saturation_curves", "jacobian_frobenius", "logit_gradient",
    "GradientCurves", "gradient_curves", "finite_difference_jacobian",
    "one_minus_max", "JacobianPanels", "jacobian_panels",
    "entropy_closed_form", "effective_keys_closed_form", "saturation_onset", "iid_entropy",
    "temperature_curves",
]


#: The d_k values of the curves and sliders: powers of two from 1 to 4096.
D_K_GRID = tuple(2**i for i in range(13))
#: Numbers of keys (sequence lengths) offered by notebook 05's explorer.
KEY_COUNTS = (4, 16, 64, 256, 1024)


def explorer_queries(n_keys: int, budget: int = 16384) -> int:
    """Queries per ``d_k`` for the explorer's curves at ``n_keys`` keys: ``budget // n`` (at least 32).

    The work per curve point is ``n_queries * n_keys`` softmax entries, so every key count costs
    the same; the entropy of many keys varies less from query to query, so its standard error
    stays small.

    >>> [explorer_queries(n) for n in KEY_COUNTS]
    [4096, 1024, 256, 64, 32]
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return max(32, _checks.positive_int("budget", budget) // n_keys)


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
    # scale-safe at any magnitude: squares of 1e200 overflow and of 1e-300 underflow, so work in units of max |x|
    e = binary_exponent(np.max(np.abs(x), axis=axis))
    y = np.ldexp(x, -np.expand_dims(e, axis))  # exact: a power of two
    mean = np.ldexp(y.mean(axis=axis), e)
    se = np.ldexp(y.std(axis=axis, ddof=1) / np.sqrt(n), e)
    return MCEstimate(mean, se, np.median(x, axis=axis))


def _check_d_ks(d_ks) -> np.ndarray:
    try:
        arr = np.asarray(d_ks)
    except Exception:
        raise TypeError(f"d_ks must be a sequence of positive integers, got {d_ks!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of positive integers, got shape {arr.shape}")
    return np.array([_checks.positive_int("each entry of d_ks", d) for d in arr.tolist()])


#: Largest d_k the samplers accept: chi^2(d_k) is drawn in floating point.
MAX_D_K = 2**1000


def _check_d_k(name: str, d_k) -> int:
    d_k = _checks.positive_int(name, d_k)
    if d_k > MAX_D_K:
        raise ValueError(f"{name} must be at most 2**1000 (the chi-square draw of ||q||^2 is a float), got {d_k:.3e}")
    return d_k


def _curve_draws(d_ks, n_keys, n_queries, rng):
    """The shared opening of the curves: checked arguments and the key directions ``a``."""
    d_ks = _check_d_ks(d_ks)
    for d_k in d_ks.tolist():
        _check_d_k("each entry of d_ks", d_k)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # key components along q, shared by every d_k
    return d_ks, n_queries, rng, a


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
    scale : None, str or float > 0
        ``None`` or ``"sqrt"`` means ``1/sqrt(d_k)`` (scaled attention); ``"unscaled"`` or
        ``1.0`` is unscaled (see :func:`sdpa_helpers.scales.scale_factor`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_queries, n_keys)
        Row ``i`` holds the logits of query ``i``; unscaled each has variance ``d_k``.

    Examples
    --------
    >>> z = query_logits(64, 8, 50_000, scale="unscaled", rng=0)
    >>> z.shape, round(float(z.var() / 64), 1)
    ((50000, 8), 1.0)
    >>> round(float(query_logits(64, 8, 50_000, rng=0).var()), 1)  # scaled: variance 1
    1.0
    """
    d_k = _check_d_k("d_k", d_k)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    c = scale_factor(scale, d_k)
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # components of the keys along q/||q||
    norm_q = np.sqrt(rng.chisquare(float(d_k), n_queries))  # (n_queries,)
    return (c * norm_q)[:, None] * a


def prefix_logits(d_ks, n_keys: int, rng=None) -> np.ndarray:
    """Unscaled logits ``q[:d] . k_j[:d]`` of one query and ``n_keys`` keys, for each ``d`` in ``d_ks``.

    The same query and keys throughout, cut to their first ``d`` components (all N(0, 1)), drawn
    exactly without the vectors: between consecutive ``d`` the new components add
    ``||q_block|| b_j`` to logit ``j``, with ``||q_block||^2 ~ chi^2(block length)`` and
    ``b_j ~ N(0, 1)`` independent across keys and blocks (given ``q``, the block's dot products
    are independent normals with variance ``||q_block||^2``). Cost: ``len(d_ks) * (n_keys + 1)``
    numbers, whatever ``d``. The first ``m`` keys of a call do not depend on ``n_keys``.

    Parameters
    ----------
    d_ks : sequence of int
        Strictly increasing, each >= 1.
    n_keys : int
        Keys, >= 1.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (len(d_ks), n_keys)
        Row ``i``: the logits at ``d_ks[i]``; each has variance ``d_ks[i]``.

    Examples
    --------
    >>> z = prefix_logits([1, 64, 4096], 3, rng=0)
    >>> z.shape
    (3, 3)
    >>> bool(np.array_equal(prefix_logits([1, 64], 8, rng=0)[:, :3], prefix_logits([1, 64], 3, rng=0)))
    True
    """
    d_ks = _check_d_ks(d_ks)
    for d_k in d_ks.tolist():
        _check_d_k("each entry of d_ks", d_k)
    if np.any(np.diff(d_ks) <= 0):
        raise ValueError(f"d_ks must be strictly increasing, got {d_ks.tolist()}")
    n_keys = _checks.positive_int("n_keys", n_keys)
    rng = make_rng(rng)
    blocks = np.diff(np.concatenate([[0], d_ks.astype(float)]))  # new components per step
    norms = np.sqrt(rng.chisquare(blocks))  # (len(d_ks),): ||q_block||
    b = rng.standard_normal((n_keys, d_ks.size)).T  # (len(d_ks), n_keys); key j's draws come j-th
    return np.cumsum(norms[:, None] * b, axis=0)


class WeightStats(NamedTuple):
    """Per row of logits: the largest softmax weight, the entropy (nats), and ``exp(entropy)``."""

    max_weight: np.ndarray
    entropy: np.ndarray
    effective_keys: np.ndarray


def weight_stats(logits) -> WeightStats:
    """How peaked ``softmax(logits)`` is, row by row, computed stably from the logits.

    ``entropy = -sum_i p_i log p_i`` uses ``log p_i = z_i - logsumexp(z)``, which is exact
    even where ``p_i`` underflows to 0; a term with ``p_i = 0`` contributes 0 (its limit), also
    when the gap to the largest logit overflows (logits near +-1e308). ``effective_keys = exp(entropy)`` runs from 1
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
    >>> float(weight_stats([1e308, -1e308]).entropy)  # the gap overflows to inf: still one-hot
    0.0
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(..., n)")
    if z.shape[-1] == 0:
        raise ValueError("logits must have at least one entry along the last axis")
    with np.errstate(over="ignore"):  # a gap beyond the float range becomes -inf: weight exactly 0
        shifted = z - z.max(axis=-1, keepdims=True)  # <= 0, the top entry is 0
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)  # >= 1
    p = e / total
    log_p = shifted - np.log(total)
    terms = np.where(p > 0, p * np.where(p > 0, log_p, 0.0), 0.0)  # 0 log 0 = 0
    h = np.maximum(-terms.sum(axis=-1), 0.0)
    return WeightStats(p.max(axis=-1), h, np.exp(h))


class SaturationCurves(NamedTuple):
    """Monte Carlo curves against ``d_k`` (each an :class:`MCEstimate` over queries)."""

    d_k: np.ndarray
    max_weight: MCEstimate
    entropy: MCEstimate
    effective_keys: MCEstimate


def saturation_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> SaturationCurves:
    """Average largest weight, entropy and ``exp(entropy)`` of one query's softmax, against ``d_k``.

    For each ``d_k`` in ``d_ks``, ``n_queries`` independent queries meet ``n_keys`` keys
    each (components N(0, 1)); logits ``c (q . k_j)`` with ``c = scale_factor(scale, d_k)``.
    The key directions ``a`` are drawn once and shared by every ``d_k`` (common random
    numbers: smooth curves), the query norms afresh per ``d_k``. The same ``rng`` seed gives
    every scale the same draws.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Queries per ``d_k``, >= 2.
    scale : None, str or float > 0
        ``None``/``"sqrt"``: divide by ``sqrt(d_k)``; ``"unscaled"``; ``"inv_d"``; or a factor.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    SaturationCurves
        ``d_k`` (the given values) and one :class:`MCEstimate` per quantity, each field of
        shape ``(len(d_ks),)``.

    Examples
    --------
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scale="unscaled", rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # unscaled: from spread out to nearly one-hot
    [0.3, 0.98]
    >>> c = saturation_curves([1, 4096], n_keys=8, n_queries=2000, scale="sqrt", rng=0)
    >>> c.max_weight.mean.round(2).tolist()  # scaled: far from one-hot at every d_k
    [0.3, 0.36]
    """
    d_ks, n_queries, rng, a = _curve_draws(d_ks, n_keys, n_queries, rng)
    stats = []
    for d_k in d_ks.tolist():
        c = scale_factor(scale, d_k)
        norm_q = np.sqrt(rng.chisquare(float(d_k), n_queries))  # (n_queries,)
        stats.append(weight_stats((c * norm_q)[:, None] * a))
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
    # ||J||_F is of the order of 1 - max p: work in units of 2**e ~ 1 - max p (exact), or squares of
    # weights below 1e-154 would underflow to 0 (e = 0 unless 1 - max p < 1/2: the same bits as without)
    e = np.frexp(rest)[1]
    rest_sq = (np.ldexp(others, -e) ** 2).sum(axis=-1, keepdims=True)  # sum of p_j^2 over j != top, / 4**e
    sq = (p**2).sum(axis=-1, keepdims=True)
    one_minus = np.where(is_top, np.ldexp(rest, -e), 1.0 - p)
    sq_others = np.where(is_top, rest_sq, sq - p**2)  # no cancellation: the top term stays in
    lead = np.where(is_top, p, np.ldexp(others, -e))  # every term of the sum carries one factor 4**-e
    total = (lead**2 * one_minus**2).sum(axis=-1) + (lead**2 * sq_others).sum(axis=-1)
    return np.ldexp(np.sqrt(total), e[..., 0])


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
    # J g is linear in g: work with g / max|g| so that gaps g_i - g_j cannot overflow at any magnitude
    e = binary_exponent(np.max(np.abs(g), axis=-1, keepdims=True))
    g = np.ldexp(g, -e)  # exact (a power of two): the same rounding as without the rescaling
    centred = g - (p * g).sum(axis=-1, keepdims=True)  # g_i - p . g
    top = _top_index(p)
    g_top = np.take_along_axis(g, top, axis=-1)  # (..., 1)
    centred_top = (p * (g_top - g)).sum(axis=-1, keepdims=True)  # sum_j p_j (g_top - g_j)
    np.put_along_axis(centred, top, centred_top, axis=-1)
    return np.ldexp(p * centred, e)


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


def gradient_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> GradientCurves:
    """How much gradient one query's softmax passes back, against ``d_k``.

    The loss reaches the weights as ``g = dL/dp ~ N(0, I)``. The chain rule gives
    ``dL/dz = J g`` and, with ``z_j = c (q . k_j)``, ``dL/dq = c sum_j (dL/dz_j) k_j``.
    Writing ``k_j = a_j q/||q|| + k_j_perp`` (``k_j_perp`` orthogonal to ``q``, independent
    of the logits), ``||K^T v||^2 = (a . v)^2 + ||v||^2 chi^2(d_k - 1)`` exactly, so no
    ``d_k``-long vector is drawn. Draws are shared across ``d_k`` and between the scales of
    one seed, as in :func:`saturation_curves`.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1.
    n_keys : int
        Keys per query, >= 1.
    n_queries : int
        Queries per ``d_k``, >= 2.
    scale : None, str or float > 0
        ``None``/``"sqrt"``: divide by ``sqrt(d_k)``; ``"unscaled"``; ``"inv_d"``; or a factor.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    GradientCurves
        Each field of shape ``(len(d_ks),)``.

    Examples
    --------
    >>> u = gradient_curves([1, 4096], 8, 2000, scale="unscaled", rng=0)
    >>> s = gradient_curves([1, 4096], 8, 2000, scale="sqrt", rng=0)
    >>> bool(u.jacobian_norm.median[1] < 1e-6 < 0.1 < s.jacobian_norm.median[1])
    True
    """
    d_ks, n_queries, rng, a = _curve_draws(d_ks, n_keys, n_queries, rng)
    g = rng.standard_normal(a.shape)  # upstream gradient dL/dp
    rows = []
    for d_k in d_ks.tolist():
        c = scale_factor(scale, d_k)
        norm_q = np.sqrt(rng.chisquare(float(d_k), n_queries))  # (n_queries,)
        perp = rng.chisquare(float(d_k - 1), n_queries) if d_k > 1 else np.zeros(n_queries)
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
    if np.any(z + h == z) or np.any(z - h == z):
        j = int(np.argmax((z + h == z) | (z - h == z)))
        raise ValueError(f"h = {h:g} is below the spacing of floats at z[{j}] = {z[j]:g}: z + h rounds to z; "
                         f"use h of at least {np.spacing(abs(z[j])):.3g}")
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        up = np.asarray(f(z + step), dtype=float)
        down = np.asarray(f(z - step), dtype=float)
        columns.append((up - down) / (2 * h))
    return np.stack(columns, axis=-1)


def one_minus_max(p) -> np.ndarray:
    """``1 - max_i p_i`` of probability vectors, summed from the other entries (accurate near one-hot).

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors summing to 1.

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> one_minus_max([[0.7, 0.2, 0.1], [0.5, 0.5, 0.0]]).round(12).tolist()
    [0.3, 0.5]
    >>> float(one_minus_max([1.0, 1e-30]))  # 1.0 - 1.0 would give 0
    1e-30
    """
    p = _checks.probabilities("p", p)
    return np.where(np.arange(p.shape[-1]) == _top_index(p), 0.0, p).sum(axis=-1)


class JacobianPanels(NamedTuple):
    """Softmax Jacobians of one query at a few ``d_k``, one row per scale (what a heatmap grid draws).

    - ``d_k``: shape (m,);
    - ``scales``: the scales, one per row (names from :data:`sdpa_helpers.scales.SCALINGS` or factors);
    - ``weights``: ``p = softmax(c z)``, shape (len(scales), m, n);
    - ``jacobian``: ``J = diag(p) - p p^T``, shape (len(scales), m, n, n);
    - ``frobenius``: ``||J||_F`` by :func:`jacobian_frobenius` (accurate even where ``J``'s top
      diagonal entry ``p (1 - p)`` rounds to 0), shape (len(scales), m).
    """

    d_k: np.ndarray
    scales: tuple
    weights: np.ndarray
    jacobian: np.ndarray
    frobenius: np.ndarray


def jacobian_panels(d_ks, logits, scales=("unscaled", "sqrt")) -> JacobianPanels:
    """The softmax, its Jacobian and the Jacobian's Frobenius norm for one query at each ``d_k`` and scale.

    Parameters
    ----------
    d_ks : sequence of int
        The ``d_k`` values, each >= 1, shape (m,).
    logits : array_like, shape (m, n)
        Row ``i``: the unscaled logits ``q . k_j`` at ``d_ks[i]`` (for example from :func:`prefix_logits`).
    scales : sequence
        Each a scale (``None``, a name or a positive factor, see :func:`sdpa_helpers.scales.scale_factor`).

    Returns
    -------
    JacobianPanels

    Examples
    --------
    >>> panels = jacobian_panels([1, 4], [[0.0, 0.0], [0.0, 2.0]])
    >>> panels.jacobian[0, 0].tolist()  # unscaled, d_k = 1: p = (1/2, 1/2)
    [[0.25, -0.25], [-0.25, 0.25]]
    >>> panels.weights[1, 1].round(4).tolist()  # scaled, d_k = 4: softmax of (0, 1)
    [0.2689, 0.7311]
    """
    d_ks = _check_d_ks(d_ks)
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
    with np.errstate(over="ignore"):  # a gap beyond the float range: -inf, weight exp(-inf) = 0
        e = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    J = p[..., :, None] * (np.eye(z.shape[1]) - p[..., None, :])  # p_i (delta_ij - p_j)
    return JacobianPanels(d_ks, tuple(scales), p, J, jacobian_frobenius(p))


def _check_sigma2(sigma2) -> np.ndarray:
    s2 = _checks.real_array("sigma2", sigma2)
    if np.any(s2 < 0):
        raise ValueError(f"sigma2 (a variance) must be >= 0, got {s2.min()}")
    return s2


def entropy_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """Entropy (nats) of the softmax of ``n_keys`` i.i.d. N(0, sigma2) logits, for large n: ``ln n - sigma2/2``.

    Derivation: ``H = ln Z - sum_j p_j z_j`` with ``Z = sum_j e^{z_j}``. For large ``n`` both
    sums are close to ``n`` times their means, ``E e^z = e^{sigma2/2}`` and
    ``E[z e^z] = sigma2 e^{sigma2/2}``, so ``ln Z ~ ln n + sigma2/2`` and
    ``sum_j p_j z_j ~ sigma2``. That needs ``Var(Z)/(E Z)^2 = (e^{sigma2} - 1)/n`` to be small:
    the law holds for about ``sigma2 <~ ln n`` (:func:`saturation_onset`); beyond it a few of the
    largest logits (the largest near ``sigma sqrt(2 ln n)``) carry the sums and the law undershoots
    (it reaches 0 at ``sigma2 = 2 ln n`` while the true entropy is still a few nats; as
    ``n -> infinity`` it holds to leading order in ``ln n`` up to there, the random energy model).

    Parameters
    ----------
    n_keys : int
        Number of logits, >= 1.
    sigma2 : float or array_like of float >= 0
        Variance of each logit.

    Returns
    -------
    ndarray, the shape of ``sigma2``

    Examples
    --------
    >>> float(entropy_closed_form(1024, 1.0).round(4))  # ln 1024 - 1/2
    6.4315
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    return np.log(n_keys) - _check_sigma2(sigma2) / 2


def effective_keys_closed_form(n_keys: int, sigma2) -> np.ndarray:
    """``exp`` of :func:`entropy_closed_form`: ``n e^{-sigma2/2}`` effective keys (same range of validity).

    >>> float(effective_keys_closed_form(16, 2 * np.log(2)).round(6))  # sigma2 = 2 ln 2 halves the keys
    8.0
    """
    return np.exp(entropy_closed_form(n_keys, sigma2))


def saturation_onset(n_keys) -> np.ndarray:
    """The logit variance ``ln n`` that the course calls the onset of saturation for ``n`` keys.

    A chosen definition, not a sharp threshold (saturation sets in gradually): there
    :func:`entropy_closed_form` gives ``H = (ln n)/2``, half the entropy of the uniform
    softmax is gone and ``exp(H) = sqrt(n)`` keys are in play; it is also about where that law
    stops holding. At initialisation, with independent unit-variance components, the unscaled
    logits of one query are i.i.d. N(0, ||q||^2) given ``q``, with ``||q||^2 ~ d_k``, so they reach
    it at ``d_k ~ ln n``: the onset grows with the number of keys, but only like its log.

    Parameters
    ----------
    n_keys : int or array_like of int >= 1

    Returns
    -------
    ndarray, the shape of ``n_keys``

    >>> saturation_onset([16, 1024]).round(3).tolist()
    [2.773, 6.931]
    """
    n = _checks.real_array("n_keys", n_keys)
    if np.any(n < 1):
        raise ValueError(f"n_keys must be >= 1, got {n.min()}")
    return np.log(n)


def iid_entropy(n_keys: int, sigma2, n_rows: int, seeds) -> np.ndarray:
    """Monte Carlo entropy of the softmax of ``n_keys`` i.i.d. N(0, sigma2) logits: one mean per seed.

    Parameters
    ----------
    n_keys : int
        Logits per row, >= 1.
    sigma2 : array_like of float >= 0, shape (m,)
        Variances; every variance of one seed reuses the same standard normals (scaled by sigma).
    n_rows : int
        Rows averaged per seed, >= 1.
    seeds : sequence of int
        One independent run per seed.

    Returns
    -------
    ndarray, shape (len(seeds), m)
        The mean entropy (nats) over ``n_rows`` rows, per seed and variance.

    Examples
    --------
    >>> h = iid_entropy(1024, [1.0], 500, seeds=[0, 1])
    >>> bool(np.all(np.abs(h - entropy_closed_form(1024, 1.0)) < 0.01))
    True
    """
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_rows = _checks.positive_int("n_rows", n_rows)
    s2 = np.atleast_1d(_check_sigma2(sigma2))
    if s2.ndim != 1:
        raise ValueError(f"sigma2 must be a number or a 1-D sequence, got shape {s2.shape}")
    seeds = [_checks.positive_int("each seed + 1", seed + 1) - 1 if isinstance(seed, (int, np.integer))
             and not isinstance(seed, bool) else _checks.positive_int("each seed", seed) for seed in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    out = np.empty((len(seeds), s2.size))
    for i, seed in enumerate(seeds):
        x = make_rng(seed).standard_normal((n_rows, n_keys))  # (n_rows, n_keys)
        for j, v in enumerate(s2.tolist()):
            out[i, j] = weight_stats(np.sqrt(v) * x).entropy.mean()
    return out


def temperature_curves(logits, temperatures):
    """``softmax(logits / T)`` at each temperature, and its :class:`WeightStats`.

    Parameters
    ----------
    logits : array_like, shape (n,)
    temperatures : array_like of float > 0, shape (m,)

    Returns
    -------
    weights : ndarray, shape (m, n)
    stats : WeightStats
        Fields of shape (m,).

    Examples
    --------
    >>> w, s = temperature_curves([0.0, 1.0], [1.0, 1e-9])
    >>> w.round(4).tolist(), s.max_weight.round(4).tolist()
    ([[0.2689, 0.7311], [0.0, 1.0]], [0.7311, 1.0])
    """
    z = _checks.real_array("logits", logits, min_ndim=1, shape_hint="(n,)")
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"logits must have shape (n,) with n >= 1, got {z.shape}")
    t = np.atleast_1d(_checks.real_array("temperatures", temperatures))
    if t.ndim != 1 or np.any(t <= 0):
        raise ValueError("temperatures must be a 1-D sequence of numbers > 0")
    with np.errstate(over="ignore"):
        scaled = z[None, :] / t[:, None]  # (m, n); a logit / tiny T may overflow to +-inf
    if not np.all(np.isfinite(scaled)):
        raise ValueError("logits / temperatures overflows: use larger temperatures or smaller logits")
    stats = weight_stats(scaled)
    shifted = scaled - scaled.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True), stats
