"""Exercises of notebook 08 (does unit variance hold?): a ladder from Var(q_i) of one rule to what bounds the logits."""

import numpy as np

from ..assumptions import (
    correlated_dot_product_moments,
    init_logit_moments,
    init_weight_variance,
    qk_norm_scores,
    query_variance,
)
from . import Slip, choice_checker, function_checker, numeric_checker, register


def _cosine_logit(q, k, g):
    """Reference: g cos(theta) for two vectors."""
    return qk_norm_scores(np.asarray(q, dtype=float)[None, :], np.asarray(k, dtype=float)[None, :], gain=g)[0, 0]


_RNG = np.random.default_rng(8)
_CASES = [
    (np.array([3.0, 4.0]), np.array([4.0, 3.0]), 1.0),
    (np.array([1.0, 0.0, 0.0]), np.array([-2.0, 0.0, 0.0]), 5.0),
    (_RNG.standard_normal(64), _RNG.standard_normal(64), 8.0),
    (1e3 * _RNG.standard_normal(512), 1e-3 * _RNG.standard_normal(512), 2.5),
]

register(
    "08.xavier_head_var",
    "Xavier's rule for one head's query projection, d_model = 768 -> d_k = 64, "
    "on LayerNormed tokens: what is Var(q_i) (three significant figures)?",
    "Var(q_i) = fan_in * Var(W) * E[x^2]; Xavier's Var(W) uses both fan_in and fan_out.",
    numeric_checker(query_variance("xavier", 768, 64), what="Var(q_i)", slips=[
        Slip(query_variance("xavier", 768, 768), "Var(q_i) for a square matrix (fan_out = 768); one head's matrix "
                                                 "has fan_out = d_k = 64"),
        *[Slip(w, "Var(W), one weight's variance; Var(q_i) multiplies it by fan_in = 768")
          for w in (init_weight_variance("xavier", 768, 64), float(f"{init_weight_variance('xavier', 768, 64):.2g}"))],
        Slip(query_variance("he", 768), "He's rule, Var(W) = 2/fan_in (or Xavier's with fan_out left out); "
                                        "Xavier's Var(W) counts both fan_in and fan_out"),
        Slip(query_variance("xavier", 512, 64), "section 2's value for d_model = 512; here d_model = 768"),
        Slip(query_variance("xavier", 768, 64) / 2,
             "Xavier's rule without its factor 2: Var(W) = 2/(fan_in + fan_out), not 1/(fan_in + fan_out)"),
        Slip(query_variance("xavier", 768, 64) ** 2, "Var(q_i)^2, the variance of a scaled logit q.k/sqrt(d_k); "
                                                     "the question asks for Var(q_i) itself"),
    ]),
)

register(
    "08.default_logit_var",
    "PyTorch's default nn.Linear initialisation for W_Q and W_K (d_model -> d_k = 128), LayerNormed tokens: "
    "what is Var(q . k), unscaled (three significant figures)?",
    "Find Var(q_i) first (it does not depend on d_model here); then Var(q . k) = d_k Var(q_i) Var(k_i).",
    numeric_checker(init_logit_moments("pytorch_default", 512, 128).var, what="Var(q . k)", slips=[
        Slip(init_logit_moments("lecun", 512, 128).var, "the footnote's d_k, as if Var(q_i) were 1; with "
                                                       "PyTorch's default it is 1/3"),
        Slip(128 * query_variance("pytorch_default", 512), "d_k Var(q_i), one factor 1/3 only; Var(k_i) = 1/3 "
                                                          "multiplies too"),
        Slip(init_logit_moments("pytorch_default", 512, 128, scale="sqrt").var,
             "the variance of the scaled logit q . k / sqrt(d_k); the unscaled q . k was asked"),
        Slip(init_logit_moments("pytorch_default", 512, 128).std, "the standard deviation, not the variance"),
    ]),
)

register(
    "08.gpt2_medium_std",
    "GPT-2 medium: d_model = 1024, heads of 64, every weight N(0, 0.02^2), LayerNormed tokens. What is the standard "
    "deviation of the scaled logits q . k / sqrt(64) at initialisation (three significant figures)?",
    "Var(q_i) = d_model * 0.02^2; the scaled logit's variance is Var(q_i)^2.",
    numeric_checker(init_logit_moments("gpt2", 1024, 64, scale="sqrt").std, what="the standard deviation", slips=[
        Slip(init_logit_moments("gpt2", 1024, 64, scale="sqrt").var,
             "the variance Var(q_i)^2 of the scaled logits; take its square root"),
        Slip(init_logit_moments("gpt2", 1024, 64).std, "the unscaled standard deviation; divide by sqrt(64)"),
        Slip(init_weight_variance("gpt2", 1024), "Var(W), one weight's variance; multiply by d_model = 1024"),
        Slip(np.sqrt(query_variance("gpt2", 1024)), "sqrt(Var(q_i)), the standard deviation of one component q_i; "
                                                    "the scaled logit's standard deviation is Var(q_i) itself"),
        Slip(init_logit_moments("gpt2", 768, 64, scale="sqrt").std, "GPT-2 small's value (d_model = 768); "
                                                                    "medium has d_model = 1024"),
    ]),
)

register(
    "08.rho_mean",
    "Queries and keys correlated with rho = 0.25, d_k = 1024: what is the mean of the scaled logit "
    "q . k / sqrt(d_k) (an integer)?",
    "E[q . k] = rho d_k; then apply the scale.",
    numeric_checker(correlated_dot_product_moments(1024, 0.25, scale="sqrt").mean, what="the mean", slips=[
        Slip(correlated_dot_product_moments(1024, 0.25).mean, "rho d_k, the unscaled mean; divide by sqrt(d_k)"),
        Slip(correlated_dot_product_moments(1024, 0.25, scale="inv_d").mean,
             "rho, the mean under muP's 1/d_k; the question scales by 1/sqrt(d_k)"),
        Slip(correlated_dot_product_moments(1024, 0.5, scale="sqrt").mean, "the mean for rho = 0.5; here rho = 0.25"),
    ]),
)

register(
    "08.k_equals_q_var",
    "Take k = q with d_k = 64 independent standard normal components (E[q_i^4] = 3). What is the variance of "
    "q . k (an integer)?",
    "q . q is a sum of d_k independent q_i^2; Var(q_i^2) = E[q_i^4] - E[q_i^2]^2.",
    numeric_checker(correlated_dot_product_moments(64, 1.0).var, what="Var(q . q)", slips=[
        Slip(correlated_dot_product_moments(64, 0.0).var, "d_k, the variance for independent q and k; with k = q "
                                                         "each term is q_i^2, of variance 3 - 1 = 2"),
        Slip(64 * 3, "d_k E[q_i^4], the sum of E[(q_i^2)^2]; subtract the squared mean E[q_i^2]^2 = 1 per term"),
    ]),
)

register(
    "08.what_bounds",
    "(conceptual) Which change keeps the matching key's logit bounded whatever rho and d_k become: (a) Xavier's "
    "rule instead of PyTorch's default, (b) LayerNorm on the tokens x, (c) QK-norm? Answer with a letter.",
    "Take each change in turn and ask what it acts on, and whether training can still make q . k grow "
    "(sections 2 and 4).",
    choice_checker("c", {"a": "Xavier's rule: it only sets the starting factor Var(q_i); training moves the weights",
                         "b": "LayerNorm normalises x, not q or k: the learned W_Q, W_K can still make q and k "
                              "long and aligned",
                         "c": "QK-norm: g cos(theta) stays in [-g, g]"}),
)

register(
    "08.cosine_logit",
    "Write cosine_logit(q, k, g): the QK-norm logit g * cos(theta) of two 1-D vectors q and k.",
    "Divide each vector by its length (np.linalg.norm) before the dot product.",
    function_checker(_cosine_logit, _CASES,
                     slips=[(lambda q, k, g: _cosine_logit(q, k, 1.0), "leaves out the gain g"),
                            (lambda q, k, g: g * float(np.dot(q, k)), "returns g q·k: the lengths are not divided out"),
                            (lambda q, k, g: g * float(np.dot(q, k)) / float(np.dot(q, q) * np.dot(k, k)),
                             "divides by the squared lengths |q|² |k|²; a length is the square root")],
                     names=["2-D vectors", "opposite directions", "random vectors, d_k = 64",
                            "very long q, very short k"]),
)
