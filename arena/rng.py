"""Seeded random numbers that are the same on every machine and worker.

numpy's and numba's global generators are shared state: two bots drawing
from them would disturb each other, and the order in which worker processes
run games would change the draws.  Instead every random stream here is a
small explicit state array (xoshiro256**, 4 x uint64) seeded by splitmix64
from the game seed and a stream number, so a game's deal and each bot's
choices depend on that game's seed alone.

The helpers are jitted but also callable from plain Python (slowly), so a
plain-Python bot draws exactly the numbers a compiled bot would.
"""

from __future__ import annotations

import numpy as np
from numba import uint64

from arena._jit import jit

RNG_WORDS = 4

# Stream numbers of one game's independent random streams (mixed into the seed).
STREAM_FIRST_DEALER = 0
STREAM_BOT = 1  # + seat
STREAM_HAND = 1000  # + hand number: the shuffle of that hand


@jit
def splitmix64(x):
    """One step of splitmix64: a well-mixed 64-bit function of ``x``."""
    z = uint64(x) + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@jit
def mix_seed(seed, stream):
    """The seed of stream ``stream`` of a game seeded ``seed`` (both >= 0)."""
    return splitmix64(splitmix64(uint64(seed)) ^ (uint64(stream) * uint64(0xD1B54A32D192ED03)))


@jit
def seed_rng(rng, seed):
    """Fill a 4-word xoshiro256** state from a 64-bit seed (via splitmix64)."""
    x = uint64(seed)
    for i in range(RNG_WORDS):
        x = x + uint64(0x9E3779B97F4A7C15)
        rng[i] = splitmix64(x)


@jit
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@jit
def next_u64(rng):
    """Next 64 random bits of a xoshiro256** state (updates ``rng`` in place)."""
    result = _rotl(rng[1] * uint64(5), 7) * uint64(9)
    t = rng[1] << uint64(17)
    rng[2] ^= rng[0]
    rng[3] ^= rng[1]
    rng[1] ^= rng[2]
    rng[0] ^= rng[3]
    rng[2] ^= t
    rng[3] = _rotl(rng[3], 45)
    return result


@jit
def rand_below(rng, n):
    """A random int in ``0..n-1`` (``n`` < 2**32), by multiply-shift."""
    return np.int64(((next_u64(rng) >> uint64(32)) * uint64(n)) >> uint64(32))


@jit
def rand_float(rng):
    """A random float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(rng) >> uint64(11)) * (1.0 / 9007199254740992.0)


@jit
def shuffle(deck, rng):
    """Fisher-Yates shuffle of ``deck`` in place."""
    for i in range(deck.shape[0] - 1, 0, -1):
        j = rand_below(rng, i + 1)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t


def new_rng(seed: int) -> np.ndarray:
    """A fresh generator state for Python callers (tests, plain-path bots)."""
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    seed_rng(rng, np.uint64(seed))
    return rng
