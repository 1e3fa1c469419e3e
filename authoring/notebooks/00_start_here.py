# %% [markdown]
# # Why √d_k? — the whole answer in ten minutes
#
# Scaled dot-product attention, the heart of a Transformer, is one line:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# Why divide by $\sqrt{d_k}$? The other nine notebooks prove each step of the answer below and
# show where it stops being true.
#
# **Learning goals**
# - Quote the paper on the scale, and its assumption.
# - Explain the chain at initialisation: spread $\sqrt{d_k}$ → one-hot softmax → vanishing gradient, and how $1/\sqrt{d_k}$ breaks it.
# - Say what $d_k$ is in a real model, and which notebook proves each step.
#
# **Prerequisites**
# - Python and a little numpy (arrays, `@`).
# - Vectors, the dot product; the words *mean* and *variance*.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, models, overview, theory
from sdpa_helpers.attention import entropy, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import overview as overview_plots
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.overview import ThreeEffectsExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} | ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. What the paper says
#
# Vaswani et al. (2017), *Attention Is All You Need*, §3.2.1
# ([arXiv:1706.03762](https://arxiv.org/abs/1706.03762)):
#
# > We suspect that for large values of $d_k$, the dot products grow large in magnitude, pushing
# > the softmax function into regions where it has extremely small gradients. To counteract this
# > effect, we scale the dot products by $\frac{1}{\sqrt{d_k}}$.
#
# and its footnote 4:
#
# > To illustrate why the dot products get large, assume that the components of $q$ and $k$ are
# > independent random variables with mean $0$ and variance $1$. Then their dot product,
# > $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$, has mean $0$ and variance $d_k$.
#
# The paper *suspects*. Its evidence is the sentence before: at large $d_k$, additive attention
# beat dot-product attention without the scale
# ([Britz et al. 2017](https://aclanthology.org/D17-1151/)). It gives a reason and one variance,
# not a proof that gradients vanish. The footnote's *assumption* can hold roughly at
# initialisation (notebook 08 checks which initialisations give it); training need not keep it.
# $d_k$ is the length of each query $q$ and key $k$.
#
# ## 2. Softmax and entropy
#
# The softmax turns logits $z_1, \dots, z_n$ into weights $p_i = e^{z_i} / \sum_j e^{z_j}$:
# positive, summing to 1, largest where the logit is largest. The **entropy**
# $H(p) = -\sum_i p_i \ln p_i$, in *nats*, says how spread out they are:
# $\ln n$ when uniform, 0 when one-hot. Here are five logits, then the same logits times 8
# (from Andrej Karpathy's lecture "Let's build GPT"):

# %%
z = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
for c in (1, 8):
    print(f"logits × {c}: weights {np.array2string(softmax(c * z), precision=3)}, entropy {entropy(softmax(c * z)):.2f} nats")
verify(f"×8 gives a peakier softmax (lower entropy; uniform would be ln 5 = {np.log(5):.2f})", entropy(softmax(8 * z)) < entropy(softmax(z)))

# %% [markdown]
# Same order, bigger gaps: the weights rush towards one-hot. So the question is how big the
# logits $q \cdot k$ get.
#
# ## 3. The spread of $q \cdot k$ grows like $\sqrt{d_k}$
#
# Under the footnote's assumption each term $q_i k_i$ has mean 0 and variance 1, so adding them
# up one at a time is a **random walk** of $d_k$ steps. Steps partly cancel: after $i$ steps a
# walk is, in root-mean-square, $\sqrt{i}$ from zero.
#
# **Predict:** after 256 steps, does a typical walk end about 16 or about 256 from zero?

# %%
walks = overview.dot_product_walks(256, 4000, rng=rng)  # (4000 walks, 256 steps): running sums of q_i k_i
verify_close("Var(q·k) at d_k = 256 (the walks' ends)", walks[:, -1].var(ddof=1), 256, se=theory.sample_variance_moments(4000, 256, theory.dot_product_excess_kurtosis(256)).std)
overview_plots.random_walks(walks).figure

# %% [markdown]
# About 16: the typical size of $q\cdot k$ is $\sqrt{d_k}$, not $d_k$. Notebook 02 proves
# $\mathrm{Var}(q\cdot k) = d_k$ step by step.
#
# ## 4. Three effects, at initialisation
#
# Give each query 16 keys, like one row of $QK^\top$. For 2000 random queries per $d_k$,
# compare the logits $q\cdot k_j$ (unscaled) with $q\cdot k_j/\sqrt{d_k}$ (scaled, same draws):
#
# 1. **spread**: the histogram of the logits;
# 2. **weights**: each query's 16 softmax weights, sorted, averaged over queries;
# 3. **gradient**: the softmax's Jacobian $J = \partial p/\partial z = \mathrm{diag}(p) - pp^\top$.
#    Every gradient flowing back to the logits (and on to $q$, $k$) is multiplied by $J$;
#    for one-hot $p$, $J = 0$. Its size: $\|J\|_F$, the root of the sum of its squared entries.
#
# **Predict:** as $d_k$ grows from 4 to 1024, does the largest of 16 unscaled weights stay
# near $1/16$ or climb towards 1? And the scaled one?

# %%
rows = [tuple(overview.effects(d, s, rng=SEED) for s in overview.COMPARED) for d in overview.SHOWN_D_KS]
bands = {s: overview.jacobian_norm_bands(overview.effects_by_d_k(overview.D_KS, s, seed=SEED)) for s in overview.COMPARED}
overview_plots.three_effects_figure(rows, overview.D_KS, bands, overview.N_KEYS)

# %% [markdown]
# Each row has 16 times the $d_k$ of the row above; on the left column's shared x axis the
# unscaled logits spread 4 times wider each row. In numbers (unscaled vs scaled):

# %%
print("\n".join(f"d_k = {u.d_k:4}: largest weight {u.max_weight.mean:.2f} vs {s.max_weight.mean:.2f}; entropy {u.entropy.mean:.2f} vs {s.entropy.mean:.2f} nats; median ‖J‖_F {np.median(u.jacobian_norm):.2g} vs {np.median(s.jacobian_norm):.2g}" for u, s in rows))
verify("unscaled: the largest weight climbs with d_k (each step > 4 SE)", all(b.max_weight.mean - a.max_weight.mean > 4 * np.hypot(a.max_weight.se, b.max_weight.se) for (a, _), (b, _) in zip(rows, rows[1:])))
verify("at d_k = 1024 the median unscaled ‖J‖_F is below 1/1000 of the scaled one", np.median(rows[-1][0].jacobian_norm) < 1e-3 * np.median(rows[-1][1].jacobian_norm))
verify("scaled: largest weight, entropy and median ‖J‖_F each vary by < 10 % from d_k = 4 to 1024", all(max(v) < 1.1 * min(v) for v in zip(*[(s.max_weight.mean, s.entropy.mean, np.median(s.jacobian_norm)) for _, s in rows])))

# %% [markdown]
# The common guess — "bigger logits, sharper attention, fine" — misses the last column.
# Unscaled, the largest weight climbs towards 1, the entropy falls towards 0, and for the typical
# (median) query the Jacobian collapses: a bounded gradient arriving at $p$ barely passes back
# (an unbounded one need not vanish: notebook 06). Queries whose top two logits are close still
# pass some (the band's upper part). Scaled, all three stay nearly the same at every $d_k$. That
# is the paper's sentence, checked at initialisation; notebooks 05 and 06 work out why.
#
# ## 5. Drag $d_k$ yourself
#
# The same four panels, for any $d_k$ from 1 to 4096. Without a kernel (on GitHub), the figure
# above is its still version.

# %% tags=["nbval-ignore-output"]
ThreeEffectsExplorer(d_k=64)

# %% [markdown]
# ## 6. The diagram, and what $d_k$ is
#
# ![Scaled dot-product attention, bottom up: MatMul of Q and K, Scale, Mask (optional), SoftMax, MatMul with V.](figures/sdpa_diagram.png)
#
# The *Scale* box is this course's subject; the mask comes in notebook 07.
#
# $d_k$ is the **head dimension**: a layer runs $h$ attention heads side by side, each with
# queries and keys of length $d_k$. It is often $d_\text{model}/h$ ($512/8 = 64$ in the
# paper), but not always:

# %%
print(models.format_table([models.model(n) for n in ("Transformer base (2017)", "BERT-base", "T5 3B", "T5 11B", "Gemma 7B")]))
verify("head_dim ≠ d_model/h for T5 3B, T5 11B and Gemma 7B", not any(models.model(n).head_dim_is_d_model_over_h for n in ("T5 3B", "T5 11B", "Gemma 7B")))

# %% [markdown]
# (T5 instead folds $1/\sqrt{d_{kv}}$ into $W_Q$'s initialisation.)
#
# ## 7. The map of the course
#
# | # | notebook | which step it proves |
# |---|---|---|
# | 01 | [Dot products](01_dot_products.ipynb) | $q\cdot k$ and $QK^\top$; lengths and an angle |
# | 02 | [Mean and variance of q·k](02_mean_and_variance.ipynb) | $\mathrm{Var}(q\cdot k) = d_k$, derived; what it needs |
# | 03 | [Small experiments mislead](03_small_experiments.ipynb) | how noisy a small experiment is |
# | 04 | [Why √d_k and not d_k](04_why_sqrt_dk.ipynb) | $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$: the power $-\tfrac12$ |
# | 05 | [Softmax saturation](05_softmax_saturation.ipynb) | spread → one-hot; $H \approx \ln n - \sigma^2/2$ while $\sigma^2 \lesssim \ln n$ |
# | 06 | [Vanishing gradients](06_vanishing_gradients.ipynb) | one-hot → $J \to 0$ |
# | 07 | [Attention end to end](07_attention_end_to_end.ipynb) | the whole mechanism: masks, heads |
# | 08 | [Does unit variance hold?](08_does_unit_variance_hold.ipynb) | initialisations, correlated $q$ and $k$, real models |
# | 09 | [Training with and without the scale](09_training_with_and_without_scale.ipynb) | training; the scale as a reparametrisation |

# %% [markdown]
# ## Summary
#
# - The paper suspects that large dot products push the softmax where its gradients are tiny;
#   its footnote assumes independent, mean-0, variance-1 components.
# - Then, at initialisation, $q\cdot k$ is a random walk with spread $\sqrt{d_k}$. Unscaled, the
#   softmax goes nearly one-hot (largest of 16 weights 0.96 at $d_k = 1024$) and, for a typical
#   query, its Jacobian nearly vanishes.
# - Dividing by $\sqrt{d_k}$ keeps spread, weights and Jacobian nearly steady at every $d_k$.
# - $d_k$ is the head dimension, often but not always $d_\text{model}/h$. Training can break the
#   assumption (notebook 08).
#
# ## Exercises
#
# `check(key, answer)` prints ✅ or ❌ with a hint.
#
# **Exercise 1.** BERT-base has $d_\text{model} = 768$ and 12 heads of size $d_\text{model}/h$.
# What is its $d_k$? (an integer)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.bert_d_k", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $d_k = 768/12 = 64$, as in the original Transformer.
# </details>
#
# **Exercise 2.** With $d_k = 256$ and independent unit-variance components, what is the standard
# deviation of the *unscaled* $q\cdot k$? (an integer)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.std_unscaled", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q\cdot k) = d_k = 256$, so the standard deviation is $\sqrt{256} = 16$: the walks of §3.
# </details>
#
# **Exercise 3 (predict).** At initialisation, as $d_k$ doubles, does the largest of 16 softmax
# weights go **"up"** (towards 1), **"down"** (towards 1/16) or stay the **"same"**, without the
# scale and with it? Answer with a pair, e.g. `("down", "up")`.

# %%
answer = None  # replace None with your pair of answers
_ = check("00.predict_largest_weight", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# `("up", "same")`. Unscaled, the logits spread $\sqrt{2}$ times wider, so the largest one pulls
# further ahead of the rest and takes more of the weight. Scaled, the logits keep spread 1 and
# the weights keep nearly the same distribution (exactly the same only in the limit where
# $q\cdot k/\sqrt{d_k}$ is normal; the figure shows 0.23 at $d_k = 4$ and 0.25 from 64 on).
# </details>
#
# **Exercise 4 (design).** Let the components of $q$ and $k$ be independent with mean 0 and
# variance $\sigma^2 = 4$. At $d_k = 64$, which factor $c$ makes the logits
# $c\,(q\cdot k)$ have variance 1? (three significant figures)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.scale_for_variance_4", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Each term $q_i k_i$ has variance $\sigma^2\cdot\sigma^2 = 16$, so $\mathrm{Var}(q\cdot k) = 64\cdot 16 = 1024$
# and $c = 1/\sqrt{1024} = 1/32 \approx 0.0313$. The paper's $1/\sqrt{d_k} = 0.125$ would leave variance 16:
# $1/\sqrt{d_k}$ is right only for unit-variance components.
# </details>
#
# ---
# **Next:** [01 — Dot products](01_dot_products.ipynb)
