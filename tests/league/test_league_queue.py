"""The pairing queue on a real league database: two users' new bots take turns for the scheduler, so one user who
queues first (or more) cannot hold the games beyond their share."""

from __future__ import annotations

from arena.league.config import LeagueConfig
from arena.league.core import League
from arena.league.db import transaction
from arena.league.scheduler import Scheduler


def test_new_bots_of_two_users_take_turns_in_the_pairing_queue(tmp_path):
    lg = League.init(
        tmp_path / "lg",
        LeagueConfig(games_per_pairing=10, chunk_size=10, house_bots=("random", "simple", "early-knock")),
    )
    c = lg.db()
    s = Scheduler(lg, workers=1)
    with transaction(c):  # the house field is played already: only the new bots' pairings are queued
        c.execute("UPDATE pairings SET state = 'done', finished = '2000-01-01T00:00:00+00:00'")
        c.execute("UPDATE versions SET status = 'rated'")
    owners = {}
    for user, bots in (("mallory", ("m1", "m2")), ("alice", ("a1",))):  # mallory's two bots enter first
        lg.add_user(c, user)
        uid = c.execute("SELECT id FROM users WHERE name = ?", (user,)).fetchone()[0]
        for bot in bots:
            w = s.conn  # the scheduler's own connection: _enter runs inside this transaction
            with transaction(w):
                bot_id = w.execute(
                    "INSERT INTO bots(name, owner_id, created) VALUES (?, ?, 'now')", (bot, uid)
                ).lastrowid
                vid = w.execute(
                    "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, submitted_by,"
                    " created, created_ts) VALUES (?, 1, 'builtin', 'simple', ?, '', 0, 'checking', ?, 'now', 0)",
                    (bot_id, f"{bot}-v1", uid),
                ).lastrowid
                v = dict(w.execute("SELECT * FROM versions WHERE id = ?", (vid,)).fetchone())
                s._enter(v)
            owners[vid] = user
    queued = c.execute("SELECT COUNT(*) FROM pairings WHERE state = 'queued' AND priority = 100").fetchone()[0]
    assert queued == 3 + 4 + 5  # each new bot against the field as it stood when it entered
    played = []

    def done() -> dict[int, int]:
        return dict(c.execute("SELECT id, a FROM pairings WHERE state = 'done'").fetchall())

    for _ in range(2):
        before = done()
        assert s.play_next()
        (new,) = set(done()) - set(before)
        played.append(owners[done()[new]])
    # By id alone mallory's 7 pairings would all go first; by turns alice's is next after her first.
    assert played == ["mallory", "alice"], played
