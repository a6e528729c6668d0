"""Sampling deals consistent with a view, and playing them out (Monte Carlo support)."""

from __future__ import annotations

import functools

import numpy as np

from arena.botkit.lib import pile_cards
from arena.botkit.search import deal_around, opponent_known, play_out, rules_of, sample_state
from arena.engine._jit import jit
from arena.engine.cards import popcount
from arena.engine.contract import BOT_SIGNATURE
from arena.engine.layout import (
    G_SIZE,
    OUT_NONE,
    PH_DONE,
    S_CUR,
    S_DECK,
    S_HAND,
    S_OUTCOME,
    S_PHASE,
    S_POINTS,
    S_SIZE,
    S_STOCK_POS,
    V_HAND,
    V_SEAT,
    V_SIZE,
)
from arena.engine.rng import new_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, new_state
from arena.loading.load import load_bot
from arena.settings.rules import Rules

R = rules_array(Rules())


def _decision_points(n_games: int):
    """(state, view) at every decision of some Simple-vs-Simple hands."""
    simple = load_bot("simple")
    mem = np.zeros(1)
    rng = new_rng(1)
    for seed in range(n_games):
        st = new_state()
        begin_game(st, R, seed, rng, rng.copy(), mem, mem.copy(), np.zeros(G_SIZE, dtype=np.int64))
        begin_hand(st, R, seed, rng)
        view = np.zeros(V_SIZE, dtype=np.int64)
        while st[S_PHASE] != PH_DONE:
            build_view(st, R, int(st[S_CUR]), view)
            yield st.copy(), view.copy()
            apply_action(st, R, int(simple.functions[st[S_PHASE]](view, simple.params, mem, rng)))


def test_sampled_state_rebuilds_the_same_view_and_a_legal_deal():
    rng = new_rng(9)
    sampled = np.empty(S_SIZE, dtype=np.int64)
    again = np.empty(V_SIZE, dtype=np.int64)
    n = 0
    differs = 0
    for st, view in _decision_points(40):
        p = int(st[S_CUR])
        sample_state(view, rng, sampled)
        build_view(sampled, rules_of(view), p, again)
        assert np.array_equal(view, again)
        known = int(opponent_known(view))
        opp = int(sampled[S_HAND + 1 - p])
        assert popcount(opp) == 10 and opp & known == known
        assert opp & int(view[V_HAND]) == 0
        differs += opp != int(st[S_HAND + 1 - p])
        n += 1
    assert n > 500 and differs > n // 2  # the hidden cards really are re-dealt


def test_a_deal_around_a_given_hand_gives_the_opponent_that_hand_and_rebuilds_the_view():
    rng = new_rng(4)
    out = np.empty(S_SIZE, dtype=np.int64)
    again = np.empty(V_SIZE, dtype=np.int64)
    stocks = set()
    n = 0
    for st, view in _decision_points(20):
        p = int(st[S_CUR])
        true = st[S_HAND + 1 - p]
        deal_around(view, true, rng, out)
        assert out[S_HAND + 1 - p] == true
        build_view(out, rules_of(view), p, again)
        assert np.array_equal(view, again)
        stock = out[S_DECK + out[S_STOCK_POS] : S_DECK + 52]
        everything = int(view[V_HAND]) | int(true) | int(pile_cards(view))
        assert sorted(stock.tolist()) == [c for c in range(52) if not (everything >> c) & 1]
        stocks.add(tuple(stock.tolist()))
        n += 1
    assert n > 200 and len(stocks) > n // 2  # the stock is shuffled, not left in card order


def test_opponents_kept_pickups_are_always_in_the_sample():
    rng = new_rng(3)
    sampled = np.empty(S_SIZE, dtype=np.int64)
    seen_known = 0
    for st, view in _decision_points(60):
        known = int(opponent_known(view))
        if known:
            seen_known += 1
            p = int(st[S_CUR])
            assert int(st[S_HAND + 1 - p]) & known == known  # truly held in the real game
            sample_state(view, rng, sampled)
            assert int(sampled[S_HAND + 1 - p]) & known == known
    assert seen_known > 10


@functools.cache
def _mc_knock():
    """A Monte Carlo knock decision, compiled like any bot function: sample the hidden cards 16 times, and
    compare knocking now with playing on (Simple rollouts); knock when it scores more on average.

    Compiled when the test first asks, not at import: it holds dispatchers as globals, so it cannot be
    cached, and compiling it at import cost every xdist worker 12 s of CPU while collecting."""
    import bots.simple as simple_module

    # Rollout policies compiled for the one bot signature, so a tuple of them is
    # indexable by phase inside compiled code (what arena.botkit.bot's loader does too).
    up = jit(BOT_SIGNATURE)(simple_module.take_upcard.py_func)
    draw = jit(BOT_SIGNATURE)(simple_module.draw.py_func)
    big = jit(BOT_SIGNATURE)(simple_module.big_gin.py_func)
    disc = jit(BOT_SIGNATURE)(simple_module.discard.py_func)
    knock = jit(BOT_SIGNATURE)(simple_module.knock.py_func)

    @jit(BOT_SIGNATURE, cache=False)  # holds dispatchers as globals: not cacheable
    def mc_knock(view, params, memory, rng):
        rules = rules_of(view)
        me = view[V_SEAT]
        st = np.empty(S_SIZE, dtype=np.int64)
        pols = (up, up, draw, big, disc, knock)
        mem = np.zeros(1)
        gain = 0.0
        for _ in range(16):
            for choice in (1, 0):
                sample_state(view, rng, st)
                apply_action(st, rules, choice)
                if st[S_PHASE] != PH_DONE:
                    play_out(st, rules, pols, pols, params, params, mem, mem, rng, rng)
                net = st[S_POINTS + me] - st[S_POINTS + 1 - me]
                gain += net if choice == 1 else -net
        return 1 if gain >= 0 else 0

    return mc_knock


def test_a_compiled_monte_carlo_bot_plays_through_the_fast_path():
    import dataclasses

    from arena.engine.play import play_batch

    simple = load_bot("simple")
    functions = simple.functions[:5] + (_mc_knock(),)  # PH_KNOCK is the last slot
    mc = dataclasses.replace(simple, name="mc", functions=functions)
    rec = play_batch(mc, simple, R, np.arange(20), record_hands=True)
    assert not rec.errors and len(rec.games) == 20
    assert (rec.games[:, 2] >= 0).all()  # every game has a winner (G_WINNER)


def test_play_out_finishes_sampled_hands_with_consistent_points():
    simple = load_bot("simple")
    rng = new_rng(4)
    sampled = np.empty(S_SIZE, dtype=np.int64)
    mem = np.zeros(1)
    finished = 0
    for _st, view in _decision_points(15):
        sample_state(view, rng, sampled)
        err = play_out(
            sampled,
            rules_of(view),
            simple.functions,
            simple.functions,
            simple.params,
            simple.params,
            mem,
            mem.copy(),
            rng,
            rng.copy(),
        )
        assert err == 0 and sampled[S_PHASE] == PH_DONE and sampled[S_OUTCOME] != OUT_NONE
        assert sampled[S_POINTS] >= 0 and sampled[S_POINTS + 1] >= 0
        finished += 1
    assert finished > 100
