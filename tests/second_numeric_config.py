"""Strict nbval again, under a second numeric configuration of the same machine (issue 18).

A stored output that depends on the CPU's vector instructions or on the BLAS kernel fails
here, on the developer's own machine, instead of on a stranger's:

- ``OPENBLAS_CORETYPE=Nehalem`` -- OpenBLAS's oldest x86-64 kernels (no AVX);
- ``NPY_DISABLE_CPU_FEATURES`` -- every SIMD extension numpy's dispatch reports as found on
  this machine, read from its public ``numpy.show_config(mode="dicts")``; numpy then runs its
  baseline code paths only.

    python tests/second_numeric_config.py [pytest arguments...]   # default: notebooks/

``make test`` runs it after the main suite. The environment reaches the notebooks' kernels,
which inherit it from pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dispatched_simd_features() -> list[str]:
    """The SIMD extensions numpy dispatches to on this machine beyond its baseline."""
    import numpy as np

    config = np.show_config(mode="dicts")
    return list(config.get("SIMD Extensions", {}).get("found", []))


def second_config_env() -> dict[str, str]:
    env = dict(os.environ)
    env["OPENBLAS_CORETYPE"] = "Nehalem"
    env.pop("OPENBLAS_L2_SIZE", None)
    features = dispatched_simd_features()
    if features:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(features)
    else:
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
    return env


def main(argv: list[str]) -> int:
    env = second_config_env()
    print(f"strict nbval under OPENBLAS_CORETYPE=Nehalem, "
          f"NPY_DISABLE_CPU_FEATURES={env.get('NPY_DISABLE_CPU_FEATURES', '(none found)')!r}", flush=True)
    check = subprocess.run([sys.executable, "-c", "import numpy as np; "
                            "print(np.show_config(mode='dicts')['SIMD Extensions'].get('found', []))"],
                           env=env, capture_output=True, text=True, check=True)
    print(f"numpy's dispatch now finds: {check.stdout.strip()}", flush=True)
    args = argv or ["notebooks"]
    cmd = [sys.executable, "-m", "pytest", "-p", "no:randomly", "--nbval", "--nbval-current-env",
           "--nbval-cell-timeout=300", "-q", *args]
    return subprocess.run(cmd, env=env, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
