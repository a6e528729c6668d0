"""The EAAI challenge's SimpleGinRummyPlayer: the field's common yardstick.

Its whole policy: take the upcard or the top discard only if that card then
sits in some meld; discard a card that leaves the least deadwood (ties at
random, never the card just taken from the pile, and never a card that would
repeat a (drawn card, discarded card) pair already played this hand); knock
at the first chance; always declare big gin.

The repeat guard is EAAI's ``drawDiscardBitstrings``: without it two Simple
players can pass the same cards back and forth until the turn cap (a few
hands in a million under the ``eaai`` rules, e.g. three 7s traded for 200
turns; ``tests/bots/test_simple_bot.py`` plays one such position).  Like EAAI's, a
pair is unordered ({drawn, discarded}: drawing A and dropping B blocks a later
draw of B and drop of A) and covers stock draws too.  Where EAAI would fail
(every legal discard repeats a pair) this one falls back to the unguarded
choice.  The helpers below are reusable: a bot gives them ``REPEAT_SLOTS`` of
its memory at offset ``base`` (``bots/TEMPLATE.py`` does).
"""

import numpy as np

from arena.botkit.lib import bits_float, float_bits, least_deadwood_discard
from arena.engine._jit import jit, kernel
from arena.engine.cards import lsb
from arena.engine.layout import V_HAND, V_HAND_NO, V_JUST_TAKEN, V_TOP
from arena.engine.melds import in_any_meld

PARAMS: dict[str, float] = {}

# --- the repeat guard: memory[base:base + REPEAT_SLOTS] ------------------------------
# [base]          hand number + 1 the slots below belong to (0 = none yet)
# [base + 1]      my hand before this turn's draw (a mask; exact in a float64)
# [base + 2 + c]  mask of the cards d such that {c, d} was drawn/discarded this hand,
#                 stored as the int64's bits (float_bits / bits_float), not as a float value
REPEAT_SLOTS = 2 + 52
MEMORY = REPEAT_SLOTS


@kernel
def note_hand(view, memory, base):
    """Call from ``take_upcard`` and ``draw``: remember the hand before the draw.

    Every turn asks one of the two before its discard (the non-dealer's
    forced stock draw after both pass comes after its ``take_upcard``), so
    the discard can tell which card was drawn.  A new hand clears the pairs.
    """
    if memory.shape[0] < base + REPEAT_SLOTS:  # a bot reusing these with less memory: no guard
        return
    stamp = view[V_HAND_NO] + 1
    if memory[base] != stamp:
        memory[base] = stamp
        for c in range(52):
            memory[base + 2 + c] = 0.0
    memory[base + 1] = view[V_HAND]


@kernel
def drawn_card(view, memory, base):
    """The card drawn this turn (from the pile or the stock), or -1 if unknown.

    -1 also when :func:`note_hand` has not run this hand (or the memory is too
    small), so the pair slots are never read or written stale.
    """
    if memory.shape[0] < base + REPEAT_SLOTS or memory[base] != view[V_HAND_NO] + 1:
        return -1
    taken = view[V_JUST_TAKEN]
    if taken >= 0:
        return taken
    new = view[V_HAND] & ~np.int64(memory[base + 1])
    if new == 0 or new & (new - 1):  # not exactly one new card: the note is stale
        return -1
    return lsb(new)


@kernel
def no_repeats(memory, base, drawn, allowed):
    """``allowed`` less the discards that would repeat a pair with ``drawn`` this hand.

    ``drawn`` comes from :func:`drawn_card`; if it is -1, or if every allowed
    card would repeat a pair, ``allowed`` is returned unchanged.
    """
    if drawn < 0:
        return allowed
    fresh = allowed & ~float_bits(memory[base + 2 + drawn])
    return fresh if fresh else allowed


@kernel
def remember_pair(memory, base, drawn, card):
    """Record {drawn, card} as played this hand (call with the card discarded)."""
    if drawn >= 0 and card >= 0:
        # The pair masks are the slots' bits, not float values: no conversions.
        memory[base + 2 + drawn] = bits_float(float_bits(memory[base + 2 + drawn]) | (np.int64(1) << card))
        memory[base + 2 + card] = bits_float(float_bits(memory[base + 2 + card]) | (np.int64(1) << drawn))


# --- the five decisions ----------------------------------------------------------------


@jit
def take_upcard(view, params, memory, rng):
    note_hand(view, memory, 0)
    return 1 if in_any_meld(view[V_HAND], view[V_TOP]) else 0


@jit
def draw(view, params, memory, rng):
    note_hand(view, memory, 0)
    return 1 if in_any_meld(view[V_HAND], view[V_TOP]) else 0


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def discard(view, params, memory, rng):
    hand = view[V_HAND]
    allowed = hand
    taken = view[V_JUST_TAKEN]
    if taken >= 0:  # EAAI's Simple never throws back the card it just took
        allowed &= ~(np.int64(1) << taken)
    drawn = drawn_card(view, memory, 0)
    allowed = no_repeats(memory, 0, drawn, allowed)
    card, _ = least_deadwood_discard(hand, allowed, rng)
    remember_pair(memory, 0, drawn, card)
    return card


@jit
def knock(view, params, memory, rng):
    return 1
