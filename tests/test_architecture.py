"""The three layers import in one direction, and importing the package changes no global state."""

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sdpa_helpers

PKG = Path(sdpa_helpers.__file__).parent
MATH_MODULES = sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__")
PLOT_MODULES = ["sdpa_helpers.plots"] + [f"sdpa_helpers.plots.{m.name}"
                                         for m in pkgutil.iter_modules([str(PKG / "plots")])]
EXERCISE_MODULES = ["sdpa_helpers.exercises"] + [f"sdpa_helpers.exercises.{m.name}"
                                                 for m in pkgutil.iter_modules([str(PKG / "exercises")])]


def imported_after(modules):
    """Which heavy GUI/plot libraries are in sys.modules after importing ``modules`` in a fresh process."""
    code = ("import sys, json\n" + "".join(f"import {m}\n" for m in modules) +
            "print(json.dumps(sorted(n for n in ('matplotlib', 'ipywidgets', 'IPython') if n in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_math_layer_imports_numpy_only():
    assert {"theory", "sampling", "attention"} <= set(MATH_MODULES)
    assert imported_after([f"sdpa_helpers.{m}" for m in MATH_MODULES]) == []


def test_exercises_use_the_math_layer_only():
    assert imported_after(EXERCISE_MODULES) == []


def test_plots_never_import_widgets():
    loaded = imported_after(PLOT_MODULES)
    assert "matplotlib" in loaded and "ipywidgets" not in loaded


def absolute_imports(path: Path):
    """Every module name imported by ``path``, relative imports resolved."""
    package = ["sdpa_helpers", *path.relative_to(PKG).parent.parts]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield module
            if not node.module:  # "from . import plots" imports sdpa_helpers.plots
                yield from (f"{module}.{a.name}" for a in node.names)


FORBIDDEN = {
    "math": ("matplotlib", "ipywidgets", "IPython", "sdpa_helpers.plots", "sdpa_helpers.widgets",
             "sdpa_helpers.exercises"),
    "exercises": ("matplotlib", "ipywidgets", "IPython", "sdpa_helpers.plots", "sdpa_helpers.widgets"),
    "plots": ("ipywidgets", "IPython", "sdpa_helpers.widgets", "sdpa_helpers.exercises"),
    "widgets": ("sdpa_helpers.exercises",),
}


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_point_down_the_layers(path):
    """Static check of every import statement in the package."""
    top = path.relative_to(PKG).parts[0]
    layer = top if top in ("plots", "widgets", "exercises") else "math"
    for name in absolute_imports(path):
        for bad in FORBIDDEN[layer]:
            assert not (name == bad or name.startswith(bad + ".")), f"{path.name} ({layer} layer) imports {name}"


def test_importing_everything_changes_no_global_state():
    code = r"""
import json, warnings, numpy as np, matplotlib as mpl
np.random.seed(123)
before = (dict(mpl.rcParams), np.random.get_state()[1].tolist(), np.geterr(), np.get_printoptions(),
          len(warnings.filters), mpl.get_backend())
import importlib, pkgutil, sdpa_helpers
for pkg in ("sdpa_helpers", "sdpa_helpers.plots", "sdpa_helpers.widgets", "sdpa_helpers.exercises"):
    mod = importlib.import_module(pkg)
    for info in pkgutil.iter_modules(mod.__path__):
        importlib.import_module(f"{pkg}.{info.name}")
after = (dict(mpl.rcParams), np.random.get_state()[1].tolist(), np.geterr(), np.get_printoptions(),
         len(warnings.filters), mpl.get_backend())
changed = [name for name, b, a in zip(["rcParams", "numpy seed", "geterr", "printoptions", "warnings",
                                       "backend"], before, after) if b != a]
print(json.dumps(changed))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
