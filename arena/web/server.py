"""The one web app of ``arena play``, ``arena view`` and ``arena league serve``: FastAPI, served by uvicorn.

One ASGI app holds every page and endpoint; ``arena league serve`` includes the
league's routes (:mod:`arena.league.web`) in it.  The framework does what the old ``http.server`` handler did by hand:
routing (404/405 for the rest), reading and validating JSON bodies against
typed models (a bad field is a 400 naming it; a body that is not JSON, or so
deeply nested that it cannot be parsed, is a 400, never a 500), the body-size
limit, the Host check (:class:`TrustedHostMiddleware`: DNS rebinding), the
static files (the two pages, the language catalogs), and the error responses.
uvicorn parses HTTP (a ``Content-Length`` that is not a number is its 400) and
listens with a backlog of :data:`BACKLOG`.

What this module adds: :class:`Guard`, a small ASGI middleware that reads a
request's body, cutting it off with a 408 when nothing arrives for
:data:`BODY_TIMEOUT` seconds or what has come took longer than that plus its
size at :data:`MIN_BODY_RATE` (a client that sends less than its
``Content-Length``, or trickles it, does not hold a connection; an
honest upload of a large jar on a slow link still gets through), caps it by
path (:data:`MAX_BODY` for the play API; the league's own limits for its paths:
its upload limit on a submission, a small one on its forms), refuses a POST
to a league upload route that carries no valid token or session with a 401
from its headers alone, before its body (then dropped as it comes, never kept),
and one from a user already sending two uploads with a 429
(:meth:`arena.league.web.LeagueSite.upload_refusal`), refuses a POST
to the play API that is not ``application/json`` (415: a page elsewhere cannot
post a "simple" text/plain form to this server, the CSRF route; the league's
forms carry CSRF tokens instead), and marks every answer ``Cache-Control:
no-store``, ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin``
(the play page's address holds the game's id), and a Content-Security-Policy
where the route set none: the viewer's and the play page's (their own scripts
and styles, the inline ones by hash: no inline handlers, no other site), and
``default-src 'none'`` for static files, errors and JSON.
The Host names the app answers to are the loopback names, plus ``--host`` and
``--allowed-host`` for a league (:func:`allowed_hosts`).  A client has
:data:`HEADER_TIMEOUT` seconds to send a request's headers (408, then the
connection is closed: slow-header clients cannot hold connections open).

Endpoints (all JSON; errors are ``{"error": "..."}`` with a 4xx code and
change nothing; a refusal met in play also gives its ``code`` and ``values``,
:data:`arena.web.session.REFUSALS`, for the page's own words):

- ``GET /`` and ``GET /play`` the play page, ``GET /view`` the viewer page, ``GET /static/...``;
- ``GET /api/options``: presets (the ``--rules`` one first), targets, bots, rule ranges;
- ``POST /api/new`` ``{"bot", "preset", "target", "rules"?}``: a new game (its ``session`` id is in the answer);
- ``GET /api/state``: the person's view of the game;
- ``POST /api/act`` ``{"action", "card"?, "melds"?}``: take, pass, draw_stock, draw_pile, discard, knock
  (with a ``card`` in the discard phase: discard it and knock), no_knock, big_gin, no_big_gin, lay_down,
  lay_off, take_back, pass;
- ``POST /api/next``: deal the next hand after a showdown;
- ``GET /api/game?run=R&game=G``: a recorded game, every step (``GET /view?run=R&game=G`` is its page):
  ``arena view RUN --game ID`` shows the games of RUN (ID without ``?game``); a league, ``runs/rNNN``.

Every play endpoint takes ``?session=ID``; without it, the game used last on a server bound to loopback
without a league (one person's ``arena play``), a 400 on a shared one.  ``arena league serve`` leaves
the play page and its endpoints out unless given ``--play-page`` (``create_app(play=False)``: 404s).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import hashlib
import ipaddress
import json
import re
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from importlib import resources
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.botkit.bot import Bot
from arena.web.session import TARGETS, IllegalAction, PlaySession
from arena.web.viewer import GameNotFound, Games

MAX_BODY = 64 * 1024
#: Seconds a request body may pause (nothing arriving) before the request is cut off with a 408 ...
BODY_TIMEOUT = 5.0
#: ... and the slowest rate a body may come at: at any moment, what has come must have come within BODY_TIMEOUT
#: plus its length at this rate (a 2 MB jar on a 128 kbit/s link: in 127 s; a trickle of a byte every
#: 4 s: cut off after about 5 s, whatever length it declared).
MIN_BODY_RATE = 16 * 1024
#: Seconds a client has to send a request's line and headers, from the connection (or the last answer) on.
HEADER_TIMEOUT = 5.0
#: At most this many requests of one connection wait behind the one being answered (HTTP pipelining);
#: a client that sends more without reading its answers is cut off (httptools' protocol).
MAX_PIPELINE = 32
#: The most bytes a request's line and headers may take (httptools' protocol; h11's own limit is the same):
#: httptools joins a header value's pieces with no limit, so one client sending a header of megabytes held
#: the event loop for seconds at a time, and every other client waited.
MAX_HEAD_BYTES = 16 * 1024
#: The listen backlog: 200 browsers' worth of concurrent connections queue instead of being reset.
BACKLOG = 1024
#: At most this many games are kept in all; the least recently used goes first.
MAX_SESSIONS = 256
#: At most this many games are kept per client (:func:`visitor`): a client's new game pushes out its own oldest.
MAX_PER_CLIENT = 16
#: A game untouched this long (seconds) is dropped.
SESSION_TTL = 6 * 3600
#: At most this many games are kept whose bot runs in processes of its own (``cmd:``, a sandboxed file,
#: an EAAI player): each holds two or three processes and a bot's memory, so 256 of them could exhaust
#: the machine.  A new one pushes out the least recently used of them.
MAX_PROCESS_GAMES = 32
#: Host names the server answers to (any port): a page on another name that resolves here is refused.
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
#: What ``--allowed-host`` takes: a name, ``*.name``, an IPv4 address, ``[IPv6]``, or ``*`` (any: no Host check).
HOST_RE = re.compile(r"\*|(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\]")  # fullmatch
#: Addresses that reach this machine only: a server bound to another is shared (:func:`create_app`).
LOOPBACK_BINDS = ("127.0.0.1", "localhost", "::1")
#: Addresses that mean "every interface".
WILDCARD_BINDS = ("0.0.0.0", "::", "")
STATIC = Path(str(resources.files("arena.web") / "static"))


def page_path(name: str) -> Path:
    """A file shipped with the package (``arena/web/static/``)."""
    return STATIC / name


#: The Content-Security-Policy of answers that are not a page with scripts: static files, errors, JSON.
STRICT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"


def _inline_hashes(html: str, tag: str) -> str:
    """The CSP sources of a page's inline ``<script>``/``<style>`` blocks: ``'sha256-...'`` each."""
    blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.S)
    return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in blocks)


def page_csp(name: str, *, style_attributes: bool = False) -> str:
    """The policy of the page ``name`` (a file of ``static/``): its own scripts, styles, images and JSON, its
    inline blocks by hash; nothing else (no inline handlers, no other site, no frames, no forms).
    ``style_attributes``: also ``style="..."`` attributes in its markup (the viewer's)."""
    html = page_path(name).read_text(encoding="utf-8")
    attrs = " style-src-attr 'unsafe-inline';" if style_attributes else ""
    return (
        f"default-src 'none'; script-src 'self' {_inline_hashes(html, 'script')}; "
        f"style-src 'self' {_inline_hashes(html, 'style')};{attrs} img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )


def view_csp() -> str:
    """The viewer page's policy (:func:`page_csp`; its markup has ``style`` attributes)."""
    return page_csp("view.html", style_attributes=True)


def play_csp() -> str:
    """The play page's policy (:func:`page_csp`)."""
    return page_csp("play.html")


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """Turn Nagle's algorithm off on a client's connection.  asyncio does so only for sockets whose ``proto``
    is ``IPPROTO_TCP``, and a listening socket made with ``socket.socket(AF_INET, SOCK_STREAM)`` (as
    :class:`Server` makes, to bind before uvicorn starts) hands its connections ``proto`` 0.  With Nagle on,
    an answer written as two segments (uvicorn writes the headers, then the body) waits for the client's
    delayed ACK of the first: 40 ms per keep-alive request."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # the client is gone already
            pass


class _HeaderDeadline:
    """A deadline for each request's headers, mixed into uvicorn's HTTP/1.1 protocols: a client that has not
    sent them :data:`HEADER_TIMEOUT` seconds after connecting (or after its last answer) gets 408 and is
    closed; one that sent nothing at all is closed quietly.  uvicorn's own keep-alive timeout stops at the
    first byte a client sends, so without this a client that sends a header byte every few seconds holds a
    connection for ever."""

    _header_timer: asyncio.TimerHandle | None = None
    _got_bytes = False

    def connection_made(self, transport) -> None:
        _no_delay(transport)
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._got_bytes = True
        super().data_received(data)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._got_bytes = False
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)  # type: ignore[attr-defined]

    def _headers_late(self) -> None:
        self._header_timer = None
        transport, cycle = self.transport, self.cycle  # type: ignore[attr-defined]
        if transport.is_closing() or (cycle is not None and not cycle.response_complete):
            return  # the connection is gone, or the headers came and the request is being answered
        if getattr(self, "pipeline", None):
            return  # httptools: a pipelined request whose headers came waits for the one before it
        if not self._got_bytes:  # nothing sent since: an idle connection, closed quietly
            transport.close()
            return
        line = f"the request headers did not arrive within {HEADER_TIMEOUT:g} s\n".encode()
        transport.write(
            b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(line), line)
        )
        transport.close()


class _H11Deadline(_HeaderDeadline, H11Protocol):
    """uvicorn's pure-Python HTTP/1.1 protocol (h11) with the header deadline."""


#: A whole answer written by the HTTP protocol itself: (method, target, headers, uvicorn's own headers) to the
#: answer's bytes, or None for the request's ASGI way (:meth:`arena.league.board_asgi.BoardFastPath.whole_answer`).
WholeAnswer = Callable[[bytes, bytes, list, list], "bytes | None"]


def http_protocol(whole_answer: WholeAnswer | None = None) -> type[asyncio.Protocol]:
    """The HTTP/1.1 protocol the server runs: uvicorn's httptools one when httptools is installed (the
    ``league`` extra: its C parser answers a request in a fraction of h11's time), else h11's; both with
    the header deadline.

    ``whole_answer`` (httptools only): asked first about each request whose headers are in, when no earlier
    request of the connection is still being answered; an answer it gives is written at once, in one write,
    and the request never becomes an ASGI task (the board's polls: no scope, no task, no two writes)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return _H11Deadline

    class _HttpToolsDeadline(_HeaderDeadline, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header deadline, and the whole answers."""

        _answered = False  # the message being parsed was answered by whole_answer
        _in_head = False  # the message being parsed has not had all its headers yet
        _head_bytes = 0  # bytes received since it began (counted from the chunk after its first)

        def on_message_begin(self) -> None:
            self._in_head, self._head_bytes = True, 0
            super().on_message_begin()

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._head_bytes += len(data)
            super().data_received(data)
            if self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                line = f"the request line and headers take more than {MAX_HEAD_BYTES} bytes\n".encode()
                self.transport.write(
                    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(line), line)
                )
                self.transport.close()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._answered = False
            if self.transport.is_closing():
                return  # cut off below: the rest of what it sent is not answered
            if len(self.pipeline) >= MAX_PIPELINE:
                # uvicorn queues every pipelined request it parses (a scope, a task's worth each) while the
                # one before is answered: a client that sends requests and reads no answers would fill the
                # memory at thirty times the rate it sends.  Browsers never pipeline; this is cut off.
                self.transport.close()
                return
            # Only with nothing before it in flight (answers stay in order) and the client reading its answers
            # (else the ASGI way, which waits for the client and stops reading its requests meanwhile: a
            # client pipelining polls it never reads cannot make the server buffer their answers).
            idle = not self.pipeline and (self.cycle is None or self.cycle.response_complete)
            if whole_answer is not None and idle and not self.flow.write_paused:
                parser = self.parser
                if parser.get_http_version() == "1.1" and parser.should_keep_alive() and not parser.should_upgrade():
                    data = whole_answer(parser.get_method(), self.url, self.headers, self.server_state.default_headers)
                    if data is not None:
                        self._answered = True
                        self.transport.write(data)
                        return
            super().on_headers_complete()
            # every request of the connection not yet answered (uvicorn keeps only the newest as self.cycle)
            cycles = [c for c in self.__dict__.get("_cycles", ()) if not c.response_complete]
            self._cycles = [*cycles, self.cycle]

        def connection_lost(self, exc: Exception | None) -> None:
            # uvicorn marks only the newest request as disconnected: one still being answered while others
            # waited behind it (pipelined) would write its answer to the closed connection, a traceback in the log
            for cycle in self.__dict__.pop("_cycles", ()):
                if not cycle.response_complete:
                    cycle.disconnected = True
                    cycle.message_event.set()
            super().connection_lost(exc)

        def on_body(self, body: bytes) -> None:
            if not self._answered:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if self._answered:  # as a cycle ends: the keep-alive timer, the next header deadline
                self._answered = False
                self.on_response_complete()
                return
            super().on_message_complete()

    return _HttpToolsDeadline


class NewGame(BaseModel):
    model_config = ConfigDict(extra="ignore")
    bot: StrictStr | None = None
    preset: StrictStr | None = None
    target: StrictInt | None = None
    rules: dict[str, StrictInt | bool] | None = None


class Act(BaseModel):
    model_config = ConfigDict(extra="ignore")
    action: StrictStr
    card: StrictInt | None = None
    melds: list[list[StrictInt]] | None = None
    seen: StrictInt | None = None  # the view's "moves" the page showed: a stale page's move is refused


class Next(BaseModel):
    model_config = ConfigDict(extra="ignore")
    seen: StrictInt | None = None


def visitor(address: str) -> str:
    """Who a client is, for counting its games: its IPv4 address, or for IPv6 its ``/64`` network.  An IPv6
    visitor holds a whole /64 (the network a home line or a host is given) and may send each request from
    another of its addresses: counted by address, one visitor was as many visitors as it liked.  An IPv4
    address written as IPv6 (``::ffff:203.0.113.1``) is that IPv4 address; a name that is no address (a test
    client, a Unix socket) is itself."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])  # without an IPv6 zone ("fe80::1%eth0")
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Sessions:
    """The games the server keeps: bounded in number, per client and in idle time.

    Each game is kept under the client that started it (:func:`visitor`: its address, or its IPv6 /64).  A
    client with :attr:`per_client` games that starts another loses its own least recently used one, never
    someone else's; only when the
    server holds :attr:`limit` games in all does a new one push out the least recently used of anyone's
    (at the old limit of 16 in all, 16 strangers' new games pushed out every game being played).

    A game whose bot runs in processes of its own stops them when it is dropped, and :attr:`process_limit`
    bounds how many such games are kept: left to the garbage collector, every game ever started against
    a ``cmd:`` bot kept its processes alive until it expired (three per game, up to 256 games)."""

    def __init__(
        self,
        limit: int = MAX_SESSIONS,
        ttl: float = SESSION_TTL,
        clock: Any = time.monotonic,
        per_client: int = MAX_PER_CLIENT,
        process_limit: int = MAX_PROCESS_GAMES,
    ):
        self.limit, self.ttl, self.clock, self.per_client = limit, ttl, clock, per_client
        self.process_limit = process_limit
        self.games: OrderedDict[str, tuple[PlaySession, float]] = OrderedDict()
        self.owners: dict[str, str] = {}  # session id -> the client that started it (:func:`visitor`)
        self.lock = threading.Lock()
        self._dropped: list[PlaySession] = []  # to close once the lock is let go (see _close_dropped)

    def _drop(self, sid: str) -> None:
        s, _ = self.games.pop(sid)
        self.owners.pop(sid, None)
        self._dropped.append(s)

    def _close_dropped(self) -> None:
        """Stop the processes of the games just dropped, outside :attr:`lock` (a game still answering a
        request finishes it first: :meth:`PlaySession.close` takes the game's own lock)."""
        with self.lock:
            dropped, self._dropped = self._dropped, []
        for s in dropped:
            s.close()

    def _expire(self) -> None:
        now = self.clock()
        for sid in [s for s, (_, t) in self.games.items() if now - t > self.ttl]:
            self._drop(sid)

    def add(self, s: PlaySession, client: str = "") -> None:
        client = visitor(client)
        with self.lock:
            self._expire()
            mine = [sid for sid in self.games if self.owners.get(sid) == client]  # least recently used first
            while mine and len(mine) >= self.per_client:
                self._drop(mine.pop(0))
            self.games[s.id] = (s, self.clock())
            self.owners[s.id] = client
            while len(self.games) > self.limit:
                self._drop(next(iter(self.games)))
            if s.own_processes:
                held = [sid for sid, (g, _) in self.games.items() if g.own_processes]  # least recently used first
                while len(held) > self.process_limit:
                    self._drop(held.pop(0))
        self._close_dropped()

    def get(self, sid: str | None) -> PlaySession:
        try:
            return self._get(sid)
        finally:
            self._close_dropped()

    def _get(self, sid: str | None) -> PlaySession:
        with self.lock:
            self._expire()
            if sid is None:  # the game used last; a named game that is gone is a 404 even when none is left
                if not self.games:
                    raise IllegalAction("no game yet: POST /api/new first", 409)
                sid = next(reversed(self.games))
            if sid not in self.games:
                raise IllegalAction(f"no game {sid[:40]!r} on this server (it ended or expired): start a new one", 404)
            s, _ = self.games.pop(sid)
            self.games[sid] = (s, self.clock())  # most recently used last
            return s

    def __len__(self) -> int:
        return len(self.games)


class App:
    """What the server holds: the games being played (play) or the recorded game (view)."""

    def __init__(
        self,
        *,
        bot: str = "simple",
        preset: str = "standard",
        target: int | None = None,
        recorded: dict[str, Any] | None = None,
        games: Games | None = None,
        seed: int | None = None,
        max_sessions: int = MAX_SESSIONS,
        session_ttl: float = SESSION_TTL,
        per_client: int = MAX_PER_CLIENT,
        process_games: int = MAX_PROCESS_GAMES,
    ):
        from arena.settings.rules import available_presets, load_rules

        # --rules FILE: the file's rules are offered under its name, first, and chosen by default.
        self.custom: dict[str, Any] = {}
        if preset not in available_presets():
            self.custom[Path(preset).name] = load_rules(preset)
            preset = Path(preset).name
        if target is None:  # the variant's own target (a rules file's), one of the page's choices even if unusual
            target = int(self._rules(preset).target)
        self.targets = sorted({*TARGETS, target})
        self.defaults: dict[str, Any] = {"bot": bot, "preset": preset, "target": target}
        self.recorded = recorded
        self.games = games
        self.seed = seed
        self.sessions = Sessions(max_sessions, session_ttl, per_client=per_client, process_limit=process_games)
        #: Each bot loaded once, by spec, for every game against it: a bot holds no state of its own between
        #: games (its memory, random state and parameters are each game's, :class:`PlaySession`), and loading
        #: one per game grew the server's memory by a quarter of a megabyte each new game, for ever.
        self.bots: dict[str, Bot] = {}
        self.bots_lock = threading.Lock()
        self.loading: dict[str, threading.Lock] = {}  # spec -> held while it loads (see bot())

    @property
    def session(self) -> PlaySession | None:
        """The game used last (tests and single-user use)."""
        return next(reversed(self.sessions.games.values()))[0] if self.sessions.games else None

    def bot(self, spec: str) -> Bot:
        """The bot ``spec`` names, loaded on its first game and kept for the next ones (loading one for
        every game grew the server's memory without end).  A bot in its own process (``cmd:``, a
        sandboxed file) is loaded for each game: its process holds one game's conversation, and two
        games at once would interleave their questions in it."""
        from arena.external.client import external_of
        from arena.loading.load import load_bot

        with self.bots_lock:
            if spec in self.bots:
                return self.bots[spec]
            loading = self.loading.setdefault(spec, threading.Lock())
        # Loaded under a lock of its own: a bot compiling for its first game (the analyzer takes about
        # 24 s) held up every new game, even against bots loaded long before, under one lock for all.
        with loading:
            with self.bots_lock:
                if spec in self.bots:  # loaded while this request waited
                    return self.bots[spec]
            bot = load_bot(spec)
            if external_of(bot) is None:
                with self.bots_lock:
                    self.bots[spec] = bot
            return bot

    def presets(self) -> list[str]:
        from arena.settings.rules import available_presets

        known = available_presets()
        first = [p for p in ("standard", "oklahoma") if p in known]  # Gin, Oklahoma gin, then the rest
        return [*self.custom, *first, *(p for p in known if p not in first)]

    def options(self) -> dict[str, Any]:
        from arena.botkit.bot import BUILTIN_BOTS
        from arena.web.session import ADVANCED, rule_ranges

        bots = [b.replace("_", "-") for b in BUILTIN_BOTS]
        if self.defaults["bot"] not in bots:
            bots.insert(0, self.defaults["bot"])
        return {
            "presets": self.presets(),
            "targets": self.targets,
            "bots": bots,
            "defaults": self.defaults,
            "advanced": rule_ranges(),
            "preset_rules": {p: self._rules(p).to_dict() for p in self.presets()},
            "advanced_keys": list(ADVANCED),
        }

    def _rules(self, preset: str) -> Any:
        from arena.settings.rules import load_rules

        return self.custom[preset] if preset in self.custom else load_rules(preset)

    def new_game(self, body: NewGame, client: str = "") -> dict[str, Any]:
        """A new game for ``client`` (its address: what :class:`Sessions` bounds the games of)."""
        bot = body.bot if body.bot is not None else self.defaults["bot"]
        preset = body.preset if body.preset is not None else self.defaults["preset"]
        target = body.target if body.target is not None else self.defaults["target"]
        presets = self.presets()
        if preset not in presets:
            raise IllegalAction(f"unknown preset {preset[:40]!r} (presets: {', '.join(presets)})", 400)
        bots = self.options()["bots"]
        if bot not in bots:
            raise IllegalAction(f"unknown bot {bot[:40]!r} (bots: {', '.join(bots)})", 400)
        s = PlaySession.start(
            bot=bot,
            preset=preset,
            target=target,
            rules=self._rules(preset),
            overrides=body.rules,
            targets=self.targets,
            seed=self.seed,
            loader=self.bot,
        )
        self.sessions.add(s, client)
        return s.view()

    def game(self, run: str | None, game: str | None, client: str = "") -> dict[str, Any]:
        """The recorded game a viewer request names (``?run=R&game=G``; the one preloaded without them),
        for ``client`` (its address: replays are bounded per :func:`visitor`)."""
        r = self.recorded
        if r is not None and run in (None, r["run"]) and game in (None, str(r["game_id"])):
            return r
        if self.games is None:
            if r is None:
                raise IllegalAction("this server shows no recorded game (start it with arena view)", 404)
            raise IllegalAction(f"this viewer shows game {r['game_id']} of run {r['run']} only", 404)
        try:
            return self.games.get(run, game, visitor(client))
        except GameNotFound as exc:
            raise IllegalAction(str(exc), exc.status) from None


#: A path's body rule: (whether a POST must be JSON, the body's byte limit); see :class:`Guard`.
BodyRule = Callable[[str], tuple[bool, int]]
#: Why a POST is refused from its headers alone, before its body is read: (status, one line), or None; held
#: (``async with``) while the request is served, so a gate may count the requests it let through.
Gate = Callable[[Scope], AbstractAsyncContextManager[tuple[int, str] | None]]


def play_rule(path: str) -> tuple[bool, int]:
    """The play and viewer API: JSON bodies of at most :data:`MAX_BODY` bytes."""
    return True, MAX_BODY


def _error_body(scope: Scope, message: str) -> bytes:
    """The Guard's one line: JSON on the API, text on a page (the league's forms)."""
    if scope["path"].startswith("/api/"):
        return json.dumps({"error": message}).encode()
    return message.encode()


def _error_headers(scope: Scope, body: bytes) -> list[tuple[bytes, bytes]]:
    ctype = b"application/json" if scope["path"].startswith("/api/") else b"text/plain; charset=utf-8"
    return [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]


class Guard:
    """Reads the body in time (:data:`BODY_TIMEOUT`, :data:`MIN_BODY_RATE`) under its path's limit, wants
    JSON where the rule says so, and marks answers no-store.  ``gate`` (the league's: who is sending an
    upload) may refuse a POST from its headers first, so nobody waits for a stranger's body or holds it."""

    def __init__(
        self, app: ASGIApp, timeout: float = BODY_TIMEOUT, rule: BodyRule = play_rule, gate: Gate | None = None
    ):
        self.app, self.timeout, self.rule, self.gate = app, timeout, rule, gate
        play = play_csp().encode()
        #: the pages' own policies, for their 2xx answers (``/`` is the play page, or a redirect to the league)
        self.page_csp = {"/view": view_csp().encode(), "/play": play, "/": play}

    async def _reply(self, scope: Scope, send: Send, status: int, message: str) -> None:
        body = _error_body(scope, message)
        await send({"type": "http.response.start", "status": status, "headers": _error_headers(scope, body)})
        await send({"type": "http.response.body", "body": body})

    async def _read_body(
        self, scope: Scope, receive: Receive, limit: int, keep: Callable[[bytes], object]
    ) -> tuple[int, str] | None:
        """Receive the body, each chunk to ``keep``, in time and under ``limit``; None when it is all in, else
        why it was cut off (408 or 413, one line), or ``(0, "")`` when the client left."""
        declared = dict(scope["headers"]).get(b"content-length", b"")
        expected = min(int(declared), limit) if declared.isdigit() else limit  # bytes: ASCII digits only
        start = time.monotonic()
        size = 0
        while True:
            # The body must keep up with MIN_BODY_RATE, BODY_TIMEOUT behind: by any moment it has had the time
            # of what came so far at that rate, plus the pause.  A deadline set once from the declared length
            # let a client that declared 2.6 MB hold the connection for 170 s by sending a byte every 4 s.
            deadline = start + self.timeout + min(size, expected) / MIN_BODY_RATE
            left = deadline - time.monotonic()
            try:
                async with asyncio.timeout(max(0.0, min(self.timeout, left))):
                    message = await receive()
            except TimeoutError:
                if left <= self.timeout:
                    took = time.monotonic() - start
                    return 408, (
                        f"the request body did not arrive within {took:.3g} s: {size} of {expected} bytes, slower "
                        f"than {MIN_BODY_RATE // 1024} KiB/s after the first {self.timeout:g} s"
                    )
                return 408, f"the request body did not arrive: nothing came for {self.timeout:g} s"
            if message["type"] == "http.disconnect":
                return 0, ""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return 413, f"request body too large (limit {limit} bytes)"
            keep(chunk)
            if not message.get("more_body", False):
                return None

    async def _refuse_unread(
        self, scope: Scope, receive: Receive, send: Send, limit: int, status: int, message: str
    ) -> None:
        """Answer ``status`` at once, before the body, then take in and drop whatever body comes (in the
        body's time, under its limit) before the answer ends: a client that sends its whole body before it
        reads (urllib, ``arena submit``) gets the answer rather than a reset connection, and nothing is kept."""
        body = _error_body(scope, message)
        await send({"type": "http.response.start", "status": status, "headers": _error_headers(scope, body)})
        await send({"type": "http.response.body", "body": body, "more_body": True})
        await self._read_body(scope, receive, limit, lambda chunk: None)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        path = scope["path"]

        async def no_store(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"referrer-policy" not in names:  # the play page's address holds the game's id (?s=)
                    headers.append((b"referrer-policy", b"same-origin"))
                if b"content-security-policy" not in names:
                    page = self.page_csp.get(path) if message["status"] < 300 else None
                    headers.append((b"content-security-policy", page or STRICT_CSP.encode()))
                message["headers"] = headers
            await send(message)

        if scope["method"] != "POST":
            await self.app(scope, receive, no_store)
            return
        json_only, limit = self.rule(scope["path"])
        if self.gate is None:
            await self._post(scope, receive, no_store, json_only, limit)
            return
        async with self.gate(scope) as refusal:
            if refusal is not None:
                await self._refuse_unread(scope, receive, no_store, limit, *refusal)
                return
            await self._post(scope, receive, no_store, json_only, limit)

    async def _post(self, scope: Scope, receive: Receive, no_store: Send, json_only: bool, limit: int) -> None:
        """A POST its gate let through: its body read under the path's rule, then the app."""
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:  # refused by its header: no wait for the body first
            await self._refuse_unread(
                scope, receive, no_store, limit, 413, f"request body too large (limit {limit} bytes)"
            )
            return
        ctype = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if json_only and ctype != b"application/json":
            await self._reply(scope, no_store, 415, "POST bodies must be JSON (Content-Type: application/json)")
            return
        chunks: list[bytes] = []
        cut = await self._read_body(scope, receive, limit, chunks.append)
        if cut is not None:
            if cut[0]:  # else the client left
                await self._reply(scope, no_store, *cut)
            return
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, no_store)


class Hosts(TrustedHostMiddleware):
    """Starlette's Host check (DNS rebinding), whose refusal names the Host and how to allow it, in one line:
    JSON on the API, text elsewhere, with the security headers of every other answer.  A request with more
    than one Host header is a 400 (RFC 7230, 5.4): which one a check reads and which one a proxy routes by
    need not be the same."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]):
        super().__init__(self._passed, allowed_hosts=list(allowed_hosts), www_redirect=False)
        self.inner = app

    async def _passed(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["arena.host_ok"] = True
        await self.inner(scope, receive, send)

    @staticmethod
    def _refusal(scope: Scope, line: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
        """The headers and body of a refusal of this middleware's own."""
        body = _error_body(scope, line)
        headers = _error_headers(scope, body) + [
            (b"cache-control", b"no-store"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"content-security-policy", STRICT_CSP.encode()),
        ]
        return headers, body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        given = [v for k, v in scope["headers"] if k.lower() == b"host"]
        if len(given) > 1:
            headers, body = self._refusal(scope, "more than one Host header (a request names one host)")
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        host = (given[0] if given else b"").decode("latin-1")[:100]
        headers, line = self._refusal(
            scope,
            f"this server does not answer to Host {host!r} (DNS rebinding); "
            "a league's server allows it with --allowed-host NAME",
        )

        async def named(message: Message) -> None:
            if not scope.get("arena.host_ok"):  # the check's own refusal: say which Host, and the fix
                if message["type"] == "http.response.start":
                    message = {**message, "headers": headers}
                elif message["type"] == "http.response.body":
                    message = {**message, "body": line, "more_body": False}
            await send(message)

        await super().__call__(scope, receive, named)


def _fastapi(**kw: Any) -> FastAPI:
    """FastAPI without its OpenTelemetry hooks where it has them: the arena exports no traces, and asking for
    a tracer provider on every request costs more than answering a cached leaderboard."""
    try:
        return FastAPI(**kw, telemetry={"tracing": False, "metrics": False, "logs": False})
    except TypeError:  # a FastAPI without telemetry
        return FastAPI(**kw)


def create_app(
    state: App,
    *,
    league: str | Path | None = None,
    hosts: Sequence[str] = tuple(ALLOWED_HOSTS),
    play: bool = True,
    shared: bool | None = None,
) -> FastAPI:
    """The one ASGI app: pages, static files, the play API and the viewer API; with ``league``, the
    league of that folder too (its pages under ``/league/``, its JSON under ``/api/``; ``/`` leads there).

    ``hosts``: the Host names answered (:func:`allowed_hosts`).  ``play``: serve the play page (``/play``,
    and ``/`` without a league) and its API (``/api/options``, ``new``, ``state``, ``act``, ``next``);
    without it those paths are 404s, as any other unknown path.  ``shared`` (default: with a league): a server
    others reach, where a play request without ``?session=`` is a 400 rather than the game used last."""
    api = _fastapi(title="Gin Arena", docs_url=None, redoc_url=None, openapi_url=None)
    api.state.arena = state
    rule: BodyRule = play_rule
    gate: Gate | None = None
    if league is not None:
        from arena.league.core import League
        from arena.league.web import LeagueSite

        site = LeagueSite(League(league))
        api.router.routes.extend(site.routes())
        api.state.league_site = site  # for asgi_app: the board's polls answered before the framework
        gate = site.upload_refusal

        def rule(path: str) -> tuple[bool, int]:
            # the league's paths: its own limits, forms allowed (they carry CSRF tokens); the rest: the play API's
            limit = site.body_limit(path)
            return play_rule(path) if limit is None else (False, limit)

        @api.get("/")
        def league_home() -> RedirectResponse:
            return RedirectResponse("/league/", status_code=307)

    @api.exception_handler(IllegalAction)
    async def illegal(request: Request, exc: IllegalAction) -> JSONResponse:
        # a refusal with a code: the page says it in its language from the code and values (card numbers, counts)
        named = {"code": exc.code, "values": exc.values} if exc.code else {}
        return JSONResponse({"error": str(exc), **named}, status_code=exc.status)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _one_line(exc)}, status_code=400)

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        text = f"no page {request.url.path[:200]}" if exc.status_code == 404 else str(exc.detail)
        if exc.status_code == 400 and isinstance(exc.__cause__, ValueError | RecursionError):
            text = _unreadable(exc.__cause__)  # FastAPI's "There was an error parsing the body"
        headers = dict(exc.headers or {})  # a 405's Allow (HTTP requires it), any other the framework set
        if exc.status_code == 405 and headers.get("Allow"):
            text = f"{request.url.path[:200]} takes {headers['Allow']}, not {request.method[:20]}"
        if request.url.path.startswith("/league/"):  # the league's pages: a line of text
            return Response(text, exc.status_code, headers, media_type="text/plain; charset=utf-8")
        return JSONResponse({"error": text}, exc.status_code, headers)

    @api.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        # a bot that fails: one line to the page, the server goes on
        return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)

    if play:
        _play_routes(api, state, home=league is None, shared=league is not None if shared is None else shared)

    @api.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status_code=204)  # no icon: browsers ask anyway, and a 404 shows in their console

    @api.api_route("/view", methods=["GET", "HEAD"])
    def view_page() -> FileResponse:
        return FileResponse(page_path("view.html"), media_type="text/html; charset=utf-8")

    @api.get("/api/game")
    def recorded(request: Request, run: str | None = None, game: str | None = None) -> dict[str, Any]:
        return state.game(run, game, request.client.host if request.client else "")

    api.mount("/static", StaticFiles(directory=STATIC), name="static")
    api.add_middleware(Guard, rule=rule, gate=gate)
    api.add_middleware(Hosts, allowed_hosts=list(hosts))
    api.state.hosts = list(hosts)
    return api


def asgi_app(api: FastAPI) -> ASGIApp:
    """What uvicorn runs: the app of :func:`create_app`; for a league, behind the board's fast path
    (:mod:`arena.league.board_asgi`: the board's polls answered before the framework sees them)."""
    site = getattr(api.state, "league_site", None)
    if site is None:
        return api
    from arena.league.board_asgi import BoardFastPath

    return BoardFastPath(api, site.cached, api.state.hosts)


def _play_routes(api: FastAPI, state: App, *, home: bool, shared: bool) -> None:
    """The play page (at ``/play``, and at ``/`` when ``home``) and its JSON API.  ``shared``: a server others
    reach too, where each request must name its game (``?session=``): without it, the game used last would be
    anyone's."""

    def play_page() -> FileResponse:
        return FileResponse(page_path("play.html"), media_type="text/html; charset=utf-8")

    api.api_route("/play", methods=["GET", "HEAD"])(play_page)
    if home:
        api.api_route("/", methods=["GET", "HEAD"])(play_page)

    def game(session: str | None) -> PlaySession:
        if session is None and shared:
            raise IllegalAction("missing session: this server is shared, name your game with ?session=ID", 400)
        return state.sessions.get(session)

    @api.get("/api/options")
    def options() -> dict[str, Any]:
        return state.options()

    @api.post("/api/new")
    def new(body: NewGame, request: Request) -> dict[str, Any]:
        return state.new_game(body, request.client.host if request.client else "")

    @api.get("/api/state")
    def game_state(session: str | None = None) -> dict[str, Any]:
        return game(session).view()

    @api.post("/api/act")
    def act(body: Act, session: str | None = None) -> dict[str, Any]:
        s = game(session)
        s.act(body.action, body.card, body.melds, body.seen)
        return s.view()

    @api.post("/api/next")
    def next_hand(body: Next, session: str | None = None) -> dict[str, Any]:
        s = game(session)
        s.next_hand(body.seen)
        return s.view()


def allowed_hosts(bind: str, extra: Sequence[str] = ()) -> list[str]:
    """The Host names a server bound to ``bind`` answers to: the loopback names, ``bind`` itself, and ``extra``
    (``--allowed-host``: the name clients or a reverse proxy use).  Bound to every interface (0.0.0.0, ::),
    it also answers to this machine's own names and addresses.  ``*`` in ``extra``: any Host."""
    for name in extra:
        if not HOST_RE.fullmatch(name):
            raise ValueError(
                f"--allowed-host {name[:60]!r} is not a host name, *.domain, IPv4 address, [IPv6] address or *"
            )
    if "*" in extra:
        return ["*"]
    names = list(ALLOWED_HOSTS)
    if bind in WILDCARD_BINDS:
        names += [socket.gethostname(), socket.getfqdn()]
        try:
            infos = socket.getaddrinfo(socket.gethostname(), None)
        except OSError:
            infos = []
        names += [f"[{i[4][0]}]" if i[0] == socket.AF_INET6 else str(i[4][0]) for i in infos]
    else:
        names.append(f"[{bind}]" if ":" in bind else bind)
    names += list(extra)
    out: list[str] = []
    for n in names:
        if n and n.lower() not in out:
            out.append(n.lower())
    return out


def _unreadable(cause: BaseException) -> str:
    """Why a JSON body could not be read, in one line: FastAPI says only "There was an error parsing the body"
    of a body that is not UTF-8, holds a number of thousands of digits, or nests past the parser's depth."""
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not UTF-8 (byte {cause.start})"
    if isinstance(cause, RecursionError):
        return "the request body nests too deeply to read"
    if "digits" in str(cause):  # int()'s limit on the digits of a number it reads
        return "the request body holds a number too long to read"
    return "the request body is not JSON"


def _one_line(exc: RequestValidationError) -> str:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    loc = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
    if first.get("type") == "json_invalid":
        where = tuple(first.get("loc", ()))[-1:]
        ctx = first.get("ctx")
        why = ctx.get("error") if isinstance(ctx, dict) else None
        return (
            f"the request body is not JSON: {why} at character {where[0]}"
            if why and where
            else "the request body is not JSON"
        )
    if first.get("type") == "model_attributes_type":
        return "the request body must be a JSON object"
    return f"{loc or 'body'}: {first.get('msg', 'invalid')}"


class Server:
    """uvicorn serving :func:`create_app` on a socket bound here (port 0 picks a free one)."""

    def __init__(
        self,
        app: App,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        league: str | Path | None = None,
        hosts: Sequence[str] = tuple(ALLOWED_HOSTS),
        play: bool = True,
        shared: bool | None = None,
    ):
        """``shared`` (default: with a league, or bound to an address that is not loopback): see
        :func:`create_app`."""
        self.app = app
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(BACKLOG)
        if shared is None:
            shared = league is not None or host not in LOOPBACK_BINDS
        asgi = asgi_app(create_app(app, league=league, hosts=hosts, play=play, shared=shared))
        config = uvicorn.Config(
            asgi,
            log_level="warning",
            lifespan="off",
            backlog=BACKLOG,
            timeout_keep_alive=5,
            http=http_protocol(getattr(asgi, "whole_answer", None)),
            access_log=False,  # never shown at log level warning, yet its arguments are built per answer
        )
        self.server = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def run(self) -> None:
        """Serve in this thread until Ctrl-C or :meth:`stop`."""
        self.server.run(sockets=[self.sock])

    def start(self) -> Server:
        """Serve in a background thread; returns when the server answers."""
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.sock.close()


def can_open_browser() -> bool:
    """Whether there is a display to open a browser on (never in CI or over plain ssh)."""
    import os
    import sys

    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(
    app: App,
    port: int,
    path: str = "",
    open_browser: bool = True,
    echo: Any = print,
    *,
    host: str = "127.0.0.1",
    league: str | Path | None = None,
    hosts: Sequence[str] = tuple(ALLOWED_HOSTS),
    play: bool = True,
) -> None:
    """Serve until Ctrl-C (or SIGTERM); print the URL and open it when there is a display.  ``league``,
    ``hosts`` and ``play``: as :func:`create_app`."""
    server = Server(app, port, host, league=league, hosts=hosts, play=play)
    url = server.url + path.lstrip("/")
    echo(f"Gin Arena at {url}  (Ctrl-C to stop)")
    if open_browser and can_open_browser():
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    # Everything imported and built so far (the app, the libraries: a few hundred thousand objects) lives as
    # long as the server: out of the collector's sight, a full collection no longer stalls every request in
    # flight for tens of milliseconds.
    gc.collect()
    gc.freeze()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.sock.close()
