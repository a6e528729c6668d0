"""A league server killed with SIGKILL in the middle of a pairing, then restarted.

The pairing is random vs simple (compiled built-ins: thousands of games a
second) over 40,000 games in chunks of 2,000, so the kill lands between
chunks stored and chunks to come.  After the restart the pairing must finish
with exactly its 40,000 games: none lost, none counted twice (unique game
ids in the run store, the same count in the database and on the
leaderboard).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.league.server import Server, make_league, wait_for

GAMES = 40_000


@pytest.mark.slow
def test_kill_9_mid_pairing_then_restart_loses_and_doubles_nothing(tmp_path):
    from arena.run.store import RunStore

    folder = make_league(tmp_path / "lg", games_per_pairing=GAMES, chunk_size=2000, extra_rounds=0)
    server = Server(folder, play=True, workers=1)
    try:

        def mid_pairing():
            p = server.get("/api/progress")
            running = p["running"]
            return running and 0 < running[0]["games"] < GAMES and running[0]["games"]

        at_kill = wait_for(mid_pairing, 300, "the pairing to be part-way", step=0.1)
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server.proc.pid)], capture_output=True, text=True)
        server.kill9()
    finally:
        server.stop()
    # The scheduler child died with the server (PR_SET_PDEATHSIG): nothing holds the run store.
    for pid in children.stdout.split():
        wait_for(
            lambda pid=pid: subprocess.run(["kill", "-0", pid], capture_output=True).returncode != 0,
            20,
            f"scheduler {pid} to exit",
        )
    stored_before = RunStore(folder / "runs" / "r000").n_games()
    assert 0 < at_kill <= GAMES and stored_before < GAMES

    server = Server(folder, play=True, workers=1)
    try:

        def finished():
            p = server.get("/api/progress")
            return not p["running"] and p["queued"] == 0 and p["done"] == 1 and p

        p = wait_for(finished, 600, "the pairing to finish after the restart")
        assert p["games"] == GAMES
        board = {
            e["bot"]: e
            for e in wait_for(
                lambda: [e for e in server.get("/api/leaderboard") if e["games"] == GAMES] or None, 60, "the ratings"
            )
        }
        board = {e["bot"]: e for e in server.get("/api/leaderboard")}
        assert board["random"]["games"] == GAMES and board["simple"]["games"] == GAMES
        assert board["simple"]["rating"] > board["random"]["rating"]
    finally:
        server.stop()
    store = RunStore(folder / "runs" / "r000")
    games = store.games(columns=["game_id", "pair", "swap"])
    assert len(games) == GAMES
    assert games["game_id"].is_unique
    assert not games.duplicated(["pair", "swap"]).any()
    assert stored_before >= 2000  # the restart resumed after chunks stored before the kill
