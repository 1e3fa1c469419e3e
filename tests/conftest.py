"""Shared test set-up: the Agg backend, and the helpers several test files use.

Import the helpers with ``from conftest import labelled, mean_se, var_se`` (pytest puts
``tests/`` on ``sys.path``). Each has one meaning:

- :func:`labelled` -- a figure panel says what its axes are;
- :func:`mean_se` -- a sample mean and its standard error;
- :func:`var_se` -- a sample variance and its (large-sample) standard error;
- :func:`raises_naming` -- a call raises a clear error whose message names the parameter;
- :data:`MATH_MODULES` -- the math layer, found by glob (nothing to register by hand).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot: tests never open a window

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import sdpa_helpers  # noqa: E402

PKG = Path(sdpa_helpers.__file__).parent
#: The math layer: every module at the package root and every sub-package but plots, widgets, exercises.
MATH_MODULES = sorted([p.stem for p in PKG.glob("*.py") if p.stem != "__init__"]
                      + [p.parent.name for p in PKG.glob("*/__init__.py")
                         if p.parent.name not in ("plots", "widgets", "exercises")])


def labelled(ax, *, title_for_y: bool = False) -> bool:
    """True if ``ax`` has a non-blank x label and a non-blank y label.

    With ``title_for_y=True`` a title may stand in for the y label (panels of a small-multiples
    row that share the row's y label).
    """
    has_x = bool(ax.get_xlabel().strip())
    has_y = bool(ax.get_ylabel().strip()) or (title_for_y and bool(ax.get_title().strip()))
    return has_x and has_y


def mean_se(x) -> tuple[float, float]:
    """The mean of ``x`` and its standard error ``s / sqrt(n)`` (``s`` with ddof=1)."""
    x = np.asarray(x, dtype=float).ravel()
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def var_se(x, ddof: int = 1) -> tuple[float, float]:
    """The sample variance of ``x`` (with ``ddof``) and its standard error ``sqrt((m4 - m2^2) / n)``.

    ``m2`` and ``m4`` are the central sample moments; the formula is the large-sample SE of a
    sample variance for any distribution with a finite fourth moment.
    """
    x = np.asarray(x, dtype=float).ravel()
    centred = x - x.mean()
    m2, m4 = np.mean(centred**2), np.mean(centred**4)
    return float(x.var(ddof=ddof)), float(np.sqrt(max(m4 - m2**2, 0.0) / x.size))


def raises_naming(call, error: type[Exception], words) -> None:
    """``call()`` raises ``error`` whose message contains every one of ``words`` (the parameter's name, ...)."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


# -- tests that need the project's git repository ------------------------------------------------

_ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def git_skip_reason() -> str | None:
    """Why a test marked ``git`` cannot run here (a ZIP/tarball/``git archive`` checkout), or None.

    The project must be its own repository's top level: a checkout unpacked inside some other
    repository (a home directory kept in git) has no history of its own either.
    """
    import shutil
    import subprocess

    if shutil.which("git") is None:
        return "git is not installed"
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=_ROOT, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git did not answer ({exc})"
    if top.returncode != 0 or not top.stdout.strip():
        return (f"no git repository at {_ROOT} (a ZIP, tarball or `git archive` checkout): "
                "the test needs git (use `git clone` to run it)")
    if __import__("pathlib").Path(top.stdout.strip()).resolve() != _ROOT:
        return (f"{_ROOT} is not a git repository of its own (it lies inside {top.stdout.strip()}): "
                "the test needs git (use `git clone` to run it)")
    return None


def pytest_runtest_setup(item):
    if item.get_closest_marker("git") is not None:
        reason = git_skip_reason()
        if reason:
            pytest.skip(reason)
