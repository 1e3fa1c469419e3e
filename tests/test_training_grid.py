"""The stored grid of notebook 09 (sdpa_helpers/data/training_grid.npz): its contents agree with
themselves and with the trainer.

The slow test regenerates part of the grid. A run of the unscaled arm at large d_k is chaotic (a
last-bit change moves it), so another CPU or BLAS gives other individual runs: the test compares
what cannot change with the CPU -- the non-chaotic arms to a tight tolerance, the chaotic arm's
survival curves within their binomial standard error.
"""

import numpy as np
import pytest

from sdpa_helpers import training as T


@pytest.fixture(scope="module")
def grid():
    return T.training_grid()


def test_grid_has_its_settings_and_shape(grid):
    assert (grid.d_ks, grid.lrs, grid.seeds, grid.arms) == (T.GRID_D_KS, T.GRID_LRS, T.GRID_SEEDS, T.GRID_ARMS)
    D, S, A, L = len(T.GRID_D_KS), len(T.GRID_SEEDS), len(T.GRID_ARMS), len(T.GRID_LRS)
    assert S >= 20  # every training claim of the notebook rests on at least 20 seeds
    assert grid.curves.shape == (D, S, A, L, len(T.FIELDS), T.STEPS)
    assert grid.steps_to_90.shape == grid.final_accuracy.shape == (D, S, A, L)
    assert grid.nudged_steps_to_90.shape == (D, S, L)


def test_steps_to_90_are_those_of_the_stored_accuracy_curves(grid):
    """Batch accuracies are multiples of 1/64, exact in float16: the steps follow from the curves exactly."""
    accuracy = grid.curves[..., T.FIELDS.index("accuracy"), :].astype(float)
    assert np.array_equal(accuracy * T.BATCH_SIZE, np.round(accuracy * T.BATCH_SIZE))
    assert np.array_equal(T.steps_to_accuracy(accuracy, 0.9, 10, never=np.nan), grid.steps_to_90, equal_nan=True)


def test_reparametrised_arm_follows_the_scaled_arm_in_every_run(grid):
    """An exact identity in exact arithmetic; rounding moves no run's steps at eta <= 1 (at d_k = 4,
    eta = 3 the scaled runs are chaotic themselves, and rounding moves some)."""
    scaled, rep = (grid.steps_to_90[..., grid.arms.index(a), :grid.lrs.index(1.0) + 1] for a in ("scaled",
                                                                                                 "reparametrised"))
    assert np.array_equal(scaled, rep, equal_nan=True)


def test_the_scaled_model_learns_at_every_d_k(grid):
    i = grid.arms.index("scaled")
    at_1 = grid.steps_to_90[:, :, i, grid.lrs.index(1.0)]
    assert np.isfinite(at_1).all() and (grid.final_accuracy[:, :, i, grid.lrs.index(1.0)] > 0.99).all()


def _survival_within_se(a, b, max_steps):
    """Two sets of runs' survival curves agree within 4 binomial standard errors of their difference."""
    fa, fb = T.survival_curve(a, max_steps), T.survival_curve(b, max_steps)
    pooled = (fa + fb) / 2
    se = np.sqrt(2 * pooled * (1 - pooled) / len(a))
    return np.all(np.abs(fa - fb) <= 4 * se + 1e-12), float(np.max(np.abs(fa - fb)))


def test_nudged_runs_have_the_survival_curves_of_the_unscaled_runs(grid):
    """A 1e-12 nudge moves single chaotic runs; their survival curves stay within 4 standard errors of a
    difference (a loose bound for 5 × 7 × 300 comparisons: the stored grid's largest gap is about 2)."""
    i = grid.arms.index("unscaled")
    for d, d_k in enumerate(grid.d_ks):
        for k, lr in enumerate(grid.lrs):
            ok, gap = _survival_within_se(grid.steps_to_90[d, :, i, k], grid.nudged_steps_to_90[d, :, k], T.STEPS)
            assert ok, f"d_k = {d_k}, lr = {lr}: survival curves differ by {gap:.2f}"


@pytest.mark.slow
@pytest.mark.parametrize("d_k", [64, 1024])
def test_regenerated_part_of_the_grid_agrees_with_the_stored_one(grid, d_k):
    """Retrain every seed at d_k, eta in (0.1, 1): what cannot depend on the CPU must agree."""
    lrs = (0.1, 1.0)
    fresh = T.compute_grid(d_ks=(d_k,), lrs=lrs, seeds=T.GRID_SEEDS, arms=T.GRID_ARMS)
    d, ks = grid.d_ks.index(d_k), [grid.lrs.index(lr) for lr in lrs]
    for a, arm in enumerate(T.GRID_ARMS):
        stored_steps, fresh_steps = grid.steps_to_90[d, :, a][:, ks], fresh.steps_to_90[0, :, a]
        if arm == "unscaled":  # chaotic: compare survival curves, within their standard error
            for k in range(len(lrs)):
                ok, gap = _survival_within_se(stored_steps[:, k], fresh_steps[:, k], T.STEPS)
                assert ok, f"unscaled, lr = {lrs[k]}: survival curves differ by {gap:.2f}"
            continue
        assert np.array_equal(stored_steps, fresh_steps, equal_nan=True), arm
        stored = grid.curves[d, :, a][:, ks].astype(float)
        new = fresh.curves[0, :, a].astype(float)
        for f, field in enumerate(T.FIELDS):  # float16 storage: 1e-3 relative; the log-gradient to 0.01
            assert np.allclose(new[..., f, :], stored[..., f, :], rtol=2e-3, atol=1e-2), (arm, field)


# -- the stored Adam grid (sdpa_helpers/data/adam_grid.npz, scripts/make_adam_grid.py) ----------
@pytest.fixture(scope="module")
def adam():
    return T.adam_grid()


def test_adam_grid_has_its_settings_and_shape(adam):
    assert (adam.d_ks, adam.lrs, adam.seeds, adam.arms) == (T.ADAM_D_KS, T.ADAM_LRS, T.ADAM_SEEDS, T.ADAM_ARMS)
    D, S, A, L = len(T.ADAM_D_KS), len(T.ADAM_SEEDS), len(T.ADAM_ARMS), len(T.ADAM_LRS)
    assert S >= 20 and len(T.ADAM_D_KS) >= 2
    assert adam.accuracy.shape == (D, S, A, L, T.STEPS)
    assert adam.steps_to_90.shape == adam.final_accuracy.shape == (D, S, A, L)


def test_adam_steps_to_90_are_those_of_the_stored_accuracy_curves(adam):
    accuracy = adam.accuracy.astype(float)
    assert np.array_equal(accuracy * T.BATCH_SIZE, np.round(accuracy * T.BATCH_SIZE))
    assert np.array_equal(T.steps_to_accuracy(accuracy, 0.9, 10, never=np.nan), adam.steps_to_90, equal_nan=True)


def test_adam_best_rates_lie_inside_the_grid(adam):
    """Each model's best Adam rate is neither the grid's smallest nor its largest, at every d_k: a best rate at an
    edge could hide a faster one outside."""
    for d_k in adam.d_ks:
        for arm in adam.arms:
            lr, steps = adam.best(d_k, arm)
            assert adam.lrs[0] < lr < adam.lrs[-1], (d_k, arm, lr)
            assert np.isfinite(steps).all(), (d_k, arm)  # every run reaches 90 % at its best rate


@pytest.mark.slow
def test_regenerated_part_of_the_adam_grid_agrees_with_the_stored_one(adam):
    """Retrain every seed at d_k = 64 and 1024, at each model's best rate there: the scaled runs' steps to 90 % and
    their first 100 steps agree exactly; the unscaled (chaotic at large d_k) agree in their survival curves within 4
    standard errors. Under Adam a learned scaled run turns chaotic too (its tiny gradients are divided by their own
    root-mean-square): retrained in another batch of runs, its batch accuracies at d_k = 64 part from step 125 on,
    long after every run reached 90 % (by step 15)."""
    for d_k in (64, 1024):
        d = adam.d_ks.index(d_k)
        for arm in adam.arms:
            lr, stored = adam.best(d_k, arm)
            fresh = T.compute_adam_grid(d_ks=(d_k,), lrs=(lr,), seeds=T.ADAM_SEEDS, arms=(arm,))
            new = fresh.steps_to_90[0, :, 0, 0]
            if arm == "unscaled":
                ok, gap = _survival_within_se(stored, new, T.STEPS)
                assert ok, f"d_k = {d_k}, unscaled, lr = {lr}: survival curves differ by {gap:.2f}"
                continue
            assert np.array_equal(stored, new, equal_nan=True), (d_k, arm)
            k = adam.lrs.index(lr)
            assert np.nanmax(stored) < 50
            assert np.array_equal(adam.accuracy[d, :, adam.arms.index(arm), k, :100], fresh.accuracy[0, :, 0, 0, :100],
                                  equal_nan=True)
