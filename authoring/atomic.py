"""One way to write a file the build makes: whole or not at all (the notebook build and the site build share it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader, or a build interrupted by Ctrl-C, a kill or a full disk, sees the old
    file or the new one, never a truncated one."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
