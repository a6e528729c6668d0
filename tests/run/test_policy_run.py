"""Policy bots in runs: stored like any bot's, the same games inline and on worker processes."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from arena.analysis.stats import pair_summary
from arena.botkit.policy import mlp_onnx
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
from arena.engine.mlp import random_mlp, save_mlp
from arena.run import run_tournament
from arena.run.schedule import Inline
from arena.run.store import RunStore
from arena.settings.config import TournamentConfig
from tests.tables import canonical

AGENT = '''"""A policy module: the first legal action, or a random legal one when rng says so."""
import numpy as np


def act(obs, mask, rng):
    first = mask.argmax(axis=1)
    last = mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)
    return np.where(rng.random() < 0.5, first, last)
'''


def policies(folder: Path) -> tuple[str, str, str]:
    mlp = random_mlp(OBS_SIZE, NUM_ACTIONS, (32,), seed=4)
    save_mlp(folder / "w.npz", mlp)
    (folder / "w.onnx").write_bytes(mlp_onnx(mlp))
    (folder / "agent.py").write_text(AGENT)
    return f"policy:{folder / 'w.npz'}", f"policy:{folder / 'w.onnx'}", f"policy:{folder / 'agent.py'}"


def cfg(tmp_path: Path, bots, **kw) -> TournamentConfig:
    base = dict(
        name="p", bots=bots, games_per_pair=40, chunk_size=20, seed=8, workers=1, results_dir=str(tmp_path / "results")
    )
    base.update(kw)
    return TournamentConfig(**base)


def test_policy_bots_play_a_round_robin_stored_and_summarised_like_any_bot_on_any_number_of_workers(tmp_path):
    npz, onnx, agent = policies(tmp_path)
    bots = (npz, agent, "simple")
    inline = run_tournament(cfg(tmp_path, bots, name="inline"), progress=False, schedule=Inline())
    two = run_tournament(cfg(tmp_path, bots, name="two", workers=2), progress=False)
    assert inline.status == two.status == "complete"
    assert canonical(inline.games).equals(canonical(two.games))
    assert canonical(inline.hands).equals(canonical(two.hands))
    games = inline.games
    assert len(games) == 3 * 40 and set(games["bot_a"]) | set(games["bot_b"]) == {"w", "agent", "simple"}
    assert (games["error"] == "").all() and games["winner"].isin(["w", "agent", "simple"]).all()
    table = pair_summary(RunStore(Path(inline.run_dir)))
    assert {"w", "agent", "simple"} <= set(table["bot_a"]) | set(table["bot_b"])
    # The ONNX export of the same MLP plays the very games of the npz.
    vs_onnx = run_tournament(cfg(tmp_path, (onnx, "simple"), name="onnx"), progress=False, schedule=Inline()).games
    vs_npz = games[games["bot_a"].eq("w") & games["bot_b"].eq("simple")]
    assert len(vs_npz) == len(vs_onnx) == 40
    cols = ["seed", "swap", "score0", "score1", "winner_seat", "hands"]
    a = vs_onnx.sort_values(["seed", "swap"])[cols].to_numpy()
    b = vs_npz.sort_values(["seed", "swap"])[cols].to_numpy()
    assert np.array_equal(a, b)


SPIN = '''"""A policy that never answers."""


def act(obs, mask, rng):
    while True:
        pass
'''

DISCARD_LOOP = '''"""A compiled bot that hangs in its first discard."""
from bots.simple import take_upcard, draw, big_gin, knock
from bots.simple import discard as _discard
from arena.engine._jit import jit
from arena.engine.layout import V_MY_SCORE
NAME = "nloop"


@jit
def discard(view, params, memory, rng):
    memory[0] += 1.0
    if memory[0] > 1e9:  # never true; keeps the loop from being optimised away
        return 0
    x = 0
    while view[V_MY_SCORE] >= 0:
        x += 1
    return _discard(view, params, memory, rng)
'''

#: Limits of the stuck runs below: 2 s a decision, and a chunk limit the old code stopped them by, much later.
STUCK_LIMITS = {"decision_seconds": 2, "chunk_min_seconds": 40, "chunk_seconds_per_game": 0.01}


def test_a_policy_stuck_in_act_is_stopped_by_decision_seconds_times_its_batch_naming_it(tmp_path):
    """A policy's act() that never returns is one ask standing still: its batch of n games may take n times
    decision_seconds (here 3 x 2 s), not the chunk's 40 s, and the line names the policy and its batch."""
    (tmp_path / "spin.py").write_text(SPIN)
    c = cfg(tmp_path, ("simple", f"policy:{tmp_path / 'spin.py'}"), games_per_pair=6, chunk_size=6, limits=STUCK_LIMITS)
    t0 = time.monotonic()
    res = run_tournament(c, progress=False)
    took = time.monotonic() - t0
    assert res.status == "failed" and len(res.failed_chunks) == 1
    line = res.failed_chunks[0]
    assert "bot 'spin' was stuck in act() for " in line, line
    assert "on a batch of 3 decisions (the first take_upcard()), over the 6 s such a batch may take" in line, line
    assert "(2 s a decision, [limits] decision_seconds); its worker was stopped" in line, line
    assert took < 30, took  # 6 s of CPU and the start; the chunk limit (the old code's only stop) is 40 s


def test_a_compiled_bot_stuck_against_a_policy_is_stopped_by_decision_seconds_naming_it_not_the_policy(tmp_path):
    """In lockstep the kernel says which compiled decision it asks, and counts it, as the plain engine does."""
    _, _, agent = policies(tmp_path)
    (tmp_path / "nloop.py").write_text(DISCARD_LOOP)
    c = cfg(tmp_path, (str(tmp_path / "nloop.py"), agent), games_per_pair=4, chunk_size=4, limits=STUCK_LIMITS)
    t0 = time.monotonic()
    res = run_tournament(c, progress=False)
    took = time.monotonic() - t0
    assert res.status == "failed" and len(res.failed_chunks) == 1
    line = res.failed_chunks[0]
    assert "bot 'nloop' was stuck in discard() for " in line, line
    assert "over the 2 s one decision may take ([limits] decision_seconds); its worker was stopped" in line, line
    assert took < 30, took
