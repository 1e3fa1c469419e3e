"""Regenerate sdpa_helpers/data/adam_grid.npz: notebook 09's task trained with Adam, scaled and unscaled, at every
d_k of the SGD grid, 25 seeds, 7 Adam learning rates, 300 steps (``sdpa_helpers.training.adam``).

Run:  python scripts/make_adam_grid.py   (about 4 minutes of one core at load 5; numpy only)

``tests/test_training_grid.py`` checks the stored grid against itself and retrains part of it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sdpa_helpers.training import adam  # noqa: E402


def main(path=adam.ADAM_FILE) -> Path:
    start = time.perf_counter()
    out = adam.write_adam_grid(path)
    print(f"wrote {out} ({out.stat().st_size / 2**20:.2f} MiB) in {time.perf_counter() - start:.0f} s")
    return out


if __name__ == "__main__":
    main()
