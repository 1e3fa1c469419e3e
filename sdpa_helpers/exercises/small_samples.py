"""Exercises of notebook 03 (small experiments mislead)."""

import numpy as np

from .. import theory
from . import choice_checker, function_checker, numeric_checker, register

register(
    "03.np_var_mean",
    "You multiply two 3x3 matrices of independent standard normal numbers and call np.var (ddof=0) "
    "on the 9 entries of the product. What is the expected value of the result (three significant "
    "figures)?",
    "First find the variance of one entry (how many products does it sum?). Then recall what "
    "section 2 showed about dividing by m rather than m - 1.",
    numeric_checker(theory.matmul_sample_variance_moments(3, 3, ddof=0).mean, what="the expected value"),
)


def _reference_variance(x, ddof):
    return np.var(np.asarray(x, dtype=float), ddof=ddof)


_CASES = [
    ([1.0, 2.0, 4.0, 7.0], 0),
    ([1.0, 2.0, 4.0, 7.0], 1),
    (np.array([0.5, -1.5]), 1),
    (np.array([3.0, 3.0, 3.0]), 0),
    (np.linspace(-2.0, 5.0, 9) ** 2, 1),
]

register(
    "03.sample_variance",
    "Write sample_variance(x, ddof) without np.var: the sum of squared deviations from the mean, "
    "divided by len(x) - ddof. It must work for ddof=0 and ddof=1, on lists and 1-D arrays.",
    "Convert x to a float array first, so that a list works too. Use x.size (or len(x)) for the "
    "number of values.",
    function_checker(_reference_variance, _CASES, rtol=1e-9,
                     names=["[1, 2, 4, 7] with ddof=0", "[1, 2, 4, 7] with ddof=1", "two values, ddof=1",
                            "three equal values, ddof=0", "nine squares, ddof=1"]),
)

register(
    "03.shared_row_cov",
    "For d_k = 64 and standard normal components, what is Cov(S_ij^2, S_ik^2) for two logits "
    "S_ij = q_i . k_j and S_ik = q_i . k_k of the same query (an integer)?",
    "Condition on the shared query q_i (law of total covariance): given q_i, are the two logits "
    "still dependent? What is E[S_ij^2 | q_i]?",
    numeric_checker(theory.shared_row_square_covariance(64), what="the covariance"),
)

register(
    "03.halve_spread",
    "One experiment pools the n^2 entries of an n x n @ n x n product of standard normal matrices and "
    "computes s^2 / n. For large n, which change halves the standard deviation of s^2 / n? "
    "(a) double n; (b) multiply n by 4; (c) double the number of entries n^2. Answer with a letter.",
    "Section 3 shows how the spread of s^2 / n falls with n on log-log axes: what is the slope?",
    choice_checker("a", {"a": "double n", "b": "multiply n by 4", "c": "double the number of entries n^2"}),
)
