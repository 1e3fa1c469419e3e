"""The exercise mechanism and every registered exercise; the checker holds against a learner's code
(issue 18, sections 3 and 4: one answer cleaning for every checker, a learner's numpy settings neither
break a check nor survive it, a failing reference is never blamed on the answer); the one rule for
significant figures and the exercise items of issue 29 §6."""

import math
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sdpa_helpers import exercises, theory
from sdpa_helpers.attention import attention_scores, softmax, softmax_jacobian
from sdpa_helpers.exercises import _REGISTRY, check, choice_checker, function_checker, numeric_checker
from sdpa_helpers.sampling import make_rng

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
    c = numeric_checker(2.5)
    assert c(2.5)[0] and c(2.50)[0] and c("2.500")[0] and not c(2.51)[0]
    assert not c("two")[0] and not c([2.0, 2.0])[0] and not c(float("nan"))[0]


# --- one tolerance rule: three significant figures, integers exactly ---------------------------

def test_default_rule_is_three_significant_figures():
    c = numeric_checker(2 * 768 / (768 + 64))  # 1.846153...
    assert c(1.85)[0] and c(1.846)[0] and c(1.8462)[0]  # every correct rounding passes
    assert not c(1.83)[0] and not c(1.86)[0] and not c(2.0)[0]  # 0.9 %, 0.7 % off
    exact = 4.125  # excess kurtosis of q.k with Laplace components at d_k = 8
    c = numeric_checker(exact)
    assert c(4.13)[0] and c(4.12)[0] and c(4.125)[0] and not c(4.2)[0]
    c = numeric_checker(8 / 3)
    assert c(2.67)[0] and c(2.66667)[0] and not c(2.65)[0]
    # the limit is 0.5 % of the exact value: 1.005 rounds to 1.01 or 1.00, both within 0.5 %
    c = numeric_checker(1.005)  # a tie in the digits: 1.01 (half up) and 1.00 (half to even) both pass
    assert c(1.01)[0] and c(1.00)[0] and c(1.0)[0] and c("1.00")[0] and not c(1.016)[0] and not c(0.994)[0]
    c = numeric_checker(-0.0625)
    assert c(-0.0625)[0] and not c(-0.0627)[0] and not c(0.0625)[0]


@pytest.mark.parametrize("exact,right,wrong", [
    (1 / 45.254834, [0.0221, 0.02210, 0.022097, "0.0221", "0.02210"], [0.0222, "0.0220", 0.02216]),
    (0.0625, [0.0625, 0.06250, "0.0625"], [0.0624, 0.0626]),
    (8 / 3, [2.67, 2.667, "2.67"], [2.66, 2.68]),
    (-0.6838, [-0.684, -0.68381, "-0.684"], [-0.683, "-0.680"]),
    (0.02203, [0.0220, 0.022, "0.0220", "0.02203"], [0.0221]),  # 0.022 IS 0.0220, its zero left off
])
def test_one_rule_for_significant_figures(exact, right, wrong):
    """Issue 29 §6: at least three figures, rounding to the exact value rounded the same way."""
    c = numeric_checker(exact)
    for r in right:
        assert c(r)[0], (exact, r, c(r))
    for w in wrong:
        assert not c(w)[0] and c(w)[1].endswith("is off."), (exact, w, c(w))


@pytest.mark.parametrize("exact,few", [(1 / 45.254834, 0.022), (-0.6838, -0.68), (8 / 3, 2.7), (0.0625, 0.06)])
def test_too_few_figures_gets_its_own_message(exact, few):
    ok, feedback = numeric_checker(exact)(few)
    assert not ok and "significant figure" in feedback and "not right to 3 significant figures" in feedback, feedback


@pytest.mark.parametrize("exact,short", [(0.8808, 0.5), (0.354, 0.25), (0.8808, 2.0), (0.0221, 0.1)])
def test_a_short_wrong_answer_is_off_not_too_few_figures(exact, short):
    """Too few figures is said only of an answer that is the exact value at its own figures (re-read:
    0.5 for 0.881 was told "1 significant figure", as if nearly right, and typing 0.500 could not fix it)."""
    ok, feedback = numeric_checker(exact)(short)
    assert not ok and feedback.endswith("is off.") and "significant" not in feedback, feedback


def test_text_counts_figures_as_typed():
    from sdpa_helpers.exercises import _figures as F
    assert F.parse("0.0220")[3] == 3 and F.parse("100")[3] == 1 and F.parse("100.")[3] == 3 and F.parse("1e-3")[3] == 1
    assert F.of_float(0.022)[3] == 2 and F.of_float(100.0)[3] == 1 and F.of_float(0.0221)[3] == 3
    c = numeric_checker(0.02203)
    assert c("0.0220")[0] and not c("0.02")[0] and "1 significant figure" in c("0.02")[1]


def test_integers_are_checked_exactly():
    c = numeric_checker(768 / 12)
    assert c(64)[0] and c(64.0)[0] and c(np.int64(64))[0]
    assert not c(64.2)[0] and not c(63.9)[0]
    c = numeric_checker([5, 7])
    assert c((5, 7))[0] and not c((5, 7.02))[0]
    c = numeric_checker([[0.25, -1.0], [0.0, 3.0]])  # integer entries exactly, the others to 3 s.f.
    assert c([[0.2501, -1.0], [0.0, 3.0]])[0]
    assert not c([[0.25, -1.001], [0.0, 3.0]])[0] and not c([[0.25, -1.0], [0.001, 3.0]])[0]


# --- non-real answers and strings ---------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.complex128(64 + 5j), 64 + 0j, complex(64, 5), np.array([64 + 1j])])
def test_complex_answers_are_rejected_with_a_hint(bad):
    ok, feedback = numeric_checker(64.0, what="d_k")(np.ravel(bad)[0] if np.ndim(bad) else bad)
    assert not ok and "complex" in feedback and "real" in feedback


def test_complex_answer_does_not_pass_bert(capsys):
    assert check("00.bert_d_k", np.complex128(64 + 5j)) is False
    assert "complex" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["sixty-four", "6 4", b"64", ["5", "seven"], True, np.bool_(True)])
def test_text_that_is_no_number_and_booleans_are_rejected_with_a_hint(bad):
    expected = [5, 7] if isinstance(bad, list) else 1.0 if isinstance(bad, (bool, np.bool_)) else 64.0
    ok, feedback = numeric_checker(expected, what="d_k")(bad)
    assert not ok
    if isinstance(bad, (bool, np.bool_)):
        assert "True/False" in feedback
    else:
        assert ("not a number" in feedback or "without quotes" in feedback
                or "a space or an invisible character (U+0020) inside it" in feedback), feedback


def test_text_that_is_a_number_is_read_as_typed(capsys):
    """The page's answer box gives text; Python accepts the same text, so the two agree."""
    assert check("00.bert_d_k", "64") and check("00.bert_d_k", " 64.0 ")
    assert check("02.general", ["-32", "160"])
    ok, feedback = numeric_checker(64.0, what="d_k")("")
    assert not ok and feedback == "no answer yet: give a number."
    capsys.readouterr()


def test_unusual_but_real_numbers_are_fine():
    from fractions import Fraction
    c = numeric_checker(8 / 3)
    assert c(Fraction(8, 3))[0] and c(np.float32(8 / 3))[0] and c(np.array(8 / 3))[0]
    assert not c(10**400)[0]  # too large for a float: a verdict, not an OverflowError


# --- feedback is never garbled -------------------------------------------------------------------

def test_shape_feedback_reads_well():
    ok, feedback = numeric_checker([5, 7], what="the shape")([[5, 7], [1, 2]])
    assert not ok and "with shape" not in feedback and "2 numbers" in feedback
    ok, feedback = numeric_checker(64.0, what="d_k")([64, 64])
    assert not ok and "one number" in feedback
    ok, feedback = numeric_checker(np.zeros((2, 3)), what="the gradient")(np.zeros(6))
    assert not ok and "(2, 3)" in feedback and "(6,)" in feedback


def _stub(x):
    ...  # your code


def _stub_with_docstring(x):
    """Return something."""
    ...


def _forgot_return(x):
    y = np.asarray(x) * 2  # noqa: F841


def test_untouched_stub_and_missing_return_are_told_apart():
    c = function_checker(lambda x: np.asarray(x) * 2, [([1.0, 2.0],)])
    for stub in (_stub, _stub_with_docstring):
        ok, feedback = c(stub)
        assert not ok and "stub" in feedback and "`...`" in feedback and "return" in feedback
    ok, feedback = c(_forgot_return)
    assert not ok and "forget `return`" in feedback and "stub" not in feedback
    ok, feedback = c(lambda x: np.asarray(x).sort())  # sort() sorts in place and returns None
    assert not ok and "forget `return`" in feedback


def test_function_results_must_be_real_numbers():
    c = function_checker(lambda x: np.asarray(x, dtype=float) * 2, [([1.0, 2.0],)])
    assert c(lambda x: np.asarray(x, dtype=float) * 2)[0]
    ok, feedback = c(lambda x: np.asarray(x, dtype=float) * 2 + 0j)
    assert not ok and "complex" in feedback
    ok, feedback = c(lambda x: ["2.0", "4.0"])
    assert not ok and "string" in feedback


# --- fresh copies: a learner's function that edits its input -------------------------------------

def _inplace_softmax(x):
    x -= x.max(-1, keepdims=True)  # correct, and it edits the caller's array
    np.exp(x, out=x)
    x /= x.sum(-1, keepdims=True)
    return x


def _inplace_rowwise_dot(A, B):
    A *= B  # correct, and it edits the caller's array
    return A.sum(axis=1)


def _inplace_masked_softmax(logits, mask):
    if not np.broadcast_to(mask, logits.shape).any(axis=-1).all():
        empty = np.argwhere(~np.broadcast_to(mask, logits.shape).any(axis=-1))[0].tolist()
        raise ValueError(f"row {empty} of mask has no True entry")
    logits[...] = np.where(mask, logits, -np.inf)  # correct, and it edits the caller's array
    return _inplace_softmax(logits)


def _clobbering_rowwise_dot(A, B):
    result = np.einsum("ij,ij->i", A, B)  # correct, then it wipes the caller's arrays
    A[...] = 0.0
    return result


def _wrong_by_one(fn):
    return lambda *args: np.asarray(fn(*args), dtype=float) + 1.0


def _naive_softmax(x):
    x = np.asarray(x, dtype=float)
    return np.exp(x) / np.exp(x).sum(-1, keepdims=True)  # overflows at 1e6: wrong


def _naive_masked_softmax(logits, mask):
    return _naive_softmax(np.where(mask, logits, -np.inf))


def _zeros_rowwise_dot(A, B):
    return np.zeros(np.shape(A)[0])


@pytest.mark.parametrize("key, mutating, wrong", [
    ("05.stable_softmax", _inplace_softmax, _naive_softmax),
    ("07.masked_softmax", _inplace_masked_softmax, _naive_masked_softmax),
    ("01.rowwise_dot", _inplace_rowwise_dot, _zeros_rowwise_dot),
    ("01.rowwise_dot", _clobbering_rowwise_dot, _zeros_rowwise_dot),
])
def test_a_function_that_edits_its_input_cannot_change_a_later_verdict(key, mutating, wrong, capsys):
    cases = _attr(exercises.get(key).checker, "cases")
    before = [[np.array(a, copy=True) for a in case] for case in cases or []]
    with np.errstate(all="ignore"):
        assert check(key, wrong) is False  # wrong before ...
        assert check(key, mutating) is True  # an in-place answer is correct ...
        assert check(key, mutating) is True  # ... twice
        assert check(key, wrong) is False  # ... and the wrong answer is still wrong after it
        assert check(key, _wrong_by_one(mutating)) is False
    for case, saved in zip(cases or [], before):
        for a, b in zip(case, saved):
            assert np.array_equal(np.asarray(a), b, equal_nan=True)  # the stored cases are untouched
    capsys.readouterr()


def test_function_checker_gives_each_call_fresh_copies():
    case = np.array([3.0, 1.0])
    seen = []

    def spy(x):
        seen.append(x)
        x[...] = 0.0
        return np.array([3.0, 1.0])

    c = function_checker(lambda x: np.asarray(x, dtype=float).copy(), [(case,)])
    assert c(spy)[0] and c(spy)[0]
    assert np.array_equal(case, [3.0, 1.0]) and seen[0] is not case and seen[1] is not seen[0]


# --- a time limit on the learner's function ------------------------------------------------------

def _endless(*args):
    while True:
        pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no SIGALRM on this platform")
def test_a_looping_function_is_stopped_with_a_clear_message(capsys):
    before = signal.getsignal(signal.SIGALRM)
    t0 = time.perf_counter()
    assert check("05.stable_softmax", _endless, time_limit=0.3) is False
    assert time.perf_counter() - t0 < 60  # it returned at all (the loop is endless)
    out = capsys.readouterr().out
    assert "did not finish within 0.3 s" in out and "loop" in out
    assert signal.getsignal(signal.SIGALRM) is before  # the handler is restored
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no alarm left behind


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no SIGALRM on this platform")
def test_time_limit_survives_a_learner_catching_exceptions(capsys):
    def stubborn(x):
        while True:
            try:
                while True:
                    pass
            except Exception:  # a learner's broad except must not swallow the time limit
                pass

    assert check("05.stable_softmax", stubborn, time_limit=0.3) is False
    assert "did not finish" in capsys.readouterr().out


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no SIGALRM on this platform")
def test_time_limit_keeps_an_outer_alarm():
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        assert check("05.stable_softmax", _inplace_softmax, quiet=True, time_limit=2.0)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 30.0  # the outer alarm is still armed
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not fired


def test_off_the_main_thread_check_still_works():
    results = []
    thread = threading.Thread(target=lambda: results.append(check("05.stable_softmax", _inplace_softmax,
                                                                  quiet=True)))
    thread.start()
    thread.join(60)
    assert results == [True]


def test_time_limit_is_documented():
    doc = exercises.check.__doc__
    assert "SIGALRM" in doc and "Kernel" in doc and "numpy" in doc and "Windows" in doc


# --- the example key in the docs exists ------------------------------------------------------------

def test_docstring_and_readme_examples_use_a_key_that_exists():
    for text in (exercises.__doc__, (ROOT / "README.md").read_text()):
        found = re.findall(r"check\(\s*\"(\d\d\.[a-z0-9_]+)\"", text)
        assert found and all(k in KEYS for k in found), found


# --- every registered exercise follows the rule ----------------------------------------------------

def _attr(checker, name):
    """An attribute of a checker, looking through wrappers made with functools.wraps."""
    while not hasattr(checker, name) and hasattr(checker, "__wrapped__"):
        checker = checker.__wrapped__
    return getattr(checker, name, None)


def _round_sig(x, sig=3):
    return float(f"{x:.{sig}g}")


NUMERIC = [k for k in KEYS if _attr(exercises.get(k).checker, "expected") is not None]
FUNCTIONS = [k for k in KEYS if _attr(exercises.get(k).checker, "reference") is not None]


def test_registry_exposes_expected_values_and_references():
    assert NUMERIC and FUNCTIONS


@pytest.mark.parametrize("key", NUMERIC)
def test_numeric_exercise_accepts_three_significant_figures_and_rejects_wrong(key, capsys):
    exact = np.asarray(_attr(exercises.get(key).checker, "expected"), dtype=float)
    integer = exact == np.round(exact)
    rounded = np.where(integer, exact, np.vectorize(_round_sig)(exact))
    assert check(key, rounded.tolist() if exact.ndim else float(rounded)) is True
    wrong = np.where(exact == 0, 1.0, exact * 1.02)  # 2 % off, or 1 where the answer is 0
    assert check(key, wrong.tolist() if exact.ndim else float(wrong)) is False
    capsys.readouterr()


@pytest.mark.parametrize("key", NUMERIC)
def test_numeric_question_states_the_rule(key):
    exact = np.asarray(_attr(exercises.get(key).checker, "expected"), dtype=float)
    q = exercises.question(key).lower()
    if np.all(exact == np.round(exact)):
        assert "integer" in q or "three significant figures" in q, q
    else:
        assert "three significant figures" in q, q


@pytest.mark.parametrize("key", FUNCTIONS)
def test_function_exercise_accepts_its_reference_and_rejects_a_wrong_one(key, capsys):
    reference = _attr(exercises.get(key).checker, "reference")
    assert check(key, reference) is True
    assert check(key, _wrong_by_one(reference)) is False
    capsys.readouterr()


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


def test_check_tells_an_untouched_stub_for_every_kind_of_checker(capsys):
    for key in ("05.stable_softmax", "06.softmax_jacobian", "03.sample_variance"):
        assert check(key, _stub) is False
        assert "still the stub" in capsys.readouterr().out


def test_choice_checker():
    c = choice_checker("b", {"a": "d_v", "b": "the variance of the components"})
    assert c("b")[0] and c(" B ")[0]
    ok, feedback = c("a")
    assert not ok and "d_v" in feedback
    for junk in ("z", 2, None, ["b"]):
        ok, feedback = c(junk)
        assert not ok and "'a', 'b'" in feedback
    with pytest.raises(ValueError, match="correct"):
        choice_checker("c", {"a": "x", "b": "y"})


CHOICES = [k for k in KEYS if _attr(exercises.get(k).checker, "correct") is not None]


@pytest.mark.parametrize("key", CHOICES)
def test_choice_exercise_accepts_only_its_letter(key, capsys):
    checker = exercises.get(key).checker
    correct, options = _attr(checker, "correct"), _attr(checker, "options")
    assert check(key, correct) is True
    assert all(check(key, k) is False for k in options if k != correct)
    assert all(f"({k})" in exercises.question(key) for k in options)  # the question lists every option
    capsys.readouterr()


# -- notebooks 03 and 04 ------------------------------------------------------------------------------

def good_variance(x, ddof):
    x = np.asarray(x, dtype=float)
    return ((x - x.mean()) ** 2).sum() / (x.size - ddof)


def good_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


@pytest.mark.parametrize("key,rights,wrongs", [
    # the rounded values printed in the notebooks' solutions must be accepted too
    ("03.np_var_mean", [8 / 3, 2.667, 2.67], [3.0, 2.0, 1.5, 2.25]),
    ("03.sample_variance", [good_variance],
     [lambda x, ddof: np.var(x), lambda x, ddof: np.std(x, ddof=ddof),
      lambda x, ddof: ((np.asarray(x) - np.mean(x)) ** 2).sum() / (len(x) - 1)]),
    ("03.scaled_z", [-0.678, -0.6784], [0.678, -0.00611, -0.0644, -0.68 * 111]),
    ("04.wrong_d", [math.sqrt(64 / 768), 0.289, 0.2887], [1.0, math.sqrt(64 / 512), 64 / 768, 1 / 12]),
    ("04.split_scale", [64**-0.25, 0.354, 0.3536], [1 / 8, 1 / 64, 8.0, 0.5]),
    ("04.scaled_scores", [good_scores],
     [lambda Q, K: Q @ np.swapaxes(K, -1, -2), lambda Q, K: Q @ np.swapaxes(K, -1, -2) / Q.shape[-1],
      lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1])]),
])
def test_checkers_accept_the_answer_and_reject_wrong_ones(key, rights, wrongs, capsys):
    for right in rights:
        assert check(key, right) is True
    for wrong in wrongs:
        assert check(key, wrong) is False
    capsys.readouterr()


def test_reference_solutions_agree_with_the_library():
    g = make_rng(5)
    Q, K = g.standard_normal((2, 3, 8)), g.standard_normal((2, 4, 8))
    assert np.allclose(good_scores(Q, K), attention_scores(Q, K))


# -- notebooks 07 and 08 ------------------------------------------------------------------------------

def test_exercises_07():
    assert check("07.output_component", 3, quiet=True) and not check("07.output_component", 4, quiet=True)
    assert check("07.causal_zeros", 45, quiet=True) and not check("07.causal_zeros", 55, quiet=True)

    def good(logits, mask):
        empty = ~np.broadcast_to(mask, np.shape(logits)).any(axis=-1)
        if empty.any():
            raise ValueError(f"row {np.argwhere(empty)[0].tolist()} of mask is all False")
        z = np.where(mask, logits, -np.inf)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def nan_on_empty_row(logits, mask):  # right on every row with a key, NaN on a row without
        z = np.where(mask, logits, -np.inf)
        with np.errstate(invalid="ignore"):
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    def unnamed_error(logits, mask):
        if not np.broadcast_to(mask, np.shape(logits)).any(axis=-1).all():
            raise ValueError("bad mask")
        return good(logits, mask)

    def digit_not_row(logits, mask):  # the message holds a "2", but not as the row's index
        if not np.broadcast_to(mask, np.shape(logits)).any(axis=-1).all():
            raise ValueError("this 2-D mask has an empty row")
        return good(logits, mask)

    def capital_row(logits, mask):  # "Row 2 ..." names the row too
        empty = ~np.broadcast_to(mask, np.shape(logits)).any(axis=-1)
        if empty.any():
            raise ValueError(f"Row {np.argwhere(empty)[0][0]} has no key")
        return good(logits, mask)

    def unstable(logits, mask):
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(logits) * mask
            return e / e.sum(axis=-1, keepdims=True)

    def ignores_mask(logits, mask):
        return softmax(logits)

    def finite_fill(logits, mask):  # -1e4 for a masked logit: the masked key wins against logits below it
        m = np.broadcast_to(mask, np.shape(logits))
        return good(np.where(m, logits, -1e4), m | m.any(axis=-1, keepdims=True))  # empty rows still raise

    def added_fill(logits, mask):  # -1e9 added to a masked logit: still finite
        m = np.broadcast_to(mask, np.shape(logits))
        return good(np.asarray(logits) + np.where(m, 0.0, -1e9), m | m.any(axis=-1, keepdims=True))

    assert check("07.masked_softmax", good, quiet=True) and check("07.masked_softmax", capital_row, quiet=True)
    for wrong in (nan_on_empty_row, unnamed_error, digit_not_row, unstable, ignores_mask, finite_fill, added_fill):
        assert not check("07.masked_softmax", wrong, quiet=True), wrong.__name__


def test_masked_softmax_nan_row_gets_the_raise_hint(capsys):
    """The likely slip on 07.masked_softmax -- the model solution without the raise, a NaN row on the
    all-False row -- is told to raise, not that its result is not real numbers; the NaN guard still
    answers a NaN on a row that has keys, and a message naming another row with a stray 2 fails."""
    from sdpa_helpers.exercises.attention_maps import _rows_named

    def nan_on_empty_row(logits, mask):
        z = np.where(mask, logits, -np.inf)
        with np.errstate(invalid="ignore"):
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    assert not check("07.masked_softmax", nan_on_empty_row)
    out = capsys.readouterr().out
    assert "should raise a ValueError naming the row" in out and "[nan nan nan nan]" in out
    assert "not real numbers" not in out
    assert not check("07.masked_softmax", lambda logits, mask: np.full(np.shape(logits), np.nan))
    assert "not real numbers" in capsys.readouterr().out
    for named in ("row 2 of mask has no True entry", "row (2,) is empty", "rows [[2]]", "Row 2", "row index 2",
                  "mask[2] is all False", "index 2", "empty at position 2"):
        assert _rows_named(named) == {2}, named
    for unnamed in ("row 0 is bad; 2 keys", "this 2-D mask has an empty row", "row 12 is empty"):
        assert 2 not in _rows_named(unnamed), unnamed

    def names_another_row(logits, mask):
        if not np.broadcast_to(mask, np.shape(logits)).any(axis=-1).all():
            raise ValueError("row 0 is bad; 2 keys")
        return nan_on_empty_row(logits, mask)

    assert not check("07.masked_softmax", names_another_row)
    assert "name the row (2)" in capsys.readouterr().out


def test_exercises_08():
    assert check("08.xavier_head_var", 1536 / 832, quiet=True) and not check("08.xavier_head_var", 1.0, quiet=True)
    assert check("08.default_logit_var", 128 / 9, quiet=True)
    assert not check("08.default_logit_var", 128 / 3, quiet=True)
    assert check("08.rho_mean", 8.0, quiet=True) and not check("08.rho_mean", 256, quiet=True)
    assert check("08.cosine_logit", lambda q, k, g: g * np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k)),
                 quiet=True)
    assert not check("08.cosine_logit", lambda q, k, g: g * np.dot(q, k), quiet=True)
    assert not check("08.cosine_logit", lambda q, k, g: np.dot(q, k) / (np.linalg.norm(q) * np.linalg.norm(k)),
                     quiet=True)


# -- notebooks 01 and 02 ------------------------------------------------------------------------------

@pytest.mark.parametrize("key,right,wrongs", [
    ("01.hand_dot", 2, [14, 8, -2]),
    ("01.qk_shape", (5, 7), [(7, 5), (5, 64), 35]),
    ("01.frobenius", -3, [3, 5, [[2, -2], [-3, 0]]]),
    ("02.var_components_3", 64 * 3 * 3, [64 * (3 + 3), 64 * 3, 64, 9, 24]),  # variances add? no: they multiply
    ("02.general", (32 * 1 * -1, 32 * ((2 + 1) * (1 + 1) - 1)),
     [(32, 160), (-32, 192), (-32, 224), (-32, 96), 160, (-1, 5)]),
    # 33: forgot to divide by d_k; 36/8: forgot the -3; 3/8: the component's (m4 - 3)/d_k, not the product's
    ("02.kurtosis_laplace", (6**2 - 3) / 8, [33, 36 / 8, 3 / 8, -33 / 8]),
])
def test_numeric_exercises(key, right, wrongs, capsys):
    assert check(key, right, quiet=True)
    for wrong in wrongs:
        assert not check(key, wrong, quiet=True), f"{key} accepted {wrong!r}"


@pytest.mark.parametrize("answer,words", [
    (np.ones((5, 7)), "looks like a matrix"), ([[5, 7], [7, 5]], "looks like a matrix"),
    (35, "one integer per axis"), ((5, 7, 64), "2 entries"), ((5.5, 7), "whole number"), ((7, 6), "off"),
    ((7, 5), "K @ Q.T"), ((5, 64), "shape of Q itself"),
])
def test_qk_shape_feedback_talks_about_shapes(answer, words, capsys):
    assert not check("01.qk_shape", answer)
    out = capsys.readouterr().out
    assert words in out and "with shape (2,)" not in out


@pytest.mark.parametrize("answer,words", [
    ((-32, 100), "the mean is right; the variance is off"), ((7, 160), "the variance is right; the mean is off"),
    ((7, 100), "(mean, variance) is off"), ((-1, 5), "ONE term"), ((32, 160), "wrong sign"),
    ((-32, 224), "the missing square"),  # section 4's wrong rule: 32 * (3 * 2 - (1 * -1))
])
def test_general_pair_feedback_says_which_half_is_wrong(answer, words):
    ok, feedback = exercises.get("02.general").checker(answer)
    assert not ok and words in feedback, feedback


def test_rowwise_dot_exercise_accepts_correct_functions_and_rejects_lookalikes():
    right = [lambda A, B: (np.asarray(A) * np.asarray(B)).sum(axis=1),
             lambda A, B: np.einsum("ij,ij->i", A, B),
             lambda A, B: np.array([np.dot(a, b) for a, b in zip(A, B)])]
    wrong = [lambda A, B: np.asarray(A) @ np.asarray(B).T,         # the whole table
             lambda A, B: np.sum(np.asarray(A) * np.asarray(B)),   # the Frobenius product
             lambda A, B: (np.asarray(A) * np.asarray(B)).sum(axis=0),  # sums the wrong axis
             lambda A, B: np.asarray(A).sum(axis=1) * np.asarray(B).sum(axis=1)]
    for fn in right:
        assert check("01.rowwise_dot", fn, quiet=True)
    for fn in wrong:
        assert not check("01.rowwise_dot", fn, quiet=True)


def test_rowwise_dot_refuses_the_full_table_even_with_the_right_numbers():
    """np.diag(A @ B.T) gives the right n numbers from n^2; the checker sees the n x n table in memory."""
    table_ways = [lambda A, B: np.diag(np.asarray(A) @ np.asarray(B).T),
                  lambda A, B: np.einsum("ij,kj->ik", A, B).diagonal().copy()]
    for fn in table_ways:
        ok, feedback = exercises.get("01.rowwise_dot").checker(fn)
        assert not ok and "full 2000 x 2000 table" in feedback, feedback
    ok, _ = exercises.get("01.rowwise_dot").checker(lambda A, B: np.einsum("ij,ij->i", A, B))
    assert ok


# -- notebooks 05 and 06 ------------------------------------------------------------------------------

def test_exercises_accept_right_and_reject_wrong_answers():
    q = dict(quiet=True)
    assert check("05.scaled_weight", 1 / (1 + np.exp(-2)), **q) and not check("05.scaled_weight", 0.9997, **q)
    assert check("05.temperature", 10.0, **q) and not check("05.temperature", 100.0, **q)
    assert check("05.effective_keys_law", 377, **q) and check("05.effective_keys_law", 1024 / np.e, **q)
    assert not check("05.effective_keys_law", 5.93, **q) and not check("05.onset_moves", "a", **q)  # H, ln n
    assert check("05.onset_moves", "b", **q)

    def stable(x):
        x = np.asarray(x, dtype=float)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def naive(x):
        return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)

    def global_max(x):  # stable, but not row by row
        e = np.exp(x - x.max())
        return e / e.sum()

    assert check("05.stable_softmax", stable, **q)
    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", naive, **q)
    assert not check("05.stable_softmax", global_max, **q)

    def global_max_row_sums(x):  # one maximum for the whole batch: a row far below it underflows to 0/0
        e = np.exp(x - x.max())
        return e / e.sum(axis=-1, keepdims=True)

    with np.errstate(all="ignore"):
        assert not check("05.stable_softmax", global_max_row_sums, **q)
    assert not check("05.scaled_weight", None, **q) and not check("06.softmax_jacobian", lambda p: None, **q)

    assert check("06.jacobian_half", [[0.25, -0.25], [-0.25, 0.25]], **q)
    assert not check("06.jacobian_half", [[0.25, 0.25], [0.25, 0.25]], **q)
    assert check("06.largest_entry", 0.21, **q) and not check("06.largest_entry", 0.14, **q)
    assert check("06.cross_entropy_grad", 1.40, **q) and check("06.cross_entropy_grad", 0.99 * np.sqrt(2), **q)
    assert not check("06.cross_entropy_grad", 0.02, **q) and not check("06.cross_entropy_grad", 0.99, **q)
    assert check("06.softmax_jacobian", lambda p: np.diag(p) - np.outer(p, p), **q)
    assert not check("06.softmax_jacobian", lambda p: np.diag(p * (1 - p)), **q)  # diagonal only
    assert not check("06.softmax_jacobian", lambda p: np.outer(p, p) - np.diag(p), **q)  # sign flipped
    assert not check("06.softmax_jacobian", lambda p: np.diag(p), **q)


# -- notebook 00 --------------------------------------------------------------------------------------

def test_predict_exercise(capsys):
    assert check("00.predict_largest_weight", ("up", "same")) is True
    assert check("00.predict_largest_weight", [" UP ", "Same"]) is True
    for wrong in (("down", "same"), ("up", "up"), ("same", "same"), "up", ("up",), ("up", "x"), 3):
        assert check("00.predict_largest_weight", wrong) is False
    capsys.readouterr()


def test_numeric_exercises_of_notebook_00(capsys):
    assert check("00.bert_d_k", 64) and not check("00.bert_d_k", 64.5)
    assert check("00.std_unscaled", 16) and not check("00.std_unscaled", 256)
    assert check("00.scale_for_variance_4", 0.0221) and not check("00.scale_for_variance_4", 1 / 512**0.5)
    assert not check("00.scale_for_variance_4", 0.0228)  # 3 % off
    assert not check("00.std_unscaled", -16)  # a slip: the sign
    capsys.readouterr()


@pytest.mark.parametrize("key,two_figures,three_figures", [
    ("00.scale_for_variance_4", 0.022, 0.0221),
    ("04.wrong_d", 0.29, 0.289),
    ("04.split_scale", 0.35, 0.354),
    ("03.scaled_z", -0.68, -0.678),  # the exact value is -0.6784
])
def test_two_significant_figures_are_told_as_too_few(key, two_figures, three_figures):
    from sdpa_helpers import exercises as E
    checker = E.get(key).checker
    ok, feedback = checker(two_figures)
    assert not ok and "2 significant figures" in feedback and "not right to 3 significant figures" in feedback, feedback
    assert checker(three_figures)[0] and checker(float(checker.expected))[0]


def test_wrong_d_knows_section_5s_value_for_d_model_512():
    from sdpa_helpers import exercises as E
    ok, feedback = E.get("04.wrong_d").checker(0.354)
    assert not ok and "d_model = 512" in feedback


# --- slips: every numeric exercise names its classic wrong answers (issue 20 §5) ---------------

def _numeric_keys():
    from sdpa_helpers import exercises as E
    return [k for k in E.keys() if getattr(E.get(k).checker, "kind", None) in ("number", "tuple")]


def test_every_numeric_exercise_knows_a_slip():
    from sdpa_helpers import exercises as E
    missing = [k for k in _numeric_keys() if not E.get(k).checker.slips]
    assert not missing, f"numeric exercises without a classic wrong answer (Slip): {missing}"


@pytest.mark.parametrize("key", _numeric_keys())
def test_each_slip_is_named_in_the_feedback(key):
    from sdpa_helpers import exercises as E
    ex = E.get(key)
    for slip in ex.checker.slips:
        if callable(getattr(slip, "value", None)) or isinstance(slip, tuple):
            continue  # a function exercise's slips: see test_function_slips_are_diagnosed
        ok, feedback = ex.checker(slip.value)
        assert not ok, f"{key}: the slip {slip.means!r} is accepted as correct"
        assert slip.means in feedback, f"{key}: feeding {slip.value!r} gives {feedback!r}, not the slip's meaning"


def test_too_few_significant_figures_is_told_as_that():
    from sdpa_helpers.exercises import numeric_checker
    c = numeric_checker(0.01357, what="the weight")
    ok, feedback = c(0.014)
    assert not ok and "2 significant figures" in feedback and "not right to 3 significant figures" in feedback
    ok, feedback = c(0.01)
    assert not ok and "1 significant figure" in feedback


def test_a_tie_rounded_half_up_is_told_as_too_few_figures_too():
    """0.0625 to two figures: 0.062 (ties to even) and 0.063 (half up, as taught in school) both name the slip."""
    from sdpa_helpers.exercises import numeric_checker
    c = numeric_checker(0.0625, what="the spread")
    for rounded in (0.062, 0.063):
        ok, feedback = c(rounded)
        assert not ok and "2 significant figures" in feedback, (rounded, feedback)
    ok, feedback = numeric_checker(0.25, what="w")(0.3)  # 0.25 to one figure, half up
    assert not ok and "1 significant figure" in feedback
    ok, feedback = c(0.064)  # no rounding of 0.0625: plainly off (too few figures is said only of a right short answer)
    assert not ok and feedback.endswith("is off.")


def test_string_answer_hint_uses_the_answer_given():
    from sdpa_helpers.exercises import numeric_checker
    ok, feedback = numeric_checker(1 / 32, what="c")("1/32")
    assert not ok and '"1/32" is not a number' in feedback


def test_wrong_function_answer_shows_input_expected_and_returned():
    from sdpa_helpers.exercises import function_checker
    c = function_checker(lambda x: np.asarray(x) * 2, [(np.array([1.0, 2.0]),)], names=["two numbers"])
    ok, feedback = c(lambda x: np.asarray(x) * 3)
    assert not ok
    assert "input:" in feedback and "[1., 2.]" in feedback
    assert "expected: [2., 4.]" in feedback and "returned: [3., 6.]" in feedback


# --- issue 29 §6: the exercise items ---------------------------------------------------------------

def test_sample_variance_refuses_np_var_in_any_form(capsys):
    import statistics

    def with_np_var(x, ddof):
        return np.var(x, ddof=ddof)

    def with_method(x, ddof):
        return np.asarray(x, dtype=float).var(ddof=ddof)

    def with_statistics(x, ddof):
        return statistics.variance(x) if ddof else statistics.pvariance(x)

    def nested(x, ddof):
        return (lambda v: np.var(v, ddof=ddof))(x)

    for fn in (with_np_var, with_method, with_statistics, nested):
        assert not check("03.sample_variance", fn), fn.__name__
        assert "without np.var" in capsys.readouterr().out

    def by_hand(x, ddof):
        x = np.asarray(x, dtype=float)
        return ((x - x.mean()) ** 2).sum() / (len(x) - ddof)

    assert check("03.sample_variance", by_hand, quiet=True)


def _function_slips(key):
    return getattr(exercises.get(key).checker, "slips", ())


@pytest.mark.parametrize("key", [k for k in exercises.keys()
                                 if getattr(exercises.get(k).checker, "kind", None) == "function"
                                 and getattr(exercises.get(k).checker, "slips", ())])
def test_function_slips_are_diagnosed(key):
    """Every classic wrong function (03's variance slips, 06's two Jacobian slips, ...) is told what it does."""
    for slip, means in _function_slips(key):
        ok, feedback = exercises.get(key).checker(slip)
        assert not ok and feedback == f"your function {means}.", (key, means, feedback)


def test_jacobian_exercise_diagnoses_its_two_classic_slips():
    means = [m for _, m in _function_slips("06.softmax_jacobian")]
    assert any("sign" in m for m in means) and any("p * p" in m for m in means) and any("p @ p" in m for m in means)


def test_04_says_you_divided_by_d_k_not_its_root():
    c = exercises.get("04.split_scale").checker
    assert "you divided by d_k, not √d_k" in c(0.125)[1]
    ok, feedback = exercises.get("04.scaled_scores").checker(lambda Q, K: Q @ np.swapaxes(K, -1, -2) / Q.shape[-1])
    assert not ok and "you divided by d_k, not √d_k" in feedback


def test_sample_variance_hint_matches_the_bug():
    hint = exercises.hint("03.sample_variance")
    assert "Subtract the mean" in hint and "minus ddof" in hint
    means = " ".join(m for _, m in _function_slips("03.sample_variance"))
    assert "whatever ddof is" in means and "deviations from the mean" in means


@pytest.mark.parametrize("message,ok", [
    ("row 2 of mask has no True entry", True), ("mask[2] is all False", True), ("index 2 has no key", True),
    ("Row index 2 is empty", True), ("row (2,) is empty", True),
    ("rows 2 and 0 are empty", False), ("mask[2] is empty; row 1 is fine", False), ("row 0 is empty", False),
    ("this mask has an empty row", False),
])
def test_masked_softmax_names_the_empty_row_in_any_plain_form(message, ok):
    def fn(logits, mask):
        if not np.broadcast_to(mask, np.shape(logits)).any(axis=-1).all():
            raise ValueError(message)
        from sdpa_helpers.attention import softmax
        return softmax(np.where(mask, logits, -np.inf), axis=-1)

    verdict, feedback = exercises.get("07.masked_softmax").checker(fn)
    assert verdict is ok, (message, feedback)


def _wrong_answers(key):
    """The plausible wrong answers of an exercise, each with the words its feedback must contain
    to name the slip: every classic slip, the answer at too few figures, every wrong choice."""
    c = exercises.get(key).checker
    kind = getattr(c, "kind", None)
    out = []
    if kind in ("number", "tuple"):
        out += [(s.value, s.means) for s in c.slips]
        few = float(f"{float(c.expected):.2g}") if kind == "number" else None
        if kind == "number" and c.figures[0] is not None and not c(few)[0]:
            out.append((few, "significant figure"))
    elif kind == "choice":
        out += [(letter, text) for letter, text in c.options.items() if letter != c.correct]
    elif kind == "choices":
        import itertools
        for combo in itertools.product(*c.slots):
            if not c(combo)[0]:
                out.append((combo, "you say"))
    elif kind == "function":
        out += [(fn, f"your function {means}") for fn, means in getattr(c, "slips", ())]
    return out


def _named(key, answer, words):
    ok, feedback = exercises.get(key).checker(answer)
    return not ok and words in feedback and ":" in (feedback if not words.startswith("your function") else ":")


def test_plausible_wrong_answers_get_a_message_naming_the_slip(capsys):
    """Issue 29 §6 (76 of 87 before): every plausible wrong answer is told which slip it is; the count is printed."""
    total = named = 0
    unnamed = []
    for key in exercises.keys():
        for answer, words in _wrong_answers(key):
            total += 1
            ok, feedback = exercises.get(key).checker(answer)
            explained = not ok and words in feedback and (getattr(exercises.get(key).checker, "kind", "") != "choice"
                                                          or ":" in words)
            named += explained
            if not explained:
                unnamed.append((key, words, feedback))
    with capsys.disabled():
        print(f"\nplausible wrong answers named: {named} of {total}")
    assert not unnamed, unnamed


def test_no_message_gives_the_answer_away():
    """After one wrong try (a slip, a wrong value, too few figures), neither feedback nor hint states the answer."""
    import re
    for key in exercises.keys():
        c = exercises.get(key).checker
        if getattr(c, "kind", None) not in ("number", "tuple"):
            continue
        if c.kind == "tuple":
            answers = [", ".join(F.js_number(x) for x in np.ravel(c.expected))]
        else:
            answers = [F.js_number(float(c.expected)), f"{float(c.expected):.3g}"]
        tries = [a for a, _ in _wrong_answers(key)] + [np.asarray(c.expected) * 1.5 + 1]
        given = set(re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", exercises.question(key)))
        for answer in tries:
            ok, feedback = c(answer)
            said = feedback + " " + exercises.hint(key)
            numbers = set(re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?", said))
            for a in answers:
                if "," in a:
                    assert a not in said, (key, answer, a, said)
                elif abs(float(a)) not in (0.0, 1.0, 2.0) and a not in given:  # common, or given in the question
                    assert a not in numbers, (key, answer, a, said)


F = exercises._figures


# --- the checker holds against a learner's code (formerly test_checker_holds.py) -------------------

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


@pytest.mark.parametrize("key,answer,named", [
    ("06.cross_entropy_grad", 0.02, "the bound 2 (1 − max p)"),  # typed short: the slip is exactly 0.02
    ("06.cross_entropy_grad", 2, "an upper limit"),
    ("08.xavier_head_var", 1.78, "d_model = 512"),
    ("08.xavier_head_var", 3.41, "Var(q_i)^2"),  # 1.846^2: the scaled logit's variance, not Var(q_i)
    ("08.xavier_head_var", 0.923, "without its factor 2"),  # 768/832: Xavier's Var(W) without its 2 (learner, issue 38)
    ("08.rho_mean", 16, "rho = 0.5"),
    ("03.scaled_z", -7.15, "111 sqrt(111)"),
    ("01.hand_dot", 8, "third product left out"),
    ("01.frobenius", 7, "without their signs"),
])
def test_the_readers_slips_are_named(key, answer, named):
    """Slips the re-read of this session found told only "off" (or named half of their readings)."""
    ok, feedback = _REGISTRY[key].checker(answer)
    assert not ok and named in feedback, feedback


def test_a_wrong_jacobian_does_not_print_another_exercise_answer():
    """06.softmax_jacobian's first failing case printed J at p = [0.5, 0.5], the answer of 06.jacobian_half."""
    from sdpa_helpers.exercises import _REGISTRY as registry
    half = registry["06.jacobian_half"].checker.expected
    ok, feedback = registry["06.softmax_jacobian"].checker(lambda p: np.diag(p))
    assert not ok and np.array2string(half, precision=2) not in feedback and "0.25" not in feedback, feedback


def test_a_function_off_in_the_fourth_digit_is_told_how_far():
    """Equal when rounded to 3 digits is not equal: the feedback names the gap, not two identical arrays."""
    def off(p):
        p = np.asarray(p, dtype=float)
        return (np.diag(p) - np.outer(p, p)) * (1 + 1e-4)

    ok, feedback = exercises.get("06.softmax_jacobian").checker(off)
    assert not ok
    assert "equal to 3 digits, but the largest difference is" in feedback
    gap = float(feedback.split("largest difference is ")[1].split(":")[0])
    p = np.asarray(exercises.get("06.softmax_jacobian").checker.cases[0][0], dtype=float)
    assert gap == pytest.approx(1e-4 * np.abs(np.diag(p) - np.outer(p, p)).max(), rel=0.06)


# --- issue 38 item 6: the named slips, each value computed here by the mistake itself -------------

_A, _B = np.array([[1, -2], [3, 0]]), np.array([[2, 1], [-1, 5]])  # 01.frobenius
_NAMED_SLIPS = [
    ("00.bert_d_k", 12, "the number of heads"),  # h itself
    ("00.scale_for_variance_4", 1 / 512, "1/d_k"),  # divided by d_k
    ("00.scale_for_variance_4", "0.00195", "1/d_k"),
    ("01.frobenius", int(np.sum(_A[0] * _B[0])), "first row"),  # 1*2 + (-2)*1 = 0
    ("01.frobenius", int(np.trace(_A @ _B)), "trace(A B)"),  # 7
    ("01.cos_spread", float(np.sqrt(256) * np.sqrt(1 / 256)), "sqrt(d_k) cos(theta)"),  # the figure's spread, 1
    ("02.kurtosis_laplace", (3.0**2 - 3.0) / 8, "normal components"),  # E[x^4] = 3 of a normal: 0.75
    ("02.kurtosis_laplace", (6.0**2 - 3.0) / 16, "printed above"),  # the printed d_k = 16 value: 2.0625
    ("02.kurtosis_laplace", "2.062", "printed above"),  # as printed (3 decimals)
    ("02.kurtosis_laplace", "2.06", "printed above"),
    ("05.scaled_weight", float(f"{1 / (1 + np.exp(-8.0)):.3g}"), "unscaled weight"),  # 0.99966 at 3 figures: 1
    ("05.effective_keys_law", 1024, "n, all 1024 keys"),
    ("06.cross_entropy_grad", abs(0.99 - 0) + abs(0.01 - 1), "L1"),  # the L1 norm of p - e_2: 1.98
    ("06.cross_entropy_grad", float(f"{np.sqrt(4 * (0.99 * 0.01) ** 2) * 100:.3g}"), "0.0198 × 100"),  # ‖J‖_F ‖g‖: 1.98
    ("06.cross_entropy_grad", 1 / 0.01, "‖g‖"),  # the norm of dL/dp = (0, -1/p_2): 100
    # g = (0, -1), the 1/p_2 dropped: J g = (0.0099, -0.0099), norm 0.0140, as written with two figures too
    ("06.cross_entropy_grad", float(np.hypot(0.99 * 0.01, 0.99 * 0.01)), "1/p_2"),
    ("06.cross_entropy_grad", 0.014, "1/p_2"),
    ("06.largest_entry", -0.7 * 0.2, "off-diagonal"),  # -p_1 p_2 = -0.14
    ("06.largest_entry", "-0.14", "off-diagonal"),
    ("06.jacobian_half", [[0.5, -0.25], [-0.25, 0.5]], "p_i on the diagonal"),
    ("08.xavier_head_var", float(f"{2 / (768 + 64):.2g}"), "Var(W)"),  # Var(W) alone, as read: 0.0024
    ("08.xavier_head_var", 768 * 2 / 768, "He's rule"),  # 2: 2/fan_in, fan_out left out
]


@pytest.mark.parametrize("key,answer,named", _NAMED_SLIPS)
def test_the_named_slips_of_issue_38(key, answer, named):
    ok, feedback = exercises.get(key).checker(answer)
    assert not ok and named in feedback, feedback
    assert "significant figure" not in feedback, feedback  # 2 for 1.85 is a slip, not "right but short"


def test_scaled_scores_names_k_t_on_a_stack_and_the_wrong_axis():
    c = exercises.get("04.scaled_scores").checker
    for transposed in (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]),
                       lambda Q, K: np.matmul(Q, np.transpose(K)) / np.sqrt(K.shape[-1])):
        ok, feedback = c(transposed)
        assert not ok and "K.T" in feedback and "(16, 6, 2)" in feedback and "swapaxes" in feedback, feedback
        assert "raised ValueError" not in feedback and "matmul" not in feedback
    ok, feedback = c(lambda Q, K: Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[1]))
    assert not ok and "Q.shape[1]" in feedback and "Q.shape[-1]" in feedback, feedback
    ok, feedback = c(lambda Q, K: np.ones(3) @ K)  # an error no slip makes is still told as it is
    assert not ok and "raised ValueError" in feedback, feedback


def test_scaled_z_accepts_the_solution_s_route():
    """(110.56 - 111)/SE gives -0.679; (0.99604 - 1)/(SE/111) gives -0.678: both follow the question."""
    from sdpa_helpers.small_samples import THREAD_BIG, z_score
    sd = exercises.get("03.scaled_z").checker.expected  # checked below against the solution's route
    route = z_score(THREAD_BIG, 111.0, theory.matmul_sample_variance_moments(1111, 111, 1111).std)
    assert f"{route:.3g}" == "-0.679" and f"{float(sd):.3g}" == "-0.678"
    for answer in (-0.679, "-0.679", -0.678, route, float(sd)):
        assert check("03.scaled_z", answer, quiet=True), answer
    assert not check("03.scaled_z", -0.677, quiet=True) and not check("03.scaled_z", 0.679, quiet=True)


def test_choice_feedback_reads_as_one_sentence(capsys):
    """Was "❌ 02.exact_case_design: not yet. not (a) [-1, 1] has mean 0: ..."."""
    assert not check("02.exact_case_design", "a")
    line = capsys.readouterr().out.splitlines()[0]
    assert line == ("❌ 02.exact_case_design: not yet. (a) [-1, 1]: both rules give 1, so it cannot tell them apart; "
                    "subtract one rule from the other to see why.")
    for key in CHOICES:
        for letter in exercises.get(key).checker.options:
            feedback = exercises.get(key).checker(letter)[1]
            assert not feedback.startswith("not ("), feedback


def test_masked_softmax_nan_row_message_is_sentences(capsys):
    def nan_on_empty_row(logits, mask):
        z = np.where(mask, logits, -np.inf)
        with np.errstate(invalid="ignore"):
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    ok, feedback = exercises.get("07.masked_softmax").checker(nan_on_empty_row)
    assert not ok
    sentences = [s for s in feedback.split(". ") if s]
    assert len(sentences) == 3 and all(len(s) < 160 for s in sentences), sentences
    assert sentences[2].startswith("It should raise a ValueError naming the row (2)")


def test_cos_spread_hint_and_d_v_factor_give_nothing_away():
    import re
    _, said = exercises.get("03.np_var_mean").checker(2.0)  # learner 5: the slip's message gave the factor 8/9
    assert "8/9" not in said and "m = 3" in said, said
    hint = exercises.hint("01.cos_spread")
    assert "about sqrt(d_k)" not in hint and "standard deviation sqrt(d_k)" not in hint, hint
    ok, feedback = exercises.get("07.d_v_factor").checker(0)
    assert not ok and re.findall(r"\d+", feedback) == ["0", "0"], feedback  # no "factor of 1"


@pytest.mark.parametrize("key, answer, words", [
    ("05.scaled_weight", 0.731, "8 = √64"),
    ("09.logit_grad_w_q", [[0, 2, 2], [0, 0, 0]], "k yᵀ"),
    ("07.d_v_factor", 0.5, "never d_v"),
    ("09.logit_grad_w_q", [[2, 4, 0], [2, 4, 0]], "minus sign of W_K lost"),  # learner 5: k = (2, 2) for (2, 0)
    ("07.output_component", 10, "the largest value"),  # learner 6
    ("07.output_component", 1, "without its last term"),  # learner 6
])
def test_the_learner_s_slips_of_this_round_are_named(key, answer, words):
    """A learner's read (issue 38's last round) found three plausible slips that check() only called off."""
    from sdpa_helpers.exercises import get

    ok, feedback = get(key).checker(answer)
    assert not ok and words in feedback, feedback


def test_a_wrong_letter_of_02_exact_case_design_does_not_give_the_answer_away():
    """Learner, issue 38: every wrong letter said "has mean 0", so one wrong try left only (c). Each wrong
    letter now gives its own reason, and none names the property the right list lacks."""
    c = exercises.get("02.exact_case_design").checker
    messages = [c(letter)[1] for letter in "abd"]
    assert len(set(messages)) == 3
    for m in messages:
        assert "mean" not in m and "[1, 2]" not in m and "(c)" not in m, m


def test_08_what_bounds_hint_points_to_the_method_not_the_answer():
    """Learner, issue 38: "acts on q and k themselves ... at every step of training" named QK-norm before a try."""
    hint = exercises.get("08.what_bounds").hint
    assert "q and k themselves" not in hint and "every step" not in hint and "QK-norm" not in hint


def test_a_float_with_a_dropped_trailing_zero_is_not_told_its_figures():
    """Learner, issue 38: 0.880 typed is the float 0.88 in Python; "0.88 has 2 significant figures" was wrong
    about what was typed. The message says the value is not right to the asked figures."""
    ok, feedback = numeric_checker(0.8808)(0.880)
    assert not ok and "not right to 3 significant figures" in feedback and " has " not in feedback, feedback


@pytest.mark.parametrize("key, answer, words", [
    ("01.cos_spread", 0.0039, "the variance of cos(theta)"),  # learners 6 and 8: 0.00390625 typed to 2 figures
    ("01.cos_spread", "0.0039", "the variance of cos(theta)"),
    ("08.xavier_head_var", 1.8, "not right to 3 significant figures"),  # the right 1.85 given short, though 1.78 -> 1.8
    ("01.cos_spread", 0.004, "is off"),  # one figure matches no slip
])
def test_a_slip_typed_to_two_figures_is_named_unless_it_is_the_answer_given_short(key, answer, words):
    """Learners 6 and 8 (issue 38) typed the variance as 0.0039 and met a plain "off": a slip needed three
    figures. Two figures now name it, except where the answer is also the right one given short."""
    ok, feedback = exercises.get(key).checker(answer)
    assert not ok and words in feedback, feedback
