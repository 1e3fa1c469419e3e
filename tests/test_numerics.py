"""sdpa_helpers._numerics: the one histogram helper and the error-settings context, against independent references."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

from conftest import MATH_MODULES, raises_naming
from sdpa_helpers import gradients, overview, sampling, saturation, small_samples, variance
from sdpa_helpers._numerics import histogram_fractions
from sdpa_helpers.sampling import make_rng
from sdpa_helpers.scales import D_K_CHOICES


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


def test_the_public_histograms_are_this_one():
    values, edges = make_rng(5).standard_normal(200), np.linspace(-2, 2, 9)
    density = histogram_fractions(values, edges, density=True)
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


# -- a learner's np.seterr changes no result (issue 27, item 3) ----------------------------------

def _doctests(module_name: str):
    """The doctest examples of one math module (or of every module of a math package)."""
    module = importlib.import_module(f"sdpa_helpers.{module_name}")
    modules = [module] + [importlib.import_module(f"{module.__name__}.{info.name}")
                          for info in pkgutil.iter_modules(getattr(module, "__path__", []))]
    finder = doctest.DocTestFinder()
    return [t for m in modules for t in finder.find(m) if t.examples and t.name.startswith(m.__name__)]


@pytest.mark.slow  # every doctest of the math layer once more: about 35 s of CPU
@pytest.mark.parametrize("module_name", MATH_MODULES)
def test_every_doctest_passes_under_np_seterr_raise(module_name):
    """``np.seterr(all="raise")`` (a debugging habit) turns no harmless underflow into an error."""
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    old = np.seterr(all="raise")
    try:
        for test in _doctests(module_name):
            runner.run(test, out=lambda text: None)
    finally:
        np.seterr(**old)
    assert runner.failures == 0, f"{runner.failures} doctest example(s) of {module_name} fail under seterr raise"


#: The main-line calls of notebooks 00, 05 and 06 that underflowed into a FloatingPointError.
NOTEBOOK_CALLS = {  # with the notebooks' sizes: rarer underflows need as many draws
    "00 effects": lambda: [overview.effects(d, "unscaled", rng=0) for d in overview.D_KS],  # (uncached)
    "05 saturation_curves": lambda: saturation.saturation_curves(D_K_CHOICES, 16, 400, "unscaled", rng=0),
    "05 slide_medians": lambda: saturation.slide_medians(4096, 16, 200, seeds=range(2)),
    "06 gradient_curves": lambda: gradients.gradient_curves(D_K_CHOICES, 8, 2000, scale="unscaled", rng=0),
    "06 jacobian_panels": lambda: gradients.jacobian_panels(D_K_CHOICES, sampling.prefix_logits(D_K_CHOICES, 8, rng=1)),
}


def _flat(result) -> list:
    """The numbers in a result of nested tuples (strings and other fields left out)."""
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flat(r)]
    arr = np.asarray(result)
    return [arr] if np.issubdtype(arr.dtype, np.number) else []


@pytest.mark.parametrize("call", NOTEBOOK_CALLS.values(), ids=list(NOTEBOOK_CALLS))
def test_notebook_calls_give_the_same_numbers_under_np_seterr_raise(call):
    expected = _flat(call())
    with np.errstate(all="raise"):
        got = _flat(call())
    assert len(got) == len(expected) and all(np.array_equal(a, b, equal_nan=True) for a, b in zip(got, expected))
