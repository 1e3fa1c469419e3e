"""Monte Carlo helpers: distributions, seeding semantics, chunking, memory."""

import math
import tracemalloc

import numpy as np
import pytest

from sdpa_helpers import sampling, theory
from sdpa_helpers.sampling import DISTRIBUTIONS, make_rng, sample_components, sample_dot_products


def test_make_rng_semantics():
    g = np.random.default_rng(3)
    assert make_rng(g) is g
    assert isinstance(make_rng(None), np.random.Generator)
    assert make_rng(5).standard_normal(4).tolist() == np.random.default_rng(5).standard_normal(4).tolist()


@pytest.mark.parametrize("fn,kwargs", [
    (sample_components, {"shape": (3, 4)}),
    (sample_dot_products, {"d_k": 8, "n_samples": 10}),
])
def test_rng_int_equals_generator(fn, kwargs):
    assert np.array_equal(fn(**kwargs, rng=5), fn(**kwargs, rng=make_rng(5)))
    shared = make_rng(5)
    first, second = fn(**kwargs, rng=shared), fn(**kwargs, rng=shared)
    assert not np.array_equal(first, second)  # a shared Generator advances


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("mean,var", [(0.0, 1.0), (2.0, 0.25), (-1.0, 3.0)])
def test_sample_components_moments(dist, mean, var):
    n = 300_000
    x = sample_components(n, dist, mean, var, rng=11)
    se_mean = math.sqrt(var / n)
    se_var = math.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / n)
    assert abs(x.mean() - mean) < 5 * se_mean
    assert abs(x.var() - var) < 5 * se_var


def test_distribution_shapes():
    r = sample_components(1000, "rademacher", rng=0)
    assert set(np.unique(r)) == {-1.0, 1.0}
    u = sample_components(100_000, "uniform", rng=0)
    assert u.min() >= -math.sqrt(3) and u.max() <= math.sqrt(3)
    lap = sample_components(400_000, "laplace", rng=0)
    kurt = np.mean(lap**4) / np.mean(lap**2) ** 2 - 3  # Laplace excess kurtosis is 3
    assert abs(kurt - 3) < 0.3
    assert sample_components((2, 0, 3), rng=0).shape == (2, 0, 3)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_sample_dot_products_match_theory(dist, d_k):
    n = 40_000
    mq, vq, mk, vk = 0.5, 1.5, -0.25, 0.75
    s = sample_dot_products(d_k, n, dist, mq, vq, mk, vk, rng=7)
    want = theory.dot_product_moments(d_k, mq, vq, mk, vk)
    se_mean = math.sqrt(want.var / n)
    se_var = math.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / n)
    assert s.shape == (n,)
    assert abs(s.mean() - want.mean) < 5 * se_mean
    assert abs(s.var() - want.var) < 5 * se_var


def test_scale_multiplies():
    a = sample_dot_products(64, 1000, rng=3)
    b = sample_dot_products(64, 1000, scale=0.125, rng=3)
    assert np.allclose(b, a * 0.125)


def test_vectorised_matches_naive_loop_across_chunks(monkeypatch):
    monkeypatch.setattr(sampling, "_CHUNK_ENTRIES", 10)  # d_k=3 -> 3 rows a chunk, 4 chunks
    d_k, n = 3, 10
    got = sample_dot_products(d_k, n, dist="laplace", mean_q=1.0, var_q=2.0, rng=4)
    rng = make_rng(4)
    want = []
    for start in range(0, n, 3):
        rows = min(3, n - start)
        q = rng.laplace(0.0, math.sqrt(0.5), (rows, d_k)) * math.sqrt(2.0) + 1.0
        k = rng.laplace(0.0, math.sqrt(0.5), (rows, d_k))
        for i in range(rows):
            want.append(sum(q[i, j] * k[i, j] for j in range(d_k)))
    assert np.allclose(got, want)


def test_peak_memory_is_bounded():
    # 50 000 pairs at d_k = 1024 would need 2 x 400 MB drawn at once; chunks keep it small.
    tracemalloc.start()
    sample_dot_products(1024, 50_000, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"
