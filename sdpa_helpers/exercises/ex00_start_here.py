"""Exercises of notebook 00 (start here)."""

from . import numeric_checker, register

register(
    "00.bert_d_k",
    "BERT-base has d_model = 768 and 12 heads. What is its d_k?",
    "d_k is the model dimension shared out equally between the heads.",
    numeric_checker(768 / 12, what="d_k"),
)

register(
    "00.std_unscaled",
    "With d_k = 256 and unit-variance components, what is the standard deviation of q·k?",
    "The variance of q·k is d_k; the standard deviation is its square root.",
    numeric_checker(16.0, rtol=1e-3, what="the standard deviation"),
)
