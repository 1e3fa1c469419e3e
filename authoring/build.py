"""Rebuild the course notebooks from their jupytext sources and execute them.

Each ``authoring/notebooks/NN_topic.py`` (jupytext percent format) becomes
``notebooks/NN_topic.ipynb``, executed top to bottom in a fresh kernel with the
working directory ``notebooks/``; outputs and widget state are stored.

    python authoring/build.py            # every notebook
    python authoring/build.py 02 05      # the notebooks whose names start with 02 or 05
    python authoring/build.py --check    # only report notebooks out of date (cells or code)
    python authoring/build.py --force 02 # overwrite 02 even if it changed since its last build

A built notebook carries a fingerprint of its cells in its metadata; the build refuses to
overwrite a notebook whose cells changed since (a learner's added cell, outputs of a run), and
says so: ``--force`` overwrites. It also records the package files the notebook's kernel loaded (and
the front end and data) with their digest (``authoring/code_digest.py``): ``--check`` names every
notebook whose cells differ from its source *or* whose outputs were made by other code than today's.
A notebook is written atomically (a temporary file beside it, then ``os.replace``): an interrupted
build never leaves it truncated.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_digest  # noqa: E402  (authoring/code_digest.py: the digest of the code outputs were made with)
from atomic import write_atomically  # noqa: E402  (authoring/atomic.py, shared with the site build)
from explorer_cells import KEY as EXPLORER_KEY  # noqa: E402  (authoring/explorer_cells.py, shared with the site)
from explorer_cells import explorer_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "authoring" / "notebooks"
NOTEBOOKS = ROOT / "notebooks"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}


def sources(prefixes=()) -> list[Path]:
    """The jupytext sources, optionally only those whose names start with one of ``prefixes``."""
    found = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    if prefixes:
        found = [p for p in found if any(p.name.startswith(x) for x in prefixes)]
    return found


def target(source: Path) -> Path:
    return NOTEBOOKS / (source.stem + ".ipynb")


#: The tag of every cell of a deep dive (its heading cell included).
DEEP_DIVE_TAG = "deep-dive"
#: A deep dive starts at a markdown cell whose first line matches this.
DEEP_DIVE_HEADING = re.compile(r"^## Deep dive:")
#: The cell metadata JupyterLab 4 reads when it renders a markdown cell (and writes when a
#: learner folds a heading): true -> the heading is collapsed, and every cell up to the next
#: heading of the same or a higher level is hidden until one click on its toggle.
COLLAPSED = "jp-MarkdownHeadingCollapsed"


def is_deep_dive_heading(cell) -> bool:
    """A markdown cell that starts a deep dive (``## Deep dive: ...`` on its first line)."""
    return cell.cell_type == "markdown" and bool(DEEP_DIVE_HEADING.match(cell.source.lstrip()))


def cell_id(stem: str, cell, seen: dict[str, int]) -> str:
    """A stable id from the cell's own type and text (and how many identical cells came before):
    a rebuild with no source change keeps every id, and inserting or editing one cell changes
    no other cell's id, so a notebook's diff shows only what changed.

    >>> import nbformat; seen = {}
    >>> cell = nbformat.v4.new_markdown_cell("# Hi")
    >>> a = cell_id("00_x", cell, seen)
    >>> a == cell_id("00_x", cell, {}), a != cell_id("00_x", cell, seen)
    (True, True)
    """
    key = f"{stem}:{cell.cell_type}:{cell.source.strip()}"
    seen[key] = seen.get(key, 0) + 1
    return hashlib.sha1(f"{key}:{seen[key]}".encode()).hexdigest()[:8]


#: The cell metadata a built notebook keeps from its source: tags, and the author's alt text of a
#: figure or explorer cell (``# %% alt="..."``; the site build reads it).
KEPT_METADATA = ("tags", "alt")


def read_source(source: Path) -> nbformat.NotebookNode:
    """The notebook a source describes, with clean metadata and no outputs.

    Every deep-dive heading cell gets ``"jp-MarkdownHeadingCollapsed": true``: the deep
    dive opens folded in JupyterLab. Of a cell's metadata only :data:`KEPT_METADATA` is kept
    (a Predict prompt's ``predict_answer`` stays in the source, out of the learner's notebook).
    Every explorer cell gets ``"explorer": {"class": ..., "kwargs": ...}``
    (``explorer_cells.explorer_metadata``): the static site builds its explorer from it.
    """
    nb = jupytext.read(source, fmt="py:percent")
    seen: dict[str, int] = {}
    nb.metadata = nbformat.from_dict({"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})
    explorers = explorer_metadata([c.source if c.cell_type == "code" else None for c in nb.cells], source.name)
    for cell, explorer in zip(nb.cells, explorers):
        cell.id = cell_id(source.stem, cell, seen)
        cell.metadata = nbformat.from_dict({k: cell.metadata[k] for k in KEPT_METADATA if cell.metadata.get(k)})
        if is_deep_dive_heading(cell):
            cell.metadata[COLLAPSED] = True
        if explorer is not None:
            cell.metadata[EXPLORER_KEY] = nbformat.from_dict(explorer)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def cell_signature(nb) -> list[tuple]:
    """What must agree between a source and its notebook: type, text, tags, alt text, folding and
    explorer (class and arguments) of every cell."""
    return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", ())), c.metadata.get("alt"),
             bool(c.metadata.get(COLLAPSED, False)), json.dumps(c.metadata.get(EXPLORER_KEY), sort_keys=True))
            for c in nb.cells]


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def check_explorer_cells(nb, name: str) -> None:
    """After a run: a cell shows a widget exactly when it carries explorer metadata (else ``RuntimeError``).

    A widget the build cannot name would reach the site as an empty output; an explorer cell that
    shows nothing would give the site an explorer the notebook does not have."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        shows = any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", []))
        named = EXPLORER_KEY in cell.metadata
        if shows and not named:
            raise RuntimeError(f"{name}, cell {i} shows a widget but does not end with an explorer the site can "
                               f"build: end it with XExplorer(keyword=literal, ...) or a name bound so in the "
                               f"same cell, XExplorer imported from sdpa_helpers.widgets")
        if named and not shows:
            raise RuntimeError(f"{name}, cell {i} ends with {cell.metadata[EXPLORER_KEY]['class']} but shows no widget")


# -- never overwrite a notebook someone changed --------------------------------------------
#: The notebook metadata key holding the fingerprint of the cells as built.
FINGERPRINT_KEY = "sdpa_build_fingerprint"


class Refused(Exception):
    """A notebook differs from its last build: not overwritten without ``--force``."""


def fingerprint(nb) -> str:
    """SHA-256 of the cells (sources, outputs, metadata, ids) in canonical JSON: deterministic."""
    cells = json.dumps([dict(c) for c in nb.cells], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(cells.encode("utf-8")).hexdigest()


def check_overwritable(path: Path, force: bool = False) -> None:
    """Raise :class:`Refused` if ``path`` exists and its cells differ from its last build."""
    if force or not path.exists():
        return
    existing = nbformat.read(path, as_version=4)
    stored = existing.metadata.get(FINGERPRINT_KEY)
    if stored is not None and stored != fingerprint(existing):  # no fingerprint: built before them
        raise Refused(f"{path.name} changed since it was built (cells added, edited or run); not overwriting it. "
                      f"Keep your copy elsewhere, or rebuild anyway with: python authoring/build.py --force "
                      f"{path.name[:2]}")


def write_notebook(nb, path: Path, force: bool = False) -> None:
    """Write a built notebook with its fingerprint, unless ``path`` changed since its last build
    (atomically: :func:`write_atomically`)."""
    check_overwritable(path, force)
    nb.metadata[FINGERPRINT_KEY] = fingerprint(nb)
    text = nbformat.writes(nb)
    write_atomically(path, (text if text.endswith("\n") else text + "\n").encode("utf-8"))  # as nbformat.write


def merge_streams(nb):
    """Consecutive stream outputs of one cell with the same name (stdout, stderr) become one output.

    How a kernel's prints split into stream messages depends on timing (a flush between two prints),
    so one source could store ``["a\\n", "b\\n"]`` in one build and ``["a\\nb\\n"]`` in the next: a
    diff with no change. nbval merges them the same way before comparing.

    >>> import nbformat
    >>> out = [nbformat.v4.new_output("stream", name="stdout", text=t) for t in ("a\\n", "b\\n")]
    >>> cell = nbformat.v4.new_code_cell("print('a'); print('b')", outputs=out)
    >>> [o.text for o in merge_streams(nbformat.v4.new_notebook(cells=[cell])).cells[0].outputs]
    ['a\\nb\\n']
    """
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            previous = merged[-1] if merged else None
            if (output.output_type == "stream" and previous is not None and previous.output_type == "stream"
                    and previous.name == output.name):
                merged[-1] = nbformat.from_dict({**previous, "text": previous.text + output.text})
            else:
                merged.append(output)
        cell.outputs = merged
    return nb


_WIDGET_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


def _widget_order(nb, states: dict) -> list[str]:
    """Widget model ids in a deterministic order: those the outputs show, cell by cell, then the
    models each one refers to (breadth first, attributes in name order); then the others that no
    model refers to, by content, each followed by the models it refers to. (Sorting those by content
    alone left two models of equal content, such as two sliders' styles, in uuid order: a rebuild
    could swap which slider got which.)"""
    order: list[str] = []

    def visit(text: str) -> None:
        for found in _WIDGET_ID.findall(text):
            if found in states and found not in order:
                order.append(found)

    def expand(i: int) -> None:  # breadth first from order[i:]
        while i < len(order):
            state = states[order[i]].get("state", {})
            for key in sorted(state):
                visit(json.dumps(state[key], sort_keys=True))
            i += 1

    for cell in nb.cells:
        visit(json.dumps(cell.get("outputs", [])))
    expand(0)
    referred = {found for m, s in states.items() for found in _WIDGET_ID.findall(json.dumps(s)) if found != m}
    by_content = sorted(states, key=lambda m: (_WIDGET_ID.sub("", json.dumps(states[m], sort_keys=True)), m))
    for model in [m for m in by_content if m not in referred] + by_content:  # roots first, then any cycle
        if model not in order:
            order.append(model)
            expand(len(order) - 1)
    return order


def stable_widget_ids(nb, stem: str):
    """The notebook with every widget model id (a random uuid4 per run) replaced by one derived from
    the notebook's name and a deterministic order of the models: a rebuild with no source change
    then writes the same bytes.

    >>> import nbformat
    >>> state = {"a" * 32: {"state": {"x": "IPY_MODEL_" + "b" * 32}}, "b" * 32: {"state": {}}}
    >>> nb = nbformat.v4.new_notebook(metadata={"widgets": {"application/vnd.jupyter.widget-state+json":
    ...                                                     {"state": state}}})
    >>> once, twice = stable_widget_ids(nb, "00_x"), stable_widget_ids(nb, "00_x")
    >>> new = once.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    >>> once == twice, "a" * 32 in new, all(v["state"].get("x", "IPY_MODEL_")[10:] in new or not v["state"]
    ...                                        for v in new.values())
    (True, False, True)
    """
    states = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    mapping = {old: hashlib.sha1(f"{stem}:widget:{i}".encode()).hexdigest()[:32]
               for i, old in enumerate(_widget_order(nb, states))}
    text = _WIDGET_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), json.dumps(nb))
    return nbformat.from_dict(json.loads(text))


def build(source: Path, force: bool = False) -> float:
    """Execute one source in a fresh kernel and write its notebook; return seconds taken."""
    nb = read_source(source)
    before = code_digest.code_digest(ROOT)  # the whole package: nothing may change while the notebook runs
    nb.cells.append(nbformat.v4.new_code_cell(code_digest.LOADED_MODULES))  # asked last, then removed
    start = time.perf_counter()
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            store_widget_state=True,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    seconds = time.perf_counter() - start
    loaded = json.loads("".join(o.get("text", "") for o in nb.cells.pop().outputs if o.output_type == "stream"))
    # nbclient stamps no timing (record_timing=False); drop anything else machine-specific.
    nb.metadata.pop("papermill", None)
    nb.metadata["language_info"] = LANGUAGE_INFO
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    if code_digest.code_digest(ROOT) != before:
        raise RuntimeError(f"{source.name}: sdpa_helpers or its data changed while the notebook ran; build it again")
    code_digest.record(nb.metadata, code_digest.notebook_files(loaded, ROOT), ROOT)
    nb = merge_streams(nb)
    nb = stable_widget_ids(nb, source.stem)
    check_explorer_cells(nb, source.name)
    nbformat.validate(nb)
    write_notebook(nb, target(source), force)
    write_tagged_figure(nb, source)
    return seconds


#: A code cell tagged so has its figure saved as ``notebooks/figures/<notebook>_figure.png`` at
#: every build (the README shows notebook 00's).
FIGURE_TAG = "readme-figure"


def figure_path(source: Path) -> Path:
    return NOTEBOOKS / "figures" / f"{source.stem}_figure.png"


def write_tagged_figure(nb, source: Path) -> Path | None:
    """Save the PNG output of the cell tagged ``readme-figure`` (if any) beside the notebooks."""
    for cell in nb.cells:
        if cell.cell_type == "code" and FIGURE_TAG in cell.metadata.get("tags", []):
            for output in cell.outputs:
                png = output.get("data", {}).get("image/png")
                if png:
                    path = figure_path(source)
                    path.parent.mkdir(exist_ok=True)
                    write_atomically(path, base64.b64decode(png))
                    return path
            raise RuntimeError(f"{source.name}: the cell tagged {FIGURE_TAG} shows no PNG figure")
    return None


# The main line's reading budget (cells not tagged deep-dive): counted here, enforced by
# tests/test_notebook_structure.py, reported in the README (``--readme``).
WORD_BUDGET = {"00": 1100}
CODE_BUDGET = {"00": 40}
DEFAULT_WORDS, DEFAULT_CODE, MIN_WORDS, MAX_CELL, COURSE_WORDS = 1200, 70, 300, 12, 10_000

# The reading-time model (issue 20 §1): 150 words of prose a minute, plus one minute for every
# main-line code cell with its output (the setup cell and the exercise cells included). The budgets
# (00: chain <= 10, whole <= 15) are stated in this model's minutes; ``honest_minutes`` beside them.
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 1.0
#: The tag of the last cell of a notebook's "chain" (00: the end of the section that has shown
#: spread, weights and gradient unscaled against scaled, with numbers); the minutes up to and
#: including it are its ``chain_minutes``.
END_OF_CHAIN_TAG = "end-of-chain"
#: Reading budgets in minutes of :func:`minutes`: {prefix: (up to the end of the chain, the whole main line)}.
MINUTES_BUDGET = {"00": (10.0, 15.0)}

# The honest model (issue 29 §3): what a learner who reads the math, runs every cell and does the
# exercises takes. See :func:`honest_minutes` for the constants and their calibration.
#: Words-equivalent of one math symbol (a letter, a number, an operator, a TeX command such as \sqrt):
#: one second.
WORDS_PER_MATH_SYMBOL = 2.5
#: Words-equivalent of one displayed equation ($$...$$) on top of its symbols: a step to follow.
WORDS_PER_DISPLAYED_EQUATION = 150
#: Minutes per main-line code cell in the honest model: read the code, run it, read its output.
HONEST_MINUTES_PER_CODE_CELL = 1.5
#: The whole course's main line, in honest minutes (issue 29: from about 390 to at most 300).
COURSE_HONEST_MINUTES = 300

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", flags=re.S)
_DISPLAYED = re.compile(r"\$\$.*?\$\$", flags=re.S)
_TEXT_IN_MATH = re.compile(r"\\text(?:rm|bf|it|sf)?\{([^{}]*)\}")
_WORD = re.compile(r"[A-Za-z]+")
#: TeX that sets type or space, read as nothing.
_TEX_LAYOUT = re.compile(r"\\(?:math[a-z]+|operatorname|left|right|[bB]ig+[lr]?|displaystyle|[,;:!]|quad|qquad|"
                         r"tfrac|dfrac|frac|begin\{[a-z*]+\}|end\{[a-z*]+\})(?![A-Za-z])")
#: A named operator or function, ``\mathrm{Var}``, ``\operatorname{softmax}``: one symbol.
_NAMED = re.compile(r"\\(?:mathrm|operatorname)\{[A-Za-z]+\}")
#: One math symbol: a TeX command, a number, a letter, or an operator / relation.
_SYMBOL = re.compile(r"\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]|[=+\-−<>≤≥≈×·/!'|∑∏√∞]")


def _without_folded(markdown: str) -> str:
    return re.sub(r"<details>.*?</details>", " ", markdown, flags=re.S)


def prose_words(markdown: str) -> int:
    """Words a learner reads as prose in a markdown cell: runs of letters outside LaTeX math and
    outside ``<details>`` (folded solutions), plus the words inside ``\\text{...}`` in math.

    >>> prose_words(r"The logit $z_j = q\\cdot k_j$ is $d_\\text{model}/h$. <details>not read</details>")
    4
    """
    text = _without_folded(markdown)
    in_math = sum(len(_WORD.findall(" ".join(_TEXT_IN_MATH.findall(m)))) for m in _MATH.findall(text))
    return len(_WORD.findall(_MATH.sub(" ", text))) + in_math


def math_load(markdown: str) -> tuple[int, int]:
    """``(symbols, displayed equations)`` of a markdown cell's LaTeX math, outside ``<details>``.

    A symbol is a TeX command (``\\sqrt``, ``\\cdot``, ``\\sum``), a named function
    (``\\mathrm{Var}``), a number, a letter, or an operator or relation; layout (``\\left``,
    ``\\,``, ``\\frac``), brackets, braces, ``^`` and ``_`` are not, and the words of
    ``\\text{...}`` count as prose (:func:`prose_words`).

    >>> math_load(r"Here $q\\cdot k$ and $\\mathrm{Var}(cX) = c^2$; $$\\sum_{i=1}^{d_k} q_i k_i$$")
    (19, 1)
    >>> math_load(r"$d_\\text{model}/h$ <details>$$x$$</details>")
    (3, 0)
    """
    text = _without_folded(markdown)
    symbols = 0
    for m in _MATH.findall(text):
        m = _NAMED.sub(r"\\name ", _TEXT_IN_MATH.sub(" ", m.strip("$")))  # \mathrm{Var}: one symbol
        m = _TEX_LAYOUT.sub(" ", m)
        symbols += len(_SYMBOL.findall(m))
    return symbols, len(_DISPLAYED.findall(text))


def minutes(words: int, code_cells: int) -> float:
    """The reading-time model of the budgets: ``words / 150 + code_cells`` minutes.

    >>> minutes(300, 4)
    6.0
    """
    return words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * code_cells


def honest_minutes(words: int, code_cells: int, math_symbols: int = 0, displayed: int = 0) -> float:
    """The honest model: what a learner who reads the math, runs each cell and does the exercises takes.

    ``(words + 2.5 * math_symbols + 150 * displayed) / 150 + 1.5 * code_cells`` minutes:

    - prose at 150 words a minute, as in :func:`minutes`;
    - every symbol of math (:func:`math_load`: ``$q\\cdot k$`` is 3) costs 2.5 words, one second
      (:data:`WORDS_PER_MATH_SYMBOL`): a symbol is read, and decoded, slower than a word;
    - every displayed equation costs 150 words more, one minute (:data:`WORDS_PER_DISPLAYED_EQUATION`):
      it is a step the learner follows, or redoes on paper;
    - every main-line code cell costs 1.5 minutes (:data:`HONEST_MINUTES_PER_CODE_CELL`): read the
      code, run it, read its output and check lines (the setup and exercise cells included; an
      exercise's folded solution is not counted).

    Calibration (issue 29): a learner of the course's audience read every main line and did all
    50 exercises in about 390 minutes, where :func:`minutes` said 212; 02 took 55 (that model:
    23.0), 05, 06, 08 and 09 about 45 each (21-24), so 00, 01, 03, 04 and 07 about 155 together.
    On the main lines that learner read (commit 8363195) this model gives, honest minutes in
    brackets: 00 25.2, 01 38.0, 02 54.6 (55), 03 31.0, 04 35.4, 05 42.1 (45), 06 43.7 (45),
    07 34.3, 08 49.0 (45), 09 41.5 (45); 00+01+03+04+07 163.8 (155); course 395 (390).
    The three costs were fitted to those six numbers by least squares on a grid (code cell 1 to
    3 minutes, symbol 0 to 4 words, displayed equation 0 to 300 words) and rounded to the values
    above (sum of squared errors 54, against 44 at the grid's best, which priced a displayed
    equation at nearly nothing and a symbol at 4 words). Off by at most 4 minutes per measured
    notebook and about 1 % on the course. What the counts cannot see: how hard an idea is (05 and
    09 read slower than their counts say, 08 faster); and the minutes are one learner's.

    >>> honest_minutes(300, 4)
    8.0
    >>> honest_minutes(0, 0, math_symbols=60, displayed=1)
    2.0
    """
    word_equivalents = words + WORDS_PER_MATH_SYMBOL * math_symbols + WORDS_PER_DISPLAYED_EQUATION * displayed
    return word_equivalents / WORDS_PER_MINUTE + HONEST_MINUTES_PER_CODE_CELL * code_cells


def main_line(path) -> dict:
    """The main line's load: words of prose (:func:`prose_words`), math symbols and displayed
    equations (:func:`math_load`), non-blank code lines, code cells, code cells over 12 lines (the
    setup cell excepted), Predict prompts, deep-dive cells, reading ``minutes`` (:func:`minutes`)
    and ``chain_minutes`` (the same up to and including the cell tagged ``end-of-chain``; None
    without one), and ``honest_minutes`` (:func:`honest_minutes`)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    row = {"words": 0, "symbols": 0, "displayed": 0, "code": 0, "cells": 0, "long": 0, "predict": 0, "deep": 0,
           "chain_minutes": None}
    for c in nb["cells"]:
        src = "".join(c["source"])
        tags = c.get("metadata", {}).get("tags", [])
        if DEEP_DIVE_TAG in tags:
            row["deep"] += 1
            continue
        if c["cell_type"] == "markdown":
            row["words"] += prose_words(src)
            symbols, displayed = math_load(src)
            row["symbols"] += symbols
            row["displayed"] += displayed
            row["predict"] += len(re.findall(r"\*\*Predict", src))
        elif c["cell_type"] == "code":
            n = len([line for line in src.strip().splitlines() if line.strip()])
            row["code"] += n  # a hidden source still counts
            row["cells"] += n > 0
            setup = bool(re.search(r"make_rng\(SEED\)|__version__", src))
            row["long"] += (n > MAX_CELL) and not setup
        if END_OF_CHAIN_TAG in tags:
            row["chain_minutes"] = minutes(row["words"], row["cells"])
    row["minutes"] = minutes(row["words"], row["cells"])
    row["honest_minutes"] = honest_minutes(row["words"], row["cells"], row["symbols"], row["displayed"])
    return row


README = ROOT / "README.md"
READING_LOAD_MARKERS = ("<!-- READING LOAD -->", "<!-- /READING LOAD -->")


def reading_minutes_cell(row: dict, prefix: str) -> str:
    """The README's minutes for one notebook: ``13.2`` or, with a budget, ``13.2 / 15 (chain 8.9 / 10)``."""
    text = f"{row['minutes']:.1f}"
    if prefix in MINUTES_BUDGET:
        chain_budget, budget = MINUTES_BUDGET[prefix]
        text += f" / {budget:g}"
        if row["chain_minutes"] is not None:
            text += f" (chain {row['chain_minutes']:.1f} / {chain_budget:g})"
    return text


def reading_load_table() -> str:
    """The README's table of every notebook's main line against its budgets (Markdown)."""
    rows = ["| notebook | words of prose | code lines | reading minutes | honest minutes | Predict prompts "
            "| deep-dive cells |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    total, total_minutes, total_honest = 0, 0.0, 0.0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        r, p = main_line(path), path.name[:2]
        total += r["words"]
        total_minutes += r["minutes"]
        total_honest += r["honest_minutes"]
        rows.append(f"| [{path.stem}](notebooks/{path.name}) | {r['words']} / {WORD_BUDGET.get(p, DEFAULT_WORDS)} "
                    f"| {r['code']} / {CODE_BUDGET.get(p, DEFAULT_CODE)} | {reading_minutes_cell(r, p)} "
                    f"| {r['honest_minutes']:.0f} | {r['predict']} | {r['deep']} |")
    verdict = "" if total <= COURSE_WORDS else " (missed)"
    honest_verdict = "" if total_honest <= COURSE_HONEST_MINUTES else " (missed)"
    rows.append(f"| **course** | **{total} / {COURSE_WORDS}**{verdict} | | **{total_minutes:.0f}** "
                f"| **{total_honest:.0f} / {COURSE_HONEST_MINUTES}**{honest_verdict} | | |")
    return "\n".join(rows)


def write_reading_load() -> None:
    """Rewrite the README's reading-load table (between its markers) from the built notebooks."""
    text = README.read_text(encoding="utf-8")
    start, end = (text.index(m) for m in READING_LOAD_MARKERS)
    start += len(READING_LOAD_MARKERS[0])
    write_atomically(README, (text[:start] + "\n" + reading_load_table() + "\n" + text[end:]).encode("utf-8"))


def out_of_date(todo: list[Path]) -> list[tuple[Path, str]]:
    """``(source, why)`` for every source whose notebook is missing, differs from it in its cells, or
    stores outputs made by other package code or data than today's (:func:`code_digest.why_stale`: the
    digest over the files the notebook recorded it loaded)."""
    found = []
    for s in todo:
        path = target(s)
        if not path.exists():
            found.append((s, "not built"))
        elif why := code_digest.why_stale(path, ROOT):  # the cheap check first
            found.append((s, why))
        elif cell_signature(read_source(s)) != cell_signature(nbformat.read(path, as_version=4)):
            found.append((s, "its cells differ from its source"))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="build only notebooks whose names start with these")
    parser.add_argument("--check", action="store_true", help="report out-of-date notebooks, build nothing")
    parser.add_argument("--readme", action="store_true", help="only rewrite the README's reading-load table")
    parser.add_argument("--force", action="store_true", help="overwrite notebooks that changed since their last build")
    args = parser.parse_args(argv)
    if args.readme:
        write_reading_load()
        return 0
    todo = sources(args.prefixes)
    if not todo:
        print(f"no sources match {args.prefixes}", file=sys.stderr)
        return 2
    if args.check:
        stale = out_of_date(todo)
        for s, why in stale:
            print(f"out of date: {target(s).relative_to(ROOT)}: {why} "
                  f"(rebuild: python authoring/build.py {s.name[:2]})")
        return 1 if stale else 0
    for source in todo:
        try:
            check_overwritable(target(source), args.force)  # before the minutes of executing it
            seconds = build(source, force=args.force)
        except Refused as refusal:
            print(f"refused: {refusal}", file=sys.stderr)
            return 1
        print(f"built {target(source).relative_to(ROOT)} in {seconds:.1f} s")
    write_reading_load()
    return 0


if __name__ == "__main__":
    sys.exit(main())
