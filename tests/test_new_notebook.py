"""`make notebook NAME=NN_topic` (authoring/new_notebook.py), tried in a copy of the repository (issue 40 §1).

The scaffold's notebook must pass the structure rules of tests/test_notebook_structure.py that need no
kernel (read from its source, as the build does, without executing it), its rows must be in every map,
and the previous last notebook must link to it. The slow test builds it for real in a copy and runs the
tests that walk the package. Nothing committed may keep a scaffold placeholder.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "authoring"))
sys.path.insert(0, str(ROOT / "tests"))
import build  # noqa: E402
import new_notebook  # noqa: E402
import test_notebook_structure as structure  # noqa: E402

SOURCES = sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
NEXT = f"{int(SOURCES[-1].name[:2]) + 1:02d}"
TOPIC = "temperature" if not (ROOT / "sdpa_helpers" / "temperature.py").exists() else "scaffold_probe"
NAME = f"{NEXT}_{TOPIC}"


def copy_repo(dst: Path, notebooks: bool = False) -> Path:
    """What the scaffold reads and edits (and, with ``notebooks``, the notebooks and tests too)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "authoring", dst / "authoring", ignore=shutil.ignore_patterns("__pycache__", "site"))
    shutil.copytree(ROOT / "sdpa_helpers", dst / "sdpa_helpers", ignore=ignore)
    if notebooks:
        shutil.copytree(ROOT / "tests", dst / "tests", ignore=ignore)
    for name in ("README.md", "ARCHITECTURE.md", "AUTHORING.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, dst / name)
    (dst / "notebooks" / "figures").mkdir(parents=True)
    if notebooks:
        for path in (ROOT / "notebooks").rglob("*"):
            if path.is_file():
                shutil.copy2(path, dst / path.relative_to(ROOT))
    return dst


def scaffold(root: Path, name: str = NAME, *options: str) -> subprocess.CompletedProcess:
    """The scaffold run in ``root`` (with a ``--summary`` unless ``options`` give one)."""
    options = options if "--summary" in options else (*options, "--summary", "what it shows")
    return subprocess.run([sys.executable, str(root / "authoring" / "new_notebook.py"), name, *options], cwd=root,
                          capture_output=True, text=True, timeout=60)


#: The files a new notebook's author writes: the topic's own, six.
OWN = (f"authoring/notebooks/{NAME}.py", f"sdpa_helpers/{TOPIC}.py", f"sdpa_helpers/plots/{TOPIC}.py",
       f"sdpa_helpers/widgets/{TOPIC}.py", f"sdpa_helpers/exercises/{TOPIC}.py", f"tests/test_{TOPIC}.py")


def unexecuted(root: Path, stem: str) -> Path:
    """``notebooks/<stem>.ipynb`` as the build reads it from its source (no kernel: no outputs)."""
    path = root / "notebooks" / f"{stem}.ipynb"
    nbformat.write(build.read_source(root / "authoring" / "notebooks" / f"{stem}.py"), path)
    return path


def test_the_scaffold_writes_a_notebook_that_follows_the_rules_and_is_on_every_map(tmp_path):
    root = copy_repo(tmp_path)
    summary = "softmax temperature against the scale"
    done = scaffold(root, NAME, "--title", "Temperature", "--summary", summary)
    assert done.returncode == 0, done.stderr
    assert "left to write" in done.stdout and new_notebook.TODO in done.stdout
    stem, previous = NAME, SOURCES[-1].stem
    # what is left to write: exactly the topic's six files, each holding a placeholder; nothing else does
    listed = re.findall(r"^  (\S+): \d+ x ", done.stdout.split("left to write")[1], re.M)
    assert sorted(listed) == sorted(OWN), done.stdout
    written = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
               and p.suffix in (".py", ".md") and PLACEHOLDER.search(p.read_text(encoding="utf-8"))}
    assert written - set(MARKER_HOMES) == set(OWN), "a file outside the topic's own holds a placeholder"
    assert not list(root.glob(f"tests/test_*_{TOPIC}.py")), "one test file for the topic"
    start, last, new = (unexecuted(root, s) for s in (SOURCES[0].stem, previous, stem))
    # the structure rules that need no outputs, on the new notebook
    for rule in (structure.test_skeleton, structure.test_no_forbidden_code,
                 structure.test_images_are_local_with_alt_text, structure.test_deep_dives_are_tagged_and_folded,
                 structure.test_a_conceptual_exercise, structure.test_every_deep_dive_folds_something):
        rule(new)
    assert structure.predict_giveaways(jupytext.read(root / "authoring" / "notebooks" / f"{stem}.py").cells) == []
    load = structure.main_line(new)
    assert load["predict"] >= 1 and load["long"] == 0 and 0 < load["code"] <= build.DEFAULT_CODE
    assert load["words"] < build.MIN_WORDS, "the prose is the author's to write (the budget test says so)"
    # the links: the new notebook closes the course, the previous one leads to it
    text = structure.markdown(nbformat.read(new, as_version=4))
    assert "(00_start_here.ipynb)" in text and f"]({previous}.ipynb)" in text
    last_text = structure.markdown(nbformat.read(last, as_version=4))
    assert re.search(rf"\*\*Next:\*\* \[[^\]]+\]\({stem}\.ipynb\)", last_text)
    assert "**Back to the start:**" not in last_text
    # the maps: 00's, the README's, ARCHITECTURE's topic table
    assert f"]({stem}.ipynb)" in structure.markdown(nbformat.read(start, as_version=4))
    assert f"| [Temperature](notebooks/{stem}.ipynb) | {summary} |" in (root / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| {NEXT} \| `{TOPIC}` \|.*\| `test_{TOPIC}.py` \|$",
                     (root / "ARCHITECTURE.md").read_text(encoding="utf-8"), re.M)
    # a second run refuses, and changes nothing
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    again = scaffold(root)
    assert again.returncode == 2 and "make notebook:" in again.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_the_scaffold_says_how_many_words_the_budgets_leave(tmp_path):
    """Newcomer 3: the course's 10,000 words left a new notebook a window of about 300-324 words, and
    nothing said so before the budget test failed. The scaffold now prints the room, counted as the
    budget test counts it (the built notebooks' main lines plus the new map row)."""
    root = copy_repo(tmp_path, notebooks=True)
    done = scaffold(root, NAME, "--title", "Temperature", "--summary", "softmax temperature against the scale")
    assert done.returncode == 0, done.stderr
    found = re.search(r"^word room: .* holds ([\d,]+) of 10,000 words .* can hold (-?[\d,]+) words", done.stdout, re.M)
    assert found, done.stdout
    total, room = (int(g.replace(",", "")) for g in found.groups())
    course = sum(structure.main_line(p)["words"] for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    row_line = f"| {NEXT} | [Temperature]({NAME}.ipynb) | softmax temperature against the scale |"
    row = len(re.findall(r"[A-Za-z]+", row_line))
    assert total == course + row and room == build.COURSE_WORDS - total, (total, room, course, row)


@pytest.mark.parametrize("name, says, options", [
    ("1_x", "two digits", ()), (f"{int(NEXT) + 1:02d}_x", f"number {NEXT}", ()), (f"{NEXT}_scaling", "taken", ()),
    (NAME, "SUMMARY (--summary) is required", ("--summary", " "))])
def test_the_scaffold_refuses_a_wrong_name_and_writes_nothing(tmp_path, name, says, options):
    root = copy_repo(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    done = scaffold(root, name, *options)
    assert done.returncode == 2 and says in done.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


#: Where the scaffold's placeholder marker may stay: its template and script, and this test. Docs name it
#: in backticks (`TODO(write)`), which :data:`PLACEHOLDER` does not count.
MARKER_HOMES = {"authoring/templates/new_notebook.txt", "authoring/new_notebook.py", "tests/test_new_notebook.py"}
PLACEHOLDER = re.compile(r"(?<!`)" + re.escape(new_notebook.TODO))


def test_no_scaffold_placeholder_is_left():
    """Every TODO(write) the scaffold left (prose, alt texts, map rows, modules, tests) has been written."""
    files = [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "authoring").rglob("*.py"),
             *(ROOT / "sdpa_helpers").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
    counts = {p.relative_to(ROOT).as_posix(): len(PLACEHOLDER.findall(p.read_text(encoding="utf-8"))) for p in files}
    left = [f"{name}: {n}" for name, n in counts.items() if n and name not in MARKER_HOMES]
    assert not left, f"{new_notebook.TODO} left to write in: {left}"


@pytest.mark.slow  # builds the new notebook in a kernel and runs the package-walking tests (about a minute)
def test_the_scaffolds_notebook_builds_and_passes_the_tests_that_find_it(tmp_path):
    """In a copy: scaffold, build the new notebook for real, then its own tests, its structure tests
    and the tests that walk the package (architecture, exercises, the shared explorer checks)."""
    root = copy_repo(tmp_path, notebooks=True)
    assert scaffold(root).returncode == 0
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy's sdpa_helpers, not the installed one
    built = subprocess.run([sys.executable, "authoring/build.py", NEXT], cwd=root, env=env, capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    explorer = re.search(r"^class (\w+)\(Explorer\)", (root / "sdpa_helpers" / "widgets" / f"{TOPIC}.py")
                         .read_text(encoding="utf-8"), re.M).group(1)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q", "-x",
         f"tests/test_{TOPIC}.py", "tests/test_properties.py", "tests/test_architecture.py", "tests/test_exercises.py",
         "tests/test_widgets.py", "tests/test_notebook_structure.py", "tests/test_stale_outputs.py",
         "-k", f"{NAME} or {explorer} or {TOPIC} or architecture or exercises or every_array_function",
         "--deselect", f"tests/test_notebook_structure.py::test_main_line_budget[{NAME}]"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
