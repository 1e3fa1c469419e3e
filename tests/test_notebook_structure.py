"""Every notebook: built from its source, the course skeleton, clean stored outputs."""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOURCES = sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
sys.path.insert(0, str(ROOT / "authoring"))
import build  # noqa: E402  (authoring/build.py: the one place that reads sources)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
IGNORE = "nbval-ignore-output"
ids = [p.stem for p in NOTEBOOKS]


def load(path):
    return nbformat.read(path, as_version=4)


def markdown(nb):
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def output_text(output):
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return "\n".join(str(v) for k, v in output.get("data", {}).items() if not k.startswith("image/"))


def test_every_source_has_a_notebook_and_back():
    assert [p.stem for p in SOURCES] == [p.stem for p in NOTEBOOKS]
    assert NOTEBOOKS[0].name == "00_start_here.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_notebook_matches_its_source(path):
    source = ROOT / "authoring" / "notebooks" / (path.stem + ".py")
    assert build.cell_signature(load(path)) == build.cell_signature(build.read_source(source)), (
        f"{path.name} differs from {source.relative_to(ROOT)}: rebuild with "
        f"`.venv/bin/python authoring/build.py {path.name[:2]}`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_skeleton(path):
    nb = load(path)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "starts with a # title"
    assert "**Learning goals**" in first.source and "**Prerequisites**" in first.source
    goals = re.search(r"\*\*Learning goals\*\*\n((?:- .*\n?)+)", first.source)
    assert goals and 3 <= len(goals.group(1).strip().splitlines()) <= 4, "3-4 learning goals"
    text = markdown(nb)
    assert re.search(r"^## 1\. ", text, re.M), "numbered sections"
    for heading in ("## Summary", "## Exercises"):
        assert re.search(rf"^{heading}\b", text, re.M), heading
    assert "<details>" in text and "Solution" in text, "solutions folded in <details>"
    checks = [c for c in code_cells(nb) if re.search(r"\bcheck\(\s*\"\d\d\.", c.source)]
    assert len(checks) >= 2, "at least two self-checked exercises"
    setup = code_cells(nb)[0]
    assert "make_rng(SEED)" in setup.source and "SEED =" in setup.source and "__version__" in setup.source
    assert IGNORE in setup.metadata.get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_links_to_the_next_notebook(path):
    text = markdown(load(path))
    later = [p for p in NOTEBOOKS if p.name > path.name]
    if later:
        assert re.search(rf"\*\*Next:\*\* \[[^\]]+\]\({re.escape(later[0].name)}\)", text), \
            f"a **Next:** link to {later[0].name}"
    else:
        assert "(00_start_here.ipynb)" in text, "the last notebook links back to the start"
    for target in re.findall(r"\]\(([^)#\s]+\.ipynb)\)", text):
        assert (path.parent / target).exists(), f"link to missing {target}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_executed_in_order_without_errors(path):
    nb = load(path)
    counts = [c.execution_count for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), "executed top to bottom in a fresh kernel"
    for cell in code_cells(nb):
        for output in cell.outputs:
            assert output.output_type != "error", f"stored error in cell {cell.execution_count}"
            if output.output_type == "stream":
                assert output.name != "stderr" or not output.text.strip(), \
                    f"stderr in cell {cell.execution_count}: {output.text[:200]}"
            assert "image/svg+xml" not in output.get("data", {}), "figures as PNG"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_no_forbidden_code(path):
    for cell in code_cells(load(path)):
        src = cell.source
        assert "sys.path" not in src
        assert not re.search(r"^\s*[!%]\s*pip\b", src, re.M), "no !pip / %pip"
        assert not re.search(r"^\s*from\s+\S+\s+import\s+\*", src, re.M), "no import *"
        last = src.rstrip().splitlines()[-1] if src.strip() else ""
        assert not last.rstrip().endswith(";"), f"trailing ';' in cell {cell.execution_count}: assign to _"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_images_are_local_with_alt_text(path):
    text = markdown(load(path))
    for alt, target in re.findall(r"!\[([^\]]*)\]\(([^)\s]+)", text):
        assert alt.strip(), f"image {target} has no alt text"
        assert not re.match(r"^[a-z]+://", target), f"image {target} is fetched from the internet"
        assert target.startswith("figures/") and (path.parent / target).exists(), f"{target} is not in figures/"
    for tag in re.findall(r"<img\b[^>]*>", text):
        assert re.search(r'alt="[^"]+"', tag), f"{tag} has no alt text"
        src = re.search(r'src="([^"]+)"', tag).group(1)
        assert src.startswith("figures/") and (path.parent / src).exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_outputs_hold_no_local_paths_and_size(path):
    assert path.stat().st_size < 1_000_000, f"{path.name} is {path.stat().st_size / 1e6:.2f} MB"
    home = str(Path.home())
    for cell in code_cells(load(path)):
        for output in cell.outputs:
            text = output_text(output)
            for bad in ("/work/", "/home/", "/root/", "/tmp/", "/Users/", "C:\\", str(ROOT), home):
                assert bad not in text, f"local path {bad!r} in the output of cell {cell.execution_count}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_ignore_output_tag_only_where_honest(path):
    nb = load(path)
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for cell in code_cells(nb):
        tagged = IGNORE in cell.metadata.get("tags", [])
        shows_widget = any(WIDGET_MIME in o.get("data", {}) for o in cell.outputs)
        prints_versions = "__version__" in cell.source
        if shows_widget:
            assert tagged, f"widget cell {cell.execution_count} must be tagged {IGNORE}"
            model = next(o["data"][WIDGET_MIME]["model_id"] for o in cell.outputs if WIDGET_MIME in o.get("data", {}))
            assert model in state, "widget state is stored, so nbviewer can show the explorer"
        if tagged:
            assert shows_widget or prints_versions, \
                f"cell {cell.execution_count} is tagged {IGNORE} but shows no widget and prints no versions"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_explorer_has_a_static_twin_before_it(path):
    """A static figure precedes every explorer; the explorer's own fallback PNG does not count."""
    nb = load(path)
    seen_figure = False
    for cell in code_cells(nb):
        if any(WIDGET_MIME in o.get("data", {}) for o in cell.outputs):
            assert seen_figure, f"explorer in cell {cell.execution_count} without a static figure before it"
            seen_figure = False
        if any("image/png" in o.get("data", {}) and WIDGET_MIME not in o.get("data", {}) for o in cell.outputs):
            seen_figure = True


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_stored_explorers_show_a_picture_and_what_to_do(path):
    """Opened without a kernel (JupyterLab before a run, GitHub), an explorer output is a PNG."""
    for cell in code_cells(load(path)):
        for output in cell.outputs:
            data = output.get("data", {})
            if WIDGET_MIME in data:
                assert "image/png" in data, f"explorer in cell {cell.execution_count} stores no picture"
                assert str(data["text/plain"]).startswith("▶ Run this cell to start the explorer"), \
                    f"cell {cell.execution_count}: text/plain is {str(data['text/plain'])[:80]!r}"


# -- the learner's edition: deep dives and the main line (issue 12) -------------------------

DEEP = build.DEEP_DIVE_TAG
MAIN_HEADING = re.compile(r"^#{1,2} ")  # a "# " or "## " heading ends a deep dive


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_deep_dives_are_tagged_and_folded(path):
    """Every cell from a "## Deep dive:" heading up to the next #/## heading is tagged deep-dive,
    no other cell is, and the heading cell is stored collapsed (JupyterLab opens it folded)."""
    inside = False
    for k, cell in enumerate(load(path).cells):
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if cell.cell_type == "markdown":
            if build.is_deep_dive_heading(cell):
                inside = True
                assert cell.metadata.get(build.COLLAPSED) is True, \
                    f"cell {k} ({first!r}) is not stored collapsed: rebuild the notebook"
            elif MAIN_HEADING.match(first):
                inside = False
            assert not re.match(r"^#+ Deep dive", first) or first.startswith("## Deep dive:"), \
                f"cell {k}: a deep dive starts with '## Deep dive: <topic>', got {first!r}"
        else:
            assert build.COLLAPSED not in cell.metadata
        tagged = DEEP in cell.metadata.get("tags", [])
        where = f"cell {k} ({cell.cell_type}: {first[:60]!r})"
        assert tagged == inside, (f"{where} is inside a deep dive but not tagged {DEEP}" if inside
                                  else f"{where} is tagged {DEEP} but not under a '## Deep dive:' heading")
        if not build.is_deep_dive_heading(cell):
            assert not cell.metadata.get(build.COLLAPSED), f"{where}: only deep-dive headings are folded"


# Budgets of the main line (cells not tagged deep-dive), counted by authoring/build.py's
# main_line (the one home of the count; the README's reading-load table comes from it too).
WORD_BUDGET, CODE_BUDGET = build.WORD_BUDGET, build.CODE_BUDGET
DEFAULT_WORDS, DEFAULT_CODE, MIN_WORDS, MAX_CELL, COURSE_WORDS = (
    build.DEFAULT_WORDS, build.DEFAULT_CODE, build.MIN_WORDS, build.MAX_CELL, build.COURSE_WORDS)
main_line = build.main_line


def budget_table() -> tuple[str, int]:
    lines, total = [], 0
    for path in NOTEBOOKS:
        r, p = main_line(path), path.name[:2]
        total += r["words"]
        lines.append(f"{path.name[:34]:34s} words {r['words']:5d}/{WORD_BUDGET.get(p, DEFAULT_WORDS)}  "
                     f"code {r['code']:3d}/{CODE_BUDGET.get(p, DEFAULT_CODE)}  long cells {r['long']}  "
                     f"predict {r['predict']}  deep-dive cells {r['deep']}")
    lines.append(f"course main line: {total} words (budget {COURSE_WORDS})")
    return "\n".join(lines), total


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_main_line_budget(path):
    r, p = main_line(path), path.name[:2]
    words, code = WORD_BUDGET.get(p, DEFAULT_WORDS), CODE_BUDGET.get(p, DEFAULT_CODE)
    print(f"{path.name}: {r}")
    problems = []
    if not MIN_WORDS <= r["words"] <= words:
        problems.append(f"{r['words']} words of main-line prose (budget {MIN_WORDS}..{words})")
    if not 0 < r["code"] <= code:
        problems.append(f"{r['code']} main-line code lines (budget {code})")
    if r["long"]:
        problems.append(f"{r['long']} main-line code cell(s) over {MAX_CELL} lines (move to a deep dive or split)")
    if p != "00" and r["predict"] < 1:
        problems.append("no **Predict:** prompt in the main line")
    assert not problems, f"{path.name}: " + "; ".join(problems)


# -- the reading-time models: the budgets' (issue 20 §1: 150 words a minute + 1 minute per main-line
# code cell) and the honest one beside it (issue 29 §3: math and running the cells counted) --------

def _tiny_notebook(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    for kind, source, tags in cells:
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(make(source, metadata={"tags": tags} if tags else {}))
    path = tmp_path / "99_tiny.ipynb"
    nbformat.write(nb, path)
    return path


def test_reading_time_model_counts_what_a_learner_reads(tmp_path):
    words = " ".join(["word"] * 140)
    path = _tiny_notebook(tmp_path, [
        ("markdown", f"{words} $d_\\text{{model}}/h$ and $x^2$ <details>folded solution words</details>", []),
        ("code", "x = 1\nprint(x)", []),
        ("markdown", "seven words of prose before the end", [build.END_OF_CHAIN_TAG]),
        ("markdown", "## Deep dive: skipped\n" + words, [DEEP]),
        ("code", "print('deep')", [DEEP]),
        ("code", "", []),  # an empty cell is no reading
        ("markdown", " ".join(["more"] * 150), []),
        ("code", "y = 2", []),
    ])
    r = main_line(path)
    # 140 + "model" (inside \text) + "and" = 142; then 7; then 150. Math and <details> are not prose.
    assert r["words"] == 142 + 7 + 150
    assert r["cells"] == 2 and r["deep"] == 2
    assert r["chain_minutes"] == pytest.approx((142 + 7) / 150 + 1)
    assert r["minutes"] == pytest.approx((142 + 7 + 150) / 150 + 2)
    assert build.minutes(150, 3) == pytest.approx(4.0)
    # the honest model: math symbols $d_\text{model}/h$ -> d, /, h (3) and $x^2$ -> x, 2 (2); no display
    assert (r["symbols"], r["displayed"]) == (5, 0)
    assert r["honest_minutes"] == pytest.approx((142 + 7 + 150 + 2.5 * 5) / 150 + 1.5 * 2)


def test_math_load_counts_symbols_and_displayed_equations():
    math_load = build.math_load
    assert math_load("no math, 3 numbers and x = y in prose") == (0, 0)
    assert math_load(r"$q\cdot k$") == (3, 0)  # q, \cdot, k
    assert math_load(r"$\mathrm{Var}(q\cdot k) = d_k$") == (7, 0)  # Var, q, \cdot, k, =, d, k
    assert math_load(r"$0.0625 = 1/16$") == (5, 0)  # a number is one symbol
    assert math_load(r"$\left(\tfrac{1}{2}\right)$ and $a\,b$") == (4, 0)  # layout is no symbol: 1, 2, a, b
    assert math_load("$$\n\\sum_{i=1}^{d_k} q_i k_i\n$$\n\ntext $$x$$") == (11, 2)
    assert math_load("<details>$$\\sqrt{d_k}$$ $x$</details>") == (0, 0)  # folded solutions are not read
    assert build.honest_minutes(150, 2, math_symbols=60, displayed=1) == pytest.approx(1 + 3 + 1 + 1)


def test_course_honest_minutes():
    """The whole main line in the honest model (authoring/build.py's honest_minutes) <= 300 minutes."""
    rows = {path.name[:2]: main_line(path)["honest_minutes"] for path in NOTEBOOKS}
    total = sum(rows.values())
    print("\n" + ", ".join(f"{k}: {v:.1f}" for k, v in rows.items()) + f"; course {total:.0f}")
    assert total <= build.COURSE_HONEST_MINUTES, (
        f"the course's main line takes {total:.0f} honest minutes (budget {build.COURSE_HONEST_MINUTES}): "
        + ", ".join(f"{k} {v:.0f}" for k, v in rows.items()))


@pytest.mark.parametrize("prefix", sorted(build.MINUTES_BUDGET))
def test_reading_time_budget(prefix):
    """00: up to the end of the chain (the cell tagged end-of-chain) <= 10 minutes; all of it <= 15."""
    (path,) = [p for p in NOTEBOOKS if p.name.startswith(prefix + "_")]
    nb = load(path)
    tagged = [k for k, c in enumerate(nb.cells) if build.END_OF_CHAIN_TAG in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: exactly one cell tagged {build.END_OF_CHAIN_TAG!r}, found {len(tagged)}"
    assert DEEP not in nb.cells[tagged[0]].metadata.get("tags", []), "the end of the chain is on the main line"
    chain_budget, budget = build.MINUTES_BUDGET[prefix]
    r = main_line(path)
    print(f"{path.name}: chain {r['chain_minutes']:.1f} min, whole {r['minutes']:.1f} min "
          f"({r['words']} words, {r['cells']} code cells)")
    assert r["chain_minutes"] <= chain_budget, \
        f"{path.name}: the chain takes {r['chain_minutes']:.1f} min (budget {chain_budget:g})"
    assert r["minutes"] <= budget, f"{path.name}: the main line takes {r['minutes']:.1f} min (budget {budget:g})"


def test_start_heres_chain_ends_after_the_numbers_at_real_head_sizes():
    """The chain ends with the section that shows spread, weights and gradient unscaled vs scaled, in numbers."""
    nb = load(NOTEBOOKS[0])
    end = next(k for k, c in enumerate(nb.cells) if build.END_OF_CHAIN_TAG in c.metadata.get("tags", []))
    before = [c for c in nb.cells[:end] if c.cell_type == "code"]
    assert any("comparison_table" in c.source for c in before), "the numbers at d_k = 64 and 128 come before it"
    assert any("three_effects_figure" in c.source for c in before), "the figure of the chain comes before it"


def test_readme_shows_no_figure_a_notebook_draws():
    """The README shows no figure a notebook draws (00's used to be there: it, and its alt text,
    answered 00's Predict before the learner made it; issue 38 §2). A drawn diagram may stay."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme) + re.findall(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", readme)
    drawn = {build.figure_path(source).relative_to(ROOT).as_posix() for source in SOURCES}
    outputs = [s for s in shown if s in drawn or re.search(r"_figure\.png$", s)]
    assert not outputs, f"the README shows {outputs}: a notebook's figure belongs in its notebook, after its Predict"
    for target in shown:
        assert re.match(r"^https://mybinder\.org/", target) or (ROOT / target).exists(), \
            f"README image {target} is missing"


def test_readme_reading_load_table_is_current():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert build.reading_load_table() in readme, (
        "README's reading-load table is out of date: run `.venv/bin/python authoring/build.py --readme`")


def test_course_main_line_words():
    table, total = budget_table()
    print("\n" + table)
    assert total <= COURSE_WORDS, f"the course's main line holds {total} words (budget {COURSE_WORDS})\n{table}"


#: A conceptual exercise (predict, explain or design) carries this marker in its line.
CONCEPTUAL = "(conceptual)"


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=ids[1:])
def test_a_conceptual_exercise(path):
    text = markdown(load(path))
    exercises = re.split(r"^## Exercises\b", text, flags=re.M)
    assert len(exercises) > 1, "an ## Exercises section"
    section = re.split(r"^## (?!Exercises)", exercises[1], flags=re.M)[0]
    assert CONCEPTUAL in section, f"no exercise marked {CONCEPTUAL!r} (predict / explain / design) in ## Exercises"


def test_start_here_maps_every_notebook():
    text = markdown(load(NOTEBOOKS[0]))
    for path in NOTEBOOKS[1:]:
        assert f"]({path.name})" in text, f"notebook 00's map does not link {path.name}"


def test_readme_maps_every_notebook():
    readme = (ROOT / "README.md").read_text()
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}" in readme, f"README's map does not list {path.name}"


#: A printed number whose digits are rounding noise depends on the CPU, the BLAS kernel and
#: numpy's SIMD dispatch: strict nbval then fails on another machine (issue 18). Such values
#: print as "below 1e-12" (sdpa_helpers.verify.NOISE_FLOOR); what is left to catch is a
#: stored output with a tiny e-notation number, or an exact zero of a difference.
NOISE_PATTERNS = [
    re.compile(r"(?<![\w.])\d(?:\.\d+)?e-(?:1[3-9]|[2-9]\d|\d{3})\b"),  # 3.3e-16, 1e-17, 2e-300
    re.compile(r"\b(?:error|off by|difference|gap|deviation)\s*(?:of\s*)?[=:]?\s*0(?:\.0+)?(?![\d.eE])"),
]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_print_no_rounding_noise(path):
    nb = load(path)
    found = []
    for index, cell in enumerate(code_cells(nb)):
        for output in cell.get("outputs", []):
            text = output_text(output)
            for pattern in NOISE_PATTERNS:
                found += [f"code cell {index}: {m.group(0)!r}" for m in pattern.finditer(text)]
    assert not found, f"{path.name} prints values whose digits are rounding noise: {found}"


def test_noise_patterns_catch_what_they_must():
    bad = ["relative error 1.1e-16 (limit 1e-09)", "off by 0 (limit 1e-12)", "relative error 0 (limit 1e-9)",
           "max difference 2.2e-16"]
    good = ["relative error below 1e-12 (limit 1e-09)", "weight 0.0001", "off by 0.35 SE", "p = 4.5e-05",
            "error 0.012"]
    assert all(any(p.search(s) for p in NOISE_PATTERNS) for s in bad)
    assert not any(p.search(s) for s in good for p in NOISE_PATTERNS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_deep_dive_folds_something(path):
    """A folded heading hides the cells under it, never its own text: a deep dive whose heading
    cell is its only cell would show its whole text while "folded" (and JupyterLab offers no
    "cells hidden" button to open it)."""
    cells = load(path).cells
    for i, cell in enumerate(cells):
        if build.is_deep_dive_heading(cell):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            assert nxt is not None and "deep-dive" in nxt.metadata.get("tags", []) \
                and not nxt.source.lstrip().startswith("#"), \
                f"{path.name} cell {i}: the deep dive {cell.source.splitlines()[0]!r} has no cell under its heading"


# -- a cell that draws shows its drawing --------------------------------------------------------

#: A call that draws: a function of a plots module under the notebooks' import name
#: (``from sdpa_helpers.plots import <topic> as <topic>_plots``), or any ``*_figure(`` function
#: (``new_figure``, ``saturation_curves_figure``, ...). The plots functions make figures without
#: pyplot, so a figure shows only when the cell ends with it (or its Axes' ``.figure``).
DRAWING_CALL = re.compile(r"\b(?:\w+_plots\.\w+|\w+_figure)\s*\(")


def cells_that_draw_without_a_picture(nb) -> list[int]:
    """Indices of code cells that call a drawing function but store no PNG."""
    return [k for k, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and DRAWING_CALL.search(cell.source)
            and not any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_cell_that_draws_stores_its_picture(path):
    """Main line and deep dives: a cell that draws and ends with a print (or an assignment) stores
    no image, while the prose around it describes the figure."""
    missing = cells_that_draw_without_a_picture(load(path))
    assert not missing, (f"{path.name}: cell(s) {missing} call a plotting function but store no image: "
                         "end the cell with the figure (`fig`, `ax.figure`)")


def test_drawing_rule_catches_a_figure_followed_by_a_print():
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    printed = nbformat.v4.new_output("stream", name="stdout", text="gap 0.15\n")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("saturation_plots.saturation_curves_figure(u, s, 16)\nprint(gap)",
                                  outputs=[printed]),
        nbformat.v4.new_code_cell("fig, ax = new_figure()\nax.plot(x)\nfig", outputs=[png]),
        nbformat.v4.new_code_cell("ax = small_samples_plots.spread_vs_n(n, sd)", outputs=[]),
        nbformat.v4.new_code_cell("fig = saturation_plots.law_check_figure(s, h, n)\nprint(1)\nfig",
                                  outputs=[printed, png]),
        nbformat.v4.new_code_cell("print(saturation.law_check(16, [1.0]))", outputs=[printed]),
    ])
    assert cells_that_draw_without_a_picture(nb) == [0, 2]


# -- a Predict prompt is not answered before the learner runs the cell below it (issue 29 §4) ----

#: A Predict prompt: a main-line markdown cell holding ``**Predict:**``.
PREDICT = re.compile(r"\*\*Predict:?\*\*")
#: The cell metadata in which a Predict prompt's source declares its answer: a JSON list of the
#: forms the answer may take in text (``# %% [markdown] predict_answer=["1/16", "uniform"]``).
ANSWER_KEY = "predict_answer"


def answer_pattern(answers) -> re.Pattern:
    """One pattern for the declared forms of an answer: case-insensitive, whole words (a form is
    not found inside a longer word or number), any run of spaces matching any other.

    >>> p = answer_pattern(["2 in 5", "1/16", "shrinks"])
    >>> [bool(p.search(t)) for t in ("about 2  in 5", "tends to 1/16.", "it Shrinks", "12 in 50", "1/160")]
    [True, True, True, False, False]
    """
    forms = [r"\s+".join(re.escape(word) for word in form.split()) for form in answers]
    return re.compile(r"(?<![\w.])(?:" + "|".join(forms) + r")(?![\w])", re.IGNORECASE)


def predict_giveaways(cells) -> list[str]:
    """What is wrong with a source's Predict prompts (``cells``: a jupytext-read source's cells).

    For each main-line markdown cell with ``**Predict:**``: its ``predict_answer`` metadata is a
    non-empty list of strings; none of them occurs in what a learner reads between the prompt and
    the first output after it -- the rest of the prompt's cell after its Predict paragraph, every
    cell after it up to and including the first code cell (its code, comments and check texts);
    and one of them is stated later, in the markdown of the same section (so the declared answer is
    the answer the notebook gives)."""
    problems = []
    for k, cell in enumerate(cells):
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "markdown" or DEEP in tags or not PREDICT.search(cell.source):
            continue
        where = f"cell {k} ({PREDICT.split(cell.source, 1)[1].strip()[:50]!r}...)"
        answers = cell.metadata.get(ANSWER_KEY)
        if isinstance(answers, str):
            answers = [answers]
        if not (isinstance(answers, list) and answers and all(isinstance(a, str) and a.strip() for a in answers)):
            problems.append(f"{where}: declare the answer, e.g. `# %% [markdown] {ANSWER_KEY}=[\"larger\", \"grows\"]`")
            continue
        pattern = answer_pattern(answers)
        after_prompt = PREDICT.split(cell.source, 1)[1].split("\n\n", 1)
        read_before = [("the prompt's cell, after the prompt", after_prompt[1] if len(after_prompt) > 1 else "")]
        j = k + 1
        while j < len(cells):
            read_before.append((f"cell {j} ({cells[j].cell_type})", cells[j].source))
            if cells[j].cell_type == "code":
                break
            j += 1
        for place, text in read_before:
            found = pattern.search(text)
            if found:
                problems.append(f"{where}: its answer {found.group(0)!r} is in {place}, read before running")
        later = []
        for c in cells[j + 1:]:
            if c.cell_type == "markdown" and re.match(r"^#{1,2} ", c.source.lstrip()):
                break
            if c.cell_type == "markdown":
                later.append(c.source)
        if not pattern.search("\n".join(later)):
            problems.append(f"{where}: none of {answers} is stated in the section's prose after the run")
    return problems


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_predict_prompts_are_not_answered_before_the_run(source):
    """A **Predict:** prompt is never answered by the code, comments or check texts of the cell below
    it: the answer may appear in an output, and in the prose after it (AUTHORING.md)."""
    import jupytext
    problems = predict_giveaways(jupytext.read(source, fmt="py:percent").cells)
    assert not problems, f"{source.name}:\n" + "\n".join(problems)


def test_predict_rule_catches_a_giveaway():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    prompt = md("## 2. Spread\n\n**Predict:** does it shrink or grow?\n\nSimulate it:",
                metadata={ANSWER_KEY: ["shrinks", "slope -1/2"]})
    reveal = md("It shrinks, slope -1/2.")
    assert predict_giveaways([prompt, code("x = f()  # it shrinks"), reveal]) != []
    assert predict_giveaways([prompt, code('verify("slope -1/2", ok)'), reveal]) != []
    assert predict_giveaways([prompt, md("Note: it Shrinks."), code("x = f()"), reveal]) != []
    assert predict_giveaways([prompt, code("x = f()"), reveal]) == []
    assert predict_giveaways([prompt, code("x = f()"), md("It grows.")]) != []  # never stated: a wrong declaration
    undeclared = md("**Predict:** larger or smaller?")
    assert "declare the answer" in predict_giveaways([undeclared, code("x = 1"), reveal])[0]
    folded = md("**Predict:** x?", metadata={"tags": [DEEP]})
    assert predict_giveaways([folded, code("x = 1  # shrinks")]) == []  # deep dives are not checked


# -- nor in the README, an earlier notebook or a figure's alt text above it (issue 38 §2) ---------

#: Forms of a Predict's answer (a subset of its ``predict_answer``) that the course also uses about
#: other things ("0.25", "d_k = 256", "one key"): they are searched in the README and in the alt text
#: above the prompt, and in the prompt's own section (above), but not in earlier notebooks' text. A
#: form of one word or one whole number ("larger", "256") counts as common without being listed.
COMMON_KEY = "predict_answer_common"
ONE_WORD_OR_WHOLE_NUMBER = re.compile(r"[^\W\d_]+|\d+")
#: The README's reading-load table is statistics about the notebooks, regenerated by the build.
READING_LOAD = re.compile(re.escape(build.READING_LOAD_MARKERS[0]) + r".*?" + re.escape(build.READING_LOAD_MARKERS[1]),
                          re.S)


def _source_cells(source):
    import jupytext
    return jupytext.read(source, fmt="py:percent").cells


def predict_prompts(cells):
    """``(index, forms, common forms)`` of every main-line Predict prompt that declares its answer."""
    for k, cell in enumerate(cells):
        if cell.cell_type != "markdown" or DEEP in cell.metadata.get("tags", []) or not PREDICT.search(cell.source):
            continue
        forms = cell.metadata.get(ANSWER_KEY)
        forms = [forms] if isinstance(forms, str) else list(forms or [])
        common = cell.metadata.get(COMMON_KEY, [])
        common = [common] if isinstance(common, str) else list(common)
        yield k, forms, common


def answers_elsewhere(earlier, cells, readme) -> list[str]:
    """Where a notebook's Predict answers appear before the learner reaches the prompt.

    ``earlier``: ``{name: cells}`` of the notebooks before it; ``cells``: its own cells; ``readme``:
    the README's text. Every form is searched in the README (outside its reading-load table) and in
    the alt text of every figure above the prompt in its notebook; every form that is neither one
    word nor one whole number nor listed in ``predict_answer_common`` also in the whole text of every
    earlier notebook (markdown, code, alt text; deep dives and folded solutions included)."""
    problems = []
    readme = READING_LOAD.sub(" ", readme)
    for k, forms, common in predict_prompts(cells):
        where = f"the Predict in cell {k} ({PREDICT.split(cells[k].source, 1)[1].strip()[:40]!r}...)"
        if not forms:
            continue  # test_predict_prompts_are_not_answered_before_the_run asks for the declaration
        stray = [c for c in common if c not in forms]
        if stray:
            problems.append(f"{where}: {COMMON_KEY} {stray} must also be in {ANSWER_KEY}")
        every = answer_pattern(forms)
        specific = [f for f in forms if f not in common and not ONE_WORD_OR_WHOLE_NUMBER.fullmatch(f.strip())]
        found = every.search(readme)
        if found:
            problems.append(f"{where}: its answer {found.group(0)!r} is in README.md: "
                            f"…{readme[max(0, found.start() - 60):found.end() + 20]!r}…")
        for j, c in enumerate(cells[:k]):
            found = every.search(c.metadata.get("alt", ""))
            if found:
                problems.append(f"{where}: its answer {found.group(0)!r} is in the alt text of cell {j}, above it")
        if specific:
            pattern = answer_pattern(specific)
            for name, cs in earlier.items():
                for j, c in enumerate(cs):
                    found = pattern.search(c.source + "\n" + c.metadata.get("alt", ""))
                    if found:
                        problems.append(f"{where}: its answer {found.group(0)!r} is in {name}, cell {j}: "
                                        f"…{c.source[max(0, found.start() - 60):found.end() + 20]!r}… "
                                        f"(if that is not this answer, list the form in {COMMON_KEY})")
    return problems


#: Notebooks whose Predicts still have to list forms that earlier notebooks use about other things
#: (issue 38 §2; their sources belong to other helpers): what each must add, as the lead merges.
PENDING_COMMON = {
}


def _with_pending(source):
    if source.stem not in PENDING_COMMON:
        return source
    return pytest.param(source, marks=pytest.mark.xfail(strict=False, reason=(
        f"{source.stem}'s owner adds {PENDING_COMMON[source.stem]} (each an occurrence about another quantity); "
        "then remove it from PENDING_COMMON")))


@pytest.mark.parametrize("source", [_with_pending(p) for p in SOURCES], ids=[p.stem for p in SOURCES])
def test_predict_answers_are_not_given_away_before_the_notebook(source):
    """No form of a Predict's answer is in the README, in an earlier notebook, or in the alt text of a
    figure above the prompt (issue 38 §2): the learner answers before anything answers for them."""
    earlier = {p.stem: _source_cells(p) for p in SOURCES if p.name < source.name}
    problems = answers_elsewhere(earlier, _source_cells(source), (ROOT / "README.md").read_text(encoding="utf-8"))
    assert not problems, f"{source.name}:\n" + "\n".join(problems)


def test_answers_elsewhere_catches_a_giveaway():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    prompt = md("## 3. Steps\n\n**Predict:** 1×, 2× or 8× the steps?",
                metadata={ANSWER_KEY: ["near 8", "7.1", "larger", "32", "one key"], COMMON_KEY: ["one key"]})
    clean = {"00_start": [md("The gradient is larger with 1024 keys: 32 of them on one key."), code("x = 1")]}
    assert answers_elsewhere(clean, [prompt], "# README\n\nNo numbers here.") == []  # a common form, elsewhere
    assert "README.md" in answers_elsewhere(clean, [prompt], "they need about 7× the steps (7.1)")[0]
    assert "README.md" in answers_elsewhere(clean, [prompt], "the batch gradient is larger")[0]  # common: README too
    table = f"{build.READING_LOAD_MARKERS[0]}\n| 09 | 7.1 |\n{build.READING_LOAD_MARKERS[1]}"
    assert answers_elsewhere(clean, [prompt], table) == []  # the generated statistics are not prose
    told = {"00_start": [md("In 09 the unscaled model needs near 8 times the steps.")]}
    assert "00_start, cell 0" in answers_elsewhere(told, [prompt], "")[0]
    alt_above = [code("fig", metadata={"alt": "survival curves: the ratio is 7.1"}), prompt]
    assert "alt text of cell 0" in answers_elsewhere({}, alt_above, "")[0]
    assert answers_elsewhere({"00_start": [code("fig", metadata={"alt": "larger unscaled"})]}, [prompt], "") == []
    alt_earlier = {"00_start": [code("fig", metadata={"alt": "the ratio is near 8"})]}
    assert "00_start, cell 0" in answers_elsewhere(alt_earlier, [prompt], "")[0]
    stray = md("**Predict:** x?", metadata={ANSWER_KEY: ["a"], COMMON_KEY: ["b"]})
    assert "must also be in" in answers_elsewhere({}, [stray], "")[0]


# -- the answer has one home (issue 38 §1) ---------------------------------------------------------

#: The one home of the answer's three sentences and its "Where it stops" list.
ANSWER = ROOT / "authoring" / "answer.md"
ANSWER_WORDS = 120


def read_as_plain(markdown: str) -> str:
    """Markdown as a reader reads it, for comparing: without blockquote markers (``> ``) at line
    starts, and with line wrapping undone (every run of whitespace one space)."""
    lines = [re.sub(r"^[ \t]*(?:>[ \t]?)+", "", line) for line in markdown.splitlines()]
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def answer_home() -> tuple[str, str]:
    """``(the three sentences, the "Where it stops" list)`` of authoring/answer.md, as plain text."""
    text = ANSWER.read_text(encoding="utf-8")
    sentences = re.search(r"^## The three sentences\n(.*?)^## Where it stops\n(.*)", text, re.S | re.M)
    assert sentences, f"{ANSWER.name} holds '## The three sentences' then '## Where it stops'"
    return read_as_plain(sentences.group(1)), read_as_plain(sentences.group(2))


def notebook_markdown(prefix: str) -> str:
    (source,) = [p for p in SOURCES if p.name.startswith(prefix + "_")]
    return "\n\n".join(c.source for c in build.read_source(source).cells if c.cell_type == "markdown")


def test_the_answer_home_is_three_sentences_within_budget():
    sentences, stops = answer_home()
    numbered = re.findall(r"(?:^| )(\d)\. \*\*", sentences)
    assert numbered == ["1", "2", "3"], f"three numbered sentences, got {numbered}"
    words = build.prose_words(sentences)
    assert words <= ANSWER_WORDS, f"the three sentences hold {words} words (at most {ANSWER_WORDS})"
    assert stops.startswith("- "), "a list under '## Where it stops'"
    for jargon in ("‖J‖", r"\|J\|", "μP", "muP", "nudged"):
        assert jargon not in sentences + stops, f"{jargon!r}: not a word the learner has at 00"


@pytest.mark.parametrize("where", [
    "README",
    "00",
    "09",
])
def test_the_answer_is_word_for_word_its_home(where):
    """README, 00's box and 09's closing hold authoring/answer.md's three sentences word for word (only
    line prefixes and wrapping may differ); its "Where it stops" list stands in 09's closing only (a
    learner cannot read it before 05-09: issue 38's learner), and README and 00 point there."""
    sentences, stops = answer_home()
    text = read_as_plain((ROOT / "README.md").read_text(encoding="utf-8") if where == "README"
                         else notebook_markdown(where))
    assert text.count(sentences) == 1, (
        f"{where} does not hold authoring/answer.md's three sentences word for word: copy them from there")
    if where == "09":
        assert text.count(stops) == 1, (
            "09's closing does not hold authoring/answer.md's 'Where it stops' list word for word: copy it from there")
    else:
        first = stops[2:].split(":")[0]
        assert first not in text, f"{where}: the 'Where it stops' list stands in 09's closing only"
        assert re.search(r"measure where each one stops, and 09 lists it", text), \
            f"{where}: one sentence after the answer points to where each part stops (09's closing)"


def test_read_as_plain_undoes_prefixes_and_wrapping():
    assert read_as_plain("> 1. **Spread.** If $q$\n>    and $k$\n\n> > x") == "1. **Spread.** If $q$ and $k$ x"
    assert read_as_plain("a\n   b") == read_as_plain("a b")


def test_start_here_says_what_is_proved_and_what_is_measured():
    """Issue 38's sceptics on 00: part 3 is measured on one task, not proved ("01–09 prove them");
    the scaled dip at small d_k comes from the 16 logits sharing one query's length, not from
    non-normal logits (which push the largest weight up); "a few queries keep a large J" is a share
    the notebook prints."""
    source = (ROOT / "authoring" / "notebooks" / "00_start_here.py").read_text(encoding="utf-8")
    text = markdown(load(NOTEBOOKS[0]))
    assert not re.search(r"01[–-]09 prove", text), "09 measures part 3; it proves nothing"
    assert "not yet normal" not in text, "non-normal logits make the largest weight larger, not smaller"
    rows = dict(re.findall(r"^\| (\d\d) \| \[[^\]]+\]\([^)]+\) \| ([^|]+) \|$", text, re.M))
    assert sorted(rows) == [p.name[:2] for p in NOTEBOOKS[1:]], "the map has a row per notebook"
    for nb, verb in (("02", "proves"), ("04", "proves"), ("06", "proves"), ("05", "measures"), ("08", "measures"),
                     ("09", "measures")):
        assert rows[nb].startswith(verb), f"map row {nb}: {rows[nb]!r} should say {verb!r}"
    assert not any("proves part 3" in r for r in rows.values())
    cell = next(c for c in code_cells(load(NOTEBOOKS[0])) if "jacobian_norm > 0.1" in c.source)
    printed = re.search(r"above 0\.1: (\d+)% of queries", "".join(output_text(o) for o in cell.outputs))
    assert printed and f"({printed.group(1)} %)" in text, \
        "the prose's share of queries with J above 0.1 is the printed one"
    assert "jacobian_norm > 0.1" in source
