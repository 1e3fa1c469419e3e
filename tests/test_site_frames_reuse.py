"""The site build never trusts a damaged earlier build (issue 37, item 4).

``make site`` reuses the previous build's frame tables and frames when nothing they depend on changed.
A table cut short (Ctrl-C or a full disk during its write), a missing or damaged frame file, or a build
made with other library versions or another SITE_REPO must be rebuilt, with one line saying why, never
a JSONDecodeError or FileNotFoundError. Tested on ``reuse`` and ``write_explorer`` directly (no full build).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "authoring" / "site"))

import frames as F  # noqa: E402


@pytest.fixture(scope="module")
def site_build():
    name = "site_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "authoring" / "site" / "build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class FakeExplorer:
    """A stand-in explorer class: three frames over one control."""


def explorer(site_build) -> dict:
    control = F.Control(name="d_k", label="d_k", kind="range", values=[1, 2, 4], labels=["1", "2", "4"], initial=0)
    e = {"id": "07-1", "cls": FakeExplorer, "kwargs": {"length": 8}, "controls": [control],
         "combos": F.combos([control])}
    e["key"] = site_build.frames_key(e)
    return e


def rendered(e) -> F.Rendered:
    r = F.Rendered(sizes=(10, 20))
    for combo in e["combos"]:
        r.files[F.frame_name(combo)] = f"frame {combo}".encode() * 50
        r.readouts[tuple(combo)] = f"readout {combo[0] % 2}"
    return r


@pytest.fixture
def built(site_build, tmp_path):
    """A previous build's frames folder, as ``write_explorer`` leaves it."""
    e = explorer(site_build)
    site_build.write_explorer(e, [rendered(e)], tmp_path)
    return e, tmp_path / "frames"


def test_a_sound_previous_build_is_reused_whole(site_build, built):
    e, frames = built
    again, why = site_build.reuse(e, frames)
    assert why == "" and again is not None
    assert again.files == rendered(e).files and again.readouts == rendered(e).readouts
    assert again.sizes == (10, 20)
    assert not [p for p in frames.rglob("*.tmp")], "no temporary file is left behind"


def test_a_truncated_table_is_rebuilt_not_a_json_error(site_build, built):
    e, frames = built
    table = frames / f"{e['id']}.json"
    table.write_bytes(table.read_bytes()[:57])
    again, why = site_build.reuse(e, frames)
    assert again is None and "does not parse" in why and table.name in why


@pytest.mark.parametrize("damage", ["missing", "empty", "changed"])
def test_a_missing_or_damaged_frame_file_is_rebuilt_not_a_file_error(site_build, built, damage):
    e, frames = built
    frame = frames / e["id"] / F.frame_name(e["combos"][1])
    if damage == "missing":
        frame.unlink()
    elif damage == "empty":
        frame.write_bytes(b"")
    else:
        data = bytearray(frame.read_bytes())
        data[3] ^= 0xFF  # same size, other bytes
        frame.write_bytes(bytes(data))
    again, why = site_build.reuse(e, frames)
    assert again is None and F.frame_name(e["combos"][1]) in why
    assert ("missing" if damage == "missing" else "damaged") in why


def test_another_site_repo_or_library_version_is_rebuilt(site_build, built, monkeypatch):
    e, frames = built
    monkeypatch.setattr(site_build, "REPO", "someone/course")
    again, why = site_build.reuse(e, frames)
    assert again is None and "site_repo" in why
    monkeypatch.undo()
    import numpy

    monkeypatch.setattr(numpy, "__version__", "0.0.1")
    again, why = site_build.reuse(e, frames)
    assert again is None and "numpy" in why


def test_a_table_of_an_older_build_without_its_versions_is_rebuilt(site_build, built):
    e, frames = built
    table_path = frames / f"{e['id']}.json"
    table = json.loads(table_path.read_text(encoding="utf-8"))
    del table["built_with"], table["files"]  # what the build wrote before issue 37
    table_path.write_text(json.dumps(table), encoding="utf-8")
    again, why = site_build.reuse(e, frames)
    assert again is None and "built with" in why


@pytest.mark.parametrize("table", ["[]", "{}", '{"key": null}'])
def test_a_table_of_another_shape_is_rebuilt(site_build, built, table):
    e, frames = built
    (frames / f"{e['id']}.json").write_text(table, encoding="utf-8")
    again, why = site_build.reuse(e, frames)
    assert again is None and why


def test_a_changed_key_or_no_previous_build_is_rebuilt(site_build, built):
    e, frames = built
    assert site_build.reuse(dict(e, key="other"), frames)[0] is None
    assert site_build.reuse(e, None) == (None, "no previous build")
    assert site_build.reuse(dict(e, id="07-9"), frames)[0] is None


def test_an_interrupted_write_leaves_the_old_file_whole(site_build, tmp_path, monkeypatch):
    """The table is written to a temporary file in its folder, then renamed over the old one: a write
    that stops half-way (here: the rename never happens) leaves the old table whole and no temporary."""
    path = tmp_path / "07-1.json"
    path.write_text('{"old": true}', encoding="utf-8")

    def stop(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", stop)
    with pytest.raises(KeyboardInterrupt):
        site_build.write_atomically(path, '{"new": true, "long": "' + "x" * 10_000 + '"}')
    assert json.loads(path.read_text(encoding="utf-8")) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["07-1.json"]


def test_the_render_step_says_why_it_rebuilds(site_build, built, capsys, monkeypatch, tmp_path):
    """One line per explorer saying why its frames are drawn again (here: a frame file is missing)."""
    e, frames = built
    (frames / e["id"] / F.frame_name(e["combos"][0])).unlink()
    page = type("P", (), {"explorers": [dict(e)]})()
    monkeypatch.setattr(site_build, "plan_frames", lambda e: e.update(controls=explorer(site_build)["controls"],
                                                                       combos=explorer(site_build)["combos"]))
    monkeypatch.setattr(F, "render_chunk", lambda cls, kwargs, chunk: rendered(e))
    out = tmp_path / "site"
    site_build.render_frames([page], out, jobs=1, previous=frames)
    line = [x for x in capsys.readouterr().out.splitlines() if "07-1" in x]
    assert line == [f"  frames: 07-1 FakeExplorer rebuilt: frame file 07-1/{F.frame_name(e['combos'][0])} is missing"]
    assert site_build.reuse(e, out / "frames")[1] == ""
