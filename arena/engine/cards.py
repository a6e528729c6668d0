"""Cards as small ints, hands as 52-bit masks.

A card is ``suit * 13 + rank`` with ranks ``A 2 .. 9 T J Q K`` numbered 0..12
(the Ace is always low) and suits ``c d h s`` numbered 0..3 (alphabetical,
which is also bridge order).  OpenSpiel's gin rummy numbers ranks the same way
but orders its suits ``s c d h``, so its card ``k`` is our card ``(k + 39) % 52``.
Spades are suit 3, which Oklahoma gin cares about.  A hand is an
``int64`` whose bit ``c`` is set when card ``c`` is held, so the 13 cards of a
suit are one 13-bit field: ``(hand >> (13 * suit)) & 0x1FFF``.

This module is the Python face (parsing, printing); the kernels use the same
numbering through the constants and small jitted helpers below.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from arena.engine._jit import kernel

Card = int
Mask = int

RANKS = "A23456789TJQK"
SUITS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"
NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
SUIT_BITS = 0x1FFF
SPADES = 3

#: Deadwood value of each card: A = 1, 2..10 face value, J Q K = 10.
CARD_VALUES = np.array([min(r + 1, 10) for _ in range(NUM_SUITS) for r in range(NUM_RANKS)], dtype=np.int64)
#: Deadwood value of each rank, used by the per-suit tables.
RANK_VALUES = np.array([min(r + 1, 10) for r in range(NUM_RANKS)], dtype=np.int64)


def rank_of(card: Card) -> int:
    return card % NUM_RANKS


def suit_of(card: Card) -> int:
    return card // NUM_RANKS


def make_card(rank: int, suit: int) -> Card:
    return suit * NUM_RANKS + rank


def card_value(card: Card) -> int:
    return int(CARD_VALUES[card])


def parse_card(text: str) -> Card:
    """Parse ``'Ah'``, ``'Td'``, ``'10s'`` or ``'Q♠'`` into a card number."""
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise ValueError(f"not a card: {text!r} (expected rank A23456789TJQK and suit cdhs, e.g. 'Ah', 'Td')")
    r = RANKS.find(t[0].upper())
    s = SUITS.find(t[1].lower())
    if s < 0:
        s = SUIT_SYMBOLS.find(t[1])
    if r < 0 or s < 0:
        raise ValueError(f"not a card: {text!r} (expected rank A23456789TJQK and suit cdhs, e.g. 'Ah', 'Td')")
    return make_card(r, s)


def card_str(card: Card, symbols: bool = False) -> str:
    """``'Ah'`` (or ``'A♥'`` with ``symbols=True``)."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card number {card} out of range 0..51")
    suit = SUIT_SYMBOLS if symbols else SUITS
    return RANKS[rank_of(card)] + suit[suit_of(card)]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``'Ah 2h 3h'`` (or a list of card strings) into card numbers."""
    parts = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(p) for p in parts]


def mask_of(cards: Iterable[Card] | str) -> Mask:
    """The bitmask of some cards; accepts card numbers or a string of cards."""
    if isinstance(cards, str):
        cards = parse_cards(cards)
    m = 0
    for c in cards:
        if not 0 <= c < NUM_CARDS:
            raise ValueError(f"card number {c} out of range 0..51")
        m |= 1 << c
    return m


def cards_of(mask: Mask) -> list[Card]:
    """The cards in a mask, lowest card number first."""
    return [c for c in range(NUM_CARDS) if (mask >> c) & 1]


def mask_str(mask: Mask, symbols: bool = False) -> str:
    """Cards of a mask sorted by suit then rank, e.g. ``'Ac 2c 3c Kh'``."""
    return " ".join(card_str(c, symbols) for c in cards_of(mask))


# --- kernel helpers -------------------------------------------------------


@kernel
def popcount(x: int) -> int:
    """Number of set bits of a non-negative int64 (cards in a mask)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56 & 0xFF


# De Bruijn sequence for the index of a lone set bit: bits 58..63 of
# ``bit * _DEBRUIJN`` are distinct for each of the 64 possible bits.
_DEBRUIJN = 0x03F79D71B4CB0A89
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_INDEX[(((1 << _i) * _DEBRUIJN) >> 58) & 63] = _i


@kernel
def lsb(x: int) -> int:
    """Index of the lowest set bit of a non-zero mask (the lowest card).

    Constant time (a multiply and a table lookup), so loops over the cards
    of a hand can step from card to card instead of testing all 52 bits::

        while mask:
            c = lsb(mask)
            mask &= mask - 1
    """
    low = x & -x
    return _DEBRUIJN_INDEX[((low * _DEBRUIJN) >> 58) & 63]


@kernel
def mask_value(mask: int) -> int:
    """Sum of the deadwood values of the cards in a mask."""
    total = 0
    for s in range(NUM_SUITS):
        bits = (mask >> (NUM_RANKS * s)) & SUIT_BITS
        r = 0
        while bits:
            if bits & 1:
                total += r + 1 if r < 10 else 10
            bits >>= 1
            r += 1
    return total
