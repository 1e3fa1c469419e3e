"""Build the course as a static site (``make site``): one HTML page per committed notebook.

    python authoring/site/build.py [--out build/site] [--jobs 2] [--only 05]

Pages are the stored notebooks (no code runs here but the explorers' own drawing code), in three steps:

1. **frames** (``frames.py``): each explorer cell names its explorer in its metadata
   (``"explorer": {"class": ..., "kwargs": ...}``, written by the notebook build, ``authoring/build.py``);
   the explorer is made with those arguments and every combination of its controls' values is rendered
   by its own code. Its frame table is stored as data, ``frames/<id>.json`` beside ``frames/<id>/``;
   the page loads the same table as ``frames/<id>.js`` (a script: ``file://`` pages cannot fetch JSON);
2. **a notebook → notebook transform** (``transform.py``): explorer outputs become the static
   explorer's HTML, exercise outputs their answer boxes, figures image files with their author's alt
   text; deep dives are marked;
3. **one Jinja2 template** (``templates/page.html.j2``) renders each transformed notebook as a page
   (markdown through mistune, code through Pygments) and the contents page.

Everything a page loads is in the site folder: MathJax from the npm package pinned in
``package-lock.json`` (``npm ci``), the style sheet and scripts from ``authoring/site/static``.
No page requests anything outside it.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import importlib
import json
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the course package, without installing it into .venv-site
sys.path.insert(2, str(ROOT / "authoring"))  # explorer_cells, shared with the notebook build

import code_digest  # noqa: E402  (authoring/code_digest.py: what code a notebook ran against)
import frames as F  # noqa: E402
import teaching  # noqa: E402
import transform as T  # noqa: E402  (authoring/teaching.py: the teacher's pages)
from atomic import write_atomically  # noqa: E402  (authoring/atomic.py, shared with the notebook build)

NOTEBOOKS = ROOT / "notebooks"
STATIC = HERE / "static"
TEMPLATES = HERE / "templates"
TEMPLATE = "page.html.j2"
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"
#: The repository the links point to: the Pages workflow passes its own (``--repo``, from the repository it
#: runs in); a local build keeps the checked-in placeholder, the only one (tests/test_site.py checks it).
PLACEHOLDER = "OWNER/REPO"
REPO = os.environ.get("SITE_REPO") or PLACEHOLDER
#: Set to 1 only for a local build of sources whose figures do not all carry author alt text yet.
ALLOW_MISSING_ALT = os.environ.get("SITE_ALLOW_MISSING_ALT") == "1"
BINDER = "https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=lab/tree/notebooks/{name}"
GITHUB = "https://github.com/{repo}"
#: The MathJax pieces copied into the site: TeX extensions, menu and accessibility (speech: sre; the explorer
#: needs the MathML input, input/mml) load on demand.
MATHJAX_PARTS = ("tex-svg.js", "input/tex/extensions", "input/mml.js", "input/mml", "ui", "a11y", "sre")
#: Frames rendered per task (a task builds one explorer and renders its chunk).
CHUNK = 120


# -- reading a notebook ---------------------------------------------------------------------

def load(path: Path) -> dict:
    return T.normalize(json.loads(path.read_text(encoding="utf-8")))


def title_of(nb: dict, fallback: str) -> str:
    """The notebook's title, numbered alike on every page: ``"05 — Softmax saturation"`` (the number from
    the file name ``fallback`` when the title does not carry it, as 00-04's do not)."""
    number = fallback[:2] if fallback[:2].isdigit() else ""
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            m = re.search(r"^#\s+(.+)$", cell["source"], flags=re.M)
            if m:
                title = m.group(1).strip()
                return title if not number or title.startswith(number) else f"{number} — {title}"
    return fallback


class MissingExplorer(ValueError):
    """A cell shows a widget but its metadata does not name the explorer (or names none of the course's)."""


def explorer_cells(nb: dict, name: str, known: set) -> list[dict]:
    """Every cell that shows an explorer: its index, class and arguments, from the cell's ``explorer``
    metadata (``{"class": "sdpa_helpers.widgets.<topic>.<Name>Explorer", "kwargs": {...}}``)."""
    found = []
    for i, cell in enumerate(nb["cells"]):
        if not T.shows_widget(cell):
            continue
        meta = cell["metadata"].get("explorer")
        where = f"{name}, cell {i} ({cell['source'].strip().splitlines()[0][:60]!r})"
        if meta is None:
            raise MissingExplorer(f"{where} shows a widget but its metadata names no explorer: rebuild the notebook "
                                  f"(python authoring/build.py {name[:2]}), which writes it")
        module, _, attr = meta["class"].rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            cls = None
        if cls not in known:
            raise MissingExplorer(f"{where}: {meta['class']} is not one of the course's explorers "
                                  f"(sdpa_helpers.widgets.all_explorers())")
        found.append({"cell": i, "cls": cls, "class": meta["class"], "kwargs": dict(meta.get("kwargs", {}))})
    return found


# -- markdown, code, figures ----------------------------------------------------------------

def markdown():
    import mistune

    return mistune.create_markdown(escape=False, plugins=["math", "table", "strikethrough"])


def rewrite_links(text: str) -> str:
    """Links to another notebook point to its page; links into the repository to GitHub."""
    def href(m):
        target = m.group(2)
        if re.match(r"^[0-9][0-9]_[\w-]+\.ipynb(#.*)?$", target):
            target = re.sub(r"\.ipynb", ".html", target, count=1)
        elif target.startswith("../"):
            target = f"{GITHUB.format(repo=REPO)}/blob/HEAD/{target[3:]}"
        return f'{m.group(1)}"{target}"'
    return re.sub(r'(href=)"([^"]+)"', href, text)


def _tex_as_html(tex: str) -> str | None:
    """A simple formula (letters, digits, ``\\mathrm{...}``, brackets, ``_x`` / ``^x``) as plain HTML text:
    ``\\mathrm{Var}(q_i)`` -> ``Var(<i>q</i><sub><i>i</i></sub>)``; ``None`` for anything else."""
    import html as H

    def atom(t: str) -> str:
        return "".join(f"<i>{c}</i>" if c.isalpha() else H.escape(c) for c in t)

    out, i = [], 0
    token = re.compile(r"\\mathrm\{([A-Za-z ]+)\}|([_^])(?:\{([A-Za-z0-9]+)\}|([A-Za-z0-9]))|([A-Za-z0-9(),=+\- ]+)")
    while i < len(tex):
        m = token.match(tex, i)
        if not m:
            return None
        if m.group(1):
            out.append(H.escape(m.group(1)))
        elif m.group(2):
            tag = "sub" if m.group(2) == "_" else "sup"
            out.append(f"<{tag}>{atom(m.group(3) or m.group(4))}</{tag}>")
        else:
            out.append(atom(m.group(5)))
        i = m.end()
    return "".join(out)


def math_headers(text: str) -> str:
    """A table header cell that is a formula and nothing else gets it as text (``Var(<i>W</i>)``), not as
    MathJax's picture: a screen reader's table navigation and axe (``empty-table-header``) need text there."""
    def cell(m):
        as_html = _tex_as_html(m.group(2))
        return m.group(0) if as_html is None else f'{m.group(1)}<span class="math-text">{as_html}</span></th>'
    return re.sub(r'(<th[^>]*>)\s*<span class="math">\\\((.+?)\\\)</span>\s*</th>', cell, text)


def highlight(code: str) -> str:
    from pygments import highlight as pyg
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return pyg(code, PythonLexer(), HtmlFormatter(nowrap=True))


class MissingAlt(ValueError):
    """A figure drawn by a code cell whose source carries no author alt text."""


def figure_alt(cell, notebook: str, index: int) -> str:
    """Alt text of a figure a code cell drew: the cell's ``alt`` metadata, written by its author
    (``# %% alt="..."`` in the jupytext source) for what the figure shows.

    A figure without it stops the build (:class:`MissingAlt`, naming the notebook and the cell):
    no text is made up in its place. Only ``SITE_ALLOW_MISSING_ALT=1`` (a local build of sources
    not yet carrying alt text) lets the build go on, with a visible marker instead.
    """
    alt = str(cell.get("metadata", {}).get("alt", "")).strip()
    if alt:
        return alt
    first = (T.text(cell.get("source", "")).strip().splitlines() or [""])[0][:80]
    where = f"{notebook}, cell {index} ({first!r})"
    if ALLOW_MISSING_ALT:
        print(f"  warning: no author alt text: {where}", file=sys.stderr)
        return f"MISSING ALT TEXT: {where}"
    raise MissingAlt(f"{where} draws a figure without author alt text: add alt=\"...\" to the cell's "
                     f"`# %%` line in authoring/notebooks/ (what the figure shows: numbers, trends) and rebuild")


# -- the template ---------------------------------------------------------------------------

@functools.cache
def environment():
    """The Jinja2 environment of the one template, with its filters (HTML they return is marked safe)."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    md = markdown()
    env.filters["markdown"] = lambda s: Markup(math_headers(rewrite_links(md(s))))
    env.filters["markdown_inline"] = lambda s: Markup(re.sub(r"^<p>|</p>$", "", rewrite_links(md(s)).strip()))
    env.filters["highlight"] = lambda s: Markup(highlight(s))
    env.filters["strip_ansi"] = lambda s: re.sub(r"\x1b\[[0-9;]*m", "", str(s))
    env.filters["script_json"] = lambda v: Markup(json.dumps(v, ensure_ascii=False).replace("</", "<\\/"))
    env.globals["entry_labels"] = entry_labels
    return env


def macros():
    """The template's macros (``banner``, ``explorer``, ``exercise``, ...), callable from Python."""
    return environment().get_template(TEMPLATE).module


def binder(name: str) -> str:
    return BINDER.format(repo=REPO, name=name)


def links() -> dict:
    """What the run note and the contents page link to (the repository named by ``--repo``)."""
    return {"clone": GITHUB.format(repo=REPO), "placeholder": PLACEHOLDER if REPO == PLACEHOLDER else ""}


def banner(page) -> str:
    return str(macros().banner(binder(page.path.name), **links()))


def entry_labels(spec: dict) -> list[str]:
    """The labels of an exercise's answer boxes: one per entry of its answer."""
    shape = spec["shape"]
    if spec["kind"] == "number":
        return ["your answer"]
    if spec.get("entry_names"):
        return list(spec["entry_names"])
    if len(shape) == 1:
        return [f"entry {i + 1} of {shape[0]}" for i in range(shape[0])]
    return [f"row {i + 1}, column {j + 1}" for i in range(shape[0]) for j in range(shape[1])]


def exercise_spec(key: str) -> dict:
    """What the page needs to check exercise ``key`` (exported by the exercise bank itself)."""
    from sdpa_helpers.exercises import page_spec

    return page_spec(key)


def exercise_html(spec: dict, page) -> str:
    """An exercise in the page: an answer box (boxes, choices) checked in the page by ``exercises.js``
    with the bank's own spec, or, for a function, where to write it."""
    return str(macros().exercise(spec, binder(page.path.name)))


def explorer_html(e: dict) -> str:
    """The static explorer: native controls, the starting frame, its readout, what it is."""
    meta = e["meta"]
    state = [(c, c["values"][c["initial"]]) for c in meta["controls"]]
    view = dict(meta, cls=e["cls"].__name__, frame=meta["first"], alt=meta["alts"][0], readout=meta["first_readout"],
                start_values={c["name"]: v for c, v in state},
                data_values=[(c["name"].lower(), F.js_str(v)) for c, v in state],
                notes=[c["note"] for c in meta["controls"] if c["note"]])
    return str(macros().explorer(view))


# -- explorers: frames and their tables -----------------------------------------------------

def explorer_title(cls) -> str:
    doc = (cls.__doc__ or cls.__name__).strip().split("\n\n")[0]
    return re.sub(r"\s+", " ", doc).replace("``", "")


def plan_frames(e: dict) -> None:
    explorer = e["cls"](**e["kwargs"])
    try:
        e["controls"] = F.page_controls(explorer)
    finally:
        explorer.close()
    e["combos"] = F.combos(e["controls"])


def package_digest() -> str:
    """A digest of the package's code and data (the exercise bank left out: see :func:`frames_key`)."""
    package = ROOT / "sdpa_helpers"
    inputs = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
              and "exercises" not in p.relative_to(package).parts[:1]] + [HERE / "frames.py"]
    return F.source_digest(inputs)


def built_with() -> dict:
    """What a frame table records it was built with: the libraries that draw the frames, the package's
    code digest and the repository the links name. Reuse needs every entry equal."""
    import matplotlib
    import numpy
    import PIL

    return {"numpy": numpy.__version__, "matplotlib": matplotlib.__version__, "pillow": PIL.__version__,
            "sdpa_helpers": package_digest(), "site_repo": REPO}


def frames_key(e: dict) -> str:
    """What an explorer's frames depend on: the package's code and data, frames.py, class and arguments.

    The exercise bank is left out: no explorer imports it (tests/test_site_access.py checks that), so a
    change to an exercise rebuilds the pages in seconds, not the frames."""
    return package_digest() + "-" + e["cls"].__name__ + "-" + json.dumps(e["kwargs"], sort_keys=True)


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reuse(e: dict, previous: Path | None) -> tuple[F.Rendered | None, str]:
    """The frames of the previous build, if its table is sound and matches; else ``(None, why)``.

    Sound: the table parses, names this explorer's key (package code, class, arguments), was built with
    the same :func:`built_with` (library versions, SITE_REPO), and every frame file it names exists with
    the size and SHA-256 it records. Anything else is rebuilt (a page-only change rebuilds in seconds)."""
    if previous is None:
        return None, "no previous build"
    path = previous / f"{e['id']}.json"
    if not path.is_file():
        return None, f"no table {path.name} in the previous build"
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"its table {path.name} does not parse ({type(exc).__name__}: {exc})"
    if not isinstance(table, dict):
        return None, f"its table {path.name} is not an object"
    if table.get("key") != e["key"]:
        return None, "the package, the explorer or its arguments changed"
    then, now = table.get("built_with"), built_with()
    if then != now:
        changed = sorted(k for k in now if not isinstance(then, dict) or then.get(k) != now[k])
        return None, f"built with another {', '.join(changed) or 'set of libraries'}"
    files = table.get("files")
    try:
        readout_of, readouts = table["readout_of"], table["readouts"]
        r = F.Rendered(sizes=(int(table["width"]), int(table["height"])))
        if len(readout_of) != len(e["combos"]) or not isinstance(files, dict):
            return None, f"its table {path.name} does not list every frame"
        for combo, k in zip(e["combos"], readout_of):
            name = F.frame_name(combo)
            size, digest = files[name]
            frame = previous / e["id"] / name
            if not frame.is_file():
                return None, f"frame file {e['id']}/{name} is missing"
            data = frame.read_bytes()
            if len(data) != size or file_digest(data) != digest:
                return None, f"frame file {e['id']}/{name} is damaged (size or hash differs from its table)"
            r.files[name] = data
            r.readouts[tuple(combo)] = readouts[k]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return None, f"its table {path.name} is incomplete ({type(exc).__name__}: {exc})"
    return r, ""


def render_frames(pages: list, out: Path, jobs: int, previous: Path | None = None) -> dict:
    """Render every explorer's frames (in ``jobs`` processes); write them and each explorer's table."""
    tasks = []
    results: dict = {}
    for page in pages:
        for e in page.explorers:
            plan_frames(e)
            e["key"] = frames_key(e)
            again, why = reuse(e, previous)
            if again is not None:
                results[e["id"]] = [again]
                print(f"  frames: {e['id']} {e['cls'].__name__} reused from the previous build", flush=True)
                continue
            if previous is not None:
                print(f"  frames: {e['id']} {e['cls'].__name__} rebuilt: {why}", flush=True)
            for start in range(0, len(e["combos"]), CHUNK):
                tasks.append((e, e["combos"][start:start + CHUNK]))
    if jobs > 1 and tasks:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [(e, pool.submit(F.render_chunk, e["cls"], e["kwargs"], chunk)) for e, chunk in tasks]
            for n, (e, fut) in enumerate(futures, 1):
                results.setdefault(e["id"], []).append(fut.result())
                print(f"  frames: {n}/{len(futures)} chunks ({e['id']} {e['cls'].__name__})", flush=True)
    else:
        for e, chunk in tasks:
            results.setdefault(e["id"], []).append(F.render_chunk(e["cls"], e["kwargs"], chunk))
    return {e["id"]: write_explorer(e, results[e["id"]], out) for page in pages for e in page.explorers}


def write_explorer(e: dict, chunks: list, out: Path) -> dict:
    """Write an explorer's frames and its table: ``frames/<id>.json`` (data, with the frames' key) and
    ``frames/<id>.js`` (the same table as a script, which the page loads)."""
    folder = out / "frames" / e["id"]
    folder.mkdir(parents=True, exist_ok=True)
    readouts: dict = {}
    size = 0
    width = height = 0
    files: dict = {}
    for r in chunks:
        for name, data in r.files.items():
            write_atomically(folder / name, data)
            files[name] = [len(data), file_digest(data)]
            size += len(data)
        readouts.update(r.readouts)
        width, height = r.sizes
    unique: list[str] = []
    where: dict = {}
    per_frame = []
    for combo in e["combos"]:
        text = readouts[tuple(combo)]
        if text not in where:
            where[text] = len(unique)
            unique.append(text)
        per_frame.append(where[text])
    title = explorer_title(e["cls"])
    table = {"id": e["id"], "cls": e["cls"].__name__, "title": title, "controls": [c.as_json() for c in e["controls"]],
             "readouts": unique, "readout_of": per_frame, "width": width, "height": height,
             "base": f"frames/{e['id']}/", "ext": F.FORMAT}
    script = f"frames/{e['id']}.js"
    write_atomically(out / script, "window.SDPA_EXPLORERS = window.SDPA_EXPLORERS || {};\n"
                                   f"window.SDPA_EXPLORERS[{json.dumps(e['id'])}] = "
                                   f"{json.dumps(table, separators=(',', ':'))};\n")
    # The data table last, once every frame it names is written: its key, what it was built with, and
    # each frame's size and hash, which the next build's reuse() checks before trusting them.
    write_atomically(out / "frames" / f"{e['id']}.json",
                     json.dumps({**table, "key": e["key"], "built_with": built_with(), "files": files}))
    initial = tuple(c.initial for c in e["controls"])
    first_values = ", ".join(f"{c.label} = {c.labels[i]}" for c, i in zip(e["controls"], initial))
    first_readout = unique[per_frame[e["combos"].index(initial)]]
    e["meta"] = dict(table, first=F.frame_name(initial), first_readout=first_readout, script=script,
                     alts=[f"{title} At {first_values}. {F.strip_tags(first_readout)}"])
    return {"frames": len(e["combos"]), "bytes": size + (out / script).stat().st_size, "width": width,
            "height": height}


# -- pages ----------------------------------------------------------------------------------

class Page:
    def __init__(self, path: Path, nb: dict, out: Path):
        self.path, self.nb, self.out = path, nb, out
        self.stem = path.stem
        self.number = self.stem[:2]
        self.title = title_of(nb, self.stem)
        self.explorers: list[dict] = []  # filled by plan(), frames rendered later
        self.figures = 0
        # the page specs of its exercises, in page order
        self.exercises: list[dict] = [exercise_spec(key) for key in map(T.exercise_key, nb["cells"]) if key]

    def plan(self, known: set) -> None:
        """The explorer cells and their classes (before rendering anything)."""
        self.explorers = [dict(e, id=f"{self.number}-{n}")
                          for n, e in enumerate(explorer_cells(self.nb, self.path.name, known), 1)]

    def figure(self, cell: dict, index: int, png: str) -> tuple[str, str]:
        self.figures += 1
        name = f"img/{self.number}-{self.figures}.png"
        (self.out / name).write_bytes(base64.b64decode(png))
        return name, figure_alt(cell, self.path.name, index)

    def exercise(self, key: str) -> tuple[str, bool]:
        spec = next(s for s in self.exercises if s["key"] == key)
        return exercise_html(spec, self), spec["kind"] != "function"

    def html(self, pages: list[Page], k: int) -> str:
        """The page: the notebook through the transform, then the template."""
        self.figures = 0
        cells = T.transform(self.nb, explorers={e["cell"]: explorer_html(e) for e in self.explorers},
                            exercise=self.exercise, figure=self.figure)["cells"]
        page = {"title": self.title, "cells": cells}
        return environment().get_template(TEMPLATE).render(page=page, pages=pages, k=k, binder=binder(self.path.name),
                                                           **links())


def index_html(pages: list[Page]) -> str:
    contents = [{"stem": p.stem, "title": p.title, "explorers": len(p.explorers),
                 "exercises": [e["key"] for e in p.exercises if e["kind"] != "function"]} for p in pages]
    return environment().get_template(TEMPLATE).render(contents=contents, binder=binder("00_start_here.ipynb"),
                                                       **links())


# -- the site -------------------------------------------------------------------------------

def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def legible(hex_colour: str, background: str = "#f4f6f8", ratio: float = 4.6) -> str:
    """``hex_colour`` darkened just enough to reach ``ratio`` (WCAG AA: 4.5) against the code's background."""
    colour = hex_colour
    for _ in range(100):
        lighter = _luminance(background)
        if (lighter + 0.05) / (_luminance(colour) + 0.05) >= ratio:
            return colour
        colour = "#" + "".join(f"{max(int(colour[i:i + 2], 16) - 6, 0):02x}" for i in (1, 3, 5))
    return colour


def copy_static(out: Path) -> None:
    from pygments.formatters import HtmlFormatter

    static = out / "_static"
    static.mkdir(parents=True, exist_ok=True)
    for f in STATIC.iterdir():
        shutil.copy2(f, static / f.name)
    # the explorers' one front end: the notebook's widget loads the same file (docs/explorers.md)
    shutil.copy2(ROOT / "sdpa_helpers" / "widgets" / "explorer.js", static / "explorer.js")
    css = HtmlFormatter(style="default").get_style_defs(".code")
    def six(m):  # #A2F -> #AA22FF
        h = m.group(0)[1:]
        return "#" + ("".join(c * 2 for c in h) if len(h) == 3 else h)

    css = re.sub(r"#(?:[0-9A-Fa-f]{6}|[0-9A-Fa-f]{3})\b", lambda m: legible(six(m)), css)
    (static / "pygments.css").write_text(css, encoding="utf-8")
    if not (MATHJAX / "tex-svg.js").is_file():
        raise SystemExit(f"MathJax is missing at {MATHJAX}: run `npm ci` (package-lock.json pins it)")
    for part in MATHJAX_PARTS:
        s, d = MATHJAX / part, static / "mathjax" / part
        d.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree(s, d) if s.is_dir() else shutil.copy2(s, d))
    if (NOTEBOOKS / "figures").is_dir():
        shutil.copytree(NOTEBOOKS / "figures", out / "figures")


def build(out: Path, jobs: int, only: list[str]) -> dict:
    from sdpa_helpers.widgets import all_explorers

    start = time.perf_counter()
    known = set(all_explorers())
    previous = out.parent / (out.name + ".previous-frames")  # kept if a build stopped half-way
    if (out / "frames").is_dir():
        if previous.exists():
            shutil.rmtree(previous)
        (out / "frames").rename(previous)
    if out.exists():
        shutil.rmtree(out)
    (out / "img").mkdir(parents=True)
    pages = [Page(p, load(p), out) for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]
    chosen = [p for p in pages if not only or any(p.stem.startswith(o) for o in only)]
    for p in pages:
        p.plan(known)
    copy_static(out)
    # A page must not show a stored static figure beside frames drawn by other code than the notebook's.
    code_digest.refuse_mixed_code(sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
    stats = render_frames(chosen, out, jobs, previous if previous.is_dir() else None)
    if previous.exists():
        shutil.rmtree(previous)
    for k, p in enumerate(pages):
        if p in chosen:
            (out / f"{p.stem}.html").write_text(p.html(pages, k), encoding="utf-8")
    (out / "index.html").write_text(index_html(pages), encoding="utf-8")
    first = next((e for p in pages if p.stem.startswith("00") for e in p.explorers), None)
    teaching.write_site(out, markdown(), explorer_html(first) if first and "meta" in first else "")
    (out / ".nojekyll").write_text("")
    manifest = {"seconds": round(time.perf_counter() - start, 1), "pages": {}}
    for p in chosen:
        manifest["pages"][p.stem] = {"title": p.title, "figures": p.figures,
                                     "exercises": {e["key"]: e["kind"] for e in p.exercises},
                                     "explorers": [dict(id=e["id"], cls=e["cls"].__name__, kwargs=e["kwargs"],
                                                        controls=e["meta"]["controls"], **stats[e["id"]])
                                                   for e in p.explorers]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--only", nargs="*", default=[], help="only notebooks whose names start with these")
    parser.add_argument("--repo", default="", help="owner/name for the Binder and source links (the Pages workflow "
                                                   "passes the repository it runs in); default: the placeholder")
    args = parser.parse_args(argv)
    global REPO
    if args.repo:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
            parser.error(f"--repo must look like owner/name, got {args.repo!r}")
        REPO = args.repo
    import matplotlib

    matplotlib.use("Agg")
    try:
        manifest = build(args.out, args.jobs, args.only)
    except (MissingAlt, MissingExplorer) as exc:
        print(f"make site: {exc}", file=sys.stderr)
        return 2
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    for stem, p in manifest["pages"].items():
        n = sum(e["frames"] for e in p["explorers"])
        print(f"{stem}: {len(p['explorers'])} explorers, {n} frames")
    print(f"site: {args.out} ({total / 1e6:.1f} MB) built in {manifest['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
