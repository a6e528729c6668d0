"""Where chunks are played: in this process, in local worker processes, or on Dask.

Every schedule has one method, ``results(tasks)``: a generator that plays
the tasks and yields a :class:`~arena.run.worker.ChunkResult` or a
:class:`ChunkFailure` for each, in the order they finish.  A schedule made
with ``play=f`` runs ``f(task)`` instead of playing chunks: any pure task
with a ``label`` and a ``key`` (``arena analyze`` grades games this way),
with the same pool, watchdog and Dask window, and no time limit unless the
task has a ``time_limit``.  It keeps only a
window of tasks in flight (so results never pile up in memory), and closing
the generator - an SPRT stop, Ctrl-C, an error in the driver - stops every
worker it started.

Local processes (:class:`LocalProcesses`) are a small pool of our own rather
than ``concurrent.futures``: a worker that dies takes only the chunk it
held (that chunk is tried once more in a fresh process, then reported
failed) and is replaced, where a ``ProcessPoolExecutor`` breaks as a whole;
a worker that dies while idle (between chunks) is found when it is given its
next chunk, and replaced; a worker stopped by SIGSTOP for
:data:`STOPPED_GRACE` seconds is killed and its chunk tried once more, like
a worker that died (the games of a chunk depend only on its task, so a
replayed chunk is the same chunk); a chunk that runs past its time limit
gets its worker killed (a bot stuck in a compiled loop can't be interrupted
any other way) and is reported with the bot and the decision that was being
asked; and workers die with the driver (``PR_SET_PDEATHSIG`` on Linux, and a
watch on the parent's pid elsewhere), so ``kill -9`` of ``arena run`` leaves
no process behind.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.engine.contract import PHASE_FUNCTION
from arena.external.limits import batch_limit
from arena.run.plan import ChunkTask, code_identity
from arena.run.store.meta import stdout_log_stem
from arena.run.worker import (
    P_ASKED,
    P_COMPILING,
    P_PHASE,
    P_ROWS,
    P_SEAT,
    P_SIZE,
    P_STOP,
    P_SWAP,
    ChunkResult,
    games_finished,
    play_chunk,
    same_code,
)

log = logging.getLogger("arena.schedule")


@dataclass
class ChunkFailure:
    """A chunk that could not be played; ``reason`` is one line."""

    task: ChunkTask | Any  # the task of the schedule's ``play`` when it has one
    reason: str


Outcome = ChunkResult | ChunkFailure


#: A schedule's work: a pure function of one task (by default, playing a chunk).  Its tasks have a
#: ``label`` (for log lines) and a ``key`` (for Dask), and may have a ``time_limit`` in seconds.
Play = Callable[[Any], Any]


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away mid-run; the chunks already yielded are the caller's to keep."""

    def __init__(self, address: str) -> None:
        super().__init__(f"lost the Dask scheduler at {address}")
        self.address = address


class SchedulerUnreachable(RuntimeError):
    """No client for a Dask scheduler's address: it did not answer (the message is one line)."""


class DaskMissing(SchedulerUnreachable):
    """A scheduler address was given, but Dask (``distributed``) is not installed."""


class SchedulerAddressError(ValueError):
    """A scheduler address that names no place to connect to (the message is one line)."""


#: How long ``arena run``, ``analyze`` and ``luck`` wait for a scheduler to answer.
CONNECT_TIMEOUT = "10s"
#: A Dask scheduler greets a new connection at once: seconds to wait for that greeting.
GREETING_SECONDS = 5.0
#: The greeting's first 8 bytes are the length of its first frames: a handshake's is a few hundred bytes.
_MAX_GREETING = 1 << 20


def _tcp_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``tcp://host:port`` or ``host:port`` address; None for another protocol (Dask's own
    checks then); :class:`SchedulerAddressError` when it has no port."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme != "tcp":
        return None
    host, colon, port = rest.rstrip("/").rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SchedulerAddressError(f"scheduler address {address!r} is not tcp://HOST:PORT (e.g. tcp://127.0.0.1:8786)")
    return host.strip("[]"), int(port)


def _probe(address: str, host: str, port: int, seconds: float) -> None:
    """Check that a Dask scheduler answers at ``host:port`` before Dask's client is made: its handshake
    waits forever on a server of another kind (an HTTP server answers nothing until asked) and reads an
    HTTP reply as a frame length of exabytes."""
    import socket
    import struct

    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except TimeoutError:  # nothing answered at all: not a server of another kind
        raise SchedulerUnreachable(
            f"cannot reach the Dask scheduler at {address}: no answer to a connection in {seconds:g} s (a wrong "
            "address, a machine that is down, or a firewall?)"
        ) from None
    except OSError as exc:
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        with sock:
            sock.settimeout(seconds)
            got = b""
            while len(got) < 8:
                part = sock.recv(8 - len(got))
                if not part:
                    break
                got += part
    except TimeoutError:
        raise SchedulerUnreachable(
            f"cannot reach the Dask scheduler at {address}: something listens there but sent no Dask "
            f"greeting in {seconds:g} s (another kind of server?)"
        ) from None
    except OSError as exc:
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    if len(got) < 8 or not 0 < struct.unpack("<Q", got)[0] <= _MAX_GREETING:
        raise SchedulerUnreachable(
            f"cannot reach the Dask scheduler at {address}: the server there does not speak Dask's protocol"
        )


def connect_scheduler(address: str, timeout: str | None = None) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, for ``arena run``, ``analyze`` and ``luck``.

    :class:`DaskMissing` without Dask, :class:`SchedulerAddressError` for an address without a
    port, :class:`SchedulerUnreachable` (one line naming the address) when no Dask scheduler
    answers there within ``timeout`` (default :data:`CONNECT_TIMEOUT`), or something else does;
    each caller words the first for its own option and maps the others to its own errors.
    """
    timeout = timeout or CONNECT_TIMEOUT
    try:
        from distributed import Client
    except ImportError:
        raise DaskMissing("Dask is not installed: pip install 'gin-arena[dask]'") from None
    endpoint = _tcp_endpoint(address)
    if endpoint is not None:
        _probe(address, *endpoint, GREETING_SECONDS)
    try:
        return Client(address, timeout=timeout)
    except ValueError as exc:  # Dask's own check of an address of another protocol
        raise SchedulerAddressError(f"scheduler address {address!r}: {exc}") from None
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {address}: {exc}") from None


class Inline:
    """Play every chunk in this process, one after another (debugging, tests)."""

    workers = 1

    def __init__(self, play: Play | None = None) -> None:
        self.play = play

    def results(self, tasks: Iterable[Any]) -> Iterator[Any]:
        from arena.run.worker import WorkerError

        if self.play is not None:
            for t in tasks:
                yield self.play(t)
            return
        for t in tasks:
            try:
                yield play_chunk(t)
            except WorkerError as exc:
                yield ChunkFailure(t, str(exc))


# --- local worker processes -------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    """End this process when the driver ends, however it ends."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the driver died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="arena-parent-watch").start()


def _capture_fd1():
    """Send what bots print at the C level (fd 1) to a scratch file read after each chunk."""
    import tempfile

    try:
        sys.stdout.flush()
        scratch = tempfile.TemporaryFile()
        os.dup2(scratch.fileno(), 1)
        return scratch
    except OSError:
        return None


def _drain(scratch) -> str:
    if scratch is None:
        return ""
    try:
        scratch.flush()
        size = os.lseek(1, 0, os.SEEK_CUR)
        if size <= 0:
            return ""
        os.lseek(1, 0, os.SEEK_SET)
        data = os.read(1, min(size, 64 * 1024))
        os.ftruncate(1, 0)
        os.lseek(1, 0, os.SEEK_SET)
        return data.decode(errors="replace")
    except OSError:
        return ""


def _worker_main(conn, raw, parent_pid: int, play: Play | None = None) -> None:
    """A worker process: play the chunks (or run ``play`` on the tasks) the driver sends until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    _die_with_parent(parent_pid)
    from arena.run.store import close_inherited_locks

    close_inherited_locks()
    scratch = _capture_fd1()
    progress = np.frombuffer(raw, dtype=np.int64)
    _count_compiles(progress)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            break
        if task is None:
            break
        try:
            if play is not None:
                msg: tuple[str, Any] = ("ok", play(task))
            else:
                res = play_chunk(task, progress, catch_exits=True)
                out = _drain(scratch)
                if out:
                    key = stdout_log_stem(task.bot_a.name, task.bot_b.name)
                    res.logs[key] = res.logs.get(key, f"--- {task.label}\n") + out
                msg = ("ok", res)
        except BaseException as exc:  # noqa: BLE001 - anything a bot does must come back as a failure
            msg = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(msg)
        except (BrokenPipeError, OSError):
            break
    os._exit(0)


def _count_compiles(progress: np.ndarray) -> None:
    """Keep ``progress[P_COMPILING]`` at the number of numba compilations under way in this process.

    A plain bot's first call of a compiled helper compiles it (or loads it from the cache) inside a
    decision; the watchdog must not take those seconds for a stuck bot.  numba announces every use
    of its compiler lock as a ``numba:compiler_lock`` event.
    """
    from numba.core import event

    class Compiling(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            progress[P_COMPILING] += 1

        def on_end(self, ev: event.Event) -> None:
            progress[P_COMPILING] -= 1

    progress[P_COMPILING] = 0
    event.register("numba:compiler_lock", Compiling())


#: A chunk may take this many times its time limit in wall-clock time (a loaded machine) while its
#: CPU time stays within the limit; a worker that is stuck without using CPU is stopped then.
WALL_FACTOR = 4.0

#: Seconds a busy worker may stay stopped (SIGSTOP, a debugger's stop) before it is killed and its chunk is
#: played again by a fresh worker; the operator who stopped it to look may let it go on (SIGCONT) before.
STOPPED_GRACE = 30.0


def _stopped(pid: int) -> bool:
    """Whether a process is stopped (state T: SIGSTOP; t: stopped by a tracer); False where it can't be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, all threads) a process has used, or None where it can't be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def bots_allowance(task: ChunkTask) -> float:
    """Wall-clock seconds the chunk's external bots may use within their own limits.

    Each game may take ``game_s`` of answers and a restart (``start_s``) per
    bot in its own process, plus the first answers of each decision, which
    may take ``start_s`` while a sandboxed file compiles: in each of the
    chunk's two parts, since a bot's processes start afresh with each
    seating (:func:`arena.run.worker._end_part`), and for each seat of a bot
    playing itself.  The worker waits on them without using CPU, so the
    watchdog's CPU limit never counts it.
    """
    from arena.external.limits import Limits

    n = (task.pair_hi - task.pair_lo) * (2 if task.duplicate else 1)
    seats = 2 if task.bot_a.name == task.bot_b.name else 1
    total = 0.0
    for spec in {task.bot_a.name: task.bot_a, task.bot_b.name: task.bot_b}.values():
        if spec.kind in ("command", "sandbox", "eaai"):
            lim = Limits(**dict(spec.limits))
            total += n * (lim.game_s + lim.start_s) + 2 * seats * 6 * lim.start_s
    return total


class _Slot:
    def __init__(self, ctx, play: Play | None = None) -> None:
        self.raw = ctx.RawArray("q", P_SIZE)
        self.progress = np.frombuffer(self.raw, dtype=np.int64)
        here, there = ctx.Pipe()
        self.conn = here
        self.proc = ctx.Process(
            target=_worker_main, args=(there, self.raw, os.getpid(), play), daemon=True, name="arena-worker"
        )
        self.proc.start()
        there.close()
        self.task: Any = None  # a ChunkTask, or the task of the schedule's play
        self.started = 0.0
        self.cpu0: float | None = None
        self.wall_limit = 0.0
        self.retry = False
        self.stopped_since: float | None = None
        self.played = 0  # chunks given to this worker
        self.seen = 0  # games of its chunk it has been seen to finish
        # the decision being watched: the worker's decision count, and its CPU time when the count last moved
        self.asked = 0
        self.asked_cpu = 0.0

    def give(self, task: Any, retry: bool) -> bool:
        """Send the worker a chunk; False when it can't take it (it died while idle: the pipe is broken)."""
        self.progress[:P_COMPILING] = -1  # the worker keeps its count of compilations
        self.asked, self.asked_cpu = 0, 0.0
        self.seen = 0
        self.task, self.retry, self.started = task, retry, time.monotonic()
        self.stopped_since = None
        self.cpu0 = _cpu_seconds(self.proc.pid) if self.proc.pid else None
        # Without a CPU clock (not Linux) the wall clock is the measure, as before.
        limit = getattr(task, "time_limit", None)
        if limit is None:  # a task of the schedule's play with no limit of its own
            self.wall_limit = float("inf")
        else:
            self.wall_limit = limit * (WALL_FACTOR if self.cpu0 is not None else 1.0) + bots_allowance(task)
        try:
            self.conn.send(task)
        except OSError:  # BrokenPipeError, ConnectionResetError: no reader at the other end
            self.task = None
            return False
        self.played += 1
        return True

    def games_done(self) -> int:
        """Games of this slot's chunk that its worker has finished: a chunk is stored whole, when it
        ends, so this is what the progress line shows of it meanwhile (never less than before)."""
        t = self.task
        if not isinstance(t, ChunkTask):
            return 0
        self.seen = max(self.seen, games_finished(t, self.progress))
        return self.seen

    def end(self) -> str:
        """Reap a worker that died (or kill one that must go): how it ended, for a log line."""
        self.proc.join(timeout=5)
        code = self.proc.exitcode
        self.kill()
        if code is None:
            return "killed by the driver"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def stalled(self, now: float) -> bool:
        """Whether this busy worker has been stopped (SIGSTOP) for :data:`STOPPED_GRACE` seconds."""
        if self.task is None or not self.proc.pid or not _stopped(self.proc.pid):
            self.stopped_since = None
            return False
        if self.stopped_since is None:
            self.stopped_since = now
        return now - self.stopped_since >= STOPPED_GRACE

    def over_limit(self, now: float) -> str:
        """Why this slot's chunk ran past its limits ("" if it did not), with what it was asking."""
        t = self.task
        if t is None or getattr(t, "time_limit", None) is None:
            return ""
        wall = now - self.started
        if self.cpu0 is not None and self.proc.pid:
            cpu = _cpu_seconds(self.proc.pid)
            if cpu is not None and cpu - self.cpu0 > t.time_limit:
                return f"timed out after {t.time_limit:.0f} s{self.asking()} (CPU time of its worker)"
            if cpu is not None:
                stuck = self.stuck(cpu)
                if stuck:
                    return stuck
        if wall > self.wall_limit:
            return (
                f"timed out after {self.wall_limit:.0f} s{self.asking()} (wall clock; the limit includes "
                "the time its external bots may take within their own limits)"
            )
        return ""

    def kill(self) -> None:
        if self.proc.is_alive():
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, TypeError):
                pass
        self.proc.join(timeout=5)
        self.conn.close()

    def stuck(self, cpu: float) -> str:
        """Why the bot being asked counts as stuck ("" if it does not): the worker's decision count
        stood still while the worker used ``task.decision_limit`` seconds of CPU, compilations left out.

        An in-process bot's decision can't be interrupted (it may be compiled code), so its worker is
        stopped; a bot in its own process waits without CPU here, and has its own limits.  A batched
        policy's call of ``n`` games (one ask) may take ``n`` times the limit, at most the larger of
        the limit and ``task.game_limit``: the time a walled policy's batch gets
        (:meth:`arena.external.client.ExternalBot.act`).
        """
        t = self.task
        asked = int(self.progress[P_ASKED])
        if t is None or asked <= 0 or self.progress[P_COMPILING] > 0 or asked != self.asked:
            self.asked, self.asked_cpu = asked, cpu  # a new decision (or none, or a compilation): watch anew
            return ""
        rows = int(self.progress[P_ROWS])
        limit = batch_limit(t.decision_limit, t.game_limit, rows)
        if t.decision_limit <= 0 or cpu - self.asked_cpu <= limit:
            return ""
        who = self.bot_asked()
        if who is None:
            return ""
        bot, fn = who
        if rows > 1:
            return (
                f"bot '{bot}' was stuck in act() for {cpu - self.asked_cpu:.0f} s of CPU time, on a batch of {rows} "
                f"decisions (the first {fn}()), over the {limit:g} s such a batch may take ({t.decision_limit:g} s a "
                "decision, [limits] decision_seconds); its worker was stopped"
            )
        return (
            f"bot '{bot}' was stuck in {fn}() for {cpu - self.asked_cpu:.0f} s of CPU time, over the "
            f"{t.decision_limit:g} s one decision may take ([limits] decision_seconds); its worker was stopped"
        )

    def bot_asked(self) -> tuple[str, str] | None:
        """``(bot name, decision function)`` the worker is known to be asking, else None."""
        seat, phase, swap = (int(self.progress[i]) for i in (P_SEAT, P_PHASE, P_SWAP))
        t = self.task
        if not isinstance(t, ChunkTask) or seat not in (0, 1) or swap not in (0, 1) or phase not in PHASE_FUNCTION:
            return None
        bot = t.bot_a if (seat ^ swap) == 0 else t.bot_b
        return bot.name, PHASE_FUNCTION[phase]

    def asking(self) -> str:
        """`` while asking bot 'x' for d()`` when the worker is known to be asking a decision, else ""."""
        who = self.bot_asked()
        if who is None:
            return ""
        rows = int(self.progress[P_ROWS])
        batch = f" (in a batch of {rows} decisions)" if rows > 1 else ""
        return f" while asking bot '{who[0]}' for {who[1]}(){batch}"


#: What ``next`` gives for a task iterator that has no more.
_NO_TASK = object()


class LocalProcesses:
    """A pool of ``workers`` local processes with a watchdog (see the module doc)."""

    def __init__(self, workers: int, play: Play | None = None) -> None:
        self.workers = max(1, workers)
        self.play = play
        #: Called about every second with the games finished inside the chunks still being played
        #: (the progress line counts them before their chunk is stored).
        self.on_progress: Callable[[int], None] | None = None
        methods = multiprocessing.get_all_start_methods()
        # fork: workers inherit the compiled kernels and the loaded bots.
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")

    def results(self, tasks: Iterable[Any]) -> Iterator[Any]:
        # Tasks are taken from ``tasks`` as workers free up, not all at once: an analysis pass's tasks
        # carry their games and action logs, and a list of them all grew with the run (luck with two
        # workers held about 0.75 KB per game).  ``queue`` holds the tasks taken and put back.
        source = iter(tasks)
        queue: deque[tuple[Any, bool]] = deque()
        for t in source:
            queue.append((t, False))
            if len(queue) >= self.workers:
                break
        slots = [_Slot(self.ctx, self.play) for _ in range(min(self.workers, len(queue)) or 1)]
        try:
            while True:
                for i in range(len(slots)):
                    if slots[i].task is None and not queue and (t := next(source, _NO_TASK)) is not _NO_TASK:
                        queue.append((t, False))
                    while slots[i].task is None and queue:
                        task, retry = queue.popleft()
                        s = slots[i]
                        if s.give(task, retry):
                            break
                        # It died while idle (a signal between chunks): a fresh worker takes the chunk.
                        how = s.end()
                        slots[i] = _Slot(self.ctx, self.play)
                        if s.played:
                            log.warning("a worker process died between chunks (%s); started another", how)
                            queue.appendleft((task, retry))
                        elif retry:  # a fresh worker that could not take a chunk, twice: don't loop for ever
                            yield ChunkFailure(task, f"its worker process died before it began, twice ({how})")
                        else:
                            log.warning("a new worker process died before it began (%s); started another", how)
                            queue.appendleft((task, True))
                busy = [s for s in slots if s.task is not None]
                if not busy:
                    return
                if self.on_progress is not None:
                    self.on_progress(sum(s.games_done() for s in busy))
                now = time.monotonic()
                wait_s = min(1.0, max(0.01, min(s.started + s.wall_limit - now for s in busy)))
                waitables = {s.conn: s for s in busy}
                waitables.update({s.proc.sentinel: s for s in busy})
                ready = multiprocessing.connection.wait(list(waitables), timeout=wait_s)
                handled: set[int] = set()
                for r in ready:
                    s = waitables[r]
                    if id(s) in handled or s.task is None:
                        continue
                    handled.add(id(s))
                    task = s.task
                    msg = None
                    try:
                        if s.conn.poll():
                            msg = s.conn.recv()
                    except (EOFError, OSError):
                        msg = None
                    if msg is not None:
                        s.task = None
                        kind, payload = msg
                        yield payload if kind == "ok" else ChunkFailure(task, payload)
                        continue
                    # the process ended without an answer: it died
                    how = s.end()
                    slots[slots.index(s)] = _Slot(self.ctx, self.play)
                    if s.retry:
                        yield ChunkFailure(task, f"its worker process died twice ({how})")
                    else:
                        log.warning(
                            "a worker process died (%s) playing %s; trying that chunk once more", how, task.label
                        )
                        queue.appendleft((task, True))
                now = time.monotonic()
                for s in list(slots):
                    if s.task is not None and s.stalled(now):
                        # Stopped, not slow: no bot's fault and no progress. A fresh worker plays the chunk.
                        task = s.task
                        s.kill()
                        slots[slots.index(s)] = _Slot(self.ctx, self.play)
                        why = f"stopped (SIGSTOP) for {STOPPED_GRACE:.0f} s"
                        if s.retry:
                            yield ChunkFailure(task, f"its worker process was {why}; the one before was lost too")
                        else:
                            log.warning(
                                "a worker process was %s playing %s; killed it and trying that chunk once more",
                                why,
                                task.label,
                            )
                            queue.appendleft((task, True))
                        continue
                    if s.stopped_since is not None:
                        continue  # stopped, not slow: its time limit waits (the grace above ends it)
                    over = s.over_limit(now)
                    if s.task is not None and over:
                        task = s.task
                        s.kill()
                        slots[slots.index(s)] = _Slot(self.ctx, self.play)
                        yield ChunkFailure(task, over)
        finally:
            for s in slots:
                if s.task is None and s.proc.is_alive():
                    try:
                        s.conn.send(None)
                    except OSError:
                        pass
            for s in slots:
                if s.task is not None:
                    s.kill()
                else:
                    s.proc.join(timeout=2)
                    if s.proc.is_alive():
                        s.kill()
                    else:
                        s.conn.close()


# --- Dask ---------------------------------------------------------------------------------


#: The Dask event topic on which a chunk being played tells its games finished (see :func:`_dask_play`).
PROGRESS_TOPIC = "gin-arena-games"
#: Seconds between two such events of one chunk (only when its count has moved).
PUBLISH_EVERY = 0.5
#: Seconds without a finished chunk before a run first checks that its Dask cluster has a worker, and
#: between such checks after that.
NO_WORKER_FIRST = 5.0
NO_WORKER_EVERY = 30.0
#: Seconds a run that ends with chunks in flight waits to tell the workers to stop them.
STOP_WAIT = 3.0


#: The tokens of the runs that have gone (Ctrl-C, a decided sequential test, a lost scheduler), on this worker:
#: their chunks still being played stop before their next game (see :func:`_stop_run`).
_GONE: set[str] = set()


def _stop_run(token: str) -> None:
    """Run on every worker (``Client.run``) by a run that ends with chunks in flight: Dask cannot stop a
    running task, so the chunks of ``token`` watch for it and stop themselves (:func:`_dask_play`)."""
    _GONE.add(token)


def _dask_play(task: ChunkTask, token: str = "", telling: bool = False) -> ChunkResult:
    """A chunk on a Dask worker (a thread there): bot exits become forfeits too.

    With a ``token`` (the driver's, so that two runs on one cluster don't mix), a thread watches for
    the run's end (:func:`_stop_run`) every :data:`PUBLISH_EVERY` seconds and then stops the chunk
    before its next game (:class:`arena.engine.play.Stopped`): a chunk of a search bot or a kit player
    can take many minutes, which the cluster's workers spent on games nobody would store.  With
    ``telling`` as well, the thread tells the chunk's games finished while it plays, as
    ``[token, key, games]`` events on :data:`PROGRESS_TOPIC`, so the driver's progress line moves
    within a chunk as it does with local workers.  The engine's kernels release the GIL, so the
    thread runs while the games do; the events go through the scheduler.
    """
    worker = _dask_worker() if token else None
    if worker is None:
        return play_chunk(task, None, catch_exits=True)
    progress = np.full(P_SIZE, -1, dtype=np.int64)
    stop = threading.Event()

    def watch() -> None:
        last = 0
        while not stop.wait(PUBLISH_EVERY):
            if token in _GONE:
                progress[P_STOP] = 1
            if not telling:
                continue
            n = games_finished(task, progress)
            if n != last:
                last = n
                worker.log_event(PROGRESS_TOPIC, [token, task.key, n])

    teller = threading.Thread(target=watch, name="gin-arena-chunk-watch", daemon=True)
    teller.start()
    try:
        return play_chunk(task, progress, catch_exits=True)
    finally:
        stop.set()
        teller.join()


def _dask_worker() -> Any:
    """The Dask worker running this task, None outside one (nobody to tell)."""
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


class DaskCluster:
    """Chunks as Dask tasks on a ``distributed.Client``'s cluster.

    Tasks carry their seeds and bots, so any worker can play any chunk and a
    task that Dask runs again after a worker died gives the same games (the
    store ignores a second copy of a stored chunk).  ``window`` tasks are in
    flight at once, a few per worker thread, so results never pile up.
    """

    def __init__(self, client: Any, window: int | None = None, play: Play | None = None) -> None:
        self.client = client
        self.play = play
        threads = sum(client.nthreads().values()) or 1
        self.workers = threads
        self.window = window or max(4, 3 * threads)
        self.token = uuid.uuid4().hex[:8]
        #: Called about every half second with the games finished inside the chunks still being
        #: played, as told by the workers (see :func:`_dask_play`); set by the runner.
        self.on_progress: Callable[[int], None] | None = None
        self._told: dict[str, int] = {}  # task key -> games finished, for the tasks in flight
        self._told_lock = threading.Lock()

    def _hear(self, event: Any) -> None:
        """A worker's event on :data:`PROGRESS_TOPIC` (on the client's thread): keep the count of a
        task of this run still in flight; anything else (another run's, a late one, a malformed
        one) is dropped."""
        msg = event[1] if isinstance(event, tuple | list) and len(event) == 2 else None
        if not (isinstance(msg, list | tuple) and len(msg) == 3 and msg[0] == self.token):
            return
        key, games = msg[1], msg[2]
        if not isinstance(games, int):
            return
        with self._told_lock:
            if key in self._told:
                self._told[key] = max(self._told[key], games)

    def _games_in_flight(self) -> int:
        with self._told_lock:
            return sum(self._told.values())

    def _finished(self, ac: Any) -> Iterator[Any]:
        """The futures of ``ac`` as they finish; with ``on_progress``, told the games in flight meanwhile.
        While none finishes, a cluster with no worker is said every :data:`NO_WORKER_EVERY` seconds: a run
        on a scheduler whose workers are gone (or never came) waited for one without a word."""
        told = 0.0
        checked = time.monotonic() - NO_WORKER_EVERY + NO_WORKER_FIRST
        while not ac.is_empty():
            if ac.has_ready():
                yield next(ac)
                continue
            now = time.monotonic()
            if self.on_progress is not None and now - told >= PUBLISH_EVERY:
                told = now
                self.on_progress(self._games_in_flight())
            if now - checked >= NO_WORKER_EVERY:
                checked = now
                self._say_if_no_worker()
            time.sleep(0.02)  # a finished chunk waits at most this long to be stored

    def _say_if_no_worker(self) -> None:
        try:
            workers = self.client.nthreads()
        except Exception:  # noqa: BLE001 - a scheduler gone: the futures say so, in one line
            return
        if not workers:
            address = self._address()
            log.warning(
                "the Dask scheduler at %s has no worker; the run waits for one (start one: dask worker %s)",
                address,
                address,
            )

    def _lost(self, exc: BaseException | None = None) -> bool:
        """Whether the client has lost its scheduler (its futures are then cancelled, not failed)."""
        if getattr(exc, "reason", "") == "scheduler-connection-lost":
            return True
        if type(exc).__name__ == "CommClosedError":  # the client's own connection closed under a gather
            return True
        return getattr(self.client, "status", "running") not in ("running", "newly-created")

    def _address(self) -> str:
        try:
            return str(self.client.scheduler.address)
        except AttributeError:
            return "?"

    def _stop_chunks_in_flight(self) -> None:
        """Tell every worker this run has gone, so its chunks being played stop (:func:`_stop_run`); at most
        :data:`STOP_WAIT` seconds, and nothing if the scheduler is gone too (then so are the chunks' results)."""

        def send() -> None:
            try:
                self.client.run(_stop_run, self.token, on_error="ignore")
            except Exception:  # noqa: BLE001 - a closed client or a lost scheduler: nobody left to tell
                pass

        sender = threading.Thread(target=send, name="gin-arena-stop", daemon=True)
        sender.start()
        sender.join(STOP_WAIT)

    def results(self, tasks: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        pending = iter(tasks)  # taken one at a time: only the window's tasks are ever in memory
        futures: dict[Any, Any] = {}
        ac = as_completed()
        address = self._address()

        telling = self.play is None and self.on_progress is not None
        if telling:
            try:
                self.client.subscribe_topic(PROGRESS_TOPIC, self._hear)
            except Exception:  # noqa: BLE001 - a closed client: the first submit says so, in one line
                telling = False

        fn = self.play or _dask_play
        extra = () if self.play is not None else (self.token, telling)  # _dask_play's token and telling

        def submit(t: Any) -> None:
            try:
                f = self.client.submit(fn, t, *extra, key=f"{t.key}-{self.token}", pure=False)
            except Exception as exc:  # noqa: BLE001 - a closed client: the scheduler is gone
                if self._lost(exc):
                    raise SchedulerLost(address) from None
                raise
            futures[f] = t
            if telling:
                with self._told_lock:
                    self._told[t.key] = 0
            ac.add(f)

        try:
            for t in itertools.islice(pending, self.window):
                submit(t)
            for f in self._finished(ac):
                t = futures.pop(f)
                with self._told_lock:
                    self._told.pop(t.key, None)
                try:
                    res = f.result()
                except Exception as exc:  # noqa: BLE001 - a task's failure is reported, not raised
                    if self._lost(exc):
                        raise SchedulerLost(address) from None
                    yield ChunkFailure(t, f"{type(exc).__name__}: {exc}")
                else:
                    yield res
                finally:
                    f.release()
                nxt = next(pending, None)
                if nxt is not None:
                    submit(nxt)
        finally:
            try:
                if futures:
                    self.client.cancel(list(futures))
            except Exception:  # noqa: BLE001 - a closed client: the scheduler dropped them with the connection
                pass  # raising here would put "Client is closed" in place of the one line SchedulerLost says
            if futures and self.play is None:
                self._stop_chunks_in_flight()
            if telling:
                with self._told_lock:
                    self._told.clear()
                try:
                    self.client.unsubscribe_topic(PROGRESS_TOPIC)
                except Exception:  # noqa: BLE001 - a closed client has no subscription left to end
                    pass


def executor_for(play: Play, workers: int = 1, client: Any = None) -> Inline | LocalProcesses | DaskCluster:
    """The executor for a pass of pure tasks: Dask with a ``client``, inline with one worker, else local
    processes (``workers = 0``: one per core, as in ``arena run``)."""
    if client is not None:  # another machine: its gin-arena must be this one (chunks carry their own check)
        return DaskCluster(client, play=functools.partial(_on_same_code, play, code_identity()))
    workers = workers or os.cpu_count() or 1
    if workers <= 1:
        return Inline(play=play)
    return LocalProcesses(workers, play=play)


def _on_same_code(play: Play, driver: str, task: Any) -> Any:
    """``play(task)`` on a worker running the driver's gin-arena (:func:`arena.run.worker.same_code`)."""
    same_code(driver)
    return play(task)


class TaskFailed(RuntimeError):
    """A task of :func:`map_in_order` that could not be run (its worker died twice, or it raised); one line."""


@dataclass(frozen=True)
class _Numbered:
    """A task with its place in the pass, and the ``label``/``key`` every executor logs and submits by."""

    index: int
    task: Any
    label: str
    key: str


def _run_numbered(fn: Callable[[Any], Any], item: _Numbered) -> tuple[int, Any]:
    return item.index, fn(item.task)


def map_in_order(fn: Any, tasks: Iterable[Any], *, workers: int = 1, client: Any = None) -> Iterator[Any]:
    """``fn(task)`` for each task, yielded in task order, whoever runs them (so the output never depends on it).

    For analysis passes over stored games (pure tasks that read nothing but
    themselves), on the same executors as the games (:func:`executor_for`:
    the same pool, watchdog and Dask window).  Results that finish early wait
    for the ones before them, so memory holds about one window of results.
    A task that fails is one :class:`TaskFailed` line.
    """
    numbered = (
        _Numbered(i, t, getattr(t, "label", f"task {i}"), f"{getattr(t, 'key', 'task')}-{i}")
        for i, t in enumerate(tasks)
    )
    waiting: dict[int, Any] = {}
    due = 0
    for out in executor_for(functools.partial(_run_numbered, fn), workers, client).results(numbered):
        if isinstance(out, ChunkFailure):
            raise TaskFailed(f"{out.task.label} failed: {out.reason}")
        index, value = out
        waiting[index] = value
        while due in waiting:
            yield waiting.pop(due)
            due += 1
