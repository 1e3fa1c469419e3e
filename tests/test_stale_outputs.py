"""No stale output passes: every stored notebook was made by today's package code and data (issue 40 §3).

Strict nbval compares text only: a stored figure, an explorer's fallback PNG or stored widget state made
by older code would pass it. Each build records the package files the notebook's kernel loaded (with the
front end and data) and their digest (``authoring/code_digest.py``); here every notebook's digest over its
list must be today's, ``authoring/build.py --check`` must name the notebooks a package change leaves behind
(those that loaded the changed file, and no other), and a notebook is written atomically (issue 37 item 7).
"""

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
sys.path.insert(0, str(ROOT / "authoring"))
import atomic  # noqa: E402
import build  # noqa: E402
import code_digest  # noqa: E402


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_were_made_by_todays_code(path):
    """The notebook's stored outputs come from today's sdpa_helpers (the digest over the files it recorded)."""
    why = code_digest.why_stale(path)
    assert why is None, f"{path.name}: {why}: rebuild with `.venv/bin/python authoring/build.py {path.name[:2]}`"
    files, _ = code_digest.recorded(path)
    assert set(code_digest.always_digested()) <= set(files), f"{path.name}: the front end and data are always listed"
    assert "sdpa_helpers/__init__.py" in files and "sdpa_helpers/exercises/__init__.py" in files, files
    nb = nbformat.read(path, as_version=4)
    for k, cell in enumerate(nb.cells):
        outs = cell.get("outputs", [])
        for a, b in zip(outs, outs[1:]):
            assert not (a.output_type == b.output_type == "stream" and a.name == b.name), \
                f"{path.name} cell {k}: two consecutive {a.name} outputs (the build merges them): rebuild it"


def test_digest_covers_code_and_data_and_ignores_line_endings(tmp_path):
    pkg = tmp_path / "sdpa_helpers"
    (pkg / "data").mkdir(parents=True)
    (pkg / "plots").mkdir()
    (pkg / "__init__.py").write_bytes(b"x = 1\n")
    (pkg / "plots" / "a.py").write_bytes(b"y = 2\n")
    (pkg / "data" / "grid.npz").write_bytes(b"\x00\x01")
    first = code_digest.code_digest(tmp_path)
    (pkg / "plots" / "a.py").write_bytes(b"y = 2\r\n")  # a Windows checkout
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (pkg / "notes.txt").write_text("not code")
    assert code_digest.code_digest(tmp_path) == first
    (pkg / "data" / "grid.npz").write_bytes(b"\x00\x02")
    second = code_digest.code_digest(tmp_path)
    assert second != first
    (pkg / "plots" / "a.py").write_bytes(b"y = 3\n")
    third = code_digest.code_digest(tmp_path)
    assert third not in (first, second)
    # the explorers' front end is stored in every notebook's widget state: a change to it is a change
    (pkg / "plots" / "front.js").write_bytes(b"var a = 1;\n")
    fourth = code_digest.code_digest(tmp_path)
    assert fourth != third
    (pkg / "plots" / "front.js").write_bytes(b"var a = 1;\r\n")
    assert code_digest.code_digest(tmp_path) == fourth
    # a notebook's digest covers the files it lists, and only those
    listed = ["sdpa_helpers/__init__.py", "sdpa_helpers/data/grid.npz"]
    mine = code_digest.code_digest(tmp_path, listed)
    assert mine not in (first, second, third, fourth)
    (pkg / "plots" / "a.py").write_bytes(b"y = 4\n")
    (pkg / "plots" / "b.py").write_bytes(b"new = 1\n")
    assert code_digest.code_digest(tmp_path, listed) == mine
    assert code_digest.always_digested(tmp_path) == ["sdpa_helpers/data/grid.npz", "sdpa_helpers/plots/front.js"]
    with pytest.raises(RuntimeError, match="outside"):  # a kernel that imported another copy of the package
        code_digest.notebook_files([str(tmp_path.parent / "elsewhere" / "sdpa_helpers" / "x.py")], tmp_path)
    assert code_digest.notebook_files([str(pkg / "plots" / "a.py")], tmp_path) == [
        "sdpa_helpers/data/grid.npz", "sdpa_helpers/plots/a.py", "sdpa_helpers/plots/front.js"]




def _copy_for_check(dst: Path) -> Path:
    """What ``build.py --check`` reads, copied: the sources, the package and the notebooks."""
    shutil.copytree(ROOT / "authoring" / "notebooks", dst / "authoring" / "notebooks")
    shutil.copytree(ROOT / "sdpa_helpers", dst / "sdpa_helpers", ignore=shutil.ignore_patterns("__pycache__"))
    (dst / "notebooks").mkdir()
    for path in NOTEBOOKS:
        shutil.copy2(path, dst / "notebooks" / path.name)
    return dst


def _check(root: Path, monkeypatch, capsys) -> tuple[int, str]:
    """``build.py --check`` on the copy at ``root`` (in this process: the CLI's own code, without the
    seconds of importing jupytext and nbclient again)."""
    monkeypatch.setattr(build, "ROOT", root)
    monkeypatch.setattr(build, "SOURCES", root / "authoring" / "notebooks")
    monkeypatch.setattr(build, "NOTEBOOKS", root / "notebooks")
    capsys.readouterr()
    code = build.main(["--check"])
    return code, capsys.readouterr().out


def _as_if_just_built(root: Path) -> dict[str, list[str]]:
    """Every notebook of the copy at ``root`` with the digest of its recorded files as they are in the copy
    (as if it had just been built); ``{notebook name: its files}``."""
    lists = {}
    for path in (root / "notebooks").glob("*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        files, _ = code_digest.recorded(path)
        assert files, f"{path.name} records no list of files: rebuild it"
        code_digest.record(nb["metadata"], files, root)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        lists[path.name] = files
    return lists


def test_a_package_change_that_alters_a_figure_makes_check_fail(tmp_path, monkeypatch, capsys):
    """In a copy whose notebooks are up to date, changing a figure's colour in sdpa_helpers/plots makes
    `build.py --check` exit 1 and name every notebook (each drew with plots); no rebuild is needed to notice it."""
    root = _copy_for_check(tmp_path)
    _as_if_just_built(root)
    fresh = _check(root, monkeypatch, capsys)
    assert fresh == (0, ""), fresh
    plots = root / "sdpa_helpers" / "plots" / "__init__.py"
    text = plots.read_text(encoding="utf-8")
    assert "SCALING_STYLES" in text
    plots.write_text(text + "\nSCALING_STYLES['sqrt'] = {**SCALING_STYLES['sqrt'], 'color': '#ff00ff'}\n",
                     encoding="utf-8")
    code, out = _check(root, monkeypatch, capsys)
    assert code == 1
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}: its outputs were made by other sdpa_helpers code" in out, out


def test_a_new_module_no_notebook_imports_stales_none(tmp_path, monkeypatch, capsys):
    """A new topic's modules -- math, figures, and an exercise bank for a notebook that does not exist yet --
    leave every built notebook up to date: exercise banks load when their notebook asks (exercises._load_banks)."""
    root = _copy_for_check(tmp_path)
    _as_if_just_built(root)
    pkg = root / "sdpa_helpers"
    (pkg / "brand_new.py").write_text('"""A new topic."""\n\nVALUE = 1.0\n', encoding="utf-8")
    (pkg / "plots" / "brand_new.py").write_text('"""Its figures."""\n', encoding="utf-8")
    (pkg / "exercises" / "brand_new.py").write_text(
        '"""Exercises of notebook 99."""\n\nfrom ..brand_new import VALUE\nfrom . import numeric_checker, register\n\n'
        'register("99.value", "What is VALUE?", "Read it.", numeric_checker(VALUE))\n', encoding="utf-8")
    assert _check(root, monkeypatch, capsys) == (0, "")


def test_editing_a_module_stales_the_notebooks_that_loaded_it_and_no_other(tmp_path, monkeypatch, capsys):
    """A module one notebook loaded (its own topic's) is edited: --check names that notebook and no other;
    deleted, the notebook is named for the missing file."""
    root = _copy_for_check(tmp_path)
    lists = _as_if_just_built(root)
    users: dict[str, list[str]] = {}
    for name, files in lists.items():
        for f in files:
            users.setdefault(f, []).append(name)
    only = sorted((f, names[0]) for f, names in users.items() if len(names) == 1 and f.endswith(".py"))
    assert only, "no module is loaded by one notebook alone"
    rel, owner = only[0]
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    code, out = _check(root, monkeypatch, capsys)
    assert code == 1 and out.count("out of date:") == 1, out
    assert f"notebooks/{owner}: its outputs were made by other sdpa_helpers code" in out, out
    path.unlink()
    code, out = _check(root, monkeypatch, capsys)
    assert code == 1 and out.count("out of date:") == 1 and f"notebooks/{owner}: {rel} is gone" in out, out


def test_the_site_refuses_notebooks_from_other_code(tmp_path):
    """``code_digest.refuse_mixed_code`` (called by the site build) names every stale notebook: another
    digest, no record, a recorded file that is gone."""
    pkg = tmp_path / "sdpa_helpers"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "gone.py").write_text("y = 1\n")
    good, old, none, gone = (tmp_path / f"0{i}_x.ipynb" for i in range(4))
    for path in (good, old, none, gone):
        meta: dict = {}
        if path is not none:
            code_digest.record(meta, ["sdpa_helpers/__init__.py"] + (["sdpa_helpers/gone.py"] if path is gone else []),
                               tmp_path)
        if path is old:
            meta[code_digest.KEY] = "sha256:0"
        path.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
    (pkg / "gone.py").unlink()
    code_digest.refuse_mixed_code([good], tmp_path)
    with pytest.raises(RuntimeError, match=r"01_x\.ipynb, 02_x\.ipynb, 03_x\.ipynb .*build\.py 01 02 03"):
        code_digest.refuse_mixed_code([good, old, none, gone], tmp_path)


def _notebook(text: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])


def test_an_interrupted_write_keeps_the_previous_notebook(tmp_path, monkeypatch):
    """Issue 37 item 7: the old build opened the notebook for writing (truncating it) before it had the
    text; a failure or a Ctrl-C then left an empty or truncated .ipynb. Now: the old one, whole."""
    path = tmp_path / "00_x.ipynb"
    build.write_notebook(_notebook("first"), path)
    before = path.read_bytes()
    broken = _notebook("second")
    broken.metadata["unserialisable"] = object()  # fails halfway through serialising
    with pytest.raises(TypeError):
        build.write_notebook(broken, path)
    assert path.read_bytes() == before

    def interrupted(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build.write_notebook(_notebook("third"), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["00_x.ipynb"], "no temporary file left behind"
    nbformat.validate(nbformat.read(path, as_version=4))


def test_consecutive_streams_are_merged_deterministically():
    out = [nbformat.v4.new_output("stream", name=n, text=t)
           for n, t in (("stdout", "a\n"), ("stdout", "b\n"), ("stderr", "w\n"), ("stdout", "c\n"))]
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    cell = nbformat.v4.new_code_cell("...", outputs=[nbformat.from_dict(dict(o)) for o in out[:2] + [png] + out])
    got = build.merge_streams(nbformat.v4.new_notebook(cells=[cell])).cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in got] == [
        ("stream", "stdout", "a\nb\n"), ("display_data", None, None), ("stream", "stdout", "a\nb\n"),
        ("stream", "stderr", "w\n"), ("stream", "stdout", "c\n")]


# -- stored figures, compared loosely with a fresh draw where that is cheap ------------------------

#: Figures a test can re-draw in a few seconds: (notebook, code cells whose PNG is compared). The cells
#: before them are run in this process (the setup cell's magics left out), as the kernel ran them.
REDRAWN = ("01_dot_products.ipynb", (8, 16))
#: A pixel "differs" when a channel is off by more than this many levels (antialiasing, fonts) ...
PIXEL_LEVELS = 32
#: ... and a picture differs when more than this fraction of its pixels do.
PIXEL_FRACTION = 0.002


def redraw(path: Path, indices) -> dict:
    """``{index: (fresh PNG, stored PNG)}``: the notebook's cells run in order up to the last index, each
    listed cell's last expression (a Figure, or an Axes' ``.figure``) drawn as IPython's inline backend does."""
    import ast
    import base64

    from IPython.core.pylabtools import print_figure

    nb = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    drawn = {}
    for k, cell in enumerate(nb.cells[:max(indices) + 1]):
        if cell.cell_type != "code":
            continue
        tree = ast.parse("\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith("%")))
        last = tree.body.pop() if k in indices else None
        exec(compile(tree, f"{path.name} cell {k}", "exec"), namespace)  # noqa: S102  (the course's own code)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), f"{path.name} cell {k}", "eval"), namespace)
            stored = next(base64.b64decode(o["data"]["image/png"]) for o in cell.outputs
                          if "image/png" in o.get("data", {}))
            drawn[k] = (print_figure(getattr(value, "figure", value), "png"), stored)
    return drawn


def pictures_differ(a: bytes, b: bytes) -> str:
    """Why two PNGs are different pictures ("" if they agree within the tolerance)."""
    from io import BytesIO

    import numpy as np
    from PIL import Image

    x, y = (np.asarray(Image.open(BytesIO(png)).convert("RGB")).astype(int) for png in (a, b))
    if x.shape != y.shape:
        return f"sizes {x.shape[:2]} and {y.shape[:2]}"
    off = (np.abs(x - y).max(axis=2) > PIXEL_LEVELS).mean()
    return f"{off:.2%} of the pixels differ" if off > PIXEL_FRACTION else ""


@pytest.mark.slow  # a few seconds of the notebook's own cells
def test_stored_figures_are_what_todays_code_draws(monkeypatch):
    """01's stored figures agree with a fresh draw (a tolerance, not bytes); drawn again after a change of
    the package's palette (the reference curves of cell 16 from black to magenta), they do not."""
    path = ROOT / "notebooks" / REDRAWN[0]
    for k, (fresh, stored) in redraw(path, REDRAWN[1]).items():
        assert not pictures_differ(fresh, stored), \
            f"{path.name} cell {k}: {pictures_differ(fresh, stored)}: rebuild it (authoring/build.py {path.name[:2]})"
    from sdpa_helpers import plots
    monkeypatch.setitem(plots.OKABE_ITO, "black", "#ff00ff")  # the colour of cell 16's dotted sqrt(d_k) curves
    fresh, stored = redraw(path, (16,))[16]
    assert pictures_differ(fresh, stored), "a changed curve colour went unnoticed"


def test_the_build_scripts_examples_hold():
    """The doctests of authoring/build.py and authoring/code_digest.py (not under the package's doctest run)."""
    import doctest
    for module in (build, code_digest):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, f"{module.__name__}: {result}"


def test_stable_widget_ids_do_not_depend_on_the_kernels_uuids():
    """Two sliders that differ, each with its own style of equal content, and nothing displayed: the
    stored bytes are the same whatever uuids the kernel drew (sorting by content alone left the two
    styles in uuid order, so a rebuild could swap which slider got which style id)."""
    def notebook(slider_a, slider_b, style_a, style_b):
        state = {slider_a: {"state": {"step": 4, "style": "IPY_MODEL_" + style_a}},
                 slider_b: {"state": {"step": 1, "style": "IPY_MODEL_" + style_b}},
                 style_a: {"state": {"handle_color": None}}, style_b: {"state": {"handle_color": None}}}
        return nbformat.v4.new_notebook(metadata={"widgets": {
            "application/vnd.jupyter.widget-state+json": {"state": state}}})

    def stored(nb):
        return json.dumps(build.stable_widget_ids(nb, "07_x"), sort_keys=True)

    ids = [c * 32 for c in "1289"]
    once = stored(notebook(*ids))  # style of the step-4 slider sorts first by uuid ...
    swapped = stored(notebook(ids[0], ids[1], ids[3], ids[2]))  # ... and here last
    assert once == swapped
    state = json.loads(once)["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert {s["state"]["style"][10:] for s in state.values() if "step" in s["state"]} <= set(state)
