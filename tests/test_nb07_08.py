"""Tests for notebooks 07 and 08: sdpa_helpers.assumptions, their plots, explorers and exercises.

Statistical checks compare Monte Carlo with closed forms within 4 standard errors, the SE
computed from the same sample; everything is seeded.
"""

import math

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sdpa_helpers import assumptions as A
from sdpa_helpers.attention import causal_mask, layer_norm, scaled_dot_product_attention, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import assumptions as AP
from sdpa_helpers.plots import attention_maps as MP


def mean_se(x):
    x = np.asarray(x, dtype=float)
    return x.mean(), x.std(ddof=1) / np.sqrt(x.size)


def var_se(x):
    """Sample variance and its standard error sqrt((m4 - s^4) / n)."""
    x = np.asarray(x, dtype=float)
    v = x.var()
    return v, np.sqrt((np.mean((x - x.mean()) ** 4) - v**2) / x.size)


# --- notebook 07: attention against a naive loop ---------------------------------------------

def naive_attention(Q, K, V, mask=None, scale=None):
    """Loops over batch, queries, keys: an independent reference for the vectorised version."""
    B, n_q, d_k = Q.shape
    n_k, d_v = V.shape[1], V.shape[2]
    c = 1 / math.sqrt(d_k) if scale is None else scale
    out = np.zeros((B, n_q, d_v))
    weights = np.zeros((B, n_q, n_k))
    for b in range(B):
        for i in range(n_q):
            s = [c * sum(Q[b, i, t] * K[b, j, t] for t in range(d_k)) if mask is None or mask[i, j] else -math.inf
                 for j in range(n_k)]
            top = max(s)
            e = [math.exp(v - top) for v in s]
            for j in range(n_k):
                weights[b, i, j] = e[j] / sum(e)
            for c_ in range(d_v):
                out[b, i, c_] = sum(weights[b, i, j] * V[b, j, c_] for j in range(n_k))
    return out, weights


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("scale", [None, 1.0])
def test_attention_matches_naive_loop_with_batch(masked, scale):
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 2))
    mask = causal_mask(5) if masked else None
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    ref_out, ref_w = naive_attention(Q, K, V, mask=mask, scale=scale)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-14)
    if masked:
        assert (w[:, ~mask] == 0.0).all()


def test_fully_masked_row_is_a_clear_error():
    mask = causal_mask(3)
    mask[1] = False
    with pytest.raises(ValueError, match="no key"):
        scaled_dot_product_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 1)), mask=mask)


def test_explorer_weights_are_cached_and_causal():
    from sdpa_helpers.attention import random_attention_weights as attention_weights

    u, s = attention_weights(16, 8, 1, True)
    assert attention_weights(16, 8, 1, True)[0] is u  # cached
    assert (u[~causal_mask(8)] == 0).all() and (s[~causal_mask(8)] == 0).all()
    np.testing.assert_allclose(u.sum(axis=1), 1.0)
    # against the formula, from the same draws: softmax(QK^T) and softmax(QK^T / sqrt(d_k)), no mask
    Q, K = np.random.default_rng(3).standard_normal((2, 6, 16))
    u, s = attention_weights(16, 6, 3, False)
    for c, w in ((1.0, u), (16**-0.5, s)):
        z = c * Q @ K.T
        e = np.exp(z - z.max(axis=1, keepdims=True))
        np.testing.assert_allclose(w, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    assert not u.flags.writeable
    with pytest.raises(ValueError, match="seed"):
        attention_weights(16, 6, -1, False)
    for bad_seed in (1.5, "0", True):
        with pytest.raises(TypeError, match="seed"):
            attention_weights(16, 6, bad_seed, False)


def test_unscaled_rows_go_one_hot_scaled_rows_do_not():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((50, 12, 2048)), rng.standard_normal((50, 12, 2048))
    V = np.zeros((50, 12, 1))
    unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)[1].max(axis=-1).mean()
    scaled = scaled_dot_product_attention(Q, K, V)[1].max(axis=-1).mean()
    assert unscaled > 0.95 and scaled < 0.5


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
    v, se = var_se(W.ravel())
    assert abs(v - A.init_weight_variance(scheme, 256, 512)) < 4 * se
    assert abs(W.mean()) < 4 * W.std() / np.sqrt(W.size)


def test_sample_weights_rows_is_a_slice_in_distribution():
    W = A.sample_weights("xavier", 128, 1536, size=50, rows=16, rng=2)
    assert W.shape == (50, 16, 128)
    v, se = var_se(W.ravel())
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
    v, se_v = var_se(s)
    assert abs(m - theory.mean) < 4 * se_m
    assert abs(v - theory.var) < 4 * se_v
    assert math.isclose(theory.var, 32 * (1 + rho**2))


@pytest.mark.parametrize("dist", ["uniform", "rademacher", "laplace"])
def test_correlated_moments_with_other_kurtosis(dist):
    s = A.sample_correlated_dot_products(16, 40_000, 0.6, dist=dist, rng=13)
    theory = A.correlated_dot_product_moments(16, 0.6, kurtosis=A.KURTOSIS[dist])
    v, se_v = var_se(s)
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
    v, se_v = var_se(k[:, 1])
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


@pytest.mark.parametrize("d_k", [2, 16, 128])
def test_cosine_variance_is_one_over_d_k(d_k):
    rng = np.random.default_rng(18)
    q, k = rng.standard_normal((20_000, d_k)), rng.standard_normal((20_000, d_k))
    cos = A.qk_norm_scores(q[:, None, :], k[:, None, :])[:, 0, 0]
    m2, se = mean_se(cos**2)
    assert abs(m2 - A.cosine_moments(d_k).var) < 4 * se


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
    (lambda: A.cosine_moments(-1), ValueError, ["d_k"]),
]


@pytest.mark.parametrize("call, error, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


# --- plots --------------------------------------------------------------------------------------

def labelled(ax):
    return ax.get_xlabel() and ax.get_ylabel()


def test_attention_map_plots_are_labelled():
    w = softmax(np.random.default_rng(0).standard_normal((6, 6)))
    ax = MP.weights_heatmap(w)
    assert isinstance(ax, Axes) and labelled(ax) and ax.images[-1].get_clim() == (0.0, 1.0)
    assert ax.images[-1].get_cmap().name == "cividis"
    fig = MP.weights_small_multiples({4: (w, w), 64: (w, w), 1024: (w, w)})
    assert isinstance(fig, Figure) and all(labelled(a) for a in fig.axes[:6])
    fig = MP.mask_and_weights(causal_mask(6), w * causal_mask(6))
    assert all(labelled(a) for a in fig.axes[:2])
    ax = MP.head_scale_histograms(np.random.default_rng(1).normal(0, 8, 500), 64, 512)
    assert labelled(ax) and len(ax.get_legend().get_texts()) == 3


def test_assumption_plots_are_labelled():
    rng = np.random.default_rng(2)
    ax = AP.scaled_logit_histogram(rng.standard_normal(200), 1.0)
    assert isinstance(ax, Axes) and labelled(ax)
    fig = AP.init_small_multiples({"a": (rng.standard_normal(50), 1.0), "b": (rng.standard_normal(50), 0.5)})
    assert isinstance(fig, Figure) and labelled(fig.axes[0])
    ax = AP.init_variance_vs_d_model([64, 128, 256], {"x": [1, 1, 1]}, {"x": ([1, 1, 1], [0.1, 0.1, 0.1])})
    assert labelled(ax) and ax.get_yscale() == "log"
    fig = AP.correlated_small_multiples({4: (rng.standard_normal(50) + 1, rng.standard_normal(50))}, 0.5)
    assert all(labelled(a) for a in fig.axes)
    ax = AP.match_weight_vs_d_k([1, 4], [0.2, 0.3], [0.2, 0.2], limit=0.2)
    assert labelled(ax)
    fig = AP.cosine_small_multiples({4: rng.standard_normal(50)}, {4: rng.standard_normal(50)})
    assert labelled(fig.axes[0])


def test_plots_use_the_one_normal_pdf():
    from sdpa_helpers import theory
    assert not hasattr(AP, "normal_pdf") or AP.normal_pdf is theory.normal_pdf


# --- explorers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["AttentionMapExplorer", "InitExplorer", "CorrelationExplorer"])
def test_explorers_update_in_place(name):
    from sdpa_helpers.widgets import assumptions as WA
    from sdpa_helpers.widgets import attention_maps as WM

    cls = getattr(WA, name, None) or getattr(WM, name)
    e = cls()
    first = e.image.value
    n_children = len(e.widget.children)
    values = e.sweep_values()
    e.controls[e.main].value = values[-1] if e.controls[e.main].value != values[-1] else values[0]
    assert e.image.value != first and len(e.widget.children) == n_children and e.readout.value
    for c in e.controls.values():
        assert c.description


def test_init_explorer_simulation_matches_theory_for_every_choice():
    from sdpa_helpers.assumptions import init_scaled_logits

    for scheme in A.INITS:
        for projection in A.PROJECTIONS:
            s = init_scaled_logits(scheme, 256, projection)
            theory = A.init_logit_moments(scheme, 256, 64, fan_out=A.projection_fan_out(projection, 256, 64),
                                          scale=1 / 8)
            est, se = A.cluster_mean(s**2)
            assert abs(est - theory.var) < 4 * se


# --- exercises ------------------------------------------------------------------------------------

def test_exercises_07():
    assert check("07.bert_large_d_k", 64, quiet=True) and not check("07.bert_large_d_k", 48, quiet=True)
    assert check("07.causal_zeros", 45, quiet=True) and not check("07.causal_zeros", 55, quiet=True)

    def good(logits, mask):
        z = np.where(mask, logits, -np.inf)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def unstable(logits, mask):
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(logits) * mask
            return e / e.sum(axis=-1, keepdims=True)

    def ignores_mask(logits, mask):
        return softmax(logits)

    assert check("07.masked_softmax", good, quiet=True)
    assert not check("07.masked_softmax", unstable, quiet=True)
    assert not check("07.masked_softmax", ignores_mask, quiet=True)


def test_exercises_08():
    assert check("08.xavier_head_var", 1536 / 832, quiet=True) and not check("08.xavier_head_var", 1.0, quiet=True)
    assert check("08.default_logit_var", 128 / 9, quiet=True)
    assert not check("08.default_logit_var", 128 / 3, quiet=True)
    assert check("08.rho_mean", 8.0, quiet=True) and not check("08.rho_mean", 256, quiet=True)
    assert check("08.cosine_logit", lambda q, k, g: g * np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k)),
                 quiet=True)
    assert not check("08.cosine_logit", lambda q, k, g: g * np.dot(q, k), quiet=True)
    assert not check("08.cosine_logit", lambda q, k, g: np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k)),
                     quiet=True)


def test_init_figures_keep_the_reserved_scaling_colours_free():
    """Every curve of notebook 08's init figures is a *scaled* logit: no 'unscaled' or '1/d_k' look."""
    from matplotlib.colors import to_hex

    from sdpa_helpers import plots

    reserved = {to_hex(plots.UNSCALED["color"]), to_hex(plots.INV_D["color"])}
    theory = {label: [1.0, 1.0, 1.0] for label in "abcde"}
    ax = AP.init_variance_vs_d_model([64, 128, 256], theory)
    assert not {to_hex(line.get_color()) for line in ax.get_lines()} & reserved
    rng = np.random.default_rng(3)
    fig = AP.init_small_multiples({k: (rng.standard_normal(50), 1.0) for k in "abcde"})
    assert len(fig.axes) == 6 and not fig.axes[5].axison and fig.axes[5].get_legend() is not None
    assert all(labelled(a) for a in (fig.axes[0], fig.axes[3]))
