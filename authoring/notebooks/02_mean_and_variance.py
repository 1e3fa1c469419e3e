# %% [markdown]
# # Mean and variance of q·k, one step at a time
#
# Notebook 01 measured it: for random vectors, $q\cdot k$ spreads like $\sqrt{d_k}$. This
# notebook proves it. We derive the mean and the variance of $q\cdot k$ in four small
# steps; after each step, a simulation checks it against the closed form in
# `sdpa_helpers.theory`.
#
# **Learning goals**
# - Derive $E[q\cdot k] = 0$ and $\mathrm{Var}(q\cdot k) = d_k$, and say exactly where independence is used.
# - Check each step by Monte Carlo, with a tolerance taken from the standard error.
# - Use the general formula for components with any means and variances.
# - See that other component distributions give the same variance, and that $q\cdot k$ approaches a normal as $d_k$ grows.
#
# **Prerequisites**
# - [01 — Dot products](01_dot_products.ipynb).
# - Expectation $E[\cdot]$, variance $\mathrm{Var}(X) = E[X^2] - E[X]^2$, covariance, and what *independent* means.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import math
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, theory
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import variance as var_plots
from sdpa_helpers.sampling import DISTRIBUTIONS, sample_components, sample_dot_products
from sdpa_helpers.widgets.variance import VarianceExplorer

SEED = 2
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The claim, and how we check it
#
# Take $q, k \in \mathbb{R}^{d_k}$ with
# 1. every component of mean 0 and variance 1, and
# 2. all $2d_k$ components independent of each other.
#
# Then
#
# $$E[q\cdot k] = 0, \qquad \mathrm{Var}(q\cdot k) = d_k .$$
#
# A simulation never gives the exact value: an average of $n$ random numbers misses its
# expectation by about one *standard error* (SE). For a sample mean the SE is $s/\sqrt{n}$
# ($s$ the sample standard deviation); for a sample variance it is
# $\sqrt{(m_4 - s^4)/n}$ ($m_4$ the sample fourth central moment). Every check below
# accepts a claim when the simulation lands within **4 SE** of the theory; a true claim
# fails that by chance about 6 times in 100 000. Here are the tools:

# %%
def mean_and_se(x):
    """Sample mean of x and its standard error s / √n."""
    x = np.asarray(x, dtype=float)
    return x.mean(), x.std(ddof=1) / np.sqrt(x.size)


def var_and_se(x):
    """Unbiased sample variance of x and its standard error √((m4 − s⁴) / n)."""
    x = np.asarray(x, dtype=float)
    c = x - x.mean()
    var = np.sum(c**2) / (x.size - 1)
    return var, np.sqrt((np.mean(c**4) - var**2) / x.size)


def report(label, estimate, se, expected):
    """Print simulation ± SE against the theory, and assert they agree within 4 SE."""
    if se == 0:  # no randomness left (e.g. x⁴ = 1 for x = ±1): demand equality
        print(f"{label:<34} simulation {estimate:>9.4f} (exact)   theory {expected:>8.4f}")
        assert estimate == expected, f"{label}: {estimate} != {expected}"
        return
    z = (estimate - expected) / se
    print(f"{label:<34} simulation {estimate:>9.4f} ± {se:.4f}   theory {expected:>8.4f}   ({z:+.1f} SE)")
    assert abs(z) < 4, f"{label}: {z:.1f} standard errors from the theory"


print(f"chance that a normal estimate lands more than 4 SE from the truth: {math.erfc(4 / math.sqrt(2)):.1e}")

# %% [markdown]
# For the step-by-step checks we fix $d_k = 8$ and draw $n = 100\,000$ pairs $(q, k)$ as
# the rows of two $(n, d_k)$ matrices. Their Hadamard product $P = Q\circ K$ holds every
# term $q_i k_i$ (one pair per row, one term per column), and its row sums are the dot
# products (notebook 01, section 5). First the claim as a whole:

# %%
d_k, n = 8, 100_000
q = sample_components((n, d_k), rng=rng)  # (n, d_k): one query per row
k = sample_components((n, d_k), rng=rng)  # (n, d_k): one key per row
P = q * k                                 # (n, d_k): the terms q_i k_i
dots = P.sum(axis=1)                      # (n,): q · k for each pair

claim = theory.dot_product_moments(d_k)
report("E[q·k]", *mean_and_se(dots), claim.mean)
report("Var(q·k)", *var_and_se(dots), claim.var)

# %% [markdown]
# Now the four steps that explain these two numbers.
#
# ## 2. Step 1 — linearity of expectation
#
# The expectation of a sum is the sum of the expectations:
#
# $$E[q\cdot k] = E\Big[\sum_{i=1}^{d_k} q_i k_i\Big] = \sum_{i=1}^{d_k} E[q_i k_i].$$
#
# This step uses **no independence** at all; it holds for any random numbers. It even holds
# exactly for sample averages: the mean of the row sums of $P$ equals the sum of its column
# means, whatever the numbers are — here also for the dependent case $k = q$:

# %%
print(f"mean of row sums {P.sum(axis=1).mean():+.6f} = sum of column means {P.mean(axis=0).sum():+.6f}")
assert np.isclose(P.sum(axis=1).mean(), P.mean(axis=0).sum())

P_dependent = q * q  # k = q: each term is q_i², certainly not independent of q_i
print(f"with k = q: {P_dependent.sum(axis=1).mean():.6f} = {P_dependent.mean(axis=0).sum():.6f}")
assert np.isclose(P_dependent.sum(axis=1).mean(), P_dependent.mean(axis=0).sum())

# %% [markdown]
# ## 3. Step 2 — independence of $q_i$ and $k_i$: $E[q_i k_i] = E[q_i]\,E[k_i]$
#
# For **independent** $X$ and $Y$, the expectation of the product is the product of the
# expectations: $E[XY] = E[X]\,E[Y]$. Here is the first use of independence, between the
# two factors $q_i$ and $k_i$ of one term:
#
# $$E[q_i k_i] = E[q_i]\,E[k_i] = 0\cdot 0 = 0 .$$
#
# Each of the 8 columns of $P$ should average to 0. The rule also holds for non-zero
# means: with $E[X] = 1$ and $E[Y] = 2$, $E[XY] = 2$ (`theory.product_moments`):

# %%
for i in range(d_k):
    report(f"E[q_{i + 1} k_{i + 1}]", *mean_and_se(P[:, i]), theory.product_moments().mean)

x = sample_components(n, mean=1.0, rng=rng)
y = sample_components(n, mean=2.0, rng=rng)
report("E[XY], E[X] = 1, E[Y] = 2", *mean_and_se(x * y), theory.product_moments(mean_x=1.0, mean_y=2.0).mean)

# %% [markdown]
# With steps 1 and 2, the mean is settled: $E[q\cdot k] = \sum_i E[q_i k_i] = \sum_i 0 = 0$.
#
# ## 4. Step 3 — the variance of one product
#
# Start from the definition $\mathrm{Var}(Z) = E[Z^2] - E[Z]^2$ with $Z = XY$:
#
# $$\mathrm{Var}(XY) = E[X^2 Y^2] - E[XY]^2 .$$
#
# If $X$ and $Y$ are independent, so are $X^2$ and $Y^2$, and step 2 applies to both
# expectations:
#
# $$E[X^2Y^2] = E[X^2]\,E[Y^2], \qquad E[XY]^2 = E[X]^2E[Y]^2 .$$
#
# Check the first one by simulation, with $X$ of mean 1 and variance 2 and $Y$ of mean
# $-1$ and variance $0.5$ (so that every term of the formula matters). Recall
# $E[X^2] = \mathrm{Var}(X) + E[X]^2$:

# %%
mean_x, var_x, mean_y, var_y = 1.0, 2.0, -1.0, 0.5
x = sample_components(n, mean=mean_x, var=var_x, rng=rng)
y = sample_components(n, mean=mean_y, var=var_y, rng=rng)
e_x2, e_y2 = var_x + mean_x**2, var_y + mean_y**2
report("E[X²Y²]", *mean_and_se(x**2 * y**2), e_x2 * e_y2)
print(f"E[X²] = {e_x2}, E[Y²] = {e_y2}: their product is {e_x2 * e_y2}")

# %% [markdown]
# Put together, with $E[X^2] = \sigma_x^2 + \mu_x^2$:
#
# $$\mathrm{Var}(XY) = (\sigma_x^2 + \mu_x^2)(\sigma_y^2 + \mu_y^2) - \mu_x^2\mu_y^2 .$$
#
# For our unit components ($\mu = 0$, $\sigma^2 = 1$): $\mathrm{Var}(q_i k_i) = 1\cdot 1 - 0 = 1$.
# Both cases against `theory.product_moments`, and each of the 8 columns of $P$:

# %%
report("Var(XY), the X, Y above", *var_and_se(x * y), theory.product_moments(mean_x, var_x, mean_y, var_y).var)
for i in range(d_k):
    report(f"Var(q_{i + 1} k_{i + 1})", *var_and_se(P[:, i]), theory.product_moments().var)

# %% [markdown]
# ## 5. Step 4 — the variance of a sum of independent terms
#
# For any random numbers $Z_1, \dots, Z_{d_k}$,
#
# $$\mathrm{Var}\Big(\sum_i Z_i\Big) = \sum_i \mathrm{Var}(Z_i) + \sum_{i \ne j} \mathrm{Cov}(Z_i, Z_j).$$
#
# With $Z_i = q_i k_i$: for $i \ne j$ the pairs $(q_i, k_i)$ and $(q_j, k_j)$ are
# independent, so $Z_i$ and $Z_j$ are too, and $\mathrm{Cov}(Z_i, Z_j) = 0$. This is a
# second *kind* of independence: steps 2 and 3 needed it within one pair, this step needs it
# between **different terms**. The sample covariance matrix
# of the 8 columns of $P$ should be the identity: 1 on the diagonal (step 3), 0 off it.
# A sample covariance is a mean of products of centred columns, so its SE is the standard
# deviation of those products over $\sqrt{n}$:

# %%
C = np.cov(P, rowvar=False)  # (d_k, d_k): covariance of the terms
centred = P - P.mean(axis=0)  # (n, d_k)
se_cov = np.array([[np.std(centred[:, i] * centred[:, j], ddof=1) for j in range(d_k)]
                   for i in range(d_k)]) / np.sqrt(n)  # (d_k, d_k)
off = ~np.eye(d_k, dtype=bool)
z_off = C[off] / se_cov[off]
print(f"{off.sum()} off-diagonal covariances: largest |Cov| = {np.abs(C[off]).max():.4f}, "
      f"largest |Cov| / SE = {np.abs(z_off).max():.1f}")
assert np.all(np.abs(z_off) < 4)
ax = var_plots.covariance_heatmap(C)
ax.set_title(r"sample $\mathrm{Cov}(q_i k_i,\, q_j k_j)$, $d_k = 8$")
ax.figure

# %% [markdown]
# With no covariances left, the variance of the sum is the sum of $d_k$ variances of 1:
#
# $$\mathrm{Var}(q\cdot k) = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k .$$
#
# The sum of all entries of the covariance matrix *is* the variance of the row sums
# (exactly, for sample values too), and the simulation agrees with $d_k$ at every size
# we try (10 000 pairs each):

# %%
assert np.isclose(C.sum(), np.var(dots, ddof=1))
print(f"sum of all entries of C = {C.sum():.4f} = sample Var(q·k) = {np.var(dots, ddof=1):.4f}")
for d in (1, 4, 16, 64, 256):
    report(f"Var(q·k), d_k = {d}", *var_and_se(sample_dot_products(d, 10_000, rng=rng)),
           theory.dot_product_moments(d).var)

# %% [markdown]
# ## 6. Where independence was used — and what breaks without it
#
# | step | result | independence used |
# |---|---|---|
# | 1 | $E[\sum_i q_ik_i] = \sum_i E[q_ik_i]$ | none |
# | 2 | $E[q_ik_i] = E[q_i]E[k_i]$ | between $q_i$ and $k_i$ |
# | 3 | $E[q_i^2k_i^2] = E[q_i^2]E[k_i^2]$ | between $q_i$ and $k_i$ |
# | 4 | $\mathrm{Cov}(q_ik_i, q_jk_j) = 0$ | between the pairs $(q_i, k_i)$ and $(q_j, k_j)$ |
#
# Three ways to break it, at $d_k = 64$, each keeping every component at mean 0 and
# variance 1:
#
# - **$k = q$.** The two factors of a term are the same number, so steps 2 and 3 fail:
#   $E[q_i q_i] = E[q_i^2] = 1$, not 0, and $E[q_i^4] = 3 \ne E[q_i^2]^2$ for normal
#   components. The terms $q_i^2$ are still independent of each other (step 4 holds), so
#   $E[q\cdot q] = d_k$ and $\mathrm{Var}(q\cdot q) = d_k\,\mathrm{Var}(q_i^2) = d_k(3 - 1) = 2d_k$.
# - **$q_i$ and $k_i$ correlated**, $k_i = \rho\, q_i + \sqrt{1-\rho^2}\, z_i$ with fresh
#   normal $z_i$ and $\rho = 0.5$. Steps 2 and 3 fail again: $E[q_ik_i] = \rho$ and
#   $E[q_i^2k_i^2] = 3\rho^2 + (1 - \rho^2) = 1 + 2\rho^2$, so one term has variance
#   $1 + 2\rho^2 - \rho^2 = 1 + \rho^2$. Step 4 still holds, so the mean is $\rho\, d_k$
#   and the variance $(1 + \rho^2)\, d_k$.
# - **the terms dependent**: one random number $x$ copied into every component of $q$,
#   one $y$ into every component of $k$. Each pair is still independent within itself, so
#   steps 2 and 3 hold; but step 4 fails: every covariance is $\mathrm{Var}(xy) = 1$, so
#   $\mathrm{Var}(q\cdot k) = d_k + d_k(d_k - 1) = d_k^2$: the spread grows like $d_k$, not $\sqrt{d_k}$.

# %%
d_big, n_big, rho = 64, 20_000, 0.5
q = sample_components((n_big, d_big), rng=rng)
z = sample_components((n_big, d_big), rng=rng)
k_corr = rho * q + np.sqrt(1 - rho**2) * z
x = sample_components((n_big, 1), rng=rng)
y = sample_components((n_big, 1), rng=rng)
cases = {
    "k = q": (np.sum(q * q, axis=1), d_big, 2 * d_big),
    "corr(q_i, k_i) = 0.5": (np.sum(q * k_corr, axis=1), rho * d_big, (1 + rho**2) * d_big),
    "all components copied": ((x * y).ravel() * d_big, 0.0, d_big**2),  # q·k = d_k · x y
}
print(f"independent components would give mean 0 and variance {theory.dot_product_moments(d_big).var:g}")
for name, (s, mean_theory, var_theory) in cases.items():
    report(f"{name}: mean", *mean_and_se(s), mean_theory)
    report(f"{name}: variance", *var_and_se(s), var_theory)

# %% [markdown]
# The mean of $q\cdot q$ is about 64, not 0, correlated pairs give about 32, and copied
# components a variance of about $4096 = 64^2$ instead of 64. After training, queries and
# keys *do* correlate; notebook 08 comes back to this.
#
# ## 7. The general formula
#
# Nothing in steps 1–4 needed mean 0 or variance 1. With components of mean $\mu_q$,
# variance $\sigma_q^2$ (for $q$) and $\mu_k$, $\sigma_k^2$ (for $k$), all independent,
#
# $$E[q\cdot k] = d_k\,\mu_q\mu_k, \qquad
# \mathrm{Var}(q\cdot k) = d_k\big[(\sigma_q^2 + \mu_q^2)(\sigma_k^2 + \mu_k^2) - \mu_q^2\mu_k^2\big].$$
#
# This is `theory.dot_product_moments`. A few parameter sets at $d_k = 16$, 50 000 pairs each:

# %%
d_gen, n_gen = 16, 50_000
params = [(0.0, 1.0, 0.0, 1.0), (0.0, 2.0, 0.0, 2.0), (0.0, 2.0, 0.0, 0.5),
          (1.0, 1.0, 0.0, 1.0), (1.0, 1.0, 2.0, 3.0), (-0.5, 0.25, 2.0, 1.0)]
print(f"{'μ_q':>5} {'σ_q²':>5} {'μ_k':>5} {'σ_k²':>5} | {'mean: theory':>12} {'sim':>8} {'SE':>6} "
      f"| {'var: theory':>11} {'sim':>8} {'SE':>6}")
for mean_q, var_q, mean_k, var_k in params:
    th = theory.dot_product_moments(d_gen, mean_q, var_q, mean_k, var_k)
    s = sample_dot_products(d_gen, n_gen, mean_q=mean_q, var_q=var_q, mean_k=mean_k, var_k=var_k, rng=rng)
    (m, se_m), (v, se_v) = mean_and_se(s), var_and_se(s)
    print(f"{mean_q:>5} {var_q:>5} {mean_k:>5} {var_k:>5} | {th.mean:>12.2f} {m:>8.2f} {se_m:>6.2f} "
          f"| {th.var:>11.2f} {v:>8.2f} {se_v:>6.2f}")
    assert abs(m - th.mean) < 4 * se_m and abs(v - th.var) < 4 * se_v

# %% [markdown]
# Two rows to notice. Components of variance 2 on both sides give $4d_k$: a factor 2 on
# each side multiplies the variance by 4. And variance 2 for $q$ with 0.5 for $k$ gives
# back $d_k$: only the product $\sigma_q^2\sigma_k^2$ matters when the means are 0. With
# non-zero means, the *mean* $d_k\mu_q\mu_k$ grows like $d_k$: dividing by $\sqrt{d_k}$
# still leaves a mean $\sqrt{d_k}\,\mu_q\mu_k$ that grows with $d_k$.
#
# ## 8. Not only Gaussians
#
# The derivation used means, variances and independence — never the shape of the
# distribution. So any components with mean 0 and variance 1 should give the same
# result. `sample_components` offers four, each standardised to mean 0 and variance 1:
#
# | `dist` | component | $E[x^4]$ |
# |---|---|---|
# | `"normal"` | $N(0, 1)$ | 3 |
# | `"uniform"` | uniform on $[-\sqrt3, \sqrt3]$ | 9/5 |
# | `"rademacher"` | $\pm 1$, probability ½ each | 1 |
# | `"laplace"` | Laplace, scale $1/\sqrt2$ (density $\propto e^{-\sqrt2\,\lvert x\rvert}$) | 6 |
#
# (The fourth moments are for section 10.) Mean and variance of $q\cdot k$ at $d_k = 16$,
# 50 000 pairs each:

# %%
for dist in DISTRIBUTIONS:
    s = sample_dot_products(16, 50_000, dist=dist, rng=rng)
    th = theory.dot_product_moments(16)
    report(f"{dist}: E[q·k]", *mean_and_se(s), th.mean)
    report(f"{dist}: Var(q·k)", *var_and_se(s), th.var)

# %% [markdown]
# ## 9. The shape: towards a normal of variance $d_k$
#
# Same mean, same variance — but not the same shape. At $d_k = 1$, $q\cdot k$ is a single
# product: with Rademacher components it takes only the values $-1$ and $+1$; the product
# of two normals is sharply peaked at 0; the Laplace one more so, with heavier tails.
#
# As $d_k$ grows, $q\cdot k$ becomes a sum of many independent terms of variance 1, and the
# **central limit theorem** says its distribution approaches the normal $N(0, d_k)$,
# whatever the components. First the Rademacher claim:

# %%
s = sample_dot_products(1, 1000, dist="rademacher", rng=rng)
print("values of q·k with Rademacher components at d_k = 1:", np.unique(s).tolist())
assert np.unique(s).tolist() == [-1.0, 1.0]

# %% [markdown]
# Now histograms of 4 000 dot products per panel (as many as in the explorer below) (rows: component distribution;
# columns: $d_k$ = 1, 4, 16, 256), each with the $N(0, d_k)$ density on top. The x axes
# span $\pm 4.5\sqrt{d_k}$, so the normal curve has the same shape in every panel. For
# Rademacher components $q\cdot k$ is an integer of the parity of $d_k$, so its bins are
# placed on these values (each bar at $d_k = 1$ is one value, $-1$ or $+1$).

# %%
grid_d_ks = (1, 4, 16, 256)
grid = {dist: {d: sample_dot_products(d, 4000, dist=dist, rng=rng) for d in grid_d_ks} for dist in DISTRIBUTIONS}
fig = var_plots.histogram_grid(grid)
fig

# %% [markdown]
# By $d_k = 16$ the four rows look alike, and at $d_k = 256$ you cannot tell them apart.
# Now the live version: drag $d_k$ from 1 to 4096 and switch the component distribution.
# The title and the table below the figure compare the sample mean and variance with the
# theory (the excess kurtosis comes in section 10).

# %% tags=["nbval-ignore-output"]
explorer = VarianceExplorer(d_k=16)
explorer

# %% [markdown]
# ## 10. How fast? The excess kurtosis
#
# To put a number on "close to normal", use the **excess kurtosis**
#
# $$\kappa(Z) = \frac{E[(Z - \mu)^4]}{\sigma^4} - 3,$$
#
# which is 0 for every normal, positive for peaked, heavy-tailed shapes, negative for
# flat ones. For one term $Z = q_ik_i$ with independent mean-0 unit-variance factors,
# independence once more gives $E[Z^4] = E[q_i^4]\,E[k_i^4] = m_4^2$, so
#
# $$\kappa(q_ik_i) = m_4^2 - 3 \qquad (m_4 = E[x^4] \text{ of one component}).$$
#
# For the sum $S = \sum_i Z_i$ of $d_k$ independent copies (mean 0, variance 1), expand
# $E[S^4]$: every term holding a lone $Z_i$ vanishes ($E[Z_i] = 0$), which leaves
# $d_k$ terms $E[Z_i^4]$ and $3d_k(d_k - 1)$ terms $E[Z_i^2]E[Z_j^2] = 1$. With
# $\mathrm{Var}(S) = d_k$:
#
# $$\kappa(q\cdot k) = \frac{d_k\,E[Z^4] + 3d_k(d_k-1)}{d_k^2} - 3 = \frac{E[Z^4] - 3}{d_k}
# = \frac{m_4^2 - 3}{d_k}.$$
#
# The excess kurtosis falls like $1/d_k$. First the fourth moments $m_4$ of the table in
# section 8, by simulation:

# %%
fourth_moment = {"normal": 3.0, "uniform": 9 / 5, "rademacher": 1.0, "laplace": 6.0}
for dist in DISTRIBUTIONS:
    x = sample_components(400_000, dist=dist, rng=rng)
    report(f"{dist}: E[x⁴]", *mean_and_se(x**4), fourth_moment[dist])
print("excess kurtosis of one product m_4² − 3:",
      {dist: round(m4**2 - 3, 2) for dist, m4 in fourth_moment.items()})

# %% [markdown]
# Now the excess kurtosis of $q\cdot k$ itself, at $d_k$ = 1, 4 and 16. A sample
# kurtosis is a noisy, skewed estimate when the tails are heavy, so we spend the same
# number of products on each $d_k$: $1\,600\,000/d_k$ pairs (1.6 million at $d_k = 1$,
# 100 000 at $d_k = 16$). Its SE has no simple formula, so we estimate it by *batching*:
# split the sample into 20 batches, compute $\kappa$ in each, and divide the spread of
# the 20 values by $\sqrt{20}$. This SE is itself uncertain (it comes from only 20
# values), and for the heavy-tailed Laplace rows it is rough (rare extreme values
# dominate, and it tends to come out too small); so 4 SE is a looser guarantee here
# than in section 1.

# %%
def excess_kurtosis(x):
    """Sample excess kurtosis: m4 / m2² − 3."""
    c = np.asarray(x, dtype=float) - np.mean(x)
    return np.mean(c**4) / np.mean(c**2) ** 2 - 3


kurt_d_ks = (1, 4, 16)
kurt = {dist: {"sample": [], "se": [], "theory": []} for dist in DISTRIBUTIONS}
print(f"{'dist':<11} {'d_k':>4} {'theory':>8} {'simulation':>11} {'SE':>7}")
for dist in DISTRIBUTIONS:
    for d in kurt_d_ks:
        s = sample_dot_products(d, 1_600_000 // d, dist=dist, rng=rng)
        batches = [excess_kurtosis(b) for b in s.reshape(20, -1)]
        value, se = excess_kurtosis(s), np.std(batches, ddof=1) / np.sqrt(20)
        expected = (fourth_moment[dist] ** 2 - 3) / d
        print(f"{dist:<11} {d:>4} {expected:>8.3f} {value:>11.3f} {se:>7.3f}")
        assert abs(value - expected) < 4 * se
        for key, v in (("sample", value), ("se", se), ("theory", expected)):
            kurt[dist][key].append(v)

# %% [markdown]
# On log–log axes the theory is a line of slope $-1$ for each distribution. The figure
# shows a simulated point only where it is resolved, that is where the theory is more
# than 4 SE from 0 (the uniform's small $0.24/d_k$ sinks into the noise first). The
# Rademacher values are negative and drawn as $|\kappa|$ with
# hollow markers.

# %%
shown = {dist: np.where(np.abs(kurt[dist]["theory"]) > 4 * np.array(kurt[dist]["se"]),
                        kurt[dist]["sample"], np.nan) for dist in DISTRIBUTIONS}
ax = var_plots.kurtosis_decay(kurt_d_ks, shown, {d: kurt[d]["se"] for d in DISTRIBUTIONS},
                              {d: kurt[d]["theory"] for d in DISTRIBUTIONS})
ax.figure

# %% [markdown]
# Laplace components start far from normal ($\kappa = 33$ at $d_k = 1$) and need
# $d_k \approx 33$ to get down to 1 — the more heavy-tailed the components, the larger the
# $d_k$ at which the normal picture becomes accurate. The variance, though, is $d_k$ from
# the very first dimension, for every distribution.
#
# ## Summary
#
# - Linearity (no independence needed) and $E[q_ik_i] = E[q_i]E[k_i]$ (independence within a pair) give $E[q\cdot k] = 0$.
# - $\mathrm{Var}(XY) = (\sigma_x^2 + \mu_x^2)(\sigma_y^2 + \mu_y^2) - \mu_x^2\mu_y^2$ for independent $X, Y$: 1 for unit components.
# - Independent terms have zero covariances, so the variances add: $\mathrm{Var}(q\cdot k) = d_k$.
# - Without independence the result fails: $k = q$ gives mean $d_k$; copied components give variance $d_k^2$.
# - In general $E[q\cdot k] = d_k\mu_q\mu_k$ and $\mathrm{Var}(q\cdot k) = d_k[(\sigma_q^2+\mu_q^2)(\sigma_k^2+\mu_k^2) - \mu_q^2\mu_k^2]$.
# - Any component distribution gives the same mean and variance; the shape approaches $N(0, d_k)$ with an excess kurtosis $(m_4^2 - 3)/d_k$.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`. The cells start with `answer = None`.
#
# **Exercise 1.** $d_k = 64$, and every component of $q$ and $k$ has mean 0 and
# variance 3 (all independent). What is $\mathrm{Var}(q\cdot k)$?

# %%
answer = None  # replace None with your answer
_ = check("02.var_components_3", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# One product: $(3 + 0)(3 + 0) - 0 = 9$ (the variances multiply; they do not add). Sum of
# 64 independent terms: $64 \cdot 9 = 576$.
# Check: `theory.dot_product_moments(64, var_q=3.0, var_k=3.0).var`.
# </details>
#
# **Exercise 2.** $d_k = 32$; each component of $q$ has mean 1 and variance 2, each
# component of $k$ has mean $-1$ and variance 1 (all independent). Give
# $(E[q\cdot k], \mathrm{Var}(q\cdot k))$ as a pair.

# %%
answer = None  # replace None with a pair (mean, variance)
_ = check("02.general", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Mean: $32 \cdot 1 \cdot (-1) = -32$. Variance of one product:
# $(2 + 1)(1 + 1) - 1\cdot 1 = 5$, so $\mathrm{Var}(q\cdot k) = 32\cdot 5 = 160$. Answer: `(-32, 160)`.
# </details>
#
# **Exercise 3.** With Laplace components and $d_k = 8$, what is the excess kurtosis
# of $q\cdot k$?

# %%
answer = None  # replace None with your answer
_ = check("02.kurtosis_laplace", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# From the table in section 8, $m_4 = E[x^4] = 6$. One product has $E[(q_ik_i)^4] = m_4^2 = 36$
# and variance 1, so $\kappa(q_ik_i) = 36 - 3 = 33$ (not the component's own $6 - 3 = 3$).
# The sum of 8 independent terms divides it by 8: $33/8 = 4.125$.
# </details>
#
# ---
# **Next:** [03 — Small experiments mislead](03_small_experiments.ipynb)
