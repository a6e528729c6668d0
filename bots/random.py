"""Uniformly random legal decisions: the floor every strategy must beat."""

from arena.botlib import discardable, random_card
from arena.rng import rand_below

PARAMS: dict[str, float] = {}
MEMORY = 1


def take_upcard(view, params, memory, rng):
    return rand_below(rng, 2)


def draw(view, params, memory, rng):
    return rand_below(rng, 2)


def big_gin(view, params, memory, rng):
    return rand_below(rng, 2)


def discard(view, params, memory, rng):
    return random_card(discardable(view), rng)


def knock(view, params, memory, rng):
    return rand_below(rng, 2)
