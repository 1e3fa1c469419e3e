"""Exercises of notebook 03 (small experiments mislead)."""

import numpy as np

from .. import theory
from ..small_samples import THREAD_BIG_SCALED, z_score
from . import Slip, choice_checker, function_checker, numeric_checker, register

register(
    "03.np_var_mean",
    "You multiply two 3x3 matrices of independent standard normal numbers and call np.var (ddof=0) "
    "on the 9 entries of the product. What is the expected value of the result (three significant "
    "figures)?",
    "First find the variance of one entry (how many products does it sum?). Then recall what "
    "section 2 showed about dividing by m rather than m - 1.",
    numeric_checker(theory.matmul_sample_variance_moments(3, 3, ddof=0).mean, what="the expected value",
                    slips=[Slip(theory.matmul_sample_variance_moments(3, 3, ddof=1).mean,
                                "the average with ddof=1 (divide by m - 1); np.var divides by m"),
                           Slip((3 - 1) / 3 * 3.0, "(m - 1)/m with m = 3, the matrix size; np.var pools "
                                                   "all m = 9 entries"),
                           Slip(theory.matmul_sample_variance_moments(3, 3, ddof=0).mean / 3,
                                "the expected value of s^2 / d, as if each entry had variance 1; an entry "
                                "sums d = 3 products"),
                           Slip(theory.matmul_sample_variance_moments(2, 2, ddof=0).mean / 2 * 3,
                                "section 2's factor (m - 1)/m = 3/4 for m = 4 entries; here m = 9"),
                           Slip(theory.matmul_sample_variance_moments(2, 2, ddof=0).mean,
                                "section 2's answer for a 2x2 product; here each entry sums 3 products")]),
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

_BIG_SD = theory.matmul_sample_variance_moments(1111, 111, 1111).std  # SD of s^2 of the unscaled product

register(
    "03.scaled_z",
    "Section 4 printed the standard deviation of s^2 for the thread's 1111x111 @ 111x1111 product. The thread's "
    "scaled result 0.99604 is the s^2 of the same product divided by sqrt(111). How many standard deviations "
    "from its true value 1 does 0.99604 lie (three significant figures; negative if below)?",
    "Dividing every entry by sqrt(111) divides s^2 by 111. What does it do to the standard deviation of s^2?",
    numeric_checker(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111), what="the number of standard deviations",
                    slips=[Slip(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD),
                                "measured in the unscaled product's standard deviation; s^2 and its standard "
                                "deviation are both divided by 111"),
                           Slip(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111**0.5),
                                "the standard deviation divided by sqrt(111); s^2 scales with c^2 = 1/111, "
                                "and so does its standard deviation"),
                           Slip(-z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111),
                                "the right size with the wrong sign: 0.99604 lies below 1")]),
)

register(
    "03.halve_spread",
    "One experiment pools the n^2 entries of an n x n @ n x n product of standard normal matrices and "
    "computes s^2 / n. For large n, which change halves the standard deviation of s^2 / n? "
    "(a) double n; (b) multiply n by 4; (c) double the number of entries n^2. Answer with a letter.",
    "Section 3 shows how the spread of s^2 / n falls with n on log-log axes: what is the slope?",
    choice_checker("a", {"a": "double n",
                         "b": "multiply n by 4: the spread falls like 1/n, so that quarters it rather than halving it",
                         "c": "double the number of entries n^2: that multiplies n by sqrt(2) only, so the spread "
                              "falls by sqrt(2), about 1.41, not 2"}),
)
