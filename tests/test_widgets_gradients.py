"""sdpa_helpers.widgets.gradients (notebook 06's explorer), headless; every explorer's common
behaviour is tested in tests/test_widgets.py. Update speed is measured by benchmarks/controls_latency.py,
never asserted in a test."""

import numpy as np

from sdpa_helpers import gradients as G
from sdpa_helpers import saturation as S
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.scales import D_K_CHOICES


def test_jacobian_explorer_shows_the_jacobian():
    from sdpa_helpers.widgets import gradients as Wgrad

    e = Wgrad.JacobianExplorer(d_k=16, seed=2)
    z = S.prefix_logits(D_K_CHOICES, e.n_keys, rng=2)[4]  # unscaled logits at d_k = 16
    images = e.heatmaps.images
    assert np.allclose(images[0].get_array(), softmax_jacobian(softmax(z)))
    assert np.allclose(images[1].get_array(), softmax_jacobian(softmax(z / 4)))
    assert f"{G.jacobian_frobenius(softmax(z)):.3g} unscaled" in e.readout.value
    figures = len(__import__("matplotlib.pyplot").pyplot.get_fignums())
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    for seed in (0, 1, 2, 3):
        e.controls["seed"].value = seed
    assert len(__import__("matplotlib.pyplot").pyplot.get_fignums()) == figures  # no new figure per update



def test_jacobian_explorer_opens_on_the_typical_query_not_a_near_tie():
    """Issue 21 item 9: the first sight shows the rule (unscaled ||J||_F below scaled), on the median query."""
    from sdpa_helpers.widgets import gradients as Wgrad

    e = Wgrad.JacobianExplorer()
    assert e.values["d_k"] == Wgrad.DEFAULT_D_K == 64
    seed = e.values["seed"]
    assert seed == G.typical_query_seed(D_K_CHOICES, Wgrad.TYPICAL_AT, e.n_keys, seeds=range(99))
    col = D_K_CHOICES.index(64)
    norms = [float(G.jacobian_frobenius(softmax(c * S.prefix_logits(D_K_CHOICES, e.n_keys, rng=seed)[col])))
             for c in (1.0, 1 / 8)]
    assert norms[0] < norms[1]
    assert "nearly tied" not in e.readout.value
    e.controls["seed"].value = 0  # a near tie at d_k = 64: said so in the readout
    assert "nearly tied" in e.readout.value
