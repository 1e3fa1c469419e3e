"""Figures for notebook 01: dot products, the table Q Kᵀ, Hadamard/row-wise/Frobenius nesting, and the spread of q·k."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import _checks
from . import OKABE_ITO, UNSCALED, get_axes, new_figure, set_d_k_axis, style

__all__ = ["score_table", "frobenius_nesting", "geometric_picture", "spread_growth"]


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


def _heatmap(ax, values, decimals: int, vmin=None, vmax=None, cmap: str = "cividis"):
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    _annotate(ax, values, decimals, image)
    ax.grid(False)
    return image


def score_table(Q, K, ax=None, decimals: int = 1):
    """The table ``Q K^T`` as an annotated heatmap on ``ax``: row i is query ``q_i``, column j is key ``k_j``.

    Q (n_q, d_k), K (n_k, d_k); ``decimals`` printed in each cell. Returns the Axes.
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
    """Five panels: ``A``, ``B``, ``A ∘ B`` (n, d), its row sums ``a_i . b_i`` (n,), and ``<A, B>_F``.

    A and B of one shape (n, d); one symmetric diverging colour scale for every panel; each cell prints its value
    (``decimals``). Returns the Figure.
    """
    A, B = _matrix("A", A), _matrix("B", B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
    hadamard = A * B  # (n, d)
    rowwise = hadamard.sum(axis=1, keepdims=True)  # (n, 1)
    total = rowwise.sum(keepdims=True)  # (1, 1)
    n, d = A.shape
    panels = [(A, rf"$A$, ({n}, {d})", "column $j$"), (B, rf"$B$, ({n}, {d})", "column $j$"),
              (hadamard, rf"$A\circ B$, ({n}, {d})", "column $j$"),
              (rowwise, rf"$a_i\cdot b_i$, ({n},)", r"sum over $j$"),
              (total, r"$\langle A, B\rangle_F$" + "\none number", r"sum over $i$")]
    bound = max(float(np.abs(v).max()) for v, _, _ in panels) or 1.0
    fig, axes = new_figure(1, 6, figsize=(3.2 + 1.9 * d + 2.2, 1.5 + 0.5 * n),
                           width_ratios=[d, d, d, 1.3, 1.3, 0.25])
    with style():
        for ax, (values, title, xlabel) in zip(axes[:5], panels):
            image = _heatmap(ax, values, decimals, vmin=-bound, vmax=bound, cmap="PuOr_r")
            cols = values.shape[1]
            ax.set_xticks(range(cols), [str(j + 1) for j in range(cols)] if cols > 1 else [""])
            ax.set_yticks(range(values.shape[0]), [str(i + 1) for i in range(values.shape[0])]
                          if values.shape[0] > 1 else [""])
            ax.set(xlabel=xlabel, title=title)
        axes[0].set_ylabel("row $i$")
        fig.colorbar(image, cax=axes[5], label="value (every panel)")
    return fig


def geometric_picture(ratios_by_d_k: dict):
    """Three panels of density histograms, one outline per ``d_k``: the geometric route to ``q . k``.

    ``ratios_by_d_k``: d_k -> {"norm": ``|q| / sqrt(d_k)``, "cos": ``sqrt(d_k) cos(theta)``,
    "dot": ``q . k / sqrt(d_k)``} (arrays (n,)), left to right, N(0, 1) on the last two. Returns the Figure.
    """
    if not isinstance(ratios_by_d_k, dict) or not ratios_by_d_k:
        raise TypeError("ratios_by_d_k must be a non-empty dict d_k -> {'norm', 'cos', 'dot'} arrays")
    d_ks = sorted(_checks.positive_int("d_k", d) for d in ratios_by_d_k)
    keys = ("norm", "cos", "dot")
    data = {}
    for d in d_ks:
        entry = ratios_by_d_k[d]
        if not isinstance(entry, dict) or set(entry) != set(keys):
            raise ValueError(f"ratios_by_d_k[{d}] must be a dict with keys {keys}")
        data[d] = {key: _checks.real_array(f"ratios_by_d_k[{d}][{key!r}]", entry[key], min_ndim=1).ravel()
                   for key in keys}
    colours = [OKABE_ITO[c] for c in ("sky_blue", "orange", "bluish_green", "vermillion", "blue", "black")]
    fig, axes = new_figure(1, 3, figsize=(11.0, 3.5))
    bins = {"norm": np.linspace(0.0, 2.0, 81), "cos": np.linspace(-4.5, 4.5, 55), "dot": np.linspace(-4.5, 4.5, 55)}
    xlabels = {"norm": r"$\Vert q\Vert\,/\sqrt{d_k}$", "cos": r"$\sqrt{d_k}\,\cos\theta$",
               "dot": r"$q\cdot k\,/\sqrt{d_k}$"}
    titles = {"norm": r"lengths: $\Vert q\Vert \approx \sqrt{d_k}$",
              "cos": r"angles: $\mathrm{Var}(\cos\theta) = 1/d_k$",
              "dot": r"product: $\mathrm{Var}(q\cdot k) = d_k$"}
    z = np.linspace(-4.5, 4.5, 301)
    with style():
        for ax, key in zip(axes, keys):
            for i, d in enumerate(d_ks):
                density, edges = np.histogram(data[d][key], bins=bins[key], density=False)
                density = density / data[d][key].size / np.diff(edges)
                ax.stairs(density, edges, color=colours[i % len(colours)], linewidth=1.6,
                          label=f"$d_k$ = {d}")
            if key != "norm":
                ax.plot(z, np.exp(-z**2 / 2) / np.sqrt(2 * np.pi), color=OKABE_ITO["black"], linestyle=":",
                        linewidth=1.5, label="$N(0, 1)$")
            ax.set(xlabel=xlabels[key], ylabel="density", title=titles[key])
            ax.set_ylim(0, None)
        axes[0].legend(loc="upper left", fontsize=8)
        axes[1].legend(handles=axes[1].lines[-1:], loc="upper right", fontsize=8)  # the normal curve
        axes[2].legend(loc="upper right", fontsize=8)
    return fig


def spread_growth(samples_by_d_k: dict, n_shown: int = 300):
    """Random dot products at growing ``d_k``: the cloud (left) and its std against ``sqrt(d_k)`` (right).

    ``samples_by_d_k``: d_k -> ``q . k`` samples (two or more d_k); ``n_shown`` of each drawn as dots (all enter
    the std). Returns the Figure.
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

