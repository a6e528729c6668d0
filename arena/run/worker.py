"""The worker: one chunk task in, its result tables out.

:func:`play_chunk` touches no files of the run (the driver's store writes
them) and needs nothing from the driver's machine: bots arrive as content
(:class:`~arena.run.plan.BotSpec`); a user's bot file is loaded from its
text by :func:`arena.botkit.bot.load_bot_source`, exactly as the driver loaded it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shlex
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.botkit.bot import Bot, BotError, cached_bot_file, load_bot_source
from arena.botkit.policy import cached_policy_file, load_policy_source
from arena.engine.layout import H_GAME, H_LOG_START, LOG_KIND
from arena.engine.play import (
    C_ASKED,
    C_NEXT_GAME,
    C_PHASE,
    C_ROWS,
    C_SEAT,
    C_SIZE,
    C_STOP,
    game_log_spans,
    play_batch,
)
from arena.engine.rules_array import rules_array
from arena.external import external_of
from arena.external.client import known_hello
from arena.external.limits import Limits
from arena.loading.load import load
from arena.run.plan import BotSpec, ChunkTask, code_identity, pair_seeds
from arena.run.schema import games_frame, hands_frame
from arena.run.store.meta import log_stem, stdout_log_stem
from arena.run.tables import actions_table
from arena.settings.botref import BINARY_POLICY_SUFFIXES, BotRef

# Slots of the progress array a worker shares with its driver (the watchdog
# reads them to name the bot that was being asked when a chunk timed out, and
# to see a bot stuck in one decision; the progress line, to count the games
# of a chunk still being played).
P_NEXT_GAME = C_NEXT_GAME  # games of the part being played that are finished (the engine's counter)
P_SEAT = C_SEAT  # seat being asked (same slot as the engine's counters)
P_PHASE = C_PHASE  # decision being asked
P_ASKED = C_ASKED  # decisions asked in the part being played; 0 between parts (nothing is being asked)
P_ROWS = C_ROWS  # games a batched policy's call under way answers (0: one decision, or none)
P_STOP = C_STOP  # above 0: stop the chunk before its next game (arena.engine.play.Stopped); -1 as the others start
P_SWAP = C_SIZE  # which seat bot_a has in the part being played (0 or 1)
P_COMPILING = C_SIZE + 1  # numba compilations (or cache loads) under way in the worker: not a stuck bot
P_SIZE = C_SIZE + 2

LOG_LIMIT = 64 * 1024  # bytes of bot output kept per chunk


class WorkerError(RuntimeError):
    """A chunk that cannot be played at all (a bot that does not load here)."""


@dataclass
class ChunkResult:
    """What a worker sends back for one chunk."""

    task: ChunkTask
    games: pd.DataFrame
    hands: pd.DataFrame | None
    errors: list[str]
    logs: dict[str, str] = field(default_factory=dict)  # logs/<stem>.log (store.meta.log_stem) -> what was printed
    seconds: float = 0.0
    actions: pa.Table | None = None  # each game's action log (schema.ACTIONS_SCHEMA), when task.record_log


# --- what in-process bots print --------------------------------------------------------


#: The first line of a chunk log that lost its beginning (the bot's own log says it the same way).
_DROPPED = re.compile(r"\[arena\] \.\.\. (\d+) earlier bytes of output dropped \(log limit\)\n")


def log_tail(text: str, limit: int, dropped: int = 0) -> str:
    """The end of a log within about ``limit`` characters, cut at a line's start, led by one line saying
    how many bytes were dropped before it (``dropped`` more, and those an earlier cut's line counted): a
    log cut to its last characters began mid-line, with no word that anything came before."""
    said = _DROPPED.match(text)
    if said:
        dropped += int(said.group(1))
        text = text[said.end() :]
    if len(text) > limit:
        cut = len(text) - limit
        line = text.find("\n", cut, cut + 200)  # the next line's start, if it is near
        cut = line + 1 if line >= 0 else cut
        dropped += len(text[:cut].encode())
        text = text[cut:]
    return f"[arena] ... {dropped} earlier bytes of output dropped (log limit)\n{text}" if dropped else text


class _Tail:
    """The last ``limit`` characters written to it, holding at most about twice that: a bot printing at
    every decision is kept to the end of its chunk log, not in the worker's memory whole until the end."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0  # bytes

    def write(self, text: str) -> int:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * self.limit:
            whole = "".join(self.parts)
            self.dropped += len(whole[: -self.limit].encode())
            kept = whole[-self.limit :]
            self.parts, self.size = [kept], len(kept)
        return len(text)

    def flush(self) -> None:
        pass

    def getvalue(self) -> str:
        return log_tail("".join(self.parts), self.limit, self.dropped)


class _ThreadStdout:
    """``sys.stdout`` while chunks play: each thread's prints go to its chunk's :class:`_Tail`, any other
    thread's to the stdout this stands in for.  A Dask worker plays a chunk in each of its threads; a
    ``redirect_stdout`` per chunk sent one chunk's prints into another's log, and two undone out of order
    left the process's stdout in a finished chunk's buffer."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.users = 0  # the threads capturing through it now: the last one out puts ``real`` back

    def _target(self) -> Any:
        return getattr(_CHUNK_OUT, "tail", None) or self.real

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno ...: the real stdout's
        return getattr(self.real, name)


_CHUNK_OUT = threading.local()
_STDOUT_LOCK = threading.Lock()
_stand_in: _ThreadStdout | None = None  # installed while any chunk of this process captures


@contextlib.contextmanager
def _printed_to(tail: _Tail) -> Iterator[None]:
    """Send this thread's prints to ``tail`` for the block (the stand-in is installed by the first
    capturing thread and removed by the last, in whatever order they end)."""
    global _stand_in
    with _STDOUT_LOCK:
        if _stand_in is None:
            _stand_in = _ThreadStdout(sys.stdout)
            sys.stdout = _stand_in
        _stand_in.users += 1
        mine = _stand_in
    _CHUNK_OUT.tail = tail
    try:
        yield
    finally:
        _CHUNK_OUT.tail = None
        with _STDOUT_LOCK:
            mine.users -= 1
            if mine.users == 0:
                if sys.stdout is mine:  # else someone replaced it since: theirs stays
                    sys.stdout = mine.real
                _stand_in = None


# --- bots from content ---------------------------------------------------------------


class _Loaded(threading.local):
    """The bots loaded by one thread: a Dask worker with several threads plays a chunk in each, and a
    bot in its own process (``cmd:``, sandboxed, a kit player) is one conversation with that process;
    two chunks sharing one garbled each other's games ("Bad file descriptor", "out of step")."""

    def __init__(self) -> None:
        self.bots: dict[BotSpec, Bot] = {}


_LOADED = _Loaded()


def _file_bot(spec: BotSpec) -> Bot:
    try:
        bot = load_bot_source(spec.source, name=spec.name, source=spec.ref)
    except BotError as exc:
        raise WorkerError(f"bot '{spec.name}' failed to load on this worker: {exc}") from None
    return dataclasses.replace(bot, source_hash=spec.source_hash)


def _eaai_bot(spec: BotSpec) -> Bot:
    """A kit player where the chunk runs: with this machine's kit (``GIN_ARENA_EAAI_KIT``) or, where
    that names none (a Dask worker started without it), the driver's; either way the player and the
    kit must hash as on the driver, or the games would not be the driver's bot's."""
    from arena.external.eaai import KIT_ENV, use_kit

    if spec.kit and not os.environ.get(KIT_ENV, "").strip():
        use_kit(Path(spec.kit), "the driver's EAAI kit")
    bot = load(BotRef("eaai", spec.ref), Limits(**dict(spec.limits)), name=spec.name)
    if bot.source_hash != spec.source_hash:
        from arena.external.client import close_bot

        close_bot(bot)
        _check_files(spec)  # names the difference
    return bot


def _check_files(spec: BotSpec) -> None:
    """Refuse a ``cmd:`` bot or a kit player whose files here are not the ones the driver hashed.

    Such a bot's files are read again wherever and whenever a chunk starts its program: on a Dask
    worker whose folder holds another file of the name (a relative ``cmd:python3 bot.py`` runs in
    the worker's own folder), or after the file was edited during the run, the games would be
    another program's, stored under the matchup of the driver's.  Checked before each chunk.
    """
    if spec.kind == "command":
        from arena.external.client import command_hash

        cwd = _command_cwd(spec)
        here = command_hash(shlex.split(spec.ref), cwd)
        what = f"the files its command names (in {cwd or os.getcwd()})"
    elif spec.kind == "eaai":
        from arena.external.eaai import KIT_ENV, player_hash

        try:
            here = player_hash(BotRef("eaai", spec.ref))
        except (OSError, BotError) as exc:
            raise WorkerError(f"EAAI player '{spec.name}': {exc}") from None
        what = f"the player's jar or folder, or the kit ({os.environ.get(KIT_ENV)})"
    else:
        return
    if here != spec.source_hash:
        raise WorkerError(
            f"bot '{spec.name}' differs on this worker from the driver's (hash {here} vs {spec.source_hash}): {what} "
            "changed since the run began, or are other files here"
        )


def _command_cwd(spec: BotSpec) -> str | None:
    """The folder a ``cmd:`` bot runs in here: the driver's (the spec's), or, on a machine without that
    folder, this process's own (a command naming only absolute paths then still hashes as the driver's;
    one naming a file relative to the driver's folder does not, and is refused)."""
    return spec.cwd if spec.cwd and os.path.isdir(spec.cwd) else None


def bot_from_spec(spec: BotSpec) -> Bot:
    """The bot a spec describes, loaded once per thread of a process; a ``cmd:`` bot's or a kit player's
    files are checked again each time (:func:`_check_files`)."""
    bot = _LOADED.bots.get(spec)
    if bot is not None:
        _check_files(spec)
        return bot
    # A bot in its own process starts at its first game, not here (known_hello).
    with known_hello(json.loads(spec.hello) if spec.hello else None):
        bot = _load_spec(spec)
    if spec.params:
        bot = bot.with_params(spec.name, dict(spec.params))
    else:
        bot = dataclasses.replace(bot, name=spec.name)
    _LOADED.bots[spec] = bot
    return bot


def _load_spec(spec: BotSpec) -> Bot:
    try:
        if spec.kind == "builtin":
            bot = load(BotRef("builtin", spec.ref))
            if bot.source_hash != spec.source_hash:
                raise WorkerError(
                    f"built-in bot '{spec.ref}' differs on this worker from the driver's "
                    f"(hash {bot.source_hash} vs {spec.source_hash}): install the same gin-arena"
                )
        elif spec.kind == "file":
            bot = _file_bot(spec)
        elif spec.kind == "command":
            _check_files(spec)  # before its program starts: another program's handshake could pass
            ref = BotRef("command", spec.ref, _command_cwd(spec))
            bot = load(ref, Limits(**dict(spec.limits)), name=spec.name)
        elif spec.kind == "eaai":
            bot = _eaai_bot(spec)
        elif spec.kind == "policy":
            bot = load_policy_source(spec.source, spec.ref, name=spec.name)
            if bot.source_hash != spec.source_hash:
                raise WorkerError(f"policy '{spec.name}': its bytes arrived damaged (hash {bot.source_hash})")
        elif spec.kind == "sandbox":
            if Path(spec.ref).suffix.lower() in BINARY_POLICY_SUFFIXES:
                path = str(cached_policy_file(spec.source, spec.ref))
            else:
                path = str(cached_bot_file(spec.source))
            bot = load(BotRef("sandbox", path), Limits(**dict(spec.limits)), name=spec.name)
        else:
            raise WorkerError(f"bot '{spec.name}': unknown kind '{spec.kind}'")
    except BotError as exc:
        raise WorkerError(f"bot '{spec.name}': {exc}") from None
    return bot


# --- playing a chunk ---------------------------------------------------------------------


def _start_chunk(a: Bot, b: Bot, parts, duplicate: bool) -> None:
    """Tell external bots a chunk starts: their crash streak starts over, and each game's id in
    the matchup (``2 * pair + swap`` with duplicate deals, else the pair), which the protocol
    sends as ``game``, keyed by the bot seed of the seat the bot has in that game (the same on
    any number of workers)."""
    ext_a, ext_b = external_of(a), external_of(b)
    if ext_a is None and ext_b is None:
        return
    from arena.engine.rng import bot_seed

    ids: dict[int, dict[int, int]] = {id(e): {} for e in (ext_a, ext_b) if e is not None}
    for swap, seeds, pairs in parts:
        seated = (ext_a, ext_b) if swap == 0 else (ext_b, ext_a)
        for seed, pair in zip(seeds.tolist(), pairs.tolist()):
            game = 2 * pair + swap if duplicate else pair
            for seat, ext in enumerate(seated):
                if ext is not None:
                    ids[id(ext)][int(bot_seed(seed, seat))] = game
    for ext in {id(e): e for e in (ext_a, ext_b) if e is not None}.values():
        ext.new_chunk(ids[id(ext)])


def _end_part(a: Bot, b: Bot) -> None:
    """A part (one seating of the chunk's pairs) is over: the external bots' processes end with it.

    Its games' deals come again in the other seating (and, with the same pair numbers, in the
    bots' other matchups): no process that saw them from one seat lives on into another part
    (:meth:`arena.external.client.ExternalBot.end_part`).  A bot playing itself is closed once.
    """
    for ext in {id(e): e for e in (external_of(a), external_of(b)) if e is not None}.values():
        ext.end_part()


def games_finished(task: ChunkTask, progress: np.ndarray) -> int:
    """Games of ``task``'s chunk finished so far, read off the counters :func:`play_chunk` keeps in
    ``progress`` (0 before its first part starts: the slots hold -1 then).

    A chunk is played in two parts (the seatings, ``P_SWAP``), each counted by the engine from 0
    (``P_NEXT_GAME``).  Local workers' slots and Dask tasks both count with this.
    """
    swap, done = int(progress[P_SWAP]), int(progress[P_NEXT_GAME])
    if swap not in (0, 1) or done < 0:
        return 0
    first = task.pair_hi - task.pair_lo if task.duplicate else (task.n_games + 1) // 2  # games of part 0
    return min(task.n_games, swap * first + done)


def same_code(driver: str) -> None:
    """Refuse a task planned by another gin-arena (``driver`` is its :func:`~arena.run.plan.code_identity`):
    a worker with another engine installed would play or grade the driver's games by its own rules."""
    if driver != code_identity():
        raise WorkerError(
            f"this worker runs gin-arena {code_identity()}, the driver {driver}: its games would be another"
            " engine's; install the same gin-arena on every machine"
        )


def play_chunk(task: ChunkTask, progress: np.ndarray | None = None, catch_exits: bool = False) -> ChunkResult:
    """Play one chunk and return its games (and hands), with run-level columns.

    With duplicate deals, pair ``i`` is played twice with seed ``s_i``: first
    bot_a in seat 0 (swap 0), then bot_b in seat 0 (swap 1).  Without, game
    ``i`` uses seed ``s_i`` and the seats alternate.  ``progress`` (shared
    with the driver) says which seat and decision are being asked;
    ``catch_exits`` (worker processes) turns a bot's SystemExit or
    KeyboardInterrupt into a forfeit instead of the end of the process.
    """
    import time

    t0 = time.perf_counter()
    if task.code:
        same_code(task.code)
    if task.private:  # a worker on another machine, or a spawned process, learns them here
        from arena.external.wall import hide_from_others

        hide_from_others(task.private)
    a, b = bot_from_spec(task.bot_a), bot_from_spec(task.bot_b)
    rules = rules_array(task.rules)
    seeds = pair_seeds(task.seed, task.pair_lo, task.pair_hi)
    pair_no = np.arange(task.pair_lo, task.pair_hi, dtype=np.int64)
    if task.duplicate:
        parts = [(0, seeds, pair_no), (1, seeds, pair_no)]
    else:
        parts = [(0, seeds[0::2], pair_no[0::2]), (1, seeds[1::2], pair_no[1::2])]
    counters = progress[:C_SIZE] if progress is not None else None
    _start_chunk(a, b, parts, task.duplicate)
    frames, hand_frames, errors = [], [], []
    logs_parts, log_starts, log_lens = [], [], []
    log_offset = 0
    printed = _Tail(LOG_LIMIT)
    offset = 0
    for swap, s, pairs in parts:
        seat0, seat1 = (a, b) if swap == 0 else (b, a)
        if progress is not None:
            progress[P_NEXT_GAME] = 0  # first: with the new part's swap, the last part's count would be read
            progress[P_SWAP] = swap
        try:
            with _printed_to(printed):
                rec = play_batch(
                    seat0,
                    seat1,
                    rules,
                    s,
                    record_hands=task.record_hands,
                    record_log=task.record_log,
                    counters=counters,
                    catch_exits=catch_exits,
                )
        finally:
            if progress is not None:
                progress[P_ASKED] = 0  # the part is over: what follows is the worker's, not a bot's decision
                progress[P_ROWS] = 0
            _end_part(a, b)
        g = games_frame(rec.games, s)
        g.insert(0, "pair", pairs)
        g.insert(1, "swap", np.int8(swap))
        g["bot0"] = seat0.name
        g["bot1"] = seat1.name
        g["error"] = ""
        g.loc[g["forfeit_seat"] >= 0, "error"] = rec.errors  # one message per forfeit, in game order
        frames.append(g)
        errors.extend(rec.errors)
        if task.record_log:
            start, length = game_log_spans(rec.hands, len(s))
            # hands index into their own game's log
            rec.hands[:, H_LOG_START] -= start[rec.hands[:, H_GAME]]
            logs_parts.append(rec.log)
            log_starts.append(start + log_offset)
            log_lens.append(length)
            log_offset += len(rec.log)
        if task.record_hands:
            h = hands_frame(rec.hands)
            h["game_id"] = h["game_id"] + offset  # the game's index in the chunk, for now
            hand_frames.append(h)
        offset += len(s)
    games = pd.concat(frames, ignore_index=True)
    order = np.lexsort((games["swap"].to_numpy(), games["pair"].to_numpy()))
    games = games.iloc[order].reset_index(drop=True)
    # Run-level columns: ids that do not depend on where or when the chunk ran.
    local = 2 * games["pair"].to_numpy() + games["swap"].to_numpy() if task.duplicate else games["pair"].to_numpy()
    game_id = task.matchup_no * task.games_per_pair + local
    games.insert(0, "game_id", game_id.astype(np.int64))
    games.insert(1, "matchup", task.matchup)
    games.insert(2, "bot_a", task.bot_a.name)
    games.insert(3, "bot_b", task.bot_b.name)
    seat = games["winner_seat"].to_numpy()
    games["winner"] = np.where(seat == 0, games["bot0"], np.where(seat == 1, games["bot1"], ""))
    hands = None
    if task.record_hands:
        hands = pd.concat(hand_frames, ignore_index=True)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        hands["game_id"] = game_id[rank[hands["game_id"].to_numpy()]]
        hands = hands.sort_values(["game_id", "hand"], kind="stable").reset_index(drop=True)
    actions = None
    if task.record_log:
        flat = np.concatenate(logs_parts)
        start = np.concatenate(log_starts)[order]
        length = np.concatenate(log_lens)[order]
        offsets = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(length, out=offsets[1:])
        gather = np.repeat(start - offsets[:-1], length) + np.arange(offsets[-1])
        actions = actions_table(game_id, offsets, flat[gather] % LOG_KIND)  # the answers; replays infer the rest
    logs = {}
    for bot in (a, b):
        ext = external_of(bot)
        if ext is not None:
            text = ext.drain_log()
            if text:
                logs[log_stem(bot.name)] = f"--- {task.label}\n" + log_tail(text, LOG_LIMIT)
    out = printed.getvalue()
    if out:
        logs[stdout_log_stem(task.bot_a.name, task.bot_b.name)] = f"--- {task.label}\n" + out
    return ChunkResult(task, games, hands, errors, logs, time.perf_counter() - t0, actions)
