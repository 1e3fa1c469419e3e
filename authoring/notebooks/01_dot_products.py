# %% [markdown]
# # Dot products and notation
#
# Attention starts with $QK^\top$: every query dotted with every key. Before we ask how big
# these numbers get, this notebook makes sure we read the notation the same way — the dot
# product, the table $QK^\top$, and three products that nest inside each other: the
# Hadamard product, the row-wise dot product and the Frobenius product. Every identity is
# checked in code.
#
# **Learning goals**
# - Compute $q\cdot k$ as a sum of products, by hand and with numpy (`@` and `np.dot`).
# - Read $QK^\top$ as the table of every query–key dot product, shapes included.
# - Tell apart $A\circ B$, the row-wise dot product and $\langle A, B\rangle_F$, and see how they nest.
# - See that the dot products of random vectors spread more as $d_k$ grows.
#
# **Prerequisites**
# - [00 — Start here](00_start_here.ipynb).
# - numpy arrays, `@`, `sum(axis=...)`.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import dot_products as dp_plots
from sdpa_helpers.sampling import sample_components, sample_dot_products

SEED = 1
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The dot product: a sum of products
#
# Two vectors of the same length $d_k$ have the dot product
#
# $$q\cdot k = \sum_{i=1}^{d_k} q_i k_i = q_1 k_1 + q_2 k_2 + \dots + q_{d_k} k_{d_k}.$$
#
# Multiply the matching components, add the products: the result is one number. In
# numpy, `q @ k`, `np.dot(q, k)` and `np.sum(q * k)` all compute it. Check them against a
# plain loop:

# %%
q = np.array([1, 2, 3])
k = np.array([4, -5, 6])

by_loop = 0
for i in range(len(q)):  # the definition, term by term
    by_loop += q[i] * k[i]

print("products q_i k_i:", (q * k).tolist())
print("loop:", by_loop, "| q @ k:", q @ k, "| np.dot(q, k):", np.dot(q, k), "| np.sum(q * k):", np.sum(q * k))
assert by_loop == q @ k == np.dot(q, k) == np.sum(q * k)

# %% [markdown]
# ## 2. Hand examples
#
# A few dot products to do on paper first, then in code. The helper below builds each
# line from the arrays themselves, so the printed arithmetic is the arithmetic numpy did.
# In 2 dimensions:

# %%
def spell_out(q, k):
    """Write q·k out term by term, e.g. '[1, 2]·[2, 3] = 1·2 + 2·3 = 8', and check the sum."""
    q, k = np.asarray(q), np.asarray(k)
    terms = [a * b for a, b in zip(q.tolist(), k.tolist())]
    assert sum(terms) == q @ k
    products = " + ".join(f"{a}·{b}" for a, b in zip(q.tolist(), k.tolist()))
    return f"{q.tolist()}·{k.tolist()} = {products} = {q @ k}"


for q2, k2 in [([1, 2], [2, 3]), ([1, 4], [5, 6]), ([8, 9], [10, 2])]:
    print(spell_out(q2, k2))

# %% [markdown]
# In 3 dimensions there is one more product to add:

# %%
for q3, k3 in [([1, 2, 3], [3, 2, 1]), ([3, 4, 5], [6, 7, 8]), ([10, 9, 11], [8, 7, 6])]:
    print(spell_out(q3, k3))

# %% [markdown]
# All these components are positive, so every product is positive and each extra
# dimension can only add to the sum. The vectors of a real model have components of both
# signs, so products partly cancel; section 6 looks at such vectors.
#
# Why use a dot product to compare a query with a key? Geometrically
# $q\cdot k = \lVert q\rVert\,\lVert k\rVert \cos\theta$, with $\theta$ the angle between
# them: it is large when they point the same way. For $[1, 2]$ and $[2, 3]$ the angle is
# small and $\cos\theta$ is close to 1:

# %%
q2, k2 = np.array([1, 2]), np.array([2, 3])
cos_theta = (q2 @ k2) / (np.linalg.norm(q2) * np.linalg.norm(k2))
theta = np.arctan2(q2[1], q2[0]) - np.arctan2(k2[1], k2[0])  # the angle, from each vector's direction
assert np.isclose(cos_theta, np.cos(theta))
print(f"cos θ = q·k / (‖q‖ ‖k‖) = {q2 @ k2} / (√{q2 @ q2} · √{k2 @ k2}) = {cos_theta:.4f}; "
      f"θ = {np.degrees(abs(theta)):.1f} degrees")

# %% [markdown]
# ## 3. $QK^\top$: the table of every query–key dot product
#
# Stack $n_q$ queries as the rows of $Q$ and $n_k$ keys as the rows of $K$. Then entry
# $(i, j)$ of $QK^\top$ is query $i$ dotted with key $j$:
#
# $$(QK^\top)_{ij} = q_i\cdot k_j, \qquad
# \underbrace{(n_q, d_k)}_{Q} \;@\; \underbrace{(d_k, n_k)}_{K^\top} \;\to\; (n_q, n_k).$$
#
# The inner dimension $d_k$ is summed away. Below, $n_q = 3$ queries and $n_k = 5$ keys of
# length $d_k = 4$ (small integers, so you can redo any entry by hand), first with a
# naive double loop over the definition, then with one `@`:

# %%
Q = rng.integers(-3, 4, size=(3, 4))  # (n_q, d_k)
K = rng.integers(-3, 4, size=(5, 4))  # (n_k, d_k)
n_q, d_k = Q.shape
n_k = K.shape[0]

table = np.zeros((n_q, n_k), dtype=Q.dtype)
for i in range(n_q):
    for j in range(n_k):
        table[i, j] = Q[i] @ K[j]  # query i against key j

scores = Q @ K.T  # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)
assert np.array_equal(table, scores)
print(f"Q, shape {Q.shape}:", Q, f"K, shape {K.shape}:", K, sep="\n")
print(f"Q @ K.T: {Q.shape} @ {K.T.shape} -> {scores.shape}; the double loop agrees:", np.array_equal(table, scores))
print(scores)

# %% [markdown]
# The same table as a picture. Row $i$ holds query $i$ against every key — that is the row
# the softmax will turn into attention weights (notebook 05).

# %%
ax = dp_plots.score_table(Q, K, decimals=0)
ax.figure

# %% [markdown]
# ## 4. `np.dot` is `@` for 2-D arrays
#
# A frequent confusion: for vectors and matrices (1-D and 2-D arrays), `np.dot(A, B)` and
# `A @ B` (also written `np.matmul(A, B)`) are the **same operation**:

# %%
assert np.array_equal(np.dot(Q, K.T), Q @ K.T)
assert np.array_equal(np.matmul(Q, K.T), Q @ K.T)
assert np.dot(q, k) == q @ k
print("np.dot(Q, K.T) == Q @ K.T == np.matmul(Q, K.T):", np.array_equal(np.dot(Q, K.T), Q @ K.T))

# %% [markdown]
# They part ways only for stacks of matrices (3-D arrays and up, as with several heads at
# once). `@` multiplies the stacks pair by pair; `np.dot` multiplies *every* matrix of
# the first stack with *every* matrix of the second:

# %%
A3 = rng.standard_normal((2, 3, 4))  # a stack of two (3, 4) matrices
B3 = rng.standard_normal((2, 4, 5))  # a stack of two (4, 5) matrices
print("A3 @ B3       :", (A3 @ B3).shape, "  (pair by pair)")
print("np.dot(A3, B3):", np.dot(A3, B3).shape, "(every pair of matrices)")
for a in range(2):
    assert np.allclose((A3 @ B3)[a], A3[a] @ B3[a])
    for b in range(2):
        assert np.allclose(np.dot(A3, B3)[a, :, b, :], A3[a] @ B3[b])

# %% [markdown]
# So for the 2-D case of this course, read `np.dot` as `@`; in batched code, use `@`.
#
# ## 5. Hadamard, row-wise dot, Frobenius: how they nest
#
# Take two matrices $A$, $B$ of the same shape $(n, d)$, with rows $a_i$ and $b_i$.
#
# | name | formula | shape | numpy |
# |---|---|---|---|
# | Hadamard product | $(A\circ B)_{ij} = A_{ij} B_{ij}$ | $(n, d)$ | `A * B` |
# | row-wise dot product | $a_i\cdot b_i = \sum_j (A\circ B)_{ij}$ | $(n,)$ | `(A * B).sum(axis=1)` |
# | Frobenius product | $\langle A, B\rangle_F = \sum_i a_i\cdot b_i$ | one number | `(A * B).sum()` |
#
# Each one is the previous one summed over one more axis:
#
# $$\langle A, B\rangle_F \;=\; \sum_{i} \underbrace{a_i\cdot b_i}_{\text{row-wise dot}}
# \;=\; \sum_{i}\sum_{j} \underbrace{(A\circ B)_{ij}}_{\text{Hadamard}}
# \;=\; \operatorname{trace}(A^\top B).$$
#
# The trace form holds because the diagonal of $A^\top B$ holds the dot products of the
# *columns* of $A$ and $B$, and adding them up adds every product $A_{ij}B_{ij}$ once.
# Each identity, checked on random $4\times 6$ matrices:

# %%
A = rng.standard_normal((4, 6))  # (n, d)
B = rng.standard_normal((4, 6))  # (n, d)

hadamard = A * B                           # (n, d)
rowwise = hadamard.sum(axis=1)             # (n,): a_i · b_i
frobenius = rowwise.sum()                  # one number

assert hadamard.shape == A.shape and rowwise.shape == (4,)
assert np.allclose(rowwise, [A[i] @ B[i] for i in range(4)])        # row-wise dot = a_i · b_i
assert np.allclose(rowwise, np.einsum("ij,ij->i", A, B))            # the same, as numpy's einsum
assert np.allclose(rowwise, np.diag(A @ B.T))                       # = the diagonal of A Bᵀ
assert np.isclose(frobenius, hadamard.sum())                        # Σ_i Σ_j (A ∘ B)_ij
assert np.isclose(frobenius, np.trace(A.T @ B))                     # = trace(Aᵀ B)
assert np.isclose(frobenius, np.trace(A @ B.T))                     # = trace(A Bᵀ) too
assert np.isclose(frobenius, A.ravel() @ B.ravel())                 # = dot of the flattened matrices
print("row-wise dots a_i·b_i:", np.array2string(rowwise, precision=3))
print(f"<A, B>_F = sum of row-wise dots = {frobenius:.3f} = trace(Aᵀ B) = {np.trace(A.T @ B):.3f}")

# %% [markdown]
# The nesting in a picture, on small integer matrices: sum each row of $A\circ B$ to get
# the row-wise dots, then sum those to get $\langle A, B\rangle_F$.

# %%
A_small = rng.integers(-3, 4, size=(3, 4))
B_small = rng.integers(-3, 4, size=(3, 4))
fig = dp_plots.frobenius_nesting(A_small, B_small, decimals=0)
fig

# %% [markdown]
# Two links to attention:
# - With as many queries as keys, the diagonal of $QK^\top$ is the row-wise dot of $Q$
#   and $K$ (query $i$ with key $i$), and its trace is $\langle Q, K\rangle_F$.
# - The course's sampler `sample_dot_products` draws $n$ independent pairs $(q, k)$ as the
#   rows of two $(n, d_k)$ matrices and returns their row-wise dot: $n$ dot products in one
#   call. Both checked here:

# %%
Q_sq = rng.standard_normal((5, 8))  # (n, d_k)
K_sq = rng.standard_normal((5, 8))  # (n, d_k)
assert np.allclose(np.diag(Q_sq @ K_sq.T), np.einsum("ij,ij->i", Q_sq, K_sq))
assert np.isclose(np.trace(Q_sq @ K_sq.T), np.sum(Q_sq * K_sq))

g = make_rng(7)  # the same seed twice: the sampler draws q, then k, from it
q_rows = sample_components((5, 8), rng=g)  # (n, d_k)
k_rows = sample_components((5, 8), rng=g)  # (n, d_k)
assert np.allclose(sample_dot_products(8, 5, rng=7), np.einsum("ij,ij->i", q_rows, k_rows))
print("diag(Q Kᵀ) = row-wise dot, trace(Q Kᵀ) = <Q, K>_F, and sample_dot_products = row-wise dot: all checked")

# %% [markdown]
# ## 6. Random vectors: the spread grows with $d_k$
#
# In a model, $q$ and $k$ are not hand-picked. Think of their components as independent
# random numbers with mean 0 and variance 1 (notebook 08 asks when that is true). For each $d_k$
# from 1 to 4096, draw 1000 random pairs and measure the standard deviation of their dot
# products.
#
# A standard deviation measured on 1000 samples is itself a little random. Its *standard
# error* (SE) is about $\sqrt{(m_4 - s^4)/n}\,/\,(2s)$, with $s$ the sample standard
# deviation and $m_4$ the sample fourth central moment (notebook 03 looks at this
# sampling spread closely). The check below accepts the guess $\sqrt{d_k}$ when the
# sample std is within 4 SE of it.

# %%
d_ks = [1, 4, 16, 64, 256, 1024, 4096]
n_pairs = 1000
dots = {d_k: sample_dot_products(d_k, n_pairs, rng=rng) for d_k in d_ks}  # (n_pairs,) each

print(f"{'d_k':>6} {'sample std':>11} {'√d_k':>7} {'std / √d_k':>11} {'SE of std':>10}")
for d_k, s in dots.items():
    std = s.std(ddof=1)
    m4 = np.mean((s - s.mean()) ** 4)
    se_std = np.sqrt((m4 - std**4) / n_pairs) / (2 * std)
    print(f"{d_k:>6} {std:>11.3f} {np.sqrt(d_k):>7.3f} {std / np.sqrt(d_k):>11.3f} {se_std:>10.3f}")
    assert abs(std - np.sqrt(d_k)) < 4 * se_std

# %% [markdown]
# The standard deviation tracks $\sqrt{d_k}$: the ratio std$/\sqrt{d_k}$ stays close to 1
# at every $d_k$ (within 4 standard errors), while $\sqrt{d_k}$ itself goes from 1 to 64.
# On log axes that is a straight line of slope ½:

# %%
fig = dp_plots.spread_growth(dots)
fig

# %% [markdown]
# Each of the $d_k$ products $q_i k_i$ is a random number of size about 1, with either
# sign. Adding $d_k$ of them does not give something of size $d_k$ (they partly cancel),
# but something of size $\sqrt{d_k}$. Notebook 02 proves it:
# $\mathrm{Var}(q\cdot k) = d_k$ exactly.
#
# ## Summary
#
# - $q\cdot k = \sum_i q_i k_i$: multiply matching components, add. `q @ k` computes it.
# - $QK^\top$ is the $(n_q, n_k)$ table of every query–key dot product:
#   $(n_q, d_k) @ (d_k, n_k) \to (n_q, n_k)$.
# - `np.dot` is `@` for 1-D and 2-D arrays; for stacks of matrices use `@`.
# - $\langle A, B\rangle_F = \sum_i a_i\cdot b_i = \sum_i\sum_j (A\circ B)_{ij} = \operatorname{trace}(A^\top B)$:
#   Hadamard, then sum over columns (row-wise dot), then over rows (Frobenius).
# - For independent random components of mean 0 and variance 1, the spread of $q\cdot k$ grows like $\sqrt{d_k}$.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`. The cells start with `answer = None`.
#
# **Exercise 1.** Compute $[2, -1, 3]\cdot[4, 0, -2]$ by hand.

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("01.hand_dot", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $2\cdot 4 + (-1)\cdot 0 + 3\cdot(-2) = 8 + 0 - 6 = 2$. In code: `np.array([2, -1, 3]) @ np.array([4, 0, -2])`.
# </details>
#
# **Exercise 2.** $Q$ has shape $(5, 64)$ and $K$ has shape $(7, 64)$. What is the shape
# of `Q @ K.T`? Answer as a tuple.

# %%
answer = None  # replace None with a tuple, e.g. (1, 2)
_ = check("01.qk_shape", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $(5, 64) @ (64, 7) \to (5, 7)$: one row per query, one column per key; $d_k = 64$ is summed away.
# </details>
#
# **Exercise 3.** For $A = \begin{bmatrix}1 & -2\\ 3 & 0\end{bmatrix}$ and
# $B = \begin{bmatrix}2 & 1\\ -1 & 5\end{bmatrix}$, compute $\langle A, B\rangle_F$.

# %%
answer = None  # replace None with your answer
_ = check("01.frobenius", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $A\circ B = \begin{bmatrix}2 & -2\\ -3 & 0\end{bmatrix}$; the row-wise dots are $0$ and $-3$;
# their sum is $\langle A, B\rangle_F = -3$. In code: `np.sum(A * B)` or `np.trace(A.T @ B)`.
# </details>
#
# **Exercise 4.** Write `rowwise_dot(A, B)`: for $A$, $B$ of shape $(n, d)$ it returns the
# $n$ dot products $a_i\cdot b_i$, shape $(n,)$. Do it without computing the full table
# $AB^\top$.

# %%
def rowwise_dot(A, B):
    ...  # your code here: return an array of shape (n,)


_ = check("01.rowwise_dot", rowwise_dot)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def rowwise_dot(A, B):
#     return (np.asarray(A) * np.asarray(B)).sum(axis=1)   # Hadamard, then sum over columns
# ```
# `np.einsum("ij,ij->i", A, B)` is the same. `np.diag(A @ B.T)` gives the same numbers
# but computes all $n^2$ entries to keep $n$ of them.
# </details>
#
# ---
# **Next:** [02 — Mean and variance of q·k](02_mean_and_variance.ipynb)
