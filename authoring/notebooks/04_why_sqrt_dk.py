# %% [markdown]
# # Why √d_k and not d_k
#
# The logits $q\cdot k$ have variance $d_k$ (notebook 02); attention multiplies them by a
# constant $c$ before the softmax. Why $c = 1/\sqrt{d_k}$ and not $1/d_k$, which looks just as
# natural? This notebook proves the second half of part 1 of the course's answer (**spread**), and finds which
# part of the scale is forced and which is convention.
#
# **Learning goals**
# - Derive $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$ and check it by simulation.
# - Compare no scaling, $1/\sqrt{d_k}$ and $1/d_k$ on log-log axes, and tell which part of the scale is forced and which is convention.
# - Measure what $1/d_k$ does to the attention weights as $d_k$ grows (at initialisation).
# - Recognise equivalent spellings of the scale in code, and use the head dimension $d_k$, not $d_\text{model}$.
#
# **Prerequisites**
# - [02 — Mean and variance of q·k](02_mean_and_variance.ipynb): $\mathrm{Var}(q\cdot k) = d_k$ for independent unit-variance components.
# - The softmax and its entropy ([00 — Start here](00_start_here.ipynb) defines both).

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, models, theory
from sdpa_helpers.attention import attention_scores
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import scaling as scaling_plots
from sdpa_helpers.sampling import sample_dot_products
from sdpa_helpers.scaling import (D_KS, N_KEYS, SHOWN_D_KS, attention_by_d_k, log_log_slopes, relative_variance_se,
                                  simulated_logit_stds, weight_bands)
from sdpa_helpers.scales import SCALINGS
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.scaling import ScalingExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Scaling a random variable: $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$
#
# Let $X$ have mean $\mu$ and let $c$ be a constant. Then $\mathbb{E}[cX] = c\mu$ and
#
# $$\mathrm{Var}(cX) = \mathbb{E}\big[(cX - c\mu)^2\big] = c^2\,\mathbb{E}\big[(X-\mu)^2\big] = c^2\,\mathrm{Var}(X),$$
#
# so the standard deviation scales with $|c|$. For the logits, $X = q\cdot k$ with
# $\mathrm{Var}(X) = d_k$. A check on 100 000 simulated dot products at $d_k = 64$, for
# $c = 1$ and $1/8 = 1/\sqrt{64}$ (tolerance: 4 standard errors; one standard error is the typical wobble of a
# sample variance between simulations, notebook 03):

# %%
d_k, n = 64, 100_000
x = sample_dot_products(d_k, n, rng=SEED)  # (n,) unscaled q·k
rel_se = relative_variance_se(d_k, n)  # standard error of a sample variance of n dot products ÷ the true variance
for c in (1.0, 1 / 8):
    v, want = np.var(c * x, ddof=1), c**2 * d_k
    verify(f"Var(c·q·k) with c = {c:g}: {v:.4g}, theory {want:.4g}, {abs(v - want) / (want * rel_se):.1f} SE from theory"
           f"{'' if c == 1 else ', same draws, same distance'} (limit 4)",
           abs(v - want) <= 4 * want * rel_se)
verify_close("on the same draws, Var(x/8) / Var(x) = 1/64", np.var(x / 8) / np.var(x), 1 / 64, rtol=1e-12)

# %% [markdown] predict_answer=["shrinks", "shrink", "over-corrects", "-0.5", "−½", "-1/2", "slope −½", "cancel"] predict_answer_common=["-0.5"]
# ## 2. Three choices of scale
#
# **Predict:** $1/d_k$ turns the sum $q\cdot k$ into the *average* of its $d_k$ products. As $d_k$
# grows, does the spread of that average stay fixed, shrink, or grow?
#
# On log-log axes a power law $d_k^{a}$ is a straight line of slope $a$. Simulate 2 000 dot
# products at every $d_k$, scale them three ways, and fit the slopes:

# %% alt="Log-log plot of the standard deviation of the logits c q·k against d_k from 1 to 4096, markers from 2000 simulated dot products on three lines: unscaled rises with slope 1/2 from 1 to 64; scaled by 1/sqrt(d_k) stays at 1; scaled by 1/d_k falls with slope -1/2 from 1 to 1/64."
stds = simulated_logit_stds(D_KS, n=2000, seed=SEED)  # name -> (13,): std of the scaled logits per d_k
ax = scaling_plots.logit_std_vs_d_k(D_KS, stds)
for name, (slope, se) in log_log_slopes(D_KS, stds, n=2000).items():
    verify_close(f"log-log slope, {name}", slope, 0.5 + SCALINGS[name], se=se)
ax.figure

# %% [markdown]
# Put $\mathrm{Var}(q\cdot k) = d_k$ into $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$:
#
# | scale $c$ | variance of the logits | slope of the std on log-log axes |
# |---|---|---|
# | $1$ (none) | $d_k$ | ½ |
# | $1/\sqrt{d_k}$ | $1$ | 0 |
# | $1/d_k$ | $1/d_k$ | −½ |
#
# The markers sit on these lines. The average shrinks (green, slope −½):
# its $d_k$ independent products partly cancel, as the average of many dice rolls settles near
# its mean. So at initialisation $1/d_k$ over-corrects.
#
# What is forced and what is convention? A scale $c = a\,d_k^{e}$ gives standard deviation
# $a\,d_k^{1/2+e}$, constant in $d_k$ only for $e = -\tfrac12$: given $\mathrm{Var}(q\cdot k) = d_k$,
# **the exponent is forced**: $1/\sqrt{d_k}$, and no other power of $d_k$, brings the spread back
# to 1 for every $d_k$ (part 1 of the course's answer, **spread**). The constant $a$ is a
# convention (deep dive below).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: what is convention, and when $1/d_k$ is right

# %% [markdown] tags=["deep-dive"]
# Any $a/\sqrt{d_k}$ fixes the spread at $a$; the paper picks $a = 1$.
# And "$1/d_k$ over-corrects" holds *at initialisation, with independent components*: once
# training correlates $q$ and $k$, the mean of $q\cdot k$ grows like $d_k$, and then $1/d_k$ (the
# scale of μP, a recipe for widening networks) keeps the logits from growing (notebook 08).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the closed forms, and why one standard error serves all three slopes
#
# The standard deviations from the closed form (`theory.scaled_moments`) at three $d_k$:

# %% tags=["deep-dive"]
for d in (1, 64, D_KS[-1]):  # D_KS[-1]: the grid's end
    exact = {name: theory.scaled_moments(theory.dot_product_moments(d), d ** e).std for name, e in SCALINGS.items()}
    print(f"d_k = {d:4d}: " + ", ".join(f"{name} {v:.4g}" for name, v in exact.items()))

# %% [markdown] tags=["deep-dive"]
# Each point's standard error in $\log_2$ units is half the relative standard error of its
# sample variance, divided by $\ln 2$; the fitted slope's standard error follows from the
# least-squares weights (`scaling.log_log_slopes`). The three scalings use the
# *same* draws, so their $\log_2(\text{std})$ differ by exactly $\tfrac12\log_2 d_k$
# ($1/\sqrt{d_k}$ against none) and $\log_2 d_k$ ($1/d_k$ against none): the fitted slopes
# differ by exactly ½ from one scaling to the next, and one standard error serves all three.

# %% tags=["deep-dive"]
gap = np.log2(stds["unscaled"]) - np.log2(stds["sqrt"])
verify("log2(std) unscaled minus scaled = ½ log2 d_k at every d_k (largest deviation below 1e-12)",
       np.max(np.abs(gap - 0.5 * np.log2(D_KS))) < 1e-12)
slopes = {name: s for name, (s, _) in log_log_slopes(D_KS, stds, n=2000).items()}
verify_close("slope(unscaled) - slope(1/√d_k)", slopes["unscaled"] - slopes["sqrt"], 0.5, rtol=1e-9)

# %% [markdown] predict_answer=["1/16", "1 / 16", "0.0625", "0.06", "uniform", "ln 16", "equal weights", "1/N_KEYS", "1 / N_KEYS"] predict_answer_common=["1/16", "0.06", "0.0625"]
# ## 3. What $1/d_k$ does to attention
#
# **Predict:** 2 000 random queries, 16 keys each, scale $1/d_k$. What number does the mean
# largest weight tend to as $d_k$ grows? At $d_k = 4096$ the logits spread only $1/\sqrt{4096} = 1/64$
# (section 2's table): is the mean largest weight then within 0.01 of that number, or still far from it?

# %%
stats = attention_by_d_k(D_KS, n_keys=N_KEYS, n_queries=2000, seed=SEED)  # means over the queries, per d_k
print("mean largest weight    d_k:" + "".join(f"{d:>7d}" for d in D_KS[::2]))
for name, label in (("unscaled", "unscaled"), ("sqrt", "1/√d_k"), ("inv_d", "1/d_k")):
    print(f"{label:>26s}:" + "".join(f"{w:7.3f}" for w in stats.max_weight[name][::2]))

# %% [markdown]
# With $1/d_k$ the logits' spread $1/\sqrt{d_k}$ goes to 0, and the softmax of nearly equal
# logits is nearly uniform: the largest weight falls toward $1/16 = 0.0625$ (0.064 at
# $d_k = 4096$, within 0.01), and the entropy climbs toward its maximum $\ln 16$: attention
# can hardly tell keys apart. With $1/\sqrt{d_k}$ the largest weight stays near 0.2 to 0.25; unscaled, the largest logit takes nearly all the weight (0.981 at $d_k = 4096$), the
# curve notebook 05 draws and explains.
#
# Means hide how queries differ. The same 2 000 queries' weights, keys sorted from the largest
# $q\cdot k$ down: per rank the median (line) and the middle 80 % of the queries (band):

# %% alt="Three panels of softmax weights against the key's rank (1 to 16, sorted by q·k), at d_k = 4, 64 and 1024; per rank the median over 2000 queries as a line and the middle 80 % as a shaded band. Scaled by 1/sqrt(d_k) (blue) nearly the same at every d_k: median largest weight 0.20 at d_k = 4 and 0.22 to 0.23 from 64 on, band about 0.15 to 0.37. Scaled by 1/d_k (green) flattening onto the uniform 1/16: largest weight 0.065 to 0.067 at d_k = 1024. Unscaled (orange) the median largest weight rises from 0.37 at d_k = 4 to 0.93 at 64 and 1.00 at 1024, where 90 % of queries put at least 0.86 on their top key and the other ranks are near 0."
i, d_max = len(D_KS) - 1, D_KS[-1]  # the grid's end
verify(f"1/d_k, d_k = {d_max}: mean largest weight {stats.max_weight['inv_d'][i]:.3f}, within 0.01 of 1/16",
       abs(stats.max_weight["inv_d"][i] - 1 / N_KEYS) < 0.01)
verify_close(f"1/d_k, d_k = {d_max}: mean entropy, vs ln 16", stats.entropy["inv_d"][i], np.log(N_KEYS), rtol=1e-3)
bands = {d: weight_bands(d) for d in SHOWN_D_KS}  # d_k -> name -> (3, 16): 10th, 50th, 90th percentile per rank
print("unscaled, largest weight: " + ", ".join(f"d_k = {d}: median {b['unscaled'][1, 0]:.2f}, "
                                             f"10th percentile {b['unscaled'][0, 0]:.2f}" for d, b in bands.items()))
fig = scaling_plots.weights_small_multiples(bands)
fig

# %% [markdown]
# With $1/\sqrt{d_k}$ (blue) the bands hardly move with $d_k$; with $1/d_k$ (green) they flatten
# onto $1/16$. Unscaled (orange), the median query's largest weight goes from 0.93 at
# $d_k = 64$ to 1.00 at 1024, and the band shrinks up toward 1: more and more queries start
# committed to a single key.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: drag $d_k$ yourself
#
# Live: drag $d_k$; the markers slide along their lines, the medians and bands follow.

# %% tags=["nbval-ignore-output", "deep-dive"] alt="Explorer with a d_k slider from 1 to 4096. Left: the log-log lines of the logits' standard deviation (unscaled slope 1/2, scaled by 1/sqrt(d_k) flat at 1, scaled by 1/d_k slope -1/2) with a marker on each at the chosen d_k. Right: the softmax weights of 16 keys by rank, median over 2000 queries and 10-90 % band, for the three scalings; as d_k grows the unscaled band climbs to a single key at weight 1, the 1/d_k band flattens onto 1/16, the 1/sqrt(d_k) band stays put."
explorer = ScalingExplorer(d_k=64)
explorer

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how close to uniform?
#
# Section 3's means at every $d_k$, with the entropy beside the largest weight (notebook 05
# draws the unscaled and scaled curves on its main line; here the third, $1/d_k$, joins them):

# %% tags=["deep-dive"] alt="Two panels against d_k from 1 to 4096, 2000 queries with 16 keys. Left, mean entropy: all three 2.45 at d_k = 1; scaled by 1/sqrt(d_k) flat between 2.35 and 2.40; scaled by 1/d_k rising to the uniform ln 16 = 2.77 by d_k = 64; unscaled falling to 0.04 at 4096. Right, mean largest weight: all three 0.205 at d_k = 1; 1/sqrt(d_k) flat between 0.23 and 0.25 from d_k = 4 on; 1/d_k falling to the uniform 1/16 = 0.0625; unscaled rising to 0.98."
scaling_plots.attention_vs_d_k(D_KS, stats.entropy, stats.max_weight, N_KEYS)

# %% [markdown] tags=["deep-dive"]
# For small scaled logits $z_j$, a second-order expansion of the entropy around uniform
# weights gives $\ln n - H \approx \tfrac12 \cdot \tfrac1n\sum_j (z_j - \bar z)^2$. The $n$
# logits of one query are uncorrelated with variance $\sigma_z^2$ (notebook 03), so, as for
# `np.var`, its mean is $\tfrac{n-1}{2n}\,\sigma_z^2 = \tfrac{n-1}{2n\,d_k}$ for
# $\sigma_z^2 = 1/d_k$:

# %% tags=["deep-dive"]
for d in (256, D_KS[-1]):
    deficit = stats.inv_d_entropy_gap[d]  # (2000,): ln n - entropy of every query, scale 1/d_k
    verify_close(f"d_k = {d}: ln n - entropy with 1/d_k", deficit.mean(), (N_KEYS - 1) / (2 * N_KEYS * d),
                 se=deficit.std(ddof=1) / np.sqrt(deficit.size))

# %% [markdown]
# ## 4. The same logits, spelled five ways
#
# Code divides by $\sqrt{d_k}$ in several equivalent ways: `scores / np.sqrt(d_k)`,
# `scores * d_k**-0.5`, scaling the queries first, $(cQ)K^\top = c\,(QK^\top)$ (fairseq),
# $d_k^{-1/4}$ on both $Q$ and $K$ (Whisper), or this course's `attention_scores`. They give the
# same logits (the deep dive checks all five, and shows where fairseq, Whisper and T5 put the scale).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the five spellings checked, and where fairseq, Whisper and T5 put the scale

# %% tags=["deep-dive"]
Q, K = rng.standard_normal((5, 64)), rng.standard_normal((7, 64))  # (n_q, d_k), (n_k, d_k)
d_k = Q.shape[-1]
reference = Q @ K.T / np.sqrt(d_k)  # (5, 64) @ (64, 7) -> (5, 7)
for name, logits in {"scores * d_k**-0.5": (Q @ K.T) * d_k**-0.5, "(Q / √d_k) @ K.T": (Q / np.sqrt(d_k)) @ K.T,
                     "(Q d_k^-¼) @ (K d_k^-¼).T": (Q * d_k**-0.25) @ (K * d_k**-0.25).T,
                     "attention_scores(Q, K)": attention_scores(Q, K)}.items():
    verify(f"{name} = Q @ K.T / np.sqrt(d_k)", np.allclose(logits, reference, rtol=1e-12, atol=1e-12))

# %% [markdown] tags=["deep-dive"]
# - fairseq's own attention path scales the queries,
#   [`q *= self.scaling`](https://github.com/facebookresearch/fairseq/blob/3d262bb/fairseq/modules/multihead_attention.py#L602),
#   right after the query projection, with `self.scaling = self.head_dim**-0.5`.
# - OpenAI's Whisper splits it over both sides,
#   [`(q * scale) @ (k * scale).transpose(-1, -2)`](https://github.com/openai/whisper/blob/c0d2f62/whisper/model.py#L130)
#   with `scale = (n_state // self.n_head) ** -0.25`, when it does not call PyTorch's
#   `scaled_dot_product_attention`, which applies $1/\sqrt{d_k}$ itself.
# - T5 (section 5's table, scale "none") folds $1/\sqrt{d_k}$ into the initialisation of $W_Q$,
#   the matrix that turns a token's vector into its query: the same spread at initialisation,
#   not necessarily the same training (notebook 09's deep dive on T5).

# %% [markdown]
# ## 5. Which $d$? The dimension of one head
#
# Each head computes its logits from vectors of its own length, the head dimension $d_k$,
# so the scale uses that $d_k$, never $d_\text{model}$. The head dimension is often
# $d_\text{model}/h$, but not always (`sdpa_helpers.models`, each row with its source). Scaling
# by $1/\sqrt{d_\text{model}}$ instead would shrink the spread to $\sqrt{d_k/d_\text{model}}$,
# $\sqrt{64/512} \approx 0.354$ in the original Transformer (the draws `x` of section 1 have $d_k = 64$):

# %%
rows = ("Transformer base (2017)", "BERT-base", "T5 3B", "Gemma 7B")
print(models.format_table([models.model(name) for name in rows]))
sd, want, se = np.std(x / np.sqrt(512)), np.sqrt(64 / 512), np.sqrt(64 / 512) * rel_se / 2  # SE of a std ≈ std × (relative SE of the variance) / 2
verify(f"std of one head's logits scaled by 1/√512: {sd:.4g}, theory {want:.4g}, {abs(sd - want) / se:.1f} SE from theory (limit 4)",
       abs(sd - want) <= 4 * se)

# %% [markdown]
# In T5 3B and Gemma 7B, heads × head dimension ≠ $d_\text{model}$. T5's "none": it starts its
# query weights $W_Q$ (the matrix that turns a token's vector into its query) with a standard deviation
# $1/\sqrt{d_{kv}}$ times that of $W_K$ instead ($d_{kv}$: T5's name for the head dimension). The value dimension $d_v$ never enters $q\cdot k$: it
# plays no role in the scale.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the paper's other factor, $\sqrt{d_\text{model}}$ on the embeddings

# %% [markdown] tags=["deep-dive"]
# Another factor in the paper is unrelated: section 3.4 multiplies the **embedding** weights
# (the learned vectors, one per input token, that the model starts from) by $\sqrt{d_\text{model}}$,
# at the input, never the attention logits.

# %% [markdown]
# ## Summary
#
# - $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$, so the logits' standard deviation grows like
#   $\sqrt{d_k}$ unscaled, stays at 1 with $1/\sqrt{d_k}$ and shrinks with $1/d_k$.
#   Given Var(q·k) = d_k, the exponent −½ is forced; the constant is a convention.
# - At initialisation, with independent components, $1/d_k$ over-corrects: attention tends to
#   uniform as $d_k$ grows. When training correlates $q$ and $k$, the exponent $-1$ with a constant in front,
#   $a/d_k$, can be the right one (notebook 08).
# - Many spellings give the same logits. Use the head dimension $d_k$ (often, not always,
#   $d_\text{model}/h$); $d_v$ plays no role.
#
# ## Exercises
#
# Check an answer with `check(key, answer)`: numbers to three significant figures, integers exactly.
#
# **Exercise 1.** A model has $d_\text{model} = 768$ and 12 heads of dimension 64, but its
# code divides each head's logits by $\sqrt{d_\text{model}}$ instead of $\sqrt{d_k}$. With
# unit-variance components, what is the standard deviation of one head's scaled logits
# (three significant figures)?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("04.wrong_d", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The unscaled logits have variance 64. Multiplying by $1/\sqrt{768}$ gives variance
# $64/768$ and standard deviation $\sqrt{64/768} = 0.289$.
# </details>
#
# **Exercise 2 (conceptual).** At initialisation, with independent mean-0 components, which of
# these changes the factor $c$ that gives unit-variance logits? (a) $d_v$, the length of the
# value vectors; (b) the number of keys; (c) the variance of the components of $q$ and $k$;
# (d) $d_\text{model}$, with $d_k$ fixed. Answer with a letter, e.g. `answer = "a"`.

# %%
answer = None  # replace None with a letter, then run the cell
_ = check("04.what_sets_scale", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (c). $\mathrm{Var}(c\,q\cdot k) = c^2 d_k \sigma_q^2\sigma_k^2$ involves only what enters
# the dot product. The values, the number of keys and $d_\text{model}$ (beyond the head's
# $d_k$) never enter it.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3.** Probe the other choice: with the scale $1/d_k$ and unit-variance components,
# the logits' standard deviation is 1 at $d_k = 1$. At which $d_k$ has it fallen to $1/16$
# (an integer)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("04.inv_d_spread", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Section 2's table: with $c = 1/d_k$ the variance is $1/d_k$, the standard deviation $d_k^{-1/2}$. Setting
# $d_k^{-1/2} = 1/16$ gives $d_k = 16^2 = 256$. (Setting the variance $1/d_k$, not the standard
# deviation, to 1/16 would give the wrong answer 16.)
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** Some codebases multiply $q$ and $k$ each by the same factor $c$ before the
# dot product. For $d_k = 64$, which $c > 0$ gives $(cq)\cdot(ck) = q\cdot k/\sqrt{d_k}$
# (three significant figures)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("04.split_scale", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $(cq)\cdot(ck) = c^2\,(q\cdot k)$, so $c^2 = 1/8$ and $c = d_k^{-1/4} = 64^{-1/4} = 0.354$.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5.** Write `scaled_scores(Q, K)` with numpy only: the logits $QK^\top/\sqrt{d_k}$
# for `Q` of shape `(..., n_q, d_k)` and `K` of shape `(..., n_k, d_k)` (batches included).

# %% tags=["deep-dive"]
def scaled_scores(Q, K):
    ...  # your code here


_ = check("04.scaled_scores", scaled_scores)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def scaled_scores(Q, K):
#     d_k = Q.shape[-1]
#     return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
# ```
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [05 — Softmax saturation](05_softmax_saturation.ipynb)
