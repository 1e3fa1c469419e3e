"""Initialisation: the weight variance of each scheme, and what it makes of Var(q_i) and Var(q . k) (notebook 08)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _checks
from ..sampling import sample_components
from ..scales import scale_factor
from ..theory import Moments

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
    """Variance of every weight of a ``(fan_out, fan_in)`` matrix under ``scheme`` (one of :data:`INITS`).

    LeCun ``1/fan_in``; Xavier ``2/(fan_in + fan_out)`` (needs ``fan_out``); PyTorch's ``nn.Linear``
    default ``kaiming_uniform_(a=sqrt(5))`` = ``U(+-1/sqrt(fan_in))``, variance ``1/(3 fan_in)``;
    He ``2/fan_in``; GPT-2 ``0.02**2`` whatever the shape.
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
    """Draw weight matrices of shape ``(*size, rows, fan_in)`` (``rows`` default ``fan_out``) under ``scheme``.

    Normal schemes draw N(0, Var(W)); ``"xavier"`` and ``"pytorch_default"`` the uniform of the same
    variance. ``rows=d_k`` draws one head's slice only (exact in distribution: the entries are independent).
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
    """``fan_out`` of the matrix that makes one head's queries: ``d_k`` (``"head"``), ``d_model`` (``"all_heads"``)
    or ``3 d_model`` (``"fused_qkv"``, as ``nn.MultiheadAttention``'s ``in_proj_weight``). Only Xavier depends on it.

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
    """``Var(q_i) = fan_in * Var(W) * E[x^2]`` for ``q = W x``, ``W`` drawn by ``scheme`` independently of ``x``
    (``mean_square_x`` = ``E[x_j^2]``, 1 after LayerNorm; ``fan_out`` needed by ``"xavier"``)."""
    var_w = init_weight_variance(scheme, fan_in, fan_out)
    mean_square_x = _checks.non_negative("mean_square_x", mean_square_x)
    return fan_in * var_w * mean_square_x


def init_logit_moments(scheme: str, d_model: int, d_k: int, fan_out: int | None = None,
                       mean_square_x: float = 1.0, scale: float | str | None = "unscaled") -> Moments:
    """:class:`~sdpa_helpers.theory.Moments` of ``scale * (q . k)``, ``q = W_Q x``, ``k = W_K x'`` at initialisation.

    ``W_Q``, ``W_K`` independent: ``E[q . k] = 0``, ``Var(q . k) = d_k Var(q_i)^2`` (also for ``x' = x``, as long
    as ``|x|^2`` is fixed, which LayerNorm ensures). ``fan_out`` (>= ``d_k``): rows of the projection matrices,
    default ``d_k``; ``scale`` goes through :func:`sdpa_helpers.scales.scale_factor` (default ``"unscaled"``).

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
