"""Policy bots in runs: stored like any bot's, the same games inline and on worker processes."""

from __future__ import annotations

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
