"""A tiny single-head attention model trained in numpy, with the scale and without.

The task (a retrieval). Each example has ``n_keys`` keys ``y_j`` in ``R^d_in``, each with a
distinct class label ``c_j``, and one query ``x``. The first ``d_addr`` components of every
vector are an *address*: one of the ``2 d_addr`` codes ``+-2 e_i`` (distinct across the keys
of an example); the other components are N(0, 1) noise. The query carries the address of
one key, the *target* ``t``, and fresh noise. The answer is the target's label ``c_t``.
Every input component has mean 0 and variance 1.

The model (one head, learnable ``W_Q`` and ``W_K``, a fixed value read-out)::

    q   = W_Q x                      (d_k,)        k_j = W_K y_j       (d_k,)
    z_j = s (q . k_j)                s = 1/sqrt(d_k) (scaled) or 1 (unscaled)
    p   = softmax(z)                 attention weights over the keys
    o   = sum_j p_j v_j              v_j = gain * onehot(c_j): the class scores
    r   = softmax(o)                 class probabilities
    L   = -log r_{c_t}               cross-entropy, averaged over the batch

``W_Q`` and ``W_K`` start N(0, 1/d_in) (LeCun, 1/fan_in), so ``q`` and ``k`` have
unit-variance components and the unscaled logits have variance ``d_k``.

This module offers:

- :class:`Batch`, :func:`make_batch` -- examples of the task;
- :class:`Weights`, :func:`init_weights`, :func:`initial_weights`, :func:`ideal_weights` -- parameters;
- :class:`Forward`, :func:`forward` -- the forward pass with every intermediate;
- :class:`Backward`, :func:`backward` -- the backward pass, one equation per field;
- :func:`loss_and_gradients` -- the same gradients, computed cheaply through ``W_Q^T W_K``;
- :func:`per_example_gradient_norms` -- ``||dL_b/dW_Q||`` for each example ``b``;
- :func:`finite_difference_gradient` -- central differences, to check the backward pass;
- :class:`Metrics`, :func:`evaluate` -- loss, accuracy and attention entropy;
- :func:`training_data` -- the seeded batches and held-out set every run of a seed shares;
- :class:`History`, :func:`train` -- SGD or Adam, seeded, with a record of every step;
- :func:`run` -- :func:`train` cached (notebook and explorer share the runs);
- :func:`steps_to_accuracy`, :func:`share_of_examples` -- summaries of runs and gradients.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, NamedTuple

import numpy as np

from . import _checks
from .sampling import make_rng

__all__ = [
    "N_KEYS", "D_IN", "D_ADDR", "GAIN", "BATCH_SIZE", "STEPS", "OPTIMIZERS",
    "Batch", "make_batch", "address_codes", "Weights", "init_weights", "initial_weights", "ideal_weights",
    "Forward", "forward", "Backward", "backward", "loss_and_gradients",
    "per_example_gradient_norms", "finite_difference_gradient", "Metrics", "evaluate",
    "History", "training_data", "train", "run", "steps_to_accuracy", "share_of_examples",
]

#: Keys per example (also the number of classes: every key has its own label).
N_KEYS = 8
#: Length of the input vectors x and y_j.
D_IN = 16
#: How many leading components of each input carry the address.
D_ADDR = 4
#: The value read-out's gain: v_j = GAIN * onehot(c_j).
GAIN = 5.0
#: Default batch size and number of training steps.
BATCH_SIZE = 64
STEPS = 300
#: The optimizers :func:`train` knows.
OPTIMIZERS = ("sgd", "adam")


# -- the task -------------------------------------------------------------------------
class Batch(NamedTuple):
    """A batch of the retrieval task.

    - ``x``: queries, shape (B, d_in);
    - ``keys``: keys ``y_j``, shape (B, n_keys, d_in);
    - ``labels``: class label ``c_j`` of each key, ints, shape (B, n_keys) (a permutation per row);
    - ``target``: index ``t`` of the key whose address the query carries, shape (B,).
    """

    x: np.ndarray
    keys: np.ndarray
    labels: np.ndarray
    target: np.ndarray

    @property
    def answer(self) -> np.ndarray:
        """The class to predict, ``labels[b, target[b]]``, shape (B,)."""
        return np.take_along_axis(self.labels, self.target[:, None], axis=1)[:, 0]


def address_codes(d_addr: int = D_ADDR) -> np.ndarray:
    """The ``2 d_addr`` address codes ``+2 e_i`` and ``-2 e_i``, shape (2 d_addr, d_addr).

    Over a uniformly random code each component has mean 0 and variance ``4 / d_addr * d_addr / 4 = 1``.

    >>> address_codes(2).tolist()
    [[2.0, 0.0], [0.0, 2.0], [-2.0, -0.0], [-0.0, -2.0]]
    >>> float((address_codes(4) ** 2).mean())
    1.0
    """
    d_addr = _checks.positive_int("d_addr", d_addr)
    eye = 2.0 * np.eye(d_addr)
    return np.concatenate([eye, -eye])


def make_batch(batch_size: int, n_keys: int = N_KEYS, d_in: int = D_IN, d_addr: int = D_ADDR,
               rng=None) -> Batch:
    """Draw ``batch_size`` examples of the retrieval task (see the module docstring).

    Parameters
    ----------
    batch_size : int
        Number of examples B.
    n_keys : int
        Keys per example, at most ``2 d_addr`` (the addresses in one example are distinct).
    d_in : int
        Length of each input vector, at least ``d_addr``.
    d_addr : int
        Leading components that carry the address.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Batch

    Examples
    --------
    >>> b = make_batch(3, rng=0)
    >>> b.x.shape, b.keys.shape, b.labels.shape, b.target.shape
    ((3, 16), (3, 8, 16), (3, 8), (3,))
    >>> bool(np.array_equal(b.x[:, :4], b.keys[np.arange(3), b.target, :4]))  # the query's address
    True
    """
    batch_size = _checks.positive_int("batch_size", batch_size)
    n_keys = _checks.positive_int("n_keys", n_keys)
    d_in = _checks.positive_int("d_in", d_in)
    d_addr = _checks.positive_int("d_addr", d_addr)
    if d_addr > d_in:
        raise ValueError(f"d_addr must be <= d_in={d_in}, got {d_addr}")
    if n_keys > 2 * d_addr:
        raise ValueError(f"n_keys must be <= 2 * d_addr = {2 * d_addr} (distinct addresses), got {n_keys}")
    rng = make_rng(rng)
    codes = address_codes(d_addr)  # (2 d_addr, d_addr)
    which = np.argsort(rng.random((batch_size, 2 * d_addr)), axis=1)[:, :n_keys]  # distinct codes
    keys = rng.standard_normal((batch_size, n_keys, d_in))
    keys[:, :, :d_addr] = codes[which]  # (B, n_keys, d_addr)
    target = rng.integers(n_keys, size=batch_size)
    x = rng.standard_normal((batch_size, d_in))
    x[:, :d_addr] = keys[np.arange(batch_size), target, :d_addr]
    labels = np.argsort(rng.random((batch_size, n_keys)), axis=1)  # a random permutation per row
    return Batch(x, keys, labels, target)


def _check_batch(batch) -> Batch:
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a Batch (from make_batch), got {type(batch).__name__}")
    return batch


# -- parameters -----------------------------------------------------------------------
class Weights(NamedTuple):
    """The learnable parameters: ``W_Q`` and ``W_K``, each of shape (d_k, d_in).

    Also used for their gradients.
    """

    W_Q: np.ndarray
    W_K: np.ndarray


def init_weights(d_k: int, d_in: int = D_IN, rng=None) -> Weights:
    """``W_Q``, ``W_K`` with independent N(0, 1/d_in) entries (LeCun init, 1/fan_in).

    Then ``q = W_Q x`` has components of variance ``||x||^2 / d_in``, which is 1 on average.

    Examples
    --------
    >>> w = init_weights(1024, rng=0)
    >>> w.W_Q.shape, round(float(w.W_Q.var() * 16), 1)
    ((1024, 16), 1.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    d_in = _checks.positive_int("d_in", d_in)
    rng = make_rng(rng)
    sd = 1.0 / np.sqrt(d_in)
    return Weights(sd * rng.standard_normal((d_k, d_in)), sd * rng.standard_normal((d_k, d_in)))


def initial_weights(d_k: int, seed: int = 0) -> Weights:
    """The initial weights :func:`train` starts from for ``(d_k, seed)``: :func:`init_weights`, seeded.

    The scaled and unscaled runs of a seed share them.

    >>> w = initial_weights(8)
    >>> bool(np.array_equal(w.W_Q, initial_weights(8).W_Q)), w.W_Q.shape
    (True, (8, 16))
    """
    d_k = _checks.positive_int("d_k", d_k)
    return init_weights(d_k, rng=np.random.default_rng([_seed(seed), 0, d_k]))


def ideal_weights(d_k: int, alpha: float = 4.0, d_in: int = D_IN, d_addr: int = D_ADDR) -> Weights:
    """A hand-set solution: ``W_Q = W_K = sqrt(alpha) [I_d_addr 0]`` padded with zero rows.

    Then ``q . k_j = alpha * (address of x) . (address of y_j)``: ``4 alpha`` for the target,
    0 or ``-4 alpha`` for the others; the noise components are ignored. Needs ``d_k >= d_addr``.

    Examples
    --------
    >>> w = ideal_weights(4, alpha=1.0)
    >>> w.W_Q[:, :5].tolist()[0]
    [1.0, 0.0, 0.0, 0.0, 0.0]
    """
    d_k = _checks.positive_int("d_k", d_k)
    alpha = _checks.positive("alpha", alpha)
    d_in = _checks.positive_int("d_in", d_in)
    d_addr = _checks.positive_int("d_addr", d_addr)
    if d_k < d_addr or d_in < d_addr:
        raise ValueError(f"d_k and d_in must be >= d_addr={d_addr}, got d_k={d_k}, d_in={d_in}")
    W = np.zeros((d_k, d_in))
    W[:d_addr, :d_addr] = np.sqrt(alpha) * np.eye(d_addr)
    return Weights(W, W.copy())


def _check_weights(weights, d_in: int) -> Weights:
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


def _resolve_scale(scale, d_k: int) -> float:
    return 1.0 / np.sqrt(d_k) if scale is None else _checks.positive("scale", scale)


# -- forward and backward, step by step -------------------------------------------------
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 = HI + LO
_INV_FACTORIALS = tuple(1.0 / np.prod(np.arange(1.0, i + 1)) for i in range(14))  # 1/i!, i = 0..13


def _exp(x: np.ndarray) -> np.ndarray:
    """``exp(x)`` for ``x <= 0``, within 2 ulp, the same bits on every CPU.

    ``np.exp`` takes a different SIMD path on AVX-512 and AVX2 CPUs, and the last bit can
    differ. Unscaled training is chaotic (a near-tie between two keys flips on a last-bit
    change), so a run would not reproduce across machines. Here only correctly rounded
    operations are used: ``x = k ln 2 + r`` with ``|r| <= ln(2)/2``, a degree-13 Taylor
    polynomial for ``exp(r)`` (error below 1e-17), and ``ldexp`` for ``2^k``.
    """
    x = np.maximum(x, -760.0)  # exp(-760) rounds to 0 in float64
    k = np.rint(x * (1.0 / np.log(2.0)))
    r = (x - k * _LN2_HI) - k * _LN2_LO
    poly = np.full_like(r, _INV_FACTORIALS[-1])
    for c in _INV_FACTORIALS[-2::-1]:
        poly = poly * r + c
    return np.ldexp(poly, k.astype(np.int64))


def _softmax(z: np.ndarray) -> np.ndarray:
    e = _exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _entropy(p: np.ndarray) -> np.ndarray:
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1)


def _softmax_backward(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``(diag(p) - p p^T) g = p * (g - p . g)``, with the largest ``p_i`` summed stably."""
    centred = g - (p * g).sum(axis=-1, keepdims=True)
    top = np.argmax(p, axis=-1)[..., None]
    g_top = np.take_along_axis(g, top, axis=-1)
    np.put_along_axis(centred, top, (p * (g_top - g)).sum(axis=-1, keepdims=True), axis=-1)
    return p * centred


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

    Parameters
    ----------
    weights : Weights
        ``W_Q``, ``W_K`` of shape (d_k, d_in).
    batch : Batch
    scale : float > 0 or None
        ``None`` means ``1/sqrt(d_k)`` (scaled); ``1.0`` is unscaled.
    gain : float > 0
        The value read-out's gain.

    Returns
    -------
    Forward

    Examples
    --------
    >>> f = forward(ideal_weights(4), make_batch(100, rng=0), scale=1.0)
    >>> f.accuracy, round(f.loss, 3)
    (1.0, 0.046)
    """
    batch = _check_batch(batch)
    W_Q, W_K = _check_weights(weights, batch.x.shape[-1])
    s = _resolve_scale(scale, W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    B, n = batch.labels.shape
    q = np.einsum("di,bi->bd", W_Q, batch.x)  # q = W_Q x: (d_k, d_in), (B, d_in) -> (B, d_k)
    k = np.einsum("di,bni->bnd", W_K, batch.keys)  # k_j = W_K y_j: -> (B, n, d_k)
    z = s * np.einsum("bd,bnd->bn", q, k)  # (B, n)
    p = _softmax(z)  # (B, n)
    v = gain * np.eye(n)[batch.labels]  # (B, n, C)
    o = np.einsum("bn,bnc->bc", p, v)  # (B, C)
    r = _softmax(o)  # (B, C)
    y = batch.answer
    loss = float(-np.log(r[np.arange(B), y]).mean())
    accuracy = float((r.argmax(axis=-1) == y).mean())
    return Forward(q, k, z, p, v, o, r, s, loss, accuracy, float(_entropy(p).mean()))


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

        dL/do   = (r - onehot(c_t)) / B            softmax + cross-entropy
        dL/dp_j = v_j . dL/do                      o = sum_j p_j v_j
        dL/dz   = (diag(p) - p p^T) dL/dp          the softmax Jacobian
        dL/dq   = s sum_j (dL/dz_j) k_j            z_j = s q . k_j
        dL/dk_j = s (dL/dz_j) q
        dL/dW_Q = sum_b (dL/dq_b) x_b^T            q = W_Q x
        dL/dW_K = sum_b sum_j (dL/dk_bj) y_bj^T    k_j = W_K y_j

    Parameters
    ----------
    batch : Batch
    fwd : Forward
        The forward pass on ``batch`` (:func:`forward`).

    Returns
    -------
    Backward

    Examples
    --------
    >>> b = make_batch(4, rng=0)
    >>> g = backward(b, forward(init_weights(8, rng=1), b))
    >>> g.W_Q.shape, bool(np.allclose(g.d_logits.sum(axis=1), 0))  # each row of dL/dz sums to 0
    ((8, 16), True)
    """
    batch = _check_batch(batch)
    if not isinstance(fwd, Forward):
        raise TypeError(f"fwd must be a Forward (from forward), got {type(fwd).__name__}")
    if fwd.weights.shape != batch.labels.shape:
        raise ValueError(f"fwd was computed on a batch of shape {fwd.weights.shape}, "
                         f"this batch has {batch.labels.shape}")
    B = batch.labels.shape[0]
    d_o = fwd.probs.copy()
    d_o[np.arange(B), batch.answer] -= 1.0
    d_o /= B  # (B, C)
    d_p = np.einsum("bnc,bc->bn", fwd.values, d_o)  # (B, n)
    d_z = _softmax_backward(fwd.weights, d_p)  # (B, n)
    d_q = fwd.scale * np.einsum("bn,bnd->bd", d_z, fwd.k)  # (B, d_k)
    d_k = fwd.scale * d_z[:, :, None] * fwd.q[:, None, :]  # (B, n, d_k)
    W_Q = np.einsum("bd,bi->di", d_q, batch.x)  # sum_b d_q x^T: (d_k, d_in)
    W_K = np.einsum("bnd,bne->de", d_k, batch.keys)  # (d_k, d_in)
    return Backward(d_o, d_p, d_z, d_q, d_k, W_Q, W_K)


# -- the same, cheaply: through A = W_Q^T W_K --------------------------------------------
def _logit_grads(weights: Weights, batch: Batch, s: float, gain: float):
    """Loss, accuracy, entropy, dL/dz and dL/dA for A = W_Q^T W_K (d_in x d_in).

    The labels of an example are a permutation of the classes, so the class scores are the
    attention weights reordered: ``o[c_j] = gain p_j``. Working in key order avoids the
    one-hot values: ``r`` in key order is ``softmax(gain p)`` and the answer is key ``t``.
    """
    W_Q, W_K = weights
    B = batch.labels.shape[0]
    rows = np.arange(B)
    A = np.einsum("di,dj->ij", W_Q, W_K)  # A = W_Q^T W_K: (d_in, d_in)
    z = s * np.einsum("bni,bi->bn", batch.keys, np.einsum("bi,ij->bj", batch.x, A))  # z_j = s x^T A y_j
    p = _softmax(z)  # (B, n)
    r = _softmax(gain * p)  # class probabilities, in key order
    t = batch.target
    loss = float(-np.log(r[rows, t]).mean())
    accuracy = float((r.argmax(axis=-1) == t).mean())
    d_o = r
    d_o[rows, t] -= 1.0
    d_p = (gain / B) * d_o  # (B, n)
    d_z = _softmax_backward(p, d_p)
    d_y = np.einsum("bn,bnj->bj", d_z, batch.keys)  # sum_j (dL/dz_bj) y_bj: (B, d_in)
    d_A = s * np.einsum("bi,bj->ij", batch.x, d_y)  # G = dL/dA: (d_in, d_in)
    return loss, accuracy, float(_entropy(p).mean()), d_z, d_A


def _weight_grads(weights, d_A: np.ndarray):
    """``dL/dW_Q = W_K G^T`` and ``dL/dW_K = W_Q G`` from ``G = dL/dA``."""
    W_Q, W_K = weights
    return np.einsum("dj,ij->di", W_K, d_A), np.einsum("di,ij->dj", W_Q, d_A)


def loss_and_gradients(weights: Weights, batch: Batch, scale=None, gain: float = GAIN):
    """Loss and gradients of :func:`forward`/:func:`backward`, in ``O(d_k d_in^2)`` per batch.

    The logits depend on ``W_Q`` and ``W_K`` only through ``A = W_Q^T W_K`` (d_in x d_in):
    ``z_j = s x^T A y_j``. With ``G = dL/dA = s sum_b sum_j (dL/dz_bj) x_b y_bj^T``, the chain
    rule gives ``dL/dW_Q = W_K G^T`` and ``dL/dW_K = W_Q G`` -- the same numbers as
    :func:`backward`, without ever forming the (B, n, d_k) keys.

    Returns
    -------
    loss : float
    grads : Weights
    metrics : Metrics
        Loss, accuracy and mean attention entropy of this batch (before the update).

    Examples
    --------
    >>> b, w = make_batch(16, rng=0), init_weights(32, rng=1)
    >>> _, g, _ = loss_and_gradients(w, b)
    >>> bool(np.allclose(g.W_Q, backward(b, forward(w, b)).W_Q))
    True
    """
    batch = _check_batch(batch)
    weights = _check_weights(weights, batch.x.shape[-1])
    s = _resolve_scale(scale, weights.W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    loss, accuracy, entropy, _, d_A = _logit_grads(weights, batch, s, gain)
    grads = Weights(*_weight_grads(weights, d_A))  # (d_k, d_in) each
    return loss, grads, Metrics(loss, accuracy, entropy)


def per_example_gradient_norms(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> np.ndarray:
    """``||dL_b/dW_Q||_F`` for each example's own loss ``L_b = -log r_b``: shape (B,).

    ``dL_b/dW_Q = (dL_b/dq_b) x_b^T`` has norm ``||dL_b/dq_b|| ||x_b||``, with
    ``dL_b/dq_b = s W_K sum_j (dL_b/dz_bj) y_bj``.

    Examples
    --------
    >>> b, w = make_batch(5, rng=0), init_weights(16, rng=1)
    >>> norms = per_example_gradient_norms(w, b)
    >>> full = [np.linalg.norm(backward(b._make(a[i:i + 1] for a in b),
    ...          forward(w, b._make(a[i:i + 1] for a in b))).W_Q) for i in range(5)]
    >>> bool(np.allclose(norms, full))
    True
    """
    batch = _check_batch(batch)
    weights = _check_weights(weights, batch.x.shape[-1])
    s = _resolve_scale(scale, weights.W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    B = batch.labels.shape[0]
    _, _, _, d_z, _ = _logit_grads(weights, batch, s, gain)
    d_z = d_z * B  # per-example loss, not the batch mean
    d_q = s * np.einsum("di,bi->bd", weights.W_K, np.einsum("bn,bni->bi", d_z, batch.keys))  # (B, d_k)
    return np.sqrt((d_q**2).sum(axis=1) * (batch.x**2).sum(axis=1))


def finite_difference_gradient(f: Callable[[np.ndarray], float], W, h: float = 1e-5) -> np.ndarray:
    """Gradient of a scalar ``f`` at the matrix ``W`` by central differences.

    Each entry is ``(f(W + h E_ij) - f(W - h E_ij)) / 2h``. Its error is ``h^2/6`` times a
    third derivative (truncation, O(h^2)) plus about ``eps |f| / h`` (rounding).

    Parameters
    ----------
    f : callable
        Maps an array of the shape of ``W`` to a float.
    W : array_like, shape (m, n)
    h : float > 0

    Returns
    -------
    ndarray, shape of ``W``

    Examples
    --------
    >>> g = finite_difference_gradient(lambda W: float((W ** 3).sum()), np.array([[1.0, 2.0]]))
    >>> np.round(g, 6).tolist()  # 3 W^2, exact up to h^2 = 1e-10
    [[3.0, 12.0]]
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    W = _checks.real_array("W", W, min_ndim=1, shape_hint="(m, n)")
    h = _checks.positive("h", h)
    grad = np.empty_like(W)
    step = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        step[idx] = h
        grad[idx] = (f(W + step) - f(W - step)) / (2 * h)
        step[idx] = 0.0
    return grad


# -- evaluation and training ----------------------------------------------------------
class Metrics(NamedTuple):
    """Batch-mean ``loss``, ``accuracy`` and attention ``entropy`` (nats)."""

    loss: float
    accuracy: float
    entropy: float


def evaluate(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> Metrics:
    """Loss, accuracy and mean attention entropy of ``weights`` on ``batch``.

    Examples
    --------
    >>> m = evaluate(ideal_weights(4), make_batch(200, rng=0), scale=1.0)
    >>> m.accuracy, round(m.loss, 4), round(m.entropy, 4)
    (1.0, 0.0461, 0.0)
    """
    return loss_and_gradients(weights, batch, scale, gain)[2]


class History(NamedTuple):
    """The record of one training run, one entry per step (measured before that step's update).

    ``loss``, ``accuracy``, ``entropy``: on the step's fresh batch; ``grad_norm_q``,
    ``grad_norm_k``: ``||dL/dW_Q||_F``, ``||dL/dW_K||_F``. ``final``: :class:`Metrics` of the
    trained weights on a held-out set; ``weights``: the trained weights.
    """

    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    grad_norm_q: np.ndarray
    grad_norm_k: np.ndarray
    final: Metrics
    weights: Weights


def _seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return int(seed)


@lru_cache(maxsize=4)
def training_data(seed: int = 0, steps: int = STEPS, batch_size: int = BATCH_SIZE) -> tuple[list, Batch]:
    """The batches :func:`train` uses for ``seed``, one per step, and its held-out set of 2000 examples.

    Every run with the same seed sees the same data (whatever ``d_k``, scaling or optimizer).
    The arrays are read-only; the result is cached.

    >>> batches, held_out = training_data(0, steps=3)
    >>> len(batches), batches[0].x.shape, held_out.x.shape
    (3, (64, 16), (2000, 16))
    """
    seed = _seed(seed)
    steps = _checks.positive_int("steps", steps)
    batch_size = _checks.positive_int("batch_size", batch_size)
    data_seq, eval_seq = np.random.SeedSequence([seed, 1]).spawn(2)
    rng = np.random.default_rng(data_seq)
    batches = [make_batch(batch_size, rng=rng) for _ in range(steps)]
    held_out = make_batch(2000, rng=np.random.default_rng(eval_seq))
    for batch in (*batches, held_out):
        for a in batch:
            a.setflags(write=False)
    return batches, held_out


def train(d_k: int, scaled: bool = True, lr: float = 1.0, optimizer: str = "sgd", steps: int = STEPS,
          batch_size: int = BATCH_SIZE, seed: int = 0) -> History:
    """Train ``W_Q``, ``W_K`` on fresh batches of the task; seeded, so runs are reproducible.

    The initial weights depend on ``(seed, d_k)`` only and the batches on ``seed`` only, so
    the scaled and unscaled runs of a seed start from the same weights and see the same data.

    Parameters
    ----------
    d_k : int
        Rows of ``W_Q`` and ``W_K``.
    scaled : bool
        Divide the logits by ``sqrt(d_k)`` (True) or not (False).
    lr : float > 0
        Learning rate.
    optimizer : {"sgd", "adam"}
        ``"sgd"``: ``W <- W - lr g``. ``"adam"``: Adam with ``beta1 = 0.9``,
        ``beta2 = 0.999``, ``eps = 1e-8`` and bias correction.
    steps, batch_size : int
    seed : int >= 0

    Returns
    -------
    History

    Examples
    --------
    >>> h = train(4, lr=1.0, steps=100, seed=0)
    >>> h.loss.shape, h.final.accuracy > 0.9
    ((100,), True)
    """
    d_k = _checks.positive_int("d_k", d_k)
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"scaled must be True (divide by sqrt(d_k)) or False (unscaled), got {scaled!r}")
    lr = _checks.positive("lr", lr)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    steps = _checks.positive_int("steps", steps)
    batch_size = _checks.positive_int("batch_size", batch_size)
    seed = _seed(seed)
    batches, held_out = training_data(seed, steps, batch_size)
    W = initial_weights(d_k, seed)
    params = [W.W_Q.copy(), W.W_K.copy()]
    s = 1.0 / np.sqrt(d_k) if scaled else 1.0
    record = np.empty((steps, 5))
    m = [np.zeros_like(w) for w in params]
    v = [np.zeros_like(w) for w in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t, batch in enumerate(batches, start=1):
        loss, accuracy, entropy, _, d_A = _logit_grads(params, batch, s, GAIN)
        grads = _weight_grads(params, d_A)
        record[t - 1] = (loss, accuracy, entropy, np.sqrt((grads[0] ** 2).sum()), np.sqrt((grads[1] ** 2).sum()))
        for i, g in enumerate(grads):
            if optimizer == "sgd":
                params[i] -= lr * g
            else:
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                m_hat, v_hat = m[i] / (1 - beta1**t), v[i] / (1 - beta2**t)
                params[i] -= lr * m_hat / (np.sqrt(v_hat) + eps)
        if not all(np.isfinite(p).all() for p in params):
            raise FloatingPointError(f"training diverged at step {t} (d_k={d_k}, scaled={scaled}, lr={lr}); "
                                     "use a smaller learning rate")
    final = evaluate(Weights(*params), held_out, scale=s)
    return History(*record.T.copy(), final, Weights(*params))


@lru_cache(maxsize=512)
def run(d_k: int, scaled: bool = True, lr: float = 1.0, optimizer: str = "sgd", steps: int = STEPS,
        batch_size: int = BATCH_SIZE, seed: int = 0) -> History:
    """:func:`train`, cached: the same arguments return the same (read-only) :class:`History`.

    >>> run(4, steps=20) is run(4, steps=20)
    True
    """
    h = train(d_k, scaled, lr, optimizer, steps, batch_size, seed)
    for a in (*h[:5], *h.weights):
        a.setflags(write=False)
    return h


def steps_to_accuracy(accuracy, threshold: float = 0.9, window: int = 10):
    """The first step ``t`` at which the accuracy averaged over steps ``t-window+1 .. t`` reaches ``threshold``.

    Steps count from 1 (the first recorded accuracy is step 1). Returns ``None`` if it never does.

    Examples
    --------
    >>> steps_to_accuracy([0.0, 0.5, 1.0, 1.0, 1.0], threshold=0.9, window=2)
    4
    >>> steps_to_accuracy([0.0, 0.5], window=2) is None
    True
    """
    acc = _checks.real_array("accuracy", accuracy, min_ndim=1, shape_hint="(steps,)")
    threshold = _checks.real("threshold", threshold)
    window = _checks.positive_int("window", window)
    if acc.ndim != 1 or acc.size < window:
        raise ValueError(f"accuracy must be 1-D with at least window={window} entries, got shape {acc.shape}")
    means = np.convolve(acc, np.ones(window) / window, mode="valid")  # means[i] covers steps i+1 .. i+window
    hits = np.flatnonzero(means >= threshold - 1e-12)
    return int(hits[0] + window) if hits.size else None


def share_of_examples(norms, mass: float = 0.9) -> float:
    """The smallest fraction of examples whose squared gradient norms add up to ``mass`` of the total.

    About ``mass`` when every example contributes alike; small when a few examples carry
    the whole gradient.

    Examples
    --------
    >>> share_of_examples(np.ones(10))
    0.9
    >>> share_of_examples([100.0] + [0.001] * 9)
    0.1
    """
    x = _checks.real_array("norms", norms, min_ndim=1, shape_hint="(n,)")
    mass = _checks.positive("mass", mass)
    if x.ndim != 1 or x.size == 0 or (x < 0).any():
        raise ValueError("norms must be a non-empty 1-D array of non-negative numbers")
    if mass > 1:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    sq = np.sort(x**2)[::-1]
    total = sq.sum()
    if total == 0:
        raise ValueError("norms are all 0: no gradient to share")
    count = int(np.searchsorted(np.cumsum(sq) / total, mass - 1e-12) + 1)
    return count / x.size
