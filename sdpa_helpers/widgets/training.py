"""Explorer for notebook 09: pick d_k and the learning rate, see the scaled and unscaled runs.

Every run is computed once (SGD, 300 steps, seed 0) with :func:`sdpa_helpers.training.run`,
which caches; the first explorer precomputes the whole grid (a few seconds), and a slider
move afterwards only swaps line data.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..plots import SCALED, UNSCALED
from ..plots.training import PANELS, _curve, _decorate
from ..training import STEPS, run, steps_to_accuracy
from . import Explorer

__all__ = ["TrainingExplorer", "D_KS", "LEARNING_RATES"]

#: The precomputed d_k values and learning rates (the notebook's grid).
D_KS = (4, 16, 64, 256, 1024)
LEARNING_RATES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)


def _slider(options, value, description):
    return W.SelectionSlider(options=list(options), value=value, description=description,
                             continuous_update=True, style={"description_width": "initial"},
                             layout=W.Layout(width="360px"))


def _fmt_steps(steps) -> str:
    return f"step {steps}" if steps is not None else f"never within {STEPS} steps"


class TrainingExplorer(Explorer):
    """Loss, accuracy, attention entropy and ``||dL/dW_Q||`` over training, scaled vs unscaled."""

    figsize = (11.0, 3.0)
    main = "d_k"

    def __init__(self, **values):
        for d_k in D_KS:  # precompute the grid once (cached in sdpa_helpers.training.run)
            for lr in LEARNING_RATES:
                for scaled in (True, False):
                    run(d_k, scaled, lr)
        super().__init__(**values)

    def _controls(self):
        return {"d_k": _slider(D_KS, 1024, "d_k"), "lr": _slider(LEARNING_RATES, 1.0, "learning rate")}

    def _setup(self, fig):
        self.axes = fig.subplots(1, len(PANELS))
        steps = np.arange(1, STEPS + 1)
        self.lines = {}
        for scaled, spec in ((True, SCALED), (False, UNSCALED)):
            self.lines[scaled] = [ax.plot(steps, np.full(STEPS, np.nan), color=spec["color"],
                                          linestyle=spec["linestyle"], lw=1.2, label=spec["label"],
                                          animated=True)[0] for ax in self.axes]
        for ax, (field, label, ylim, log) in zip(self.axes, PANELS):
            _decorate(ax, field, label, ylim, log, STEPS)
        self.axes[0].legend(loc="upper right", fontsize=8)
        self.title = fig.suptitle(" ", animated=True)

    def _update(self, d_k, lr):
        found = {}
        for scaled in (True, False):
            h = run(d_k, scaled, lr)
            for line, (field, *_rest) in zip(self.lines[scaled], PANELS):
                line.set_ydata(_curve(h, field))
            found[scaled] = steps_to_accuracy(h.accuracy)
        self.title.set_text(f"$d_k$ = {d_k}, learning rate {lr:g} (SGD, batch 64)")
        return (f"90% accuracy: scaled at {_fmt_steps(found[True])}, "
                f"unscaled at {_fmt_steps(found[False])}. "
                f"Held-out accuracy after {STEPS} steps: scaled {run(d_k, True, lr).final.accuracy:.3f}, "
                f"unscaled {run(d_k, False, lr).final.accuracy:.3f}.")
