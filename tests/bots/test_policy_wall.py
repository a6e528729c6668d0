"""Trained policies behind the wall: ``sandbox:agent.py`` and ``sandbox:model.onnx`` (the sandbox host).

A walled policy answers one decision at a time over the protocol, each decision keyed from the
seat's generator as the lockstep driver keys it, so it plays the very games it plays in the arena's
process.  A policy that reaches out of the wall, hangs, or answers wrongly forfeits its games with
the reason, as a bot does.  Every test runs the real wall (bubblewrap and seccomp).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external.client import close_bot
from arena.external.limits import Limits
from arena.external.wall import wall_problem
from arena.loading.load import load, load_bot
from arena.settings.botref import BotRef
from arena.settings.rules import Rules
from tests.policy_files import AGENT

PROBLEM = wall_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"needs the wall: {PROBLEM}")
R = rules_array(Rules())


def _policy(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    path.chmod(0o644)
    return path


def _play(spec: str, seeds, limits: Limits | None = None, **kw):
    bot = load(BotRef.parse(spec), limits)
    try:
        return play_batch(bot, load_bot("simple"), R, np.asarray(seeds, dtype=np.int64), **kw)
    finally:
        close_bot(bot)


def test_a_walled_policy_plays_the_games_it_plays_in_process(tmp_path):
    path = _policy(tmp_path / "p", "agent", AGENT)
    seeds = np.arange(3)
    walled = _play(f"sandbox:{path}", seeds, record_log=True)
    inside = _play(f"policy:{path}", seeds, record_log=True)
    assert walled.errors == [] and inside.errors == []
    assert np.array_equal(walled.games, inside.games) and np.array_equal(walled.log, inside.log)
    other = _play(f"policy:{path}", seeds + 100, record_log=True)
    assert not np.array_equal(other.log, inside.log)  # the seed, not chance, makes them equal


def _attacks(secret: Path, port: int) -> dict[str, tuple[str, str]]:
    """name -> (the policy's act body, a word its forfeit reason must hold)."""
    play = "    return np.argmax(mask, axis=1)\n"
    return {
        "reads-a-file": (f"    open({str(secret)!r}).read()\n" + play, "raised"),
        "opens-a-socket": (
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n" + play,
            "raised",
        ),
        # the first answer may take the start time (as a bot's first, which may compile), so it loops after it
        "loops-forever": ("    CALLS.append(1)\n    while len(CALLS) > 1:\n        pass\n" + play, "0.5 s"),
        "illegal-action": ("    return np.argmin(mask, axis=1)\n", "illegal"),
        "wrong-shape": ("    return np.zeros((len(mask), 2), dtype=np.int64)\n", "shape"),
    }


@pytest.mark.parametrize("attack", ["reads-a-file", "opens-a-socket", "loops-forever", "illegal-action", "wrong-shape"])
def test_a_walled_policy_that_reaches_out_hangs_or_answers_wrongly_forfeits_with_the_reason(tmp_path, listener, attack):
    port, accepted = listener
    secret = tmp_path / "secret.txt"  # outside the policy's folder, readable by anyone outside the wall
    secret.write_text("the league's token\n")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    body, why = _attacks(secret, port)[attack]
    path = _policy(
        tmp_path / "p",
        attack.replace("-", "_"),
        "import socket\nimport numpy as np\n\nCALLS = []\n\ndef act(obs, mask, rng):\n" + body,
    )
    rec = _play(f"sandbox:{path}", [7], Limits(decision_s=0.5, game_s=10, start_s=120))
    assert len(rec.errors) == 1 and why in rec.errors[0], rec.errors
    assert int(rec.games[0, 6]) == 0  # G_FORFEIT: the policy's seat
    assert accepted == []
