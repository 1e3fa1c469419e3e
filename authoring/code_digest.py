"""The digest of the code and data a notebook's stored outputs were made with (standard library only).

Every built notebook records, in its metadata under :data:`KEY`, the digest of ``sdpa_helpers/**/*.py``,
the explorers' front end ``sdpa_helpers/**/*.js`` (stored in each notebook's widget state) and
``sdpa_helpers/data/*`` it ran against (:func:`code_digest`). A notebook whose stored digest is not
today's was made by older code: its figures, fallback PNGs and widget state may show what the package
no longer draws, even where strict nbval (text only) passes. ``authoring/build.py --check`` and
``tests/test_stale_outputs.py`` name such notebooks; the site build calls :func:`refuse_mixed_code`
before it renders explorer frames from today's code beside the notebooks' stored static figures.

Normalised: files by their path relative to the repository (POSIX), in sorted order; ``.py`` and ``.js``
text with CRLF/CR turned into LF (a Windows checkout digests alike); data files as bytes.
``__pycache__`` and anything else outside ``data/`` are left out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The notebook metadata key holding the digest of the code its outputs were made with.
KEY = "sdpa_code_digest"
#: The package's text files the digest covers (line endings normalised): code, and the front end.
TEXT = (".py", ".js")


def digested_files(root: Path = ROOT) -> list[Path]:
    """The files the digest covers, sorted by their relative path."""
    package = root / "sdpa_helpers"
    files = [p for ext in TEXT for p in package.rglob(f"*{ext}") if "__pycache__" not in p.parts]
    files += [p for p in (package / "data").glob("*") if p.is_file()]
    return sorted(set(files), key=lambda p: p.relative_to(root).as_posix())


def code_digest(root: Path = ROOT) -> str:
    """``"sha256:..."`` of the package code and data under ``root`` (see the module docstring).

    >>> code_digest().startswith("sha256:") and len(code_digest()) == 71
    True
    """
    h = hashlib.sha256()
    for path in digested_files(root):
        data = path.read_bytes()
        if path.suffix in TEXT:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        rel = path.relative_to(root).as_posix().encode()
        h.update(len(rel).to_bytes(8, "big") + rel + len(data).to_bytes(8, "big") + data)
    return "sha256:" + h.hexdigest()


def stored_digest(notebook: Path) -> str | None:
    """The digest a built notebook recorded (None: built before digests, or not built by authoring/build.py)."""
    meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    value = meta.get(KEY)
    return value if isinstance(value, str) else None


def stale_notebooks(notebooks: list[Path], root: Path = ROOT) -> list[Path]:
    """The notebooks whose stored outputs were not made with today's code and data under ``root``."""
    today = code_digest(root)
    return [nb for nb in notebooks if stored_digest(nb) != today]


def refuse_mixed_code(notebooks: list[Path], root: Path = ROOT) -> None:
    """Raise ``RuntimeError`` naming every notebook whose stored outputs come from other code than today's.

    The site build calls this before it renders explorer frames with today's code: a page would
    otherwise show a static figure from the stored notebook beside frames from different code.
    """
    stale = stale_notebooks(notebooks, root)
    if stale:
        names = " ".join(p.name[:2] for p in stale)
        raise RuntimeError(
            f"the stored outputs of {', '.join(p.name for p in stale)} were made with other code than today's "
            f"sdpa_helpers: a page would mix their static figures with explorer frames drawn now. "
            f"Rebuild them first: python authoring/build.py {names}")
