"""Numerical building blocks shared by the math modules: :func:`controlled_errstate` and the one histogram."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

__all__ = ["histogram_fractions", "NUMPY_DEFAULT_ERRSTATE", "controlled_errstate", "by_row_blocks"]

#: numpy's default floating-point error handling: the setting the package computes under.
NUMPY_DEFAULT_ERRSTATE = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def controlled_errstate() -> np.errstate:
    """numpy's default error handling inside the block (a learner's ``np.seterr`` is back on exit).

    >>> old = np.seterr(all="raise")
    >>> with controlled_errstate():
    ...     float(np.exp(-1000.0))
    0.0
    >>> np.geterr()["under"]
    'raise'
    >>> _ = np.seterr(**old)
    """
    return np.errstate(divide="warn", over="warn", under="ignore", invalid="warn")  # = NUMPY_DEFAULT_ERRSTATE


def histogram_fractions(values: ArrayLike, edges: ArrayLike, *, density: bool = False,
                        values_name: str = "values", edges_name: str = "edges") -> np.ndarray:
    """The fraction of ``values`` (flattened, at least one) in each bin of increasing ``edges``, shape (n_bins,).

    With ``density=True`` divided by the bin widths. Values outside the edges count in the total;
    bins are numpy's. ``values_name``/``edges_name`` are the caller's parameter names for errors.

    >>> histogram_fractions([0.5, 1.5, 1.6, 9.0], [0.0, 1.0, 2.0]).tolist()
    [0.25, 0.5]
    >>> histogram_fractions([0.5, 1.5, 1.6, 9.0], [0.0, 1.0, 3.0], density=True).tolist()
    [0.25, 0.25]
    """
    x = _checks.real_array(values_name, values).ravel()
    if x.size == 0:
        raise ValueError(f"{values_name} must hold at least one number")
    e = _checks.real_array(edges_name, edges, min_ndim=1, shape_hint="(n_bins + 1,)")
    if e.ndim != 1 or e.size < 2 or not (np.diff(e) > 0).all():
        raise ValueError(f"{edges_name} must be a 1-D increasing sequence of at least two bin edges, "
                         f"got {np.array2string(e, threshold=8)}")
    counts, _ = np.histogram(x, bins=e)
    fractions = counts / x.size
    return fractions / np.diff(e) if density else fractions


def by_row_blocks(f, x: np.ndarray, entries: int) -> tuple:
    """``f(x)`` for a function ``f`` of rows -- ``x`` (..., n) in, a tuple of arrays of shape (...) out, each
    entry from its own row alone -- computed on blocks of about ``entries`` numbers
    (``sampling.CHUNK_ENTRIES``) of a C-contiguous ``x``, so its temporaries stay bounded; the rows, and
    so the results, are the same.

    >>> x = np.arange(12.0).reshape(2, 3, 2)
    >>> by_row_blocks(lambda r: (r.sum(axis=-1),), x, entries=4)[0].tolist()
    [[1.0, 5.0, 9.0], [13.0, 17.0, 21.0]]
    """
    n = x.shape[-1] if x.ndim else 1
    if x.ndim < 2 or x.size <= entries or not x.flags.c_contiguous or n == 0:
        return tuple(f(x))
    flat = x.reshape(-1, n)
    rows = max(1, entries // n)
    outs: list[np.ndarray] = []
    for first in range(0, flat.shape[0], rows):
        got = f(flat[first:first + rows])
        if not outs:
            outs = [np.empty(flat.shape[0], dtype=np.asarray(g).dtype) for g in got]
        for out, g in zip(outs, got):
            out[first:first + rows] = g
    return tuple(out.reshape(x.shape[:-1]) for out in outs)
