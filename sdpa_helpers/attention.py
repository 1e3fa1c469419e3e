"""The attention mechanism in numpy: softmax, its Jacobian, entropy, scores, SDPA, causal mask, layer norm.

Shapes follow the paper: ``Q`` (..., n_q, d_k), ``K`` (..., n_k, d_k), ``V`` (..., n_k, d_v), leading
dimensions broadcast; a boolean ``mask`` is True where a query may attend (PyTorch's ``attn_mask``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .scales import scale_factor

__all__ = ["softmax", "softmax_jacobian", "entropy", "attention_scores", "scaled_dot_product_attention",
           "causal_mask", "layer_norm", "random_attention_weights"]


def softmax(x: ArrayLike, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Softmax of ``x / temperature`` (T > 0) along ``axis``: same shape as ``x``, summing to 1.

    The maximum is subtracted first, so any finite logits work (1e6 too); ``-inf`` gets weight
    exactly 0, and a slice that is ``-inf`` throughout raises.

    >>> softmax([4.0, 5.0]).round(4).tolist()
    [0.2689, 0.7311]
    """
    arr = _checks.real_array("x", x, min_ndim=1, allow_neg_inf=True, shape_hint="(..., n)", bounded=False)
    axis = _checks.axis_index("axis", axis, arr.ndim)
    temperature = _checks.positive("temperature", temperature)
    if arr.shape[axis] == 0:
        raise ValueError("x must have at least one entry along axis")
    top = arr.max(axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError("x has a slice that is -inf throughout; softmax needs at least one finite logit")
    # Own error settings: a learner's np.seterr(all="raise") must not turn exp's underflow to 0 into an error.
    with np.errstate(over="ignore", under="ignore", divide="warn", invalid="warn"):
        z = (arr - top) / temperature  # <= 0 everywhere; may round to -inf, which exp maps to 0
        e = np.exp(z)
        return e / e.sum(axis=axis, keepdims=True)


def softmax_jacobian(p: ArrayLike) -> np.ndarray:
    """Jacobian of the softmax at probabilities ``p`` (..., n): ``diag(p) - p p^T``, shape (..., n, n).

    >>> softmax_jacobian([0.5, 0.5]).tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    probs = _checks.probabilities("p", p)
    with np.errstate(under="ignore"):  # p_i p_j of tiny weights underflows to 0: right, whatever np.seterr says
        outer = probs[..., :, None] * probs[..., None, :]  # (..., n, 1) * (..., 1, n) -> (..., n, n)
        return np.einsum("...i,ij->...ij", probs, np.eye(probs.shape[-1])) - outer


def entropy(p: ArrayLike, axis: int = -1) -> np.ndarray:
    """Entropy ``-sum p log p`` in nats (``0 log 0 = 0``) of probabilities along ``axis``: 0 ... log n.

    >>> float(entropy([1.0, 0.0])), bool(np.isclose(entropy([0.25] * 4), np.log(4)))
    (0.0, True)
    """
    arr = _checks.probabilities("p", p, axis=axis)
    safe = np.where(arr > 0, arr, 1.0)  # log 1 = 0 makes 0 log 0 = 0
    with np.errstate(under="ignore"):  # p log p of a tiny p underflows to 0: right, whatever np.seterr says
        h = -(arr * np.log(safe)).sum(axis=axis)
    return np.maximum(h, 0.0)


def _matrices(Q_in: ArrayLike, K_in: ArrayLike, V_in: ArrayLike | None = None) -> list[np.ndarray]:
    """[Q, K] (and V) as float arrays of compatible shapes, or an error naming them."""
    Q = _checks.real_array("Q", Q_in, min_ndim=2, shape_hint="(..., n_q, d_k)")
    K = _checks.real_array("K", K_in, min_ndim=2, shape_hint="(..., n_k, d_k)")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q has d_k={Q.shape[-1]} but K has d_k={K.shape[-1]}")
    if Q.shape[-1] == 0:
        raise ValueError("d_k must be a positive integer, got 0 (Q and K have no columns)")
    if K.shape[-2] == 0:
        raise ValueError("K must have at least one key (n_k >= 1)")
    arrays = [Q, K]
    if V_in is not None:
        V = _checks.real_array("V", V_in, min_ndim=2, shape_hint="(..., n_k, d_v)")
        if V.shape[-2] != K.shape[-2]:
            raise ValueError(f"K has n_k={K.shape[-2]} rows but V has {V.shape[-2]}; each key needs one value")
        arrays.append(V)
    try:
        np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError:
        shapes = " and ".join(f"{n} {a.shape[:-2]}" for n, a in zip("QKV", arrays))
        raise ValueError(f"leading (batch) dimensions of {shapes} do not broadcast") from None
    return arrays


def attention_scores(Q: ArrayLike, K: ArrayLike, scale: float | str | None = None) -> np.ndarray:
    """The logits ``scale * Q @ K^T``, shape (..., n_q, n_k).

    ``scale`` as in :func:`~sdpa_helpers.scales.scale_factor`: None (or "sqrt") is 1/sqrt(d_k), 1.0 unscaled.

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
    """``(output, weights)``: the paper's scaled dot-product attention, ``softmax(scale * Q K^T, masked) @ V``.

    The five steps: MatMul, Scale (``scale`` as in :func:`attention_scores`), Mask (optional; a
    bool array broadcastable to (..., n_q, n_k), True = may attend, every query keeps a key),
    SoftMax over the keys, MatMul with V. ``output`` is (..., n_q, d_v); ``weights`` (..., n_q, n_k)
    sum to 1 per row, exactly 0 where masked.

    >>> Q = np.zeros((2, 3)); K = np.ones((2, 3)); V = np.array([[1.0], [3.0]])
    >>> out, w = scaled_dot_product_attention(Q, K, V)
    >>> out.tolist(), w.tolist()
    ([[2.0], [2.0]], [[0.5, 0.5], [0.5, 0.5]])
    """
    q, k, v = _matrices(Q, K, V)
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
    """Bool (n_q, n_k) mask (n_k defaults to n_q), True on and below the diagonal: query i sees keys j <= i.

    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    n_q = _checks.positive_int("n_q", n_q)
    n_k = n_q if n_k is None else _checks.positive_int("n_k", n_k)
    return np.tril(np.ones((n_q, n_k), dtype=bool))


def _centred(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``(x - mean, variance)`` along ``axis``, the mean corrected where rounding moved it.

    Entries a few ulps apart have a rounded mean off by as much as their spread; the residuals'
    own mean restores it (Chan, Golub and LeVeque's corrected two pass). Skipped below 2**-40
    relative, so ordinary inputs keep the bits of the plain formula.
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
    """``(x - mean) / sqrt(var + eps)`` along ``axis`` (population variance; no gain or bias), shape of ``x``.

    ``eps >= 0``; with ``eps=0`` a slice whose variance is (or underflows to) 0 raises ValueError.

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
    """``(unscaled, scaled)`` attention weights (length, length) of standard normal Q, K (length, d_k) from ``seed``.

    Causal mask if ``causal``; cached (checked before the cache sees them), read-only.
    """
    d_k = _checks.d_k("d_k", d_k)
    length = _checks.positive_int("length", length)
    seed = _checks.seed("seed", seed)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    return _random_attention_weights(d_k, length, seed, bool(causal))


@lru_cache(maxsize=512)
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
