"""The answers fed to both checkers, Python's ``check()`` and the page's ``exercises.js``: right (as typed
at three figures and at full precision), every named slip, wrong, and malformed (text in a number
box, an empty box, too few figures). Shared by tests/test_site_exercises.py (Chromium) and
tests/test_exercises_js.py (node)."""

from __future__ import annotations

import itertools

import numpy as np

from sdpa_helpers import exercises
from sdpa_helpers.exercises import _figures as F


def _typed(x: float, figures: int | None = 3) -> str:
    """How a learner types ``x``: an integer as itself, anything else at ``figures`` figures."""
    x = float(x)
    if x.is_integer():
        return str(int(x))
    return f"{x:.{figures}g}" if figures else F.js_number(x)


def answers_for(key: str) -> list:
    """Right, every slip, wrong, malformed: as the page's boxes take them (text), one list per answer."""
    c = exercises.get(key).checker
    kind = c.kind
    if kind == "choice":
        return ["", *c.options]
    if kind == "choices":
        return [tuple(combo) for combo in itertools.product(*[["", *slot] for slot in c.slots])]
    flat = np.ravel(c.expected).tolist()
    shape = np.shape(c.expected)
    same = [s for s in c.slips if np.shape(s.value) == shape]
    rows = [[_typed(x) for x in flat], [_typed(x, None) for x in flat],
            *[[_typed(v) for v in np.ravel(s.value).tolist()] for s in same],
            *[[_typed(v, None) for v in np.ravel(s.value).tolist()] for s in same],
            [_typed(x * 1.37 + 0.5) for x in flat],  # wrong, no slip
            [f"{x:.2g}" for x in flat],  # too few figures (where the exact value has more)
            ["abc", *[_typed(x) for x in flat[1:]]], ["", *[_typed(x) for x in flat[1:]]],
            ["1,5", *[_typed(x) for x in flat[1:]]], ["0.5.1", *[_typed(x) for x in flat[1:]]]]
    if len(flat) > 1:
        rows.append([_typed(flat[0]), "", *[_typed(x) for x in flat[2:]]])
        rows.append([_typed(flat[0]), _typed(flat[1] * 3 + 1), *[_typed(x) for x in flat[2:]]])
    return [r[0] if kind == "number" else r for r in rows]
