"""Uniformly random legal decisions: the floor every strategy must beat."""

from arena.botkit.lib import discardable, random_card
from arena.engine._jit import jit
from arena.engine.rng import rand_below

PARAMS: dict[str, float] = {}
MEMORY = 1


@jit
def take_upcard(view, params, memory, rng):
    return rand_below(rng, 2)


@jit
def draw(view, params, memory, rng):
    return rand_below(rng, 2)


@jit
def big_gin(view, params, memory, rng):
    return rand_below(rng, 2)


@jit
def discard(view, params, memory, rng):
    return random_card(discardable(view), rng)


@jit
def knock(view, params, memory, rng):
    return rand_below(rng, 2)
