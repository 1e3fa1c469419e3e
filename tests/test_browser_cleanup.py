"""However a test run or ``make lab`` ends, no server is left behind (issue 18 section 2, issue 27).

The servers of ``tests/browser_support.py`` and ``authoring/site/serve.py`` run in their own
session (so that the kernels they start can be killed with them), hence a signal sent to the
test run does not reach them: ``browser_support`` stops every server it started on SIGTERM (a CI
runner, ``timeout``), SIGINT (Ctrl-C), SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\\), and
Linux sends the server SIGTERM when the test process dies without a word (SIGKILL); the site
server exits when its parent is gone.

Here a real ``make test`` runs (its pytest command pointed at one long browser test that starts
a real ``jupyter lab`` with a kernel, and the site's static server), and gets each signal the
way a terminal delivers it -- to the whole foreground job, ``make`` and ``pytest`` -- or its
pytest is killed. Then no process of the servers may be left: the server, its session, its
kernel, the site server, each found by its own PID (and start time: a reused PID is not it).
Likewise ``make lab`` with a running kernel, when its terminal closes (SIGHUP to the job).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the servers' processes")]

BROWSER_TEST = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    sys.path.insert(0, {site_dir!r})
    import browser_support as bs
    from serve import SiteServer
    from test_browser_cleanup import children, identity

    def test_a_long_browser_test(tmp_path):
        root = tmp_path / "root"
        root.mkdir()
        site = tmp_path / "site"
        site.mkdir()
        (site / "index.html").write_text("<p>a site</p>")
        with bs.Server("lab", root, tmp_path) as server, SiteServer(site) as static:
            server.api("POST", "/api/kernels")
            deadline = time.monotonic() + 120
            while not (kernels := children(server.process.pid, "ipykernel")) and time.monotonic() < deadline:
                time.sleep(0.2)
            pids = {{"lab": server.process.pid, "kernels": kernels, "site": static.proc.pid}}
            record = {{k: [identity(p) for p in (v if isinstance(v, list) else [v])] for k, v in pids.items()}}
            Path({pid_file!r}).write_text(json.dumps(record))
            time.sleep(600)
""")


# -- processes, by PID and start time ------------------------------------------------------------

def _stat(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # fields from the state on: state, ppid, pgrp, session, ...


def identity(pid: int) -> list[int]:
    """``[pid, start time]``: a PID the system reuses later is a different process."""
    fields = _stat(pid)
    return [pid, int(fields[19]) if fields else -1]


def alive(ident) -> bool:
    pid, start = ident
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z" and int(fields[19]) == start


def children(parent: int, needle: str = "") -> list[int]:
    """PIDs of the live children of ``parent`` whose command line contains ``needle``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) and fields[0] != "Z" \
                and int(fields[1]) == parent:
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if needle in cmdline:
                found.append(int(entry.name))
    return found


def session(sid: int) -> list[int]:
    """PIDs of the live processes of session ``sid``."""
    return [int(e.name) for e in Path("/proc").iterdir()
            if e.name.isdigit() and (f := _stat(int(e.name))) and f[0] != "Z" and int(f[3]) == sid]


def wait_gone(idents, sid: int | None, seconds: float = 45) -> list:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [i for i in idents if alive(i)] + ([f"session {sid}: {session(sid)}"] if sid and session(sid) else [])
        if not left:
            return []
        time.sleep(0.5)
    return left


def kill_all(idents) -> None:
    for pid, _ in [i for i in idents if alive(i)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}


# -- a make test run ended from outside ----------------------------------------------------------

SIGNALS = {"SIGHUP": signal.SIGHUP, "SIGQUIT": signal.SIGQUIT, "SIGTERM": signal.SIGTERM,
           "SIGINT": signal.SIGINT, "SIGKILL": signal.SIGKILL}


@pytest.mark.parametrize("how", ["SIGHUP", "SIGQUIT", "SIGTERM", "SIGINT", "SIGKILL"])
def test_a_make_test_run_ended_from_outside_leaves_no_server(tmp_path, how):
    """The signal goes to make's whole process group (as from a terminal); SIGKILL to pytest alone."""
    pid_file = tmp_path / "servers.json"
    test_file = tmp_path / "test_long_browser.py"
    test_file.write_text(BROWSER_TEST.format(tests=str(TESTS), site_dir=str(ROOT / "authoring" / "site"),
                                             pid_file=str(pid_file)))
    pytest_cmd = f"{sys.executable} -m pytest -q -p no:randomly -p no:cacheprovider {test_file}"
    # `make test` with its pytest command pointed at the one test (-o: never rebuild .venv here)
    run = subprocess.Popen(["make", "--no-print-directory", "-o", ".venv/.installed", "test", f"PYTEST={pytest_cmd}"],
                           cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    idents: list = []
    try:
        deadline = time.monotonic() + 240
        while not pid_file.exists() or not pid_file.read_text():
            assert run.poll() is None, run.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the lab server did not start within 240 s"
            time.sleep(0.5)
        record = json.loads(pid_file.read_text())
        idents = [i for v in record.values() for i in v]
        assert record["kernels"], "the lab server started a kernel"
        assert all(alive(i) for i in idents), record
        lab = record["lab"][0][0]
        if how == "SIGKILL":
            (pytest_pid,) = children(run.pid, "pytest")
            os.kill(pytest_pid, signal.SIGKILL)
        else:
            os.killpg(run.pid, SIGNALS[how])  # make and pytest: the terminal's foreground job
        run.communicate(timeout=90)
        left = wait_gone(idents, lab)
        assert not left, f"{how} to `make test` left these server processes running: {left}"
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        kill_all(idents)


# -- make lab, its terminal closed ---------------------------------------------------------------

def test_make_lab_leaves_nothing_when_its_terminal_closes(tmp_path):
    """``make lab`` with a running kernel; SIGHUP to its job (what a shell sends when its terminal
    closes): the server, the kernel and the server's runtime files are gone."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = _env()
    for var, name in {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTER_DATA_DIR": "data",
                      "JUPYTERLAB_SETTINGS_DIR": "lab-settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
                      "IPYTHONDIR": "ipython"}.items():
        (tmp_path / name).mkdir()
        env[var] = str(tmp_path / name)
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    (tmp_path / "config" / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 0, "open_browser": False},
        "IdentityProvider": {"token": token}}))
    # its terminal: a pseudo-terminal, read by a thread; closing it makes every later write fail (EIO)
    terminal, tty = os.openpty()
    run = subprocess.Popen(["make", "--no-print-directory", "-o", ".venv/.installed", "lab"], cwd=ROOT, env=env,
                           stdin=tty, stdout=tty, stderr=tty, start_new_session=True)
    os.close(tty)
    output = bytearray()

    def read_terminal():
        while True:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:
                return
            if not chunk:
                return
            output.extend(chunk)

    threading.Thread(target=read_terminal, daemon=True).start()
    idents: list = []
    base = f"http://127.0.0.1:{port}"

    def api(method: str, path: str):
        req = urllib.request.Request(base + path, method=method, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")

    try:
        deadline = time.monotonic() + 180
        while True:
            assert run.poll() is None, output.decode(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "make lab did not answer within 180 s"
            try:
                api("GET", "/api/status")
                break
            except OSError:
                time.sleep(0.5)
        (lab,) = children(run.pid, "jupyter")
        api("POST", "/api/kernels")
        while not (kernels := children(lab, "ipykernel")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert kernels, "the server started a kernel"
        idents = [identity(p) for p in [run.pid, lab, *kernels]]
        assert list((tmp_path / "runtime").glob("jpserver-*.json")), "the server wrote its runtime file"
        os.close(terminal)  # the terminal closes: its shell sends SIGHUP to the job
        terminal = -1
        os.killpg(run.pid, signal.SIGHUP)
        run.wait(timeout=90)
        left = wait_gone(idents, None)
        assert not left, f"SIGHUP to `make lab` left these processes running: {left}"
        runtime = sorted(p.name for p in (tmp_path / "runtime").iterdir() if p.suffix in (".json", ".html"))
        assert runtime == [], f"SIGHUP to `make lab` left the server's runtime files: {runtime}"
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        kill_all(idents)
        if terminal >= 0:
            os.close(terminal)
