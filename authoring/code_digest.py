"""The digest of the code and data a notebook's stored outputs were made with (standard library only).

Every built notebook records, in its metadata, the package files it ran against (:data:`FILES_KEY`: paths
relative to the repository) and the digest of exactly those files (:data:`KEY`, :func:`code_digest`). The
list is what the notebook's kernel loaded -- the ``sdpa_helpers`` modules in its ``sys.modules`` after the
last cell (``authoring/build.py`` asks it, :data:`LOADED_MODULES`) -- plus, always, the explorers' front end
``sdpa_helpers/**/*.js`` (stored in the widget state) and ``sdpa_helpers/data/*`` (:func:`always_digested`):
simple beats clever. So a change to a module a notebook loaded stales that notebook and no other, and a
new module no notebook imports stales none.

A notebook is stale (:func:`why_stale`) when it records no list or no digest, when a file it lists no
longer exists, or when the digest over its list is not today's: its figures, fallback PNGs and widget
state may show what the package no longer draws, even where strict nbval (text only) passes.
``authoring/build.py --check`` and ``tests/test_stale_outputs.py`` name such notebooks; the site build
calls :func:`refuse_mixed_code` before it renders explorer frames from today's code beside the notebooks'
stored static figures.

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
#: The notebook metadata key holding the files that digest covers (relative POSIX paths, sorted).
FILES_KEY = "sdpa_code_files"
#: The package's text files the digest covers (line endings normalised): code, and the front end.
TEXT = (".py", ".js")

#: Run in the notebook's kernel after its last cell: the files of the ``sdpa_helpers`` modules it loaded,
#: as a JSON list of absolute paths on one line of stdout.
LOADED_MODULES = (
    "import json as _j, os as _o, sys as _s\n"
    "print(_j.dumps(sorted({_o.path.realpath(m.__file__) for n, m in list(_s.modules.items())\n"
    "    if (n == 'sdpa_helpers' or n.startswith('sdpa_helpers.')) and getattr(m, '__file__', None)})))"
)


def package_files(root: Path = ROOT) -> list[Path]:
    """Every file a digest may cover: the package's ``.py`` and ``.js`` and ``data/*``, sorted by path."""
    package = root / "sdpa_helpers"
    files = [p for ext in TEXT for p in package.rglob(f"*{ext}") if "__pycache__" not in p.parts]
    files += [p for p in (package / "data").glob("*") if p.is_file()]
    return sorted(set(files), key=lambda p: p.relative_to(root).as_posix())


def always_digested(root: Path = ROOT) -> list[str]:
    """The files every notebook's list holds, whatever it imported: the front end and the data."""
    return [p.relative_to(root).as_posix() for p in package_files(root)
            if p.suffix == ".js" or p.parent == root / "sdpa_helpers" / "data"]


def notebook_files(loaded: list[str], root: Path = ROOT) -> list[str]:
    """The sorted list a notebook records: the modules its kernel ``loaded`` (absolute paths, as
    :data:`LOADED_MODULES` prints them) relative to ``root``, and :func:`always_digested`.

    A module loaded from outside ``root/sdpa_helpers`` (an installed copy, not this repository's) is an
    error: the outputs would come from code the repository does not hold."""
    package = (root / "sdpa_helpers").resolve()
    rel = set(always_digested(root))
    for name in loaded:
        path = Path(name).resolve()
        if not path.is_relative_to(package):
            raise RuntimeError(f"the notebook's kernel imported {path}, outside {package}: install the package "
                               f"from this repository (make .venv/.installed, an editable install) or set PYTHONPATH")
        rel.add(path.relative_to(root.resolve()).as_posix())
    return sorted(rel)


def code_digest(root: Path = ROOT, files: list[str] | None = None) -> str:
    """``"sha256:..."`` of ``files`` (paths relative to ``root``; default: every file of
    :func:`package_files`), normalised as the module docstring says. A listed file that does not exist
    raises ``FileNotFoundError``.

    >>> code_digest().startswith("sha256:") and len(code_digest()) == 71
    True
    >>> code_digest(files=["sdpa_helpers/theory.py"]) != code_digest(files=["sdpa_helpers/sampling.py"])
    True
    """
    rels = ([p.relative_to(root).as_posix() for p in package_files(root)] if files is None
            else sorted(set(files)))
    h = hashlib.sha256()
    for rel in rels:
        path = root / rel
        data = path.read_bytes()
        if path.suffix in TEXT:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        name = rel.encode()
        h.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return "sha256:" + h.hexdigest()


def record(metadata: dict, files: list[str], root: Path = ROOT) -> None:
    """Store ``files`` and their digest in a notebook's ``metadata`` (what the build does)."""
    metadata[FILES_KEY] = sorted(set(files))
    metadata[KEY] = code_digest(root, metadata[FILES_KEY])


def recorded(notebook: Path) -> tuple[list[str] | None, str | None]:
    """``(files, digest)`` a built notebook recorded (None where it recorded nothing: built before them,
    or not built by authoring/build.py)."""
    meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    files, digest = meta.get(FILES_KEY), meta.get(KEY)
    files = files if isinstance(files, list) and all(isinstance(f, str) for f in files) else None
    return files, digest if isinstance(digest, str) else None


def stored_digest(notebook: Path) -> str | None:
    """The digest a built notebook recorded (None: it recorded none)."""
    return recorded(notebook)[1]


def why_stale(notebook: Path, root: Path = ROOT) -> str | None:
    """Why ``notebook``'s stored outputs may not be what today's code under ``root`` makes (None: they are
    today's). A recorded file that no longer exists, or no record at all, is stale."""
    files, digest = recorded(notebook)
    if files is None or digest is None:
        return "it records no list of the code it ran against (built before per-notebook digests)"
    gone = [f for f in files if not (root / f).is_file()]
    if gone:
        return f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} gone since it was built"
    if code_digest(root, files) != digest:
        return "its outputs were made by other sdpa_helpers code or data than today's"
    return None


def stale_notebooks(notebooks: list[Path], root: Path = ROOT) -> list[Path]:
    """The notebooks whose stored outputs were not made with today's code and data under ``root``."""
    return [nb for nb in notebooks if why_stale(nb, root)]


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
