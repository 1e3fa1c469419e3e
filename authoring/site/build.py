"""Build the course as a static site (``make site``): one HTML page per committed notebook.

    python authoring/site/build.py [--out build/site] [--jobs 2] [--only 05]

Pages are the stored notebooks (no code runs here but the explorers' own drawing code):
markdown through mistune, code through Pygments, stored outputs as they are (figures as image
files with alt text), deep dives and solutions folded in ``<details>``. Each explorer cell's
stored widget output is replaced by a static explorer: native controls moving between frames
rendered now by the explorer's own code (see ``frames.py``). Everything a page loads is in the
site folder: MathJax from the npm package pinned in ``package-lock.json`` (``npm ci``), the
style sheet and script from ``authoring/site/static``. No page requests anything outside it.
"""

from __future__ import annotations

import argparse
import ast
import base64
import html
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

import frames as F  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
STATIC = HERE / "static"
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: The repository the links point to: the Pages workflow passes its own (``--repo``, from the repository it
#: runs in); a local build keeps the checked-in placeholder, the only one (tests/test_site.py checks it).
PLACEHOLDER = "OWNER/REPO"
REPO = os.environ.get("SITE_REPO") or PLACEHOLDER
#: Set to 1 only for a local build of sources whose figures do not all carry author alt text yet.
ALLOW_MISSING_ALT = os.environ.get("SITE_ALLOW_MISSING_ALT") == "1"
#: ``check("NN.name", ...)`` in a code cell: an exercise cell.
EXERCISE_CALL = re.compile(r"""\bcheck\(\s*["']([0-9]{2}\.\w+)["']""")
BINDER = "https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=lab/tree/notebooks/{name}"
GITHUB = "https://github.com/{repo}"
#: The MathJax pieces copied into the site: TeX extensions, menu and accessibility (speech: sre) load on demand.
MATHJAX_PARTS = ("tex-svg.js", "input/tex/extensions", "ui", "a11y", "sre")
#: Frames rendered per task (a task builds one explorer and renders its chunk).
CHUNK = 120


# -- reading a notebook ---------------------------------------------------------------------

def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def title_of(nb: dict, fallback: str) -> str:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            m = re.search(r"^#\s+(.+)$", src(cell), flags=re.M)
            if m:
                return m.group(1).strip()
    return fallback


def explorer_call(cell, known: dict):
    """(class, keyword arguments) of the explorer an explorer cell ends with.

    The cell ends with the explorer object: ``XExplorer(d_k=64)``, or a name bound in the same
    cell by ``name = XExplorer(...)``. Keyword values must be literals.
    """
    tree = ast.parse(src(cell))
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        raise ValueError(f"explorer cell does not end with an expression:\n{src(cell)}")
    call = last.value
    if isinstance(call, ast.Name):
        bound = [s.value for s in tree.body if isinstance(s, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == call.id for t in s.targets)]
        call = bound[-1] if bound else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in known):
        raise ValueError(f"cannot tell which explorer this cell shows:\n{src(cell)}")
    if call.args:
        raise ValueError(f"explorer built with positional arguments:\n{src(cell)}")
    kwargs = {}
    for k in call.keywords:
        try:
            kwargs[k.arg] = ast.literal_eval(k.value)
        except ValueError:  # a name or an expression: the explorer starts at its own default there
            print(f"  warning: {call.func.id}({k.arg}={ast.unparse(k.value)}) is not a literal; "
                  f"the static explorer starts at its default {k.arg}", file=sys.stderr)
    return known[call.func.id], kwargs


# -- markdown and code ---------------------------------------------------------------------

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
    first = (src(cell).strip().splitlines() or [""])[0][:80]
    where = f"{notebook}, cell {index} ({first!r})"
    if ALLOW_MISSING_ALT:
        print(f"  warning: no author alt text: {where}", file=sys.stderr)
        return f"MISSING ALT TEXT: {where}"
    raise MissingAlt(f"{where} draws a figure without author alt text: add alt=\"...\" to the cell's "
                     f"`# %%` line in authoring/notebooks/ (what the figure shows: numbers, trends) and rebuild")


# -- one page -------------------------------------------------------------------------------

class Page:
    def __init__(self, path: Path, nb: dict, index: int, out: Path, md, known: dict):
        self.path, self.nb, self.index, self.out, self.md, self.known = path, nb, index, out, md, known
        self.stem = path.stem
        self.number = self.stem[:2]
        self.title = title_of(nb, self.stem)
        self.explorers: list[dict] = []  # filled by plan(), frames rendered later
        self.figures = 0
        self.exercises: list[dict] = []  # page specs of the exercises, in page order

    def plan(self) -> None:
        """Find the explorer cells and their classes (before rendering anything)."""
        for i, cell in enumerate(self.nb["cells"]):
            if cell["cell_type"] == "code" and any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
                try:
                    cls, kwargs = explorer_call(cell, self.known)
                except (ValueError, SyntaxError) as exc:  # not one of the course's explorers: its stored picture
                    print(f"  warning: {self.stem}, cell {i}: {exc}; its stored output is shown", file=sys.stderr)
                    continue
                self.explorers.append({"cell": i, "cls": cls, "kwargs": kwargs,
                                       "id": f"{self.number}-{len(self.explorers) + 1}"})

    # -- cells
    def outputs(self, cell, index: int) -> str:
        parts = []
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "stream":
                cls = "stderr" if o.get("name") == "stderr" else "stdout"
                parts.append(f'<pre class="output {cls}">{html.escape(src({"source": o.get("text", "")}))}</pre>')
            elif kind == "error":
                text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(o.get("traceback", [])))
                parts.append(f'<pre class="output error">{html.escape(text)}</pre>')
            elif kind in ("execute_result", "display_data"):
                data = o.get("data", {})
                if "image/png" in data:
                    self.figures += 1
                    name = f"img/{self.number}-{self.figures}.png"
                    (self.out / name).write_bytes(base64.b64decode(data["image/png"]))
                    alt = figure_alt(cell, self.path.name, index)
                    parts.append(f'<img class="figure" src="{name}" alt="{html.escape(alt)}" loading="lazy">')
                elif "text/html" in data:
                    parts.append(f'<div class="output html">{src({"source": data["text/html"]})}</div>')
                elif "text/markdown" in data:
                    parts.append(f'<div class="output">{self.md(src({"source": data["text/markdown"]}))}</div>')
                elif "text/plain" in data:
                    parts.append(f'<pre class="output">{html.escape(src({"source": data["text/plain"]}))}</pre>')
        return "\n".join(parts)

    def code_cell(self, i: int, cell) -> str:
        explorer = next((e for e in self.explorers if e["cell"] == i), None)
        code = f'<pre class="code"><code>{highlight(src(cell))}</code></pre>'
        found = EXERCISE_CALL.search(src(cell))
        if found and not explorer:
            spec = exercise_spec(found.group(1))
            self.exercises.append(spec)
            if spec["kind"] != "function":
                return f'<div class="cell exercise-cell">{exercise_html(spec, self)}</div>'
            return f'<div class="cell code-cell">{code}\n{exercise_html(spec, self)}</div>'
        body = explorer_html(explorer) if explorer else self.outputs(cell, i)
        return f'<div class="cell code-cell">{code}\n{body}</div>'

    def body(self) -> str:
        chunks, dive = [], None
        self.exercises = []
        for i, cell in enumerate(self.nb["cells"]):
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] == "markdown":
                text = src(cell)
                piece = rewrite_links(self.md(text))
            elif cell["cell_type"] == "code":
                piece = self.code_cell(i, cell)
            else:
                continue
            if "deep-dive" in tags:
                if dive is None or (cell["cell_type"] == "markdown" and src(cell).lstrip().startswith("## Deep dive")):
                    if dive is not None:
                        chunks.append(close_dive(dive))
                    first = src(cell).strip().splitlines()[0] if cell["cell_type"] == "markdown" else "## Deep dive"
                    heading = first.lstrip("#").strip()
                    rest = "\n".join(src(cell).strip().splitlines()[1:]) if cell["cell_type"] == "markdown" else None
                    dive = {"summary": rewrite_links(self.md(heading)).strip()[3:-4],
                            "parts": [rewrite_links(self.md(rest)) if rest is not None else piece]}
                    continue
                dive["parts"].append(piece)
            else:
                if dive is not None:
                    chunks.append(close_dive(dive))
                    dive = None
                chunks.append(piece if cell["cell_type"] == "code" else f'<div class="cell md-cell">{piece}</div>')
        if dive is not None:
            chunks.append(close_dive(dive))
        return "\n".join(chunks)


# -- exercises ------------------------------------------------------------------------------

def exercise_spec(key: str) -> dict:
    """What the page needs to check exercise ``key`` (exported by the exercise bank itself)."""
    from sdpa_helpers.exercises import page_spec

    return page_spec(key)


def _entry_labels(spec: dict) -> list[str]:
    shape = spec["shape"]
    if spec.get("entry_names"):
        return list(spec["entry_names"])
    if len(shape) == 1:
        return [f"entry {i + 1} of {shape[0]}" for i in range(shape[0])]
    return [f"row {i + 1}, column {j + 1}" for i in range(shape[0]) for j in range(shape[1])]


def exercise_html(spec: dict, page: Page) -> str:
    """An exercise in the page: an answer box (boxes, choices) checked in the page by ``exercises.js``
    with the bank's own spec, or, for a function, where to write it."""
    key = html.escape(spec["key"])
    fid = "ex-" + spec["key"].replace(".", "-")
    call = f'<p class="in-notebook">In the notebook: <code>check("{key}", answer)</code>.</p>'
    if spec["kind"] == "function":
        binder = BINDER.format(repo=REPO, name=page.path.name)
        return (f'<aside class="exercise function" id="{fid}"><p><strong>Exercise {key} asks for a function:</strong> '
                f'write it in the notebook and check it there with <code>check("{key}", your_function)</code> — '
                f'<a href="{binder}">open this notebook on Binder</a>, or run <code>make lab</code> in a clone of '
                f'the repository. This page does not run code.</p></aside>')
    if spec["kind"] in ("number", "tuple"):
        labels = _entry_labels(spec) if spec["kind"] == "tuple" else ["your answer"]
        cls = "entries grid" if len(spec["shape"]) == 2 else "entries"
        style = f' style="--columns: {spec["shape"][1]}"' if len(spec["shape"]) == 2 else ""
        boxes = "".join(f'<span class="entry-box"><label for="{fid}-{i}">{html.escape(lab)}</label>'
                        f'<input class="entry" id="{fid}-{i}" type="text" inputmode="decimal" autocomplete="off" '
                        f'spellcheck="false" size="10"></span>' for i, lab in enumerate(labels))
        field = f'<div class="{cls}"{style}>{boxes}</div>'
    elif spec["kind"] == "choice":
        field = "".join(f'<label class="option"><input type="radio" name="{fid}" value="{html.escape(k)}"> '
                        f'({html.escape(k)})</label>' for k in spec["options"])
    else:  # choices: one list per slot
        field = "".join(f'<span class="entry-box"><label for="{fid}-{i}">{html.escape(lab)}</label>'
                        f'<select class="slot" id="{fid}-{i}"><option value="">choose…</option>'
                        + "".join(f'<option value="{html.escape(w)}">{html.escape(w)}</option>' for w in slot)
                        + "</select></span>" for i, (lab, slot) in enumerate(zip(spec["labels"], spec["slots"])))
    data = json.dumps(spec, ensure_ascii=False).replace("</", "<\\/")
    return (f'<form class="exercise" id="{fid}" data-exercise="{key}" novalidate>'
            f'<script type="application/json" class="exercise-spec">{data}</script>'
            f'<fieldset><legend>Your answer to exercise {key} '
            f'<span class="done" hidden>(answered right in this browser)</span></legend>{field}'
            f'<button type="submit">Check</button></fieldset>'
            f'<div class="verdict" role="status" aria-live="polite"></div>{call}</form>')


def close_dive(dive: dict) -> str:
    return ('<details class="deep-dive"><summary>' + dive["summary"] + "</summary>\n"
            + "\n".join(dive["parts"]) + "\n</details>")


# -- explorers ------------------------------------------------------------------------------

def explorer_html(e: dict) -> str:
    """The static explorer: native controls, the starting frame, its readout, what it is.

    The controls start disabled; explorer.js enables them once it has the explorer's frame table,
    so a page without its script (a half-copied site, scripts off) never shows a control moved
    away from the picture it shows."""
    meta = e["meta"]
    controls = []
    for k, c in enumerate(meta["controls"]):
        cid = f"ex{e['id']}-{c['name']}"
        label = html.escape(c["label"])
        if c["kind"] == "range":
            controls.append(
                f'<div class="control"><label for="{cid}">{label}</label>'
                f'<input type="range" id="{cid}" data-control="{k}" min="0" max="{len(c["labels"]) - 1}" step="1" '
                f'value="{c["initial"]}" aria-valuetext="{html.escape(c["labels"][c["initial"]])}" disabled>'
                f'<output for="{cid}">{html.escape(c["labels"][c["initial"]])}</output></div>')
        elif c["kind"] == "select":
            options = "".join(f'<option value="{j}"{" selected" if j == c["initial"] else ""}>{html.escape(t)}</option>'
                              for j, t in enumerate(c["labels"]))
            controls.append(f'<div class="control"><label for="{cid}">{label}</label>'
                            f'<select id="{cid}" data-control="{k}" disabled>{options}</select></div>')
        else:
            checked = " checked disabled" if c["initial"] else " disabled"
            controls.append(f'<div class="control"><input type="checkbox" id="{cid}" data-control="{k}"{checked}>'
                            f'<label for="{cid}">{label}</label></div>')
    notes = [c["note"] for c in meta["controls"] if c["note"]]
    initial = [c["initial"] for c in meta["controls"]]
    frame = meta["first"]
    values = {c["name"]: c["values"][i] for c, i in zip(meta["controls"], initial)}
    data_values = " ".join(f'data-value-{html.escape(c["name"].lower())}="{html.escape(F.js_str(c["values"][i]))}"'
                           for c, i in zip(meta["controls"], initial))
    note = ("Frames drawn in advance by the explorer's own code: moving a control shows the frame for that "
            "value; no code runs on this page.") + (" " + "; ".join(notes) + "." if notes else "")
    img = (f'<img src="{meta["base"]}{frame}" width="{meta["width"]}" height="{meta["height"]}" '
           f'alt="{html.escape(meta["alts"][0])}" data-frame="{frame}" '
           f"data-values='{html.escape(json.dumps(values))}' {data_values}>")
    name = e["cls"].__name__
    return f"""<figure class="explorer" id="explorer-{e['id']}" data-explorer="{e['id']}" data-class="{name}">
<div class="controls" role="group" aria-label="{html.escape(meta['title'])} controls">{''.join(controls)}</div>
<div class="frame">{img}</div>
<div class="readout" aria-live="polite">{meta['first_readout']}</div>
<figcaption>{html.escape(note)}</figcaption>
<script src="{meta['script']}"></script>
</figure>"""


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


def frames_key(e: dict) -> str:
    """What an explorer's frames depend on: the package's code and data, frames.py, class and arguments.

    The exercise bank is left out: no explorer imports it (tests/test_site_access.py checks that), so a
    change to an exercise rebuilds the pages in seconds, not the frames."""
    package = ROOT / "sdpa_helpers"
    inputs = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
              and "exercises" not in p.relative_to(package).parts[:1]] + [HERE / "frames.py"]
    return F.source_digest(inputs) + "-" + e["cls"].__name__ + "-" + json.dumps(e["kwargs"], sort_keys=True)


def reuse(e: dict, previous: Path | None) -> F.Rendered | None:
    """The frames of the previous build when their key matches (a page-only change rebuilds in seconds)."""
    if previous is None or not (previous / f"{e['id']}.key").is_file():
        return None
    if (previous / f"{e['id']}.key").read_text(encoding="utf-8") != e["key"]:
        return None
    script = (previous / f"{e['id']}.js").read_text(encoding="utf-8").splitlines()[1]
    table = json.loads(script.split(" = ", 1)[1].rstrip().rstrip(";"))
    r = F.Rendered(sizes=(table["width"], table["height"]))
    for combo, k in zip(e["combos"], table["readout_of"]):
        name = F.frame_name(combo)
        r.files[name] = (previous / e["id"] / name).read_bytes()
        r.readouts[tuple(combo)] = table["readouts"][k]
    return r


def render_frames(pages: list[Page], out: Path, jobs: int, previous: Path | None = None) -> dict:
    """Render every explorer's frames (in ``jobs`` processes); write them and each explorer's script."""
    tasks = []
    results: dict = {}
    for page in pages:
        for e in page.explorers:
            plan_frames(e)
            e["key"] = frames_key(e)
            again = reuse(e, previous)
            if again is not None:
                results[e["id"]] = [again]
                print(f"  frames: {e['id']} {e['cls'].__name__} reused from the previous build", flush=True)
                continue
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
    stats = {}
    for page in pages:
        for e in page.explorers:
            stats[e["id"]] = write_explorer(e, results[e["id"]], out)
    return stats


def write_explorer(e: dict, chunks: list, out: Path) -> dict:
    folder = out / "frames" / e["id"]
    folder.mkdir(parents=True, exist_ok=True)
    readouts: dict = {}
    size = 0
    width = height = 0
    for r in chunks:
        for name, data in r.files.items():
            (folder / name).write_bytes(data)
            size += len(data)
        readouts.update(r.readouts)
        width, height = r.sizes
    controls = [c.as_json() for c in e["controls"]]
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
    initial = tuple(c.initial for c in e["controls"])
    first_values = ", ".join(f"{c.label} = {c.labels[i]}" for c, i in zip(e["controls"], initial))
    meta = {"id": e["id"], "cls": e["cls"].__name__, "title": title, "controls": controls,
            "readouts": unique, "readout_of": per_frame, "width": width, "height": height,
            "base": f"frames/{e['id']}/", "ext": F.FORMAT}
    script = f"frames/{e['id']}.js"
    (out / "frames" / f"{e['id']}.key").write_text(e["key"], encoding="utf-8")
    table = json.dumps(meta, separators=(",", ":"))
    (out / script).write_text("window.SDPA_EXPLORERS = window.SDPA_EXPLORERS || {};\n"
                              f"window.SDPA_EXPLORERS[{json.dumps(e['id'])}] = {table};\n", encoding="utf-8")
    flat = e["combos"].index(initial)
    first_readout = unique[per_frame[flat]]
    e["meta"] = dict(meta, first=F.frame_name(initial), first_readout=first_readout, script=script,
                     alts=[f"{title} At {first_values}. {F.strip_tags(first_readout)}"])
    return {"frames": len(e["combos"]), "bytes": size + (out / script).stat().st_size, "width": width,
            "height": height}


# -- the site -------------------------------------------------------------------------------

def banner(page: Page) -> str:
    binder = BINDER.format(repo=REPO, name=page.path.name)
    clone = GITHUB.format(repo=REPO)
    return f"""<aside class="run-note" role="note">
<p><strong>The code does not run here:</strong> the outputs are those stored in the notebook, the
explorers move between frames drawn in advance, and the exercises with a number or a choice for an
answer are checked in this page (the same verdicts as <code>check()</code>; your progress stays in this
browser). To run the code and write the functions: <a href="{binder}">open this notebook on Binder</a>,
or on your machine <code>git clone {clone}</code> then <code>make lab</code> in that folder.{placeholder_note()}</p>
</aside>"""


def placeholder_note() -> str:
    return (f" <small>(<code>{PLACEHOLDER}</code> is a placeholder: the Pages workflow fills in the repository's "
            f"own name.)</small>" if REPO == PLACEHOLDER else "")


def nav(pages: list[Page], k: int, where: str = "top") -> str:
    prev = (f'<a rel="prev" href="{pages[k - 1].stem}.html">← {html.escape(pages[k - 1].title)}</a>'
            if k > 0 else "<span></span>")
    nxt = (f'<a rel="next" href="{pages[k + 1].stem}.html">{html.escape(pages[k + 1].title)} →</a>'
           if k + 1 < len(pages) else "<span></span>")
    label = "previous and next" if where == "top" else "previous and next, end of page"
    return f'<nav class="pager" aria-label="{label}">{prev}<a href="index.html">Contents</a>{nxt}</nav>'


HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="_static/site.css">
<link rel="stylesheet" href="_static/pygments.css">
<script src="_static/explorer.js"></script>
<script src="_static/exercises.js"></script>
</head>
<body>
"""


def page_html(pages: list[Page], k: int) -> str:
    page = pages[k]
    toc = "".join(f'<li{" aria-current=page" if j == k else ""}><a href="{p.stem}.html">{html.escape(p.title)}</a></li>'
                  for j, p in enumerate(pages))
    return (HEAD.format(title=html.escape(page.title) + " — Why √d_k?")
            + f'<header class="site"><a class="home" href="index.html">Why √d_k?</a>{nav(pages, k)}</header>\n'
            + '<div class="layout"><nav class="toc" aria-label="contents"><details><summary>Contents</summary>'
            + f"<ol start=\"0\">{toc}</ol></details></nav>\n<main>\n{banner(page)}\n{page.body()}\n</main></div>\n"
            + f'<footer>{nav(pages, k, "end")}</footer>\n</body>\n</html>\n')


def index_html(pages: list[Page], stats: dict) -> str:
    def count(p):
        n = len(p.explorers)
        return f" — {n} explorer{'s' if n > 1 else ''}" if n else ""

    def keys(p):
        return " ".join(e["key"] for e in p.exercises if e["kind"] != "function")

    items = "".join(f'<li data-exercises="{keys(p)}"><a href="{p.stem}.html">{html.escape(p.title)}</a>{count(p)}'
                    f'<span class="progress"></span></li>' for p in pages)
    return (HEAD.format(title="Why √d_k? — the course")
            + '<header class="site"><a class="home" href="index.html">Why √d_k?</a></header>\n'
            + '<div class="layout"><main>\n'
            + "<h1>Why does scaled dot-product attention divide by √d<sub>k</sub>?</h1>\n"
            + "<p>The course's ten notebooks, to read in order. The explorers work in these pages with no server, "
            + "and so do the exercises whose answer is a number or a choice: which ones you answered right is kept "
            + "in this browser only (its local storage), never sent anywhere. To run the code and write the "
            + f'functions, open the notebooks on <a href="{BINDER.format(repo=REPO, name="00_start_here.ipynb")}">'
            + f"Binder</a> or run <code>git clone {GITHUB.format(repo=REPO)}</code> and <code>make lab</code>."
            + f"{placeholder_note()}</p>\n"
            + f'<ol start="0" class="contents">{items}</ol>\n</main></div>\n</body>\n</html>\n')


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
    known = {c.__name__: c for c in all_explorers()}
    previous = out.parent / (out.name + ".previous-frames")  # kept if a build stopped half-way
    if (out / "frames").is_dir():
        if previous.exists():
            shutil.rmtree(previous)
        (out / "frames").rename(previous)
    if out.exists():
        shutil.rmtree(out)
    (out / "img").mkdir(parents=True)
    md = markdown()
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    pages = [Page(p, load(p), k, out, md, known) for k, p in enumerate(paths)]
    chosen = [p for p in pages if not only or any(p.stem.startswith(o) for o in only)]
    for p in chosen:
        p.plan()
    copy_static(out)
    stats = render_frames(chosen, out, jobs, previous if previous.is_dir() else None)
    if previous.exists():
        shutil.rmtree(previous)
    for k, p in enumerate(pages):
        if p in chosen:
            (out / f"{p.stem}.html").write_text(page_html(pages, k), encoding="utf-8")
        else:
            p.body()  # its exercises, for the contents page
    (out / "index.html").write_text(index_html(pages, stats), encoding="utf-8")
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
    except MissingAlt as exc:
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
