"""sdpa_helpers.widgets.scaling (notebook 04's explorer), headless; every explorer's common
behaviour is tested in tests/test_widgets.py."""

import numpy as np
import pytest

from sdpa_helpers import scaling as scmp
from sdpa_helpers.scales import SCALINGS, scale_factor
from sdpa_helpers.widgets import scaling as sc_widgets


def test_scaling_explorer_every_d_k_reuses_one_figure_and_bounded_caches():
    e = sc_widgets.ScalingExplorer(d_k=64)
    fig, renders = e.fig, e.renders
    for d_k in scmp.D_KS:
        e.controls["d_k"].value = d_k
    assert e.fig is fig and len(e._backgrounds) == 1
    assert e.renders == renders + len(scmp.D_KS)  # one render per move, none extra
    assert set(e.data) == set(scmp.D_KS)  # every d_k's numbers computed once, at build


def test_scaling_explorer_markers_sit_on_the_lines():
    e = sc_widgets.ScalingExplorer(d_k=256)
    sd = scmp.logit_std(256)
    for name in SCALINGS:
        x, y = e.std_panel.dots[name].get_data()
        assert x[0] == 256 and y[0] == pytest.approx(scale_factor(name, 256) * sd)
        band = scmp.weight_bands(256)[name]
        assert np.allclose(e.weights_panel.lines[name].get_ydata(), band[1])
        assert np.allclose(e.weights_panel.bands[name].get_xy()[:-1], scmp.band_polygon(band[0], band[2]))

