"""Every cached array the package hands out is read-only or a copy (issue 27, item 4).

A learner who fills notebook 09's "never" runs (NaN) in place before averaging -- a natural step
-- must not change what every later cell and the TrainingExplorer show. For each public function
whose result comes from a cache (or a module-level array): every array it returns either refuses
a write (``ValueError: assignment destination is read-only``), or is the caller's own copy, and
in both cases the next call returns what the first one did.
"""

from __future__ import annotations

import numpy as np
import pytest

from sdpa_helpers import attention, overview, saturation, scaling, small_samples, training, variance


def _arrays(result):
    """Every ndarray in ``result`` (nested tuples, lists, dicts, named tuples)."""
    if isinstance(result, np.ndarray):
        yield result
    elif isinstance(result, dict):
        for v in result.values():
            yield from _arrays(v)
    elif isinstance(result, (tuple, list)):
        for v in result:
            yield from _arrays(v)


def _grid_steps():
    g = training.training_grid()
    return [g.steps(1024, "unscaled"), g.steps(1024, "nudged"), g.best(64, "scaled")[1]]


def _grid_arrays():
    g = training.training_grid()
    return [g.curves, g.final_accuracy, g.steps_to_90, g.nudged_steps_to_90]


CALLS = {
    "training_grid().steps/best": _grid_steps,
    "training_grid() arrays": _grid_arrays,
    "training_grid().runs": lambda: [training.training_grid().runs(64, 0.1).final.accuracy],
    "scaling.weight_bands": lambda: scaling.weight_bands(64),
    "variance.sample_dot_products_fast": lambda: variance.sample_dot_products_fast(256, 100, "uniform", 0),
    "variance.histogram_edges": lambda: variance.histogram_edges(64, "normal"),
    "overview.effects_by_d_k": lambda: overview.effects_by_d_k((1, 4), n_queries=50),
    "small_samples.relative_sample_variances": lambda: small_samples.relative_sample_variances(16),
    "attention.random_attention_weights": lambda: attention.random_attention_weights(8, 5, 0, True),
    "assumptions.init_scaled_logits": lambda: __import__("sdpa_helpers.assumptions").assumptions.init_scaled_logits(
        "lecun", 256),
    "saturation.onset_over_seeds": lambda: saturation.onset_over_seeds(1024, 2),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_writing_into_a_returned_array_raises_or_changes_nothing_later(name):
    call = CALLS[name]
    first = [a.copy() for a in _arrays(call())]
    for a in _arrays(call()):
        if a.flags.writeable:
            a[...] = 12345  # the caller's own array: anything goes
        else:
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 12345
            with pytest.raises(ValueError, match="read-only"):
                a *= 2
    again = list(_arrays(call()))
    assert len(again) == len(first)
    for before, after in zip(first, again):
        np.testing.assert_array_equal(after, before)


def test_filling_the_never_runs_in_place_is_refused_and_leaves_the_grid_alone():
    """The learner's step in notebook 09: replace NaN (never reached 90 %) by the step budget."""
    grid = training.training_grid()
    steps = grid.steps(1024, "unscaled")
    never = int(np.isnan(steps).sum())
    with pytest.raises(ValueError, match="read-only"):
        steps[np.isnan(steps)] = 3000
    mine = grid.steps(1024, "unscaled").copy()  # what the docstring says to do
    mine[np.isnan(mine)] = 3000
    assert int(np.isnan(training.training_grid().steps(1024, "unscaled")).sum()) == never
    assert not np.isnan(mine).any()


def test_the_training_explorer_shares_the_read_only_grid():
    from sdpa_helpers.widgets.training import TrainingExplorer

    explorer = TrainingExplorer()
    try:
        assert explorer.grid is training.training_grid()
        assert not explorer.grid.steps_to_90.flags.writeable
    finally:
        explorer.close()
