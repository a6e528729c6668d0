"""The board's polls answered at the outermost ASGI layer, before the framework sees the request.

Every open leaderboard page polls ``GET /api/leaderboard`` and ``GET /api/progress``, so they are most of a
league's requests.  Both answers are kept as JSON bytes with their ETag (:class:`arena.league.web._Cached`,
recomputed only when the database has changed); what a request costs beyond that is the framework around it:
FastAPI's error layer, the Host check's ``Headers`` object, the body guard's wrapped ``send``, the router.
:class:`BoardFastPath` wraps the whole app (uvicorn calls it first) and answers those two paths itself with
headers built once, so a poll costs the HTTP parsing, one ``PRAGMA data_version`` and two ``send`` calls.

With uvicorn's httptools protocol the server goes one step further (:func:`arena.web.server.http_protocol`):
the protocol asks :meth:`BoardFastPath.whole_answer` as soon as a request's headers are parsed, and writes the
whole answer (headers and body in one write) without making an ASGI scope or task, when the cached answer is
still fresh; when it is not (the database changed: the answer must be computed again, in a worker thread), the
request takes the ASGI way through :meth:`BoardFastPath.__call__`.

It answers only what the app would answer the same way; everything else goes to the app unchanged:

- only ``GET`` of exactly those two paths (a ``HEAD``, a ``POST``: the app's routes and their 405);
- only a ``Host`` the app accepts for certain: one of the allowed names exactly, with or without a port,
  or any Host when the league allows any (``--allowed-host '*'``).  A ``*.example.org`` pattern, an unknown
  name or a malformed header goes to the app's Host check, which answers or refuses as always;
- the same headers as the app's own route (the league's Content-Security-Policy, ``nosniff``,
  ``Referrer-Policy``, ``Cache-Control: no-cache``, the ETag), a 304 when ``If-None-Match`` names the ETag;
- a database that cannot be read goes to the app, whose route logs one line and answers 503.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from arena.league.web import HEADERS

#: The paths answered here, and which cached answer each is.
PATHS = {"/api/leaderboard": "board", "/api/progress": "progress"}
PATHS_BYTES = {k.encode(): v for k, v in PATHS.items()}
#: At most this many distinct Host values are remembered (a client inventing Hosts gets no memory from it).
HOST_MEMORY = 64
_PORT = re.compile(rb":[0-9]{1,5}")


class BoardFastPath:
    """An ASGI app: ``app`` behind a fast answer of the board's two polls from ``cached``
    (an :class:`arena.league.web._Cached`); ``hosts``: the Host names the app allows (lower case; ``*``:
    any), as given to its Host check."""

    def __init__(self, app: Any, cached: Any, hosts: Iterable[str]):
        self.app, self.cached = app, cached
        names = [h.lower() for h in hosts]
        self.any_host = "*" in names
        self.names = frozenset(n.encode("latin-1") for n in names if not n.startswith("*"))
        self.known: dict[bytes, bool] = {}
        fixed = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items() if k != "Cache-Control"]
        self.fixed = [*fixed, (b"cache-control", b"no-cache")]
        self.made: dict[str, tuple[bytes, list, list]] = {}  # what -> (etag, 304 headers, 200 headers)

    def host_ok(self, raw: bytes) -> bool:
        """Whether the app's Host check surely lets ``raw`` (the Host header's bytes) through."""
        if self.any_host:
            return True
        ok = self.known.get(raw)
        if ok is None:
            name = raw.lower()
            cut = name.rfind(b":")
            if cut >= 0 and (not name.startswith(b"[") or name[cut - 1 : cut] == b"]") and _PORT.fullmatch(name[cut:]):
                name = name[:cut]  # name:port, [v6]:port
            ok = name in self.names
            if len(self.known) < HOST_MEMORY:
                self.known[raw] = ok
        return ok

    def whole_answer(self, method: bytes, url: bytes, headers: list, first: list) -> bytes | None:
        """The whole HTTP/1.1 answer (status line, ``first`` headers then the board's, body) to a request the
        HTTP protocol has just parsed, when it is a poll answered here and the cached answer is fresh, so the
        protocol writes it at once without an ASGI cycle; None: let the request take its ASGI way (this
        class's :meth:`__call__` first).  ``url``: the request target as sent (a query string declines)."""
        what = PATHS_BYTES.get(url) if method == b"GET" else None
        if what is None:
            return None
        host, sent, hosts = b"", b"", 0
        for k, v in headers:
            if k == b"host":
                host, hosts = v, hosts + 1
            elif k == b"if-none-match":
                sent = v
        if hosts != 1 or not self.host_ok(host):
            return None
        answer = self.cached.fresh(what)
        if answer is None:
            return None
        body, etag, _ = answer
        not_modified, full = self._headers(what, body, etag)
        if sent and etag.encode() in sent:
            status, rows, body = b"HTTP/1.1 304 Not Modified\r\n", not_modified, b""
        else:
            status, rows = b"HTTP/1.1 200 OK\r\n", full
        out = [status]
        for k, v in (*first, *rows):
            out += (k, b": ", v, b"\r\n")
        out += (b"\r\n", body)
        return b"".join(out)

    def _headers(self, what: str, body: bytes, etag: str) -> tuple[list, list]:
        made = self.made.get(what)
        if made is None or made[0] != etag.encode():
            not_modified = [*self.fixed, (b"etag", etag.encode())]
            full = [*not_modified, (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
            made = self.made[what] = (etag.encode(), not_modified, full)
        return made[1], made[2]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        what = PATHS.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
        if what is None:
            await self.app(scope, receive, send)
            return
        host = b""
        sent = b""
        for k, v in scope["headers"]:
            if k == b"host":
                if host:  # two Host headers: the app's check decides
                    await self.app(scope, receive, send)
                    return
                host = v
            elif k == b"if-none-match":
                sent = v
        if not self.host_ok(host):
            await self.app(scope, receive, send)
            return
        try:
            body, etag, _ = await self.cached.get(what)
        except sqlite3.DatabaseError:  # the app's route logs it and answers 503
            await self.app(scope, receive, send)
            return
        not_modified, full = self._headers(what, body, etag)
        if sent and etag.encode() in sent:
            await send({"type": "http.response.start", "status": 304, "headers": not_modified})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": full})
        await send({"type": "http.response.body", "body": body})
