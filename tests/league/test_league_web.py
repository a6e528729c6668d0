"""The league inside the one web app: its routes next to the viewer and the play page, the body rules by path,
the viewer's games looked up per request in the league's runs, and the Host names a served league answers to."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any
from urllib.parse import urlencode

import pytest

from arena.league.config import LeagueConfig
from arena.league.core import League
from arena.league.scheduler import Scheduler
from arena.web.server import ALLOWED_HOSTS, App, Server, allowed_hosts
from arena.web.viewer import Games
from tests.league.server import Server as LeagueServer
from tests.league.server import add_user, arena, make_league


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A league of two house bots whose one pairing is played (20 games in runs/r000), served by the one app
    with the play page (``arena league serve --play-page``)."""
    tmp = tmp_path_factory.mktemp("one-app")
    lg = League.init(
        tmp / "lg",
        LeagueConfig(games_per_pairing=20, chunk_size=10, house_bots=("random", "simple"), extra_rounds=0),
    )
    s = Scheduler(lg, workers=1)
    while s.step():
        pass
    srv = Server(App(games=Games(runs_root=lg.dir / "runs")), port=0, league=lg.dir, play=True).start()
    yield srv, lg
    srv.stop()


def call(srv: Server, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None):
    req = urllib.request.Request(srv.url.rstrip("/") + path, data=body, method=method, headers=headers or {})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=60) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read(), resp.headers
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read(), exc.headers


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


def error(body: bytes) -> str:
    line = json.loads(body)["error"]
    assert "\n" not in line and "Traceback" not in line
    return line


def test_one_app_serves_the_league_the_viewer_and_the_play_page(played):
    srv, lg = played
    status, headers, _, _ = call(srv, "GET", "/")
    assert status == 307 and headers["location"] == "/league/"
    status, headers, body, _ = call(srv, "GET", "/league/")
    assert status == 200 and b"leaderboard" in body and "script-src 'self'" in headers["content-security-policy"]
    board = json.loads(call(srv, "GET", "/api/leaderboard")[2])
    assert {e["bot"] for e in board} == {"random", "simple"} and all(e["games"] == 20 for e in board)
    assert b"play" in call(srv, "GET", "/play")[2].lower()
    status, headers, body, raw = call(srv, "GET", "/view?run=r000&game=3")
    assert status == 200 and b'/api/game" + location.search' in body
    assert raw.get_all("cache-control") == ["no-store"]  # Guard adds it once, the league's own header stays one
    assert call(srv, "GET", "/league/static/league.js")[2].startswith(b'\n"use strict"')


def test_the_viewer_loads_the_league_game_a_request_names(played):
    srv, lg = played
    from arena.run.store import RunStore

    store = RunStore(lg.dir / "runs" / "r000")
    ids = sorted(int(i) for i in store.games()["game_id"])
    for gid in (ids[0], ids[-1]):
        status, _, body, _ = call(srv, "GET", f"/api/game?run=r000&game={gid}")
        g = json.loads(body)
        assert status == 200 and g["run"] == "r000" and g["game_id"] == gid and g["ok"]
        row = store.game(gid)
        assert g["seed"] == int(row["seed"]) and g["score"] == [int(row["score0"]), int(row["score1"])]
    # The bot page's recent games link to exactly these viewer URLs.
    page = call(srv, "GET", "/league/bot/simple")[2].decode()
    assert "/view?run=r000&amp;game=" in page


@pytest.mark.parametrize(
    "query, status, words",
    [
        ("run=../lg&game=1", 400, "not a league run name"),
        ("run=..%2F..%2Fetc&game=1", 400, "not a league run name"),
        ("run=r000%2F..%2F..&game=1", 400, "not a league run name"),
        ("run=%2Fetc&game=1", 400, "not a league run name"),
        ("run=r00&game=1", 400, "not a league run name"),
        ("run=r999&game=1", 404, "no run r999"),
        ("run=r000&game=abc", 400, "not a game id"),
        ("run=r000&game=-1", 400, "not a game id"),
        ("run=r000&game=99999999", 404, "no game 99999999"),
        ("game=1", 400, "run=rNNN"),
        ("run=r000", 400, "?game=ID"),
    ],
)
def test_the_viewer_refuses_bad_runs_and_games_in_one_line(played, query, status, words):
    srv, lg = played
    got, _, body, _ = call(srv, "GET", "/api/game?" + query)
    line = error(body)
    assert got == status and words in line, (query, got, line)
    assert str(lg.dir) not in line  # a message names the run, never the server's folders


def test_guard_rules_by_path_keep_the_league_forms_and_uploads(played):
    srv, lg = played
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    # A league form (urlencoded) passes the Guard and meets the league's own CSRF check.
    status, _, body, _ = call(srv, "POST", "/league/login", urlencode({"token": "x", "csrf": "y"}).encode(), form)
    assert status == 403 and b"CSRF" in body
    # The play API still wants JSON: a form there is 415.
    status, _, body, _ = call(srv, "POST", "/api/new", b"bot=simple", form)
    assert status == 415 and "JSON" in error(body)
    # A submission larger than the play API's 64 KiB but within the league's upload limit reaches the league
    # (no token: 401); past the league's limit the Guard answers 413, naming the limit.
    big = json.dumps({"name": "big", "source": "#" * 100_000}).encode()
    status, _, body, _ = call(srv, "POST", "/api/submit", big, {"Content-Type": "application/json"})
    assert status == 401 and "log in" in error(body)
    cfg = lg.config  # a bot file JSON-escaped, or an archive or policy file in base64
    limit = max(6 * cfg.max_file_bytes, 4 * cfg.max_archive_bytes // 3 + 4) + 4096
    huge = b"x" * (limit + 1)
    token = lg.add_user(lg.db(), "guardtess")  # a stranger's body is refused (401) before it is read
    auth = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    status, _, body, _ = call(srv, "POST", "/api/submit", huge, auth)
    assert status == 413 and str(limit) in error(body)
    # A league form past its small limit: 413 as a line of text (a page, not the API).
    status, headers, body, _ = call(srv, "POST", "/league/login", b"token=" + b"x" * 20_000, form)
    assert status == 413 and headers["content-type"].startswith("text/plain") and b"limit" in body
    # Unknown paths: one line, JSON on the API, text on the league's pages.
    status, _, body, _ = call(srv, "GET", "/api/nothing")
    assert status == 404 and "no page" in error(body)
    status, headers, body, _ = call(srv, "GET", "/league/nothing/here")
    assert status == 404 and headers["content-type"].startswith("text/plain") and b"\n" not in body.strip()


def test_allowed_hosts_default_to_loopback_and_the_bind_address():
    assert allowed_hosts("127.0.0.1") == ALLOWED_HOSTS
    assert allowed_hosts("10.1.2.3") == [*ALLOWED_HOSTS, "10.1.2.3"]
    assert allowed_hosts("::1") == ALLOWED_HOSTS  # [::1] is there already
    assert allowed_hosts("127.0.0.1", ["League.Example.org", "*.example.net"])[-2:] == [
        "league.example.org",
        "*.example.net",
    ]
    assert allowed_hosts("0.0.0.0", ["*"]) == ["*"]
    import socket

    assert socket.gethostname().lower() in allowed_hosts("0.0.0.0")  # every interface: this machine's names too
    for bad in ("a b", "evil.org/x", "ex*ample.org", "", "[zz]"):
        with pytest.raises(ValueError, match="--allowed-host"):
            allowed_hosts("127.0.0.1", [bad])


def _host_status(url: str, host: str, proto: str | None = None) -> tuple[int, dict[str, str]]:
    h = {"Host": host}
    if proto:
        h["X-Forwarded-Proto"] = proto
    req = urllib.request.Request(url, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


@pytest.mark.slow
def test_a_served_league_answers_to_its_allowed_hosts_on_every_interface_and_behind_a_proxy(tmp_path):
    folder = make_league(tmp_path / "lg")
    add_user(folder, "olga", organizer=True)
    out = arena("league", "serve", str(folder), "--allowed-host", "evil.org/x", "--no-play", check=False)
    assert out.returncode == 2 and out.stderr.strip().splitlines()[-1].startswith("error: --allowed-host 'evil.org/x'")
    # Bound to every interface, with the proxy's public name allowed.
    server = LeagueServer(folder, play=False, extra=["--host", "0.0.0.0", "--allowed-host", "league.example.org"])
    try:
        url = server.url + "/api/leaderboard"
        assert _host_status(url, f"127.0.0.1:{server.port}")[0] == 200
        assert _host_status(url, "localhost")[0] == 200
        assert _host_status(url, "league.example.org")[0] == 200
        assert _host_status(url, "evil.example")[0] == 400  # DNS rebinding: refused, in one line naming the Host
        req = urllib.request.Request(url, headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        assert json.loads(refused.value.read().decode()) == {  # on the API, JSON like every other answer there
            "error": "this server does not answer to Host 'evil.example' (DNS rebinding); "
            "a league's server allows it with --allowed-host NAME"
        }
        # Behind a TLS proxy on this machine: X-Forwarded-Proto https makes the cookies Secure.
        status, headers = _host_status(server.url + "/league/login", "league.example.org", "https")
        assert status == 200 and "secure" in headers["set-cookie"].lower()
        status, headers = _host_status(server.url + "/league/login", "league.example.org")
        assert status == 200 and "secure" not in headers["set-cookie"].lower()
        assert "league.example.org" in server.log_text()  # the names it answers to are printed at start
    finally:
        server.stop()
    # The default: loopback names only.
    server = LeagueServer(folder, play=False)
    try:
        assert _host_status(server.url + "/api/leaderboard", "league.example.org")[0] == 400
        assert _host_status(server.url + "/api/leaderboard", "localhost")[0] == 200
    finally:
        server.stop()


#: The play page and every endpoint of its API, as a browser calls them.
PLAY_PATHS = [
    ("GET", "/play", None),
    ("GET", "/api/options", None),
    ("POST", "/api/new", {"bot": "random", "target": 50}),
    ("GET", "/api/state", None),
    ("POST", "/api/act", {"action": "pass"}),
    ("POST", "/api/next", {}),
]


def test_a_served_league_has_no_play_page_unless_given_play_page(tmp_path):
    """Off by default: on a league's public site, anyone could otherwise start games against the built-in bots on
    the server's cores.  Off, /play and its API are 404s like any unknown path, and the rest of the site stays."""
    folder = make_league(tmp_path / "lg")
    server = LeagueServer(folder, play=False)
    try:
        for method, path, obj in PLAY_PATHS:
            body = None if obj is None else json.dumps(obj).encode()
            status, _, answer = server.request(method, path, body, headers={"Content-Type": "application/json"})
            assert status == 404 and error(answer) == f"no page {path}", (method, path, status, answer[:200])
        assert server.request("GET", "/league/")[0] == 200
        assert server.request("GET", "/view")[0] == 200  # the viewer, which the bot pages link to, stays
        assert server.request("GET", "/")[2] == b"" and server.request("GET", "/")[0] == 307  # to /league/
        assert "the play page /play: off (--play-page serves it)" in server.log_text()
    finally:
        server.stop()
    server = LeagueServer(folder, play=False, play_page=True)
    try:
        status, _, page = server.request("GET", "/play")
        assert status == 200 and b"/api/options" in page
        assert {"random", "simple"} <= set(server.get("/api/options")["bots"])
        status, game = server.post_json("/api/new", {"bot": "random", "target": 50})
        assert status == 200 and game["session"], game
        assert server.get(f"/api/state?session={game['session']}")["session"] == game["session"]
        assert server.request("GET", "/")[0] == 307  # a league's home is still its leaderboard
        assert "the play page /play: on" in server.log_text()
    finally:
        server.stop()


def test_a_house_bot_with_inline_settings_plays_and_is_served_under_its_spec(tmp_path):
    """``house_bots = ["monte-carlo:samples=100"]`` is how an organizer offers a cheaper search bot: it plays
    its pairings under that name, and the board and its bot page (the name quoted in the path) show it."""
    name = "early-knock:knock_at=5"
    lg = League.init(
        tmp_path / "lg",
        LeagueConfig(games_per_pairing=10, chunk_size=10, house_bots=("random", name), extra_rounds=0),
    )
    s = Scheduler(lg, workers=1)
    while s.step():
        pass
    srv = Server(App(games=Games(runs_root=lg.dir / "runs")), port=0, league=lg.dir).start()
    try:
        board = json.loads(call(srv, "GET", "/api/leaderboard")[2])
        assert {e["bot"]: e["games"] for e in board} == {"random": 10, name: 10}
        status, _, body, _ = call(srv, "GET", "/api/bots/" + urllib.parse.quote(name, safe=""))
        assert status == 200 and json.loads(body)["bot"] == name
        status, _, page, _ = call(srv, "GET", "/league/bot/" + urllib.parse.quote(name, safe=""))
        assert status == 200 and f"<h1>{name}</h1>".encode() in page
    finally:
        srv.stop()
    # The settings are played, not dropped: the run's config names the bot with them.
    from arena.run.store import RunStore

    assert name in RunStore(lg.dir / "runs" / "r000").config().bots


def test_the_league_viewer_shows_a_forfeits_reason_without_the_servers_paths(tmp_path):
    """A bot's error can name where the server keeps it (its own ``__file__``, its folder): the bot pages
    showed it cleaned, the viewer's JSON in full.  The local viewer (``arena view``) keeps the paths."""
    from arena.run import run_tournament
    from arena.settings.config import TournamentConfig

    bot = tmp_path / "leaky.py"
    bot.write_text(
        '"""Leaks its path."""\nfrom bots.simple import *  # noqa\nPLAIN = True\n\n\n'
        "def discard(view, params, memory, rng):\n    raise RuntimeError('leak ' + __file__)\n"
    )
    cfg = TournamentConfig(
        name="r000",
        bots=("simple", str(bot)),
        games_per_pair=2,
        chunk_size=2,
        workers=1,
        results_dir=str(tmp_path / "runs"),
    )
    games = run_tournament(cfg, progress=False).games
    gid = int(games.loc[games["error"] != "", "game_id"].iloc[0])
    local = Games(run_dir=tmp_path / "runs" / "r000").get(None, str(gid))["error"]
    assert "RuntimeError: leak /" in local  # the file's path, as the bot said it
    shown = Games(runs_root=tmp_path / "runs").get("r000", str(gid))["error"]
    assert "RuntimeError: leak arena_bot_" in shown and "/" not in shown, shown
