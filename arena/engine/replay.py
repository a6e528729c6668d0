"""Replay a game from its seed and compact action log.

A hand is fixed by the game seed, the hand number (which seed the shuffle)
and the dealer and scores the earlier hands left; the log holds every
decision as ``seat * LOG_SEAT + kind * LOG_KIND + action``.  Replaying
re-applies those actions through the same engine functions the drivers use,
and checks that each logged decision was asked of the same seat in the same
phase, so a log that does not belong to the seed is caught, not misread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.engine._jit import jit
from arena.engine.layout import (
    DECLARED_SETS,
    G_SIZE,
    H_DEADWOOD,
    H_KNOCKER,
    H_OUTCOME,
    H_POINTS,
    H_SCORE,
    H_SIZE,
    H_TURNS,
    H_UPCARD,
    LOG_KIND,
    LOG_SEAT,
    OUT_FORFEIT,
    OUTCOME_NAMES,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    S_CUR,
    S_KNOCKER,
    S_OUTCOME,
    S_PHASE,
    S_SIZE,
)
from arena.engine.rng import RNG_WORDS
from arena.engine.step import (
    apply_action,
    begin_game,
    begin_hand,
    end_hand,
    log_entry,
    read_declared,
    write_hand_row,
)


class ReplayError(ValueError):
    """The log does not fit the seed and rules it is replayed with."""


@dataclass
class ReplayedHand:
    """The state at the end of one replayed hand, and the actions that led to it."""

    state: np.ndarray
    row: np.ndarray  # H_* record
    actions: list[tuple[int, int, int]]  # (seat, phase, action)


def describe_action(phase: int, action: int, card: Callable[[int], str]) -> str:
    """What a decision did, in words after the player's name (``card`` names a card)."""
    if phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER):
        return "takes the upcard" if action else "passes the upcard"
    if phase == PH_DRAW:
        return "draws from the pile" if action else "draws from the stock"
    if phase == PH_BIG_GIN:
        return "declares BIG GIN" if action else "does not declare big gin"
    if phase == PH_DISCARD:
        return f"discards {card(action)}"
    if phase == PH_KNOCK:
        return "KNOCKS" if action else "does not knock"
    return f"? {phase} {action}"


def both_passed(phase: int, action: int) -> bool:
    """After this decision the engine draws for the non-dealer without asking
    (the dealer passed the upcard too), so no log entry records that draw."""
    return phase == PH_UPCARD_DEALER and action == 0


def decode(entry: int) -> tuple[int, int, int]:
    """``(seat, phase, action)`` of one log entry."""
    return entry // LOG_SEAT, (entry % LOG_SEAT) // LOG_KIND, entry % LOG_KIND


@jit
def replay_start(seed, rules):
    """``(state, game row)`` at the start of the game seeded ``seed``, to replay its answers on.

    A replay applies logged answers, so no bot is asked: the bots' generators
    and memories that :func:`arena.engine.step.begin_game` resets are
    throwaways.  Compiled, so a compiled replay (the luck analysis,
    :mod:`arena.analysis.luck`) starts its games here too.
    """
    st = np.zeros(S_SIZE, dtype=np.int64)
    row = np.zeros(G_SIZE, dtype=np.int64)
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    mem = np.zeros(1)
    begin_game(st, rules, seed, rng, rng.copy(), mem, mem.copy(), row)
    return st, row


def begin_replay(seed: int, rules_array: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(state, game row, shuffle scratch)`` of a game seeded ``seed``, ready to replay its log."""
    st, row = replay_start(np.int64(seed), rules_array)
    return st, row, np.zeros(RNG_WORDS, dtype=np.uint64)


def _declared(st: np.ndarray, rules_array: np.ndarray, log: np.ndarray, pos: int, entries: bool) -> int:
    """Score the knock that just ended the hand with the melds the knocker declared, if ``log[pos:]``
    holds them (:func:`arena.engine.step.write_declared`); the place after them (``pos`` when none).

    ``entries``: ``log`` holds log entries (their seat and kind are checked), not bare answers.  Melds
    that are cut short, or not a legal knock for the hand, are a :class:`ReplayError`."""
    from arena.engine.showdown import ArrangementError, declared_showdown

    if pos >= len(log) or int(log[pos]) % LOG_KIND != DECLARED_SETS:
        return pos
    sets, runs, after = read_declared(log, np.int64(pos))
    knocker = int(st[S_KNOCKER])
    if after < 0 or knocker < 0:
        raise ReplayError(f"log entry {pos}: declared melds that are cut short or follow no knock")
    if entries and any(decode(int(e))[:2] != (knocker, PH_DONE) for e in log[pos:after]):
        raise ReplayError(f"log entry {pos}: declared melds not logged as the knocker's (seat {knocker})")
    try:
        declared_showdown(st, rules_array, int(sets), int(runs))
    except ArrangementError as exc:
        raise ReplayError(f"log entry {pos}: the declared melds are not a legal knock: {exc}") from None
    return int(after)


@dataclass
class ReplayStep:
    """One step of a replay: a ``deal``, a ``decision`` (``seat``, ``phase``,
    ``action``, and the state ``before`` it), the ``end`` of a hand (before
    its points are added to the scores), or a ``forfeit`` (the log stops inside
    a hand).  ``state`` is the live state: copy it to keep a position.
    ``entries``: the log entries the step used (a knock's decision, with the
    melds its knocker declared after it, uses more than one)."""

    kind: str
    state: np.ndarray
    seat: int = -1
    phase: int = -1
    action: int = -1
    before: np.ndarray | None = None
    entries: int = 1


def replay_steps(seed: int, rules_array: np.ndarray, log: np.ndarray) -> Iterator[ReplayStep]:
    """Every step of a game replayed from ``log``, checking each logged decision
    was asked of that seat in that phase (:class:`ReplayError` if not)."""
    st, row, scratch = begin_replay(seed, rules_array)
    pos = 0
    log = np.asarray(log, dtype=np.int64)
    while True:
        begin_hand(st, rules_array, seed, scratch)
        yield ReplayStep("deal", st)
        while st[S_PHASE] != PH_DONE:
            if pos >= len(log):
                # The log stops inside a hand: a game ended by a forfeit (the
                # illegal decision is not logged).
                yield ReplayStep("forfeit", st)
                return
            seat, phase, action = decode(int(log[pos]))
            if seat != st[S_CUR] or phase != st[S_PHASE]:
                raise ReplayError(
                    f"log entry {pos} is seat {seat} phase {phase}, but the game asks "
                    f"seat {st[S_CUR]} phase {st[S_PHASE]}"
                )
            before = st.copy()
            if apply_action(st, rules_array, action) != 0:
                raise ReplayError(f"log entry {pos}: action {action} is illegal here")
            after = _declared(st, rules_array, log, pos + 1, True) if st[S_PHASE] == PH_DONE else pos + 1
            yield ReplayStep("decision", st, seat, phase, action, before, after - pos)
            pos = after
        yield ReplayStep("end", st)
        if st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules_array, row):
            return


def replay_hands(seed: int, rules_array: np.ndarray, log: np.ndarray, game_index: int = 0) -> Iterator[ReplayedHand]:
    """Yield each hand of a game replayed from ``log``; the last one ends the game
    (a hand the log stops inside, by a forfeit, is yielded as it stood)."""
    start = pos = 0
    actions: list[tuple[int, int, int]] = []
    for step in replay_steps(seed, rules_array, log):
        if step.kind == "deal":
            start, actions = pos, []
        elif step.kind == "decision":
            actions.append((step.seat, step.phase, step.action))
            pos += step.entries
        elif step.kind == "end" or actions:
            hand_row = np.zeros(H_SIZE, dtype=np.int64)
            write_hand_row(step.state, game_index, hand_row, start, pos - start)
            yield ReplayedHand(step.state.copy(), hand_row, actions)


def log_from_actions(seed: int, rules_array: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The engine's log of a game from its answers alone (as the store keeps them).

    Who is asked what follows from the seed, the rules and the answers so
    far, so each answer is applied in turn and given its seat and phase.
    Raises :class:`ReplayError` if an answer is illegal where it falls.
    """
    st, row, scratch = begin_replay(seed, rules_array)
    out = np.empty(len(actions), dtype=np.int64)
    pos = 0
    while pos < len(actions):
        begin_hand(st, rules_array, seed, scratch)
        while st[S_PHASE] != PH_DONE and pos < len(actions):
            seat, phase, action = int(st[S_CUR]), int(st[S_PHASE]), int(actions[pos])
            if apply_action(st, rules_array, action) != 0:
                raise ReplayError(f"stored answer {pos} ({action}) is illegal where it falls")
            out[pos] = log_entry(seat, phase, action)
            pos += 1
        if st[S_PHASE] == PH_DONE:  # the melds a knocker declared, if it did
            after = _declared(st, rules_array, actions, pos, False)
            out[pos:after] = [log_entry(int(st[S_KNOCKER]), PH_DONE, int(a)) for a in actions[pos:after]]
            pos = after
        if pos < len(actions) and (st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules_array, row)):
            raise ReplayError(f"the game is over after {pos} of {len(actions)} stored answers")
    return out


def replay_game(seed: int, rules_array: np.ndarray, log: np.ndarray, game_index: int = 0) -> np.ndarray:
    """The hand rows (``H_*``) of a game replayed from its log."""
    rows = [h.row for h in replay_hands(seed, rules_array, log, game_index)]
    return np.array(rows, dtype=np.int64).reshape(-1, H_SIZE)


#: Stored hand columns a replay must reproduce, with the ``H_*`` slot that holds each.
_CHECKED = {
    "outcome": H_OUTCOME,
    "knocker": H_KNOCKER,
    "deadwood0": H_DEADWOOD,
    "deadwood1": H_DEADWOOD + 1,
    "points0": H_POINTS,
    "points1": H_POINTS + 1,
    "score0": H_SCORE,
    "score1": H_SCORE + 1,
    "upcard": H_UPCARD,
    "turns": H_TURNS,
}


def compare(rows: np.ndarray, game: Mapping[str, Any], hands: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """How replayed hand rows differ from a stored game (its row and hand rows); empty when they agree.

    ``game`` needs ``score0``, ``score1``, ``hands`` and ``forfeit_seat``;
    ``hands`` are the stored hand rows (``outcome`` by name), or None when
    the run kept none.
    """
    out = []
    forfeit = int(game.get("forfeit_seat", -1)) >= 0
    if not forfeit:
        if len(rows) != int(game["hands"]):
            out.append(f"{len(rows)} hands replayed, {int(game['hands'])} stored")
        elif len(rows):
            got = (int(rows[-1, H_SCORE]), int(rows[-1, H_SCORE + 1]))
            want = (int(game["score0"]), int(game["score1"]))
            if got != want:
                out.append(f"final score {got[0]}-{got[1]} replayed, {want[0]}-{want[1]} stored")
    if hands is not None:
        if len(hands) != len(rows):
            out.append(f"{len(rows)} hand rows replayed, {len(hands)} stored")
        for i, (row, h) in enumerate(zip(rows, hands, strict=False)):
            for col, slot in _CHECKED.items():
                value = int(row[slot])
                if col == "outcome":
                    shown, stored = (OUTCOME_NAMES[value] if value >= 0 else "unfinished"), str(h[col])
                else:
                    shown, stored = str(value), str(int(h[col]))
                if shown != stored and not (forfeit and i == len(rows) - 1):
                    out.append(f"hand {i + 1}: {col} {shown} replayed, {stored} stored")
    return out
