"""The edit-test loop against the whole suite: time and test count of `make test-fast` and `make test`.

Budget (issue 19): `make test-fast` ≤ 60 s on a 2-core machine. `make test` is reported beside it
(no budget here; CI's limit is 90 minutes). Measured by running the commands (the pytest lines
they print give the counts), never by a timed test.

    python benchmarks/suite_times.py                   # both (the whole suite takes many minutes)
    python benchmarks/suite_times.py --skip-full-suite # only `make test-fast`
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

FAST_BUDGET_S = 60.0
_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)")


def counts(output: str) -> dict[str, int]:
    """The counts of pytest's closing lines in ``output`` (summed over the runs a command makes).

    >>> counts("== 3 passed, 1 skipped in 2.0s ==\\n== 12 passed in 9s ==")
    {'passed': 15, 'skipped': 1}
    """
    found: dict[str, int] = {}
    for line in output.splitlines():
        if " in " in line and ("passed" in line or "failed" in line):
            for n, kind in _COUNTS.findall(line):
                found[kind] = found.get(kind, 0) + int(n)
    return found


def timed(target: str) -> tuple[float, int, dict[str, int]]:
    start = time.perf_counter()
    out = subprocess.run(["make", target], cwd=common.ROOT, capture_output=True, text=True)
    return time.perf_counter() - start, out.returncode, counts(out.stdout + out.stderr)


def describe(seconds: float, code: int, found: dict[str, int]) -> str:
    parts = ", ".join(f"{n} {k}" for k, n in found.items()) or "no pytest summary"
    return f"{seconds:.0f} s, {parts}" + ("" if code == 0 else f" (exit {code})")


def run(full_suite: bool = True) -> list[common.Row]:
    rows = []
    seconds, code, found = timed("test-fast")
    rows.append(common.Row("`make test-fast` (edit-test loop, 2 cores)", describe(seconds, code, found),
                           f"≤ {FAST_BUDGET_S:.0f} s", code == 0 and seconds <= FAST_BUDGET_S))
    if full_suite:
        seconds, code, found = timed("test")
        rows.append(common.Row("`make test` (the whole suite, for comparison)", describe(seconds, code, found),
                               "passes (CI limit 90 min)", code == 0 and seconds <= 90 * 60))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-full-suite", action="store_true", help="only make test-fast")
    args = parser.parse_args(argv)
    result = run(not args.skip_full_suite)
    print(common.table(result))
    return 0 if all(r.ok is not False for r in result) else 1


if __name__ == "__main__":
    sys.exit(main())
