"""The strength benchmark's paired comparison and its repeated decision timing (scripts/bench_strength.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.file_module import load_file

ROOT = Path(__file__).resolve().parents[2]

bench = load_file("bench_strength_under_test", ROOT / "scripts" / "bench_strength.py")


def test_the_paired_difference_cancels_the_luck_two_bots_shared_on_the_same_deals():
    rng = np.random.default_rng(0)
    luck = rng.choice([0.0, 1.0, 2.0], size=400)  # what the deal gave, the same for both bots
    better = np.minimum(2.0, luck + (rng.random(400) < 0.1))  # one more win in about a tenth of the pairs
    d = bench.paired_difference(better, luck)
    assert d["lo"] < d["diff"] < d["hi"]
    assert abs(d["diff"] - (better - luck).mean() / 2) < 1e-12
    assert d["lo"] > 0  # the gain is clear pair by pair ...
    # ... though the two win rates' own intervals (the deals' luck) overlap widely.
    se = luck.std(ddof=1) / 2 / np.sqrt(400)
    assert (better.mean() - luck.mean()) / 2 < 2 * 1.96 * se
    same = bench.paired_difference(luck, luck)
    assert same["diff"] == same["lo"] == same["hi"] == 0.0


def test_repeated_timing_pairs_each_decision_with_itself_over_the_passes():
    t = bench.decision_times("simple", "eaai", pairs=1, seed=3, repeats=2)
    assert t["repeats"] == 2 and t["games"] == 2 and t["decisions"] > 20
    assert 0 < t["median_ms"] <= t["p99_ms"] <= t["max_ms"]
    assert t["max_game_s"] * 1000 <= t["max_ms"] * t["decisions"]
