"""`make notebooks` never overwrites a notebook someone changed (issue 18, section 2).

Each built notebook carries a fingerprint of its cells in its metadata; the build refuses to
overwrite a notebook whose cells no longer match it (a learner added a cell, ran it, edited
it) unless told ``--force``, and says so. The fingerprint keeps rebuilds byte-identical.
"""

import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def build():
    spec = importlib.util.spec_from_file_location("sdpa_build", ROOT / "authoring" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sdpa_build"] = module
    spec.loader.exec_module(module)
    return module


def _built_notebook():
    nb = nbformat.v4.new_notebook()
    nb.metadata = nbformat.from_dict({"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                                     "language": "python"}, "language_info": {"name": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="aaaa0001"),
                nbformat.v4.new_code_cell("print(1 + 1)", id="aaaa0002",
                                          outputs=[nbformat.v4.new_output("stream", text="2\n")],
                                          execution_count=1)]
    return nb


def test_the_fingerprint_is_deterministic_and_ignores_itself(build):
    nb = _built_notebook()
    first = build.fingerprint(nb)
    nb.metadata[build.FINGERPRINT_KEY] = first
    assert build.fingerprint(nb) == first
    assert build.fingerprint(_built_notebook()) == first
    changed = _built_notebook()
    changed.cells[1].outputs[0].text = "3\n"
    assert build.fingerprint(changed) != first


def test_rebuilding_an_unchanged_notebook_is_byte_identical(build, tmp_path):
    path = tmp_path / "01_x.ipynb"
    build.write_notebook(_built_notebook(), path)
    first = path.read_bytes()
    build.write_notebook(_built_notebook(), path)
    assert path.read_bytes() == first
    assert json.loads(first)["metadata"][build.FINGERPRINT_KEY] == build.fingerprint(_built_notebook())


@pytest.mark.parametrize("edit", ["add a cell", "run a cell", "edit a cell"])
def test_a_changed_notebook_is_not_overwritten_without_force(build, tmp_path, edit):
    path = tmp_path / "01_x.ipynb"
    build.write_notebook(_built_notebook(), path)
    nb = nbformat.read(path, as_version=4)
    if edit == "add a cell":
        nb.cells.append(nbformat.v4.new_code_cell("my_notes = 42", id="bbbb0001"))
    elif edit == "run a cell":
        nb.cells[1].execution_count = 7
    else:
        nb.cells[0].source = "# Title, with my notes"
    nbformat.write(nb, path)
    learner_version = path.read_bytes()
    with pytest.raises(build.Refused) as info:
        build.write_notebook(_built_notebook(), path)
    assert "--force" in str(info.value) and path.name in str(info.value)
    assert path.read_bytes() == learner_version
    build.write_notebook(_built_notebook(), path, force=True)
    assert path.read_bytes() != learner_version


def test_a_notebook_built_before_fingerprints_is_overwritten(build, tmp_path):
    path = tmp_path / "01_x.ipynb"
    nbformat.write(_built_notebook(), path)  # no fingerprint in its metadata
    build.write_notebook(_built_notebook(), path)
    assert build.FINGERPRINT_KEY in json.loads(path.read_text())["metadata"]


def test_the_command_line_offers_force_and_refuses_before_executing(build, tmp_path, monkeypatch, capsys):
    source = tmp_path / "authoring" / "01_x.py"
    source.parent.mkdir()
    source.write_text("# %% [markdown]\n# # Title\n")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = _built_notebook()
    nb.metadata[build.FINGERPRINT_KEY] = "sha256:not-this-notebook"
    nbformat.write(nb, notebooks / "01_x.ipynb")
    monkeypatch.setattr(build, "SOURCES", source.parent)
    monkeypatch.setattr(build, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("executed a notebook it must not overwrite"))
    assert build.main(["01"]) != 0
    err = capsys.readouterr().err
    assert "--force" in err and "01_x.ipynb" in err
