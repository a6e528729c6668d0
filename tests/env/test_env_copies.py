"""Copies of envs and bots: ``copy.deepcopy``, pickle and a spawned vector env play their own games.

An MLP bot's compiled decisions read its weights by address, so these
tests free the original and fill the freed memory before the copy plays:
a copy that still named the original's weights would play other games (or
crash), not the same ones.
"""

from __future__ import annotations

import copy
import gc
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import arena.env  # noqa: E402,F401  (registers gin_arena/Gin-v0)
from arena.botkit.bot import load_builtin  # noqa: E402
from arena.env.gym import GinEnv  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def trace(env: GinEnv, steps: int = 1500) -> tuple[np.ndarray, np.ndarray]:
    """Observations and rewards of ``steps`` first-legal-action steps from where ``env`` is (episodes that
    end are followed by the next)."""
    obs, rewards = [], []
    mask = env.games.masks[0]
    for _ in range(steps):
        o, r, done, _, info = env.step(int(mask.argmax()))
        obs.append(o)
        rewards.append(r)
        mask = env.reset()[1]["action_mask"] if done else info["action_mask"]
    return np.array(obs), np.array(rewards)


def started(opponent: str, moves: int = 7) -> GinEnv:
    """An env a few moves into game 3: the opponent holds its per-game copy of its params."""
    env = GinEnv(opponent=opponent)
    env.reset(seed=3)
    for _ in range(moves):
        env.step(int(env.games.masks[0].argmax()))
    return env


def overwrite_freed_memory() -> list[np.ndarray]:
    gc.collect()
    return [np.full(10**6, 1e30, np.float32) for _ in range(20)]


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_env_plays_the_original_games_after_the_original_is_freed(how):
    expected = trace(started("learned"))
    env = started("learned")
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    del env
    junk = overwrite_freed_memory()
    obs, rewards = trace(twin)
    assert np.array_equal(obs, expected[0]) and np.array_equal(rewards, expected[1])
    assert np.abs(expected[1]).sum() > 0  # games ended: the comparison covered whole games
    del junk


def test_a_copied_mlp_bot_plays_the_original_games_after_the_original_is_freed():
    expected = trace(started("learned"))
    bot = load_builtin("learned")  # not load_bot's: that one is cached, so never freed
    twin = copy.deepcopy(bot)
    del bot
    junk = overwrite_freed_memory()
    env = GinEnv(opponent=twin)
    env.reset(seed=3)
    for _ in range(7):
        env.step(int(env.games.masks[0].argmax()))
    obs, rewards = trace(env)
    assert np.array_equal(obs, expected[0]) and np.array_equal(rewards, expected[1])
    del junk


def test_an_env_whose_opponent_is_a_bot_file_can_be_deep_copied():
    env = started("simple")
    twin = copy.deepcopy(env)
    assert twin.games.opponent.module is env.games.opponent.module
    assert np.array_equal(trace(twin)[0], trace(env)[0])


PLAY_PICKLED = """
import pickle, sys
import numpy as np
from tests.env.test_env_copies import trace
bot = pickle.loads(open(sys.argv[1], "rb").read())
env = pickle.loads(open(sys.argv[2], "rb").read())
from arena.env.gym import GinEnv
fresh = GinEnv(opponent=bot)
fresh.reset(seed=3)
for _ in range(7):
    fresh.step(int(fresh.games.masks[0].argmax()))
np.savez(sys.argv[3], bot=trace(fresh)[0], env=trace(env)[0])
"""


def test_a_pickled_mlp_bot_and_env_play_the_same_games_in_a_fresh_process(tmp_path):
    expected = trace(started("learned"))[0]
    (tmp_path / "bot.pkl").write_bytes(pickle.dumps(load_bot("learned")))
    (tmp_path / "env.pkl").write_bytes(pickle.dumps(started("learned")))
    out = tmp_path / "out.npz"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = [sys.executable, "-c", textwrap.dedent(PLAY_PICKLED)]
    done = subprocess.run([*script, str(tmp_path / "bot.pkl"), str(tmp_path / "env.pkl"), str(out)], env=env)
    assert done.returncode == 0
    got = np.load(out)
    assert np.array_equal(got["bot"], expected) and np.array_equal(got["env"], expected)


ASYNC_SPAWN = """
import sys
import numpy as np
from tests.env.test_env_copies import vector_rewards

if __name__ == "__main__":
    np.save(sys.argv[1], vector_rewards("async", {"context": "spawn"}))
"""


def vector_rewards(mode: str, vector_kwargs: dict[str, str]) -> np.ndarray:
    """The rewards of 300 first-legal-action steps of ``make_vec`` (two envs against ``learned``)."""
    envs = gymnasium.make_vec(
        "gin_arena/Gin-v0",
        num_envs=2,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        opponent=load_bot("learned"),
    )
    _, info = envs.reset(seed=1)
    rewards = []
    for _ in range(300):
        _, r, _, _, info = envs.step(info["action_mask"].argmax(1))
        rewards.append(r)
    envs.close()
    return np.array(rewards)


def test_make_vec_async_with_spawn_plays_against_a_learned_opponent(tmp_path):
    """Each spawned worker unpickles the bot; its weights' address must be the worker's own."""
    script = tmp_path / "spawned.py"
    script.write_text(textwrap.dedent(ASYNC_SPAWN))
    out = tmp_path / "rewards.npy"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    expected = vector_rewards("sync", {})
    assert np.array_equal(np.load(out), expected) and np.abs(expected).sum() > 0
