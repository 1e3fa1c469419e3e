"""Notebook 09's topic: a tiny attention model trained in numpy, with the scale and without.

Four parts, each its own module: :mod:`.task` (the retrieval task and a run's data),
:mod:`.model` (forward and backward pass), :mod:`.trainer` (many runs at once, SGD or Adam),
:mod:`.grid` (the stored grid every figure of the notebook reads), and :mod:`.summaries`
(results over seeds). Their public names are importable from here.
"""

from .grid import (
    GRID_ARMS,
    GRID_D_KS,
    GRID_FILE,
    GRID_LRS,
    GRID_SEEDS,
    NUDGE,
    Grid,
    compute_grid,
    nudged_arm,
    training_grid,
    write_grid,
)
from .model import (
    GAIN,
    Backward,
    Forward,
    LogitGradients,
    Metrics,
    Weights,
    backward,
    check_weights,
    draw_weights,
    evaluate,
    finite_difference_gradient,
    forward,
    ideal_weights,
    init_statistics,
    logit_gradients,
    loss_and_gradients,
    per_example_gradient_norms,
    share_of_examples,
    starting_weights,
)
from .summaries import (
    FIELDS,
    GRAD_FLOOR,
    SeedSummary,
    best_learning_rate,
    panel_values,
    rolling_quantiles,
    seed_summary,
    survival_curve,
    survival_summary,
)
from .task import (
    BATCH_SIZE,
    D_ADDR,
    D_IN,
    HELD_OUT,
    N_KEYS,
    Batch,
    address_codes,
    check_batch,
    held_out_set,
    make_batch,
    training_batches,
)
from .trainer import ARMS, OPTIMIZERS, STEPS, Arm, History, Runs, as_tuple, check_arm, steps_to_accuracy, train_runs

__all__ = [
    "GRID_ARMS", "GRID_D_KS", "GRID_FILE", "GRID_LRS", "GRID_SEEDS", "NUDGE", "Grid", "compute_grid", "nudged_arm",
    "training_grid", "write_grid",
    "GAIN", "Backward", "Forward", "LogitGradients", "Metrics", "Weights", "backward", "check_weights",
    "draw_weights", "evaluate", "finite_difference_gradient", "forward", "ideal_weights", "init_statistics",
    "logit_gradients", "loss_and_gradients", "per_example_gradient_norms", "share_of_examples", "starting_weights",
    "FIELDS", "GRAD_FLOOR", "SeedSummary", "best_learning_rate", "panel_values", "rolling_quantiles",
    "seed_summary", "survival_curve", "survival_summary",
    "BATCH_SIZE", "D_ADDR", "D_IN", "HELD_OUT", "N_KEYS", "Batch", "address_codes", "check_batch", "held_out_set",
    "make_batch", "training_batches",
    "ARMS", "OPTIMIZERS", "STEPS", "Arm", "History", "Runs", "as_tuple", "check_arm", "steps_to_accuracy",
    "train_runs",
]
from .evidence import PARTS, Evidence, course_evidence, format_evidence  # noqa: E402  (notebook 09's last section)

__all__ += ["PARTS", "Evidence", "course_evidence", "format_evidence"]
