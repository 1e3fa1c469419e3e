"""The exercise mechanism and every registered exercise."""

import re
from pathlib import Path

import numpy as np
import pytest

from sdpa_helpers import exercises
from sdpa_helpers.attention import softmax
from sdpa_helpers.exercises import check, function_checker, numeric_checker

ROOT = Path(__file__).resolve().parent.parent
KEYS = exercises.keys()


def test_check_prints_verdict_and_returns_bool(capsys):
    assert check("00.bert_d_k", 64) is True
    assert "✅" in capsys.readouterr().out
    assert check("00.bert_d_k", 65) is False
    out = capsys.readouterr().out
    assert "❌" in out and "Hint:" in out and "64" not in out  # never the solution


def test_none_means_no_answer_yet(capsys):
    assert check("00.bert_d_k", None) is False
    assert "no answer yet" in capsys.readouterr().out


def test_unknown_key_lists_known_ones():
    with pytest.raises(KeyError, match="00.bert_d_k"):
        check("00.nope", 1)


def test_numeric_checker():
    c = numeric_checker(2.0, rtol=1e-3)
    assert c(2.0001)[0] and not c(2.1)[0]
    assert not c("two")[0] and not c([2.0, 2.0])[0] and not c(float("nan"))[0]


def test_function_checker_runs_hard_cases_and_survives_errors():
    c = function_checker(softmax, [([1.0, 2.0],), ([1e6, 0.0],)], names=["small", "huge logits 1e6"])
    assert c(softmax)[0]
    naive = lambda z: np.exp(z) / np.exp(z).sum()  # noqa: E731  overflows at 1e6
    with np.errstate(all="ignore"):
        ok, feedback = c(naive)
    assert not ok and "huge logits 1e6" in feedback
    ok, feedback = c(lambda z: 1 / 0)
    assert not ok and "ZeroDivisionError" in feedback
    assert not c(42)[0]


@pytest.mark.parametrize("key", KEYS)
def test_every_exercise_is_complete_and_robust(key, capsys):
    assert re.fullmatch(r"\d\d\.[a-z0-9_]+", key)
    assert exercises.question(key).strip() and exercises.hint(key).strip()
    for junk in ("not an answer", [1, 2, 3], -1e300, lambda *a: None):
        assert check(key, junk) is False  # never a crash, never a pass
    capsys.readouterr()


def test_every_exercise_is_used_by_its_notebook_and_vice_versa():
    used = set()
    for nb in (ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"):
        found = set(re.findall(r"check\(\s*\"(\d\d\.[a-z0-9_]+)\"", nb.read_text()))
        assert all(k.startswith(nb.name[:2] + ".") for k in found), f"{nb.name} checks another notebook's key"
        used |= found
    assert used == set(KEYS)
