"""The scale: one vocabulary for "what multiplies q . k", used by every module and figure.

- :data:`SCALINGS` -- the named scalings and the exponent ``e`` of their factor ``c = d_k**e``:
  ``"unscaled"`` (c = 1), ``"sqrt"`` (c = 1/sqrt(d_k), the paper's), ``"inv_d"`` (c = 1/d_k, muP's);
- :func:`scale_factor` -- resolve a ``scale`` argument to the float factor at a given d_k;
- :data:`D_K_CHOICES` -- the d_k values the course moves through (powers of 2, 1 ... 4096): every
  d_k slider and every grid of d_k a notebook loops over.

A ``scale`` argument anywhere in the package is one of: ``None`` (the paper's 1/sqrt(d_k)),
a name from :data:`SCALINGS`, or a positive finite number (the factor itself).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import _checks

__all__ = ["SCALINGS", "D_K_CHOICES", "scale_factor", "check_scaling"]

#: name -> exponent e of the factor c = d_k**e that multiplies q . k.
SCALINGS: dict[str, float] = {"unscaled": 0.0, "sqrt": -0.5, "inv_d": -1.0}

#: The d_k values of the course: powers of 2 from 1 to 4096 (d_k moves on a log scale).
D_K_CHOICES: tuple[int, ...] = tuple(2**i for i in range(13))


def check_scaling(name: str, value: object) -> str:
    """Return ``value`` if it names a scaling in :data:`SCALINGS`, or raise naming ``name``.

    >>> check_scaling("scale", "sqrt")
    'sqrt'
    """
    if not isinstance(value, str) or value not in SCALINGS:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, SCALINGS))}; got {value!r}")
    return value


def scale_factor(scale: float | str | None, d_k: int, name: str = "scale") -> float:
    """The factor ``c`` that multiplies ``q . k`` at ``d_k``.

    ``scale`` is ``None`` (1/sqrt(d_k)), a name from :data:`SCALINGS`, or a positive number.
    ``name`` is the caller's parameter name, used in error messages.

    >>> scale_factor(None, 64), scale_factor("unscaled", 64), scale_factor("sqrt", 64)
    (0.125, 1.0, 0.125)
    >>> scale_factor("inv_d", 64), scale_factor(0.5, 64)
    (0.015625, 0.5)
    >>> scale_factor(-1.0, 64)
    Traceback (most recent call last):
    ...
    ValueError: scale must be > 0, got -1.0
    """
    d_k = _checks.positive_int("d_k", d_k)
    if scale is None or isinstance(scale, str):
        exponent = -0.5 if scale is None else SCALINGS[check_scaling(name, scale)]
        if d_k < 2**1000:
            return float(d_k) ** exponent
        factor = math.exp(exponent * math.log(d_k))  # d_k beyond a float: through its logarithm
        if factor == 0.0:
            raise ValueError(f"d_k (about 10**{len(str(d_k)) - 1}) is too large: its {scale or 'sqrt'} factor "
                             "underflows a float")
        return factor
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{name} must be None, one of {', '.join(map(repr, SCALINGS))} or a positive "
                        f"number, got {scale!r}")
    return _checks.positive(name, scale)
