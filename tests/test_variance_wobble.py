"""Notebook 02's stored wobble counts and notebook 08's matching-key weight (additions of issue 29)."""

import math

import numpy as np
import pytest

from sdpa_helpers import assumptions as A
from sdpa_helpers import variance
from sdpa_helpers.attention import softmax
from sdpa_helpers.sampling import make_rng, sample_components


def test_wobble_runs_match_sample_summary_run_by_run():
    var, se = variance.wobble_runs(3, n_each=50, rng=7)
    g = make_rng(7)
    P = sample_components((3, 50), mean=2.0, rng=g) * sample_components((3, 50), mean=2.0, rng=g)
    for i in range(3):
        st = variance.sample_summary(P[i])
        assert var[i] == pytest.approx(st["var"], rel=1e-12)
        assert se[i] == pytest.approx(st["se_var"], rel=1e-9)


def test_wobble_runs_bad_input():
    with pytest.raises(ValueError, match="n_each"):
        variance.wobble_runs(3, n_each=1)
    with pytest.raises(ValueError, match="n_runs"):
        variance.wobble_runs(0)


def test_stored_wobble_counts_match_settings_and_are_plausible():
    s = variance.wobble_counts()
    assert s["misses"].shape == (len(variance.WOBBLE_SEEDS),)
    # the reported SE is close to the real spread in every seed
    assert np.all(np.abs(s["reported_se"] / s["spread"] - 1) < 0.05)
    # the miss rate is above the normal ideal (heavy-tailed SE estimates) but below 1 %
    rate = s["misses"].sum() / (s["runs"] * len(s["seeds"]))
    assert math.erfc(4 / math.sqrt(2)) < rate < 0.01


@pytest.mark.slow
def test_stored_wobble_counts_reproduce_for_one_seed():
    s = variance.wobble_counts()
    assert variance._wobble_seed(0)[0] == s["misses"][0]


def test_match_weight_against_explicit_keys():
    d, rho, n_keys, n = 16, 0.5, 12, 4000
    fast = A.match_weight(d, rho, scale="sqrt", n_keys=n_keys, n_queries=n, rng=1)
    g = make_rng(2)
    q, k = A.sample_correlated_qk(n, d, rho, rng=g)
    K = g.standard_normal((n, n_keys - 1, d))  # explicit unrelated keys
    logits = np.concatenate([np.einsum("nd,nd->n", q, k)[:, None], np.einsum("nd,nkd->nk", q, K)], axis=1)
    naive = softmax(logits / np.sqrt(d))[:, 0]
    se = math.hypot(fast.std() / math.sqrt(n), naive.std() / math.sqrt(n))
    assert abs(fast.mean() - naive.mean()) < 4 * se


def test_match_weight_limit_and_bad_input():
    w = A.match_weight(4096, 1.0, scale=1 / 4096, rng=0)
    assert w.mean() == pytest.approx(math.e / (math.e + 11), abs=0.005)
    with pytest.raises(ValueError, match="d_k"):
        A.match_weight(0, 0.5)
    with pytest.raises(ValueError, match="rho"):
        A.match_weight(16, 1.5)
