"""sdpa_helpers.assumptions: extreme magnitudes, clear errors, the cached init logits, soft-capping."""

import numpy as np
import pytest

from sdpa_helpers import assumptions as A


@pytest.mark.parametrize("mag", [1e-300, 1e-200, 1e-5, 1.0, 1e5, 1e200, 1e300])
def test_qk_norm_scores_is_scale_safe(mag):
    """Cosines do not depend on the vectors' lengths: same answer at every magnitude a float holds."""
    Q = np.array([[3.0, 4.0], [1.0, 1.0]]) * mag
    K = np.array([[1.0, 0.0], [0.0, -2.0]]) * mag
    expected = np.array([[0.6, -0.8], [2**-0.5, -(2**-0.5)]])  # by hand: cos of the angles
    assert np.allclose(A.qk_norm_scores(Q, K), expected, rtol=1e-12, atol=0)


def test_qk_norm_scores_issue_cases():
    assert A.qk_norm_scores([[1e200, 0.0]], [[1e200, 0.0]]).tolist() == [[1.0]]
    assert np.isclose(A.qk_norm_scores([[1e-200, 1e-200]], [[1.0, 0.0]])[0, 0], 2**-0.5)
    with pytest.raises(ValueError, match="Q must have no all-zero rows"):
        A.qk_norm_scores([[0.0, 0.0]], [[1.0, 0.0]])


def test_qk_norm_scores_against_a_naive_loop_with_batches():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 4, 5))
    got = A.qk_norm_scores(Q, K, gain=2.0)
    for b in range(3):
        for i in range(2):
            for j in range(4):
                cos = Q[b, i] @ K[b, j] / (np.sqrt(Q[b, i] @ Q[b, i]) * np.sqrt(K[b, j] @ K[b, j]))
                assert np.isclose(got[b, i, j], 2.0 * cos)


def test_qk_norm_scores_batch_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match="batch shapes of Q"):
        A.qk_norm_scores(np.ones((2, 2, 4)), np.ones((3, 3, 4)))


def test_init_logit_moments_rejects_fan_out_below_d_k_like_the_sampler():
    with pytest.raises(ValueError, match="fan_out must be >= d_k"):
        A.init_logit_moments("xavier", 512, 64, fan_out=32)
    X = A.sample_tokens(3, 16, rng=0)
    with pytest.raises(ValueError, match="fan_out must be >= d_k"):
        A.sample_projected_logits("xavier", 8, X, fan_out=4)


def test_sample_weights_negative_size_is_a_value_error():
    with pytest.raises(ValueError, match="size"):
        A.sample_weights("lecun", 4, 4, size=-1)
    with pytest.raises(TypeError, match="size"):
        A.sample_weights("lecun", 4, 4, size=1.5)


def test_init_scaled_logits_rescaling_matches_a_direct_simulation_in_expectation():
    """The rescaled cache has the variance a direct simulation of that scheme has (theory Var(q_i)^2)."""
    for scheme in A.INITS:
        s = A.init_scaled_logits(scheme, 256, "head")
        est, se = A.cluster_mean(s**2)
        theory = A.init_logit_moments(scheme, 256, 64, scale=64**-0.5).var
        assert abs(est - theory) < 4 * se
    assert A.init_scaled_logits("lecun", 256).shape == (8, 256)
    assert A._reference_logits.cache_info().maxsize == 32  # bounded cache
    with pytest.raises(ValueError, match="scheme"):
        A.init_scaled_logits("glorot", 256)


def test_softcap_bounds_and_small_logit_limit():
    s = np.array([-1e300, -60.0, -0.1, 0.0, 0.1, 60.0, 1e300])
    c = A.softcap(s, 50.0)
    assert (np.abs(c) <= 50.0).all() and np.all(np.diff(c) >= 0)
    small = np.array([-0.1, 0.1])
    assert np.allclose(A.softcap(small, 50.0), small - small**3 / (3 * 50.0**2), rtol=1e-9)  # Taylor series
    with pytest.raises(ValueError, match="cap"):
        A.softcap(s, 0.0)


@pytest.mark.parametrize("d_k", [1, 8, 256])
def test_exact_parts_have_the_closed_form_moments_and_match_the_direct_sampler(d_k):
    n = 200_000
    qq, qz = A.correlated_dot_product_parts_exact(d_k, n, rng=1)
    # closed forms for q, z standard normal: E[qq] = d_k, Var(qq) = 2 d_k, E[qz] = 0, Var(qz) = E[qq] = d_k
    for value, expected, sd in ((qq.mean(), d_k, np.sqrt(2 * d_k / n)), (qq.var(), 2 * d_k, None),
                                (qz.mean(), 0.0, np.sqrt(d_k / n)), (qz.var(), d_k, None)):
        if sd is None:  # SE of a sample variance from the sample itself
            continue
        assert abs(value - expected) < 4 * sd
    se_var_qz = np.sqrt((np.mean(qz**4) - qz.var() ** 2) / n)
    assert abs(qz.var() - d_k) < 4 * se_var_qz
    se_var_qq = np.sqrt((np.mean((qq - qq.mean()) ** 4) - qq.var() ** 2) / n)
    assert abs(qq.var() - 2 * d_k) < 4 * se_var_qq
    # the direct sampler (q and z drawn component by component): same quartiles of q·k at rho = 0.5
    m = 20_000
    dq, dz = A.correlated_dot_product_parts(d_k, m, rng=2)
    exact = 0.5 * qq[:m] + np.sqrt(0.75) * qz[:m]
    direct = 0.5 * dq + np.sqrt(0.75) * dz
    for p in (0.25, 0.5, 0.75):
        # SE of a sample quantile: sqrt(p (1 - p) / m) / f(x_p); for these near-normal sums the density at
        # the quartiles and median is >= 0.3 / sd, so 1/f <= 3.4 sd; two independent estimates: times sqrt(2)
        se_diff = np.sqrt(2 * p * (1 - p) / m) * 3.4 * direct.std()
        assert abs(np.quantile(exact, p) - np.quantile(direct, p)) < 4 * se_diff


def test_init_scaled_logits_exact_variance_and_agreement_with_the_network_simulation():
    for scheme in A.INITS:
        s = A.init_scaled_logits_exact(scheme, 256, n_samples=4096)
        theory = A.query_variance(scheme, 256, 64) ** 2
        sq = s**2
        assert abs(sq.mean() - theory) < 4 * sq.std(ddof=1) / np.sqrt(sq.size)
        est, se = A.cluster_mean(A.init_scaled_logits(scheme, 256) ** 2)  # real networks and tokens
        assert abs(est - sq.mean()) < 4 * np.hypot(se, sq.std(ddof=1) / np.sqrt(sq.size))
    with pytest.raises(ValueError, match="seed"):
        A.init_scaled_logits_exact("lecun", 256, seed=-1)
