"""Uploads that are not Python bot files: EAAI-kit players (a jar, or a zip of a class folder) and
trained policies (a module with act(), an ONNX model, MLP weights).

Against the real ``arena league serve`` process on a real SQLite file.  The EAAI kit is never
used: ``tests/bots/eaai/kit`` is the stand-in written for the tests, named to the league with
``eaai_kit`` in its league.toml, as an organizer names the real one.
"""

from __future__ import annotations

import base64
import io
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.league.config import LeagueConfig
from arena.league.core import League, User
from arena.league.db import LeagueError, _statements, check_database, connect, schema_version
from arena.league.eaai_upload import BLOCK, MAX_FOLDERS, STAGING, check_eaai_upload
from arena.league.migrations import MIGRATIONS
from tests.eaai_kit import build_kit, zip_bytes
from tests.league.server import Server, add_user, arena, make_league, wait_for
from tests.policy_files import AGENT as POLICY

#: Not a GinRummyPlayer; and a player whose class never finishes loading.
ATTACKERS = {
    "players/NotAPlayer.java": "package players;\npublic class NotAPlayer { public NotAPlayer() {} }\n",
    "players/HangPlayer.java": (
        "package players;\npublic class HangPlayer extends KitSimplePlayer {\n"
        "    static { try { Thread.sleep(3_600_000L); } catch (InterruptedException e) { } }\n}\n"
    ),
}


# --- the schema step that lets versions be EAAI-kit players and policies --------------------------------


def _version_2_league(path: Path) -> None:
    """A league.db as the schema of the two first steps made it, with a user, bots, versions and pairings."""
    raw = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:2]:
        for statement in _statements(step):
            raw.execute(statement)
    raw.execute("PRAGMA user_version = 2")
    raw.execute("INSERT INTO users(name, token_hash, organizer, created) VALUES ('ann', 'h1', 0, 't')")
    for i, (name, owner) in enumerate((("simple", None), ("annbot", 1)), start=1):
        raw.execute("INSERT INTO bots(name, owner_id, created) VALUES (?, ?, 't')", (name, owner))
        raw.execute(
            "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, reason, submitted_by,"
            " created, created_ts) VALUES (?, 1, ?, ?, ?, ?, ?, 'rated', ?, ?, 't', ?)",
            (i, "builtin" if owner is None else "file", name, f"{name}-v1", "ab" * i, 10 * i, f"r{i}", owner, 1.5 * i),
        )
        raw.execute("UPDATE bots SET current_version = ? WHERE id = ?", (i, i))
    raw.execute(
        "INSERT INTO pairings(a, b, round, priority, state, target, created) VALUES (1, 2, 0, 50, 'done', 20, 't')"
    )
    raw.close()


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {
        t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1")]
        for t in ("users", "bots", "versions", "pairings")
    }  # noqa: S608


def test_the_third_schema_step_rebuilds_versions_and_keeps_every_row_of_a_version_2_league(tmp_path):
    db = tmp_path / "league.db"
    _version_2_league(db)
    raw = sqlite3.connect(db)
    before = _dump(raw)
    raw.close()
    conn = connect(db)  # migrates
    assert schema_version(conn) == len(MIGRATIONS) >= 3
    assert _dump(conn) == before
    assert (
        conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        and conn.execute("PRAGMA foreign_key_check").fetchall() == []
    )
    indexes = {
        r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'versions'")
    }
    assert {"versions_by_status", "versions_by_submitter"} <= indexes
    # the other tables still point to versions (a rename of the old table would have moved their references)
    assert "REFERENCES versions(id)" in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'bots'").fetchone()[0]
    insert = (
        "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, created, created_ts)"
        " VALUES (2, ?, ?, 'x', ?, '', 0, 'checking', 't', 0)"
    )
    conn.execute(insert, (2, "eaai", "annbot-v2"))
    conn.execute(insert, (3, "policy", "annbot-v3"))
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(insert, (4, "wasm", "annbot-v4"))
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        conn.execute("UPDATE bots SET current_version = 99 WHERE id = 1")
    conn.close()
    check_database(db)


# --- the stand-in kit and the players, compiled once ----------------------------------------------------


def _lying_bomb() -> bytes:
    """A zip whose one entry says it holds 100 bytes and unpacks to 4 MB of zeros (both headers patched)."""
    data = bytearray(zip_bytes({"players/KitSimplePlayer.class": bytes(4 << 20)}))
    real = (4 << 20).to_bytes(4, "little")
    fake = (100).to_bytes(4, "little")
    assert data.count(real) == 2  # the local header's and the central directory's uncompressed size
    return bytes(data.replace(real, fake))


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    return build_kit(tmp_path_factory.mktemp("uploads"), ATTACKERS)


def _user(league: League, conn: sqlite3.Connection, name: str) -> User:
    league.add_user(conn, name)
    return User(conn.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()[0], name, False)


def test_an_archive_is_refused_before_anything_is_stored_and_counts_against_the_quota(tmp_path, uploads):
    plain = League.init(tmp_path / "nokit", LeagueConfig(house_bots=("random",)))
    conn = plain.db()
    ann = _user(plain, conn, "ann")
    with pytest.raises(LeagueError, match="has not set eaai_kit"):
        plain.submit(conn, ann, "p", archive=uploads["jar"], class_name="players.KitSimplePlayer")
    conn.close()
    gone = League.init(tmp_path / "gone", LeagueConfig(house_bots=("random",), eaai_kit="kit-not-here"))
    conn = gone.db()
    with pytest.raises(LeagueError, match="EAAI kit .* is missing on the server") as err:
        gone.submit(conn, _user(gone, conn, "ann"), "p", archive=uploads["jar"], class_name="players.KitSimplePlayer")
    assert err.value.status == 503
    conn.close()
    jar = uploads["jar"]
    size = check_eaai_upload(jar, "players.KitSimplePlayer", 10_000_000).unpacked  # its files and folders on disk
    lg = League.init(
        tmp_path / "lg",
        LeagueConfig(house_bots=("random",), eaai_kit=str(uploads["kit"]), bytes_per_user=size + 500),
    )
    conn = lg.db()
    bob = _user(lg, conn, "bob")
    with pytest.raises(LeagueError, match="cannot be unpacked"):
        lg.submit(conn, bob, "bomb", archive=_lying_bomb(), class_name="players.KitSimplePlayer")
    with pytest.raises(LeagueError, match="needs its class name"):
        lg.submit(conn, bob, "p", archive=jar)
    with pytest.raises(LeagueError, match="goes with"):
        lg.submit(conn, bob, "p", source=b"x = 1\n", class_name="players.KitSimplePlayer")
    assert conn.execute("SELECT COUNT(*) FROM versions WHERE kind = 'eaai'").fetchone()[0] == 0
    assert not [p for p in (lg.dir / "bots").rglob("*")]  # nothing unpacked, no empty folder left
    out = lg.submit(conn, bob, "kit-a", archive=jar, class_name="players.KitSimplePlayer")
    v = conn.execute("SELECT kind, spec, size FROM versions WHERE id = ?", (out["id"],)).fetchone()
    assert v["kind"] == "eaai" and v["spec"].endswith(":players.KitSimplePlayer") and v["size"] == size > len(jar)
    assert (lg.dir / v["spec"].rpartition(":")[0] / "players" / "KitSimplePlayer.class").is_file()
    lg.submit(conn, bob, "kit-a", archive=jar, class_name="players.KitSimplePlayer")  # the same bytes: no more quota
    with pytest.raises(LeagueError, match="quota reached: your uploads take") as err:
        lg.submit(conn, bob, "kit-b", archive=uploads["zip"], class_name="players.KitSimplePlayer")
    assert err.value.status == 413
    conn.close()


@pytest.fixture(scope="module")
def kitless(tmp_path_factory):
    """A server (no scheduler) whose league takes EAAI-kit players; its kit is an empty folder, never run:
    the archives sent to it are refused before anything plays them."""
    root = tmp_path_factory.mktemp("kitless")
    (root / "kit").mkdir()
    folder = make_league(root / "lg", eaai_kit=str(root / "kit"), submissions_per_hour=50)
    token = add_user(folder, "ann")
    server = Server(folder, play=False)
    yield server, token, folder
    server.stop()


def _patched(flag: int = 0, method: int | None = None) -> bytes:
    """A zip of players/P.class whose headers (local and central) say it is encrypted (``flag`` 1) or compressed
    with ``method`` (9: deflate64), neither of which Python's zipfile can read."""
    data = bytearray(zip_bytes({"players/P.class": b"\xca\xfe\xba\xbe" * 50}))
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 6] |= flag
    data[central + 8] |= flag
    if method is not None:
        data[local + 8 : local + 10] = data[central + 10 : central + 12] = method.to_bytes(2, "little")
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (_patched(method=9), "'players/P.class' is compressed with method 9"),
        (_patched(flag=1), "'players/P.class' is encrypted"),
        (zip_bytes({"players/P.class": b"x", "com": b"file", "com/x.class": b"x"}), "'com' is a file and also"),
        (zip_bytes({"players/P.class": b"x", "com/": b"", "com/x/": b"", "com/x": b"x"}), "'com/x' is a file and"),
    ],
    ids=["deflate64", "encrypted", "file-then-folder", "folder-then-file"],
)
def test_an_archive_that_cannot_be_unpacked_is_a_400_naming_the_entry_and_no_server_path(kitless, data, why):
    """Entries the server cannot read (deflate64, encrypted) were a 500 with a traceback; a name that is a file
    and a folder was a 400 quoting the disk's error, with the server's upload folder in it."""
    server, token, folder = kitless
    got, ans = _post_archive(server, token, "annbot", data, "players.P")
    assert got == 400 and why in ans["error"] and "\n" not in ans["error"], ans
    assert str(folder.parent) not in ans["error"] and "upload-" not in ans["error"], ans
    assert not [p for p in (folder / "bots").rglob("*") if p.is_file()]


def _damaged(kind: str) -> bytes:
    """A zip holding players/P.class, damaged as a fuzzer found Python's zipfile failing on it: a central header
    asking for zip version 25.5, an LZMA stream of garbage, an end record that puts every entry before the
    archive's first byte, a local header whose copy of a UTF-8 name is not UTF-8."""
    entries = {"players/P.class": b"\xca\xfe\xba\xbe" * 64}
    if kind == "local-name":
        entries["players/\u00e9.txt"] = b"x"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_LZMA if kind == "lzma" else zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    d = bytearray(buf.getvalue())
    if kind == "version":
        d[d.find(b"PK\x01\x02") + 6] = 255
    elif kind == "lzma":
        start = 30 + len("players/P.class") + 9  # past the local header and the LZMA properties
        d[start : start + 5] = bytes(b ^ 0x5A for b in d[start : start + 5])
    elif kind == "offset":
        end = d.rfind(b"PK\x05\x06")
        d[end + 16 : end + 20] = (int.from_bytes(d[end + 16 : end + 20], "little") + 4096).to_bytes(4, "little")
    else:
        d[d.find("players/\u00e9.txt".encode()) + 8] = 0xFF
    return bytes(d)


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("version", "not a jar or a zip archive the server can read (zip file version 25.5)"),
        ("lzma", "cannot be unpacked: its entry 'players/P.class' is damaged"),
        ("offset", "cannot be unpacked: its entry 'players/P.class' is damaged"),
        ("local-name", "cannot be unpacked: its entry 'players/\u00e9.txt' is damaged"),
    ],
    ids=["zip-version", "lzma-garbage", "entry-before-start", "local-name-not-utf8"],
)
def test_a_damaged_archive_is_a_400_naming_its_entry_not_a_500(kitless, kind, why):
    """zipfile raises more than BadZipFile on a damaged archive (NotImplementedError, LZMAError, ValueError,
    UnicodeDecodeError): each was a 500 'internal error' with a traceback in the log."""
    server, token, folder = kitless
    got, ans = _post_archive(server, token, "annbot", _damaged(kind), "players.P")
    assert got == 400 and why in ans["error"] and "\n" not in ans["error"], ans
    assert str(folder.parent) not in ans["error"] and "upload-" not in ans["error"], ans
    assert not [p for p in (folder / "bots").rglob("*") if p.is_file()]


def _peak_mb(pid: int) -> int:
    return (
        int(next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM")).split()[1])
        >> 10
    )


def test_an_entry_nested_thousands_of_folders_deep_is_refused_at_once_without_the_servers_memory_growing(kitless):
    """A 48 KB upload whose entry is 12,000 folders deep made the check build every prefix of its path (quadratic:
    700 MB and seconds in the server for one entry; a 2 MB archive of 64 KB names would take the machine's memory)."""
    server, token, folder = kitless
    Path(f"/proc/{server.proc.pid}/clear_refs").write_text("5")  # the peak, from now
    before = _peak_mb(server.proc.pid)
    got, ans = _post_archive(
        server, token, "annbot", zip_bytes({"players/P.class": b"x", "a/" * 12_000 + "x": b"y"}), "players.P"
    )
    assert _peak_mb(server.proc.pid) - before < 150
    assert got == 400 and "nests 12000 folders deep; the limit is" in ans["error"] and "\n" not in ans["error"], ans
    assert not [p for p in (folder / "bots").rglob("*") if p.is_file()]


def test_the_same_archive_is_one_tree_on_disk_and_plays_any_class_in_it_from_that_class_folder(tmp_path):
    """An upload was unpacked from the folder that holds its class alone, into a folder named by its hash: the same
    bytes sent again with a class under another folder reused that folder, which lacked the class (whoever sent
    the bytes first decided what a later sender's player would be).  A folder per class's root would fix that but
    put the same bytes on disk again while the quota, which counts the same bytes once, saw nothing.  The whole
    archive is unpacked once; each version plays from the folder in it that holds its class."""
    (tmp_path / "kit").mkdir()
    lg = League.init(tmp_path / "lg", LeagueConfig(house_bots=("random",), eaai_kit=str(tmp_path / "kit")))
    conn = lg.db()
    data = zip_bytes({"a/players/P.class": b"\xca\xfe\xba\xbeP", "players/Q.class": b"\xca\xfe\xba\xbeQ"})
    ann, bob = _user(lg, conn, "ann"), _user(lg, conn, "bob")
    for user, bot, cls in ((ann, "annp", "players.P"), (ann, "annq", "players.Q"), (bob, "bobq", "players.Q")):
        out = lg.submit(conn, user, bot, archive=data, class_name=cls)
        spec = conn.execute("SELECT spec FROM versions WHERE id = ?", (out["id"],)).fetchone()[0]
        assert spec.endswith(f":{cls}")
        name = cls.replace(".", "/") + ".class"
        assert (lg.dir / spec.rpartition(":")[0] / name).read_bytes() == b"\xca\xfe\xba\xbe" + name[-7:-6].encode()
    on_disk = sorted(p.relative_to(lg.dir).as_posix().split("/", 3)[-1] for p in (lg.dir / "bots").rglob("*.class"))
    assert on_disk == ["a/players/P.class", "players/Q.class"]
    conn.close()


def _damaged_npz(kind: str) -> bytes:
    """An MLP .npz damaged as a fuzzer found numpy and zipfile failing on it past the errors the check caught: an
    unknown compression method, an encrypted entry, a deflate stream of garbage, an .npy header cut mid-tuple."""
    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
    from arena.engine.mlp import random_mlp, save_mlp

    saved = io.BytesIO()
    save_mlp(saved, random_mlp(OBS_SIZE, NUM_ACTIONS, (8,), seed=1))
    extra = {}
    if kind == "npy-header":
        head = b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,"
        head += b" " * (63 - (10 + len(head)) % 64) + b"\n"
        extra["b9.npy"] = b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + bytes(12)
    out = io.BytesIO()
    with zipfile.ZipFile(saved) as zi, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            zo.writestr(info.filename, zi.read(info), zipfile.ZIP_DEFLATED if kind == "deflate" else zipfile.ZIP_STORED)
        for name, data in extra.items():
            zo.writestr(name, data, zipfile.ZIP_STORED)
    d = bytearray(out.getvalue())
    local, central = d.find(b"PK\x03\x04"), d.find(b"PK\x01\x02")
    if kind == "method":
        d[local + 8 : local + 10] = d[central + 10 : central + 12] = (99).to_bytes(2, "little")
    elif kind == "encrypted":
        d[local + 6] |= 1
        d[central + 8] |= 1
    elif kind == "deflate":
        start = local + 30 + int.from_bytes(d[local + 26 : local + 28], "little")
        d[start : start + 2] = b"\xff\xff"
    return bytes(d)


@pytest.mark.parametrize("kind", ["method", "encrypted", "deflate", "npy-header"])
def test_a_damaged_npz_policy_is_a_400_not_a_500(kitless, kind):
    """zipfile and numpy raise more than the check of an .npz caught (NotImplementedError, RuntimeError,
    zlib.error, tokenize.TokenError): each was a 500 'internal error' with a traceback in the log."""
    server, token, folder = kitless
    got, ans = _post_policy(server, token, "annpol", _damaged_npz(kind), "npz")
    assert got == 400 and "not an .npz file of MLP weights" in ans["error"] and "\n" not in ans["error"], ans
    assert not [p for p in (folder / "bots").rglob("*") if p.is_file()]


# --- through the real server: refused at once, refused by the check, or playing on the board -------------

AGENT = POLICY.encode()


def _post_archive(server: Server, token: str, name: str, data: bytes, cls: str) -> tuple[int, dict]:
    body = {"name": name, "archive": base64.b64encode(data).decode(), "class": cls}
    return server.post_json("/api/submit", body, token=token)


def _post_policy(server: Server, token: str, name: str, data: bytes, form: str) -> tuple[int, dict]:
    body = {"name": name, "policy": base64.b64encode(data).decode(), "format": form}
    return server.post_json("/api/submit", body, token=token)


def _submit_cli(server: Server, token: str, *args: str) -> str:
    env = {"ARENA_TOKEN": token}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return arena("submit", *args, "--to", server.url).stdout
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


@pytest.fixture(scope="module")
def site(uploads):
    """One league server; every upload is sent at once, so their checks and games overlap."""
    from arena.botkit.policy import mlp_onnx
    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
    from arena.engine.mlp import random_mlp, save_mlp

    users = ("alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank")
    folder = make_league(
        uploads["root"] / "league",
        games_per_pairing=2,
        chunk_size=2,
        check_games=2,
        check_seconds=150,
        check_slots=4,
        house_bots=["random"],
        eaai_kit=str(uploads["kit"]),
        max_archive_bytes=200_000,
    )
    folder.chmod(0o755)
    tokens = {u: add_user(folder, u) for u in users}
    server = Server(folder)
    files = uploads["root"] / "files"
    files.mkdir()
    (files / "kitsimple.jar").write_bytes(uploads["jar"])
    mlp = random_mlp(OBS_SIZE, NUM_ACTIONS, (16,), seed=3)
    (files / "model.onnx").write_bytes(mlp_onnx(mlp))
    npz = io.BytesIO()
    save_mlp(npz, mlp)
    sent = {
        "kitjar": _submit_cli(
            server,
            tokens["alice"],
            str(files / "kitsimple.jar"),
            "--class",
            "players.KitSimplePlayer",
            "--name",
            "kitjar",
        ),
        "kitzip": _post_archive(server, tokens["bob"], "kitzip", uploads["zip"], "players.KitSimplePlayer"),
        "notplayer": _post_archive(server, tokens["carol"], "notplayer", uploads["jar"], "players.NotAPlayer"),
        "hangs": _post_archive(server, tokens["dave"], "hangs", uploads["jar"], "players.HangPlayer"),
        "polpy": _post_policy(server, tokens["erin"], "polpy", AGENT, "py"),
        "polonnx": _submit_cli(server, tokens["frank"], f"policy:{files / 'model.onnx'}", "--name", "polonnx"),
        "polnpz": _post_policy(server, tokens["gina"], "polnpz", npz.getvalue(), "npz"),
        # a policy that reads the league's database at import: the wall shows it no such file
        "snoop": _post_policy(
            server,
            tokens["hank"],
            "snoop",
            b"print(open(%r, 'rb').read(64))\n" % str(folder / "league.db") + AGENT,
            "py",
        ),
    }
    try:
        yield server, tokens, folder, sent
    finally:
        server.stop()


def _versions(server: Server) -> dict[str, dict]:
    out = {}
    for user in ("alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank"):
        for v in server.get(f"/api/users/{user}")["versions"]:
            out[v["bot"]] = v
    return out


def _checked(server: Server) -> dict[str, dict]:
    def done() -> dict[str, dict] | None:
        vs = _versions(server)
        return vs if len(vs) == 8 and all(v["status"] != "checking" for v in vs.values()) else None

    return wait_for(done, 300, "the checks")


def _on_board(server: Server, bots: tuple[str, ...]) -> dict[str, dict]:
    def board() -> dict[str, dict] | None:
        rows = {e["bot"]: e for e in server.get("/api/leaderboard")}
        return rows if all(rows.get(b, {}).get("games", 0) >= 2 for b in bots) else None

    return wait_for(board, 240, f"games of {', '.join(bots)}")


def test_uploaded_players_are_checked_behind_the_wall_and_play_on_the_board(site):
    server, tokens, folder, sent = site
    assert "submitted kitjar version 1: checking" in sent["kitjar"]
    for b in ("kitzip", "notplayer", "hangs"):
        assert sent[b][0] == 202, sent[b]
    done = _checked(server)
    assert done["notplayer"]["status"] == "refused"
    assert "players.NotAPlayer does not implement ginrummy.GinRummyPlayer" in done["notplayer"]["reason"]
    # refused by the start limit (30 s for a program to say hello), long before the check's own limit
    assert done["hangs"]["status"] == "refused" and done["hangs"]["reason"].startswith("handshake: timeout")
    for v in done.values():
        assert str(folder) not in v["reason"]  # no server path in a public reason
    assert done["kitjar"]["status"] in ("playing", "rated") and done["kitzip"]["status"] in ("playing", "rated")
    rows = _on_board(server, ("kitjar", "kitzip"))
    for b in ("kitjar", "kitzip"):
        assert rows[b]["forfeits"] == 0
    assert "notplayer" not in rows and "hangs" not in rows
    source = server.request("GET", "/api/bots/kitjar/source", token=tokens["alice"])[2].decode()
    assert "EAAI-kit player players.KitSimplePlayer" in source


def test_uploaded_policies_of_each_form_are_checked_and_play_on_the_board(site):
    server, tokens, folder, sent = site
    assert "submitted polonnx version 1: checking" in sent["polonnx"]
    for b in ("polpy", "polnpz", "snoop"):
        assert sent[b][0] == 202, sent[b]
    done = _checked(server)
    for b in ("polpy", "polonnx", "polnpz"):
        assert done[b]["status"] in ("playing", "rated"), done[b]
    snoop = done["snoop"]
    assert snoop["status"] == "refused" and "FileNotFoundError" in snoop["reason"], snoop
    assert str(folder) not in snoop["reason"] and "the league folder/league.db" in snoop["reason"]
    rows = _on_board(server, ("polpy", "polonnx", "polnpz"))
    for b in ("polpy", "polonnx", "polnpz"):
        assert rows[b]["forfeits"] == 0
    assert "snoop" not in rows
    c = sqlite3.connect(folder / "league.db")
    kinds = dict(c.execute("SELECT run_name, kind FROM versions WHERE run_name LIKE 'pol%'").fetchall())
    c.close()
    assert kinds == {"polpy-v1": "policy", "polonnx-v1": "policy", "polnpz-v1": "policy"}
    assert server.request("GET", "/api/bots/polpy/source", token=tokens["erin"])[2] == AGENT


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _huge_shape_npz() -> bytes:
    """A valid-looking w0 whose .npy header claims (4096, 4096) float32 (64 MiB) over 16 bytes of data."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        head = io.BytesIO()
        np.lib.format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False, "shape": (4096, 4096)})
        z.writestr("w0.npy", head.getvalue() + bytes(16))
        z.writestr("format.npy", _npy(np.array("gin-arena-mlp-1")))
    return buf.getvalue()


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=True)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda: _npz({"format": np.array("gin-arena-mlp-1"), "w0": np.array([{"x": 1}], dtype=object)}), "pickle"),
        (_huge_shape_npz, "says it is (4096, 4096)"),
        (lambda: _npz({"w0": np.zeros(5000, dtype=np.float32)}), "at most 4096"),
        (lambda: _npz({"w0": np.zeros((4096, 4096), dtype=np.float32)}, compressed=True), "unpack to"),
        (lambda: _npz({"evil": np.zeros(3, dtype=np.float32)}), "holds 'evil.npy'"),
    ],
    ids=["pickle-inside", "huge-shape", "too-wide", "zip-bomb", "stray-array"],
)
def test_a_malicious_npz_is_refused_at_upload_before_numpy_reads_it(site, make, why):
    server, tokens, folder, _ = site
    before = sorted(p.name for p in (folder / "bots").iterdir())
    got, ans = _post_policy(server, tokens["gina"], "badnpz", make(), "npz")
    assert got == 400 and why in ans["error"] and "\n" not in ans["error"], ans
    assert sorted(p.name for p in (folder / "bots").iterdir()) == before


@pytest.mark.parametrize(
    ("entries", "status", "why"),
    [
        ({"../../evil/players/KitSimplePlayer.class": b"\xca\xfe\xba\xbe"}, 400, "not a plain relative path"),
        ({"players/Other.class": b"\xca\xfe\xba\xbe"}, 400, "holds no players/KitSimplePlayer.class"),
        ({"x\ny/players/KitSimplePlayer.class": b"\xca\xfe\xba\xbe"}, 400, "holds a control character"),
        ({"players/KitSimplePlayer.class": bytes(150_000)}, 400, "unpacks to more than"),  # a zip bomb
        ({"players/KitSimplePlayer.class": os.urandom(210_000)}, 413, "the limit is 200000"),
    ],
    ids=["path-traversal", "no-such-class", "line-break", "zip-bomb", "too-big"],
)
def test_a_hostile_archive_is_refused_in_one_line_and_leaves_nothing(site, entries, status, why):
    server, tokens, folder, _ = site
    before = sorted(p.name for p in (folder / "bots").iterdir())
    got, ans = _post_archive(server, tokens["bob"], "hostile", zip_bytes(entries), "players.KitSimplePlayer")
    assert got == status and why in ans["error"] and "\n" not in ans["error"], ans
    assert sorted(p.name for p in (folder / "bots").iterdir()) == before
    assert not (folder.parent / "evil").exists()


def test_the_sweep_removes_an_unreferenced_upload_folder_with_its_tree_and_keeps_every_referenced_one(
    tmp_path, uploads
):
    from arena.league.core import sweep_files

    lg = League.init(tmp_path / "lg", LeagueConfig(house_bots=("random",), eaai_kit=str(uploads["kit"])))
    conn = lg.db()
    ann = _user(lg, conn, "ann")
    kept = lg.submit(conn, ann, "kit", archive=uploads["jar"], class_name="players.KitSimplePlayer")
    pol = lg.submit(conn, ann, "pol", policy=AGENT, policy_format="py")
    orphan = lg.dir / "bots" / ("f" * 32) / "classes" / "players"
    orphan.mkdir(parents=True)
    (orphan / "P.class").write_bytes(b"\xca\xfe\xba\xbe")
    old = 1_000_000_000
    for p in [*(lg.dir / "bots").rglob("*"), *(lg.dir / "bots").glob("*")]:
        os.utime(p, (old, old), follow_symlinks=False)
    removed = sweep_files(lg.dir, conn)
    assert removed == [f"bots/{'f' * 32}/classes/players/P.class"] and not orphan.exists()
    for out in (kept, pol):
        spec = conn.execute("SELECT spec FROM versions WHERE id = ?", (out["id"],)).fetchone()[0]
        assert (lg.dir / spec.rpartition(":")[0] if ":" in spec else lg.dir / spec).exists()
    conn.close()


def test_a_leftover_folder_an_identical_upload_reuses_is_not_swept_before_its_version_commits(tmp_path, uploads):
    """A failed submission leaves an unreferenced folder; an identical upload later reuses it.  Between the
    reuse and the new version's commit the sweep saw an old folder that no version points to and removed it:
    the version then pointed to nothing.  The reuse marks the folder as used now."""
    from arena.league.core import sweep_files
    from arena.league.eaai_upload import check_eaai_upload, unpack_eaai_upload
    from arena.league.uploads import store_file

    lg = League.init(tmp_path / "lg", LeagueConfig(house_bots=("random",), eaai_kit=str(uploads["kit"])))
    conn = lg.db()
    source, spec = b"x = 1\n", "bots/" + "a" * 32 + "/bot.py"
    checked = check_eaai_upload(uploads["jar"], "players.KitSimplePlayer", 10_000_000)
    store_file(lg.dir / spec, source)  # the failed submissions' leftovers, ten minutes old and more
    unpack_eaai_upload(lg.dir, uploads["jar"], checked)
    old = 1_000_000_000
    for p in [*(lg.dir / "bots").rglob("*"), *(lg.dir / "bots").glob("*")]:
        os.utime(p, (old, old), follow_symlinks=False)
    store_file(lg.dir / spec, source)  # the identical uploads, their versions not yet committed
    player = unpack_eaai_upload(lg.dir, uploads["jar"], checked)
    assert sweep_files(lg.dir, conn) == []
    assert (lg.dir / spec).is_file() and (player / "players" / "KitSimplePlayer.class").is_file()
    conn.close()


def test_a_bot_file_the_disk_refuses_is_one_507_line_and_leaves_no_temp_file(tmp_path, monkeypatch):
    """A full disk while an upload is written: the uploader is told in one line (507, Insufficient
    Storage), and the folder holds neither the file nor the half-written temp file beside it."""
    import errno

    from arena.league import db
    from arena.league.uploads import store_file

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(db.os, "fsync", full)
    target = tmp_path / "v1" / "bot.py"
    with pytest.raises(LeagueError) as caught:
        store_file(target, b"x = 1\n")
    assert caught.value.status == 507
    assert str(caught.value) == "the server cannot store the file: No space left on device"
    assert list((tmp_path / "v1").iterdir()) == []


# --- what an archive may make on disk, and where it is unpacked ------------------------------------------


def _folder_bomb(entries: int, implied: bool = False) -> bytes:
    """A small archive with the class and ``entries`` entries 64 folders deep, each under a folder of its own:
    folder entries (``3/a/a/.../a/``), or files whose names imply the folders (``3/a/.../a/x``).  4999 of the
    first, 1.7 MB, made 380,000 folders (1.25 GB on disk) in a minute inside the submission's transaction."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("players/P.class", b"\xca\xfe\xba\xbe" + bytes(100))
        for i in range(entries):
            z.writestr(f"{i:x}/" + "a/" * 62 + ("x" if implied else "a/"), b"")
    return buf.getvalue()


def _bad_last_crc() -> bytes:
    """The class, 200 files of 4 KB, and a last entry whose stored bytes no longer match its CRC: it was
    refused only once everything before it had been written (and then deleted), minutes for a big archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("players/P.class", b"\xca\xfe\xba\xbe" * 8)
        for i in range(200):
            z.writestr(f"f/{i}", os.urandom(4096))
        z.writestr(zipfile.ZipInfo("zz"), b"hello")  # stored: its bytes are the text itself
    out = bytearray(buf.getvalue())
    i = out.rfind(b"hello")
    out[i : i + 5] = b"HELLO"
    return bytes(out)


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in (folder / "bots").rglob("*"))


@pytest.mark.parametrize("implied", [False, True], ids=["folder-entries", "implied-folders"])
def test_an_archive_that_makes_thousands_of_folders_is_refused_before_a_folder_is_made(kitless, implied):
    """300 entries 64 deep (19,200 folders, a 100 KB archive) were accepted: only files' bytes were counted."""
    server, token, folder = kitless
    before = _tree(folder)
    started = time.monotonic()
    got, ans = _post_archive(server, token, "annbot", _folder_bomb(300, implied), "players.P")
    assert got == 400 and "\n" not in ans["error"], ans
    assert f"makes more than {MAX_FOLDERS} folders (at its entry '" in ans["error"], ans
    assert time.monotonic() - started < 10
    assert _tree(folder) == before


def test_every_file_and_folder_counts_a_block_against_the_unpacked_size_and_the_quota():
    """Folders and empty files counted nothing: bytes_per_user, which counts archives as unpacked, missed them."""
    data = zip_bytes({"players/P.class": b"\xca\xfe\xba\xbe" * 8, "players/x/": b"", "a/b/c": b""})
    checked = check_eaai_upload(data, "players.P", 10_000)
    assert checked.unpacked == 32 + BLOCK * (2 + 4)  # two files; players, players/x, a and a/b
    many = zip_bytes({"players/P.class": b"\xca\xfe\xba\xbe", **{f"e{i}": b"" for i in range(40)}})
    with pytest.raises(LeagueError, match="unpacks to more than [0-9]+ bytes .*each file and folder counts 4096"):
        check_eaai_upload(many, "players.P", 10_000)


def test_a_damaged_last_entry_is_refused_by_the_check_before_anything_is_written(kitless):
    """Entries were only decompressed (and their CRCs checked) while they were written, so an archive whose last
    entry is damaged was refused after everything before it was on disk, and stored no version: repeatable at
    no cost to the sender's limits."""
    data = _bad_last_crc()
    with pytest.raises(LeagueError, match="its entry 'zz' is damaged"):
        check_eaai_upload(data, "players.P", 2_000_000)
    server, token, folder = kitless
    before = _tree(folder)
    got, ans = _post_archive(server, token, "annbot", data, "players.P")
    assert got == 400 and "cannot be unpacked: its entry 'zz' is damaged" in ans["error"], ans
    assert _tree(folder) == before


def test_an_archive_unpacks_with_no_database_lock_held(tmp_path, monkeypatch):
    """The unpack ran inside the submission's transaction: every other write of the league (logins, submits, the
    scheduler's progress) waited for it, then was a 503 once its busy time was past."""
    from arena.league import eaai_upload

    (tmp_path / "kit").mkdir()
    lg = League.init(tmp_path / "lg", LeagueConfig(house_bots=("random",), eaai_kit=str(tmp_path / "kit")))
    conn = lg.db()
    ann = _user(lg, conn, "ann")
    unpacking, release = threading.Event(), threading.Event()
    real = eaai_upload._unpack

    def slow(*args: Any, **kw: Any) -> None:
        unpacking.set()
        assert release.wait(30)
        real(*args, **kw)

    monkeypatch.setattr(eaai_upload, "_unpack", slow)
    data = zip_bytes({"players/P.class": b"\xca\xfe\xba\xbe"})
    out: dict[str, Any] = {}
    sender = threading.Thread(
        target=lambda: out.update(lg.submit(lg.db(), ann, "annp", archive=data, class_name="players.P"))
    )
    sender.start()
    try:
        assert unpacking.wait(30)
        other = connect(lg.dir / "league.db", busy_seconds=1)
        lg.add_user(other, "bob")  # a write while the archive unpacks: it waited, then 'database is locked'
        lg.submit(other, _user(lg, other, "carol"), "carolbot", source=b"x = 1\n")
        other.close()
    finally:
        release.set()
        sender.join(30)
    spec = conn.execute("SELECT spec FROM versions WHERE id = ?", (out["id"],)).fetchone()[0]
    assert (lg.dir / spec.rpartition(":")[0] / "players" / "P.class").is_file()
    assert list((lg.dir / STAGING).iterdir()) == []
    conn.close()


_CRASH = """
import os, signal, sys
from arena.league import eaai_upload
from arena.league.core import League, User
where = sys.argv[2]
real_unpack, real_move = eaai_upload._unpack, eaai_upload._move
def unpack(z, infos, work):
    real_unpack(z, infos[: len(infos) // 2], work)
    if where == "unpacking":
        os.kill(os.getpid(), signal.SIGKILL)
    real_unpack(z, infos, work)
def move(work, dest):
    real_move(work, dest)
    if where == "placed":
        os.kill(os.getpid(), signal.SIGKILL)
eaai_upload._unpack, eaai_upload._move = unpack, move
lg = League(sys.argv[1])
conn = lg.db()
lg.submit(conn, User(1, "ann", False), "annp", archive=open(sys.argv[3], "rb").read(), class_name="players.P")
"""


@pytest.mark.parametrize("where", ["unpacking", "placed"])
def test_a_server_killed_mid_upload_leaves_no_version_and_its_leftovers_go(tmp_path, where):
    """kill -9 while the archive unpacks (its staging folder is left) or after it was moved into place but
    before the commit (a folder no version points to): no version, and the next server start, or the sweep,
    removes what was left; the same upload then goes in."""
    from arena.league.core import sweep_files

    (tmp_path / "kit").mkdir()
    folder = make_league(tmp_path / "lg", eaai_kit=str(tmp_path / "kit"))
    token = add_user(folder, "ann")
    data = zip_bytes({"players/P.class": b"\xca\xfe\xba\xbe", **{f"players/r{i}.txt": b"x" for i in range(8)}})
    (tmp_path / "p.zip").write_bytes(data)
    crash = subprocess.run(
        [sys.executable, "-c", _CRASH, str(folder), where, str(tmp_path / "p.zip")],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crash.returncode == -signal.SIGKILL, crash.stderr
    check_database(folder / "league.db")
    c = sqlite3.connect(folder / "league.db")
    assert c.execute("SELECT COUNT(*) FROM versions WHERE kind = 'eaai'").fetchone()[0] == 0
    left = _tree(folder)
    if where == "unpacking":
        assert any(p.startswith(f"{STAGING}/") for p in left) and not any("/archive" in p for p in left), left
        server = Server(folder, play=False)  # the start removes a stopped server's staging folders
    else:
        assert any(p.endswith("/archive/players/P.class") for p in left) and list((folder / STAGING).iterdir()) == []
        assert any(p.endswith("/archive/players/P.class") for p in sweep_files(folder, c, min_age=0))
        server = Server(folder, play=False)
    try:
        assert _tree(folder) == [STAGING], _tree(folder)
        got, ans = _post_archive(server, token, "annp", data, "players.P")
        assert got == 202, ans
    finally:
        server.stop()
        c.close()


def test_a_stale_staging_folder_goes_at_the_next_upload_and_one_under_way_stays(tmp_path):
    (tmp_path / "kit").mkdir()
    lg = League.init(tmp_path / "lg", LeagueConfig(house_bots=("random",), eaai_kit=str(tmp_path / "kit")))
    conn = lg.db()
    stale, busy = lg.dir / STAGING / "1000000000-old", lg.dir / STAGING / f"{int(time.time()) - 60}-busy"
    for p in (stale, busy):
        (p / "players").mkdir(parents=True)
        (p / "players" / "P.class").write_bytes(b"x")
    lg.submit(
        conn, _user(lg, conn, "ann"), "annp", archive=zip_bytes({"players/P.class": b"\xca"}), class_name="players.P"
    )
    assert not stale.exists() and (busy / "players" / "P.class").is_file()
    conn.close()
