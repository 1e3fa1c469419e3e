"""``make app`` (Voila, through ``scripts/serve_app.py``) serves only this user on this machine
(issue 37 items 2, 3 and 7).

A real server on 127.0.0.1 and a free port, in its own session, stopped by its PID -- also when
the test run is stopped by a signal or killed (``tests/browser_support.Server``), under a memory
and CPU-time limit (a guard that failed must not take the machine with it). It serves a scratch
folder with one tiny notebook whose only output is an image widget (binary buffers: what an
explorer sends after a slider move). Plain HTTP (urllib) and a plain websocket client check:

- a request without the token, or with a foreign ``Host`` (another user's browser, a web page
  by DNS rebinding), is refused before any kernel starts; with the token the notebook renders;
  the images beside the notebooks (Voila's ``/voila/files/``, a bare Tornado handler) are behind the
  same checks, and the login cookie is ``SameSite=Strict``;
- the legacy-websocket hang. Voila 0.5.13's ``VoilaKernelWebsocketHandler.write_message``
  reads every binary message it sends as the v1 websocket protocol
  (``voila/tornado/kernel_websocket_handler.py``, ``read_header_from_binary_message``, lines
  17-21: the first 8 bytes, little-endian, as a count of offsets, then a list of that many). On a
  plain (non-v1) kernel websocket, a message with buffers is sent in the legacy format, whose
  first 8 bytes are two big-endian uint32s (buffer count 2, first offset 12): read as one
  little-endian integer, 0x0C00000002000000 = 8.6e17. The list comprehension runs on the event
  loop for good: the server answers nothing, grows about 20 MB/s, and ignores SIGTERM (its
  handler only schedules a stop on the blocked loop). One ``request_state`` comm message (or
  one slider move) on a plain websocket triggers it. ``serve_app.py`` refuses kernel websockets
  that do not ask for the v1 protocol (HTTP 400, before the socket opens); the v1 path is
  unchanged (its binary replies, buffers included, still arrive);
- the kernels are reached over Unix sockets in Voila's own folder (mode 700), not TCP ports;
- SIGHUP (terminal closed), SIGQUIT, SIGTERM and SIGINT to ``make app`` leave no server, kernel,
  ``$TMPDIR/voila_*`` connection folder or browser-open file behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))
import browser_support as bs  # noqa: E402
from test_browser_cleanup import alive, children, identity, kill_all, wait_gone  # noqa: E402

SCRIPT = ROOT / "scripts" / "serve_app.py"
V1 = "v1.kernel.websocket.jupyter.org"
#: The server runs under these limits (its kernels inherit them): if the hang comes back, it ends
#: in a MemoryError or SIGXCPU instead of eating the machine, and the test fails on a timeout.
MEMORY_LIMIT = 3 * 2**30
CPU_LIMIT = 240  # seconds
LIMITED = f"""
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))
resource.setrlimit(resource.RLIMIT_CPU, ({CPU_LIMIT}, {CPU_LIMIT}))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the server's processes")]

TINY = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "tiny", "metadata": {}, "outputs": [],
               "source": "import ipywidgets\nprint('tiny app ran')\n"
                         "ipywidgets.Image(value=b'\\x89PNG' + bytes(64), format='png')"}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


PNG = bytes.fromhex("89504e470d0a1a0a") + b"a learner's own image"


class AppServer(bs.Server):
    """``scripts/serve_app.py`` (what ``make app`` runs) under memory and CPU limits."""

    def command(self) -> list[str]:
        return [sys.executable, "-c", LIMITED, str(SCRIPT), "--no-browser", f"--port={self.port}",
                "--Voila.port_retries=0", str(self.root)]

    def ready_url(self) -> str:
        return f"{self.base}/login"  # answers without the token

    def printed_token(self) -> str:
        match = re.search(rf"http://127\.0\.0\.1:{self.port}/\?token=([0-9a-f]{{32,}})", self.log_path.read_text())
        assert match, f"the server printed no URL with a token:\n{self.log_tail()}"
        return match.group(1)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url: str, host: str | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """(status, Location header, body) of a GET, redirects not followed."""
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with OPENER.open(req, timeout=timeout) as r:
            return r.status, r.headers.get("Location", ""), r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location", ""), e.read().decode(errors="replace")


@pytest.fixture
def app(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    (root / "tiny.ipynb").write_text(json.dumps(TINY))
    (root / "figures").mkdir()
    (root / "figures" / "private.png").write_bytes(PNG)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where Voila puts its voila_* folder
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    monkeypatch.delenv("JUPYTER_TOKEN_FILE", raising=False)
    with AppServer("app", root, tmp_path / "home") as server:
        yield server


def kernels_of(server: AppServer) -> list[int]:
    return children(server.process.pid, "ipykernel")


def test_only_the_token_holder_on_this_machine_gets_in(app):
    token = app.printed_token()
    listening = {(c.laddr.ip, c.laddr.port) for c in __import__("psutil").Process(app.process.pid).net_connections()
                 if c.status == "LISTEN"}
    assert listening == {("127.0.0.1", app.port)}, listening
    page = f"{app.base}/voila/render/tiny.ipynb"
    image = f"{app.base}/voila/files/figures/private.png"  # Voila's own file handler: no token, no Host check
    refused = {
        "an image, no token": get(image),
        "an image, a foreign Host": get(f"{image}?token={token}", host=f"attacker.example:{app.port}"),
        "no token (tree)": get(f"{app.base}/"),
        "no token (render)": get(page),
        "a wrong token": get(f"{page}?token={'0' * len(token)}"),
        "a foreign Host, with the token": get(f"{page}?token={token}", host=f"attacker.example:{app.port}"),
        "a foreign Host, tree": get(f"{app.base}/?token={token}", host="attacker.example"),
        "a name that is not localhost": get(f"{page}?token={token}", host=f"{socket.gethostname()}.:{app.port}"),
    }
    for what, (status, location, _) in refused.items():
        assert status in (401, 403) or (status == 302 and "/login" in location), f"{what}: {status} {location}"
    time.sleep(1)
    assert kernels_of(app) == [], "a refused request started a kernel"
    with urllib.request.urlopen(f"{page}?token={token}", timeout=60) as r:
        status, body, cookies = r.status, r.read().decode(), r.headers.get_all("Set-Cookie")
    assert status == 200 and "tiny app ran" in body
    assert kernels_of(app), "the rendered notebook runs in a kernel"
    login = [c for c in cookies if c.startswith("username-")]
    assert login and all("SameSite=Strict" in c and "HttpOnly" in c for c in login), cookies
    with urllib.request.urlopen(f"{image}?token={token}", timeout=30) as r:
        assert r.read() == PNG
    for host in (f"localhost:{app.port}", f"127.0.0.1:{app.port}"):
        assert get(f"{app.base}/?token={token}", host=host)[0] == 200, host


def _kernel_and_widget(server: AppServer, token: str) -> tuple[str, str]:
    status, _, page = get(f"{server.base}/voila/render/tiny.ipynb?token={token}")
    assert status == 200, page[-2000:]
    return (re.search(r'kernelId": "([0-9a-f-]+)"', page).group(1),
            re.search(r'model_id": "([0-9a-f]+)"', page).group(1))


def _request_state(widget: str) -> tuple[dict, dict]:
    header = {"msg_id": uuid.uuid4().hex, "msg_type": "comm_msg", "session": "test", "username": "",
              "date": "", "version": "5.3"}
    return header, {"comm_id": widget, "data": {"method": "request_state"}}


def v1_message(channel: str, header: dict, content: dict) -> bytes:
    parts = [json.dumps(x).encode() for x in (header, {}, {}, content)]
    offsets = [8 * (1 + len(parts) + 2)]
    for chunk in [channel.encode(), *parts]:
        offsets.append(offsets[-1] + len(chunk))
    return (len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets)
            + channel.encode() + b"".join(parts))


def responsive(server: AppServer, seconds: float = 8) -> list[str]:
    """Problems seen while asking the server for a page, once a second, each within 5 s."""
    problems = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        start = time.monotonic()
        try:
            status = get(f"{server.base}/login", timeout=5)[0]
            if status != 200:
                problems.append(f"status {status}")
        except OSError as e:
            problems.append(f"no answer within 5 s ({e!r}) after {time.monotonic() - start:.1f} s")
        time.sleep(1)
    return problems


def test_a_plain_kernel_websocket_cannot_hang_the_server(app):
    websocket = pytest.importorskip("websocket")  # websocket-client: a jupyter_server requirement
    token = app.printed_token()
    kernel, widget = _kernel_and_widget(app, token)
    url = f"ws://127.0.0.1:{app.port}/api/kernels/{kernel}/channels?session_id=test&token={token}"
    rss_before = __import__("psutil").Process(app.process.pid).memory_info().rss
    # the attack: a plain websocket, one comm message whose reply carries a buffer
    try:
        ws = websocket.create_connection(url, timeout=10)
    except websocket.WebSocketBadStatusException as e:
        assert e.status_code == 400, e  # refused before it opens
    else:
        header, content = _request_state(widget)
        ws.send(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                            "channel": "shell"}))
        time.sleep(2)
        ws.close(timeout=2)
    problems = responsive(app)
    rss_after = __import__("psutil").Process(app.process.pid).memory_info().rss
    assert not problems, f"after one message on a plain kernel websocket the server hangs: {problems[:3]}"
    assert rss_after - rss_before < 200 * 2**20, f"the server grew by {(rss_after - rss_before) / 2**20:.0f} MB"
    # the v1 protocol (what Voila's page uses) still works, binary replies with buffers included
    ws = websocket.create_connection(url, timeout=10, subprotocols=[V1])
    try:
        assert ws.getsubprotocol() == V1
        header, content = _request_state(widget)
        ws.send_binary(v1_message("shell", header, content))
        deadline = time.monotonic() + 30
        replies = []
        while time.monotonic() < deadline:
            reply = ws.recv()
            offsets = int.from_bytes(reply[:8], "little")
            assert 2 < offsets < 64, offsets
            replies.append(offsets)
            if offsets > 6:  # channel + header, parent, metadata, content + a buffer: the widget's image
                break
        assert replies and replies[-1] > 6, f"no reply with a buffer: {replies}"
    finally:
        ws.close(timeout=2)
    assert not responsive(app, seconds=2)


def test_a_config_asking_for_the_legacy_protocol_cannot_bring_it_back(tmp_path, monkeypatch):
    """``ZMQChannelsWebsocketConnection.kernel_ws_protocol = ""`` in a config file selects the legacy
    protocol even for a client that offers v1; the launcher's connection class ignores it."""
    websocket = pytest.importorskip("websocket")
    root = tmp_path / "root"
    root.mkdir()
    (root / "tiny.ipynb").write_text(json.dumps(TINY))
    (root / "voila.json").write_text(json.dumps({"ZMQChannelsWebsocketConnection": {"kernel_ws_protocol": ""},
                                                 "Voila": {"ip": "0.0.0.0", "token": "",
                                                           "tornado_settings": {"allow_remote_access": True}}}))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with AppServer("app", root, tmp_path / "home") as server:
        token = server.printed_token()  # "" in the config does not turn the token off
        assert get(f"{server.base}/?token={token}", host="attacker.example")[0] == 403
        kernel, _ = _kernel_and_widget(server, token)
        url = f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels?session_id=test&token={token}"
        ws = websocket.create_connection(url, timeout=10, subprotocols=[V1])
        try:
            assert ws.getsubprotocol() == V1
        finally:
            ws.close(timeout=2)


# -- make app, stopped by a signal -----------------------------------------------------------

@pytest.mark.parametrize("how", ["SIGHUP", "SIGQUIT", "SIGTERM", "SIGINT"])
def test_make_app_stopped_by_a_signal_leaves_nothing_behind(tmp_path, how):
    """``make app`` with a kernel running and the browser opened; the signal to its job (as a
    terminal sends it: SIGHUP when it closes): the server, its kernel, its ``voila_*`` folder and its
    browser-open file are gone."""
    port = bs.free_port()
    env = bs.jupyter_env(tmp_path / "home")
    env = {k: v for k, v in env.items() if not k.startswith(("PYTEST", "JUPYTER_TOKEN", "MAKE"))}
    tmp = Path(tempfile.mkdtemp(prefix="app-", dir="/tmp"))  # short: Unix sockets for the kernels fit
    env["TMPDIR"] = str(tmp)
    runtime = Path(env["JUPYTER_RUNTIME_DIR"])
    # Voila reads its port from the config dir; a "browser" that opens nothing; and one tiny notebook
    # instead of the course's (a config's notebook_path wins over make's `notebooks`): a light kernel
    (tmp_path / "tiny.ipynb").write_text(json.dumps(TINY))
    (Path(env["JUPYTER_CONFIG_DIR"]) / "voila.json").write_text(json.dumps(
        {"Voila": {"port": port, "port_retries": 0, "browser": "/bin/true %s",
                   "root_dir": str(tmp_path), "notebook_path": str(tmp_path / "tiny.ipynb")}}))
    terminal, tty = os.openpty()
    run = subprocess.Popen(["make", "--no-print-directory", "-o", ".venv/.installed", "app"], cwd=ROOT, env=env,
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
    try:
        deadline = time.monotonic() + 120
        token = None
        while token is None:
            assert run.poll() is None, output.decode(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "make app did not print its URL within 120 s"
            match = re.search(rf"http://127\.0\.0\.1:{port}/\?token=([0-9a-f]+)", output.decode(errors="replace"))
            token = match and match.group(1)
            time.sleep(0.3)
        (server,) = children(run.pid, "serve_app")
        # the browser was opened through a file only this user can read, holding the token
        (opened,) = list(runtime.glob("voila-*-open.html"))
        assert opened.stat().st_mode & 0o777 == 0o600 and f"token={token}" in opened.read_text()
        status, _, body = get(f"http://127.0.0.1:{port}/?token={token}", timeout=120)
        assert status == 200 and "tiny app ran" in body, body[-2000:]
        kernels = children(server, "ipykernel")
        assert kernels, "rendering started a kernel"
        (folder,) = list(tmp.glob("voila_*"))
        assert folder.stat().st_mode & 0o777 == 0o700
        (connection,) = list(folder.glob("kernel-*.json"))
        assert json.loads(connection.read_text())["transport"] == "ipc", "kernels on Unix sockets, not TCP ports"
        idents = [identity(p) for p in [run.pid, server, *kernels]]
        if how == "SIGHUP":
            os.close(terminal)  # the terminal closes: its shell sends SIGHUP to the job
            terminal = -1
        os.killpg(run.pid, getattr(signal, how))
        run.wait(timeout=90)
        left = wait_gone(idents, None)
        assert not left, f"{how} to `make app` left these processes running: {left}"
        leftovers = sorted(p.name for p in tmp.iterdir()) + sorted(p.name for p in runtime.iterdir())
        assert leftovers == [], f"{how} to `make app` left these files: {leftovers}"
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        kill_all(idents)
        if terminal >= 0:
            os.close(terminal)
        shutil.rmtree(tmp, ignore_errors=True)
    assert all(not alive(i) for i in idents)


# -- the real page, in Chromium ----------------------------------------------------------------

SLIDER = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "slider", "metadata": {}, "outputs": [],
               "source": "import ipywidgets\n"
                         "s = ipywidgets.IntSlider(value=1, min=0, max=10, description='k')\n"
                         "out = ipywidgets.Label('kernel saw 1')\n"
                         "s.observe(lambda c: setattr(out, 'value', f\"kernel saw {c['new']}\"), 'value')\n"
                         "ipywidgets.VBox([s, out])"}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


@pytest.mark.browser
def test_the_page_works_through_the_launcher(tmp_path, monkeypatch):
    """Voila's own page, opened with the printed URL, talks to its kernel (v1 websocket, the
    Strict cookie): a slider moved in Chromium reaches the kernel, whose answer reaches the page."""
    if reason := bs.chromium_skip_reason():
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    (root / "slider.ipynb").write_text(json.dumps(SLIDER))
    tmp = Path(tempfile.mkdtemp(prefix="app-", dir="/tmp"))  # short: the kernel on Unix sockets, as make app
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    with AppServer("app", root, tmp_path / "home") as server, sync_playwright() as pw:
        token = server.printed_token()
        browser = bs.launch_chromium(pw)
        try:
            blocked: list = []
            page = bs.new_page(browser, blocked)
            sockets: list = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(f"{server.base}/?token={token}")  # the printed URL: the tree
            page.goto(f"{server.base}/voila/render/slider.ipynb", wait_until="load")  # the cookie, no token
            page.get_by_text("kernel saw 1").wait_for(timeout=60_000)
            page.locator(".widget-slider .noUi-handle, .widget-slider [role=slider]").first.focus()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            page.get_by_text("kernel saw 3").wait_for(timeout=30_000)
            assert any("/api/kernels/" in url for url in sockets), sockets
            assert not page.sdpa_errors, page.sdpa_errors
            (connection,) = list(tmp.glob("voila_*/kernel-*.json"))
            assert json.loads(connection.read_text())["transport"] == "ipc"
            bs.close_page(page)
        finally:
            browser.close()
    shutil.rmtree(tmp, ignore_errors=True)
