"""Which cells of a notebook show an explorer, with which class and arguments (standard library only).

The notebook build (``authoring/build.py``) writes the answer into each explorer cell's metadata::

    cell.metadata["explorer"] = {"class": "sdpa_helpers.widgets.saturation.SaturationExplorer",
                                 "kwargs": {"d_k": 64}}

and the static site (``authoring/site/``) builds the explorer from there. An explorer cell ends with
the explorer: ``XExplorer(d_k=64)``, or a name bound in the same cell by ``name = XExplorer(...)``,
where ``XExplorer`` is imported in the notebook from ``sdpa_helpers.widgets...``. Its arguments are
keywords with literal values that JSON keeps as they are (numbers, strings, booleans, None, lists,
dicts): the site rebuilds the explorer from them.
"""

from __future__ import annotations

import ast
import json

#: The cell metadata key.
KEY = "explorer"
#: Where explorers come from.
PACKAGE = "sdpa_helpers.widgets"


def imported_explorers(sources: list[str]) -> dict[str, str]:
    """``{name in the notebook: "module.Class"}`` of every ``*Explorer`` imported from :data:`PACKAGE`.

    >>> imported_explorers(["from sdpa_helpers.widgets.training import TrainingExplorer as TE"])
    {'TE': 'sdpa_helpers.widgets.training.TrainingExplorer'}
    """
    names = {}
    for source in sources:
        for node in ast.walk(_parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(PACKAGE):
                for alias in node.names:
                    if alias.name.endswith("Explorer"):
                        names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _parse(source: str) -> ast.Module:
    # a notebook cell may hold IPython magics: they are not Python, and never an explorer
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def explorer_metadata(sources: list[str | None], where: str = "notebook") -> list[dict | None]:
    """For each cell (its source; None for a cell that is not code), its explorer metadata or None.

    Raises ``ValueError`` naming the cell for an explorer built with positional arguments or a
    keyword whose value is not a literal: the site could not build the same explorer.

    >>> explorer_metadata(["from sdpa_helpers.widgets.saturation import SaturationExplorer", None,
    ...                    "explorer = SaturationExplorer(d_k=64)\\nexplorer", "print(1)"])
    [None, None, {'class': 'sdpa_helpers.widgets.saturation.SaturationExplorer', 'kwargs': {'d_k': 64}}, None]
    """
    known = imported_explorers([s for s in sources if s])
    return [None if s is None else _cell_explorer(s, known, f"{where}, cell {i}") for i, s in enumerate(sources)]


def _cell_explorer(source: str, known: dict[str, str], where: str) -> dict | None:
    body = _parse(source).body
    if not body or not isinstance(body[-1], ast.Expr):
        return None
    call = body[-1].value
    if isinstance(call, ast.Name):  # ``explorer``: the value bound last in this cell
        bound = [s.value for s in body if isinstance(s, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == call.id for t in s.targets)]
        call = bound[-1] if bound else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in known):
        return None
    if call.args or any(k.arg is None for k in call.keywords):
        raise ValueError(f"{where}: {call.func.id}(...) takes keyword arguments only in an explorer cell "
                         f"(the site builds the same explorer from them)")
    kwargs = {}
    for k in call.keywords:
        try:
            kwargs[k.arg] = value = ast.literal_eval(k.value)
            if json.loads(json.dumps(value)) != value:  # a tuple, a set, bytes: JSON would change it
                raise ValueError
        except (ValueError, TypeError):
            raise ValueError(f"{where}: {call.func.id}({k.arg}={ast.unparse(k.value)}): an explorer cell's "
                             f"arguments must be literals (the site builds the same explorer from them)") from None
    return {"class": known[call.func.id], "kwargs": kwargs}
