# %% [markdown]
# # 07 — Attention end to end
#
# The pieces of notebooks 00–06, put together:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V ,$$
#
# where $M$ is an optional mask ($0$ where a query may look, $-\infty$ where it may not).
#
# **Learning goals**
# - Read a query's output as a weighted average of value rows; run attention step by step, shapes written out.
# - Build a causal mask, and see what a query with no key left gets, and why.
# - Read heatmaps of masked attention, and measure how peaked rows get as $d_k$ grows, scaled and unscaled.
# - (Deep dive) Read $d_k$ as the head dimension of multi-head attention, and see why the scale uses it.
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
from sdpa_helpers.plots import attention_maps as attention_maps_plots
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.attention_maps import AttentionMapExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. What the output is: a weighted average of values
#
# Each token offers a **key**, matched against the queries, and a **value**, what it hands over
# when chosen. A query's softmax weights over the keys (each $\ge 0$, summing to 1) say how much
# of each value it takes: its output row is the weighted average $\sum_j w_j v_j$ of the value
# rows. Keys decide *who* is heard, values *what* is said. One query with weights
# $(0.7, 0.2, 0.1)$ over three keys with values $(1, 0)$, $(0, 1)$, $(1, 1)$ gets
# $0.7\,(1, 0) + 0.2\,(0, 1) + 0.1\,(1, 1) = (0.8, 0.3)$: the output leans towards the first
# value. In numpy, `w @ V`. A one-hot row would copy one value; a
# uniform row would return their plain mean. The scale sets where between the two a row lies (section 5).
#
# ## 2. The five steps
#
# A batch of $B = 2$ sequences, each with $n_q = 3$ queries, $n_k = 4$ keys and values,
# $d_k = 8$ and $d_v = 2$. Every step works on each sequence of the batch separately. `np.swapaxes(K, -1, -2)` transposes the last two axes of each matrix.

# %%
B, n_q, n_k, d_k, d_v = 2, 3, 4, 8, 2
Q, K, V = (rng.standard_normal((B, n, d)) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
logits = Q @ np.swapaxes(K, -1, -2)      # 1. MatMul: (B, n_q, d_k) @ (B, d_k, n_k) -> (B, n_q, n_k)
scaled = logits / np.sqrt(d_k)           # 2. Scale by 1/√d_k   (3. Mask: none here, see section 3)
weights = softmax(scaled, axis=-1)       # 4. SoftMax over the keys: each row sums to 1
output = weights @ V                     # 5. MatMul: (B, n_q, n_k) @ (B, n_k, d_v) -> (B, n_q, d_v)
verify("the five steps = scaled_dot_product_attention(Q, K, V)", np.allclose(output, scaled_dot_product_attention(Q, K, V)[0]))
verify("section 1: (0.7, 0.2, 0.1) @ [(1, 0), (0, 1), (1, 1)] = (0.8, 0.3)", np.allclose([0.7, 0.2, 0.1] @ np.array([[1, 0], [0, 1], [1, 1]]), [0.8, 0.3]))
verify("each output row = Σ_j w_j v_j, e.g. query 0 of sequence 0", np.allclose(output[0, 0], sum(weights[0, 0, j] * V[0, j] for j in range(n_k))))

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
verify("loops == vectorised, no mask (largest difference below 1e-12)",
       np.abs(loop_output - package_output).max() < 1e-12)
verify("attention_scores(Q, K) = steps 1 and 2", np.allclose(scaled, attention_scores(Q, K)))

# %% [markdown]
# ## 3. A causal mask
#
# A decoder (GPT and friends) trains on whole sentences at once, so each position must not peek
# at later tokens: **query $i$ may attend to keys $j \le i$ only**, a *causal* mask. Every
# forbidden logit becomes $-\infty$ before the softmax; since $e^{-\infty} = 0$, those keys get
# weight *exactly* 0, and each row's allowed weights still sum to 1.

# %% alt="Left: the causal mask for 5 queries and 5 keys, 0 (may attend, green) on and below the diagonal and minus infinity (blocked, grey) above it. Right: the attention weights after the softmax, exactly 0 above the diagonal (drawn white: masked out); each row's weight falls only on the keys up to its own position."
n, mask = 5, causal_mask(5)  # (n, n) bool: True = may attend
Qc, Kc, Vc = (rng.standard_normal((n, dim)) for dim in (d_k, d_k, d_v))
out_before, causal_weights = scaled_dot_product_attention(Qc, Kc, Vc, mask=mask)
verify("every weight above the diagonal is exactly 0", (causal_weights[~mask] == 0.0).all())
attention_maps_plots.mask_and_weights(mask, causal_weights)

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

# %% [markdown] predict_answer=["NaN", "0/0", "uniform", "0.25", "all logits equal", "unchanged", "unmasked", "softmax(row)", "blocks nothing", "one shift"] predict_answer_common=["0.25", "0/0"]
# ## 4. A query with no key left
#
# Short sequences in a batch are filled up with *padding* tokens that no query may look at. Pad
# on the left and add a causal mask: a padding position's query may look only at keys up to its own
# position, all of them padding, so it has **no key left**. Such rows are routine, and what comes out
# depends on *how* the mask is applied.
#
# **Predict:** a row of 4 logits is fully masked. What weights come out if the mask (a) puts
# $-\infty$ in every entry, (b) *replaces* every entry by the most negative float, (c) *adds*
# $-10\,000$ to every entry?

# %%
row, allowed = np.array([2.0, -1.0, 0.5, 3.0]), np.zeros(4, dtype=bool)  # one query's logits; no key allowed
with np.errstate(invalid="ignore"):
    e = np.exp(np.where(allowed, row, -np.inf))                    # (a) −∞ in every masked entry,
    as_neg_inf = e / e.sum()                                       #     then the softmax written out
as_replaced = softmax(np.where(allowed, row, np.finfo(float).min))  # (b) replace by the most negative float
as_added = softmax(row + np.where(allowed, 0.0, -10_000.0))         # (c) add −10 000
print(f"(a) {as_neg_inf}\n(b) {as_replaced.round(3)}\n(c) {as_added.round(3)}")
try:  # and this package, on a causal mask whose query 2 may look at nothing
    scaled_dot_product_attention(Qc, Kc, Vc, mask=mask & (np.arange(n) != 2)[:, None])
except ValueError as error:
    print("this package: ValueError:", error)

# %% [markdown]
# **What happened:**
#
# - (a) every $e^{-\infty}$ is 0, so the softmax is $0/0$: NaN, which spreads into all that follows.
# - (b) every logit becomes the same number: equal logits, a uniform row (1/4 each, with a stable softmax,
#   notebook 05).
# - (c) adding the same number to every logit keeps every gap, and only gaps matter (notebook 05,
#   section 1): the row's softmax is unchanged, as if there were no mask.
#
# None of these rows means anything (models discard padding positions); this package raises an error
# (last line), as in a small example such a row is likely a mistake.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how large an added mask must be, and what libraries do
#
# An added mask blocks a key of a *partly* masked row only if the added number dwarfs the
# logits, and a fully masked row stays the unmasked row only if the logits' digits survive
# the addition. Both depend on the logits' size and the float precision: key 3 of `row` is
# masked by adding $-10^4$, with the logits multiplied by 1, 1 000 and 10 000, and then the fully
# masked row in half precision (float16 keeps about 3 significant digits):

# %% tags=["deep-dive"]
verify("section 4: (b) gives a uniform row and (c) the unmasked softmax", np.allclose(as_replaced, 0.25) and np.allclose(as_added, softmax(row)))
for size in (1, 1_000, 10_000):
    w_added = softmax(size * row + np.array([0.0, 0.0, 0.0, -1e4]))  # key 3 masked by adding -1e4
    print(f"logits × {size:6,d}: weight of the masked key {w_added[3]:.3f}")
row16 = row.astype(np.float16) + np.float16(-1e4)  # fully masked row, float16
print(f"float16: row − 10 000 = {row16}, softmax {softmax(row16.astype(float)).round(3)}")
verify("at logits × 10 000 the added −1e4 no longer masks; in float16 (c) turns into (b)",
       softmax(1e4 * row + np.array([0.0, 0.0, 0.0, -1e4]))[3] > 0.4 and np.allclose(softmax(row16.astype(float)), 0.25))

# %% [markdown] tags=["deep-dive"]
# At logits of size about 1 (what $1/\sqrt{d_k}$ gives at initialisation) $-10^4$ is ample in
# float64 and float32; at logits of size $10^4$ the "masked" key ties with the best allowed one;
# and where a model's own code adds the mask in float16, $-10\,000 + 2$ rounds to $-10\,000$ (float16
# numbers near $10^4$ are 8 apart), so a fully masked row of logits smaller than 4 in size comes out
# uniform.
#
# What libraries do, read in their sources (PyTorch at version **2.13.0**; the PyTorch claims
# were also run on 2.13.0+cpu):
#
# - **PyTorch `torch.nn.functional.scaled_dot_product_attention`.** Its docstring says a boolean
#   mask marks the keys that may be attended and "a float mask ... is added to the attention
#   score" (`torch/nn/functional.py`, line 6466); its reference code turns `False` into $-\infty$
#   (line 6365) and adds a float mask (line 6367). Which backend runs depends on the inputs and the
#   device (on CPU a 4-D float32 call usually goes to the fused flash kernel), and every backend gives
#   **zeros** for a row whose entries are all $-\infty$: the math backend through `_safe_softmax`
#   (`aten/src/ATen/native/transformers/attention.cpp`, since pull request
#   [#133882](https://github.com/pytorch/pytorch/pull/133882), August 2024; before it such rows
#   gave NaN, [#103963](https://github.com/pytorch/pytorch/issues/103963)), which puts 0 wherever
#   *every* entry of a row is $-\infty$, the fused kernels by their own rule. So a fully masked row
#   gives **zeros** with a boolean mask *and* with a float mask of $-\infty$; a float mask of
#   `finfo.min` gives the **uniform** row (b) (adding it to small logits rounds every entry to
#   `finfo.min`); a float mask of $-10^4$ gives the **unmasked** row (c), up to output rounding, with
#   float16 inputs too (PyTorch 2.13; the math path upcasts half precision to float32 by default,
#   unless `torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)` is set, and adds the mask
#   to float32 scores). The documentation's reference code itself uses a plain softmax (NaN).
# - **PyTorch `nn.MultiheadAttention`**, same version, `torch/nn/modules/activation.py`: `forward`
#   first checks the conditions of its inference *fast path* (lines 1326–1425: `eval()` mode,
#   `batch_first=True`, self-attention with query, key and value the same tensor, an even number
#   of heads, no float mask, gradients off or not required, …) and, when all hold, calls
#   `torch._native_multi_head_attention` (line 1433): a fully masked row is **NaN**, with
#   `need_weights=False` too. Otherwise (training, `batch_first=False`, distinct query, key and
#   value, …) it runs `multi_head_attention_forward` in `torch/nn/functional.py`: with
#   `need_weights=True` a plain softmax (line 7038), **NaN**
#   ([#160064](https://github.com/pytorch/pytorch/issues/160064); NaN gradients,
#   [#41508](https://github.com/pytorch/pytorch/issues/41508)); with `need_weights=False` it calls
#   `scaled_dot_product_attention` (line 7077), **zeros** (the layer then returns its output
#   projection's bias for that row). One module, two conventions; pull
#   requests to use the safe softmax everywhere may change this in later versions.
# - **Flax.** `dot_product_attention_weights` in `flax/linen/attention.py` (and its twin in
#   `flax/nnx/nn/attention.py`): `big_neg = jnp.finfo(dtype).min`, then
#   `jnp.where(mask, attn_weights, big_neg)` and `jax.nn.softmax`, a *replacement*: uniform (b).
# - **GPT-2.** openai/gpt-2 `src/model.py`, `mask_attn_weights`: `w = w*b - tf.cast(1e10, w.dtype)*(1-b)` also
#   *replaces* masked logits (by $-10^{10}$). Its mask is causal only, so no row is ever empty there.
# - **BERT.** google-research/bert `modeling.py`, `attention_layer`:
#   `adder = (1.0 - mask) * -10000.0` is *added* to the scores: a fully masked row (a sequence
#   that is all padding) is the unmasked softmax (c), up to rounding. Code like this run in half
#   precision adds in float16, and the row turns uniform (b), as the cell above shows.
#
# The "zeros" convention, `_safe_softmax`'s rule written in numpy:

# %% tags=["deep-dive"]
masked_logits = np.where(allowed, row, -np.inf)
with np.errstate(invalid="ignore"):
    plain = np.exp(masked_logits - masked_logits.max()) / np.exp(masked_logits - masked_logits.max()).sum()
safe = np.where(np.isneginf(masked_logits).all(), 0.0, plain)  # what _safe_softmax does
print(f"plain softmax {plain}, safe softmax {safe}")
verify("_safe_softmax's rule turns the NaN row into zeros", np.isnan(plain).all() and (safe == 0).all())

# %% [markdown] predict_answer=["first row", "row 0", "one key", "a single key", "only key"] predict_answer_common=["one key", "a single key"]
# ## 5. Unscaled vs scaled: the weights as heatmaps
#
# One draw of random queries and keys with unit-variance components, 12 tokens, a causal mask:
# $\mathrm{softmax}(QK^\top)$ above, $\mathrm{softmax}(QK^\top/\sqrt{d_k})$ below. A row
# with one yellow cell looks at a single key; white cells are masked out.
#
# **Predict:** in the *scaled* panels, which rows will show one bright cell at every $d_k$, and why?

# %% alt="Six heatmaps of causal attention weights, 12 queries by 12 keys, at d_k = 4, 64 and 1024: unscaled above, scaled by 1/sqrt(d_k) below. Cells above the diagonal, which the causal mask forbids, are white. Unscaled, rows go from spread out at d_k = 4 to one bright cell of weight near 1 in most rows at 64 and in every row at 1024. Scaled, the rows look alike at every d_k, weight spread over several keys; row 0, with one key, has a single bright cell at every d_k and scale, and row 1, with two keys, is nearly one-hot (0.947) in the scaled d_k = 64 panel."
length, heatmap_weights = 12, {}
for d in (4, 64, 1024):
    Qh, Kh = make_rng(SEED).standard_normal((2, length, d))  # (length, d_k) each
    heatmap_weights[d] = tuple(softmax(np.where(causal_mask(length), c * Qh @ Kh.T, -np.inf)) for c in (1.0, d**-0.5))
attention_maps_plots.weights_small_multiples(heatmap_weights, mask=causal_mask(length))

# %% [markdown]
# The first row: with one key its weight is 1 at any scale, so a bright cell in an early masked
# row is not saturation. Row 1 has only two keys, and by chance one of them can take nearly all
# the weight (0.947 in the scaled $d_k = 64$ panel, printed below). Further down, unscaled rows turn one-hot as $d_k$ grows. Unmasked (12
# keys a row), the **largest weight of each row**, averaged over rows and 100 draws (1 =
# one-hot, $1/12 \approx 0.08$ = uniform):

# %%
n_draws, d_ks, mean_max = 100, (1, 4, 16, 64, 256, 1024, 4096), {}
for d in d_ks:
    Qs, Ks = make_rng(SEED).standard_normal((2, n_draws, length, d))  # 100 draws of (Q, K)
    per_draw = [softmax(c * Qs @ np.swapaxes(Ks, -1, -2)).max(axis=-1).mean(axis=-1) for c in (1.0, d**-0.5)]
    mean_max[d] = [(v.mean(), v.std(ddof=1) / np.sqrt(n_draws)) for v in per_draw]  # (mean, SE) per scale
    print(f"d_k = {d:4d}: mean largest weight unscaled {mean_max[d][0][0]:.3f}, scaled {mean_max[d][1][0]:.3f}")
del Qs, Ks  # 80 MB at d_k = 4096
print(f"(the heatmaps: scaled, d_k = 64, row 1's larger weight {heatmap_weights[64][1][1].max():.3f})")
verify("unscaled: it rises with every step of d_k, past 0.95", all(mean_max[a][0][0] < mean_max[b][0][0] for a, b in zip(d_ks, d_ks[1:])) and mean_max[4096][0][0] > 0.95)
sc = np.array([mean_max[d][1] for d in d_ks[2:]])  # (5, 2): scaled (mean, SE), d_k = 16 ... 4096
verify("scaled, d_k ≥ 16: all within 0.02 of each other", np.ptp(sc[:, 0]) < 0.02)

# %% [markdown]
# Unscaled rows become one-hot, and (notebook 06) one-hot rows pass back almost no gradient:
# part 2 of the course's answer (**commitment**), for random unit-variance queries and keys (as at
# initialisation), 12 keys.
# Scaled rows stay near 0.29 from $d_k \approx 16$ up (one seed's 100 draws resolve that only roughly;
# ten seeds pooled, deep dive below); at $d_k$ = 1 and 4 they are flatter (0.24,
# 0.27), because there a query's length varies a lot from row to row (deep dive below). Live (drag $d_k$):

# %% tags=["nbval-ignore-output"] alt="Explorer with a d_k slider, titled d_k = 64, length 12, no mask: two 12 by 12 heatmaps of attention weights without a mask, softmax(Q K-transpose) unscaled on the left and scaled by 1/sqrt(d_k) on the right. At d_k = 64 most unscaled rows hold one bright cell of weight near 1; the scaled rows are spread out, no cell near 1. Dragging d_k up makes the unscaled rows one-hot while the scaled ones stay alike."
explorer = AttentionMapExplorer(d_k=64)
explorer

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why 0.24 at $d_k = 1$ and 0.29 later
#
# For a fixed query $q$, the scaled logits $q\cdot k_j/\sqrt{d_k}$ have variance $\lVert q\rVert^2/d_k$
# (the terms $q_i k_{ji}$ have variances $q_i^2$, and they add). That averages 1 over queries and, as
# $d_k$ grows, varies less from query to query; at small $d_k$ it varies a lot, and short queries give
# flat rows.
#
# At $d_k = 1$ a row's logits are $q_1 k_{j1}$: given the query, normal with standard deviation
# $|q_1|$, which differs a lot from row to row. Rows of 12 logits with variance exactly 1 (the limit
# of large $d_k$) against rows whose standard deviation is drawn like $|q_1|$, 100 000 rows each:

# %% tags=["deep-dive"]
g_rows, n_rows = make_rng(SEED + 1), 100_000
unit = softmax(g_rows.standard_normal((n_rows, length))).max(axis=-1)  # logits N(0, 1)
sd_q1 = np.abs(g_rows.standard_normal((n_rows, 1)))  # |q_1|: the standard deviation of a d_k = 1 row
spread = softmax(sd_q1 * g_rows.standard_normal((n_rows, length))).max(axis=-1)
for label, v in (("variance exactly 1", unit), ("standard deviation |q_1|", spread)):
    print(f"{label:25s}: mean largest weight {v.mean():.4f} ± {v.std(ddof=1) / np.sqrt(n_rows):.4f}")
gap_se = np.hypot(spread.std(ddof=1) / np.sqrt(n_rows), mean_max[1][1][1])  # SE of the difference of two simulations
verify(f"sd |q_1| rows {spread.mean():.4f} vs section 5's scaled d_k = 1 (a 100-draw simulation) {mean_max[1][1][0]:.4f}: "
       f"{abs(spread.mean() - mean_max[1][1][0]) / gap_se:.2f} SE apart (limit 4)", abs(spread.mean() - mean_max[1][1][0]) <= 4 * gap_se)
short_rows = sd_q1[:, 0] < 0.5  # short queries
print(f"rows with |q_1| < 0.5: {short_rows.mean():.0%}, their mean largest weight {spread[short_rows].mean():.3f} (uniform {1 / length:.3f})")

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: near 0.29 within how much? Ten seeds
#
# A difference of two of section 5's scaled means (100 draws each) has a standard error (SE) of
# $\sqrt 2$ times one mean's, and that is too large for a tolerance like 0.02 to sit 4 SE away at
# every seed: the check would rest on which draws `SEED` picked. Ten seeds (`SEED` to `SEED + 9`,
# section 5's draws first) give the spread of the four scaled means ($d_k$ = 16 ... 1024) per seed,
# and pooled (1,000 draws per $d_k$) an SE $\sqrt{10}$ times smaller:

# %% tags=["deep-dive"]
seeds = range(SEED, SEED + 10)
draws = {d: np.array([softmax(d**-0.5 * Q @ np.swapaxes(K, -1, -2)).max(axis=-1).mean(axis=-1)
                         for Q, K in (make_rng(s).standard_normal((2, n_draws, length, d)) for s in seeds)])
            for d in d_ks[2:-1]}  # d_k -> (10 seeds, 100 draws): scaled mean largest weight of each draw
by_seed = np.array(list(draws.values()))  # (4 d_k, 10 seeds, 100 draws)
spread_seed = np.ptp(by_seed.mean(axis=2), axis=0)  # per seed: largest minus smallest of the four means
se_diff = 2**0.5 * (by_seed.std(axis=2, ddof=1) / np.sqrt(n_draws)).max(axis=0)  # per seed: SE of a difference
print(f"one seed, 100 draws: spread of the four means median {np.median(spread_seed):.4f} "
      f"(range {spread_seed.min():.4f}–{spread_seed.max():.4f}); 4 SE of a difference median {4 * np.median(se_diff):.4f} "
      f"(range {4 * se_diff.min():.4f}–{4 * se_diff.max():.4f})")
pooled = by_seed.reshape(len(draws), -1)  # (4 d_k, 1000 draws)
means, se_pooled = pooled.mean(axis=1), 2**0.5 * (pooled.std(axis=1, ddof=1) / np.sqrt(pooled.shape[1])).max()
print(f"ten seeds pooled: means {', '.join(f'{m:.4f}' for m in means)} (d_k = 16 ... 1024), "
      f"spread {np.ptp(means):.4f}, 4 SE of a difference {4 * se_pooled:.4f}")
verify("pooled: the four scaled means lie within 0.01 of each other, and 0.01 is at least 4 SE of a difference",
       np.ptp(means) < 0.01 and 0.01 >= 4 * se_pooled)

# %% [markdown] tags=["deep-dive"]
# One seed's spread is of the order of its own SE, so 100 draws cannot tell a flat curve from a
# slope of that size; pooled, the means agree to within 0.01 (up to $d_k = 1024$ here, the costly
# 4096 left to section 5's single seed). "Near 0.29 from $d_k \approx 16$ up" is that statement.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: multi-head attention, and a layer that divides by $\sqrt{d_\text{model}}$
#
# A real layer runs $h$ heads side by side. Each head projects the $d_\text{model}$-long token
# vectors to its own queries and keys of length $d_k$, **the head dimension, often
# $d_\text{model}/h$** but not always (notebook 04, section 5; the next deep dive lists published
# configurations); the $h$ outputs are concatenated and projected back to $d_\text{model}$. A
# head's logit sums $d_k$ products, not $d_\text{model}$: for unit-variance components its variance is
# $d_k$, so $1/\sqrt{d_k}$ brings it back to 1 (next deep dive). What if a layer divided by $\sqrt{d_\text{model}}$ instead? Section 5's
# 100 draws at $d_k = 64$, 12 keys, as one head of a $d_\text{model} = 512$ layer (8 heads), scaled three
# ways (the first two rows repeat section 5's numbers; $1/12 \approx 0.083$ would be perfectly uniform):

# %% tags=["deep-dive"]
d_model, head_dim = 512, 64  # one of 8 heads
Qm, Km = make_rng(SEED).standard_normal((2, n_draws, length, head_dim))  # section 5's draws at d_k = 64
for label, c in (("unscaled", 1.0), ("× 1/√d_k", 1 / np.sqrt(head_dim)), ("× 1/√d_model", 1 / np.sqrt(d_model))):
    print(f"{label:13s}: mean largest weight {softmax(c * Qm @ np.swapaxes(Km, -1, -2)).max(axis=-1).mean():.3f}")

# %% [markdown] tags=["deep-dive"]
# Divided by $\sqrt{d_\text{model}}$, the logits' spread is $\sqrt{64/512} \approx 0.35$ instead of 1, and
# every head's rows start much flatter: mean largest weight 0.141, against 0.083 uniform and 0.285 with
# $1/\sqrt{d_k}$. The scale belongs to the head.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: published head sizes, the per-head check, and what the wrong scale does
#
# Published configurations (`sdpa_helpers.models` gives each row's source):

# %% tags=["deep-dive"]
print(models.format_table([models.model(name) for name in ("Transformer base (2017)", "BERT-base", "GPT-2 small", "Llama 2 7B")]))
print("\nhead_dim ≠ d_model/h:\n" + models.format_table(models.counter_examples()[:3]))

# %% [markdown] tags=["deep-dive"]
# So $d_\text{model}/h$ is common, not a rule (the second table; T5's "none (1)": no division, its
# $W_Q$ starts $\sqrt{d_{kv}}$ times smaller instead, $d_{kv}$ its head_dim; notebook 08).
# A 512-long query and key cut into 8 heads of 64, 20 000 pairs:

# %% tags=["deep-dive"]
n_pairs, heads = 20_000, 8
q_heads, k_heads = rng.standard_normal((2, n_pairs, heads, head_dim))  # (n, h, d_k): 512-vectors cut into 8 pieces
head_logits = np.einsum("nhd,nhd->nh", q_heads, k_heads).ravel()  # one dot product per head
del q_heads, k_heads  # 160 MB: only the logits are needed below
verify_close("Var(per-head q·k) = d_k = 64, not d_model = 512", head_logits.var(), head_dim,
             se=np.sqrt((np.mean((head_logits - head_logits.mean()) ** 4) - head_logits.var() ** 2) / head_logits.size))

# %% [markdown] tags=["deep-dive"]
# The three candidate scales: unscaled std $\sqrt{64} = 8$; times $1/\sqrt{d_k}$, std 1; times
# $1/\sqrt{d_\text{model}}$, std $\sqrt{64/512} \approx 0.354$ — too small, which flattens every
# head's softmax towards uniform. (The SE of a variance is $\sqrt{(m_4 - s^4)/N}$, $m_4$ the
# fourth central moment.)

# %% tags=["deep-dive"] alt="Histograms of one head's logits, d_k = 64 inside d_model = 512, 20000 pairs: unscaled a wide flat curve (std 7.99); times 1/sqrt(d_k) = 1/sqrt(64) a bell of std 1.00; times 1/sqrt(d_model) = 1/sqrt(512) a narrow spike of std 0.35."
for label, c, theory_std in (("unscaled", 1.0, np.sqrt(head_dim)), ("× 1/√d_k", 1 / np.sqrt(head_dim), 1.0),
                             ("× 1/√d_model", 1 / np.sqrt(d_model), np.sqrt(head_dim / d_model))):
    print(f"{label:13s}: std theory {theory_std:.3f}, simulation {c * head_logits.std():.3f}")
ax = attention_maps_plots.head_scale_histograms(head_logits, head_dim, d_model)
ax.figure

# %% [markdown]
# ## Summary
#
# - A query's output is the weighted average of the value rows.
# - Attention is five steps — MatMul $(n_q, d_k) @ (d_k, n_k) \to (n_q, n_k)$, Scale, Mask,
#   SoftMax over the keys, MatMul $(n_q, n_k) @ (n_k, d_v) \to (n_q, d_v)$.
# - A causal mask sets the logits of later keys to $-\infty$: their weights are exactly 0.
# - A query with no key left gets NaN from $-\infty$ (zeros where a library catches it), a
#   uniform row from a replacement, the unmasked row from an added constant (if the addition keeps
#   the logits' digits, as float32 does; in float16 the row can turn uniform, deep dive). PyTorch's answer
#   depends on code path and version (deep dive). This package raises.
# - Under a causal mask row 0 is one-hot at any scale, and a row with $n$ keys has a largest weight of
#   at least $1/n$. With random
#   unit-variance queries and keys, unscaled rows become one-hot as $d_k$ grows; scaled rows
#   keep the same mean largest weight (≈ 0.29 for 12 keys) from $d_k \approx 16$ up.
# - $d_k$ is the head dimension (04; deep dive above), often $d_\text{model}/h$; a head's logits sum $d_k$ products,
#   so the scale is $1/\sqrt{d_k}$.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`, which prints ✅ or ❌ with a hint.
#
# **Exercise 1.** A query's weights over three keys are $(0.5, 0.3, 0.2)$, and the first
# components of the three value rows are $2$, $0$ and $10$. What is the first component of the
# query's output (three significant figures)?

# %%
_ = check("07.output_component", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# The output is the weighted average of the value rows (section 1), component by component:
# $0.5\cdot 2 + 0.3\cdot 0 + 0.2\cdot 10 = 1 + 0 + 2 = 3$. Not the plain mean $12/3 = 4$,
# and not the value of the most-weighted key, 2: that is what a one-hot row would give.
# </details>
#
# **Exercise 2 (conceptual).** Explain: a layer's values get longer: $d_v$ goes from 64 to 256 while $d_k$
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

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3 (apply).** Eight positions, the first 3 padding, under a causal mask: the padding query at
# position 2 has every key masked, and the library *replaces* masked logits by one large
# negative number. What weight goes to key 7, a later token (three significant figures)?

# %% tags=["deep-dive"]
_ = check("07.fully_masked_weight", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Every logit of the row is the same number, and the softmax of $n$ equal logits is uniform:
# $1/8 = 0.125$ for each of the 8 keys, whatever the logits were before the mask. Key 7 too: once
# the row is flattened, the causal mask no longer hides later tokens. (Not $1/3$, uniform over the
# keys 0–2 the causal mask allows, and not 0.)
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** With a causal mask over a sequence of length 10, how many of the
# $10 \times 10$ attention weights are exactly 0 (an integer)?

# %% tags=["deep-dive"]
_ = check("07.causal_zeros", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Row $i$ (counting from 0) masks the keys $i+1, \dots, 9$: that is $9 - i$ zeros. In total
# $9 + 8 + \dots + 0 = 10 \cdot 9 / 2 = 45$ — everything strictly above the diagonal.
# Check: `(~causal_mask(10)).sum()`.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5.** Write `masked_softmax(logits, mask)`: the softmax over the last axis, with a
# weight of exactly 0 wherever `mask` is False, and no overflow on logits like $10^6$. For an
# all-False row (section 4) raise a `ValueError` naming its index, e.g. "row 2 of mask has no
# True entry". Use numpy, not `sdpa_helpers.attention.softmax`.

# %% tags=["deep-dive"]
def masked_softmax(logits, mask):
    ...  # your code: weight exactly 0 where mask is False; ValueError naming an all-False row


_ = check("07.masked_softmax", masked_softmax)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def masked_softmax(logits, mask):
#     mask = np.broadcast_to(mask, np.shape(logits))
#     empty = ~mask.any(axis=-1)                   # rows with no key left
#     if empty.any():
#         row = np.argwhere(empty)[0]
#         raise ValueError(f"row {tuple(row.tolist())} of mask has no True entry: no key to attend to")
#     z = np.where(mask, logits, -np.inf)          # forbidden keys get -inf
#     z = z - z.max(axis=-1, keepdims=True)        # largest allowed logit becomes 0: no overflow
#     e = np.exp(z)                                # exp(-inf) = 0 exactly
#     return e / e.sum(axis=-1, keepdims=True)
# ```
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [08 — Does unit variance hold?](08_does_unit_variance_hold.ipynb)
