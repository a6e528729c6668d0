"""Learned: a neural network (MLP 378-384-384-256-58) trained to imitate gin-chasing, played from its weights.

This bot is data, not code: its decisions are those of an MLP policy
(:mod:`arena.botkit.mlp_bot`, compiled) whose weights ship beside this file
as ``learned.npz`` (:mod:`arena.engine.mlp`'s format).  It sees only the
observation every policy sees (:func:`arena.engine.actions.observe_view`)
and plays the legal action with the largest logit, so it is deterministic.

It was distilled from the ``gin-chasing`` heuristic by imitation learning
(behaviour cloning, then DAgger rounds in which the network plays and
gin-chasing labels the positions it reaches), in games against a mix of
bots (``simple``, the early knockers, ``gin-chasing``, ``discard-tracking``):
``examples/rl/train_learned.py`` retrains it with one command, and
``docs/how-to/policy-bots.md`` says with which seed, how many samples and
how long it took, and how it does against the other bots.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.botkit.bot import Bot

#: The weights, package data of ``bots`` (pyproject's package-data), so a wheel install has them.
WEIGHTS = "learned.npz"


def make_bot() -> Bot:
    """The policy bot of the shipped weights (:func:`arena.botkit.bot.load_builtin` calls this)."""
    from arena.botkit.policy import load_policy_bytes

    data = files("bots").joinpath(WEIGHTS).read_bytes()
    return load_policy_bytes(data, f"bots/{WEIGHTS}", name="learned")
