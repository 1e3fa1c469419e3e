"""The stored grid of notebook 09: every run of d_k x learning rate x seed x arm, trained once.

Regenerate it (after any change to the task, the model or the trainer) with ``python -m sdpa_helpers.training.grid``.
Another CPU or BLAS gives other chaotic (unscaled, large d_k) runs; ``tests/test_training_grid.py`` checks what the
notebook reads.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import _checks
from .model import Metrics
from .summaries import FIELDS, best_learning_rate
from .task import BATCH_SIZE
from .trainer import ARMS, STEPS, Arm, Runs, train_runs

__all__ = ["GRID_ARMS", "GRID_D_KS", "GRID_FILE", "GRID_LRS", "GRID_SEEDS", "NUDGE", "Grid", "compute_grid",
           "grid_seed", "nudged_arm", "training_grid", "write_grid"]

GRID_D_KS = (4, 16, 64, 256, 1024)
GRID_LRS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
GRID_SEEDS = tuple(range(25))
GRID_ARMS = ("scaled", "unscaled", "reparametrised")
#: How much the "nudged" twin of the unscaled arm multiplies its initial W_Q.
NUDGE = 1e-12
GRID_FILE = Path(__file__).resolve().parent.parent / "data" / "training_grid.npz"
#: Seeds trained together in one call (bounds the memory at d_k = 1024).
_CHUNK = 5


def grid_seed(seed, name: str = "seed") -> int:
    """``seed`` if the stored grid holds its runs (:data:`GRID_SEEDS`), else a ValueError naming ``name`` (the
    notebook passes ``"SEED"``) and the seeds the grid holds.

    >>> try:
    ...     grid_seed(42, name="SEED")
    ... except ValueError as e:
    ...     print(str(e)[:55])
    SEED = 42 is not one of the stored grid's seeds 0–24: n
    """
    value = _checks.seed(name, seed)
    if value not in GRID_SEEDS:
        lo, hi = GRID_SEEDS[0], GRID_SEEDS[-1]
        raise ValueError(f"{name} = {value} is not one of the stored grid's seeds {lo}–{hi}: notebook 09 reads its "
                         f"training runs from the grid, so set {name} to a whole number from {lo} to {hi} "
                         "(or retrain with training.train_runs)")
    return value


def nudged_arm(d_k: int) -> Arm:
    """The unscaled arm with its initial ``W_Q`` multiplied by ``1 + NUDGE`` (at this ``d_k``)."""
    return Arm("nudged", "unscaled", init_q=float(np.log1p(NUDGE) / np.log(d_k)))


class Grid(NamedTuple):
    """Every run of the grid, arrays with leading axes (d_k, seed, arm, learning rate).

    ``curves`` float16 (D, S, A, L, 4, steps) of :data:`~sdpa_helpers.training.summaries.FIELDS`
    (the gradient norm as log10, floored at -30); ``final_accuracy`` (D, S, A, L) on each seed's
    held-out set; ``steps_to_90`` (D, S, A, L), NaN = never; ``nudged_steps_to_90`` (D, S, L): the
    unscaled arm again, its initial ``W_Q`` times ``1 + 1e-12``.
    """

    d_ks: tuple
    lrs: tuple
    seeds: tuple
    arms: tuple
    curves: np.ndarray
    final_accuracy: np.ndarray
    steps_to_90: np.ndarray
    nudged_steps_to_90: np.ndarray

    def steps(self, d_k: int, arm: str) -> np.ndarray:
        """Steps to 90 % of one arm at ``d_k``: shape (seeds, learning rates), NaN = never. ``arm`` is
        one of :attr:`arms` or ``"nudged"`` (the unscaled arm's twin, initial ``W_Q`` times ``1 + 1e-12``)."""
        if d_k not in self.d_ks:
            raise ValueError(f"d_k must be one of the grid's {self.d_ks}, got {d_k!r}")
        if arm == "nudged":
            return self.nudged_steps_to_90[self.d_ks.index(d_k)]
        if arm not in self.arms:
            raise ValueError(f"arm must be one of {self.arms} or 'nudged', got {arm!r}")
        return self.steps_to_90[self.d_ks.index(d_k), :, self.arms.index(arm)]

    def best(self, d_k: int, arm: str) -> tuple[float, np.ndarray]:
        """The arm's best learning rate at ``d_k`` (:func:`best_learning_rate`: the smallest median steps
        to 90 %) and its runs' steps to 90 % (``arm`` as in :meth:`steps`)."""
        lr = best_learning_rate(self.steps(d_k, arm), self.lrs)
        return lr, self.steps(d_k, arm)[:, self.lrs.index(lr)]

    def runs(self, d_k: int, lr: float) -> Runs:
        """The stored runs at ``(d_k, lr)`` as :class:`Runs` (float16 curves; no ``grad_norm_k``,
        final loss and entropy, or weights)."""
        i, k = self.d_ks.index(d_k), self.lrs.index(lr)
        loss, accuracy, entropy, log_grad = np.moveaxis(self.curves[i, :, :, k:k + 1].astype(float), 3, 0)
        nan = np.full(loss.shape[:3], np.nan)
        final = Metrics(nan, self.final_accuracy[i, :, :, k:k + 1], nan)
        return Runs(d_k, self.seeds, tuple(ARMS[a] for a in self.arms), (lr,), "sgd", loss, accuracy, entropy,
                    10.0**log_grad, np.full_like(loss, np.nan), final, np.zeros(loss.shape[:3], int), None)


def _pack(r: Runs, n_arms: int):
    with np.errstate(divide="ignore"):
        log_grad = np.maximum(np.log10(r.grad_norm_q[:, :n_arms]), -30.0)
    fields = [r.loss, r.accuracy, r.entropy]
    curves = np.stack([f[:, :n_arms] for f in fields] + [log_grad], axis=-2).astype(np.float16)
    steps = r.steps_to()
    return curves, np.asarray(r.final.accuracy)[:, :n_arms], steps[:, :n_arms], steps[:, n_arms]


def compute_grid(d_ks=GRID_D_KS, lrs=GRID_LRS, seeds=GRID_SEEDS, arms=GRID_ARMS) -> Grid:
    """Train every run of the grid (and the nudged twin of the unscaled arm) and pack it."""
    parts = []
    for d_k in d_ks:
        chunks = [train_runs(d_k, seeds[i:i + _CHUNK], lrs, (*arms, nudged_arm(d_k)))
                  for i in range(0, len(seeds), _CHUNK)]
        packed = [_pack(r, len(arms)) for r in chunks]
        parts.append([np.concatenate(field) for field in zip(*packed)])
    curves, final, steps, nudged = (np.stack(field) for field in zip(*parts))
    return Grid(tuple(d_ks), tuple(lrs), tuple(seeds), tuple(arms), curves, final, steps, nudged)


def write_grid(path=GRID_FILE, grid: Grid | None = None) -> Path:
    """Store ``grid`` (default: :func:`compute_grid`) compressed at ``path``."""
    grid = compute_grid() if grid is None else grid
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, d_ks=grid.d_ks, lrs=grid.lrs, seeds=grid.seeds, arms=np.array(grid.arms),
                        curves=grid.curves, final_accuracy=grid.final_accuracy.astype(np.float32),
                        steps_to_90=grid.steps_to_90.astype(np.float32),
                        nudged_steps_to_90=grid.nudged_steps_to_90.astype(np.float32),
                        steps=STEPS, batch_size=BATCH_SIZE, nudge=NUDGE)
    return path


_GRID: list = []


def training_grid() -> Grid:
    """The stored grid (:data:`GRID_FILE`, read once; its arrays read-only, shared by every caller: copy
    one to change it, e.g. ``grid.steps(64, "scaled").copy()``); an error if it is missing or out of date."""
    if not _GRID:
        with np.load(GRID_FILE) as f:
            meta = (tuple(f["d_ks"].tolist()), tuple(f["lrs"].tolist()), tuple(f["seeds"].tolist()),
                    tuple(f["arms"].tolist()))
            if meta + (int(f["steps"]), int(f["batch_size"])) != (GRID_D_KS, GRID_LRS, GRID_SEEDS, GRID_ARMS,
                                                                  STEPS, BATCH_SIZE):
                raise ValueError(f"{GRID_FILE.name} does not match the grid's settings: "
                                 "regenerate it with python -m sdpa_helpers.training.grid")
            arrays = (f["curves"], f["final_accuracy"].astype(float), f["steps_to_90"].astype(float),
                      f["nudged_steps_to_90"].astype(float))
        for a in arrays:  # one grid shared by every caller: read-only, so no caller can change the others'
            a.flags.writeable = False
        _GRID.append(Grid(*meta, *arrays))
    return _GRID[0]


if __name__ == "__main__":
    start = time.perf_counter()
    out = write_grid()
    grid = training_grid()
    print(f"wrote {out} ({out.stat().st_size / 2**20:.2f} MiB) in {time.perf_counter() - start:.0f} s; "
          f"curves {grid.curves.shape}, fields {FIELDS}")
