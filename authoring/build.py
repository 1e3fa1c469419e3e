"""Rebuild the course notebooks from their jupytext sources and execute them.

Each ``authoring/notebooks/NN_topic.py`` (jupytext percent format) becomes
``notebooks/NN_topic.ipynb``, executed top to bottom in a fresh kernel with the
working directory ``notebooks/``; outputs and widget state are stored.

    python authoring/build.py            # every notebook
    python authoring/build.py 02 05      # the notebooks whose names start with 02 or 05
    python authoring/build.py --check    # only report sources whose notebook is out of date
    python authoring/build.py --force 02 # overwrite 02 even if it changed since its last build

A built notebook carries a fingerprint of its cells in its metadata; the build refuses to
overwrite a notebook whose cells changed since (a learner's added cell, outputs of a run), and
says so: ``--force`` overwrites.
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


def read_source(source: Path) -> nbformat.NotebookNode:
    """The notebook a source describes, with clean metadata and no outputs.

    Every deep-dive heading cell gets ``"jp-MarkdownHeadingCollapsed": true``: the deep
    dive opens folded in JupyterLab.
    """
    nb = jupytext.read(source, fmt="py:percent")
    seen: dict[str, int] = {}
    nb.metadata = nbformat.from_dict({"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})
    for cell in nb.cells:
        cell.id = cell_id(source.stem, cell, seen)
        tags, alt = cell.metadata.get("tags"), cell.metadata.get("alt")
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        if alt:  # the author's alt text of a figure or explorer cell (the site build reads it)
            cell.metadata["alt"] = alt
        if is_deep_dive_heading(cell):
            cell.metadata[COLLAPSED] = True
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def cell_signature(nb) -> list[tuple]:
    """What must agree between a source and its notebook: type, text, tags and folding of every cell."""
    return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", ())),
             bool(c.metadata.get(COLLAPSED, False))) for c in nb.cells]


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
    """Write a built notebook with its fingerprint, unless ``path`` changed since its last build."""
    check_overwritable(path, force)
    nb.metadata[FINGERPRINT_KEY] = fingerprint(nb)
    nbformat.write(nb, path)


_WIDGET_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


def _widget_order(nb, states: dict) -> list[str]:
    """Widget model ids in a deterministic order: those the outputs show, cell by cell, then the
    models each one refers to (breadth first, attributes in name order), then any others by content."""
    order: list[str] = []

    def visit(text: str) -> None:
        for found in _WIDGET_ID.findall(text):
            if found in states and found not in order:
                order.append(found)

    for cell in nb.cells:
        visit(json.dumps(cell.get("outputs", [])))
    i = 0
    while i < len(order):
        state = states[order[i]].get("state", {})
        for key in sorted(state):
            visit(json.dumps(state[key], sort_keys=True))
        i += 1
    rest = [m for m in states if m not in order]
    rest.sort(key=lambda m: (_WIDGET_ID.sub("", json.dumps(states[m], sort_keys=True)), m))
    return order + rest


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
    start = time.perf_counter()
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            store_widget_state=True,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    seconds = time.perf_counter() - start
    # nbclient stamps no timing (record_timing=False); drop anything else machine-specific.
    nb.metadata.pop("papermill", None)
    nb.metadata["language_info"] = LANGUAGE_INFO
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb = stable_widget_ids(nb, source.stem)
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
                    path.write_bytes(base64.b64decode(png))
                    return path
            raise RuntimeError(f"{source.name}: the cell tagged {FIGURE_TAG} shows no PNG figure")
    return None


# The main line's reading budget (cells not tagged deep-dive): counted here, enforced by
# tests/test_notebook_structure.py, reported in the README (``--readme``).
WORD_BUDGET = {"00": 1100}
CODE_BUDGET = {"00": 40}
DEFAULT_WORDS, DEFAULT_CODE, MIN_WORDS, MAX_CELL, COURSE_WORDS = 1200, 70, 300, 12, 10_000

# The reading-time model (issue 20 §1): 150 words of prose a minute, plus one minute for every
# main-line code cell with its output (the setup cell and the exercise cells included).
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 1.0
#: The tag of the last cell of a notebook's "chain" (00: the end of the section that has shown
#: spread, weights and gradient unscaled against scaled, with numbers); the minutes up to and
#: including it are its ``chain_minutes``.
END_OF_CHAIN_TAG = "end-of-chain"
#: Reading budgets in minutes: {prefix: (up to the end of the chain, the whole main line)}.
MINUTES_BUDGET = {"00": (10.0, 15.0)}

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", flags=re.S)
_TEXT_IN_MATH = re.compile(r"\\text(?:rm|bf|it|sf)?\{([^{}]*)\}")
_WORD = re.compile(r"[A-Za-z]+")


def prose_words(markdown: str) -> int:
    """Words a learner reads as prose in a markdown cell: runs of letters outside LaTeX math and
    outside ``<details>`` (folded solutions), plus the words inside ``\\text{...}`` in math.

    >>> prose_words(r"The logit $z_j = q\\cdot k_j$ is $d_\\text{model}/h$. <details>not read</details>")
    4
    """
    text = re.sub(r"<details>.*?</details>", " ", markdown, flags=re.S)
    in_math = sum(len(_WORD.findall(" ".join(_TEXT_IN_MATH.findall(m)))) for m in _MATH.findall(text))
    return len(_WORD.findall(_MATH.sub(" ", text))) + in_math


def minutes(words: int, code_cells: int) -> float:
    """The reading-time model: ``words / 150 + code_cells`` minutes.

    >>> minutes(300, 4)
    6.0
    """
    return words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * code_cells


def main_line(path) -> dict:
    """The main line's load: words of prose (:func:`prose_words`), non-blank code lines, code
    cells, code cells over 12 lines (the setup cell excepted), Predict prompts, deep-dive cells,
    reading ``minutes`` (:func:`minutes`) and ``chain_minutes`` (the same up to and including the
    cell tagged ``end-of-chain``; None without one)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    row = {"words": 0, "code": 0, "cells": 0, "long": 0, "predict": 0, "deep": 0, "chain_minutes": None}
    for c in nb["cells"]:
        src = "".join(c["source"])
        tags = c.get("metadata", {}).get("tags", [])
        if DEEP_DIVE_TAG in tags:
            row["deep"] += 1
            continue
        if c["cell_type"] == "markdown":
            row["words"] += prose_words(src)
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
    rows = ["| notebook | words of prose | code lines | reading minutes | Predict prompts | deep-dive cells |",
            "|---|---:|---:|---:|---:|---:|"]
    total, total_minutes = 0, 0.0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        r, p = main_line(path), path.name[:2]
        total += r["words"]
        total_minutes += r["minutes"]
        rows.append(f"| [{path.stem}](notebooks/{path.name}) | {r['words']} / {WORD_BUDGET.get(p, DEFAULT_WORDS)} "
                    f"| {r['code']} / {CODE_BUDGET.get(p, DEFAULT_CODE)} | {reading_minutes_cell(r, p)} "
                    f"| {r['predict']} | {r['deep']} |")
    verdict = "" if total <= COURSE_WORDS else " (missed)"
    rows.append(f"| **course** | **{total} / {COURSE_WORDS}**{verdict} | | **{total_minutes:.0f}** | | |")
    return "\n".join(rows)


def write_reading_load() -> None:
    """Rewrite the README's reading-load table (between its markers) from the built notebooks."""
    text = README.read_text(encoding="utf-8")
    start, end = (text.index(m) for m in READING_LOAD_MARKERS)
    start += len(READING_LOAD_MARKERS[0])
    README.write_text(text[:start] + "\n" + reading_load_table() + "\n" + text[end:], encoding="utf-8")


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
        stale = [s for s in todo if not target(s).exists()
                 or cell_signature(read_source(s)) != cell_signature(nbformat.read(target(s), as_version=4))]
        for s in stale:
            print(f"out of date: {target(s).relative_to(ROOT)} (rebuild: python authoring/build.py {s.name[:2]})")
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
