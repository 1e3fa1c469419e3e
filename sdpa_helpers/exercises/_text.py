"""The one normalisation of a typed answer, shared by :func:`check` and the site's page.

Defined here once; :func:`page_rule` exports it into every exercise's page spec and ``exercises.js``
applies exactly that (tests/test_exercises_js.py feeds both every character of :data:`IGNORED`).
A typed answer (text) is read in three steps:

1. every line break (U+000A, U+000D) is removed wherever it is, as a browser's one-line text box
   removes it from what is typed or pasted, so the page and Python see the same text;
2. the characters of :data:`IGNORED` are stripped from both ends: every Unicode ``White_Space``
   character, the information separators U+001C..U+001F that Python's ``str.isspace`` also
   counts, and every format character (category Cf: U+FEFF byte-order mark, U+200B zero-width
   space, U+00AD soft hyphen, ..., as of Unicode 15.1 whatever this Python's database says);
   U+0085 is ``White_Space``;
3. an answer longer than :data:`MAX_CHARS` characters, or with one of :data:`IGNORED` left inside
   it, is refused with a message saying so (never a hang: the number pattern is only tried on
   short text, and it has no nested repetition).
"""

from __future__ import annotations

import sys
import unicodedata

#: Unicode's White_Space property (PropList.txt; unchanged since Unicode 6.3).
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
               + "\u2028\u2029\u202f\u205f\u3000")
#: Python's ``str.isspace`` counts these too (bidirectional class B/S); JavaScript's trim() does not.
SEPARATORS = "\x1c\x1d\x1e\x1f"
#: The format characters (category Cf) of Unicode 15.1 (Python 3.13), written out so that every
#: supported Python (3.11 has Unicode 14) and the page built by any of them share one set.
FORMAT_15_1 = ((0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
               (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
               (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
               (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
               (0xE0001, 0xE0001), (0xE0020, 0xE007F))
#: Those, and any further format character a newer Python's Unicode database knows.
FORMAT = "".join(sorted({chr(c) for lo, hi in FORMAT_15_1 for c in range(lo, hi + 1)}
                        | {c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cf"}))
#: The characters stripped from both ends of a typed answer and refused inside it.
IGNORED = frozenset(WHITE_SPACE + SEPARATORS + FORMAT)
#: Line breaks: removed wherever they are (a one-line text box in a browser removes them).
LINE_BREAKS = "\n\r"
#: The longest answer (after stripping) read as a number: longer text is refused at once.
MAX_CHARS = 100

TOO_LONG = ("your answer is {length} characters long; an answer here has at most {limit}: type the number alone, "
            "such as 0.25.")
INSIDE = ("your answer has a space or an invisible character ({code}) inside it: type the number alone, "
          "such as 0.25.")


def _ranges(chars) -> list[list[int]]:
    """Sorted code points as inclusive ``[first, last]`` runs."""
    out: list[list[int]] = []
    for c in sorted(map(ord, chars)):
        if out and c == out[-1][1] + 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def code_name(ch: str) -> str:
    """``U+200B`` for one character (how the messages name an invisible one)."""
    return f"U+{ord(ch):04X}"


def strip(text: str) -> str:
    """Steps 1 and 2: ``text`` without line breaks and without :data:`IGNORED` characters at its ends.

    >>> strip("\\ufeff 64\\u0085"), strip("6\\n4"), strip("\\u200b")
    ('64', '64', '')
    """
    text = str(text)
    for ch in LINE_BREAKS:
        text = text.replace(ch, "")
    start, end = 0, len(text)
    while start < end and text[start] in IGNORED:
        start += 1
    while end > start and text[end - 1] in IGNORED:
        end -= 1
    return text[start:end]


def refusal(text: str) -> str | None:
    """Step 3 on stripped ``text``: the message refusing it (too long, a space or invisible character
    inside), or None.

    >>> refusal("64") is None, refusal("6\\u200b4")
    (True, 'your answer has a space or an invisible character (U+200B) inside it: type the number alone, such as 0.25.')
    """
    if len(text) > MAX_CHARS:
        return TOO_LONG.format(length=len(text), limit=MAX_CHARS)
    inside = next((ch for ch in text if ch in IGNORED), None)
    if inside is not None:
        return INSIDE.format(code=code_name(inside))
    return None


def page_rule() -> dict:
    """The rule as the page's ``exercises.js`` reads it (part of every page spec)."""
    return {"line_breaks": [ord(c) for c in LINE_BREAKS], "ignored": _ranges(IGNORED), "max_chars": MAX_CHARS,
            "too_long": TOO_LONG, "inside": INSIDE}
