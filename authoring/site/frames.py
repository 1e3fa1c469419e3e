"""Frames of an explorer for the static site: every combination of its controls' values,
rendered at build time by the explorer's own code (public ``controls`` + ``update()``).

A frame is what the live explorer shows at those values: the PNG its ``image`` holds and the
HTML of its ``readout``. Seed controls (a slider over 0..99 that only redraws random samples)
keep their first :data:`SEED_DRAWS` values ("another draw"). Each frame is stored as a
palette image (:data:`COLOURS` colours, lossless WebP) named by the indices of its values,
``<i0>-<i1>-....webp``; the page's script computes that name from the controls, so the frame
for a value is found without any table.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import re
from dataclasses import dataclass, field

import ipywidgets as W

#: Draws kept of a control that only reseeds the random samples (issue 22: at most 5).
SEED_DRAWS = 5
#: Colours of a frame's palette (a frame is a line plot: 128 colours lose nothing visible).
COLOURS = 128
#: Lossless WebP effort (0 fast … 6 small): 1 is 3x faster than 4 for 2% more bytes.
WEBP_METHOD = 1
FORMAT = "webp"


@dataclass
class Control:
    """One control as the page shows it: its name, label, kind and the values it offers."""

    name: str
    label: str
    kind: str  # "range" (a slider), "select" (a dropdown) or "checkbox"
    values: list  # Python values, in the control's order
    labels: list[str]  # what the page shows for each value
    initial: int  # index of the explorer's starting value
    note: str = ""  # said beside the control (e.g. "5 precomputed draws of 100")

    def as_json(self) -> dict:
        return {"name": self.name, "label": self.label, "kind": self.kind, "labels": self.labels,
                "values": [v if isinstance(v, (int, float, str, bool)) else str(v) for v in self.values],
                "initial": self.initial, "note": self.note}


def _is_seed(name: str, control) -> bool:
    return name == "seed" or (control.description or "").strip().lower() == "seed"


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def page_controls(explorer) -> list[Control]:
    """The controls of a live explorer as the static page offers them (seed: a few draws)."""
    out = []
    for name, c in explorer.controls.items():
        label = (c.description or name).strip()
        if isinstance(c, W.Checkbox | W.ToggleButton):
            values, labels, kind = [False, True], ["off", "on"], "checkbox"
        elif getattr(c, "options", None):
            opts = list(c.options)
            labels = [str(o[0]) if isinstance(o, tuple) else _fmt(o) for o in opts]
            values = [o[1] if isinstance(o, tuple) else o for o in opts]
            kind = "select" if isinstance(c, W.Dropdown | W.Select | W.RadioButtons | W.ToggleButtons) else "range"
        elif isinstance(c, W.IntSlider | W.FloatSlider):
            step = c.step or 1
            n = int(round((c.max - c.min) / step)) + 1
            values = [c.min + i * step for i in range(n)]
            if isinstance(c, W.FloatSlider):
                values = [round(v, 10) for v in values]
            labels, kind = [_fmt(v) for v in values], "range"
        else:
            raise TypeError(f"the static site cannot offer control {name!r} of type {type(c).__name__}")
        note = ""
        if _is_seed(name, c) and len(values) > SEED_DRAWS:
            note = f"{SEED_DRAWS} precomputed draws here (the live explorer offers {len(values)})"
            start = values.index(c.value) if c.value in values else 0
            values = values[start:start + SEED_DRAWS]
            labels = labels[start:start + SEED_DRAWS]
            label = f"{label} (another draw)"
        initial = _index(values, c.value)
        out.append(Control(name, label, kind, values, labels, initial, note))
    return out


def js_str(value) -> str:
    """A value as JavaScript's ``String(value)`` writes it (the frames' ``data-value-*`` attributes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _index(values: list, value) -> int:
    for i, v in enumerate(values):
        if v == value or (isinstance(v, float) and isinstance(value, float) and abs(v - value) < 1e-9):
            return i
    raise ValueError(f"value {value!r} is not among {values!r}")


def set_values(explorer, values: dict) -> None:
    """Set every control to ``values`` at once, then redraw (one ``update()``, as a move does)."""
    with explorer.paused():
        for name, value in values.items():
            explorer.controls[name].value = value
    explorer.update()


def quantize(png: bytes, colours: int = COLOURS):
    """The frame as a palette image (fast octree, no dithering: flat colours stay flat).

    Median cut is a little closer (mean error 0.1 vs 1.1 levels of 255) but 9x slower.
    """
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.quantize(colors=colours, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)


def encode(image) -> bytes:
    buf = io.BytesIO()
    if FORMAT == "webp":
        image.save(buf, format="WEBP", lossless=True, method=WEBP_METHOD, quality=50)
    else:
        image.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def strip_tags(text: str) -> str:
    text = re.sub(r"<(br|/tr|/p|/table)\s*/?>", ". ", text, flags=re.I)
    text = re.sub(r"</t[dh]>", " ", text, flags=re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class Rendered:
    """What a chunk of frames produced: file name -> bytes, readout per flat index."""

    files: dict = field(default_factory=dict)
    readouts: dict = field(default_factory=dict)
    sizes: tuple = ()


def combos(controls: list[Control]):
    """Every combination of indices, last control fastest (the order file names follow)."""
    return list(itertools.product(*[range(len(c.values)) for c in controls]))


def frame_name(indices) -> str:
    return "-".join(str(i) for i in indices) + "." + FORMAT


def render_chunk(cls, kwargs: dict, chunk: list) -> Rendered:
    """Render the frames of ``chunk`` (index tuples) with one fresh explorer of class ``cls``."""
    explorer = cls(**kwargs)
    try:
        controls = page_controls(explorer)
        out = Rendered()
        for indices in chunk:
            values = {c.name: c.values[i] for c, i in zip(controls, indices)}
            set_values(explorer, values)
            image = quantize(explorer.image.value)
            out.files[frame_name(indices)] = encode(image)
            out.readouts[tuple(indices)] = explorer.readout.value or ""
            out.sizes = image.size
        return out
    finally:
        explorer.close()


def source_digest(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
