"""Explorer cells (authoring/explorer_cells.py): the notebook build names each explorer in its cell's
metadata, the static site builds the explorer from there.

- every explorer cell of every notebook source gets ``{"class", "kwargs"}`` from the function the
  build uses (``build.read_source``), and it matches the explorers the built notebooks show: the same
  cells show a widget, the class is one of ``all_explorers()`` (each shown somewhere), and the explorer
  built from the metadata starts at the cell's arguments;
- the build refuses a run where a cell shows a widget it cannot name (or names one it does not show);
- the site reads the metadata, and stops with a clear error where a cell lacks it.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _load(name: str, path: Path):
    """A module of authoring/ under its own name (the notebook build and the site build are both build.py)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def notebook_build():
    return _load("notebook_build", ROOT / "authoring" / "build.py")


@pytest.fixture(scope="module")
def cells():
    sys.path.insert(0, str(ROOT / "authoring"))
    import explorer_cells

    return explorer_cells


@pytest.fixture(scope="module")
def site_build():
    return _load("site_build", ROOT / "authoring" / "site" / "build.py")


def test_doctests(cells):
    assert doctest.testmod(cells).failed == 0


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem[:2] for s in SOURCES])
def test_every_explorer_cell_of_every_source_gets_its_metadata(source, notebook_build, cells):
    """The build's metadata names the explorers the built notebook shows, cell for cell."""
    from sdpa_helpers.widgets import all_explorers

    nb = notebook_build.read_source(source)
    named = {i: c.metadata["explorer"] for i, c in enumerate(nb.cells) if "explorer" in c.metadata}
    stored = nbformat.read(ROOT / "notebooks" / f"{source.stem}.ipynb", as_version=4)
    assert [c.source for c in stored.cells] == [c.source for c in nb.cells], "the notebook is built from this source"
    shown = {i for i, c in enumerate(stored.cells)
             if c.cell_type == "code" and any(WIDGET_MIME in o.get("data", {}) for o in c.outputs)}
    assert set(named) == shown, f"cells naming an explorer {sorted(named)} != cells showing a widget {sorted(shown)}"
    imported = cells.imported_explorers([c.source for c in nb.cells if c.cell_type == "code"]).values()
    assert sorted(set(imported)) == sorted({m["class"] for m in named.values()}), "every imported explorer is shown"
    for i, meta in named.items():
        assert set(meta) == {"class", "kwargs"} and json.loads(json.dumps(meta)) == meta
        module, _, attr = meta["class"].rpartition(".")
        cls = getattr(importlib.import_module(module), attr)
        assert cls in all_explorers(), meta["class"]
        last = nb.cells[i].source.strip().splitlines()[-1]
        assert attr in nb.cells[i].source and (attr in last or last.isidentifier()), (i, last)


@pytest.mark.slow  # builds every explorer of the course (about 8 s)
def test_each_named_explorer_starts_where_its_cell_says(notebook_build):
    """The explorer built from the metadata, as the site builds it, has its controls at the cell's arguments."""
    for source in SOURCES:
        for c in notebook_build.read_source(source).cells:
            meta = c.metadata.get("explorer")
            if meta is None:
                continue
            module, _, attr = meta["class"].rpartition(".")
            explorer = getattr(importlib.import_module(module), attr)(**meta["kwargs"])
            try:
                assert {k: explorer.controls[k].value for k in meta["kwargs"]} == meta["kwargs"], (source.name, meta)
            finally:
                explorer.close()


def test_every_explorer_of_the_course_is_shown_by_some_notebook(notebook_build):
    from sdpa_helpers.widgets import all_explorers

    used = {c.metadata["explorer"]["class"] for s in SOURCES for c in notebook_build.read_source(s).cells
            if "explorer" in c.metadata}
    assert used == {f"{c.__module__}.{c.__qualname__}" for c in all_explorers()}


def test_explorer_cells_are_found_and_unrebuildable_ones_refused(cells):
    imports = "from sdpa_helpers.widgets.training import TrainingExplorer\nfrom sdpa_helpers.widgets import X"
    meta = cells.explorer_metadata([imports, None, "e = TrainingExplorer(d_k=64, lr=1.0)\ne", "TrainingExplorer()",
                                    "e = TrainingExplorer()\nprint(e)", "%matplotlib inline\nTrainingExplorer()",
                                    "def f():\n    return 1\nf()"])
    path = "sdpa_helpers.widgets.training.TrainingExplorer"
    assert meta == [None, None, {"class": path, "kwargs": {"d_k": 64, "lr": 1.0}}, {"class": path, "kwargs": {}},
                    None, {"class": path, "kwargs": {}}, None]
    for bad, why in [("TrainingExplorer(64)", "keyword arguments only"), ("TrainingExplorer(d_k=D_K)", "literals"),
                     ("TrainingExplorer(d_k=(1, 2))", "literals"), ("TrainingExplorer(**kw)", "keyword arguments")]:
        with pytest.raises(ValueError, match=rf"05_x.py, cell 1: .*{why}"):
            cells.explorer_metadata([imports, bad], "05_x.py")


def _built(cells_):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells_
    return nb


def test_the_build_refuses_a_widget_it_cannot_name(notebook_build):
    widget = nbformat.v4.new_output("display_data", data={WIDGET_MIME: {"model_id": "a" * 32}, "text/plain": "x"})
    shown = nbformat.v4.new_code_cell("make_a_widget()", outputs=[widget])
    with pytest.raises(RuntimeError, match=r"05_x.py, cell 0 shows a widget but does not end with an explorer"):
        notebook_build.check_explorer_cells(_built([shown]), "05_x.py")
    named = nbformat.v4.new_code_cell("print(1)", metadata={"explorer": {"class": "m.XExplorer", "kwargs": {}}})
    with pytest.raises(RuntimeError, match=r"cell 0 ends with m.XExplorer but shows no widget"):
        notebook_build.check_explorer_cells(_built([named]), "05_x.py")
    shown.metadata["explorer"] = {"class": "m.XExplorer", "kwargs": {}}
    notebook_build.check_explorer_cells(_built([shown]), "05_x.py")


def _site_cell(source: str, metadata: dict) -> dict:
    return {"cell_type": "code", "source": source, "metadata": metadata,
            "outputs": [{"output_type": "execute_result", "data": {WIDGET_MIME: {}, "text/plain": "x"}}]}


def test_the_site_builds_the_explorer_its_cell_names(site_build):
    from sdpa_helpers.widgets import all_explorers
    from sdpa_helpers.widgets.saturation import SaturationExplorer

    known = set(all_explorers())
    meta = {"class": "sdpa_helpers.widgets.saturation.SaturationExplorer", "kwargs": {"d_k": 16}}
    nb = {"cells": [{"cell_type": "markdown", "source": "# T", "metadata": {}},
                    _site_cell("whatever_it_says()", {"explorer": meta})]}
    found = site_build.explorer_cells(nb, "05_x.ipynb", known)
    assert [(e["cell"], e["cls"], e["kwargs"]) for e in found] == [(1, SaturationExplorer, {"d_k": 16})]
    nb["cells"][1]["metadata"] = {}
    with pytest.raises(site_build.MissingExplorer, match=r"05_x.ipynb, cell 1 .* names no explorer: rebuild .*05"):
        site_build.explorer_cells(nb, "05_x.ipynb", known)
    nb["cells"][1]["metadata"] = {"explorer": {"class": "sdpa_helpers.widgets.saturation.nothing", "kwargs": {}}}
    with pytest.raises(site_build.MissingExplorer, match=r"is not one of the course's explorers"):
        site_build.explorer_cells(nb, "05_x.ipynb", known)


def test_the_site_reads_every_stored_notebook(site_build):
    """Every stored notebook's explorer cells carry the metadata the build writes, and the site reads it."""
    from sdpa_helpers.widgets import all_explorers

    sys.path.insert(0, str(ROOT / "authoring"))
    import explorer_cells

    known = set(all_explorers())
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = site_build.load(path)
        expected = explorer_cells.explorer_metadata(
            [c["source"] if c["cell_type"] == "code" else None for c in nb["cells"]], path.name)
        for e in site_build.explorer_cells(nb, path.name, known):
            assert {"class": e["class"], "kwargs": e["kwargs"]} == expected[e["cell"]], (path.name, e["cell"])
            assert nb["cells"][e["cell"]]["metadata"]["explorer"] == expected[e["cell"]], (path.name, e["cell"])
        assert all("explorer" in nb["cells"][i]["metadata"] for i, m in enumerate(expected) if m), path.name
