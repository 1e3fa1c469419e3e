"""The scale: one vocabulary for "what multiplies q . k", and the course's grid of d_k.

A ``scale`` argument anywhere is ``None`` (the paper's 1/sqrt(d_k)), a name from :data:`SCALINGS`
(exponent ``e`` of the factor ``d_k**e``), or a positive finite number (the factor itself).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _checks

__all__ = ["SCALINGS", "D_K_CHOICES", "SHOWN_D_KS", "N_KEYS", "MAX_D_K", "scale_factor", "check_scaling"]

#: name -> exponent e of the factor c = d_k**e that multiplies q . k.
SCALINGS: dict[str, float] = {"unscaled": 0.0, "sqrt": -0.5, "inv_d": -1.0}

#: The course's grid of d_k, powers of 2: d_k = 1 … 4096 (the one literal of that grid).
D_K_CHOICES: tuple[int, ...] = tuple(2**i for i in range(13))
#: The d_k's shown side by side (small, a real head's, large).
SHOWN_D_KS: tuple[int, ...] = (4, 64, 1024)
#: Keys per query in the course's pictures of saturation (notebooks 00 and 04).
N_KEYS = 16
#: The largest d_k (the course's range, stated in :mod:`sdpa_helpers._checks`).
MAX_D_K = _checks.MAX_D_K


def check_scaling(name: str, value: object) -> str:
    """Return ``value`` if it names a scaling in :data:`SCALINGS`, or raise naming ``name``."""
    return _checks.one_of(name, value, SCALINGS)


def scale_factor(scale: float | str | None, d_k: int, name: str = "scale") -> float:
    """The factor ``c`` that multiplies ``q . k`` at ``d_k``; ``name`` is the caller's parameter in errors.

    ``scale`` is ``None`` (1/sqrt(d_k)), a name from :data:`SCALINGS`, or a positive number.

    >>> scale_factor(None, 64), scale_factor("inv_d", 64), scale_factor(0.5, 64)
    (0.125, 0.015625, 0.5)
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
