# %% [markdown]
# # 08 — Does unit variance hold?
#
# The whole case for $1/\sqrt{d_k}$ rests on one sentence, footnote 4 of *Attention Is All
# You Need* (Vaswani et al., 2017):
#
# > To illustrate why the dot products get large, assume that the components of $q$ and $k$
# > are independent random variables with mean 0 and variance 1. Then their dot product,
# > $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$, has mean 0 and variance $d_k$.
#
# That is an *assumption*. In a real layer, $q = W_Q x$ and $k = W_K x'$ are made from
# token vectors by learned matrices. This notebook asks whether the assumption holds there:
# at initialisation (it depends on how $W_Q, W_K$ are initialised), and after training
# (when $q$ and $k$ become correlated, it breaks — and that is why μP and QK-norm exist).
#
# **The main line:** sections 1–3 follow the variance through LayerNorm and the projections
# at initialisation; section 5 shows what correlation does; sections 6–7 cover the fixes used
# in practice. Paragraphs headed *Side note* go deeper and can be skipped on a first reading.
#
# **Learning goals**
# - Trace unit variance through a real layer: LayerNorm gives $\mathrm{E}[x^2] = 1$, and the initialisation of $W_Q$ sets $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\mathrm{Var}(W)$.
# - Work out $\mathrm{Var}(q\cdot k)$ when $q$ and $k$ come from the same token or from two tokens, and check it by simulation.
# - Derive what correlated $q$ and $k$ do to the logits ($\mathrm{E}[q\cdot k] = \rho\, d_k$) and why μP scales by $1/d_k$.
# - Explain QK-norm, and what large models report about attention-logit growth and entropy collapse.
#
# **Prerequisites**
# - Notebook 02 (mean and variance of a sum and of a product), 04 ($\mathrm{Var}(cX) =
#   c^2\,\mathrm{Var}(X)$), 05 (softmax saturation) and 07 (multi-head attention).

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import assumptions as A
from sdpa_helpers import make_rng
from sdpa_helpers.attention import layer_norm, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import assumptions as assumption_plots
from sdpa_helpers.widgets.assumptions import D_MODEL_CHOICES, CorrelationExplorer, InitExplorer, init_scaled_logits

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. LayerNorm: tokens with mean 0 and variance 1
#
# In a Transformer the attention layer does not see raw token vectors: in the now common
# pre-LN layout, each token first goes through LayerNorm, which subtracts the token's own mean
# and divides by its own standard deviation, over its $d_\text{model}$ components. (LayerNorm
# then applies a learned gain and bias, which start at 1 and 0; we leave them out.)
# Here are four raw tokens with very different offsets and spreads, before and after
# (`layer_norm` has no learned gain or bias; it adds $\varepsilon = 10^{-5}$ to the variance).

# %%
d_model = 512
g = make_rng(SEED)
offset = 2.0 * g.standard_normal((4, 1))  # each token its own offset ...
spread = np.exp(0.5 * g.standard_normal((4, 1)))  # ... and its own spread
raw = offset + spread * g.standard_normal((4, d_model))  # (4, d_model)
x = layer_norm(raw)  # (4, d_model), normalised along d_model
print("token | raw mean | raw var | LayerNorm mean | LayerNorm var | |x|²/d_model")
for t in range(4):
    print(f"{t:5d} | {raw[t].mean():8.3f} | {raw[t].var():7.3f} | {x[t].mean():14.1e} | {x[t].var():13.6f} "
          f"| {np.sum(x[t] ** 2) / d_model:.6f}")
assert np.allclose(x.mean(axis=1), 0.0, atol=1e-12) and np.allclose(x.var(axis=1), 1.0, atol=1e-4)
assert np.array_equal(x, A.sample_tokens(4, d_model, rng=SEED))  # the helper used below: same recipe

# %% [markdown]
# After LayerNorm every token has mean 0 and variance 1 (up to $\varepsilon$, which is why the
# last column is a hair below 1), so the average square of its components is $\mathrm{E}[x^2] = 1$ and
# its squared length is $|x|^2 = \sum_j x_j^2 = d_\text{model}$, the same for every token. `A.sample_tokens` makes tokens this way; we use it
# from now on.

# %% [markdown]
# ## 2. The projection decides $\mathrm{Var}(q_i)$
#
# One query component is $q_i = \sum_j W_{ij}\, x_j$, a sum over the $\text{fan\_in} =
# d_\text{model}$ components of $x$. At initialisation the weights are independent, with mean
# 0 and variance $\mathrm{Var}(W)$, and independent of $x$. So
#
# $$\mathrm{E}[q_i] = \sum_j \mathrm{E}[W_{ij}]\,x_j = 0, \qquad
# \mathrm{Var}(q_i) = \sum_j \sum_l \mathrm{E}[W_{ij}W_{il}]\,x_j x_l = \mathrm{Var}(W)\,|x|^2
# = \text{fan\_in}\cdot\mathrm{Var}(W)\cdot\mathrm{E}[x^2],$$
#
# because $\mathrm{E}[W_{ij}W_{il}] = 0$ for $j \ne l$. With LayerNorm, $\mathrm{E}[x^2] = 1$.
# Each initialisation sets $\mathrm{Var}(W)$ differently:
#
# | initialisation | $\mathrm{Var}(W)$ | $\mathrm{Var}(q_i)$ |
# |---|---|---|
# | LeCun | $1/\text{fan\_in}$ | $1$ exactly |
# | Xavier/Glorot | $2/(\text{fan\_in}+\text{fan\_out})$ | $2\,\text{fan\_in}/(\text{fan\_in}+\text{fan\_out})$: 1 only for a square matrix |
# | PyTorch `nn.Linear` default, $U(\pm 1/\sqrt{\text{fan\_in}})$ | $1/(3\,\text{fan\_in})$ | $1/3$ |
# | He/Kaiming | $2/\text{fan\_in}$ | $2$ |
# | GPT-2, $N(0, 0.02^2)$ | $0.0004$ | $0.0004\, d_\text{model}$: grows with the width |
#
# Where the $1/3$ comes from: `nn.Linear` calls `kaiming_uniform_(weight, a=√5)`, a uniform
# on $\pm\,\text{gain}\cdot\sqrt{3/\text{fan\_in}}$ with $\text{gain} = \sqrt{2/(1+a^2)}$.
# A uniform on $\pm b$ has variance $b^2/3$.

# %%
a = np.sqrt(5.0)
bound = np.sqrt(2.0 / (1.0 + a**2)) * np.sqrt(3.0 / d_model)
w = rng.uniform(-bound, bound, size=1_000_000)
se_w = np.sqrt((np.mean((w - w.mean()) ** 4) - w.var() ** 2) / w.size)  # SE of a variance estimate
print(f"bound = {bound:.6f} = 1/√{d_model} = {1 / np.sqrt(d_model):.6f}")
print(f"Var(W): theory 1/(3·{d_model}) = {1 / (3 * d_model):.4e}, simulation {w.var():.4e} (SE {se_w:.1e})")
assert np.isclose(bound, 1 / np.sqrt(d_model)) and abs(w.var() - 1 / (3 * d_model)) < 4 * se_w
assert np.isclose(A.init_weight_variance("pytorch_default", d_model), bound**2 / 3)

# %% [markdown]
# Xavier's value depends on the shape of the matrix, and code differs in what that shape is.
# One head's projection $d_\text{model} \to d_k$ (512 → 64) is far from square; one matrix for
# all heads (512 → 512) is square; PyTorch's `nn.MultiheadAttention` keeps $W_Q, W_K, W_V$ in
# one fused `in_proj_weight` of shape $(3 d_\text{model}, d_\text{model})$ and initialises it
# with `xavier_uniform_` — that is 512 → 1536.
#
# Now the check: for each initialisation, 40 independently initialised networks (one head,
# $d_k = 64$ rows of $W_Q$ each) project the same 200 LayerNormed tokens. The estimate of
# $\mathrm{Var}(q_i) = \mathrm{E}[q_i^2]$ averages $q_i^2$; its standard error (SE) treats each
# network as one independent draw (`A.cluster_mean`: the spread of the 40 per-network
# averages, divided by $\sqrt{40}$). We accept $|\text{simulation} - \text{theory}| < 4\,\mathrm{SE}$.

# %%
d_k = 64
n_networks, n_tokens = 40, 200
X = A.sample_tokens(n_tokens, d_model, rng=rng)  # (n_tokens, d_model), LayerNormed
cases = [(scheme, "head") for scheme in A.INITS] + [("xavier", "all_heads"), ("xavier", "fused_qkv")]
var_q = {}
print(f"{'initialisation':15s} {'matrix':>12s} {'Var(W)':>9s} | Var(q_i): theory  simulation (SE)")
for scheme, projection in cases:
    fan_out = A.projection_fan_out(projection, d_model, d_k)
    W = A.sample_weights(scheme, d_model, fan_out, size=n_networks, rows=d_k, rng=rng)  # (networks, d_k, d_model)
    q = X @ np.swapaxes(W, -1, -2)  # (n_tokens, d_model) @ (networks, d_model, d_k) -> (networks, n_tokens, d_k)
    estimate, se = A.cluster_mean((q**2).reshape(n_networks, -1))
    theory = A.query_variance(scheme, d_model, fan_out)
    var_q[scheme, projection] = theory
    assert abs(estimate - theory) < 4 * se
    print(f"{scheme:15s} {f'{d_model}→{fan_out}':>12s} {A.init_weight_variance(scheme, d_model, fan_out):9.2e} |"
          f"          {theory:6.3f}  {estimate:6.3f} ({se:.3f})")

# %% [markdown]
# The numbers of the table, as exact fractions:

# %%
print(f"Xavier, one head 512→64    : 2·512/(512+64)   = {2 * 512 / (512 + 64):.4f}")
print(f"Xavier, all heads 512→512  : 2·512/(512+512)  = {2 * 512 / (512 + 512):.4f}")
print(f"Xavier, fused QKV 512→1536 : 2·512/(512+1536) = {2 * 512 / (512 + 1536):.4f}")
print(f"PyTorch default            : 1/3              = {1 / 3:.4f}")
print(f"GPT-2 N(0, 0.02²), d_model 512: 0.0004·512 = {0.0004 * 512:.4f}; "
      f"d_model 768 (GPT-2 small): {A.query_variance('gpt2', 768):.4f}")
assert np.isclose(var_q["xavier", "head"], 2 * 512 / 576) and np.isclose(var_q["xavier", "fused_qkv"], 0.5)

# %% [markdown]
# Only LeCun's $1/\text{fan\_in}$ (and Xavier on a square matrix) delivers the footnote's
# variance 1. The others are off by a constant factor — $1/3$, $0.5$, $1.78$, $2$ — or, for a
# fixed standard deviation like GPT-2's, by a factor that changes with $d_\text{model}$.

# %% [markdown]
# ## 3. From $\mathrm{Var}(q_i)$ to $\mathrm{Var}(q\cdot k)$: same token or different tokens?
#
# In self-attention $q = W_Q x$ and $k = W_K x'$ come from the same sequence, and the
# diagonal of $QK^\top$ even pairs a token with *itself* ($x' = x$). Are $q_i$ and $k_i$
# then still independent? Condition on the tokens. $W_Q$ and $W_K$ are independent random
# matrices, so $q_i$ (built from row $i$ of $W_Q$) and $k_i$ (row $i$ of $W_K$) are
# independent with mean 0 — whether or not $x' = x$. Products from different rows are
# uncorrelated: $\mathrm{E}[q_i k_i\, q_j k_j] = \mathrm{E}[q_i q_j]\,\mathrm{E}[k_i k_j] = 0$.
# So
#
# $$\mathrm{E}[q\cdot k] = 0, \qquad
# \mathrm{Var}(q\cdot k \mid x, x') = \sum_{i=1}^{d_k} \mathrm{E}[q_i^2]\,\mathrm{E}[k_i^2]
# = d_k\,\mathrm{Var}(W)^2\,|x|^2\,|x'|^2 .$$
#
# After LayerNorm, $|x|^2 = |x'|^2 = d_\text{model}$, and this is $d_k\,\mathrm{Var}(q_i)^2$ for
# any pair of tokens. For the PyTorch default that is $d_k/9$.
#
# The simulation: for each of 40 networks, $q\cdot k$ for 200 token pairs. Since the mean is 0,
# $\mathrm{Var}(q\cdot k) = \mathrm{E}[(q\cdot k)^2]$, estimated with the same per-network SE.

# %%
X2 = A.sample_tokens(n_tokens, d_model, rng=rng)  # a second, independent set of tokens
print(f"{'initialisation':15s} {'pairing':16s} | Var(q·k): theory  simulation (SE) | mean (SE)")
for scheme in ("lecun", "pytorch_default"):
    theory = A.init_logit_moments(scheme, d_model, d_k)
    for pairing, partner in (("different tokens", X2), ("same token", None)):
        logits = A.sample_projected_logits(scheme, d_k, X, partner, n_networks=n_networks, rng=rng)
        estimate, se = A.cluster_mean(logits**2)
        mean, mean_se = A.cluster_mean(logits)
        assert abs(estimate - theory.var) < 4 * se and abs(mean) < 4 * mean_se
        print(f"{scheme:15s} {pairing:16s} |          {theory.var:6.2f}  {estimate:6.2f} ({se:.2f})"
              f"    | {mean:5.2f} ({mean_se:.2f})")
print(f"d_k/9 = {d_k}/9 = {d_k / 9:.2f}")

# %% [markdown]
# Same token or not, the variance is $d_k\,\mathrm{Var}(q_i)^2$: sharing $x$ does not
# correlate $q$ with $k$, because the two matrices are drawn independently.
#
# *Side note — where sharing $x$ does matter: tokens of different lengths.* The formula above has
# $|x|^2|x'|^2$ in it. Averaged over token pairs, a token with itself gives
# $\mathrm{E}[|x|^4]$, two independent tokens give $\mathrm{E}[|x|^2]^2$, and
# $\mathrm{E}[|x|^4] \ge \mathrm{E}[|x|^2]^2$ with equality only when every token has the same
# length. Without LayerNorm the raw tokens' lengths vary a lot, and the diagonal of $QK^\top$
# gets a larger variance than the rest. The theory below is computed from the tokens
# themselves: $d_k\,\mathrm{Var}(W)^2$ times the average of $|x|^2|x'|^2$.

# %%
raw_X = A.sample_tokens(n_tokens, d_model, layer_normed=False, rng=rng)
raw_X2 = A.sample_tokens(n_tokens, d_model, layer_normed=False, rng=rng)
sq_len, sq_len2 = np.sum(raw_X**2, axis=1), np.sum(raw_X2**2, axis=1)  # |x|², |x'|²: (n_tokens,)
var_w = A.init_weight_variance("lecun", d_model)
results = {}
for pairing, partner, lengths in (("different tokens", raw_X2, sq_len * sq_len2), ("same token", None, sq_len**2)):
    logits = A.sample_projected_logits("lecun", d_k, raw_X, partner, n_networks=n_networks, rng=rng)
    estimate, se = A.cluster_mean(logits**2)
    theory = d_k * var_w**2 * lengths.mean()
    results[pairing] = theory
    assert abs(estimate - theory) < 4 * se
    print(f"raw tokens, {pairing:16s}: Var(q·k) theory {theory:9.1f}, simulation {estimate:9.1f} ({se:.1f})")
print(f"ratio same / different: {results['same token'] / results['different tokens']:.2f} "
      f"(after LayerNorm: 1, since every |x|² = d_model)")

# %% [markdown]
# *Side note — where $q$ and $k$ are truly dependent: tied weights.* If a model used one matrix for
# both ($W_K = W_Q$), a token's query and key would be the *same* vector, and its logit with
# itself $q\cdot q = |q|^2 \ge 0$, with mean $d_k\,\mathrm{Var}(q_i)$ instead of 0. That is
# correlation $\rho = 1$, the extreme case of section 5.

# %%
logits = A.sample_projected_logits("lecun", d_k, X, None, n_networks=n_networks, tied=True, rng=rng)
mean, mean_se = A.cluster_mean(logits)
assert (logits >= 0).all() and abs(mean - d_k * var_q["lecun", "head"]) < 4 * mean_se
print(f"tied W_K = W_Q, same token: every logit >= 0: {(logits >= 0).all()}; "
      f"mean {mean:.2f} ({mean_se:.2f}), theory d_k·Var(q_i) = {d_k * var_q['lecun', 'head']:.2f}")

# %% [markdown]
# **What this means for $1/\sqrt{d_k}$.** The scaled logit $q\cdot k/\sqrt{d_k}$ has variance
# $\mathrm{Var}(q_i)^2$: the scale removes the $d_k$, but not the initialisation's factor.
# With PyTorch's default `nn.Linear` the scaled logits start with standard deviation
# $\mathrm{Var}(q_i) = 1/3$ instead of 1 — attention starts closer to uniform, and the logits
# must grow during training before any head can attend sharply.

# %%
for scheme, projection in cases:
    m = A.init_logit_moments(scheme, d_model, d_k, fan_out=A.projection_fan_out(projection, d_model, d_k),
                             scale=d_k ** -0.5)
    print(f"{scheme:15s} {projection:9s}: std of q·k/√d_k = Var(q_i) = {m.std:.3f}")

# %% [markdown]
# ## 4. Explore: initialisation, width and the scaled logits
#
# First the still version. The simulation: 8 networks, each scoring 256 pairs of
# LayerNormed tokens, one head of $d_k = 64$. (To keep it fast, the 8 networks are
# simulated once per weight distribution — normal, uniform — and rescaled: $q\cdot k$ is a product of a $W_Q$ and a
# $W_K$ term, so weights with $c$ times the variance give logits with $c^2$ times the variance.
# The explorer below uses exactly these samples.) First the scaled logits at
# $d_\text{model} = 512$ for each initialisation, against the $N(0, 1)$ the footnote
# promises (dotted):

# %%
panels = {}
for scheme in A.INITS:
    s = init_scaled_logits(scheme, 512)  # (8 networks, 256 token pairs): q·k/√d_k
    panels[A.INIT_SHORT_LABELS[scheme]] = (s, A.init_logit_moments(scheme, 512, d_k, scale=d_k ** -0.5).var)
fig = assumption_plots.init_small_multiples(panels)
fig

# %% [markdown]
# Then $\mathrm{Var}(q\cdot k/\sqrt{d_k}) = \mathrm{Var}(q_i)^2$ against $d_\text{model}$, theory
# as lines and simulation as markers (± 2 SE, with the per-network SE of section 2). Every
# marker is checked against its line at 4 SE.

# %%
theory_curves, simulated = {}, {}
for scheme in A.INITS:
    theory = [A.init_logit_moments(scheme, d, d_k, scale=d_k ** -0.5).var for d in D_MODEL_CHOICES]
    points = np.array([A.cluster_mean(init_scaled_logits(scheme, d) ** 2) for d in D_MODEL_CHOICES]).T
    assert (np.abs(points[0] - theory) < 4 * points[1]).all()  # (2, len(D_MODEL_CHOICES)): estimates, SEs
    theory_curves[A.INIT_LABELS[scheme]], simulated[A.INIT_LABELS[scheme]] = theory, points
for scheme in ("xavier", "gpt2"):
    ends = [A.init_logit_moments(scheme, d, d_k, scale=d_k ** -0.5).var for d in (D_MODEL_CHOICES[0], D_MODEL_CHOICES[-1])]
    print(f"{scheme}: Var(q·k/√d_k) = {ends[0]:.4f} at d_model = {D_MODEL_CHOICES[0]}, "
          f"{ends[1]:.4f} at d_model = {D_MODEL_CHOICES[-1]}")
print(f"GPT-2 passes 1 where 0.0004·d_model = 1: d_model = {1 / 0.0004:.0f}")
ax = assumption_plots.init_variance_vs_d_model(D_MODEL_CHOICES, theory_curves, simulated)
ax.figure

# %% [markdown]
# Flat lines are initialisations that scale with the width ($\mathrm{Var}(W) \propto
# 1/\text{fan\_in}$); only LeCun's sits on 1. Xavier's per-head line rises from 1 (at
# $d_\text{model} = d_k = 64$, a square matrix) towards 4 as $d_\text{model}$ outgrows $d_k$
# ($\mathrm{Var}(q_i) \to 2$); GPT-2's fixed $0.02$ climbs like $d_\text{model}^2$ and passes 1
# at $d_\text{model} = 2500$ — of the widths here, only at 4096. Now the live version: pick
# $d_\text{model}$, the initialisation and the shape of the projection matrix.

# %% tags=["nbval-ignore-output"]
init_explorer = InitExplorer(d_model=512)
init_explorer

# %% [markdown]
# ## 5. When the assumptions break: correlated queries and keys
#
# Training exists to make queries *agree* with the keys they should attend to. After
# training, $q$ and $k$ are no longer independent. A simple model of that: each key component
# is partly a copy of the query component,
#
# $$k = \rho\, q + \sqrt{1-\rho^2}\; z ,$$
#
# with $z$ independent of $q$, all components mean 0 and variance 1. Then $\mathrm{Var}(k_i) =
# \rho^2 + (1 - \rho^2) = 1$ and the correlation of $q_i$ with $k_i$ is $\rho$.
#
# **Mean.** $\mathrm{E}[q_i k_i] = \rho\,\mathrm{E}[q_i^2] + \sqrt{1-\rho^2}\,\mathrm{E}[q_i]\mathrm{E}[z_i]
# = \rho$, so $\mathrm{E}[q\cdot k] = \rho\, d_k$: it grows *linearly* in $d_k$.
#
# **Variance.** For Gaussian components $\mathrm{E}[q_i^4] = 3$, and the cross term has
# $\mathrm{E}[q_i^3]\,\mathrm{E}[z_i] = 0$:
#
# $$\mathrm{E}[q_i^2 k_i^2] = \rho^2\,\mathrm{E}[q_i^4] + (1-\rho^2)\,\mathrm{E}[q_i^2]\,\mathrm{E}[z_i^2]
# = 3\rho^2 + 1 - \rho^2, \qquad
# \mathrm{Var}(q_i k_i) = 3\rho^2 + 1 - \rho^2 - \rho^2 = 1 + \rho^2 .$$
#
# The $d_k$ products are independent, so $\mathrm{Var}(q\cdot k) = d_k(1 + \rho^2)$: the spread
# grows only like $\sqrt{d_k}$. After the $1/\sqrt{d_k}$ scale the logit has
#
# $$\text{mean } \rho\sqrt{d_k} \quad (\text{still growing}), \qquad \text{variance } 1 + \rho^2 .$$
#
# (*Side note:* for components with another kurtosis $\kappa = \mathrm{E}[q_i^4]$,
# $\mathrm{Var}(q_i k_i) = \rho^2(\kappa - 1) + 1 - \rho^2$.) The check, with $\rho = 0.5$ and
# 20 000 pairs per $d_k$; the SE of a variance estimate is $\sqrt{(m_4 - s^4)/N}$:

# %%
rho, n_pairs = 0.5, 20_000
print(f" d_k | mean: theory  simulation (SE) | variance: theory  simulation (SE)")
for d in (1, 16, 256):
    s = A.sample_correlated_dot_products(d, n_pairs, rho, rng=rng)
    theory = A.correlated_dot_product_moments(d, rho)
    se_mean = s.std() / np.sqrt(n_pairs)
    se_var = np.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / n_pairs)
    assert abs(s.mean() - theory.mean) < 4 * se_mean and abs(s.var() - theory.var) < 4 * se_var
    print(f"{d:4d} | {theory.mean:12.2f}  {s.mean():10.2f} ({se_mean:.2f}) | {theory.var:16.2f}  "
          f"{s.var():10.2f} ({se_var:.2f})")
print(f"per component: Var(q_i k_i) = 1 + ρ² = {1 + rho**2:.2f}")

# %% [markdown]
# *Side note:* the same check with uniform components ($\kappa = 1.8$), where the per-component variance
# is $0.8\rho^2 + 1 - \rho^2$:

# %%
d = 64
s = A.sample_correlated_dot_products(d, n_pairs, rho, dist="uniform", rng=rng)
theory = A.correlated_dot_product_moments(d, rho, kurtosis=A.KURTOSIS["uniform"])
se_var = np.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / n_pairs)
assert abs(s.var() - theory.var) < 4 * se_var
print(f"uniform q, d_k = {d}: Var(q·k) theory {theory.var:.2f} (= {d}·{theory.var / d:.2f}), "
      f"simulation {s.var():.2f} ({se_var:.2f})")

# %% [markdown]
# **Why a growing mean matters.** The softmax ignores a constant added to a whole row, so
# what counts is the *gap* between the key that matches the query and the others. Take one
# key correlated with the query ($\rho$) among keys that are not ($\rho = 0$). With the
# $1/\sqrt{d_k}$ scale, the gap is $\rho\sqrt{d_k}$, so as $d_k$ grows the matching key takes
# all the weight again — the saturation of notebook 05, back through the correlation. With
# a $1/d_k$ scale, the gap is $\rho$ whatever $d_k$ is, and the noise (std
# $\sqrt{(1+\rho^2)/d_k}$) shrinks. The histograms, at $\rho = 0.5$ (top: $1/\sqrt{d_k}$;
# bottom: $1/d_k$; curves: normal densities with the theoretical mean and variance — at
# $d_k = 4$ the sums are still visibly skewed):

# %%
by_d_k = {}
for d in (4, 64, 1024):
    qq, qz = A.correlated_dot_product_parts(d, 4000, rng=SEED)
    _, unrelated = A.correlated_dot_product_parts(d, 4000, rng=SEED + 1)  # q'·z': a key with rho = 0
    by_d_k[d] = (rho * qq + np.sqrt(1 - rho**2) * qz, unrelated)  # q·k = rho q·q + sqrt(1 - rho²) q·z
fig = assumption_plots.correlated_small_multiples(by_d_k, rho)
fig

# %% [markdown]
# And what the softmax makes of it: one correlated key among $n = 12$ keys, the mean weight
# it gets, for 400 queries per $d_k$. With $1/d_k$, the logits tend to $(\rho, 0, \dots, 0)$
# and the weight to $e^\rho/(e^\rho + n - 1)$.

# %%
n_keys, n_queries = 12, 400
d_ks = [1, 4, 16, 64, 256, 1024, 4096]
weight_sqrt, weight_inv = [], []
g = make_rng(SEED)
for d in d_ks:
    q, k_match = A.sample_correlated_qk(n_queries, d, rho, rng=g)  # (n_queries, d_k) each
    dots = np.empty((n_queries, n_keys))
    dots[:, 0] = np.einsum("nd,nd->n", q, k_match)
    for j in range(1, n_keys):  # unrelated keys, one at a time to keep memory small
        dots[:, j] = np.einsum("nd,nd->n", q, g.standard_normal((n_queries, d)))
    weight_sqrt.append(softmax(dots / np.sqrt(d))[:, 0])  # weight on the correlated key, per query
    weight_inv.append(softmax(dots / d)[:, 0])
limit = np.exp(rho) / (np.exp(rho) + n_keys - 1)
print(" d_k | mean weight on the correlated key: ×1/√d_k   ×1/d_k (SE)")
for d, ws, wi in zip(d_ks, weight_sqrt, weight_inv):
    print(f"{d:4d} | {ws.mean():38.3f}  {wi.mean():7.3f} ({wi.std(ddof=1) / np.sqrt(n_queries):.4f})")
print(f"limit of the 1/d_k column: e^ρ/(e^ρ + {n_keys - 1}) = {limit:.3f}; uniform: 1/{n_keys} = {1 / n_keys:.3f}")
se_last = weight_inv[-1].std(ddof=1) / np.sqrt(n_queries)
assert weight_sqrt[-1].mean() > 0.99 and abs(weight_inv[-1].mean() - limit) < 4 * se_last
weight_sqrt, weight_inv = [w.mean() for w in weight_sqrt], [w.mean() for w in weight_inv]

# %%
ax = assumption_plots.match_weight_vs_d_k(d_ks, weight_sqrt, weight_inv, limit=limit)
ax.figure

# %% [markdown]
# With $1/\sqrt{d_k}$ the weight on the matching key heads to 1 as $d_k$ grows (one-hot
# again); with $1/d_k$ it settles at the same value for every large $d_k$. This is the
# argument Yang et al. (2022, *Tensor Programs V*) give for the attention scale of **μP**: once
# training has made $q$ and $k$ correlated, $q\cdot k$ grows like $d_k$ (a law of large numbers), not like $\sqrt{d_k}$ (the
# central limit theorem behind the footnote), so μP divides by $d_k$ to keep attention logits
# of the same size as models grow wider. The price shows at initialisation ($\rho = 0$): the
# $1/d_k$ logits have standard deviation $1/\sqrt{d_k}$, so attention starts almost uniform.
#
# Drag $d_k$ and $\rho$ yourself. Left: the scaled logits of the correlated key (orange) and of
# an unrelated key (blue). Right: the mean of the correlated key's logit for both scales.

# %% tags=["nbval-ignore-output"]
correlation_explorer = CorrelationExplorer(rho=0.5, d_k=64)
correlation_explorer

# %% [markdown]
# ## 6. QK-norm: bound the logits directly
#
# Henry et al. (2020) take another route. **QK-norm** normalises every query and key to unit
# length ($\ell_2$, along the head dimension) and multiplies by a learned scalar $g$ instead
# of dividing by $\sqrt{d_k}$:
#
# $$\text{logit} = g\,\frac{q}{|q|}\cdot\frac{k}{|k|} = g\cos\theta \in [-g, g] .$$
#
# Whatever $d_k$ is and however large $q$ and $k$ grow, no logit can leave $[-g, g]$: the
# sharpness of the softmax is set by one learned number.
#
# How does this compare with scaled attention at the start, for random vectors? Let $u = q/|q|$
# and $v = k/|k|$. For Gaussian $q$, $u$ is uniform on the unit sphere; by symmetry its
# $d_k$ squared components have the same mean, and they sum to 1, so $\mathrm{E}[u_i^2] =
# 1/d_k$; flipping the sign of one component does not change the distribution, so
# $\mathrm{E}[u_i u_j] = 0$ for $i \ne j$. Together: $\mathrm{E}[u u^\top] = I/d_k$, and the same
# holds for $v$. With $v$ independent of $u$, $\mathrm{E}[\cos\theta] = 0$ and
#
# $$\mathrm{Var}(\cos\theta) = \mathrm{E}[(u\cdot v)^2] = \mathrm{E}\big[u^\top\,\mathrm{E}[v v^\top]\,u\big]
# = \mathrm{E}[u^\top u]/d_k = 1/d_k \quad\text{exactly.}$$
#
# So **$g = \sqrt{d_k}$ gives logits of variance 1**, as $1/\sqrt{d_k}$ does. The check: the
# mean of $d_k\cos^2\theta$ should be 1, with the SE of a mean (its sample std over $\sqrt{N}$):

# %%
n_vec = 4000
print(" d_k | Var(cos θ)·d_k: theory  simulation (SE)")
for d in (1, 2, 4, 16, 64, 256, 1024):
    q, k = rng.standard_normal((n_vec, d)), rng.standard_normal((n_vec, d))  # (n_vec, d_k) each
    cos = np.einsum("nd,nd->n", q, k) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    assert np.allclose(cos[:5], np.diagonal(A.qk_norm_scores(q[:5], k[:5])))  # the helper agrees
    d_cos2 = d * cos**2
    est, se = d_cos2.mean(), d_cos2.std(ddof=1) / np.sqrt(n_vec)
    theory = d * A.cosine_moments(d).var
    assert abs(est - theory) < 4 * se or (se < 1e-12 and np.isclose(est, theory))  # d_k = 1: cos² = 1, no spread
    print(f"{d:4d} | {theory:23.3f}  {est:10.3f} ({se:.3f})")

# %% [markdown]
# ($d_k = 1$ is the extreme case: $\cos\theta = \pm 1$ always.) Side by side at a few $d_k$,
# QK-norm logits $\sqrt{d_k}\cos\theta$ and scaled logits $q\cdot k/\sqrt{d_k}$ both have variance
# 1 (printed in the legends). At $d_k = 4$ the QK-norm logits cannot leave $[-2, 2]$; as $d_k$
# grows both histograms approach $N(0, 1)$:

# %%
qk_norm_logits, scaled_logits = {}, {}
for d in (4, 64, 1024):
    q, k = rng.standard_normal((n_vec, d)), rng.standard_normal((n_vec, d))
    qk_norm_logits[d] = A.qk_norm_scores(q[:, None, :], k[:, None, :], gain=np.sqrt(d))[:, 0, 0]  # (n_vec,)
    scaled_logits[d] = np.einsum("nd,nd->n", q, k) / np.sqrt(d)
fig = assumption_plots.cosine_small_multiples(qk_norm_logits, scaled_logits)
fig

# %% [markdown]
# The difference shows once $q$ and $k$ are correlated. With a fixed $g$ (say the network has
# learned $g = 5$) and $\rho = 0.5$: the scaled logit's mean $\rho\sqrt{d_k}$ keeps growing, while
# $\cos\theta \to \rho$ (by the law of large numbers, $q\cdot k/d_k \to \rho$ and $|q|/\sqrt{d_k},
# |k|/\sqrt{d_k} \to 1$), so the QK-norm logit settles near $g\rho$, and never exceeds $g$.

# %%
gain = 5.0
print(f" d_k | scaled logit mean (theory ρ√d_k) | QK-norm logit mean (→ gρ = {gain * rho:.2f}) | max |QK-norm logit|")
for d in (4, 64, 1024):
    q, k = A.sample_correlated_qk(2000, d, rho, rng=rng)
    scaled = np.einsum("nd,nd->n", q, k) / np.sqrt(d)
    normed = A.qk_norm_scores(q[:, None, :], k[:, None, :], gain=gain)[:, 0, 0]  # g cos θ per pair: (2000,)
    se = scaled.std() / np.sqrt(scaled.size)
    assert abs(scaled.mean() - rho * np.sqrt(d)) < 4 * se and np.abs(normed).max() <= gain
    print(f"{d:4d} | {scaled.mean():8.2f} ({rho * np.sqrt(d):5.2f})                  | {normed.mean():8.2f}"
          f"                        | {np.abs(normed).max():.2f} ≤ {gain:.0f}")

# %% [markdown]
# *Side note:* **LayerNorm on $q$ and $k$** ("QK-layernorm", used by the papers of the next
# section) is a close cousin. LayerNorm (without its learned gain) centres a vector and rescales it to
# length $\sqrt{d_k}$, so $\mathrm{LN}(q)\cdot\mathrm{LN}(k)/\sqrt{d_k} = \sqrt{d_k}\cos\theta'$,
# with $\theta'$ the angle between the centred $q$ and $k$: QK-norm with $g = \sqrt{d_k}$, applied
# to centred vectors. The LayerNorms' learned gains (one per component, not a single number)
# then play a part like $g$'s. Checked exactly ($\varepsilon = 0$, no gains):

# %%
q, k = rng.standard_normal((5, 64)), rng.standard_normal((5, 64))
lhs = np.einsum("nd,nd->n", layer_norm(q, eps=0.0), layer_norm(k, eps=0.0)) / np.sqrt(64)
qc, kc = q - q.mean(axis=1, keepdims=True), k - k.mean(axis=1, keepdims=True)
rhs = np.sqrt(64) * np.einsum("nd,nd->n", qc, kc) / (np.linalg.norm(qc, axis=1) * np.linalg.norm(kc, axis=1))
assert np.allclose(lhs, rhs)
print("LN(q)·LN(k)/√d_k :", np.array2string(lhs, precision=4))
print("√d_k · cos θ'    :", np.array2string(rhs, precision=4))

# %% [markdown]
# ## 7. Entropy collapse in practice
#
# The failure this course has simulated — logits so large that each attention row is
# one-hot, with almost no gradient — has been reported in real training runs. What these
# papers report (qualitatively; see them for the numbers):
#
# - **Vaswani et al. (2017)**, §3.2.1 and footnote 4, give the original argument: "We suspect
#   that for large values of $d_k$, the dot products grow large in magnitude, pushing the
#   softmax function into regions where it has extremely small gradients." They note that
#   additive attention outperforms dot-product attention *without scaling* for larger $d_k$,
#   citing **Britz et al. (2017)**, a large study of neural machine translation architectures
#   in which additive attention did slightly but consistently better than multiplicative
#   (dot-product) attention.
# - **Dehghani et al. (2023)**, scaling Vision Transformers towards 22 billion parameters, saw
#   the training loss diverge, caused by extremely large attention logits that made the
#   attention weights almost one-hot (near-zero entropy). They applied LayerNorm to the
#   queries and keys before the dot product, which stabilised training.
# - **Zhai et al. (2023)** tracked the entropy of every attention head during training and
#   found low attention entropy going together with unstable training (oscillating loss or
#   divergence) across architectures and tasks; they call it *entropy collapse*. Their remedy,
#   σReparam, reparametrises the linear layers with spectral normalisation and a learned
#   scalar, and they prove a lower bound on the attention entropy that falls exponentially fast
#   with the spectral norm of the attention logits.
# - **Wortsman et al. (2023)** reproduced, in small models trained at high learning rates, the
#   instability from attention-logit growth seen in large ones, and found qk-layernorm
#   mitigates it there too.
#
# The common thread: the $1/\sqrt{d_k}$ scale is right for the random vectors of the
# footnote, and it is what a network starts from. Training is free to grow $|q|$, $|k|$ and
# their alignment, and nothing in $1/\sqrt{d_k}$ stops the logits from following. μP's $1/d_k$
# and QK-norm's bounded $g\cos\theta$ are two ways to keep them in check.

# %% [markdown]
# ## Summary
#
# - LayerNorm makes each token mean 0, variance 1: $\mathrm{E}[x^2] = 1$, $|x|^2 = d_\text{model}$.
# - $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\mathrm{Var}(W)\cdot\mathrm{E}[x^2]$: LeCun gives 1,
#   Xavier $2\,\text{fan\_in}/(\text{fan\_in}+\text{fan\_out})$ (1.78 for one 512 → 64 head,
#   0.5 for a fused 512 → 1536 QKV matrix), PyTorch's `nn.Linear` default 1/3.
# - With independent $W_Q$, $W_K$, $\mathrm{Var}(q\cdot k) = d_k\,\mathrm{Var}(q_i)^2$ — for a
#   token with itself as for two tokens, because LayerNorm fixes $|x|$ ($d_k/9$ for the
#   PyTorch default). $1/\sqrt{d_k}$ removes the $d_k$, not the initialisation's factor.
# - If training correlates $q$ and $k$ ($k = \rho q + \sqrt{1-\rho^2}z$), then
#   $\mathrm{E}[q\cdot k] = \rho d_k$ and $\mathrm{Var}(q\cdot k) = d_k(1+\rho^2)$: the scaled
#   logits' mean $\rho\sqrt{d_k}$ still grows and the softmax saturates again. μP divides by
#   $d_k$ instead.
# - QK-norm bounds every logit by a learned $g$; for random vectors $\mathrm{Var}(\cos\theta) =
#   1/d_k$, so $g = \sqrt{d_k}$ matches scaled attention at initialisation.
# - In real training runs the logits do grow: Dehghani et al. and Wortsman et al. report
#   divergence from attention-logit growth, fixed by LayerNorm on $q$ and $k$; Zhai et al. link
#   collapsing attention entropy to unstable training.
#
# ## Further reading
#
# - A. Vaswani et al., *Attention Is All You Need*, 2017, arXiv:1706.03762 — §3.2.1 and footnote 4.
# - D. Britz, A. Goldie, M.-T. Luong, Q. Le, *Massive Exploration of Neural Machine Translation
#   Architectures*, 2017, arXiv:1703.03906.
# - G. Yang et al., *Tensor Programs V: Tuning Large Neural Networks via Zero-Shot
#   Hyperparameter Transfer*, 2022, arXiv:2203.03466 — μP and its $1/d$ attention.
# - A. Henry, P. R. Dachapally, S. Pawar, Y. Chen, *Query-Key Normalization for Transformers*,
#   2020, arXiv:2010.04245.
# - M. Dehghani et al., *Scaling Vision Transformers to 22 Billion Parameters*, 2023, arXiv:2302.05442.
# - S. Zhai et al., *Stabilizing Transformer Training by Preventing Attention Entropy Collapse*,
#   2023, arXiv:2303.06296.
# - M. Wortsman et al., *Small-scale proxies for large-scale Transformer training
#   instabilities*, 2023, arXiv:2309.14322.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`, which prints ✅ or ❌ with a hint.
#
# **Exercise 1.** One head's query projection $d_\text{model} = 768 \to d_k = 64$ is initialised
# with Xavier/Glorot, and the tokens are LayerNormed. What is $\mathrm{Var}(q_i)$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("08.xavier_head_var", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\frac{2}{\text{fan\_in}+\text{fan\_out}} = \frac{2\cdot 768}{768 + 64}
# = \frac{1536}{832} \approx 1.846$. Check: `A.query_variance("xavier", 768, 64)`.
# </details>
#
# **Exercise 2.** $W_Q$ and $W_K$ ($d_\text{model} \to d_k = 128$) keep PyTorch's default
# `nn.Linear` initialisation, and the tokens are LayerNormed. What is the variance of the
# *unscaled* $q\cdot k$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("08.default_logit_var", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\frac{1}{3\,\text{fan\_in}} = \frac13$ whatever $d_\text{model}$ is,
# so $\mathrm{Var}(q\cdot k) = d_k\cdot\frac13\cdot\frac13 = 128/9 \approx 14.22$.
# </details>
#
# **Exercise 3.** Queries and keys are correlated with $\rho = 0.25$ and $d_k = 1024$. What is
# the mean of the *scaled* logit $q\cdot k/\sqrt{d_k}$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("08.rho_mean", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{E}[q\cdot k] = \rho\, d_k = 256$, and $256/\sqrt{1024} = 256/32 = 8$ — eight units
# above an unrelated key, whose logit has mean 0 and standard deviation 1.
# </details>
#
# **Exercise 4.** Write `cosine_logit(q, k, g)`: the QK-norm logit $g\cos\theta$ of two 1-D
# vectors `q` and `k`.

# %%
def cosine_logit(q, k, g):
    """QK-norm logit g·cos(θ) of two 1-D vectors."""
    raise NotImplementedError("write cosine_logit")  # replace this line with your code


_ = check("08.cosine_logit", cosine_logit)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def cosine_logit(q, k, g):
#     return g * np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k))
# ```
# </details>
#
# ---
# **Next:** [09 — Training with and without the scale](09_training_with_and_without_scale.ipynb)
