"""The web app's HTTP hardening, against a really started ``arena play`` process (uvicorn).

Each test sends what a hostile or broken client would and checks that the
answer is a 4xx, fast, and that the server goes on serving.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from arena.web.server import BODY_TIMEOUT, App, Sessions

ARENA = [sys.executable, "-c", "from arena.cli import app; app(prog_name='arena')"]


@pytest.fixture(scope="module")
def url():
    env = {**os.environ, "DISPLAY": ""}
    proc = subprocess.Popen(
        [*ARENA, "play", "--port", "0", "--no-open", "--bot", "simple"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("Gin Arena at http://127.0.0.1:"), line + proc.stderr.read()
        yield line.split()[3].rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def raw(url: str, request: bytes, *, wait: float = 20.0) -> tuple[int, bytes]:
    """Send raw bytes; return the status code and the body of the answer."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        s.sendall(request)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, body = data.partition(b"\r\n\r\n")
                length = [int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")]
                if length and len(body) >= length[0]:
                    break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def post(url: str, path: str, body: bytes, ctype: str = "application/json", host: str | None = None) -> bytes:
    hostport = url.split("//")[1]
    return (
        f"POST {path} HTTP/1.1\r\nHost: {hostport if host is None else host}\r\nContent-Type: {ctype}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def get(url: str, path: str, host: str | None = None) -> bytes:
    hostport = url.split("//")[1] if host is None else host
    return f"GET {path} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n".encode()


def test_a_deeply_nested_body_is_a_400_not_a_500(url):
    depth = 10_000  # far past json's recursion limit, within the 64 KiB body limit
    body = b'{"a":' * depth + b"1" + b"}" * depth
    status, answer = raw(url, post(url, "/api/new", body))
    assert status == 400, answer
    assert raw(url, get(url, "/api/options"))[0] == 200  # still serving


@pytest.mark.parametrize(
    "body, line",
    [
        (b'{"action": "take"}\xff', "the request body is not UTF-8 (byte 18)"),
        (b'{"action": "discard", "card": ' + b"9" * 5000 + b"}", "the request body holds a number too long to read"),
        (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, "the request body nests too deeply to read"),
        (b'{"action": take}', "the request body is not JSON: Expecting value at character 11"),
    ],
)
def test_a_body_that_cannot_be_read_is_named_in_one_line(url, body, line):
    """A body that is not UTF-8, holds a number of thousands of digits or nests past the parser's depth was
    "There was an error parsing the body": nothing said which, or where."""
    status, answer = raw(url, post(url, "/api/act", body))
    assert status == 400 and json.loads(answer) == {"error": line}


def test_a_body_over_the_limit_is_a_413(url):
    status, answer = raw(url, post(url, "/api/new", b'{"bot": "' + b"x" * 70_000 + b'"}'))
    assert status == 413 and b"too large" in answer


def announced(url: str, length: str, body: str) -> bytes:
    """A POST to /api/new whose Content-Length header says ``length``, followed by ``body`` alone."""
    hostport = url.split("//")[1]
    return (
        f"POST /api/new HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\nConnection: close\r\n\r\n{body}"
    ).encode()


def test_a_content_length_past_the_limit_is_a_413_at_once_before_any_body_comes(url):
    """A body announced past the limit was waited for, then cut off with a 408 after the pause limit: the
    header alone says it will be refused, so the answer is a 413, at once."""
    t = time.monotonic()
    status, answer = raw(url, announced(url, "10000000", "{"), wait=BODY_TIMEOUT + 10)
    assert status == 413 and b"too large" in answer, answer
    assert time.monotonic() - t < BODY_TIMEOUT - 1


def test_a_content_length_that_is_not_a_number_is_a_400(url):
    assert raw(url, announced(url, "abc", "{}"))[0] == 400


def test_a_short_body_times_out_with_a_408(url):
    t = time.monotonic()
    status, answer = raw(url, announced(url, "100", "{"), wait=BODY_TIMEOUT + 10)
    took = time.monotonic() - t
    assert status == 408 and b"did not arrive" in answer
    assert BODY_TIMEOUT - 0.5 <= took < BODY_TIMEOUT + 5


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.2", ""])
def test_a_foreign_host_header_is_refused(url, host):
    """DNS rebinding: a name that resolves to 127.0.0.1 still carries its own Host header."""
    assert raw(url, get(url, "/api/options", host=host))[0] == 400
    assert raw(url, post(url, "/api/new", b"{}", host=host))[0] == 400


def test_localhost_names_are_served(url):
    port = url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        assert raw(url, get(url, "/api/options", host=host))[0] == 200, host


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""])
def test_a_post_that_is_not_json_is_a_415_and_starts_nothing(url, ctype):
    """CSRF: a page elsewhere can post text/plain or a form without a preflight; JSON needs one."""
    before = raw(url, get(url, "/api/state"))
    status, answer = raw(url, post(url, "/api/new", b'{"bot": "simple"}', ctype=ctype))
    assert status == 415 and b"application/json" in answer
    assert raw(url, get(url, "/api/state")) == before  # no game was started


def test_200_concurrent_connections_are_all_answered(url):
    host, port = url.split("//")[1].split(":")
    socks = []
    errors: list[str] = []
    barrier = threading.Barrier(200)

    def connect() -> None:
        try:
            barrier.wait(timeout=30)
            s = socket.create_connection((host, int(port)), timeout=60)
            socks.append(s)
        except OSError as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=connect) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = 0
    try:
        for s in socks:
            s.sendall(get(url, "/api/options"))
        for s in socks:
            try:
                data = s.recv(128)
            except OSError as exc:
                errors.append(repr(exc))
                continue
            ok += data.startswith(b"HTTP/1.1 200")
    finally:
        for s in socks:
            s.close()
    assert not errors and ok == 200, (ok, errors[:3])


def test_errors_are_one_line_json_and_pages_are_served(url):
    with urllib.request.urlopen(url + "/", timeout=30) as r:
        assert r.status == 200 and b"<title>Gin Arena" in r.read() and r.headers["Cache-Control"] == "no-store"
    status, body = raw(url, get(url, "/nope"))
    assert status == 404 and json.loads(body) == {"error": "no page /nope"}
    status, body = raw(url, post(url, "/api/act", b'{"action": 3}'))
    err = json.loads(body)["error"]
    assert status == 400 and "action" in err and "\n" not in err


def test_a_method_not_allowed_is_a_405_that_names_the_allowed_ones(url):
    """A 405 says which methods the path takes, in its line and in the ``Allow`` header HTTP requires of it
    (the header was dropped, and the line said only "Method Not Allowed")."""
    hostport = url.split("//")[1]
    for method, path, allowed in (
        ("DELETE", "/api/new", "POST"),
        ("PUT", "/api/state", "GET"),
        ("GET", "/api/act", "POST"),
    ):
        req = f"{method} {path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        host, port = hostport.split(":")
        with socket.create_connection((host, int(port)), timeout=20) as s:
            s.sendall(req.encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
        assert head.split()[1] == b"405" and headers.get("allow") == allowed, head
        assert json.loads(body) == {"error": f"{path} takes {allowed}, not {method}"}


def test_every_answer_keeps_its_address_out_of_other_sites_referers(url):
    """The play page's address holds the game's id (``?s=ID``), which plays the game: every answer says
    ``Referrer-Policy: same-origin``, as the league's pages do, so no other site is sent it."""
    for path in ("/", "/play?s=abc", "/view", "/api/options", "/api/state?session=abc", "/static/cards.js", "/nope"):
        with socket.create_connection(tuple(url.split("//")[1].split(":")), timeout=20) as s:
            s.sendall(get(url, path))
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head = data.partition(b"\r\n\r\n")[0].decode().lower()
        assert "\r\nreferrer-policy: same-origin\r\n" in head + "\r\n", (path, head)


def test_sessions_are_bounded_in_number_and_in_time():
    now = [0.0]
    sessions = Sessions(limit=2, ttl=100, clock=lambda: now[0])
    app = App(seed=3)
    games = []
    for _ in range(3):
        from arena.web.session import PlaySession

        g = PlaySession.start(bot="random", seed=3)
        sessions.add(g)
        games.append(g)
    assert len(sessions) == 2
    with pytest.raises(Exception, match="no game") as e:
        sessions.get(games[0].id)  # the least recently used went first
    assert e.value.status == 404
    assert sessions.get(games[1].id) is games[1] and sessions.get(None) is games[1]  # the last touched
    now[0] = 150
    with pytest.raises(Exception, match="it ended or expired") as e:
        sessions.get(games[2].id)  # idle past the limit: gone, a 404 (the page offers a new game) even with none left
    assert e.value.status == 404
    with pytest.raises(Exception, match="no game yet") as e:
        sessions.get(None)
    assert e.value.status == 409 and len(sessions) == 0 and app.session is None


def test_connections_of_a_listening_socket_made_by_hand_get_nagle_turned_off():
    """asyncio turns Nagle's algorithm off only for sockets whose ``proto`` is ``IPPROTO_TCP``; the server binds
    its listening socket itself (``socket.socket(AF_INET, SOCK_STREAM)``: proto 0), so each connection's
    protocol turns it off (``_no_delay``), or an answer written in two parts waits for a delayed ACK (the
    league's keep-alive test measures that end to end)."""
    import asyncio

    from arena.web.server import _no_delay

    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    listening.listen(8)

    async def accepted() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        made: asyncio.Future = loop.create_future()

        class Protocol(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                made.set_result(transport)

        server = await loop.create_server(Protocol, sock=listening)
        client = socket.create_connection(listening.getsockname())
        try:
            transport = await asyncio.wait_for(made, 10)
            sock = transport.get_extra_info("socket")
            before = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            _no_delay(transport)
            return before, sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            client.close()
            server.close()

    before, after = asyncio.run(accepted())
    assert before == 0 and after != 0


def _send_slowly(url: str, head: bytes, body: bytes, pieces: int, pause: float, wait: float) -> tuple[int, bytes]:
    """Send ``head``, then ``body`` in ``pieces`` parts ``pause`` seconds apart; the answer's status and body."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        s.sendall(head)
        step = -(-len(body) // pieces)
        for i in range(0, len(body), step):
            time.sleep(pause)
            s.sendall(body[i : i + step])
        data = b""
        while chunk := s.recv(65536):  # Connection: close: the answer ends with the connection
            data += chunk
    head_, _, answer = data.partition(b"\r\n\r\n")
    return int(head_.split()[1]), answer


def test_a_body_that_keeps_arriving_slowly_is_read_past_the_pause_limit(url):
    """60 KB at 10 KB a second takes 6 s, longer than a body may pause, but within the time its size is
    allowed (5 s + 60 KB at MIN_BODY_RATE): the request is answered, not cut off."""
    from arena.web.server import MIN_BODY_RATE

    body = json.dumps({"bot": "simple", "preset": "standard", "target": 100, "pad": "x" * 60_000}).encode()
    assert BODY_TIMEOUT < 6.0 < BODY_TIMEOUT + len(body) / MIN_BODY_RATE - 2.0
    hostport = url.split("//")[1]
    head = (
        f"POST /api/new HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    t = time.monotonic()
    status, answer = _send_slowly(url, head, body, pieces=12, pause=0.5, wait=30)
    assert time.monotonic() - t > BODY_TIMEOUT
    assert status == 200, answer  # read whole and played: a new game's state
    assert json.loads(answer)["hand_no"] == 1


def test_a_body_trickled_to_dodge_the_pause_limit_is_cut_off_by_its_deadline(url):
    """One byte a second never pauses for 5 s, but 100 bytes are allowed about 5 s in all: a 408 then."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            (
                f"POST /api/new HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                "Content-Length: 100\r\nConnection: close\r\n\r\n{"
            ).encode()
        )
        t = time.monotonic()
        got = b""
        while time.monotonic() - t < 20:
            if select.select([s], [], [], 1.0)[0]:
                break
            s.sendall(b" ")
        took = time.monotonic() - t
        try:
            while chunk := s.recv(4096):  # the answer, to the close
                got += chunk
        except ConnectionResetError:
            # A byte we trickled just before the answer was still unread when the server closed, so
            # its kernel ended the connection with a reset after the answer instead of a FIN (recv
            # hands over the answer first, then raises): the answer read is checked below.  Seen
            # once in a full-suite run; a socket pair that closes with unread bytes does the same.
            pass
    assert got.startswith(b"HTTP/1.1 408"), got[:100]
    assert b"did not arrive within" in got
    assert BODY_TIMEOUT - 0.5 <= took < BODY_TIMEOUT + 3


def test_a_bot_loading_for_its_first_game_holds_up_no_game_of_a_bot_already_loaded(monkeypatch):
    """The play server loaded a bot for its first game under one lock for all bots: while one compiled
    (about 24 s for the analyzer), every new game waited, even against a bot loaded long before."""
    from arena.loading import load as loading
    from arena.web.server import App

    app = App(bot="simple", seed=3)
    simple = app.bot("simple")
    real, gate, entered = loading.load_bot, threading.Event(), threading.Event()

    def slow(spec: str, *args, **kw):
        if spec == "gin-chasing":
            entered.set()
            assert gate.wait(60)
        return real(spec, *args, **kw)

    monkeypatch.setattr(loading, "load_bot", slow)
    compiling = threading.Thread(target=app.bot, args=("gin-chasing",))
    compiling.start()
    try:
        assert entered.wait(30)
        got: list = []
        other = threading.Thread(target=lambda: got.append(app.bot("simple")))
        other.start()
        other.join(5)
        assert not other.is_alive() and got == [simple]
    finally:
        gate.set()
        compiling.join(60)
    assert app.bot("gin-chasing") is app.bots["gin-chasing"]


def test_a_header_of_megabytes_is_a_431_and_other_clients_are_answered_meanwhile(url):
    """httptools joined a header value's pieces with no limit: a client sending a header of tens of
    megabytes held the event loop for seconds at a time (the probe saw 5 s answers to others)."""
    from arena.web.server import MAX_HEAD_BYTES

    host, port = url.split("//")[1].split(":")
    got, others = b"", []
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(f"GET /api/options HTTP/1.1\r\nHost: {host}:{port}\r\nX-A: ".encode())
        sent = 0
        try:
            while sent < 8 * 2**20 and not select.select([s], [], [], 0)[0]:
                s.sendall(b"a" * 65536)
                sent += 65536
                if sent % 2**20 == 0:
                    t = time.monotonic()
                    urllib.request.urlopen(url + "/api/options", timeout=30).read()
                    others.append(time.monotonic() - t)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed under us after the answer: it is read below
        try:
            while chunk := s.recv(4096):
                got += chunk
        except ConnectionResetError:
            pass  # bytes of ours still unread when it closed: the answer came first
    assert got.startswith(b"HTTP/1.1 431"), got[:100]
    assert f"more than {MAX_HEAD_BYTES} bytes".encode() in got
    assert sent < 4 * 2**20, sent  # cut off long before the 8 MB (what was sent past it sat in socket buffers)
    assert all(t < 1.0 for t in others), others
    # A request with a large but sane header (a browser's cookies) is answered as before.
    req = urllib.request.Request(url + "/api/options", headers={"Cookie": "c=" + "x" * 8000})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200
