"""Exercises of notebook 05 (softmax saturation)."""

import numpy as np

from ..attention import softmax
from . import Slip, choice_checker, function_checker, numeric_checker, register


def _two_key_weight(logits, factor):
    """The first of two softmax weights of ``factor * logits``: the computation each slip below gets wrong."""
    return float(softmax(factor * np.asarray(logits, dtype=float))[0])


_LOGITS, _D_K = (8.0, 0.0), 16

register(
    "05.scaled_weight",
    "Two keys have unscaled logits q·k = [8, 0] and d_k = 16. What weight does scaled attention "
    "give the first key? (three significant figures)",
    "Scaled attention changes the logits before the softmax; with two keys, only their difference matters.",
    numeric_checker(_two_key_weight(_LOGITS, _D_K**-0.5), what="the weight", slips=[
        Slip(_two_key_weight(_LOGITS, 1.0), "the unscaled weight: the logits were not divided by √d_k"),
        Slip(1.0, "the unscaled weight at the asked precision (it rounds to 1.00): the logits were not divided "
                  "by √d_k"),
        Slip(_two_key_weight(_LOGITS, 1.0 / _D_K), "the logits divided by d_k, not by √d_k"),
        Slip(_two_key_weight(_LOGITS, 1.0 / 8), "the logits divided by 8 = √64, the head size of the earlier "
                                                 "sections; here d_k = 16"),
        Slip(1.0 - _two_key_weight(_LOGITS, _D_K**-0.5), "the second key's weight: the question asks for the "
             "first key's, the one with logit 8"),
    ]),
)

register(
    "05.temperature",
    "For d_k = 100, which temperature T makes softmax(q·k, temperature=T) equal the scaled "
    "attention weights softmax(q·k / √d_k)? (an integer)",
    "softmax(z, temperature=T) is the softmax of z / T. Match z / T with the scaled logits.",
    numeric_checker(np.sqrt(100.0), what="the temperature", slips=[
        Slip(100.0, "d_k itself: the temperature is √d_k, the factor the logits are divided by"),
        Slip(1.0 / np.sqrt(100.0), "the scale factor 1/√d_k that multiplies the logits; T divides them"),
    ]),
)

_N, _SIGMA2 = 1024, 2.0

register(
    "05.effective_keys_law",
    "1024 keys get i.i.d. N(0, σ²) logits with σ² = 2, where notebook 05 found the law H ≈ ln n − σ²/2 "
    "within 5 %. What effective number of keys e^H does the law give? (three significant figures)",
    "Compute H from the law first, then exponentiate: e^H = n e^(−σ²/2).",
    numeric_checker(_N * np.exp(-_SIGMA2 / 2), what="the effective number of keys", slips=[
        Slip(np.log(_N) - _SIGMA2 / 2, "the entropy H itself; the question asks for e^H"),
        Slip(float(_N), "n, all 1024 keys: e^(ln n), with the law's − σ²/2 left out of H"),
        Slip(_N * np.exp(-_SIGMA2), "e^(ln n − σ²): the law takes away σ²/2, not σ²"),
        Slip(_N * np.exp(-np.sqrt(_SIGMA2) / 2), "σ/2 taken away, not σ²/2: the law uses the variance"),
    ]),
)

register(
    "05.onset_moves",
    "Notebook 05 measured the onset of saturation (the d_k where one query's mean unscaled entropy first "
    "falls 1 nat below ln n) for 16 and for 1024 keys. Going from 16 to 1024 keys, the onset "
    "(a) grows like ln n, by 2.5×; (b) stays at a few units of d_k; "
    "(c) grows like n, by 64×. Answer with a letter.",
    "Read the measured onsets printed in section 5 for 16 and for 1024 keys.",
    choice_checker("b", {"a": "grows like ln n, by 2.5×: compare the two measured onsets in section 5; they do not "
                              "grow 2.5×",
                         "b": "stays at a few units of d_k",
                         "c": "grows like n, by 64×: compare the two measured onsets in section 5"}),
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
                     slips=[(lambda x: np.exp(x - np.max(x, axis=-1, keepdims=True))
                             / np.exp(x - np.max(x, axis=-1, keepdims=True)).sum(),
                             "divides by the sum over the whole array: each row sums to 1 on its own (axis=-1)")],
                     names=["small logits [1, 2, 3]", "huge logits [1e6, 0]", "equal huge logits [1000, 1000]",
                            "very negative logits [-1000, -1000, -1001]", "a masked logit [-inf, 0]",
                            "a batch of two rows", "a batch of two rows far apart"]),
)
