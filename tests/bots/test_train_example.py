"""The training example end to end: PPO learns to beat `random`, exports a policy that plays in the arena."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the [train] extra

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_smoke_run_learns_to_beat_random_better_than_the_untrained_policy(tmp_path):
    """Two minutes of PPO against random (``--smoke``): the trained greedy policy's win rate in whole games,
    over 100 duplicate pairs, beats the untrained one's by more than both 95% intervals (seeded: the same
    numbers each run on this machine; the margin seen is far wider than the intervals)."""
    spec = importlib.util.spec_from_file_location("train_ppo", ROOT / "examples" / "rl" / "train_ppo.py")
    assert spec is not None and spec.loader is not None
    train = importlib.util.module_from_spec(spec)
    sys.modules["train_ppo"] = train
    spec.loader.exec_module(train)
    out = tmp_path / "ppo"
    summary = train.main(["--smoke", "--out", str(out), "--seed", "3"])
    first, final = summary["first"], summary["final"]
    assert summary["steps"] > 0
    assert final["random"] - final["random_ci"] > first["random"] + first["random_ci"], (first, final)
    for name in ("policy.npz", "policy.onnx", "curve.png", "curve.csv", "train.json"):
        assert (out / name).stat().st_size > 0
    from arena.engine.play import play_batch
    from arena.engine.rules_array import rules_array
    from arena.loading.load import load_bot
    from arena.settings.rules import Rules

    a, b = load_bot(f"policy:{out / 'policy.npz'}"), load_bot(f"policy:{out / 'policy.onnx'}")
    seeds = np.arange(20)
    assert np.array_equal(
        play_batch(a, load_bot("random"), rules_array(Rules()), seeds).games,
        play_batch(b, load_bot("random"), rules_array(Rules()), seeds).games,
    )
