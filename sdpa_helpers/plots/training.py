"""Figures of notebook 09: training a tiny attention model with and without the scale."""

from __future__ import annotations

import numpy as np

from ..training import GRAD_FLOOR, panel_values, rolling_quantiles, survival_curve
from . import OKABE_ITO, SCALING_STYLES, get_axes, new_figure, style

__all__ = ["ARM_STYLES", "PANELS", "GRAD_FLOOR", "N_KEYS_ENTROPY", "decorate_panel",
           "draw_history", "training_small_multiples", "gradient_histogram", "lr_sweep", "survival_curves"]

#: Line style of each training arm, keyed by the names of :data:`sdpa_helpers.training.ARMS`.
ARM_STYLES = {
    "scaled": SCALING_STYLES["sqrt"],
    "unscaled": SCALING_STYLES["unscaled"],
    "reparametrised": {"color": OKABE_ITO["black"], "linestyle": ":", "marker": "x",
                       "label": r"unscaled, reparametrised ($d_k^{-1/4}$ init, $\eta/\sqrt{d_k}$)"},
}

#: The largest attention entropy, log(8) nats, for 8 keys (uniform weights).
N_KEYS_ENTROPY = float(np.log(8))

#: (field, y label, y limits, log scale) of the four panels drawn for a run.
PANELS = (
    ("loss", "loss $L$", (0.0, 5.3), False),
    ("accuracy", "accuracy (batch)", (0.0, 1.03), False),
    ("entropy", "attention entropy (nats)", (0.0, 2.2), False),
    ("grad_norm_q", r"$\|\partial L/\partial W_Q\|$" + "\n(floored at 1e-8)", (GRAD_FLOOR / 3, 1e2), True),
)


#: Style of the panels' reference lines (accuracy 0.9, entropy log 8, the gradient floor): grey and
#: dash-dotted, unlike any arm's line (the reparametrised arm is dotted).
REFERENCE_STYLE = {"color": "0.55", "lw": 0.8, "ls": "-."}

#: The reference line of a panel, by field: (height, label written on it).
REFERENCES = {"accuracy": (0.9, "90 %"), "entropy": (N_KEYS_ENTROPY, "ln 8: uniform"),
              "grad_norm_q": (GRAD_FLOOR, "floor 1e-8")}


def decorate_panel(ax, field: str, label: str, ylim, log: bool, steps: int) -> None:
    """Labels, limits and the labelled grey reference line of one panel (:data:`REFERENCES`)."""
    if log:
        ax.set_yscale("log")
    ax.set(xlim=(0, steps), ylim=ylim, xlabel="step", ylabel=label)
    if field in REFERENCES:
        y, text = REFERENCES[field]
        ax.axhline(y, **REFERENCE_STYLE)
        ax.annotate(text, (1.0, y), xycoords=("axes fraction", "data"), xytext=(-2, 2), textcoords="offset points",
                    ha="right", va="bottom", fontsize="x-small", color=REFERENCE_STYLE["color"])


def draw_history(history, axes, arm: str = "scaled", animated: bool = False, decorate: bool = True) -> list:
    """Draw one run's loss, accuracy, entropy and ``||dL/dW_Q||`` on four Axes.

    Parameters
    ----------
    history : History
        A training run (fields ``loss``, ``accuracy``, ``entropy``, ``grad_norm_q``, each (steps,)).
    axes : sequence of 4 Axes
    arm : str
        A key of :data:`ARM_STYLES`: sets colour, line style and legend label.
    animated : bool
        Create the lines with ``animated=True`` (for explorers).
    decorate : bool
        Set labels, limits and reference lines.

    Returns
    -------
    list of Line2D, one per panel

    >>> from sdpa_helpers.training import train_runs
    >>> fig, axes = new_figure(1, 4)
    >>> lines = draw_history(train_runs(4, steps=20).history(), axes, arm="scaled")
    >>> len(lines), axes[0].get_ylabel()
    (4, 'loss $L$')
    """
    spec = ARM_STYLES[arm]
    lines = []
    steps = len(history.loss)
    with style():
        for ax, (field, label, ylim, log) in zip(axes, PANELS):
            (line,) = ax.plot(np.arange(1, steps + 1), panel_values(getattr(history, field), field),
                              color=spec["color"], linestyle=spec["linestyle"], lw=1.2, label=spec["label"],
                              animated=animated)
            lines.append(line)
            if decorate:
                decorate_panel(ax, field, label, ylim, log, steps)
    return lines


def training_small_multiples(runs: dict, d_ks, arms=("scaled", "unscaled", "reparametrised"), lr=None,
                             title: str = "", window: int = 15):
    """One row per quantity, one column per d_k; every arm, summarised over its seeds.

    Loss, accuracy, entropy: the median over seeds (line) and the seeds' range (band). The
    gradient norm, which jumps by orders of magnitude from step to step: a rolling median
    over ``window`` steps of every seed (line) with its 10-90 % band.

    Parameters
    ----------
    runs : dict d_k -> Runs
        :class:`sdpa_helpers.training.Runs` holding every arm in ``arms`` (and ``lr``).
    d_ks : sequence of int
        The columns, in order.
    arms : sequence of str
    lr : float, optional
        The learning rate to draw (default: the runs' first).
    title : str

    Returns
    -------
    Figure

    >>> from sdpa_helpers.training import train_runs
    >>> fig = training_small_multiples({4: train_runs(4, seeds=(0, 1), steps=20)}, [4], arms=("scaled", "unscaled"))
    >>> len(fig.axes)
    4
    """
    d_ks = list(d_ks)
    fig, axes = new_figure(len(PANELS), len(d_ks), figsize=(2.5 * len(d_ks) + 0.6, 7.6), dpi=80, squeeze=False,
                           sharex=True, sharey="row")
    with style():
        for j, d_k in enumerate(d_ks):
            r = runs[d_k]
            k = 0 if lr is None else r.lrs.index(lr)
            names = [a.name for a in r.arms]
            steps = r.loss.shape[-1]
            t = np.arange(1, steps + 1)
            for arm in arms:
                a = names.index(arm)
                spec = ARM_STYLES[arm]
                for i, (field, label, ylim, log) in enumerate(PANELS):
                    ax = axes[i, j]
                    y = getattr(r, field)[:, a, k]  # (seeds, steps)
                    if field == "grad_norm_q":
                        low, mid, high = panel_values(rolling_quantiles(y, window, (0.1, 0.5, 0.9)), field)
                    else:
                        low, mid, high = np.nanmin(y, 0), np.nanmedian(y, 0), np.nanmax(y, 0)
                    ax.fill_between(t, low, high, color=spec["color"], alpha=0.18, lw=0)
                    ax.plot(t, mid, color=spec["color"], linestyle=spec["linestyle"], lw=1.3, label=spec["label"])
                    decorate_panel(ax, field, label, ylim, log, steps)
            axes[0, j].set_title(f"$d_k$ = {d_k}")
            for i in range(len(PANELS)):
                if j:
                    axes[i, j].set_ylabel("")
                if i < len(PANELS) - 1:
                    axes[i, j].set_xlabel("")
        fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=len(arms),
                   fontsize=8)
        if title:
            fig.suptitle(title)
    return fig


def gradient_histogram(norms_scaled, norms_unscaled, d_k: int, ax=None):
    """Histogram of per-example ``||dL_b/dW_Q||`` on a log x axis, scaled vs unscaled.

    A thin vertical line (in the scaling's colour and line style) marks each median.

    >>> ax = gradient_histogram([1.0, 2.0], [1e-6, 3.0], d_k=4)
    >>> ax.get_xscale()
    'log'
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
    """Steps to reach ``threshold`` accuracy against the learning rate (log-log), over seeds.

    For each arm: the median over seeds (marker and line) and the seeds' range (bar). Runs
    that never got there count as larger than any that did; a median that never got there is
    drawn hollow on the dotted line above ``max_steps``.

    Parameters
    ----------
    lrs : sequence of float
    steps_by_arm : dict arm -> array (seeds, len(lrs))
        Steps to ``threshold``; NaN means "not within ``max_steps``".
    max_steps, d_k : int
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = lr_sweep([0.1, 1.0], {"scaled": [[50, 10]], "unscaled": [[80, np.nan]]}, max_steps=300, d_k=1024)
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
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
