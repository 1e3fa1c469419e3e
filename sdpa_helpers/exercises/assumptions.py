"""Exercises of notebook 08 (does unit variance hold?)."""

import numpy as np

from ..assumptions import qk_norm_scores
from . import function_checker, numeric_checker, register


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
    "Xavier/Glorot initialisation of one head's query projection, d_model = 768 -> d_k = 64, "
    "on LayerNormed tokens: what is Var(q_i) (three significant figures)?",
    "Var(q_i) = fan_in * Var(W) * E[x^2]; Xavier's Var(W) uses both fan_in and fan_out.",
    numeric_checker(2 * 768 / (768 + 64), what="Var(q_i)"),
)

register(
    "08.default_logit_var",
    "PyTorch's default nn.Linear initialisation for W_Q and W_K (d_model -> d_k = 128), LayerNormed tokens: "
    "what is Var(q . k), unscaled (three significant figures)?",
    "Find Var(q_i) first (it does not depend on d_model here); then Var(q . k) = d_k Var(q_i) Var(k_i).",
    numeric_checker(128 / 9, what="Var(q . k)"),
)

register(
    "08.rho_mean",
    "Queries and keys correlated with rho = 0.25, d_k = 1024: what is the mean of the scaled logit "
    "q . k / sqrt(d_k) (an integer)?",
    "E[q . k] = rho d_k; then apply the scale.",
    numeric_checker(0.25 * np.sqrt(1024), what="the mean"),
)

register(
    "08.k_equals_q_var",
    "Take k = q with d_k = 64 independent standard normal components. What is the variance of q . k (an integer)?",
    "q . q is a sum of d_k independent q_i^2; for a standard normal, E[q_i^4] = 3.",
    numeric_checker(2 * 64, what="Var(q . q)"),
)

register(
    "08.gpt2_medium_std",
    "GPT-2 medium: d_model = 1024, heads of 64, every weight N(0, 0.02^2), LayerNormed tokens. What is the standard "
    "deviation of the scaled logits q . k / sqrt(64) at initialisation (three significant figures)?",
    "Var(q_i) = d_model * 0.02^2; the scaled logit's variance is Var(q_i)^2.",
    numeric_checker(1024 * 0.02**2, what="the standard deviation"),
)

register(
    "08.cosine_logit",
    "Write cosine_logit(q, k, g): the QK-norm logit g * cos(theta) of two 1-D vectors q and k.",
    "Divide each vector by its length (np.linalg.norm) before the dot product.",
    function_checker(_cosine_logit, _CASES,
                     names=["2-D vectors", "opposite directions", "random vectors, d_k = 64",
                            "very long q, very short k"]),
)
