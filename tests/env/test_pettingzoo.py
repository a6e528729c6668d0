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


def test_stepping_without_a_live_agent_is_one_line_saying_reset():
    """Before the first reset, and once both agents were stepped out of a finished episode, there is no
    agent to act: PettingZoo's base class would fail on a missing attribute or dict key."""
    import gymnasium

    fresh = env()
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"^call reset\(\) before step\(\)$"):
        fresh.step(52)
    e = env(episode="hand")
    e.reset(seed=5)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.agents == []
    for call in (lambda: e.step(52), lambda: e.step(None), e.last):
        with pytest.raises(gymnasium.error.ResetNeeded, match="the episode is over and every agent is done"):
            call()
    e.reset(seed=5)  # and a reset starts the next one
    assert e.agents == ["player_0", "player_1"]


def test_observing_before_reset_or_an_unknown_agent_is_one_clear_line():
    """They were an AttributeError ('terminations') and tuple.index's 'x not in tuple'."""
    import gymnasium

    e = env()
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"^call reset\(\) before observe\(\)$"):
        e.observe("player_0")
    e.reset(seed=5)
    with pytest.raises(ValueError, match=r"^unknown agent 'player_2' \(the agents are player_0, player_1\)$"):
        e.observe("player_2")
    assert e.observe("player_1")["observation"].shape == (378,)


@pytest.mark.parametrize("seed", [-1, 2**63, "7"])
def test_a_seed_out_of_range_is_one_value_error(seed):
    with pytest.raises(ValueError, match=r"^seed must be an integer 0\.\.9223372036854775807 or None"):
        env().reset(seed=seed)


def test_a_numpy_integer_seed_deals_the_same_game_as_the_python_int():
    """A seed from numpy (``rng.integers``, an array element) was Gymnasium's 'Seed must be a python integer'
    from the seeding call, after check_seed had accepted it."""
    a, b = env(), env()
    a.reset(seed=np.int64(17))
    b.reset(seed=17)
    assert a.game_seed == b.game_seed == 17
    assert np.array_equal(a.observe("player_0")["observation"], b.observe("player_0")["observation"])
    a.reset()
    b.reset()  # and the seedless resets that follow draw the same games
    assert a.game_seed == b.game_seed


def test_a_hands_result_is_in_each_agents_info_once_not_through_the_next_hands():
    """``hand_outcome`` / ``hand_points`` stayed in every agent's info for the rest of the game, so a reader of
    ``last()`` could not tell when a hand ended: each agent now sees a hand's result once, at its first
    ``last()`` after the hand, and its info is cleared when it acts."""
    e = env(reward="points")
    e.reset(seed=11)
    rng = np.random.default_rng(0)
    seen = dict.fromkeys(e.possible_agents, 0)
    hands = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        seen[agent] += "hand_outcome" in info
        if term or trunc:
            e.step(None)
            continue
        mask = obs["action_mask"]
        e.step(55 if mask[55] else int(rng.choice(np.flatnonzero(mask))))  # knock when it may: hands end
        hands += "hand_outcome" in e.infos[agent]  # the hand ended on this agent's action
    assert hands > 3
    assert seen == dict.fromkeys(e.possible_agents, hands)


def test_a_seedless_reset_after_an_abandoned_hand_does_not_deal_that_hand_again():
    """With ``episode="hand"``, a ``reset()`` in the middle of a hand dealt the same hand again (its number
    was not yet advanced): a loop that cuts episodes at a step limit replayed one deal forever.  An abandoned
    hand is followed by a new game, as in the Gymnasium env."""
    e = env(episode="hand")
    e.reset(seed=5)
    first = {a: e.observe(a)["observation"].copy() for a in e.possible_agents}
    for _ in range(6):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    assert not e.game_running  # no finished hand: nothing to continue
    e.reset()
    assert e.game_seed != 5
    assert not all(np.array_equal(first[a], e.observe(a)["observation"]) for a in e.possible_agents)


def test_a_knock_tied_without_undercut_is_the_knockers_hand_for_the_win_reward():
    """With ``undercut_on_tie`` off, a knock the defender ties scores 0 points but is the knocker's hand (the
    engine's rule, and the Gymnasium env's +1): the win reward of a hand episode was read from the points and
    paid nobody."""
    from arena.engine.melds import deadwood

    e = env(episode="hand", rules={"undercut_on_tie": False})
    e.reset(seed=41)  # this driver's seed 41 ends in such a knock
    rng = np.random.default_rng(41)
    knocker, end, paid = None, None, {}
    for agent in e.agent_iter():
        obs, reward, term, _, info = e.last()
        if term:
            end = (info["hand_outcome"], info["hand_points"])
            paid[agent] = reward
            e.step(None)
            continue
        mask = obs["action_mask"]
        if mask[55]:
            knocker, a = agent, 55
        elif mask[:52].any():  # the discard that leaves the least deadwood
            hand = sum(1 << int(c) for c in np.flatnonzero(obs["observation"][:52]))
            a = int(min(np.flatnonzero(mask[:52]), key=lambda c: deadwood(hand & ~(1 << int(c)))))
        else:
            a = int(rng.choice(np.flatnonzero(mask)))
        e.step(a)
    assert end == ("knock", (0, 0)) and knocker is not None
    assert paid == {knocker: 1.0, next(a for a in e.possible_agents if a != knocker): -1.0}


def test_rendering_before_reset_is_the_one_line_stepping_before_reset_is():
    """``render()`` before the first reset was an AttributeError on the state's missing agent."""
    import gymnasium

    e = env(render_mode="ansi")
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"^call reset\(\) before render\(\)$"):
        e.render()
    e.reset(seed=1)
    assert "to act: player_" in e.render()


def test_reset_options_are_named_in_a_warning_not_ignored_silently():
    """The AEC env takes no reset options; PettingZoo's api_test resets with some, so they cannot be refused
    as the Gymnasium envs refuse them, but they are no longer dropped without a word."""
    e = env()
    with pytest.warns(UserWarning, match=r"^options: GinArenaAEC takes no reset options; ignored 'target'$"):
        e.reset(seed=3, options={"target": 10})
    assert e.game_seed == 3
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.reset(seed=3, options={})
        e.reset(seed=3)
