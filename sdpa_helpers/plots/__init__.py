"""Figures from arrays, in one consistent, colour-blind-safe style.

This package offers the shared pieces every figure of the course uses:

- :data:`OKABE_ITO` -- the Okabe-Ito palette; :data:`SCALING_STYLES` -- the fixed colour +
  line style of each scaling across the course, keyed by the names of
  :data:`sdpa_helpers.scales.SCALINGS` (also as :data:`UNSCALED`, :data:`SCALED`, :data:`INV_D`);
- :func:`style` -- a context manager with the course's rc settings (nothing changes on import);
- :func:`new_figure` -- a white, opaque :class:`~matplotlib.figure.Figure` not managed by
  pyplot (so explorers never leak figures or show twice);
- :func:`get_axes` -- the ``ax=None`` convention: use the given Axes or make a figure;
- :func:`set_d_k_axis` -- a log2 axis for d_k labelled 1, 4, 16, ..., 4096;
- :func:`to_png` -- render a figure to PNG bytes.

Topic modules add the figures of each notebook (for example :mod:`.variance` for notebook 02);
they take arrays, draw on ``ax`` (or a new figure) and return it, and compute nothing
another layer needs (ARCHITECTURE.md).
"""

from __future__ import annotations

import contextlib
import io
import struct
import warnings
import zlib
from typing import Any

import matplotlib as mpl
import matplotlib.style  # noqa: F401  (mpl.style)
import numpy as np
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

__all__ = [
    "OKABE_ITO", "SCALED", "UNSCALED", "INV_D", "SCALING_STYLES", "HEATMAP_CMAP",
    "style", "new_figure", "get_axes", "set_d_k_axis", "to_png", "rgba_to_png",
]

#: The Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

#: Line properties of each scaling: the same colour *and* line style in every figure.
UNSCALED = {"color": OKABE_ITO["vermillion"], "linestyle": "--", "marker": "o", "label": "unscaled"}
SCALED = {"color": OKABE_ITO["blue"], "linestyle": "-", "marker": "s", "label": r"scaled by $1/\sqrt{d_k}$"}
INV_D = {"color": OKABE_ITO["bluish_green"], "linestyle": ":", "marker": "^", "label": r"scaled by $1/d_k$"}
#: The line style of each named scaling, keyed by the names of :data:`sdpa_helpers.scales.SCALINGS`.
SCALING_STYLES = {"unscaled": UNSCALED, "sqrt": SCALED, "inv_d": INV_D}

#: Sequential colour map for heatmaps (perceptually uniform, colour-blind safe).
HEATMAP_CMAP = "cividis"

_RC: dict[str, Any] = {
    "axes.prop_cycle": cycler(color=[OKABE_ITO[c] for c in (
        "blue", "vermillion", "bluish_green", "orange", "reddish_purple", "sky_blue", "black")]),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "image.cmap": HEATMAP_CMAP,
    "font.family": "DejaVu Sans",
}


@contextlib.contextmanager
def style():
    """Apply the course's matplotlib style inside a ``with`` block only.

    It starts from matplotlib's defaults (``matplotlib.style.use("default")``), so a style the
    learner set before (``plt.style.use("dark_background")``, ``rcParams["font.size"] = 20``,
    ``text.usetex``) does not change the course's figures; the learner's settings are back after
    the block.

    >>> import matplotlib as mpl
    >>> before = mpl.rcParams["axes.grid"]
    >>> with style():
    ...     mpl.rcParams["axes.grid"]
    True
    >>> mpl.rcParams["axes.grid"] == before
    True
    """
    current: Any = mpl.rcParams  # (typed with literal keys only)
    with mpl.rc_context({k: v for k, v in _course_rc().items() if current[k] != v}):  # only what differs
        yield


_COURSE_RC: list[dict] = []


def _course_rc() -> dict:
    """matplotlib's defaults (``style.use("default")``: the backend and such kept) with :data:`_RC` on
    top, as validated rc values; made once."""
    if not _COURSE_RC:
        params: Any = mpl.rcParams
        with mpl.rc_context():
            mpl.style.use("default")
            params.update(_RC)
            rc = {}
            for k in sorted((set(mpl.rcParamsDefault) - _KEPT) | set(_RC)):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    v = params[k]
                if not caught:  # a deprecated setting (it warns when read) is left alone
                    rc[k] = v
            _COURSE_RC.append(rc)
    return _COURSE_RC[0]


#: rc settings that are no part of a style (matplotlib's own list, matplotlib.style's blacklist).
_KEPT = {"interactive", "backend", "webagg.port", "webagg.address", "webagg.port_retries", "webagg.open_in_browser",
         "backend_fallback", "toolbar", "timezone", "figure.max_open_warning", "figure.raise_window",
         "savefig.directory", "tk.window_focus", "docstring.hardcopy", "date.epoch"}


def new_figure(nrows: int = 1, ncols: int = 1, figsize=(6.0, 4.0), dpi: float = 100, **subplot_kw):
    """A white figure with a grid of Axes, drawn with the course style; not managed by pyplot.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : Axes or ndarray of Axes (``squeeze=True`` as in ``plt.subplots``)

    >>> fig, ax = new_figure()
    >>> fig.get_facecolor()
    (1.0, 1.0, 1.0, 1.0)
    """
    with style():
        fig = Figure(figsize=figsize, dpi=dpi, facecolor="white", layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, **subplot_kw)
    return fig, axes


def get_axes(ax=None, figsize=(6.0, 4.0)):
    """Return ``ax`` if given, else the single Axes of a new figure (the ``ax=None`` convention).

    >>> ax = get_axes()
    >>> ax.figure.get_facecolor()
    (1.0, 1.0, 1.0, 1.0)
    """
    if ax is not None:
        return ax
    _, ax = new_figure(figsize=figsize)
    return ax


def set_d_k_axis(ax, which: str = "x", d_max: int = 4096, label: str = r"$d_k$"):
    """Make ``ax``'s x (or y) axis a log2 axis for d_k with ticks 1, 4, 16, ..., ``d_max``.

    >>> ax = get_axes()
    >>> set_d_k_axis(ax).get_xscale()
    'log'
    """
    ticks = [4**i for i in range(0, 8) if 4**i <= d_max]
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=2)
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)
    return ax


def to_png(fig, dpi: float | None = None) -> bytes:
    """Render ``fig`` to PNG bytes (opaque white background).

    >>> fig, ax = new_figure(figsize=(2, 2))
    >>> to_png(fig)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi, facecolor="white")
    return buf.getvalue()


def rgba_to_png(rgba) -> bytes:
    """Encode an RGBA buffer (``canvas.buffer_rgba()``, shape (h, w, 4), uint8) as PNG, fast.

    Explorers send a new frame per slider move, so encoding speed matters more than a few
    kilobytes. The PNG is written directly: the RGBA rows as they are (PNG filter type 0), one
    zlib stream at level 1. That takes 30-50 % of the time Pillow's encoder needs for the
    same frame (no copy to RGB, no per-row filter search; measured on real explorer frames by
    ``benchmarks/png_encoders.py``, see ``benchmarks/results.md``), and the file is lossless and standard.

    >>> png = rgba_to_png(np.full((2, 3, 4), 255, dtype=np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    arr = np.asarray(rgba)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 4 or 0 in arr.shape:
        raise ValueError(f"rgba must be a non-empty uint8 array of shape (height, width, 4), "
                         f"got {arr.dtype} {arr.shape}")
    height, width = arr.shape[:2]
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)
    rows[:, 0] = 0  # filter type 0 (None) on every row
    rows[:, 1:] = arr.reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return b"".join((b"\x89PNG\r\n\x1a\n", _png_chunk(b"IHDR", header),
                     _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)), _png_chunk(b"IEND", b"")))


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
