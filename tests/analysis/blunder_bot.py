"""Simple with a planted blunder of known cost: with chance ``forfeit`` per game, an illegal first answer.

The known-answer case of the luck analysis: against plain Simple (a copy of
itself but for the blunder) the true win rate of Simple is exactly
``1/2 + forfeit/2`` and the true points margin exactly 0: a game without the
blunder is between two copies of one policy, seats swapped over the pair; a
forfeit at the first decision ends the game 0-0, lost by the blunderer.
"""

import numpy as np

import bots.simple as simple
from arena.engine._jit import jit
from arena.engine.rng import rand_float

PARAMS: dict[str, float] = {"forfeit": 0.2}
FLAG = simple.MEMORY  # memory slot: 1 once this game's first decision is past
MEMORY = simple.MEMORY + 1


@jit
def _blunders(params, memory, rng):
    if memory[FLAG] != 0.0:
        return False
    memory[FLAG] = 1.0
    return rand_float(rng) < params[0]


@jit
def take_upcard(view, params, memory, rng):
    if _blunders(params, memory, rng):
        return np.int64(7)  # not 0 or 1: an illegal answer, the game is forfeited
    return simple.take_upcard(view, params, memory, rng)


@jit
def draw(view, params, memory, rng):
    if _blunders(params, memory, rng):
        return np.int64(7)
    return simple.draw(view, params, memory, rng)


@jit
def big_gin(view, params, memory, rng):
    return simple.big_gin(view, params, memory, rng)


@jit
def discard(view, params, memory, rng):
    return simple.discard(view, params, memory, rng)


@jit
def knock(view, params, memory, rng):
    return simple.knock(view, params, memory, rng)
