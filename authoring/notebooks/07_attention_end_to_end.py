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
# - Run scaled dot-product attention step by step — MatMul, Scale, Mask, SoftMax, MatMul — with the shapes written out.
# - Build a causal mask, see why $-\infty$ gives a weight of exactly 0, and what libraries do with a query that has no key left.
# - See on heatmaps that unscaled attention rows collapse to one-hot as $d_k$ grows, while scaled rows do not.
# - Read $d_k$ as the head dimension (often, not always, $d_\text{model}/h$) and see why the scale uses it.
#
# **Prerequisites**
# - Notebooks 00–06, above all 05 (softmax saturation).
# - numpy arrays with a batch dimension, `@` on stacks of matrices.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, models
from sdpa_helpers.attention import attention_scores, causal_mask, scaled_dot_product_attention, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import attention_maps as maps_plots
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.attention_maps import AttentionMapExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The five steps
#
# A batch of $B = 2$ sequences, each with $n_q = 3$ queries, $n_k = 4$ keys and values,
# $d_k = 8$ and $d_v = 2$. The batch dimension rides along in front: every step works on each
# sequence separately. `np.swapaxes(K, -1, -2)` transposes the last two axes of each matrix.

# %%
B, n_q, n_k, d_k, d_v = 2, 3, 4, 8, 2
Q, K, V = (rng.standard_normal((B, n, d)) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
logits = Q @ np.swapaxes(K, -1, -2)      # 1. MatMul: (B, n_q, d_k) @ (B, d_k, n_k) -> (B, n_q, n_k)
scaled = logits / np.sqrt(d_k)           # 2. Scale by 1/√d_k   (3. Mask: none here, see section 2)
weights = softmax(scaled, axis=-1)       # 4. SoftMax over the keys: each row sums to 1
output = weights @ V                     # 5. MatMul: (B, n_q, n_k) @ (B, n_k, d_v) -> (B, n_q, d_v)
verify("the five steps = scaled_dot_product_attention(Q, K, V)", np.allclose(output, scaled_dot_product_attention(Q, K, V)[0]))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the same with nothing but loops
#
# Matrix products hide a lot. Here is attention written out with plain Python loops over the
# batch, the queries, the keys and the components — no numpy maths at all. It is slow, but
# every number is visible. (We subtract the largest score before `exp`, as a stable softmax does.)

# %% tags=["deep-dive"]
import math


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


package_output = scaled_dot_product_attention(Q, K, V)[0]
loop_output = attention_loop(Q, K, V)
verify_close("entry (1, 2, 3) of QKᵀ = q_2 · k_3 of sequence 1", logits[1, 2, 3], Q[1, 2] @ K[1, 3], rtol=1e-12)
verify("loops == vectorised, no mask", np.allclose(loop_output, package_output),
       f"largest difference {np.abs(loop_output - package_output).max():.1e}")
verify("attention_scores(Q, K) = steps 1 and 2", np.allclose(scaled, attention_scores(Q, K)))

# %% [markdown]
# ## 2. A causal mask
#
# A decoder (GPT and friends) generates text one token at a time. While it learns, it sees
# whole sentences at once, so each position must be stopped from peeking at later tokens:
# **query $i$ may attend to keys $j \le i$ only**, a *causal* mask. Before the softmax every
# forbidden logit becomes $-\infty$; since $e^{-\infty} = 0$, those keys get a weight of
# *exactly* zero, and the allowed weights of each row still sum to 1. The mask panel has its
# own colours (what is added to the logits); the weights panel has the weights' colour scale.

# %%
n, mask = 5, causal_mask(5)  # (n, n) bool: True = may attend
Qc, Kc, Vc = (rng.standard_normal((n, dim)) for dim in (d_k, d_k, d_v))
out_before, causal_weights = scaled_dot_product_attention(Qc, Kc, Vc, mask=mask)
verify("every weight above the diagonal is exactly 0", (causal_weights[~mask] == 0.0).all())
maps_plots.mask_and_weights(mask, causal_weights)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: no peeking, checked
#
# The point of the mask: change the value of the *last* token, and the outputs of all the
# earlier tokens stay exactly the same. And the loop version agrees with a mask too.

# %% tags=["deep-dive"]
V_changed = Vc.copy()
V_changed[-1] += 100.0
out_after, _ = scaled_dot_product_attention(Qc, Kc, V_changed, mask=mask)
verify("earlier outputs unchanged when the last value changes", np.array_equal(out_before[:-1], out_after[:-1]))
loop_masked = attention_loop(Qc[None], Kc[None], Vc[None], mask=mask)[0]
verify("loops == vectorised, causal mask", np.allclose(loop_masked, out_before))

# %% [markdown]
# ## 3. A query with no key left
#
# Batches hold sequences of different lengths, so the short ones are filled up with *padding*
# tokens that every query must ignore. Combine a padding mask with a causal mask (or pad on the
# left), and some rows — the padding positions' own queries — may attend to **no key at all**.
# This happens routinely, and each library picks a convention for such a row.
#
# **Predict:** a row of 4 logits is fully masked. What weights come out if the mask (a) puts
# $-\infty$ in every entry, (b) *replaces* every entry by a large finite negative number, (c) *adds*
# $-10\,000$ to every entry?

# %%
row, allowed = np.array([2.0, -1.0, 0.5, 3.0]), np.zeros(4, dtype=bool)  # one query's logits; no key allowed
with np.errstate(invalid="ignore"):
    e = np.exp(np.where(allowed, row, -np.inf))                    # (a) −∞: every exp is 0 ...
    as_neg_inf = e / e.sum()                                       #     ... and 0/0 is NaN
as_replaced = softmax(np.where(allowed, row, np.finfo(float).min))  # (b) replace: all logits equal
as_added = softmax(row + np.where(allowed, 0.0, -10_000.0))         # (c) add: one shift for the whole row
print(f"(a) {as_neg_inf}\n(b) {as_replaced.round(3)}\n(c) {as_added.round(3)} = softmax(row)")
verify("(b) gives a uniform row and (c) the unmasked softmax", np.allclose(as_replaced, 0.25) and np.allclose(as_added, softmax(row)))

# %% [markdown]
# Many learners expect (c) to block every key; it blocks nothing. Only the −∞ convention
# notices: it gives NaN, which then spreads silently through the network. What common code does:
#
# - **−∞ → NaN**: the textbook formula; PyTorch's `nn.MultiheadAttention` and
#   `scaled_dot_product_attention` gave NaN for such rows (pytorch/pytorch issues #41508, #103963).
# - **zeros**: PyTorch's `scaled_dot_product_attention` since pull request #133882 (2024) uses a
#   "safe softmax" that gives every key of a fully masked row weight 0, so its output is 0.
# - **uniform row**: Flax's `dot_product_attention_weights` *replaces* masked logits by
#   `jnp.finfo(dtype).min`, and GPT-2's reference code by −10¹⁰ (`mask_attn_weights` in
#   openai/gpt-2 `src/model.py`): a fully masked row averages all the values.
# - **the mask is ignored**: BERT's reference code (google-research/bert `modeling.py`) *adds*
#   −10 000; a fully masked row is shifted as a whole, and the softmax does not see a shift.
#
# None of these outputs means anything; models simply discard the rows of padding tokens
# afterwards. This package chose a fourth option, an error, because its inputs are small
# examples where a fully masked row is more likely a mistake than padding:

# %%
try:
    scaled_dot_product_attention(Qc, Kc, Vc, mask=mask & (np.arange(n) != 2)[:, None])  # query 2 may look at nothing
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# ## 4. Unscaled vs scaled: the weights as heatmaps
#
# Now the question of the course, on whole attention matrices: random queries and keys with
# unit-variance components (as the footnote assumes), 12 tokens,
# $\mathrm{softmax}(QK^\top)$ above and $\mathrm{softmax}(QK^\top/\sqrt{d_k})$ below. Colours run
# from 0 (dark) to 1 (yellow); a row with one yellow cell looks at a single key.
#
# **Predict:** as $d_k$ goes from 4 to 1024, what happens to the rows of each panel?

# %%
length, heatmap_weights = 12, {}
for d in (4, 64, 1024):
    Qh, Kh = make_rng(SEED).standard_normal((2, length, d))  # (length, d_k) each
    heatmap_weights[d] = tuple(softmax(c * Qh @ Kh.T) for c in (1.0, d**-0.5))  # unscaled, scaled weights
maps_plots.weights_small_multiples(heatmap_weights)

# %% [markdown]
# The top row turns into one bright cell per row; the bottom row looks alike at every $d_k$,
# as most learners guess. To put a number on it: the **largest weight of each row**, averaged
# over the rows and over 100 random draws (1 = one-hot, $1/12 \approx 0.08$ = uniform).

# %%
n_draws, d_ks, mean_max = 100, (1, 4, 16, 64, 256, 1024, 4096), {}
for d in d_ks:
    Qs, Ks = make_rng(SEED).standard_normal((2, n_draws, length, d))  # 100 draws of (Q, K)
    per_draw = [softmax(c * Qs @ np.swapaxes(Ks, -1, -2)).max(axis=-1).mean(axis=-1) for c in (1.0, d**-0.5)]
    mean_max[d] = [(v.mean(), v.std(ddof=1) / np.sqrt(n_draws)) for v in per_draw]  # (mean, SE) per scale
    print(f"d_k = {d:4d}: mean largest weight unscaled {mean_max[d][0][0]:.3f}, scaled {mean_max[d][1][0]:.3f}")
verify("unscaled: it rises with every step of d_k, past 0.95", all(mean_max[a][0][0] < mean_max[b][0][0] for a, b in zip(d_ks, d_ks[1:])) and mean_max[4096][0][0] > 0.95)
verify_close("scaled: mean largest weight, d_k = 4096 vs 16", mean_max[4096][1][0], mean_max[16][1][0], se=np.hypot(mean_max[16][1][1], mean_max[4096][1][1]))

# %% [markdown]
# Unscaled rows become one-hot, and (notebook 06) one-hot rows pass back almost no gradient.
# Scaled rows keep the same spread for every $d_k$ from 16 up, because the scaled logits have
# variance 1 whatever $d_k$ is. Now the live version: drag $d_k$, change the sequence length,
# switch the causal mask on, or draw new queries and keys with the seed.

# %% tags=["nbval-ignore-output"]
explorer = AttentionMapExplorer(d_k=64)
explorer

# %% [markdown]
# ## 5. Multi-head attention: $d_k$ is the head dimension
#
# A real layer runs $h$ heads side by side. Each head projects the $d_\text{model}$-long token
# vectors down to its own queries and keys of length $d_k$, the **head dimension**, attends,
# and the $h$ outputs are concatenated and projected back to $d_\text{model}$. The head
# dimension is *often* $d_\text{model}/h$ — but that is a common configuration, not a rule.
# Published configurations (`sdpa_helpers.models`, every row with its source):

# %%
print(models.format_table([models.model(name) for name in ("Transformer base (2017)", "BERT-base", "GPT-2 small", "Llama 2 7B")]))
print("\nhead_dim ≠ d_model/h:\n" + models.format_table(models.counter_examples()[:3]))

# %% [markdown]
# T5 3B runs 32 heads of 128 on a 1024-wide model; Gemma 7B 16 heads of 256 on 3072. The
# concatenated heads are wider than the model there, and the output projection maps them back.
# (T5 also has no $1/\sqrt{d_k}$ in its forward pass: it folds the factor into the
# initialisation of $W_Q$ — notebooks 08 and 09 come back to it.)
#
# **Which $d$ goes in the scale?** Each head's logit is a dot product of *its own* query and
# key pieces, a sum of $d_k$ products — not $d_\text{model}$. So its variance is $d_k$ and the
# scale is $1/\sqrt{d_k}$. The check with the Transformer base: vectors of length 512 with
# unit-variance components, split into 8 heads of 64.

# %%
d_model, heads, head_dim, n_pairs = 512, 8, 64, 20_000
q_heads, k_heads = rng.standard_normal((2, n_pairs, heads, head_dim))  # (n, h, d_k): 512-vectors cut into 8 pieces
head_logits = np.einsum("nhd,nhd->nh", q_heads, k_heads).ravel()  # one dot product per head
verify_close("Var(per-head q·k) = d_k = 64, not d_model = 512", head_logits.var(), head_dim,
             se=np.sqrt((np.mean((head_logits - head_logits.mean()) ** 4) - head_logits.var() ** 2) / head_logits.size))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: what the wrong scale does
#
# The three candidate scales: unscaled std $\sqrt{64} = 8$; times $1/\sqrt{d_k}$, std 1; times
# $1/\sqrt{d_\text{model}}$, std $\sqrt{64/512} \approx 0.354$ — too small, which flattens every
# head's softmax towards uniform. (The SE of a variance is $\sqrt{(m_4 - s^4)/N}$, $m_4$ the
# fourth central moment.) Then the mean largest weight of one head's rows with 12 keys, for the
# three scalings (1/12 ≈ 0.083 would be perfectly uniform).

# %% tags=["deep-dive"]
for label, c, theory_std in (("unscaled", 1.0, np.sqrt(head_dim)), ("× 1/√d_k", 1 / np.sqrt(head_dim), 1.0),
                             ("× 1/√d_model", 1 / np.sqrt(d_model), np.sqrt(head_dim / d_model))):
    print(f"{label:13s}: std theory {theory_std:.3f}, simulation {c * head_logits.std():.3f}")
ax = maps_plots.head_scale_histograms(head_logits, head_dim, d_model)
ax.figure

# %% tags=["deep-dive"]
g = make_rng(SEED)
Qm, Km = g.standard_normal((n_draws, length, head_dim)), g.standard_normal((n_draws, length, head_dim))
for label, c in (("unscaled", 1.0), ("× 1/√d_k", 1 / np.sqrt(head_dim)), ("× 1/√d_model", 1 / np.sqrt(d_model))):
    w = scaled_dot_product_attention(Qm, Km, np.zeros((n_draws, length, 1)), scale=c)[1]
    print(f"{label:13s}: mean largest weight {w.max(axis=-1).mean():.3f}")
print(f"uniform rows: {1 / length:.3f}")

# %% [markdown]
# ## Summary
#
# - Attention is five steps — MatMul $(n_q, d_k) @ (d_k, n_k) \to (n_q, n_k)$, Scale, Mask,
#   SoftMax over the keys, MatMul $(n_q, n_k) @ (n_k, d_v) \to (n_q, d_v)$ — and a batch
#   dimension just rides along.
# - A causal mask sets the logits of later keys to $-\infty$; their weights come out exactly
#   0, so no token sees the future.
# - Padded batches routinely produce queries with no key left. A $-\infty$ mask turns such a row
#   into NaN; libraries return zeros, a uniform row or the unmasked row instead, and the model
#   discards it. This package raises an error.
# - With random unit-variance queries and keys, unscaled rows become one-hot as $d_k$ grows;
#   scaled rows keep the same spread at every $d_k$.
# - $d_k$ is the head dimension — often $d_\text{model}/h$, but not in T5 3B/11B or Gemma — and
#   each head's logits are dot products of length $d_k$: the scale is $1/\sqrt{d_k}$.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`, which prints ✅ or ❌ with a hint.
#
# **Exercise 1.** BERT-large has $d_\text{model} = 1024$ and 16 heads of $d_\text{model}/h$ each.
# What is its $d_k$ (an integer)?

# %%
_ = check("07.bert_large_d_k", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# $d_k = 1024 / 16 = 64$ — the same head size as BERT-base, with more heads.
# </details>
#
# **Exercise 2.** With a causal mask over a sequence of length 10, how many of the
# $10 \times 10$ attention weights are exactly 0 (an integer)?

# %%
_ = check("07.causal_zeros", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# Row $i$ (counting from 0) masks the keys $i+1, \dots, 9$: that is $9 - i$ zeros. In total
# $9 + 8 + \dots + 0 = 10 \cdot 9 / 2 = 45$ — everything strictly above the diagonal.
# Check: `(~causal_mask(10)).sum()`.
# </details>
#
# **Exercise 3 (conceptual).** Predict: a padding query attends to 8 keys, all masked, in a library that
# *replaces* masked logits by a large finite negative number. What weight does each key get
# (three significant figures)?

# %%
_ = check("07.fully_masked_weight", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# Every logit of the row is the same number, and the softmax of $n$ equal logits is uniform:
# $1/8 = 0.125$ for each key, whatever the logits were before the mask.
# </details>
#
# **Exercise 4 (conceptual).** Explain: a layer's values get longer: $d_v$ goes from 64 to 256 while $d_k$
# stays 64. By what factor must the scale $1/\sqrt{d_k}$ change (an integer)? Why?

# %%
_ = check("07.d_v_factor", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# By a factor 1: it does not change. The scale acts on the logits $QK^\top$, which contain only
# queries and keys; $d_v$ enters after the softmax, in the weighted average of the values.
# (GPT-2's code happens to read the dimension from `v.shape[-1]`, which is correct there only
# because its $d_v = d_k$.)
# </details>
#
# **Exercise 5.** Write `masked_softmax(logits, mask)`: the softmax over the last axis, with a
# weight of exactly 0 wherever `mask` is False. It must not overflow on logits like $10^6$.
# (You may use numpy, but not `sdpa_helpers.attention.softmax`.)

# %%
def masked_softmax(logits, mask):
    ...  # your code: the softmax over the last axis, weight exactly 0 where mask is False


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
