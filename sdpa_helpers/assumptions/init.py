"""Initialisation: the weight variance of each scheme, and what it makes of Var(q_i) and Var(q . k).

For ``q = W x`` with mean-0 weights independent of the token ``x``,
``Var(q_i) = fan_in * Var(W) * E[x^2]``; with ``W_Q`` and ``W_K`` drawn independently,
``Var(q . k) = d_k Var(q_i) Var(k_i)``. Notebook 08, section 2.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _checks
from ..sampling import sample_components
from ..scales import scale_factor
from ..theory import Moments

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


def check_scheme(scheme) -> str:
    """Return ``scheme`` if it is one of :data:`INITS`, or raise a ``ValueError`` naming ``scheme``."""
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
    scheme = check_scheme(scheme)
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
    d_k = _checks.d_k("d_k", d_k)
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
                       mean_square_x: float = 1.0, scale: float | str | None = "unscaled") -> Moments:
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
    scale : None, {"unscaled", "sqrt", "inv_d"} or float > 0
        What multiplies the logits, resolved by :func:`sdpa_helpers.scales.scale_factor`
        (``None`` or ``"sqrt"``: ``1/sqrt(d_k)``); default ``"unscaled"``.

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
    >>> init_logit_moments("lecun", 512, 64, scale="sqrt")
    Moments(mean=0.0, var=1.0)
    """
    d_model = _checks.positive_int("d_model", d_model)
    d_k = _checks.d_k("d_k", d_k)
    factor = scale_factor(scale, d_k)
    if fan_out is not None:
        fan_out = _checks.positive_int("fan_out", fan_out)
        if fan_out < d_k:
            raise ValueError(f"fan_out must be >= d_k (the head's rows are part of the matrix), got "
                             f"fan_out={fan_out} < d_k={d_k}")
    var_q = query_variance(scheme, d_model, d_k if fan_out is None else fan_out, mean_square_x)
    return Moments(0.0, factor**2 * d_k * var_q**2)
