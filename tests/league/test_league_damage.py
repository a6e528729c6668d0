"""A damaged ``league.db``: refused by ``arena league serve`` before it serves anything, a 503 (never a 500 or a
crash loop) when the damage comes while it serves, and a backup taken while it runs that restores the league.

Each kind of damage is done to a copy of one real league folder, as a full disk, a bad copy or a failing drive
would: emptied, cut in half, its header overwritten, one byte of a row flipped, another file in its place, a
schema version from elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from arena.league.config import load_league_config
from arena.league.core import token_hash
from arena.league.db import LeagueError
from tests.league.server import ARENA, ROOT, Server, add_user, arena, make_league, wait_for


def _empty(db: Path) -> None:
    db.write_bytes(b"")


def _half(db: Path) -> None:
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 2)


def _header(db: Path) -> None:
    with open(db, "r+b") as f:
        f.write(b"\x00garbage header\x00")


def _flipped(db: Path) -> None:
    data = bytearray(db.read_bytes())
    at = data.index(b"alice")  # one copy of the name (the table's row or the index's entry), not the other
    data[at] ^= 0x20  # 'a' -> 'A'
    db.write_bytes(bytes(data))


def _not_sqlite(db: Path) -> None:
    db.write_text("games_per_pairing = 20\n" * 100)


def _schema(version: int):
    def damage(db: Path) -> None:
        c = sqlite3.connect(db)
        c.execute(f"PRAGMA user_version = {version}")
        c.close()

    return damage


DAMAGE = {
    "empty": (_empty, "empty (0 bytes)"),
    "half": (_half, ("damaged", "integrity check")),
    "header": (_header, "not an SQLite database"),
    "flipped": (_flipped, "integrity check"),
    "not-sqlite": (_not_sqlite, "not an SQLite database"),
    "newer-schema": (_schema(99), "schema version 99"),
    "no-schema": (_schema(0), "schema version 0"),
}


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    base = tmp_path_factory.mktemp("damage")
    folder = make_league(base / "lg")
    token = add_user(folder, "alice")
    return base, folder, token


def test_serve_refuses_each_kind_of_damage_in_one_line_naming_the_file_and_the_fix(league):
    base, folder, _ = league
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = {}
    for kind, (damage, _) in DAMAGE.items():
        copy = base / f"copy-{kind}"
        shutil.copytree(folder, copy)
        damage(copy / "league.db")
        procs[kind] = subprocess.Popen(
            [*ARENA, "league", "serve", str(copy), "--port", "0", "--no-play"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    try:
        answers = {kind: proc.communicate(timeout=120)[1] for kind, proc in procs.items()}
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
    for kind, proc in procs.items():
        err = answers[kind]
        lines = err.strip().splitlines()
        assert proc.returncode == 2, (kind, err[-500:])
        assert len(lines) == 1 and lines[0].startswith("error: "), (kind, err)
        assert str(base / f"copy-{kind}" / "league.db") in lines[0] and "restore it from a backup" in lines[0], kind
        words = DAMAGE[kind][1]
        assert any(w in lines[0] for w in ((words,) if isinstance(words, str) else words)), (kind, lines[0])
        assert "Gin Arena at" not in err  # nothing was served


def test_damage_while_serving_is_a_503_and_one_line_then_a_backup_restores_the_league(league):
    from arena.league.db import check_database

    base, folder, token = league
    live = base / "live"
    shutil.copytree(folder, live)
    server = Server(live, play=True)
    try:
        assert server.get("/api/me", token=token)["user"] == "alice"
        backup = base / "live-backup.db"
        out = arena("league", "backup", str(live), str(backup))
        assert "checked" in out.stdout
        again = arena("league", "backup", str(live), str(backup), check=False)
        assert again.returncode == 2 and "already exists" in again.stderr
        check_database(backup)  # a sound, self-contained SQLite file
        assert not Path(f"{backup}-wal").exists()
        time.sleep(1.5)  # the scheduler is at work (its first pairing)
        # The drive fails under the running server.  The write-ahead log goes with it: a page of the log
        # shadows the same page of the file, so with page 1 in the log (after a write that grew the file)
        # a damaged header stayed unseen until a checkpoint wrote the log's copy over it.
        _header(live / "league.db")
        for log in ("league.db-wal", "league.db-shm"):
            (live / log).unlink(missing_ok=True)
        for path in ("/api/bots/random", "/api/leaderboard", "/api/progress", "/league/"):
            status, _, body = server.request("GET", path)
            assert status == 503, (path, status, body[:200])
            assert b"Traceback" not in body and len(body.decode().strip().splitlines()) == 1
        status, _, body = server.request("GET", "/api/me", headers={"Authorization": f"Bearer {token}"})
        assert status == 503 and "restore" in json.loads(body)["error"]
        wait_for(lambda: "league scheduler: the league database cannot be used" in server.log_text(), 30, "the log")
        time.sleep(3)
        log = server.log_text()
        assert "Traceback" not in log and "exited with code" not in log, log[-2000:]
        assert log.count("league scheduler: the league database cannot be used") == 1  # once, not once a second
    finally:
        server.stop()
    with pytest.raises(LeagueError, match="restore it from a backup"):
        check_database(live / "league.db")
    out = arena("league", "restore", str(live), str(backup))
    assert "restored" in out.stdout
    check_database(live / "league.db")
    c = sqlite3.connect(live / "league.db")
    assert c.execute("SELECT token_hash FROM users WHERE name = 'alice'").fetchone()[0] == token_hash(token)
    c.close()
    (base / "empty.db").write_bytes(b"")
    bad = arena("league", "restore", str(live), str(base / "empty.db"), check=False)
    assert bad.returncode == 2 and "empty" in bad.stderr  # a damaged backup is refused, the league kept
    check_database(live / "league.db")


def test_restore_is_refused_while_a_server_runs_on_the_folder_and_so_is_a_second_server(league):
    """A restore under a running server would be undone by it (its connections and scheduler go on with the
    file they have open): refused in one line naming the server's pid, exit 2, the database untouched.  A
    second server on the folder is refused too.  Once the server is gone, even by kill -9, the restore runs."""
    from tests.league.server import free_port

    base, folder, token = league
    live = base / "busy"
    shutil.copytree(folder, live)
    backup = base / "busy-backup.db"
    arena("league", "backup", str(live), str(backup))
    server = Server(live, play=False)
    try:
        status, body = server.post_json("/api/submit", {"name": "later", "source": "x = 1\n"}, token=token)
        assert status == 202, body  # something the backup does not have
        before = (live / "league.db").read_bytes()
        out = arena("league", "restore", str(live), str(backup), check=False)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr
        assert lines[0].startswith("error: ") and f"pid {server.proc.pid} (arena league serve)" in lines[0]
        assert "stop that server first" in lines[0]
        assert (live / "league.db").read_bytes() == before
        second = arena("league", "serve", str(live), "--port", str(free_port()), "--no-play", check=False)
        assert second.returncode == 2 and "one server per league folder" in second.stderr, second.stderr
        assert "Gin Arena at" not in second.stderr
        assert [v["bot"] for v in server.get("/api/users/alice")["versions"]] == ["later"]  # it serves on
        server.kill9()
    finally:
        server.stop()
    out = arena("league", "restore", str(live), str(backup))
    assert "restored" in out.stdout
    c = sqlite3.connect(live / "league.db")
    assert c.execute("SELECT COUNT(*) FROM bots WHERE name = 'later'").fetchone()[0] == 0
    c.close()


def test_a_bad_backup_is_refused_by_restore_in_one_line_naming_the_backup_and_the_league_is_untouched(league):
    base, folder, _ = league
    live = folder / "league.db"
    before = live.read_bytes()
    cases = {"missing": (None, "no such backup file")}
    cases.update({kind: (damage, words) for kind, (damage, words) in DAMAGE.items() if kind in ("empty", "header")})
    for kind, (damage, words) in cases.items():
        bak = base / f"backup-{kind}.db"
        if damage is not None:
            shutil.copy(live, bak)
            damage(bak)
        out = arena("league", "restore", str(folder), str(bak), check=False)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, (kind, out.stderr)
        assert lines[0].startswith(f"error: {bak}: ") and words in lines[0], (kind, lines[0])
        assert "restore it from a backup" not in lines[0]  # the backup is what is being restored
        assert "the league database" not in lines[0], lines[0]
    assert live.read_bytes() == before


@contextlib.contextmanager
def _read_only(path: Path):
    """``path`` made read-only for the server for the block: its mode, and for root (whom modes do not stop)
    the immutable flag; skipped where neither holds."""
    mode = path.stat().st_mode
    path.chmod(0o444)
    flagged = False
    try:
        if os.geteuid() == 0:
            flagged = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
            if not flagged:
                pytest.skip("root, and chattr +i is not allowed here: no way to make a file read-only")
        yield
    finally:
        if flagged:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def test_serve_refuses_a_read_only_database_in_one_line_that_says_so_and_not_to_restore(league):
    """A read-only league.db (a wrong owner or mode after a copy, a read-only mount) is not damaged: served, it
    answered every read and made every write (a login, an upload, a new user) a 503 saying to restore a
    backup, which would lose what the file holds.  The server refuses it at start, in one line saying what
    to fix."""
    base, folder, _ = league
    copy = base / "copy-read-only"
    shutil.copytree(folder, copy)
    db = copy / "league.db"
    with _read_only(db):
        proc = subprocess.run(
            [*ARENA, "league", "serve", str(copy), "--port", "0", "--no-play"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr[-500:]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(db) in lines[0], proc.stderr
    assert "read-only" in lines[0] and "writable" in lines[0] and "restore" not in lines[0], lines[0]
    assert "Gin Arena at" not in proc.stderr


def test_a_database_held_locked_by_another_process_is_a_503_that_says_busy_not_restore(league):
    """A write lock held past SQLite's busy timeout (an organizer's sqlite3 shell left in a transaction) is not
    damage: the write that waited for it was a 503 saying the organizer must restore a backup, and the log said
    to restore one too, which would throw away a sound database.  Both now say it is busy.  Neither says another
    process holds it: the holder may be the server itself (another request's write), which the 503 blamed on
    another process."""
    base, folder, token = league
    live = base / "locked"
    shutil.copytree(folder, live)
    config = load_league_config(live / "league.toml")  # the organizer's setting: wait 3 s for the lock, not 30
    (live / "league.toml").write_text(dataclasses.replace(config, busy_seconds=3).to_toml())
    server = Server(live, play=False)
    holder = sqlite3.connect(live / "league.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        status, _, body = server.request(
            "POST", "/api/users/alice/token", headers={"Authorization": f"Bearer {token}"}, timeout=90
        )
        waited = time.monotonic() - started
        holder.execute("ROLLBACK")
        assert 2.5 < waited < 25, waited  # it waited for the lock, as long as busy_seconds says, not SQLite's 30 s
        error = json.loads(body)["error"]
        assert status == 503 and "busy" in error and "restore" not in error, (status, error)
        assert "another process" not in error and "another write holds it locked" in error, error
        log = [line for line in server.log_text().splitlines() if "/api/users/alice/token" in line]
        assert len(log) == 1 and "busy" in log[0] and "restore" not in log[0], log
        assert "another process" not in log[0], log
        assert server.get("/api/me", token=token)["user"] == "alice"  # nothing changed: the old token works
    finally:
        holder.close()
        server.stop()
