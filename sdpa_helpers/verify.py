"""One-line checks for the notebooks' main line: print ``✔ what was checked``, or raise AssertionError."""

from __future__ import annotations

import math

import numpy as np

from . import _checks

__all__ = ["verify_close", "verify"]


#: Below this a difference is rounding noise (CPU/BLAS dependent): it prints as "below 1e-12".
NOISE_FLOOR = 1e-12


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _fmt_gap(x: float) -> str:
    return f"below {NOISE_FLOOR:g}" if x < NOISE_FLOOR else f"{x:.2g}"


def _one_number(name: str, x: object) -> float:
    """``x`` as a finite float (a numpy scalar or 0-d array included), or raise naming ``name``."""
    if isinstance(x, np.ndarray):
        if x.size != 1 or x.ndim > 0:
            raise TypeError(f"{name} must be one number, got an array of shape {x.shape}; check each entry "
                            f"or a summary (for example its largest error)")
        x = x[()]
    if not isinstance(x, (bool, np.bool_)) and hasattr(x, "__float__"):
        x = float(x)  # numpy scalars, Decimal, ...: one number
    return _checks.real(name, x)


def verify_close(what: str, value: float, expected: float, *, se: float | None = None, n_se: float = 4.0,
                 rtol: float | None = None, atol: float | None = None) -> None:
    """Check ``value`` against ``expected`` and print one line, or raise AssertionError with the same facts.

    Give ``se`` (passes when ``|value - expected| <= n_se * se``) or ``rtol``/``atol`` (passes when
    ``|value - expected| <= atol + rtol * |expected|``).

    >>> verify_close("Var(q·k) at d_k=64", 64.31, 64, se=0.5)
    ✔ Var(q·k) at d_k=64: 64.31, theory 64, within 0.62 SE (limit 4)
    >>> verify_close("softmax([4, 5])[1]", 0.7310586, 0.7311, rtol=1e-3)
    ✔ softmax([4, 5])[1]: 0.7311, theory 0.7311, relative error 5.7e-05 (limit 0.001)
    >>> verify_close("sum of weights", 1.0 - 2**-52, 1.0, rtol=1e-9)
    ✔ sum of weights: 1, theory 1, relative error below 1e-12 (limit 1e-09)
    >>> verify_close("mean", 3.0, 0.0, se=0.5)
    Traceback (most recent call last):
    ...
    AssertionError: ✘ mean: 3, theory 0, off by 6 SE (limit 4)
    """
    if not isinstance(what, str):
        raise TypeError(f"what must be a string saying what is checked, got {what!r}")
    value = _one_number("value", value)
    expected = _one_number("expected", expected)
    gap = abs(value - expected)
    shown = f"below {NOISE_FLOOR:g}" if expected == 0 and 0 < abs(value) < NOISE_FLOOR else _fmt(value)
    head = f"{what}: {shown}, theory {_fmt(expected)}"
    if se is not None:
        if rtol is not None or atol is not None:
            raise ValueError("give either se or rtol/atol, not both")
        se = _checks.positive("se", float(se))
        n_se = _checks.positive("n_se", n_se)
        k = gap / se
        if k <= n_se:
            print(f"✔ {head}, within {k:.2g} SE (limit {n_se:g})")
            return
        raise AssertionError(f"✘ {head}, off by {k:.2g} SE (limit {n_se:g})")
    if rtol is None and atol is None:
        raise ValueError("give se (a Monte Carlo estimate) or rtol/atol (an exact value)")
    rtol = _checks.non_negative("rtol", 0.0 if rtol is None else rtol)
    atol = _checks.non_negative("atol", 0.0 if atol is None else atol)
    limit = atol + rtol * abs(expected)
    if atol == 0 and expected != 0:
        err, lim = gap / abs(expected), rtol
        detail = f"relative error {_fmt_gap(err)} (limit {lim:g})"
    else:
        detail = f"off by {_fmt_gap(gap)} (limit {limit:.2g})"
    if gap <= limit or math.isclose(gap, limit):
        print(f"✔ {head}, {detail}")
        return
    raise AssertionError(f"✘ {head}, {detail}")


def verify(claim: str, condition: object, detail: str = "") -> None:
    """Check that ``condition`` holds and print ``✔ claim`` (with ``detail``), or raise.

    >>> verify("the weights sum to 1 in every row", True, "max error 2e-16")
    ✔ the weights sum to 1 in every row (max error 2e-16)
    >>> verify("entropy falls as d_k grows", False)
    Traceback (most recent call last):
    ...
    AssertionError: ✘ entropy falls as d_k grows
    """
    if not isinstance(claim, str):
        raise TypeError(f"claim must be a string saying what is checked, got {claim!r}")
    if isinstance(condition, np.ndarray) and condition.size != 1:
        raise TypeError(f"condition must be True or False, got an array of shape {condition.shape}; "
                        f"use .all() (every entry) or .any() (at least one)")
    tail = f" ({detail})" if detail else ""
    if bool(condition):
        print(f"✔ {claim}{tail}")
        return
    raise AssertionError(f"✘ {claim}{tail}")
