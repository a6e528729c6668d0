"""The league's web side: Starlette routes for the pages and the JSON API.

:class:`LeagueSite` holds the routes of one league folder; the one web app
(:func:`arena.web.server.create_app`, what ``arena league serve`` runs) includes
them and asks :meth:`LeagueSite.body_limit` for each path's body limit.  Paths:
``/league/...`` for pages, ``/api/...`` for JSON; nothing under ``/play`` or
``/view`` (the game links of a bot page open the app's viewer:
``/view?run=rNNN&game=ID``).

Trust: every request is checked where it comes in.  Bodies are read with a
size cap before parsing; names must match a pattern before any lookup; no
path from a request ever reaches the file system (files are found through
the database).  Pages are built with :func:`html.escape` on every value and
live updates set ``textContent``, so nothing a bot or a user wrote reaches a
page as markup; the Content-Security-Policy allows only the league's own
script and style.  The API takes ``Authorization: Bearer TOKEN``; pages use
a session cookie (HttpOnly, SameSite=Strict, Secure under HTTPS) and every
form carries a CSRF token.  Errors are one line (JSON ``{"error": ...}`` on
the API), never a traceback; a body nested too deeply to parse is a 400, and a
database that cannot be read (damaged while serving) is one logged line and a
503.

The leaderboard and the progress line are computed when the database changes
(``PRAGMA data_version``, read in microseconds, tells), not on each request:
each answer is kept as its JSON bytes with an ETag, and a request that sends
that ETag back gets a 304.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import logging
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from html import escape
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Scope

from arena.league.core import League, User
from arena.league.db import LeagueError, Reconnecting, busy
from arena.league.file_kinds import PAGE_SUFFIXES, file_kind, policy_format
from arena.league.forms import FilePart, decimal, read_file_form, read_form, read_json

log = logging.getLogger("arena.league.web")

SESSION_COOKIE = "league_session"
LOGIN_COOKIE = "league_login_csrf"
#: A name in a path (checked with ``fullmatch``: ``$`` would also pass a name with a final newline): a name
#: people choose (letters, digits, ``_`` and ``-``: :func:`arena.league.core.check_name`), or a house bot's
#: built-in with inline settings (``monte-carlo:samples=100,gap=0.5``).  A name is only ever looked up.
_SETTING = r"[A-Za-z_][A-Za-z0-9_]{0,30}=[-+0-9.eE]{1,24}"
PARAM_RE = re.compile(rf"[A-Za-z0-9_-]{{1,40}}|[a-z][a-z-]{{1,30}}:{_SETTING}(?:,{_SETTING}){{0,7}}")
SMALL_BODY = 16_384
#: The routes that take an upload: the sender is checked from the headers before the body is read.
UPLOAD_PATHS = ("/api/submit", "/league/submit")
#: The uploads one user may be sending at once (to this server process); the next is a 429 from its headers.
UPLOADS_AT_ONCE = 2
#: What the API and pages say when the database cannot be read.
DB_DOWN = "the league's database cannot be read just now; the organizer must restore it"
#: ... and when a write has held it locked past the league's busy_seconds (sound, only busy).  The holder may be
#: this server (another request's write) as well as another process (an organizer's sqlite3 shell): neither named.
DB_BUSY = "the league's database is busy (another write holds it locked); try again in a minute"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class _Conns:
    """One database connection per thread (the threadpool's threads are reused), reopened when the file
    changes under it and dropped after a database error."""

    def __init__(self, league: League):
        self.league = league
        self.local = threading.local()

    def holder(self) -> Reconnecting:
        h = getattr(self.local, "holder", None)
        if h is None:
            h = self.local.holder = self.league.reconnecting()
        return h


class _Cached:
    """The leaderboard and progress answers, recomputed when the database has changed since (any
    connection's commit moves ``PRAGMA data_version`` of this one), as JSON bytes with their ETags."""

    def __init__(self, league: League):
        self.league = league
        self.poll = league.reconnecting()  # the event loop's: data_version only
        self.read = league.reconnecting()  # a worker thread's, under the lock
        self.lock = threading.Lock()
        self.key: tuple[int, int] | None = None
        self.answers: dict[str, tuple[bytes, str, Any]] = {}

    def _key(self) -> tuple[int, int]:
        try:
            conn = self.poll.get()
            return id(conn), int(conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError:
            self.poll.drop()
            raise

    async def get(self, what: str) -> tuple[bytes, str, Any]:
        """(JSON bytes, ETag, value) of ``board`` or ``progress``, as of now."""
        key = self._key()
        if key != self.key:
            await run_in_threadpool(self._refresh, key)
        return self.answers[what]

    #: Seconds :meth:`fresh` trusts its last look at the database (a look is a ``stat`` and a query: under
    #: a storm of polls, one look a millisecond rather than one a request).  This server's own database calls
    #: end the trust at once (:meth:`LeagueSite.db`); another process's commit shows within this time.
    TRUST = 0.001
    looked = 0.0

    def fresh(self, what: str) -> tuple[bytes, str, Any] | None:
        """The answer of :meth:`get` if the database has not changed since it was computed, without waiting;
        None when it must be computed again (or the database cannot be read)."""
        now = time.monotonic()
        if now - self.looked > self.TRUST:
            try:
                key = self._key()
            except sqlite3.DatabaseError:
                return None
            if key != self.key:
                return None
            self.looked = now
        return self.answers[what]

    def _refresh(self, key: tuple[int, int]) -> None:
        with self.lock:
            if key == self.key:
                return
            try:
                c = self.read.get()
                values = {"board": self.league.leaderboard(c), "progress": League.progress(c)}
            except sqlite3.DatabaseError:
                self.read.drop()
                raise
            answers = {}
            for what, value in values.items():
                body = json.dumps(value, separators=(",", ":")).encode()
                answers[what] = (body, '"' + hashlib.sha256(body).hexdigest()[:24] + '"', value)
            self.answers, self.key = answers, key


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


def _api_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": _one_line(message)}, status_code=status, headers=HEADERS)


Handler = Callable[[Request], Awaitable[Response]]


def _guard(api: bool) -> Callable[[Handler], Handler]:
    """Turn a LeagueError into its status and one line; anything else into a 500 line (logged)."""

    def wrap(fn: Handler) -> Handler:
        @functools.wraps(fn)
        async def inner(request: Request) -> Response:
            try:
                return await fn(request)
            except LeagueError as exc:
                if api:
                    return _api_error(exc.status, str(exc))
                return HTMLResponse(
                    _layout("Error", f"<p class=error>{escape(_one_line(str(exc)))}</p>"),
                    status_code=exc.status,
                    headers=HEADERS,
                )
            except sqlite3.DatabaseError as exc:  # damaged while serving: one line in the log, a 503 to the client
                held = busy(exc)
                log.error(
                    "%s %s: the league database cannot be used (%s); %s",
                    request.method,
                    request.url.path,
                    _one_line(str(exc))[:200],
                    "it is busy: another write held its lock past busy_seconds" if held else "restore it from a backup",
                )
                message = DB_BUSY if held else DB_DOWN
                if api:
                    return _api_error(503, message)
                return PlainTextResponse(message, status_code=503, headers=HEADERS)
            except Exception:
                log.exception("%s %s", request.method, request.url.path)
                msg = "internal error (logged on the server)"
                if api:
                    return _api_error(500, msg)
                return PlainTextResponse(msg, status_code=500, headers=HEADERS)

        return inner

    return wrap


def _base64_field(data: dict[str, Any], key: str) -> bytes | None:
    """A binary upload sent in a JSON field as base64 text (None when absent)."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise LeagueError(f"{key} must be the file's bytes in base64 (a string)")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise LeagueError(f"{key} is not base64") from None


def _param(request: Request, key: str) -> str:
    value = request.path_params[key]
    if not PARAM_RE.fullmatch(value):
        raise LeagueError(f"{key} {value[:40]!r} is not a name (letters, digits, _ and -)", 400)
    return value


def _same_secret(sent: str, kept: str) -> bool:
    """Whether ``sent`` (from a form or a header: any characters) is the secret ``kept``, in constant time
    (``hmac.compare_digest`` compares bytes; given str with a non-ASCII character, it raises TypeError)."""
    return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), kept.encode("utf-8", "surrogatepass"))


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return None


class LeagueSite:
    """The routes of one league folder."""

    def __init__(self, league: League):
        self.league = league
        self.conns = _Conns(league)
        self.cached = _Cached(league)
        cfg = league.config
        # JSON escaping may make a file's text 6 times its UTF-8 bytes (a control byte is \u0001, an ASCII-escaped
        # é is \u00e9: arena submit escapes so); base64 makes an archive 4/3 its size
        self.max_upload = max(6 * cfg.max_file_bytes, 4 * cfg.max_archive_bytes // 3 + 4) + 4096
        # The submit page: pasted source %-encoded (3 bytes a byte), or a file as it is beside that text
        self.max_form = max(3 * cfg.max_file_bytes, max(cfg.max_file_bytes, cfg.max_archive_bytes) + cfg.max_file_bytes)
        self.max_form += 16_384  # the other fields, the parts' headers
        #: The uploads each user is sending now (user id -> count), kept by :meth:`upload_refusal`.
        self.sending: dict[int, int] = {}
        #: The submit form's text fields and their byte limits (a browser sends a textarea's lines as CRLF).
        self.form_text = {"csrf": 200, "name": 200, "class": 400, "source": 2 * cfg.max_file_bytes}

    def body_limit(self, path: str) -> int | None:
        """The byte limit of a POST body to ``path``; None: not a league path."""
        if path == "/api/submit":
            return self.max_upload
        if path == "/league/submit":
            return self.max_form
        if path.startswith(("/league/", "/api/users", "/api/bots/")):
            return SMALL_BODY
        return None

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        def call() -> Any:
            holder = self.conns.holder()
            try:
                return fn(holder.get(), *args)
            except sqlite3.DatabaseError:
                holder.drop()
                raise

        try:
            return await run_in_threadpool(call)
        finally:
            self.cached.looked = 0.0  # it may have written: the board's next answer looks again

    # --- who is asking ----------------------------------------------------------------
    @asynccontextmanager
    async def upload_refusal(self, scope: Scope) -> AsyncIterator[tuple[int, str] | None]:
        """Why a POST to an upload route is refused before its body is read (status, one line), or None when it
        may be read, held while the request is served.  The one web app's Guard asks before it reads any body:
        a stranger (no valid token or session) cannot make the server wait for, or hold, an upload of theirs,
        and a user who is already sending :data:`UPLOADS_AT_ONCE` uploads gets a 429 (each body is held whole
        in memory while it comes; counted in this process, so a server of N workers takes N times as many).
        The route checks the caller again (the same calls): this only decides whether the body is worth reading."""
        if scope["path"] not in UPLOAD_PATHS:
            yield None
            return
        request = Request(scope)
        try:
            if scope["path"] == "/api/submit":
                user = await self.api_user(request, write=True)
            elif (s := await self.session(request)) is not None:
                user = s[0]
            else:
                raise LeagueError("log in first", 401)
        except LeagueError as exc:
            yield exc.status, _one_line(str(exc))
            return
        except sqlite3.DatabaseError as exc:
            yield 503, DB_BUSY if busy(exc) else DB_DOWN
            return
        sending = self.sending.get(user.id, 0)
        if sending >= UPLOADS_AT_ONCE:
            yield 429, f"you are already sending {sending} uploads; send the next once one has its answer"
            return
        self.sending[user.id] = sending + 1
        try:
            yield None
        finally:
            self.sending[user.id] -= 1
            if not self.sending[user.id]:
                del self.sending[user.id]

    async def session(self, request: Request) -> tuple[User, str] | None:
        return await self.db(League.session, request.cookies.get(SESSION_COOKIE))

    async def api_user(self, request: Request, *, write: bool) -> User:
        """The caller: a bearer token, or a session cookie (with X-CSRF-Token on writes); else 401."""
        token = _bearer(request)
        if token is not None:
            user = await self.db(League.user_by_token, token)
            if user is None:
                raise LeagueError("the token is not valid", 401)
            return user
        s = await self.session(request)
        if s is None:
            raise LeagueError("log in first: send Authorization: Bearer <token>", 401)
        user, csrf = s
        if write and not _same_secret(request.headers.get("x-csrf-token", ""), csrf):
            raise LeagueError("missing or wrong X-CSRF-Token header", 403)
        return user

    async def form_user(self, request: Request, form: dict[str, str]) -> User:
        s = await self.session(request)
        if s is None:
            raise LeagueError("log in first", 401)
        user, csrf = s
        if not _same_secret(form.get("csrf", ""), csrf):
            raise LeagueError("the form's CSRF token is wrong or missing; reload the page", 403)
        return user

    # --- JSON API ---------------------------------------------------------------------
    async def _cached(self, request: Request, what: str) -> Response:
        body, etag, _ = await self.cached.get(what)
        headers = {**HEADERS, "ETag": etag, "Cache-Control": "no-cache"}
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    async def api_leaderboard(self, request: Request) -> Response:
        return await self._cached(request, "board")

    async def api_progress(self, request: Request) -> Response:
        return await self._cached(request, "progress")

    async def api_bot(self, request: Request) -> Response:
        return JSONResponse(await self.db(self.league.bot_info, _param(request, "name")), headers=HEADERS)

    async def api_user_info(self, request: Request) -> Response:
        return JSONResponse(await self.db(self.league.user_info, _param(request, "name")), headers=HEADERS)

    async def api_me(self, request: Request) -> Response:
        u = await self.api_user(request, write=False)
        return JSONResponse({"user": u.name, "organizer": u.organizer}, headers=HEADERS)

    async def api_source(self, request: Request) -> Response:
        name = _param(request, "name")
        raw = request.query_params.get("version")
        number = None
        if raw is not None:
            number = decimal(raw, 9)
            if number is None:
                raise LeagueError(f"version {raw[:20]!r} is not a number (digits 0-9)")
        user = None
        if _bearer(request) is not None:
            user = await self.api_user(request, write=False)  # a token is a claim: a wrong one is a 401
        elif request.cookies.get(SESSION_COOKIE):
            # A cookie the browser kept after a logout, a revoke or a token rotation elsewhere is no claim:
            # its holder is a visitor, who may read a published source (the bot page links to it).
            s = await self.session(request)
            user = s[0] if s is not None else None
        text = await self.db(self.league.source, user, name, number)
        return PlainTextResponse(text, headers={**HEADERS, "Content-Disposition": "inline"})

    async def api_submit(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        data = await read_json(request, self.max_upload)
        name: Any = data.get("name")  # checked by submit (check_name)
        source, command = data.get("source"), data.get("command")
        if source is not None and not isinstance(source, str):
            raise LeagueError("source must be the bot file's text (a string)")
        if command is not None and not isinstance(command, str):
            raise LeagueError("command must be a string")
        archive = _base64_field(data, "archive")
        class_name = data.get("class")
        if class_name is not None and not isinstance(class_name, str):
            raise LeagueError("class must be a Java class name (a string)")
        policy = _base64_field(data, "policy")
        policy_format = data.get("format")
        if policy_format is not None and not isinstance(policy_format, str):
            raise LeagueError("format must be a policy file's suffix (py, onnx or npz)")
        out = await self.db(
            lambda conn: self.league.submit(
                conn,
                user,
                name,
                None if source is None else source.encode("utf-8", "surrogatepass"),
                command,
                archive=archive,
                class_name=class_name,
                policy=policy,
                policy_format=policy_format,
            )
        )
        out["page"] = f"/league/user/{quote(user.name)}"
        return JSONResponse(out, status_code=202, headers=HEADERS)

    async def api_withdraw(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        return JSONResponse(await self.db(self.league.withdraw, user, _param(request, "name")), headers=HEADERS)

    async def api_publish(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        name = _param(request, "name")
        data = await read_json(request, SMALL_BODY)
        flag = data.get("published", True)
        if not isinstance(flag, bool):
            raise LeagueError("published must be true or false")
        return JSONResponse(await self.db(self.league.publish, user, name, flag), headers=HEADERS)

    async def api_add_user(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        if not user.organizer:
            raise LeagueError("only an organizer may add users", 403)
        data = await read_json(request, SMALL_BODY)
        organizer = data.get("organizer", False)
        if not isinstance(organizer, bool):
            raise LeagueError("organizer must be true or false")
        token = await self.db(self.league.add_user, data.get("name"), organizer)
        return JSONResponse({"user": data.get("name"), "token": token}, status_code=201, headers=HEADERS)

    async def api_revoke(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        name = _param(request, "name")
        if not user.organizer:
            raise LeagueError("only an organizer may revoke a user", 403)
        if name == user.name:
            raise LeagueError("you cannot revoke yourself here; another organizer or 'arena league revoke-user' can")
        return JSONResponse(await self.db(self.league.revoke_user, name), headers=HEADERS)

    async def api_rotate_token(self, request: Request) -> Response:
        user = await self.api_user(request, write=True)
        name = _param(request, "name")
        if not user.organizer and name != user.name:
            raise LeagueError("only an organizer may give another user a new token", 403)
        token = await self.db(self.league.rotate_token, name)
        return JSONResponse({"user": name, "token": token}, headers=HEADERS)

    # --- pages ------------------------------------------------------------------------
    async def _page(self, request: Request, title: str, body: str, status: int = 200, **extra: str) -> Response:
        s = await self.session(request)
        return HTMLResponse(_layout(title, body, s), status_code=status, headers={**HEADERS, **extra})

    async def page_leaderboard(self, request: Request) -> Response:
        board = (await self.cached.get("board"))[2]
        progress = (await self.cached.get("progress"))[2]
        body = (
            f"<h1>{escape(self.league.config.name)}: leaderboard</h1>"
            f"<p id=progress>{escape(_progress_line(progress))}</p>"
            "<table id=board data-live=1><thead><tr><th>#</th><th>bot</th><th>owner</th><th>version</th>"
            "<th>rating</th><th>95% interval</th><th>games</th><th>win rate</th><th>forfeits</th><th>status</th>"
            f"</tr></thead><tbody>{''.join(_board_row(i + 1, e) for i, e in enumerate(board))}</tbody></table>"
            "<p class=note>Ratings are Elo-scale Bradley-Terry estimates from every game played; "
            "the table updates by itself.</p>"
        )
        return await self._page(request, "Leaderboard", body)

    async def page_bot(self, request: Request) -> Response:
        info = await self.db(self.league.bot_info, _param(request, "name"))
        s = await self.session(request)
        st = info["stats"]
        r = st.get("rating", {})
        name = escape(info["bot"])
        parts = [
            f"<h1>{name}</h1><p>owner <a href='/league/user/{escape(quote(info['owner']))}'>"
            f"{escape(info['owner'])}</a>; version on the board: {escape(str(info['current_version']))}"
            + ("; withdrawn" if info["withdrawn"] else "")
            + "</p>",
            f"<p>rating {_fmt(r.get('rating'))} (95% {_fmt(r.get('rating_low'))} .. {_fmt(r.get('rating_high'))}),"
            f" {int(r.get('games', 0))} games, win rate {_pct(r.get('win_rate'))}, forfeits {int(r.get('forfeits', 0))}"
            "</p>",
            "<h2>Head to head</h2><table><tr><th>opponent</th><th>games</th><th>wins</th><th>losses</th>"
            "<th>draws</th><th>win rate</th></tr>"
            + "".join(
                f"<tr><td>{escape(h['opponent'])}</td><td>{h['games']}</td><td>{h['wins']}</td><td>{h['losses']}</td>"
                f"<td>{h['draws']}</td><td>{_pct(h['win_rate'])}</td></tr>"
                for h in st.get("head_to_head", [])
            )
            + "</table>",
            "<h2>Outcome mix (share of hands)</h2>" + _bars(st.get("outcomes", {})),
            "<h2>Score distribution (final margin per game)</h2>"
            + _bars({f"{m['from']}..{m['to']}": m["games"] for m in st.get("margins", [])}, share=False),
            "<h2>Recent games</h2><table><tr><th>game</th><th>opponent</th><th>result</th><th>score</th>"
            "<th>forfeit</th></tr>"
            + "".join(
                f"<tr><td><a class=game href='/view?run={escape(quote(g['run']))}&amp;game={int(g['game'])}'>"
                f"{escape(g['run'])} #{int(g['game'])}</a></td><td>{escape(g['opponent'])}</td>"
                f"<td>{escape(g['result'])}</td><td>{escape(g['score'])}</td><td>{escape(g['error'])}</td></tr>"
                for g in st.get("recent", [])
            )
            + "</table>",
            "<h2>Versions</h2><table><tr><th>version</th><th>status</th><th>rating</th><th>games</th>"
            "<th>reason</th></tr>"
            + "".join(
                f"<tr><td>{v['number']}</td><td>{escape(v['status'])}</td><td>{_fmt(v['rating'])}</td>"
                f"<td>{int(v['games'])}</td><td>{escape(v['reason'])}</td></tr>"
                for v in info["versions"]
            )
            + "</table>",
        ]
        if s is not None:
            user, csrf = s
            if user.organizer or (user.name == info["owner"] and not info["house"]):
                parts.append(f"<p><a href='/api/bots/{escape(quote(info['bot']))}/source'>source</a></p>")
                if not info["withdrawn"] and not info["house"]:
                    parts.append(
                        f"<form method=post action='/league/bot/{escape(quote(info['bot']))}/withdraw'>"
                        f"<input type=hidden name=csrf value='{escape(csrf)}'>"
                        "<button type=submit id=withdraw>Withdraw this bot</button></form>"
                    )
        elif info["published"]:
            parts.append(f"<p><a href='/api/bots/{escape(quote(info['bot']))}/source'>source (published)</a></p>")
        return await self._page(request, info["bot"], "".join(parts))

    async def page_user(self, request: Request) -> Response:
        info = await self.db(self.league.user_info, _param(request, "name"))
        body = (
            f"<h1>{escape(info['user'])}</h1>"
            + ("<p>organizer</p>" if info["organizer"] else "")
            + "<table id=versions data-user='"
            + escape(info["user"])
            + "'><thead><tr><th>bot</th><th>version</th><th>status</th><th>reason</th><th>submitted</th></tr></thead>"
            "<tbody>"
            + "".join(
                f"<tr><td><a href='/league/bot/{escape(quote(v['bot']))}'>{escape(v['bot'])}</a></td>"
                f"<td>{v['version']}{' (on the board)' if v['current'] else ''}</td>"
                f"<td class=status>{escape(v['status'])}</td><td>{escape(v['reason'])}</td>"
                f"<td>{escape(v['created'])}</td></tr>"
                for v in info["versions"]
            )
            + "</tbody></table>"
        )
        return await self._page(request, info["user"], body)

    async def page_login(self, request: Request) -> Response:
        nonce = secrets.token_urlsafe(24)
        body = (
            "<h1>Log in</h1><form method=post action='/league/login'>"
            f"<input type=hidden name=csrf value='{nonce}'>"
            "<label>Token <input type=password name=token id=token autocomplete=off required></label> "
            "<button type=submit id=login>Log in</button></form>"
        )
        resp = await self._page(request, "Log in", body)
        _set_cookie(request, resp, LOGIN_COOKIE, nonce, path="/league/login", max_age=3600)
        return resp

    async def login(self, request: Request) -> Response:
        form = await read_form(request, SMALL_BODY)
        if not _same_secret(form.get("csrf", ""), request.cookies.get(LOGIN_COOKIE, "") or "\x00"):
            raise LeagueError("the login form's CSRF token is wrong or missing; reload the page", 403)
        user = await self.db(League.user_by_token, form.get("token", "").strip())
        if user is None:
            raise LeagueError("that token is not valid", 401)
        sid, _ = await self.db(League.new_session, user)
        resp = RedirectResponse(f"/league/user/{quote(user.name)}", status_code=303, headers=HEADERS)
        _set_cookie(request, resp, SESSION_COOKIE, sid, path="/", max_age=7 * 24 * 3600)
        resp.delete_cookie(LOGIN_COOKIE, path="/league/login")
        return resp

    async def logout(self, request: Request) -> Response:
        form = await read_form(request, SMALL_BODY)
        await self.form_user(request, form)
        await self.db(League.end_session, request.cookies.get(SESSION_COOKIE))
        resp = RedirectResponse("/league/", status_code=303, headers=HEADERS)
        resp.delete_cookie(SESSION_COOKIE, path="/")
        return resp

    async def page_submit(self, request: Request) -> Response:
        s = await self.session(request)
        if s is None:
            return RedirectResponse("/league/login", status_code=303, headers=HEADERS)
        return await self._page(request, "Submit", self._submit_form(s[1]))

    async def submit(self, request: Request) -> Response:
        if await self.session(request) is None:  # the Guard has refused a stranger already (upload_refusal)
            raise LeagueError("log in first", 401)
        fields, files = await read_file_form(request, self.max_form, text=self.form_text, files=frozenset({"file"}))
        user = await self.form_user(request, fields)
        try:
            upload = _page_upload(fields, files.get("file"))
            await self.db(lambda conn: self.league.submit(conn, user, fields.get("name", ""), **upload))
        except LeagueError as exc:
            s = await self.session(request)
            body = f"<p class=error id=error>{escape(_one_line(str(exc)))}</p>" + self._submit_form(
                s[1] if s else "", fields
            )
            return await self._page(request, "Submit", body, status=exc.status)
        return RedirectResponse(f"/league/user/{quote(user.name)}", status_code=303, headers=HEADERS)

    def _submit_form(self, csrf: str, fields: dict[str, str] | None = None) -> str:
        cfg = self.league.config
        return _submit_form(csrf, cfg.max_file_bytes, cfg.max_archive_bytes, bool(cfg.eaai_kit), fields or {})

    async def withdraw(self, request: Request) -> Response:
        form = await read_form(request, SMALL_BODY)
        user = await self.form_user(request, form)
        name = _param(request, "name")
        await self.db(self.league.withdraw, user, name)
        return RedirectResponse(f"/league/bot/{quote(name)}", status_code=303, headers=HEADERS)

    async def static_js(self, request: Request) -> Response:
        return Response(_JS, media_type="text/javascript", headers=HEADERS)

    async def static_css(self, request: Request) -> Response:
        return Response(_CSS, media_type="text/css", headers=HEADERS)

    def routes(self) -> list[BaseRoute]:
        def page(path: str, fn: Handler, methods: tuple[str, ...] = ("GET",)) -> Route:
            return Route(path, _guard(api=False)(fn), methods=list(methods))

        def api(path: str, fn: Handler, methods: tuple[str, ...] = ("GET",)) -> Route:
            return Route(path, _guard(api=True)(fn), methods=list(methods))

        return [
            page("/league/", self.page_leaderboard),
            page("/league/bot/{name}", self.page_bot),
            page("/league/bot/{name}/withdraw", self.withdraw, ("POST",)),
            page("/league/user/{name}", self.page_user),
            page("/league/login", self.page_login),
            page("/league/login", self.login, ("POST",)),
            page("/league/logout", self.logout, ("POST",)),
            page("/league/submit", self.page_submit),
            page("/league/submit", self.submit, ("POST",)),
            page("/league/static/league.js", self.static_js),
            page("/league/static/league.css", self.static_css),
            api("/api/leaderboard", self.api_leaderboard),
            api("/api/progress", self.api_progress),
            api("/api/me", self.api_me),
            api("/api/submit", self.api_submit, ("POST",)),
            api("/api/users", self.api_add_user, ("POST",)),
            api("/api/users/{name}", self.api_user_info),
            api("/api/users/{name}/revoke", self.api_revoke, ("POST",)),
            api("/api/users/{name}/token", self.api_rotate_token, ("POST",)),
            api("/api/bots/{name}", self.api_bot),
            api("/api/bots/{name}/source", self.api_source),
            api("/api/bots/{name}/withdraw", self.api_withdraw, ("POST",)),
            api("/api/bots/{name}/publish", self.api_publish, ("POST",)),
        ]


def routes(folder: str) -> list[BaseRoute]:
    """The league's routes for the league folder ``folder`` (to include in the one web app)."""
    return LeagueSite(League(folder)).routes()


# --- HTML ------------------------------------------------------------------------------
def _set_cookie(request: Request, resp: Response, key: str, value: str, *, path: str, max_age: int) -> None:
    resp.set_cookie(
        key, value, max_age=max_age, path=path, httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{float(x):.0f}"


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"


def _progress_line(p: dict[str, Any]) -> str:
    parts = [f"{p['games']} games stored", f"{p['queued']} pairing(s) queued"]
    for r in p["running"]:
        parts.append(f"playing {r['a']} vs {r['b']}: {r['games']}/{r['target']}")
    if p["checking"]:
        parts.append("checking " + ", ".join(p["checking"]))
    return "; ".join(parts)


def _board_row(rank: int, e: dict[str, Any]) -> str:
    return (
        f"<tr><td>{rank}</td><td><a href='/league/bot/{escape(quote(e['bot']))}'>{escape(e['bot'])}</a></td>"
        f"<td>{escape(e['owner'])}</td><td>{e['version']}</td><td>{_fmt(e['rating'])}</td>"
        f"<td>{_fmt(e['rating_low'])} .. {_fmt(e['rating_high'])}</td><td>{e['games']}</td>"
        f"<td>{_pct(e['win_rate'])}</td><td>{e['forfeits']}</td><td>{escape(e['status'])}</td></tr>"
    )


def _bars(values: dict[str, Any], share: bool = True) -> str:
    """A horizontal bar chart as inline SVG (attributes only: no inline style, which the CSP forbids)."""
    items = [(k, float(v)) for k, v in values.items() if v is not None]
    if not items:
        return "<p>no games yet</p>"
    top = max(v for _, v in items) or 1.0
    h = 18
    out = [f"<svg class=bars width='560' height='{h * len(items) + 4}' role=img>"]
    for i, (label, v) in enumerate(items):
        w = 300 * v / top
        shown = f"{100 * v:.1f}%" if share else f"{v:.0f}"
        out.append(
            f"<text x='0' y='{i * h + 13}' font-size='12'>{escape(label)}</text>"
            f"<rect x='150' y='{i * h + 2}' width='{w:.1f}' height='{h - 4}' fill='#4a7'></rect>"
            f"<text x='{155 + w:.1f}' y='{i * h + 13}' font-size='12'>{escape(shown)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _page_upload(fields: dict[str, str], upload: FilePart | None) -> dict[str, Any]:
    """:meth:`League.submit`'s arguments for what the submit page sent: a file, whose suffix tells which
    of the API's fields its bytes fill (the league's checks then hold them to it), or pasted source."""
    source = fields.get("source", "").replace("\r\n", "\n")  # the browser's CRLF lines back to the file's
    class_name = fields.get("class", "").strip() or None
    if upload is None:
        if not source.strip():
            raise LeagueError("choose a file, or paste a Python bot's source")
        return {"source": source.encode("utf-8", "surrogatepass"), "class_name": class_name}
    if source.strip():
        raise LeagueError("send a file or pasted source, not both")
    kind = file_kind(upload.filename)
    if kind is None:
        raise LeagueError(f"the file {upload.filename[:80]!r} is not one of {', '.join(PAGE_SUFFIXES)}", 415)
    if kind == "archive":
        return {"archive": upload.data, "class_name": class_name}
    if kind == "policy":
        return {"policy": upload.data, "policy_format": policy_format(upload.filename), "class_name": class_name}
    return {"source": upload.data, "class_name": class_name}


def _submit_form(csrf: str, max_bytes: int, max_archive: int, eaai: bool, fields: dict[str, str]) -> str:
    """The submit form: a file (multipart: it goes as its bytes, as the API takes it) or pasted source.
    Plain HTML: it works without the page's script, which only fills the bot's name from the file's."""
    kinds = [".py", ".onnx", ".npz", *([".jar", ".zip"] if eaai else [])]
    java = (
        "<p><label>Java class (for a .jar or .zip) <input name=class id=class size=40 "
        f"placeholder='com.example.MyPlayer' value='{escape(fields.get('class', ''))}'></label></p>"
        if eaai
        else ""
    )
    return (
        "<h1>Submit a bot</h1><p>A Python bot file (see bots/TEMPLATE.py) or a policy module (a top-level "
        "<code>act</code>), played in the sandbox, at most "
        f"{max_bytes} bytes; trained MLP weights (.npz) or an ONNX model (.onnx)"
        + (", or an EAAI-kit player (a .jar, or a .zip of its class folder, and its class)" if eaai else "")
        + f", at most {max_archive} bytes. A new version of your bot replaces the old one on the board once it "
        "passes its check.</p>"
        "<form method=post action='/league/submit' enctype='multipart/form-data' id=submit-form>"
        f"<input type=hidden name=csrf value='{escape(csrf)}'>"
        "<p><label>Bot name <input name=name id=name required pattern='[A-Za-z][A-Za-z0-9_\\-]{0,31}' "
        f"value='{escape(fields.get('name', ''))}'></label></p>"
        f"<p><label>File <input type=file name=file id=file accept='{','.join(kinds)}'></label></p>"
        + java
        + "<p><label>or paste a Python bot's source<br><textarea name=source id=source rows=16 cols=90>"
        f"{escape(fields.get('source', ''))}</textarea></label></p>"
        "<button type=submit id=send>Submit</button></form>"
    )


def _layout(title: str, body: str, session: tuple[User, str] | None = None) -> str:
    if session is None:
        who = "<a href='/league/login'>log in</a>"
    else:
        user, csrf = session
        who = (
            f"<a href='/league/user/{escape(quote(user.name))}' id=me>{escape(user.name)}</a> "
            "<a href='/league/submit'>submit</a> "
            f"<form method=post action='/league/logout' class=inline><input type=hidden name=csrf "
            f"value='{escape(csrf)}'><button type=submit>log out</button></form>"
        )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)} - Gin Arena league</title>"
        "<link rel=stylesheet href='/league/static/league.css'>"
        "<script src='/league/static/league.js' defer></script></head><body>"
        f"<nav><a href='/league/'>leaderboard</a> {who}</nav><main>{body}</main></body></html>"
    )


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
nav { margin-bottom: 1em; } nav a { margin-right: 1em; }
form.inline { display: inline; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: .25em .6em; text-align: left; }
.error { color: #b00; font-weight: bold; }
.note { color: #666; font-size: 90%; }
"""

_JS = r"""
"use strict";
function fmt(x) { return x === null || x === undefined ? "-" : Math.round(x).toString(); }
function pct(x) { return x === null || x === undefined ? "-" : (100 * x).toFixed(1) + "%"; }
function cell(tr, text, href) {
  const td = document.createElement("td");
  if (href) { const a = document.createElement("a"); a.href = href; a.textContent = text; td.appendChild(a); }
  else { td.textContent = text; }
  tr.appendChild(td);
}
async function refreshBoard() {
  const table = document.getElementById("board");
  if (!table) return;
  try {
    const [board, progress] = await Promise.all([
      fetch("/api/leaderboard").then(r => r.json()), fetch("/api/progress").then(r => r.json())]);
    const body = document.createElement("tbody");
    board.forEach((e, i) => {
      const tr = document.createElement("tr");
      cell(tr, String(i + 1)); cell(tr, e.bot, "/league/bot/" + encodeURIComponent(e.bot));
      cell(tr, e.owner); cell(tr, String(e.version)); cell(tr, fmt(e.rating));
      cell(tr, fmt(e.rating_low) + " .. " + fmt(e.rating_high)); cell(tr, String(e.games));
      cell(tr, pct(e.win_rate)); cell(tr, String(e.forfeits)); cell(tr, e.status);
      body.appendChild(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
    const parts = [progress.games + " games stored", progress.queued + " pairing(s) queued"];
    progress.running.forEach(r => parts.push("playing " + r.a + " vs " + r.b + ": " + r.games + "/" + r.target));
    if (progress.checking.length) parts.push("checking " + progress.checking.join(", "));
    document.getElementById("progress").textContent = parts.join("; ");
  } catch (err) { /* the next poll tries again */ }
}
async function refreshUser() {
  const table = document.getElementById("versions");
  if (!table) return;
  try {
    const info = await fetch("/api/users/" + encodeURIComponent(table.dataset.user)).then(r => r.json());
    const body = document.createElement("tbody");
    info.versions.forEach(v => {
      const tr = document.createElement("tr");
      cell(tr, v.bot, "/league/bot/" + encodeURIComponent(v.bot));
      cell(tr, String(v.version) + (v.current ? " (on the board)" : ""));
      cell(tr, v.status); tr.lastChild.className = "status";
      cell(tr, v.reason); cell(tr, v.created);
      body.appendChild(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
  } catch (err) { /* the next poll tries again */ }
}
document.addEventListener("DOMContentLoaded", () => {
  const file = document.getElementById("file");
  if (file) file.addEventListener("change", () => {
    const name = document.getElementById("name");
    if (file.files.length && !name.value)
      name.value = file.files[0].name.replace(/\.[A-Za-z]+$/, "").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 32);
  });
  if (document.getElementById("board")) setInterval(refreshBoard, 2000);
  if (document.getElementById("versions")) setInterval(refreshUser, 2000);
});
"""
