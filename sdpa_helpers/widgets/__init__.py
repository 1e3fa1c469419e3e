"""Interactive explorers: sliders that update one figure in place.

This package offers the base every explorer of the course is built on:

- :class:`Explorer` -- owns one figure for its whole life; a control change updates the
  artists' data and re-renders that figure into the same :class:`ipywidgets.Image`
  (no new figure per move, no growing output, and it works the same in JupyterLab,
  Voila and a static export with widget state);
- :func:`d_k_slider` -- the course's d_k slider: powers of two, 1 ... 4096;
- :func:`seed_slider` -- a seed picker;
- :func:`all_explorers` -- every explorer class in the package (for benchmarks and tests).

Memory: an explorer holds a figure and a few cached backgrounds (megabytes). Its controls
call it back through a weak reference, so an explorer nobody refers to any more is
collected, and its widgets are closed with it; :meth:`Explorer.close` releases everything
at once. In a kernel, re-running a cell that displays an explorer closes the explorer the
cell showed before (IPython's ``Out`` history would otherwise keep every one alive).

Before its cell runs: a stored explorer output also carries the figure as ``image/png``
(with a banner "▶ Run this cell to start the explorer — then drag d_k") and that line as
``text/plain``. JupyterLab shows the PNG for an untrusted (freshly opened) notebook, whose
outputs may not use the widget renderer, and GitHub shows it too; once the cell runs, the
live widget is shown (the widget renderer ranks first for trusted outputs).

Topic modules (one per notebook topic, for example :mod:`.variance`) define the explorers of each notebook.
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

from .. import plots
from .._numerics import controlled_errstate
from ..scales import D_K_CHOICES

__all__ = ["Explorer", "D_K_CHOICES", "d_k_slider", "seed_slider", "all_explorers"]

#: The d_k values the sliders offer (a log scale) are the course's grid, ``scales.D_K_CHOICES``.


def d_k_slider(value: int = 64, description: str = "d_k", choices=D_K_CHOICES) -> W.SelectionSlider:
    """A slider over powers of two for d_k (log scale).

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
    """A slider picking the random seed (0 ... 99).

    >>> seed_slider(3).value
    3
    """
    return W.IntSlider(value=value, min=0, max=99, description=description,
                       continuous_update=True, style={"description_width": "initial"})


def _allowed(control) -> list:
    return [o[1] if isinstance(o, tuple) else o for o in control.options]


def _check_control_value(name: str, control, value):
    """``value`` if ``control`` can take it, else a TypeError/ValueError naming ``name`` and what it allows.

    A selection (slider over choices, dropdown, toggle buttons) takes one of its options, of
    their type (``True`` is not the d_k 1, ``64+0j`` not 64); a numeric slider a finite number
    within its range; a checkbox True or False.

    >>> _check_control_value("d_k", d_k_slider(), 3)
    Traceback (most recent call last):
    ...
    ValueError: d_k must be one of 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096; got 3
    """
    if getattr(control, "options", None) is not None and not isinstance(control, W.SelectMultiple):
        allowed = _allowed(control)
        shown = ", ".join(map(repr, allowed))
        real = all(isinstance(a, numbers.Real) and not isinstance(a, (bool, np.bool_)) for a in allowed)
        if real and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)):
            raise TypeError(f"{name} must be one of {shown}; got {value!r} ({type(value).__name__})")
        if not any(value == a and isinstance(value, (bool, np.bool_)) == isinstance(a, (bool, np.bool_))
                   for a in allowed if value is not None):
            raise ValueError(f"{name} must be one of {shown}; got {value!r}")
        return value
    if isinstance(control, (W.Checkbox, W.ToggleButton)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
        return value
    low, high = getattr(control, "min", None), getattr(control, "max", None)
    if low is not None and high is not None:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
        if not math.isfinite(value) or not low <= value <= high:
            raise ValueError(f"{name} must be a finite number from {low:g} to {high:g}, got {value!r}")
    return value


def _not_implemented_update(self, **values) -> str:
    raise NotImplementedError(f"{type(self).__name__} must define _update(self, **values) -> str")


def _no_background_key(self, **values) -> Hashable:
    return None


class Explorer:
    """Base class: controls + one figure rendered to PNG in an :class:`ipywidgets.Image`.

    Subclasses set :attr:`figsize`, and implement

    - ``_controls()`` -> dict name -> control widget (every control has a description);
    - ``_setup(fig)`` -> create the Axes and artists once;
    - ``_update(**values)`` -> change the artists' data for the current control values,
      and return an HTML string for the readout below the figure (or ``""``).

    Rendering is blitted: artists created with ``animated=True`` are the moving parts and
    are drawn on top of a cached background (axes, ticks, labels, static lines). When the
    background itself depends on the controls (say an axis range follows d_k), override
    ``_background_key(**values)`` to return a hashable key; one background is cached per key.

    :attr:`main` names the control that the benchmarks and browser tests sweep.
    """

    figsize = (9.0, 3.6)
    dpi = 80
    main = "d_k"

    def __init__(self, **values):
        # Under numpy's default error handling (a learner's np.seterr(all="raise") must not break
        # a harmless underflow); if anything fails, every widget built so far is closed again.
        self.controls: dict = {}
        try:
            with controlled_errstate():
                self._build(values)
        except BaseException:
            self._close_partial()
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
        # A fixed CSS width equal to the PNG's pixel width: never stretched (blurry) in Lab or Voila.
        width = f"{round(self.figsize[0] * self.dpi)}px"
        self.image = W.Image(format="png", layout=W.Layout(width=width, max_width="100%", height="auto"))
        self.readout = W.HTML()
        self.renders = 0
        self._backgrounds: dict = {}
        self.last_update_seconds = 0.0
        self._closed = False
        self._observer = _WeakObserver(self)
        self.update()
        # Freeze the constrained layout after the first draw: later frames only move data.
        self.fig.set_layout_engine("none")
        for control in self.controls.values():
            control.observe(self._observer, names="value")
        row = W.HBox(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        self.widget = W.VBox([row, self.image, self.readout])
        # Runs on close() or when the explorer is collected. It holds no reference to the
        # explorer (nor to its figure, whose artists a subclass might tie back to it).
        self._finalizer = weakref.finalize(
            self, _release, list(self.controls.values()), self._observer,
            [self.widget, row, self.image, self.readout], self._backgrounds)

    def _close_partial(self) -> None:
        """Close what a failed construction built: the controls, the image, the figure."""
        observer = getattr(self, "_observer", None)
        parts = [getattr(self, n, None) for n in ("widget", "image", "readout")]
        _release(list(self.controls.values()), observer, [p for p in parts if p is not None],
                 getattr(self, "_backgrounds", {}))
        fig = getattr(self, "fig", None)
        if fig is not None:
            fig.clear()
        self._closed = True

    # -- subclass hooks -------------------------------------------------------
    def _controls(self) -> dict:
        raise NotImplementedError

    def _setup(self, fig) -> None:
        raise NotImplementedError

    # A subclass defines ``_update`` (and may define ``_background_key``) with its controls' names
    # as keyword parameters, e.g. ``def _update(self, d_k, seed) -> str``. Typed as callables
    # taking any arguments, so each subclass's own signature is a valid override.
    #: Set the artists' data for ``values``; return the readout text.
    _update: Callable[..., str] = _not_implemented_update
    #: Hashable key of everything drawn in the background; ``None``: it never changes.
    _background_key: Callable[..., Hashable] = _no_background_key

    # -- machinery ------------------------------------------------------------
    @property
    def values(self) -> dict:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    @property
    def _on_change(self):
        """The callback the controls observe (a weak reference to this explorer).

        ``control.unobserve(self._on_change, names="value")`` and ``control.observe(...)``
        pause and resume it (see also :meth:`paused`).
        """
        return self._observer

    @contextlib.contextmanager
    def paused(self):
        """Inside this block, setting a control's value does not redraw (for precomputing)."""
        self._refuse_if_closed()
        controls = list(self.controls.values())
        for control in controls:
            control.unobserve(self._observer, names="value")
        try:
            yield self
        finally:
            for control in controls:
                control.observe(self._observer, names="value")

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise ValueError(f"this {type(self).__name__} is closed; build a new one")

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran: the widgets are closed and the figure released."""
        return self._closed

    def close(self) -> None:
        """Stop observing the controls, close every widget, release the figure and backgrounds.

        Idempotent. Afterwards :meth:`update` does nothing and the explorer displays as text.
        """
        if self._closed:
            return
        self._closed = True
        self._finalizer()
        fig, self.fig = self.fig, None
        if fig is not None:
            fig.clear()
            canvas = fig.canvas
            if hasattr(canvas, "renderer"):
                del canvas.renderer  # the Agg pixel buffer
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
        background = self._backgrounds.get(key)
        if background is None:
            canvas.draw()  # draws everything but the animated artists
            self._backgrounds[key] = canvas.copy_from_bbox(self.fig.bbox)
        else:
            canvas.restore_region(background)
        for artist in self._animated_artists():
            if artist.get_visible():
                self.fig.draw_artist(artist)
        return plots.rgba_to_png(np.asarray(canvas.buffer_rgba()))

    def _animated_artists(self) -> list:
        """The animated artists, in drawing order; found again only when the figure gains or loses artists.

        Walking the whole artist tree (ticks included, hundreds of artists) on every frame costs
        more than drawing the few moving parts, so the list is cached under a cheap shape key.
        """
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
            return [o[1] if isinstance(o, tuple) else o for o in control.options]
        return list(range(int(control.min), int(control.max) + 1, max(1, int(getattr(control, "step", 1)))))

    def instruction(self) -> str:
        """The line shown before the cell runs: what to do to start the explorer."""
        control = self.controls[self.main]
        name = (control.description or self.main).strip()
        if isinstance(control, (W.Dropdown, W.Select, W.RadioButtons)):
            verb = "pick"
        elif isinstance(control, (W.ToggleButtons, W.ToggleButton, W.Checkbox)):
            verb = "switch"
        else:
            verb = "drag"
        return f"▶ Run this cell to start the explorer — then {verb} {name}"

    def fallback_png(self) -> bytes:
        """The current figure as a small PNG with the :meth:`instruction` as a banner on top.

        What a notebook stores beside the widget view, for readers without a kernel
        (JupyterLab before the cell runs, GitHub). Encoded with a 64-colour palette at the
        highest zlib level: a few tens of kB.
        """
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
        state = ", closed" if self._closed else ""
        return f"{type(self).__name__}({values}{state})"


class _WeakObserver:
    """A control's callback that holds its explorer weakly (so the explorer can be collected)."""

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
            # Undo the bad value (without redrawing), then say what the control allows.
            control.unobserve(self, names="value")
            try:
                control.value = change["old"]
            finally:
                control.observe(self, names="value")
            raise
        explorer.update()


def _release(controls, observer, widgets, backgrounds) -> None:
    """Unobserve and close an explorer's widgets; drop its cached backgrounds."""
    for control in controls:
        with contextlib.suppress(ValueError, KeyError):
            control.unobserve(observer, names="value")
    for widget in (*widgets, *controls):
        # Layout and style are widgets of their own: close them too, or they stay registered.
        for part in (getattr(widget, "layout", None), getattr(widget, "style", None), widget):
            if isinstance(part, W.Widget):
                with contextlib.suppress(Exception):  # a widget whose comm is already gone
                    part.close()
    backgrounds.clear()


# -- one explorer per cell, in a kernel ----------------------------------------------------
# IPython keeps every displayed result in ``Out``, so re-running an explorer cell would keep
# every earlier explorer (and its figure) alive. JupyterLab sends the id of the cell it runs
# (``metadata.cellId`` of the execute request): when a cell displays an explorer, the
# explorers an *earlier* run of the same cell displayed are closed (their output is gone).
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
    msg = (parent.get("header") or {}).get("msg_id")
    return (cell, msg) if cell else None


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
FALLBACK_COLOURS = 64
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
    small = image.quantize(colors=FALLBACK_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
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
