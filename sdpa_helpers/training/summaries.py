"""Results over many runs of notebook 09: median and range over seeds, survival curves, figure values."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .. import _checks
from .trainer import STEPS, as_tuple

__all__ = ["FIELDS", "GRAD_FLOOR", "SeedSummary", "best_learning_rate", "panel_values", "rolling_quantiles",
           "seed_summary", "survival_curve", "survival_summary"]

#: Gradient norms below this are drawn at the bottom edge of a figure's (log) axis.
GRAD_FLOOR = 1e-8
#: The curves a training figure draws, in order.
FIELDS = ("loss", "accuracy", "entropy", "grad_norm_q")


class SeedSummary(NamedTuple):
    """A result over seeds: ``median``, ``low``, ``high`` (range) of the runs that got there, and
    ``never``: how many of ``n`` runs did not."""

    median: float
    low: float
    high: float
    never: int
    n: int

    def __str__(self) -> str:
        if self.never == self.n:
            return f"none of {self.n} got there"
        med = "never (over half did not get there)" if np.isnan(self.median) else f"{self.median:.4g}"
        text = f"median {med} (range {self.low:.4g}–{self.high:.4g})"
        return text + (f", {self.never} of {self.n} never" if self.never else "")


def seed_summary(values) -> SeedSummary:
    """Median and range over seeds; NaN entries count as runs that never got there.

    The median counts "never" as larger than any value (so it is NaN, "never", when more than
    half never got there); the range covers the runs that did.

    >>> str(seed_summary([10, 12, 30, np.nan, 11]))
    'median 12 (range 10–30), 1 of 5 never'
    """
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        raise ValueError("values must not be empty")
    done = v[np.isfinite(v)]
    ordered = np.sort(np.where(np.isfinite(v), v, np.inf))
    n = v.size
    med = ordered[(n - 1) // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
    med = float(med) if np.isfinite(med) else float("nan")
    low, high = (float(done.min()), float(done.max())) if done.size else (float("nan"), float("nan"))
    return SeedSummary(med, low, high, int(n - done.size), int(n))


def survival_summary(steps_to, max_steps: int = STEPS) -> str:
    """One line on runs' steps to a target: the median (never counted as slower than any) and how
    many runs got there within ``max_steps``.

    >>> survival_summary([10, 12, np.nan, 30, 11])
    'median 12 steps, 4 of 5 runs (80 %) by step 300'
    >>> survival_summary([280, np.nan, np.nan])
    'median beyond 300 steps, 1 of 3 runs (33 %) by step 300'
    """
    s = seed_summary(steps_to)
    max_steps = _checks.positive_int("max_steps", max_steps)
    median = f"beyond {max_steps}" if np.isnan(s.median) else f"{s.median:.0f}"
    done = s.n - s.never
    return f"median {median} steps, {done} of {s.n} runs ({100 * done / s.n:.0f} %) by step {max_steps}"


def survival_curve(steps_to, max_steps: int) -> np.ndarray:
    """The fraction of runs that reached the target by step ``t``, for ``t = 1 .. max_steps``.

    ``steps_to`` holds one entry per run (..., runs): the step it got there, NaN for never.
    Returns shape (..., max_steps). Its binomial standard error is ``sqrt(F (1 - F) / runs)``.
    """
    v = np.asarray(steps_to, dtype=float)
    if v.ndim == 0 or v.shape[-1] == 0:
        raise ValueError(f"steps_to must have shape (..., runs) with runs >= 1, got shape {v.shape}")
    if np.isinf(v).any() or (v[np.isfinite(v)] < 1).any():
        raise ValueError("steps_to must hold steps >= 1 or NaN (never)")
    max_steps = _checks.positive_int("max_steps", max_steps)
    t = np.arange(1, max_steps + 1)
    with np.errstate(invalid="ignore"):
        return (v[..., None, :] <= t[:, None]).mean(axis=-1)


def best_learning_rate(steps_to, lrs) -> float:
    """The learning rate whose runs reach the target soonest: the smallest median steps (never
    counted as larger than any), ties broken by fewer runs that never got there, then by the mean.

    ``steps_to`` has shape (runs, len(lrs)).
    """
    v = np.asarray(steps_to, dtype=float)
    lrs = tuple(lrs)
    if v.ndim != 2 or v.shape[1] != len(lrs):
        raise ValueError(f"steps_to must have shape (runs, {len(lrs)}) to match lrs, got {v.shape}")
    keys = []
    for col in v.T:
        s = seed_summary(col)
        done = col[np.isfinite(col)]
        keys.append((np.inf if np.isnan(s.median) else s.median, s.never, done.mean() if done.size else np.inf))
    return lrs[min(range(len(lrs)), key=keys.__getitem__)]


def panel_values(values, field: str) -> np.ndarray:
    """The values a training figure draws for ``field``: gradient norms floored at :data:`GRAD_FLOOR`."""
    if field not in FIELDS:
        raise ValueError(f"field must be one of {FIELDS}, got {field!r}")
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"values must be an array of real numbers, got dtype {arr.dtype}")
    y = arr.astype(float)
    if np.isinf(y).any():
        raise ValueError("values must be finite (NaN marks a missing record), got an infinite entry")
    if field == "grad_norm_q":
        if (y < 0).any():
            raise ValueError("values of grad_norm_q are norms and must be >= 0")
        return np.maximum(y, GRAD_FLOOR)
    return y


def rolling_quantiles(values, window: int = 15, quantiles=(0.1, 0.5, 0.9)) -> np.ndarray:
    """Quantiles of ``values`` (..., steps) over a centred window of steps, pooled over the leading axes.

    Entry ``[k, t]`` is quantile ``quantiles[k]`` of every value at steps ``t - window//2 ..
    t + window//2`` (clipped at the ends) of every run; NaN values are ignored. Shape
    (len(quantiles), steps).
    """
    v = _checks.real_array("values", np.nan_to_num(np.asarray(values, float), nan=0.0), min_ndim=1,
                           shape_hint="(..., steps)")
    v = np.asarray(values, float).reshape(-1, v.shape[-1])
    window = _checks.positive_int("window", window)
    qs = as_tuple("quantiles", quantiles, lambda q: _checks.real("quantiles", q))
    if any(not 0 <= q <= 1 for q in qs):
        raise ValueError(f"quantiles must lie in [0, 1], got {qs}")
    steps, h = v.shape[-1], window // 2
    padded = np.pad(v, ((0, 0), (h, h)), constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * h + 1, axis=1)  # (runs, steps, window)
    pooled = np.moveaxis(windows, 0, 1).reshape(steps, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN window gives NaN, silently
        return np.nanquantile(pooled, qs, axis=1)
