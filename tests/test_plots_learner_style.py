"""The course's figures look the same whatever matplotlib style the learner set (issue 27, item 5).

A learner on JupyterLab's dark theme runs ``plt.style.use("dark_background")``; another sets a
larger font, their own colour cycle, or ``text.usetex`` (no TeX needed by the course). The
course's figures and explorers start from matplotlib's defaults (``plots.style()``), so each
draws the same PNG, byte for byte, as under matplotlib's defaults -- and the learner's settings
are still theirs afterwards.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.style
import numpy as np
import pytest
from matplotlib.colors import to_rgba

from sdpa_helpers import plots
from sdpa_helpers.plots import scaling as scaling_plots

LEARNER_SETTINGS = {
    "dark_background": lambda: mpl.style.use("dark_background"),
    "ggplot": lambda: mpl.style.use("ggplot"),
    "font.size 20": lambda: mpl.rcParams.update({"font.size": 20, "axes.titlesize": "xx-large"}),
    "prop_cycle": lambda: mpl.rcParams.update({"axes.prop_cycle": mpl.cycler(color=["#ff00ff", "#00ff00"])}),
    "text.usetex": lambda: mpl.rcParams.update({"text.usetex": True}),
    "lines and ticks": lambda: mpl.rcParams.update({"lines.linewidth": 5, "xtick.direction": "in",
                                                    "axes.unicode_minus": False, "font.family": "serif"}),
}


def _figure():
    fig = scaling_plots.logit_std_vs_d_k()
    return fig if isinstance(fig, mpl.figure.Figure) else fig.figure


def _explorer_png() -> bytes:
    from sdpa_helpers.widgets.scaling import ScalingExplorer

    explorer = ScalingExplorer()
    try:
        return explorer.render()
    finally:
        explorer.close()


def _under(setting, draw):
    with mpl.rc_context():
        mpl.style.use("default")
        if setting:
            LEARNER_SETTINGS[setting]()
        return draw()


@pytest.fixture(scope="module")
def reference():
    fig = _under(None, _figure)
    return {"figure": plots.to_png(fig), "explorer": _under(None, _explorer_png),
            "title_colour": to_rgba(fig.axes[0].title.get_color()),
            "tick_colour": to_rgba(fig.axes[0].xaxis.get_ticklabels()[0].get_color())}


@pytest.mark.parametrize("setting", sorted(LEARNER_SETTINGS))
def test_a_course_figure_is_the_same_under_the_learners_style(setting, reference):
    fig = _under(setting, _figure)
    assert to_rgba(fig.axes[0].title.get_color()) == reference["title_colour"] == to_rgba("black")
    assert to_rgba(fig.axes[0].xaxis.get_ticklabels()[0].get_color()) == reference["tick_colour"]
    png = _under(setting, lambda: plots.to_png(fig))
    assert np.array_equal(_pixels(png), _pixels(reference["figure"])), f"{setting} changed the figure"


@pytest.mark.parametrize("setting", ["dark_background", pytest.param("font.size 20", marks=pytest.mark.slow),
                                     pytest.param("text.usetex", marks=pytest.mark.slow)])
def test_an_explorer_is_the_same_under_the_learners_style(setting, reference):
    assert np.array_equal(_pixels(_under(setting, _explorer_png)), _pixels(reference["explorer"]))


def test_the_learners_settings_are_theirs_again_after_a_figure():
    with mpl.rc_context():
        mpl.style.use("dark_background")
        mpl.rcParams["font.size"] = 17
        _figure()
        assert mpl.rcParams["text.color"] == "white" and mpl.rcParams["font.size"] == 17


def _pixels(png: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))
