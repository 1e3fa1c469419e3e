"""sdpa_helpers.models: the table of published configurations is self-consistent."""

import math
import re

import numpy as np
import pytest

from sdpa_helpers import models as m


def test_rows_are_unique_and_sourced():
    names = [r.name for r in m.MODELS]
    assert len(names) == len(set(names))
    for r in m.MODELS:
        assert r.d_model > 0 and r.n_heads > 0 and r.head_dim > 0
        assert len(r.source) > 40, r.name  # a paper section or a file a learner can open


def test_scale_label_matches_scale():
    """The words and the number agree: '1/√n' means n**-0.5, 'none (1)' means 1."""
    for r in m.MODELS:
        match = re.fullmatch(r"1/√(\d+)", r.scale_label)
        if match:
            assert r.scale == pytest.approx(int(match.group(1)) ** -0.5, rel=1e-15), r.name
        else:
            assert r.scale_label == "none (1)" and r.scale == 1.0, r.name


def test_counter_examples_are_exactly_the_rows_with_head_dim_not_d_model_over_h():
    by_loop = [r.name for r in m.MODELS if r.head_dim * r.n_heads != r.d_model]
    assert [r.name for r in m.counter_examples()] == by_loop
    assert {"T5 3B", "T5 11B", "Gemma 7B"} <= set(by_loop)
    assert "T5 small" not in by_loop and "GPT-2 small" not in by_loop


def test_published_numbers():
    assert m.model("T5 3B")[1:4] == (1024, 32, 128)
    assert m.model("T5 11B")[1:4] == (1024, 128, 128)
    assert m.model("Gemma 7B")[1:4] == (3072, 16, 256)
    g27 = m.model("Gemma 2 27B")
    assert g27.d_model / g27.n_heads == 144 and g27.head_dim == 128
    assert g27.scale == pytest.approx(1 / 12)
    assert g27.sqrt_scale_ratio == pytest.approx(math.sqrt(128) / 12)
    for name in ("T5 small", "T5 base", "T5 large", "T5 3B", "T5 11B"):
        assert m.model(name).scale == 1.0
    assert m.model("BERT-base").sqrt_scale_ratio == pytest.approx(1.0)


def test_lookup_and_table_errors():
    with pytest.raises(ValueError, match="name must be one of"):
        m.model("GPT-5")
    with pytest.raises(TypeError, match="rows must hold ModelConfig"):
        m.format_table([("x", 1)])
    table = m.format_table()
    assert len(table.splitlines()) == len(m.MODELS) + 2


def test_bert_truncated_normal_std_is_about_088_of_its_stddev():
    """TF1's truncated_normal_initializer(stddev=s) redraws beyond 2 s: the weights' std is ~0.88 s (row note)."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal(400_000)
    z = z[np.abs(z) <= 2.0]  # rejection = redrawing outside +-2 stddev
    phi2 = math.exp(-2.0) / math.sqrt(2 * math.pi)
    mass = math.erf(2 / math.sqrt(2))
    exact = math.sqrt(1 - 4 * phi2 / mass)  # Var of N(0,1) truncated to [-2, 2] = 1 - 2*2*phi(2)/mass
    v = z.var()
    se = math.sqrt((np.mean((z - z.mean()) ** 4) - v**2) / z.size) / (2 * math.sqrt(v))  # delta method
    assert abs(z.std() - exact) < 4 * se
    assert round(exact, 2) == 0.88
    assert "0.88" in m.model("BERT-base").source and "truncated" in m.model("BERT-base").notes


def test_gemma2_9b_scale_is_head_dim_not_d_model_over_h():
    row = m.model("Gemma 2 9B")
    assert row.scale == pytest.approx(256**-0.5) and row.d_model_over_h == 224
    assert "224" in row.source and "256" in row.source
