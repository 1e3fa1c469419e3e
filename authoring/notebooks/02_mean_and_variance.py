# %% [markdown]
# # Mean and variance of q·k, one step at a time
#
# Notebook 01 measured that $q\cdot k$ spreads like $\sqrt{d_k}$. Here we prove it in four
# steps, check each by simulation, and ask what the proof needs — and what dividing by
# $\sqrt{d_k}$ does when the means are not 0.
#
# **Learning goals**
# - Derive $E[q\cdot k] = 0$ and $\mathrm{Var}(q\cdot k) = d_k$, and say where independence is used.
# - State the sharp condition: for independent mean-0 $q$ and $k$, $\mathrm{Var}(q\cdot k) = \operatorname{tr}(\Sigma_q\Sigma_k)$, so uncorrelated components suffice.
# - Handle any means and variances, and read non-zero means row by row, as the softmax does.
# - See that every component distribution gives variance $d_k$, and how fast the shape becomes normal.
#
# **Prerequisites**
# - [01 — Dot products](01_dot_products.ipynb).
# - Expectation, variance $\mathrm{Var}(X) = E[X^2] - E[X]^2$, covariance, and what *independent* means.

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
from sdpa_helpers.attention import softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import variance as variance_plots
from sdpa_helpers.sampling import DISTRIBUTIONS, EXCESS_KURTOSIS, sample_components, sample_dot_products
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.variance import VarianceExplorer

SEED = 2
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The claim, and how we check it
#
# Take $q, k \in \mathbb{R}^{d_k}$ with every component of mean 0 and variance 1, and all
# $2d_k$ components independent. Then
#
# $$E[q\cdot k] = 0, \qquad \mathrm{Var}(q\cdot k) = d_k .$$
#
# A check passes when the simulation lands within 4 *standard errors* (SE) of the theory:
# $s/\sqrt{n}$ for a sample mean, $\sqrt{(m_4 - s^4)/n}$ for a sample variance ($m_4$ the
# sample fourth central moment). We draw $n = 100\,000$ pairs at $d_k = 8$ as the rows of
# $Q$ and $K$; the elementwise product $P = Q\circ K$ holds every term $q_ik_i$, and its
# row sums are the dot products:

# %%
def var_se(x):
    """Standard error of the sample variance of x: √((m4 − s⁴) / n)."""
    c = np.asarray(x) - np.mean(x)
    return np.sqrt((np.mean(c**4) - np.var(x, ddof=1) ** 2) / c.size)


d_k, n = 8, 100_000
P = sample_components((n, d_k), rng=rng) * sample_components((n, d_k), rng=rng)  # (n, d_k): terms q_i k_i
dots = P.sum(axis=1)  # (n,): q·k for each pair
verify_close("E[q·k] at d_k = 8", dots.mean(), theory.dot_product_moments(d_k).mean, se=dots.std() / np.sqrt(n))
verify_close("Var(q·k) at d_k = 8", dots.var(ddof=1), theory.dot_product_moments(d_k).var, se=var_se(dots))

# %% [markdown]
# ## 2. Four steps
#
# **Step 1 — linearity.** $E[\sum_i q_ik_i] = \sum_i E[q_ik_i]$ for any random
# numbers, independent or not.
#
# **Step 2 — independence within a pair.** For independent $X$, $Y$: $E[XY] = E[X]E[Y]$,
# so $E[q_ik_i] = 0\cdot 0 = 0$. With steps 1 and 2, $E[q\cdot k] = 0$.
#
# **Step 3 — the variance of one product.** From $\mathrm{Var}(XY) = E[X^2Y^2] - E[XY]^2$
# and independence (of $X^2$ and $Y^2$ too), with $E[X^2] = \sigma_x^2 + \mu_x^2$:
#
# $$\mathrm{Var}(XY) = (\sigma_x^2 + \mu_x^2)(\sigma_y^2 + \mu_y^2) - \mu_x^2\mu_y^2 ,$$
#
# which is $1$ for our unit components. The shortcut $\sigma^2(q_ik_i) = \sigma^2(q_i)\,\sigma^2(k_i)$
# holds **only at mean 0**: with means 1 and variances 1 the product has variance
# $2\cdot 2 - 1 = 3$, not $1$ (checked below).
#
# **Step 4 — independence between terms.** $\mathrm{Var}(\sum_i Z_i) = \sum_i\mathrm{Var}(Z_i)
# + \sum_{i\ne j}\mathrm{Cov}(Z_i, Z_j)$. Different pairs $(q_i, k_i)$, $(q_j, k_j)$ are
# independent, so every covariance is 0 and $\mathrm{Var}(q\cdot k) = d_k\cdot 1 = d_k$.
#
# Each step, on the columns of $P$ (the largest deviation, in SE, of 8 means, 8 variances
# and 28 covariances; under the claim a mean or a covariance has SE $1/\sqrt{n}$):

# %%
z_means = np.abs(P.mean(axis=0)) * np.sqrt(n)
z_vars = np.abs(P.var(axis=0, ddof=1) - 1) / np.array([var_se(col) for col in P.T])
C = np.cov(P, rowvar=False)  # (d_k, d_k): covariances of the terms
z_covs = np.abs(C[~np.eye(d_k, dtype=bool)]) * np.sqrt(n)
verify("step 2: every E[q_i k_i] = 0", z_means.max() < 4, f"largest {z_means.max():.1f} SE")
verify("step 3: every Var(q_i k_i) = 1", z_vars.max() < 4, f"largest {z_vars.max():.1f} SE")
verify("step 4: every Cov(q_i k_i, q_j k_j) = 0", z_covs.max() < 4, f"largest {z_covs.max():.1f} SE")
xy = sample_components(n, mean=1.0, rng=rng) * sample_components(n, mean=1.0, rng=rng)
verify_close("Var(XY), means 1, variances 1 (not 1·1)", xy.var(ddof=1), theory.product_moments(1, 1, 1, 1).var,
             se=var_se(xy))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the covariance matrix of the terms, and linearity on samples
#
# Step 1 holds even for sample averages, exactly: the mean of the row sums of $P$ equals the
# sum of its column means, whatever the numbers — here also for the dependent case $k = q$.
# And the sum of all entries of the covariance matrix *is* the variance of the row sums.

# %% tags=["deep-dive"]
g = make_rng(202)  # the deep dive's own stream: the main line never depends on it
verify("mean of row sums = sum of column means", np.isclose(P.sum(axis=1).mean(), P.mean(axis=0).sum()))
q_dep = sample_components((n, d_k), rng=g)
verify("the same with k = q", np.isclose((q_dep * q_dep).sum(axis=1).mean(), (q_dep * q_dep).mean(axis=0).sum()))
verify("sum of all entries of C = sample Var(q·k)", np.isclose(C.sum(), np.var(dots, ddof=1)),
       f"{C.sum():.4f}")
ax = variance_plots.covariance_heatmap(C)
ax.set_title(r"sample $\mathrm{Cov}(q_i k_i,\, q_j k_j)$, $d_k = 8$")
ax.figure

# %% [markdown]
# ## 3. What the proof really needs
#
# | step | result | independence used |
# |---|---|---|
# | 1 | $E[\sum_i q_ik_i] = \sum_i E[q_ik_i]$ | none |
# | 2 | $E[q_ik_i] = E[q_i]E[k_i]$ | between $q_i$ and $k_i$ |
# | 3 | $E[q_i^2k_i^2] = E[q_i^2]E[k_i^2]$ | between $q_i$ and $k_i$ |
# | 4 | $\mathrm{Cov}(q_ik_i, q_jk_j) = 0$ | between the pairs $(q_i, k_i)$ and $(q_j, k_j)$ |
#
# Independence of all $2d_k$ components is **sufficient, not necessary**. If $q$ is
# independent of $k$ and both have mean 0, with covariance matrices $\Sigma_q$, $\Sigma_k$,
#
# $$\mathrm{Var}(q\cdot k) = E[q^\top k\,k^\top q] = E[q^\top\Sigma_k q] = \operatorname{tr}(\Sigma_q\Sigma_k).$$
#
# So *uncorrelated* unit-variance components ($\Sigma = I$) already give exactly $d_k$, even
# when the components of $q$ depend on each other, as after LayerNorm (which fixes a
# vector's length); $q$ and $k$ must still be independent of each other. Example: $q$
# uniform on the sphere of radius $\sqrt{d_k}$:

# %%
q_sphere = sample_components((40_000, 64), rng=rng)
q_sphere *= np.sqrt(64) / np.linalg.norm(q_sphere, axis=1, keepdims=True)  # every ‖q‖ = 8 exactly
s = np.einsum("ij,ij->i", q_sphere, sample_components((40_000, 64), rng=rng))
verify_close("Var(q·k), q uniform on the sphere of radius 8", s.var(ddof=1),
             theory.dot_product_variance_cov(np.eye(64), np.eye(64)), se=var_se(s))

# %% [markdown]
# What breaks it is dependence between $q$ and $k$ (with $k = q$ the mean becomes $d_k$), or
# correlations in *both* vectors that make $\operatorname{tr}(\Sigma_q\Sigma_k) \ne d_k$ (one
# random number copied into every component of each: $d_k^2$). A deep dive simulates three
# cases. After training, queries and keys *do* correlate; notebook 08 returns to this.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: three ways to break independence
#
# At $d_k = 64$, each keeping every component at mean 0 and variance 1:
#
# - **$k = q$.** Steps 2 and 3 fail: $E[q_i^2] = 1$, $E[q_i^4] = 3$ for normal components.
#   The terms $q_i^2$ are still independent of each other, so $E[q\cdot q] = d_k$ and
#   $\mathrm{Var}(q\cdot q) = d_k(3 - 1) = 2d_k$.
# - **$q_i$ and $k_i$ correlated**, $k_i = \rho\, q_i + \sqrt{1-\rho^2}\, z_i$, $\rho = 0.5$:
#   $E[q_ik_i] = \rho$ and $E[q_i^2k_i^2] = 1 + 2\rho^2$, so the mean is $\rho\, d_k$ and the
#   variance $(1 + \rho^2)\, d_k$.
# - **the terms dependent**: one random $x$ copied into every component of $q$, one $y$ into
#   every component of $k$. Steps 2 and 3 hold, step 4 fails: every covariance is 1, so
#   $\mathrm{Var}(q\cdot k) = d_k + d_k(d_k - 1) = d_k^2$.

# %% tags=["deep-dive"]
g = make_rng(203)  # the deep dive's own stream: the main line never depends on it
d_big, n_big, rho = 64, 20_000, 0.5
q = sample_components((n_big, d_big), rng=g)
k_corr = rho * q + np.sqrt(1 - rho**2) * sample_components((n_big, d_big), rng=g)
x, y = sample_components(n_big, rng=g), sample_components(n_big, rng=g)
cases = {
    "k = q": (np.sum(q * q, axis=1), d_big, 2 * d_big),
    "corr(q_i, k_i) = 0.5": (np.sum(q * k_corr, axis=1), rho * d_big, (1 + rho**2) * d_big),
    "all components copied": (x * y * d_big, 0.0, d_big**2),  # q·k = d_k · x y
}
for name, (s_case, mean_theory, var_theory) in cases.items():
    verify_close(f"{name}: mean", s_case.mean(), mean_theory, se=s_case.std() / np.sqrt(n_big))
    verify_close(f"{name}: variance", s_case.var(ddof=1), var_theory, se=var_se(s_case))

# %% [markdown]
# ## 4. Any means and variances, and what the softmax sees
#
# Steps 1–4 never needed mean 0 or variance 1. With independent components of mean
# $\mu_q$, variance $\sigma_q^2$ (in $q$) and $\mu_k$, $\sigma_k^2$ (in $k$),
#
# $$E[q\cdot k] = d_k\,\mu_q\mu_k, \qquad
# \mathrm{Var}(q\cdot k) = d_k\big[(\sigma_q^2 + \mu_q^2)(\sigma_k^2 + \mu_k^2) - \mu_q^2\mu_k^2\big]$$
#
# (a deep dive checks six cases). After dividing by
# $\sqrt{d_k}$ the mean $\sqrt{d_k}\,\mu_q\mu_k$ still grows. Does that hurt? The softmax
# sees one row at a time: one **fixed** query $q$ against keys independent of it,
#
# $$E[q\cdot k \mid q] = \mu_k\sum_i q_i, \qquad \mathrm{Var}(q\cdot k\mid q) = \sigma_k^2\,\lVert q\rVert^2 .$$
#
# The mean is the same for every key: a shift of the whole row, which the softmax ignores
# ($\mathrm{softmax}(z + c) = \mathrm{softmax}(z)$). What remains is the variance within the row,
# $\sigma_k^2\lVert q\rVert^2 \approx \sigma_k^2 d_k(\sigma_q^2 + \mu_q^2)$ ($\lVert q\rVert^2/d_k$
# settles as $d_k$ grows, for independent components of $q$). Divided by $d_k$, it stays near
# $\sigma_k^2(\sigma_q^2 + \mu_q^2)$: constant in $d_k$, though not 1.
#
# **Predict:** components of mean 0.5 and variance 1, scaled by $1/\sqrt{d_k}$. As $d_k$ goes
# from 16 to 4096, does the spread within one row grow?

# %%
mu = 0.5
for d in (16, 256, 4096):
    Q_rows = sample_components((8, d), mean=mu, rng=rng)  # 8 fixed queries
    S = sample_components((2000, d), mean=mu, rng=rng) @ Q_rows.T / np.sqrt(d)  # (2000 keys, 8 rows), scaled
    spread, expected = S.var(axis=0, ddof=1), theory.within_row_moments(Q_rows, mu, 1.0).var / d
    z = (spread - expected) / (expected * np.sqrt(2 / 1999))  # within a row the logits are exactly normal
    print(f"d_k = {d:4d}: row shifts {S.mean(axis=0).min():5.2f} to {S.mean(axis=0).max():5.2f} | variance within a row: "
          f"median {np.median(spread):.2f}, range {spread.min():.2f} to {spread.max():.2f} (σ_k²(σ_q²+μ_q²) = {1 + mu**2})")
    verify(f"  every row's variance is σ_k²‖q‖²/d_k (d_k = {d})", np.abs(z).max() < 4, f"largest {np.abs(z).max():.1f} SE")
verify("softmax ignores the row's shift", np.allclose(softmax(S[:, 0]), softmax(S[:, 0] - S[:, 0].mean())))

# %% [markdown]
# The row's shift grows like $\sqrt{d_k}\,\mu_q\mu_k$ (about 1, 4 and 16), but the variance
# within a row does not: median 1.33, 1.22 and 1.25 over 8 queries, around
# $\sigma_k^2(\sigma_q^2 + \mu_q^2) = 1.25$ ($\lVert q\rVert^2/d_k$ varies between queries by about
# $\sqrt{3/d_k}$ here). So for the softmax the common worry fails: non-zero means do not
# defeat the scaling.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the general formula over six parameter sets
#
# At $d_k = 16$, 50 000 pairs each. Components of variance 2 on both sides give $4d_k$
# (a factor 2 on each side multiplies the variance by 4); variance 2 for $q$ with 0.5 for
# $k$ gives back $d_k$: at mean 0 only the product $\sigma_q^2\sigma_k^2$ matters.

# %% tags=["deep-dive"]
g = make_rng(204)  # the deep dive's own stream: the main line never depends on it
params = [(0.0, 1.0, 0.0, 1.0), (0.0, 2.0, 0.0, 2.0), (0.0, 2.0, 0.0, 0.5),
          (1.0, 1.0, 0.0, 1.0), (1.0, 1.0, 2.0, 3.0), (-0.5, 0.25, 2.0, 1.0)]
for mean_q, var_q, mean_k, var_k in params:
    th = theory.dot_product_moments(16, mean_q, var_q, mean_k, var_k)
    s_gen = sample_dot_products(16, 50_000, mean_q=mean_q, var_q=var_q, mean_k=mean_k, var_k=var_k, rng=g)
    label = f"μ_q={mean_q}, σ_q²={var_q}, μ_k={mean_k}, σ_k²={var_k}"
    verify_close(f"{label}: mean", s_gen.mean(), th.mean, se=s_gen.std() / np.sqrt(50_000))
    verify_close(f"{label}: variance", s_gen.var(ddof=1), th.var, se=var_se(s_gen))

# %% [markdown]
# ## 5. Not only Gaussians: same variance, different shapes
#
# The derivation never used the shape of the distribution. Four shapes, each with mean 0
# and variance 1: normal, uniform on $[-\sqrt3, \sqrt3]$, Rademacher ($\pm1$) and Laplace
# (density $\propto e^{-\sqrt2\lvert x\rvert}$, heavy tails). At $d_k = 1$, $q\cdot k$ is one
# product and the shapes differ wildly; as $d_k$ grows, the central limit theorem pulls the
# sum towards $N(0, d_k)$.
#
# **Predict:** at $d_k = 16$, will the four histograms look alike?
#
# Rows: distribution; columns: $d_k$; 4 000 dot products per panel, x axes over
# $\pm 4.5\sqrt{d_k}$. Rademacher $q\cdot k$ takes integer values two apart (stems):

# %%
grid = {dist: {d: sample_dot_products(d, 4000, dist=dist, rng=rng) for d in (1, 4, 16, 256)} for dist in DISTRIBUTIONS}
for dist in DISTRIBUTIONS:
    verify_close(f"Var(q·k), {dist} components, d_k = 16", grid[dist][16].var(ddof=1), 16, se=var_se(grid[dist][16]))
variance_plots.histogram_grid(grid)

# %% [markdown]
# Same variance every time, but not yet the same shape. One number measures the gap: the
# **excess kurtosis** $\kappa$, 0 for a normal, positive for a sharp peak with heavy tails.
# For $q\cdot k$ (both vectors with independent components of one distribution) it is
# $(m_4^2 - 3)/d_k$, with $m_4 = E[x^4]$ of one component (derived in a deep dive below):

# %%
kappa = {dist: [theory.dot_product_excess_kurtosis(d, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist]) for d in (16, 256)]
         for dist in DISTRIBUTIONS}
print("excess kurtosis of q·k at d_k = 16 and 256:", {dist: [round(v, 3) for v in kv] for dist, kv in kappa.items()})
laplace_at_1 = theory.dot_product_excess_kurtosis(1, EXCESS_KURTOSIS["laplace"], EXCESS_KURTOSIS["laplace"])
print(f"Laplace: κ = {laplace_at_1:g} at d_k = 1, so κ ≤ 1 needs d_k ≥ {laplace_at_1:g}")

# %% [markdown]
# So the common guess "by $d_k = 16$ they all look normal" holds for three rows only: normal,
# uniform and Rademacher have $|\kappa| \le 0.375$ there, but Laplace still has
# $\kappa \approx 2.06$ — a visibly sharper peak — and needs $d_k \ge 33$ for $\kappa \le 1$. At
# $d_k = 256$ all four have $|\kappa| \le 0.13$ and look alike. The variance is $d_k$ from
# the first dimension on.
#
# Live: drag $d_k$ from 1 to 4096 and switch the components; the table compares sample
# mean, variance and excess kurtosis with the theory.

# %% tags=["nbval-ignore-output"]
explorer = VarianceExplorer(d_k=16)
explorer

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the excess kurtosis, derived and measured
#
# $$\kappa(Z) = \frac{E[(Z - \mu)^4]}{\sigma^4} - 3 .$$
#
# For one term $Z = q_ik_i$ with independent mean-0 unit-variance factors,
# $E[Z^4] = E[q_i^4]\,E[k_i^4] = m_4^2$, so $\kappa(q_ik_i) = m_4^2 - 3$. For the sum
# $S = \sum_i Z_i$ of $d_k$ independent copies (mean 0, variance 1), expand $E[S^4]$: every
# term holding a lone $Z_i$ vanishes, which leaves $d_k$ terms $E[Z_i^4]$ and
# $3d_k(d_k - 1)$ terms $E[Z_i^2]E[Z_j^2] = 1$. With $\mathrm{Var}(S) = d_k$:
#
# $$\kappa(q\cdot k) = \frac{d_k\,E[Z^4] + 3d_k(d_k-1)}{d_k^2} - 3 = \frac{m_4^2 - 3}{d_k}.$$
#
# The fourth moments $m_4 = 3 + \kappa_x$ (3, 9/5, 1 and 6), by simulation:

# %% tags=["deep-dive"]
g = make_rng(205)  # the deep dive's own stream: the main line never depends on it
for dist in DISTRIBUTIONS:
    x4 = sample_components(400_000, dist=dist, rng=g) ** 4
    if dist == "rademacher":  # x⁴ = 1 exactly: no randomness left
        verify("rademacher: E[x⁴] = 1 exactly", np.all(x4 == 1.0))
    else:
        verify_close(f"{dist}: E[x⁴]", x4.mean(), 3 + EXCESS_KURTOSIS[dist], se=x4.std() / np.sqrt(x4.size))

# %% [markdown] tags=["deep-dive"]
# ### The excess kurtosis of q·k by simulation, with SE by batching
#
# We spend the same number of products on each $d_k$: $800\,000/d_k$ pairs. A sample
# kurtosis has no simple SE formula, so we estimate it by *batching*: split the sample into
# 20 batches, compute $\kappa$ in each, and divide the spread of the 20 values by
# $\sqrt{20}$. This SE is itself uncertain (20 values), and for the heavy-tailed Laplace
# rows it is rough (rare extreme values dominate, and it tends to come out too small); so
# 4 SE is a looser guarantee here.

# %% tags=["deep-dive"]
g = make_rng(206)  # the deep dive's own stream: the main line never depends on it
def excess_kurtosis(x):
    """Sample excess kurtosis: m4 / m2² − 3."""
    c = np.asarray(x, dtype=float) - np.mean(x)
    return np.mean(c**4) / np.mean(c**2) ** 2 - 3


kurt_d_ks = (1, 4, 16)
kurt = {dist: {"sample": [], "se": [], "theory": []} for dist in DISTRIBUTIONS}
for dist in DISTRIBUTIONS:
    for d in kurt_d_ks:
        s_k = sample_dot_products(d, 800_000 // d, dist=dist, rng=g)
        batches = [excess_kurtosis(b) for b in s_k.reshape(20, -1)]
        value, se = excess_kurtosis(s_k), np.std(batches, ddof=1) / np.sqrt(20)
        expected = theory.dot_product_excess_kurtosis(d, EXCESS_KURTOSIS[dist], EXCESS_KURTOSIS[dist])
        verify_close(f"κ(q·k), {dist}, d_k = {d}", value, expected, se=se)
        for key, v in (("sample", value), ("se", se), ("theory", expected)):
            kurt[dist][key].append(v)

# %% [markdown] tags=["deep-dive"]
# On log–log axes the theory is a line of slope $-1$. A simulated point is shown only
# where it is resolved (the theory more than 4 SE from 0; the uniform's small $0.24/d_k$
# sinks into the noise first). Rademacher values are negative and drawn as $|\kappa|$ with
# hollow markers.

# %% tags=["deep-dive"]
shown = {dist: np.where(np.abs(kurt[dist]["theory"]) > 4 * np.array(kurt[dist]["se"]),
                        kurt[dist]["sample"], np.nan) for dist in DISTRIBUTIONS}
ax = variance_plots.kurtosis_decay(kurt_d_ks, shown, {d: kurt[d]["se"] for d in DISTRIBUTIONS},
                              {d: kurt[d]["theory"] for d in DISTRIBUTIONS})
ax.figure

# %% [markdown]
# ## Summary
#
# - Linearity (no independence) and $E[q_ik_i] = E[q_i]E[k_i]$ (independence within a pair) give $E[q\cdot k] = 0$.
# - $\mathrm{Var}(XY) = (\sigma_x^2 + \mu_x^2)(\sigma_y^2 + \mu_y^2) - \mu_x^2\mu_y^2$; it equals $\sigma_x^2\sigma_y^2$ only at mean 0.
# - Uncorrelated terms add their variances: $\mathrm{Var}(q\cdot k) = d_k$. For independent mean-0 $q$, $k$ the sharp condition is $\operatorname{tr}(\Sigma_q\Sigma_k) = d_k$: uncorrelated unit-variance components suffice.
# - Non-zero means shift each row, which the softmax ignores; $1/\sqrt{d_k}$ keeps the within-row variance $\sigma_k^2\lVert q\rVert^2/d_k$ near $\sigma_k^2(\sigma_q^2 + \mu_q^2)$.
# - Every component distribution gives variance $d_k$; the shape approaches $N(0, d_k)$ with excess kurtosis $(m_4^2 - 3)/d_k$ — slowly for heavy tails (Laplace needs $d_k \ge 33$ for $\kappa \le 1$).
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`. Numbers are checked to three
# significant figures (within 0.5 %), integers exactly.
#
# **Exercise 1.** $d_k = 64$, and every component of $q$ and $k$ has mean 0 and
# variance 3 (all independent). What is $\mathrm{Var}(q\cdot k)$ (an integer)?

# %%
answer = None  # replace None with your answer
_ = check("02.var_components_3", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# One product: $(3 + 0)(3 + 0) - 0 = 9$ (the variances multiply; they do not add). Sum of
# 64 independent terms: $64 \cdot 9 = 576$.
# </details>
#
# **Exercise 2.** $d_k = 32$; each component of $q$ has mean 1 and variance 2, each
# component of $k$ has mean $-1$ and variance 1 (all independent). Give
# $(E[q\cdot k], \mathrm{Var}(q\cdot k))$ as a pair (integers).

# %%
answer = None  # replace None with a pair (mean, variance)
_ = check("02.general", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Mean: $32 \cdot 1 \cdot (-1) = -32$. Variance of one product:
# $(2 + 1)(1 + 1) - 1\cdot 1 = 5$ (not $2\cdot 1$: the means matter), so
# $\mathrm{Var}(q\cdot k) = 32\cdot 5 = 160$. Answer: `(-32, 160)`.
# </details>
#
# **Exercise 3.** With Laplace components and $d_k = 8$, what is the excess kurtosis
# of $q\cdot k$ (three significant figures)?

# %%
answer = None  # replace None with your answer
_ = check("02.kurtosis_laplace", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $m_4 = E[x^4] = 6$. One product has $E[(q_ik_i)^4] = 36$ and variance 1, so
# $\kappa(q_ik_i) = 33$ (not the component's own $6 - 3 = 3$). The sum of 8 independent
# terms divides it by 8: $33/8 = 4.125$, or $4.13$ to three significant figures.
# </details>
#
# **Exercise 4 (conceptual).** Design: every component of $q$ and $k$ has mean 0 and variance 4,
# and $d_k = 64$. By what factor must $q\cdot k$ be multiplied so that the logits have
# variance 1 (three significant figures)?

# %%
answer = None  # replace None with your answer
_ = check("02.unit_logit_scale", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\mathrm{Var}(q\cdot k) = 64\cdot 4\cdot 4 = 1024$, so the factor is $1/\sqrt{1024} = 1/32 =
# 0.03125$ (0.0313). The paper's $1/\sqrt{d_k} = 1/8$ assumes unit components; here it would
# leave variance 16. The exponent $-\tfrac12$ of $d_k$ stays; the constant absorbs $\sigma_q\sigma_k$.
# </details>
#
# **Exercise 5 (conceptual).** Explain. A colleague argues: "our queries and keys have components of
# mean 0.5, so $E[q\cdot k] = 0.25\,d_k$, and after dividing by $\sqrt{d_k}$ the logits still
# grow like $0.25\sqrt{d_k}$ — the scaling fails." What does the softmax of one query's row
# actually see, and does the scaling fail?
#
# <details><summary>Solution</summary>
#
# For one query, every key's logit has the same mean $\mu_k\sum_i q_i/\sqrt{d_k}$: a shift of
# the whole row, and $\mathrm{softmax}(z + c) = \mathrm{softmax}(z)$. The softmax sees only the
# logits minus that shift; their variance within the row, $\sigma_k^2\lVert q\rVert^2/d_k \approx \sigma_k^2(\sigma_q^2 + \mu_q^2)$,
# which does not grow with $d_k$ (section 4: about 1.25 at $d_k$ = 16, 256 and 4096). So the
# scaling does its job; the row shift matters only where rows are compared with each other
# (it does not enter attention weights).
# </details>
#
# ---
# **Next:** [03 — Small experiments mislead](03_small_experiments.ipynb)
