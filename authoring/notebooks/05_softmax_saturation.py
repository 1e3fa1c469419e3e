# %% [markdown]
# # 05 — Softmax saturation
#
# The softmax turns a query's logits into attention weights. Notebook 02 showed that the
# unscaled logits $q\cdot k$ spread like $\sqrt{d_k}$. This notebook shows what that does to
# the softmax: as $d_k$ grows, the weights of unscaled attention pile onto a single key,
# while scaled attention keeps them spread.
#
# **Learning goals**
# - Compute the softmax and see that only the *differences* between logits matter.
# - See that scaling the logits up makes the softmax peaky, and that unscaled logits grow like $\sqrt{d_k}$.
# - Measure saturation (largest weight, entropy $H$, effective keys $e^{H}$) across $d_k$, unscaled vs scaled.
# - Read the factor $1/\sqrt{d_k}$ as an inverse temperature.
#
# **Prerequisites**
# - Notebooks 02 and 04: $\mathrm{Var}(q\cdot k) = d_k$ and $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$.
# - The exponential and the natural logarithm.

# %% [markdown]
# ## Setup

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
from sdpa_helpers.plots import saturation as sat_plots
from sdpa_helpers.sampling import sample_components
from sdpa_helpers.widgets import D_K_CHOICES
from sdpa_helpers.widgets.saturation import SaturationExplorer, TemperatureExplorer

SEED = 5
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The softmax
#
# The softmax turns $n$ real numbers $z_1, \dots, z_n$ (the *logits*) into $n$ weights:
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{n} e^{z_j}} .$$
#
# Every weight is positive, they sum to 1, and a larger logit gets a larger weight. Here it is
# written out, next to the package's `softmax`, on two small examples.

# %%
def softmax_by_hand(z):
    e = np.exp(np.asarray(z, dtype=float))
    return e / e.sum()


for z in ([4.0, 5.0], [1.0, 10.0]):
    p = softmax(z)
    assert np.allclose(p, softmax_by_hand(z)) and np.isclose(p.sum(), 1.0)
    print(f"softmax({z}) = " + " / ".join(f"{100 * w:.2f}%" for w in p))

assert np.allclose(100 * softmax([4.0, 5.0]), [26.89, 73.11], atol=0.005)
assert np.allclose(100 * softmax([1.0, 10.0]), [0.01, 99.99], atol=0.005)

# %% [markdown]
# Why is the second pair so lopsided? The ratio of two weights is
# $p_i / p_j = e^{z_i - z_j}$: it depends only on the **difference** of the logits.
# A gap of 1 gives odds $e^1 \approx 2.7$ to 1; a gap of 9 gives $e^9 \approx 8103$ to 1.
# So adding the same number to every logit changes nothing.

# %%
for z in ([4.0, 5.0], [1.0, 10.0]):
    p = softmax(z)
    gap = z[1] - z[0]
    print(f"z = {z}: gap {gap:.0f}, odds p2/p1 = {p[1] / p[0]:.1f}, e^gap = {np.exp(gap):.1f}")
    assert np.isclose(p[1] / p[0], np.exp(gap))
    shifted = softmax(np.array(z) + 100.0)  # add 100 to every logit
    assert np.allclose(shifted, p)
    print(f"   softmax(z + 100) = {np.array2string(shifted, precision=4)}: the same weights")

# %% [markdown]
# That shift is also how the softmax is computed safely. $e^{1000}$ overflows a float, so the
# formula as written gives `nan` (∞/∞). Subtracting the largest logit first keeps every
# exponent $\le 0$ and gives the same weights; the package's `softmax` does that (you will write
# it yourself in Exercise 3).

# %%
with np.errstate(over="ignore", invalid="ignore"):
    naive = softmax_by_hand([1000.0, 1000.0])
print("by hand   :", naive)
print("stable    :", softmax([1000.0, 1000.0]))
print("logits 1e6:", softmax([1e6, 0.0]))
assert np.isnan(naive).all() and np.allclose(softmax([1000.0, 1000.0]), 0.5)

# %% [markdown]
# ## 2. Multiplying the logits makes the softmax peaky
#
# Multiply every logit by a constant $c$: every gap is multiplied by $c$, so every odds ratio
# $e^{z_i - z_j}$ becomes $e^{c(z_i - z_j)}$. With $c = 8$, small gaps become large ones. An
# example with five logits, $z = [0.1, -0.2, 0.3, -0.2, 0.5]$, and the same times 8:

# %%
z = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
print("softmax(z)    =", np.array2string(softmax(z), precision=4, floatmode="fixed"))
print("softmax(8 z)  =", np.array2string(softmax(8 * z), precision=4, floatmode="fixed"))
expected = np.array([0.0326, 0.0030, 0.1615, 0.0030, 0.8000])  # softmax(8 z) to 4 decimals
assert np.allclose(softmax(8 * z), expected, atol=5e-5)  # agree to the 4 decimals printed
assert np.all((softmax(z) > 0.14) & (softmax(z) < 0.29))

# %% [markdown]
# The weights of $z$ are nearly uniform (all between 0.14 and 0.29); times 8, the largest logit
# takes 80%. As $c$ grows the softmax tends to **one-hot** (all weight on the largest logit);
# as $c \to 0$ it tends to **uniform** ($1/n$ each):

# %%
for c in (0.01, 1.0, 8.0, 64.0, 512.0):
    print(f"c = {c:6g}: largest weight {softmax(c * z).max():.4f}")
largest = [softmax(c * z).max() for c in (0.01, 1.0, 8.0, 64.0, 512.0)]
assert np.all(np.diff(largest) > 0) and abs(largest[0] - 1 / 5) < 0.01 and largest[-1] > 0.9999

# %% [markdown]
# Now the link with $d_k$. For one query and random keys, the unscaled logits $q\cdot k_j$ have
# variance $d_k$ (notebook 02): they are logits of size about 1 **multiplied by $\sqrt{d_k}$**.
# At $d_k = 64$ that factor is exactly the 8 above. A quick check of the spread at $d_k = 64$.
# A sample variance $s^2$ of $N$ independent draws has standard error $\sqrt{(m_4 - s^4)/N}$, with
# $m_4$ the fourth moment about the mean; we accept $|s^2 - 64| < 4\,\mathrm{SE}$:

# %%
n_pairs = 100_000
dots = saturation.query_logits(64, n_keys=1, n_queries=n_pairs, scale=1.0, rng=rng).ravel()  # q·k, d_k = 64
var = dots.var()
se_var = np.sqrt((np.mean((dots - dots.mean()) ** 4) - var**2) / n_pairs)
print(f"Var(q·k) at d_k = 64: {var:.2f} ± {se_var:.2f} (theory 64), std {np.sqrt(var):.2f} (theory 8)")
assert abs(var - 64) < 4 * se_var

# %% [markdown]
# **How we simulate.** For a fixed query, $q\cdot k_j = \|q\|\,a_j$ with $a_j = u\cdot k_j$ and
# $u = q/\|q\|$ a unit vector. Whatever $u$ is, $u\cdot k_j = \sum_i u_i k_{ji}$ is a sum of
# independent normals, so it is normal, with mean 0 and variance $\sum_i u_i^2 = 1$. So the $a_j$
# are independent $N(0, 1)$ and do not depend on $q$ at all; and $\|q\|^2$, a sum of $d_k$ squared
# standard normals, has the $\chi^2_{d_k}$ distribution (chi-square with $d_k$ degrees of freedom).
# `saturation.query_logits` draws $\|q\|$ and the $a_j$ directly, which costs the same at any $d_k$.
# It must agree with drawing the full vectors. Check: the average largest weight of one query
# against 8 keys at $d_k = 16$, both ways (difference within 4 standard errors):

# %%
n_q, n_keys, d_k = 4000, 8, 16
Q = sample_components((n_q, d_k), rng=rng)  # (n_q, d_k)
K = sample_components((n_q, n_keys, d_k), rng=rng)  # each query gets its own 8 keys
direct = saturation.weight_stats(np.einsum("qd,qkd->qk", Q, K)).max_weight  # (n_q,)
shortcut = saturation.weight_stats(saturation.query_logits(d_k, n_keys, n_q, scale=1.0, rng=rng)).max_weight
a, b = saturation.mc_estimate(direct), saturation.mc_estimate(shortcut)
se_diff = np.hypot(a.se, b.se)
print(f"largest weight, full vectors: {a.mean:.4f} ± {a.se:.4f}; shortcut: {b.mean:.4f} ± {b.se:.4f}")
print(f"difference {a.mean - b.mean:+.4f}, 4 SE = {4 * se_diff:.4f}")
assert abs(a.mean - b.mean) < 4 * se_diff

# %% [markdown]
# ## 3. One query, growing $d_k$
#
# One query against 16 keys, every component drawn $N(0, 1)$. We keep the same vectors and
# look at their first $d_k$ components, for $d_k$ = 1, 16, 256 and 4096. Top: the weights of
# unscaled attention, $\mathrm{softmax}(q\cdot k_j)$. Bottom: scaled,
# $\mathrm{softmax}(q\cdot k_j/\sqrt{d_k})$.

# %%
q = sample_components(4096, rng=rng)  # (4096,)
K16 = sample_components((16, 4096), rng=rng)  # (16 keys, 4096)
bars = {}
for d_k in (1, 16, 256, 4096):
    z = K16[:, :d_k] @ q[:d_k]  # (16, d_k) @ (d_k,) -> (16,)
    bars[d_k] = (softmax(z), softmax(z / np.sqrt(d_k)))
    print(f"d_k = {d_k:4d}: largest weight unscaled {bars[d_k][0].max():.3f}, scaled {bars[d_k][1].max():.3f}")
assert np.allclose(*bars[1])  # d_k = 1: dividing by sqrt(1) changes nothing
fig = sat_plots.saturation_small_multiples(bars)
fig

# %% [markdown]
# The top row goes from nearly uniform to a single bar: the softmax **saturates** to one-hot.
# The bottom row keeps several keys in play at every $d_k$. (At $d_k = 1$ the two rows agree:
# $\sqrt{1} = 1$.)

# %% [markdown]
# ## 4. Averaging over many queries
#
# One query could be a fluke. Three numbers say how peaked a softmax is:
#
# - the **largest weight** $p_{\max}$: $1/n$ when uniform, 1 when one-hot;
# - the **entropy** $H = -\sum_j p_j \log p_j$ (nats): $\log n$ when uniform, 0 when one-hot;
# - the **effective number of keys** $e^{H}$: $n$ when uniform, 1 when one-hot. A softmax that
#   spreads evenly over $m$ keys has $e^H = m$.
#
# For each $d_k$ from 1 to 4096 we average them over 4000 random queries, each against its own
# 16 keys. The key draws $a_j$ are the same at every $d_k$ (only the query lengths are new), which
# makes the curves smooth. We print the largest standard error (SE) of each average.

# %%
n_keys, n_queries = 16, 4000
curves = {s: saturation.saturation_curves(D_K_CHOICES, n_keys, n_queries, scaled=s, rng=SEED) for s in (False, True)}
print(f"limits for n = {n_keys} keys: uniform p_max = 1/n = {1 / n_keys:.4f}, H = log n = {np.log(n_keys):.3f}, "
      f"e^H = {n_keys}; one-hot p_max = 1, H = 0, e^H = 1")
u_curves, s_curves = curves[False], curves[True]
print(f"{'':5} | {'unscaled':^20} | {'scaled':^20}")
print(f"{'d_k':>5} | {'p_max':>6} {'H':>6} {'e^H':>6} | {'p_max':>6} {'H':>6} {'e^H':>6}")
for d_k in (1, 4, 16, 64, 256, 1024, 4096):
    i = D_K_CHOICES.index(d_k)
    u, s = (f"{c.max_weight.mean[i]:6.3f} {c.entropy.mean[i]:6.3f} {c.effective_keys.mean[i]:6.3f}"
            for c in (u_curves, s_curves))
    print(f"{d_k:5d} | {u} | {s}")
for f in ("max_weight", "entropy", "effective_keys"):
    print(f"largest SE of {f}: {max(getattr(c, f).se.max() for c in curves.values()):.4f}")

# %% [markdown]
# Unscaled, every measure slides steadily toward one-hot as $d_k$ grows: at $d_k = 4096$ the
# top key takes on average about 98% of the weight, and $e^H$ is close to 1.

# %%
i4096 = D_K_CHOICES.index(4096)
assert np.all(np.diff(u_curves.max_weight.mean) > 0) and np.all(np.diff(u_curves.entropy.mean) < 0)
assert u_curves.max_weight.mean[i4096] > 0.97 and u_curves.effective_keys.mean[i4096] < 1.1
print(f"unscaled at d_k = 4096: p_max = {u_curves.max_weight.mean[i4096]:.3f} ± {u_curves.max_weight.se[i4096]:.3f}, "
      f"e^H = {u_curves.effective_keys.mean[i4096]:.3f} ± {u_curves.effective_keys.se[i4096]:.3f}")

# %% [markdown]
# Scaled, the logits $q\cdot k/\sqrt{d_k}$ have variance exactly 1 at every $d_k$ (notebook 04).
# Check it for every $d_k$ on the slider, within 4 standard errors of the sample variance:

# %%
for d_k in D_K_CHOICES:
    x = saturation.query_logits(d_k, n_keys=1, n_queries=100_000, rng=rng).ravel()  # scaled logits
    v = x.var()
    se_v = np.sqrt((np.mean((x - x.mean()) ** 4) - v**2) / x.size)  # SE of a sample variance
    assert abs(v - 1) < 4 * se_v, (d_k, v, se_v)
print("Var(q·k/√d_k) = 1 within 4 SE for every d_k in", D_K_CHOICES)

# %% [markdown]
# So the scaled curves barely move. They are not perfectly flat at small $d_k$, and the reason is
# instructive. For one query the scaled logits are $(\|q\|/\sqrt{d_k})\,a_j$ with $a_j \sim N(0,1)$,
# and $\|q\|^2/d_k$ has mean 1 but standard deviation $\sqrt{2/d_k}$. At $d_k = 1$ some queries are
# short (their softmax is flatter) and some long; by $d_k = 64$ every query has length close to
# $\sqrt{d_k}$, and the logits of each query behave like independent $N(0, 1)$ draws. Compare with
# softmaxes of i.i.d. $N(0, 1)$ logits (an independent sample, so the SE of a difference is
# $\sqrt{SE_1^2 + SE_2^2}$):

# %%
limit = saturation.weight_stats(make_rng(SEED + 1).standard_normal((n_queries, n_keys)))
fields = ("max_weight", "entropy", "effective_keys")
limit_est = {f: saturation.mc_estimate(getattr(limit, f)) for f in fields}
print("i.i.d. N(0,1) logits: " + ", ".join(f"{f} {limit_est[f].mean:.3f} ± {limit_est[f].se:.3f}" for f in fields))
for d_k in (1, 4, 16, 64, 256, 4096):
    i = D_K_CHOICES.index(d_k)
    z_scores = [(getattr(s_curves, f).mean[i] - limit_est[f].mean)
                / np.hypot(getattr(s_curves, f).se[i], limit_est[f].se) for f in fields]
    print(f"d_k = {d_k:4d}: sd of ||q||²/d_k = {np.sqrt(2 / d_k):.3f}; scaled minus i.i.d., in SEs: "
          + ", ".join(f"{zs:+.1f}" for zs in z_scores))
    if d_k >= 64:
        assert all(abs(zs) < 4 for zs in z_scores)
ranges = {name: np.ptp(c.max_weight.mean) for name, c in (("unscaled", u_curves), ("scaled", s_curves))}
print(f"range of the average p_max over d_k = 1 … 4096: unscaled {ranges['unscaled']:.3f}, "
      f"scaled {ranges['scaled']:.3f} (ratio {ranges['scaled'] / ranges['unscaled']:.3f})")
assert ranges["scaled"] < ranges["unscaled"] / 10

# %% [markdown]
# From $d_k = 64$ on, the scaled curves agree with the i.i.d. $N(0,1)$ values within 4 standard
# errors; below that they sit a little on the flat side. Over the whole range the scaled largest
# weight moves by less than a tenth of what the unscaled one does. The same curves as a figure:
# black dotted lines mark uniform and one-hot, the wide grey band the i.i.d. $N(0,1)$ value.

# %%
fig = sat_plots.saturation_curves_figure(u_curves, s_curves, n_keys, iid_limit=[limit_est[f].mean for f in fields])
fig

# %% [markdown]
# ## 5. Explorer: drag $d_k$
#
# The figures above, live. Top: one query's weights, unscaled (vermillion) and scaled (blue), with
# fixed axes so the bars' heights compare directly. Bottom: the average curves, with a marker at
# your $d_k$. Change the number of keys or the seed (a new query and keys) too.

# %% tags=["nbval-ignore-output"]
explorer = SaturationExplorer(d_k=64)
explorer

# %% [markdown]
# Try $d_k = 4096$ with 64 keys: how much weight does the top key get unscaled, and how many
# effective keys does scaled attention keep?
#
# ## 6. $1/\sqrt{d_k}$ is an inverse temperature
#
# A softmax with **temperature** $T > 0$ divides the logits by $T$ first:
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$. Small $T$ sharpens toward one-hot, large $T$
# flattens toward uniform. Scaled attention is the unscaled logits at temperature $\sqrt{d_k}$:
#
# $$\mathrm{softmax}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = \mathrm{softmax}\big(q\cdot k,\; T = \sqrt{d_k}\big).$$

# %%
for d_k in (4, 64, 1024):
    logits = K16[:, :d_k] @ q[:d_k]  # unscaled, (16,)
    assert np.allclose(softmax(logits / np.sqrt(d_k)), softmax(logits, temperature=np.sqrt(d_k)))
    print(f"d_k = {d_k:4d}: softmax(q·k / √d_k) == softmax(q·k, temperature={np.sqrt(d_k):g})")

# %% [markdown]
# The temperature grows exactly as fast as the logits spread ($\sqrt{d_k}$), so the two cancel.
# The ×8 example of section 2 is temperature $T = 1/8$. Here are its five logits at
# $T = 1/8$, 1 and 8, then the largest weight and $e^H$ against $T$ (thin grey lines: the three
# temperatures of the bars; dotted: one-hot and uniform):

# %%
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])  # the five logits of section 2
assert np.allclose(softmax(z5, temperature=1 / 8), softmax(8 * z5))
print("softmax(z, T=1/8) =", np.array2string(softmax(z5, temperature=1 / 8), precision=4, floatmode="fixed"))
fig = sat_plots.temperature_small_multiples(z5, [1 / 8, 1, 8], 2.0 ** np.linspace(-6, 6, 49))
fig

# %% [markdown]
# Drag the temperature (powers of two from 1/64 to 64):

# %% tags=["nbval-ignore-output"]
temperature_explorer = TemperatureExplorer()
temperature_explorer

# %% [markdown]
# ## Summary
#
# - $\mathrm{softmax}(z)_i = e^{z_i}/\sum_j e^{z_j}$; the odds between two keys are $e^{z_i - z_j}$,
#   so only gaps between logits matter: softmax([4, 5]) = 26.89% / 73.11%, softmax([1, 10]) = 0.01% / 99.99%.
# - Multiplying the logits by $c$ multiplies every gap by $c$: large $c$ makes the softmax one-hot.
# - Unscaled logits $q\cdot k$ are multiplied by about $\sqrt{d_k}$, so as $d_k$ grows the softmax
#   **saturates**: with 16 keys at $d_k = 4096$ the average largest weight is 0.98 and the effective
#   number of keys $e^H$ is 1.06 (uniform would give 16).
# - Scaled logits have variance 1 at every $d_k$; the curves stay near those of i.i.d. $N(0,1)$ logits.
# - $1/\sqrt{d_k}$ is an inverse temperature: scaled attention is the softmax at $T = \sqrt{d_k}$.
#
# Next, notebook 06 shows why saturation is bad for learning: a one-hot softmax passes back
# almost no gradient.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`; the cells start with `answer = None`.
#
# **Exercise 1.** Two keys have unscaled logits $q\cdot k = [8, 0]$ and $d_k = 16$. What weight
# does *scaled* attention give the first key?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.scaled_weight", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The scaled logits are $[8, 0]/\sqrt{16} = [2, 0]$, so the first weight is
# $e^2/(e^2 + e^0) = 1/(1 + e^{-2}) \approx 0.881$. Unscaled it would be
# $1/(1 + e^{-8}) \approx 0.9997$: nearly one-hot.
# </details>
#
# **Exercise 2.** For $d_k = 100$, which temperature $T$ makes
# `softmax(q·k, temperature=T)` equal the scaled attention weights?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.temperature", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$, and scaled attention uses $z/\sqrt{d_k}$, so
# $T = \sqrt{100} = 10$.
# </details>
#
# **Exercise 3.** Write `stable_softmax(x)`: the softmax over the last axis of a numpy array,
# which works for logits like `1e6`, `[1000, 1000]`, `[-1000, -1000]` and `-inf` (weight 0).
# The checker runs it on seven cases, including two batches of two rows.

# %%
def stable_softmax(x):
    x = np.asarray(x, dtype=float)
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
# $\le 0$, so nothing overflows, and the largest term is exactly 1, so the sum is never 0.
# `exp(-inf) = 0` gives a masked logit weight 0. `keepdims=True` makes the subtraction and the
# division work row by row.
# </details>
#
# ---
# **Next:** [06 — Vanishing gradients](06_vanishing_gradients.ipynb)
