"""Exercises of notebook 09 (training with and without the scale)."""

import numpy as np

from ..attention import softmax
from . import function_checker, numeric_checker, register

#: The small numbers of exercise 09.logit_grad_w_q (also printed in the notebook).
LOGIT_GRAD_W_K = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 1.0]])  # (d_k, d_in) = (2, 3)
LOGIT_GRAD_X = np.array([1.0, 2.0, 0.0])
LOGIT_GRAD_Y = np.array([0.0, 1.0, 1.0])


def _softmax_ce_backward(z, t):
    """Reference: dL/dz = softmax(z) - onehot(t) for L = -log softmax(z)[t]."""
    g = softmax(np.asarray(z, dtype=float))
    g[..., t] -= 1.0
    return g


register(
    "09.logit_grad_w_q",
    "For q = W_Q x and k = W_K y, the logit is q·k. With the W_K, x and y given in the notebook, "
    "what is the gradient of q·k with respect to W_Q (a 2×3 matrix)?",
    "Hold k = W_K y fixed and write q·k = sum_i k_i (W_Q x)_i as a sum over the entries of W_Q: "
    "which terms contain the entry (W_Q)_ia, and with what factor?",
    numeric_checker(np.outer(LOGIT_GRAD_W_K @ LOGIT_GRAD_Y, LOGIT_GRAD_X), rtol=1e-9, atol=1e-12,
                    what="the gradient"),
)

register(
    "09.softmax_ce_backward",
    "Write a function softmax_ce_backward(z, t) that returns dL/dz for L = -log softmax(z)[t] "
    "(z a 1-D array of logits, t the index of the right class).",
    "Differentiate -z_t + log sum_j exp(z_j) with respect to each z_i; compute the softmax stably "
    "(subtract the largest logit first).",
    function_checker(
        _softmax_ce_backward,
        [(np.array([1.0, 2.0, 3.0]), 0), (np.array([0.5, -1.0]), 1), (np.zeros(4), 2),
         (np.array([1e6, 0.0, -1e6]), 1), (np.array([-3.0, 40.0, 2.0, 0.0, 7.0]), 4)],
        names=["three logits", "two logits", "equal logits", "huge logits ±1e6", "five logits"],
    ),
)

register(
    "09.lecun_variance",
    "Inputs x have d_in = 16 components of variance 1. Each entry of W_Q is drawn independently "
    "with mean 0 and variance σ². Which σ² makes every component of q = W_Q x have variance 1?",
    "A component of q is a sum of d_in independent products w·x; add up their variances.",
    numeric_checker(1 / 16, rtol=1e-6, what="σ²"),
)
