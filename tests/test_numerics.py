"""sdpa_helpers._numerics: exact power-of-2 rescaling and the one histogram helper, against independent references."""

import math

import numpy as np
import pytest
from conftest import raises_naming

from sdpa_helpers import overview, small_samples, variance
from sdpa_helpers._numerics import HIGH, LOW, binary_exponent, histogram_fractions, is_moderate
from sdpa_helpers.sampling import make_rng


@pytest.mark.parametrize("x", [0.0, 5e-324, 2.2e-308, 1e-300, 0.5, 0.75, 1.0, 3.0, 1e300, 1.7e308])
def test_binary_exponent_matches_math_frexp_and_rescales_exactly(x):
    e = int(binary_exponent([x])[0])
    assert e == math.frexp(x)[1]
    if x:
        assert 0.5 <= np.ldexp(x, -e) < 1 and np.ldexp(np.ldexp(x, -e), e) == x  # exact both ways


def test_is_moderate_bounds():
    assert is_moderate([0.0, LOW, 1.0, HIGH]) and is_moderate(np.zeros((2, 3)))
    assert not is_moderate([LOW / 2]) and not is_moderate([1.0, HIGH * 2])


def test_histogram_fractions_against_a_loop():
    values = make_rng(4).standard_normal(300) * 1.5
    edges = np.array([-2.0, -0.5, 0.0, 0.3, 2.0])  # unequal widths
    loop = [sum(lo <= v < hi for v in values) / values.size for lo, hi in zip(edges[:-1], edges[1:])]
    loop[-1] += sum(v == edges[-1] for v in values) / values.size  # numpy's last bin is closed
    fractions = histogram_fractions(values, edges)
    assert np.allclose(fractions, loop, rtol=1e-15) and fractions.sum() < 1  # values outside count in the total
    density = histogram_fractions(values.reshape(20, 15), edges, density=True)  # any shape, flattened
    assert np.allclose(density, np.array(loop) / np.diff(edges), rtol=1e-15)
    inside = values[(values >= -2) & (values <= 2)]
    assert np.allclose(histogram_fractions(inside, edges, density=True), np.histogram(inside, edges, density=True)[0])


def test_the_three_public_histograms_are_this_one():
    values, edges = make_rng(5).standard_normal(200), np.linspace(-2, 2, 9)
    density = histogram_fractions(values, edges, density=True)
    assert np.array_equal(overview.density_histogram(values, edges), density)
    assert np.array_equal(variance.histogram_density(values, edges), density)
    assert np.array_equal(small_samples.bin_fractions(values, edges), histogram_fractions(values, edges))


@pytest.mark.parametrize("call,exc,words", [
    (lambda: histogram_fractions([], [0.0, 1.0]), ValueError, ["values", "at least one"]),
    (lambda: histogram_fractions([1.0, np.nan], [0.0, 1.0]), ValueError, ["values"]),
    (lambda: histogram_fractions(["a"], [0.0, 1.0]), TypeError, ["values"]),
    (lambda: histogram_fractions([1.0], [1.0, 0.0]), ValueError, ["edges", "increasing"]),
    (lambda: histogram_fractions([1.0], [1.0]), ValueError, ["edges"]),
    (lambda: histogram_fractions([1.0], [[0.0, 1.0]]), ValueError, ["edges", "1-D"]),
    (lambda: histogram_fractions([1.0], 1.0), ValueError, ["edges"]),
    (lambda: histogram_fractions([], [0.0, 1.0], values_name="samples"), ValueError, ["samples"]),
    (lambda: histogram_fractions([1.0], [2.0, 1.0], edges_name="bins"), ValueError, ["bins"]),
])
def test_bad_input_names_the_callers_parameter(call, exc, words):
    raises_naming(call, exc, words)
