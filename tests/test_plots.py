"""The shared plotting pieces, headless (each notebook's figures: tests/test_plots_<topic>.py)."""

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.figure import Figure

from sdpa_helpers import gradients as G
from sdpa_helpers import plots
from sdpa_helpers import saturation as S
from sdpa_helpers.attention import softmax
from sdpa_helpers.sampling import make_rng


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
    """The hand-written PNG decodes, with Pillow's independent decoder, to exactly the pixels given."""
    from io import BytesIO

    from PIL import Image

    rng = np.random.default_rng(0)
    for shape in [(1, 1, 4), (5, 7, 4), (37, 61, 4)]:
        rgba = rng.integers(0, 256, size=shape, dtype=np.uint8)
        img = Image.open(BytesIO(plots.rgba_to_png(rgba)))
        img.load()  # checks every chunk's CRC and the zlib stream
        assert img.mode == "RGBA" and img.size == (shape[1], shape[0])
        np.testing.assert_array_equal(np.asarray(img), rgba)
    fig, _ = plots.new_figure(figsize=(2, 1), dpi=50)
    fig.canvas.draw()
    frame = np.asarray(fig.canvas.buffer_rgba())
    np.testing.assert_array_equal(np.asarray(Image.open(BytesIO(plots.rgba_to_png(fig.canvas.buffer_rgba())))), frame)


@pytest.mark.parametrize("bad", [np.zeros((2, 3, 3), np.uint8), np.zeros((2, 3, 4), np.float64),
                                 np.zeros((0, 3, 4), np.uint8), np.zeros((6, 4), np.uint8)])
def test_rgba_to_png_refuses_other_arrays(bad):
    with pytest.raises(ValueError, match="rgba must be"):
        plots.rgba_to_png(bad)


def test_d_k_axis():
    ax = plots.set_d_k_axis(plots.get_axes())
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "$d_k$"
    assert list(ax.get_xticks()) == [1, 4, 16, 64, 256, 1024, 4096]


# -- the scaling styles in notebooks 05 and 06's figures ------------------------------------------

def _line_styles(fig):
    """(colour, linestyle) of every line with a data label other than the markers-only ones."""
    from matplotlib.colors import to_hex

    return {(to_hex(line.get_color()), line.get_linestyle()) for ax in fig.axes for line in ax.get_lines()
            if len(line.get_xdata()) > 2}


def test_scalings_keep_their_colours_and_line_styles():
    """Unscaled = vermillion dashed, scaled = blue solid; nothing else uses those two pairs."""
    from sdpa_helpers import plots
    from sdpa_helpers.plots import gradients as PG
    from sdpa_helpers.plots import saturation as PS

    unscaled = (plots.UNSCALED["color"].lower(), "--")
    scaled = (plots.SCALED["color"].lower(), "-")
    u = S.saturation_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.saturation_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    styles = _line_styles(PS.saturation_curves_figure(u, s, 4))
    assert unscaled in styles and scaled in styles
    u = G.gradient_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = G.gradient_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    styles = _line_styles(PG.gradient_norms_figure(u, s))
    assert unscaled in styles and scaled in styles
    p = softmax(make_rng(0).standard_normal((50, 4)) * 5)
    ax = PG.jacobian_bound_figure(G.one_minus_max(p), G.jacobian_frobenius(p))
    colours = {c.lower() for c in (plots.UNSCALED["color"], plots.SCALED["color"])}
    from matplotlib.colors import to_hex
    assert not colours & {to_hex(line.get_color()) for line in ax.get_lines()}
    assert not colours & {to_hex(c) for c in ax.collections[0].get_facecolors()}
