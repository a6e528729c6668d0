"""The Monte Carlo search bot (bots/monte_carlo.py) and its opponent model (arena/botkit/search.py)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.botkit import game_value
from arena.botkit.bot import BotError
from arena.botkit.lib import discardable, opponent_known, pile_cards
from arena.botkit.search import last_shed, rules_of, sample_state_counted, sample_state_weighted
from arena.engine.cards import popcount
from arena.engine.layout import (
    G_SIZE,
    G_WINNER,
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    S_CUR,
    S_DECK,
    S_HAND,
    S_PHASE,
    S_POINTS,
    S_SIZE,
    S_STOCK_POS,
    V_DECISION,
    V_HAND,
    V_HAND_NO,
    V_JUST_TAKEN,
    V_SEAT,
    V_SIZE,
    V_STOCK_N,
)
from arena.engine.melds import deadwood, in_any_meld, least_discards
from arena.engine.play import play_batch
from arena.engine.rng import RNG_WORDS, new_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, new_state
from arena.loading.load import load_bot
from arena.settings.rules import load_rules
from bots import monte_carlo as mc_module

EAAI = rules_array(load_rules("eaai"))


@pytest.fixture(scope="module")
def mc():
    return load_bot("monte-carlo")


@pytest.fixture(scope="module")
def mc_quick(mc):
    """A cheap setting for tests that play many games (same code, fewer samples)."""
    return mc.with_params("mc-quick", {"samples": 40})


def _positions(me_name: str, n_games: int, seed: int = 0):
    """(state, view) at every decision of seat 0 (``me_name``) against simple, first hand of each game."""
    bots = (load_bot(me_name), load_bot("simple"))
    mems = [np.zeros(b.memory_size) for b in bots]
    rngs = [new_rng(seed + 1), new_rng(seed + 2)]
    view = np.zeros(V_SIZE, dtype=np.int64)
    for g in range(n_games):
        st = new_state()
        begin_game(st, EAAI, seed + g, rngs[0], rngs[1], mems[0], mems[1], np.zeros(G_SIZE, dtype=np.int64))
        begin_hand(st, EAAI, seed + g, np.zeros(RNG_WORDS, dtype=np.uint64))
        while st[S_PHASE] != PH_DONE:
            p = int(st[S_CUR])
            build_view(st, EAAI, p, view)
            if p == 0:
                yield st.copy(), view.copy()
            b = bots[p]
            apply_action(st, EAAI, int(b.functions[st[S_PHASE]](view, b.params, mems[p], rngs[p])))


def test_every_decision_is_legal_under_each_preset_and_a_seed_replays_the_same_games(mc_quick):
    simple = load_bot("simple")
    seeds = np.arange(12)
    for preset in ("eaai", "standard", "oklahoma"):
        rules = rules_array(load_rules(preset))
        for pair in ((mc_quick, simple), (simple, mc_quick)):
            first = play_batch(*pair, rules, seeds, record_hands=True, record_log=True, forfeit=False)
            again = play_batch(*pair, rules, seeds, record_hands=True, record_log=True, forfeit=False)
            assert np.array_equal(first.games, again.games)
            assert np.array_equal(first.log, again.log) and len(first.log) > 1000
            assert (first.games[:, G_WINNER] >= 0).all()


def test_a_cpu_time_budget_cuts_searches_short_and_still_plays_legal_games(mc):
    import time

    capped = mc.with_params("mc-capped", {"samples": 4096, "time_ms": 0.05})
    simple_only = mc.with_params("mc-simple-rollouts", {"samples": 40, "rollout": 0})
    simple = load_bot("simple")
    play_batch(capped, simple, EAAI, np.arange(1), forfeit=False)  # compile
    t = time.perf_counter()
    rec = play_batch(capped, simple, EAAI, np.arange(6), forfeit=False)
    # 4096 samples per search would take seconds per game; the budget stops each search after 0.05 ms.
    assert time.perf_counter() - t < 1.0  # measured: 0.02 s capped, 3.7 s without the budget
    assert (rec.games[:, G_WINNER] >= 0).all()
    assert (play_batch(simple_only, simple, EAAI, np.arange(6), forfeit=False).games[:, G_WINNER] >= 0).all()


def test_a_work_budget_stops_a_search_where_that_many_samples_would_and_replays_exactly(mc):
    # With no discard search every searched decision has two options, and with one try a guess
    # deals one hand, so a sample is 3 units of work: 60 are 20 samples, stopped before the first
    # pruning check (every 32): the same games as samples = 20.
    simple = load_bot("simple")
    seeds = np.arange(4)
    one = {"candidates": 1, "tries": 1}
    capped = mc.with_params("mc-work", {**one, "samples": 1000, "work": 60})
    twenty = mc.with_params("mc-twenty", {**one, "samples": 20})
    full = mc.with_params("mc-full", {**one, "samples": 1000, "work": 0})
    games = [play_batch(b, simple, EAAI, seeds, record_log=True, forfeit=False).log for b in (capped, twenty, full)]
    assert np.array_equal(games[0], games[1])
    assert not np.array_equal(games[0], games[2])  # the budget did stop searches that would have gone on


def test_the_sampler_never_deals_the_opponent_a_card_the_player_can_see():
    rng = new_rng(5)
    st = np.empty(S_SIZE, dtype=np.int64)
    again = np.empty(V_SIZE, dtype=np.int64)
    n = 0
    for _true, view in _positions("gin-chasing", 40):
        visible = int(view[V_HAND]) | int(pile_cards(view))
        known = int(opponent_known(view))
        p = int(view[V_SEAT])
        for built in (False, True):
            sample_state_weighted(view, rng, st, 0.25, 0.25, 8, built, 0.3, 0.1)
            opp = int(st[S_HAND + 1 - p])
            assert opp & visible == 0, "dealt the opponent a card the player can see"
            assert opp & known == known and popcount(opp) == 10
            stock = st[S_DECK + st[S_STOCK_POS] : S_DECK + 52]
            assert len(stock) == view[V_STOCK_N] == len(set(stock.tolist()))
            stock_mask = sum(1 << int(c) for c in stock)
            assert stock_mask & (visible | opp) == 0  # every card is in exactly one place
            build_view(st, rules_of(view), p, again)
            assert np.array_equal(view, again)  # the sample is a state this player can't tell from the real one
            n += 1
    assert n > 800


def test_the_built_opponent_model_hits_more_of_the_true_hand_than_uniform_sampling():
    rng = new_rng(11)
    st = np.empty(S_SIZE, dtype=np.int64)
    hits = {"uniform": 0, "built + evidence": 0}
    for true_state, view in _positions("gin-chasing", 60, seed=100):
        if true_state[S_PHASE] != PH_DISCARD:
            continue
        p = int(view[V_SEAT])
        true = int(true_state[S_HAND + 1 - p])
        known = int(opponent_known(view))
        for _ in range(5):
            sample_state_weighted(view, rng, st, 1.0, 1.0, 1, False, 1.0, 1.0)
            hits["uniform"] += popcount(int(st[S_HAND + 1 - p]) & true & ~known)
            sample_state_weighted(view, rng, st, 0.25, 0.25, 8, True, 1.0, 1.0)
            hits["built + evidence"] += popcount(int(st[S_HAND + 1 - p]) & true & ~known)
    # Measured: about +17% hidden cards hit (scripts/bench_monte_carlo.py model).
    assert hits["built + evidence"] > 1.08 * hits["uniform"]


def test_the_game_value_table_is_a_fair_race_that_prizes_points_near_the_target():
    w = game_value.WIN_CHANCE
    i, j = np.meshgrid(np.arange(1, 150), np.arange(1, 150), indexing="ij")
    assert np.allclose(w[i, j] + w[j, i], 1.0)  # the model favours nobody
    assert np.all(np.diff(w[1:, 50]) <= 1e-12)  # needing more points never helps
    assert np.all(np.diff(w[50, 1:]) >= -1e-12)
    assert w[100, 100] == pytest.approx(0.5)
    # 10 points that reach the target win the game; the same 10 points early move the chance a little.
    assert game_value.win_chance(8 - 10, 100) == 1.0
    assert w[90, 100] - w[100, 100] < 0.1


def test_hand_value_reads_the_rollouts_points_for_the_right_seat():
    st = np.zeros(S_SIZE, dtype=np.int64)
    st[S_POINTS + 1] = 30  # seat 1 scored 30
    assert mc_module.hand_value(st, 1, 20, 100, True) == 1.0  # needed 20: won the game
    assert mc_module.hand_value(st, 0, 100, 20, True) == 0.0
    assert mc_module.hand_value(st, 0, 100, 100, False) == -30.0


def test_the_search_sometimes_overrules_its_heuristic_and_usually_agrees(mc):
    base = load_bot("marjj-style" if mc.param_dict()["heuristic"] else "gin-chasing")
    mem = np.zeros(mc.memory_size)
    rng = new_rng(3)
    agree = differ = 0
    for _st, view in _positions("gin-chasing", 40, seed=500):
        if view[19] != PH_DISCARD:  # V_DECISION
            continue
        mine = int(mc.functions[PH_DISCARD](view, mc.params, mem, rng))
        theirs = int(base.functions[PH_DISCARD](view, base.params, np.zeros(base.memory_size), rng))
        agree += mine == theirs
        differ += mine != theirs
    assert differ > 0.03 * (agree + differ)  # the search changes real decisions ..
    assert agree > differ  # .. but not on a whim


def test_the_overrule_threshold_follows_the_learned_type_and_a_stricter_one_overrules_only_where_a_looser_one_does(
    mc,
):
    """``confidence`` against a player that knocks at once, ``chase_confidence`` against a gin chaser, in
    between by the learned odds.  The threshold only picks among the searched results (the samples and
    the pruning don't depend on it), so on the same random numbers a stricter threshold overrules the
    heuristic at a subset of the positions a looser one does."""
    names = list(mc.param_names)
    p = mc.params.copy()
    p[names.index("confidence")], p[names.index("chase_confidence")] = 0.5, 2.0
    assert mc_module.confidence_against(p, 0.0) == 0.5
    assert mc_module.confidence_against(p, 1.0) == 2.0
    assert mc_module.confidence_against(p, 0.25) == pytest.approx(0.875)
    loose, strict = p.copy(), p.copy()
    loose[names.index("chase_confidence")], strict[names.index("chase_confidence")] = 0.0, 3.0
    mem = np.zeros(mc.memory_size)
    options = np.empty(11, dtype=np.int64)
    overruled = {"loose": 0, "strict": 0}
    for k, (_st, view) in enumerate(_positions("gin-chasing", 30, seed=700)):
        if view[V_DECISION] != PH_DISCARD:
            continue
        allowed = discardable(view)
        if view[V_JUST_TAKEN] >= 0:
            allowed &= ~(np.int64(1) << view[V_JUST_TAKEN])
        n = mc_module.discard_candidates(view, allowed, options, 5, 6.0, True)
        if n < 2:
            continue

        def choice(params, chase, view=view, k=k, n=n):
            z = mc_module.confidence_against(params, chase)
            return mc_module.search(view, params, new_rng(k), options, n, chase, mem, z)

        a, b = choice(loose, 1.0), choice(strict, 1.0)
        assert b == 0 or a != 0, k  # strict overrules only where loose does
        overruled["loose"] += a != 0
        overruled["strict"] += b != 0
        # Against a player that knocks at once both play the same confidence, so the same choice.
        assert choice(loose, 0.0) == choice(strict, 0.0)
    assert overruled["strict"] < overruled["loose"], overruled


def test_against_a_learned_gin_chaser_the_knock_threshold_is_its_own_and_mostly_leaves_marjj_styles_rule(mc):
    """A knock decision against a chaser must beat marjj-style's knock rule by ``knock_chase_confidence``
    standard errors (its searched knocks there were undercut far more often than its heuristic's).  On
    the same random numbers a stricter knock threshold overrules the rule at a subset of the positions a
    looser one does, the default almost nowhere; against a player that knocks at once it changes nothing."""
    from bots import marjj_style

    names = list(mc.param_names)
    p = mc.params.copy()
    assert mc_module.confidence_against(p, 0.0, True) == p[names.index("confidence")]
    assert mc_module.confidence_against(p, 1.0, True) == p[names.index("knock_chase_confidence")] == 10.0
    assert mc_module.confidence_against(p, 1.0) == 1.5  # discards and draws keep chase_confidence
    loose = p.copy()
    loose[names.index("knock_chase_confidence")] = 0.5
    chaser = np.zeros(mc.memory_size)
    chaser[mc_module.M_LOGODDS] = 8.0  # learned: it chases gin (chance 0.9997)
    plain = p.copy()
    plain[names.index("learn")] = 0.0  # chance 0: a player that knocks at once
    loose_plain = loose.copy()
    loose_plain[names.index("learn")] = 0.0
    knocks = {"loose": 0, "default": 0, "rule": 0, "positions": 0}
    for k, (_st, view) in enumerate(_positions("marjj-style", 60, seed=900)):
        if view[V_DECISION] != PH_KNOCK or deadwood(view[V_HAND]) == 0:
            continue
        rule = int(marjj_style.wants_knock(view, marjj_style.DEFAULTS))
        a = mc_module.knock(view, loose, chaser.copy(), new_rng(k))
        b = mc_module.knock(view, p, chaser.copy(), new_rng(k))
        assert b == rule or a != rule, k  # the default overrules the rule only where a looser one does
        knocks["positions"] += 1
        knocks["loose"] += a != rule
        knocks["default"] += b != rule
        knocks["rule"] += rule
        z = np.zeros(mc.memory_size)
        assert mc_module.knock(view, plain, z.copy(), new_rng(k)) == mc_module.knock(view, loose_plain, z, new_rng(k))
    assert knocks["positions"] >= 20 and 0 < knocks["rule"] < knocks["positions"], knocks
    assert knocks["default"] < knocks["loose"], knocks


def test_monte_carlo_beats_gin_chasing_significantly_in_a_small_seeded_match(mc):
    gin_chasing = load_bot("gin-chasing")
    seeds = np.arange(9000, 9040)  # 80 games: 80.0% won, the interval's low end 71.5% (160 games: 73.8%, 67.5%)
    a = play_batch(mc, gin_chasing, EAAI, seeds).games[:, G_WINNER] == 0
    b = play_batch(gin_chasing, mc, EAAI, seeds).games[:, G_WINNER] == 1
    pair = (a.astype(float) + b) / 2  # duplicate pairs: the same deals from both seats
    low = pair.mean() - 1.96 * pair.std(ddof=1) / np.sqrt(len(pair))
    assert low > 0.5, f"won {pair.mean():.1%} of {2 * len(seeds)} games, 95% CI low end {low:.1%}"


def test_guesses_handed_in_past_its_memory_replace_its_opponent_model_and_an_empty_slot_changes_nothing(mc_quick):
    """The hook of scripts/bench_posterior.py: the engine never allocates the slots, so games are as before."""
    extra = mc_module.M_GUESSES + 1 + 4
    same = overruled = 0
    for st, view in _positions("monte-carlo", 12, seed=40):
        if st[S_PHASE] not in (PH_DISCARD, PH_KNOCK):
            continue
        f = mc_quick.functions[int(st[S_PHASE])]
        plain = f(view, mc_quick.params, np.zeros(mc_quick.memory_size), new_rng(5))
        empty = f(view, mc_quick.params, np.zeros(extra), new_rng(5))
        assert empty == plain
        oracle = np.zeros(extra)
        oracle[mc_module.M_GUESSES] = 4
        oracle[mc_module.M_GUESSES + 1 :] = np.full(4, st[S_HAND + 1], dtype=np.int64).view(np.float64)
        told = f(view, mc_quick.params, oracle, new_rng(5))
        same += 1
        overruled += told != plain
    assert same > 60 and 0 < overruled < same


@pytest.mark.parametrize(
    "key, value",
    [
        ("samples", 0),
        ("candidates", 12),
        ("refuse_weight", 0.0),
        ("sharp_weight", 1.5),
        ("tries", 100),
        ("game_value", 0.5),
        ("gin_at", 11),
        ("rollout", 3),
        ("time_ms", -1),
        ("work", -5),
        ("rollout_quick", 3),
        ("chase_confidence", -0.5),
        ("chase_confidence", 11),
        ("knock_chase_confidence", -1),
        ("knock_chase_confidence", 10.5),
    ],
)
def test_out_of_range_parameters_are_refused_naming_the_parameter(mc, key, value):
    with pytest.raises(BotError, match=key):
        mc.with_params("bad", {key: value})


@pytest.mark.parametrize(
    "key, value", [("learn", 0.5), ("chase_prior", 1.0), ("quiet_learned", 0.0), ("rollout_take", 3)]
)
def test_out_of_range_learning_parameters_are_refused_naming_the_parameter(mc, key, value):
    with pytest.raises(BotError, match=key):
        mc.with_params("bad", {key: value})


def _showdown_view(knocker: int, opp_hand: str, outcome: int = 0, hand_no: int = 1, stock: int = 20) -> np.ndarray:
    """The first view of a hand after one whose showdown showed ``opp_hand`` (I am seat 0)."""
    from arena.engine.cards import mask_of
    from arena.engine.layout import V_KNOCK_LIMIT, V_SHOWN, V_SHOWN_KNOCKER, V_SHOWN_OPP_HAND, V_SHOWN_OUTCOME

    v = np.zeros(V_SIZE, dtype=np.int64)
    v[V_SEAT] = 0
    v[V_KNOCK_LIMIT] = 10
    v[V_STOCK_N] = stock
    v[V_SHOWN] = hand_no
    v[V_SHOWN_KNOCKER] = knocker
    v[V_SHOWN_OUTCOME] = outcome
    v[V_SHOWN_OPP_HAND] = mask_of(opp_hand)
    return v


def test_a_showdown_teaches_whether_the_opponent_knocks_at_once_or_chases_gin(mc):
    mem = np.zeros(mc.memory_size)
    prior = mc_module.chase_chance(mc.params, mem)
    mem[mc_module.M_STOCK] = 20  # the stock at my last decision of the hand shown: the schedule allows gin only
    # It knocked with 6 deadwood while the stock was long: a gin chaser would not have.
    mc_module.observe_showdown(_showdown_view(1, "Ac 2c 3c 4d 5d 6d 7h 8h 9h 6s"), mc.params, mem)
    eager = mc_module.chase_chance(mc.params, mem)
    assert eager < prior / 5
    # The same showdown seen again (the slots stay until the next hand ends) teaches nothing more.
    mc_module.observe_showdown(_showdown_view(1, "Ac 2c 3c 4d 5d 6d 7h 8h 9h 6s"), mc.params, mem)
    assert mc_module.chase_chance(mc.params, mem) == eager
    # I knocked and its final hand had 4 deadwood: it declined a knock, twice: it chases gin.
    for hand_no in (2, 3):
        mem[mc_module.M_STOCK] = 20
        mc_module.observe_showdown(_showdown_view(0, "Ac 2c 3c 4d 5d 6d 7h 8h 9h 4s", hand_no=hand_no), mc.params, mem)
    assert mc_module.chase_chance(mc.params, mem) > 1 - (1 - prior) / 5
    # A gin, or a hand it could not have knocked with, says nothing.
    before = mc_module.chase_chance(mc.params, mem)
    mc_module.observe_showdown(_showdown_view(1, "Ac 2c 3c 4d 5d 6d 7h 8h 9h Th", hand_no=4), mc.params, mem)
    mc_module.observe_showdown(_showdown_view(0, "Ac 2c 3c 4d 5d 6d 7h 8h Ks Qs", hand_no=5), mc.params, mem)
    assert mc_module.chase_chance(mc.params, mem) == before
    assert mem[mc_module.M_STOCK] == 20  # and every decision notes the stock for the next showdown


def test_a_late_knock_within_the_schedule_is_no_evidence(mc):
    mem = np.zeros(mc.memory_size)
    mem[mc_module.M_STOCK] = 3  # stock nearly out: the schedule allows 10
    mc_module.observe_showdown(_showdown_view(1, "Ac 2c 3c 4d 5d 6d 7h 8h 9h 6s"), mc.params, mem)
    assert mem[mc_module.M_LOGODDS] == 0


def _learned_chance(mc_bot, opponent: str, seed: int) -> float:
    """monte-carlo's learned chance that ``opponent`` chases gin after one whole game, it in seat 0."""
    bots = (mc_bot, load_bot(opponent))
    mems = [np.zeros(b.memory_size) for b in bots]
    rngs = [new_rng(seed + 1), new_rng(seed + 2)]
    view = np.zeros(V_SIZE, dtype=np.int64)
    st = new_state()
    row = np.zeros(G_SIZE, dtype=np.int64)
    begin_game(st, EAAI, seed, rngs[0], rngs[1], mems[0], mems[1], row)
    while True:
        begin_hand(st, EAAI, seed, np.zeros(RNG_WORDS, dtype=np.uint64))
        while st[S_PHASE] != PH_DONE:
            p = int(st[S_CUR])
            build_view(st, EAAI, p, view)
            b = bots[p]
            apply_action(st, EAAI, int(b.functions[st[S_PHASE]](view, b.params, mems[p], rngs[p])))
        if end_hand(st, EAAI, row):
            break
    # The last hand's showdown is read at the next decision: show it one.
    build_view(st, EAAI, 0, view)
    mc_module.observe_showdown(view, mc_bot.params, mems[0])
    return float(mc_module.chase_chance(mc_bot.params, mems[0]))


def test_over_a_game_it_learns_that_simple_knocks_at_once_and_gin_chasing_does_not(mc_quick):
    """Simple always knocks when it may, so its showdowns can only say "knocks at once"; gin-chasing
    knocks by the schedule the bot assumes and declines other knocks.  A short game may show
    nothing telling, so four games each (fixed seeds): every one moves the right way or not at all."""
    prior = float(mc_quick.param_dict()["chase_prior"])
    vs_simple = [_learned_chance(mc_quick, "simple", seed) for seed in range(41, 45)]
    vs_chaser = [_learned_chance(mc_quick, "gin-chasing", seed) for seed in range(41, 45)]
    assert max(vs_simple) <= prior and sum(c < prior / 10 for c in vs_simple) >= 3, vs_simple
    assert min(vs_chaser) >= prior and sum(c > 1 - (1 - prior) / 10 for c in vs_chaser) >= 2, vs_chaser


def test_the_sharp_evidence_deals_hands_simple_could_have_shed_its_last_card_from_and_kept_its_takes_in():
    """Simple sheds a least-deadwood card (its hand plus its latest discard is the hand it shed from),
    and takes a pile card only to meld it, then keeps the meld."""
    rng = new_rng(13)
    st = np.empty(S_SIZE, dtype=np.int64)
    positions = true_fits = takes = true_melded = 0
    fits = {1.0: 0, 0.05: 0}
    melded = {1.0: 0, 0.05: 0}
    hits = {1.0: 0, 0.05: 0}
    for true_state, view in _positions("gin-chasing", 60, seed=200):
        last = last_shed(view)
        if last < 0:
            continue
        p = int(view[V_SEAT])
        true = int(true_state[S_HAND + 1 - p])
        known = int(opponent_known(view))
        positions += 1
        true_fits += _sheds_least(true, last)
        takes += popcount(known)
        true_melded += _melded(true, known)
        for weight in fits:
            for _ in range(4):
                sample_state_weighted(view, rng, st, 0.25, 0.25, 8, True, 1.0, weight)
                opp = int(st[S_HAND + 1 - p])
                fits[weight] += _sheds_least(opp, last)
                melded[weight] += _melded(opp, known)
                hits[weight] += popcount(opp & true & ~known)
    assert positions > 300 and takes > 100
    # Both are true of Simple (its repeat guard aside) ...
    assert true_fits >= 0.97 * positions and true_melded >= 0.97 * takes
    # ... the sampler follows them (measured: 93% of its hands pass the discard test against 80%
    # without, 83% of the takes sit in melds against 39%) ...
    assert fits[0.05] > 0.9 * 4 * positions and fits[0.05] > 1.1 * fits[1.0]
    assert melded[0.05] > 0.8 * 4 * takes and melded[0.05] > 1.8 * melded[1.0]
    # ... and deals more of the true hand (measured: +6%).
    assert hits[0.05] > 1.04 * hits[1.0]


def test_the_counted_sampler_deals_what_the_weighted_one_does_and_says_how_many_hands_it_tried():
    """A search bounds its work by the hands the rejection sampler deals (``work``), so the count
    must be the loop's own: one per hand dealt, ``tries`` at most, and 1 whenever the first is kept."""
    st = np.empty(S_SIZE, dtype=np.int64)
    st2 = np.empty(S_SIZE, dtype=np.int64)
    tried = []
    for _true, view in _positions("gin-chasing", 20, seed=300):
        for tries in (1, 8):
            r1, r2 = new_rng(len(tried)), new_rng(len(tried))
            w1 = sample_state_weighted(view, r1, st, 0.25, 0.25, tries, True, 1.0, 0.1)
            w2, dealt = sample_state_counted(view, r2, st2, 0.25, 0.25, tries, True, 1.0, 0.1)
            assert w1 == w2 and np.array_equal(st, st2) and np.array_equal(r1, r2)
            assert 1 <= dealt <= tries
            tried.append(dealt)
        # No evidence: every hand is kept, so one is dealt.
        assert sample_state_counted(view, new_rng(1), st, 1.0, 1.0, 8, True, 1.0, 1.0)[1] == 1
    # The evidence does reject hands (measured: about a third of the guesses use all eight).
    assert max(tried) == 8 and 1 in tried


def _sheds_least(hand: int, card: int) -> bool:
    before = hand | (1 << card)
    return bool((least_discards(before, before)[1] >> card) & 1)


def _melded(hand: int, cards: int) -> int:
    """How many of ``cards`` (held in ``hand``) sit in a meld of ``hand``."""
    return sum(in_any_meld(hand & ~(1 << c), c) for c in range(52) if (cards >> c) & 1)


def _guarded_discard_positions(n_games: int):
    """(view, memory, blocked, rest) at simple's discards, with monte-carlo's repeat-guard memory set so that
    the card just drawn was already paired with every discard within marjj-style's slack of the least
    deadwood (``blocked``): only discards far above it are left (``rest``: card -> deadwood left)."""
    slack = float(mc_module.marjj_style.PARAMS["slack"])
    memory_size = load_bot("monte-carlo").memory_size
    for _, view in _positions("simple", n_games, seed=300):
        if view[V_DECISION] != PH_DISCARD:
            continue
        hand = int(view[V_HAND])
        legal = int(discardable(view))
        taken = int(view[V_JUST_TAKEN])
        drawn = taken if taken >= 0 else next(c for c in range(52) if (legal >> c) & 1)
        left = {c: deadwood(hand & ~(1 << c)) for c in range(52) if (legal >> c) & 1}
        least = min(left.values())
        blocked = {c for c, d in left.items() if d <= least + slack}
        if len(blocked) == len(left):
            continue
        memory = np.zeros(memory_size)
        memory[0] = view[V_HAND_NO] + 1  # the guard's slots belong to this hand ..
        memory[1] = hand if taken >= 0 else hand & ~(1 << drawn)  # .. the hand before the draw ..
        pairs = np.array([sum(1 << c for c in blocked)], dtype=np.int64)  # {drawn, drawn} blocks it too
        memory[2 + drawn] = pairs.view(np.float64)[0]  # .. and the drawn card's pairs, as the int64's bits
        yield view, memory, blocked, {c: d for c, d in left.items() if c not in blocked}


def test_a_repeat_guard_that_leaves_only_costly_discards_gets_the_least_deadwood_of_them_not_an_unset_card(mc):
    # Found as a forfeit ("discarded a card it does not hold") in a 3,000-game screen: marjj-style's score
    # drops every discard far above the least deadwood of all legal discards, so when the guard took the
    # others no candidate was left and the bot played an unset option slot.
    rng = new_rng(5)
    seen = 0
    for view, memory, blocked, rest in _guarded_discard_positions(12):
        card = int(mc.functions[PH_DISCARD](view, mc.params, memory, rng))
        assert card in rest, (card, sorted(blocked), rest)
        assert rest[card] == min(rest.values())
        seen += 1
    assert seen >= 20
