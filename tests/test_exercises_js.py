"""The page's checker (authoring/site/static/exercises.js) run under node against Python's ``check()``.

The same script the site ships, loaded in a bare node context (no browser, no build): for every
answer of the bank's right/slip/wrong/malformed sets, for every Unicode whitespace, separator and
format character placed before, inside and after a right answer, and for answers far over the
length limit, its verdict [ok, feedback] must equal the checker's, word for word. And its progress
store: any stored value reads as no progress (never an exception), and the key is this course's and
this folder's. tests/test_site_exercises.py does the same in Chromium on the built site (slower:
needs ``make site``); this one needs only node (issue 41 §5, issue 37 §7).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from exercise_answers import answers_for
from sdpa_helpers import exercises
from sdpa_helpers.exercises import _text as T
from sdpa_helpers.exercises import page_spec

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "authoring" / "site" / "static" / "exercises.js"
NODE = shutil.which("node") or ("/usr/bin/node" if Path("/usr/bin/node").exists() else None)
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: Loads exercises.js in a context with stub window/document, then runs one job read from stdin.
RUNNER = r"""
const vm = require("vm"), fs = require("fs");
const job = JSON.parse(fs.readFileSync(0, "utf8"));
const store = new Map(Object.entries(job.store || {}));
const noop = () => {};
const ctx = {
  console, setInterval: () => 0, clearInterval: noop, setTimeout: () => 0,
  document: {readyState: "complete", querySelectorAll: () => [], querySelector: () => null, addEventListener: noop},
  window: {addEventListener: noop, location: {pathname: job.pathname || "/course/00_start_here.html"},
           localStorage: job.storage_off ? {getItem: () => { throw new Error("SecurityError"); },
                                            setItem: () => { throw new Error("SecurityError"); }}
                                         : {getItem: k => (store.has(k) ? store.get(k) : null),
                                            setItem: (k, v) => store.set(k, String(v))}},
};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(job.script, "utf8"), ctx);
const X = ctx.window.SDPA_EXERCISES;
const out = {};
if (job.cases) {
  const t = Date.now();
  out.verdicts = job.cases.map(c => X.checkNumber(job.specs[c[0]], c[1].slice()));
  out.ms = Date.now() - t;
}
if (job.progress) {
  out.before = X.progress();
  X.remember("00.bert_d_k");
  out.key = X.storeKey();
  out.after = X.progress();
  out.store = Object.fromEntries(store);
}
process.stdout.write(JSON.stringify(out));
"""


def run_js(job: dict) -> dict:
    job = {"script": str(SCRIPT), **job}
    result = subprocess.run([NODE, "-e", RUNNER], input=json.dumps(job), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


NUMERIC = [k for k in exercises.keys() if exercises.get(k).checker.kind in ("number", "tuple")]


def _python(key: str, texts: list[str]) -> list:
    """[ok, feedback] of check() for ``texts`` typed into the page's boxes (a tuple in its shape)."""
    ex = exercises.get(key)
    shape = np.shape(ex.checker.expected)
    answer = texts[0] if shape == () else np.array(texts, dtype=object).reshape(shape).tolist()
    ok, feedback = exercises._checked(ex, answer, 30.0)
    return [bool(ok), feedback]


def _compare(cases: list[tuple[str, list[str]]]) -> tuple[int, list, float]:
    specs = {key: page_spec(key) for key in {k for k, _ in cases}}
    out = run_js({"specs": specs, "cases": [[k, t] for k, t in cases]})
    unequal = [(k, t, want, got) for (k, t), got in zip(cases, out["verdicts"])
               if got != (want := _python(k, t))]
    return len(cases), unequal, out["ms"]


def _right_texts(key: str) -> list[str]:
    """The right answer as typed: integers as themselves, other entries at full precision."""
    return [answers_for_entry(x) for x in np.ravel(exercises.get(key).checker.expected).tolist()]


def answers_for_entry(x: float) -> str:
    from sdpa_helpers.exercises._figures import js_number
    return str(int(x)) if float(x).is_integer() else js_number(x)


def test_the_bank_s_answer_sets_get_equal_verdicts():
    cases = [(key, [a] if isinstance(a, str) else list(a)) for key in NUMERIC for a in answers_for(key)]
    n, unequal, _ = _compare(cases)
    assert not unequal, unequal[:5]
    print(f"\nexercises.js under node: {n} answers of {len(NUMERIC)} exercises, equal verdicts")


#: Every character either side may treat as blank: Unicode White_Space, Python's isspace, every
#: format character (Cf), JavaScript's \s (White_Space and U+FEFF), and a few other controls.
EVERY_BLANK = sorted({*T.WHITE_SPACE, *T.SEPARATORS, *(chr(c) for c in range(sys.maxunicode + 1)
                                                          if chr(c).isspace() or unicodedata.category(chr(c)) == "Cf"),
                      "\ufeff", "\x00", "\x7f", "\x1b"})


def test_the_ignored_set_is_every_whitespace_and_format_character():
    assert T.IGNORED >= {c for c in EVERY_BLANK if c.isspace() or unicodedata.category(c) == "Cf"}
    assert {"\ufeff", "\x85", "\x1f", "\u200b", "\u00ad", "\u2060", "\U000e0001"} <= T.IGNORED
    assert set(T.WHITE_SPACE) == {c for c in map(chr, range(0x3001)) if c in (
        "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") or 0x2000 <= ord(c) <= 0x200A}


def test_the_format_characters_are_unicode_s_and_written_out():
    """Python 3.11 has Unicode 14; the written-out 15.1 set keeps the page and check() on one set."""
    here = {c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cf"}
    assert here <= set(T.FORMAT)
    if tuple(map(int, unicodedata.unidata_version.split("."))) <= (15, 1, 0):
        written = {chr(c) for lo, hi in T.FORMAT_15_1 for c in range(lo, hi + 1)}
        assert here <= written, sorted(map(ord, here - written))
        assert all(unicodedata.category(c) in ("Cf", "Cn") for c in written)  # Cn: assigned after this Python


@pytest.mark.slow  # every blank character x every position through node: 36 s at load 15; `make test` runs it
def test_every_blank_character_before_inside_and_after_a_right_answer_gets_equal_verdicts():
    """Issue 41 §5: "\\ufeff64" was ✅ in the page and "not a number" in Python; "64\\u0085" the reverse."""
    cases = []
    for key in NUMERIC:
        right = _right_texts(key)
        first = right[0]
        for ch in EVERY_BLANK:
            for text in (ch + first, first[:1] + ch + first[1:], first + ch, ch * 3 + first + ch * 3):
                cases.append((key, [text, *right[1:]]))
    n, unequal, ms = _compare(cases)
    assert not unequal, unequal[:5]
    print(f"\n{len(EVERY_BLANK)} blank characters x 4 places x {len(NUMERIC)} exercises = {n} answers, "
          f"equal verdicts ({ms} ms in node)")


def test_the_named_slips_and_the_second_route_get_equal_verdicts():
    cases = [("03.scaled_z", [t]) for t in ("-0.679", "-0.678", "-0.68", "-0.6792", "0.679", "-0.677")]
    cases += [("00.bert_d_k", ["12"]), ("00.scale_for_variance_4", ["0.00195"]), ("01.frobenius", ["0"]),
              ("01.cos_spread", ["1"]), ("02.kurtosis_laplace", ["0.75"]), ("02.kurtosis_laplace", ["2.062"]),
              ("05.scaled_weight", ["1"]), ("05.effective_keys_law", ["1024"]), ("06.cross_entropy_grad", ["1.98"]),
              ("06.cross_entropy_grad", ["100"]), ("06.largest_entry", ["-0.14"]),
              ("06.jacobian_half", ["0.5", "-0.25", "-0.25", "0.5"]), ("08.xavier_head_var", ["0.0024"]),
              ("08.xavier_head_var", ["2"])]
    n, unequal, _ = _compare(cases)
    assert not unequal, unequal
    assert _python("03.scaled_z", ["-0.679"]) == [True, ""]


@pytest.mark.parametrize("text,verdict", [
    ("\ufeff64", (True, "")), ("64\u0085", (True, "")), ("64\x1f", (True, "")), ("\u200b64\u2060", (True, "")),
    ("6\n4", (True, "")),  # a browser's text box removes line breaks as typed: so does check()
    ("6\u200b4", (False, "U+200B")), ("6 4", (False, "U+0020")), ("6\u00a04", (False, "U+00A0")),
])
def test_the_one_normalisation_in_python(text, verdict):
    ok, feedback = exercises.get("00.bert_d_k").checker(text)
    assert ok is verdict[0] and verdict[1] in feedback, feedback


def test_a_long_answer_is_refused_at_once_with_the_same_message():
    """Issue 37 §7: a 40,000-digit answer made check() time out ("Does your function loop forever?") and
    froze the page; the number pattern backtracked (quadratic in the length)."""
    limit = T.MAX_CHARS
    long_texts = ["1" * 40_000, "1" * 40_000 + "x", "0." + "9" * 40_000, "1" * (limit + 1), " " * 500 + "64"]
    cases = [("00.bert_d_k", [t]) for t in long_texts] + [("06.jacobian_half", ["9" * 40_000, "1", "2", "3"])]
    n, unequal, ms = _compare(cases)
    assert not unequal, unequal[:2]
    assert ms < 2000, f"exercises.js took {ms} ms"
    start = time.perf_counter()
    ok, feedback = _python("00.bert_d_k", ["9" * 40_000 + "x"])
    assert time.perf_counter() - start < 1.0
    assert not ok and "40001 characters" in feedback and f"at most {limit}" in feedback, feedback
    assert exercises.check("00.bert_d_k", "1" * 40_000, quiet=True) is False
    assert _python("00.bert_d_k", [" " * 500 + "64"])[0] is True  # spaces around do not count
    just_under, just_over = "0." + "8" * (limit - 2), "0." + "8" * limit
    assert "characters long" not in _python("05.scaled_weight", [just_under])[1]
    assert "characters long" in _python("05.scaled_weight", [just_over])[1]


@pytest.mark.parametrize("stored", ["true", "[]", "5", '"text"', "{corrupt", "null", '{"00.bert_d_k": "yes"}',
                                    '{"__proto__": true}', '[{"00.bert_d_k": true}]', ""])
def test_progress_survives_any_stored_value(stored):
    """Issue 37 §7 / 41 §5: `true`, `[]`, `5`, `"text"` or corrupt JSON stopped progress for good."""
    key = "sdpa-course-progress:why-sqrt-dk:/course/"
    out = run_js({"progress": True, "store": {key: stored}})
    assert out["key"] == key
    assert out["before"] == {}
    assert out["after"] == {"00.bert_d_k": True}
    assert json.loads(out["store"][key]) == {"00.bert_d_k": True}


def test_progress_is_kept_per_course_and_folder_and_keeps_other_entries():
    mine = "sdpa-course-progress:why-sqrt-dk:/course/"
    out = run_js({"progress": True, "pathname": "/course/index.html",
                  "store": {mine: '{"01.frobenius": true, "01.hand_dot": false}',
                            "sdpa-course-progress": '{"02.general": true}',  # the old key, shared by the origin
                            "sdpa-course-progress:why-sqrt-dk:/other-site/": '{"03.scaled_z": true}'}})
    assert out["key"] == mine  # the contents page and the notebook pages of one folder share it
    assert out["before"] == {"01.frobenius": True}
    assert out["after"] == {"01.frobenius": True, "00.bert_d_k": True}
    assert out["store"]["sdpa-course-progress"] == '{"02.general": true}'  # other sites' progress untouched
    assert out["store"]["sdpa-course-progress:why-sqrt-dk:/other-site/"] == '{"03.scaled_z": true}'
    assert run_js({"progress": True, "pathname": "/home/me/site/00_start_here.html"})["key"] \
        == "sdpa-course-progress:why-sqrt-dk:/home/me/site/"


def test_progress_with_storage_off_is_no_progress_not_an_error():
    out = run_js({"progress": True, "storage_off": True})
    assert out["before"] == {} and out["after"] == {}


def test_the_page_draws_marks_a_text_font_holds():
    """Issue 41 §5: ❌ drew as a box without an emoji font. The page draws ✔/✘ (DejaVu Sans has both)."""
    source = SCRIPT.read_text(encoding="utf-8")
    code = source[source.index("(function () {"):]
    assert "\u2705" not in code and "\u274c" not in code
    assert '"\\u2714"' in code and '"\\u2718"' in code
    css = (ROOT / "authoring" / "site" / "static" / "site.css").read_text(encoding="utf-8")
    assert ".verdict .mark" in css and "DejaVu Sans" in css
