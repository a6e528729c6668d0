"""Jitted helpers for writing bots (usable from compiled and plain bots alike).

Everything a bot author needs beyond :mod:`arena.engine.melds`: picking cards out
of a mask, random choices from the bot's own generator, and the usual
"discard what leaves the least deadwood" step with random tie-breaking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core import types
from numba.extending import intrinsic

from arena.engine._jit import jit, kernel
from arena.engine.cards import lsb, popcount
from arena.engine.layout import (
    PH_DISCARD,
    R_NO_RETAKE,
    V_HAND,
    V_JUST_TAKEN,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_TOP,
)
from arena.engine.melds import NO_CARD_DEADWOOD, best_discard, deadwood, deadwood_after_discards, least_discards
from arena.engine.rng import rand_below
from arena.engine.step import answer_mask


def _float_bits(typingctx, x):
    """The 64 bits of a float64 as an int64 (no conversion: the same bits)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


def _bits_float(typingctx, x):
    """The float64 whose 64 bits are those of an int64 (the inverse of float_bits)."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


#: A 64-bit mask kept in a float64 memory slot as its bits, without the
#: int/float conversions (a slot of 0.0 reads as mask 0).  Compiled code
#: only (numba intrinsics: no compilation of their own, a bitcast each).
float_bits: Any = intrinsic(_float_bits)
bits_float: Any = intrinsic(_bits_float)


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
    """The cards the rules let this player discard now (own hand, no retake): the engine's query."""
    return answer_mask(PH_DISCARD, view[V_HAND], view[V_JUST_TAKEN], view[V_RULES + R_NO_RETAKE], view[V_PILE_N])


@kernel  # allocates nothing: no reference counts on rng per discard
def least_deadwood_discard(hand, allowed, rng):
    """A card of ``allowed`` whose discard leaves the least deadwood; ties at random.

    Returns ``(card, deadwood_left)``.  The tie is broken by one draw from
    ``rng`` among the tied cards in card order.  Cards of ``allowed`` not in
    ``hand`` count as leaving ``NO_CARD_DEADWOOD`` (so they are chosen only
    when no allowed card is held); an empty ``allowed`` gives
    ``(-1, NO_CARD_DEADWOOD + 1)``.  Allocates nothing (see
    :func:`arena.engine.melds.least_discards`).
    """
    held = allowed & hand
    if held:
        best, ties = least_discards(hand, held)
    else:
        best = NO_CARD_DEADWOOD if allowed else NO_CARD_DEADWOOD + 1
        ties = allowed
    pick = rand_below(rng, popcount(ties))
    if ties == 0:
        return -1, best
    for _ in range(pick):
        ties &= ties - 1
    return lsb(ties), best


# --- what has been seen: helpers of the built-in strategies ------------------------
# (appended for bots/early_knock.py, bots/gin_chasing.py, bots/discard_tracking.py)

_ALL_CARDS = (np.int64(1) << 52) - 1
_RANK_SPREAD = np.int64(1 | (1 << 13) | (1 << 26) | (1 << 39))
_NOT_ACES = np.int64(0x1FFE) * _RANK_SPREAD
_NOT_KINGS = np.int64(0x0FFF) * _RANK_SPREAD
_RANKS_TO_J = np.int64(0x07FF) * _RANK_SPREAD  # ranks A..J: may move up by 2
_RANKS_FROM_3 = np.int64(0x1FFC) * _RANK_SPREAD  # ranks 3..K: may move down by 2


@jit
def pile_cards(view):
    """Mask of the cards in the discard pile (dead: only the top can be taken)."""
    m = np.int64(0)
    for i in range(view[V_PILE_N]):
        m |= np.int64(1) << view[V_PILE + i]
    return m


@jit
def opponent_known(view):
    """Cards the opponent surely holds: taken from the pile and not discarded since."""
    return view[V_OPP_TAKEN] & ~pile_cards(view) & ~view[V_HAND]


@jit
def unseen_cards(view):
    """Cards that may still be drawn or held by the opponent: not in my hand,
    not in the pile, not known to be in the opponent's hand."""
    hand = view[V_HAND]
    pile = pile_cards(view)
    return _ALL_CARDS & ~hand & ~pile & ~(view[V_OPP_TAKEN] & ~pile)


@jit
def meld_completers(hand):
    """Cards outside ``hand`` that would sit in a meld with two of its cards.

    The other cards of every rank held twice or more, and every card that
    makes three in a row with two held cards of its suit (ends and gaps).
    """
    c = hand & 0x1FFF
    d = (hand >> 13) & 0x1FFF
    h = (hand >> 26) & 0x1FFF
    s = (hand >> 39) & 0x1FFF
    two = (c & d) | (c & h) | (c & s) | (d & h) | (d & s) | (h & s)
    sets = two | (two << 13) | (two << 26) | (two << 39)
    up1 = (hand & _NOT_KINGS) << 1  # each card moved one rank up
    dn1 = (hand & _NOT_ACES) >> 1
    up2 = (hand & _RANKS_TO_J) << 2
    dn2 = (hand & _RANKS_FROM_3) >> 2
    runs = (up1 & up2) | (up1 & dn1) | (dn1 & dn2)
    return (sets | runs) & ~hand & _ALL_CARDS


@jit
def mean_deadwood_after_draw(hand, candidates):
    """Mean over the cards u of ``candidates`` of the least deadwood of
    ``hand | u`` after its best discard: what one more draw is worth.

    Cards that meld with nothing in the hand are counted in closed form (keep
    the hand, or keep u and drop the best card), so only the few cards that
    could join a meld cost a :func:`arena.engine.melds.best_discard` call.
    """
    n = popcount(candidates)
    dw = deadwood(hand)
    if n == 0:
        return float(dw)
    drop_one = best_discard(hand, -1)[1]  # least deadwood after dropping one card
    related = meld_completers(hand) & candidates
    total = 0
    t = related
    while t:
        low = t & -t
        t ^= low
        total += best_discard(hand | low, -1)[1]
    rest = candidates & ~related
    for r in range(13):
        k = popcount(rest & (_RANK_SPREAD << r))
        if k:
            total += k * min(dw, drop_one + (r + 1 if r < 10 else 10))
    return total / n


@jit
def top_beats_stock(view, margin):
    """Whether the pile's top card is worth taking: after the best discard it
    leaves at least ``margin`` points less deadwood than the hand has now
    and than an average stock draw over the unseen cards would."""
    hand = view[V_HAND]
    top = view[V_TOP]
    if top < 0:
        return False
    _, with_top = best_discard(hand | (np.int64(1) << top), top)
    if with_top > deadwood(hand) - margin:
        return False  # a stock draw never leaves more than the deadwood now
    return with_top <= mean_deadwood_after_draw(hand, unseen_cards(view)) - margin


@jit
def discard_options(view, out):
    """Fill ``out[c]`` with the deadwood left after discarding card ``c`` (see
    :func:`arena.engine.melds.deadwood_after_discards`) and return the least of them
    over the cards the rules let this player discard now."""
    deadwood_after_discards(view[V_HAND], out)
    allowed = discardable(view)
    least = NO_CARD_DEADWOOD
    while allowed:
        c = lsb(allowed)
        allowed &= allowed - 1
        if out[c] < least:
            least = out[c]
    return least
