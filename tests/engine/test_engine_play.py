"""Whole hands and games: invariants, determinism, replay, drivers, what bots see."""

from __future__ import annotations

import numpy as np
import pytest

from arena.botkit.bot import as_plain
from arena.engine._jit import jit
from arena.engine.cards import popcount
from arena.engine.layout import (
    G_SCORE,
    G_SIZE,
    G_WINNER,
    H_DEADWOOD,
    H_KNOCK_LIMIT,
    H_KNOCKER,
    H_LOG_LEN,
    H_LOG_START,
    H_MULT,
    H_OUTCOME,
    H_POINTS,
    H_SCORE,
    H_STOCK_LEFT,
    OUT_BIG_GIN,
    OUT_CAPPED,
    OUT_DEAD,
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    S_CUR,
    S_DECK,
    S_DISCARDED,
    S_HAND,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SIZE,
    S_STOCK_POS,
    S_TAKEN,
    V_SIZE,
)
from arena.engine.play import play_batch
from arena.engine.replay import replay_game
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, new_state
from arena.loading.load import load_bot
from arena.settings.rules import Rules

STD = Rules()


@pytest.fixture(scope="module")
def bots():
    return {name: load_bot(name) for name in ("random", "simple")}


@jit
def _check_invariants(n_hands, seed0, rules, bot0, bot1):
    """Play random hands step by step, checking card conservation after every action.

    Returns the number of violations (0 expected).
    """
    st = np.zeros(S_SIZE, dtype=np.int64)
    view = np.zeros(V_SIZE, dtype=np.int64)
    r0 = np.zeros(4, dtype=np.uint64)
    r1 = np.zeros(4, dtype=np.uint64)
    scratch = np.zeros(4, dtype=np.uint64)
    m0 = np.zeros(1)
    m1 = np.zeros(1)
    row = np.zeros(G_SIZE, dtype=np.int64)
    params = np.zeros(0, dtype=np.float64)  # random and simple take no parameters
    bad = 0
    for h in range(n_hands):
        begin_game(st, rules, seed0 + h, r0, r1, m0, m1, row)
        begin_hand(st, rules, seed0 + h, scratch)
        while st[S_PHASE] != PH_DONE:
            p = st[S_CUR]
            build_view(st, rules, p, view)
            if p == 0:
                a = bot0[st[S_PHASE]](view, params, m0, r0)
            else:
                a = bot1[st[S_PHASE]](view, params, m1, r1)
            if apply_action(st, rules, a) != 0:
                bad += 1000
                break
            # 52 distinct cards: hands, pile and stock partition the deck.
            stock = np.int64(0)
            for i in range(st[S_STOCK_POS], 52):
                stock |= np.int64(1) << st[S_DECK + i]
            pile = np.int64(0)
            for i in range(st[S_PILE_N]):
                pile |= np.int64(1) << st[S_PILE + i]
            h0 = st[S_HAND]
            h1 = st[S_HAND + 1]
            parts = popcount(h0) + popcount(h1) + popcount(pile) + popcount(stock)
            if parts != 52 or (h0 | h1 | pile | stock) != (np.int64(1) << 52) - 1:
                bad += 1
            # The player to act holds 11 cards while it must discard (or may
            # declare big gin), 10 otherwise; the other player always 10.
            q = st[S_CUR]
            ph = st[S_PHASE]
            want = 11 if ph == PH_DISCARD or ph == PH_BIG_GIN else 10
            if ph != PH_DONE and (popcount(st[S_HAND + q]) != want or popcount(st[S_HAND + 1 - q]) != 10):
                bad += 1
            # What a player took and kept is in its hand.
            for s in range(2):
                kept = st[S_TAKEN + s] & ~st[S_DISCARDED + s]
                if kept & ~st[S_HAND + s]:
                    bad += 1
    return bad


def test_cards_are_conserved_and_hand_sizes_hold_over_100k_random_hands(bots):
    r = rules_array(STD)
    rnd, simple = bots["random"], bots["simple"]
    assert _check_invariants(60_000, 0, r, rnd.functions, rnd.functions) == 0
    assert _check_invariants(40_000, 10**6, r, simple.functions, rnd.functions) == 0


def _check_points(hands: np.ndarray, rules: Rules) -> None:
    out = hands[:, H_OUTCOME]
    k = hands[:, H_KNOCKER]
    idx = np.arange(len(hands))
    dw = hands[:, H_DEADWOOD : H_DEADWOOD + 2]
    pts = hands[:, H_POINTS : H_POINTS + 2]
    mult = hands[:, H_MULT]
    scored = np.isin(out, [OUT_KNOCK, OUT_UNDERCUT, OUT_GIN, OUT_BIG_GIN])
    assert (k[scored] >= 0).all() and (k[~scored] == -1).all()
    kd = np.where(scored, k, 0)
    k_dw, d_dw = dw[idx, kd], dw[idx, 1 - kd]
    k_pts, d_pts = pts[idx, kd], pts[idx, 1 - kd]
    m = out == OUT_KNOCK
    assert (k_dw[m] <= hands[m, H_KNOCK_LIMIT]).all() and (k_dw[m] > 0).all()
    assert (k_pts[m] == mult[m] * (d_dw[m] - k_dw[m])).all() and (d_pts[m] == 0).all()
    m = out == OUT_UNDERCUT
    assert (d_dw[m] <= k_dw[m]).all()
    assert (d_pts[m] == mult[m] * (k_dw[m] - d_dw[m] + rules.undercut_bonus)).all() and (k_pts[m] == 0).all()
    m = out == OUT_GIN
    assert (k_dw[m] == 0).all() and (k_pts[m] == mult[m] * (d_dw[m] + rules.gin_bonus)).all()
    m = out == OUT_BIG_GIN
    assert (k_dw[m] == 0).all() and (k_pts[m] == mult[m] * (d_dw[m] + rules.big_gin_bonus)).all()
    m = np.isin(out, [OUT_DEAD, OUT_CAPPED])
    assert (pts[m] == 0).all()
    assert (hands[out == OUT_DEAD, H_STOCK_LEFT] == 2).all()
    assert (pts >= 0).all()


@pytest.mark.parametrize("preset", ["standard", "eaai", "oklahoma"])
def test_points_are_consistent_with_outcomes(bots, preset):
    from arena.settings.rules import load_rules

    rules = load_rules(preset)
    rec = play_batch(bots["simple"], bots["simple"], rules_array(rules), np.arange(3000), record_hands=True)
    _check_points(rec.hands, rules)
    outcomes = set(rec.hands[:, H_OUTCOME].tolist())
    assert {OUT_KNOCK, OUT_UNDERCUT, OUT_GIN, OUT_DEAD} <= outcomes
    # Every game ends with exactly one player at or past the target.
    final = rec.games[:, G_SCORE : G_SCORE + 2]
    w = rec.games[:, G_WINNER]
    assert (final[np.arange(len(w)), w] >= rules.target).all()
    assert (final[np.arange(len(w)), 1 - w] < rules.target).all()


def test_random_play_points_are_consistent_over_100k_hands(bots):
    rnd = play_batch(bots["random"], bots["random"], rules_array(STD), np.arange(500), record_hands=True)
    assert len(rnd.hands) >= 100_000  # random play: mostly dead hands, some knocks and gins
    _check_points(rnd.hands, STD)
    rec = play_batch(bots["random"], bots["simple"], rules_array(STD), np.arange(2000), record_hands=True)
    _check_points(rec.hands, STD)


def test_same_seed_gives_identical_records(bots):
    a = play_batch(bots["simple"], bots["random"], rules_array(STD), np.arange(500), record_hands=True, record_log=True)
    b = play_batch(bots["simple"], bots["random"], rules_array(STD), np.arange(500), record_hands=True, record_log=True)
    assert np.array_equal(a.games, b.games) and np.array_equal(a.hands, b.hands)
    assert np.array_equal(a.log, b.log)
    c = play_batch(bots["simple"], bots["random"], rules_array(STD), np.arange(1, 501), record_hands=True)
    assert not np.array_equal(a.games, c.games)


def test_a_game_does_not_depend_on_its_batch(bots):
    """Games split into batches (as workers do) equal the games played in one batch."""
    r = rules_array(STD)
    whole = play_batch(bots["simple"], bots["random"], r, np.arange(300), record_hands=True)
    parts = [
        play_batch(bots["simple"], bots["random"], r, np.arange(a, b), record_hands=True)
        for a, b in [(0, 7), (7, 150), (150, 300)]
    ]
    assert np.array_equal(whole.games, np.concatenate([p.games for p in parts]))
    hands = np.concatenate([p.hands for p in parts])
    assert np.array_equal(np.delete(whole.hands, 0, axis=1), np.delete(hands, 0, axis=1))


def test_plain_python_path_gives_identical_results(bots):
    r = rules_array(STD)
    seeds = np.arange(40)
    fast = play_batch(bots["simple"], bots["random"], r, seeds, record_hands=True, record_log=True)
    plain = play_batch(as_plain(bots["simple"]), bots["random"], r, seeds, record_hands=True, record_log=True)
    assert np.array_equal(fast.games, plain.games)
    assert np.array_equal(fast.hands, plain.hands)
    assert np.array_equal(fast.log, plain.log)


@pytest.mark.parametrize("path", ["kernel", "plain"])
def test_setting_the_stop_slot_from_another_thread_stops_play_before_the_next_game(bots, path):
    """What a Dask worker does to a chunk whose run has gone (arena.run.schedule._dask_play): the caller's
    thread sets counters[C_STOP] while the games play (the kernel runs without the GIL), and play_batch
    raises Stopped after the game being played; a slot set before the call stops it before game 0."""
    import threading

    from arena.engine.play import C_SIZE, C_STOP, Stopped

    simple = bots["simple"] if path == "kernel" else as_plain(bots["simple"])
    r = rules_array(STD)
    n = 200_000 if path == "kernel" else 20_000
    counters = np.zeros(C_SIZE, dtype=np.int64)
    play_batch(simple, bots["random"], r, np.arange(2), counters=counters)  # compiled before the clock starts
    timer = threading.Timer(0.5, lambda: counters.__setitem__(C_STOP, 1))
    timer.start()
    with pytest.raises(Stopped) as stopped:
        play_batch(simple, bots["random"], r, np.arange(n), counters=counters)
    timer.join()
    assert 0 < stopped.value.next_game < n
    with pytest.raises(Stopped, match="before game 0"):
        play_batch(simple, bots["random"], r, np.arange(10), counters=counters)
    counters[C_STOP] = 0
    assert play_batch(simple, bots["random"], r, np.arange(10), counters=counters).games.shape[0] == 10


def test_replay_of_recorded_games_is_identical(bots):
    r = rules_array(STD)
    rec = play_batch(bots["simple"], bots["random"], r, np.arange(200, 260), record_hands=True, record_log=True)
    games = rec.hands[:, 0]
    for g, seed in enumerate(rec.seeds):
        rows = rec.hands[games == g]
        start = rows[0, H_LOG_START]
        end = rows[-1, H_LOG_START] + rows[-1, H_LOG_LEN]
        replayed = replay_game(int(seed), r, rec.log[start:end], game_index=g)
        keep = [i for i in range(rows.shape[1]) if i != H_LOG_START]
        assert np.array_equal(replayed[:, keep], rows[:, keep])
        assert replayed[-1, H_SCORE : H_SCORE + 2].tolist() == rec.games[g, G_SCORE : G_SCORE + 2].tolist()


def test_recorded_buffers_grow_without_changing_results(bots):
    """The kernel rolls back a game when a buffer fills; the caller grows it and goes on."""
    r = rules_array(STD)
    rec = play_batch(bots["simple"], bots["simple"], r, np.arange(3), record_hands=True, record_log=True)
    assert rec.hands.shape[0] > 16  # more than the first buffer held
    one_by_one = [
        play_batch(bots["simple"], bots["simple"], r, np.arange(i, i + 1), record_hands=True) for i in range(3)
    ]
    assert sum(len(x.hands) for x in one_by_one) == len(rec.hands)


# --- what a bot sees --------------------------------------------------------------------


def _hide_and_reshuffle(st: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """Another state that seat ``seat`` cannot tell apart: the opponent's unknown
    cards and the stock are dealt anew from the same cards, in another order."""
    o = 1 - seat
    st2 = st.copy()
    known = int(st[S_TAKEN + o] & ~st[S_DISCARDED + o])  # taken from the pile and still held
    opp_hidden = [c for c in range(52) if (int(st[S_HAND + o]) >> c) & 1 and not (known >> c) & 1]
    pos = int(st[S_STOCK_POS])
    stock = [int(c) for c in st[S_DECK + pos : S_DECK + 52]]
    pool = opp_hidden + stock
    rng.shuffle(pool)
    new_opp = pool[: len(opp_hidden)]
    st2[S_HAND + o] = known | sum(1 << c for c in new_opp)
    st2[S_DECK + pos : S_DECK + 52] = pool[len(opp_hidden) :]
    return st2


def test_view_never_reveals_opponent_cards_or_stock_order(bots):
    """At thousands of real decision points, swapping the opponent's hidden cards
    with the stock (and reordering it) leaves the acting player's view identical,
    while the opponent's own view does change."""
    r = rules_array(STD)
    rng = np.random.default_rng(5)
    v1 = np.zeros(V_SIZE, dtype=np.int64)
    v2 = np.zeros(V_SIZE, dtype=np.int64)
    bot_rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    mem = np.zeros(1)
    simple = bots["simple"]
    checked = changed = 0
    for seed in range(60):
        st = new_state()
        begin_game(st, r, seed, bot_rng, bot_rng.copy(), mem, mem.copy(), np.zeros(G_SIZE, dtype=np.int64))
        begin_hand(st, r, seed, bot_rng)
        while st[S_PHASE] != PH_DONE:
            p = int(st[S_CUR])
            st2 = _hide_and_reshuffle(st, p, rng)
            build_view(st, r, p, v1)
            build_view(st2, r, p, v2)
            assert np.array_equal(v1, v2)
            build_view(st, r, 1 - p, v1)
            build_view(st2, r, 1 - p, v2)
            changed += not np.array_equal(v1, v2)
            checked += 1
            build_view(st, r, p, v1)
            apply_action(st, r, int(simple.functions[st[S_PHASE]](v1, simple.params, mem, bot_rng)))
    assert checked > 1000
    assert changed > checked // 2  # the perturbation is real: the opponent's hand did change


def test_replay_of_a_forfeited_game_stops_where_the_illegal_move_was(bots, tmp_path):
    import textwrap

    from arena.botkit.bot import load_bot_file
    from arena.engine.layout import G_FORFEIT, PH_DONE, S_PHASE
    from arena.engine.replay import replay_hands

    f = tmp_path / "late.py"
    f.write_text(
        textwrap.dedent("""
        from bots.simple import take_upcard, draw, big_gin, knock
        from bots.simple import discard as _discard
        from arena.engine.layout import V_TURN

        def discard(view, params, memory, rng):
            return 99 if view[V_TURN] >= 8 else _discard(view, params, memory, rng)
    """)
    )
    r = rules_array(STD)
    rec = play_batch(bots["simple"], load_bot_file(f), r, np.arange(1), record_log=True)
    assert rec.games[0, G_FORFEIT] == 1
    hands = list(replay_hands(0, r, rec.log))
    assert hands and hands[-1].state[S_PHASE] != PH_DONE  # stopped mid-hand, at the forfeit
