"""Dot products of random vectors (notebook 01): the cosine of the angle between two random vectors.

For ``q`` and ``k`` with independent standard normal components,
``q . k = |q| |k| cos(theta)`` with ``|q|^2`` and ``|k|^2`` of mean ``d_k`` and ``cos(theta)`` of
mean 0 and variance exactly ``1/d_k`` -- the route of notebook 01, section 6, to
``Var(q . k) = d_k``. QK-norm (notebook 08) keeps only the cosine. :func:`std_with_se` gives the
standard deviation of a sample with its standard error, as notebook 01 measures the spread of ``q . k``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _checks
from .theory import Moments

__all__ = ["cosine_moments", "std_with_se"]


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
    """
    d_k = _checks.d_k("d_k", d_k)
    return Moments(0.0, 1.0 / d_k)


def cosine_excess_kurtosis(d_k: int) -> float:
    """Excess kurtosis of ``cos(theta)`` (and of ``sqrt(d_k) cos(theta)``) for isotropic ``q``, ``k``.

    ``cos(theta)`` is one coordinate ``u_1`` of a uniform unit vector. By symmetry
    ``E[u_1^4] = 3 / (d_k (d_k + 2))`` (from ``E[(sum u_i^2)^2] = 1`` split into ``d_k`` fourth
    powers and ``d_k (d_k - 1)`` cross terms ``E[u_1^2 u_2^2] = E[u_1^4] / 3``), so the excess
    kurtosis ``E[u_1^4] / E[u_1^2]^2 - 3`` is ``-6 / (d_k + 2)``: ``-2`` at ``d_k = 1``
    (``cos = +-1``), ``-1`` at ``d_k = 4`` (a semicircle on ``[-2, 2]`` after scaling), then
    towards 0, the normal curve's value. Scaling by ``sqrt(d_k)`` does not change it.
    """
    d_k = _checks.d_k("d_k", d_k)
    return -6.0 / (d_k + 2)


def std_with_se(samples: np.ndarray | Sequence[float]) -> tuple[float, float]:
    """The sample standard deviation ``s`` (ddof=1) of ``samples`` and its large-sample standard error.

    ``SE(s^2) = sqrt((m4 - s^4) / n)`` with ``m4`` the sample fourth central moment, and
    ``SE(s) = SE(s^2) / (2 s)`` (the delta method); this holds for any distribution with a finite
    fourth moment, heavy-tailed ones included (the dot products at small ``d_k`` are).

    Parameters
    ----------
    samples : array_like, shape (n,)
        ``n >= 2`` real numbers, not all equal.

    Returns
    -------
    std, se : float
    """
    x = _checks.real_array("samples", samples, min_ndim=1).ravel()
    if x.size < 2:
        raise ValueError(f"samples must hold at least 2 numbers, got {x.size}")
    peak = float(np.abs(x).max())
    centred = (x - x.mean()) / peak if peak > 0 else x  # rescaled first: no fourth power can overflow or underflow
    std = float(centred.std(ddof=1))
    if std == 0.0:
        raise ValueError("samples are all equal: their spread has no standard error to estimate")
    m4 = float(np.mean(centred**4))
    return peak * std, peak * float(np.sqrt(max(m4 - std**4, 0.0) / x.size) / (2.0 * std))
