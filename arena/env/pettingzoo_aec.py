"""PettingZoo: Gin Arena as an AEC environment of two agents with action masks.

``env(rules="standard", episode="game", reward="win")`` (or
:class:`GinArenaAEC`) seats ``player_0`` and ``player_1`` at one table
(``rules``: a preset name or rules file, a :class:`~arena.settings.rules.Rules`
or a mapping of settings, as the Gymnasium env takes them).  Each agent
observes a dict: ``"observation"``, the engine's observation of its seat
(``OBS_SIZE`` float32, built from its view alone), and ``"action_mask"``
(``NUM_ACTIONS`` int8, 1 = legal), the ids of :mod:`arena.engine.actions`.

* ``reset(seed=s)`` deals game ``s`` exactly as the arena deals it (first
  dealer and every hand); later resets without a seed play the next games
  of a sequence drawn from the first seed.
* ``episode="game"`` (the default) plays hands until a player reaches the
  target; ``"hand"`` makes each hand an episode, and a reset without a seed
  deals the game's next hand (scores carried) until the game is over; after
  a hand left unfinished, it begins a new game.
* ``reward="win"`` (the default) pays +1/-1 at the end of the episode (0
  when nobody wins: a dead or capped hand, the hand cap); ``"points"`` pays
  each hand's points as they are scored (own minus the opponent's).
* An illegal or out-of-range action raises ``ValueError`` naming the
  action, the agent and the legal ones; the state is unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from arena.engine import actions as ids
from arena.engine.cards import card_str
from arena.engine.layout import (
    G_SIZE,
    G_WINNER,
    OUTCOME_NAMES,
    PH_DONE,
    S_CUR,
    S_HAND,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SCORE,
    V_SIZE,
)
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, end_hand, new_state, winner_of_hand
from arena.env.games import EPISODES, REWARDS, check_seed, resolve_rules
from arena.settings.rules import Rules

AGENTS = ("player_0", "player_1")


def env(**kwargs: Any) -> GinArenaAEC:
    """The AEC environment (PettingZoo's ``env()`` convention)."""
    return GinArenaAEC(**kwargs)


class GinArenaAEC(AECEnv):
    """Two agents at one Gin Arena table; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "gin_arena_v0", "is_parallelizable": False}

    def __init__(
        self,
        rules: str | Rules | Mapping[str, Any] = "standard",
        episode: str = "game",
        reward: str = "win",
        render_mode: str | None = None,
    ):
        super().__init__()
        if episode not in EPISODES:
            raise ValueError(f"episode: {episode!r} is not one of {', '.join(EPISODES)}")
        if reward not in REWARDS:
            raise ValueError(f"reward: {reward!r} is not one of {', '.join(REWARDS)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: {render_mode!r} is not one of {', '.join(self.metadata['render_modes'])}")
        self.rules = resolve_rules(rules)
        self.episode, self.reward, self.render_mode = episode, reward, render_mode
        self.possible_agents = list(AGENTS)
        self._r = rules_array(self.rules)
        self._obs_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, 1.0, (ids.OBS_SIZE,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (ids.NUM_ACTIONS,), np.int8),
            }
        )
        self._act_space = gymnasium.spaces.Discrete(ids.NUM_ACTIONS)
        self._st = new_state()
        self._row = np.zeros(G_SIZE, dtype=np.int64)
        self._rng = np.zeros(RNG_WORDS, dtype=np.uint64)
        self._view = np.zeros(V_SIZE, dtype=np.int64)
        self._seeds: np.random.Generator | None = None
        self.game_seed = -1
        self._game_on = False  # a game is under way whose next hand a hand episode's reset deals

    @property
    def game_running(self) -> bool:
        """Whether a game is under way whose next hand a seedless ``reset()`` of a hand episode deals."""
        return self._game_on

    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._act_space

    # --- episodes ---------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Begin an episode (see the module docstring).

        The env takes no ``options``.  The Gymnasium envs refuse them; here they are ignored with one
        warning naming them, not refused: PettingZoo's own ``api_test`` resets with ``options={"options": 1}``
        to check that ``reset`` takes the argument, so an AEC env must accept any, but silence hid a
        caller's option that does nothing."""
        if options:
            warnings.warn(
                f"options: GinArenaAEC takes no reset options; ignored {', '.join(map(repr, options))}",
                UserWarning,
                stacklevel=2,
            )
        if seed is None and self.episode == "hand" and self._game_on:
            begin_hand(self._st, self._r, self.game_seed, self._rng)  # the game's next hand
            self._begin_episode()
            return
        if seed is not None:
            self.game_seed = check_seed(seed)
            self._seeds, _ = seeding.np_random(self.game_seed)  # a python int: Gymnasium's seeding refuses numpy's
        else:
            if self._seeds is None:
                self._seeds, _ = seeding.np_random(None)
            self.game_seed = int(self._seeds.integers(2**62))
        z = np.zeros(RNG_WORDS, dtype=np.uint64)
        begin_game(self._st, self._r, self.game_seed, z, z.copy(), np.zeros(1), np.zeros(1), self._row)
        begin_hand(self._st, self._r, self.game_seed, self._rng)
        self._begin_episode()

    def _begin_episode(self) -> None:
        self._game_on = False  # until the hand ends with the game not over: a reset mid-hand begins a new game
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self.agent_selection = AGENTS[int(self._st[S_CUR])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation and legal-action mask; before the first reset, or for an agent that is not
        at this table, one clear line (they were an AttributeError and ``tuple.index``'s ValueError)."""
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r} (the agents are {', '.join(AGENTS)})")
        if getattr(self, "agent_selection", None) is None:
            raise gymnasium.error.ResetNeeded("call reset() before observe()")
        seat = AGENTS.index(agent)
        obs = np.zeros(ids.OBS_SIZE, dtype=np.float32)
        mask = np.zeros(ids.NUM_ACTIONS, dtype=np.int8)
        legal = ids.observe(self._st, self._r, seat, self._view, obs)
        if not self.terminations.get(agent, False):
            ids.fill_mask(legal, mask)
        return {"observation": obs, "action_mask": mask}

    def _live_agent(self, what: str) -> str:
        """The agent to act, or one clear line when there is none (before the first reset, or once every
        agent has been stepped out of a finished episode)."""
        agent = getattr(self, "agent_selection", None)
        if agent is None:
            raise gymnasium.error.ResetNeeded(f"call reset() before {what}")
        if agent not in self.terminations:
            raise gymnasium.error.ResetNeeded(
                f"the episode is over and every agent is done: call reset() before {what}"
            )
        return agent

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._live_agent("last()")
        return super().last(observe)

    def step(self, action: Any) -> None:
        agent = self._live_agent("step()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = AGENTS.index(agent)
        legal = int(ids.legal_actions(self._st, self._r, seat))
        a = _as_action(action)
        if a is None or not 0 <= a < ids.NUM_ACTIONS or not (legal >> a) & 1:
            shown = ids.action_name(a) if a is not None else repr(action)
            names = ", ".join(f"{x} ({ids.action_name(x)})" for x in ids.legal_ids(legal))
            raise ValueError(f"illegal action {shown} for {agent}; legal: {names}")
        self._cumulative_rewards[agent] = 0.0  # last() gives what came since the agent's own last step
        self.infos[agent] = {}  # and so does its info: a hand's result is shown to each agent once
        self._clear_rewards()
        apply_action(self._st, self._r, int(ids.answer_of_action(int(self._st[S_PHASE]), a)))
        if self._st[S_PHASE] == PH_DONE:
            self._hand_over()
        if not self.terminations[AGENTS[0]]:
            self.agent_selection = AGENTS[int(self._st[S_CUR])]
        self._accumulate_rewards()

    def _hand_over(self) -> None:
        st = self._st
        pts = [int(st[S_POINTS]), int(st[S_POINTS + 1])]
        if self.reward == "points":
            for p, a in enumerate(AGENTS):
                self.rewards[a] = float(pts[p] - pts[1 - p])
        for a in AGENTS:
            self.infos[a] = {"hand_outcome": OUTCOME_NAMES[int(st[S_OUTCOME])], "hand_points": tuple(pts)}
        winner = winner_of_hand(st)  # a knock tied without undercut is the knocker's, at 0 points
        game_over = bool(end_hand(st, self._r, self._row))
        if self.episode == "hand":
            self._game_on = not game_over
            self._end(winner)
        elif game_over:
            self._game_on = False
            self._end(int(self._row[G_WINNER]))
        else:
            begin_hand(st, self._r, self.game_seed, self._rng)

    def _end(self, winner: int) -> None:
        if self.reward == "win":
            for p, a in enumerate(AGENTS):
                self.rewards[a] = 0.0 if winner < 0 else (1.0 if p == winner else -1.0)
        for a in AGENTS:
            self.terminations[a] = True

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        if getattr(self, "agent_selection", None) is None:  # as step(), last() and observe() say it
            raise gymnasium.error.ResetNeeded("call reset() before render()")
        st = self._st
        pile = " ".join(card_str(int(c)) for c in st[S_PILE : S_PILE + st[S_PILE_N]])
        hands = [" ".join(card_str(c) for c in range(52) if (int(st[S_HAND + p]) >> c) & 1) for p in (0, 1)]
        return (
            f"{AGENTS[0]}: {hands[0]}\n{AGENTS[1]}: {hands[1]}\npile: {pile}\n"
            f"scores {int(st[S_SCORE])}-{int(st[S_SCORE + 1])}; to act: {self.agent_selection}"
        )

    def close(self) -> None:
        pass


def _as_action(action: Any) -> int | None:
    """An action as an int, or None when it is not an integer (a float, a string, an array of several)."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    if isinstance(action, (int, np.integer)):
        return int(action)
    return None
