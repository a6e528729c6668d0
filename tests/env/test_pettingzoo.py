"""The PettingZoo AEC env under PettingZoo's own checkers, and what it promises beyond them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from arena.env.pettingzoo_aec import GinArenaAEC, env  # noqa: E402


@pytest.mark.parametrize("kwargs", [{}, {"episode": "hand", "reward": "points"}, {"rules": "oklahoma"}])
def test_pettingzoo_api_test_passes(kwargs):
    api_test(env(**kwargs), num_cycles=300)


def test_pettingzoo_seed_test_passes():
    seed_test(lambda: env(reward="points"), num_cycles=300)


def _play(e: GinArenaAEC, seed: int) -> tuple[list[int], dict[str, float]]:
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    moves = []
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        moves.append(a)
        e.step(a)
    return moves, totals


def test_a_seed_fixes_the_game_and_the_game_is_zero_sum():
    e1, e2 = env(reward="points"), env(reward="points")
    m1, t1 = _play(e1, 17)
    m2, t2 = _play(e2, 17)
    assert m1 == m2 and t1 == t2
    assert t1["player_0"] == -t1["player_1"]
    assert _play(e1, 18)[0] != m1


def test_whole_game_pays_the_winner():
    e = env()
    _, totals = _play(e, 3)
    assert sorted(totals.values()) == [-1.0, 1.0]


def test_hand_episodes_continue_the_game_until_it_is_over():
    e = env(episode="hand", reward="points")
    e.reset(seed=5)
    first_dealer_obs = e.observe("player_0")["observation"].copy()
    rng = np.random.default_rng(0)
    hands = 0
    while True:
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        hands += 1
        if not e.game_running:
            break
        e.reset()  # the next hand of the same game
    assert hands > 1
    assert not np.array_equal(first_dealer_obs, e.observe("player_0")["observation"])


def test_illegal_action_is_one_value_error_and_changes_nothing():
    e = env()
    e.reset(seed=1)
    agent = e.agent_selection
    before = e.observe(agent)["observation"].copy()
    for bad in (3 if not e.observe(agent)["action_mask"][3] else 55, 99, -1, 1.5, "52"):
        with pytest.raises(ValueError, match=f"illegal action .* for {agent}; legal: 52 \\(take\\), 54 \\(pass\\)"):
            e.step(bad)
    assert np.array_equal(before, e.observe(agent)["observation"]) and e.agent_selection == agent
