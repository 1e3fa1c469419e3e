"""The course's evidence for its one answer (notebook 09, "The answer, revisited"): one row per claim, with the
numbers that back it, recomputed with the source notebook's call and seed, read from the stored grid, or
passed in from notebook 09, formatted as the source notebook prints them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from .. import gradients, overview, variance
from ..assumptions import init_logit_moments
from ..attention import softmax
from ..sampling import make_rng
from ..scales import D_K_CHOICES
from ..scaling import D_KS as SCALING_D_KS
from ..scaling import log_log_slopes, simulated_logit_stds
from .adam import AdamGrid, adam_grid
from .grid import Grid
from .summaries import seed_summary

__all__ = ["PARTS", "Evidence", "course_evidence", "format_evidence"]

#: The three parts of the answer, in order.
PARTS = ("spread", "commitment", "speed")


class Evidence(NamedTuple):
    """One row of the evidence table: ``part`` (one of :data:`PARTS`), ``claim``, ``values`` (strings,
    as the ``notebook`` prints them) and ``notebook`` (two digits)."""

    part: str
    claim: str
    values: tuple[str, ...]
    notebook: str


def _fixed(x: float, places: int) -> str:
    """``x`` with ``places`` decimals, never ``-0.000`` (a rounded zero keeps no sign)."""
    text = f"{x:.{places}f}"
    return text.lstrip("-") if float(text) == 0 else text


def _best_medians(grid, arm: str) -> str:
    """Each d_k's median steps to 90 % at the arm's best rate on ``grid`` (SGD or Adam), joined by spaces."""
    return " ".join(f"{seed_summary(grid.best(d, arm)[1]).median:.0f}" for d in grid.d_ks)


def course_evidence(grid: Grid, init_ratio: Mapping, adam: AdamGrid | None = None) -> list[Evidence]:
    """The evidence table: recomputed rows from notebooks 00, 02, 04, 06, 07 and 08, and notebook 09's rows.

    Parameters
    ----------
    grid : Grid
        The stored training grid (:func:`sdpa_helpers.training.training_grid`).
    init_ratio : mapping
        Notebook 09 section 3's ratios at initialisation, unscaled over scaled, one
        :class:`~sdpa_helpers.training.SeedSummary` per key ``"median"`` (the median example's
        gradient) and ``"batch"`` (a batch-64 gradient).
    adam : AdamGrid, optional
        The stored Adam grid (default :func:`sdpa_helpers.training.adam_grid`).

    Returns
    -------
    list of Evidence
        In the order of :data:`PARTS`. Results over seeds (09) are medians over the grid's 25 seeds;
        "start" is initialisation.
    """
    adam = adam_grid() if adam is None else adam
    for key in ("median", "batch"):
        if key not in init_ratio:
            raise ValueError(f"init_ratio must hold a SeedSummary under {key!r}")
    rows: list[Evidence] = []

    def add(part: str, claim: str, values: Iterable[str], notebook: str) -> None:
        rows.append(Evidence(part, claim, tuple(values), notebook))

    # spread: 02 (section 5's exact check, on its main line), 00 (the random walks' ends, its deep dive's
    # seed: 0), 04 (sections 1 and 2, seed 0)
    add("spread", "Var(q·k), ±1 components, d_k = 1, 2, 3, 4, exact (theory d_k)",
        [" ".join(str(variance.exact_var(variance.all_dot_products([-1, 1], d))) for d in (1, 2, 3, 4))], "02")
    end = overview.walk_end_variance(overview.dot_product_walks(256, 4000, rng=0))
    add("spread", "Var(q·k), d_k = 256, 4000 draws (theory 256), a deep dive", [f"{end.var:.0f}"], "00")
    slopes = log_log_slopes(SCALING_D_KS, simulated_logit_stds(SCALING_D_KS, n=2000, seed=0), n=2000)
    add("spread", "slope of log spread against log d_k: unscaled, ×1/√d_k, ×1/d_k (theory 0.5, 0, −0.5)",
        [_fixed(slopes[name][0], 3) for name in ("unscaled", "sqrt", "inv_d")], "04")
    drift = np.median([overview.scaled_drifts(seed=s) for s in range(20)], axis=0)
    add("spread", "16 keys, scaled, d_k = 4 … 4096: drift (max ÷ min − 1), median of 20 seeds: "
                  "spread, largest weight, ‖J‖", [f"{v:.1%}" for v in drift[:3]], "00")
    add("spread", "where it stops: GPT-2 small's init, by formula: Var(q·k/√64) (the footnote assumes 1)",
        [f"{init_logit_moments('gpt2', 768, 64, scale='sqrt').var:.4f}"], "08")
    # commitment: 00 section 4 (seed 0), 09 section 3
    heads = [overview.compare(d, rng=0) for d in overview.HEAD_D_KS]
    add("commitment", "16 keys, unscaled, d_k = 64 and 128: queries with over 0.9 on one key",
        [f"{100 * c.committed:.0f} %" for c in heads], "00")
    Q, K = make_rng(0).standard_normal((2, 100, 12, 64))  # 07 section 5's draws at d_k = 64
    add("commitment", "12 keys, d_k = 64: mean largest weight, unscaled, scaled (uniform: 0.083)",
        [f"{softmax(c * Q @ np.swapaxes(K, -1, -2)).max(axis=-1).mean():.3f}" for c in (1.0, 1 / 8)], "07")
    add("commitment", "outside its condition (09's task, 8 keys), d_k = 1024, at the start: the median example's "
                      "gradient, unscaled ÷ scaled",
        [f"{init_ratio['median'].median:.1e}"], "09")
    # where part 2's gradient clause stops: 06 sections 5 and 6 (seed 6), 09 section 3
    many = overview.compare(64, overview.MANY_KEYS, rng=6)
    add("commitment", "where it stops: 1024 keys, d_k = 64: median ‖J‖, unscaled ÷ scaled", [f"{many.ratio:.1f}"], "06")
    i64 = list(D_K_CHOICES).index(64)
    g = [gradients.gradient_curves(D_K_CHOICES, 8, 20_000, scale=name, rng=6).query_grad_norm.mean[i64]
         for name in ("unscaled", "sqrt")]
    add("commitment", "where it stops: 8 keys, d_k = 64, at the start: mean gradient to the query, unscaled, scaled",
        [f"{v:.2f}" for v in g], "06")
    add("commitment", "where it stops: d_k = 1024, at the start: the batch gradient, unscaled ÷ scaled",
        [f"{init_ratio['batch'].median:.1f}"], "09")
    span = f"d_k = {grid.d_ks[0]} … {grid.d_ks[-1]}"
    add("speed", f"SGD, each at its best η, {span}: median steps to 90 %, unscaled; scaled",
        [_best_medians(grid, "unscaled"), _best_medians(grid, "scaled")], "09")
    s, u = (seed_summary(grid.best(1024, arm)[1]).median for arm in ("scaled", "unscaled"))
    add("speed", "SGD, d_k = 1024, each at its best η: median steps to 90 %, unscaled, scaled, ratio",
        [f"{u:.0f}", f"{s:.0f}", f"{u / s:.1f}"], "09")
    k = list(grid.lrs).index(0.1)
    med = {arm: " ".join(f"{seed_summary(grid.steps(d, arm)[:, k]).median:.0f}" for d in grid.d_ks)
           for arm in ("unscaled", "scaled")}
    add("speed", f"SGD, η = 0.1, d_k = {grid.d_ks[0]} … {grid.d_ks[-1]}: median steps to 90 %, unscaled; scaled",
        [med["unscaled"], med["scaled"]], "09")
    add("speed", f"Adam, each at its best η, {span}: median steps to 90 %, unscaled; scaled",
        [_best_medians(adam, "unscaled"), _best_medians(adam, "scaled")], "09")
    s, u = (seed_summary(adam.best(1024, arm)[1]).median for arm in ("scaled", "unscaled"))
    add("speed", "Adam, d_k = 1024, each at its best η: median steps to 90 %, unscaled, scaled, ratio",
        [f"{u:.0f}", f"{s:.0f}", f"{u / s:.1f}"], "09")
    return rows


def format_evidence(rows: Iterable[Evidence]) -> str:
    """The table as text, one row a line: ``part | claim | values joined by "; " | notebook``.

    >>> print(format_evidence([Evidence("spread", "a claim", ("1.0", "2"), "04")]))
    part   | claim   | number(s) | notebook
    spread | a claim | 1.0; 2    | 04
    """
    rows = list(rows)
    if not rows or not all(isinstance(r, Evidence) for r in rows):
        raise TypeError("rows must be a non-empty sequence of Evidence")
    cells = [("part", "claim", "number(s)", "notebook")] + [(r.part, r.claim, "; ".join(r.values), r.notebook)
                                                            for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    return "\n".join(" | ".join(c[i].ljust(widths[i]) for i in range(3)) + " | " + c[3] for c in cells)
