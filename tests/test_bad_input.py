"""Every bad input gets a ValueError/TypeError whose message names the parameter."""

import numpy as np
import pytest

from sdpa_helpers import theory
from sdpa_helpers.attention import (
    attention_scores,
    causal_mask,
    entropy,
    layer_norm,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
)
from sdpa_helpers.sampling import make_rng, sample_components, sample_dot_products

Q = np.ones((2, 4))
K = np.ones((3, 4))
V = np.ones((3, 2))

CASES = [
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
    (lambda: sample_dot_products(0, 10), ValueError, ["d_k", "positive integer"]),
    (lambda: sample_dot_products(4, -1), ValueError, ["n_samples", "positive integer"]),
    (lambda: sample_dot_products(4, 10.0), TypeError, ["n_samples"]),
    (lambda: sample_dot_products(4, 10, dist="cauchy"), ValueError,
     ["dist", "'normal'", "'uniform'", "'rademacher'", "'laplace'", "cauchy"]),
    (lambda: sample_dot_products(4, 10, var_q=-1), ValueError, ["var_q"]),
    (lambda: sample_dot_products(4, 10, rng=-1), ValueError, ["rng"]),
    (lambda: sample_dot_products(4, 10, rng="seed"), TypeError, ["rng"]),
    (lambda: sample_components((2, -1)), ValueError, ["shape"]),
    (lambda: sample_components("3"), TypeError, ["shape"]),
    (lambda: sample_components(3, dist="gauss"), ValueError, ["dist", "'normal'"]),
    (lambda: sample_components(3, var=-1.0), ValueError, ["var"]),
    (lambda: make_rng(1.5), TypeError, ["rng"]),
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


@pytest.mark.parametrize("call,error,words", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_bad_input_raises_clear_error(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
