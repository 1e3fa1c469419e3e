# %% [markdown]
# # 05 — Softmax saturation
#
# Unscaled logits $q\cdot k$ spread like $\sqrt{d_k}$ (notebook 02). What does that do to the softmax, and *when*?
#
# **Learning goals**
# - See that only the *gaps* between logits matter.
# - Measure saturation (largest weight, entropy $H$, effective keys $e^{H}$) against $d_k$, unscaled vs scaled.
# - Test the law $H \approx \ln n - \sigma^2/2$; measure where saturation sets in.
# - Read $1/\sqrt{d_k}$ as an inverse temperature.
#
# **Prerequisites**
# - Notebooks 00, 02 and 04: the softmax and entropy, $\mathrm{Var}(q\cdot k) = d_k$, $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$.
# - The exponential and the natural logarithm.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import gradients, make_rng, saturation
from sdpa_helpers.attention import softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import saturation as saturation_plots
from sdpa_helpers.scales import D_K_CHOICES
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.saturation import SaturationExplorer, TemperatureExplorer

SEED = 5
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} | ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The softmax depends only on gaps
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{n} e^{z_j}} .$$
#
# Every weight is positive and they sum to 1. Two examples:

# %%
for z in ([4.0, 5.0], [1.0, 10.0]):
    print(f"softmax({z}) = " + " / ".join(f"{100 * w:.2f}%" for w in softmax(z)))
verify("softmax([4, 5])[1] = 73.11 % and softmax([1, 10])[0] = 0.01 % (to 0.005 %)", abs(100 * softmax([4.0, 5.0])[1] - 73.11) < 0.005 and abs(100 * softmax([1.0, 10.0])[0] - 0.01) < 0.005)

# %% [markdown]
# The ratio of two weights is $p_i/p_j = e^{z_i - z_j}$: only the **gap** matters. A gap of 9 gives
# odds $e^9 \approx 8103$ to 1. Adding the same number to every logit changes nothing — so the softmax is
# computed safely by subtracting the largest logit first (exercise 5).

# %%
verify_close("odds p2/p1 for [1, 10] equal e^9", softmax([1.0, 10.0])[1] / softmax([1.0, 10.0])[0], np.exp(9), rtol=1e-12)
verify("adding 100 to every logit changes no weight", np.allclose(softmax([101.0, 110.0]), softmax([1.0, 10.0])))

# %% [markdown]
# ## 2. Multiplying the logits makes the softmax peaky
#
# Multiply every logit by $c$ and every gap is multiplied by $c$ (notebook 00 did this with its toy lookup, ×1 and ×8).
# Five logits from Andrej Karpathy's lecture ["Let's build GPT: from scratch, in code, spelled out."](https://www.youtube.com/watch?v=kCc8FmEb1nY)
# (YouTube, 2023), times 1, 8 and 64: the largest, 0.5, beats the runner-up, 0.3, by 0.2.
#
# **Predict:** times 64, how much weight is left for the four smaller logits together: about 10 %, 1 %, or below 0.01 %?

# %%
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
for c in (1, 8, 64):
    print(f"softmax({c:2d} z) =", np.array2string(softmax(c * z5), precision=4, floatmode="fixed", suppress_small=True))
verify(f"times 64 the four smaller logits keep {1 - softmax(64 * z5).max():.1e} together: below 0.01 %", 1 - softmax(64 * z5).max() < 1e-4)

# %% [markdown]
# **What happened:** about 3 in a million: the gap 0.2 became 12.8. As $c$ grows the softmax tends to
# **one-hot**; as $c \to 0$ to **uniform**.
#
# The link with $d_k$: unscaled logits $q\cdot k_j$ have variance $d_k$ (notebook 02) — logits of size
# about 1 **multiplied by $\sqrt{d_k}$**: 8 at $d_k = 64$, 64 at $d_k = 4096$.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how we simulate, and the standard error of a variance
#
# For a fixed query, $q\cdot k_j = \|q\|\,a_j$ with $a_j = u\cdot k_j$ and $u = q/\|q\|$. Whatever
# the unit vector $u$ is, $u\cdot k_j = \sum_i u_i k_{ji}$ is a sum of independent normals: normal,
# mean 0, variance $\sum_i u_i^2 = 1$ (a rotation of a standard normal vector is standard normal).
# So the $a_j$ are independent $N(0,1)$, independent of $q$, and $\|q\|^2$, a sum of $d_k$ squared
# standard normals, is $\chi^2_{d_k}$. `saturation.query_logits` draws $\|q\|$ and the $a_j$
# directly: the same cost at any $d_k$, and exactly the law of the full vectors.
#
# **Standard error of a sample variance.** For $N$ independent draws, $s^2$ has standard error
# $\sqrt{(m_4 - s^4)/N}$, with $m_4$ the fourth moment about the mean (for normal draws,
# $m_4 = 3\sigma^4$ and this is $\sigma^2\sqrt{2/N}$). The check below accepts $|s^2 - 64| < 4\,\mathrm{SE}$ for $\mathrm{Var}(q\cdot k)$ at $d_k = 64$.
#
# %% tags=["deep-dive"]
dots = saturation.query_logits(64, n_keys=1, n_queries=100_000, scale="unscaled", rng=rng).ravel()  # q·k
se_var = np.sqrt((np.mean((dots - dots.mean()) ** 4) - dots.var() ** 2) / dots.size)  # SE of a sample variance
verify_close("Var(q·k) at d_k = 64", dots.var(), 64, se=se_var)

# %% [markdown] tags=["deep-dive"]
# Check the shortcut against full vectors: the average largest weight of one query against 8 keys
# at $d_k = 16$, both ways (independent samples: the SE of the difference is $\sqrt{SE_1^2 + SE_2^2}$).

# %% tags=["deep-dive"]
from sdpa_helpers.sampling import sample_components

n_q, n_keys, d_k = 4000, 8, 16
Q = sample_components((n_q, d_k), rng=rng)  # (n_q, d_k)
K = sample_components((n_q, n_keys, d_k), rng=rng)  # each query gets its own 8 keys
direct = saturation.mc_estimate(saturation.weight_stats(np.einsum("qd,qkd->qk", Q, K)).max_weight)
short = saturation.mc_estimate(saturation.weight_stats(
    saturation.query_logits(d_k, n_keys, n_q, scale="unscaled", rng=rng)).max_weight)
print(f"largest weight, full vectors {direct.mean:.4f} ± {direct.se:.4f}; shortcut {short.mean:.4f} ± {short.se:.4f}")
verify_close("shortcut minus full vectors", short.mean - direct.mean, 0.0, se=np.hypot(direct.se, short.se))

# %% [markdown]
# ## 3. One query, growing $d_k$
#
# One query against 16 keys, the same vectors cut to their first $d_k$ components, for
# $d_k$ = 1, 16, 256 and 4096. Top: unscaled, $\mathrm{softmax}(q\cdot k_j)$. Bottom: scaled,
# $\mathrm{softmax}(q\cdot k_j/\sqrt{d_k})$.
#
# **Predict:** with 16 keys, at which of these four $d_k$ will the unscaled top key first hold more than 90 % of the weight?

# %%
shown = (1, 16, 256, 4096)
z_by_d = saturation.prefix_logits(shown, 16, rng=rng)  # (4, 16): unscaled logits at each d_k
bars = {d: (softmax(z), softmax(z / np.sqrt(d))) for d, z in zip(shown, z_by_d)}
print("largest weight, unscaled / scaled:", ", ".join(f"d_k = {d}: {u.max():.2f} / {s.max():.2f}" for d, (u, s) in bars.items()))
saturation_plots.saturation_small_multiples(bars)

# %% [markdown]
# **What happened:** for this query the unscaled top key holds 70 % at $d_k = 16$ and passes 90 % at 256;
# by 4096 the softmax **saturates** to one-hot. The bottom row keeps several keys in play at
# every $d_k$. One query is one draw; section 4 averages.
#
# ## 4. Averaging over many queries
#
# Three numbers say how peaked a softmax is: the **largest weight**
# $p_{\max}$ ($1/n$ uniform, 1 one-hot), the **entropy** $H = -\sum_j p_j \ln p_j$ ($\ln n$ to 0),
# and the **effective number of keys** $e^{H}$ ($n$ to 1: a softmax spread evenly over $m$ keys has
# $e^H = m$). We average them over 4000 random queries with 16 keys each, for $d_k$ = 1 … 4096.

# %%
n_keys, n_queries = 16, 4000
u_curves, s_curves = (saturation.saturation_curves(D_K_CHOICES, n_keys, n_queries, scale=s, rng=SEED) for s in ("unscaled", "sqrt"))
print("mean p_max, unscaled / scaled: " + ", ".join(f"d_k = {D_K_CHOICES[i]}: {u_curves.max_weight.mean[i]:.3f} / {s_curves.max_weight.mean[i]:.3f}" for i in (0, 4, 8, 12)))
verify("unscaled p_max rises at every step of d_k; scaled moves < 1/10 as much", np.all(np.diff(u_curves.max_weight.mean) > 0) and np.ptp(s_curves.max_weight.mean) < np.ptp(u_curves.max_weight.mean) / 10)

# %% [markdown]
# Unscaled, the top key takes on average about 98% at $d_k = 4096$. Scaled, the logits have
# variance 1 at every $d_k$ (notebook 04) and the curves barely move.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why the scaled curves are not perfectly flat
#
# For one query the scaled logits are $(\|q\|/\sqrt{d_k})\,a_j$, and $\|q\|^2/d_k$ has mean 1 but
# standard deviation $\sqrt{2/d_k}$. At $d_k = 1$ some queries are short (a flatter softmax) and some
# long; by $d_k = 64$ the lengths vary so little (sd 0.18) that, at this Monte Carlo precision, the
# logits behave like i.i.d. $N(0,1)$ draws. Compare with softmaxes of i.i.d. $N(0,1)$ logits (an independent sample),
# in standard errors of the difference, and check $\mathrm{Var}(q\cdot k/\sqrt{d_k}) = 1$ at every $d_k$:

# %% tags=["deep-dive"]
fields = ("max_weight", "entropy", "effective_keys")
limit = saturation.weight_stats(make_rng(SEED + 1).standard_normal((n_queries, n_keys)))
limit_est = {f: saturation.mc_estimate(getattr(limit, f)) for f in fields}
for d in (1, 4, 16, 64, 256, 4096):
    i = D_K_CHOICES.index(d)
    zs = [(getattr(s_curves, f).mean[i] - limit_est[f].mean) / np.hypot(getattr(s_curves, f).se[i], limit_est[f].se)
          for f in fields]
    print(f"d_k = {d:4d}: sd of ||q||²/d_k = {np.sqrt(2 / d):.3f}; scaled minus i.i.d., in SEs: "
          + ", ".join(f"{z:+.1f}" for z in zs))
    if d >= 64:
        verify(f"d_k = {d}: scaled curves match i.i.d. N(0,1) logits within 4 SE", max(map(abs, zs)) < 4)
for d in D_K_CHOICES:
    x = saturation.query_logits(d, n_keys=1, n_queries=100_000, rng=rng).ravel()  # scaled
    assert abs(x.var() - 1) < 4 * np.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / x.size), d
print("✔ Var(q·k/√d_k) = 1 within 4 SE at every d_k in", D_K_CHOICES)

# %% [markdown]
# ## 5. When does the softmax saturate? A law, and where it holds
#
# Take $n$ logits drawn i.i.d. $N(0, \sigma^2)$, $Z = \sum_j e^{z_j}$. Replacing the random sums in
# $H = \ln Z - \sum_j p_j z_j$ by their means (deep dive below) gives the law
#
# $$H \approx \ln n - \frac{\sigma^2}{2}, \qquad e^{H} \approx n\,e^{-\sigma^2/2}.$$
#
# Replacing sums by means needs $n$ large. Below, the law against Monte Carlo (5 seeds per point: median,
# range as a band) for $n = 16$ and 1024 keys; last, $\sigma^2 = \ln n$.
#
# **Predict:** at $\sigma^2 = \ln n$ (2.77 for 16 keys, 6.93 for 1024), will the law be too high, too low, or about right?

# %%
sigma2, counts = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0]), (16, 1024)
h_mc = {n: saturation.iid_entropy(n, np.append(sigma2, np.log(n)), n_rows=400_000 // n, seeds=range(5)) for n in counts}
med, holds = {n: np.median(h, 0) for n, h in h_mc.items()}, {}
for n in counts:
    off, holds[n] = saturation.entropy_closed_form(n, np.append(sigma2, np.log(n))) / med[n] - 1, saturation.law_holds_up_to(sigma2, med[n][:-1], n)
    print(f"n = {n}, law vs measured: " + ", ".join(f"σ² {v:.3g}: {np.round(o, 3) + 0.0:+.1%}" for v, o in zip(np.append(sigma2, np.log(n)), off)) + f" (H = {med[n][-1]:.2f} there); within 5 % at least up to σ² = {holds[n]:g} (grid)")
verify("law within 5 % at least up to sigma² = 1 (16 keys) and 4 (1024 keys); > 10 % too low at ln n", list(holds.values()) == [1.0, 4.0] and all(np.log(n) / 2 < 0.9 * med[n][-1] for n in counts))
saturation_plots.law_check_figure(sigma2, [h[:, :-1] for h in h_mc.values()], counts)

# %% [markdown]
# **What happened:** too low — by 26 % for 16 keys and 13 % for 1024. The law is within 5 % at least up to
# $\sigma^2 = 1$ for 16 keys (next grid point 1.5) and 4 for 1024 (next 6); beyond, it falls to 0 at $\sigma^2 = 2\ln n$,
# the measured entropy far more slowly. The law needs $Z$ near its mean: its relative spread
# $\sqrt{(e^{\sigma^2} - 1)/n}$ (deep dive below) must be small.
#
# Where does saturation set in? Call the **onset** the $d_k$ where the mean entropy of one query's unscaled
# softmax first falls **1 nat below $\ln n$**: $e^H$ down from $n$ to $n/e$ — 1.47 of 4 keys, but 377 of 1024.
# The unscaled logits have variance $\|q\|^2$, on average $d_k$, so the law puts the onset at $\sigma^2 = 2$,
# $d_k \approx 2$, for every $n$. Measured on integer $d_k$ (interpolated), 5 seeds per $n$:

# %%
grids = {n: np.arange(1, 33 if n < 16 else 9) for n in (4, 8, 16, 64, 256, 1024)}  # few keys saturate late
onsets = {n: [saturation.measured_onset(d, saturation.saturation_curves(d, n, max(1000, 80_000 // n), scale="unscaled", rng=s).entropy.mean, n) for s in range(5)] for n, d in grids.items()}
print("onset d_k, median (range over 5 seeds): " + "; ".join(f"n = {n}: {np.median(o):.2f} ({min(o):.2f}–{max(o):.2f})" for n, o in onsets.items()))
verify("onset > 15 for 4 keys, > 5 for 8; between 2 and 4.5 for n >= 16; within 15 % of the law's 2 for 1024 keys", min(onsets[4]) > 15 and min(onsets[8]) > 5 and all(2 < np.median(onsets[n]) < 4.5 for n in (16, 64, 256, 1024)) and abs(np.median(onsets[1024]) / 2 - 1) < 0.15)

# %% [markdown]
# Where the law holds, many keys, it predicts the onset: about 2.2 for 1024 keys. For few keys it misses:
# the onset is 4.0 for 16 keys, 6.2 for 8 and about 21 for 4 (2 keys never lose 1 nat: $\ln 2 < 1$), where
# the 1-nat drop already means strong saturation. From 16 keys up, the onset sits at a few units of $d_k$;
# real heads, with $d_k = 64$ or 128, are far past it.
#
# Past the onset is not one-hot: saturation is a slide. The weight left to the other keys shrinks like
# $e^{-\text{gap}}$, and the gap between the two largest logits grows like $\sqrt{d_k}$. Section 4's 16 keys, 10 seeds:

# %%
for d in (64, 4096):
    p_u, p_s = ([softmax(saturation.query_logits(d, n_keys, n_queries, scale=sc, rng=s)) for s in range(10)] for sc in ("unscaled", "sqrt"))
    left, j_ratio = [np.median(gradients.one_minus_max(p)) for p in p_u], [np.median(gradients.jacobian_frobenius(b)) / np.median(gradients.jacobian_frobenius(a)) for a, b in zip(p_u, p_s)]
    print(f"d_k = {d}, unscaled: mean H = {u_curves.entropy.mean[D_K_CHOICES.index(d)]:.2f} nats (onset level {np.log(16) - 1:.2f}); over 10 seeds the median query leaves " + (f"{np.median(left):.1%} ({min(left):.1%}–{max(left):.1%}) to the other 15 keys, median ||J||_F {np.median(j_ratio):.1f}× below scaled" if d == 64 else "below 1e-9 in every seed"))
verify("d_k = 4096: the median query leaves below 1e-9 in each of 10 seeds", max(left) < 1e-9)
saturation_plots.saturation_curves_figure(u_curves, s_curves, n_keys, onset=float(np.median(onsets[n_keys])), entropy_law=(np.geomspace(1, 4096, 200), saturation.entropy_closed_form(n_keys, np.geomspace(1, 4096, 200))))

# %% [markdown]
# At $d_k = 64$ the typical query is far past the onset yet still leaves about 7 % to the other keys, its
# $\|J\|_F$ about 3× below scaled (as notebook 00 observed); at 4096, next to nothing. Dash-dotted: the measured
# onset for 16 keys; thin black: the law $\ln n - d_k/2$, which soon leaves the measured entropy.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: where the law comes from, why it needs $e^{\sigma^2} \ll n$, and what happens beyond
#
# Since $\ln p_j = z_j - \ln Z$, the entropy is $H = -\sum_j p_j(z_j - \ln Z) = \ln Z - \sum_j p_j z_j$.
# For a normal $z$ with variance $\sigma^2$,
#
# $$E\,e^{z} = \int e^{x}\,\frac{e^{-x^2/2\sigma^2}}{\sqrt{2\pi}\,\sigma}\,dx = e^{\sigma^2/2},
# \qquad\text{because}\quad x - \frac{x^2}{2\sigma^2} = \frac{\sigma^2}{2} - \frac{(x - \sigma^2)^2}{2\sigma^2}$$
#
# (complete the square): the integrand is $e^{\sigma^2/2}$ times a normal density centred at $\sigma^2$,
# which integrates to 1. The same square gives $E[z\,e^{z}] = \sigma^2 e^{\sigma^2/2}$ (the mean of that
# shifted normal is $\sigma^2$; also Stein's lemma, $E[z f(z)] = \sigma^2 E f'(z)$). By the law of large numbers
# $Z/n \to e^{\sigma^2/2}$ and $\frac1n\sum_j z_j e^{z_j} \to \sigma^2 e^{\sigma^2/2}$, so $\ln Z \approx \ln n + \sigma^2/2$,
# $\sum_j p_j z_j = \sum_j z_j e^{z_j}/Z \approx \sigma^2$, and $H \approx \ln n - \sigma^2/2$.
# Replacing $Z$ by its mean is good when its relative spread is small:
#
# $$\frac{\mathrm{Var}(Z)}{(E Z)^2} = \frac{n\,(e^{2\sigma^2} - e^{\sigma^2})}{n^2 e^{\sigma^2}} = \frac{e^{\sigma^2} - 1}{n},$$
#
# small only when $e^{\sigma^2} \ll n$, i.e. $\sigma^2$ well below $\ln n$. At $\sigma^2 = \ln n$ it is
# about 1: $Z$ is as uncertain as it is large, and the law is off by 13–26 %, as measured above.
# Beyond, $Z$ is carried by its few largest terms, and the maximum of $n$ normals sits near
# $\sigma\sqrt{2\ln n}$. (This is Derrida's *random energy model* of statistical physics,
# [Phys. Rev. B 24, 2613 (1981)](https://doi.org/10.1103/PhysRevB.24.2613): with $\sigma^2 = t\ln n$,
# $H/\ln n \to 1 - t/2$ as $n \to \infty$ for $0 \le t \le 2$, and $\to 0$ beyond. So as $n \to \infty$
# the law holds up to $\sigma^2 = 2\ln n$ to leading order in $\ln n$ only; at $n = 1024$ its error in
# nats is already large at $t \approx 1$.) A finer check of the two moments by quadrature lives in
# `tests/test_saturation.py`. First the step $E\,e^z = e^{\sigma^2/2}$ by Monte Carlo at $\sigma^2 = 1$, then
# the relative spread of $Z$ at the grid's variances, for both $n$:

# %% tags=["deep-dive"]
ez = saturation.mc_estimate(np.exp(make_rng(SEED + 2).standard_normal(1_000_000)))  # z ~ N(0, 1)
verify_close(f"mean of e^z over 10⁶ draws against e^(1/2) = {np.exp(0.5):.4f}", ez.mean, np.exp(0.5), se=ez.se)
for n in counts:
    print(f"n = {n:4d}: relative spread of Z at σ² = " + ", ".join(f"{v:g}: {np.sqrt(np.expm1(v) / n):.2f}" for v in sigma2))
verify_close("relative spread of Z at sigma² = ln n", np.sqrt(np.expm1(np.log(1024)) / 1024), 1.0, rtol=1e-3)

# %% [markdown]
# ## 6. Explorer: drag $d_k$ and the number of keys
#
# Live: one query's weights (top), the average curves (bottom; a smaller Monte Carlo,
# powers of 2 only), the measured onset and the law. Compare $n = 4$ (onset about 23 on this coarse grid) with $n = 1024$ (about 2.5).

# %% tags=["nbval-ignore-output"]
explorer = SaturationExplorer(d_k=64)
explorer

# %% [markdown]
# ## 7. $1/\sqrt{d_k}$ is an inverse temperature
#
# A softmax with **temperature** $T > 0$ divides the logits by $T$ first:
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$. Small $T$ sharpens toward one-hot, large $T$
# flattens toward uniform. Scaled attention is the unscaled logits at temperature $\sqrt{d_k}$ — a
# temperature that grows exactly as fast as the logits spread, so the two cancel:

# %%
verify("softmax(q·k / √d_k) = softmax(q·k, T = √d_k) at d_k = 4096 (section 3's query)", np.allclose(softmax(z_by_d[-1] / 64), softmax(z_by_d[-1], temperature=64.0)))
temps, curve_t = [1 / 8, 1, 8], 2.0 ** np.linspace(-6, 6, 49)
saturation_plots.temperature_small_multiples(temps, saturation.temperature_curves(z5, temps)[0], curve_t, saturation.temperature_curves(z5, curve_t)[1])

# %% [markdown]
# Karpathy's ×8 is $T = 1/8$. Above: his logits at $T = 1/8$, 1 and 8; the largest weight and $e^H$ against $T$:

# %% tags=["nbval-ignore-output"]
temperature_explorer = TemperatureExplorer()
temperature_explorer

# %% [markdown]
# ## Summary
#
# - Only gaps between logits matter. Unscaled logits are multiplied by about $\sqrt{d_k}$, so the softmax
#   **saturates** (16 keys, $d_k = 4096$: the top key takes about 98% on average).
# - For $n$ i.i.d. $N(0,\sigma^2)$ logits, $H \approx \ln n - \sigma^2/2$: within 5 % at least up to
#   $\sigma^2 = 1$ (16 keys) and 4 (1024 keys); 26 % and 13 % too low at $\sigma^2 = \ln n$.
# - The onset (mean entropy 1 nat below $\ln n$) is $d_k \approx 21$ for 4 keys, 4 for 16, 2.2 for 1024:
#   the law's 2 holds for many keys only. At $d_k = 64$ the typical query still leaves about 7 % to the
#   other keys; at 4096, next to nothing.
# - Scaling by $1/\sqrt{d_k}$, an inverse temperature, keeps the logits' variance at 1 (at initialisation).
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`. Numeric answers are accepted to three
# significant figures (within 0.5%).
#
# **Exercise 1.** Two keys have unscaled logits $q\cdot k = [8, 0]$ and $d_k = 16$. What weight
# does *scaled* attention give the first key? (three significant figures)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.scaled_weight", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The scaled logits are $[8, 0]/\sqrt{16} = [2, 0]$, so the first weight is
# $1/(1 + e^{-2}) \approx 0.881$. Unscaled it would be $1/(1 + e^{-8}) \approx 0.9997$.
# </details>
#
# **Exercise 2.** For $d_k = 100$, which temperature $T$ makes `softmax(q·k, temperature=T)`
# equal the scaled attention weights? (an integer)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.temperature", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$ and scaled attention uses $z/\sqrt{d_k}$, so $T = 10$.
# </details>
#
# **Exercise 3.** 1024 keys get i.i.d. $N(0, \sigma^2)$ logits with $\sigma^2 = 2$, inside the range where
# section 5 measured the law within 5 %. What effective number of keys $e^H$ does the law give?
# (three significant figures)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.effective_keys_law", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $H \approx \ln 1024 - 2/2 = 5.93$ nats, so $e^H \approx 1024\,e^{-1} \approx 377$ keys: variance 2 costs
# one nat, a factor $e$ in effective keys. Section 5 measured the law 0.2 % off here, so it is trustworthy at
# this point; at $\sigma^2 = 8$ it would not be (20 % too low for 1024 keys).
# </details>
#
# **Exercise 4 (conceptual).** Going from 16 to 1024 keys, the measured onset of saturation (section 5)
# (a) grows like $\ln n$, by 2.5×; (b) stays at a few units of $d_k$; (c) grows like $n$, by 64×.
# Answer with a letter, then explain from $H \approx \ln n - \sigma^2/2$ why the law's onset is the same for every $n$.

# %%
answer = None  # replace None with a letter, e.g. "a"
_ = check("05.onset_moves", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (b): the measured onsets are about 4 (16 keys) and 2.2 (1024 keys). In the law the drop below $\ln n$ is
# $\sigma^2/2$, which does not involve $n$: 1 nat at $\sigma^2 = 2$, $d_k \approx 2$, for every $n$. That is
# right where the law holds at $\sigma^2 = 2$ (many keys) and wrong for few keys (4 keys: about 21).
# More keys do not protect an unscaled softmax.
# </details>
#
# **Exercise 5.** Write `stable_softmax(x)`: the softmax over the last axis of a numpy array,
# which works for logits like `1e6`, `[1000, 1000]`, `[-1000, -1000]` and `-inf` (weight 0).

# %%
def stable_softmax(x):
    ...  # your code here: return the weights, same shape as x


_ = check("05.stable_softmax", stable_softmax)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def stable_softmax(x):
#     x = np.asarray(x, dtype=float)
#     e = np.exp(x - x.max(axis=-1, keepdims=True))  # every exponent <= 0: no overflow
#     return e / e.sum(axis=-1, keepdims=True)       # the largest term is e^0 = 1: no 0/0
# ```
#
# Subtracting the row's maximum changes no weight (only gaps matter) but keeps every exponent
# $\le 0$, and the largest term is exactly 1, so the sum is never 0. `exp(-inf) = 0` gives a
# masked logit weight 0. `keepdims=True` makes it work row by row.
# </details>
#
# ---
# **Next:** [06 — Vanishing gradients](06_vanishing_gradients.ipynb)
