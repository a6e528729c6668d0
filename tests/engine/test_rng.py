"""Seeded generators: SipHash is the published function, and a bot's generator says nothing about the deal."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.layout import G_SIZE, S_DECK, S_SIZE
from arena.engine.rng import (
    BOT_SEED_BITS,
    STREAM_BOT,
    _unsplitmix64,
    bot_seed,
    mix_seed,
    new_rng,
    rand_below,
    seed_of_state,
    seed_rng,
    shuffle,
    siphash24,
    siphash24_words,
    splitmix64,
)
from arena.engine.rules_array import rules_array
from arena.engine.step import begin_game, begin_hand
from arena.settings.rules import Rules

# Key 00 01 .. 0f and message 00 01 .. (n-1) bytes, as in the SipHash paper
# (Aumasson and Bernstein 2012, appendix A: the 15-byte message gives
# a129ca6149be45e5) and its reference vectors; cross-checked with
# `openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f SIPHASH`.
K0 = int.from_bytes(bytes(range(8)), "little")
K1 = int.from_bytes(bytes(range(8, 16)), "little")
VECTORS = {0: 0x726FDB47DD0E0E31, 8: 0x93F5F5799A932462, 15: 0xA129CA6149BE45E5, 16: 0x3F2ACC7F57C29BDB}
MASK64 = (1 << 64) - 1


def _old_attack(state_seed: int, stream: int) -> int:
    """What a bot could do before: invert mix_seed (splitmix64 twice) to the game seed."""
    inner = _unsplitmix64(state_seed) ^ ((stream * 0xD1B54A32D192ED03) & MASK64)
    return _unsplitmix64(inner)


def test_siphash24_matches_the_published_test_vectors():
    """A typo in a rotation or constant would change every vector."""
    for n, want in VECTORS.items():
        assert int(siphash24(K0, K1, np.arange(n, dtype=np.uint8))) == want
    assert int(siphash24_words(K0, K1, 0x0706050403020100, 0x0F0E0D0C0B0A0908)) == VECTORS[16]


def test_two_word_siphash_equals_the_byte_version():
    """bot_seed uses the word version; it must be the same function as the checked one."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        m0, m1, k0, k1 = (int(x) for x in rng.integers(0, 2**64 - 1, size=4, dtype=np.uint64, endpoint=True))
        data = np.frombuffer(m0.to_bytes(8, "little") + m1.to_bytes(8, "little"), dtype=np.uint8)
        u = np.uint64
        assert int(siphash24_words(u(k0), u(k1), u(m0), u(m1))) == int(siphash24(u(k0), u(k1), data))


def test_seed_of_state_inverts_seed_rng():
    """External bots are sent the seed their generator was made from; it must be exact."""
    for seed in [0, 1, 12345, 2**53 - 1, 2**64 - 1]:
        rng = np.zeros(4, dtype=np.uint64)
        seed_rng(rng, np.uint64(seed))
        assert seed_of_state(rng) == seed
    assert _unsplitmix64(int(splitmix64(np.uint64(99)))) == 99


def test_the_old_rng_inversion_no_longer_finds_the_game_seed():
    """The old cheat: from its generator state, a bot computed the game seed.

    It still works on a mix_seed-seeded state (so the attack itself is right),
    and recovers nothing from the state begin_game now makes.
    """
    r = rules_array(Rules())
    st = np.zeros(S_SIZE, dtype=np.int64)
    rng0, rng1 = np.zeros(4, dtype=np.uint64), np.zeros(4, dtype=np.uint64)
    m = np.zeros(1)
    row = np.zeros(G_SIZE, dtype=np.int64)
    for game_seed in [7, 123456789, 2**62 + 3]:
        old = np.zeros(4, dtype=np.uint64)
        seed_rng(old, np.uint64(mix_seed(game_seed, STREAM_BOT)))
        assert _old_attack(seed_of_state(old), STREAM_BOT) == game_seed
        begin_game(st, r, game_seed, rng0, rng1, m, m, row)
        for seat, rng in enumerate((rng0, rng1)):
            s = seed_of_state(rng)
            assert s == int(bot_seed(game_seed, seat)) and s < 2**BOT_SEED_BITS
            assert _old_attack(s, STREAM_BOT + seat) != game_seed
        assert seed_of_state(rng0) != seed_of_state(rng1)


def test_bot_seeds_look_random_and_differ_by_seat_and_game():
    """Neighbouring game seeds give unrelated bot seeds (no shared structure to exploit)."""
    seeds = np.array([int(bot_seed(g, s)) for g in range(2000) for s in range(2)], dtype=np.uint64)
    assert len(set(seeds.tolist())) == len(seeds)
    bits = np.unpackbits(seeds.view(np.uint8), bitorder="little").reshape(len(seeds), 64)[:, :BOT_SEED_BITS]
    assert np.all(np.abs(bits.mean(axis=0) - 0.5) < 0.05)  # each bit is fair


def test_deals_are_unchanged_by_the_bot_seed_derivation():
    """Only the bots' streams changed: the deck of a seed is the one dealt before."""
    r = rules_array(Rules())
    st = np.zeros(S_SIZE, dtype=np.int64)
    rng0, rng1, scratch = (np.zeros(4, dtype=np.uint64) for _ in range(3))
    m = np.zeros(1)
    row = np.zeros(G_SIZE, dtype=np.int64)
    begin_game(st, r, 2024, rng0, rng1, m, m, row)
    begin_hand(st, r, 2024, scratch)
    # Recorded with the engine before bot_seed existed (commit 0dd242c).
    assert st[S_DECK : S_DECK + 21].tolist() == DEAL_2024


DEAL_2024 = [26, 32, 22, 3, 43, 8, 21, 1, 18, 14, 47, 36, 37, 35, 45, 10, 15, 39, 19, 13, 4]


@pytest.mark.parametrize("size", [0, 1, 2, 10, 41, 52])
def test_shuffle_makes_the_draws_of_rand_below_step_by_step(size):
    """shuffle keeps the generator in locals: same permutation and same final
    generator state as the plain Fisher-Yates loop over rand_below."""
    for seed in range(200):
        deck = np.arange(size, dtype=np.int64) * 3 + 1
        rng = new_rng(seed)
        want = deck.copy()
        want_rng = rng.copy()
        for i in range(size - 1, 0, -1):
            j = int(rand_below(want_rng, i + 1))
            want[i], want[j] = want[j], want[i]
        shuffle(deck, rng)
        assert np.array_equal(deck, want), (size, seed)
        assert np.array_equal(rng, want_rng), (size, seed)
