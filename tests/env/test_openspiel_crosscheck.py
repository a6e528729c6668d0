"""``python_gin_arena`` against OpenSpiel's own ``gin_rummy``: same deals, same moves, same legal actions and returns.

A short run of :mod:`arena.env.openspiel_crosscheck` (``scripts/check_openspiel.py``
runs 10,000 hands and more): random play, and greedy play that reaches
knocks, undercuts, gins and layoffs.  A check that could not fail would
prove nothing, so rules that disagree must be caught.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel")

from arena.env.openspiel_crosscheck import Mismatch, run  # noqa: E402


def test_random_play_agrees_with_openspiel():
    tally = run(120, seed=1000)
    assert tally.compared >= 100
    assert tally.kinds["dead"] > 0 and tally.kinds["knock"] > 0


def test_greedy_play_agrees_at_the_showdown():
    tally = run(120, seed=2000, knock_p=0.3, greedy=True)
    assert tally.compared >= 110
    assert tally.kinds["knock"] > 50 and tally.kinds["undercut"] > 0


def test_oklahoma_agrees_but_for_the_spade_doubling():
    """The knock limit comes from the upcard in both (0 to 10 here, hand by hand)."""
    tally = run(100, seed=4000, rules={"oklahoma": True}, os_params={"oklahoma": True}, knock_p=0.3, greedy=True)
    assert tally.compared >= 90 and tally.kinds["knock"] > 20


def test_rules_that_disagree_are_caught():
    # The arena's knock limit 9 against OpenSpiel's knock card 10: some hand must show it.
    with pytest.raises(Mismatch):
        run(200, seed=3000, rules={"knock_limit": 9}, knock_p=0.3, greedy=True)
    # A tie that undercuts (arena) against one that does not (OpenSpiel).
    with pytest.raises(Mismatch, match="returns"):
        run(2000, seed=3000, rules={"undercut_on_tie": True}, knock_p=0.3, greedy=True)
