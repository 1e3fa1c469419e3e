"""What the site's page needs to check an exercise itself (see :func:`page_spec`)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import _text as T
from . import get


def page_spec(key: str) -> dict:
    """What the site's page needs to check exercise ``key`` itself (``authoring/site/build.py`` writes
    it into the page as JSON; ``exercises.js`` applies it): the same verdicts and messages as
    :func:`check`, from this one source.

    ``text`` is the one normalisation of a typed answer (:mod:`._text`: the characters stripped and
    refused, the length limit, their messages). ``kind`` is ``number`` or ``tuple`` (the rule's
    parameters: references, other accepted values and slip values as shortest decimal text,
    figures per entry, messages), ``choice`` or ``choices`` (every answer the
    page can give, with the checker's own verdict), or ``function`` (the page offers the notebook).
    """
    ex = get(key)
    c: Any = ex.checker
    kind = getattr(c, "kind", None)
    spec: dict[str, Any] = {"key": ex.key, "kind": kind or "function", "question": ex.question, "hint": ex.hint,
                            "text": T.page_rule()}
    if kind in ("number", "tuple"):
        shape = list(c.expected.shape)
        spec.update(shape=shape, what=c.what, figures=c.figures, entry_names=c.entry_names,
                    not_whole=c.not_whole, references=[repr(float(x)) for x in c.expected.ravel()],
                    also=[[repr(float(x)) for x in a.ravel()] for a in c.also],
                    slips=[{"values": [repr(float(x)) for x in np.ravel(np.asarray(s.value, dtype=float))],
                            "means": s.means} for s in c.slips if list(np.shape(s.value)) == shape])
    elif kind == "choice":
        answers = ["", *c.options]
        spec.update(options=c.options, table={a: list(c(a)) for a in answers})
    elif kind == "choices":
        words = [["", *slot] for slot in c.slots]
        spec.update(slots=c.slots, labels=c.labels,
                    table={"|".join(combo): list(c(combo)) for combo in itertools.product(*words)})
    return spec


