"""sdpa_helpers.assumptions (notebook 08), all its parts: initialisation (``init``), simulated
networks (``networks``), correlated q and k (``correlation``), QK-norm and soft-capping
(``qk_norm``); extreme magnitudes, clear errors, the scale and seed contracts, the cached init logits.

Statistical checks compare Monte Carlo with closed forms within 4 standard errors, the SE
computed from the same sample; everything is seeded.
"""

import math

import numpy as np
import pytest

from conftest import mean_se, raises_naming, var_se
from sdpa_helpers import assumptions as A
from sdpa_helpers.attention import layer_norm


@pytest.mark.parametrize("mag", [1e-100, 1e-50, 1e-5, 1.0, 1e5, 1e50, 1e99])
def test_qk_norm_scores_is_scale_safe(mag):
    """Cosines do not depend on the vectors' lengths: same answer at every magnitude a float holds."""
    Q = np.array([[3.0, 4.0], [1.0, 1.0]]) * mag
    K = np.array([[1.0, 0.0], [0.0, -2.0]]) * mag
    expected = np.array([[0.6, -0.8], [2**-0.5, -(2**-0.5)]])  # by hand: cos of the angles
    assert np.allclose(A.qk_norm_scores(Q, K), expected, rtol=1e-12, atol=0)


def test_qk_norm_scores_issue_cases():
    assert A.qk_norm_scores([[1e100, 0.0]], [[1e100, 0.0]]).tolist() == [[1.0]]
    assert np.isclose(A.qk_norm_scores([[1e-100, 1e-100]], [[1.0, 0.0]])[0, 0], 2**-0.5)
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
    with pytest.raises(ValueError, match="scheme"):
        A.init_scaled_logits("glorot", 256)


def test_softcap_bounds_and_small_logit_limit():
    s = np.array([-1e100, -60.0, -0.1, 0.0, 0.1, 60.0, 1e100])
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


# --- notebook 08: initialisation -------------------------------------------------------------

def test_init_weight_variances():
    assert A.init_weight_variance("lecun", 512) == 1 / 512
    assert A.init_weight_variance("xavier", 512, 64) == 2 / 576
    assert math.isclose(A.init_weight_variance("pytorch_default", 512), 1 / (3 * 512))
    assert A.init_weight_variance("he", 100) == 0.02
    assert A.init_weight_variance("gpt2", 5, 7) == 0.02**2


def test_query_variances_of_the_notebook():
    assert A.query_variance("lecun", 512) == 1.0
    assert math.isclose(A.query_variance("xavier", 512, 64), 2 * 512 / 576)  # ≈ 1.78
    assert math.isclose(A.query_variance("xavier", 512, 512), 1.0)
    assert math.isclose(A.query_variance("xavier", 512, 1536), 0.5)
    assert math.isclose(A.query_variance("pytorch_default", 512), 1 / 3)
    assert math.isclose(A.init_logit_moments("pytorch_default", 512, 64).var, 64 / 9)


def test_pytorch_default_bound_is_kaiming_uniform_with_a_sqrt5():
    fan_in = 300
    a = math.sqrt(5)
    bound = math.sqrt(2 / (1 + a**2)) * math.sqrt(3 / fan_in)
    assert math.isclose(bound, 1 / math.sqrt(fan_in))
    W = A.sample_weights("pytorch_default", fan_in, 50, rng=0)
    assert np.abs(W).max() <= bound
    assert math.isclose(A.init_weight_variance("pytorch_default", fan_in), bound**2 / 3)


@pytest.mark.parametrize("scheme", A.INITS)
def test_sample_weights_variance_matches_theory(scheme):
    W = A.sample_weights(scheme, 256, 512, size=4, rng=1)
    assert W.shape == (4, 512, 256)
    v, se = var_se(W.ravel(), ddof=0)
    assert abs(v - A.init_weight_variance(scheme, 256, 512)) < 4 * se
    assert abs(W.mean()) < 4 * W.std() / np.sqrt(W.size)


def test_sample_weights_rows_is_a_slice_in_distribution():
    W = A.sample_weights("xavier", 128, 1536, size=50, rows=16, rng=2)
    assert W.shape == (50, 16, 128)
    v, se = var_se(W.ravel(), ddof=0)
    assert abs(v - 2 / (128 + 1536)) < 4 * se


def test_tokens_are_layer_normed_and_raw_tokens_are_not():
    x = A.sample_tokens(20, 64, rng=0)
    np.testing.assert_allclose(x.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.sum(x**2, axis=1) / 64, 1, atol=1e-4)
    raw = A.sample_tokens(20, 64, layer_normed=False, rng=0)
    np.testing.assert_allclose(layer_norm(raw), x)
    assert np.abs(raw.mean(axis=1)).max() > 0.5


@pytest.mark.parametrize("scheme", ["lecun", "pytorch_default", "xavier"])
def test_query_variance_by_simulation(scheme):
    rng = np.random.default_rng(5)
    X = A.sample_tokens(100, 256, rng=rng)
    W = A.sample_weights(scheme, 256, 32, size=30, rng=rng)
    q = X @ np.swapaxes(W, -1, -2)  # (30, 100, 32)
    est, se = A.cluster_mean((q**2).reshape(30, -1))
    assert abs(est - A.query_variance(scheme, 256, 32)) < 4 * se


@pytest.mark.parametrize("same", [False, True])
def test_logit_variance_same_or_different_token(same):
    rng = np.random.default_rng(6)
    X, X2 = A.sample_tokens(150, 128, rng=rng), A.sample_tokens(150, 128, rng=rng)
    s = A.sample_projected_logits("pytorch_default", 32, X, None if same else X2, n_networks=60, rng=rng)
    est, se = A.cluster_mean(s**2)
    assert abs(est - 32 / 9) < 4 * se
    m, mse = A.cluster_mean(s)
    assert abs(m) < 4 * mse


def test_tied_weights_give_a_positive_mean():
    X = A.sample_tokens(100, 128, rng=7)
    s = A.sample_projected_logits("lecun", 16, X, None, n_networks=40, tied=True, rng=8)
    assert (s >= 0).all()
    m, se = A.cluster_mean(s)
    assert abs(m - 16) < 4 * se


def test_raw_tokens_follow_the_general_formula():
    rng = np.random.default_rng(9)
    X = A.sample_tokens(100, 64, layer_normed=False, rng=rng)
    s = A.sample_projected_logits("lecun", 16, X, None, n_networks=200, rng=rng)
    est, se = A.cluster_mean(s**2)
    theory = 16 * (1 / 64) ** 2 * np.mean(np.sum(X**2, axis=1) ** 2)
    assert abs(est - theory) < 4 * se


def test_projected_logits_vs_explicit_matrices():
    """The loop over networks equals an explicit computation with the same draws."""
    X = A.sample_tokens(5, 32, rng=0)
    s = A.sample_projected_logits("he", 4, X, None, n_networks=2, rng=11)
    g = np.random.default_rng(11)
    for n in range(2):
        W_Q = A.sample_weights("he", 32, 4, rng=g)
        W_K = A.sample_weights("he", 32, 4, rng=g)
        ref = [float((W_Q @ X[t]) @ (W_K @ X[t])) for t in range(5)]
        np.testing.assert_allclose(s[n], ref)


def test_cluster_mean_matches_hand_computation():
    vals = np.arange(12.0).reshape(4, 3)
    m, se = A.cluster_mean(vals)
    rows = vals.mean(axis=1)
    assert m == rows.mean() and math.isclose(se, rows.std(ddof=1) / 2)


# --- notebook 08: correlated q and k -----------------------------------------------------------

@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, -0.3])
def test_correlated_moments_by_simulation(rho):
    s = A.sample_correlated_dot_products(32, 40_000, rho, rng=12)
    theory = A.correlated_dot_product_moments(32, rho)
    m, se_m = mean_se(s)
    v, se_v = var_se(s, ddof=0)
    assert abs(m - theory.mean) < 4 * se_m
    assert abs(v - theory.var) < 4 * se_v
    assert math.isclose(theory.var, 32 * (1 + rho**2))


@pytest.mark.parametrize("dist", ["uniform", "rademacher", "laplace"])
def test_correlated_moments_with_other_kurtosis(dist):
    s = A.sample_correlated_dot_products(16, 40_000, 0.6, dist=dist, rng=13)
    theory = A.correlated_dot_product_moments(16, 0.6, kurtosis=A.KURTOSIS[dist])
    v, se_v = var_se(s, ddof=0)
    assert abs(v - theory.var) < 4 * se_v


def test_kurtosis_table_matches_samples():
    from sdpa_helpers.sampling import sample_components

    for dist, kappa in A.KURTOSIS.items():
        x = sample_components(400_000, dist=dist, rng=14)
        m4, se = mean_se(x**4)
        assert abs(m4 - kappa) <= 4 * se  # rademacher: x^4 = 1 exactly, se = 0


def test_correlated_pairs_have_unit_variance_and_correlation_rho():
    q, k = A.sample_correlated_qk(100_000, 3, 0.7, rng=15)
    prod, se = mean_se(q[:, 0] * k[:, 0])
    assert abs(prod - 0.7) < 4 * se
    v, se_v = var_se(k[:, 1], ddof=0)
    assert abs(v - 1) < 4 * se_v


def test_parts_recombine_exactly():
    qq, qz = A.correlated_dot_product_parts(8, 10, rng=16)
    q, k = A.sample_correlated_qk(10, 8, 0.3, rng=16)
    # same stream: the parts function draws q then z per chunk, as sample_correlated_qk does
    np.testing.assert_allclose(0.3 * qq + np.sqrt(1 - 0.09) * qz, np.einsum("nd,nd->n", q, k))


def test_parts_chunking_is_memory_bounded_and_consistent(monkeypatch):
    import tracemalloc

    from sdpa_helpers import sampling

    # Memory: 16 rows at d_k = 2**19 are 64 MiB of q and 64 MiB of z in one piece; in chunks of
    # CHUNK_ENTRIES (2 rows) q, z and the drawing temporaries stay under 4 chunks of 8 MiB.
    tracemalloc.start()
    qq, qz = A.correlated_dot_product_parts(2**19, 16, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert qq.shape == qz.shape == (16,)
    assert peak < 4 * sampling.CHUNK_ENTRIES * 8, f"peak {peak / 2**20:.1f} MiB"
    # Consistency: with 3 rows a chunk (ragged last chunk), every row equals q.q and q.z of the
    # same draws taken in one piece by a naive loop (q then z, chunk by chunk).
    monkeypatch.setattr(sampling, "CHUNK_ENTRIES", 3 * 4)
    qq, qz = A.correlated_dot_product_parts(4, 7, dist="laplace", rng=5)
    rng = np.random.default_rng(5)
    want_qq, want_qz = [], []
    for rows in (3, 3, 1):
        q = sampling.sample_components((rows, 4), dist="laplace", rng=rng)
        z = rng.standard_normal((rows, 4))
        want_qq += [sum(q[i, t] ** 2 for t in range(4)) for i in range(rows)]
        want_qz += [sum(q[i, t] * z[i, t] for t in range(4)) for i in range(rows)]
    np.testing.assert_allclose(qq, want_qq, rtol=1e-12)
    np.testing.assert_allclose(qz, want_qz, rtol=1e-12)


# --- notebook 08: QK-norm ----------------------------------------------------------------------

def test_qk_norm_is_gain_times_cosine_and_bounded():
    rng = np.random.default_rng(17)
    Q, K = rng.standard_normal((2, 4, 16)) * 100, rng.standard_normal((2, 5, 16)) * 1e-3
    s = A.qk_norm_scores(Q, K, gain=3.0)
    assert s.shape == (2, 4, 5) and np.abs(s).max() <= 3.0
    b, i, j = 1, 2, 3
    cos = Q[b, i] @ K[b, j] / (np.linalg.norm(Q[b, i]) * np.linalg.norm(K[b, j]))
    assert math.isclose(s[b, i, j], 3.0 * cos, rel_tol=1e-12)


def test_layer_norm_on_q_and_k_is_qk_norm_with_gain_sqrt_d_k():
    rng = np.random.default_rng(19)
    q, k = rng.standard_normal((3, 32)), rng.standard_normal((3, 32))
    lhs = np.einsum("nd,nd->n", layer_norm(q, eps=0), layer_norm(k, eps=0)) / np.sqrt(32)
    qc, kc = q - q.mean(1, keepdims=True), k - k.mean(1, keepdims=True)
    rhs = np.diagonal(A.qk_norm_scores(qc, kc, gain=np.sqrt(32)))
    np.testing.assert_allclose(lhs, rhs)


# --- bad input ----------------------------------------------------------------------------------

BAD = [
    (lambda: A.init_weight_variance("glorot", 4), ValueError, ["scheme", "'xavier'"]),
    (lambda: A.init_weight_variance("xavier", 4), ValueError, ["fan_out", "xavier"]),
    (lambda: A.init_weight_variance("lecun", 0), ValueError, ["fan_in"]),
    (lambda: A.init_weight_variance("lecun", 2.5), TypeError, ["fan_in"]),
    (lambda: A.sample_weights("lecun", 4, 4, rows=5), ValueError, ["rows"]),
    (lambda: A.sample_weights("lecun", 4, 4, size="3"), TypeError, ["size"]),
    (lambda: A.projection_fan_out("fused", 512, 64), ValueError, ["projection", "'fused_qkv'"]),
    (lambda: A.query_variance("lecun", 4, mean_square_x=-1), ValueError, ["mean_square_x"]),
    (lambda: A.sample_tokens(3, 1), ValueError, ["d_model", ">= 2"]),
    (lambda: A.sample_tokens(3, 8, layer_normed="yes"), TypeError, ["layer_normed"]),
    (lambda: A.sample_projected_logits("lecun", 4, np.ones((3, 8)), np.ones((2, 8))), ValueError, ["X2"]),
    (lambda: A.sample_projected_logits("lecun", 8, np.ones((3, 8)), fan_out=4), ValueError, ["fan_out", "d_k"]),
    (lambda: A.sample_projected_logits("lecun", 4, np.ones(8)), ValueError, ["X", "(n_tokens, d_model)"]),
    (lambda: A.sample_projected_logits("lecun", 4, np.ones((3, 8)), tied=1), TypeError, ["tied"]),
    (lambda: A.cluster_mean(np.ones((1, 5))), ValueError, ["values", "n_rows >= 2"]),
    (lambda: A.correlated_dot_product_moments(4, 1.5), ValueError, ["rho", "[-1, 1]"]),
    (lambda: A.correlated_dot_product_moments(4, 0.5, kurtosis=0.5), ValueError, ["kurtosis"]),
    (lambda: A.sample_correlated_qk(10, 4, 0.5, dist="cauchy"), ValueError, ["dist", "'normal'"]),
    (lambda: A.sample_correlated_dot_products(0, 10, 0.5), ValueError, ["d_k"]),
    (lambda: A.qk_norm_scores(np.zeros((1, 3)), np.ones((1, 3))), ValueError, ["zero"]),
    (lambda: A.qk_norm_scores(np.ones((1, 3)), np.ones((1, 4))), ValueError, ["Q has d_k=3", "K has d_k=4"]),
    (lambda: A.qk_norm_scores(np.ones((1, 3)), np.ones((1, 3)), gain=0), ValueError, ["gain"]),
]


@pytest.mark.parametrize("call, error, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_names_the_parameter(call, error, words):
    raises_naming(call, error, words)

def test_init_explorer_simulation_matches_theory_for_every_choice():
    from sdpa_helpers.assumptions import init_scaled_logits

    for scheme in A.INITS:
        for projection in A.PROJECTIONS:
            s = init_scaled_logits(scheme, 256, projection)
            theory = A.init_logit_moments(scheme, 256, 64, fan_out=A.projection_fan_out(projection, 256, 64),
                                          scale=1 / 8)
            est, se = A.cluster_mean(s**2)
            assert abs(est - theory.var) < 4 * se



# --- the scale contract: every scale= goes through scales.scale_factor ----------------------------

SCALED = {
    "init_logit_moments": lambda scale: A.init_logit_moments("lecun", 256, 64, scale=scale).var,
    "correlated_dot_product_moments": lambda scale: A.correlated_dot_product_moments(64, 0.5, scale=scale).mean,
    "sample_correlated_dot_products": lambda scale: A.sample_correlated_dot_products(64, 4, 0.5, scale=scale,
                                                                                      rng=3)[0],
}


@pytest.mark.parametrize("name", sorted(SCALED))
@pytest.mark.parametrize("scale", [None, "unscaled", "sqrt", "inv_d", 0.25])
def test_scale_is_resolved_by_scale_factor(name, scale):
    """A named or None scale gives the same number as its factor passed as a float."""
    from sdpa_helpers.scales import scale_factor

    assert SCALED[name](scale) == SCALED[name](scale_factor(scale, 64))


def test_scale_factor_values_against_hand_computation():
    """Var(q . k) scales like c^2 and the mean like c: LeCun gives d_k Var(q_i)^2 = 64 unscaled."""
    assert A.init_logit_moments("lecun", 256, 64, scale="sqrt") == A.init_logit_moments("lecun", 256, 64, scale=1 / 8)
    assert A.init_logit_moments("lecun", 256, 64, scale="sqrt").var == 1.0
    assert A.correlated_dot_product_moments(64, 0.5, scale="inv_d").mean == 0.5  # rho, muP's limit
    assert A.correlated_dot_product_moments(64, 0.5).mean == 32.0  # default: unscaled


@pytest.mark.parametrize("name", sorted(SCALED))
@pytest.mark.parametrize("scale, error", [(-1.0, ValueError), (0.0, ValueError), ("root", ValueError),
                                          (True, TypeError), ([1.0], TypeError)])
def test_bad_scale_names_the_parameter(name, scale, error):
    """scale=-1.0 used to return Moments(-32, 80) silently; now every bad scale raises naming it."""
    raises_naming(lambda: SCALED[name](scale), error, ["scale"])


@pytest.mark.parametrize("call", [lambda seed: A.init_scaled_logits("lecun", 256, seed=seed),
                                  lambda seed: A.init_scaled_logits_exact("lecun", 256, seed=seed)])
def test_seed_check_is_the_shared_one(call):
    """Seeds go through _checks.seed: the wrong type is a TypeError, a negative int a ValueError."""
    raises_naming(lambda: call(-1), ValueError, ["seed"])
    raises_naming(lambda: call(1.5), TypeError, ["seed"])
    raises_naming(lambda: call(True), TypeError, ["seed"])
