"""Exercises of notebook 07 (attention end to end)."""

import re

import numpy as np

from ..attention import causal_mask, softmax
from . import Slip, function_checker, numeric_checker, register


def _masked_softmax(logits, mask):
    """Reference: softmax over the last axis with -inf where ``mask`` is False; ValueError naming an empty row."""
    empty = ~np.broadcast_to(mask, np.shape(logits)).any(axis=-1)
    if empty.any():
        row = tuple(np.argwhere(empty)[0].tolist())
        raise ValueError(f"row {row} of mask has no True entry: no key to attend to")
    return softmax(np.where(mask, logits, -np.inf), axis=-1)


_RNG = np.random.default_rng(7)
_CASES = [
    (np.array([1.0, 2.0, 3.0]), np.array([True, True, False])),
    (np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), causal_mask(3)),
    (_RNG.standard_normal((2, 5, 5)) * 10, causal_mask(5)),
    (np.array([[1e6, 0.0, -1e6], [0.0, 1e6, 2e6]]), np.array([[True, True, True], [True, True, False]])),
    (np.array([[-1e12, 0.0], [-3e12, -2e12]]), np.array([[True, False], [False, True]])),
]

_W, _V_FIRST = np.array([0.5, 0.3, 0.2]), np.array([2.0, 0.0, 10.0])  # Exercise 1: weights, first value components

register(
    "07.output_component",
    "A query's weights over three keys are (0.5, 0.3, 0.2), and the first components of the three value rows "
    "are 2, 0 and 10. What is the first component of the query's output (three significant figures)?",
    "The output row is a weighted average of the value rows, one component at a time.",
    numeric_checker(float(_W @ _V_FIRST), what="the first component",
                    slips=[Slip(float(_V_FIRST.mean()), "the plain mean of the values: the weights are missing"),
                           Slip(float(_V_FIRST[np.argmax(_W)]),
                                "the value of the most-weighted key: what a one-hot row would give"),
                           Slip(float(_W.sum() * _V_FIRST.sum()), "the sum of the values times the sum of the "
                                "weights: pair each weight with its own value"),
                           Slip(float(_V_FIRST.max()), "the largest value, as if its key took all the weight; "
                                "each key counts with its own weight"),
                           Slip(float(_W[:-1] @ _V_FIRST[:-1]), "the weighted sum without its last term: every "
                                "key contributes, the third too")]),
)

register(
    "07.causal_zeros",
    "With a causal mask over a sequence of length 10, how many of the 10 x 10 attention weights are exactly 0 "
    "(an integer)?",
    "Count the entries strictly above the diagonal: row i may not look at the keys after i.",
    numeric_checker(float((~causal_mask(10)).sum()), what="the number of zero weights",
                    slips=[Slip(float(np.triu(np.ones((10, 10))).sum()),
                                "the diagonal counted: a query may attend to its own key, so the diagonal "
                                "holds no zeros"),
                           Slip(100 / 2, "half the matrix: the diagonal belongs to neither half")]),
)

register(
    "07.fully_masked_weight",
    "Eight positions, the first 3 padding, under a causal mask: the padding query at position 2 has every key "
    "masked, and the library replaces masked logits by one large negative number. What weight goes to key 7, "
    "a later token (three significant figures)?",
    "After the replacement every logit of the row is the same number. What is the softmax of n equal logits?",
    numeric_checker(1 / 8, what="the weight of key 7",
                    slips=[Slip(0.0, "what the causal mask was meant to give (or a -inf mask with a zeroing rule); a "
                                     "finite replacement leaves 8 equal logits, the later keys included"),
                           Slip(1 / 3, "uniform over keys 0-2, the ones the causal mask allows; the replacement "
                                       "flattens the whole row of 8"),
                           Slip(1 / 4, "the uniform weight of section 4's row of four keys; this row has 8 keys")]),
)

register(
    "07.d_v_factor",
    "d_v goes from 64 to 256 while d_k stays 64. By what factor must the scale 1/sqrt(d_k) change (an integer)?",
    "Which of Q, K, V appear in the logits Q K^T that the scale multiplies?",
    numeric_checker(1.0, what="the factor",
                    slips=[Slip(float(np.sqrt(256 / 64)), "sqrt(d_v_new / d_v_old): the scale reads d_k, never d_v"),
                           Slip(256 / 64, "d_v_new / d_v_old: the scale reads d_k, never d_v"),
                           Slip(float(np.sqrt(64 / 256)), "sqrt(d_v_old / d_v_new): the scale reads d_k, never d_v"),
                           Slip(0.0, "the change, not the factor: the factor multiplies the old scale, and a "
                                     "factor 0 would zero every logit")]),
)

_EMPTY_ROW_CASE = (np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0], [3.0, 1.0, 0.0, 2.0]]),
                   np.array([[True, False, True, True], [True, True, False, False], [False, False, False, False]]))


#: A row named in an error message: the number right after "row", "rows", "index", "position",
#: "mask[" or "[" ("row 2", "row (2,)", "rows [[2]]", "mask[2]", "index 2", "Row index 2", "row=2");
#: not "a 2-D mask" nor "2 keys".
_ROW_NAMED = re.compile(r"(?:\brows?|\(s\)|\bindex|\bposition|\bmask\s*\[|\[)\W{0,4}(?:(?:index|number)\W{0,3})?"
                        r"(\d+\b(?:\s*(?:,|and|or|&)\s*\d+\b(?!\s*(?:keys?|columns?|entries|values|-D|x\b)))*)",
                        re.IGNORECASE)


def _rows_named(message: str) -> set[int]:
    """The row numbers an error message names.

    >>> sorted(_rows_named("row 2 of mask has no True entry")), sorted(_rows_named("mask[2] is all False"))
    ([2], [2])
    >>> sorted(_rows_named("index 2: empty (rows 0 and 1 are fine)")), sorted(_rows_named("a 2-D mask, 4 keys"))
    ([0, 1, 2], [])
    >>> sorted(_rows_named("rows [2, 0] are empty")), sorted(_rows_named("row 2, 4 keys, has no True entry"))
    ([0, 2], [2])
    """
    return {int(n) for m in _ROW_NAMED.finditer(message) for n in re.findall(r"\d+", m.group(1))}


def _last_row(result) -> str:
    """What a function returned for the all-False row, in words ("[nan nan nan nan] for that row: 0/0")."""
    try:
        row = np.asarray(result, dtype=float)[-1]
    except Exception:  # None, text, a ragged list: say what it was
        return f"{result!r:.60}"
    why = ": every exp(-inf) is 0, and 0/0 is NaN" if np.isnan(row).any() else ""
    return f"{np.array2string(row, precision=3)} for that row{why}"


def _empty_row_named(fn):
    """After the cases pass: an all-False row (row 2) must raise a ValueError naming it."""
    logits, mask = (a.copy() for a in _EMPTY_ROW_CASE)
    call = getattr(fn, "unchecked", fn)  # the raw result: a NaN row here is the slip to explain
    try:
        with np.errstate(all="ignore"):
            result = call(logits, mask)
    except ValueError as exc:
        named = _rows_named(str(exc))
        if 2 not in named:
            return False, (f"on a 3 x 4 mask whose row 2 is all False, your ValueError says {str(exc)!r}; "
                           f"name the row (2) in the message.")
        if named != {2}:
            return False, (f"on a 3 x 4 mask whose row 2 is all False, your ValueError says {str(exc)!r}; it also "
                           f"names row {min(named - {2})}, which has keys to attend to: name only the empty row.")
        return True, f"passed all {len(_CASES)} cases, and raised a ValueError naming the all-False row."
    except Exception as exc:
        return False, (f"on a 3 x 4 mask whose row 2 is all False, your function raised {type(exc).__name__}, "
                       f"not ValueError: {exc}")
    return False, (f"right on every case with a key to attend to. On a 3 x 4 mask whose row 2 is all False, "
                   f"your function returned {_last_row(result)}. It should raise a ValueError naming the row (2), "
                   f"for example ValueError(\"row 2 of mask has no True entry\").")


register(
    "07.masked_softmax",
    "Write masked_softmax(logits, mask): the softmax over the last axis, with weight exactly 0 where mask is False. "
    "A row whose mask is all False must raise a ValueError naming that row, as this package's "
    "scaled_dot_product_attention does.",
    "Which logit value makes exp(...) exactly 0? And what can you subtract from a row, without changing "
    "its softmax, so that exp never overflows? Check mask.any(axis=-1) before you divide.",
    function_checker(_masked_softmax, _CASES, after=_empty_row_named,
                     names=["one row, last key masked", "a causal 3 x 3 mask",
                            "a batch of 5 x 5 causal rows", "huge logits (1e6) with a mask",
                            "allowed logits (-1e12) below any finite fill value: masked weights must be exactly 0"]),
)
