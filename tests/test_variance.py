"""sdpa_helpers.variance: the stored CDFs and the fast exact sampler, against Monte Carlo (the
direct sampler), the closed-form moments of theory, exact enumeration and the generating script."""

import importlib.util
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from sdpa_helpers import theory
from sdpa_helpers import variance as law
from sdpa_helpers.attention import layer_norm
from sdpa_helpers.sampling import EXCESS_KURTOSIS, sample_components, sample_dot_products

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", [f"{dist}_{d_k}" for dist in law.CDF_DISTS for d_k in law.CDF_D_KS])
def test_stored_cdfs_have_the_closed_form_moments(name):
    dist, d_k = name.split("_")[0], int(name.split("_")[1])
    with np.load(law.CDF_FILE) as f:
        x, cdf = f["x"], f[name]
    assert cdf[0] == 0.0 and cdf[-1] == 1.0 and np.all(np.diff(cdf) >= 0)
    mid, mass = (x[1:] + x[:-1]) / 2, np.diff(cdf)  # the probability of each grid cell, at its midpoint
    assert abs(mid @ mass) < 1e-9
    assert math.isclose(mid**2 @ mass, 1.0, abs_tol=2e-4)  # midpoint rule: error about h^2 / 12
    kurt = (mid**4 @ mass) / (mid**2 @ mass) ** 2 - 3
    expected = theory.dot_product_excess_kurtosis(d_k, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])
    assert abs(kurt - expected) < 2e-3


def test_the_script_regenerates_the_stored_cdfs(tmp_path):
    spec = importlib.util.spec_from_file_location("make_cdfs", ROOT / "scripts" / "make_dot_product_cdfs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.CDF_FILE = tmp_path / "cdfs.npz"
    script.main()
    with np.load(script.CDF_FILE) as new, np.load(law.CDF_FILE) as stored:
        assert sorted(new.files) == sorted(stored.files)
        for name in stored.files:
            assert np.allclose(new[name], stored[name], rtol=0, atol=1e-12), name


def _ks(a, b):
    """Two-sample Kolmogorov-Smirnov statistic."""
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(np.sort(a), grid, side="right") / a.size
    fb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return np.abs(fa - fb).max()


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace"])
@pytest.mark.parametrize("d_k", [1, 16, 128, 200, 512])
def test_fast_draws_have_the_distribution_of_the_direct_sampler(dist, d_k):
    n = 20_000
    fast = law.sample_dot_products_fast(d_k, n, dist, rng=3)
    direct = sample_dot_products(d_k, n, dist=dist, rng=4)
    # KS critical value at level 1e-4 for two samples of n: sqrt(-ln(1e-4 / 2) / n)
    assert _ks(fast, direct) < math.sqrt(-math.log(0.5e-4) / n)


@pytest.mark.parametrize("d_k", [1, 2, 3, 6])
def test_rademacher_draws_follow_the_binomial_law_by_enumeration(d_k):
    n = 200_000
    s = law.sample_dot_products_fast(d_k, n, "rademacher", rng=5)
    values = np.arange(-d_k, d_k + 1, 2)
    pmf = np.array([math.comb(d_k, (v + d_k) // 2) for v in values]) / 2**d_k  # B = (v + d_k) / 2 products +1
    assert set(np.unique(s).tolist()) <= set(values.tolist())
    freq = np.array([np.mean(s == v) for v in values])
    assert np.all(np.abs(freq - pmf) < 4 * np.sqrt(pmf * (1 - pmf) / n) + 1e-12)


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace", "rademacher"])
def test_fast_draws_at_large_d_k_have_variance_d_k(dist):
    s = law.sample_dot_products_fast(4096, 200_000, dist, rng=6)
    c = s - s.mean()
    se = math.sqrt((np.mean(c**4) - s.var() ** 2) / s.size)
    assert abs(s.var(ddof=1) - 4096) < 4 * se
    assert abs(s.mean()) < 4 * 64 / math.sqrt(s.size)


@pytest.mark.parametrize("call,err,match", [
    (lambda: law.sample_dot_products_fast(0, 10), ValueError, "d_k"),
    (lambda: law.sample_dot_products_fast(4, 0), ValueError, "n_samples"),
    (lambda: law.sample_dot_products_fast(4.0, 10), TypeError, "d_k"),
    (lambda: law.sample_dot_products_fast(4, 10, "cauchy"), ValueError, "dist"),
    (lambda: law.histogram_edges(0), ValueError, "d_k"),
    (lambda: law.histogram_edges(2.0), TypeError, "d_k"),
    (lambda: law.histogram_edges(4, "cauchy"), ValueError, "dist must be one of"),
    (lambda: law.histogram_density([1.0], [1.0, 0.0]), ValueError, "edges"),
    (lambda: law.histogram_density([], [0.0, 1.0]), ValueError, "samples"),
])
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_sample_summary_against_a_direct_computation_at_any_magnitude():
    x = np.random.default_rng(7).laplace(size=5000)
    c = x - x.mean()
    var = float(np.sum(c**2) / (x.size - 1))
    m4 = float(np.mean(c**4))
    want = {"mean": x.mean(), "se_mean": np.sqrt(var / x.size), "var": var,
            "se_var": np.sqrt((m4 - var**2) / x.size), "kurt": m4 / var**2 - 3}
    for scale in (1.0, 1e90, 1e-90):
        got = law.sample_summary(x * scale)
        for key in want:
            power = 0 if key == "kurt" else (2 if key in ("var", "se_var") else 1)
            assert got[key] == pytest.approx(want[key] * scale**power, rel=1e-9), (key, scale)


def test_sample_summary_se_of_the_variance_matches_sample_spread():
    from sdpa_helpers.small_samples import variance_with_se  # an independent implementation
    x = np.random.default_rng(8).standard_normal(200_000)
    v, se = variance_with_se(x)
    st = law.sample_summary(x)
    assert st["var"] == pytest.approx(v, rel=1e-12)
    assert st["se_var"] == pytest.approx(se, rel=1e-4)  # m_2 vs the ddof=1 variance: O(1/n) apart


@pytest.mark.parametrize("samples, match", [([1.0], "at least 2"), ([2.0, 2.0, 2.0], "all equal"),
                                            ([1.0, np.nan], "samples"), ([-1e101, 1e101], "samples")])
def test_sample_summary_bad_input(samples, match):
    with pytest.raises(ValueError, match=match):
        law.sample_summary(samples)


# -- histogram_edges, histogram_density (notebook 02's histograms) -----------------------------

@pytest.mark.parametrize("d_k", [1, 2, 3, 4, 5, 8, 16, 64, 255, 256, 1024, 4096])
def test_rademacher_bins_hold_the_same_number_of_lattice_values(d_k):
    edges = law.histogram_edges(d_k, "rademacher")
    sd = math.sqrt(d_k)
    values = np.arange(-d_k, d_k + 1, 2)  # every possible q·k
    assert not np.isin(values, edges).any(), "no possible value sits on an edge"
    assert edges[0] <= -4.5 * sd and edges[-1] >= 4.5 * sd, "the bins cover the axis"
    assert np.allclose(edges, -edges[::-1]), "symmetric about 0"
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0]) and widths[0] >= (law.BINS[1] - law.BINS[0]) * sd
    counts, _ = np.histogram(values, edges)
    inside = (edges[:-1] >= -d_k) & (edges[1:] <= d_k)
    assert len(set(counts[inside].tolist())) <= 1, "every full bin holds the same number of values"


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace"])
def test_continuous_bins_are_standardised(dist):
    assert np.allclose(law.histogram_edges(16, dist), law.BINS * 4)


def test_histogram_density_matches_numpy_and_counts_outsiders():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(10_000)
    edges = np.linspace(-2, 2, 21)
    d = law.histogram_density(x, edges)
    counts, _ = np.histogram(x, edges)
    assert np.allclose(d * np.diff(edges) * x.size, counts)
    assert np.isclose((d * np.diff(edges)).sum(), np.mean(np.abs(x) <= 2))
    inside = x[np.abs(x) < 2]
    assert np.allclose(law.histogram_density(inside, edges), np.histogram(inside, edges, density=True)[0])



# -- exact enumeration helpers (notebook 02's exact checks) -----------------------------------------

def test_exact_mean_and_var_against_numpy_and_the_shortcut():
    outcomes = [0, 1, 2, 2, 5, -3]
    assert law.exact_mean(outcomes) == Fraction(7, 6)
    assert math.isclose(float(law.exact_var(outcomes)), np.var(outcomes), rel_tol=1e-12)
    # the shortcut E[X^2] - (E X)^2 agrees with the definition exactly
    assert law.exact_var(outcomes) == law.exact_mean([x * x for x in outcomes]) - law.exact_mean(outcomes) ** 2
    assert law.exact_var([Fraction(1, 3), Fraction(2, 3)]) == Fraction(1, 36)


@pytest.mark.parametrize("values,d_k", [([-1, 1], 1), ([-1, 1], 4), ([0, 1, 2], 1), ([0, 1, 2], 3), ([1, 2], 2),
                                        ([-2, 0, 0, 0, 0, 0, 0, 2], 2)])
def test_all_dot_products_match_a_numpy_enumeration_and_the_closed_form(values, d_k):
    dots = law.all_dot_products(values, d_k)
    assert len(dots) == len(values) ** (2 * d_k)
    # independent reference: a numpy enumeration of all (q, k) by mixed-radix counting
    idx = np.indices((len(values),) * (2 * d_k)).reshape(2 * d_k, -1)
    comps = np.asarray(values)[idx]  # (2 d_k, n_pairs)
    ref = (comps[:d_k] * comps[d_k:]).sum(axis=0)
    assert sorted(int(x) for x in dots) == sorted(ref.tolist())
    mu, var = float(np.mean(values)), float(np.var(values))
    th = theory.dot_product_moments(d_k, mu, var, mu, var)
    assert math.isclose(float(law.exact_mean(dots)), th.mean, rel_tol=1e-12, abs_tol=1e-12)
    assert math.isclose(float(law.exact_var(dots)), th.var, rel_tol=1e-12)


def test_exact_product_variance_tells_the_rule_from_the_shortcut():
    xy = [x * y for x in (0, 1, 2) for y in (0, 1, 2)]
    assert law.exact_var(xy) == Fraction(16, 9) != law.exact_var([0, 1, 2]) ** 2
    pm = [x * y for x in (-1, 1) for y in (-1, 1)]
    assert law.exact_var(pm) == 1 == law.exact_var([-1, 1]) ** 2  # +-1 cannot tell them apart


def test_exact_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="outcomes"):
        law.exact_mean([])
    with pytest.raises(TypeError, match="outcomes"):
        law.exact_var(["1", 2])
    with pytest.raises(TypeError, match="outcomes"):
        law.exact_var(3)
    with pytest.raises(ValueError, match="outcomes"):
        law.exact_mean([1.0, float("nan")])
    with pytest.raises(ValueError, match="d_k"):
        law.all_dot_products([0, 1], 0)
    with pytest.raises(ValueError, match="values and d_k"):
        law.all_dot_products([0, 1, 2], 8)
    with pytest.raises(ValueError, match="d must be >= 2"):
        law.layer_norm_covariance(1)


@pytest.mark.parametrize("d", [2, 8, pytest.param(16, marks=pytest.mark.slow)])
def test_layer_norm_covariance_by_monte_carlo(d):
    n = 200_000
    z = layer_norm(sample_components((n, d), rng=7), eps=0.0)
    cov = law.layer_norm_covariance(d)
    sample = z.T @ z / n  # the means are exactly 0
    se = np.sqrt(np.var(z[:, :, None] * z[:, None, :], axis=0) / n)  # (d, d)
    assert np.all(np.abs(sample - cov) <= 4 * se + 1e-12)
    assert math.isclose(cov[0, 1], -1 / (d - 1))


def test_two_layer_norm_vectors_give_d_squared_over_d_minus_1():
    d, n = 8, 400_000
    cov = law.layer_norm_covariance(d)
    assert math.isclose(theory.dot_product_variance_cov(cov, cov), d * d / (d - 1), rel_tol=1e-12)
    assert math.isclose(theory.dot_product_variance_cov(cov, np.eye(d)), d, rel_tol=1e-12)
    q = layer_norm(sample_components((n, d), rng=8), eps=0.0)
    k = layer_norm(sample_components((n, d), rng=9), eps=0.0)
    s = np.einsum("ij,ij->i", q, k)
    st = law.sample_summary(s)
    assert abs(st["var"] - 64 / 7) < 4 * st["se_var"]


def test_exact_cov_against_numpy_and_the_sum_rule():
    pairs = [(0, 1), (2, 2), (5, -1), (1, 0)]
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    assert math.isclose(float(law.exact_cov(pairs)), np.cov(xs, ys, ddof=0)[0, 1], rel_tol=1e-12)
    # Var(X + Y) = Var X + Var Y + 2 Cov(X, Y), exactly
    assert law.exact_var([x + y for x, y in pairs]) == law.exact_var(xs) + law.exact_var(ys) + 2 * law.exact_cov(pairs)
    with pytest.raises(ValueError, match="pairs"):
        law.exact_cov([(1, 2, 3)])
    with pytest.raises(TypeError, match="pairs"):
        law.exact_cov(5)


@pytest.mark.slow  # a million draws per answer: in `make test`
def test_notebook_02_exercise_answers_by_simulation():
    """The expected answers of 02's numeric exercises, against Monte Carlo (not the closed forms they use)."""
    from sdpa_helpers import exercises

    rng = np.random.default_rng(11)
    n = 400_000

    def agrees(key, samples, index=None):
        st = law.sample_summary(samples)
        want = exercises.get(key).checker.expected
        want = float(want if index is None else want[index])
        return abs(st["var"] - want) < 4 * st["se_var"]

    xy = rng.multivariate_normal([0.0, 0.0], [[2.0, -1.0], [-1.0, 3.0]], size=n)
    assert agrees("02.var_sum_dependent", xy.sum(axis=1))
    q = rng.standard_normal((n, 16))
    assert agrees("02.copied_key", q.sum(axis=1) * rng.standard_normal(n))  # k = (y, ..., y)
    s = sample_dot_products(32, n, mean_q=1.0, var_q=2.0, mean_k=-1.0, var_k=1.0, rng=12)
    assert agrees("02.general", s, index=1)
    assert abs(s.mean() - float(exercises.get("02.general").checker.expected[0])) < 4 * s.std() / math.sqrt(n)
