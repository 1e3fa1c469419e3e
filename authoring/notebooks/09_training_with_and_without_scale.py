# %% [markdown]
# # Training with and without the scale
#
# The earlier notebooks showed that without the scale the logits $q\cdot k$ spread like
# $\sqrt{d_k}$, the softmax saturates, and a saturated softmax passes back almost no
# gradient. A common summary goes one step further: *during training all focus goes to the
# largest probabilities, the gradient vanishes, and $W_Q$, $W_K$ barely update.* Does that
# happen when you actually train? Here we find out, with a tiny attention model in numpy
# that trains in well under a second.
#
# **Learning goals**
# - Build a one-head attention model and write its backward pass by hand, one equation at a time.
# - Check hand-written gradients against finite differences, and know why the error shrinks like $h^2$.
# - Train the model with and without $1/\sqrt{d_k}$ at several $d_k$, and read its loss, accuracy, attention entropy and gradient norms.
# - Say what the scale buys in training, and what the popular summary gets wrong.
#
# **Prerequisites**
# - Notebooks 05 (softmax saturation) and 06 (vanishing gradients).
# - The chain rule; gradient descent.

# %% [markdown]
# ## Setup

# %% tags=["nbval-ignore-output"]
# %matplotlib inline
import platform

import ipywidgets
import matplotlib
import numpy as np

import sdpa_helpers
from sdpa_helpers import make_rng, training
from sdpa_helpers.attention import softmax_jacobian
from sdpa_helpers.exercises import check
from sdpa_helpers.exercises.ex09_training_with_and_without_scale import LOGIT_GRAD_W_K, LOGIT_GRAD_X, LOGIT_GRAD_Y
from sdpa_helpers.plots import training as training_plots
from sdpa_helpers.widgets.training import D_KS, LEARNING_RATES, TrainingExplorer

SEED = 0
rng = make_rng(SEED)
print(f"Python {platform.python_version()} | numpy {np.__version__} | matplotlib {matplotlib.__version__} "
      f"| ipywidgets {ipywidgets.__version__} | sdpa_helpers {sdpa_helpers.__version__}")

# %% [markdown]
# ## 1. The task: find the key that matches the query
#
# Each example has $n = 8$ keys $y_1,\dots,y_8$ and one query $x$, all vectors of
# $d_\text{in} = 16$ numbers.
#
# - The first 4 numbers of every vector are an **address**: one of the 8 codes
#   $\pm 2e_1, \dots, \pm 2e_4$ (a single non-zero entry, $+2$ or $-2$). The 8 keys of an
#   example have 8 different addresses.
# - The other 12 numbers are random noise, $\mathcal N(0, 1)$, fresh for every vector.
# - Each key carries a **label** $c_j$ (the 8 labels of an example are 0…7 in random order).
# - The query carries the address of one key, the **target** $t$, plus its own noise.
#
# The model must answer with the target's label $c_t$. To do that it must attend to the key
# whose address matches the query's, and ignore the noise. Here is one example:

# %%
example = training.make_batch(1, rng=rng)
print("query address:", example.x[0, :4].astype(int))
for j in range(training.N_KEYS):
    print(f"key {j}: address {example.keys[0, j, :4].astype(int)}, label {example.labels[0, j]}")
print(f"target key {example.target[0]}, so the answer is its label {example.answer[0]}")

# %% [markdown]
# Every input component has mean 0 and variance 1 (an address entry is $\pm 2$ with
# probability $1/4$, so its variance is $4 \cdot 1/4 = 1$). We check each of the 16
# components of the query over 20 000 independent examples. The standard error of a sample
# variance of a mean-0 variable is $\mathrm{sd}(x^2)/\sqrt{n}$; we accept $|\widehat{\mathrm{Var}} - 1| < 4\,\mathrm{SE}$.

# %%
big = training.make_batch(20_000, rng=rng)
var_hat = (big.x**2).mean(axis=0)  # the mean is 0 by symmetry
se = (big.x**2).std(axis=0, ddof=1) / np.sqrt(len(big.x))
print("sample variance of each component:", np.array2string(var_hat, precision=2))
print(f"largest |variance - 1| / SE: {np.max(np.abs(var_hat - 1) / se):.2f} (accept < 4)")
assert np.all(np.abs(var_hat - 1) < 4 * se)
assert np.all(np.abs(big.x.mean(axis=0)) < 4 * big.x.std(axis=0) / np.sqrt(len(big.x)))

# %% [markdown]
# The task can be solved even with $d_k = 4$: set $W_Q = W_K = \sqrt{\alpha}\,[I_4\;0]$, which
# reads the 4 address numbers and ignores the noise. Then $q\cdot k_j = \alpha\,(\text{address of }x)\cdot(\text{address of }y_j)$
# is $4\alpha$ for the target and $0$ or $-4\alpha$ for every other key. With $\alpha = 4$ and
# the scale, the target's logit is $16/\sqrt 4 = 8$ and the others at most 0.
#
# The loss cannot reach 0: the model reads out the label with a fixed gain $\beta = 5$ (next
# section), so even a perfect pick leaves the loss at $\log(1 + 7e^{-5})$. At the other end,
# uniform attention (all weights $1/8$) gives the loss $\log 8$.

# %%
m_ideal = training.evaluate(training.ideal_weights(4, alpha=4.0), big)
m_uniform = training.evaluate(training.Weights(np.zeros((4, 16)), np.zeros((4, 16))), big)
floor = np.log(1 + 7 * np.exp(-training.GAIN))
print(f"hand-set weights, d_k = 4: accuracy {m_ideal.accuracy:.3f}, loss {m_ideal.loss:.4f} "
      f"(floor log(1 + 7 e^-5) = {floor:.4f})")
print(f"uniform attention: loss {m_uniform.loss:.4f} (log 8 = {np.log(8):.4f})")
assert m_ideal.accuracy == 1.0 and 0 <= m_ideal.loss - floor < 0.01
assert np.isclose(m_uniform.loss, np.log(8))

# %% [markdown]
# ## 2. The model and its forward pass
#
# One attention head with learnable $W_Q$ and $W_K$, each of shape $(d_k, d_\text{in})$, and a
# fixed value read-out:
#
# | step | formula | shape |
# |---|---|---|
# | query | $q = W_Q x$ | $(d_k)$ |
# | keys | $k_j = W_K y_j$ | $(n, d_k)$ |
# | logits | $z_j = s\,(q\cdot k_j)$, $s = 1/\sqrt{d_k}$ (scaled) or $1$ (unscaled) | $(n)$ |
# | attention | $p = \mathrm{softmax}(z)$ | $(n)$ |
# | output | $o = \sum_j p_j v_j$ with $v_j = \beta\, e_{c_j}$, $\beta = 5$ | $(C)$, $C = 8$ classes |
# | class probabilities | $r = \mathrm{softmax}(o)$ | $(C)$ |
# | loss | $L = -\log r_{c_t}$ (cross-entropy), averaged over the batch | number |
#
# The value of key $j$ is its label as a one-hot vector, times $\beta$; the output $o$ is read
# as class scores. A model that attends only to the target outputs $\beta e_{c_t}$.
#
# $W_Q$ and $W_K$ start with independent $\mathcal N(0, 1/d_\text{in})$ entries (LeCun's
# $1/\text{fan-in}$), so $q$ and $k$ have unit-variance components. Here is the forward pass on
# the example above at $d_k = 1024$, scaled and unscaled, from the same weights:

# %%
w_1024 = training.initial_weights(1024, seed=SEED)
fwd = {name: training.forward(w_1024, example, scale=scale) for name, scale in (("scaled", None), ("unscaled", 1.0))}
for name, f in fwd.items():
    print(f"{name:>8}: logits {np.array2string(f.logits[0], precision=1)}")
    print(f"{'':>8}  weights p {np.array2string(f.weights[0], precision=3, suppress_small=True)}")
print("shapes: q", f.q.shape, "| k", f.k.shape, "| p", f.weights.shape, "| r", f.probs.shape)
print("unscaled logits = 32 × scaled logits:", np.allclose(fwd["unscaled"].logits, 32 * fwd["scaled"].logits))
assert np.allclose(fwd["unscaled"].logits, 32 * fwd["scaled"].logits) and fwd["unscaled"].weights.max() > 0.99

# %% [markdown]
# Same weights, so the unscaled logits are exactly $\sqrt{1024} = 32$ times the scaled ones,
# and the softmax puts (almost) all its weight on one key. That is the premise of the course: at initialisation the unscaled logit
# $q\cdot k$ has variance $d_k$. Here the premise holds exactly on average over the random
# weights: $\mathrm E[(q\cdot k)^2] = \frac{d_k}{d_\text{in}^2}\,\mathrm E\big[\|x\|^2\|y\|^2\big] = d_k$.
# We check it over 300 random initialisations per $d_k$, each with a fresh batch of 16
# examples (128 logits). The standard error comes from the spread of the 300 per-initialisation means.

# %%
for d_k in (4, 64, 1024):
    per_init = []
    for _ in range(300):
        w = training.init_weights(d_k, rng=rng)
        z = training.forward(w, training.make_batch(16, rng=rng), scale=1.0).logits
        per_init.append((z**2).mean() / d_k)
    mean, se = np.mean(per_init), np.std(per_init, ddof=1) / np.sqrt(len(per_init))
    print(f"d_k = {d_k:4d}: Var(q·k) / d_k = {mean:.3f} ± {se:.3f} (theory 1), std of q·k ≈ {np.sqrt(mean * d_k):.1f}")
    assert abs(mean - 1) < 4 * se

# %% [markdown]
# ## 3. The backward pass, one equation at a time
#
# We need $\partial L/\partial W_Q$ and $\partial L/\partial W_K$. The chain rule runs the
# table above backwards. We work on a batch of 4 examples at $d_k = 8$ (scaled) and compare
# each step with `training.backward`, which does the same for the notebook's runs.

# %%
small = training.make_batch(4, rng=rng)
w = training.init_weights(8, rng=rng)
f = training.forward(w, small)  # scaled
g = training.backward(small, f)
B = len(small.x)
print(f"loss {f.loss:.4f}; shapes: x {small.x.shape}, keys {small.keys.shape}, W_Q {w.W_Q.shape}")

# %% [markdown]
# **Step 1 — softmax and cross-entropy together.** With $L_b = -\log r_{c_t} = -o_{c_t} + \log\sum_c e^{o_c}$,
#
# $$\frac{\partial L}{\partial o} = \frac{1}{B}\,(r - e_{c_t}),$$
#
# the class probabilities minus the one-hot answer ($1/B$ because the loss is a batch mean).

# %%
d_o = f.probs.copy()
d_o[np.arange(B), small.answer] -= 1.0
d_o /= B
print("dL/do of example 0:", np.array2string(d_o[0], precision=3, suppress_small=True))
assert np.allclose(d_o, g.d_output)
print("matches training.backward:", np.allclose(d_o, g.d_output))

# %% [markdown]
# **Step 2 — the read-out.** $o = \sum_j p_j v_j$ is linear in $p$, so
# $\dfrac{\partial L}{\partial p_j} = v_j\cdot\dfrac{\partial L}{\partial o}$.

# %%
d_p = np.einsum("bnc,bc->bn", f.values, d_o)  # (B, n, C), (B, C) -> (B, n)
assert np.allclose(d_p, g.d_weights)
print("matches training.backward:", np.allclose(d_p, g.d_weights))

# %% [markdown]
# **Step 3 — the softmax Jacobian** (notebook 06): $J = \mathrm{diag}(p) - pp^\top$, symmetric, so
#
# $$\frac{\partial L}{\partial z} = \big(\mathrm{diag}(p) - pp^\top\big)\,\frac{\partial L}{\partial p} .$$
#
# When $p$ is one-hot, $J = 0$ and nothing passes back, whatever $\partial L/\partial p$ is.

# %%
J = softmax_jacobian(f.weights)  # (B, n, n)
d_z = np.einsum("bij,bj->bi", J, d_p)  # (B, n)
assert np.allclose(d_z, g.d_logits)
print("matches training.backward:", np.allclose(d_z, g.d_logits))
print("each row of dL/dz sums to 0:", np.allclose(d_z.sum(axis=1), 0))

# %% [markdown]
# **Step 4 — the bilinear form.** $z_j = s\,(q\cdot k_j)$ is linear in $q$ and in each $k_j$:
#
# $$\frac{\partial L}{\partial q} = s\sum_j \frac{\partial L}{\partial z_j}\,k_j, \qquad
#   \frac{\partial L}{\partial k_j} = s\,\frac{\partial L}{\partial z_j}\,q .$$
#
# Note the $s$: the gradient flowing back is scaled by the same $1/\sqrt{d_k}$ as the logits.

# %%
d_q = f.scale * np.einsum("bn,bnd->bd", d_z, f.k)  # (B, d_k)
d_keys = f.scale * d_z[:, :, None] * f.q[:, None, :]  # (B, n, d_k)
assert np.allclose(d_q, g.d_q) and np.allclose(d_keys, g.d_k)
print("matches training.backward:", np.allclose(d_q, g.d_q) and np.allclose(d_keys, g.d_k))

# %% [markdown]
# **Step 5 — the weights.** $q = W_Q x$ and $k_j = W_K y_j$, so each example adds an outer product:
#
# $$\frac{\partial L}{\partial W_Q} = \sum_b \frac{\partial L}{\partial q_b}\,x_b^\top, \qquad
#   \frac{\partial L}{\partial W_K} = \sum_b\sum_j \frac{\partial L}{\partial k_{bj}}\,y_{bj}^\top .$$

# %%
grad_W_Q = np.einsum("bd,bi->di", d_q, small.x)  # (d_k, d_in)
grad_W_K = np.einsum("bnd,bni->di", d_keys, small.keys)  # (d_k, d_in)
assert np.allclose(grad_W_Q, g.W_Q) and np.allclose(grad_W_K, g.W_K)
print("matches training.backward:", np.allclose(grad_W_Q, g.W_Q) and np.allclose(grad_W_K, g.W_K))

# %% [markdown]
# ### Checking against finite differences
#
# A derivative can also be estimated without any calculus: nudge one weight by $\pm h$ and
# take $\big(L(W + hE) - L(W - hE)\big)/2h$. Taylor's theorem says this central difference is
# off by about $\tfrac{h^2}{6}L'''$ (plus rounding of about $\varepsilon\,|L|/h$ with
# $\varepsilon \approx 10^{-16}$). So halving $h$ should divide the error by 4 — if the
# hand-written gradient is right. (If it were wrong, the gap would not shrink at all.)
# We check every entry of $W_Q$ and $W_K$, scaled and unscaled.

# %%
print("relative error ‖FD − backward‖ / ‖backward‖")
for name, scale in (("scaled", None), ("unscaled", 1.0)):
    analytic = training.backward(small, training.forward(w, small, scale=scale))
    for param in ("W_Q", "W_K"):
        def loss_at(W, param=param, scale=scale):
            return training.forward(w._replace(**{param: W}), small, scale=scale).loss

        exact = getattr(analytic, param)
        errors = [np.linalg.norm(training.finite_difference_gradient(loss_at, getattr(w, param), h=h) - exact)
                  / np.linalg.norm(exact) for h in (1e-2, 5e-3, 2.5e-3, 1e-5)]
        ratios = [errors[0] / errors[1], errors[1] / errors[2]]
        print(f"  {name:>8} {param}: halving h from 1e-2 divides the error by {ratios[0]:.2f}, "
              f"then by {ratios[1]:.2f}; at h = 1e-5 the error is below 1e-8: {errors[3] < 1e-8}")
        assert all(3.9 < r < 4.1 for r in ratios) and errors[3] < 1e-8

# %% [markdown]
# ### The same gradients, computed cheaply
#
# The logits depend on the weights only through the small matrix $A = W_Q^\top W_K$
# ($d_\text{in}\times d_\text{in}$): $z_j = s\,x^\top A\,y_j$. With $G = \partial L/\partial A = s\sum_{b,j}\frac{\partial L}{\partial z_{bj}}\,x_b y_{bj}^\top$
# the chain rule gives $\partial L/\partial W_Q = W_K G^\top$ and $\partial L/\partial W_K = W_Q G$.
# That avoids the $(B, n, d_k)$ array of keys: only $A$ and these two products grow with $d_k$.
# `training.loss_and_gradients` does this, and the training runs below use it:

# %%
_, fast, _ = training.loss_and_gradients(w, small)
assert np.allclose(fast.W_Q, g.W_Q) and np.allclose(fast.W_K, g.W_K)
print("loss_and_gradients matches the step-by-step backward pass:",
      np.allclose(fast.W_Q, g.W_Q) and np.allclose(fast.W_K, g.W_K))

# %% [markdown]
# ### Why the model has a read-out
#
# Why not put the cross-entropy straight on the attention weights, $L = -\log p_t$? Because
# then the log would undo the exponential: $\partial L/\partial z = p - e_t$, which does **not**
# vanish when $p$ is saturated on a wrong key (it is $e_\text{wrong} - e_t$, of norm $\sqrt 2$).
# In a Transformer the attention weights sit in the middle of the network, and the loss
# reaches them through the values, as here: then nothing undoes the Jacobian
# $\mathrm{diag}(p) - pp^\top$, which vanishes when $p$ saturates. Take an example where the
# unscaled model at $d_k = 1024$ is saturated on a wrong key (we rescale the batch-mean
# gradient by $B$ to get that example's own):

# %%
sub = big._make(a[:200] for a in big)  # the first 200 examples
f_u = training.forward(w_1024, sub, scale=1.0)
d_z_u = training.backward(sub, f_u).d_logits * len(sub.x)  # each example's own dL_b/dz
wrong = np.flatnonzero((f_u.weights.max(axis=1) > 1 - 1e-9) & (f_u.weights.argmax(axis=1) != sub.target))
b = wrong[0]
direct = f_u.weights[b].copy()
direct[sub.target[b]] -= 1.0  # p - e_t
print(f"example {b}: largest weight {f_u.weights[b].max():.9f} on key {f_u.weights[b].argmax()}, target {sub.target[b]}")
print(f"  ‖dL/dz‖ with the loss on p directly: {np.linalg.norm(direct):.3f}")
print(f"  ‖dL/dz‖ through the read-out:        {np.linalg.norm(d_z_u[b]):.1e}")
assert np.linalg.norm(direct) > 1.4 and np.linalg.norm(d_z_u[b]) < 1e-6

# %% [markdown]
# ## 4. At initialisation: where does the gradient come from?
#
# Before any training, we measure on 2048 held-out examples, from the initial weights the runs
# below start from:
#
# - the mean **attention entropy** (at most $\log 8 \approx 2.08$ nats for uniform weights, 0 for one-hot);
# - each example's own gradient $\|\partial L_b/\partial W_Q\|$: its **median** and **mean**;
# - the **share of examples** that carry 90% of the total squared gradient;
# - the norm of the gradient of a **batch** of 64 (what one training step sees), averaged over 32 batches, ± its SE.

# %%
held_out = training.make_batch(2048, rng=rng)
batches = [held_out._make(a[i * 64:(i + 1) * 64] for a in held_out) for i in range(32)]
init = {}
print(" d_k  scaling   entropy  median ‖∂L_b/∂W_Q‖  mean ‖∂L_b/∂W_Q‖  share of examples  batch-64 ‖∂L/∂W_Q‖")
for d_k in (4, 64, 256, 1024):
    w0 = training.initial_weights(d_k, seed=SEED)
    for name, scale in (("scaled", None), ("unscaled", 1.0)):
        norms = training.per_example_gradient_norms(w0, held_out, scale=scale)
        batch_norms = [np.linalg.norm(training.loss_and_gradients(w0, bt, scale=scale)[1].W_Q) for bt in batches]
        init[d_k, name] = dict(entropy=training.evaluate(w0, held_out, scale=scale).entropy,
                               median=np.median(norms), mean=norms.mean(),
                               share=training.share_of_examples(norms), norms=norms,
                               batch=np.mean(batch_norms), batch_se=np.std(batch_norms, ddof=1) / np.sqrt(32))
        r = init[d_k, name]
        print(f"{d_k:4d}  {name:>8}  {r['entropy']:7.3f}  {r['median']:19.2e}  {r['mean']:17.2e}  "
              f"{r['share']:17.3f}  {r['batch']:10.3f} ± {r['batch_se']:.3f}")

# %% [markdown]
# Read the table from left to right at $d_k = 1024$:
#
# - The unscaled attention starts saturated: its entropy is a small fraction of the scaled one.
# - For the **typical** example the gradient has vanished: the unscaled median is orders of
#   magnitude below the scaled one. This is the vanishing gradient of notebook 06.
# - But the **mean** is not small, and neither is the gradient of a batch: both are *larger*
#   than with the scale. A small share of the examples carries 90% of it.

# %%
s, u = init[1024, "scaled"], init[1024, "unscaled"]
print(f"d_k = 1024: entropy ratio unscaled/scaled {u['entropy'] / s['entropy']:.3f}; "
      f"median gradient ratio {u['median'] / s['median']:.1e}; share {u['share']:.3f} vs {s['share']:.3f}")
assert u["entropy"] < 0.1 * s["entropy"]
assert u["median"] < 1e-2 * s["median"] and u["mean"] > s["mean"]
assert u["share"] < 0.2 < 0.5 < s["share"]
for d_k in (4, 64, 256, 1024):  # the batch gradient is larger without the scale, by more than 4 SE
    s_, u_ = init[d_k, "scaled"], init[d_k, "unscaled"]
    assert u_["batch"] - s_["batch"] > 4 * np.hypot(u_["batch_se"], s_["batch_se"])
print("the batch gradient is larger without the scale at every d_k: True")

# %% [markdown]
# Which examples are they? Those where, by chance, the two largest logits are close. There
# the softmax is not saturated, and the gradient it passes back is large: in step 4 the keys,
# of length about $\sqrt{d_k}$, are multiplied by $s = 1$ instead of $1/\sqrt{d_k}$.

# %%
f0 = training.forward(training.initial_weights(1024, seed=SEED), held_out, scale=1.0)
top2 = np.sort(f0.logits, axis=1)[:, -2:]
gap = top2[:, 1] - top2[:, 0]
norms = init[1024, "unscaled"]["norms"]
heavy = np.zeros(len(norms), bool)
heavy[np.argsort(norms)[::-1][:int(round(init[1024, "unscaled"]["share"] * len(norms)))]] = True
print(f"std of the unscaled logits: {f0.logits.std():.1f} (√1024 = 32)")
print(f"gap between the two largest logits, median: {np.median(gap[heavy]):.2f} for the {heavy.sum()} examples "
      f"carrying 90% of the gradient, {np.median(gap[~heavy]):.2f} for the other {(~heavy).sum()}")
assert np.median(gap[heavy]) < 0.2 * np.median(gap[~heavy])

# %% [markdown]
# The two distributions of per-example gradients, on a log axis (thin vertical lines: the medians):

# %%
ax = training_plots.gradient_histogram(init[1024, "scaled"]["norms"], init[1024, "unscaled"]["norms"], d_k=1024)
ax.figure

# %% [markdown]
# So the popular summary is half right. Saturation does kill the gradient of most examples.
# It does not make the gradient of a batch small: a few near-ties carry a large one. What
# that does to training is the next question.
#
# ## 5. Training with plain gradient descent, one learning rate for all
#
# Each run: plain SGD, $W \leftarrow W - \eta\,\partial L/\partial W$, $\eta = 1$, 300 steps,
# batches of 64 fresh examples, seed 0. For each $d_k$ the scaled and the unscaled run start from
# the same weights and see the same batches. Every record is taken on the step's batch before
# its update. "Steps to 90%" is the first step at which the batch accuracy, averaged over the
# last 10 steps, reaches 0.9; the final accuracy and loss are measured on 2000 held-out examples.
# The columns marked "(step 1)" are measured on the first batch, before any update.

# %%
LR = 1.0
D_KS_SHOWN = (4, 64, 256, 1024)
runs = {(d_k, scaled): training.run(d_k, scaled, LR) for d_k in D_KS_SHOWN for scaled in (True, False)}


def steps_text(steps):
    return f"{steps}" if steps is not None else f"never in {training.STEPS}"


steps_to_90 = {key: training.steps_to_accuracy(h.accuracy) for key, h in runs.items()}
print(" d_k  scaling   entropy     ‖∂L/∂W_Q‖   ‖∂L/∂W_K‖   steps to 90%  final acc  final loss")
print("                 (step 1)    (step 1)    (step 1)")
for (d_k, scaled), h in runs.items():
    print(f"{d_k:4d}  {'scaled' if scaled else 'unscaled':>8}  {h.entropy[0]:8.3f}  {h.grad_norm_q[0]:10.3f}  "
          f"{h.grad_norm_k[0]:10.3f}  {steps_text(steps_to_90[d_k, scaled]):>13}  {h.final.accuracy:9.3f}  "
          f"{h.final.loss:10.3f}")

# %% [markdown]
# The same runs as curves. Columns: $d_k$; rows: the batch loss, the batch accuracy (dotted:
# 0.9), the mean attention entropy (dotted: $\log 8$, uniform attention) and the norm of the
# gradient reaching $W_Q$ on a log axis (values below $10^{-8}$ are drawn at the bottom edge).
# The gradient reaching $W_K$ is not drawn: at every step of every run it is within a factor
# of 3 of the one reaching $W_Q$ (checked below).

# %%
fig = training_plots.training_small_multiples(runs, D_KS_SHOWN, title=f"SGD, learning rate {LR:g}, batch 64, seed {SEED}")
fig

# %% [markdown]
# What the runs show, each line checked in the next cell:
#
# - At $d_k = 4$ both models learn the task, in a similar number of steps.
# - With the scale, the model learns the task at every $d_k$, and the number of steps barely changes.
# - Without it, the number of steps grows with every increase of $d_k$; at $d_k = 1024$ it is
#   about 20 times that of the scaled model.
# - The unscaled model does not stall: its loss keeps falling, only far more slowly. At
#   $d_k = 1024$ it reaches 90% near the end of the 300 steps.
# - Its batch gradient jumps by orders of magnitude from step to step: after step 100 it is
#   below $10^{-6}$ on about a quarter of the steps (batches in which no example passes back a
#   noticeable gradient, as for most examples in section 4), and far above the scaled model's on
#   others. The scaled one is smooth.

# %%
s_steps = [steps_to_90[d_k, True] for d_k in D_KS_SHOWN]
u_steps = [steps_to_90[d_k, False] for d_k in D_KS_SHOWN]
print("steps to 90%, scaled:  ", s_steps)
print("steps to 90%, unscaled:", u_steps)
assert None not in s_steps + u_steps
assert all(runs[d_k, True].final.accuracy > 0.99 for d_k in D_KS_SHOWN)  # the task is learnable at every d_k
assert abs(u_steps[0] - s_steps[0]) <= 0.5 * s_steps[0]
assert max(s_steps) <= 1.5 * min(s_steps)
assert all(a < b for a, b in zip(u_steps, u_steps[1:]))
print(f"d_k = 1024: unscaled / scaled steps = {u_steps[-1] / s_steps[-1]:.1f}")
assert u_steps[-1] > 10 * s_steps[-1]
loss_u = runs[1024, False].loss
print(f"d_k = 1024, unscaled: mean loss over steps 1-50 {loss_u[:50].mean():.2f}, 126-175 {loss_u[125:175].mean():.2f}, "
      f"251-300 {loss_u[-50:].mean():.2f}")
assert loss_u[:50].mean() > loss_u[125:175].mean() > loss_u[-50:].mean()
late = {scaled: runs[1024, scaled].grad_norm_q[100:] for scaled in (True, False)}
print(f"d_k = 1024, steps 101-300: std of log10 ‖∂L/∂W_Q‖ (orders of magnitude): scaled "
      f"{np.std(np.log10(late[True])):.2f}, unscaled {np.std(np.log10(np.maximum(late[False], 1e-300))):.2f}")
print(f"  share of steps with ‖∂L/∂W_Q‖ < 1e-6: scaled {np.mean(late[True] < 1e-6):.2f}, "
      f"unscaled {np.mean(late[False] < 1e-6):.2f}; share with unscaled > 10 × scaled: "
      f"{np.mean(late[False] > 10 * late[True]):.2f}")
assert np.std(np.log10(np.maximum(late[False], 1e-300))) > 10 * np.std(np.log10(late[True]))
assert np.mean(late[True] < 1e-6) == 0 and 0.2 < np.mean(late[False] < 1e-6) < 0.35
assert np.mean(late[False] > 10 * late[True]) > 0.2
ratio_k_q = max(np.max(np.abs(np.log10(h.grad_norm_k / h.grad_norm_q))) for h in runs.values())
print(f"largest |log10(‖∂L/∂W_K‖ / ‖∂L/∂W_Q‖)| over every step of every run: {ratio_k_q:.2f} (log10 3 = 0.48)")
assert ratio_k_q < np.log10(3)

# %% [markdown]
# ## 6. A learning rate for each
#
# One learning rate for both models is not a fair race: $\eta = 1$ may simply suit the scaled
# model. So we sweep $\eta$ over $\{0.01, 0.03, 0.1, 0.3, 1, 3\}$ for both models and every $d_k$
# in $\{4, 16, 64, 256, 1024\}$ — 60 runs, a few seconds. First $d_k = 1024$:

# %%
sweep = {(d_k, scaled, lr): training.run(d_k, scaled, lr)
         for d_k in D_KS for scaled in (True, False) for lr in LEARNING_RATES}
sweep_steps = {key: training.steps_to_accuracy(h.accuracy) for key, h in sweep.items()}
print("d_k = 1024     steps to 90%            final accuracy")
print("    η       scaled   unscaled        scaled   unscaled")
for lr in LEARNING_RATES:
    print(f"{lr:5g}  {steps_text(sweep_steps[1024, True, lr]):>11}  {steps_text(sweep_steps[1024, False, lr]):>9}"
          f"       {sweep[1024, True, lr].final.accuracy:6.3f}  {sweep[1024, False, lr].final.accuracy:9.3f}")

# %%
ax = training_plots.lr_sweep(LEARNING_RATES, [sweep_steps[1024, True, lr] for lr in LEARNING_RATES],
                             [sweep_steps[1024, False, lr] for lr in LEARNING_RATES],
                             max_steps=training.STEPS, d_k=1024)
ax.set_title("SGD, $d_k$ = 1024")
ax.figure

# %% [markdown]
# Retuning helps the unscaled model a lot: at $\eta = 0.1$ it needs about a third of the steps
# it needs at $\eta = 1$, and at the two smallest $\eta$ it is even ahead of the scaled model
# (the same change of the weights moves its logits $\sqrt{d_k} = 32$ times more). So retuning
# narrows the gap, from about 20 times as many steps to about 8. It does not close it: the scaled
# model's best uses $\eta = 3$, with which the unscaled model does not reach 90% within 300 steps.
# (That best is at the edge of the grid; a larger $\eta$ might help the scaled model further.)

# %%
def best(d_k, scaled, lrs=LEARNING_RATES, seed=SEED):
    """(fewest steps to 90%, the learning rate that gave it) over ``lrs``."""
    found = [(training.steps_to_accuracy(training.run(d_k, scaled, lr, seed=seed).accuracy), lr) for lr in lrs]
    return min((s, lr) for s, lr in found if s is not None)


(bs, lr_s), (bu, lr_u) = best(1024, True), best(1024, False)
ratio_at_1 = sweep_steps[1024, False, 1.0] / sweep_steps[1024, True, 1.0]
print(f"d_k = 1024, both at η = 1: unscaled / scaled steps = {ratio_at_1:.1f}")
print(f"d_k = 1024, each at its best: scaled {bs} steps (η = {lr_s:g}), unscaled {bu} steps (η = {lr_u:g}), "
      f"ratio {bu / bs:.1f}")
print(f"unscaled at η = 1 / at its best: {sweep_steps[1024, False, 1.0] / bu:.1f}; unscaled at the scaled model's best "
      f"η = {lr_s:g}: {steps_text(sweep_steps[1024, False, lr_s])}, held-out accuracy {sweep[1024, False, lr_s].final.accuracy:.3f}")
assert bu < 0.5 * sweep_steps[1024, False, 1.0]
assert all(sweep_steps[1024, False, lr] < (sweep_steps[1024, True, lr] or np.inf) for lr in (0.01, 0.03))
assert 4 < bu / bs < ratio_at_1 and lr_u < lr_s
assert sweep_steps[1024, False, lr_s] is None and lr_s == max(LEARNING_RATES)

# %% [markdown]
# Is that one lucky seed? The same comparison for seeds 1 and 2 (learning rates around each
# model's best, to save time). We check that the unscaled model's best lies inside its range,
# not at an edge where an untried learning rate might do better; a narrower range can only
# slow the scaled model.

# %%
for seed in (1, 2):
    (bs_, lr_s_), (bu_, lr_u_) = best(1024, True, (0.3, 1.0, 3.0), seed), best(1024, False, (0.03, 0.1, 0.3), seed)
    print(f"seed {seed}: scaled {bs_} steps (η = {lr_s_:g}), unscaled {bu_} steps (η = {lr_u_:g}), ratio {bu_ / bs_:.1f}")
    assert bu_ > 4 * bs_ and lr_u_ == 0.1  # 0.1: inside (0.03, 0.1, 0.3)

# %% [markdown]
# Now every $d_k$, each model at its own best learning rate:

# %%
best_s = [best(d_k, True) for d_k in D_KS]
best_u = [best(d_k, False) for d_k in D_KS]
print(" d_k   scaled: steps (η)   unscaled: steps (η)")
for d_k, (s_, ls), (u_, lu) in zip(D_KS, best_s, best_u):
    print(f"{d_k:4d}   {s_:8d} ({ls:g})   {u_:10d} ({lu:g})")
assert max(s for s, _ in best_s) <= 1.5 * min(s for s, _ in best_s)
assert all(a <= b for (a, _), (b, _) in zip(best_u, best_u[1:])) and best_u[-1][0] > 3 * best_u[0][0]
assert all(a >= b for (_, a), (_, b) in zip(best_u, best_u[1:])) and best_u[-1][1] < best_u[0][1]
assert best_u[0][0] <= 1.5 * best_s[0][0]
assert all(ls == max(LEARNING_RATES) for _, ls in best_s[1:])  # d_k >= 16: the scaled best is at the grid's edge

# %%
ax = training_plots.best_steps(D_KS, [s for s, _ in best_s], [u for u, _ in best_u])
ax.figure

# %% [markdown]
# With the scale, the best number of steps stays flat as $d_k$ grows (for $d_k \ge 16$ the best
# is at the largest $\eta$ tried, so it might be lower still). Without the scale, the best number
# of steps grows with $d_k$ and the best learning rate shrinks: at $d_k = 4$ the two are close,
# at $d_k = 1024$ the unscaled model needs about 8 times as many steps.
#
# ### Explore every run
#
# The figure of section 5 for one $d_k$ at a time, at any learning rate of the sweep. Drag
# $d_k$ and the learning rate; the runs are already computed, so the figure updates at once.
# (Built in a fresh kernel, the explorer first trains all 60 runs: a few seconds.)

# %% tags=["nbval-ignore-output"]
explorer = TrainingExplorer(d_k=1024, lr=1.0)
explorer

# %% [markdown]
# ## 7. A second look with Adam
#
# Adam divides each step by a running root-mean-square of the gradient. Its very first step
# is $-\eta\,\mathrm{sign}(g)$ (up to $\varepsilon$): every weight moves by $\eta$, however small
# or large the gradient is. So with Adam a small gradient does not mean a small step, and the
# question "does the gradient vanish?" no longer decides the speed. Here is the first step of
# the unscaled model at $d_k = 1024$: the gradient's entries differ in size by orders of
# magnitude, the steps do not.

# %%
w0 = training.initial_weights(1024, seed=SEED)
g0 = training.loss_and_gradients(w0, training.training_data(SEED, 1, training.BATCH_SIZE)[0][0], scale=1.0)[1]
step = training.train(1024, scaled=False, lr=0.01, optimizer="adam", steps=1).weights.W_Q - w0.W_Q
print(f"gradient entries |∂L/∂W_Q|: smallest {np.abs(g0.W_Q).min():.1e}, median {np.median(np.abs(g0.W_Q)):.1e}, "
      f"largest {np.abs(g0.W_Q).max():.1e}")
print(f"first Adam step, η = 0.01: {np.mean(np.isclose(np.abs(step), 0.01, rtol=1e-3)):.2%} of the entries move by η "
      f"(within 0.1%), in the direction of -sign(g): {np.array_equal(np.sign(step), -np.sign(g0.W_Q))}")
assert np.abs(g0.W_Q).max() > 1e4 * np.abs(g0.W_Q).min()
assert np.mean(np.isclose(np.abs(step), 0.01, rtol=1e-3)) > 0.99 and np.array_equal(np.sign(step), -np.sign(g0.W_Q))

# %% [markdown]
# Same task, same initialisation and data; $\eta \in \{0.001, 0.003, 0.01, 0.03, 0.1\}$ (Adam's
# learning rates are smaller than SGD's).

# %%
ADAM_LRS = (0.001, 0.003, 0.01, 0.03, 0.1)
adam = {(d_k, scaled, lr): training.run(d_k, scaled, lr, optimizer="adam")
        for d_k in (4, 1024) for scaled in (True, False) for lr in ADAM_LRS}
adam_steps = {key: training.steps_to_accuracy(h.accuracy) for key, h in adam.items()}
print("Adam: steps to 90%")
print("    η     d_k=4 scaled  unscaled   d_k=1024 scaled  unscaled")
for lr in ADAM_LRS:
    print(f"{lr:6g}  {steps_text(adam_steps[4, True, lr]):>12}  {steps_text(adam_steps[4, False, lr]):>8}"
          f"  {steps_text(adam_steps[1024, True, lr]):>15}  {steps_text(adam_steps[1024, False, lr]):>8}")

# %%
ax = training_plots.lr_sweep(ADAM_LRS, [adam_steps[1024, True, lr] for lr in ADAM_LRS],
                             [adam_steps[1024, False, lr] for lr in ADAM_LRS], max_steps=training.STEPS, d_k=1024)
ax.set_title("Adam, $d_k$ = 1024")
ax.figure

# %% [markdown]
# The picture is the same as with SGD: at $d_k = 4$ the two models are close (both best at the
# largest $\eta$ tried); at $d_k = 1024$ the unscaled model needs a smaller learning rate and,
# at its best, several times more steps. Adam makes the step size independent of the gradient's
# size, and the difference remains: a tiny typical gradient is not the whole story. What Adam
# leaves unchanged is that the same step in the weights moves the unscaled logits $\sqrt{d_k}$
# times more, starting from a saturated softmax.

# %%
def best_adam(d_k, scaled):
    return min((adam_steps[d_k, scaled, lr], lr) for lr in ADAM_LRS if adam_steps[d_k, scaled, lr] is not None)


(a4s, l4s), (a4u, l4u) = best_adam(4, True), best_adam(4, False)
(a1s, l1s), (a1u, l1u) = best_adam(1024, True), best_adam(1024, False)
print(f"Adam best, d_k = 4: scaled {a4s} steps (η = {l4s:g}), unscaled {a4u} steps (η = {l4u:g})")
print(f"Adam best, d_k = 1024: scaled {a1s} steps (η = {l1s:g}), unscaled {a1u} steps (η = {l1u:g}), ratio {a1u / a1s:.1f}")
assert abs(a4u - a4s) <= 0.5 * a4s and l4s == l4u == max(ADAM_LRS)
assert a1u > 4 * a1s and l1u < l1s

# %% [markdown]
# ## Summary
#
# - A one-head attention model fits in a few lines of numpy. Its backward pass is five steps —
#   softmax + cross-entropy ($r - e_{c_t}$), the read-out, the softmax Jacobian
#   $\mathrm{diag}(p) - pp^\top$, the bilinear form $s\,q\cdot k$, the outer products — and
#   finite differences confirm it, with an error that shrinks like $h^2$.
# - At initialisation the unscaled logits have variance $d_k$ and, at large $d_k$, the attention
#   is saturated. The **typical** example's gradient vanishes, but the **batch** gradient is
#   larger than with the scale, at every $d_k$ tried: a few near-ties carry it.
# - In training (SGD), both models learn at small $d_k$. At $d_k = 1024$ and the learning rate
#   that suits the scaled model ($\eta = 1$), the unscaled one learns about 20 times slower; at
#   $\eta = 3$, not within 300 steps. A smaller learning rate narrows the gap but does not close
#   it: at each model's best, the unscaled one still takes about 8 times as many steps (6–8
#   over three seeds). The scaled model's best barely changes with $d_k$. With Adam
#   ($d_k = 4$ and 1024) the picture is the same.
# - On this task the unscaled model does not stall: it learns slower, with a batch gradient that
#   jumps by orders of magnitude from step to step. The scale is what makes one learning rate
#   work across $d_k$, and makes training faster and steadier.
#
# ## Exercises
#
# **Exercise 1.** The logit of one query–key pair is $q\cdot k$ with $q = W_Q x$ and $k = W_K y$.
# For the $W_K$ (2×3), $x$ and $y$ printed below, what is $\partial(q\cdot k)/\partial W_Q$, a 2×3 matrix?

# %%
print("W_K =", LOGIT_GRAD_W_K.tolist(), "| x =", LOGIT_GRAD_X.tolist(), "| y =", LOGIT_GRAD_Y.tolist())
answer = None  # replace None with your answer (a 2x3 array), then run the cell
_ = check("09.logit_grad_w_q", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $q\cdot k = \sum_i k_i (W_Q x)_i = \sum_{i,a} k_i\,(W_Q)_{ia}\,x_a$ is linear in $W_Q$, so
# $\partial(q\cdot k)/\partial (W_Q)_{ia} = k_i x_a$: the outer product $k\,x^\top = (W_K y)\,x^\top$.
# Here $k = W_K y = (2, 0)$, so the answer is `np.outer(LOGIT_GRAD_W_K @ LOGIT_GRAD_Y, LOGIT_GRAD_X)`
# $= \begin{pmatrix}2 & 4 & 0\\ 0 & 0 & 0\end{pmatrix}$. This is step 5 of the backward pass for a single pair.
# </details>
#
# **Exercise 2.** Write `softmax_ce_backward(z, t)`: the gradient $\partial L/\partial z$ of
# $L = -\log \mathrm{softmax}(z)_t$ for a 1-D array of logits `z` and the right class `t`. It must
# work for logits as large as $10^6$.

# %%
def softmax_ce_backward(z, t):
    ...  # your code here: return an array of the same shape as z


_ = check("09.softmax_ce_backward", softmax_ce_backward)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $L = -z_t + \log\sum_j e^{z_j}$, so $\partial L/\partial z_i = \mathrm{softmax}(z)_i - [i = t]$:
# probabilities minus the one-hot answer (step 1 of the backward pass).
#
# ```python
# def softmax_ce_backward(z, t):
#     e = np.exp(z - np.max(z))  # subtract the max: no overflow at 1e6
#     g = e / e.sum()
#     g[t] -= 1.0
#     return g
# ```
# </details>
#
# **Exercise 3.** The inputs have $d_\text{in} = 16$ components of variance 1. Each entry of
# $W_Q$ is drawn independently with mean 0 and variance $\sigma^2$. Which $\sigma^2$ makes every
# component of $q = W_Q x$ have variance 1?

# %%
answer = None  # replace None with your answer, then run the cell
_ = check("09.lecun_variance", answer)

# %% [markdown]
# <details><summary>Solution</summary>
#
# $q_i = \sum_{a=1}^{16} (W_Q)_{ia} x_a$ is a sum of 16 independent products, each of variance
# $\sigma^2 \cdot 1$, so $\mathrm{Var}(q_i) = 16\sigma^2 = 1$ gives $\sigma^2 = 1/16 = 0.0625$:
# LeCun's $1/\text{fan-in}$, the initialisation used in this notebook.
# </details>
#
# ## Further reading
#
# - A. Vaswani et al., *Attention Is All You Need*, NeurIPS 2017 ([arXiv:1706.03762](https://arxiv.org/abs/1706.03762)),
#   §3.2.1 and footnote 4: "additive attention outperforms dot product attention without scaling
#   for larger values of $d_k$ … We suspect that for large values of $d_k$, the dot products grow
#   large in magnitude, pushing the softmax function into regions where it has extremely small gradients."
# - D. Britz, A. Goldie, M.-T. Luong, Q. Le, *Massive Exploration of Neural Machine Translation
#   Architectures*, EMNLP 2017 ([arXiv:1703.03906](https://arxiv.org/abs/1703.03906)): the large
#   comparison of additive and multiplicative (dot-product) attention that Vaswani et al. cite for that sentence.
#
# ---
# **Back to the start:** [00 — Start here](00_start_here.ipynb)
