"""Exercises of notebook 03 (small experiments mislead)."""

import numpy as np

from .. import theory
from ..small_samples import THREAD_BIG, THREAD_BIG_SCALED, z_score
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
                           Slip((3 - 1) / 3 * 3.0, "3 (m - 1)/m with m = 3, the matrix size; np.var pools "
                                                   "every entry of the product: m counts the entries"),
                           Slip(theory.matmul_sample_variance_moments(3, 3, ddof=0).mean / 3,
                                "the expected value of s^2 / d, as if each entry had variance 1; an entry "
                                "sums d = 3 products"),
                           Slip(theory.matmul_sample_variance_moments(2, 2, ddof=0).mean / 2 * 3,
                                "section 2's factor (m - 1)/m = 3/4 for m = 4 entries; here m = 9"),
                           Slip(theory.matmul_sample_variance_moments(2, 2, ddof=0).mean,
                                "section 2's answer for a 2x2 product; here each entry sums 3 products")]),
)


def _float(x):
    return np.asarray(x, dtype=float)


def _reference_variance(x, ddof):
    """The squared deviations from the mean, added, over len(x) - ddof (by hand: the task forbids np.var)."""
    return _by_hand(x, lambda n: n - ddof)


_CASES = [
    ([1.0, 2.0, 4.0, 7.0], 0),
    ([1.0, 2.0, 4.0, 7.0], 1),
    (np.array([0.5, -1.5]), 1),
    (np.array([3.0, 3.0, 3.0]), 0),
    (np.linspace(-2.0, 5.0, 9) ** 2, 1),
]

def _by_hand(x, count):
    """The squared deviations from the mean, added, over ``count`` (what each slip gets right)."""
    x = _float(x)
    return np.sum((x - x.mean()) ** 2) / count(x.size)


#: The classic wrong functions, and what each does.
_VARIANCE_SLIPS = [
    (lambda x, ddof: _by_hand(x, lambda n: n), "divides by len(x) whatever ddof is: ddof=1 divides by len(x) - 1"),
    (lambda x, ddof: _by_hand(x, lambda n: n - 1), "divides by len(x) - 1 whatever ddof is: ddof=0 divides by len(x)"),
    (lambda x, ddof: _by_hand(x, lambda n: n + ddof), "divides by len(x) + ddof: ddof is subtracted from the count"),
    (lambda x, ddof: np.sum(_float(x) ** 2) / (_float(x).size - ddof),
     "squares the values themselves: square their deviations from the mean, x - mean"),
    (lambda x, ddof: np.sqrt(_by_hand(x, lambda n: n - ddof)),
     "returns the standard deviation, the square root of the variance"),
]
#: What the task forbids: a function that calls any of these does not count.
_FORBIDDEN = {"var", "nanvar", "variance", "pvariance"}


def _names_used(code) -> set[str]:
    """Every name and attribute a function's code (and the code nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


def _calls_var(fn):
    """No np.var (nor x.var(), statistics.variance): the task is to compute it by hand."""
    code = getattr(getattr(fn, "fn", fn), "__code__", None)
    used = _names_used(code) & _FORBIDDEN if code is not None else set()
    if used:
        return (f"your function calls {sorted(used)[0]}(): the task is to compute the variance without "
                f"np.var -- from the squared deviations, by hand.")
    return None


register(
    "03.sample_variance",
    "Write sample_variance(x, ddof) without np.var: the sum of squared deviations from the mean, "
    "divided by len(x) - ddof. It must work for ddof=0 and ddof=1, on lists and 1-D arrays.",
    "Subtract the mean from every value before squaring, add the squares up, then divide by the number "
    "of values minus ddof (np.asarray(x, dtype=float) makes a list work too).",
    function_checker(_reference_variance, _CASES, rtol=1e-9, slips=_VARIANCE_SLIPS, before=_calls_var,
                     names=["[1, 2, 4, 7] with ddof=0", "[1, 2, 4, 7] with ddof=1", "two values, ddof=1",
                            "three equal values, ddof=0", "nine squares, ddof=1"]),
)

_BIG_SD = theory.matmul_sample_variance_moments(1111, 111, 1111).std  # SD of s^2 of the unscaled product

register(
    "03.scaled_z",
    "Section 4 printed the standard deviation of s^2 for the thread's 1111x111 @ 111x1111 product. The thread's "
    "scaled result 0.99604 is the s^2 of the same product with every entry divided by sqrt(111). How many "
    "standard deviations "
    "from its true value 1 does 0.99604 lie (three significant figures; negative if below)?",
    "Dividing every entry by sqrt(111) divides s^2 by 111. What does it do to the standard deviation of s^2?",
    # also the solution's own route, 110.56 against 111 in the unscaled SE: -0.679 (0.99604 is 110.56/111 rounded)
    numeric_checker(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111), what="the number of standard deviations",
                    also=[z_score(THREAD_BIG, 111.0, _BIG_SD)],
                    slips=[Slip(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD),
                                "measured in the unscaled product's standard deviation; s^2 and its standard "
                                "deviation are both divided by 111"),
                           Slip(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111**0.5),
                                "the standard deviation divided by sqrt(111); s^2 scales with c^2 = 1/111, "
                                "and so does its standard deviation"),
                           Slip(z_score(THREAD_BIG_SCALED, 1.0, _BIG_SD / 111**1.5),
                                "the standard deviation divided by 111 sqrt(111); s^2 is divided by 111 once, "
                                "and so is its standard deviation"),
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
                         "b": "multiply n by 4: that changes the spread by more than a factor 2; read the slope "
                              "in section 3",
                         "c": "double the number of entries n^2: that multiplies n by sqrt(2) only, so the spread "
                              "falls by sqrt(2), about 1.41, not 2"}),
)
