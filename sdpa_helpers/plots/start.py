"""Figures for notebook 00: a first look at the spread of q·k, unscaled and scaled."""

from __future__ import annotations

import numpy as np

from . import SCALED, UNSCALED, get_axes, new_figure, style

__all__ = ["spread_histogram", "spread_small_multiples", "BINS"]

#: Bin edges in units of the theoretical standard deviation: 48 bins over [-4, 4].
BINS = np.linspace(-4.0, 4.0, 49)


def spread_histogram(samples, d_k: int, scaled: bool, ax=None):
    """Histogram of dot products with the x axis fixed at +-4 theoretical standard deviations.

    Parameters
    ----------
    samples : ndarray, shape (n,)
        Dot products, unscaled (``q . k``) or scaled (``q . k / sqrt(d_k)``).
    d_k : int
        Dimension of q and k (sets the theoretical std: ``sqrt(d_k)`` unscaled, 1 scaled).
    scaled : bool
        Which kind ``samples`` are; sets colour and labels.
    ax : Axes, optional

    Returns
    -------
    Axes

    >>> ax = spread_histogram(np.zeros(10), d_k=4, scaled=False)
    >>> tuple(map(float, ax.get_xlim()))
    (-8.0, 8.0)
    """
    samples = np.asarray(samples, dtype=float)
    ax = get_axes(ax)
    spec = SCALED if scaled else UNSCALED
    sd = 1.0 if scaled else float(np.sqrt(d_k))
    with style():
        counts, _ = np.histogram(samples / sd, bins=BINS)
        density = counts / max(1, samples.size) / (np.diff(BINS) * sd)
        ax.stairs(density, BINS * sd, fill=True, color=spec["color"], alpha=0.6)
        ax.set_xlim(-4 * sd, 4 * sd)
        what = r"$q\cdot k/\sqrt{d_k}$" if scaled else r"$q\cdot k$"
        ax.set(xlabel=what, ylabel="density",
               title=f"{spec['label']}, $d_k$ = {d_k}: std {samples.std():.2f}")
    return ax


def spread_small_multiples(samples_by_d_k: dict, scale_of=lambda d_k: d_k ** -0.5):
    """A 2-row grid: unscaled (top) and scaled (bottom) histograms for each d_k in the dict.

    Parameters
    ----------
    samples_by_d_k : dict int -> ndarray, shape (n,)
        Unscaled dot products ``q . k`` per d_k.

    Returns
    -------
    Figure
    """
    d_ks = sorted(samples_by_d_k)
    fig, axes = new_figure(2, len(d_ks), figsize=(3.2 * len(d_ks), 5.2), squeeze=False)
    for j, d_k in enumerate(d_ks):
        s = np.asarray(samples_by_d_k[d_k], dtype=float)
        spread_histogram(s, d_k, scaled=False, ax=axes[0, j])
        spread_histogram(s * scale_of(d_k), d_k, scaled=True, ax=axes[1, j])
    return fig
