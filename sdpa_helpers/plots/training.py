"""Figures of notebook 09: training a tiny attention model with and without the scale. :class:`TrainingPanels`
draws the notebook's small multiples and its explorer (one run, or a summary over seeds, of each arm)."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogFormatter

from ..training import FIELDS, GRAD_FLOOR, N_KEYS, panel_values, rolling_quantiles, survival_curve
from . import OKABE_ITO, SCALING_STYLES, get_axes, new_figure, style

__all__ = ["ARM_STYLES", "PANELS", "GRAD_FLOOR", "N_KEYS_ENTROPY", "TrainingPanels",
           "training_small_multiples", "gradient_histogram", "lr_sweep", "survival_curves", "survival_panels"]

#: Line style of each training arm, keyed by the names of :data:`sdpa_helpers.training.ARMS`.
ARM_STYLES = {
    "scaled": SCALING_STYLES["sqrt"],
    "unscaled": SCALING_STYLES["unscaled"],
    "reparametrised": {"color": OKABE_ITO["black"], "linestyle": ":", "marker": "x",
                       "label": r"unscaled, reparametrised ($d_k^{-1/4}$ init, $\eta/\sqrt{d_k}$)"},
}
#: Labels without mathtext, for the explorer (parsing the first formula costs a fresh kernel most of a second).
PLAIN_LABELS = {"loss": "loss L", "grad_norm_q": "‖∂L/∂W_Q‖ (floored at 1e-8)", "scaled": "scaled by 1/√d_k",
                "unscaled": "unscaled", "reparametrised": "unscaled, reparametrised (d_k^(-1/4) init, η/√d_k)"}

#: The largest attention entropy, ln(N_KEYS) nats (uniform weights over the task's keys).
N_KEYS_ENTROPY = float(np.log(N_KEYS))

#: (field, y label, y limits, log scale) of the four panels drawn for a run, in the order of ``FIELDS``.
PANELS = (
    ("loss", "loss $L$", (0.0, 5.3), False),
    ("accuracy", "accuracy (batch)", (0.0, 1.03), False),
    ("entropy", "attention entropy (nats)", (0.0, 2.2), False),
    ("grad_norm_q", r"$\|\partial L/\partial W_Q\|$" + "\n(floored at 1e-8)", (GRAD_FLOOR / 3, 1e2), True),
)

#: Reference lines (grey, dash-dotted, unlike any arm): field -> (height, label written on it).
REFERENCE_STYLE = {"color": "0.55", "lw": 0.8, "ls": "-."}
REFERENCES = {"accuracy": (0.9, "90 %"), "entropy": (N_KEYS_ENTROPY, f"ln {N_KEYS}: uniform"),
              "grad_norm_q": (GRAD_FLOOR, "floor 1e-8")}


class TrainingPanels:
    """Loss, accuracy, attention entropy and ``||dL/dW_Q||`` against the step on four ``axes`` (one per field of
    :data:`PANELS`), one line per arm (keys of :data:`ARM_STYLES`). ``plain``: labels without mathtext and plain
    log ticks (the explorer's fast first frame); ``animated``: for the explorer's blitting.
    """

    def __init__(self, axes, arms, steps: int, plain: bool = False, animated: bool = False):
        self.axes, self.t = tuple(axes), np.arange(1, steps + 1)
        self.lines: dict = {}
        with style():
            for arm in arms:
                spec = ARM_STYLES[arm]
                self.lines[arm] = [ax.plot(self.t, np.full(steps, np.nan), color=spec["color"], lw=1.2,
                                           linestyle=spec["linestyle"], animated=animated,
                                           label=PLAIN_LABELS[arm] if plain else spec["label"])[0]
                                   for ax in self.axes]
            for ax, (field, label, ylim, log) in zip(self.axes, PANELS):
                if log:
                    ax.set_yscale("log")
                    if plain:
                        ax.yaxis.set_major_formatter(LogFormatter())
                ax.set(xlim=(0, steps), ylim=ylim, xlabel="step",
                       ylabel=PLAIN_LABELS.get(field, label) if plain else label)
                if field in REFERENCES:
                    y, text = REFERENCES[field]
                    ax.axhline(y, **REFERENCE_STYLE)
                    ax.annotate(text, (1.0, y), xycoords=("axes fraction", "data"), xytext=(-2, 2),
                                textcoords="offset points", ha="right", va="bottom", fontsize="x-small",
                                color=REFERENCE_STYLE["color"])

    def show(self, arm: str, curves, bands=None) -> None:
        """Draw one arm: ``curves`` (4, steps) in the order of :data:`PANELS` (gradient norms as they
        are, floored here); ``bands`` (4, 2, steps) of low/high values, filled (static figures only)."""
        spec = ARM_STYLES[arm]
        for i, (line, (field, *_)) in enumerate(zip(self.lines[arm], PANELS)):
            line.set_ydata(panel_values(curves[i], field))
            if bands is not None:
                low, high = (panel_values(b, field) for b in bands[i])
                self.axes[i].fill_between(self.t, low, high, color=spec["color"], alpha=0.18, lw=0)

    def legend_entries(self):
        """(handles, labels) of the arms, once each."""
        return [lines[0] for lines in self.lines.values()], [lines[0].get_label() for lines in self.lines.values()]


def training_small_multiples(runs: dict, d_ks, arms=("scaled", "unscaled", "reparametrised"), lr=None,
                             title: str = "", window: int = 15):
    """One row per quantity, one column per d_k (a :class:`TrainingPanels` each); every arm over its seeds.

    Loss, accuracy, entropy: median over seeds (line) and range (band); the gradient norm (which jumps by orders
    of magnitude): a rolling median over ``window`` steps with its 10-90 % band. ``runs``: d_k ->
    :class:`sdpa_helpers.training.Runs` holding every arm in ``arms``; ``lr`` default the runs' first. Returns the
    Figure.
    """
    d_ks = list(d_ks)
    fig, axes = new_figure(len(PANELS), len(d_ks), figsize=(2.5 * len(d_ks) + 0.6, 7.6), dpi=80, squeeze=False,
                           sharex=True, sharey="row")
    with style():
        for j, d_k in enumerate(d_ks):
            r = runs[d_k]
            k = 0 if lr is None else r.lrs.index(lr)
            names = [a.name for a in r.arms]
            panels = TrainingPanels(axes[:, j], arms, r.loss.shape[-1])
            for arm in arms:
                a = names.index(arm)
                mids, bands = [], []
                for field in FIELDS:
                    y = getattr(r, field)[:, a, k]  # (seeds, steps)
                    if field == "grad_norm_q":
                        low, mid, high = rolling_quantiles(y, window, (0.1, 0.5, 0.9))
                    else:
                        low, mid, high = np.nanmin(y, 0), np.nanmedian(y, 0), np.nanmax(y, 0)
                    mids.append(mid)
                    bands.append((low, high))
                panels.show(arm, mids, bands)
            axes[0, j].set_title(f"$d_k$ = {d_k}")
            for i in range(len(PANELS)):
                if j:
                    axes[i, j].set_ylabel("")
                if i < len(PANELS) - 1:
                    axes[i, j].set_xlabel("")
        fig.legend(*panels.legend_entries(), loc="outside lower center", ncol=len(arms), fontsize=8)
        if title:
            fig.suptitle(title)
    return fig


def gradient_histogram(norms_scaled, norms_unscaled, d_k: int, ax=None):
    """Histogram of per-example ``||dL_b/dW_Q||`` on a log x axis, scaled vs unscaled, each median marked.
    Returns the Axes.
    """
    ax = get_axes(ax, figsize=(6.5, 3.6))
    s = np.asarray(norms_scaled, dtype=float)
    u = np.asarray(norms_unscaled, dtype=float)
    floor = 1e-12
    both = np.maximum(np.concatenate([s, u]), floor)
    edges = np.logspace(np.floor(np.log10(both.min())), np.ceil(np.log10(both.max())), 49)
    with style():
        for data, spec in ((s, ARM_STYLES["scaled"]), (u, ARM_STYLES["unscaled"])):
            counts, _ = np.histogram(np.maximum(data, floor), bins=edges)
            ax.stairs(counts / data.size, edges, color=spec["color"], linestyle=spec["linestyle"], lw=1.6,
                      label=f"{spec['label']} (median {np.median(data):.1e})")
            ax.axvline(np.median(data), color=spec["color"], lw=1.0, ls=spec["linestyle"], alpha=0.7)
        ax.set_xscale("log")
        ax.set(xlabel=r"per-example $\|\partial L_b/\partial W_Q\|$ (values $\leq 10^{-12}$ in the first bin)",
               ylabel="fraction of examples",
               title=f"Gradient of each example at initialisation, $d_k$ = {d_k}")
        ax.legend(loc="upper left")
    return ax


def lr_sweep(lrs, steps_by_arm: dict, max_steps: int, d_k: int, threshold: float = 0.9, ax=None):
    """Steps to ``threshold`` accuracy against the learning rate (log-log): per arm the median over seeds (marker
    and line) and the seeds' range (bar).

    ``steps_by_arm``: arm -> array (seeds, len(lrs)), NaN = not within ``max_steps``; such runs count as slower
    than any; a median that never got there is drawn hollow above ``max_steps``. Returns the Axes.
    """
    ax = get_axes(ax, figsize=(5.5, 3.8))
    lrs = np.asarray(lrs, dtype=float)
    ceiling = 1.5 * max_steps
    with style():
        for arm, steps in steps_by_arm.items():
            spec = ARM_STYLES[arm]
            y = np.where(np.isfinite(steps), steps, np.inf)
            med = np.median(y, axis=0)
            low, high = np.min(y, axis=0), np.max(y, axis=0)
            never = ~np.isfinite(med)
            med = np.where(never, ceiling, med)
            lo = np.where(np.isfinite(low), low, ceiling)
            hi = np.where(np.isfinite(high), high, ceiling)
            ax.vlines(lrs, lo, hi, color=spec["color"], lw=2.5, alpha=0.35)
            ax.plot(lrs, med, color=spec["color"], linestyle=spec["linestyle"], marker=spec["marker"],
                    label=spec["label"])
            ax.plot(lrs[never], med[never], spec["marker"], color=spec["color"], mfc="white")
        ax.axhline(ceiling, color=OKABE_ITO["black"], lw=0.8, ls=":")
        ax.text(lrs[0], ceiling * 1.05, f"not within {max_steps} steps", fontsize=8, va="bottom")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set(xlabel=r"learning rate $\eta$", ylabel=f"steps to {threshold:.0%} accuracy\n(median, range over seeds)",
               ylim=(5, ceiling * 1.6), title=f"$d_k$ = {d_k}")
        ax.legend(loc="lower left", fontsize=7)
    return ax


def survival_curves(steps_by_arm: dict, max_steps: int, title: str = "", threshold: float = 0.9, ax=None):
    """The fraction of runs that reached ``threshold`` accuracy by each step, one curve per arm.

    ``steps_by_arm`` maps an arm name (a key of :data:`ARM_STYLES`) to its runs' steps to the
    threshold (NaN = never), or to a pair ``(steps, label)``. A band shows one binomial standard
    error, ``sqrt(F (1 - F) / runs)``.

    >>> ax = survival_curves({"scaled": [10, 12, 30], "unscaled": [np.nan, 200, np.nan]}, max_steps=300)
    >>> tuple(float(v) for v in ax.get_ylim())
    (0.0, 1.02)
    """
    ax = get_axes(ax, figsize=(5.0, 3.4))
    t = np.arange(1, max_steps + 1)
    with style():
        for i, (arm, entry) in enumerate(steps_by_arm.items()):
            steps, label = entry if isinstance(entry, tuple) else (entry, None)
            steps = np.asarray(steps, dtype=float).ravel()
            spec = ARM_STYLES[arm]
            frac = survival_curve(steps, max_steps)
            se = np.sqrt(frac * (1 - frac) / steps.size)
            ax.fill_between(t, frac - se, frac + se, step="post", color=spec["color"], alpha=0.18, lw=0,
                            label="_nolegend_" if i else "band: ± 1 standard error")
            ax.step(t, frac, where="post", color=spec["color"], linestyle=spec["linestyle"], lw=1.5,
                    label=label or f"{spec['label']} ({steps.size} runs)")
        ax.set(xlim=(0, max_steps), ylim=(0.0, 1.02), xlabel="step $t$",
               ylabel=f"fraction of runs at {threshold:.0%}\naccuracy by step $t$", title=title)
        ax.legend(loc="lower right", fontsize=7)
    return ax


def survival_panels(panels: dict, max_steps: int, title: str = ""):
    """:func:`survival_curves` side by side, one panel per key of ``panels`` (its title, e.g. ``"$d_k$ = 64"``), each
    value a ``steps_by_arm`` mapping as :func:`survival_curves` takes it. Returns the Figure.
    """
    if not panels:
        raise ValueError("panels must hold at least one panel")
    fig, axes = new_figure(1, len(panels), figsize=(4.6 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, (name, steps_by_arm) in zip(axes[0], panels.items()):
        survival_curves(steps_by_arm, max_steps, title=str(name), ax=ax)
    for ax in axes[0, 1:]:
        ax.set_ylabel("")
    if title:
        with style():
            fig.suptitle(title)
    return fig
