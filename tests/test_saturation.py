"""The math layer of notebooks 05-06, :mod:`sdpa_helpers.saturation`, against independent references.

Direct simulation with full d_k-long vectors (Monte Carlo, 4-standard-error tolerances), the
package's softmax / entropy / softmax_jacobian in naive loops, closed forms against Monte Carlo
over seeds, and central finite differences.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdpa_helpers import saturation as S
from sdpa_helpers.attention import entropy, softmax, softmax_jacobian
from sdpa_helpers.sampling import make_rng, sample_components

EPS = np.finfo(float).eps


# -- mc_estimate ----------------------------------------------------------------------------
def test_mc_estimate_matches_the_textbook_formulas():
    x = make_rng(0).standard_normal((50, 3))
    est = S.mc_estimate(x)
    assert np.allclose(est.mean, x.mean(axis=0))
    assert np.allclose(est.se, x.std(axis=0, ddof=1) / np.sqrt(50))
    assert np.allclose(est.median, np.median(x, axis=0))
    assert np.allclose(S.mc_estimate(x.T, axis=1).mean, est.mean)


@pytest.mark.parametrize("bad, err", [([1.0], ValueError), ([[1.0, np.nan], [2.0, 3.0]], ValueError),
                                      ("abc", TypeError)])
def test_mc_estimate_bad_input(bad, err):
    with pytest.raises(err, match="samples"):
        S.mc_estimate(bad)


# -- query_logits -------------------------------------------------------------------------
@pytest.mark.parametrize("d_k", [1, 7, 256])
def test_query_logits_variance_is_d_k_unscaled_and_1_scaled(d_k):
    n = 200_000
    for scale, want in ((1.0, d_k), (None, 1.0)):
        x = S.query_logits(d_k, 1, n, scale=scale, rng=d_k).ravel()
        se = np.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / n)  # SE of a sample variance
        assert abs(x.var() - want) < 4 * se
        assert abs(x.mean()) < 4 * x.std() / np.sqrt(n)


@pytest.mark.parametrize("d_k, scaled", [(3, False), (16, False), (16, True)])
def test_shortcut_matches_full_vectors(d_k, scaled):  # scaled: bool picks the factor c passed as scale
    """The chi-square shortcut against q . k_j with full d_k-long vectors: same distribution."""
    n_q, n_keys = 6000, 5
    rng = make_rng(100 + d_k)
    q = sample_components((n_q, d_k), rng=rng)
    k = sample_components((n_q, n_keys, d_k), rng=rng)
    c = 1 / np.sqrt(d_k) if scaled else 1.0
    direct = S.weight_stats(c * np.einsum("qd,qkd->qk", q, k))
    short = S.weight_stats(S.query_logits(d_k, n_keys, n_q, scale=c, rng=rng))
    for field in ("max_weight", "entropy", "effective_keys"):
        a, b = S.mc_estimate(getattr(direct, field)), S.mc_estimate(getattr(short, field))
        assert abs(a.mean - b.mean) < 4 * np.hypot(a.se, b.se), field
    # the joint law too: the spread of a query's logits around their own mean
    z_direct = c * np.einsum("qd,qkd->qk", q, k)
    z_short = S.query_logits(d_k, n_keys, n_q, scale=c, rng=rng)
    a, b = S.mc_estimate(z_direct.std(axis=1)), S.mc_estimate(z_short.std(axis=1))
    assert abs(a.mean - b.mean) < 4 * np.hypot(a.se, b.se)


def test_query_logits_is_seeded():
    assert np.array_equal(S.query_logits(8, 3, 4, rng=1), S.query_logits(8, 3, 4, rng=make_rng(1)))


@pytest.mark.parametrize("kwargs, err, name", [
    (dict(d_k=0), ValueError, "d_k"), (dict(d_k=2.0), TypeError, "d_k"), (dict(n_keys=-1), ValueError, "n_keys"),
    (dict(n_queries=0), ValueError, "n_queries"), (dict(scale=-1.0), ValueError, "scale"),
    (dict(scale=np.inf), ValueError, "scale"), (dict(rng="seed"), TypeError, "rng"),
])
def test_query_logits_bad_input(kwargs, err, name):
    args = dict(d_k=4, n_keys=3, n_queries=5) | kwargs
    with pytest.raises(err, match=name):
        S.query_logits(**args)


# -- weight_stats ---------------------------------------------------------------------------
def test_weight_stats_against_softmax_and_entropy_in_a_loop():
    z = make_rng(2).standard_normal((20, 6)) * 3
    stats = S.weight_stats(z)
    for i, row in enumerate(z):
        p = softmax(row)
        assert np.isclose(stats.max_weight[i], p.max())
        assert np.isclose(stats.entropy[i], entropy(p))
        assert np.isclose(stats.effective_keys[i], np.exp(entropy(p)))


def test_weight_stats_limits_and_huge_logits():
    s = S.weight_stats([[0.0] * 8, [1e6, 0.0, 0.0, -1e6, 0, 0, 0, 0], [1000.0, 1000.0, 0, 0, 0, 0, 0, 0]])
    assert np.allclose(s.max_weight, [1 / 8, 1.0, 0.5])
    assert np.allclose(s.entropy, [np.log(8), 0.0, np.log(2)])
    assert np.allclose(s.effective_keys, [8.0, 1.0, 2.0])
    # exact where p underflows: two logits 800 apart give H = 801 e^-800 (about 0), never NaN
    assert np.isfinite(S.weight_stats([800.0, 0.0]).entropy)


@pytest.mark.parametrize("bad, err", [([], ValueError), ([1.0, np.nan], ValueError), ([1.0, np.inf], ValueError),
                                      (["a", "b"], TypeError), (3.0, ValueError)])
def test_weight_stats_bad_input(bad, err):
    with pytest.raises(err, match="logits"):
        S.weight_stats(bad)


# -- saturation_curves ----------------------------------------------------------------------
D_KS = [1, 4, 64, 1024]


def test_saturation_curves_equal_a_naive_loop_with_the_same_draws():
    n_keys, n_q = 5, 30
    curves = S.saturation_curves(D_KS, n_keys, n_q, scale="sqrt", rng=3)
    rng = make_rng(3)
    a = rng.standard_normal((n_q, n_keys))
    for i, d_k in enumerate(D_KS):
        norm_q = np.sqrt(rng.chisquare(d_k, n_q))
        p = [softmax(norm_q[r] / np.sqrt(d_k) * a[r]) for r in range(n_q)]
        assert np.isclose(curves.max_weight.mean[i], np.mean([pr.max() for pr in p]))
        assert np.isclose(curves.entropy.mean[i], np.mean([entropy(pr) for pr in p]))
        assert np.isclose(curves.effective_keys.mean[i], np.mean([np.exp(entropy(pr)) for pr in p]))
    assert curves.d_k.tolist() == D_KS and curves.max_weight.se.shape == (len(D_KS),)


def test_saturation_curves_shapes_of_the_story():
    u = S.saturation_curves(D_KS + [4096], 16, 3000, scale="unscaled", rng=4)
    s = S.saturation_curves(D_KS + [4096], 16, 3000, scale="sqrt", rng=4)
    # d_k = 1: sqrt(1) = 1, the two scalings coincide (same draws)
    assert u.max_weight.mean[0] == s.max_weight.mean[0]
    assert np.all(np.diff(u.max_weight.mean) > 0) and np.all(np.diff(u.entropy.mean) < 0)
    assert u.max_weight.mean[-1] > 0.95 and u.effective_keys.mean[-1] < 1.15
    # scaled, large d_k: logits behave like i.i.d. N(0, 1) (independent sample, 4 SE)
    limit = S.weight_stats(make_rng(99).standard_normal((3000, 16)))
    for field in ("max_weight", "entropy", "effective_keys"):
        ref = S.mc_estimate(getattr(limit, field))
        est = getattr(s, field)
        assert abs(est.mean[-1] - ref.mean) < 4 * np.hypot(est.se[-1], ref.se), field


@pytest.mark.parametrize("kwargs, err, name", [
    (dict(d_ks=[]), ValueError, "d_ks"), (dict(d_ks=[4, 0]), ValueError, "d_ks"),
    (dict(d_ks=[4.5]), TypeError, "d_ks"), (dict(d_ks=[[1, 2]]), ValueError, "d_ks"),
    (dict(n_queries=1), ValueError, "n_queries"), (dict(scale="yes"), ValueError, "scale"),
    (dict(scale=True), TypeError, "scale"), (dict(scale=-2.0), ValueError, "scale"),
    (dict(n_keys=0), ValueError, "n_keys"),
])
def test_curves_bad_input(kwargs, err, name):
    args = dict(d_ks=[1, 4], n_keys=3, n_queries=10, scale="sqrt") | kwargs
    for fn in (S.saturation_curves, S.gradient_curves):
        with pytest.raises(err, match=name):
            fn(**args)


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
        a, b = S.mc_estimate(direct), getattr(curves, field)
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


@pytest.mark.parametrize("args, err, name", [((42, [1.0]), TypeError, "f"), ((softmax, [[1.0, 2.0]]), ValueError, "z"),
                                             ((softmax, [1.0], 0.0), ValueError, "h"),
                                             ((softmax, [np.nan]), ValueError, "z")])
def test_finite_differences_bad_input(args, err, name):
    with pytest.raises(err, match=name):
        S.finite_difference_jacobian(*args)




# -- the scale vocabulary -------------------------------------------------------------------
def test_every_spelling_of_a_scale_gives_the_same_curves():
    d_ks = [1, 16, 256]
    by_name = S.saturation_curves(d_ks, 4, 50, scale="sqrt", rng=1)
    by_none = S.saturation_curves(d_ks, 4, 50, scale=None, rng=1)
    assert np.array_equal(by_name.entropy.mean, by_none.entropy.mean)
    unscaled = S.saturation_curves(d_ks, 4, 50, scale="unscaled", rng=1)
    assert np.array_equal(unscaled.entropy.mean, S.saturation_curves(d_ks, 4, 50, scale=1.0, rng=1).entropy.mean)
    inv_d = S.gradient_curves([4], 4, 50, scale="inv_d", rng=1)
    assert np.array_equal(inv_d.jacobian_norm.mean, S.gradient_curves([4], 4, 50, scale=0.25, rng=1).jacobian_norm.mean)
    z = S.query_logits(16, 3, 5, scale="unscaled", rng=2)
    assert np.allclose(S.query_logits(16, 3, 5, scale="sqrt", rng=2), z / 4)
    assert np.allclose(S.query_logits(16, 3, 5, scale="inv_d", rng=2), z / 16)


# -- extreme but finite input (issue 11) ----------------------------------------------------
def test_weight_stats_at_the_edge_of_the_float_range():
    """[1e308, -1e308]: the gap overflows to inf; the softmax is one-hot, entropy exactly 0 (was NaN)."""
    s = S.weight_stats([[1e308, -1e308], [-1e308, 1e308], [1e308, 1e308]])
    assert s.max_weight.tolist() == [1.0, 1.0, 0.5]
    assert np.allclose(s.entropy, [0.0, 0.0, np.log(2)]) and np.all(np.isfinite(s.effective_keys))
    for mag in 10.0 ** np.arange(-300, 301, 50):
        st_ = S.weight_stats([mag, 0.0, -mag])
        assert np.isfinite(st_.entropy) and 0 <= st_.entropy <= np.log(3) + 1e-12


def test_query_logits_at_huge_d_k_is_right_or_names_d_k():
    """d_k = 2**70 used to raise numpy's ufunc error; now it is drawn (scaled: variance 1)."""
    x = S.query_logits(2**70, 1, 20_000, rng=0).ravel()
    se = np.sqrt(2 / x.size)  # SE of the sample variance of normal draws
    assert abs(x.var() - 1) < 4 * se
    with pytest.raises(ValueError, match="d_k"):
        S.query_logits(2**1001, 4, 3)
    with pytest.raises(ValueError, match="d_ks"):
        S.saturation_curves([2**1001], 4, 3)


# -- prefix_logits ----------------------------------------------------------------------------
def test_prefix_logits_have_the_law_of_cut_vectors():
    """Against full vectors cut to their first d components: variance d, and the increments'
    correlation: Cov(z(d1), z(d2)) = d1 for d1 < d2 (same keys)."""
    d_ks, n_keys, reps = [1, 4, 16], 3, 20_000
    draws = np.stack([S.prefix_logits(d_ks, n_keys, rng=r) for r in range(reps)])  # (reps, 3, n_keys)
    rng = make_rng(7)
    q = sample_components((reps, 16), rng=rng)
    k = sample_components((reps, n_keys, 16), rng=rng)
    full = np.stack([np.einsum("rd,rkd->rk", q[:, :d], k[:, :, :d]) for d in d_ks], axis=1)  # (reps, 3, n_keys)
    for x in (draws, full):
        v = x[:, :, 0].var(axis=0)
        assert np.all(np.abs(v - np.array(d_ks)) < 4 * np.array(d_ks) * np.sqrt(2 / reps) * 2)  # kurtosis margin x2
        cov = np.mean(x[:, 0, 0] * x[:, 2, 0])
        assert abs(cov - 1) < 4 * np.std(x[:, 0, 0] * x[:, 2, 0]) / np.sqrt(reps)
    # two keys of one query share |q|: corr(z_1^2, z_2^2) = 2d / (3 E||q||^4 - d^2) = 2/(2d + 6), 1/4 at d = 1
    for x in (draws, full):
        r = np.corrcoef(x[:, 0, 0] ** 2, x[:, 0, 1] ** 2)[0, 1]
        assert abs(r - 0.25) < 0.06


def test_prefix_logits_bad_input():
    with pytest.raises(ValueError, match="increasing"):
        S.prefix_logits([4, 2], 3)
    with pytest.raises(ValueError, match="n_keys"):
        S.prefix_logits([1, 2], 0)


# -- the closed form of issue 14 ----------------------------------------------------------------
def test_entropy_closed_form_against_monte_carlo_over_seeds():
    """H = ln n - sigma2/2: close where sigma2 << ln n, and undershooting beyond (the recorded numbers)."""
    n = 1024
    s2 = np.array([1.0, 4.0, 9.0, 2 * np.log(n)])
    h = S.iid_entropy(n, s2, 400, seeds=range(5))  # (5, 4)
    law = S.entropy_closed_form(n, s2)
    rel = (h - law) / h  # per seed
    assert np.all(np.abs(rel[:, 0]) < 2e-3)  # sigma = 1: a few 1e-4
    assert np.all((rel[:, 1] > 0.01) & (rel[:, 1] < 0.03))  # sigma2 = 4: about 1.9 %
    assert np.all((rel[:, 2] > 0.25) & (rel[:, 2] < 0.33))  # sigma2 = 9: about 29 %
    assert np.all((h[:, 3] > 2.3) & (h[:, 3] < 2.9)) and abs(law[3]) < 1e-12  # law 0, truth about 2.6


def test_entropy_closed_form_matches_an_exact_integral_at_large_n():
    """At large n, H -> ln n + ln E e^z - E[z e^z]/E e^z; check the law's two moments by quadrature."""
    x = np.linspace(-12, 12, 200_001)
    dx = x[1] - x[0]
    phi = np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)
    for s2 in (0.5, 1.0, 3.0):
        s = np.sqrt(s2)
        m0 = np.sum(np.exp(s * x) * phi) * dx
        m1 = np.sum(s * x * np.exp(s * x) * phi) * dx
        assert np.isclose(np.log(m0), s2 / 2, rtol=1e-9) and np.isclose(m1 / m0, s2, rtol=1e-9)
        assert np.isclose(np.log(16) + np.log(m0) - m1 / m0, S.entropy_closed_form(16, s2), rtol=1e-9)


def test_onset_and_effective_keys():
    n = np.array([4, 16, 1024])
    assert np.allclose(S.saturation_onset(n), np.log(n))
    # at the onset the law leaves half the entropy and sqrt(n) effective keys
    assert np.allclose(S.entropy_closed_form(16, S.saturation_onset(16)), np.log(16) / 2)
    assert np.allclose(S.effective_keys_closed_form(1024, S.saturation_onset(1024)), 32.0)
    with pytest.raises(ValueError, match="sigma2"):
        S.entropy_closed_form(8, -1.0)
    with pytest.raises(ValueError, match="n_keys"):
        S.saturation_onset(0)


def test_iid_entropy_equals_a_naive_loop():
    h = S.iid_entropy(6, [0.5, 2.0], 7, seeds=[3])
    x = make_rng(3).standard_normal((7, 6))
    for j, v in enumerate((0.5, 2.0)):
        assert np.isclose(h[0, j], np.mean([entropy(softmax(np.sqrt(v) * row)) for row in x]))
    with pytest.raises(ValueError, match="seed"):
        S.iid_entropy(6, [1.0], 7, seeds=[])


def test_temperature_curves_equal_the_softmax_at_each_temperature():
    z = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
    t = np.array([1 / 8, 1.0, 8.0])
    w, stats = S.temperature_curves(z, t)
    for i, ti in enumerate(t):
        assert np.allclose(w[i], softmax(z, temperature=ti))
        assert np.isclose(stats.entropy[i], entropy(softmax(z / ti)))
    assert np.allclose(w[0], [0.0326, 0.0030, 0.1615, 0.0030, 0.8000], atol=5e-5)  # Karpathy's x8 example
    with pytest.raises(ValueError, match="temperatures"):
        S.temperature_curves(z, [0.0])
    with pytest.raises(ValueError, match="overflow"):
        S.temperature_curves([1e300, 0.0], [1e-10])


def test_explorer_query_budget():
    assert [S.explorer_queries(n) for n in S.KEY_COUNTS] == [4096, 1024, 256, 64, 32]
    assert all(S.explorer_queries(n) * n <= 16384 or S.explorer_queries(n) == 32 for n in S.KEY_COUNTS)


@pytest.mark.parametrize("mag", [1e-300, 1e-200, 1.0, 1e200, 1e300, 1e307])
def test_mc_estimate_and_logit_gradient_at_any_magnitude(mag):
    """Scale-equivariant: the answer at magnitude `mag` is `mag` times the answer at 1 (no overflow, no underflow)."""
    x = np.array([1.0, -1.0, 0.5, 0.25])
    base = S.mc_estimate(x)
    est = S.mc_estimate(mag * x)
    assert np.isclose(est.mean, mag * base.mean, rtol=1e-12) and np.isclose(est.se, mag * base.se, rtol=1e-12)
    p, g = np.array([0.5, 0.3, 0.2]), np.array([1.0, -1.0, 0.25])
    assert np.allclose(S.logit_gradient(p, mag * g) / mag, S.logit_gradient(p, g), rtol=1e-12, atol=1e-15)


def test_finite_differences_refuse_a_step_below_float_spacing():
    with pytest.raises(ValueError, match="h"):
        S.finite_difference_jacobian(lambda x: 2 * x, [1e200, 1.0])


# -- jacobian_panels and one_minus_max (notebook 06's heatmaps, bound figure and explorer) ---------
def test_jacobian_panels_match_finite_differences_and_a_naive_loop():
    from sdpa_helpers.attention import softmax

    d_ks = [1, 16, 256]
    z = S.prefix_logits(d_ks, 5, rng=3)  # (3, 5) unscaled logits
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
    with pytest.raises(ValueError, match="overflow"):
        S.jacobian_panels([1], [[0.0, 1e308]], scales=(1e10,))


def test_one_minus_max_is_accurate_near_one_hot():
    p = np.array([[0.7, 0.2, 0.1], [0.25, 0.25, 0.5]])
    assert np.allclose(S.one_minus_max(p), 1 - p.max(axis=1), rtol=1e-14)
    tiny = np.array([1.0, 3e-300, 1e-300])  # 1 - max p rounds to 0; the sum of the rest does not
    assert S.one_minus_max(tiny) == 4e-300
    with pytest.raises(ValueError, match="p"):
        S.one_minus_max([0.5, 0.6])


def test_mc_estimate_and_logit_gradient_near_the_largest_float():
    """Rescaling by 2**-e (not dividing by 2**e, which is inf for max |x| >= 2**1023) works up to the largest float."""
    x = np.array([1.7e308, 1.6e308, 1.5e308])
    est = S.mc_estimate(x)
    assert est.mean == pytest.approx(1.6e308, rel=1e-15)  # the old 1/2**1024 rescaling gave NaN here
    assert est.se == pytest.approx(1e307 / np.sqrt(3), rel=1e-12)  # sd 1e307
    p = np.array([0.25, 0.75])
    g = np.array([1.7e308, -1.7e308])
    # J g = p * (g - p.g) with p.g = -0.5 * 1.7e308: (0.25 * 1.5, 0.75 * -0.5) * 1.7e308
    assert np.allclose(S.logit_gradient(p, g), [0.375 * 1.7e308, -0.375 * 1.7e308], rtol=1e-15)
