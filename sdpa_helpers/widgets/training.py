"""Explorer of notebook 09: pick d_k, the learning rate and the seed; see the three arms train.

It reads the stored grid (:func:`sdpa_helpers.training.training_grid`) and trains nothing:
building it and moving a control only swap line data.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..plots.training import PANELS, TrainingPanels
from ..training import STEPS, seed_summary, training_grid
from . import Explorer

__all__ = ["TrainingExplorer"]


def _slider(options, value, description):
    return W.SelectionSlider(options=list(options), value=value, description=description,
                             continuous_update=True, style={"description_width": "initial"},
                             layout=W.Layout(width="300px"))


class TrainingExplorer(Explorer):
    """Loss, accuracy, attention entropy and ``||dL/dW_Q||`` over training, for three arms:
    scaled, unscaled, and unscaled reparametrised (``d_k^(-1/4)`` init, learning rate ``eta/sqrt(d_k)``)."""

    figsize = (11.0, 3.4)
    main = "d_k"

    def __init__(self, **values):
        self.grid = training_grid()
        super().__init__(**values)

    def _controls(self):
        g = self.grid
        return {"d_k": _slider(g.d_ks, 1024, "d_k"), "lr": _slider(g.lrs, 1.0, "learning rate η"),
                "seed": _slider(g.seeds, g.seeds[0], "seed")}

    def _setup(self, fig):
        self.panels = TrainingPanels(fig.subplots(1, len(PANELS)), self.grid.arms, STEPS, plain=True, animated=True)
        fig.legend(*self.panels.legend_entries(), loc="outside lower center", ncol=3, fontsize=8)
        fig.suptitle("one training run of each arm (SGD, batch 64)")

    def _update(self, d_k, lr, seed):  # type: ignore[override]
        g = self.grid
        i, k, s = g.d_ks.index(d_k), g.lrs.index(lr), g.seeds.index(seed)
        parts = []
        for a, arm in enumerate(g.arms):
            curves = g.curves[i, s, a, k].astype(float)  # (4, steps), the gradient norm as log10
            curves[3] = 10.0 ** curves[3]
            self.panels.show(arm, curves)
            steps, over_seeds = g.steps_to_90[i, s, a, k], seed_summary(g.steps_to_90[i, :, a, k])
            parts.append(f"{arm}: step {int(steps) if np.isfinite(steps) else 'never'} "
                         f"(all seeds: {over_seeds.n - over_seeds.never} of {over_seeds.n} get there)")
        return f"<b>d_k = {d_k}, learning rate {lr:g}, seed {seed}</b>. 90% accuracy — " + "; ".join(parts) + "."
