"""The bot contract as the engine sees it: one signature, five decisions.

A bot is five decision functions called with the same four arguments::

    take_upcard(view, params, memory, rng) -> 1 take / 0 pass
    draw(view, params, memory, rng)        -> 1 discard pile / 0 stock
    big_gin(view, params, memory, rng)     -> 1 declare / 0 play on
    discard(view, params, memory, rng)     -> card number 0..51
    knock(view, params, memory, rng)       -> 1 knock / 0 play on

The types live here, in the engine, so the play drivers need nothing from
the bots layer above them: loading a bot (:mod:`arena.botkit.bot`) produces
an object that satisfies :class:`PlayableBot`, and the engine calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
from numba import types

from arena.engine.layout import PH_BIG_GIN, PH_DISCARD, PH_DRAW, PH_KNOCK, PH_UPCARD_DEALER, PH_UPCARD_NONDEALER

#: The one signature of every decision function.
BOT_SIGNATURE = types.int64(types.int64[::1], types.float64[::1], types.float64[::1], types.uint64[::1])
DecisionType = types.FunctionType(BOT_SIGNATURE)
#: A bot as the compiled engine sees it: one function per phase (PH_*).
BotType = types.UniTuple(DecisionType, 6)

DECISIONS = ("take_upcard", "draw", "big_gin", "discard", "knock")
#: Which function answers each phase, in PH_* order.
PHASE_FUNCTION = {
    PH_UPCARD_NONDEALER: "take_upcard",
    PH_UPCARD_DEALER: "take_upcard",
    PH_DRAW: "draw",
    PH_BIG_GIN: "big_gin",
    PH_DISCARD: "discard",
    PH_KNOCK: "knock",
}
#: Memory slots a bot gets when its module does not ask for a number.
DEFAULT_MEMORY = 8
#: The most memory slots a bot file may ask for (``MEMORY``): 8 MiB of float64 per game, room for a
#: record of every view of a long game (the seat-view tests keep 30,655 slots).  A game against a trained
#: policy is played in lockstep with the rest of its chunk, each game with its own copy (a chunk size of a
#: few hundred keeps a bot that asks for all of it in memory); MEMORY = 10**12 was taken at load and then
#: failed every chunk with a MemoryError.
MAX_MEMORY = 1 << 20


class TableHooks(Protocol):
    """What a plain bot may add to its five decisions (an external program does, when it asks).

    The plain driver (:func:`arena.engine.play.play_batch` without the kernel) looks for them
    as the ``table_hooks`` attribute of a bot's first decision function, and calls them after
    each hand: ``declared_melds`` gives the melds the seat declared with its knock (or None:
    the automatic arrangement), and ``hand_over`` tells the seat what the table shows (its
    final view and :func:`arena.engine.showdown.table_shows`, with its memory and generator, whose
    state says whether the game began before).  Compiled bots have none.
    """

    def declared_melds(self, seat: int) -> tuple[int, int] | None: ...
    def hand_over(self, seat: int, view: np.ndarray, shown: dict, memory: np.ndarray, rng: np.ndarray) -> None: ...


def table_hooks(bot: PlayableBot) -> TableHooks | None:
    """The :class:`TableHooks` of a bot, or None."""
    return getattr(bot.functions[0], "table_hooks", None) if bot.functions else None


def refusal(bot: PlayableBot) -> Callable[[], str] | None:
    """What tells why a plain bot's last answer was refused, in its own terms, or None: the ``refusal``
    attribute of its first decision function.  A policy asked one decision at a time has one (the action
    it chose and the legal ones, as the lockstep driver says); the plain driver adds it to the forfeit."""
    return getattr(bot.functions[0], "refusal", None) if bot.functions else None


class PlayableBot(Protocol):
    """What the play drivers need of a loaded bot (``arena.botkit.bot.Bot`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def functions(self) -> tuple[Callable[..., int], ...]: ...  # in PH_* order (6 entries)
    @property
    def params(self) -> np.ndarray: ...
    @property
    def memory_size(self) -> int: ...
    @property
    def fast(self) -> bool: ...
