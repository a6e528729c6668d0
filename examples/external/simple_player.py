#!/usr/bin/env python3
"""The Simple player (bots/simple.py) as an external bot: plain Python, no imports from the arena.

Run it in a tournament with ``--bot 'cmd:python3 examples/external/simple_player.py'``
and check it with ``arena check-bot 'cmd:python3 examples/external/simple_player.py'``.
The protocol is described in docs/PROTOCOL.md: one JSON line in, one line out.

Policy (the EAAI SimpleGinRummyPlayer): take the upcard or the top discard
only if it then sits in some meld; discard a card that leaves the least
deadwood (ties at random, never the card just taken from the pile, and never
one that repeats a (drawn card, discarded card) pair already played this
hand, unless every card would); knock at the first chance; always declare
big gin.

It draws its random numbers the way the arena's in-process bots do
(xoshiro256** seeded by splitmix64 from the game's ``seed``), so it plays
exactly the moves of the built-in ``simple`` bot on the same deals.
"""

import json
import sys

M64 = (1 << 64) - 1

# --- the bot's own random numbers (same generator as arena/engine/rng.py) ----------------------


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Rng:
    """xoshiro256**, seeded from a 64-bit seed by splitmix64."""

    def __init__(self, seed):
        self.s = []
        x = seed
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            self.s.append(splitmix64(x))

    def next_u64(self):
        s0, s1, s2, s3 = self.s
        r = (s1 * 5) & M64
        result = ((((r << 7) | (r >> 57)) & M64) * 9) & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & M64
        self.s = [s0, s1, s2, s3]
        return result

    def below(self, n):
        """A random int in 0..n-1."""
        return ((self.next_u64() >> 32) * n) >> 32


# --- melds and deadwood ------------------------------------------------------------------
# A card is suit * 13 + rank (rank 0 = Ace .. 12 = King).  Per suit a hand is a
# 13-bit mask.  With runs only, a suit's best arrangement melds exactly the cards
# in some window of three consecutive held ranks, so its deadwood is a table
# look-up; sets (3 or 4 cards of a rank) are tried on top of that.

VALUE = [min(r + 1, 10) for r in range(13)]


def _runs_only_deadwood(m):
    starts = m & (m >> 1) & (m >> 2)
    covered = starts | (starts << 1) | (starts << 2)
    left = m & ~covered
    return sum(VALUE[r] for r in range(13) if (left >> r) & 1)


RUN_DW = [_runs_only_deadwood(m) for m in range(1 << 13)]


SUIT = [c // 13 for c in range(52)]
BIT = [1 << (c % 13) for c in range(52)]


def suits_of(hand):
    return [hand & 0x1FFF, (hand >> 13) & 0x1FFF, (hand >> 26) & 0x1FFF, (hand >> 39) & 0x1FFF]


def set_ranks(suits):
    """Ranks (13-bit mask) held in three or four suits: where a set is possible."""
    c, d, h, s = suits
    return (c & d & (h | s)) | (h & s & (c | d))


def set_choices(suits):
    """Every way of taking sets out of a hand, as the suit masks that are left.

    Per rank held 3 or 4 times: no set, the whole set, or (with 4) each set of
    three, which leaves one card of the rank free for a run.
    """
    choices = [suits]
    three = set_ranks(suits)
    for r in range(13):
        bit = 1 << r
        if not three & bit:
            continue
        grown = []
        for left in choices:
            held = [s for s in range(4) if left[s] & bit]
            grown.append(left)
            subsets = [held] if len(held) == 3 else [held] + [[s for s in held if s != out] for out in held]
            for chosen in subsets:
                rest = list(left)
                for s in chosen:
                    rest[s] &= ~bit
                grown.append(rest)
        choices = grown
    return choices


def deadwood(hand):
    """Least deadwood of a hand: the best way of taking sets, runs only for the rest."""
    return min(RUN_DW[a] + RUN_DW[b] + RUN_DW[c] + RUN_DW[d] for a, b, c, d in set_choices(suits_of(hand)))


def deadwood_after_discards(hand, cards):
    """[least deadwood of hand without c for c in cards] (cards of hand).

    One pass over the set choices of the whole hand: the choices of
    hand - c are exactly those that leave c out of every set, and for such a
    choice dropping c changes only the runs of c's suit.
    """
    suits = suits_of(hand)
    if not set_ranks(suits):  # the usual case: no set possible, one choice
        total = RUN_DW[suits[0]] + RUN_DW[suits[1]] + RUN_DW[suits[2]] + RUN_DW[suits[3]]
        return [total - RUN_DW[suits[SUIT[c]]] + RUN_DW[suits[SUIT[c]] ^ BIT[c]] for c in cards]
    best = [1000] * len(cards)
    for rest in set_choices(suits):
        total = RUN_DW[rest[0]] + RUN_DW[rest[1]] + RUN_DW[rest[2]] + RUN_DW[rest[3]]
        for i, c in enumerate(cards):
            m = rest[SUIT[c]]
            if m & BIT[c]:  # c is not in a set of this choice
                v = total - RUN_DW[m] + RUN_DW[m ^ BIT[c]]
                if v < best[i]:
                    best[i] = v
    return best


def in_any_meld(hand, card):
    """Whether card is in some set or run of hand + card."""
    h = hand | (1 << card)
    r, s = card % 13, card // 13
    if ((h >> r) & 1) + ((h >> (13 + r)) & 1) + ((h >> (26 + r)) & 1) + ((h >> (39 + r)) & 1) >= 3:
        return True
    m = (h >> (13 * s)) & 0x1FFF
    for lo in (r - 2, r - 1, r):
        if 0 <= lo and lo + 2 <= 12 and (m >> lo) & 7 == 7:
            return True
    return False


# --- the five decisions -----------------------------------------------------------------------


def mask(cards):
    m = 0
    for c in cards:
        m |= 1 << c
    return m


class Game:
    """What the bot keeps during one game: its random numbers and the repeat guard.

    The guard (EAAI's drawDiscardBitstrings) remembers, per hand, which
    unordered {drawn, discarded} pairs were played, so two Simple players
    cannot trade the same cards back and forth forever.
    """

    def __init__(self, seed):
        self.rng = Rng(seed)
        self.hand_no = -1  # the hand the notes below belong to
        self.before = 0  # my hand before this turn's draw
        self.pairs = [0] * 52  # pairs[c]: cards d such that {c, d} was played this hand

    def note_hand(self, msg, hand):
        if msg["hand_no"] != self.hand_no:
            self.hand_no = msg["hand_no"]
            self.pairs = [0] * 52
        self.before = hand

    def drawn_card(self, msg, hand):
        """The card drawn this turn, or -1 if unknown."""
        if msg["hand_no"] != self.hand_no:
            return -1
        if msg["just_taken"] >= 0:
            return msg["just_taken"]
        new = hand & ~self.before
        if new == 0 or new & (new - 1):
            return -1
        return new.bit_length() - 1


def decide(msg, game):
    kind = msg["decision"]
    hand = mask(msg["hand"])
    if kind in ("take_upcard", "draw"):
        game.note_hand(msg, hand)
        return 1 if in_any_meld(hand, msg["top"]) else 0
    if kind in ("big_gin", "knock"):
        return 1
    # discard: least deadwood left, never the card just taken, no repeated pair; ties at random in card order
    cards = [c for c in msg["hand"] if c != msg["just_taken"]]  # the hand comes sorted
    drawn = game.drawn_card(msg, hand)
    if drawn >= 0:
        fresh = [c for c in cards if not (game.pairs[drawn] >> c) & 1]
        if fresh:
            cards = fresh
    after = deadwood_after_discards(hand, cards)
    least = min(after)
    tied = [c for c, d in zip(cards, after) if d == least]
    card = tied[game.rng.below(len(tied))]
    if drawn >= 0:
        game.pairs[drawn] |= 1 << card
        game.pairs[card] |= 1 << drawn
    return card


def main():
    out = sys.stdout.buffer  # bytes both ways: json reads them directly
    game = Game(0)
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            hello = {
                "name": "simple-py",
                "protocol": 1,
                "description": "The Simple player, as an external Python program",
            }
            out.write(json.dumps(hello).encode() + b"\n")
        elif kind == "decide":
            if msg["new_game"]:
                game = Game(msg["seed"])
            out.write(b"%d\n" % decide(msg, game))
        elif kind == "bye":
            break
        out.flush()  # every answer, at once


if __name__ == "__main__":
    main()
