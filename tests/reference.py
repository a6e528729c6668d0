"""Slow, obviously correct reference for the meld kernels (tests only).

Independent of :mod:`arena.engine.melds` (and of :mod:`arena.engine.cards`): it lists all
329 melds as bitmasks and searches disjoint meld subsets by plain recursion.

* ``deadwood_py``: pure Python.  The lowest card of the hand is either
  deadwood or in exactly one meld of the arrangement, so
  ``dw(h) = min(value(c) + dw(h - c), min over melds M in h holding c of dw(h - M))``.
* ``deadwood_nb``: the same recursion compiled with ``numba.njit`` (for the
  100k-hand tests); the tests check the two agree.
* Discards, layoffs, meld membership: brute force on top of those.

Cards are ``suit * 13 + rank`` (rank 0 = Ace .. 12 = King), as in the arena.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numba
import numpy as np

N_RANKS = 13
N_SUITS = 4
VALUES = np.array([min(c % 13 + 1, 10) for c in range(52)], dtype=np.int64)


def card(rank: int, suit: int) -> int:
    return suit * N_RANKS + rank


def value(mask: int) -> int:
    return int(sum(VALUES[c] for c in range(52) if (mask >> c) & 1))


def _all_melds() -> list[int]:
    melds = []
    for rank in range(N_RANKS):  # sets: 13 of four cards, 52 of three
        cards = [card(rank, s) for s in range(N_SUITS)]
        melds.append(sum(1 << c for c in cards))
        for left_out in cards:
            melds.append(sum(1 << c for c in cards if c != left_out))
    for suit in range(N_SUITS):  # runs: any 3+ consecutive ranks, Ace low
        for lo in range(N_RANKS):
            for hi in range(lo + 2, N_RANKS):
                melds.append(sum(1 << card(r, suit) for r in range(lo, hi + 1)))
    return melds


MELDS: list[int] = _all_melds()
MELD_SET: frozenset[int] = frozenset(MELDS)
assert len(MELDS) == 329 and len(MELD_SET) == 329

# Melds holding card c: MELDS_WITH[c, :N_WITH[c]] (numba-friendly layout).
_with = [[m for m in MELDS if (m >> c) & 1] for c in range(52)]
N_WITH = np.array([len(w) for w in _with], dtype=np.int64)
MELDS_WITH = np.zeros((52, int(N_WITH.max())), dtype=np.int64)
for _c, _w in enumerate(_with):
    MELDS_WITH[_c, : len(_w)] = _w


def is_meld(mask: int) -> bool:
    return int(mask) in MELD_SET


@lru_cache(maxsize=1 << 20)
def deadwood_py(hand: int) -> int:
    """Least deadwood, plain recursion over disjoint melds (pure Python)."""
    if hand == 0:
        return 0
    c = (hand & -hand).bit_length() - 1  # lowest card
    best = int(VALUES[c]) + deadwood_py(hand & ~(1 << c))
    for m in _with[c]:
        if m & hand == m:
            best = min(best, deadwood_py(hand & ~m))
    return best


@numba.njit(cache=True)
def deadwood_nb(hand: int) -> int:
    """The same recursion as ``deadwood_py``, compiled."""
    if hand == 0:
        return 0
    c = 0
    while not (hand >> c) & 1:
        c += 1
    best = VALUES[c] + deadwood_nb(hand & ~(1 << c))
    for i in range(N_WITH[c]):
        m = MELDS_WITH[c, i]
        if m & hand == m:
            v = deadwood_nb(hand & ~m)
            if v < best:
                best = v
    return best


@numba.njit(cache=True)
def deadwood_many(hands: np.ndarray) -> np.ndarray:
    out = np.empty(hands.shape[0], dtype=np.int64)
    for i in range(hands.shape[0]):
        out[i] = deadwood_nb(hands[i])
    return out


@numba.njit(cache=True)
def discards_many(hands: np.ndarray, none_value: int) -> np.ndarray:
    """out[i, c] = deadwood of hands[i] without c (brute force), none_value if not held."""
    out = np.full((hands.shape[0], 52), none_value, dtype=np.int64)
    for i in range(hands.shape[0]):
        for c in range(52):
            if (hands[i] >> c) & 1:
                out[i, c] = deadwood_nb(hands[i] & ~(1 << c))
    return out


def cards_in(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def discard_deadwoods(hand: int) -> dict[int, int]:
    """{card: deadwood after discarding it} by brute force."""
    return {c: int(deadwood_nb(hand & ~(1 << c))) for c in cards_in(hand)}


def in_any_meld(hand: int, c: int) -> bool:
    h = hand | (1 << c)
    return any((m >> c) & 1 and m & h == m for m in MELDS)


def split_melds(sets_mask: int, runs_mask: int) -> list[int]:
    """Meld masks of a (sets, runs) pair: one per set rank, one per run block."""
    melds = []
    for rank in range(N_RANKS):
        m = sum(1 << card(rank, s) for s in range(N_SUITS) if (sets_mask >> card(rank, s)) & 1)
        if m:
            melds.append(m)
    for suit in range(N_SUITS):
        block = 0
        for rank in range(N_RANKS + 1):
            if rank < N_RANKS and (runs_mask >> card(rank, suit)) & 1:
                block |= 1 << card(rank, suit)
            elif block:
                melds.append(block)
                block = 0
    return melds


def defender_deadwood(defender: int, knocker_melds: list[int]) -> int:
    """Least defender deadwood: try every single layoff, recursively (brute force)."""

    @cache
    def search(melds: tuple[int, ...], remaining: int) -> int:
        best = int(deadwood_nb(remaining))
        for c in cards_in(remaining):
            for i, m in enumerate(melds):
                grown = m | (1 << c)
                if is_meld(grown):
                    new = melds[:i] + (grown,) + melds[i + 1 :]
                    best = min(best, search(tuple(sorted(new)), remaining & ~(1 << c)))
        return best

    return search(tuple(sorted(knocker_melds)), defender)


# --- legal actions and the observation, from the rules alone ----------------------------
# Action ids: 0-51 discard, 52 take, 53 draw stock, 54 pass, 55 knock, 56 big gin, 57 play on.
# Decisions: 0/1 upcard (non-dealer, dealer), 2 draw, 3 big gin, 4 discard, 5 knock, 6 hand over.


def legal_action_ids(
    decision: int, to_act: bool, hand: int, pile: list[int], just_taken: int, no_retake: bool
) -> set[int]:
    """The action ids the seat may take, written straight from RULES.md, one decision at a time."""
    if not to_act or decision == 6:
        return set()
    if decision in (0, 1):  # the upcard offer: take it or pass
        return {52, 54}
    if decision == 2:  # draw: the stock, or the pile's top card when there is one
        return {53, 52} if pile else {53}
    if decision == 3:  # eleven cards all melded: declare big gin or play on
        return {56, 57}
    if decision == 5:  # deadwood within the limit after the discard: knock or play on
        return {55, 57}
    assert decision == 4
    held = set(cards_in(hand))
    if no_retake and just_taken >= 0:  # the card just taken from the pile may not go straight back
        held.discard(just_taken)
    return held


def observation_py(
    *,
    hand: int,
    pile: list[int],
    opp_taken: int,
    opp_discarded: int,
    opp_passed: int,
    just_taken: int,
    stock: int,
    scores: tuple[int, int],
    target: int,
    knock_limit: int,
    doubled: bool,
    dealer: bool,
    turn: int,
    turn_cap: int,
    decision: int,
) -> np.ndarray:
    """The documented observation layout (``arena.engine.actions``), filled field by field."""
    one_hot = [0.0] * 52
    top = list(one_hot)
    if pile:
        top[pile[-1]] = 1.0
    order = list(one_hot)
    for i, c in enumerate(pile):
        order[c] = (i + 1) / 52
    just = list(one_hot)
    if just_taken >= 0:
        just[just_taken] = 1.0

    def bits(mask: int) -> list[float]:
        return [float((mask >> c) & 1) for c in range(52)]

    asked = [0.0] * 7
    asked[decision] = 1.0
    out = bits(hand) + top + order + bits(opp_taken) + bits(opp_discarded) + bits(opp_passed) + just
    out += [stock / 31, min(scores[0], target) / target, min(scores[1], target) / target, knock_limit / 10]
    out += [float(doubled), float(dealer), min(turn, turn_cap) / turn_cap] + asked
    return np.array(out, dtype=np.float32)


def mlp_logits_reference(weights, biases, activation: str, obs: np.ndarray) -> np.ndarray:
    """An MLP's logits in float64, one output at a time: ``y_j = sum_i x_i w_ij + b_j``, then the activation.

    Independent of :mod:`arena.engine.mlp` (no packing, no BLAS call order):
    the cross-check of its compiled forward pass, its numpy forward pass and
    the ONNX export.
    """
    x = np.asarray(obs, dtype=np.float64)
    for k, (w, b) in enumerate(zip(weights, biases)):
        w64 = np.asarray(w, dtype=np.float64)
        y = np.empty((x.shape[0], w64.shape[1]))
        for j in range(w64.shape[1]):
            y[:, j] = (x * w64[:, j]).sum(axis=1) + float(b[j])
        if k < len(weights) - 1:
            y = np.maximum(y, 0.0) if activation == "relu" else np.tanh(y)
        x = y
    return x
