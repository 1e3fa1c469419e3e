"""The scale vocabulary: one resolver, one set of names, the figure styles keyed by them."""

import math

import numpy as np
import pytest

from sdpa_helpers import plots
from sdpa_helpers.scales import D_K_CHOICES, SCALINGS, check_scaling, scale_factor


@pytest.mark.parametrize("d_k", [1, 2, 7, 64, 4096, 2**20])
def test_named_scalings_are_powers_of_d_k(d_k):
    assert scale_factor("unscaled", d_k) == 1.0
    assert scale_factor("sqrt", d_k) == scale_factor(None, d_k) == pytest.approx(1 / math.sqrt(d_k), rel=1e-15)
    assert scale_factor("inv_d", d_k) == pytest.approx(1 / d_k, rel=1e-15)
    assert scale_factor(0.25, d_k) == 0.25
    assert scale_factor(np.float32(0.5), d_k) == 0.5


def test_d_k_beyond_the_range_is_a_clear_error():
    assert scale_factor(None, 2**20) == 2.0**-10
    for d_k in (2**20 + 1, 10**400):
        with pytest.raises(ValueError, match="d_k must be at most 2"):
            scale_factor("unscaled", d_k)


@pytest.mark.parametrize("bad,error,words", [
    ("half", ValueError, ["scale must be one of", "'unscaled'", "'sqrt'", "'inv_d'", "half"]),
    (0.0, ValueError, ["scale", "> 0"]),
    (-1.0, ValueError, ["scale", "> 0"]),
    (math.inf, ValueError, ["scale", "finite"]),
    (True, TypeError, ["scale"]),
    ([0.5], TypeError, ["scale"]),
])
def test_bad_scales_name_the_parameter(bad, error, words):
    with pytest.raises(error) as info:
        scale_factor(bad, 64)
    assert all(w in str(info.value) for w in words), str(info.value)
    with pytest.raises(error) as info:
        scale_factor(bad, 64, name="c")
    assert str(info.value).startswith("c ")


@pytest.mark.parametrize("d_k,error", [(0, ValueError), (-4, ValueError), (2.0, TypeError), ("64", TypeError)])
def test_bad_d_k_names_d_k(d_k, error):
    with pytest.raises(error, match="d_k"):
        scale_factor(None, d_k)


def test_check_scaling_and_the_figure_styles_share_the_names():
    assert [check_scaling("scale", s) for s in SCALINGS] == list(SCALINGS)
    assert set(plots.SCALING_STYLES) == set(SCALINGS)
    colours = {style["color"] for style in plots.SCALING_STYLES.values()}
    assert len(colours) == len(SCALINGS)


def test_d_k_choices_are_the_powers_of_two_to_4096():
    assert D_K_CHOICES == tuple(2**i for i in range(13))


@pytest.mark.parametrize("call,exc,name", [
    (lambda: scale_factor("half", 4), ValueError, "scale"),
    (lambda: scale_factor("sqrt", 0), ValueError, "d_k"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
