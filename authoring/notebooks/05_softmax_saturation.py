# %% [markdown]
# # 05 — Softmax saturation
#
# Unscaled logits $q\cdot k$ spread like $\sqrt{d_k}$ (notebook 02). What does that do to the softmax, and *when*?
#
# **Learning goals**
# - See that only the *gaps* between logits matter, and that multiplying them makes the softmax peaky.
# - Measure saturation (largest weight, entropy $H$, effective keys $e^{H}$) against $d_k$, unscaled vs scaled.
# - Tell the **onset** of saturation from **commitment**, and how each moves with the number of keys.
# - Read $1/\sqrt{d_k}$ as an inverse temperature.
#
# **Prerequisites**
# - Notebooks 00, 02 and 04: the softmax and entropy, $\mathrm{Var}(q\cdot k) = d_k$, $\mathrm{Var}(cX) = c^2\,\mathrm{Var}(X)$.
# - The exponential and the natural logarithm.

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, saturation
from sdpa_helpers.attention import softmax
from sdpa_helpers.exercises import check
from sdpa_helpers.plots import saturation as saturation_plots
from sdpa_helpers.scales import D_K_CHOICES
from sdpa_helpers.verify import verify, verify_close
from sdpa_helpers.widgets.saturation import SaturationExplorer, TemperatureExplorer

SEED = 5
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__}",
      f"| matplotlib {matplotlib.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The softmax depends only on gaps
#
# $\mathrm{softmax}(z)_i = e^{z_i}/\sum_{j=1}^{n} e^{z_j}$: every weight is positive and they sum to 1. The ratio of two weights is $p_i/p_j = e^{z_i - z_j}$:
# only the **gap** matters: a gap of 9 gives odds $e^9 \approx 8103$ to 1. Adding the same number to every logit changes nothing, so the softmax
# is computed safely by subtracting the largest logit first (folded exercise 5).

# %% [markdown] predict_answer=["below 0.01 %", "3 in a million"]
# ## 2. Multiplying the logits makes the softmax peaky
#
# Multiply every logit by $c$ and every gap is multiplied by $c$. Five logits from Andrej Karpathy's
# lecture ["Let's build GPT"](https://www.youtube.com/watch?v=kCc8FmEb1nY) (2023), times 1, 8 and 64:
# the largest, 0.5, beats the runner-up, 0.3, by 0.2.
#
# **Predict:** times 64, how much weight is left for the four smaller logits together: about 10 %, 1 %, or below 0.01 %?

# %%
z5 = np.array([0.1, -0.2, 0.3, -0.2, 0.5])
for c in (1, 8, 64):
    w = np.array2string(softmax(c * z5), precision=4, floatmode="fixed", suppress_small=True)
    print(f"softmax({c:2d} z) =", w)
print(f"times 64, the four smaller logits keep {1 - softmax(64 * z5).max():.1e} together")

# %% [markdown]
# **What happened:** about 3 in a million: the gap 0.2 became 12.8. As $c$ grows the softmax tends to
# **one-hot**; as $c \to 0$ to **uniform**. Karpathy multiplies his five logits by 8; the ×64 is ours.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: checks of sections 1 and 2

# %% tags=["deep-dive"]
w45, w110 = softmax([4.0, 5.0]), softmax([1.0, 10.0])
verify("softmax([4, 5])[1] = 73.11 % and softmax([1, 10])[0] = 0.012 % (to 0.005 % and 0.0005 %)",
       abs(100 * w45[1] - 73.11) < 0.005 and abs(100 * w110[0] - 0.012) < 0.0005)
verify_close("odds p2/p1 for [1, 10] equal e^9", w110[1] / w110[0], np.exp(9), rtol=1e-12)
verify("adding 100 to every logit changes no weight", np.allclose(softmax([101.0, 110.0]), w110))
rest = 1 - softmax(64 * z5).max()  # weight of the four smaller logits
verify(f"times 64 the four smaller logits keep {rest:.1e} together: below 0.01 %", rest < 1e-4)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how we simulate, and the standard error of a variance
#
# For a fixed query, $q\cdot k_j = \|q\|\,a_j$ with $a_j = u\cdot k_j$ and $u = q/\|q\|$. Whatever
# the unit vector $u$ is, $u\cdot k_j = \sum_i u_i k_{ji}$ is a sum of independent normals: normal,
# mean 0, variance $\sum_i u_i^2 = 1$ (a rotation of a standard normal vector is standard normal).
# So the $a_j$ are independent $N(0,1)$, independent of $q$, and $\|q\|^2$, a sum of $d_k$ squared
# standard normals, is $\chi^2_{d_k}$. `saturation.query_logits` draws $\|q\|$ and the $a_j$
# directly: the same cost at any $d_k$, and exactly the law of the full vectors.
#
# **Standard error of a sample variance.** For $N$ independent draws, $s^2$ has standard error
# $\sqrt{(m_4 - s^4)/N}$, with $m_4$ the fourth moment about the mean (for normal draws,
# $m_4 = 3\sigma^4$ and this is $\sigma^2\sqrt{2/N}$). The check below accepts $|s^2 - 64| < 4\,\mathrm{SE}$ for $\mathrm{Var}(q\cdot k)$ at $d_k = 64$.
#
# %% tags=["deep-dive"]
dots = saturation.query_logits(64, n_keys=1, n_queries=100_000, scale="unscaled", rng=rng).ravel()  # q·k
se_var = np.sqrt((np.mean((dots - dots.mean()) ** 4) - dots.var() ** 2) / dots.size)  # SE of a sample variance
verify_close("Var(q·k) at d_k = 64", dots.var(), 64, se=se_var)

# %% [markdown] tags=["deep-dive"]
# Check the shortcut against full vectors: the average largest weight of one query against 8 keys
# at $d_k = 16$, both ways (independent samples: the SE of the difference is $\sqrt{SE_1^2 + SE_2^2}$).

# %% tags=["deep-dive"]
from sdpa_helpers.sampling import sample_components

n_q, n_keys, d_k = 4000, 8, 16
Q = sample_components((n_q, d_k), rng=rng)  # (n_q, d_k)
K = sample_components((n_q, n_keys, d_k), rng=rng)  # each query gets its own 8 keys
direct = saturation.mc_estimate(saturation.weight_stats(np.einsum("qd,qkd->qk", Q, K)).max_weight)
short = saturation.mc_estimate(saturation.weight_stats(
    saturation.query_logits(d_k, n_keys, n_q, scale="unscaled", rng=rng)).max_weight)
print(f"largest weight, full vectors {direct.mean:.4f} ± {direct.se:.4f}; shortcut {short.mean:.4f} ± {short.se:.4f}")
verify_close("shortcut minus full vectors", short.mean - direct.mean, 0.0, se=np.hypot(direct.se, short.se))

# %% [markdown] predict_answer=["256", "d_k = 256"] predict_answer_common=["d_k = 256"]
# ## 3. One query, growing $d_k$
#
# Unscaled logits $q\cdot k_j$ have variance $d_k$ (notebook 02): they are logits of spread 1
# **multiplied by $\sqrt{d_k}$**, so a growing $d_k$ acts like section 2's growing $c$. One query against 16 keys, the same vectors cut to their first $d_k$ components, for
# $d_k$ = 1, 16, 256 and 4096. Top: unscaled, $\mathrm{softmax}(q\cdot k_j)$. Bottom: scaled,
# $\mathrm{softmax}(q\cdot k_j/\sqrt{d_k})$.
#
# **Predict:** with 16 keys, at which of these four $d_k$ will the unscaled top key of a typical query first hold more than 90 % of the weight?

# %% alt="Bar charts of one query's softmax weights over 16 keys at d_k = 1, 16, 256 and 4096: unscaled (top row) the largest weight grows 0.24, 0.70, 1.00, 1.00 until one bar holds everything; scaled (bottom row) it stays 0.24, 0.21, 0.27, 0.18 with several keys in play."
z_by_d = saturation.prefix_logits(D_K_CHOICES[::4], 16, rng=rng)  # (4, 16): one row per d_k above
bars = {d: (softmax(z), softmax(z / np.sqrt(d))) for d, z in zip(D_K_CHOICES[::4], z_by_d)}
for d, (u, s) in bars.items():
    print(f"d_k = {d:4d}: largest weight {u.max():.2f} unscaled, {s.max():.2f} scaled")
sd = z5.std(ddof=1)  # section 2's five logits: their spread (ddof = 1), and the d_k whose √d_k matches × 8 and × 64
print(f"section 2: spread {sd:.2f}; times 8 and 64 it is {8 * sd:.1f} and {64 * sd:.1f}, as at d_k = {(8 * sd) ** 2:.0f} and {(64 * sd) ** 2:.0f}")
saturation_plots.saturation_small_multiples(bars)

# %% [markdown]
# **What happened:** unscaled, the top key holds 70 % at $d_k = 16$ and passes 90 % at 256: the softmax
# **saturates** toward one-hot. Scaled keeps several keys in play. Section 2's five logits spread 0.31, so
# its ×8 and ×64 acted like $d_k \approx 6$ and $\approx 389$. One query is one draw; section 4 averages.
#
# ## 4. Averaging over many queries
#
# Three numbers say how peaked a softmax is: the **largest weight** $p_{\max}$ ($1/n$ uniform, 1
# one-hot), the **entropy** $H = -\sum_j p_j \ln p_j$ ($\ln n$ to 0, in **nats**, the unit of the
# natural logarithm) and the **effective number of keys** $e^{H}$ ($n$ to 1: weight spread evenly over
# $m$ keys gives $e^H = m$). Section 5 averages all three over 4000 random queries with 16 keys each.

# %% [markdown] predict_answer=["before 10", "4.0", "2.2"]
# ## 5. Two landmarks: onset and commitment
#
# As $d_k$ grows, the unscaled weights pass two landmarks. The course keeps one word for each:
#
# - the **onset** of saturation: where the weights first clearly *leave* the even split. We put it where the
#   mean entropy $\bar H$ has fallen 1 nat below its maximum $\ln n$ (middle panel below); in effective keys,
#   where $e^{\bar H}$ has fallen from $n$ to $n/e$ (from 16 to about 6);
# - **commitment**: where *most* queries put over 0.9 of their weight on one key, nearly one-hot, like
#   notebook 00's toy at ×8.
#
# **Predict:** with 16 keys, does the onset come before $d_k = 10$, near 64, or beyond 1000?

# %%
def share_over_09(d, n):  # of 2000 unscaled queries (seed SEED), each with n keys: the share whose top key holds over 0.9
    return np.mean(softmax(saturation.query_logits(d, n, 2000, scale="unscaled", rng=SEED)).max(axis=1) > 0.9)


n_keys, n_queries = 16, 4000
u_curves = saturation.saturation_curves(D_K_CHOICES, n_keys, n_queries, "unscaled", rng=SEED)
s_curves = saturation.saturation_curves(D_K_CHOICES, n_keys, n_queries, "sqrt", rng=SEED)
onset = np.median(saturation.onset_over_seeds(n_keys, n_seeds=5))  # the median of 5 seeds' onsets
over = np.array([share_over_09(d, n_keys) for d in D_K_CHOICES])
commit = D_K_CHOICES[np.argmax(over > 0.5)]  # the first d_k where most queries are over 0.9
near = np.argmin(np.abs(np.log(np.array(D_K_CHOICES) / onset)))  # the grid's d_k nearest the onset
print(f"onset: d_k = {onset:.1f} (median of 5 seeds); at d_k = {D_K_CHOICES[near]} the mean p_max is {u_curves.max_weight.mean[near]:.2f} and {over[near]:.0%} of queries are over 0.9")
print(f"commitment: from d_k = {commit}, {over[D_K_CHOICES.index(commit)]:.0%} of queries over 0.9 ({over[D_K_CHOICES.index(commit) - 1]:.0%} at d_k = {commit // 2})")

# %% [markdown]
# **What happened:** before 10: with 16 keys the onset comes at $d_k \approx 4.0$. There the mean largest
# weight is 0.42 and 4 % of queries are over 0.9 (this draw): the weights have begun to tilt, and almost no
# query has committed. Commitment comes later: at $d_k = 64$, 56 % of queries are over 0.9 (40 % at 32).
# The figure marks both, the onset dash-dotted, commitment dotted:

# %% alt="Three panels against d_k from 1 to 4096 (log axis), 16 keys, averages over 4000 random queries: unscaled (orange, dashed) the largest weight rises from 0.21 to 0.98, the entropy falls from 2.4 nats toward 0 and the mean effective keys from 12.1 toward 1; scaled (blue, solid) all three stay nearly flat (largest weight 0.21 to 0.25). A dash-dotted vertical line marks the onset at d_k = 4.0, where the unscaled largest weight is 0.42; a dotted one marks commitment at d_k = 64, where the unscaled largest weight averages 0.85; the left panel names both, the onset as weights tilt and commitment as most queries over 0.9."
u, s = u_curves.max_weight.mean, s_curves.max_weight.mean
print(f"mean p_max from d_k = 1 to 4096: unscaled {u[0]:.2f} to {u[-1]:.2f}; scaled between {s.min():.2f} and {s.max():.2f}")
fig = saturation_plots.saturation_curves_figure(u_curves, s_curves, n_keys, onset=onset)
for ax in fig.axes:  # each panel plots a mean over queries, as its label says
    ax.axvline(commit, color="0.3", linestyle=":", linewidth=1.5)  # commitment, dotted
for x, name in ((onset, "onset:\nweights tilt"), (commit, "commitment:\nmost queries > 0.9")):  # named in the left panel
    fig.axes[0].text(x * 1.12, 0.1, name, fontsize=8)
fig

# %% [markdown]
# Part 2 of the answer is about commitment, under its condition: $q$ and $k$ independent, with independent
# **normal** components of mean 0 and variance 1, and 16 keys independent of each other. Then heads of real
# sizes, $d_k$ = 64 or 128, start past the onset and at or past commitment (notebook 08 measures GPT-2's own
# start). Scaled, the logits have variance 1 at every $d_k$ (notebook 04), and the mean $p_{\max}$ stays between 0.21 and 0.25.
#
# The same two landmarks with 1024 keys:

# %%
on_1024 = np.median(saturation.onset_over_seeds(1024, n_seeds=5))  # the median of 5 seeds' onsets
c64 = {n: share_over_09(64, n) for n in (16, 1024)}  # the share of queries over 0.9 at d_k = 64
print(f"onset: d_k = {on_1024:.1f} with 1024 keys, {onset:.1f} with 16; at d_k = 64, {c64[1024]:.0%} of queries over 0.9 with 1024 keys, {c64[16]:.0%} with 16")
verify("more keys: the onset comes earlier and commitment later", on_1024 < onset and c64[1024] < c64[16])

# %% [markdown]
# More keys bring the onset earlier but commitment later: with 1024 keys the weights tilt from
# $d_k \approx 2.2$, yet at $d_k = 64$ only 30 % of queries are over 0.9, because the top key must beat
# 1023 rivals, not 15. The deep dive below explains both and adds 4 keys.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how the landmarks move with the number of keys
#
# The onset and the share of queries over 0.9 for 4, 16 and 1024 keys (onsets: the median of 5 seeds; shares:
# one seed of 2000 queries; $e^{\bar H}$ is $e$ to the *mean* entropy, $n/e$ at the onset by its definition):

# %% tags=["deep-dive"]
med = {4: np.median(saturation.onset_over_seeds(4, n_seeds=5)), 16: onset, 1024: on_1024}  # onsets, d_k
over_at = {n: [share_over_09(d, n) for d in (round(med[n]), 64, 256, 1024)] for n in med}  # shares over 0.9
print("keys | onset d_k | e^(mean H) at the onset | share over 0.9: at the onset; at d_k = 64, 256, 1024")
for n in med:
    print(f"{n:4d} | {med[n]:9.1f} | {n / np.e:16.3g} keys | {over_at[n][0]:14.0%}; " + ", ".join(f"{x:.0%}" for x in over_at[n][1:]))
print("ln n = " + ", ".join(f"{np.log(n):.2f} for {n} keys" for n in med))
verify("the onset comes later with fewer keys; at d_k = 64 the share over 0.9 falls as keys are added",
       med[4] > med[16] > med[1024] and over_at[4][1] > over_at[16][1] > over_at[1024][1])
verify("4 keys: about half the queries are over 0.9 at the onset (40 % to 60 %)", 0.4 < over_at[4][0] < 0.6)
verify("1024 keys: the share over 0.9 grows with d_k", over_at[1024][1] < over_at[1024][2] < over_at[1024][3])

# %% [markdown] tags=["deep-dive"]
# **The onset: one nat means different things.** The onset is where the mean entropy has fallen 1 nat, so
# $e^{\bar H}$ has fallen by a factor $e$: from 1024 to 377 keys, from 16 to 5.89, from 4 to 1.47. With
# 1024 keys, 377 keys still in play is reached with small logits ($d_k \approx 2.2$). With 4
# keys, 1.47 keys is nearly one-hot, which needs large gaps: $d_k \approx 21$, where 54 % of queries are
# already over 0.9. With so few keys the two landmarks coincide.
#
# **Commitment: the top key must beat every rival.** Holding over 0.9 needs the top key's $e^{z}$ to beat
# the sum of all the others' by a factor 9; with 1023 others that sum is large. So at $d_k = 64$ the share
# over 0.9 is 73 % with 4 keys, 56 % with 16 and 30 % with 1024. With 1024 keys it still grows with $d_k$:
# 60 % at 256, 79 % at 1024.
#
# **A law for the onset, and where it stops.** If $n$ logits are drawn independently from $N(0, \sigma^2)$
# and $\sigma^2$ is well below $\ln n$ (then no single $e^{z_j}$ dominates their sum), their entropy is
# $H \approx \ln n - \sigma^2/2$ (derived in the deep dive on the law, below). The drop $\sigma^2/2$ does not
# involve $n$. Unscaled, $\sigma^2 \approx d_k$, so where the law holds it puts the 1-nat onset at
# $d_k \approx 2$, whatever $n$. Where it stops:
#
# - For 1024 keys, $\sigma^2 = 2$ is well below $\ln 1024 = 6.93$: the law holds, and the measured onset is
#   2.2. That is a rough estimate (1000 queries a seed); with 10 000 queries it is 2.14, and it sits above 2
#   because $\|q\|^2$ varies from query to query (deep dive "the onset more precisely").
# - For 16 keys, $\sigma^2 = 2$ is not well below $\ln 16 = 2.77$: the law runs low (deep dive on the law,
#   below), and with the spread of $\|q\|^2$ as well (as for 1024 keys) the onset comes at 4.0, not 2.
# - For 4 keys, $\sigma^2 = 2$ is above $\ln 4 = 1.39$: one logit soon dominates, the entropy falls more
#   slowly than the law says, and the onset comes at 21, not 2.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the size of the softmax's Jacobian at $d_k$ = 64 and 128
#
# $\|J\|_F$ (notebook 06 builds it) measures how much the weights move per unit nudge of the
# softmax's own input: $q\cdot k$ unscaled, $q\cdot k/\sqrt{d_k}$ scaled. Per that unit, unscaled is
# smaller. But the scaled softmax divides its input by $\sqrt{d_k}$ first, so per unit of $q\cdot k$
# (what $W_Q$ and $W_K$ move) the scaled $\|J\|_F$ counts $\sqrt{d_k}$ times less, and the unscaled one
# is the larger at these $d_k$ (06, deep dive after §6). First, how committed the median query is:

# %% tags=["deep-dive"]
slide = {d: saturation.slide_medians(d, n_keys, n_queries, seeds=range(10)) for d in (64, 128)}  # per seed: medians
for d, (left, _) in slide.items():
    print(f"d_k = {d}, median over 10 seeds: {np.median(left):.1%} ({min(left):.1%}–{max(left):.1%}) left to the 15 other keys")

# %% [markdown] tags=["deep-dive"]
# Nearly one-hot: the median query leaves about 7 % to the 15 other keys together at $d_k = 64$, 2 % at
# 128, so most of the keys it ignores get a gradient multiplied by a near-zero weight. Its $\|J\|_F$, over
# the same 10 seeds:

# %% tags=["deep-dive"]
for d, (_, j_ratio) in slide.items():  # j_ratio: scaled ÷ unscaled, per seed
    r = np.median(j_ratio)
    print(f"d_k = {d}, median over 10 seeds: ||J||_F {r:.1f}× below scaled per unit of the softmax's input; "
          f"per unit of q·k {np.sqrt(d) / r:.1f}× above")

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: why the scaled curves are not perfectly flat
#
# For one query the scaled logits are $(\|q\|/\sqrt{d_k})\,a_j$, and $\|q\|^2/d_k$ has mean 1 but
# standard deviation $\sqrt{2/d_k}$. At $d_k = 1$ some queries are short (a flatter softmax) and some
# long; by $d_k = 64$ the lengths vary so little (sd 0.18) that, at this Monte Carlo precision, the
# logits behave like i.i.d. $N(0,1)$ draws. Compare with softmaxes of i.i.d. $N(0,1)$ logits (an independent sample),
# in standard errors of the difference, and check $\mathrm{Var}(q\cdot k/\sqrt{d_k}) = 1$ at every $d_k$.
# First, section 5's statement that the scaled curve moves far less than the unscaled one:

# %% tags=["deep-dive"]
u_max, s_max = u_curves.max_weight.mean, s_curves.max_weight.mean
verify("unscaled p_max rises at every step of d_k; scaled moves < 1/10 as much",
       np.all(np.diff(u_max) > 0) and np.ptp(s_max) < np.ptp(u_max) / 10)
fields = ("max_weight", "entropy", "effective_keys")
limit = saturation.weight_stats(make_rng(SEED + 1).standard_normal((n_queries, n_keys)))
limit_est = {f: saturation.mc_estimate(getattr(limit, f)) for f in fields}
for d in (1, 4, 16, 64, 256, 4096):
    i = D_K_CHOICES.index(d)
    zs = [(getattr(s_curves, f).mean[i] - limit_est[f].mean) / np.hypot(getattr(s_curves, f).se[i], limit_est[f].se)
          for f in fields]
    print(f"d_k = {d:4d}: sd of ||q||²/d_k = {np.sqrt(2 / d):.3f}; scaled minus i.i.d., in SEs: "
          + ", ".join(f"{z:+.1f}" for z in zs))
    if d >= 64:
        verify(f"d_k = {d}: scaled curves match i.i.d. N(0,1) logits within 4 SE", max(map(abs, zs)) < 4)
for d in D_K_CHOICES:
    x = saturation.query_logits(d, n_keys=1, n_queries=100_000, rng=rng).ravel()  # scaled
    assert abs(x.var() - 1) < 4 * np.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / x.size), d
print("✔ Var(q·k/√d_k) = 1 within 4 SE at every d_k in", D_K_CHOICES)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the law $H \approx \ln n - \sigma^2/2$, why it needs $e^{\sigma^2} \ll n$, and what happens beyond
#
# Take $n$ logits $z_j$ drawn i.i.d. (independently, from one distribution) from $N(0, \sigma^2)$.
# Since $\ln p_j = z_j - \ln Z$, the entropy is $H = -\sum_j p_j(z_j - \ln Z) = \ln Z - \sum_j p_j z_j$.
# For a normal $z$ with variance $\sigma^2$,
#
# $$E\,e^{z} = \int e^{x}\,\frac{e^{-x^2/2\sigma^2}}{\sqrt{2\pi}\,\sigma}\,dx = e^{\sigma^2/2},
# \qquad\text{because}\quad x - \frac{x^2}{2\sigma^2} = \frac{\sigma^2}{2} - \frac{(x - \sigma^2)^2}{2\sigma^2}$$
#
# (complete the square): the integrand is $e^{\sigma^2/2}$ times a normal density centred at $\sigma^2$,
# which integrates to 1. The same square gives $E[z\,e^{z}] = \sigma^2 e^{\sigma^2/2}$ (the mean of that
# shifted normal is $\sigma^2$; also Stein's lemma, $E[z f(z)] = \sigma^2 E f'(z)$). By the law of large numbers
# $Z/n \to e^{\sigma^2/2}$ and $\frac1n\sum_j z_j e^{z_j} \to \sigma^2 e^{\sigma^2/2}$, so $\ln Z \approx \ln n + \sigma^2/2$,
# $\sum_j p_j z_j = \sum_j z_j e^{z_j}/Z \approx \sigma^2$, and $H \approx \ln n - \sigma^2/2$.
# Replacing $Z$ by its mean is good when its relative spread (standard deviation over mean) is small;
# its square is
#
# $$\frac{\mathrm{Var}(Z)}{(E Z)^2} = \frac{n\,(e^{2\sigma^2} - e^{\sigma^2})}{n^2 e^{\sigma^2}} = \frac{e^{\sigma^2} - 1}{n},$$
#
# small only when $e^{\sigma^2} \ll n$, i.e. $\sigma^2$ well below $\ln n$. At $\sigma^2 = \ln n$ it is
# about 1: $Z$ is as uncertain as it is large, and the law is off by 13–26 % (next deep dive).
# Beyond, $Z$ is carried by its few largest terms, and the maximum of $n$ normals sits near
# $\sigma\sqrt{2\ln n}$. (This is Derrida's *random energy model* of statistical physics,
# [Phys. Rev. B 24, 2613 (1981)](https://doi.org/10.1103/PhysRevB.24.2613): with $\sigma^2 = t\ln n$,
# $H/\ln n \to 1 - t/2$ as $n \to \infty$ for $0 \le t \le 2$, and $\to 0$ beyond. So as $n \to \infty$
# the law holds up to $\sigma^2 = 2\ln n$ to leading order in $\ln n$ only; at $n = 1024$ its error in
# nats is already large at $t \approx 1$.) A finer check of the two moments by quadrature lives in
# `tests/test_saturation.py`. First the step $E\,e^z = e^{\sigma^2/2}$ by Monte Carlo at $\sigma^2 = 1$, then
# the relative spread of $Z$ at the grid's variances, for both $n$:

# %% tags=["deep-dive"]
sigma2, counts = np.arange(0.5, 8.1, 0.5), (16, 1024)  # the grid of variances, and two key counts
ez = saturation.mc_estimate(np.exp(make_rng(SEED + 2).standard_normal(1_000_000)))  # z ~ N(0, 1)
verify_close(f"mean of e^z over 10⁶ draws against e^(1/2) = {np.exp(0.5):.4f}", ez.mean, np.exp(0.5), se=ez.se)
for n in counts:
    print(f"n = {n:4d}: relative spread of Z at σ² = " + ", ".join(f"{v:g}: {np.sqrt(np.expm1(v) / n):.2f}" for v in sigma2))
verify_close("relative spread of Z at sigma² = ln n", np.sqrt(np.expm1(np.log(1024)) / 1024), 1.0, rtol=1e-3)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: how precise the law is
#
# The law against the measured mean entropy of i.i.d. $N(0, \sigma^2)$ logits (5 seeds) for 16 and
# 1024 keys, up to $\sigma^2 = 8$ and at $\sigma^2 = \ln n$ (2.77 and 6.93), where $Z$'s relative
# spread reaches 1 (previous deep dive). The 5 % limit interpolates between grid points:

# %% tags=["deep-dive"] alt="Two panels, 16 and 1024 keys: measured entropy (blue dots, median with range over 5 seeds) against the logit variance sigma² from 0.5 to 8, the law ln n - sigma²/2 as a thin black line, dotted lines at sigma² = ln n and at H = ln n (uniform). For 16 keys the law drops below the measured curve from sigma² about 1 and hits 0 at 5.5 while the measured entropy stays above 1.2; for 1024 keys the law follows the dots up to about 5 and falls below them beyond."
law = {n: saturation.law_check(n, sigma2, n_seeds=5, n_entries=max(100_000, 2000 * n)) for n in counts}  # last: ln n
holds = {n: np.interp(0.05, -c.error[:-1], sigma2) for n, c in law.items()}  # where the law is first 5 % low
print(" keys   law within 5 % up to σ² ≈   law's error at σ² = ln n")
for n, c in law.items():
    print(f"{n:5d}   {holds[n]:25.1f}   {c.error[-1]:+24.0%}")
fig = saturation_plots.law_check_figure(sigma2, [c.entropy[:, :-1] for c in law.values()], counts)
for ax, n in zip(fig.axes, counts):  # label the dotted horizontal line
    ax.text(np.log(n) / 2, np.log(n), r"$H = \ln n$ (uniform)", fontsize=8, ha="center", va="top")
fig

# %% [markdown] tags=["deep-dive"]
# At $\sigma^2 = \ln n$ the law is too low, by 26 % for 16 keys and 13 % for 1024. It is within 5 % of
# the measured entropy up to $\sigma^2 \approx 1.2$ for 16 keys and $\approx 5.2$ for 1024: with more
# keys, one large term takes over the sum later.
#
# ### The law's error at every variance
#
# The law minus the measured median, relative to the measured, at each $\sigma^2$ of the grid; the
# 5 % limits interpolate linearly between grid points, which needs the error to grow steadily
# (the error curve bends only gently between grid points, so the interpolation is good to a few hundredths of $\sigma^2$). They are also
# Monte Carlo estimates: each seed's own limit gives their standard error over the 5 seeds (2000 rows a
# seed for 1024 keys, 6250 for 16). Both are at most 0.02 (printed below): the limits hold to about ±0.05.

# %% tags=["deep-dive"]
med_h = {n: np.median(c.entropy, 0) for n, c in law.items()}  # median over seeds; last: sigma² = ln n
for n, c in law.items():
    print(f"n = {n}: " + ", ".join(f"σ² {v:.3g}: {np.round(o, 3) + 0.0:+.1%}" for v, o in zip(c.sigma2, c.error)))
    print(f"   H = {med_h[n][-1]:.2f} nats at σ² = ln n; within 5 % on the grid up to σ² = "
          f"{saturation.law_holds_up_to(sigma2, med_h[n][:-1], n):g}, interpolated {holds[n]:.1f}")
verify("the law's error falls at every grid step (the interpolation is safe); > 10 % too low at ln n",
       all(np.all(np.diff(c.error[:-1][c.error[:-1] < -0.005]) < 0) for c in law.values())
       and all(np.log(n) / 2 < 0.9 * med_h[n][-1] for n in counts))
se_holds = {n: np.std([np.interp(0.05, -saturation.law_error(n, c.sigma2, h)[:-1], sigma2) for h in c.entropy],
                      ddof=1) / np.sqrt(len(c.entropy)) for n, c in law.items()}  # SE over seeds
print("5 % limit: " + ", ".join(f"{n} keys {holds[n]:.2f} (SE {se_holds[n]:.1g})" for n in counts))
verify("law within 5 % up to sigma² 1.1-1.3 (16 keys) and 5.1-5.4 (1024 keys); SE of each < 0.03",
       1.1 < holds[16] < 1.3 and 5.1 < holds[1024] < 5.4 and max(se_holds.values()) < 0.03)
verify("law within 0.5 % at sigma² = 2 for 1024 keys", abs(law[1024].error[3]) < 0.005)

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the onset more precisely, and why it is above 2
#
# The onset at six key counts, median and range over 5 seeds:

# %% tags=["deep-dive"]
onsets_all = {n: saturation.onset_over_seeds(n, n_seeds=5) for n in (4, 8, 16, 64, 256, 1024)}
print(saturation.onset_table(onsets_all))
med_all = {n: np.median(o) for n, o in onsets_all.items()}
verify("onset > 15 for 4 keys, > 5 for 8; 2 to 4.5 for n >= 16, falling; 1024: within 15 % of 2",
       min(onsets_all[4]) > 15 and min(onsets_all[8]) > 5 and np.all(np.diff(list(med_all.values())) < 0)
       and all(2 < med_all[n] < 4.5 for n in (16, 64, 256, 1024)) and abs(med_all[1024] / 2 - 1) < 0.15)

# %% [markdown] tags=["deep-dive"]
# The table's onsets come from 1000 queries a seed for many keys (`saturation.onset_over_seeds`), so each
# wobbles by several hundredths (the table's ranges); its median for 1024 keys, 2.20, is a rough estimate. Here 10 000 queries at
# $d_k = 2$ and 3, the same linear interpolation, and a standard error (that of the mean entropy at
# $d_k = 2$ divided by the curve's drop per unit $d_k$). Then the same with $\|q\|^2$ fixed at $d_k$
# (i.i.d. logits of variance $d_k$, `saturation.iid_entropy`). Why they differ: the mean entropy at a
# fixed logit variance $\sigma^2$ is convex in $\sigma^2$ as far as we measure (the measured curve of the
# law's figure bends upward; checked below only at $\sigma^2$ = 1, 2, 3: the average at 1 and 3 lies above
# the value at 2). If so, averaging over the spread of $\|q\|^2$ raises the mean entropy (Jensen's
# inequality) and delays the onset.

# %% tags=["deep-dive"]
h_chi = saturation.saturation_curves([2, 3], 1024, 10_000, "unscaled", rng=SEED + 3).entropy  # ||q||² ~ chi²
h_fix = saturation.iid_entropy(1024, [1.0, 2.0, 3.0], n_rows=4000, seeds=[SEED + 4])[0]  # ||q||² = d_k
on_chi, on_fix = (saturation.measured_onset([2, 3], h, 1024) for h in (h_chi.mean, h_fix[1:]))
se_chi = h_chi.se[0] / (h_chi.mean[0] - h_chi.mean[1])
print(f"1024 keys: onset {on_chi:.2f} ± {se_chi:.2g} with ||q||² ~ chi², {on_fix:.2f} with ||q||² fixed at d_k")
verify("at this one triple: the mean of H at sigma² = 1 and 3 lies above H at 2", (h_fix[0] + h_fix[2]) / 2 > h_fix[1])
verify("the spread of ||q||² delays the onset by more than 4 SE", on_chi - on_fix > 4 * se_chi)

# %% [markdown] tags=["deep-dive"]
# At $d_k = 1$ with 16 keys (the explorer's far left) the law lies below the measured mean entropy, by
# more than at a fixed $\sigma^2 = 1$: there the spread of $\|q\|^2$ is largest. With 400 000 queries:

# %% tags=["deep-dive"]
h1 = saturation.saturation_curves([1], 16, 400_000, "unscaled", rng=SEED + 5).entropy
gap = h1.mean[0] - (np.log(16) - 1 / 2)  # measured minus law at d_k = 1, nats
print(f"d_k = 1, 16 keys: the law is {gap:.3f} ± {h1.se[0]:.3f} nats ({gap / h1.mean[0]:.1%}) too low; "
      f"at a fixed σ² = 1, {-law[16].error[1]:.1%}")

# %% [markdown] tags=["deep-dive"]
# Far beyond: with 16 keys at $d_k = 4096$, the median query leaves below $10^{-9}$ to the other keys, in each of 10 seeds.

# %% tags=["deep-dive"]
left_4096, _ = saturation.slide_medians(4096, n_keys, n_queries, seeds=range(10))
verify("d_k = 4096: the median query leaves below 1e-9 in each of 10 seeds", max(left_4096) < 1e-9)

# %% [markdown]
# ## 6. Explorer: drag $d_k$ and the number of keys
#
# Live: one query's weights (top), the average curves (bottom; powers of 2 only), the law and the
# measured onset (section 5's deep dive). Drag the number of keys from 4 to 1024 and watch the onset move.

# %% tags=["nbval-ignore-output"] alt="Explorer with sliders for d_k and the number of keys: top, one query's softmax weights unscaled and scaled at the chosen d_k; bottom, the average largest weight, entropy and effective keys against d_k, unscaled rising to one-hot and scaled nearly flat, with the law ln n - d_k/2 and a dash-dotted line at the measured onset (about 4 for 16 keys, 21 for 4, 2.2 for 1024). The bottom axes are fixed for the slider's largest n, 1024: entropy up to ln 1024 = 6.9 nats, effective keys (the mean of e^H) from 1 to 1024 on a log axis, so at the start, 16 keys, the entropy and effective-keys curves fill only their lower part."
explorer = SaturationExplorer(d_k=64, seed=1)
explorer

# %%
i64 = D_K_CHOICES.index(64)  # the still: the explorer's start, seed 1, d_k = 64, 16 keys
still = softmax(saturation.prefix_logits(D_K_CHOICES, max(saturation.KEY_COUNTS), rng=1)[i64, :n_keys]).max()
p_top = softmax(saturation.query_logits(64, n_keys, n_queries, scale="unscaled", rng=SEED)).max(axis=1)
share = np.mean(p_top <= still)
verify("the still's query is a typical one: between a quarter and three quarters of queries put less on their top key",
       0.25 < share < 0.75)
print(f"the still's query: top weight {still:.2f}; {share:.0%} of {n_queries} random queries at d_k = 64 "
      f"(16 keys) put as little or less on their top key; axes up to ln 1024 = {np.log(1024):.1f} nats and 1024 keys")

# %% [markdown]
# The still above is one query (the explorer's seed 1), a typical one: its top key holds 0.91 at
# $d_k = 64$, and 45 % of 4000 random queries hold as little. Drag the seed to see others. The bottom
# panels plot means over queries on axes set for 1024 keys, the slider's largest (entropy up to
# $\ln 1024 = 6.9$ nats, effective keys up to 1024): with 16 keys those two curves sit low.

# %% [markdown]
# ## 7. $1/\sqrt{d_k}$ is an inverse temperature
#
# A softmax with **temperature** $T > 0$ divides the logits by $T$ first:
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$. Small $T$ sharpens toward one-hot, large $T$
# flattens toward uniform. Scaled attention is the unscaled logits at temperature $\sqrt{d_k}$ — a
# temperature that grows exactly as fast as the logits spread, so the two cancel. Section 2's ×8 and
# ×64 were temperatures 1/8 and 1/64.

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: the temperature, drawn and live, and the identity checked
#
# Karpathy's logits at $T = 1/8$ (his ×8), 1 and 8, and the largest weight and $e^H$ against $T$;
# then drag $T$; then the identity $\mathrm{softmax}(z/\sqrt{d_k}) = \mathrm{softmax}(z, T = \sqrt{d_k})$
# on section 3's query.

# %% tags=["deep-dive"] alt="Left, three bar charts of the softmax of Karpathy's five logits: at T = 1/8 the largest takes 0.80, at T = 1 0.29, at T = 8 all five near 0.2. Right, against T from 1/64 to 64 (log axis): the largest weight falls from 1 toward 0.2 and the effective keys e^H rise from 1 toward 5; dotted lines labelled one-hot (1) and uniform (0.2 and 5), grey vertical lines at the bars' T = 1/8, 1 and 8."
temps, curve_t = [1 / 8, 1, 8], 2.0 ** np.linspace(-6, 6, 49)
(bar_w, _), (_, curve_stats) = (saturation.temperature_curves(z5, t) for t in (temps, curve_t))
saturation_plots.temperature_small_multiples(temps, bar_w, curve_t, curve_stats)

# %% tags=["deep-dive", "nbval-ignore-output"] alt="Explorer with a temperature slider from 1/64 to 64: bars of the softmax of Karpathy's five logits at the chosen T, one-hot at small T and nearly uniform at large T, beside the largest weight and e^H against T with a marker at the chosen T."
temperature_explorer = TemperatureExplorer()
temperature_explorer

# %% tags=["deep-dive"]
z = z_by_d[-1]  # section 3's query at d_k = 4096
verify("softmax(z / √d_k) = softmax(z, T = √d_k)", np.allclose(softmax(z / 64), softmax(z, temperature=64.0)))

# %% [markdown]
# ## Summary
#
# - Only gaps between logits matter. Unscaled logits are multiplied by about $\sqrt{d_k}$, so the softmax
#   **saturates**.
# - Two landmarks. The **onset**, where the weights start to tilt, comes early: $d_k \approx 4$ for 16 keys.
#   **Commitment**, most queries over 0.9 on one key, is reached by $d_k = 64$ for 16 independent keys with
#   independent normal components of mean 0 and variance 1: heads of real sizes, 64 or 128, start there.
#   More keys bring the onset earlier and commitment later.
# - Scaling by $1/\sqrt{d_k}$, an inverse temperature, keeps the logits' variance at 1: attention starts soft.
#
# ## Exercises
#
# Each exercise is checked by `check(key, answer)`: a number must match the exact value rounded to
# three significant figures; an integer must be exact.
#
# **Exercise 1.** Two keys have unscaled logits $q\cdot k = [8, 0]$ and $d_k = 16$. What weight
# does *scaled* attention give the first key? (three significant figures)

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("05.scaled_weight", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# The scaled logits are $[8, 0]/\sqrt{16} = [2, 0]$, so the first weight is
# $1/(1 + e^{-2}) \approx 0.881$. Unscaled it would be $1/(1 + e^{-8}) \approx 0.9997$.
# </details>
#
# **Exercise 2 (conceptual).** Going from 16 to 1024 keys, the measured onset of saturation (section 5)
# (a) grows like $\ln n$, by 2.5×; (b) stays at a few units of $d_k$; (c) grows like $n$, by 64×.
# Answer with a letter from the onsets section 5 prints. (Why it moves so little: the deep dive on the number of
# keys, with the law $H \approx \ln n - \sigma^2/2$.)

# %%
answer = None  # replace None with a letter, e.g. "a"
_ = check("05.onset_moves", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# (b): the measured onsets are about 4 (16 keys) and 2.2 (1024 keys). In the law the drop below $\ln n$ is
# $\sigma^2/2$, which does not involve $n$: where the law holds ($\sigma^2 = 2$ well below $\ln n$, as with
# 1024 keys) the 1-nat onset is near $d_k = 2$ whatever $n$. With fewer keys it comes later (16 keys: 4;
# 4 keys: about 21), never 64 times later. More keys do not protect an unscaled softmax.
# </details>

# %% [markdown] tags=["deep-dive"]
# ## Deep dive: More exercises
#
# **Exercise 3.** For $d_k = 100$, which temperature $T$ makes `softmax(q·k, temperature=T)`
# equal the scaled attention weights? (an integer)

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("05.temperature", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $\mathrm{softmax}(z, T) = \mathrm{softmax}(z/T)$ and scaled attention uses $z/\sqrt{d_k}$, so $T = 10$.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 4.** 1024 keys get logits drawn independently from $N(0, \sigma^2)$ with $\sigma^2 = 2$, where the law holds
# within 5 % (section 5's deep dive). What effective number of keys $e^H$ does the law give?
# (three significant figures)

# %% tags=["deep-dive"]
answer = None  # replace None with your answer, then run the cell
_ = check("05.effective_keys_law", answer)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# $H \approx \ln 1024 - 2/2 = 5.93$ nats, so $e^H \approx 1024\,e^{-1} \approx 377$ keys: variance 2 costs
# one nat, a factor $e$ in effective keys. For 1024 keys the law holds within 5 % up to
# $\sigma^2 \approx 5.2$ (0.2 % off at $\sigma^2 = 2$: section 5's deep dive on its precision), so it is trustworthy here;
# at $\sigma^2 = 8$ it is 20 % too low.
# </details>

# %% [markdown] tags=["deep-dive"]
# **Exercise 5.** Write `stable_softmax(x)`: the softmax over the last axis of a numpy array,
# which works for logits like `1e6`, `[1000, 1000]`, `[-1000, -1000]` and `-inf` (weight 0).

# %% tags=["deep-dive"]
def stable_softmax(x):
    ...  # your code here: return the weights, same shape as x


_ = check("05.stable_softmax", stable_softmax)

# %% [markdown] tags=["deep-dive"]
# <details><summary>Solution</summary>
#
# ```python
# def stable_softmax(x):
#     x = np.asarray(x, dtype=float)
#     e = np.exp(x - x.max(axis=-1, keepdims=True))  # every exponent <= 0: no overflow
#     return e / e.sum(axis=-1, keepdims=True)       # the largest term is e^0 = 1: no 0/0
# ```
#
# Subtracting the row's maximum changes no weight (only gaps matter) but keeps every exponent
# $\le 0$, and the largest term is exactly 1, so the sum is never 0. `exp(-inf) = 0` gives a
# masked logit weight 0. `keepdims=True` makes it work row by row.
# </details>

# %% [markdown]
# ## Next
#
# **Next:** [06 — Vanishing gradients](06_vanishing_gradients.ipynb)
