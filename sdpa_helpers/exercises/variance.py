"""Exercises of notebook 02 (mean and variance of q·k): recall, apply, probe independence, design an exact check."""

from .. import sampling, theory
from . import Slip, choice_checker, numeric_checker, register

# -- 1. recall: Var(X + Y) with a covariance ---------------------------------------------------------
_VX, _VY, _COV = 2.0, 3.0, -1.0

register(
    "02.var_sum_dependent",
    "Var(X) = 2, Var(Y) = 3 and Cov(X, Y) = -1. What is Var(X + Y) (an integer)?",
    "Expand (X + Y - E[X] - E[Y])^2 as in section 2 and take the expectation of each of the three terms.",
    numeric_checker(_VX + _VY + 2 * _COV, what="Var(X + Y)", slips=[
        Slip(_VX + _VY, "the sum of the variances: that holds only when Cov(X, Y) = 0, and here X and Y are "
                        "correlated"),
        Slip(_VX + _VY + _COV, "the covariance counted once; the expansion has 2 (X - E X)(Y - E Y), "
                               "so it counts twice"),
        Slip(_VX + _VY - 2 * _COV, "the covariance with the wrong sign: + 2 Cov(X, Y), and Cov(X, Y) is negative"),
    ]),
)

# -- 2. apply: mean-0 components of variance 3 -------------------------------------------------------
_D2, _V2 = 64, 3.0

register(
    "02.var_components_3",
    "d_k = 64 and every component of q and of k has mean 0 and variance 3 (all independent). "
    "What is Var(q·k) (an integer)?",
    "First find the variance of one product q_i k_i with the product formula, then add up the d_k terms.",
    numeric_checker(theory.dot_product_moments(_D2, var_q=_V2, var_k=_V2).var, what="the variance", slips=[
        Slip(_D2 * (_V2 + _V2), "d_k times the SUM of the two variances; the product rule is "
                                "E[X^2]E[Y^2] - (E[X]E[Y])^2, and at mean 0 (E[X^2] = Var(X) = 3) that is 3 * 3 - 0"),
        Slip(_D2 * _V2, "d_k times the variance of one component: q_i k_i has variance 3 * 3, not 3"),
        Slip(theory.dot_product_moments(_D2).var, "Var(q·k) = d_k, remembered for components of variance 1; here "
                                                  "each term q_i k_i has variance E[q_i^2]E[k_i^2] = 3 * 3"),
        Slip(theory.dot_product_moments(_D2, var_q=_V2, var_k=_V2).std, "the standard deviation of q·k; the "
                                                                        "question asks for its variance"),
        Slip(theory.product_moments(var_x=_V2, var_y=_V2).var, "the variance of ONE term q_i k_i; q·k adds d_k "
                                                                "independent terms"),
    ]),
)

# -- 3. apply: non-zero means ------------------------------------------------------------------------
_D3, _MQ, _VQ, _MK, _VK = 32, 1.0, 2.0, -1.0, 1.0
_GENERAL = theory.dot_product_moments(_D3, _MQ, _VQ, _MK, _VK)

register(
    "02.general",
    "d_k = 32; each component of q has mean 1 and variance 2, each component of k has mean -1 and "
    "variance 1 (all independent). Give (E[q·k], Var(q·k)) as a pair (integers).",
    "Work out one product q_i k_i first: its mean by section 3, its variance by section 4 "
    "(E[X^2] = Var(X) + E[X]^2). Then multiply by d_k. Mind the sign of the mean.",
    numeric_checker([_GENERAL.mean, _GENERAL.var], what="(mean, variance)",
                    entry_names=("the mean", "the variance"), slips=[
        Slip([_GENERAL.mean, _D3 * _VQ * _VK], "a variance without the mean terms: Var(XY) = Var(X)Var(Y) holds "
                                               "only when the means are 0; use E[X^2]E[Y^2] - (E[X]E[Y])^2"),
        Slip([_GENERAL.mean, _D3 * (_VQ + _MQ**2) * (_VK + _MK**2)],
             "E[X^2]E[Y^2] without subtracting (E[X]E[Y])^2"),
        Slip([_GENERAL.mean, _D3 * ((_VQ + _MQ**2) * (_VK + _MK**2) - _MQ * _MK)],
             "the missing square: E[X^2]E[Y^2] - E[X]E[Y] subtracts E[X]E[Y] = -1; the rule subtracts "
             "(E[X]E[Y])^2 = 1"),
        Slip([-_GENERAL.mean, _GENERAL.var], "the mean with the wrong sign: E[q_i k_i] = E[q_i]E[k_i] = 1 * (-1)"),
        Slip([_GENERAL.mean, _D3 * (_VQ + _VK)], "a variance from adding the two variances; a product's variance "
                                                 "multiplies second moments"),
        Slip([theory.product_moments(_MQ, _VQ, _MK, _VK).mean, theory.product_moments(_MQ, _VQ, _MK, _VK).var],
             "the mean and variance of ONE term q_i k_i; q·k adds d_k independent terms"),
    ]),
)

# -- 4. probe an assumption: one number copied into every component of k ---------------------------
_D4 = 16

register(
    "02.copied_key",
    "q has d_k = 16 independent standard normal components. k is NOT built from independent components: "
    "one standard normal number y, independent of q, is copied into all 16 (k = (y, y, ..., y)). "
    "What is Var(q·k) (an integer)?",
    "Factor out y: q·k = y (q_1 + ... + q_16) = y S, a product of two independent numbers. Find E[S] and "
    "Var(S) with section 5, then apply section 4's product rule to y S.",
    numeric_checker(float(_D4), what="Var(q·k)", slips=[
        Slip(float(_D4**2), "d_k^2, as if q·k were 16 y times a number of variance 1 (true when q's components "
                            "are copies too); here q·k = y S, with S the sum of q's independent components"),
        Slip(1.0, "the variance of one term q_i y; q·k = y (q_1 + ... + q_16), and the sum has variance 16"),
        Slip(float(_D4) ** 0.5, "the standard deviation of q·k; the question asks for its variance"),
    ]),
)

# -- 5. conceptual: which exact case can catch the wrong product rule --------------------------------
register(
    "02.exact_case_design",
    "(conceptual) You want an exact enumeration (X and Y independent, each uniform on a short list of values) "
    "that tells the product rule Var(XY) = E[X^2]E[Y^2] - (E[X]E[Y])^2 from the shortcut Var(X)Var(Y). "
    "Which list works? (a) [-1, 1]  (b) [-1, 0, 1]  (c) [1, 2]  (d) [-2, 2]. Answer with a letter.",
    "Subtract the shortcut from the rule: what is left, and when is it 0?",
    choice_checker("c", {
        # each wrong letter its own reason, none naming what they share: one wrong try must not give (c) away
        "a": "[-1, 1]: both rules give 1, so it cannot tell them apart; subtract one rule from the other to see why",
        "b": "[-1, 0, 1]: both rules give 4/9; making X^2 vary is not what separates them",
        "c": "[1, 2]",
        "d": "[-2, 2]: both rules give 16; it is [-1, 1] doubled, and doubling multiplies both rules by the same 16",
    }),
)

# -- deep dive: the excess kurtosis --------------------------------------------------------------------
_LAPLACE_FOURTH_MOMENT = 3.0 + sampling.EXCESS_KURTOSIS["laplace"]  # E[x^4] = 24 b^4 = 6, b = 1/sqrt(2)
_D_KURT = 8
_NORMAL_FOURTH_MOMENT = 3.0 + sampling.EXCESS_KURTOSIS["normal"]  # E[x^4] = 3
#: Section "how fast the shape becomes normal" prints the Laplace excess kurtosis at d_k = 16 and 256.
_PRINTED_D_K = 16

register(
    "02.kurtosis_laplace",
    "With Laplace components (mean 0, variance 1) and d_k = 8, what is the excess kurtosis of q·k "
    "(three significant figures)?",
    "Take E[x^4] = 6 of one Laplace component (the kurtosis deep dive). Work out E[(q_i k_i)^4] for one "
    "product and its excess kurtosis, then use how the excess kurtosis of a sum of d_k independent "
    "identical terms depends on d_k.",
    numeric_checker((_LAPLACE_FOURTH_MOMENT**2 - 3.0) / _D_KURT, what="the excess kurtosis", slips=[
        Slip(_LAPLACE_FOURTH_MOMENT**2 - 3.0, "the excess kurtosis of ONE product; a sum of d_k independent "
                                              "terms divides it by d_k"),
        Slip((_LAPLACE_FOURTH_MOMENT - 3.0) / _D_KURT, "the component's own excess kurtosis (6 - 3) over d_k; "
                                                      "the product's fourth moment is E[x^4]^2 = 36"),
        Slip(_LAPLACE_FOURTH_MOMENT**2 / _D_KURT, "E[(q_i k_i)^4] / d_k without subtracting 3"),
        Slip((_NORMAL_FOURTH_MOMENT**2 - 3.0) / _D_KURT, "what normal components give (E[x^4] = 3); a Laplace "
                                                         "component has E[x^4] = 6"),
        Slip(theory.dot_product_excess_kurtosis(_PRINTED_D_K, sampling.EXCESS_KURTOSIS["laplace"],
                                                sampling.EXCESS_KURTOSIS["laplace"]),
             "the value printed above for d_k = 16; this question has d_k = 8"),
    ]),
)
