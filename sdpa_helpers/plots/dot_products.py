"""Figures for notebook 01: dot products, the table Q Kᵀ, and the spread of q·k.

This module offers:

- :func:`score_table` -- the table ``Q K^T`` as an annotated heatmap, entry (i, j) = ``q_i . k_j``;
- :func:`frobenius_nesting` -- Hadamard product -> row-wise dots -> Frobenius product, side by side;
- :func:`spread_growth` -- random dot products at growing ``d_k``: the cloud, and its standard
  deviation against ``sqrt(d_k)`` on log axes.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import _checks
from . import OKABE_ITO, UNSCALED, get_axes, new_figure, set_d_k_axis, style

__all__ = ["score_table", "frobenius_nesting", "spread_growth"]


def _matrix(name: str, x) -> np.ndarray:
    arr = _checks.real_array(name, x, min_ndim=2, shape_hint="(rows, columns)")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows, columns), got shape {arr.shape}")
    if 0 in arr.shape:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    return arr


def _annotate(ax, values, decimals: int, cmap_image) -> None:
    """Write each value of ``values`` in its cell, dark text on light cells and vice versa."""
    norm = cmap_image.norm
    for (i, j), v in np.ndenumerate(values):
        light = cmap_image.cmap(norm(v))[:3]
        luminance = 0.2126 * light[0] + 0.7152 * light[1] + 0.0722 * light[2]
        ax.text(j, i, f"{round(float(v), decimals) + 0.0:.{decimals}f}", ha="center", va="center", fontsize=9,
                color="black" if luminance > 0.5 else "white")


def _heatmap(ax, values, decimals: int, vmin=None, vmax=None):
    image = ax.imshow(values, cmap="cividis", vmin=vmin, vmax=vmax, aspect="auto")
    _annotate(ax, values, decimals, image)
    ax.grid(False)
    return image


def score_table(Q, K, ax=None, decimals: int = 1):
    """The table ``Q K^T`` as an annotated heatmap: row i is query ``q_i``, column j is key ``k_j``.

    Parameters
    ----------
    Q : array_like, shape (n_q, d_k)
        One query per row.
    K : array_like, shape (n_k, d_k)
        One key per row.
    ax : Axes, optional
    decimals : int
        Decimals printed in each cell.

    Returns
    -------
    Axes

    Examples
    --------
    >>> ax = score_table([[1.0, 2.0]], [[2.0, 3.0], [1.0, 0.0]])
    >>> [t.get_text() for t in ax.texts]
    ['8.0', '1.0']
    """
    Q, K = _matrix("Q", Q), _matrix("K", K)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has d_k={Q.shape[1]} but K has d_k={K.shape[1]}")
    scores = Q @ K.T  # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)
    n_q, n_k = scores.shape
    ax = get_axes(ax, figsize=(1.0 + 0.75 * n_k, 0.9 + 0.55 * n_q))
    with style():
        image = _heatmap(ax, scores, decimals)
        ax.figure.colorbar(image, ax=ax, label=r"$q_i\cdot k_j$")
        ax.set_xticks(range(n_k), [f"$k_{{{j + 1}}}$" for j in range(n_k)])
        ax.set_yticks(range(n_q), [f"$q_{{{i + 1}}}$" for i in range(n_q)])
        ax.set(xlabel="key $j$", ylabel="query $i$",
               title=rf"$QK^\top$: ({n_q}, {Q.shape[1]}) @ ({Q.shape[1]}, {n_k}) $\to$ ({n_q}, {n_k})")
    return ax


def frobenius_nesting(A, B, decimals: int = 1):
    """Three panels: ``A ∘ B`` (n, d), its row sums ``a_i . b_i`` (n,), and their sum ``<A, B>_F``.

    Parameters
    ----------
    A, B : array_like, shape (n, d)
        Two matrices of the same shape.
    decimals : int
        Decimals printed in each cell.

    Returns
    -------
    Figure

    Examples
    --------
    >>> fig = frobenius_nesting([[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]])
    >>> [t.get_text() for t in fig.axes[2].texts]
    ['5.0']
    """
    A, B = _matrix("A", A), _matrix("B", B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
    hadamard = A * B  # (n, d)
    rowwise = hadamard.sum(axis=1, keepdims=True)  # (n, 1)
    total = rowwise.sum(keepdims=True)  # (1, 1)
    n, d = A.shape
    fig, axes = new_figure(1, 3, figsize=(2.4 + 0.7 * d, 1.2 + 0.5 * n),
                           width_ratios=[d, 1.3, 1.3])
    with style():
        _heatmap(axes[0], hadamard, decimals)
        axes[0].set_xticks(range(d), [str(j + 1) for j in range(d)])
        axes[0].set_yticks(range(n), [str(i + 1) for i in range(n)])
        axes[0].set(xlabel="column $j$", ylabel="row $i$",
                    title=rf"$A\circ B$, shape ({n}, {d})")
        _heatmap(axes[1], rowwise, decimals)
        axes[1].set_xticks([])
        axes[1].set_yticks(range(n), [str(i + 1) for i in range(n)])
        axes[1].set(xlabel=r"sum over $j$", ylabel="row $i$", title=rf"$a_i\cdot b_i$, ({n},)")
        _heatmap(axes[2], total, decimals)
        axes[2].set_xticks([])
        axes[2].set_yticks([])
        axes[2].set(xlabel=r"sum over $i$", ylabel="one number",
                    title=r"$\langle A, B\rangle_F$")
    return fig


def spread_growth(samples_by_d_k: dict, n_shown: int = 300):
    """Random dot products at growing ``d_k``: the cloud (left) and its std against ``sqrt(d_k)`` (right).

    Parameters
    ----------
    samples_by_d_k : dict int -> array_like, shape (n,)
        Dot products ``q . k`` of random vectors, for each ``d_k`` (two or more values).
    n_shown : int
        How many of each sample to draw as dots on the left (all of them enter the std).

    Returns
    -------
    Figure

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = spread_growth({d: rng.standard_normal(100) * d**0.5 for d in (1, 16, 256)})
    >>> fig.axes[1].get_yscale(), fig.axes[1].get_ylabel()
    ('log', 'standard deviation of $q\\\\cdot k$')
    """
    if not isinstance(samples_by_d_k, dict) or len(samples_by_d_k) < 2:
        raise TypeError("samples_by_d_k must be a dict d_k -> samples with at least two entries")
    n_shown = _checks.positive_int("n_shown", n_shown)
    d_ks = sorted(_checks.positive_int("d_k", d) for d in samples_by_d_k)
    samples = {d: _checks.real_array(f"samples_by_d_k[{d}]", samples_by_d_k[d], min_ndim=1).ravel()
               for d in d_ks}
    stds = np.array([samples[d].std(ddof=1) for d in d_ks])
    d_arr = np.array(d_ks, dtype=float)
    fig, (ax_cloud, ax_std) = new_figure(1, 2, figsize=(10.0, 3.8))
    jitter = np.random.default_rng(0)  # only spreads the dots sideways for visibility
    with style():
        for d in d_ks:
            s = samples[d][:n_shown]
            x = d * 2.0 ** jitter.uniform(-0.18, 0.18, s.size)
            ax_cloud.plot(x, s, ".", color=UNSCALED["color"], alpha=0.35, markersize=3)
        grid = np.geomspace(d_arr[0] / 1.3, d_arr[-1] * 1.3, 200)
        for sign in (1, -1):
            ax_cloud.plot(grid, sign * 2 * np.sqrt(grid), color=OKABE_ITO["black"], linestyle=":",
                          label=r"$\pm 2\sqrt{d_k}$" if sign == 1 else None)
        set_d_k_axis(ax_cloud, d_max=int(d_arr[-1]))
        ax_cloud.set(ylabel=r"$q\cdot k$", title=r"random $q\cdot k$: the cloud widens")
        ax_cloud.legend(loc="upper left")

        ax_std.plot(grid, np.sqrt(grid), color=OKABE_ITO["black"], linestyle=":", label=r"$\sqrt{d_k}$")
        ax_std.plot(d_arr, stds, color=UNSCALED["color"], linestyle="none", marker=UNSCALED["marker"],
                    label="sample std")
        set_d_k_axis(ax_std, d_max=int(d_arr[-1]))
        ax_std.set_yscale("log", base=2)
        ax_std.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax_std.set(ylabel=r"standard deviation of $q\cdot k$", title=r"the std grows like $\sqrt{d_k}$")
        ax_std.legend(loc="upper left")
    return fig
