# %% [markdown]
# # 08 — Does unit variance hold?
#
# Notebooks 00–04 rest on footnote 4 of *Attention Is All You Need*: the components
# of $q$ and $k$ are independent, with mean 0 and variance 1. In a real model $q = W_Q x$ and
# $k = W_K x'$ come from tokens through learned matrices. Does the assumption hold there?
#
# **Learning goals**
# - Derive $\mathrm{Var}(q\cdot k)$ from the starting weights (sections 1–2).
# - Say what training changes (3).
# - Say what real models do (4–5), and where the answer stops (5).
#
# **Prerequisites**
# - Notebooks 02, 04 and 05.

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
from sdpa_helpers import make_rng, models, saturation
from sdpa_helpers.attention import layer_norm, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import assumptions as assumptions_plots
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.assumptions import CorrelationExplorer, InitExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Before attention: LayerNorm
#
# LayerNorm fixes the token $x$, not $q$ or $k$. A token reaches attention as
# $d_\text{model}$ numbers; most models since GPT-2 put a LayerNorm right before attention (*pre-LN*): it
# subtracts the token's mean and divides by its standard deviation, so $\sum_j x_j^2 = d_\text{model}$
# (checked in section 2's cell).

# %% [markdown] predict_answer=["9 times", "1/9", "nine times"]
# ## 2. At initialisation: the starting weights
#
# Write out one query component: $q_i = \sum_j W_{ij}\,x_j$, a sum of $d_\text{model}$ terms, one per input of
# the matrix (its *fan-in*). The weights start independent, of mean 0 and variance $\mathrm{Var}(W)$, so for a
# fixed token each term has variance $\mathrm{Var}(W)\,x_j^2$ (04). Variances add (02), and after LayerNorm
# $\sum_j x_j^2 = d_\text{model}$, so $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\mathrm{Var}(W)$.
# $k$ comes the same way from $W_K$, drawn independently, so $q\cdot k$ is 02's sum of $d_k$ products with
# components of variance $\mathrm{Var}(q_i)$ and $\mathrm{Var}(k_i)$ instead of 1:
# $\mathrm{Var}(q\cdot k) = d_k\,\mathrm{Var}(q_i)\,\mathrm{Var}(k_i)$, which is $d_k\,\mathrm{Var}(q_i)^2$ when
# $W_Q$ and $W_K$ start from the same rule (T5, section 5, does not).
#
# The footnote's $d_k$ needs $\mathrm{Var}(W) = 1/\text{fan\_in}$: that is *LeCun's* rule. PyTorch's default for
# `nn.Linear` draws uniformly on $\pm 1/\sqrt{\text{fan\_in}}$, so $\mathrm{Var}(W) = 1/(3\,\text{fan\_in})$
# (a uniform on $\pm a$ has variance $a^2/3$).
#
# **Predict:** at $d_\text{model} = 512$ and $d_k = 64$, is $\mathrm{Var}(q\cdot k)$ under
# PyTorch's default above or below the footnote's 64 — and by what factor?
#
# The check: 32 random networks of 64 token pairs per rule, with a third rule, Xavier's, for comparison;
# then histograms of the scaled logits (8 networks × 256 pairs) against $N(0, 1)$ (dotted).

# %% alt="Three histograms of the scaled logits q·k/sqrt(d_k) at initialisation, d_model = 512, d_k = 64, each against the footnote's N(0, 1) (dotted): LeCun's 1/fan_in matches it (variance 1.00); Xavier is wider (variance 3.16); PyTorch's default is a narrow spike (variance 0.11)."
d_model, d_k = 512, 64
x = layer_norm(A.sample_tokens(4, d_model, layer_normed=False, rng=SEED))  # 4 raw tokens, each normalised
verify("after LayerNorm every token has mean 0 and variance 1", np.allclose(x.mean(axis=1), 0, atol=1e-12) and np.allclose(x.var(axis=1), 1, atol=1e-4))
verify_close("|x|² of the first token = d_model", np.sum(x[0] ** 2), d_model, rtol=1e-4)
RULES = {"lecun": "LeCun", "xavier": "Xavier", "pytorch_default": "PyTorch default"}
X, X2 = A.sample_tokens(64, d_model, rng=rng), A.sample_tokens(64, d_model, rng=rng)  # (64, d_model) each
for scheme, name in RULES.items():
    logits = A.sample_projected_logits(scheme, d_k, X, X2, n_networks=32, rng=rng)  # (32 networks, 64 pairs)
    estimate, se = A.cluster_mean(logits**2)  # E[q·k] = 0, so this is Var(q·k)
    verify_close(f"{name}: Var(q_i) = {A.query_variance(scheme, d_model, d_k):.3f}, so Var(q·k) = d_k·Var(q_i)²", estimate, A.init_logit_moments(scheme, d_model, d_k).var, se=se)
panels = {RULES[s]: (A.init_scaled_logits(s, d_model), A.query_variance(s, d_model, d_k) ** 2) for s in RULES}
assumptions_plots.init_small_multiples(panels)

# %% [markdown]
# PyTorch's default is 9 times *below* the footnote: $\mathrm{Var}(q_i) = 1/3$, so $\mathrm{Var}(q\cdot k) = d_k/9$.
# Xavier's rule, $\mathrm{Var}(W) = 2/(\text{fan\_in} + \text{fan\_out})$ (fan-out: the matrix's $d_k$ outputs),
# is above it for one head's $W_Q$: $\mathrm{Var}(q_i) = 1.778$ (printed; other shapes: deep dive).
# $1/\sqrt{d_k}$ removes the $d_k$, not the factor: the scaled logits have
# variance $\mathrm{Var}(q_i)^2$ (04), not 1, as the histograms show.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the named initialisations, PyTorch's default, and Xavier's shapes
#
# The rules of section 2 have names, after the papers that proposed them, and there are two
# more in common use. With LayerNormed tokens ($\mathrm{E}[x^2] = 1$), for a matrix with fan-in inputs
# and fan-out outputs:
#
# | initialisation | $\mathrm{Var}(W)$ | $\mathrm{Var}(q_i)$ after LayerNorm |
# |---|---|---|
# | LeCun (LeCun et al. 1998), section 2's first rule | $1/\text{fan\_in}$ | $1$ |
# | Xavier/Glorot (Glorot & Bengio 2010) | $2/(\text{fan\_in}+\text{fan\_out})$ | 1 only for a square matrix |
# | PyTorch `nn.Linear` default, $U(\pm 1/\sqrt{\text{fan\_in}})$ | $1/(3\,\text{fan\_in})$ | $1/3$ |
# | He/Kaiming (He et al. 2015), made for ReLU layers | $2/\text{fan\_in}$ | $2$ |
# | GPT-2's $W_Q$, $W_K$ (`c_attn`), $N(0, 0.02^2)$ whatever the shape | $0.0004$ | $0.0004\, d_\text{model}$: grows with the width |
#
# PyTorch's default is written as `kaiming_uniform_(a=√5)`: a uniform with bound
# $\sqrt{2/(1+a^2)}\cdot\sqrt{3/\text{fan\_in}} = 1/\sqrt{\text{fan\_in}}$. Checked, with a
# deep-dive random stream of its own (the main line never depends on it). (Section 2's Xavier
# panel is `xavier_uniform_`: PyTorch's uniform draw rescaled.)

# %% tags=["deep-dive"]
g = make_rng(SEED + 100)
a = np.sqrt(5.0)
bound = np.sqrt(2.0 / (1.0 + a**2)) * np.sqrt(3.0 / d_model)
w = g.uniform(-bound, bound, size=1_000_000)
se_w = np.sqrt((np.mean((w - w.mean()) ** 4) - w.var() ** 2) / w.size)  # SE of a variance estimate
verify_close(f"kaiming_uniform_(a=√5) bound √(2/(1+a²))·√(3/fan_in) = 1/√{d_model}", bound, 1 / np.sqrt(d_model), rtol=1e-12)
verify_close(f"Var(W) of U(±bound) = 1/(3·{d_model})", w.var(), 1 / (3 * d_model), se=se_w)

# %% [markdown] tags=["deep-dive"]
# Xavier's value depends on the shape of the matrix, and code differs in what that shape is.
# One head's projection $d_\text{model} \to d_k$ (512 → 64) is far from square; one matrix for
# all heads (512 → 512) is square; PyTorch's `nn.MultiheadAttention` keeps $W_Q, W_K, W_V$ in
# one fused `in_proj_weight` of shape $(3 d_\text{model}, d_\text{model})$ and initialises it
# with `xavier_uniform_` — that is 512 → 1536.
#
# For each initialisation, 16 independently initialised networks (one head,
# $d_k = 64$ rows of $W_Q$ each) project the same 100 LayerNormed tokens. The estimate of
# $\mathrm{Var}(q_i) = \mathrm{E}[q_i^2]$ averages $q_i^2$; its standard error (SE) treats each
# network as one independent draw (`A.cluster_mean`: the spread of the 16 per-network
# averages, divided by $\sqrt{16}$). We accept $|\text{simulation} - \text{theory}| < 4\,\mathrm{SE}$.

# %% tags=["deep-dive"]
d_k = 64
n_networks, n_tokens = 16, 100
X_dd = A.sample_tokens(n_tokens, d_model, rng=g)  # (n_tokens, d_model), LayerNormed
cases = [(scheme, "head") for scheme in A.INITS] + [("xavier", "all_heads"), ("xavier", "fused_qkv")]
var_q = {}
for scheme, projection in cases:
    fan_out = A.projection_fan_out(projection, d_model, d_k)
    W = A.sample_weights(scheme, d_model, fan_out, size=n_networks, rows=d_k, rng=g)  # (networks, d_k, d_model)
    q = X_dd @ np.swapaxes(W, -1, -2)  # (n_tokens, d_model) @ (networks, d_model, d_k) -> (networks, n_tokens, d_k)
    estimate, se = A.cluster_mean((q**2).reshape(n_networks, -1))
    theory = A.query_variance(scheme, d_model, fan_out)
    var_q[scheme, projection] = theory
    verify_close(f"Var(q_i), {scheme}, {d_model}→{fan_out} (Var(W) = {A.init_weight_variance(scheme, d_model, fan_out):.2e})",
                 estimate, theory, se=se)

# %% [markdown] tags=["deep-dive"]
# The numbers of the table, as exact fractions:

# %% tags=["deep-dive"]
print(f"Xavier, one head 512→64    : 2·512/(512+64)   = {2 * 512 / (512 + 64):.4f}")
print(f"Xavier, all heads 512→512  : 2·512/(512+512)  = {2 * 512 / (512 + 512):.4f}")
print(f"Xavier, fused QKV 512→1536 : 2·512/(512+1536) = {2 * 512 / (512 + 1536):.4f}")
print(f"PyTorch default            : 1/3              = {1 / 3:.4f}")
print(f"GPT-2 N(0, 0.02²), d_model 512: 0.0004·512 = {0.0004 * 512:.4f}; "
      f"d_model 768 (GPT-2 small): {A.query_variance('gpt2', 768):.4f}")
verify_close("Xavier, one head: the simulated-case theory is 2·512/576", var_q["xavier", "head"], 2 * 512 / 576, rtol=1e-12)
verify_close("Xavier, fused QKV: 2·512/2048 = 1/2", var_q["xavier", "fused_qkv"], 0.5, rtol=1e-12)


# %% [markdown] tags=["deep-dive"]
# The scaled logits of all five against the footnote's $N(0, 1)$ (dotted), at $d_\text{model} = 512$
# except GPT-2's, drawn at GPT-2 small's own width 768: variance $0.307^2 = 0.094$, as in section 5.

# %% tags=["deep-dive"] alt="Five histograms of the scaled logits at initialisation against N(0, 1) (dotted), in the table's order on two rows of three (the sixth place empty): LeCun matches it (variance 1); Xavier per head is wider (3.16); PyTorch's default (0.11) and GPT-2 small (d_model 768, variance 0.094) are narrow; He is wider (variance 4)."
widths = {s: 768 if s == "gpt2" else d_model for s in A.INITS}  # GPT-2 at its own width
names = {**A.INIT_SHORT_LABELS, "gpt2": "GPT-2 small, N(0, 0.02²), d_model 768"}
panels_all = {names[s]: (A.init_scaled_logits(s, widths[s]), A.query_variance(s, widths[s], d_k) ** 2) for s in A.INITS}
assumptions_plots.init_small_multiples(panels_all)

# %% [markdown] tags=["deep-dive"]
# Live: pick $d_\text{model}$, the initialisation and the projection's shape.

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer: pick d_model, the initialisation and the projection's shape; a histogram of the scaled logits at initialisation against N(0, 1); opens at d_model = 512."
init_explorer = InitExplorer(d_model=512)
init_explorer
# %% [markdown] tags=["deep-dive"]
# ## Deep dive: a token with itself, tokens of different lengths, tied weights
#
# Section 2 paired two different tokens. A token with itself ($x' = x$, the diagonal of the
# score table) gives the same variance $d_k\,\mathrm{Var}(q_i)^2$: sharing $x$ does not
# correlate $q$ with $k$, because $W_Q$ and $W_K$ are drawn independently. Checked for PyTorch's default:

# %% tags=["deep-dive"]
g = make_rng(SEED + 200)
for pairing, partner in (("two tokens", X2), ("a token with itself", None)):
    logits = A.sample_projected_logits("pytorch_default", d_k, X, partner, n_networks=16, rng=g)
    estimate, se = A.cluster_mean(logits**2)
    verify_close(f"Var(q·k), PyTorch default, {pairing}: d_k/9", estimate, A.init_logit_moments("pytorch_default", d_model, d_k).var, se=se)

# %% [markdown] tags=["deep-dive"]
# *Side note — where sharing $x$ does matter: tokens of different lengths.* For fixed tokens $x$, $x'$,
# section 2's sum gives $\mathrm{Var}(q_i) = \mathrm{Var}(W)\,|x|^2$ and $\mathrm{Var}(k_i) = \mathrm{Var}(W)\,|x'|^2$, so
#
# $$\mathrm{Var}(q\cdot k) = d_k\,\mathrm{Var}(W)^2\,|x|^2\,|x'|^2,$$
#
# which is $d_k\,\mathrm{Var}(q_i)^2$ once LayerNorm makes $|x|^2 = |x'|^2 = d_\text{model}$. Averaged over token pairs, a token with itself gives
# $\mathrm{E}[|x|^4]$, two independent tokens give $\mathrm{E}[|x|^2]^2$, and
# $\mathrm{E}[|x|^4] \ge \mathrm{E}[|x|^2]^2$ with equality only when every token has the same
# length. Without LayerNorm the raw tokens' lengths vary a lot, and the diagonal of $QK^\top$
# gets a larger variance than the rest. The theory below is computed from the tokens
# themselves: $d_k\,\mathrm{Var}(W)^2$ times the average of $|x|^2|x'|^2$.

# %% tags=["deep-dive"]
raw_X = A.sample_tokens(n_tokens, d_model, layer_normed=False, rng=g)
raw_X2 = A.sample_tokens(n_tokens, d_model, layer_normed=False, rng=g)
sq_len, sq_len2 = np.sum(raw_X**2, axis=1), np.sum(raw_X2**2, axis=1)  # |x|², |x'|²: (n_tokens,)
var_w = A.init_weight_variance("lecun", d_model)
results = {}
for pairing, partner, lengths in (("different tokens", raw_X2, sq_len * sq_len2), ("same token", None, sq_len**2)):
    logits = A.sample_projected_logits("lecun", d_k, raw_X, partner, n_networks=n_networks, rng=g)
    estimate, se = A.cluster_mean(logits**2)
    theory = d_k * var_w**2 * lengths.mean()
    results[pairing] = theory
    verify_close(f"raw tokens, {pairing}: Var(q·k) = d_k·Var(W)²·mean(|x|²|x'|²)", estimate, theory, se=se)
print(f"ratio same / different: {results['same token'] / results['different tokens']:.2f} "
      f"(after LayerNorm: 1, since every |x|² = d_model)")

# %% [markdown] tags=["deep-dive"]
# *Side note — where $q$ and $k$ are truly dependent: tied weights.* If a model used one matrix for
# both ($W_K = W_Q$), a token's query and key would be the *same* vector, and its logit with
# itself $q\cdot q = |q|^2 \ge 0$, with mean $d_k\,\mathrm{Var}(q_i)$ instead of 0. That is
# correlation $\rho = 1$, the extreme case of section 3.

# %% tags=["deep-dive"]
logits = A.sample_projected_logits("lecun", d_k, X_dd, None, n_networks=n_networks, tied=True, rng=g)
mean, mean_se = A.cluster_mean(logits)
verify("tied W_K = W_Q, same token: every logit q·q >= 0", (logits >= 0).all(), f"{logits.size} logits")
verify_close("tied W_K = W_Q, same token: mean logit d_k·Var(q_i)", mean, d_k * var_q["lecun", "head"], se=mean_se)

# %% [markdown] tags=["deep-dive"]
# **What this means for $1/\sqrt{d_k}$.** The scaled logit $q\cdot k/\sqrt{d_k}$ has variance
# $\mathrm{Var}(q_i)^2$: the scale removes the $d_k$, but not the initialisation's factor.
# With PyTorch's default `nn.Linear` the scaled logits start with standard deviation
# $\mathrm{Var}(q_i) = 1/3$ instead of 1 — attention starts closer to uniform, and the logits
# must grow during training before any head can attend sharply.

# %% tags=["deep-dive"]
print(f"d_model = {d_model}, d_k = {d_k} (the gpt2 row is GPT-2's rule at this width; GPT-2 small has d_model 768)")
for scheme, projection in cases:
    m = A.init_logit_moments(scheme, d_model, d_k, fan_out=A.projection_fan_out(projection, d_model, d_k),
                             scale=d_k ** -0.5)
    print(f"{scheme:15s} {projection:9s}: std of q·k/√d_k = Var(q_i) = {m.std:.3f}")

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the variance against the width
#
# Then $\mathrm{Var}(q\cdot k/\sqrt{d_k}) = \mathrm{Var}(q_i)^2$ against $d_\text{model}$, theory
# as lines and simulation as markers (± 2 SE, networks simulated up to $d_\text{model} = 1024$). Every marker is checked against its line at 4 SE.
# The five checks are not independent: $q\cdot k$ scales with $\mathrm{Var}(W)$, so `A.init_scaled_logits` simulates
# one normal sample (rescaled for LeCun, He and GPT-2) and one uniform sample (Xavier, PyTorch's default) per width —
# hence the equal largest gaps.

# %% tags=["deep-dive"] alt="Log-log plot of Var(q·k/sqrt(d_k)) against d_model from 64 to 4096, d_k = 64: LeCun flat at 1, PyTorch default flat at 1/9, He flat at 4, Xavier per head rising from 1 towards 3.9, GPT-2's fixed 0.02 rising like d_model squared from 0.0007 to 2.7, crossing 1 at d_model = 2500; markers (simulations up to 1024) sit on the lines."
theory_curves, simulated = {}, {}
sim_widths = [d for d in A.D_MODEL_CHOICES if d <= 1024]  # networks are simulated up to d_model = 1024
for scheme in A.INITS:
    theory = [A.init_logit_moments(scheme, d, d_k, scale=d_k ** -0.5).var for d in A.D_MODEL_CHOICES]
    points = np.array([A.cluster_mean(A.init_scaled_logits(scheme, d) ** 2) for d in sim_widths]).T  # (2, widths)
    gaps = np.abs(points[0] - theory[:len(sim_widths)]) / points[1]  # |estimate - theory| in SE, per width
    verify(f"{scheme}: every simulated width within 4 SE of its line", (gaps <= 4).all(), f"largest {gaps.max():.2f} SE")
    points = np.hstack([points, np.full((2, len(A.D_MODEL_CHOICES) - len(sim_widths)), np.nan)])  # no markers past 1024
    theory_curves[A.INIT_LABELS[scheme]], simulated[A.INIT_LABELS[scheme]] = theory, points
for scheme in ("xavier", "gpt2"):
    ends = [A.init_logit_moments(scheme, d, d_k, scale=d_k ** -0.5).var for d in (A.D_MODEL_CHOICES[0], A.D_MODEL_CHOICES[-1])]
    print(f"{scheme}: Var(q·k/√d_k) = {ends[0]:.4f} at d_model = {A.D_MODEL_CHOICES[0]}, "
          f"{ends[1]:.4f} at d_model = {A.D_MODEL_CHOICES[-1]}")
print(f"GPT-2 passes 1 where 0.0004·d_model = 1: d_model = {1 / 0.0004:.0f}")
ax = assumptions_plots.init_variance_vs_d_model(A.D_MODEL_CHOICES, theory_curves, simulated)
ax.figure

# %% [markdown] tags=["deep-dive"]
# Flat lines are initialisations that scale with the width ($\mathrm{Var}(W) \propto
# 1/\text{fan\_in}$); only LeCun's sits on 1. Xavier's per-head line rises from 1 (at
# $d_\text{model} = d_k = 64$, a square matrix) towards 4 as $d_\text{model}$ outgrows $d_k$
# ($\mathrm{Var}(q_i) \to 2$); GPT-2's fixed $0.02$ climbs like $d_\text{model}^2$ and passes 1
# at $d_\text{model} = 2500$ — of the widths here, only at 4096.

# %% [markdown] predict_answer=["1, 4, 16", "grows like $\\sqrt{d_k}$"] predict_answer_common=["1, 4, 16", "grows like $\\sqrt{d_k}$"]
# ## 3. During training: $q$ and $k$ agree
#
# For a query to pick out a key, training tends to *correlate* $q$ with that key's $k$ (modelled here, not measured). A simple model: $k = \rho\, q + \sqrt{1-\rho^2}\, z$, with $z$ independent of $q$,
# every component of mean 0 and variance 1, and $\rho$ the correlation of $q_i$ with $k_i$.
#
# **Predict:** at $\rho = 0.5$, as $d_k$ grows from 4 to 1024, does the matching key's *scaled*
# logit $q\cdot k/\sqrt{d_k}$ stay near 0, grow like $\sqrt{d_k}$, or grow like $d_k$?
#
# Histograms, 1000 pairs per $d_k$ (top $\times 1/\sqrt{d_k}$, bottom $\times 1/d_k$):

# %% alt="Six panels of histograms of logits, 1000 pairs each, at d_k = 4, 64 and 1024. Top row, scaled by 1/sqrt(d_k): unrelated keys stay centred on 0 with spread 1 while the correlated key (rho = 0.5) moves right, centred near 1, 4 and 16. Bottom row, scaled by 1/d_k: the correlated key stays centred near 0.5 and both histograms narrow as d_k grows."
rho, by_d_k = 0.5, {}
for d in (4, 64, 1024):
    qq, qz = A.correlated_dot_product_parts(d, 1000, rng=SEED)  # q·q and q·z, so q·k = ρ q·q + √(1−ρ²) q·z
    by_d_k[d] = (rho * qq + np.sqrt(1 - rho**2) * qz, A.correlated_dot_product_parts(d, 1000, rng=SEED + 1)[1])
    print(f"d_k = {d:4d}: mean of the matching key's q·k = {by_d_k[d][0].mean():6.1f}; ÷ √d_k: {by_d_k[d][0].mean() / np.sqrt(d):5.2f}; ÷ d_k: {by_d_k[d][0].mean() / d:.2f}")
assumptions_plots.correlated_small_multiples(by_d_k, rho)

# %% [markdown]
# **What happened:** the mean grows like $\sqrt{d_k}$: 1, 4, 16 (solid curves, in every panel: the normal
# density with the model's mean and variance, too flat at $d_k = 4$).
# Why, one term $q_i k_i$ at a time: $z_i$ is independent of $q_i$ and has mean 0, so
#
# $$\mathrm{E}[q_i k_i] = \rho\,\mathrm{E}[q_i^2] + \sqrt{1-\rho^2}\,\mathrm{E}[q_i]\,\mathrm{E}[z_i] = \rho,$$
#
# and adding $d_k$ terms (02), $\mathrm{E}[q\cdot k] = \rho\, d_k$, while the spread grows only like
# $\sqrt{d_k}$ (deep dive below). So $1/\sqrt{d_k}$ leaves a mean $\rho\sqrt{d_k}$ that grows.
#
# **μP** (*maximal update parametrisation*, Yang et al. 2022) divides by $d_k$ (times a constant $a$)
# instead: the bottom row. $q\cdot k/d_k$ is the *average* of $d_k$ products of mean $\rho$, so it stays
# near $\rho$. One line, at $d_k = 1024$: $\mathrm{E}[q\cdot k] = 0.5 \cdot 1024 = 512$; $512/\sqrt{1024} = 16$;
# $512/1024 = 0.5$, as at $d_k = 4$ (printed above: 0.50 at every $d_k$; the weights: deep dive below).

# %%
for d in (4, 64, 1024):  # the means above against rho·√d_k
    verify_close(f"d_k = {d:4d}: the matching key's mean scaled logit = ρ√d_k (so ÷ d_k: ρ)", by_d_k[d][0].mean() / np.sqrt(d), rho * np.sqrt(d), se=by_d_k[d][0].std() / np.sqrt(1000 * d))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: μP's constant and the matching key's weight
#
# As in 04, the exponent is forced and the constant is a convention, and here it matters: μP's
# README uses $8/d_k$, equal to $1/\sqrt{64}$ at $d_k = 64$. The matching key's weight among 12 keys,
# 2000 queries each:

# %% tags=["deep-dive"]
scales = {"1/√d_k": lambda d: d**-0.5, "1/d_k": lambda d: 1 / d, "8/d_k": lambda d: 8 / d}  # d_k -> the factor c
for r in (0.5, 1.0):
    w = {(name, d): A.match_weight(d, r, scale=c(d), rng=SEED).mean() for name, c in scales.items() for d in (64, 1024)}
    print(f"ρ = {r}: " + " | ".join(f"{name}: {w[name, 64]:.3f} at d_k = 64, {w[name, 1024]:.3f} at 1024" for name in scales) + f"\n        limits as d_k grows: 1/d_k → e^ρ/(e^ρ + 11) = {np.exp(r) / (np.exp(r) + 11):.3f}, 8/d_k → e^(8ρ)/(e^(8ρ) + 11) = {np.exp(8 * r) / (np.exp(8 * r) + 11):.3f}")

# %% [markdown] tags=["deep-dive"]
# With $1/\sqrt{d_k}$ the matching key's weight climbs with $d_k$ at a fixed $\rho$. With μP's $a/d_k$
# it settles where $\rho$ and the constant $a$ put it: with $a = 1$ near 0.2 even at $\rho = 1$ (limit
# 0.198, for unit-variance components); with the README's $a = 8$ near 0.83 at $\rho = 0.5$ (limit 0.832)
# and 0.996 at $\rho = 1$. A μP network sharpens its attention through $\rho$, $a$ and the components'
# sizes, none of which depends on $d_k$.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the moments checked, other kurtoses, and the softmax weight
#
# The variance, for components of mean 0 and variance 1 with $z_i$ independent of $q_i$ (so a mean of
# $q_i^m z_i^n$ factors into $\mathrm{E}[q_i^m]\,\mathrm{E}[z_i^n]$). Expand the square:
#
# $$q_i^2 k_i^2 = \rho^2 q_i^4 + 2\rho\sqrt{1-\rho^2}\,q_i^3 z_i + (1-\rho^2)\,q_i^2 z_i^2.$$
#
# The middle term has mean $\propto \mathrm{E}[q_i^3]\,\mathrm{E}[z_i] = 0$, the last $(1-\rho^2)\,\mathrm{E}[q_i^2]\,\mathrm{E}[z_i^2] = 1 - \rho^2$.
# With kurtosis $\kappa = \mathrm{E}[q_i^4]$ ($\kappa = 3$ for Gaussian components),
# $\mathrm{E}[q_i^2 k_i^2] = \kappa\rho^2 + 1 - \rho^2$, and subtracting the squared mean $\rho^2$:
# $\mathrm{Var}(q_i k_i) = \rho^2(\kappa - 1) + 1 - \rho^2$, which is $1 + \rho^2$ for $\kappa = 3$.
# Over $d_k$ independent terms the mean and the variance add.
# The check, with $\rho = 0.5$ and 20 000 pairs per $d_k$; the SE of a variance is $\sqrt{(m_4 - s^4)/N}$:

# %% tags=["deep-dive"]
g = make_rng(SEED + 300)
n_pairs = 20_000
for d in (1, 16, 256):
    s = A.sample_correlated_dot_products(d, n_pairs, rho, rng=g)
    theory = A.correlated_dot_product_moments(d, rho)
    se_mean = s.std() / np.sqrt(n_pairs)
    se_var = np.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / n_pairs)
    verify_close(f"d_k = {d}: mean of q·k = ρ d_k", s.mean(), theory.mean, se=se_mean)
    verify_close(f"d_k = {d}: Var(q·k) = d_k (1 + ρ²)", s.var(), theory.var, se=se_var)
print(f"per component: Var(q_i k_i) = 1 + ρ² = {1 + rho**2:.2f}")

# %% [markdown] tags=["deep-dive"]
# *Side note:* the same check with uniform components ($\kappa = 1.8$), where the per-component variance
# is $0.8\rho^2 + 1 - \rho^2$:

# %% tags=["deep-dive"]
d = 64
s = A.sample_correlated_dot_products(d, n_pairs, rho, dist="uniform", rng=g)
theory = A.correlated_dot_product_moments(d, rho, kurtosis=A.KURTOSIS["uniform"])
se_var = np.sqrt((np.mean((s - s.mean()) ** 4) - s.var() ** 2) / n_pairs)
verify_close(f"uniform q, d_k = {d}: Var(q·k) = {d}·(0.8ρ² + 1 − ρ²)", s.var(), theory.var, se=se_var)

# %% [markdown] tags=["deep-dive"]
# And what the softmax makes of it at every $d_k$ from 1 to 4096 (section 3 showed 64 and 1024): one
# correlated key among $n = 12$ keys, the mean weight it gets, for 2000 queries per $d_k$. With $1/d_k$
# the logits tend to $(\rho, 0, \dots, 0)$ (their spread $\sqrt{(1+\rho^2)/d_k}$ shrinks to 0) and the
# weight to $e^\rho/(e^\rho + n - 1)$; with a constant $a$ in front ($a/d_k$; μP's README: $a = 8$),
# to $e^{a\rho}/(e^{a\rho} + n - 1)$. The draws need no vectors: given $q$, an unrelated key's $q\cdot z$ is
# exactly $|q|$ times a standard normal, and $|q|^2$ is chi-square with $d_k$ degrees of freedom
# (`A.correlated_dot_product_parts_exact`), so each query takes a fixed handful of random numbers whatever $d_k$ is (14 drawn, 13 used).

# %% tags=["deep-dive"]
n_keys, n_queries = 12, 2000
d_ks = [1, 4, 16, 64, 256, 1024, 4096]
weight_sqrt, weight_inv = [], []
g = make_rng(SEED)
for d in d_ks:
    qq, qz = A.correlated_dot_product_parts_exact(d, n_queries, rng=g)  # |q|² ~ χ²(d_k); q·z = |q|·N(0, 1)
    dots = np.sqrt(qq)[:, None] * g.standard_normal((n_queries, n_keys))  # (n_queries, n_keys): q·z_j = |q|·N(0, 1)
    dots[:, 0] = rho * qq + np.sqrt(1 - rho**2) * qz  # the correlated key: q·k = ρ|q|² + √(1−ρ²) q·z
    weight_sqrt.append(softmax(dots / np.sqrt(d))[:, 0])  # weight on the correlated key, per query
    weight_inv.append(softmax(dots / d)[:, 0])
limit = np.exp(rho) / (np.exp(rho) + n_keys - 1)
print(" d_k | mean weight on the correlated key: ×1/√d_k   ×1/d_k (SE)")
for d, ws, wi in zip(d_ks, weight_sqrt, weight_inv):
    print(f"{d:4d} | {ws.mean():38.3f}  {wi.mean():7.3f} ({wi.std(ddof=1) / np.sqrt(n_queries):.1e})")
print(f"limit of the 1/d_k column: e^ρ/(e^ρ + {n_keys - 1}) = {limit:.3f}; uniform: 1/{n_keys} = {1 / n_keys:.3f}")
print(f"largest limit of 1/d_k in this model (ρ = 1): e/(e + {n_keys - 1}) = {np.e / (np.e + n_keys - 1):.3f}")
w_mup, limit_mup = softmax(dots * 8 / d_ks[-1])[:, 0], np.exp(8 * rho) / (np.exp(8 * rho) + n_keys - 1)
verify(f"×8/d_k (μP's README) at d_k = {d_ks[-1]}: mean weight {w_mup.mean():.4f}, below its limit e^(8ρ)/(e^(8ρ) + {n_keys - 1}) = {limit_mup:.4f} by less than 0.005",
       limit_mup - 0.005 < w_mup.mean() < limit_mup)
verify(f"×1/√d_k at d_k = {d_ks[-1]}: the correlated key takes > 99 % of the weight", weight_sqrt[-1].mean() > 0.99)
verify_close(f"×1/d_k at d_k = {d_ks[-1]}: mean weight → e^ρ/(e^ρ + {n_keys - 1})", weight_inv[-1].mean(), limit,
             se=weight_inv[-1].std(ddof=1) / np.sqrt(n_queries))
weight_sqrt, weight_inv = [w.mean() for w in weight_sqrt], [w.mean() for w in weight_inv]

# %% tags=["deep-dive"] alt="Mean weight on the correlated key (rho = 0.5) among 12 keys against d_k from 1 to 4096, log x axis: scaled by 1/sqrt(d_k) it climbs from 0.12 to 1.00 (0.710 at d_k = 64); scaled by 1/d_k it stays flat near its limit 0.130, a solid horizontal line; uniform weight would be 0.083."
ax = assumptions_plots.match_weight_vs_d_k(d_ks, weight_sqrt, weight_inv, limit=limit)
ax.figure

# %% [markdown] tags=["deep-dive"]
# Live: drag $\rho$ and $d_k$; section 3's histograms follow.

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer of the correlated-key model: drag rho and d_k; histograms of the matching key's and an unrelated key's logits, scaled by 1/sqrt(d_k) and by 1/d_k; opens at rho = 0.5, d_k = 64, where the scaled matching logit centres near 4 and the 1/d_k one near 0.5."
correlation_explorer = CorrelationExplorer(rho=0.5, d_k=64)
correlation_explorer

# %% [markdown]
# ## 4. What real models do about it
#
# Two fixes bound the logit whatever $\rho$ and $d_k$ do:
# - **QK-norm**: divide $q$ and $k$ by their lengths, and multiply the dot product by a
#   learned $g$. The logit is $g\cos\theta$: only the angle between $q$ and $k$ counts, not their
#   lengths, so it never leaves $[-g, g]$.
# - **Soft-capping** (Gemma 2): $s \mapsto c\tanh(s/c)$, almost unchanged while $|s| \ll c$, never beyond $\pm c$.
#
# QK-norm on one pair, $q = (3, 4)$ and $k = (8, 6)$, then $q$ ten times longer (as training can make it):

# %%
q2, k2 = np.array([3.0, 4.0]), np.array([8.0, 6.0])
for m in (1, 10):  # q made m times longer
    qk_norm = A.qk_norm_scores(m * q2[None, None], k2[None, None], gain=5.0)[0, 0, 0]  # g cos θ, g = 5
    print(f"q = {m:2d} × (3, 4), k = (8, 6): q·k = {m * q2 @ k2:3.0f} | QK-norm logit with g = 5: {qk_norm:.2f}")
    verify_close(f"q = {m:2d} × (3, 4): QK-norm logit = g·cos θ = 5 · 48/(5·10)", qk_norm, 5 * 48 / 50, rtol=1e-12)

# %% [markdown]
# $q\cdot k$ grows tenfold, 48 to 480; the QK-norm logit stays 4.80: $\cos\theta = 48/(5\cdot 10) = 0.96$,
# times $g = 5$, whatever the lengths. Both fixes are measured on section 3's correlated key in the deep dive below.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the two fixes on section 3's correlated key
#
# $\rho = 0.5$, mean over 200 pairs per $d_k$ (this cell draws from the main line's `rng`, as it did
# when it stood on the main line, so section 5's draws are unchanged):

# %% tags=["deep-dive"]
for d in (64, 1024, 4096):
    q, k = A.sample_correlated_qk(200, d, rho, rng=rng)  # (200, d_k) each
    scaled = np.einsum("nd,nd->n", q, k) / np.sqrt(d)  # row-wise dot: (200,)
    normed, capped = A.qk_norm_scores(q[:, None, :], k[:, None, :], gain=5.0)[:, 0, 0], A.softcap(scaled, 50.0)
    verify(f"d_k = {d:4d}: QK-norm logits within ±g, soft-capped ones within ±50", np.abs(normed).max() <= 5.0 and np.abs(capped).max() <= 50.0,
           f"mean: scaled {scaled.mean():.1f} | QK-norm, g = 5: {normed.mean():.2f} | soft-capped at 50: {capped.mean():.1f}")

# %% [markdown] tags=["deep-dive"]
# The scaled mean $\rho\sqrt{d_k}$ keeps growing; QK-norm settles near $g\rho = 2.5$
# ($\cos\theta \to \rho$). The cap bounds the logit, not the commitment: capped means of 15.5
# and 28.2 still give the matching key nearly all the weight (μP deep dive: at a mean of 16 it takes 1.000).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: Var(cos θ) = 1/d_k, QK-layernorm, and entropy collapse in the literature
#
# Let $u = q/|q|$ and $v = k/|k|$. For Gaussian $q$, $u$ is uniform on the unit sphere; by symmetry its
# $d_k$ squared components have the same mean and sum to 1, so $\mathrm{E}[u_i^2] = 1/d_k$, and flipping
# the sign of one component leaves the distribution unchanged, so $\mathrm{E}[u_i u_j] = 0$ for $i \ne j$:
# $\mathrm{E}[u u^\top] = I/d_k$. With $v$ independent of $u$,
# $\mathrm{Var}(\cos\theta) = \mathrm{E}[(u\cdot v)^2] = \mathrm{E}[u^\top\,\mathrm{E}[v v^\top]\,u] = 1/d_k$ exactly.
# The check: the mean of $d_k\cos^2\theta$ should be 1.

# %% tags=["deep-dive"]
from sdpa_helpers.dot_products import cosine_moments  # the deep dive's own import

g = make_rng(SEED + 400)
n_vec = 2000
for d in (1, 2, 4, 16, 64, 256, 1024):
    q, k = g.standard_normal((n_vec, d)), g.standard_normal((n_vec, d))  # (n_vec, d_k) each
    cos = np.einsum("nd,nd->n", q, k) / (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))
    d_cos2 = d * cos**2
    est, se = d_cos2.mean(), d_cos2.std(ddof=1) / np.sqrt(n_vec)
    theory = d * cosine_moments(d).var
    if d == 1:  # cos θ = ±1: no spread, an exact check
        verify_close("d_k = 1: d_k·cos²θ = 1 exactly", est, theory, rtol=1e-12)
    else:
        verify_close(f"d_k = {d}: mean of d_k·cos²θ = d_k·Var(cos θ) = 1", est, theory, se=se)

# %% [markdown] tags=["deep-dive"]
# ($d_k = 1$ is the extreme case: $\cos\theta = \pm 1$ always.) Side by side at a few $d_k$,
# QK-norm logits $\sqrt{d_k}\cos\theta$ and scaled logits $q\cdot k/\sqrt{d_k}$ both have variance
# 1 (printed in the legends). At $d_k = 4$ the QK-norm logits cannot leave $[-2, 2]$; as $d_k$
# grows both histograms approach $N(0, 1)$:

# %% tags=["deep-dive"] alt="Three pairs of histograms at d_k = 4, 64 and 1024: QK-norm logits sqrt(d_k)·cos(theta) and scaled logits q·k/sqrt(d_k), both of variance 1; at d_k = 4 the QK-norm logits stay within -2 to 2; by d_k = 1024 both look like N(0, 1)."
qk_norm_logits, scaled_logits = {}, {}
for d in (4, 64, 1024):
    q, k = g.standard_normal((n_vec, d)), g.standard_normal((n_vec, d))
    qk_norm_logits[d] = A.qk_norm_scores(q[:, None, :], k[:, None, :], gain=np.sqrt(d))[:, 0, 0]  # (n_vec,)
    scaled_logits[d] = np.einsum("nd,nd->n", q, k) / np.sqrt(d)
fig = assumptions_plots.cosine_small_multiples(qk_norm_logits, scaled_logits)
fig

# %% [markdown] tags=["deep-dive"]
# *Side note:* **LayerNorm on $q$ and $k$** ("QK-layernorm", used by the papers
# below) is a close cousin. LayerNorm (without its learned gain) centres a vector and rescales it to
# length $\sqrt{d_k}$, so $\mathrm{LN}(q)\cdot\mathrm{LN}(k)/\sqrt{d_k} = \sqrt{d_k}\cos\theta'$,
# with $\theta'$ the angle between the centred $q$ and $k$: QK-norm with $g = \sqrt{d_k}$, applied
# to centred vectors. The LayerNorms' learned gains (one per component, not a single number)
# then play a part like $g$'s. Checked exactly ($\varepsilon = 0$, no gains):

# %% tags=["deep-dive"]
q, k = g.standard_normal((5, 64)), g.standard_normal((5, 64))
lhs = np.einsum("nd,nd->n", layer_norm(q, eps=0.0), layer_norm(k, eps=0.0)) / np.sqrt(64)
qc, kc = q - q.mean(axis=1, keepdims=True), k - k.mean(axis=1, keepdims=True)
rhs = np.sqrt(64) * np.einsum("nd,nd->n", qc, kc) / (np.linalg.norm(qc, axis=1) * np.linalg.norm(kc, axis=1))
print("LN(q)·LN(k)/√d_k :", np.array2string(lhs, precision=4))
print("√d_k · cos θ'    :", np.array2string(rhs, precision=4))
verify("LN(q)·LN(k)/√d_k = √d_k·cos θ' (centred q, k), all 5 pairs", np.allclose(lhs, rhs, rtol=1e-12, atol=1e-12))

# %% [markdown] tags=["deep-dive"]
# ### Entropy collapse in practice
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
# footnote, and with LeCun's $1/\text{fan\_in}$ it is what a network starts from (section 2: with
# PyTorch's default the scaled logits start smaller, at variance $1/9$). Training is free to grow $|q|$, $|k|$ and
# their alignment, and nothing in $1/\sqrt{d_k}$ stops the logits from following. μP's $a/d_k$
# and QK-norm's bounded $g\cos\theta$ are two ways to keep them in check.

# %% [markdown] tags=["deep-dive"]
# ### Further reading
#
# - A. Vaswani et al., *Attention Is All You Need*, 2017, arXiv:1706.03762 — §3.2.1 and footnote 4.
# - G. Yang et al., *Tensor Programs V*, 2022, arXiv:2203.03466, and the microsoft/mup README — μP.
# - A. Henry et al., *Query-Key Normalization for Transformers*, 2020, arXiv:2010.04245.
# - M. Dehghani et al., *Scaling Vision Transformers to 22 Billion Parameters*, 2023, arXiv:2302.05442.
# - Team OLMo, *2 OLMo 2 Furious*, 2024, arXiv:2501.00656 (QK-norm by RMSNorm; Hugging Face's
#   `models/olmo2/modular_olmo2.py`, `Olmo2Attention`: `q_norm`, `k_norm`).
# - Gemma Team, *Gemma 2*, 2024, arXiv:2408.00118; *Gemma 3 Technical Report*, 2025, arXiv:2503.19786.
#   Gemma 2 9B multiplies $q$ by $1/\sqrt{256}$ (head_dim; google-deepmind/gemma `gm/nn/_gemma.py`);
#   the first public ports used $1/\sqrt{224}$ ($d_\text{model}/h$) until July 2024
#   (google/gemma_pytorch commit 03e6575, huggingface/transformers issue #31891).
# - C. Raffel et al., *Exploring the Limits of Transfer Learning with a Unified Text-to-Text
#   Transformer*, JMLR 2020 (T5; §3.1.2: trained with AdaFactor), and tensorflow/mesh
#   `mesh_tensorflow/transformer/attention.py`; Hugging Face's `modeling_t5.py` `_init_weights` draws
#   `q.weight` with std `factor * ((d_model * key_value_proj_dim) ** -0.5)`.

# %% [markdown] predict_answer=["below", "far below"] predict_answer_common=["far below"]
# ## 5. Real models: GPT-2 and T5
#
# Two rows of the course's table of published models (the whole table: deep dive after this section).
# - **GPT-2 small** divides by $\sqrt{64}$. It draws $W_Q$, $W_K$ from $N(0, 0.02^2)$ whatever the width, so
#   $\mathrm{Var}(q_i) = 768 \cdot 0.02^2$ (section 2).
# - **T5** has no scale, yet starts at $\mathrm{Var}(q\cdot k) = 1$: it draws $W_Q$ with variance
#   $1/(d_\text{model}\,d_{kv})$ and $W_K$ with $1/d_\text{model}$ ($d_{kv}$ is its $d_k$), so the $1/d_{kv}$ sits in
#   $W_Q$'s start. Its RMSNorm gives $\mathrm{E}[x^2] = 1$, as LayerNorm does.
#
# **Predict:** is GPT-2 small's scaled logit variance at initialisation above or below 1?

# %%
gpt2, t5 = models.model("GPT-2 small"), models.model("T5 base")
print(models.format_table([gpt2, t5]))
Xg, Xg2 = A.sample_tokens(2 * 256, gpt2.d_model, rng=rng).reshape(2, 256, gpt2.d_model)  # two sets of tokens
var_gpt2, se = A.cluster_mean((gpt2.scale * A.sample_projected_logits("gpt2", gpt2.head_dim, Xg, Xg2, n_networks=16, rng=rng)) ** 2)
var_t5 = t5.head_dim * (t5.d_model / (t5.d_model * t5.head_dim)) * (t5.d_model / t5.d_model)  # d_kv·Var(q_i)·Var(k_i)
print(f"\nvariance of the logits at initialisation: GPT-2 small {var_gpt2:.4f} ± {se:.4f} (16 networks), T5 base {var_t5:.4f} (formula)")

# %% [markdown]
# GPT-2's is far below 1: its $W_Q$ and $W_K$ start small, $\mathrm{Var}(q_i) = 768 \cdot 0.02^2 = 0.307$,
# so the scaled variance is $0.307^2 = 0.094$. T5's is 1, by its formula (not simulated).
# GPT-2's rule does not shrink with the width: $\mathrm{Var}(q_i) = 0.0004\,d_\text{model}$, so its scaled
# variance reaches 1 at $d_\text{model} = 2500$ (checked below). Whether GPT-2's soft start makes the scale
# unneeded: the last deep dive before the Summary.

# %%
spread = A.init_logit_moments("gpt2", gpt2.d_model, gpt2.head_dim, scale=gpt2.scale).std  # = Var(q_i) = 768 · 0.02²
verify_close(f"GPT-2 small: Var(q·k/√64) = Var(q_i)² = {spread:.3f}² = {spread**2:.3f}", var_gpt2, spread**2, se=se)
width = round(1 / 0.02**2)  # the d_model where 0.0004 · d_model = 1
verify_close(f"GPT-2's rule: Var(q·k/√d_k) = (0.0004 · d_model)² = 1 at d_model = {width:.0f}", A.query_variance("gpt2", width) ** 2, 1.0, rtol=1e-12)

# %% [markdown]
# Every rule of this notebook, as a factor times $d_k$ (the ratio $\mathrm{Var}(q\cdot k)/d_k$ at three $d_k$):

# %%
factors = {}
for scheme, width in (("lecun", 512), ("pytorch_default", 512), ("gpt2", 768), ("xavier", 512)):
    factors[scheme] = [A.init_logit_moments(scheme, width, d).var / d for d in (16, 64, 128)]  # Var(q·k) ÷ d_k
    print(f"{A.INIT_SHORT_LABELS[scheme]:17s} d_model {width}: Var(q·k) = d_k ×", ", ".join(f"{f:.3g}" for f in factors[scheme]), "at d_k = 16, 64, 128")
verify("LeCun, PyTorch's default, GPT-2: the factor is the same at every d_k", all(np.ptp(factors[s]) < 1e-12 for s in ("lecun", "pytorch_default", "gpt2")))

# %% [markdown]
# **Where the answer stops.** Part 1 of the answer assumes components of variance 1. At initialisation,
# after LayerNorm, the rules of this notebook give (printed above):
#
# | rule | $\mathrm{Var}(q\cdot k)/d_k$ at the start | where |
# |---|---|---|
# | LeCun's $1/\text{fan\_in}$ | 1 | section 2 |
# | PyTorch's default | 1/9 at every $d_k$ | section 2 |
# | GPT-2 small | 0.094 at every $d_k$ at $d_\text{model} = 768$; $(0.0004\,d_\text{model})^2$ in general | section 5 |
# | Xavier's, one head | 3.16 at $d_\text{model} = 512$, $d_k = 64$; changes slowly with $d_k$ | section 2 |
#
# Where the factor is the same at every $d_k$, the square root still holds (from which $d_k$ most queries
# commit under PyTorch's default: deep dive below). After training, $q$ and $k$ can correlate (section 3,
# modelled, not measured). No notebook trains a real model: part 3 (**speed**) is measured on 09's small head only.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: from which $d_k$ queries commit under PyTorch's default
#
# Part 2 of the answer counts queries that put over 0.9 of their weight on one of 16 keys: most do,
# unscaled, from $d_k = 64$ under unit variance (00). PyTorch's default gives $\mathrm{Var}(q\cdot k) = d_k/9$,
# so it needs $9 \times 64 = 576$ to spread the logits as unit variance does at 64: between the grid's
# 512 and 1024. Measured, through the network: per seed one fresh PyTorch-default network
# ($d_\text{model} = 512$), 50 sequences of 16 LayerNormed key tokens and 16 query tokens, unscaled logits;
# the share of queries over 0.9, median and range over 10 seeds:

# %% tags=["deep-dive"]
shares = {}
for d in (256, 512, 1024):
    share = []
    for s in range(10):
        g = make_rng(SEED + 500 + s)
        W_Q, W_K = A.sample_weights("pytorch_default", d_model, d, size=2, rng=g)  # (d_k, d_model) each
        X = A.sample_tokens(2 * 50 * 16, d_model, rng=g)  # 50 sequences of 16 query and 16 key tokens
        q, k = ((half @ W.T).reshape(50, 16, d) for half, W in ((X[:800], W_Q), (X[800:], W_K)))  # (50, 16, d_k) each
        z = q @ np.swapaxes(k, -1, -2)  # (50 sequences, 16 queries, 16 keys), unscaled
        share.append((softmax(z).max(axis=-1) > 0.9).mean())
    shares[d] = np.array(share)
    print(f"PyTorch default, 16 keys, unscaled, d_k = {d:4d}: queries over 0.9: median {np.median(shares[d]):.0%} "
          f"(range {shares[d].min():.0%} to {shares[d].max():.0%}, 10 seeds)")
verify("PyTorch's default: most queries commit from d_k = 512 of the grid, not at 256",
       np.median(shares[256]) < 0.5 < np.median(shares[512]))

# %% [markdown] tags=["deep-dive"]
# A median 37 % of queries commit at $d_k = 256$ and 54 % at 512 (52 % on the lowest seed): 512 is
# enough, below 576, because under unit variance already 56 % commit at 64 (00). So with PyTorch's default,
# part 2's "from $d_k = 64$ up" becomes "from $d_k = 512$ up": the factor $1/9$ moves the threshold, and the
# scale still removes the $d_k$.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: does GPT-2's soft start make the scale unneeded? 05's closed form, and the sources
#
# Take one row of 1024 independent logits with GPT-2's starting spread (std 0.307),
# scaled and unscaled, beside 00's unit-variance row. For each, the top weight and the keys in play, $e^H$
# (05; $H$ the row's entropy): medians of 1000 rows, range over 5 seeds.

# %% tags=["deep-dive"]
z, in_play = np.stack([make_rng(SEED + 10 + s).standard_normal((1000, 1024)) for s in range(5)]), {}  # (5 seeds, 1000 rows, 1024)
for name, std in (("GPT-2 with 1/√64", spread), ("GPT-2 without", 8 * spread), ("unit variance without (00)", 8.0)):
    w = saturation.weight_stats(std * z)  # per row: largest weight, entropy H, e^H; shape (5, 1000)
    keys, top = np.median(w.effective_keys, axis=1), np.median(w.max_weight, axis=1)  # one median per seed
    print(f"{name:26s}: logit std {std:.3g} (variance {std**2:.3g}) | e^H {keys.min():.1f}–{keys.max():.1f} of 1024 | top weight {top.min():.3g}–{top.max():.3g}")
    in_play[name] = keys
verify(f"unscaled, every seed: GPT-2 is past 05's onset (fewer than 1024/e = {1024 / np.e:.0f} keys in play)", in_play["GPT-2 without"].max() < 1024 / np.e)
verify("unscaled, every seed: GPT-2 keeps 70–90 keys in play, unit variance 2–3", 70 < in_play["GPT-2 without"].min() < in_play["GPT-2 without"].max() < 90 and 2 < in_play["unit variance without (00)"].min() < in_play["unit variance without (00)"].max() < 3)

# %% [markdown] tags=["deep-dive"]
# **At GPT-2 small's own start, unscaled is past the onset but not committed:** about 80 of 1024 keys
# stay in play (past 05's onset, 1024/e = 377 keys) and the top key holds a median 0.14, against 2.2–2.4
# keys and 0.73–0.76 for unit-variance logits. Does that make the scale unneeded? GPT-2's unscaled logit variance
# is $d_k\,(d_\text{model}\cdot 0.02^2)^2$. It grows with $d_k$, which the scale removes, and with
# $d_\text{model}$, which the scale leaves (section 5: scaled, it reaches 1 at $d_\text{model} = 2500$).
# Unscaled, the soft start does not carry over to wider models.
#
# Scaled, is GPT-2's attention saturated at initialisation? The same model of one row, with 05's own
# helper over 5 seeds of 100 rows and against 05's closed form:

# %% tags=["deep-dive"]
H = saturation.iid_entropy(1024, [spread**2], n_rows=100, seeds=range(5))[:, 0]  # model: a row = 1024 i.i.d. logits
verify("i.i.d. logits with GPT-2's initial spread keep > 90 % of 1024 keys in play (e^H), every seed", np.exp(H).min() > 0.9 * 1024,
       f"std of q·k/√64 = {spread:.3f}; e^H over 5 seeds: median {np.exp(np.median(H)):.1f}, range {np.exp(H.min()):.1f}–{np.exp(H.max()):.1f}; notebook 05's n·e^(−σ²/2) = {saturation.effective_keys_closed_form(1024, spread**2):.1f}")

# %% [markdown] tags=["deep-dive"]
# Far from saturated — *if* a full row's 1,024 logits were independent draws with that spread; in
# GPT-2 they share $q$ and $W_K$, and real tokens are not independent. This is about
# initialisation only, not the trained network. GPT-2's $N(0, 0.02^2)$ for `c_attn` (which holds
# $W_Q$, $W_K$, $W_V$) is `conv1d(..., w_init_stdev=0.02)` in openai/gpt-2 `src/model.py`; other
# weights differ (the position embeddings start at std 0.01). For T5, Hugging Face's `modeling_t5.py`
# `_init_weights` draws `q.weight` with std `factor * ((d_model * key_value_proj_dim) ** -0.5)`,
# as the reference code does: `AttentionParams.__init__` (`q_init`, `kv_init`) in tensorflow/mesh
# `mesh_tensorflow/transformer/attention.py` (commit 01231bb).
#
# In large models a reported danger is not saturation at initialisation but **logit growth during
# training**, as $q$ and $k$ grow and align: Dehghani et al. (2023) saw ViT-22B (a 22-billion-parameter
# Vision Transformer) diverge from it. Recent models bound it: Gemma 2 soft-caps every logit to
# $50\tanh(s/50)$; ViT-22B, OLMo 2 and Gemma 3 normalise $q$ and $k$ by a LayerNorm or RMSNorm
# (QK-norm); μP changes the scale's exponent. The sources of each technique:

# %% tags=["deep-dive"]
for t in models.TECHNIQUES:
    print(f"{t.name}: {t.what}\n  used by: {t.used_by}\n  source: {t.source}\n")

# %% [markdown] tags=["deep-dive"]
# The course's table of published models (`sdpa_helpers.models` gives each row's source):

# %% tags=["deep-dive"]
print(models.format_table())

# %% [markdown]
# ## Summary
#
# - At initialisation $\mathrm{Var}(q\cdot k) = d_k\,\mathrm{Var}(q_i)^2$ (LayerNorm fixes $x$, not $q$ or $k$):
#   $1/\sqrt{d_k}$ removes the $d_k$, not the factor. T5 starts at 1, GPT-2 lower.
# - If $q$ and $k$ agree with correlation $\rho$ (a model), the scaled mean $\rho\sqrt{d_k}$ grows; μP's $a/d_k$ holds
#   the mean at $a\rho$; QK-norm bounds the logit by $g$.
#
# ## Exercises
#
# **Exercise 1.** One head's query projection $d_\text{model} = 768 \to d_k = 64$ starts with
# Xavier's rule, $\mathrm{Var}(W) = 2/(\text{fan\_in} + \text{fan\_out})$; tokens are LayerNormed. What is $\mathrm{Var}(q_i)$ (three significant figures)?

# %%
_ = check("08.xavier_head_var", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# Section 2's $\text{fan\_in}\cdot\mathrm{Var}(W)$ with Xavier's $\mathrm{Var}(W)$:
# $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\frac{2}{\text{fan\_in}+\text{fan\_out}} = \frac{2\cdot 768}{768 + 64}
# = \frac{1536}{832} \approx 1.85$. Check: `A.query_variance("xavier", 768, 64)`.
# </details>
#
# **Exercise 2 (conceptual).** Which keeps the matching key's logit bounded *whatever* $\rho$
# and $d_k$: (a) Xavier's rule; (b) LayerNorm on the tokens $x$; (c) QK-norm? Answer with a
# letter; say why not the other two.

# %%
_ = check("08.what_bounds", None)  # replace None with a letter, e.g. "a"

# %% [markdown]
# <details><summary>Solution</summary>
#
# (c): QK-norm's logit is $g\cos\theta \in [-g, g]$ for any $q$ and $k$. (a) only changes the
# starting factor $\mathrm{Var}(q_i)$; training moves the weights away from it. (b) normalises
# $x$, not $q$ or $k$: the learned $W_Q$ and $W_K$ can still make $q$ and $k$ long and aligned,
# and the mean $\rho\, d_k$ grows.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3.** Queries and keys are correlated with $\rho = 0.25$ and $d_k = 1024$. What is
# the mean of the *scaled* logit $q\cdot k/\sqrt{d_k}$ (an integer)?

# %% tags=["deep-dive"]
_ = check("08.rho_mean", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $\mathrm{E}[q\cdot k] = \rho\, d_k = 256$, and $256/\sqrt{1024} = 8$ — eight units above an
# unrelated key, whose scaled logit has mean 0 and standard deviation 1.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** Write `cosine_logit(q, k, g)`: the QK-norm logit $g\cos\theta$ of two 1-D
# vectors `q` and `k`.

# %% tags=["deep-dive"]
def cosine_logit(q, k, g):
    ...  # your code: g·cos(θ) of the 1-D vectors q and k


_ = check("08.cosine_logit", cosine_logit)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def cosine_logit(q, k, g):
#     return g * np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k))
# ```
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5.** $W_Q$ and $W_K$ ($d_\text{model} \to d_k = 128$) start from PyTorch's default;
# tokens are LayerNormed. What is the variance of the *unscaled* $q\cdot k$ (three significant figures)?

# %% tags=["deep-dive"]
_ = check("08.default_logit_var", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q_i) = \text{fan\_in}\cdot\frac{1}{3\,\text{fan\_in}} = \frac13$ whatever $d_\text{model}$ is,
# so $\mathrm{Var}(q\cdot k) = d_k\cdot\frac13\cdot\frac13 = 128/9 \approx 14.2$.
# </details>
#
# **Exercise 6.** Push section 3 to $\rho = 1$: $k = q$, $d_k = 64$ independent standard normal
# components ($\mathrm{E}[q_i^4] = 3$). What is the variance of $q\cdot q$ (an integer)?

# %% tags=["deep-dive"]
_ = check("08.k_equals_q_var", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $q\cdot q = \sum_i q_i^2$: $d_k$ independent terms of variance $\mathrm{E}[q_i^4] - \mathrm{E}[q_i^2]^2 = 2$,
# so $2 d_k = 128$. The mean $\rho\,d_k = 64$ dwarfs the spread $\sqrt{128} \approx 11$.
# </details>
#
# **Exercise 7.** GPT-2 medium has $d_\text{model} = 1024$ and heads of $d_k = 64$, draws $W_Q$
# and $W_K$ from $N(0, 0.02^2)$, and LayerNorms its tokens. What is the standard deviation of its scaled logits
# $q\cdot k/\sqrt{64}$ at initialisation (three significant figures)?

# %% tags=["deep-dive"]
_ = check("08.gpt2_medium_std", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q_i) = 1024 \cdot 0.02^2 = 0.4096$; the scaled logit has variance
# $\mathrm{Var}(q_i)^2$, so its standard deviation is $\mathrm{Var}(q_i) \approx 0.410$ — wider than
# GPT-2 small's 0.307, because GPT-2's rule does not shrink with the width. Still far from saturation.
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [09 — Training with and without the scale](09_training_with_and_without_scale.ipynb)
