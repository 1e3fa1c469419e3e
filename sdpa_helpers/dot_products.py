"""Dot products of random vectors (notebook 01): ``q . k = |q| |k| cos(theta)``, with ``cos(theta)`` of mean 0 and
variance exactly ``1/d_k``; :func:`std_with_se` measures the spread of a sample with its standard error."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _checks
from .sampling import sample_summary
from .theory import Moments

__all__ = ["cosine_moments", "std_with_se"]


def cosine_moments(d_k: int) -> Moments:
    """Moments of ``cos(theta)`` between independent isotropic vectors: mean 0, variance ``1 / d_k`` exactly (the
    ``d_k`` squared components of a uniform unit vector share ``E[sum u_i^2] = 1``). QK-norm with gain ``sqrt(d_k)``
    thus gives logits of variance 1.
    """
    d_k = _checks.d_k("d_k", d_k)
    return Moments(0.0, 1.0 / d_k)


def cosine_excess_kurtosis(d_k: int) -> float:
    """Excess kurtosis of ``cos(theta)`` (and of ``sqrt(d_k) cos(theta)``): ``-6 / (d_k + 2)``, from
    ``E[u_1^4] = 3 / (d_k (d_k + 2))``: -2 at ``d_k = 1`` (``cos = +-1``), -1 at 4, then towards 0.
    """
    d_k = _checks.d_k("d_k", d_k)
    return -6.0 / (d_k + 2)


def std_with_se(samples: np.ndarray | Sequence[float]) -> tuple[float, float]:
    """Sample SD ``s`` (ddof=1) of ``samples`` (n >= 2, not all equal) and its standard error
    ``SE(s) = SE(s^2) / (2 s)``, with ``SE(s^2)`` from :func:`~sdpa_helpers.sampling.sample_summary`."""
    st = sample_summary(samples)
    std = math.sqrt(st["var"])
    return std, st["se_var"] / (2.0 * std)
