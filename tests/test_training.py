"""The training module of notebook 09: task, forward/backward pass, optimizers, runs; its figures and exercises."""

import hashlib
import os
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sdpa_helpers import training as T  # noqa: E402
from sdpa_helpers.attention import softmax, softmax_jacobian  # noqa: E402
from sdpa_helpers.exercises import check  # noqa: E402
from sdpa_helpers.plots import training as P  # noqa: E402

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


def test_init_weights_have_variance_one_over_fan_in():
    w = T.init_weights(4096, d_in=16, rng=0)
    for W in w:
        v = (W**2).ravel()
        assert abs(v.mean() - 1 / 16) < 4 * v.std(ddof=1) / np.sqrt(v.size)


def test_unscaled_logits_have_variance_d_k_at_initialisation():
    """E[(q.k)^2] = d_k over random weights and data; SE from the spread of per-initialisation means."""
    rng = np.random.default_rng(0)
    for d_k in (2, 32, 256):
        per_init = []
        for _ in range(400):
            z = T.forward(T.init_weights(d_k, rng=rng), T.make_batch(8, rng=rng), scale=1.0).logits
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


@pytest.mark.parametrize("scale", [None, 1.0])
def test_forward_matches_a_naive_loop(scale):
    b = T.make_batch(5, rng=2)
    w = T.init_weights(6, rng=3)
    f = T.forward(w, b, scale=scale)
    s = 1 / np.sqrt(6) if scale is None else scale
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


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d_k", [3, 16])
@pytest.mark.parametrize("scale", [None, 1.0], ids=["scaled", "unscaled"])
def test_backward_matches_finite_differences(seed, d_k, scale):
    rng = np.random.default_rng(seed)
    batch = T.make_batch(4, rng=rng)
    w = T.init_weights(d_k, rng=rng)
    for name, err in fd_relative_errors(w, batch, scale).items():
        assert err < FD_RTOL, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("scale", [None, 1.0], ids=["scaled", "unscaled"])
def test_finite_difference_error_shrinks_like_h_squared(scale):
    """If the backward pass is right, FD - backward is the O(h^2) truncation: halving h divides it by 4."""
    rng = np.random.default_rng(7)
    batch, w = T.make_batch(4, rng=rng), T.init_weights(8, rng=rng)
    e1, e2 = fd_relative_errors(w, batch, scale, h=4e-3), fd_relative_errors(w, batch, scale, h=2e-3)
    for name in e1:
        assert 3.5 < e1[name] / e2[name] < 4.5


def test_a_wrong_gradient_fails_the_check():
    rng = np.random.default_rng(0)
    batch, w = T.make_batch(4, rng=rng), T.init_weights(5, rng=rng)
    g = T.backward(batch, T.forward(w, batch)).W_Q

    def loss_at(W):
        return T.forward(w._replace(W_Q=W), batch).loss

    fd = T.finite_difference_gradient(loss_at, w.W_Q)
    assert np.linalg.norm(fd - 1.1 * g) / np.linalg.norm(g) > 0.05  # 10% off: caught


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [None, 1.0])
def test_fast_gradients_match_the_step_by_step_backward(seed, scale):
    rng = np.random.default_rng(seed)
    batch, w = T.make_batch(32, rng=rng), T.init_weights(64, rng=rng)
    f = T.forward(w, batch, scale=scale)
    g = T.backward(batch, f)
    loss, fast, metrics = T.loss_and_gradients(w, batch, scale=scale)
    assert loss == pytest.approx(f.loss, rel=1e-12)
    assert metrics == pytest.approx((f.loss, f.accuracy, f.entropy), rel=1e-12)
    assert np.allclose(fast.W_Q, g.W_Q, rtol=1e-9, atol=1e-15)
    assert np.allclose(fast.W_K, g.W_K, rtol=1e-9, atol=1e-15)


def test_backward_steps_match_the_jacobian_formula():
    rng = np.random.default_rng(4)
    batch, w = T.make_batch(6, rng=rng), T.init_weights(8, rng=rng)
    f = T.forward(w, batch)
    g = T.backward(batch, f)
    assert np.allclose(g.d_logits, np.einsum("bij,bj->bi", softmax_jacobian(f.weights), g.d_weights))
    d_o = f.probs.copy()
    d_o[np.arange(6), batch.answer] -= 1
    assert np.allclose(g.d_output, d_o / 6)


@pytest.mark.parametrize("scale", [None, 1.0])
def test_per_example_norms_match_a_loop(scale):
    rng = np.random.default_rng(5)
    batch, w = T.make_batch(12, rng=rng), T.init_weights(32, rng=rng)
    norms = T.per_example_gradient_norms(w, batch, scale=scale)
    loop = [np.linalg.norm(T.backward(sub_batch(batch, slice(i, i + 1)),
                                      T.forward(w, sub_batch(batch, slice(i, i + 1)), scale=scale)).W_Q)
            for i in range(12)]
    assert np.allclose(norms, loop, rtol=1e-9, atol=1e-300)


def test_softmax_backward_is_stable_and_exact_at_one_hot():
    rng = np.random.default_rng(0)
    p = softmax(rng.standard_normal((50, 8)) * 3)
    g = rng.standard_normal((50, 8))
    assert np.allclose(T._softmax_backward(p, g), np.einsum("bij,bj->bi", softmax_jacobian(p), g))
    one_hot = np.eye(8)[:3]
    assert np.all(T._softmax_backward(one_hot, g[:3]) == 0)
    # nearly one-hot: the top entry is -(sum of the others), not rounding noise
    p = softmax(np.array([[40.0, 0.0, 1.0]]))
    out = T._softmax_backward(p, np.array([[1.0, 0.0, 0.0]]))
    assert out.sum() == pytest.approx(0, abs=1e-30) and out[0, 0] > 0


def test_portable_exp_is_accurate():
    rng = np.random.default_rng(0)
    x = -np.concatenate([rng.uniform(0, 40, 100_000), rng.uniform(700, 745, 1000), [0.0, 1e-300]])
    assert np.all(np.abs(T._exp(x) - np.exp(x)) <= 2 * np.spacing(np.exp(x)))
    assert T._exp(np.array([0.0]))[0] == 1.0
    assert np.all(T._exp(np.array([-800.0, -1e300])) == 0.0)


# -- training ---------------------------------------------------------------------------
def test_training_is_reproducible_and_shares_initial_weights_and_data():
    a, b = T.train(16, scaled=False, lr=1.0, steps=30), T.train(16, scaled=False, lr=1.0, steps=30)
    assert all(np.array_equal(x, y) for x, y in zip(a[:5], b[:5]))
    batches, _ = T.training_data(0, 30, T.BATCH_SIZE)
    for scaled in (True, False):
        h = T.train(16, scaled=scaled, steps=30)
        loss, g, _ = T.loss_and_gradients(T.initial_weights(16), batches[0], scale=None if scaled else 1.0)
        assert h.loss[0] == pytest.approx(loss) and h.grad_norm_q[0] == pytest.approx(np.linalg.norm(g.W_Q))


def test_one_sgd_step_and_one_adam_step():
    batches, _ = T.training_data(0, 1, T.BATCH_SIZE)
    w0 = T.initial_weights(8)
    _, g, _ = T.loss_and_gradients(w0, batches[0])
    sgd = T.train(8, lr=0.5, steps=1).weights
    assert np.allclose(sgd.W_Q, w0.W_Q - 0.5 * g.W_Q) and np.allclose(sgd.W_K, w0.W_K - 0.5 * g.W_K)
    adam = T.train(8, lr=0.01, optimizer="adam", steps=1).weights  # first Adam step: -lr g / (|g| + eps)
    assert np.allclose(adam.W_Q, w0.W_Q - 0.01 * g.W_Q / (np.abs(g.W_Q) + 1e-8))


@pytest.mark.parametrize("d_k", [4, 1024])
def test_the_scaled_model_learns_the_task(d_k):
    h = T.run(d_k, True, 1.0)
    assert h.final.accuracy > 0.99
    assert T.steps_to_accuracy(h.accuracy) is not None


def test_run_is_cached_and_read_only():
    h = T.run(4, steps=10)
    assert T.run(4, steps=10) is h
    with pytest.raises(ValueError):
        h.loss[0] = 1.0


def test_training_reproduces_on_other_cpu_code_paths():
    """Unscaled training is chaotic: one differing bit changes the run. The numbers must not depend
    on the CPU's SIMD path (numpy's dispatched exp/log, OpenBLAS kernels), so notebooks reproduce."""
    code = ("import hashlib; from sdpa_helpers import training as T; h = T.train(256, scaled=False, lr=1.0, steps=150); "
            "print(hashlib.sha256(b''.join(a.tobytes() for a in h[:5])).hexdigest())")
    h = T.train(256, scaled=False, lr=1.0, steps=150)
    here = hashlib.sha256(b"".join(a.tobytes() for a in h[:5])).hexdigest()
    from numpy._core._multiarray_umath import __cpu_features__ as features

    disable = " ".join(f for f in ("X86_V4", "AVX512_ICL", "AVX512_SPR", "AVX512F", "AVX512_SKX") if features.get(f))
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    if disable:
        env["NPY_DISABLE_CPU_FEATURES"] = disable
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == here


def test_steps_to_accuracy_and_share_of_examples():
    assert T.steps_to_accuracy([0, 0, 1, 1, 1], threshold=1.0, window=3) == 5
    assert T.steps_to_accuracy([1.0] * 10) == 10
    assert T.steps_to_accuracy([0.89] * 20) is None
    assert T.share_of_examples([3.0, 0.0, 0.0, 0.0]) == 0.25
    rng = np.random.default_rng(0)
    assert 0.85 < T.share_of_examples(np.ones(1000) + 1e-3 * rng.random(1000)) <= 0.91


# -- bad input ---------------------------------------------------------------------------
W4 = T.init_weights(4, rng=0)
B4 = T.make_batch(2, rng=0)
BAD = [
    (lambda: T.make_batch(0), ValueError, "batch_size"),
    (lambda: T.make_batch(2.5), TypeError, "batch_size"),
    (lambda: T.make_batch(2, n_keys=9), ValueError, "n_keys"),
    (lambda: T.make_batch(2, d_in=3), ValueError, "d_addr"),
    (lambda: T.init_weights(-1), ValueError, "d_k"),
    (lambda: T.ideal_weights(2), ValueError, "d_addr"),
    (lambda: T.forward(W4, "batch"), TypeError, "batch"),
    (lambda: T.forward((1, 2), B4), TypeError, "weights"),
    (lambda: T.forward(T.init_weights(4, d_in=8, rng=0), B4), ValueError, "d_in"),
    (lambda: T.forward(W4._replace(W_K=np.ones((5, 16))), B4), ValueError, "W_K"),
    (lambda: T.forward(W4._replace(W_Q=np.full((4, 16), np.nan)), B4), ValueError, "W_Q"),
    (lambda: T.forward(W4, B4, scale=0.0), ValueError, "scale"),
    (lambda: T.forward(W4, B4, gain=-1.0), ValueError, "gain"),
    (lambda: T.backward(B4, "fwd"), TypeError, "fwd"),
    (lambda: T.backward(T.make_batch(3, rng=0), T.forward(W4, B4)), ValueError, "fwd"),
    (lambda: T.train(4, optimizer="sgdm"), ValueError, "optimizer"),
    (lambda: T.train(4, lr=0), ValueError, "lr"),
    (lambda: T.train(4, scaled="yes"), TypeError, "scaled"),
    (lambda: T.train(4, seed=-1), ValueError, "seed"),
    (lambda: T.train(4, steps=0), ValueError, "steps"),
    (lambda: T.steps_to_accuracy([0.5, 1.0], window=0), ValueError, "window"),
    (lambda: T.steps_to_accuracy([0.5], window=3), ValueError, "window"),
    (lambda: T.share_of_examples([1.0], mass=2), ValueError, "mass"),
    (lambda: T.share_of_examples([-1.0, 2.0]), ValueError, "norms"),
    (lambda: T.finite_difference_gradient("f", np.ones(2)), TypeError, "f"),
    (lambda: T.finite_difference_gradient(np.sum, np.ones(2), h=0), ValueError, "h"),
]


@pytest.mark.parametrize("call, error, word", BAD, ids=[f"{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_the_parameter(call, error, word):
    with pytest.raises(error, match=word):
        call()


# -- figures -----------------------------------------------------------------------------
def labelled(ax):
    return ax.get_xlabel().strip() and ax.get_ylabel().strip()


def test_small_multiples_figure():
    runs = {(d, s): T.run(d, s, 1.0, steps=20) for d in (4, 64) for s in (True, False)}
    fig = P.training_small_multiples(runs, (4, 64), title="t")
    assert isinstance(fig, Figure) and len(fig.axes) == 8
    axes = np.array(fig.axes).reshape(4, 2)
    for ax in axes[:, 0]:
        assert ax.get_ylabel().strip()
    assert axes[-1, 0].get_xlabel() == "step" and axes[3, 0].get_yscale() == "log"
    assert len(axes[0, 0].get_lines()) == 2  # scaled and unscaled


def test_other_figures_return_labelled_axes():
    ax = P.gradient_histogram(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1e-5, 10.0]), d_k=1024)
    assert isinstance(ax, Axes) and labelled(ax) and ax.get_xscale() == "log"
    ax = P.lr_sweep([0.1, 1.0, 3.0], [50, 12, 11], [80, None, None], max_steps=300, d_k=1024)
    assert isinstance(ax, Axes) and labelled(ax)
    ax = P.best_steps([4, 64, 1024], [15, 12, 11], [18, 28, 89])
    assert isinstance(ax, Axes) and labelled(ax)


def test_draw_history_clips_tiny_gradients_to_the_floor():
    h = T.run(256, False, 1.0)
    _, axes = __import__("sdpa_helpers.plots", fromlist=["new_figure"]).new_figure(1, 4)
    lines = P.draw_history(h, axes, scaled=False)
    assert lines[3].get_ydata().min() >= P.GRAD_FLOOR


# -- exercises ---------------------------------------------------------------------------
def test_exercise_logit_gradient():
    from sdpa_helpers.exercises.ex09_training_with_and_without_scale import (LOGIT_GRAD_W_K, LOGIT_GRAD_X,
                                                                             LOGIT_GRAD_Y)

    def logit(W_Q):
        return float((W_Q @ LOGIT_GRAD_X) @ (LOGIT_GRAD_W_K @ LOGIT_GRAD_Y))

    fd = T.finite_difference_gradient(logit, np.ones((2, 3)))  # linear in W_Q: FD is exact up to rounding
    assert check("09.logit_grad_w_q", np.round(fd, 6), quiet=True)
    assert not check("09.logit_grad_w_q", np.round(fd, 6).T, quiet=True)
    assert not check("09.logit_grad_w_q", np.zeros((2, 3)), quiet=True)


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
    assert not check("09.softmax_ce_backward", lambda z, t: np.eye(len(z))[t] - softmax(z), quiet=True)


def test_exercise_lecun_variance():
    assert check("09.lecun_variance", 1 / 16, quiet=True)
    assert not check("09.lecun_variance", 1 / 4, quiet=True)
    assert not check("09.lecun_variance", 16, quiet=True)


def test_figures_use_the_course_styles_for_the_two_scalings():
    """Scaled: blue solid; unscaled: vermillion dashed -- in every figure of the notebook."""
    from matplotlib.colors import to_hex

    from sdpa_helpers.plots import SCALED, UNSCALED

    def styles(ax):
        return {(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines() if line.get_label()[0] != "_"}

    expected = {(to_hex(spec["color"]), spec["linestyle"]) for spec in (SCALED, UNSCALED)}
    runs = {(4, s): T.run(4, s, 1.0, steps=20) for s in (True, False)}
    fig = P.training_small_multiples(runs, (4,))
    assert all(styles(ax) == expected for ax in fig.axes)
    assert styles(P.lr_sweep([0.1, 1.0], [50, 10], [80, None], max_steps=300, d_k=1024)) == expected
    assert styles(P.best_steps([4, 1024], [15, 11], [18, 89])) == expected
    ax = P.gradient_histogram(np.array([1.0, 2.0]), np.array([1e-6, 3.0]), d_k=1024)
    medians = {(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines()}
    assert medians == expected
