"""sdpa_helpers._numerics: the one histogram helper and the error-settings context, against independent references."""

import numpy as np
import pytest
from conftest import raises_naming

from sdpa_helpers import overview, small_samples, variance
from sdpa_helpers._numerics import histogram_fractions
from sdpa_helpers.sampling import make_rng


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
