"""What real models do about growing logits: QK-norm (``g cos(theta)``) and soft-capping (``c tanh(s/c)``)."""

from __future__ import annotations

import numpy as np

from .. import _checks


def qk_norm_scores(Q, K, gain: float = 1.0) -> np.ndarray:
    """QK-norm logits ``gain * cos(theta)`` (Henry et al. 2020): every query and key at unit length, times a learned
    ``gain`` > 0 instead of ``1/sqrt(d_k)``. Q (..., n_q, d_k), K (..., n_k, d_k), no all-zero row; returns
    (..., n_q, n_k), every entry in ``[-gain, gain]``.

    >>> qk_norm_scores([[3.0, 4.0]], [[1.0, 0.0], [0.0, -2.0]], gain=10.0).tolist()
    [[6.0, -8.0]]
    """
    Q = _checks.real_array("Q", Q, min_ndim=2, shape_hint="(..., n_q, d_k)")
    K = _checks.real_array("K", K, min_ndim=2, shape_hint="(..., n_k, d_k)")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q has d_k={Q.shape[-1]} but K has d_k={K.shape[-1]}")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch shapes of Q {Q.shape[:-2]} and K {K.shape[:-2]} do not broadcast "
                         f"(Q is (..., n_q, d_k), K is (..., n_k, d_k))") from None
    gain = _checks.positive("gain", gain)
    cos = _unit_rows("Q", Q) @ np.swapaxes(_unit_rows("K", K), -1, -2)  # (..., n_q, d_k) @ (..., d_k, n_k)
    return gain * np.clip(cos, -1.0, 1.0)


def _unit_rows(name: str, X: np.ndarray) -> np.ndarray:
    """Each row of ``X`` divided by its length, computed scale-safely (any finite magnitude)."""
    peak = np.abs(X).max(axis=-1, keepdims=True)  # (..., n, 1): rescale first, so squares cannot overflow/underflow
    if (peak == 0).any():
        raise ValueError(f"{name} must have no all-zero rows: a zero vector has no direction to normalise")
    Xs = X / peak  # every row's largest entry is now +-1
    return Xs / np.linalg.norm(Xs, axis=-1, keepdims=True)


def softcap(logits, cap: float) -> np.ndarray:
    """Soft-capping of attention logits, ``cap * tanh(logits / cap)`` (Gemma 2: cap 50): about the identity for
    ``|s| << cap``, never beyond ``+-cap``.

    >>> softcap([0.0, 5.0, 1e6], 50.0).round(3).tolist()
    [0.0, 4.983, 50.0]
    """
    s = _checks.real_array("logits", logits)
    cap = _checks.positive("cap", cap)
    with np.errstate(over="ignore", under="ignore"):
        y = s / cap  # may overflow to +-inf (tanh -> +-1, right) or underflow (handled by the series)
        small = np.abs(y) < 1e-4
        series = s * (1.0 - y * y / 3.0)  # cap tanh(s/cap) = s - s^3/(3 cap^2) + O(y^5): exact to 1e-16 here
    return np.where(small, series, cap * np.tanh(y))
