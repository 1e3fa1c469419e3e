"""sdpa_helpers._checks: the input checks and the course's range, as every public function meets them.

Masked arrays are refused where arrays are taken; numbers beyond the course's range (|x| <= 1e100,
d_k <= 2**20) get a ValueError naming the parameter (never a bare OverflowError nor a silent inf);
every public ``scale=`` goes through ``scales.scale_factor`` and every public ``seed=`` through
``_checks.seed`` (the functions are found by walking the math layer, :data:`conftest.MATH_MODULES`).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

from conftest import MATH_MODULES, raises_naming
from sdpa_helpers import _checks, attention, sampling, scales, theory
from sdpa_helpers._numerics import histogram_fractions

MASKED = np.ma.masked_array([1.0, 1000.0], mask=[0, 1])


# --- masked arrays: refused, one place (_checks.real_array) ------------------------------------

@pytest.mark.parametrize("call, name", [
    (lambda: attention.softmax(MASKED), "x"),
    (lambda: attention.entropy(np.ma.masked_array([0.5, 0.5], mask=[0, 1])), "p"),
    (lambda: attention.layer_norm(MASKED), "x"),
    (lambda: attention.attention_scores(MASKED.reshape(1, 2), np.ones((1, 2))), "Q"),
    (lambda: theory.normal_pdf(MASKED), "x"),
    (lambda: histogram_fractions(MASKED, [0.0, 1.0, 2.0]), "values"),
])
def test_masked_arrays_are_refused_naming_the_parameter(call, name):
    raises_naming(call, TypeError, [name, "masked"])


def test_the_issues_masked_softmax_does_not_put_weight_on_the_masked_logit():
    with pytest.raises(TypeError, match="masked"):
        attention.softmax(MASKED)
    # what the message suggests works: the mask as -inf
    assert attention.softmax(MASKED.filled(-np.inf)).tolist() == [1.0, 0.0]


# --- magnitudes: a ValueError naming the parameter ---------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"mean_q": 1e101, "mean_k": 1e100}, "mean_q"),
    ({"mean_k": -1e101}, "mean_k"),
    ({"var_q": 1e101, "var_k": 1e100}, "var_q"),
    ({"scale": 1e101}, "scale"),
])
def test_sample_dot_products_never_returns_inf_silently(kwargs, name):
    raises_naming(lambda: sampling.sample_dot_products(16, 10, rng=0, **kwargs), ValueError, [name])


def test_sample_dot_products_inside_its_range_is_finite():
    s = sampling.sample_dot_products(16, 10, mean_q=1e100, mean_k=1e100, rng=0)
    assert np.isfinite(s).all() and np.allclose(s, 16e200, rtol=1e-6)


@pytest.mark.parametrize("call, name", [
    (lambda: theory.dot_product_moments(10**400), "d_k"),
    (lambda: theory.dot_product_moments(2**20 + 1), "d_k"),
    (lambda: theory.sample_variance_moments(10**400), "m"),
    (lambda: theory.dot_product_excess_kurtosis(10**400), "d_k"),
    (lambda: attention.softmax([1.0, 2.0], temperature=10**400), "temperature"),
    (lambda: theory.product_moments(mean_x=10**400), "mean_x"),
])
def test_integers_beyond_a_float_are_a_value_error_naming_the_parameter(call, name):
    raises_naming(call, ValueError, [name])


def test_random_attention_weights_checks_its_seed_before_caching():
    raises_naming(lambda: attention.random_attention_weights(4, 4, np.array(0), True), TypeError, ["seed"])
    raises_naming(lambda: attention.random_attention_weights(4, 4, [0], True), TypeError, ["seed"])
    raises_naming(lambda: attention.random_attention_weights(4, 4, -1, True), ValueError, ["seed"])
    u, s = attention.random_attention_weights(4, 4, np.int64(0), True)
    assert u.shape == (4, 4)


# --- every public scale= and seed= goes through the one shared check -----------------------------

#: Functions whose ``scale`` is not the factor on q·k at a d_k (no d_k to resolve a name at).
NOT_A_D_K_SCALE = {"theory.scaled_moments": "scale is the plain constant c of E[cX], Var(cX); any real"}


def test_the_range_is_stated_once():
    assert (_checks.MAX_ABS, _checks.MAX_D_K) == (1e100, 2**20) and scales.MAX_D_K == _checks.MAX_D_K


def _public_functions(param: str):
    found = []
    for name in MATH_MODULES:
        module = importlib.import_module(f"sdpa_helpers.{name}")
        for fname in getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")]):
            fn = getattr(module, fname, None)
            if inspect.isfunction(fn) and fn.__module__ == module.__name__:
                if param in inspect.signature(fn).parameters:
                    found.append(f"{name}.{fname}")
    return sorted(found)


def _small_calls():
    """Minimal arguments (all but the one under test) for each public function with scale= or seed=, with each
    topic's own SMALL_CALLS (:func:`_topic_small_calls`)."""
    return {**_shared_small_calls(), **_topic_small_calls()}


def _shared_small_calls():
    from sdpa_helpers import assumptions, gradients, overview, saturation, scaling, training

    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 2, 16))
    weights = training.starting_weights(16, seed=0) if hasattr(training, "starting_weights") else None
    batch = training.held_out_set(seed=0, size=8) if hasattr(training, "held_out_set") else None
    return {
        "attention.attention_scores": lambda **kw: attention.attention_scores(Q, K, **kw),
        "attention.scaled_dot_product_attention": lambda **kw: attention.scaled_dot_product_attention(Q, K, V, **kw),
        "attention.random_attention_weights": lambda **kw: attention.random_attention_weights(
            16, 4, causal=False, **{"seed": 0, **kw}),
        "sampling.sample_dot_products": lambda **kw: sampling.sample_dot_products(16, 20, rng=0, **kw),
        "sampling.query_logits": lambda **kw: sampling.query_logits(16, 4, 3, rng=0, **kw),
        "scales.scale_factor": lambda **kw: scales.scale_factor(kw.get("scale"), 16),
        "saturation.saturation_curves": lambda **kw: saturation.saturation_curves([4, 16], 4, 3, rng=0, **kw),
        "overview.effects": lambda **kw: overview.effects(16, n_keys=4, n_queries=3, rng=0, **kw),
        "overview.effects_by_d_k": lambda **kw: overview.effects_by_d_k([4, 16], n_keys=4, n_queries=3, **kw),
        "assumptions.correlated_dot_product_moments": lambda **kw: assumptions.correlated_dot_product_moments(
            16, 0.5, **kw),
        "assumptions.sample_correlated_dot_products": lambda **kw: assumptions.sample_correlated_dot_products(
            16, 20, 0.5, rng=0, **kw),
        "training.forward": lambda **kw: training.forward(weights, batch, **kw),
        "training.loss_and_gradients": lambda **kw: training.loss_and_gradients(weights, batch, **kw),
        "training.per_example_gradient_norms": lambda **kw: training.per_example_gradient_norms(weights, batch,
                                                                                               **kw),
        "training.init_statistics": lambda **kw: training.init_statistics(weights, batch, batch_size=4, **kw),
        "training.evaluate": lambda **kw: training.evaluate(weights, batch, **kw),
        "training.starting_weights": lambda **kw: training.starting_weights(16, **kw),
        "training.training_batches": lambda **kw: next(iter(training.training_batches(batch_size=8, **kw))),
        "training.held_out_set": lambda **kw: training.held_out_set(size=8, **kw),
        "assumptions.init_logit_moments": lambda **kw: assumptions.init_logit_moments("xavier", 32, 16, **kw),
        "assumptions.init_scaled_logits": lambda **kw: assumptions.init_scaled_logits("xavier", 32, d_k=16, **kw),
        "assumptions.init_scaled_logits_exact": lambda **kw: assumptions.init_scaled_logits_exact(
            "xavier", 32, d_k=16, n_samples=16, **kw),
        "scaling.attention_by_d_k": lambda **kw: scaling.attention_by_d_k([4, 16], n_keys=4, n_queries=3, **kw),
        "scaling.simulated_logit_stds": lambda **kw: scaling.simulated_logit_stds([4, 16], n=20, **kw),
        "overview.scaled_drifts": lambda **kw: overview.scaled_drifts([4, 16], n_keys=4, **kw),
        "gradients.gradient_curves": lambda **kw: gradients.gradient_curves([4, 16], 4, 3, **{"rng": 0, **kw}),
        "gradients.gradient_samples": lambda **kw: gradients.gradient_samples([4, 16], 4, 3, **{"rng": 0, **kw}),
        "gradients.typical_query_seed": lambda **kw: gradients.typical_query_seed([4, 16], 16, 4, **{"seeds": range(5),
                                                                                               **kw}),
    }


def _same(a, b) -> bool:
    """Equal results: arrays (NaN equal to NaN), tuples, dataclasses and numbers, recursively."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:
        return a == b


SCALE_FUNCTIONS = [f for f in _public_functions("scale") if f not in NOT_A_D_K_SCALE]
#: make_rng's ``seed`` is its callers' ``rng`` argument: its errors name ``rng`` (tests/test_sampling.py).
SEED_FUNCTIONS = [f for f in _public_functions("seed") if f != "sampling.make_rng"]


def _topic_small_calls() -> dict:
    """Each topic's own ``SMALL_CALLS = {"module.function": lambda **kw: ...}`` in tests/test_<module>.py (a new
    notebook's topic gives its small calls in its own test file: nothing shared is edited by hand)."""
    import importlib.util

    found = {}
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        if path.name == Path(__file__).name or "SMALL_CALLS" not in path.read_text(encoding="utf-8"):
            continue
        spec = importlib.util.spec_from_file_location(f"_small_calls_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.update(getattr(module, "SMALL_CALLS", {}))
    return found


def test_every_function_with_scale_or_seed_has_a_small_call():
    missing = [f for f in SCALE_FUNCTIONS + SEED_FUNCTIONS if f not in _small_calls()]
    assert not missing, (f"give small arguments for {missing}: in _small_calls() here, or, for a topic of its own, "
                         "in SMALL_CALLS of tests/test_<topic>.py")


@pytest.mark.parametrize("qualname", SCALE_FUNCTIONS)
def test_every_scale_goes_through_scale_factor(qualname):
    call = _small_calls()[qualname]
    assert _same(call(scale="sqrt"), call(scale=None)), "scale='sqrt' is not the default 1/sqrt(d_k)"
    assert _same(call(scale="unscaled"), call(scale=1.0)), "scale='unscaled' is not the factor 1.0"
    raises_naming(lambda: call(scale=-1.0), ValueError, ["scale"])
    raises_naming(lambda: call(scale="squareroot"), ValueError, ["scale"])


@pytest.mark.parametrize("qualname", SEED_FUNCTIONS)
def test_every_seed_goes_through_the_seed_check(qualname):
    call = _small_calls()[qualname]
    raises_naming(lambda: call(seed=-1), ValueError, ["seed", "non-negative integer"])
    raises_naming(lambda: call(seed="a"), TypeError, ["seed", "non-negative integer"])
    raises_naming(lambda: call(seed=True), TypeError, ["seed"])
    call(seed=np.int64(1))
