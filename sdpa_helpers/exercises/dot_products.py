"""Exercises of notebook 01 (dot products)."""

import numbers

import numpy as np

from ..dot_products import cosine_moments
from . import Slip, function_checker, numeric_checker, register


def _rowwise_dot(A, B):
    """Reference: the dot product of each row of A with the same row of B, shape (n,)."""
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    return np.einsum("ij,ij->i", A, B)  # (n, d), (n, d) -> (n,)


def shape_checker(expected: tuple):
    """A checker for an array shape given as a tuple of integers, with feedback about shapes only."""
    expected = tuple(int(n) for n in expected)

    def checker(answer):
        if isinstance(answer, np.ndarray) and answer.ndim > 1 or (
                isinstance(answer, (list, tuple)) and any(isinstance(a, (list, tuple, np.ndarray)) for a in answer)):
            return False, ("that looks like a matrix; answer with the shape itself, a tuple of integers "
                           "such as (1, 2) -- in numpy, `(Q @ K.T).shape`.")
        if isinstance(answer, numbers.Number) or (isinstance(answer, np.ndarray) and answer.ndim == 0):
            return False, f"a shape has one integer per axis; give a tuple of {len(expected)} integers, e.g. (1, 2)."
        try:
            values = list(answer)
        except TypeError:
            return False, f"expected a tuple of integers such as (1, 2), got {type(answer).__name__}."
        if not all(isinstance(v, numbers.Integral) or (isinstance(v, float) and v.is_integer()) for v in values):
            return False, "every entry of a shape is a whole number of rows or columns."
        if len(values) != len(expected):
            return False, f"this product has {len(expected)} axes, so its shape has {len(expected)} entries."
        if tuple(int(v) for v in values) == expected:
            return True, ""
        return False, "the shape is off."

    checker.expected = expected  # type: ignore[attr-defined]
    return checker


_HAND_Q, _HAND_K = np.array([2, -1, 3]), np.array([4, 0, -2])
_FRO_A, _FRO_B = np.array([[1, -2], [3, 0]]), np.array([[2, 1], [-1, 5]])


def _dot(q, k) -> int:
    return int(q @ k)


_rng = np.random.default_rng(101)
_CASES = [
    (np.array([[1.0, 2.0], [8.0, 9.0]]), np.array([[2.0, 3.0], [10.0, 2.0]])),  # the hand examples
    (_rng.standard_normal((3, 4)), _rng.standard_normal((3, 4))),  # more rows than one, not square
    (_rng.standard_normal((4, 4)), _rng.standard_normal((4, 4))),  # square: Q @ K.T has the wrong shape
    (_rng.standard_normal((1, 6)), _rng.standard_normal((1, 6))),  # a single row
    (_rng.standard_normal((5, 1)), _rng.standard_normal((5, 1))),  # d = 1
]
_NAMES = ["the hand examples", "3 rows of length 4", "4 rows of length 4", "a single row", "rows of length 1"]

register(
    "01.hand_dot",
    "Compute [2, -1, 3]·[4, 0, -2] by hand (an integer), then check it with numpy.",
    "Multiply the components position by position, then add the three products.",
    numeric_checker(_dot(_HAND_Q, _HAND_K), what="the dot product", slips=[
        Slip(int(np.sum(_HAND_Q) * np.sum(_HAND_K)), "(sum of q) times (sum of k): multiply the matching components "
                                                      "first, then add the products"),
        Slip(int(np.sum(np.abs(_HAND_Q * _HAND_K))), "the products added without their signs: 3 * (-2) is -6"),
    ]),
)

register(
    "01.qk_shape",
    "Q has shape (5, 64) and K has shape (7, 64). What is the shape of Q @ K.T? Answer as a tuple of integers.",
    "Write out the shapes of the product: (n_q, d_k) @ (d_k, n_k). Which dimension disappears?",
    shape_checker((5, 7)),
)

register(
    "01.frobenius",
    "For A = [[1, -2], [3, 0]] and B = [[2, 1], [-1, 5]], compute the Frobenius product <A, B>_F (an integer).",
    "Multiply entry by entry (the Hadamard product), then add all four entries.",
    numeric_checker(int(np.sum(_FRO_A * _FRO_B)), what="the Frobenius product", slips=[
        Slip(int(np.trace(_FRO_A @ _FRO_B)), "trace(A B), the matrix product without the transpose; the Frobenius "
                                             "product is trace(A^T B), the sum of the entry-by-entry products"),
        Slip(int(np.sum(_FRO_A @ _FRO_B.T)), "the sum of every entry of A B^T, every row of A with every row of B; "
                                             "the Frobenius product pairs row i with row i only"),
    ]),
)

register(
    "01.rowwise_dot",
    "Write rowwise_dot(A, B): for A and B of shape (n, d), return the shape-(n,) array of the dot "
    "products of row i of A with row i of B.",
    "Start from the Hadamard product A * B: which axis do you sum over? Do not compute the full "
    "table A @ B.T.",
    function_checker(_rowwise_dot, _CASES, names=_NAMES),
)

register(
    "01.cos_spread",
    "Predict: q and k have d_k = 256 independent standard normal components. What is the standard "
    "deviation of cos(theta), the cosine of the angle between them (three significant figures)?",
    "q·k = |q| |k| cos(theta); |q| and |k| are each about sqrt(d_k), and q·k has standard deviation sqrt(d_k).",
    numeric_checker(cosine_moments(256).std, what="the standard deviation of cos(theta)", slips=[
        Slip(cosine_moments(256).var, "Var(cos theta) = 1/d_k, the variance; the spread is its square root"),
        Slip(np.sqrt(256), "sqrt(d_k), the spread of q.k itself; divide by the lengths |q| |k|, about d_k"),
    ]),
)
