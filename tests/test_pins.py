"""What ``make test`` installs is pinned exactly (issue 37 item 7): the libraries by
binder/requirements.txt (the constraints), the test and lint tools and what they bring by
requirements-test.txt. A new release of pytest, ruff, mypy or Playwright never changes what the
suite checks until someone updates the pins on purpose."""

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
#: Installed by venv/ensurepip itself, not by the requirement files.
BOOTSTRAP = {"pip", "setuptools", "wheel"}


def requirements(path: Path) -> list[Requirement]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def exact(req: Requirement) -> str | None:
    specs = list(req.specifier)
    return specs[0].version if len(specs) == 1 and specs[0].operator == "==" else None


def pins() -> dict[str, str]:
    found = {}
    for path in (ROOT / "binder" / "requirements.txt", ROOT / "requirements-test.txt"):
        for req in requirements(path):
            if exact(req):
                found[canonicalize_name(req.name)] = exact(req)
    return found


def test_every_test_tool_is_pinned_exactly():
    binder = {canonicalize_name(r.name) for r in requirements(ROOT / "binder" / "requirements.txt")}
    floating = [str(r) for r in requirements(ROOT / "requirements-test.txt")
                if not exact(r) and canonicalize_name(r.name) not in binder]
    assert not floating, f"requirements-test.txt lets these float (neither == nor in the constraints): {floating}"
    names = {canonicalize_name(r.name) for r in requirements(ROOT / "requirements-test.txt")}
    for tool in ("pytest", "ruff", "mypy", "playwright", "hypothesis", "nbval", "check-jsonschema"):
        assert tool in names, tool


def test_the_test_requirements_are_installed_under_the_constraints():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"pip install .*-r requirements-test\.txt .*-c binder/requirements\.txt", makefile)


@pytest.mark.pinned
def test_everything_installed_is_pinned_at_its_installed_version():
    """Each distribution in this environment is pinned, at the version installed (the package
    itself and the venv's own bootstrap excepted)."""
    pinned = pins()
    problems = []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in BOOTSTRAP or name == "sdpa-helpers":
            continue
        if name not in pinned:
            problems.append(f"{name}=={dist.version} is not pinned")
        elif pinned[name] != dist.version:
            problems.append(f"{name} is {dist.version}, pinned {pinned[name]}")
    assert not problems, "\n".join(sorted(problems))


def test_the_lowest_versions_run_uses_the_same_tool_pins():
    """``make test-lowest`` installs its tools on the command line (LOWEST_TOOLS): exact, and the
    same versions as requirements-test.txt where both name a tool."""
    line = re.search(r"^LOWEST_TOOLS := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    lowest = [Requirement(word.strip('"')) for word in line.split("#")[0].split()]
    assert lowest and all(exact(r) for r in lowest), line
    tested = {canonicalize_name(r.name): exact(r) for r in requirements(ROOT / "requirements-test.txt") if exact(r)}
    for req in lowest:
        name = canonicalize_name(req.name)
        if name in tested:
            assert exact(req) == tested[name], f"{name}: {exact(req)} in LOWEST_TOOLS, {tested[name]} tested"
