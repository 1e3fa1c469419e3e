"""The checker holds against a learner's code (issue 18, sections 3 and 4).

Every checker -- generated or hand-written -- goes through the same answer cleaning; a
learner's numpy settings neither break a check nor survive it; a failure of the reference is
never blamed on the answer; odd keys, answers and time limits get a clear verdict.
"""

import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sdpa_helpers import exercises
from sdpa_helpers.attention import softmax_jacobian
from sdpa_helpers.exercises import check, function_checker

KEYS = exercises.keys()
#: The exercises whose answer is a function ("Write f(...)"), and a right answer for each.
FUNCTION_KEYS = [k for k in KEYS if exercises.question(k).lstrip().startswith("Write")]
_EXTRA_REFERENCES = {"06.softmax_jacobian": softmax_jacobian}


def _right(key):
    return getattr(exercises.get(key).checker, "reference", None) or _EXTRA_REFERENCES[key]


def test_the_hand_written_checker_is_among_the_function_exercises():
    assert "06.softmax_jacobian" in FUNCTION_KEYS
    assert check("06.softmax_jacobian", softmax_jacobian, quiet=True)


# --- one answer cleaning for every checker ----------------------------------------------------

@pytest.mark.parametrize("key", KEYS)
def test_every_checker_refuses_complex_text_and_unordered_answers(key, capsys):
    for bad in (64 + 1000j, np.array([1 + 1j, 2]), "sixty-four", {7, 5}, {5: 7}, frozenset({1})):
        assert check(key, bad) is False, (key, bad)
    out = capsys.readouterr().out
    assert "Traceback" not in out


@pytest.mark.parametrize("key", FUNCTION_KEYS)
def test_every_function_checker_cleans_the_functions_result(key, capsys):
    right = _right(key)
    assert check(key, right) is True
    capsys.readouterr()

    def complex_result(*args):
        return np.asarray(right(*args)) + 1000j

    def text_result(*args):
        return np.asarray(right(*args)).astype(str)

    def forgot_return(*args):
        right(*args)

    assert check(key, complex_result) is False
    assert "complex" in capsys.readouterr().out
    assert check(key, text_result) is False
    assert "text" in capsys.readouterr().out
    assert check(key, forgot_return) is False
    out = capsys.readouterr().out
    assert "returned None" in out and "forget `return`" in out and "shape ()" not in out


def test_softmax_jacobian_refuses_the_issues_complex_answer(capsys):
    assert check("06.softmax_jacobian", lambda p: np.diag(p) - np.outer(p, p) + 1000j) is False
    assert "complex" in capsys.readouterr().out


# --- a learner's numpy settings -------------------------------------------------------------

def _stable_softmax(x):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_seterr_raise_does_not_fail_a_correct_answer(capsys):
    old = np.seterr(all="raise")
    try:
        for key in ("05.stable_softmax", "06.softmax_jacobian"):
            assert check(key, _stable_softmax if key.startswith("05") else softmax_jacobian) is True, \
                capsys.readouterr().out
        assert np.geterr()["under"] == "raise"  # the learner's setting is back afterwards
    finally:
        np.seterr(**old)


def test_check_restores_numpy_error_state_and_print_options():
    before_err, before_print = np.geterr(), np.get_printoptions()

    def meddler(x):
        np.seterr(all="raise")
        np.set_printoptions(precision=1, suppress=True)
        return _stable_softmax(x)

    check("05.stable_softmax", meddler, quiet=True)
    assert np.geterr() == before_err
    assert np.get_printoptions() == before_print


def test_a_failing_reference_is_not_blamed_on_the_answer(capsys):
    def broken_reference(x):
        raise FloatingPointError("underflow in the reference")

    c = function_checker(broken_reference, [([1.0, 2.0],)])
    key = "99.broken_reference"
    exercises._REGISTRY[key] = exercises.Exercise(key, "Write f(x).", "no hint", c)
    try:
        assert check(key, lambda x: x) is False
    finally:
        del exercises._REGISTRY[key]
    out = capsys.readouterr().out
    assert "reference" in out and "not in your answer" in out
    assert "checking your answer raised" not in out and "your function raised" not in out


# --- time limits ------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [float("inf"), 1e10, 1e300])
def test_an_unbounded_time_limit_passes_a_right_answer_and_leaves_no_handler(limit, capsys):
    before = signal.getsignal(signal.SIGALRM)
    assert check("05.stable_softmax", _stable_softmax, time_limit=limit) is True, capsys.readouterr().out
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("limit", [float("nan"), 0, -1, "5", True])
def test_a_bad_time_limit_is_refused(limit):
    with pytest.raises((TypeError, ValueError), match="time_limit"):
        check("00.bert_d_k", 64, time_limit=limit)


# --- odd keys and answers ---------------------------------------------------------------------

def test_a_key_with_spaces_is_stripped(capsys):
    assert check(" 00.bert_d_k ", 64) is True


def test_an_unknown_key_suggests_the_close_match():
    with pytest.raises(KeyError) as info:
        check("00.bert_dk", 64)
    message = str(info.value)
    assert "did you mean '00.bert_d_k'" in message
    assert len(message) < 400  # not a list of every key of the course


def test_a_key_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="key"):
        check(0, 64)


@pytest.mark.parametrize("answer", [{7, 5}, {5, 7}, {5: 7}, frozenset({5, 7})])
def test_sets_and_dicts_do_not_pass_a_shape(answer, capsys):
    assert check("01.qk_shape", answer) is False
    out = capsys.readouterr().out
    assert "tuple" in out and ("set" in out or "dict" in out)


def test_a_dict_does_not_pass_the_prediction(capsys):
    assert check("00.predict_largest_weight", {"up": "same"}) is False
    assert check("00.predict_largest_weight", ("up", "same")) is True


def test_sys_exit_inside_an_answer_is_a_verdict(capsys):
    def quitter(x):
        sys.exit(3)

    assert check("05.stable_softmax", quitter) is False
    assert "exit" in capsys.readouterr().out


def test_a_patched_softmax_does_not_become_the_reference():
    """A learner who assigns their own function to sdpa_helpers.attention.softmax (after the
    notebook's set-up imported ``check``) does not change what a check compares with."""
    code = textwrap.dedent("""
        import numpy as np
        from sdpa_helpers.exercises import check
        import sdpa_helpers.attention as attention
        wrong = lambda x: np.full(np.shape(x), 1.0 / np.shape(x)[-1])
        attention.softmax = wrong
        print(check("05.stable_softmax", wrong, quiet=True))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
