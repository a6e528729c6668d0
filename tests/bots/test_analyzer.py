"""The shared rollout kernel (bots/rollout.py): the analysis grades with monte-carlo's policy; the settings work."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.layout import G_SIZE
from arena.engine.rng import RNG_WORDS, new_rng, seed_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import begin_game, begin_hand, new_state
from arena.settings.rules import load_rules
from bots import analyzer, rollout
from bots import monte_carlo as mc

RULES = rules_array(load_rules("standard"))
MC_PARAMS = np.array(list(mc.PARAMS.values()), dtype=np.float64)


def dealt(seed: int) -> np.ndarray:
    st = new_state()
    rngs = [new_rng(seed), new_rng(seed + 1)]
    mems = [np.zeros(1), np.zeros(1)]
    begin_game(st, RULES, seed, rngs[0], rngs[1], mems[0], mems[1], np.zeros(G_SIZE, dtype=np.int64))
    begin_hand(st, RULES, seed, np.zeros(RNG_WORDS, dtype=np.uint64))
    return st


def play(rollout, st, seed, me, params):
    st = st.copy()
    rng = np.empty(RNG_WORDS, dtype=np.uint64)
    seed_rng(rng, seed)
    rollout(st, RULES, rng, me, params)
    return st, rng


def policy(**over: float) -> np.ndarray:
    d = {**rollout.POLICY, **over}
    return np.array(list(d.values()), dtype=np.float64)


def test_the_analysis_rolls_out_with_monte_carlos_policy():
    # arena analyze grades with the analyzer's defaults; monte-carlo searches with its own rollout settings.
    # Both are one kernel (bots/rollout.py); the analysis' default policy is monte-carlo's.
    mc_policy = rollout.monte_carlo_policy(
        MC_PARAMS[list(mc.PARAMS).index("rollout")],
        MC_PARAMS[list(mc.PARAMS).index("rollout_take")],
        MC_PARAMS[list(mc.PARAMS).index("gin_at") :],
        np.empty(len(rollout.POLICY)),
    )
    assert list(analyzer.PARAMS)[3:] == list(rollout.POLICY)
    assert np.array_equal(analyzer.ROLLOUT_PARAMS[3:], mc_policy)
    assert mc_policy[rollout.MY_KNOCK] == 2.0 and mc_policy[rollout.OPP_KNOCK] == 0.0
    assert mc_policy[rollout.MY_TAKE] == 2.0 and mc_policy[rollout.OPP_TAKE] == 0.0


def test_other_rollout_settings_play_other_hands():
    # Knocking at the first chance, taking any pile card that lowers the deadwood and safe discards change games.
    for over in ({"my_knock": 0.0}, {"opp_take": 1.0}, {"my_take": 1.0}, {"opp_safe": 1.0}, {"opp_knock": 1.0}):
        differ = sum(
            not np.array_equal(
                play(rollout.rollout, dealt(s), 7 + s, 0, policy(**over))[0],
                play(rollout.rollout, dealt(s), 7 + s, 0, policy())[0],
            )
            for s in range(60)
        )
        assert differ >= 5, over


@pytest.mark.parametrize("setting", ["knock", "take"])
def test_the_marjj_style_modes_play_other_hands_than_the_simpler_ones(setting):
    # knock 2: early knocks, then the schedule (1 is the schedule alone, 0 at once); take 2: a melding card
    # that lowers the deadwood (1: any card that lowers it, 0: any melding card).
    for simpler in (0.0, 1.0):
        differ = sum(
            not np.array_equal(
                play(rollout.rollout, dealt(s), 7 + s, 0, policy(**{f"my_{setting}": 2.0}))[0],
                play(rollout.rollout, dealt(s), 7 + s, 0, policy(**{f"my_{setting}": simpler}))[0],
            )
            for s in range(60)
        )
        assert differ >= 3, (setting, simpler, differ)


@pytest.mark.parametrize("setting", ["knock", "take", "safe"])
def test_my_and_opp_settings_apply_to_the_searching_seat_and_to_the_other(setting):
    # With the knock rules alike for both seats, my_X for seat 0 plays exactly as opp_X when seat 1 searches.
    even = {"my_knock": 0.0, "opp_knock": 0.0, "my_take": 0.0, "opp_take": 0.0}
    mine = policy(**{**even, f"my_{setting}": 1.0})
    theirs = policy(**{**even, f"opp_{setting}": 1.0})
    changed = 0
    for s in range(40):
        a, rng_a = play(rollout.rollout, dealt(s), 3 + s, 0, mine)
        b, rng_b = play(rollout.rollout, dealt(s), 3 + s, 1, theirs)
        assert np.array_equal(a, b), (setting, s)
        assert np.array_equal(rng_a, rng_b), (setting, s)
        changed += not np.array_equal(a, play(rollout.rollout, dealt(s), 3 + s, 0, policy(**even))[0])
    assert changed >= 3, setting  # the setting does something


def card(rank: int, suit: int) -> int:
    return suit * 13 + rank - 1


def bits(*cards: int) -> np.int64:
    return np.int64(sum(1 << c for c in cards))


def test_a_safe_discard_avoids_the_neighbours_of_shown_cards_within_the_slack():
    # A-2-3, three 5s, 7-8-9 melded; the king (least deadwood left: 9) sits next to the queen the other seat took.
    melded = [card(1, 0), card(2, 0), card(3, 0), card(5, 0), card(5, 1), card(5, 2), card(7, 1), card(8, 1)]
    hand = bits(*melded, card(9, 1), card(13, 3), card(9, 3))
    shown = bits(card(12, 3))
    rng = np.empty(RNG_WORDS, dtype=np.uint64)
    seed_rng(rng, 5)
    king, nine = card(13, 3), card(9, 3)
    assert rollout.safe_discard(hand, hand, shown, king, 9, 5.0, rng) == nine  # 10 left: within 5 points
    assert rollout.safe_discard(hand, hand, shown, king, 9, 0.0, rng) == king  # not within 0
    assert rollout.safe_discard(hand, hand, np.int64(0), king, 9, 5.0, rng) == king  # nothing shown


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("samples", 0.0),
        ("my_knock", 0.5),
        ("opp_take", 3.0),
        ("my_knock", 1.5),
        ("knock_turns", 31.0),
        ("my_safe", -1.0),
        ("safe_slack", -1.0),
        ("knock_at", 11.0),
        ("relax_at", 40.0),
    ],
)
def test_parameters_out_of_range_are_named(key, value):
    d = dict(analyzer.PARAMS)
    d[key] = value
    with pytest.raises(ValueError, match=key):
        analyzer.validate_params(d)


def test_neighbours_are_the_same_rank_and_two_ranks_either_side_in_the_suit():
    c = 13 * 2 + 1  # 2 of hearts
    got = rollout.neighbours(np.int64(1) << c)
    want = sum(1 << (13 * s + 1) for s in (0, 1, 3)) + (1 << (13 * 2 + 0)) + (1 << (13 * 2 + 2)) + (1 << (13 * 2 + 3))
    assert got == want
