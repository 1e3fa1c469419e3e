"""sdpa_helpers.widgets.scaling (notebook 04's explorer), headless; every explorer's common
behaviour is tested in tests/test_widgets.py."""

import numpy as np
import pytest

from sdpa_helpers import scaling as scmp
from sdpa_helpers.scales import SCALINGS, scale_factor
from sdpa_helpers.widgets import scaling as sc_widgets


def test_scaling_explorer_every_d_k_reuses_one_figure():
    e = sc_widgets.ScalingExplorer(d_k=64)
    fig, renders = e.fig, e.renders
    for d_k in scmp.D_KS:
        e.controls["d_k"].value = d_k
    assert e.fig is fig
    assert e.renders == renders + len(scmp.D_KS)  # one render per move, none extra


def test_scaling_explorer_markers_sit_on_the_lines():
    e = sc_widgets.ScalingExplorer(d_k=256)
    sd = scmp.logit_std(256)
    for name in SCALINGS:
        x, y = e.markers[name].get_data()
        assert x[0] == 256 and y[0] == pytest.approx(scale_factor(name, 256) * sd)
        assert np.allclose(e.lines[name].get_ydata(), scmp.query_weights(256)[name])

