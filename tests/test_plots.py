"""The shared plotting pieces, headless (notebook 00's figures: tests/test_start.py)."""

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

from sdpa_helpers import plots


def test_style_is_scoped():
    before = dict(mpl.rcParams)
    with plots.style():
        assert mpl.rcParams["figure.facecolor"] == "white"
    assert dict(mpl.rcParams) == before


def test_scalings_differ_in_colour_and_line_style():
    specs = [plots.UNSCALED, plots.SCALED, plots.INV_D]
    assert len({s["color"] for s in specs}) == 3 and len({s["linestyle"] for s in specs}) == 3
    assert all(s["color"] in plots.OKABE_ITO.values() for s in specs)


def test_new_figure_is_opaque_white_and_not_pyplot():
    import matplotlib.pyplot as plt

    n = len(plt.get_fignums())
    fig, axes = plots.new_figure(2, 3)
    assert isinstance(fig, Figure) and axes.shape == (2, 3)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert len(plt.get_fignums()) == n
    png = plots.to_png(fig)
    assert png[:4] == b"\x89PNG"


def test_rgba_to_png_round_trip():
    from io import BytesIO

    from PIL import Image

    rgba = np.zeros((5, 7, 4), dtype=np.uint8)
    rgba[..., 0] = 200
    rgba[..., 3] = 255
    img = Image.open(BytesIO(plots.rgba_to_png(rgba)))
    assert img.size == (7, 5) and np.asarray(img)[..., 0].max() == 200


def test_d_k_axis():
    ax = plots.set_d_k_axis(plots.get_axes())
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "$d_k$"
    assert list(ax.get_xticks()) == [1, 4, 16, 64, 256, 1024, 4096]
