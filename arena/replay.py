"""Replay a game from its seed and compact action log.

A hand is fixed by the game seed, the hand number (which seed the shuffle)
and the dealer and scores the earlier hands left; the log holds every
decision as ``seat * LOG_SEAT + kind * LOG_KIND + action``.  Replaying
re-applies those actions through the same engine functions the drivers use,
and checks that each logged decision was asked of the same seat in the same
phase, so a log that does not belong to the seed is caught, not misread.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from arena.engine import apply_action, begin_game, begin_hand, end_hand, new_state, write_hand_row
from arena.layout import G_SIZE, H_SIZE, LOG_KIND, LOG_SEAT, OUT_FORFEIT, PH_DONE, S_CUR, S_OUTCOME, S_PHASE
from arena.rng import RNG_WORDS


class ReplayError(ValueError):
    """The log does not fit the seed and rules it is replayed with."""


@dataclass
class ReplayedHand:
    """The state at the end of one replayed hand, and the actions that led to it."""

    state: np.ndarray
    row: np.ndarray  # H_* record
    actions: list[tuple[int, int, int]]  # (seat, phase, action)


def decode(entry: int) -> tuple[int, int, int]:
    """``(seat, phase, action)`` of one log entry."""
    return entry // LOG_SEAT, (entry % LOG_SEAT) // LOG_KIND, entry % LOG_KIND


def replay_hands(seed: int, rules_array: np.ndarray, log: np.ndarray, game_index: int = 0) -> Iterator[ReplayedHand]:
    """Yield each hand of a game replayed from ``log``; the last one ends the game."""
    st = new_state()
    row = np.zeros(G_SIZE, dtype=np.int64)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    dummy_rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    dummy_mem = np.zeros(1)
    begin_game(st, rules_array, seed, dummy_rng, dummy_rng.copy(), dummy_mem, dummy_mem.copy(), row)
    pos = 0
    log = np.asarray(log, dtype=np.int64)
    while True:
        begin_hand(st, rules_array, seed, scratch)
        start = pos
        actions = []
        while st[S_PHASE] != PH_DONE:
            if pos >= len(log):
                # The log stops inside a hand: a game ended by a forfeit (the
                # illegal decision is not logged).  Yield the hand as it stood.
                if actions:
                    hand_row = np.zeros(H_SIZE, dtype=np.int64)
                    write_hand_row(st, game_index, hand_row, start, pos - start)
                    yield ReplayedHand(st.copy(), hand_row, actions)
                return
            seat, phase, action = decode(int(log[pos]))
            if seat != st[S_CUR] or phase != st[S_PHASE]:
                raise ReplayError(
                    f"log entry {pos} is seat {seat} phase {phase}, but the game asks "
                    f"seat {st[S_CUR]} phase {st[S_PHASE]}"
                )
            if apply_action(st, rules_array, action) != 0:
                raise ReplayError(f"log entry {pos}: action {action} is illegal here")
            actions.append((seat, phase, action))
            pos += 1
        hand_row = np.zeros(H_SIZE, dtype=np.int64)
        write_hand_row(st, game_index, hand_row, start, pos - start)
        yield ReplayedHand(st.copy(), hand_row, actions)
        if st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules_array, row):
            return


def replay_game(seed: int, rules_array: np.ndarray, log: np.ndarray, game_index: int = 0) -> np.ndarray:
    """The hand rows (``H_*``) of a game replayed from its log."""
    rows = [h.row for h in replay_hands(seed, rules_array, log, game_index)]
    return np.array(rows, dtype=np.int64).reshape(-1, H_SIZE)
