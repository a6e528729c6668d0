"""Who may use a real league server, and what it costs them: revoking a user and rotating a token end their
sessions at once; the token reaches ``arena submit`` through ``ARENA_TOKEN`` or a file, not the process list;
refused uploads leave no file on the disk, and a byte quota bounds the ones accepted.

One ``arena league serve --no-play`` process on a real SQLite file for the whole file.
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.league.server import ARENA, ROOT, SIMPLE_COPY, Server, add_user, arena, make_league, wait_for

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = make_league(
        tmp_path_factory.mktemp("access") / "lg",
        submissions_per_hour=3,
        active_bots_per_user=2,
        max_file_bytes=60_000,
        bytes_per_user=30_000,
    )
    tokens = {"olga": add_user(folder, "olga", organizer=True)}
    server = Server(folder, play=False)
    for name in ("alice", "bob", "carl", "dora", "erin", "finn"):  # through the API: one process fewer each
        status, body = server.post_json("/api/users", {"name": name}, token=tokens["olga"])
        assert status == 201
        tokens[name] = body["token"]
    yield server, tokens, folder
    server.stop()


def login(server: Server, token: str) -> str:
    """A session cookie from the login form."""
    _, headers, _ = server.request("GET", "/league/login")
    nonce = re.search(r"league_login_csrf=([^;]+)", headers["set-cookie"]).group(1)
    status, headers, _ = server.request(
        "POST",
        "/league/login",
        urlencode({"token": token, "csrf": nonce}).encode(),
        headers={**FORM, "Cookie": f"league_login_csrf={nonce}"},
    )
    assert status == 303
    return re.search(r"league_session=([^;]+)", headers["set-cookie"]).group(1)


def me(server: Server, *, token: str | None = None, cookie: str | None = None) -> int:
    headers = {"Cookie": f"league_session={cookie}"} if cookie else {}
    return server.request("GET", "/api/me", token=token, headers=headers)[0]


def send(server: Server, token: str, name: str, source: str = SIMPLE_COPY) -> tuple[int, dict]:
    return server.post_json("/api/submit", {"name": name, "source": source}, token=token)


def test_an_organizer_revokes_a_user_whose_token_and_sessions_end_at_once(site):
    server, tokens, folder = site
    cookie = login(server, tokens["alice"])
    assert me(server, cookie=cookie) == 200
    assert send(server, tokens["alice"], "alicebot")[0] == 202
    status, body = server.post_json("/api/users/alice/revoke", {}, token=tokens["bob"])
    assert status == 403  # a participant may not
    status, body = server.post_json("/api/users/alice/revoke", {}, token=tokens["olga"])
    assert status == 200 and body == {"user": "alice", "revoked": True, "withdrawn": ["alicebot"]}
    assert me(server, token=tokens["alice"]) == 401 and me(server, cookie=cookie) == 401
    status, _ = send(server, tokens["alice"], "alicebot")
    assert status == 401
    info = server.get("/api/bots/alicebot")  # withdrawn, its versions (and games) kept
    assert info["withdrawn"] and [v["status"] for v in info["versions"]] == ["withdrawn"]
    assert server.get("/api/users/alice")["revoked"] is True
    status, body = server.post_json("/api/users", {"name": "alice"}, token=tokens["olga"])
    assert status == 409  # the name stays taken: nobody can become "alice" now
    status, body = server.post_json("/api/users/alice/revoke", {}, token=tokens["olga"])
    assert status == 409


def test_revoke_user_and_rotate_token_on_the_command_line(site):
    server, tokens, folder = site
    cookie = login(server, tokens["bob"])
    out = arena("league", "rotate-token", str(folder), "bob")
    new = out.stdout.strip()
    assert len(new) >= 40 and new != tokens["bob"]
    assert me(server, token=tokens["bob"]) == 401 and me(server, cookie=cookie) == 401
    assert me(server, token=new) == 200
    tokens["bob"] = new
    # Through the API: an organizer for anyone, a participant for themself only.
    status, body = server.post_json("/api/users/carl/token", {}, token=tokens["bob"])
    assert status == 403
    status, body = server.post_json("/api/users/bob/token", {}, token=tokens["bob"])
    assert status == 200 and me(server, token=tokens["bob"]) == 401 and me(server, token=body["token"]) == 200
    tokens["bob"] = body["token"]
    cookie = login(server, tokens["carl"])
    out = arena("league", "revoke-user", str(folder), "carl")
    assert "revoked" in out.stdout
    assert me(server, token=tokens["carl"]) == 401 and me(server, cookie=cookie) == 401
    bad = arena("league", "revoke-user", str(folder), "nobody", check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: no user named 'nobody'")


def _submit_cli(server: Server, file: Path, *args: str, env: dict[str, str] | None = None):
    e = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
    e.update({"PYTHONPATH": str(ROOT), **(env or {})})
    return subprocess.run(
        [*ARENA, "submit", str(file), "--to", server.url, *args], capture_output=True, text=True, env=e, timeout=120
    )


def test_arena_submit_takes_the_token_from_arena_token_or_a_file_and_warns_about_token(site, tmp_path):
    server, tokens, _ = site
    bot = tmp_path / "dorabot.py"
    bot.write_text(SIMPLE_COPY)
    out = _submit_cli(server, bot, env={"ARENA_TOKEN": tokens["dora"]})
    assert out.returncode == 0 and "submitted dorabot version 1" in out.stdout and "warning" not in out.stderr
    secret = tmp_path / "token"
    secret.write_text(tokens["dora"] + "\n")
    secret.chmod(0o600)
    out = _submit_cli(server, bot, "--token-file", str(secret))
    assert out.returncode == 0 and "version 2" in out.stdout and out.stderr == ""
    secret.chmod(0o644)
    out = _submit_cli(server, bot, "--token-file", str(secret), "--name", "dorabot")
    assert out.returncode == 0 and "can be read by other users" in out.stderr
    out = _submit_cli(server, bot, "--token", tokens["erin"], "--name", "erinbot")
    assert out.returncode == 0 and "process list" in out.stderr and "shell history" in out.stderr
    out = _submit_cli(server, bot)
    assert out.returncode == 2 and "ARENA_TOKEN" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = _submit_cli(server, bot, "--token-file", str(tmp_path / "missing"))
    assert out.returncode == 2 and "cannot read the token file" in out.stderr


def test_arena_submit_takes_the_league_address_the_server_prints(site, tmp_path):
    """``arena league serve`` prints its pages' address (``http://HOST:PORT/league/``): ``arena submit --to``
    takes it as the league's, and an address that is no league gets a hint, not a bare 'Not Found'."""
    server, tokens, _ = site
    bot = tmp_path / "olgaurl.py"
    bot.write_text(SIMPLE_COPY + "# by its page address\n")
    e = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
    e.update({"PYTHONPATH": str(ROOT), "ARENA_TOKEN": tokens["olga"]})

    def submit_to(url: str) -> subprocess.CompletedProcess:
        return subprocess.run([*ARENA, "submit", str(bot), "--to", url], capture_output=True, text=True, env=e)

    out = submit_to(server.url + "/league/")
    assert out.returncode == 0 and "submitted olgaurl version 1" in out.stdout, out.stderr
    # the page it points at is under the server's address once, not under the address given ("/league/league/")
    page = out.stdout.split("follow it at ")[1].strip()
    assert page == f"{server.url}/league/user/olga", out.stdout
    assert urllib.request.urlopen(page, timeout=10).status == 200
    out = submit_to(server.url + "/nothing/here")
    assert out.returncode == 2 and "(404)" in out.stderr and "a league server (http://HOST:PORT)?" in out.stderr


def bot_files(folder: Path) -> tuple[int, int]:
    files = [p for p in (folder / "bots").rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def test_refused_uploads_leave_no_file_and_a_quota_bounds_each_user(site):
    server, tokens, folder = site
    finn = tokens["finn"]
    big = "# padding\n" * 2500 + SIMPLE_COPY  # ~30 kB: within the file limit, past the quota beside two others
    assert send(server, tokens["olga"], "olgabot", SIMPLE_COPY + "# olga\n")[0] == 202
    assert send(server, finn, "finn1", SIMPLE_COPY + "# 1\n")[0] == 202
    assert send(server, finn, "finn2", SIMPLE_COPY + "# 2\n")[0] == 202
    before = bot_files(folder)
    for name, status in (("olgabot", 403), ("finn3", 409)):  # another user's bot; a third active bot
        got, body = send(server, finn, name, SIMPLE_COPY + f"# refused {name}\n")
        assert got == status, (name, got, body)
    assert bot_files(folder) == before  # the refused files never reached the disk
    got, body = send(server, finn, "finn2", big)
    assert got == 413 and "quota" in body["error"], body
    assert send(server, finn, "finn2", SIMPLE_COPY + "# 3\n")[0] == 202  # the third submission of the hour
    after_ok = bot_files(folder)
    assert after_ok[0] == before[0] + 1
    for i in range(3):
        got, body = send(server, finn, "finn2", SIMPLE_COPY + f"# {i} past the limit\n")
        assert got == 429, body
    assert bot_files(folder) == after_ok  # no file and no byte from any refused upload
    status, body = send(server, tokens["olga"], "olgabot", big)  # organizers have no quota
    assert status == 202
    assert len(server.get("/api/users/finn")["versions"]) == 3


def test_a_revoked_users_version_left_checking_is_never_checked_or_played_by_the_server(tmp_path):
    """A submission that slipped past a revoke (the state an older server's race left: the user revoked, their
    bot back in the league with a version 'checking') is withdrawn by the server's scheduler; the house
    bots play on without it."""
    import sqlite3

    from arena.league.core import League

    folder = make_league(tmp_path / "lg", extra_rounds=0)
    league = League(folder)
    conn = league.db()
    dave = League.user_by_token(conn, league.add_user(conn, "dave"))
    assert dave is not None
    league.submit(conn, dave, "davebot", source=SIMPLE_COPY.encode())
    conn.execute("UPDATE users SET revoked = '2026-12-06T00:00:00+00:00' WHERE name = 'dave'")
    conn.close()
    server = Server(folder, play=True)
    try:
        wait_for(
            lambda: (p := server.get("/api/progress"))["done"] >= 1 and not p["queued"] and not p["running"],
            120,
            "the house pairing to be played",
        )
        info = server.get("/api/bots/davebot")
        assert info["withdrawn"] and [v["status"] for v in info["versions"]] == ["withdrawn"], info
        assert "davebot" not in {e["bot"] for e in server.get("/api/leaderboard")}
    finally:
        server.stop()
    with sqlite3.connect(folder / "league.db") as db:
        played = db.execute(
            "SELECT COUNT(*) FROM pairings p JOIN versions v ON v.id IN (p.a, p.b) WHERE v.run_name = 'davebot-v1'"
        ).fetchone()[0]
    assert played == 0
    assert "checking davebot-v1" not in Path(server.log.name).read_text()


@pytest.mark.parametrize("code", [302, 307])
def test_arena_submit_sends_no_token_through_a_redirect_and_says_where_it_pointed(tmp_path, code):
    """urllib follows a 301, 302 or 303 to any host, as a GET that still carries ``Authorization``: a server
    that answered the upload with a redirect was handed the user's token, and ``arena submit`` printed
    "submitted ... version None".  Every redirect is now refused, in one line, and nothing reaches its target."""
    import http.server
    import threading

    seen: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(f"{self.command} {self.path} {self.headers.get('Authorization')}")
            body = b'{"ok": true}'  # a JSON answer, but not a league's
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            self.do_GET()

        def log_message(self, *args: object) -> None:
            pass

    recorder = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    target = f"http://localhost:{recorder.server_address[1]}/steal"

    class Redirector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(code)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    redirector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirector)
    for s in (recorder, redirector):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        bot = tmp_path / "mine.py"
        bot.write_text(SIMPLE_COPY)
        e = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
        e.update({"PYTHONPATH": str(ROOT), "ARENA_TOKEN": "SECRET-TOKEN-123"})
        url = f"http://127.0.0.1:{redirector.server_address[1]}"
        out = subprocess.run([*ARENA, "submit", str(bot), "--to", url], capture_output=True, text=True, env=e)
        assert out.returncode == 2 and out.stdout == "", (out.stdout, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and f"redirect ({code}) to {target}" in out.stderr
        assert seen == []  # neither the token nor the bot went to the redirect's target
        # A server that answers 200 with JSON that is not a league's answer is not read as one.
        out = subprocess.run(
            [*ARENA, "submit", str(bot), "--to", f"http://127.0.0.1:{recorder.server_address[1]}"],
            capture_output=True,
            text=True,
            env=e,
        )
        assert out.returncode == 2 and "did not answer like a league server" in out.stderr, (out.stdout, out.stderr)
    finally:
        for s in (recorder, redirector):
            s.shutdown()
