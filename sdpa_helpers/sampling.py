"""Monte Carlo draws and summaries: vectorised, seeded (every ``rng`` goes through :func:`make_rng`;
nothing seeds globally), memory-bounded; the draws of ``q . k`` build on :func:`chi_norms`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._numerics import histogram_fractions
from .scales import scale_factor

__all__ = ["histogram_density", "DISTRIBUTIONS", "EXCESS_KURTOSIS", "CHUNK_ENTRIES", "RngLike", "check_dist",
           "make_rng",
           "sample_components", "sample_dot_products", "sample_matmul_variances",
           "MCEstimate", "mc_estimate", "sample_summary", "check_d_ks", "check_d_k", "chi_norms", "curve_draws",
           "query_logits", "prefix_logits"]

#: What every ``rng`` parameter accepts: None (fresh entropy), an int seed >= 0, or a Generator.
RngLike: TypeAlias = int | np.random.Generator | None

#: Component distributions, each standardised to mean 0 and variance 1 before shifting.
DISTRIBUTIONS = ("normal", "uniform", "rademacher", "laplace")

#: Excess kurtosis ``E[x^4] / Var(x)^2 - 3`` of each distribution (U(-a, a): 9/5 - 3; +-1: 1 - 3; Laplace: 6 - 3).
EXCESS_KURTOSIS: dict[str, float] = {"normal": 0.0, "uniform": -1.2, "rademacher": -2.0, "laplace": 3.0}

#: Largest number of float64 entries in one chunk of draws (8 MiB); read at call time.
CHUNK_ENTRIES = 2**20


def make_rng(seed: RngLike = None) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``None`` (fresh entropy), an int seed >= 0, or a Generator (as is).

    >>> g = make_rng(1)
    >>> make_rng(g) is g
    True
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return seed if seed is not None else np.random.default_rng()
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"rng must be None, a non-negative int or a numpy.random.Generator, got {seed!r}")
    if seed < 0:
        raise ValueError(f"rng must be a non-negative int seed, got {seed}")
    return np.random.default_rng(int(seed))


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}")
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"shape must hold integers, got {shape!r}")
        if n < 0:
            raise ValueError(f"shape must hold non-negative integers, got {shape!r}")
    return tuple(int(n) for n in shape)


def _standard(dist: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draw mean-0, variance-1 numbers from ``dist``."""
    if dist == "normal":
        return rng.standard_normal(shape)
    if dist == "uniform":  # U(-a, a) has variance a^2 / 3
        a = np.sqrt(3.0)
        return rng.uniform(-a, a, shape)
    if dist == "rademacher":  # +-1 with probability 1/2 each
        return rng.integers(0, 2, shape) * 2.0 - 1.0
    return rng.laplace(0.0, np.sqrt(0.5), shape)  # Laplace(0, b) has variance 2 b^2


def _affine(x: np.ndarray, std: float, mean: float) -> np.ndarray:
    """``x * std + mean`` in place (skipping a factor 1 and a shift 0)."""
    if std != 1.0:
        x *= std
    if mean != 0.0:
        x += mean
    return x


def _output(n: int, name: str) -> np.ndarray:
    """An empty float64 array of ``n`` entries, or a ValueError naming ``name`` if it cannot be allocated."""
    try:
        return np.empty(n)
    except MemoryError:
        raise ValueError(f"{name}={n} asks for an output of {8 * n / 2**30:.3g} GiB, more than this machine "
                         f"can allocate; draw fewer at a time") from None


def check_dist(name: str, value: object) -> str:
    """Return ``value`` if it names a distribution of :data:`DISTRIBUTIONS`, or raise naming ``name``.
    """
    return _checks.one_of(name, value, DISTRIBUTIONS)


def sample_components(shape: int | tuple[int, ...], dist: str = "normal", mean: float = 0.0,
                      var: float = 1.0, rng: RngLike = None) -> np.ndarray:
    """An array of ``shape`` of independent components from ``dist`` (:data:`DISTRIBUTIONS`), standardised
    to ``mean`` and ``var`` (>= 0).

    >>> x = sample_components((2, 3), dist="rademacher", rng=0)
    >>> x.shape, sorted(set(x.ravel().tolist()))
    ((2, 3), [-1.0, 1.0])
    """
    shape = _shape(shape)
    dist = check_dist("dist", dist)
    mean = _checks.real("mean", mean)
    var = _checks.non_negative("var", var)
    return _affine(_standard(dist, shape, make_rng(rng)), np.sqrt(var), mean)


def sample_dot_products(d_k: int, n_samples: int, dist: str = "normal",
                        mean_q: float = 0.0, var_q: float = 1.0,
                        mean_k: float = 0.0, var_k: float = 1.0,
                        scale: float | str | None = 1.0, rng: RngLike = None) -> np.ndarray:
    """``scale * (q . k)``, shape (n_samples,), for independent ``q``, ``k`` of length ``d_k``.

    Components as in :func:`sample_components` (``dist``, ``mean_q``, ``var_q``, ``mean_k``,
    ``var_k``); ``scale`` goes through :func:`~sdpa_helpers.scales.scale_factor` (default 1.0:
    unscaled). Drawn in chunks of at most :data:`CHUNK_ENTRIES` entries of q and of k (pieces of
    one row when d_k is longer), so peak memory is the output plus 24 MiB; the chunking depends
    on d_k only, so a seed gives the same numbers on every machine. A result beyond a float raises.

    >>> s = sample_dot_products(64, 20_000, rng=0)
    >>> s.shape, round(float(s.var()) / 64, 1)  # variance d_k = 64
    ((20000,), 1.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    n_samples = _checks.positive_int("n_samples", n_samples)
    dist = check_dist("dist", dist)
    mean_q = _checks.real("mean_q", mean_q)
    mean_k = _checks.real("mean_k", mean_k)
    std_q = np.sqrt(_checks.non_negative("var_q", var_q))
    std_k = np.sqrt(_checks.non_negative("var_k", var_k))
    scale = scale_factor(scale, d_k)
    rng = make_rng(rng)

    def draw(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        q = _affine(_standard(dist, shape, rng), std_q, mean_q)
        return q, _affine(_standard(dist, shape, rng), std_k, mean_k)

    out = _output(n_samples, "n_samples")
    chunk = CHUNK_ENTRIES
    if d_k <= chunk:  # whole rows: (rows, d_k) per chunk
        rows = chunk // d_k
        for start in range(0, n_samples, rows):
            n = min(rows, n_samples - start)
            q, k = draw((n, d_k))  # (n, d_k) each
            np.einsum("ij,ij->i", q, k, out=out[start:start + n])  # row-wise dot: (n, d_k) -> (n,)
            del q, k
    else:  # one row at a time, in pieces of `chunk` components
        for i in range(n_samples):
            total = 0.0
            for start in range(0, d_k, chunk):
                q, k = draw((min(chunk, d_k - start),))
                total += float(q @ k)
                del q, k
            out[i] = total
    with np.errstate(over="ignore"):
        if scale != 1.0:
            out *= scale
    if not np.isfinite(out).all():
        raise ValueError(f"the dot products overflow a float (beyond 1.8e308) at d_k={d_k} with mean_q={mean_q:g}, "
                         f"var_q={std_q**2:g}, mean_k={mean_k:g}, var_k={std_k**2:g} and scale={scale:g}: "
                         "make scale or the means and variances smaller")
    return out


def sample_matmul_variances(n: int, n_reps: int, d: int | None = None, p: int | None = None,
                            ddof: int = 1, rng: RngLike = None) -> np.ndarray:
    """The sample variance (``ddof``, ``0 <= ddof < n p``) of the entries of ``A @ B``, shape (n_reps,).

    ``A`` (n, d) and ``B`` (d, p) are fresh standard normal draws per repetition (``d``, ``p``
    default to ``n``; ``n p >= 2``); chunks of about ``2 * CHUNK_ENTRIES`` numbers, fixed by the shapes.

    >>> round(float(sample_matmul_variances(2, 100_000, rng=0).mean()), 1)  # E[s2] = d = 2
    2.0
    """
    n = _checks.positive_int("n", n)
    d = n if d is None else _checks.positive_int("d", d)
    p = n if p is None else _checks.positive_int("p", p)
    n_reps = _checks.positive_int("n_reps", n_reps)
    if n * p < 2:
        raise ValueError(f"A @ B must have at least 2 entries for a sample variance (n * p >= 2), "
                         f"got n={n}, p={p}")
    ddof = _checks.ddof("ddof", ddof, n * p)
    rng = make_rng(rng)
    out = _output(n_reps, "n_reps")
    rows = max(1, 2 * CHUNK_ENTRIES // (n * d + d * p + n * p))  # A, B and A @ B of `rows` repetitions
    for start in range(0, n_reps, rows):
        r = min(rows, n_reps - start)
        A = rng.standard_normal((r, n, d))
        B = rng.standard_normal((r, d, p))
        C = A @ B  # (r, n, d) @ (r, d, p) -> (r, n, p)
        out[start:start + r] = C.reshape(r, -1).var(axis=1, ddof=ddof)
    return out


# -- Exact draws through the chi-square shortcut, and Monte Carlo summaries (notebooks 00, 04-06) --

class MCEstimate(NamedTuple):
    """Monte Carlo summary: ``mean``, its standard error ``se``, ``median`` (floats, or arrays per d_k)."""

    mean: np.ndarray
    se: np.ndarray
    median: np.ndarray


def mc_estimate(samples, axis: int = 0) -> MCEstimate:
    """Mean, standard error ``std / sqrt(n)`` and median of ``samples`` (n >= 2 draws along ``axis``).

    >>> est = mc_estimate([1.0, 2.0, 3.0, 4.0])
    >>> float(est.mean), round(float(est.se), 4), float(est.median)
    (2.5, 0.6455, 2.5)
    """
    x = _checks.real_array("samples", samples, min_ndim=1, shape_hint="(n, ...)")
    axis = _checks.axis_index("axis", axis, x.ndim)
    n = x.shape[axis]
    if n < 2:
        raise ValueError(f"samples needs at least 2 draws along axis {axis} for a standard error, got {n}")
    with np.errstate(under="ignore"):  # squares of tiny deviations may underflow to 0: right
        return MCEstimate(x.mean(axis=axis), x.std(axis=axis, ddof=1) / np.sqrt(n), np.median(x, axis=axis))


def check_d_ks(d_ks) -> np.ndarray:
    """``d_ks`` as a 1-D integer array of positive entries, or a TypeError/ValueError naming ``d_ks``.
    """
    try:
        arr = np.asarray(d_ks)
    except Exception:
        raise TypeError(f"d_ks must be a sequence of positive integers, got {d_ks!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of positive integers, got shape {arr.shape}")
    return np.array([_checks.d_k("each entry of d_ks", d) for d in arr.tolist()])


#: ``check_d_k(name, d_k)``: d_k as an int in 1 ... 2**20, or an error naming ``name``.
check_d_k = _checks.d_k


def chi_norms(dof, size=None, rng=None) -> np.ndarray:
    """``||q||`` for ``q`` of ``dof`` independent N(0, 1) components: ``sqrt`` of a chi-square draw.

    The course's one shortcut for ``q . k``: ``q . k_j = ||q|| a_j`` with ``a_j`` independent
    N(0, 1) and ``||q||^2 ~ chi^2(dof)`` -- exactly the distribution of the full vectors, at two
    random numbers whatever d_k.

    ``dof`` a positive whole number of components (1 ... 2**20; an int or an integer-valued float, or an
    array of them), ``size`` None (the shape of ``dof``), a positive int or a tuple of them.

    >>> chi_norms(True)
    Traceback (most recent call last):
    ...
    TypeError: dof must be a positive whole number of components (d_k), got True
    """
    return np.sqrt(make_rng(rng).chisquare(_check_dof(dof), _check_size(size)))


def _check_dof(dof):
    """``dof`` as a float or float array of whole numbers in 1 ... 2**20, or raise naming ``dof``."""
    if isinstance(dof, (bool, np.bool_)) or (isinstance(dof, np.ndarray) and dof.dtype == bool):
        raise TypeError(f"dof must be a positive whole number of components (d_k), got {dof!r}")
    if isinstance(dof, np.ndarray) or isinstance(dof, (list, tuple)):
        arr = _checks.real_array("dof", dof)
        if arr.dtype == bool:
            raise TypeError(f"dof must be positive whole numbers of components (d_k), got {dof!r}")
    elif isinstance(dof, numbers.Real):
        arr = np.asarray(_checks.real("dof", dof))
    else:
        raise TypeError(f"dof must be a positive whole number of components (d_k), got {dof!r}")
    if arr.size and (np.any(arr < 1) or np.any(arr != np.floor(arr)) or np.any(arr > _checks.MAX_D_K)):
        bad = float(arr[(arr < 1) | (arr != np.floor(arr)) | (arr > _checks.MAX_D_K)].flat[0])
        raise ValueError(f"dof must be a whole number of components from 1 to 2**20 (d_k), got {bad:g}")
    return arr.astype(float) if arr.ndim else float(arr)


def _check_size(size):
    if size is None:
        return None
    if isinstance(size, tuple):
        return tuple(_checks.positive_int("each entry of size", n) for n in size)
    return _checks.positive_int("size", size)


def curve_draws(d_ks, n_keys, n_queries, rng):
    """``(d_ks, n_queries, rng, a)``: checked arguments, key directions ``a`` (n_queries, n_keys) shared by all d_k.
    """
    d_ks = check_d_ks(d_ks)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # key components along q, shared by every d_k
    return d_ks, n_queries, rng, a


def query_logits(d_k: int, n_keys: int, n_queries: int, scale: float | str | None = None, rng=None) -> np.ndarray:
    """Logits ``scale * (q . k_j)``, shape (n_queries, n_keys): each random query against its own keys.

    Components independent N(0, 1), drawn exactly through :func:`chi_norms` (cost independent of
    d_k); ``scale`` as in :func:`~sdpa_helpers.scales.scale_factor` (None: 1/sqrt(d_k)).

    >>> z = query_logits(64, 8, 50_000, scale="unscaled", rng=0)
    >>> z.shape, round(float(z.var() / 64), 1)
    ((50000, 8), 1.0)
    """
    d_k = check_d_k("d_k", d_k)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    c = scale_factor(scale, d_k)
    rng = make_rng(rng)
    a = rng.standard_normal((n_queries, n_keys))  # components of the keys along q/||q||
    norm_q = chi_norms(float(d_k), n_queries, rng)  # (n_queries,)
    return (c * norm_q)[:, None] * a


def prefix_logits(d_ks, n_keys: int, rng=None) -> np.ndarray:
    """Unscaled logits ``q[:d] . k_j[:d]``, shape (len(d_ks), n_keys), of one query and its keys cut to each d.

    ``d_ks`` strictly increasing. Exact without the vectors: each block of new components adds
    ``||q_block|| b_j`` (:func:`chi_norms`, ``b_j ~ N(0, 1)``) to logit j. The first m keys do not
    depend on ``n_keys``.

    >>> bool(np.array_equal(prefix_logits([1, 64], 8, rng=0)[:, :3], prefix_logits([1, 64], 3, rng=0)))
    True
    """
    d_ks = check_d_ks(d_ks)
    if np.any(np.diff(d_ks) <= 0):
        raise ValueError(f"d_ks must be strictly increasing, got {d_ks.tolist()}")
    n_keys = _checks.positive_int("n_keys", n_keys)
    rng = make_rng(rng)
    blocks = np.diff(np.concatenate([[0], d_ks.astype(float)]))  # new components per step
    norms = chi_norms(blocks, None, rng)  # (len(d_ks),): ||q_block||
    b = rng.standard_normal((n_keys, d_ks.size)).T  # (len(d_ks), n_keys); key j's draws come j-th
    return np.cumsum(norms[:, None] * b, axis=0)


def sample_summary(samples: ArrayLike) -> dict[str, float]:
    """Of ``samples`` (n >= 2): ``mean``, ``se_mean = sqrt(var / n)``, ``var`` (ddof=1), ``se_var =
    sqrt((m_4 - var^2) / n)`` and the excess kurtosis ``kurt = m_4 / var^2 - 3``, as a dict of floats.

    >>> st = sample_summary([-1.0, 1.0, -1.0, 1.0])
    >>> st["mean"], round(st["var"], 4), st["se_var"], round(st["kurt"], 4)
    (0.0, 1.3333, 0.0, -2.4375)
    """
    s = _checks.real_array("samples", samples, min_ndim=1).ravel()
    n = s.size
    if n < 2:
        raise ValueError(f"samples must hold at least 2 numbers, got {n}")
    scale = float(np.max(np.abs(s))) or 1.0  # powers of huge or tiny values would over/underflow
    c = s / scale
    mean = float(c.mean())
    c = c - mean
    var = float(c @ c) / (n - 1)
    m4 = float(np.mean(c**4))
    if var == 0.0:
        raise ValueError("samples are all equal: their spread has no standard error, their kurtosis no value")
    out = {
        "mean": mean * scale, "se_mean": math.sqrt(var / n) * scale,
        "var": var * scale * scale, "se_var": math.sqrt(max(m4 - var**2, 0.0) / n) * scale * scale,
        "kurt": m4 / var**2 - 3.0,
    }
    if not all(math.isfinite(v) for v in out.values()):
        raise ValueError("samples are too large: their variance exceeds the float range")
    return out


def histogram_density(samples: ArrayLike, edges: ArrayLike) -> np.ndarray:
    """Counts of ``samples`` in the bins ``edges`` over ``len(samples) * bin width`` (samples outside count
    in the total): :func:`sdpa_helpers._numerics.histogram_fractions`.
    """
    return histogram_fractions(samples, edges, density=True, values_name="samples")
