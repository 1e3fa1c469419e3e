"""Simulated networks at initialisation: tokens through LayerNorm, random projections, scaled logits, and a
standard error that treats each random network as one independent draw (:func:`cluster_mean`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import _checks
from ..attention import layer_norm
from ..sampling import make_rng
from .correlation import correlated_dot_product_parts_exact
from .init import (
    INIT_DISTRIBUTION,
    check_scheme,
    init_weight_variance,
    projection_fan_out,
    query_variance,
    sample_weights,
)


def sample_tokens(n_tokens: int, d_model: int, layer_normed: bool = True, rng=None) -> np.ndarray:
    """Token vectors, shape (n_tokens, d_model >= 2): raw, or through LayerNorm (no gain, no bias; then every
    token has mean 0, variance 1, ``|x|^2 = d_model``). A raw token is ``offset + spread * z``: offset ``N(0, 2^2)``,
    spread ``exp(N(0, 0.5^2))``, standard normal ``z``: far from mean 0 and variance 1, lengths varying."""
    n_tokens = _checks.positive_int("n_tokens", n_tokens)
    d_model = _checks.positive_int("d_model", d_model)
    if d_model < 2:
        raise ValueError(f"d_model must be >= 2 for LayerNorm to give variance 1, got {d_model}")
    if not isinstance(layer_normed, (bool, np.bool_)):
        raise TypeError(f"layer_normed must be True or False, got {layer_normed!r}")
    rng = make_rng(rng)
    offset = 2.0 * rng.standard_normal((n_tokens, 1))
    spread = np.exp(0.5 * rng.standard_normal((n_tokens, 1)))
    raw = offset + spread * rng.standard_normal((n_tokens, d_model))  # (n_tokens, d_model)
    return layer_norm(raw) if layer_normed else raw


def _check_token_pairs(X, X2) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``X2`` (``None``: ``X`` itself) as float arrays of one shape ``(n_tokens, d_model)``."""
    X = _checks.real_array("X", X, min_ndim=2, shape_hint="(n_tokens, d_model)")
    X2 = X if X2 is None else _checks.real_array("X2", X2, min_ndim=2, shape_hint="(n_tokens, d_model)")
    if X.ndim != 2 or X2.shape != X.shape:
        raise ValueError(f"X and X2 must both have shape (n_tokens, d_model); got {X.shape} and {X2.shape}")
    return X, X2


def sample_projected_logits(scheme: str, d_k: int, X, X2=None, n_networks: int = 16,
                            fan_out: int | None = None, tied: bool = False, rng=None) -> np.ndarray:
    """Unscaled ``q . k`` (``q = W_Q x``, ``k = W_K x'``) for ``n_networks`` fresh networks: (n_networks, n_tokens).

    Each network draws the ``d_k`` rows of one head of a ``(fan_out, d_model)`` matrix (default ``fan_out = d_k``)
    for ``W_Q`` and ``W_K`` (``tied=True``: ``W_K = W_Q``). Row ``t`` pairs ``x = X[t]`` with ``x' = X2[t]``
    (X, X2 of shape (n_tokens, d_model); ``X2=None``: each token with itself).
    """
    scheme = check_scheme(scheme)
    d_k = _checks.d_k("d_k", d_k)
    X, X2 = _check_token_pairs(X, X2)
    d_model = X.shape[1]
    n_networks = _checks.positive_int("n_networks", n_networks)
    fan_out = d_k if fan_out is None else _checks.positive_int("fan_out", fan_out)
    if fan_out < d_k:
        raise ValueError(f"fan_out must be >= d_k (the head's rows are part of the matrix), got "
                         f"fan_out={fan_out} < d_k={d_k}")
    if not isinstance(tied, (bool, np.bool_)):
        raise TypeError(f"tied must be True or False, got {tied!r}")
    rng = make_rng(rng)
    out = np.empty((n_networks, X.shape[0]))
    for n in range(n_networks):  # one network at a time: memory stays at two (d_k, d_model) matrices
        W_Q = sample_weights(scheme, d_model, fan_out, rows=d_k, rng=rng)  # the head's rows: (d_k, d_model)
        W_K = W_Q if tied else sample_weights(scheme, d_model, fan_out, rows=d_k, rng=rng)
        q = X @ W_Q.T  # (n_tokens, d_model) @ (d_model, d_k) -> (n_tokens, d_k)
        k = X2 @ W_K.T  # (n_tokens, d_model) @ (d_model, d_k) -> (n_tokens, d_k)
        np.einsum("td,td->t", q, k, out=out[n])  # row-wise dot -> (n_tokens,)
    return out


def cluster_mean(values) -> tuple[float, float]:
    """Mean of ``values`` (n_rows >= 2, n_cols) and its standard error, each row one independent draw: the mean
    and ``std(ddof=1) / sqrt(n_rows)`` of the row means (the entries of a row share a network).

    >>> cluster_mean([[1.0, 3.0], [2.0, 4.0]])
    (2.5, 0.5)
    """
    arr = _checks.real_array("values", values, min_ndim=2, shape_hint="(n_rows, n_cols)")
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(f"values must have shape (n_rows >= 2, n_cols >= 1), got {arr.shape}")
    peak = float(np.abs(arr).max())
    if peak == 0.0:
        return 0.0, 0.0
    row_means = (arr / peak).mean(axis=1)  # rescaled first: no square can overflow or underflow
    mean, se = peak * float(row_means.mean()), peak * float(row_means.std(ddof=1) / np.sqrt(arr.shape[0]))
    if not (np.isfinite(mean) and np.isfinite(se)):
        raise ValueError("values are too large: their mean or its standard error does not fit a float")
    return mean, se


#: The d_model values of notebook 08's initialisation figures and explorer: powers of two, 64 to 4096.
D_MODEL_CHOICES = tuple(2**i for i in range(6, 13))
#: The head size d_k of notebook 08's initialisation figures and explorer.
INIT_D_K = 64

# The reference scheme of each distribution family: logits are bilinear in (W_Q, W_K), so a
# scheme's logits are the family's reference logits times Var(W_scheme) / Var(W_reference).
_FAMILY_REFERENCE = {"normal": "lecun", "uniform": "pytorch_default"}


@lru_cache(maxsize=32)  # at most 32 arrays of 8 x 256 floats (16 KiB each)
def _reference_logits(d_model: int, family: str, d_k: int, seed: int) -> np.ndarray:
    rng = make_rng(seed)
    X, X2 = sample_tokens(256, d_model, rng=rng), sample_tokens(256, d_model, rng=rng)  # (256, d_model) each
    out = sample_projected_logits(_FAMILY_REFERENCE[family], d_k, X, X2, n_networks=8, rng=rng)
    out.flags.writeable = False  # cached: callers get a read-only view
    return out


def init_scaled_logits(scheme: str, d_model: int, projection: str = "head", d_k: int = INIT_D_K,
                       seed: int = 0) -> np.ndarray:
    """Simulated scaled logits ``q . k / sqrt(d_k)`` at initialisation, shape (8, 256) (8 networks, 256 pairs of
    LayerNormed tokens); cached. ``q . k`` is bilinear in the weights, so one simulation per distribution family
    (normal: LeCun's; uniform: PyTorch's default) is rescaled by ``Var(W_scheme) / Var(W_reference)``."""
    scheme = check_scheme(scheme)
    d_model = _checks.positive_int("d_model", d_model)
    d_k = _checks.d_k("d_k", d_k)
    seed = _checks.seed("seed", seed)
    family = INIT_DISTRIBUTION[scheme]
    reference = _FAMILY_REFERENCE[family]
    fan_out = projection_fan_out(projection, d_model, d_k)
    factor = init_weight_variance(scheme, d_model, fan_out) / init_weight_variance(reference, d_model, d_k)
    return _reference_logits(d_model, family, d_k, seed) * (factor / np.sqrt(d_k))


@lru_cache(maxsize=16)  # at most 16 arrays of n_samples floats
def _unit_scaled_dot_products(d_k: int, n_samples: int, seed: int) -> np.ndarray:
    _, qz = correlated_dot_product_parts_exact(d_k, n_samples, rng=seed)  # q . z for independent q, z
    out = qz / np.sqrt(d_k)
    out.flags.writeable = False
    return out


def init_scaled_logits_exact(scheme: str, d_model: int, projection: str = "head", d_k: int = INIT_D_K,
                             n_samples: int = 2048, seed: int = 0) -> np.ndarray:
    """Scaled logits ``q . k / sqrt(d_k)`` at initialisation, one independent network per sample: shape (n_samples,).

    After LayerNorm ``|x|^2 = d_model``, so given the tokens ``q_i`` has variance ``Var(q_i)``
    (:func:`query_variance`), independent across ``i``: exactly normal for normal weights, and ``q . k / sqrt(d_k)``
    is ``Var(q_i)`` times a scaled dot product of standard normals, drawn exactly in O(n) whatever d_model and d_k
    (:func:`correlated_dot_product_parts_exact`). Uniform weights are drawn as the normal of the same variance
    (their excess kurtosis, about ``-3.6/d_model``, is left out).
    """
    fan_out = projection_fan_out(projection, d_model, d_k)
    var_q = query_variance(scheme, d_model, fan_out)
    n_samples = _checks.positive_int("n_samples", n_samples)
    seed = _checks.seed("seed", seed)
    return var_q * _unit_scaled_dot_products(int(d_k), n_samples, seed)
