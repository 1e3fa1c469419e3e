"""The retrieval task of notebook 09: ``n_keys`` keys ``y_j`` in ``R^d_in`` with distinct labels ``c_j`` and a
query ``x``; the first ``d_addr`` components are an address (a code ``+-2 e_i``, distinct within an example),
the rest N(0, 1) noise. The query carries the target key's address; the answer is ``c_t``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from .. import _checks
from ..sampling import make_rng

__all__ = ["BATCH_SIZE", "D_ADDR", "D_IN", "HELD_OUT", "N_KEYS", "Batch", "address_codes", "check_batch",
           "held_out_set", "make_batch", "training_batches"]

#: Keys per example (also the number of classes: every key has its own label).
N_KEYS = 8
#: Length of the input vectors x and y_j.
D_IN = 16
#: How many leading components of each input carry the address.
D_ADDR = 4
#: Default batch size of a training step.
BATCH_SIZE = 64
#: Examples in the held-out set of each seed.
HELD_OUT = 2000


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
    """The ``2 d_addr`` address codes ``+2 e_i`` and ``-2 e_i``, shape (2 d_addr, d_addr): over a random code each
    component has mean 0 and variance ``4 / d_addr`` (1 at ``d_addr = 4``).
    """
    d_addr = _checks.positive_int("d_addr", d_addr)
    eye = 2.0 * np.eye(d_addr)
    return np.concatenate([eye, -eye])


def make_batch(batch_size: int, n_keys: int = N_KEYS, d_in: int = D_IN, d_addr: int = D_ADDR,
               rng=None) -> Batch:
    """Draw ``batch_size`` examples of the retrieval task (see the module docstring).

    ``n_keys`` is at most ``2 d_addr`` (the addresses of one example are distinct) and
    ``d_addr`` at most ``d_in``; ``rng`` is None, an int or a Generator.
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


def _check_index_array(name: str, arr: np.ndarray, shape: tuple, n: int) -> None:
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{name} must lie in 0..{n - 1} (n_keys = {n}), got values from {arr.min()} to {arr.max()}")


def check_batch(batch, name: str = "batch") -> Batch:
    """Validate a :class:`Batch` where it enters a function: shapes, labels, finiteness."""
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
    _check_index_array(f"{name}.labels", labels, (B, n), n)
    _check_index_array(f"{name}.target", target, (B,), n)
    if B and not np.array_equal(np.sort(labels, axis=1), np.broadcast_to(np.arange(n), (B, n))):
        raise ValueError(f"{name}.labels must hold a permutation of 0..{n - 1} in every row")
    return Batch(x, keys, labels, target)


def _data_rngs(seed: int):
    data_seq, eval_seq = np.random.SeedSequence([seed, 1]).spawn(2)
    return np.random.default_rng(data_seq), np.random.default_rng(eval_seq)


def training_batches(seed: int = 0, batch_size: int = BATCH_SIZE) -> Iterator[Batch]:
    """The training batches of ``seed``, one per step, made as asked for (an endless stream): every run with the
    same seed sees the same batches, and nothing is stored.
    """
    seed = _checks.seed("seed", seed)
    batch_size = _checks.positive_int("batch_size", batch_size)
    rng = _data_rngs(seed)[0]
    while True:
        yield make_batch(batch_size, rng=rng)


def held_out_set(seed: int = 0, size: int = HELD_OUT) -> Batch:
    """The held-out examples of ``seed`` on which a run's final metrics are measured."""
    return make_batch(_checks.positive_int("size", size), rng=_data_rngs(_checks.seed("seed", seed))[1])
