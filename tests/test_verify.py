"""sdpa_helpers.verify: the one-line checks of the notebooks' main line refuse what they cannot judge."""

import numpy as np

from conftest import raises_naming
from sdpa_helpers import verify


def test_verify_close_refuses_an_array_naming_value():
    raises_naming(lambda: verify.verify_close("x", np.array([1.0, 2.0]), 1.0, rtol=1e-3), TypeError, ["value"])
    raises_naming(lambda: verify.verify_close("x", 1.0, np.array([1.0, 2.0]), rtol=1e-3), TypeError,
                  ["expected"])
    verify.verify_close("x", np.array(1.0), np.float64(1.0), rtol=1e-3)  # one number in an array is fine


def test_verify_refuses_an_array_of_several_truth_values():
    raises_naming(lambda: verify.verify("x", np.array([True, False])), TypeError, ["condition", ".all()"])
    verify.verify("one numpy bool", np.bool_(True))
    verify.verify("a 0-d array", np.array(True))
