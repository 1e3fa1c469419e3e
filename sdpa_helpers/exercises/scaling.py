"""Exercises of notebook 04 (why sqrt(d_k) and not d_k)."""

import numpy as np

from .. import theory
from ..attention import attention_scores
from ..scales import D_K_CHOICES
from . import Slip, choice_checker, function_checker, numeric_checker, register


def _d_k_where(spread, target):
    """The d_k of the course's grid (1 ... 4096) at which ``spread(d_k)`` equals ``target``."""
    return float(next(d for d in D_K_CHOICES if np.isclose(spread(d), target, rtol=1e-12)))


def _logits(d_k, c):
    """Moments of the logits c q·k at d_k, unit-variance components."""
    return theory.scaled_moments(theory.dot_product_moments(d_k), c)


register(
    "04.wrong_d",
    "A model has d_model = 768 and 12 heads of dimension 64, but its code divides each head's logits by "
    "sqrt(d_model) instead of sqrt(d_k). With unit-variance components, what is the standard deviation of one "
    "head's scaled logits (three significant figures)?",
    "The unscaled logits of one head have variance d_k; multiplying by c multiplies the variance by c^2.",
    numeric_checker(_logits(64, 768**-0.5).std, what="the standard deviation",
                    slips=[Slip(_logits(64, 768**-0.5).var,
                                "the variance of the scaled logits, not their standard deviation"),
                           Slip(_logits(64, 64**-0.5).std,
                                "the spread with the right scale 1/sqrt(d_k); this code divides by sqrt(d_model)"),
                           Slip(64**-0.5, "the factor 1/sqrt(d_k) alone; this code divides by sqrt(d_model), and "
                                          "the factor multiplies logits whose own standard deviation is not 1"),
                           Slip(768**-0.5, "the factor 1/sqrt(768) alone; it multiplies logits whose own "
                                           "standard deviation is not 1"),
                           Slip(_logits(64, 1 / 768).std,
                                "what dividing by d_model gives: you divided by d_model, not √d_model"),
                           Slip(_logits(64, 512**-0.5).std,
                                "section 5's value for the original Transformer's d_model = 512; "
                                "this model has d_model = 768")]),
)

register(
    "04.split_scale",
    "Some codebases multiply q and k each by the same factor c before the dot product, instead of "
    "scaling the logits. For d_k = 64, which c > 0 gives (c q) . (c k) = q . k / sqrt(d_k) "
    "(three significant figures)?",
    "Pull both factors c out of the dot product: what multiplies q . k then?",
    numeric_checker(64**-0.25, what="c",
                    slips=[Slip(64**-0.5, "1/sqrt(d_k) on each of q and k: (c q) . (c k) = c^2 q . k, so you divided "
                                          "by d_k, not √d_k"),
                           Slip(64**0.25, "d_k^(1/4): you multiplied q and k by it; the logits must shrink")]),
)

register(
    "04.inv_d_spread",
    "With the scale 1/d_k and unit-variance components, the logits' standard deviation is 1 at d_k = 1. "
    "At which d_k has it fallen to 1/16 (an integer)?",
    "Section 2's table gives the standard deviation of the logits for each scale as a power of d_k.",
    numeric_checker(_d_k_where(lambda d: _logits(d, 1 / d).std, 1 / 16), what="d_k",
                    slips=[Slip(_d_k_where(lambda d: _logits(d, 1 / d).var, 1 / 16),
                                "where 1/d_k itself is 1/16: that is the variance of the scaled logits; their "
                                "standard deviation is its square root, 1/sqrt(d_k)")]),
)

register(
    "04.what_sets_scale",
    "At initialisation, with independent mean-0 components, which of these changes the factor c that "
    "gives unit-variance logits? (a) d_v, the length of the value vectors; (b) the number of keys; "
    "(c) the variance of the components of q and k; (d) d_model, with d_k fixed. Answer with a letter.",
    "Var(c q . k) depends only on what enters the dot product q . k.",
    choice_checker("c", {"a": "d_v: the values never enter q . k",
                         "b": "the number of keys: each logit involves one key",
                         "c": "the variance of the components",
                         "d": "d_model: only the per-head d_k enters q . k"}),
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
                     names=["2-D, d_k = 4", "one query, d_k = 64", "a batch of 2, d_k = 16"],
                     slips=[(lambda Q, K: Q @ np.swapaxes(K, -1, -2) / Q.shape[-1],
                             "divides by d_k: you divided by d_k, not √d_k"),
                            (lambda Q, K: Q @ np.swapaxes(K, -1, -2), "returns Q K^T unscaled: the scale is missing"),
                            (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2]),
                             "divides by the square root of the number of keys; the scale reads d_k, the length of "
                             "each query and key"),
                            (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]),
                             "uses K.T, which reverses every axis: right on 2-D arrays, but on the batch K of shape "
                             "(2, 6, 16) it gives shape (16, 6, 2), the batch axis last, and the product fails. "
                             "Swap only the last two axes: np.swapaxes(K, -1, -2)"),
                            (lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[1]),
                             "reads d_k from Q.shape[1]: right on 2-D arrays, but on the batch Q of shape (2, 3, 16) "
                             "axis 1 holds the 3 queries. d_k is the last axis, Q.shape[-1]")]),
)
