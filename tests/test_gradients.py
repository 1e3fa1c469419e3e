"""The math layer of notebook 06, :mod:`sdpa_helpers.gradients`, against independent references.

The full Jacobian ``diag(p) - p p^T`` and naive loops, direct simulation with full d_k-long
vectors (Monte Carlo, 4-standard-error tolerances), central finite differences, and exact
closed forms near one-hot.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdpa_helpers import gradients as S
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.sampling import make_rng, mc_estimate, prefix_logits, sample_components
from sdpa_helpers.scales import D_K_CHOICES

EPS = np.finfo(float).eps


# -- Jacobian norm and logit gradient -------------------------------------------------------
def test_jacobian_frobenius_against_the_full_matrix():
    p = softmax(make_rng(5).standard_normal((40, 7)) * 4)
    assert np.allclose(S.jacobian_frobenius(p), np.linalg.norm(softmax_jacobian(p), axis=(1, 2)))


@pytest.mark.parametrize("delta", [1e-3, 1e-9, 1e-20, 1e-150])
def test_jacobian_frobenius_is_accurate_near_one_hot(delta):
    p = np.array([1.0 - 2 * delta, delta, delta])
    # closed form: diag entries p_i(1-p_i); off-diagonal p_i p_j
    exact = np.sqrt((p[0] * 2 * delta) ** 2 + 2 * (delta * (1 - delta)) ** 2
                    + 2 * 2 * (p[0] * delta) ** 2 + 2 * delta**4)
    assert np.isclose(S.jacobian_frobenius(p), exact, rtol=1e-9, atol=0)


def test_logit_gradient_against_the_jacobian():
    rng = make_rng(6)
    p = softmax(rng.standard_normal((30, 5)) * 3)
    g = rng.standard_normal((30, 5))
    want = np.einsum("qij,qj->qi", softmax_jacobian(p), g)
    got = S.logit_gradient(p, g)
    assert np.allclose(got, want) and np.allclose(got.sum(axis=1), 0.0)
    assert np.allclose(S.logit_gradient(p[0], g), np.einsum("ij,qj->qi", softmax_jacobian(p[0]), g))


def test_logit_gradient_is_accurate_near_one_hot():
    delta = 1e-30
    p = np.array([1.0 - 2 * delta, delta, delta])
    got = S.logit_gradient(p, [0.0, 1.0, 0.0])  # column 2 of J
    assert np.allclose(got, [-p[0] * delta, delta * (1 - delta), -delta**2], rtol=1e-12, atol=0)


@pytest.mark.parametrize("p, g, err, name", [([0.5, 0.6], [1.0, 0.0], ValueError, "p"),
                                             ([0.5, 0.5], [1.0, 0.0, 2.0], ValueError, "upstream"),
                                             ([0.5, 0.5], [np.nan, 0.0], ValueError, "upstream")])
def test_logit_gradient_bad_input(p, g, err, name):
    with pytest.raises(err, match=name):
        S.logit_gradient(p, g)


@pytest.mark.parametrize("bad", [[0.5, 0.6], [-0.1, 1.1], []])
def test_jacobian_frobenius_bad_input(bad):
    with pytest.raises(ValueError, match="p"):
        S.jacobian_frobenius(bad)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(float, st.integers(2, 9), elements=st.floats(-50, 50)), st.floats(0.01, 100))
def test_the_bound_of_notebook_06(z, c):
    """|J_ij| <= ||J||_F <= tr J <= 1 - m^2 <= 2 (1 - m), and J is positive semi-definite."""
    p = softmax(c * z)
    J = softmax_jacobian(p)
    fro = S.jacobian_frobenius(p)
    m = p.max()
    one_minus_m = np.sort(p)[:-1].sum()
    slack = 1e-12
    assert np.linalg.eigvalsh(J).min() > -slack
    assert np.abs(J).max() <= fro + slack and fro <= np.trace(J) + slack
    assert np.trace(J) <= 1 - m**2 + slack and 1 - m**2 <= 2 * one_minus_m + slack
    assert fro <= 2 * one_minus_m * (1 + 1e-12)


def test_the_constant_2_is_tight_and_sqrt2_would_be_wrong():
    for m in (0.9, 0.99, 0.999):
        fro = S.jacobian_frobenius([m, 1 - m])
        assert np.isclose(fro, 2 * m * (1 - m))
        assert fro > np.sqrt(2) * (1 - m)


# -- gradient_curves ------------------------------------------------------------------------
@pytest.mark.parametrize("d_k, scaled", [(2, False), (32, False), (32, True)])
def test_query_gradient_shortcut_matches_full_vectors(d_k, scaled):
    n_q, n_keys = 6000, 6
    rng = make_rng(200 + d_k + scaled)
    q = sample_components((n_q, d_k), rng=rng)
    k = sample_components((n_q, n_keys, d_k), rng=rng)
    g = rng.standard_normal((n_q, n_keys))
    c = 1 / np.sqrt(d_k) if scaled else 1.0
    p = softmax(c * np.einsum("qd,qkd->qk", q, k))
    v = S.logit_gradient(p, g)
    grad_q = c * np.einsum("qk,qkd->qd", v, k)
    curves = S.gradient_curves([d_k], n_keys, n_q, scale="sqrt" if scaled else "unscaled", rng=rng)
    for field, direct in (("jacobian_norm", S.jacobian_frobenius(p)),
                          ("logit_grad_norm", np.linalg.norm(v, axis=1)),
                          ("query_grad_norm", np.linalg.norm(grad_q, axis=1))):
        a, b = mc_estimate(direct), getattr(curves, field)
        assert abs(a.mean - b.mean[0]) < 4 * np.hypot(a.se, b.se[0]), field


def test_gradient_curves_story():
    d_ks = [1, 16, 256, 4096]
    u = S.gradient_curves(d_ks, 8, 4000, scale="unscaled", rng=7)
    s = S.gradient_curves(d_ks, 8, 4000, scale="sqrt", rng=7)
    assert u.jacobian_norm.mean[0] == s.jacobian_norm.mean[0]  # d_k = 1: the same draws and scale
    assert np.all(np.diff(u.jacobian_norm.median) < 0) and u.jacobian_norm.median[-1] < 1e-8
    assert np.all(np.diff(u.logit_grad_norm.mean) < 0)
    for field in ("jacobian_norm", "logit_grad_norm", "query_grad_norm"):
        mean = getattr(s, field).mean
        assert mean.min() > 0.6 * mean.max(), field


# -- finite differences ---------------------------------------------------------------------
@pytest.mark.parametrize("h", [1e-1, 1e-2, 1e-3, 1e-4])
def test_softmax_jacobian_against_central_differences(h):
    """Truncation <= h^2/48 (|sigma'''| <= 1/8), rounding about eps/h."""
    for z in (np.array([1.0, -0.5, 2.0, 0.3]), make_rng(8).standard_normal(7) * 3):
        err = np.abs(S.finite_difference_jacobian(softmax, z, h=h) - softmax_jacobian(softmax(z))).max()
        assert err <= h**2 / 48 + 10 * EPS / h


def test_finite_differences_on_a_polynomial_are_exact_to_rounding():
    f = lambda x: np.array([x[0] ** 2 * x[1], x[1] ** 2, x[0]])  # noqa: E731  quadratic: central FD exact
    J = S.finite_difference_jacobian(f, [1.5, -2.0], h=1e-3)
    assert np.allclose(J, [[2 * 1.5 * -2.0, 1.5**2], [0.0, -4.0], [1.0, 0.0]], atol=1e-6)


@pytest.mark.parametrize("args, err, name", [((42, [1.0]), TypeError, "f"), ((softmax, []), ValueError, "z"),
                                             ((softmax, [1.0], 0.0), ValueError, "h"),
                                             ((softmax, [np.nan]), ValueError, "z")])
def test_finite_differences_bad_input(args, err, name):
    with pytest.raises(err, match=name):
        S.finite_difference_jacobian(*args)




def test_finite_differences_refuse_a_step_below_float_spacing():
    with pytest.raises(ValueError, match="h"):
        S.finite_difference_jacobian(lambda x: 2 * x, [1e200, 1.0])


# -- jacobian_panels and one_minus_max (notebook 06's heatmaps, bound figure and explorer) ---------
def test_jacobian_panels_match_finite_differences_and_a_naive_loop():
    d_ks = [1, 16, 256]
    z = prefix_logits(d_ks, 5, rng=3)  # (3, 5) unscaled logits
    panels = S.jacobian_panels(d_ks, z)
    assert panels.jacobian.shape == (2, 3, 5, 5) and panels.frobenius.shape == (2, 3)
    for row, c in enumerate((lambda d: 1.0, lambda d: 1 / np.sqrt(d))):
        for col, d in enumerate(d_ks):
            x = c(d) * z[col]
            p = softmax(x)
            naive = np.array([[p[i] * ((i == j) - p[j]) for j in range(5)] for i in range(5)])
            assert np.allclose(panels.weights[row, col], p, rtol=1e-12, atol=0)
            assert np.allclose(panels.jacobian[row, col], naive, rtol=0, atol=1e-15)
            factor = c(d)
            fd = S.finite_difference_jacobian(lambda v, f=factor: softmax(v * f), z[col], h=1e-4) / factor
            assert np.abs(fd - panels.jacobian[row, col]).max() <= 1e-8 / min(1.0, c(d))
            assert panels.frobenius[row, col] == S.jacobian_frobenius(p)
    with pytest.raises(ValueError, match="logits"):
        S.jacobian_panels([1, 4], [[0.0, 1.0]])
    with pytest.raises(ValueError, match="scale"):
        S.jacobian_panels([1], [[0.0, 1.0]], scales=("scaled",))
    with pytest.raises(TypeError, match="scales"):
        S.jacobian_panels([1], [[0.0, 1.0]], scales="sqrt")
    with pytest.raises(ValueError, match="logits"):
        S.jacobian_panels([1], [[0.0, 1e101]], scales=(1e10,))


def test_one_minus_max_is_accurate_near_one_hot():
    p = np.array([[0.7, 0.2, 0.1], [0.25, 0.25, 0.5]])
    assert np.allclose(S.one_minus_max(p), 1 - p.max(axis=1), rtol=1e-14)
    tiny = np.array([1.0, 3e-300, 1e-300])  # 1 - max p rounds to 0; the sum of the rest does not
    assert S.one_minus_max(tiny) == 4e-300
    with pytest.raises(ValueError, match="p"):
        S.one_minus_max([0.5, 0.6])


@pytest.mark.parametrize("kwargs, err, name", [
    (dict(d_ks=[]), ValueError, "d_ks"), (dict(d_ks=[4, 0]), ValueError, "d_ks"),
    (dict(n_queries=1), ValueError, "n_queries"), (dict(scale="yes"), ValueError, "scale"),
    (dict(n_keys=0), ValueError, "n_keys"),
])
def test_gradient_curves_bad_input(kwargs, err, name):
    args = dict(d_ks=[1, 4], n_keys=3, n_queries=10, scale="sqrt") | kwargs
    with pytest.raises(err, match=name):
        S.gradient_curves(**args)


def test_gradient_curves_summarise_gradient_samples_and_every_scale_spelling_agrees():
    samples = S.gradient_samples([1, 16], 4, 50, scale="inv_d", rng=1)
    curves = S.gradient_curves([1, 16], 4, 50, scale="inv_d", rng=1)
    for field in ("jacobian_norm", "logit_grad_norm", "query_grad_norm"):
        x = getattr(samples, field)
        assert x.shape == (2, 50)
        assert np.allclose(getattr(curves, field).mean, x.mean(axis=1))
        assert np.allclose(getattr(curves, field).median, np.median(x, axis=1))
    by_factor = S.gradient_curves([4], 4, 50, scale=0.25, rng=1)
    assert np.array_equal(S.gradient_curves([4], 4, 50, scale="inv_d", rng=1).jacobian_norm.mean,
                          by_factor.jacobian_norm.mean)


def test_the_unscaled_mean_gradient_to_q_is_carried_by_a_heavy_tail():
    """Notebook 06: at d_k = 4096 the unscaled mean exceeds the scaled one while its median collapses."""
    u = S.gradient_samples([4096], 8, 4000, scale="unscaled", rng=3).query_grad_norm[0]
    s = S.gradient_samples([4096], 8, 4000, scale="sqrt", rng=3).query_grad_norm[0]
    assert u.mean() > 2 * s.mean() and np.median(u) < 1e-8 < 0.2 < np.median(s)
    top = np.sort(u)[::-1][: u.size // 100]
    assert top.sum() > 0.2 * u.sum()  # the top 1 % of queries carry over a fifth of the total


def test_finite_differences_of_a_scalar_give_the_gradient_shaped_like_the_input():
    W = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])
    g = S.finite_difference_jacobian(lambda x: float((x**3).sum()), W, h=1e-4)
    assert g.shape == W.shape and np.allclose(g, 3 * W**2, atol=1e-7)
    with pytest.raises(ValueError, match="W"):
        S.finite_difference_jacobian(np.sum, np.ones((2, 0)), z_name="W")


def test_typical_query_seed_is_the_median_query():
    seeds = range(21)
    seed = S.typical_query_seed(D_K_CHOICES, 64, 8, seeds=seeds)
    col = D_K_CHOICES.index(64)
    norms = {s: float(S.jacobian_frobenius(softmax(prefix_logits(D_K_CHOICES, 8, rng=s)[col]))) for s in seeds}
    below = sum(v < norms[seed] for v in norms.values())
    assert below == 10  # the middle of 21
    with pytest.raises(ValueError, match="d_k"):
        S.typical_query_seed(D_K_CHOICES, 3, 8)
    with pytest.raises(ValueError, match="seeds"):
        S.typical_query_seed(D_K_CHOICES, 64, 8, seeds=[])
    with pytest.raises(ValueError, match="seeds"):
        S.typical_query_seed(D_K_CHOICES, 64, 8, seeds=[-1])


def test_typical_query_seed_over_several_d_k_is_closest_to_the_median_at_each():
    seeds, shown = range(15), (1, 16, 256)
    seed = S.typical_query_seed(D_K_CHOICES, shown, 8, seeds=seeds)
    norms = {s: [float(S.jacobian_frobenius(softmax(prefix_logits(D_K_CHOICES, 8, rng=s)[D_K_CHOICES.index(d)])))
                 for d in shown] for s in seeds}
    def distance(s):  # by a plain loop: how far from the middle rank (7 of 0..14), summed over the d_k
        return sum(abs(sum(norms[o][i] < norms[s][i] for o in seeds) - 7) for i in range(len(shown)))
    assert distance(seed) == min(distance(s) for s in seeds)
    one = S.typical_query_seed(D_K_CHOICES, 64, 8, seeds=seeds)
    assert S.typical_query_seed(D_K_CHOICES, [64], 8, seeds=seeds) == one
    with pytest.raises(ValueError, match="d_k"):
        S.typical_query_seed(D_K_CHOICES, (1, 3), 8)


@pytest.mark.parametrize("mag", [1e-100, 1.0, 1e100])
def test_logit_gradient_at_any_magnitude(mag):
    p, g = np.array([0.5, 0.3, 0.2]), np.array([1.0, -1.0, 0.25])
    assert np.allclose(S.logit_gradient(p, mag * g) / mag, S.logit_gradient(p, g), rtol=1e-12, atol=1e-15)


def test_logit_gradient_at_the_edge_of_the_range():
    p = np.array([0.25, 0.75])
    g = np.array([1e100, -1e100])
    # J g = p * (g - p.g) with p.g = -0.5e100: (0.25 * 1.5, 0.75 * -0.5) * 1e100
    assert np.allclose(S.logit_gradient(p, g), [0.375e100, -0.375e100], rtol=1e-15)
    with pytest.raises(ValueError, match="upstream"):
        S.logit_gradient(p, [1e101, 0.0])
