"""Does unit variance hold? Initialisation, correlated queries and keys, and QK-norm.

The footnote behind the 1/sqrt(d_k) scale assumes the components of ``q`` and ``k`` are
independent with mean 0 and variance 1. This module computes what real layers give
instead, and what happens when the assumption breaks:

- :data:`INITS`, :func:`init_weight_variance`, :func:`sample_weights` -- the weight
  variance of common initialisations (LeCun, Xavier/Glorot, PyTorch's ``nn.Linear``
  default, He, GPT-2's N(0, 0.02^2));
- :data:`PROJECTIONS`, :func:`projection_fan_out` -- the shape of the query projection
  (one head, all heads, or a fused QKV matrix), which sets Xavier's ``fan_out``;
- :func:`query_variance` -- ``Var(q_i) = fan_in * Var(W) * E[x^2]`` for ``q = W x``;
- :func:`init_logit_moments` -- mean and variance of ``q . k`` for ``q = W_Q x``, ``k = W_K x'``;
- :func:`sample_tokens`, :func:`sample_projected_logits`, :func:`cluster_mean`
  -- the same by simulation: tokens (raw or through LayerNorm), random projections, and a
  standard error that treats each random network as one independent draw;
- :data:`KURTOSIS`, :func:`correlated_dot_product_moments`, :func:`sample_correlated_qk`,
  :func:`correlated_dot_product_parts`, :func:`sample_correlated_dot_products` -- queries
  and keys correlated as ``k = rho q + sqrt(1 - rho^2) z``;
- :func:`qk_norm_scores`, :func:`cosine_moments` -- QK-norm: ``g cos(theta)`` logits.

Everything is numpy only; every ``rng`` goes through :func:`sdpa_helpers.make_rng`.
"""

from __future__ import annotations

import numbers
from functools import lru_cache

import numpy as np

from . import _checks, sampling
from .attention import layer_norm
from .sampling import EXCESS_KURTOSIS, check_dist, make_rng, sample_components
from .theory import Moments

__all__ = [
    "INITS", "INIT_LABELS", "INIT_SHORT_LABELS", "INIT_DISTRIBUTION", "PROJECTIONS", "KURTOSIS",
    "init_weight_variance", "sample_weights", "projection_fan_out", "query_variance",
    "init_logit_moments", "sample_tokens", "sample_projected_logits", "cluster_mean",
    "correlated_dot_product_moments", "sample_correlated_qk", "correlated_dot_product_parts",
    "sample_correlated_dot_products", "qk_norm_scores", "cosine_moments",
    "D_MODEL_CHOICES", "init_scaled_logits", "softcap", "correlated_dot_product_parts_exact",
    "init_scaled_logits_exact",
]

#: Initialisation schemes known here.
INITS = ("lecun", "xavier", "pytorch_default", "he", "gpt2")

#: A readable name of each scheme, with its weight variance.
INIT_LABELS = {
    "lecun": "LeCun: Var(W) = 1/fan_in",
    "xavier": "Xavier/Glorot: Var(W) = 2/(fan_in + fan_out)",
    "pytorch_default": "PyTorch nn.Linear default: U(±1/√fan_in)",
    "he": "He/Kaiming: Var(W) = 2/fan_in",
    "gpt2": "GPT-2: N(0, 0.02²)",
}

#: A short name of each scheme, for figure titles.
INIT_SHORT_LABELS = {
    "lecun": "LeCun",
    "xavier": "Xavier/Glorot",
    "pytorch_default": "PyTorch default",
    "he": "He/Kaiming",
    "gpt2": "GPT-2 N(0, 0.02²)",
}

#: The distribution each scheme draws from (as PyTorch's init functions of the same name).
INIT_DISTRIBUTION = {
    "lecun": "normal",
    "xavier": "uniform",  # xavier_uniform_, as nn.MultiheadAttention uses
    "pytorch_default": "uniform",  # kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    "he": "normal",
    "gpt2": "normal",
}

#: Shapes of the query projection: one head (d_model -> d_k), all heads (d_model -> d_model),
#: or the fused query/key/value matrix (d_model -> 3 d_model).
PROJECTIONS = ("head", "all_heads", "fused_qkv")

#: Kurtosis E[X^4] / Var(X)^2 of each component distribution of :mod:`sdpa_helpers.sampling`
#: (3 + its :data:`sdpa_helpers.sampling.EXCESS_KURTOSIS`).
KURTOSIS = {dist: 3.0 + kappa for dist, kappa in EXCESS_KURTOSIS.items()}


def _check_scheme(scheme) -> str:
    if not isinstance(scheme, str) or scheme not in INITS:
        raise ValueError(f"scheme must be one of {', '.join(map(repr, INITS))}; got {scheme!r}")
    return scheme


def init_weight_variance(scheme: str, fan_in: int, fan_out: int | None = None) -> float:
    """Variance of every weight of a ``(fan_out, fan_in)`` matrix under an initialisation.

    ============================  ==========================================
    scheme                        ``Var(W)``
    ============================  ==========================================
    ``"lecun"``                   ``1 / fan_in``
    ``"xavier"``                  ``2 / (fan_in + fan_out)``
    ``"pytorch_default"``         ``1 / (3 fan_in)``, from ``U(+-1/sqrt(fan_in))``
    ``"he"``                      ``2 / fan_in``
    ``"gpt2"``                    ``0.02 ** 2`` whatever the shape
    ============================  ==========================================

    PyTorch's ``nn.Linear`` default is ``kaiming_uniform_(a=sqrt(5))``: a uniform with bound
    ``sqrt(2 / (1 + a^2)) * sqrt(3 / fan_in) = 1 / sqrt(fan_in)``, whose variance is
    ``bound^2 / 3``.

    Parameters
    ----------
    scheme : {"lecun", "xavier", "pytorch_default", "he", "gpt2"}
    fan_in : int
        Input dimension (columns of ``W``), >= 1.
    fan_out : int, optional
        Output dimension (rows of ``W``), >= 1; needed by ``"xavier"`` only.

    Returns
    -------
    float

    Examples
    --------
    >>> init_weight_variance("lecun", 512)
    0.001953125
    >>> init_weight_variance("xavier", 512, 512) == init_weight_variance("lecun", 512)
    True
    >>> round(init_weight_variance("pytorch_default", 512) * 3 * 512, 12)
    1.0
    """
    scheme = _check_scheme(scheme)
    fan_in = _checks.positive_int("fan_in", fan_in)
    if fan_out is not None:
        fan_out = _checks.positive_int("fan_out", fan_out)
    if scheme == "lecun":
        return 1.0 / fan_in
    if scheme == "xavier":
        if fan_out is None:
            raise ValueError("fan_out is needed for scheme 'xavier' (its variance is 2/(fan_in + fan_out))")
        return 2.0 / (fan_in + fan_out)
    if scheme == "pytorch_default":
        return 1.0 / (3.0 * fan_in)
    if scheme == "he":
        return 2.0 / fan_in
    return 0.02**2


def sample_weights(scheme: str, fan_in: int, fan_out: int, size=(), rows: int | None = None,
                   rng=None) -> np.ndarray:
    """Draw weight matrices ``W`` of shape ``(*size, fan_out, fan_in)`` under an initialisation.

    Normal schemes draw N(0, Var(W)); ``"xavier"`` and ``"pytorch_default"`` draw the
    uniform of the same variance (as ``xavier_uniform_`` and ``nn.Linear`` do).
    ``rows=d_k`` draws only the first ``d_k`` rows (one head's slice): the entries are
    independent, so this is exactly the slice of a full draw in distribution.

    Parameters
    ----------
    scheme : {"lecun", "xavier", "pytorch_default", "he", "gpt2"}
    fan_in, fan_out : int
        Columns and rows of each matrix.
    size : int or tuple of int
        Leading (batch) shape: how many independent matrices.
    rows : int, optional
        Number of rows to draw, 1 <= rows <= fan_out; defaults to ``fan_out``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (*size, rows, fan_in)

    Examples
    --------
    >>> W = sample_weights("pytorch_default", 100, 50, rng=0)
    >>> W.shape, bool(np.abs(W).max() <= 1 / np.sqrt(100))
    ((50, 100), True)
    >>> W = sample_weights("lecun", 400, 500, rng=0)
    >>> round(float(W.var() * 400), 2)
    1.0
    >>> sample_weights("xavier", 512, 1536, size=3, rows=64, rng=0).shape
    (3, 64, 512)
    """
    var = init_weight_variance(scheme, fan_in, fan_out)
    rows = fan_out if rows is None else _checks.positive_int("rows", rows)
    if rows > fan_out:
        raise ValueError(f"rows must be <= fan_out={fan_out}, got {rows}")
    size = (size,) if isinstance(size, numbers.Integral) and not isinstance(size, bool) else size
    if not isinstance(size, tuple) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in size):
        raise TypeError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    if any(n < 0 for n in size):
        raise ValueError(f"size must hold non-negative ints, got {size!r}")
    shape = (*size, int(rows), int(fan_in))
    return sample_components(shape, dist=INIT_DISTRIBUTION[scheme], var=var, rng=rng)


def projection_fan_out(projection: str, d_model: int, d_k: int) -> int:
    """``fan_out`` of the matrix that makes one head's queries.

    A head's queries are ``d_k`` rows of a bigger matrix in most code: one matrix for
    all heads (``d_model -> d_model``) or a fused query/key/value matrix
    (``d_model -> 3 d_model``, as ``nn.MultiheadAttention``'s ``in_proj_weight``).
    Only Xavier's variance depends on it.

    Parameters
    ----------
    projection : {"head", "all_heads", "fused_qkv"}
    d_model, d_k : int

    Returns
    -------
    int

    Examples
    --------
    >>> [projection_fan_out(p, 512, 64) for p in PROJECTIONS]
    [64, 512, 1536]
    """
    if not isinstance(projection, str) or projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {', '.join(map(repr, PROJECTIONS))}; got {projection!r}")
    d_model = _checks.positive_int("d_model", d_model)
    d_k = _checks.positive_int("d_k", d_k)
    return {"head": d_k, "all_heads": d_model, "fused_qkv": 3 * d_model}[projection]


def query_variance(scheme: str, fan_in: int, fan_out: int | None = None,
                   mean_square_x: float = 1.0) -> float:
    """``Var(q_i)`` for ``q = W x`` with ``W`` drawn by ``scheme`` and independent of ``x``.

    ``q_i = sum_j W_ij x_j`` with independent mean-0 weights, so
    ``Var(q_i) = sum_j Var(W) E[x_j^2] = fan_in * Var(W) * E[x^2]``.
    After LayerNorm, ``E[x^2] = 1`` (mean 0, variance 1 per token).

    Parameters
    ----------
    scheme : {"lecun", "xavier", "pytorch_default", "he", "gpt2"}
    fan_in : int
        Length of ``x`` (d_model).
    fan_out : int, optional
        Rows of the matrix (needed by ``"xavier"``).
    mean_square_x : float
        ``E[x_j^2]`` averaged over the components, >= 0.

    Returns
    -------
    float

    Examples
    --------
    >>> query_variance("lecun", 512)
    1.0
    >>> round(query_variance("xavier", 512, 64), 4)   # 2 * 512 / 576
    1.7778
    >>> round(query_variance("pytorch_default", 512), 4)
    0.3333
    """
    var_w = init_weight_variance(scheme, fan_in, fan_out)
    mean_square_x = _checks.non_negative("mean_square_x", mean_square_x)
    return fan_in * var_w * mean_square_x


def init_logit_moments(scheme: str, d_model: int, d_k: int, fan_out: int | None = None,
                       mean_square_x: float = 1.0, scale: float = 1.0) -> Moments:
    """Mean and variance of ``scale * (q . k)`` for ``q = W_Q x``, ``k = W_K x'`` at initialisation.

    ``W_Q`` and ``W_K`` are independent, so given the tokens the ``q_i`` and ``k_i`` are
    independent with mean 0; the ``d_k`` products ``q_i k_i`` are uncorrelated and

    ``E[q . k] = 0`` and ``Var(q . k) = d_k Var(q_i) Var(k_i) = d_k Var(q_i)^2``

    -- for ``x' = x`` (a token with itself) as much as for two different tokens, as long
    as ``|x|^2 = d_model E[x^2]`` is fixed, which LayerNorm ensures.

    Parameters
    ----------
    scheme : {"lecun", "xavier", "pytorch_default", "he", "gpt2"}
    d_model : int
        Length of the tokens ``x`` (fan_in of the projections).
    d_k : int
        Length of ``q`` and ``k``.
    fan_out : int, optional
        Rows of the projection matrices; defaults to ``d_k`` (one head's matrix).
    mean_square_x : float
        ``E[x_j^2]`` (1 after LayerNorm).
    scale : float
        Multiplies the logits (``d_k ** -0.5`` for scaled attention).

    Returns
    -------
    Moments

    Examples
    --------
    >>> init_logit_moments("lecun", 512, 64)
    Moments(mean=0.0, var=64.0)
    >>> m = init_logit_moments("pytorch_default", 512, 64)
    >>> round(m.var, 4), round(64 / 9, 4)
    (7.1111, 7.1111)
    """
    d_model = _checks.positive_int("d_model", d_model)
    d_k = _checks.positive_int("d_k", d_k)
    scale = _checks.real("scale", scale)
    if fan_out is not None:
        fan_out = _checks.positive_int("fan_out", fan_out)
        if fan_out < d_k:
            raise ValueError(f"fan_out must be >= d_k (the head's rows are part of the matrix), got "
                             f"fan_out={fan_out} < d_k={d_k}")
    var_q = query_variance(scheme, d_model, d_k if fan_out is None else fan_out, mean_square_x)
    return Moments(0.0, scale**2 * d_k * var_q**2)


def sample_tokens(n_tokens: int, d_model: int, layer_normed: bool = True, rng=None) -> np.ndarray:
    """Token vectors as a Transformer layer sees them: raw, or through LayerNorm (no gain, no bias).

    Each raw token is ``offset + spread * z`` with its own offset (``N(0, 2^2)``) and spread
    (log-normal, ``exp(N(0, 0.5^2))``) and standard normal ``z``: raw tokens are far from mean 0
    and variance 1, and their lengths vary. With ``layer_normed=True`` they go through
    :func:`sdpa_helpers.attention.layer_norm`, after which every token has mean 0 and
    variance 1, so ``|x|^2 = d_model`` (up to LayerNorm's ``eps``).

    Parameters
    ----------
    n_tokens : int
    d_model : int
        Length of each token vector, >= 2.
    layer_normed : bool
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_tokens, d_model)

    Examples
    --------
    >>> x = sample_tokens(3, 512, rng=0)
    >>> x.shape, bool(np.abs(x.mean(axis=1)).max() < 1e-12), bool(np.abs(x.var(axis=1) - 1).max() < 1e-4)
    ((3, 512), True, True)
    """
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


def sample_projected_logits(scheme: str, d_k: int, X, X2=None, n_networks: int = 16,
                            fan_out: int | None = None, tied: bool = False, rng=None) -> np.ndarray:
    """Simulate ``q . k`` with ``q = W_Q x``, ``k = W_K x'`` for freshly initialised networks.

    Each of ``n_networks`` draws its own ``W_Q`` and ``W_K``: the ``d_k`` rows of one head of
    a ``(fan_out, d_model)`` matrix (the rows of a bigger matrix are independent, so drawing
    only the head's rows is exact). Every network sees the same token pairs: row ``t`` pairs
    ``x = X[t]`` with ``x' = X2[t]``; ``X2=None`` pairs each token with itself (the diagonal
    of a self-attention score matrix). ``tied=True`` uses ``W_K = W_Q``.

    Given the tokens, ``E[(q . k)^2] = d_k Var(W)^2 |x|^2 |x'|^2`` when ``W_Q``, ``W_K`` are
    independent (see :func:`init_logit_moments`).

    Parameters
    ----------
    scheme : {"lecun", "xavier", "pytorch_default", "he", "gpt2"}
    d_k : int
    X : array_like, shape (n_tokens, d_model)
        The tokens that make the queries.
    X2 : array_like, shape (n_tokens, d_model), optional
        The tokens that make the keys; ``None`` means ``X`` itself.
    n_networks : int
        Independent (W_Q, W_K) draws, >= 1 (>= 2 for a standard error, see :func:`cluster_mean`).
    fan_out : int, optional
        Rows of the full projection matrix (sets Xavier's variance); defaults to ``d_k``.
    tied : bool
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_networks, n_tokens)
        Unscaled logits ``q . k``; row ``n`` comes from network ``n``.

    Examples
    --------
    >>> X, X2 = sample_tokens(200, 256, rng=1), sample_tokens(200, 256, rng=2)
    >>> s = sample_projected_logits("lecun", 16, X, X2, n_networks=40, rng=0)
    >>> s.shape, round(float((s ** 2).mean()) / 16, 1)   # Var(q . k) = d_k Var(q_i)^2 = 16
    ((40, 200), 1.0)
    """
    scheme = _check_scheme(scheme)
    d_k = _checks.positive_int("d_k", d_k)
    X = _checks.real_array("X", X, min_ndim=2, shape_hint="(n_tokens, d_model)")
    X2 = X if X2 is None else _checks.real_array("X2", X2, min_ndim=2, shape_hint="(n_tokens, d_model)")
    if X.ndim != 2 or X2.shape != X.shape:
        raise ValueError(f"X and X2 must both have shape (n_tokens, d_model); got {X.shape} and {X2.shape}")
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
    """Mean of ``values`` and its standard error, treating each row as one independent draw.

    The entries of one row of :func:`sample_projected_logits` share a network, so they
    are not independent of each other; given the tokens, the rows are. Average each row, then take the
    mean and ``std(ddof=1) / sqrt(n_rows)`` of the row means (a cluster-robust SE).

    Parameters
    ----------
    values : array_like, shape (n_rows, n_cols)
        ``n_rows >= 2``.

    Returns
    -------
    mean : float
    se : float

    Examples
    --------
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


def _check_rho(rho) -> float:
    rho = _checks.real("rho", rho)
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be a correlation in [-1, 1], got {rho}")
    return rho


def correlated_dot_product_moments(d_k: int, rho: float, kurtosis: float = 3.0, scale: float = 1.0) -> Moments:
    """Mean and variance of ``scale * (q . k)`` for ``k = rho q + sqrt(1 - rho^2) z``.

    ``q`` and ``z`` are independent with independent mean-0, variance-1 components, and
    ``E[q_i^4] = kurtosis`` (3 for Gaussian). Then ``k_i`` has variance 1, correlation
    ``rho`` with ``q_i``, and

    - ``E[q_i k_i] = rho E[q_i^2] = rho``, so ``E[q . k] = rho d_k``;
    - ``E[q_i^2 k_i^2] = rho^2 E[q_i^4] + (1 - rho^2) E[q_i^2] E[z_i^2]``, so
      ``Var(q_i k_i) = rho^2 (kurtosis - 1) + 1 - rho^2`` -- for Gaussian components
      ``2 rho^2 + 1 - rho^2 = 1 + rho^2`` -- and ``Var(q . k) = d_k (1 + rho^2)``.

    Parameters
    ----------
    d_k : int
    rho : float
        Correlation of each ``q_i`` with ``k_i``, in [-1, 1].
    kurtosis : float
        ``E[q_i^4]`` for unit-variance components, >= 1.
    scale : float
        Multiplies the dot product.

    Returns
    -------
    Moments

    Examples
    --------
    >>> correlated_dot_product_moments(64, 0.0)
    Moments(mean=0.0, var=64.0)
    >>> correlated_dot_product_moments(64, 0.5)
    Moments(mean=32.0, var=80.0)
    >>> correlated_dot_product_moments(64, 0.5, scale=64 ** -0.5)   # mean rho sqrt(d_k) = 4
    Moments(mean=4.0, var=1.25)
    """
    d_k = _checks.positive_int("d_k", d_k)
    rho = _check_rho(rho)
    kurtosis = _checks.real("kurtosis", kurtosis)
    if kurtosis < 1.0:
        raise ValueError(f"kurtosis must be >= 1 (E[X^4] >= E[X^2]^2), got {kurtosis}")
    scale = _checks.real("scale", scale)
    var_one = rho**2 * (kurtosis - 1.0) + 1.0 - rho**2
    return Moments(scale * rho * d_k, scale**2 * d_k * var_one)


def sample_correlated_qk(n_samples: int, d_k: int, rho: float, dist: str = "normal", rng=None):
    """Draw pairs ``q``, ``k = rho q + sqrt(1 - rho^2) z`` with ``z`` independent of ``q``.

    Parameters
    ----------
    n_samples, d_k : int
    rho : float
        In [-1, 1].
    dist : {"normal", "uniform", "rademacher", "laplace"}
        Distribution of the components of ``q`` (``z`` is always standard normal).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    q, k : ndarray, shape (n_samples, d_k)

    Examples
    --------
    >>> q, k = sample_correlated_qk(100_000, 2, 0.8, rng=0)
    >>> round(float(np.corrcoef(q[:, 0], k[:, 0])[0, 1]), 2), round(float(k.var()), 2)
    (0.8, 1.0)
    """
    n_samples = _checks.positive_int("n_samples", n_samples)
    d_k = _checks.positive_int("d_k", d_k)
    rho = _check_rho(rho)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    q = sample_components((n_samples, d_k), dist=dist, rng=rng)
    z = rng.standard_normal((n_samples, d_k))
    return q, rho * q + np.sqrt(1.0 - rho**2) * z


def correlated_dot_product_parts(d_k: int, n_samples: int, dist: str = "normal", rng=None):
    """The two parts of ``q . k`` for correlated pairs: ``q . q`` and ``q . z``.

    With ``k = rho q + sqrt(1 - rho^2) z``, ``q . k = rho (q . q) + sqrt(1 - rho^2) (q . z)``
    exactly, so one draw of the parts gives the dot products for every ``rho``.
    Works in chunks, so memory stays bounded whatever ``d_k`` and ``n_samples`` are.

    Parameters
    ----------
    d_k, n_samples : int
    dist : {"normal", "uniform", "rademacher", "laplace"}
        Distribution of the components of ``q``; ``z`` is standard normal.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    qq, qz : ndarray, shape (n_samples,)

    Examples
    --------
    >>> qq, qz = correlated_dot_product_parts(64, 50_000, rng=0)
    >>> round(float(qq.mean()) / 64, 1), round(float(qz.var()) / 64, 1)   # E[q.q] = d_k, Var(q.z) = d_k
    (1.0, 1.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    dist = check_dist("dist", dist)
    rng = make_rng(rng)
    qq, qz = np.empty(n_samples), np.empty(n_samples)
    rows = max(1, sampling.CHUNK_ENTRIES // d_k)  # chunks of q (and of z) of at most CHUNK_ENTRIES entries
    for start in range(0, n_samples, rows):
        n = min(rows, n_samples - start)
        q = sample_components((n, d_k), dist=dist, rng=rng)  # (n, d_k)
        z = rng.standard_normal((n, d_k))  # (n, d_k)
        np.einsum("ij,ij->i", q, q, out=qq[start:start + n])  # (n, d_k) -> (n,)
        np.einsum("ij,ij->i", q, z, out=qz[start:start + n])
    return qq, qz


def sample_correlated_dot_products(d_k: int, n_samples: int, rho: float, scale: float = 1.0,
                                   dist: str = "normal", rng=None) -> np.ndarray:
    """Draw ``scale * (q . k)`` for ``n_samples`` correlated pairs (see :func:`sample_correlated_qk`).

    Parameters
    ----------
    d_k, n_samples : int
    rho : float
        In [-1, 1].
    scale : float
        ``d_k ** -0.5`` for scaled attention, ``1 / d_k`` for muP's scale.
    dist : {"normal", "uniform", "rademacher", "laplace"}
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_samples,)

    Examples
    --------
    >>> s = sample_correlated_dot_products(64, 100_000, 0.5, scale=64 ** -0.5, rng=0)
    >>> round(float(s.mean()), 1)   # rho sqrt(d_k) = 4
    4.0
    >>> bool(abs(s.var() - 1.25) < 5 * 1.25 * np.sqrt(2 / 100_000))   # 1 + rho^2, within 5 SE
    True
    """
    rho = _check_rho(rho)
    scale = _checks.real("scale", scale)
    qq, qz = correlated_dot_product_parts(d_k, n_samples, dist=dist, rng=rng)
    return scale * (rho * qq + np.sqrt(1.0 - rho**2) * qz)


def qk_norm_scores(Q, K, gain: float = 1.0) -> np.ndarray:
    """QK-norm logits: ``gain * (q / |q|) . (k / |k|) = gain * cos(theta)`` for every pair.

    Henry et al. (2020) normalise each query and key to unit length and multiply by a
    learned scalar ``g`` instead of dividing by ``sqrt(d_k)``; every logit lies in
    ``[-g, g]`` whatever ``d_k`` is.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
        No row of ``Q`` or ``K`` may be all zeros (it has no direction).
    gain : float > 0
        The scale ``g``.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)

    Examples
    --------
    >>> qk_norm_scores([[3.0, 4.0]], [[1.0, 0.0], [0.0, -2.0]], gain=10.0).tolist()
    [[6.0, -8.0]]
    """
    Q = _checks.real_array("Q", Q, min_ndim=2, shape_hint="(..., n_q, d_k)")
    K = _checks.real_array("K", K, min_ndim=2, shape_hint="(..., n_k, d_k)")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q has d_k={Q.shape[-1]} but K has d_k={K.shape[-1]}")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch shapes of Q {Q.shape[:-2]} and K {K.shape[:-2]} do not broadcast "
                         f"(Q is (..., n_q, d_k), K is (..., n_k, d_k))") from None
    gain = _checks.positive("gain", gain)
    cos = _unit_rows("Q", Q) @ np.swapaxes(_unit_rows("K", K), -1, -2)  # (..., n_q, d_k) @ (..., d_k, n_k)
    return gain * np.clip(cos, -1.0, 1.0)


def _unit_rows(name: str, X: np.ndarray) -> np.ndarray:
    """Each row of ``X`` divided by its length, computed scale-safely (any finite magnitude)."""
    peak = np.abs(X).max(axis=-1, keepdims=True)  # (..., n, 1): rescale first, so squares cannot overflow/underflow
    if (peak == 0).any():
        raise ValueError(f"{name} must have no all-zero rows: a zero vector has no direction to normalise")
    Xs = X / peak  # every row's largest entry is now +-1
    return Xs / np.linalg.norm(Xs, axis=-1, keepdims=True)


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


#: The d_model values of notebook 08's initialisation figures and explorer: powers of two, 64 to 4096.
D_MODEL_CHOICES = tuple(2**i for i in range(6, 13))

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


def init_scaled_logits(scheme: str, d_model: int, projection: str = "head", d_k: int = 64,
                       seed: int = 0) -> np.ndarray:
    """Simulated scaled logits ``q . k / sqrt(d_k)`` at initialisation, shape (8, 256); cached.

    8 networks, 256 pairs of LayerNormed tokens. ``q . k`` is bilinear in ``(W_Q, W_K)``, so
    one simulation per distribution family (normal: LeCun's; uniform: PyTorch's default) is
    made and rescaled by ``Var(W_scheme) / Var(W_reference)``: weights ``c`` times larger give
    logits ``c^2`` times larger. Notebook 08's figures and its InitExplorer use these samples.

    >>> s = init_scaled_logits("lecun", 512)
    >>> s.shape, round(float((s ** 2).mean()), 1)
    ((8, 256), 1.0)
    """
    scheme = _check_scheme(scheme)
    d_model = _checks.positive_int("d_model", d_model)
    d_k = _checks.positive_int("d_k", d_k)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    family = INIT_DISTRIBUTION[scheme]
    reference = _FAMILY_REFERENCE[family]
    fan_out = projection_fan_out(projection, d_model, d_k)
    factor = init_weight_variance(scheme, d_model, fan_out) / init_weight_variance(reference, d_model, d_k)
    return _reference_logits(d_model, family, d_k, int(seed)) * (factor / np.sqrt(d_k))


def softcap(logits, cap: float) -> np.ndarray:
    """Soft-capping of attention logits: ``cap * tanh(logits / cap)``, as Gemma 2 does (cap 50).

    Close to the identity for ``|s| << cap`` (``s - s^3 / (3 cap^2) + ...``), and never beyond
    ``+-cap``, however large ``s`` grows.

    >>> softcap([0.0, 5.0, 1e6], 50.0).round(3).tolist()
    [0.0, 4.983, 50.0]
    """
    s = _checks.real_array("logits", logits)
    cap = _checks.positive("cap", cap)
    with np.errstate(over="ignore", under="ignore"):
        y = s / cap  # may overflow to +-inf (tanh -> +-1, right) or underflow (handled by the series)
        small = np.abs(y) < 1e-4
        series = s * (1.0 - y * y / 3.0)  # cap tanh(s/cap) = s - s^3/(3 cap^2) + O(y^5): exact to 1e-16 here
    return np.where(small, series, cap * np.tanh(y))


def correlated_dot_product_parts_exact(d_k: int, n_samples: int, rng=None):
    """``q . q`` and ``q . z`` for standard normal ``q``, ``z``, drawn exactly in O(n_samples) whatever d_k is.

    ``q . q = |q|^2`` is chi-square with ``d_k`` degrees of freedom, and given ``q``,
    ``q . z`` is ``N(0, |q|^2)`` (a fixed combination of independent standard normals), so
    ``q . z = |q| * N(0, 1)`` with an independent ``N(0, 1)``. The pair has exactly the
    distribution of :func:`correlated_dot_product_parts` with ``dist="normal"``, at a cost that
    does not grow with ``d_k`` (an explorer's first visit to ``d_k = 4096`` stays instant).

    Parameters
    ----------
    d_k, n_samples : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    qq, qz : ndarray, shape (n_samples,)

    Examples
    --------
    >>> qq, qz = correlated_dot_product_parts_exact(64, 200_000, rng=0)
    >>> round(float(qq.mean()) / 64, 2), round(float(qz.var()) / 64, 2)
    (1.0, 1.0)
    """
    d_k = _checks.positive_int("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    rng = make_rng(rng)
    qq = rng.chisquare(d_k, n_samples)
    return qq, np.sqrt(qq) * rng.standard_normal(n_samples)


@lru_cache(maxsize=16)  # at most 16 arrays of n_samples floats
def _unit_scaled_dot_products(d_k: int, n_samples: int, seed: int) -> np.ndarray:
    _, qz = correlated_dot_product_parts_exact(d_k, n_samples, rng=seed)  # q . z for independent q, z
    out = qz / np.sqrt(d_k)
    out.flags.writeable = False
    return out


def init_scaled_logits_exact(scheme: str, d_model: int, projection: str = "head", d_k: int = 64,
                             n_samples: int = 2048, seed: int = 0) -> np.ndarray:
    """Scaled logits ``q . k / sqrt(d_k)`` at initialisation, one independent network per sample; fast.

    After LayerNorm, ``|x|^2 = d_model`` for every token. Given the tokens, a freshly drawn
    ``W_Q`` gives ``q_i = w_i . x`` independent across ``i`` with mean 0 and variance
    ``Var(q_i) = d_model Var(W)`` (:func:`query_variance`), and the same for ``k``. For normal
    weights ``q_i`` is then exactly ``N(0, Var(q_i))``, so ``q . k / sqrt(d_k)`` is
    ``Var(q_i)`` times the scaled dot product of two standard normal vectors, drawn here
    exactly (:func:`correlated_dot_product_parts_exact`) whatever d_model and d_k are. For
    uniform weights (PyTorch's default, Xavier's uniform) ``q_i`` is a sum of d_model
    independent uniform terms, drawn here as a normal of the same variance: the variance is
    exact, the excess kurtosis of ``q_i`` (``-1.2 sum x_j^4 / |x|^4``, about ``-3.6/d_model``) is
    left out. (The tokens' LayerNorm ``eps`` is neglected: ``|x|^2`` is ``d_model`` to 1e-5.)
    Samples are independent, so the mean of ``s**2`` has the ordinary standard error.

    Returns
    -------
    ndarray, shape (n_samples,)

    >>> s = init_scaled_logits_exact("pytorch_default", 512)
    >>> s.shape, round(float(np.sqrt((s ** 2).mean())), 1)   # std Var(q_i) = 1/3
    ((2048,), 0.3)
    """
    fan_out = projection_fan_out(projection, d_model, d_k)
    var_q = query_variance(scheme, d_model, fan_out)
    n_samples = _checks.positive_int("n_samples", n_samples)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return var_q * _unit_scaled_dot_products(int(d_k), n_samples, int(seed))
