# %% [markdown]
# # 07 — Attention end to end
#
# So far we have looked at the pieces one by one: dot products, their spread, the softmax and
# its gradient. This notebook puts them back together into the whole mechanism,
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V ,$$
#
# where $M$ is an optional mask ($0$ where a query may look, $-\infty$ where it may not).
#
# **Learning goals**
# - Run scaled dot-product attention one step at a time — MatMul, Scale, Mask, SoftMax, MatMul — with the shapes written out, and check it against a plain Python loop.
# - Build a causal mask, see why $-\infty$ gives a weight of exactly 0, and why a query with no key left is an error.
# - See on heatmaps that unscaled attention rows collapse to one-hot as $d_k$ grows, while scaled rows do not.
# - Compute $d_k = d_\text{model}/h$ for real models, and show why the scale uses the per-head $d_k$.
#
# **Prerequisites**
# - Notebooks 00–06, above all 05 (softmax saturation).
# - numpy arrays with a batch dimension, `@` on stacks of matrices.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import math
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng
from sdpa_helpers.attention import (attention_scores, causal_mask, scaled_dot_product_attention,
                                    softmax)
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import attention_maps as maps_plots
from sdpa_helpers.widgets.attention_maps import AttentionMapExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The five steps, one cell each
#
# We take a batch of $B = 2$ sequences. Each has $n_q = 3$ queries, $n_k = 4$ keys and
# values, with $d_k = 8$ and $d_v = 2$. The batch dimension simply rides along in front:
# every step below works on each sequence of the batch separately.

# %%
B, n_q, n_k, d_k, d_v = 2, 3, 4, 8, 2
Q = rng.standard_normal((B, n_q, d_k))  # (B, n_q, d_k)
K = rng.standard_normal((B, n_k, d_k))  # (B, n_k, d_k)
V = rng.standard_normal((B, n_k, d_v))  # (B, n_k, d_v)
print("Q", Q.shape, "| K", K.shape, "| V", V.shape)

# %% [markdown]
# **Step 1 — MatMul.** Every query dotted with every key: $QK^\top$. `np.swapaxes(K, -1, -2)`
# transposes the last two axes of each matrix in the batch.

# %%
logits = Q @ np.swapaxes(K, -1, -2)  # (B, n_q, d_k) @ (B, d_k, n_k) -> (B, n_q, n_k)
print("logits", logits.shape)
assert np.isclose(logits[1, 2, 3], Q[1, 2] @ K[1, 3])  # entry (i, j) is q_i · k_j
print(f"logits[1, 2, 3] = {logits[1, 2, 3]:.4f} = q_2 · k_3 of sequence 1 = {Q[1, 2] @ K[1, 3]:.4f}")

# %% [markdown]
# **Step 2 — Scale.** Divide by $\sqrt{d_k}$. The package's `attention_scores` does steps 1
# and 2 together.

# %%
scaled = logits / np.sqrt(d_k)  # (B, n_q, n_k), every entry divided by √8
assert np.allclose(scaled, attention_scores(Q, K))
print(f"√d_k = {np.sqrt(d_k):.4f}; scaled matches attention_scores(Q, K): {np.allclose(scaled, attention_scores(Q, K))}")

# %% [markdown]
# **Step 3 — Mask (optional).** Nothing is masked here; section 2 is all about this step.
#
# **Step 4 — SoftMax.** Along the *keys* axis (the last one): each query gets a probability
# distribution over the keys.

# %%
weights = softmax(scaled, axis=-1)  # (B, n_q, n_k), each row sums to 1
assert np.allclose(weights.sum(axis=-1), 1.0)
print("weights", weights.shape)
print("row sums:", np.array2string(weights.sum(axis=-1), precision=6))

# %% [markdown]
# **Step 5 — MatMul.** Each output row is the weighted average of the value rows.

# %%
output = weights @ V  # (B, n_q, n_k) @ (B, n_k, d_v) -> (B, n_q, d_v)
print("output", output.shape)
package_output, package_weights = scaled_dot_product_attention(Q, K, V)
assert np.allclose(output, package_output) and np.allclose(weights, package_weights)
print("matches scaled_dot_product_attention:", np.allclose(output, package_output))

# %% [markdown]
# ### The same, with nothing but loops
#
# Matrix products hide a lot. Here is attention written out with plain Python loops over the
# batch, the queries, the keys and the components — no numpy maths at all. It is slow, but
# every number is visible. (We subtract the largest score before `exp`, as a stable softmax does.)

# %%
def attention_loop(Q, K, V, mask=None):
    """Attention by loops: Q (B, n_q, d_k), K (B, n_k, d_k), V (B, n_k, d_v); mask (n_q, n_k) or None."""
    n_batch, n_queries, dim = Q.shape
    n_keys, dim_v = V.shape[1], V.shape[2]
    out = np.zeros((n_batch, n_queries, dim_v))
    for b in range(n_batch):
        for i in range(n_queries):
            scores = []
            for j in range(n_keys):
                if mask is not None and not mask[i][j]:
                    scores.append(-math.inf)  # masked: this key is out of reach
                else:
                    dot = sum(Q[b][i][t] * K[b][j][t] for t in range(dim))
                    scores.append(dot / math.sqrt(dim))
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]  # math.exp(-inf) == 0.0
            total = sum(exps)
            for c in range(dim_v):
                out[b][i][c] = sum(exps[j] / total * V[b][j][c] for j in range(n_keys))
    return out


loop_output = attention_loop(Q, K, V)
assert np.allclose(loop_output, package_output)
print("loop == vectorised, no mask:", np.allclose(loop_output, package_output))
print(f"largest difference: {np.abs(loop_output - package_output).max():.1e}")

# %% [markdown]
# ## 2. A causal mask
#
# A decoder (GPT and friends) generates text one token at a time. While it learns, it sees
# whole sentences at once, so each position must be stopped from peeking at the tokens
# that come after it: **query $i$ may attend to keys $j \le i$ only.** That is a *causal*
# mask — True on and below the diagonal.

# %%
n = 5
mask = causal_mask(n)  # (n, n) bool: True = may attend
print(mask.astype(int))

# %% [markdown]
# **How the mask enters.** Before the softmax, every forbidden logit becomes $-\infty$.
# Since $e^{-\infty} = 0$, the softmax gives those keys a weight of *exactly* zero — not a
# small number, zero — and the allowed weights of each row still sum to 1.

# %%
Qc, Kc, Vc = (rng.standard_normal((n, dim)) for dim in (d_k, d_k, d_v))
masked_logits = np.where(mask, attention_scores(Qc, Kc), -np.inf)  # (n, n), -inf above the diagonal
print("row 1 of the masked logits:", np.array2string(masked_logits[1], precision=3))
_, causal_weights = scaled_dot_product_attention(Qc, Kc, Vc, mask=mask)
assert (causal_weights[~mask] == 0.0).all()  # exact zeros, not merely small
assert np.allclose(causal_weights.sum(axis=-1), 1.0)
print("weights above the diagonal, all exactly 0:", (causal_weights[~mask] == 0.0).all())
print("row 0 (the first token can only see itself):", np.array2string(causal_weights[0], precision=3))

# %%
fig = maps_plots.mask_and_weights(mask, causal_weights)
fig

# %% [markdown]
# The point of the mask, checked: the output of token $i$ depends on tokens $0 \dots i$
# only. Change the value of the *last* token, and the outputs of all the earlier tokens
# stay the same; the loop version agrees with a mask too.

# %%
out_before, _ = scaled_dot_product_attention(Qc, Kc, Vc, mask=mask)
V_changed = Vc.copy()
V_changed[-1] += 100.0
out_after, _ = scaled_dot_product_attention(Qc, Kc, V_changed, mask=mask)
assert np.array_equal(out_before[:-1], out_after[:-1]) and not np.allclose(out_before[-1], out_after[-1])
print("earlier outputs unchanged:", np.array_equal(out_before[:-1], out_after[:-1]))
loop_masked = attention_loop(Qc[None], Kc[None], Vc[None], mask=mask)[0]
assert np.allclose(loop_masked, out_before)
print("loop == vectorised, causal mask:", np.allclose(loop_masked, out_before))

# %% [markdown]
# **A fully masked row.** What if a query may attend to *no* key? Its row of logits is all
# $-\infty$, the softmax divides $0$ by $0$, and the result is NaN (not a number), which
# would spread silently through the rest of the network:

# %%
with np.errstate(invalid="ignore"):
    row = np.exp(np.array([-np.inf, -np.inf, -np.inf]))
    print("exp of the row:", row, "| sum:", row.sum(), "| row / sum:", row / row.sum())

# %% [markdown]
# A query with nothing to look at usually means the mask is wrong, so the package refuses it
# with a clear message instead of returning NaN:

# %%
bad_mask = mask.copy()
bad_mask[2] = False  # query 2 may look at nothing
try:
    scaled_dot_product_attention(Qc, Kc, Vc, mask=bad_mask)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# ## 3. Unscaled vs scaled: the weights as heatmaps
#
# Now the question of the course, on whole attention matrices. Take random queries and keys
# with unit-variance components (as the footnote assumes), a sequence of 12 tokens, and
# compare $\mathrm{softmax}(QK^\top)$ with $\mathrm{softmax}(QK^\top/\sqrt{d_k})$. Colours run
# from 0 (dark) to 1 (yellow) in every panel. A one-hot row — one yellow cell, the rest dark
# — means the query looks at a single key.

# %%
length = 12
heatmap_weights = {}
for d in (4, 64, 1024):
    g = make_rng(SEED)
    Qh, Kh = g.standard_normal((length, d)), g.standard_normal((length, d))  # (length, d_k) each
    Vh = np.zeros((length, 1))  # the weights do not depend on V
    heatmap_weights[d] = (scaled_dot_product_attention(Qh, Kh, Vh, scale=1.0)[1],
                          scaled_dot_product_attention(Qh, Kh, Vh)[1])
fig = maps_plots.weights_small_multiples(heatmap_weights)
fig

# %% [markdown]
# The top row turns into one bright cell per row as $d_k$ grows; the bottom row looks alike
# at every $d_k$. To put a number on it, take the **largest weight of each row**, averaged
# over the rows and over 100 random draws (1 = one-hot rows, $1/12 \approx 0.08$ = uniform rows).
# The standard error (SE) is the spread of the 100 per-draw values divided by $\sqrt{100}$.

# %%
n_draws = 100
mean_max = {}
print(" d_k | unscaled mean max (SE) | scaled mean max (SE)")
for d in (1, 4, 16, 64, 256, 1024, 4096):
    g = make_rng(SEED)
    Qs, Ks = g.standard_normal((n_draws, length, d)), g.standard_normal((n_draws, length, d))
    Vs = np.zeros((n_draws, length, 1))
    per_draw_u = scaled_dot_product_attention(Qs, Ks, Vs, scale=1.0)[1].max(axis=-1).mean(axis=-1)  # (n_draws,)
    per_draw_s = scaled_dot_product_attention(Qs, Ks, Vs)[1].max(axis=-1).mean(axis=-1)
    mean_max[d] = [(v.mean(), v.std(ddof=1) / np.sqrt(n_draws)) for v in (per_draw_u, per_draw_s)]
    (mu, su), (ms, ss) = mean_max[d]
    print(f"{d:4d} | {mu:.3f} ({su:.3f})          | {ms:.3f} ({ss:.3f})")

# %% [markdown]
# Unscaled, the mean largest weight climbs towards 1 as $d_k$ grows: the rows become
# one-hot, and (notebook 06) one-hot rows pass back almost no gradient. Scaled, it stays at
# about the same value for every $d_k$ from 16 up, because the scaled logits have variance 1
# whatever $d_k$ is. The checks, with a tolerance of 4 combined standard errors:

# %%
unscaled_curve = [mean_max[d][0][0] for d in sorted(mean_max)]
assert all(a < b for a, b in zip(unscaled_curve, unscaled_curve[1:]))  # rises with every step of d_k
assert mean_max[4096][0][0] > 0.95
print(f"unscaled: {mean_max[1][0][0]:.3f} at d_k = 1 -> {mean_max[4096][0][0]:.3f} at d_k = 4096")
(m16, s16), (m4096, s4096) = mean_max[16][1], mean_max[4096][1]
assert abs(m16 - m4096) < 4 * np.hypot(s16, s4096)
print(f"scaled: {m16:.3f} at d_k = 16 vs {m4096:.3f} at d_k = 4096, "
      f"difference {abs(m16 - m4096):.3f} < 4 SE = {4 * np.hypot(s16, s4096):.3f}")

# %% [markdown]
# Now the live version. Drag $d_k$ and watch the left panel go one-hot while the right one
# keeps its texture; change the sequence length, switch the causal mask on, or draw new
# queries and keys with the seed. The readout gives the mean largest weight of each panel.

# %% tags=["nbval-ignore-output"]
explorer = AttentionMapExplorer(d_k=64)
explorer

# %% [markdown]
# ## 4. Multi-head attention: $d_k = d_\text{model}/h$
#
# A real layer runs $h$ heads side by side. Each head projects the $d_\text{model}$-long token
# vectors down to its own queries and keys of length $d_k = d_\text{model}/h$, attends, and
# the $h$ outputs are concatenated back to length $d_\text{model}$. Here is $d_k$ for some
# well-known models (their published $d_\text{model}$ and number of heads):

# %%
models = [  # (name, d_model, heads)
    ("Transformer base (Vaswani et al. 2017)", 512, 8),
    ("BERT-base", 768, 12),
    ("GPT-2 small", 768, 12),
    ("GPT-3 175B", 12288, 96),
    ("Llama 2 7B", 4096, 32),
]
print(f"{'model':40s} {'d_model':>8s} {'h':>4s} {'d_k':>5s}")
for name, d_model, heads in models:
    head_dim = d_model // heads
    assert head_dim * heads == d_model
    print(f"{name:40s} {d_model:8d} {heads:4d} {head_dim:5d}")

# %% [markdown]
# The heads grow far less than the models: $d_k$ is 64 or 128 in all of them, while
# $d_\text{model}$ spans 512 to 12 288.
#
# **Which $d$ goes in the scale?** Each head's logit is a dot product of *its own* query and
# key pieces, a sum of $d_k$ products — not $d_\text{model}$. So its variance is $d_k$ and the
# right scale is $1/\sqrt{d_k}$. Let us check with the Transformer base: vectors of length
# $d_\text{model} = 512$ with unit-variance components, split into $h = 8$ heads of 64.

# %%
d_model, heads = 512, 8
head_dim = d_model // heads
n_pairs = 20_000
q_full = rng.standard_normal((n_pairs, d_model))  # (n, d_model)
k_full = rng.standard_normal((n_pairs, d_model))
q_heads = q_full.reshape(n_pairs, heads, head_dim)  # (n, d_model) -> (n, h, d_k)
k_heads = k_full.reshape(n_pairs, heads, head_dim)
head_logits = np.einsum("nhd,nhd->nh", q_heads, k_heads)  # one dot product per head: (n, h)
print("per-head logits:", head_logits.shape)
print(f"head_dim = {d_model} / {heads} = {head_dim}")

# %% [markdown]
# The three candidate scales, with theory next to simulation: unscaled std $\sqrt{64} = 8$;
# times $1/\sqrt{d_k}$, std 1; times $1/\sqrt{d_\text{model}}$, std $\sqrt{64/512} \approx 0.354$
# — too small, which flattens every head's softmax towards uniform.
#
# The check uses the variance of the unscaled logits, with its standard error computed from
# the sample itself: $\mathrm{SE} = \sqrt{(m_4 - s^4)/N}$, $m_4$ the fourth central moment.

# %%
x = head_logits.ravel()
N = x.size
var_hat = x.var()
se_var = np.sqrt((np.mean((x - x.mean()) ** 4) - var_hat**2) / N)
assert abs(var_hat - head_dim) < 4 * se_var
print(f"Var(per-head q·k): theory {head_dim}, simulation {var_hat:.2f} (SE {se_var:.2f})")
for label, c, theory_std in (("unscaled", 1.0, np.sqrt(head_dim)),
                             ("× 1/√d_k", 1 / np.sqrt(head_dim), 1.0),
                             ("× 1/√d_model", 1 / np.sqrt(d_model), np.sqrt(head_dim / d_model))):
    print(f"{label:13s}: std theory {theory_std:.3f}, simulation {c * x.std():.3f}")

# %%
ax = maps_plots.head_scale_histograms(x, head_dim, d_model)
ax.figure

# %% [markdown]
# What the wrong scale does to the weights: with 12 keys, the mean largest weight of one
# head's rows, for the three scalings (1/12 ≈ 0.083 would be perfectly uniform).

# %%
g = make_rng(SEED)
Qm = g.standard_normal((n_draws, length, head_dim))  # one head: (draws, length, d_k)
Km = g.standard_normal((n_draws, length, head_dim))
Vm = np.zeros((n_draws, length, 1))
for label, c in (("unscaled", 1.0), ("× 1/√d_k", 1 / np.sqrt(head_dim)), ("× 1/√d_model", 1 / np.sqrt(d_model))):
    w = scaled_dot_product_attention(Qm, Km, Vm, scale=c)[1]
    print(f"{label:13s}: mean largest weight {w.max(axis=-1).mean():.3f}")
print(f"uniform rows: {1 / length:.3f}")

# %% [markdown]
# ## Summary
#
# - Attention is five steps — MatMul $(n_q, d_k) @ (d_k, n_k) \to (n_q, n_k)$, Scale, Mask,
#   SoftMax over the keys, MatMul $(n_q, n_k) @ (n_k, d_v) \to (n_q, d_v)$ — and a batch
#   dimension just rides along. A plain loop gives the same numbers.
# - A causal mask sets the logits of later keys to $-\infty$; their weights come out exactly
#   0, so no token sees the future. A query left with no key at all is an error, not a NaN.
# - With random unit-variance queries and keys, unscaled rows become one-hot as $d_k$ grows;
#   scaled rows keep the same spread at every $d_k$.
# - In multi-head attention each head has $d_k = d_\text{model}/h$ (64 or 128 in the models
#   above), and each head's logits are dot products of length $d_k$: the scale is
#   $1/\sqrt{d_k}$, not $1/\sqrt{d_\text{model}}$.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`, which prints ✅ or ❌ with a hint.
#
# **Exercise 1.** BERT-large has $d_\text{model} = 1024$ and 16 heads. What is its $d_k$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("07.bert_large_d_k", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $d_k = 1024 / 16 = 64$ — the same head size as BERT-base, with more heads.
# </details>
#
# **Exercise 2.** With a causal mask over a sequence of length 10, how many of the
# $10 \times 10$ attention weights are exactly 0?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("07.causal_zeros", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Row $i$ (counting from 0) masks the keys $i+1, \dots, 9$: that is $9 - i$ zeros. In total
# $9 + 8 + \dots + 0 = 10 \cdot 9 / 2 = 45$ — everything strictly above the diagonal.
# Check: `(~causal_mask(10)).sum()`.
# </details>
#
# **Exercise 3.** Write `masked_softmax(logits, mask)`: the softmax over the last axis, with a
# weight of exactly 0 wherever `mask` is False. It must not overflow on logits like $10^6$.
# (You may use numpy, but not `sdpa_helpers.attention.softmax`.)

# %%
def masked_softmax(logits, mask):
    """Softmax over the last axis; weight exactly 0 where mask is False."""
    raise NotImplementedError("write masked_softmax")  # replace this line with your code


_ = check("07.masked_softmax", masked_softmax)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def masked_softmax(logits, mask):
#     z = np.where(mask, logits, -np.inf)          # forbidden keys get -inf
#     z = z - z.max(axis=-1, keepdims=True)        # largest allowed logit becomes 0: no overflow
#     e = np.exp(z)                                # exp(-inf) = 0 exactly
#     return e / e.sum(axis=-1, keepdims=True)
# ```
# </details>
#
# ---
# **Next:** [08 — Does unit variance hold?](08_does_unit_variance_hold.ipynb)
