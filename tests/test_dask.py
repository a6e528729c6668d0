"""Runs on Dask: the same games as local processes, on a LocalCluster and on a real
``dask scheduler`` with two ``dask worker`` processes started here on 127.0.0.1;
a worker killed mid-run changes nothing."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from arena.run import run_tournament  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402
from tests.tables import canonical  # noqa: E402

BIN = Path(sys.executable).parent


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real scheduler and two single-thread workers as separate processes on 127.0.0.1."""
    dask = shutil.which("dask", path=str(BIN)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask-logs")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"],
            stdout=open(logs / "scheduler.log", "w"),
            stderr=subprocess.STDOUT,
            env=env,
        )
    ]
    workers = []
    for i in range(2):
        w = subprocess.Popen(
            [
                dask,
                "worker",
                address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                "--dashboard-address",
                ":0",
                "--name",
                f"w{i}",
            ],
            stdout=open(logs / f"worker{i}.log", "w"),
            stderr=subprocess.STDOUT,
            env=env,
        )
        procs.append(w)
        workers.append(w)
    client = distributed.Client(address, timeout="60s")
    try:
        client.wait_for_workers(2, timeout=120)
        yield address, client, workers
    finally:
        client.close()
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


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
