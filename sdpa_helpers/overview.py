"""Notebook 00's argument in numbers, at initialisation (independent N(0, 1) components, the
paper's footnote 4): the walk of q·k, what each scaling does to the logits, the softmax weights and
its Jacobian (:class:`Effects`), and unscaled against scaled at real head sizes (:class:`Comparison`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, sampling, theory
from .attention import softmax
from .gradients import jacobian_frobenius
from .sampling import MCEstimate, make_rng, mc_estimate, query_logits, sample_components
from .saturation import weight_stats
from .scales import D_K_CHOICES, N_KEYS, SCALINGS, SHOWN_D_KS, scale_factor

__all__ = ["D_KS", "SHOWN_D_KS", "N_KEYS", "MANY_KEYS", "CACHED_LOGITS", "HEAD_D_KS", "N_QUERIES", "COMPARED",
           "COMMITTED",
           "dot_product_walks", "VarianceEstimate", "walk_end_variance", "Effects", "effects", "effects_by_d_k",
           "jacobian_norm_bands", "chain_holds", "Comparison", "ComparisonSummary", "compare", "comparison_table",
           "spread_edges", "SCALED_EDGES", "query_gradient_norm", "query_gradient_ratio",
           "query_gradient_ratios", "format_gradient_ratios", "ScaledDrifts", "scaled_drifts"]

#: The course's d_k grid (:data:`sdpa_helpers.scales.D_K_CHOICES`).
D_KS = D_K_CHOICES
#: Keys per query of a long sequence (GPT-2's context length), for :func:`compare`.
MANY_KEYS = 1024
#: The head dimensions most real models use (notebook 00, section 4).
HEAD_D_KS = (64, 128)
#: A query whose largest weight is above this has committed to one key (:attr:`Comparison.committed`).
COMMITTED = 0.9
#: Independent queries per d_k: standard errors of about 0.005 on the mean largest weight.
N_QUERIES = 2000
#: The two scalings notebook 00 compares (names of :data:`sdpa_helpers.scales.SCALINGS`).
COMPARED = ("unscaled", "sqrt")
#: Bins of the scaled logits q·k/sqrt(d_k): 32 bins over [-4, 4].
SCALED_EDGES = np.linspace(-4.0, 4.0, 33)
SCALED_EDGES.setflags(write=False)


def spread_edges(d_max: int, n_bins: int = 128) -> np.ndarray:
    """Bins of the unscaled logits for every ``d_k <= d_max`` (one x axis): ``n_bins`` over ``±4 sqrt(d_max)``.
    """
    d_max = _checks.positive_int("d_max", d_max)
    n_bins = _checks.positive_int("n_bins", n_bins)
    half = 4.0 * float(np.sqrt(d_max))
    return np.linspace(-half, half, n_bins + 1)


def dot_product_walks(d_k: int, n_walks: int, dist: str = "normal", rng=None) -> np.ndarray:
    """Running sums ``S_i = q_1 k_1 + ... + q_i k_i``, shape (n_walks, d_k), of ``n_walks`` independent
    pairs ``q``, ``k`` with components of ``dist`` (mean 0, variance 1): a random walk, ``E[S_i^2] = i``.

    >>> S = dot_product_walks(256, 20_000, rng=0)
    >>> S.shape, round(float(np.mean(S[:, -1] ** 2) / 256), 1)
    ((20000, 256), 1.0)
    """
    d_k = _checks.d_k("d_k", d_k)
    n_walks = _checks.positive_int("n_walks", n_walks)
    rng = make_rng(rng)
    q = sample_components((n_walks, d_k), dist=dist, rng=rng)  # (n_walks, d_k)
    k = sample_components((n_walks, d_k), dist=dist, rng=rng)  # (n_walks, d_k)
    return np.cumsum(q * k, axis=1)  # (n_walks, d_k): running sums along each walk


class Effects(NamedTuple):
    """What one scaling does at one ``d_k``, per query (rows): ``logits`` (n_queries, n_keys), equal to
    ``factor * q . k_j``; ``sorted_weights`` (n_queries, n_keys), the softmax in decreasing order;
    ``max_weight`` and ``entropy`` (nats) as :class:`MCEstimate` over queries; ``jacobian_norm``
    (n_queries,), ``||diag(p) - p p^T||_F``. ``scale`` is a name of :data:`~sdpa_helpers.scales.SCALINGS`."""

    d_k: int
    scale: str
    factor: float
    logits: np.ndarray
    sorted_weights: np.ndarray
    max_weight: MCEstimate
    entropy: MCEstimate
    jacobian_norm: np.ndarray


def _scale_label(scale, d_k: int, factor: float) -> str:
    if scale is None or isinstance(scale, str):
        return "sqrt" if scale is None else scale
    named = [name for name in SCALINGS if scale_factor(name, d_k) == factor]
    return named[0] if named else f"{factor:g}"


def effects(d_k: int, scale: str | float | None, n_keys: int = N_KEYS, n_queries: int = N_QUERIES, rng=None) -> Effects:
    """:class:`Effects` of ``n_queries`` (>= 2) random queries at ``d_k``, each against its own ``n_keys``
    (>= 2) keys; ``scale`` as in :func:`~sdpa_helpers.scales.scale_factor`. The same integer ``rng``
    gives every scaling the same draws.

    >>> u, s = (effects(1024, name, rng=0) for name in ("unscaled", "sqrt"))
    >>> [round(float(x.max_weight.mean), 2) for x in (u, s)], bool(np.allclose(u.logits / 32, s.logits))
    ([0.96, 0.25], True)
    """
    d_k = _checks.d_k("d_k", d_k)
    factor = scale_factor(scale, d_k)
    scale = _scale_label(scale, d_k, factor)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if n_keys < 2:
        raise ValueError(f"n_keys must be >= 2 (a softmax over one key is always 1), got {n_keys}")
    if n_queries < 2:
        raise ValueError(f"n_queries must be >= 2 for a standard error, got {n_queries}")
    logits = query_logits(d_k, n_keys, n_queries, scale=factor, rng=rng)  # (n_queries, n_keys)
    # Row by row quantities, computed in blocks of rows: the temporaries stay a few CHUNK_ENTRIES floats
    # however many queries (the results are those of one whole-array pass: every step works per row).
    sorted_weights = np.empty_like(logits)
    max_weight, entropy, jacobian_norm = np.empty(n_queries), np.empty(n_queries), np.empty(n_queries)
    rows = max(1, sampling.CHUNK_ENTRIES // n_keys)
    for first in range(0, n_queries, rows):
        block = slice(first, first + rows)
        weights = softmax(logits[block])  # (rows, n_keys), rows sum to 1
        stats = weight_stats(logits[block])
        sorted_weights[block] = -np.sort(-weights, axis=1)
        max_weight[block], entropy[block] = stats.max_weight, stats.entropy
        jacobian_norm[block] = jacobian_frobenius(weights)
    return Effects(d_k, scale, factor, logits, sorted_weights, mc_estimate(max_weight), mc_estimate(entropy),
                   jacobian_norm)


#: :func:`effects_by_d_k` caches a call of at most this many logits in all (``len(d_ks) * n_keys *
#: n_queries``; the course's grid at the defaults is 416,000); a larger call is computed afresh each
#: time. So the cache (4 calls) holds at most 4 x 2 x 2**19 floats (32 MiB) however it is called.
CACHED_LOGITS = 2**19


def _rows(d_ks: tuple, scale: str | float | None, n_keys: int, n_queries: int, seed: int) -> tuple:
    rows = tuple(effects(d, scale, n_keys, n_queries, rng=seed) for d in d_ks)
    for row in rows:  # possibly shared through the cache: make them read-only
        for arr in (row.logits, row.sorted_weights, row.jacobian_norm):
            arr.setflags(write=False)
    return rows


_effects_by_d_k = lru_cache(maxsize=4)(_rows)


def _d_ks_tuple(d_ks) -> tuple[int, ...]:
    if isinstance(d_ks, (str, bytes)) or not hasattr(d_ks, "__iter__"):
        raise TypeError(f"d_ks must be a sequence of positive integers, got {d_ks!r}")
    d_ks = tuple(_checks.positive_int("each entry of d_ks", d) for d in d_ks)
    if not d_ks:
        raise ValueError("d_ks must hold at least one d_k")
    return d_ks


def effects_by_d_k(d_ks: Iterable[int] = D_KS, scale: str | float | None = "unscaled", n_keys: int = N_KEYS,
                   n_queries: int = N_QUERIES, seed: int = 0) -> tuple[Effects, ...]:
    """:func:`effects` at every ``d_k`` of ``d_ks`` (a tuple, in order), each from the same integer
    ``seed`` (common random numbers: smooth curves, scalings compared on the same draws). Read-only, and
    cached (the last 4 calls of at most :data:`CACHED_LOGITS` logits: a larger call is not kept).

    >>> [round(float(r.max_weight.mean), 2) for r in effects_by_d_k((1, 4096), "unscaled", n_queries=500)]
    [0.21, 0.98]
    """
    d_ks = _d_ks_tuple(d_ks)
    seed = _checks.seed("seed", seed)
    scale_factor(scale, d_ks[0])  # a clear error for a bad scale, before the cache sees it
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    if len(d_ks) * n_keys * n_queries > CACHED_LOGITS:  # too large to keep: computed, not cached
        return _rows(d_ks, scale, n_keys, n_queries, int(seed))
    return _effects_by_d_k(d_ks, scale, n_keys, n_queries, int(seed))


def jacobian_norm_bands(rows: Iterable[Effects], quantiles: ArrayLike = (0.1, 0.5, 0.9)) -> np.ndarray:
    """Quantiles (default 10 %, median, 90 %) over queries of the Jacobian norm: shape
    (len(quantiles), len(rows)), one column per :class:`Effects`.

    >>> jacobian_norm_bands(effects_by_d_k((1, 1024), "unscaled", n_queries=500)).shape
    (3, 2)
    """
    rows = tuple(rows)
    if not rows or not all(isinstance(r, Effects) for r in rows):
        raise TypeError("rows must be a non-empty sequence of Effects (from effects or effects_by_d_k)")
    q = _checks.real_array("quantiles", quantiles, min_ndim=1, shape_hint="(n,)")
    if ((q < 0) | (q > 1)).any():
        raise ValueError(f"quantiles must lie in [0, 1], got {q.tolist()}")
    return np.stack([np.quantile(r.jacobian_norm, q) for r in rows], axis=1)


class VarianceEstimate(NamedTuple):
    """A sample variance ``var``, its standard error ``se``, and the ``theory`` it estimates."""

    var: float
    se: float
    theory: float


def walk_end_variance(walks: ArrayLike) -> VarianceEstimate:
    """The sample variance of the walks' ends (``q . k``), its standard error (normal components), the theory ``d_k``.

    >>> est = walk_end_variance(dot_product_walks(256, 4000, rng=0))
    >>> bool(abs(est.var - est.theory) < 4 * est.se), est.theory
    (True, 256.0)
    """
    walks = _checks.real_array("walks", walks, min_ndim=2, shape_hint="(n_walks, d_k)")
    n_walks, d_k = walks.shape[-2:]
    if n_walks < 2:
        raise ValueError(f"walks must hold at least 2 walks for a variance, got {n_walks}")
    se = theory.sample_variance_moments(n_walks, d_k, theory.dot_product_excess_kurtosis(d_k)).std
    return VarianceEstimate(float(walks[..., -1].var(ddof=1)), float(se), float(d_k))


class Comparison(NamedTuple):
    """Unscaled against scaled :class:`Effects` at one ``d_k`` and one number of keys, on the same draws."""

    d_k: int
    n_keys: int
    unscaled: Effects
    scaled: Effects

    @property
    def ratio(self) -> float:
        """Median ``||J||_F`` unscaled divided by median ``||J||_F`` scaled (< 1: unscaled is smaller)."""
        return float(np.median(self.unscaled.jacobian_norm) / np.median(self.scaled.jacobian_norm))

    @property
    def committed(self) -> float:
        """The share of queries whose unscaled largest weight is above :data:`COMMITTED` (0.9)."""
        return float(np.mean(self.unscaled.sorted_weights[:, 0] > COMMITTED))

    def summary(self) -> ComparisonSummary:
        """:class:`ComparisonSummary`: per query only the largest weight and ``||J||_F`` (copies: the full
        arrays can be freed). Its ``ratio``, ``committed`` and :func:`comparison_table` row are this one's."""
        u, s = self.unscaled, self.scaled
        return ComparisonSummary(self.d_k, self.n_keys, u.sorted_weights[:, 0].copy(), s.sorted_weights[:, 0].copy(),
                                 u.jacobian_norm.copy(), s.jacobian_norm.copy())


class ComparisonSummary(NamedTuple):
    """What :func:`comparison_table` shows of a :class:`Comparison` (from :meth:`Comparison.summary`): per
    query (arrays of shape (n_queries,)) the largest weight and ``||J||_F``, unscaled and scaled. Four numbers
    a query instead of four rows of ``n_keys``: with 1024 keys and 2000 queries, 64 kB instead of 66 MB."""

    d_k: int
    n_keys: int
    largest_unscaled: np.ndarray
    largest_scaled: np.ndarray
    jacobian_unscaled: np.ndarray
    jacobian_scaled: np.ndarray

    @property
    def ratio(self) -> float:
        """Median ``||J||_F`` unscaled divided by median ``||J||_F`` scaled, as :attr:`Comparison.ratio`."""
        return float(np.median(self.jacobian_unscaled) / np.median(self.jacobian_scaled))

    @property
    def committed(self) -> float:
        """The share of queries whose unscaled largest weight is above :data:`COMMITTED`, as
        :attr:`Comparison.committed`."""
        return float(np.mean(self.largest_unscaled > COMMITTED))


def compare(d_k: int, n_keys: int = N_KEYS, n_queries: int = N_QUERIES, rng=0) -> Comparison:
    """:func:`effects` unscaled and scaled at ``d_k``, both drawn from the integer seed ``rng`` (or None).

    >>> c = compare(64, n_queries=500)
    >>> c.d_k, c.n_keys, bool(np.allclose(c.unscaled.logits / 8, c.scaled.logits))
    (64, 16, True)
    """
    if isinstance(rng, np.random.Generator):
        raise TypeError("rng must be an integer seed (or None) so both scalings see the same draws, "
                        "not a Generator")
    seed = rng if rng is not None else int(make_rng(None).integers(2**32))
    u, s = (effects(d_k, name, n_keys=n_keys, n_queries=n_queries, rng=seed) for name in COMPARED)
    return Comparison(u.d_k, n_keys, u, s)


def _median_range(x: np.ndarray) -> str:
    lo, med, hi = np.quantile(x, (0.1, 0.5, 0.9))
    return f"{med:#.2g} ({lo:#.2g}–{hi:#.2g})"


def comparison_table(comparisons: Iterable[Comparison | ComparisonSummary]) -> str:
    """A text table of :class:`Comparison` rows: the largest weight unscaled and scaled (median, 10-90 %
    range), the share of unscaled queries above 0.9, and :attr:`Comparison.ratio` (below 1 also as ``1/x``).

    >>> print(comparison_table([compare(64, n_queries=500)]).splitlines()[2])
     d_k  unscaled              scaled                above 0.9          unscaled ÷ scaled
    """
    rows = tuple(comparisons)
    if not rows or not all(isinstance(c, (Comparison, ComparisonSummary)) for c in rows):
        raise TypeError("comparisons must be a non-empty sequence of Comparison (from compare) or of "
                        "ComparisonSummary (from Comparison.summary)")
    summaries = [c.summary() if isinstance(c, Comparison) else c for c in rows]
    n_queries = "/".join(f"{n:,}" for n in sorted({len(c.jacobian_unscaled) for c in summaries}))
    n_keys = {c.n_keys for c in summaries}
    keys = "" if len(n_keys) == 1 else "keys  "
    title = f"{n_keys.pop()} keys, " if len(n_keys) == 1 else ""
    lines = [f"{title}one seed of {n_queries} random queries",
             f"      {'':{len(keys)}}{'largest weight, median (10–90 % range)':42}  {'unscaled: queries':17}  "
             f"median size of J:",
             f" d_k  {keys}{'unscaled':20}  {'scaled':20}  {f'above {COMMITTED:g}':17}  unscaled ÷ scaled"]
    for c in summaries:
        n = f"{c.n_keys:4d}  " if keys else ""
        lines.append(f"{c.d_k:4d}  {n}{_median_range(c.largest_unscaled):20}  "
                     f"{_median_range(c.largest_scaled):20}  {f'{100 * c.committed:.0f} %':>9}{'':8}  "
                     f"{_ratio_text(c.ratio)}")
    return "\n".join(lines)


def _ratio_text(ratio: float) -> str:
    """Two significant figures and, below 1, also as ``1/x`` (``0.37 = 1/2.7``)."""
    text = f"{ratio:#.2g}".rstrip(".")
    return text if ratio >= 1 else f"{text} = 1/{f'{1 / ratio:#.2g}'.rstrip('.')}"


def chain_holds(rows: Iterable[tuple[Effects, Effects]], tolerance: float = 0.1) -> bool:
    """True when, from each ``(unscaled, scaled)`` row to the next (``d_k`` growing), the unscaled
    mean largest weight rises by more than 4 standard errors and the unscaled median Jacobian norm
    falls, while the scaled mean largest weight and median Jacobian norm each stay within
    ``tolerance`` (relative: largest / smallest - 1) over all rows.

    >>> chain_holds([tuple(effects(d, s, rng=0) for s in COMPARED) for d in SHOWN_D_KS])
    True
    """
    rows = tuple(rows)
    if len(rows) < 2 or not all(len(r) == 2 and all(isinstance(fx, Effects) for fx in r) for r in rows):
        raise TypeError("rows must be a sequence of at least two (unscaled, scaled) pairs of Effects")
    unscaled_ok = all(
        float(b.max_weight.mean - a.max_weight.mean) > 4 * float(np.hypot(a.max_weight.se, b.max_weight.se))
        and np.median(b.jacobian_norm) < np.median(a.jacobian_norm)
        for (a, _), (b, _) in zip(rows, rows[1:]))
    scaled = [(float(s.max_weight.mean), float(np.median(s.jacobian_norm))) for _, s in rows]
    scaled_ok = all(max(v) <= (1 + tolerance) * min(v) for v in zip(*scaled))
    return bool(unscaled_ok and scaled_ok)


def query_gradient_norm(q: ArrayLike, keys: ArrayLike, factor: float) -> np.ndarray:
    """``||dp/dq||_F`` for ``p = softmax(factor * keys @ q)``: how strongly the weights respond to ``q``.

    ``dp/dq = factor * J K``, whose row ``i`` is ``p_i (k_i - kbar)`` (``kbar``: the weighted mean
    key). ``q`` (..., d_k), ``keys`` (..., n_keys, d_k), ``factor`` > 0; returns shape (...).
    """
    q = _checks.real_array("q", q, min_ndim=1, shape_hint="(..., d_k)")
    keys = _checks.real_array("keys", keys, min_ndim=2, shape_hint="(..., n_keys, d_k)")
    if keys.shape[-1] != q.shape[-1]:
        raise ValueError(f"keys must have rows of length d_k = {q.shape[-1]} (that of q), got {keys.shape[-1]}")
    if isinstance(factor, bool) or not np.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor must be a positive finite number, got {factor!r}")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below
        logits = factor * (keys @ q[..., None])[..., 0]  # (..., n_keys, d_k) @ (..., d_k, 1) -> (..., n_keys)
    if not np.isfinite(logits).all():
        raise ValueError("factor, q and keys give logits that overflow a float: use smaller values")
    p = softmax(logits)  # (..., n_keys)
    kbar = np.einsum("...m,...md->...d", p, keys)  # (..., d_k): weighted mean key
    dist2 = ((keys - kbar[..., None, :]) ** 2).sum(axis=-1)  # (..., n_keys)
    return factor * np.sqrt((p**2 * dist2).sum(axis=-1))


def query_gradient_ratio(d_k: int, n_keys: int = N_KEYS, n_queries: int = N_QUERIES, rng=0) -> float:
    """Median ``||dp/dq||_F`` unscaled over the scaled median, on the same random ``q`` and keys (drawn
    in chunks). Above 1: unscaled, the weights respond more to ``q`` although ``||J||`` is smaller.
    """
    d_k = _checks.d_k("d_k", d_k)
    n_keys = _checks.positive_int("n_keys", n_keys)
    n_queries = _checks.positive_int("n_queries", n_queries)
    rng = make_rng(rng)
    chunk = max(1, 2**21 // (n_keys * d_k))
    norms: dict[str, list] = {name: [] for name in COMPARED}
    for start in range(0, n_queries, chunk):
        n = min(chunk, n_queries - start)
        q = rng.standard_normal((n, d_k))
        keys = rng.standard_normal((n, n_keys, d_k))
        for name in COMPARED:
            norms[name].append(query_gradient_norm(q, keys, scale_factor(name, d_k)))
    u, s = (np.median(np.concatenate(norms[name])) for name in COMPARED)
    return float(u / s)


def query_gradient_ratios(d_ks: Iterable[int], n_keys: int = N_KEYS, n_queries: int = N_QUERIES,
                          seeds: Iterable[int] = (0, 1, 2)) -> np.ndarray:
    """:func:`query_gradient_ratio` for every seed (rows) and every ``d_k`` of ``d_ks`` (columns).

    >>> query_gradient_ratios((1, 4), n_queries=100, seeds=(0, 1)).shape
    (2, 2)
    """
    d_ks = tuple(_checks.positive_int("each entry of d_ks", d) for d in d_ks)
    seeds = tuple(seeds)
    if not d_ks or not seeds:
        raise ValueError("d_ks and seeds must each hold at least one entry")
    return np.array([[query_gradient_ratio(d, n_keys, n_queries, rng=s) for d in d_ks] for s in seeds])


def format_gradient_ratios(n_keys: int, d_ks: Iterable[int], ratios: ArrayLike) -> str:
    """One line: per ``d_k``, the median over seeds (rows of ``ratios``) and its range.

    >>> format_gradient_ratios(16, (64, 128), [[2.0, 45.0], [3.0, 52.0], [2.5, 48.0]]).split(": ", 1)[1]
    'd_k = 64: 2.5 (2.0–3.0), d_k = 128: 48 (45–52)'
    """
    d_ks = tuple(d_ks)
    r = _checks.real_array("ratios", ratios, min_ndim=2, shape_hint="(n_seeds, len(d_ks))")
    if r.shape[1] != len(d_ks):
        raise ValueError(f"ratios must have one column per d_k ({len(d_ks)}), got shape {r.shape}")
    def g(x: float) -> str:  # two significant figures, no trailing point: 46, 2.5, 0.33
        return f"{x:#.2g}".rstrip(".")

    cells = ", ".join(f"d_k = {d}: {g(np.median(c))} ({g(c.min())}–{g(c.max())})" for d, c in zip(d_ks, r.T))
    return (f"{n_keys} keys, weights' response to q, unscaled ÷ scaled, median (range) over {len(r)} repeats "
            f"with fresh random draws: {cells}")


class ScaledDrifts(NamedTuple):
    """How far each scaled quantity moves over ``d_k``: ``largest / smallest - 1`` of its mean (spread:
    the std of all logits; jacobian: the median ``||J||_F``)."""

    spread: float
    largest_weight: float
    jacobian: float
    smallest_weight: float


def scaled_drifts(d_ks: Iterable[int] = D_KS[2:], n_keys: int = N_KEYS, seed: int = 0) -> ScaledDrifts:
    """:class:`ScaledDrifts` of the scaled rows of :func:`effects_by_d_k` over ``d_ks`` (default 4 ... 4096).

    >>> d = scaled_drifts()
    >>> max(d.spread, d.largest_weight, d.jacobian) < 0.06 < 0.3 < d.smallest_weight
    True
    """
    d_ks = _d_ks_tuple(d_ks)
    # not through effects_by_d_k's cache: callers loop over seeds (00 and 09: twenty), and the rows kept
    # there (four calls, 22 MB at the defaults) would stay in the kernel for nothing; the same numbers
    rows = _rows(d_ks, "sqrt", _checks.positive_int("n_keys", n_keys), N_QUERIES, int(_checks.seed("seed", seed)))

    def drift(values) -> float:
        v = np.asarray(values, dtype=float)
        return float(v.max() / v.min() - 1)

    return ScaledDrifts(drift([r.logits.std() for r in rows]), drift([r.max_weight.mean for r in rows]),
                        drift([np.median(r.jacobian_norm) for r in rows]),
                        drift([r.sorted_weights[:, -1].mean() for r in rows]))
