"""``arena league serve --scheduler tcp://...``: a league whose games are played on a real Dask cluster.

A ``dask scheduler`` and one ``dask worker`` process are started here on
127.0.0.1 (tests/dask_cluster.py); the league server plays on them.  The
field is one house bot, the check plays no games and the pairing two, so a
submission goes from upload to rated in about 20 s on an idle 2-core machine
(most of it the sandbox starting the bot, a plain-Python one); the worker's count of executed
tasks shows the games ran on the cluster, not in the server's own processes.
"""

from __future__ import annotations

import threading

import pytest

from tests.dask_cluster import dask_cluster
from tests.league.server import Server, add_user, make_league, wait_for

distributed = pytest.importorskip("distributed")

#: A bot in plain Python: the sandbox starts it without compiling it (simple's numba kernels take ~10 s more).
PLAIN_BOT = """\"\"\"Plain Python: passes the upcard, draws from the stock, drops the card leaving least deadwood.\"\"\"

from arena.botkit.lib import discardable, least_deadwood_discard
from arena.engine.layout import V_HAND

PLAIN = True
PARAMS = {}
MEMORY = 1


def take_upcard(view, params, memory, rng):
    return 0


def draw(view, params, memory, rng):
    return 0


def big_gin(view, params, memory, rng):
    return 1


def discard(view, params, memory, rng):
    return least_deadwood_discard(view[V_HAND], discardable(view), rng)[0]


def knock(view, params, memory, rng):
    return 1
"""


@pytest.fixture
def cluster(tmp_path):
    with dask_cluster(tmp_path / "dask-logs") as c, distributed.Client(c.address, timeout="60s") as client:
        yield c.address, client


@pytest.mark.slow
def test_a_league_served_with_scheduler_plays_a_submission_on_dask_and_rates_it(tmp_path, cluster):
    address, client = cluster
    folder = make_league(
        tmp_path / "lg", games_per_pairing=2, chunk_size=2, house_bots=["random"], check_games=0, extra_rounds=0
    )
    # The worker imports the arena while the server starts and checks the bot (client.run: not a task).
    warm = threading.Thread(target=client.run, args=(exec, "import arena.run.worker"), daemon=True)
    warm.start()
    token = add_user(folder, "alice")
    server = Server(folder, play=True, workers=None, extra=["--scheduler", address])
    try:
        status, body = server.post_json("/api/submit", {"name": "daskbot", "source": PLAIN_BOT}, token=token)
        assert status == 202 and body["status"] == "checking", body

        def rated():
            board = {e["bot"]: e for e in server.get("/api/leaderboard")}
            e = board.get("daskbot")
            return e if e and e["status"] == "rated" else None

        try:
            entry = wait_for(rated, 240, "daskbot rated on the leaderboard")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the server's log: {server.log_text()}") from None
        assert entry["games"] == 2 and entry["owner"] == "alice"
        assert entry["rating_low"] < entry["rating"] < entry["rating_high"]
        pairing = server.get("/api/progress")
        assert pairing["queued"] == 0 and not pairing["running"]
    finally:
        server.stop()
    warm.join(60)
    # The pairing was played as a task on the cluster's worker (one chunk of two games).
    assert sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values()) >= 1


@pytest.mark.slow
def test_a_pairing_waits_for_a_dask_scheduler_that_is_down_and_plays_when_it_is_back(tmp_path):
    """A pairing whose run could not reach the league's Dask scheduler was cancelled like one whose bot no
    longer loads: the submission was rated without those games (0 of 2), and a scheduler restarting lost
    every pairing tried meanwhile.  The machine's fault now makes the pairing wait, and it plays once the
    cluster is back."""
    from tests.dask_cluster import Cluster

    cluster = Cluster(tmp_path / "dask-logs")  # its address, with nothing there yet
    folder = make_league(
        tmp_path / "lg", games_per_pairing=2, chunk_size=2, house_bots=["random"], check_games=0, extra_rounds=0
    )
    token = add_user(folder, "alice")
    server = Server(folder, play=True, workers=None, extra=["--scheduler", cluster.address])
    try:
        status, body = server.post_json("/api/submit", {"name": "waitbot", "source": PLAIN_BOT}, token=token)
        assert status == 202, body
        wait_for(lambda: "waits" in server.log_text(), 180, "the pairing tried and waiting")
        board = {e["bot"]: e for e in server.get("/api/leaderboard")}
        assert board["waitbot"]["status"] != "rated", board["waitbot"]  # not rated without its games
        cluster.start_scheduler()
        cluster.start_worker()

        def rated():
            e = {e["bot"]: e for e in server.get("/api/leaderboard")}.get("waitbot")
            return e if e and e["status"] == "rated" else None

        try:
            entry = wait_for(rated, 300, "waitbot rated once the cluster is back")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the server's log: {server.log_text()}") from None
        assert entry["games"] == 2, entry
        assert "the pairings play again after" in server.log_text()
    finally:
        server.stop()
        cluster.stop()
