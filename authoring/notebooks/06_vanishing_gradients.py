# %% [markdown]
# # 06 — Vanishing gradients
#
# Notebook 05 showed that without the $1/\sqrt{d_k}$ the softmax saturates: nearly all the weight
# goes to one key. This notebook shows why that is bad for learning. A network learns $W_Q$ and
# $W_K$ from the gradient that flows back *through* the softmax, and a saturated softmax lets
# almost none through.
#
# **Learning goals**
# - Derive the softmax Jacobian $\partial p_i/\partial z_j = p_i(\delta_{ij} - p_j)$ and check it by finite differences.
# - Prove and check $\|J\|_F \le 2\,(1 - \max_i p_i)$: a nearly one-hot softmax has a nearly zero Jacobian.
# - Measure the gradient reaching the logits and the query against $d_k$, unscaled vs scaled.
#
# **Prerequisites**
# - Notebook 05 (softmax saturation).
# - Derivatives, the quotient rule and the chain rule; matrix–vector products.

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
from sdpa_helpers import make_rng, saturation
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import gradients as grad_plots
from sdpa_helpers.sampling import sample_components
from sdpa_helpers.widgets import D_K_CHOICES
from sdpa_helpers.widgets.gradients import JacobianExplorer

SEED = 6
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Where the gradient has to go
#
# For one query, attention computes logits $z_j = c\,(q\cdot k_j)$ (with $c = 1/\sqrt{d_k}$ scaled,
# $c = 1$ unscaled), then weights $p = \mathrm{softmax}(z)$. The loss $L$ depends on $p$. Training
# needs $\partial L/\partial W_Q$ and $\partial L/\partial W_K$, and by the chain rule every path
# from $L$ to them passes through
#
# $$\frac{\partial L}{\partial z_j} = \sum_i \frac{\partial L}{\partial p_i}\,\frac{\partial p_i}{\partial z_j},
# \qquad\text{that is}\qquad \frac{\partial L}{\partial z} = J^\top g,\quad J_{ij} = \frac{\partial p_i}{\partial z_j},\quad g = \frac{\partial L}{\partial p}.$$
#
# If the Jacobian $J$ of the softmax is nearly zero, so is $\partial L/\partial z = J^\top g$, whatever
# $g$ is, and every gradient further back (to $q$, the keys, $W_Q$ and $W_K$) is built from it.

# %% [markdown]
# ## 2. The Jacobian of the softmax, step by step
#
# **Step 1.** Write $p_i = e^{z_i}/S$ with $S = \sum_k e^{z_k}$. Only one term of $S$ contains
# $z_j$, so $\partial S/\partial z_j = e^{z_j}$.

# %% [markdown]
# **Step 2.** The quotient rule, $(u/v)' = (u'v - uv')/v^2$, with $u = e^{z_i}$ and $v = S$:
#
# $$\frac{\partial p_i}{\partial z_j} = \frac{\dfrac{\partial e^{z_i}}{\partial z_j}\,S - e^{z_i}\,e^{z_j}}{S^2}.$$

# %% [markdown]
# **Step 3.** $e^{z_i}$ depends on $z_j$ only when $i = j$: $\partial e^{z_i}/\partial z_j = \delta_{ij}\,e^{z_i}$,
# where $\delta_{ij}$ is 1 if $i = j$ and 0 otherwise. So
#
# $$\frac{\partial p_i}{\partial z_j} = \frac{\delta_{ij}\,e^{z_i}\,S - e^{z_i}\,e^{z_j}}{S^2}.$$

# %% [markdown]
# **Step 4.** Split the fraction and recognise $p_i = e^{z_i}/S$ and $p_j = e^{z_j}/S$:
#
# $$\frac{\partial p_i}{\partial z_j} = \delta_{ij}\,\frac{e^{z_i}}{S} - \frac{e^{z_i}}{S}\,\frac{e^{z_j}}{S}
# = \delta_{ij}\,p_i - p_i\,p_j = p_i\,(\delta_{ij} - p_j).$$

# %% [markdown]
# **Step 5.** As a matrix: $J = \mathrm{diag}(p) - p\,p^\top$. It is symmetric ($J^\top = J$, so
# $\partial L/\partial z = J g$), and each row sums to $p_i - p_i \sum_j p_j = 0$. That is expected:
# a row sum is how much $p_i$ moves when every logit moves by the same small amount, and such a
# shift changes no weight (notebook 05). Step 3's fraction, the final formula and
# `softmax_jacobian` agree on an example:

# %%
z = np.array([1.0, -0.5, 2.0, 0.3])
e, S = np.exp(z), np.exp(z).sum()
step3 = (np.diag(e) * S - np.outer(e, e)) / S**2  # (delta_ij e^{z_i} S - e^{z_i} e^{z_j}) / S^2
p = softmax(z)
J = softmax_jacobian(p)  # diag(p) - p p^T
assert np.allclose(step3, J) and np.allclose(J, np.diag(p) - np.outer(p, p))
assert np.allclose(J, J.T) and np.allclose(J.sum(axis=1), 0.0)
print("p =", np.array2string(p, precision=3, floatmode="fixed"))
print("J =\n" + np.array2string(J, precision=3, floatmode="fixed", suppress_small=True))
print(f"symmetric: {np.allclose(J, J.T)}; largest |row sum|: {np.abs(J.sum(axis=1)).max():.1e}")

# %% [markdown]
# ## 3. Check it with finite differences
#
# An independent check needs only the softmax itself: nudge one logit by $\pm h$ and watch the
# weights move, $\partial p/\partial z_j \approx [p(z + h e_j) - p(z - h e_j)]/2h$. Taylor's
# theorem puts the error of this *central* difference at $\tfrac{h^2}{6}\,\partial^3 p_i/\partial z_j^3$
# for some point in between. Along one logit, each $p_i$ is a logistic curve $\sigma$ (or a scaled
# copy of $1 - \sigma$), and $|\sigma'''| \le 1/8$, so the truncation error is at most $h^2/48$.
# Rounding adds about $\varepsilon/h$ ($\varepsilon \approx 2.2\times10^{-16}$): each value of $p$
# carries an error of a few $\varepsilon$, and the difference is divided by $2h$. The tolerance is
# the sum, with a factor 10 of margin on the rounding term: $h^2/48 + 10\,\varepsilon/h$.

# %%
eps = np.finfo(float).eps
print(f"{'h':>7} | {'max |FD - J|':>12} | {'tolerance':>9} | {'error / h²':>10}")
for h in (1e-1, 1e-2, 1e-3, 1e-4):
    J_fd = saturation.finite_difference_jacobian(softmax, z, h=h)  # (n, n): column j = d p / d z_j
    err = np.abs(J_fd - J).max()
    tol = h**2 / 48 + 10 * eps / h
    assert err <= tol, (h, err, tol)
    print(f"{h:7.0e} | {err:12.2e} | {tol:9.1e} | {err / h**2:10.4f}")

# %% [markdown]
# Every error is inside its tolerance, and the error divided by $h^2$ stays the same: shrink $h$
# tenfold and the error shrinks a hundredfold, as an $O(h^2)$ method should. The formula is right.
#
# ## 4. A nearly one-hot softmax has a nearly zero Jacobian
#
# Take the five logits of notebook 05 (section 2), then the same times 8 and times 64. The softmax
# goes from spread out (largest weight 0.29) to peaky (0.80) to nearly one-hot, and the Jacobian
# shrinks with it:

# %%
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
for c in (1, 8, 64):
    p = softmax(c * z5)
    J = softmax_jacobian(p)
    print(f"logits × {c:2d}: max p = {p.max():.4f}, largest |J_ij| = {np.abs(J).max():.2e}, "
          f"||J||_F = {saturation.jacobian_frobenius(p):.2e}")
assert np.allclose(softmax_jacobian([1.0, 0.0, 0.0]), 0.0)
print("one-hot p = [1, 0, 0]: J is exactly 0")

# %% [markdown]
# How small, exactly? A bound in four short steps. Let $m = \max_i p_i$.
#
# **(a) $J$ is positive semi-definite.** For any vector $v$,
# $v^\top J v = \sum_i p_i v_i^2 - \big(\sum_i p_i v_i\big)^2$. That is the variance of $v_I$ when
# the index $I$ is drawn with probabilities $p$, so it is $\ge 0$.

# %% [markdown]
# **(b) For such a matrix the Frobenius norm is at most the trace.** Its eigenvalues
# $\lambda_k$ are $\ge 0$, so $\|J\|_F = \sqrt{\sum_k \lambda_k^2} \le \sum_k \lambda_k = \mathrm{tr}\,J$.

# %% [markdown]
# **(c) The trace.** $\mathrm{tr}\,J = \sum_i p_i(1 - p_i) = 1 - \sum_i p_i^2 \le 1 - m^2$, because
# the sum of squares includes $m^2$.

# %% [markdown]
# **(d) Factor.** $1 - m^2 = (1 - m)(1 + m) \le 2\,(1 - m)$. Together:
#
# $$|J_{ij}| \;\le\; \|J\|_F \;\le\; \mathrm{tr}\,J \;\le\; 1 - m^2 \;\le\; 2\,(1 - \max_i p_i).$$
#
# And the gradient reaching the logits obeys $\|J g\| \le \|J\|_F\,\|g\|$. Every link, checked on
# 5000 random softmaxes of 8 logits, from flat to extremely peaked (the small slack $10^{-12}$
# absorbs rounding in the intermediate sums):

# %%
c = np.exp(rng.uniform(np.log(0.1), np.log(40.0), 5000))  # logit scales from 0.1 to 40
P = softmax(c[:, None] * rng.standard_normal((5000, 8)))  # (5000, 8) probability vectors
Js = softmax_jacobian(P)  # (5000, 8, 8)
fro = saturation.jacobian_frobenius(P)
trace = np.trace(Js, axis1=1, axis2=2)
m = P.max(axis=1)
one_minus_m = np.sort(P, axis=1)[:, :-1].sum(axis=1)  # 1 - m, summed from the small weights
g = rng.standard_normal((5000, 8))
slack = 1e-12
assert np.linalg.eigvalsh(Js).min() > -slack  # (a)
assert np.all(fro <= trace + slack) and np.all(trace <= 1 - m**2 + slack)  # (b), (c)
assert np.all(1 - m**2 <= 2 * one_minus_m + slack)  # (d)
assert np.all(np.abs(Js).max(axis=(1, 2)) <= fro * (1 + 1e-12))
assert np.all(fro <= 2 * one_minus_m * (1 + 1e-12))  # the bound, relative
assert np.all(np.linalg.norm(saturation.logit_gradient(P, g), axis=1) <= fro * np.linalg.norm(g, axis=1) * (1 + 1e-12))
print(f"smallest eigenvalue: {np.linalg.eigvalsh(Js).min():.1e}; 1 - max p from {one_minus_m.min():.0e} "
      f"to {one_minus_m.max():.2f}; largest ||J||_F / (2 (1 - max p)): {np.max(fro / (2 * one_minus_m)):.3f}")

# %% [markdown]
# The constant 2 cannot be lowered: with two keys, $p = (m, 1-m)$ gives
# $J = m(1-m)\begin{bmatrix}1 & -1\\ -1 & 1\end{bmatrix}$ and $\|J\|_F = 2m(1-m)$, whose ratio to
# the bound is $m \to 1$:

# %%
for m2 in (0.9, 0.99, 0.999):
    p2 = np.array([m2, 1 - m2])
    ratio = saturation.jacobian_frobenius(p2) / (2 * (1 - m2))
    assert np.isclose(saturation.jacobian_frobenius(p2), 2 * m2 * (1 - m2)) and np.isclose(ratio, m2)
    print(f"p = [{m2:.3f}, {1 - m2:.3f}]: ||J||_F = {saturation.jacobian_frobenius(p2):.6f}, bound {2 * (1 - m2):.6f}, "
          f"ratio {ratio:.3f}")

# %% [markdown]
# The 5000 softmaxes against the bound, on log axes: every point lies on or under the dashed line,
# and the points follow it down as $p$ becomes one-hot. (Near one-hot they sit almost on it:
# $\|J\|_F \approx 2(1 - p_{\max})$ when one other key holds most of the remaining weight.)

# %%
ax = grad_plots.jacobian_bound_figure(P)
ax.figure

# %% [markdown]
# ## 5. Gradient size against $d_k$
#
# Now the attention setting of notebook 05: one query against $n = 8$ keys, all components
# $N(0,1)$, logits $z_j = c\,(q\cdot k_j)$. There is no real loss here, so we stand in for the
# gradient that reaches the weights from above with a random one, $g = \partial L/\partial p \sim N(0, I)$,
# the same for scaled and unscaled. We measure three sizes:
#
# - $\|J\|_F$, the size of the softmax Jacobian;
# - $\|\partial L/\partial z\| = \|J g\|$, the gradient reaching the **logits**;
# - $\|\partial L/\partial q\|$, the gradient reaching the **query** (and from there $W_Q$). By
#   the chain rule through $z_j = c\,(q\cdot k_j)$:
#   $\partial L/\partial q = \sum_j (\partial L/\partial z_j)\, c\, k_j = c\,K^\top (J g)$.
#   The scale $c$ appears here too.
#
# `saturation.gradient_curves` draws them with the shortcut of notebook 05. For the last one,
# write each key as its part along $q$ (the $a_j$ that set the logits) plus a part $k_j^\perp$
# orthogonal to $q$, independent of the logits. With $v = Jg$,
# $K^\top v = \sum_j v_j k_j = (a\cdot v)\,q/\|q\| + \sum_j v_j k_j^\perp$. The second term is a
# normal vector in the $d_k - 1$ directions orthogonal to $q$, with variance $\sum_j v_j^2 = \|v\|^2$
# in each, so $\|K^\top v\|^2 = (a\cdot v)^2 + \|v\|^2\chi^2_{d_k - 1}$.
# First, check that against full vectors at $d_k = 64$ (difference within 4 standard errors):

# %%
n_q, n_keys, d_k = 4000, 8, 64
Q = sample_components((n_q, d_k), rng=rng)  # (n_q, d_k)
K = sample_components((n_q, n_keys, d_k), rng=rng)  # (n_q, n_keys, d_k): each query has its own keys
G = rng.standard_normal((n_q, n_keys))  # upstream dL/dp
for scaled in (False, True):
    c = 1 / np.sqrt(d_k) if scaled else 1.0
    P_full = softmax(c * np.einsum("qd,qkd->qk", Q, K))  # (n_q, n_keys)
    grad_z = saturation.logit_gradient(P_full, G)  # dL/dz = J g, (n_q, n_keys)
    grad_q = c * np.einsum("qk,qkd->qd", grad_z, K)  # c K^T (J g), (n_q, d_k)
    direct = saturation.mc_estimate(np.linalg.norm(grad_q, axis=1))
    short = saturation.gradient_curves([d_k], n_keys, n_q, scaled=scaled, rng=rng).query_grad_norm
    se = np.hypot(direct.se, short.se[0])
    print(f"{'scaled' if scaled else 'unscaled':>8}: ||dL/dq|| full vectors {direct.mean:.4f} ± {direct.se:.4f}, "
          f"shortcut {short.mean[0]:.4f} ± {short.se[0]:.4f}")
    assert abs(direct.mean - short.mean[0]) < 4 * se

# %% [markdown]
# Now all $d_k$ from 1 to 4096, 20 000 queries each. For every size we keep the **mean** (with its
# standard error) and the **median**, the size that half the queries do not reach.

# %%
n_queries = 20_000
grads = {s: saturation.gradient_curves(D_K_CHOICES, n_keys, n_queries, scaled=s, rng=SEED) for s in (False, True)}
fields = ("jacobian_norm", "logit_grad_norm", "query_grad_norm")
names = ("||J||_F", "||dL/dz||", "||dL/dq||")
for field, name in zip(fields, names):
    print(f"{name}:  d_k | unscaled mean ± SE     median   | scaled mean ± SE      median")
    for d_k in (1, 16, 64, 256, 1024, 4096):
        i = D_K_CHOICES.index(d_k)
        u, s = getattr(grads[False], field), getattr(grads[True], field)
        print(f"{'':>11}{d_k:4d} | {u.mean[i]:.4f} ± {u.se[i]:.4f}  {u.median[i]:8.1e} | "
              f"{s.mean[i]:.4f} ± {s.se[i]:.4f}  {s.median[i]:8.1e}")

# %% [markdown]
# The same numbers on log–log axes. Filled markers: the mean (bars: ±1 SE); hollow markers: the
# median.

# %%
fig = grad_plots.gradient_norms_figure(grads[False], grads[True])
fig

# %% [markdown]
# **Scaled** (blue, solid): none of the three sizes shrinks as $d_k$ grows; each stays within a
# third of its largest value, as the logits' spread stays at 1:

# %%
for field, name in zip(fields, names):
    mean = getattr(grads[True], field).mean
    print(f"scaled {name:>9}: mean between {mean.min():.3f} and {mean.max():.3f} for d_k = 1 … 4096")
    assert mean.min() > mean.max() * 2 / 3

# %% [markdown]
# **Unscaled** (vermillion, dashed): the typical query is cut off. At $d_k = 4096$ the median
# unscaled query passes back less than $10^{-10}$, under a millionth of what a typical scaled query
# passes back:

# %%
i4096 = D_K_CHOICES.index(4096)
for field, name in zip(fields, names):
    u_med, s_med = getattr(grads[False], field).median[i4096], getattr(grads[True], field).median[i4096]
    print(f"d_k = 4096, median {name:>9}: unscaled {u_med:.1e}, scaled {s_med:.2f}, ratio {u_med / s_med:.1e}")
    assert u_med < 1e-10 and u_med < 1e-6 * s_med

# %% [markdown]
# The unscaled *mean* falls far more slowly than the median. It is carried by a few queries whose
# top two logits happen to be within about 1 of each other: for those, the softmax is not
# saturated. The unscaled logits spread like $\sqrt{d_k}$, so such near-ties get rarer like
# $1/\sqrt{d_k}$. Check: the fraction $f$ of queries with $\|J\|_F > 0.1$, times $\sqrt{d_k}$,
# should level off. Its standard error is the binomial $\sqrt{f(1-f)/N}$; from $d_k = 256$ on,
# neighbours agree within 4 standard errors:

# %%
previous = None
for d_k in (16, 64, 256, 1024, 4096):
    P_u = softmax(saturation.query_logits(d_k, n_keys, n_queries, scale=1.0, rng=rng))
    frac = np.mean(saturation.jacobian_frobenius(P_u) > 0.1)
    se = np.sqrt(frac * (1 - frac) / n_queries)
    print(f"d_k = {d_k:4d}: fraction with ||J||_F > 0.1 = {frac:.4f}, × √d_k = {frac * np.sqrt(d_k):.2f} "
          f"± {se * np.sqrt(d_k):.2f}")
    if previous is not None and d_k >= 1024:  # compare with the previous d_k (256, then 1024)
        assert abs(frac * np.sqrt(d_k) - previous[0]) < 4 * np.hypot(se * np.sqrt(d_k), previous[1])
    previous = (frac * np.sqrt(d_k), se * np.sqrt(d_k))

# %% [markdown]
# *Optional: where it levels off.* Take a query whose two largest logits are close and the others
# far below. Then $p \approx (s, 1-s, 0, \dots)$ and $\|J\|_F \approx 2s(1-s)$, which exceeds 0.1
# exactly when the gap between the two logits is below $t = \ln\big(s_+/(1-s_+)\big)$, with
# $s_+ = (1 + \sqrt{0.8})/2$ the larger root of $2s(1-s) = 0.1$. That gap is $\|q\| \approx \sqrt{d_k}$
# times the gap $G$ between the two largest of 8 independent $N(0,1)$ draws $a_j$. The chance that
# $G < \varepsilon$ is about $\varepsilon\,f_G(0)$, where $f_G(0) = 8\cdot 7\int \varphi(x)^2\,\Phi(x)^6\,dx$
# (pick the largest and the runner-up, in order, within $\varepsilon$ of each other and above the
# other six; $\varphi$ and $\Phi$ are the $N(0,1)$ density and distribution function). So
# $f \approx f_G(0)\,t/\sqrt{d_k}$ and $f\sqrt{d_k} \to f_G(0)\,t$:

# %%
dx = 1e-3
x = np.arange(-8.0, 8.0, dx)
phi = np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)  # N(0, 1) density
Phi = 0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))  # N(0, 1) distribution function
f_gap_0 = 8 * 7 * np.sum(phi**2 * Phi**6) * dx  # density of G at 0 (the tails beyond ±8 are negligible)
s_plus = (1 + np.sqrt(0.8)) / 2
t = np.log(s_plus / (1 - s_plus))
limit = f_gap_0 * t
print(f"t = {t:.3f}, f_G(0) = {f_gap_0:.4f}, limit f_G(0) t = {limit:.2f}")
print(f"d_k = 4096: {previous[0]:.2f} ± {previous[1]:.2f}, {(previous[0] - limit) / previous[1]:+.1f} SE from the limit")
assert np.isclose(2 * s_plus * (1 - s_plus), 0.1) and abs(previous[0] - limit) < 4 * previous[1]

# %% [markdown]
# At smaller $d_k$ the values sit below this limit and climb toward it: the approximations (only two
# keys in play, $\|q\| \approx \sqrt{d_k}$) improve as $d_k$ grows.
#
# For the query the picture is starker. The key vectors in $K^\top (Jg)$ have length about
# $\sqrt{d_k}$, and unscaled there is no $c = 1/\sqrt{d_k}$ to cancel it. That growth makes up for
# the $1/\sqrt{d_k}$ fall of the average, so the *mean* $\|\partial L/\partial q\|$ does not shrink:
# it is made of rare, large kicks, while the median query gets almost nothing. Scaled, the mean and
# the median stay close:

# %%
for scaled in (False, True):
    est = grads[scaled].query_grad_norm
    print(f"{'scaled' if scaled else 'unscaled':>8}, d_k = 4096: ||dL/dq|| mean {est.mean[i4096]:.3f} ± "
          f"{est.se[i4096]:.3f}, median {est.median[i4096]:.1e}, mean / median {est.mean[i4096] / est.median[i4096]:.1e}")
u_q = grads[False].query_grad_norm
assert u_q.mean[i4096] > u_q.mean[0] and u_q.mean[i4096] / u_q.median[i4096] > 1e6
assert grads[True].query_grad_norm.mean[i4096] / grads[True].query_grad_norm.median[i4096] < 1.5

# %% [markdown]
# Either way, unscaled attention at large $d_k$ is a poor learning signal: almost every query
# sends no gradient to $W_Q$ and $W_K$, and the rare ones that do send a large, noisy kick. Scaled
# attention gives the typical query a gradient of the same modest size at every $d_k$ (mean and
# median agree). Notebook 09 trains both and sees what that does to learning.
#
# ## 6. Explorer: the Jacobian as $d_k$ grows
#
# One query against 8 keys, its Jacobian $J_{ij} = \partial p_i/\partial z_j$ as a heatmap (colour
# limits fixed at $\pm 1/4$, the largest any entry can be), at $d_k$ = 1, 16, 256 and 4096:

# %%
q = sample_components(4096, rng=rng)  # (4096,)
K8 = sample_components((8, 4096), rng=rng)  # (8 keys, 4096)
weights = {}
for d_k in (1, 16, 256, 4096):
    z = K8[:, :d_k] @ q[:d_k]  # (8, d_k) @ (d_k,) -> (8,)
    weights[d_k] = (softmax(z), softmax(z / np.sqrt(d_k)))  # the figure draws J = diag(p) - p p^T of each
    print(f"d_k = {d_k:4d}: ||J||_F unscaled {saturation.jacobian_frobenius(weights[d_k][0]):.2e}, "
          f"scaled {saturation.jacobian_frobenius(weights[d_k][1]):.2e}")
fig = grad_plots.jacobian_small_multiples(weights)
fig

# %% [markdown]
# Unscaled, the heatmap fades to a flat grey (all entries near 0) as $d_k$ grows; scaled, the
# pattern keeps its contrast. Now drag $d_k$ (and the seed). On the right, the star marks this
# query's $\|J\|_F$ against the mean and median curves for 8 keys.

# %% tags=["nbval-ignore-output"]
explorer = JacobianExplorer(d_k=64)
explorer

# %% [markdown]
# ## Summary
#
# - The softmax Jacobian is $J_{ij} = \partial p_i/\partial z_j = p_i(\delta_{ij} - p_j)$, i.e.
#   $J = \mathrm{diag}(p) - pp^\top$ (quotient rule); central differences agree to $O(h^2)$.
# - $J$ is positive semi-definite, and $|J_{ij}| \le \|J\|_F \le 2\,(1 - \max_i p_i)$: a nearly
#   one-hot softmax passes back a nearly zero gradient, $\|Jg\| \le \|J\|_F\|g\|$.
# - Unscaled, the logits grow like $\sqrt{d_k}$, the softmax saturates, and the typical query's
#   gradient to the logits and to $q$ collapses (medians below $10^{-10}$ at $d_k = 4096$ for 8
#   keys); what remains comes from near-ties of the top two logits, which get rarer like
#   $1/\sqrt{d_k}$ and reach the query as rare, large kicks.
# - Scaled, every size stays within a third of its largest value from $d_k = 1$ to 4096, and the
#   mean and the median are close.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`; the cells start with `answer = None`.
#
# **Exercise 1.** What is the Jacobian of the softmax where $p = [0.5, 0.5]$? Give a 2×2 array.

# %%
answer = None  # replace None with a 2×2 array, e.g. np.array([[1.0, 2.0], [3.0, 4.0]])
_ = check("06.jacobian_half", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The diagonal is $p_i(1 - p_i) = 0.25$, the off-diagonal $-p_1p_2 = -0.25$:
# $J = \begin{bmatrix}0.25 & -0.25\\ -0.25 & 0.25\end{bmatrix}$. This is the largest a 2-key
# Jacobian gets: $p(1-p)$ peaks at $p = 1/2$.
# </details>
#
# **Exercise 2.** For $p = [0.7, 0.2, 0.1]$, what is the largest entry of $J = \mathrm{diag}(p) - pp^\top$?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("06.largest_entry", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# Off the diagonal every entry is $-p_ip_j < 0$. On it, $p_i(1 - p_i)$ = 0.21, 0.16 and 0.09.
# The largest is $0.7 \times 0.3 = 0.21$.
# </details>
#
# **Exercise 3.** Write `my_softmax_jacobian(p)` that returns the $n\times n$ Jacobian for a
# probability vector `p` of shape `(n,)`. The checker compares it with central finite differences
# of the softmax itself, on four cases.

# %%
def my_softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    ...  # your code here: return an (n, n) array


_ = check("06.softmax_jacobian", my_softmax_jacobian)

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# def my_softmax_jacobian(p):
#     p = np.asarray(p, dtype=float)
#     return np.diag(p) - np.outer(p, p)   # J_ij = p_i (delta_ij - p_j)
# ```
#
# `np.diag(p)` puts $p_i$ on the diagonal ($\delta_{ij}p_i$); `np.outer(p, p)` holds $p_ip_j$.
# </details>
#
# ---
# **Next:** [07 — Attention end to end](07_attention_end_to_end.ipynb)
