"""The teacher's material, generated from the course itself (issue 41).

    .venv/bin/python authoring/teaching.py            # writes TEACHING.md (the guide and answer key)
    .venv/bin/python authoring/teaching.py --check    # exit 1 if TEACHING.md is not what the course gives

Everything comes from one place each: goals and prerequisites from each notebook source's first
cell; what a notebook proves or measures from 00's map; minutes from the main line's honest-minutes
model (``build.honest_minutes``); Predicts with their answers from the sources' ``predict_answer``
and the prose after the run; exercises from the bank (question, hint, answer, every named slip and
what it means) and the notebook's folded solution. The site build calls :func:`site_pages` for the
"For teachers" page, the worksheets (HTML; PDF through Chromium's print) and the talk.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "authoring" / "notebooks"
NOTEBOOKS = ROOT / "notebooks"
GUIDE = ROOT / "TEACHING.md"


def _main_line(built: Path) -> dict:
    """authoring/build.py's main-line model of a built notebook (imported here only: the site's own
    environment builds the worksheets and the talk from the built notebooks, without jupytext)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("authoring_build", ROOT / "authoring" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main_line(built)


class _Cell(dict):
    """A cell of a source (jupytext) or of a built notebook (JSON), read alike."""

    cell_type = property(lambda self: self["cell_type"])
    source = property(lambda self: self["source"] if isinstance(self["source"], str) else "".join(self["source"]))
    metadata = property(lambda self: self.get("metadata", {}))


def cells_of(path: Path) -> list[_Cell]:
    """The cells of a jupytext source (``.py``: its ``predict_answer`` metadata included) or of a built
    notebook (``.ipynb``: plain JSON, what the site's environment can read)."""
    if path.suffix == ".py":
        import jupytext

        nb = jupytext.read(path, fmt="py:percent")
        return [_Cell(cell_type=c.cell_type, source=c.source, metadata=dict(c.metadata)) for c in nb.cells]
    import json

    return [_Cell(c) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]

_CHECK = re.compile(r"""check\(\s*["'](\d\d\.[A-Za-z0-9_]+)["']""")
_DETAILS = re.compile(r"<details>\s*<summary>[^<]*</summary>(.*?)</details>", re.S)
_EXERCISE = re.compile(r"\*\*Exercise (\d+)([^*]*)\*\*")


@dataclass
class Predict:
    prompt: str
    answers: list[str]
    reveal: str
    setup: str = ""
    section: int = 0  # the main-line section ("## N.") it sits in


@dataclass
class Exercise:
    number: int
    label: str
    key: str
    text: str
    solution: str
    deep_dive: bool


@dataclass
class Notebook:
    stem: str
    title: str
    goals: list[str]
    prerequisites: list[str]
    proves: str
    honest_minutes: float
    predicts: list[Predict] = field(default_factory=list)
    exercises: list[Exercise] = field(default_factory=list)
    deep_dives: list[str] = field(default_factory=list)


def _bullets(text: str, heading: str) -> list[str]:
    m = re.search(rf"\*\*{heading}\*\*\s*\n((?:\s*- .*\n?)+)", text)
    return [b.strip()[2:].strip() for b in m.group(1).strip().splitlines()] if m else []


def _first_sentences(text: str, n: int = 2) -> str:
    """The first ``n`` sentences of a markdown cell's prose (headings and tables left out)."""
    text = re.sub(r"^\s*\|.*\|\s*$", "", re.sub(r"^#+ .*$", "", text, flags=re.M), flags=re.M)
    text = re.sub(r"^\W*What happened:?\W*", "", re.sub(r"\s+", " ", text).strip())
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z*$])", text)
    return " ".join(parts[:n])


def course_map() -> dict[str, str]:
    """``{"01": "q·k, QKᵀ", ...}``: the map's last column in notebook 00, and 00's own row."""
    rows = {}
    for cell in cells_of(_home("00_start_here")):
        for m in re.finditer(r"^\|\s*(\d\d)\s*\|[^|]*\|\s*(.*?)\s*\|\s*$", cell.source, flags=re.M):
            rows[m.group(1)] = m.group(2)
    rows.setdefault("00", "the whole answer in brief: spread and commitment seen at initialisation")
    return rows


def _home(stem: str) -> Path:
    """The source where the main environment has jupytext; else the built notebook."""
    try:
        import jupytext  # noqa: F401
    except ImportError:
        return NOTEBOOKS / f"{stem}.ipynb"
    return SOURCES / f"{stem}.py"


def read(source: Path, proves: dict[str, str], minutes: bool = True) -> Notebook:
    cells = cells_of(source)
    first = cells[0].source
    title = re.search(r"^# (?:\d\d — )?(.+)$", first, flags=re.M).group(1).strip()
    built = NOTEBOOKS / (source.stem + ".ipynb")
    row = _main_line(built) if minutes and built.exists() else {"honest_minutes": float("nan")}
    out = Notebook(source.stem, title, _bullets(first, "Learning goals"), _bullets(first, "Prerequisites"),
                   proves.get(source.stem[:2], ""), row["honest_minutes"])
    section = 0
    for i, cell in enumerate(cells):
        tags = cell.metadata.get("tags", [])
        deep = "deep-dive" in tags
        if cell.cell_type == "markdown" and not deep and (h := re.search(r"^## (\d+)\.", cell.source, flags=re.M)):
            section = int(h.group(1))
        if cell.cell_type == "markdown" and re.match(r"^## Deep dive:", cell.source.lstrip()):
            out.deep_dives.append(cell.source.splitlines()[0].removeprefix("## Deep dive:").strip())
        if cell.cell_type == "markdown" and not deep and ("predict_answer" in cell.metadata
                                                          or re.search(r"\*\*Predict:?\*\*", cell.source)):
            prompt = re.search(r"\*\*Predict:?\*\*:?\s*(.+?)(?:\n\n|\Z)", cell.source, flags=re.S)
            after = reveal_text(cells, i)
            before = cell.source[:prompt.start()] if prompt else ""
            setup = _one_line(re.sub(r"^#+ .*$", "", before, flags=re.M))  # what the prompt asks about
            out.predicts.append(Predict(re.sub(r"\s+", " ", prompt.group(1)).strip() if prompt else cell.source.strip(),
                                        list(cell.metadata.get("predict_answer", [])), after, setup, section))
        if cell.cell_type == "markdown":
            _exercise_marks(cell.source, deep, out.exercises)
        elif cell.cell_type == "code" and (m := _CHECK.search(cell.source)):
            last = out.exercises[-1] if out.exercises else None
            if last is not None and last.key == "" and not last.solution:
                last.key = m.group(1)  # the check cell right after its question
            else:  # a "Try it" without an Exercise heading: the question is the cell above
                text = re.sub(r"^#+ .*$", "", cells[i - 1].source if i else "", flags=re.M)
                out.exercises.append(Exercise(0, "", m.group(1), _DETAILS.sub("", text).strip(), "", deep))
    return out


_WHAT_HAPPENED = re.compile(r"\*\*What happened:?\*\*:?\s*")


def reveal_text(cells: list[_Cell], i: int) -> str:
    """The notebook's own answer to the Predict in ``cells[i]``: the main-line markdown after the code
    cell that runs it, up to the next heading or code cell, whole (every paragraph and bullet). When it
    has a "**What happened:**", the text starts there (a figure's legend before it is left out)."""
    j = next((k for k in range(i + 1, len(cells)) if cells[k].cell_type == "code"), len(cells))
    parts = []
    for c in cells[j + 1:]:
        if c.cell_type != "markdown" or "deep-dive" in c.metadata.get("tags", []):
            break
        heading = re.search(r"^#+ ", c.source, flags=re.M)
        parts.append(c.source[:heading.start()] if heading else c.source)
        if heading:
            break
    text = "\n\n".join(x.strip() for x in parts if x.strip())
    m = _WHAT_HAPPENED.search(text)
    return text[m.end():] if m else text


def _blocks(text: str) -> list[str]:
    """Markdown prose as blocks, each on one line: a paragraph, or one bullet of a list."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        if para.lstrip().startswith("|"):  # a table keeps its rows
            out.append("\n".join(line.strip() for line in para.strip().splitlines()))
            continue
        items = re.split(r"\n(?=\s*[-*] )", para)
        out += [_one_line(x) for x in items if x.strip()]
    return out


#: The option a Predict's prompt offers, where the notebook's recorded answer is worded otherwise:
#: ``{(notebook, k): option}`` (k counts the notebook's Predicts from 1). Each option must be a word of
#: the prompt (tests/test_teaching.py), so the key names the choice the students were offered.
OFFERED = {("05", 3): "before $d_k = 10$", ("06", 1): "grow", ("08", 1): "below",
           ("08", 2): r"grow like $\sqrt{d_k}$", ("09", 2): "8×", ("03", 2): "about 32 times"}


def answer_line(stem: str, k: int, p: Predict) -> str:
    """A Predict's answer as the key gives it: the offered option first when its wording differs."""
    first = p.answers[0] if p.answers else "(see what happened)"
    option = OFFERED.get((stem[:2], k))
    return f"{option} (the notebook's recorded answer: {first})" if option else first


def _reveal_lines(text: str, indent: str = "   ") -> list[str]:
    """``- *What happened:* ...`` with the notebook's whole answer, one block a line under it."""
    blocks = _blocks(text) or ["(see the notebook)"]
    lines = [f"{indent}- *What happened:* {blocks[0]}"]
    for b in blocks[1:]:
        lines += ["", *(f"{indent}  {x}" for x in b.splitlines())]
    return lines


def _exercise_marks(source: str, deep: bool, exercises: list[Exercise]) -> None:
    """Exercise headings (``**Exercise 4 (conceptual).**``) and folded solutions of one markdown cell, in
    order: a solution belongs to the last exercise that has none; a heading starts a new exercise (its key
    comes from the next ``check()`` cell; a conceptual exercise may have none)."""
    marks = sorted([(m.start(), "solution", m) for m in _DETAILS.finditer(source)]
                   + [(m.start(), "exercise", m) for m in _EXERCISE.finditer(source)], key=lambda t: t[0])
    for _, kind, m in marks:
        if kind == "solution":
            open_ = [e for e in exercises if not e.solution]
            if open_:
                open_[-1].solution = m.group(1).strip()
        else:
            rest = source[m.end():]
            stop = min([x.start() for x in (_DETAILS.search(rest), _EXERCISE.search(rest)) if x] + [len(rest)])
            exercises.append(Exercise(int(m.group(1)), m.group(2).strip(" ."), "", rest[:stop].strip(" .\n"),
                                      "", deep))


def course(minutes: bool = True) -> list[Notebook]:
    """Every notebook, from its source (with ``minutes``: the main-line model, for the guide)."""
    proves = course_map()
    stems = sorted(p.stem for p in SOURCES.glob("[0-9][0-9]_*.py"))
    return [read(_home(stem), proves, minutes) for stem in stems]


# -- the answers from the bank ---------------------------------------------------------------------

def _number(x) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:.6g}"


def _array_text(a) -> str:
    """``64``, ``(0.5, 2)`` or ``[[0.25, -0.25], [-0.25, 0.25]]``: as a learner would type it."""
    import numpy as np

    a = np.asarray(a, dtype=float)
    if a.ndim == 0 or a.size == 1 and a.ndim <= 1:
        return _number(a.ravel()[0])
    if a.ndim == 1:
        return "(" + ", ".join(_number(v) for v in a) + ")"
    return "[" + ", ".join(_array_text(row) if row.ndim > 1 else "[" + ", ".join(_number(v) for v in row) + "]"
                           for row in a) + "]"


def answer_of(key: str) -> str:
    """The right answer of exercise ``key`` as text, from the bank's own checker."""
    from sdpa_helpers.exercises import get, page_spec

    c = get(key).checker
    kind = getattr(c, "kind", "function")
    if kind in ("number", "tuple"):
        return _array_text(c.expected)
    if kind == "choice":
        return f'"{c.correct}"'
    if kind == "choices":
        table = page_spec(key)["table"]
        right = [k for k, (ok, _) in table.items() if ok]
        return " or ".join("(" + ", ".join(f'"{w}"' for w in k.split("|")) + ")" for k in right)
    return "a function: see the solution"


def slips_of(key: str) -> list[tuple[str, str]]:
    """``[(wrong answer, the misconception behind it)]``, each named slip of the bank."""
    from sdpa_helpers.exercises import get

    c = get(key).checker
    kind = getattr(c, "kind", "function")
    out = []
    for s in getattr(c, "slips", ()):
        if kind in ("number", "tuple"):
            out.append((_array_text(s.value), s.means))
        elif isinstance(s, tuple) and len(s) == 2:
            name = getattr(s[0], "__name__", "")
            out.append((f"`{name}`" if name.isidentifier() else "(a wrong function)", s[1]))
    if kind == "choice":
        out += [(f'"{k}"', v) for k, v in c.options.items() if k != c.correct]
    return out


# -- TEACHING.md -------------------------------------------------------------------------------------

#: Lesson plans: (when, [(notebook, [sections])], what). Each (notebook, section) is looked up in the
#: sources and printed with its title; a section that no longer exists stops the guide's build.
PLANS = {
    "A 50-minute class": [
        ("before class", [("00", [1, 2])], "assign notebook 00's main line *up to its Predict* (§1, §2 and the "
                                           "opening of §3, where it is asked; Binder or the site): each student "
                                           "writes a guess to 00's Predict (below) on worksheet 00 and brings it. "
                                           "They stop at the Predict: the next cell draws the answer",
         [("minutes", "00")]),
        ("10 min", [("00", [1, 3])], "the toy: logits ×8 make a hard lookup; then collect the guesses students "
                                     "wrote at home for 00's Predict (show of hands), and only then show §3's "
                                     "figure",
         [("define", "*J*, the softmax's Jacobian (06 §2): {0}, how far weight $i$ moves per unit nudge of logit $j$; "
                     "${1}$. Its size {2} (00 §3).",
           [("06", r"\$J_\{ij\} = \\partial p_i/\\partial z_j\$"),
            ("06", r"J = \\mathrm\{diag\}\(p\) - p\\,p\^\\top"),
            ("00", r"\$\\\|J\\\|\$ is the root of the sum of its\s+squared entries")]),
          ("figure", "00"), ("caveat",)]),
        ("15 min", [("02", [2, 3, 4, 5])], "on the board, in the notebook's order: Var(X + Y) for two terms (§2); "
                                           "independence, E[XY] = E[X]E[Y] (§3); then 02's Predict, which opens §4 "
                                           "(guess in pairs on worksheet 02); the product's variance (§4); then "
                                           "d_k terms give Var(q·k) = d_k (§5)",
         [("board", "02", [1, 2, 3, 4, 5])]),
        ("10 min", [("04", [1, 2])], "why the square root and not d_k: Var(cX) = c²Var(X), 04's first Predict, "
                                     "and the three-row table", [("table", "04", 2)]),
        ("10 min", [("05", [1, 2, 6])], "Karpathy's five logits times 1, 8 and 64 (05 §2, its Predict first), then "
                                        "the explorer on the projector: scaled against unscaled weights as d_k "
                                        "grows", [("example", "05", 2)]),
        ("5 min", [], "the three sentences (above): students write theirs now and compare. Sentences 1 and 2 were "
                      "taught today; sentence 3 (speed) is only previewed: state it with its condition, as what "
                      "notebook 09 measures. Homework: below"),
    ],
    "A 90-minute class": [
        ("before class", [("00", []), ("01", [])], "reading, with 01's main-line exercises"),
        ("20 min", [("02", [1, 2, 3, 4, 5])], "derive Var(q·k) = d_k with the class, then its checks"),
        ("10 min", [("03", [1, 2])], "why the 2×2 experiment misleads (its Predict)"),
        ("15 min", [("04", [1, 2, 3])], "why the square root and not d_k"),
        ("20 min", [("05", [2, 5]), ("06", [2, 3, 4])], "saturation and the Jacobian, explorers on the projector"),
        ("15 min", [("09", [4])], "the survival curves: slower, not impossible; then the answer's 'Where it stops'"),
        ("10 min", [], "the three sentences again; homework: 07 and 08's main-line exercises"),
    ],
    "A two-week module": [
        ("week 1, class 1", [("00", []), ("01", [])], "in class; homework: 02, every main-line exercise"),
        ("week 1, class 2", [("02", []), ("03", [])], "02's derivation reviewed, 03 in class; homework: 04"),
        ("week 2, class 1", [("05", []), ("06", [])], "in class; homework: 07"),
        ("week 2, class 2", [("08", []), ("09", [])], "in class; homework: the three sentences, and one deep "
                                                      "dive of the student's choice"),
    ],
}

#: What a teacher should know before the first class (logistics no notebook says).
LOGISTICS = [
    "**Predicts in class.** The site and GitHub show every notebook already run, outputs included: ask each "
    "Predict before you show the cell's output, or the answer is on the screen.",
    "**Binder** needs a few minutes to start a session, longer when its servers are busy, and ends an idle "
    "one: start it before class, and keep `make lab` on your laptop or the site (no server) as a fallback.",
    "**Checking homework.** Every exercise with a key below checks itself: `check(\"NN.name\", answer)` "
    "prints ✅ or ❌ with the named slip (the same verdicts in the site's answer boxes), so students know "
    "whether they are right before they hand in. Exercises marked *conceptual* without a key are essays: "
    "grade them against the solution below.",
    "**Deep dives** (folded sections) can be skipped in class: every main line stands without them. A "
    "*main-line exercise* is one not marked (deep dive) below; each notebook has two or three.",
    "**Where the pages are.** `make site` builds the course into `build/site/` (open `index.html`; this guide is "
    "`teachers.html`, the talk `talk.html`, the worksheets `worksheets/`, each also as PDF). Until the repository "
    "is published, the README's site and Binder links are placeholders.",
]


#: How to grade the "explain why" part of a conceptual exercise (the choice itself checks itself).
RUBRIC = [
    "**The claim** (one mark): the right answer or choice, said in the student's own words.",
    "**The condition** (one mark): what it holds under, as the course states it: independent components "
    "with mean 0 and variance 1, at initialisation, the number of keys, the optimiser. Every sentence of the "
    "course's answer is conditional; a claim without its condition is half an answer.",
    "**The reason** (two marks): the step that forces it (a line of the derivation, such as "
    "$\\mathrm{Var}(cX) = c^2\\,\\mathrm{Var}(X)$, or the bound on $J$) and the notebook's measurement that "
    "shows it, with its spread over seeds when the result is random. One mark for the step alone.",
    "**No marks for a number with no reason.** If the student's choice is one of the named slips below, the "
    "slip's line says which misconception to discuss with them.",
]


def section_titles(stem: str) -> dict[int, str]:
    """``{2: "The variance of a sum of two", ...}``: the numbered sections of a notebook's main line."""
    out = {}
    for cell in cells_of(_home(stem)):
        for m in re.finditer(r"^## (\d+)\. (.+)$", cell.source, flags=re.M):
            out[int(m.group(1))] = m.group(2).strip()
    return out


def _where(refs, stems: dict[str, str]) -> str:
    parts = []
    for number, sections in refs:
        titles = section_titles(stems[number])
        missing = [k for k in sections if k not in titles]
        if missing:
            raise ValueError(f"a lesson plan names section(s) {missing} of notebook {number}, "
                             f"which has {sorted(titles)}")
        parts.append(f"{number}" + ("" if not sections else " " + ", ".join(f"§{k} *{titles[k]}*" for k in sections)))
    return "; ".join(parts)


def _section_cells(stem: str, number: int, built: bool = False) -> list[_Cell]:
    """The main-line cells of section ``number`` of a notebook (its source, or with ``built`` the built
    notebook with its outputs): from its ``## N.`` heading to the next ``##`` heading."""
    cells = cells_of(NOTEBOOKS / f"{stem}.ipynb" if built else _home(stem))
    out, inside = [], False
    for c in cells:
        if "deep-dive" in c.metadata.get("tags", []):
            continue
        heading = re.search(r"^## (\d+)?", c.source, flags=re.M) if c.cell_type == "markdown" else None
        if heading:
            inside = heading.group(1) == str(number)
        if inside:
            out.append(c)
    if not out:
        raise ValueError(f"notebook {stem} has no section {number}")
    return out


def section_example(stem: str, number: int) -> tuple[str, str]:
    """The code of section ``number``'s first main-line cell that prints, and what it printed (the built
    notebook's stored output: nothing retyped)."""
    for c in _section_cells(stem, number, built=True):
        if c.cell_type != "code":
            continue
        text = "".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o.get("output_type") == "stream")
        if text.strip():
            return c.source.rstrip(), text.rstrip()
    raise ValueError(f"section {number} of notebook {stem} has no cell that prints")


def section_table(stem: str, number: int) -> list[str]:
    """The first markdown table of section ``number``'s main line, as its lines."""
    for c in _section_cells(stem, number):
        if c.cell_type != "markdown":
            continue
        rows = re.findall(r"^\s*(\|.*\|)\s*$", c.source, flags=re.M)
        if rows:
            return rows
    raise ValueError(f"section {number} of notebook {stem} has no table")


def quoted(stem: str, pattern: str) -> str:
    """The text of a notebook's main line that ``pattern`` matches (one line, as written there)."""
    text = "\n".join(c.source for c in cells_of(_home(stem))
                     if c.cell_type == "markdown" and "deep-dive" not in c.metadata.get("tags", []))
    m = re.search(pattern, text) or re.search(pattern, "\n".join(c.source for c in cells_of(_home(stem))))
    if not m:
        raise ValueError(f"notebook {stem} no longer says {pattern!r}: update teaching.PLANS")
    return _one_line(m.group(0))


def paragraph(stem: str, start: str) -> str:
    """The main-line paragraph of a notebook that begins with ``start`` (one line, as written there)."""
    for c in cells_of(_home(stem)):
        if c.cell_type != "markdown" or "deep-dive" in c.metadata.get("tags", []):
            continue
        for para in re.split(r"\n\s*\n", c.source):
            if para.strip().startswith(start):
                return _one_line(para)
    raise ValueError(f"notebook {stem} has no paragraph beginning {start!r}: update teaching.PLANS")


def plan_material(extra: tuple, stems: dict[str, str]) -> list[str]:
    """What a lesson plan shows inline (markdown lines): a section's printing cell and its output, a
    section's table, or a definition quoted from the notebooks."""
    kind = extra[0]
    if kind == "example":
        _, number, section = extra
        code, printed = section_example(stems[number], section)
        return [f"*In {number} §{section} (run it, or copy it to the board):*", "", "```python", code, "```", "",
                "prints", "", "```", printed, "```"]
    if kind == "table":
        _, number, section = extra
        return [f"*The table of {number} §{section}:*", "", *section_table(stems[number], section)]
    if kind == "minutes":
        _, number = extra
        m = part_minutes(stems[number], None, r"\*\*Predict", include_stop=True)
        return [f"*Pre-reading load:* about {m:.0f} honest minutes (the main-line model of `authoring/build.py` "
                f"on {number} up to and including its Predict)."]
    if kind == "caveat":
        return ["*Sentence 2, under its conditions (00 §4; say it when you show the figure, so no one over-claims "
                "vanishing gradients at $d_k$ = 64):*", "",
                "- " + paragraph(stems["00"], "Models often use"), "",
                "  ```", *("  " + x for x in section_example(stems["00"], 4)[1].splitlines()), "  ```", "",
                "- " + paragraph(stems["00"], "Part 2, **commitment**"),
                "- " + paragraph(stems["00"], "So the typical unscaled query passes less gradient to its logits"),
                "- Near ties (00 §3): "
                + quoted(stems["00"], r"(?s)At \$d_k = 1024\$ the shaded band.*?\$\\\|J\\\|\$ above\s+\S+\.")]
    if kind == "board":
        _, number, sections = extra
        lines = [f"*The board, in {number}'s order* (its main line's displayed equations):", ""]
        for k in sections:
            for c in _section_cells(stems[number], k):
                if c.cell_type == "markdown":
                    lines += [f"- §{k}: $${_one_line(m)}$$"
                              for m in re.findall(r"\$\$(.+?)\$\$", c.source, flags=re.S)]
        return lines
    if kind == "figure":
        _, number = extra
        alt = first_figure(stems[number])[1]
        return [f"*What {number}'s figure shows* (its alt text, to describe it aloud): {alt}"]
    if kind == "define":
        _, template, quotes = extra
        return [template.format(*(quoted(stems[n], p) for n, p in quotes))]
    raise ValueError(f"unknown lesson-plan material {kind!r}")


def part_minutes(stem: str, start: str | None, stop: str, include_stop: bool = False) -> float:
    """Honest minutes (``build.honest_minutes``, main line only) of the built notebook's cells from the
    first whose source matches ``start`` (None: the first cell) up to the next matching ``stop``."""
    import json
    import tempfile

    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    src = ["".join(c["source"]) for c in nb["cells"]]
    a = next(i for i, t in enumerate(src) if re.search(start, t, flags=re.M)) if start else 0
    b = next(i for i, t in enumerate(src) if i > a and re.search(stop, t, flags=re.M))
    nb["cells"] = nb["cells"][a:b + include_stop]
    with tempfile.TemporaryDirectory() as folder:
        part = Path(folder) / f"{stem}.ipynb"
        part.write_text(json.dumps(nb), encoding="utf-8")
        return _main_line(part)["honest_minutes"]


def _plan_lines(steps, stems: dict[str, str]) -> list[str]:
    lines = []
    for when, refs, what, *extras in steps:
        where = _where(refs, stems)
        lines.append(f"- **{when}**" + (f" ({where})" if where else "") + f": {what}")
        for extra in (extras[0] if extras else []):
            material = "\n".join(plan_material(extra, stems)).splitlines()
            lines += ["", *("  " + x if x.strip() else "" for x in material), ""]
    return lines + [""]


#: The 50-minute class's notebooks, and its homework's (their main-line slips are the misconceptions to watch).
CLASS_NOTEBOOKS = ("00", "02", "04", "05", "06")


def talk_outline() -> list[str]:
    """The talk's slide titles, read from the talk itself."""
    talk = talk_html(explorer="<figure class=explorer></figure>")
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<h[12]>(.*?)</h[12]>", talk)]


def publishing_addresses() -> str:
    """CONTRIBUTING.md's sentence on where the site and Binder live once the repository is published."""
    text = _one_line((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    m = re.search(r"every push to `main` publishes the site at `[^`]+`, and Binder opens it at `[^`]+`", text)
    if not m:
        raise ValueError("CONTRIBUTING.md's Publishing paragraph no longer gives the site and Binder addresses")
    return m.group(0)


def class_pack(notebooks: list[Notebook], stems: dict[str, str]) -> list[str]:
    """The first pages of the guide: everything a teacher needs for the 50-minute class."""
    by = {n.stem[:2]: n for n in notebooks}
    steps = PLANS["A 50-minute class"]
    lines = ["## The 50-minute class pack", "",
             "Everything the 50-minute class needs, in the order you need it: the plan, its Predicts with their "
             "answers, the misconceptions to watch, the homework and the logistics. The rest of the guide is the "
             "reference and the full key.", "", "### A 50-minute class", ""]
    lines += _plan_lines(steps, stems)

    lines += ["### The Predicts, in the order asked", "",
              "Ask each before its cell's output is on the screen; the other options of the prompt are the wrong "
              "guesses.", ""]
    seen, k_out = set(), 0
    for when, refs, *_ in steps:
        for number, sections in refs:
            for k, p in enumerate(by[number].predicts, 1):
                if p.section in sections and (number, k) not in seen:
                    seen.add((number, k))
                    k_out += 1
                    lines += [f"{k_out}. **{number} §{p.section}** ({when}): {_one_line(p.prompt)}",
                              f"   - *Answer:* {answer_line(number, k, p)}", *_reveal_lines(p.reveal)]
    lines.append("")

    lines += ["### Misconceptions to watch", "",
              "The named slips of the main-line exercises of " + ", ".join(CLASS_NOTEBOOKS) + " (the class and its "
              "homework): each wrong answer, what it means, and the exercise that catches it.", ""]
    for number in CLASS_NOTEBOOKS:
        for e in by[number].exercises:
            if e.deep_dive or not e.key:
                continue
            for wrong, means in slips_of(e.key):
                lines.append(f"- `{e.key}` answers {wrong}: {_one_line(means)}")
    lines += ["- *\"The scale is there to stop overflow.\"* No exercise names this slip. The course answers it in "
              "05 §1: \"" + quoted(stems["05"], r"Adding the same number to every logit[^.]*\.") + "\" Subtracting the "
              "largest logit prevents overflow without changing a weight; the scale changes the gaps (05 §2), "
              "and the gaps are what saturate the softmax.", ""]

    m04 = part_minutes(stems["04"], r"^## Exercises", r"^## (Deep dive|Next)")
    m06 = by["06"].honest_minutes
    keys04 = ", ".join(f"`{e.key}`" if e.key else f"Exercise {e.number}" for e in by["04"].exercises if not e.deep_dive)
    keys06 = ", ".join(f"`{e.key}`" if e.key else f"Exercise {e.number}" for e in by["06"].exercises if not e.deep_dive)
    lines += ["### Homework", "",
              f"- 04's main-line exercises ({keys04}): about {m04:.0f} honest minutes.",
              f"- 06's main line with its exercises ({keys06}): about {m06:.0f} honest minutes. The class shows "
              "none of 06: it is read at home, and its exercises lean on its §5 (the near ties), so point students "
              "to §5 when you set it.",
              f"- Together about {m04 + m06:.0f} minutes, by the honest-minutes model of `authoring/build.py` "
              "(calibrated on learners). Answers with a key check themselves with `check()`; grade the reasons of "
              "the *conceptual* ones with the rubric below.", ""]

    sheet = {nb: (len(by[nb].predicts), sum(not e.deep_dive for e in by[nb].exercises))
             for nb in ("00", "02", "04", "05")}
    lines += ["### Logistics", "",
              "- **How students open it.** Once the repository is published (CONTRIBUTING.md, *Publishing*): "
              + publishing_addresses() + ", with `<owner>/<name>` the repository's GitHub owner and name (the "
              "README's two links hold a placeholder until then). Before that: `make site` and "
              "`build/site/index.html`, or `make lab` on a laptop.",
              "- **A worksheet** is one printable sheet a notebook (a page or two): its Predicts (each with the text "
              "above the prompt) and its main-line exercises, each with a box to write in; no answers. For this class: "
              + "; ".join(f"worksheet {nb}, {a} Predict{'s' * (a != 1)} and {b} exercise{'s' * (b != 1)}"
                          for nb, (a, b) in sheet.items()) + ". `make site` writes them to "
              "`build/site/worksheets/` (HTML, and PDF where the build machine has Chromium to print them).",
              "- **The 20-minute talk** (`build/site/talk.html`, reveal.js, opens from `file://`; <kbd>S</kbd> for "
              "speaker notes) is notebook 00's answer as slides: " + "; ".join(talk_outline()) + ". It can stand "
              "in for the 00 block and the wrap-up (15 minutes of the plan) if you take the other 5 minutes from "
              "05's block (show the explorer, skip the Karpathy example); the plan above does not need it.",
              "- **Part 3, speed, is only previewed** in this class: it rests on notebook 09's training runs, which "
              "the class does not show. State sentence 3 with its condition and point to 09.", ""]
    return lines


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _solution_lines(text: str, indent: str = "    ") -> list[str]:
    """A solution as Markdown under a list item: prose on one line each paragraph, fenced code blocks
    kept line for line (indented under the item, so the code stays runnable as printed)."""
    out: list[str] = []
    for k, part in enumerate(re.split(r"(```[a-z]*\n.*?\n\s*```)", text, flags=re.S)):
        if k % 2:  # a fenced block
            body = part.strip().splitlines()
            lang, code, end = body[0], body[1:-1], body[-1]
            out += ["", indent + lang.strip()] + [indent + line.rstrip() for line in code] + [indent + end.strip(), ""]
        elif part.strip():
            out.append(indent + _one_line(part) if out else _one_line(part))
    return out


def _md_cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def guide(notebooks: list[Notebook] | None = None) -> str:
    from sdpa_helpers.exercises import get

    notebooks = notebooks if notebooks is not None else course()
    total = sum(round(n.honest_minutes) for n in notebooks)
    lines = [
        "# For teachers: a guide to *Why √d_k?* and its answer key",
        "",
        "<!-- Generated by authoring/teaching.py from the notebooks and the exercise bank: do not edit by hand. -->",
        "",
        "This guide holds the course's answers. The self-check pages of the site carry their answers in the",
        "page (a static page cannot hide them), and the notebooks fold their solutions; this guide is the key.",
        "Worksheets (one printable sheet a notebook, a page or two, no answers) and a 20-minute talk are built",
        "with the site (`make site` writes `teachers.html`, `worksheets/` and `talk.html` into `build/site/`).",
        "",
        *class_pack(notebooks, {n.stem[:2]: n.stem for n in notebooks}),
        "## How to run it",
        "",
        "- **The site** (nothing to install; sliders and answer boxes work, code does not run): `make site`, then",
        "  open `build/site/index.html`, or the published Pages address.",
        "- **Binder** (JupyterLab in the browser, nothing to install; the session is temporary, so students",
        "  download their edited notebooks before closing it): the README's badge.",
        "- **Locally**: `make lab` (creates `.venv`, opens JupyterLab at notebook 00); `make test` checks it all.",
        "- **Printing**: the worksheets print one notebook to a page or two; the notebooks read on GitHub as",
        "  still figures.",
        "",
        "## Time",
        "",
        f"Main line with exercises, by the honest-minutes model of `authoring/build.py` (calibrated on learners):"
        f" about {total:.0f} minutes for the course.",
        "",
        "| notebook | honest minutes | what it proves or measures of the answer |",
        "|---|---:|---|",
    ]
    for n in notebooks:
        lines.append(f"| {n.stem[:2]} {n.title} | {n.honest_minutes:.0f} | {_md_cell(n.proves)} |")
    if total != total:  # NaN: no built notebooks
        total = 0
    sentences, stops = answer_parts()
    lines += ["", "## The answer the course arrives at", "",
              "Students should end able to say it in three sentences, each under its condition:", ""]
    lines += [f"{k}. {s}" for k, s in enumerate(sentences, 1)] + ["", "Where it stops:", ""]
    lines += [f"- {s}" for s in stops] + [""]
    lines += ["## Before the first class", ""] + [f"- {x}" for x in LOGISTICS] + [""]
    lines += ["## Grading the \"explain why\" exercises", "",
              "The exercises marked *conceptual* ask for a choice and a reason; the choice checks itself, the "
              "reason is graded on four marks:", ""] + [f"- {x}" for x in RUBRIC] + ["", "## Lesson plans", ""]
    stems = {n.stem[:2]: n.stem for n in notebooks}
    lines += ["The 50-minute class is in the class pack at the top of this guide.", ""]
    for name, steps in PLANS.items():
        if name == "A 50-minute class":
            continue
        lines += [f"### {name}", ""] + _plan_lines(steps, stems)
    for n in notebooks:
        lines += [f"## {n.stem[:2]} — {n.title}", "",
                  f"*Honest minutes:* {n.honest_minutes:.0f}. *Proves or measures:* {_one_line(n.proves) or '—'}.", ""]
        if n.goals:
            lines += ["**Learning goals**", ""] + [f"- {g}" for g in n.goals] + [""]
        if n.stem.startswith("00"):
            code, printed = opening_example(n.stem)
            if code:
                lines += ["**The opening example** (section 1: the toy to put on the board)", "", "```python",
                          code, "```", "", "prints", "", "```", printed, "```", ""]
        if n.prerequisites:
            lines += ["**Prerequisites**", ""] + [f"- {p}" for p in n.prerequisites] + [""]
        if n.predicts:
            lines += ["**Predicts** (ask before the cell runs; the options the prompt offers besides the answer are "
                      "the wrong guesses)", ""]
            for k, p in enumerate(n.predicts, 1):
                lines += [f"{k}. {_one_line(p.prompt)}"]
                if p.setup:
                    lines.append(f"   - *Setup (the text above the prompt):* {p.setup}")
                lines += [f"   - *Answer:* {answer_line(n.stem, k, p)}"]
                lines += _reveal_lines(p.reveal)
            lines.append("")
        if n.exercises:
            lines += ["**Exercises and their key**", ""]
            for e in n.exercises:
                where = " (deep dive)" if e.deep_dive else ""
                name = f"Exercise {e.number}{(' ' + e.label) if e.label else ''}" if e.number else "Try it"
                if not e.key:
                    sol = _solution_lines(e.solution)
                    lines += [f"- **{name}{where}** (no self-check: an essay): {_one_line(e.text)}",
                              f"  - *Solution:* {sol[0] if sol else ''}", *sol[1:],
                              "  - *Grade it* with the rubric (claim, condition, reason) above."]
                    continue
                ex = get(e.key)
                lines += [f"- **{name}{where}** `{e.key}`: {_one_line(e.text) or _one_line(ex.question)}",
                          f"  - *Answer:* {answer_of(e.key)}",
                          f"  - *Hint given to students:* {_one_line(ex.hint)}"]
                for wrong, means in slips_of(e.key):
                    lines.append(f"  - *Slip* {wrong}: {_one_line(means)}")
                if e.solution:
                    sol = _solution_lines(e.solution)
                    lines += [f"  - *Solution:* {sol[0] if sol else ''}", *sol[1:]]
                if "conceptual" in e.label:
                    lines.append("  - *Grade the reason* with the rubric (claim, condition, reason) above.")
            lines.append("")
        if n.deep_dives:
            lines += ["**Deep dives** (optional): " + "; ".join(_one_line(d) for d in n.deep_dives), ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in lines)).rstrip() + "\n"


# -- the site's pages ---------------------------------------------------------------------------------

def worksheet_html(n: Notebook, mathjax: str) -> str:
    """One printable page: the notebook's Predicts and exercises with space to write; no answers."""
    esc = html.escape
    items = [f"<li><p>{_inline(p.setup)}</p><p><strong>Predict.</strong> {_inline(_one_line(p.prompt))}</p>"
             f"<div class=space></div></li>" if p.setup else
             f"<li><p><strong>Predict.</strong> {_inline(_one_line(p.prompt))}</p><div class=space></div></li>"
             for p in n.predicts]
    items += [f"<li><p><strong>Exercise {e.number}{(' ' + esc(e.label)) if e.label else ''}.</strong> "
              f"{_inline(_one_line(e.text))}</p><div class=space></div></li>"
              for e in n.exercises if not e.deep_dive]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Worksheet {esc(n.stem[:2])}: {esc(n.title)}</title>
<style>
body {{ font: 12pt/1.45 "DejaVu Serif", Georgia, serif; max-width: 44em; margin: 2em auto; color: #111; }}
h1 {{ font-size: 1.35em; }} .name {{ margin: 1em 0 1.5em; }}
.space {{ border: 1px solid #999; height: 7em; margin: .3em 0 1em; }}
li {{ break-inside: avoid; }} @page {{ margin: 18mm; }} @media print {{ body {{ margin: 0; }} }}
</style>
<script>MathJax = {{ tex: {{ inlineMath: [["$", "$"]] }}, options: {{ enableMenu: false }} }};</script>
<script defer src="{mathjax}"></script>
</head><body><main>
<h1>Worksheet {esc(n.stem[:2])}: {esc(n.title)}</h1>
<p class=name>Name: ______________________ &nbsp; Date: ____________</p>
<p>Write each prediction <em>before</em> you run the cell it asks about.</p>
<ol>
{chr(10).join(items)}
</ol>
</main></body></html>
"""


def site_pages(out: Path, mathjax_rel: str = "../_static/mathjax/tex-svg.js") -> list[Path]:
    """Worksheets under ``out/worksheets/``; returns the files written."""
    notebooks = course(minutes=False)
    folder = out / "worksheets"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for n in notebooks:
        path = folder / f"{n.stem}.html"
        path.write_text(worksheet_html(n, mathjax_rel), encoding="utf-8")
        written.append(path)
    return written


def pdf(html_file: Path, chromium: str | None = None) -> Path | None:
    """``html_file`` printed to PDF beside it by headless Chromium (offline, from ``file://``); None
    without a Chromium. The PDF's creation date is fixed by Chromium's print, not by this build."""
    import shutil
    import subprocess

    chromium = chromium or os.environ.get("SDPA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return None
    out = html_file.with_suffix(".pdf")
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--no-pdf-header-footer", "--virtual-time-budget=15000", "--run-all-compositor-stages-before-draw",
                    f"--print-to-pdf={out}", html_file.resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)
    if not out.exists() or out.read_bytes()[:5] != b"%PDF-":
        raise RuntimeError(f"Chromium printed no PDF for {html_file}")
    return out


# -- the 20-minute talk ---------------------------------------------------------------------------------

def _sections(stem: str) -> dict[str, str]:
    """``{"1. What attention is for": "...the section's main-line prose..."}`` of a notebook source."""
    out: dict[str, str] = {}
    current = ""
    for cell in cells_of(_home(stem)):
        if cell.cell_type != "markdown" or "deep-dive" in cell.metadata.get("tags", []):
            continue
        m = re.search(r"^## (.+)$", cell.source, flags=re.M)
        if m:
            current = m.group(1).strip()
        out[current] = (out.get(current, "") + "\n\n" + re.sub(r"^#+ .*$", "", cell.source, flags=re.M)).strip()
    return out


def answer_parts() -> tuple[list[str], list[str]]:
    """The answer's three sentences and its "Where it stops" list, from their one home."""
    text = (ROOT / "authoring" / "answer.md").read_text(encoding="utf-8")
    sentences = re.findall(r"^\d\. (.+?)(?=^\d\. |^\S|\Z)", text, flags=re.M | re.S)
    stops = re.findall(r"^- (.+?)(?=^- |^\S|\Z)", text, flags=re.M | re.S)
    return [_one_line(s) for s in sentences], [_one_line(s) for s in stops]


def _inline(text: str) -> str:
    """Markdown's **bold**, *italic* and `code` as HTML, the rest escaped (math stays for MathJax)."""
    t = html.escape(text, quote=False)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?!\w)", r"<em>\1</em>", t)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", t)


def opening_example(stem: str = "00_start_here") -> tuple[str, str]:
    """The code and printed output of a built notebook's first main-line cell after the setup that prints."""
    import json

    cells = [c for c in json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code" and "deep-dive" not in c.get("metadata", {}).get("tags", [])]
    for c in cells[1:]:
        text = "".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o.get("output_type") == "stream")
        if text.strip():
            return "".join(c["source"]), text.rstrip()
    return "", ""


def first_figure(stem: str = "00_start_here") -> tuple[bytes, str]:
    """The PNG and alt text of a built notebook's first main-line figure (00's: the chain at initialisation)."""
    import base64
    import json

    for c in json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]:
        if c["cell_type"] != "code" or "deep-dive" in c.get("metadata", {}).get("tags", []):
            continue
        for o in c.get("outputs", []):
            if "image/png" in o.get("data", {}):
                return base64.b64decode(o["data"]["image/png"]), c["metadata"].get("alt", "")
    raise ValueError(f"{stem} has no main-line figure")


def talk_html(explorer: str = "", static: str = "_static/", figure: str = "img/talk-figure.png",
              figure_alt: str = "") -> str:
    """Notebook 00's answer as a reveal.js deck (offline: reveal.js and MathJax are copied into the site),
    with 00's figure, one live explorer (the site's frames: ``explorer`` is its figure HTML) and speaker
    notes from 00's text. Opens from ``file://``."""
    sentences, stops = answer_parts()
    sec = _sections("00_start_here")
    note = {k.split(". ", 1)[-1]: _first_sentences(v, 4) for k, v in sec.items()}
    def notes(*names: str) -> str:
        return "<aside class=notes>" + " ".join(_inline(note.get(n, "")) for n in names) + "</aside>"
    heads = ["Spread", "Commitment", "Speed"]
    bodies = [re.sub(r"^\*\*[^*]+\*\*\s*", "", s) for s in sentences]  # the bold "Spread." goes to the heading
    answer_slides = "\n".join(
        f"<section><h2>{i}. {h}</h2><p>{_inline(b)}</p>"
        f"<aside class=notes>Part {i} of the answer. Ask the room for the condition before the claim.</aside></section>"
        for i, (h, b) in enumerate(zip(heads, bodies), 1))
    stop_items = "".join(f"<li>{_inline(s)}</li>" for s in stops)
    live = (f"<section><h2>Drag d<sub>k</sub> yourself</h2>{explorer}"
            "<aside class=notes>Move the slider with the arrow keys: unscaled, the largest weight climbs to 1 and the "
            "Jacobian collapses; scaled, nothing moves. Tab to the slider first.</aside></section>") if explorer else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Why √d_k? — a 20-minute talk</title>
<link rel="stylesheet" href="{static}reveal/reveal.css">
<link rel="stylesheet" href="{static}reveal/theme/white.css">
<link rel="stylesheet" href="{static}site.css">
<script src="{static}explorer.js"></script>
<style>.reveal .slides section {{ text-align: left; }} .reveal h1, .reveal h2 {{ text-transform: none; }}
.reveal figure.explorer img {{ max-height: 52vh; width: auto; }} .reveal p, .reveal li {{ font-size: .8em; }}
.reveal mjx-container[display="true"] {{ overflow: visible; }}</style>
</head><body>
<div class="reveal"><div class="slides">
<section><h1>Why √d<sub>k</sub>?</h1>
<p>$$\\mathrm{{Attention}}(Q, K, V) = \\mathrm{{softmax}}\\!\\left(\\frac{{QK^\\top}}{{\\sqrt{{d_k}}}}\\right)V$$</p>
<p>Why divide by √d<sub>k</sub>? Three parts: spread, commitment, speed.</p>{notes("What attention is for")}</section>
<section><h2>What the paper says</h2>
<blockquote>We suspect that for large values of d<sub>k</sub>, the dot products grow large in
magnitude, pushing the softmax function into regions where it has extremely small gradients.</blockquote>
<p>Footnote 4: assume the components of q and k are independent random variables with mean 0 and variance 1.</p>
{notes("What the paper says")}</section>
<section><h2>Predict</h2><p>{_inline(read(_home("00_start_here"), {}, False).predicts[0].prompt)}</p>
<aside class=notes>Take a show of hands for each option before the next slide.</aside></section>
<section><h2>At initialisation</h2>
<img src="{figure}" style="max-height:60vh" alt="{html.escape(figure_alt)}">
{notes("The chain at initialisation")}</section>
{answer_slides}
{live}
<section><h2>Where it stops</h2><ul>{stop_items}</ul>
<aside class=notes>Each line points to the notebook that measures it.</aside></section>
<section><h2>Now you</h2><p>Say the answer in three sentences. Then open notebook 00 and check.</p></section>
</div></div>
<script src="{static}reveal/reveal.js"></script>
<script src="{static}reveal/plugin/notes/notes.js"></script>
<script>
MathJax = {{ tex: {{ inlineMath: [["$", "$"]] }}, loader: {{ paths: {{ mathjax: "{static}mathjax" }} }},
            options: {{ menuOptions: {{ settings: {{ inTabOrder: false }} }} }} }};
Reveal.initialize({{ hash: true, plugins: [RevealNotes] }});
</script>
<script defer src="{static}mathjax/tex-svg.js"></script>
</body></html>
"""


def guide_page(render_markdown) -> str:
    """The "For teachers" page of the site: the guide, with the worksheets and the talk linked."""
    body = render_markdown(GUIDE.read_text(encoding="utf-8"))  # kept current by tests/test_teaching.py
    body = body.replace("<pre>", '<pre tabindex="0">')  # a code block that scrolls sideways takes keyboard focus
    sheets = "".join(f'<li><a href="worksheets/{n.stem}.html">{html.escape(n.stem[:2])} {html.escape(n.title)}</a> '
                     f'(<a href="worksheets/{n.stem}.pdf">PDF</a>)</li>' for n in course(minutes=False))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>For teachers — Why √d_k?</title>
<link rel="stylesheet" href="_static/site.css"><script src="_static/explorer.js"></script>
<script src="_static/exercises.js"></script>
</head><body>
<header class="site"><a class="home" href="index.html">Why √d_k?</a></header>
<div class="layout"><main class="md-cell">
<p><strong>This page is the answer key.</strong> The course's pages carry their own answers (a static page cannot
hide them); no course page links here. Give students the course's contents page, not this one.</p>
<h2>Worksheets and talk</h2>
<ul>{sheets}</ul>
<p><a href="talk.html">The 20-minute talk</a> (reveal.js: arrow keys to move, <kbd>S</kbd> for speaker notes, opens from
<code>file://</code>).</p>
{body}
</main></div></body></html>
"""


def write_site(out: Path, render_markdown, explorer: str = "") -> list[Path]:
    """The teacher's pages of the site: ``teachers.html`` (the guide and key), ``worksheets/*.html``
    and their PDFs, ``talk.html``; reveal.js is copied into ``_static/reveal``."""
    import shutil

    reveal = ROOT / "node_modules" / "reveal.js"
    if not (reveal / "dist" / "reveal.js").is_file():
        raise SystemExit(f"reveal.js is missing at {reveal}: run `npm ci` (package-lock.json pins it)")
    static = out / "_static" / "reveal"
    # Only what the talk loads: the other themes @import web fonts from outside the site.
    (static / "theme").mkdir(parents=True, exist_ok=True)
    for name in ("reveal.css", "reveal.js"):
        shutil.copy2(reveal / "dist" / name, static / name)
    shutil.copy2(reveal / "dist" / "theme" / "white.css", static / "theme" / "white.css")
    fonts = Path("theme") / "fonts" / "source-sans-pro"
    shutil.copytree(reveal / "dist" / fonts, static / fonts, dirs_exist_ok=True)
    (static / "plugin" / "notes").mkdir(parents=True, exist_ok=True)
    shutil.copy2(reveal / "plugin" / "notes" / "notes.js", static / "plugin" / "notes" / "notes.js")
    written = site_pages(out)
    written += [p for p in map(pdf, list(written)) if p is not None]
    png, alt = first_figure()
    (out / "img").mkdir(exist_ok=True)
    (out / "img" / "talk-figure.png").write_bytes(png)
    talk = talk_html(explorer, figure="img/talk-figure.png", figure_alt=alt)
    for name, text in (("teachers.html", guide_page(render_markdown)), ("talk.html", talk)):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if TEACHING.md is out of date")
    args = parser.parse_args(argv)
    text = guide()
    if args.check:
        if not GUIDE.exists() or GUIDE.read_text(encoding="utf-8") != text:
            print("TEACHING.md is out of date: run .venv/bin/python authoring/teaching.py")
            return 1
        print("TEACHING.md is up to date")
        return 0
    GUIDE.write_text(text, encoding="utf-8")
    print(f"wrote {GUIDE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
