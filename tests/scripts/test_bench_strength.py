"""The strength benchmark's paired comparison and its repeated decision timing (scripts/bench_strength.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

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


ILLEGAL_DISCARD = """
from arena.engine._jit import jit

PARAMS = {}
MEMORY = 1


@jit
def take_upcard(view, params, memory, rng):
    return 0


@jit
def draw(view, params, memory, rng):
    return 0


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def discard(view, params, memory, rng):
    return 99  # no such card: every game it plays is forfeited at its first discard


@jit
def knock(view, params, memory, rng):
    return 1
"""


def test_a_bot_reference_with_a_colon_plays_and_nobody_forfeits():
    """``cmd:``, ``eaai:`` ... are bot references, not ``name:key=value`` (read as a bot named 'cmd' before)."""
    program = f"cmd:{sys.executable} {ROOT / 'examples' / 'external' / 'simple_player.py'}"
    r = bench.match(program, "simple", "eaai", seed=5, pairs=2, workers=1)
    assert r["games"] == 4 and 0 <= r["win"] <= 1
    assert r["forfeits"] == ([], [])


def test_forfeited_games_are_counted_as_losses_and_reported_with_their_reason(tmp_path):
    bot = tmp_path / "illegal_discard.py"
    bot.write_text(ILLEGAL_DISCARD)
    r = bench.match(str(bot), "simple", "eaai", seed=5, pairs=2, workers=1)
    assert r["games"] == 4 and r["win"] == 0.0
    mine, theirs = r["forfeits"]
    assert len(mine) == 4 and theirs == []
    assert "illegal_discard" in mine[0] and "99" in mine[0]
    flipped = bench.match("simple", str(bot), "eaai", seed=5, pairs=2, workers=1)
    assert flipped["win"] == 1.0 and flipped["forfeits"][0] == [] and len(flipped["forfeits"][1]) == 4


@pytest.mark.parametrize(
    "spec, says",
    [
        ("nosuch", "unknown bot 'nosuch'"),
        ("monte-carlo:samples=0", "samples"),
        ("monte-carlo:samples=lots", "lots"),
        ("eaai:nojar", "write eaai:PLAYER.jar:CLASS"),
    ],
)
def test_a_bad_bot_spec_is_one_line_naming_it_before_any_game(spec, says):
    with pytest.raises(SystemExit) as exc:
        bench.check_bots(["simple", spec])
    assert str(exc.value).startswith(f"bench_strength: {spec}: ") and says in str(exc.value)
    assert "\n" not in str(exc.value) and not str(exc.value).startswith(f"bench_strength: {spec}: {spec}")
