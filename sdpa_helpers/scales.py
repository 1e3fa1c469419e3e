"""The scale: one vocabulary for "what multiplies q . k", used by every module and figure.

- :data:`SCALINGS` -- the named scalings and the exponent ``e`` of their factor ``c = d_k**e``:
  ``"unscaled"`` (c = 1), ``"sqrt"`` (c = 1/sqrt(d_k), the paper's), ``"inv_d"`` (c = 1/d_k, muP's);
- :func:`scale_factor` -- resolve a ``scale`` argument to the float factor at a given d_k;
- :data:`D_K_CHOICES` -- the d_k values the course moves through (powers of 2, 1 ... 4096): every
  d_k slider and every grid of d_k a notebook loops over (the one literal of that grid);
- :data:`SHOWN_D_KS` -- the three d_k's the figures show side by side;
- :data:`N_KEYS` -- the keys per query of the course's saturation and gradient pictures;
- :data:`MAX_D_K` -- the largest d_k any function accepts (the contract in :mod:`._checks`).

A ``scale`` argument anywhere in the package is one of: ``None`` (the paper's 1/sqrt(d_k)),
a name from :data:`SCALINGS`, or a positive finite number (the factor itself).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _checks

__all__ = ["SCALINGS", "D_K_CHOICES", "SHOWN_D_KS", "N_KEYS", "MAX_D_K", "scale_factor", "check_scaling"]

#: name -> exponent e of the factor c = d_k**e that multiplies q . k.
SCALINGS: dict[str, float] = {"unscaled": 0.0, "sqrt": -0.5, "inv_d": -1.0}

#: The d_k values of the course: powers of 2 from 1 to 4096 (d_k moves on a log scale).
D_K_CHOICES: tuple[int, ...] = tuple(2**i for i in range(13))
#: The d_k's shown side by side (small, a real head's, large).
SHOWN_D_KS: tuple[int, ...] = (4, 64, 1024)
#: Keys per query in the course's pictures of saturation (notebooks 00 and 04).
N_KEYS = 16
#: The largest d_k (the course's range, stated in :mod:`sdpa_helpers._checks`).
MAX_D_K = _checks.MAX_D_K


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
    d_k = _checks.d_k("d_k", d_k)
    if scale is None or isinstance(scale, str):
        exponent = -0.5 if scale is None else SCALINGS[check_scaling(name, scale)]
        return float(d_k) ** exponent
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{name} must be None, one of {', '.join(map(repr, SCALINGS))} or a positive "
                        f"number, got {scale!r}")
    return _checks.positive(name, scale)
