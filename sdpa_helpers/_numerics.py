"""Numerical building blocks shared by the math modules: :func:`controlled_errstate` and the one histogram."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

__all__ = ["histogram_fractions", "NUMPY_DEFAULT_ERRSTATE", "controlled_errstate"]

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
