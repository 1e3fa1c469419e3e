"""Machinery for the browser tests: a real JupyterLab / Voila server and headless Chromium.

Used by ``tests/test_browser.py`` and by ``benchmarks/browser_latency.py``. It offers:

- :func:`chromium_path` / :func:`chromium_skip_reason` -- where Chromium is (Debian's
  ``/usr/bin/chromium``, or ``$SDPA_CHROMIUM``); never a browser download;
- :func:`copy_notebooks` -- a scratch copy of ``notebooks/`` (with ``figures/``) to serve,
  so nothing a test does can touch the committed notebooks;
- :class:`Server` -- ``jupyter lab`` or ``voila`` on 127.0.0.1 and a free port, in its own
  session, with scratch Jupyter config/runtime/data/settings dirs, stopped by its PID -- also
  when the test run is stopped by SIGTERM (``timeout``, a CI runner), SIGINT (Ctrl-C), SIGHUP
  (the terminal closed) or SIGQUIT (Ctrl-\\), and at exit (:func:`stop_all_servers`): a server
  in its own session does not get the signal itself. Where the test process dies without a
  word (SIGKILL, the out-of-memory killer), Linux sends the server SIGTERM
  (``PR_SET_PDEATHSIG``, set by :data:`STOP_WITH_PARENT` before the server's program starts);
- :func:`launch_chromium` -- headless Chromium through Playwright's sync API;
- :func:`explorer_cells` -- which code cells of a stored notebook show an explorer;
- :func:`run_all_in_lab`, :func:`page_problems`, :func:`sweep_main_control` -- what a user
  does in the page, and what the tests check there.

Where a latency is measured, it is measured in the page: for an explorer (``explorer.js``), from
the ``keydown`` event's timestamp to the new frame in the DOM (``dom_ms``) and to the next animation
frame, when it is painted (``image_ms``), as ``authoring/site/probe.py`` measures the site; for the
floor (plain ipywidgets), to the ``<img>``'s new ``src`` (``src_ms``) and its decode (``image_ms``).
:class:`DelayProxy` puts 100 ms of round trip between the browser and a server (a Binder-like link).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "authoring" / "site") not in sys.path:
    sys.path.insert(0, str(ROOT / "authoring" / "site"))  # probe.py: the site's key-press measurement
NOTEBOOK_DIR = ROOT / "notebooks"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--disable-dev-shm-usage"]
#: What a page must never show (ipywidgets' message when the frontend lacks a model/extension).
WIDGET_ERRORS = ("Error displaying widget", "model not found")
#: Voila's messages for a cell that raised (with and without --show_tracebacks).
VOILA_ERRORS = ("There was an error when executing cell", "Traceback (most recent call last)")


def notebooks() -> list[Path]:
    """The course notebooks, ``notebooks/NN_*.ipynb``, in order."""
    return sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))


def chromium_path() -> str:
    return os.environ.get("SDPA_CHROMIUM", DEFAULT_CHROMIUM)


def chromium_skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return (f"Chromium not found at {path}; install Debian's chromium "
                "(apt-get install chromium) or set SDPA_CHROMIUM")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -r requirements-test.txt)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_notebooks(dest: Path) -> Path:
    """Copy ``notebooks/`` (notebooks and figures) to ``dest/notebooks``; return that directory."""
    target = Path(dest) / "notebooks"
    shutil.copytree(NOTEBOOK_DIR, target,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc"))
    return target


# -- servers ------------------------------------------------------------------------------

# JupyterLab user settings for the test session (JUPYTERLAB_SETTINGS_DIR): never autosave,
# keep every cell in the DOM (no virtual scrolling), never fetch news or update checks.
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def jupyter_env(home: Path) -> dict:
    """Environment with scratch Jupyter dirs under ``home``.

    Only the *user* dirs move: the venv's ``share/jupyter`` (labextensions such as
    ``@jupyter-widgets/jupyterlab-manager``, the kernelspec) stays on the data path
    because Jupyter always searches ``sys.prefix/share/jupyter``.
    """
    env = dict(os.environ)
    dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTER_DATA_DIR": "data",
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings", "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython"}
    for var, name in dirs.items():
        path = home / name
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    for rel, settings in LAB_SETTINGS.items():
        path = home / "lab-settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


# -- every server started here is stopped however the run ends ------------------------------
_RUNNING: dict = {}  # id -> a Server started and not yet stopped (a dataclass: not hashable)
_HANDLED: dict = {}  # signal number -> the handler that was installed before ours


def stop_all_servers() -> None:
    """Stop every server this process started and has not stopped yet (atexit, signals)."""
    for server in list(_RUNNING.values()):
        try:
            server.stop()
        except Exception:  # best effort: keep stopping the others
            pass


def _on_signal(signum, frame):
    stop_all_servers()
    previous = _HANDLED.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # SIGINT: Python's default raises KeyboardInterrupt
        return
    signal.signal(signum, signal.SIG_DFL)  # then die of the signal, as without us
    os.kill(os.getpid(), signum)


#: The signals that end a test run from outside: a CI runner or ``timeout`` (TERM), Ctrl-C (INT),
#: the terminal closed (HUP), Ctrl-\ (QUIT).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")
                     if hasattr(signal, name))

#: Runs as ``python -c STOP_WITH_PARENT <parent pid> <program> <args...>``: asks Linux to send this
#: process SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG; kept across exec), exits if the
#: parent is already gone, then becomes ``program`` (same PID). Elsewhere (no prctl) it only execs:
#: the signal handlers and the atexit hook still stop the server.
STOP_WITH_PARENT = """
import ctypes, os, signal, sys
parent = int(sys.argv[1])
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG (Linux)
except (OSError, AttributeError):
    pass
if os.getppid() != parent:
    sys.exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


def stopped_with_parent(command: list[str]) -> list[str]:
    """``command`` run so that it gets SIGTERM when this (the calling) process dies."""
    return [sys.executable, "-c", STOP_WITH_PARENT, str(os.getpid()), *command]


def _install_stoppers() -> None:
    """Handlers for :data:`STOP_SIGNALS` and an atexit hook that stop the servers (main thread only, once)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        if signum not in _HANDLED:
            current = signal.getsignal(signum)
            if current is not _on_signal:
                _HANDLED[signum] = current
                signal.signal(signum, _on_signal)


atexit.register(stop_all_servers)


@dataclass
class Server:
    """A ``jupyter lab`` or ``voila`` process serving ``root``; use as a context manager."""

    kind: str  # "lab" or "voila"
    root: Path
    home: Path
    port: int = field(default_factory=free_port)
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / f"{self.kind}.log"

    def command(self) -> list[str]:
        if self.kind == "lab":
            return [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
                    "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                    "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                    f"--ServerApp.root_dir={self.root}",
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.extension_manager=readonly"]
        if self.kind == "voila":
            return [sys.executable, "-m", "voila", "--no-browser", "--Voila.ip=127.0.0.1",
                    f"--port={self.port}", "--Voila.port_retries=0", "--show_tracebacks=True",
                    str(self.root)]
        raise ValueError(f"kind must be 'lab' or 'voila', got {self.kind!r}")

    def ready_url(self) -> str:
        return f"{self.base}/api/status?token={self.token}" if self.kind == "lab" else f"{self.base}/"

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def start(self, timeout: float = 90.0) -> Server:
        env = jupyter_env(self.home)
        _install_stoppers()
        self._log = open(self.log_path, "wb")
        # A new session (a signal to the test run does not reach it; its kernels have sessions of
        # their own, which the server shuts down on SIGTERM). The server gets SIGTERM when this
        # process dies (the thread that starts it must live as long: the main thread).
        self.process = subprocess.Popen(stopped_with_parent(self.command()), cwd=self.root, env=env,
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        _RUNNING[id(self)] = self
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.ready_url(), timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"{self.kind} did not answer at {self.base} within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate the server by its PID, wait, then kill its process group if needed."""
        p = self.process
        _RUNNING.pop(id(self), None)
        if p is None:
            return
        if p.poll() is None:
            p.terminate()  # SIGTERM: the server shuts its kernels down
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        try:  # kernels left behind by a server that had to be killed: same process group (= p.pid)
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()
        self.process = None

    def api(self, method: str, path: str):
        """Call the Jupyter server's REST API (lab only); return the decoded JSON or None."""
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """End every session (and its kernel) of the Lab server: between notebooks, to free memory."""
        for session in self.api("GET", "/api/sessions") or []:
            try:
                self.api("DELETE", f"/api/sessions/{session['id']}")
            except urllib.error.HTTPError:
                pass
        for kernel in self.api("GET", "/api/kernels") or []:
            try:
                self.api("DELETE", f"/api/kernels/{kernel['id']}")
            except urllib.error.HTTPError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# -- a slow link: 100 ms of round trip between the browser and a server ---------------------

class DelayProxy:
    """127.0.0.1:<port> → 127.0.0.1:<target>, every chunk delivered ``delay`` seconds after it arrived."""

    def __init__(self, target: int, delay: float = 0.050):
        self.target, self.delay, self.port = target, delay, None
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)

        async def start():
            self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    async def _pipe(self, reader, writer):
        queue: asyncio.Queue = asyncio.Queue()

        async def deliver():
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                wait = due - self.loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            writer.close()

        task = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((self.loop.time() + self.delay, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((0, None))
        await task

    async def _client(self, reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)

    def close(self):
        """Stop serving, cancel every connection's tasks, stop and close the loop (its thread ends)."""
        async def shutdown():
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        except Exception:  # a proxy that is already stopping: stop the loop all the same
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        if not self.thread.is_alive():
            self.loop.close()



# -- the browser --------------------------------------------------------------------------

def launch_chromium(playwright):
    """Headless Chromium from :func:`chromium_path` (Playwright gives it a fresh temp profile)."""
    return playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)


def new_page(browser, blocked: list):
    """A page in a fresh context; requests off 127.0.0.1 are aborted and listed in ``blocked``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def route(r):
        if r.request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "blob:", "data:")):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.sdpa_errors = []  # uncaught exceptions in the page
    page.on("pageerror", lambda e: page.sdpa_errors.append(str(e)))
    return page


def close_page(page) -> None:
    context = page.context
    page.close(run_before_unload=False)
    context.close()


# -- what the stored notebook says ---------------------------------------------------------

@dataclass
class ExplorerCell:
    """A code cell whose stored output is a widget; ``cls`` is its Explorer class if known."""

    code_index: int  # index among the notebook's code cells
    class_name: str | None
    cls: type | None

    @property
    def label(self) -> str:
        return f"{self.class_name or 'widget'}@cell{self.code_index}"


def explorer_cells(path: Path) -> list[ExplorerCell]:
    """The code cells of a stored notebook that display a widget, with their Explorer class."""
    from sdpa_helpers.widgets import all_explorers

    known = {c.__name__: c for c in all_explorers()}
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    found = []
    for i, cell in enumerate(code):
        if any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
            source = "".join(cell["source"])
            names = [n for n in re.findall(r"\b([A-Z]\w*)\s*\(", source) if n in known]
            name = names[-1] if names else None
            found.append(ExplorerCell(i, name, known.get(name)))
    return found


_MAIN_INDEX: dict = {}


def main_control(cls) -> tuple[int, str, float]:
    """(position among the explorer's controls, name, one step in the page's units) of ``cls.main``.

    A selection slider or dropdown moves by one index; a numeric slider by its ``step``.
    """
    if cls not in _MAIN_INDEX:
        controls = cls().controls
        control = controls[cls.main]
        step = 1.0 if getattr(control, "options", None) else float(getattr(control, "step", 1) or 1)
        _MAIN_INDEX[cls] = (list(controls).index(cls.main), cls.main, step)
    return _MAIN_INDEX[cls]


# -- what a user does in JupyterLab ---------------------------------------------------------

_ALL_RAN = r"""() => {
  const prompts = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))
      .map(e => e.textContent.trim());
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const idle = indicator && indicator.dataset.status === 'idle' && Array.from(
      document.querySelectorAll('.jp-StatusBar-TextItem')).some(e => / \| Idle$/.test(e.textContent.trim()));
  const running = prompts.some(p => p.includes('*'));
  const done = prompts.length > 0 && prompts.every(p => /^\[\d+\]:$/.test(p));
  const failed = document.querySelector(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]') !== null;
  const dialog = document.querySelector('.jp-Dialog') !== null;
  return dialog || (idle && !running && (done || failed));
}"""


def lab_url(server: Server, name: str) -> str:
    # `reset` starts from an empty workspace: only this notebook opens.
    return f"{server.base}/lab/tree/{name}?token={server.token}&reset"


def menu(page, top: str, item: str) -> None:
    """Click ``top`` in JupyterLab's menu bar, then ``item`` in the menu it opens."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(top)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()


# The kernel is ready when the status bar says "<kernel name> | Idle". (The toolbar's execution
# indicator says "idle" already while the status bar still reads "No Kernel | Initializing".)
_KERNEL_IDLE = r"""() => {
  const items = Array.from(document.querySelectorAll('.jp-StatusBar-TextItem')).map(e => e.textContent.trim());
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return items.some(t => /^(?!No Kernel).+ \| Idle$/.test(t)) && indicator && indicator.dataset.status === 'idle';
}"""


def open_in_lab(page, server: Server, name: str, timeout: float) -> None:
    """Open notebook ``name`` and wait until its kernel has started and is idle."""
    page.goto(lab_url(server, name))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout * 1000)
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout * 1000, polling=100)
    wait_for_kernels_idle(server, timeout)


def wait_for_kernels_idle(server: Server, timeout: float) -> None:
    """Wait until the server reports at least one kernel and every kernel idle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [k.get("execution_state") for k in server.api("GET", "/api/kernels") or []]
        if states and all(s == "idle" for s in states):
            return
        time.sleep(0.1)
    raise AssertionError(f"the kernel did not become idle within {timeout:.0f} s: {states}")


def run_all_in_lab(page, timeout: float) -> float:
    """Clear every output, then Kernel ▸ Restart Kernel and Run All Cells…; return the seconds it took.

    Clearing first means that a finished run can be told from the stored outputs.
    """
    menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))
                                     .every(e => !/\\d/.test(e.textContent))""")
    start = time.perf_counter()
    menu(page, "Kernel", "Restart Kernel and Run All Cells…")
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "Restart" in dialog.inner_text(), dialog.inner_text()
    dialog.locator("button.jp-mod-accept").click()
    dialog.wait_for(state="detached")
    page.wait_for_function(_ALL_RAN, timeout=timeout * 1000, polling=250)
    return time.perf_counter() - start


def unfold_all(page, timeout: float = 10.0) -> int:
    """Open every folded deep dive, as a learner does to use an explorer inside one: click each
    "N cells hidden" button (one click per heading); return how many were opened."""
    buttons = page.locator(".jp-Notebook .jp-showHiddenCellsButton")
    opened = 0
    while buttons.count() and opened < 100:
        buttons.first.scroll_into_view_if_needed()
        before = buttons.count()
        buttons.first.click()
        page.wait_for_function(f"() => document.querySelectorAll('.jp-Notebook .jp-showHiddenCellsButton').length"
                               f" < {before}", timeout=timeout * 1000)
        opened += 1
    return opened


def execution_counts(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))
                                  .map(e => e.textContent.trim())""")


def page_problems(page, error_texts=WIDGET_ERRORS) -> list[str]:
    """Error outputs, stderr outputs, widget errors, open dialogs and uncaught page errors."""
    problems = []
    for text in page.evaluate("""() => Array.from(document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText)"""):
        problems.append(f"error/stderr output:\n{text.strip()[:2000]}")
    body = page.evaluate("() => document.body.innerText")
    for needle in error_texts:
        if needle.lower() in body.lower():
            at = body.lower().index(needle.lower())
            problems.append(f"page shows {needle!r}: ...{body[max(0, at - 200):at + 300]}...")
    if page.locator(".jp-Dialog").count():
        problems.append(f"a dialog is open: {page.locator('.jp-Dialog').first.inner_text()}")
    problems += [f"uncaught error in the page: {e[:500]}" for e in page.sdpa_errors]
    return problems


def broken_images(page) -> list[str]:
    """``<img>`` elements of the document that did not load (scrolled into view first: lazy loading)."""
    return page.evaluate("""async () => {
      const bad = [];
      for (const img of Array.from(document.querySelectorAll('.jp-Notebook img, #rendered_cells img, body img'))) {
        img.scrollIntoView({block: 'center'});
        try { await img.decode(); } catch (e) {}
        if (!img.complete || img.naturalWidth === 0) bad.push(img.getAttribute('src') || '(no src)');
      }
      return Array.from(new Set(bad));
    }""")


def lab_cell_output(page, code_index: int):
    """The output area of the ``code_index``-th code cell in JupyterLab."""
    return page.locator(".jp-Notebook .jp-CodeCell").nth(code_index).locator(".jp-OutputArea")


#: An explorer in JupyterLab or Voila: the figure drawn by explorer.js (the site's front end).
EXPLORER_BOX = ".jp-OutputArea-output figure.sdpa-explorer"
#: The floor's plain ipywidgets box (a slider and an Image: no explorer.js).
FLOOR_BOX = ".jp-OutputArea-output .widget-vbox:has(> img.widget-image)"

#: A notebook whose slider's observer only swaps between two precomputed ~100 KB PNGs on an
#: ``ipywidgets.Image``: the kernel round trip, the transfer and the decode, with no computation
#: and no drawing. Measured in the same run as the explorers, it is the floor each explorer's
#: latency is compared with (``tests/test_browser.py`` with ``benchmarks/browser_latency.py``, and
#: ``benchmarks/explorer_frontend.py``'s floor mode: both write this notebook).
FLOOR_NAME = "floor.ipynb"
FLOOR_SOURCE = """\
import io

import ipywidgets as W
import numpy as np
from matplotlib.image import imsave


def noise_png(seed, side=168):
    \"\"\"Random pixels do not compress: a 168 x 168 PNG of them weighs about 100 KB.\"\"\"
    buf = io.BytesIO()
    imsave(buf, np.random.default_rng(seed).random((side, side, 3)), format="png")
    return buf.getvalue()


PNGS = [noise_png(0), noise_png(1)]
slider = W.IntSlider(value=0, min=0, max=8, description="floor")
image = W.Image(value=PNGS[0], format="png")
slider.observe(lambda change: setattr(image, "value", PNGS[change["new"] % 2]), names="value")
W.VBox([W.HBox([slider]), image])
"""


def write_floor_notebook(root: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_SOURCE)])
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    path = Path(root) / FLOOR_NAME
    nbformat.write(nb, path)
    return path


def floor_steps(page, server: Server, name: str, steps: int = 4, timeout: float = 300.0,
                render_timeout: float = 120.0) -> list[dict]:
    """Open the floor's notebook ``name`` (:func:`write_floor_notebook`) in ``server`` (JupyterLab: run it;
    Voila: render it) and move its slider ``steps`` positions one way and back (:func:`sweep_floor`)."""
    if server.kind == "lab":
        open_in_lab(page, server, name, timeout)
        run_all_in_lab(page, timeout)
        box = lab_cell_output(page, 0).locator(FLOOR_BOX)
        box.first.wait_for()
    else:
        page.goto(f"{server.base}/voila/render/{name}", timeout=timeout * 1000, wait_until="load")
        page.wait_for_function(f"() => document.querySelectorAll('{FLOOR_BOX}').length >= 1",
                               timeout=render_timeout * 1000, polling=250)
        box = page.locator(FLOOR_BOX).first
    return sweep_floor(page, box, 0, steps=steps)

def explorer_id(box) -> str:
    """The id explorer.js gave the figure (``#explorer-<id>``; probe.press finds it by that)."""
    return box.evaluate("f => f.id").removeprefix("explorer-")


def wait_for_explorer(page, box, timeout: float = 60.0) -> str:
    """Wait until the explorer in ``box`` shows its first frame; its id."""
    box.first.wait_for()
    ident = explorer_id(box.first)
    page.wait_for_function("id => { const f = document.getElementById('explorer-' + id);"
                           " return f && f.hasAttribute('data-ready'); }", arg=ident, timeout=timeout * 1000)
    return ident


def wait_for_grid(page, ident: str, timeout: float = 60.0) -> dict:
    """Wait until every frame of the explorer's prefetch grid is in the browser; its size and ms after display."""
    page.wait_for_function("id => document.getElementById('explorer-' + id).hasAttribute('data-grid-complete')",
                           arg=ident, timeout=timeout * 1000, polling=100)
    return page.evaluate("""id => { const f = document.getElementById('explorer-' + id);
      return {frames: Number(f.dataset.gridFrames), ms: Number(f.dataset.gridComplete)}; }""", ident)


#: Times each frame asked of the kernel (``KernelSource.fetch``: ``sent``) and its answer's arrival
#: (``receive``: ``arrived``, with the kernel's own drawing time ``ms`` that the frame carries), per frame
#: name, in the page's clock; installed on the live explorer, explorer.js itself unchanged.
_TRACE_SOURCE = r"""id => {
  const s = window.SDPA_LIVE[id].source;
  if (s.__sdpaTrace) return;
  const log = s.__sdpaTrace = {};
  const fetch = s.fetch, receive = s.receive;
  s.fetch = function (name, indices, urgent) {
    log[name] = {sent: performance.now(), urgent: !!urgent};
    return fetch.call(this, name, indices, urgent);
  };
  s.__sdpaFailed = [];  // the kernel's "failed" answers (a frame not drawn: it pauses prefetch)
  s.receive = function (msg, buffers) {
    if (msg && msg.type === "failed") s.__sdpaFailed.push({key: msg.key, error: msg.error || null});
    if (msg && log[msg.key] && log[msg.key].arrived === undefined) {
      log[msg.key].arrived = performance.now();
      log[msg.key].ms = typeof msg.ms === "number" ? msg.ms : null;
    }
    return receive.call(this, msg, buffers);
  };
}"""


def split(press: dict, trace: dict | None) -> dict:
    """Where one press's time went, in ms, from the page's clock (``press``: ``key``, ``painted``) and the
    frame's trace (``sent``, ``arrived``, ``ms``; None for a frame already in the browser):
    ``to_request`` (key press → the request leaves), ``kernel_draw`` (the kernel's own drawing, as it
    reports), ``link`` (the round trip less the drawing: messages through server, websocket and kernel
    queue), ``decode_paint`` (answer received → frame painted). The four add up to key → painted."""
    if not trace or trace.get("arrived") is None or trace.get("ms") is None:
        return {}
    return {"to_request": trace["sent"] - press["key"], "kernel_draw": trace["ms"],
            "link": trace["arrived"] - trace["sent"] - trace["ms"], "decode_paint": press["painted"] - trace["arrived"]}


def sweep_main_control(page, box, main_index: int, steps: int = 4, timeout: float = 20.0,
                       step: float = 1.0) -> list[dict]:
    """Move the explorer's main control ``steps`` positions one way and back, one key press at a time.

    ``box`` is the explorer's figure (drawn by explorer.js, as on the site): a range is moved with
    ArrowRight / ArrowLeft, a select with ArrowDown / ArrowUp, a checkbox with Space, each with the
    control focused. Each step asserts that the frame for the new setting is shown (its
    ``data-frame``, loaded) and that the focus stayed on the control; it returns one record per step
    with the latencies in ms from ``keydown`` (``dom_ms``: the new frame in the page, ``image_ms``:
    the next animation frame, when it is painted) and whether the frame was in the browser's cache
    at the key press (``prefetched``); for a frame asked of the kernel, ``split`` says where its time went
    (:func:`split`). ``step`` is unused (kept for the callers; the page moves by index).
    """
    import probe  # authoring/site/probe.py: the site's key-press measurement, shared

    ident = wait_for_explorer(page, box, timeout)
    meta = page.evaluate("id => { const e = window.SDPA_LIVE[id]; return {controls: e.meta.controls,"
                         " state: e.state.slice()}; }", ident)
    control = meta["controls"][main_index]
    kind, n, at = control["kind"], len(control["labels"]), meta["state"][main_index]
    if kind == "checkbox":
        plan = [True, True]
    else:
        up, down = n - 1 - at, at
        forward = up >= steps or up >= down
        k = min(steps, up if forward else down)
        assert k >= 1, "the main control has a single value"
        plan = [forward] * k + [not forward] * k
    page.evaluate(_TRACE_SOURCE, ident)
    records = []
    state = list(meta["state"])
    for i, forward in enumerate(plan):
        before = state[main_index]
        if kind == "checkbox":
            state[main_index] = 1 - before
        else:
            state[main_index] += 1 if forward else -1
        frame = probe.expected_frame(state, "")
        cached = page.evaluate("([id, f]) => { const e = window.SDPA_LIVE[id].cache.get(f); return !!(e && e.ok); }",
                               [ident, frame])
        page.evaluate("([id, f]) => { const log = window.SDPA_LIVE[id].source.__sdpaTrace;"
                      " if (log[f] && log[f].arrived !== undefined) delete log[f]; }", [ident, frame])  # an old answer
        try:
            t = probe.press(page, ident, main_index, kind, forward, frame, timeout_ms=timeout * 1000)
        except Exception as exc:  # playwright TimeoutError
            raise AssertionError(f"step {i + 1}: frame {frame} did not show within {timeout:.0f} s") from exc
        shown = probe.shown(page, ident)
        assert shown["frame"] == frame and shown["loaded"], f"step {i + 1}: shows {shown['frame']}, not {frame}"
        assert page.evaluate("([id, k]) => document.activeElement === document.querySelector("
                             "`#explorer-${id} [data-control='${k}']`)", [ident, main_index]), \
            f"step {i + 1}: the focus left the control"
        pressed, trace = page.evaluate("([id, f]) => [window.__sdpaPress, "
                                       "window.SDPA_LIVE[id].source.__sdpaTrace[f] || null]", [ident, frame])
        records.append({"step": i + 1, "from": before, "to": state[main_index], "first_visit": i < len(plan) // 2,
                        "prefetched": cached, "dom_ms": t["dom"], "image_ms": t["painted"], "src_ms": t["dom"],
                        "split": split(pressed, trace)})
    return records




# -- moving the main control ----------------------------------------------------------------

_WATCH = r"""(img) => {
  const st = {t0: null, t1: null, t2: null, src0: img.src};
  window.__sdpa = st;
  const start = e => { if (st.t0 === null) st.t0 = e.timeStamp; };
  document.addEventListener('keydown', start, {capture: true, once: true});
  document.addEventListener('pointerdown', start, {capture: true, once: true});
  const obs = new MutationObserver(() => {
    if (img.src !== st.src0 && st.t1 === null) {
      st.t1 = performance.now();
      obs.disconnect();
      img.decode().then(() => { st.t2 = performance.now(); }, () => { st.t2 = st.t1; });
    }
  });
  obs.observe(img, {attributes: true, attributeFilter: ['src']});
}"""


def _control_kind(control) -> str:
    for selector, kind in ((".noUi-handle", "slider"), ("select", "select"),
                           (".widget-toggle-button", "toggle")):
        if control.locator(selector).count():
            return kind
    return "unknown"


def _state(control, kind):
    if kind == "slider":
        h = control.locator(".noUi-handle").first
        return (float(h.get_attribute("aria-valuenow")), float(h.get_attribute("aria-valuemin")),
                float(h.get_attribute("aria-valuemax")))
    if kind == "select":
        n, i = control.locator("select").evaluate("s => [s.options.length, s.selectedIndex]")
        return float(i), 0.0, float(n - 1)
    buttons = control.locator(".widget-toggle-button")
    active = buttons.evaluate_all("bs => bs.findIndex(b => b.classList.contains('mod-active'))")
    return float(active), 0.0, float(buttons.count() - 1)


def sweep_floor(page, box, main_index: int, steps: int = 4, timeout: float = 20.0,
                       step: float = 1.0) -> list[dict]:
    """The floor (plain ipywidgets): move its slider ``steps`` positions one way and back, one step at a time.

    ``box`` is the explorer's VBox (controls row, image, readout). Sliders are moved with the
    keyboard (focus the handle, ArrowRight / ArrowLeft), dropdowns with ArrowDown / ArrowUp,
    toggle buttons by a click. Each step asserts that the control's value changed and the
    ``<img>`` got a new ``src``; it returns one record per step with the latencies in ms.
    ``step`` is one step of a numeric slider (the page reports its values, not indices).
    """
    controls = box.locator(":scope > .widget-hbox").first.locator(":scope > *")
    assert controls.count() > main_index, f"the explorer shows {controls.count()} controls"
    control = controls.nth(main_index)
    img = box.locator(":scope > img.widget-image").first
    kind = _control_kind(control)
    assert kind != "unknown", f"cannot move a main control rendered as {control.inner_html()[:300]}"
    value, low, high = _state(control, kind)
    if kind != "slider":
        step = 1.0  # dropdowns and toggle buttons report indices
    up, down = round((high - value) / step), round((value - low) / step)  # room, in steps
    if up >= steps or down >= steps:
        forward, n = up >= steps, steps
    else:
        forward, n = up >= down, max(up, down)
    assert n >= 1, "the main control has a single value"
    plan = [+1 if forward else -1] * n + [-1 if forward else +1] * n
    focus = {"slider": ".noUi-handle", "select": "select"}.get(kind)
    if focus:
        control.locator(focus).first.scroll_into_view_if_needed()
        control.locator(focus).first.focus()
    else:
        control.scroll_into_view_if_needed()
    records = []
    for i, direction in enumerate(plan):
        before, _, _ = _state(control, kind)
        img.evaluate(_WATCH)
        if kind == "slider":
            page.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
        elif kind == "select":
            page.keyboard.press("ArrowDown" if direction > 0 else "ArrowUp")
        else:
            control.locator(".widget-toggle-button").nth(int(before) + direction).click()
        try:
            page.wait_for_function("() => window.__sdpa.t2 !== null", timeout=timeout * 1000, polling="raf")
        except Exception as exc:  # playwright TimeoutError
            after, _, _ = _state(control, kind)
            raise AssertionError(f"step {i + 1}: the control moved {before} -> {after} but the image "
                                 f"did not change within {timeout:.0f} s") from exc
        st = page.evaluate("window.__sdpa")
        after, _, _ = _state(control, kind)
        assert (after - before) * direction > 0, f"step {i + 1}: the control went {before} -> {after}"
        records.append({"step": i + 1, "from": before, "to": after, "first_visit": i < n,
                        "src_ms": round(st["t1"] - st["t0"], 2), "image_ms": round(st["t2"] - st["t0"], 2)})
    return records


def screenshot(page, directory: Path, name: str) -> str:
    path = Path(directory) / f"{name}.png"
    try:
        page.screenshot(path=str(path), full_page=False)
    except Exception:  # a screenshot is a debugging aid, never the failure itself
        return "(no screenshot)"
    return str(path)


# -- a stored notebook opened without running it (issue 12) ---------------------------------

COLLAPSED = "jp-MarkdownHeadingCollapsed"


def deep_dives(path: Path) -> list[tuple[int, list[int]]]:
    """(index of the heading cell, indices of the other cells) of every deep dive in a stored notebook.

    A deep dive starts at a markdown cell stored with ``jp-MarkdownHeadingCollapsed`` whose
    first line is ``## Deep dive: ...`` and runs to the next ``#``/``##`` heading.
    """
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    found, current = [], None
    for i, cell in enumerate(nb["cells"]):
        first = "".join(cell["source"]).lstrip().split("\n", 1)[0]
        if cell["cell_type"] == "markdown" and re.match(r"^## Deep dive:", first):
            current = (i, [])
            found.append(current)
        elif cell["cell_type"] == "markdown" and re.match(r"^#{1,2} ", first):
            current = None
        elif current is not None:
            current[1].append(i)
    return found


def open_without_running(page, server: Server, name: str, n_cells: int, timeout: float) -> None:
    """Open a notebook in JupyterLab and wait until its ``n_cells`` cells are rendered (no run)."""
    page.goto(lab_url(server, name))
    page.wait_for_function(f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= {n_cells}",
                           timeout=timeout * 1000, polling=100)


def lab_cell(page, index: int):
    """The ``index``-th cell (markdown or code) of the notebook open in JupyterLab."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def is_hidden(cell) -> bool:
    """A cell folded away under a collapsed heading (JupyterLab gives it ``lm-mod-hidden``)."""
    return cell.evaluate("c => c.classList.contains('lm-mod-hidden') || c.offsetParent === null")
