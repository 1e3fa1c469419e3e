"""Notebook 09's "The answer, revisited": every number of the evidence table is the one its named
notebook prints in its stored output (outside the table itself), and the claims the table backs
hold (issue 29)."""

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from sdpa_helpers import training
from sdpa_helpers.training import Evidence, format_evidence, seed_summary

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = {p.name[:2]: p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
TABLE_CELL = "format_evidence"  # in the source of the cells that print the table (main line: the answer's rows)
FULL_TABLE_CELL = "format_evidence(evidence)"  # the deep dive's cell, which prints every row


def stored_text(path, skip=None):
    """All stored text outputs of a notebook, except cells whose source contains ``skip``."""
    nb = nbformat.read(path, as_version=4)
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code" or (skip and skip in cell.source):
            continue
        for out in cell.outputs:
            parts.append(out.get("text", "") if out.output_type == "stream"
                         else str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def stored_table(cell_source=FULL_TABLE_CELL):
    """The rows of the evidence table as notebook 09 stores it: (part, claim, values, notebook)."""
    nb = nbformat.read(NOTEBOOKS["09"], as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and cell_source in c.source]
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    lines = text.strip().splitlines()
    assert lines[0].split(" | ")[0].strip() == "part", "the table starts with its header"
    rows = []
    for line in lines[1:]:
        part, claim, values, notebook = (c.strip() for c in line.split(" | "))
        rows.append(Evidence(part, claim, tuple(values.split("; ")), notebook))
    return rows


def test_the_table_covers_the_three_parts_and_the_course():
    rows = stored_table()
    assert [r.part for r in rows] == sorted((r.part for r in rows), key=training.PARTS.index), "parts in order"
    assert {r.part for r in rows} == set(training.PARTS)
    assert {"00", "09"} <= {r.notebook for r in rows} and len({r.notebook for r in rows}) >= 4


def test_the_main_line_shows_rows_of_the_whole_table_for_each_part():
    """The main line prints the rows the three sentences need (each part at least once), each exactly as the
    deep dive's whole table prints it; the rest is folded."""
    nb = nbformat.read(NOTEBOOKS["09"], as_version=4)
    (main,) = [c for c in nb.cells if c.cell_type == "code" and TABLE_CELL in c.source
               and FULL_TABLE_CELL not in c.source]
    (full,) = [c for c in nb.cells if c.cell_type == "code" and FULL_TABLE_CELL in c.source]
    assert "deep-dive" not in main.metadata.get("tags", []) and "deep-dive" in full.metadata.get("tags", [])
    shown, every = stored_table("ANSWER_ROWS"), stored_table()
    assert set(shown) < set(every) and {r.part for r in shown} == set(training.PARTS)


@pytest.mark.parametrize("row", stored_table(), ids=lambda r: f"{r.notebook}-{r.claim[:30]}")
def test_each_number_is_what_its_notebook_prints(row):
    """Rows of 00, 02 and 09 match their stored output; the other rows (04, 06) are recomputed by
    ``course_evidence`` with the package's functions and the source notebook's seed, rounded for
    the table, so they do not depend on how those notebooks print (their claims: below)."""
    if row.notebook not in ("00", "02", "09"):
        pytest.skip("recomputed with the package's functions, not matched to printed text")
    skip = TABLE_CELL if row.notebook == "09" else None
    text = stored_text(NOTEBOOKS[row.notebook], skip)
    for value in row.values:
        assert re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text), \
            f"{value!r} ({row.claim}) is not in the stored output of notebook {row.notebook}"


def test_the_claims_hold():
    """What the answer says of each number (the notebooks' checks stay neutral where a Predict asks)."""
    rows = {r.claim: tuple(r.values) for r in stored_table()}
    parts = {r.claim: r.part for r in stored_table()}

    def num(claim_start, i=0):
        (values,) = [v for c, v in rows.items() if c.startswith(claim_start)]
        return float(values[i].rstrip("%").strip())

    assert abs(num("Var(q·k), d_k = 256") / 256 - 1) < 0.05
    (exact,) = [v for c, v in rows.items() if c.startswith("Var(q·k), ±1 components")]
    assert exact == ("1 2 3 4",)  # Var(q·k) = d_k, exactly
    assert abs(num("slope of log spread", 0) - 0.5) < 0.05 and abs(num("slope of log spread", 1)) < 0.05
    assert max(num("16 keys, scaled, d_k = 4", i) for i in range(3)) < 6  # per cent
    assert min(num("16 keys, unscaled, d_k = 64 and 128", i) for i in range(2)) > 50  # per cent of queries committed
    assert num("outside its condition (09's task, 8 keys), d_k = 1024, at the start: the median example") < 0.01
    # where part 2's gradient clause stops (labelled commitment: gradient sizes at the start, not speed)
    assert num("where it stops: 1024 keys, d_k = 64") > 1  # larger unscaled
    query = "where it stops: 8 keys, d_k = 64, at the start: mean gradient"
    assert num(query, 0) > num(query, 1)
    assert num("where it stops: d_k = 1024, at the start: the batch gradient") > 1
    assert all(part == "commitment" for c, part in parts.items()
               if c.startswith("where it stops") and ("gradient" in c or "‖J‖" in c))
    assert num("SGD, d_k = 1024, each at its best η", 2) > 5
    assert num("Adam, d_k = 1024, each at its best η", 2) > 5

    def medians(claim_start, i):
        (values,) = [v for c, v in rows.items() if c.startswith(claim_start)]
        return np.array(values[i].split(), dtype=float)

    # part 3, each model at its best rate (d_k = 4 ... 1024): the unscaled head needs more steps as d_k grows
    # (from 16 on under SGD, where 4 and 16 tie; at every step under Adam), the scaled head about the same
    for optimizer in ("SGD", "Adam"):
        unscaled, scaled = (medians(f"{optimizer}, each at its best η", i) for i in (0, 1))
        assert np.all(np.diff(unscaled) >= 0) and np.all(np.diff(unscaled[1:]) > 0), optimizer
        assert unscaled[-1] > 2 * unscaled[1] and scaled[1:].max() <= 1.1 * scaled[1:].min(), optimizer
    assert np.all(np.diff(medians("Adam, each at its best η", 0)) > 0)


def test_recomputed_rows_match_the_stored_table():
    """The rows that do not need notebook 09's initial statistics are recomputed identically."""
    stored = {r.claim: r for r in stored_table()}
    fake = {k: seed_summary([float(stored[c].values[0])]) for k, c in
            (("median", next(c for c in stored if "median example" in c)),
             ("batch", next(c for c in stored if "batch gradient" in c)))}
    fresh = training.course_evidence(training.training_grid(), fake)
    assert [r.claim for r in fresh] == list(stored)
    for r in fresh:
        assert r == stored[r.claim], r.claim


def test_format_evidence_refuses_an_empty_table():
    with pytest.raises(TypeError, match="rows"):
        format_evidence([])


def test_course_evidence_names_a_missing_ratio():
    with pytest.raises(ValueError, match="init_ratio"):
        training.course_evidence(training.training_grid(), {"median": seed_summary([1.0])})
