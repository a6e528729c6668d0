"""Lockstep batches: many games played side by side, a batched policy asked once per step.

A policy written in Python (a module's ``act(obs, mask, rng)``, an ONNX
model) pays Python's cost per call, so asking it once per decision would
make it a hundred times slower than the engine.  Here every game of a batch
lives in its own row of state arrays, and one compiled call
(:func:`lockstep_kernel`) advances each game - dealing, the compiled
opponent's decisions, the hand and game bookkeeping - until it waits for a
policy seat's decision or is over.  The waiting games' observations and
legal-action masks are gathered into one ``[k, OBS_SIZE]`` /
``[k, NUM_ACTIONS]`` batch, the policy answers all of them in one call, and
the next kernel call applies the answers and goes on.

The records are exactly those of :func:`arena.engine.play.play_batch`: each
game runs the same steps in the same order with its own state, generators
and memories, so a game's rows depend on its seed, the rules and the bots
only, never on which games shared its batch.  The kernel logs decisions in
the order they happen; :func:`play_lockstep` sorts the log and the hand rows
back into game order.

Randomness: a policy gets ``rng``, a :class:`RowRng` whose row ``i`` is drawn
from the asking seat's own generator in game ``i`` (one 64-bit key per
decision), so a stochastic policy is as reproducible as a compiled bot, on
any batch, worker or executor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numba
import numpy as np
from numba import types
from numba.experimental.function_type import _get_wrapper_address

from arena.engine._jit import kernel
from arena.engine.actions import (
    NUM_ACTIONS,
    OBS_SIZE,
    action_name,
    answer_of_action,
    fill_mask,
    legal_ids,
    observe_view,
    view_legal_actions,
)
from arena.engine.contract import BOT_SIGNATURE, BotType
from arena.engine.layout import (
    ERROR_TEXT,
    G_ERROR,
    G_ERROR_KIND,
    G_FORFEIT,
    G_HANDS,
    G_SIZE,
    G_WINNER,
    H_GAME,
    H_HAND_NO,
    H_LOG_START,
    H_SIZE,
    OUT_FORFEIT,
    PH_DONE,
    S_CUR,
    S_ERROR,
    S_OUTCOME,
    S_PHASE,
    S_PILE_N,
    S_SIZE,
    V_DECISION,
    V_SIZE,
)
from arena.engine.rng import RNG_WORDS, next_u64
from arena.engine.step import (
    apply_action,
    begin_game,
    begin_hand,
    build_view,
    end_hand,
    forfeit_game,
    log_entry,
    mirror_pile,
    refresh_view,
    write_hand_row,
)

# stage[g]: where game g is
ST_NEW = 0  # not begun
ST_DEAL = 1  # the next hand is to be dealt
ST_PLAY = 2  # in a hand, a compiled seat or the engine to move
ST_HAND_OVER = 3  # the hand is over (or an action was rejected): book it
ST_WAITING = 4  # waiting for a policy seat's answer in pending[g]
ST_DONE = 5

# counters[] slots of the kernel (its own)
L_HANDS = 0  # hand rows written
L_LOG = 1  # log entries written
L_GAME = 2  # game being advanced (to blame a compiled bot that raised)
L_FULL = 3  # 1 when a game paused for room in the hands or log buffer
L_WAITING = 4  # games waiting so far in this call (valid even if a compiled bot raised)
L_SIZE = 5

# Slots of the caller's ``progress`` (arena.engine.play's C_SEAT, C_PHASE, ...), which a watchdog reads while
# play goes on: who is being asked what, and a count of asks that stands still while a bot is stuck in one.
PROGRESS_SEAT = 3  # seat being asked: a compiled bot inside the kernel, or a policy in its act()
PROGRESS_PHASE = 4  # decision being asked (a policy's batch: its first game's)
PROGRESS_ASKED = 5  # asks so far: +1 per compiled decision, +1 per call of a policy's act()
PROGRESS_STOP = 6  # set above 0 by the caller: play stops before the next step
PROGRESS_ROWS = 7  # games the policy's act() being called answers (0 when no act() runs)
PROGRESS_SIZE = 8

#: What a lockstep seat is: a compiled bot played inside the kernel, or a batched policy.
SEAT_COMPILED = 0
SEAT_POLICY = 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _never(view, params, memory, rng):
    """The decisions of a policy seat in the kernel's bot tuple: never called (the seat waits instead)."""
    return -1


class _Decision(types.WrapperAddressProtocol):
    """A compiled decision passed by its address.

    The kernel is called once per batch step, hundreds of times a batch;
    unboxing a numba dispatcher as a first-class function looks up its
    compile result each time (milliseconds for two bots' twelve functions),
    an address is read at once.
    """

    def __init__(self, fn) -> None:
        self.fn = fn  # keeps the compiled code alive
        self.address = _get_wrapper_address(fn, BOT_SIGNATURE)

    def __wrapper_address__(self) -> int:
        return self.address

    def signature(self):
        return BOT_SIGNATURE


_NEVER = numba.njit(BOT_SIGNATURE, cache=True)(_never)
#: A bot tuple for a policy seat (the kernel needs six compiled decisions in every seat).
NO_BOT = (_Decision(_NEVER),) * 6

_I1 = types.int64[::1]
_I2 = types.int64[:, ::1]
_F1 = types.float64[::1]
_F2 = types.float64[:, ::1]
_U1 = types.uint64[::1]
_U2 = types.uint64[:, ::1]
_LOCKSTEP_SIG = types.int64(
    _I1, _I1, BotType, BotType, _I1, _F1, _F1, _F2, _F2, _F2, _F2, _I2, _I2, _U2, _U2, _U1,
    _I1, _I1, _I2, _I2, _I1, _I1, _I1, _I1, _I1, _I1, _I1, types.float32[:, ::1], types.uint8[:, ::1], _I1, _U1,
)  # fmt: skip


@kernel(_LOCKSTEP_SIG)
def lockstep_kernel(
    seeds, rules, bot0, bot1, seat_kind, params0, params1, p0, p1, mem0, mem1, st, views, rng0, rng1, scratch,
    stage, pile_n, games, hands, log, log_game, game_log_n, hand_log_start, pending, counters, progress, obs, mask,
    waiting, keys,
):  # fmt: skip
    """Advance every game until it waits for a policy seat or is over; return how many wait.

    Game ``g``'s waiting decision goes to row ``k`` of ``obs``/``mask``
    (``waiting[k] = g``, ``keys[k]`` the seat's random key); the caller puts
    the engine's answer in ``pending[g]`` and calls again.  A game pauses
    before any write the ``hands`` or ``log`` buffer has no room for
    (``counters[L_FULL]``): the caller grows them and calls again, and
    nothing is undone.  Empty ``hands``/``log`` arrays mean "don't record".
    Before each compiled decision the seat and the decision go to
    ``progress`` and its count of asks moves, as in
    :func:`arena.engine.play.play_hand`: a watchdog sees which bot is asked.
    """
    record_hands = hands.shape[0] > 0
    record_log = log.shape[0] > 0
    counters[L_FULL] = 0
    counters[L_WAITING] = 0
    k = 0
    for g in range(seeds.shape[0]):
        counters[L_GAME] = g
        st_g = st[g]
        view0 = views[g, :V_SIZE]
        view1 = views[g, V_SIZE:]
        row = games[g]
        while stage[g] != ST_DONE:
            s = stage[g]
            if s == ST_NEW:
                begin_game(st_g, rules, seeds[g], rng0[g], rng1[g], mem0[g], mem1[g], row)
                for i in range(params0.shape[0]):
                    p0[g, i] = params0[i]
                for i in range(params1.shape[0]):
                    p1[g, i] = params1[i]
                stage[g] = ST_DEAL
            elif s == ST_DEAL:
                begin_hand(st_g, rules, seeds[g], scratch)
                build_view(st_g, rules, np.int64(0), view0)
                build_view(st_g, rules, np.int64(1), view1)
                pile_n[g] = st_g[S_PILE_N]
                hand_log_start[g] = game_log_n[g]
                stage[g] = ST_PLAY
            elif s == ST_HAND_OVER:
                if record_hands and counters[L_HANDS] >= hands.shape[0]:
                    counters[L_FULL] = 1
                    break
                if st_g[S_ERROR] != 0:
                    forfeit_game(st_g, row)
                if record_hands:
                    start = hand_log_start[g] if record_log else -1
                    write_hand_row(st_g, g, hands[counters[L_HANDS]], start, game_log_n[g] - hand_log_start[g])
                    counters[L_HANDS] += 1
                if st_g[S_OUTCOME] == OUT_FORFEIT or end_hand(st_g, rules, row):
                    stage[g] = ST_DONE
                else:
                    stage[g] = ST_DEAL
            else:  # ST_PLAY or ST_WAITING: decisions until the hand ends or a policy seat is asked
                if st_g[S_PHASE] == PH_DONE:
                    stage[g] = ST_HAND_OVER
                    continue
                if record_log and counters[L_LOG] >= log.shape[0]:
                    counters[L_FULL] = 1
                    break
                seat = st_g[S_CUR]
                phase = st_g[S_PHASE]
                view = view0 if seat == 0 else view1
                if s == ST_WAITING:
                    action = pending[g]
                    stage[g] = ST_PLAY
                else:
                    refresh_view(st_g, seat, view)
                    if seat_kind[seat] == SEAT_POLICY:
                        observe_view(view, True, obs[k])
                        fill_mask(view_legal_actions(view), mask[k])
                        keys[k] = next_u64(rng0[g] if seat == 0 else rng1[g])
                        waiting[k] = g
                        k += 1
                        counters[L_WAITING] = k
                        stage[g] = ST_WAITING
                        break
                    progress[PROGRESS_SEAT] = seat
                    progress[PROGRESS_PHASE] = phase
                    progress[PROGRESS_ASKED] += 1
                    if seat == 0:
                        action = bot0[phase](view0, p0[g], mem0[g], rng0[g])
                    else:
                        action = bot1[phase](view1, p1[g], mem1[g], rng1[g])
                if apply_action(st_g, rules, action) != 0:
                    stage[g] = ST_HAND_OVER
                    continue
                pile_n[g] = mirror_pile(st_g, pile_n[g], view0, view1)
                if record_log:
                    i = counters[L_LOG]
                    log[i] = log_entry(seat, phase, action)
                    log_game[i] = g
                    counters[L_LOG] = i + 1
                game_log_n[g] += 1
    return k


class RowRng:
    """Random numbers for a batch of decisions, row ``i`` from game ``i``'s own stream.

    ``random()`` gives one float in [0, 1) per row, ``random(k)`` an
    ``[n, k]`` array; a row's numbers depend on its game's seed and seat and
    the decision's place in the game only, not on the other rows.
    """

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.asarray(keys, dtype=np.uint64)

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def random(self, size: int | None = None) -> np.ndarray:
        k = 1 if size is None else int(size)
        j = np.arange(1, k + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = self.keys[:, None] + j[None, :] * _GOLDEN  # splitmix64 of key + j * golden
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        out = (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
        return out[:, 0] if size is None else out


class PolicyAnswerError(ValueError):
    """A batched policy's answer that is not one action id per row."""


def check_answer(answer: object, n: int) -> np.ndarray:
    """The action ids of a policy's answer for ``n`` rows: an integer array of shape ``(n,)``."""
    a = np.asarray(answer)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise PolicyAnswerError(f"act() returned {a.dtype} values; it must return integer action ids")
    if a.shape != (n,):
        raise PolicyAnswerError(f"act() returned shape {a.shape} for {n} observations; it must return shape ({n},)")
    return a.astype(np.int64, copy=False)


#: How :func:`illegal_detail` begins: a forfeit's message leads with the policy's choice, not with the
#: engine's view of it (the engine sees -1, an action id that answers nothing).
POLICY_CHOSE = "policy chose action "


def illegal_detail(action: int, mask_row: np.ndarray) -> str:
    """Why a policy's action was refused, naming it and the legal ones."""
    ids = int(sum(1 << int(a) for a in np.flatnonzero(mask_row)))
    legal = ", ".join(f"{a} {action_name(a)}" for a in legal_ids(ids))
    return f"{POLICY_CHOSE}{action_name(action) if 0 <= action < NUM_ACTIONS else action}; legal: {legal}"


#: ANSWERS[phase, action]: the engine's answer an action id gives a decision (-1: none).
ANSWERS = np.array([[answer_of_action(ph, a) for a in range(NUM_ACTIONS)] for ph in range(PH_DONE + 1)], dtype=np.int64)


def answers_of(actions: np.ndarray, phases: np.ndarray) -> np.ndarray:
    """The engine's answer for each (decision, action id); -1 where the id does not answer it."""
    inside = (actions >= 0) & (actions < NUM_ACTIONS)
    return np.where(inside, ANSWERS[phases, np.where(inside, actions, 0)], -1)


Act = Callable[[np.ndarray, np.ndarray, RowRng], object]


class GameClock(Protocol):
    """How a batched seat's answers are charged to its games (an external program's client).

    A batch holds one decision of each of its games, so each game is charged an equal share of the
    seconds the last call counted (``last_charge``: the client leaves out a first answer that may
    compile); a game whose shares add up past ``game_s`` is lost by that seat, as a bot asked one
    decision at a time loses a game that runs past its time per game.
    """

    game_s: float
    last_charge: float


@dataclass
class LockstepRecords:
    """What :func:`play_lockstep` gives back: rows in game order, and why games were lost."""

    games: np.ndarray
    hands: np.ndarray
    log: np.ndarray
    raised: dict[int, str] = field(default_factory=dict)  # game -> exception text of a seat that raised
    details: dict[int, str] = field(default_factory=dict)  # game -> why its policy's action was refused
    counters: np.ndarray = field(default_factory=lambda: np.zeros(L_SIZE, dtype=np.int64))
    stopped: bool = False  # play stopped unfinished: the caller set progress[PROGRESS_STOP]


def play_lockstep(
    seats: tuple[tuple[tuple, np.ndarray, int, Act | None], tuple[tuple, np.ndarray, int, Act | None]],
    rules: np.ndarray,
    seeds: np.ndarray,
    *,
    record_hands: bool,
    record_log: bool,
    caught: tuple[type[BaseException], ...] = (Exception,),
    progress: np.ndarray | None = None,
    clocks: tuple[GameClock | None, GameClock | None] = (None, None),
) -> LockstepRecords:
    """Play one game per seed in lockstep; each seat is ``(functions, params, memory_size, act)``.

    A seat with ``act`` is a batched policy (its functions are not called);
    one without is a compiled bot played inside the kernel.  A policy that
    raises or answers with the wrong shape loses every game of that call (the
    reason in ``raised``); an illegal action id loses its own game, by the
    engine's rules, with the id and the legal ones in ``details``.
    ``progress`` (``PROGRESS_SIZE`` int64 slots: ``C_SIZE`` of
    :mod:`arena.engine.play`) gets, at every moment, the seat and decision
    being asked and a count of asks, for a watchdog: a compiled bot's
    decisions inside the kernel, and each call of a policy's ``act()``
    (counted once, its games in ``PROGRESS_ROWS`` while it runs).  It stops
    play unfinished (``stopped``) when the caller sets its slot
    ``PROGRESS_STOP``.  A seat with a clock
    (:class:`GameClock`) loses each game whose share of its batches' time
    runs past the clock's time per game.
    """
    n = seeds.shape[0]
    if progress is None:
        progress = np.zeros(PROGRESS_SIZE, dtype=np.int64)
    elif progress.dtype != np.int64 or not progress.flags.c_contiguous or progress.shape != (PROGRESS_SIZE,):
        raise ValueError(f"progress must be {PROGRESS_SIZE} contiguous int64 slots (the kernel writes into it)")
    (f0, par0, m0, act0), (f1, par1, m1, act1) = seats
    seat_kind = np.array([SEAT_POLICY if a is not None else SEAT_COMPILED for a in (act0, act1)], dtype=np.int64)
    par0 = np.ascontiguousarray(par0, dtype=np.float64)
    par1 = np.ascontiguousarray(par1, dtype=np.float64)
    work = {
        "p0": np.zeros((n, par0.shape[0]), dtype=np.float64),
        "p1": np.zeros((n, par1.shape[0]), dtype=np.float64),
        "mem0": np.zeros((n, m0), dtype=np.float64),
        "mem1": np.zeros((n, m1), dtype=np.float64),
        "st": np.zeros((n, S_SIZE), dtype=np.int64),
        "views": np.zeros((n, 2 * V_SIZE), dtype=np.int64),
        "rng0": np.zeros((n, RNG_WORDS), dtype=np.uint64),
        "rng1": np.zeros((n, RNG_WORDS), dtype=np.uint64),
        "scratch": np.zeros(RNG_WORDS, dtype=np.uint64),
    }
    stage = np.full(n, ST_NEW, dtype=np.int64)
    pile_n = np.zeros(n, dtype=np.int64)
    games = np.zeros((n, G_SIZE), dtype=np.int64)
    hands = np.zeros((max(16, 12 * n) if record_hands else 0, H_SIZE), dtype=np.int64)
    log = np.zeros(max(1024, 400 * n) if record_log else 0, dtype=np.int64)
    log_game = np.zeros(log.shape[0], dtype=np.int64)
    game_log_n = np.zeros(n, dtype=np.int64)
    hand_log_start = np.zeros(n, dtype=np.int64)
    pending = np.zeros(n, dtype=np.int64)
    counters = np.zeros(L_SIZE, dtype=np.int64)
    obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, NUM_ACTIONS), dtype=np.uint8)
    waiting = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.uint64)
    out = LockstepRecords(games, hands, log, counters=counters)
    spent = np.zeros((2, n))  # seconds of answers charged to each game, by seat (seats with a clock)
    bots = tuple(NO_BOT if act is not None else tuple(_Decision(fn) for fn in f) for act, f in ((act0, f0), (act1, f1)))

    def lose(g: int, seat: int, phase: int, text: str) -> None:
        row = games[g]
        row[G_FORFEIT] = seat
        row[G_WINNER] = 1 - seat
        row[G_ERROR] = len(ERROR_TEXT)  # arena.engine.play.ERR_RAISED: the seat raised
        row[G_ERROR_KIND] = phase
        row[G_HANDS] = max(int(row[G_HANDS]), 1)
        out.raised[g] = text
        stage[g] = ST_DONE
        game_log_n[g] = hand_log_start[g]  # the unfinished hand's decisions are not kept, as in play_batch

    # The compiled entry point of the one signature: the dispatcher would type both bot tuples
    # on every call (a millisecond: first-class function types), for a signature that is fixed.
    kernel_entry = lockstep_kernel.overloads[lockstep_kernel.signatures[0]].entry_point
    while True:
        if progress[PROGRESS_STOP] > 0:
            out.stopped = True
            return out
        try:
            k = kernel_entry(
                seeds, rules, bots[0], bots[1], seat_kind, par0, par1, work["p0"], work["p1"], work["mem0"],
                work["mem1"], work["st"], work["views"], work["rng0"], work["rng1"], work["scratch"], stage, pile_n,
                games, hands, log, log_game, game_log_n, hand_log_start, pending, counters, progress, obs, mask,
                waiting, keys,
            )  # fmt: skip
        except caught as exc:  # a compiled bot raised inside its decision; the games asked so far still wait
            g = int(counters[L_GAME])
            lose(g, int(progress[PROGRESS_SEAT]), int(progress[PROGRESS_PHASE]), f"{type(exc).__name__}: {exc}")
            k = int(counters[L_WAITING])
            counters[L_FULL] = 1  # call again even if none waits
        if counters[L_FULL]:
            if record_hands and counters[L_HANDS] >= hands.shape[0]:
                hands = out.hands = np.concatenate([hands, np.zeros_like(hands)])
            if record_log and counters[L_LOG] >= log.shape[0]:
                log = out.log = np.concatenate([log, np.zeros_like(log)])
                log_game = np.concatenate([log_game, np.zeros_like(log_game)])
        if k == 0 and not counters[L_FULL]:
            break
        rows = waiting[:k]
        for seat, act in ((0, act0), (1, act1)):
            if act is None:
                continue
            mine = np.flatnonzero(work["st"][rows, S_CUR] == seat)
            if mine.size == 0:
                continue
            games_of = rows[mine]
            phases = work["views"][games_of, seat * V_SIZE + V_DECISION]
            progress[PROGRESS_SEAT] = seat
            progress[PROGRESS_PHASE] = int(phases[0])
            progress[PROGRESS_ROWS] = mine.size
            progress[PROGRESS_ASKED] += 1
            m = mask[mine].view(np.bool_)
            try:
                actions = check_answer(act(obs[mine], m, RowRng(keys[mine])), mine.size)
            except caught as exc:
                for g, ph in zip(games_of.tolist(), phases.tolist()):
                    lose(g, seat, ph, f"{type(exc).__name__}: {exc}")
                continue
            finally:
                progress[PROGRESS_ROWS] = 0  # what follows is the engine's work (or the next ask's)
            legal = m[np.arange(mine.size), np.clip(actions, 0, NUM_ACTIONS - 1)] & (actions >= 0)
            legal &= actions < NUM_ACTIONS
            pending[games_of] = answers_of(actions, phases)
            for i in np.flatnonzero(~legal).tolist():
                out.details[int(games_of[i])] = illegal_detail(int(actions[i]), m[i])
            clock = clocks[seat]
            if clock is not None:
                spent[seat, games_of] += clock.last_charge / mine.size
                for i in np.flatnonzero(spent[seat, games_of] > clock.game_s).tolist():
                    lose(
                        int(games_of[i]),
                        seat,
                        int(phases[i]),
                        f"timeout: act() ran past the game's time limit ({clock.game_s:.3g} s of answers,"
                        " the game's share of each batch)",
                    )
    return _in_game_order(out, n, game_log_n, log_game, record_hands, record_log)


def _in_game_order(
    out: LockstepRecords, n: int, game_log_n: np.ndarray, log_game: np.ndarray, record_hands: bool, record_log: bool
) -> LockstepRecords:
    """The hand rows and the log as the sequential driver writes them: game by game, in order."""
    hands = out.hands[: out.counters[L_HANDS]]
    if record_hands:
        order = np.lexsort((hands[:, H_HAND_NO], hands[:, H_GAME]))
        hands = hands[order]
    if record_log:
        used = int(out.counters[L_LOG])
        games_of = log_game[:used]
        order = np.argsort(games_of, kind="stable")
        per_game = np.bincount(games_of, minlength=n)
        first = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_game, out=first[1:])
        place = np.arange(used) - first[games_of[order]]  # each entry's place within its game
        keep = place < game_log_n[games_of[order]]
        kept_games = games_of[order][keep]
        log = out.log[:used][order][keep]
        kept = np.bincount(kept_games, minlength=n)
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(kept, out=start[1:])
        if record_hands and hands.shape[0]:
            hands[:, H_LOG_START] += start[hands[:, H_GAME]]
        out.log = log
    out.hands = hands
    return out
