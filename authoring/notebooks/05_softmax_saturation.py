# %% [markdown]
# # 05 — Softmax saturation
#
# Notebook 02 showed that the unscaled logits $q\cdot k$ spread like $\sqrt{d_k}$. Here we see
# what that does to the softmax: as $d_k$ grows, unscaled attention piles its weight onto one
# key, while scaled attention keeps it spread. And we find *when* it tips over.
#
# **Learning goals**
# - Compute the softmax and see that only the *differences* between logits matter.
# - See that multiplying the logits makes the softmax peaky, and that unscaled logits are multiplied by about $\sqrt{d_k}$.
# - Measure saturation (largest weight, entropy $H$, effective keys $e^{H}$) across $d_k$, unscaled vs scaled.
# - Predict the onset of saturation from a closed form, $H \approx \ln n - \sigma^2/2$, and read $1/\sqrt{d_k}$ as an inverse temperature.
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
from sdpa_helpers import make_rng, saturation
from sdpa_helpers.attention import softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import saturation as saturation_plots
from sdpa_helpers.saturation import D_K_GRID
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.saturation import SaturationExplorer, TemperatureExplorer

SEED = 5
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The softmax depends only on gaps
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{n} e^{z_j}} .$$
#
# Every weight is positive and they sum to 1. Two examples from the handwritten notes this course
# builds on:

# %%
for z in ([4.0, 5.0], [1.0, 10.0]):
    print(f"softmax({z}) = " + " / ".join(f"{100 * w:.2f}%" for w in softmax(z)))
verify_close("softmax([4, 5])[1] in %", 100 * softmax([4.0, 5.0])[1], 73.11, atol=0.005)
verify_close("softmax([1, 10])[0] in %", 100 * softmax([1.0, 10.0])[0], 0.01, atol=0.005)

# %% [markdown]
# Why is the second pair so lopsided? The ratio of two weights is $p_i/p_j = e^{z_i - z_j}$: it
# depends only on the **gap**. A gap of 1 gives odds $e \approx 2.7$ to 1; a gap of 9 gives
# $e^9 \approx 8103$ to 1. Adding the same number to every logit changes nothing — which is also
# how the softmax is computed safely: subtract the largest logit first, so no $e^{z}$ overflows
# (exercise 4).

# %%
verify_close("odds p2/p1 for [1, 10] equal e^9", softmax([1.0, 10.0])[1] / softmax([1.0, 10.0])[0], np.exp(9), rtol=1e-12)
verify("adding 100 to every logit changes no weight", np.allclose(softmax([101.0, 110.0]), softmax([1.0, 10.0])))

# %% [markdown]
# ## 2. Multiplying the logits makes the softmax peaky
#
# Multiply every logit by $c$ and every gap is multiplied by $c$. The example below is from Andrej
# Karpathy's lecture ["Let's build GPT: from scratch, in code, spelled out."](https://www.youtube.com/watch?v=kCc8FmEb1nY)
# (YouTube, 2023): five logits, then the same times 8.
#
# **Predict:** the five logits are within 0.7 of each other. Times 8, how much weight will the largest one get?

# %%
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
print("softmax(z)   =", np.array2string(softmax(z5), precision=4, floatmode="fixed"))
print("softmax(8 z) =", np.array2string(softmax(8 * z5), precision=4, floatmode="fixed"))
verify_close("largest weight of softmax(8 z)", softmax(8 * z5).max(), 0.8000, atol=5e-5)

# %% [markdown]
# A common guess is "a little more than the others"; it takes 80%. As $c$ grows the softmax tends to
# **one-hot** (all weight on the largest logit); as $c \to 0$ to **uniform** ($1/n$ each).
#
# Now the link with $d_k$: for one query and random keys, the unscaled logits $q\cdot k_j$ have
# variance $d_k$ (notebook 02) — logits of size about 1 **multiplied by $\sqrt{d_k}$**. At
# $d_k = 64$ that factor is the 8 above.

# %%
dots = saturation.query_logits(64, n_keys=1, n_queries=100_000, scale="unscaled", rng=rng).ravel()  # q·k
se_var = np.sqrt((np.mean((dots - dots.mean()) ** 4) - dots.var() ** 2) / dots.size)  # SE of a sample variance
verify_close("Var(q·k) at d_k = 64", dots.var(), 64, se=se_var)

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
# $m_4 = 3\sigma^4$ and this is $\sigma^2\sqrt{2/N}$). The check above accepts $|s^2 - 64| < 4\,\mathrm{SE}$.
#
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
# **Predict:** as $d_k$ goes from 1 to 4096, what happens to the top row? And to the bottom row?

# %%
shown = (1, 16, 256, 4096)
z_by_d = saturation.prefix_logits(shown, 16, rng=rng)  # (4, 16): unscaled logits at each d_k
bars = {d: (softmax(z), softmax(z / np.sqrt(d))) for d, z in zip(shown, z_by_d)}
saturation_plots.saturation_small_multiples(bars)

# %% [markdown]
# The top row goes from spread out to a single bar: the softmax **saturates** to one-hot. The
# bottom row keeps several keys in play at every $d_k$ (at $d_k = 1$ the rows agree: $\sqrt 1 = 1$).
#
# ## 4. Averaging over many queries
#
# One query could be a fluke. Three numbers say how peaked a softmax is: the **largest weight**
# $p_{\max}$ ($1/n$ uniform, 1 one-hot), the **entropy** $H = -\sum_j p_j \ln p_j$ ($\ln n$ to 0),
# and the **effective number of keys** $e^{H}$ ($n$ to 1: a softmax spread evenly over $m$ keys has
# $e^H = m$). We average them over 4000 random queries with 16 keys each, for $d_k$ = 1 … 4096.

# %%
n_keys, n_queries = 16, 4000
u_curves, s_curves = (saturation.saturation_curves(D_K_GRID, n_keys, n_queries, scale=s, rng=SEED)
                      for s in ("unscaled", "sqrt"))
for i in (0, 4, 8, 12):  # d_k = 1, 16, 256, 4096
    print(f"d_k = {D_K_GRID[i]:4d}: p_max {u_curves.max_weight.mean[i]:.3f} unscaled, {s_curves.max_weight.mean[i]:.3f} scaled")
verify("unscaled: p_max rises at every step of d_k", np.all(np.diff(u_curves.max_weight.mean) > 0))
verify("scaled p_max moves < 1/10 as much", np.ptp(s_curves.max_weight.mean) < np.ptp(u_curves.max_weight.mean) / 10)

# %% [markdown]
# Unscaled, every measure slides toward one-hot: at $d_k = 4096$ the top key takes on average
# about 98% of the weight. Scaled, the logits $q\cdot k/\sqrt{d_k}$ have variance 1 at every
# $d_k$ (notebook 04) and the curves barely move.

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
    i = D_K_GRID.index(d)
    zs = [(getattr(s_curves, f).mean[i] - limit_est[f].mean) / np.hypot(getattr(s_curves, f).se[i], limit_est[f].se)
          for f in fields]
    print(f"d_k = {d:4d}: sd of ||q||²/d_k = {np.sqrt(2 / d):.3f}; scaled minus i.i.d., in SEs: "
          + ", ".join(f"{z:+.1f}" for z in zs))
    if d >= 64:
        verify(f"d_k = {d}: scaled curves match i.i.d. N(0,1) logits within 4 SE", max(map(abs, zs)) < 4)
for d in D_K_GRID:
    x = saturation.query_logits(d, n_keys=1, n_queries=100_000, rng=rng).ravel()  # scaled
    assert abs(x.var() - 1) < 4 * np.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / x.size), d
print("✔ Var(q·k/√d_k) = 1 within 4 SE at every d_k in", D_K_GRID)

# %% [markdown]
# ## 5. When does the softmax saturate? A closed form
#
# Take $n$ logits drawn i.i.d. $N(0, \sigma^2)$. Write $H = \ln Z - \sum_j p_j z_j$ with
# $Z = \sum_j e^{z_j}$. For large $n$ each sum is close to $n$ times its mean, and for a normal
# $z$, $E\,e^{z} = e^{\sigma^2/2}$ and $E[z\,e^{z}] = \sigma^2 e^{\sigma^2/2}$. So
#
# $$H \approx \ln n - \frac{\sigma^2}{2}, \qquad e^{H} \approx n\,e^{-\sigma^2/2}.$$
#
# While the law holds, each unit of variance costs half a nat, whatever $n$ is. Check against Monte Carlo at $n = 1024$,
# over 5 seeds of 1000 softmaxes each (median and range over seeds).
#
# **Predict:** at $\sigma^2 = 2\ln n$ the law gives $H = 0$, a one-hot softmax. Will the measured entropy be near 0?

# %%
n, sigma2 = 1024, np.array([1.0, 4.0, 9.0, 2 * np.log(1024)])
h_mc = saturation.iid_entropy(n, sigma2, n_rows=1000, seeds=range(5))  # (5 seeds, 4 variances)
law = saturation.entropy_closed_form(n, sigma2)
for s2, h, lo, hi, l in zip(sigma2, np.median(h_mc, 0), h_mc.min(0), h_mc.max(0), law):
    print(f"σ² = {s2:5.2f}: H median {h:.4f} (range {lo:.4f}–{hi:.4f}), law {l:.4f}, law off by {(l - h) / h:+.2%}")
verify("at σ² = 1 the law is within 0.1% on every seed", np.all(np.abs(law[0] - h_mc[:, 0]) < 1e-3 * h_mc[:, 0]))
verify("at σ² = 2 ln n the law says 0 but H > 2 nats on every seed", np.all(h_mc[:, 3] > 2))

# %% [markdown]
# The law is excellent for small $\sigma^2$, 2% off at $\sigma^2 = 4$, and wrong beyond: at
# $\sigma^2 = 2\ln n$ it says $H = 0$, but $H$ is above 2 nats: far from one-hot. Its derivation assumes $Z$ near its mean: about
# $\sigma^2 \lesssim \ln n$. Beyond, a few of the largest logits (the largest near $\sigma\sqrt{2\ln n}$) carry the sums.
#
# We *choose* to call $\sigma^2 = \ln n$ the **onset of saturation**: there the law leaves half the entropy
# and $e^H = \sqrt{n}$ keys. It is a convention, not a sharp threshold: the curves slide gradually.
# At initialisation, with independent unit-variance components, one query's unscaled logits are
# i.i.d. $N(0, \|q\|^2)$ given $q$, and $\|q\|^2 \approx d_k$; so they
# begin to saturate near $d_k \approx \ln n$: **the onset grows with the number of keys, but only
# like its logarithm**. Scaled logits have $\sigma^2 = \|q\|^2/d_k \approx 1$, below it for any $n \ge 3$.

# %%
print("predicted onset d_k ≈ ln n for n = 16, 1024, 65536 keys:", saturation.saturation_onset([16, 1024, 65536]).round(2))
d = np.geomspace(1, 4096, 200)
saturation_plots.saturation_curves_figure(u_curves, s_curves, n_keys, onset=float(saturation.saturation_onset(n_keys)),
                                   entropy_law=(d, saturation.entropy_closed_form(n_keys, d)))

# %% [markdown]
# Dash-dotted: the predicted onset for 16 keys; the unscaled curves are falling fast there. Thin
# black: the law $\ln n - d_k/2$, rough for 16 keys (a large-$n$ law; $\|q\|^2$ varies between
# queries). Set $n = 1024$ in the explorer below: it fits better up to the onset.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: where the law comes from, and why it stops at about $\sigma^2 = \ln n$
#
# $\ln p_j = z_j - \ln Z$, so $H = -\sum_j p_j \ln p_j = \ln Z - \sum_j p_j z_j$. By the law of
# large numbers $Z/n \to E\,e^{z} = e^{\sigma^2/2}$ (complete the square in the normal integral) and
# $\frac1n\sum_j z_j e^{z_j} \to E[z e^z] = \sigma^2 e^{\sigma^2/2}$ (Stein's lemma, $E[z f(z)] = \sigma^2 E f'(z)$),
# so $\sum_j p_j z_j \to \sigma^2$ and $H \to \ln n + \sigma^2/2 - \sigma^2$. Replacing $Z$ by its mean
# is good when its relative spread is small:
#
# $$\frac{\mathrm{Var}(Z)}{(E Z)^2} = \frac{n\,(e^{2\sigma^2} - e^{\sigma^2})}{n^2 e^{\sigma^2}} = \frac{e^{\sigma^2} - 1}{n},$$
#
# which is small exactly when $e^{\sigma^2} \ll n$, i.e. when $\sigma^2$ is well below $\ln n$ (by a few units).
# That is sufficient, not necessary. Beyond it $Z$ is carried
# by its few largest terms, and the maximum of $n$ normals sits near $\sigma\sqrt{2\ln n}$. (This is
# Derrida's *random energy model* of statistical physics, [Phys. Rev. B 24, 2613 (1981)](https://doi.org/10.1103/PhysRevB.24.2613):
# with $n$ "energy levels" and $\sigma^2 = t\ln n$, its entropy obeys $H/\ln n \to 1 - t/2$ as $n \to \infty$
# for $0 \le t \le 2$, and $H/\ln n \to 0$ beyond, where the entropy "freezes". So the law holds up to
# $\sigma^2 = 2\ln n$ only to leading order in $\ln n$: for $1 < t < 2$ its error is small next to $\ln n$,
# which need not make it small in nats, and at $n = 1024$ it is not: the law is already 29% off at
# $\sigma^2 = 9 \approx 1.3\ln n$, as measured above.) A finer check of
# the two moments by quadrature lives in `tests/test_saturation.py`.
#
# The relative spread $\sqrt{(e^{\sigma^2} - 1)/n}$ of $Z$ at the four variances above, and at the onset:

# %% tags=["deep-dive"]
for s2 in list(sigma2) + [np.log(n)]:
    print(f"n = {n}, σ² = {s2:5.2f}: relative spread of Z = {np.sqrt(np.expm1(s2) / n):.3f}")
verify_close("relative spread of Z at the onset σ² = ln n", np.sqrt(np.expm1(np.log(n)) / n), 1.0, rtol=1e-3)

# %% [markdown]
# ## 6. Explorer: drag $d_k$ and the number of keys
#
# The figures above, live: one query's weights (top) and the average curves (bottom; a smaller
# Monte Carlo per key count), with the onset $d_k = \ln n$ and the law. Try $n = 4$ and
# $n = 1024$: how far does the onset move?

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
z = z_by_d[-1]  # section 3's query: unscaled logits at d_k = 4096
verify("softmax(q·k / √d_k) = softmax(q·k, T = √d_k) at d_k = 4096", np.allclose(softmax(z / 64), softmax(z, temperature=64.0)))
temps, curve_t = [1 / 8, 1, 8], 2.0 ** np.linspace(-6, 6, 49)
saturation_plots.temperature_small_multiples(temps, saturation.temperature_curves(z5, temps)[0],
                                      curve_t, saturation.temperature_curves(z5, curve_t)[1])

# %% [markdown]
# Karpathy's ×8 example is temperature $T = 1/8$. Above: its five logits at $T = 1/8$, 1 and 8,
# then the largest weight and $e^H$ against $T$. Drag the temperature:

# %% tags=["nbval-ignore-output"]
temperature_explorer = TemperatureExplorer()
temperature_explorer

# %% [markdown]
# ## Summary
#
# - Only gaps between logits matter: softmax([4, 5]) = 26.89% / 73.11%, softmax([1, 10]) = 0.01% / 99.99%.
# - Unscaled logits are multiplied by about $\sqrt{d_k}$, so the softmax **saturates** as $d_k$
#   grows (16 keys, $d_k = 4096$: the top key takes about 98% on average).
# - For $n$ i.i.d. $N(0,\sigma^2)$ logits, $H \approx \ln n - \sigma^2/2$ for $\sigma^2 \lesssim \ln n$;
#   at initialisation (independent unit-variance components) unscaled logits begin to saturate near
#   $d_k \approx \ln n$ (the onset as defined).
# - Scaling by $1/\sqrt{d_k}$, an inverse temperature, keeps the logits' variance at 1 for every $d_k$ (at initialisation).
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
# **Exercise 3 (conceptual).** At what $d_k$ do 16 keys begin to saturate, by the onset
# $\sigma^2 = \ln n$ of section 5 (unscaled logits, $\sigma^2 = d_k$)? (three significant figures) Then explain, without
# computing: for 1024 keys, is the onset at a smaller or a larger $d_k$, and by what factor?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.onset_16_keys", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The onset is $\sigma^2 = \ln n$, so $d_k \approx \ln 16 \approx 2.77$. For 1024 keys it is
# $\ln 1024 \approx 6.93$: larger, by $\ln 1024/\ln 16 = 10/4 = 2.5$. Many keys share the weight, so
# it takes a wider spread of logits before one key dominates — but only logarithmically more: a
# 64-fold longer sequence buys a factor 2.5 in $d_k$, while the paper's $d_k = 64$ is far beyond
# either onset. The closed form is a guide, not a sharp threshold: it holds for about
# $\sigma^2 \lesssim \ln n$, and the curves show a gradual slide.
# </details>
#
# **Exercise 4.** Write `stable_softmax(x)`: the softmax over the last axis of a numpy array,
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
