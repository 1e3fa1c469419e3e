"""Monte Carlo helpers: distributions, seeding semantics, chunking, memory."""

import math
import tracemalloc

import numpy as np
import pytest

from conftest import mean_se, raises_naming, var_se
from sdpa_helpers import sampling, theory
from sdpa_helpers.sampling import DISTRIBUTIONS, EXCESS_KURTOSIS, make_rng, sample_components, sample_dot_products


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
    se_mean = math.sqrt(var / n)  # the true variance is known
    sample_var, se_var = var_se(x)
    assert abs(x.mean() - mean) < 5 * se_mean
    assert abs(sample_var - var) < 5 * se_var


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
    se_mean = math.sqrt(want.var / n)  # the true variance is known
    var, se_var = var_se(s)
    assert s.shape == (n,)
    assert abs(s.mean() - want.mean) < 5 * se_mean
    assert abs(var - want.var) < 5 * se_var


def test_scale_multiplies():
    a = sample_dot_products(64, 1000, rng=3)
    b = sample_dot_products(64, 1000, scale=0.125, rng=3)
    assert np.allclose(b, a * 0.125)


def test_vectorised_matches_naive_loop_across_chunks(monkeypatch):
    monkeypatch.setattr(sampling, "CHUNK_ENTRIES", 10)  # d_k=3 -> 3 rows a chunk, 4 chunks
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


@pytest.mark.slow  # about 3 s of CPU (tracemalloc over large draws): in `make test`
def test_peak_memory_is_bounded():
    # 50 000 pairs at d_k = 1024 would need 2 x 400 MB drawn at once; chunks keep it small.
    tracemalloc.start()
    sample_dot_products(1024, 50_000, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_rows_longer_than_a_chunk_match_naive_loop(monkeypatch):
    # d_k = 10 > CHUNK_ENTRIES = 4: each row is drawn in pieces of 4, 4 and 2 components (q then k).
    monkeypatch.setattr(sampling, "CHUNK_ENTRIES", 4)
    d_k, n = 10, 3
    got = sample_dot_products(d_k, n, dist="uniform", mean_k=0.5, var_k=3.0, scale="sqrt", rng=8)
    rng, a = make_rng(8), math.sqrt(3.0)
    want = []
    for _ in range(n):
        total = 0.0
        for size in (4, 4, 2):
            q = rng.uniform(-a, a, size)
            k = rng.uniform(-a, a, size) * math.sqrt(3.0) + 0.5
            total += sum(q[j] * k[j] for j in range(size))
        want.append(total / math.sqrt(d_k))
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_peak_memory_is_bounded_at_huge_d_k(dist):
    # 8 dot products at the largest d_k (2**20) drawn in one piece would hold q and k of 64 MiB
    # each (plus temporaries); the documented bound is the output plus three chunks of 8 MiB.
    tracemalloc.start()
    s = sample_dot_products(2**20, 8, dist=dist, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert s.shape == (8,) and np.isfinite(s).all()
    assert peak < 3 * sampling.CHUNK_ENTRIES * 8 + 2 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_huge_d_k_has_the_right_variance(monkeypatch):
    # The piecewise path is a correct sampler: Var(q . k) = d_k (checked at a small chunk size).
    monkeypatch.setattr(sampling, "CHUNK_ENTRIES", 16)
    n, d_k = 4000, 40
    s = sample_dot_products(d_k, n, rng=9)
    var, se_var = var_se(s)
    assert abs(var - d_k) < 4 * se_var


def test_scale_accepts_the_scale_vocabulary():
    a = sample_dot_products(64, 100, rng=3)
    np.testing.assert_array_equal(sample_dot_products(64, 100, scale="sqrt", rng=3), a * 0.125)
    np.testing.assert_array_equal(sample_dot_products(64, 100, scale="inv_d", rng=3), a / 64)
    np.testing.assert_array_equal(sample_dot_products(64, 100, scale="unscaled", rng=3), a)
    with pytest.raises(ValueError, match="scale"):
        sample_dot_products(64, 100, scale="root")


def test_check_dist_lists_the_known_distributions():
    assert sampling.check_dist("components", "uniform") == "uniform"
    with pytest.raises(ValueError) as info:
        sampling.check_dist("components", "cauchy")
    assert str(info.value).startswith("components must be one of")
    assert all(repr(d) in str(info.value) for d in DISTRIBUTIONS)
    assert set(sampling.EXCESS_KURTOSIS) == set(DISTRIBUTIONS)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_excess_kurtosis_table_matches_monte_carlo(dist):
    x = sample_components(2_000_000, dist, rng=12)
    kurt = np.mean(x**4) / np.mean(x**2) ** 2 - 3
    batches = [np.mean(b**4) / np.mean(b**2) ** 2 - 3 for b in x.reshape(20, -1)]
    se = np.std(batches, ddof=1) / math.sqrt(20)
    assert abs(kurt - sampling.EXCESS_KURTOSIS[dist]) < 4 * se + 1e-12


def test_matmul_variances_blame_the_shape_not_ddof():
    with pytest.raises(ValueError) as info:
        sampling.sample_matmul_variances(1, 10)
    assert "n=1" in str(info.value) and "ddof" not in str(info.value)
    with pytest.raises(TypeError, match="ddof"):
        sampling.sample_matmul_variances(2, 10, ddof=1.0)
    with pytest.raises(ValueError, match="ddof"):
        sampling.sample_matmul_variances(2, 10, ddof=4)


def test_an_output_too_large_to_allocate_names_its_parameter():
    with pytest.raises(ValueError, match="n_samples"):
        sample_dot_products(4, 10**14)
    with pytest.raises(ValueError, match="n_reps"):
        sampling.sample_matmul_variances(2, 10**14)


# -- sample_matmul_variances --------------------------------------------------------------------

@pytest.mark.parametrize("n,d,p,ddof", [(2, 2, 2, 0), (3, 4, 2, 1)])
def test_sample_matmul_variances_matches_a_naive_loop(n, d, p, ddof):
    reps = 50  # one chunk: the same draws as rng.standard_normal((reps, n, d)) then ((reps, d, p))
    got = sampling.sample_matmul_variances(n, reps, d=d, p=p, ddof=ddof, rng=9)
    g = make_rng(9)
    A, B = g.standard_normal((reps, n, d)), g.standard_normal((reps, d, p))
    naive = [np.var(A[r] @ B[r], ddof=ddof) for r in range(reps)]
    assert np.allclose(got, naive, rtol=1e-12)


def test_sample_matmul_variances_is_seeded_and_chunked():
    a = sampling.sample_matmul_variances(64, 600, rng=1)  # several chunks
    assert np.array_equal(a, sampling.sample_matmul_variances(64, 600, rng=1))
    assert not np.array_equal(a[:300], a[300:])
    mean, se = mean_se(a / 64)
    assert abs(mean - 1) < 4 * se


@pytest.mark.parametrize("call,exc,name", [
    (lambda: sampling.sample_matmul_variances(0, 10), ValueError, "n"),
    (lambda: sampling.sample_matmul_variances(2, 10, ddof=4), ValueError, "ddof"),
    (lambda: sampling.sample_matmul_variances(2, 0), ValueError, "n_reps"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def _fourth_moment(dist):
    """E[x^4] of a standardised component, by quadrature of its density (or exactly)."""
    if dist == "rademacher":
        return 1.0
    x = np.linspace(-40, 40, 800_001)
    if dist == "normal":
        f = np.exp(-x**2 / 2) / math.sqrt(2 * math.pi)
    elif dist == "uniform":
        a = math.sqrt(3)
        f = np.where(np.abs(x) <= a, 1 / (2 * a), 0.0)
    else:
        b = 1 / math.sqrt(2)
        f = np.exp(-np.abs(x) / b) / (2 * b)
    assert np.isclose(np.trapezoid(x**2 * f, x), 1.0, atol=1e-4)  # standardised
    return float(np.trapezoid(x**4 * f, x))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_component_excess_kurtosis_by_quadrature(dist):
    assert math.isclose(_fourth_moment(dist) - 3, EXCESS_KURTOSIS[dist], abs_tol=1e-3)


# -- bad input: a ValueError/TypeError whose message names the parameter ----------------------------

BAD_INPUT = [
    # (call, error type, words the message must contain)
    (lambda: sample_dot_products(0, 10), ValueError, ["d_k", "positive integer"]),
    (lambda: sample_dot_products(4, -1), ValueError, ["n_samples", "positive integer"]),
    (lambda: sample_dot_products(4, 10.0), TypeError, ["n_samples"]),
    (lambda: sample_dot_products(4, 10, dist="cauchy"), ValueError,
     ["dist", "'normal'", "'uniform'", "'rademacher'", "'laplace'", "cauchy"]),
    (lambda: sample_dot_products(4, 10, var_q=-1), ValueError, ["var_q"]),
    (lambda: sample_dot_products(4, 10, rng=-1), ValueError, ["rng"]),
    (lambda: sample_dot_products(4, 10, rng="seed"), TypeError, ["rng"]),
    (lambda: sample_components((2, -1)), ValueError, ["shape"]),
    (lambda: sample_components("3"), TypeError, ["shape"]),
    (lambda: sample_components(3, dist="gauss"), ValueError, ["dist", "'normal'"]),
    (lambda: sample_components(3, var=-1.0), ValueError, ["var"]),
    (lambda: make_rng(1.5), TypeError, ["rng"]),
]


@pytest.mark.parametrize("call,error,words", BAD_INPUT, ids=[f"case{i}" for i in range(len(BAD_INPUT))])
def test_bad_input_raises_clear_error(call, error, words):
    raises_naming(call, error, words)


def test_histogram_density_against_numpy():
    from sdpa_helpers.sampling import histogram_density

    x = make_rng(0).standard_normal(5000)
    edges = np.linspace(-5, 5, 21)  # every draw inside: numpy's density is the same
    assert np.allclose(histogram_density(x, edges), np.histogram(x, edges, density=True)[0])
    narrow = np.linspace(-1, 1, 9)
    area = (histogram_density(x, narrow) * np.diff(narrow)).sum()
    assert area == pytest.approx(np.mean(np.abs(x) <= 1))  # the area is the fraction inside
    for bad in ([], [1.0, np.nan]):
        with pytest.raises(ValueError, match="samples"):
            histogram_density(bad, [0, 1])
    with pytest.raises(ValueError, match="edges"):
        histogram_density([1.0], [1, 0])
