"""Decision analysis: planted blunders are flagged, equivalent choices cost nothing, tables are exact.

The positions are written by hand (both hands, the pile, the stock), so
what the best answer is does not depend on a bot: breaking a made meld,
passing up a gin and throwing the card the opponent needs for gin must cost
at least the blunder threshold; discarding one of two kings that only
differ by a suit nothing else distinguishes must cost 0 within its error.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.analysis import decisions as dec
from arena.engine.cards import mask_of, parse_card, parse_cards
from arena.engine.layout import (
    PH_DISCARD,
    PH_KNOCK,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_DISCARDED,
    S_HAND,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCKER,
    S_MULT,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    S_UPCARD,
    S_UPCARD_TAKER,
    V_SIZE,
)
from arena.engine.rules_array import rules_array
from arena.engine.step import build_view, new_state
from arena.settings.rules import load_rules
from bots import analyzer
from bots.analyzer import MAX_OPTIONS, evaluate

RULES = rules_array(load_rules("standard"))
BLUNDER = dec.AnalysisSettings().blunder / 1000


def position(
    mine: str,
    theirs: str,
    pile: str,
    *,
    phase: int,
    scores=(70, 70),
    opp_taken: str = "",
    my_discarded: str = "",
    stock_n=0,
    seed=3,
    limit=10,
):
    """A state where seat 0 (non-dealer) decides ``phase`` holding ``mine``; ``limit``: this hand's knock limit.

    The stock is the other cards, shuffled; with ``stock_n`` only that many,
    the others go under ``pile`` in the discard pile.
    """
    st = new_state()
    my, op, pl = parse_cards(mine), parse_cards(theirs), parse_cards(pile)
    used = my + op + pl
    assert len(set(used)) == len(used), "a card is listed twice"
    rest = np.array([c for c in range(52) if c not in used], dtype=np.int64)
    np.random.default_rng(seed).shuffle(rest)
    if stock_n:
        pl = rest[stock_n:].tolist() + pl
        rest = rest[:stock_n]
    stock_n = len(rest)
    st[S_DECK + 52 - stock_n : S_DECK + 52] = rest
    st[S_STOCK_POS] = 52 - stock_n
    for i, c in enumerate(pl):
        st[S_PILE + i] = c
    st[S_PILE_N] = len(pl)
    st[S_HAND] = mask_of(my)
    st[S_HAND + 1] = mask_of(op)
    st[S_TAKEN + 1] = mask_of(opp_taken) if opp_taken else 0
    st[S_DISCARDED] = mask_of(my_discarded) if my_discarded else 0
    st[S_PHASE] = phase
    st[S_CUR] = 0
    st[S_DEALER] = 1
    st[S_TURN] = 6
    st[S_KNOCK_LIMIT] = limit
    st[S_MULT] = 1
    st[S_JUST_TAKEN] = -1
    st[S_SCORE], st[S_SCORE + 1] = scores
    st[S_UPCARD] = pl[0]
    st[S_UPCARD_TAKER] = -1
    st[S_KNOCKER] = -1
    st[S_OUTCOME] = -1
    return st


def grade(st, samples=256, perfect=False, seed=11):
    """``{option: (equity, se of its difference from the best)}`` and the best option."""
    view = np.zeros(V_SIZE, dtype=np.int64)
    build_view(st, RULES, int(st[S_CUR]), view)
    opts = np.zeros(MAX_OPTIONS, dtype=np.int64)
    mean, se, dse = np.zeros(MAX_OPTIONS), np.zeros(MAX_OPTIONS), np.zeros(MAX_OPTIONS)
    rng = dec.decision_rng(seed, 0, 0)
    truth = st.copy() if perfect else np.empty(0, dtype=np.int64)
    n, best = evaluate(view, samples, rng, truth, opts, mean, se, dse)
    return {int(opts[k]): (float(mean[k]), float(dse[k])) for k in range(n)}, int(opts[best])


def loss(table, best, option):
    return table[best][0] - table[option][0]


def test_breaking_a_made_meld_is_a_blunder():
    # 4-5-6 of spades and three 8s are made; the rest is dead weight.
    st = position("4s 5s 6s 8d 8h 8c 2d 9h Jc Qc Kd", "Ac 3c 5c 7c 9c Th Js Qs 2h 4h", "Ts", phase=PH_DISCARD)
    table, best = grade(st)
    assert best not in parse_cards("4s 5s 6s 8d 8h 8c")
    assert loss(table, best, parse_card("5s")) >= BLUNDER, table  # breaks the run in the middle
    assert loss(table, best, parse_card("8h")) >= BLUNDER, table  # breaks the set


def test_passing_gin_is_a_blunder():
    # After the discard all ten cards meld and two cards are left in the stock: knocking is gin and
    # wins the game from 70; playing on makes the hand dead (RULES step 4).
    st = position("4s 5s 6s 8d 8h 8c 2d 3d 4d 5d", "Ac 3c 5c 7c 9c Th Js Qs 2h 4h", "Ts Kc", phase=PH_KNOCK, stock_n=2)
    table, best = grade(st)
    assert best == 1
    assert table[1][0] > 0.99  # gin: 25 + 62 points, the game
    assert table[0][0] == pytest.approx(0.5)  # a dead hand at 70-70: an even game
    assert loss(table, best, 0) >= BLUNDER, table


@pytest.mark.parametrize("perfect", [False, True])
def test_throwing_the_card_that_gives_the_opponent_gin_is_a_blunder(perfect):
    # The opponent took nine melded cards from the pile (so the sampled deals know them too); 6s makes
    # it gin, worth the game at 75.  Anything else it can at best knock with, and my 6 or so deadwood
    # undercuts that knock.  They were my discards: nine turns in, my rollouts no longer knock early.
    theirs = "3s 4s 5s 7d 7c 7h 9c Tc Jc Qh"
    known = "3s 4s 5s 7d 7c 7h 9c Tc Jc"
    mine = "Ac 2c 3c 8d 8h 8s 4h 5h 6h 6s 2d"
    st = position(mine, theirs, "Qd", phase=PH_DISCARD, opp_taken=known, my_discarded=known, scores=(40, 75))
    table, best = grade(st, perfect=perfect)
    assert best != parse_card("6s")
    assert table[parse_card("6s")][0] < 0.05, table  # the opponent gins: the game is lost
    assert loss(table, best, parse_card("6s")) >= BLUNDER, table


def test_choices_equal_by_symmetry_lose_nothing_within_the_error():
    # Clubs and diamonds play no part but for one king each: swapping the two suits maps the position to
    # itself.  Throwing a king is the best discard (the rest is two made runs); the knock limit of 1 keeps
    # the hand going after it, so the two kings' rollouts really differ deal by deal.
    st = position("Kc Kd Ah 2h 3h 5s 6s 7s 8s 9s Ts", "4h 5h 6h 8h 9h Jh Qh 2s 3s Js", "Qs", phase=PH_DISCARD, limit=1)
    table, best = grade(st, samples=512)
    kc, kd = table[parse_card("Kc")][0], table[parse_card("Kd")][0]
    # the paired difference of the two kings, deal by deal, is within 3 standard errors of 0
    se = max(table[parse_card("Kc")][1], table[parse_card("Kd")][1])
    assert abs(kc - kd) <= 3 * se + 1e-9, (kc, kd, se)
    assert min(loss(table, best, parse_card("Kc")), loss(table, best, parse_card("Kd"))) <= 3 * se + 1e-9


def test_the_same_seed_grades_the_same_and_another_seed_differently():
    st = position("4s 5s 6s 8d 8h 8c 2d 9h Jc Qc Kd", "Ac 3c 5c 7c 9c Th Js Qs 2h 4h", "Ts", phase=PH_DISCARD)
    a, _ = grade(st, samples=32, seed=5)
    b, _ = grade(st, samples=32, seed=5)
    c, _ = grade(st, samples=32, seed=6)
    assert a == b
    assert a != c


def test_settings_are_checked_with_one_line_naming_the_key(tmp_path):
    with pytest.raises(dec.AnalysisError, match="samples"):
        dec.AnalysisSettings(samples=1)
    with pytest.raises(dec.AnalysisError, match="blunder"):
        dec.AnalysisSettings(doubtful=60.0, blunder=50.0)
    p = tmp_path / "a.toml"
    p.write_text("[analysis]\nsampels = 10\n")
    with pytest.raises(dec.AnalysisError, match="sampels"):
        dec.load_settings(p)
    p.write_text("[analysis]\nsamples = 64\nblunder = 80\n")
    s = dec.load_settings(p, samples=None, seed=9)
    assert (s.samples, s.blunder, s.seed) == (64, 80.0, 9)
    p.write_bytes(b"# r\xe9glages\n[analysis]\nsamples = 64\n")  # not UTF-8: was a UnicodeDecodeError
    with pytest.raises(dec.AnalysisError, match="a.toml is not UTF-8 text"):
        dec.load_settings(p)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[analysys]\nsamples = 8\n", "unknown table or key 'analysys' (did you mean 'analysis'?"),
        ("samples = 8\n", "samples is outside the [analysis] table; put it under [analysis]"),
        ("# nothing\n", "no [analysis] table (it sets samples, seed, perfect, doubtful, blunder)"),
        ("[analysis]\nsampels = 8\n", "[analysis] has no key 'sampels' (did you mean 'samples'?"),
    ],
)
def test_an_analysis_file_that_sets_nothing_it_seems_to_is_refused_naming_the_key(tmp_path, body, message):
    """A misspelt or missing [analysis] table was ignored: the analysis ran with the defaults, its 8 samples
    silently 128."""
    p = tmp_path / "a.toml"
    p.write_text(body)
    with pytest.raises(dec.AnalysisError) as err:
        dec.load_settings(p)
    assert str(err.value).startswith(f"{p}: ") and message in str(err.value), err.value


def test_error_rates_are_mean_losses_with_game_clustered_t_intervals():
    import pandas as pd

    rows = pd.DataFrame(
        {
            "bot": ["a"] * 6 + ["b"] * 2,
            "kind": ["discard", "discard", "knock", "discard", "draw", "knock", "draw", "draw"],
            "game_id": [1, 1, 1, 2, 2, 2, 1, 2],
            "loss": [0.010, 0.0, 0.060, 0.030, 0.0, 0.0, 0.001, 0.003],
        }
    )
    # split in two parts, as the store streams them
    r = dec.error_rates([rows.iloc[:3], rows.iloc[3:]], doubtful=20.0, blunder=50.0).set_index(["bot", "kind"])
    assert r.loc[("a", "all"), "decisions"] == 6
    assert r.loc[("a", "all"), "error_rate"] == pytest.approx(1000 * 0.1 / 6)
    assert r.loc[("a", "discard"), "error_rate"] == pytest.approx(1000 * 0.04 / 3)
    assert r.loc[("a", "all"), "blunders"] == 1 and r.loc[("a", "all"), "doubtful"] == 1
    assert r.loc[("a", "discard"), "doubtful"] == 1 and r.loc[("a", "knock"), "blunders"] == 1
    assert r.loc[("b", "draw"), "error_rate"] == pytest.approx(2.0)
    # two games with per-game loss sums 70 and 30 over 3 decisions each: cluster-robust se, and the t
    # quantile on 2 - 1 degrees of freedom (12.71), as every interval of the report, not the normal 1.96
    se = np.sqrt(2 / 1 * ((70 - 100 / 6 * 3) ** 2 + (30 - 100 / 6 * 3) ** 2)) / 6
    assert r.loc[("a", "all"), "ci_high"] - r.loc[("a", "all"), "error_rate"] == pytest.approx(12.7062 * se, rel=1e-4)
    assert list(r.loc["a"].index) == ["draw", "discard", "knock", "all"]


def grade_with(st, samples, seed=11, **over):
    """``(options, mean, se, diff_se, best)`` by :func:`bots.analyzer.evaluate_with` with ``over`` set."""
    params = dict(analyzer.PARAMS)
    params.update(over)
    view = np.zeros(V_SIZE, dtype=np.int64)
    build_view(st, RULES, int(st[S_CUR]), view)
    opts = np.zeros(MAX_OPTIONS, dtype=np.int64)
    mean, se, dse = np.zeros(MAX_OPTIONS), np.zeros(MAX_OPTIONS), np.zeros(MAX_OPTIONS)
    rng = dec.decision_rng(seed, 0, 0)
    p = np.array(list(params.values()), dtype=np.float64)
    n, best = analyzer.evaluate_with(view, samples, rng, np.empty(0, dtype=np.int64), p, opts, mean, se, dse)
    return opts[:n].copy(), mean[:n].copy(), se[:n].copy(), dse[:n].copy(), int(best)


def test_the_second_stage_samples_only_the_options_close_to_the_best():
    # The two kings are close (equal by symmetry); breaking a made run is far behind: only the close
    # options get the second stage's deals, so their errors shrink and the others' figures stay as they were.
    st = position("Kc Kd Ah 2h 3h 5s 6s 7s 8s 9s Ts", "4h 5h 6h 8h 9h Jh Qh 2s 3s Js", "Qs", phase=PH_DISCARD, limit=1)
    opts, m0, se0, _, b0 = grade_with(st, 64, refine=0.0)
    opts1, m1, se1, dse1, b1 = grade_with(st, 64, refine=3.0, refine_z=2.0)
    assert np.array_equal(opts, opts1)
    kings = [list(opts).index(parse_card(c)) for c in ("Kc", "Kd")]
    far = [k for k in range(len(opts)) if m0[b0] - m0[k] > 0.2]
    assert far, m0  # some discards break a run: clearly worse
    for k in kings:
        assert se1[k] < 0.75 * se0[k], (se0, se1)  # 256 deals instead of 64: about half the error
    for k in far:
        assert m1[k] == m0[k] and se1[k] == se0[k]  # not sampled again
    assert m1[b1] == m1.max() and dse1[b1] == 0.0  # the best is the highest mean: losses are never negative
    assert opts1[b1] in parse_cards("Kc Kd")


def test_a_clear_choice_costs_no_second_stage():
    # Passing gin: no option is close to knocking, so the refined grade is the plain one.
    st = position("4s 5s 6s 8d 8h 8c 2d 3d 4d 5d", "Ac 3c 5c 7c 9c Th Js Qs 2h 4h", "Ts Kc", phase=PH_KNOCK, stock_n=2)
    plain = grade_with(st, 64, refine=0.0)
    refined = grade_with(st, 64, refine=3.0)
    for a, b in zip(plain, refined, strict=True):
        assert np.array_equal(a, b)


def test_the_error_rate_table_shows_two_long_variant_names_whole():
    import pandas as pd

    names = ["monte-carlo:samples=100,candidates=3", "monte-carlo:samples=100,candidates=4"]
    rates = pd.DataFrame(
        {
            "bot": names,
            "kind": ["discard", "discard"],
            "decisions": [10, 12],
            "error_rate": [1.5, 2.5],
            "ci_low": [0.5, 1.0],
            "ci_high": [2.5, 4.0],
            "doubtful": [1, 2],
            "blunders": [0, 1],
        }
    )
    lines = dec.rates_text(rates).splitlines()
    assert [line.split()[0] for line in lines[1:]] == names
    assert len({line.index("discard") for line in lines[1:]}) == 1  # the columns still line up
