"""The course's one rule for a numeric answer, on decimal digits (the site's ``exercises.js`` applies
the same rule: keep the two in step). Asked for *n* significant figures, an answer passes if it carries
at least *n* figures (a float counted from its shortest form, text as typed) and rounds at *n* figures to
the exact value rounded the same way, or *is* the exact value at *n* figures without trailing zeros. An
integer question accepts only that integer. Numbers are ``(sign, digits, exponent)``: value = sign ·
int(digits) · 10^exponent, digits without leading or trailing zeros (zero is ``(1, "0", 0)``).
"""

from __future__ import annotations

import math
import re

#: A number as a learner may type it: 12, -0.5, .25, 3., 1e-3, +2.5E+4 (no thousands separators).
#: No nested repetition (``[0-9]+\.?[0-9]*`` took time quadratic in the length of a long non-number).
NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
#: The rule's parameter for a non-integer answer when the question does not say otherwise.
FIGURES = 3


def js_number(x: float) -> str:
    """``x`` written as JavaScript's ``String(x)`` writes it (shortest round-trip digits): how feedback
    shows a number, the same in Python and in the page.

    >>> js_number(0.0221), js_number(16.0), js_number(1e-7), js_number(1.5e21), js_number(-0.0)
    ('0.0221', '16', '1e-7', '1.5e+21', '0')
    """
    x = float(x)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mant, _, exp = repr(abs(x)).partition("e")
    digits = mant.replace(".", "")
    point = (mant.index(".") if "." in mant else len(mant)) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    # JavaScript: positional for 1e-7 <= |x| < 1e21, else d.ddde±x
    if -6 < point <= 21:
        if point <= 0:
            return sign + "0." + "0" * -point + digits
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return sign + digits[:point] + "." + digits[point:]
    e = point - 1
    fraction = "." + digits[1:] if len(digits) > 1 else ""
    return sign + digits[0] + fraction + "e" + ("+" if e > 0 else "-") + str(abs(e))


def parse(text: str):
    """``(sign, digits, exponent, figures)`` of a number typed as ``text``, or None when it is no number.

    The figures are counted as typed: leading zeros do not count, nor trailing zeros of a number
    written without a decimal point; every other digit does (``"0.0220"`` has 3, ``"380"`` 2,
    ``"380."`` and ``"380.0"`` 3 and 4, ``"1e-3"`` 1; zero has 1).

    >>> parse("0.0220"), parse("-1.5e3"), parse("abc")
    ((1, '22', -3, 3), (-1, '15', 2, 2), None)
    """
    t = text.strip()
    if not NUMBER.fullmatch(t):
        return None
    sign = -1 if t[0] == "-" else 1
    t = t.lstrip("+-")
    mant, _, exp = t.lower().partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent = (int(exp) if exp else 0) - len(frac)
    # without a decimal point, trailing zeros only place the point: "380" has 2 figures, "380." 3
    figures = max(len(digits) if "." in mant else len(digits.rstrip("0")), 1)
    if not digits.strip("0"):
        return (1, "0", 0, 1)
    trimmed = digits.rstrip("0")
    return (sign, trimmed, exponent + len(digits) - len(trimmed), figures)


def of_float(x: float):
    """``parse`` of a float's shortest form (an integer-valued float counts as the integer: 100.0 as "100")."""
    x = float(x)
    if not math.isfinite(x):
        return None
    if x.is_integer() and abs(x) < 1e21:
        return parse(str(int(x)))
    return parse(repr(x))


def key(num) -> str:
    """A canonical text of a ``(sign, digits, exponent, ...)`` number: equal numbers, equal keys."""
    sign, digits, exponent = num[:3]
    return "0" if digits == "0" else f"{'-' if sign < 0 else ''}{digits}e{exponent}"


def rounded(num, n: int) -> set[str]:
    """The keys of ``num`` rounded to ``n`` significant figures, a tie half up and half to even.

    >>> sorted(rounded(parse("0.0625"), 2)), sorted(rounded(parse("0.022097"), 3))
    (['62e-3', '63e-3'], ['221e-4'])
    """
    sign, digits, exponent = num[:3]
    if digits == "0" or len(digits) <= n:
        return {key(num)}
    keep, rest = digits[:n], digits[n:]
    shift = exponent + len(rest)
    if rest == "5":  # an exact tie (digits carry no trailing zeros): half up, and half to even
        ups = {1, int(keep[-1]) % 2}
    else:
        ups = {1} if rest[0] >= "5" else {0}
    out = set()
    for up in ups:
        value = str(int(keep) + up)
        trimmed = value.rstrip("0")
        out.add(key((sign, trimmed, shift + len(value) - len(trimmed))))
    return out


def judge_entry(answer, reference, n: int | None):
    """``"right"``, ``"few"`` (too few figures) or ``"off"`` for one parsed entry against a parsed reference.

    ``n`` None: an integer is asked for, and only that integer passes.
    """
    if n is None:
        return "right" if key(answer) == key(reference) else "off"
    want = rounded(reference, n)
    if key(answer) in want:
        return "right"
    if answer[3] < n:  # too few figures to judge: "few" if right at its own figures, else plainly off
        return "few" if key(answer) in rounded(reference, answer[3]) else "off"
    return "right" if rounded(answer, n) & want else "off"


def slip_matches(answer, slip, n: int | None, few: bool = False) -> bool:
    """Whether a parsed entry is the parsed slip value by the rule at the answer's own figures (at most n).
    An answer with fewer figures than the rule asks still matches with two figures, unless it is the right
    answer given short (``few``: judge_entry said so): a variance typed as 0.0039 for 0.00390625 is told
    as the slip it is (two learners of issue 38 met a plain "off" there); 1.8 for a right 1.85 is told it
    is short, though a slip 1.78 rounds to 1.8 too; a one-figure 0.004 matches nothing."""
    n = FIGURES if n is None else n
    m = min(answer[3], n)
    need = min(n, slip[3])
    if answer[3] < need and (few or answer[3] < min(2, need)):
        return False
    return key(answer) == key(slip) or bool(rounded(answer, m) & rounded(slip, m))
