"""An external program as a :class:`arena.botkit.bot.Bot` on the engine's plain Python path.

:class:`ExternalBot` holds the program's command and limits and up to two
running processes, one per seat (a bot playing itself must not see two
games interleaved on one pipe).  Its five decision functions are ordinary
Python callables ``(view, params, memory, rng) -> int``, so
:func:`arena.engine.play.play_batch` drives it like any plain bot, and an
:class:`~arena.external.process.ExternalBotError` raised in a decision
forfeits that game with the error's message ("timeout: ...").

Game boundaries come from the engine itself: ``begin_game`` zeroes a bot's
``memory``, so ``memory[0] == 0`` marks the first decision of a game (the
bot then sets it to 1; to 2 when a ``hand_over`` line came first, so that
the game's first ``decide`` line still says ``new_game`` and carries the
parameters), and the generator state it seeded is turned back
into the bot's per-game seed (:func:`arena.engine.rng.seed_of_state`; that seed is
a one-way function of the game seed, so it tells the bot nothing about the
deal).  A process that timed out, crashed or wrote garbage is killed and
started afresh at the next game; after three failed starts in a row the
bot forfeits at once instead of waiting for each start to fail.

A program whose hello says ``batch`` (the sandbox host serving a Python or
ONNX policy) is also a batched bot: :meth:`ExternalBot.act` is its
``batch_act``, which sends a whole lockstep batch in one ``act`` line.

Not thread-safe: one ExternalBot plays one batch at a time.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import hashlib
import json
import os
import shlex
import sys
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import numpy as np

from arena.engine.layout import PH_KNOCK, V_HAND, V_KNOCK_LIMIT, V_SEAT
from arena.engine.rng import seed_of_state
from arena.external.limits import Limits, batch_limit
from arena.external.process import STREAK_FORFEIT, BotProcess, ExternalBotError, LogBuffer, start_and_handshake
from arena.external.protocol import (
    DECISION_OF_PHASE,
    ProtocolError,
    act_reply_limit,
    encode_act,
    encode_decide,
    encode_hand_over,
    parse_actions,
    parse_answer,
    parse_melds,
)
from arena.settings.botref import BINARY_POLICY_SUFFIXES, BotRef
from arena.settings.config import START_SECONDS

MAX_FAILED_STARTS = 3
#: ``memory[0]`` of an external bot, which the engine zeroes at each game's start: no line of the game sent
#: yet; a ``hand_over`` line sent first (the game's first hand ended before the seat was asked anything);
#: a ``decide`` line sent.  Until one is, the next ``decide`` line says ``new_game`` and carries ``params``.
_NOT_BEGUN, _BEGUN_BY_HAND_OVER, _DECIDED = 0.0, 2.0, 1.0
#: Failures after which the bot's process is killed; ``max_crashes`` of them in a row forfeit the chunk.
CRASH_REASONS = ("crashed", "timeout", "garbled answer", "no sandbox")

_LIVE: weakref.WeakSet[ExternalBot] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for bot in list(_LIVE):
        if bot._pid == os.getpid():  # never the processes of the parent of a forked copy
            bot.close()


class _Seat:
    """One seat's process and where its current game stands."""

    __slots__ = (
        "proc",
        "game",
        "game_time",
        "seed",
        "failed_starts",
        "answered",
        "compiled",
        "started_game",
        "failed_game",
        "declared",
    )

    def __init__(self) -> None:
        self.answered: set[int] = set()  # decisions this process has answered since it started
        # Decisions (-1: a batch) some process of this seat has answered: the one free (uncharged) first
        # answer of each, which may compile, is not given again to a process started again later.
        self.compiled: set[int] = set()
        self.proc: BotProcess | None = None
        self.game = 0
        self.game_time = 0.0
        self.seed = 0
        self.failed_starts = 0
        self.started_game = False  # a game has started on this seat (since the chunk began)
        self.failed_game = False  # the current game was ended by a crash, timeout or garbage
        self.declared: tuple[int, int] | None = None  # (sets, runs) the bot declared with its knock


class _Decision:
    """A decision function of an external bot (phase fixed); ``.external`` is its bot."""

    __slots__ = ("external", "phase", "__name__", "table_hooks")

    def __init__(self, external: ExternalBot, phase: int):
        self.external = external
        self.phase = phase
        self.__name__ = DECISION_OF_PHASE[phase]
        # The end-of-hand message and the knocker's melds, for a program that asked for them.
        hello = external.hello or {}
        self.table_hooks = external if hello.get("hand_over") or hello.get("melds") else None

    def __call__(self, view, params, memory, rng) -> int:
        return self.external.decide(self.phase, view, params, memory, rng)


def _past_game_time(what: str, limits: Limits) -> ExternalBotError:
    """The forfeit of a bot whose answers ran past the game's time limit."""
    return ExternalBotError("timeout", f"{what} ran past the game's time limit ({limits.game_s:.3g} s of answers)")


class ExternalBot:
    """A bot program talking the protocol of ``docs/PROTOCOL.md`` (see the module docstring)."""

    def __init__(
        self,
        command: list[str],
        cwd: str | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        record_times: bool = False,
        first_answer_s: float | None = None,
        read_paths: tuple[str, ...] = (),
        tracer: tuple[str, ...] = (),
        one_function: bool = False,
    ):
        if not command or not all(isinstance(a, str) for a in command):
            raise ValueError("an external bot's command is a non-empty list of strings")
        self.command = list(command)
        self.cwd = cwd
        self.limits = limits or Limits()
        self.env = env
        self.read_paths = tuple(read_paths)  # more paths the program may read inside the wall
        self.tracer = tuple(tracer)  # a program the bot is started under (check-bot's strace)
        # A program may warm up on the first question of each kind: a JVM loads and compiles its classes,
        # a sandboxed Python file compiles its numba helpers (the sandbox can't save numba's cache).  Its
        # process starts again at each seating, so that first answer of each kind per process may take
        # this long (by default the start limit), later ones decision_s.
        self.first_answer_s = self.limits.start_s if first_answer_s is None else float(first_answer_s)
        # A policy answers every kind of decision with one function (its act): only its very first answer
        # may take first_answer_s.
        self.one_function = one_function
        self.log = LogBuffer(self.limits.log_bytes)
        self.hello: dict | None = None
        self.param_names: tuple[str, ...] = ()
        self.seats = (_Seat(), _Seat())
        self.decisions = 0
        self.restarts = 0
        self.times: list[float] | None = [] if record_times else None
        self.first_times: list[float] = []  # with record_times: the answers given first_answer_s
        self.games_started = 0
        # Seconds of the last batch (act) that count toward its games' time: all of it, but for the seat's
        # first answer, which may compile (arena.engine.lockstep.GameClock; _Seat.compiled).
        self.last_charge = 0.0
        self.new_chunk()
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _kill_seats, self.seats, self._pid)
        _LIVE.add(self)

    # --- processes ---------------------------------------------------------------------------

    def start(self, seat: int = 0) -> dict:
        """Start the process of ``seat`` (if it is not running) and return the bot's hello."""
        s = self.seats[seat]
        if s.proc is not None and s.proc.alive:
            return self.hello or {}
        if s.failed_starts >= MAX_FAILED_STARTS:
            raise ExternalBotError(
                "crashed", f"the bot failed to start {s.failed_starts} times in a row; not trying again"
            )
        if s.proc is not None:
            self.restarts += 1
        try:
            s.proc, hello = start_and_handshake(
                self.command, self.cwd, self.limits, self.log, self.env, self.read_paths, self.tracer
            )
        except ExternalBotError:
            s.failed_starts += 1
            s.proc = None
            raise
        s.failed_starts = 0
        s.answered = set()
        if self.hello is None:
            self.hello = hello
            self.param_names = tuple(hello["params"])
        return hello

    def _after_fork(self) -> None:
        """In a forked copy: the processes belong to the parent; start this copy's own."""
        self.seats = (_Seat(), _Seat())
        self.log = LogBuffer(self.limits.log_bytes)
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _kill_seats, self.seats, self._pid)
        _LIVE.add(self)

    def close(self) -> None:
        """Stop every process of this bot (it starts again if asked to play)."""
        if self._pid != os.getpid():
            return
        for s in self.seats:
            if s.proc is not None:
                s.proc.close()
                s.proc = None

    def end_part(self) -> None:
        """One seating of a chunk's pairs is over: stop every process of this bot.

        With duplicate deals each pair is played twice, seats swapped, and a
        chunk plays all its pairs in one seating, then all in the other.  A
        process that saw a pair's deal from one seat must not be alive while
        the other seating is played: it could tell the process of the other
        seat (two processes of one user can always find some way to talk)
        what the opponent holds there.  So the processes end with each part
        and start again, lazily, in the next: a start per seat and part, not
        per game.  A restart the arena asked for gives the new process its
        free first answers again (a sandboxed file compiles anew).
        """
        if self._pid != os.getpid():
            self._after_fork()  # a forked copy has no process yet
            return
        self.close()
        for s in self.seats:
            s.compiled = set()

    def drain_log(self) -> str:
        """The bot's stderr (and the arena's notes on starts and kills) since the last drain."""
        return self.log.drain()

    # --- deciding ---------------------------------------------------------------------------------

    def new_chunk(self, game_ids: dict[int, int] | None = None) -> None:
        """A new chunk starts: the crash streak and the count of failed starts start over; ``game_ids``
        maps each game's per-seat bot seed to the game's id in the matchup (sent as ``game``).

        A worker keeps its bots for its whole life, chunk after chunk and matchup after matchup: a
        count of failed starts kept across chunks made a bot that failed three starts in one chunk
        (a machine busy for a while, a file briefly missing) forfeit every later game in that worker.
        """
        self.crash_streak = 0
        self.last_crash = ""
        self.game_ids = dict(game_ids or {})
        for s in self.seats:
            s.failed_starts = 0

    def decide(self, phase: int, view: np.ndarray, params: np.ndarray, memory: np.ndarray, rng: np.ndarray) -> int:
        v = view.tolist()
        s = self.seats[v[V_SEAT]]
        what = DECISION_OF_PHASE[phase] + "()"
        begun = memory[0]
        new_game = begun != _DECIDED
        if begun == _NOT_BEGUN:
            s = self._new_game(v[V_SEAT], memory, rng)
        memory[0] = _DECIDED
        proc = s.proc
        if proc is None or not proc.alive:
            raise ExternalBotError("crashed", "the bot's process is not running")
        params_json = None
        if new_game:
            params_json = json.dumps(dict(zip(self.param_names, params.tolist())), separators=(",", ":"))
        line = encode_decide(v, s.game, s.seed, new_game, params_json)
        limits = self.limits
        left = limits.game_s - s.game_time
        budget = min(limits.decision_s, left)
        first = (not s.answered if self.one_function else phase not in s.answered) and budget < self.first_answer_s
        if first:
            budget = self.first_answer_s
        free = first and (not s.compiled if self.one_function else phase not in s.compiled)
        if budget <= 0:
            # The game's time is spent (a charged first answer took it past the limit).  Asked anyway with
            # a deadline already passed, a fast program's answer could still be read in the poll's last
            # millisecond, so whether the game was forfeited depended on the scheduler.
            exc = _past_game_time(what, limits)
            proc.kill("timeout")
            self._crashed(s, exc)
            raise exc
        t0 = time.perf_counter()
        try:
            answer = proc.request(line, budget, what)
        except ExternalBotError as exc:
            self._crashed(s, exc)
            if exc.reason == "timeout" and budget < limits.decision_s and not first:
                raise _past_game_time(what, limits) from None
            raise
        except BaseException:  # Ctrl-C while waiting: an answer may still come; never read it as the next one
            proc.kill("interrupted")
            raise
        finally:
            dt = time.perf_counter() - t0
            s.game_time += 0.0 if free else dt  # compiling is not thinking time
            self.decisions += 1
            if self.times is not None:  # a first answer given the start limit is timed apart: it may compile
                (self.first_times if first else self.times).append(dt)
        s.answered.add(phase)
        s.compiled.add(phase)
        try:
            action = parse_answer(answer, DECISION_OF_PHASE[phase])
        except ProtocolError as exc:
            if exc.reason == "garbled answer":
                proc.kill(exc.reason)  # out of step: start afresh next game
                self._crashed(s, exc)
            raise ExternalBotError(exc.reason, exc.detail) from None
        s.declared = None
        if phase == PH_KNOCK and action == 1 and (self.hello or {}).get("melds"):
            s.declared = self._ask_melds(s, proc, v, line, budget)
        return action

    def act(self, obs: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        """A batch of decisions in one ``act`` line (a program whose hello said ``batch``): the bot's ``batch_act``.

        ``rng`` is the lockstep driver's :class:`arena.engine.lockstep.RowRng`; its keys go with the
        rows, so the program's ``act`` draws the numbers it would draw in the arena's process.  The
        answer may take ``n`` times the time per decision, at most the time per game (and the
        start limit for a process's first answer, which may compile), and each game of the batch is
        charged an equal share of it toward its time per game (``last_charge``: the lockstep driver
        then forfeits a game whose shares run past ``game_s``).  Seat 0's process answers
        every batch: a batch holds no game state, so one process serves a bot playing itself too.
        A timeout, crash, garbled or ill-typed answer kills the process (started afresh for the next
        batch); the first three count each game of the batch in the crash streak, an answer resets it.
        """
        n = int(obs.shape[0])
        if self._pid != os.getpid():
            self._after_fork()
        s = self.seats[0]
        if self.crash_streak >= self.limits.max_crashes:
            raise self._streak_error()
        try:
            self._running(0, "batches")
        except ExternalBotError as exc:
            self._batch_failed(exc, n)
            raise
        proc = s.proc
        assert proc is not None  # started above
        limits = self.limits
        budget = batch_limit(limits.decision_s, limits.game_s, n)
        first = not s.answered and budget < self.first_answer_s
        if first:
            budget = self.first_answer_s
        free = first and not s.compiled  # a process started again may take the start limit, but is charged
        line = encode_act(obs, mask, rng.keys)
        what = f"act() for a batch of {n}"
        t0 = time.perf_counter()
        try:
            answer = proc.request(line, budget, what, act_reply_limit(n))
            actions = parse_actions(answer, n)
        except ExternalBotError as exc:
            self._batch_failed(exc, n)
            raise
        except ProtocolError as exc:
            if exc.reason != "bot error":  # out of step, or not our host's answer: start afresh for the next batch
                proc.kill(exc.reason)
            self._batch_failed(exc, n)
            raise ExternalBotError(exc.reason, exc.detail) from None
        except BaseException:  # Ctrl-C while waiting: an answer may still come; never read it as the next one
            proc.kill("interrupted")
            raise
        finally:
            dt = time.perf_counter() - t0
            self.last_charge = 0.0 if free else dt  # compiling is not thinking time
            self.decisions += n
            if self.times is not None:
                self.times.extend([dt / n] * n)  # each row's share: a batch may take n times the time per decision
        s.answered.add(-1)
        s.compiled.add(-1)
        self.crash_streak = 0
        return actions

    @property
    def game_s(self) -> float:
        """The time per game: a batched program's games are charged a share of each batch (``last_charge``)."""
        return self.limits.game_s

    def _batch_failed(self, exc: Exception, n: int) -> None:
        """A batch ended by a crash, a timeout or garbage: each of its ``n`` games counts in the crash streak."""
        if getattr(exc, "reason", "") in CRASH_REASONS:
            self.crash_streak += n
            self.last_crash = str(exc)[:160]

    def _ask_melds(self, s: _Seat, proc: BotProcess, v: list[int], knock_line: bytes, budget: float):
        """After a knock: the melds the bot declares, checked by the engine (None: the arena's own)."""
        from arena.engine.showdown import ArrangementError, check_declaration

        line = knock_line.replace(b'"decision":"knock"', b'"decision":"melds"', 1)
        t0 = time.perf_counter()
        try:
            answer = proc.request(line, budget, "melds()")
        except ExternalBotError as exc:
            self._crashed(s, exc)
            raise
        finally:
            s.game_time += time.perf_counter() - t0
        try:
            melds = parse_melds(answer)
        except ProtocolError as exc:
            if exc.reason == "garbled answer":
                proc.kill(exc.reason)
                self._crashed(s, exc)
            raise ExternalBotError(exc.reason, exc.detail) from None
        if melds is None:
            return None
        try:
            return check_declaration(v[V_HAND], melds, v[V_KNOCK_LIMIT])
        except ArrangementError as exc:
            raise ExternalBotError("illegal melds", f"melds(): {exc}") from None

    # --- the table hooks (arena.engine.contract.TableHooks) ---------------------------------

    def declared_melds(self, seat: int) -> tuple[int, int] | None:
        s = self.seats[seat]
        declared, s.declared = s.declared, None
        return declared

    def hand_over(self, seat: int, view: np.ndarray, shown: dict, memory: np.ndarray, rng: np.ndarray) -> None:
        """Tell the seat's program what the table shows (if it asked); a dead program is left alone.

        A hand may end before the seat was asked anything (the other seat took the upcard and
        knocked at once): in a game's first hand this line is then the game's first message, and
        says ``new_game``; the game's first ``decide`` line says it again, with the parameters (a bot
        that reads only decide lines must still see its games begin).
        """
        if not (self.hello or {}).get("hand_over"):
            return
        new_game = bool(memory[0] == _NOT_BEGUN)
        if new_game:
            try:
                self._new_game(seat, memory, rng)
            except ExternalBotError:
                memory[0] = _NOT_BEGUN  # its first decision tries again, and forfeits if it must
                return
            memory[0] = _BEGUN_BY_HAND_OVER
        s = self.seats[seat]
        if s.proc is None or not s.proc.alive or s.failed_game:
            return
        line = encode_hand_over(view.tolist(), s.game, shown, s.seed, new_game)
        try:
            s.proc.tell(line, self.limits.decision_s, "hand_over")
        except ExternalBotError as exc:  # its next decision finds the process gone and forfeits then
            self._crashed(s, exc)

    def _new_game(self, seat: int, memory: np.ndarray, rng: np.ndarray) -> _Seat:
        """The first question (or hand_over line) of a game for ``seat``: (re)start its process if
        need be, and take the game's bot seed from its generator, as the engine seeded it."""
        memory[0] = _DECIDED
        if self._pid != os.getpid():
            self._after_fork()
        s = self.seats[seat]
        if s.started_game and not s.failed_game:
            self.crash_streak = 0  # this seat's last game ended without a crash
        s.started_game, s.failed_game = True, False
        if self.crash_streak >= self.limits.max_crashes:
            s.failed_game = True
            raise self._streak_error()
        try:
            self._running(seat, "games")
        except ExternalBotError as exc:
            self._crashed(s, exc)
            raise
        s.seed = seed_of_state(rng)
        self.games_started += 1
        s.game = self.game_ids.get(s.seed, self.games_started)
        s.game_time = 0.0
        return s

    def _streak_error(self) -> ExternalBotError:
        return ExternalBotError(
            "crashed",
            f"{STREAK_FORFEIT}: {self.crash_streak} games in a row ended by a crash "
            f"or timeout (last: {self.last_crash})",
        )

    def _running(self, seat: int, between: str) -> None:
        """Kill the seat's process if it exited since its last answer, and start one if none runs (raises as
        :meth:`start` does)."""
        s = self.seats[seat]
        if s.proc is not None and s.proc.alive and s.proc.proc.poll() is not None:
            s.proc.kill(f"exited between {between}")
        if s.proc is None or not s.proc.alive:
            self.start(seat)

    def _crashed(self, s: _Seat, exc: Exception) -> None:
        """Count a game ended by a crash, a timeout or garbage (the process was killed), once per game."""
        if not s.failed_game and getattr(exc, "reason", "") in CRASH_REASONS:
            s.failed_game = True
            self.crash_streak += 1
            self.last_crash = str(exc)[:160]

    def functions(self) -> tuple[_Decision, ...]:
        return tuple(_Decision(self, ph) for ph in sorted(DECISION_OF_PHASE))


def _kill_seats(seats, pid: int) -> None:
    if os.getpid() != pid:
        return
    for s in seats:
        if s.proc is not None:
            s.proc.kill()


# --- building a Bot ---------------------------------------------------------------------------------


def command_hash(command: list[str], cwd: str | None = None) -> str:
    """A hash of the command and of every file it names that exists (relative to ``cwd``)."""
    digest = hashlib.sha256("\0".join(command).encode())
    base = Path(cwd) if cwd else Path.cwd()
    for arg in command:
        p = base / arg
        try:
            if p.is_file():
                digest.update(p.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()[:16]


def external_of(bot) -> ExternalBot | None:
    """The :class:`ExternalBot` behind a Bot (for ``drain_log()``, ``close()``), or None."""
    f = bot.functions[0] if bot.functions else None
    return getattr(f, "external", None) if isinstance(f, _Decision) else None


def drain_log(bot) -> str:
    """The stderr an external or sandboxed bot wrote since the last call ("" for other bots)."""
    ext = external_of(bot)
    return ext.drain_log() if ext is not None else ""


def close_bot(bot) -> None:
    """Stop the processes of an external or sandboxed bot (nothing for other bots)."""
    ext = external_of(bot)
    if ext is not None:
        ext.close()


#: The handshake a bot gave where a run was planned (:func:`known_hello`), for the loads in this context.
_KNOWN_HELLO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("known_hello", default=None)


@contextlib.contextmanager
def known_hello(hello: dict | None) -> Iterator[None]:
    """Load external bots in this block with ``hello``, the handshake the bot already gave the run's
    driver, instead of starting their process for it: a worker's bot then starts at its first game,
    where a failed start is that game's forfeit under the restart rule (three failed starts in a row
    forfeit the rest), as at every later start.  Started here, a failure failed the whole chunk, so
    a bot that fails some of its starts left runs incomplete and league pairings unplayed."""
    token = _KNOWN_HELLO.set(hello)
    try:
        yield
    finally:
        _KNOWN_HELLO.reset(token)


def _make_bot(ext: ExternalBot, name: str | None, source: str, source_hash: str, description: str, reason: str):
    from arena.botkit.bot import Bot, BotError

    hello = _KNOWN_HELLO.get()
    if hello is not None:
        ext.hello = hello
        ext.param_names = tuple(hello["params"])
    else:
        try:
            hello = ext.start(0)
        except ExternalBotError as exc:
            ext.close()
            raise BotError(f"{source}: {exc}") from None
    return Bot(
        name=name or hello["name"],
        description=hello["description"] or description,
        functions=ext.functions(),
        batch_act=ext.act if hello.get("batch") else None,
        batch_clock=ext if hello.get("batch") else None,
        params=np.array(list(hello["params"].values()), dtype=np.float64),
        param_names=tuple(hello["params"]),
        memory_size=1,
        fast=False,
        source=source,
        source_hash=source_hash,
        plain_reason=reason,
        module=None,
    )


def external_bot(
    name: str | None,
    command: list[str],
    cwd: str | None = None,
    limits: Limits | None = None,
    source: str | None = None,
    source_hash: str | None = None,
):
    """A :class:`arena.botkit.bot.Bot` playing through the program ``command`` (argv list).

    Starts the program once for the handshake (its name, unless ``name`` is
    given, and its parameters); raises :class:`arena.botkit.bot.BotError` if that
    fails.  All arguments are plain values, so a worker can rebuild the bot.
    ``source`` and ``source_hash`` (default: the command and the hash of the files it
    names) say what the bot is in results and errors (an ``eaai:`` player's spec).
    """
    command = list(command)
    ext = ExternalBot(command, cwd, limits)
    return _make_bot(
        ext,
        name,
        source or BotRef("command", shlex.join(command)).spec(),
        source_hash or command_hash(command, cwd),
        f"external program: {shlex.join(command)}",
        "an external program (protocol over pipes)",
    )


def host_command(path: str | os.PathLike) -> list[str]:
    """The command that serves a bot file through the sandbox host."""
    return [sys.executable, "-P", "-m", "arena.external.host", str(Path(path).resolve())]


class SandboxTiming(TypedDict, total=False):
    """:class:`ExternalBot`'s options that time a bot file in the sandbox (none: a program's own timing)."""

    one_function: bool


def sandbox_timing(path: str | os.PathLike) -> SandboxTiming:
    """How a bot file in the sandbox is timed (:class:`ExternalBot`'s options): like every program, its
    first answer of each kind may take the start limit (its host compiles that decision with numba on
    first use); a policy answers every kind with one function, so only its very first answer may."""
    return SandboxTiming(one_function=is_policy_file(path))


def sandbox_setup(
    path: str | os.PathLike, limits: Limits | None = None
) -> tuple[list[str], str, dict[str, str], str, tuple[str, ...]]:
    """(command, cwd, environment, text hash, paths to read) that serve a bot file through the sandbox host.

    Raises :class:`arena.botkit.bot.BotError` if the file is missing or unreadable.
    """
    from arena.botkit.bot import BotError, bot_cache_dir, cached_bot_file, read_bot_file, text_hash
    from arena.engine._jit import cache_dir

    p = Path(path)
    copy: Path | None = None
    if p.suffix.lower() in BINARY_POLICY_SUFFIXES:  # a binary policy file: read by the host as it is, no copy
        from arena.botkit.policy import read_policy_file

        digest = hashlib.sha256(read_policy_file(p)).hexdigest()[:16]  # as arena.botkit.policy
    else:
        text = read_bot_file(p)
        # load_bot_file (and a policy module's load) imports a copy kept under the text's hash; the host may
        # not write files, so the copy is made here, by the arena (as an in-process load would).
        try:
            copy = cached_bot_file(text)
        except OSError as exc:
            raise BotError(f"{path}: cannot write the bot cache: {exc.strerror or exc}") from None
        digest = text_hash(text)  # as arena.botkit.bot.load_bot_source
    root = str(Path(__file__).resolve().parents[2])
    # One thread for numpy's BLAS and OpenMP, as onnxruntime's session has: a bot gets one core, and a
    # BLAS that spins a thread per core on a shared machine makes a walled numpy policy ten times slower.
    threads = dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")
    if (limits or Limits()).sandbox == "wall":
        from arena.external.wall import host_paths

        # Inside the wall: only what the host needs, and the caches where the arena keeps them.
        env = {
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": root,
            "XDG_CACHE_HOME": str(bot_cache_dir().parents[1]),
            "NUMBA_CACHE_DIR": str(cache_dir()),
            **threads,
        }
        cwd = str(p.resolve().parent)
        if copy is not None:
            keep_compiled(p, copy, cwd, env, tuple(host_paths(p, digest)), limits or Limits())
        # Listed again: the code keep_compiled stored is a folder the starts may now read.
        return host_command(p), cwd, env, digest, tuple(host_paths(p, digest))
    env = {**os.environ, **threads}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return host_command(p), str(p.resolve().parent), env, digest, ()


#: The cache folders a ``--compile`` start was tried for in this process (one try each, kept or not).
_COMPILE_TRIED: set[Path] = set()


def keep_compiled(
    path: Path, copy: Path, cwd: str, env: dict[str, str], read_paths: tuple[str, ...], limits: Limits
) -> None:
    """Have the sandbox host compile a bot file once behind the wall, and keep what numba compiled
    (:mod:`arena.external.sandbox_cache`), so that its starts load it instead of compiling it again.

    Tried once per process for a file's text, under the compile lock of its cache folder (the workers of a
    run wait for one another).  Any failure (the file does not load, the wall is missing, the answer is
    refused) keeps nothing, and the bot's own start reports what is wrong, as it always did."""
    from arena.engine._jit import compile_lock
    from arena.external.sandbox_cache import MAX_LINE, cache_folder_of, store_files

    folder = cache_folder_of(copy)
    if folder in _COMPILE_TRIED or folder.exists():
        return
    _COMPILE_TRIED.add(folder)
    command = host_command(path)
    command.insert(-1, "--compile")
    with compile_lock(f"sandbox.{folder.name}"):
        if folder.exists():  # another process compiled it while this one waited
            return
        try:
            proc = BotProcess(command, cwd, limits, LogBuffer(limits.log_bytes), env, read_paths)
            try:
                line = proc.request(b'{"type":"compile"}\n', limits.start_s, "compiling", max_line=MAX_LINE)
            finally:
                proc.kill()
        except ExternalBotError:
            return
        store_files(line, folder)


def is_policy_file(path: str | os.PathLike) -> bool:
    """A file the sandbox host serves as a trained policy: an ``.onnx`` or ``.npz``, or a module that
    defines ``act`` and none of a bot's decisions."""
    from arena.botkit.bot import read_bot_file
    from arena.settings.botref import is_policy_source

    suffix = Path(path).suffix.lower()
    return suffix in BINARY_POLICY_SUFFIXES or (suffix == ".py" and is_policy_source(read_bot_file(Path(path))))


def sandboxed_bot(path: str | os.PathLike, limits: Limits | None = None, name: str | None = None):
    """A bot file played in its own process (the sandbox host) through the protocol.

    The file is never imported by the caller: its name, description and
    parameters come from the host's handshake.  ``source`` is
    ``sandbox:<absolute path>`` and ``source_hash`` the same hash of its text
    as :func:`arena.botkit.bot.load_bot_file` gives.  The default limits allow 120 s
    to start.  Before the first start of a file's text, the host compiles it once behind the wall and the
    arena keeps what numba compiled (:func:`keep_compiled`), so starts load it instead of compiling again.
    """
    limits = limits or Limits(start_s=START_SECONDS["sandbox"])
    command, cwd, env, digest, read_paths = sandbox_setup(path, limits)
    ext = ExternalBot(command, cwd, limits, env=env, read_paths=read_paths, **sandbox_timing(path))
    return _make_bot(
        ext,
        name,
        BotRef("sandbox", str(Path(path).resolve())).spec(),
        digest,
        "(sandboxed bot file)",
        "a sandboxed bot file (own process, protocol over pipes)",
    )
