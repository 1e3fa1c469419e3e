"""The model of notebook 09: one attention head, ``q = W_Q x``, ``k_j = W_K y_j``, logits
``z_j = s (q . k_j)`` with ``s = scale_factor(scale, d_k)``, ``p = softmax(z)``, class scores
``o = sum_j p_j gain e_{c_j}``, loss ``-log softmax(o)_{c_t}`` averaged over the batch. ``W_Q``, ``W_K``
start N(0, 1/d_in). :func:`backward` writes the backward pass out step by step; :func:`logit_gradients`
does it through ``A = W_Q^T W_K`` for many models at once (the trainer's path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import _checks
from ..attention import entropy, softmax
from ..gradients import finite_difference_jacobian, logit_gradient
from ..sampling import make_rng
from ..scales import scale_factor
from .task import BATCH_SIZE, D_ADDR, D_IN, Batch, check_batch

__all__ = ["GAIN", "Backward", "Forward", "LogitGradients", "Metrics", "Weights", "backward", "check_weights",
           "draw_weights", "evaluate", "finite_difference_gradient", "forward", "ideal_weights", "init_statistics",
           "logit_gradients", "loss_and_gradients", "per_example_gradient_norms", "share_of_examples",
           "starting_weights"]

#: The value read-out's gain: v_j = GAIN * e_{c_j}.
GAIN = 5.0


class Weights(NamedTuple):
    """The learnable parameters ``W_Q`` and ``W_K``, each of shape (d_k, d_in); also their gradients."""

    W_Q: np.ndarray
    W_K: np.ndarray


def draw_weights(d_k: int, d_in: int = D_IN, rng=None) -> Weights:
    """``W_Q``, ``W_K`` with independent N(0, 1/d_in) entries (1/fan_in), drawn from ``rng``."""
    d_k = _checks.d_k("d_k", d_k)
    d_in = _checks.positive_int("d_in", d_in)
    rng = make_rng(rng)
    sd = 1.0 / np.sqrt(d_in)
    return Weights(sd * rng.standard_normal((d_k, d_in)), sd * rng.standard_normal((d_k, d_in)))


def starting_weights(d_k: int, seed: int = 0) -> Weights:
    """The weights every training run of ``seed`` at ``d_k`` starts from (before an arm's multiplier)."""
    d_k = _checks.d_k("d_k", d_k)
    return draw_weights(d_k, rng=np.random.default_rng([_checks.seed("seed", seed), 0, d_k]))


def ideal_weights(d_k: int, alpha: float = 4.0, d_in: int = D_IN, d_addr: int = D_ADDR) -> Weights:
    """A hand-set solution: ``W_Q = W_K = sqrt(alpha) [I_d_addr 0]`` padded with zero rows.

    Then ``q . k_j = alpha * (address of x) . (address of y_j)``: ``4 alpha`` for the target,
    0 or ``-4 alpha`` for the others; the noise is ignored. Needs ``d_k >= d_addr``.
    """
    d_k = _checks.d_k("d_k", d_k)
    alpha = _checks.positive("alpha", alpha)
    d_in = _checks.positive_int("d_in", d_in)
    d_addr = _checks.positive_int("d_addr", d_addr)
    if d_k < d_addr or d_in < d_addr:
        raise ValueError(f"d_k and d_in must be >= d_addr={d_addr}, got d_k={d_k}, d_in={d_in}")
    W = np.zeros((d_k, d_in))
    W[:d_addr, :d_addr] = np.sqrt(alpha) * np.eye(d_addr)
    return Weights(W, W.copy())


def check_weights(weights, d_in: int) -> Weights:
    """Validate a :class:`Weights` against a batch's ``d_in``."""
    if not isinstance(weights, Weights):
        raise TypeError(f"weights must be a Weights (W_Q, W_K), got {type(weights).__name__}")
    W_Q = _checks.real_array("weights.W_Q", weights.W_Q, min_ndim=2, shape_hint="(d_k, d_in)")
    W_K = _checks.real_array("weights.W_K", weights.W_K, min_ndim=2, shape_hint="(d_k, d_in)")
    if W_Q.ndim != 2 or W_Q.shape != W_K.shape:
        raise ValueError(f"weights.W_Q and weights.W_K must both have shape (d_k, d_in), "
                         f"got {W_Q.shape} and {W_K.shape}")
    if W_Q.shape[1] != d_in:
        raise ValueError(f"weights have d_in={W_Q.shape[1]} but the batch has d_in={d_in}")
    return Weights(W_Q, W_K)


class Forward(NamedTuple):
    """Every intermediate of the forward pass (B examples, n keys, C = n classes).

    ``q`` (B, d_k); ``k`` (B, n, d_k); ``logits`` z (B, n); ``weights`` p (B, n);
    ``values`` v (B, n, C); ``output`` o (B, C); ``probs`` r (B, C); ``scale`` s;
    ``loss`` (float, batch mean); ``accuracy`` (float); ``entropy`` (float, mean, nats).
    """

    q: np.ndarray
    k: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    values: np.ndarray
    output: np.ndarray
    probs: np.ndarray
    scale: float
    loss: float
    accuracy: float
    entropy: float


def forward(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> Forward:
    """The forward pass, one line per equation of the module docstring.

    ``scale`` goes through :func:`sdpa_helpers.scales.scale_factor`: ``None`` or ``"sqrt"``
    mean ``1/sqrt(d_k)``, ``"unscaled"`` (or ``1.0``) is unscaled.
    """
    batch = check_batch(batch)
    W_Q, W_K = check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    B, n = batch.labels.shape
    q = batch.x @ W_Q.T  # (B, d_in) @ (d_in, d_k) -> (B, d_k)
    k = batch.keys @ W_K.T  # (B, n, d_in) @ (d_in, d_k) -> (B, n, d_k)
    z = s * (k @ q[:, :, None])[:, :, 0]  # (B, n, d_k) @ (B, d_k, 1) -> (B, n)
    p = softmax(z)
    v = gain * np.eye(n)[batch.labels]  # (B, n, C)
    o = (p[:, None, :] @ v)[:, 0]  # (B, 1, n) @ (B, n, C) -> (B, C)
    r = softmax(o)
    y = batch.answer
    loss = float(-np.log(r[np.arange(B), y]).mean())
    accuracy = float((r.argmax(axis=-1) == y).mean())
    return Forward(q, k, z, p, v, o, r, s, loss, accuracy, float(entropy(p).mean()))


class Backward(NamedTuple):
    """Every gradient of the backward pass, ``d_x`` meaning ``dL/dx`` for the batch-mean loss.

    ``d_output`` (B, C); ``d_weights`` dL/dp (B, n); ``d_logits`` dL/dz (B, n);
    ``d_q`` (B, d_k); ``d_k`` dL/dk (B, n, d_k); ``W_Q``, ``W_K`` (d_k, d_in).
    """

    d_output: np.ndarray
    d_weights: np.ndarray
    d_logits: np.ndarray
    d_q: np.ndarray
    d_k: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray

    @property
    def grads(self) -> Weights:
        """The parameter gradients as a :class:`Weights`."""
        return Weights(self.W_Q, self.W_K)


def backward(batch: Batch, fwd: Forward) -> Backward:
    """The backward pass by hand, one equation per line.

    ::

        dL/do   = (r - e_{c_t}) / B            softmax + cross-entropy
        dL/dp_j = v_j . dL/do                  o = sum_j p_j v_j
        dL/dz   = (diag(p) - p p^T) dL/dp      the softmax Jacobian
        dL/dq   = s sum_j (dL/dz_j) k_j        z_j = s q . k_j
        dL/dk_j = s (dL/dz_j) q
        dL/dW_Q = sum_b (dL/dq_b) x_b^T        q = W_Q x
        dL/dW_K = sum_b sum_j (dL/dk_bj) y_bj^T
    """
    batch = check_batch(batch)
    if not isinstance(fwd, Forward):
        raise TypeError(f"fwd must be a Forward (from forward), got {type(fwd).__name__}")
    if fwd.weights.shape != batch.labels.shape:
        raise ValueError(f"fwd was computed on a batch of shape {fwd.weights.shape}, "
                         f"this batch has {batch.labels.shape}")
    B, n = batch.labels.shape
    d_o = (fwd.probs - np.eye(fwd.probs.shape[1])[batch.answer]) / B  # (B, C)
    d_p = (fwd.values @ d_o[:, :, None])[:, :, 0]  # (B, n, C) @ (B, C, 1) -> (B, n)
    d_z = logit_gradient(fwd.weights, d_p)  # (B, n)
    d_q = fwd.scale * (d_z[:, None, :] @ fwd.k)[:, 0]  # (B, 1, n) @ (B, n, d_k) -> (B, d_k)
    d_k = fwd.scale * d_z[:, :, None] * fwd.q[:, None, :]  # (B, n, d_k)
    W_Q = d_q.T @ batch.x  # (d_k, B) @ (B, d_in)
    W_K = d_k.reshape(B * n, -1).T @ batch.keys.reshape(B * n, -1)  # (d_k, B n) @ (B n, d_in)
    return Backward(d_o, d_p, d_z, d_q, d_k, W_Q, W_K)


class LogitGradients(NamedTuple):
    """What :func:`logit_gradients` returns; leading axes ``...`` are those of ``A``.

    ``loss``, ``accuracy``, ``entropy`` (...); ``d_logits`` dL/dz (..., B, n); ``d_A`` dL/dA
    (..., d_in, d_in); ``finite`` (...): False where the logits overflowed (then set to 0).
    """

    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    d_logits: np.ndarray
    d_A: np.ndarray
    finite: np.ndarray


def logit_gradients(A, x, keys, target, s, gain: float = GAIN) -> LogitGradients:
    """Loss and ``G = dL/dA`` for ``A = W_Q^T W_K``, for R models that see the same batch (no input checks).

    The logits depend on the weights only through ``A``: ``z_j = s x^T A y_j``. An example's
    labels are a permutation of the classes, so in key order the class probabilities are
    ``softmax(gain p)`` and the answer is key ``t``. Then ``dL/dW_Q = W_K G^T``, ``dL/dW_K = W_Q G``.

    Shapes: ``A`` (..., R, d, d); ``x`` (..., B, d); ``keys`` (..., B, n, d); ``target`` (..., B);
    ``s`` a float or (R,). The results have leading axes (..., R).
    """
    s = np.asarray(s, dtype=float)[..., None, None]  # broadcasts over (R, B, n) and (R, d, d)
    B = x.shape[-2]
    with np.errstate(over="ignore", invalid="ignore"):
        u = x[..., None, :, :] @ A  # x^T A: (..., 1, B, d) @ (..., R, d, d) -> (..., R, B, d)
        z = keys @ np.moveaxis(u, -3, -1)  # (..., B, n, d) @ (..., B, d, R) -> (..., B, n, R)
        z = s * np.moveaxis(z, -1, -3)  # (..., R, B, n)
    inside = np.abs(z) <= _checks.MAX_ABS  # False for inf and NaN too: a run that left the range diverged
    finite = inside.all(axis=(-1, -2))
    z = np.where(inside, z, 0.0)
    p = softmax(z)
    r = softmax(gain * p)  # class probabilities, in key order
    t = np.broadcast_to(target[..., None, :, None], (*r.shape[:-1], 1))
    r_t = np.take_along_axis(r, t, axis=-1)[..., 0]
    loss = -np.log(r_t).mean(axis=-1)
    accuracy = (r.argmax(axis=-1) == t[..., 0]).mean(axis=-1)
    d_p = r.copy()
    np.put_along_axis(d_p, t, r_t[..., None] - 1.0, axis=-1)
    d_z = logit_gradient(p, (gain / B) * d_p)  # (..., R, B, n)
    d_y = np.moveaxis(np.moveaxis(d_z, -3, -2) @ keys, -2, -3)  # sum_j dL/dz_bj y_bj: (..., R, B, d)
    G = s * (np.swapaxes(x, -1, -2)[..., None, :, :] @ d_y)  # (..., 1, d, B) @ (..., R, B, d) -> (..., R, d, d)
    return LogitGradients(loss, accuracy, entropy(p).mean(axis=-1), d_z, G, finite)


class Metrics(NamedTuple):
    """Batch-mean ``loss``, ``accuracy`` and attention ``entropy`` (nats) (floats, or arrays over runs)."""

    loss: float | np.ndarray
    accuracy: float | np.ndarray
    entropy: float | np.ndarray


def _single(weights, batch, scale, gain):
    batch = check_batch(batch)
    weights = check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, weights.W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    lg = logit_gradients((weights.W_Q.T @ weights.W_K)[None], batch.x, batch.keys, batch.target, s, gain)
    return batch, weights, LogitGradients(*(np.asarray(f)[0] for f in lg))  # the only model


def loss_and_gradients(weights: Weights, batch: Batch, scale=None, gain: float = GAIN):
    """Loss, gradients and :class:`Metrics` of :func:`forward`/:func:`backward`, through ``A = W_Q^T W_K``."""
    _, weights, lg = _single(weights, batch, scale, gain)
    grads = Weights(weights.W_K @ lg.d_A.T, weights.W_Q @ lg.d_A)  # (d_k, d_in) each
    metrics = Metrics(float(lg.loss), float(lg.accuracy), float(lg.entropy))
    return metrics.loss, grads, metrics


def evaluate(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> Metrics:
    """Loss, accuracy and mean attention entropy of ``weights`` on ``batch``."""
    return loss_and_gradients(weights, batch, scale, gain)[2]


def per_example_gradient_norms(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> np.ndarray:
    """``||dL_b/dW_Q||_F`` for each example's own loss ``L_b``, shape (B,): ``||dL_b/dq_b|| ||x_b||`` with
    ``dL_b/dq_b = s W_K sum_j (dL_b/dz_bj) y_bj``.
    """
    batch, weights, lg = _single(weights, batch, scale, gain)
    s = scale_factor(scale, weights.W_Q.shape[0])
    d_z = lg.d_logits * len(batch.x)  # each example's own loss, not the batch mean
    v = (d_z[:, None, :] @ batch.keys)[:, 0]  # (B, d_in)
    return s * np.linalg.norm(v @ weights.W_K.T, axis=1) * np.linalg.norm(batch.x, axis=1)


def share_of_examples(norms, mass: float = 0.9) -> float:
    """The smallest fraction of examples whose squared gradient ``norms`` add up to ``mass`` of the total: about
    ``mass`` when every example contributes alike, small when a few carry the gradient.
    """
    x = _checks.real_array("norms", norms, min_ndim=1, shape_hint="(n,)")
    mass = _checks.positive("mass", mass)
    if x.ndim != 1 or x.size == 0 or (x < 0).any():
        raise ValueError("norms must be a non-empty 1-D array of non-negative numbers")
    if mass > 1:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    top = x.max()
    if top == 0:
        raise ValueError("norms are all 0: no gradient to share")
    sq = np.sort((x / top) ** 2)[::-1]
    count = int(np.searchsorted(np.cumsum(sq) / sq.sum(), mass - 1e-12) + 1)
    return min(count, x.size) / x.size


def init_statistics(weights: Weights, batch: Batch, scale=None, batch_size: int = BATCH_SIZE) -> dict:
    """Where the gradient comes from at ``weights``, on ``batch``: a dict with ``entropy`` (mean attention entropy),
    ``norms`` (each example's own ``||dL_b/dW_Q||``), their ``median`` and ``mean``, ``share``
    (:func:`share_of_examples`) and ``batch`` (mean gradient norm over sub-batches of ``batch_size``: one step).
    """
    batch = check_batch(batch)
    batch_size = _checks.positive_int("batch_size", batch_size)
    n = len(batch.x) // batch_size
    if n < 2:
        raise ValueError(f"batch must hold at least 2 sub-batches of batch_size={batch_size}, "
                         f"has {len(batch.x)} examples")
    norms = per_example_gradient_norms(weights, batch, scale)
    weights = check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, weights.W_Q.shape[0])
    m = n * batch_size
    x, keys = batch.x[:m].reshape(n, batch_size, -1), batch.keys[:m].reshape(n, batch_size, *batch.keys.shape[1:])
    lg = logit_gradients((weights.W_Q.T @ weights.W_K)[None], x, keys, batch.target[:m].reshape(n, batch_size), s)
    per_batch = np.linalg.norm(weights.W_K @ np.swapaxes(lg.d_A[:, 0], -1, -2), axis=(-1, -2))  # ||W_K G^T||
    return dict(entropy=evaluate(weights, batch, scale).entropy, norms=norms, median=float(np.median(norms)),
                mean=float(norms.mean()), share=share_of_examples(norms), batch=float(np.mean(per_batch)))


def finite_difference_gradient(f: Callable[[np.ndarray], float], W, h: float = 1e-5) -> np.ndarray:
    """Gradient of a scalar ``f`` at the array ``W`` by central differences
    (:func:`sdpa_helpers.gradients.finite_difference_jacobian` on the flattened ``W``).
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    W = _checks.real_array("W", W, min_ndim=1, shape_hint="(m, n)")
    jac = finite_difference_jacobian(lambda v: np.array([f(v.reshape(W.shape))]), W.ravel(), h=h)
    return jac[0].reshape(W.shape)
