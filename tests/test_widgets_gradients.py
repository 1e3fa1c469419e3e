"""sdpa_helpers.widgets.gradients (notebook 06's explorer), headless; every explorer's common
behaviour is tested in tests/test_widgets.py. Update speed is measured by benchmarks/controls_latency.py,
never asserted in a test."""

import numpy as np

from sdpa_helpers import saturation as S
from sdpa_helpers.attention import softmax, softmax_jacobian


def test_jacobian_explorer_shows_the_jacobian():
    from sdpa_helpers.widgets import gradients as Wgrad

    e = Wgrad.JacobianExplorer(d_k=16, seed=2)
    z = S.prefix_logits(S.D_K_GRID, e.n_keys, rng=2)[4]  # unscaled logits at d_k = 16
    assert np.allclose(e.images[0].get_array(), softmax_jacobian(softmax(z)))
    assert np.allclose(e.images[1].get_array(), softmax_jacobian(softmax(z / 4)))
    assert f"{S.jacobian_frobenius(softmax(z)):.3g} unscaled" in e.readout.value
    figures = len(__import__("matplotlib.pyplot").pyplot.get_fignums())
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    for seed in (0, 1, 2, 3):
        e.controls["seed"].value = seed
    assert len(e._backgrounds) == 1
    assert len(__import__("matplotlib.pyplot").pyplot.get_fignums()) == figures  # no new figure per update
    assert Wgrad._one_query.cache_info().currsize <= Wgrad._one_query.cache_info().maxsize

