"""sdpa_helpers.small_samples: the numbers of notebook 03, against independent references."""

import numpy as np
import pytest

from conftest import mean_se, var_se
from sdpa_helpers import small_samples as ss
from sdpa_helpers import theory
from sdpa_helpers.sampling import make_rng, sample_dot_products, sample_matmul_variances


def test_reps_for_budget_and_order():
    reps = [ss.reps_for(n) for n in ss.SIZES]
    assert reps == sorted(reps, reverse=True)
    assert all(2 * n * n * r <= ss.DRAWS_PER_SIZE or r == ss.MIN_REPS for n, r in zip(ss.SIZES, reps))
    assert min(reps) >= ss.MIN_REPS and max(reps) <= ss.MAX_REPS


def test_relative_sample_variances_cached_read_only_and_checked_before_the_cache():
    r = ss.relative_sample_variances(4)
    assert r is ss.relative_sample_variances(4) and not r.flags.writeable and r.size == ss.reps_for(4)
    with pytest.raises(TypeError, match="n"):
        ss.relative_sample_variances(4.0)  # a float is refused even though 4 is cached


@pytest.mark.parametrize("n", [2, 8])
def test_relative_sample_variances_match_the_exact_spread(n):
    r = ss.relative_sample_variances(n)
    mean, se_mean = mean_se(r)
    v, se_v = var_se(r)
    assert abs(mean - 1) < 4 * se_mean
    assert abs(v - ss.exact_relative_sd([n])[0] ** 2) < 4 * se_v


def test_iid_relative_sd_matches_truly_independent_entries():
    # n^2 *independent* dot products of length n (no shared rows or columns), many repetitions
    n, reps = 4, 40_000
    x = sample_dot_products(n, n * n * reps, rng=5).reshape(reps, n * n)
    r = x.var(axis=1, ddof=1) / n
    v, se_v = var_se(r)
    assert abs(v - ss.iid_relative_sd([n])[0] ** 2) < 4 * se_v
    assert ss.exact_relative_sd([n])[0] > ss.iid_relative_sd([n])[0]  # sharing widens the spread


def test_exact_relative_sd_is_the_theory_formula():
    for n in (2, 16, 256):
        assert ss.exact_relative_sd([n])[0] == pytest.approx(theory.matmul_sample_variance_moments(n, n).std / n)


def test_halve_spread_feedback_matches_the_exact_spread():
    """Exercise 2's feedback: x4 in n quarters the spread, x2 in entries (n -> ~sqrt(2) n) divides it by ~1.41."""
    from sdpa_helpers import exercises

    sd = ss.exact_relative_sd([45, 64, 128, 256])
    assert sd[1] / sd[3] == pytest.approx(4, rel=0.01)  # n x 4: quartered
    assert sd[1] / sd[2] == pytest.approx(2, rel=0.01)  # n x 2: halved (the right answer)
    assert 45**2 * 2 == pytest.approx(64**2, rel=0.02) and sd[0] / sd[1] == pytest.approx(2**0.5, rel=0.02)
    checker = exercises.get("03.halve_spread").checker
    assert checker("a")[0]
    assert "more than a factor 2" in checker("b")[1] and "1.41" in checker("c")[1]


def test_variance_with_se_against_a_naive_computation_and_its_own_calibration():
    x = make_rng(1).standard_normal(1000) * 3 + 2
    v, se = ss.variance_with_se(x)
    naive_v = sum((xi - x.mean()) ** 2 for xi in x) / (x.size - 1)
    m2 = sum((xi - x.mean()) ** 2 for xi in x) / x.size
    m4 = sum((xi - x.mean()) ** 4 for xi in x) / x.size
    assert v == pytest.approx(naive_v) and se == pytest.approx(np.sqrt((m4 - m2**2) / x.size), rel=1e-9)
    # calibration: over many data sets, the spread of v matches the typical SE
    g = make_rng(2)
    vs, ses = zip(*(ss.variance_with_se(g.standard_normal(400)) for _ in range(2000)))
    sd_v = np.std(vs, ddof=1)
    assert abs(np.mean(ses) / sd_v - 1) < 4 / np.sqrt(2 * 1999)


def test_variance_with_se_is_scale_safe():
    base = np.array([1.0, -1.0, 2.0, -2.0])
    for scale in (1e-100, 1e-50, 1.0, 1e50, 1e99):
        v, se = ss.variance_with_se(base * scale)
        assert v / scale / scale == pytest.approx(10 / 3) and np.isfinite(se)
    with pytest.raises(ValueError, match="values"):
        ss.variance_with_se(base * 1e100)  # beyond the course's range


def test_z_score_across_the_range():
    assert ss.z_score(1e100, -1e100, 1e100) == pytest.approx(2.0)
    assert ss.z_score(1e100, 1e100, 1e-100) == 0.0
    assert ss.z_score(3e-100, 1e-100, 1e-100) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="sd"):
        ss.z_score(1e100, -1e100, 1e-300)  # 2e400 does not fit a float
    with pytest.raises(ValueError, match="value"):
        ss.z_score(1e101, 0.0, 1.0)


def test_the_threads_numbers_judged_with_the_exact_and_naive_standard_errors():
    exact = theory.matmul_sample_variance_moments(1111, 111, 1111).std
    iid = theory.sample_variance_moments(1111**2, 111.0, theory.dot_product_excess_kurtosis(111)).std
    assert ss.z_score(ss.THREAD_BIG, 111, exact) == pytest.approx(-0.68, abs=0.005)
    assert ss.z_score(ss.THREAD_BIG, 111, iid) == pytest.approx(-3.07, abs=0.005)
    assert ss.THREAD_BIG / 111 == pytest.approx(ss.THREAD_BIG_SCALED, abs=5e-6)  # Var(cX) = c^2 Var(X)


def test_bin_fractions_against_a_loop():
    values = make_rng(3).standard_normal(500) * 2 + 1
    fractions = ss.bin_fractions(values, ss.REL_BINS)
    loop = [sum(lo <= v < hi for v in values) / values.size for lo, hi in zip(ss.REL_BINS[:-1], ss.REL_BINS[1:])]
    loop[-1] += sum(v == ss.REL_BINS[-1] for v in values) / values.size  # numpy's last bin is closed
    assert np.allclose(fractions, loop) and fractions.sum() < 1  # values outside count in the total


@pytest.mark.parametrize("call,exc,name", [
    (lambda: ss.bin_fractions([1.0], [1.0]), ValueError, "bins"),
    (lambda: ss.bin_fractions([np.inf], [0.0, 1.0]), ValueError, "values"),
    (lambda: ss.reps_for(0), ValueError, "n"),
    (lambda: ss.relative_sample_variances(-2), ValueError, "n"),
    (lambda: ss.exact_relative_sd([2.5]), TypeError, "n"),
    (lambda: ss.iid_relative_sd([0]), ValueError, "n"),
    (lambda: ss.variance_with_se([1.0]), ValueError, "values"),
    (lambda: ss.variance_with_se([1.0, np.nan]), ValueError, "values"),
    (lambda: ss.z_score(1.0, 0.0, 0.0), ValueError, "sd"),
    (lambda: ss.z_score("1", 0.0, 1.0), TypeError, "value"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_relative_sd_with_se_matches_a_direct_computation():
    for n in (2, 16):
        r = ss.relative_sample_variances(n)
        sd, se = ss.relative_sd_with_se(n)
        m2 = np.mean((r - r.mean()) ** 2)
        m4 = np.mean((r - r.mean()) ** 4)
        assert sd == pytest.approx(r.std(ddof=1), rel=1e-12)
        assert se == pytest.approx(np.sqrt((m4 - m2**2) / r.size) / (2 * r.std(ddof=1)), rel=1e-9)
        # the exact SD lies within 4 SE of the simulated one at these sizes
        assert abs(sd - ss.exact_relative_sd([n])[0]) < 4 * se


def test_relative_sample_variances_cached_and_read_only():
    r = ss.relative_sample_variances(4)
    assert r is ss.relative_sample_variances(4)
    assert r.size == ss.reps_for(4) and not r.flags.writeable
    assert [ss.reps_for(n) for n in ss.SIZES] == sorted(
        (ss.reps_for(n) for n in ss.SIZES), reverse=True)
    assert all(2 * n * n * ss.reps_for(n) <= ss.DRAWS_PER_SIZE or ss.reps_for(n) == ss.MIN_REPS for n in ss.SIZES)



# -- the exact small case behind the spread of s2 (issue 21, item 19) --------------------------------

@pytest.mark.parametrize("n,d,p", [(2, 2, 2), (2, 3, 1), (1, 2, 3), (3, 1, 2), (3, 2, 3)])
def test_brute_force_cumulant_sum_matches_the_closed_form_count(n, d, p):
    assert ss.matmul_cumulant_sum(n, d, p) == d * (2 * (n + p + 1) * (n * p - 2) + 6)


def test_fourth_cumulant_of_entries_against_monte_carlo():
    # kappa(C_ij, C_il, C_ij, C_il) = E[C_ij^2 C_il^2] - E[C_ij^2] E[C_il^2] - 2 E[C_ij C_il]^2 = 2 d
    d, n = 3, 400_000
    g = np.random.default_rng(11)
    a, b1, b2 = g.standard_normal((3, n, d))
    x, y = np.einsum("nd,nd->n", a, b1), np.einsum("nd,nd->n", a, b2)  # one row of A, two columns of B
    z = x**2 * y**2 - d * d
    assert ss.matmul_fourth_cumulant([(0, 0), (0, 1), (0, 0), (0, 1)], d) == 2 * d
    assert abs(z.mean() - 2 * d) < 4 * z.std(ddof=1) / np.sqrt(n)
    assert ss.matmul_fourth_cumulant([(0, 0), (1, 1), (0, 0), (1, 1)], d) == 0  # no shared row or column


@pytest.mark.parametrize("call,exc,name", [
    (lambda: ss.matmul_cumulant_sum(4, 2, 4), ValueError, "n \\* p"),
    (lambda: ss.matmul_cumulant_sum(2, 0, 2), ValueError, "d"),
    (lambda: ss.matmul_fourth_cumulant([(0, 0)] * 3, 2), ValueError, "entries"),
])
def test_cumulant_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_enough_repetitions_for_the_error_bars():
    # with 16 runs the fourth-moment SE came out ~23 % too small; every n now has at least 500
    assert min(ss.reps_for(n) for n in ss.SIZES) >= 500


def test_error_bars_cover_the_exact_spread_at_about_the_nominal_rate():
    # the notebook's bars are +-2 SE of the simulated SD, from reps_for(n) >= 500 runs; check their coverage
    n, runs, repeats = 4, ss.MIN_REPS, 300
    pool = sample_matmul_variances(n, runs * repeats, rng=21) / n
    exact = ss.exact_relative_sd([n])[0]
    hits = 0
    for t in range(repeats):
        v, se_v = ss.variance_with_se(pool[t * runs:(t + 1) * runs])
        sd = np.sqrt(v)
        hits += abs(sd - exact) < 2 * se_v / (2 * sd)
    coverage = hits / repeats
    se_cov = np.sqrt(0.95 * 0.05 / repeats)
    assert abs(coverage - 0.95) < 4 * se_cov, coverage
