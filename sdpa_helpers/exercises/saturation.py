"""Exercises of notebook 05 (softmax saturation)."""

import numpy as np

from ..attention import softmax
from . import function_checker, numeric_checker, register

register(
    "05.scaled_weight",
    "Two keys have unscaled logits q·k = [8, 0] and d_k = 16. What weight does scaled attention "
    "give the first key? (three significant figures)",
    "Divide both logits by √d_k first; with two keys, the first weight is 1 / (1 + e^(z2 - z1)).",
    numeric_checker(1.0 / (1.0 + np.exp(-2.0)), what="the weight"),
)

register(
    "05.temperature",
    "For d_k = 100, which temperature T makes softmax(q·k, temperature=T) equal the scaled "
    "attention weights softmax(q·k / √d_k)? (an integer)",
    "softmax(z, temperature=T) is the softmax of z / T. Match z / T with the scaled logits.",
    numeric_checker(10.0, what="the temperature"),
)

register(
    "05.onset_16_keys",
    "By the closed form H ~ ln n - sigma^2/2, the onset of saturation is defined as sigma^2 = ln n "
    "(half the entropy gone). Unscaled logits have sigma^2 ~ d_k: at what d_k do 16 keys begin to saturate? "
    "(three significant figures)",
    "At the onset the law leaves half the entropy of the uniform softmax: ln n - sigma^2/2 = (ln n)/2.",
    numeric_checker(np.log(16.0), what="the onset d_k"),
)

_CASES = [
    (np.array([1.0, 2.0, 3.0]),),
    (np.array([1e6, 0.0]),),
    (np.array([1000.0, 1000.0]),),
    (np.array([-1000.0, -1000.0, -1001.0]),),
    (np.array([-np.inf, 0.0]),),
    (np.array([[1.0, 2.0, 0.5], [3.0, 5.0, 5.0]]),),
    # rows 2000 apart: subtracting one maximum for the whole batch underflows the second row to 0/0
    (np.array([[1000.0, 999.0], [-1000.0, -1001.0]]),),
]

register(
    "05.stable_softmax",
    "Write stable_softmax(x): the softmax over the last axis of a numpy array x, which works for "
    "logits like 1e6, [1000, 1000], [-1000, -1000] and -inf (weight 0).",
    "exp overflows above about 709 and underflows below about -745. softmax(x) = softmax(x - c) for "
    "any constant c: pick the c that keeps every exponent <= 0, per row (keepdims=True).",
    function_checker(softmax, _CASES, rtol=1e-9, atol=1e-12,
                     names=["small logits [1, 2, 3]", "huge logits [1e6, 0]", "equal huge logits [1000, 1000]",
                            "very negative logits [-1000, -1000, -1001]", "a masked logit [-inf, 0]",
                            "a batch of two rows", "a batch of two rows far apart"]),
)
