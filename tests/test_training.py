"""The training module of notebook 09: task, forward/backward pass, optimizers, runs; its figures and exercises."""

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from conftest import labelled
from sdpa_helpers import training as T
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import training as P

SEEDS = (0, 1, 2)


def sub_batch(batch, idx):
    return batch._make(a[idx] for a in batch)


# -- the task --------------------------------------------------------------------------
def test_batch_structure():
    b = T.make_batch(500, rng=0)
    rows = np.arange(500)
    addresses = b.keys[:, :, : T.D_ADDR]
    assert np.array_equal(b.x[:, : T.D_ADDR], addresses[rows, b.target])  # the query carries the target's address
    codes = {tuple(c) for c in T.address_codes()}
    for i in range(500):
        seen = {tuple(a) for a in addresses[i]}
        assert seen <= codes and len(seen) == T.N_KEYS  # distinct addresses from the codebook
        assert sorted(b.labels[i]) == list(range(T.N_KEYS))  # labels: a permutation
    assert np.array_equal(b.answer, b.labels[rows, b.target])


def test_every_input_component_has_mean_0_and_variance_1():
    b = T.make_batch(40_000, rng=1)
    for data in (b.x, b.keys[:, 3, :]):  # the queries, and the keys in one position (independent rows)
        n = len(data)
        mean_se = data.std(axis=0, ddof=1) / np.sqrt(n)
        var_se = (data**2).std(axis=0, ddof=1) / np.sqrt(n)
        assert np.all(np.abs(data.mean(axis=0)) < 4 * mean_se)
        assert np.all(np.abs((data**2).mean(axis=0) - 1) < 4 * var_se)


def test_same_seed_same_batch():
    a, b = T.make_batch(7, rng=3), T.make_batch(7, rng=3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_draw_weights_have_variance_one_over_fan_in():
    w = T.draw_weights(4096, d_in=16, rng=0)
    for W in w:
        v = (W**2).ravel()
        assert abs(v.mean() - 1 / 16) < 4 * v.std(ddof=1) / np.sqrt(v.size)


def test_unscaled_logits_have_variance_d_k_at_initialisation():
    """E[(q.k)^2] = d_k over random weights and data; SE from the spread of per-initialisation means."""
    rng = np.random.default_rng(0)
    for d_k in (2, 32, 256):
        per_init = []
        for _ in range(400):
            z = T.forward(T.draw_weights(d_k, rng=rng), T.make_batch(8, rng=rng), scale="unscaled").logits
            per_init.append((z**2).mean() / d_k)
        se = np.std(per_init, ddof=1) / np.sqrt(len(per_init))
        assert abs(np.mean(per_init) - 1) < 4 * se


def test_hand_set_weights_solve_the_task_at_d_k_4():
    b = T.make_batch(2000, rng=0)
    m = T.evaluate(T.ideal_weights(4, alpha=4.0), b)
    assert m.accuracy == 1.0
    assert m.loss == pytest.approx(np.log(1 + 7 * np.exp(-T.GAIN)), abs=0.01)


# -- forward pass against a naive loop ------------------------------------------------
def naive_loss(weights, batch, scale, gain=T.GAIN):
    total = 0.0
    for x, keys, labels, t in zip(*batch):
        q = [float(np.dot(row, x)) for row in weights.W_Q]
        logits = []
        for y in keys:
            k = [float(np.dot(row, y)) for row in weights.W_K]
            logits.append(scale * sum(qi * ki for qi, ki in zip(q, k)))
        m = max(logits)
        e = [np.exp(z - m) for z in logits]
        p = [ei / sum(e) for ei in e]
        o = [0.0] * len(p)
        for pj, c in zip(p, labels):
            o[c] += gain * pj
        mo = max(o)
        log_norm = mo + np.log(sum(np.exp(oc - mo) for oc in o))
        total += log_norm - o[labels[t]]
    return total / len(batch.x)


@pytest.mark.parametrize("scale", [None, "unscaled"])
def test_forward_matches_a_naive_loop(scale):
    b = T.make_batch(5, rng=2)
    w = T.draw_weights(6, rng=3)
    f = T.forward(w, b, scale=scale)
    s = 1 / np.sqrt(6) if scale is None else 1.0
    assert f.loss == pytest.approx(naive_loss(w, b, s), rel=1e-12)
    assert np.allclose(f.weights.sum(axis=1), 1) and np.allclose(f.probs.sum(axis=1), 1)


# -- backward pass ----------------------------------------------------------------------
# Central differences with h = 1e-5: the truncation error is h^2/6 * L''' (about 2e-11 * L''');
# rounding adds about eps * |L| / h (1e-16 * 5 / 1e-5 = 5e-11) per entry. Over at most 256 entries
# that is a few 1e-9 at worst against a gradient of norm >= 0.01 (asserted), so a relative error
# below 1e-6 leaves a wide margin; a wrong formula gives errors of order 1.
FD_H = 1e-5
FD_RTOL = 1e-6


def fd_relative_errors(w, batch, scale, h=FD_H):
    analytic = T.backward(batch, T.forward(w, batch, scale=scale)).grads
    errors = {}
    for name in ("W_Q", "W_K"):
        exact = getattr(analytic, name)
        assert np.linalg.norm(exact) > 0.01, "a gradient this small would make the relative error meaningless"

        def loss_at(W, name=name):
            return T.forward(w._replace(**{name: W}), batch, scale=scale).loss

        fd = T.finite_difference_gradient(loss_at, getattr(w, name), h=h)
        errors[name] = np.linalg.norm(fd - exact) / np.linalg.norm(exact)
    return errors


@pytest.mark.parametrize("seed", [SEEDS[0]] + [pytest.param(s, marks=pytest.mark.slow) for s in SEEDS[1:]])
@pytest.mark.parametrize("d_k", [3, 16])
@pytest.mark.parametrize("scale", [None, "unscaled"], ids=["scaled", "unscaled"])
def test_backward_matches_finite_differences(seed, d_k, scale):
    rng = np.random.default_rng(seed)
    batch = T.make_batch(4, rng=rng)
    w = T.draw_weights(d_k, rng=rng)
    for name, err in fd_relative_errors(w, batch, scale).items():
        assert err < FD_RTOL, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("scale", [None, "unscaled"], ids=["scaled", "unscaled"])
def test_finite_difference_error_shrinks_like_h_squared(scale):
    """If the backward pass is right, FD - backward is the O(h^2) truncation: halving h divides it by 4."""
    rng = np.random.default_rng(7)
    batch, w = T.make_batch(4, rng=rng), T.draw_weights(8, rng=rng)
    e1, e2 = fd_relative_errors(w, batch, scale, h=4e-3), fd_relative_errors(w, batch, scale, h=2e-3)
    for name in e1:
        assert 3.5 < e1[name] / e2[name] < 4.5


def test_a_wrong_gradient_fails_the_check():
    rng = np.random.default_rng(0)
    batch, w = T.make_batch(4, rng=rng), T.draw_weights(5, rng=rng)
    g = T.backward(batch, T.forward(w, batch)).W_Q

    def loss_at(W):
        return T.forward(w._replace(W_Q=W), batch).loss

    fd = T.finite_difference_gradient(loss_at, w.W_Q)
    assert np.linalg.norm(fd - 1.1 * g) / np.linalg.norm(g) > 0.05  # 10% off: caught


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [None, "unscaled"])
def test_fast_gradients_match_the_step_by_step_backward(seed, scale):
    rng = np.random.default_rng(seed)
    batch, w = T.make_batch(32, rng=rng), T.draw_weights(64, rng=rng)
    f = T.forward(w, batch, scale=scale)
    g = T.backward(batch, f)
    loss, fast, metrics = T.loss_and_gradients(w, batch, scale=scale)
    assert loss == pytest.approx(f.loss, rel=1e-12)
    assert metrics == pytest.approx((f.loss, f.accuracy, f.entropy), rel=1e-12)
    assert np.allclose(fast.W_Q, g.W_Q, rtol=1e-9, atol=1e-15)
    assert np.allclose(fast.W_K, g.W_K, rtol=1e-9, atol=1e-15)


def test_backward_steps_match_the_jacobian_formula():
    rng = np.random.default_rng(4)
    batch, w = T.make_batch(6, rng=rng), T.draw_weights(8, rng=rng)
    f = T.forward(w, batch)
    g = T.backward(batch, f)
    assert np.allclose(g.d_logits, np.einsum("bij,bj->bi", softmax_jacobian(f.weights), g.d_weights))
    d_o = f.probs.copy()
    d_o[np.arange(6), batch.answer] -= 1
    assert np.allclose(g.d_output, d_o / 6)


@pytest.mark.parametrize("scale", [None, "unscaled"])
def test_per_example_norms_match_a_loop(scale):
    rng = np.random.default_rng(5)
    batch, w = T.make_batch(12, rng=rng), T.draw_weights(32, rng=rng)
    norms = T.per_example_gradient_norms(w, batch, scale=scale)
    loop = [np.linalg.norm(T.backward(sub_batch(batch, slice(i, i + 1)),
                                      T.forward(w, sub_batch(batch, slice(i, i + 1)), scale=scale)).W_Q)
            for i in range(12)]
    assert np.allclose(norms, loop, rtol=1e-9, atol=1e-300)








# -- the batched trainer against independent references -----------------------------------
def naive_sgd(d_k, seed, lr, arm, steps):
    """One model, a plain loop: loss_and_gradients on each batch of training_batches, W -= lr g."""
    arm = T.ARMS[arm]
    w0 = T.starting_weights(d_k, seed)
    W_Q, W_K = d_k**arm.init_q * w0.W_Q, d_k**arm.init_k * w0.W_K
    stream, losses = T.training_batches(seed), []
    for _ in range(steps):
        loss, g, _ = T.loss_and_gradients(T.Weights(W_Q, W_K), next(stream), scale=arm.scale)
        losses.append(loss)
        W_Q, W_K = W_Q - lr * d_k**arm.lr_q * g.W_Q, W_K - lr * d_k**arm.lr_k * g.W_K
    return np.array(losses), T.Weights(W_Q, W_K)


def test_batched_trainer_matches_a_loop_over_models():
    """Vectorised over (seeds, arms, lrs) vs one model at a time (scaled runs: not chaotic, rounding stays small)."""
    runs = T.train_runs(16, seeds=(0, 3), lrs=(0.3, 1.0), arms=("scaled", "reparametrised"), steps=40)
    for i, seed in enumerate((0, 3)):
        for j, arm in enumerate(("scaled", "reparametrised")):
            for k, lr in enumerate((0.3, 1.0)):
                losses, w = naive_sgd(16, seed, lr, arm, 40)
                assert np.allclose(runs.loss[i, j, k], losses, rtol=1e-9, atol=0)
                assert np.allclose(runs.weights.W_Q[i, j, k], w.W_Q, rtol=1e-9, atol=1e-12)




def test_first_steps_sgd_and_adam():
    batch = next(T.training_batches(0))
    w0 = T.starting_weights(8)
    _, g, _ = T.loss_and_gradients(w0, batch)
    sgd = T.train_runs(8, lrs=0.5, arms="scaled", steps=1).weights
    assert np.allclose(sgd.W_Q[0, 0, 0], w0.W_Q - 0.5 * g.W_Q) and np.allclose(sgd.W_K[0, 0, 0], w0.W_K - 0.5 * g.W_K)
    adam = T.train_runs(8, lrs=0.01, arms="scaled", optimizer="adam", steps=1).history()
    r = T.train_runs(8, lrs=0.01, arms="scaled", optimizer="adam", steps=1)
    assert np.allclose(r.weights.W_Q[0, 0, 0], w0.W_Q - 0.01 * g.W_Q / (np.abs(g.W_Q) + 1e-8))
    assert adam.loss[0] == pytest.approx(T.loss_and_gradients(w0, batch)[0])


def test_adam_step_matches_a_two_step_update_by_hand():
    """w = 1, gradients 0.5 then -1, eta = 0.1, betas (0.9, 0.999), eps 1e-8, worked by hand:
    step 1: m = 0.05, v = 0.00025, m_hat = 0.5, v_hat = 0.25, w = 1 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.900000002;
    step 2: m = 0.045 - 0.1 = -0.055, v = 0.00024975 + 0.001 = 0.00124975, m_hat = -0.055 / 0.19,
    v_hat = 0.00124975 / 0.001999, w = 0.900000002 + 0.1 * (0.055 / 0.19) / sqrt(0.00124975 / 0.001999)."""
    w, moments = np.array([1.0]), [np.zeros(1), np.zeros(1)]
    w = T.adam_step(w, np.array([0.5]), 0.1, moments, 1)
    assert w[0] == pytest.approx(0.90000000199999996, rel=1e-14)
    assert moments[0][0] == pytest.approx(0.05, rel=1e-14) and moments[1][0] == pytest.approx(0.00025, rel=1e-12)
    w = T.adam_step(w, np.array([-1.0]), 0.1, moments, 2)
    assert moments[0][0] == pytest.approx(-0.055, rel=1e-14) and moments[1][0] == pytest.approx(0.00124975, rel=1e-12)
    assert w[0] == pytest.approx(0.93661035424056560, rel=1e-14)


def naive_adam(d_k, seed, lr, arm, steps, beta1=0.9, beta2=0.999, eps=1e-8):
    """One model at a time, Adam written out entry by entry from its paper's Algorithm 1."""
    arm = T.ARMS[arm]
    w0 = T.starting_weights(d_k, seed)
    W = [d_k**arm.init_q * w0.W_Q, d_k**arm.init_k * w0.W_K]
    rates = [lr * d_k**arm.lr_q, lr * d_k**arm.lr_k]
    m, v = [np.zeros_like(x) for x in W], [np.zeros_like(x) for x in W]
    losses, batches = [], T.training_batches(seed)
    for t in range(1, steps + 1):
        loss, g, _ = T.loss_and_gradients(T.Weights(*W), next(batches), scale=arm.scale)
        losses.append(loss)
        for i, gi in enumerate(g):
            m[i] = beta1 * m[i] + (1 - beta1) * gi
            v[i] = beta2 * v[i] + (1 - beta2) * gi**2
            W[i] = W[i] - rates[i] * (m[i] / (1 - beta1**t)) / (np.sqrt(v[i] / (1 - beta2**t)) + eps)
    return np.array(losses), T.Weights(*W)


def test_batched_adam_matches_a_loop_over_models():
    """The trainer's Adam (vectorised over seeds, arms and rates) against Adam written out for one model."""
    runs = T.train_runs(16, seeds=(0, 3), lrs=(0.003, 0.03), arms=("scaled", "unscaled"), optimizer="adam", steps=20)
    for i, seed in enumerate((0, 3)):
        for j, arm in enumerate(("scaled", "unscaled")):
            for k, lr in enumerate((0.003, 0.03)):
                losses, w = naive_adam(16, seed, lr, arm, 20)
                assert np.allclose(runs.loss[i, j, k], losses, rtol=1e-8, atol=0)
                assert np.allclose(runs.weights.W_K[i, j, k], w.W_K, rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("d_k", [16] + [pytest.param(d, marks=pytest.mark.slow) for d in (64, 256, 1024)])
def test_reparametrised_unscaled_model_follows_the_scaled_trajectory(d_k):
    """Initial W times d_k^(-1/4), SGD rate eta/sqrt(d_k), no scale == the scaled model: logits, losses, weights."""
    r = T.train_runs(d_k, seeds=(0, 1), lrs=(0.3, 3.0), arms=("scaled", "reparametrised"))
    c = d_k**0.25
    assert np.allclose(r.loss[:, 0], r.loss[:, 1], rtol=1e-9, atol=0)
    assert np.allclose(r.grad_norm_q[:, 1], c * r.grad_norm_q[:, 0], rtol=1e-8)  # same step, other coordinates
    for W in ("W_Q", "W_K"):
        scaled, rep = getattr(r.weights, W)[:, 0], getattr(r.weights, W)[:, 1]
        assert np.abs(c * rep - scaled).max() <= 1e-10 * np.abs(scaled).max()
    held = T.held_out_set(0)
    z_s = T.forward(T.Weights(r.weights.W_Q[0, 0, 1], r.weights.W_K[0, 0, 1]), held, scale="sqrt").logits
    z_r = T.forward(T.Weights(r.weights.W_Q[0, 1, 1], r.weights.W_K[0, 1, 1]), held, scale="unscaled").logits
    assert np.allclose(z_r, z_s, rtol=1e-9, atol=1e-9 * np.abs(z_s).max())


def test_asymmetric_split_t5_init_follows_the_scaled_trajectory():
    r = T.train_runs(64, seeds=0, lrs=1.0, arms=("scaled", "asymmetric"))
    assert np.allclose(r.loss[0, 0], r.loss[0, 1], rtol=1e-9, atol=0)
    assert np.allclose(8 * r.weights.W_Q[0, 1], r.weights.W_Q[0, 0], rtol=1e-9, atol=1e-12)
    assert np.allclose(r.weights.W_K[0, 1], r.weights.W_K[0, 0], rtol=1e-9, atol=1e-12)


def test_adam_needs_the_quarter_power_rate():
    """Adam ignores the gradient's scale: the reparametrisation needs eta * d_k^(-1/4), not eta / sqrt(d_k)."""
    adam_rule = T.Arm("adam rule", "unscaled", -0.25, -0.25, -0.25, -0.25)
    r = T.train_runs(64, seeds=(0, 1), lrs=0.01, arms=("scaled", "reparametrised", adam_rule), optimizer="adam",
                     steps=100)
    assert np.abs(r.loss[:, 2] - r.loss[:, 0]).max() < 1e-4  # only eps differs
    assert np.abs(r.loss[:, 1] - r.loss[:, 0]).max() > 0.1


def test_diverging_runs_are_marked_and_do_not_stop_the_others():
    r = T.train_runs(64, seeds=0, lrs=(1.0, 1e90), arms="scaled", steps=20)
    assert r.diverged[0, 0, 0] == 0 and r.diverged[0, 0, 1] > 0
    assert np.isfinite(r.loss[0, 0, 0]).all() and np.isnan(r.loss[0, 0, 1, r.diverged[0, 0, 1]:]).all()
    assert np.isnan(r.final.loss[0, 0, 1]) and np.isfinite(r.final.loss[0, 0, 0])


def test_runs_are_reproducible_and_share_data_and_initial_weights():
    a = T.train_runs(16, seeds=(2,), lrs=1.0, arms="unscaled", steps=30)
    b = T.train_runs(16, seeds=(2,), lrs=1.0, arms="unscaled", steps=30)
    assert all(np.array_equal(x, y) for x, y in zip(a[5:10], b[5:10]))
    h = T.train_runs(16, seeds=2, arms=("scaled", "unscaled"), steps=1)
    for j, scale in enumerate(("sqrt", "unscaled")):
        loss = T.loss_and_gradients(T.starting_weights(16, 2), next(T.training_batches(2)), scale=scale)[0]
        assert h.loss[0, j, 0, 0] == pytest.approx(loss, rel=1e-12)


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_batches_are_made_as_training_goes_and_memory_does_not_grow_with_steps():
    """The old trainer kept every batch (74 kB a step); now a 10x longer run needs only its records."""
    import tracemalloc

    def peak(steps):
        tracemalloc.start()
        T.train_runs(4, seeds=(0, 1), lrs=1.0, arms=("scaled", "unscaled"), steps=steps)
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    short, long = peak(200), peak(2000)
    records = 5 * 4 * 1800 * 8  # five records of 4 runs, 1800 more steps, float64
    assert long - short < records + 2**20, f"peak grew by {(long - short) / 2**20:.1f} MiB"




@pytest.mark.parametrize("d_k", [4, 1024])
def test_the_scaled_model_learns_the_task(d_k):
    r = T.train_runs(d_k, seeds=(0, 1), lrs=1.0, arms="scaled")
    assert (r.final.accuracy > 0.99).all() and np.isfinite(r.steps_to()).all()






# -- summaries ---------------------------------------------------------------------------
def test_steps_to_accuracy_vectorised_matches_the_loop_and_share_of_examples():
    assert T.steps_to_accuracy([0, 0, 1, 1, 1], threshold=1.0, window=3) == 5
    assert T.steps_to_accuracy([1.0] * 10) == 10
    assert T.steps_to_accuracy([0.89] * 20) is None
    rng = np.random.default_rng(0)
    acc = (rng.random((6, 50)) < np.linspace(0.5, 1.0, 50)).astype(float)
    loop = [T.steps_to_accuracy(a, 0.8, 5) for a in acc]
    vec = T.steps_to_accuracy(acc, 0.8, 5)
    assert [None if np.isnan(v) else int(v) for v in vec] == loop
    assert T.share_of_examples([3.0, 0.0, 0.0, 0.0]) == 0.25
    assert 0.85 < T.share_of_examples(np.ones(1000) + 1e-3 * rng.random(1000)) <= 0.91
    for magnitude in (1e-100, 1e-50, 1.0, 1e50, 1e100):  # across the course's range
        assert T.share_of_examples([magnitude, magnitude]) == 1.0
        assert T.share_of_examples([magnitude, 1e-3 * magnitude]) == 0.5


def test_seed_summary_counts_runs_that_never_got_there():
    s = T.seed_summary([10, 12, np.nan, 30, 11])
    assert (s.median, s.low, s.high, s.never, s.n) == (12, 10, 30, 1, 5)
    s = T.seed_summary([np.nan, np.nan, np.nan, 5, 6])
    assert np.isnan(s.median) and s.never == 3
    assert T.seed_summary([1.0, 2.0]).median == 1.5


def test_rolling_quantiles_match_a_loop():
    rng = np.random.default_rng(2)
    v = rng.standard_normal((3, 40))
    v[1, 5] = np.nan
    out = T.rolling_quantiles(v, window=5, quantiles=(0.1, 0.5, 0.9))
    for t in range(40):
        pool = v[:, max(0, t - 2):t + 3].ravel()
        assert np.allclose(out[:, t], np.nanquantile(pool, (0.1, 0.5, 0.9)))


def test_init_statistics_match_direct_computation():
    w, b = T.starting_weights(64, 1), T.make_batch(256, rng=3)
    st = T.init_statistics(w, b, scale="unscaled")
    assert st["median"] == pytest.approx(np.median(T.per_example_gradient_norms(w, b, scale="unscaled")))
    first = np.linalg.norm(T.loss_and_gradients(w, sub_batch(b, slice(0, 64)), scale="unscaled")[1].W_Q)
    assert st["batch"] >= 0 and first > 0 and st["share"] <= 1


# -- bad input ---------------------------------------------------------------------------
W4 = T.draw_weights(4, rng=0)
B4 = T.make_batch(2, rng=0)
BAD = [
    (lambda: T.make_batch(0), ValueError, "batch_size"),
    (lambda: T.make_batch(2.5), TypeError, "batch_size"),
    (lambda: T.make_batch(2, n_keys=9), ValueError, "n_keys"),
    (lambda: T.make_batch(2, d_in=3), ValueError, "d_addr"),
    (lambda: T.draw_weights(-1), ValueError, "d_k"),
    (lambda: T.ideal_weights(2), ValueError, "d_addr"),
    (lambda: T.forward(W4, "batch"), TypeError, "batch"),
    (lambda: T.forward((1, 2), B4), TypeError, "weights"),
    (lambda: T.forward(T.draw_weights(4, d_in=8, rng=0), B4), ValueError, "d_in"),
    (lambda: T.forward(W4._replace(W_K=np.ones((5, 16))), B4), ValueError, "W_K"),
    (lambda: T.forward(W4._replace(W_Q=np.full((4, 16), np.nan)), B4), ValueError, "W_Q"),
    (lambda: T.forward(W4, B4, scale=0.0), ValueError, "scale"),
    (lambda: T.forward(W4, B4, scale="half"), ValueError, "scale"),
    (lambda: T.forward(W4, B4, gain=-1.0), ValueError, "gain"),
    (lambda: T.forward(W4, B4._replace(labels=B4.labels + 8)), ValueError, "labels"),
    (lambda: T.loss_and_gradients(W4, B4._replace(labels=B4.labels + 8)), ValueError, "labels"),
    (lambda: T.loss_and_gradients(W4, B4._replace(target=np.array([0, 9]))), ValueError, "target"),
    (lambda: T.loss_and_gradients(W4, B4._replace(labels=np.zeros((2, 8), int))), ValueError, "permutation"),
    (lambda: T.loss_and_gradients(W4, B4._replace(x=np.full((2, 16), np.nan))), ValueError, "batch.x"),
    (lambda: T.loss_and_gradients(W4, B4._replace(x=np.ones((3, 16)))), ValueError, "batch.x"),
    (lambda: T.loss_and_gradients(W4, B4._replace(target=np.array([0.0, 1.0]))), TypeError, "target"),
    (lambda: T.backward(B4, "fwd"), TypeError, "fwd"),
    (lambda: T.backward(T.make_batch(3, rng=0), T.forward(W4, B4)), ValueError, "fwd"),
    (lambda: T.train_runs(4, optimizer="sgdm"), ValueError, "optimizer"),
    (lambda: T.train_runs(4, lrs=0), ValueError, "lrs"),
    (lambda: T.train_runs(4, arms="yes"), ValueError, "arms"),
    (lambda: T.train_runs(4, arms=()), ValueError, "arms"),
    (lambda: T.train_runs(4, seeds=-1), ValueError, "seed"),
    (lambda: T.train_runs(4, steps=0), ValueError, "steps"),
    (lambda: T.train_runs(8.0), TypeError, "d_k"),
    (lambda: T.train_runs([8]), TypeError, "d_k"),
    (lambda: T.survival_curve([0.0, 3.0], 10), ValueError, "steps_to"),
    (lambda: T.survival_curve([1.0], 0), ValueError, "max_steps"),
    (lambda: T.best_learning_rate([[1.0, 2.0]], (0.1,)), ValueError, "steps_to"),
    (lambda: T.steps_to_accuracy([0.5, 1.0], window=0), ValueError, "window"),
    (lambda: T.steps_to_accuracy([0.5], window=3), ValueError, "window"),
    (lambda: T.share_of_examples([1.0], mass=2), ValueError, "mass"),
    (lambda: T.share_of_examples([-1.0, 2.0]), ValueError, "norms"),
    (lambda: T.finite_difference_gradient("f", np.ones(2)), TypeError, "f"),
    (lambda: T.finite_difference_gradient(np.sum, np.ones(2), h=0), ValueError, "h"),
    (lambda: T.init_statistics(W4, B4), ValueError, "batch"),
    (lambda: T.training_grid().steps(8, "scaled"), ValueError, "d_k"),
    (lambda: T.training_grid().steps(64, "sqrt"), ValueError, "arm"),
]


@pytest.mark.parametrize("call, error, word", BAD, ids=[f"{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_the_parameter(call, error, word):
    with pytest.raises(error, match=word):
        call()


# -- figures -----------------------------------------------------------------------------
def test_small_multiples_figure_has_three_arms_and_a_band_for_the_gradient():
    runs = {d: T.train_runs(d, seeds=(0, 1), lrs=1.0, arms=T.GRID_ARMS, steps=30) for d in (4, 64)}
    fig = P.training_small_multiples(runs, (4, 64), title="t")
    assert isinstance(fig, Figure) and len(fig.axes) == 8
    axes = np.array(fig.axes).reshape(4, 2)
    assert all(ax.get_ylabel().strip() for ax in axes[:, 0])
    assert axes[-1, 0].get_xlabel() == "step" and axes[3, 0].get_yscale() == "log"
    assert len([line for line in axes[0, 0].get_lines() if line.get_label()[0] != "_"]) == 3
    assert len(axes[3, 0].collections) == 3  # one 10-90 % band per arm


def test_other_figures_return_labelled_axes():
    ax = P.gradient_histogram(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1e-5, 10.0]), d_k=1024)
    assert isinstance(ax, Axes) and labelled(ax) and ax.get_xscale() == "log"
    ax = P.lr_sweep([0.1, 1.0, 3.0], {"scaled": [[50, 12, 11]], "unscaled": [[80, np.nan, np.nan]]},
                    max_steps=300, d_k=1024)
    assert isinstance(ax, Axes) and labelled(ax)


def test_survival_panels_draw_one_survival_figure_per_panel():
    panels = {"$d_k$ = 64": {"scaled": [12, 13, 14], "unscaled": ([30, np.nan, 40], "unscaled, best η = 0.03")},
              "$d_k$ = 1024": {"scaled": [13, 14, 15], "unscaled": [90, 100, np.nan]}}
    fig = P.survival_panels(panels, 300, title="Adam")
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    for ax, name in zip(fig.axes, panels):
        assert ax.get_title() == name and labelled(ax, title_for_y=True)
        fractions = [line.get_ydata()[-1] for line in ax.get_lines()]
        assert len(fractions) == 2 and fractions[0] == 1.0  # every scaled run got there by step 300
    assert fig.axes[1].get_lines()[1].get_ydata()[-1] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="panels"):
        P.survival_panels({}, 300)


def test_panels_clip_tiny_gradients_to_the_floor():
    h = T.train_runs(256, arms="unscaled").history(arm="unscaled")
    _, axes = __import__("sdpa_helpers.plots", fromlist=["new_figure"]).new_figure(1, 4)
    panels = P.TrainingPanels(axes, ["unscaled"], len(h.loss))
    panels.show("unscaled", [getattr(h, field) for field in T.FIELDS])
    assert panels.lines["unscaled"][3].get_ydata().min() >= P.GRAD_FLOOR
    assert P.N_KEYS_ENTROPY == pytest.approx(np.log(T.N_KEYS))


def test_figures_use_the_course_styles():
    """Scaled and unscaled: the styles of plots.SCALING_STYLES, in every figure of the notebook."""
    from matplotlib.colors import to_hex

    from sdpa_helpers.plots import SCALING_STYLES

    def styles(ax):
        return {(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines()
                if line.get_label()[0] != "_"}

    def spec(name):
        return to_hex(P.ARM_STYLES[name]["color"]), P.ARM_STYLES[name]["linestyle"]

    assert P.ARM_STYLES["scaled"] is SCALING_STYLES["sqrt"] and P.ARM_STYLES["unscaled"] is SCALING_STYLES["unscaled"]
    two = {spec("scaled"), spec("unscaled")}
    fig = P.training_small_multiples({4: T.train_runs(4, steps=20)}, (4,), arms=("scaled", "unscaled"))
    assert all(styles(ax) == two for ax in fig.axes)
    assert styles(P.lr_sweep([0.1, 1.0], {"scaled": [[50, 10]], "unscaled": [[80, np.nan]]}, 300, 1024)) == two
    ax = P.gradient_histogram(np.array([1.0, 2.0]), np.array([1e-6, 3.0]), d_k=1024)
    assert {(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines()} == two


# -- the explorer ------------------------------------------------------------------------
@pytest.mark.slow  # builds the explorer over the whole stored grid: in `make test`
def test_explorer_reads_the_stored_grid_and_trains_nothing(monkeypatch):
    from sdpa_helpers.widgets.training import TrainingExplorer

    def no_training(*args, **kwargs):
        raise AssertionError("the explorer must not train")

    T.training_grid()  # read once (as a fresh kernel would at build)
    monkeypatch.setattr(T, "train_runs", no_training)
    e = TrainingExplorer()
    n_figures = len(__import__("matplotlib.pyplot", fromlist=["get_fignums"]).get_fignums())
    for name, values in (("d_k", T.GRID_D_KS), ("lr", T.GRID_LRS), ("seed", T.GRID_SEEDS)):
        for v in values:
            e.controls[name].value = v
    assert e.fig is not None and len(__import__("matplotlib.pyplot", fromlist=["x"]).get_fignums()) == n_figures
    assert set(e.panels.lines) == set(T.GRID_ARMS)
    e.close()


# -- exercises ---------------------------------------------------------------------------
def test_exercise_logit_gradient():
    from sdpa_helpers.exercises.training import LOGIT_GRAD_W_K, LOGIT_GRAD_X, LOGIT_GRAD_Y

    def logit(W_Q):
        return float((W_Q @ LOGIT_GRAD_X) @ (LOGIT_GRAD_W_K @ LOGIT_GRAD_Y))

    fd = T.finite_difference_gradient(logit, np.ones((2, 3)))  # linear in W_Q: FD is exact up to rounding
    assert check("09.logit_grad_w_q", np.round(fd, 6), quiet=True)
    assert not check("09.logit_grad_w_q", np.round(fd, 6).T, quiet=True)
    assert not check("09.logit_grad_w_q", np.zeros((2, 3)), quiet=True)


def test_exercise_logit_gradient_names_the_answer_that_leaves_w_k_out():
    """A learner who leaves W_K out differentiates (W_Q x)·y: the 3×3 outer product y xᵀ."""
    from sdpa_helpers.exercises import get
    from sdpa_helpers.exercises.training import LOGIT_GRAD_X, LOGIT_GRAD_Y

    fd = T.finite_difference_gradient(lambda W_Q: float((W_Q @ LOGIT_GRAD_X) @ LOGIT_GRAD_Y), np.ones((3, 3)))
    ok, feedback = get("09.logit_grad_w_q").checker(np.round(fd, 6))
    assert not ok and "W_K left out" in feedback


def test_grid_nudged_arm_is_the_stored_twin():
    grid = T.training_grid()
    assert np.array_equal(grid.steps(1024, "nudged"), grid.nudged_steps_to_90[-1], equal_nan=True)
    lr, steps = grid.best(1024, "nudged")
    medians = [T.seed_summary(col).median for col in grid.steps(1024, "nudged").T]
    assert np.array_equal(steps, grid.steps(1024, "nudged")[:, grid.lrs.index(lr)], equal_nan=True)
    assert T.seed_summary(steps).median == np.nanmin(medians)


def test_exercise_softmax_ce_backward():
    def good(z, t):
        g = softmax(z)
        g[t] -= 1
        return g

    def naive(z, t):  # overflows at 1e6
        with np.errstate(all="ignore"):
            e = np.exp(z)
            g = e / e.sum()
        g[t] -= 1
        return g

    assert check("09.softmax_ce_backward", good, quiet=True)
    assert not check("09.softmax_ce_backward", naive, quiet=True)
    assert not check("09.softmax_ce_backward", lambda z, t: softmax(z), quiet=True)


def test_exercise_reparam_lr_is_the_trainers_rule():
    from sdpa_helpers.exercises.training import REPARAM_D_K, REPARAM_LR

    answer = REPARAM_LR * REPARAM_D_K ** T.ARMS["reparametrised"].lr_q  # the rate the trainer uses
    assert check("09.reparam_lr", answer, quiet=True) and check("09.reparam_lr", 0.0625, quiet=True)
    assert not check("09.reparam_lr", 1 / 4, quiet=True)


def test_exercise_median_with_never_agrees_with_seed_summary():
    steps = [260.0, 266.0, 274.0, 280.0, 288.0] + [np.nan] * 15
    assert np.isnan(T.seed_summary(steps).median)  # more than half never: the median is "never"
    assert check("09.median_with_never", "b", quiet=True) and not check("09.median_with_never", "a", quiet=True)


def test_exercise_read_out_lr_a_learned_gain_keeps_its_rate():
    """Exact reparametrisation with a learned gain: d(loss)/d(gain) is the same function in both models."""
    batch, w = T.make_batch(32, rng=0), T.starting_weights(64, 0)
    c = 64 ** -0.25
    w_rep = T.Weights(c * w.W_Q, c * w.W_K)
    for gain in (3.0, 5.0):
        scaled = T.forward(w, batch, scale="sqrt", gain=gain).loss
        rep = T.forward(w_rep, batch, scale="unscaled", gain=gain).loss
        assert rep == pytest.approx(scaled, rel=1e-12)  # same loss for every gain: same gradient in gain
    assert check("09.read_out_lr", "b", quiet=True) and not check("09.read_out_lr", "a", quiet=True)


@pytest.mark.parametrize("values, field, error, words", [
    (["a"], "loss", TypeError, "values"),
    ([1.0], "los", ValueError, "field"),
    ([-1.0], "grad_norm_q", ValueError, "grad_norm_q"),
    ([np.inf], "loss", ValueError, "values"),
])
def test_panel_values_rejects_bad_input_naming_it(values, field, error, words):
    with pytest.raises(error, match=words):
        T.panel_values(values, field)


# -- a SEED the stored grid does not hold (issue 37, item 6) ----------------------------------
def test_grid_seed_names_SEED_and_the_seeds_the_grid_holds():
    assert [T.grid_seed(s, name="SEED") for s in (0, 24)] == [0, 24]
    with pytest.raises(ValueError, match=r"SEED = 42 .*seeds 0–24.*set SEED to a whole number from 0 to 24"):
        T.grid_seed(42, name="SEED")
    with pytest.raises(TypeError, match="SEED"):
        T.grid_seed(1.5, name="SEED")


def test_notebook_09_looks_seed_up_through_the_package():
    """09 keyed its initial statistics by the grid's seeds and read them with ``init[SEED, ...]``: any SEED
    outside 0-24 stopped with a bare KeyError. Every lookup by SEED goes through ``training.grid_seed``, and the
    main line says which seeds the grid holds."""
    import re
    from pathlib import Path

    import jupytext

    src = Path(__file__).resolve().parent.parent / "authoring" / "notebooks" / "09_training_with_and_without_scale.py"
    nb = jupytext.read(src)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not re.search(r"\[\s*SEED\s*,", code), "a dict looked up by SEED raises a bare KeyError"
    assert "grid_seed(SEED" in code
    main = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown" and "deep-dive" not in
                     c.metadata.get("tags", []))
    assert re.search(r"seeds 0[–-]24", main), "the main line names the seeds the stored grid holds"
