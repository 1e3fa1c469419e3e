"""The shared plotting pieces and notebook 00's figures, headless."""

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sdpa_helpers import plots
from sdpa_helpers.plots import start
from sdpa_helpers.sampling import sample_dot_products


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


def test_spread_histogram_matches_numpy_histogram():
    s = sample_dot_products(16, 20_000, rng=0)
    ax = start.spread_histogram(s, 16, scaled=False)
    assert isinstance(ax, Axes) and ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_xlim() == (-16.0, 16.0)  # +-4 theoretical standard deviations
    (patch,) = ax.patches
    values, edges, _ = patch.get_data()
    counts, _ = np.histogram(s, bins=start.BINS * 4)
    assert np.allclose(values * np.diff(edges) * s.size, counts)  # a density of the same counts
    assert np.isclose((values * np.diff(edges)).sum(), np.mean(np.abs(s) <= 16))


@pytest.mark.parametrize("d_ks", [(1, 64), (1, 64, 4096)])
def test_spread_small_multiples(d_ks):
    fig = start.spread_small_multiples({d: sample_dot_products(d, 1000, rng=1) for d in d_ks})
    assert isinstance(fig, Figure) and len(fig.axes) == 2 * len(d_ks)
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_spread_explorer_fast_sampler_has_the_distribution_of_q_dot_k():
    """The explorer's O(n) sampler against the closed form and against sample_dot_products."""
    from sdpa_helpers.theory import dot_product_moments
    from sdpa_helpers.widgets.start import _samples

    n = 200_000
    for d_k in (1, 16, 256):
        fast = _samples(d_k, n, 3)
        slow = sample_dot_products(d_k, n, rng=3)
        var = dot_product_moments(d_k).var
        # q.k for standard normals: fourth moment 3 d_k^2 + 6 d_k (excess kurtosis 6 / d_k)
        mu4 = 3 * d_k**2 + 6 * d_k
        se_var = np.sqrt((mu4 - var**2) / n)
        for s in (fast, slow):
            assert abs(s.mean()) < 5 * np.sqrt(var / n)
            assert abs(s.var() - var) < 5 * se_var
            # the shape too: the fourth moment, within 5 of its own standard errors
            assert abs(np.mean(s**4) - mu4) < 5 * np.std(s**4) / np.sqrt(n)
