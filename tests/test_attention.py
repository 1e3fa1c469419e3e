"""The attention module against naive loops, finite differences and hand-computed numbers."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import raises_naming
from sdpa_helpers.attention import (
    attention_scores,
    causal_mask,
    entropy,
    layer_norm,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
)
from sdpa_helpers.sampling import make_rng


# -- softmax -----------------------------------------------------------------------------
def test_seed_numbers_from_the_notes():
    assert np.round(100 * softmax([4.0, 5.0]), 2).tolist() == [26.89, 73.11]
    assert np.round(100 * softmax([1.0, 10.0]), 2).tolist() == [0.01, 99.99]


def test_softmax_matches_definition_for_moderate_logits():
    x = make_rng(0).standard_normal((5, 7))
    naive = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    assert np.allclose(softmax(x), naive)
    assert np.allclose(softmax(x, axis=0), np.exp(x) / np.exp(x).sum(axis=0, keepdims=True))


def test_softmax_huge_logits_and_neg_inf():
    assert softmax([1e6, 0.0]).tolist() == [1.0, 0.0]
    assert np.allclose(softmax([1e6, 1e6]), [0.5, 0.5])
    assert np.allclose(softmax([-1e100, 1e100]), [0.0, 1.0])
    assert softmax([0.0, -np.inf, 1.0])[1] == 0.0
    assert np.allclose(softmax([0.0, -np.inf, 0.0]), [0.5, 0.0, 0.5])


def test_temperature_divides_logits():
    x = make_rng(1).standard_normal(6)
    for t in (0.1, 1.0, 8.0):
        assert np.allclose(softmax(x, temperature=t), softmax(x / t))


finite = st.floats(min_value=-1e100, max_value=1e100, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), elements=finite))
def test_softmax_properties(x):
    p = softmax(x)
    assert np.isfinite(p).all()
    assert (p >= 0).all()
    assert np.allclose(p.sum(axis=-1), 1.0)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
                  elements=st.floats(-1e3, 1e3)),
       st.floats(-1e3, 1e3))
def test_softmax_shift_invariance(x, c):
    assert np.allclose(softmax(x + c), softmax(x), atol=1e-12)


# -- Jacobian ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 5, 9])
def test_softmax_jacobian_matches_finite_differences(n):
    z = make_rng(n).standard_normal(n) * 2
    h = 1e-6
    fd = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        fd[:, j] = (softmax(z + e) - softmax(z - e)) / (2 * h)
    # central differences: truncation O(h^2) ~ 1e-12, rounding ~ eps / h ~ 1e-10
    assert np.allclose(softmax_jacobian(softmax(z)), fd, atol=1e-8)


def test_softmax_jacobian_batched_and_naive():
    p = softmax(make_rng(2).standard_normal((3, 4)))
    J = softmax_jacobian(p)
    assert J.shape == (3, 4, 4)
    for b in range(3):
        naive = [[p[b, i] * ((i == j) - p[b, j]) for j in range(4)] for i in range(4)]
        assert np.allclose(J[b], naive)
    assert np.allclose(J.sum(axis=-1), 0) and np.allclose(J, np.swapaxes(J, -1, -2))


# -- entropy -----------------------------------------------------------------------------
def test_entropy_values():
    assert entropy([1.0, 0.0, 0.0]) == 0.0
    assert entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    p = softmax(make_rng(3).standard_normal((4, 6)))
    naive = [-sum(v * math.log(v) for v in row) for row in p]
    assert np.allclose(entropy(p), naive)
    assert np.allclose(entropy(p.T, axis=0), naive)


# -- scores and attention ----------------------------------------------------------------
def naive_attention(Q, K, V, mask, scale):
    """Double loop over queries and keys: the reference."""
    n_q, n_k = Q.shape[0], K.shape[0]
    out = np.zeros((n_q, V.shape[1]))
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        logits = [scale * sum(Q[i, d] * K[j, d] for d in range(Q.shape[1])) if mask[i, j] else -math.inf
                  for j in range(n_k)]
        top = max(logits)
        e = [math.exp(l - top) for l in logits]
        for j in range(n_k):
            weights[i, j] = e[j] / sum(e)
            out[i] += weights[i, j] * V[j]
    return out, weights


def test_attention_scores_default_scale():
    rng = make_rng(4)
    Q, K = rng.standard_normal((3, 16)), rng.standard_normal((5, 16))
    assert np.allclose(attention_scores(Q, K), Q @ K.T / 4)
    assert np.allclose(attention_scores(Q, K, scale=1.0), Q @ K.T)


@pytest.mark.parametrize("use_mask", [False, True])
@pytest.mark.parametrize("scale", [None, 1.0, 0.3])
def test_sdpa_matches_naive_loop(use_mask, scale):
    rng = make_rng(5)
    Q, K, V = rng.standard_normal((4, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 3))
    mask = causal_mask(4, 6) if use_mask else None
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    ref_out, ref_w = naive_attention(Q, K, V, mask if use_mask else np.ones((4, 6), bool),
                                     8 ** -0.5 if scale is None else scale)
    assert np.allclose(out, ref_out) and np.allclose(w, ref_w)
    if use_mask:
        assert (w[~mask] == 0).all()


def test_sdpa_broadcasts_batch_dimensions():
    rng = make_rng(6)
    Q = rng.standard_normal((2, 3, 4, 8))  # (batch, heads, n_q, d_k)
    K = rng.standard_normal((3, 5, 8))  # shared over the batch
    V = rng.standard_normal((2, 1, 5, 2))  # shared over heads
    mask = rng.random((4, 5)) < 0.7
    mask[:, 0] = True
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 4, 2) and w.shape == (2, 3, 4, 5)
    for b in range(2):
        for h in range(3):
            ref_out, ref_w = naive_attention(Q[b, h], K[h], V[b, 0], mask, 8 ** -0.5)
            assert np.allclose(out[b, h], ref_out) and np.allclose(w[b, h], ref_w)


@st.composite
def attention_inputs(draw):
    n_q, n_k, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(4))
    el = st.floats(-50, 50)
    Q = draw(hnp.arrays(np.float64, (n_q, d_k), elements=el))
    K = draw(hnp.arrays(np.float64, (n_k, d_k), elements=el))
    V = draw(hnp.arrays(np.float64, (n_k, d_v), elements=el))
    mask = draw(hnp.arrays(np.bool_, (n_q, n_k)))
    mask[np.arange(n_q), draw(hnp.arrays(np.int64, (n_q,), elements=st.integers(0, n_k - 1)))] = True
    return Q, K, V, mask


@settings(max_examples=50, deadline=None)
@given(attention_inputs())
def test_attention_properties(inputs):
    Q, K, V, mask = inputs
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.isfinite(out).all()
    assert np.allclose(w.sum(axis=-1), 1.0)
    assert (w[~mask] == 0.0).all()
    # each output is a convex combination of the values
    assert (out <= V.max(axis=0) + 1e-9).all() and (out >= V.min(axis=0) - 1e-9).all()


def test_causal_mask():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    m = causal_mask(2, 4)
    assert m.shape == (2, 4) and m.tolist() == [[True, False, False, False], [True, True, False, False]]


def test_layer_norm():
    x = make_rng(7).normal(3.0, 5.0, (4, 32))
    y = layer_norm(x, eps=0.0)
    assert np.allclose(y.mean(axis=-1), 0) and np.allclose(y.var(axis=-1), 1)
    naive = [(row - row.mean()) / math.sqrt(row.var() + 1e-5) for row in x]
    assert np.allclose(layer_norm(x), naive)
    assert np.allclose(layer_norm(x.T, axis=0), np.array(naive).T)


# -- the course's range (sdpa_helpers._checks): right inside it, a ValueError naming the parameter outside --

def test_the_edges_of_the_range_give_the_right_numbers():
    rng = make_rng(9)
    Q, K = rng.uniform(-1, 1, (3, 8)), rng.uniform(-1, 1, (4, 8))
    for mq, mk, c in ((1e100, 1e100, 1.0), (1e-100, 1e100, 1e-100), (1e-100, 1e-100, 1e100), (1e100, 1.0, 1e100)):
        np.testing.assert_allclose(attention_scores(Q * mq, K * mk, scale=c), (Q @ K.T) * (mq * mk * c), rtol=1e-12)
    np.testing.assert_allclose(layer_norm([1e100, -1e100]), [1.0, -1.0], rtol=1e-12)
    np.testing.assert_allclose(layer_norm([1e-100, 2e-100], eps=0), [-1.0, 1.0], rtol=1e-12)
    assert softmax([-1e100, 1e100]).tolist() == [0.0, 1.0]
    assert softmax([-1e308, 1e308]).tolist() == [0.0, 1.0]  # the softmax is right at any finite logits
    out, _ = scaled_dot_product_attention(np.zeros((1, 4)), np.ones((2, 4)), [[1e100], [3e99]])
    assert out[0, 0] == pytest.approx(6.5e99, rel=1e-15)


@pytest.mark.parametrize("call,words", [
    (lambda: attention_scores(np.full((1, 2), 1e101), np.ones((1, 2))), ["Q", "1e100"]),
    (lambda: scaled_dot_product_attention(np.ones((1, 2)), np.ones((1, 2)), [[1e101]]), ["V", "1e100"]),
    (lambda: layer_norm([1e101, 0.0]), ["x", "1e100"]),
    (lambda: attention_scores(np.ones((1, 2)), np.ones((1, 2)), scale=1e101), ["scale", "1e100"]),
    (lambda: attention_scores(np.ones((1, 2**20 + 1)), np.ones((1, 2**20 + 1))), ["d_k", "2**20"]),
])
def test_outside_the_range_a_value_error_names_the_parameter(call, words):
    raises_naming(call, ValueError, words)


def test_layer_norm_moderate_inputs_unchanged():
    # The plain formula (x - mean) / sqrt(var + eps), bit for bit, where it cannot overflow.
    x = make_rng(8).normal(3.0, 5.0, (6, 16))
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    assert np.array_equal(layer_norm(x), (x - mean) / np.sqrt(var + 1e-5))


def test_attention_scale_uses_the_scale_vocabulary():
    rng = make_rng(10)
    Q, K = rng.standard_normal((3, 16)), rng.standard_normal((5, 16))
    assert np.array_equal(attention_scores(Q, K, scale="sqrt"), attention_scores(Q, K))
    assert np.array_equal(attention_scores(Q, K, scale="unscaled"), attention_scores(Q, K, scale=1.0))
    np.testing.assert_allclose(attention_scores(Q, K, scale="inv_d"), Q @ K.T / 16)
    with pytest.raises(ValueError, match="scale"):
        attention_scores(Q, K, scale="half")


# -- batches, masks, cached explorer weights (notebook 07) --------------------------------

@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("scale", [None, 1.0])
def test_attention_matches_naive_loop_with_batch(masked, scale):
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 2))
    mask = causal_mask(5) if masked else None
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    # the naive double loop above, one batch element at a time
    refs = [naive_attention(Q[b], K[b], V[b], mask if masked else np.ones((5, 5), bool),
                            1 / math.sqrt(4) if scale is None else scale) for b in range(3)]
    ref_out, ref_w = np.stack([r[0] for r in refs]), np.stack([r[1] for r in refs])
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


# -- bad input: a ValueError/TypeError whose message names the parameter ----------------------------

Q = np.ones((2, 4))
K = np.ones((3, 4))
V = np.ones((3, 2))

BAD_INPUT = [
    # (call, error type, words the message must contain)
    (lambda: softmax([1.0, 2.0], temperature=0), ValueError, ["temperature", "> 0"]),
    (lambda: softmax([1.0, 2.0], temperature=-1), ValueError, ["temperature"]),
    (lambda: softmax([1.0, np.nan]), ValueError, ["x", "NaN"]),
    (lambda: softmax([1.0, np.inf]), ValueError, ["x", "+inf"]),
    (lambda: softmax([-np.inf, -np.inf]), ValueError, ["-inf throughout"]),
    (lambda: softmax(3.0), ValueError, ["x", "shape"]),
    (lambda: softmax([1.0, 2.0], axis=2), ValueError, ["axis"]),
    (lambda: softmax(["a", "b"]), TypeError, ["x"]),
    (lambda: softmax([1 + 2j]), TypeError, ["x", "complex"]),
    (lambda: softmax_jacobian([0.5, 0.6]), ValueError, ["p", "sum to 1"]),
    (lambda: softmax_jacobian([1.5, -0.5]), ValueError, ["p", "[0, 1]"]),
    (lambda: entropy([0.2, 0.2]), ValueError, ["p", "sum to 1"]),
    (lambda: entropy([np.nan, 1.0]), ValueError, ["p", "NaN"]),
    (lambda: attention_scores(Q, np.ones((3, 5))), ValueError, ["Q has d_k=4", "K has d_k=5"]),
    (lambda: attention_scores(np.ones(4), K), ValueError, ["Q", "(..., n_q, d_k)"]),
    (lambda: attention_scores(Q, K, scale=0.0), ValueError, ["scale", "> 0"]),
    (lambda: attention_scores(Q, K, scale=np.nan), ValueError, ["scale"]),
    (lambda: attention_scores(np.ones((2, 2, 4)), np.ones((3, 3, 4))), ValueError, ["batch", "broadcast"]),
    (lambda: scaled_dot_product_attention(Q, K, np.ones((4, 2))), ValueError, ["K has n_k=3", "V has 4"]),
    (lambda: scaled_dot_product_attention(Q, np.ones((3, 5)), V), ValueError, ["d_k"]),
    (lambda: scaled_dot_product_attention(np.full((2, 4), np.nan), K, V), ValueError, ["Q", "NaN"]),
    (lambda: scaled_dot_product_attention(Q, np.full((3, 4), np.inf), V), ValueError, ["K", "infinite"]),
    (lambda: scaled_dot_product_attention(Q, K, np.full((3, 2), np.nan)), ValueError, ["V", "NaN"]),
    (lambda: scaled_dot_product_attention(Q, K, V, mask=np.ones((2, 3))), TypeError, ["mask", "boolean"]),
    (lambda: scaled_dot_product_attention(Q, K, V, mask=np.ones((2, 4), bool)), ValueError,
     ["mask", "broadcast"]),
    (lambda: scaled_dot_product_attention(Q, K, V, mask=np.array([[True, False, False], [False] * 3])),
     ValueError, ["mask", "row", "[1]", "no key"]),
    (lambda: causal_mask(0), ValueError, ["n_q"]),
    (lambda: causal_mask(3, -2), ValueError, ["n_k"]),
    (lambda: causal_mask(2.0), TypeError, ["n_q"]),
    (lambda: layer_norm([1.0, 2.0], eps=-1), ValueError, ["eps"]),
    (lambda: layer_norm([[1.0, 1.0]], eps=0.0), ValueError, ["constant", "eps"]),
    (lambda: layer_norm([np.inf, 1.0]), ValueError, ["x"]),
]


@pytest.mark.parametrize("call,error,words", BAD_INPUT, ids=[f"case{i}" for i in range(len(BAD_INPUT))])
def test_bad_input_raises_clear_error(call, error, words):
    raises_naming(call, error, words)


# --- layer_norm: exact for entries one ulp apart -----------------------------------------------

def _exact_layer_norm(values):
    """(x - mean) / sqrt(var) with the mean and variance in exact rationals (eps = 0)."""
    xs = [Fraction(v) for v in values]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return np.array([float(x - mean) for x in xs]) / np.sqrt(float(var))


@pytest.mark.parametrize("values", [
    [1.0, 1.0 + 2**-52],
    [1.0, 1.0 + 2**-52, 1.0 + 2**-51],
    [3.0, 3.0, 3.0 + 2**-51],
    [1e8, 1e8 + 2**-26, 1e8 - 2**-25, 1e8],
    [-7.5, -7.5 + 2**-49],
])
def test_layer_norm_is_exact_for_nearly_equal_entries(values):
    got = layer_norm(values, eps=0.0)
    np.testing.assert_allclose(got, _exact_layer_norm(values), rtol=1e-12, atol=1e-12)


def test_the_issues_layer_norm_case():
    np.testing.assert_allclose(layer_norm([1, 1 + 2**-52], eps=0), [-1.0, 1.0], rtol=1e-12)
