"""Drivers that play games: the compiled batch kernel and the plain Python loop.

Both drivers do the same thing in the same order - begin the game, deal,
ask the seat to act through its view, apply the answer, book the hand - and
all rules live in :mod:`arena.engine.step`, so a game's records depend only on its
seed, the rules and the bots, never on the driver, the batch a game is in,
or the worker that plays it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import types

from arena.engine._jit import kernel
from arena.engine.cards import NUM_CARDS, card_str
from arena.engine.contract import PHASE_FUNCTION, BotType, PlayableBot, TableHooks, refusal, table_hooks
from arena.engine.layout import (
    ERROR_TEXT,
    EXTERNAL_FAILURES,
    G_ERROR,
    G_ERROR_ACTION,
    G_ERROR_KIND,
    G_FORFEIT,
    G_HANDS,
    G_SIZE,
    G_WINNER,
    H_GAME,
    H_LOG_LEN,
    H_LOG_START,
    H_SIZE,
    OUT_FORFEIT,
    PH_DISCARD,
    PH_DONE,
    S_CUR,
    S_ERROR,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_OUTCOME,
    S_PHASE,
    S_PILE_N,
    S_SIZE,
    V_SIZE,
)
from arena.engine.lockstep import (
    POLICY_CHOSE,
    PROGRESS_ASKED,
    PROGRESS_PHASE,
    PROGRESS_ROWS,
    PROGRESS_SEAT,
    PROGRESS_SIZE,
    PROGRESS_STOP,
    play_lockstep,
)
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array as to_rules_array
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
    write_declared,
    write_hand_row,
)
from arena.settings.rules import Rules, load_rules

# counters[] slots shared by the kernel and its Python caller
C_NEXT_GAME = 0  # first game not finished (the one in progress if a bot raised)
C_HANDS = 1  # hand rows written
C_LOG = 2  # log entries written
C_SEAT = 3  # seat being asked (to blame a bot that raised)
C_PHASE = 4  # decision being asked
C_ASKED = 5  # decisions asked so far: a watchdog that sees it stand still knows a bot is stuck in one
C_STOP = 6  # set > 0 by the caller (from another thread) to stop before the next game: see Stopped
C_ROWS = 7  # decisions the ask under way answers: n while a batched policy answers n games in one call, else 0
C_SIZE = 8

#: Slots of :func:`play_hand`'s ``views``: one view per seat.
VIEWS_SIZE = 2 * V_SIZE

ERR_RAISED = len(ERROR_TEXT)  # a bot raised an exception (game row G_ERROR)
# A watchdog reads both drivers' progress in the same slots, and both drivers stop on the same slot.
assert (C_SEAT, C_PHASE, C_ASKED, C_STOP, C_ROWS) == (
    PROGRESS_SEAT,
    PROGRESS_PHASE,
    PROGRESS_ASKED,
    PROGRESS_STOP,
    PROGRESS_ROWS,
)
assert C_SIZE == PROGRESS_SIZE


class Stopped(Exception):
    """Play stopped before game ``next_game`` because its caller set ``counters[C_STOP]``.

    A Dask worker cannot stop a task's thread, and a chunk of a search bot or of a
    Java player plays for minutes: when the run that asked for it has gone (Ctrl-C, a
    decided sequential test), the worker sets the slot and the chunk ends after the
    game being played, its games thrown away as the run throws them away.
    """

    def __init__(self, next_game: int) -> None:
        super().__init__(f"stopped by the caller before game {next_game}")
        self.next_game = next_game


ERROR_MESSAGES = ERROR_TEXT + ("raised an exception",)
_EXTERNAL = "ExternalBotError: "  # the start of the detail of an external bot's failure (see EXTERNAL_FAILURES)

_I1 = types.int64[::1]
_F1 = types.float64[::1]
_I2 = types.int64[:, ::1]
_U1 = types.uint64[::1]
_KERNEL_SIG = types.int64(
    _I1, _I1, BotType, BotType, _F1, _F1, _F1, _F1, _I2, _I2, _I1, _I1, _F1, _F1, _I1, _I1, _U1, _U1, _U1
)


@kernel
def play_hand(st, rules, bot0, bot1, params0, params1, mem0, mem1, rng0, rng1, views, log, n_log, counters):
    """Ask the bots and apply their decisions until the hand in ``st`` is over.

    The one compiled decision loop: the batch kernel uses it for every hand
    and a search bot can use it to play a sampled deal forward
    (:mod:`arena.botkit.search`).  Logs each accepted decision at ``log[n_log...]``
    when ``log`` is not empty and returns the new log length, or -1 if the
    log is full.  An illegal decision stops the hand with ``st[S_ERROR]`` set.

    ``views`` (``VIEWS_SIZE`` slots) holds one view per seat: seat 0's in
    the first ``V_SIZE`` slots, seat 1's in the next.  Each is written whole
    (:func:`build_view`) when the hand begins; then the pile slot an action
    changes is written into both, and the header slots that move
    (:func:`arena.engine.step.refresh_view`) into a seat's view before each of its
    decisions.  So at every decision the seat's view is what
    :func:`build_view` would write, unless the bot wrote into its own view
    this hand (then it sees a wrong picture until the hand ends: its own
    loss).  The engine never reads a view, and a seat never gets the
    other's array, so nothing a bot writes into its view reaches the other
    bot or the engine (``tests/engine/test_seat_views.py`` attacks this).
    """
    record_log = log.shape[0] > 0
    view0 = views[:V_SIZE]
    view1 = views[V_SIZE : 2 * V_SIZE]
    build_view(st, rules, np.int64(0), view0)
    build_view(st, rules, np.int64(1), view1)
    n = st[S_PILE_N]  # the pile length both views show
    while st[S_PHASE] != PH_DONE:
        seat = st[S_CUR]
        phase = st[S_PHASE]
        refresh_view(st, seat, view0 if seat == 0 else view1)
        counters[C_SEAT] = seat
        counters[C_PHASE] = phase
        counters[C_ASKED] += 1
        if seat == 0:
            action = bot0[phase](view0, params0, mem0, rng0)
        else:
            action = bot1[phase](view1, params1, mem1, rng1)
        if apply_action(st, rules, action) != 0:
            return n_log
        n = mirror_pile(st, n, view0, view1)
        if record_log:
            if n_log >= log.shape[0]:
                return -1
            log[n_log] = log_entry(seat, phase, action)
            n_log += 1
    return n_log


@kernel(_KERNEL_SIG)
def play_games_kernel(
    seeds, rules, bot0, bot1, params0, params1, mem0, mem1, games, hands, log, counters, p0, p1, st, views, rng0, rng1,
    scratch,
):  # fmt: skip
    """Play games ``counters[C_NEXT_GAME]..`` of ``seeds``; return 0 when all are done.

    Returns 2, before a game, when ``counters[C_STOP]`` is set above 0 (:class:`Stopped`).
    Returns 1 when the ``hands`` or ``log`` buffer is full: the unfinished game
    is rolled back (``counters`` point at it), so the caller grows the buffers
    and calls again.  Empty ``hands``/``log`` arrays mean "don't record".
    The last seven arguments are work space (:func:`kernel_work_space`): the
    kernel allocates nothing, so it is compiled without reference counting,
    and the engine's steps (``play_hand``, ``apply_action``, ``build_view``,
    ...) are inlined into it: a hand makes no call but the bots' and the meld
    kernels'.
    """
    record_hands = hands.shape[0] > 0
    for g in range(counters[C_NEXT_GAME], seeds.shape[0]):
        if counters[C_STOP] > 0:
            return 2
        n_h = counters[C_HANDS]
        n_l = counters[C_LOG]
        row = games[g]
        seed = seeds[g]
        begin_game(st, rules, seed, rng0, rng1, mem0, mem1, row)
        # Each game gets a fresh copy of the parameters, so a bot that writes
        # to its params array cannot make one game depend on the games before
        # it.  Element by element: an array assignment would compile numba's
        # shape-mismatch error message (string formatting: seconds of a cold start).
        for i in range(p0.shape[0]):
            p0[i] = params0[i]
        for i in range(p1.shape[0]):
            p1[i] = params1[i]
        while True:
            begin_hand(st, rules, seed, scratch)
            log_start = n_l
            n_l = play_hand(st, rules, bot0, bot1, p0, p1, mem0, mem1, rng0, rng1, views, log, n_l, counters)
            if n_l < 0:
                return 1
            if st[S_ERROR] != 0:
                forfeit_game(st, row)
            if record_hands:
                if n_h >= hands.shape[0]:
                    return 1
                write_hand_row(st, g, hands[n_h], log_start if log.shape[0] > 0 else -1, n_l - log_start)
                n_h += 1
            if st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules, row):
                break
        counters[C_HANDS] = n_h
        counters[C_LOG] = n_l
        counters[C_NEXT_GAME] = g + 1
    return 0


def kernel_work_space(params0: np.ndarray, params1: np.ndarray) -> tuple[np.ndarray, ...]:
    """The work arrays :func:`play_games_kernel` takes last: p0, p1, st, views, rng0, rng1, scratch."""
    return (
        np.zeros(params0.shape[0], dtype=np.float64),
        np.zeros(params1.shape[0], dtype=np.float64),
        np.zeros(S_SIZE, dtype=np.int64),
        np.zeros(VIEWS_SIZE, dtype=np.int64),
        np.zeros(RNG_WORDS, dtype=np.uint64),
        np.zeros(RNG_WORDS, dtype=np.uint64),
        np.zeros(RNG_WORDS, dtype=np.uint64),
    )


# play_hand as plain Python (it is a plain function already under NUMBA_DISABLE_JIT).
_PLAY_HAND_PY = getattr(play_hand, "py_func", play_hand)


class AnswerTypeError(TypeError):
    """A plain bot answered with something that is not an integer."""


def checked_answer(answer: object) -> int:
    """A plain bot's answer, which must be an integer (Python or numpy), never a bool, float or str.

    The compiled signature makes a fast bot's answer an int64; a plain bot
    could answer 1.7 or "1", and silently truncating or parsing that would
    hide a bug, so it forfeits instead (:class:`AnswerTypeError`).  The
    browser game asks its bot through this too.
    """
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, np.integer)):
        raise AnswerTypeError(f"answered {answer!r} ({type(answer).__name__}); answers must be integers")
    return int(answer)


def _as_int(fn):
    """``fn``, a plain bot's decision, with its answer checked (:func:`checked_answer`)."""

    def ask(view, params, memory, rng):
        return checked_answer(fn(view, params, memory, rng))

    return ask


def _play_plain(
    seeds, rules, bot0: PlayableBot, bot1: PlayableBot, mem0, mem1, games, hands, log, counters, details: dict[int, str]
) -> int:
    """:func:`play_games_kernel` for bots called from Python.

    The decision loop is :func:`play_hand` itself, run as Python (its
    ``py_func``), so only this game-level bookkeeping mirrors the kernel.
    A refused answer's own explanation (:func:`arena.engine.contract.refusal`)
    goes to ``details`` under its game.
    """
    st = np.zeros(S_SIZE, dtype=np.int64)
    views = np.zeros(VIEWS_SIZE, dtype=np.int64)
    rng0 = np.zeros(RNG_WORDS, dtype=np.uint64)
    rng1 = np.zeros(RNG_WORDS, dtype=np.uint64)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    f0 = tuple(_as_int(f) for f in bot0.functions)
    f1 = tuple(_as_int(f) for f in bot1.functions)
    hooks = (table_hooks(bot0), table_hooks(bot1))
    refusals = (refusal(bot0), refusal(bot1))
    record_hands = hands.shape[0] > 0
    for g in range(int(counters[C_NEXT_GAME]), seeds.shape[0]):
        if counters[C_STOP] > 0:
            return 2
        n_h = int(counters[C_HANDS])
        n_l = int(counters[C_LOG])
        row = games[g]
        seed = seeds[g]
        begin_game(st, rules, seed, rng0, rng1, mem0, mem1, row)
        p0, p1 = bot0.params.copy(), bot1.params.copy()  # fresh per game, as in the kernel
        while True:
            begin_hand(st, rules, seed, scratch)
            log_start = n_l
            n_l = _PLAY_HAND_PY(st, rules, f0, f1, p0, p1, mem0, mem1, rng0, rng1, views, log, n_l, counters)
            if n_l < 0:
                return 1
            if (hooks[0] is not None or hooks[1] is not None) and st[S_ERROR] == 0:
                declared = _after_hand(st, rules, hooks, (mem0, mem1), (rng0, rng1))
                if declared is not None and log.shape[0] > 0:  # the log holds them, so the game replays
                    n_l = write_declared(log, n_l, st[S_KNOCKER], np.int64(declared[0]), np.int64(declared[1]))
                    if n_l < 0:
                        return 1
            if st[S_ERROR] != 0:
                forfeit_game(st, row)
                why = refusals[int(row[G_FORFEIT])]
                if why is not None and (text := why()):
                    details[g] = text
            if record_hands:
                if n_h >= hands.shape[0]:
                    return 1
                write_hand_row(st, g, hands[n_h], log_start if log.shape[0] > 0 else -1, n_l - log_start)
                n_h += 1
            if st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules, row):
                break
        counters[C_HANDS] = n_h
        counters[C_LOG] = n_l
        counters[C_NEXT_GAME] = g + 1
    return 0


def _after_hand(
    st: np.ndarray,
    rules: np.ndarray,
    hooks: tuple[TableHooks | None, TableHooks | None],
    memories: tuple[np.ndarray, np.ndarray],
    rngs: tuple[np.ndarray, np.ndarray],
) -> tuple[int, int] | None:
    """A plain bot's hooks after a hand: its declared melds scored, then what the table shows.  Returns
    the ``(sets, runs)`` the knocker declared, or None when it scored the automatic arrangement."""
    from arena.engine.showdown import declared_showdown, table_shows

    knocker = int(st[S_KNOCKER])
    hook = hooks[knocker] if knocker >= 0 else None
    scored = None
    if hook is not None:
        declared = hook.declared_melds(knocker)
        if declared is not None:
            auto = (int(st[S_KNOCK_SETS]), int(st[S_KNOCK_RUNS]))
            scored = declared_showdown(st, rules, *declared)
            if scored == auto:  # the automatic arrangement: the log need not say so (nor change)
                scored = None
    shown = table_shows(st)
    for seat, h in enumerate(hooks):
        if h is not None:
            view = np.zeros(V_SIZE, dtype=np.int64)
            build_view(st, rules, np.int64(seat), view)
            h.hand_over(seat, view, shown, memories[seat], rngs[seat])
    return scored


class IllegalMoveError(RuntimeError):
    """A bot made an illegal decision or raised (when forfeits are not wanted)."""


@dataclass
class BatchRecords:
    """Raw records of a batch of games, one row per game (and per hand)."""

    seeds: np.ndarray
    games: np.ndarray  # (n, G_SIZE)
    hands: np.ndarray  # (m, H_SIZE); empty unless recorded
    log: np.ndarray  # flat action log; empty unless recorded
    errors: list[str]  # one message per forfeited game


def forfeit_message(bots: tuple[PlayableBot, PlayableBot], seed: int, row: np.ndarray, detail: str = "") -> str:
    """One line naming the bot, its decision and what was wrong."""
    return forfeit_text((bots[0].name, bots[1].name), seed, row, detail)


def forfeit_text(names: tuple[str, str], seed: int, row: np.ndarray, detail: str = "") -> str:
    """:func:`forfeit_message` with the seats' names."""
    seat = int(row[G_FORFEIT])
    what = ERROR_MESSAGES[int(row[G_ERROR])]
    decision = PHASE_FUNCTION[int(row[G_ERROR_KIND])]
    action = int(row[G_ERROR_ACTION])
    answer = "" if int(row[G_ERROR]) == ERR_RAISED else f" (answered {action})"
    if answer and int(row[G_ERROR_KIND]) == PH_DISCARD and 0 <= action < NUM_CARDS:
        answer = f" (answered {action}, {card_str(action, symbols=True)})"  # a bot may number cards its own way
    if detail.startswith(POLICY_CHOSE):  # the engine saw -1 for an action that answers nothing: say what was chosen
        what, answer = "chose an illegal action", ""
    elif int(row[G_ERROR]) == ERR_RAISED and detail.startswith(_EXTERNAL):
        what = EXTERNAL_FAILURES.get(detail[len(_EXTERNAL) :].split(":", 1)[0], "failed")
    tail = f": {detail}" if detail else ""
    return f"bot '{names[seat]}' (seat {seat}) {what} in {decision}(){answer}, game seed {seed}{tail}"


def game_log_spans(hands: np.ndarray, n_games: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each game's actions lie in a batch log: ``(start, length)`` per game.

    A game's hands are consecutive rows and their logs consecutive entries;
    a game a bot ended by raising has no hand row and an empty log.
    """
    g = hands[:, H_GAME]
    first = np.searchsorted(g, np.arange(n_games), side="left")
    last = np.searchsorted(g, np.arange(n_games), side="right")
    has = last > first
    start = np.zeros(n_games, dtype=np.int64)
    end = np.zeros(n_games, dtype=np.int64)
    start[has] = hands[first[has], H_LOG_START]
    end[has] = hands[last[has] - 1, H_LOG_START] + hands[last[has] - 1, H_LOG_LEN]
    return start, end - start


def play_batch(
    bot0: PlayableBot,
    bot1: PlayableBot,
    rules_array: np.ndarray | Rules | str,
    seeds: np.ndarray,
    *,
    record_hands: bool = False,
    record_log: bool = False,
    forfeit: bool = True,
    counters: np.ndarray | None = None,
    catch_exits: bool = False,
) -> BatchRecords:
    """Play one game per seed, ``bot0`` in seat 0; both bots fast uses the kernel.

    A bot's illegal decision or exception forfeits that game (recorded in the
    game row and in ``errors``) when ``forfeit`` is true, and raises
    :class:`IllegalMoveError` naming the bot and the decision otherwise.
    ``counters`` (``C_SIZE`` int64 slots, e.g. shared memory a watchdog
    reads) receives the seat and decision being asked and counts the asks
    (``C_ASKED``: a batched policy's call counts once, its games in
    ``C_ROWS`` while it runs), on every path; setting its slot ``C_STOP``
    from another thread raises :class:`Stopped` before the next game (or
    batch step), the finished games thrown away.  ``catch_exits``
    also turns a bot's ``SystemExit`` and ``KeyboardInterrupt`` into a
    forfeit: right in a worker process, which ignores Ctrl-C itself, and
    wrong in the driver, where Ctrl-C must stop the run.

    ``rules_array`` is the rules as the kernels read them (:func:`arena.engine.rules_array.rules_array`),
    or a :class:`~arena.settings.rules.Rules` (``arena.load_rules(...)``), or a preset name or file.
    """
    if isinstance(rules_array, str):
        rules_array = load_rules(rules_array)
    if isinstance(rules_array, Rules):
        rules_array = to_rules_array(rules_array)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    if seeds.size and seeds.min() < 0:
        raise ValueError("game seeds must be >= 0")
    rules_array = np.ascontiguousarray(rules_array, dtype=np.int64)
    n = seeds.shape[0]
    games = np.zeros((n, G_SIZE), dtype=np.int64)
    hands = np.zeros((max(16, 12 * n) if record_hands else 0, H_SIZE), dtype=np.int64)
    log = np.zeros(max(1024, 400 * n) if record_log else 0, dtype=np.int64)
    if counters is None:
        counters = np.zeros(C_SIZE, dtype=np.int64)
    else:
        counters[:C_STOP] = 0  # not the stop slot: a caller may have set it already
        counters[C_ROWS] = 0
    caught: tuple[type[BaseException], ...] = (
        (Exception, SystemExit, KeyboardInterrupt) if catch_exits else (Exception,)
    )
    mem0 = np.zeros(bot0.memory_size, dtype=np.float64)
    mem1 = np.zeros(bot1.memory_size, dtype=np.float64)
    raised: dict[int, str] = {}  # game -> exception text of a bot that raised, or why its answer was refused
    act0, act1 = batch_act(bot0), batch_act(bot1)
    if (act0 or act1) and (act0 or bot0.fast) and (act1 or bot1.fast):
        # A batched policy against a compiled bot (or another policy): lockstep batches.
        rec = play_lockstep(
            (
                (bot0.functions, bot0.params, bot0.memory_size, act0),
                (bot1.functions, bot1.params, bot1.memory_size, act1),
            ),
            rules_array,
            seeds,
            record_hands=record_hands,
            record_log=record_log,
            caught=caught,
            progress=counters,
            clocks=(batch_clock(bot0), batch_clock(bot1)),
        )
        if rec.stopped:
            raise Stopped(0)
        details = {**rec.details, **rec.raised}
        return _records(bot0, bot1, seeds, rec.games, rec.hands, rec.log, details, forfeit)
    fast = bot0.fast and bot1.fast
    work = kernel_work_space(bot0.params, bot1.params) if fast else ()
    while True:
        try:
            if fast:
                status = play_games_kernel(
                    seeds,
                    rules_array,
                    bot0.functions,
                    bot1.functions,
                    bot0.params,
                    bot1.params,
                    mem0,
                    mem1,
                    games,
                    hands,
                    log,
                    counters,
                    *work,
                )
            else:
                status = _play_plain(seeds, rules_array, bot0, bot1, mem0, mem1, games, hands, log, counters, raised)
        except caught as exc:  # a bot raised inside its decision function
            g = int(counters[C_NEXT_GAME])
            row = games[g]
            seat = int(counters[C_SEAT])
            row[G_FORFEIT] = seat
            row[G_WINNER] = 1 - seat
            row[G_ERROR] = ERR_RAISED
            row[G_ERROR_KIND] = counters[C_PHASE]
            row[G_HANDS] = max(int(row[G_HANDS]), 1)
            raised[g] = f"{type(exc).__name__}: {exc}"
            if not forfeit:
                raise IllegalMoveError(forfeit_message((bot0, bot1), int(seeds[g]), row, raised[g])) from exc
            counters[C_NEXT_GAME] = g + 1
            continue
        if status == 0:
            break
        if status == 2:
            raise Stopped(int(counters[C_NEXT_GAME]))
        # A buffer filled up; the unfinished game was rolled back: grow and go on.
        if record_hands:
            hands = np.concatenate([hands, np.zeros_like(hands)])
        if record_log:
            log = np.concatenate([log, np.zeros_like(log)])
    return _records(bot0, bot1, seeds, games, hands[: counters[C_HANDS]], log[: counters[C_LOG]], raised, forfeit)


def _records(bot0, bot1, seeds, games, hands, log, details: dict[int, str], forfeit: bool) -> BatchRecords:
    """The batch's records, with one message per forfeited game (or the first one raised)."""
    errors = []
    for lost in np.flatnonzero(games[:, G_FORFEIT] >= 0):
        msg = forfeit_message((bot0, bot1), int(seeds[lost]), games[lost], details.get(int(lost), ""))
        if not forfeit:
            raise IllegalMoveError(msg)
        errors.append(msg)
    return BatchRecords(seeds, games, hands, log, errors)


def batch_act(bot: PlayableBot):
    """A bot's batched decision ``act(obs, mask, rng)`` if it is a batched policy, else None."""
    return getattr(bot, "batch_act", None)


def batch_clock(bot: PlayableBot):
    """What charges a batched bot's answers to its games (:class:`arena.engine.lockstep.GameClock`),
    if it has a time per game (a program behind the wall or over the protocol), else None."""
    return getattr(bot, "batch_clock", None)
