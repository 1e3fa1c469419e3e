"""Notebooks 05 (softmax saturation) and 06 (vanishing gradients): math, figures, explorers, exercises.

The math is checked against independent references: direct simulation with full d_k-long
vectors (Monte Carlo, 4-standard-error tolerances), the package's softmax / entropy /
softmax_jacobian in naive loops, closed forms, and central finite differences.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdpa_helpers import saturation as S
from sdpa_helpers.attention import entropy, softmax, softmax_jacobian
from sdpa_helpers.exercises import check
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
def test_shortcut_matches_full_vectors(d_k, scaled):
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
    curves = S.saturation_curves(D_KS, n_keys, n_q, scaled=True, rng=3)
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
    u = S.saturation_curves(D_KS + [4096], 16, 3000, scaled=False, rng=4)
    s = S.saturation_curves(D_KS + [4096], 16, 3000, scaled=True, rng=4)
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
    (dict(n_queries=1), ValueError, "n_queries"), (dict(scaled="yes"), TypeError, "scaled"),
    (dict(n_keys=0), ValueError, "n_keys"),
])
def test_curves_bad_input(kwargs, err, name):
    args = dict(d_ks=[1, 4], n_keys=3, n_queries=10, scaled=True) | kwargs
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
    curves = S.gradient_curves([d_k], n_keys, n_q, scaled=scaled, rng=rng)
    for field, direct in (("jacobian_norm", S.jacobian_frobenius(p)),
                          ("logit_grad_norm", np.linalg.norm(v, axis=1)),
                          ("query_grad_norm", np.linalg.norm(grad_q, axis=1))):
        a, b = S.mc_estimate(direct), getattr(curves, field)
        assert abs(a.mean - b.mean[0]) < 4 * np.hypot(a.se, b.se[0]), field


def test_gradient_curves_story():
    d_ks = [1, 16, 256, 4096]
    u = S.gradient_curves(d_ks, 8, 4000, scaled=False, rng=7)
    s = S.gradient_curves(d_ks, 8, 4000, scaled=True, rng=7)
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


# -- figures (headless) ---------------------------------------------------------------------
def labelled(ax):
    """x label, and a y label (or a title, for panels that share the row's y label)."""
    return bool(ax.get_xlabel().strip() and (ax.get_ylabel().strip() or ax.get_title().strip()))


def test_saturation_figures():
    from sdpa_helpers.plots import saturation as P

    ax = P.weight_bars([0.2, 0.8], scaled=True)
    assert labelled(ax) and tuple(map(float, ax.get_ylim())) == (0.0, 1.0)
    fig = P.saturation_small_multiples({1: ([0.5, 0.5], [0.5, 0.5]), 64: ([1.0, 0.0], [0.6, 0.4])})
    assert len(fig.axes) == 4 and all(ax.get_xlabel() for ax in fig.axes)
    u = S.saturation_curves([1, 8, 64], 4, 20, scaled=False, rng=0)
    s = S.saturation_curves([1, 8, 64], 4, 20, scaled=True, rng=0)
    fig = P.saturation_curves_figure(u, s, 4, iid_limit=(0.4, 1.0, 3.0))
    assert len(fig.axes) == 3 and all(labelled(ax) for ax in fig.axes)
    assert fig.axes[2].get_yscale() == "log"
    fig = P.temperature_small_multiples([0.1, -0.2, 0.3], [0.125, 1, 8], 2.0 ** np.arange(-3, 4))
    assert len(fig.axes) == 5 and all(labelled(ax) for ax in fig.axes)
    with pytest.raises(ValueError, match="weights"):
        P.weight_bars([[0.5, 0.5]], scaled=False)


def test_gradient_figures():
    from sdpa_helpers.plots import gradients as P

    ax = P.jacobian_heatmap(softmax_jacobian([0.2, 0.3, 0.5]))
    assert labelled(ax) and tuple(map(float, ax.images[0].get_clim())) == (-0.25, 0.25)
    assert ax.images[0].get_cmap().name == "cividis"
    fig = P.jacobian_small_multiples({1: ([0.5, 0.5], [0.5, 0.5]), 16: ([0.5, 0.5], [1.0, 0.0])})
    assert sum(labelled(a) for a in fig.axes) >= 4
    assert np.allclose(fig.axes[0].images[0].get_array(), softmax_jacobian([0.5, 0.5]))
    with pytest.raises(ValueError, match="weights_by_d_k"):
        P.jacobian_small_multiples({1: ([0.5, 0.6], [0.5, 0.5])})
    with pytest.raises(TypeError, match="weights_by_d_k"):
        P.jacobian_small_multiples([([0.5, 0.5], [0.5, 0.5])])
    u = S.gradient_curves([1, 8, 64], 4, 20, scaled=False, rng=0)
    s = S.gradient_curves([1, 8, 64], 4, 20, scaled=True, rng=0)
    fig = P.gradient_norms_figure(u, s)
    assert len(fig.axes) == 3 and all(labelled(a) and a.get_yscale() == "log" for a in fig.axes)
    ax = P.jacobian_bound_figure(softmax(make_rng(0).standard_normal((50, 4)) * 5))
    assert labelled(ax) and ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="J"):
        P.jacobian_heatmap([[1.0, 2.0]])
    with pytest.raises(ValueError, match="p"):
        P.jacobian_bound_figure([0.5, 0.5])


def test_jacobian_titles_are_accurate_near_one_hot():
    """Titles use jacobian_frobenius: right where diag(p) - p p^T loses J's top diagonal entry."""
    from sdpa_helpers.plots import gradients as P

    p = softmax(np.array([0.0, -60.0, -80.0]))  # 1 - max p ~ 1e-26: p[0] rounds to exactly 1.0
    exact = S.jacobian_frobenius(p)
    assert np.isclose(exact, 2 * p[1], rtol=1e-6, atol=0)  # two keys in play: ||J||_F = 2 m (1 - m)
    assert not np.isclose(np.linalg.norm(softmax_jacobian(p)), exact, rtol=0.05, atol=0)  # the naive norm is off
    fig = P.jacobian_small_multiples({4: (p, p)})
    assert P.format_norm(exact) in fig.axes[0].get_title()


def _line_styles(fig):
    """(colour, linestyle) of every line with a data label other than the markers-only ones."""
    from matplotlib.colors import to_hex

    return {(to_hex(line.get_color()), line.get_linestyle()) for ax in fig.axes for line in ax.get_lines()
            if len(line.get_xdata()) > 2}


def test_scalings_keep_their_colours_and_line_styles():
    """Unscaled = vermillion dashed, scaled = blue solid; nothing else uses those two pairs."""
    from sdpa_helpers import plots
    from sdpa_helpers.plots import gradients as PG
    from sdpa_helpers.plots import saturation as PS

    unscaled = (plots.UNSCALED["color"].lower(), "--")
    scaled = (plots.SCALED["color"].lower(), "-")
    u = S.saturation_curves([1, 8, 64], 4, 20, scaled=False, rng=0)
    s = S.saturation_curves([1, 8, 64], 4, 20, scaled=True, rng=0)
    styles = _line_styles(PS.saturation_curves_figure(u, s, 4, iid_limit=(0.4, 1.0, 3.0)))
    assert unscaled in styles and scaled in styles
    u = S.gradient_curves([1, 8, 64], 4, 20, scaled=False, rng=0)
    s = S.gradient_curves([1, 8, 64], 4, 20, scaled=True, rng=0)
    styles = _line_styles(PG.gradient_norms_figure(u, s))
    assert unscaled in styles and scaled in styles
    ax = PG.jacobian_bound_figure(softmax(make_rng(0).standard_normal((50, 4)) * 5))
    colours = {c.lower() for c in (plots.UNSCALED["color"], plots.SCALED["color"])}
    from matplotlib.colors import to_hex
    assert not colours & {to_hex(line.get_color()) for line in ax.get_lines()}
    assert not colours & {to_hex(c) for c in ax.collections[0].get_facecolors()}


# -- explorers ------------------------------------------------------------------------------
def test_saturation_explorer_shows_the_softmax_and_keeps_one_background():
    from sdpa_helpers.widgets import saturation as Wsat

    e = Wsat.SaturationExplorer(d_k=4096, keys=16, seed=3)
    q, keys = Wsat._query_and_keys(3)
    z = keys[:16, :4096] @ q
    heights = [p.vertices[1, 1] for p in e.bars[0].get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z)))
    heights = [p.vertices[1, 1] for p in e.bars[1].get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z / 64)))
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    assert len(e._backgrounds) == 1, "sweeping d_k never redraws the background"
    hits = Wsat._curves.cache_info().hits
    e.controls["d_k"].value = 2
    assert Wsat._curves.cache_info().hits == hits + 1, "curves come from the cache"


def test_temperature_explorer_reproduces_the_times_8_example():
    from sdpa_helpers.widgets.saturation import TEMPERATURES, TemperatureExplorer

    e = TemperatureExplorer(temperature=1 / 8)
    heights = [p.vertices[1, 1] for p in e.bars.get_paths()]
    assert np.allclose(heights, [0.0326, 0.0030, 0.1615, 0.0030, 0.8000], atol=5e-5)
    assert e.sweep_values() == list(TEMPERATURES)


def test_jacobian_explorer_shows_the_jacobian():
    from sdpa_helpers.widgets import gradients as Wgrad

    e = Wgrad.JacobianExplorer(d_k=16, seed=2)
    q, keys = Wgrad._query_and_keys(2, e.n_keys)
    z = keys[:, :16] @ q[:16]
    assert np.allclose(e.images[0].get_array(), softmax_jacobian(softmax(z)))
    assert np.allclose(e.images[1].get_array(), softmax_jacobian(softmax(z / 4)))
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    assert len(e._backgrounds) == 1


# Update speed is measured by benchmarks/slider_latency.py, never asserted in a test.


# -- exercises ------------------------------------------------------------------------------
def test_exercises_accept_right_and_reject_wrong_answers():
    q = dict(quiet=True)
    assert check("05.scaled_weight", 1 / (1 + np.exp(-2)), **q) and not check("05.scaled_weight", 0.9997, **q)
    assert check("05.temperature", 10.0, **q) and not check("05.temperature", 100.0, **q)

    def stable(x):
        x = np.asarray(x, dtype=float)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def naive(x):
        return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)

    def global_max(x):  # stable, but not row by row
        e = np.exp(x - x.max())
        return e / e.sum()

    assert check("05.stable_softmax", stable, **q)
    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", naive, **q)
    assert not check("05.stable_softmax", global_max, **q)

    def global_max_row_sums(x):  # one maximum for the whole batch: a row far below it underflows to 0/0
        e = np.exp(x - x.max())
        return e / e.sum(axis=-1, keepdims=True)

    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", global_max_row_sums, **q)
    assert not check("05.scaled_weight", None, **q) and not check("06.softmax_jacobian", lambda p: None, **q)

    assert check("06.jacobian_half", [[0.25, -0.25], [-0.25, 0.25]], **q)
    assert not check("06.jacobian_half", [[0.25, 0.25], [0.25, 0.25]], **q)
    assert check("06.largest_entry", 0.21, **q) and not check("06.largest_entry", 0.14, **q)
    assert check("06.softmax_jacobian", lambda p: np.diag(p) - np.outer(p, p), **q)
    assert not check("06.softmax_jacobian", lambda p: np.diag(p * (1 - p)), **q)  # diagonal only
    assert not check("06.softmax_jacobian", lambda p: np.outer(p, p) - np.diag(p), **q)  # sign flipped
    assert not check("06.softmax_jacobian", lambda p: np.diag(p), **q)
