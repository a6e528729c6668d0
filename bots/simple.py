"""The EAAI challenge's SimpleGinRummyPlayer: the field's common yardstick.

Its whole policy: take the upcard or the top discard only if that card then
sits in some meld; discard a card that leaves the least deadwood (ties at
random, never the card just taken from the pile); knock at the first chance;
always declare big gin.
"""

from arena._jit import jit
from arena.botlib import least_deadwood_discard
from arena.layout import V_HAND, V_JUST_TAKEN, V_TOP
from arena.melds import in_any_meld

PARAMS: dict[str, float] = {}
MEMORY = 1


@jit
def take_upcard(view, params, memory, rng):
    return 1 if in_any_meld(view[V_HAND], view[V_TOP]) else 0


@jit
def draw(view, params, memory, rng):
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
        allowed &= ~(1 << taken)
    card, _ = least_deadwood_discard(hand, allowed, rng)
    return card


@jit
def knock(view, params, memory, rng):
    return 1
