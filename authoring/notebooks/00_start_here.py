# %% [markdown]
# # Why √d_k? — start here
#
# Scaled dot-product attention, the heart of every Transformer, is one line:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# This course is about one piece of it: **why divide by $\sqrt{d_k}$?** The original paper
# answers in a footnote. Over ten short notebooks we derive the answer, check every step
# with a simulation, and drag sliders to watch what goes wrong without it.
#
# **Learning goals**
# - Read the attention formula and its diagram, and name each step.
# - Know what $d_k$ is in a real model: the dimension of one attention head.
# - Use the course's sliders, and find your way through the notebooks.
#
# **Prerequisites**
# - Python and a little numpy (arrays, `@`).
# - Vectors and the dot product; the words *mean* and *variance*.

# %% [markdown]
# ## Setup
#
# Every notebook starts with one setup cell: the imports, a seeded random generator
# (`rng`), and the versions in use. The helper package `sdpa_helpers` is installed by
# `make lab` (or on Binder); nothing here edits `sys.path` or downloads anything.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory
from sdpa_helpers.attention import scaled_dot_product_attention, softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import start as start_plots
from sdpa_helpers.sampling import sample_dot_products
from sdpa_helpers.widgets.start import SpreadExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The formula
#
# | symbol | shape | meaning |
# |---|---|---|
# | $Q$ | $(n_q, d_k)$ | one query vector per row |
# | $K$ | $(n_k, d_k)$ | one key vector per row |
# | $V$ | $(n_k, d_v)$ | one value vector per key |
# | $d_k$ | number | length of each query and key vector |
# | $QK^\top$ | $(n_q, n_k)$ | every query dotted with every key: the *logits* |
#
# Each query gets a probability distribution over the keys (a row of the softmax), and
# its output is the matching weighted average of the values. Here it is on tiny inputs:
# 2 queries, 3 keys, $d_k = 4$, $d_v = 2$.

# %%
Q = rng.standard_normal((2, 4))  # (n_q, d_k)
K = rng.standard_normal((3, 4))  # (n_k, d_k)
V = rng.standard_normal((3, 2))  # (n_k, d_v)
output, weights = scaled_dot_product_attention(Q, K, V)
print("weights (one row per query, one column per key):")
print(np.array2string(weights, precision=3, suppress_small=True))
print("each row sums to", np.round(weights.sum(axis=1), 12))
print("output shape", output.shape)

# %% [markdown]
# The same numbers, written out as the formula says:

# %%
by_hand = softmax(Q @ K.T / np.sqrt(4)) @ V  # (2, 4) @ (4, 3) -> (2, 3); (2, 3) @ (3, 2) -> (2, 2)
assert np.allclose(by_hand, output)
print("softmax(Q Kᵀ / √d_k) V matches scaled_dot_product_attention:", np.allclose(by_hand, output))

# %% [markdown]
# ## 2. The diagram
#
# The paper draws the same computation as a stack of five steps, read from the bottom up:
# **MatMul → Scale → Mask (optional) → SoftMax → MatMul**.
#
# ![Diagram of scaled dot-product attention: Q and K enter a MatMul box, then Scale by 1 over square root of d_k, then an optional Mask, then SoftMax; a second MatMul combines the result with V to give the output.](figures/sdpa_diagram.png)
#
# The *Scale* box is the subject of this course. The mask (used, for example, so that a
# word cannot look at later words) comes in notebook 07.

# %% [markdown]
# ## 3. What is $d_k$ in a real model?
#
# A Transformer layer runs $h$ attention *heads* side by side. The model dimension
# $d_\text{model}$ is split between them, so each head works with vectors of length
#
# $$d_k = d_\text{model} / h .$$
#
# The original Transformer (Vaswani et al., 2017) has $d_\text{model} = 512$ and $h = 8$:

# %%
d_model, h = 512, 8
d_k = d_model // h
assert d_k * h == d_model
print(f"d_k = {d_model} / {h} = {d_k}")

# %% [markdown]
# The whole argument of the course in two numbers: if the components of $q$ and $k$ are
# independent with mean 0 and variance 1, then $q\cdot k$ has mean 0 and variance $d_k$ —
# so its standard deviation is $\sqrt{d_k}$. Dividing by $\sqrt{d_k}$ brings it back to 1.
# The closed form (derived in notebook 02) and a simulation of 100 000 pairs agree:

# %%
moments = theory.dot_product_moments(d_k)
samples = sample_dot_products(d_k, 100_000, rng=SEED)
print(f"std of q·k      : theory {moments.std:.3f}, simulation {samples.std():.3f}")
print(f"std of q·k / √d_k: theory {1:.3f}, simulation {(samples / np.sqrt(d_k)).std():.3f}")
assert abs(samples.std() / moments.std - 1) < 0.01
assert abs((samples / np.sqrt(d_k)).std() - 1) < 0.01

# %% [markdown]
# ## 4. How to use the sliders
#
# Many notebooks have an *explorer*: controls above a figure. Drag a slider (or click it
# and press ← / →) and the figure redraws in place. The $d_k$ slider moves in powers of
# two, from 1 to 4096, because what matters is how things change when $d_k$ doubles.
#
# Sliders need a running kernel (JupyterLab, Binder or Voila). So before every explorer
# you will find the same view as a still figure, at a few values of $d_k$, which reads
# fine on GitHub or on paper. Here is the still version of the first explorer:
# histograms of $q\cdot k$ (top, orange) and of $q\cdot k/\sqrt{d_k}$ (bottom, blue) for
# 5 000 random pairs at $d_k$ = 1, 64 and 4096.

# %%
fig = start_plots.spread_small_multiples({d: sample_dot_products(d, 5000, rng=SEED) for d in (1, 64, 4096)})
fig

# %% [markdown]
# Notice the x axes: the top row spreads wider and wider (about $\pm 4\sqrt{d_k}$), while
# the bottom row stays between about −4 and 4. Now the live version: drag $d_k$.

# %% tags=["nbval-ignore-output"]
explorer = SpreadExplorer(d_k=64)
explorer

# %% [markdown]
# ## 5. The map of the course
#
# | # | notebook | what you will do |
# |---|---|---|
# | 00 | **Start here** (this notebook) | the formula, the diagram, $d_k$, the sliders |
# | 01 | [Dot products](01_dot_products.ipynb) | $q\cdot k$, $QK^\top$ as a table of dot products, Hadamard and Frobenius products |
# | 02 | [Mean and variance of q·k](02_mean_and_variance.ipynb) | the derivation, one step a cell, each step simulated |
# | 03 | [Small experiments mislead](03_small_experiments.ipynb) | why a 2×2 experiment gave 1.6 instead of 2 |
# | 04 | [Why √d_k and not d_k](04_why_sqrt_dk.ipynb) | $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$ and the three choices of scale |
# | 05 | [Softmax saturation](05_softmax_saturation.ipynb) | large logits make the softmax one-hot |
# | 06 | [Vanishing gradients](06_vanishing_gradients.ipynb) | a one-hot softmax passes back no gradient |
# | 07 | [Attention end to end](07_attention_end_to_end.ipynb) | the full mechanism, causal masks, multi-head $d_k$ |
# | 08 | [Does unit variance hold?](08_does_unit_variance_hold.ipynb) | initialisations, trained models, μP, QK-norm |
# | 09 | [Training with and without the scale](09_training_with_and_without_scale.ipynb) | train a tiny attention layer both ways |

# %% [markdown]
# ## Summary
#
# - Attention is $\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V$: MatMul, Scale, Mask (optional), SoftMax, MatMul.
# - $d_k$ is the length of one head's query and key vectors: $512/8 = 64$ in the original Transformer.
# - For random unit-variance components, $q\cdot k$ spreads like $\sqrt{d_k}$; the scale brings it back to 1.
#   The rest of the course shows why that is true and why it matters.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`, which prints ✅ or ❌ with a hint.
# The cells start with `answer = None`, so you see ❌ until you put in your answer.
#
# **Exercise 1.** BERT-base has $d_\text{model} = 768$ and 12 heads. What is its $d_k$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.bert_d_k", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $d_k = d_\text{model}/h = 768/12 = 64$ — the same as the original Transformer.
# </details>
#
# **Exercise 2.** With $d_k = 256$ and unit-variance components, what is the standard
# deviation of the *unscaled* dot product $q\cdot k$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("00.std_unscaled", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q\cdot k) = d_k = 256$, so the standard deviation is $\sqrt{256} = 16$.
# </details>
#
# ---
# **Next:** [01 — Dot products](01_dot_products.ipynb)
