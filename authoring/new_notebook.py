"""Start a new notebook: ``make notebook NAME=10_layer_norm`` (or ``python authoring/new_notebook.py 10_layer_norm``).

Writes, from the one template ``authoring/templates/new_notebook.txt``:

- the source ``authoring/notebooks/NN_topic.py``: the setup cell, title, learning goals and
  prerequisites, a Predict with its ``predict_answer``, a figure and its static twin with ``alt=``
  placeholders, an explorer, a deep dive, the summary, two exercises (one conceptual) and the link
  back to 00;
- the topic's modules ``sdpa_helpers/{topic,plots/topic,widgets/topic,exercises/topic}.py`` and
  their one test file ``tests/test_topic.py`` (its math, figure and explorer; the tests that walk the
  package find the modules by themselves: nothing is registered by hand);

and edits the course's maps: a row in notebook 00's map, in the README's notebook table and in
ARCHITECTURE.md's topic table; the previous last notebook's closing "Back to the start" link becomes
a **Next:** link to the new one. Those edits are complete (the map rows' text is ``--summary``): the
author writes six files, all the topic's own. Every placeholder is marked ``TODO(write)``; at the end it
prints what is left to write, file by file -- exactly those six. Nothing that counts notebooks is written
anywhere (the site and the docs derive it). Standard library only; nothing is written unless every edit
can be made.

    python authoring/new_notebook.py 10_layer_norm --title "LayerNorm" --summary "LayerNorm and the variance of q and k"

``--summary`` (required) is the map rows' description: what the notebook shows, in a few words.
From the Makefile: ``make notebook NAME=10_layer_norm TITLE="LayerNorm" SUMMARY="..."``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "templates" / "new_notebook.txt"
#: The marker of everything the author still writes.
TODO = "TODO(write)"
NAME = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")
FILE_START = re.compile(r"^==> (.+) <==$", re.M)


class ScaffoldError(Exception):
    """The new notebook cannot be started as asked (the message says why and what to do)."""


def camel(topic: str) -> str:
    """``"temperature_scaling"`` -> ``"TemperatureScaling"``."""
    return "".join(part.capitalize() for part in topic.split("_"))


def template_files(values: dict[str, str]) -> dict[str, str]:
    """``{relative path: text}`` of every file of the template, placeholders filled."""
    text = TEMPLATE.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    parts = FILE_START.split(text)[1:]  # [path, body, path, body, ...]; the preamble is dropped
    return {parts[i].strip(): parts[i + 1].lstrip("\n") for i in range(0, len(parts), 2)}


def notebook_title(source: Path) -> str:
    """The title of a source: its first ``# # NN — Title`` line, without the number."""
    for line in source.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^# # (?:\d\d\s*[—-]\s*)?(.+)$", line)
        if match:
            return match.group(1).strip()
    raise ScaffoldError(f"{source.name} has no '# # NN — Title' line")


def insert_after_last(text: str, row: re.Pattern, new: str, where: str) -> str:
    """``text`` with the line ``new`` after the last line matching ``row`` (a table's last row)."""
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if row.match(line)]
    if not found:
        raise ScaffoldError(f"{where}: no row matching {row.pattern!r} to add the new notebook after; "
                            f"add its row by hand")
    lines.insert(found[-1] + 1, new + "\n")
    return "".join(lines)


#: The closing link of the last notebook; moved to the new one, a **Next:** link left in its place.
BACK_TO_START = re.compile(r"^# \*\*Back to the start:\*\* \[[^\]]*\]\(00_start_here\.ipynb\)[ \t]*$", re.M)


def plan(name: str, title: str | None = None, root: Path = ROOT,
         summary: str | None = None) -> tuple[dict[Path, str], dict[Path, str], dict]:
    """``(new files, edited files, facts)``: every text to write, computed before anything is written."""
    match = NAME.match(name)
    if not match:
        raise ScaffoldError(f"NAME must look like 10_layer_norm (two digits, '_', a lower-case topic), got {name!r}")
    nn, topic = match.groups()
    sources = sorted((root / "authoring" / "notebooks").glob("[0-9][0-9]_*.py"))
    if not sources:
        raise ScaffoldError("no notebook sources in authoring/notebooks")
    last = sources[-1]
    expected = f"{int(last.name[:2]) + 1:02d}"
    if nn != expected:
        raise ScaffoldError(f"the next notebook is number {expected} (after {last.name}), got {nn}: "
                            f"make notebook NAME={expected}_{topic}")
    taken = [p for p in (root / "sdpa_helpers" / f"{topic}.py", root / "sdpa_helpers" / topic) if p.exists()]
    if taken:
        raise ScaffoldError(f"the topic {topic!r} is taken: {taken[0].relative_to(root)} exists; choose another name")
    explorer = f"{camel(topic)}Explorer"
    widgets = "\n".join(p.read_text(encoding="utf-8") for p in (root / "sdpa_helpers" / "widgets").glob("*.py"))
    renamed = re.search(rf"^class {explorer}\b", widgets, re.M) is not None
    if renamed:  # two explorers of one name would share the site's frames and the tests' ids
        explorer = f"{camel(topic)}{nn}Explorer"
    title = title or topic.replace("_", " ").capitalize()
    if "|" in title + (summary or "") or "\n" in title + (summary or ""):
        raise ScaffoldError("--title and --summary go into table rows: no '|' and no line breaks")
    row = summary or f"{TODO}: what it shows"
    values = {"NN": nn, "topic": topic, "Title": title, "Explorer": explorer, "PREV_NN": last.name[:2],
              "PREV_TITLE": notebook_title(last), "PREV_STEM": last.stem}
    new = {root / rel: text for rel, text in template_files(values).items()}
    existing = [p.relative_to(root).as_posix() for p in new if p.exists()]
    if existing:
        raise ScaffoldError(f"these files exist already: {', '.join(existing)}")

    stem = f"{nn}_{topic}"
    edits: dict[Path, str] = {}
    start = sources[0]
    edits[start] = insert_after_last(
        start.read_text(encoding="utf-8"), re.compile(r"^# \| \d\d \| \[[^\]]*\]\(\d\d_\w+\.ipynb\)"),
        f"# | {nn} | [{title}]({stem}.ipynb) | {row} |", f"{start.name}'s map")
    readme = root / "README.md"
    edits[readme] = insert_after_last(
        readme.read_text(encoding="utf-8"), re.compile(r"^\| \d\d \| \[[^\]]*\]\(notebooks/\d\d_\w+\.ipynb\)"),
        f"| {nn} | [{title}](notebooks/{stem}.ipynb) | {row} |", "README.md's notebook table")
    architecture = root / "ARCHITECTURE.md"
    edits[architecture] = insert_after_last(
        architecture.read_text(encoding="utf-8"), re.compile(r"^\| \d\d \| `\w+` \|"),
        f"| {nn} | `{topic}` | `{topic}.py` | `plots/{topic}.py` | `widgets/{topic}.py` | `exercises/{topic}.py` "
        f"| `test_{topic}.py` |", "ARCHITECTURE.md's topic table")
    previous = last.read_text(encoding="utf-8")
    if len(BACK_TO_START.findall(previous)) != 1:
        raise ScaffoldError(f"{last.name} does not end with one '**Back to the start:** [...](00_start_here.ipynb)' "
                            f"line to turn into a **Next:** link")
    edits[last] = BACK_TO_START.sub(f"# **Next:** [{nn} — {title}]({stem}.ipynb)", previous)
    return new, edits, {"nn": nn, "topic": topic, "explorer": explorer, "renamed": renamed, "previous": last,
                        "title": title, "summary": row}


def word_room(row_text: str, root: Path = ROOT) -> str:
    """The words the course's budgets leave for the new notebook's main line, from the built notebooks
    (``build.main_line``, before the new row in 00 is built), or "" where the build's modules are not
    installed yet (this script runs on a bare Python too)."""
    try:
        sys.path.insert(0, str(root / "authoring"))
        import build
    except ImportError:
        return ""
    built = {p.name[:2]: build.main_line(p)["words"] for p in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
    if "00" not in built:
        return ""
    row = build.prose_words(row_text)
    total, start = sum(built.values()) + row, built["00"] + row
    room = build.COURSE_WORDS - total
    line = (f"word room: with your map row ({row} words) the course's main line holds {total:,} of "
            f"{build.COURSE_WORDS:,} words and 00's {start:,} of {build.WORD_BUDGET['00']:,}, so your notebook's "
            f"main line can hold {room:,} words (it needs at least {build.MIN_WORDS})")
    if room < build.MIN_WORDS:
        line += ": less than a notebook needs, so shorten other notebooks' main lines first"
    return line


def left_to_write(paths, root: Path = ROOT) -> list[str]:
    """``"path: N"`` for every file holding :data:`TODO` markers."""
    rows = []
    for path in paths:
        n = path.read_text(encoding="utf-8").count(TODO)
        if n:
            rows.append(f"  {path.relative_to(root).as_posix()}: {n} x {TODO}")
    return rows


def main(argv=None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="NN_topic, e.g. 10_layer_norm (NN: the next number; topic: the module name)")
    parser.add_argument("--title", help="the notebook's title (default: the topic, capitalised)")
    parser.add_argument("--summary", required=True,
                        help="what it shows, in a few words: the text of its rows in 00's map and the README's table")
    args = parser.parse_args(argv)
    if not (args.summary or "").strip():
        print("make notebook: SUMMARY (--summary) is required: what the notebook shows, in a few words "
              "(the text of its rows in 00's map and the README's table)", file=sys.stderr)
        return 2
    try:
        new, edits, facts = plan(args.name, args.title or None, root, args.summary.strip())
    except ScaffoldError as problem:
        print(f"make notebook: {problem}", file=sys.stderr)
        return 2
    for path, text in {**new, **edits}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    nn, topic = facts["nn"], facts["topic"]
    print("edited for you (complete, nothing to write there):\n" + "\n".join(f"  {rel(p)}" for p in edits)
          + f"\n  ({rel(facts['previous'])}: its closing link is now **Next:** to {nn}_{topic}.ipynb)")
    if facts["renamed"]:
        print(f"note: an explorer named {camel(topic)}Explorer exists already; yours is {facts['explorer']}")
    room = word_room(f"| {nn} | [{facts['title']}]({nn}_{topic}.ipynb) | {facts['summary']} |", root)
    if room:
        print("\n" + room)
    print(f"\nleft to write: these {len(new)} files, your topic's own (each {TODO} in them; "
          f"tests/test_new_notebook.py fails while one is left):")
    print("\n".join(left_to_write(new, root)))
    print(f"""
then (commands; no other file needs a hand edit):
  - the notebook's prose: 300-1,200 words on the main line, a Predict before the key simulation with its
    answer in predict_answer, every number from a cell (AUTHORING.md states every rule the tests check);
    replace placeholder_value and value_figure by the topic's own math and figures, with their tests;
    a public math function taking arrays gets a test_..._sweep... in tests/test_{topic}.py, or a line in
    that file's SWEEP_EXEMPT = {{"function": "why no sweep"}}; a public function with scale= or seed= gets
    its smallest call in that file's SMALL_CALLS = {{"{topic}.function": lambda **kw: ...}} (tests/test_checks.py)
  - notebook 00's main line stays within 1,100 words and the course's within 10,000, and your map row counts
    in both (the word room above): if the structure test says one is over, shorten your row (SUMMARY), your
    notebook's main line or another's
  - lint before you build (a fix after the build stales the notebook): .venv/bin/ruff check . (`make lint`)
  - build it and the two notebooks whose sources the scaffold edited (00's map, the previous one's link):
      .venv/bin/python authoring/build.py 00 {facts['previous'].name[:2]} {nn}
    (each notebook records the package files it loaded: your new modules stale no other notebook;
    `build.py --check` names any notebook that is stale)
  - regenerate: .venv/bin/python authoring/build.py --readme && .venv/bin/python authoring/teaching.py
    (the README's reading-load table; TEACHING.md, the teacher's guide, from the notebooks and exercises)
  - check it (the module paths run your docstrings' examples too):
      .venv/bin/python -m pytest -p no:randomly -q tests/test_notebook_structure.py tests/test_{topic}.py \\
      tests/test_new_notebook.py tests/test_teaching.py tests/test_stale_outputs.py sdpa_helpers/{topic}.py \\
      sdpa_helpers/plots/{topic}.py sdpa_helpers/widgets/{topic}.py sdpa_helpers/exercises/{topic}.py""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
