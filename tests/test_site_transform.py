"""The static site's notebook → notebook step (authoring/site/transform.py) and the one page template.

No browser: a small notebook goes through the transform (explorer and exercise outputs replaced, figures
to files with their author's alt text, deep dives marked) and the template renders it; the stored
notebooks' deep dives fold as the page shows them. tests/test_site*.py check the built site in Chromium.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "authoring" / "site"))

import transform as T  # noqa: E402

WIDGET = {"output_type": "execute_result", "data": {T.WIDGET_MIME: {}, "text/plain": "▶ Run this cell"},
          "metadata": {}, "execution_count": 1}
PNG = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}, "metadata": {}}


def md(source, tags=()):
    return {"cell_type": "markdown", "source": source, "metadata": {"tags": list(tags)} if tags else {}}


def code(source, outputs=(), tags=(), **metadata):
    return {"cell_type": "code", "source": source, "outputs": list(outputs), "execution_count": None,
            "metadata": ({"tags": list(tags)} if tags else {}) | metadata}


def notebook():
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        md("# Title"),                                                         # 0
        code("ax = plots.spread()\nax.figure", [PNG], alt="Spread against d_k: slope 1/2."),  # 1
        md("## Deep dive: why $1/2$\n\nBecause.", ["deep-dive"]),              # 2
        code("print(1)", [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}], ["deep-dive"]),  # 3
        md("## Deep dive: a second one", ["deep-dive"]),                       # 4
        code("explorer = XExplorer(d_k=4)\nexplorer", [WIDGET], ["deep-dive"]),  # 5
        md("## 2. Back on the main line"),                                     # 6
        code("check(\"05.softmax_max\", 0.5)", [{"output_type": "stream", "name": "stdout", "text": "✔"}]),  # 7
        code("check('05.stable_softmax', f)", []),                             # 8
        code("x = 1", [], ["deep-dive"]),                                      # 9: a deep dive with no heading
        {"cell_type": "raw", "source": "raw", "metadata": {}},                 # 10: not shown
    ]}


def run(nb, figures=None):
    figures = [] if figures is None else figures

    def figure(cell, i, png):
        figures.append((i, png))
        return f"img/x-{len(figures)}.png", cell["metadata"]["alt"]

    return T.transform(T.normalize(nb), explorers={5: "<figure class='explorer'>E</figure>"},
                       exercise=lambda key: (f"<form>{key}</form>", key != "05.stable_softmax"), figure=figure)


def test_the_transform_replaces_outputs_and_leaves_its_input_alone():
    nb = T.normalize(notebook())
    before = copy.deepcopy(nb)
    figures = []
    out = run(nb, figures)
    assert nb == before
    cells = out["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "code"] * 2 + ["markdown", "code"] * 1 + \
        ["markdown", "code", "code", "code"]  # the raw cell is gone
    assert cells[5]["outputs"] == [T.html_output("<figure class='explorer'>E</figure>")]
    assert cells[5]["source"] == "explorer = XExplorer(d_k=4)\nexplorer"  # the code stays
    assert cells[7]["outputs"] == [T.html_output("<form>05.softmax_max</form>")]
    assert T.HIDE_INPUT_TAG in cells[7]["metadata"]["tags"]  # an answer box: its code is hidden
    assert cells[8]["outputs"] == [T.html_output("<form>05.stable_softmax</form>")]
    assert T.HIDE_INPUT_TAG not in cells[8]["metadata"].get("tags", [])  # a function: the code stays
    assert figures == [(1, "iVBORw0KGgo=")]
    assert cells[1]["outputs"][0]["metadata"] == {"filenames": {"image/png": "img/x-1.png"},
                                                  "alt": "Spread against d_k: slope 1/2."}
    assert cells[3]["outputs"][0]["text"] == "1\n"  # multiline strings joined


def test_deep_dives_are_marked_where_they_open_and_close():
    cells = run(notebook())["cells"]
    marks = [(i, c["metadata"].get("site")) for i, c in enumerate(cells) if c["metadata"].get("site")]
    assert marks == [(2, {"dive": "Deep dive: why $1/2$"}), (3, {"dive_end": True}),
                     (4, {"dive": "Deep dive: a second one"}), (5, {"dive_end": True}),
                     (9, {"dive": "Deep dive", "dive_end": True})]
    assert cells[2]["source"] == "\nBecause."  # the heading left the cell for the summary
    assert cells[4]["source"].strip() == ""


@pytest.fixture(scope="module")
def site_build():
    name = "site_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "authoring" / "site" / "build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def render(site_build, nb) -> str:
    page = {"title": "Title", "cells": nb["cells"]}
    pages = [type("P", (), {"stem": "05_x", "title": "Title"})()]
    return site_build.environment().get_template(site_build.TEMPLATE).render(
        page=page, pages=pages, k=0, binder="https://binder.example", **site_build.links())


def test_the_template_renders_the_transformed_notebook(site_build):
    text = render(site_build, run(notebook()))
    assert text.count('<details class="deep-dive">') == 3 and text.count("</details>") == 3 + 1  # + the contents
    assert re.search(r'<summary>Deep dive: why <span class="math">.*?</span></summary>', text)
    assert '<img class="figure" src="img/x-1.png" alt="Spread against d_k: slope 1/2." loading="lazy">' in text
    assert "<figure class='explorer'>E</figure>" in text  # HTML outputs as they are
    assert '<div class="cell exercise-cell"><div class="output html"><form>05.softmax_max</form>' in text
    assert text.count('<div class="cell code-cell">') == 5 and text.count('<div class="cell exercise-cell">') == 1
    assert '<pre class="output stdout">1\n</pre>' in text
    assert "raw" not in re.sub(r"<[^>]+>", "", text).split()  # the raw cell is not shown
    assert "<script>" not in text and "{{" not in text


def test_text_is_escaped_and_html_outputs_are_not(site_build):
    nb = {"cells": [code("print('<b>')", [{"output_type": "stream", "name": "stdout", "text": "<b>&"}]),
                    code("x", [{"output_type": "execute_result", "metadata": {},
                                "data": {"text/plain": "<i>", "text/html": "<table><tr><td>1</td></tr></table>"}}])]}
    text = render(site_build, run(nb))
    assert '<pre class="output stdout">&lt;b&gt;&amp;</pre>' in text
    assert '<div class="output html"><table><tr><td>1</td></tr></table></div>' in text


def test_an_exercise_spec_is_script_safe(site_build):
    spec = {"key": "05.x", "kind": "number", "shape": [], "question": "a </script> b", "hint": "é"}
    html = site_build.macros().exercise(spec, "https://binder.example")
    data = re.search(r'<script type="application/json" class="exercise-spec">(.*?)</script>', str(html)).group(1)
    assert json.loads(data) == spec and "</script" not in data


def test_every_stored_notebook_folds_each_deep_dive_once():
    """Each deep dive of the stored notebooks opens once (at its heading) and closes once, in order."""
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = T.normalize(json.loads(path.read_text(encoding="utf-8")))
        cells = [c for c in nb["cells"] if c["cell_type"] in ("markdown", "code")]
        headings = [i for i, c in enumerate(cells) if c["source"].lstrip().startswith("## Deep dive")]
        T.mark_deep_dives(cells)
        opened = [i for i, c in enumerate(cells) if "dive" in c["metadata"].get("site", {})]
        assert headings and set(headings) <= set(opened), path.name
        depth = 0
        for c in cells:
            site = c["metadata"].get("site", {})
            depth += "dive" in site
            assert depth in (0, 1), path.name
            assert (depth == 1) == ("deep-dive" in c["metadata"].get("tags", [])), (path.name, c["source"][:40])
            depth -= site.get("dive_end", False)
        assert depth == 0, path.name
