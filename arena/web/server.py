"""The local web server of ``arena play`` and ``arena view``: stdlib ``http.server`` and JSON.

Why the standard library: the server has one user on 127.0.0.1, a handful
of JSON endpoints and two static pages, and every request takes
microseconds to a few milliseconds (a bot's decision).  A threading
``http.server`` does that with no new dependency to install, pin or ship,
and nothing to build.  An ASGI stack would add a framework and a server
for nothing the page needs.

Endpoints (all JSON; errors are ``{"error": "..."}`` with a 4xx code and
change nothing):

- ``GET /`` the play page, ``GET /view`` the viewer page;
- ``GET /api/options``: presets, targets, bots;
- ``POST /api/new`` ``{"bot", "preset", "target"}``: a new game;
- ``GET /api/state``: the person's view of the game;
- ``POST /api/act`` ``{"action", "card"?}``: take, pass, draw_stock, draw_pile, discard, knock, no_knock,
  big_gin, no_big_gin;
- ``POST /api/next``: deal the next hand after a showdown;
- ``GET /api/game``: the recorded game of ``arena view`` (every step).
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from arena.web.session import TARGETS, IllegalAction, PlaySession

MAX_BODY = 64 * 1024


def page(name: str) -> bytes:
    """A page shipped with the package (``arena/web/static/``)."""
    return (resources.files("arena.web") / "static" / name).read_bytes()


class App:
    """What the server holds: the current game (play) or the recorded game (view)."""

    def __init__(
        self,
        *,
        bot: str = "simple",
        preset: str = "standard",
        target: int = 100,
        recorded: dict[str, Any] | None = None,
        seed: int | None = None,
    ):
        self.defaults: dict[str, Any] = {"bot": bot, "preset": preset, "target": target}
        self.recorded = recorded
        self.session: PlaySession | None = None
        self.seed = seed
        self.lock = threading.Lock()

    def options(self) -> dict[str, Any]:
        from arena.botkit.bot import BUILTIN_BOTS
        from arena.settings.rules import PRESETS_DIR

        bots = [b.replace("_", "-") for b in BUILTIN_BOTS]
        if self.defaults["bot"] not in bots:
            bots.insert(0, self.defaults["bot"])
        return {
            "presets": sorted(p.stem for p in PRESETS_DIR.glob("*.toml")),
            "targets": list(TARGETS),
            "bots": bots,
            "defaults": self.defaults,
        }

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        bot = body.get("bot", self.defaults["bot"])
        preset = body.get("preset", self.defaults["preset"])
        target = body.get("target", self.defaults["target"])
        if not isinstance(bot, str) or not isinstance(preset, str):
            raise IllegalAction("bot and preset must be strings", 400)
        if preset not in self.options()["presets"]:
            raise IllegalAction(f"unknown preset {preset!r} (presets: {', '.join(self.options()['presets'])})", 400)
        if bot not in self.options()["bots"]:
            raise IllegalAction(f"unknown bot {bot!r} (bots: {', '.join(self.options()['bots'])})", 400)
        s = PlaySession.start(bot=bot, preset=preset, target=target, seed=self.seed)
        with self.lock:
            self.session = s
        return s.view()

    def current(self) -> PlaySession:
        if self.session is None:
            raise IllegalAction("no game yet: POST /api/new first", 409)
        return self.session


class Handler(BaseHTTPRequestHandler):
    server: ArenaServer
    server_version = "gin-arena"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the terminal shows the URL, not every request

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise IllegalAction("request body too large", 413)
        raw = self.rfile.read(n) if n else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            raise IllegalAction("the request body is not JSON", 400) from None
        if not isinstance(body, dict):
            raise IllegalAction("the request body must be a JSON object", 400)
        return body

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        app = self.server.app
        path = self.path.split("?", 1)[0]
        try:
            if path in ("/", "/play"):
                self._send(200, page("play.html"), "text/html; charset=utf-8")
            elif path == "/view":
                self._send(200, page("view.html"), "text/html; charset=utf-8")
            elif path == "/api/options":
                self._json(200, app.options())
            elif path == "/api/state":
                self._json(200, app.current().view())
            elif path == "/api/game":
                if app.recorded is None:
                    raise IllegalAction("this server shows no recorded game (start it with arena view)", 404)
                self._json(200, app.recorded)
            else:
                self._error(404, f"no page {path}")
        except IllegalAction as exc:
            self._error(exc.status, str(exc))

    def do_POST(self) -> None:  # noqa: N802
        app = self.server.app
        path = self.path.split("?", 1)[0]
        try:
            body = self._body()
            if path == "/api/new":
                self._json(200, app.new_game(body))
            elif path == "/api/act":
                s = app.current()
                s.act(body.get("action"), body.get("card"))  # type: ignore[arg-type]
                self._json(200, s.view())
            elif path == "/api/next":
                s = app.current()
                s.next_hand()
                self._json(200, s.view())
            else:
                self._error(404, f"no endpoint {path}")
        except IllegalAction as exc:
            self._error(exc.status, str(exc))
        except Exception as exc:  # a bot that fails: one line to the page, the server goes on
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")


class ArenaServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: App, port: int = 0, host: str = "127.0.0.1"):
        super().__init__((host, port), Handler)
        self.app = app

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"


def can_open_browser() -> bool:
    """Whether there is a display to open a browser on (never in CI or over plain ssh)."""
    import os
    import sys

    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(app: App, port: int, path: str = "", open_browser: bool = True, echo: Any = print) -> None:
    """Serve until Ctrl-C; print the URL and open it when there is a display."""
    server = ArenaServer(app, port)
    url = server.url + path.lstrip("/")
    echo(f"Gin Arena at {url}  (Ctrl-C to stop)")
    if open_browser and can_open_browser():
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
