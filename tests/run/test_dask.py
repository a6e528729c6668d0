"""Runs on Dask: the same games as local processes, on a LocalCluster and on a real
``dask scheduler`` with two ``dask worker`` processes on 127.0.0.1 (tests/dask_cluster.py);
a worker killed mid-run changes nothing; a scheduler killed mid-run ends the run
in one line with exit code 3, its stored chunks kept, and ``--retry-scheduler``
waits for a new one."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from typer.testing import CliRunner  # noqa: E402

from arena.run import run_tournament  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402
from tests.dask_cluster import Cluster, dask_cluster  # noqa: E402
from tests.eaai_kit import compile_kit, needs_java  # noqa: E402
from tests.tables import canonical  # noqa: E402


def cfg(tmp_path: Path, **kw) -> TournamentConfig:
    base = dict(
        name="d",
        bots=("random", "simple", "early-knock"),
        games_per_pair=160,
        chunk_size=40,
        seed=5,
        workers=2,
        results_dir=str(tmp_path / "results"),
    )
    base.update(kw)
    return TournamentConfig(**base)


@pytest.fixture(scope="module")
def local_games(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("local")
    return canonical(run_tournament(cfg(tmp), progress=False).games)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real scheduler and two single-thread workers as separate processes on 127.0.0.1."""
    with (
        dask_cluster(tmp_path_factory.mktemp("dask-logs"), workers=2) as c,
        distributed.Client(c.address, timeout="60s") as client,
    ):
        yield c.address, client, c.workers


def test_a_local_cluster_plays_the_same_games_as_local_processes(tmp_path, local_games):
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        ) as lc,
        distributed.Client(lc) as client,
    ):
        res = run_tournament(cfg(tmp_path), client=client, progress=False)
    assert res.status == "complete"
    assert canonical(res.games).equals(local_games)


def test_a_worker_with_two_threads_gives_each_chunk_its_own_bot_processes(tmp_path):
    """``dask worker`` runs a thread per core unless told ``--nthreads 1``, and plays a chunk in each:
    two chunks of one external bot shared its processes and garbled each other's games (forfeits
    as "Bad file descriptor" or "out of step", stored as results).  Each thread has its own."""
    player = Path(__file__).resolve().parents[2] / "examples" / "external" / "simple_player.py"
    c = cfg(tmp_path, bots=("random", f"cmd:{sys.executable} {player}"), games_per_pair=80, chunk_size=10)
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc,
        distributed.Client(lc) as client,
    ):
        res = run_tournament(c, client=client, progress=False)
    assert res.status == "complete"
    assert (res.games["error"] == "").all(), res.games["error"].unique()[:3]
    local = run_tournament(c.replace(name="local", workers=1), progress=False)
    assert canonical(res.games).equals(canonical(local.games))


def test_a_real_scheduler_with_two_worker_processes_plays_the_same_games(tmp_path, cluster, local_games):
    address, _, _ = cluster
    res = run_tournament(cfg(tmp_path, scheduler=address), progress=False)  # the config's scheduler key
    assert res.status == "complete"
    assert canonical(res.games).equals(local_games)
    assert canonical(res.hands).equals(canonical(run_tournament(cfg(tmp_path, name="again"), progress=False).hands))


def test_a_user_bot_file_is_shipped_as_content_and_needs_no_shared_folder(tmp_path, cluster):
    address, client, _ = cluster
    bot = tmp_path / "private" / "mine.py"
    bot.parent.mkdir()
    bot.write_text(
        '"""simple under my name."""\nfrom bots.simple import take_upcard, draw, big_gin, discard, knock\n'
        'NAME = "mine"\n'
    )
    local = run_tournament(cfg(tmp_path, name="l", bots=("random", str(bot))), progress=False)
    remote = run_tournament(cfg(tmp_path, name="r", bots=("random", str(bot))), client=client, progress=False)
    assert canonical(local.games).equals(canonical(remote.games))
    # The workers loaded it under a name made from its hash, from their own cache, not from our path.
    seen = client.run(lambda: sorted(m for m in sys.modules if m.startswith("arena_bot_")))
    loaded = {m for names in seen.values() for m in names}
    assert loaded and all(len(m) == len("arena_bot_") + 16 for m in loaded)


def test_sigkill_of_a_dask_worker_mid_run_still_gives_the_identical_games(tmp_path, cluster, local_games):
    address, client, workers = cluster
    victim = workers[0]
    killed = []

    def kill_after_first_chunk(done: int, total: int) -> None:
        if not killed and done > 0:
            os.kill(victim.pid, signal.SIGKILL)
            killed.append(time.monotonic())

    res = run_tournament(cfg(tmp_path, games_per_pair=400), client=client, progress=kill_after_first_chunk)
    assert killed and victim.wait(timeout=10) == -signal.SIGKILL
    assert res.status == "complete"
    expected = canonical(run_tournament(cfg(tmp_path, name="ref", games_per_pair=400), progress=False).games)
    assert canonical(res.games).equals(expected)


def test_a_worker_running_another_gin_arena_refuses_the_chunk_in_one_line(cluster):
    """A worker with another gin-arena installed (its engine scored a gin 5 points higher) played the
    chunks by its own code, and the driver stored its games as its own: only the built-in bots'
    hashes were compared.  A chunk carries its driver's code identity; another one is refused."""
    from arena.loading.load import load_bot
    from arena.run.plan import BotSpec, code_identity, plan_matchup
    from arena.run.schedule import ChunkFailure, DaskCluster
    from arena.run.worker import ChunkResult
    from arena.settings.rules import load_rules

    _, client, _ = cluster
    specs = [BotSpec.of(load_bot(b)) for b in ("random", "simple")]
    plan = dict(seed=1, games=4, duplicate=True, chunk_size=4, record_hands=False, per_game_seconds=1.0)
    _, tasks = plan_matchup(*specs, matchup_no=0, rules=load_rules("standard"), chunk_floor_seconds=10.0, **plan)
    assert tasks[0].code == code_identity() and code_identity().startswith(__import__("arena").__version__)
    other = dataclasses.replace(tasks[0], code="0.0.9 (code 0123456789abcdef)")
    ok, refused = list(DaskCluster(client).results([tasks[0]])), list(DaskCluster(client).results([other]))
    assert isinstance(ok[0], ChunkResult) and len(ok[0].games) == 4
    assert isinstance(refused[0], ChunkFailure)
    assert refused[0].reason == (
        f"WorkerError: this worker runs gin-arena {code_identity()}, the driver 0.0.9 (code 0123456789abcdef): "
        "its games would be another engine's; install the same gin-arena on every machine"
    )


def test_an_analysis_pass_on_a_worker_running_another_gin_arena_is_refused_in_one_line(cluster, monkeypatch):
    """Chunks carry their driver's code identity, but the analysis passes (arena analyze, luck) sent
    to the same workers did not: a worker with another engine graded and valued the stored games by
    its own rules, in silence.  Every task an executor runs on Dask is checked now."""
    from arena.run import schedule
    from arena.run.plan import code_identity

    _, client, _ = cluster
    assert list(schedule.map_in_order(abs, [-3, 2, -1], client=client)) == [3, 2, 1]
    monkeypatch.setattr(schedule, "code_identity", lambda: "0.0.9 (code 0123456789abcdef)", raising=False)
    with pytest.raises(schedule.TaskFailed) as refused:
        list(schedule.map_in_order(abs, [-3, 2], client=client))
    assert f"this worker runs gin-arena {code_identity()}, the driver 0.0.9 (code 0123456789abcdef)" in str(
        refused.value
    )


# --- a lost scheduler --------------------------------------------------------------------------


@pytest.fixture
def own_cluster(tmp_path) -> Iterator[Cluster]:
    """A scheduler and one worker of this test's own, which the test may kill and start again."""
    with dask_cluster(tmp_path / "dask-logs") as c:
        yield c


def _restart(c: Cluster) -> None:
    c.start_scheduler()
    c.start_worker()


def _kill_after_first_chunk(run_dir: Path, victim: subprocess.Popen, then=None) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            idx = run_dir / "index.jsonl"
            if idx.exists() and '"type":"chunk"' in idx.read_text():
                victim.kill()
                victim.wait()
                if then is not None:
                    time.sleep(1.0)
                    then()
                return
            time.sleep(0.05)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def _toml(tmp_path: Path, **kw) -> Path:
    c = cfg(tmp_path, games_per_pair=400, **kw)
    p = tmp_path / "d.toml"
    p.write_text(
        f'name = "{c.name}"\nbots = {list(c.bots)!r}\ngames_per_pair = {c.games_per_pair}\n'
        f'chunk_size = {c.chunk_size}\nseed = {c.seed}\nworkers = 2\nresults_dir = "{c.results_dir}"\n'.replace(
            "'", '"'
        )
    )
    return p


def test_a_lost_scheduler_is_one_line_exit_3_and_the_stored_chunks_resume_locally(tmp_path, own_cluster):
    from typer.testing import CliRunner

    from arena.cli.main import EXIT_ENV, app
    from arena.run.store import RunStore

    address = own_cluster.address
    conf = _toml(tmp_path)
    run_dir = tmp_path / "results" / "d"
    watcher = _kill_after_first_chunk(run_dir, own_cluster.schedulers[0])
    out = CliRunner().invoke(app, ["run", str(conf), "--quiet", "--no-report", "--scheduler", address])
    watcher.join(timeout=5)
    assert out.exit_code == EXIT_ENV, out.output
    assert "Traceback" not in out.output and "CancelledError" not in out.output
    errors = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out.output
    assert f"lost the Dask scheduler at {address}" in errors[0]
    assert "Run the same command to resume" in errors[0] and "--retry-scheduler" in errors[0]
    print(f"FAULT | lost Dask scheduler | exit {out.exit_code} | {errors[0]}")  # the closing note's table
    import json

    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "failed"
    kept = RunStore(run_dir).n_chunks()
    assert kept >= 1
    again = CliRunner().invoke(app, ["run", str(conf), "--quiet", "--no-report", "--scheduler", ""])
    assert again.exit_code == 0, again.output
    expected = canonical(run_tournament(cfg(tmp_path, name="ref", games_per_pair=400), progress=False).games)
    assert canonical(RunStore(run_dir).games()).equals(expected)


def test_retry_scheduler_waits_for_a_new_scheduler_and_the_run_completes(tmp_path, own_cluster):
    from typer.testing import CliRunner

    from arena.cli.main import app
    from arena.run.store import RunStore

    address = own_cluster.address
    conf = _toml(tmp_path)
    run_dir = tmp_path / "results" / "d"
    watcher = _kill_after_first_chunk(run_dir, own_cluster.schedulers[0], then=lambda: _restart(own_cluster))
    out = CliRunner().invoke(
        app, ["run", str(conf), "--quiet", "--no-report", "--scheduler", address, "--retry-scheduler", "2"]
    )
    watcher.join(timeout=5)
    assert out.exit_code == 0, out.output
    assert "lost the Dask scheduler" in out.output  # said once, as a warning, while it waited
    expected = canonical(run_tournament(cfg(tmp_path, name="ref", games_per_pair=400), progress=False).games)
    assert canonical(RunStore(run_dir).games()).equals(expected)


def test_a_cluster_with_no_worker_is_said_while_the_run_waits_and_a_worker_that_joins_finishes_it(tmp_path):
    """A run on a scheduler with no worker (never started, or all gone) waited without a word."""
    import select

    from arena.run.store import RunStore

    c = Cluster(tmp_path / "dask-logs")
    try:
        c.start_scheduler()
        conf = _toml(tmp_path)
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "run", str(conf), "--quiet", "--no-report", "--scheduler", c.address],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=c.env,
        )
        said, deadline = "", time.monotonic() + 120
        while "has no worker" not in said and time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stderr], [], [], 1.0)[0]:
                said += proc.stderr.readline()
        assert f"the Dask scheduler at {c.address} has no worker; the run waits for one" in said, said
        assert f"dask worker {c.address}" in said
        c.start_worker()
        _, rest = proc.communicate(timeout=300)
        assert proc.returncode == 0, said + rest
        assert RunStore(tmp_path / "results" / "d").n_games() == 3 * 400  # every matchup, every game
    finally:
        c.stop()


def test_a_policy_file_is_shipped_as_content_and_plays_the_same_games_on_dask(tmp_path, cluster):
    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
    from arena.engine.mlp import random_mlp, save_mlp

    _, client, _ = cluster
    path = tmp_path / "private" / "w.npz"
    path.parent.mkdir()
    save_mlp(path, random_mlp(OBS_SIZE, NUM_ACTIONS, (16,), seed=2))
    bots = ("random", f"policy:{path}")
    local = run_tournament(cfg(tmp_path, name="pl", bots=bots, games_per_pair=40), progress=False)
    remote = run_tournament(cfg(tmp_path, name="pr", bots=bots, games_per_pair=40), client=client, progress=False)
    assert canonical(local.games).equals(canonical(remote.games))
    assert set(local.games["bot_b"]) == {"w"} and (local.games["error"] == "").all()


def test_an_unreachable_scheduler_is_one_line_for_run_analyze_and_luck(tmp_path, monkeypatch):
    """run, analyze and luck connect through one function, and each says so in one line naming the address."""
    from arena.analysis.decisions import AnalysisError, analyse_run
    from arena.analysis.luck import LuckError, analyse_luck
    from arena.run import schedule
    from arena.run.schedule import SchedulerUnreachable, connect_scheduler
    from arena.settings.analysis import AnalysisSettings

    monkeypatch.setattr(schedule, "CONNECT_TIMEOUT", "1s")  # three 10 s waits would say the same

    address = "tcp://127.0.0.1:9"  # the discard port: nothing answers there
    with pytest.raises(SchedulerUnreachable, match=r"^cannot reach the Dask scheduler at tcp://127.0.0.1:9: "):
        connect_scheduler(address, timeout="1s")
    from arena.run.runner import run_tournament
    from arena.settings.config import TournamentConfig

    cfg = TournamentConfig(name="r", games_per_pair=4, chunk_size=4, workers=1, results_dir=str(tmp_path))
    assert run_tournament(cfg, progress=False).status == "complete"
    run = tmp_path / "r"
    # The machine's fault, as for run: analyze and luck pass it through (their commands exit 3).
    with pytest.raises(SchedulerUnreachable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        analyse_run(run, AnalysisSettings(samples=4), scheduler=address)
    with pytest.raises(SchedulerUnreachable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        analyse_luck(run, scheduler=address)
    from arena.run.runner import RunEnvError

    with pytest.raises(RunEnvError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        run_tournament(cfg.replace(name="r2", scheduler=address), progress=False)
    # An address without a port is the input's fault: one line, not Dask's traceback.
    for bad in ("nonsense", "tcp://127.0.0.1"):
        with pytest.raises(AnalysisError, match=f"scheduler address '{bad}' is not tcp://HOST:PORT"):
            analyse_run(run, AnalysisSettings(samples=4), scheduler=bad)
        with pytest.raises(LuckError, match=f"scheduler address '{bad}' is not tcp://HOST:PORT"):
            analyse_luck(run, scheduler=bad)
    from arena.cli.main import EXIT_ENV, EXIT_INPUT, app

    for cmd in ("analyze", "luck"):
        out = CliRunner().invoke(app, [cmd, str(run), "--scheduler", address, "-q"])
        assert out.exit_code == EXIT_ENV and "error: cannot reach the Dask scheduler" in out.output, out.output
        out = CliRunner().invoke(app, [cmd, str(run), "--scheduler", "nonsense", "-q"])
        assert out.exit_code == EXIT_INPUT and "Traceback" not in out.output, out.output


@pytest.mark.parametrize("greeting", [None, b"HTTP/1.0 400 Bad request\r\n\r\n"])
def test_a_server_of_another_kind_at_the_address_is_one_line_not_a_hang(greeting, monkeypatch):
    """An HTTP server sends nothing until asked: Dask's handshake waited forever.  One that answers at once
    had its reply read as a frame length of exabytes (ArrayMemoryError).  The arena reads the scheduler's
    greeting first."""
    import socket
    import threading

    from arena.run import schedule
    from arena.run.schedule import SchedulerUnreachable, connect_scheduler

    monkeypatch.setattr(schedule, "GREETING_SECONDS", 1.0)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    held = []

    def serve() -> None:
        conn, _ = server.accept()
        held.append(conn)
        if greeting is not None:
            conn.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    what = "sent no Dask greeting in 1 s" if greeting is None else "does not speak Dask's protocol"
    try:
        with pytest.raises(SchedulerUnreachable, match=f"at tcp://127.0.0.1:{port}: .*{what}"):
            connect_scheduler(f"tcp://127.0.0.1:{port}")
    finally:
        for c in held:
            c.close()
        server.close()


def test_an_address_where_no_connection_is_answered_is_not_called_a_server_of_another_kind(monkeypatch):
    """A mistyped address or a machine that is down takes no connection at all: that was said as
    "something listens there but sent no Dask greeting (another kind of server?)"."""
    import socket

    from arena.run import schedule
    from arena.run.schedule import SchedulerUnreachable, connect_scheduler

    monkeypatch.setattr(schedule, "GREETING_SECONDS", 1.0)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)  # never accepts: with its queue full, a new connection gets no answer, as at a dead address
    port = server.getsockname()[1]
    queued = [socket.create_connection(("127.0.0.1", port), timeout=1.0)]
    try:
        with pytest.raises(SchedulerUnreachable) as err:
            connect_scheduler(f"tcp://127.0.0.1:{port}")
        assert str(err.value) == (
            f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: no answer to a connection in 1 s (a wrong "
            "address, a machine that is down, or a firewall?)"
        )
    finally:
        for c in queued:
            c.close()
        server.close()


def test_a_chunk_being_played_on_a_dask_worker_moves_the_progress_line_before_it_is_stored(tmp_path, cluster, capsys):
    """A chunk is stored whole when it ends, and a slow bot's chunk can take minutes. Local workers
    share their game counts; Dask workers tell theirs as events through the scheduler, so the line
    moves while the one chunk plays (before, it stood at 0 until the chunk came back)."""
    from tests.run.test_progress import SLOW_BOT

    _, client, _ = cluster
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    one_chunk = cfg(tmp_path, name="slow", bots=(str(tmp_path / "slow.py"), "simple"), games_per_pair=20, chunk_size=20)
    res = run_tournament(one_chunk, client=client, progress=True)
    assert res.status == "complete" and len(res.games) == 20
    counts = [int(line.split("games: ")[1].split("/")[0]) for line in capsys.readouterr().err.splitlines()
              if line.startswith("games: ")]  # fmt: skip
    assert counts and counts[-1] == 20
    assert any(0 < c < 20 for c in counts), counts  # told while the chunk was being played
    assert counts == sorted(counts)
    # The same games as local processes play: telling the count changes nothing in them.
    local = run_tournament(cfg(tmp_path, name="slow-local", bots=one_chunk.bots, games_per_pair=20, chunk_size=20),
                           progress=False)  # fmt: skip
    assert canonical(res.games).equals(canonical(local.games))


@needs_java
def test_a_kit_player_plays_on_a_worker_that_was_never_told_the_kit(tmp_path, monkeypatch):
    """The kit is given once, on the driver (``--eaai-kit`` sets its variable there): a ``dask worker``
    started without ``GIN_ARENA_EAAI_KIT`` plays the player with the driver's kit and the same games as
    local processes (before, every chunk failed there with "eaai players need the EAAI kit").  A
    worker whose own kit differs is refused in one line rather than played on."""
    from arena.external.eaai import KIT_ENV

    tmp_path.chmod(0o755)
    kit, players = compile_kit(tmp_path / "java")
    monkeypatch.setenv(KIT_ENV, str(kit))
    c = Cluster(tmp_path / "dask-logs")
    c.env.pop(KIT_ENV, None)
    try:
        c.start_scheduler()
        c.start_worker()
        c.wait_for_workers(1)
        with distributed.Client(c.address, timeout="60s") as client:
            assert client.run(lambda k=KIT_ENV: os.environ.get(k)) == {w: None for w in client.run(os.getpid)}
            bots = ("simple", f"eaai:{players}:players.KitSimplePlayer")
            remote = run_tournament(cfg(tmp_path, name="kr", bots=bots, games_per_pair=20, chunk_size=10),
                                    client=client, progress=False)  # fmt: skip
            assert remote.status == "complete" and len(remote.games) == 20
            assert (remote.games["forfeit_seat"] < 0).all()
            local = run_tournament(cfg(tmp_path, name="kl", bots=bots, games_per_pair=20, chunk_size=10),
                                   progress=False)  # fmt: skip
            assert canonical(remote.games).equals(canonical(local.games))
            # A worker with a kit of its own that is not the driver's: refused in one line, never played on.
            other = tmp_path / "other-kit"
            shutil.copytree(kit, other)
            (other / "ginrummy" / "extra.txt").write_text("not the driver's kit")
            c.env[KIT_ENV] = str(other)
            first = c.workers[0]
            c.start_worker()
            c.wait_for_workers(2)
            first.terminate()
            first.wait()
            deadline = time.monotonic() + 60
            while len(client.scheduler_info()["workers"]) != 1 and time.monotonic() < deadline:
                time.sleep(0.2)
            bad = run_tournament(cfg(tmp_path, name="kx", bots=bots, games_per_pair=20, chunk_size=10),
                                 client=client, progress=False)  # fmt: skip
            assert bad.status != "complete" and bad.failed_chunks
            assert all("differs on this worker from the driver's" in f for f in bad.failed_chunks), bad.failed_chunks
    finally:
        c.stop()


def test_a_client_that_closes_mid_run_is_the_lost_scheduler_line_not_an_error_from_the_cleanup(cluster):
    """When the scheduler went away the client could be ``closed`` by the time the run stopped; the
    clean-up then cancelled its futures one by one, the first cancel raised Dask's ClosedClientError
    ("Client is closed. Can't send cancel-keys message."), and that error replaced the one-line
    SchedulerLost: ``arena run`` exited 1 with Dask's message, not 3 with ours."""
    from arena.loading.load import load_bot
    from arena.run.plan import BotSpec, plan_matchup
    from arena.run.schedule import DaskCluster, SchedulerLost
    from arena.run.worker import ChunkResult
    from arena.settings.rules import load_rules

    address, _, _ = cluster
    specs = [BotSpec.of(load_bot(b)) for b in ("random", "simple")]
    plan = dict(seed=3, games=24, duplicate=True, chunk_size=4, record_hands=False, per_game_seconds=1.0)
    _, tasks = plan_matchup(*specs, matchup_no=0, rules=load_rules("standard"), chunk_floor_seconds=10.0, **plan)
    assert len(tasks) == 6
    client = distributed.Client(address, timeout="60s")
    try:
        results = DaskCluster(client, window=3).results(tasks)
        assert isinstance(next(results), ChunkResult)
        client.close()  # two chunks still in flight, four not yet submitted
        with pytest.raises(SchedulerLost, match=f"lost the Dask scheduler at {address}"):
            next(results)
    finally:
        client.close()


_SLOW_BOT = '''"""Simple, thinking 2 ms over each discard in plain Python and leaving a mark for each in a file."""

import os
import time

from bots.simple import MEMORY, PARAMS, big_gin, draw, knock, take_upcard
from bots.simple import discard as simple_discard

PLAIN = True


def discard(view, params, memory, rng):
    time.sleep(0.002)
    fd = os.open({beats!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, b".")
    os.close(fd)
    return simple_discard(view, params, memory, rng)
'''


@pytest.mark.parametrize("how", ["ctrl-c", "sprt"])
def test_a_run_that_ends_stops_the_chunks_its_workers_are_playing(tmp_path, own_cluster, how):
    """Dask cannot stop a running task: after Ctrl-C (or a sequential test's decision) the workers played
    their chunks to the end, minutes for a search bot or a kit player, for games nobody would store.  A
    run that ends with chunks in flight now tells the workers, and each chunk stops before its next game."""
    beats = tmp_path / "beats"
    bot = tmp_path / "slow.py"
    bot.write_text(_SLOW_BOT.replace("{beats!r}", repr(str(beats))))
    conf = tmp_path / "slow.toml"
    # An SPRT decides at the end of a chunk: chunks of 200 (about 12 s at 2 ms a discard) decide it sooner
    # than 400, and still run for seconds past the check below, as a chunk not told to stop would.
    size = 400 if how == "ctrl-c" else 200
    conf.write_text(
        f'name = "slow"\nbots = [{str(bot)!r}, "random"]\ngames_per_pair = 4000\nchunk_size = {size}\nseed = 3\n'
        f"workers = 2\nresults_dir = {str(tmp_path / 'results')!r}\n".replace("'", '"')
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(conf), "--quiet", "--no-report"]
        + ["--scheduler", own_cluster.address]
        + (["--sprt"] if how == "sprt" else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=own_cluster.env,
        # as in a terminal: under pytest-xdist the test inherits SIGINT ignored, and so would the run
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 180
        while not (beats.exists() and beats.stat().st_size > 200) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert beats.exists() and beats.stat().st_size > 200, "the chunk never started"
        if how == "ctrl-c":
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == (130 if how == "ctrl-c" else 0), out
    time.sleep(2.0)  # the workers look for the word every half second; the game being played ends
    before = beats.stat().st_size
    time.sleep(4.0)
    assert beats.stat().st_size == before, "a worker still plays the chunk of a run that has gone"
