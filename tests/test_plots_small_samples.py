"""sdpa_helpers.plots.small_samples (notebook 03's figures), headless: what each figure draws."""

import numpy as np
import pytest
from matplotlib.axes import Axes

from conftest import labelled
from sdpa_helpers import sampling, theory
from sdpa_helpers import small_samples as ss
from sdpa_helpers.plots import small_samples as small_samples_plots
from sdpa_helpers.sampling import make_rng


def test_variance_histogram_counts_fractions():
    s2 = sampling.sample_matmul_variances(2, 5000, rng=0)
    bins = np.linspace(0, 12, 49)
    ax = small_samples_plots.variance_histogram(s2, 2.0, bins=bins, label="ddof=1")
    assert isinstance(ax, Axes) and labelled(ax)
    values, edges, _ = ax.patches[0].get_data()
    counts, _ = np.histogram(s2, bins=bins)
    assert np.allclose(values * s2.size, counts) and np.allclose(edges, bins)
    assert 0.0 == ax.get_ylim()[0] and values.max() <= ax.get_ylim()[1] < 1.2 * values.max()  # y fits the bars
    assert any("2.0" in t.get_text() or "2" in t.get_text() for t in ax.get_legend().get_texts())


def test_spread_vs_n_draws_the_exact_theory():
    data = {n: ss.relative_sample_variances(n) for n in (2, 8)}
    ax = small_samples_plots.spread_vs_n([2, 8], [data[2].std(ddof=1), data[8].std(ddof=1)], n_max=64)
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    exact_line = ax.lines[0]
    assert np.allclose(exact_line.get_ydata(), [theory.matmul_sample_variance_moments(n, n).std / n
                                                for n in exact_line.get_xdata()])


def test_conditional_spread_rises_for_shared_queries():
    g = make_rng(0)
    q = g.standard_normal((100_000, 1))
    k = g.standard_normal((2, 100_000, 1))
    s_ij, s_ik = (q * k[0])[:, 0], (q * k[1])[:, 0]
    ax = small_samples_plots.conditional_spread(s_ij, s_ik, d_k=1)
    assert labelled(ax)
    y = ax.lines[-1].get_ydata()
    assert y[-1] > 1.5 > 1.0 > y[0], "large |S_ij| comes with a large spread of S_ik"


def test_spread_vs_n_draws_error_bars_when_given_standard_errors():
    from matplotlib.container import ErrorbarContainer
    ax = small_samples_plots.spread_vs_n([2, 8], [1.4, 0.3], sim_se=[0.03, 0.004], n_max=64)
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1 and "2 Monte Carlo errors" in bars[0].get_label()
    segments = bars[0].lines[2][0].get_segments()
    assert np.allclose([seg[1, 1] - seg[0, 1] for seg in segments], [0.12, 0.016])  # +-2 SE
    with pytest.raises(ValueError, match="sim_se"):
        small_samples_plots.spread_vs_n([2, 8], [1.4, 0.3], sim_se=[0.03])


@pytest.mark.parametrize("call,exc,name", [
    (lambda: small_samples_plots.variance_histogram([1.0, np.nan], 2.0), ValueError, "s2"),
    (lambda: small_samples_plots.variance_histogram([1.0, 2.0], 0.0), ValueError, "true_var"),
    (lambda: small_samples_plots.spread_vs_n([2, 4], [1.0]), ValueError, "sim_sd"),
    (lambda: small_samples_plots.conditional_spread([1.0, 2.0], [1.0], d_k=1), ValueError, "s_ij and s_ik"),
    (lambda: small_samples_plots.conditional_spread([1.0], [1.0], d_k=0), ValueError, "d_k"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_spread_without_iid_line():
    def labels(ax):
        return [line.get_label() for line in ax.get_lines()]
    assert "i.i.d. formula" not in labels(small_samples_plots.spread_vs_n([2, 4], [1.4, 0.6], iid=False))
    assert "i.i.d. formula" in labels(small_samples_plots.spread_vs_n([2, 4], [1.4, 0.6]))
