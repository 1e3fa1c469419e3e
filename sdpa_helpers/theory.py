"""Closed forms for the moments of products, dot products and scaled dot products.

This module offers:

- :class:`Moments` -- a ``(mean, var)`` pair with a ``std`` property;
- :func:`product_moments` -- mean and variance of ``X * Y`` for independent ``X``, ``Y``;
- :func:`dot_product_moments` -- mean and variance of ``q . k`` over ``d_k`` independent pairs;
- :func:`scaled_moments` -- mean and variance of ``c * X``.

Everything is exact arithmetic on numbers (no sampling); :mod:`sdpa_helpers.sampling`
checks it by Monte Carlo.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from . import _checks

__all__ = ["Moments", "product_moments", "dot_product_moments", "scaled_moments"]


class Moments(NamedTuple):
    """Mean and variance of a random variable.

    >>> m = Moments(mean=0.0, var=64.0)
    >>> m.std
    8.0
    """

    mean: float
    var: float

    @property
    def std(self) -> float:
        """Standard deviation, ``sqrt(var)``."""
        return math.sqrt(self.var)


def product_moments(mean_x: float = 0.0, var_x: float = 1.0,
                    mean_y: float = 0.0, var_y: float = 1.0) -> Moments:
    """Mean and variance of ``X * Y`` for independent ``X`` and ``Y``.

    Independence gives ``E[XY] = E[X] E[Y]`` and ``E[X^2 Y^2] = E[X^2] E[Y^2]``, so

    ``mean = mu_x mu_y`` and
    ``var = (var_x + mu_x^2)(var_y + mu_y^2) - mu_x^2 mu_y^2``.

    Parameters
    ----------
    mean_x, var_x : float
        Mean and variance (>= 0) of ``X``.
    mean_y, var_y : float
        Mean and variance (>= 0) of ``Y``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> product_moments()
    Moments(mean=0.0, var=1.0)
    >>> product_moments(mean_x=1.0, var_x=1.0, mean_y=2.0, var_y=3.0)
    Moments(mean=2.0, var=10.0)
    """
    mean_x = _checks.real("mean_x", mean_x)
    mean_y = _checks.real("mean_y", mean_y)
    var_x = _checks.non_negative("var_x", var_x)
    var_y = _checks.non_negative("var_y", var_y)
    mean = mean_x * mean_y
    var = (var_x + mean_x**2) * (var_y + mean_y**2) - mean_x**2 * mean_y**2
    return Moments(mean, var)


def dot_product_moments(d_k: int, mean_q: float = 0.0, var_q: float = 1.0,
                        mean_k: float = 0.0, var_k: float = 1.0) -> Moments:
    """Mean and variance of ``q . k`` for ``d_k`` independent component pairs.

    ``q . k = sum_i q_i k_i`` is a sum of ``d_k`` independent products, so its mean and
    its variance are ``d_k`` times those of one product (:func:`product_moments`).

    Parameters
    ----------
    d_k : int
        Number of components (the key/query dimension), >= 1.
    mean_q, var_q : float
        Mean and variance of every component of ``q``.
    mean_k, var_k : float
        Mean and variance of every component of ``k``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> dot_product_moments(64)
    Moments(mean=0.0, var=64.0)
    >>> dot_product_moments(64).std
    8.0
    >>> dot_product_moments(4, mean_q=1.0, mean_k=1.0)
    Moments(mean=4.0, var=12.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    mean_q, mean_k = _checks.real("mean_q", mean_q), _checks.real("mean_k", mean_k)
    var_q, var_k = _checks.non_negative("var_q", var_q), _checks.non_negative("var_k", var_k)
    one = product_moments(mean_q, var_q, mean_k, var_k)
    return Moments(d_k * one.mean, d_k * one.var)


def scaled_moments(moments: Moments, scale: float) -> Moments:
    """Mean and variance of ``scale * X`` given those of ``X``.

    ``E[cX] = c E[X]`` and ``Var(cX) = c^2 Var(X)``.

    Parameters
    ----------
    moments : Moments
        Mean and variance of ``X``.
    scale : float
        The constant ``c``.

    Returns
    -------
    Moments

    Examples
    --------
    >>> scaled_moments(dot_product_moments(64), 64 ** -0.5)
    Moments(mean=0.0, var=1.0)
    >>> scaled_moments(Moments(2.0, 64.0), 1 / 64)
    Moments(mean=0.03125, var=0.015625)
    """
    if not isinstance(moments, tuple) or len(moments) != 2:
        raise TypeError(f"moments must be a Moments(mean, var), got {moments!r}")
    mean = _checks.real("moments.mean", moments[0])
    var = _checks.non_negative("moments.var", moments[1])
    scale = _checks.real("scale", scale)
    return Moments(scale * mean, scale**2 * var)
