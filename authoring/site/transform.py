"""The static site's notebook → notebook step: a stored notebook in, the notebook its page shows out.

Every change is an output or cell metadata in the notebook format, so the page template (or
nbconvert, or a Sphinx book, configured to read the same fields) renders the result cell by cell:

- an explorer cell (one whose metadata names its explorer, see ``authoring/explorer_cells.py``):
  its outputs become one HTML output, the static explorer;
- an exercise cell (``check("NN.name", ...)``): its outputs become the exercise's HTML; an answer
  box checked in the page hides the cell's code (tag ``remove-input``, as nbconvert's
  ``TagRemovePreprocessor`` and Jupyter Book read it);
- a figure (PNG output): its image goes to a file, named in ``output.metadata.filenames`` (as
  nbconvert's ``ExtractOutputPreprocessor`` does), with its author's alt text in ``output.metadata.alt``;
- deep dives: each run of cells tagged ``deep-dive`` opens at its first cell
  (``metadata.site.dive`` = the summary, the ``## Deep dive: ...`` heading, which leaves the cell's
  text) and closes after its last (``metadata.site.dive_end``), so it folds as one ``<details>``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
DEEP_DIVE_TAG = "deep-dive"
DEEP_DIVE_HEADING = "## Deep dive"
HIDE_INPUT_TAG = "remove-input"
#: ``check("NN.name", ...)`` in a code cell: an exercise cell.
EXERCISE_CALL = re.compile(r"""\bcheck\(\s*["']([0-9]{2}\.\w+)["']""")


def text(value) -> str:
    """A notebook's multiline string: stored as one string or as a list of lines."""
    return "".join(value) if isinstance(value, list) else (value or "")


def normalize(nb: dict) -> dict:
    """The notebook with every multiline string as one string (cell sources, stream texts, text outputs)."""
    for cell in nb["cells"]:
        cell["source"] = text(cell.get("source", ""))
        cell.setdefault("metadata", {})
        for o in cell.get("outputs", []):
            if "text" in o:
                o["text"] = text(o["text"])
            for mime, value in o.get("data", {}).items():
                if mime.startswith("text/") or mime == "image/png":
                    o.setdefault("data", {})[mime] = text(value)
    return nb


def shows_widget(cell: dict) -> bool:
    return cell["cell_type"] == "code" and any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", []))


def exercise_key(cell: dict) -> str | None:
    """The exercise a code cell checks (not an explorer cell), or None."""
    found = EXERCISE_CALL.search(cell["source"]) if cell["cell_type"] == "code" else None
    return found.group(1) if found and not shows_widget(cell) else None


def html_output(html: str) -> dict:
    return {"output_type": "display_data", "data": {"text/html": html}, "metadata": {}}


def transform(nb: dict, *, explorers: dict[int, str], exercise: Callable[[str], tuple[str, bool]],
              figure: Callable[[dict, int, bytes], tuple[str, str]]) -> dict:
    """The page's notebook (a copy; ``nb`` is left as it is).

    ``explorers``: cell index → the static explorer's HTML; ``exercise(key)`` → (its HTML, whether
    the cell's code is hidden); ``figure(cell, index, png_base64)`` → (file name, alt text), storing
    the image.
    """
    nb = copy.deepcopy(nb)
    cells = [c for c in nb["cells"] if c["cell_type"] in ("markdown", "code")]
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        key = exercise_key(cell)
        if i in explorers:
            cell["outputs"] = [html_output(explorers[i])]
        elif key:
            html, hide = exercise(key)
            cell["outputs"] = [html_output(html)]
            if hide:
                cell["metadata"]["tags"] = [*cell["metadata"].get("tags", []), HIDE_INPUT_TAG]
        else:
            for o in cell.get("outputs", []):
                if "image/png" in o.get("data", {}):
                    name, alt = figure(cell, i, o["data"]["image/png"])
                    o["metadata"] = {**o.get("metadata", {}), "filenames": {"image/png": name}, "alt": alt}
    mark_deep_dives(cells)
    nb["cells"] = cells
    return nb


def mark_deep_dives(cells: list[dict]) -> None:
    """Mark where each deep dive opens (``metadata.site.dive``: its summary) and closes (``dive_end``).

    A deep dive is a run of cells tagged ``deep-dive``; a markdown cell starting ``## Deep dive``
    inside a run starts the next one. Its heading becomes the summary (a run that starts with a
    code cell is summarised "Deep dive")."""
    last = None
    for cell in cells:
        dive = DEEP_DIVE_TAG in cell["metadata"].get("tags", [])
        heading = cell["cell_type"] == "markdown" and cell["source"].lstrip().startswith(DEEP_DIVE_HEADING)
        if last is not None and (not dive or heading):
            last["metadata"].setdefault("site", {})["dive_end"] = True
            last = None
        if dive and last is None:
            summary = "Deep dive"
            if cell["cell_type"] == "markdown":
                first, _, rest = cell["source"].strip().partition("\n")
                summary, cell["source"] = first.lstrip("#").strip(), rest
            cell["metadata"].setdefault("site", {})["dive"] = summary
        if dive:
            last = cell
    if last is not None:
        last["metadata"].setdefault("site", {})["dive_end"] = True
