# %% [markdown]
# # Dot products and notation
#
# Attention starts with $QK^\top$: every query dotted with every key.
#
# **Learning goals**
# - Compute $q\cdot k$ as a sum of products, by hand and with numpy (`@`).
# - Read $QK^\top$ as the table of every query–key dot product, shapes included.
# - Tell apart $A\circ B$, the row-wise dot product and $\langle A, B\rangle_F$, and see how they nest.
# - See that the dot products of random vectors spread like $\sqrt{d_k}$, as a sum and as lengths times a cosine.
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
from sdpa_helpers import dot_products, make_rng, variance
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import dot_products as dot_products_plots
from sdpa_helpers.sampling import sample_components, sample_dot_products
from sdpa_helpers.verify import verify, verify_close

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
# Multiply the matching components, add the products. In numpy, `q @ k` computes it (so do
# `np.dot(q, k)` and `np.sum(q * k)`). Against a plain loop:

# %%
q = np.array([1, 2, 3])
k = np.array([4, -5, 6])
by_loop = sum(q[i] * k[i] for i in range(len(q)))  # the definition, term by term
print("products q_i k_i:", (q * k).tolist(), "| loop:", by_loop, "| q @ k:", q @ k)
verify("q @ k = np.dot(q, k) = np.sum(q * k) = the loop", by_loop == q @ k == np.dot(q, k) == np.sum(q * k))

# %% [markdown] predict_answer=["2 in 5", "two in five", "2 times in 5", "two times in five", "a third", "1 / 3", "1/3", "0.4"]
# Geometrically $q\cdot k = \lVert q\rVert\,\lVert k\rVert \cos\theta$, with $\lVert q\rVert$ the length
# and $\theta$ the angle between the vectors: positive when they point the same way, 0 when
# perpendicular, negative when they point apart: a score of how well a query matches a key.
#
# ## 2. How to see that the spread grows with the dimension
#
# A first attempt: three pairs worked by hand in 2 dimensions and three in 3, and the spreads
# of the two sets compared. Such pairs are poor evidence: the spread reflects the picks,
# and all-positive components make the *mean* grow too (real queries and keys have both signs).
#
# **Predict:** draw three random pairs (standard normal components) in 2-d and three in 3-d,
# many times over. How often does the 3-d set come out *less* spread: almost never, about 1 time
# in 10, or about 2 in 5?

# %%
hand_2d = [([1, 2], [2, 3]), ([1, 4], [5, 6]), ([8, 9], [10, 2])]
hand_3d = [([1, 2, 3], [3, 2, 1]), ([3, 4, 5], [6, 7, 8]), ([10, 9, 11], [8, 7, 6])]
dots_2d, dots_3d = (np.array([np.dot(a, b) for a, b in hand]) for hand in (hand_2d, hand_3d))
print(f"by hand: 2-d {dots_2d.tolist()}, std {dots_2d.std():.1f} | 3-d {dots_3d.tolist()}, std {dots_3d.std():.1f}")
reps = 20_000
std = {d: sample_dot_products(d, 3 * reps, rng=rng).reshape(reps, 3).std(axis=1) for d in (2, 3)}  # (reps,) each
print(f"random: the 3-d set is less spread than the 2-d set in {np.mean(std[3] < std[2]):.1%} of {reps} tries")

# %% [markdown]
# By hand the 3-d set spreads about twice as much; random triples point the other way about two
# times in five. Sound evidence is the *distribution* of many random dot products, at many
# $d_k$ (section 5).
#
# ## 3. $QK^\top$: the table of every query–key dot product
#
# Stack $n_q$ queries as the rows of $Q$ and $n_k$ keys as the rows of $K$. Entry $(i, j)$
# of $QK^\top$ is query $i$ dotted with key $j$:
#
# $$(QK^\top)_{ij} = q_i\cdot k_j, \qquad
# \underbrace{(n_q, d_k)}_{Q} \;@\; \underbrace{(d_k, n_k)}_{K^\top} \;\to\; (n_q, n_k).$$
#
# The inner dimension $d_k$ is summed away. Three queries and five keys of length 4, small
# integers you can check by hand:

# %% alt="Heatmap of Q K-transpose, 3 queries by 5 keys, each cell labelled with its integer dot product: row q1 is -8, -1, 5 (the largest, bright yellow), -6, -1; row q2 is -6, -2, 2, -5, 0; row q3 is -2, -9 (the smallest), 2, -5, 1."
Q = rng.integers(-3, 4, size=(3, 4))  # (n_q, d_k)
K = rng.integers(-3, 4, size=(5, 4))  # (n_k, d_k)
print("Q =", Q.tolist(), "\nK =", K.tolist())
table = np.array([[Q[i] @ K[j] for j in range(len(K))] for i in range(len(Q))])  # the definition
verify(f"Q @ K.T, {Q.shape} @ {K.T.shape} -> {(Q @ K.T).shape}, equals the double loop",
       np.array_equal(table, Q @ K.T))
dot_products_plots.score_table(Q, K, decimals=0).figure

# %% [markdown]
# Row $i$ holds query $i$ against every key: the row the softmax turns into attention
# weights. For 1-D and 2-D arrays `np.dot` and `@` agree (deep dive: where they differ).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: `np.dot` and `@` on scalars and on stacks of matrices
#
# They part ways in two cases. A plain number: `np.dot(2, Q)` multiplies every entry by 2,
# while `2 @ Q` raises an error (`@` is matrix multiplication, and a number has no axis to
# sum over). Stacks of matrices (3-D arrays and up, as with several heads at once): `@`
# multiplies the stacks pair by pair; `np.dot` multiplies *every* matrix of the first stack
# with *every* matrix of the second:

# %% tags=["deep-dive"]
g = make_rng(102)  # the deep dive's own stream: the main line never depends on it
verify("np.dot(Q, K.T) == np.matmul(Q, K.T) == Q @ K.T for 2-D arrays",
       np.array_equal(np.dot(Q, K.T), Q @ K.T) and np.array_equal(np.matmul(Q, K.T), Q @ K.T))
verify("np.dot(2, Q) is 2·Q", np.array_equal(np.dot(2, Q), 2 * Q))
try:
    2 @ Q
    scalar_matmul = "returned a value"
except (ValueError, TypeError) as err:  # numpy raises ValueError: operand 0 has not enough dimensions
    scalar_matmul = f"raises {type(err).__name__}"
print(f"2 @ Q {scalar_matmul}")
verify("2 @ Q raises: @ needs at least one axis on each side", scalar_matmul.startswith("raises"))
A3 = g.standard_normal((2, 3, 4))  # a stack of two (3, 4) matrices
B3 = g.standard_normal((2, 4, 5))  # a stack of two (4, 5) matrices
print("A3 @ B3       :", (A3 @ B3).shape, "  (pair by pair)")
print("np.dot(A3, B3):", np.dot(A3, B3).shape, "(every pair of matrices)")
verify("(A3 @ B3)[a] = A3[a] @ B3[a]", all(np.allclose((A3 @ B3)[a], A3[a] @ B3[a]) for a in range(2)))
verify("np.dot(A3, B3)[a, :, b, :] = A3[a] @ B3[b]",
       all(np.allclose(np.dot(A3, B3)[a, :, b, :], A3[a] @ B3[b]) for a in range(2) for b in range(2)))

# %% [markdown]
# ## 4. Hadamard, row-wise dot, Frobenius: how they nest
#
# Take two matrices $A$, $B$ of the same shape $(n, d)$, with rows $a_i$ and $b_i$.
#
# | name | formula | shape | numpy |
# |---|---|---|---|
# | Hadamard product | $(A\circ B)_{ij} = A_{ij} B_{ij}$ | $(n, d)$ | `A * B` |
# | row-wise dot product | $a_i\cdot b_i = \sum_j (A\circ B)_{ij}$ | $(n,)$ | `(A * B).sum(axis=1)` |
# | Frobenius product | $\langle A, B\rangle_F = \sum_i a_i\cdot b_i$ | one number | `(A * B).sum()` |
#
# Each sums the previous one over one more axis. Beware: some texts write the Frobenius
# product as $A\cdot B$ (one number), others write $Q\cdot K^\top$ for the *matrix* product
# $QK^\top$ (a table). This course writes $\langle A, B\rangle_F$ and $QK^\top$ (deep dive: the
# three on small integers, drawn).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: Hadamard, row-wise dot and Frobenius on small integers
#
# Two $3\times 4$ integer matrices, each step of the table computed and drawn:

# %% tags=["deep-dive"] alt="Five panels of small integer tables: A and B (3 by 4), their elementwise product A∘B (3 by 4), its row sums, the row-wise dots 3, -4, 4 (a column of 3), and their total, the Frobenius product <A, B>_F = 3 (one number)."
A = np.array([[1, -2, 0, 3], [2, 1, -1, 0], [0, 3, 1, -2]])
B = np.array([[2, 1, -1, 1], [-1, 0, 2, 3], [1, 2, 0, 1]])
print("row-wise dots:", (A * B).sum(axis=1).tolist(), "| <A, B>_F =", (A * B).sum())
verify("row-wise dots = the diagonal of A Bᵀ", np.array_equal((A * B).sum(axis=1), np.diag(A @ B.T)))
verify("<A, B>_F = sum of A ∘ B = sum of the row-wise dots", (A * B).sum() == (A * B).sum(axis=1).sum())
dot_products_plots.frobenius_nesting(A, B, decimals=0)

# %% [markdown]
# ## 5. Random vectors: the spread grows with $d_k$
#
# Think of the components of $q$ and $k$ as independent random numbers with mean 0 and
# variance 1 (notebook 08 asks when that is true). The spread, measured over 1000 standard
# normal pairs per $d_k$ (`sample_dot_products` returns their row-wise dots, section 4); each check allows for the simulation's own run-to-run wobble (deep dive below):

# %% alt="Two panels against d_k from 1 to 4096 on a log axis. Left: clouds of 1000 random dot products per d_k, centred on 0, widening between dotted curves at plus and minus 2 sqrt(d_k) (about ±128 at 4096). Right: log-log plot of their standard deviation, the dots on the dotted line sqrt(d_k), slope 1/2, from 1 at d_k = 1 to 64 at d_k = 4096."
d_ks, n_pairs = [1, 4, 16, 64, 256, 1024, 4096], 1000
dots = {d_k: sample_dot_products(d_k, n_pairs, rng=rng) for d_k in d_ks}  # (n_pairs,) each
for d_k, s in dots.items():
    spread, noise = dot_products.std_with_se(s)  # the measured std, and how much it wobbles run to run
    verify(f"std of q·k at d_k = {d_k}: {spread:.3g}, matches √d_k = {np.sqrt(d_k):.3g} within simulation noise",
           abs(spread - np.sqrt(d_k)) <= 4 * noise)
verify("section 2's output, checked here so that its code does not answer its Predict: random triples came out "
       "less spread in 3-d about 2 times in 5 (0.35 to 0.45)", 0.35 < np.mean(std[3] < std[2]) < 0.45)
dot_products_plots.spread_growth(dots)

# %% [markdown]
# Slope ½ on log axes. The $d_k$ products $q_i k_i$, each of size about 1 and either sign, partly
# cancel like the steps of a random walk; notebook 02 proves $\mathrm{Var}(q\cdot k) = d_k$.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how "within simulation noise" is decided
#
# A standard deviation $s$ measured from $n$ random draws wobbles from run to run. Its typical
# wobble, the *standard error* (SE; notebooks 02 and 03 build it up), is about
# $\sqrt{(m_4 - s^4)/n}\,/\,(2s)$, with $m_4$ the mean fourth power of the deviations from the
# mean (`dot_products.std_with_se`). A check line passes when the measurement lies within 4 SE
# of the theory. Section 5's measurements, in SE:

# %% tags=["deep-dive"]
for d_k, s in dots.items():
    spread, se = dot_products.std_with_se(s)
    m4 = np.mean((s - s.mean()) ** 4)
    verify_close(f"SE at d_k = {d_k} = √((m4 − s⁴)/n)/(2s)", se, np.sqrt((m4 - spread**4) / s.size) / (2 * spread), rtol=0.01)
    verify_close(f"std of q·k at d_k = {d_k}", spread, np.sqrt(d_k), se=se)

# %% [markdown] predict_answer=["shrinks", "stays", "concentrate", "concentrates"]
# ## 6. The same result, seen as lengths and an angle
#
# A second route: $q\cdot k = \lVert q\rVert\,\lVert k\rVert\cos\theta$, for independent standard
# normal components. Lengths grow with $d_k$ and cosines shrink, so we plot them rescaled:
# $\lVert q\rVert/\sqrt{d_k}$ and $\sqrt{d_k}\cos\theta$.
#
# **Predict:** as $d_k$ grows, does the spread of $\lVert q\rVert/\sqrt{d_k}$ shrink, stay or grow? And of $\sqrt{d_k}\cos\theta$?

# %% alt="Three panels of histograms for d_k = 4, 16, 256 and 1024. Left: the length ‖q‖/sqrt(d_k), wide at d_k = 4 (0 to 2) and a narrow spike at 1 by d_k = 1024. Middle: sqrt(d_k) cos θ, the same width (variance 1) at every d_k, a flat-topped dome confined to ±2 at d_k = 4 and a normal curve from 256 on. Right: q·k/sqrt(d_k), variance 1 at every d_k; at d_k = 4 peakier than the normal curve (excess kurtosis +1.37 measured, 6/d_k = 1.5 in theory), close to it from 256 on."
parts = {}
for d_k in (4, 16, 256, 1024):
    qs, ks = sample_components((5000, d_k), rng=rng), sample_components((5000, d_k), rng=rng)
    norm_q, norm_k = np.linalg.norm(qs, axis=1), np.linalg.norm(ks, axis=1)  # lengths ‖q‖, ‖k‖: (5000,)
    cos = (qs * ks).sum(axis=1) / (norm_q * norm_k)  # row-wise dots (section 4) over the lengths
    parts[d_k] = {"norm": norm_q / np.sqrt(d_k), "cos": np.sqrt(d_k) * cos, "dot": norm_q * norm_k * cos / np.sqrt(d_k)}
    st = variance.sample_summary(parts[d_k]["cos"])  # sample variance with its standard error
    theory_var = d_k * dot_products.cosine_moments(d_k).var
    verify(f"d_k = {d_k:4d}: Var(√d_k cos θ) = {st['var']:.3f}, matches its closed form {theory_var:.3f} within simulation noise",
           abs(st["var"] - theory_var) <= 4 * st["se_var"])
dot_products_plots.geometric_picture(parts)

# %% [markdown]
# The spread of the lengths shrinks: they concentrate around 1 (left), as $\lVert q\rVert^2 = \sum_i q_i^2$
# has mean $d_k$ and a relative spread shrinking like $1/\sqrt{d_k}$. The scaled cosine's spread
# stays (variance 1 at every $d_k$, middle); its *shape* does not: at $d_k = 4$ its values,
# confined to $[-2, 2]$ (as $\lvert\cos\theta\rvert \le 1$), form a flat dome, not a bell.
# Why $\mathrm{Var}(\cos\theta) = 1/d_k$: the unit vector $q/\lVert q\rVert$ has $d_k$ squared
# coordinates summing to 1, and by symmetry they share it equally (deep dive).
#
# So $q\cdot k \approx \sqrt{d_k}\cdot\sqrt{d_k}\cdot\cos\theta$ has spread $\sqrt{d_k}$ at every
# $d_k$ (right). This route is exact for normal components (deep dive) and approximate otherwise;
# notebook 02 shows the spread is exactly $\sqrt{d_k}$ for any such components. The shape is normal
# only for large $d_k$: at $d_k = 4$ the product is *peakier* than normal (the deep dive below
# measures how much).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how far from normal — the excess kurtosis
#
# The **excess kurtosis** measures shape: 0 for the normal curve, negative for a flatter top with
# shorter tails, positive for a sharper peak with longer tails. Theory: the cosine's is $-1$ at
# $d_k = 4$; each product $q_ik_i$ has mean fourth power 9, an excess kurtosis of 6, and a sum of
# $d_k$ independent ones has $6/d_k$. Measured on section 6's samples of $n = 5000$, for the cosine and
# for $q\cdot k$. Each standard error (±) is measured: draw 30 fresh samples of $n = 5000$ pairs,
# compute the excess kurtosis of each, and take the standard deviation of the 30 values (itself
# uncertain by about 13 %). The textbook $\sqrt{24/n} = 0.07$ holds only for a normal shape; the
# peakier $q\cdot k$ at small $d_k$ wobbles several times more.

# %% tags=["deep-dive"]
g = make_rng(103)  # the deep dive's own stream, for the 30 repeated samples


def kurt_se(d_k, repeats=30, n=5000):  # SD over repeated samples of the excess kurtosis: (cosine, q·k)
    kurts = []
    for _ in range(repeats):
        u, v = sample_components((n, d_k), rng=g), sample_components((n, d_k), rng=g)
        dot = (u * v).sum(axis=1)
        cos = dot / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
        kurts.append([variance.sample_summary(cos)["kurt"], variance.sample_summary(dot)["kurt"]])
    return np.std(kurts, axis=0, ddof=1)


for d_k, part in parts.items():
    k_cos, k_dot = variance.sample_summary(part["cos"])["kurt"], variance.sample_summary(part["dot"])["kurt"]
    se_cos, se_dot = kurt_se(d_k)
    print(f"d_k = {d_k:4d}: cosine {k_cos:+.2f} ± {se_cos:.2f} (theory {dot_products.cosine_excess_kurtosis(d_k):+.3f}), "
          f"q·k {k_dot:+.2f} ± {se_dot:.2f} (theory 6/d_k = {6 / d_k:+.3f})")

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why $\mathrm{Var}(\cos\theta) = 1/d_k$, and why the route is exact for normal components
#
# Turn the axes so $k$ lies along the first one; then $\cos\theta = u_1$, the first coordinate of
# the unit vector $u = q/\lVert q\rVert$. Every direction of $u$ is equally likely: the chance of
# $q$ landing near a point is proportional to $e^{-q_1^2/2}\cdots e^{-q_{d_k}^2/2} = e^{-\lVert q\rVert^2/2}$
# (one normal curve per component), a function of its length, not its direction. So by symmetry
# each coordinate has the same mean square, and the $d_k$ squares sum to 1:
# $\mathrm{E}[u_1^2] = 1/d_k$ (the mean is 0). The result holds beyond the normal: for any
# independent, identically distributed components symmetric about 0, flipping signs gives
# $\mathrm{E}[u_iu_j] = 0$ for $i \ne j$ and swapping coordinates gives $\mathrm{E}[u_i^2] = 1/d_k$,
# so $\mathrm{E}[\cos^2\theta] = \sum_i \mathrm{E}[u_i^2]\,\mathrm{E}[v_i^2] = 1/d_k$, with $v$ the
# unit vector of $k$.
#
# For components that are independent standard normal, the direction $u = q/\lVert q\rVert$
# is uniform on the sphere and independent of the length $\lVert q\rVert$ (and likewise for
# $k$). With section 6's $\mathrm{Var}(\cos\theta) = 1/d_k$,
# $\mathrm{Var}(q\cdot k) = E\lVert q\rVert^2\,E\lVert k\rVert^2\,\mathrm{Var}(\cos\theta)
# = d_k\cdot d_k\cdot \tfrac1{d_k} = d_k$ exactly, the same answer as notebook 02's sum of
# products. For other component distributions the length and the direction are not
# independent, and this route is an approximation for large $d_k$; the sum of products
# (notebook 02) still gives $d_k$ exactly. Notebook 08's QK-norm, which rescales every query and
# key to a fixed length, keeps only $\cos\theta$. The variance of $\sqrt{d_k}\cos\theta$ at
# $d_k = 256$, over five seeds:

# %% tags=["deep-dive"]
var_cos = []
for seed in range(5):
    g = make_rng(seed)
    u, v = sample_components((5000, 256), rng=g), sample_components((5000, 256), rng=g)
    cos = (u * v).sum(axis=1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
    var_cos.append(256 * cos.var())
print(f"d_k·Var(cos θ) over 5 seeds: median {np.median(var_cos):.3f}, range {min(var_cos):.3f} to {max(var_cos):.3f}")
verify_close("d_k·Var(cos θ) at d_k = 256, mean of 5 seeds", np.mean(var_cos),
             256 * dot_products.cosine_moments(256).var, se=np.sqrt(2 / 5000 / 5))

# %% [markdown]
# ## Summary
#
# - $q\cdot k = \sum_i q_i k_i = \lVert q\rVert\,\lVert k\rVert\cos\theta$; `q @ k` computes it.
# - $QK^\top$ is the table of every query–key dot product, one row per query, one column per key.
# - The Hadamard product, the row-wise dots and the Frobenius product sum over no axis, one axis and both; other texts use one dot for two products.
# - Three hand-picked pairs cannot show how a spread grows (random triples point the wrong way 2 times in 5); many random pairs can.
# - For independent components of mean 0 and variance 1, $q\cdot k$ spreads like $\sqrt{d_k}$; lengths near $\sqrt{d_k}$ times a cosine of variance $1/d_k$ give the same.
#
# ## Exercises
#
# Check each answer with `check(key, answer)`: a number must match the exact value rounded to three
# significant figures; an integer must be exact.
#
# **Exercise 1.** Compute $[2, -1, 3]\cdot[4, 0, -2]$ by hand (an integer).

# %%
_ = check("01.hand_dot", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# $2\cdot 4 + (-1)\cdot 0 + 3\cdot(-2) = 8 + 0 - 6 = 2$. In code: `np.array([2, -1, 3]) @ np.array([4, 0, -2])`.
# </details>
#
# **Exercise 2.** $Q$ has shape $(5, 64)$ and $K$ has shape $(7, 64)$. What is the shape
# of `Q @ K.T`? Answer as a tuple of integers.

# %%
_ = check("01.qk_shape", None)  # replace None with a tuple, e.g. (1, 2)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $(5, 64) @ (64, 7) \to (5, 7)$: one row per query, one column per key; $d_k = 64$ is summed away.
# </details>
#
# **Exercise 3 (conceptual).** $q$ and $k$ have $d_k = 256$ independent standard normal
# components. Without simulating: what is the standard deviation of $\cos\theta$, the
# cosine of the angle between them (three significant figures)?

# %%
_ = check("01.cos_spread", None)  # replace None with your answer, then run the cell

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(\cos\theta) = 1/d_k$, so the standard deviation is $1/\sqrt{256} = 1/16 = 0.0625$.
# Check: the spread of $q\cdot k$ is $\sqrt{d_k} = 16$ and the lengths are about $16$ each,
# so $\cos\theta$ spreads like $16 / (16\cdot 16)$.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 4 (conceptual).** Explain: a friend picks three pairs of vectors with components from 1
# to 10 in 2 dimensions and three in 5 dimensions, and finds the 5-d dot products larger
# and more spread out. Name three reasons this does not show that the spread of $q\cdot k$
# grows like $\sqrt{d_k}$, and design a test that would.
#
# <details><summary>Solution</summary>
#
# (1) All-positive components make every product positive, so the *mean* grows like $d_k$:
# "larger" comes from the mean and says nothing about the spread; attention vectors have
# components of both signs. (2) The standard deviation of three numbers is very noisy
# (section 2: with three random pairs each, 2-d against 3-d, the comparison points the
# wrong way about two times in five), and hand-picked numbers reflect the picker as much
# as $d_k$. (3) Two values of $d_k$ and three points each cannot tell $\sqrt{d_k}$ from
# $d_k$ or any other growth. A test: draw a thousand or more random pairs with mean-0
# components at several $d_k$, measure the standard deviation with its standard error,
# and compare with $\sqrt{d_k}$ (section 5).
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5.** For $A = \begin{bmatrix}1 & -2\\ 3 & 0\end{bmatrix}$ and
# $B = \begin{bmatrix}2 & 1\\ -1 & 5\end{bmatrix}$, compute $\langle A, B\rangle_F$ (an integer).

# %% tags=["deep-dive"]
_ = check("01.frobenius", None)  # replace None with your answer, then run the cell

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $A\circ B = \begin{bmatrix}2 & -2\\ -3 & 0\end{bmatrix}$; the row-wise dots are $0$ and $-3$;
# their sum is $\langle A, B\rangle_F = -3$. In code: `np.sum(A * B)`, or `np.trace(A.T @ B)` (the trace is the sum of the diagonal).
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 6.** Write `rowwise_dot(A, B)`: for $A$, $B$ of shape $(n, d)$ it returns the
# $n$ dot products $a_i\cdot b_i$, shape $(n,)$, without computing the full table $AB^\top$.

# %% tags=["deep-dive"]
def rowwise_dot(A, B):
    ...  # your code here: return an array of shape (n,)


_ = check("01.rowwise_dot", rowwise_dot)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def rowwise_dot(A, B):
#     return (np.asarray(A) * np.asarray(B)).sum(axis=1)   # Hadamard, then sum over columns
# ```
# `np.einsum("ij,ij->i", A, B)` is the same. `np.diag(A @ B.T)` gives the same numbers
# but computes all $n^2$ entries to keep $n$ of them (the checker notices the memory it takes).
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [02 — Mean and variance of q·k](02_mean_and_variance.ipynb)
