"""``make app``: the notebooks as apps (Voila), for this user on this machine only.

Run:  .venv/bin/python scripts/serve_app.py [voila options] notebooks     (``make app`` does)

Voila 0.5's own defaults serve anyone who can reach the port: no token, and any ``Host`` header
(it sets Tornado's ``allow_remote_access=True``), so another user of the machine, or a web page
in the learner's browser by DNS rebinding, can render the notebooks (each render starts a kernel)
and drive their widgets. This launcher runs the same Voila with Voila's own settings changed:

- it listens on 127.0.0.1 only;
- a token is required (generated here: never on a command line that ``ps`` shows); the URL with
  the token is printed, and opened in the browser through a file only this user can read (as
  ``jupyter lab`` does), removed when the server stops;
- the ``Host`` check is on (``tornado_settings``: ``allow_remote_access=False``): a request whose
  ``Host`` is not localhost or a loopback address is refused (403) before any kernel starts;
- a kernel websocket must speak the v1 protocol (``v1.kernel.websocket.jupyter.org``); a plain
  one is refused (400) before it opens. Voila 0.5.13 (``voila/tornado/kernel_websocket_handler.py``,
  ``read_header_from_binary_message``) reads every binary message it sends as v1; a legacy binary
  message (one with buffers: a widget's image after a slider move) read that way gives an offset
  count of about 8.6e17, and the list built from it hangs the server for good (the full write-up:
  ``tests/test_app_server.py``'s docstring);
- the images next to the notebooks (``/voila/files/``) need the token and a local Host too, and
  the login cookie is ``SameSite=Strict`` (another site's page cannot render a notebook, and start
  a kernel, with it);
- kernels are reached over Unix sockets in Voila's connection folder (``KernelManager.transport =
  ipc``), not TCP ports any local user could connect to (IOPub, a kernel's output, needs no key);
- SIGHUP (its terminal closed) and SIGQUIT (Ctrl-\\) stop it as SIGTERM and Ctrl-C do: kernels
  shut down, the connection files (``$TMPDIR/voila_*``) and the browser file removed.
"""

from __future__ import annotations

import html
import os
import signal
import sys
import webbrowser
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir, secure_write
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from tornado import web
from traitlets import Unicode
from voila.app import Voila
from voila.static_file_handler import AllowListFileHandler

#: The only kernel websocket protocol served (what Voila's and JupyterLab's frontends ask for).
V1_PROTOCOL = "v1.kernel.websocket.jupyter.org"
#: Where the server listens: this machine only.
LOOPBACK = "127.0.0.1"


class V1OnlyKernelConnection(ZMQChannelsWebsocketConnection):
    """A kernel websocket that speaks v1 or is refused before it opens (HTTP 400)."""

    # Not configurable: a config file asking for the legacy protocol ("") cannot bring it back.
    kernel_ws_protocol = Unicode(V1_PROTOCOL, allow_none=False)

    async def prepare(self):
        header = self.websocket_handler.request.headers.get("Sec-WebSocket-Protocol", "")
        offered = {p.strip() for p in header.split(",")}
        if V1_PROTOCOL not in offered:
            raise web.HTTPError(400, f"kernel websockets must use the {V1_PROTOCOL} subprotocol")
        await super().prepare()


class CheckedFileHandler(JupyterHandler, AllowListFileHandler):
    """Voila's ``/voila/files/`` (images next to the notebooks: the page's ``<img>``), behind the same
    Host check and token as the pages. Voila's own is a bare Tornado file handler: anyone who
    reaches the port, or a web page by DNS rebinding, could read every image under the folder."""

    def write_error(self, status_code: int, **kwargs) -> None:
        self.finish(f"{status_code}: {self._reason}")  # Jupyter's error page needs settings Voila lacks


class LocalVoila(Voila):
    """Voila with the token, the Host check and the loopback address forced (after its config)."""

    browser_file: Path | None = None

    def lock_down(self) -> None:
        """Applied after ``initialize`` (which reads voila.json / voila.py): they cannot undo it."""
        self.ip = LOOPBACK
        self.tornado_settings = {**self.tornado_settings, "allow_remote_access": False}
        if not self.token:  # unset, or "" (which would turn authentication off): generate one
            self.token = None
            self.auto_token = True
        self.kernel_websocket_connection_class = V1OnlyKernelConnection
        # Kernels talk to the server over Unix sockets inside Voila's own folder (mode 700), not TCP
        # ports on 127.0.0.1, where any local user could subscribe to a kernel's output (IOPub).
        # A socket's path has at most 103 bytes (macOS; 107 on Linux): under a longer TMPDIR, TCP.
        longest = os.path.join(self.connection_dir_root, "voila_xxxxxxxx", f"kernel-{'x' * 36}-ipc-5")
        if len(os.fsencode(longest)) <= 103:
            self.config.KernelManager.transport = "ipc"
        else:
            self.log.warning(f"{self.connection_dir_root} is too long a path for Unix sockets: kernels use "
                             "TCP on 127.0.0.1 (set TMPDIR to a shorter folder to keep them off the network)")

    def init_settings(self) -> dict:
        settings = super().init_settings()
        # The login cookie is sent only with requests from this origin's own pages (SameSite=Strict):
        # never with a request another site's page makes (an <img> pointing at a notebook would
        # otherwise render it, a kernel each time, with the learner's cookie).
        self.identity_provider.cookie_options = {**self.identity_provider.cookie_options, "samesite": "Strict"}
        return settings

    def init_handlers(self) -> list:
        return [(route, CheckedFileHandler, *rest) if handler is AllowListFileHandler else (route, handler, *rest)
                for route, handler, *rest in super().init_handlers()]

    def launch_browser(self) -> None:
        """Open the URL with the token through a file only this user can read (as jupyter lab does)."""
        try:
            browser = webbrowser.get(self.browser or None)
        except webbrowser.Error as e:
            self.log.warning(f"No web browser found: {e}. Open the URL above.")
            return
        url = self.connection_url + f"?token={self.identity_provider.token}"
        try:
            runtime = Path(jupyter_runtime_dir())
            runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
            path = runtime / f"voila-{os.getpid()}-open.html"
            with secure_write(str(path)) as f:  # mode 0600
                quoted = html.escape(url, quote=True)
                f.write(f'<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={quoted}">'
                        f'<p><a href="{quoted}">Open the course apps</a></p>\n')
        except OSError as e:
            self.log.warning(f"Could not write the file that opens the browser ({e}). Open the URL above.")
            return
        self.browser_file = path
        browser.open(path.as_uri(), new=self.webbrowser_open_new)

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self.browser_file is not None:
                self.browser_file.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    # Closing the terminal (HUP) or Ctrl-\ (QUIT) would kill Voila on the spot, leaving its kernels
    # and files: make them SIGTERM, which Voila handles (kernels shut down, files removed).
    for name in ("SIGHUP", "SIGQUIT"):
        signal.signal(getattr(signal, name), lambda *_: os.kill(os.getpid(), signal.SIGTERM))
    app = LocalVoila.instance()
    app.initialize(sys.argv[1:] if argv is None else argv)
    app.lock_down()
    app.start()


if __name__ == "__main__":
    sys.argv[0] = "voila"
    main()
