"""``sample_dot_products`` time ÷ the time to draw the same random numbers alone.

The reference draws what ``sample_dot_products`` must draw -- two standard-normal arrays
``(rows, d_k)`` per chunk, chunks of the same size, the same generator type -- and does
nothing else. The ratio is the price of everything around the draws (the row-wise dot
products, the checks, the chunking). Repeats are interleaved and the medians compared.

Budget (the budgets table in benchmarks/results.md): ratio ≤ 1.5.

    python benchmarks/sampling_overhead.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from sdpa_helpers import sampling  # noqa: E402

BUDGET = 1.5
N_SAMPLES = 200_000
D_KS = (64, 1024)
REPEATS = 3


def draw_only(d_k: int, n_samples: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = max(1, getattr(sampling, "_CHUNK_ENTRIES", 2**20) // d_k)
    for start in range(0, n_samples, rows):
        n = min(rows, n_samples - start)
        rng.standard_normal((n, d_k))  # q
        rng.standard_normal((n, d_k))  # k


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def measure(d_k: int, n_samples: int = N_SAMPLES, repeats: int = REPEATS) -> dict:
    sample, draw = [], []
    for seed in range(repeats):
        draw.append(timed(draw_only, d_k, n_samples, seed))
        sample.append(timed(lambda s=seed: sampling.sample_dot_products(d_k, n_samples, rng=s)))
    return {"d_k": d_k, "sample_s": common.median(sample), "draw_s": common.median(draw),
            "ratio": common.median(sample) / common.median(draw)}


def run() -> list[common.Row]:
    out = []
    for d_k in D_KS:
        m = measure(d_k)
        out.append(common.Row(f"`sample_dot_products` ÷ drawing the numbers alone (d_k={d_k}, n={N_SAMPLES:,})",
                              f"{m['ratio']:.2f} ({common.ms(m['sample_s'])} vs {common.ms(m['draw_s'])})",
                              "≤ 1.5", m["ratio"] <= BUDGET))
    return out


if __name__ == "__main__":
    rows = run()
    print(common.table(rows))
    sys.exit(0 if all(r.ok for r in rows) else 1)
