"""Notebooks 01 and 02: their figures, the variance explorer and the exercises, against independent references."""

import itertools
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sdpa_helpers import dot_product_law as law  # noqa: E402
from sdpa_helpers.dot_product_law import sample_dot_products_fast  # noqa: E402
from sdpa_helpers.exercises import check  # noqa: E402
from sdpa_helpers.plots import dot_products as dp  # noqa: E402
from sdpa_helpers.plots import variance as vp  # noqa: E402
from sdpa_helpers.sampling import DISTRIBUTIONS, EXCESS_KURTOSIS, sample_dot_products  # noqa: E402
from sdpa_helpers.theory import dot_product_excess_kurtosis, normal_pdf  # noqa: E402
from sdpa_helpers.widgets import variance as wv  # noqa: E402


def texts(ax):
    return [t.get_text() for t in ax.texts]


def labelled(ax):
    return bool(ax.get_xlabel().strip()) and bool(ax.get_ylabel().strip())


# -- plots.dot_products ---------------------------------------------------------------------------

def test_score_table_cells_are_the_naive_double_loop():
    rng = np.random.default_rng(0)
    Q = rng.integers(-3, 4, (3, 4)).astype(float)
    K = rng.integers(-3, 4, (5, 4)).astype(float)
    naive = [[sum(Q[i, t] * K[j, t] for t in range(4)) for j in range(5)] for i in range(3)]
    ax = dp.score_table(Q, K, decimals=0)
    assert isinstance(ax, Axes) and labelled(ax) and ax.get_title()
    assert texts(ax) == [f"{v:.0f}" for row in naive for v in row]  # row by row, as imshow shows them
    assert "(3, 4) @ (4, 5)" in ax.get_title()


def test_score_table_bad_input():
    with pytest.raises(ValueError, match="Q has d_k=2 but K has d_k=3"):
        dp.score_table(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Q"):
        dp.score_table(np.ones(3), np.ones((2, 3)))
    with pytest.raises(TypeError, match="K"):
        dp.score_table(np.ones((2, 3)), [["a", "b", "c"]])


def test_frobenius_nesting_panels_hold_a_b_hadamard_rowwise_and_total():
    A = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])
    B = np.array([[2.0, 1.0, 4.0], [-1.0, 5.0, 2.0]])
    fig = dp.frobenius_nesting(A, B)
    assert isinstance(fig, Figure) and len(fig.axes) == 6  # five panels and one colourbar
    a, b, had, row, tot, cbar = fig.axes
    assert texts(a) == [f"{v:.1f}" for v in A.ravel()] and texts(b) == [f"{v:.1f}" for v in B.ravel()]
    assert texts(had) == [f"{A[i, j] * B[i, j] + 0.0:.1f}" for i in range(2) for j in range(3)]
    assert texts(row) == [f"{sum(A[i, j] * B[i, j] for j in range(3)):.1f}" for i in range(2)]
    assert texts(tot) == [f"{np.trace(A.T @ B):.1f}"]  # trace(Aᵀ B), computed another way
    # one colour normalisation, symmetric about 0 and wide enough for every value shown
    limits = {tuple(map(float, ax.images[0].get_clim())) for ax in (a, b, had, row, tot)}
    bound = max(np.abs(A).max(), np.abs(B).max(), np.abs(A * B).max(), np.abs((A * B).sum(axis=1)).max(),
                abs(np.trace(A.T @ B)))
    assert limits == {(-bound, bound)}
    assert cbar.get_ylabel()
    assert all(ax.get_xlabel() for ax in (a, b, had, row, tot))
    with pytest.raises(ValueError, match="same shape"):
        dp.frobenius_nesting(A, B.T)


def test_geometric_picture_draws_each_factor_as_a_density():
    rng = np.random.default_rng(3)
    parts = {d: {"norm": 1 + rng.standard_normal(4000) / np.sqrt(2 * d), "cos": rng.standard_normal(4000),
                 "dot": rng.standard_normal(4000)} for d in (4, 64)}
    fig = dp.geometric_picture(parts)
    assert len(fig.axes) == 3 and all(labelled(ax) for ax in fig.axes)
    for ax, key in zip(fig.axes, ("norm", "cos", "dot")):
        for patch, d in zip(ax.patches, (4, 64)):
            values, edges, _ = patch.get_data()
            inside = np.mean((parts[d][key] >= edges[0]) & (parts[d][key] <= edges[-1]))
            assert np.isclose((values * np.diff(edges)).sum(), inside)  # a density: integrates to the share inside
    assert len(fig.axes[2].get_lines()) == 1  # the N(0, 1) reference
    with pytest.raises(ValueError, match="keys"):
        dp.geometric_picture({4: {"norm": [1.0]}})
    with pytest.raises(TypeError, match="ratios_by_d_k"):
        dp.geometric_picture({})


def test_annotations_never_print_negative_zero():
    fig = dp.frobenius_nesting([[-0.01, 1.0]], [[1.0, 0.0]], decimals=1)
    assert "-0.0" not in texts(fig.axes[0])


def test_spread_growth_plots_the_sample_standard_deviations():
    rng = np.random.default_rng(1)
    samples = {d: rng.standard_normal(500) * math.sqrt(d) for d in (1, 4, 64)}
    fig = dp.spread_growth(samples)
    assert isinstance(fig, Figure) and len(fig.axes) == 2 and all(labelled(ax) for ax in fig.axes)
    ax_std = fig.axes[1]
    points = [line for line in ax_std.get_lines() if line.get_label() == "sample std"][0]
    assert np.allclose(points.get_xdata(), [1, 4, 64])
    assert np.allclose(points.get_ydata(), [np.std(samples[d], ddof=1) for d in (1, 4, 64)])
    assert ax_std.get_xscale() == "log" and ax_std.get_yscale() == "log"


def test_spread_growth_bad_input():
    with pytest.raises(TypeError, match="samples_by_d_k"):
        dp.spread_growth({4: np.ones(3)})
    with pytest.raises(ValueError, match="d_k"):
        dp.spread_growth({0: np.ones(3), 4: np.ones(3)})


# -- plots.variance ------------------------------------------------------------------------------

@pytest.mark.parametrize("d_k", [1, 2, 3, 4, 5, 8, 16, 64, 255, 256, 1024, 4096])
def test_rademacher_bins_hold_the_same_number_of_lattice_values(d_k):
    edges = law.histogram_edges(d_k, "rademacher")
    sd = math.sqrt(d_k)
    values = np.arange(-d_k, d_k + 1, 2)  # every possible q·k
    assert not np.isin(values, edges).any(), "no possible value sits on an edge"
    assert edges[0] <= -4.5 * sd and edges[-1] >= 4.5 * sd, "the bins cover the axis"
    assert np.allclose(edges, -edges[::-1]), "symmetric about 0"
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0]) and widths[0] >= (law.BINS[1] - law.BINS[0]) * sd
    counts, _ = np.histogram(values, edges)
    inside = (edges[:-1] >= -d_k) & (edges[1:] <= d_k)
    assert len(set(counts[inside].tolist())) <= 1, "every full bin holds the same number of values"


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace"])
def test_continuous_bins_are_standardised(dist):
    assert np.allclose(law.histogram_edges(16, dist), law.BINS * 4)


def test_histogram_density_matches_numpy_and_counts_outsiders():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(10_000)
    edges = np.linspace(-2, 2, 21)
    d = law.histogram_density(x, edges)
    counts, _ = np.histogram(x, edges)
    assert np.allclose(d * np.diff(edges) * x.size, counts)
    assert np.isclose((d * np.diff(edges)).sum(), np.mean(np.abs(x) <= 2))
    inside = x[np.abs(x) < 2]
    assert np.allclose(law.histogram_density(inside, edges), np.histogram(inside, edges, density=True)[0])


@pytest.mark.parametrize("call,err,match", [
    (lambda: law.histogram_edges(0), ValueError, "d_k"),
    (lambda: law.histogram_edges(2.0), TypeError, "d_k"),
    (lambda: law.histogram_edges(4, "cauchy"), ValueError, "dist must be one of"),
    (lambda: law.histogram_density([1.0], [1.0, 0.0]), ValueError, "edges"),
    (lambda: law.histogram_density([], [0.0, 1.0]), ValueError, "samples"),
    (lambda: vp.covariance_heatmap(np.ones((2, 3))), ValueError, "C must be a square"),
    (lambda: vp.histogram_grid({"normal": {1: np.ones(3)}, "uniform": {2: np.ones(3)}}), ValueError, "same d_k"),
    (lambda: vp.histogram_grid([]), TypeError, "samples"),
    (lambda: vp.kurtosis_decay([1, 4], {"normal": [1.0]}, {"normal": [1.0]}, {"normal": [1.0]}),
     ValueError, "normal"),
])
def test_variance_plots_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize("dist", ["normal", "uniform", "laplace"])
def test_dot_product_histogram(dist):
    s = sample_dot_products(16, 5000, dist=dist, rng=3)
    ax = vp.dot_product_histogram(s, 16, dist)
    assert labelled(ax) and ax.get_title()
    assert ax.get_xlim() == (-18.0, 18.0)
    (patch,) = ax.patches
    values, edges, _ = patch.get_data()
    assert np.isclose((values * np.diff(edges)).sum(), np.mean((s >= edges[0]) & (s < edges[-1])))
    (curve,) = ax.get_lines()
    assert np.allclose(curve.get_ydata(), normal_pdf(curve.get_xdata(), 0.0, 16.0))


@pytest.mark.parametrize("d_k", [1, 4, 16])
def test_rademacher_is_drawn_as_stems_at_its_values(d_k):
    s = sample_dot_products(d_k, 4000, dist="rademacher", rng=3)
    ax = vp.dot_product_histogram(s, d_k, "rademacher")
    assert not ax.patches  # no bars: a discrete distribution
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"][0]
    x, y = markers.get_data()
    lattice = np.arange(-d_k, d_k + 1, 2)
    assert set(x.tolist()) <= set(lattice.tolist())
    for v, h in zip(x, y):  # height = observed probability / 2 (values are 2 apart)
        assert np.isclose(h, np.mean(s == v) / 2)
    (stems,) = ax.collections
    assert len(stems.get_segments()) == len(x)


def test_histogram_grid_labels_the_outer_axes():
    samples = {dist: {d: sample_dot_products(d, 500, dist=dist, rng=4) for d in (1, 16)} for dist in DISTRIBUTIONS}
    fig = vp.histogram_grid(samples)
    axes = np.array(fig.axes).reshape(len(DISTRIBUTIONS), 2)
    assert [ax.get_title() for ax in axes[0]] == ["$d_k$ = 1", "$d_k$ = 16"]
    assert all(ax.get_xlabel() for ax in axes[-1]) and all(ax.get_ylabel() for ax in axes[:, 0])
    assert [ax.get_ylabel().split("\n")[0] for ax in axes[:, 0]] == list(DISTRIBUTIONS)


def test_covariance_heatmap_prints_the_matrix():
    C = np.array([[1.0, -0.004], [-0.004, 0.98]])
    ax = vp.covariance_heatmap(C)
    assert texts(ax) == ["1.00", "0.00", "0.00", "0.98"] and labelled(ax)


def test_kurtosis_decay_draws_absolute_values_on_log_axes():
    ax = vp.kurtosis_decay([1, 4], {"rademacher": [-2.0, np.nan]}, {"rademacher": [0.01, 0.01]},
                           {"rademacher": [-2.0, -0.5]})
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and labelled(ax)
    theory_line = ax.get_lines()[0]
    assert np.allclose(theory_line.get_ydata(), [2.0, 0.5])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["rademacher (negative)"]


# -- the excess kurtosis behind the explorer's readout -------------------------------------------

def _fourth_moment(dist):
    """E[x^4] of a standardised component, by quadrature of its density (or exactly)."""
    if dist == "rademacher":
        return 1.0
    x = np.linspace(-40, 40, 800_001)
    if dist == "normal":
        f = np.exp(-x**2 / 2) / math.sqrt(2 * math.pi)
    elif dist == "uniform":
        a = math.sqrt(3)
        f = np.where(np.abs(x) <= a, 1 / (2 * a), 0.0)
    else:
        b = 1 / math.sqrt(2)
        f = np.exp(-np.abs(x) / b) / (2 * b)
    assert np.isclose(np.trapezoid(x**2 * f, x), 1.0, atol=1e-4)  # standardised
    return float(np.trapezoid(x**4 * f, x))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_component_excess_kurtosis_by_quadrature(dist):
    assert math.isclose(_fourth_moment(dist) - 3, EXCESS_KURTOSIS[dist], abs_tol=1e-3)


@pytest.mark.parametrize("d_k", [1, 2, 3, 4])
def test_rademacher_dot_excess_kurtosis_by_exact_enumeration(d_k):
    # With Rademacher components each product q_i k_i is itself +-1 with probability 1/2:
    # enumerate all 2^d_k sign patterns of the products.
    sums = np.array([sum(signs) for signs in itertools.product((-1.0, 1.0), repeat=d_k)])
    exact = np.mean(sums**4) / np.mean(sums**2) ** 2 - 3
    assert math.isclose(dot_product_excess_kurtosis(d_k, -2.0, -2.0), exact, abs_tol=1e-12)


@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_dot_excess_kurtosis_by_monte_carlo(dist):
    # d_k = 4, 1.6 million pairs in 16 batches; tolerance 4 SE from the batch spread.
    s = sample_dot_products(4, 1_600_000, dist=dist, rng=5)

    def kurt(x):
        c = x - x.mean()
        return np.mean(c**4) / np.mean(c**2) ** 2 - 3

    batches = [kurt(b) for b in s.reshape(16, -1)]
    se = np.std(batches, ddof=1) / 4
    assert abs(kurt(s) - dot_product_excess_kurtosis(4, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])) < 4 * se


# -- widgets.variance ----------------------------------------------------------------------------

def test_variance_explorer_defaults_and_controls():
    e = wv.VarianceExplorer()
    assert e.main == "d_k" and e.values == {"d_k": 16, "components": "normal"}
    assert list(e.controls["components"].options) == list(DISTRIBUTIONS)
    assert e.controls["components"].description == "components"
    assert labelled(e.ax)


def test_variance_explorer_shows_the_cached_samples_and_their_moments():
    e = wv.VarianceExplorer(d_k=64, components="laplace")
    s = sample_dot_products_fast(64, e.n_samples, "laplace", rng=e.seed)  # an independent draw, same seed
    values, edges, _ = e.bars.get_data()
    counts, _ = np.histogram(s, law.histogram_edges(64, "laplace"))
    assert np.allclose(values * np.diff(edges) * s.size, counts)
    # the axes are in standardised units: the N(0, d_k) density of q·k is N(0, 1) in z = q·k / 8
    x, y = e.curve.get_data()
    assert np.allclose(y, normal_pdf(x)) and x.min() == -4.5 and x.max() == 4.5
    assert tuple(map(float, e.ax.get_xlim())) == (-4.5, 4.5)
    assert f"variance {s.var(ddof=1):.2f}" in e.title.get_text() and "(theory 64)" in e.title.get_text()
    assert f"{s.mean():.3f} ± {s.std(ddof=1) / math.sqrt(s.size):.3f}" in e.readout.value


def test_variance_explorer_tick_labels_are_in_real_units():
    e = wv.VarianceExplorer(d_k=64)
    labels = e.x_ticks.texts()
    values = [float(t.replace("\u2212", "-")) for t in labels]
    assert "0" in labels and all(abs(v) <= 36 for v in values) and len(values) >= 5
    positions = [t.get_position()[0] for t in e.x_ticks.labels if t.get_visible()]
    assert np.allclose(np.array(positions) * 8, values)  # label = position * sqrt(d_k)
    y_values = [float(t) for t in e.y_ticks.texts()]
    y_positions = [t.get_position()[1] for t in e.y_ticks.labels if t.get_visible()]
    assert np.allclose(np.array(y_positions) / 8, y_values)  # density of q·k = density of z / sqrt(d_k)
    e.controls["d_k"].value = 4096
    assert max(float(t.replace("\u2212", "-")) for t in e.x_ticks.texts()) >= 200


def test_variance_explorer_changes_with_the_distribution():
    e = wv.VarianceExplorer(d_k=4)
    before = e.image.value
    e.controls["components"].value = "rademacher"
    assert e.image.value != before and "rademacher components" in e.title.get_text()


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_variance_explorer_bars_fit_under_the_y_limit(dist):
    for d_k in (1, 2, 4, 8, 16, 64):
        _, density, level, _, (_, stem_y) = wv._view(d_k, dist, wv.VarianceExplorer.n_samples, wv.VarianceExplorer.seed)
        tallest = stem_y.max() if dist == "rademacher" else density.max() * math.sqrt(d_k)
        assert tallest <= level, f"{dist}, d_k={d_k}: the tallest bar is cut off"


def test_variance_explorer_cache_is_read_only():
    s = wv._samples(4, "normal", 100, 0)
    with pytest.raises(ValueError):
        s[0] = 1.0


# -- exercises -----------------------------------------------------------------------------------

@pytest.mark.parametrize("key,right,wrongs", [
    ("01.hand_dot", 2, [14, 8, -2]),
    ("01.qk_shape", (5, 7), [(7, 5), (5, 64), 35]),
    ("01.frobenius", -3, [3, 5, [[2, -2], [-3, 0]]]),
    ("02.var_components_3", 64 * 3 * 3, [64 * (3 + 3), 64 * 3, 64, 9]),  # variances add? no: they multiply
    ("02.general", (32 * 1 * -1, 32 * ((2 + 1) * (1 + 1) - 1)), [(32, 160), (-32, 192), (-32, 96), 160]),
    # 33: forgot to divide by d_k; 36/8: forgot the -3; 3/8: the component's (m4 - 3)/d_k, not the product's
    ("02.kurtosis_laplace", (6**2 - 3) / 8, [33, 36 / 8, 3 / 8, -33 / 8]),
])
def test_numeric_exercises(key, right, wrongs, capsys):
    assert check(key, right, quiet=True)
    for wrong in wrongs:
        assert not check(key, wrong, quiet=True), f"{key} accepted {wrong!r}"


@pytest.mark.parametrize("answer,words", [
    (np.ones((5, 7)), "looks like a matrix"), ([[5, 7], [7, 5]], "looks like a matrix"),
    (35, "one integer per axis"), ((5, 7, 64), "2 entries"), ((5.5, 7), "whole number"), ((7, 5), "off"),
])
def test_qk_shape_feedback_talks_about_shapes(answer, words, capsys):
    assert not check("01.qk_shape", answer)
    out = capsys.readouterr().out
    assert words in out and "with shape (2,)" not in out


def test_rowwise_dot_exercise_accepts_correct_functions_and_rejects_lookalikes():
    right = [lambda A, B: (np.asarray(A) * np.asarray(B)).sum(axis=1),
             lambda A, B: np.einsum("ij,ij->i", A, B),
             lambda A, B: np.array([np.dot(a, b) for a, b in zip(A, B)])]
    wrong = [lambda A, B: np.asarray(A) @ np.asarray(B).T,         # the whole table
             lambda A, B: np.sum(np.asarray(A) * np.asarray(B)),   # the Frobenius product
             lambda A, B: (np.asarray(A) * np.asarray(B)).sum(axis=0),  # sums the wrong axis
             lambda A, B: np.asarray(A).sum(axis=1) * np.asarray(B).sum(axis=1)]
    for fn in right:
        assert check("01.rowwise_dot", fn, quiet=True)
    for fn in wrong:
        assert not check("01.rowwise_dot", fn, quiet=True)


@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_variance_explorer_draws_rademacher_as_stems(d_k):
    e = wv.VarianceExplorer(d_k=d_k, components="rademacher")
    s = sample_dot_products_fast(d_k, e.n_samples, "rademacher", rng=e.seed)  # the same draw, independently
    assert not e.bars.get_visible()
    x, y = e.stem_tops.get_data()
    sd = math.sqrt(d_k)
    values = np.asarray(x) * sd  # back to real units
    assert np.allclose(values, np.round(values)) and set(np.round(values).astype(int) % 2) == {d_k % 2}
    for v, h in zip(values, y):  # height in standardised units: probability / 2 * sqrt(d_k)
        assert np.isclose(h, np.mean(s == round(v)) / 2 * sd)
    assert len(e.stems.get_segments()) == len(values)
    e.controls["components"].value = "normal"
    assert e.bars.get_visible() and len(e.stems.get_segments()) == 0


def test_variance_explorer_first_visits_draw_o_n_numbers(monkeypatch):
    # the mechanism behind fast first visits: no per-visit draw of n * d_k numbers
    calls = []
    import sdpa_helpers.sampling as sampling_module
    real = sampling_module.sample_dot_products

    def spy(d_k, n_samples, *args, **kwargs):
        calls.append(d_k * n_samples)
        return real(d_k, n_samples, *args, **kwargs)

    monkeypatch.setattr("sdpa_helpers.dot_product_law.sample_dot_products", spy)
    wv._samples.cache_clear()
    wv._view.cache_clear()
    e = wv.VarianceExplorer(d_k=4096)
    for dist in DISTRIBUTIONS:
        e.controls["components"].value = dist
        e.controls["d_k"].value = 4096
        e.controls["d_k"].value = 1024
    assert all(c <= 128 * e.n_samples for c in calls), calls
