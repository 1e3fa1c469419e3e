"""A static server for the built site, on 127.0.0.1 (tests, benchmarks, a local preview).

    python authoring/site/serve.py [build/site] [--port 8000]

:class:`SiteServer` starts this file as a child process in its own session on a free port and
stops it by its PID. The child also watches the process that started it and exits when that
one is gone, so a test run that is killed (even with SIGKILL) leaves no server behind.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".webp": "image/webp", ".js": "text/javascript", ".svg": "image/svg+xml"}

    def log_message(self, *args) -> None:
        pass


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def serve(directory: Path, port: int, parent: int | None = None) -> None:
    if parent:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    handler = functools.partial(_Quiet, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        httpd.serve_forever()


class SiteServer:
    """``with SiteServer(folder) as s: s.url`` -- the site at http://127.0.0.1:<free port>/."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> SiteServer:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(self.directory), "--port", str(self.port), "--parent", str(os.getpid())],
            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "index.html", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the site server did not answer at {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # its own session: the PID is the group id
            self.proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path,
                        default=Path(__file__).resolve().parents[2] / "build" / "site")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--parent", type=int, default=None, help="exit when this process is gone")
    args = parser.parse_args(argv)
    if args.parent is None:
        print(f"serving {args.directory} at http://127.0.0.1:{args.port}/ (Ctrl-C stops)")
    serve(args.directory, args.port, args.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
