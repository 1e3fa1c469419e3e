"""Figures for notebook 09: training a tiny attention model with and without the scale.

This module offers:

- :data:`PANELS` -- the four quantities drawn for a run, with their labels and fixed limits;
- :func:`draw_history` -- one run's four curves on four Axes;
- :func:`training_small_multiples` -- a grid: one row per quantity, one column per d_k,
  scaled and unscaled runs in every panel;
- :func:`gradient_histogram` -- per-example gradient norms, scaled vs unscaled (log x);
- :func:`lr_sweep` -- steps to reach an accuracy against the learning rate;
- :func:`best_steps` -- steps to reach an accuracy at the best learning rate, against d_k.

Runs are :class:`sdpa_helpers.training.History` records (anything with the fields
``loss``, ``accuracy``, ``entropy``, ``grad_norm_q``).
"""

from __future__ import annotations

import numpy as np

from . import OKABE_ITO, SCALED, UNSCALED, get_axes, new_figure, set_d_k_axis, style

__all__ = ["PANELS", "GRAD_FLOOR", "N_KEYS_ENTROPY", "draw_history", "training_small_multiples",
           "gradient_histogram", "lr_sweep", "best_steps"]

#: Gradient norms below this are drawn at the bottom edge of the (log) axis.
GRAD_FLOOR = 1e-8
#: The largest attention entropy, log(8) nats, for 8 keys (uniform weights).
N_KEYS_ENTROPY = float(np.log(8))

#: (field, y label, y limits, log scale) of the four panels drawn for a run.
PANELS = (
    ("loss", "loss $L$", (0.0, 5.3), False),
    ("accuracy", "accuracy (batch)", (0.0, 1.03), False),
    ("entropy", "attention entropy (nats)", (0.0, 2.2), False),
    ("grad_norm_q", r"$\|\partial L/\partial W_Q\|$", (GRAD_FLOOR, 1e2), True),
)


def _curve(history, field: str) -> np.ndarray:
    y = np.asarray(getattr(history, field), dtype=float)
    return np.maximum(y, GRAD_FLOOR) if field == "grad_norm_q" else y


def _decorate(ax, field: str, label: str, ylim, log: bool, steps: int) -> None:
    if log:
        ax.set_yscale("log")
    ax.set(xlim=(0, steps), ylim=ylim, xlabel="step", ylabel=label)
    if field == "entropy":
        ax.axhline(N_KEYS_ENTROPY, color=OKABE_ITO["black"], lw=0.8, ls=":")
    if field == "accuracy":
        ax.axhline(0.9, color=OKABE_ITO["black"], lw=0.8, ls=":")


def draw_history(history, axes, scaled: bool, animated: bool = False, decorate: bool = True) -> list:
    """Draw one run's loss, accuracy, entropy and ``||dL/dW_Q||`` on four Axes.

    Parameters
    ----------
    history : History
        A training run (fields ``loss``, ``accuracy``, ``entropy``, ``grad_norm_q``, each (steps,)).
    axes : sequence of 4 Axes
    scaled : bool
        Which scaling the run used; sets colour, line style and legend label.
    animated : bool
        Create the lines with ``animated=True`` (for explorers).
    decorate : bool
        Set labels, limits and reference lines (dotted: accuracy 0.9, entropy log 8).

    Returns
    -------
    list of Line2D
        One line per panel.

    >>> from sdpa_helpers.training import run
    >>> fig, axes = new_figure(1, 4)
    >>> lines = draw_history(run(4, steps=20), axes, scaled=True)
    >>> len(lines), axes[0].get_ylabel()
    (4, 'loss $L$')
    """
    spec = SCALED if scaled else UNSCALED
    lines = []
    steps = len(history.loss)
    with style():
        for ax, (field, label, ylim, log) in zip(axes, PANELS):
            y = _curve(history, field)
            (line,) = ax.plot(np.arange(1, steps + 1), y, color=spec["color"], linestyle=spec["linestyle"],
                              lw=1.2, label=spec["label"], animated=animated)
            lines.append(line)
            if decorate:
                _decorate(ax, field, label, ylim, log, steps)
    return lines


def training_small_multiples(runs: dict, d_ks, title: str = ""):
    """One row per quantity (loss, accuracy, entropy, gradient norm), one column per d_k.

    Parameters
    ----------
    runs : dict (d_k, scaled) -> History
        Both scalings for every d_k in ``d_ks``.
    d_ks : sequence of int
        The columns, in order.
    title : str
        A figure title (e.g. the learning rate).

    Returns
    -------
    Figure

    >>> from sdpa_helpers.training import run
    >>> fig = training_small_multiples({(4, s): run(4, s, steps=20) for s in (True, False)}, [4])
    >>> len(fig.axes)
    4
    """
    d_ks = list(d_ks)
    fig, axes = new_figure(len(PANELS), len(d_ks), figsize=(2.5 * len(d_ks) + 0.6, 7.6), dpi=80, squeeze=False,
                           sharex=True, sharey="row")
    with style():
        for j, d_k in enumerate(d_ks):
            for scaled in (True, False):
                draw_history(runs[(d_k, scaled)], axes[:, j], scaled)
            axes[0, j].set_title(f"$d_k$ = {d_k}")
            for i in range(len(PANELS)):
                if j:
                    axes[i, j].set_ylabel("")
                if i < len(PANELS) - 1:
                    axes[i, j].set_xlabel("")
        axes[0, 0].legend(loc="upper right")
        if title:
            fig.suptitle(title)
    return fig


def gradient_histogram(norms_scaled, norms_unscaled, d_k: int, ax=None):
    """Histogram of per-example ``||dL_b/dW_Q||`` on a log x axis, scaled vs unscaled.

    A thin vertical line (in the scaling's colour and line style) marks each median.

    Parameters
    ----------
    norms_scaled, norms_unscaled : array_like, shape (n,)
        Per-example gradient norms (> 0 drawn; zeros are counted at the left edge).
    d_k : int
    ax : Axes, optional

    Returns
    -------
    Axes

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
        for data, spec in ((s, SCALED), (u, UNSCALED)):
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


def _steps_or_ceiling(steps, ceiling):
    return np.array([ceiling if s is None else s for s in steps], dtype=float)


def lr_sweep(lrs, steps_scaled, steps_unscaled, max_steps: int, d_k: int, threshold: float = 0.9, ax=None):
    """Steps to reach ``threshold`` accuracy against the learning rate (log-log).

    A run that never gets there within ``max_steps`` is drawn as a hollow marker on the
    dotted line above ``max_steps``.

    Parameters
    ----------
    lrs : sequence of float
    steps_scaled, steps_unscaled : sequence of int or None
        One entry per learning rate; None means "not within ``max_steps``".
    max_steps : int
    d_k : int
    threshold : float
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = lr_sweep([0.1, 1.0], [50, 10], [80, None], max_steps=300, d_k=1024)
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    ax = get_axes(ax, figsize=(5.5, 3.8))
    lrs = np.asarray(lrs, dtype=float)
    ceiling = 1.5 * max_steps
    with style():
        for steps, spec in ((steps_scaled, SCALED), (steps_unscaled, UNSCALED)):
            y = _steps_or_ceiling(steps, ceiling)
            never = y == ceiling
            ax.plot(lrs, y, color=spec["color"], linestyle=spec["linestyle"], marker=spec["marker"],
                    label=spec["label"])
            ax.plot(lrs[never], y[never], spec["marker"], color=spec["color"], mfc="white")  # hollow: never
        ax.axhline(ceiling, color=OKABE_ITO["black"], lw=0.8, ls=":")
        ax.text(lrs[0], ceiling * 1.05, f"not within {max_steps} steps", fontsize=8, va="bottom")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set(xlabel=r"learning rate $\eta$", ylabel=f"steps to {threshold:.0%} accuracy",
               ylim=(5, ceiling * 1.5), title=f"$d_k$ = {d_k}")
        ax.legend(loc="lower left")
    return ax


def best_steps(d_ks, steps_scaled, steps_unscaled, threshold: float = 0.9, ax=None):
    """Steps to reach ``threshold`` accuracy at each scaling's best learning rate, against d_k.

    Parameters
    ----------
    d_ks : sequence of int
    steps_scaled, steps_unscaled : sequence of int
        The fewest steps over the learning rates tried, one per d_k.
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = best_steps([4, 1024], [15, 11], [18, 89])
    >>> ax.get_xlabel()
    '$d_k$'
    """
    ax = get_axes(ax, figsize=(5.5, 3.8))
    with style():
        for steps, spec in ((steps_scaled, SCALED), (steps_unscaled, UNSCALED)):
            ax.plot(d_ks, steps, color=spec["color"], linestyle=spec["linestyle"], marker=spec["marker"],
                    label=spec["label"])
        set_d_k_axis(ax, d_max=max(d_ks))
        ax.set_yscale("log")
        ax.set(ylabel=f"steps to {threshold:.0%} accuracy\n(best learning rate)", ylim=(5, 400),
               title="At each scaling's best learning rate")
        ax.legend(loc="upper left")
    return ax
