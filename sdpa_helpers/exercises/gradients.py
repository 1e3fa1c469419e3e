"""Exercises of notebook 06 (vanishing gradients)."""

import numpy as np

from ..attention import softmax, softmax_jacobian
from ..gradients import finite_difference_jacobian, logit_gradient
from . import Slip, choice_checker, function_checker, numeric_checker, register

_HALF = np.array([0.5, 0.5])
_P3 = np.array([0.7, 0.2, 0.1])
_WRONG, _TARGET = np.array([0.99, 0.01]), 1  # saturated on key 1, the target is key 2 (index 1)

register(
    "06.jacobian_half",
    "What is the Jacobian of the softmax (a 2x2 array) where p = [0.5, 0.5]? (three significant figures)",
    "J[i, j] = p_i (δ_ij − p_j): the diagonal holds p_i (1 − p_i), the rest −p_i p_j.",
    numeric_checker(softmax_jacobian(_HALF), what="the Jacobian", slips=[
        Slip(np.abs(softmax_jacobian(_HALF)), "J with + p_i p_j off the diagonal: the entries there are −p_i p_j"),
        Slip(np.diag(_HALF), "diag(p) alone: the − p pᵀ term is missing"),
        Slip(np.diag(_HALF) - np.outer(_HALF, _HALF) * (1 - np.eye(2)),
             "J with p_i on the diagonal: − p_i p_j applies there too, so J[i, i] = p_i (1 − p_i)"),
    ]),
)

register(
    "06.largest_entry",
    "For p = [0.7, 0.2, 0.1], what is the largest entry of the softmax Jacobian diag(p) − p pᵀ? "
    "(three significant figures)",
    "Off the diagonal every entry is negative; on it, p_i (1 − p_i). Compare the three.",
    numeric_checker(softmax_jacobian(_P3).max(), what="the largest entry", slips=[
        Slip(_P3.max(), "the largest weight p_max, not the largest entry of J"),
        Slip(_P3.max() ** 2, "p_i² on the diagonal: the diagonal holds p_i (1 − p_i)"),
        Slip(round(float(np.min(softmax_jacobian(_P3)[~np.eye(3, dtype=bool)])), 12),  # -0.14, as typed
             "−p_1 p_2, the off-diagonal entry largest in size; off the diagonal every entry is negative, so "
             "the largest entry is not there"),
    ]),
)

#: Logits at which the learner's Jacobian (a function of p = softmax(z)) is compared with
#: central differences of the softmax itself (not p = [0.5, 0.5]: a failure would print 06.jacobian_half's answer).
_LOGITS = [np.array([0.0, 1.0]), np.array([1.0, -0.5, 2.0]), np.array([0.3, -1.2, 0.8, 2.5, -0.1]),
           np.array([12.0, 0.0, -3.0])]
_NAMES = ["2 keys", "3 keys", "5 keys", "nearly one-hot p"]
#: Central-difference step and tolerance: truncation <= h^2/48 (third derivatives of the
#: softmax are at most 1/8), rounding about eps/h; 1e-8 covers both with a wide margin.
_H, _TOL = 1e-5, 1e-8


def _finite_difference_reference(p):
    """Central differences of the softmax at logits z = ln p (softmax(ln p) = p), shape (n, n)."""
    return finite_difference_jacobian(softmax, np.log(np.asarray(p, dtype=float)), h=_H)


def _p(p):
    return np.asarray(p, dtype=float)


#: The two classic slips (the sign, and p * p or p @ p where the outer product is meant), and diag(p) alone.
_JACOBIAN_SLIPS = [
    (lambda p: np.outer(_p(p), _p(p)) - np.diag(_p(p)),
     "has every sign flipped: it computes p pᵀ − diag(p); J[i, i] = p_i (1 − p_i) is positive"),
    (lambda p: np.diag(_p(p)) - _p(p) * _p(p),
     "subtracts p * p, which multiplies entry by entry (n numbers, broadcast along each row); p pᵀ is the "
     "n x n matrix of every product p_i p_j"),
    (lambda p: np.diag(_p(p)) - _p(p) @ _p(p),
     "subtracts p @ p, one number (the dot product); p pᵀ is the n x n matrix of every product p_i p_j"),
    (lambda p: np.diag(_p(p)), "returns diag(p) alone: the − p pᵀ term is missing"),
]

_check_jacobian = function_checker(_finite_difference_reference, [(softmax(z),) for z in _LOGITS],
                                   rtol=0.0, atol=_TOL, names=_NAMES, slips=_JACOBIAN_SLIPS)


register(
    "06.softmax_jacobian",
    "Write softmax_jacobian(p) returning the n x n matrix J[i, j] = ∂p_i/∂z_j for a probability "
    "vector p = softmax(z) of shape (n,).",
    "Start from J[i, j] = p_i (δ_ij − p_j) and split it into two matrices: one that is zero off the "
    "diagonal, and one holding every product p_i p_j. Look up which numpy functions build each.",
    _check_jacobian,
)

register(
    "06.cross_entropy_grad",
    "p = softmax(z) = [0.99, 0.01] and the loss is cross-entropy on p with target key 2, L = -ln p_2. "
    "What is the norm of dL/dz? (three significant figures)",
    "Section 1 gives dL/dz = J^T g, with g = dL/dp and section 2's J; start from what L = -ln p_2 "
    "gives for g.",
    numeric_checker(np.linalg.norm(logit_gradient(_WRONG, -np.eye(2)[_TARGET] / _WRONG[_TARGET])),
                    what="the norm of dL/dz", slips=[
        Slip(_WRONG[0], "the size of one entry of dL/dz, not the norm of the whole vector"),
        Slip(round(float(np.abs(_WRONG - np.eye(2)[_TARGET]).sum()), 12),
             "the sum of the entries' sizes (the L1 norm), or the bound ‖J‖_F ‖g‖ = 0.0198 × 100, an upper limit; "
             "the norm asked is the Euclidean one of J g itself, the root of the sum of its squares"),
        Slip(np.linalg.norm(-np.eye(2)[_TARGET] / _WRONG[_TARGET]),
             "‖g‖ = ‖dL/dp‖, the gradient with respect to p; dL/dz is J g, and J shrinks it"),
        Slip(np.sqrt(2), "p taken as exactly one-hot, (1, 0): here p is (0.99, 0.01)"),
        Slip(np.linalg.norm(softmax_jacobian(_WRONG)),
             "‖J‖_F, the size of the Jacobian; the question asks for the size of the vector J g, with g = (0, −1/p_2)"),
        Slip(np.linalg.norm(logit_gradient(_WRONG, -np.eye(2)[_TARGET])),
             "J·(0, −1): dL/dp_2 is −1/p_2, not −1, and that 1/p_2 is what escapes the bound"),
        Slip(float(f"{np.linalg.norm(logit_gradient(_WRONG, -np.eye(2)[_TARGET])):.2g}"),  # as a learner writes it
             "J·(0, −1): dL/dp_2 is −1/p_2, not −1, and that 1/p_2 is what escapes the bound"),
        Slip(round(2 * (1 - _WRONG.max()), 12), "the bound 2 (1 − max p) on ‖J‖_F; dL/dz = J g with an unbounded g"),
        Slip(round(2 * (1 - _WRONG.max()) / _WRONG[_TARGET], 12),
             "the bound ‖J‖_F ‖g‖ ≤ 2 (1 − max p) · 1/p_2 = 0.02 × 100, an upper limit, not the gradient itself"),
    ]),
)

register(
    "06.mean_vs_typical",
    "Unscaled, at d_k = 4096, the mean gradient to the query is larger than the scaled one. Does that "
    "larger mean show that unscaled attention learns better? (a) yes; (b) no, a few near ties carry the mean; "
    "(c) no, the bound ||Jᵀg|| <= ||J||_F ||g|| fails there. Answer with a letter.",
    "Compare the mean with the median in section 5, and ask which queries the near ties are.",
    choice_checker("b", {"a": "a bigger mean signal: but the median query gets below 1e-10",
                         "b": "a few near ties carry the mean; the typical query gets almost nothing",
                         "c": "the bound fails: it holds for every query; near ties just have a J that is not small"}),
)
