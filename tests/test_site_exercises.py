"""The exercises answered in the site's pages (issue 30 §1): the equal-verdict test.

For every exercise whose answer is a number, a tuple or a choice, the same answers -- right (as
typed at three figures and at full precision), every named slip, wrong, and malformed (text in a
number box, an empty box, too few figures) -- go to Python's ``check()`` and to the page in
Chromium (outside requests aborted), served from 127.0.0.1 and opened from ``file://``; the
verdict lines must be equal, word for word. Exercises that ask for a function point to the
notebook (Binder, ``make lab``). Solutions start folded. Progress stays in localStorage and the
contents page shows it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import shutil

import numpy as np
import pytest
import test_site as ts

from sdpa_helpers import exercises
from sdpa_helpers.exercises import _figures as F

PAGES, SKIP, new_page, probe = ts.PAGES, ts.SKIP, ts.new_page, ts.probe
site, manifest, server, chromium = ts.site, ts.manifest, ts.server, ts.chromium  # the site's fixtures


def _typed(x: float, figures: int | None = 3) -> str:
    """How a learner types ``x``: an integer as itself, anything else at ``figures`` figures."""
    x = float(x)
    if x.is_integer():
        return str(int(x))
    return f"{x:.{figures}g}" if figures else F.js_number(x)


def answers_for(key: str) -> list:
    """Right, every slip, wrong, malformed: as the page's boxes take them (text), one list per answer."""
    c = exercises.get(key).checker
    kind = c.kind
    if kind == "choice":
        return ["", *c.options]
    if kind == "choices":
        return [tuple(combo) for combo in itertools.product(*[["", *slot] for slot in c.slots])]
    flat = np.ravel(c.expected).tolist()
    shape = np.shape(c.expected)
    same = [s for s in c.slips if np.shape(s.value) == shape]
    rows = [[_typed(x) for x in flat], [_typed(x, None) for x in flat],
            *[[_typed(v) for v in np.ravel(s.value).tolist()] for s in same],
            *[[_typed(v, None) for v in np.ravel(s.value).tolist()] for s in same],
            [_typed(x * 1.37 + 0.5) for x in flat],  # wrong, no slip
            [f"{x:.2g}" for x in flat],  # too few figures (where the exact value has more)
            ["abc", *[_typed(x) for x in flat[1:]]], ["", *[_typed(x) for x in flat[1:]]],
            ["1,5", *[_typed(x) for x in flat[1:]]], ["0.5.1", *[_typed(x) for x in flat[1:]]]]
    if len(flat) > 1:
        rows.append([_typed(flat[0]), "", *[_typed(x) for x in flat[2:]]])
        rows.append([_typed(flat[0]), _typed(flat[1] * 3 + 1), *[_typed(x) for x in flat[2:]]])
    return [r[0] if kind == "number" else r for r in rows]


def python_lines(key: str, answer) -> list[str]:
    """What ``check(key, answer)`` prints, line by line, stripped (a tuple's boxes in the answer's shape)."""
    c = exercises.get(key).checker
    if c.kind == "tuple":
        answer = np.array(answer, dtype=object).reshape(np.shape(c.expected)).tolist()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exercises.check(key, answer)
    return [line.strip() for line in out.getvalue().splitlines() if line.strip()]


ANSWER = """([fid, kind, answer]) => {
  const f = document.getElementById(fid);
  if (kind === 'number') f.querySelector('input.entry').value = answer;
  else if (kind === 'tuple') f.querySelectorAll('input.entry').forEach((b, i) => { b.value = answer[i]; });
  else if (kind === 'choice') {
    f.querySelectorAll('input[type=radio]').forEach(r => { r.checked = r.value === answer; });
  } else f.querySelectorAll('select.slot').forEach((s, i) => { s.value = answer[i]; });
  f.requestSubmit();
  return Array.from(f.querySelectorAll('.verdict p')).map(p => p.textContent.trim());
}"""


def _page_exercises(manifest) -> dict[str, list[str]]:
    return {stem: [k for k, kind in p["exercises"].items() if kind != "function"]
            for stem, p in manifest["pages"].items()}


def _equal_verdicts(page, keys: list[str]) -> tuple[int, list]:
    compared, unequal = 0, []
    for key in keys:
        kind = exercises.get(key).checker.kind
        fid = "ex-" + key.replace(".", "-")
        for answer in answers_for(key):
            got = page.evaluate(ANSWER, [fid, kind, list(answer) if isinstance(answer, tuple) else answer])
            want = python_lines(key, answer)
            compared += 1
            if got != want:
                unequal.append((key, answer, want, got))
    return compared, unequal


@pytest.mark.browser
def test_every_number_tuple_and_choice_exercise_is_in_its_page(manifest):
    in_page = [k for keys in _page_exercises(manifest).values() for k in keys]
    expected = [k for k in exercises.keys() if exercises.get(k).checker.kind != "function"]
    assert sorted(in_page) == expected
    functions = [k for p in manifest["pages"].values() for k, kind in p["exercises"].items() if kind == "function"]
    assert sorted(functions) == [k for k in exercises.keys() if exercises.get(k).checker.kind == "function"]
    print(f"\nin-page exercises: {len(in_page)}; function exercises pointing to the notebook: {len(functions)}")


@pytest.mark.browser
@pytest.mark.parametrize("stem", PAGES)
def test_equal_verdicts_served(stem, server, chromium, manifest):
    if SKIP:
        pytest.skip(SKIP)
    keys = _page_exercises(manifest)[stem]
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + f"{stem}.html")
        compared, unequal = _equal_verdicts(page, keys)
        assert not unequal, unequal[:5]
        assert page.sdpa_errors == [] and page.sdpa_blocked == []
        print(f"\n{stem}: {len(keys)} exercises, {compared} answers, equal verdicts")
    finally:
        page.context.close()


@pytest.mark.browser
def test_equal_verdicts_from_file_url(site, chromium, manifest, tmp_path):
    """The same from the folder (no server), every page; and typed by keyboard, Enter to check."""
    if SKIP:
        pytest.skip(SKIP)
    copy = tmp_path / "site"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("frames"))
    shutil.copytree(site / "frames", copy / "frames")
    total = 0
    for stem, keys in _page_exercises(manifest).items():
        page = new_page(chromium, allow_file=True)
        try:
            probe.open_page(page, (copy / f"{stem}.html").as_uri())
            compared, unequal = _equal_verdicts(page, keys)
            total += compared
            assert not unequal, unequal[:5]
            assert page.sdpa_errors == [] and page.sdpa_blocked == []
        finally:
            page.context.close()
    print(f"\nfile://: {total} answers, equal verdicts")


@pytest.mark.browser
def test_an_answer_typed_by_keyboard_and_progress_kept_in_the_browser(server, chromium):
    if SKIP:
        pytest.skip(SKIP)
    page = new_page(chromium)
    try:
        probe.open_page(page, server.url + "00_start_here.html")
        box = page.locator("#ex-00-bert_d_k input.entry")
        box.focus()
        page.keyboard.type("768")
        page.keyboard.press("Enter")
        verdict = page.locator("#ex-00-bert_d_k .verdict")
        assert verdict.inner_text().splitlines()[0] == python_lines("00.bert_d_k", "768")[0]
        assert verdict.get_attribute("role") == "status"
        box.fill("64")
        page.keyboard.press("Enter")
        assert verdict.inner_text().startswith("✅ 00.bert_d_k: correct.")
        stored = page.evaluate("() => JSON.parse(localStorage.getItem('sdpa-course-progress'))")
        assert stored == {"00.bert_d_k": True}
        assert page.locator("details:has-text('Solution')").count() == 0 or not any(page.evaluate(
            "() => Array.from(document.querySelectorAll('details')).map(d => d.open)"))
        page.goto(server.url + "index.html")
        item = page.locator("li[data-exercises] .progress").first
        assert "1 of" in item.inner_text() and "answered right in this browser" in item.inner_text()
        page.goto(server.url + "00_start_here.html")
        assert page.locator("#ex-00-bert_d_k .done").is_visible()
        assert page.sdpa_blocked == [] and page.sdpa_errors == []
    finally:
        page.context.close()


@pytest.mark.browser
def test_function_exercises_offer_the_notebook(site, manifest):
    for stem, p in manifest["pages"].items():
        text = (site / f"{stem}.html").read_text(encoding="utf-8")
        for key, kind in p["exercises"].items():
            if kind == "function":
                fid = "ex-" + key.replace(".", "-")
                block = text[text.index(f'id="{fid}"'):][:800]
                assert "asks for a function" in block and "mybinder.org" in block and "make lab" in block
