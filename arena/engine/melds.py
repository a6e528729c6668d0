"""Melds, deadwood, discards and layoffs as numba kernels on int64 hand masks.

Why the decomposition works
---------------------------
A meld is either a *set* (3 or 4 cards of one rank, one card per suit) or a
*run* (3+ consecutive ranks of one suit, Ace low).  Runs never leave their
suit, so once it is decided which cards go into sets, the rest of the problem
splits into four independent one-suit problems.  Inside one suit with runs
only, the best arrangement melds exactly the cards lying in a maximal block of
consecutive ranks of length >= 3: every such block is itself a legal run (or
can be cut into runs, which melds the same cards), a card in a shorter block
can be in no run at all, and every card value is positive so melding more is
always better.  The one-suit answer therefore depends only on the suit's
13-bit mask, and ``RUN_DEADWOOD[mask]`` tabulates it once for all 8192 masks.

Sets are the only coupling between suits.  A rank can form a set only if at
least three of its cards are held; those ranks are
``c&d&h | c&d&s | c&h&s | d&h&s`` on the four suit masks.  For such a rank
the useful choices are: no set, the set of all its cards, and (when all four
are held) each of the four 3-card subsets, which leaves one card free for a
run.  For a fixed choice, deadwood = sum over suits of
``RUN_DEADWOOD[suit mask minus the set cards]``; the answer is the minimum over
the product of the per-rank choices.

Two facts keep that product tiny.  (1) A set rank none of whose cards can be
in any run of the whole hand (no card lies in a window of three consecutive
held cards of its suit) gains nothing from the "no set" or "3 of 4" options:
those only leave cards as deadwood.  Such *forced* ranks always take the full
set and are not enumerated.  (2) Most hands have no set rank at all, which
is a straight-line path: four table look-ups.

The discard kernels use the same enumeration once.  For a set choice R of the
full hand, a card c outside R is discarded from the runs-remainder of its suit
s, giving ``total(R) - RUN_DEADWOOD[m_s] + RUN_DEADWOOD[m_s without c]``; the
set choices of ``hand - c`` are exactly the choices R of ``hand`` with
``c not in R`` (a 4-card rank minus c is the 3-subset leaving c out; a 3-card
rank minus c has no set, i.e. the "no set" choice).  Cards of forced sets are
handled directly: dropping one card of a forced 4-set leaves a set of three
(deadwood ``total(R)``), dropping one card of a forced 3-set leaves its other
two cards as deadwood (``total(R) + 2 * rank value``).  ``best_discard``
needs only the best card per suit, and within a runs-only suit that depends
on the suit mask alone: ``SUIT_DISCARD_KEY[mask]`` tabulates it (with the
tie-break), so a set choice costs four look-ups.

Caching: a cached caller in another module would not notice an edit here;
:mod:`arena.engine._jit` keys the whole cache on a hash of the sources to avoid that.

Masks: bit ``suit * 13 + rank`` (see :mod:`arena.engine.cards`).  The public
kernels are compiled through :mod:`arena.engine._jit` (``kernel``: they allocate
nothing, so no reference counting; ``defender_deadwood``'s work arrays are
on the stack) and may be called from Python or numba code; the ``_private``
helpers are compiled into their callers only and cannot be called from Python.
"""

from __future__ import annotations

import numpy as np

from arena.engine._jit import helper, inline, kernel, stack_int64
from arena.engine.cards import NUM_RANKS, NUM_SUITS, RANK_VALUES, SUIT_BITS, popcount

#: ``out[c]`` of :func:`deadwood_after_discards` for cards not in the hand.
NO_CARD_DEADWOOD = 1000

#: One bit per suit at rank 0; ``RANK_SPREAD << r`` is the four cards of rank r.
RANK_SPREAD = 1 | (1 << 13) | (1 << 26) | (1 << 39)
ALL_CARDS = (1 << 52) - 1
#: Cards of rank 0..10 in every suit: where a run of 3 may start.
RUN_STARTS = 0x7FF * RANK_SPREAD
#: Cards that are not an Ace / not a King (guards for shifts across suits).
NOT_ACES = 0x1FFE * RANK_SPREAD
NOT_KINGS = 0x0FFF * RANK_SPREAD

# Packed key of best_discard: (deadwood, 10 - card value, 63 - card), smallest wins.
_KEY_DW_SHIFT = 10
_KEY_VAL_SHIFT = 6
_KEY_NONE = NO_CARD_DEADWOOD << _KEY_DW_SHIFT
#: Larger than any real key: what an empty suit offers best_discard.
_KEY_EMPTY_SUIT = 1 << 40
#: 0 as an int64 value, to start a loop variable: numba types a literal 0 as
#: the constant 0 and would compile each helper the variable is passed to
#: twice (once for the constant, once for int64).
_ZERO: int = np.int64(0)  # type: ignore[assignment]  # an int to the Python types, int64 to numba


def _build_run_tables() -> tuple[np.ndarray, np.ndarray]:
    """RUN_DEADWOOD and RUN_COVER for every 13-bit suit mask (vectorised)."""
    m = np.arange(1 << NUM_RANKS, dtype=np.int64)
    starts = m & (m >> 1) & (m >> 2)  # rank r starts a window r, r+1, r+2
    cover = (starts | (starts << 1) | (starts << 2)) & SUIT_BITS
    dead = m & ~cover
    value = np.zeros(1 << NUM_RANKS, dtype=np.int64)
    for r in range(NUM_RANKS):
        value += ((dead >> r) & 1) * RANK_VALUES[r]
    return value, cover


#: Deadwood of one suit holding ``mask`` when only runs may be formed.
RUN_DEADWOOD, RUN_COVER = _build_run_tables()
# The tables the kernels read are stored as small integers (numba computes
# with int64 all the same): numba copies a global array into every compiled
# function that reads it, and again into every caller it is linked into, so
# an int64 table costs LLVM eight times the bytes (measured: ~7 ms of a cold
# start per 64 KB copy, and there are dozens of copies).
_RUN_DEADWOOD_64 = RUN_DEADWOOD
RUN_DEADWOOD = RUN_DEADWOOD.astype(np.int8)  # at most 85 (a whole suit)
#: Rank of a one-bit 13-bit mask (``LOW_BIT_RANK[1 << r] = r``).
LOW_BIT_RANK = np.full(1 << NUM_RANKS, -1, dtype=np.int8)
LOW_BIT_RANK[1 << np.arange(NUM_RANKS)] = np.arange(NUM_RANKS)
_RANK_VALUES = RANK_VALUES.copy()


def _build_suit_discard_key() -> np.ndarray:
    """SUIT_DISCARD_KEY[m]: the best card to drop from a runs-only suit mask m.

    Packed like a best_discard key without the suit offset:
    ``(RUN_DEADWOOD[m - card] - RUN_DEADWOOD[m]) << 10 | (10 - value) << 6 | (12 - rank)``,
    minimised over the cards of m, so the least deadwood change wins, then
    the highest value, then the highest rank.  Empty masks get a huge key.
    """
    m = np.arange(1 << NUM_RANKS, dtype=np.int64)[:, None]
    r = np.arange(NUM_RANKS, dtype=np.int64)[None, :]
    delta = _RUN_DEADWOOD_64[m ^ (1 << r)] - _RUN_DEADWOOD_64[m]
    key = (delta << _KEY_DW_SHIFT) + ((10 - RANK_VALUES[r]) << _KEY_VAL_SHIFT) + (12 - r)
    key = np.where((m >> r) & 1 == 1, key, _KEY_EMPTY_SUIT)
    return key.min(axis=1)


SUIT_DISCARD_KEY = _build_suit_discard_key()


#: Fields of a SUIT_DROP entry (see _build_suit_drop).
_DROP_BIAS = 16
_DROP_FIELD = 63
_DROP_EMPTY = _DROP_FIELD
_DROP_DW_SHIFT = 19


def _build_suit_drop() -> np.ndarray:
    """SUIT_DROP[m] for every 13-bit runs-only suit mask m, three fields in one int64.

    Bits 0-12: the cards of m whose drop changes the suit's deadwood least
    (the ties); bits 13-18: that least change ``RUN_DEADWOOD[m - card] -
    RUN_DEADWOOD[m]`` plus ``_DROP_BIAS`` (-10..20 for a non-empty suit;
    ``_DROP_EMPTY``, larger than any, for an empty one, with no ties); bits
    19 up: ``RUN_DEADWOOD[m]``.  One look-up per suit gives
    :func:`_drop_any` the remainder's deadwood and its best drops, so the
    meld kernels' hottest path reads one 32 KB table, not three.
    """
    m = np.arange(1 << NUM_RANKS, dtype=np.int64)[:, None]
    r = np.arange(NUM_RANKS, dtype=np.int64)[None, :]
    held = (m >> r) & 1 == 1
    dw = _RUN_DEADWOOD_64
    delta = np.where(held, dw[m ^ (1 << r)] - dw[m] + _DROP_BIAS, _DROP_EMPTY)
    least = delta.min(axis=1)
    if not (0 <= least[1:].min() and least[1:].max() < _DROP_EMPTY and least[0] == _DROP_EMPTY):
        raise AssertionError("SUIT_DROP: a drop change does not fit its 6-bit field")
    ties = np.where(held & (delta == least[:, None]), np.int64(1) << r, 0).sum(axis=1)
    return ((dw << _DROP_DW_SHIFT) | (least << 13) | ties).astype(np.int32)


#: Per suit mask: runs-only deadwood, least change from dropping one card, the cards doing it.
SUIT_DROP = _build_suit_drop()


# --- small helpers ------------------------------------------------------------


@inline
def _spread(ranks: int) -> int:
    """The cards of every suit at the ranks of a 13-bit rank mask."""
    return ranks | (ranks << 13) | (ranks << 26) | (ranks << 39)


@inline
def _fold(mask: int) -> int:
    """13-bit mask of the ranks present in a card mask (any suit)."""
    return (mask | (mask >> 13) | (mask >> 26) | (mask >> 39)) & SUIT_BITS


@inline
def _run_cover(hand: int) -> int:
    """Cards of ``hand`` lying in a window of 3 consecutive held cards of a suit.

    Within a suit these are exactly the maximal blocks of length >= 3, i.e.
    the runs of the best runs-only arrangement.
    """
    t = hand & (hand >> 1) & (hand >> 2) & RUN_STARTS
    return t | (t << 1) | (t << 2)


@inline
def _sum_run_deadwood(x: int) -> int:
    return (
        RUN_DEADWOOD[x & SUIT_BITS]
        + RUN_DEADWOOD[(x >> 13) & SUIT_BITS]
        + RUN_DEADWOOD[(x >> 26) & SUIT_BITS]
        + RUN_DEADWOOD[(x >> 39) & SUIT_BITS]
    )


@inline
def _set_ranks(hand: int) -> tuple[int, int]:
    """(ranks with >= 3 cards, ranks with 4 cards) as 13-bit masks."""
    c = hand & SUIT_BITS
    d = (hand >> 13) & SUIT_BITS
    h = (hand >> 26) & SUIT_BITS
    s = (hand >> 39) & SUIT_BITS
    return ((c & d) & (h | s)) | ((h & s) & (c | d)), c & d & h & s


@inline
def _split_set_ranks(hand: int, three: int) -> tuple[int, int]:
    """(enumerated ranks, removal mask of the forced sets).

    A set rank is forced (always melded whole) when none of its cards can be
    in a run of ``hand``; the others are enumerated.
    """
    inter = three & _fold(_run_cover(hand))
    return inter, _spread(three & ~inter) & hand


@helper
def _branch_removal(hand: int, inter: int, digits: int) -> int:
    """Set cards chosen by ``digits`` (3 bits per rank r at bit 3r).

    Option 0 = no set, 1 = every held card of the rank, 2..5 = all but the
    card of suit (option - 2) (only offered when all four are held).
    """
    removal = 0
    t = inter
    while t:
        low = t & -t
        t ^= low
        r = LOW_BIT_RANK[low]
        k = (digits >> (3 * r)) & 7
        if k:
            cards = hand & (RANK_SPREAD << r)
            if k >= 2:
                cards &= ~(1 << (13 * (k - 2) + r))
            removal |= cards
    return removal


@helper
def _next_digits(inter: int, four: int, digits: int) -> int:
    """Odometer step over the options of the enumerated ranks; -1 at the end.

    The lowest rank turns fastest; options run 0 (none), 1 (all), 2..5
    (leave out the c, d, h, s card).
    """
    t = inter
    while t:
        low = t & -t
        t ^= low
        r = LOW_BIT_RANK[low]
        shift = 3 * r
        k = ((digits >> shift) & 7) + 1
        n_options = 6 if four & low else 2
        digits &= ~(7 << shift)
        if k < n_options:
            return digits | (k << shift)
    return -1


# --- deadwood -------------------------------------------------------------------


@inline
def _deadwood(hand: int) -> int:
    """:func:`deadwood`'s body, pasted into :func:`defender_deadwood` too (its only engine
    user): a cold start then compiles no ``deadwood`` kernel for the engine."""
    three, four = _set_ranks(hand)
    if three == 0:
        return _sum_run_deadwood(hand)
    return _deadwood_with_sets(hand, three, four)


@kernel
def deadwood(hand: int) -> int:
    """Least deadwood of a hand of any size (sum of values of unmelded cards)."""
    return _deadwood(hand)


@kernel
def deadwood_at_most(hand: int, limit: int) -> bool:
    """``deadwood(hand) <= limit``, almost always without the set enumeration.

    The engine's two questions after a draw and a discard (big gin: at most
    0; may the seat knock: at most the knock limit).  Two bounds decide
    nearly every hand with no branch the processor mispredicts: the
    runs-only deadwood is an upper bound (no sets is one arrangement), and
    the values of the *loose* cards, those in no window of three held cards
    of their suit and in no rank held three times, are a lower bound (they
    are deadwood in every arrangement; without a set rank the loose cards
    are exactly the runs-only deadwood).  For ``limit`` 0 (gin) any loose
    card answers no before a look-up.  Only a hand with a set rank whose
    bounds straddle ``limit`` enumerates.  Same answers as
    ``deadwood(hand) <= limit``.
    """
    c = hand & SUIT_BITS
    d = (hand >> 13) & SUIT_BITS
    h = (hand >> 26) & SUIT_BITS
    s = (hand >> 39) & SUIT_BITS
    three = ((c & d) & (h | s)) | ((h & s) & (c | d))
    loose = hand & ~_run_cover(hand) & ~_spread(three)
    if loose != 0 and limit <= 0:  # gin needs every card melded: no look-up
        return False
    if RUN_DEADWOOD[c] + RUN_DEADWOOD[d] + RUN_DEADWOOD[h] + RUN_DEADWOOD[s] <= limit:
        return True
    if _sum_run_deadwood(loose) > limit:
        return False
    return _deadwood_with_sets(hand, three, c & d & h & s) <= limit


@helper
def _deadwood_with_sets(hand: int, three: int, four: int) -> int:
    inter, forced = _split_set_ranks(hand, three)
    rest = hand & ~forced
    if inter == 0:
        return _sum_run_deadwood(rest)
    best = NO_CARD_DEADWOOD
    digits = _ZERO
    while digits >= 0:
        v = _sum_run_deadwood(rest & ~_branch_removal(hand, inter, digits))
        if v < best:
            best = v
        digits = _next_digits(inter, four, digits)
    return best


# --- discards -----------------------------------------------------------------------


@helper
def _remainder_into_out(x: int, total: int, out: np.ndarray, best: int) -> int:
    """out[c] = min(out[c], deadwood if c is dropped from the runs-remainder x).

    Returns min(best, the values computed).
    """
    for suit in range(NUM_SUITS):
        m = (x >> (13 * suit)) & SUIT_BITS
        if m:
            base = total - RUN_DEADWOOD[m]
            t = m
            while t:
                low = t & -t
                t ^= low
                c = 13 * suit + LOW_BIT_RANK[low]
                v = base + RUN_DEADWOOD[m ^ low]
                if v < out[c]:
                    out[c] = v
                    if v < best:
                        best = v
    return best


@helper
def _forced_into_out(hand: int, forced: int, total: int, out: np.ndarray, best: int) -> int:
    """out[c] for the cards c of forced sets (see the module docstring); returns the min."""
    for suit in range(NUM_SUITS):
        t = (forced >> (13 * suit)) & SUIT_BITS
        while t:
            low = t & -t
            t ^= low
            r = LOW_BIT_RANK[low]
            c = 13 * suit + r
            v = total
            if popcount(hand & (RANK_SPREAD << r)) == 3:
                v += 2 * _RANK_VALUES[r]
            if v < out[c]:
                out[c] = v
                if v < best:
                    best = v
    return best


@kernel
def deadwood_after_discards(hand: int, out: np.ndarray) -> int:
    """For every card c held, ``out[c]`` = least deadwood of ``hand`` without c.

    Cards not held get ``NO_CARD_DEADWOOD``.  Returns the minimum over the
    held cards (NO_CARD_DEADWOOD for an empty hand).  One pass over the set
    choices of ``hand``, not one deadwood call per card.
    """
    out[:] = NO_CARD_DEADWOOD
    best = NO_CARD_DEADWOOD
    three, four = _set_ranks(hand)
    if three == 0:
        return _remainder_into_out(hand, _sum_run_deadwood(hand), out, best)
    inter, forced = _split_set_ranks(hand, three)
    digits = _ZERO
    while digits >= 0:
        x = hand & ~forced & ~_branch_removal(hand, inter, digits)
        total = _sum_run_deadwood(x)
        best = _remainder_into_out(x, total, out, best)
        if forced:
            best = _forced_into_out(hand, forced, total, out, best)
        digits = _next_digits(inter, four, digits)
    return best


@helper
def _drop_any(x: int) -> tuple[int, int, int]:
    """(least, ties, total) of dropping any one card of the runs-only remainder x.

    ``least`` is the deadwood left (the remainder's own, ``total``, plus
    the best drop's change), ``ties`` the cards giving it: four SUIT_DROP
    look-ups and selects, no branch per suit (an empty suit's change is
    huge and its ties empty).
    """
    e0 = SUIT_DROP[x & SUIT_BITS]
    e1 = SUIT_DROP[(x >> 13) & SUIT_BITS]
    e2 = SUIT_DROP[(x >> 26) & SUIT_BITS]
    e3 = SUIT_DROP[(x >> 39) & SUIT_BITS]
    d0 = (e0 >> 13) & _DROP_FIELD
    d1 = (e1 >> 13) & _DROP_FIELD
    d2 = (e2 >> 13) & _DROP_FIELD
    d3 = (e3 >> 13) & _DROP_FIELD
    # Selects written out (numba's min() would be one more compilation).
    d01 = d0 if d0 < d1 else d1
    d23 = d2 if d2 < d3 else d3
    low = d01 if d01 < d23 else d23
    t0 = e0 & SUIT_BITS if d0 == low else 0
    t1 = e1 & SUIT_BITS if d1 == low else 0
    t2 = e2 & SUIT_BITS if d2 == low else 0
    t3 = e3 & SUIT_BITS if d3 == low else 0
    total = (e0 >> _DROP_DW_SHIFT) + (e1 >> _DROP_DW_SHIFT) + (e2 >> _DROP_DW_SHIFT) + (e3 >> _DROP_DW_SHIFT)
    return total + low - _DROP_BIAS, t0 | (t1 << 13) | (t2 << 26) | (t3 << 39), total


@helper
def _remainder_ties(x: int, total: int, allowed: int, best: int, ties: int) -> tuple[int, int]:
    """(best, ties) updated with dropping each card of ``x & allowed`` from the runs-remainder x.

    ``ties`` is the mask of the cards whose drop gives ``best``; see :func:`least_discards`,
    which calls this only when some card of x may not go (else :func:`_drop_any`,
    branch-free, is faster).
    """
    for suit in range(NUM_SUITS):
        shift = 13 * suit
        a = ((x & allowed) >> shift) & SUIT_BITS
        if a == 0:
            continue
        m = (x >> shift) & SUIT_BITS
        if a == m:  # every card of the suit may go: the table has the answer
            e = SUIT_DROP[m]
            v = total + ((e >> 13) & _DROP_FIELD) - _DROP_BIAS
            if v < best:
                best = v
                ties = (e & SUIT_BITS) << shift
            elif v == best:
                ties |= (e & SUIT_BITS) << shift
        else:
            base = total - RUN_DEADWOOD[m]
            while a:
                low = a & -a
                a ^= low
                v = base + RUN_DEADWOOD[m ^ low]
                if v < best:
                    best = v
                    ties = low << shift
                elif v == best:
                    ties |= low << shift
    return best, ties


@helper
def _forced_ties(hand: int, cards: int, total: int, best: int, ties: int) -> tuple[int, int]:
    """(best, ties) updated with dropping each of ``cards`` (cards of forced sets)."""
    t = cards
    while t:
        low = t & -t
        t ^= low
        r = LOW_BIT_RANK[_fold(low)]
        v = total
        if popcount(hand & (RANK_SPREAD << r)) == 3:
            v += 2 * _RANK_VALUES[r]
        if v < best:
            best = v
            ties = low
        elif v == best:
            ties |= low
    return best, ties


@kernel
def least_discards(hand: int, allowed: int) -> tuple[int, int]:
    """(least, ties): the least deadwood left by discarding one card of ``allowed & hand``,
    and the mask of those cards that leave exactly that much.

    The same values as :func:`deadwood_after_discards` (``least`` is the
    minimum of ``out[c]`` over the cards, ``ties`` the cards reaching it) in
    the same single pass over the set choices, but with no array to fill:
    a card ties when some set choice gives it the least value.  Returns
    ``(NO_CARD_DEADWOOD, 0)`` when ``allowed & hand`` is empty.
    """
    allowed &= hand
    best: int = np.int64(NO_CARD_DEADWOOD)  # type: ignore[assignment]  # int64 for numba (see _ZERO)
    ties = _ZERO
    if allowed == 0:
        return best, ties
    three, four = _set_ranks(hand)
    if three == 0 and allowed == hand:  # the common case: straight-line table look-ups
        least, ties, _ = _drop_any(hand)
        return least, ties
    inter = _ZERO
    forced = _ZERO
    if three != 0:
        inter, forced = _split_set_ranks(hand, three)
    forced_allowed = forced & allowed
    # One pass per set choice (without set ranks: one pass, the odometer
    # stops at once).  Each inline helper is written once per path: numba
    # types and lowers every copy again.
    digits = _ZERO
    while True:
        x = hand & ~forced
        if inter:  # no odometer when every set rank is forced (one pass)
            x &= ~_branch_removal(hand, inter, digits)
        if x & allowed == x:
            v, t, total = _drop_any(x)
            least = v if v < best else best  # selects, not branches: which one wins is unpredictable
            ties = (ties if best == least else 0) | (t if v == least else 0)
            best = least
        else:
            total = _sum_run_deadwood(x)
            best, ties = _remainder_ties(x, total, allowed, best, ties)
        if forced_allowed:
            best, ties = _forced_ties(hand, forced_allowed, total, best, ties)
        if inter == 0:
            break
        digits = _next_digits(inter, four, digits)
        if digits < 0:
            break
    return best, ties


@helper
def _remainder_best(x: int, total: int, exclude: int, best: int) -> int:
    """min(best, key of dropping each card of the runs-remainder x but exclude).

    A suit's best card comes from SUIT_DISCARD_KEY; only the suit holding
    ``exclude`` is scanned card by card.  Key of card c = 13 * suit + r:
    ``(deadwood << 10) | (10 - value) << 6 | (63 - c)``, and
    ``63 - c = (12 - r) + (51 - 13 * suit)`` never carries out of 6 bits.
    """
    total_key = total << _KEY_DW_SHIFT
    for suit in range(NUM_SUITS):
        m = (x >> (13 * suit)) & SUIT_BITS
        if exclude >= 0 and exclude // 13 == suit and (m >> (exclude % 13)) & 1:
            t = m ^ (1 << (exclude % 13))
            base = total - RUN_DEADWOOD[m]
            while t:
                low = t & -t
                t ^= low
                r = LOW_BIT_RANK[low]
                key = (
                    ((base + RUN_DEADWOOD[m ^ low]) << _KEY_DW_SHIFT)
                    | ((10 - _RANK_VALUES[r]) << _KEY_VAL_SHIFT)
                    | (63 - 13 * suit - r)
                )
                if key < best:
                    best = key
        else:
            key = SUIT_DISCARD_KEY[m] + total_key + (51 - 13 * suit)
            if key < best:
                best = key
    return best


@helper
def _forced_best(hand: int, forced: int, total: int, exclude: int, best: int) -> int:
    """min(best, key of dropping each card of the forced sets but exclude)."""
    for suit in range(NUM_SUITS):
        t = (forced >> (13 * suit)) & SUIT_BITS
        while t:
            low = t & -t
            t ^= low
            r = LOW_BIT_RANK[low]
            c = 13 * suit + r
            v = total
            if popcount(hand & (RANK_SPREAD << r)) == 3:
                v += 2 * _RANK_VALUES[r]
            key = (v << _KEY_DW_SHIFT) | ((10 - _RANK_VALUES[r]) << _KEY_VAL_SHIFT) | (63 - c)
            if key < best and c != exclude:
                best = key
    return best


@kernel
def best_discard(hand: int, exclude: int) -> tuple[int, int]:
    """(card, deadwood): the discard leaving the least deadwood, never ``exclude``.

    ``exclude`` is a card number or -1.  Tie-break (deterministic): among
    cards leaving the same least deadwood, the one of highest deadwood value
    (A=1 .. J/Q/K=10), then the highest card number.  Returns
    ``(-1, NO_CARD_DEADWOOD)`` when no card may be discarded.
    """
    three, four = _set_ranks(hand)
    best = _KEY_NONE
    if three == 0:
        best = _remainder_best(hand, _sum_run_deadwood(hand), exclude, best)
    else:
        inter, forced = _split_set_ranks(hand, three)
        digits = _ZERO
        while digits >= 0:
            x = hand & ~forced & ~_branch_removal(hand, inter, digits)
            total = _sum_run_deadwood(x)
            best = _remainder_best(x, total, exclude, best)
            if forced:
                best = _forced_best(hand, forced, total, exclude, best)
            digits = _next_digits(inter, four, digits)
    if best >= _KEY_NONE:
        return -1, NO_CARD_DEADWOOD
    return 63 - (best & 63), best >> _KEY_DW_SHIFT


# --- arrangements and layoffs -------------------------------------------------------


@kernel
def layoff_spots(sets_mask: int, runs_mask: int) -> int:
    """Cards that could be laid off directly on these melds.

    The missing 4th card of every 3-card set, and the card just below and
    just above each maximal run block of ``runs_mask`` (within A..K).  Cards
    already in the melds are never spots.
    """
    three, four = _set_ranks(sets_mask)
    set_spots = _spread(three & ~four) & ~sets_mask
    below = (runs_mask >> 1) & NOT_KINGS
    above = (runs_mask << 1) & NOT_ACES & ALL_CARDS
    return (set_spots | below | above) & ~(sets_mask | runs_mask)


@kernel
def best_arrangement(hand: int, seen: int) -> tuple[int, int, int]:
    """(sets_mask, runs_mask, deadwood) of a least-deadwood arrangement.

    ``sets_mask`` = cards melded in sets, ``runs_mask`` = cards melded in runs
    (its maximal consecutive blocks within a suit are the runs).
    Tie-break among arrangements of equal least deadwood (the knocker's
    choice at the showdown): fewest layoff spots (:func:`layoff_spots`) that
    are neither in ``seen`` nor in ``hand``, i.e. fewest cards the defender
    might still hold and lay off; then the first in enumeration order:
    forced sets always whole, and an odometer over the other set ranks,
    lowest rank turning fastest, options in the order no set, all cards,
    all but the c / d / h / s card.
    """
    three, four = _set_ranks(hand)
    if three == 0:
        runs = _run_cover(hand)
        return 0, runs, _sum_run_deadwood(hand)
    inter, forced = _split_set_ranks(hand, three)
    best_dw = NO_CARD_DEADWOOD
    best_spots = 64
    best_sets = 0
    best_runs = 0
    digits = _ZERO
    while digits >= 0:
        sets = forced | _branch_removal(hand, inter, digits)
        x = hand & ~sets
        dw = _sum_run_deadwood(x)
        if dw <= best_dw:
            runs = _run_cover(x)
            spots = popcount(layoff_spots(sets, runs) & ~seen & ~hand)
            if dw < best_dw or spots < best_spots:
                best_dw = dw
                best_spots = spots
                best_sets = sets
                best_runs = runs
        digits = _next_digits(inter, four, digits)
    return best_sets, best_runs, best_dw


#: Most layoff chains :func:`defender_deadwood` can meet: each card of the
#: defender starts at most three (a set's 4th card, the run ends on either
#: side of a one-card gap), and a hand has at most 52 cards.
_MAX_CHAINS = 3 * 52 + 1
#: A chain's prefixes: the cards laid off by taking its first 0..13 cards.
_CHAIN_STRIDE = NUM_RANKS + 1
_PREFIX_SIZE = _MAX_CHAINS * _CHAIN_STRIDE  # one constant: stack_int64 takes a constant size


@kernel
def defender_deadwood(defender: int, sets_mask: int, runs_mask: int) -> tuple[int, int, int, int]:
    """(deadwood, laid_off_mask, def_sets_mask, def_runs_mask) at a showdown.

    The defender's layoffs onto the knocker's melds (``sets_mask``,
    ``runs_mask`` as from :func:`best_arrangement`) and its own melds are
    chosen together for the least deadwood.  Layoffs chain: a run block
    a..b takes a-1, then a-2 once a-1 is laid off, ... and b+1, b+2, ...;
    a 3-card set takes its 4th card.  Every chain of cards the defender holds
    is enumerated with every length 0..k; a card reachable from two chains
    (a one-card gap between two blocks, or a set's 4th card next to a run) is
    laid off once (the union of the chosen chain prefixes).  Among equal
    deadwood the first combination in enumeration order wins (fewest layoffs
    first in the odometer).  The defender's own melds are
    ``best_arrangement(remaining, 0)``.
    """
    knocker = sets_mask | runs_mask
    # Work arrays on the stack (no allocation, see _jit.stack_int64): chain i's
    # prefixes at prefix[i * _CHAIN_STRIDE + k], its length, the odometer.
    prefix = stack_int64(_PREFIX_SIZE)
    length = stack_int64(_MAX_CHAINS)
    choice = stack_int64(_MAX_CHAINS)
    n = 0
    # 4th cards of 3-card sets: chains of length 1.
    three, four = _set_ranks(sets_mask)
    t = _spread(three & ~four) & ~sets_mask & defender
    while t:
        low = t & -t
        t ^= low
        prefix[n * _CHAIN_STRIDE] = 0
        prefix[n * _CHAIN_STRIDE + 1] = low
        length[n] = 1
        n += 1
    # Run ends, walking outwards while the defender holds the next card.
    for suit in range(NUM_SUITS):
        m = (runs_mask >> (13 * suit)) & SUIT_BITS
        if m == 0:
            continue
        starts = m & ~(m << 1)
        ends = m & ~(m >> 1) & SUIT_BITS
        for r in range(NUM_RANKS):
            for direction in (-1, 1):
                is_end = (ends >> r) & 1 if direction == 1 else (starts >> r) & 1
                if not is_end:
                    continue
                k = 0
                acc = 0
                prefix[n * _CHAIN_STRIDE] = 0
                q = r + direction
                while 0 <= q < NUM_RANKS:
                    card_bit = 1 << (13 * suit + q)
                    if not (defender & card_bit) or (knocker & card_bit):
                        break
                    acc |= card_bit
                    k += 1
                    prefix[n * _CHAIN_STRIDE + k] = acc
                    q += direction
                if k:
                    length[n] = k
                    n += 1
    # Odometer over the chain lengths.
    for i in range(n):
        choice[i] = 0
    best_dw = NO_CARD_DEADWOOD
    best_laid = 0
    while True:
        laid = 0
        for i in range(n):
            laid |= prefix[i * _CHAIN_STRIDE + choice[i]]
        dw = _deadwood(defender & ~laid)
        if dw < best_dw:
            best_dw = dw
            best_laid = laid
        i = 0
        while i < n:
            choice[i] += 1
            if choice[i] <= length[i]:
                break
            choice[i] = 0
            i += 1
        if i == n:
            break
    def_sets, def_runs, _ = best_arrangement(defender & ~best_laid, np.int64(0))  # int64: one compiled copy
    return best_dw, best_laid, def_sets, def_runs


@kernel
def in_any_meld(hand: int, card: int) -> bool:
    """True if ``card`` is in some set or run made of cards of ``hand | card``."""
    h = hand | (1 << card)
    r = card % NUM_RANKS
    if popcount(h & (RANK_SPREAD << r)) >= 3:
        return True
    return (_run_cover(h) >> card) & 1 == 1


def melds_of(sets_mask: int, runs_mask: int) -> list[int]:
    """Meld masks for printing: one per set rank, then one per run block.

    Sets are listed by rank, runs by suit then rank.  Not jitted.
    """
    sets_mask = int(sets_mask)
    runs_mask = int(runs_mask)
    melds: list[int] = []
    for r in range(NUM_RANKS):
        m = sets_mask & (RANK_SPREAD << r)
        if m:
            melds.append(m)
    for suit in range(NUM_SUITS):
        bits = (runs_mask >> (13 * suit)) & SUIT_BITS
        block = 0
        for r in range(NUM_RANKS + 1):
            if r < NUM_RANKS and (bits >> r) & 1:
                block |= 1 << (13 * suit + r)
            elif block:
                melds.append(block)
                block = 0
    return melds
