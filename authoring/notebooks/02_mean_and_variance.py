# %% [markdown]
# # Mean and variance of q·k, derived step by step
#
# Notebook 01 measured that $q\cdot k$ spreads like $\sqrt{d_k}$. Here we derive why, with pencil
# and paper: each rule on two random numbers, checked exactly on a small case and by simulation.
#
# **Learning goals**
# - Derive $\mathrm{Var}(X + Y)$ and $\mathrm{Var}(XY)$ from the definitions, and say where independence is used.
# - Derive $E[q\cdot k] = 0$ and $\mathrm{Var}(q\cdot k) = d_k$ for independent mean-0, variance-1 components.
# - Tell a proof, an exact computation and a simulation apart.
#
# **Prerequisites**
# - [01 — Dot products](01_dot_products.ipynb): $q\cdot k = \sum_i q_ik_i$.
# - A random number $X$ takes values $x$ with probabilities $P(X = x)$ that add up to 1.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory, variance
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import variance as variance_plots
from sdpa_helpers.sampling import DISTRIBUTIONS, sample_components, sample_dot_products
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.variance import VarianceExplorer

SEED = 2
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Two definitions
#
# The **expectation** (mean) of $X$ is its probability-weighted average, $E[X] = \sum_x x\,P(X = x)$.
# The same recipe gives the mean of anything computed from random numbers. For two, write $P(x, y)$ for the probability that $X = x$ and $Y = y$
# together; then $E[f(X, Y)] = \sum_{x,y} f(x, y)\,P(x, y)$.
#
# The mean is *linear*: split $E[X + Y] = \sum_{x,y}(x + y)P(x, y)$ into two double sums; summing
# out $y$ ($\sum_y P(x, y) = P(X = x)$) turns the first into $E[X]$, so $E[X + Y] = E[X] + E[Y]$,
# whether or not $X$ and $Y$ depend on each other. Likewise $E[cX] = cE[X]$ and $E[c] = c$ for a constant $c$.
#
# The **variance** is the mean squared distance from the mean, $\mathrm{Var}(X) = E[(X - \mu)^2]$
# with $\mu = E[X]$. Expanding the square, by linearity $E[X^2 - 2\mu X + \mu^2] = E[X^2] - \mu^2$:
#
# $$\mathrm{Var}(X) = E[X^2] - (E[X])^2 .$$
#
# Our running example: $X$ uniform on 1, 2, 3 (checked with section 2).

# %% [markdown]
# ## 2. The variance of a sum of two
#
# Write $X + Y - (\mu_X + \mu_Y) = (X - \mu_X) + (Y - \mu_Y)$, square it, and take the expectation
# of each of the three terms (linearity):
#
# $$\mathrm{Var}(X + Y) = \mathrm{Var}(X) + \mathrm{Var}(Y) + 2\,\mathrm{Cov}(X, Y),
# \qquad \mathrm{Cov}(X, Y) = E[(X - \mu_X)(Y - \mu_Y)] .$$
#
# The rule holds for any $X$, $Y$; variances simply add only when the covariance is 0.
#
# **Exact check** in fractions: section 1's shortcut on the running example (a classic slip beside
# it), then this rule in two cases, $X$ and $Y$ independent copies (9 equally likely pairs) and $Y = X$ (3 pairs).
#
# **Simulation** with *normal* components (mean 0, variance 1; sums become integrals over a
# **density**, and every rule holds the same way), $n = 100\,000$ draws.
# A simulated answer wobbles from draw to draw; its typical wobble is its **standard error** (SE),
# $\sqrt{\mathrm{Var}/n}$ for an average (a sample variance has one too: deep dive below). A check
# passes when the simulation lands within 4 SE of the theory.

# %%
X, n = [1, 2, 3], 100_000  # X: three equally likely values; n: draws per simulation
mean_X, E_X2 = variance.exact_mean(X), variance.exact_mean([x**2 for x in X])
verify(f"exact: Var(X) by the definition = {variance.exact_var(X)} = E[X²] − (E[X])²", variance.exact_var(X) == E_X2 - mean_X**2,
       f"E[X] = {mean_X}, E[X²] = {E_X2}; the slip E[X²] − E[X] gives {E_X2 - mean_X}")
independent, copied = [(x, y) for x in X for y in X], [(x, x) for x in X]  # 9 and (Y = X) 3 equally likely pairs
for name, pairs in (("X, Y independent", independent), ("Y = X", copied)):
    lhs, cov = variance.exact_var([x + y for x, y in pairs]), variance.exact_cov(pairs)
    verify(f"exact, {name}: Var(X + Y) = {lhs} = Var X + Var Y + 2 Cov(X, Y)", lhs == 2 * variance.exact_var(X) + 2 * cov, f"Cov(X, Y) = {cov}")
x_sim, y_sim = sample_components(n, rng=rng), sample_components(n, rng=rng)  # independent N(0, 1)
for name, s, var_theory in (("X, Y independent", x_sim + y_sim, 2), ("Y = X", x_sim + x_sim, 4)):
    st = variance.sample_summary(s)  # sample mean and variance, with their SEs
    verify_close(f"simulated, {name}: Var(X + Y)", st["var"], var_theory, se=st["se_var"])

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how much a simulation wobbles
#
# Why care: every simulated check in the course trusts "within 4 SE"; here is where the SE of a
# variance comes from, and a test that it is right.
#
# **An average.** $n$ independent values $X_i$ of variance $s^2$: independent values have
# covariance 0 (proved in section 3, just below), so by section 2 their variances add and the sum
# has variance $ns^2$; and $\mathrm{Var}(cX) = c^2\mathrm{Var}(X)$ (from the
# definition, by linearity) with $c = 1/n$ gives the average the variance $s^2/n$, so SE $s/\sqrt n$.
#
# **A variance.** A sample variance is close to the average of the $n$ independent values
# $(X_i - \mu)^2$. Each of them has mean $\sigma^2$ and variance
# $E[(X - \mu)^4] - \sigma^4 = m_4 - \sigma^4$, so as for an average,
#
# $$\mathrm{SE}(s^2) = \sqrt{(m_4 - \sigma^4)/n},$$
#
# estimated with the sample's own $m_4$ and $s^2$ (`variance.sample_summary`). The test: repeat
# a simulation of $\mathrm{Var}(XY)$, $X, Y$ independent $N(2, 1)$ (true variance 9), with $n = 1000$
# each time, and compare the spread of the answers with the SE each run reports: 2000 runs here,
# and the misses beyond 4 SE from 600 000 runs (20 seeds of 30 000, stored in
# `sdpa_helpers/data/variance_wobble.npz`; `variance.write_wobble_counts()` remakes it in about
# 7 minutes), since misses are rare. For an estimate that is close to normal, missing by more than
# 4 SE has probability $P(|Z| > 4) = \operatorname{erfc}(4/\sqrt2)$.

# %% tags=["deep-dive"]
import math  # the deep dive's own import

var_runs, se_runs = variance.wobble_runs(2000, rng=201)  # 2000 runs, each n = 1000 products XY: variance and its SE
spread, reported = np.std(var_runs, ddof=1), np.median(se_runs)
verify("the reported SE matches the real wobble within 10 %", abs(reported / spread - 1) < 0.1,
       f"spread of 2000 repeated sample variances {spread:.3f}; SE reported by one run: median {reported:.3f}; ratio {reported / spread:.2f}")
stored, ideal = variance.wobble_counts(), math.erfc(4 / math.sqrt(2))  # misses per seed, of 30 000 runs each
rate, misses, runs = stored["misses"] / stored["runs"], stored["misses"].sum(), stored["runs"] * len(stored["seeds"])
print(f"runs more than 4 SE from the true 9: {misses} of {runs} = {misses / runs:.3%} ± {np.sqrt(misses) / runs:.3%} (± 1 SE, Poisson); "
      f"per seed of 30 000: median {np.median(rate):.3%}, range {rate.min():.3%} to {rate.max():.3%}")
print(f"that is {misses / runs / ideal:.1f} ± {np.sqrt(misses) / runs / ideal:.1f} times the {ideal:.4%} of a normal estimate")

# %% [markdown] tags=["deep-dive"]
# The reported SE is the real wobble (ratio 0.98). Misses beyond 4 SE stay rare, 0.064 % of runs,
# but that is 10.1 ± 0.5 times the normal ideal of 0.0063 %: with $n = 1000$, the rare large values of
# $XY$ make each run's SE estimate wobble too. One seed alone could have said anything from 0.040 %
# to 0.097 %. The main line's samples are 100 times larger.

# %% [markdown]
# ## 3. Independence: $E[XY] = E[X]\,E[Y]$
#
# $X$ and $Y$ are **independent** when every joint probability is a product,
# $P(x, y) = P(X = x)\,P(Y = y)$. Then the double sum splits into two single sums:
#
# $$E[XY] = \sum_x\sum_y xy\,P(X = x)P(Y = y) = \Big(\sum_x x\,P(X = x)\Big)\Big(\sum_y y\,P(Y = y)\Big) = E[X]\,E[Y].$$
#
# The same steps give $E[X^2Y^2] = E[X^2]\,E[Y^2]$, and likewise for any function of $X$ times any of $Y$.
# Several numbers are independent when every joint probability is the product of the single ones;
# for $q_1, k_1, q_2, k_2$ that product regroups as $[P(q_1)P(k_1)]\,[P(q_2)P(k_2)]$.
#
# **So anything computed from some pairs is independent of anything computed from the others**
# (section 5 uses this).
#
# Expanding the covariance, $\mathrm{Cov}(X, Y) = E[XY] - \mu_X\mu_Y$, so independence gives
# covariance 0, and by section 2 the variances add.

# %% [markdown] predict_answer=["52/9", "5.78"]
# ## 4. The variance of a product
#
# **Predict:** $X$ and $Y$ independent, each uniform on $\{1, 2, 3\}$, so each has variance 2/3.
# What is $\mathrm{Var}(XY)$? Guess first (sections 1 and 3 hold the pieces; the paragraph after the
# check puts them together), then run the exact check:

# %%
E_XY = variance.exact_mean([x * y for x, y in independent])
verify(f"exact, X, Y independent: E[XY] = {E_XY} = E[X]·E[Y]", E_XY == mean_X * mean_X,
       f"but with Y = X, E[XY] = E[X²] = {variance.exact_mean([x * y for x, y in copied])}")
var_XY = variance.exact_var([x * y for x, y in independent])
verify(f"exact: Var(XY) = {var_XY}, as the rule derived below gives for means 2 and variances 2/3",
       np.isclose(float(var_XY), theory.product_moments(2, 2 / 3, 2, 2 / 3).var))

# %% [markdown]
# The exact answer, 52/9, is thirteen times the common guess $(2/3)^2 = 4/9$: the means enter. Why:
# apply the shortcut of section 1 to $XY$, then section 3 twice,
#
# $$\mathrm{Var}(XY) = E[X^2Y^2] - (E[XY])^2 = E[X^2]\,E[Y^2] - (E[X]\,E[Y])^2 .$$
#
# It differs from two tempting wrong rules: $\mathrm{Var}(X)\,\mathrm{Var}(Y)$, and the square on the
# means forgotten. For components of mean 0 and variance 1, $E[X^2] = 1$ (section 1), so
# $\mathrm{Var}(XY) = 1$: when both means are 0 the right rule and $\mathrm{Var}(X)\,\mathrm{Var}(Y)$ agree, the case
# we need next.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: sections 3 and 4 by simulation, with means 2
#
# $X$, $Y$ independent normals of mean 2 and variance 1, written $N(2, 1)$: $E[XY] = 2\cdot 2$,
# $E[X^2] = 5$, so $\mathrm{Var}(XY) = 25 - 16 = 9$, far from both wrong rules,
# $\mathrm{Var}(X)\,\mathrm{Var}(Y) = 1$ and $E[X^2]E[Y^2] - E[X]E[Y] = 21$.

# %% tags=["deep-dive"]
g = make_rng(203)  # the deep dive's own stream: the main line never depends on it
st = variance.sample_summary(sample_components(n, mean=2.0, rng=g) * sample_components(n, mean=2.0, rng=g))
verify_close("simulated, X, Y independent N(2, 1): E[XY]", st["mean"], 4, se=st["se_mean"])
verify_close("simulated, N(2, 1): Var(XY)", st["var"], theory.product_moments(2, 1, 2, 1).var, se=st["se_var"])
wrong = {"Var(X)·Var(Y)": 1 * 1, "E[X²]E[Y²] − E[X]E[Y]": 5 * 5 - 2 * 2}
verify("simulated: both wrong rules are more than 100 SE off: " + ", ".join(f"{k} = {v}" for k, v in wrong.items()),
       all(abs(st["var"] - v) > 100 * st["se_var"] for v in wrong.values()))

# %% [markdown]
# ## 5. $d_k$ terms: $E[q\cdot k] = 0$ and $\mathrm{Var}(q\cdot k) = d_k$
#
# Take $q, k$ with $d_k$ components each, all $2d_k$ of them independent, each of mean 0 and
# variance 1, and write the terms $Z_i = q_ik_i$.
#
# **Mean.** Linearity, then independence of $q_i$ and $k_i$ (section 3):
# $E[q\cdot k] = \sum_i E[q_ik_i] = \sum_i E[q_i]\,E[k_i] = 0$.
#
# **Variance.** Add one term at a time. The sum $S_j$ of the first $j$ terms and the next term
# $Z_{j+1}$ come from different pairs, so they are independent (section 3):
# their covariance is 0, and by section 2 the next term adds its variance, 1 by section 4:
#
# $$\mathrm{Var}(S_{j+1}) = \mathrm{Var}(S_j) + 1, \quad\text{so}\quad \mathrm{Var}(q\cdot k) = d_k .$$
#
# Independence was used twice: within each pair (sections 3 and 4) and between
# pairs. **Exact check** (no simulation noise): components $\pm 1$ ($d_k$ = 1 to 4), and all 729
# $(q, k)$ in $\{1, 2, 3\}^3$ (three times section 4's term); then a **simulation** at $d_k = 8$ and 64:

# %%
exact = {d: variance.all_dot_products([-1, 1], d) for d in (1, 2, 3, 4)}  # 4**d_k equally likely (q, k)
print("±1 components, d_k = 1, 2, 3, 4: E[q·k] =", *(variance.exact_mean(v) for v in exact.values()),
      "| Var(q·k) =", *(variance.exact_var(v) for v in exact.values()))
dots = variance.all_dot_products(X, 3)
mean_dots, var_dots = variance.exact_mean(dots), variance.exact_var(dots)
verify(f"exact, components in {{1, 2, 3}}, d_k = 3: E[q·k] = {mean_dots} = 3·{E_XY}, Var(q·k) = {var_dots} = 3·{var_XY}",
       mean_dots == 3 * E_XY and var_dots == 3 * var_XY)
for d_k in (8, 64):
    st = variance.sample_summary(sample_dot_products(d_k, n, rng=rng))  # n draws of q·k
    verify_close(f"simulated, d_k = {d_k}: E[q·k]", st["mean"], 0, se=st["se_mean"])
    verify_close(f"simulated, d_k = {d_k}: Var(q·k)", st["var"], d_k, se=st["se_var"])

# %% [markdown]
# Three kinds of evidence: the proof covers every distribution with independent mean-0, variance-1
# components; the exact check, every outcome of a small case; the simulation, a large case up to its SE. Dividing by $\sqrt{d_k}$ brings the variance back to 1 (notebook 04).
#
# If the components still have mean 0 but variance $\sigma_q^2$ in $q$ and $\sigma_k^2$ in $k$, section 4 gives
# each term variance $\sigma_q^2\sigma_k^2$, and the same steps give
# $\mathrm{Var}(q\cdot k) = d_k\,\sigma_q^2\sigma_k^2$ (the deep dive below proves and checks it).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: every term and every pair of terms at once
#
# Why care: the proof says each term $q_ik_i$ has mean 0 and variance 1 and every two terms
# have covariance 0. At $d_k = 8$ that is $8 + 8 + 28$ claims; here they are, all measured
# from one sample. The elementwise product $P = Q\circ K$ of $n$ rows of $Q$ and $K$ holds
# every term, and its row sums are the dot products.

# %% tags=["deep-dive"] alt="Heatmap of the sample covariances of the 8 terms q_i k_i at d_k = 8 from 100,000 draws: the diagonal is close to 1 (each term's variance), every off-diagonal entry is close to 0."
g = make_rng(202)  # the deep dive's own stream: the main line never depends on it
d8, n8 = 8, 100_000
P = sample_components((n8, d8), rng=g) * sample_components((n8, d8), rng=g)  # (n, d_k): terms q_i k_i
z_means = np.abs(P.mean(axis=0)) * np.sqrt(n8)  # a mean of mean-0 unit-variance terms has SE 1/√n
z_vars = np.abs(P.var(axis=0, ddof=1) - 1) / np.array([variance.sample_summary(c)["se_var"] for c in P.T])
C = np.cov(P, rowvar=False)  # (d_k, d_k): covariances of the terms
z_covs = np.abs(C[~np.eye(d8, dtype=bool)]) * np.sqrt(n8)
verify("every E[q_i k_i] = 0", z_means.max() < 4, f"largest {z_means.max():.1f} SE")
verify("every Var(q_i k_i) = 1", z_vars.max() < 4, f"largest {z_vars.max():.1f} SE")
verify("every Cov(q_i k_i, q_j k_j) = 0", z_covs.max() < 4, f"largest {z_covs.max():.1f} SE")
verify("mean of row sums = sum of column means (linearity, on any numbers)",
       np.isclose(P.sum(axis=1).mean(), P.mean(axis=0).sum()))
verify("sum of all entries of C = sample Var(q·k) (section 2 for 8 terms)",
       np.isclose(C.sum(), np.var(P.sum(axis=1), ddof=1)), f"{C.sum():.4f}")
ax = variance_plots.covariance_heatmap(C)
ax.set_title(r"sample $\mathrm{Cov}(q_i k_i,\, q_j k_j)$, $d_k = 8$")
ax.figure

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: uncorrelated is enough, and LayerNorm
#
# Why care: real queries and keys come out of LayerNorm and linear layers, whose components are
# not independent of each other. How far does the result stretch?
#
# If $q$ is independent of $k$ and both have mean 0, with covariance matrices $\Sigma_q$, $\Sigma_k$
# ($\Sigma_{ij} = \mathrm{Cov}(q_i, q_j)$),
#
# $$\mathrm{Var}(q\cdot k) = E[q^\top k\,k^\top q] = E[q^\top\Sigma_k q] = \operatorname{tr}(\Sigma_q\Sigma_k).$$
#
# With $\Sigma_k = I$ this is $\operatorname{tr}(\Sigma_q) = \sum_i \mathrm{Var}(q_i)$, whatever the
# correlations inside $q$. Example: $q$ uniform on the sphere of radius $\sqrt{d_k}$ (its
# components depend on each other through $\lVert q\rVert^2 = d_k$, yet are uncorrelated).
#
# **LayerNorm's output is correlated.** LayerNorm (no gain, no bias, $\epsilon = 0$) maps a
# vector $x$ to $z = (x - \bar x)/s_x$, whose $d$ components always sum to 0 and have
# $\sum_i z_i^2 = d$. For i.i.d. inputs every $\mathrm{Var}(z_i) = 1$ and every
# $\mathrm{Cov}(z_i, z_j) = c$ by symmetry, and section 2 for $d$ terms gives
# $0 = \mathrm{Var}(\sum_i z_i) = d + d(d - 1)c$, so $c = -1/(d - 1)$. Against keys with
# $\Sigma_k = I$ the variance is still exactly $\operatorname{tr}(\Sigma_q) = d$ — because $k$ keeps
# $\Sigma = I$, not because LayerNorm's components are uncorrelated. If both $q$ and $k$ are
# LayerNorm outputs,
#
# $$\operatorname{tr}(\Sigma^2) = d + d(d-1)\cdot\frac{1}{(d-1)^2} = \frac{d^2}{d - 1}.$$

# %% tags=["deep-dive"]
from sdpa_helpers.attention import layer_norm  # the deep dive's own import

g = make_rng(203)  # the deep dive's own stream: the main line never depends on it
d_ln, n_ln = 8, 200_000
cov_ln = variance.layer_norm_covariance(d_ln)
verify_close("closed form: Var(q·k), both LayerNorm outputs, d = 8", theory.dot_product_variance_cov(cov_ln, cov_ln),
             d_ln**2 / (d_ln - 1), rtol=1e-12)
q_ln = layer_norm(sample_components((n_ln, d_ln), rng=g), eps=0.0)
k_ln = layer_norm(sample_components((n_ln, d_ln), rng=g), eps=0.0)
k_iid = sample_components((n_ln, d_ln), rng=g)
z12 = q_ln[:, 0] * q_ln[:, 1]
verify_close("simulated: Cov(z_1, z_2) of LayerNorm's output", z12.mean(), -1 / (d_ln - 1), se=z12.std() / np.sqrt(n_ln))
q_sphere = sample_components((n_ln, d_ln), rng=g)
q_sphere *= np.sqrt(d_ln) / np.linalg.norm(q_sphere, axis=1, keepdims=True)  # every ‖q‖² = d exactly
for name, q_case, k_case, var_theory in (("q on the sphere, k i.i.d.", q_sphere, k_iid, d_ln),
                                         ("q LayerNorm, k i.i.d.", q_ln, k_iid, d_ln),
                                         ("q and k both LayerNorm", q_ln, k_ln, d_ln**2 / (d_ln - 1))):
    st_ln = variance.sample_summary(np.einsum("ij,ij->i", q_case, k_case))
    verify_close(f"simulated, {name}: Var(q·k)", st_ln["var"], var_theory, se=st_ln["se_var"])
print(f"both LayerNorm: {1 / (d_ln - 1):.0%} more than d at d = {d_ln}; {1 / 63:.1%} more at d = 64")
del q_ln, k_ln, k_iid, z12, q_sphere, q_case, k_case  # 200,000 × 8 draws the kernel need not keep (53 MB)

# %% [markdown] tags=["deep-dive"]
# At $d = 8$ two LayerNorm outputs give $64/7 \approx 9.14$, not 8: 14 % more. The variance is
# $d\cdot d/(d - 1)$, and the factor $d/(d - 1)$ is $1/(d - 1)$ above 1, so at $d = 64$ it is 1.6 % more. (In a
# transformer, $q$ and $k$ are linear maps of LayerNorm outputs; notebook 08 follows that path.)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: two ways to break independence
#
# Why care: after training, queries and keys are no longer independent; these cases show which
# step of the proof fails and by how much. At $d_k = 64$, each keeping every component at mean 0
# and variance 1 (notebook 08 takes the correlated case further):
#
# - **$q_i$ and $k_i$ correlated**, $k_i = \rho\, q_i + \sqrt{1-\rho^2}\, \varepsilon_i$, $\rho = 0.5$, with the $\varepsilon_i$
#   fresh draws independent of $q$ and of each other (mean 0, variance 1): $E[q_ik_i] = \rho$ for any distribution, so the mean is $\rho\, d_k$; for normal components
#   $E[q_i^2k_i^2] = 1 + 2\rho^2$, so the variance is $(1 + \rho^2)\, d_k$.
# - **the terms dependent**: one random $x$ copied into every component of $q$, one $y$ into
#   every component of $k$. Sections 3 and 4 hold, adding variances fails: every covariance is 1, so
#   $\mathrm{Var}(q\cdot k) = d_k + d_k(d_k - 1) = d_k^2$.

# %% tags=["deep-dive"]
g = make_rng(204)  # the deep dive's own stream: the main line never depends on it
d_big, n_big, rho = 64, 20_000, 0.5
q = sample_components((n_big, d_big), rng=g)
k_corr = rho * q + np.sqrt(1 - rho**2) * sample_components((n_big, d_big), rng=g)
x_one, y_one = sample_components(n_big, rng=g), sample_components(n_big, rng=g)
cases = {
    "corr(q_i, k_i) = 0.5": (np.sum(q * k_corr, axis=1), rho * d_big, (1 + rho**2) * d_big),
    "all components copied": (x_one * y_one * d_big, 0.0, d_big**2),  # q·k = d_k · x y
}
for name, (s_case, mean_theory, var_theory) in cases.items():
    st_case = variance.sample_summary(s_case)
    verify_close(f"{name}: mean", st_case["mean"], mean_theory, se=st_case["se_mean"])
    verify_close(f"{name}: variance", st_case["var"], var_theory, se=st_case["se_var"])
del q, k_corr, cases, s_case  # 20,000 × 64 draws the kernel need not keep (20 MB)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: any means and variances, and what the softmax sees
#
# Why care: trained queries and keys do not have mean 0; does dividing by $\sqrt{d_k}$ still work?
#
# Sections 3–5 never needed mean 0 or variance 1. With independent components of mean
# $\mu_q$, variance $\sigma_q^2$ (in $q$) and $\mu_k$, $\sigma_k^2$ (in $k$), section 4 with
# $E[X^2] = \sigma^2 + \mu^2$ and section 5 give
#
# $$E[q\cdot k] = d_k\,\mu_q\mu_k, \qquad
# \mathrm{Var}(q\cdot k) = d_k\big[(\sigma_q^2 + \mu_q^2)(\sigma_k^2 + \mu_k^2) - \mu_q^2\mu_k^2\big].$$
#
# Six parameter sets at $d_k = 16$, 50 000 pairs each. Variance 2 on both sides gives $4d_k$;
# variance 2 for $q$ with 0.5 for $k$ gives back $d_k$: at mean 0 only the product
# $\sigma_q^2\sigma_k^2$ matters.

# %% tags=["deep-dive"]
g = make_rng(205)  # the deep dive's own stream: the main line never depends on it
params = [(0.0, 1.0, 0.0, 1.0), (0.0, 2.0, 0.0, 2.0), (0.0, 2.0, 0.0, 0.5),
          (1.0, 1.0, 0.0, 1.0), (1.0, 1.0, 2.0, 3.0), (-0.5, 0.25, 2.0, 1.0)]
for mean_q, var_q, mean_k, var_k in params:
    th = theory.dot_product_moments(16, mean_q, var_q, mean_k, var_k)
    st_gen = variance.sample_summary(sample_dot_products(16, 50_000, mean_q=mean_q, var_q=var_q, mean_k=mean_k,
                                                         var_k=var_k, rng=g))
    label = f"μ_q={mean_q}, σ_q²={var_q}, μ_k={mean_k}, σ_k²={var_k}"
    verify_close(f"{label}: mean", st_gen["mean"], th.mean, se=st_gen["se_mean"])
    verify_close(f"{label}: variance", st_gen["var"], th.var, se=st_gen["se_var"])

# %% [markdown] tags=["deep-dive"]
# ### What one row of logits sees
#
# After dividing by $\sqrt{d_k}$ the mean $\sqrt{d_k}\,\mu_q\mu_k$ still grows. But the softmax
# sees one row at a time: one **fixed** query $q$ against keys independent of it,
#
# $$E[q\cdot k \mid q] = \mu_k\sum_i q_i, \qquad \mathrm{Var}(q\cdot k\mid q) = \sigma_k^2\,\lVert q\rVert^2 .$$
#
# The mean is the same for every key: a shift of the whole row, which the softmax ignores
# ($\mathrm{softmax}(z + c) = \mathrm{softmax}(z)$). What remains is the variance within the row,
# $\sigma_k^2\lVert q\rVert^2 \approx \sigma_k^2 d_k(\sigma_q^2 + \mu_q^2)$; divided by $d_k$ it stays
# near $\sigma_k^2(\sigma_q^2 + \mu_q^2)$: constant in $d_k$, though not 1. Components of mean 0.5
# and variance 1, 8 fixed queries, 2000 keys each:

# %% tags=["deep-dive"]
from sdpa_helpers.attention import softmax  # the deep dive's own import

g = make_rng(206)  # the deep dive's own stream: the main line never depends on it
mu = 0.5
for d in (16, 256, 4096):
    Q_rows = sample_components((8, d), mean=mu, rng=g)  # 8 fixed queries
    S = sample_components((2000, d), mean=mu, rng=g) @ Q_rows.T / np.sqrt(d)  # (2000 keys, 8 rows), scaled
    spread_row, expected = S.var(axis=0, ddof=1), theory.within_row_moments(Q_rows, mu, 1.0).var / d
    z = (spread_row - expected) / (expected * np.sqrt(2 / 1999))  # within a row the logits are exactly normal
    print(f"d_k = {d:4d}: row shifts {S.mean(axis=0).min():5.2f} to {S.mean(axis=0).max():5.2f} | variance within "
          f"a row: median {np.median(spread_row):.2f}, range {spread_row.min():.2f} to {spread_row.max():.2f} "
          f"(σ_k²(σ_q²+μ_q²) = {1 + mu**2})")
    verify(f"  every row's variance is σ_k²‖q‖²/d_k (d_k = {d})", np.abs(z).max() < 4, f"largest {np.abs(z).max():.1f} SE")
verify("softmax ignores the row's shift", np.allclose(softmax(S[:, 0]), softmax(S[:, 0] - S[:, 0].mean())))

# %% [markdown] tags=["deep-dive"]
# The row's shift grows like $\sqrt{d_k}\,\mu_q\mu_k$, but the variance within a row stays near
# $\sigma_k^2(\sigma_q^2 + \mu_q^2) = 1.25$ ($\lVert q\rVert^2/d_k$ varies between queries by about
# $\sqrt{3/d_k}$ here). So non-zero means do not defeat the scaling.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: not only normal components — same variance, different shapes
#
# Why care: the derivation never used the shape of the distribution, but the softmax also feels
# the shape. Four shapes, each with mean 0
# and variance 1: normal, uniform on $[-\sqrt3, \sqrt3]$, Rademacher ($\pm1$) and Laplace
# (density proportional to $e^{-\sqrt2\lvert x\rvert}$). At $d_k = 1$, $q\cdot k$ is one
# product and the shapes differ wildly.
#
# **Predict:** at $d_k = 16$, will the four histograms look alike?
#
# Rows: distribution; columns: $d_k$; 4 000 dot products per panel, x axes over
# $\pm 4.5\sqrt{d_k}$. Rademacher $q\cdot k$ takes integer values two apart: stems of height
# probability/2, comparable with a density:

# %% tags=["deep-dive"] alt="A grid of histograms of q·k, 4000 draws each: rows normal, uniform, Rademacher (stems at integers two apart, height = probability/2, comparable with a density) and Laplace components; columns d_k = 1, 4, 16 and 256, each against the normal curve of variance d_k. At d_k = 1 the shapes differ wildly; at 16 normal, uniform and Rademacher follow the curve while Laplace is still sharper at the peak; at 256 all four look alike."
grid = {dist: {d: sample_dot_products(d, 4000, dist=dist, rng=rng) for d in (1, 4, 16, 256)} for dist in DISTRIBUTIONS}
for dist in DISTRIBUTIONS:
    st = variance.sample_summary(grid[dist][16])
    verify_close(f"simulated, {dist} components, d_k = 16: Var(q·k)", st["var"], 16, se=st["se_var"])
variance_plots.histogram_grid(grid)

# %% [markdown] tags=["deep-dive"]
# The variance is $d_k$ in every row, as the proof says. The shape drifts towards a normal curve,
# $N(0, d_k)$, as a sum of many independent terms does (the central limit theorem): at
# $d_k = 16$ normal, uniform and Rademacher already hug the curve, but Laplace is still visibly
# sharper at the peak; by $d_k = 256$ all four look alike. Laplace's heavy tails take longer to wash out
# (deep dive below).
#
# Live: drag $d_k$ from 1 to 4096 and switch the components; the table compares sample
# mean, variance and the shape's peakedness (excess kurtosis) with the theory.

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer: drag d_k from 1 to 4096 and switch the component distribution; a histogram of q·k against the normal curve of variance d_k, and a table of sample mean, variance and excess kurtosis against theory; opens at d_k = 16."
VarianceExplorer(d_k=16)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how fast the shape becomes normal (excess kurtosis)
#
# Why care: the variance is right from $d_k = 1$, but the softmax also feels the tails; this
# measures how far from normal $q\cdot k$ still is.
#
# $$\kappa(Z) = \frac{E[(Z - \mu)^4]}{\sigma^4} - 3$$
#
# is 0 for a normal, positive for a sharp peak with heavy tails. For one term $Z = q_ik_i$ with
# independent mean-0 unit-variance factors, $E[Z^4] = E[q_i^4]\,E[k_i^4] = m_4^2$, so
# $\kappa(q_ik_i) = m_4^2 - 3$. For the sum $S = \sum_i Z_i$ of $d_k$ independent copies (mean 0,
# variance 1), expand $E[S^4]$: every term holding a lone $Z_i$ vanishes, which leaves $d_k$ terms
# $E[Z_i^4]$ and $3d_k(d_k - 1)$ terms $E[Z_i^2]E[Z_j^2] = 1$. With $\mathrm{Var}(S) = d_k$:
#
# $$\kappa(q\cdot k) = \frac{d_k\,E[Z^4] + 3d_k(d_k-1)}{d_k^2} - 3 = \frac{m_4^2 - 3}{d_k}.$$
#
# The fourth moments $m_4 = 3 + \kappa_x$ (3, 9/5, 1 and 6), by simulation, then $\kappa(q\cdot k)$
# at $d_k = 16$ and 256:

# %% tags=["deep-dive"]
from sdpa_helpers.sampling import EXCESS_KURTOSIS  # the deep dive's own import

g = make_rng(207)  # the deep dive's own stream: the main line never depends on it
for dist in DISTRIBUTIONS:
    x4 = sample_components(400_000, dist=dist, rng=g) ** 4
    if dist == "rademacher":  # x⁴ = 1 exactly: no randomness left
        verify("rademacher: E[x⁴] = 1 exactly", np.all(x4 == 1.0))
    else:
        verify_close(f"{dist}: E[x⁴]", x4.mean(), 3 + EXCESS_KURTOSIS[dist], se=x4.std() / np.sqrt(x4.size))
kappa = {dist: [theory.dot_product_excess_kurtosis(d, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist]) for d in (16, 256)]
         for dist in DISTRIBUTIONS}
print("excess kurtosis of q·k at d_k = 16 and 256:", {dist: [round(v, 3) for v in kv] for dist, kv in kappa.items()})
laplace_at_1 = theory.dot_product_excess_kurtosis(1, EXCESS_KURTOSIS["laplace"], EXCESS_KURTOSIS["laplace"])
print(f"Laplace: κ = {laplace_at_1:g} at d_k = 1, so κ ≤ 1 needs d_k ≥ {laplace_at_1:g}")

# %% [markdown] tags=["deep-dive"]
# At $d_k = 16$ normal, uniform and Rademacher have $|\kappa| \le 0.375$, but Laplace still has
# $\kappa \approx 2.06$ — the sharper peak in the figure — and needs $d_k \ge 33$ for $\kappa \le 1$.
# At $d_k = 256$ all four have $|\kappa| \le 0.13$.
#
# ### The excess kurtosis of q·k by simulation, with SE by batching
#
# We spend the same number of products on each $d_k$: $800\,000/d_k$ pairs. A sample
# kurtosis has no simple SE formula, so we estimate it by *batching*: split the sample into
# 20 batches, compute $\kappa$ in each, and divide the spread of the 20 values by
# $\sqrt{20}$. This SE is itself uncertain (20 values), and for the heavy-tailed Laplace
# rows it is rough (rare extreme values dominate, and it tends to come out too small); so
# 4 SE is a looser guarantee here.

# %% tags=["deep-dive"]
g = make_rng(208)  # the deep dive's own stream: the main line never depends on it
kurt_d_ks = (1, 4, 16)
kurt = {dist: {"sample": [], "se": [], "theory": []} for dist in DISTRIBUTIONS}
for dist in DISTRIBUTIONS:
    for d in kurt_d_ks:
        s_k = sample_dot_products(d, 800_000 // d, dist=dist, rng=g)
        batches = [variance.sample_summary(b)["kurt"] for b in s_k.reshape(20, -1)]
        value, se = variance.sample_summary(s_k)["kurt"], np.std(batches, ddof=1) / np.sqrt(20)
        expected = theory.dot_product_excess_kurtosis(d, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])
        verify_close(f"κ(q·k), {dist}, d_k = {d}", value, expected, se=se)
        for key, v in (("sample", value), ("se", se), ("theory", expected)):
            kurt[dist][key].append(v)

# %% [markdown] tags=["deep-dive"]
# On log–log axes the theory is a line of slope $-1$. A simulated point is shown only
# where it is resolved (the theory more than 4 SE from 0; the uniform's small $0.24/d_k$
# sinks into the noise first). Rademacher values are negative and drawn as $|\kappa|$ with
# hollow markers.

# %% tags=["deep-dive"] alt="Log-log plot of the excess kurtosis of q·k against d_k = 1, 4, 16: theory lines of slope -1 for each distribution (Laplace 33/d_k, normal 6/d_k, Rademacher |−2/d_k| with hollow markers, uniform 0.24/d_k); simulated points with error bars sit on the lines where resolved."
shown = {dist: np.where(np.abs(kurt[dist]["theory"]) > 4 * np.array(kurt[dist]["se"]),
                        kurt[dist]["sample"], np.nan) for dist in DISTRIBUTIONS}
ax = variance_plots.kurtosis_decay(kurt_d_ks, shown, {d: kurt[d]["se"] for d in DISTRIBUTIONS},
                                   {d: kurt[d]["theory"] for d in DISTRIBUTIONS})
ax.figure

# %% [markdown] tags=["deep-dive"]
# ### Try it
#
# With Laplace components and $d_k = 8$, what is the excess kurtosis of $q\cdot k$ (three
# significant figures)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer
_ = check("02.kurtosis_laplace", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $m_4 = E[x^4] = 6$. One product has $E[(q_ik_i)^4] = 36$ and variance 1, so
# $\kappa(q_ik_i) = 33$ (not the component's own $6 - 3 = 3$). The sum of 8 independent
# terms divides it by 8: $33/8 = 4.125$, or $4.13$ to three significant figures.
# </details>

# %% [markdown]
# ## Summary
#
# - Four rules: the mean is linear; a sum's variance adds twice the covariance; independence
#   factors means, so variances add; a product's variance is $E[X^2]E[Y^2]$ minus the squared mean.
# - Hence $E[q\cdot k] = 0$ and $\mathrm{Var}(q\cdot k) = d_k$ for independent mean-0, variance-1
#   components of any distribution, using independence within each pair and between pairs.
#
# ## Exercises
#
# Each is checked by `check(key, answer)`: numbers to three significant figures, integers exactly.
#
# **Exercise 1 (recall).** $\mathrm{Var}(X) = 2$, $\mathrm{Var}(Y) = 3$ and $\mathrm{Cov}(X, Y) = -1$. What is
# $\mathrm{Var}(X + Y)$ (an integer)?

# %%
answer = None  # replace None with your answer
_ = check("02.var_sum_dependent", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Section 2: $2 + 3 + 2\cdot(-1) = 3$. Adding the variances (5) would treat $X$ and $Y$ as uncorrelated.
# </details>
#
# **Exercise 2 (conceptual).** Design an exact check. You want to enumerate $X$, $Y$ independent,
# each uniform on a short list, and tell $\mathrm{Var}(XY) = E[X^2]E[Y^2] - (E[X]E[Y])^2$ from
# the shortcut $\mathrm{Var}(X)\,\mathrm{Var}(Y)$. Which list works: (a) $[-1, 1]$, (b) $[-1, 0, 1]$,
# (c) $[1, 2]$, (d) $[-2, 2]$? Answer with a letter, e.g. `'a'`.

# %%
answer = None  # replace None with a letter
_ = check("02.exact_case_design", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (c). With $E[X^2] = \sigma_X^2 + \mu_X^2$, the rule minus the shortcut is
# $\sigma_X^2\mu_Y^2 + \sigma_Y^2\mu_X^2$: zero whenever the means are 0, whatever the values.
# (a), (b) and (d) all have mean 0. For $[1, 2]$: mean 3/2, variance 1/4, $E[X^2] = 5/2$, so the
# rule gives $25/4 - 81/16 = 19/16$ and the shortcut $1/16$.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3 (apply, with means).** $d_k = 32$; each component of $q$ has mean 1 and variance 2, each
# component of $k$ has mean $-1$ and variance 1 (all independent). Give
# $(E[q\cdot k], \mathrm{Var}(q\cdot k))$ as a pair (integers).

# %% tags=["deep-dive"]
answer = None  # replace None with a pair (mean, variance)
_ = check("02.general", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Mean: $32 \cdot 1 \cdot (-1) = -32$. One product: $E[X^2] = 2 + 1 = 3$, $E[Y^2] = 1 + 1 = 2$, so
# $\mathrm{Var}(XY) = 3\cdot 2 - (1\cdot(-1))^2 = 5$ (not $2\cdot 1$: the means matter), and
# $\mathrm{Var}(q\cdot k) = 32\cdot 5 = 160$. Answer: `(-32, 160)`.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4 (probe an assumption).** $q$ has $d_k = 16$ independent standard normal components. $k$ does not: one
# standard normal number $y$, independent of $q$, is copied into all 16 components. What is
# $\mathrm{Var}(q\cdot k)$ (an integer)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer
_ = check("02.copied_key", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# The terms $q_iy$ share $y$, so section 5's sum of independent terms does not apply. Factor $y$
# out: $q\cdot k = yS$ with $S = q_1 + \dots + q_{16}$. $S$ is computed from $q$ alone, so it is
# independent of $y$ (section 3), and section 5 gives $E[S] = 0$, $\mathrm{Var}(S) = 16$, so
# $E[S^2] = 16$. Section 4: $\mathrm{Var}(yS) = E[y^2]E[S^2] - (E[y]E[S])^2 = 1\cdot 16 - 0 = 16$.
# The terms are dependent, yet the variance is still $d_k$. (Copying into $q$ as well gives
# $q\cdot k = 16\,xy$ and variance $16^2 = 256$.)
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5 (apply).** $d_k = 64$, and every component of $q$ and $k$ has mean 0 and
# variance 3 (all independent). What is $\mathrm{Var}(q\cdot k)$ (an integer)?

# %% tags=["deep-dive"]
answer = None  # replace None with your answer
_ = check("02.var_components_3", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# One product: $E[X^2]E[Y^2] - (E[X]E[Y])^2 = 3\cdot 3 - 0 = 9$ (at mean 0, $E[X^2] = \mathrm{Var}(X)$).
# Sum of 64 independent terms: $64 \cdot 9 = 576$, not the $64$ of unit components.
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [03 — Small experiments mislead](03_small_experiments.ipynb)
