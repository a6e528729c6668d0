"""The league's database rules and scheduler, in process (built-in bots: fast, no sandbox)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.league.config import LeagueConfig, config_from_dict
from arena.league.core import League, User
from arena.league.db import LeagueError, connect, schema_version, transaction
from arena.league.migrations import MIGRATIONS
from arena.league.scheduler import Scheduler


def house_league(tmp_path, **kw) -> League:
    settings = dict(games_per_pairing=20, chunk_size=10, house_bots=("random", "simple", "early-knock"), extra_rounds=0)
    settings.update(kw)
    return League.init(tmp_path / "lg", LeagueConfig(**settings))


def run_until_idle(s: Scheduler, limit: int = 50) -> int:
    for n in range(limit):
        if not s.step():
            return n
    raise AssertionError("the scheduler never went idle")


def test_migrations_are_applied_once_and_a_newer_database_is_refused(tmp_path):
    lg = house_league(tmp_path)
    c = lg.db()
    assert schema_version(c) == len(MIGRATIONS)
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"users", "sessions", "bots", "versions", "pairings", "state"} <= tables
    c.close()
    raw = sqlite3.connect(lg.dir / "league.db")
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    raw.close()
    with pytest.raises(LeagueError, match="newer than this arena knows"):
        connect(lg.dir / "league.db")


def test_the_database_its_wal_and_its_backups_are_readable_by_their_owner_alone(tmp_path):
    """league.db holds every session's CSRF value and the users' token hashes: it was 0644 (with its -wal and
    -shm), so any account of a shared machine could read it.  An older league's file is made private when
    the league is next opened."""
    import os
    import stat

    from arena.league.db import backup

    def mode(p) -> int:
        return stat.S_IMODE(os.stat(p).st_mode)

    old_umask = os.umask(0o022)  # the usual one, whatever the test runner's
    try:
        lg = house_league(tmp_path)
        c = lg.db()
        lg.add_user(c, "ann")
        db = lg.dir / "league.db"
        assert {mode(f"{db}{s}") for s in ("", "-wal", "-shm")} == {0o600}
        assert mode(backup(db, tmp_path / "copy.db") and tmp_path / "copy.db") == 0o600
        c.close()  # the last connection: SQLite removes the -wal and -shm
        os.chmod(db, 0o644)
        c = lg.db()
        lg.add_user(c, "bea")
        assert {mode(f"{db}{s}") for s in ("", "-wal", "-shm")} == {0o600}
        c.close()
    finally:
        os.umask(old_umask)


def test_opening_another_connection_keeps_the_locks_the_first_one_holds(tmp_path):
    """SQLite's locks are POSIX locks, which a process loses when it closes any descriptor of the file: a
    connect() that opened and closed league.db to set its mode dropped the shared lock of every other
    connection of the process, so the next process to close its connection thought itself the last one,
    checkpointed and deleted the -wal and -shm under the server's live connections (then 503s: the
    database read as damaged)."""
    import subprocess
    import sys

    lg = house_league(tmp_path)
    db = lg.dir / "league.db"
    holder = lg.db()  # a server thread's connection, open
    lg.add_user(holder, "ann")
    lg.db().close()  # another thread's, opened and closed
    other = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM users'); c.close()"
    subprocess.run([sys.executable, "-c", other, str(db)], check=True, timeout=60)
    assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()  # the live connection's, kept
    lg.add_user(holder, "bea")
    holder.close()


def test_config_errors_are_one_line():
    with pytest.raises(LeagueError, match="unknown key 'gamez' \\(did you mean 'games_per_pairing'\\? keys: "):
        config_from_dict({"gamez": 2})
    with pytest.raises(LeagueError, match="unknown key 'house_bot' \\(did you mean 'house_bots'\\? keys: "):
        config_from_dict({"house_bot": ["simple"]})
    with pytest.raises(LeagueError, match="games_per_pairing = 21 must be even"):
        LeagueConfig(games_per_pairing=21, duplicate=True)
    with pytest.raises(LeagueError, match="sprt"):
        LeagueConfig(sprt={"elo0": 5, "elo1": 0})
    with pytest.raises(LeagueError, match=r"league.toml: sprt.elo1 = inf is not allowed"):
        LeagueConfig(sprt={"elo1": float("inf")})  # as a tournament config refuses it: its LLR is no number
    with pytest.raises(LeagueError, match="rules"):
        LeagueConfig(rules="no-such-preset")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("games_per_pairing = 1\n", "given.toml: games_per_pairing = 1 is not allowed"),  # named: league.toml
        ("bot_limits = {memory_mb = 5}\n", "given.toml: bot_limits.memory_mb = 5 is not allowed"),  # limits.
        ('name = "a\\nb"\n', "given.toml: name = 'a\\nb' is not allowed (allowed: non-empty text on one line)"),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "given.toml is not valid TOML: a value is nested too deeply"),
    ],
    ids=["names-the-file-given", "bot-limits-by-its-key", "line-break-in-name", "nested-thousands-deep"],
)
def test_a_league_config_file_error_is_one_line_naming_that_file_and_its_key(tmp_path, text, line):
    """``arena league init DIR --config FILE``: the errors named league.toml (not the file given) and the bot
    limits as ``limits``; a name with a line break was taken; a value nested thousands deep was a
    3,000-line RecursionError."""
    from arena.league.config import load_league_config

    f = tmp_path / "given.toml"
    f.write_text(text)
    with pytest.raises(LeagueError) as err:
        load_league_config(f)
    assert str(err.value).startswith(f"{tmp_path}/{line}"), str(err.value)
    assert "\n" not in str(err.value)


def test_a_failed_write_leaves_nothing(tmp_path):
    lg = house_league(tmp_path, active_bots_per_user=1)
    c = lg.db()
    lg.add_user(c, "ann")
    with pytest.raises(RuntimeError), transaction(c):
        c.execute("INSERT INTO users(name, token_hash, created) VALUES ('ben', 'h', 'now')")
        raise RuntimeError("cut short")
    assert c.execute("SELECT COUNT(*) FROM users WHERE name = 'ben'").fetchone()[0] == 0
    ann = League.user_by_token(c, None)
    assert ann is None
    u = User(c.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0], "ann", False)
    lg.submit(c, u, "first", source=b"x = 1\n")
    with pytest.raises(LeagueError, match="1 active bots"):
        lg.submit(c, u, "second", source=b"x = 1\n")
    assert c.execute("SELECT COUNT(*) FROM bots WHERE name = 'second'").fetchone()[0] == 0  # rolled back


def test_house_field_is_played_rated_and_games_come_from_the_store(tmp_path):
    lg = house_league(tmp_path, extra_rounds=1)
    s = Scheduler(lg, workers=1)
    run_until_idle(s)
    c = lg.db()
    pairings = [dict(r) for r in c.execute("SELECT * FROM pairings ORDER BY id")]
    # Three round-0 pairings, then one extra round for each pair (least certain first), all done.
    assert sorted((p["round"], p["state"]) for p in pairings) == [(0, "done")] * 3 + [(1, "done")] * 3
    assert all(p["games"] == 20 for p in pairings)
    board = {e["bot"]: e for e in lg.leaderboard(c)}
    assert set(board) == {"random", "simple", "early-knock"}
    assert all(e["status"] == "rated" and e["games"] == 80 for e in board.values())  # 2 opponents x 2 rounds x 20
    assert board["random"]["rating"] < board["simple"]["rating"]
    assert board["random"]["rating_low"] < board["random"]["rating"] < board["random"]["rating_high"]
    page = lg.bot_info(c, "simple")["stats"]
    assert {h["opponent"] for h in page["head_to_head"]} == {"random", "early-knock"}
    assert sum(h["games"] for h in page["head_to_head"]) == 80
    assert sum(m["games"] for m in page["margins"]) == 80
    assert page["recent"] and {g["run"] for g in page["recent"]} <= {"r000", "r001"}
    assert not s.step()  # nothing left: extra rounds are capped


def test_a_new_version_replaces_the_old_one_and_goes_first(tmp_path):
    lg = house_league(tmp_path)
    c = lg.db()
    lg.add_user(c, "ann")
    uid = c.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0]
    s = Scheduler(lg, workers=1)

    def builtin_version(number: int) -> dict:
        with transaction(s.conn):
            bot = s.conn.execute("SELECT id FROM bots WHERE name = 'annbot'").fetchone()
            bot_id = (
                bot[0]
                if bot
                else s.conn.execute(
                    "INSERT INTO bots(name, owner_id, created) VALUES ('annbot', ?, 'now')", (uid,)
                ).lastrowid
            )
            vid = s.conn.execute(
                "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, submitted_by,"
                " created, created_ts) VALUES (?, ?, 'builtin', 'simple', ?, '', 0, 'checking', ?, 'now', 0)",
                (bot_id, number, f"annbot-v{number}", uid),
            ).lastrowid
            v = dict(s.conn.execute("SELECT * FROM versions WHERE id = ?", (vid,)).fetchone())
            s._enter(v)
        return v

    v1 = builtin_version(1)
    queued = [dict(r) for r in c.execute("SELECT * FROM pairings WHERE state = 'queued' ORDER BY priority DESC, id")]
    assert [p["a"] for p in queued[:3]] == [v1["id"]] * 3 and queued[0]["priority"] == 100  # new bots first
    assert s.play_next()
    first = c.execute("SELECT a FROM pairings WHERE state = 'done'").fetchone()[0]
    assert first == v1["id"]
    builtin_version(2)
    statuses = dict(c.execute("SELECT run_name, status FROM versions WHERE bot_id = ?", (v1["bot_id"],)).fetchall())
    assert statuses == {"annbot-v1": "retired", "annbot-v2": "playing"}
    left = c.execute("SELECT COUNT(*) FROM pairings WHERE state = 'queued' AND (a = ? OR b = ?)", (v1["id"], v1["id"]))
    assert left.fetchone()[0] == 0  # the old version's queued pairings are cancelled; its played games stay
    run_until_idle(s)
    board = {e["bot"]: e for e in lg.leaderboard(c)}
    assert board["annbot"]["version"] == 2 and board["annbot"]["status"] == "rated"
    info = lg.bot_info(c, "annbot")
    assert [v["status"] for v in info["versions"]] == ["retired", "rated"]
    assert info["versions"][0]["games"] == 20  # the retired version's games are kept
    # Withdrawn: off the board, queued pairings cancelled.
    ann = User(uid, "ann", False)
    lg.withdraw(c, ann, "annbot")
    assert "annbot" not in {e["bot"] for e in lg.leaderboard(c)}
    other = User(uid + 100, "eve", False)
    with pytest.raises(LeagueError, match="another user"):
        lg.withdraw(c, other, "annbot")


def test_sprt_stops_a_lopsided_pairing_early(tmp_path):
    lg = house_league(
        tmp_path,
        house_bots=("random", "simple"),
        games_per_pairing=2000,
        chunk_size=50,
        sprt={"elo0": 0, "elo1": 50},
    )
    s = Scheduler(lg, workers=1)
    assert s.play_next()
    p = dict(lg.db().execute("SELECT * FROM pairings").fetchone())
    assert p["state"] == "done" and p["result"].startswith("SPRT")
    assert 0 < p["games"] < 2000 and p["games"] % 50 == 0
    assert s.stored_games(0, "random", "simple") == p["games"]


def test_a_bot_that_fails_its_check_is_refused_with_the_reason(tmp_path):
    lg = house_league(tmp_path, check_games=2)
    c = lg.db()
    lg.add_user(c, "ann")
    ann = User(c.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0], "ann", False)
    lg.submit(
        c, ann, "broken", source=b"import numpy as np\n\ndef discard(view, params, memory, rng):\n    return 99\n"
    )
    s = Scheduler(lg, workers=1)
    assert s.check_next()
    v = dict(c.execute("SELECT status, reason FROM versions WHERE run_name = 'broken-v1'").fetchone())
    assert v["status"] == "refused" and v["reason"] and "\n" not in v["reason"]
    assert "the check failed" not in v["reason"]  # refused by a FAIL line of the check, not by a crash of it
    assert lg.user_info(c, "ann")["versions"][0]["reason"] == v["reason"]
    assert "broken" not in {e["bot"] for e in lg.leaderboard(c)}
    assert not c.execute(
        "SELECT COUNT(*) FROM pairings WHERE a = (SELECT id FROM versions WHERE run_name = 'broken-v1')"
    ).fetchone()[0]


def test_a_good_bot_passes_its_check_and_is_queued_against_the_field(tmp_path):
    from tests.league.server import SIMPLE_COPY

    lg = house_league(tmp_path, check_games=2)
    c = lg.db()
    lg.add_user(c, "ann")
    ann = User(c.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0], "ann", False)
    lg.submit(c, ann, "good", source=SIMPLE_COPY.encode())
    s = Scheduler(lg, workers=1)
    assert s.check_next()
    v = dict(c.execute("SELECT id, status, reason FROM versions WHERE run_name = 'good-v1'").fetchone())
    assert (v["status"], v["reason"]) == ("playing", "")
    n = c.execute("SELECT COUNT(*) FROM pairings WHERE a = ? AND priority = 100", (v["id"],)).fetchone()[0]
    assert n == 3  # against each house bot


def test_a_policy_sent_as_a_bot_file_is_taken_as_a_policy_or_refused_in_one_line(tmp_path):
    """A module with act() sent as source becomes a policy version; an .npz or .onnx sent as source text is
    refused (it goes in the policy field), and nothing is stored for it."""
    import io

    from arena.botkit.policy import mlp_onnx
    from arena.engine.mlp import random_mlp, save_mlp

    lg = house_league(tmp_path)
    c = lg.db()
    lg.add_user(c, "ann")
    ann = User(c.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0], "ann", False)
    mlp = random_mlp(8, 4, (4,))
    npz = io.BytesIO()
    save_mlp(npz, mlp)
    before = c.execute("SELECT COUNT(*) FROM versions").fetchone()[0]
    for i, upload in enumerate((npz.getvalue(), mlp_onnx(mlp))):
        with pytest.raises(LeagueError, match="this is a policy file") as err:
            lg.submit(c, ann, f"pol{i}", source=upload)
        assert "\n" not in str(err.value)
    assert c.execute("SELECT COUNT(*) FROM versions").fetchone()[0] == before
    module = b"import numpy as np\n\ndef act(obs, mask, rng):\n    return np.argmax(mask, axis=1)\n"
    out = lg.submit(c, ann, "mod", source=module)
    v = c.execute("SELECT kind, spec FROM versions WHERE id = ?", (out["id"],)).fetchone()
    assert v["kind"] == "policy" and v["spec"].endswith("/policy.py") and (lg.dir / v["spec"]).read_bytes() == module


@pytest.mark.parametrize(
    ("house_bots", "message"),
    [
        (("random", "nosuch"), "house bot 'nosuch' is not a built-in bot"),
        (("random", "cmd:ls"), "house bot 'cmd:ls' is not a built-in bot"),
        (("random", "early-knock:knock_att=5"), "'early-knock' has no parameter 'knock_att'"),
        (("random", "early-knock:knock_at=50"), "knock_at = 50.0 must be between 0 and 10"),
        (("early-knock", "early-knock:knock_at=10"), "house bots 'early-knock' and 'early-knock:knock_at=10' are"),
    ],
)
def test_a_bad_house_bot_is_one_line_and_creates_no_league(tmp_path, house_bots, message):
    with pytest.raises(LeagueError) as err:
        League.init(tmp_path / "lg", LeagueConfig(house_bots=house_bots))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "lg").exists()


def _user(lg: League, c: sqlite3.Connection, name: str, organizer: bool = False) -> User:
    token = lg.add_user(c, name, organizer)
    user = League.user_by_token(c, token)
    assert user is not None
    return user


def test_a_submission_whose_token_was_checked_before_a_revoke_is_refused(tmp_path):
    """The web side checks the token, then submits in a second database call: a revoke in between must
    refuse the submission, not put a version of the revoked user in the queue."""
    from tests.league.server import SIMPLE_COPY

    lg = house_league(tmp_path)
    c = lg.db()
    dave = _user(lg, c, "dave")  # the token checked: the request is on its way
    lg.submit(c, dave, "davebot", source=SIMPLE_COPY.encode())
    lg.revoke_user(c, "dave")
    for name in ("davebot", "davenew"):
        with pytest.raises(LeagueError, match="'dave' is revoked") as err:
            lg.submit(c, dave, name, source=SIMPLE_COPY.encode() + b"\n# v2\n")
        assert err.value.status == 401
    assert [r[0] for r in c.execute("SELECT status FROM versions WHERE run_name LIKE 'dave%'")] == ["withdrawn"]
    assert c.execute("SELECT withdrawn FROM bots WHERE name = 'davebot'").fetchone()[0] == 1


def test_an_organizer_cannot_bring_back_a_revoked_users_bot(tmp_path):
    from tests.league.server import SIMPLE_COPY

    lg = house_league(tmp_path)
    c = lg.db()
    dave, olga = _user(lg, c, "dave"), _user(lg, c, "olga", organizer=True)
    lg.submit(c, dave, "davebot", source=SIMPLE_COPY.encode())
    lg.revoke_user(c, "dave")
    with pytest.raises(LeagueError, match="belongs to the revoked user 'dave'") as err:
        lg.submit(c, olga, "davebot", source=SIMPLE_COPY.encode() + b"\n# v2\n")
    assert err.value.status == 403
    assert c.execute("SELECT withdrawn FROM bots WHERE name = 'davebot'").fetchone()[0] == 1


def test_a_revoked_users_version_that_reached_the_database_is_withdrawn_not_checked(tmp_path):
    """The scheduler's backstop: a version of a revoked owner's bot still 'checking' (as a submission that
    slipped past an older server's revoke left it) is withdrawn before the checks start; none plays."""
    from tests.league.server import SIMPLE_COPY

    lg = house_league(tmp_path, check_games=2)
    c = lg.db()
    dave = _user(lg, c, "dave")
    lg.submit(c, dave, "davebot", source=SIMPLE_COPY.encode())
    with transaction(c):  # revoked, its bot left in the league: what the race left behind
        c.execute("UPDATE users SET revoked = 'now' WHERE name = 'dave'")
    s = Scheduler(lg, workers=1)
    s.check_next()
    assert c.execute("SELECT status FROM versions WHERE run_name = 'davebot-v1'").fetchone()[0] == "withdrawn"
    assert c.execute("SELECT withdrawn FROM bots WHERE name = 'davebot'").fetchone()[0] == 1
    assert not c.execute(
        "SELECT COUNT(*) FROM pairings WHERE a IN (SELECT id FROM versions WHERE bot_id ="
        " (SELECT id FROM bots WHERE name = 'davebot'))"
    ).fetchone()[0]


def test_bringing_back_a_withdrawn_bot_counts_against_the_active_bots_limit(tmp_path):
    """A new version of a withdrawn bot (or of one whose versions were all refused) makes it active again: the
    same limit as a new bot, so withdrawing and resubmitting cannot hold more active bots than allowed."""
    from tests.league.server import SIMPLE_COPY

    lg = house_league(tmp_path, active_bots_per_user=2)
    c = lg.db()
    bob = _user(lg, c, "bob")
    src = SIMPLE_COPY.encode()
    lg.submit(c, bob, "one", source=src)
    lg.submit(c, bob, "two", source=src)
    lg.withdraw(c, bob, "two")
    lg.submit(c, bob, "three", source=src)
    with pytest.raises(LeagueError, match="2 active bots") as err:
        lg.submit(c, bob, "two", source=src + b"\n# v2\n")
    assert err.value.status == 409
    with transaction(c):  # 'three' refused by its check: no longer active
        c.execute("UPDATE versions SET status = 'refused' WHERE run_name = 'three-v1'")
    lg.submit(c, bob, "two", source=src + b"\n# v2\n")  # a place is free again
    with pytest.raises(LeagueError, match="2 active bots"):
        lg.submit(c, bob, "three", source=src + b"\n# v2\n")
    lg.submit(c, bob, "one", source=src + b"\n# v2\n")  # a new version of an active bot takes no new place
    active = c.execute(
        "SELECT DISTINCT b.name FROM bots b JOIN versions v ON v.bot_id = b.id WHERE b.owner_id = ?"
        " AND b.withdrawn = 0 AND v.status IN ('checking', 'playing', 'rated') ORDER BY b.name",
        (bob.id,),
    ).fetchall()
    assert [r[0] for r in active] == ["one", "two"]


def test_rounds_play_on_drawn_secret_seeds_unless_the_league_fixes_a_seed(tmp_path):
    """A round seeded ``seed + round`` from a public default (1) is guessable, and a bot that guesses it
    rebuilds every deal from its own random keys; so each round draws its own seed, kept in its run folder."""
    import tomllib

    from arena.run.store import RunStore

    lg = house_league(tmp_path, extra_rounds=1)
    run_until_idle(Scheduler(lg, workers=1))
    rounds = sorted((lg.dir / "runs").iterdir())
    assert [r.name for r in rounds] == ["r000", "r001"]
    drawn = []
    for r in rounds:
        assert tomllib.loads((r / "config.toml").read_text())["seed"] == "secret"
        assert (r / "seed.secret").stat().st_mode & 0o077 == 0  # for the arena's user alone
        drawn.append(RunStore(r).secret_seed())
    assert drawn[0] != drawn[1] and not {1, 2} & set(drawn)

    fixed = house_league(tmp_path / "fixed", seed=41)
    run_until_idle(Scheduler(fixed, workers=1))
    r = fixed.dir / "runs" / "r000"
    assert tomllib.loads((r / "config.toml").read_text())["seed"] == 41 and not (r / "seed.secret").exists()
    for bad in (-1, 2**62 + 1, "1", 1.5, True, "SECRET"):
        with pytest.raises(LeagueError, match=r"seed = .* is not allowed \(allowed: \"secret\", or an integer"):
            LeagueConfig(seed=bad)


def test_a_bot_entered_later_meets_none_of_the_deals_its_round_has_shown(tmp_path):
    """A round's folder is shared by every first meeting, and its games are on the viewer (seeds and hands)
    as they finish.  With shared deals, a bot entered later met the very deals shown, and could play
    knowing its opponent's cards and the stock: each pairing plays its own deals."""
    import pandas as pd

    lg = house_league(tmp_path, house_bots=("random", "simple"))
    s = Scheduler(lg, workers=1)
    run_until_idle(s)
    games = lg.dir / "runs" / "r000" / "games"
    shown = set(pd.read_parquet(games)["seed"])
    assert len(shown) == 20  # 20 games, each its own deal
    lg.add_user(lg.db(), "mallory")
    with transaction(s.conn):
        owner = s.conn.execute("SELECT id FROM users WHERE name = 'mallory'").fetchone()[0]
        bot_id = s.conn.execute(
            "INSERT INTO bots(name, owner_id, created) VALUES ('late', ?, 'now')", (owner,)
        ).lastrowid
        vid = s.conn.execute(
            "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, submitted_by,"
            " created, created_ts) VALUES (?, 1, 'builtin', 'early-knock', 'late-v1', '', 0, 'checking', ?, 'now', 0)",
            (bot_id, owner),
        ).lastrowid
        s._enter(dict(s.conn.execute("SELECT * FROM versions WHERE id = ?", (vid,)).fetchone()))
    run_until_idle(s)
    played = pd.read_parquet(games)
    late = played[(played["bot_a"] == "late-v1") | (played["bot_b"] == "late-v1")]
    assert len(late) == 40 and late["error"].eq("").all()  # against random and simple, 20 games each
    assert not set(late["seed"]) & shown
    against = [set(g["seed"]) for _, g in late.groupby("matchup")]
    assert len(against) == 2 and not against[0] & against[1]


@pytest.mark.parametrize("duplicate", [False, True])
def test_a_league_deals_every_game_afresh_unless_told_to_play_duplicate_deals(tmp_path, duplicate):
    """In the second seating of a duplicate pair a bot's opponent holds the hand the bot held in the
    first, and a bot can carry that hand between its two processes through the page cache, which the
    wall cannot close: a league plays every game on a deal of its own unless its organizer says
    ``duplicate = true``; then each deal is played from both seats, and the pairing's length must be even."""
    import pandas as pd

    if duplicate:
        with pytest.raises(LeagueError, match="games_per_pairing = 21 must be even"):
            LeagueConfig(games_per_pairing=21, duplicate=True)
    else:
        assert LeagueConfig(games_per_pairing=21, chunk_size=7).duplicate is False
    with pytest.raises(LeagueError, match=r"duplicate = 'yes' is not allowed \(allowed: true or false\)"):
        LeagueConfig(duplicate="yes")
    kw = {"duplicate": True} if duplicate else {}
    lg = house_league(tmp_path, house_bots=("random", "simple"), **kw)
    run_until_idle(Scheduler(lg, workers=1))
    games = pd.read_parquet(lg.dir / "runs" / "r000" / "games")
    assert len(games) == 20 and games["error"].eq("").all()
    by_deal = games.groupby("seed")["swap"].agg(list)
    if duplicate:
        assert len(by_deal) == 10 and all(sorted(swaps) == [0, 1] for swaps in by_deal)
    else:
        assert len(by_deal) == 20


def test_a_submissions_check_plays_on_drawn_seeds_a_bot_cannot_know(tmp_path, monkeypatch, capsys):
    """On the fixed seeds of before (0, 1, ...; 1000, ... for a walled bot), a bot could tell its check
    games from rated ones by its own random keys, and behave in them alone."""
    import arena.engine.play as play
    from arena.league import checks

    draws = {checks.check_seed() for _ in range(4)}
    assert len(draws) == 4 and min(draws) > 10**6
    seen: list[list[int]] = []
    real = play.play_batch

    def spy(a, b, rules, seeds, *args, **kw):
        seen.append(seeds.tolist())
        return real(a, b, rules, seeds, *args, **kw)

    monkeypatch.setattr(play, "play_batch", spy)
    monkeypatch.setattr(checks, "check_seed", lambda: 987_654_321)
    lg = house_league(tmp_path)
    assert checks.main([str(lg.dir), "learned"]) == 0
    assert '"fails": []' in capsys.readouterr().out
    assert seen and all(s[0] == 987_654_321 for s in seen)
