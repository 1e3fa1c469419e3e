"""theory.normal_pdf, theory.within_row_moments and theory.dot_product_variance_cov against
independent references: quadrature, the diagonal closed form, exact enumeration and Monte Carlo."""

import itertools
import math

import numpy as np
import pytest

from sdpa_helpers import theory
from sdpa_helpers.sampling import sample_components

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
    assert theory.normal_pdf(np.array([1e300, -1e308])).tolist() == [0.0, 0.0]
    assert theory.normal_pdf(np.zeros((2, 3))).shape == (2, 3)
    assert np.isfinite(theory.normal_pdf(0.0, var=1e-300))


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
    with pytest.raises(ValueError, match="overflows"):
        theory.within_row_moments([1e200, 1e200])
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
    with pytest.raises(ValueError, match="overflows"):
        theory.dot_product_variance_cov(1e200 * np.eye(2), 1e200 * np.eye(2))
