"""sdpa_helpers.plots.assumptions (notebook 08's figures), headless."""

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from conftest import labelled
from sdpa_helpers.plots import assumptions as AP


def test_assumption_plots_are_labelled():
    rng = np.random.default_rng(2)
    _, ax = __import__("matplotlib.pyplot", fromlist=["subplots"]).subplots()
    AP.LogitHistogramPanel(ax).show(rng.standard_normal(200), 1.0)
    assert isinstance(ax, Axes) and labelled(ax) and ax.get_ylim()[1] > 0.4
    fig = AP.init_small_multiples({"a": (rng.standard_normal(50), 1.0), "b": (rng.standard_normal(50), 0.5)})
    assert isinstance(fig, Figure) and labelled(fig.axes[0])
    ax = AP.init_variance_vs_d_model([64, 128, 256], {"x": [1, 1, 1]}, {"x": ([1, 1, 1], [0.1, 0.1, 0.1])})
    assert labelled(ax) and ax.get_yscale() == "log"
    fig = AP.correlated_small_multiples({4: (rng.standard_normal(50) + 1, rng.standard_normal(50))}, 0.5)
    assert all(labelled(a) for a in fig.axes)
    ax = AP.match_weight_vs_d_k([1, 4], [0.2, 0.3], [0.2, 0.2], limit=0.2)
    assert labelled(ax)
    # the 1/d_k curve holds only for components of variance 1 (the matching logit tends to rho <= 1)
    assert any("variance 1" in t.get_text() for t in ax.get_legend().get_texts())
    fig = AP.cosine_small_multiples({4: rng.standard_normal(50)}, {4: rng.standard_normal(50)})
    assert labelled(fig.axes[0])


def test_plots_use_the_one_normal_pdf():
    from sdpa_helpers import theory
    assert not hasattr(AP, "normal_pdf") or AP.normal_pdf is theory.normal_pdf


def test_init_figures_keep_the_reserved_scaling_colours_free():
    """Every curve of notebook 08's init figures is a *scaled* logit: no 'unscaled' or '1/d_k' look."""
    from matplotlib.colors import to_hex

    from sdpa_helpers import plots

    reserved = {to_hex(plots.UNSCALED["color"]), to_hex(plots.INV_D["color"])}
    theory = {label: [1.0, 1.0, 1.0] for label in "abcde"}
    theory["e"] = [1e-3, 1e-2, 1e-1]
    ax = AP.init_variance_vs_d_model([64, 128, 256], theory)
    assert not {to_hex(line.get_color()) for line in ax.get_lines()} & reserved
    low, high = ax.get_ylim()
    assert low <= 1e-3 and high >= 1.0  # the y axis holds every curve
    rng = np.random.default_rng(3)
    fig = AP.init_small_multiples({k: (rng.standard_normal(50), 1.0) for k in "abcde"})
    assert len(fig.axes) == 6 and not fig.axes[5].axison and fig.axes[5].get_legend() is not None
    assert all(labelled(a) for a in (fig.axes[0], fig.axes[3]))


def test_correlated_histograms_name_their_solid_curves():
    """The solid curves are a normal approximation; the legend says so (single panel and grid)."""
    rng = np.random.default_rng(4)
    _, ax = __import__("matplotlib.pyplot", fromlist=["subplots"]).subplots()
    panel = AP.CorrelatedHistogramPanel(ax, "sqrt", (-6.0, 8.0))
    panel.show(rng.standard_normal(50) + 1, rng.standard_normal(50), 0.5, 4)
    labels = panel.legend_entries()[1]
    assert "normal approximation" in labels[-1] and "0.50" in labels[1] and len(labels) == 3
    fig = AP.correlated_small_multiples({4: (rng.standard_normal(50) + 1, rng.standard_normal(50))}, 0.5)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(labels) == 4 and "normal approximation" in labels[-1]
