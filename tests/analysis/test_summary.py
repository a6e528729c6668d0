"""A Summary built chunk by chunk gives the tables of the whole table, and histograms give exact box plots.

The report streams a run through Summary.of_chunk and adds the pieces; these
tests pin that the pieces add up to exactly what one summary of the whole
games table gives (in any order of chunks), that convergence rows equal an
independent computation on the first pairs, and that quartiles and whiskers
from integer histograms equal numpy's on the values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_stats import build_run

from arena.analysis import stats as st
from arena.analysis.summary import FIELDS, LADDER, MOMENTS, Hist, Summary, merge

BOTS = {"simple": "simple", "random": "random", "random-b": "random"}


@pytest.fixture(scope="module")
def run_tables():
    """A real round robin plus a self-play matchup, with a void game, a draw and a forfeit."""
    games, hands = build_run(BOTS, n_pairs=60)
    sp = games[games["matchup"] == "random vs random-b"].copy()
    sp["matchup"], sp["bot_b"] = "random vs random", "random"
    sp["bot0"] = sp["bot1"] = "random"
    sp["winner"] = np.where(sp["winner_seat"] >= 0, "random", "")
    sp["game_id"] += 100_000
    sp_hands = hands[hands["game_id"].isin(sp["game_id"] - 100_000)].copy()
    sp_hands["game_id"] += 100_000
    games = pd.concat([games, sp], ignore_index=True)
    hands = pd.concat([hands, sp_hands], ignore_index=True)
    rows = games.index[games["matchup"] == "simple vs random"]
    void, draw, forfeit = rows[17], rows[40], rows[41]
    games.loc[void, ["winner", "error"]] = ["", "worker crashed, game seed 99"]
    games.loc[draw, ["winner", "winner_seat"]] = ["", -1]
    games.loc[forfeit, "forfeit_seat"] = 0
    games.loc[forfeit, "error"] = "bot 'random' made an illegal discard, game seed 5"
    return games, hands


def chunks_of(games: pd.DataFrame, hands: pd.DataFrame | None, size: int):
    """Pairs lo..lo+size-1 of one matchup per chunk, as the runner cuts a run."""
    for _, g in games.groupby("matchup", sort=False):
        for lo in range(0, int(g["pair"].max()) + 1, size):
            part = g[(g["pair"] >= lo) & (g["pair"] < lo + size)]
            yield part, None if hands is None else hands[hands["game_id"].isin(part["game_id"])]


def assert_frames_close(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    assert list(a.columns) == list(b.columns), what
    assert len(a) == len(b), what
    for c in a.columns:
        if a[c].dtype.kind in "fiub":
            assert np.allclose(a[c].to_numpy(float), b[c].to_numpy(float), rtol=1e-12, atol=1e-12, equal_nan=True), (
                what,
                c,
            )
        else:
            assert (a[c].astype(str) == b[c].astype(str)).all(), (what, c)


def tables(s) -> dict[str, pd.DataFrame]:
    out = {
        "pair_stats": st.pair_stats(s),
        "bot_stats": st.bot_stats(s),
        "outcome_mix": st.outcome_mix(s),
        "bradley_terry": st.bradley_terry(s),
        "bt_anchor_fisher": st.bradley_terry(s, anchor="random", method="fisher"),
        "leaderboard": st.leaderboard(s),
        "first_mover": st.first_mover(s),
        "convergence": st.convergence(s),
        "convergence_10": st.convergence(s, points=10),
    }
    for what in st.WIN_MATRICES:
        out[f"win_matrix_{what}"] = st.win_matrix(s, what).reset_index()
    return out


@pytest.mark.parametrize("size", [1, 7, 25])
def test_chunked_summary_equals_whole_table(run_tables, size):
    games, hands = run_tables
    whole = Summary.of_chunk(games, hands)
    parts = [Summary.of_chunk(g, h) for g, h in chunks_of(games, hands, size)]
    assert len(parts) == 4 * -(-60 // size)
    rng = np.random.default_rng(size)
    chunked = merge(parts[i] for i in rng.permutation(len(parts)))  # adding is order-free
    assert chunked.n_games == whole.n_games == len(games)
    want, got = tables(whole), tables(chunked)
    for key in want:
        assert_frames_close(want[key], got[key], key)
    # the chunked summary gives what the table itself gives (the same code path), with hands
    assert_frames_close(st.bot_stats(games, hands), got["bot_stats"], "bot_stats from the frame")
    assert "points_per_hand_won" in got["bot_stats"].columns
    for bot in whole.bots:
        for kind in ("margin", "hands", "tph", "won_points", "lost_points", "hand_turns"):
            a, b = whole.hist(bot, kind), chunked.hist(bot, kind)
            assert (a.lo, a.counts.tolist()) == (b.lo, b.counts.tolist()), (bot, kind)
    assert whole.errors == chunked.errors == {"worker crashed": 1, "bot 'random' made an illegal discard": 1}


def test_convergence_rows_match_the_first_pairs(run_tables):
    """Each convergence row is pair_stats of the matchup's first ``pairs`` pairs, computed afresh."""
    games, hands = run_tables
    chunked = merge(Summary.of_chunk(g, h) for g, h in chunks_of(games, hands, 9))
    cv = st.convergence(chunked)
    name = "random vs random-b"
    rows = cv[cv["matchup"] == name]
    assert rows["pairs"].tolist() == LADDER[LADDER <= 60].tolist()  # every kept position; 60 is the last
    g = games[games["matchup"] == name]
    for r in rows.itertuples():
        ps = st.pair_stats(g[g["pair"] < r.pairs]).iloc[0]
        assert (ps["games"], ps["win_rate_a"]) == (r.games, pytest.approx(r.win_rate)), r.pairs
        if r.pairs >= 2:
            assert (ps["win_rate_ci_low"], ps["win_rate_ci_high"]) == pytest.approx((r.ci_low, r.ci_high))
    # every matchup ends at its final estimate
    other = cv[cv["matchup"] != name].groupby("matchup").tail(1).set_index("matchup")
    assert (other["games"] == st.pair_stats(games).set_index("matchup").loc[other.index, "games"]).all()


def test_same_chunk_twice_is_refused(run_tables):
    games, hands = run_tables
    part = next(iter(chunks_of(games, hands, 10)))
    a = Summary.of_chunk(*part)
    before = a.n_games
    with pytest.raises(ValueError, match="already in the summary"):
        a + Summary.of_chunk(*part)
    assert a.n_games == before  # a failed add changes nothing
    b = Summary.of_chunk(*list(chunks_of(games, hands, 10))[1])
    c = a + b
    assert (a.n_games, b.n_games, c.n_games) == (before, 20, before + 20)  # operands untouched


def test_box_stats_from_histograms_equal_numpy():
    rng = np.random.default_rng(4)
    pieces = [rng.integers(-80, 40, 500), rng.poisson(30, 801) - 5, np.array([7]), rng.integers(200, 210, 13)]
    h = Hist.of(pieces[0])
    for p in pieces[1:]:
        h.add(Hist.of(p))
    h.add(Hist.of([]))
    values = np.concatenate(pieces)
    qs = [0, 1, 25, 50, 62.5, 75, 99, 100]
    assert np.allclose(h.percentile(qs), np.percentile(values, qs), rtol=0, atol=1e-12)
    box = h.box("x")
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    iqr = q3 - q1
    assert (box["q1"], box["med"], box["q3"]) == pytest.approx((q1, med, q3))
    # Tukey's whiskers, as matplotlib computes them from the values: the furthest values within 1.5 IQR
    # (the fences themselves drew values no game has, a whisker at 4.5 hands)
    from matplotlib import cbook

    (ref,) = cbook.boxplot_stats(values)
    assert (box["whislo"], box["whishi"]) == (ref["whislo"], ref["whishi"])
    assert box["whishi"] in values and box["whislo"] in values
    assert iqr > 0
    assert box["mean"] == pytest.approx(values.mean())
    assert np.isnan(Hist.of([]).box("empty")["med"])


def test_summary_histograms_hold_each_bots_values(run_tables):
    """Margins and hands per game per bot (self-play left out), against the games table."""
    games, _ = run_tables
    s = Summary.of_chunk(games)
    cross = games[games["bot_a"] != games["bot_b"]]
    swap = cross["swap"].to_numpy() == 1
    ma = np.where(swap, cross["score1"] - cross["score0"], cross["score0"] - cross["score1"])
    for bot in s.bots:
        mine = np.concatenate([ma[cross["bot_a"] == bot], -ma[cross["bot_b"] == bot]])
        box = s.hist(bot, "margin").box(bot)
        assert (box["q1"], box["med"], box["q3"], box["mean"]) == pytest.approx(
            (*np.percentile(mine, [25, 50, 75]), mine.mean())
        )
        hh = np.concatenate([cross.loc[cross["bot_a"] == bot, "hands"], cross.loc[cross["bot_b"] == bot, "hands"]])
        assert s.hist(bot, "hands").counts.sum() == hh.size == 240  # two opponents, 120 games each
        assert s.hist(bot, "hands").mean() == pytest.approx(hh.mean())


def test_the_sums_are_named_for_what_they_sum(run_tables):
    # Every ratio's six sums are fields; each name is one column; and they hold what their names say.
    games, _ = run_tables
    assert len(set(FIELDS)) == len(FIELDS)
    assert all(name in FIELDS for six in MOMENTS.values() for name in six)
    one = games[games["matchup"] == "simple vs random"]
    s = Summary.of_chunk(one)
    res = np.where(one["winner"] == "simple", 1.0, np.where(one["winner"] == "", 0.5, 0.0))
    ok = ~((one["error"].fillna("") != "") & (one["winner"] == "")).to_numpy()
    per_pair = pd.DataFrame({"pair": one["pair"], "n": ok * 1.0, "s": np.where(ok, res, 0.0)}).groupby("pair").sum()
    per_pair = per_pair[per_pair["n"] > 0]
    assert s.total("win_pairs") == len(per_pair)
    assert s.total("win_games") == per_pair["n"].sum() == ok.sum()
    assert s.total("win_score") == per_pair["s"].sum()
    assert s.total("win_score_sq") == (per_pair["s"] ** 2).sum()
    assert s.total("win_score_x_games") == (per_pair["s"] * per_pair["n"]).sum()
    assert s.total("win_games_sq") == (per_pair["n"] ** 2).sum()
    assert s.total("hand_count") == one["hands"].sum()


def test_error_counts_keep_what_went_wrong_but_not_the_game():
    """An external bot's timeout read as "raised an exception in take_upcard()" in the report and the
    terminal: the reason was cut off with the seed.  The key keeps the reason (or the exception's class),
    so a run's errors still fall into a few lines."""
    from arena.analysis.summary import error_key

    timeout = "bot 'slow' (seat 1) raised an exception in draw(), game seed {}: ExternalBotError: timeout: no answer"
    assert {error_key(timeout.format(s)) for s in (1, 99)} == {"bot 'slow' (seat 1) failed in draw(): timeout"}
    crashed = "bot 'c' (seat 0) raised an exception in knock(), game seed 5: ExternalBotError: crashed: exited 1"
    assert error_key(crashed) == "bot 'c' (seat 0) failed in knock(): crashed"
    raised = "bot 'p' (seat 0) raised an exception in knock(), game seed {}: ValueError: boom {}"
    assert {error_key(raised.format(s, s)) for s in (1, 2)} == {
        "bot 'p' (seat 0) raised an exception in knock(): ValueError"
    }
    # The lines now say what an external bot did; they count as before.
    assert error_key(timeout.replace("raised an exception", "timed out").format(7)) == (
        "bot 'slow' (seat 1) failed in draw(): timeout"
    )
    assert error_key(crashed.replace("raised an exception", "crashed")) == "bot 'c' (seat 0) failed in knock(): crashed"
    illegal = "bot 'r' (seat 0) made an illegal move in discard() (answered 60), game seed 3"
    assert error_key(illegal) == "bot 'r' (seat 0) made an illegal move in discard() (answered 60)"
    assert error_key("worker crashed") == "worker crashed"


def test_games_forfeited_after_a_streak_of_failures_count_apart_from_the_failures():
    """After max_crashes failed games in a row a bot forfeits the rest of its chunk at once; those
    games were counted as "failed in take_upcard(): crashed", as if each had crashed."""
    from arena.analysis.summary import error_key
    from arena.external.client import ExternalBot
    from arena.external.limits import Limits

    bot = ExternalBot(["true"], None, Limits())
    bot.crash_streak, bot.last_crash = 5, "timeout: no answer to draw() within 2 s"
    rest = "bot 'loop' (seat 1) raised an exception in take_upcard(), game seed {}: ExternalBotError: {}"
    keys = {error_key(rest.format(s, bot._streak_error())) for s in (4, 8)}
    keys.add(error_key(rest.replace("raised an exception", "crashed").format(9, bot._streak_error())))
    assert keys == {"bot 'loop' (seat 1) forfeited the rest of a chunk after 5 failures in a row"}


def test_a_forfeit_line_says_what_an_external_bot_did_not_that_it_raised():
    """A timeout read "raised an exception in draw(): ... timeout": the bot raised nothing in the arena."""
    from arena.analysis.summary import error_key
    from arena.engine import layout as lay
    from arena.engine.play import ERR_RAISED, forfeit_text

    row = np.zeros(lay.G_SIZE, dtype=np.int64)
    row[lay.G_FORFEIT], row[lay.G_ERROR], row[lay.G_ERROR_KIND] = 1, ERR_RAISED, lay.PH_DRAW
    said = {
        "ExternalBotError: timeout: no answer to draw() within 2 s": "timed out",
        "ExternalBotError: crashed: exited with code 3 while asked draw()": "crashed",
        "ExternalBotError: garbled answer: the answer to draw() is not JSON": "answered badly",
        "ExternalBotError: ill-typed answer: draw() must answer 0 or 1": "answered badly",
        "ExternalBotError: bot error: draw(): the player raised java.lang.Error": "resigned",
        "ExternalBotError: some new reason: what": "failed",
        "ValueError: boom": "raised an exception",
    }
    for detail, verb in said.items():
        line = forfeit_text(("a", "b"), 7, row, detail)
        assert line == f"bot 'b' (seat 1) {verb} in draw(), game seed 7: {detail}"
        assert error_key(line) == error_key(line.replace(verb, "raised an exception", 1))
