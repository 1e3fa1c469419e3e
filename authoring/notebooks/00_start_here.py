# %% [markdown]
# # Why √d_k? — the whole answer, in brief
#
# Scaled dot-product attention is one line:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# Why divide by $\sqrt{d_k}$? The answer is three sentences (after section 2). This notebook shows
# the first two at initialisation; 01–08 prove or measure them and say where they stop, and 09
# measures the third.
#
# **Learning goals**
# - Say what queries, keys, values and the softmax do.
# - State the answer's three parts, **spread**, **commitment**, **speed**, and see the first two at initialisation.
# - Say what $d_k$ is, and which notebook proves or measures each part.
#
# **Prerequisites**
# - Python, a little numpy (arrays, `@`).
# - Vectors, the dot product; the words *mean* and *variance*.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, models, overview
from sdpa_helpers.attention import entropy, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import overview as overview_plots
from sdpa_helpers.verify import verify
from sdpa_helpers.widgets.overview import ThreeEffectsExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} | ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. What attention is for
#
# In a Transformer each word gathers information from others: in *the cat sat on the mat*,
# *sat* needs to know who sat. The word's **query** $q$ asks ("a noun that can act?"), each word's
# **key** $k_j$ advertises what it offers, its **value** $v_j$ is what it delivers. The **logit** $z_j = q\cdot k_j$ scores how well key $j$ answers; the softmax turns
# logits into **weights** $p_j = e^{z_j}/\sum_i e^{z_i}$, positive, summing to 1; the output is
# $\sum_j p_j v_j$. The model makes $q$, $k$ (length $d_k$) and $v$ from the words. The
# **entropy** $H = -\sum_j p_j \ln p_j$ measures how spread the weights are: $\ln n$ when all $n$
# are equal, 0 when one takes all. A toy with $d_k = 2$:

# %%
words = ["cat", "mat", "on"]
K = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])  # keys, one row per word: (is a noun, can act)
q = np.array([1.0, 1.0])  # the query of "sat": a noun that can act
z = K @ q  # logits: (3, 2) @ (2,) -> (3,), one per key
for c in (1, 8):
    p = softmax(c * z)
    print(f"logits × {c}: {c * z} → weights", ", ".join(f"{w} {x:.3f}" for w, x in zip(words, p)), f"| entropy {entropy(p):.2f}")

# %% [markdown]
# *cat* wins; *mat* still gets a quarter. Logits ×8 make a hard lookup: *cat* takes
# all, the weights are **one-hot** (one 1, the rest 0). How big do logits $q\cdot k$ get?
#
# ## 2. What the paper says
#
# Vaswani et al. (2017), [*Attention Is All You Need*](https://arxiv.org/abs/1706.03762), §3.2.1:
#
# > We suspect that for large values of $d_k$, the dot products grow large in magnitude, pushing
# > the softmax function into regions where it has extremely small gradients. To counteract this
# > effect, we scale the dot products by $\frac{1}{\sqrt{d_k}}$.
#
# and its footnote 4:
#
# > … assume that the components of $q$ and $k$ are independent random variables with mean $0$ and variance $1$. Then their dot product,
# > $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$, has mean $0$ and variance $d_k$.
#
# A **gradient** measures how much a result changes when an input moves; training follows
# gradients. The paper *suspects*; it measures none. Its assumption can hold at **initialisation**,
# when $q$ and $k$ are random (notebook 08).
#
# The answer's words: a logit's **spread** is its standard deviation; **normal** components follow the
# bell curve. A query that **puts over 0.9 on one key** looks like the toy's ×8 row: one key takes almost
# all. A key's logit $z_j$ gets its gradient through the output $o = \sum_j p_j v_j$: nudge $z_j$ by a
# small step and $o$ moves by about the step times $p_j (v_j - o)$. So if the values are **bounded**
# (never huge), a key of weight near 0 gets almost none of the gradient arriving at the output (a
# two-key example: deep dive "why ignored keys learn little"). A **head** is one attention computation
# (section 5); **SGD** and **Adam** step against the gradient (notebook 09).

# %% [markdown]
# > **The answer, in three sentences.**
# >
# > 1. **Spread.** If $q$ and $k$ are independent, each with independent components of mean 0 and
# >    variance 1, then $q\cdot k$ has mean 0 and variance $d_k$, and $1/\sqrt{d_k}$ is the one power of
# >    $d_k$ that keeps its spread at 1.
# > 2. **Commitment.** If, in addition, the components are normal and each query has 16 independent keys, then,
# >    unscaled, from $d_k = 64$ up most queries put over 0.9 on one random key, and, if the values are
# >    bounded, most keys they ignore get almost none of the gradient arriving at the output; scaled,
# >    the weights stay soft.
# > 3. **Speed.** If a head is trained with SGD or Adam on notebook 09's task, each at its best rate on
# >    09's grid, then the unscaled head learns but needs more steps as $d_k$ grows from 16 to 1024;
# >    the scaled head does not.
# >
# > Each sentence holds under its condition; notebooks 05, 06, 08 and 09 measure where each one
# > stops, and 09 lists it under the answer at its end.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the paper's evidence

# %% [markdown] tags=["deep-dive"]
# The sentence before the quote is the paper's only evidence: for small $d_k$ dot-product
# attention and *additive* attention (an older design that scores a key with a small neural
# network, $w^\top \tanh(W_q q + W_k k)$, instead of a dot product) performed alike, while for
# larger $d_k$ additive attention beat dot-product attention *without* scaling
# ([Britz et al. 2017](https://aclanthology.org/D17-1151/)). No comparison of the scaled
# version with either is reported. That compares two designs; it measures no gradients: the suspicion is checked below.

# %% [markdown] predict_answer=["under a ten-thousandth", "1e-5", "1e-05", "10^{-5}"]
# ## 3. The chain at initialisation
#
# Give each of 2000 random queries 16 keys, all components independent and normal, mean 0, variance 1. At $d_k$ = 4, 64, 1024 compare logits $q\cdot k_j$
# (unscaled) with $q\cdot k_j/\sqrt{d_k}$ (scaled, same draws): their **spread**;
# the **weights**, each query's 16 sorted, then averaged; and the softmax's **Jacobian** $J$, through
# which gradients reach $q$ and $k$: how much each $p_i$ moves when a $z_j$ moves (notebook 06).
# $J$ is a 16 × 16 table, one entry per pair $(i, j)$; its size $\|J\|$ is the root of the sum of its
# squared entries.
#
# **Predict:** at $d_k = 1024$, is the unscaled median $\|J\|$ about half the scaled one, a hundredth, or under a ten-thousandth?

# %% alt="Notebook 00's figure, three rows for d_k = 4, 64 and 1024. Left: the unscaled logits spread 2, 8 and 32 wide; next: the scaled logits keep spread 1. Third column: the mean largest of 16 sorted softmax weights climbs from 0.42 to 0.96 unscaled but stays near 0.25 scaled (0.23 at d_k = 4). Right: the median size of the softmax's Jacobian against d_k on a log scale: about 0.3 scaled at every d_k, unscaled falling from 0.33 at d_k = 4 to about 1e-5 at d_k = 1024 and 1e-10 at 4096."
rows = [tuple(overview.effects(d, s, rng=SEED) for s in overview.COMPARED) for d in overview.SHOWN_D_KS]
bands = {s: overview.jacobian_norm_bands(overview.effects_by_d_k(overview.D_KS, s, seed=SEED)) for s in overview.COMPARED}
verify("unscaled, row by row: the largest weight rises and the median size of J falls", overview.chain_holds(rows))
j_unscaled, j_scaled = (np.median(e.jacobian_norm) for e in rows[-1])  # d_k = 1024
large = np.mean(rows[-1][0].jacobian_norm > 0.1)  # unscaled queries whose J keeps a size above 0.1
print(f"d_k = 1024, median size of J: unscaled {j_unscaled:.2g}, scaled {j_scaled:.2g}; unscaled above 0.1: {large:.0%} of queries")
overview_plots.three_effects_figure(rows, overview.D_KS, bands, overview.N_KEYS)

# %% [markdown]
# Under a ten-thousandth: unscaled, the spread grows like $\sqrt{d_k}$ (2, 8, 32; deep dive), the largest
# weight nears 1 (at one-hot weights a small nudge to a logit moves no weight: $J = 0$) and the median $\|J\|$ collapses, to about $10^{-5}$ at $d_k = 1024$
# against 0.3 scaled. At $d_k = 1024$ the shaded band (the middle 80 % of queries) reaches far above the median: one unscaled
# query in six (16 %), whose two largest logits nearly tie, keeps $\|J\|$ above 0.1. Scaled, all
# three move a few per cent from $d_k = 4$ to 4096 (deep dive).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: drag $d_k$ yourself

# %% tags=["nbval-ignore-output", "deep-dive"] alt="Explorer of the figure above with a slider on d_k from 1 to 4096 (powers of two), starting at d_k = 64: unscaled logits spread 8 wide, the unscaled largest of 16 weights 0.84 against 0.25 scaled, and the unscaled median size of J 0.11 against 0.30 scaled, marked on the curves against d_k."
ThreeEffectsExplorer(d_k=64)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how far the scaled weights drift
#
# A quantity's drift is its largest value over $d_k$ = 4 … 4096 divided by its smallest, minus 1,
# on 2000 queries: sampling noise adds to it (the spread's is all noise: theory 0). Over 20 seeds
# (median, range), then the mean largest weight from 200,000 queries at three $d_k$:

# %% tags=["deep-dive"]
drifts = np.array([overview.scaled_drifts(seed=s) for s in range(20)])  # (seed, quantity)
verify("scaled: spread, largest weight and size of J each drift below 6 % (median of 20 seeds); the smallest weight more",
       np.median(drifts, 0)[:3].max() < 0.06 < np.median(drifts[:, 3]))
for name, col in zip(("spread", "largest weight", "size of J", "smallest weight"), drifts.T):
    print(f"{name:>15}: median {np.median(col):.1%}, range {col.min():.1%} to {col.max():.1%}")
# one d_k at a time, keeping only the mean largest weight (the 200,000 × 16 logits and weights are freed)
pooled = {d: overview.effects(d, "sqrt", n_queries=200_000, rng=SEED).max_weight for d in (4, 16, 4096)}
print("mean largest weight, 200,000 queries:", ", ".join(f"d_k = {d}: {w.mean:.4f}" for d, w in pooled.items()))
verify("most of the drift lies below d_k = 16", pooled[16].mean - pooled[4].mean > pooled[4096].mean - pooled[16].mean)

# %% [markdown] tags=["deep-dive"]
# Why is the largest weight a little smaller at $d_k = 4$? Not because the scaled logits, sums of
# only 4 products $q_ik_i$, are not normal: that alone pushes it *up*. Given the query $q$, its 16
# scaled logits $q\cdot k_j/\sqrt{d_k}$ are exactly normal, with one spread $\|q\|/\sqrt{d_k}$ that all
# 16 share (the chain above draws its logits so), and at small $d_k$ that spread is on average below
# 1. Four sets of 16 logits at $d_k = 4$, 100,000 queries each; the first two differ only in whether
# the 16 keys share one query:

# %% tags=["deep-dive"]
from sdpa_helpers.sampling import mc_estimate

g, n = make_rng(SEED), 100_000  # a generator of its own: the cells below draw what they drew before
one_q = sum(g.standard_normal((n, 1)) * g.standard_normal((n, 16)) for _ in range(4)) / 2  # q_i k_ji: one q, 16 keys
new_q = sum(g.standard_normal((n, 16)) * g.standard_normal((n, 16)) for _ in range(4)) / 2  # a new q for every key
normal = g.standard_normal((n, 16))  # (n, 16): normal logits, spread exactly 1
length = np.sqrt(g.chisquare(4, (n, 1)) / 4)  # (n, 1): a query's ‖q‖/√d_k
logits = {"one q for its 16 keys": one_q, "a new q for every key (not normal)": new_q,
          "normal, spread 1": normal, "normal × the query's ‖q‖/√d_k": length * normal}
largest = {name: mc_estimate(softmax(z).max(axis=1)) for name, z in logits.items()}
for name, w in largest.items():
    print(f"{name:>34}: mean largest weight {w.mean:.4f} ± {w.se:.4f}")
print(f"mean of ‖q‖/√d_k at d_k = 4: {length.mean():.2f}")
del one_q, new_q, normal, logits  # 50 MB the kernel need not keep
a, b, c, d = largest.values()
verify("not normal alone: a new q per key gives a larger largest weight than normal logits", b.mean - c.mean > 4 * np.hypot(b.se, c.se))
verify("one shared q: normal × ‖q‖/√d_k gives the same, both below normal logits",
       abs(a.mean - d.mean) < 4 * np.hypot(a.se, d.se) and c.mean - a.mean > 4 * np.hypot(a.se, c.se))

# %% [markdown] tags=["deep-dive"]
# Logits that are not normal, each key with a $q$ of its own, give a *larger* largest weight than
# normal logits (0.273 against 0.247). What lowers it is the shared spread: at $d_k = 4$ a query's
# $\|q\|/\sqrt{d_k}$ is 0.94 on average, and normal logits times that spread give what one shared $q$
# gives (0.234 and 0.235). As $d_k$ grows, $\|q\|/\sqrt{d_k}$ settles near 1; from $d_k = 16$ on the
# largest weight barely moves.


# %% [markdown] tags=["deep-dive"]
# ## Deep dive: $q\cdot k$ as a random walk
#
# Under the footnote's assumption each term $q_i k_i$ has mean 0 and variance 1, so adding the
# terms up one at a time is a **random walk** of $d_k$ steps. Steps partly cancel: after $i$ steps
# a walk is, in root-mean-square, $\sqrt{i}$ from zero, not $i$. Here are 4000 walks of 256 steps
# (five drawn), and the variance of where they end, against $d_k = 256$:

# %% tags=["deep-dive"] alt="Five random walks q_1 k_1 + ... + q_i k_i over 256 steps, drawn against a grey band of ±sqrt(i) (one standard deviation: from -16 to +16 at step 256) and dotted curves at ±2 sqrt(i); most walks stay within the band, one ends near -33 and one near +18, none near ±256."
walks = overview.dot_product_walks(256, 4000, rng=rng)  # (4000 walks, 256 steps): running sums of q_i k_i
end = overview.walk_end_variance(walks)
verify(f"Var(q·k) of the 4000 walks' ends is {end.var:.0f}: matches theory ({end.theory:.0f}) within simulation noise",
       abs(end.var - end.theory) <= 4 * end.se, f"a simulation of 4000 walks wobbles by about {end.se:.0f}")
overview_plots.random_walks(walks).figure

# %% [markdown]
# ## 4. At the sizes real models use
#
# Models often use $d_k$ = 64 or 128 (section 5). In numbers, now the **median** query's, not the
# figure's means (the queries that have not committed pull a mean down); the last column is the median $\|J\|$, unscaled ÷ scaled:

# %%
heads = [overview.compare(d, rng=SEED) for d in overview.HEAD_D_KS]  # 16 keys, unscaled and scaled on the same draws
print(overview.comparison_table(heads))
verify("unscaled: most queries above 0.9; the median size of J 2 to 4 and 6 to 13 times smaller than scaled",
       all(c.committed > 0.5 for c in heads) and 2 < 1 / heads[0].ratio < 4 and 6 < 1 / heads[1].ratio < 13)

# %% [markdown] tags=["end-of-chain"]
# Part 2, **commitment**: unscaled at $d_k$ = 64 and 128, most queries put over 0.9 on one random key
# (56 %, 67 %), and the median $\|J\|$ is about 3× and 9× smaller than scaled (this draw: 2.7×,
# 8.7×; 05 repeats it over 10 seeds).
#
# So the typical unscaled query passes less gradient to its logits. What then reaches $q$ and $k$ has a
# twist, which 06 and 09 explain.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why ignored keys learn little
#
# Two keys with logits 5 and 0 and one-number values $v = (1, -1)$. Nudge key 2's logit by a small
# step: how far does the output $o = p_1 v_1 + p_2 v_2$ move, and is it $p_2 (v_2 - o)$ times the step?

# %% tags=["deep-dive"]
z, v, step = np.array([5.0, 0.0]), np.array([1.0, -1.0]), 1e-4  # two keys' logits and values
p = softmax(z)
o = p @ v  # the output
moved = softmax(z + np.array([0.0, step])) @ v - o  # key 2's logit nudged by the step
rule = p[1] * (v[1] - o) * step
print(f"weights {p.round(3)}, output {o:.3f}; the output moves {moved:.2e}, p_2 (v_2 - o) × step = {rule:.2e}")
verify("the output moves by p_2 (v_2 - o) times the step, to 1 %", abs(moved - rule) < 0.01 * abs(rule))

# %% [markdown] tags=["deep-dive"]
# Key 2's small weight multiplies everything that reaches it: the loss's gradient at the output,
# times $v_2 - o$, times $p_2$. With bounded values, $v_2 - o$ is bounded too, so a weight near 0
# means almost none of the gradient arriving at the output. In general, the gradient reaching logit
# $z_j$ (and through it key $k_j$, since $z_j = q\cdot k_j$) is column $j$ of $J$ dotted with $g$, how the
# loss depends on the weights. That column is $p_j(e_j - p)$ ($e_j$: 1 at place $j$, 0 elsewhere): every
# entry carries $p_j$. In attention $g_j = v_j\cdot\partial L/\partial o$, so with bounded values a key
# with weight ≈ 0 gets almost none of the gradient arriving at the output, even when attending to it
# would lower the loss. A loss on the weights themselves can make $g$ large (notebook 06, Exercise 1).
# How small are the weights of the keys a committed query ignores, at $d_k = 64$?

# %% tags=["deep-dive"]
w = heads[0].unscaled.sorted_weights  # d_k = 64, unscaled: each query's 16 weights, largest first
ignored = w[w[:, 0] > overview.COMMITTED, 1:]  # the 15 other keys of every query above 0.9
light = np.mean(ignored < 1e-3)
print(f"queries above 0.9: {light:.0%} of the keys they ignore weigh under 0.001 (median weight {np.median(ignored):.0e});",
      f"scaled, the median weight is {np.median(heads[0].scaled.sorted_weights):.3f}")
verify("most keys a committed query ignores weigh under 0.001", light > 0.5)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: commitment with many keys
#
# A long text gives each query many keys. With 1024 keys a query's logits still spread
# $\sqrt{d_k}$ wide, but more of them crowd near the top, so fewer queries put over 0.9 on one key.
# The share of queries over 0.9, unscaled (one seed of 2,000 queries):

# %% tags=["deep-dive"]
share = {d: overview.compare(d, overview.MANY_KEYS, rng=SEED).committed for d in (64, 256, 1024)}  # 1024 keys
print("1024 keys, unscaled, queries over 0.9:", ", ".join(f"d_k = {d}: {s:.0%}" for d, s in share.items()))
verify("1024 keys: under half the queries over 0.9 at d_k = 64, and the share grows with d_k",
       share[64] < 0.5 and share[64] < share[256] < share[1024])

# %% [markdown] tags=["deep-dive"]
# Weaker at $d_k = 64$ than with 16 keys (29 % against 56 %), and growing with $d_k$. Notebook 05
# measures saturation with many keys; what many keys do to the gradient, notebooks 06 and 09.

# %% [markdown]
# ## 5. The diagram, and what $d_k$ is
#
# ![Bottom up: MatMul Q, K; Scale; Mask (optional); SoftMax; MatMul V.](figures/sdpa_diagram.png)
#
# *Mask* hides keys a word may not see (notebook 07). $d_k$ is the **head dimension**: a layer runs
# $h$ **heads**, attentions side by side, often $d_k = d_\text{model}/h$: $512/8 = 64$ in the paper.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: $d_k$ in real models
#
# The head dimension of a few published models, against $d_\text{model}/h$:

# %% tags=["deep-dive"]
print(models.format_table([models.model(n) for n in ("Transformer base (2017)", "BERT-base", "T5 3B", "T5 11B", "Gemma 7B")]))
verify("head_dim ≠ d_model/h for T5 3B, T5 11B and Gemma 7B", not any(models.model(n).head_dim_is_d_model_over_h for n in ("T5 3B", "T5 11B", "Gemma 7B")))

# %% [markdown] tags=["deep-dive"]
# T5 does not scale its logits; it folds $1/\sqrt{d_{kv}}$ into the initialisation of $W_Q$ instead.

# %% [markdown]
# ## 6. Course map
#
# | # | notebook | what it does |
# |---|---|---|
# | 01 | [Dot products](01_dot_products.ipynb) | tools: $q\cdot k$, $QK^\top$ |
# | 02 | [Mean and variance](02_mean_and_variance.ipynb) | proves part 1: $\mathrm{Var}(q\cdot k) = d_k$ |
# | 03 | [Small experiments](03_small_experiments.ipynb) | how much a simulation can say |
# | 04 | [Why √d_k](04_why_sqrt_dk.ipynb) | proves part 1's "one power" |
# | 05 | [Saturation](05_softmax_saturation.ipynb) | measures part 2, with 16 and 1024 keys |
# | 06 | [Vanishing gradients](06_vanishing_gradients.ipynb) | proves part 2's gradient; where it stops |
# | 07 | [End to end](07_attention_end_to_end.ipynb) | tools: masks, heads |
# | 08 | [Unit variance?](08_does_unit_variance_hold.ipynb) | measures when part 1's condition holds |
# | 09 | [Training](09_training_with_and_without_scale.ipynb) | measures part 3 on one task |

# %% [markdown]
# ## Summary
#
# - The answer: the box after section 2. Say it in three sentences, then compare.
#
# ## Exercises
#
# *Your edits:* on Binder, download the notebook (File → Download) before you leave; the README says
# how to keep them through a `git pull`.
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
# **Exercise 2.** At $d_k = 256$, with independent unit-variance components, what is the spread
# of the *unscaled* $q\cdot k$? (an integer)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.std_unscaled", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q\cdot k) = d_k = 256$, so the spread is $\sqrt{256} = 16$ (the random walks of
# the deep dive end about 16 from zero, not 256).
# </details>
#
# **Exercise 3 (conceptual).** From $d_k = 64$ to 1024 in the figure, does the mean largest
# weight, unscaled and scaled, rise or fall by over 10 % (**"up"**, **"down"**) or not (**"same"**)?
# Answer a pair, e.g. `("down", "up")`.

# %%
answer = None  # replace None with your pair of answers
_ = check("00.predict_largest_weight", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# `("up", "same")`: unscaled 0.84 → 0.96 (+14 %), scaled 0.25 → 0.25. Unscaled, each 16× in
# $d_k$ spreads the logits 4× wider, so the largest pulls further ahead of the rest. Scaled, the
# logits keep spread 1 and the weights keep nearly the same distribution. Nearly: at small $d_k$ a
# query's 16 logits share one spread, $\|q\|/\sqrt{d_k}$, which is on average a little below 1
# (0.94 at $d_k = 4$), so the largest weight comes out a little smaller (0.23 at $d_k = 4$; deep dive
# "how far the scaled weights drift").
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 4.** Components of $q$ have variance 4, those of $k$ variance 1 (independent,
# mean 0), $d_k = 512$. Which $c$ gives $c\,(q\cdot k)$ spread 1? (three significant figures)

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("00.scale_for_variance_4", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# A component of variance 4 is a unit-variance one times 2 (spread $\sqrt 4 = 2$), so
# $q\cdot k = 2\,(q'\cdot k)$ with unit components: spread $2\sqrt{512} = 45.3$, and
# $c = 1/45.3 = 0.0221$, not the paper's $1/\sqrt{512} = 0.0442$. In general
# $\mathrm{Var}(q\cdot k) = d_k\,\sigma_q^2\sigma_k^2$ (notebook 02), so $1/\sqrt{d_k}$ is right
# whenever $\sigma_q^2\sigma_k^2 = 1$, not only for unit-variance components.
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [01 — Dot products](01_dot_products.ipynb)
