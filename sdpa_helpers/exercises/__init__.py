"""Self-checked exercises: ``check("02.variance", answer)`` prints a verdict and returns a bool.

This package offers:

- :func:`check` -- check an answer (a number, an array or a function) against the exercise;
  prints ``✅`` or ``❌`` with a hint that never gives the solution away; returns True/False;
- :func:`hint` -- the hint of an exercise; :func:`question` -- its question;
- :func:`keys` -- the registered exercise keys (``"NN.name"``, NN the notebook number);
- :func:`register`, :func:`numeric_checker`, :func:`function_checker` -- how the exercise
  banks (modules ``ex*.py`` in this package, one per notebook) define their exercises.

Checkers use the math layer only (numpy, :mod:`sdpa_helpers.attention`, ...).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Exercise", "check", "hint", "question", "keys", "register",
           "numeric_checker", "function_checker"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: a key, the question, a hint, and a checker returning ``(ok, feedback)``."""

    key: str
    question: str
    hint: str
    checker: Callable[[Any], tuple[bool, str]]


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


def _get(key) -> Exercise:
    _load_banks()
    if key not in _REGISTRY:
        close = [k for k in sorted(_REGISTRY) if k.split(".")[0] == str(key).split(".")[0]]
        raise KeyError(f"no exercise {key!r}; known in that notebook: {close or sorted(_REGISTRY)}")
    return _REGISTRY[key]


def keys(prefix: str = "") -> list[str]:
    """Registered exercise keys, optionally those starting with ``prefix`` (e.g. ``"02."``)."""
    _load_banks()
    return sorted(k for k in _REGISTRY if k.startswith(prefix))


def hint(key: str) -> str:
    """The hint of exercise ``key``."""
    return _get(key).hint


def question(key: str) -> str:
    """The question of exercise ``key``."""
    return _get(key).question


def check(key: str, answer, *, quiet: bool = False) -> bool:
    """Check ``answer`` for exercise ``key``; print a verdict with feedback; return True/False.

    A checker that fails on the answer (for example a learner's function raising an
    error) counts as a wrong answer with the error in the feedback, never as a crash.
    """
    ex = _get(key)
    if answer is None or answer is Ellipsis:
        if not quiet:
            print(f"❌ {key}: no answer yet. Replace None with your answer and run the cell again.")
            print(f"   Hint: {ex.hint}")
        return False
    try:
        ok, feedback = ex.checker(answer)
    except Exception as exc:  # the learner's answer broke the checker: report, don't crash
        ok, feedback = False, f"checking your answer raised {type(exc).__name__}: {exc}"
    ok = bool(ok)
    if not quiet:
        if ok:
            print(f"✅ {key}: correct. {feedback}".rstrip())
        else:
            print(f"❌ {key}: not yet. {feedback}".rstrip())
            print(f"   Hint: {ex.hint}")
    return ok


def numeric_checker(expected: float, *, rtol: float = 1e-6, atol: float = 0.0,
                    what: str = "the value") -> Callable[[Any], tuple[bool, str]]:
    """A checker for a number (or array): correct when ``isclose(answer, expected)``."""
    expected_arr = np.asarray(expected, dtype=float)

    def checker(answer):
        try:
            arr = np.asarray(answer, dtype=float)
        except (TypeError, ValueError):
            return False, f"expected a number for {what}, got {type(answer).__name__}"
        if arr.shape != expected_arr.shape:
            return False, f"expected {what} with shape {expected_arr.shape}, got shape {arr.shape}"
        if not np.isfinite(arr).all():
            return False, f"{what} should be finite, got {answer!r}"
        if np.allclose(arr, expected_arr, rtol=rtol, atol=atol):
            return True, ""
        return False, f"{what} is off."

    return checker


def function_checker(reference: Callable, cases: list[tuple], *, rtol: float = 1e-7, atol: float = 1e-12,
                     names: list[str] | None = None) -> Callable[[Any], tuple[bool, str]]:
    """A checker for a learner's function: run it on ``cases`` and compare with ``reference``.

    Each case is a tuple of positional arguments; ``names`` labels the cases in feedback
    (e.g. ``"huge logits 1e6"``), so a learner sees which case failed, not its answer.
    """
    labels = names or [f"case {i + 1}" for i in range(len(cases))]

    def checker(fn):
        if not callable(fn):
            return False, f"expected a function, got {type(fn).__name__}"
        for label, args in zip(labels, cases):
            want = np.asarray(reference(*args), dtype=float)
            try:
                result = fn(*args)
            except Exception as exc:
                return False, f"your function raised {type(exc).__name__} on {label}."
            if result is None:
                return False, f"your function returned None on {label}: did it forget `return`?"
            try:
                got = np.asarray(result, dtype=float)
            except (TypeError, ValueError):
                return False, f"on {label} your function returned {type(result).__name__}, not numbers."
            if got.shape != want.shape:
                return False, f"on {label} your function returned shape {got.shape}, expected {want.shape}."
            if not np.isfinite(got).all():
                return False, f"on {label} your function returned NaN or inf."
            if not np.allclose(got, want, rtol=rtol, atol=atol):
                return False, f"on {label} your function returned a wrong value."
        return True, f"passed all {len(cases)} cases."

    return checker


_LOADED = False


def _load_banks() -> None:
    """Import every exercise bank (``ex*.py``) in this package once."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("ex"):
            importlib.import_module(f"{__name__}.{info.name}")


