"""The attention mechanism in numpy: softmax, its Jacobian, entropy, scores, SDPA, masks.

This module offers:

- :func:`softmax` -- numerically stable at any finite logits; ``-inf`` gets weight 0;
- :func:`softmax_jacobian` -- ``diag(p) - p p^T``;
- :func:`entropy` -- in nats, with ``0 log 0 = 0``;
- :func:`attention_scores` -- ``scale * Q @ K^T`` (``scale`` defaults to ``1/sqrt(d_k)``);
- :func:`scaled_dot_product_attention` -- ``softmax(scale * Q K^T, masked) @ V``;
- :func:`causal_mask` -- True on and below the diagonal;
- :func:`layer_norm` -- zero mean, unit variance along an axis (no learned gain/bias).

Every function gives the right number for inputs in the course's range (entries within
+-1e100, d_k <= 2**20: see :mod:`sdpa_helpers._checks`), and a ValueError naming the
parameter outside it. The formulas are the plain ones; the checks sit at the edge.

Shapes follow the paper: ``Q`` is ``(..., n_q, d_k)``, ``K`` is ``(..., n_k, d_k)``,
``V`` is ``(..., n_k, d_v)``; leading dimensions broadcast. A boolean ``mask`` uses
PyTorch's ``attn_mask`` meaning: True means "may attend".
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .scales import scale_factor

__all__ = [
    "softmax",
    "softmax_jacobian",
    "entropy",
    "attention_scores",
    "scaled_dot_product_attention",
    "causal_mask",
    "layer_norm",
    "random_attention_weights",
]


def softmax(x: ArrayLike, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Softmax of ``x / temperature`` along ``axis``.

    Subtracting the maximum first keeps every exponent <= 0, so no finite input
    overflows (logits of 1e6 are fine). ``-inf`` entries get weight exactly 0; a
    slice that is ``-inf`` throughout has no defined softmax and raises.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Logits: finite numbers or ``-inf``.
    axis : int
        Axis to normalise over.
    temperature : float
        ``T > 0``; the softmax of ``x / T``. Large ``T`` flattens, small ``T`` sharpens.

    Returns
    -------
    ndarray, same shape as ``x``
        Non-negative, summing to 1 along ``axis``.

    Examples
    --------
    >>> softmax([4.0, 5.0]).round(4).tolist()
    [0.2689, 0.7311]
    >>> softmax([1e6, 0.0]).tolist()
    [1.0, 0.0]
    >>> softmax([0.0, -np.inf]).tolist()
    [1.0, 0.0]
    """
    arr = _checks.real_array("x", x, min_ndim=1, allow_neg_inf=True, shape_hint="(..., n)", bounded=False)
    axis = _checks.axis_index("axis", axis, arr.ndim)
    temperature = _checks.positive("temperature", temperature)
    if arr.shape[axis] == 0:
        raise ValueError("x must have at least one entry along axis")
    top = arr.max(axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError("x has a slice that is -inf throughout; softmax needs at least one finite logit")
    # Under error settings of its own: a learner's np.seterr(all="raise") must not turn the
    # underflow of exp(very negative) to 0 -- the right weight -- into a FloatingPointError.
    with np.errstate(over="ignore", under="ignore", divide="warn", invalid="warn"):
        z = (arr - top) / temperature  # <= 0 everywhere; may round to -inf, which exp maps to 0
        e = np.exp(z)
        return e / e.sum(axis=axis, keepdims=True)


def softmax_jacobian(p: ArrayLike) -> np.ndarray:
    """Jacobian of the softmax, ``J[i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors (the softmax output), each summing to 1.

    Returns
    -------
    ndarray, shape (..., n, n)
        ``diag(p) - p p^T``; symmetric, rows and columns sum to 0.

    Examples
    --------
    >>> softmax_jacobian([0.5, 0.5]).tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    >>> softmax_jacobian([1.0, 0.0]).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    probs = _checks.probabilities("p", p)
    with np.errstate(under="ignore"):  # p_i p_j of tiny weights underflows to 0: right, whatever np.seterr says
        outer = probs[..., :, None] * probs[..., None, :]  # (..., n, 1) * (..., 1, n) -> (..., n, n)
        return np.einsum("...i,ij->...ij", probs, np.eye(probs.shape[-1])) - outer


def entropy(p: ArrayLike, axis: int = -1) -> np.ndarray:
    """Shannon entropy ``-sum p log p`` in nats, with ``0 log 0 = 0``.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors along ``axis``.
    axis : int
        Axis holding the probabilities.

    Returns
    -------
    ndarray or float, shape of ``p`` without ``axis``
        Between 0 (one-hot) and ``log n`` (uniform).

    Examples
    --------
    >>> float(entropy([1.0, 0.0]))
    0.0
    >>> bool(np.isclose(entropy([0.25] * 4), np.log(4)))
    True
    """
    arr = _checks.real_array("p", p, min_ndim=1, shape_hint="(..., n)")
    axis = _checks.axis_index("axis", axis, arr.ndim)
    arr = _checks.probabilities("p", arr, axis=axis)
    safe = np.where(arr > 0, arr, 1.0)  # log 1 = 0 makes 0 log 0 = 0
    with np.errstate(under="ignore"):  # p log p of a tiny p underflows to 0: right, whatever np.seterr says
        h = -(arr * np.log(safe)).sum(axis=axis)
    return np.maximum(h, 0.0)


def _matrices(Q_in: ArrayLike, K_in: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Q and K as float arrays of compatible shapes, or a ValueError/TypeError naming them."""
    Q = _checks.real_array("Q", Q_in, min_ndim=2, shape_hint="(..., n_q, d_k)")
    K = _checks.real_array("K", K_in, min_ndim=2, shape_hint="(..., n_k, d_k)")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q has d_k={Q.shape[-1]} but K has d_k={K.shape[-1]}")
    if Q.shape[-1] == 0:
        raise ValueError("d_k must be a positive integer, got 0 (Q and K have no columns)")
    if K.shape[-2] == 0:
        raise ValueError("K must have at least one key (n_k >= 1)")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"leading (batch) dimensions of Q {Q.shape[:-2]} and K {K.shape[:-2]} "
                         "do not broadcast") from None
    return Q, K


def _values(Q: np.ndarray, K: np.ndarray, V_in: ArrayLike) -> np.ndarray:
    """V as a float array whose rows match the keys, or a ValueError/TypeError naming it."""
    V = _checks.real_array("V", V_in, min_ndim=2, shape_hint="(..., n_k, d_v)")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(f"K has n_k={K.shape[-2]} rows but V has {V.shape[-2]}; "
                         "each key needs one value")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(f"leading (batch) dimensions of Q {Q.shape[:-2]}, K {K.shape[:-2]} and "
                         f"V {V.shape[:-2]} do not broadcast") from None
    return V


def attention_scores(Q: ArrayLike, K: ArrayLike, scale: float | str | None = None) -> np.ndarray:
    """The logits ``scale * Q @ K^T``: every query dotted with every key.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    scale : float > 0, a name from :data:`sdpa_helpers.scales.SCALINGS`, or None
        ``None`` (or ``"sqrt"``) means ``1 / sqrt(d_k)`` (scaled attention); ``1.0`` (or
        ``"unscaled"``) is unscaled; see :func:`sdpa_helpers.scales.scale_factor`.
        A score beyond the largest float raises ValueError naming Q and K.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)

    Examples
    --------
    >>> Q = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> K = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    >>> attention_scores(Q, K, scale=1.0).tolist()
    [[1.0, 10.0]]
    >>> attention_scores(Q, K).tolist()  # divided by sqrt(4) = 2
    [[0.5, 5.0]]
    """
    q, k = _matrices(Q, K)
    return scale_factor(scale, q.shape[-1]) * (q @ np.swapaxes(k, -1, -2))  # (..., n_q, d_k) @ (..., d_k, n_k)


def scaled_dot_product_attention(Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None,
                                 scale: float | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(scale * Q K^T, masked) @ V``: the paper's scaled dot-product attention.

    Steps: MatMul (``Q K^T``), Scale, Mask (optional: disallowed logits become ``-inf``),
    SoftMax over the keys, MatMul with ``V``.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
    mask : bool array_like broadcastable to (..., n_q, n_k), optional
        True where the query may attend to the key (PyTorch's boolean ``attn_mask``).
        Every query must keep at least one key.
    scale : float > 0, a name from :data:`sdpa_helpers.scales.SCALINGS`, or None
        ``None`` means ``1 / sqrt(d_k)``; ``1.0`` is unscaled (as in :func:`attention_scores`).

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
    weights : ndarray, shape (..., n_q, n_k)
        Rows sum to 1; masked entries are exactly 0.

    Examples
    --------
    >>> Q = np.zeros((2, 3)); K = np.ones((2, 3)); V = np.array([[1.0], [3.0]])
    >>> out, w = scaled_dot_product_attention(Q, K, V)
    >>> out.tolist(), w.tolist()
    ([[2.0], [2.0]], [[0.5, 0.5], [0.5, 0.5]])
    >>> out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(2))
    >>> out.tolist(), w.tolist()
    ([[1.0], [2.0]], [[1.0, 0.0], [0.5, 0.5]])
    """
    q, k = _matrices(Q, K)
    v = _values(q, k, V)
    scores = q @ np.swapaxes(k, -1, -2)  # 1. MatMul: (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    logits = scale_factor(scale, q.shape[-1]) * scores  # 2. Scale
    if mask is not None:  # 3. Mask (optional): a key a query may not see gets logit -inf
        allowed = np.asarray(mask)
        if allowed.dtype != bool:
            raise TypeError(f"mask must be a boolean array (True = may attend), got dtype {allowed.dtype}")
        try:
            allowed = np.broadcast_to(allowed, np.broadcast_shapes(allowed.shape, logits.shape))
            logits = np.broadcast_to(logits, allowed.shape)
        except ValueError:
            raise ValueError(f"mask of shape {allowed.shape} does not broadcast to the scores' shape "
                             f"{logits.shape} (..., n_q, n_k)") from None
        empty = ~allowed.any(axis=-1)
        if empty.any():
            rows = np.argwhere(empty)[:5].tolist()
            raise ValueError(f"mask leaves query row(s) {rows} with no key to attend to; "
                             "every query needs at least one True in its mask row")
        logits = np.where(allowed, logits, -np.inf)
    weights = softmax(logits, axis=-1)  # 4. SoftMax over the keys: (..., n_q, n_k)
    with np.errstate(under="ignore"):  # tiny weights times values may underflow to 0: right
        output = weights @ v  # 5. MatMul: (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)
    return output, weights


def causal_mask(n_q: int, n_k: int | None = None) -> np.ndarray:
    """Boolean mask, True on and below the diagonal: query ``i`` may attend to keys ``j <= i``.

    Parameters
    ----------
    n_q : int
        Number of queries.
    n_k : int, optional
        Number of keys; defaults to ``n_q``.

    Returns
    -------
    ndarray of bool, shape (n_q, n_k)

    Examples
    --------
    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    n_q = _checks.positive_int("n_q", n_q)
    n_k = n_q if n_k is None else _checks.positive_int("n_k", n_k)
    return np.tril(np.ones((n_q, n_k), dtype=bool))


def _centred(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``(x - mean, mean of its squares)`` along ``axis``, the mean corrected where it matters.

    The rounded mean of entries a few ulps apart can be off by half an ulp, as large as the
    spread itself (``[1, 1 + 2**-52]`` has the mean ``1 + 2**-53``, which rounds to 1). The
    residuals ``c = x - mean`` are exact there, and their own mean restores the lost half ulp
    (the corrected two-pass algorithm of Chan, Golub and LeVeque). Where the correction moves
    the result by less than 2**-40 (relative) it is skipped: ordinary inputs keep the bits of
    the plain formula ``(x - x.mean()) / sqrt(x.var() + eps)``.
    """
    c = x - x.mean(axis=axis, keepdims=True)
    var = np.mean(c * c, axis=axis, keepdims=True)
    shift = c.mean(axis=axis, keepdims=True)
    matters = np.abs(shift) > 2.0**-40 * np.sqrt(var)
    if matters.any():
        c = np.where(matters, c - shift, c)
        var = np.where(matters, np.mean(c * c, axis=axis, keepdims=True), var)
    return c, var


def layer_norm(x: ArrayLike, axis: int = -1, eps: float = 1e-5) -> np.ndarray:
    """Normalise ``x`` to mean 0 and variance 1 along ``axis`` (no learned gain or bias).

    ``(x - mean) / sqrt(var + eps)`` with the population variance, as in LayerNorm. The mean
    is corrected once (see :func:`_centred`), so entries one ulp apart are normalised exactly
    too: ``layer_norm([1, 1 + 2**-52], eps=0)`` is ``[-1, 1]``. With ``eps=0`` a slice whose
    variance is 0 (or below the float range: spreads under about 1e-154) raises ValueError.

    Parameters
    ----------
    x : array_like, shape (..., d)
    axis : int
        Axis to normalise (the features).
    eps : float >= 0
        Added to the variance for stability.

    Returns
    -------
    ndarray, same shape as ``x``

    Examples
    --------
    >>> y = layer_norm([[1.0, 2.0, 3.0, 4.0]], eps=0.0)
    >>> round(float(y.mean()), 12), round(float(y.var()), 12)
    (0.0, 1.0)
    """
    arr = _checks.real_array("x", x, min_ndim=1, shape_hint="(..., d)")
    axis = _checks.axis_index("axis", axis, arr.ndim)
    eps = _checks.non_negative("eps", eps)
    if arr.shape[axis] == 0:
        raise ValueError("x must have at least one entry along axis")
    if eps == 0 and (arr.max(axis=axis) == arr.min(axis=axis)).any():
        raise ValueError("x has a constant slice and eps=0: its variance is 0, so it cannot be normalised")
    with np.errstate(under="ignore"):  # squares of tiny deviations may underflow to 0
        centred, var = _centred(arr, axis)
    if eps == 0 and (var == 0).any():
        raise ValueError("x has a slice whose variance underflows to 0 and eps=0: it cannot be normalised")
    return centred / np.sqrt(var + eps)


def random_attention_weights(d_k: int, length: int, seed: int, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Unscaled and scaled attention weights of random unit-variance ``Q``, ``K``; cached, read-only.

    ``Q`` and ``K`` are ``(length, d_k)`` standard normal draws from ``seed``; the weights are
    ``softmax(Q K^T)`` and ``softmax(Q K^T / sqrt(d_k))``, with a causal mask if ``causal``.
    Notebook 07's AttentionMapExplorer shows them. The arguments are checked before the cache
    sees them (an unhashable seed is a clear TypeError, not "unhashable type").

    >>> u, s = random_attention_weights(64, 8, 0, True)
    >>> u.shape, bool((u[0, 1:] == 0).all())
    ((8, 8), True)
    """
    d_k = _checks.d_k("d_k", d_k)
    length = _checks.positive_int("length", length)
    seed = _checks.seed("seed", seed)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    return _random_attention_weights(d_k, length, seed, bool(causal))


@lru_cache(maxsize=512)  # at most 512 pairs of (length, length) arrays, length <= a few dozen in practice
def _random_attention_weights(d_k: int, length: int, seed: int, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((2, length, d_k))  # (length, d_k) each
    V = np.zeros((length, 1))  # the weights do not depend on V
    mask = causal_mask(length) if causal else None
    unscaled = scaled_dot_product_attention(Q, K, V, mask=mask, scale=1.0)[1]
    scaled = scaled_dot_product_attention(Q, K, V, mask=mask)[1]
    unscaled.flags.writeable = False
    scaled.flags.writeable = False
    return unscaled, scaled
