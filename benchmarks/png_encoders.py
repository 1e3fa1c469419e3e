"""The explorers' PNG encoder (``plots.rgba_to_png``) against Pillow, on real explorer frames.

The opening frame of every explorer (``sdpa_helpers.widgets.all_explorers()``) is encoded by each
encoder ``ROUNDS`` times; every PNG is decoded back and compared with the frame (lossless). Prints
a Markdown table: median (p95) time per frame and median size.

    python benchmarks/png_encoders.py
"""

from __future__ import annotations

import io
import os
import statistics
import time

import numpy as np
from PIL import Image

ROUNDS = 5


def pillow(rgba, level=None, rgb: bool = False) -> bytes:
    image = Image.fromarray(np.ascontiguousarray(rgba[..., :3]) if rgb else rgba, "RGB" if rgb else "RGBA")
    buf = io.BytesIO()
    image.save(buf, format="PNG", **({} if level is None else {"compress_level": level}))
    return buf.getvalue()


def main() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from sdpa_helpers import plots
    from sdpa_helpers.widgets import all_explorers

    coders = {"`plots.rgba_to_png` (hand-written: RGBA rows unfiltered, zlib level 1)": plots.rgba_to_png,
              "Pillow, RGBA, default settings (level 6, adaptive filters)": lambda a: pillow(a),
              "Pillow, RGBA, `compress_level=1`": lambda a: pillow(a, 1),
              "Pillow, RGB, `compress_level=1`": lambda a: pillow(a, 1, rgb=True)}
    frames = []
    for cls in all_explorers():
        explorer = cls()
        frames.append(np.asarray(explorer.fig.canvas.buffer_rgba()).copy())
        explorer.close()
    times: dict = {k: [] for k in coders}
    sizes: dict = {k: [] for k in coders}
    for _ in range(ROUNDS):
        for frame in frames:
            for name, encode in coders.items():
                start = time.perf_counter()
                png = encode(frame)
                times[name].append(time.perf_counter() - start)
                sizes[name].append(len(png))
                assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")), frame), name
    print(f"{len(frames)} frames, {ROUNDS} rounds, load average {os.getloadavg()[0]:.1f}")
    print("| encoder | median (p95) per frame | median size |\n|---|---:|---:|")
    for name in coders:
        t = sorted(times[name])
        print(f"| {name} | {1000 * statistics.median(t):.0f} ms ({1000 * t[int(0.95 * len(t))]:.0f} ms) "
              f"| {statistics.median(sizes[name]) / 1000:.0f} kB |")


if __name__ == "__main__":
    main()
