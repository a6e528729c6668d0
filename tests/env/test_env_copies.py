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


def bot_file(folder: Path) -> Path:
    """A user's numba bot file: the built-in random bot's source under another name."""
    import bots

    path = folder / "my_random.py"
    path.write_text((Path(bots.__file__).parent / "random.py").read_text())
    return path


def vector_trace(vec, steps: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Observations and rewards of ``steps`` first-legal-action steps of a vector env from where it is."""
    obs, rewards = [], []
    for _ in range(steps):
        o, r, *_ = vec.step(vec.games.masks.argmax(1))
        obs.append(o)
        rewards.append(r)
    return np.array(obs), np.array(rewards)


@pytest.mark.parametrize("opponent", ["simple", "gin-chasing:knock_at=3", "file"])
def test_a_pickled_env_against_a_bot_that_is_code_plays_on_as_the_original(opponent, tmp_path):
    """A bot's module cannot be pickled, so an env against a built-in or a bot file could not be; the bot
    now pickles as how it was loaded and is loaded so again."""
    from arena.env.gym import VectorGinEnv

    if opponent == "file":
        opponent = str(bot_file(tmp_path))
    env = started(opponent)
    twin = pickle.loads(pickle.dumps(env))
    assert twin.games.opponent.name == env.games.opponent.name
    assert np.array_equal(twin.games.opponent.params, env.games.opponent.params)
    expected = trace(env, 600)
    obs, rewards = trace(twin, 600)
    assert np.array_equal(obs, expected[0]) and np.array_equal(rewards, expected[1])
    assert np.abs(rewards).sum() > 0  # games ended: the comparison covered whole games

    vec = VectorGinEnv(3, opponent=opponent, reward="points")
    vec.reset(seed=11)
    vector_trace(vec, 20)
    vec_twin = pickle.loads(pickle.dumps(vec))
    expected = vector_trace(vec)
    got = vector_trace(vec_twin)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_a_pickled_bot_is_the_bot_it_was_loaded_as(tmp_path):
    for ref in ("simple", "gin-chasing:knock_at=3", str(bot_file(tmp_path))):
        bot = load_bot(ref)
        twin = pickle.loads(pickle.dumps(bot))
        assert (twin.name, twin.ref, twin.param_names, twin.fast) == (bot.name, bot.ref, bot.param_names, bot.fast)
        assert np.array_equal(twin.params, bot.params) and twin.functions == bot.functions
        assert pickle.loads(pickle.dumps(twin)).name == bot.name  # and again
    from arena.botkit.bot import load_bot_source

    made = load_bot_source(bot_file(tmp_path).read_text(), name="made", source="made.py")
    with pytest.raises(
        TypeError, match=r"^bot 'made' cannot be pickled: only a built-in bot or a bot file loads again"
    ):
        pickle.dumps(made)


PLAY_PICKLED_FILE_BOT = """
import pickle, sys
import numpy as np
from tests.env.test_env_copies import trace
env = pickle.loads(open(sys.argv[1], "rb").read())
np.save(sys.argv[2], trace(env, 600)[0])
"""


def test_a_pickled_env_against_a_bot_file_plays_the_same_games_in_a_fresh_process(tmp_path):
    """Loaded from the file's text the pickle carries, as a run's worker loads it: the file itself may be gone."""
    path = bot_file(tmp_path)
    env = started(str(path))
    (tmp_path / "env.pkl").write_bytes(pickle.dumps(env))
    path.unlink()
    out = tmp_path / "out.npy"
    penv = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = [sys.executable, "-c", textwrap.dedent(PLAY_PICKLED_FILE_BOT)]
    done = subprocess.run([*script, str(tmp_path / "env.pkl"), str(out)], env=penv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert np.array_equal(np.load(out), trace(env, 600)[0])
