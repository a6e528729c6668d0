"""A game state read by name: the table as a person (or a page) sees it.

The engine's state is one int64 array laid out by the ``S_*`` slots of
:mod:`arena.engine.layout`; only the engine reads those slots.  Anything that
shows a game (the play page, the viewer, ``arena replay``) reads a
:class:`Table` instead: the same numbers, named, so a change of layout stays
inside the engine.
"""

from __future__ import annotations

import numpy as np

from arena.engine.layout import (
    OUTCOME_NAMES,
    S_CUR,
    S_DEADWOOD,
    S_DEALER,
    S_DECK,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_LAID_OFF,
    S_MULT,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SCORE,
    S_UPCARD,
)
from arena.engine.melds import melds_of
from arena.engine.step import stock_count


class Table:
    """Named, read-only access to a state array (it reads the live array: copy
    the state first to keep a position)."""

    __slots__ = ("st",)

    def __init__(self, st: np.ndarray):
        self.st = st

    # --- the deal and the turn ---------------------------------------------------
    @property
    def hand_no(self) -> int:
        """The hand's number in the game, from 1."""
        return int(self.st[S_HAND_NO]) + 1

    @property
    def dealer(self) -> int:
        return int(self.st[S_DEALER])

    @property
    def to_act(self) -> int:
        """The seat whose decision it is."""
        return int(self.st[S_CUR])

    @property
    def phase(self) -> int:
        """The decision asked (a ``PH_*`` code)."""
        return int(self.st[S_PHASE])

    @property
    def dealt(self) -> tuple[int, int]:
        """Each seat's ten dealt cards (masks): the non-dealer is dealt the deck's first ten."""
        deck = self.st[S_DECK : S_DECK + 20]
        first, second = _mask(deck[:10]), _mask(deck[10:20])
        return (first, second) if self.dealer == 1 else (second, first)

    @property
    def upcard(self) -> int:
        return int(self.st[S_UPCARD])

    @property
    def knock_limit(self) -> int:
        return int(self.st[S_KNOCK_LIMIT])

    @property
    def mult(self) -> int:
        """2 when an Oklahoma spade upcard doubles the hand, else 1."""
        return int(self.st[S_MULT])

    @property
    def scores(self) -> tuple[int, int]:
        """The game score before this hand."""
        return int(self.st[S_SCORE]), int(self.st[S_SCORE + 1])

    @property
    def just_taken(self) -> int:
        """The card taken from the pile this turn, -1 if none."""
        return int(self.st[S_JUST_TAKEN])

    def hand(self, seat: int) -> int:
        """Seat's hand (mask)."""
        return int(self.st[S_HAND + seat])

    @property
    def pile(self) -> list[int]:
        """The discard pile, bottom first."""
        return [int(c) for c in self.st[S_PILE : S_PILE + int(self.st[S_PILE_N])]]

    @property
    def pile_top(self) -> int:
        n = int(self.st[S_PILE_N])
        return int(self.st[S_PILE + n - 1]) if n else -1

    @property
    def stock(self) -> int:
        """Cards left in the stock."""
        return int(stock_count(self.st))

    @property
    def error(self) -> int:
        """The error code of the last rejected action (``ERR_*``)."""
        return int(self.st[S_ERROR])

    # --- the showdown -------------------------------------------------------------
    @property
    def outcome(self) -> str:
        """An ``OUTCOME_NAMES`` entry, or "unfinished"."""
        out = int(self.st[S_OUTCOME])
        return OUTCOME_NAMES[out] if out >= 0 else "unfinished"

    @property
    def knocker(self) -> int:
        """The seat that knocked (or went gin), -1 if none."""
        return int(self.st[S_KNOCKER]) if int(self.st[S_OUTCOME]) >= 0 else -1

    @property
    def knocker_melds(self) -> list[int]:
        return melds_of(int(self.st[S_KNOCK_SETS]), int(self.st[S_KNOCK_RUNS]))

    @property
    def defender_melds(self) -> list[int]:
        return melds_of(int(self.st[S_DEF_SETS]), int(self.st[S_DEF_RUNS]))

    @property
    def knocker_melded(self) -> int:
        """Every card of the knocker's melds (mask)."""
        return int(self.st[S_KNOCK_SETS]) | int(self.st[S_KNOCK_RUNS])

    @property
    def defender_melded(self) -> int:
        return int(self.st[S_DEF_SETS]) | int(self.st[S_DEF_RUNS])

    @property
    def laid_off(self) -> int:
        """The cards the defender laid off (mask)."""
        return int(self.st[S_LAID_OFF])

    def deadwood(self, seat: int) -> int:
        """Seat's final deadwood (the defender's after layoffs)."""
        return int(self.st[S_DEADWOOD + seat])

    @property
    def points(self) -> tuple[int, int]:
        """Points each seat scored this hand."""
        return int(self.st[S_POINTS]), int(self.st[S_POINTS + 1])


def _mask(cards: np.ndarray) -> int:
    return sum(1 << int(c) for c in cards)
