"""Exercises of notebook 02 (mean and variance of q·k)."""

from .. import sampling, theory
from . import numeric_checker, register

register(
    "02.var_components_3",
    "d_k = 64 and every component of q and of k has mean 0 and variance 3 (all independent). "
    "What is Var(q·k) (an integer)?",
    "First find the variance of one product q_i k_i with the product formula, then add up the d_k terms.",
    numeric_checker(theory.dot_product_moments(64, var_q=3.0, var_k=3.0).var, what="the variance"),
)

register(
    "02.general",
    "d_k = 32; each component of q has mean 1 and variance 2, each component of k has mean -1 and "
    "variance 1 (all independent). Give (E[q·k], Var(q·k)) as a pair (integers).",
    "Use the general formula of notebook 02 (section 4): work out one product q_i k_i first, then multiply by d_k. "
    "Mind the sign of the mean.",
    numeric_checker(list(theory.dot_product_moments(32, mean_q=1.0, var_q=2.0, mean_k=-1.0, var_k=1.0)),
                    what="(mean, variance)"),
)

_LAPLACE_FOURTH_MOMENT = 3.0 + sampling.EXCESS_KURTOSIS["laplace"]  # E[x^4] = 24 b^4 = 6, b = 1/sqrt(2)

register(
    "02.kurtosis_laplace",
    "With Laplace components (mean 0, variance 1) and d_k = 8, what is the excess kurtosis of q·k "
    "(three significant figures)?",
    "Take E[x^4] = 6 of one Laplace component (notebook 02, section 5 and its deep dive). "
    "Work out E[(q_i k_i)^4] for one product and its excess kurtosis, then use how the excess "
    "kurtosis of a sum of d_k independent "
    "identical terms depends on d_k.",
    numeric_checker((_LAPLACE_FOURTH_MOMENT**2 - 3.0) / 8, what="the excess kurtosis"),
)

register(
    "02.unit_logit_scale",
    "Design: every component of q and k has mean 0 and variance 4 (all independent), and d_k = 64. By what "
    "factor must q·k be multiplied so that the logits have variance 1 (three significant figures)?",
    "First find Var(q·k) with the product formula; multiplying by c multiplies the variance by c².",
    numeric_checker(theory.dot_product_moments(64, var_q=4.0, var_k=4.0).std ** -1, what="the factor"),
)
