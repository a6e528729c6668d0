"""Every hand the game's score counts reaches the agent's rewards, in every env.

An opponent that knocks early (``early-knock``, ``simple``) often ends a hand
before the agent is asked anything in it: at a reset, or in the episode that
follows the one a step ended.  Those hands are the opponent's, so a reward
that left them out was biased in the agent's favour; with ``reward="points"``
the rewards of a game must add up to its score difference exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from arena.engine.layout import G_SCORE  # noqa: E402
from arena.env.gym import GinEnv, VectorGinEnv  # noqa: E402

OPPONENTS = ["early-knock", "simple"]
#: Games whose first hand either opponent ends with a knock on its first turn, before the agent is asked.
FIRST_TURN_KNOCKS = [189, 1062, 1721, 1745, 2402, 3384, 3509]
SEEDS = [*FIRST_TURN_KNOCKS, *range(120)]


def knocking(mask: np.ndarray, rng: np.random.Generator) -> int:
    """Knock or declare big gin whenever it may, else a random legal action: hands end often."""
    for a in (55, 56):
        if mask[a]:
            return a
    return int(rng.choice(np.flatnonzero(mask)))


def score_difference(row: np.ndarray) -> float:
    return float(row[G_SCORE] - row[G_SCORE + 1])


def play_games(env: GinEnv, seeds: list[int]) -> tuple[list[tuple[float, float]], list[float], int]:
    """Per seed (a game from ``reset(seed)`` to its end, through the hands of ``episode="hand"``): the rewards'
    sum and the game's score difference; every reward in order; and how many hands were carried."""
    games, trace, carried = [], [], 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        _, info = env.reset(seed=seed)
        assert "unseen_games" not in info and "opponent_forfeits" not in info
        total = 0.0
        while True:
            _, r, term, _, info = env.step(knocking(info["action_mask"], rng))
            total += r
            trace.append(r)
            carried += info.get("carried_hands", 0)
            assert "unseen_games" not in info and "opponent_forfeits" not in info
            if term and info["game_over"]:
                break
            if term:
                _, info = env.reset()  # the game's next hand
        games.append((total, score_difference(env.last_game_row)))
    return games, trace, carried


@pytest.mark.parametrize("episode", ["game", "hand"])
@pytest.mark.parametrize("opponent", OPPONENTS)
def test_the_points_rewards_of_every_game_add_up_to_its_score_difference(opponent, episode):
    env = GinEnv(opponent=opponent, episode=episode, reward="points")
    games, trace, carried = play_games(env, SEEDS)
    assert [total for total, _ in games] == [diff for _, diff in games]
    assert carried > 0  # hands did end before the agent's first decision in them
    again = play_games(GinEnv(opponent=opponent, episode=episode, reward="points"), SEEDS)
    assert again[1] == trace  # a seed still fixes every reward


@pytest.mark.parametrize("episode", ["game", "hand"])
@pytest.mark.parametrize("opponent", OPPONENTS)
def test_the_vector_envs_points_rewards_of_every_game_add_up_to_its_score_difference(opponent, episode):
    def run() -> tuple[np.ndarray, int, int]:
        n = 24
        vec = VectorGinEnv(n, opponent=opponent, episode=episode, reward="points")
        rng = np.random.default_rng(7)
        _, info = vec.reset(seed=[*FIRST_TURN_KNOCKS, *range(500, 500 + n - len(FIRST_TURN_KNOCKS))])
        assert "unseen_games" not in info and "opponent_forfeits" not in info
        totals = np.zeros(n)
        rewards, games, carried = [], 0, 0
        for _ in range(1500):
            actions = np.array([knocking(m, rng) for m in info["action_mask"]])
            _, r, _, _, info = vec.step(actions)
            assert "unseen_games" not in info and "opponent_forfeits" not in info
            rewards.append(r)
            totals += r
            if "carried_hands" in info:
                carried += int(info["carried_hands"].sum())
                assert (info["carried_reward"][info["carried_hands"] == 0] == 0).all()
            for i in np.flatnonzero(info.get("game_over", np.zeros(n, bool))):
                assert totals[i] == score_difference(vec.games.last_rows[i]), i
                totals[i] = 0.0
                games += 1
        return np.array(rewards), games, carried

    rewards, games, carried = run()
    assert games > 50 and carried > 0
    assert np.array_equal(run()[0], rewards)


@pytest.mark.parametrize("episode", ["game", "hand"])
def test_a_hand_ended_before_the_agents_first_decision_is_carried_into_its_next_reward(episode):
    """The first step after ``reset(seed=189)`` pays the opponent's first-turn knock of that game's first hand,
    and ``info`` says how much of the reward that is."""
    env = GinEnv(opponent="early-knock", episode=episode, reward="points")
    _, info = env.reset(seed=189)
    assert env.games.held_hands[0] == 1 and env.games.held[0] < 0
    held = float(env.games.held[0])
    _, r, term, _, info = env.step(int(info["action_mask"].argmax()))  # the upcard: no hand ends
    assert not term and r == held and info["carried_hands"] == 1 and info["carried_reward"] == held
    _, r, _, _, info = env.step(int(info["action_mask"].argmax()))
    assert "carried_hands" not in info


def test_the_pettingzoo_env_pays_every_hand_to_both_agents():
    """The AEC env asks both seats, so no hand ends unseen there; each agent's rewards over a game add up to
    its score difference as the Gymnasium envs' do."""
    pytest.importorskip("pettingzoo")
    from arena.env.pettingzoo_aec import env

    for episode in ("game", "hand"):
        e = env(episode=episode, reward="points")
        for seed in range(6):
            e.reset(seed=seed)
            rng = np.random.default_rng(seed)
            totals = dict.fromkeys(e.possible_agents, 0.0)
            while True:
                for agent in e.agent_iter():
                    obs, reward, term, trunc, _ = e.last()
                    totals[agent] += reward
                    e.step(None if term or trunc else knocking(obs["action_mask"], rng))
                if not e.game_running:
                    break
                e.reset()
            assert totals["player_0"] == score_difference(e._row) == -totals["player_1"]


def test_a_game_that_ends_before_the_agents_first_decision_is_counted_not_rewarded():
    """With a target of 10, the opponent's first-turn knock in game 189 ends the game before the agent is asked:
    no episode can report it, so ``reset()`` counts it in ``info["unseen_games"]`` and the agent plays the next
    game, whose rewards add up to its own score difference (nothing of the unseen game is carried into it)."""
    from arena.env.games import next_seed

    env = GinEnv(opponent="early-knock", rules={"target": 10}, reward="points")
    _, info = env.reset(seed=189)
    assert info["unseen_games"] == 1 and env.game_seed == next_seed(189)
    assert score_difference(env.skipped_game_row) < 0 and env.games.held_hands[0] == 0
    assert not env.last_game_row.any()  # the agent has played no game to its end yet
    rng = np.random.default_rng(0)
    total = 0.0
    while True:
        _, r, term, _, info = env.step(knocking(info["action_mask"], rng))
        total += r
        if term:
            break
    assert "unseen_games" not in info and total == score_difference(env.last_game_row)


def test_a_hand_that_ends_the_game_before_the_agent_is_asked_is_paid_by_the_step_that_ended_its_last_hand():
    """With ``episode="hand"`` and a low target, the opponent's first-turn knock in the hand after the agent's
    often ends the game: no later step of that game can pay it, so the step that ended the agent's last hand
    does (its ``game_over`` is True), and the rewards of every game the agent played in still add up.  That step
    can go on to end the next game too, before the agent is asked (``unseen_games``): ``last_rows`` is still the
    row of the agent's game, not that one's."""
    n = 64
    vec = VectorGinEnv(n, opponent="early-knock", rules={"target": 25}, episode="hand", reward="points")
    _, info = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    totals = np.zeros(n)
    games = paid_at_game_over = unseen_at_game_over = 0
    for _ in range(3000):
        _, r, _, _, info = vec.step(np.array([knocking(m, rng) for m in info["action_mask"]]))
        totals += r
        carried = info.get("carried_hands", np.zeros(n, np.int64))
        unseen = info.get("unseen_games", np.zeros(n, np.int64))
        for i in np.flatnonzero(info.get("game_over", np.zeros(n, bool))):
            paid_at_game_over += bool(carried[i])
            unseen_at_game_over += bool(unseen[i])
            assert totals[i] == score_difference(vec.games.last_rows[i]), i
            games += 1
            totals[i] = 0.0
    assert games > 1000 and paid_at_game_over > 0 and unseen_at_game_over > 0
