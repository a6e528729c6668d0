"""The analyzer bot's rollout: its defaults are monte-carlo's rollout, its other settings are checked."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.layout import G_SIZE, S_SIZE
from arena.engine.rng import RNG_WORDS, new_rng, seed_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import begin_game, begin_hand, new_state
from arena.settings.rules import load_rules
from bots import analyzer
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


def test_the_default_rollout_is_monte_carlos_move_for_move():
    # The analysis' numbers (and the README's checks) were measured with monte-carlo's rollout.
    for seed in range(60):
        st = dealt(seed)
        me = seed % 2
        a, rng_a = play(analyzer.rollout, st, 1000 + seed, me, analyzer.ROLLOUT_PARAMS)
        m, rng_m = play(mc.rollout, st, 1000 + seed, me, MC_PARAMS)
        assert a.shape == (S_SIZE,)
        assert np.array_equal(a, m), seed  # same end state: same moves
        assert np.array_equal(rng_a, rng_m), seed  # and the same random numbers used


def test_other_rollout_settings_play_other_hands():
    # Knocking at the first chance and taking any pile card that lowers the deadwood change the games.
    params = analyzer.ROLLOUT_PARAMS.copy()
    names = list(analyzer.PARAMS)
    params[names.index("my_knock")] = 0.0
    params[names.index("take")] = 1.0
    params[names.index("safe")] = 1.0
    differ = sum(
        not np.array_equal(
            play(analyzer.rollout, dealt(s), 7 + s, 0, params)[0],
            play(analyzer.rollout, dealt(s), 7 + s, 0, analyzer.ROLLOUT_PARAMS)[0],
        )
        for s in range(60)
    )
    assert differ >= 10


@pytest.mark.parametrize(
    ("key", "value"),
    [("samples", 0.0), ("my_knock", 0.5), ("take", 2.0), ("safe", -1.0), ("safe_slack", -1.0), ("knock_at", 11.0)],
)
def test_parameters_out_of_range_are_named(key, value):
    d = dict(analyzer.PARAMS)
    d[key] = value
    with pytest.raises(ValueError, match=key):
        analyzer.validate_params(d)


def test_neighbours_are_the_same_rank_and_two_ranks_either_side_in_the_suit():
    c = 13 * 2 + 1  # 2 of hearts
    got = analyzer.neighbours(np.int64(1) << c)
    want = sum(1 << (13 * s + 1) for s in (0, 1, 3)) + (1 << (13 * 2 + 0)) + (1 << (13 * 2 + 2)) + (1 << (13 * 2 + 3))
    assert got == want
