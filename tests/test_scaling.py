"""sdpa_helpers.scaling: the numbers of notebook 04, against independent references."""

import math

import numpy as np
import pytest

from conftest import mean_se
from sdpa_helpers import scaling as sc
from sdpa_helpers import theory
from sdpa_helpers.attention import entropy, softmax
from sdpa_helpers.sampling import make_rng, query_logits, sample_dot_products
from sdpa_helpers.scales import SCALINGS


def test_simulated_logit_stds_are_the_same_draws_scaled_three_ways():
    d_ks = [1, 16, 256]
    s = sc.simulated_logit_stds(d_ks, n=500, seed=3)
    for i, d in enumerate(d_ks):
        direct = query_logits(d, 1, 500, scale=1.0, rng=3 + d).std()  # the same draws, recomputed
        assert s["unscaled"][i] == pytest.approx(direct)
        assert s["sqrt"][i] == pytest.approx(direct / np.sqrt(d)) and s["inv_d"][i] == pytest.approx(direct / d)
        # differences of log2 are exact: 1/2 log2 d_k and log2 d_k
        assert np.log2(s["unscaled"][i] / s["sqrt"][i]) == pytest.approx(0.5 * np.log2(d), abs=1e-12)


@pytest.mark.parametrize("d_k", [1, 64, pytest.param(4096, marks=pytest.mark.slow)])
def test_simulated_logit_stds_agree_with_full_vectors(d_k):
    n = 20_000
    shortcut = sc.simulated_logit_stds([d_k], n=n, seed=1)["unscaled"][0] ** 2
    full = sample_dot_products(d_k, n, rng=2).var()  # every component drawn
    se = d_k * theory.sample_variance_moments(n, 1.0, theory.dot_product_excess_kurtosis(d_k)).std
    assert abs(shortcut - full) < 4 * np.sqrt(2) * se  # two independent estimates of d_k


def test_log_log_slopes_match_polyfit_and_the_theory():
    d_ks = list(sc.D_KS)
    s = sc.simulated_logit_stds(d_ks, n=2000)
    slopes = sc.log_log_slopes(d_ks, s, n=2000)
    for name, expected in zip(SCALINGS, (0.5, 0.0, -0.5)):
        slope, se = slopes[name]
        assert slope == pytest.approx(np.polyfit(np.log2(d_ks), np.log2(s[name]), 1)[0], abs=1e-12)
        assert abs(slope - expected) < 4 * se


def test_log_log_slope_standard_error_is_calibrated():
    d_ks, n = [1, 4, 16, 64], 300
    slopes = [sc.log_log_slopes(d_ks, sc.simulated_logit_stds(d_ks, n=n, seed=100 * s), n=n)["sqrt"][0]
              for s in range(60)]
    se = sc.log_log_slopes(d_ks, {"sqrt": np.ones(4)}, n=n)["sqrt"][1]
    ratio = np.std(slopes, ddof=1) / se
    assert abs(ratio - 1) < 4 / np.sqrt(2 * 59)  # the SD of 60 slopes is the SE, within 4 SE of an SD


def test_attention_by_d_k_is_the_softmax_of_the_same_logits():
    d_ks = [1, 64, 1024]
    stats = sc.attention_by_d_k(d_ks, n_keys=8, n_queries=300, seed=7)
    for i, d in enumerate(d_ks):
        z = query_logits(d, 8, 300, scale="unscaled", rng=7 + d)
        for name, e in SCALINGS.items():
            p = softmax(d**e * z)
            assert stats.entropy[name][i] == pytest.approx(entropy(p).mean())
            assert stats.max_weight[name][i] == pytest.approx(p.max(axis=1).mean())
        assert np.allclose(stats.inv_d_entropy_gap[d], np.log(8) - entropy(softmax(z / d)))


def test_attention_by_d_k_agrees_with_full_vectors():
    # the exact shortcut against drawing every component of q and of each key (different draws)
    d, n_keys, n_q = 64, 8, 4000
    g = make_rng(11)
    q, K = g.standard_normal((n_q, d)), g.standard_normal((n_q, n_keys, d))
    z = np.einsum("qd,qkd->qk", q, K)  # (n_q, d) x (n_q, n_keys, d) -> (n_q, n_keys)
    full = entropy(softmax(z / np.sqrt(d)))
    stats = sc.attention_by_d_k([d], n_keys=n_keys, n_queries=n_q, seed=12)
    m_full, se_full = mean_se(full)
    assert abs(stats.entropy["sqrt"][0] - m_full) < 4 * np.sqrt(2) * se_full


def test_entropy_gap_under_inv_d_matches_the_second_order_expansion():
    stats = sc.attention_by_d_k([4096], n_keys=16, n_queries=4000)
    gap, se = mean_se(stats.inv_d_entropy_gap[4096])
    assert abs(gap - 15 / (2 * 16 * 4096)) < 4 * se


def test_explorer_numbers_cached_exact_and_bounded():
    for d_k in (1, 16, 1024):
        rel_se = theory.sample_variance_moments(sc.N_STD_SAMPLES, 1.0, theory.dot_product_excess_kurtosis(d_k)).std / 2
        assert abs(sc.logit_std(d_k) / np.sqrt(d_k) - 1) < 4 * rel_se


@pytest.mark.parametrize("call,exc,name", [
    (lambda: sc.simulated_logit_stds([0]), ValueError, "d_ks"),
    (lambda: sc.simulated_logit_stds([4], n=0), ValueError, "n"),
    (lambda: sc.simulated_logit_stds([4], seed=-1), ValueError, "seed"),
    (lambda: sc.simulated_logit_stds([4], seed=1.5), TypeError, "seed"),
    (lambda: sc.simulated_logit_stds([]), ValueError, "d_ks"),
    (lambda: sc.log_log_slopes([1, 2], {"sqrt": [1.0]}, n=10), ValueError, "stds"),
    (lambda: sc.log_log_slopes([1, 2], {"sqrt": [1.0, -1.0]}, n=10), ValueError, "stds"),
    (lambda: sc.log_log_slopes([4, 4], {"sqrt": [1.0, 1.0]}, n=10), ValueError, "d_ks"),
    (lambda: sc.log_log_slopes([1, 2], [1.0, 1.0], n=10), TypeError, "stds"),
    (lambda: sc.attention_by_d_k([4], n_keys=0), ValueError, "n_keys"),
    (lambda: sc.logit_std(8192), ValueError, "d_k"),
    (lambda: sc.weight_bands(3), ValueError, "d_k"),
    (lambda: sc.band_polygon([0.1, 0.2], [0.3]), ValueError, "low and high"),
    (lambda: sc.band_polygon([0.1, np.nan], [0.3, 0.4]), ValueError, "low"),
    (lambda: sc.weight_bands(8192), ValueError, "d_k"),
    (lambda: sc.logit_std(-1), ValueError, "d_k"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_logit_std():
    for d_k in (1, 16, 1024):
        sd = sc.logit_std(d_k)
        # SE of a std: half the relative SE of the variance
        rel_se = theory.sample_variance_moments(sc.N_STD_SAMPLES, 1.0,
                                                theory.dot_product_excess_kurtosis(d_k)).std / 2
        assert abs(sd / math.sqrt(d_k) - 1) < 4 * rel_se


def test_weight_bands_are_percentiles_of_attention_by_d_k_queries():
    """Recomputed with a plain loop over the same queries: sort each query's logits, softmax, percentile."""
    for d_k in (4, 1024):
        bands = sc.weight_bands(d_k)
        z = query_logits(d_k, sc.N_KEYS, sc.N_BAND_QUERIES, scale=1.0, rng=d_k)  # attention_by_d_k(seed=0)'s draws
        for name, e in SCALINGS.items():
            w = np.array([softmax(d_k ** e * np.sort(row)[::-1]) for row in z])  # (queries, keys), largest first
            assert np.allclose(bands[name], np.percentile(w, sc.BAND_PERCENTILES, axis=0))
            assert np.all(bands[name][0] <= bands[name][1]) and np.all(bands[name][1] <= bands[name][2])
            # the mean of attention_by_d_k lies inside the band of the largest weight
            mean = sc.attention_by_d_k([d_k], n_keys=sc.N_KEYS, n_queries=sc.N_BAND_QUERIES).max_weight[name][0]
            assert bands[name][0, 0] <= mean <= bands[name][2, 0]


def test_d_k_grid_is_the_course_grid():
    from sdpa_helpers.scales import D_K_CHOICES
    assert sc.D_KS is D_K_CHOICES


def test_relative_variance_se_against_repeated_sample_variances():
    rng = np.random.default_rng(3)
    d_k, n, reps = 4, 200, 4000
    q, k = rng.standard_normal((2, reps, n, d_k))
    v = np.var((q * k).sum(-1), axis=1, ddof=1) / d_k  # (reps,): sample variance / true variance
    se = sc.relative_variance_se(d_k, n)
    # the spread of `reps` sample standard deviations is itself known to about 1/sqrt(2 reps)
    assert abs(v.std(ddof=1) / se - 1) < 4 / np.sqrt(2 * reps)
    with pytest.raises(ValueError, match="n"):
        sc.relative_variance_se(4, 1)


