"""Part 3 of the answer under Adam: the stored Adam grid of notebook 09 (``sdpa_helpers/data/adam_grid.npz``).

The same task, model, backward pass and batches as the SGD grid (:mod:`.grid`), trained with Adam
(:func:`~sdpa_helpers.training.adam_step`) on a grid of Adam learning rates, scaled and unscaled. Regenerate it
with ``python scripts/make_adam_grid.py`` (a few minutes of one core); ``tests/test_training_grid.py`` retrains
part of it. Unscaled runs at large ``d_k`` are chaotic under Adam too, and so is a scaled run once it has learned
(Adam divides its tiny gradients by their own root-mean-square: at ``d_k = 64`` a last-bit change moves its batch
accuracies from about step 125 on, long after it reached 90 %): only results over seeds, and the scaled runs' steps
to 90 %, carry over to another CPU or BLAS.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from .grid import GRID_D_KS, GRID_SEEDS
from .summaries import best_learning_rate
from .task import BATCH_SIZE
from .trainer import STEPS, train_runs

__all__ = ["ADAM_ARMS", "ADAM_D_KS", "ADAM_FILE", "ADAM_LRS", "ADAM_SEEDS", "AdamGrid", "adam_grid",
           "compute_adam_grid", "write_adam_grid"]

ADAM_D_KS = GRID_D_KS
#: Adam's learning rates, about 3x apart; at every d_k both models' best lies inside (tests/test_training_grid.py).
ADAM_LRS = (3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3)
ADAM_SEEDS = GRID_SEEDS
ADAM_ARMS = ("scaled", "unscaled")
ADAM_FILE = Path(__file__).resolve().parent.parent / "data" / "adam_grid.npz"
#: Seeds trained together in one call (bounds the memory at d_k = 1024).
_CHUNK = 5


class AdamGrid(NamedTuple):
    """Every Adam run, arrays with leading axes (d_k, seed, arm, learning rate).

    ``accuracy`` float16 (D, S, A, L, steps): each step's batch accuracy (multiples of 1/64, exact; NaN after a
    divergence); ``final_accuracy`` (D, S, A, L) on each seed's held-out set; ``steps_to_90`` (D, S, A, L),
    NaN = never (:func:`~sdpa_helpers.training.steps_to_accuracy`, as in the SGD grid).
    """

    d_ks: tuple
    lrs: tuple
    seeds: tuple
    arms: tuple
    accuracy: np.ndarray
    final_accuracy: np.ndarray
    steps_to_90: np.ndarray

    def steps(self, d_k: int, arm: str) -> np.ndarray:
        """Steps to 90 % of one arm at ``d_k``: shape (seeds, learning rates), NaN = never."""
        if d_k not in self.d_ks:
            raise ValueError(f"d_k must be one of the Adam grid's {self.d_ks}, got {d_k!r}")
        if arm not in self.arms:
            raise ValueError(f"arm must be one of the Adam grid's {self.arms}, got {arm!r}")
        return self.steps_to_90[self.d_ks.index(d_k), :, self.arms.index(arm)]

    def best(self, d_k: int, arm: str) -> tuple[float, np.ndarray]:
        """The arm's best Adam learning rate at ``d_k`` (:func:`best_learning_rate`: the smallest median steps to
        90 %) and its runs' steps to 90 %."""
        lr = best_learning_rate(self.steps(d_k, arm), self.lrs)
        return lr, self.steps(d_k, arm)[:, self.lrs.index(lr)]


def compute_adam_grid(d_ks=ADAM_D_KS, lrs=ADAM_LRS, seeds=ADAM_SEEDS, arms=ADAM_ARMS) -> AdamGrid:
    """Train every run of the Adam grid (:func:`train_runs` with ``optimizer="adam"``, 300 steps) and pack it."""
    seeds = tuple(seeds)
    parts = []
    for d_k in d_ks:
        chunks = [train_runs(d_k, seeds[i:i + _CHUNK], lrs, arms, optimizer="adam")
                  for i in range(0, len(seeds), _CHUNK)]
        parts.append([np.concatenate(f) for f in zip(*((r.accuracy.astype(np.float16), r.final.accuracy,
                                                        r.steps_to()) for r in chunks))])
    accuracy, final, steps = (np.stack(field) for field in zip(*parts))
    return AdamGrid(tuple(d_ks), tuple(lrs), seeds, tuple(arms), accuracy, final, steps)


def write_adam_grid(path=ADAM_FILE, grid: AdamGrid | None = None) -> Path:
    """Store ``grid`` (default: :func:`compute_adam_grid`) compressed at ``path``."""
    grid = compute_adam_grid() if grid is None else grid
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, d_ks=grid.d_ks, lrs=grid.lrs, seeds=grid.seeds, arms=np.array(grid.arms),
                        accuracy=grid.accuracy.astype(np.float16),
                        final_accuracy=grid.final_accuracy.astype(np.float32),
                        steps_to_90=grid.steps_to_90.astype(np.float32), steps=STEPS, batch_size=BATCH_SIZE)
    return path


_ADAM: list = []


def adam_grid() -> AdamGrid:
    """The stored Adam grid (:data:`ADAM_FILE`, read once; its arrays read-only and shared by every caller); an
    error if it is missing or out of date."""
    if not _ADAM:
        with np.load(ADAM_FILE) as f:
            meta = (tuple(f["d_ks"].tolist()), tuple(f["lrs"].tolist()), tuple(f["seeds"].tolist()),
                    tuple(f["arms"].tolist()))
            if meta + (int(f["steps"]), int(f["batch_size"])) != (ADAM_D_KS, ADAM_LRS, ADAM_SEEDS, ADAM_ARMS,
                                                                  STEPS, BATCH_SIZE):
                raise ValueError(f"{ADAM_FILE.name} does not match the Adam grid's settings: "
                                 "regenerate it with python scripts/make_adam_grid.py")
            arrays = (f["accuracy"], f["final_accuracy"].astype(float), f["steps_to_90"].astype(float))
        for a in arrays:
            a.flags.writeable = False
        _ADAM.append(AdamGrid(*meta, *arrays))
    return _ADAM[0]
