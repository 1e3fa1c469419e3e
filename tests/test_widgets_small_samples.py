"""sdpa_helpers.widgets.small_samples (notebook 03's explorer), headless; every explorer's common
behaviour is tested in tests/test_widgets.py."""

import numpy as np
import pytest

from sdpa_helpers import small_samples as ss
from sdpa_helpers.widgets import small_samples as small_samples_widgets


def test_variance_spread_explorer_shows_the_cached_simulation():
    e = small_samples_widgets.VarianceSpreadExplorer()
    assert e.main == "n" and e.controls["n"].description == "n"
    assert e.sweep_values() == list(ss.SIZES)
    e.controls["n"].value = 8
    r = ss.relative_sample_variances(8)
    values = e.histogram.stairs.get_data().values
    assert np.allclose(values * r.size, np.histogram(r, bins=ss.REL_BINS)[0])
    assert f"{r.std(ddof=1):.3f}" in e.readout.value
    assert e.marker.get_data()[1][0] == pytest.approx(r.std(ddof=1))


def test_variance_spread_explorer_precomputes_every_n():
    e = small_samples_widgets.VarianceSpreadExplorer(n=8)  # timings: benchmarks/controls_latency.py
    assert e.controls["n"].value == 8 and "n = 8:" in e.readout.value
    renders, fig = e.renders, e.fig
    for n in ss.SIZES:  # a visit to every n: no new simulation, background or figure
        e.controls["n"].value = n
    assert e.renders == renders + len(ss.SIZES) and e.fig is fig

