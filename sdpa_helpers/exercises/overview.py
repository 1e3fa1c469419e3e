"""Exercises of notebook 00 (start here): the head dimension, the spread, a prediction, a design."""

from . import numeric_checker, register

register(
    "00.bert_d_k",
    "BERT-base has d_model = 768 and 12 heads of size d_model/h. What is its d_k? (an integer)",
    "d_k is the model dimension shared out equally between the heads.",
    numeric_checker(768 // 12, what="d_k"),
)

register(
    "00.std_unscaled",
    "With d_k = 256 and independent unit-variance components, what is the standard deviation of the "
    "unscaled q·k? (an integer)",
    "The variance of q·k is d_k; the standard deviation is its square root.",
    numeric_checker(16, what="the standard deviation"),
)

_DIRECTIONS = ("up", "down", "same")


def _largest_weight_checker(answer):
    """``("up", "same")``: unscaled the largest weight climbs towards 1; scaled it stays put."""
    if isinstance(answer, str) or not hasattr(answer, "__len__") or len(answer) != 2:
        return False, 'expected a pair of answers, e.g. ("down", "up"): one without the scale, one with it'
    words = [str(a).strip().lower() for a in answer]
    unknown = [w for w in words if w not in _DIRECTIONS]
    if unknown:
        return False, f"each answer must be one of {', '.join(map(repr, _DIRECTIONS))}; got {unknown[0]!r}"
    unscaled, scaled = words
    if unscaled != "up" and scaled != "same":
        return False, "both halves are off."
    if unscaled != "up":
        return False, "the half without the scale is off."
    if scaled != "same":
        return False, "the half with the scale is off."
    return True, "the unscaled spread grows by √2 per doubling; the scaled one stays 1."


register(
    "00.predict_largest_weight",
    'At initialisation, as d_k doubles, what happens to the largest of 16 softmax weights (a) without the '
    'scale, (b) with it? Answer a pair from "up" (towards 1), "down" (towards 1/16), "same".',
    "What happens to the spread of the logits in each case when d_k doubles? Re-read section 2: "
    "bigger gaps between logits give a peakier softmax.",
    _largest_weight_checker,
)

register(
    "00.scale_for_variance_4",
    "Components of q and k are independent with mean 0 and variance 4. At d_k = 64, which factor c makes "
    "c·(q·k) have variance 1? (three significant figures)",
    "First find Var(q_i k_i) for independent mean-0 factors, then Var(q·k), then use Var(cX) = c² Var(X).",
    numeric_checker(1 / 32, what="the factor c"),
)
