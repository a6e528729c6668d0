"""Meld kernels (arena.engine.melds) against the brute-force reference (tests/reference.py)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (os.path.dirname(_HERE), _HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import reference as ref  # noqa: E402

from arena.engine import melds  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.cards import mask_of  # noqa: E402
from arena.engine.melds import (  # noqa: E402
    NO_CARD_DEADWOOD,
    best_arrangement,
    best_discard,
    deadwood,
    deadwood_after_discards,
    deadwood_at_most,
    defender_deadwood,
    in_any_meld,
    layoff_spots,
    least_discards,
    melds_of,
)

N_RANDOM = 100_000
N_DENSE = 20_000


# --- hand generators ------------------------------------------------------------------


def random_hands(n: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cards = rng.random((n, 52)).argsort(axis=1)[:, :size].astype(np.int64)
    return (np.int64(1) << cards).sum(axis=1)


def _draw(rng: np.random.Generator, pool: list[int], k: int) -> int:
    return sum(1 << int(c) for c in rng.choice(pool, size=k, replace=False))


def dense_hands(n: int, size: int, seed: int) -> np.ndarray:
    """Meld-dense hands: few suits x a narrow rank window, or several sets."""
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        mode = i % 4
        if mode == 0:  # 2 suits x a window of 5-6 ranks (+ random cards if short)
            w = int(rng.integers(5, 7))
            lo = int(rng.integers(0, 14 - w))
            suits = rng.choice(4, size=2, replace=False)
            pool = [s * 13 + r for s in suits for r in range(lo, lo + w)]
            hand = _draw(rng, pool, min(size, len(pool)))
        elif mode == 1:  # 1 suit x a window of 6-7 ranks, the rest anywhere
            w = int(rng.integers(6, 8))
            lo = int(rng.integers(0, 14 - w))
            s = int(rng.integers(4))
            hand = _draw(rng, [s * 13 + r for r in range(lo, lo + w)], int(rng.integers(4, w + 1)))
        elif mode == 2:  # 3-4 suits x a window of 3-4 ranks: many sets crossing runs
            w = int(rng.integers(3, 5))
            lo = int(rng.integers(0, 14 - w))
            pool = [s * 13 + r for s in range(4) for r in range(lo, lo + w)]
            hand = _draw(rng, pool, min(size, len(pool)))
        else:  # 2-3 ranks held 3 or 4 times, neighbours around them
            hand = 0
            for r in rng.choice(13, size=int(rng.integers(2, 4)), replace=False):
                k = int(rng.integers(3, 5))
                for s in rng.choice(4, size=k, replace=False):
                    hand |= 1 << (int(s) * 13 + int(r))
                    if bin(hand).count("1") >= size:
                        break
                if bin(hand).count("1") >= size:
                    break
            ranks = [c % 13 for c in ref.cards_in(hand)]
            near = [s * 13 + r + d for s in range(4) for r in ranks for d in (-2, -1, 1, 2) if 0 <= r + d < 13]
            near = [c for c in set(near) if not (hand >> c) & 1]
            k = min(size - bin(hand).count("1"), len(near))
            if k > 0:
                hand |= _draw(rng, near, k)
        rest = [c for c in range(52) if not (hand >> c) & 1]
        missing = size - bin(hand).count("1")
        if missing > 0:
            hand |= _draw(rng, rest, missing)
        out[i] = hand
    return out


@pytest.fixture(scope="module")
def hand_sets() -> dict[str, np.ndarray]:
    return {
        "random10": random_hands(N_RANDOM, 10, 1),
        "random11": random_hands(N_RANDOM, 11, 2),
        "dense10": dense_hands(N_DENSE, 10, 3),
        "dense11": dense_hands(N_DENSE, 11, 4),
    }


# --- jitted batch drivers of the kernels --------------------------------------------------
# Not cached: numba's cache does not notice when a kernel they inline changes in
# arena/engine/melds.py, and a stale driver would test old code.

driver = jit(cache=False)


@driver
def _deadwood_batch(hands: np.ndarray) -> np.ndarray:
    out = np.empty(hands.shape[0], dtype=np.int64)
    for i in range(hands.shape[0]):
        out[i] = deadwood(hands[i])
    return out


@driver
def _discards_batch(hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    outs = np.empty((hands.shape[0], 52), dtype=np.int64)
    mins = np.empty(hands.shape[0], dtype=np.int64)
    for i in range(hands.shape[0]):
        mins[i] = deadwood_after_discards(hands[i], outs[i])
    return outs, mins


@driver
def _best_discard_batch(hands: np.ndarray, excludes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cards = np.empty(hands.shape[0], dtype=np.int64)
    dws = np.empty(hands.shape[0], dtype=np.int64)
    for i in range(hands.shape[0]):
        cards[i], dws[i] = best_discard(hands[i], excludes[i])
    return cards, dws


def H(text: str) -> int:
    return mask_of(text)


# --- the reference itself ---------------------------------------------------------------------


def test_reference_lists_65_sets_and_264_runs() -> None:
    sizes = [bin(m).count("1") for m in ref.MELDS]
    n_sets = sum(1 for m in ref.MELDS if len({c % 13 for c in ref.cards_in(m)}) == 1)
    assert len(ref.MELDS) == 329 and n_sets == 65 and sizes.count(4) == 13 + 4 * 10


def test_reference_python_and_numba_recursions_agree() -> None:
    hands = np.concatenate([random_hands(200, 10, 11), random_hands(100, 11, 12), dense_hands(200, 11, 13)])
    assert [ref.deadwood_py(int(h)) for h in hands] == list(ref.deadwood_many(hands))


# --- deadwood -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Ah 2h 3h 4h 5h 6h 7h 8h 9h Th", 0),  # one long run
        ("Qh Kh Ah 2c 3d", 26),  # Q-K-A is not a run (Ace low only)
        ("Kh Ah 2h", 13),  # K-A-2 is not a run
        ("Ah 2h 3h", 0),  # A-2-3 is
        ("7c 7d 7h 7s", 0),  # four of a kind
        ("7c 7d 8h 9s", 31),  # no meld across suits
        ("5h 6h 7h 7c 7d", 11),  # 7h in the run or in the set, not both: set wins
        ("5h 6h 7h 8h 7c 7d 7s", 0),  # 3-of-4 set leaves 7h to the run
        ("Jc Qc Kc Kd Ks Kh", 0),  # run + set of the remaining three kings
        ("", 0),
    ],
)
def test_deadwood_known_hands(text: str, expected: int) -> None:
    assert deadwood(H(text)) == expected


@pytest.mark.parametrize("name", ["random10", "random11", "dense10", "dense11"])
def test_deadwood_matches_reference(hand_sets: dict[str, np.ndarray], name: str) -> None:
    hands = hand_sets[name]
    expected = ref.deadwood_many(hands)
    got = _deadwood_batch(hands)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, f"{bad.size} mismatches, first hand {int(hands[bad[0]])}"


@driver
def _at_most_batch(hands: np.ndarray, limits: np.ndarray) -> np.ndarray:
    out = np.empty(hands.shape[0], dtype=np.bool_)
    for i in range(hands.shape[0]):
        out[i] = deadwood_at_most(hands[i], limits[i])
    return out


@pytest.mark.parametrize("name", ["random10", "random11", "dense10", "dense11"])
def test_deadwood_at_most_is_the_reference_deadwood_compared_with_the_limit(
    hand_sets: dict[str, np.ndarray], name: str
) -> None:
    """Limits around each hand's own deadwood (the lower bound's edge), 0 (big gin) and the usual 10."""
    hands = hand_sets[name]
    expected_dw = ref.deadwood_many(hands)
    rng = np.random.default_rng(11)
    for limits in (
        expected_dw,
        expected_dw - 1,
        np.zeros_like(hands),
        np.full_like(hands, 10),
        rng.integers(0, 40, size=hands.size),
    ):
        limits = np.ascontiguousarray(limits, dtype=np.int64)
        got = _at_most_batch(hands, limits)
        bad = np.flatnonzero(got != (expected_dw <= limits))
        assert bad.size == 0, f"{bad.size} mismatches, first hand {int(hands[bad[0]])} limit {int(limits[bad[0]])}"
    assert (expected_dw == 0).sum() > 0 or name.startswith("random")  # dense sets hold gin hands


@pytest.mark.parametrize("name", ["random10", "random11", "dense10", "dense11"])
def test_deadwood_after_discards_matches_brute_force(hand_sets: dict[str, np.ndarray], name: str) -> None:
    hands = hand_sets[name]
    expected = ref.discards_many(hands, NO_CARD_DEADWOOD)
    outs, mins = _discards_batch(hands)
    bad = np.flatnonzero((outs != expected).any(axis=1))
    assert bad.size == 0, f"{bad.size} mismatches, first hand {int(hands[bad[0]])}"
    np.testing.assert_array_equal(mins, expected.min(axis=1))


def test_deadwood_after_discards_overwrites_stale_output() -> None:
    out = np.full(52, -7, dtype=np.int64)
    hand = H("Ah 2h 3h 9c 9d 9s Kd")
    assert deadwood_after_discards(hand, out) == 0
    held = [c for c in range(52) if (hand >> c) & 1]
    assert all(out[c] == NO_CARD_DEADWOOD for c in range(52) if c not in held)
    assert out[H("Kd").bit_length() - 1] == 0
    assert out[H("9c").bit_length() - 1] == 10 + 9 + 9  # breaks the set of nines


@driver
def _least_discards_batch(hands: np.ndarray, alloweds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    least = np.empty(hands.shape[0], dtype=np.int64)
    ties = np.empty(hands.shape[0], dtype=np.int64)
    for i in range(hands.shape[0]):
        least[i], ties[i] = least_discards(hands[i], alloweds[i])
    return least, ties


@pytest.mark.parametrize("name", ["random11", "dense10", "dense11"])
def test_least_discards_is_the_least_of_deadwood_after_discards_over_allowed_cards_and_its_ties(
    hand_sets: dict[str, np.ndarray], name: str
) -> None:
    """Against the brute force: the whole hand, the hand less one card, random subsets, random
    masks (cards not held are ignored), and nothing allowed (NO_CARD_DEADWOOD, no ties)."""
    hands = hand_sets[name][:20_000]
    rng = np.random.default_rng(6)
    n = hands.size
    alloweds = hands.copy()
    for i in range(1, n, 5):  # the hand less one of its cards (no retake)
        alloweds[i] &= ~(np.int64(1) << rng.choice(ref.cards_in(int(hands[i]))))
    alloweds[2::5] &= rng.integers(0, 1 << 52, size=alloweds[2::5].size, dtype=np.int64)  # random subsets
    alloweds[3::5] = rng.integers(0, 1 << 52, size=alloweds[3::5].size, dtype=np.int64)  # any cards
    alloweds[4::50] = 0
    expected_out = ref.discards_many(hands, NO_CARD_DEADWOOD)
    bits = ((alloweds & hands)[:, None] >> np.arange(52)) & 1 == 1
    values = np.where(bits, expected_out, NO_CARD_DEADWOOD)
    expected_least = values.min(axis=1)
    expected_ties = np.where(bits & (values == expected_least[:, None]), np.int64(1) << np.arange(52), 0).sum(axis=1)
    least, ties = _least_discards_batch(hands, alloweds)
    np.testing.assert_array_equal(least, expected_least)
    bad = np.flatnonzero(ties != expected_ties)
    assert bad.size == 0, f"{bad.size} mismatches, first hand {int(hands[bad[0]])} allowed {int(alloweds[bad[0]])}"
    assert (expected_ties != 0).sum() >= n - n // 40  # almost every case has cards to choose from
    n_tied = (bits & (values == expected_least[:, None])).sum(axis=1)
    assert (n_tied > 1).sum() > n // 20  # and ties are common


# --- best discard ---------------------------------------------------------------------------------


def _expected_discard(outs_row: np.ndarray, exclude: int) -> tuple[int, int]:
    held = [c for c in range(52) if outs_row[c] < NO_CARD_DEADWOOD and c != exclude]
    best = min(int(outs_row[c]) for c in held)
    ties = [c for c in held if outs_row[c] == best]
    return max(ties, key=lambda c: (int(ref.VALUES[c]), c)), best


@pytest.mark.parametrize("name", ["random11", "dense11"])
def test_best_discard_is_minimal_skips_exclude_and_breaks_ties_by_value_then_card(
    hand_sets: dict[str, np.ndarray], name: str
) -> None:
    hands = hand_sets[name][:20_000]
    rng = np.random.default_rng(5)
    excludes = np.full(hands.size, -1, dtype=np.int64)
    for i in range(0, hands.size, 2):  # every other hand excludes one of its cards
        excludes[i] = rng.choice(ref.cards_in(int(hands[i])))
    expected_out = ref.discards_many(hands, NO_CARD_DEADWOOD)
    cards, dws = _best_discard_batch(hands, excludes)
    assert not np.any(cards == excludes)
    for i in range(hands.size):
        assert (int(cards[i]), int(dws[i])) == _expected_discard(expected_out[i], int(excludes[i])), int(hands[i])


def test_best_discard_on_small_hands_with_exclude() -> None:
    rng = np.random.default_rng(6)
    hands = np.concatenate([dense_hands(1000, k, 40 + k) for k in range(2, 10)])
    excludes = np.array([rng.choice(ref.cards_in(int(h))) for h in hands], dtype=np.int64)
    excludes[::3] = -1
    expected_out = ref.discards_many(hands, NO_CARD_DEADWOOD)
    cards, dws = _best_discard_batch(hands, excludes)
    for i in range(hands.size):
        assert (int(cards[i]), int(dws[i])) == _expected_discard(expected_out[i], int(excludes[i])), int(hands[i])


def test_best_discard_tie_break_examples() -> None:
    # Kh and Kd both leave 10: the higher card number (Kh) goes.
    card, dw = best_discard(H("Ah 2h 3h 4c 5c 6c 7s 8s 9s Kd Kh"), -1)
    assert (card, dw) == (H("Kh").bit_length() - 1, 10)
    # excluding Kh makes it Kd.
    card, dw = best_discard(H("Ah 2h 3h 4c 5c 6c 7s 8s 9s Kd Kh"), H("Kh").bit_length() - 1)
    assert (card, dw) == (H("Kd").bit_length() - 1, 10)
    # 2c and Ac: dropping 2c leaves Ac (1), dropping Ac leaves 2c (2).
    card, dw = best_discard(H("Ah 2h 3h 4d 5d 6d 7s 8s 9s Ac 2c"), -1)
    assert (card, dw) == (H("2c").bit_length() - 1, 1)
    # 2c 7c 2d 6d all leave gin: the 7 (highest value) beats 6d (highest number).
    card, dw = best_discard(H("2c 3c 4c 5c 6c 7c 2d 3d 4d 5d 6d"), -1)
    assert (card, dw) == (H("7c").bit_length() - 1, 0)
    # Only the aces of a 3-set may go: each leaves the other two and Kc.
    card, dw = best_discard(H("Ac Ad Ah Kc"), H("Kc").bit_length() - 1)
    assert (card, dw) == (H("Ah").bit_length() - 1, 12)


def test_best_discard_with_nothing_allowed() -> None:
    assert best_discard(H("5c"), H("5c").bit_length() - 1) == (-1, NO_CARD_DEADWOOD)


# --- best arrangement and layoff spots ---------------------------------------------------------


def _check_arrangement(hand: int, sets: int, runs: int, dw: int, expected_dw: int) -> None:
    assert sets & runs == 0 and (sets | runs) & ~hand == 0
    assert all(ref.is_meld(m) for m in ref.split_melds(sets, 0)), (hand, sets)
    assert all(ref.is_meld(m) for m in ref.split_melds(0, runs)), (hand, runs)
    assert all(len({c % 13 for c in ref.cards_in(m)}) == 1 for m in ref.split_melds(sets, 0))
    assert ref.value(hand) - ref.value(sets | runs) == dw == expected_dw


@pytest.mark.parametrize("name", ["random10", "random11", "dense10", "dense11"])
def test_best_arrangement_forms_valid_melds_with_least_deadwood(hand_sets: dict[str, np.ndarray], name: str) -> None:
    hands = hand_sets[name][:5000]
    expected = ref.deadwood_many(hands)
    for hand, exp in zip(hands.tolist(), expected.tolist()):
        sets, runs, dw = best_arrangement(hand, hand)
        _check_arrangement(hand, sets, runs, dw, exp)


def test_best_arrangement_tie_break_prefers_fewest_unseen_layoff_spots() -> None:
    hand = H("Th Jh Qh Jc Jd 2c 3d 4s 5c 6d")  # run T-J-Q or set of jacks: 40 deadwood either way
    run_choice = H("Th Jh Qh")
    set_choice = H("Jc Jd Jh")
    # Set of jacks: one spot (Js); run: two spots (9h, Kh).
    sets, runs, dw = best_arrangement(hand, hand)
    assert (sets, runs, dw) == (set_choice, 0, 40)
    # Js known to be dead (in the pile): the set leaves no unseen spot at all.
    assert best_arrangement(hand, hand | H("Js"))[0] == set_choice
    # 9h and Kh seen, Js not: the run leaves none, the set one.
    sets, runs, dw = best_arrangement(hand, hand | H("9h Kh"))
    assert (sets, runs, dw) == (0, run_choice, 40)


@pytest.mark.parametrize(
    "sets, runs, spots",
    [
        ("7c 7d 7h", "", "7s"),
        ("7c 7d 7h 7s", "", ""),
        ("", "4h 5h 6h", "3h 7h"),
        ("", "Ah 2h 3h", "4h"),  # nothing below the Ace
        ("", "Jd Qd Kd", "Td"),  # nothing above the King
        ("", "Jc Qc Kc 3d 4d 5d", "Tc 2d 6d"),  # nothing wraps from Kc to Ad
        ("", "Ah 2h 3h 5h 6h 7h", "4h 8h"),
        ("7c 7d 7h", "4s 5s 6s", "3s 7s"),  # 7s is both a set spot and a run spot
    ],
)
def test_layoff_spots(sets: str, runs: str, spots: str) -> None:
    assert layoff_spots(H(sets), H(runs)) == H(spots)


def test_melds_of_lists_sets_then_run_blocks() -> None:
    got = melds_of(H("7c 7d 7h"), H("Ah 2h 3h 5h 6h 7h 9s Ts Js"))
    assert got == [H("7c 7d 7h"), H("Ah 2h 3h"), H("5h 6h 7h"), H("9s Ts Js")]


# --- defender layoffs ------------------------------------------------------------------------------


def _can_lay_off(knocker_melds: list[int], laid: int) -> bool:
    """Can these cards all be laid off, one at a time, onto the growing melds?"""
    if laid == 0:
        return True
    for c in ref.cards_in(laid):
        for i, m in enumerate(knocker_melds):
            if ref.is_meld(m | (1 << c)):
                grown = knocker_melds[:i] + [m | (1 << c)] + knocker_melds[i + 1 :]
                if _can_lay_off(grown, laid & ~(1 << c)):
                    return True
    return False


def _check_defender(defender: int, sets: int, runs: int) -> None:
    dw, laid, dsets, druns = defender_deadwood(defender, sets, runs)
    knocker_melds = ref.split_melds(sets, runs)
    assert dw == ref.defender_deadwood(defender, knocker_melds), (defender, sets, runs)
    assert laid & ~defender == 0 and _can_lay_off(knocker_melds, laid)
    remaining = defender & ~laid
    assert ref.deadwood_nb(remaining) == dw
    _check_arrangement(remaining, dsets, druns, ref.value(remaining) - ref.value(dsets | druns), dw)


def test_defender_rules_example_melds_instead_of_laying_off() -> None:
    dw, laid, dsets, _ = defender_deadwood(H("7h 7s 7d 8h"), 0, H("4h 5h 6h"))
    assert dw == 8 and laid == 0 and dsets == H("7h 7s 7d")


def test_defender_chained_layoff() -> None:
    dw, laid, _, _ = defender_deadwood(H("7h 8h Kc"), 0, H("4h 5h 6h"))
    assert (dw, laid) == (10, H("7h 8h"))


def test_defender_chain_stops_at_a_missing_card() -> None:
    dw, laid, _, _ = defender_deadwood(H("7h 9h"), 0, H("4h 5h 6h"))
    assert (dw, laid) == (9, H("7h"))


def test_defender_set_layoff() -> None:
    dw, laid, _, _ = defender_deadwood(H("9s 2c"), H("9c 9d 9h"), 0)
    assert (dw, laid) == (2, H("9s"))


def test_defender_layoff_from_both_ends() -> None:
    dw, laid, _, _ = defender_deadwood(H("2d 3d 7d 8d Qc"), 0, H("4d 5d 6d"))
    assert (dw, laid) == (10, H("2d 3d 7d 8d"))


def test_defender_gap_card_between_two_blocks_laid_off_once() -> None:
    # Blocks A-3 and 5-7 of hearts: 4h fits both and goes once; 8h then 9h chain on 5-7.
    dw, laid, _, _ = defender_deadwood(H("4h 8h 9h Tc"), 0, H("Ah 2h 3h 5h 6h 7h"))
    assert (dw, laid) == (10, H("4h 8h 9h"))


def test_defender_set_takes_its_fourth_card_only() -> None:
    dw, laid, _, _ = defender_deadwood(H("5s"), H("5c 5d 5h"), 0)
    assert (dw, laid) == (0, H("5s"))
    dw, laid, _, _ = defender_deadwood(H("6s"), H("5c 5d 5h 5s"), 0)
    assert (dw, laid) == (6, 0)


def _knocker_and_defender(rng: np.random.Generator) -> tuple[int, int]:
    knocker = 0
    for _ in range(int(rng.integers(1, 4))):  # 1-3 real melds
        m = ref.MELDS[int(rng.integers(len(ref.MELDS)))]
        if m & knocker == 0 and bin(knocker | m).count("1") <= 10:
            knocker |= m
    knocker |= _draw(rng, [c for c in range(52) if not (knocker >> c) & 1], 10 - bin(knocker).count("1"))
    # Defender: some cards near the knocker's cards (so layoffs happen), the rest anywhere.
    near = {s * 13 + c % 13 for c in ref.cards_in(knocker) for s in range(4)}
    near |= {c + d for c in ref.cards_in(knocker) for d in (-2, -1, 1, 2) if (c + d) // 13 == c // 13 and c + d >= 0}
    near_free = sorted(c for c in near if not (knocker >> c) & 1)
    defender = _draw(rng, near_free, min(int(rng.integers(2, 8)), len(near_free)))
    rest = [c for c in range(52) if not ((knocker | defender) >> c) & 1]
    defender |= _draw(rng, rest, 10 - bin(defender).count("1"))
    return knocker, defender


def test_defender_deadwood_matches_brute_force_layoffs() -> None:
    rng = np.random.default_rng(7)
    n_laid = 0
    for _ in range(5000):
        knocker, defender = _knocker_and_defender(rng)
        sets, runs, _ = best_arrangement(knocker, knocker)
        _check_defender(defender, sets, runs)
        n_laid += defender_deadwood(defender, sets, runs)[1] != 0
    assert n_laid > 1000  # the generator really exercises layoffs


def test_defender_deadwood_on_dense_meld_shapes() -> None:
    rng = np.random.default_rng(8)
    for _ in range(500):  # knocker runs with one-card gaps, sets next to runs
        suit = int(rng.integers(4))
        lo = int(rng.integers(0, 6))
        runs = H("") | sum(1 << (suit * 13 + r) for r in range(lo, lo + 3))
        runs |= sum(1 << (suit * 13 + r) for r in range(lo + 4, lo + 7))
        rank = int(rng.integers(13))
        sets = sum(1 << (s * 13 + rank) for s in range(4) if s != suit)
        sets &= ~runs
        if bin(sets).count("1") < 3:
            sets = 0
        free = [c for c in range(52) if not ((sets | runs) >> c) & 1]
        near = [c for c in free if c // 13 == suit or c % 13 == rank]
        defender = _draw(rng, near, min(6, len(near)))
        defender |= _draw(rng, [c for c in free if not (defender >> c) & 1], 10 - bin(defender).count("1"))
        _check_defender(defender, sets, runs)


# --- in_any_meld ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hand, card, expected",
    [
        ("7c 7d", "7h", True),  # makes a set
        ("7c Kd", "7h", False),
        ("5h 6h", "7h", True),  # top of a run
        ("5h 7h", "6h", True),  # middle of a run
        ("8h 9h", "7h", True),  # bottom of a run
        ("5h 6c", "7h", False),
        ("Qh Kh", "Ah", False),  # no Q-K-A
        ("Kh 2h", "Ah", False),  # no K-A-2
        ("2h 3h", "Ah", True),  # A-2-3
        ("Jc Qc", "Kc", True),
        ("Kc", "Ad", False),  # no run across suits
        ("", "5s", False),
        ("5h 6h 7h", "9h", False),  # next to a run, but not in one
        ("5h 6h 7h", "7h", True),  # already held and in a run
    ],
)
def test_in_any_meld_cases(hand: str, card: str, expected: bool) -> None:
    assert in_any_meld(H(hand), H(card).bit_length() - 1) is expected


def test_in_any_meld_matches_reference() -> None:
    rng = np.random.default_rng(9)
    hands = np.concatenate([random_hands(1000, 10, 21), dense_hands(1000, 10, 22)])
    for hand in hands.tolist():
        for c in rng.choice(52, size=10, replace=False).tolist():
            assert in_any_meld(hand, c) == ref.in_any_meld(hand, c), (hand, c)


# --- known statistics ----------------------------------------------------------------------------------


def test_random_deal_deadwood_mean_and_std() -> None:
    dw = _deadwood_batch(random_hands(200_000, 10, 31))
    assert abs(dw.mean() - 56.6) <= 0.2
    assert abs(dw.std() - 13.8) <= 0.2


def test_module_exports_constants() -> None:
    assert melds.NO_CARD_DEADWOOD == 1000
    assert melds.RUN_DEADWOOD.shape == (8192,) and melds.RUN_DEADWOOD[0b111] == 0
    assert melds.RUN_DEADWOOD[0b1011] == 1 + 2 + 4
