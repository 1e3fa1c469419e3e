"""Interactive explorers: controls that update one figure in place.

:class:`Explorer` is the base (one figure for its life, re-rendered into one :class:`ipywidgets.Image`;
controls call back through a weak reference; re-running a cell closes its old explorers; the displayed
explorer carries a static PNG for readers who have not run it). :func:`d_k_slider`, :func:`seed_slider`
are the shared controls; :func:`all_explorers` lists the explorer classes.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import importlib
import io
import math
import numbers
import pkgutil
import time
import weakref
from collections.abc import Callable, Hashable

import ipywidgets as W
import numpy as np

from .. import _checks, plots
from .._numerics import controlled_errstate
from ..scales import D_K_CHOICES

__all__ = ["Explorer", "D_K_CHOICES", "d_k_slider", "seed_slider", "all_explorers"]


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


class Explorer:
    """Base class: controls + one figure rendered to PNG in an :class:`ipywidgets.Image`.

    Subclasses set :attr:`figsize` and define ``_controls()`` (name -> control, each with a
    description), ``_setup(fig)`` (Axes and artists, once) and ``_update(**values) -> str`` (set the
    artists' data; return the readout's HTML). Frames are blitted: ``animated=True`` artists are
    drawn over a cached background; if the background depends on the controls, define
    ``_background_key(**values)`` (one background per key). :attr:`main` names the control that
    benchmarks and browser tests sweep.
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
            parts = [getattr(self, n, None) for n in ("widget", "image", "readout")]
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
        with plots.style():
            self._setup(self.fig)
        # A CSS width equal to the PNG's pixel width: never stretched (blurry) in Lab or Voila.
        width = f"{round(self.figsize[0] * self.dpi)}px"
        self.image = W.Image(format="png", layout=W.Layout(width=width, max_width="100%", height="auto"))
        self.readout = W.HTML()
        self.renders = 0
        self._backgrounds: dict = {}
        self.last_update_seconds = 0.0
        self._observer = _WeakObserver(self)
        self.update()
        self.fig.set_layout_engine("none")  # frozen after the first draw: later frames only move data
        for control in self.controls.values():
            control.observe(self._observer, names="value")
        row = W.HBox(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        self.widget = W.VBox([row, self.image, self.readout])
        # Runs on close() or when the explorer is collected; holds no reference to the explorer.
        self._finalizer = weakref.finalize(self, _release, list(self.controls.values()), self._observer,
                                           [self.widget, row, self.image, self.readout], self._backgrounds)

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
        fig, self.fig = self.fig, None
        fig.clear()
        if hasattr(fig.canvas, "renderer"):
            del fig.canvas.renderer  # the Agg pixel buffer
        _forget(self)

    def update(self) -> None:
        """Redraw the figure for the current control values (in place) and refresh the image."""
        if self._closed:
            return
        start = time.perf_counter()
        with plots.style(), controlled_errstate():
            html = self._update(**self.values)
            self.image.value = self.render()
        self.readout.value = html or ""
        self.renders += 1
        self.last_update_seconds = time.perf_counter() - start

    def render(self) -> bytes:
        """PNG of the figure: the cached background for the current key, animated artists on top."""
        self._refuse_if_closed()
        canvas = self.fig.canvas
        key = self._background_key(**self.values)
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
        return _fallback_png(np.asarray(self.fig.canvas.buffer_rgba()), self.instruction())

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        if self._closed:
            return {"text/plain": f"{type(self).__name__} (closed: run its cell again)"}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs)
        if isinstance(bundle, tuple):  # (data, metadata)
            bundle = bundle[0]
        bundle = dict(bundle or {})
        bundle["text/plain"] = self.instruction()
        bundle["image/png"] = base64.b64encode(self.fallback_png()).decode("ascii")
        _remember(self)
        return bundle

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"{type(self).__name__}({values}{', closed' if self._closed else ''})"


class _WeakObserver:
    """A control's callback holding its explorer weakly; a value the control cannot take is undone and refused."""

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
        except (TypeError, ValueError):
            control.unobserve(self, names="value")
            try:
                control.value = change["old"]
            finally:
                control.observe(self, names="value")
            raise
        explorer.update()


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
