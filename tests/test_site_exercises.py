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
import shutil

import numpy as np
import pytest

import test_site as ts
from exercise_answers import answers_for
from sdpa_helpers import exercises

PAGES, SKIP, new_page, probe = ts.PAGES, ts.SKIP, ts.new_page, ts.probe
site, manifest, server, chromium = ts.site, ts.manifest, ts.server, ts.chromium  # the site's fixtures


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


#: The page draws ✔/✘ where check() prints the emoji ✅/❌ (no emoji font needed); the rest is word for word.
PAGE_MARKS = {"\u2714": "\u2705", "\u2718": "\u274c"}


def as_printed(line: str) -> str:
    """A verdict line of the page with check()'s mark."""
    return PAGE_MARKS.get(line[:1], line[:1]) + line[1:]


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
            assert all(line[:1] not in "\u2705\u274c" for line in got), got  # no emoji in the page
            got = [as_printed(line) for line in got]
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
        assert as_printed(verdict.inner_text().splitlines()[0]) == python_lines("00.bert_d_k", "768")[0]
        assert verdict.get_attribute("role") == "status"
        box.fill("64")
        page.keyboard.press("Enter")
        assert verdict.inner_text().startswith("\u2714 00.bert_d_k: correct.")
        stored = page.evaluate("() => Object.fromEntries(Object.keys(localStorage).map(k => [k, localStorage[k]]))")
        (store, value), = stored.items()  # one key: this course, this folder of pages
        assert store.startswith("sdpa-course-progress:why-sqrt-dk:/") and store.endswith("/"), store
        assert value == '{"00.bert_d_k":true}'
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


@pytest.mark.browser
def test_every_blank_character_gets_equal_verdicts_in_chromium(server, chromium):
    """Issue 41 §5 in the browser itself (its text box removes line breaks as typed; check() does too):
    every Unicode whitespace and format character before, inside and after a right answer.
    tests/test_exercises_js.py does the same for every exercise under node."""
    if SKIP:
        pytest.skip(SKIP)
    from test_exercises_js import EVERY_BLANK

    for stem, key, right in (("00_start_here", "00.bert_d_k", ["64"]),
                             ("06_vanishing_gradients", "06.jacobian_half", ["0.25", "-0.25", "-0.25", "0.25"])):
        page = new_page(chromium)
        try:
            probe.open_page(page, server.url + f"{stem}.html")
            kind = exercises.get(key).checker.kind
            fid = "ex-" + key.replace(".", "-")
            unequal = []
            for ch in EVERY_BLANK:
                for first in (ch + right[0], right[0][:1] + ch + right[0][1:], right[0] + ch):
                    answer = first if kind == "number" else [first, *right[1:]]
                    got = [as_printed(line) for line in page.evaluate(ANSWER, [fid, kind, answer])]
                    want = python_lines(key, answer)
                    if got != want:
                        unequal.append((repr(first), want, got))
            assert not unequal, unequal[:5]
            assert page.sdpa_errors == []
        finally:
            page.context.close()
