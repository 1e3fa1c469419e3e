"""Exercises of notebook 09 (training with and without the scale)."""

import numpy as np

from ..attention import softmax
from . import choice_checker, function_checker, numeric_checker, register

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
    "what is the gradient of q·k with respect to W_Q (a 2×3 matrix of integers)?",
    "Hold k = W_K y fixed and write q·k = sum_i k_i (W_Q x)_i as a sum over the entries of W_Q: "
    "which terms contain the entry (W_Q)_ia, and with what factor?",
    numeric_checker(np.outer(LOGIT_GRAD_W_K @ LOGIT_GRAD_Y, LOGIT_GRAD_X), what="the gradient"),
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
    "09.reparam_lr",
    "You drop the 1/√d_k at d_k = 256 and multiply the initial W_Q and W_K by d_k^(-1/4). Which "
    "SGD learning rate on W_Q and W_K makes this unscaled model follow the scaled model trained "
    "with η = 1 step for step (three significant figures)?",
    "The gradient with respect to the rescaled weights is d_k^(1/4) times larger, and a step of the "
    "rescaled weights moves the original ones d_k^(1/4) times more.",
    numeric_checker(1 / 16, what="the learning rate"),
)

register(
    "09.adam_reparam",
    "Same reparametrisation (no 1/√d_k, initial W_Q and W_K times d_k^(-1/4)), but trained with Adam. "
    "Which learning rate makes it follow the scaled model trained by Adam with learning rate η? "
    "(a) η/√d_k, as for SGD; (b) η·d_k^(-1/4); (c) η. Answer with a letter.",
    "Adam's step hardly depends on the size of the gradient: what is left is how far a step of the "
    "rescaled weights moves the original ones.",
    choice_checker("b", {"a": "η/√d_k, as for SGD", "b": "η·d_k^(-1/4)", "c": "η"}),
)

register(
    "09.lecun_variance",
    "Inputs x have d_in = 16 components of variance 1. Each entry of W_Q is drawn independently "
    "with mean 0 and variance σ². Which σ² makes every component of q = W_Q x have variance 1 "
    "(three significant figures)?",
    "A component of q is a sum of d_in independent products w·x; add up their variances.",
    numeric_checker(1 / 16, what="σ²"),
)
