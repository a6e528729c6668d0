"""The env layer: Gin Arena as Gymnasium (and, on the same engine API, PettingZoo and OpenSpiel) envs.

:mod:`arena.env.games` is the compiled core (a batch of games against a
compiled opponent, no third-party import); :mod:`arena.env.gym` holds the
Gymnasium env and the vectorized env and needs the ``[rl]`` extra.
Importing this package registers ``gin_arena/Gin-v0`` with Gymnasium when
Gymnasium is installed.
"""

from __future__ import annotations

from importlib.util import find_spec

#: The Gymnasium id of :class:`arena.env.gym.GinEnv`.
GYM_ID = "gin_arena/Gin-v0"


def register() -> None:
    """Register :data:`GYM_ID` with Gymnasium (idempotent)."""
    import gymnasium

    if GYM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ID,
            entry_point="arena.env.gym:GinEnv",
            vector_entry_point="arena.env.gym:VectorGinEnv",
            disable_env_checker=False,
        )


if find_spec("gymnasium") is not None:
    register()
