"""Exercises of notebook 01 (dot products)."""

import numbers
import tracemalloc

import numpy as np

from ..dot_products import cosine_moments
from . import Slip, function_checker, numeric_checker, register


def _rowwise_dot(A, B):
    """Reference: the dot product of each row of A with the same row of B, shape (n,)."""
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    return np.einsum("ij,ij->i", A, B)  # (n, d), (n, d) -> (n,)


def shape_checker(expected: tuple, slips: dict[tuple, str] | None = None):
    """A checker for an array shape, a tuple of integers checked exactly; ``slips`` maps a wrong shape a
    known mistake gives to what that mistake is. A matrix or a single number is told that a shape is a tuple."""
    expected = tuple(int(n) for n in expected)

    def not_a_shape(answer):
        if isinstance(answer, np.ndarray) and answer.ndim > 1 or (
                isinstance(answer, (list, tuple)) and any(isinstance(a, (list, tuple, np.ndarray)) for a in answer)):
            return ("that looks like a matrix; answer with the shape itself, a tuple of integers "
                    "such as (1, 2) -- in numpy, `(Q @ K.T).shape`.")
        if isinstance(answer, numbers.Number) or (isinstance(answer, np.ndarray) and answer.ndim == 0):
            return f"a shape has one integer per axis; give a tuple of {len(expected)} integers, e.g. (1, 2)."
        if isinstance(answer, (list, tuple)) and len(answer) != len(expected):
            return f"this product has {len(expected)} axes, so its shape has {len(expected)} entries."
        return None

    return numeric_checker(expected, what="the shape", before=not_a_shape,
                           slips=[Slip(shape, means) for shape, means in (slips or {}).items()],
                           not_whole="every entry of a shape is a whole number of rows or columns.")


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
        Slip(int(np.sum(_HAND_Q) * np.sum(_HAND_K)), "(sum of q) times (sum of k), or the sum with the third product "
                                                      "left out: multiply the matching components, then add all "
                                                      "three products"),
        Slip(int(np.sum(np.abs(_HAND_Q * _HAND_K))), "the products added without their signs: 3 * (-2) is -6"),
    ]),
)

register(
    "01.qk_shape",
    "Q has shape (5, 64) and K has shape (7, 64). What is the shape of Q @ K.T? Answer as a tuple of integers.",
    "Write out the shapes of the product: (n_q, d_k) @ (d_k, n_k). Which dimension disappears?",
    shape_checker((5, 7), slips={
        (7, 5): "the shape of K @ Q.T, keys as rows; in Q @ K.T each row is one query (5 of them)",
        (5, 64): "the shape of Q itself; the shared d_k = 64 is summed away by the product",
    }),
)

register(
    "01.frobenius",
    "For A = [[1, -2], [3, 0]] and B = [[2, 1], [-1, 5]], compute the Frobenius product <A, B>_F (an integer).",
    "Multiply entry by entry (the Hadamard product), then add all four entries.",
    numeric_checker(int(np.sum(_FRO_A * _FRO_B)), what="the Frobenius product", slips=[
        Slip(int(np.trace(_FRO_A @ _FRO_B)), "trace(A B) (the matrix product without the transpose), or the "
                                             "entry-by-entry products added without their signs; the Frobenius "
                                             "product is trace(A^T B), the signed sum of the entry-by-entry products"),
        Slip(int(np.sum(_FRO_A @ _FRO_B.T)), "the sum of every entry of A B^T, every row of A with every row of B; "
                                             "the Frobenius product pairs row i with row i only"),
        Slip(int(np.sum((_FRO_A * _FRO_B)[0])), "the first row's products only, the dot of row 1 of A with row 1 "
                                                "of B; the Frobenius product adds the row-wise dots of every row"),
    ]),
)

def _peak_bytes(fn, *args) -> int:
    """The most memory (bytes, numpy's arrays included) allocated at once while ``fn(*args)`` runs."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn(*args)
        return max(tracemalloc.get_traced_memory()[1] - base, 0)
    finally:
        if not was_tracing:
            tracemalloc.stop()


_PROBE_N = 2000  # rows of the probe: the full table A @ B.T takes 32 MB, the n row-wise dots 16 kB
_PROBE = (_rng.standard_normal((_PROBE_N, 3)), _rng.standard_normal((_PROBE_N, 3)))


#: The classic wrong functions of 01.rowwise_dot, and what each does.
_ROWWISE_SLIPS = [
    (lambda A, B: np.sum(np.asarray(A) * np.asarray(B)), "adds every product into one number: sum each row (axis=1)"),
    (lambda A, B: np.sum(np.asarray(A) * np.asarray(B), axis=0),
     "sums each column (axis=0): the dot product of row i sums along the row, axis=1"),
    (lambda A, B: np.asarray(A) @ np.asarray(B).T,
     "returns the full table A @ B.T; the row-wise dots are n of its entries"),
]


def _no_full_table(fn):
    """After the cases pass: on ``n = 2000`` rows of length 3, building ``A @ B.T`` (as ``np.diag(A @ B.T)``
    does) holds ``8 n^2`` bytes = 32 MB at once; the row-wise ways a few ``8 n d`` bytes (48 kB)."""
    table_bytes = 8 * _PROBE_N**2
    try:
        peak = _peak_bytes(fn, *(a.copy() for a in _PROBE))
    except Exception:  # the cases passed; a failure on the probe alone is not the learner's to read
        return None
    if peak >= table_bytes / 2:
        return False, (f"right numbers, but on {_PROBE_N} rows your function held {peak / 1e6:.0f} MB at once: "
                       f"it builds the full {_PROBE_N} x {_PROBE_N} table A @ B.T ({table_bytes / 1e6:.0f} MB) "
                       f"to keep {_PROBE_N} of its entries. Multiply entry by entry, then sum each row.")
    return None


register(
    "01.rowwise_dot",
    "Write rowwise_dot(A, B): for A and B of shape (n, d), return the shape-(n,) array of the dot "
    "products of row i of A with row i of B.",
    "Start from the Hadamard product A * B: which axis do you sum over? Do not compute the full "
    "table A @ B.T.",
    function_checker(_rowwise_dot, _CASES, names=_NAMES, slips=_ROWWISE_SLIPS, after=_no_full_table),
)

register(
    "01.cos_spread",
    "Predict: q and k have d_k = 256 independent standard normal components. What is the standard "
    "deviation of cos(theta), the cosine of the angle between them (three significant figures)?",
    "Solve q·k = |q| |k| cos(theta) for cos(theta): how long are |q| and |k| typically, and how wide does "
    "q·k spread (sections 5 and 6)?",
    numeric_checker(cosine_moments(256).std, what="the standard deviation of cos(theta)", slips=[
        Slip(cosine_moments(256).var, "the variance of cos(theta); the spread is its square root"),
        Slip(np.sqrt(256), "sqrt(d_k), the spread of q.k itself; cos(theta) is q.k divided by the lengths |q| |k|"),
        Slip(np.sqrt(256 * cosine_moments(256).var),
             "the spread of sqrt(d_k) cos(theta), the rescaled cosine of section 6's figure (the same at every "
             "d_k); the question asks for the spread of cos(theta) itself, not of the rescaled cosine"),
    ]),
)
