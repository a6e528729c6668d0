"""Seeded random numbers that are the same on every machine and worker.

numpy's and numba's global generators are shared state: two bots drawing
from them would disturb each other, and the order in which worker processes
run games would change the draws.  Instead every random stream here is a
small explicit state array (xoshiro256**, 4 x uint64) seeded by splitmix64
from the game seed and a stream number, so a game's deal and each bot's
choices depend on that game's seed alone.

A bot's generator is the one stream a bot can read (its state is in its
hands), and splitmix64 and xoshiro256** are both invertible: from a state
seeded by ``mix_seed(seed, stream)`` a bot could compute the game seed and
re-deal the whole game.  So a bot's seed is derived from the game seed
through SipHash-2-4 (:func:`bot_seed`), a keyed pseudo-random function that
cannot be run backwards: the state then tells a bot nothing about the deal.
(A bot that knows the run's seed and how game seeds follow from it can still
try every game seed of the run forwards; only a secret run seed stops that.)

The helpers are jitted but also callable from plain Python (slowly), so a
plain-Python bot draws exactly the numbers a compiled bot would.
"""

from __future__ import annotations

import numpy as np
from numba import uint64

from arena.engine._jit import helper, inline, kernel

RNG_WORDS = 4

# Stream numbers of one game's independent random streams (mixed into the seed).
STREAM_FIRST_DEALER = 0
STREAM_BOT = 1  # + seat
STREAM_HAND = 1000  # + hand number: the shuffle of that hand


@kernel
def splitmix64(x):
    """One step of splitmix64: a well-mixed 64-bit function of ``x``."""
    z = uint64(x) + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@inline
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@kernel
def mix_seed(seed, stream):
    """The seed of stream ``stream`` of a game seeded ``seed`` (both >= 0)."""
    return splitmix64(splitmix64(uint64(seed)) ^ (uint64(stream) * uint64(0xD1B54A32D192ED03)))


# SipHash-2-4 key of the bot streams.  It need not be secret: what protects
# the deal is that SipHash cannot be inverted, not that the key is unknown.
_SIP_K0 = 0x6769_6E2D_6172_656E  # "gin-aren"
_SIP_K1 = 0x612F_626F_742D_7273  # "a/bot-rs"
#: A bot's seed has 53 bits: a JSON number every language reads exactly.
BOT_SEED_BITS = 53


#: SipHash's 2 compression and 4 finalisation rounds, as int64 values: numba
#: types a literal 2 or 4 as that constant and would compile ``_sip_rounds``
#: once for each (a sixth of a second of a cold start apiece).
_C_ROUNDS: int = np.int64(2)  # type: ignore[assignment]  # an int to the Python types, int64 to numba
_D_ROUNDS: int = np.int64(4)  # type: ignore[assignment]


@helper
def _sip_rounds(v0, v1, v2, v3, n):
    for _ in range(n):
        v0 = v0 + v1
        v1 = _rotl(v1, 13)
        v1 ^= v0
        v0 = _rotl(v0, 32)
        v2 = v2 + v3
        v3 = _rotl(v3, 16)
        v3 ^= v2
        v0 = v0 + v3
        v3 = _rotl(v3, 21)
        v3 ^= v0
        v2 = v2 + v1
        v1 = _rotl(v1, 17)
        v1 ^= v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


@inline
def _sip_init(k0, k1):
    """SipHash's initial state from its key."""
    return (
        k0 ^ uint64(0x736F6D6570736575),
        k1 ^ uint64(0x646F72616E646F6D),
        k0 ^ uint64(0x6C7967656E657261),
        k1 ^ uint64(0x7465646279746573),
    )


@inline
def _sip_finish(v0, v1, v2, v3, b):
    """The last block ``b`` (length byte on top) and the 4 finalisation rounds."""
    v3 ^= b
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, _C_ROUNDS)
    v0 ^= b
    v2 ^= uint64(0xFF)
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, _D_ROUNDS)
    return v0 ^ v1 ^ v2 ^ v3


@kernel
def siphash24(k0, k1, data):
    """SipHash-2-4 of the bytes ``data`` (a uint8 array) under the key (k0, k1).

    The reference algorithm of Aumasson and Bernstein (2012): 64-bit
    little-endian words, 2 compression rounds per word, 4 finalisation rounds.
    """
    v0, v1, v2, v3 = _sip_init(uint64(k0), uint64(k1))
    n = data.shape[0]
    full = n - n % 8
    for i in range(0, full, 8):
        m = uint64(0)
        for j in range(8):
            m |= uint64(data[i + j]) << uint64(8 * j)
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, _C_ROUNDS)
        v0 ^= m
    b = uint64(n & 0xFF) << uint64(56)
    for j in range(n - full):
        b |= uint64(data[full + j]) << uint64(8 * j)
    return _sip_finish(v0, v1, v2, v3, b)


@kernel
def siphash24_words(k0, k1, m0, m1):
    """:func:`siphash24` of the 16 bytes of two 64-bit words (little-endian), without an array."""
    v0, v1, v2, v3 = _sip_init(uint64(k0), uint64(k1))
    for m in (uint64(m0), uint64(m1)):
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, _C_ROUNDS)
        v0 ^= m
    b = uint64(16) << uint64(56)
    return _sip_finish(v0, v1, v2, v3, b)


@kernel
def bot_seed(seed, seat):
    """The seed of seat ``seat``'s bot generator in the game seeded ``seed``.

    One-way (SipHash-2-4), so neither the seed nor the generator state
    seeded from it reveals the game seed; 53 bits (see ``BOT_SEED_BITS``).
    """
    h = siphash24_words(_SIP_K0, _SIP_K1, uint64(seed), uint64(STREAM_BOT + seat))
    return h >> uint64(64 - BOT_SEED_BITS)


@kernel
def seed_rng(rng, seed):
    """Fill a 4-word xoshiro256** state from a 64-bit seed (via splitmix64)."""
    x = uint64(seed)
    for i in range(RNG_WORDS):
        x = x + uint64(0x9E3779B97F4A7C15)
        rng[i] = splitmix64(x)


@kernel
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


@kernel
def rand_below(rng, n):
    """A random int in ``0..n-1`` (``n`` < 2**32), by multiply-shift."""
    return np.int64(((next_u64(rng) >> uint64(32)) * uint64(n)) >> uint64(32))


@kernel
def rand_float(rng):
    """A random float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(rng) >> uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
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


_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _unsplitmix64(z: int) -> int:
    """The inverse of :func:`splitmix64` (xor-shifts undone, multipliers inverted mod 2**64)."""
    z = (z ^ (z >> 31) ^ (z >> 62)) & _MASK64
    z = (z * pow(0x94D049BB133111EB, -1, 1 << 64)) & _MASK64
    z = (z ^ (z >> 27) ^ (z >> 54)) & _MASK64
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & _MASK64
    z = (z ^ (z >> 30) ^ (z >> 60)) & _MASK64
    return (z - _GOLDEN) & _MASK64


def seed_of_state(rng: np.ndarray) -> int:
    """The seed a fresh generator state was made from by :func:`seed_rng`.

    For an external bot's first decision of a game: its state is still the
    one ``begin_game`` seeded, and the seed (from :func:`bot_seed`, so it
    says nothing about the deal) is what the bot is sent.
    """
    return (_unsplitmix64(int(rng[0])) - _GOLDEN) & _MASK64
