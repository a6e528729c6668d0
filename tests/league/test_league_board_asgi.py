"""The board's fast path (:mod:`arena.league.board_asgi`) answers only what the app would answer the same way.

Driven as uvicorn drives it (an ASGI scope, ``receive`` and ``send``; or the HTTP protocol's whole answer),
over a stand-in app that records each request it is handed and a stand-in cache; that the answers equal the
app's own, header for header, is checked against a real server in ``test_league_input.py``.
"""

from __future__ import annotations

import asyncio
import sqlite3

from arena.league.board_asgi import BoardFastPath
from arena.league.web import HEADERS

BODY, ETAG = b'[{"bot":"simple"}]', '"abc123"'


class Cache:
    def __init__(self) -> None:
        self.broken = False

    async def get(self, what: str):
        if self.broken:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return (BODY if what == "board" else b"{}"), ETAG, None

    def fresh(self, what: str):
        return None if self.broken else ((BODY if what == "board" else b"{}"), ETAG, None)


class App:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})


def call(layer: BoardFastPath, path: str = "/api/leaderboard", method: str = "GET", headers=()) -> list[dict]:
    scope = {"type": "http", "method": method, "path": path, "headers": [(k.encode(), v.encode()) for k, v in headers]}
    out: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        out.append(message)

    asyncio.run(layer(scope, receive, send))
    return out


def make(hosts=("127.0.0.1", "localhost", "[::1]", "*.example.org")) -> tuple[BoardFastPath, App, Cache]:
    app, cache = App(), Cache()
    return BoardFastPath(app, cache, hosts), app, cache


def test_an_exact_host_gets_the_cached_board_with_the_league_headers():
    layer, app, _ = make()
    for host in ("127.0.0.1", "127.0.0.1:8780", "LOCALHOST:80", "[::1]", "[::1]:8780"):
        start, body = call(layer, headers=[("host", host)])
        assert app.seen == [] and start["status"] == 200 and body["body"] == BODY, host
        h = dict(start["headers"])
        assert h[b"etag"] == ETAG.encode() and h[b"content-length"] == str(len(BODY)).encode()
        assert h[b"content-type"] == b"application/json" and h[b"cache-control"] == b"no-cache"
        assert h[b"content-security-policy"] == HEADERS["Content-Security-Policy"].encode()
        assert h[b"x-content-type-options"] == b"nosniff"
    start, body = call(layer, "/api/progress", headers=[("host", "localhost")])
    assert start["status"] == 200 and body["body"] == b"{}"


def test_if_none_match_with_the_etag_is_a_304_without_a_body():
    layer, app, _ = make()
    start, body = call(layer, headers=[("host", "127.0.0.1"), ("if-none-match", ETAG)])
    assert start["status"] == 304 and body["body"] == b"" and dict(start["headers"])[b"etag"] == ETAG.encode()
    start, body = call(layer, headers=[("host", "127.0.0.1"), ("if-none-match", '"stale"')])
    assert start["status"] == 200 and body["body"] == BODY and app.seen == []


def test_everything_else_goes_to_the_app():
    layer, app, cache = make()
    cases = [
        ("/api/leaderboard", "HEAD", [("host", "127.0.0.1")]),
        ("/api/leaderboard", "POST", [("host", "127.0.0.1")]),
        ("/api/leaderboard/", "GET", [("host", "127.0.0.1")]),
        ("/league/", "GET", [("host", "127.0.0.1")]),
        ("/api/leaderboard", "GET", []),  # no Host: the app's check answers
        ("/api/leaderboard", "GET", [("host", "evil.test")]),
        ("/api/leaderboard", "GET", [("host", "127.0.0.1.evil.test")]),
        ("/api/leaderboard", "GET", [("host", "board.example.org")]),  # a wildcard: the app's check decides
        ("/api/leaderboard", "GET", [("host", "127.0.0.1:99999999")]),
        ("/api/leaderboard", "GET", [("host", "127.0.0.1:80x")]),
        ("/api/leaderboard", "GET", [("host", "127.0.0.1\n")]),
        ("/api/leaderboard", "GET", [("host", "[::1]x:80")]),
        ("/api/leaderboard", "GET", [("host", "127.0.0.1"), ("host", "evil.test")]),  # two Hosts
    ]
    for i, (path, method, headers) in enumerate(cases):
        start, body = call(layer, path, method, headers)
        assert start["status"] == 299 and body["body"] == b"app" and len(app.seen) == i + 1, (path, method, headers)
    cache.broken = True  # a database that cannot be read: the app's route logs it and answers 503
    start, _ = call(layer, headers=[("host", "127.0.0.1")])
    assert start["status"] == 299 and len(app.seen) == len(cases) + 1


def test_any_host_when_the_league_allows_any_and_hosts_are_remembered_boundedly():
    layer, app, _ = make(("*",))
    assert call(layer, headers=[("host", "anything.test")])[0]["status"] == 200 and app.seen == []
    layer, app, _ = make()
    for i in range(500):  # a client inventing Host names gets no memory out of the server
        call(layer, headers=[("host", f"h{i}.test")])
    assert len(layer.known) <= 64 and len(app.seen) == 500


DEFAULT = [(b"server", b"uvicorn"), (b"date", b"Wed, 02 Dec 2026 06:00:00 GMT")]


def test_the_protocols_whole_answer_is_the_asgi_answer_in_one_piece():
    layer, app, _ = make()
    data = layer.whole_answer(b"GET", b"/api/leaderboard", [(b"host", b"127.0.0.1:8780")], DEFAULT)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 200 OK" and lines[1:3] == [b"server: uvicorn", DEFAULT[1][0] + b": " + DEFAULT[1][1]]
    start, _ = call(layer, headers=[("host", "127.0.0.1")])
    assert lines[3:] == [k + b": " + v for k, v in start["headers"]] and body == BODY
    revalidate = [(b"host", b"localhost"), (b"if-none-match", ETAG.encode())]
    data = layer.whole_answer(b"GET", b"/api/progress", revalidate, [])
    assert data.startswith(b"HTTP/1.1 304 Not Modified\r\n") and data.endswith(b"\r\n\r\n")
    assert app.seen == []


def test_the_whole_answer_declines_what_is_not_a_fresh_poll_of_an_exact_host():
    layer, _, cache = make()
    ok = [(b"host", b"127.0.0.1")]
    for method, url, headers in [
        (b"HEAD", b"/api/leaderboard", ok),
        (b"POST", b"/api/leaderboard", ok),
        (b"GET", b"/api/leaderboard?x=1", ok),
        (b"GET", b"http://127.0.0.1/api/leaderboard", ok),
        (b"GET", b"/league/", ok),
        (b"GET", b"/api/leaderboard", []),
        (b"GET", b"/api/leaderboard", [(b"host", b"board.example.org")]),
        (b"GET", b"/api/leaderboard", [(b"host", b"127.0.0.1"), (b"host", b"127.0.0.1")]),
    ]:
        assert layer.whole_answer(method, url, headers, DEFAULT) is None, (method, url, headers)
    assert layer.whole_answer(b"GET", b"/api/leaderboard", ok, DEFAULT) is not None
    cache.broken = True  # stale or unreadable: the ASGI way (which computes it again, or answers 503)
    assert layer.whole_answer(b"GET", b"/api/leaderboard", ok, DEFAULT) is None
