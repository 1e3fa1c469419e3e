"""Exercises of notebook 00 (start here)."""

import math

from .. import theory
from . import Slip, numeric_checker, register, with_attributes
from . import _text as T

# -- Exercise 1: d_k from d_model and the number of heads ---------------------------------------
BERT_D_MODEL, BERT_HEADS, PAPER_HEADS = 768, 12, 8

register(
    "00.bert_d_k",
    "BERT-base has d_model = 768 and 12 heads of size d_model/h. What is its d_k? (an integer)",
    "d_k is the model dimension shared out equally between the heads.",
    numeric_checker(BERT_D_MODEL // BERT_HEADS, what="d_k", slips=[
        Slip(BERT_D_MODEL, "d_model itself: each of the 12 heads gets only its share of it"),
        Slip(BERT_D_MODEL // PAPER_HEADS, "768 shared among the paper's 8 heads; BERT-base has 12"),
        Slip(BERT_D_MODEL * BERT_HEADS, "d_model multiplied by the number of heads, not divided"),
        Slip(BERT_HEADS, "the number of heads h; d_k is the size of one head, the share of d_model each of "
                         "the 12 heads gets"),
    ]),
)

# -- Exercise 2: the spread of the unscaled q.k ---------------------------------------------------
STD_D_K = 256
_moments = theory.dot_product_moments(STD_D_K)

register(
    "00.std_unscaled",
    "With d_k = 256 and independent unit-variance components, what is the spread (standard deviation) "
    "of the unscaled q·k? (an integer)",
    "Part 1 of the answer gives the variance of q·k; a spread is another measure (the box says which).",
    numeric_checker(_moments.std, what="the spread", slips=[
        Slip(_moments.var, "the variance of q·k, not its spread (the standard deviation)"),
        Slip(theory.scaled_moments(_moments, 1 / math.sqrt(STD_D_K)).std,
             "the spread of the scaled logits q·k/√d_k; the question asks for the unscaled q·k"),
        Slip(1 / math.sqrt(STD_D_K), "the scale factor 1/√d_k, not the spread of q·k"),
        Slip(-_moments.std, "a negative number: a spread (standard deviation) is a square root, never negative"),
    ]),
)

# -- Exercise 3: read the figure: does the largest weight change by more or less than 10 %? -------
_DIRECTIONS = ("up", "down", "same")
_MEANING = {"up": "rises by more than 10 %", "down": "falls by more than 10 %", "same": "changes by less than 10 %"}


def _largest_weight_checker(answer):
    """``("up", "same")``: from d_k = 64 to 1024 the unscaled largest weight rises by more than
    10 % (0.84 -> 0.96); the scaled one changes by less (0.25 -> 0.25)."""
    if isinstance(answer, str) or not hasattr(answer, "__len__") or len(answer) != 2:
        return False, 'expected a pair of answers, e.g. ("down", "up"): one without the scale, one with it'
    words = [T.strip(str(a)).lower() for a in answer]
    unknown = [w for w in words if w not in _DIRECTIONS]
    if unknown:
        return False, f"each answer must be one of {', '.join(map(repr, _DIRECTIONS))}; got {unknown[0]!r}"
    unscaled, scaled = words
    wrong = []
    if unscaled != "up":
        wrong.append(f"without the scale, you say the largest weight {_MEANING[unscaled]}: compare the "
                     f"orange 'largest' numbers of the rows d_k = 64 and 1024")
    if scaled != "same":
        wrong.append(f"with the scale, you say it {_MEANING[scaled]}: compare the blue 'largest' numbers")
    if wrong:
        return False, "; ".join(wrong) + "."
    return True, "unscaled 0.84 → 0.96 (+14 %), scaled 0.25 → 0.25."


register(
    "00.predict_largest_weight",
    "From d_k = 64 to d_k = 1024 (the figure's third column), does the mean largest of 16 softmax weights "
    'rise by more than 10 % ("up"), fall by more than 10 % ("down") or change by less than 10 % ("same"): '
    "(a) without the scale, (b) with it? Answer with a pair.",
    "Read the 'largest' numbers in the weights panels of the rows d_k = 64 and d_k = 1024, and compare "
    "each change with 10 %.",
    with_attributes(_largest_weight_checker, kind="choices", slots=[list(_DIRECTIONS), list(_DIRECTIONS)],
                    labels=["(a) without the scale", "(b) with the scale"]),
)

# -- Exercise 4: non-unit components: the scale is not 1/sqrt(d_k) --------------------------------
VAR_Q, VAR_K, DESIGN_D_K = 4.0, 1.0, 512
_spread = theory.dot_product_moments(DESIGN_D_K, var_q=VAR_Q, var_k=VAR_K).std

register(
    "00.scale_for_variance_4",
    "Components of q have variance 4 and those of k variance 1 (all independent, mean 0). At d_k = 512, "
    "which factor c makes the logits c·(q·k) have spread 1? (three significant figures)",
    "A component of variance 4 is a unit-variance component times 2 (spread √4 = 2). What does that do "
    "to q·k?",
    numeric_checker(1 / _spread, what="the factor c", slips=[
        Slip(1 / math.sqrt(DESIGN_D_K), "1/√d_k, right only when the variances multiply to 1; here "
                                         "Var(q·k) = d_k · 4 · 1"),
        Slip(1 / _spread**2, "1/Var(q·k): dividing by the variance, not by the spread"),
        Slip(1 / (math.sqrt(DESIGN_D_K) * VAR_Q * VAR_K), "dividing by the variance 4 of q's components; "
                                                          "q·k grows by their spread √4 = 2"),
        Slip(1 / math.sqrt(DESIGN_D_K * (VAR_Q + VAR_K)), "adding the variances 4 + 1; they multiply"),
        Slip(_spread, "the spread of q·k itself; c is one over it"),
        Slip(1 / DESIGN_D_K, "1/d_k: dividing by d_k, a variance's size; c divides by the spread of q·k, "
                             "a square root"),
    ]),
)
