"""sdpa_helpers.theory: its closed forms against independent references.

Exact enumeration (small discrete distributions, the cumulant count behind the matmul formula),
quadrature, the diagonal closed form, and Monte Carlo with tolerances of 4 (or 5) standard errors
computed from the samples themselves."""

import itertools
import math

import numpy as np
import pytest

from conftest import mean_se, raises_naming, var_se
from sdpa_helpers import sampling, theory
from sdpa_helpers.sampling import DISTRIBUTIONS, EXCESS_KURTOSIS, sample_components, sample_dot_products

# Small discrete distributions: (values, probabilities). Not symmetric, not zero-mean.
DISCRETE = {
    "coin": (np.array([-1.0, 1.0]), np.array([0.5, 0.5])),
    "skewed": (np.array([0.0, 1.0, 3.0]), np.array([0.5, 0.3, 0.2])),
    "shifted": (np.array([1.0, 2.0]), np.array([0.25, 0.75])),
}


def moments_of(values, probs):
    mean = float(probs @ values)
    return mean, float(probs @ (values - mean) ** 2)


@pytest.mark.parametrize("x_name,y_name", list(itertools.product(DISCRETE, repeat=2)))
def test_product_moments_match_exact_enumeration(x_name, y_name):
    (xv, xp), (yv, yp) = DISCRETE[x_name], DISCRETE[y_name]
    # Exact distribution of X*Y for independent X, Y: every pair, probability px*py.
    prods = np.array([x * y for x in xv for y in yv])
    probs = np.array([px * py for px in xp for py in yp])
    exact = moments_of(prods, probs)
    mx, vx = moments_of(xv, xp)
    my, vy = moments_of(yv, yp)
    got = theory.product_moments(mx, vx, my, vy)
    assert got.mean == pytest.approx(exact[0], abs=1e-12)
    assert got.var == pytest.approx(exact[1], abs=1e-12)


@pytest.mark.parametrize("d_k", [1, 2, 3])
@pytest.mark.parametrize("q_name,k_name", [("coin", "coin"), ("skewed", "shifted"), ("shifted", "skewed")])
def test_dot_product_moments_match_exact_enumeration(d_k, q_name, k_name):
    (qv, qp), (kv, kp) = DISCRETE[q_name], DISCRETE[k_name]
    total_p = 0.0
    dots, probs = [], []
    # Enumerate every q in qv^d_k and every k in kv^d_k.
    for qi in itertools.product(range(len(qv)), repeat=d_k):
        for ki in itertools.product(range(len(kv)), repeat=d_k):
            p = np.prod(qp[list(qi)]) * np.prod(kp[list(ki)])
            dots.append(float(qv[list(qi)] @ kv[list(ki)]))
            probs.append(p)
            total_p += p
    assert total_p == pytest.approx(1.0)
    exact = moments_of(np.array(dots), np.array(probs))
    got = theory.dot_product_moments(d_k, *moments_of(qv, qp), *moments_of(kv, kp))
    assert got.mean == pytest.approx(exact[0], abs=1e-10)
    assert got.var == pytest.approx(exact[1], abs=1e-10)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_product_moments_match_monte_carlo(dist):
    n = 400_000
    mx, vx, my, vy = 0.5, 2.0, -1.0, 0.5
    x = sample_components(n, dist, mx, vx, rng=1)
    y = sample_components(n, dist, my, vy, rng=2)
    xy = x * y
    want = theory.product_moments(mx, vx, my, vy)
    mean, se_mean = mean_se(xy)
    var, se_var = var_se(xy)
    assert abs(mean - want.mean) < 5 * se_mean
    assert abs(var - want.var) < 5 * se_var


def test_moments_std_and_unit_case():
    m = theory.dot_product_moments(64)
    assert m == (0.0, 64.0)
    assert m.std == 8.0
    assert theory.product_moments() == (0.0, 1.0)


def test_scaled_moments():
    m = theory.Moments(3.0, 16.0)
    assert theory.scaled_moments(m, 0.5) == (1.5, 4.0)
    assert theory.scaled_moments(m, -2.0) == (-6.0, 64.0)
    for d_k in (1, 7, 64, 4096):
        scaled = theory.scaled_moments(theory.dot_product_moments(d_k), d_k ** -0.5)
        assert scaled.var == pytest.approx(1.0)
        inv_d = theory.scaled_moments(theory.dot_product_moments(d_k), 1 / d_k)
        assert inv_d.var == pytest.approx(1 / d_k)


def test_general_formula_values():
    # (var_x + mx^2)(var_y + my^2) - mx^2 my^2 with mx=1, vx=1, my=2, vy=3: 2*7 - 4 = 10
    assert theory.product_moments(1.0, 1.0, 2.0, 3.0) == (2.0, 10.0)
    assert theory.dot_product_moments(4, mean_q=1.0, mean_k=1.0) == (4.0, 12.0)


# -- extreme but finite input: a correct number or a clear ValueError, never a crash or a wrong number --

def test_moments_std_of_a_negative_variance_is_a_clear_error():
    with pytest.raises(ValueError, match="var must be >= 0"):
        _ = theory.Moments(0, -1).std
    with pytest.raises(ValueError, match="var"):
        _ = theory.Moments(0, float("nan")).std


@pytest.mark.parametrize("call,words", [
    (lambda: theory.product_moments(mean_x=1e101), ["mean_x", "1e100"]),
    (lambda: theory.dot_product_moments(2, var_q=1e101), ["var_q", "1e100"]),
    (lambda: theory.dot_product_moments(2**21), ["d_k", "2**20"]),
    (lambda: theory.scaled_moments(theory.Moments(1.0, 1.0), 1e101), ["scale", "1e100"]),
    (lambda: theory.sample_variance_moments(10, var=1e101), ["var", "1e100"]),
    (lambda: theory.dot_product_excess_kurtosis(1, 1e101, 0.0), ["excess_kurtosis_q", "1e100"]),
    (lambda: theory.matmul_sample_variance_moments(2, 10**200), ["d=", "overflows a float"]),
    # inside the range, a result beyond the largest float: the same clear error
    (lambda: theory.shared_row_square_covariance(2**20, var_q=1e100, var_k=1e100), ["overflows a float"]),
])
def test_outside_the_range_or_beyond_a_float_a_clear_value_error(call, words):
    raises_naming(call, ValueError, words)


def test_product_variance_has_no_cancellation_at_large_means():
    # (var_x + mx^2)(var_y + my^2) - mx^2 my^2 loses every digit at mx = my = 1e10;
    # the exact answer is var_x var_y + var_x my^2 + var_y mx^2 = 1 + 2e20.
    m = theory.product_moments(1e10, 1.0, 1e10, 1.0)
    assert m.mean == 1e20 and m.var == pytest.approx(2e20, rel=1e-15)


def test_effective_sample_size_at_extreme_scales():
    # var = 1e-200: var^2 underflows; m solves 2/(m-1) = v with v = 1e400 -> m = 1 + 2e-400 ~ 1.
    assert theory.effective_sample_size(1, var=1e-200) == pytest.approx(1.0)
    # v = 1e-200 (tiny spread): m ~ (2 + kappa) / v
    assert theory.effective_sample_size(1e-200, 1.0) == pytest.approx(2e200)
    assert theory.effective_sample_size(1e-200, 1.0, 3.0) == pytest.approx(5e200)
    # Rademacher (kappa = -2): Var(s2) = 2 / (m (m - 1)), so m ~ sqrt(2 / v)
    assert theory.effective_sample_size(1e-300, 1.0, -2.0) == pytest.approx(math.sqrt(2e300))
    # the safe branch agrees with the textbook branch where both work
    for v in (1e-3, 0.5, 3.0, 1e5):
        for kappa in (-2.0, -1.2, 0.0, 3.0):
            m = theory.effective_sample_size(v, 1.0, kappa)
            assert theory.sample_variance_moments(2, excess_kurtosis=kappa).var > 0
            assert v == pytest.approx(2 / (m - 1) + kappa / m, rel=1e-9)
    with pytest.raises(ValueError, match="overflows"):
        theory.effective_sample_size(1e-300, 1e10)


@pytest.mark.parametrize("call,error", [
    (lambda: theory.sample_variance_moments(5, ddof=1.0), TypeError),
    (lambda: theory.sample_variance_moments(5, ddof=True), TypeError),
    (lambda: theory.sample_variance_moments(5, ddof=5), ValueError),
    (lambda: theory.sample_variance_moments(5, ddof=-1), ValueError),
    (lambda: theory.matmul_sample_variance_moments(2, 2, ddof="1"), TypeError),
    (lambda: theory.matmul_sample_variance_moments(2, 2, ddof=4), ValueError),
])
def test_ddof_errors_one_check_one_meaning(call, error):
    with pytest.raises(error, match="ddof"):
        call()


@pytest.mark.parametrize("call,name", [
    (lambda: theory.sample_variance_moments(5, excess_kurtosis=-2.5), "excess_kurtosis"),
    (lambda: theory.dot_product_excess_kurtosis(4, -3.0), "excess_kurtosis_q"),
    (lambda: theory.dot_product_excess_kurtosis(4, 0.0, -3.0), "excess_kurtosis_k"),
    (lambda: theory.shared_row_square_covariance(4, excess_kurtosis_q=-2.1), "excess_kurtosis_q"),
    (lambda: theory.effective_sample_size(1.0, excess_kurtosis=-4), "excess_kurtosis"),
])
def test_excess_kurtosis_below_minus_two_is_refused(call, name):
    with pytest.raises(ValueError, match=f"^{name} must be >= -2"):
        call()


# -- normal_pdf ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mean,var", [(0.0, 1.0), (3.0, 2.0), (-1.0, 16.0), (0.0, 4096.0)])
def test_normal_pdf_integrates_to_one_with_its_mean_and_variance(mean, var):
    x = np.linspace(mean - 14 * math.sqrt(var), mean + 14 * math.sqrt(var), 40_001)
    f = theory.normal_pdf(x, mean, var)
    assert np.isclose(np.trapezoid(f, x), 1.0, atol=1e-9)
    assert np.isclose(np.trapezoid(x * f, x), mean, atol=1e-7 * (1 + abs(mean) + math.sqrt(var)))
    assert np.isclose(np.trapezoid((x - mean) ** 2 * f, x), var, rtol=1e-6)


def test_normal_pdf_matches_the_formula_and_handles_extremes():
    assert np.isclose(theory.normal_pdf(3.0, 3.0, 2.0), 1 / math.sqrt(4 * math.pi))
    assert theory.normal_pdf(np.array([1e100, -1e100])).tolist() == [0.0, 0.0]
    assert theory.normal_pdf(np.zeros((2, 3))).shape == (2, 3)
    assert np.isfinite(theory.normal_pdf(0.0, var=1e-100))


@pytest.mark.parametrize("call,err,match", [
    (lambda: theory.normal_pdf(0.0, var=0.0), ValueError, "var"),
    (lambda: theory.normal_pdf(0.0, var=-1.0), ValueError, "var"),
    (lambda: theory.normal_pdf([np.nan]), ValueError, "x"),
    (lambda: theory.normal_pdf("a"), TypeError, "x"),
    (lambda: theory.normal_pdf(0.0, mean=np.inf), ValueError, "mean"),
])
def test_normal_pdf_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


# -- within_row_moments ----------------------------------------------------------------------------

def test_within_row_moments_by_exact_enumeration_of_rademacher_keys():
    # keys with components mean_k + sigma * (+-1): enumerate all 2^d_k keys exactly
    q = np.array([0.5, -2.0, 1.5, 3.0])
    mean_k, sigma = 0.7, 1.3
    dots = np.array([q @ (mean_k + sigma * np.array(s)) for s in itertools.product((-1.0, 1.0), repeat=4)])
    m = theory.within_row_moments(q, mean_k, sigma**2)
    assert math.isclose(m.mean, dots.mean(), rel_tol=1e-12)
    assert math.isclose(m.var, dots.var(), rel_tol=1e-12)


def test_within_row_moments_by_monte_carlo_and_stacks():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((3, 16)) + 1.0  # three queries with non-zero means
    keys = sample_components((200_000, 16), mean=0.5, var=2.0, rng=1)
    m = theory.within_row_moments(Q, 0.5, 2.0)
    assert m.mean.shape == (3,) and m.var.shape == (3,)
    for i in range(3):
        s = keys @ Q[i]
        se_mean = s.std() / math.sqrt(s.size)
        c = s - s.mean()
        se_var = math.sqrt((np.mean(c**4) - s.var() ** 2) / s.size)
        assert abs(s.mean() - m.mean[i]) < 4 * se_mean
        assert abs(s.var(ddof=1) - m.var[i]) < 4 * se_var


def test_within_row_moments_bad_input():
    with pytest.raises(ValueError, match="q"):
        theory.within_row_moments(np.array([]))
    with pytest.raises(ValueError, match="var_k"):
        theory.within_row_moments([1.0], var_k=-1.0)
    with pytest.raises(ValueError, match="q has entries beyond"):
        theory.within_row_moments([1e101, 1e101])
    with pytest.raises(TypeError, match="mean_k"):
        theory.within_row_moments([1.0], mean_k="0")


# -- dot_product_variance_cov ----------------------------------------------------------------------

@pytest.mark.parametrize("mean_q,var_q,mean_k,var_k", [(0, 1, 0, 1), (1, 2, -1, 1), (-0.5, 0.25, 2, 1), (3, 0, 1, 2)])
def test_dot_product_variance_cov_reduces_to_the_diagonal_closed_form(mean_q, var_q, mean_k, var_k):
    d = 7
    got = theory.dot_product_variance_cov(var_q * np.eye(d), var_k * np.eye(d), np.full(d, mean_q), np.full(d, mean_k))
    assert math.isclose(got, theory.dot_product_moments(d, mean_q, var_q, mean_k, var_k).var, rel_tol=1e-12)


def test_dot_product_variance_cov_by_monte_carlo_with_correlated_components():
    rng = np.random.default_rng(2)
    d, n = 5, 400_000
    Lq, Lk = rng.standard_normal((d, d)) / 2, rng.standard_normal((d, d)) / 2
    mq, mk = rng.standard_normal(d), rng.standard_normal(d)
    q = rng.standard_normal((n, d)) @ Lq.T + mq
    k = rng.standard_normal((n, d)) @ Lk.T + mk
    s = np.einsum("ij,ij->i", q, k)
    c = s - s.mean()
    se = math.sqrt((np.mean(c**4) - s.var() ** 2) / n)
    assert abs(s.var(ddof=1) - theory.dot_product_variance_cov(Lq @ Lq.T, Lk @ Lk.T, mq, mk)) < 4 * se


def test_uniform_on_the_sphere_gives_exactly_d_k():
    # q uniform on the sphere of radius sqrt(d): dependent components, covariance exactly I
    d, n = 8, 200_000
    q = sample_components((n, d), rng=3)
    q *= math.sqrt(d) / np.linalg.norm(q, axis=1, keepdims=True)
    k = sample_components((n, d), rng=4)
    s = np.einsum("ij,ij->i", q, k)
    c = s - s.mean()
    se = math.sqrt((np.mean(c**4) - s.var() ** 2) / n)
    assert abs(s.var(ddof=1) - theory.dot_product_variance_cov(np.eye(d), np.eye(d))) < 4 * se
    assert abs(np.cov(q, rowvar=False) - np.eye(d)).max() < 0.03  # uncorrelated, unit variance


def test_dot_product_variance_cov_bad_input():
    with pytest.raises(ValueError, match="cov_q must be a square"):
        theory.dot_product_variance_cov(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match="cov_k must be symmetric"):
        theory.dot_product_variance_cov(np.eye(2), [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="same shape"):
        theory.dot_product_variance_cov(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="mean_k"):
        theory.dot_product_variance_cov(np.eye(2), np.eye(2), mean_k=np.ones(3))
    with pytest.raises(ValueError, match="cov_q has entries beyond"):
        theory.dot_product_variance_cov(1e101 * np.eye(2), np.eye(2))


# -- theory.sample_variance_moments ---------------------------------------------------------

@pytest.mark.parametrize("name", ["coin", "skewed"])  # two of DISCRETE above
@pytest.mark.parametrize("m", [2, 3, 4])
@pytest.mark.parametrize("ddof", [0, 1])
def test_sample_variance_moments_match_exact_enumeration(name, m, ddof):
    values, probs = DISCRETE[name]
    mu = probs @ values
    var = probs @ (values - mu) ** 2
    kappa = (probs @ (values - mu) ** 4) / var**2 - 3
    s2, w = [], []
    for idx in itertools.product(range(values.size), repeat=m):  # every sample of size m
        x = values[list(idx)]
        s2.append(np.var(x, ddof=ddof))
        w.append(np.prod(probs[list(idx)]))
    s2, w = np.array(s2), np.array(w)
    exact_mean = w @ s2
    exact_var = w @ (s2 - exact_mean) ** 2
    got = theory.sample_variance_moments(m, var, kappa, ddof=ddof)
    assert got.mean == pytest.approx(exact_mean, abs=1e-12)
    assert got.var == pytest.approx(exact_var, abs=1e-12)


@pytest.mark.parametrize("dist", list(EXCESS_KURTOSIS))
def test_sample_variance_moments_match_monte_carlo(dist):
    m, reps, var = 5, 200_000, 2.5
    x = sample_components((reps, m), dist=dist, mean=1.0, var=var, rng=11)
    s2 = x.var(axis=1, ddof=1)
    want = theory.sample_variance_moments(m, var, EXCESS_KURTOSIS[dist])
    mean, se_mean = mean_se(s2)
    v, se_v = var_se(s2)
    assert abs(mean - want.mean) < 4 * se_mean
    assert abs(v - want.var) < 4 * se_v


def test_ddof_zero_rescales():
    one, zero = theory.sample_variance_moments(4, 2.0, 3.0), theory.sample_variance_moments(4, 2.0, 3.0, ddof=0)
    assert zero.mean == pytest.approx(1.5) and zero.var == pytest.approx(one.var * (3 / 4) ** 2)


# -- theory.dot_product_excess_kurtosis -----------------------------------------------------

@pytest.mark.parametrize("d_k", [1, 2, 3])
def test_dot_product_excess_kurtosis_exact_rademacher(d_k):
    # q.k with +-1 components: enumerate every sign pattern of the d_k products (each +-1 w.p. 1/2).
    sums = np.array([sum(p) for p in itertools.product([-1.0, 1.0], repeat=d_k)])
    kurt = np.mean(sums**4) / np.mean(sums**2) ** 2 - 3
    assert theory.dot_product_excess_kurtosis(d_k, -2.0, -2.0) == pytest.approx(kurt)


@pytest.mark.parametrize("dist,d_k", [("normal", 1), ("normal", 4), ("laplace", 2), ("uniform", 3)])
def test_dot_product_excess_kurtosis_monte_carlo(dist, d_k):
    n = 400_000
    q = sample_components((n, d_k), dist=dist, rng=1)
    k = sample_components((n, d_k), dist=dist, rng=2)
    s = np.einsum("nd,nd->n", q, k)
    # E[s^4] = (3 + kappa) d_k^2 for mean 0, variance d_k
    fourth, se = mean_se(s**4)
    kappa = theory.dot_product_excess_kurtosis(d_k, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])
    assert abs(fourth - (3 + kappa) * d_k**2) < 4 * se


# -- theory.dot_product_excess_kurtosis: the explorer's readout -------------------------------------

@pytest.mark.parametrize("d_k", [1, 2, 3, 4])
def test_rademacher_dot_excess_kurtosis_by_exact_enumeration(d_k):
    # With Rademacher components each product q_i k_i is itself +-1 with probability 1/2:
    # enumerate all 2^d_k sign patterns of the products.
    sums = np.array([sum(signs) for signs in itertools.product((-1.0, 1.0), repeat=d_k)])
    exact = np.mean(sums**4) / np.mean(sums**2) ** 2 - 3
    assert math.isclose(theory.dot_product_excess_kurtosis(d_k, -2.0, -2.0), exact, abs_tol=1e-12)


@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_dot_excess_kurtosis_by_monte_carlo(dist):
    # d_k = 4, 1.6 million pairs in 16 batches; tolerance 4 SE from the batch spread.
    s = sample_dot_products(4, 1_600_000, dist=dist, rng=5)

    def kurt(x):
        c = x - x.mean()
        return np.mean(c**4) / np.mean(c**2) ** 2 - 3

    batches = [kurt(b) for b in s.reshape(16, -1)]
    se = np.std(batches, ddof=1) / 4
    assert abs(kurt(s) - theory.dot_product_excess_kurtosis(4, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])) < 4 * se


# -- theory.matmul_sample_variance_moments --------------------------------------------------

PAIRINGS = (((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2)))


def fourth_cumulant(entries, d):
    """Joint fourth cumulant of four entries (i, j) of A @ B with standard normal A, B (Isserlis)."""
    count = 0
    for a, pi in enumerate(PAIRINGS):
        for b, sigma in enumerate(PAIRINGS):
            if a != b:
                rows = all(entries[x][0] == entries[y][0] for x, y in pi)
                cols = all(entries[x][1] == entries[y][1] for x, y in sigma)
                count += rows and cols
    return d * count


@pytest.mark.parametrize("n,d,p", [(2, 2, 2), (2, 3, 1), (1, 2, 3), (3, 1, 2), (2, 5, 3)])
def test_matmul_formula_matches_brute_force_cumulant_sum(n, d, p):
    entries = [(i, j) for i in range(n) for j in range(p)]
    m = len(entries)
    P = np.eye(m) - 1.0 / m  # centring matrix: (m - 1) s2 = x^T P x
    K = sum(P[a, b] * P[c, e] * fourth_cumulant([entries[a], entries[b], entries[c], entries[e]], d)
            for a, b, c, e in itertools.product(range(m), repeat=4))
    brute = (2 * d**2 * (m - 1) + K) / (m - 1) ** 2  # Var(x^T P x) / (m - 1)^2 with Sigma = d I
    assert theory.matmul_sample_variance_moments(n, d, p).var == pytest.approx(brute, rel=1e-12)


def test_fourth_cumulant_of_one_entry_is_6d():
    assert fourth_cumulant([(0, 0)] * 4, 5) == 30  # excess kurtosis 6d / d^2 = 6 / d


@pytest.mark.parametrize("n,d,p,ddof", [(2, 2, 2, 1), (2, 2, 2, 0), (3, 5, 2, 1), (1, 4, 3, 1), (4, 1, 4, 1),
                                        (8, 8, 8, 1)])
def test_matmul_formula_matches_monte_carlo(n, d, p, ddof):
    s2 = sampling.sample_matmul_variances(n, 100_000, d=d, p=p, ddof=ddof, rng=7)
    want = theory.matmul_sample_variance_moments(n, d, p, ddof=ddof)
    mean, se_mean = mean_se(s2)
    v, se_v = var_se(s2)
    assert abs(mean - want.mean) < 4 * se_mean
    assert abs(v - want.var) < 4 * se_v


def test_matmul_spread_exceeds_iid_formula():
    for n in (2, 8, 64):
        exact = theory.matmul_sample_variance_moments(n, n)
        iid = theory.sample_variance_moments(n * n, n, theory.dot_product_excess_kurtosis(n))
        assert exact.var > iid.var
    # large square products: ratio of variances -> 3
    big = 4096
    ratio = theory.matmul_sample_variance_moments(big, big).var / theory.sample_variance_moments(
        big * big, big, theory.dot_product_excess_kurtosis(big)).var
    assert ratio == pytest.approx(3.0, rel=2e-3)


# -- theory.shared_row_square_covariance -------------------------------------------------------

@pytest.mark.parametrize("dist,d_k,var_q,var_k", [("normal", 1, 1.0, 1.0), ("normal", 4, 2.0, 0.5),
                                                  ("laplace", 3, 1.0, 1.0), ("rademacher", 4, 1.0, 1.0),
                                                  ("uniform", 2, 1.0, 3.0)])
def test_shared_row_square_covariance_monte_carlo(dist, d_k, var_q, var_k):
    n = 400_000
    q = sample_components((n, d_k), dist=dist, var=var_q, rng=3)
    k_j = sample_components((n, d_k), var=var_k, rng=4)
    k_k = sample_components((n, d_k), var=var_k, rng=5)
    s_ij, s_ik = np.einsum("nd,nd->n", q, k_j), np.einsum("nd,nd->n", q, k_k)
    second = d_k * var_q * var_k  # E[S^2], known
    cov, se = mean_se((s_ij**2 - second) * (s_ik**2 - second))
    want = theory.shared_row_square_covariance(d_k, var_q, var_k, EXCESS_KURTOSIS[dist])
    assert abs(cov - want) < 4 * se + 1e-12
    cov1, se1 = mean_se(s_ij * s_ik)
    assert abs(cov1) < 4 * se1  # uncorrelated


# -- theory.effective_sample_size ---------------------------------------------------------------

@pytest.mark.parametrize("m", [2, 3, 10, 1000])
@pytest.mark.parametrize("kappa", [-1.5, 0.0, 3.0])
def test_effective_sample_size_inverts_the_iid_formula(m, kappa):
    var_s2 = theory.sample_variance_moments(m, 3.0, kappa).var
    assert theory.effective_sample_size(var_s2, 3.0, kappa) == pytest.approx(m, rel=1e-9)


def test_effective_sample_size_of_square_products_is_about_a_third():
    n = 256
    exact = theory.matmul_sample_variance_moments(n, n)
    m_eff = theory.effective_sample_size(exact.var, n, theory.dot_product_excess_kurtosis(n))
    assert 0.3 < m_eff / n**2 < 0.36


# -- bad input: the error names the parameter (a regular expression) -----------------------------

@pytest.mark.parametrize("call,exc,name", [
    (lambda: theory.sample_variance_moments(1), ValueError, "m"),
    (lambda: theory.sample_variance_moments(2.0), TypeError, "m"),
    (lambda: theory.sample_variance_moments(5, var=-1), ValueError, "var"),
    (lambda: theory.sample_variance_moments(5, excess_kurtosis=-3), ValueError, "excess_kurtosis"),
    (lambda: theory.sample_variance_moments(5, ddof=5), ValueError, "ddof"),
    (lambda: theory.sample_variance_moments(5, ddof=1.0), TypeError, "ddof"),
    (lambda: theory.dot_product_excess_kurtosis(0), ValueError, "d_k"),
    (lambda: theory.dot_product_excess_kurtosis(4, excess_kurtosis_k=-2.5), ValueError, "excess_kurtosis_k"),
    (lambda: theory.matmul_sample_variance_moments(1, 3), ValueError, "n \\* p"),
    (lambda: theory.matmul_sample_variance_moments(2, 0), ValueError, "d"),
    (lambda: theory.matmul_sample_variance_moments(2, 2, p="3"), TypeError, "p"),
    (lambda: theory.matmul_sample_variance_moments(2, 2, ddof=-1), ValueError, "ddof"),
    (lambda: theory.shared_row_square_covariance(4, var_q=-1), ValueError, "var_q"),
    (lambda: theory.shared_row_square_covariance(4, excess_kurtosis_q=-2.1), ValueError, "excess_kurtosis_q"),
    (lambda: theory.effective_sample_size(0.0), ValueError, "var_s2"),
    (lambda: theory.effective_sample_size(1.0, var=0.0), ValueError, "var"),
    (lambda: theory.effective_sample_size(1.0, excess_kurtosis=-5), ValueError, "excess_kurtosis"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# -- bad input: a ValueError/TypeError whose message names the parameter ----------------------------

BAD_INPUT = [
    # (call, error type, words the message must contain)
    (lambda: theory.dot_product_moments(-3), ValueError, ["d_k", "positive integer", "-3"]),
    (lambda: theory.dot_product_moments(0), ValueError, ["d_k"]),
    (lambda: theory.dot_product_moments(2.5), TypeError, ["d_k", "positive integer"]),
    (lambda: theory.dot_product_moments(True), TypeError, ["d_k"]),
    (lambda: theory.dot_product_moments("64"), TypeError, ["d_k"]),
    (lambda: theory.product_moments(var_x=-1.0), ValueError, ["var_x", ">= 0"]),
    (lambda: theory.product_moments(var_y=-0.1), ValueError, ["var_y"]),
    (lambda: theory.product_moments(mean_x=float("nan")), ValueError, ["mean_x", "finite"]),
    (lambda: theory.dot_product_moments(4, var_k=-2), ValueError, ["var_k"]),
    (lambda: theory.scaled_moments((0.0, -1.0), 2.0), ValueError, ["moments.var"]),
    (lambda: theory.scaled_moments(3.0, 2.0), TypeError, ["moments"]),
    (lambda: theory.scaled_moments(theory.Moments(0, 1), float("inf")), ValueError, ["scale"]),
]


@pytest.mark.parametrize("call,error,words", BAD_INPUT, ids=[f"case{i}" for i in range(len(BAD_INPUT))])
def test_bad_input_raises_clear_error(call, error, words):
    raises_naming(call, error, words)
