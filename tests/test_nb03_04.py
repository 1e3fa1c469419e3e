"""Notebooks 03 and 04: the sample-variance closed forms, their simulations, figures, explorers, exercises.

Closed forms are checked against exact enumeration (small discrete distributions, the
cumulant count behind the matmul formula) and against Monte Carlo with tolerances of
4 standard errors computed from the samples themselves.
"""

import itertools
import math

import matplotlib
import numpy as np
import pytest

from sdpa_helpers import sampling

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sdpa_helpers import sample_spread as ss  # noqa: E402
from sdpa_helpers import scale_comparison as scmp  # noqa: E402
from sdpa_helpers import theory  # noqa: E402
from sdpa_helpers.attention import attention_scores, entropy  # noqa: E402
from sdpa_helpers.exercises import check  # noqa: E402
from sdpa_helpers.plots import get_axes  # noqa: E402
from sdpa_helpers.plots import scaling as sc_plots  # noqa: E402
from sdpa_helpers.plots import small_experiments as sx_plots  # noqa: E402
from sdpa_helpers.sampling import EXCESS_KURTOSIS, make_rng, sample_components  # noqa: E402
from sdpa_helpers.scales import SCALINGS, scale_factor  # noqa: E402
from sdpa_helpers.widgets import scaling as sc_widgets  # noqa: E402
from sdpa_helpers.widgets import small_experiments as sx_widgets  # noqa: E402


def mean_with_se(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / np.sqrt(values.size)


def variance_with_se(values):
    """Sample variance and its standard error sqrt((mu_4 - v^2) / n)."""
    values = np.asarray(values, dtype=float)
    v = values.var(ddof=1)
    mu4 = np.mean((values - values.mean()) ** 4)
    return v, np.sqrt((mu4 - v**2) / values.size)


# -- theory.sample_variance_moments ---------------------------------------------------------

DISCRETE = {
    "coin": (np.array([-1.0, 1.0]), np.array([0.5, 0.5])),
    "skewed": (np.array([0.0, 1.0, 3.0]), np.array([0.5, 0.3, 0.2])),
}


@pytest.mark.parametrize("name", DISCRETE)
@pytest.mark.parametrize("m", [2, 3, 4])
@pytest.mark.parametrize("ddof", [0, 1])
def test_sample_variance_moments_match_exact_enumeration(name, m, ddof):
    values, probs = DISCRETE[name]
    mu = probs @ values
    var = probs @ (values - mu) ** 2
    kappa = (probs @ (values - mu) ** 4) / var**2 - 3
    s2, w = [], []
    for idx in itertools.product(range(values.size), repeat=m):  # every sample of size m
        x = values[list(idx)]
        s2.append(np.var(x, ddof=ddof))
        w.append(np.prod(probs[list(idx)]))
    s2, w = np.array(s2), np.array(w)
    exact_mean = w @ s2
    exact_var = w @ (s2 - exact_mean) ** 2
    got = theory.sample_variance_moments(m, var, kappa, ddof=ddof)
    assert got.mean == pytest.approx(exact_mean, abs=1e-12)
    assert got.var == pytest.approx(exact_var, abs=1e-12)


@pytest.mark.parametrize("dist", list(EXCESS_KURTOSIS))
def test_sample_variance_moments_match_monte_carlo(dist):
    m, reps, var = 5, 200_000, 2.5
    x = sample_components((reps, m), dist=dist, mean=1.0, var=var, rng=11)
    s2 = x.var(axis=1, ddof=1)
    want = theory.sample_variance_moments(m, var, EXCESS_KURTOSIS[dist])
    mean, se_mean = mean_with_se(s2)
    v, se_v = variance_with_se(s2)
    assert abs(mean - want.mean) < 4 * se_mean
    assert abs(v - want.var) < 4 * se_v


def test_ddof_zero_rescales():
    one, zero = theory.sample_variance_moments(4, 2.0, 3.0), theory.sample_variance_moments(4, 2.0, 3.0, ddof=0)
    assert zero.mean == pytest.approx(1.5) and zero.var == pytest.approx(one.var * (3 / 4) ** 2)


# -- theory.dot_product_excess_kurtosis -----------------------------------------------------

@pytest.mark.parametrize("d_k", [1, 2, 3])
def test_dot_product_excess_kurtosis_exact_rademacher(d_k):
    # q.k with +-1 components: enumerate every sign pattern of the d_k products (each +-1 w.p. 1/2).
    sums = np.array([sum(p) for p in itertools.product([-1.0, 1.0], repeat=d_k)])
    kurt = np.mean(sums**4) / np.mean(sums**2) ** 2 - 3
    assert theory.dot_product_excess_kurtosis(d_k, -2.0, -2.0) == pytest.approx(kurt)


@pytest.mark.parametrize("dist,d_k", [("normal", 1), ("normal", 4), ("laplace", 2), ("uniform", 3)])
def test_dot_product_excess_kurtosis_monte_carlo(dist, d_k):
    n = 400_000
    q = sample_components((n, d_k), dist=dist, rng=1)
    k = sample_components((n, d_k), dist=dist, rng=2)
    s = np.einsum("nd,nd->n", q, k)
    # E[s^4] = (3 + kappa) d_k^2 for mean 0, variance d_k
    fourth, se = mean_with_se(s**4)
    kappa = theory.dot_product_excess_kurtosis(d_k, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])
    assert abs(fourth - (3 + kappa) * d_k**2) < 4 * se


# -- theory.matmul_sample_variance_moments --------------------------------------------------

PAIRINGS = (((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2)))


def fourth_cumulant(entries, d):
    """Joint fourth cumulant of four entries (i, j) of A @ B with standard normal A, B (Isserlis)."""
    count = 0
    for a, pi in enumerate(PAIRINGS):
        for b, sigma in enumerate(PAIRINGS):
            if a != b:
                rows = all(entries[x][0] == entries[y][0] for x, y in pi)
                cols = all(entries[x][1] == entries[y][1] for x, y in sigma)
                count += rows and cols
    return d * count


@pytest.mark.parametrize("n,d,p", [(2, 2, 2), (2, 3, 1), (1, 2, 3), (3, 1, 2), (2, 5, 3)])
def test_matmul_formula_matches_brute_force_cumulant_sum(n, d, p):
    entries = [(i, j) for i in range(n) for j in range(p)]
    m = len(entries)
    P = np.eye(m) - 1.0 / m  # centring matrix: (m - 1) s2 = x^T P x
    K = sum(P[a, b] * P[c, e] * fourth_cumulant([entries[a], entries[b], entries[c], entries[e]], d)
            for a, b, c, e in itertools.product(range(m), repeat=4))
    brute = (2 * d**2 * (m - 1) + K) / (m - 1) ** 2  # Var(x^T P x) / (m - 1)^2 with Sigma = d I
    assert theory.matmul_sample_variance_moments(n, d, p).var == pytest.approx(brute, rel=1e-12)


def test_fourth_cumulant_of_one_entry_is_6d():
    assert fourth_cumulant([(0, 0)] * 4, 5) == 30  # excess kurtosis 6d / d^2 = 6 / d


@pytest.mark.parametrize("n,d,p,ddof", [(2, 2, 2, 1), (2, 2, 2, 0), (3, 5, 2, 1), (1, 4, 3, 1), (4, 1, 4, 1),
                                        (8, 8, 8, 1)])
def test_matmul_formula_matches_monte_carlo(n, d, p, ddof):
    s2 = sampling.sample_matmul_variances(n, 100_000, d=d, p=p, ddof=ddof, rng=7)
    want = theory.matmul_sample_variance_moments(n, d, p, ddof=ddof)
    mean, se_mean = mean_with_se(s2)
    v, se_v = variance_with_se(s2)
    assert abs(mean - want.mean) < 4 * se_mean
    assert abs(v - want.var) < 4 * se_v


def test_matmul_spread_exceeds_iid_formula():
    for n in (2, 8, 64):
        exact = theory.matmul_sample_variance_moments(n, n)
        iid = theory.sample_variance_moments(n * n, n, theory.dot_product_excess_kurtosis(n))
        assert exact.var > iid.var
    # large square products: ratio of variances -> 3
    big = 4096
    ratio = theory.matmul_sample_variance_moments(big, big).var / theory.sample_variance_moments(
        big * big, big, theory.dot_product_excess_kurtosis(big)).var
    assert ratio == pytest.approx(3.0, rel=2e-3)


# -- theory.shared_row_square_covariance -------------------------------------------------------

@pytest.mark.parametrize("dist,d_k,var_q,var_k", [("normal", 1, 1.0, 1.0), ("normal", 4, 2.0, 0.5),
                                                  ("laplace", 3, 1.0, 1.0), ("rademacher", 4, 1.0, 1.0),
                                                  ("uniform", 2, 1.0, 3.0)])
def test_shared_row_square_covariance_monte_carlo(dist, d_k, var_q, var_k):
    n = 400_000
    q = sample_components((n, d_k), dist=dist, var=var_q, rng=3)
    k_j = sample_components((n, d_k), var=var_k, rng=4)
    k_k = sample_components((n, d_k), var=var_k, rng=5)
    s_ij, s_ik = np.einsum("nd,nd->n", q, k_j), np.einsum("nd,nd->n", q, k_k)
    second = d_k * var_q * var_k  # E[S^2], known
    cov, se = mean_with_se((s_ij**2 - second) * (s_ik**2 - second))
    want = theory.shared_row_square_covariance(d_k, var_q, var_k, EXCESS_KURTOSIS[dist])
    assert abs(cov - want) < 4 * se + 1e-12
    cov1, se1 = mean_with_se(s_ij * s_ik)
    assert abs(cov1) < 4 * se1  # uncorrelated


# -- theory.effective_sample_size ---------------------------------------------------------------

@pytest.mark.parametrize("m", [2, 3, 10, 1000])
@pytest.mark.parametrize("kappa", [-1.5, 0.0, 3.0])
def test_effective_sample_size_inverts_the_iid_formula(m, kappa):
    var_s2 = theory.sample_variance_moments(m, 3.0, kappa).var
    assert theory.effective_sample_size(var_s2, 3.0, kappa) == pytest.approx(m, rel=1e-9)


def test_effective_sample_size_of_square_products_is_about_a_third():
    n = 256
    exact = theory.matmul_sample_variance_moments(n, n)
    m_eff = theory.effective_sample_size(exact.var, n, theory.dot_product_excess_kurtosis(n))
    assert 0.3 < m_eff / n**2 < 0.36


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc,name", [
    (lambda: theory.sample_variance_moments(1), ValueError, "m"),
    (lambda: theory.sample_variance_moments(2.0), TypeError, "m"),
    (lambda: theory.sample_variance_moments(5, var=-1), ValueError, "var"),
    (lambda: theory.sample_variance_moments(5, excess_kurtosis=-3), ValueError, "excess_kurtosis"),
    (lambda: theory.sample_variance_moments(5, ddof=5), ValueError, "ddof"),
    (lambda: theory.sample_variance_moments(5, ddof=1.0), TypeError, "ddof"),
    (lambda: theory.dot_product_excess_kurtosis(0), ValueError, "d_k"),
    (lambda: theory.dot_product_excess_kurtosis(4, excess_kurtosis_k=-2.5), ValueError, "excess_kurtosis_k"),
    (lambda: theory.matmul_sample_variance_moments(1, 3), ValueError, "n \\* p"),
    (lambda: theory.matmul_sample_variance_moments(2, 0), ValueError, "d"),
    (lambda: theory.matmul_sample_variance_moments(2, 2, p="3"), TypeError, "p"),
    (lambda: theory.matmul_sample_variance_moments(2, 2, ddof=-1), ValueError, "ddof"),
    (lambda: theory.shared_row_square_covariance(4, var_q=-1), ValueError, "var_q"),
    (lambda: theory.shared_row_square_covariance(4, excess_kurtosis_q=-2.1), ValueError, "excess_kurtosis_q"),
    (lambda: theory.effective_sample_size(0.0), ValueError, "var_s2"),
    (lambda: theory.effective_sample_size(1.0, var=0.0), ValueError, "var"),
    (lambda: theory.effective_sample_size(1.0, excess_kurtosis=-5), ValueError, "excess_kurtosis"),
    (lambda: sampling.sample_matmul_variances(0, 10), ValueError, "n"),
    (lambda: sampling.sample_matmul_variances(2, 10, ddof=4), ValueError, "ddof"),
    (lambda: sampling.sample_matmul_variances(2, 0), ValueError, "n_reps"),
    (lambda: scale_factor("half", 4), ValueError, "scale"),
    (lambda: scale_factor("sqrt", 0), ValueError, "d_k"),
    (lambda: sx_plots.variance_histogram([1.0, np.nan], 2.0), ValueError, "s2"),
    (lambda: sx_plots.variance_histogram([1.0, 2.0], 0.0), ValueError, "true_var"),
    (lambda: sx_plots.relative_spread_histograms({}), TypeError, "s2_by_n"),
    (lambda: sx_plots.spread_vs_n([2, 4], [1.0]), ValueError, "sim_sd"),
    (lambda: sx_plots.conditional_spread([1.0, 2.0], [1.0], d_k=1), ValueError, "s_ij and s_ik"),
    (lambda: sx_plots.conditional_spread([1.0], [1.0], d_k=0), ValueError, "d_k"),
    (lambda: ss.exact_relative_sd([2.5]), TypeError, "n"),
    (lambda: sc_plots.logit_std_vs_d_k([1, 2], {"sqrt": [1.0]}), ValueError, "sim_std"),
    (lambda: sc_plots.logit_std_vs_d_k([1], {"cube": [1.0]}), ValueError, "sim_std"),
    (lambda: sc_plots.attention_vs_d_k([1], {"sqrt": [1.0]}, {"sqrt": [0.5]}, n_keys=0), ValueError, "n_keys"),
    (lambda: sc_plots.sorted_weights({}), TypeError, "weights"),
    (lambda: sc_plots.set_power_of_two_axis(get_axes(), which="z"), ValueError, "which"),
    (lambda: scmp.query_weights(8192), ValueError, "d_k"),
    (lambda: scmp.logit_std(-1), ValueError, "d_k"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# -- simulations of the widgets modules --------------------------------------------------------------

@pytest.mark.parametrize("n,d,p,ddof", [(2, 2, 2, 0), (3, 4, 2, 1)])
def test_sample_matmul_variances_matches_a_naive_loop(n, d, p, ddof):
    reps = 50  # one chunk: the same draws as rng.standard_normal((reps, n, d)) then ((reps, d, p))
    got = sampling.sample_matmul_variances(n, reps, d=d, p=p, ddof=ddof, rng=9)
    g = make_rng(9)
    A, B = g.standard_normal((reps, n, d)), g.standard_normal((reps, d, p))
    naive = [np.var(A[r] @ B[r], ddof=ddof) for r in range(reps)]
    assert np.allclose(got, naive, rtol=1e-12)


def test_sample_matmul_variances_is_seeded_and_chunked():
    a = sampling.sample_matmul_variances(64, 600, rng=1)  # several chunks
    assert np.array_equal(a, sampling.sample_matmul_variances(64, 600, rng=1))
    assert not np.array_equal(a[:300], a[300:])
    mean, se = mean_with_se(a / 64)
    assert abs(mean - 1) < 4 * se


def test_relative_sample_variances_cached_and_read_only():
    r = ss.relative_sample_variances(4)
    assert r is ss.relative_sample_variances(4)
    assert r.size == ss.reps_for(4) and not r.flags.writeable
    assert [ss.reps_for(n) for n in ss.SIZES] == sorted(
        (ss.reps_for(n) for n in ss.SIZES), reverse=True)
    assert all(2 * n * n * ss.reps_for(n) <= ss.DRAWS_PER_SIZE or ss.reps_for(n) == ss.MIN_REPS for n in ss.SIZES)


def test_logit_std_and_query_weights():
    for d_k in (1, 16, 1024):
        sd = scmp.logit_std(d_k)
        # SE of a std: half the relative SE of the variance
        rel_se = theory.sample_variance_moments(scmp.N_STD_SAMPLES, 1.0,
                                                theory.dot_product_excess_kurtosis(d_k)).std / 2
        assert abs(sd / math.sqrt(d_k) - 1) < 4 * rel_se
        w = scmp.query_weights(d_k)
        for weights in w.values():
            assert weights.shape == (scmp.N_KEYS,) and np.isclose(weights.sum(), 1.0)
            assert np.all(np.diff(weights) <= 1e-15), "sorted, largest first"
        # the scalings order the sharpness: unscaled >= 1/sqrt(d_k) >= 1/d_k (equal at d_k = 1)
        h = [float(entropy(w[name])) for name in ("unscaled", "sqrt", "inv_d")]
        assert h[0] <= h[1] + 1e-12 <= h[2] + 2e-12


# -- figures -----------------------------------------------------------------------------------------

def labelled(ax):
    return bool(ax.get_xlabel().strip()) and bool(ax.get_ylabel().strip())


def test_variance_histogram_counts_fractions():
    s2 = sampling.sample_matmul_variances(2, 5000, rng=0)
    bins = np.linspace(0, 12, 49)
    ax = sx_plots.variance_histogram(s2, 2.0, bins=bins, label="ddof=1")
    assert isinstance(ax, Axes) and labelled(ax)
    values, edges, _ = ax.patches[0].get_data()
    counts, _ = np.histogram(s2, bins=bins)
    assert np.allclose(values * s2.size, counts) and np.allclose(edges, bins)
    assert any("2.0" in t.get_text() or "2" in t.get_text() for t in ax.get_legend().get_texts())


def test_relative_spread_histograms_and_spread_vs_n():
    data = {n: ss.relative_sample_variances(n) for n in (2, 8)}
    fig = sx_plots.relative_spread_histograms(data)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert all(ax.get_xlabel() and ax.get_title() for ax in fig.axes) and fig.axes[0].get_ylabel()
    ax = sx_plots.spread_vs_n([2, 8], [data[2].std(ddof=1), data[8].std(ddof=1)], n_max=64)
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    exact_line = ax.lines[0]
    assert np.allclose(exact_line.get_ydata(), [theory.matmul_sample_variance_moments(n, n).std / n
                                                for n in exact_line.get_xdata()])


def test_conditional_spread_rises_for_shared_queries():
    g = make_rng(0)
    q = g.standard_normal((100_000, 1))
    k = g.standard_normal((2, 100_000, 1))
    s_ij, s_ik = (q * k[0])[:, 0], (q * k[1])[:, 0]
    ax = sx_plots.conditional_spread(s_ij, s_ik, d_k=1)
    assert labelled(ax)
    y = ax.lines[-1].get_ydata()
    assert y[-1] > 1.5 > 1.0 > y[0], "large |S_ij| comes with a large spread of S_ik"


def test_logit_std_vs_d_k_lines_follow_the_theory():
    sim = {name: np.ones(3) for name in SCALINGS}
    ax = sc_plots.logit_std_vs_d_k([1, 2, 4], sim)
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    for line, (name, e) in zip(ax.lines[:3], SCALINGS.items()):
        x = np.asarray(line.get_xdata())
        want = [theory.scaled_moments(theory.dot_product_moments(int(d)), scale_factor(name, int(d))).std
                for d in x]
        assert np.allclose(line.get_ydata(), want)
        assert np.isclose(np.polyfit(np.log(x), np.log(line.get_ydata()), 1)[0], 0.5 + e)


def test_attention_figures():
    fig = sc_plots.attention_vs_d_k([1, 4, 16], {"sqrt": np.ones(3)}, {"sqrt": np.full(3, 0.3)}, n_keys=8)
    assert isinstance(fig, Figure) and all(labelled(ax) for ax in fig.axes)
    fig = sc_plots.weights_small_multiples({d: scmp.query_weights(d) for d in (4, 64)})
    assert len(fig.axes) == 2 and all(labelled(ax) for ax in fig.axes)
    ax = sc_plots.sorted_weights({"unscaled": np.array([0.1, 0.7, 0.2]), "inv_d": np.array([0.3, 0.35, 0.35])})
    assert ax.lines[0].get_ydata().tolist() == [0.7, 0.2, 0.1]
    assert ax.lines[1].get_ydata().tolist() == [0.35, 0.35, 0.3]  # in the first scaling's key order


def test_power_of_two_axis_labels():
    ax = sc_plots.set_power_of_two_axis(get_axes())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["1/64", "1/16", "1/4", "1", "4", "16", "64"]


# -- explorers ---------------------------------------------------------------------------------------

def test_variance_spread_explorer_shows_the_cached_simulation():
    e = sx_widgets.VarianceSpreadExplorer()
    assert e.main == "n" and e.controls["n"].description == "n"
    assert e.sweep_values() == list(ss.SIZES)
    e.controls["n"].value = 8
    r = ss.relative_sample_variances(8)
    values = e.stairs.get_data().values
    assert np.allclose(values * r.size, np.histogram(r, bins=ss.REL_BINS)[0])
    assert f"{r.std(ddof=1):.3f}" in e.readout.value
    assert e.marker.get_data()[1][0] == pytest.approx(r.std(ddof=1))


def test_variance_spread_explorer_precomputes_every_n():
    ss.relative_sample_variances.cache_clear()
    e = sx_widgets.VarianceSpreadExplorer(n=8)  # timings: benchmarks/slider_latency.py
    assert ss.relative_sample_variances.cache_info().currsize == len(ss.SIZES)
    assert len(e._backgrounds) == 1, "one background serves every n (fixed axes)"
    assert e.controls["n"].value == 8 and "n = 8:" in e.readout.value
    renders, fig = e.renders, e.fig
    for n in ss.SIZES:  # a visit to every n: no new simulation, background or figure
        e.controls["n"].value = n
    assert e.renders == renders + len(ss.SIZES) and len(e._backgrounds) == 1 and e.fig is fig
    assert ss.relative_sample_variances.cache_info().misses == len(ss.SIZES)


def test_scaling_explorer_every_d_k_reuses_one_figure_and_bounded_caches():
    e = sc_widgets.ScalingExplorer(d_k=64)
    fig, renders = e.fig, e.renders
    for d_k in scmp.D_KS:
        e.controls["d_k"].value = d_k
    assert e.fig is fig and len(e._backgrounds) == 1
    assert e.renders == renders + len(scmp.D_KS)  # one render per move, none extra
    assert scmp._logit_std.cache_info().currsize <= len(scmp.D_KS)
    assert scmp._prefix_logits.cache_info().currsize == 1  # one (13, N_KEYS) array serves every d_k


def test_scaling_explorer_markers_sit_on_the_lines():
    e = sc_widgets.ScalingExplorer(d_k=256)
    sd = scmp.logit_std(256)
    for name in SCALINGS:
        x, y = e.markers[name].get_data()
        assert x[0] == 256 and y[0] == pytest.approx(scale_factor(name, 256) * sd)
        assert np.allclose(e.lines[name].get_ydata(), scmp.query_weights(256)[name])


# -- exercises ---------------------------------------------------------------------------------------

def good_variance(x, ddof):
    x = np.asarray(x, dtype=float)
    return ((x - x.mean()) ** 2).sum() / (x.size - ddof)


def good_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


@pytest.mark.parametrize("key,rights,wrongs", [
    # the rounded values printed in the notebooks' solutions must be accepted too
    ("03.np_var_mean", [8 / 3, 2.667, 2.67], [3.0, 2.0, 1.5, 2.25]),
    ("03.sample_variance", [good_variance],
     [lambda x, ddof: np.var(x), lambda x, ddof: np.std(x, ddof=ddof),
      lambda x, ddof: ((np.asarray(x) - np.mean(x)) ** 2).sum() / (len(x) - 1)]),
    ("03.shared_row_cov", [128.0, 128], [64.0, 2.0, 0.0, 256.0]),
    ("04.wrong_d", [math.sqrt(64 / 768), 0.289, 0.2887], [1.0, math.sqrt(64 / 512), 64 / 768, 1 / 12]),
    ("04.split_scale", [64**-0.25, 0.354, 0.3536], [1 / 8, 1 / 64, 8.0, 0.5]),
    ("04.scaled_scores", [good_scores],
     [lambda Q, K: Q @ np.swapaxes(K, -1, -2), lambda Q, K: Q @ np.swapaxes(K, -1, -2) / Q.shape[-1],
      lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])]),
])
def test_checkers_accept_the_answer_and_reject_wrong_ones(key, rights, wrongs, capsys):
    for right in rights:
        assert check(key, right) is True
    for wrong in wrongs:
        assert check(key, wrong) is False
    capsys.readouterr()


def test_reference_solutions_agree_with_the_library():
    g = make_rng(5)
    Q, K = g.standard_normal((2, 3, 8)), g.standard_normal((2, 4, 8))
    assert np.allclose(good_scores(Q, K), attention_scores(Q, K))


def test_spread_vs_n_draws_error_bars_when_given_standard_errors():
    from matplotlib.container import ErrorbarContainer
    ax = sx_plots.spread_vs_n([2, 8], [1.4, 0.3], sim_se=[0.03, 0.004], n_max=64)
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1 and "2 SE" in bars[0].get_label()
    segments = bars[0].lines[2][0].get_segments()
    assert np.allclose([seg[1, 1] - seg[0, 1] for seg in segments], [0.12, 0.016])  # +-2 SE
    with pytest.raises(ValueError, match="sim_se"):
        sx_plots.spread_vs_n([2, 8], [1.4, 0.3], sim_se=[0.03])
