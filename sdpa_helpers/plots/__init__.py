"""Figures from arrays, in one colour-blind-safe style: :data:`OKABE_ITO`, :data:`SCALING_STYLES`,
:func:`style` (nothing changes on import), :func:`new_figure` (not managed by pyplot), :func:`get_axes`
(the ``ax=None`` convention), :func:`set_d_k_axis`, :func:`to_png`, :func:`rgba_to_png`.
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

from .. import scales

__all__ = [
    "OKABE_ITO", "SCALED", "UNSCALED", "INV_D", "SCALING_STYLES", "HEATMAP_CMAP",
    "style", "new_figure", "get_axes", "set_d_k_axis", "fit_d_k_grid", "to_png", "rgba_to_png",
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
    """The course's matplotlib style inside a ``with`` block only: matplotlib's defaults plus :data:`_RC`,
    whatever style the learner set (theirs is back after the block)."""
    current: Any = mpl.rcParams  # (typed with literal keys only)
    with mpl.rc_context({k: v for k, v in _course_rc().items() if current[k] != v}):  # only what differs
        yield


_COURSE_RC: list[dict] = []


def _course_rc() -> dict:
    """matplotlib's defaults with :data:`_RC` on top, as validated rc values; made once (style() runs per frame)."""
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
    """``(fig, axes)``: a white figure with a grid of Axes (squeezed as in ``plt.subplots``), not managed by pyplot."""
    with style():
        fig = Figure(figsize=figsize, dpi=dpi, facecolor="white", layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, **subplot_kw)
    return fig, axes


def get_axes(ax=None, figsize=(6.0, 4.0)):
    """Return ``ax`` if given, else the single Axes of a new figure (the ``ax=None`` convention)."""
    if ax is not None:
        return ax
    _, ax = new_figure(figsize=figsize)
    return ax


def set_d_k_axis(ax, which: str = "x", d_max: int | None = None, label: str = r"$d_k$"):
    """Make ``ax``'s x (or y) axis a log2 axis for d_k with ticks 1, 4, 16, ... up to ``d_max`` (default:
    the end of the course's grid, ``scales.D_K_CHOICES[-1]``); return ``ax``."""
    d_max = scales.D_K_CHOICES[-1] if d_max is None else d_max
    ticks = [4**i for i in range(0, 64) if 4**i <= d_max]
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=2)
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)
    return ax


def fit_d_k_grid(ax, which: str = "x"):
    """Limit ``ax``'s (log) d_k axis to the course's grid, ``scales.D_K_CHOICES``, with a margin
    (first × 0.7 to last × 1.4): the one place a figure's d_k ends come from; return ``ax``."""
    lo, hi = scales.D_K_CHOICES[0], scales.D_K_CHOICES[-1]
    (ax.set_xlim if which == "x" else ax.set_ylim)(0.7 * lo, 1.4 * hi)
    return ax


def to_png(fig, dpi: float | None = None) -> bytes:
    """Render ``fig`` to PNG bytes (opaque white background)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi, facecolor="white")
    return buf.getvalue()


def rgba_to_png(rgba) -> bytes:
    """Encode an RGBA buffer (uint8, shape (h, w, 4)) as PNG for an explorer's frame, fast: the rows
    unfiltered, one zlib stream at level 1 (about half Pillow's time: ``benchmarks/png_encoders.py``)."""
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
