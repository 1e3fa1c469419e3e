"""A browser test stopped from outside leaves no server behind (issue 18, section 2).

``timeout`` and CI runners stop a test run with SIGTERM (Ctrl-C sends SIGINT). The servers of
``tests/browser_support.py`` run in their own session (so that the kernels they start can be
killed with them), hence a signal to pytest does not reach them: browser_support stops every
server it started on SIGTERM and SIGINT, and at exit. Here a pytest subprocess runs a browser
test that starts a real ``jupyter lab``, gets SIGTERM (then another gets SIGINT) while it runs,
and no process of the server's session may be left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BROWSER_TEST = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    import browser_support as bs

    def test_a_long_browser_test(tmp_path):
        root = tmp_path / "root"
        root.mkdir()
        with bs.Server("lab", root, tmp_path) as server:
            Path({pid_file!r}).write_text(str(server.process.pid))
            time.sleep(300)
""")


def _session_alive(sid: int) -> list[int]:
    """PIDs of live processes of session ``sid`` (zombies excluded)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the server's processes")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_a_running_browser_test_leaves_no_server(tmp_path, sig):
    pid_file = tmp_path / "server.pid"
    test_file = tmp_path / "test_long_browser.py"
    test_file.write_text(BROWSER_TEST.format(tests=str(TESTS), pid_file=str(pid_file)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                            str(test_file)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not pid_file.exists() or not pid_file.read_text():
            assert run.poll() is None, run.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the lab server did not start within 180 s"
            time.sleep(0.5)
        server = int(pid_file.read_text())
        assert _session_alive(server), "the server runs in its own session"
        run.send_signal(sig)
        run.communicate(timeout=60)
        deadline = time.monotonic() + 30
        while _session_alive(server) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _session_alive(server)
        assert not left, f"{sig.name} to pytest left the server's processes {left} running"
    finally:
        if run.poll() is None:
            run.kill()
        if pid_file.exists() and pid_file.read_text():
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
