"""Dot products of random vectors (notebook 01): the cosine of the angle between two random vectors.

For ``q`` and ``k`` with independent standard normal components,
``q . k = |q| |k| cos(theta)`` with ``|q|^2`` and ``|k|^2`` of mean ``d_k`` and ``cos(theta)`` of
mean 0 and variance exactly ``1/d_k`` -- the route of notebook 01, section 6, to
``Var(q . k) = d_k``. QK-norm (notebook 08) keeps only the cosine.
"""

from __future__ import annotations

from . import _checks
from .theory import Moments

__all__ = ["cosine_moments"]


def cosine_moments(d_k: int) -> Moments:
    """Mean and variance of ``cos(theta)`` between two independent isotropic random vectors.

    For ``q``, ``k`` with independent standard normal components, ``q / |q|`` is uniform
    on the sphere; by symmetry ``E[cos] = 0`` and the ``d_k`` squared components of a unit
    vector share ``E[sum u_i^2] = 1`` equally, so ``Var(cos) = E[u_1^2] = 1 / d_k`` exactly.
    Hence QK-norm with ``g = sqrt(d_k)`` gives logits of variance 1, as scaled attention does.

    Parameters
    ----------
    d_k : int

    Returns
    -------
    Moments

    Examples
    --------
    >>> cosine_moments(64)
    Moments(mean=0.0, var=0.015625)
    """
    d_k = _checks.positive_int("d_k", d_k)
    return Moments(0.0, 1.0 / d_k)

