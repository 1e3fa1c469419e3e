"""Explorer of notebook 09: pick d_k, the learning rate and the seed; see the three arms train.

It reads the stored grid (:func:`sdpa_helpers.training.training_grid`) and trains nothing:
building it and moving a control only swap line data.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np
from matplotlib.ticker import LogFormatter

from ..plots.training import ARM_STYLES, PANELS, decorate_panel
from ..training import FIELDS, STEPS, panel_values, seed_summary, training_grid
from . import Explorer

__all__ = ["TrainingExplorer"]


#: Labels without mathtext (parsing the first formula costs a fresh kernel most of a second).
_PLAIN = {"loss": "loss L", "grad_norm_q": "‖∂L/∂W_Q‖ (floored at 1e-8)", "scaled": "scaled by 1/√d_k",
          "unscaled": "unscaled",
          "reparametrised": "unscaled, reparametrised (d_k^(-1/4) init, η/√d_k)"}


def _slider(options, value, description):
    return W.SelectionSlider(options=list(options), value=value, description=description,
                             continuous_update=True, style={"description_width": "initial"},
                             layout=W.Layout(width="300px"))


def _fmt_steps(steps) -> str:
    return f"{int(steps)}" if np.isfinite(steps) else "never"


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
        self.axes = fig.subplots(1, len(PANELS))
        steps = np.arange(1, STEPS + 1)
        self.lines = {}
        for arm in self.grid.arms:
            spec = ARM_STYLES[arm]
            self.lines[arm] = [ax.plot(steps, np.full(STEPS, np.nan), color=spec["color"],
                                       linestyle=spec["linestyle"], lw=1.2, label=spec["label"],
                                       animated=True)[0] for ax in self.axes]
        for ax, (field, label, ylim, log) in zip(self.axes, PANELS):
            decorate_panel(ax, field, _PLAIN.get(field, label), ylim, log, STEPS)
            if log:
                ax.yaxis.set_major_formatter(LogFormatter())  # plain "1e-08": no mathtext parser at build
        fig.legend(list(self.lines[arm][0] for arm in self.grid.arms), [_PLAIN[arm] for arm in self.grid.arms],
                   loc="outside lower center", ncol=3, fontsize=8)
        fig.suptitle("one training run of each arm (SGD, batch 64; the setting is named below)")

    def _update(self, **values) -> str:
        g = self.grid
        d_k, lr, seed = values["d_k"], values["lr"], values["seed"]
        i, k, s = g.d_ks.index(d_k), g.lrs.index(lr), g.seeds.index(seed)
        parts = []
        for a, arm in enumerate(g.arms):
            curves = g.curves[i, s, a, k].astype(float)
            for line, field, y in zip(self.lines[arm], FIELDS, curves):
                line.set_ydata(panel_values(10.0**y if field == "grad_norm_q" else y, field))
            over_seeds = seed_summary(g.steps_to_90[i, :, a, k])
            parts.append(f"{arm}: step {_fmt_steps(g.steps_to_90[i, s, a, k])} "
                         f"(all seeds: {over_seeds.n - over_seeds.never} of {over_seeds.n} get there)")
        return f"<b>d_k = {d_k}, learning rate {lr:g}, seed {seed}</b>. 90% accuracy — " + "; ".join(parts) + "."
