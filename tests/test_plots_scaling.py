"""sdpa_helpers.plots.scaling (notebook 04's figures), headless: what each figure draws."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from conftest import labelled
from sdpa_helpers import scaling as scmp
from sdpa_helpers import theory
from sdpa_helpers.plots import get_axes
from sdpa_helpers.plots import scaling as scaling_plots
from sdpa_helpers.scales import SCALINGS, scale_factor


def test_logit_std_vs_d_k_lines_follow_the_theory():
    sim = {name: np.ones(3) for name in SCALINGS}
    ax = scaling_plots.logit_std_vs_d_k([1, 2, 4], sim)
    assert labelled(ax) and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    for line, (name, e) in zip(ax.lines[:3], SCALINGS.items()):
        x = np.asarray(line.get_xdata())
        want = [theory.scaled_moments(theory.dot_product_moments(int(d)), scale_factor(name, int(d))).std
                for d in x]
        assert np.allclose(line.get_ydata(), want)
        assert np.isclose(np.polyfit(np.log(x), np.log(line.get_ydata()), 1)[0], 0.5 + e)


def test_attention_figures():
    fig = scaling_plots.attention_vs_d_k([1, 4, 16], {"sqrt": np.ones(3)}, {"sqrt": np.full(3, 0.3)}, n_keys=8)
    assert isinstance(fig, Figure) and all(labelled(ax) for ax in fig.axes)
    fig = scaling_plots.weights_small_multiples({d: scmp.weight_bands(d) for d in (4, 64)})
    assert len(fig.axes) == 2 and all(labelled(ax) for ax in fig.axes)
    assert np.allclose(fig.axes[1].lines[0].get_ydata(), scmp.weight_bands(64)["unscaled"][1])  # the median
    assert len(fig.axes[1].patches) == len(SCALINGS)  # one band per scaling
    with pytest.raises(ValueError, match="weights"):
        scaling_plots.sorted_weights({"sqrt": np.ones((2, 4))})
    ax = scaling_plots.sorted_weights({"unscaled": np.array([0.1, 0.7, 0.2]), "inv_d": np.array([0.3, 0.35, 0.35])})
    assert ax.lines[0].get_ydata().tolist() == [0.7, 0.2, 0.1]
    assert ax.lines[1].get_ydata().tolist() == [0.35, 0.35, 0.3]  # in the first scaling's key order


def test_power_of_two_axis_labels():
    ax = scaling_plots.set_power_of_two_axis(get_axes())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["1/64", "1/16", "1/4", "1", "4", "16", "64"]


@pytest.mark.parametrize("call,exc,name", [
    (lambda: scaling_plots.logit_std_vs_d_k([1, 2], {"sqrt": [1.0]}), ValueError, "sim_std"),
    (lambda: scaling_plots.logit_std_vs_d_k([1], {"cube": [1.0]}), ValueError, "sim_std"),
    (lambda: scaling_plots.attention_vs_d_k([1], {"sqrt": [1.0]}, {"sqrt": [0.5]}, n_keys=0), ValueError, "n_keys"),
    (lambda: scaling_plots.sorted_weights({}), TypeError, "weights"),
    (lambda: scaling_plots.set_power_of_two_axis(get_axes(), which="z"), ValueError, "which"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
