"""Training many models of notebook 09 at once: every (seed, arm, learning rate), SGD or Adam.

An *arm* sets the scale on ``q . k`` and the powers of ``d_k`` on its initial weights and learning rates; the
runs of a seed share its starting weights and batches. Unscaled runs at large ``d_k`` are chaotic (a near-tie
flips on a last-bit change): only statistics over seeds are reproducible across CPUs and BLAS libraries.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _checks
from ..scales import scale_factor
from .model import GAIN, Metrics, Weights, logit_gradients, starting_weights
from .task import BATCH_SIZE, D_IN, held_out_set, training_batches

__all__ = ["ADAM_BETAS", "ADAM_EPS", "ARMS", "OPTIMIZERS", "STEPS", "Arm", "History", "Runs", "adam_step", "as_tuple",
           "check_arm", "steps_to_accuracy", "train_runs"]

#: Default number of training steps.
STEPS = 300
#: The optimizers :func:`train_runs` knows. Adam: :func:`adam_step`, beta1 = 0.9, beta2 = 0.999, eps = 1e-8.
OPTIMIZERS = ("sgd", "adam")


class Arm(NamedTuple):
    """How one arm sets up the model: ``scale`` on ``q . k`` (:mod:`sdpa_helpers.scales` vocabulary); ``W_Q`` starts
    at ``d_k**init_q`` times the seed's starting ``W_Q`` and trains with ``d_k**lr_q`` times the learning rate
    (``W_K`` likewise with ``init_k``, ``lr_k``).
    """

    name: str
    scale: float | str | None
    init_q: float = 0.0
    init_k: float = 0.0
    lr_q: float = 0.0
    lr_k: float = 0.0


#: The arms of the notebook. ``"reparametrised"``: unscaled, initial weights times ``d_k**(-1/4)``,
#: learning rate ``eta / sqrt(d_k)`` -- under SGD it follows the scaled model exactly.
#: ``"asymmetric"``: the whole ``1/sqrt(d_k)`` in ``W_Q``'s initialisation (as T5), ``W_Q`` trained
#: with ``eta / d_k``.
ARMS = {arm.name: arm for arm in (
    Arm("scaled", "sqrt"),
    Arm("unscaled", "unscaled"),
    Arm("reparametrised", "unscaled", -0.25, -0.25, -0.5, -0.5),
    Arm("asymmetric", "unscaled", -0.5, 0.0, -1.0, 0.0),
)}


class History(NamedTuple):
    """One run's record, one entry per step (measured on the step's batch, before its update).

    ``grad_norm_q``, ``grad_norm_k``: ``||dL/dW_Q||_F``, ``||dL/dW_K||_F``. ``final``: :class:`Metrics`
    of the trained weights on the seed's held-out set; ``weights``: the trained weights.
    """

    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    grad_norm_q: np.ndarray
    grad_norm_k: np.ndarray
    final: Metrics
    weights: Weights | None


class Runs(NamedTuple):
    """Many runs: every record has leading axes (seed, arm, learning rate).

    ``loss`` … ``grad_norm_k``: (S, A, L, steps); ``final``: :class:`Metrics` of arrays (S, A, L)
    on each seed's held-out set; ``diverged``: (S, A, L) the step at which a run's numbers left
    the floats (0 = never; its later records are NaN); ``weights``: arrays (S, A, L, d_k, d_in).
    """

    d_k: int
    seeds: tuple
    arms: tuple
    lrs: tuple
    optimizer: str
    loss: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    grad_norm_q: np.ndarray
    grad_norm_k: np.ndarray
    final: Metrics
    diverged: np.ndarray
    weights: Weights | None

    def history(self, seed=None, arm="scaled", lr=None) -> History:
        """One run's :class:`History`; ``None`` means the first seed / learning rate."""
        i = 0 if seed is None else self.seeds.index(seed)
        j = [a.name for a in self.arms].index(arm if isinstance(arm, str) else arm.name)
        idx = (i, j, 0 if lr is None else self.lrs.index(lr))
        return History(self.loss[idx], self.accuracy[idx], self.entropy[idx], self.grad_norm_q[idx],
                       self.grad_norm_k[idx], Metrics(*(float(np.asarray(m)[idx]) for m in self.final)),
                       None if self.weights is None else Weights(self.weights.W_Q[idx], self.weights.W_K[idx]))

    def steps_to(self, threshold: float = 0.9, window: int = 10) -> np.ndarray:
        """:func:`steps_to_accuracy` of every run, shape (S, A, L); NaN where a run never gets there."""
        return steps_to_accuracy(self.accuracy, threshold, window, never=np.nan)


def steps_to_accuracy(accuracy, threshold: float = 0.9, window: int = 10, never=None):
    """The first step ``t`` (from 1) at which the accuracy averaged over steps ``t-window+1 .. t`` reaches
    ``threshold``: an int (or ``never``) for a 1-D record, a float array with NaN for records (..., steps).
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


def check_arm(arm) -> Arm:
    """An :class:`Arm`, or the arm of :data:`ARMS` that ``arm`` names."""
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


def as_tuple(name: str, value, check) -> tuple:
    """``value`` (one item or a sequence) as a non-empty tuple of ``check(item)``."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        value = (value,)
    value = tuple(value)
    if not value:
        raise ValueError(f"{name} must not be empty")
    return tuple(check(v) for v in value)


def _check_run_args(d_k, seeds, lrs, arms, optimizer, steps, batch_size):
    d_k = _checks.d_k("d_k", d_k)
    seeds = as_tuple("seeds", seeds, lambda v: _checks.seed("seeds", v))
    lrs = as_tuple("lrs", lrs, lambda v: _checks.positive("lrs", v))
    arms = as_tuple("arms", arms, check_arm)
    if len({a.name for a in arms}) != len(arms):
        raise ValueError("arms must have distinct names")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    return (d_k, seeds, lrs, arms, optimizer, _checks.positive_int("steps", steps),
            _checks.positive_int("batch_size", batch_size))


def _per_run(arms, L, value) -> np.ndarray:
    """``value(arm)`` for each run of the flattened (arm, lr) axis: shape (A L,)."""
    return np.repeat([value(a) for a in arms], L)


#: Adam's decay rates of its running mean of the gradient and of its square (Kingma and Ba's defaults).
ADAM_BETAS = (0.9, 0.999)
#: Adam's epsilon, added to the root-mean-square before dividing.
ADAM_EPS = 1e-8


def adam_step(w, g, eta, moments, step: int, betas=ADAM_BETAS, eps: float = ADAM_EPS):
    """One Adam update (D. P. Kingma, J. Ba, arXiv:1412.6980, Algorithm 1): the new weights
    ``w - eta m_hat / (sqrt(v_hat) + eps)``, entry by entry.

    ``moments`` is the pair ``[m, v]`` of running means of ``g`` and ``g**2`` (start at zeros), updated in place;
    ``step`` counts from 1; ``m_hat = m / (1 - beta1**step)``, ``v_hat = v / (1 - beta2**step)`` undo the
    zero start. No input checks (the trainer's inner loop).
    """
    (beta1, beta2), (m, v) = betas, moments
    m *= beta1
    m += (1 - beta1) * g
    v *= beta2
    v += (1 - beta2) * g * g
    return w - eta * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)


def train_runs(d_k: int, seeds=(0,), lrs=(1.0,), arms=("scaled", "unscaled"), optimizer: str = "sgd",
               steps: int = STEPS, batch_size: int = BATCH_SIZE) -> Runs:
    """Train every (seed, arm, learning rate) at once (vectorised); ``seeds``, ``lrs``, ``arms`` one item or a
    sequence (arms: names of :data:`ARMS` or :class:`Arm`). A run that overflows is marked in ``diverged`` and keeps
    its last finite weights.
    """
    d_k, seeds, lrs, arms, optimizer, steps, batch_size = _check_run_args(
        d_k, seeds, lrs, arms, optimizer, steps, batch_size)
    S, A_, L = len(seeds), len(arms), len(lrs)
    s = _per_run(arms, L, lambda a: scale_factor(a.scale, d_k, name="arm.scale"))  # (R,)
    eta = [(np.tile(lrs, A_) * _per_run(arms, L, lambda a, p=p: float(d_k) ** getattr(a, p)))[None, :, None, None]
           for p in ("lr_q", "lr_k")]
    W0 = [starting_weights(d_k, seed) for seed in seeds]
    state = [_per_run(arms, L, lambda a, p=p: float(d_k) ** getattr(a, p))[None, :, None, None]
             * np.stack([getattr(w, W) for w in W0])[:, None] for p, W in (("init_q", "W_Q"), ("init_k", "W_K"))]
    moments = [[np.zeros_like(w), np.zeros_like(w)] for w in state]
    record = np.full((5, S, A_ * L, steps), np.nan)
    alive, diverged = np.ones((S, A_ * L), bool), np.zeros((S, A_ * L), int)
    streams = [training_batches(seed, batch_size) for seed in seeds]
    for step in range(1, steps + 1):
        batch = [next(stream) for stream in streams]
        x, keys, target = (np.stack([getattr(b, f) for b in batch]) for f in ("x", "keys", "target"))
        WQ, WK = state
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is a divergence, marked below
            lg = logit_gradients(np.swapaxes(WQ, -1, -2) @ WK, x, keys, target, s, GAIN)
            G = lg.d_A
            grads = [WK @ np.swapaxes(G, -1, -2), WQ @ G]  # dL/dW_Q = W_K G^T, dL/dW_K = W_Q G
            norms = [np.sqrt((g**2).sum(axis=(-1, -2))) for g in grads]
            new = [w - e * g if optimizer == "sgd" else adam_step(w, g, e, m, step)
                   for w, g, e, m in zip(state, grads, eta, moments)]
        ok = alive & lg.finite & np.logical_and.reduce([np.isfinite(a).all(axis=(-1, -2)) for a in new]
                                                         + [np.isfinite(n) for n in norms])
        for i, rec in enumerate((lg.loss, lg.accuracy, lg.entropy, *norms)):
            record[i, ..., step - 1] = np.where(alive & lg.finite, rec, np.nan)
        diverged[alive & ~ok] = step
        alive = ok
        state = new if alive.all() else [np.where(alive[..., None, None], n, w) for n, w in zip(new, state)]
    return _finish(d_k, seeds, arms, lrs, optimizer, state, s, record, diverged, alive)


def _finish(d_k, seeds, arms, lrs, optimizer, state, s, record, diverged, alive) -> Runs:
    """Pack the records and measure the trained weights on each seed's held-out set."""
    S, A_, L = len(seeds), len(arms), len(lrs)
    held = [held_out_set(seed) for seed in seeds]
    x, keys, target = (np.stack([getattr(h, f) for h in held]) for f in ("x", "keys", "target"))
    with np.errstate(all="ignore"):
        A = np.where(alive[..., None, None], np.swapaxes(state[0], -1, -2) @ state[1], 0.0)
    lg = logit_gradients(A, x, keys, target, s, GAIN)
    final = Metrics(*(np.where(alive & lg.finite, f, np.nan).reshape(S, A_, L) for f in lg[:3]))
    rec = record.reshape(5, S, A_, L, -1)
    weights = Weights(*(w.reshape(S, A_, L, d_k, D_IN) for w in state))
    return Runs(d_k, seeds, arms, lrs, optimizer, rec[0], rec[1], rec[2], rec[3], rec[4], final,
                diverged.reshape(S, A_, L), weights)
