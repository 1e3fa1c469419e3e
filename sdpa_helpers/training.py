"""A tiny single-head attention model trained in numpy, with the scale and without.

The task (a retrieval). Each example has ``n_keys`` keys ``y_j`` in ``R^d_in``, each with a
distinct class label ``c_j``, and one query ``x``. The first ``d_addr`` components of every
vector are an *address*: one of the ``2 d_addr`` codes ``+-2 e_i`` (distinct across the keys
of an example); the other components are N(0, 1) noise. The query carries the address of
one key, the *target* ``t``, and fresh noise. The answer is the target's label ``c_t``.
Every input component has mean 0 and variance 1.

The model (one head, learnable ``W_Q`` and ``W_K``, a fixed value read-out)::

    q   = W_Q x                      (d_k,)        k_j = W_K y_j       (d_k,)
    z_j = s (q . k_j)                s = scale_factor(scale, d_k): 1/sqrt(d_k) ("sqrt") or 1 ("unscaled")
    p   = softmax(z)                 attention weights over the keys
    o   = sum_j p_j v_j              v_j = gain * onehot(c_j): the class scores
    r   = softmax(o)                 class probabilities
    L   = -log r_{c_t}               cross-entropy, averaged over the batch

``W_Q`` and ``W_K`` start N(0, 1/d_in) (LeCun, 1/fan_in), so ``q`` and ``k`` have
unit-variance components and the unscaled logits have variance ``d_k``.

Reproducibility of chaotic runs. Unscaled training at large ``d_k`` is chaotic: a near-tie
between the two largest logits of one example flips on a last-bit change, and a run then
takes another path (the notebook shows a relative nudge of 1e-12 of the initial ``W_Q`` moving
the step at which a run reaches 90 % by up to 100 steps). So any last-bit difference moves such
a run: ``np.exp`` and ``np.log`` take different SIMD paths on different CPUs (AVX-512 vs AVX2)
and can differ in the last bit; BLAS matmul kernels sum in a CPU-dependent order; and a
vectorised reduction may sum in another order when the array shapes change -- that is, with
which and how many other models share the leading (batch) axes of one :func:`train_runs` call.
What this module does about it: the trajectory uses no ``np.exp`` (a portable ``_exp``) and no
BLAS (``einsum``), and ``np.log`` only enters the records (loss, entropy), never the updates;
each run's reductions are over its own axes only. A run of the ``"unscaled"`` arm trained alone
and inside the 5 seeds x 2 arms x 2 learning rates of another call gave the same bits here
(numpy 2.4, AVX-512). That is a check on one machine, not a guarantee: numpy does not promise
einsum's summation order across versions or CPUs. What the notebook does about it: it reports
every training result over 5 seeds (median, range, and how many runs never reached the
target), asserts only patterns that hold on every seed, shows the sensitivity itself (the
1e-12 nudge), and checks the stored grid (:func:`training_grid`) against a fresh run exactly on
the non-chaotic arms (scaled, reparametrised), printing how many chaotic unscaled runs also
agree bit for bit. ``tests/test_training.py`` compares the whole grid exactly, on the machine
that wrote it: after a change anywhere in the gradient's bits, rerun :func:`write_grid`.

This module offers:

- :class:`Batch`, :func:`make_batch` -- examples of the task;
- :class:`Weights`, :func:`draw_weights` (from any generator), :func:`starting_weights` (the
  weights a training run of a given seed starts from), :func:`ideal_weights` -- parameters;
- :class:`Forward`, :func:`forward` -- the forward pass with every intermediate;
- :class:`Backward`, :func:`backward` -- the backward pass, one equation per field;
- :func:`loss_and_gradients` -- the same gradients, computed cheaply through ``W_Q^T W_K``;
- :func:`per_example_gradient_norms` -- ``||dL_b/dW_Q||`` for each example ``b``;
- :func:`init_statistics` -- entropy, per-example and batch gradient norms at given weights;
- :func:`finite_difference_gradient` -- central differences, to check the backward pass;
- :class:`Metrics`, :func:`evaluate` -- loss, accuracy and attention entropy;
- :func:`training_batches`, :func:`held_out_set` -- the seeded data of a run, made as training goes;
- :class:`Arm`, :data:`ARMS` -- how an arm sets up the model: the scale, and the powers of d_k
  that multiply the initial weights and the learning rates (``"scaled"``, ``"unscaled"``,
  ``"reparametrised"``, ``"asymmetric"``);
- :class:`Runs`, :func:`train_runs` -- ONE batched trainer: many models (seeds x arms x
  learning rates) trained at once over leading array axes, SGD or Adam;
- :class:`History` -- one run's record (:meth:`Runs.history`);
- :func:`cached_runs` -- :func:`train_runs` with its arguments checked, then cached (bounded in bytes);
- :func:`steps_to_accuracy`, :func:`share_of_examples`, :func:`seed_summary` -- summaries.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import _checks
from .gradients import logit_gradient
from .sampling import make_rng
from .scales import scale_factor

__all__ = [
    "N_KEYS", "D_IN", "D_ADDR", "GAIN", "BATCH_SIZE", "STEPS", "OPTIMIZERS",
    "Batch", "make_batch", "address_codes", "Weights", "draw_weights", "starting_weights", "ideal_weights",
    "Forward", "forward", "Backward", "backward", "loss_and_gradients",
    "per_example_gradient_norms", "init_statistics", "finite_difference_gradient", "Metrics", "evaluate",
    "training_batches", "held_out_set", "Arm", "ARMS", "Runs", "History", "train_runs", "cached_runs",
    "steps_to_accuracy", "share_of_examples", "seed_summary", "SeedSummary", "rolling_quantiles",
    "GRAD_FLOOR", "panel_values",
    "GRID_D_KS", "GRID_LRS", "GRID_SEEDS", "GRID_ARMS", "GRID_FIELDS", "GRID_FILE", "Grid",
    "compute_grid", "write_grid", "training_grid",
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
#: The optimizers :func:`train_runs` knows.
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
    return Batch(x, keys, labels, target)  # valid by construction from checked arguments


def _check_batch(batch, name: str = "batch") -> Batch:
    """Validate a :class:`Batch` where it is made and where it enters: shapes, labels, finiteness."""
    if not isinstance(batch, Batch):
        raise TypeError(f"{name} must be a Batch (from make_batch), got {type(batch).__name__}")
    x = _checks.real_array(f"{name}.x", batch.x, min_ndim=2, shape_hint="(B, d_in)")
    keys = _checks.real_array(f"{name}.keys", batch.keys, min_ndim=3, shape_hint="(B, n_keys, d_in)")
    if x.ndim != 2 or keys.ndim != 3:
        raise ValueError(f"{name}.x must have shape (B, d_in) and {name}.keys (B, n_keys, d_in), "
                         f"got {x.shape} and {keys.shape}")
    B, n, d_in = keys.shape
    if x.shape != (B, d_in):
        raise ValueError(f"{name}.x has shape {x.shape} but {name}.keys has shape {keys.shape}: "
                         f"expected x of shape ({B}, {d_in})")
    labels, target = np.asarray(batch.labels), np.asarray(batch.target)
    for what, arr, shape in (("labels", labels, (B, n)), ("target", target, (B,))):
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name}.{what} must be integers, got dtype {arr.dtype}")
        if arr.shape != shape:
            raise ValueError(f"{name}.{what} must have shape {shape} to match {name}.keys {keys.shape}, "
                             f"got {arr.shape}")
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            raise ValueError(f"{name}.{what} must lie in 0..{n - 1} (n_keys = {n}), "
                             f"got values from {arr.min()} to {arr.max()}")
    if B and not np.array_equal(np.sort(labels, axis=1), np.broadcast_to(np.arange(n), (B, n))):
        raise ValueError(f"{name}.labels must hold a permutation of 0..{n - 1} in every row")
    return Batch(x, keys, labels, target)


# -- parameters -----------------------------------------------------------------------
class Weights(NamedTuple):
    """The learnable parameters: ``W_Q`` and ``W_K``, each of shape (d_k, d_in).

    Also used for their gradients.
    """

    W_Q: np.ndarray
    W_K: np.ndarray


def draw_weights(d_k: int, d_in: int = D_IN, rng=None) -> Weights:
    """Draw ``W_Q``, ``W_K`` with independent N(0, 1/d_in) entries (LeCun init, 1/fan_in) from ``rng``.

    Then ``q = W_Q x`` has components of variance ``||x||^2 / d_in``, which is 1 on average.

    Examples
    --------
    >>> w = draw_weights(1024, rng=0)
    >>> w.W_Q.shape, round(float(w.W_Q.var() * 16), 1)
    ((1024, 16), 1.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    d_in = _checks.positive_int("d_in", d_in)
    rng = make_rng(rng)
    sd = 1.0 / np.sqrt(d_in)
    return Weights(sd * rng.standard_normal((d_k, d_in)), sd * rng.standard_normal((d_k, d_in)))


def starting_weights(d_k: int, seed: int = 0) -> Weights:
    """The weights every training run of ``seed`` at ``d_k`` starts from (before an arm's multiplier).

    :func:`draw_weights` with a generator seeded by ``(seed, d_k)``: the arms of a seed share them.

    >>> w = starting_weights(8)
    >>> bool(np.array_equal(w.W_Q, starting_weights(8).W_Q)), w.W_Q.shape
    (True, (8, 16))
    """
    d_k = _checks.positive_int("d_k", d_k)
    return draw_weights(d_k, rng=np.random.default_rng([_seed(seed), 0, d_k]))


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
    """``(diag(p) - p p^T) g``: :func:`sdpa_helpers.gradients.logit_gradient` (the stable form)."""
    return logit_gradient(p, g)


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
    scale : None, a name of :data:`sdpa_helpers.scales.SCALINGS` or a float > 0
        Resolved by :func:`sdpa_helpers.scales.scale_factor`: ``None`` or ``"sqrt"`` mean
        ``1/sqrt(d_k)``; ``"unscaled"`` (or ``1.0``) is unscaled.
    gain : float > 0
        The value read-out's gain.

    Returns
    -------
    Forward

    Examples
    --------
    >>> f = forward(ideal_weights(4), make_batch(100, rng=0), scale="unscaled")
    >>> f.accuracy, round(f.loss, 3)
    (1.0, 0.046)
    """
    batch = _check_batch(batch)
    W_Q, W_K = _check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, W_Q.shape[0])
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
    >>> g = backward(b, forward(draw_weights(8, rng=1), b))
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
    >>> b, w = make_batch(16, rng=0), draw_weights(32, rng=1)
    >>> _, g, _ = loss_and_gradients(w, b)
    >>> bool(np.allclose(g.W_Q, backward(b, forward(w, b)).W_Q))
    True
    """
    batch = _check_batch(batch)
    weights = _check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, weights.W_Q.shape[0])
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
    >>> b, w = make_batch(5, rng=0), draw_weights(16, rng=1)
    >>> norms = per_example_gradient_norms(w, b)
    >>> full = [np.linalg.norm(backward(b._make(a[i:i + 1] for a in b),
    ...          forward(w, b._make(a[i:i + 1] for a in b))).W_Q) for i in range(5)]
    >>> bool(np.allclose(norms, full))
    True
    """
    batch = _check_batch(batch)
    weights = _check_weights(weights, batch.x.shape[-1])
    s = scale_factor(scale, weights.W_Q.shape[0])
    gain = _checks.positive("gain", gain)
    B = batch.labels.shape[0]
    _, _, _, d_z, _ = _logit_grads(weights, batch, s, gain)
    d_z = d_z * B  # per-example loss, not the batch mean
    v = np.einsum("bn,bni->bi", d_z, batch.keys)  # dL_b/dq_b = s W_K v_b: (B, d_in)
    m = np.abs(v).max(axis=1, keepdims=True)
    v = v / np.where(m > 0, m, 1.0)  # scale-safe: ||W_K v||^2 = v^T (W_K^T W_K) v on the rescaled v
    C_K = np.einsum("di,dj->ij", weights.W_K, weights.W_K)
    sq = np.maximum(np.einsum("bi,ij,bj->b", v, C_K, v), 0.0)
    return s * m[:, 0] * np.sqrt(sq * (batch.x**2).sum(axis=1))


def init_statistics(weights: Weights, batch: Batch, scale=None, batch_size: int = BATCH_SIZE) -> dict:
    """Where the gradient comes from at ``weights``, measured on ``batch``.

    Returns a dict: ``entropy`` (mean attention entropy, nats); ``norms`` (each example's own
    ``||dL_b/dW_Q||``), their ``median`` and ``mean``; ``share`` (:func:`share_of_examples` of the
    norms); ``batch`` and ``batch_se``: the mean norm of the gradient of consecutive
    sub-batches of ``batch_size`` examples (what one training step sees) and its standard error.

    >>> st = init_statistics(starting_weights(16), make_batch(256, rng=0))
    >>> sorted(st)
    ['batch', 'batch_se', 'entropy', 'mean', 'median', 'norms', 'share']
    """
    batch = _check_batch(batch)
    batch_size = _checks.positive_int("batch_size", batch_size)
    n = len(batch.x) // batch_size
    if n < 2:
        raise ValueError(f"batch must hold at least 2 sub-batches of batch_size={batch_size}, "
                         f"has {len(batch.x)} examples")
    norms = per_example_gradient_norms(weights, batch, scale)
    subs = [Batch(*(a[i * batch_size:(i + 1) * batch_size] for a in batch)) for i in range(n)]
    per_batch = np.array([np.linalg.norm(loss_and_gradients(weights, b, scale)[1].W_Q) for b in subs])
    return dict(entropy=evaluate(weights, batch, scale).entropy, norms=norms, median=float(np.median(norms)),
                mean=float(norms.mean()), share=share_of_examples(norms), batch=float(per_batch.mean()),
                batch_se=float(per_batch.std(ddof=1) / np.sqrt(n)))


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


# -- evaluation -------------------------------------------------------------------------
class Metrics(NamedTuple):
    """Batch-mean ``loss``, ``accuracy`` and attention ``entropy`` (nats) (floats, or arrays over runs)."""

    loss: float | np.ndarray
    accuracy: float | np.ndarray
    entropy: float | np.ndarray


def evaluate(weights: Weights, batch: Batch, scale=None, gain: float = GAIN) -> Metrics:
    """Loss, accuracy and mean attention entropy of ``weights`` on ``batch``.

    Examples
    --------
    >>> m = evaluate(ideal_weights(4), make_batch(200, rng=0), scale="unscaled")
    >>> m.accuracy, round(m.loss, 4), round(m.entropy, 4)
    (1.0, 0.0461, 0.0)
    """
    return loss_and_gradients(weights, batch, scale, gain)[2]


# -- the data of a run, made as training goes ---------------------------------------------
#: Examples in the held-out set of each seed.
HELD_OUT = 2000


def _seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return int(seed)


def _data_rngs(seed: int):
    data_seq, eval_seq = np.random.SeedSequence([seed, 1]).spawn(2)
    return np.random.default_rng(data_seq), np.random.default_rng(eval_seq)


def training_batches(seed: int = 0, batch_size: int = BATCH_SIZE) -> Iterator[Batch]:
    """The training batches of ``seed``, one per step, made as they are asked for (an endless stream).

    Every run with the same seed sees the same batches (whatever ``d_k``, arm or optimizer);
    nothing is stored, so a long run's memory does not grow with the number of steps.

    >>> stream = training_batches(0)
    >>> b = next(stream)
    >>> b.x.shape, bool(np.array_equal(b.x, next(training_batches(0)).x))
    ((64, 16), True)
    """
    seed = _seed(seed)
    batch_size = _checks.positive_int("batch_size", batch_size)
    rng = _data_rngs(seed)[0]
    while True:
        yield make_batch(batch_size, rng=rng)


def held_out_set(seed: int = 0, size: int = HELD_OUT) -> Batch:
    """The held-out examples of ``seed`` on which a run's final :class:`Metrics` are measured.

    >>> held_out_set(0).x.shape
    (2000, 16)
    """
    return make_batch(_checks.positive_int("size", size), rng=_data_rngs(_seed(seed))[1])


# -- arms: what differs between the models compared ---------------------------------------
class Arm(NamedTuple):
    """How one arm sets up the model, as powers of ``d_k``.

    - ``scale``: the factor on ``q . k`` (the :mod:`sdpa_helpers.scales` vocabulary);
    - ``init_q``, ``init_k``: ``W_Q`` starts at ``d_k**init_q`` times :func:`starting_weights`'s
      ``W_Q`` (the same for ``W_K``);
    - ``lr_q``, ``lr_k``: ``W_Q`` is trained with learning rate ``d_k**lr_q`` times the run's
      learning rate (the same for ``W_K``).
    """

    name: str
    scale: float | str | None
    init_q: float = 0.0
    init_k: float = 0.0
    lr_q: float = 0.0
    lr_k: float = 0.0


#: The arms the notebook compares. ``"reparametrised"`` is the unscaled model with the initial
#: weights times ``d_k**(-1/4)`` and learning rate ``eta / sqrt(d_k)``: under SGD it follows the
#: scaled model's trajectory exactly. ``"asymmetric"`` puts the whole ``1/sqrt(d_k)`` into
#: ``W_Q``'s initialisation (as T5 does) and, to match SGD on the scaled model, trains ``W_Q``
#: with ``eta / d_k``.
ARMS = {arm.name: arm for arm in (
    Arm("scaled", "sqrt"),
    Arm("unscaled", "unscaled"),
    Arm("reparametrised", "unscaled", -0.25, -0.25, -0.5, -0.5),
    Arm("asymmetric", "unscaled", -0.5, 0.0, -1.0, 0.0),
)}


def _check_arm(arm) -> Arm:
    if isinstance(arm, str):
        if arm not in ARMS:
            raise ValueError(f"arms must name one of {', '.join(map(repr, ARMS))} or be an Arm, got {arm!r}")
        return ARMS[arm]
    if not isinstance(arm, Arm):
        raise TypeError(f"arms must hold names from ARMS or Arm tuples, got {arm!r}")
    scale_factor(arm.scale, 4, name="arm.scale")
    for field in ("init_q", "init_k", "lr_q", "lr_k"):
        _checks.real(f"arm.{field}", getattr(arm, field))
    return arm


# -- the batched trainer ------------------------------------------------------------------
class History(NamedTuple):
    """The record of one training run, one entry per step (measured before that step's update).

    ``loss``, ``accuracy``, ``entropy``: on the step's fresh batch; ``grad_norm_q``,
    ``grad_norm_k``: ``||dL/dW_Q||_F``, ``||dL/dW_K||_F``. ``final``: :class:`Metrics` of the
    trained weights on the seed's held-out set; ``weights``: the trained weights (or None).
    """

    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    grad_norm_q: np.ndarray
    grad_norm_k: np.ndarray
    final: Metrics
    weights: Weights | None


class Runs(NamedTuple):
    """Many training runs at once: every record has leading axes (seed, arm, learning rate).

    ``loss``, ``accuracy``, ``entropy``, ``grad_norm_q``, ``grad_norm_k``: shape
    (S, A, L, steps); ``final``: :class:`Metrics` of arrays (S, A, L) on each seed's held-out
    set; ``diverged``: (S, A, L) the step after which a run's weights left the floats (0 =
    never; its later records are NaN); ``weights``: the trained weights, arrays
    (S, A, L, d_k, d_in), or None.
    """

    d_k: int
    seeds: tuple
    arms: tuple
    lrs: tuple
    optimizer: str
    method: str
    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    grad_norm_q: np.ndarray
    grad_norm_k: np.ndarray
    final: Metrics
    diverged: np.ndarray
    weights: Weights | None

    def run_index(self, seed=None, arm="scaled", lr=None) -> tuple[int, int, int]:
        """The (seed, arm, lr) index of one run; ``None`` means the only (or first) seed / lr.

        (Not called ``index``: a NamedTuple already has ``tuple.index``.)
        """
        names = [a.name for a in self.arms]
        i = 0 if seed is None else self.seeds.index(seed)
        j = names.index(arm if isinstance(arm, str) else arm.name)
        k = 0 if lr is None else self.lrs.index(lr)
        return i, j, k

    def history(self, seed=None, arm="scaled", lr=None) -> History:
        """One run's :class:`History`."""
        idx = self.run_index(seed, arm, lr)
        weights = None if self.weights is None else Weights(self.weights.W_Q[idx], self.weights.W_K[idx])
        return History(self.loss[idx], self.accuracy[idx], self.entropy[idx], self.grad_norm_q[idx],
                       self.grad_norm_k[idx], Metrics(*(float(np.asarray(m)[idx]) for m in self.final)), weights)

    def steps_to(self, threshold: float = 0.9, window: int = 10) -> np.ndarray:
        """:func:`steps_to_accuracy` of every run, shape (S, A, L); NaN where a run never gets there."""
        return steps_to_accuracy(self.accuracy, threshold, window, never=np.nan)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays of these runs."""
        arrays = [*self[6:11], *self.final, self.diverged, *(self.weights or ())]
        return int(sum(a.nbytes for a in arrays))


def _mm(a, b):
    """Batched ``a @ b`` by einsum: the same bits on every CPU (BLAS kernels differ in the last bit)."""
    return np.einsum("...ij,...jk->...ik", a, b)


def _tr(a):
    return np.swapaxes(a, -1, -2)


def _batched_step(A, x, keys, target, s, gain):
    """Per-run loss, accuracy, entropy, ``G = dL/dA`` for ``A = W_Q^T W_K`` of shape (S, R, d, d), and
    whether each run's logits were finite.

    ``x`` (S, B, d), ``keys`` (S, B, n, d), ``target`` (S, B): one batch per seed; ``s`` (R,).
    """
    B = x.shape[1]
    u = np.einsum("sbi,srij->srbj", x, A)  # x^T A: (S, R, B, d)
    z = s[None, :, None, None] * np.einsum("sbnj,srbj->srbn", keys, u)  # z_j = s x^T A y_j
    finite = np.isfinite(z).all(axis=(-1, -2))  # (S, R): False for a run whose logits overflowed
    z = np.where(finite[..., None, None], z, 0.0)
    p = _softmax(z)
    r = _softmax(gain * p)  # class probabilities in key order (see _logit_grads)
    t = np.broadcast_to(target[:, None, :, None], (*r.shape[:3], 1))
    r_t = np.take_along_axis(r, t, axis=-1)[..., 0]
    loss = -np.log(r_t).mean(axis=-1)
    accuracy = (r.argmax(axis=-1) == t[..., 0]).mean(axis=-1)
    entropy = _entropy(p).mean(axis=-1)
    d_p = r
    np.put_along_axis(d_p, t, r_t[..., None] - 1.0, axis=-1)
    d_p *= gain / B
    d_z = _softmax_backward(p, d_p)
    d_y = np.einsum("srbn,sbnj->srbj", d_z, keys)
    G = s[None, :, None, None] * np.einsum("sbi,srbj->srij", x, d_y)
    return loss, accuracy, entropy, G, finite


METHODS = ("gram", "weights")


def train_runs(d_k: int, seeds=(0,), lrs=(1.0,), arms=("scaled", "unscaled"), optimizer: str = "sgd",
               steps: int = STEPS, batch_size: int = BATCH_SIZE, method: str | None = None,
               keep_weights: bool = False) -> Runs:
    """Train many models at once -- every (seed, arm, learning rate) -- with vectorised numpy.

    Each run starts from :func:`starting_weights` ``(d_k, seed)`` times its arm's multipliers and
    sees the batches of :func:`training_batches` ``(seed)``, made step by step (never stored).
    The runs of a seed share the data; the arms of a seed share the initial draw.

    Two exact ways to compute SGD (they agree in exact arithmetic; tested to rounding):

    - ``method="gram"`` (SGD's default): the logits depend on the weights only through
      ``A = W_Q^T W_K`` (d_in x d_in), and an SGD step maps ``(A, C_Q = W_Q^T W_Q,
      C_K = W_K^T W_K)`` to new d_in x d_in matrices::

          A'   = A - eta_K C_Q G - eta_Q G C_K + eta_Q eta_K G A^T G
          C_Q' = C_Q - eta_Q (A G^T + G A^T) + eta_Q^2 G C_K G^T
          C_K' = C_K - eta_K (A^T G + G^T A) + eta_K^2 G^T C_Q G

      with ``G = dL/dA`` (``dL/dW_Q = W_K G^T``, ``dL/dW_K = W_Q G``). A step then costs the
      same at every d_k; the weights themselves are not formed.
    - ``method="weights"``: update ``W_Q``, ``W_K`` themselves (needed for Adam and for
      ``keep_weights``).

    Parameters
    ----------
    d_k : int
    seeds : int or sequence of int >= 0
    lrs : float or sequence of float > 0
    arms : name, :class:`Arm`, or a sequence of them (names from :data:`ARMS`)
    optimizer : {"sgd", "adam"}
        Adam: ``beta1 = 0.9``, ``beta2 = 0.999``, ``eps = 1e-8``, bias-corrected.
    steps, batch_size : int
    method : None, "gram" or "weights"
    keep_weights : bool
        Keep the trained weights in :attr:`Runs.weights` (``method="weights"`` only).

    Returns
    -------
    Runs

    Examples
    --------
    >>> r = train_runs(4, seeds=(0, 1), lrs=(0.3, 1.0), steps=100)
    >>> r.loss.shape, bool((r.final.accuracy[:, 0] > 0.9).all())  # (seeds, arms, lrs, steps)
    ((2, 2, 2, 100), True)
    """
    d_k, seeds, lrs, arms, optimizer, steps, batch_size, method, keep_weights = _check_run_args(
        d_k, seeds, lrs, arms, optimizer, steps, batch_size, method, keep_weights)
    S, A_, L = len(seeds), len(arms), len(lrs)
    R = A_ * L
    s = np.repeat([scale_factor(a.scale, d_k, name="arm.scale") for a in arms], L)  # (R,)
    lr = np.tile(lrs, A_)
    eta_q = lr * np.repeat([float(d_k) ** a.lr_q for a in arms], L)
    eta_k = lr * np.repeat([float(d_k) ** a.lr_k for a in arms], L)
    g_q = np.repeat([float(d_k) ** a.init_q for a in arms], L)[None, :, None, None]
    g_k = np.repeat([float(d_k) ** a.init_k for a in arms], L)[None, :, None, None]
    W0 = [starting_weights(d_k, seed) for seed in seeds]
    WQ = g_q * np.stack([w.W_Q for w in W0])[:, None]  # (S, R, d_k, d_in)
    WK = g_k * np.stack([w.W_K for w in W0])[:, None]
    if method == "gram":
        state = [np.einsum("srdi,srdj->srij", WQ, WK), np.einsum("srdi,srdj->srij", WQ, WQ),
                 np.einsum("srdi,srdj->srij", WK, WK)]  # A, C_Q, C_K
        del WQ, WK
    else:
        state = [WQ, WK]
        moments = [np.zeros_like(WQ), np.zeros_like(WQ), np.zeros_like(WK), np.zeros_like(WK)]
    record = np.full((5, S, R, steps), np.nan)
    alive = np.ones((S, R), bool)
    diverged = np.zeros((S, R), int)
    streams = [training_batches(seed, batch_size) for seed in seeds]
    eq, ek = eta_q[None, :, None, None], eta_k[None, :, None, None]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    with np.errstate(over="ignore", invalid="ignore"):  # overflow = divergence, handled explicitly
        for step in range(1, steps + 1):
            batch = [next(stream) for stream in streams]
            x = np.stack([b.x for b in batch])
            keys = np.stack([b.keys for b in batch])
            target = np.stack([b.target for b in batch])
            if method == "gram":
                A, CQ, CK = state
            else:
                A = np.einsum("srdi,srdj->srij", *state)
            loss, accuracy, entropy, G, finite = _batched_step(np.where(alive[..., None, None], A, 0.0), x, keys,
                                                               target, s, GAIN)
            bad = alive & ~(finite & np.isfinite(A).all(axis=(-1, -2)) & np.isfinite(G).all(axis=(-1, -2)))
            diverged[bad] = step
            alive = alive & ~bad
            G = np.where(alive[..., None, None], G, 0.0)
            if method == "gram":
                m = np.abs(G).max(axis=(-1, -2), keepdims=True)
                m = np.where(m > 0, m, 1.0)
                Gn = G / m  # scale-safe norms: ||W_K G^T||^2 = tr(G C_K G^T), ||W_Q G||^2 = tr(G^T C_Q G)
                CQG, GCK = _mm(CQ, Gn), _mm(Gn, CK)
                nq = m[..., 0, 0] * np.sqrt(np.maximum((GCK * Gn).sum(axis=(-1, -2)), 0.0))
                nk = m[..., 0, 0] * np.sqrt(np.maximum((CQG * Gn).sum(axis=(-1, -2)), 0.0))
                CQG, GCK = m * CQG, m * GCK
                GT, AT = _tr(G), _tr(A)
                GAT = _mm(G, AT)
                ATG = _mm(AT, G)
                new = [A - ek * CQG - eq * GCK + eq * ek * _mm(GAT, G),
                       CQ - eq * (_tr(GAT) + GAT) + eq**2 * _mm(GCK, GT),
                       CK - ek * (ATG + _tr(ATG)) + ek**2 * _mm(GT, CQG)]
            else:
                WQ, WK = state
                grads = [np.einsum("srdj,srij->srdi", WK, G), np.einsum("srdi,srij->srdj", WQ, G)]
                nq, nk = (np.sqrt((g**2).sum(axis=(-1, -2))) for g in grads)
                new = []
                for i, (w, g, eta) in enumerate(zip(state, grads, (eq, ek))):
                    if optimizer == "sgd":
                        new.append(w - eta * g)
                    else:
                        m, v = moments[2 * i], moments[2 * i + 1]
                        m *= beta1
                        m += (1 - beta1) * g
                        v *= beta2
                        v += (1 - beta2) * g * g
                        m_hat, v_hat = m / (1 - beta1**step), v / (1 - beta2**step)
                        new.append(w - eta * m_hat / (np.sqrt(v_hat) + eps))
            for i, rec in enumerate((loss, accuracy, entropy, nq, nk)):
                record[i, ..., step - 1] = np.where(alive, rec, np.nan)
            ok = alive & np.logical_and.reduce([np.isfinite(a).all(axis=(-1, -2)) for a in new])
            fresh = alive & ~ok
            diverged[fresh] = step
            alive = ok
            for old, upd in zip(state, new):  # a diverged run keeps its last finite state, records NaN
                old[...] = np.where(alive[..., None, None], upd, old)
    held = [held_out_set(seed) for seed in seeds]
    A = state[0] if method == "gram" else np.einsum("srdi,srdj->srij", *state)
    with np.errstate(all="ignore"):
        final = _batched_step(np.where(alive[..., None, None], A, 0.0), np.stack([h.x for h in held]),
                              np.stack([h.keys for h in held]), np.stack([h.target for h in held]), s, GAIN)[:3]
    final = Metrics(*(np.where(alive, f, np.nan).reshape(S, A_, L) for f in final))
    weights = Weights(*(w.reshape(S, A_, L, d_k, D_IN) for w in state)) if keep_weights else None
    rec = record.reshape(5, S, A_, L, steps)
    return Runs(d_k, seeds, arms, lrs, optimizer, method, rec[0], rec[1], rec[2], rec[3], rec[4], final,
                diverged.reshape(S, A_, L), weights)


def _as_tuple(name, value, check):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        value = (value,)
    value = tuple(value)
    if not value:
        raise ValueError(f"{name} must not be empty")
    return tuple(check(v) for v in value)


def _check_run_args(d_k, seeds, lrs, arms, optimizer, steps, batch_size, method, keep_weights):
    d_k = _checks.positive_int("d_k", d_k)
    seeds = _as_tuple("seeds", seeds, _seed)
    lrs = _as_tuple("lrs", lrs, lambda v: _checks.positive("lrs", v))
    arms = _as_tuple("arms", arms, _check_arm)
    if isinstance(arms[0], Arm) and len({a.name for a in arms}) != len(arms):
        raise ValueError("arms must have distinct names")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    steps = _checks.positive_int("steps", steps)
    batch_size = _checks.positive_int("batch_size", batch_size)
    if not isinstance(keep_weights, (bool, np.bool_)):
        raise TypeError(f"keep_weights must be True or False, got {keep_weights!r}")
    if method is None:
        method = "gram" if optimizer == "sgd" and not keep_weights else "weights"
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "gram" and (optimizer != "sgd" or keep_weights):
        raise ValueError("method='gram' trains with SGD and does not form the weights: "
                         "use method='weights' for optimizer='adam' or keep_weights=True")
    return d_k, seeds, lrs, arms, optimizer, steps, batch_size, method, bool(keep_weights)


class _ByteCache:
    """A least-recently-used cache bounded by the bytes its values hold, not by their number."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict = OrderedDict()
        self.nbytes = 0

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key, value, nbytes: int) -> None:
        if nbytes > self.max_bytes:
            return  # too big to keep
        self._items[key] = (value, nbytes)
        self.nbytes += nbytes
        while self.nbytes > self.max_bytes:
            _, (_, size) = self._items.popitem(last=False)
            self.nbytes -= size

    def __len__(self):
        return len(self._items)

    def clear(self):
        self._items.clear()
        self.nbytes = 0


#: The cache of :func:`cached_runs`: at most this many bytes of records.
RUNS_CACHE = _ByteCache(64 * 2**20)


def cached_runs(d_k: int, seeds=(0,), lrs=(1.0,), arms=("scaled", "unscaled"), optimizer: str = "sgd",
                steps: int = STEPS, batch_size: int = BATCH_SIZE, method: str | None = None,
                keep_weights: bool = False) -> Runs:
    """:func:`train_runs`, with every argument checked first, then cached (read-only arrays).

    The cache (:data:`RUNS_CACHE`) is bounded by bytes; the arguments are checked before it is
    consulted, so ``cached_runs(8.0)`` raises even after ``cached_runs(8)``.

    >>> cached_runs(4, steps=20) is cached_runs(4, steps=20)
    True
    """
    args = _check_run_args(d_k, seeds, lrs, arms, optimizer, steps, batch_size, method, keep_weights)
    hit = RUNS_CACHE.get(args)
    if hit is not None:
        return hit[0]
    runs = train_runs(*args)
    for a in (*runs[6:11], *runs.final, runs.diverged, *(runs.weights or ())):
        a.setflags(write=False)
    RUNS_CACHE.put(args, runs, runs.nbytes)
    return runs


# -- summaries --------------------------------------------------------------------------
def steps_to_accuracy(accuracy, threshold: float = 0.9, window: int = 10, never=None):
    """The first step ``t`` at which the accuracy averaged over steps ``t-window+1 .. t`` reaches ``threshold``.

    Steps count from 1. For a 1-D record returns an int, or ``never`` if it never does; for an
    array of records (..., steps) returns a float array with ``nan`` where a run never does.

    Examples
    --------
    >>> steps_to_accuracy([0.0, 0.5, 1.0, 1.0, 1.0], threshold=0.9, window=2)
    4
    >>> steps_to_accuracy([0.0, 0.5], window=2) is None
    True
    >>> steps_to_accuracy([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]], window=2).tolist()
    [3.0, nan]
    """
    acc = np.asarray(accuracy, dtype=float)
    if acc.ndim == 0:
        raise ValueError("accuracy must have shape (..., steps), got a scalar")
    acc = _checks.real_array("accuracy", np.nan_to_num(acc, nan=0.0), min_ndim=1, shape_hint="(..., steps)")
    threshold = _checks.real("threshold", threshold)
    window = _checks.positive_int("window", window)
    if acc.shape[-1] < window:
        raise ValueError(f"accuracy must have at least window={window} steps, got shape {acc.shape}")
    c = np.cumsum(np.concatenate([np.zeros(acc.shape[:-1] + (1,)), acc], axis=-1), axis=-1)
    means = (c[..., window:] - c[..., :-window]) / window  # means[i] covers steps i+1 .. i+window
    hit = means >= threshold - 1e-9
    first = np.where(hit.any(axis=-1), hit.argmax(axis=-1) + window, np.nan)
    if acc.ndim == 1:
        return int(first) if np.isfinite(first) else never
    return first


def share_of_examples(norms, mass: float = 0.9) -> float:
    """The smallest fraction of examples whose squared gradient norms add up to ``mass`` of the total.

    About ``mass`` when every example contributes alike; small when a few examples carry
    the whole gradient. Scale-safe: the norms are divided by the largest before squaring.

    Examples
    --------
    >>> share_of_examples(np.ones(10))
    0.9
    >>> share_of_examples([100.0] + [0.001] * 9)
    0.1
    >>> share_of_examples([1e200, 1e200])
    1.0
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


class SeedSummary(NamedTuple):
    """A result over seeds: ``median``, ``low``, ``high`` (range) of the runs that got there, and
    ``never``: how many of ``n`` runs did not."""

    median: float
    low: float
    high: float
    never: int
    n: int

    def __str__(self) -> str:
        if self.never == self.n:
            return f"none of {self.n} within the steps"
        text = f"median {self.median:.4g} (range {self.low:.4g}–{self.high:.4g})"
        return text + (f", {self.never} of {self.n} never" if self.never else "")


def seed_summary(values) -> SeedSummary:
    """Median and range over seeds; NaN entries count as runs that never got there.

    The median is taken over every run with "never" counted as larger than any value (so it is
    NaN -- "never" -- when more than half never got there); the range covers the runs that did.

    >>> str(seed_summary([10, 12, 30, np.nan, 11]))
    'median 12 (range 10–30), 1 of 5 never'
    """
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        raise ValueError("values must not be empty")
    done = v[np.isfinite(v)]
    ordered = np.sort(np.where(np.isfinite(v), v, np.inf))
    n = v.size
    med = ordered[(n - 1) // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
    med = float(med) if np.isfinite(med) else float("nan")
    low, high = (float(done.min()), float(done.max())) if done.size else (float("nan"), float("nan"))
    return SeedSummary(med, low, high, int(n - done.size), int(n))


#: Gradient norms below this are drawn at the bottom edge of a figure's (log) axis.
GRAD_FLOOR = 1e-8


def panel_values(values, field: str) -> np.ndarray:
    """The values a training figure draws for ``field``: gradient norms floored at :data:`GRAD_FLOOR`.

    >>> panel_values([1e-12, 0.5], "grad_norm_q").tolist(), panel_values([0.3], "loss").tolist()
    ([1e-08, 0.5], [0.3])
    """
    if field not in GRID_FIELDS:
        raise ValueError(f"field must be one of {GRID_FIELDS}, got {field!r}")
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"values must be an array of real numbers, got dtype {arr.dtype}")
    y = arr.astype(float)
    if np.isinf(y).any():
        raise ValueError("values must be finite (NaN marks a missing record), got an infinite entry")
    if field == "grad_norm_q":
        if (y < 0).any():
            raise ValueError("values of grad_norm_q are norms and must be >= 0")
        return np.maximum(y, GRAD_FLOOR)
    return y


def rolling_quantiles(values, window: int = 15, quantiles=(0.1, 0.5, 0.9)) -> np.ndarray:
    """Quantiles of ``values`` (..., steps) over a centred window of steps, pooled over the leading axes.

    Entry ``[k, t]`` is quantile ``quantiles[k]`` of every value at steps ``t - window//2 ..
    t + window//2`` (clipped at the ends) of every run; NaN values are ignored. Shape
    (len(quantiles), steps).

    >>> rolling_quantiles(np.arange(10.0), window=3, quantiles=(0.5,))[0, :4].tolist()
    [0.5, 1.0, 2.0, 3.0]
    """
    v = _checks.real_array("values", np.nan_to_num(np.asarray(values, float), nan=0.0), min_ndim=1,
                           shape_hint="(..., steps)")
    v = np.asarray(values, float).reshape(-1, v.shape[-1])
    window = _checks.positive_int("window", window)
    qs = _as_tuple("quantiles", quantiles, lambda q: _checks.real("quantiles", q))
    if any(not 0 <= q <= 1 for q in qs):
        raise ValueError(f"quantiles must lie in [0, 1], got {qs}")
    steps, h = v.shape[-1], window // 2
    padded = np.pad(v, ((0, 0), (h, h)), constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * h + 1, axis=1)  # (runs, steps, window)
    pooled = np.moveaxis(windows, 0, 1).reshape(steps, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN window gives NaN, silently
        return np.nanquantile(pooled, qs, axis=1)


# -- the explorer's grid, computed once and stored with the package --------------------------
#: The grid of runs behind TrainingExplorer (and the notebook's sweeps): d_k, learning rates,
#: seeds, arms. SGD, :data:`STEPS` steps, batch :data:`BATCH_SIZE`.
GRID_D_KS = (4, 16, 64, 256, 1024)
GRID_LRS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
GRID_SEEDS = (0, 1, 2, 3, 4)
GRID_ARMS = ("scaled", "unscaled", "reparametrised")
#: The curves stored per run, in order (``grad_norm_q`` as log10).
GRID_FIELDS = ("loss", "accuracy", "entropy", "grad_norm_q")
GRID_FILE = Path(__file__).with_name("data") / "training_grid.npz"


class Grid(NamedTuple):
    """Every run of the grid: ``curves`` float16 (D, S, A, L, 4, steps) of :data:`GRID_FIELDS`
    (the gradient norm as log10, floored at -30); ``final_accuracy`` (D, S, A, L);
    ``steps_to_90`` (D, S, A, L), NaN = never."""

    d_ks: tuple
    lrs: tuple
    seeds: tuple
    arms: tuple
    curves: np.ndarray
    final_accuracy: np.ndarray
    steps_to_90: np.ndarray

    def runs(self, d_k: int, lr: float) -> Runs:
        """The stored runs at ``(d_k, lr)`` as :class:`Runs` (curves as stored: float16 precision;
        no ``grad_norm_k`` and no final loss or entropy -- NaN)."""
        i, k = self.d_ks.index(d_k), self.lrs.index(lr)
        c = self.curves[i, :, :, k:k + 1].astype(float)  # (S, A, 1, 4, steps)
        loss, accuracy, entropy, log_grad = np.moveaxis(c, 3, 0)
        nan = np.full(loss.shape[:3], np.nan)
        final = Metrics(nan, self.final_accuracy[i, :, :, k:k + 1], nan)
        return Runs(d_k, self.seeds, tuple(ARMS[a] for a in self.arms), (lr,), "sgd", "gram", loss, accuracy,
                    entropy, 10.0**log_grad, np.full_like(loss, np.nan), final, np.zeros(loss.shape[:3], int), None)


def compute_grid(d_ks=GRID_D_KS, lrs=GRID_LRS, seeds=GRID_SEEDS, arms=GRID_ARMS) -> Grid:
    """Train every run of the grid with :func:`cached_runs` (about half a minute) and pack it."""
    curves, final, steps_to = [], [], []
    for d_k in d_ks:
        r = cached_runs(d_k, seeds, lrs, arms)
        with np.errstate(divide="ignore"):
            log_grad = np.maximum(np.log10(r.grad_norm_q), -30.0)
        curves.append(np.stack([r.loss, r.accuracy, r.entropy, log_grad], axis=-2).astype(np.float16))
        final.append(r.final.accuracy)
        steps_to.append(r.steps_to())
    return Grid(tuple(d_ks), tuple(lrs), tuple(seeds), tuple(arms), np.stack(curves),
                np.stack(final), np.stack(steps_to))


def write_grid(path=GRID_FILE) -> Path:
    """Compute the grid and store it (compressed) at ``path``; run when the trainer changes."""
    grid = compute_grid()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, d_ks=grid.d_ks, lrs=grid.lrs, seeds=grid.seeds, arms=np.array(grid.arms),
                        curves=grid.curves, final_accuracy=grid.final_accuracy, steps_to_90=grid.steps_to_90,
                        steps=STEPS, batch_size=BATCH_SIZE)
    return path


_GRID: list = []


def training_grid() -> Grid:
    """The stored grid (:data:`GRID_FILE`, read once), or :func:`compute_grid` if the file is missing."""
    if not _GRID:
        grid = None
        if GRID_FILE.exists():
            with np.load(GRID_FILE) as f:
                meta = (tuple(f["d_ks"].tolist()), tuple(f["lrs"].tolist()), tuple(f["seeds"].tolist()),
                        tuple(f["arms"].tolist()), int(f["steps"]), int(f["batch_size"]))
                if meta == (GRID_D_KS, GRID_LRS, GRID_SEEDS, GRID_ARMS, STEPS, BATCH_SIZE):
                    grid = Grid(*meta[:4], f["curves"], f["final_accuracy"], f["steps_to_90"])
        _GRID.append(grid if grid is not None else compute_grid())
    return _GRID[0]
