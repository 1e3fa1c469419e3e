"""Input checks shared by the public functions, and the numeric range the course promises.

The contract, stated once: every real input lies within +-:data:`MAX_ABS` (1e100) and every d_k
is at most :data:`MAX_D_K` (2**20). Inside, results are right; outside, a ValueError names the
parameter. Validation happens once, at the public edge; nested calls trust their inputs.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

#: The largest magnitude of any real input (products of two, summed over MAX_D_K terms, fit a float).
MAX_ABS = 1e100
#: The largest d_k (and count) the course's functions accept.
MAX_D_K = 2**20


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise naming ``name`` unless it is a positive integer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer() and not isinstance(value, bool):
            raise TypeError(f"{name} must be a positive integer, got {value!r} (a float)")
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def d_k(name: str, value: object) -> int:
    """:func:`positive_int` that is at most :data:`MAX_D_K`, or raise naming ``name``.

    >>> d_k("d_k", 2**21)
    Traceback (most recent call last):
    ...
    ValueError: d_k must be at most 2**20 = 1048576 (the course's range), got 2097152
    """
    value = positive_int(name, value)
    if value > MAX_D_K:
        raise ValueError(f"{name} must be at most 2**20 = {MAX_D_K} (the course's range), got {value}")
    return value


def count(name: str, value: object) -> int:
    """:func:`positive_int` that a float holds exactly (at most 2**53), or raise naming ``name``."""
    value = positive_int(name, value)
    if value > 2**53:
        raise ValueError(f"{name} must be at most 2**53 (a float holds it exactly), got {value}")
    return value


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int (or Fraction) beyond a float
        value = math.inf
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if abs(value) > MAX_ABS:
        raise ValueError(f"{name} must lie within +-1e100 (the course's range), got {value:.3g}")
    return value


def non_negative(name: str, value: object) -> float:
    """Return ``value`` as a finite float >= 0, or raise naming ``name``."""
    value = real(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def positive(name: str, value: object) -> float:
    """Return ``value`` as a finite float > 0, or raise naming ``name``."""
    value = real(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def ddof(name: str, value: object, n_values: int) -> int:
    """Return ``value`` as an int with ``0 <= value < n_values``, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {value!r}")
    if not 0 <= int(value) < n_values:
        raise ValueError(f"{name} must be >= 0 and smaller than the number of values ({n_values}), got {value}")
    return int(value)


def excess_kurtosis(name: str, value: object) -> float:
    """Return ``value`` as a finite float >= -2 (no distribution has less), or raise naming ``name``."""
    value = real(name, value)
    if value < -2:
        raise ValueError(f"{name} must be >= -2 (no distribution has less excess kurtosis), got {value}")
    return value


def real_array(name: str, x: ArrayLike, *, min_ndim: int = 0, allow_neg_inf: bool = False,
               shape_hint: str | None = None, bounded: bool = True) -> np.ndarray:
    """Return ``x`` as a float array; raise naming ``name`` on a wrong type (a masked array too: its
    mask would be dropped), shape, NaN/inf, or (``bounded``) an entry beyond +-:data:`MAX_ABS`.

    ``bounded=False`` is for softmax logits: right at any finite value, and in-range Q, K make scores to 1e306.
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy masked array; the mask would be ignored here. Pass a plain "
                        f"array: {name}.filled(value) (for softmax logits, {name}.filled(-np.inf)) "
                        f"or {name}.compressed()")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of real numbers: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim < min_ndim:
        hint = shape_hint or f"at least {min_ndim} dimension(s)"
        raise ValueError(f"{name} must have shape {hint}, got shape {arr.shape}")
    if allow_neg_inf:
        bad = np.isnan(arr) | (arr == np.inf)
        if bad.any():
            raise ValueError(f"{name} contains NaN or +inf entries; only finite values and -inf are allowed")
    elif not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries; expected finite numbers")
    if bounded and arr.size and (np.abs(arr) > MAX_ABS).any() and (np.abs(arr[np.isfinite(arr)]) > MAX_ABS).any():
        raise ValueError(f"{name} has entries beyond +-1e100 (the course's range), up to "
                         f"{float(np.abs(arr[np.isfinite(arr)]).max()):.3g}")
    return arr


def probabilities(name: str, p: ArrayLike, axis: int = -1, atol: float = 1e-6) -> np.ndarray:
    """Return ``p`` as an array of probability vectors along ``axis``, or raise naming ``name``."""
    arr = real_array(name, p, min_ndim=1, shape_hint="(..., n)")
    axis = axis_index("axis", axis, arr.ndim)
    if arr.shape[axis] == 0:
        raise ValueError(f"{name} must have at least one entry along axis {axis}")
    if (arr < 0).any() or (arr > 1 + atol).any():
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    sums = arr.sum(axis=axis)
    if not np.allclose(sums, 1.0, rtol=0, atol=atol):
        worst = float(np.max(np.abs(sums - 1.0)))
        raise ValueError(f"{name} must sum to 1 along axis {axis} (off by up to {worst:.3g})")
    return arr


def axis_index(name: str, axis: object, ndim: int) -> int:
    """Return ``axis`` normalised to [0, ndim), or raise naming ``name``."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {axis!r}")
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"{name}={axis} is out of range for an array with {ndim} dimension(s)")
    return int(axis) % ndim


def one_of(name: str, value: object, allowed) -> str:
    """Return ``value`` if it is one of the names ``allowed``, or a ValueError naming ``name`` and listing them."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def seed(name: str, value: object) -> int:
    """Return ``value`` as an int seed >= 0 (TypeError for a non-integer or bool), or raise naming ``name``.

    >>> seed("seed", -1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a non-negative integer, got -1
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return int(value)
