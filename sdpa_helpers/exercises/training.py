"""Exercises of notebook 09 (training with and without the scale)."""

import numpy as np

from ..attention import softmax
from . import Slip, choice_checker, function_checker, numeric_checker, register

#: The small numbers of exercise 09.logit_grad_w_q (also printed in the notebook).
LOGIT_GRAD_W_K = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 1.0]])  # (d_k, d_in) = (2, 3)
LOGIT_GRAD_X = np.array([1.0, 2.0, 0.0])
LOGIT_GRAD_Y = np.array([0.0, 1.0, 1.0])
#: d_k and the scaled model's learning rate of exercise 09.reparam_lr.
REPARAM_D_K, REPARAM_LR = 256, 1.0


def _softmax_ce_backward(z, t):
    """Reference: dL/dz = softmax(z) - e_t for L = -log softmax(z)[t]."""
    g = softmax(np.asarray(z, dtype=float))
    g[..., t] -= 1.0
    return g


def _logit_grad_checker():
    """The numeric checker of 09.logit_grad_w_q, with its classic slips (two of them of another shape
    than the answer's 2×3: recognised in their own shape)."""
    x, y, k = LOGIT_GRAD_X, LOGIT_GRAD_Y, LOGIT_GRAD_W_K @ LOGIT_GRAD_Y
    return numeric_checker(np.outer(k, x), what="the gradient", slips=[
        Slip(np.outer(LOGIT_GRAD_W_K @ x, y), "x and y swapped: the key is k = W_K y, and x enters through q = W_Q x"),
        Slip(np.outer(y, x), "y xᵀ, with W_K left out: the factor is the key k = W_K y (2 numbers), not y itself"),
        Slip(np.outer(x, k), "x kᵀ, the transpose: the gradient has W_Q's shape, 2×3"),
        Slip(-np.outer(k, x), "the right size with the wrong sign: q·k grows with each (W_Q)_ia by k_i x_a"),
        Slip(np.outer(k, y), "k yᵀ: y is the key's input; W_Q multiplies x, so x is the second factor"),
        Slip(np.outer(np.abs(LOGIT_GRAD_W_K) @ y, x), "the key k = W_K y with a minus sign of W_K lost: "
             "work out k's two entries again, term by term"),
    ])


register(
    "09.logit_grad_w_q",
    "For q = W_Q x and k = W_K y, the logit is q·k. With the W_K, x and y given in the notebook, "
    "what is the gradient of q·k with respect to W_Q (a 2×3 array of integers)?",
    "Hold k = W_K y fixed and write q·k = sum_i k_i (W_Q x)_i as a sum over the entries of W_Q: "
    "which terms contain the entry (W_Q)_ia, and with what factor?",
    _logit_grad_checker(),
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
        slips=[(lambda z, t: softmax(np.asarray(z, dtype=float)), "returns softmax(z) alone: the target's −z_t "
                "term is missing"),
               (lambda z, t: -_softmax_ce_backward(z, t),
                "has every sign flipped: differentiate −z_t + log Σ exp(z_j)")],
    ),
)

register(
    "09.reparam_lr",
    f"You drop the 1/√d_k at d_k = {REPARAM_D_K} and multiply the initial W_Q and W_K by d_k^(-1/4). Which "
    f"SGD learning rate on W_Q and W_K makes this unscaled model follow the scaled model trained "
    f"with η = {REPARAM_LR:g} step for step (three significant figures)?",
    "The gradient with respect to the rescaled weights is d_k^(1/4) times larger, and a step of the "
    "rescaled weights moves the original ones d_k^(1/4) times as far.",
    numeric_checker(REPARAM_LR / np.sqrt(REPARAM_D_K), what="the learning rate", slips=[
        Slip(REPARAM_LR * REPARAM_D_K**-0.25, "η·d_k^(-1/4): only one of the two d_k^(1/4) factors"),
        Slip(REPARAM_LR / REPARAM_D_K, "η/d_k: the two factors are d_k^(1/4) each, d_k^(1/2) together"),
        Slip(REPARAM_LR * np.sqrt(REPARAM_D_K), "η·√d_k: the rate of the unscaled model read backwards, "
             "not the rate that makes it follow the scaled one"),
    ]),
)

register(
    "09.median_with_never",
    "Twenty runs: 5 reach 90 % accuracy within 300 steps (at steps 260, 266, 274, 280, 288), 15 never do. What is the "
    "median number of steps to 90 %? (a) 274, the median of the 5 that got there; (b) more than 300: "
    "over half never got there within the run; (c) 288, the slowest run that got there. Answer with a letter.",
    "Sort all twenty runs, counting a run that never got there as slower than any that did; which run is in "
    "the middle?",
    choice_checker("b", {"a": "274 is the median of the 5 runs that got there only: it drops the 15 slowest",
                         "b": "more than 300 steps",
                         "c": "288 is the slowest run that got there: the 15 that never did are slower still"}),
)

register(
    "09.read_out_lr",
    "Suppose the read-out's gain β were learned too, by SGD with rate η, beside W_Q and W_K. To make the "
    "unscaled model with initial W_Q, W_K times d_k^(-1/4) follow the scaled one, which rate does β need? "
    "(a) η/√d_k, like W_Q and W_K; (b) η, unchanged; (c) none works: the equivalence breaks. Answer with a letter.",
    "Does the rescaling of W_Q and W_K change how the loss depends on β?",
    choice_checker("b", {"a": "η/√d_k, like W_Q and W_K: their d_k^(1/4) factors come from rescaling them; "
                              "ask whether β is rescaled",
                         "b": "η, unchanged",
                         "c": "none works: ask whether rescaling W_Q and W_K changes how the loss depends on β"}),
)
