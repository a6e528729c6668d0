"""Uniformly random legal decisions: the floor every strategy must beat."""

from arena._jit import jit
from arena.botlib import discardable, random_card
from arena.rng import rand_below

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
