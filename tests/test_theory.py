"""Closed forms in sdpa_helpers.theory against exact enumeration and Monte Carlo."""

import itertools
import math

import numpy as np
import pytest
from conftest import mean_se, var_se

from sdpa_helpers import theory
from sdpa_helpers.sampling import DISTRIBUTIONS, sample_components

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


@pytest.mark.parametrize("call", [
    lambda: theory.product_moments(mean_x=1e200),
    lambda: theory.product_moments(mean_x=1e200, mean_y=1e200, var_x=0, var_y=0),
    lambda: theory.dot_product_moments(2, var_q=1e300, var_k=1e10),
    lambda: theory.scaled_moments(theory.Moments(1.0, 1.0), 1e200),
    lambda: theory.sample_variance_moments(10, var=1e200),
    lambda: theory.shared_row_square_covariance(4, var_q=1e100, var_k=1e100),
    lambda: theory.dot_product_excess_kurtosis(1, 1e200, 1e200),
    lambda: theory.matmul_sample_variance_moments(2, 10**200),
])
def test_overflowing_results_raise_value_error(call):
    with pytest.raises(ValueError, match="overflows a float"):
        call()


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
