"""Interactive explorers: sliders that update one figure in place.

This package offers the base every explorer of the course is built on:

- :class:`Explorer` -- owns one figure for its whole life; a control change updates the
  artists' data and re-renders that figure into the same :class:`ipywidgets.Image`
  (no new figure per move, no growing output, and it works the same in JupyterLab,
  Voila and a static export with widget state);
- :func:`d_k_slider` -- the course's d_k slider: powers of two, 1 ... 4096;
- :func:`seed_slider` -- a seed picker;
- :func:`all_explorers` -- every explorer class in the package (for benchmarks and tests).

Topic modules (for example :mod:`.derivation`) define the explorers of each notebook.
"""

from __future__ import annotations

import importlib
import pkgutil
import time

import ipywidgets as W

from .. import plots

__all__ = ["Explorer", "D_K_CHOICES", "d_k_slider", "seed_slider", "all_explorers"]

#: The d_k values the sliders offer: powers of two from 1 to 4096 (a log scale).
D_K_CHOICES = tuple(2**i for i in range(13))


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
        self.controls = self._controls()
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this explorer has {sorted(self.controls)}")
            self.controls[name].value = value
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
        self.update()
        # Freeze the constrained layout after the first draw: later frames only move data.
        self.fig.set_layout_engine("none")
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.widget = W.VBox([W.HBox(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap")),
                              self.image, self.readout])

    # -- subclass hooks -------------------------------------------------------
    def _controls(self) -> dict:
        raise NotImplementedError

    def _setup(self, fig) -> None:
        raise NotImplementedError

    def _update(self, **values) -> str:
        raise NotImplementedError

    def _background_key(self, **values):
        """Hashable key of everything drawn in the background; ``None``: it never changes."""
        return None

    # -- machinery ------------------------------------------------------------
    @property
    def values(self) -> dict:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Redraw the figure for the current control values (in place) and refresh the image."""
        start = time.perf_counter()
        with plots.style():
            html = self._update(**self.values)
            self.image.value = self.render()
        self.readout.value = html or ""
        self.renders += 1
        self.last_update_seconds = time.perf_counter() - start

    def render(self) -> bytes:
        """PNG of the figure: the cached background for the current key, animated artists on top."""
        canvas = self.fig.canvas
        key = self._background_key(**self.values)
        background = self._backgrounds.get(key)
        if background is None:
            canvas.draw()  # draws everything but the animated artists
            self._backgrounds[key] = canvas.copy_from_bbox(self.fig.bbox)
        else:
            canvas.restore_region(background)
        for artist in self.fig.findobj(lambda a: a.get_animated() and a.get_visible()):
            self.fig.draw_artist(artist)
        return plots.rgba_to_png(canvas.buffer_rgba())

    def sweep_values(self):
        """The values of the main control, in order (what benchmarks and browser tests step through)."""
        control = self.controls[self.main]
        if getattr(control, "options", None):
            return [o[1] if isinstance(o, tuple) else o for o in control.options]
        return list(range(int(control.min), int(control.max) + 1, max(1, int(getattr(control, "step", 1)))))

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"{type(self).__name__}({values})"


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
