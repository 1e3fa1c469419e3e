# %% [markdown]
# # Small experiments mislead
#
# Notebook 02 derived that each entry of $QK^\top$ has variance $d_k$ when the components of
# $q$ and $k$ are independent with mean 0 and variance 1. A learner who checks this with a
# tiny experiment can get a number that looks wrong. This notebook explains why, and shows
# how large an experiment must be before it can be trusted.
#
# **Learning goals**
# - Reproduce the 2×2 experiment that gave 1.6 instead of 2, and see that a sample variance is itself a random variable.
# - Know what `np.var` computes (`ddof=0`) and what each estimator gives on average.
# - Predict how fast the spread of a sample variance shrinks as the matrices grow, and why shared rows and columns slow it down.
# - Run the bigger 1111×111 @ 111×1111 experiment and judge its result with a standard error.
#
# **Prerequisites**
# - Notebook 02: $\mathrm{Var}(q\cdot k) = d_k$ for independent unit-variance components.
# - The sample mean and the sample variance of a list of numbers.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import OKABE_ITO, new_figure
from sdpa_helpers.plots import small_experiments as sx_plots
from sdpa_helpers.sampling import sample_matmul_variances
from sdpa_helpers.widgets.small_experiments import SIZES, VarianceSpreadExplorer, relative_sample_variances

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The experiment that gave 1.6
#
# A learner asked on AI Stack Exchange why $QK^\top$ should have variance $d_k$
# ([question 21237](https://ai.stackexchange.com/questions/21237)). To check, they multiplied
# two 2×2 matrices of standard normal numbers and took the variance of the four entries of
# the product. Each entry is a sum of $d_k = 2$ products of unit variance, so theory says 2.
# They got **1.6**.
#
# Their code was posted as a screenshot, so we cannot know exactly what they ran. Here is
# the most natural version, with numpy's `np.var`, for ten seeds:

# %%
def two_by_two(seed):
    """np.var of the 4 entries of A @ B, for 2x2 standard normal A and B drawn with this seed."""
    g = make_rng(seed)
    A = g.standard_normal((2, 2))
    B = g.standard_normal((2, 2))
    return np.var(A @ B)  # (2, 2) @ (2, 2) -> (2, 2); np.var pools all 4 entries


first_ten = [two_by_two(seed) for seed in range(10)]
for seed, v in enumerate(first_ten):
    print(f"seed {seed}: np.var(A @ B) = {v:.2f}")
print(f"smallest {min(first_ten):.2f}, largest {max(first_ten):.2f}")

# %% [markdown]
# Ten seeds, ten very different answers, from 0.05 to 10.55. None of them is 2. We searched
# the seeds in order for the first one that gives the learner's number:

# %%
seed_16 = next(s for s in range(1000) if round(two_by_two(s), 1) == 1.6)
print(f"seed {seed_16}: np.var(A @ B) = {two_by_two(seed_16):.3f}, which rounds to 1.6")

# %% [markdown]
# So 1.6 is no bug, and 2 is not wrong either. One run of the experiment gives *one draw* of a
# random quantity: the sample variance of four random numbers. To see what to expect, repeat
# the experiment many times.
#
# ## 2. A sample variance is a random variable
#
# For $m$ numbers $x_1,\dots,x_m$ with mean $\bar x$, the sample variance is
#
# $$s^2 = \frac{1}{m - \text{ddof}} \sum_{a=1}^{m} (x_a - \bar x)^2 .$$
#
# `np.var` divides by $m$ (`ddof=0`) unless told otherwise; `ddof=1` divides by $m-1$.
# Libraries differ here (PyTorch's `torch.var` divides by $m-1$), so check the default.

# %%
x = np.array([1.0, 2.0, 4.0, 7.0])
by_hand_0 = ((x - x.mean()) ** 2).sum() / 4
by_hand_1 = ((x - x.mean()) ** 2).sum() / 3
assert np.isclose(np.var(x), by_hand_0) and np.isclose(np.var(x, ddof=1), by_hand_1)
print(f"np.var(x) = {np.var(x):.3f} = sum / m;  np.var(x, ddof=1) = {np.var(x, ddof=1):.3f} = sum / (m - 1)")

# %% [markdown]
# Now repeat the 2×2 experiment 100 000 times and keep both estimators of every run (the
# same draws: the `ddof=1` value is always 4/3 of the `ddof=0` value).

# %%
n_reps = 100_000
s2_ddof0 = sample_matmul_variances(2, n_reps, ddof=0, rng=SEED)  # (n_reps,): np.var of each 2x2 product
s2_ddof1 = sample_matmul_variances(2, n_reps, ddof=1, rng=SEED)  # the same products, divided by m - 1
assert np.allclose(s2_ddof1, s2_ddof0 * 4 / 3)
fig, axes = new_figure(1, 2, figsize=(10, 3.4), sharey=True)
sx_plots.variance_histogram(s2_ddof0, 2.0, ax=axes[0], color=OKABE_ITO["orange"], label="np.var (ddof=0)")
sx_plots.variance_histogram(s2_ddof1, 2.0, ax=axes[1], label="ddof=1")
axes[0].set_title("np.var, ddof=0: divide by m = 4")
axes[1].set_title("ddof=1: divide by m - 1 = 3")
fig

# %% [markdown]
# The histograms are wide and lopsided: the most common outcome is close to 0, and a long
# tail reaches far beyond the true value 2. Some numbers:

# %%
for name, s2 in (("ddof=0", s2_ddof0), ("ddof=1", s2_ddof1)):
    p10, p50, p90 = np.percentile(s2, [10, 50, 90])
    print(f"{name}: mean {s2.mean():.3f}, median {p50:.3f}, 10% of runs below {p10:.3f}, 10% above {p90:.3f}")
    print(f"        runs at or below 1.6: {np.mean(s2 <= 1.6):.1%};  runs within ±10% of 2: "
          f"{np.mean(np.abs(s2 - 2) <= 0.2):.1%}")

# %% [markdown]
# Two things stand out.
#
# - **The spread.** Only about one run in twenty lands within ±10% of the true value, and half
#   the `np.var` runs give less than 0.76. A value of 1.6 is entirely ordinary: 71% of the
#   `np.var` runs give 1.6 or less.
# - **The means differ.** `np.var` averages about 1.5, not 2. Here is why. For $m$ values
#   with a common mean $\mu$ and variance $\sigma^2$ that are *uncorrelated*,
#   $\mathrm{Var}(\bar x) = \sigma^2/m$, and
#
# $$\mathbb{E}\Big[\sum_a (x_a - \bar x)^2\Big] = \sum_a \mathbb{E}[(x_a-\mu)^2] - m\,\mathbb{E}[(\bar x-\mu)^2]
#   = m\sigma^2 - \sigma^2 = (m-1)\,\sigma^2 .$$
#
# Dividing by $m - 1$ gives $\sigma^2 = 2$ on average; dividing by $m$ (what `np.var` does)
# gives $\frac{m-1}{m}\sigma^2 = \frac34 \cdot 2 = 1.5$. (The entries of $AB$ are indeed
# uncorrelated: section 6 shows why, and checks it.) The closed forms are in `theory.matmul_sample_variance_moments`;
# the simulated means agree within 4 standard errors (SE = standard deviation / $\sqrt{\text{runs}}$):

# %%
for ddof, s2 in ((0, s2_ddof0), (1, s2_ddof1)):
    expected = theory.matmul_sample_variance_moments(2, 2, ddof=ddof).mean
    se = s2.std(ddof=1) / np.sqrt(s2.size)
    print(f"ddof={ddof}: simulated mean {s2.mean():.3f} ± {se:.3f} (1 SE), theory {expected:.3f}")
    assert abs(s2.mean() - expected) < 4 * se

# %% [markdown]
# So if the learner used `np.var`, the number they should have expected on average was 1.5,
# and their 1.6 is close to it. But with a spread this wide, one run cannot tell the two
# estimators apart, let alone confirm or refute the theory.
#
# ## 3. How wide? The formula for independent values, and why it misses
#
# The main line of this section: the textbook formula for the spread of a sample variance
# assumes independent values, and here it predicts a spread that is clearly too small. The
# formulas are given so that you can check the numbers; the exact one has an optional derivation.
#
# For $m$ **independent** values with variance $\sigma^2$ and excess kurtosis
# $\kappa = \mathbb{E}[(x-\mu)^4]/\sigma^4 - 3$, the unbiased sample variance has
#
# $$\mathrm{Var}(s^2) = \sigma^4\left(\frac{2}{m-1} + \frac{\kappa}{m}\right)
# \qquad(\texttt{theory.sample\_variance\_moments}).$$
#
# An entry of $AB$ is a sum of $d$ products of independent standard normals. One product has
# $\mathbb{E}[(xy)^4] = 3\cdot 3 = 9$, so excess kurtosis 6; a sum of $d$ independent terms
# divides the excess kurtosis by $d$: $\kappa = 6/d = 3$ for $d = 2$. Equivalently
# $\mathbb{E}[C_{ij}^4] = (3 + \kappa)\,\sigma^4 = 6 \cdot 4 = 24$. A check by simulation:

# %%
d = 2
kappa = theory.dot_product_excess_kurtosis(d)
A = rng.standard_normal((n_reps, 2, d))
B = rng.standard_normal((n_reps, d, 2))
entries = (A @ B).ravel()  # (n_reps, 2, 2) -> (4 n_reps,)
fourth = entries**4
se = fourth.std(ddof=1) / np.sqrt(fourth.size)
print(f"excess kurtosis of one entry: {kappa:.1f}")
print(f"E[C_ij^4]: simulated {fourth.mean():.2f} ± {se:.2f} (1 SE), theory (3 + κ) σ⁴ = {(3 + kappa) * d**2:.2f}")
assert abs(fourth.mean() - (3 + kappa) * d**2) < 4 * se

# %% [markdown]
# Put $m = 4$, $\sigma^2 = 2$, $\kappa = 3$ into the formula and compare with the spread of
# the 100 000 runs. The standard error of a simulated variance $v$ of $R$ runs is
# $\sqrt{(\mu_4 - v^2)/R}$, with $\mu_4$ their fourth central moment:

# %%
iid = theory.sample_variance_moments(4, var=2.0, excess_kurtosis=kappa)
exact = theory.matmul_sample_variance_moments(2, 2)


def variance_with_se(values):
    """Sample variance of ``values`` and its standard error sqrt((mu_4 - v^2) / R)."""
    v = values.var(ddof=1)
    mu4 = np.mean((values - values.mean()) ** 4)
    return v, np.sqrt((mu4 - v**2) / values.size)


v, se_v = variance_with_se(s2_ddof1)
print(f"Var(s²): simulated {v:.2f} ± {se_v:.2f} (1 SE)")
print(f"         i.i.d. formula {iid.var:.2f}  ({abs(v - iid.var) / se_v:.0f} SE away)")
print(f"         exact formula  {exact.var:.2f}  ({abs(v - exact.var) / se_v:.1f} SE away)")
assert abs(v - exact.var) < 4 * se_v and abs(v - iid.var) > 10 * se_v

# %% [markdown]
# The i.i.d. formula is far off, because **the four entries are not independent**: $C_{11}$
# and $C_{12}$ share row 1 of $A$, and $C_{11}$ and $C_{21}$ share column 1 of $B$. They are
# uncorrelated, which is all the *mean* of $s^2$ needed, but the *spread* of $s^2$ depends on
# fourth moments, and there the shared rows and columns matter.
#
# For $A$ of shape $(n, d)$ and $B$ of shape $(d, p)$ with independent standard normal
# entries, and $m = np$ entries, the exact result is
#
# $$\mathrm{Var}(s^2) = \frac{2d^2}{m-1} + \frac{d\,\big(2(n+p+1)(np-2) + 6\big)}{(m-1)^2}
# \qquad(\texttt{theory.matmul\_sample\_variance\_moments}),$$
#
# which gives $76/9 \approx 8.44$ for the 2×2 case, as simulated above.
#
# <details><summary>Derivation (optional)</summary>
#
# Write $(m-1)s^2 = x^\top P x$ with $x$ the $m$ entries and $P = I - \frac1m \mathbf 1\mathbf 1^\top$.
# For mean-0 $x$ with covariance $\Sigma$, $\mathrm{Var}(x^\top P x) = 2\,\mathrm{tr}(P\Sigma P\Sigma)
# + \sum_{abce} P_{ab}P_{ce}\,\kappa_{abce}$, where $\kappa_{abce}$ is the joint fourth cumulant.
# Here $\Sigma = d\,I$, so the first term is $2d^2(m-1)$. By Isserlis' theorem (Wick pairings)
# the fourth cumulant of entries $C_{i_1j_1},\dots,C_{i_4j_4}$ is $d$ times the number of
# ordered pairs $(\pi, \sigma)$ of *different* pairings of $\{1,2,3,4\}$ such that $\pi$ pairs
# equal row indices and $\sigma$ pairs equal column indices. Counting those over the four
# terms of $P_{ab}P_{ce} = (\delta_{ab}-\tfrac1m)(\delta_{ce}-\tfrac1m)$ gives
# $d\,\big(2(n+p+1)(np-2)+6\big)$; divide by $(m-1)^2$. (Four copies of one entry match
# under all 6 ordered pairs: fourth cumulant $6d$, excess kurtosis $6d/d^2 = 6/d$, as above.)
# The tests of `sdpa_helpers` check the count against brute-force enumeration and the
# formula against Monte Carlo.
# </details>
#
# ## 4. Bigger matrices, smaller spread
#
# Now let both matrices be $n\times n$. Each entry of the product is a sum of $n$ products,
# so its variance is $n$, and we look at $s^2/n$, whose true value is 1. (It is also the
# sample variance of $AB/\sqrt n$: the *scaled* logits.) The simulation repeats the experiment
# many times for small $n$ and fewer times for large $n$, where the spread is small anyway.
# The "effective number" $m_\text{eff}$ is how many *independent* entries would give an
# equally precise $s^2$ (`theory.effective_sample_size`).

# %%
lines = [" n    entries m   runs   mean s²/n   SD simulated      SD exact   SD i.i.d.   m_eff   m_eff/m"]
for n in SIZES:
    r = relative_sample_variances(n)  # s²/n of n x n products, one per run (cached)
    v, se_v = variance_with_se(r)
    sd, se_sd = np.sqrt(v), se_v / (2 * np.sqrt(v))  # delta method: SE(sd) = SE(var) / (2 sd)
    exact = theory.matmul_sample_variance_moments(n, n)
    sd_exact = exact.std / n
    sd_iid = sx_plots.iid_relative_sd([n])[0]
    m_eff = theory.effective_sample_size(exact.var, var=n, excess_kurtosis=theory.dot_product_excess_kurtosis(n))
    lines.append(f"{n:3d} {n * n:11d} {r.size:6d} {r.mean():11.3f}   {sd:.4f} ± {se_sd:.4f}   {sd_exact:.4f}"
                 f"      {sd_iid:.4f}  {m_eff:7.0f}     {m_eff / n**2:.2f}")
    assert abs(sd - sd_exact) < 4 * se_sd
print("\n".join(lines))

# %% [markdown]
# Every simulated spread agrees with the exact formula within 4 standard errors. The spread
# falls like $1/n$ (that is $1/\sqrt{m}$), but for large $n$ it stays about $\sqrt3 \approx 1.7$
# times above the i.i.d. formula: the $n^2$ entries of one product are worth only about
# $n^2/3$ independent ones. Here are the histograms at a few sizes, on a common axis:

# %%
fig = sx_plots.relative_spread_histograms({n: relative_sample_variances(n) for n in (2, 8, 32, 128)})
fig

# %% [markdown]
# And the spread against $n$ on log-log axes: simulation dots on the exact line, the i.i.d.
# formula below it.

# %%
sim_sd = [relative_sample_variances(n).std(ddof=1) for n in SIZES]
ax = sx_plots.spread_vs_n(SIZES, sim_sd)
ratio = (theory.matmul_sample_variance_moments(256, 256).std / 256) / sx_plots.iid_relative_sd([256])[0]
print(f"at n = 256 the exact spread is {ratio:.2f} times the i.i.d. one (√3 = {np.sqrt(3):.2f})")
ax.figure

# %% [markdown]
# The live version: drag $n$. The histogram narrows around 1, and the dot on the right walks
# down the exact line. (Every $n$ is simulated when the explorer is built, so a move only redraws.)

# %% tags=["nbval-ignore-output"]
explorer = VarianceSpreadExplorer(n=2)
explorer

# %% [markdown]
# ## 5. A bigger experiment: 1111×111 @ 111×1111
#
# The same thread discusses a bigger experiment: a $1111\times 111$ matrix times a
# $111\times 1111$ matrix. The inner dimension is $d = 111$, so every entry of the product
# has variance 111, and dividing by $\sqrt{111}$ brings it to 1. The product has
# $1111^2 = 1\,234\,321$ entries, so one run is precise; the exact formula says how precise.

# %%
g = make_rng(SEED)
A = g.standard_normal((1111, 111))
B = g.standard_normal((111, 1111))
C = A @ B  # (1111, 111) @ (111, 1111) -> (1111, 1111): each entry sums d = 111 products
s2 = C.var(ddof=1)
s2_scaled = (C / np.sqrt(111)).var(ddof=1)
exact = theory.matmul_sample_variance_moments(1111, 111, 1111)
iid = theory.sample_variance_moments(C.size, var=111.0, excess_kurtosis=theory.dot_product_excess_kurtosis(111))
print(f"{C.size} entries")
print(f"sample variance of C          : {s2:.2f}  (theory 111, exact SD {exact.std:.2f})")
print(f"sample variance of C / √111   : {s2_scaled:.4f}  (theory 1, exact SD {exact.std / 111:.4f})")
print(f"the i.i.d. formula's SD would be {iid.std:.2f}: {exact.std / iid.std:.1f} times too small")
print(f"the deviation from 111 is {abs(s2 - 111) / exact.std:.1f} exact SDs, "
      f"but would look like {abs(s2 - 111) / iid.std:.1f} SDs of the i.i.d. formula")
m_eff = theory.effective_sample_size(exact.var, var=111.0, excess_kurtosis=theory.dot_product_excess_kurtosis(111))
print(f"effective number of independent entries: {m_eff:,.0f} of {C.size:,} ({m_eff / C.size:.1%})")
assert abs(s2 - 111) < 4 * exact.std and abs(s2_scaled - 1) < 4 * exact.std / 111

# %% [markdown]
# About 111 and, after scaling, about 1, as theory says: a big experiment settles the
# question that a 2×2 one could not. Note the yardstick: judged with the i.i.d. formula,
# this run's deviation would look like a surprise of several SDs, but it is ordinary, because
# the entries share rows and columns and are worth only about 5% of their number in
# independent values.
#
# ## 6. Entries of $QK^\top$ share rows and columns
#
# In attention, $S = QK^\top$ and $S_{ij} = q_i\cdot k_j$. Two logits of the same query,
# $S_{ij}$ and $S_{ik}$ ($j\ne k$), share $q_i$. Fix $q_i$ for a moment: then $S_{ij}$ and
# $S_{ik}$ are independent (different keys), each with conditional mean 0 and
# $\mathbb{E}[S_{ij}^2 \mid q_i] = |q_i|^2$. Now average over $q_i$ with the law of total
# covariance, $\mathrm{Cov}(X, Y) = \mathbb{E}[\mathrm{Cov}(X, Y \mid q_i)]
# + \mathrm{Cov}(\mathbb{E}[X\mid q_i], \mathbb{E}[Y\mid q_i])$; the first term is 0 by the
# conditional independence. The results are *unconditional* covariances (over random queries
# and keys):
#
# - $\mathrm{Cov}(S_{ij}, S_{ik}) = 0 + \mathrm{Cov}(0, 0) = 0$: they are **uncorrelated**;
# - $\mathrm{Cov}(S_{ij}^2, S_{ik}^2) = 0 + \mathrm{Var}(|q_i|^2) = d_k\,\mathrm{Var}(z^2) = 2d_k$,
#   where $z$ is one standard normal component of $q_i$ ($\mathrm{Var}(z^2) = \mathbb{E}[z^4] - 1 = 2$;
#   $|q_i|^2$ is chi-square with $d_k$ degrees of freedom): they are **not independent**.
#   A long query makes both logits large.
#
# Their correlation divides by $\mathrm{Var}(S_{ij}^2) = \mathbb{E}[S_{ij}^4] - d_k^2
# = (3 + 6/d_k)\,d_k^2 - d_k^2 = 2d_k^2 + 6d_k$ (section 3's fourth moment), so it is
# $2d_k/(2d_k^2 + 6d_k) = 1/(d_k+3)$. A simulation with 200 000 queries, each with two keys
# (the products below have known mean $\mathbb{E}[S^2] = d_k$, so their averages estimate the covariances):

# %%
n_pairs = 200_000
pairs, lines = {}, []
for d_k in (1, 4, 16):
    g = make_rng(SEED + d_k)
    q = g.standard_normal((n_pairs, d_k))
    k_j, k_k = g.standard_normal((2, n_pairs, d_k))
    s_ij = np.einsum("nd,nd->n", q, k_j)  # (n_pairs, d_k) row-wise dot -> (n_pairs,)
    s_ik = np.einsum("nd,nd->n", q, k_k)
    pairs[d_k] = s_ij, s_ik
    prod, sq = s_ij * s_ik, (s_ij**2 - d_k) * (s_ik**2 - d_k)  # E[S²] = d_k is known
    cov, se_cov = prod.mean(), prod.std(ddof=1) / np.sqrt(n_pairs)
    cov2, se_cov2 = sq.mean(), sq.std(ddof=1) / np.sqrt(n_pairs)
    theory_cov2 = theory.shared_row_square_covariance(d_k)
    corr2 = np.corrcoef(s_ij**2, s_ik**2)[0, 1]
    lines.append(f"d_k = {d_k:2d}: Cov(S_ij, S_ik) = {cov:6.3f} ± {se_cov:.3f}   "
                 f"Cov(S_ij², S_ik²) = {cov2:6.2f} ± {se_cov2:.2f} (theory {theory_cov2:.0f})   "
                 f"corr of squares {corr2:.3f} (theory {1 / (d_k + 3):.3f})")
    assert abs(cov) < 4 * se_cov and abs(cov2 - theory_cov2) < 4 * se_cov2
print("\n".join(lines))

# %% [markdown]
# Both covariances match (within 4 standard errors), and the correlations of the squares
# are close to $1/(d_k+3)$. To *see* the dependence, sort the pairs
# by the size of one logit, $|S_{ij}|$, and measure the spread (root mean square) of the
# other logit $S_{ik}$ in each group, both divided by $\sqrt{d_k}$ so that 1 is the overall
# spread. For independent logits the curve would stay flat at 1. It
# rises: a large $|S_{ij}|$ hints at a long shared $q_i$, which makes $S_{ik}$ large too. The
# effect fades as $d_k$ grows (the relative spread of $|q_i|^2$ is $\sqrt{2/d_k}$), but at
# $d_k = 16$ it is still plain to see.

# %%
fig, ax = new_figure(figsize=(6.0, 3.8))
for d_k, colour in zip(pairs, (OKABE_ITO["orange"], OKABE_ITO["sky_blue"], OKABE_ITO["reddish_purple"])):
    sx_plots.conditional_spread(*pairs[d_k], d_k, ax=ax, color=colour)
ax.set_title("two logits of one query: uncorrelated, not independent")
fig

# %% [markdown]
# What this means for pooling: the $n_q n_k$ logits of one $QK^\top$ are not $n_q n_k$
# independent measurements. For a head with $d_k = 64$ and 128 queries and keys:

# %%
m = 128 * 128
exact = theory.matmul_sample_variance_moments(128, 64, 128)
m_eff = theory.effective_sample_size(exact.var, var=64.0, excess_kurtosis=theory.dot_product_excess_kurtosis(64))
print(f"{m} logits, worth {m_eff:.0f} independent ones for estimating their variance ({m_eff / m:.0%})")
assert m_eff < m

# %% [markdown]
# ## Summary
#
# - A sample variance is a random number. For the 4 entries of a 2×2 product it spreads so
#   widely that 1.6 (or 0.05, or 10.55) is an ordinary outcome; the theory value 2 is its
#   *average* with `ddof=1`.
# - `np.var` divides by $m$ (`ddof=0`), so on 4 uncorrelated values of variance 2 it averages
#   $\frac34\cdot 2 = 1.5$; `ddof=1` averages 2.
# - The spread shrinks like $1/n$ for $n\times n$ products, but the entries share rows and
#   columns: they are uncorrelated yet dependent ($\mathrm{Cov}(S_{ij}^2, S_{ik}^2) = 2d_k$ for two
#   logits of one query),
#   so they are worth fewer independent values, and the i.i.d. formula underestimates the spread.
# - A large experiment (1111×111 @ 111×1111) gives about 111, and about 1 after dividing by
#   $\sqrt{111}$: judge such results against a standard error, not by eye.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`; the cells start with `answer = None`.
#
# **Exercise 1.** You multiply two 3×3 matrices of independent standard normal numbers and
# call `np.var` (default `ddof=0`) on the 9 entries of the product. What is the expected
# value of the result? (Three significant figures are enough.)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("03.np_var_mean", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Each entry is a sum of $d = 3$ products: variance 3. The 9 entries are uncorrelated, so
# `np.var` averages $\frac{m-1}{m}\sigma^2 = \frac89\cdot 3 = 2.667$
# (`theory.matmul_sample_variance_moments(3, 3, ddof=0).mean`).
# </details>
#
# **Exercise 2.** Write `sample_variance(x, ddof)` without `np.var` (or `np.std`): the sum of
# squared deviations from the mean, divided by `len(x) - ddof`. It must work for `ddof=0` and
# `ddof=1`, on lists and 1-D arrays.

# %%
def sample_variance(x, ddof):
    ...  # your code here


answer = None  # when your function is ready, set answer = sample_variance
_ = check("03.sample_variance", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def sample_variance(x, ddof):
#     x = np.asarray(x, dtype=float)
#     return ((x - x.mean()) ** 2).sum() / (x.size - ddof)
# ```
# </details>
#
# **Exercise 3.** For $d_k = 64$ and standard normal components, what is
# $\mathrm{Cov}(S_{ij}^2, S_{ik}^2)$ for two logits $S_{ij} = q_i\cdot k_j$ and
# $S_{ik} = q_i\cdot k_k$ of the same query?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("03.shared_row_cov", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Given $q_i$, the two logits are independent, and both squares have conditional mean $|q_i|^2$.
# By the law of total covariance the covariance is $0 + \mathrm{Var}(|q_i|^2) = 2d_k = 128$
# (a chi-square with 64 degrees of freedom has variance 128).
# </details>
#
# ---
# **Next:** [04 — Why √d_k and not d_k](04_why_sqrt_dk.ipynb)
