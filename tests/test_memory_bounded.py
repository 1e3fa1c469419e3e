"""The course fits Binder's memory (issue 37, item 5): the big computations work in blocks of rows and the
caches are bounded, with results bit-identical to the whole-array computations they replace.

Each ``whole_*`` below is the code before issue 37, kept as the reference: the chunked function must give
the same bits (the stored notebooks print these numbers) and allocate a bounded amount (tracemalloc sees
numpy's buffers).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from sdpa_helpers import gradients, overview, sampling, saturation
from sdpa_helpers.assumptions import correlation
from sdpa_helpers.attention import softmax
from sdpa_helpers.gradients import jacobian_frobenius
from sdpa_helpers.scales import scale_factor


def whole_saturation_curves(d_ks, n_keys, n_queries, scale=None, rng=None):
    d_ks, n_queries, rng, a = sampling.curve_draws(d_ks, n_keys, n_queries, rng)
    stats = []
    for d_k in d_ks.tolist():
        c = scale_factor(scale, d_k)
        norm_q = sampling.chi_norms(float(d_k), n_queries, rng)
        stats.append(saturation._weight_stats((c * norm_q)[:, None] * a))
    return saturation.SaturationCurves(d_ks, *(sampling.mc_estimate(np.stack([getattr(s, f) for s in stats], axis=1))
                                               for f in saturation.WeightStats._fields))


def whole_effects(d_k, scale, n_keys, n_queries, rng):
    factor = scale_factor(scale, d_k)
    logits = sampling.query_logits(d_k, n_keys, n_queries, scale=factor, rng=rng)
    weights = softmax(logits)
    stats = saturation.weight_stats(logits)
    return (logits, -np.sort(-weights, axis=1), sampling.mc_estimate(stats.max_weight),
            sampling.mc_estimate(stats.entropy), jacobian_frobenius(weights))


def whole_match_weight(d_k, rho, scale="sqrt", n_keys=12, n_queries=2000, rng=None):
    factor = scale_factor(scale, d_k)
    g = sampling.make_rng(rng)
    q, k = correlation.sample_correlated_qk(n_queries, d_k, rho, rng=g)
    logits = np.empty((n_queries, n_keys))
    logits[:, 0] = np.einsum("nd,nd->n", q, k)
    logits[:, 1:] = np.linalg.norm(q, axis=1, keepdims=True) * g.standard_normal((n_queries, n_keys - 1))
    return softmax(factor * logits)[:, 0]


def same(a, b) -> bool:
    """Equal bits, field by field, through nested tuples."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def peak_bytes(f, *args, **kwargs) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = f(*args, **kwargs)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_chunks(monkeypatch):
    """Blocks of a few rows, so small cases exercise many blocks and a last partial one."""
    monkeypatch.setattr(sampling, "CHUNK_ENTRIES", 1000)


@pytest.mark.parametrize("args", [([1, 2, 64, 4096], 64, 101, "unscaled", 3), ([2, 3], 1024, 7, "sqrt", 8),
                                  ([1], 16, 2000, None, 0), ([5], 3000, 4, "unscaled", 1)])
def test_saturation_curves_in_blocks_gives_the_same_bits(small_chunks, args):
    *head, seed = args
    assert same(saturation.saturation_curves(*head, rng=seed)[1:], whole_saturation_curves(*head, rng=seed)[1:])


def test_saturation_curves_leaves_a_shared_generator_where_the_whole_draw_did(small_chunks):
    g1, g2 = sampling.make_rng(4), sampling.make_rng(4)
    saturation.saturation_curves([1, 8], 64, 100, "unscaled", rng=g1)
    whole_saturation_curves([1, 8], 64, 100, "unscaled", rng=g2)
    assert g1.random() == g2.random()


@pytest.mark.slow  # 20,000 x 1,024 draws: the slowest test of `make test-fast` (54 s at load 15); `make test` runs it
def test_notebook_05s_largest_call_is_bounded_and_unchanged():
    """05's ``saturation_curves([2, 3], 1024, 20_000, ...)`` built eight 20,000 x 1,024 temporaries (1.3 GB);
    in blocks it stays under 100 MB (the reference is run at 2,000 queries to keep the test light)."""
    small = ([2, 3], 1024, 2000, "unscaled")
    assert same(saturation.saturation_curves(*small, rng=8)[1:], whole_saturation_curves(*small, rng=8)[1:])
    _, peak = peak_bytes(saturation.saturation_curves, [2, 3], 1024, 20_000, "unscaled", rng=8)
    assert peak < 100e6, f"saturation_curves peaked at {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("args", [(64, "unscaled", 16, 303, 0), (1024, "sqrt", 1024, 9, 2), (4, 0.5, 2, 50, 1)])
def test_effects_in_blocks_gives_the_same_bits(small_chunks, args):
    e = overview.effects(*args[:4], rng=args[4])
    assert same((e.logits, e.sorted_weights, e.max_weight, e.entropy, e.jacobian_norm),
                whole_effects(*args[:4], rng=args[4]))


def test_effects_peak_is_the_output_plus_bounded_blocks():
    """200,000 queries x 16 keys: the outputs are 2 x 25.6 MB; the whole-array pass added about 15 such
    temporaries (notebook 00's cell of 200,000 queries peaked 409 MB above the kernel)."""
    _, peak = peak_bytes(overview.effects, 16, "sqrt", 16, 200_000, rng=0)
    assert peak < 2 * 25.6e6 + 80e6, f"effects peaked at {peak / 1e6:.0f} MB"


def test_effects_by_d_k_keeps_only_small_calls_in_its_cache():
    """The cache held notebook 00's 200,000-query rows (150 MB) for the kernel's life; a call above
    CACHED_LOGITS is computed afresh and not kept, the course's grid at the defaults still is."""
    overview._effects_by_d_k.cache_clear()
    big = overview.effects_by_d_k((4, 16), "sqrt", n_queries=20_000, seed=0)  # 640,000 logits
    assert 2 * 16 * 20_000 > overview.CACHED_LOGITS
    assert overview._effects_by_d_k.cache_info().currsize == 0
    again = overview.effects_by_d_k((4, 16), "sqrt", n_queries=20_000, seed=0)
    assert again is not big and same(tuple(r.logits for r in again), tuple(r.logits for r in big))
    assert not big[0].logits.flags.writeable  # read-only either way
    grid = overview.effects_by_d_k(overview.D_KS, "unscaled", seed=0)
    assert overview.effects_by_d_k(overview.D_KS, "unscaled", seed=0) is grid


@pytest.mark.parametrize("args", [(64, 0.5, "sqrt", 12, 101, 3), (4096, 0.9, "unscaled", 3, 5, 0),
                                  (1, 0.0, "sqrt", 2, 40, 1)])
def test_match_weight_in_blocks_gives_the_same_bits(small_chunks, args):
    d_k, rho, scale, n_keys, n_queries, seed = args
    assert same(correlation.match_weight(d_k, rho, scale, n_keys, n_queries, rng=seed),
                whole_match_weight(d_k, rho, scale, n_keys, n_queries, rng=seed))


def test_notebook_08s_match_weight_is_bounded():
    """08 calls it at d_k = 4096, 2,000 queries: q, z, k and two temporaries of 65 MB each before."""
    _, peak = peak_bytes(correlation.match_weight, 4096, 0.5, scale=8 / 4096, rng=0)
    assert peak < 60e6, f"match_weight peaked at {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("shape", [(5, 1000, 13), (2003, 8), (7, 3), (4, 0, 3)])
def test_weight_stats_and_jacobian_norm_in_blocks_give_the_same_bits(small_chunks, shape):
    """Both work row by row: in blocks of rows they give the bits of one whole-array pass (05's ``weight_stats``
    of 5 x 1000 x 1024 logits, 08's, and 06's ``jacobian_frobenius`` of 400,000 rows made 8-15 temporaries)."""
    z = 3.0 * np.random.default_rng(0).standard_normal(shape)
    if z.size == 0:
        return
    whole = saturation._weight_stats_rows(z)
    assert same(tuple(saturation.weight_stats(z)), tuple(whole))
    p = softmax(z)
    assert same(jacobian_frobenius(p), gradients._frobenius_rows(p))


def test_weight_stats_of_08s_five_by_1024_logits_is_bounded():
    z = np.random.default_rng(1).standard_normal((5, 1000, 1024))  # 41 MB
    _, peak = peak_bytes(saturation.weight_stats, 8.0 * z)
    assert peak < 41e6 + 100e6, f"weight_stats peaked at {peak / 1e6:.0f} MB above its input"


def test_jacobian_norm_of_06s_400000_rows_is_bounded():
    p = softmax(np.random.default_rng(2).standard_normal((400_000, 8)) * 4)  # 25.6 MB
    _, peak = peak_bytes(jacobian_frobenius, p)
    assert peak < 100e6, f"jacobian_frobenius peaked at {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("n_keys", [16, 1024])
def test_comparison_summary_keeps_the_table_ratio_and_share_of_the_full_comparison(n_keys):
    full = [overview.compare(d, n_keys, n_queries=300, rng=5) for d in (4, 64, 512)]
    light = [c.summary() for c in full]
    for c, s in zip(full, light):
        assert (s.d_k, s.n_keys) == (c.d_k, c.n_keys)
        assert same((s.largest_unscaled, s.largest_scaled, s.jacobian_unscaled, s.jacobian_scaled),
                    (c.unscaled.sorted_weights[:, 0], c.scaled.sorted_weights[:, 0], c.unscaled.jacobian_norm,
                     c.scaled.jacobian_norm))
        assert s.ratio == c.ratio and s.committed == c.committed
        assert all(a.base is None for a in s[2:])  # copies: no view keeps the full arrays alive
    assert overview.comparison_table(light) == overview.comparison_table(full)
    assert overview.comparison_table(light[:1] + full[1:]) == overview.comparison_table(full)


def test_comparison_summary_is_small():
    c = overview.compare(64, overview.MANY_KEYS, n_queries=500, rng=0)
    s = c.summary()
    assert sum(a.nbytes for a in s[2:]) == 4 * 500 * 8
    assert sum(a.nbytes for e in (c.unscaled, c.scaled) for a in (e.logits, e.sorted_weights)) == 4 * 500 * 1024 * 8


def test_scaled_drifts_keeps_nothing_in_the_cache_and_gives_the_numbers_of_the_cached_rows():
    overview._effects_by_d_k.cache_clear()
    got = overview.scaled_drifts(seed=3)
    assert overview._effects_by_d_k.cache_info().currsize == 0  # 00 and 09 call it for twenty seeds
    rows = overview.effects_by_d_k(overview.D_KS[2:], "sqrt", seed=3)  # the rows it used before issue 37
    overview._effects_by_d_k.cache_clear()

    def drift(v):
        return float(np.max(v) / np.min(v) - 1)

    assert got == (drift([r.logits.std() for r in rows]), drift([r.max_weight.mean for r in rows]),
                   drift([np.median(r.jacobian_norm) for r in rows]),
                   drift([r.sorted_weights[:, -1].mean() for r in rows]))
    with pytest.raises(ValueError, match="d_ks"):
        overview.scaled_drifts(d_ks=())


def test_make_lab_binder_and_the_memory_benchmark_fix_the_same_mmap_threshold():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    value = re.search(r"^MALLOC_MMAP_THRESHOLD = (\d+)$", (root / "benchmarks" / "notebook_memory.py").read_text(),
                      flags=re.M).group(1)
    line = f'MALLOC_MMAP_THRESHOLD_="${{MALLOC_MMAP_THRESHOLD_:-{value}}}"'
    assert f"export {line}" in (root / "binder" / "start").read_text()
    assert f"export {line.replace('$', '$$')}" in (root / "Makefile").read_text()
    assert (root / "binder" / "start").stat().st_mode & 0o111, "binder/start must be executable"
    assert (root / "binder" / "start").read_text().rstrip().endswith('exec "$@"')
