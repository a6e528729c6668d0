"""Jitted helpers for writing bots (usable from compiled and plain bots alike).

Everything a bot author needs beyond :mod:`arena.melds`: picking cards out
of a mask, random choices from the bot's own generator, and the usual
"discard what leaves the least deadwood" step with random tie-breaking.
"""

from __future__ import annotations

import numpy as np

from arena._jit import jit
from arena.cards import popcount
from arena.layout import R_NO_RETAKE, V_JUST_TAKEN, V_RULES
from arena.melds import NO_CARD_DEADWOOD, deadwood_after_discards
from arena.rng import rand_below


@jit
def nth_card(mask, n):
    """The ``n``-th lowest card of ``mask`` (0-based); -1 if there are fewer."""
    c = 0
    while mask:
        if mask & 1:
            if n == 0:
                return c
            n -= 1
        mask >>= 1
        c += 1
    return -1


@jit
def random_card(mask, rng):
    """A uniformly random card of a non-empty mask."""
    return nth_card(mask, rand_below(rng, popcount(mask)))


@jit
def discardable(view):
    """The cards the rules let this player discard now (own hand, no retake)."""
    hand = view[0]
    taken = view[V_JUST_TAKEN]
    if taken >= 0 and view[V_RULES + R_NO_RETAKE]:
        hand &= ~(np.int64(1) << taken)
    return hand


@jit
def least_deadwood_discard(hand, allowed, rng):
    """A card of ``allowed`` whose discard leaves the least deadwood; ties at random.

    Returns ``(card, deadwood_left)``.
    """
    out = np.empty(52, dtype=np.int64)
    deadwood_after_discards(hand, out)
    best = NO_CARD_DEADWOOD + 1
    ties = 0
    for c in range(52):
        if (allowed >> c) & 1:
            d = out[c]
            if d < best:
                best = d
                ties = 1
            elif d == best:
                ties += 1
    pick = rand_below(rng, ties)
    for c in range(52):
        if (allowed >> c) & 1 and out[c] == best:
            if pick == 0:
                return c, best
            pick -= 1
    return -1, best
