"""Turning a learner's answer into numbers: real arrays for a function's result, entries as typed
for a numeric answer (the package's shared answer cleaning)."""

from __future__ import annotations

import numbers

import numpy as np

from . import _figures as F
from . import _text as T

# --- turning an answer into real numbers -------------------------------------------------------

def _kind_of_element(x) -> str | None:
    """'string', 'complex', 'bool' or None (a plausible real number) for one element."""
    if isinstance(x, (str, bytes, np.str_, np.bytes_)):
        return "string"
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (complex, np.complexfloating)) or (
            isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real)):
        return "complex"
    return None


def as_real_array(answer, what: str) -> tuple[np.ndarray | None, str]:
    """``(array of floats, "")`` for a real-valued answer, or ``(None, feedback)`` saying why not."""
    try:
        raw = np.asarray(answer)
    except Exception:  # ragged nested lists and other shapes numpy cannot hold
        return None, f"expected a number (or a list of numbers) for {what}, got {type(answer).__name__}."
    kinds = set()
    if isinstance(answer, np.ma.MaskedArray):
        return None, f"{what} is a masked array; give plain numbers (for example .filled(0.0))."
    if raw.dtype.kind in "USa":
        kinds.add("string")
    elif raw.dtype.kind == "c":
        kinds.add("complex")
    elif raw.dtype.kind == "b":
        kinds.add("bool")
    elif raw.dtype.kind == "O":
        kinds = {k for k in map(_kind_of_element, raw.ravel().tolist()) if k}
    if "string" in kinds:
        text = str(answer).strip() if isinstance(answer, (str, np.str_)) else None
        example = (f"write {text}, not \"{text}\"" if text and len(text) <= 20
                   else "write the number itself, not the number in quotes")
        return None, f"your answer for {what} is text (a string). Give a number without quotes: {example}."
    if "complex" in kinds:
        return None, (f"your answer for {what} is a complex number; the answer is a real number. "
                      f"Check for a square root of a negative number, or pass the real value.")
    if "bool" in kinds:
        return None, f"your answer for {what} is True/False; give a number."
    if raw.dtype.kind not in "iuf" and raw.dtype.kind != "O":
        return None, f"expected a number for {what}, got {type(answer).__name__}."
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(raw, dtype=float)
    except Exception:
        return None, f"expected a number (or a list of numbers) for {what}, got {type(answer).__name__}."
    if not np.isfinite(arr).all():
        return None, f"{what} should be a finite number, got {answer!r}."
    return arr, ""


def shape_words(shape: tuple) -> str:
    if shape == ():
        return "one number"
    if len(shape) == 1:
        return f"{shape[0]} number{'s' if shape[0] != 1 else ''} (shape {shape})"
    return f"an array of shape {shape}"


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    return bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


def entries(answer, what: str):
    """``(shape, [(shown, parsed)])`` of a numeric answer, each entry as typed (text) or in its shortest
    form (a number); or the feedback (a string) saying why it is not numbers."""
    raw: np.ndarray | None
    if isinstance(answer, (str, np.str_)):
        raw = np.array(str(answer), dtype=object)
    else:
        try:
            raw = np.array(answer, dtype=object)
        except Exception:
            raw = None
        if raw is None or not any(isinstance(x, (str, np.str_)) for x in raw.ravel().tolist()):
            arr, why = as_real_array(answer, what)
            if arr is None:
                return why
            return arr.shape, [(F.js_number(x), F.of_float(x)) for x in arr.ravel().tolist()]
    assert raw is not None
    entries = []
    for x in raw.ravel().tolist():
        if isinstance(x, (str, np.str_)):
            text = T.strip(x)
            if not text:
                return "no answer yet: give a number." if raw.shape == () else "an entry is empty: give every number."
            refused = T.refusal(text)
            if refused:
                return refused
            parsed = F.parse(text)
            if parsed is None:
                return f'"{text}" is not a number: write digits such as 0.25, -3 or 1e-3.'
            entries.append((text, parsed))
        else:
            arr, why = as_real_array(x, what)
            if arr is None or arr.shape != ():
                return why or f"expected a number (or a list of numbers) for {what}."
            entries.append((F.js_number(float(arr)), F.of_float(float(arr))))
    return raw.shape, entries


def shown(shape: tuple, texts: list[str]) -> str:
    """Entries as the feedback shows them: ``0.25``, ``[-32, 160]``, ``[[1, 2], [3, 4]]``."""
    if shape == ():
        return texts[0]
    size = len(texts) // shape[0]
    return "[" + ", ".join(shown(shape[1:], texts[i * size:(i + 1) * size]) for i in range(shape[0])) + "]"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


