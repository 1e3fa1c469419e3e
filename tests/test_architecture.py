"""The three layers import in one direction, and importing the package changes no global state."""

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sdpa_helpers
from conftest import MATH_MODULES

PKG = Path(sdpa_helpers.__file__).parent
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


@pytest.mark.slow  # a fresh interpreter imports matplotlib and ipywidgets: in `make test`
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


# -- The math lives in the math layer (issue 10) -----------------------------------------------------
#
# Static checks on the source (ast), so a failure names the file, the line and the name.

ROOT = PKG.parent
NOTEBOOK_SOURCES = sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
PACKAGE_SOURCES = sorted(PKG.rglob("*.py"))


def module_name(path: Path) -> str:
    """``sdpa_helpers.plots.variance`` for sdpa_helpers/plots/variance.py (``__init__`` -> the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path | None:
    """The source file of an sdpa_helpers module, or None if ``name`` is not one."""
    if not (name == "sdpa_helpers" or name.startswith("sdpa_helpers.")):
        return None
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def resolve(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <module> import ...`` in ``path``."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path):
    """(line, module, name, alias) for every ``from module import name``; (line, module, None, alias)
    for every ``import module [as alias]``; names are resolved to absolute modules."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = resolve(path, node)
            for a in node.names:
                yield node.lineno, module, a.name, a.asname or a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, None, a.asname or a.name.split(".")[0]


def module_aliases(path: Path) -> dict[str, str]:
    """Local name -> sdpa_helpers module it is bound to (``from sdpa_helpers import sampling``,
    ``import sdpa_helpers.plots.variance as vp``, ``from .. import plots``)."""
    aliases = {}
    for _, module, name, alias in imports(path):
        if name is None:
            target = module if alias != module.split(".")[0] else module.split(".")[0]
        else:
            target = f"{module}.{name}"
        if module_path(target) is not None:
            aliases[alias] = target
    return aliases


def attribute_uses(path: Path):
    """(line, module, attribute) for every ``alias.attribute`` where alias is an sdpa_helpers module."""
    aliases = module_aliases(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield node.lineno, aliases[node.value.id], node.attr
        # dotted access: sdpa_helpers.widgets.scaling.query_weights
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            dotted = ast.unparse(node.value)
            if module_path(dotted) is not None and dotted.startswith("sdpa_helpers"):
                yield node.lineno, dotted, node.attr


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("path", PACKAGE_SOURCES + NOTEBOOK_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_names_across_modules(path):
    """No module (or notebook) uses a ``_private`` name of another module; importing the
    package-internal module ``_checks`` itself is fine, its functions are public."""
    own = module_name(path)
    bad = []
    for line, module, name, _ in imports(path):
        if name is not None and is_private(name) and module != own and module_path(f"{module}.{name}") is None:
            bad.append(f"line {line}: from {module} import {name}")
    for line, module, attr in attribute_uses(path):
        if is_private(attr) and module != own:
            bad.append(f"line {line}: {module}.{attr}")
    assert not bad, f"{path.relative_to(ROOT)} uses private names of other modules: {bad}"


def explorer_classes() -> set[str]:
    """Names of the Explorer subclasses (and Explorer itself) defined in sdpa_helpers.widgets*."""
    from sdpa_helpers import widgets

    return {cls.__name__ for cls in widgets.all_explorers()} | {"Explorer"}


@pytest.mark.parametrize("path", NOTEBOOK_SOURCES, ids=lambda p: p.name)
def test_notebooks_import_only_explorers_from_widgets(path):
    """Grids, data functions and numbers come from the math layer; widgets give notebooks explorers."""
    explorers = explorer_classes()
    bad = []
    for line, module, name, _ in imports(path):
        if module.startswith("sdpa_helpers.widgets") or (module == "sdpa_helpers" and name == "widgets"):
            if name is None or module_path(f"{module}.{name}") is not None:
                continue  # a module: its attributes are checked below
            if name not in explorers or name == "Explorer":
                bad.append(f"line {line}: from {module} import {name}")
    for line, module, attr in attribute_uses(path):
        if module.startswith("sdpa_helpers.widgets") and module_path(f"{module}.{attr}") is None:
            if attr not in explorers or attr == "Explorer":
                bad.append(f"line {line}: {module}.{attr}")
    assert not bad, f"{path.name} takes non-Explorer names from widgets: {bad}"


DRAWN = {"ax", "axes", "fig", "figure", "lines", "cbar", "artists"}


def function_defs(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def own_returns(fn: ast.FunctionDef):
    """The return statements of ``fn`` itself (not of functions nested in it)."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def draws(fn: ast.FunctionDef) -> bool:
    """True if ``fn`` is a figure function: it returns Axes/Figure/artists (or nothing, drawing on
    the Axes it is given), or PNG bytes / label text -- not numbers another layer computes with."""
    note = ast.unparse(fn.returns) if fn.returns else ""
    if note:
        return any(word in note for word in ("Axes", "Figure", "bytes", "str", "None", "Iterator", "Artist"))

    def drawn(expr) -> bool:
        if expr is None:
            return True
        if isinstance(expr, ast.Name):
            return expr.id in DRAWN or expr.id.startswith(("ax_", "fig_"))
        if isinstance(expr, ast.Tuple):
            return all(drawn(e) for e in expr.elts)
        if isinstance(expr, ast.Call):  # fig.colorbar(...), get_axes(...), new_figure(...), ax.plot(...)
            target = ast.unparse(expr.func)
            return target.split(".")[0] in DRAWN or target in ("get_axes", "new_figure")
        return False

    return all(drawn(r.value) for r in own_returns(fn))


def widget_function_is_a_control(fn: ast.FunctionDef) -> bool:
    """A public widgets function builds controls or lists explorers; it computes no numbers."""
    note = ast.unparse(fn.returns) if fn.returns else ""
    if note:
        return any(word in note for word in ("W.", "widgets", "Explorer", "type", "None"))
    returns = [r.value for r in own_returns(fn)]
    return all(v is None or (isinstance(v, ast.Call) and ast.unparse(v.func).startswith(("W.", "widgets.")))
               for v in returns)


def layer_of(path: Path) -> str:
    if path.is_relative_to(ROOT / "authoring"):
        return "notebooks"
    top = path.relative_to(PKG).parts[0]
    return top if top in ("plots", "widgets", "exercises") else "math"


def uses_of(target_layer: str, callers):
    """(caller, line, module, function name) for every use of a function of ``target_layer``'s modules."""
    for path in callers:
        for line, module, name, _ in imports(path):
            if name is not None and module.startswith(f"sdpa_helpers.{target_layer}"):
                yield path, line, module, name
        for line, module, attr in attribute_uses(path):
            if module.startswith(f"sdpa_helpers.{target_layer}"):
                yield path, line, module, attr


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_plots_functions_other_layers_call_return_figures():
    """A notebook, an explorer or the math layer may call a plots function only to draw:
    numeric helpers (bin edges, densities, ranges, panel values) belong to the math layer."""
    callers = NOTEBOOK_SOURCES + [p for p in PACKAGE_SOURCES if layer_of(p) != "plots"]
    bad = set()
    for path, line, module, name in uses_of("plots", callers):
        source = module_path(module)
        if source is None:
            continue
        fn = function_defs(source).get(name)
        if fn is not None and not draws(fn):
            bad.add(f"{path.relative_to(ROOT)}:{line} uses {module}.{name}, which returns numbers")
    assert not bad, "\n".join(sorted(bad))


def test_widgets_define_no_public_numeric_function():
    """An explorer wires controls to math and figures: a public widgets function builds controls."""
    bad = []
    for path in sorted((PKG / "widgets").glob("*.py")):
        for name, fn in function_defs(path).items():
            if not name.startswith("_") and not widget_function_is_a_control(fn):
                bad.append(f"{module_name(path)}.{name} (line {fn.lineno})")
    assert not bad, f"numeric functions in the widgets layer (move them to the math layer): {bad}"


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_tests_take_no_numeric_function_from_widgets():
    """Tests check numbers where they are computed (the math layer), not through widgets."""
    callers = sorted((ROOT / "tests").glob("test_*.py"))
    bad = set()
    for path, line, module, name in uses_of("widgets", callers):
        source = module_path(module)
        fn = function_defs(source).get(name) if source is not None else None
        if fn is not None and not is_private(name) and not widget_function_is_a_control(fn):
            bad.add(f"{path.name}:{line} uses {module}.{name}")
    assert not bad, "\n".join(sorted(bad))
