"""Shared helpers of the league tests: a real ``arena league serve`` process on a real SQLite file.

(Not a test file: the ``tests/league/test_league_*.py`` files import these.)
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
SIMPLE_COPY = (ROOT / "bots" / "simple.py").read_text()


#: ``arena`` as a child process (``-m arena.cli.main`` would warn that runpy found the module imported).
ARENA = [sys.executable, "-c", "from arena.cli.main import app; app()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def arena(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([*ARENA, *args], capture_output=True, text=True, env=env, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"arena {' '.join(args)} failed: {out.stderr}")
    return out


def arena_here(*args: str) -> str:
    """``arena`` in this process (typer's runner): the same command, without a new interpreter's imports.
    For the set-up commands (init, add-user) that nearly every league test runs; the server, the
    scheduler and the commands a test is about run as processes of their own."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    out = CliRunner().invoke(app, list(args), catch_exceptions=False)
    if out.exit_code != 0:
        raise AssertionError(f"arena {' '.join(args)} failed: {out.output}")
    return out.stdout


def make_league(folder: Path, **settings: Any) -> Path:
    """``arena league init`` with a small league.toml (values as TOML literals via json)."""
    cfg = folder.parent / f"{folder.name}.toml"
    base = {"games_per_pairing": 20, "chunk_size": 10, "house_bots": ["random", "simple"], "check_games": 2}
    base.update(settings)
    cfg.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in base.items()))
    arena_here("league", "init", str(folder), "--config", str(cfg))
    return folder


def add_user(folder: Path, name: str, organizer: bool = False) -> str:
    token = arena_here("league", "add-user", str(folder), name, *(["--organizer"] if organizer else [])).strip()
    assert len(token) >= 40 and "\n" not in token
    return token


class Server:
    """``arena league serve`` in its own session (so a test can SIGKILL it like a crash).

    ``play``: run the scheduler (else ``--no-play``); ``play_page``: serve /play (``--play-page``)."""

    def __init__(
        self,
        folder: Path,
        *,
        play: bool = True,
        play_page: bool = False,
        workers: int | None = 1,
        extra: list[str] | None = None,
    ):
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder.parent / f"{folder.name}-server-{self.port}.log", "w")  # noqa: SIM115
        args = ["league", "serve", str(folder), "--port", str(self.port)]
        if workers is not None:
            args += ["--workers", str(workers)]
        if not play:
            args.append("--no-play")
        if play_page:
            args.append("--play-page")
        args += extra or []
        self.proc = subprocess.Popen(
            [*ARENA, *args],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                self.get("/api/leaderboard")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"the league server did not start: {self.log_text()}") from None
                time.sleep(0.3)

    def log_text(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()[-3000:]

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], bytes]:
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=h)
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(req, timeout=timeout) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def get(self, path: str, **kw: Any) -> Any:
        status, _, body = self.request("GET", path, **kw)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def post_json(self, path: str, obj: Any, **kw: Any) -> tuple[int, Any]:
        status, _, body = self.request(
            "POST", path, json.dumps(obj).encode(), headers={"Content-Type": "application/json"}, **kw
        )
        return status, json.loads(body)

    def kill9(self) -> None:
        """SIGKILL the server process alone (its scheduler child dies with it: PR_SET_PDEATHSIG)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


def wait_for(predicate, timeout: float, what: str, step: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def set_cookie(headers: dict[str, str], name: str) -> tuple[str, str]:
    """(value, the whole header) of the Set-Cookie header for cookie ``name``."""
    for key, value in headers.items():
        if key.lower() == "set-cookie" and value.startswith(name + "="):
            return value.split(";")[0].split("=", 1)[1], value
    raise AssertionError(f"no {name} cookie in {headers}")


def login(server: Server, token: str) -> tuple[str, str]:
    """(session cookie, CSRF token of the pages) after the login form."""
    status, headers, body = server.request("GET", "/league/login")
    nonce, _ = set_cookie(headers, "league_login_csrf")
    assert f"value='{nonce}'" in body.decode()
    status, headers, body = server.request(
        "POST",
        "/league/login",
        urlencode({"token": token, "csrf": nonce}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"league_login_csrf={nonce}"},
    )
    assert status == 303, body
    sid, raw = set_cookie(headers, "league_session")
    flags = raw.lower()
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    page = server.request("GET", "/league/submit", headers={"Cookie": f"league_session={sid}"})[2].decode()
    csrf = re.search(r"name=csrf value='([^']+)'", page).group(1)
    return sid, csrf
