"""sdpa_helpers.widgets.saturation (notebook 05's explorers), headless; every explorer's common
behaviour is tested in tests/test_widgets.py. Update speed is measured by benchmarks/controls_latency.py,
never asserted in a test."""

import numpy as np
import pytest

from sdpa_helpers import saturation as S
from sdpa_helpers.attention import softmax


@pytest.mark.slow  # builds every (keys, scale) curve: in `make test`
def test_saturation_explorer_shows_the_softmax_and_keeps_one_background():
    from sdpa_helpers.widgets import saturation as Wsat

    e = Wsat.SaturationExplorer(d_k=4096, keys=16, seed=3)
    z = Wsat._one_query(3)[-1, :16]  # unscaled logits at d_k = 4096
    heights = [p.vertices[1, 1] for p in e.bars[0].bars.get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z)))
    heights = [p.vertices[1, 1] for p in e.bars[1].bars.get_paths()]
    assert np.allclose(sorted(heights), sorted(softmax(z / 64)))
    figures = len(__import__("matplotlib.pyplot").pyplot.get_fignums())
    for d_k in e.sweep_values():
        e.controls["d_k"].value = d_k
    for n in S.KEY_COUNTS:
        e.controls["keys"].value = n
        assert len(e.bars[0].bars.get_paths()) == n
    assert len(__import__("matplotlib.pyplot").pyplot.get_fignums()) == figures, "no new figure per update"
    assert set(e.curves) == {(n, s) for n in S.KEY_COUNTS for s in ("unscaled", "sqrt")}
    # the onset line sits at the measured onset of its own curves; the law line is ln n - d_k/2 where >= 0
    n = S.KEY_COUNTS[-1]
    assert np.allclose(e.panels.onsets[0].get_xdata(), np.median(S.onset_over_seeds(n)))
    x, h = e.panels.law.get_data()
    assert np.allclose(h, np.log(S.KEY_COUNTS[-1]) - x / 2) and h.min() >= 0


def test_temperature_explorer_reproduces_the_times_8_example():
    from sdpa_helpers.widgets.saturation import TEMPERATURES, TemperatureExplorer

    e = TemperatureExplorer(temperature=1 / 8)
    heights = [p.vertices[1, 1] for p in e.panels.bars[0].bars.get_paths()]
    assert np.allclose(heights, [0.0326, 0.0030, 0.1615, 0.0030, 0.8000], atol=5e-5)
    assert e.sweep_values() == list(TEMPERATURES)



def test_explorer_onsets_agree_with_notebook_05s_table():
    """The explorer's onset readout is section 5's measurement: falling with n, inside that table's checked ranges."""
    from sdpa_helpers.widgets import saturation as Wsat

    e = Wsat.SaturationExplorer(d_k=64, keys=4)
    shown = []
    for n in S.KEY_COUNTS:
        e.controls["keys"].value = n
        shown.append(float(e.panels.onsets[0].get_xdata()[0]))
        assert f"d_k ≈ {shown[-1]:.1f}." in e.readout.value
    assert all(a > b for a, b in zip(shown, shown[1:])), shown  # monotone: more keys, earlier onset
    assert shown[0] > 15  # 4 keys
    assert all(2 < x < 4.5 for x in shown[1:]), shown  # n >= 16
    # independent reference: the measured onset on a finer, larger Monte Carlo than the explorer's grid
    d = np.arange(1, 9)
    ref = S.measured_onset(d, S.saturation_curves(d, 256, 2000, scale="unscaled", rng=99).entropy.mean, 256)
    assert abs(shown[S.KEY_COUNTS.index(256)] - ref) < 0.25, (shown, ref)
