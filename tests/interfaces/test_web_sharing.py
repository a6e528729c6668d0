"""The play server shared by several people, and its answers to odd requests: each game stays its player's,
one client cannot push out the others' games, each bot is loaded once, a request with two Host headers is
refused, HEAD is answered, and refusals say the action in words."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

from arena.web.server import App, NewGame, Server, Sessions
from arena.web.session import IllegalAction, PlaySession
from tests.interfaces.test_web_server import get, raw

ARENA = [sys.executable, "-c", "from arena.cli import app; app(prog_name='arena')"]


def call(url: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture
def shared():
    s = Server(App(bot="simple", seed=3), port=0, shared=True).start()
    yield s
    s.stop()


@pytest.fixture
def local():
    s = Server(App(bot="simple", seed=3), port=0).start()
    yield s
    s.stop()


def test_a_shared_server_refuses_a_play_request_without_a_session_and_never_shows_another_game(shared):
    status, alice = call(shared.url, "POST", "/api/new", {})
    assert status == 200
    for method, path in (("GET", "/api/state"), ("POST", "/api/act"), ("POST", "/api/next")):
        body = {"action": "pass"} if path == "/api/act" else ({} if method == "POST" else None)
        status, answer = call(shared.url, method, path, body)
        assert status == 400 and "session" in answer["error"], (path, answer)
        assert alice["session"] not in json.dumps(answer)
    status, mine = call(shared.url, "GET", f"/api/state?session={alice['session']}")
    assert status == 200 and mine["session"] == alice["session"]
    status, gone = call(shared.url, "GET", "/api/state?session=nosuchgame")
    assert status == 404 and alice["session"] not in json.dumps(gone)


def test_a_server_on_loopback_alone_still_plays_the_game_used_last(local):
    _, alice = call(local.url, "POST", "/api/new", {})
    status, answer = call(local.url, "GET", "/api/state")
    assert status == 200 and answer["session"] == alice["session"]


def test_a_server_bound_beyond_loopback_is_shared():
    s = Server(App(bot="simple"), port=0, host="0.0.0.0").start()
    try:
        port = s.url.rstrip("/").rsplit(":", 1)[1]
        status, answer = call(f"http://127.0.0.1:{port}", "GET", "/api/state")
        assert status == 400 and "session" in answer["error"]
    finally:
        s.stop()


def test_strangers_new_games_push_out_only_their_own_and_not_another_client_s_recent_game():
    sessions = Sessions(limit=64, per_client=4)
    app = App(bot="simple", seed=1)
    alice = PlaySession.start(loader=app.bot)
    sessions.add(alice, "10.0.0.1")
    for i in range(16):  # the probe: 16 strangers (one address or many) each start a game
        sessions.add(PlaySession.start(loader=app.bot), "10.0.0.9" if i % 2 else f"10.0.1.{i}")
    assert sessions.get(alice.id) is alice
    assert sum(1 for o in sessions.owners.values() if o == "10.0.0.9") == 4  # its own oldest went first
    mine = [PlaySession.start(loader=app.bot) for _ in range(5)]
    for s in mine:
        sessions.add(s, "10.0.0.1")
    with pytest.raises(IllegalAction):
        sessions.get(alice.id)  # alice's own fifth game pushed out her oldest
    assert sessions.get(mine[-1].id) is mine[-1]


@pytest.fixture
def load_calls(monkeypatch) -> list[str]:
    """The specs the server loads, in order (``load_bot`` counted)."""
    import arena.loading.load as load

    calls: list[str] = []
    real = load.load_bot

    def counted(spec, *a, **kw):
        calls.append(spec)
        return real(spec, *a, **kw)

    monkeypatch.setattr(load, "load_bot", counted)
    return calls


def test_the_server_loads_each_bot_once_for_all_its_games(load_calls):
    calls = load_calls
    app = App(bot="simple", seed=2)
    for _ in range(5):
        app.new_game(NewGame())
    app.new_game(NewGame(bot="gin-chasing"))
    app.new_game(NewGame(bot="gin-chasing"))
    assert calls == ["simple", "gin-chasing"]
    games = [s for s, _ in app.sessions.games.values()]
    assert games[0].mem_bot is not games[1].mem_bot and games[0].params is not games[1].params  # each game's own


def test_a_bot_in_its_own_process_is_loaded_for_each_game(load_calls, monkeypatch):
    """Its process holds one game's conversation: two games sharing it would interleave their questions."""
    import arena.external.client as client

    calls = load_calls
    monkeypatch.setattr(client, "external_of", lambda bot: object() if bot.name == "gin-chasing" else None)
    app = App(bot="simple", seed=2)
    for spec in ("gin-chasing", "gin-chasing", "simple", "simple"):
        app.new_game(NewGame(bot=spec))
    assert calls == ["gin-chasing", "gin-chasing", "simple"]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc")
def test_many_new_games_keep_the_server_s_memory_flat():
    """The probe: each POST /api/new grew the server by about 0.27 MB, for ever (a bot loaded per game)."""
    proc = subprocess.Popen(
        [*ARENA, "play", "--port", "0", "--no-open", "--bot", "simple"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISPLAY": ""},
    )
    try:
        line = proc.stdout.readline()
        url = line.split()[3]
        for _ in range(40):  # warm up: compiled code, caches, the allocator's arenas
            assert call(url, "POST", "/api/new", {})[0] == 200
        time.sleep(0.5)
        before = _rss_mb(proc.pid)
        for _ in range(200):
            assert call(url, "POST", "/api/new", {})[0] == 200
        time.sleep(0.5)
        grown = _rss_mb(proc.pid) - before
        assert grown < 12, f"{grown:.1f} MB over 200 new games (the leak was about 54 MB)"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("order", [("localhost", "evil.com"), ("evil.com", "localhost")])
def test_a_request_with_two_host_headers_is_a_400(local, order):
    port = local.url.rstrip("/").rsplit(":", 1)[1]
    req = (
        f"GET /api/options HTTP/1.1\r\nHost: {order[0]}:{port}\r\nHost: {order[1]}:{port}\r\nConnection: close\r\n\r\n"
    ).encode()
    status, body = raw(local.url.rstrip("/"), req)
    assert status == 400 and "more than one Host" in json.loads(body)["error"]


def _head(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    import socket

    host, port = url.split("//")[1].rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def test_a_refused_host_on_the_api_is_json_with_the_security_headers(local):
    url = local.url.rstrip("/")
    status, headers, body = _head(url, get(url, "/api/options", host="evil.com"))
    assert status == 400 and "evil.com" in json.loads(body)["error"]
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store" and headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/", "/play", "/view"])
def test_head_is_answered_like_get_without_a_body(local, path):
    url = local.url.rstrip("/")
    hostport = url.split("//")[1]
    status, headers, body = _head(
        url, f"HEAD {path} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n".encode()
    )
    assert status == 200 and headers["content-type"].startswith("text/html") and body == b""
    assert "script-src" in headers["content-security-policy"]


def test_refusals_say_the_action_in_words_not_its_name():
    from arena.engine.layout import PH_UPCARD_DEALER, PH_UPCARD_NONDEALER

    s = PlaySession.start(seed=7)
    assert s.table.phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER)  # the person takes or passes the upcard
    words = {
        "no_knock": "you cannot decline to knock now",
        "big_gin": "you cannot go big gin now",
        "no_big_gin": "you cannot decline big gin now",
        "draw_stock": "you cannot draw from the stock now",
        "draw_pile": "you cannot draw from the discard pile now",
        "take_back": "you cannot take back your layoffs now",
    }
    for action, line in words.items():
        with pytest.raises(IllegalAction) as e:
            s.act(action)
        assert str(e.value).startswith(line + ":"), str(e.value)


def _nginx_headers(visitor: str) -> dict[str, str]:
    """The headers the documented nginx configuration (docs/how-to/league.md) sends for ``visitor``'s request:
    each ``proxy_set_header NAME VALUE`` with nginx's variables filled in."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "league.md").read_text()
    text = " ".join(doc.split())
    nginx = text[text.index("With nginx") :].split("`")[1]
    values = {"$host": "127.0.0.1", "$scheme": "https", "$remote_addr": visitor, "$proxy_add_x_forwarded_for": visitor}
    headers = {}
    for name, value in re.findall(r"proxy_set_header\s+(\S+)\s+([^;]+);", nginx):
        headers[name] = values.get(value.strip(), value.strip())
    return headers


def _new_game_via_proxy(url: str, visitor: str) -> str:
    """``POST /api/new`` as the documented nginx proxy forwards it for ``visitor``; the new game's id."""
    req = urllib.request.Request(url + "api/new", data=b"{}", method="POST")
    for k, v in {"Content-Type": "application/json", **_nginx_headers(visitor)}.items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())["session"]


def test_visitors_behind_the_documented_nginx_proxy_keep_their_own_games(shared):
    """Behind a proxy on this machine every connection comes from 127.0.0.1: the documented configuration must
    pass the visitor's address on (X-Forwarded-For, which uvicorn trusts from 127.0.0.1), or one visitor's new
    games push out everyone else's (16 per visitor would be 16 for the whole site)."""

    alice = _new_game_via_proxy(shared.url, "203.0.113.1")
    for _ in range(17):
        _new_game_via_proxy(shared.url, "203.0.113.9")  # a stranger starts more games than one visitor may keep
    status, mine = call(shared.url, "GET", f"/api/state?session={alice}")
    assert status == 200 and mine["session"] == alice


def test_one_visitor_s_ipv6_addresses_count_as_one_visitor():
    """An IPv6 visitor holds a whole /64 (a home line's network) and picks its address for each request: counted
    by address, one visitor starting games from 2001:db8:9::1, ::2, ... was as many visitors, and filled the
    server until everyone's games were pushed out.  A /64 is one visitor (here through the documented proxy)."""
    s = Server(App(bot="simple", seed=3, max_sessions=24, per_client=4), port=0, shared=True).start()
    try:
        alice = _new_game_via_proxy(s.url, "2001:db8:1::1")
        ipv4 = _new_game_via_proxy(s.url, "203.0.113.1")
        for i in range(30):
            _new_game_via_proxy(s.url, f"2001:db8:9::{i + 1:x}")
        for sid in (alice, ipv4):
            status, mine = call(s.url, "GET", f"/api/state?session={sid}")
            assert status == 200 and mine["session"] == sid
        assert len(s.app.sessions) == 6  # alice's, the IPv4 visitor's, and the other's four
    finally:
        s.stop()
