"""Interactive explorers: controls that update one figure in place.

:class:`Explorer` is the base (one figure for its life, drawn by the course's panels into PNG frames;
controls call back through a weak reference; re-running a cell closes its old explorers; the displayed
explorer carries a static PNG for readers who have not run it). What the notebook displays is
:class:`ExplorerView`, an anywidget whose front end is ``explorer.js`` -- the same file the static site
uses (docs/explorers.md): it draws the controls, keeps the frames it has in the browser and asks the
kernel for the others. :func:`d_k_slider`, :func:`seed_slider` are the shared controls;
:func:`all_explorers` lists the explorer classes.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import importlib
import io
import json
import math
import numbers
import pkgutil
import time
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path

import anywidget
import ipywidgets as W
import numpy as np
import traitlets as T

from .. import _checks, plots
from .._numerics import controlled_errstate
from ..scales import D_K_CHOICES

__all__ = ["Explorer", "ExplorerView", "D_K_CHOICES", "d_k_slider", "seed_slider", "all_explorers"]


def d_k_slider(value: int = 64, description: str = "d_k", choices=D_K_CHOICES) -> W.SelectionSlider:
    """A slider over the course's d_k grid (powers of two, a log scale).

    >>> s = d_k_slider(16)
    >>> s.value, s.options[0], s.options[-1], s.description
    (16, 1, 4096, 'd_k')
    """
    if value not in choices:
        raise ValueError(f"value must be one of the slider's choices {tuple(choices)}, got {value!r}")
    return W.SelectionSlider(options=list(choices), value=value, description=description,
                             continuous_update=True, style={"description_width": "initial"},
                             layout=W.Layout(width="420px"))


def seed_slider(value: int = 0, description: str = "seed") -> W.IntSlider:
    """A slider picking the random seed (0 ... 99)."""
    return W.IntSlider(value=value, min=0, max=99, description=description,
                       continuous_update=True, style={"description_width": "initial"})


def _options(control) -> list:
    return [o[1] if isinstance(o, tuple) else o for o in control.options]


def _is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_))


def _check_control_value(name: str, control, value):
    """``value`` if ``control`` can take it, else a TypeError/ValueError naming ``name`` and what it allows.

    A selection takes one of its options, of their type (``True`` is not the d_k 1); a numeric
    slider a finite number in its range; a checkbox True or False.

    >>> _check_control_value("d_k", d_k_slider(), 3)
    Traceback (most recent call last):
    ...
    ValueError: d_k must be one of 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096; got 3
    """
    if name == "seed":  # every explorer's seed: an int, never 1.5 silently read as 1 (issue 37)
        _checks.seed(name, value)
    if getattr(control, "options", None) is not None and not isinstance(control, W.SelectMultiple):
        allowed = _options(control)
        shown = ", ".join(map(repr, allowed))
        real = all(isinstance(a, numbers.Real) and not _is_bool(a) for a in allowed)
        if real and (_is_bool(value) or not isinstance(value, numbers.Real)):
            raise TypeError(f"{name} must be one of {shown}; got {value!r} ({type(value).__name__})")
        if value is None or not any(value == a and _is_bool(value) == _is_bool(a) for a in allowed):
            raise ValueError(f"{name} must be one of {shown}; got {value!r}")
    elif isinstance(control, (W.Checkbox, W.ToggleButton)):
        if not _is_bool(value):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    elif getattr(control, "min", None) is not None and getattr(control, "max", None) is not None:
        low, high = control.min, control.max
        if _is_bool(value) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
        if not math.isfinite(value) or not low <= value <= high:
            raise ValueError(f"{name} must be a finite number from {low:g} to {high:g}, got {value!r}")
        if isinstance(control, (W.IntSlider, W.BoundedIntText)) and not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be a whole number from {low:g} to {high:g}, got {value!r}")
    return value


#: The explorers' front end, shared with the static site (which copies this very file).
FRONT_END = Path(__file__).with_name("explorer.js")
#: What makes the site's classic script an ES module for anywidget: one line, appended.
ESM_EXPORT = "\nexport default { render: globalThis.SDPA_EXPLORER.render };\n"
#: Draws kept of a seed control in the prefetch grid (the site keeps as many).
SEED_DRAWS = 5


def _front_end_module() -> str:
    """``explorer.js`` as the widget loads it: the site's file, then :data:`ESM_EXPORT`."""
    return FRONT_END.read_text(encoding="utf-8") + ESM_EXPORT


class ExplorerView(anywidget.AnyWidget):
    """What a notebook displays for an explorer: ``explorer.js`` in the browser, frames from the kernel.

    ``spec`` describes the controls (labels, values, starting indices, the prefetch grid), ``state``
    the indices the kernel last set, ``key``/``png``/``readout`` the last frame the kernel drew unasked
    (the first one, or after a control was set from code). The browser asks for other frames with
    custom messages (``want``: a frame; ``move``: the learner moved a control) and the kernel answers
    each ``want`` with a ``frame`` (its readout; the PNG as a binary buffer) or ``failed``.
    """

    _esm = _front_end_module()
    spec = T.Dict().tag(sync=True)
    state: T.List = T.List().tag(sync=True)
    key = T.Unicode("").tag(sync=True)
    png = T.Bytes(b"").tag(sync=True)
    readout = T.Unicode("").tag(sync=True)


class _Shown:
    """The explorer's current frame, drawn on demand (``explorer.image.value``: PNG bytes;
    ``explorer.readout.value``: the readout's HTML). Holds its explorer weakly."""

    __slots__ = ("ref", "part", "__weakref__")

    def __init__(self, explorer, part: int):
        self.ref, self.part = weakref.ref(explorer), part

    @property
    def value(self):
        explorer = self.ref()
        return explorer._current()[self.part] if explorer is not None else (b"", "")[self.part]


def _control_spec(name: str, c) -> dict:
    """One control as the front end draws it: kind, values and their labels, start, prefetch grid."""
    label = (c.description or name).strip()
    values: list
    if isinstance(c, W.Checkbox | W.ToggleButton):
        values, labels, kind = [False, True], ["off", "on"], "checkbox"
    elif getattr(c, "options", None):
        opts = list(c.options)
        labels = [str(o[0]) if isinstance(o, tuple) else (f"{o:g}" if isinstance(o, float) else str(o)) for o in opts]
        values = [o[1] if isinstance(o, tuple) else o for o in opts]
        kind = "select" if isinstance(c, W.Dropdown | W.Select | W.RadioButtons | W.ToggleButtons) else "range"
    elif isinstance(c, W.IntSlider | W.FloatSlider):
        step = c.step or 1
        n = int(round((c.max - c.min) / step)) + 1
        values = [c.min + i * step for i in range(n)]
        if isinstance(c, W.FloatSlider):
            values = [round(v, 10) for v in values]
        labels, kind = [f"{v:g}" if isinstance(v, float) else str(v) for v in values], "range"
    else:
        raise TypeError(f"an explorer cannot offer control {name!r} of type {type(c).__name__}")
    initial = _nearest(values, c.value)
    grid: list[int] = [0, len(values)]
    if (name == "seed" or label.lower() == "seed") and len(values) > SEED_DRAWS:
        grid = [initial, min(len(values), initial + SEED_DRAWS)]
    json_values = [v if isinstance(v, (bool, int, float, str)) else str(v) for v in values]
    return {"name": name, "label": label, "kind": kind, "values": json_values, "labels": labels,
            "initial": initial, "grid": grid, "_py": values}


def _nearest(values: list, value) -> int:
    for i, v in enumerate(values):
        if v == value and _is_bool(v) == _is_bool(value):
            return i
    if isinstance(value, numbers.Real) and not _is_bool(value):
        numeric = [(abs(v - value), i) for i, v in enumerate(values) if isinstance(v, numbers.Real)]
        if numeric:
            return min(numeric)[1]
    return 0


class Explorer:
    """Base class: controls + one figure, drawn into PNG frames shown by :class:`ExplorerView`.

    Subclasses set :attr:`figsize` and define ``_controls()`` (name -> control, each with a
    description), ``_setup(fig)`` (Axes and artists, once) and ``_update(**values) -> str`` (set the
    artists' data; return the readout's HTML). Frames are blitted: ``animated=True`` artists are
    drawn over a cached background; if the background depends on the controls, define
    ``_background_key(**values)`` (one background per key). :attr:`main` names the control that
    benchmarks and browser tests sweep.

    A drawing that raises -- KeyboardInterrupt included -- changes nothing a learner sees: the
    controls go back to their values, the shown frame stays, and the figure (whose panels may be
    half-updated) is rebuilt as it was built before the next frame is drawn.
    """

    figsize = (9.0, 3.6)
    dpi = 80
    main = "d_k"
    # Defined by subclasses with their controls' names as keywords, e.g. ``def _update(self, d_k, seed)``.
    _update: Callable[..., str]
    _background_key: Callable[..., Hashable] = lambda self, **values: None  # noqa: E731

    def __init__(self, **values):
        # Under numpy's default error handling (a learner's np.seterr(all="raise") must not break a
        # harmless underflow); a failed construction closes every widget it built.
        self.controls: dict = {}
        self._closed = False
        try:
            with controlled_errstate():
                self._build(values)
        except BaseException:
            parts = [getattr(self, "widget", None)]
            _release(list(self.controls.values()), getattr(self, "_observer", None), [p for p in parts if p], {})
            if getattr(self, "fig", None) is not None:
                self.fig.clear()
            self._closed = True
            raise

    def _build(self, values: dict) -> None:
        self.controls = self._controls()
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this explorer has {sorted(self.controls)}")
            self.controls[name].value = _check_control_value(name, self.controls[name], value)
        self.fig, _ = plots.new_figure(figsize=self.figsize, dpi=self.dpi)
        self.fig.clear()
        self._layout = self.fig.get_layout_engine()
        with plots.style():
            self._setup(self.fig)
        self._first_values = dict(self.values)
        self._drawn: dict | None = None  # the values the figure shows (None: none yet, or broken)
        self._broken = False
        self._frame: tuple = (b"", "")
        self.image = _Shown(self, 0)
        self.readout = _Shown(self, 1)
        self.renders = 0
        self._backgrounds: dict = {}
        self.last_update_seconds = 0.0
        self._observer = _WeakObserver(self)
        png, html = self._draw(self._first_values)
        self.fig.set_layout_engine("none")  # frozen after the first draw: later frames only move data
        self._specs = [_control_spec(n, c) for n, c in self.controls.items()]
        for control in self.controls.values():
            control.observe(self._observer, names="value")
        width, height = (round(x * self.dpi) for x in self.figsize)
        spec = {"cls": type(self).__name__, "title": _title(type(self)), "width": width, "height": height,
                "controls": [{k: v for k, v in s.items() if k != "_py"} for s in self._specs], "ext": ""}
        key, indices = self._key(self.values)
        self.widget = ExplorerView(spec=spec, state=indices, key=key, png=png, readout=html)
        self.widget.on_msg(_WeakHandler(self))
        # Runs on close() or when the explorer is collected; holds no reference to the explorer.
        self._finalizer = weakref.finalize(self, _release, list(self.controls.values()), self._observer,
                                           [self.widget], self._backgrounds)

    def _controls(self) -> dict:
        raise NotImplementedError

    def _setup(self, fig) -> None:
        raise NotImplementedError

    @property
    def values(self) -> dict:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    @contextlib.contextmanager
    def paused(self):
        """Inside this block, setting a control's value does not redraw (for precomputing)."""
        self._refuse_if_closed()
        for control in self.controls.values():
            control.unobserve(self._observer, names="value")
        try:
            yield self
        finally:
            for control in self.controls.values():
                control.observe(self._observer, names="value")

    def _set_quietly(self, values: dict) -> None:
        with self.paused():
            for name, value in values.items():
                if self.controls[name].value != value:
                    self.controls[name].value = value

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise ValueError(f"this {type(self).__name__} is closed; build a new one")

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop observing, close every widget, release the figure (idempotent; then update() does nothing)."""
        if self._closed:
            return
        self._closed = True
        self._finalizer()
        self._frame = (b"", "")
        fig, self.fig = self.fig, None
        fig.clear()
        if hasattr(fig.canvas, "renderer"):
            del fig.canvas.renderer  # the Agg pixel buffer
        _forget(self)

    # -- drawing ----------------------------------------------------------------------------

    def _draw(self, values: dict) -> tuple[bytes, str]:
        """(PNG, readout HTML) of the frame at ``values``; the figure is left showing them.

        Interrupt-safe: until the frame is complete the figure counts as broken, and a broken figure
        is rebuilt (:meth:`_rebuild`) before anything is drawn on it again."""
        self._refuse_if_closed()
        if self._broken:
            self._rebuild()
        self._broken = True
        self._drawn = None
        start = time.perf_counter()
        with plots.style(), controlled_errstate():
            html = self._update(**values) or ""
            png = self.render(values)
        self._drawn, self._frame = dict(values), (png, html)
        self._broken = False
        self.renders += 1
        self.last_update_seconds = time.perf_counter() - start
        return png, html

    def _rebuild(self) -> None:
        """The figure made again as :meth:`_build` made it: setup, a laid-out first draw at the first
        values, layout frozen (so later frames are those of an explorer that was never interrupted)."""
        self._backgrounds.clear()
        self._animated_shape: tuple | None = None
        self.fig.clear()
        self.fig.set_layout_engine(self._layout)
        with plots.style(), controlled_errstate():
            self._setup(self.fig)
            self._update(**self._first_values)
            self.fig.canvas.draw()
        self.fig.set_layout_engine("none")
        self._backgrounds.clear()
        self._broken = False

    def _current(self) -> tuple[bytes, str]:
        """The frame at the controls' values (drawn now if the figure shows other values)."""
        if self._closed:
            return self._frame
        values = self.values
        if self._drawn != values:
            self._draw(values)
        return self._frame

    def update(self) -> None:
        """Redraw the figure for the current control values and send the frame to the browser."""
        if self._closed:
            return
        values = self.values
        png, html = self._draw(values)
        key, indices = self._key(values)
        view = self.widget
        old = (view.png, view.readout, list(view.state), view.key)
        try:
            with view.hold_sync():
                view.png, view.readout, view.state, view.key = png, html, indices, key
        except BaseException:  # an interrupt while the frame is sent: the browser keeps the old one
            self._drawn = None  # and the next look at the frame draws it again
            with contextlib.suppress(Exception), view.hold_sync():
                view.png, view.readout, view.state, view.key = old
            raise

    def _key(self, values: dict) -> tuple[str, list[int]]:
        """The frame's name in the browser (the indices of the values, "-"-joined) and the indices."""
        indices, exact = [], True
        for s in self._specs if hasattr(self, "_specs") else [_control_spec(n, c) for n, c in self.controls.items()]:
            i = _nearest(s["_py"], values[s["name"]])
            exact = exact and s["_py"][i] == values[s["name"]]
            indices.append(i)
        key = "-".join(map(str, indices))
        return (key if exact else f"{key}~{json.dumps(values, default=str, sort_keys=True)}"), indices

    def _values_at(self, indices) -> dict:
        if not isinstance(indices, list) or len(indices) != len(self._specs) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(s["_py"])
                for i, s in zip(indices, self._specs)):
            raise ValueError(f"indices must be one index per control within its values, got {indices!r}")
        return {s["name"]: s["_py"][i] for s, i in zip(self._specs, indices)}

    def _answer(self, content: dict) -> None:
        """A message from the browser: ``move`` (the learner's new setting) or ``want`` (a frame)."""
        if self._closed or not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "move":
            self._set_quietly(self._values_at(content.get("indices")))
        elif kind == "want":
            key = str(content.get("key", ""))
            try:
                png, html = self._draw(self._values_at(content.get("indices")))
            except BaseException as exc:  # KeyboardInterrupt too: the browser must not wait for good
                with contextlib.suppress(Exception):
                    self.widget.send({"type": "failed", "key": key, "error": type(exc).__name__})
                raise
            # ms: the drawing's own time, from which the front end tells the link's time from the kernel's
            self.widget.send({"type": "frame", "key": key, "readout": html,
                              "ms": round(1000 * self.last_update_seconds, 1)}, buffers=[png])

    def render(self, values: dict | None = None) -> bytes:
        """PNG of the figure: the cached background for the values' key, animated artists on top."""
        self._refuse_if_closed()
        canvas = self.fig.canvas
        key = self._background_key(**(self.values if values is None else values))
        if key in self._backgrounds:
            canvas.restore_region(self._backgrounds[key])
        else:
            canvas.draw()  # everything but the animated artists
            self._backgrounds[key] = canvas.copy_from_bbox(self.fig.bbox)
        for artist in self._animated_artists():
            if artist.get_visible():
                self.fig.draw_artist(artist)
        return plots.rgba_to_png(np.asarray(canvas.buffer_rgba()))

    def _animated_artists(self) -> list:
        """The animated artists in drawing order, found again only when the figure's artists change
        (walking the whole tree per frame costs more than drawing the moving parts)."""
        shape = (len(self.fig.axes), len(self.fig.texts), len(self.fig.legends),
                 tuple(len(ax.get_children()) for ax in self.fig.axes))
        if getattr(self, "_animated_shape", None) != shape:
            self._animated_cache = self.fig.findobj(lambda a: a.get_animated())
            self._animated_shape = shape
        return self._animated_cache

    def sweep_values(self):
        """The values of the main control, in order (what benchmarks and browser tests step through)."""
        control = self.controls[self.main]
        if getattr(control, "options", None):
            return _options(control)
        return list(range(int(control.min), int(control.max) + 1, max(1, int(getattr(control, "step", 1)))))

    def instruction(self) -> str:
        """The line shown before the cell runs: what to do to start the explorer."""
        control = self.controls[self.main]
        if isinstance(control, (W.Dropdown, W.Select, W.RadioButtons)):
            verb = "pick"
        elif isinstance(control, (W.ToggleButtons, W.ToggleButton, W.Checkbox)):
            verb = "switch"
        else:
            verb = "drag"
        return f"▶ Run this cell to start the explorer — then {verb} {(control.description or self.main).strip()}"

    def fallback_png(self) -> bytes:
        """The current figure with the :meth:`instruction` as a banner: a small (64-colour) PNG."""
        self._refuse_if_closed()
        self._current()  # the figure shows the controls' values (not a prefetched frame's)
        return _fallback_png(np.asarray(self.fig.canvas.buffer_rgba()), self.instruction())

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        if self._closed:
            return {"text/plain": f"{type(self).__name__} (closed: run its cell again)"}
        shown: object = self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs)
        if isinstance(shown, tuple):  # (data, metadata)
            shown = shown[0]
        bundle: dict = dict(shown or {})  # type: ignore[call-overload]
        bundle["text/plain"] = self.instruction()
        bundle["image/png"] = base64.b64encode(self.fallback_png()).decode("ascii")
        _remember(self)
        return bundle

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"{type(self).__name__}({values}{', closed' if self._closed else ''})"


def _title(cls) -> str:
    doc = (cls.__doc__ or cls.__name__).strip().split("\n\n")[0]
    return " ".join(doc.split()).replace("``", "")


class _WeakHandler:
    """The view's message callback, holding its explorer weakly."""

    __slots__ = ("ref",)

    def __init__(self, explorer):
        self.ref = weakref.ref(explorer)

    def __call__(self, widget, content, buffers) -> None:
        explorer = self.ref()
        if explorer is not None:
            explorer._answer(content)


class _WeakObserver:
    """A control's callback holding its explorer weakly; a value the control cannot take is undone and
    refused, and so is a value whose drawing raised (KeyboardInterrupt included)."""

    __slots__ = ("ref", "__weakref__")

    def __init__(self, explorer):
        self.ref = weakref.ref(explorer)

    def __call__(self, change) -> None:
        explorer = self.ref()
        if explorer is None:
            return
        control = change["owner"]
        name = next((n for n, c in explorer.controls.items() if c is control), "control")
        try:
            _check_control_value(name, control, change["new"])
            explorer.update()
        except BaseException:
            control.unobserve(self, names="value")
            try:
                control.value = change["old"]
            finally:
                control.observe(self, names="value")
            raise


def _release(controls, observer, widgets, backgrounds) -> None:
    """Unobserve and close an explorer's widgets (with their layouts and styles); drop its backgrounds."""
    for control in controls:
        with contextlib.suppress(ValueError, KeyError):
            control.unobserve(observer, names="value")
    for widget in (*widgets, *controls):
        for part in (getattr(widget, "layout", None), getattr(widget, "style", None), widget):
            if isinstance(part, W.Widget):
                with contextlib.suppress(Exception):  # a widget whose comm is already gone
                    part.close()
    backgrounds.clear()



# -- one explorer per cell: a re-run of a cell closes what its earlier run displayed ------------
# JupyterLab sends the id of the cell it runs (``metadata.cellId`` of the execute request).
_SHOWN: dict = {}  # cell id -> (message id of the run, [explorers it displayed])


def _current_run():
    """(cell id, message id) of the execute request being handled, or None outside a kernel."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent("shell") if kernel is not None else None
    except Exception:  # no IPython, or an old ipykernel
        return None
    if not parent:
        return None
    cell = (parent.get("metadata") or {}).get("cellId")
    return (cell, (parent.get("header") or {}).get("msg_id")) if cell else None


def _remember(explorer) -> None:
    run = _current_run()
    if run is None:
        return
    cell, msg = run
    previous_msg, shown = _SHOWN.get(cell, (None, []))
    if previous_msg != msg:
        for old in list(shown):
            if old is not explorer and not any(old in s for m, s in _SHOWN.values() if s is not shown):
                old.close()  # also forgets it
        shown = []
    if explorer not in shown:
        shown.append(explorer)
    _SHOWN[cell] = (msg, shown)


def _forget(explorer) -> None:
    for cell, (_msg, shown) in list(_SHOWN.items()):
        if explorer in shown:
            shown.remove(explorer)
            if not shown:
                del _SHOWN[cell]


# -- the picture stored for readers without a kernel ----------------------------------------
BANNER_PX = 24


@functools.lru_cache(maxsize=1)
def _banner_font():
    from matplotlib import font_manager
    from PIL import ImageFont

    return ImageFont.truetype(font_manager.findfont("DejaVu Sans"), 14)


def _fallback_png(rgba, text: str) -> bytes:
    from PIL import Image, ImageDraw

    figure = Image.fromarray(np.ascontiguousarray(rgba[..., :3]), mode="RGB")
    image = Image.new("RGB", (figure.width, figure.height + BANNER_PX), "white")
    image.paste(figure, (0, BANNER_PX))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, figure.width, BANNER_PX - 3], fill=(232, 240, 250))
    draw.text((8, (BANNER_PX - 3) // 2), text, fill=(0, 60, 120), font=_banner_font(), anchor="lm")
    small = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    small.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def all_explorers() -> list[type]:
    """Every :class:`Explorer` subclass defined in the topic modules of this package."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    found, stack = [], list(Explorer.__subclasses__())
    while stack:
        cls = stack.pop(0)
        if not cls.__name__.startswith("_"):
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: (c.__module__, c.__name__))
