"""One home for the d_k grid (issue 40 §4): every consequence of ``scales.D_K_CHOICES`` is derived from it
or checked against it here -- figure axis ends, panel defaults, and the ranges prose and alt texts state."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from sdpa_helpers import plots, scales
from sdpa_helpers.plots import gradients as gradients_plots
from sdpa_helpers.plots import saturation as saturation_plots
from sdpa_helpers.plots import scaling as scaling_plots
from sdpa_helpers.sampling import MCEstimate

ROOT = Path(__file__).resolve().parent.parent
GRID = scales.D_K_CHOICES
SMALLER = tuple(2**i for i in range(11))  # a different grid, 1 ... 1024


def _axes_made(make):
    fig, ax = plots.new_figure()
    make(ax)
    return ax


def _norm_panel(ax):
    est = MCEstimate(np.ones(3), np.zeros(3), np.ones(3))
    gradients_plots.NormPanel(ax, "||J||", [1, 4, 16], est, est)


@pytest.mark.parametrize("grid", [GRID, SMALLER], ids=["today", "smaller"])
def test_axis_ends_follow_the_grid(grid, monkeypatch):
    """Saturation's and the gradients' d_k axes end at the grid's ends (with their margin), the d_k axis'
    ticks stop at its last value, and 04's panel draws its theory lines up to it -- also for another grid."""
    monkeypatch.setattr(scales, "D_K_CHOICES", grid)
    lo, hi = grid[0] * 0.7, grid[-1] * 1.4
    curves = _axes_made(lambda ax: saturation_plots.format_curve_axes(ax, ax, ax, 16))
    assert curves.get_xlim() == pytest.approx((lo, hi))
    assert _axes_made(_norm_panel).get_xlim() == pytest.approx((lo, hi))
    ticks = _axes_made(plots.set_d_k_axis).xaxis.get_major_locator().locs
    assert ticks[-1] <= grid[-1] < 4 * ticks[-1]
    ax = scaling_plots.logit_std_vs_d_k()
    assert max(line.get_xdata().max() for line in ax.lines[:3]) == grid[-1]
    assert ax.get_ylim()[1] >= np.sqrt(grid[-1]) and ax.get_ylim()[0] <= 1 / np.sqrt(grid[-1])


def _literal_numbers(path: Path) -> list[tuple[int, int]]:
    """(line, value) of every int literal outside docstrings in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and type(n.value) is int and id(n) not in docstrings]


def test_no_figure_code_repeats_the_grids_end():
    """The grid's last value is written in scales.py only: a plots module that needs it reads
    ``scales.D_K_CHOICES`` (or ``plots.fit_d_k_grid``), so a changed grid moves every axis."""
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((ROOT / "sdpa_helpers" / "plots").glob("*.py"))
             for line, value in _literal_numbers(p) if value == GRID[-1]]
    assert not found, f"{GRID[-1]} (the grid's end) written as a literal in: {found}"


#: A range of d_k in prose: "d_k from 1 to 4096", "$d_k$ = 4 … 4096", "d_k (1 ... 4096)".
#: The words between "d_k" and the range may not name another quantity ("against d_model from 64 to 4096"
#: is 08's grid of d_model, not of d_k).
D_K_RANGE = re.compile(r"d_k\b(?:(?!d_model)[^\n]){0,25}?(?<![\d.])(\d+)\s*(?:to|…|\.\.\.)\s*(\d[\d,]*)(?![\d.])")
#: The largest d_k of the course's other grids (09's training grid, 00's many keys): a range of d_k
#: ending above it is the course's grid, so it must end where the grid ends.
OTHER_GRIDS_MAX = 1024
PROSE = sorted([*(ROOT / "authoring" / "notebooks").glob("*.py"), *ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"),
                *(ROOT / "sdpa_helpers").rglob("*.py")])


def d_k_range_problems(text: str, grid=GRID) -> list[str]:
    """What is wrong with the d_k ranges a text states, against ``grid``: a range of powers of two outside
    the grid, or one ending above OTHER_GRIDS_MAX but not at the grid's end.

    >>> d_k_range_problems("d_k from 1 to 4096; d_k = 4 … 1024", grid=(1, 2, 4, 2048))
    ["'d_k from 1 to 4096' ends at 4096, outside the grid 1 ... 2048"]
    >>> d_k_range_problems("sqrt(d_k) against d_model from 64 to 4096", grid=(1, 2, 4, 2048))
    []
    """
    problems = []
    for m in D_K_RANGE.finditer(text):
        lo, hi = int(m.group(1)), int(m.group(2).replace(",", ""))
        if lo <= 0 or hi <= lo or lo & (lo - 1) or hi & (hi - 1):
            continue  # not a range of powers of two: a range of values, not of d_k
        if lo < grid[0] or hi > grid[-1]:
            problems.append(f"{m.group(0)!r} ends at {hi}, outside the grid {grid[0]} ... {grid[-1]}")
        elif hi > OTHER_GRIDS_MAX and hi != grid[-1]:
            problems.append(f"{m.group(0)!r} stops at {hi}, not at the grid's end {grid[-1]}")
    return problems


def test_prose_ranges_of_d_k_match_the_grid():
    """Every "d_k from 1 to 4096" (prose, alt texts, docstrings, docs) states ``D_K_CHOICES``' ends."""
    found = [f"{p.relative_to(ROOT)}:{n}: {problem}" for p in PROSE
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             for problem in d_k_range_problems(line)]
    assert not found, "\n".join(found)


#: A large power of two in a notebook source (prose, alt text or code): "at $d_k = 4096$", "0.981 at 4096",
#: ``(1, 4, ..., 4096)``. Not part of a decimal ("0.4096") nor a fraction's denominator ("512/2048").
LARGE = re.compile(r"(?<![\d.,/])(\d{4,})(?![\d.,]\d)")
#: Lines about another quantity than d_k: d_model (08's widths), a published model's dimension.
NOT_D_K = re.compile(r"d_(?:\\text\{)?model|dimension")
#: The notebook sources, and the package (exercise questions, docstrings, doctests, constants) but for
#: models.py, whose 4096 is a published model's d_model.
SOURCES = sorted([*(ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"),
                  *(p for p in (ROOT / "sdpa_helpers").rglob("*.py") if p.name != "models.py")])


#: In the package, a line states a d_k when it names one; sample sizes and budgets (2048, 8192, ...) do not,
#: nor the check of the course's range ("d_k must be at most 2**20").
PACKAGE_D_K = re.compile(r"\bd_k")
NOT_A_D_K_STATEMENT = re.compile(r"at most|\*\*\s*20")


def large_d_k_problems(text: str, grid=GRID, package: bool = False) -> list[tuple[int, str]]:
    """``(line, problem)`` for every power of two above OTHER_GRIDS_MAX a source states that is not the
    grid's end: such a d_k is the top of the course's grid ("at d_k = 4096 the logits spread 64"), so a
    changed grid must move it (a source that means a d_k off the grid says so with another number). A line
    that also states the grid's end may list other values of the grid ("..., 2048, 4096"). In a package
    module (``package``) only lines naming d_k count.

    >>> large_d_k_problems("at $d_k = 4096$ it is 0.981\\nd_model from 64 to 4096\\nd_k = 1024; 0.4096", grid=(1, 2048))
    [(1, 'states d_k = 4096, but the grid ends at 2048')]
    """
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if NOT_D_K.search(line) or (package and (not PACKAGE_D_K.search(line) or NOT_A_D_K_STATEMENT.search(line))):
            continue
        values = [int(m.group(1)) for m in LARGE.finditer(line)]
        for value in values:
            if value > OTHER_GRIDS_MAX and not value & (value - 1) and value != grid[-1] \
                    and not (value in grid and grid[-1] in values):
                problems.append((n, f"states d_k = {value}, but the grid ends at {grid[-1]}"))
    return problems


@pytest.mark.parametrize("grid", [GRID, GRID[:-1], GRID + (2 * GRID[-1],)], ids=["today", "shorter", "longer"])
def test_a_large_d_k_in_a_source_is_the_grids_end(grid):
    """Every d_k above 1024 a notebook source or a package module states ("at d_k = 4096", an alt text's or an
    exercise's "4096", a tuple ending at 4096) is ``D_K_CHOICES[-1]``: with today's grid none is named; with a
    grid one step shorter or longer, every such line is named by file and line -- the places to derive from the
    grid or to reword."""
    found = [f"{p.relative_to(ROOT)}:{n}: {why}" for p in SOURCES
             for n, why in large_d_k_problems(p.read_text(encoding="utf-8"), grid, "sdpa_helpers" in p.parts)]
    if grid == GRID:
        assert not found, "\n".join(found)
    else:
        assert len(found) >= 30, found  # today's sources state 4096 on dozens of lines
        assert {f.split(":")[0] for f in found} >= {f"authoring/notebooks/{s}" for s in (
            "04_why_sqrt_dk.py", "05_softmax_saturation.py", "06_vanishing_gradients.py")}


def test_the_prose_check_notices_a_changed_grid():
    """With the grid ending at 2048 (or 8192), today's sources' "1 to 4096" ranges would all be named."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in PROSE)
    n_ranges = len([m for m in D_K_RANGE.finditer(text) if m.group(2).replace(",", "") == str(GRID[-1])])
    assert n_ranges >= 10
    for other in (GRID[:-1], GRID + (2 * GRID[-1],)):
        assert len(d_k_range_problems(text, other)) >= n_ranges
