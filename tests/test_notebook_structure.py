"""Every notebook: built from its source, the course skeleton, clean stored outputs."""

import json
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
    nb = load(path)
    seen_figure = False
    for cell in code_cells(nb):
        if any(WIDGET_MIME in o.get("data", {}) for o in cell.outputs):
            assert seen_figure, f"explorer in cell {cell.execution_count} without a static figure before it"
            seen_figure = False
        if any("image/png" in o.get("data", {}) for o in cell.outputs):
            seen_figure = True


def test_start_here_maps_every_notebook():
    text = markdown(load(NOTEBOOKS[0]))
    for path in NOTEBOOKS[1:]:
        assert f"]({path.name})" in text, f"notebook 00's map does not link {path.name}"


def test_readme_maps_every_notebook():
    readme = (ROOT / "README.md").read_text()
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}" in readme, f"README's map does not list {path.name}"
