"""Exercises of notebook 04 (why sqrt(d_k) and not d_k)."""

import numpy as np

from .. import theory
from ..attention import attention_scores
from . import function_checker, numeric_checker, register

register(
    "04.wrong_d",
    "A model has d_model = 768 and 12 heads, but its code divides each head's logits by sqrt(d_model) "
    "instead of sqrt(d_k). With unit-variance components, what is the standard deviation of one head's "
    "scaled logits (3 significant figures are enough)?",
    "Find the per-head d_k first. The unscaled logits have variance d_k; multiplying by c multiplies "
    "the variance by c^2.",
    # rtol 5e-3 accepts any correct 3-significant-figure rounding (0.289) and rejects the wrong d's.
    numeric_checker(theory.scaled_moments(theory.dot_product_moments(768 // 12), 768**-0.5).std, rtol=5e-3,
                    what="the standard deviation"),
)

register(
    "04.split_scale",
    "Some codebases multiply q and k each by the same factor c before the dot product, instead of "
    "scaling the logits. For d_k = 64, which c > 0 gives (c q) . (c k) = q . k / sqrt(d_k) "
    "(3 significant figures are enough)?",
    "Pull both factors c out of the dot product: what multiplies q . k then?",
    # rtol 5e-3 accepts any correct 3-significant-figure rounding (0.354) and rejects 1/8, 1/64.
    numeric_checker(64**-0.25, rtol=5e-3, what="c"),
)


def _cases():
    g = np.random.default_rng(404)
    return [
        (g.standard_normal((3, 4)), g.standard_normal((5, 4))),
        (g.standard_normal((1, 64)), g.standard_normal((7, 64))),
        (g.standard_normal((2, 3, 16)), g.standard_normal((2, 6, 16))),
    ]


register(
    "04.scaled_scores",
    "Write scaled_scores(Q, K): the logits Q K^T / sqrt(d_k) for Q of shape (..., n_q, d_k) and K of "
    "shape (..., n_k, d_k), with numpy only.",
    "d_k is the length of the last axis of Q. For stacked (batched) inputs, K.T reverses *all* axes: "
    "you need to swap only the last two.",
    function_checker(lambda Q, K: attention_scores(Q, K), _cases(), rtol=1e-9,
                     names=["2-D, d_k = 4", "one query, d_k = 64", "a batch of 2, d_k = 16"]),
)
