# %% [markdown]
# # Why √d_k and not d_k
#
# The logits $q\cdot k$ have variance $d_k$ (notebook 02), so their standard deviation grows
# like $\sqrt{d_k}$. Attention multiplies them by a constant $c$ before the softmax. Which
# constant? Dividing by $d_k$ looks just as natural as dividing by $\sqrt{d_k}$. This
# notebook shows why only $\sqrt{d_k}$ keeps the logits at a fixed spread, and what goes
# wrong with the other choices.
#
# **Learning goals**
# - Derive $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$ and check it by simulation.
# - Compare no scaling, $1/\sqrt{d_k}$ and $1/d_k$ on one log-log plot, and read off the slopes ½, 0 and −½.
# - See that $1/d_k$ shrinks the logits to 0 and makes attention uniform as $d_k$ grows.
# - Recognise equivalent spellings of the scale in code, and use the per-head $d_k$, not $d_\text{model}$.
#
# **Prerequisites**
# - Notebook 02: $\mathrm{Var}(q\cdot k) = d_k$ for independent unit-variance components.
# - The softmax and its entropy (notebook 00 shows the formula).

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory
from sdpa_helpers.attention import attention_scores, entropy, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import scaling as sc_plots
from sdpa_helpers.sampling import sample_dot_products
from sdpa_helpers.widgets import D_K_CHOICES
from sdpa_helpers.widgets.scaling import ScalingExplorer, query_weights

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Scaling a random variable: $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$
#
# Let $X$ have mean $\mu$ and let $c$ be a constant. The mean scales with $c$:
# $\mathbb{E}[cX] = c\mu$. The variance scales with $c^2$:
#
# $$\mathrm{Var}(cX) = \mathbb{E}\big[(cX - c\mu)^2\big] = c^2\,\mathbb{E}\big[(X-\mu)^2\big] = c^2\,\mathrm{Var}(X),$$
#
# so the standard deviation scales with $|c|$. For the logits, $X = q\cdot k$ with
# $\mathrm{Var}(X) = d_k$. `theory.scaled_moments` has the closed form; here it is against
# 100 000 simulated dot products at $d_k = 64$, for $c = 1$, $1/8 = 1/\sqrt{64}$ and $1/64$.
# The tolerance is 4 standard errors of a sample variance, computed from
# `theory.sample_variance_moments` (the logits' excess kurtosis is $6/d_k$).

# %%
d_k, n = 64, 100_000
x = sample_dot_products(d_k, n, rng=SEED)  # (n,) unscaled q·k
for c in (1.0, 1 / 8, 1 / 64):
    predicted = theory.scaled_moments(theory.dot_product_moments(d_k), c)
    se = theory.sample_variance_moments(n, predicted.var, theory.dot_product_excess_kurtosis(d_k)).std
    simulated = np.var(c * x, ddof=1)
    print(f"c = {c:<9.6g} Var(c·q·k): simulated {simulated:.4g} ± {se:.2g} (1 SE), theory c²·d_k = {predicted.var:.6g}")
    assert abs(simulated - predicted.var) < 4 * se

# %% [markdown]
# The three rows use the *same* draws, so the identity also holds draw by draw: the sample
# variance of $cX$ is exactly $c^2$ times that of $X$ (up to rounding).

# %%
for c in (1 / 8, 1 / 64):
    ratio = np.var(c * x) / np.var(x)
    print(f"c = {c:.6g}: Var(cX) / Var(X) = {ratio:.10f}, c² = {c**2:.10f}")
    assert np.isclose(ratio, c**2, rtol=1e-12)

# %% [markdown]
# ## 2. Three choices of scale
#
# Put $\mathrm{Var}(q\cdot k) = d_k$ into $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$:
#
# | scale $c$ | variance of the logits | standard deviation | slope on log-log axes |
# |---|---|---|---|
# | $1$ (none) | $d_k$ | $d_k^{1/2}$ | ½ |
# | $1/\sqrt{d_k}$ | $1$ | $1$ | 0 |
# | $1/d_k$ | $1/d_k$ | $d_k^{-1/2}$ | −½ |
#
# Only $1/\sqrt{d_k}$ keeps the spread of the logits fixed whatever $d_k$ is. The closed forms:

# %%
for d_k in (1, 64, 4096):
    stds = [theory.scaled_moments(theory.dot_product_moments(d_k), sc_plots.scale_of(name, d_k)).std
            for name in sc_plots.SCALINGS]
    print(f"d_k = {d_k:4d}: std unscaled {stds[0]:6.3f}   1/√d_k {stds[1]:.3f}   1/d_k {stds[2]:.4f}")

# %% [markdown]
# Now simulate 2 000 dot products at every $d_k$ from 1 to 4096 and scale each sample three
# ways. On log-log axes a power law $d_k^{a}$ is a straight line of slope $a$.

# %%
n = 2000
sim_std = {name: [] for name in sc_plots.SCALINGS}
for d_k in D_K_CHOICES:
    x = sample_dot_products(d_k, n, rng=SEED + d_k)  # (n,) unscaled
    for name in sc_plots.SCALINGS:
        sim_std[name].append((sc_plots.scale_of(name, d_k) * x).std())
sim_std = {name: np.array(v) for name, v in sim_std.items()}
ax = sc_plots.logit_std_vs_d_k(D_K_CHOICES, sim_std)
ax.set_title("simulation (markers) on the theory lines")
ax.figure

# %% [markdown]
# The markers sit on the lines. To check the slopes, fit a straight line to
# $\log_2(\text{std})$ against $\log_2 d_k$. Each point's standard error in log units is
# half the relative standard error of its sample variance, and the fitted slope's standard
# error follows from the least-squares weights. (All three use the same draws: their
# $\log_2(\text{std})$ differ by exactly $e\log_2 d_k$, so the three fitted slopes differ by
# exactly ½, and one standard error serves all three.)

# %%
log_d = np.log2(D_K_CHOICES)
w = (log_d - log_d.mean()) / ((log_d - log_d.mean()) ** 2).sum()  # slope = sum(w * log_std)
se_point = np.array([theory.sample_variance_moments(n, 1.0, theory.dot_product_excess_kurtosis(d)).std / 2
                     for d in D_K_CHOICES]) / np.log(2)  # SE of log2(std): half the relative SE of the variance
se_slope = np.sqrt((w**2 * se_point**2).sum())
for name, expected in zip(sc_plots.SCALINGS, (0.5, 0.0, -0.5)):
    slope = np.polyfit(log_d, np.log2(sim_std[name]), 1)[0]
    print(f"{name:9s}: fitted slope {slope:+.4f} ± {se_slope:.4f} (1 SE), theory {expected:+.1f}")
    assert abs(slope - expected) < 4 * se_slope

# %% [markdown]
# ## 3. What $1/d_k$ does to attention
#
# With $c = 1/d_k$ the logits have standard deviation $1/\sqrt{d_k}$, which goes to 0. The
# softmax of nearly equal logits is nearly uniform: every one of $n$ keys gets weight close
# to $1/n$, and the entropy approaches its maximum $\log n$. The model can no longer tell
# keys apart. (Without scaling, the opposite happens: the largest logit takes all the
# weight; notebook 05 studies that.) A simulation with $n = 16$ keys and 256 queries per $d_k$:

# %%
n_keys, n_queries = 16, 256
mean_entropy = {name: [] for name in sc_plots.SCALINGS}
mean_max = {name: [] for name in sc_plots.SCALINGS}
deficit = {}  # log n - entropy of every query, 1/d_k scaling
for d_k in D_K_CHOICES:
    g = make_rng(SEED + d_k)
    q = g.standard_normal((n_queries, d_k))
    K = g.standard_normal((n_queries, n_keys, d_k))
    z = np.einsum("qd,qkd->qk", q, K)  # (n_queries, d_k) x (n_queries, n_keys, d_k) -> (n_queries, n_keys)
    for name in sc_plots.SCALINGS:
        p = softmax(sc_plots.scale_of(name, d_k) * z)  # (n_queries, n_keys), rows sum to 1
        mean_entropy[name].append(entropy(p).mean())
        mean_max[name].append(p.max(axis=1).mean())
        if name == "inv_d":
            deficit[d_k] = np.log(n_keys) - entropy(p)
fig = sc_plots.attention_vs_d_k(D_K_CHOICES, mean_entropy, mean_max, n_keys)
fig

# %% [markdown]
# With $1/d_k$ (green, dotted) the entropy climbs to its maximum $\log 16 = 2.77$ and the
# largest weight falls to $1/16 = 0.0625$: uniform attention (numbers printed below). With $1/\sqrt{d_k}$ (blue, solid) both stay in a
# narrow band for every $d_k$ (the largest weight between about 0.18 and 0.25). Unscaled
# (red, dashed), the largest weight heads for 1.
#
# How close to uniform? For small scaled logits $z_j$, a second-order Taylor expansion of
# the entropy around uniform weights gives
# $\log n - H \approx \tfrac12 \cdot \tfrac1n\sum_j (z_j - \bar z)^2$. The $n$ logits of one
# query are uncorrelated with variance $\sigma_z^2$ (notebook 03, section 6), so, as for `np.var`,
# the mean of this is $\tfrac{n-1}{2n}\,\sigma_z^2 = \tfrac{n-1}{2n\,d_k}$ for $\sigma_z^2 = 1/d_k$.
# Checked within 4 standard errors at the largest $d_k$:

# %%
for d_k in (256, 4096):
    gap, se = deficit[d_k].mean(), deficit[d_k].std(ddof=1) / np.sqrt(n_queries)
    predicted = (n_keys - 1) / (2 * n_keys * d_k)
    print(f"d_k = {d_k:4d}, scale 1/d_k: log n - entropy = {gap:.3e} ± {se:.1e} (1 SE), "
          f"predicted {predicted:.3e}")
i = D_K_CHOICES.index(4096)
print(f"d_k = 4096, scale 1/d_k: mean entropy {mean_entropy['inv_d'][i]:.3f}, log n = {np.log(n_keys):.3f}")
print(f"d_k = 4096, scale 1/d_k: mean largest weight {mean_max['inv_d'][i]:.4f}, 1/n = {1 / n_keys:.4f}")
print(f"d_k = 4096, unscaled   : mean largest weight {mean_max['unscaled'][i]:.3f}, "
      f"mean entropy {mean_entropy['unscaled'][i]:.3f}")
print(f"scale 1/√d_k: mean largest weight {min(mean_max['sqrt']):.3f} ... {max(mean_max['sqrt']):.3f} "
      f"over all d_k")
assert abs(deficit[4096].mean() - (n_keys - 1) / (2 * n_keys * 4096)) < 4 * deficit[4096].std(ddof=1) / np.sqrt(n_queries)

# %% [markdown]
# The same comparison for a single query: its softmax weights over 16 keys, sorted from the
# largest $q\cdot k$ down, at $d_k$ = 4, 64 and 1024. Unscaled, the first key takes nearly
# everything at large $d_k$; with $1/d_k$ the weights flatten to $1/16$; with $1/\sqrt{d_k}$
# their shape stays similar.

# %%
fig = sc_plots.weights_small_multiples({d: query_weights(d) for d in (4, 64, 1024)})
fig

# %% [markdown]
# The live version: drag $d_k$. On the left, the three markers slide along their lines;
# on the right, the weights of one query change accordingly.

# %% tags=["nbval-ignore-output"]
explorer = ScalingExplorer(d_k=64)
explorer

# %% [markdown]
# ## 4. The same logits, spelled five ways
#
# Code divides by $\sqrt{d_k}$ in several equivalent ways. All of these give the same logits:
#
# - `scores / np.sqrt(d_k)` — the formula as written;
# - `scores * d_k**-0.5` — multiplying by $d_k^{-1/2}$ is dividing by $\sqrt{d_k}$;
# - `(Q / np.sqrt(d_k)) @ K.T` — scale the queries first: $(cQ)K^\top = c\,(QK^\top)$;
# - `(Q * d_k**-0.25) @ (K * d_k**-0.25).T` — split the factor between $q$ and $k$
#   (OpenAI's Whisper does this);
# - `attention_scores(Q, K)` — this course's helper, whose default scale is $1/\sqrt{d_k}$.

# %%
d_k = 64
Q = rng.standard_normal((5, d_k))  # (n_q, d_k)
K = rng.standard_normal((7, d_k))  # (n_k, d_k)
scores = Q @ K.T  # (5, d_k) @ (d_k, 7) -> (5, 7)
spellings = {
    "scores / np.sqrt(d_k)": scores / np.sqrt(d_k),
    "scores * d_k**-0.5": scores * d_k**-0.5,
    "(Q / np.sqrt(d_k)) @ K.T": (Q / np.sqrt(d_k)) @ K.T,
    "(Q * d_k**-0.25) @ (K * d_k**-0.25).T": (Q * d_k**-0.25) @ (K * d_k**-0.25).T,
    "attention_scores(Q, K)": attention_scores(Q, K),
}
reference = spellings["scores / np.sqrt(d_k)"]
for name, logits in spellings.items():
    assert np.allclose(logits, reference, rtol=1e-12, atol=1e-12)
    print(f"{name:40s} matches: {np.allclose(logits, reference, rtol=1e-12, atol=1e-12)}")

# %% [markdown]
# Scaling $Q$ first multiplies $n_q \times d_k$ numbers instead of $n_q \times n_k$ logits,
# which is less work when there are more keys than dimensions; several codebases (fairseq,
# for example) scale $q$ right after its projection.
#
# ## 5. Which $d$? The dimension of one head
#
# In multi-head attention the model dimension is split between the heads:
# $d_k = d_\text{model}/h$. Each head computes its own logits from vectors of length $d_k$,
# so the scale is $1/\sqrt{d_k}$ with the **per-head** $d_k$. In the original Transformer,
# $d_\text{model} = 512$ and $h = 8$, so $d_k = 64$. The queries of all heads come out of one
# projection and are split by a reshape:

# %%
d_model, h, n_tokens = 512, 8, 10
d_k = d_model // h
X_q = rng.standard_normal((n_tokens, d_model))  # all heads' queries side by side
Q_heads = X_q.reshape(n_tokens, h, d_k).transpose(1, 0, 2)  # (n_tokens, 512) -> (h, n_tokens, d_k)
print(f"d_k = {d_model} / {h} = {d_k}; per-head queries have shape {Q_heads.shape}")
assert np.array_equal(Q_heads[1], X_q[:, d_k:2 * d_k])  # head 1 owns columns 64..127

# %% [markdown]
# Scaling a head's logits by $1/\sqrt{d_\text{model}}$ instead would shrink them to a
# standard deviation of $\sqrt{d_k/d_\text{model}} = \sqrt{64/512} \approx 0.354$, not 1:

# %%
n = 100_000
x = sample_dot_products(d_k, n, rng=SEED)  # (n,) one head's unscaled logits
rows = []
for label, c in (("1/√d_k", d_k**-0.5), ("1/√d_model", d_model**-0.5)):
    predicted = theory.scaled_moments(theory.dot_product_moments(d_k), c)
    se_var = theory.sample_variance_moments(n, predicted.var, theory.dot_product_excess_kurtosis(d_k)).std
    simulated = np.var(c * x, ddof=1)
    rows.append(f"scale {label:11s}: std simulated {np.sqrt(simulated):.4f}, theory {predicted.std:.4f}")
    assert abs(simulated - predicted.var) < 4 * se_var
print("\n".join(rows))
print(f"√(d_k / d_model) = {np.sqrt(d_k / d_model):.4f}")

# %% [markdown]
# Do not confuse the scale with another factor in the paper. Section 3.4 of *Attention Is All
# You Need* multiplies the **embedding** weights by $\sqrt{d_\text{model}}$. That factor acts
# once, on the token embeddings at the input of the model (before the positional encodings
# are added); it never touches the attention logits, and its $d$ is $d_\text{model}$, not
# $d_k$. Inside every attention head, the scale is $1/\sqrt{d_k}$.
#
# ## Summary
#
# - $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$: a scale $c$ multiplies the standard deviation by $|c|$.
# - With $\mathrm{Var}(q\cdot k) = d_k$, the logits' standard deviation is $d_k^{1/2}$ unscaled,
#   $1$ with $1/\sqrt{d_k}$ and $d_k^{-1/2}$ with $1/d_k$: slopes ½, 0 and −½ on log-log axes.
#   Only $1/\sqrt{d_k}$ keeps it fixed.
# - $1/d_k$ over-corrects: the logits shrink to 0 and attention becomes uniform (entropy
#   $\to \log n$, every weight $\to 1/n$).
# - `scores / np.sqrt(d_k)`, `scores * d_k**-0.5`, scaling $Q$ first, or $d_k^{-1/4}$ on both
#   $Q$ and $K$ give the same logits. Use the per-head $d_k = d_\text{model}/h$; the
#   $\sqrt{d_\text{model}}$ on the embeddings is a different factor.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`; the cells start with `answer = None`.
#
# **Exercise 1.** A model has $d_\text{model} = 768$ and 12 heads, but its code divides each
# head's logits by $\sqrt{d_\text{model}}$ instead of $\sqrt{d_k}$. With unit-variance
# components, what is the standard deviation of one head's scaled logits? (Three significant
# figures are enough.)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("04.wrong_d", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $d_k = 768/12 = 64$, so the unscaled logits have variance 64. Multiplying by
# $1/\sqrt{768}$ gives variance $64/768$ and standard deviation $\sqrt{64/768} = 0.289$.
# </details>
#
# **Exercise 2.** Some codebases multiply $q$ and $k$ each by the same factor $c$ before the
# dot product. For $d_k = 64$, which $c > 0$ gives $(cq)\cdot(ck) = q\cdot k/\sqrt{d_k}$? (Three
# significant figures are enough.)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("04.split_scale", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $(cq)\cdot(ck) = c^2\,(q\cdot k)$, so $c^2 = 1/\sqrt{64} = 1/8$ and
# $c = d_k^{-1/4} = 64^{-1/4} \approx 0.354$.
# </details>
#
# **Exercise 3.** Write `scaled_scores(Q, K)` with numpy only: the logits $QK^\top/\sqrt{d_k}$
# for `Q` of shape `(..., n_q, d_k)` and `K` of shape `(..., n_k, d_k)` (batches included).

# %%
def scaled_scores(Q, K):
    ...  # your code here


answer = None  # when your function is ready, set answer = scaled_scores
_ = check("04.scaled_scores", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def scaled_scores(Q, K):
#     d_k = Q.shape[-1]
#     return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
# ```
# </details>
#
# ---
# **Next:** [05 — Softmax saturation](05_softmax_saturation.ipynb)
