"""Each notebook's kernel memory: its peak resident size and what it keeps after its last cell.

Binder gives a session at most 2 GB, and JupyterLab keeps a notebook's kernel running when the
learner opens the next one, so every notebook must fit beside the kernels of the ones before it.
Budget (issue 37): a kernel peaks under 500 MB and keeps under 250 MB after its last cell.

Each stored notebook is executed with nbclient in a fresh kernel (working directory ``notebooks/``,
nothing written), and the kernel's ``/proc/<pid>/status`` is read after every cell: ``VmHWM`` (the
peak resident set so far) and ``VmRSS`` (resident now). The cell where ``VmHWM`` rose most is named.

    python benchmarks/notebook_memory.py              # every notebook, the table on stdout
    python benchmarks/notebook_memory.py 00 05        # notebooks whose names start with these
    python benchmarks/notebook_memory.py --seed 7 07  # with the setup cell's SEED replaced
    python benchmarks/notebook_memory.py --glibc-default  # without the fixed mmap threshold (below)

The kernels run as ``make lab`` and Binder (``binder/start``) run them: with ``MALLOC_MMAP_THRESHOLD_`` at
1 MiB (:data:`MALLOC_MMAP_THRESHOLD`, unless already set), so glibc maps every array of 1 MiB or more and
gives it back when freed; by default glibc raises its threshold after a large array is freed and keeps later
1-32 MB arrays on a heap it does not give back.

``execute`` is shared with tests/test_notebook_seeds.py (other seeds, a memory-limited kernel).
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PEAK_BUDGET_MB = 500
KEPT_BUDGET_MB = 250
#: glibc's mmap threshold (bytes) that ``make lab`` and ``binder/start`` set for the kernels (and this script).
MALLOC_MMAP_THRESHOLD = 1048576
#: The setup cell's one seed line (DESIGN.md: one setup cell with ``rng = make_rng(SEED)``).
SEED_LINE = re.compile(r"^SEED = \d+$", flags=re.M)


def notebooks(prefixes=()) -> list[Path]:
    found = sorted((common.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not prefixes or any(p.name.startswith(x) for x in prefixes)]


def kernel_status(pid: int) -> dict[str, float]:
    """``VmHWM`` and ``VmRSS`` of process ``pid``, in MB (10⁶ bytes)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0]) * 1024 / 1e6
    return out


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (not gone, not a zombie)."""
    try:
        state = [x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("State:")]
    except OSError:
        return False
    return bool(state) and "zombie" not in state[0]


def with_seed(nb, seed: int):
    """``nb`` with its setup cell's ``SEED = N`` line replaced by ``SEED = seed`` (exactly one such line)."""
    hits = [c for c in nb.cells if c.cell_type == "code" and SEED_LINE.search(c.source)]
    if len(hits) != 1:
        raise ValueError(f"expected one `SEED = N` line in the notebook's code, found {len(hits)}")
    hits[0].source = SEED_LINE.sub(f"SEED = {int(seed)}", hits[0].source)
    return nb


@dataclass
class Run:
    """One notebook executed: memory in MB, the cell where the peak rose most, seconds, the error if any."""

    name: str
    peak_mb: float = 0.0
    kept_mb: float = 0.0
    peak_cell: int = -1
    peak_cell_rise_mb: float = 0.0
    seconds: float = 0.0
    error: str = ""
    pid: int = 0
    trace: list = field(default_factory=list, repr=False)  # (cell index, VmHWM, VmRSS, first source line)
    client: object = field(default=None, repr=False)

    def close(self) -> None:
        """Shut the kernel down (``execute(..., keep=True)`` leaves it running)."""
        if self.client is not None:
            try:
                self.client._cleanup_kernel()
            finally:
                self.client = None


def execute(path: Path, seed: int | None = None, address_limit: int | None = None, keep: bool = False,
            timeout: int = 900) -> Run:
    """Execute the stored notebook ``path`` top to bottom in a fresh kernel, reading its memory after each cell.

    ``seed`` replaces the setup cell's ``SEED``; ``address_limit`` (bytes) caps the kernel's address space
    (``RLIMIT_AS``, as ``ulimit -v`` does) from its start; ``keep`` leaves the kernel running (``Run.close``).
    A cell that raises ends the run with ``Run.error`` (the exception's name and message)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    if seed is not None:
        nb = with_seed(nb, seed)
    run = Run(path.stem)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.km = client.create_kernel_manager()
    start = time.perf_counter()
    client.start_new_kernel()
    try:
        run.pid = client.km.provisioner.pid
        if address_limit is not None:
            resource.prlimit(run.pid, resource.RLIMIT_AS, (address_limit, address_limit))
        client.start_new_kernel_client()
        before = kernel_status(run.pid)["VmHWM"]
        for index, cell in enumerate(nb.cells):
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as exc:
                run.error = f"cell {index}: {exc.ename}: {str(exc.evalue)[:300]}"
                run.peak_cell = index
                break
            finally:
                if alive(run.pid):
                    now = kernel_status(run.pid)
                    if now["VmHWM"] - before > run.peak_cell_rise_mb:
                        run.peak_cell, run.peak_cell_rise_mb = index, now["VmHWM"] - before
                    before = now["VmHWM"]
                    run.peak_mb, run.kept_mb = now["VmHWM"], now["VmRSS"]
                    run.trace.append((index, now["VmHWM"], now["VmRSS"], cell.source.strip().split("\n")[0][:70]))
            if not alive(run.pid):
                run.error = f"cell {index}: the kernel died"
                break
        run.seconds = time.perf_counter() - start
    except BaseException:
        client._cleanup_kernel()
        raise
    if keep and not run.error:
        run.client = client
    else:
        client._cleanup_kernel()
    return run


def run(prefixes=(), seed: int | None = None, trace: bool = False) -> list[common.Row]:
    out = []
    for path in notebooks(prefixes):
        r = execute(path, seed=seed)
        if trace:
            last = 0.0
            for index, hwm, rss, first in r.trace:
                if abs(rss - last) >= 5 or hwm > r.peak_mb - 1:
                    print(f"  {path.stem[:2]} cell {index:3d}: peak {hwm:6.0f} MB, now {rss:6.0f} MB  {first}")
                last = rss
        if r.error:
            out.append(common.Row(f"kernel memory {path.stem}", f"failed: {r.error}",
                                  f"peak < {PEAK_BUDGET_MB} MB, kept < {KEPT_BUDGET_MB} MB", False))
            continue
        ok = r.peak_mb < PEAK_BUDGET_MB and r.kept_mb < KEPT_BUDGET_MB
        out.append(common.Row(f"kernel memory {path.stem}",
                              f"peak {r.peak_mb:.0f} MB (cell {r.peak_cell}: +{r.peak_cell_rise_mb:.0f} MB); "
                              f"kept after the last cell {r.kept_mb:.0f} MB; {r.seconds:.0f} s",
                              f"peak < {PEAK_BUDGET_MB} MB, kept < {KEPT_BUDGET_MB} MB", ok))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*")
    parser.add_argument("--seed", type=int, default=None, help="replace the setup cell's SEED")
    parser.add_argument("--trace", action="store_true", help="print each cell that moved the memory")
    parser.add_argument("--glibc-default", action="store_true",
                        help="kernels without the fixed MALLOC_MMAP_THRESHOLD_ that make lab and Binder set")
    args = parser.parse_args(argv)
    import os

    if args.glibc_default:
        os.environ.pop("MALLOC_MMAP_THRESHOLD_", None)
    else:
        os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(MALLOC_MMAP_THRESHOLD))
    print(f"MALLOC_MMAP_THRESHOLD_ = {os.environ.get('MALLOC_MMAP_THRESHOLD_', '(glibc default: dynamic)')}")
    print(f"load average at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = run(args.prefixes, args.seed, args.trace)
    print(common.table(rows))
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
