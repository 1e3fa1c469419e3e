# %% [markdown]
# # Why √d_k? — the whole answer, in brief
#
# Scaled dot-product attention is one line:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# Why divide by $\sqrt{d_k}$? The answer has three parts (after section 2); this notebook shows
# them, 01–09 prove them.
#
# **Learning goals**
# - Say what queries, keys, values and the softmax do.
# - State the answer's three parts, **spread**, **commitment**, **speed**, and see the first two at initialisation.
# - Say what $d_k$ is, and where each part is proved.
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
# $\sum_j p_j v_j$. The model learns to make $q$, $k$, $v$ (length $d_k$) from the words. The
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
# the start of training, when $q$ and $k$ are random (notebook 08).

# %% [markdown]
# > **The answer, in three parts.**
# >
# > 1. **Spread.** With independent mean-0, variance-1 components, as at initialisation, $q\cdot k$
# >    has variance $d_k$: the logits spread $\sqrt{d_k}$ wide. Multiplying by $1/\sqrt{d_k}$ (and by
# >    no other power of $d_k$) brings the spread back to 1 for every $d_k$.
# > 2. **Commitment.** Unscaled, already at the head sizes real models use ($d_k$ = 64, 128), the
# >    softmax over a few keys (16, as here) puts nearly all of most queries' weight on one key the
# >    random draws picked. With many keys (1024) this commitment is weaker at $d_k = 64$ and grows with $d_k$.
# >    So each query starts committed to a random key. Every key it ignores gets a gradient
# >    multiplied by its near-zero weight: almost no learning signal. Scaled, attention starts soft
# >    and every key gets signal.
# > 3. **Speed, not possibility.** The unscaled gradient is not smaller everywhere, and unscaled
# >    heads still learn, but they slow down as $d_k$ grows (at small $d_k$ or small learning rates
# >    they can even be faster; notebook 09). What the scale buys is a start, and a training speed
# >    at a fixed learning rate $\eta$ (the size of each training step), that do not depend on $d_k$
# >    (for $d_k \ge 16$ and $\eta$ from 0.1 to 1 in notebook 09's grid).
# >
# > Parts 1 and 2 are at initialisation; part 3 is measured over training on 09's task.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the paper's evidence

# %% [markdown] tags=["deep-dive"]
# The sentence before the quote is the paper's only evidence: for small $d_k$ dot-product
# attention and *additive* attention (an older design that scores a key with a small neural
# network, $w^\top \tanh(W_q q + W_k k)$, instead of a dot product) performed alike, while for
# larger $d_k$ additive attention beat dot-product attention *without* scaling
# ([Britz et al. 2017](https://aclanthology.org/D17-1151/)). No result is reported for the scaled
# version. That compares two designs; it measures no gradients: the suspicion is checked below.

# %% [markdown] predict_answer=["under a ten-thousandth"]
# ## 3. The chain at initialisation
#
# Give each of 2000 random queries 16 keys, all components independent and normal, mean 0, variance 1. At $d_k$ = 4, 64, 1024 compare logits $q\cdot k_j$
# (unscaled) with $q\cdot k_j/\sqrt{d_k}$ (scaled, same draws): their **spread** (standard deviation);
# the **weights**, each query's 16 sorted, then averaged; and the softmax's **Jacobian** $J$, through
# which gradients reach $q$ and $k$: how much each $p_i$ moves when a $z_j$ moves (notebook 06).
# $J$ is a 16 × 16 table, one entry per pair $(i, j)$; its size $\|J\|$ is the root of the sum of its
# squared entries.
#
# **Predict:** at $d_k = 1024$, is the unscaled median $\|J\|$ about half the scaled one, a hundredth, or under a ten-thousandth?

# %% tags=["readme-figure"] alt="Notebook 00's figure, three rows for d_k = 4, 64 and 1024. Left: the unscaled logits spread 2, 8 and 32 wide; next: the scaled logits keep spread 1. Third column: the mean largest of 16 sorted softmax weights climbs from 0.42 to 0.96 unscaled but stays near 0.25 scaled (0.23 at d_k = 4). Right: the median size of the softmax's Jacobian against d_k on a log scale: about 0.3 scaled at every d_k, unscaled falling from 0.33 at d_k = 4 to about 1e-5 at d_k = 1024 and 1e-10 at 4096."
rows = [tuple(overview.effects(d, s, rng=SEED) for s in overview.COMPARED) for d in overview.SHOWN_D_KS]
bands = {s: overview.jacobian_norm_bands(overview.effects_by_d_k(overview.D_KS, s, seed=SEED)) for s in overview.COMPARED}
verify("unscaled, row by row: the largest weight rises and the median size of J falls", overview.chain_holds(rows))
j_unscaled, j_scaled = (np.median(e.jacobian_norm) for e in rows[-1])  # d_k = 1024
print(f"d_k = 1024, median size of J: unscaled {j_unscaled:.2g}, scaled {j_scaled:.2g}")
overview_plots.three_effects_figure(rows, overview.D_KS, bands, overview.N_KEYS)

# %% [markdown]
# Under a ten-thousandth: unscaled, the spread grows like $\sqrt{d_k}$ (2, 8, 32; deep dive), the largest
# weight nears 1 (one-hot weights give $J = 0$) and the median $\|J\|$ collapses, to about $10^{-5}$ at $d_k = 1024$
# against 0.3 scaled (the shaded band: a few queries, near ties, keep a large $J$). Scaled, the spread, the
# largest weight and $\|J\|$ move a few per cent from $d_k = 4$ to 4096, the small weights more
# (deep dive).

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
pooled = {r.d_k: r.max_weight.mean for r in overview.effects_by_d_k((4, 16, 4096), "sqrt", n_queries=200_000, seed=SEED)}
print("mean largest weight, 200,000 queries:", ", ".join(f"d_k = {d}: {w:.4f}" for d, w in pooled.items()))
verify("most of the drift lies below d_k = 16", pooled[16] - pooled[4] > pooled[4096] - pooled[16])

# %% [markdown] tags=["deep-dive"]
# At small $d_k$ the scaled logits, sums of a few products $q_ik_i$, are not yet normal, and the
# largest weight comes out a little smaller; from $d_k = 16$ on it barely moves.


# %% [markdown] tags=["deep-dive"]
# ## Deep dive: $q\cdot k$ as a random walk
#
# Under the footnote's assumption each term $q_i k_i$ has mean 0 and variance 1, so adding the
# terms up one at a time is a **random walk** of $d_k$ steps. Steps partly cancel: after $i$ steps
# a walk is, in root-mean-square, $\sqrt{i}$ from zero, not $i$. Here are 4000 walks of 256 steps
# (five drawn), and the variance of where they end, against $d_k = 256$:

# %% tags=["deep-dive"] alt="Five random walks q_1 k_1 + ... + q_i k_i over 256 steps, drawn against a grey band of ±sqrt(i) (one standard deviation, 16 wide at step 256) and dotted curves at ±2 sqrt(i); most walks stay within the band, one ends near -33 and one near +18, none near ±256."
walks = overview.dot_product_walks(256, 4000, rng=rng)  # (4000 walks, 256 steps): running sums of q_i k_i
end = overview.walk_end_variance(walks)
verify(f"Var(q·k) of the 4000 walks' ends is {end.var:.0f}: matches theory ({end.theory:.0f}) within simulation noise",
       abs(end.var - end.theory) <= 4 * end.se, f"a simulation of 4000 walks wobbles by about {end.se:.0f}")
overview_plots.random_walks(walks).figure

# %% [markdown]
# ## 4. At the sizes real models use
#
# Models often use $d_k$ = 64 or 128 (section 5). The same comparison in numbers; the last column
# is the median $\|J\|$, unscaled ÷ scaled:

# %%
heads = [overview.compare(d, rng=SEED) for d in overview.HEAD_D_KS]  # 16 keys, unscaled and scaled on the same draws
many = overview.compare(64, overview.MANY_KEYS, rng=SEED)  # 1024 keys
print(overview.comparison_table(heads), f"1024 keys, d_k = 64: median size of J, unscaled ÷ scaled = {many.ratio:.1f}", sep="\n")
verify("unscaled: most queries above 0.9; with 16 keys J is smaller than scaled, with 1024 larger", all(c.committed > 0.5 for c in heads) and 2 < 1 / heads[0].ratio < 4 and 6 < 1 / heads[1].ratio < 13 and many.ratio > 1)

# %% [markdown] tags=["end-of-chain"]
# Part 2, **commitment**: unscaled at $d_k$ = 64 and 128, most queries put over 0.9 on one random key (56 %, 67 %).
#
# This refines part 3 of the answer (**speed, not possibility**): the unscaled gradient is not smaller
# everywhere. Look at one factor of that gradient, the softmax's $\|J\|$: with 16 keys it is about 3× and 9× smaller (on this draw 2.7× and 8.7×; notebook 05
# repeats it over 10 seeds); with 1024 keys at $d_k = 64$ it is 6.0×
# *larger*: scaled, 1024 keys share the weight so evenly that nudging one logit barely moves any
# weight ($\|J\|$ is of order $1/\sqrt{n}$: $\sqrt{n-1}/n \approx 1/\sqrt{n}$ for $n$ equal weights, about $1/32$ for 1024; real
# weights are less even, so it is somewhat larger).
# What the scale buys is a soft start.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: more keys, and how the weights respond to $q$
#
# **Ignored keys learn little.** The gradient reaching logit $z_j$ (and through it key $k_j$,
# since $z_j = q\cdot k_j$) is column $j$ of $J$ dotted with how the loss depends on the weights.
# That column is $p_j(e_j - p)$ ($e_j$: 1 at place $j$, 0 elsewhere): every entry carries $p_j$, so
# a key with weight ≈ 0 gets almost no signal, even when attending to it would lower the loss.
#
# **More keys.** With 1024 keys the unscaled median $\|J\|$ stays above the scaled one up to
# $d_k = 256$ and falls below it from 512 (one seed of 2,000 queries):

# %% tags=["deep-dive"]
many_keys = [overview.compare(d, overview.MANY_KEYS, rng=SEED) for d in (64, 128, 256, 512, 1024)]
print(overview.comparison_table(many_keys))
verify("1024 keys: unscaled J above scaled up to d_k = 256, below from 512", min(c.ratio for c in many_keys[:3]) > 1 > max(c.ratio for c in many_keys[3:]))

# %% [markdown] tags=["deep-dive"]
# **A second measure.** $\|J\|$ is how much the weights move when the *logits* move. How much
# they move when the *query* moves, $\|\partial p/\partial q\|$, also counts that unscaled logits
# $q\cdot k_j$ move $\sqrt{d_k}$ times more when $q$ moves: so its ratio, unscaled ÷ scaled, is
# about $\sqrt{d_k}$ times the $\|J\|$ ratio. Three repeats with fresh draws each:

# %% tags=["deep-dive"]
grad = {n: (ds, overview.query_gradient_ratios(ds, n, nq, seeds=range(3))) for n, ds, nq in ((16, (64, 128, 256), 3000), (1024, (64, 128), 300))}
print("\n".join(overview.format_gradient_ratios(n, ds, r) for n, (ds, r) in grad.items()))
rule = {(n, c.d_k): c.ratio * c.d_k**0.5 for n, cs in ((16, heads), (1024, many_keys)) for c in cs}
print("√d_k × the J ratio, 1024 keys:", ", ".join(f"d_k = {d}: {rule[1024, d]:#.2g}" for d in (512, 1024)))
verify("16 keys: ratio above 1 at d_k = 64, below at 256, in every repeat", (grad[16][1][:, 0] > 1).all() and (grad[16][1][:, 2] < 1).all())
verify("1024 keys: above 10 at d_k = 64 and 128, in every repeat", (grad[1024][1] > 10).all())
verify("medians within 25 % of √d_k × the J ratio", all(abs(np.median(grad[n][1][:, i]) / rule[n, d] - 1) < 0.25 for n in (16, 1024) for i, d in enumerate((64, 128))))

# %% [markdown] tags=["deep-dive"]
# By this measure the unscaled weights respond *more* to $q$ at $d_k$ = 64 and 128 (16 keys:
# 2.8×, 1.3×) and less from 256 (0.34×). With 1024 keys they respond far more (47×, 43×), and the
# rule gives 9.8× at $d_k$ = 512 and 2.0× at 1024 (a rough guide: it is checked above only at 64
# and 128). So by this measure too, the unscaled side falls behind only at larger $d_k$, later
# with more keys.

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
# | # | notebook | proves |
# |---|---|---|
# | 01 | [Dot products](01_dot_products.ipynb) | $q\cdot k$, $QK^\top$ |
# | 02 | [Mean and variance](02_mean_and_variance.ipynb) | part 1: $\mathrm{Var}(q\cdot k) = d_k$ |
# | 03 | [Small experiments](03_small_experiments.ipynb) | simulation noise |
# | 04 | [Why √d_k](04_why_sqrt_dk.ipynb) | part 1: why the square root |
# | 05 | [Saturation](05_softmax_saturation.ipynb) | part 2: spread → one-hot |
# | 06 | [Vanishing gradients](06_vanishing_gradients.ipynb) | parts 2–3: gradients |
# | 07 | [End to end](07_attention_end_to_end.ipynb) | masks, heads |
# | 08 | [Unit variance?](08_does_unit_variance_hold.ipynb) | where it holds |
# | 09 | [Training](09_training_with_and_without_scale.ipynb) | part 3, measured |

# %% [markdown]
# ## Summary
#
# - The answer: the box after section 2. Say it in three sentences, then compare.
#
# ## Exercises
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
# logits keep spread 1 and the weights keep nearly the same distribution. Nearly: at small $d_k$
# the scaled logits are not yet normal, and the largest weight drifts a little (0.23 at $d_k = 4$).
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
