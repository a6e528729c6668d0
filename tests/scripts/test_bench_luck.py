"""The coverage checks of scripts/bench_luck.py known: what they say on pairs of known dependence.

Fixed seeds; each margin is at least three binomial (or chi-square) standard deviations wide.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.file_module import load_file

bench = load_file("bench_luck_under_test", Path("scripts/bench_luck.py"))


def test_independent_pairs_cover_at_the_nominal_rate_with_a_design_effect_of_one():
    """40,000 skewed independent pairs (a fifth fixed, as the blunder's forfeits): 400 blocks of 100 cover
    0.95 +- 3 binomial sd (0.033), resampled blocks 0.95 +- 0.01, and the design effect is 1 +- 0.25."""
    rng = np.random.default_rng(3)
    x = np.where(rng.random(40000) < 0.2, 1.0, rng.normal(0.5, 0.3, 40000))
    truth = 0.2 + 0.8 * 0.5
    cover, blocks = bench.coverage(x, truth, 100)
    assert blocks == 400 and abs(cover - 0.95) <= 0.033
    assert abs(bench.resampled_coverage(x, 100, 4000, 1) - 0.95) <= 0.011
    d, p = bench.design_effect(x, 100)
    assert abs(d - 1) <= 0.25 and p > 0.001


def test_pairs_alike_within_a_block_are_caught_by_the_design_effect_and_lose_coverage():
    """The same pairs plus a shift shared by each run of 100 (sd half a pair's): the design effect is far
    above 1, the blocks' intervals undercover, and resampling (which breaks the dependence) does not."""
    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 1.0, 40000) + np.repeat(rng.normal(0.0, 0.5, 400), 100)
    d, p = bench.design_effect(x, 100)
    assert d > 10 and p < 1e-9
    cover, _ = bench.coverage(x, 0.0, 100)
    assert cover < 0.5
    assert abs(bench.resampled_coverage(x, 100, 4000, 1) - 0.95) <= 0.011
    assert bench.coverage(x, 0.0, 100, conf=0.999)[0] < 0.95  # not the width's fault
