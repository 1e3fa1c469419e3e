"""Self-checked exercises: ``check("00.bert_d_k", 64)`` prints a verdict and returns a bool.

:func:`hint`, :func:`question`, :func:`get`, :func:`keys` read the registry; each bank (one module per
notebook) uses :func:`register` with :func:`numeric_checker` (the significant-figures rule of
:mod:`._figures`, shared with the site through :func:`page_spec`), :func:`function_checker` or
:func:`choice_checker`. A learner's function gets fresh copies of the arrays and a time limit.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import dis
import functools
import importlib
import numbers
import pkgutil
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._numerics import controlled_errstate
from . import _answers as A
from . import _figures as F
from . import _text as T

__all__ = ["Exercise", "Slip", "check", "get", "hint", "question", "keys", "register",
           "numeric_checker", "function_checker", "with_attributes", "choice_checker", "is_untouched_stub",
           "TIME_LIMIT", "page_spec"]

#: Seconds a learner's answer may take to check before :func:`check` stops it (see there).
TIME_LIMIT = 5.0


@dataclass(frozen=True)
class Exercise:
    """One exercise: a key, the question, a hint, and a checker returning ``(ok, feedback)``."""

    key: str
    question: str
    hint: str
    checker: Callable[[Any], tuple[bool, str]]


@dataclass(frozen=True)
class Slip:
    """A classic wrong answer: ``value`` computed by the mistake itself from the exercise's inputs,
    ``means`` what that mistake is ("the variance of q·k, not its spread")."""

    value: Any
    means: str


_REGISTRY: dict[str, Exercise] = {}


def register(key: str, question: str, hint: str, checker: Callable[[Any], tuple[bool, str]]) -> Exercise:
    """Add an exercise to the registry (keys are unique ``"NN.name"`` strings)."""
    if not isinstance(key, str) or "." not in key:
        raise ValueError(f"key must look like 'NN.name', got {key!r}")
    if key in _REGISTRY:
        raise ValueError(f"exercise {key!r} is registered twice")
    ex = Exercise(key, question, hint, checker)
    _REGISTRY[key] = ex
    return ex


def get(key: str) -> Exercise:
    """The registered :class:`Exercise` ``key``; an unknown key raises KeyError suggesting the closest."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a string such as '00.bert_d_k', got {key!r}")
    key = key.strip()
    if key not in _REGISTRY:
        _load_banks(key.split(".")[0])
    if key not in _REGISTRY:
        _load_banks()  # every key, for the suggestions below
        close = difflib.get_close_matches(key, sorted(_REGISTRY), n=3, cutoff=0.6)
        if close:
            raise KeyError(f"no exercise {key!r}; did you mean {' or '.join(map(repr, close))}?")
        same = [k for k in sorted(_REGISTRY) if k.split(".")[0] == key.split(".")[0]]
        raise KeyError(f"no exercise {key!r}; known in notebook {key.split('.')[0]!r}: {same}" if same
                       else f"no exercise {key!r}; keys look like '00.bert_d_k' (see keys())")
    return _REGISTRY[key]


def keys(prefix: str = "") -> list[str]:
    """Registered exercise keys, optionally those starting with ``prefix`` (e.g. ``"02."``)."""
    _load_banks()
    return sorted(k for k in _REGISTRY if k.startswith(prefix))


def hint(key: str) -> str:
    """The hint of exercise ``key``."""
    return get(key).hint


def question(key: str) -> str:
    """The question of exercise ``key``."""
    return get(key).question


# --- the time limit ---------------------------------------------------------------------------

# BaseExceptions, so that neither a learner's nor a checker's ``except Exception:`` swallows them.
class _TimeUp(BaseException):
    """The time limit is reached inside a learner's code."""


class _AnswerProblem(BaseException):
    """The answer (or what the learner's function returned) is not something to compare."""


class _ReferenceFailed(BaseException):
    """The exercise's own reference failed: a bug of the course, never blamed on the answer."""


#: Longer limits than this (seconds) mean "no limit": setitimer cannot hold them.
_MAX_ALARM = 1e6


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _run_limited(fn: Callable[[], Any], seconds: float):
    """Call ``fn()``; raise :class:`_TimeUp` after ``seconds`` (where SIGALRM is available); an alarm
    set before is restored with the time it had left."""
    if not _can_alarm() or seconds > _MAX_ALARM:
        return fn()

    def on_alarm(signum, frame):
        raise _TimeUp

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:
            signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - start), 1e-3),
                             old_interval)


def check(key: str, answer, *, quiet: bool = False, time_limit: float | None = None) -> bool:
    """Check ``answer`` for exercise ``key``: print a verdict with feedback (unless ``quiet``), return True/False.

    An error raised by the answer (a learner's function) is a wrong answer with the error told.
    Checking stops after ``time_limit`` seconds (default :data:`TIME_LIMIT`) through SIGALRM: on
    Linux and macOS on the main thread, not inside one long numpy call, nor past a bare
    ``except:``. On Windows or off the main thread there is no limit: use Kernel ▸ Interrupt.
    """
    ex = get(key)
    key = ex.key
    if answer is None or answer is Ellipsis:
        if not quiet:
            print(f"❌ {key}: no answer yet. Replace the placeholder with your answer and run the cell again.")
            print(f"   Hint: {ex.hint}")
        return False
    limit = _time_limit(time_limit)
    ok, feedback = _checked(ex, answer, limit)
    ok = bool(ok)
    if not quiet:
        if ok:
            print(f"✅ {key}: correct. {feedback}".rstrip())
        else:
            print(f"❌ {key}: not yet. {feedback}".rstrip())
            print(f"   Hint: {ex.hint}")
    return ok


def _time_limit(time_limit) -> float:
    if time_limit is None:
        return TIME_LIMIT
    if isinstance(time_limit, (bool, np.bool_)) or not isinstance(time_limit, numbers.Real):
        raise TypeError(f"time_limit must be a number of seconds, got {time_limit!r}")
    limit = float(time_limit)
    if not limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    return limit


def _checked(ex: Exercise, answer, limit: float) -> tuple[bool, str]:
    """``(ok, feedback)`` for ``answer``: cleaned, under the time limit and numpy's default error
    handling; the learner's error settings and print options are back afterwards."""
    unordered = _unordered_kind(answer)
    if unordered:
        return False, (f"your answer is a {unordered}, which has no order; give a tuple or a list, "
                       f"e.g. (5, 7) or [0.5, 0.5].")
    if callable(answer) and is_untouched_stub(answer):
        return False, STUB_FEEDBACK
    if isinstance(answer, np.ma.MaskedArray):
        return False, "your answer is a masked array; give plain numbers (for example answer.filled(0.0))."
    given = _CleanedFunction(answer) if callable(answer) else answer
    saved_err = np.geterr()
    try:
        with np.printoptions(**np.get_printoptions()), controlled_errstate():
            return _run_limited(lambda: ex.checker(given), limit)
    except _TimeUp:
        return False, (f"checking your answer did not finish within {limit:g} s. Does your function "
                       f"loop forever (a `while` whose condition never becomes False)?")
    except _AnswerProblem as problem:
        return False, str(problem)
    except _ReferenceFailed as failure:
        return False, (f"this exercise could not be checked: its reference raised {failure} -- a bug in the "
                       f"course, not in your answer. Please report it.")
    except SystemExit:
        return False, "your answer called sys.exit() (or exit()): return a value instead."
    except Exception as exc:  # the learner's answer broke the checker: report, don't crash
        return False, f"checking your answer raised {type(exc).__name__}: {exc}"
    finally:
        np.seterr(**saved_err)


def _unordered_kind(answer) -> str | None:
    """'set' or 'dict' for an answer whose order is arbitrary (a set iterates sorted by chance)."""
    if isinstance(answer, (set, frozenset, type({}.keys()))):
        return "set"
    if isinstance(answer, (dict, type({}.values()), type({}.items()))):
        return "dict"
    return None


class _CleanedFunction:
    """A learner's function as every checker calls it: its result as real numbers, or an :class:`_AnswerProblem`
    telling a forgotten ``return``, ``sys.exit``, a set or something that is not real numbers."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "your function")

    def unchecked(self, *args, **kwargs):
        """The raw result (only ``sys.exit`` guarded): for a checker whose likely slip is not real numbers."""
        try:
            return self.fn(*args, **kwargs)
        except SystemExit:
            raise _AnswerProblem("your function called sys.exit() (or exit()): return a value instead.") from None

    def __call__(self, *args, **kwargs):
        result = self.unchecked(*args, **kwargs)
        if result is None:
            raise _AnswerProblem("your function returned None: did you forget `return`?")
        unordered = _unordered_kind(result)
        if unordered:
            raise _AnswerProblem(f"your function returned a {unordered}; return an array or a list.")
        arr, why = A.as_real_array(result, "its result")
        if arr is None:
            raise _AnswerProblem(f"your function returned something that is not real numbers: {why}")
        return arr


def with_attributes(checker: Callable[[Any], tuple[bool, str]], **attributes: Any) -> Any:
    """``checker`` with ``attributes`` set on it (``.expected``, ``.slips``...: what tests and the site read).

    >>> with_attributes(lambda answer: (True, ""), expected=64).expected
    64
    """
    for name, value in attributes.items():
        setattr(checker, name, value)
    return checker


def numeric_checker(expected, *, what: str = "the value", figures: int = F.FIGURES, slips: Sequence[Slip] = (),
                    entry_names: Sequence[str] | None = None, not_whole: str | None = None,
                    before: Callable[[Any], str | None] | None = None,
                    also: Sequence[Any] = ()) -> Callable[[Any], tuple[bool, str]]:
    """A checker for a number (or array of numbers) by the course's one rule (:mod:`._figures`).

    Integer entries are checked exactly, others to ``figures`` significant figures; answers may be
    text as typed (``"0.0220"``: three figures). ``slips`` (:class:`Slip`) are recognised by the same
    rule at the answer's own figures (in their own shape) and told; ``entry_names`` (a pair) says
    which half of a pair is off; ``not_whole`` is told for a fraction where an integer is asked;
    ``before(answer)`` may return feedback that refuses the answer first; ``also`` holds other
    values (same shape) that pass by the same rule: an answer from a route the question allows
    that rounds differently (the rest of the feedback reads ``expected``). The checker carries
    ``.expected``, ``.also``, ``.slips``, ``.figures`` (per entry, None for an integer) and ``.kind``.

    >>> c = numeric_checker(16.0, what="the spread", slips=[Slip(256.0, "the variance, not the spread")])
    >>> c(16)[0], c(256)
    (True, (False, 'your answer 256 is the variance, not the spread.'))
    >>> c = numeric_checker(1 / 45.25)
    >>> c(0.0221)[0], c(0.0222)
    (True, (False, 'the value is off.'))
    >>> c(0.022)[1]
    '0.022 is not right to 3 significant figures (it agrees to 2 significant figures).'
    """
    expected_arr = np.asarray(expected, dtype=float)
    if not np.isfinite(expected_arr).all():
        raise ValueError(f"expected must be finite, got {expected!r}")
    flat = expected_arr.ravel().tolist()
    refs = [F.of_float(x) for x in flat]
    ns = [None if float(x).is_integer() else int(figures) for x in flat]
    also_arrs = [np.asarray(a, dtype=float) for a in also]
    if any(a.shape != expected_arr.shape or not np.isfinite(a).all() for a in also_arrs):
        raise ValueError(f"also must hold finite values of the shape of expected {expected_arr.shape}")
    accepted = [refs] + [[F.of_float(x) for x in a.ravel().tolist()] for a in also_arrs]
    slips = tuple(slips)
    parsed_slips = []
    for slip in slips:
        if not isinstance(slip, Slip):
            raise TypeError(f"slips must be Slip objects, got {type(slip).__name__}")
        value = np.asarray(slip.value, dtype=float)
        if not np.isfinite(value).all():
            raise ValueError(f"slip {slip.means!r}: value must be finite")
        entries = [F.of_float(x) for x in value.ravel().tolist()]
        if value.shape == expected_arr.shape and any(all(
                F.judge_entry(e, r, n) == "right" for e, r, n in zip(entries, rs, ns)) for rs in accepted):
            raise ValueError(f"slip {slip.means!r} gives the right answer ({slip.value!r}): it is not a slip")
        parsed_slips.append((value.shape, entries, slip.means))

    def checker(answer):
        refused = before(answer) if before else None
        if refused:
            return False, refused
        got = A.entries(answer, what)
        if isinstance(got, str):
            return False, got
        shape, entries = got
        shown = A.shown(shape, [t for t, _ in entries])
        parsed = [p for _, p in entries]
        if shape == expected_arr.shape:
            if any(all(F.judge_entry(p, r, n) == "right" for p, r, n in zip(parsed, rs, ns)) for rs in accepted[1:]):
                return True, ""
            verdicts = [F.judge_entry(p, r, n) for p, r, n in zip(parsed, refs, ns)]
            if all(v == "right" for v in verdicts):
                return True, ""
        few_at = [v == "few" for v in verdicts] if shape == expected_arr.shape else [False] * len(parsed)
        for slip_shape, values, means in parsed_slips:
            slip_ns = ns if slip_shape == expected_arr.shape else [None] * len(values)
            if slip_shape == shape and all(F.slip_matches(p, v, n, few=f)
                                           for p, v, n, f in zip(parsed, values, slip_ns, few_at)):
                return False, f"your answer {shown} is {means}."
        if shape != expected_arr.shape:
            return False, (f"expected {A.shape_words(expected_arr.shape)} for {what}; your answer has "
                           f"{'shape ' + str(shape) if shape else 'one number'}.")
        if not_whole and any(n is None and int(p[2]) < 0 for p, n in zip(parsed, ns)):
            return False, not_whole
        few = [(t, p, n) for (t, p), v, n in zip(entries, verdicts, ns) if v == "few"]
        if few:
            t, p, n = few[0]
            lead = t if shape == () else f"an entry of your answer, {t},"
            # not "has 2 figures": Python sees the float 0.880 as 0.88, so the typed figures are unknown
            agrees = A.plural(p[3], "significant figure")
            return False, f"{lead} is not right to {n} significant figures (it agrees to {agrees})."
        right = [v == "right" for v in verdicts]
        if entry_names and len(right) == 2 and right.count(True) == 1:
            good, bad = (0, 1) if right[0] else (1, 0)
            return False, f"{entry_names[good]} is right; {entry_names[bad]} is off."
        return False, f"{what} is off."

    return with_attributes(checker, expected=expected_arr, also=tuple(also_arrs), slips=slips, figures=ns, what=what,
                           entry_names=tuple(entry_names) if entry_names else None, not_whole=not_whole,
                           kind="number" if expected_arr.shape == () else "tuple")


def choice_checker(correct: str, options: dict[str, str]) -> Callable[[Any], tuple[bool, str]]:
    """A checker for a multiple-choice question answered by a letter (case and spaces ignored).

    ``options`` maps each letter to the feedback text for choosing it, which follows the letter
    ("(a) double n: ..."); ``correct`` is the right letter.

    >>> c = choice_checker("b", {"a": "double n: that halves it", "b": "quadruple n"})
    >>> c("B")[0], c("a")
    (True, (False, '(a) double n: that halves it.'))
    >>> c("z")[1]
    "answer with one of the letters 'a', 'b' (as a string, e.g. answer = 'a')."
    """
    options = {str(k).strip().lower(): v for k, v in options.items()}
    correct = str(correct).strip().lower()
    if correct not in options:
        raise ValueError(f"correct must be one of the options {sorted(options)}, got {correct!r}")
    letters = ", ".join(repr(k) for k in options)

    def checker(answer):
        letter = T.strip(answer).lower() if isinstance(answer, str) else None
        if letter not in options:
            return False, f"answer with one of the letters {letters} (as a string, e.g. answer = 'a')."
        if letter == correct:
            return True, ""
        return False, f"({letter}) {options[letter]}."

    return with_attributes(checker, correct=correct, options=options, kind="choice")


# --- a learner's function ----------------------------------------------------------------------

def is_untouched_stub(fn) -> bool:
    """True when ``fn``'s body does nothing (``...``, ``pass`` or only a docstring): its bytecode is "return None".

    >>> def f(A, B):
    ...     ...  # your code
    >>> def g(A, B):
    ...     return A
    >>> is_untouched_stub(f), is_untouched_stub(g), is_untouched_stub(len)
    (True, False, False)
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code)
           if i.opname not in ("RESUME", "NOP", "CACHE", "COPY_FREE_VARS", "MAKE_CELL")]
    return ops in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


#: Feedback for an exercise stub whose body is still ``...``.
STUB_FEEDBACK = ("your function returned None: it is still the stub. Replace `...` with your code, "
                 "and `return` the result.")


def _show(x) -> str:
    """A short, rounded picture of an input or output for feedback (long arrays elided)."""
    if isinstance(x, tuple):
        return ", ".join(_show(a) for a in x)
    try:
        arr = np.asarray(x, dtype=float)
    except Exception:
        return repr(x)[:80]
    return np.array2string(arr, precision=3, threshold=12, edgeitems=2, max_line_width=100,
                           separator=", ").replace("\n", " ")


def _outcome(f: Callable, args: tuple):
    """``f(*args)`` as an array of floats, or the type of the error it raised."""
    try:
        with controlled_errstate():
            return np.asarray(f(*copy.deepcopy(args)), dtype=float)
    except (Exception, _AnswerProblem) as exc:
        return type(exc)


def _same_as(fn, slip: Callable, cases: list[tuple], rtol: float, atol: float) -> bool:
    """Whether ``fn`` does what the mistake ``slip`` does on every case: returns what it returns, or
    raises the same type of error where it raises (``K.T`` on a stack); at least one case returns."""
    returned = False
    for args in cases:
        want, got = _outcome(slip, args), _outcome(fn, args)
        if isinstance(want, type) or isinstance(got, type):
            if want is not got:
                return False
            continue
        if got.shape != want.shape or not A.close(got, want, rtol, max(atol, 1e-8)):
            return False
        returned = True
    return returned


def function_checker(reference: Callable, cases: list[tuple], *, rtol: float = 1e-7, atol: float = 1e-12,
                     names: list[str] | None = None, slips: Sequence[tuple[Callable, str]] = (),
                     before: Callable[[Any], str | None] | None = None,
                     after: Callable[[Any], tuple[bool, str] | None] | None = None,
                     ) -> Callable[[Any], tuple[bool, str]]:
    """A checker for a learner's function: run it on ``cases`` (tuples of arguments, deep-copied for
    every call) and compare with ``reference`` within ``rtol``/``atol``.

    ``names`` labels the cases in feedback (which case failed, not its answer); ``slips`` are the
    classic wrong functions with what each does, told when the function returns what one returns on
    every case. ``before(fn)`` may return feedback refusing the function first; ``after(fn)``, run
    once every case passed, may return a verdict of its own. The checker carries ``.reference``,
    ``.cases`` and ``.slips``.
    """
    labels = names or [f"case {i + 1}" for i in range(len(cases))]
    if len(labels) != len(cases):
        raise ValueError(f"names has {len(labels)} labels for {len(cases)} cases")

    def checker(fn):
        if not callable(fn):
            return False, f"expected a function, got {type(fn).__name__}"
        refused = before(fn) if before else None
        if refused:
            return False, refused
        for label, args in zip(labels, cases):
            try:
                with controlled_errstate():
                    want = np.asarray(reference(*copy.deepcopy(args)), dtype=float)
            except Exception as exc:
                raise _ReferenceFailed(f"{type(exc).__name__} on {label}: {exc}") from exc
            try:
                result = fn(*copy.deepcopy(args))
            except _AnswerProblem as problem:
                raise _AnswerProblem(f"on {label}: {problem}") from None
            except Exception as exc:
                for slip, means in slips:
                    if _same_as(fn, slip, cases, rtol, atol):
                        return False, f"your function {means}."
                return False, f"your function raised {type(exc).__name__} on {label}: {exc}"
            if result is None:
                if is_untouched_stub(fn):
                    return False, STUB_FEEDBACK
                return False, f"your function returned None on {label}: did you forget `return`?"
            got, why = A.as_real_array(result, "its result")
            if got is None:
                return False, f"on {label} your function returned something that is not real numbers: {why}"
            if got.shape != want.shape or not A.close(got, want, rtol, atol):
                for slip, means in slips:
                    if _same_as(fn, slip, cases, rtol, atol):
                        return False, f"your function {means}."
            if got.shape != want.shape:
                return False, f"on {label} your function returned shape {got.shape}, expected {want.shape}."
            if not A.close(got, want, rtol, atol):
                shown = f"   input:    {_show(args)}\n   expected: {_show(want)}\n   returned: {_show(got)}"
                if _show(want) == _show(got):  # equal when rounded: say how far apart they are
                    gap = np.abs(np.asarray(got, dtype=float) - np.asarray(want, dtype=float)).max()
                    shown += (f"\n   (equal to 3 digits, but the largest difference is {gap:.1e}: beyond the "
                              f"tolerance, relative {rtol:g})")
                return False, f"on {label} your function returned a wrong value.\n{shown}"
        return (after(fn) if after else None) or (True, f"passed all {len(cases)} cases.")

    return with_attributes(checker, reference=reference, cases=cases, slips=tuple(slips), kind="function")


# --- the banks, imported when their notebook's first exercise is asked for ---------------------

#: A bank's ``register("NN.…"`` calls, read from its text: which notebooks' exercises it holds.
_REGISTERS = re.compile(r"""\bregister\(\s*["'](\d\d)\.""")


@functools.cache
def _banks() -> dict[str, tuple[str, ...]]:
    """``{notebook number: bank modules}``: every module of this package but the private ones is a bank,
    found by the keys its text registers -- without importing it."""
    found: dict[str, list[str]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            text = (Path(__file__).with_name(f"{info.name}.py")).read_text(encoding="utf-8")
            for nn in sorted(set(_REGISTERS.findall(text))):
                found.setdefault(nn, []).append(info.name)
    return {nn: tuple(names) for nn, names in found.items()}


#: The names of every ``sdpa_helpers`` module (this package's aside) loaded when this package was imported,
#: as they were then.
_AS_IMPORTED = {name: dict(vars(module)) for name, module in list(sys.modules.items())
                if (name == "sdpa_helpers" or name.startswith("sdpa_helpers."))
                and not (name == __name__ or name.startswith(__name__ + "."))}


@contextlib.contextmanager
def _as_imported():
    """Inside: the names of the modules in :data:`_AS_IMPORTED` as they were when this package was
    imported (a learner's ``attention.softmax = mine`` undone); after: the learner's back."""
    changed = []
    for name, names in _AS_IMPORTED.items():
        now = vars(sys.modules[name]) if name in sys.modules else None
        if now is None:
            continue
        for attr, value in names.items():
            if now.get(attr, _AS_IMPORTED) is not value:
                changed.append((now, attr, now.get(attr, _AS_IMPORTED)))
                now[attr] = value
    try:
        yield
    finally:
        for now, attr, value in reversed(changed):
            if value is _AS_IMPORTED:
                now.pop(attr, None)
            else:
                now[attr] = value


def _load_banks(notebook: str | None = None) -> None:
    """Import the banks of ``notebook`` ("05"), or every bank. A bank is imported when its notebook's
    first exercise is asked for, not with this package: a notebook then loads only its own bank (and
    the math it uses), so the code digest it records (``authoring/code_digest.py``) names only those,
    and a new notebook's bank stales no other notebook. A bank binds its references as the modules
    were when this package was imported (:func:`_as_imported`), so a learner who has since reassigned
    ``sdpa_helpers.attention.softmax`` changes no check."""
    names = ([n for ns in _banks().values() for n in ns] if notebook is None
             else _banks().get(notebook, ()))
    todo = [n for n in sorted(set(names)) if f"{__name__}.{n}" not in sys.modules]
    if todo:
        with _as_imported():
            for name in todo:
                importlib.import_module(f"{__name__}.{name}")


from ._page import page_spec  # noqa: E402  (uses get() above)
