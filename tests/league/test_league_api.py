"""The league's HTTP API and pages against a real ``arena league serve`` process and SQLite file.

The server runs with ``--no-play`` (no scheduler), so every answer here is
the web layer's alone: authentication, permissions, limits, bad input.  Each
bad request must get a 4xx with a one-line message and never a traceback.
"""

from __future__ import annotations

import json
import sqlite3
from urllib.parse import urlencode

import pytest

from arena.league.web import SESSION_COOKIE
from tests.league.server import SIMPLE_COPY, Server, add_user, arena, free_port, login, make_league, set_cookie

KEYS = {"bot", "owner", "version", "rating", "rating_low", "rating_high", "games", "win_rate", "forfeits"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("league")
    folder = make_league(base / "lg", submissions_per_hour=4, active_bots_per_user=2, max_file_bytes=60_000)
    tokens = {
        "alice": add_user(folder, "alice"),
        "bob": add_user(folder, "bob"),
        "olga": add_user(folder, "olga", organizer=True),
    }
    server = Server(folder, play=False)
    yield server, tokens, folder
    server.stop()


def one_line_error(status: int, body: bytes) -> str:
    text = body.decode()
    assert "Traceback" not in text and 'File "' not in text
    msg = json.loads(text)["error"]
    assert msg and "\n" not in msg
    return msg


def submit(server: Server, token: str | None, name: str, source: str = SIMPLE_COPY):
    return server.request(
        "POST",
        "/api/submit",
        json.dumps({"name": name, "source": source}).encode(),
        token=token,
        headers={"Content-Type": "application/json"},
    )


def test_init_and_add_user_refuse_bad_input(tmp_path):
    folder = make_league(tmp_path / "x")
    out = arena("league", "init", str(folder), check=False)
    assert out.returncode == 2 and out.stderr.strip().startswith("error:") and "already holds a league" in out.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("duplicate = true\ngames_per_pairing = 3\n")
    out = arena("league", "init", str(tmp_path / "y"), "--config", str(bad), check=False)
    assert out.returncode == 2 and "games_per_pairing = 3" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    bad.write_text("house_bots = ['nosuchbot']\n")
    out = arena("league", "init", str(tmp_path / "z"), "--config", str(bad), check=False)
    assert out.returncode == 2 and "nosuchbot" in out.stderr
    out = arena("league", "add-user", str(folder), "../evil", check=False)
    assert out.returncode == 2 and "user name" in out.stderr
    out = arena("league", "add-user", str(tmp_path / "nothing"), "ann", check=False)
    assert out.returncode == 2 and "not a league folder" in out.stderr
    # Only the token's hash is stored.
    token = add_user(folder, "ann")
    db = sqlite3.connect(folder / "league.db")
    stored = db.execute("SELECT token_hash FROM users WHERE name = 'ann'").fetchone()[0]
    assert token not in stored and len(stored) == 64
    assert token.encode() not in (folder / "league.db").read_bytes()


def test_serve_refuses_bad_options(tmp_path):
    folder = make_league(tmp_path / "lg")
    out = arena("league", "serve", str(folder), "--workers", "2", "--scheduler", "tcp://x:1", check=False)
    assert out.returncode == 2 and "not both" in out.stderr
    out = arena("league", "serve", str(tmp_path / "none"), check=False)
    assert out.returncode == 2 and "not a league folder" in out.stderr


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_serve_refuses_a_league_db_linked_from_another_folder(tmp_path, link):
    """The server's lock is its folder's: a second folder whose league.db names the first's database would
    take its own lock, and two schedulers would play every pairing twice on one file."""
    import shutil

    first = make_league(tmp_path / "lg")
    second = tmp_path / "lg2"
    second.mkdir()
    shutil.copy(first / "league.toml", second / "league.toml")
    getattr(second / "league.db", "symlink_to" if link == "symlink" else "hardlink_to")(first / "league.db")
    port = str(free_port())
    out = arena("league", "serve", str(second), "--no-play", "--port", port, check=False, timeout=30)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "must be a file of its own folder" in lines[0], out.stderr


def test_leaderboard_json_shape(site):
    server, _, _ = site
    board = server.get("/api/leaderboard")
    assert isinstance(board, list) and {e["bot"] for e in board} >= {"random", "simple"}
    for e in board:
        assert KEYS <= set(e)
        assert e["owner"] == "house" and e["games"] == 0 and e["rating"] is None


def test_submit_needs_a_token_and_checks_it(site):
    server, tokens, _ = site
    status, _, body = submit(server, None, "nobody")
    assert status == 401 and "Bearer" in one_line_error(status, body)
    status, _, body = submit(server, "not-a-token", "nobody")
    assert status == 401 and "not valid" in one_line_error(status, body)
    status, _, body = submit(server, "x" * 5000, "nobody")
    assert status == 401


def test_owner_submits_replaces_and_others_are_refused(site):
    server, tokens, folder = site
    status, _, body = submit(server, tokens["alice"], "alicebot")
    assert status == 202, body
    out = json.loads(body)
    assert out["status"] == "checking" and out["version"] == 1
    status, _, body = submit(server, tokens["alice"], "alicebot")  # a new version by the owner
    assert status == 202 and json.loads(body)["version"] == 2
    status, _, body = submit(server, tokens["bob"], "alicebot")  # another user's bot: 403
    assert status == 403 and "another user" in one_line_error(status, body)
    status, _, body = submit(server, tokens["bob"], "simple")  # a house bot: 403
    assert status == 403
    status, body2 = server.post_json("/api/bots/alicebot/withdraw", {}, token=tokens["bob"])
    assert status == 403 and "another user" in body2["error"]
    versions = server.get("/api/users/alice")["versions"]
    assert [v["version"] for v in versions if v["bot"] == "alicebot"] == [2, 1]
    # The source: the owner yes, another user no (403), nobody no (401); an organizer may publish it.
    status, _, body = server.request("GET", "/api/bots/alicebot/source", token=tokens["alice"])
    assert status == 200 and body.decode() == SIMPLE_COPY
    status, _, body = server.request("GET", "/api/bots/alicebot/source", token=tokens["bob"])
    assert status == 403 and "private" in one_line_error(status, body)
    status, _, body = server.request("GET", "/api/bots/alicebot/source")
    assert status == 401
    status, body2 = server.post_json("/api/bots/alicebot/publish", {"published": True}, token=tokens["alice"])
    assert status == 403  # organizer endpoint
    status, body2 = server.post_json("/api/bots/alicebot/publish", {"published": True}, token=tokens["olga"])
    assert status == 200 and body2["published"] is True
    status, _, body = server.request("GET", "/api/bots/alicebot/source?version=1")
    assert status == 200 and body.decode() == SIMPLE_COPY
    # A browser's stale session cookie (logged out, revoked, rotated) reads as a visitor's, not a 401.
    stale = {"Cookie": f"{SESSION_COOKIE}=stale-session-of-before"}
    status, _, body = server.request("GET", "/api/bots/alicebot/source", headers=stale)
    assert status == 200 and body.decode() == SIMPLE_COPY
    status, _, body = server.request("GET", "/api/bots/alicebot/source", token="not-a-token")
    assert status == 401 and "not valid" in one_line_error(status, body)  # a wrong token is still said
    status, _, body = server.request("GET", "/api/bots/alicebot/source?version=99", token=tokens["alice"])
    assert status == 404
    status, _, body = server.request("GET", "/api/bots/alicebot/source?version=1;drop", token=tokens["alice"])
    assert status == 400 and "not a number" in one_line_error(status, body)
    # The owner withdraws: off the board, versions kept.
    status, body2 = server.post_json("/api/bots/alicebot/withdraw", {}, token=tokens["alice"])
    assert status == 200
    info = server.get("/api/bots/alicebot")
    assert info["withdrawn"] is True and len(info["versions"]) == 2
    assert all(v["status"] == "withdrawn" for v in info["versions"])
    assert "alicebot" not in {e["bot"] for e in server.get("/api/leaderboard")}


def test_organizer_endpoints_refuse_participants(site):
    server, tokens, _ = site
    status, body = server.post_json("/api/users", {"name": "mallory"}, token=tokens["bob"])
    assert status == 403 and "organizer" in body["error"]
    status, body = server.post_json("/api/users", {"name": "mallory"})
    assert status == 401
    status, _, body = server.request(
        "POST",
        "/api/submit",
        json.dumps({"name": "cmdbot", "command": "cmd:python3 -c 'print(1)'"}).encode(),
        token=tokens["bob"],
    )
    assert status == 403 and "organizer" in one_line_error(status, body)
    status, body = server.post_json("/api/users", {"name": "carol"}, token=tokens["olga"])
    assert status == 201 and len(body["token"]) >= 40
    assert server.get("/api/me", token=body["token"]) == {"user": "carol", "organizer": False}
    status, body = server.post_json("/api/users", {"name": "carol"}, token=tokens["olga"])
    assert status == 409
    status, body = server.post_json("/api/users", {"name": "<script>"}, token=tokens["olga"])
    assert status == 400 and "user name" in body["error"]
    status, body = server.post_json("/api/users", {"name": "dan", "organizer": "yes"}, token=tokens["olga"])
    assert status == 400


@pytest.mark.parametrize(
    "body, ctype, status, words",
    [
        (b"{", "application/json", 400, "not valid JSON"),
        (b"[1, 2]", "application/json", 400, "JSON object"),
        (b"\xff\xfe{}", "application/json", 400, "not valid JSON"),
        (json.dumps({"name": "a b", "source": "x = 1"}).encode(), "application/json", 400, "bot name"),
        (json.dumps({"name": "ok", "source": 5}).encode(), "application/json", 400, "string"),
        (json.dumps({"name": "ok"}).encode(), "application/json", 400, "send one of"),
        (json.dumps({"name": "ok", "source": "def f(:\n"}).encode(), "application/json", 400, "not valid Python"),
        (json.dumps({"name": "ok", "source": "x = 1\x00"}).encode(), "application/json", 400, "NUL"),
        (json.dumps({"name": "ok", "source": "   "}).encode(), "application/json", 400, "empty"),
        (json.dumps({"name": "ok", "source": "#" * 70_000}).encode(), "application/json", 413, "limit"),
        (b"x" * 3_000_000, "application/json", 413, "limit"),  # past the body limit a 2 MB archive needs in base64
    ],
)
def test_submit_refuses_bad_bodies(site, body, ctype, status, words):
    server, tokens, _ = site
    got, _, out = server.request(
        "POST",
        "/api/submit",
        body,
        token=tokens["bob"],
        headers={"Content-Type": ctype},
    )
    assert got == status and words in one_line_error(got, out)


def test_bad_paths_and_methods(site):
    server, tokens, folder = site
    for path in (
        "/api/bots/..%2F..%2Fleague.db",
        "/api/bots/../league.db",
        "/league/static/..%2Fleague.db",
        "/league/bot/%2e%2e/league.db",
        "/api/bots/early-knock:knock_at=..%2F..%2Fleague.db",
        "/api/nothing",
    ):
        status, _, body = server.request("GET", path)
        assert status == 404, path
        assert b"Traceback" not in body and b"CREATE TABLE" not in body
    # A house bot's name may carry inline settings (builtin:key=number); nothing else gets past that form.
    for path in (
        "/api/bots/a.b",
        "/api/users/%3Cscript%3E",
        "/api/bots/early-knock:knock_at=5%0A",
        "/api/bots/early-knock:knock_at=%3Cscript%3E",
    ):
        status, headers, body = server.request("GET", path)
        assert status == 400 and "is not a name" in one_line_error(status, body), path
        assert headers["content-type"] == "application/json" and headers["x-content-type-options"] == "nosniff"
    for path in ("/league/bot/%3Cscript%3E", "/league/user/x%22y"):
        status, headers, body = server.request("GET", path)
        assert status == 400 and b"<script>" not in body and b'x"y' not in body, path
        assert b"&lt;script&gt;" in body or b"x&quot;y" in body
    status, _, body = server.request("GET", "/api/bots/nosuch")
    assert status == 404 and "no bot" in one_line_error(status, body)
    status, _, body = server.request("GET", "/api/users/nosuch")
    assert status == 404
    status, _, body = server.request("DELETE", "/api/leaderboard")
    assert status == 405
    status, _, body = server.request(
        "POST", "/api/submit", b"{}", token=tokens["bob"], headers={"Content-Length": "abc"}
    )
    assert 400 <= status < 500


def test_limits_per_hour_and_active_bots(tmp_path):
    folder = make_league(tmp_path / "lim", submissions_per_hour=3, active_bots_per_user=2)
    token = add_user(folder, "zed")
    server = Server(folder, play=False)
    try:
        assert submit(server, token, "one")[0] == 202
        assert submit(server, token, "two")[0] == 202
        status, _, body = submit(server, token, "three")
        assert status == 409 and "2 active bots" in one_line_error(status, body)
        assert submit(server, token, "one")[0] == 202  # a new version of an active bot is fine
        status, _, body = submit(server, token, "one")
        assert status == 429 and "per hour" in one_line_error(status, body)
    finally:
        server.stop()


def test_login_session_and_csrf(site):
    server, tokens, _ = site
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, headers, body = server.request("GET", "/league/login")
    nonce, _ = set_cookie(headers, "league_login_csrf")
    # No CSRF cookie, or a wrong one: 403; a bad token: 401.
    status, _, body = server.request(
        "POST", "/league/login", urlencode({"token": tokens["bob"], "csrf": nonce}).encode(), headers=form
    )
    assert status == 403
    status, _, body = server.request(
        "POST",
        "/league/login",
        urlencode({"token": "nope", "csrf": nonce}).encode(),
        headers={**form, "Cookie": f"league_login_csrf={nonce}"},
    )
    assert status == 401 and b"Traceback" not in body
    status, _, body = server.request("POST", "/league/login", b"\xff\xfe", headers=form)
    assert status in (400, 403)
    status, _, body = server.request("POST", "/league/login", b"token=x", headers={"Content-Type": "text/plain"})
    assert status == 415
    sid, csrf = login(server, tokens["bob"])
    cookie = {"Cookie": f"league_session={sid}"}
    # The submit form without its CSRF token: 403; with it: 303 to the user page.
    status, _, body = server.request(
        "POST",
        "/league/submit",
        urlencode({"name": "bobbot", "source": SIMPLE_COPY}).encode(),
        headers={**form, **cookie},
    )
    assert status == 403
    status, headers, body = server.request(
        "POST",
        "/league/submit",
        urlencode({"name": "bobbot", "source": SIMPLE_COPY, "csrf": csrf}).encode(),
        headers={**form, **cookie},
    )
    assert status == 303 and headers["location"].endswith("/league/user/bob")
    assert any(v["bot"] == "bobbot" for v in server.get("/api/users/bob")["versions"])
    # A refused submission shows its reason on the page, escaped.
    status, _, body = server.request(
        "POST",
        "/league/submit",
        urlencode({"name": "bobbot", "source": "def <b>(:", "csrf": csrf}).encode(),
        headers={**form, **cookie},
    )
    assert status == 400 and b"not valid Python" in body
    # Cookie-authenticated API writes need the CSRF header too.
    status, _, body = server.request("POST", "/api/bots/bobbot/withdraw", b"{}", headers=cookie)
    assert status == 403 and "CSRF" in one_line_error(status, body)
    status, _, body = server.request(
        "POST", "/api/bots/bobbot/withdraw", b"{}", headers={**cookie, "X-CSRF-Token": csrf}
    )
    assert status == 200
    # Log out ends the session.
    status, _, _ = server.request(
        "POST", "/league/logout", urlencode({"csrf": csrf}).encode(), headers={**form, **cookie}
    )
    assert status == 303
    assert server.request("GET", "/api/me", headers=cookie)[0] == 401


def test_pages_escape_what_users_and_bots_wrote(site):
    server, tokens, folder = site
    evil = "<script>alert(1)</script>"
    db = sqlite3.connect(folder / "league.db")
    with db:
        db.execute("UPDATE versions SET reason = ? WHERE run_name = 'alicebot-v1'", (evil,))
        db.execute(
            "INSERT OR REPLACE INTO state(key, value) VALUES ('bot:simple', ?)",
            (
                json.dumps(
                    {
                        "rating": {},
                        "head_to_head": [
                            {"opponent": evil, "games": 2, "wins": 1, "losses": 1, "draws": 0, "win_rate": 0.5}
                        ],
                        "outcomes": {evil: 0.5},
                        "margins": [],
                        "recent": [
                            {
                                "run": 'r000"><x>',
                                "game": 3,
                                "opponent": evil,
                                "result": "won",
                                "score": "100-0",
                                "error": evil,
                            }
                        ],
                    }
                ),
            ),
        )
    db.close()
    for path in ("/league/user/alice", "/league/bot/simple", "/league/bot/alicebot", "/league/"):
        status, headers, body = server.request("GET", path)
        text = body.decode()
        assert status == 200 and evil not in text and "<x>" not in text, path
        assert "script-src 'self'" in headers["content-security-policy"]
    text = server.request("GET", "/league/bot/simple")[2].decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "/view?run=r000%22%3E%3Cx%3E&amp;game=3" in text  # the game link, its parameters escaped


@pytest.mark.parametrize("raw", ["%C2%B2", "%D9%A1", "%EF%BC%91", "1%C2%B2", "+1", "%201", "1234567890"])
def test_a_version_number_is_ascii_digits_and_anything_else_is_one_400_line(site, raw):
    """str.isdigit() passed a superscript two (which int() refuses: a 500) and Arabic-Indic or full-width
    digits (which int() reads: version 1 by another name); a version is ASCII digits, at most nine."""
    server, tokens, _ = site
    status, _, body = server.request("GET", f"/api/bots/simple/source?version={raw}", token=tokens["olga"])
    assert status == 400 and "not a number" in one_line_error(status, body), (status, body)
    assert server.request("GET", "/api/bots/simple/source?version=1", token=tokens["olga"])[0] == 200
