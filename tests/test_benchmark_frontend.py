"""The explorer front end benchmark's table makers (benchmarks/explorer_frontend.py, issue 39) and the
page-side split of a first visit (tests/browser_support.split): pure functions, checked against numbers
worked out by hand and by the standard library, no browser."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import browser_support as bs  # noqa: E402
import explorer_frontend as ef  # noqa: E402


def step(ms, first=True, prefetched=False, draw=None):
    """One key press record as sweep_main_control makes it; ``draw`` the kernel's ms (asked frames)."""
    split = {}
    if draw is not None:
        split = {"to_request": 1.0, "kernel_draw": draw, "link": ms - draw - 1.0 - 4.0, "decode_paint": 4.0}
    return {"image_ms": ms, "first_visit": first, "prefetched": prefetched, "split": split}


def floor_record(mode, when, values):
    return {"explorer": "floor", "mode": mode, "when": when, "grid": None,
            "steps": [{"image_ms": v, "first_visit": i < 4} for i, v in enumerate(values)]}


FLOOR_LAB = [50.0, 60.0, 70.0, 80.0]
FLOOR_LAB_END = [40.0, 45.0, 55.0, 65.0]
RECORDS = [
    floor_record("lab", "start", FLOOR_LAB),
    floor_record("voila", "start", [30.0, 31.0, 32.0, 33.0]),
    # first visits: three asked of the kernel, one already cached (not counted), the way back all hits
    {"explorer": "A", "mode": "lab-first", "grid": None,
     "steps": [step(90.0, draw=20.0), step(130.0, draw=50.0), step(110.0, draw=30.0),
               step(5.0, prefetched=True), step(3.0, first=False, prefetched=True)]},
    {"explorer": "A", "mode": "lab", "grid": {"frames": 13, "ms": 12_500},
     "steps": [step(v, prefetched=True) for v in (3.0, 4.0, 5.0, 90.0)]},
    {"explorer": "A", "mode": "voila", "error": "timed out"},
    {"explorer": "B", "mode": "lab", "grid": {"frames": 6, "ms": 400},
     "steps": [step(v, prefetched=True) for v in (2.0, 3.0, 4.0, 5.0)]},
    floor_record("lab", "end", FLOOR_LAB_END),
]


def test_split_adds_up_to_the_key_press_and_is_empty_for_a_frame_in_the_browser():
    press = {"key": 1000.0, "painted": 1100.0}
    got = bs.split(press, {"sent": 1002.0, "arrived": 1090.0, "ms": 30.0})
    assert got == {"to_request": 2.0, "kernel_draw": 30.0, "link": 58.0, "decode_paint": 10.0}
    assert sum(got.values()) == press["painted"] - press["key"]
    assert bs.split(press, None) == {} and bs.split(press, {"sent": 1002.0}) == {}


def test_summary_pools_the_floor_over_both_passes_and_divides_first_visits_by_it():
    s = ef.summary(RECORDS)
    lab = s["floor"]["lab"]
    assert lab["median"] == pytest.approx(statistics.median(FLOOR_LAB + FLOOR_LAB_END))
    assert lab["n"] == 8
    assert lab["passes"] == {"start": statistics.median(FLOOR_LAB), "end": statistics.median(FLOOR_LAB_END)}
    first = s["explorers"]["A"]["first"]
    assert (first["n"], first["of"]) == (3, 4)  # the cached forward press is not a first visit to the kernel
    assert first["median"] == 110.0
    assert first["kernel_draw"] == 30.0 and first["rest"] == statistics.median([70.0, 80.0, 80.0])
    assert first["ratio"] == pytest.approx(110.0 / statistics.median(FLOOR_LAB + FLOOR_LAB_END))
    assert s["explorers"]["A"]["lab"]["median"] == 4.5
    assert s["explorers"]["A"]["grid"] == {"lab": 12.5} and s["explorers"]["A"]["frames"] == 13


def test_judge_names_each_miss():
    s = ef.summary(RECORDS)
    ok, misses = ef.judge(s["explorers"]["A"])
    # p95 of (3, 4, 5, 90) is 77.25 > 60; first visit 110 > 100; grid 12.5 s > 10; Voila failed
    assert ok is False
    assert misses == ["prefetched lab", "first visit", "grid lab", "voila not measured"]
    assert ef.judge(s["explorers"]["B"]) == (True, [])
    assert ef.judge({"errors": {}, "grid": {}}) == (None, [])


def test_rows_and_the_wide_table_put_the_floor_first_and_every_explorer_once():
    rows = ef.rows(RECORDS)
    assert [r.ok for r in rows] == [None, False, True]
    assert rows[0].what.startswith("explorer front end, floor")
    assert "= 1.91× floor" in rows[1].measured  # 110 / 57.5, the floor pooled over both passes
    assert "missed: prefetched lab, first visit, grid lab, voila not measured" in rows[1].measured
    lines = ef.markdown(RECORDS).splitlines()
    assert len(lines) == 2 + 3
    assert len({line.count("|") for line in lines}) == 1  # every row has every column
    assert lines[2].startswith("| **floor**") and lines[3].startswith("| A |") and lines[4].startswith("| B |")
    assert "| 110 | 1.91 | 30 / 80 | 1 / 75 / 4 |" in lines[3]
