"""The GitHub Actions workflow: valid, and it runs `make test` on push and pull request.

Validated against the GitHub workflow JSON schema that check-jsonschema vendors
(``--builtin-schema vendor.github-workflows``): offline, nothing is downloaded.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def triggers(wf) -> dict:
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as True
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on or {})


def steps(wf):
    for job in wf["jobs"].values():
        yield from job.get("steps", [])


def check_jsonschema(path: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("check_jsonschema")
    exe = Path(sys.executable).parent / "check-jsonschema"
    cmd = [str(exe)] if exe.exists() else [shutil.which("check-jsonschema") or "check-jsonschema"]
    return subprocess.run([*cmd, "--builtin-schema", "vendor.github-workflows", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_runs_on_push_and_pull_request(workflow):
    on = triggers(workflow)
    assert "push" in on and "pull_request" in on
    for event in ("push", "pull_request"):  # no branch/path filter that would skip a change
        assert not (on[event] or {}).get("paths") and not (on[event] or {}).get("branches")


def test_runs_make_test_on_ubuntu_with_python_311(workflow):
    runs = [s["run"] for s in steps(workflow) if "run" in s]
    assert any(line.strip() == "make test" for run in runs for line in run.splitlines()), runs
    job = next(j for j in workflow["jobs"].values() if any("make test" in s.get("run", "") for s in j["steps"]))
    assert job["runs-on"] == "ubuntu-latest"
    setup = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python@")]
    assert len(setup) == 1 and str(setup[0]["with"]["python-version"]) == "3.11"


def test_python_version_matches_binder(workflow):
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()  # e.g. python-3.11
    setup = next(s for s in steps(workflow) if str(s.get("uses", "")).startswith("actions/setup-python@"))
    assert runtime == f"python-{setup['with']['python-version']}", "CI tests the Python that Binder runs"


def test_browser_tests_get_a_browser(workflow):
    """The browser tests would skip without one: the workflow must point SDPA_CHROMIUM at Chrome."""
    text = WORKFLOW.read_text()
    assert "SDPA_CHROMIUM=" in text and "GITHUB_ENV" in text
    assert "playwright install" not in text, "never download a browser"


def test_actions_are_pinned_to_a_version(workflow):
    for step in steps(workflow):
        if "uses" in step:
            name, _, ref = step["uses"].partition("@")
            assert ref, f"{name} has no version"


@pytest.mark.parametrize("path", sorted((ROOT / ".github" / "workflows").glob("*.yml")), ids=lambda p: p.name)
def test_actions_are_pinned_by_full_commit_sha(path):
    """A tag (``@v4``) can be moved to other code by whoever controls the action; a commit cannot.
    Each ``uses:`` names a 40-hex-digit commit, with the release it is in a comment beside it."""
    wf = yaml.safe_load(path.read_text(encoding="utf-8"))
    uses = [s["uses"] for job in wf["jobs"].values() for s in job.get("steps", []) if "uses" in s]
    uses += [job["uses"] for job in wf["jobs"].values() if "uses" in job]  # reusable workflows
    assert uses, f"{path.name} uses no action"
    for use in uses:
        name, _, ref = use.partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{path.name}: {name}@{ref} is not pinned by a full commit SHA"
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.match(r"\s*(- )?uses:", line):
            assert re.search(r"@[0-9a-f]{40}\s+# v\d+(\.\d+)*", line), f"{path.name}: no release comment in {line!r}"


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_valid_against_the_github_workflow_schema():
    out = check_jsonschema(WORKFLOW)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok" in out.stdout.lower()


@pytest.mark.slow  # several seconds: in `make test`, not the edit-test loop
def test_the_schema_check_catches_a_broken_workflow(tmp_path):
    """The validator really validates: the same workflow with `runs-on` misspelt fails."""
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "runs-on:" in text
    path = tmp_path / "broken.yml"
    path.write_text(text.replace("runs-on:", "runs_on:"), encoding="utf-8")
    out = check_jsonschema(path)
    assert out.returncode != 0, out.stdout
    assert "runs-on" in out.stdout + out.stderr
