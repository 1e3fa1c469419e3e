"""Vanishing gradients through the softmax (notebook 06), by formula and by Monte Carlo: numpy only.

The softmax Jacobian ``J = diag(p) - p p^T`` and what it passes back: its Frobenius norm
computed accurately near one-hot, the gradient ``J g`` reaching the logits, the gradient
reaching the query, their distribution over random queries against ``d_k`` (unscaled vs
scaled), one query's Jacobians for heatmaps, the choice of a *typical* query for the
explorer, and central finite differences -- the course's one numerical derivative, which
checks every Jacobian and gradient (also :mod:`sdpa_helpers.training`'s backward pass).

Random queries and keys are drawn as in :mod:`sdpa_helpers.sampling` (all components
independent N(0, 1), the exact chi-square shortcut); ``scale`` arguments follow
:func:`sdpa_helpers.scales.scale_factor`; the softmax is :func:`sdpa_helpers.attention.softmax`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import _checks
from .attention import softmax
from .sampling import MCEstimate, check_d_k, check_d_ks, chi_norms, curve_draws, mc_estimate, prefix_logits
from .scales import scale_factor

__all__ = [
    "jacobian_frobenius", "logit_gradient", "one_minus_max",
    "GradientSamples", "gradient_samples", "GradientCurves", "gradient_curves",
    "finite_difference_jacobian", "JacobianPanels", "jacobian_panels", "typical_query_seed",
]


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
    return _frobenius(_checks.probabilities("p", p))


def _frobenius(p: np.ndarray) -> np.ndarray:
    """:func:`jacobian_frobenius` of checked probabilities (nested calls trust their inputs)."""
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
    return _logit_gradient(p, g)


def _logit_gradient(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """:func:`logit_gradient` of checked, broadcast ``p`` and ``g`` (nested calls trust their inputs)."""
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
    """How much gradient the softmax of each of ``n_queries`` random queries passes back, at each ``d_k``.

    The loss reaches the weights as ``g = dL/dp ~ N(0, I)``. The chain rule gives
    ``dL/dz = J g`` and, with ``z_j = c (q . k_j)``, ``dL/dq = c sum_j (dL/dz_j) k_j``.
    Writing ``k_j = a_j q/||q|| + k_j_perp`` (``k_j_perp`` orthogonal to ``q``, independent
    of the logits), ``||K^T v||^2 = (a . v)^2 + ||v||^2 chi^2(d_k - 1)`` exactly, so no
    ``d_k``-long vector is drawn. The key directions ``a`` and ``g`` are drawn once and shared by
    every ``d_k`` (common random numbers), the query norms afresh per ``d_k``; the same seed gives
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
    GradientSamples
        ``d_k`` and three arrays of shape ``(len(d_ks), n_queries)``.

    Examples
    --------
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
    """Monte Carlo curves against ``d_k`` (each an :class:`~sdpa_helpers.sampling.MCEstimate` over queries).

    - ``jacobian_norm``: ``||J||_F`` with ``J = diag(p) - p p^T``;
    - ``logit_grad_norm``: ``||dL/dz|| = ||J g||`` for an upstream ``g ~ N(0, I)``;
    - ``query_grad_norm``: ``||dL/dq|| = ||c K^T (J g)||`` (``c`` the scale, ``K`` the keys).
    """

    d_k: np.ndarray
    jacobian_norm: MCEstimate
    logit_grad_norm: MCEstimate
    query_grad_norm: MCEstimate


def gradient_curves(d_ks, n_keys: int, n_queries: int, scale=None, rng=None) -> GradientCurves:
    """Mean, standard error and median over queries of :func:`gradient_samples`, against ``d_k``.

    Same parameters as :func:`gradient_samples`; each field of the result has shape ``(len(d_ks),)``.

    Examples
    --------
    >>> u = gradient_curves([1, 4096], 8, 2000, scale="unscaled", rng=0)
    >>> s = gradient_curves([1, 4096], 8, 2000, scale="sqrt", rng=0)
    >>> bool(u.jacobian_norm.median[1] < 1e-6 < 0.1 < s.jacobian_norm.median[1])
    True
    """
    samples = gradient_samples(d_ks, n_keys, n_queries, scale=scale, rng=rng)
    return GradientCurves(samples.d_k, *(mc_estimate(x, axis=1) for x in samples[1:]))


def finite_difference_jacobian(f: Callable, z, h: float = 1e-5, *, z_name: str = "z") -> np.ndarray:
    """Derivative of ``f`` at ``z`` by central differences: ``(f(z + h e_j) - f(z - h e_j)) / 2h`` per entry.

    The course's one numerical derivative: the Jacobian of a vector function (notebook 06), and the
    gradient of a scalar loss with respect to a weight matrix (:mod:`sdpa_helpers.training`). The
    error per entry is ``h^2/6`` times a third derivative (truncation) plus about ``eps/h``
    (rounding), so ``h`` near ``1e-5`` balances the two for well-scaled ``f``.

    Parameters
    ----------
    f : callable
        Maps an array of the shape of ``z`` to a number or an array.
    z : array_like, shape (n,) or any shape
        The point (at least one entry).
    h : float > 0
        The step; it must move every entry of ``z`` (a ValueError otherwise).
    z_name : str
        The caller's name of ``z``, for error messages.

    Returns
    -------
    ndarray, shape ``f(z).shape + z.shape``
        For ``z`` of shape (n,) and ``f(z)`` of shape (m,): column ``j`` is the derivative with
        respect to ``z_j``. For a scalar ``f``: the gradient, shaped like ``z``.

    Examples
    --------
    >>> J = finite_difference_jacobian(lambda x: np.array([x[0] * x[1], x[0] ** 2]), [2.0, 3.0])
    >>> J.round(6).tolist()
    [[3.0, 2.0], [4.0, 0.0]]
    >>> finite_difference_jacobian(lambda W: float((W ** 3).sum()), [[1.0, 2.0]]).round(6).tolist()
    [[3.0, 12.0]]
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
    """The seed, among ``seeds``, of the query whose ``||J||_F`` is closest to the median at ``d_k``: a typical query.

    Each seed draws one query and ``n_keys`` keys as :func:`prefix_logits` ``(d_ks, n_keys, rng=seed)``
    does (the explorer's draw). At each ``d_k`` asked for, the seeds are ranked by their Jacobian
    norm under ``scale`` (percentile 0 to 100); the seed whose percentiles are closest to 50, summed
    over those ``d_k``, is returned (the first one on a tie). For one ``d_k`` this is the median
    query (the lower middle for an even count). A first picture drawn from a typical query shows
    the rule, not a rare near tie.

    Parameters
    ----------
    d_ks : sequence of int
        The strictly increasing ``d_k`` values the draw is made at; every ``d_k`` must be one of them.
    d_k : int or sequence of int
        Where the queries are compared: one ``d_k`` or several (for example a figure's panels).
    n_keys : int
        Keys per query, >= 2.
    seeds : sequence of int
        Candidate seeds, at least one.
    scale : None, str or float > 0
        The scale whose ``||J||_F`` is compared (default unscaled).

    Returns
    -------
    int

    Examples
    --------
    >>> typical_query_seed([1, 64], 64, 8, seeds=range(5)) in range(5)
    True
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
