# %% [markdown]
# # 06 — Vanishing gradients
#
# Notebook 05 showed that without the $1/\sqrt{d_k}$ the softmax saturates. Why is that bad for
# learning? $W_Q$ and $W_K$ learn from the gradient that flows back *through* the softmax.
#
# **Learning goals**
# - Derive the softmax Jacobian $J$ and check it by finite differences.
# - Bound $J$ by the weight left off the top key: nearly one-hot means a nearly zero $J$; a near tie does not.
# - Measure the gradient reaching the logits and the query against $d_k$, mean and median, unscaled vs scaled.
# - Compare the two with many keys.
#
# **Prerequisites**
# - Notebook 05 (softmax saturation).
# - Derivatives, the quotient rule and the chain rule.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import gradients, make_rng, overview, saturation
from sdpa_helpers.attention import softmax, softmax_jacobian
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import gradients as gradients_plots
from sdpa_helpers.scales import D_K_CHOICES
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.gradients import JacobianExplorer

SEED = 6
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. Where the gradient has to go
#
# For one query, attention computes logits $z_j = c\,(q\cdot k_j)$ ($c = 1/\sqrt{d_k}$ scaled,
# $c = 1$ unscaled), weights $p = \mathrm{softmax}(z)$ and the output $o = \sum_j p_j v_j$. Every
# path from the loss $L$ back to $W_Q$ and $W_K$ passes through $\partial L/\partial z$.
#
# **Two keys, by pencil.** Take weights $p = (0.999, 0.001)$ and values $v_1 = 1$, $v_2 = 3$ (plain
# numbers), so $o = 0.999 \cdot 1 + 0.001 \cdot 3 = 1.002$. Nudge $z_2$ by a small $\varepsilon$:
# $p_2$ grows by about $p_2(1 - p_2)\,\varepsilon$ (section 2 derives it) and $p_1$ loses as much, so
# $o = v_1 + p_2(v_2 - v_1)$ moves by $p_2(1 - p_2)(v_2 - v_1)\,\varepsilon = p_2(v_2 - o)\,\varepsilon
# = 0.001 \times 1.998\,\varepsilon$.
#
# The gradient reaching $z_2$ is its weight times a value difference, times the gradient from above,
# $\partial L/\partial o$. So a weight near 0 gets a gradient near 0, as long as the values and the
# gradient from above are bounded. Checked by moving $z_2$ by $\pm 0.001$:

# %%
p_two, v_two = np.array([0.999, 0.001]), np.array([1.0, 3.0])  # two keys: weights, values (numbers)
o = p_two @ v_two  # the output
h = 1e-3
o_plus, o_minus = (softmax(np.log(p_two) + [0.0, sign * h]) @ v_two for sign in (1, -1))  # z_2 moved by ±h
print(f"o = {o:.4g}, v_2 - o = {v_two[1] - o:.4g}")
verify_close("do/dz_2: central difference against p_2 (v_2 - o)", (o_plus - o_minus) / (2 * h), p_two[1] * (v_two[1] - o), rtol=1e-6)

# %% [markdown]
# That is the gradient half of the answer's part 2: if the values are bounded, a key of weight near 0
# gets almost none of the gradient $\partial L/\partial o$ arriving at the output. The gradient reaching
# weight $j$ is $g_j = \partial L/\partial p_j = v_j\,\partial L/\partial o$. For $n$ keys, write
# $J_{ij} = \partial p_i/\partial z_j$; the chain rule gives $\partial L/\partial z = J^\top g$ (deep
# dive). So a nearly zero $J$ passes back a nearly zero gradient when $g$ is bounded (section 3 makes it
# exact; Exercise 1 shows a $g$ that is not).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the chain rule through the softmax, and why $J$ is transposed
#
# Write $g_i = \partial L/\partial p_i$. With two keys, $z_1$ reaches $L$ through $p_1$ and through
# $p_2$, and the chain rule adds the two paths:
#
# $$\frac{\partial L}{\partial z_1} = g_1\frac{\partial p_1}{\partial z_1} + g_2\frac{\partial p_2}{\partial z_1} = J_{11}\,g_1 + J_{21}\,g_2,
# \qquad \frac{\partial L}{\partial z_2} = J_{12}\,g_1 + J_{22}\,g_2.$$
#
# Stacked, the two lines are the matrix $J$, transposed, times $g$ ($z_j$ is $J$'s *second* index):
# $\partial L/\partial z = J^\top g$, for $n$ keys likewise (section 2 shows $J^\top = J$). With the
# output $o = \sum_j p_j v_j$, $g_j = v_j\,\partial L/\partial o$, and $(J^\top g)_j = p_j(v_j - o)\,\partial L/\partial o$,
# the pencil line above for every key. On the two keys above, with $\partial L/\partial o = 1$:

# %% tags=["deep-dive"]
verify("J^T g with g = v equals p_j (v_j - o) for both keys", np.allclose(softmax_jacobian(p_two).T @ v_two, p_two * (v_two - o), rtol=1e-12, atol=0),
       np.array2string(p_two * (v_two - o), precision=6))

# %% [markdown]
# ## 2. The Jacobian of the softmax
#
# Write $p_i = e^{z_i}/S$ with $S = \sum_k e^{z_k}$, so $\partial S/\partial z_j = e^{z_j}$. The
# quotient rule, with $\partial e^{z_i}/\partial z_j = \delta_{ij}e^{z_i}$ ($\delta_{ij}$ is 1 if
# $i = j$, else 0), gives
#
# $$\frac{\partial p_i}{\partial z_j} = \frac{\delta_{ij}\,e^{z_i}\,S - e^{z_i}\,e^{z_j}}{S^2}
# = \delta_{ij}\,p_i - p_i\,p_j = p_i\,(\delta_{ij} - p_j), \qquad J = \mathrm{diag}(p) - p\,p^\top.$$
#
# $J$ is symmetric, so section 1's $J^\top g$ is simply $J g$. Each row sums to $p_i - p_i\sum_j p_j = 0$: shifting every logit changes no
# weight (notebook 05). Check against central finite differences (each logit moved by $\pm h$ in turn):

# %%
z = np.array([1.0, -0.5, 2.0, 0.3])
J = softmax_jacobian(softmax(z))  # diag(p) - p p^T
J_fd = gradients.finite_difference_jacobian(softmax, z, h=1e-4)  # column j = d p / d z_j
verify_close("max |finite differences - J| at h = 1e-4 (tolerance: the deep dive below)", np.abs(J_fd - J).max(), 0.0, atol=1e-4**2 / 48 + 10 * 2.2e-16 / 1e-4)
verify("J is symmetric and its rows sum to 0", np.allclose(J, J.T) and np.allclose(J.sum(axis=1), 0.0))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how accurate are finite differences?
#
# Taylor's theorem puts the error of a *central* difference at $\tfrac{h^2}{6}\,\partial^3 p_i/\partial z_j^3$
# at some point in between. Along one logit, each $p_i$ is a logistic curve $\sigma$ (or $1 - \sigma$
# times a factor $e^{z_i}/\sum_{k\ne j}e^{z_k} \le 1$), and $|\sigma'''| \le 1/8$, so the truncation error is at most $h^2/48$. Rounding
# adds about $\varepsilon/h$ ($\varepsilon \approx 2.2\times10^{-16}$): each value of $p$ carries an
# error of a few $\varepsilon$, divided by $2h$. The tolerance used above is the sum, with a factor
# 10 of margin on rounding. Over several $h$, the error divided by $h^2$ stays put: an $O(h^2)$ method.

# %% tags=["deep-dive"]
eps = np.finfo(float).eps
print(f"{'h':>7} | {'max |FD - J|':>12} | {'tolerance':>9} | {'error / h²':>10}")
for h in (1e-1, 1e-2, 1e-3, 1e-4):
    err = np.abs(gradients.finite_difference_jacobian(softmax, z, h=h) - J).max()
    tol = h**2 / 48 + 10 * eps / h
    assert err <= tol, (h, err, tol)
    print(f"{h:7.0e} | {err:12.2e} | {tol:9.1e} | {err / h**2:10.4f}")

# %% [markdown]
# ## 3. A nearly one-hot softmax has a nearly zero Jacobian
#
# Measure the size of $J$ by $\|J\|_F$, the root of the sum of its squared entries. With $m = \max_i p_i$,
#
# $$|J_{ij}| \;\le\; \|J\|_F \;\le\; 2\,(1 - m), \qquad \|J^\top g\| \;\le\; \|J\|_F\,\|g\|.$$
#
# $1 - m$ is the weight left for the other keys: 99.99% on one key means $\|J\|_F \le 0.0002$, and the
# gradient passed back is at most $0.0002\,\|g\|$.
# The proof, and the bound checked on notebook 05's logits and on 5000 random softmaxes, are in the
# deep dive below. It needs a bounded $g$, as in attention (section 1); Exercise 1 shows what reaches
# the logits when $g$ is not bounded.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: proof of the bound, and why 2 cannot be lowered
#
# First the bound at work: Karpathy's five logits from notebook 05, times 1, 8 and 64; then 5000
# random softmaxes of 8 logits, flat to extremely peaked:

# %% tags=["deep-dive"]
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
for c in (1, 8, 64):
    print(f"logits × {c:2d}: max p = {softmax(c * z5).max():.4f}, ||J||_F = {gradients.jacobian_frobenius(softmax(c * z5)):.2e}")
c = np.exp(rng.uniform(np.log(0.1), np.log(40.0), 5000))  # logit scales from 0.1 to 40
P = softmax(c[:, None] * rng.standard_normal((5000, 8)))  # (5000, 8) probability vectors
gap = gradients.one_minus_max(P)  # 1 - max p, summed from the small weights
ratio = gradients.jacobian_frobenius(P) / (2 * gap)
verify("||J||_F <= 2 (1 - max p) on all 5000", np.all(ratio <= 1 + 1e-12), f"largest ratio {ratio.max():.3f}")

# %% [markdown] tags=["deep-dive"]
# **Section 1's step.** $(J^\top g)_j = \sum_i J_{ij}\,g_i$ is column $j$ of $J$ dotted with $g$; by
# Cauchy–Schwarz it is at most that column's length times $\|g\|$, and summing the squares over $j$
# gives $\|J^\top g\| \le \|J\|_F\,\|g\|$.
#
# **(a) $J$ is positive semi-definite.** For any $v$, $v^\top J v = \sum_i p_i v_i^2 - (\sum_i p_i v_i)^2$:
# the variance of $v_I$ when the index $I$ is drawn with probabilities $p$, so $\ge 0$.
#
# **(b) For such a matrix the Frobenius norm is at most the trace.** Its eigenvalues $\lambda_k \ge 0$, so
# $\|J\|_F = \sqrt{\sum_k \lambda_k^2} \le \sum_k \lambda_k = \mathrm{tr}\,J$.
#
# **(c) The trace.** $\mathrm{tr}\,J = \sum_i p_i(1 - p_i) = 1 - \sum_i p_i^2 \le 1 - m^2$.
#
# **(d) Factor.** $1 - m^2 = (1 - m)(1 + m) \le 2\,(1 - m)$. And $|J_{ij}| \le \|J\|_F$ since one
# entry's square is part of the sum. Every link, checked on the same 5000 softmaxes (slack $10^{-12}$
# for rounding), then the tight case: two keys, $p = (m, 1-m)$, $\|J\|_F = 2m(1-m)$, whose ratio to
# the bound is $m \to 1$.

# %% tags=["deep-dive"]
Js = softmax_jacobian(P)  # (5000, 8, 8)
fro, trace, m = gradients.jacobian_frobenius(P), np.trace(Js, axis1=1, axis2=2), P.max(axis=1)
slack = 1e-12
verify("(a) J is positive semi-definite", np.linalg.eigvalsh(Js).min() > -slack)
verify("(b) ||J||_F <= tr J and (c) tr J <= 1 - m²", np.all(fro <= trace + slack) and np.all(trace <= 1 - m**2 + slack))
verify("(d) 1 - m² <= 2 (1 - m), and |J_ij| <= ||J||_F", np.all(1 - m**2 <= 2 * gap + slack)
       and np.all(np.abs(Js).max(axis=(1, 2)) <= fro * (1 + 1e-12) + slack))  # slack: m - m² rounds at m = 1
for m2 in (0.9, 0.99, 0.999):
    r = gradients.jacobian_frobenius([m2, 1 - m2]) / (2 * (1 - m2))
    verify_close(f"two keys, m = {m2}: ||J||_F / bound", r, m2, rtol=1e-9)

# %% [markdown] tags=["deep-dive"]
# The 5000 softmaxes against the bound, on log axes: every point lies on or under the dashed line,
# and near one-hot they sit almost on it ($\|J\|_F \approx 2(1 - p_{\max})$ when one other key holds
# most of the remaining weight).

# %% tags=["deep-dive"] alt="Log-log scatter of ||J||_F against 1 - max p for 5000 random softmaxes of 8 logits: every point lies on or under the dashed bound 2(1 - max p), and near one-hot the points sit almost on it."
gradients_plots.jacobian_bound_figure(gap, fro).figure

# %% [markdown]
# ## 4. The exception: a near tie
#
# A softmax is far from one-hot when its two largest logits almost tie. Take 8 logits, a near tie
# $[5.0, 4.9, 0, \dots, 0]$ and a clear winner $[5.0, 3.0, 0, \dots, 0]$, each as it is and times 8
# (at $d_k = 64$, unscaled logits are the scaled ones times $\sqrt{64} = 8$):

# %%
tie_fro = {}  # ||J||_F per (runner-up logit, factor)
for top2 in ([5.0, 4.9], [5.0, 3.0]):
    for c in (1, 8):  # × 8: unscaled against scaled at d_k = 64
        p = softmax(c * np.array(top2 + [0.0] * 6))
        tie_fro[top2[1], c] = gradients.jacobian_frobenius(p)
        print(f"{c} × [{top2[0]}, {top2[1]}, 0, …]: weights {p[0]:.2f}, {p[1]:.2f}, … | ||J||_F = {tie_fro[top2[1], c]:.2g}")
s_plus = (1 + np.sqrt(0.8)) / 2  # two keys, p = (s, 1 - s): ||J||_F = 2 s (1 - s) = 0.1 at s = s_plus
print(f"two keys: ||J||_F > 0.1 while the gap between their logits is below {np.log(s_plus / (1 - s_plus)):.1f}")
verify("× 8: the near tie keeps ||J||_F > 0.1, the clear winner's falls below 1e-6", tie_fro[4.9, 8] > 0.1 > 1e-6 > tie_fro[3.0, 8])

# %% [markdown]
# Times 8, the clear winner turns one-hot and its $\|J\|_F$ drops from 0.21 to $2.3\times10^{-7}$. The near
# tie still splits its weight (0.69, 0.31) and keeps $\|J\|_F = 0.43$: moving one of the two top logits
# moves weight between them. With pencil: when two keys share the weight, $p \approx (s, 1-s, 0, \dots)$,
# $J$ has four sizeable entries, $\pm s(1-s)$ (on the diagonal $p_i(1-p_i)$, off it $-p_1p_2$), so
# $\|J\|_F \approx 2s(1-s) = 2 \cdot 0.69 \cdot 0.31 \approx 0.43$; one-hot, $s = 1$, gives 0.
#
# Call a query a **near tie** when $\|J\|_F > 0.1$: for two keys, a gap under 2.9 between their logits.
# Unscaled, the gaps grow like $\sqrt{d_k}$, so fewer queries stay near ties.

# %% [markdown] predict_answer=["rises", "rise"]
# ## 5. Gradient size against $d_k$
#
# One query against $n = 8$ keys, all components $N(0,1)$. With no real loss, a random $g$ (independent
# $N(0, 1)$ components) stands in for the bounded gradient from above. We measure $\|J\|_F$, the gradient reaching the **logits**
# $\|J g\|$, and the gradient reaching the **query**, $\partial L/\partial q = c\,K^\top (J g)$ (chain rule
# through $z_j = c\,q\cdot k_j$), over 20 000 queries per $d_k$: **mean** and **median**.
#
# **Predict:** as $d_k$ goes from 1 to 4096, does the *mean* unscaled gradient to the query shrink steadily, collapse, stay or grow? And the median?

# %% alt="Three log-scale panels against d_k from 1 to 4096: ||J||_F, the gradient to the logits and the gradient to the query, mean (filled markers, ±1 SE) and median (dotted line, hollow markers). Scaled (blue; means solid, medians dotted, lying on the means but for the gradient to the query at small d_k) every curve stays between 0.17 and 0.37 (the lowest, the median to the query at d_k = 1). Unscaled (vermillion; means dashed, medians dotted) the medians collapse below 1e-10 at d_k = 4096, the mean to the logits falls far less, and the mean to the query rises to about 1.1, above the scaled one from d_k = 2 on."
n_keys, n_queries = 8, 20_000
grads = {s: gradients.gradient_curves(D_K_CHOICES, n_keys, n_queries, scale=s, rng=SEED) for s in ("unscaled", "sqrt")}
gradients_plots.gradient_norms_figure(grads["unscaled"], grads["sqrt"])

# %% [markdown]
# Filled markers: the mean (±1 SE); dotted line, hollow markers: the median. **What happened:** unscaled (vermillion),
# the two part ways.
#
# - The **median** query's gradient to $q$ collapses: below the scaled one from $d_k = 64$ on, below
#   $10^{-10}$ at 4096. The typical query is a clear winner, and section 3's bound squeezes it. Up to
#   $d_k = 32$ it is still above the scaled one: the keys' length (next bullet) outweighs a $J$ not yet small.
# - The **mean** rises: above the scaled one from $d_k = 2$ on, to 1.11 at 4096, carried by section 4's
#   near ties, whose $J$ is not small. Why their gradient to $q$ is large: $z_j = c\,q\cdot k_j$, so
#   $\partial z_j/\partial q = c\,k_j$, and the gradient to $q$ is $\sum_j (\partial L/\partial z_j)\,c\,k_j$,
#   a sum of keys. Each $k_j$ has length about $\sqrt{d_k}$. Scaled, $c\sqrt{d_k} = 1$; unscaled, $c = 1$
#   and the $\sqrt{d_k}$ stays. So each near tie gets a large **kick**.
#
# Scaled (blue), little moves (checked in the deep dive after this section). The near ties counted, unscaled:

# %%
u, s = grads["unscaled"].query_grad_norm.mean, grads["sqrt"].query_grad_norm.mean  # mean ||dL/dq|| per d_k
med_ratio = grads["unscaled"].query_grad_norm.median / grads["sqrt"].query_grad_norm.median  # per d_k
verify("median ||dL/dq||: unscaled above scaled at d_k = 2 … 32, below from 64 on", np.all(med_ratio[1:6] > 1) and np.all(med_ratio[6:] < 1), "unscaled ÷ scaled: " + ", ".join(f"d_k = {d}: {med_ratio[D_K_CHOICES.index(d)]:.2g}" for d in (16, 32, 64, 128, 256, 4096)))
verify("mean ||dL/dq||: unscaled above scaled at every d_k from 2 on", np.all(u[1:] > s[1:]), "unscaled, scaled: " + ", ".join(f"d_k = {d}: {u[i]:.2f}, {s[i]:.2f}" for d, i in ((1, 0), (2, 1), (64, 6), (4096, 12))))

# %%
tail = {s: gradients.gradient_samples((64, 256, 1024, 4096), n_keys, n_queries, scale=s, rng=SEED + 1) for s in ("unscaled", "sqrt")}
for i, d in enumerate(tail["unscaled"].d_k):
    u_q, s_q, tie = tail["unscaled"].query_grad_norm[i], tail["sqrt"].query_grad_norm[i], tail["unscaled"].jacobian_norm[i] > 0.1
    frac, kick = tie.mean(), np.median(u_q[tie])  # share of near ties; their median ||dL/dq||
    print(f"d_k = {d:4d}: near ties {frac:4.0%} of queries | their kick: median {kick:4.1f}, mean {u_q[tie].mean():4.1f} | their share of the mean {u_q[tie].sum() / u_q.sum():.0%}")
verify(f"d_k = 4096: unscaled mean > scaled mean, median < 1e-8; near ties < 10 % of queries carry > 80 %; median kick {kick / np.median(s_q):.0f}× the scaled median", u_q.mean() > s_q.mean() and np.median(u_q) < 1e-8 and frac < 0.1 and u_q[tie].sum() > 0.8 * u_q.sum())

# %% [markdown]
# **One picture: 100 unscaled queries at $d_k = 4096$, in proportion.** About 6 are near ties, with kicks of about 16 on
# average (median 11.5); about half of the 100 get under $10^{-10}$. The mean of the 100, 1.11, beats the scaled 0.34, yet 90 %
# of it is those 6 kicks shared out over all 100: the typical query gets nothing. So the title's
# "vanishing" is true of the typical query, not of the mean. From $d_k = 64$ on, each 4× in $d_k$ roughly halves the near
# ties' share (44 % to 6 %) and doubles their kick, so the mean barely moves (0.98 to 1.11).
#
# Does a larger mean make a head learn faster, or a collapsed median stop it? Neither follows: only
# training can tell (09).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the three curves, checked at every $d_k$
#
# For $\|J\|_F$ and the gradient to the logits, the scaled mean's largest value over $d_k$ is within 6 % of
# its smallest; for the gradient to the query, within 1.5×. The unscaled median at $d_k = 4096$ is below
# $10^{-10}$ for all three. The unscaled median to the logits is below the scaled one from $d_k = 2$ on,
# where the median to the query is still above it: the keys' length.

# %% tags=["deep-dive"]
for field, within in (("jacobian_norm", 1.06), ("logit_grad_norm", 1.06), ("query_grad_norm", 1.5)):
    s_mean, u_med = getattr(grads["sqrt"], field).mean, getattr(grads["unscaled"], field).median
    verify(f"{field}: scaled largest mean ≤ {within:g} × the smallest; unscaled median < 1e-10 at d_k = 4096",
           s_mean.max() <= within * s_mean.min() and u_med[-1] < 1e-10, f"scaled {s_mean.min():.3f} to {s_mean.max():.3f}")
logit_ratio = grads["unscaled"].logit_grad_norm.median / grads["sqrt"].logit_grad_norm.median  # median ||Jg||, per d_k
verify("median ||Jg|| (to the logits): unscaled below scaled at every d_k from 2 on", np.all(logit_ratio[1:] < 1), "unscaled ÷ scaled: " + ", ".join(f"d_k = {d}: {logit_ratio[D_K_CHOICES.index(d)]:.2g}" for d in (2, 4, 8)))

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the gradient to the query without $d_k$-long vectors
#
# `gradient_curves` uses notebook 05's shortcut. Write each key as its part along $q$ (the $a_j$ that
# set the logits) plus a part $k_j^\perp$ orthogonal to $q$, independent of the logits. With $v = Jg$,
# $K^\top v = (a\cdot v)\,q/\|q\| + \sum_j v_j k_j^\perp$. Given the logits and $g$ (so given $v$), the
# second term is a normal vector in the $d_k - 1$ directions orthogonal to $q$, with variance
# $\sum_j v_j^2 = \|v\|^2$ in each, so
# $\|K^\top v\|^2 = (a\cdot v)^2 + \|v\|^2\chi^2_{d_k - 1}$ exactly. Check against full vectors at
# $d_k = 64$ (difference within 4 standard errors):

# %% tags=["deep-dive"]
from sdpa_helpers.sampling import sample_components

n_q, d_k = 4000, 64
Q, K = sample_components((n_q, d_k), rng=rng), sample_components((n_q, n_keys, d_k), rng=rng)
G = rng.standard_normal((n_q, n_keys))  # upstream dL/dp
for scale in ("unscaled", "sqrt"):
    c = 1.0 if scale == "unscaled" else 1 / np.sqrt(d_k)
    grad_z = gradients.logit_gradient(softmax(c * np.einsum("qd,qkd->qk", Q, K)), G)  # J g, (n_q, n_keys)
    direct = saturation.mc_estimate(np.linalg.norm(c * np.einsum("qk,qkd->qd", grad_z, K), axis=1))
    short = gradients.gradient_curves([d_k], n_keys, n_q, scale=scale, rng=rng).query_grad_norm
    verify_close(f"{scale}: ||dL/dq|| shortcut minus full vectors", short.mean[0] - direct.mean, 0.0,
                 se=np.hypot(direct.se, short.se[0]))

# %% [markdown] tags=["deep-dive"]
# ### Section 5's near ties, as ratios
#
# Each time $d_k$ grows 4× ($\sqrt{d_k}$ 2×), the share of near ties roughly halves (44, 23, 12, 6 %) and
# their kick roughly doubles (1.6, 3.0, 5.8, 11.5): a share that falls like $1/\sqrt{d_k}$ (about
# $4/\sqrt{d_k}$), each with a kick that grows like $\sqrt{d_k}$ (about $0.2\sqrt{d_k}$), so the mean
# holds steady. Then the fraction times $\sqrt{d_k}$ and
# the median kick over $\sqrt{d_k}$ change slowly. They do not level off yet: the first climbs toward the
# limit 4.11 of the next deep dive, the second falls about 10 %, and their product stays near 0.7. On this
# draw the first goes from 3.55 at $d_k$ = 64 to 3.96 at 4096; with 20,000 queries the value at 4096 is
# uncertain by about ±0.1, too much to pin down the size of that rise. The bands below allow for the drift
# and for that noise.

# %% tags=["deep-dive"]
ratios = []
for i, d in enumerate(tail["unscaled"].d_k):
    u_q, tie = tail["unscaled"].query_grad_norm[i], tail["unscaled"].jacobian_norm[i] > 0.1
    ratios.append((tie.mean() * np.sqrt(d), np.median(u_q[tie]) / np.sqrt(d)))
    print(f"d_k = {d:4d}: fraction × √d_k = {ratios[-1][0]:.2f} | median kick / √d_k = {ratios[-1][1]:.2f}")
f_r, k_r = np.array(ratios).T
verify("d_k = 64 ... 4096: fraction × √d_k within 3.3-4.3, median kick / √d_k within 0.15-0.22",
       np.all((3.3 < f_r) & (f_r < 4.3)) and np.all((0.15 < k_r) & (k_r < 0.22)))

# %% [markdown] tags=["deep-dive"]
# ### Near-ties get rarer like $1/\sqrt{d_k}$
#
# The fraction $f$ of unscaled queries with $\|J\|_F > 0.1$, times $\sqrt{d_k}$, should level off
# (binomial SE $\sqrt{f(1-f)/N}$). Where: take a query whose two largest logits are close and the
# others far below. Then $p \approx (s, 1-s, 0, \dots)$ and $\|J\|_F \approx 2s(1-s)$, which exceeds 0.1
# when the gap between the two logits is below $t = \ln(s_+/(1-s_+))$, with $s_+ = (1 + \sqrt{0.8})/2$.
# That gap is $\|q\| \approx \sqrt{d_k}$ times the gap $G$ between the two largest of 8 independent
# $N(0,1)$ draws, and $P(G < \varepsilon) \approx \varepsilon f_G(0)$ with
# $f_G(0) = 8\cdot 7\int \varphi(x)^2\Phi(x)^6\,dx$ (the largest and the runner-up, in order, within
# $\varepsilon$ of each other and above the other six). With $\|q\|/\sqrt{d_k} \to 1$, $f\sqrt{d_k} \to f_G(0)\,t$
# as $d_k \to \infty$. The approach is slow (the relative correction, from the $\varepsilon^2$ term of
# $P(G < \varepsilon)$, shrinks only like $1/\sqrt{d_k}$): with 400,000 queries per $d_k$ (SE under 1 %),
# $f\sqrt{d_k}$ still sits $2.6 \pm 0.6$ % below the limit at $d_k = 4096$ in this draw (± one SE). The check: it
# climbs towards the limit from below, and is within 5 % of it at $d_k = 4096$.

# %% tags=["deep-dive"]
import math

dx = 1e-3
x = np.arange(-8.0, 8.0, dx)
phi, Phi = np.exp(-x**2 / 2) / np.sqrt(2 * np.pi), 0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
s_plus = (1 + np.sqrt(0.8)) / 2
limit = 8 * 7 * np.sum(phi**2 * Phi**6) * dx * np.log(s_plus / (1 - s_plus))
g_tie, n_tie, f_root = make_rng(SEED + 200), 400_000, []  # a stream of its own; f √d_k per d_k
for d in (16, 256, 4096):
    P_u = softmax(saturation.query_logits(d, n_keys, n_tie, scale="unscaled", rng=g_tie))
    frac = np.mean(gradients.jacobian_frobenius(P_u) > 0.1)
    se = np.sqrt(frac * (1 - frac) / n_tie)
    f_root.append(frac * np.sqrt(d))
    print(f"d_k = {d:4d}: fraction with ||J||_F > 0.1 = {frac:.4f}, × √d_k = {f_root[-1]:.3f} ± {se * np.sqrt(d):.3f}, "
          f"{1 - f_root[-1] / limit:.1%} ± {se * np.sqrt(d) / limit:.1%} below the limit {limit:.3f}")
del P_u  # 400,000 × 8 weights the kernel need not keep (26 MB)
verify("f √d_k climbs towards the limit from below (d_k = 16, 256, 4096)", f_root[0] < f_root[1] < f_root[2] < limit)
verify_close("f √d_k at d_k = 4096 within 5 % of the limit f_G(0) t", f_root[-1], limit, rtol=0.05)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: explorer — the Jacobian of one query as $d_k$ grows
#
# One query against 8 keys, its Jacobian $J_{ij} = \partial p_i/\partial z_j$ as a heatmap (colour
# limits $\pm 1/4$, the largest any entry can be), at $d_k$ = 1, 16, 256 and 4096. Neither a lucky nor an
# unlucky query: of seeds 0–98, the one whose unscaled $\|J\|_F$ ranks closest to the middle (deep dive below).

# %% tags=["deep-dive"] alt="Jacobian heatmaps of one median-ranked query against 8 keys at d_k = 1, 16, 256 and 4096, unscaled (top) and scaled (bottom), colour limits ±1/4: unscaled the pattern fades to flat, ||J||_F from 0.36 to 7e-12; scaled it keeps its contrast, ||J||_F 0.35 to 0.38."
panel_d = (1, 16, 256, 4096)
typical = gradients.typical_query_seed(D_K_CHOICES, panel_d, n_keys, seeds=range(99))
z_typical = saturation.prefix_logits(D_K_CHOICES, n_keys, rng=typical)  # (13 d_k, 8 keys): one query, its first d_k components
panels = gradients.jacobian_panels(panel_d, z_typical[[D_K_CHOICES.index(d) for d in panel_d]])
print(f"seed {typical}, ||J||_F unscaled:", ", ".join(f"{f:.2g}" for f in panels.frobenius[0]), "| scaled:", ", ".join(f"{f:.2f}" for f in panels.frobenius[1]))
gradients_plots.jacobian_small_multiples(panels)

# %% [markdown] tags=["deep-dive"]
# Unscaled, this query's heatmap fades to flat ($\|J\|_F$ from 0.36 to $7\times10^{-12}$); scaled, it keeps
# its contrast (0.35 to 0.38). Drag $d_k$ and the seed (seed 0
# is a closer tie, unscaled above scaled at $d_k = 64$); the star marks the query's $\|J\|_F$ against the mean and median curves.

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer: drag d_k from 1 to 4096 and the seed; the Jacobian heatmaps of one query against 8 keys, unscaled and scaled, and a star marking its ||J||_F against the mean and median curves; opens at d_k = 64."
explorer = JacobianExplorer()
explorer

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how the explorer's query is picked
#
# For every seed 0–98 the code computes the unscaled $\|J\|_F$ at each $d_k$, ranks it among the 99
# seeds (its percentile), and picks the seed with the smallest sum of $|\text{percentile} - 50|$ over
# $d_k$ = 1, 16, 256 and 4096. At $d_k$ = 16 and 64 it is itself a near tie, like 44 % of queries at 64:

# %% tags=["deep-dive"]
z_seed = [saturation.prefix_logits(D_K_CHOICES, n_keys, rng=s) for s in range(99)]  # per seed: (13 d_k, 8 keys)
fro = np.array([gradients.jacobian_panels(D_K_CHOICES, z).frobenius for z in z_seed])  # (seed, scale, d_k)
for i in [D_K_CHOICES.index(d) for d in panel_d + (64,)]:
    print(f"d_k = {D_K_CHOICES[i]:4d}: seed {typical} ||J||_F unscaled {fro[typical, 0, i]:.2g} (percentile {np.mean(fro[:, 0, i] < fro[typical, 0, i]):.0%}), scaled {fro[typical, 1, i]:.2f}")
verify(f"seed {typical}: a near tie at d_k = 16 and 64, yet unscaled below scaled at d_k = 16, 64, 256, 4096", np.all(fro[typical, 0, [4, 6]] > 0.1) and np.all(np.subtract(*fro[typical][:, [4, 6, 8, 12]]) < 0))
verify("the explorer deep dive's panels are this seed's", np.allclose(panels.frobenius, fro[typical][:, [D_K_CHOICES.index(d) for d in panel_d]]))

# %% [markdown]
# ## 6. More keys
#
# Sections 4 and 5 used 8 keys; part 2 of the answer names 16, because with many keys commitment comes
# later: with 1024 keys, only 30 % of queries are over 0.9 at $d_k = 64$ (notebook 05). The scaled weights
# are then spread so thinly that moving one logit barely moves any weight: the scaled $J$ is small, and at
# $d_k = 64$ the unscaled median query's $J$ is about 6× the scaled one, the larger up to $d_k = 256$ (per
# unit move of the logits; per move of $q$, $\sqrt{d_k}$ times more unscaled: deep dive).

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: more keys, ten draws
#
# Sections 4 and 5 used 8 keys. With many keys the comparison can turn. Scaled, the weight is spread
# thinly over 1024 keys, so moving one logit barely moves any weight: $\|J\|_F$ is about 0.05, 1.6 times
# its value for 1024 equal weights, $\sqrt{n-1}/n \approx 1/32$ (checked below). The unscaled gradient
# can be the larger one in other ways too, through the query on average (section 5's mean) and summed
# over a batch (09). On 09's task, each model at its best rate, it is slower learning, not no learning;
# with SGD at one fixed small rate the unscaled head can even be the faster (09 §4).
#
# **If a query has 1024 keys and $d_k = 64$, the unscaled median query's $J$ is the larger one**, about
# 6× the scaled one. Unscaled, the weight sits on a few keys, yet only 29 % of queries are over 0.9. Ten
# draws of 1000 queries each (and 16 keys for comparison):

# %% tags=["deep-dive"]
def summary(d, n, seed, n_q):  # what overview.compare(d, n, n_q, rng=seed).summary() keeps, without sorting all weights
    p = [softmax(saturation.query_logits(d, n, n_q, scale=s, rng=seed)) for s in ("unscaled", "sqrt")]  # (n_q, n) each
    return overview.ComparisonSummary(d, n, *(w.max(axis=1) for w in p), *(gradients.jacobian_frobenius(w) for w in p))


draws = {(n, d): [summary(d, n, SEED + i, n_q) for i in range(10)]  # ten draws per (keys, d_k)
         for n, ds, n_q in ((overview.MANY_KEYS, (64, 256, 512), 1000), (overview.N_KEYS, (64,), 2000)) for d in ds}

# %% tags=["deep-dive"]
ten = {}  # (n_keys, d_k): the median over ten draws of the median ||J||_F ratio
for (n, d), ds in draws.items():
    r, above = [c.ratio for c in ds], [c.committed for c in ds]  # per draw
    ten[n, d] = np.median(r)
    print(f"d_k = {d:3d}, {n:4d} keys, ten draws of {len(ds[0].jacobian_unscaled)}: above 0.9 {np.mean(above):.0%} ({min(above):.0%} to {max(above):.0%}); "
          f"median size of J, unscaled ÷ scaled: median {ten[n, d]:.2g}, range {min(r):.2g} to {max(r):.2g}")
verify("1024 keys, median of ten draws: median ||J||_F unscaled above scaled at d_k = 64 and 256, below at 512; 16 keys: below at 64", ten[1024, 64] > 1 and ten[1024, 256] > 1 > ten[1024, 512] and ten[16, 64] < 1)
j_even = np.median([np.median(c.jacobian_scaled) for c in draws[1024, 64]])  # scaled, d_k = 64, ten draws
verify("1024 keys, scaled: the median ||J||_F is between 1 and 2 times that of 1024 equal weights, sqrt(1023)/1024",
       1 < j_even / (np.sqrt(1023) / 1024) < 2, f"scaled median {j_even:.2f}, equal weights {np.sqrt(1023) / 1024:.4f}: {j_even / (np.sqrt(1023) / 1024):.1f} times")

# %% [markdown] tags=["deep-dive"]
# With 1024 keys the unscaled $J$ stays the larger up to $d_k = 256$ and falls behind from 512; with 16
# keys it is already smaller at 64.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: one draw of section 6, as a table
#
# The first of the ten draws at three $d_k$, 1024 keys (its share over 0.9 at $d_k = 64$ is the low one
# of the ten; notebook 05's draw gives 30 %):

# %% tags=["deep-dive"]
print(overview.comparison_table([draws[overview.MANY_KEYS, d][0] for d in (64, 256, 512)]))  # 1024 keys, the first draw

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how the weights respond to $q$
#
# $\|J\|_F$ counts how much the weights move per unit move of the logits the softmax sees. $W_Q$ moves
# $q$, and when $q$ moves, an unscaled logit $q\cdot k_j$ moves $\sqrt{d_k}$ times as much as the scaled
# $q\cdot k_j/\sqrt{d_k}$. So per move of $q$ the ratio, unscaled ÷ scaled, is about $\sqrt{d_k}$ times the
# $\|J\|_F$ ratio (three repeats with fresh draws):

# %% tags=["deep-dive"]
few = overview.compare(64, rng=SEED)  # 16 keys, one draw
verify("section 6's summary() gives what overview.compare(...).summary() gives (16 keys, d_k = 64)",
       all(np.array_equal(x, y) for x, y in zip(summary(64, 16, SEED, 2000)[2:], few.summary()[2:])))
resp = {n: (ds, overview.query_gradient_ratios(ds, n, nq, seeds=range(3))) for n, ds, nq in ((16, (64, 256), 3000), (1024, (64,), 300))}
print("\n".join(overview.format_gradient_ratios(n, ds, r) for n, (ds, r) in resp.items()))
verify("response to q, in every repeat: 16 keys above 1 at d_k = 64, below at 256; 1024 keys above 10 at 64", (resp[16][1][:, 0] > 1).all() and (resp[16][1][:, 1] < 1).all() and (resp[1024][1] > 10).all())
rule = {16: 8 * few.ratio, 1024: 8 * draws[overview.MANY_KEYS, 64][0].ratio}  # √d_k × the ||J||_F ratio at d_k = 64
verify("d_k = 64: response to q within 25 % of √d_k × the ||J||_F ratio, 16 and 1024 keys", all(abs(np.median(resp[n][1][:, 0]) / rule[n] - 1) < 0.25 for n in rule),
       ", ".join(f"{n} keys: ||J||_F ratio {r / 8:.2f}, × √64 = {r:.2g}" for n, r in rule.items()))

# %% [markdown] tags=["deep-dive"]
# Through the query the unscaled weights respond more at $d_k = 64$: 2.8× with 16 keys, 47× with 1024.
# With 16 keys they respond less at 256 (0.34×): the unscaled side falls behind only at larger $d_k$,
# later with more keys.

# %% [markdown]
# ## Summary
#
# - A key's logit gets its weight times a value difference times the gradient arriving at the output
#   (section 1): if the values are bounded, most keys a committed query ignores get almost none of it
#   (part 2, **commitment**; 00's deep dive measures "most": 90 % weigh under 0.001). The softmax
#   passes back less as it commits, $\|J\|_F \le 2(1 - m)$; a near tie keeps a large $J$.
# - With 8 keys (section 5), unscaled, the median query's gradient to $q$ falls below the scaled one
#   from $d_k = 64$ (below $10^{-10}$ at 4096), while the mean to $q$ rises, carried by near ties.
#   Scaled, the mean $\|J\|_F$ and gradient to the logits change by under 6 % across $d_k$, the gradient
#   to $q$ by under 1.5×.
# - The unscaled gradient is not smaller everywhere: through the query, summed over a batch, or with many
#   keys it can be larger. On 09's task, each model at its best rate, it is slower learning, not no
#   learning (part 3, **speed**); with SGD at one fixed small rate the unscaled head can be faster (09).
#
# ## Exercises
#
# Each is checked by `check(key, answer)`, numbers to three significant figures.
#
# **When the upstream gradient is not bounded.** Section 3's bound needs a bounded $g$. Cross-entropy put
# directly on $p$, $L = -\ln p_t$ for a target key $t$, has $g = -e_t/p_t$ ($e_t$: 1 at place $t$, 0
# elsewhere), which grows without bound as $p_t \to 0$. Exercise 1 asks what reaches the logits then.
#
# **Exercise 1 (apply).** A softmax is saturated on the wrong key: $p = [0.99, 0.01]$, and the loss is
# cross-entropy on $p$ with target key 2, $L = -\ln p_2$. What is $\|\partial L/\partial z\|$?
# (three significant figures) Does the bound $\|J\|_F \le 2(1 - \max p)$ say it must be small? Why not?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("06.cross_entropy_grad", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $\partial L/\partial z = J^\top g$ with $g = (0, -1/p_2)$, which is $p - e_2 = (0.99, -0.99)$, of norm
# $0.99\sqrt2 \approx 1.40$. The bound gives $\|J\|_F \le 0.02$, but $\|J^\top g\| \le \|J\|_F\,\|g\|$ and
# $\|g\| = 100$: the upstream gradient is not bounded, it grows as $1/p_2$. That is why
# cross-entropy on the softmax output keeps learning even when the softmax is confidently wrong,
# while the gradient through an attention softmax, whose $g$ comes from bounded values, vanishes
# (a deep dive after the exercises checks $J^\top g = p - e_t$ on three keys). Notebook 09 puts a read-out
# after its attention for this reason.
# </details>
#
# **Exercise 2 (conceptual).** At $d_k = 4096$ the unscaled mean gradient to $q$ beats the scaled one. Does
# that larger mean show that unscaled attention learns better? (a) yes; (b) no, a few near ties carry the
# mean; (c) no, the bound $\|J^\top g\| \le \|J\|_F\|g\|$ fails there. A letter, then why.

# %%
answer = None  # replace None with a letter, e.g. "a"
_ = check("06.mean_vs_typical", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (b). Section 5: at $d_k = 4096$ about 6 % of queries, the near ties, get kicks about 37× the scaled median
# (on this draw) and carry about 90 % of the unscaled mean; the median query's gradient is below $10^{-10}$.
# The bound holds for every query, so (c) is wrong: near ties simply have a $J$ that is not small. A mean
# says nothing about speed either way; training does (09 §4): at a fixed small learning rate the
# unscaled head can even learn faster, and, each model at its best rate, it needs more steps as $d_k$
# grows from 16.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3.** Write `my_softmax_jacobian(p)` returning the $n\times n$ Jacobian for a probability
# vector `p` of shape `(n,)`. The checker compares it with central finite differences of the softmax.

# %% tags=["deep-dive"]
def my_softmax_jacobian(p):
    ...  # your code here: return an (n, n) array


_ = check("06.softmax_jacobian", my_softmax_jacobian)

# %% [markdown] tags=["deep-dive"]
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

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** What is the Jacobian of the softmax where $p = [0.5, 0.5]$? Give a 2×2 array
# (three significant figures).

# %% tags=["deep-dive"]
answer = None  # replace None with a 2×2 array, e.g. np.array([[1.0, 2.0], [3.0, 4.0]])
_ = check("06.jacobian_half", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# The diagonal is $p_i(1 - p_i) = 0.25$, the off-diagonal $-p_1p_2 = -0.25$. This is the largest a
# 2-key Jacobian gets: $p(1-p)$ peaks at $p = 1/2$.
# </details>
#
# **Exercise 5.** For $p = [0.7, 0.2, 0.1]$, what is the largest entry of $J = \mathrm{diag}(p) - pp^\top$?
# (three significant figures)

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("06.largest_entry", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# Off the diagonal every entry is $-p_ip_j < 0$; on it, $p_i(1 - p_i)$ = 0.21, 0.16, 0.09. The largest is 0.21.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: $J^\top g$ under cross-entropy, on a softmax saturated on the wrong key (Exercise 1)
#
# Here $J^\top g = (\mathrm{diag}\,p - pp^\top)(-e_t/p_t) = p - e_t$ (its norm about $\sqrt 2$, however
# saturated), checked on three keys with the weight on key 1 and the target key 2:

# %% tags=["deep-dive"]
p = softmax(np.array([12.0, 0.0, 0.0]))  # nearly one-hot on key 1; the target is key 2
g = np.array([0.0, -1 / p[1], 0.0])  # dL/dp for L = -log p_2
verify_close(f"max p = {p.max():.6f}, yet ||J^T g|| = ||p - e_2||", np.linalg.norm(gradients.logit_gradient(p, g)), np.linalg.norm(p - [0, 1, 0]), rtol=1e-9)

# %% [markdown]
# ## Next
#
# **Next:** [07 — Attention end to end](07_attention_end_to_end.ipynb)
