"""Gymnasium envs: one game (:class:`GinEnv`, ``gymnasium.make("gin_arena/Gin-v0")``) and many
(:class:`VectorGinEnv`, Gymnasium's ``VectorEnv``), both on :class:`arena.env.games.Games`.

The agent sits in seat ``seat`` against ``opponent`` (any compiled bot reference the arena
accepts: ``simple``, ``gin-chasing``, ``my_bot.py``, or a loaded :class:`~arena.botkit.bot.Bot`);
``rules`` is a preset, a rules file, a :class:`~arena.settings.rules.Rules` or a mapping of
settings.  An episode is a whole
game to the target (``episode="game"``) or one hand of it (``"hand"``: the next episode is the
game's next hand).  ``reward="win"``: +1 / -1 / 0 for winning / losing / neither, at the end of
the episode; ``"points"``: the points the agent scored in each finished hand minus the
opponent's (an undercut or a gin against it counts negative).

Observations are the engine's (:mod:`arena.engine.actions`): ``float32[378]``, with the
legal-action mask (``int8[58]``) in ``info["action_mask"]`` and, with ``mask_in_obs=True``, a
``Dict`` observation ``{"observation", "action_mask"}``.  An illegal action raises
:class:`ValueError` and changes nothing (``illegal="raise"``, the default); with
``illegal="penalty"`` it forfeits the game instead (recorded as the agent's forfeit, as a bot's
illegal move is in a tournament) and ends the episode with reward ``penalty``.

A hand the opponent ends before the agent is asked anything in it (a knock on its first turn, after a
reset or in the episode after one that ended) is counted in the game's score, so its reward is carried
into the agent's next reward (``info["carried_hands"]`` and ``info["carried_reward"]`` of that step say
how much of it is carried): with ``reward="points"`` the rewards of a game add up to its score
difference.  With ``episode="hand"`` such a hand cannot be an episode of its own; when it ends the game,
the step that ended the agent's last hand of that game pays it.

An opponent's illegal move forfeits its game too, and the agent wins it.  A game that ends before the
agent's first decision in it can end no episode, since an episode needs a decision of the agent: the
env plays on into the next game and counts such games in that ``reset()``'s or ``step()``'s ``info``
(an int; per env, an array, in the vector env): ``"opponent_forfeits"``, with a warning naming the
first, or ``"unseen_games"`` (a first hand that reaches the target).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arena.botkit.bot import Bot
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE, action_name, legal_ids
from arena.env.games import EV_CARRIED, EV_DONE, EV_FORFEIT, EV_UNSEEN, MAX_SEED, Games, check_seed
from arena.settings.rules import Rules


def _spaces(mask_in_obs: bool) -> tuple[spaces.Space[Any], spaces.Discrete]:
    box = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
    obs: spaces.Space[Any] = box
    if mask_in_obs:
        obs = spaces.Dict({"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
    return obs, spaces.Discrete(NUM_ACTIONS)


class GinEnv(gymnasium.Env[Any, np.int64]):
    """One game of Gin Rummy against a compiled opponent (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        opponent: str | Bot = "simple",
        rules: str | Rules | Mapping[str, Any] = "standard",
        episode: str = "game",
        reward: str = "win",
        seat: int = 0,
        mask_in_obs: bool = False,
        illegal: str = "raise",
        penalty: float = -1.0,
        render_mode: None = None,
    ) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (this env does not render), not {render_mode!r}")
        self.games = Games(
            1, opponent, rules, episode=episode, reward=reward, seat=seat, illegal=illegal, penalty=penalty
        )
        self.mask_in_obs = bool(mask_in_obs)
        self.observation_space, self.action_space = _spaces(self.mask_in_obs)
        self._action = np.zeros(1, dtype=np.int64)
        self._started = False
        self._ended = False

    @property
    def last_game_row(self) -> np.ndarray:
        """The engine's game row (``G_*`` slots) of the last game the agent played (made a decision in) that
        ended: on the step that ends a game, that game's row, even when the env went on into a game that ended
        before the agent's first decision in it (:attr:`skipped_game_row`)."""
        return self.games.last_rows[0].copy()

    @property
    def skipped_game_row(self) -> np.ndarray:
        """The engine's game row of the last game that ended before the agent's first decision in it (counted
        in ``info["opponent_forfeits"]`` or ``info["unseen_games"]``); zeros if none has."""
        return self.games.skipped_rows[0].copy()

    @property
    def game_seed(self) -> int:
        """The seed of the game being played (the arena's game seed)."""
        return int(self.games.seeds[0])

    def _obs(self, row: np.ndarray, mask: np.ndarray) -> Any:
        obs = row.copy()
        if self.mask_in_obs:
            return {"observation": obs, "action_mask": mask}
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Begin game ``seed`` (the arena's deal for that game seed); without a seed, the episode that follows
        the last one (the game's next hand, or the next game), or a game seeded from ``np_random``."""
        if options:  # refused, not ignored, as VectorGinEnv refuses them: a caller's intent must not vanish
            raise ValueError(f"options: GinEnv takes no reset options, not {', '.join(map(repr, options))}")
        if seed is not None:
            seed = check_seed(seed)  # a python int: Gymnasium's seeding refuses a numpy integer
        super().reset(seed=seed)
        g = self.games
        began = seed is not None or not self._ended  # else the step that ended the episode began this one
        if seed is not None:
            g.reset(np.array([seed], dtype=np.int64))
        elif not self._ended:  # first episode, or one abandoned mid-way: a new game
            fresh = int(self.np_random.integers(0, MAX_SEED)) if not self._started else None
            g.reset(np.array([fresh if fresh is not None else g.next_game_seed(0)], dtype=np.int64))
        # else: the step that ended the episode has already begun the next one (autoreset)
        self._started = True
        self._ended = False
        mask = g.masks[0].copy()
        info: dict[str, Any] = {"action_mask": mask}
        if began and g.opponent_forfeits[0]:
            info["opponent_forfeits"] = int(g.opponent_forfeits[0])
        if began and g.unseen_games[0]:
            info["unseen_games"] = int(g.unseen_games[0])
        return self._obs(g.obs[0], mask), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if self._ended:
            raise gymnasium.error.ResetNeeded("the episode is over: call reset() before step()")
        g = self.games
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer action id 0..{NUM_ACTIONS - 1}, not {action!r}")
        a = int(action)
        if not 0 <= a < NUM_ACTIONS:
            if g.illegal_mode == "raise":
                raise g.illegal(0, a)
            a = -1  # out of range: forfeits under illegal="penalty"
        self._action[0] = a
        g.step(self._action)
        events = g.events  # what the step did (its one env's): the arrays below are read only when it says so
        done = bool(events & EV_DONE)
        self._ended = done
        mask = np.zeros(NUM_ACTIONS, np.int8) if done else g.masks[0].copy()  # nothing is legal once it ended
        obs = self._obs(g.final_obs[0] if done else g.obs[0], mask)
        info: dict[str, Any] = {"action_mask": mask}
        if done:
            info["game_over"] = bool(g.game_over[0])  # the game ended too (always, with episode="game")
        if events & EV_CARRIED:
            info["carried_hands"] = int(g.carried_hands[0])
            info["carried_reward"] = float(g.carried[0])
        if events & EV_FORFEIT:
            info["opponent_forfeits"] = int(g.opponent_forfeits[0])
        if events & EV_UNSEEN:
            info["unseen_games"] = int(g.unseen_games[0])
        return obs, float(g.rewards[0]), done, False, info

    def legal_actions(self) -> list[int]:
        """The action ids legal now (none once the episode is over, as the mask says, until reset())."""
        return [] if self._ended else legal_ids(int(self.games.ids[0]))

    def describe(self, action: int) -> str:
        """An action id in words (``discard 7c``, ``knock``)."""
        return action_name(action)


class VectorGinEnv(VectorEnv[Any, np.ndarray, np.ndarray]):
    """``num_envs`` games stepped by one compiled call (Gymnasium ``VectorEnv``, same-step autoreset).

    ``step(actions)`` takes an int array of ``num_envs`` action ids and returns observations
    ``[n, 378]``, rewards, terminated, truncated (never set: every game ends by the rules) and
    ``info`` with ``action_mask`` ``[n, 58]``.  A game that ends is followed by the next at once:
    its last observation is ``info["final_obs"][i]`` where ``info["_final_obs"][i]`` (with ``mask_in_obs``,
    an object array of ``Dict`` observations, ``None`` elsewhere, as Gymnasium's ``SyncVectorEnv`` gives
    them).  ``copy=False``
    returns the env's own buffers (overwritten by the next step), saving a copy per step.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        opponent: str | Bot = "simple",
        rules: str | Rules | Mapping[str, Any] = "standard",
        episode: str = "game",
        reward: str = "win",
        seat: int = 0,
        mask_in_obs: bool = False,
        illegal: str = "raise",
        penalty: float = -1.0,
        copy: bool = True,
        render_mode: None = None,
    ) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (this env does not render), not {render_mode!r}")
        self.games = Games(
            num_envs, opponent, rules, episode=episode, reward=reward, seat=seat, illegal=illegal, penalty=penalty
        )
        self.num_envs = self.games.num_envs
        self.mask_in_obs = bool(mask_in_obs)
        self.copy = bool(copy)
        self.single_observation_space, self.single_action_space = _spaces(self.mask_in_obs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.truncated = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def _obs(self) -> Any:
        g = self.games
        if self.mask_in_obs:
            return {"observation": self._out(g.obs), "action_mask": self._out(g.masks)}
        return self._out(g.obs)

    def _final_obs(self) -> Any:
        """The last observations of the episodes that ended, in the observation space as Gymnasium's
        ``SyncVectorEnv`` of :class:`GinEnv` gives them: with ``mask_in_obs``, an object array of ``num_envs``
        ``Dict`` observations (no legal action: the episode is over), ``None`` where none ended; a bare
        ``[n, 378]`` array there was no observation of the ``Dict`` space at all."""
        g = self.games
        if not self.mask_in_obs:
            return self._out(g.final_obs)
        out = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(g.done):
            out[i] = {"observation": g.final_obs[i].copy(), "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
        return out

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Begin a game in every env: seeds ``seed + i`` (an int), one each (a sequence), or from ``np_random``.

        A seed also seeds ``np_random``, which picks the games of a later ``reset()`` without one: an int
        (numpy's too) as Gymnasium does, a sequence through numpy's ``SeedSequence`` of all its seeds (Gymnasium
        takes a python int only, and ``np_random`` was left unseeded, so the later games were anyone's).
        """
        if options:  # Gymnasium's vector envs reset only options["reset_mask"]'s envs: never ignore it silently
            raise ValueError(
                f"options: VectorGinEnv takes no reset options, not {', '.join(map(repr, options))} "
                "(it resets every env; finished games are followed at once by the next)"
            )
        n = self.num_envs
        if seed is None:
            seeds = self.np_random.integers(0, MAX_SEED, size=n, dtype=np.int64)
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if not 0 <= int(seed) <= MAX_SEED - n:
                raise ValueError(f"seed must be an integer 0..{MAX_SEED - n}, not {seed}")
            super().reset(seed=int(seed))
            seeds = np.arange(int(seed), int(seed) + n, dtype=np.int64)
        else:
            seeds = np.asarray(seed)
            if seeds.shape != (n,) or seeds.dtype.kind not in "iu" or (seeds < 0).any() or (seeds > MAX_SEED).any():
                raise ValueError(f"seed must be an int, None or {n} integers >= 0, not {seed!r}")
            sequence = np.random.SeedSequence([int(s) for s in seeds])
            self._np_random, self._np_random_seed = np.random.Generator(np.random.PCG64(sequence)), -1
        self.games.reset(seeds.astype(np.int64))
        self._started = True
        info: dict[str, Any] = {"action_mask": self._out(self.games.masks)}
        if self.games.events & EV_FORFEIT:
            _counted(info, "opponent_forfeits", self.games.opponent_forfeits)
        if self.games.events & EV_UNSEEN:
            _counted(info, "unseen_games", self.games.unseen_games)
        return self._obs(), info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        g = self.games
        g.step(actions)
        events = g.events  # what happened in some env: the per-env keys are built only when there is one
        info: dict[str, Any] = {"action_mask": self._out(g.masks)}
        if events & EV_DONE:
            info["final_obs"] = self._final_obs()
            info["_final_obs"] = g.done.copy()
            info["game_over"] = g.game_over.copy()
            info["_game_over"] = g.done.copy()  # said of the envs whose episode ended, as final_obs is
        if events & EV_CARRIED:
            info["carried_hands"] = g.carried_hands.copy()
            info["carried_reward"] = g.carried.copy()
            info["_carried_hands"] = info["_carried_reward"] = g.carried_hands > 0
        if events & EV_FORFEIT:
            _counted(info, "opponent_forfeits", g.opponent_forfeits)
        if events & EV_UNSEEN:
            _counted(info, "unseen_games", g.unseen_games)
        return self._obs(), self._out(g.rewards), self._out(g.done), self.truncated.copy(), info


def _counted(info: dict[str, Any], key: str, counts: np.ndarray) -> None:
    """A per-env count in ``info`` (the step's ``EV_*`` bit says some env has one) with its Gymnasium mask
    ``_key``: the envs it is said of.  Without the masks, ``DictInfoToList`` gave every key to every env
    (``game_over`` to envs whose episode went on)."""
    info[key] = counts.copy()
    info[f"_{key}"] = counts > 0
