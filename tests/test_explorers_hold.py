"""Explorers hold against a learner's settings and odd values (issue 18, sections 3 and 4).

The base :class:`sdpa_helpers.widgets.Explorer` computes under numpy error settings it controls,
checks every control value it is given (at construction and afterwards) with an error naming
the control and what it allows, closes what it built when a construction fails, and refuses
clearly once closed.
"""

import math

import numpy as np
import pytest
from ipywidgets.widgets import widget as widget_module

from sdpa_helpers.widgets.assumptions import CorrelationExplorer
from sdpa_helpers.widgets.attention_maps import AttentionMapExplorer
from sdpa_helpers.widgets.gradients import JacobianExplorer
from sdpa_helpers.widgets.overview import ThreeEffectsExplorer


def _n_widgets() -> int:
    return len(widget_module._instances)


@pytest.mark.parametrize("cls", [JacobianExplorer, ThreeEffectsExplorer])
def test_explorers_build_and_update_under_seterr_raise(cls):
    old = np.seterr(all="raise")
    try:
        explorer = cls()
        control = explorer.controls[explorer.main]
        for value in explorer.sweep_values()[:: max(1, len(explorer.sweep_values()) // 4)]:
            control.value = value
        assert np.geterr()["under"] == "raise"  # the learner's setting is untouched
        explorer.close()
    finally:
        np.seterr(**old)


def test_a_d_k_outside_the_slider_names_d_k_and_the_allowed_values():
    with pytest.raises(ValueError) as info:
        AttentionMapExplorer(d_k=3)
    message = str(info.value)
    assert "d_k" in message and "4096" in message and "Invalid selection" not in message


@pytest.mark.parametrize("value", [True, np.True_, 64.0 + 0j, "64"])
def test_a_d_k_of_the_wrong_type_is_refused(value):
    with pytest.raises((TypeError, ValueError), match="d_k"):
        AttentionMapExplorer(d_k=value)


def test_a_failed_construction_leaks_no_widgets():
    AttentionMapExplorer(d_k=64).close()  # warm-up: anything cached at first use
    before = _n_widgets()
    for _ in range(3):
        with pytest.raises(ValueError):
            AttentionMapExplorer(d_k=3)
        with pytest.raises(ValueError):
            AttentionMapExplorer(length=1000)
    assert _n_widgets() == before


def test_a_non_finite_slider_value_is_refused_and_undone():
    explorer = CorrelationExplorer()
    try:
        with pytest.raises(ValueError, match="rho"):
            explorer.controls["rho"].value = math.nan
        assert explorer.controls["rho"].value == 0.5
        explorer.controls["rho"].value = math.inf  # ipywidgets' own validation clips it to the range
        assert explorer.values["rho"] == 1.0
        explorer.controls["rho"].value = 0.5
        assert explorer.controls["rho"].value == 0.5
        explorer.controls["rho"].value = 0.25  # still works
        assert explorer.values["rho"] == 0.25
    finally:
        explorer.close()


def test_a_dropdown_set_to_none_is_refused_and_undone():
    from sdpa_helpers.widgets.assumptions import InitExplorer

    explorer = InitExplorer()
    try:
        before = explorer.controls["init"].value
        with pytest.raises(ValueError) as info:
            explorer.controls["init"].value = None
        assert "init" in str(info.value) and "one of" in str(info.value)
        assert explorer.controls["init"].value == before
    finally:
        explorer.close()


def test_a_closed_explorer_refuses_render_and_paused_clearly():
    explorer = AttentionMapExplorer()
    explorer.close()
    for call in (explorer.render, lambda: explorer.paused().__enter__(), explorer.fallback_png):
        with pytest.raises(ValueError, match="closed"):
            call()
    explorer.update()  # documented: does nothing once closed
