"""Frames of an explorer for the static site: every combination of its controls' values,
rendered at build time by the explorer's own code (public ``controls`` + ``update()``).

A frame is what the live explorer shows at those values: the PNG its ``image`` holds and the
HTML of its ``readout``. Seed controls (a slider over 0..99 that only redraws random samples)
keep the notebook's prefetch grid of them (``sdpa_helpers.widgets.SEED_DRAWS`` draws, "another
draw"). Each frame is stored as a palette image (:data:`COLOURS` colours, lossless WebP) named
by the indices of its values, ``<i0>-<i1>-....webp``; the page's script computes that name from
the controls, so the frame for a value is found without any table.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import re
from dataclasses import dataclass, field

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


def page_controls(explorer) -> list[Control]:
    """The controls of a live explorer as the static page offers them: the notebook front end's own
    control specs (``sdpa_helpers.widgets``), a seed cut to its prefetch grid (a few draws)."""
    out = []
    for spec, c in zip(explorer._specs, explorer.controls.values()):
        values, labels, label, note = list(spec["_py"]), list(spec["labels"]), spec["label"], ""
        lo, hi = spec["grid"]
        if _is_seed(spec["name"], c) and hi - lo < len(values):
            note = f"{hi - lo} precomputed draws here (the live explorer offers {len(values)})"
            values, labels, label = values[lo:hi], labels[lo:hi], f"{label} (another draw)"
        out.append(Control(spec["name"], label, spec["kind"], values, labels, _index(values, c.value), note))
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
