"""Exercises of notebook 07 (attention end to end)."""

import numpy as np

from ..attention import causal_mask, softmax
from . import function_checker, numeric_checker, register


def _masked_softmax(logits, mask):
    """Reference: softmax over the last axis with -inf where ``mask`` is False."""
    return softmax(np.where(mask, logits, -np.inf), axis=-1)


_RNG = np.random.default_rng(7)
_CASES = [
    (np.array([1.0, 2.0, 3.0]), np.array([True, True, False])),
    (np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), causal_mask(3)),
    (_RNG.standard_normal((2, 5, 5)) * 10, causal_mask(5)),
    (np.array([[1e6, 0.0, -1e6], [0.0, 1e6, 2e6]]), np.array([[True, True, True], [True, True, False]])),
]

register(
    "07.bert_large_d_k",
    "BERT-large has d_model = 1024 and 16 heads of d_model/h each. What is the d_k of one head (an integer)?",
    "Each head gets an equal share of the model dimension.",
    numeric_checker(1024 / 16, what="d_k"),
)

register(
    "07.causal_zeros",
    "With a causal mask over a sequence of length 10, how many of the 10 x 10 attention weights are exactly 0 "
    "(an integer)?",
    "Count the entries strictly above the diagonal: row i may not look at the keys after i.",
    numeric_checker(45.0, what="the number of zero weights"),
)

register(
    "07.fully_masked_weight",
    "A padding query attends to 8 keys, all masked, in a library that replaces masked logits by a large finite "
    "negative number. What weight does each key get (three significant figures)?",
    "After the replacement every logit of the row is the same number. What is the softmax of n equal logits?",
    numeric_checker(1 / 8, what="the weight of each key"),
)

register(
    "07.d_v_factor",
    "d_v goes from 64 to 256 while d_k stays 64. By what factor must the scale 1/sqrt(d_k) change (an integer)?",
    "Which of Q, K, V appear in the logits Q K^T that the scale multiplies?",
    numeric_checker(1.0, what="the factor"),
)

register(
    "07.masked_softmax",
    "Write masked_softmax(logits, mask): the softmax over the last axis, with weight exactly 0 where mask is False.",
    "Which logit value makes exp(...) exactly 0? And what can you subtract from a row, without changing "
    "its softmax, so that exp never overflows?",
    function_checker(_masked_softmax, _CASES,
                     names=["one row, last key masked", "a causal 3 x 3 mask", "a batch of 5 x 5 causal rows",
                            "huge logits (1e6) with a mask"]),
)
