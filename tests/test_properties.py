"""Every public function of the math layer that takes arrays, across the course's range (|x| <= 1e100).

Each test draws inputs as moderate arrays times 10**e (e from -100 to 100, chosen separately
for each argument, with some entries up to 10**±40 further apart within an array), and
checks the function against a reference computed exactly in :mod:`decimal` (60 digits, an
exponent range of ±10**6: nothing overflows or underflows there). The function must give

- the right number: within a tolerance from the conditioning of the problem (the rounding
  of the inputs' own terms), or
- a clear ``ValueError``/``TypeError`` that names one of the caller's parameters,

never a wrong number, a NaN, an inf, or an error from inside numpy (an overflow
``RuntimeWarning`` from sdpa_helpers is an error too, see pyproject's filterwarnings).
Where the true result is beyond the largest float, only the clear error is right.
"""

from __future__ import annotations

import ast
import decimal
import importlib
import inspect
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import MATH_MODULES
from sdpa_helpers import (
    assumptions,
    attention,
    gradients,
    sampling,
    saturation,
    small_samples,
    theory,
    training,
    variance,
)

CTX = decimal.Context(prec=60, Emax=10**6, Emin=-(10**6),
                      traps=[decimal.InvalidOperation, decimal.DivisionByZero])
MAX_FLOAT = decimal.Decimal("1.7976931348623157e308")
TINY = decimal.Decimal("1e-300")  # below this, a result may round to 0 or a subnormal

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# -- exact references ---------------------------------------------------------------------------

def D(x) -> decimal.Decimal:
    """A float as a Decimal (exact to 60 digits)."""
    return CTX.create_decimal_from_float(float(x))


def dexp(x: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext(CTX) as ctx:
        ctx.traps[decimal.Overflow] = False
        ctx.traps[decimal.Underflow] = False
        if x < -(10**7):
            return decimal.Decimal(0)
        if x > 10**7:
            return decimal.Decimal("Infinity")
        return x.exp()


def dsqrt(x: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext(CTX):
        return x.sqrt()


def dsum(values) -> decimal.Decimal:
    with decimal.localcontext(CTX):
        return sum(values, decimal.Decimal(0))


def dsoftmax(z: list[decimal.Decimal]) -> list[decimal.Decimal]:
    """softmax over a list of exact logits: p_i = 1 / sum_j exp(z_j - z_i)."""
    with decimal.localcontext(CTX):
        return [1 / dsum(dexp(zj - zi) for zj in z) for zi in z]


def dentropy(p: list[decimal.Decimal]) -> decimal.Decimal:
    with decimal.localcontext(CTX):
        return -dsum(pi * pi.ln() for pi in p if pi > 0)


# -- outcomes -----------------------------------------------------------------------------------

def outcome(call, names):
    """The result of ``call()``, or None after a clear error that names one of ``names``."""
    try:
        return call()
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert any(name in message for name in names), f"error names none of {names}: {message!r}"
        return None


def assert_close(what: str, got, ref: decimal.Decimal, tol: decimal.Decimal) -> None:
    """``got`` (a float) is within ``tol`` of the exact ``ref``; a ``ref`` beyond the float range
    should have raised instead."""
    got = float(got)
    assert not math.isnan(got), f"{what}: NaN (exact value {ref:.6e})"
    with decimal.localcontext(CTX):
        if abs(ref) > MAX_FLOAT:
            raise AssertionError(f"{what}: returned {got!r} where the exact value {ref:.6e} does not fit a float "
                                 "(a clear ValueError is the right answer)")
        assert math.isfinite(got), f"{what}: {got} (exact value {ref:.6e})"
        gap = abs(D(got) - ref)
        assert gap <= tol + TINY, f"{what}: got {got!r}, exact {ref:.17e}, off by {gap:.3e} > tolerance {tol:.3e}"


# -- strategies ---------------------------------------------------------------------------------

EXPONENTS = st.integers(-100, 100)
MANTISSA = st.builds(lambda m, s: m * s, st.floats(0.1, 1.0), st.sampled_from([-1.0, 1.0]))
POSITIVE = st.floats(0.1, 1.0)


@st.composite
def magnitude_arrays(draw, shape, elements=MANTISSA, spread: int = 40):
    """A moderate array times 10**e, with entries up to 10**spread apart when drawn so."""
    base = draw(hnp.arrays(np.float64, shape, elements=elements))
    e = draw(EXPONENTS)
    if draw(st.booleans()):
        offsets = draw(hnp.arrays(np.int64, shape, elements=st.integers(-spread, spread)))
    else:
        offsets = np.zeros(shape, dtype=np.int64)
    exps = np.clip(e + offsets, -100, 100)
    return base * np.power(10.0, exps)


def positive_scalar(draw) -> float:
    return draw(POSITIVE) * 10.0 ** draw(EXPONENTS)


def probability_vectors(draw, n: int) -> np.ndarray:
    """Probability vectors with entries from 1 down to about 1e-200 (weights of extreme logits)."""
    w = draw(magnitude_arrays((n,), elements=POSITIVE, spread=200))
    p = w / w.sum()
    return p


SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 6))


# -- attention ----------------------------------------------------------------------------------

@SETTINGS
@given(st.data())
def test_softmax_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    x = data.draw(magnitude_arrays((2, n)))
    T = positive_scalar(data.draw) if data.draw(st.booleans()) else 1.0
    got = outcome(lambda: attention.softmax(x, temperature=T), ["x", "temperature"])
    if got is None:
        return
    for row, out in zip(x, got):
        with decimal.localcontext(CTX):
            ref = dsoftmax([D(v) / D(T) for v in row])
        for g, r in zip(out, ref):
            assert_close("softmax", g, r, decimal.Decimal("1e-12"))


@SETTINGS
@given(st.data())
def test_softmax_jacobian_and_entropy_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    p = probability_vectors(data.draw, n)
    J = outcome(lambda: attention.softmax_jacobian(p), ["p"])
    if J is not None:
        for i in range(n):
            for j in range(n):
                with decimal.localcontext(CTX):
                    ref = (D(p[i]) if i == j else 0) - D(p[i]) * D(p[j])
                assert_close("softmax_jacobian", J[i, j], ref, decimal.Decimal("1e-15"))
    h = outcome(lambda: attention.entropy(p), ["p"])
    if h is not None:
        assert_close("entropy", h, dentropy([D(v) for v in p]), decimal.Decimal("1e-12"))


def exact_scores(Q, K, c):
    """Exact scores c * Q K^T and the conditioning sum c * sum_t |q_t k_t|."""
    with decimal.localcontext(CTX):
        S = [[D(c) * dsum(D(a) * D(b) for a, b in zip(q, k)) for k in K] for q in Q]
        A = [[D(c) * dsum(abs(D(a) * D(b)) for a, b in zip(q, k)) for k in K] for q in Q]
    return S, A


@SETTINGS
@given(st.data())
def test_attention_scores_across_the_range(data):
    n_q, n_k, d_k = data.draw(SHAPES)
    Q = data.draw(magnitude_arrays((n_q, d_k)))
    K = data.draw(magnitude_arrays((n_k, d_k)))
    scale = data.draw(st.one_of(st.none(), st.builds(lambda m, e: m * 10.0**e, POSITIVE, EXPONENTS)))
    c = d_k ** -0.5 if scale is None else scale
    got = outcome(lambda: attention.attention_scores(Q, K, scale=scale), ["Q", "K", "scale"])
    if got is None:
        return
    S, A = exact_scores(Q, K, c)
    for i in range(n_q):
        for j in range(n_k):
            assert_close("attention_scores", got[i, j], S[i][j], A[i][j] * decimal.Decimal("1e-13"))


@SETTINGS
@given(st.data())
def test_scaled_dot_product_attention_across_the_range(data):
    n_q, n_k, d_k = data.draw(SHAPES)
    Q = data.draw(magnitude_arrays((n_q, d_k)))
    K = data.draw(magnitude_arrays((n_k, d_k)))
    V = data.draw(magnitude_arrays((n_k, 2)))
    got = outcome(lambda: attention.scaled_dot_product_attention(Q, K, V), ["Q", "K", "V"])
    if got is None:
        return
    out, w = got
    S, A = exact_scores(Q, K, d_k ** -0.5)
    with decimal.localcontext(CTX):
        v_max = max(abs(D(v)) for v in V.ravel())
        for i in range(n_q):
            ref_w = dsoftmax(S[i])
            ds = max(A[i]) * decimal.Decimal("1e-13")  # how far the float scores may be from exact
            tol_w = min(4 * ds, decimal.Decimal(1)) + decimal.Decimal("1e-12")
            for j in range(n_k):
                assert_close("sdpa weights", w[i, j], ref_w[j], tol_w)
            for col in range(2):
                ref_out = dsum(ref_w[j] * D(V[j, col]) for j in range(n_k))
                assert_close("sdpa output", out[i, col], ref_out, v_max * (n_k * tol_w + decimal.Decimal("1e-13")))


@SETTINGS
@given(st.data())
def test_layer_norm_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    x = data.draw(magnitude_arrays((2, n)))
    eps = data.draw(st.sampled_from([0.0, 1e-5, None]))
    if eps is None:
        eps = positive_scalar(data.draw)
    got = outcome(lambda: attention.layer_norm(x, eps=eps), ["x", "eps"])
    if got is None:
        return
    for row, out in zip(x, got):
        with decimal.localcontext(CTX):
            xs = [D(v) for v in row]
            mean = dsum(xs) / len(xs)
            var = dsum((v - mean) ** 2 for v in xs) / len(xs)
            denom = dsqrt(var + D(eps))
            top = max(abs(v) for v in xs)
            tol = decimal.Decimal("1e-12") * (1 + top / denom)  # rounding of x - mean, relative to the spread
            for v, g in zip(xs, out):
                assert_close("layer_norm", g, (v - mean) / denom, tol)


# -- theory -------------------------------------------------------------------------------------

@SETTINGS
@given(st.data())
def test_normal_pdf_across_the_range(data):
    x = data.draw(magnitude_arrays((4,)))
    mean = data.draw(MANTISSA) * 10.0 ** data.draw(EXPONENTS)
    var = positive_scalar(data.draw)
    got = outcome(lambda: theory.normal_pdf(x, mean, var), ["x", "mean", "var"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        for v, g in zip(x, got):
            z2 = (D(v) - D(mean)) ** 2 / D(var)
            ref = dexp(-z2 / 2) / dsqrt(2 * decimal.Decimal(math.pi) * D(var))
            assert_close("normal_pdf", g, ref, abs(ref) * decimal.Decimal("1e-12") * (1 + z2))


@SETTINGS
@given(st.data())
def test_within_row_moments_across_the_range(data):
    q = data.draw(magnitude_arrays((5,)))
    mean_k = data.draw(MANTISSA) * 10.0 ** data.draw(EXPONENTS)
    var_k = positive_scalar(data.draw)
    got = outcome(lambda: theory.within_row_moments(q, mean_k, var_k), ["q", "mean_k", "var_k"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        qs = [D(v) for v in q]
        mean = D(mean_k) * dsum(qs)
        var = D(var_k) * dsum(v * v for v in qs)
        assert_close("within_row_moments.mean", got.mean, mean,
                     abs(D(mean_k)) * dsum(abs(v) for v in qs) * decimal.Decimal("1e-13"))
        assert_close("within_row_moments.var", got.var, var, var * decimal.Decimal("1e-13"))


@SETTINGS
@given(st.data())
def test_theory_closed_forms_across_the_range(data):
    mx, my = (data.draw(MANTISSA) * 10.0 ** data.draw(EXPONENTS) for _ in range(2))
    vx, vy = (positive_scalar(data.draw) for _ in range(2))
    d_k = data.draw(st.integers(1, 4096))
    with decimal.localcontext(CTX):
        var_exact = D(vx) * D(vy) + D(vx) * D(my) ** 2 + D(vy) * D(mx) ** 2
        mean_exact = D(mx) * D(my)
    got = outcome(lambda: theory.product_moments(mx, vx, my, vy), ["mean_x", "var_x", "mean_y", "var_y"])
    if got is not None:
        assert_close("product_moments.mean", got.mean, mean_exact, abs(mean_exact) * decimal.Decimal("1e-15"))
        assert_close("product_moments.var", got.var, var_exact, var_exact * decimal.Decimal("1e-14"))
        std = outcome(lambda: got.std, ["var"])
        assert std is not None and math.isclose(std, math.sqrt(got.var))
    got = outcome(lambda: theory.dot_product_moments(d_k, mx, vx, my, vy), ["d_k", "mean_q", "var_q"])
    if got is not None:
        with decimal.localcontext(CTX):
            ref = d_k * var_exact
            assert_close("dot_product_moments.var", got.var, ref, ref * decimal.Decimal("1e-14"))
    c = data.draw(MANTISSA) * 10.0 ** data.draw(EXPONENTS)
    got = outcome(lambda: theory.scaled_moments(theory.Moments(mx, vx), c), ["scale", "moments"])
    if got is not None:
        with decimal.localcontext(CTX):
            assert_close("scaled_moments.var", got.var, D(c) ** 2 * D(vx), D(c) ** 2 * D(vx) * decimal.Decimal("1e-14"))
    m = data.draw(st.integers(2, 10**6))
    kappa = data.draw(st.floats(-2.0, 50.0))
    got = outcome(lambda: theory.sample_variance_moments(m, vx, kappa), ["m", "var", "excess_kurtosis"])
    if got is not None:
        with decimal.localcontext(CTX):
            ref = D(vx) ** 2 * (decimal.Decimal(2) / (m - 1) + D(kappa) / m)
            assert_close("sample_variance_moments.var", got.var, ref, abs(ref) * decimal.Decimal("1e-12")
                         + D(vx) ** 2 * (abs(D(kappa)) / m) * decimal.Decimal("1e-13"))
    got = outcome(lambda: theory.effective_sample_size(vy, vx, kappa), ["var_s2", "var", "excess_kurtosis"])
    if got is not None:
        with decimal.localcontext(CTX):
            v = D(vy) / D(vx) ** 2
            b = v + 2 + D(kappa)
            ref = (b + dsqrt(b * b - 4 * v * D(kappa))) / (2 * v)
            assert_close("effective_sample_size", got, ref, abs(ref) * decimal.Decimal("1e-9"))


# -- other math modules -------------------------------------------------------------------------

@SETTINGS
@given(st.data())
def test_qk_norm_scores_across_the_range(data):
    n_q, n_k, d_k = data.draw(SHAPES)
    Q = data.draw(magnitude_arrays((n_q, d_k)))
    K = data.draw(magnitude_arrays((n_k, d_k)))
    gain = data.draw(st.floats(0.1, 10.0))
    got = outcome(lambda: assumptions.qk_norm_scores(Q, K, gain=gain), ["Q", "K", "gain"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        for i in range(n_q):
            for j in range(n_k):
                q, k = [D(v) for v in Q[i]], [D(v) for v in K[j]]
                cos = dsum(a * b for a, b in zip(q, k)) / dsqrt(dsum(a * a for a in q) * dsum(b * b for b in k))
                assert_close("qk_norm_scores", got[i, j], D(gain) * cos, decimal.Decimal("1e-12") * D(gain))


@SETTINGS
@given(st.data())
def test_softcap_across_the_range(data):
    x = data.draw(magnitude_arrays((5,)))
    cap = positive_scalar(data.draw)
    got = outcome(lambda: assumptions.softcap(x, cap), ["logits", "cap"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        for v, g in zip(x, got):
            y = abs(D(v)) / D(cap)
            if y < decimal.Decimal("1e-3"):  # the series: 1 - exp(-2y) would cancel
                tanh = y - y**3 / 3 + 2 * y**5 / 15 - 17 * y**7 / 315 + 62 * y**9 / 2835
            else:
                t = dexp(-2 * y)
                tanh = (1 - t) / (1 + t)
            ref = D(cap) * tanh * (1 if v >= 0 else -1)
            assert_close("softcap", g, ref, abs(ref) * decimal.Decimal("1e-12"))


@SETTINGS
@given(st.data())
def test_cluster_mean_across_the_range(data):
    values = data.draw(magnitude_arrays((3, 4)))
    got = outcome(lambda: assumptions.cluster_mean(values), ["values"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        rows = [dsum(D(v) for v in row) / len(row) for row in values]
        mean = dsum(rows) / len(rows)
        sd = dsqrt(dsum((r - mean) ** 2 for r in rows) / (len(rows) - 1))
        scale = max(abs(D(v)) for v in values.ravel())
        assert_close("cluster_mean.mean", got[0], mean, scale * decimal.Decimal("1e-13"))
        se = sd / dsqrt(decimal.Decimal(len(rows)))
        assert_close("cluster_mean.se", got[1], se, scale * decimal.Decimal("1e-12"))


@SETTINGS
@given(st.data())
def test_weight_stats_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    logits = data.draw(magnitude_arrays((2, n)))
    got = outcome(lambda: saturation.weight_stats(logits), ["logits"])
    if got is None:
        return
    for row, mw, h, eff in zip(logits, got.max_weight, got.entropy, got.effective_keys):
        p = dsoftmax([D(v) for v in row])
        ref_h = dentropy(p)
        assert_close("weight_stats.max_weight", mw, max(p), decimal.Decimal("1e-12"))
        assert_close("weight_stats.entropy", h, ref_h, decimal.Decimal("1e-12"))
        assert_close("weight_stats.effective_keys", eff, dexp(ref_h), decimal.Decimal("1e-11"))


@SETTINGS
@given(st.data())
def test_jacobian_frobenius_and_logit_gradient_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    p = probability_vectors(data.draw, n)
    g = data.draw(magnitude_arrays((n,)))
    with decimal.localcontext(CTX):
        ps = [D(v) for v in p]
        J = [[(ps[i] if i == j else 0) - ps[i] * ps[j] for j in range(n)] for i in range(n)]
    got = outcome(lambda: gradients.jacobian_frobenius(p), ["p"])
    if got is not None:
        with decimal.localcontext(CTX):
            ref = dsqrt(dsum(J[i][j] ** 2 for i in range(n) for j in range(n)))
        assert_close("jacobian_frobenius", got, ref, decimal.Decimal("1e-15") + ref * decimal.Decimal("1e-12"))
    got = outcome(lambda: gradients.logit_gradient(p, g), ["p", "upstream"])
    if got is not None:
        with decimal.localcontext(CTX):
            gs = [D(v) for v in g]
            top = max(abs(v) for v in gs)
            for i in range(n):
                ref = dsum(J[i][j] * gs[j] for j in range(n))
                assert_close("logit_gradient", got[i], ref, top * decimal.Decimal("1e-14"))


@SETTINGS
@given(st.data())
def test_mc_estimate_across_the_range(data):
    x = data.draw(magnitude_arrays((6,)))
    got = outcome(lambda: saturation.mc_estimate(x), ["samples"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        xs = [D(v) for v in x]
        mean = dsum(xs) / len(xs)
        sd = dsqrt(dsum((v - mean) ** 2 for v in xs) / (len(xs) - 1))
        top = max(abs(v) for v in xs)
        s = sorted(xs)
        assert_close("mc_estimate.mean", got.mean, mean, top * decimal.Decimal("1e-14"))
        assert_close("mc_estimate.se", got.se, sd / dsqrt(decimal.Decimal(len(xs))), top * decimal.Decimal("1e-13"))
        assert_close("mc_estimate.median", got.median, (s[2] + s[3]) / 2, top * decimal.Decimal("1e-15"))


@SETTINGS
@given(st.data())
def test_share_of_examples_across_the_range(data):
    norms = np.abs(data.draw(magnitude_arrays((8,), elements=POSITIVE)))
    got = outcome(lambda: training.share_of_examples(norms), ["norms", "mass"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        sq = sorted((D(v) ** 2 for v in norms), reverse=True)
        total = dsum(sq)
        cum, counts = decimal.Decimal(0), []
        for k, v in enumerate(sq, start=1):
            cum += v
            if abs(cum - decimal.Decimal("0.9") * total) <= total * decimal.Decimal("1e-12"):
                counts.append(k)  # on the boundary: rounding may decide either way
            if cum >= decimal.Decimal("0.9") * total:
                counts.append(k)
                break
    assert any(math.isclose(got, k / len(norms)) for k in counts), (got, counts)


@SETTINGS
@given(st.data())
def test_variance_with_se_across_the_range(data):
    x = data.draw(magnitude_arrays((6,)))
    got = outcome(lambda: small_samples.variance_with_se(x), ["values"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        xs = [D(v) for v in x]
        mean = dsum(xs) / len(xs)
        m2 = dsum((v - mean) ** 2 for v in xs) / len(xs)
        m4 = dsum((v - mean) ** 4 for v in xs) / len(xs)
        var = m2 * len(xs) / (len(xs) - 1)
        top2 = max(abs(v) for v in xs) ** 2
        assert_close("variance_with_se.var", got[0], var, top2 * decimal.Decimal("1e-13"))
        se = dsqrt(max(m4 - m2 * m2, decimal.Decimal(0)) / len(xs))
        assert_close("variance_with_se.se", got[1], se, top2 * decimal.Decimal("1e-6"))


@SETTINGS
@given(st.data(), st.sampled_from([(sampling.histogram_density, "samples")]))
def test_density_histogram_across_the_range(data, fn_name):
    fn, name = fn_name
    values = data.draw(magnitude_arrays((12,)))
    top = float(np.abs(values).max())
    edges = np.linspace(-top, top, 5)
    got = outcome(lambda: fn(values, edges), [name, "edges"])
    if got is None:
        return
    counts, _ = np.histogram(values, bins=edges)  # counting compares floats: exact
    with decimal.localcontext(CTX):
        for i, g in enumerate(got):
            width = D(edges[i + 1]) - D(edges[i])
            ref = decimal.Decimal(int(counts[i])) / (len(values) * width)
            assert_close("density_histogram", g, ref, abs(ref) * decimal.Decimal("1e-12"))


@pytest.mark.parametrize("fn,args,names", [
    (attention.softmax, ([1e100, -1e100],), ["x"]),
    (attention.layer_norm, ([1e100, -1e100],), ["x"]),
    (assumptions.qk_norm_scores, ([[1e100, 0.0]], [[1e100, 0.0]]), ["Q", "K"]),
    (assumptions.qk_norm_scores, ([[1e-100, 1e-100]], [[1.0, 0.0]]), ["Q", "K"]),
    (saturation.weight_stats, ([1e100, -1e100],), ["logits"]),
    (training.share_of_examples, ([1e100, 1e100],), ["norms"]),
])
def test_the_reported_cases(fn, args, names):
    """The cases of issue 11 at the edge of the course's range, each a right number or a clear error."""
    got = outcome(lambda: fn(*args), names)
    if got is None:
        return
    expected = {
        "softmax": [1.0, 0.0], "layer_norm": [1.0, -1.0], "share_of_examples": 1.0,
    }.get(fn.__name__)
    if fn.__name__ == "qk_norm_scores":
        expected = [[1.0]] if args[0][0][1] == 0.0 else [[math.sqrt(0.5)]]
    if fn.__name__ == "weight_stats":
        np.testing.assert_allclose([got.max_weight, got.entropy, got.effective_keys], [1.0, 0.0, 1.0])
        return
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@SETTINGS
@given(st.data())
def test_temperature_curves_across_the_range(data):
    n = data.draw(st.integers(1, 5))
    logits = data.draw(magnitude_arrays((n,)))
    temperatures = np.abs(data.draw(magnitude_arrays((2,), elements=POSITIVE)))
    got = outcome(lambda: saturation.temperature_curves(logits, temperatures), ["logits", "temperatures"])
    if got is None:
        return
    weights, stats = got
    for T, row, h in zip(temperatures, weights, stats.entropy):
        with decimal.localcontext(CTX):
            ref = dsoftmax([D(v) / D(T) for v in logits])
        for g, r in zip(row, ref):
            assert_close("temperature_curves weights", g, r, decimal.Decimal("1e-12"))
        assert_close("temperature_curves entropy", h, dentropy(ref), decimal.Decimal("1e-12"))


@SETTINGS
@given(st.data())
def test_dot_product_variance_cov_across_the_range(data):
    d = data.draw(st.integers(1, 4))
    A = data.draw(magnitude_arrays((d, d)))
    B = data.draw(magnitude_arrays((d, d)))
    cq, ck = (A + A.T) / 2, (B + B.T) / 2  # symmetric (the check wants a covariance's symmetry)
    mq = data.draw(magnitude_arrays((d,)))
    got = outcome(lambda: theory.dot_product_variance_cov(cq, ck, mean_q=mq), ["cov_q", "cov_k", "mean_q"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        terms = [D(cq[i, j]) * D(ck[j, i]) for i in range(d) for j in range(d)]
        terms += [D(mq[i]) * D(ck[i, j]) * D(mq[j]) for i in range(d) for j in range(d)]
        ref = dsum(terms)
        assert_close("dot_product_variance_cov", got, ref, dsum(abs(t) for t in terms) * decimal.Decimal("1e-13"))


@SETTINGS
@given(st.data())
def test_entropy_closed_form_and_z_score_across_the_range(data):
    n = data.draw(st.integers(1, 10**6))
    sigma2 = np.abs(data.draw(magnitude_arrays((3,), elements=POSITIVE)))
    got = outcome(lambda: saturation.entropy_closed_form(n, sigma2), ["n_keys", "sigma2"])
    if got is not None:
        with decimal.localcontext(CTX):
            for s2, g in zip(sigma2, got):
                ref = decimal.Decimal(n).ln() - D(s2) / 2
                tol = (decimal.Decimal(n).ln() + D(s2)) * decimal.Decimal("1e-14")
                assert_close("entropy_closed_form", g, ref, tol)
    value, expected = (data.draw(MANTISSA) * 10.0 ** data.draw(EXPONENTS) for _ in range(2))
    sd = positive_scalar(data.draw)
    got = outcome(lambda: small_samples.z_score(value, expected, sd), ["value", "expected", "sd"])
    if got is not None:
        with decimal.localcontext(CTX):
            ref = (D(value) - D(expected)) / D(sd)
            assert_close("z_score", got, ref, (abs(D(value)) + abs(D(expected))) / D(sd) * decimal.Decimal("1e-15"))


@SETTINGS
@given(st.data())
def test_seed_summary_across_the_range(data):
    values = data.draw(magnitude_arrays((5,)))
    got = outcome(lambda: training.seed_summary(values), ["values"])
    if got is None:
        return
    s = sorted(values.tolist())
    assert (got.median, got.low, got.high) == (s[2], s[0], s[4])


@SETTINGS
@given(st.data())
def test_bin_fractions_and_effective_keys_across_the_range(data):
    values = data.draw(magnitude_arrays((10,)))
    top = float(np.abs(values).max())
    bins = np.linspace(-top / 2, top, 4)
    got = outcome(lambda: small_samples.bin_fractions(values, bins), ["values", "bins"])
    if got is not None:
        inside = [sum(1 for v in values if bins[i] <= v < bins[i + 1] or (i == 2 and v == bins[3])) for i in range(3)]
        np.testing.assert_allclose(got, np.array(inside) / values.size, rtol=1e-15)
    n = data.draw(st.integers(1, 10**6))
    sigma2 = np.abs(data.draw(magnitude_arrays((3,), elements=POSITIVE)))
    got = outcome(lambda: saturation.effective_keys_closed_form(n, sigma2), ["n_keys", "sigma2"])
    if got is not None:
        with decimal.localcontext(CTX):
            for s2, g in zip(sigma2, got):
                ref = n * dexp(-D(s2) / 2)
                assert_close("effective_keys_closed_form", g, ref, ref * decimal.Decimal("1e-13") * (1 + D(s2)))


def dquantile(values: list[decimal.Decimal], q: float) -> decimal.Decimal:
    """numpy's default (linear) quantile, exactly."""
    s = sorted(values)
    h = (len(s) - 1) * D(q)
    lo = int(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


@SETTINGS
@given(st.data())
def test_rolling_quantiles_across_the_range(data):
    values = data.draw(magnitude_arrays((2, 6)))
    got = outcome(lambda: training.rolling_quantiles(values, window=3, quantiles=(0.1, 0.5, 0.9)),
                  ["values", "window", "quantiles"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        top = max(abs(D(v)) for v in values.ravel())
        for t in range(6):
            pooled = [D(values[r, s]) for r in range(2) for s in range(max(0, t - 1), min(6, t + 2))]
            for k, q in enumerate((0.1, 0.5, 0.9)):
                assert_close(f"rolling_quantiles q={q} t={t}", got[k, t], dquantile(pooled, q),
                             top * decimal.Decimal("1e-14"))


@SETTINGS
@given(st.data())
def test_log_log_slopes_across_the_range(data):
    from sdpa_helpers import scaling

    d_ks = [4, 16, 64, 256]
    stds = np.abs(data.draw(magnitude_arrays((4,), elements=POSITIVE)))
    got = outcome(lambda: scaling.log_log_slopes(d_ks, {"sqrt": stds}, 1000), ["d_ks", "stds", "n"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        x = [decimal.Decimal(d).ln() / decimal.Decimal(2).ln() for d in d_ks]
        y = [D(s).ln() / decimal.Decimal(2).ln() for s in stds]
        xm, ym = dsum(x) / 4, dsum(y) / 4
        slope = dsum((a - xm) * (b - ym) for a, b in zip(x, y)) / dsum((a - xm) ** 2 for a in x)
        scale = max(abs(b) for b in y)
    assert_close("log_log_slopes", got["sqrt"][0], slope, scale * decimal.Decimal("1e-13"))



@SETTINGS
@given(st.data())
def test_sample_summary_across_the_range(data):
    n = data.draw(st.integers(2, 6))
    x = data.draw(magnitude_arrays((n,)))
    got = outcome(lambda: variance.sample_summary(x), ["samples"])
    if got is None:
        return
    with decimal.localcontext(CTX):
        xs = [D(v) for v in x]
        mean = dsum(xs) / n
        dev = [v - mean for v in xs]
        var = dsum(d * d for d in dev) / (n - 1)
        m4 = dsum(d**4 for d in dev) / n
        top = max(abs(v) for v in xs)
        assert_close("sample_summary.mean", got["mean"], mean, top * decimal.Decimal("1e-15"))
        assert_close("sample_summary.se_mean", got["se_mean"], dsqrt(var / n), top * decimal.Decimal("1e-13"))
        assert_close("sample_summary.var", got["var"], var, top**2 * decimal.Decimal("1e-13"))
        assert_close("sample_summary.se_var", got["se_var"], dsqrt(max(m4 - var * var, decimal.Decimal(0)) / n),
                     top**2 * decimal.Decimal("1e-6"))  # the square root of a difference that may cancel
        # relative to kurt + 3: each deviation is rounded by a few ulps of the largest |sample|
        kurt3 = m4 / (var * var)
        assert_close("sample_summary.kurt", got["kurt"], kurt3 - 3, kurt3 * top / dsqrt(var) * decimal.Decimal("1e-13"))


@SETTINGS
@given(st.data())
def test_one_minus_max_across_the_range(data):
    n = data.draw(st.integers(1, 6))
    if data.draw(st.booleans()):
        p = np.stack([probability_vectors(data.draw, n) for _ in range(2)])
    else:  # not probability vectors (but by chance): a clear error
        p = np.abs(data.draw(magnitude_arrays((2, n))))
    got = outcome(lambda: gradients.one_minus_max(p), ["p"])
    if got is None:
        return
    for row, g in zip(p, got):
        with decimal.localcontext(CTX):
            ref = dsum(sorted(D(v) for v in row)[:-1])  # the sum of the entries but (one) largest, exactly
        assert_close("one_minus_max", g, ref, ref * decimal.Decimal("1e-14"))


def exact_scale_factor(scale, d_k: int) -> decimal.Decimal:
    with decimal.localcontext(CTX):
        if scale == "unscaled":
            return decimal.Decimal(1)
        if scale is None or scale == "sqrt":
            return 1 / dsqrt(decimal.Decimal(d_k))
        if scale == "inv_d":
            return 1 / decimal.Decimal(d_k)
        return D(scale)


@SETTINGS
@given(st.data())
def test_jacobian_panels_across_the_range(data):
    m, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5))
    d_ks = data.draw(st.lists(st.integers(1, 4096), min_size=m, max_size=m))
    z = data.draw(magnitude_arrays((m, n)))
    scales = tuple(data.draw(st.lists(st.one_of(st.sampled_from(["unscaled", "sqrt", "inv_d", None]),
                                                st.builds(lambda a, e: a * 10.0**e, POSITIVE, EXPONENTS)),
                                      min_size=1, max_size=3)))
    got = outcome(lambda: gradients.jacobian_panels(d_ks, z, scales=scales), ["d_ks", "logits", "scales"])
    if got is None:
        return
    assert got.d_k.tolist() == d_ks and got.scales == scales
    one = decimal.Decimal(1)
    for a, s in enumerate(scales):
        for b, d in enumerate(d_ks):
            with decimal.localcontext(CTX):
                x = [exact_scale_factor(s, d) * D(v) for v in z[b]]
                p = dsoftmax(x)
                # The float logits c z_j, and their differences, are off by a few ulps of max |c z|: each weight
                # is then off by a factor within e^{+-delta} (plus rounding), and J_F by (1 + r)^2.
                delta = max(abs(v) for v in x) * decimal.Decimal("3e-15")
                r = dexp(delta) - 1 if delta < 10 else decimal.Decimal(10**6)
                tol = [min(pj * r, one) + pj * decimal.Decimal("1e-14") for pj in p]
                # J_ij = p_i (delta_ij - p_j), with 1 - p_i summed from the other weights (60 digits hold 1 - 1e-218
                # as 1)
                J = [[p[i] * dsum(p[k] for k in range(n) if k != i) if i == j else -p[i] * p[j] for j in range(n)]
                     for i in range(n)]
                for i in range(n):
                    assert_close("jacobian_panels.weights", got.weights[a, b, i], p[i], tol[i])
                    for j in range(n):
                        tol_ij = (tol[i] * ((1 if i == j else 0) + p[j] + tol[j]) + p[i] * tol[j]
                                  + p[i] * decimal.Decimal("5e-16"))
                        assert_close("jacobian_panels.jacobian", got.jacobian[a, b, i, j], J[i][j], tol_ij)
                frob = dsqrt(dsum(J[i][j] ** 2 for i in range(n) for j in range(n)))
                assert_close("jacobian_panels.frobenius", got.frobenius[a, b], frob,
                             min(frob * ((1 + r) ** 2 - 1), one) + frob * decimal.Decimal("1e-12"))


def test_jacobian_panels_at_the_edge_of_the_range():
    """Logits 1e100 and -1e100: one-hot weights, J = 0, no warning."""
    panels = gradients.jacobian_panels([1, 4], [[1e100, -1e100], [-1e100, 1e100]], scales=("unscaled", "sqrt"))
    assert panels.weights.tolist() == [[[1.0, 0.0], [0.0, 1.0]]] * 2
    assert not panels.jacobian.any() and not panels.frobenius.any()


def test_jacobian_frobenius_where_squares_of_the_weights_underflow():
    """``||J||_F = 2 (1 - eps) eps`` for ``p = (1 - eps, eps)``, also where ``eps**2`` underflows."""
    got = gradients.jacobian_frobenius([[1.0, 1e-200], [1.0, 5e-324]])
    np.testing.assert_allclose(got[0], 2e-200, rtol=1e-15)
    assert got[1] == 1e-323  # 2 eps, the float nearest


@SETTINGS
@given(st.data(), st.sampled_from(training.FIELDS))
def test_panel_values_across_the_range(data, field):
    values = data.draw(magnitude_arrays((2, 4)))
    if field == "grad_norm_q":
        values = np.abs(values)  # norms
    got = outcome(lambda: training.panel_values(values, field), ["values", "field"])
    if got is None:
        return
    floor = training.GRAD_FLOOR if field == "grad_norm_q" else -math.inf
    assert got.tolist() == [[max(v, floor) for v in row] for row in values.tolist()]

# -- every public array function of the math layer is swept above, or exempt for a stated reason --

EXEMPT = {  # takes arrays, but no magnitude-carrying numbers to sweep
    "training.adam_step": "Adam's update of the trainer's weights: checked against a two-step update by hand "
                          "and a loop over models (tests/test_training.py)",
    "training.compute_adam_grid": "computes the stored Adam grid (tests/test_training_grid.py)",
    "training.write_adam_grid": "writes the stored Adam grid (tests/test_training_grid.py)",
    "sampling.chi_norms": "degrees of freedom are integers (d_k)",
    "training.check_weights": "a shape and finiteness check (tests/test_training.py)",
    "training.check_batch": "a shape check of integer codes (tests/test_training.py)",
    "training.check_arm": "an arm name or tuple of exponents",
    "training.as_tuple": "turns a scalar or sequence of settings into a tuple",
    "training.logit_gradients": "internal to train_runs: weights of order 1, a diverged run is marked",
    "training.best_learning_rate": "a grid of learning rates and their losses (nats)",
    "training.survival_curve": "steps (integers) to reach an accuracy",
    "training.survival_summary": "steps (integers) to reach an accuracy",
    "assumptions.sample_weights": "size is a shape",
    "assumptions.sample_projected_logits": "X are tokens drawn by sample_tokens (LayerNorm-ed or unit scale)",
    "attention.causal_mask": "sizes only",
    "models.format_table": "rows of model configurations",
    "overview.jacobian_norm_bands": "rows of Effects; quantiles in [0, 1]",
    "small_samples.exact_relative_sd": "ns are matrix sizes (integers)",
    "small_samples.iid_relative_sd": "ns are matrix sizes (integers)",
    "sampling.prefix_logits": "d_ks are integers",
    "saturation.saturation_curves": "d_ks are integers",
    "sampling.check_d_ks": "d_ks are integers",
    "sampling.check_d_k": "d_k is an integer",
    "sampling.curve_draws": "d_ks are integers",
    "saturation.measured_onset": "d_ks are integers; entropies are in nats, between 0 and ln n",
    "saturation.law_holds_up_to": "variances and entropies of the course's range (nats, between 0 and ln n)",
    "saturation.law_error": "variances and entropies of the course's range (nats, between 0 and ln n)",
    "saturation.law_check": "variances of the course's range; entropies measured by weight_stats (swept above)",
    "saturation.iid_entropy": "a Monte Carlo of weight_stats (swept above) at sigma2",
    "gradients.gradient_samples": "d_ks are integers",
    "gradients.gradient_curves": "d_ks are integers",
    "gradients.typical_query_seed": "d_ks are integers; seeds",
    "gradients.finite_difference_jacobian": "a numerical derivative: its step h is checked against z's spacing",
    "scaling.simulated_logit_stds": "d_ks are integers",
    "scaling.attention_by_d_k": "d_ks are integers",
    "scaling.band_polygon": "rearranges weights in [0, 1]: no arithmetic on them",
    "training.finite_difference_gradient": "a numerical derivative of a loss at weights of order 1",
    "training.train_runs": "grids of learning rates and arm names",
    "training.steps_to_accuracy": "accuracies in [0, 1]",
    "training.compute_grid": "grids of d_k, learning rates and arm names",
    "training.write_grid": "a path",
    "variance.write_wobble_counts": "a path",
    "overview.walk_end_variance": "the course's range, a ValueError beyond (test_overview)",
    "overview.query_gradient_norm": "the course's range and finite logits, a ValueError beyond (test_overview)",
    "overview.format_gradient_ratios": "formats ratios as text",
    "small_samples.matmul_fourth_cumulant": "entries are index pairs; d an integer",
    "variance.exact_mean": "exact fractions of integer outcomes: no rounding at any magnitude",
    "variance.exact_var": "exact fractions of integer outcomes: no rounding at any magnitude",
    "variance.exact_cov": "exact fractions of integer outcomes: no rounding at any magnitude",
    "variance.all_dot_products": "integer products of a few small values",
}


def _own_tests(module_name: str) -> ast.Module | None:
    """``tests/test_<module>.py`` parsed (a topic's own tests), or None."""
    path = Path(__file__).with_name(f"test_{module_name}.py")
    return ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else None


def _swept() -> set:
    """Every function of the math layer the tests of this file call, and those a topic's own test file
    (``tests/test_<module>.py``) calls in a test named ``test_..._sweep...`` (read from the sources: no
    list kept by hand), as function objects (a re-export counts for its home)."""
    tests = [n for n in ast.parse(Path(__file__).read_text(encoding="utf-8")).body
             if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    for module_name in MATH_MODULES:
        own = _own_tests(module_name)
        tests += [n for n in (own.body if own else []) if isinstance(n, ast.FunctionDef)
                  and n.name.startswith("test_") and "sweep" in n.name]
    names = {(node.value.id, node.attr) for test in tests
             for node in ast.walk(test)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in MATH_MODULES}
    return {getattr(importlib.import_module(f"sdpa_helpers.{m}"), f, None) for m, f in names}


def _exempt() -> dict:
    """:data:`EXEMPT`, and each topic's own ``SWEEP_EXEMPT = {"function": "reason"}`` in tests/test_<module>.py
    (a new notebook's topic states its exemptions in its own test file)."""
    found = dict(EXEMPT)
    for module_name in MATH_MODULES:
        own = _own_tests(module_name)
        for node in own.body if own else []:
            if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SWEEP_EXEMPT"]):
                found.update({f"{module_name}.{k}": v for k, v in ast.literal_eval(node.value).items()})
    return found


def test_every_array_function_of_the_math_layer_is_swept():
    swept, exempt = _swept(), _exempt()
    missing = []
    for module_name in MATH_MODULES:
        if module_name.startswith("_"):
            continue
        module = importlib.import_module(f"sdpa_helpers.{module_name}")
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or not fn.__module__.startswith(module.__name__):
                continue
            params = inspect.signature(fn).parameters.values()
            takes_arrays = any("ArrayLike" in str(p.annotation) or (p.annotation is inspect.Parameter.empty
                               and p.name not in ("rng", "scale", "dist", "seed", "seeds", "axis"))
                               for p in params)
            key = f"{module_name}.{name}"
            if takes_arrays and fn not in swept and key not in exempt:
                missing.append(key)
    assert not missing, (f"public math functions that take arrays but have no sweep: {missing}; sweep each here or in "
                         f"a test_..._sweep... of tests/test_<module>.py, or state why not in that file's SWEEP_EXEMPT")
