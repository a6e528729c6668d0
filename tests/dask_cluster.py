"""A real Dask cluster for the tests: ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

The one way tests/run/test_dask.py and tests/league/test_league_dask.py start
and stop a cluster.  Each process logs to a file of its own in ``logs``; the
workers import this checkout (``PYTHONPATH``), single-threaded, without a
nanny, so that a test can kill one and see it gone.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_command() -> str:
    """The ``dask`` command beside this Python (else on PATH); skips the test when there is none."""
    dask = shutil.which("dask", path=str(BIN)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed")
    return dask


class Cluster:
    """The processes of one scheduler address: schedulers (a test may kill one and start another) and workers."""

    def __init__(self, logs: Path):
        self.dask = dask_command()
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.logs = logs
        self.logs.mkdir(parents=True, exist_ok=True)
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
        self.schedulers: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []

    def _start(self, args: list[str], log: str) -> subprocess.Popen:
        with open(self.logs / log, "w") as out:  # the child keeps its own copy of the file
            p = subprocess.Popen([self.dask, *args], stdout=out, stderr=subprocess.STDOUT, env=self.env)
        return p

    def start_scheduler(self) -> subprocess.Popen:
        n = len(self.schedulers)
        args = ["scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--dashboard-address", ":0"]
        self.schedulers.append(self._start(args, f"scheduler-{n}.log"))
        return self.schedulers[-1]

    def start_worker(self) -> subprocess.Popen:
        n = len(self.workers)
        args = ["worker", self.address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1"]
        args += ["--dashboard-address", ":0", "--name", f"w{n}"]
        self.workers.append(self._start(args, f"worker-{n}.log"))
        return self.workers[-1]

    def wait_for_workers(self, n: int) -> None:
        import distributed

        with distributed.Client(self.address, timeout="60s") as client:
            client.wait_for_workers(n, timeout=120)

    def stop(self) -> None:
        """Terminate the workers, then the schedulers; kill any process that lingers 15 s.  Workers first: a
        worker told to stop while its scheduler is closing too waits on the broken connection (15 s, measured)
        where one whose scheduler still answers is gone in well under a second."""
        for group in (self.workers, self.schedulers):
            for p in group[::-1]:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@contextmanager
def dask_cluster(logs: Path, workers: int = 1) -> Iterator[Cluster]:
    """A scheduler and ``workers`` worker processes, ready (every worker joined); stopped on the way out."""
    cluster = Cluster(logs)
    try:
        cluster.start_scheduler()
        for _ in range(workers):
            cluster.start_worker()
        cluster.wait_for_workers(workers)
        yield cluster
    finally:
        cluster.stop()
