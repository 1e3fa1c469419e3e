"""Notebooks 05 (softmax saturation) and 06 (vanishing gradients): figures, explorers, exercises.

The math layer they use is tested in tests/test_saturation.py.
"""

import numpy as np
import pytest

from sdpa_helpers import saturation as S
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.exercises import check
from sdpa_helpers.sampling import make_rng


# -- figures (headless) ---------------------------------------------------------------------
def labelled(ax):
    """x label, and a y label (or a title, for panels that share the row's y label)."""
    return bool(ax.get_xlabel().strip() and (ax.get_ylabel().strip() or ax.get_title().strip()))


def test_saturation_figures():
    from sdpa_helpers.plots import saturation as P

    ax = P.weight_bars([0.2, 0.8], "sqrt")
    assert labelled(ax) and tuple(map(float, ax.get_ylim())) == (0.0, 1.0)
    fig = P.saturation_small_multiples({1: ([0.5, 0.5], [0.5, 0.5]), 64: ([1.0, 0.0], [0.6, 0.4])})
    assert len(fig.axes) == 4 and all(ax.get_xlabel() for ax in fig.axes)
    u = S.saturation_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.saturation_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    law = (np.array([1.0, 2.0, 4.0]), S.entropy_closed_form(4, [1.0, 2.0, 4.0]))
    fig = P.saturation_curves_figure(u, s, 4, iid_limit=(0.4, 1.0, 3.0), onset=float(S.saturation_onset(4)),
                                     entropy_law=law)
    assert len(fig.axes) == 3 and all(labelled(ax) for ax in fig.axes)
    assert fig.axes[2].get_yscale() == "log"
    onset_lines = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() == "-."]
    assert len(onset_lines) == 3 and all(np.allclose(ln.get_xdata(), np.log(4)) for ln in onset_lines)
    t = [0.125, 1, 8]
    curve_t = 2.0 ** np.arange(-3, 4)
    fig = P.temperature_small_multiples(t, S.temperature_curves([0.1, -0.2, 0.3], t)[0], curve_t,
                                        S.temperature_curves([0.1, -0.2, 0.3], curve_t)[1])
    assert len(fig.axes) == 5 and all(labelled(ax) for ax in fig.axes)
    with pytest.raises(ValueError, match="weights"):
        P.weight_bars([[0.5, 0.5]], "unscaled")
    with pytest.raises(ValueError, match="scale"):
        P.weight_bars([0.5, 0.5], "scaled")


def test_gradient_figures():
    from sdpa_helpers.plots import gradients as P

    ax = P.jacobian_heatmap(softmax_jacobian([0.2, 0.3, 0.5]))
    assert labelled(ax) and tuple(map(float, ax.images[0].get_clim())) == (-0.25, 0.25)
    assert ax.images[0].get_cmap().name == "cividis"
    panels = S.jacobian_panels([1, 16], [[0.0, 0.0], [0.0, 40.0]])  # d_k = 16 unscaled: nearly one-hot
    fig = P.jacobian_small_multiples(panels)
    assert sum(labelled(a) for a in fig.axes) >= 4
    assert np.allclose(fig.axes[0].images[0].get_array(), softmax_jacobian([0.5, 0.5]))
    with pytest.raises(ValueError, match="panels"):
        P.jacobian_small_multiples(panels._replace(frobenius=panels.frobenius[:1]))
    with pytest.raises(TypeError, match="panels"):
        P.jacobian_small_multiples({1: ([0.5, 0.5], [0.5, 0.5])})
    u = S.gradient_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.gradient_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    fig = P.gradient_norms_figure(u, s)
    assert len(fig.axes) == 3 and all(labelled(a) and a.get_yscale() == "log" for a in fig.axes)
    p = softmax(make_rng(0).standard_normal((50, 4)) * 5)
    ax = P.jacobian_bound_figure(S.one_minus_max(p), S.jacobian_frobenius(p))
    assert labelled(ax) and ax.get_xscale() == "log"
    assert np.allclose(ax.collections[0].get_offsets(), np.column_stack([S.one_minus_max(p), S.jacobian_frobenius(p)]))
    with pytest.raises(ValueError, match="J"):
        P.jacobian_heatmap([[1.0, 2.0]])
    with pytest.raises(ValueError, match="frobenius"):
        P.jacobian_bound_figure([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match="gap"):
        P.jacobian_bound_figure([np.nan], [0.5])


def test_jacobian_titles_are_accurate_near_one_hot():
    """Titles use jacobian_frobenius: right where diag(p) - p p^T loses J's top diagonal entry."""
    from sdpa_helpers.plots import gradients as P

    p = softmax(np.array([0.0, -60.0, -80.0]))  # 1 - max p ~ 1e-26: p[0] rounds to exactly 1.0
    exact = S.jacobian_frobenius(p)
    assert np.isclose(exact, 2 * p[1], rtol=1e-6, atol=0)  # two keys in play: ||J||_F = 2 m (1 - m)
    assert not np.isclose(np.linalg.norm(softmax_jacobian(p)), exact, rtol=0.05, atol=0)  # the naive norm is off
    panels = S.jacobian_panels([4], [[0.0, -60.0, -80.0]], scales=("unscaled",))
    assert np.allclose(panels.weights[0, 0], p) and panels.frobenius[0, 0] == exact
    fig = P.jacobian_small_multiples(panels)
    assert P.format_norm(exact) in fig.axes[0].get_title()


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
    styles = _line_styles(PS.saturation_curves_figure(u, s, 4, iid_limit=(0.4, 1.0, 3.0)))
    assert unscaled in styles and scaled in styles
    u = S.gradient_curves([1, 8, 64], 4, 20, scale="unscaled", rng=0)
    s = S.gradient_curves([1, 8, 64], 4, 20, scale="sqrt", rng=0)
    styles = _line_styles(PG.gradient_norms_figure(u, s))
    assert unscaled in styles and scaled in styles
    p = softmax(make_rng(0).standard_normal((50, 4)) * 5)
    ax = PG.jacobian_bound_figure(S.one_minus_max(p), S.jacobian_frobenius(p))
    colours = {c.lower() for c in (plots.UNSCALED["color"], plots.SCALED["color"])}
    from matplotlib.colors import to_hex
    assert not colours & {to_hex(line.get_color()) for line in ax.get_lines()}
    assert not colours & {to_hex(c) for c in ax.collections[0].get_facecolors()}


# -- explorers ------------------------------------------------------------------------------
def test_saturation_explorer_shows_the_softmax_and_keeps_one_background():
    from sdpa_helpers.widgets import saturation as Wsat

    e = Wsat.SaturationExplorer(d_k=4096, keys=16, seed=3)
    z = Wsat._one_query(3)[-1, :16]  # unscaled logits at d_k = 4096
    heights = [p.vertices[1, 1] for p in e.bars[0].get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z)))
    heights = [p.vertices[1, 1] for p in e.bars[1].get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z / 64)))
    figures = len(__import__("matplotlib.pyplot").pyplot.get_fignums())
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    for n in S.KEY_COUNTS:
        e.controls["keys"].value = n
        assert len(e.bars[0].get_paths()) == n
    assert len(e._backgrounds) == 1, "no control redraws the background"
    assert len(__import__("matplotlib.pyplot").pyplot.get_fignums()) == figures, "no new figure per update"
    assert Wsat._all_curves.cache_info().misses <= 1, "every key count's curves computed once, at build"
    assert set(e.curves) == {(n, s) for n in S.KEY_COUNTS for s in ("unscaled", "sqrt")}
    # the onset line sits at ln n, and the law line is ln n - d_k/2 where it is >= 0
    assert np.allclose(e.onsets[0].get_xdata(), np.log(S.KEY_COUNTS[-1]))
    x, h = e.law.get_data()
    assert np.allclose(h, np.log(S.KEY_COUNTS[-1]) - x / 2) and h.min() >= 0


def test_temperature_explorer_reproduces_the_times_8_example():
    from sdpa_helpers.widgets.saturation import TEMPERATURES, TemperatureExplorer

    e = TemperatureExplorer(temperature=1 / 8)
    heights = [p.vertices[1, 1] for p in e.bars.get_paths()]
    assert np.allclose(heights, [0.0326, 0.0030, 0.1615, 0.0030, 0.8000], atol=5e-5)
    assert e.sweep_values() == list(TEMPERATURES)


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


# Update speed is measured by benchmarks/slider_latency.py, never asserted in a test.


# -- exercises ------------------------------------------------------------------------------
def test_exercises_accept_right_and_reject_wrong_answers():
    q = dict(quiet=True)
    assert check("05.scaled_weight", 1 / (1 + np.exp(-2)), **q) and not check("05.scaled_weight", 0.9997, **q)
    assert check("05.temperature", 10.0, **q) and not check("05.temperature", 100.0, **q)
    assert check("05.onset_16_keys", 2.77, **q) and check("05.onset_16_keys", np.log(16), **q)
    assert not check("05.onset_16_keys", 5.55, **q) and not check("05.onset_16_keys", 16.0, **q)  # 2 ln n, n

    def stable(x):
        x = np.asarray(x, dtype=float)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def naive(x):
        return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)

    def global_max(x):  # stable, but not row by row
        e = np.exp(x - x.max())
        return e / e.sum()

    assert check("05.stable_softmax", stable, **q)
    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", naive, **q)
    assert not check("05.stable_softmax", global_max, **q)

    def global_max_row_sums(x):  # one maximum for the whole batch: a row far below it underflows to 0/0
        e = np.exp(x - x.max())
        return e / e.sum(axis=-1, keepdims=True)

    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", global_max_row_sums, **q)
    assert not check("05.scaled_weight", None, **q) and not check("06.softmax_jacobian", lambda p: None, **q)

    assert check("06.jacobian_half", [[0.25, -0.25], [-0.25, 0.25]], **q)
    assert not check("06.jacobian_half", [[0.25, 0.25], [0.25, 0.25]], **q)
    assert check("06.largest_entry", 0.21, **q) and not check("06.largest_entry", 0.14, **q)
    assert check("06.cross_entropy_grad", 1.40, **q) and check("06.cross_entropy_grad", 0.99 * np.sqrt(2), **q)
    assert not check("06.cross_entropy_grad", 0.02, **q) and not check("06.cross_entropy_grad", 0.99, **q)
    assert check("06.softmax_jacobian", lambda p: np.diag(p) - np.outer(p, p), **q)
    assert not check("06.softmax_jacobian", lambda p: np.diag(p * (1 - p)), **q)  # diagonal only
    assert not check("06.softmax_jacobian", lambda p: np.outer(p, p) - np.diag(p), **q)  # sign flipped
    assert not check("06.softmax_jacobian", lambda p: np.diag(p), **q)
