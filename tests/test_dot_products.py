"""sdpa_helpers.dot_products (notebook 01): the moments of cos(theta) between two random vectors.

The closed form Var(cos theta) = 1/d_k is compared with exact values (d_k = 1: cos = +-1) and
with Monte Carlo within 4 standard errors; the geometric route |q| |k| cos(theta) gives back
Var(q . k) = d_k.
"""

import numpy as np
import pytest

from conftest import mean_se, raises_naming
from sdpa_helpers.dot_products import cosine_excess_kurtosis, cosine_moments
from sdpa_helpers.theory import Moments


def test_cosine_moments_closed_form():
    assert cosine_moments(64) == Moments(0.0, 1 / 64)
    assert cosine_moments(1) == Moments(0.0, 1.0)  # d_k = 1: cos(theta) = +-1, so cos^2 = 1 exactly


def test_d_k_1_is_exact():
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal(100), rng.standard_normal(100)
    cos = q * k / (np.abs(q) * np.abs(k))  # 1-D vectors: the cosine is the sign of q k
    assert set(np.round(cos, 12)) <= {-1.0, 1.0}
    assert np.mean(cos**2) == cosine_moments(1).var


@pytest.mark.parametrize("d_k", [2, 16, 128])
def test_cosine_variance_is_one_over_d_k(d_k):
    rng = np.random.default_rng(18)
    q, k = rng.standard_normal((20_000, d_k)), rng.standard_normal((20_000, d_k))
    cos = np.einsum("nd,nd->n", q, k) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    mean, se_mean = mean_se(cos)
    m2, se = mean_se(cos**2)
    assert abs(mean - cosine_moments(d_k).mean) < 4 * se_mean
    assert abs(m2 - cosine_moments(d_k).var) < 4 * se


def test_lengths_times_cosine_give_variance_d_k():
    """E|q|^2 E|k|^2 Var(cos) = d_k * d_k / d_k = d_k: the geometric route agrees with the sum of products."""
    d_k = 32
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((20_000, d_k)), rng.standard_normal((20_000, d_k))
    m2, se = mean_se(np.einsum("nd,nd->n", q, k) ** 2)
    assert abs(m2 - d_k * d_k * cosine_moments(d_k).var) < 4 * se


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_d_k_names_the_parameter(bad, error):
    raises_naming(lambda: cosine_moments(bad), error, ["d_k"])


def test_std_with_se_matches_the_spread_of_many_repetitions():
    """The SE formula against the spread of the std over 2000 independent samples (heavy-tailed q·k, d_k = 2)."""
    from sdpa_helpers.dot_products import std_with_se

    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((2000, 500, 2)), rng.standard_normal((2000, 500, 2))
    dots = np.einsum("rnd,rnd->rn", q, k)  # (2000 repetitions, 500 dot products)
    stds = dots.std(axis=1, ddof=1)
    ses = np.array([std_with_se(row)[1] for row in dots[:200]])
    assert abs(np.median(ses) / stds.std(ddof=1) - 1) < 0.15  # the formula's SE is the real spread, within 15 %
    assert abs(stds.mean() - np.sqrt(2)) < 4 * stds.std(ddof=1) / np.sqrt(2000) + 0.01  # s is nearly unbiased


@pytest.mark.parametrize("bad, error", [([1.0], ValueError), ([2.0, 2.0], ValueError), ("ab", TypeError)])
def test_std_with_se_bad_input(bad, error):
    from sdpa_helpers.dot_products import std_with_se

    raises_naming(lambda: std_with_se(bad), error, ["samples"])


@pytest.mark.parametrize("mag", [1e-100, 1e-50, 1e-5, 1.0, 1e5, 1e50, 1e99])
def test_std_with_se_is_scale_safe(mag):
    """std_with_se(c x) = c std_with_se(x) at any magnitude (x**4 would overflow or underflow unscaled)."""
    from sdpa_helpers.dot_products import std_with_se

    x = np.random.default_rng(4).standard_normal(500)
    ref_std, ref_se = std_with_se(x)
    std, se = std_with_se(mag * x)
    assert np.isfinite([std, se]).all()
    assert abs(std / (mag * ref_std) - 1) < 1e-9 and abs(se / (mag * ref_se) - 1) < 1e-9


def test_cosine_excess_kurtosis_exact_at_d_k_1_and_2():
    """d_k = 1: cos = +-1 (excess kurtosis 1 - 3 = -2); d_k = 2: cos of a uniform angle, E[cos^4] = 3/8."""
    assert cosine_excess_kurtosis(1) == -2.0
    angles = (np.arange(4096) + 0.5) * 2 * np.pi / 4096  # midpoint rule: exact for a trigonometric polynomial
    c = np.cos(angles)
    assert np.isclose(np.mean(c**4) / np.mean(c**2) ** 2 - 3, cosine_excess_kurtosis(2), rtol=1e-12)


@pytest.mark.parametrize("d_k", [4, 16])
def test_cosine_excess_kurtosis_against_monte_carlo(d_k):
    """Monte Carlo E[cos^4] against 3 / (d_k (d_k + 2)) = (kurtosis + 3) / d_k^2, within 4 SE."""
    rng = np.random.default_rng(41)
    q, k = rng.standard_normal((100_000, d_k)), rng.standard_normal((100_000, d_k))
    cos = np.einsum("nd,nd->n", q, k) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    m4, se = mean_se(cos**4)
    assert abs(m4 - (cosine_excess_kurtosis(d_k) + 3) / d_k**2) < 4 * se
    assert abs(cosine_excess_kurtosis(d_k) - (m4 / np.mean(cos**2) ** 2 - 3)) < 0.05  # the sample kurtosis too


def test_cosine_excess_kurtosis_rejects_bad_d_k():
    raises_naming(lambda: cosine_excess_kurtosis(0), ValueError, ["d_k"])
