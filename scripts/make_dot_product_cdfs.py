"""Regenerate sdpa_helpers/data/dot_product_cdfs.npz: the CDF of q.k / sqrt(d_k) for uniform and
Laplace components at the course's large d_k (what ``variance.sample_dot_products_fast`` draws from).

Run:  python scripts/make_dot_product_cdfs.py   (a second; numpy only)

Method: the characteristic function of one product of two independent standardised components
(closed forms in the sine and cosine integrals Si, Ci, here by Gauss quadrature to about 1e-12)
raised to the power d_k is the characteristic function of q.k / sqrt(d_k); inverting it on a
grid (trapezoid) gives the density, whose running integral is the CDF (error below 1e-4).
``tests/test_variance.py`` checks the stored tables against Monte Carlo and the closed-form
moments.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sdpa_helpers.variance import CDF_D_KS, CDF_DISTS, CDF_FILE  # noqa: E402

_LEGENDRE_01 = np.polynomial.legendre.leggauss(48)  # nodes and weights on [-1, 1]
_LAGUERRE = np.polynomial.laguerre.laggauss(80)  # nodes and weights for int_0^inf e^-u f(u) du
_EULER_GAMMA = 0.5772156649015329
_X_MAX = 9.0  # the density grid spans +-9 standard deviations
_X_GRID = np.linspace(-_X_MAX, _X_MAX, 901)  # step 0.02
_T_MAX = 14.0
_T_GRID = np.linspace(0.0, _T_MAX, 281)  # step 0.05: the trapezoid aliasing period 2 pi / 0.05 = 126 >> 18


def _si_ci_small(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine integrals ``Si(x)``, ``Ci(x)`` for ``0 < x <= 8`` by Gauss-Legendre (entire integrands)."""
    nodes, weights = _LEGENDRE_01
    half = x / 2.0
    s = np.multiply.outer(half, nodes + 1.0)  # (n, 48) nodes on [0, x]
    si = half * (np.sinc(s / math.pi) @ weights)
    cos_minus_one_over_s = -2.0 * np.sin(s / 2.0) ** 2 / s  # (cos s - 1) / s without cancellation
    ci = _EULER_GAMMA + np.log(x) + half * (cos_minus_one_over_s @ weights)
    return si, ci


def _aux_fg(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Auxiliary functions ``f(x) = int_0^inf e^-xw / (1 + w^2) dw`` and ``g(x) = int_0^inf w e^-xw / (1 + w^2) dw``
    for ``x >= 8`` (Gauss-Laguerre after ``v = x w``; the poles at ``v = +-i x`` are far away)."""
    v, w = _LAGUERRE
    r = 1.0 / x  # 0 for x = inf
    with np.errstate(under="ignore"):
        inv = 1.0 / (1.0 + np.multiply.outer(r, v) ** 2)  # (n, 80)
        return r * (inv @ w), r * r * (inv @ (v * w))


def product_cf(t, dist: str) -> np.ndarray:
    """Characteristic function ``E[cos(t X Y)]`` of the product of two independent standardised components.

    (The product is symmetric, so the characteristic function is real.) Accurate at any
    magnitude of ``t`` a float can hold:

    - normal: ``1 / sqrt(1 + t^2)``;
    - Rademacher: ``cos t``;
    - uniform on ``[-sqrt3, sqrt3]``: ``Si(3t) / (3t)``;
    - Laplace of variance 1: ``int_0^inf e^-u / (1 + t^2 u^2 / 4) du = x f(x)`` with ``x = 2 / t`` and the
      auxiliary function ``f(x) = Ci(x) sin x - (Si(x) - pi/2) cos x`` (given ``Y``, ``X Y`` is Laplace with
      characteristic function ``1 / (1 + t^2 Y^2 / 2)``; ``|Y| = u / sqrt 2`` with ``u ~ Exp(1)``).

    ``Si`` and ``Ci`` come from Gauss-Legendre quadrature below 8 and from the auxiliary functions
    (Gauss-Laguerre) above, both to about 1e-12.

    Examples
    --------
    >>> [round(float(product_cf(0.5, d)), 6) for d in ("normal", "rademacher", "uniform", "laplace")]
    [0.894427, 0.877583, 0.883122, 0.91677]
    """
    ta = np.abs(np.asarray(t, dtype=float))
    if dist == "normal":
        return 1.0 / np.hypot(1.0, ta)  # no overflow of t^2
    if dist == "rademacher":
        return np.cos(ta)
    out = np.empty_like(ta)
    if dist == "uniform":
        with np.errstate(over="ignore"):
            x = 3.0 * ta  # inf beyond 6e307
        small = x <= 8.0
        nodes, weights = _LEGENDRE_01
        v = (nodes + 1.0) / 2.0  # int_0^1 sinc(x v) dv = Si(x) / x, also at x = 0
        out[small] = np.sinc(np.multiply.outer(x[small], v) / math.pi) @ (weights / 2.0)
        xl = x[~small]
        f, g = _aux_fg(xl)
        finite = np.isfinite(xl)
        si = np.full(xl.shape, math.pi / 2)
        si[finite] -= f[finite] * np.cos(xl[finite]) + g[finite] * np.sin(xl[finite])
        out[~small] = (si / 3.0) / ta[~small]
        return out
    small_t = ta < 0.25  # x = 2 / t > 8: integrate directly (poles at u = +-2i / t are far)
    u, w = _LAGUERRE
    out[small_t] = (1.0 / (1.0 + np.multiply.outer(ta[small_t] / 2.0, u) ** 2)) @ w
    x = 2.0 / ta[~small_t]  # (0, 8]
    si, ci = _si_ci_small(x)
    out[~small_t] = x * (ci * np.sin(x) - (si - math.pi / 2) * np.cos(x))
    return out


def dot_product_density(d_k: int, dist: str) -> tuple[np.ndarray, np.ndarray]:
    """Density of ``q . k / sqrt(d_k)`` on ``_X_GRID``: ``(1 / pi) int_0^T phi(t) cos(t x) dt`` with
    ``phi(t) = product_cf(t / sqrt(d_k)) ** d_k`` (below 1e-12 beyond ``T = 14`` for d_k >= 128)."""
    phi = product_cf(_T_GRID / math.sqrt(d_k), dist) ** d_k  # (n_t,)
    w = np.full(_T_GRID.size, _T_GRID[1] - _T_GRID[0])
    w[[0, -1]] /= 2.0  # trapezoid weights
    density = (np.cos(np.multiply.outer(_X_GRID, _T_GRID)) @ (w * phi)) / math.pi
    return _X_GRID, np.maximum(density, 0.0)


def main() -> None:
    tables = {}
    for dist in CDF_DISTS:
        for d_k in CDF_D_KS:
            x, f = dot_product_density(d_k, dist)
            cdf = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2.0 * np.diff(x))])
            tables[f"{dist}_{d_k}"] = cdf / cdf[-1]
    np.savez_compressed(CDF_FILE, x=_X_GRID, d_ks=np.array(CDF_D_KS), **tables)
    print(f"wrote {CDF_FILE}: {len(tables)} CDFs on {_X_GRID.size} points")


if __name__ == "__main__":
    main()
