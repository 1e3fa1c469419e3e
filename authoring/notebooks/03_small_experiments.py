# %% [markdown]
# # Small experiments mislead
#
# Notebook 02 derived that each entry of $QK^\top$ has variance $d_k$. A learner who checked it by
# simulation got 1.6 instead of 2. Is the theory wrong, or the experiment? How do we tell?
#
# **Learning goals**
# - See why one run of a small experiment proves nothing.
# - Measure a simulated result in standard errors (SE).
# - Predict how fast the SE of a sample variance shrinks as the matrices grow.
#
# **Prerequisites**
# - [02 — Mean and variance of q·k](02_mean_and_variance.ipynb): an entry of $QK^\top$ sums $d_k$ products of variance 1, so its variance is $d_k$.
# - The sample mean and sample variance of a list of numbers.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import math
import platform

import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import OKABE_ITO, new_figure, small_samples as small_samples_plots
from sdpa_helpers.small_samples import (SIZES, THREAD_2X2, THREAD_BIG, THREAD_BIG_SCALED, exact_relative_sd,
                                        iid_relative_sd, matmul_cumulant_sum, relative_sample_variances,
                                        relative_sd_with_se, variance_with_se, z_score)
from sdpa_helpers.sampling import sample_matmul_variances
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.small_samples import VarianceSpreadExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown] predict_answer=["not close", "none within 20 %", "0.05 to 10.55"]
# ## 1. The experiment that gave 1.6
#
# On AI Stack Exchange ([question 21237](https://ai.stackexchange.com/questions/21237)) a learner
# multiplied two 2×2 random matrices (standard normal, we assume) and took the variance of the
# product's four entries. Each entry sums $d_k = 2$ products of variance 1, so theory says 2.
# They got **1.6**. Ours uses numpy's `np.var`.
#
# **Predict:** run it with ten different seeds. How close to 2 will the ten answers be?

# %%
def two_by_two(seed):  # np.var of the 4 entries of A @ B, for 2x2 standard normal A and B
    g = make_rng(seed)
    A, B = g.standard_normal((2, 2)), g.standard_normal((2, 2))
    return np.var(A @ B)  # (2, 2) @ (2, 2) -> (2, 2); np.var pools all 4 entries


print("ten seeds:", np.round([two_by_two(seed) for seed in range(10)], 2))
seed_16 = next(s for s in range(1000) if round(two_by_two(s), 1) == THREAD_2X2)
print(f"the first seed that gives the thread's 1.6: seed {seed_16}, np.var = {two_by_two(seed_16):.3f}")

# %% [markdown]
# Not close at all: from 0.05 to 10.55. One run gives *one draw* of a
# random number: 1.6 is no bug, and 2 is not wrong. What matters is how much that number wobbles.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: two slips in the thread's answer

# %% [markdown] tags=["deep-dive"]
# Its sum for one entry runs from $i = 0$ to $d_k$, $d_k + 1$ terms (there are $d_k$), and it
# writes $QK$ without the transpose. Attention's logits are $QK^\top$, $S_{ij} = q_i\cdot k_j$;
# for i.i.d. (independent, identically distributed) normal entries $K$ and $K^\top$ have the
# same distribution, so the variance is unaffected.

# %% [markdown]
# ## 2. The standard error: how much one run wobbles
#
# Repeat the 2×2 experiment 100 000 times. For $m$ numbers with mean $\bar x$, the sample variance
# is $s^2 = \frac{1}{m - \text{ddof}} \sum_{a} (x_a - \bar x)^2$: `np.var` divides by $m$
# (`ddof=0`); with `ddof=1` (PyTorch's default) it divides by $m-1$. Both, from the same runs:

# %% alt="Two histograms of the sample variance of the 4 entries of 100 000 random 2x2 products, true value 2 marked: np.var (divide by 4) piles up near 0 with a long tail past 10, its mean 1.50, the thread's 1.6 marked nearby; ddof=1 (divide by 3) has the same shape stretched by 4/3, its mean 2.00."
n_reps = 100_000
s2_ddof0 = sample_matmul_variances(2, n_reps, ddof=0, rng=SEED)  # (n_reps,): np.var of each 2x2 product
s2_ddof1 = s2_ddof0 * 4 / 3  # the same products, divided by m - 1 = 3 instead of m = 4
fig, axes = new_figure(1, 2, figsize=(10, 3.4), sharey=True)
small_samples_plots.variance_histogram(s2_ddof0, 2.0, ax=axes[0], color=OKABE_ITO["orange"],
                                       label="np.var (÷ m = 4)", marks={f"the thread's {THREAD_2X2}": THREAD_2X2})
small_samples_plots.variance_histogram(s2_ddof1, 2.0, ax=axes[1], label="ddof=1 (÷ m − 1 = 3)")
fig

# %% [markdown]
# Wide and lopsided, with a long tail past 10. On average `ddof=1` gives 2, as theory says;
# `np.var` gives $\frac{m-1}{m} = \frac34$ of it, 1.5 (deep dive below: why).
#
# The **standard error** (SE) of a simulated result is its standard deviation over repeated runs:
# how far one run typically lands from the average of all runs. Judge a result by how many SEs it
# lies from theory. A roughly normal result, such as an average of many runs, lands within 2 SE
# 95 % of the time and beyond 4 SE almost never: the course's checks accept up to 4 SE.
# An average of $N$ runs has an SE $\sqrt N$ times smaller (notebook 02). For one 2×2 run:

# %%
se_one_run = theory.matmul_sample_variance_moments(2, 2, ddof=0).std  # exact SD of one run's np.var
print(f"SE of one np.var run: exact {se_one_run:.2f}; SD of the {n_reps} runs {s2_ddof0.std(ddof=1):.2f}")
print(f"1.6 lies {z_score(1.6, 1.5, se_one_run):+.2f} SE from np.var's average 1.5, "
      f"{z_score(1.6, 2.0, se_one_run):+.2f} SE from 2")
for ddof, s2 in ((0, s2_ddof0), (1, s2_ddof1)):  # the SE of an average of N runs: SD / √N
    verify_close(f"average of the {n_reps} runs, ddof={ddof}", s2.mean(),
                 theory.matmul_sample_variance_moments(2, 2, ddof=ddof).mean, se=s2.std(ddof=1) / np.sqrt(n_reps))

# %% [markdown]
# One run's SE, 2.18, exceeds the value it estimates: 1.6 lies within a fifth of an SE of both 1.5
# and 2. One 2×2 run can tell neither theory nor estimator apart; the average of 100 000 runs can.
# (A single lopsided run also lands beyond 4 SE more often than a normal result would: deep dive.)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: a lopsided result breaks the 4-SE rule
#
# The "beyond 4 SE almost never" rule is for roughly normal results. One 2×2 run's long tail
# puts far more of its runs out there, against both tails of a normal curve:

# %% tags=["deep-dive"]
beyond_4, normal_4 = np.mean(np.abs(s2_ddof0 - 1.5) > 4 * se_one_run), math.erfc(4 / np.sqrt(2))  # two tails
print(f"runs beyond 4 SE of 1.5: {beyond_4:.1%} (a normal result: {normal_4:.3%}); "
      f"seed 6's {two_by_two(6):.2f} lies {z_score(two_by_two(6), 1.5, se_one_run):+.2f} SE")

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why `np.var` averages $\frac{m-1}{m}\sigma^2$

# %% [markdown] tags=["deep-dive"]
# Take $m$ *uncorrelated* values ($\mathbb{E}[x_a x_b] = 0$ for $a \ne b$) of mean 0 and variance
# $\sigma^2$. Then $\sum_a (x_a - \bar x)^2 = \sum_a x_a^2 - m\bar x^2$ has mean $m\sigma^2 - \sigma^2$:
# the sum $\sum_a x_a$ has variance $m\sigma^2$ (notebook 02: cross terms have mean 0), and $\bar x$ is
# that sum divided by $m$, so $\mathbb{E}[\bar x^2] = \mathrm{Var}(\bar x) = m\sigma^2/m^2 = \sigma^2/m$
# ($\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$, notebook 02). Dividing $(m-1)\sigma^2$ by $m$ gives
# $\frac34\cdot 2 = 1.5$; dividing by $m - 1$ gives $\sigma^2 = 2$. The entries of $AB$ are
# uncorrelated (deep dive after section 4). Is the thread's 1.6 then "close to 1.5"? Only 3.7 % of
# runs land that near:

# %% tags=["deep-dive"]
print(f"np.var runs within ±0.1 of 1.5: {np.mean(np.abs(s2_ddof0 - 1.5) <= 0.1):.1%}; "
      f"at or below 1.6: {np.mean(s2_ddof0 <= 1.6):.0%}; median {np.median(s2_ddof0):.2f}")

# %% [markdown] predict_answer=["39-fold", "38 exactly", "32"]
# ## 3. Bigger matrices, smaller standard error
#
# Let both matrices be $n\times n$: each entry has variance $n$, so $s^2/n$ (`ddof=1`) estimates 1.
# Repeat the experiment at least 500 times at each $n$ and measure the SE of $s^2/n$ (its standard
# deviation over the runs).
#
# **Predict:** from $n = 2$ to $n = 64$ the pooled entries grow 1 024-fold (4 → 4 096). Does
# the SE of $s^2/n$ shrink about 1 024 times, about 32 times, or hardly at all?

# %% alt="Log-log plot of the SE of s²/n (its standard deviation over repeated runs) against the matrix size n from 2 to 256: the exact line falls from 1.45 at n = 2 to 0.038 at n = 64 and keeps falling with slope -1; six measured dots (n = 2 to 64) sit on the line."
sim, exact_sd = np.array([relative_sd_with_se(n) for n in SIZES]), exact_relative_sd(SIZES)  # sim: SE measured, its error
print(f"the SE of s²/n shrinks {sim[0, 0] / sim[-1, 0]:.0f}-fold from n = 2 to 64 "
      f"(exact {exact_sd[0] / exact_sd[-1]:.0f}-fold)")
ax = small_samples_plots.spread_vs_n(SIZES, sim[:, 0], iid=False)
ax.figure

# %% [markdown]
# About 39-fold in this simulation, 38 exactly (a simulated SE wobbles too: deep dive): a little more
# than $\sqrt{1024} = 32$, as $n = 2$ sits above the $1/n$ trend, nowhere near 1 024. For larger $n$ the
# SE falls like $1/n$ (slope −1): with $n^2$ entries, $1/n = 1/\sqrt{n^2}$, one over the *square root*
# of the number of entries. The dots sit on the exact line within their own
# simulation noise (deep dive).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the runs, live
#
# Drag $n$: the histogram of the runs narrows around 1, the dot walks down the line.

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer with a slider for n from 2 to 64: left, the histogram of s²/n over repeated runs around the true value 1, wide and lopsided at n = 2, a narrow spike at n = 64; right, the log-log line of its SE against n with a dot at the chosen n."
explorer = VarianceSpreadExplorer(n=2)
explorer

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the exact spread, and where the i.i.d. formula misses
#
# For $m$ **independent** values with variance $\sigma^2$ and excess kurtosis
# $\kappa = \mathbb{E}[(x-\mu)^4]/\sigma^4 - 3$, the unbiased sample variance has
#
# $$\mathrm{Var}(s^2) = \sigma^4\left(\frac{2}{m-1} + \frac{\kappa}{m}\right)
# \qquad(\texttt{theory.sample\_variance\_moments}).$$
#
# An entry of $AB$ sums $d$ products of independent standard normals. One product has
# $\mathbb{E}[(xy)^4] = 3\cdot 3 = 9$, excess kurtosis 6; a sum of $d$ independent terms
# divides the excess kurtosis by $d$: $\kappa = 6/d = 3$ for $d = 2$, so
# $\mathbb{E}[C_{ij}^4] = (3 + \kappa)\,\sigma^4 = 24$. By simulation:

# %% tags=["deep-dive"]
d = 2
kappa = theory.dot_product_excess_kurtosis(d)
entries = (rng.standard_normal((n_reps, 2, d)) @ rng.standard_normal((n_reps, d, 2))).ravel()  # 4 n_reps entries
fourth = entries**4
verify_close("E[C_ij^4] for d = 2", fourth.mean(), (3 + kappa) * d**2, se=fourth.std(ddof=1) / np.sqrt(fourth.size))

# %% [markdown] tags=["deep-dive"]
# Put $m = 4$, $\sigma^2 = 2$, $\kappa = 3$ into the i.i.d. formula and compare with the
# spread of the 100 000 runs of section 2 (standard error of a simulated variance:
# $\sqrt{(m_4 - m_2^2)/R}$ from the runs' central moments):

# %% tags=["deep-dive"]
iid = theory.sample_variance_moments(4, var=2.0, excess_kurtosis=kappa)
exact = theory.matmul_sample_variance_moments(2, 2)
v, se_v = variance_with_se(s2_ddof1)
print(f"Var(s²): simulated {v:.2f} ± {se_v:.2f} (1 SE), i.i.d. formula {iid.var:.2f}, exact {exact.var:.2f}")
verify("the i.i.d. formula is more than 10 SE off", abs(v - iid.var) > 10 * se_v, f"{abs(v - iid.var) / se_v:.0f} SE")
verify_close("Var(s²) of a 2x2 product", v, exact.var, se=se_v)

# %% [markdown] tags=["deep-dive"]
# For $A$ of shape $(n, d)$ and $B$ of shape $(d, p)$ with independent standard normal
# entries, and $m = np$ entries, the exact result is
#
# $$\mathrm{Var}(s^2) = \frac{2d^2}{m-1} + \frac{K}{(m-1)^2},\qquad
# K = d\,\big(2(n+p+1)(np-2) + 6\big)
# \qquad(\texttt{theory.matmul\_sample\_variance\_moments}),$$
#
# $76/9 \approx 8.44$ for the 2×2 case. **Where it comes from.** Write $(m-1)s^2 = x^\top P x$
# with $x$ the $m$ entries and $P = I - \frac1m \mathbf 1\mathbf 1^\top$. For mean-0 $x$ with
# covariance $\Sigma$, $\mathrm{Var}(x^\top P x) = 2\,\mathrm{tr}(P\Sigma P\Sigma)
# + K$ with $K = \sum_{abce} P_{ab}P_{ce}\,\kappa_{abce}$ and $\kappa_{abce}$ the joint fourth
# cumulant of entries $a, b, c, e$. Here $\Sigma = d\,I$, so the first term is $2d^2(m-1)$.
# By Isserlis' theorem, the fourth cumulant of entries $C_{i_1j_1},\dots,C_{i_4j_4}$ is $d$
# times the number of ordered pairs $(\pi, \sigma)$ of *different* ways to split the four into
# two pairs, such that $\pi$ pairs equal row indices and $\sigma$ pairs equal column indices.
# Four copies of one entry match under all $3\cdot 2 = 6$ ordered pairs: fourth cumulant $6d$,
# excess kurtosis $6/d$, as above. Two entries of one row, $(C_{ij}, C_{il}, C_{ij}, C_{il})$
# with $j \ne l$: $\sigma$ must pair positions 1, 3 and 2, 4, and $\pi$ is either of the two
# other pairings: fourth cumulant $2d$, where independent entries would give 0. That is the
# shared row at work. The count $K$ adds these up over all $m^4$ index tuples; here it is
# done by brute force (`small_samples.matmul_cumulant_sum`) for small shapes, exactly (no
# simulation), against the closed form:

# %% tags=["deep-dive"]
for n, d, p in ((2, 2, 2), (2, 3, 1), (3, 1, 2), (3, 2, 3)):
    K, m = matmul_cumulant_sum(n, d, p), n * p
    closed = d * (2 * (n + p + 1) * (n * p - 2) + 6)
    verify(f"{n}×{d} @ {d}×{p}: K by brute force {K:.0f} = closed form {closed}", K == closed)
    verify_close("   Var(s²) from this K vs theory.matmul_sample_variance_moments",
                 (2 * d * d * (m - 1) + K) / (m - 1) ** 2, theory.matmul_sample_variance_moments(n, d, p).var, rtol=1e-12)

# %% [markdown] tags=["deep-dive"]
# ### How much the shared rows cost
#
# For large $n$ the exact spread sits $\sqrt 3 \approx 1.7$ times above the i.i.d. formula: the
# $n^2$ entries are uncorrelated, which is all the *mean* of $s^2$ needs, but not independent,
# and its *spread* depends on fourth moments. $m_\text{eff}$ is how many *independent* values
# would give an equally precise $s^2$ (`theory.effective_sample_size` inverts the i.i.d.
# formula); for large $n$ it tends to $m/3$. At every $n$ of section 3:

# %% tags=["deep-dive"]
print(" n  entries   runs  mean s²/n  SD simulated       SD exact  SD i.i.d.  m_eff/m")
for n in SIZES:
    r = relative_sample_variances(n)
    sd, se_sd = relative_sd_with_se(n)  # delta method: SE(sd) = SE(var) / (2 sd)
    m_eff = theory.effective_sample_size(theory.matmul_sample_variance_moments(n, n).var, var=n,
                                         excess_kurtosis=theory.dot_product_excess_kurtosis(n))
    print(f"{n:3d} {n * n:7d} {r.size:6d} {r.mean():10.3f}  {sd:.4f} ± {se_sd:.4f}  {exact_relative_sd([n])[0]:.4f}"
          f"     {iid_relative_sd([n])[0]:.4f}     {m_eff / n**2:.2f}")
    verify("simulated SD within 4 SE of the exact one", abs(sd - exact_relative_sd([n])[0]) < 4 * se_sd)
verify_close("exact/i.i.d. spread at n=256", (exact_relative_sd([256]) / iid_relative_sd([256]))[0], 3**0.5, rtol=0.01)

# %% [markdown] tags=["deep-dive"]
# A measured SE comes from finitely many runs, so it wobbles too; its own standard error is called
# its **Monte Carlo error**. Section 3's dots against the exact line, in Monte Carlo errors (the bars:
# ±2 of them). A roughly normal estimate lands within
# 2 SE of the truth 95 % of the time, so all six land inside only $0.95^6 \approx 74\,\%$ of the
# time: one miss in six is ordinary. And the i.i.d. formula (dashed) against them:

# %% tags=["deep-dive"] alt="Log-log plot of the standard deviation of s²/n against n from 2 to 256: the measured dots with bars of ±2 Monte Carlo errors sit on the exact line; the dashed i.i.d. formula runs below it, about 1.7 times lower for large n."
z = (sim[:, 0] - exact_sd) / sim[:, 1]  # each dot's distance from the exact line, in Monte Carlo errors
verify("every dot within 4 Monte Carlo errors of the exact line", np.all(np.abs(z) < 4), f"largest {np.max(np.abs(z)):.1f}")
print(f"dots within 2 SE of the exact line: {np.sum(np.abs(z) <= 2)} of {len(SIZES)}; "
      f"z = {np.array2string(z, precision=1)}")
ax = small_samples_plots.spread_vs_n(SIZES, sim[:, 0], sim_se=sim[:, 1])
ax.set_title("the i.i.d. formula (dashed) ignores the shared rows and columns")
ax.figure

# %% [markdown] predict_answer=["ordinary draw", "0.68 SE", "-0.68"]
# ## 4. The thread's big experiment: 1111×111 @ 111×1111
#
# The thread also multiplied $1111\times 111$ by $111\times 1111$ standard normal matrices: every
# entry has variance 111. It got **110.56**, and after dividing the product by $\sqrt{111}$, **0.99604**.
#
# **Predict:** is 110.56 evidence that the variance is not 111?

# %%
exact_big = theory.matmul_sample_variance_moments(1111, 111, 1111)  # exact mean and SD of s² for this shape
print(f"SE of one run's s²: {exact_big.std:.3f}. 110.56 lies {z_score(THREAD_BIG, 111, exact_big.std):+.2f} SE "
      f"from 111")
verify_close("the thread's scaled result, 110.56 / 111", THREAD_BIG_SCALED, THREAD_BIG / 111, rtol=1e-5)

# %% [markdown]
# No: 110.56 is an ordinary draw, 0.68 SE below 111. And 0.99604 is no second confirmation: it must
# be $110.56/111 = 0.99604$ from the same run, since dividing every entry by $\sqrt{111}$ divides the variance by 111
# (each entry times $c$ makes each squared deviation $c^2$ times as large: $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$,
# notebook 04's first step). The SE printed is exact: it counts that the
# entries of one product share rows and columns (deep dives: what ignoring that costs, and forty runs of our own).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: forty runs of our own

# %% tags=["deep-dive"]
g, n_big = make_rng(SEED), 40
s2_big = np.array([(g.standard_normal((1111, 111)) @ g.standard_normal((111, 1111))).var(ddof=1) for _ in range(n_big)])
print(f"run 1: s²/111 = {s2_big[0] / 111:.4f}; SD of s² over {n_big} runs {s2_big.std(ddof=1):.2f}, exact {exact_big.std:.2f}")
verify_close("s² of one 1111x111 @ 111x1111 product", s2_big[0], 111, se=exact_big.std)
verify_close("SD of s² over the runs", s2_big.std(ddof=1), exact_big.std, se=exact_big.std / np.sqrt(2 * (n_big - 1)))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: entries of $QK^\top$ share rows and columns
#
# The i.i.d. formula (the deep dive of section 3), which ignores the shared rows and columns,
# would judge 110.56 quite differently. For large shapes the exact spread is about $\sqrt{(1 + (n+p)/d)\,/\,(1 + 3/d)}$ times the
# i.i.d. one (keep the leading terms of the deep dive of section 3: $K \approx 2d(n+p)\,m$): $\sqrt 3$ for
# square products, more when $d$ is small next to $n$ and $p$, as here:

# %% tags=["deep-dive"]
iid_big = theory.sample_variance_moments(1111**2, var=111.0, excess_kurtosis=theory.dot_product_excess_kurtosis(111))
print(f"SE of s²: exact {exact_big.std:.3f}, i.i.d. formula {iid_big.std:.3f} (exact/i.i.d. = {exact_big.std / iid_big.std:.1f}); "
      f"110.56 lies {z_score(THREAD_BIG, 111, exact_big.std):+.2f} exact SEs from 111, "
      f"{z_score(THREAD_BIG, 111, iid_big.std):+.2f} i.i.d.")
verify_close("exact/i.i.d. spread for this shape against the large-size rule sqrt(1 + (n + p)/d) / sqrt(1 + 3/d)",
             exact_big.std / iid_big.std, np.sqrt((1 + 2222 / 111) / (1 + 3 / 111)), rtol=0.01)

# %% [markdown] tags=["deep-dive"]
# A three-sigma surprise that is not one. Why the sharing matters: in attention $S = QK^\top$
# and $S_{ij} = q_i\cdot k_j$. Two logits of one query, $S_{ij}$ and $S_{il}$ ($j\ne l$),
# share $q_i$. Given $q_i$ they are independent, each with conditional mean 0 and
# $\mathbb{E}[S_{ij}^2 \mid q_i] = |q_i|^2$. The law of total covariance,
# $\mathrm{Cov}(X, Y) = \mathbb{E}[\mathrm{Cov}(X, Y \mid q_i)]
# + \mathrm{Cov}(\mathbb{E}[X\mid q_i], \mathbb{E}[Y\mid q_i])$, then gives
#
# - $\mathrm{Cov}(S_{ij}, S_{il}) = 0$: **uncorrelated**;
# - $\mathrm{Cov}(S_{ij}^2, S_{il}^2) = \mathrm{Var}(|q_i|^2) = 2d_k$ ($|q_i|^2$ is
#   chi-square with $d_k$ degrees of freedom): **not independent**. A long query makes both large.
#
# Dividing by $\mathrm{Var}(S_{ij}^2) = (3 + 6/d_k)\,d_k^2 - d_k^2 = 2d_k^2 + 6d_k$, the
# correlation of the squares is $1/(d_k+3)$. A simulation with 200 000 queries, two keys each:

# %% tags=["deep-dive"]
pairs = {}
for d_k in (1, 4, 16):
    g = make_rng(SEED + d_k)
    q, k_j, k_l = g.standard_normal((3, 200_000, d_k))
    s_ij, s_il = np.einsum("nd,nd->n", q, k_j), np.einsum("nd,nd->n", q, k_l)  # (200_000,) each
    pairs[d_k] = s_ij, s_il
    prod, sq = s_ij * s_il, (s_ij**2 - d_k) * (s_il**2 - d_k)  # E[S²] = d_k is known
    verify_close(f"d_k = {d_k:2d}: Cov(S_ij, S_il)", prod.mean(), 0.0, se=prod.std(ddof=1) / np.sqrt(prod.size))
    verify_close(f"d_k = {d_k:2d}: Cov(S_ij², S_il²)", sq.mean(), theory.shared_row_square_covariance(d_k),
                 se=sq.std(ddof=1) / np.sqrt(sq.size))
    print(f"   correlation of the squares {np.corrcoef(s_ij**2, s_il**2)[0, 1]:.3f}, theory {1 / (d_k + 3):.3f}")

# %% [markdown] tags=["deep-dive"]
# To *see* the dependence, group the pairs by the size of one logit, $|S_{ij}|/\sqrt{d_k}$,
# and measure the spread of the other. For independent logits the curve would stay flat
# at 1; it rises, and the effect fades as $d_k$ grows (the relative spread of $|q_i|^2$ is
# $\sqrt{2/d_k}$).

# %% tags=["deep-dive"] alt="Root mean square of one logit against the size of the other logit of the same query, |S_ij|/sqrt(d_k) from 0 to about 3.4, for d_k = 1, 4 and 16: independent logits would give a flat dashed line at 1; the curves rise, from 0.6 to about 2 for d_k = 1, from 0.9 to 1.4 for d_k = 4, from 1.0 to 1.2 for d_k = 16."
fig, ax = new_figure(figsize=(6.0, 3.8))
for d_k, colour in zip(pairs, (OKABE_ITO["orange"], OKABE_ITO["sky_blue"], OKABE_ITO["reddish_purple"])):
    small_samples_plots.conditional_spread(*pairs[d_k], d_k, ax=ax, color=colour)
ax.set_title("two logits of one query: uncorrelated, not independent")
fig

# %% [markdown] tags=["deep-dive"]
# For pooling, the $n_q n_k$ logits of one $QK^\top$ are not $n_q n_k$ independent
# measurements. A head with $d_k = 64$ and 128 queries and keys:

# %% tags=["deep-dive"]
m_eff = theory.effective_sample_size(theory.matmul_sample_variance_moments(128, 64, 128).var, var=64.0,
                                     excess_kurtosis=theory.dot_product_excess_kurtosis(64))
print(f"{128 * 128} logits are worth {m_eff:.0f} independent ones for estimating their variance "
      f"({m_eff / 128**2:.0%})")

# %% [markdown]
# ## Summary
#
# - One small run misleads: it is one draw of a random number. Judge it by its **standard error**, its standard
#   deviation over repeated runs. For a roughly normal result (an average of many runs) within 2 SE is
#   ordinary and beyond 4 SE is news.
# - For large $n$ the SE of $s^2/n$ falls like $1/n$, one over the square root of the number of entries.
# - The thread's 1.6 (one 2×2 run, SE 2.18) and 110.56 (0.68 SE from 111) are ordinary draws. This supports
#   part 1 of the answer (**spread**): with independent mean-0, variance-1 components, as the paper's footnote assumes,
#   $q\cdot k$ has variance $d_k$, so the logits spread $\sqrt{d_k}$ wide.
#
# ## Exercises
#
# Check an answer with `check(key, answer)`: numbers to three significant figures, integers exactly.
#
# **Exercise 1.** You multiply two 3×3 matrices of independent standard normal numbers and
# call `np.var` (default `ddof=0`) on the 9 entries of the product. What is the expected
# value of the result (three significant figures)?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("03.np_var_mean", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Each entry sums 3 products: variance 3. The 9 entries are uncorrelated (not independent), so
# `np.var` averages $\frac{m-1}{m}\sigma^2 = \frac89\cdot 3 = 2.67$.
# </details>
#
# **Exercise 2 (conceptual).** One experiment pools the $n^2$ entries of an $n\times n$ @
# $n\times n$ product and computes $s^2/n$. For large $n$, which change halves the standard
# error of $s^2/n$ (its standard deviation over repeated runs)? (a) double $n$; (b) multiply $n$
# by 4; (c) double the number of entries $n^2$. Answer with a letter, e.g. `answer = "a"`.

# %%
answer = None  # replace None with a letter, then run the cell
_ = check("03.halve_spread", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (a). The SE falls like $1/n$ (slope −1 on section 3's log-log plot), that is like
# $1/\sqrt{\text{entries}}$: doubling $n$ quadruples the entries and halves the SE.
# Doubling the entries only divides it by $\sqrt2$.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3.** Section 4 printed the SE of $s^2$ for the thread's 1111×111 @ 111×1111 product
# $AB$. The thread's scaled result 0.99604 is the $s^2$ of the scaled product $AB/\sqrt{111}$ (every
# entry of $AB$ divided by $\sqrt{111}$). How many of *its* SEs from its true value 1 does 0.99604
# lie (three significant figures; negative if below)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("03.scaled_z", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Dividing every entry by $\sqrt{111}$ divides $s^2$, its true value *and* its SE by 111
# ($\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$ applied to the entries: $s^2$ scales with
# $c^2 = 1/111$, and so does its SE). So $z = (0.99604 - 1)/(\text{SE}/111) = -0.678$, the same
# as for 110.56 up to the rounding of 0.99604 ($(110.56 - 111)/\text{SE} = -0.679$; both are accepted):
# scaling changes the units, not the evidence.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** Write `sample_variance(x, ddof)` without `np.var` (or `np.std`): the sum
# of squared deviations from the mean, divided by `len(x) - ddof`, for lists and 1-D arrays.

# %% tags=["deep-dive"]
def sample_variance(x, ddof):
    ...  # your code here


_ = check("03.sample_variance", sample_variance)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def sample_variance(x, ddof):
#     x = np.asarray(x, dtype=float)
#     return ((x - x.mean()) ** 2).sum() / (x.size - ddof)
# ```
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [04 — Why √d_k and not d_k](04_why_sqrt_dk.ipynb)
