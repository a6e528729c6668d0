"""Statistics and SPRT on results with known answers (synthetic streams and real engine runs)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.analysis import stats as st
from arena.analysis.sprt import (
    H0_ACCEPTED,
    H1_ACCEPTED,
    Sprt,
    SprtGate,
    llr_normal,
    llr_pentanomial,
    pentanomial,
    sprt_bounds,
    sprt_status,
)
from arena.analysis.summary import DEAL_BUCKETS
from arena.engine.rules_array import rules_array

# --- builders ---------------------------------------------------------------------------


def build_run(specs: dict[str, str], n_pairs: int, rules=None, record_hands: bool = True, seed0: int = 1000):
    """Play a duplicate round robin with the real engine; return (games, hands) in the run-folder schema.

    ``specs`` maps a bot name to a built-in bot ("simple", "random"); a new
    name plays the same bot under that name.  Pair k of a matchup is games
    2k (bot_a in seat 0) and 2k + 1 (seats swapped), same seed.
    """
    from arena.engine.play import play_batch
    from arena.loading.load import load_bot
    from arena.run.schema import games_frame, hands_frame
    from arena.settings.rules import Rules

    ra = rules_array(rules or Rules())
    bots = {}
    for name, base in specs.items():
        b = load_bot(base)
        bots[name] = b if b.name == name else b.with_params(name, {})
    names = list(bots)
    games, hands = [], []
    gid = 0
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = names[i], names[j]
            seeds = seed0 + gid + np.arange(n_pairs)
            for swap, (s0, s1) in enumerate(((a, b), (b, a))):
                rec = play_batch(bots[s0], bots[s1], ra, seeds, record_hands=record_hands)
                g = games_frame(rec.games, rec.seeds)
                ids = gid + 2 * np.arange(n_pairs) + swap
                g.insert(0, "game_id", ids)
                g.insert(1, "matchup", f"{a} vs {b}")
                g.insert(2, "bot_a", a)
                g.insert(3, "bot_b", b)
                g.insert(4, "pair", np.arange(n_pairs, dtype=np.int64))
                g.insert(5, "swap", np.int8(swap))
                g.insert(6, "bot0", s0)
                g.insert(7, "bot1", s1)
                g["winner"] = np.where(g.winner_seat == 0, s0, np.where(g.winner_seat == 1, s1, ""))
                err = np.array([""] * n_pairs, dtype=object)
                err[np.flatnonzero(g.forfeit_seat.to_numpy() >= 0)] = rec.errors
                g["error"] = err
                games.append(g)
                if record_hands:
                    h = hands_frame(rec.hands)
                    h["game_id"] = ids[h["game_id"].to_numpy()]
                    hands.append(h)
            gid += 2 * n_pairs
    games = pd.concat(games, ignore_index=True).sort_values("game_id", ignore_index=True)
    hands = pd.concat(hands, ignore_index=True).sort_values(["game_id", "hand"], ignore_index=True) if hands else None
    return games, hands


def sim_pairs(p: float, n_pairs: int, rng: np.random.Generator, split: float = 0.0, same: float = 0.0) -> np.ndarray:
    """(n_pairs, 2) game results of bot_a (1 win, 0 loss) with expected score exactly ``p``.

    A share ``split`` of pairs is split 1-1 (negative correlation, as duplicate
    deals give), a share ``same`` repeats the first game's result (positive
    correlation); the rest are two independent games at the rate that keeps
    the mean at ``p``.
    """
    rest = 1.0 - split - same
    q = (p - split / 2 - same * p) / rest
    assert 0.0 <= q <= 1.0
    kind = rng.random(n_pairs)
    g1 = (rng.random(n_pairs) < np.where(kind < split, 0.5, np.where(kind < split + same, p, q))).astype(int)
    g2i = (rng.random(n_pairs) < q).astype(int)
    g2 = np.where(kind < split, 1 - g1, np.where(kind < split + same, g1, g2i))
    return np.stack([g1, g2], axis=1)


def games_from_results(
    results: list[tuple[str, str, np.ndarray]], margins: list[np.ndarray] | None = None
) -> pd.DataFrame:
    """A games table (run schema, the columns statistics read) from per-matchup pair results."""
    rows = []
    gid = 0
    for k, (a, b, res) in enumerate(results):
        n = res.shape[0]
        swap = np.tile([0, 1], n).astype(np.int8)
        ra = res.reshape(-1)
        seat_a = swap.astype(np.int64)
        winner_seat = np.where(ra == 1, seat_a, 1 - seat_a)
        mg = margins[k].reshape(-1) if margins is not None else np.where(ra == 1, 50, -50)
        score_a, score_b = np.maximum(mg, 0), np.maximum(-mg, 0)
        rows.append(
            pd.DataFrame(
                {
                    "game_id": gid + np.arange(2 * n),
                    "matchup": f"{a} vs {b}",
                    "bot_a": a,
                    "bot_b": b,
                    "pair": np.repeat(np.arange(n), 2),
                    "swap": swap,
                    "bot0": np.where(swap == 0, a, b),
                    "bot1": np.where(swap == 0, b, a),
                    "winner": np.where(ra == 1, a, b),
                    "error": "",
                    "winner_seat": winner_seat.astype(np.int8),
                    "score0": np.where(swap == 0, score_a, score_b),
                    "score1": np.where(swap == 0, score_b, score_a),
                }
            )
        )
        gid += 2 * n
    return pd.concat(rows, ignore_index=True)


# --- pair statistics ---------------------------------------------------------------------


@pytest.mark.parametrize("split,same", [(0.0, 0.0), (0.3, 0.0), (0.0, 0.5)])
def test_win_rate_interval_covers_60_percent(split, same):
    """400 repeated matches at a true 60%: the pair-clustered 95% interval covers 0.6 in 92-98% of them.

    Each repetition is its own matchup in one table, so one call does all 400.
    With positively correlated pairs (same > 0) a game-level binomial interval
    is too narrow; the test shows that it would fail there.
    """
    rng = np.random.default_rng(12345 + int(100 * split + 10 * same))
    reps, n_pairs = 400, 60
    results = [(f"a{i}", f"b{i}", sim_pairs(0.6, n_pairs, rng, split, same)) for i in range(reps)]
    ps = st.pair_stats(games_from_results(results))
    assert len(ps) == reps
    cover = ((ps["win_rate_ci_low"] <= 0.6) & (0.6 <= ps["win_rate_ci_high"])).mean()
    assert 0.92 <= cover <= 0.98, cover
    assert abs(ps["win_rate_a"].mean() - 0.6) < 0.01
    # the naive interval that treats games as independent
    n = ps["games"]
    p = ps["win_rate_a"]
    half = 1.96 * np.sqrt(p * (1 - p) / n)
    naive = ((p - half <= 0.6) & (0.6 <= p + half)).mean()
    if same > 0:
        assert naive < 0.90, naive  # ignoring the pairs under-covers; the clustered interval does not


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval, written out from its textbook form."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_pair_interval_is_wilson_on_the_pairs_effective_sample_size_and_margins_the_t_interval():
    rng = np.random.default_rng(3)
    res = sim_pairs(0.55, 80, rng, split=0.2)
    margins = rng.normal(10, 40, size=res.shape).round()
    ps = st.pair_stats(games_from_results([("x", "y", res)], [margins])).iloc[0]
    pm = res.mean(axis=1)
    p, se, t = pm.mean(), sps.sem(pm), sps.t.ppf(0.975, len(pm) - 1)
    lo, hi = _wilson(p, p * (1 - p) / se**2, t)
    assert ps["win_rate_a"] == pytest.approx(p)
    assert (ps["win_rate_ci_low"], ps["win_rate_ci_high"]) == pytest.approx((lo, hi))
    # in the middle it is close to the t interval on the pair means (80 pairs: within half a point)
    t_lo, t_hi = sps.t.interval(0.95, len(pm) - 1, loc=p, scale=se)
    assert abs(lo - t_lo) < 0.005 and abs(hi - t_hi) < 0.005
    mm = margins.mean(axis=1)
    lo, hi = sps.t.interval(0.95, len(mm) - 1, loc=mm.mean(), scale=sps.sem(mm))
    assert ps["margin"] == pytest.approx(mm.mean())
    assert (ps["margin_ci_low"], ps["margin_ci_high"]) == pytest.approx((lo, hi))
    assert ps["wins_a"] == res.sum() and ps["wins_b"] == res.size - res.sum() and ps["games"] == res.size


def test_sign_test_known_case():
    # 15 pairs bot x won both games, 5 pairs bot y won both, 10 split
    res = np.array([[1, 1]] * 15 + [[0, 0]] * 5 + [[1, 0]] * 6 + [[0, 1]] * 4)
    ps = st.pair_stats(games_from_results([("x", "y", res)])).iloc[0]
    assert (ps["sweeps_a"], ps["sweeps_b"], ps["splits"]) == (15, 5, 10)
    exact = 2 * sum(math.comb(20, k) for k in range(15, 21)) / 2**20
    assert ps["sign_p"] == pytest.approx(exact, rel=1e-9)
    assert ps["sign_p"] == pytest.approx(0.041389, abs=1e-6)
    assert ps["win_rate_a"] == pytest.approx((30 + 10) / 60)


def test_draws_and_void_games():
    g = games_from_results([("x", "y", np.array([[1, 0], [1, 1], [0, 0]]))])
    g.loc[0, "winner"] = ""  # hand cap: no winner -> half a point each
    g.loc[0, "winner_seat"] = -1
    g.loc[5, "winner"] = ""  # an error and no winner: not a result
    g.loc[5, "error"] = "worker crashed"
    ps = st.pair_stats(g).iloc[0]
    assert ps["games"] == 5 and ps["errors"] == 1 and ps["draws"] == 1
    assert ps["win_rate_a"] == pytest.approx((0.5 + 0 + 1 + 1 + 0) / 5)
    assert ps["complete_pairs"] == 2  # the pair with the void game is incomplete


# --- Bradley-Terry -----------------------------------------------------------------------

TRUE_ELO = {"w": -150.0, "x": -40.0, "y": 60.0, "z": 130.0}


def _round_robin(rng, n_pairs, elos=TRUE_ELO, split=0.2):
    names = list(elos)
    res = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            p = float(st.score_from_elo(elos[names[i]] - elos[names[j]]))
            res.append((names[i], names[j], sim_pairs(p, n_pairs, rng, split=split)))
    return games_from_results(res)


def test_bradley_terry_recovers_known_elo():
    rng = np.random.default_rng(2024)
    bt = st.bradley_terry(_round_robin(rng, 3000)).set_index("bot")
    truth = pd.Series(TRUE_ELO)
    truth -= truth.mean()
    err = bt["elo"] - truth
    assert bt["elo"].sum() == pytest.approx(0.0, abs=1e-6)
    assert (err.abs() < 15).all(), err
    assert (err.abs() < 3.5 * bt["elo_se"]).all(), (err, bt["elo_se"])
    assert (bt["elo_se"] > 1).all() and (bt["elo_se"] < 15).all()
    # anchoring only shifts the scale
    anch = st.bradley_terry(_round_robin(np.random.default_rng(2024), 3000), anchor="x").set_index("bot")
    assert anch.loc["x", "elo"] == 0.0 and anch.loc["x", "elo_se"] == 0.0
    assert (anch["elo"] - anch.loc["z", "elo"]).to_dict() == pytest.approx((bt["elo"] - bt.loc["z", "elo"]).to_dict())


def test_bradley_terry_interval_coverage():
    """Over repeated tournaments the 95% interval of z against x (x anchoring) covers its true Elo 89-99% of
    the time, and so does the comparison the default anchor's quasi standard errors give for the gap z - y."""
    rng = np.random.default_rng(77)
    truth = TRUE_ELO["z"] - TRUE_ELO["x"]
    hits, compared = [], []
    for _ in range(150):
        g = _round_robin(rng, 150)
        bt = st.bradley_terry(g, anchor="x").set_index("bot")
        hits.append(bt.loc["z", "elo_ci_low"] <= truth <= bt.loc["z", "elo_ci_high"])
        qs = st.bradley_terry(g).set_index("bot")
        gap, se = qs.loc["z", "elo"] - qs.loc["y", "elo"], np.hypot(qs.loc["z", "elo_se"], qs.loc["y", "elo_se"])
        compared.append(abs(gap - (TRUE_ELO["z"] - TRUE_ELO["y"])) <= 1.96 * se)
    assert 0.89 <= np.mean(hits) <= 0.99, np.mean(hits)
    assert 0.89 <= np.mean(compared) <= 0.99, np.mean(compared)


def test_a_bot_that_loses_every_game_does_not_widen_the_other_bots_intervals():
    """Against the mean of the field, each rating's error carried a share of ``random``'s (whose gap to
    everyone is bounded only by the prior): every bot read about +-45 Elo on the default run where any two
    were known to within +-3, and a plot of such intervals said that bots 60 Elo apart overlapped.  With
    the mean anchor, a bot's standard error is now its quasi standard error: two bots' squares add up to
    the variance of their difference."""
    rng = np.random.default_rng(8)
    elos = {"r": -1400.0, **TRUE_ELO}
    g = _round_robin(rng, 1500, elos, split=0.0)
    qs = st.bradley_terry(g).set_index("bot")
    for a, b in [("x", "y"), ("y", "z"), ("w", "z")]:
        true_se = st.bradley_terry(g, anchor=a).set_index("bot").loc[b, "elo_se"]  # the error of b - a
        assert np.hypot(qs.loc[a, "elo_se"], qs.loc[b, "elo_se"]) == pytest.approx(true_se, rel=0.1)
        assert qs.loc[b, "elo_se"] < true_se  # not a share of r's hundreds of Elo
    assert qs.loc["r", "elo_se"] > 100  # the swept bot stays as unknown as it is
    assert qs.attrs["quasi_error"] < 0.1
    # the intervals of y and z (70 Elo apart, each gap known to within about +-10) no longer overlap
    assert qs.loc["y", "elo_ci_high"] < qs.loc["z", "elo_ci_low"]


def test_quasi_variances_are_exact_where_they_exist_and_the_least_squares_fit_elsewhere():
    from arena.analysis.quasi import contrast_variances, quasi_variances

    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 4.0, 6)
    q, err = quasi_variances(np.diag(a))  # uncorrelated errors: the variances themselves
    assert q == pytest.approx(a, rel=1e-6) and err < 1e-6
    shift = np.diag(a) + 0.7  # a common shift (any anchor) changes no difference
    assert quasi_variances(shift)[0] == pytest.approx(a, rel=1e-6)
    c3 = np.diag([1.0, 2.0, 3.0]) + 0.3
    c3[0, 1] = c3[1, 0] = 0.5  # differences' variances 2.6, 4 and 5: not those of uncorrelated errors
    q3, err3 = quasi_variances(c3)  # three bots: three differences, three unknowns
    assert q3 == pytest.approx([0.8, 1.8, 3.2]) and err3 < 1e-9
    c3[0, 1] = c3[1, 0] = -4.0  # 11.6, 4 and 5: the exact answer would need q_2 < 0; a positive fit instead
    q3, err3 = quasi_variances(c3)
    assert (q3 > 0).all() and 0.01 < err3 < 0.5
    # an arbitrary covariance of 7: the fit minimises the sum of squared log ratios, as a slow fit by Powell does
    m = rng.normal(size=(7, 7))
    c7 = m @ m.T + 0.5 * np.eye(7)
    v7 = contrast_variances(c7)
    pairs = [(i, j) for i in range(7) for j in range(i + 1, 7)]

    def loss(u):
        return sum((np.log(np.exp(u[i]) + np.exp(u[j])) - np.log(v7[i, j])) ** 2 for i, j in pairs)

    from scipy import optimize

    slow = optimize.minimize(loss, np.zeros(7), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14})
    q7, err7 = quasi_variances(c7)
    assert loss(np.log(q7)) <= slow.fun + 1e-9
    assert q7 == pytest.approx(np.exp(slow.x), rel=1e-3)
    assert err7 == pytest.approx(max(abs(np.sqrt((q7[i] + q7[j]) / v7[i, j]) - 1) for i, j in pairs))
    # groups that never met are fitted apart: a difference across them means nothing
    both = np.zeros((5, 5))
    both[:3, :3], both[3:, 3:] = np.diag(a[:3]), np.diag([1.0, 3.0])
    qg, _ = quasi_variances(both, np.array([0, 0, 0, 1, 1]))
    assert qg == pytest.approx([*a[:3], 2.0, 2.0], rel=1e-6)  # two bots: half their difference's variance each


def test_bradley_terry_sweep_stays_finite():
    res = [("a", "b", np.ones((50, 2), dtype=int)), ("b", "c", sim_pairs(0.5, 50, np.random.default_rng(1)))]
    bt = st.bradley_terry(games_from_results(res)).set_index("bot")
    assert np.isfinite(bt["elo"]).all() and np.isfinite(bt["elo_se"]).all()
    assert bt.loc["a", "elo"] - bt.loc["b", "elo"] > 400
    assert bt.loc["a", "elo_se"] > 50  # a clean sweep is not a precise estimate


# --- per-bot statistics against the real engine ---------------------------------------------


@pytest.fixture(scope="module")
def real_run():
    return build_run({"simple": "simple", "random": "random", "random-b": "random"}, n_pairs=12)


def test_bot_stats_match_hands_and_winners(real_run):
    games, hands = real_run
    bs = st.bot_stats(games, hands).set_index("bot")
    assert sorted(bs.index) == ["random", "random-b", "simple"]
    # wins from the winner column, counted directly
    for bot in bs.index:
        mine = games[(games.bot_a == bot) | (games.bot_b == bot)]
        assert bs.loc[bot, "games"] == len(mine)
        assert bs.loc[bot, "wins"] == (mine.winner == bot).sum()
    # per-hand rates recomputed from the hands table (seat -> bot through bot0/bot1)
    h = hands.merge(games[["game_id", "bot0", "bot1"]], on="game_id")
    winner_seat = np.where(
        h.outcome.isin(["knock", "gin", "big_gin"]), h.knocker, np.where(h.outcome == "undercut", 1 - h.knocker, -1)
    )
    h["hand_winner"] = np.where(winner_seat == 0, h.bot0, np.where(winner_seat == 1, h.bot1, ""))
    h["knocker_bot"] = np.where(h.knocker == 0, h.bot0, np.where(h.knocker == 1, h.bot1, ""))
    for bot in bs.index:
        mine = h[(h.bot0 == bot) | (h.bot1 == bot)]
        n = len(mine)
        assert bs.loc[bot, "hands"] == n
        won = mine[mine.hand_winner == bot]
        assert bs.loc[bot, "knock_rate"] == pytest.approx((won.outcome == "knock").sum() / n)
        assert bs.loc[bot, "gin_rate"] == pytest.approx((won.outcome == "gin").sum() / n)
        assert bs.loc[bot, "hand_win_rate"] == pytest.approx(len(won) / n)
        assert bs.loc[bot, "dead_rate"] == pytest.approx((mine.outcome == "dead").sum() / n)
        pts = np.where(mine.bot0 == bot, mine.points0, mine.points1).sum()
        assert bs.loc[bot, "points_per_hand"] == pytest.approx(pts / n)
        if len(won):
            wp = np.where(won.bot0 == bot, won.points0, won.points1)
            assert bs.loc[bot, "points_per_hand_won"] == pytest.approx(wp.mean())
        knocks = mine[(mine.knocker_bot == bot) & mine.outcome.isin(["knock", "undercut"])]
        if len(knocks):
            dw = np.where(knocks.knocker == 0, knocks.deadwood0, knocks.deadwood1)
            assert bs.loc[bot, "knock_deadwood"] == pytest.approx(dw.mean())
    assert bs.loc["simple", "win_rate"] == 1.0  # simple beats random every time
    mix = st.outcome_mix(games).set_index("bot").drop(columns="hands")
    assert np.allclose(mix.sum(axis=1), 1.0)


def test_first_mover_matches_hands(real_run):
    games, hands = real_run
    fm = st.first_mover(games).set_index("matchup")
    decided = hands[hands.outcome.isin(["knock", "undercut", "gin", "big_gin"])]
    winner_seat = np.where(decided.outcome == "undercut", 1 - decided.knocker, decided.knocker)
    nondealer = (winner_seat != decided.dealer).sum()
    assert fm.loc["all", "decided_hands"] == len(decided)
    assert fm.loc["all", "nondealer_share"] == pytest.approx(nondealer / len(decided))
    assert fm.loc["all", "ci_low"] < fm.loc["all", "nondealer_share"] < fm.loc["all", "ci_high"]
    # The run's row is clustered on the deal (pair k of every matchup), as a slow sum over pairs gives.
    ids = games.set_index("game_id")["pair"]
    per_deal = pd.DataFrame({"pair": ids.loc[decided.game_id].to_numpy(), "won": winner_seat != decided.dealer})
    won = per_deal.groupby("pair")["won"].agg(["sum", "count"])
    p = won["sum"].sum() / won["count"].sum()
    k = len(won)
    se = np.sqrt(((won["sum"] - p * won["count"]) ** 2).sum() / won["count"].sum() ** 2 * k / (k - 1))
    lo, hi = _wilson(p, p * (1 - p) / se**2, sps.t.ppf(0.975, k - 1))
    assert (fm.loc["all", "ci_low"], fm.loc["all", "ci_high"]) == pytest.approx((lo, hi))


def test_convergence_ends_at_the_final_estimate(real_run):
    games, _ = real_run
    cv = st.convergence(games)
    ps = st.pair_stats(games).set_index("matchup")
    last = cv.groupby("matchup").tail(1).set_index("matchup")
    assert (last["games"] == ps["games"]).all()
    assert np.allclose(last["win_rate"], ps["win_rate_a"])


# --- SPRT ----------------------------------------------------------------------------------


def _run_sprt(rng, elo, elo0=0.0, elo1=10.0, chunk=200, max_pairs=200_000):
    test = Sprt(elo0, elo1, 0.05, 0.05)
    p = float(st.score_from_elo(elo))
    while test.decision is None and test.pairs < max_pairs:
        test.update(sim_pairs(p, chunk, rng, split=0.3).sum(axis=1))
    return test


def test_sprt_accepts_h1_when_clearly_stronger():
    rng = np.random.default_rng(11)
    runs = [_run_sprt(rng, 35.0) for _ in range(30)]
    assert sum(t.decision == H1_ACCEPTED for t in runs) >= 29


def test_sprt_accepts_h0_at_zero_elo():
    rng = np.random.default_rng(12)
    runs = [_run_sprt(rng, 0.0) for _ in range(30)]
    h0 = sum(t.decision == H0_ACCEPTED for t in runs)
    assert h0 >= 26, [t.decision for t in runs]
    assert all(t.decision is not None for t in runs)


def test_sprt_llr_and_bounds():
    assert sprt_bounds(0.05, 0.05) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    counts = [400, 2100, 4100, 2300, 450]
    # the generalized LLR agrees with its normal approximation for small Elo gaps
    assert llr_pentanomial(counts, 0, 5) == pytest.approx(llr_normal(counts, 0, 5), rel=0.02)
    assert llr_pentanomial(counts, 0, 5) > 0 > llr_pentanomial(counts[::-1], 0, 5)
    t = Sprt(0, 5)
    assert t.decision is None and t.llr == 0.0
    t.update([2, 1.5, 1, 0.5, 0, 2])
    assert t.counts.tolist() == [1, 1, 1, 1, 2]
    with pytest.raises(ValueError):
        t.update([0.25])
    with pytest.raises(ValueError):
        Sprt(5, 0)


def test_sprt_status_from_games_table():
    res = np.array([[1, 1]] * 5 + [[1, 0]] * 3 + [[0, 0]] * 2)
    g = games_from_results([("x", "y", res)])
    g = g.iloc[:-1]  # the last pair is incomplete
    assert pentanomial(g).tolist() == [1, 0, 3, 0, 5]
    assert pentanomial(g, bot="y").tolist() == [5, 0, 3, 0, 1]
    test = sprt_status(g, elo0=0, elo1=10)
    assert test.pairs == 9 and test.decision is None
    big = games_from_results([("x", "y", np.array([[1, 1]] * 400 + [[1, 0]] * 400))])
    assert sprt_status(big, elo0=0, elo1=10).decision == H1_ACCEPTED
    assert sprt_status(big, elo0=0, elo1=10, bot="y").decision == H0_ACCEPTED


def test_sprt_gate_takes_chunks_in_chunk_order_whatever_order_they_arrive():
    # The runner's stop rule: chunk 1 arriving before chunk 0 waits; the verdict rests on chunks 0..used-1 only.
    class Cfg:
        def sprt_params(self):
            return {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}

    won = games_from_results([("x", "y", np.array([[1, 1]] * 400))])  # x wins every pair: decided in one chunk
    lost = games_from_results([("x", "y", np.array([[0, 0]] * 400))])
    gate = SprtGate(Cfg())
    gate.add(1, lost)
    assert gate.advance() is False and gate.decision is None and gate.used == 0  # chunk 0 not here yet
    gate.add(0, won)
    assert gate.advance() is True and gate.decision == H1_ACCEPTED and gate.used == 1  # chunk 1 never counted
    assert gate.test.pairs == 400 and "H1 accepted" in gate.summary()
    gate.add(2, lost)
    assert gate.advance() is True and gate.used == 1  # a decision sticks


@pytest.mark.parametrize("swept_by", ["x", "y"])
def test_a_matchup_of_sweeps_only_gets_an_interval_over_its_pairs_not_a_point(swept_by):
    # 0 of 200 games read "0.0% [0.0%, 0.0%]": all pairs swept, so the clustered variance is 0.
    res = np.ones((100, 2), dtype=int) if swept_by == "x" else np.zeros((100, 2), dtype=int)
    ps = st.pair_stats(games_from_results([("x", "y", res)])).iloc[0]
    t = sps.t.ppf(0.975, 99)
    lo, hi = _wilson(float(res.mean()), 100, t)  # no variance seen: each pair counts once
    assert (ps["win_rate_ci_low"], ps["win_rate_ci_high"]) == pytest.approx((lo, hi))
    assert 0.03 < ps["win_rate_ci_high"] - ps["win_rate_ci_low"] < 0.05
    assert 0.0 <= ps["win_rate_ci_low"] and ps["win_rate_ci_high"] <= 1.0


def test_lopsided_matchups_are_covered_at_the_stated_level():
    # The symmetric t interval covered a 99% win rate 34% of the time over 20 pairs.
    rng = np.random.default_rng(5)
    for truth, pairs in ((0.99, 20), (0.97, 20), (0.99, 100)):
        reps = 2000
        # pair score 0.5 (a split) with chance 2 (1 - truth), else a sweep by bot a
        x = np.where(rng.random((reps, pairs)) < 2 * (1 - truth), 1.0, 2.0)
        r = st.ratio_ci(x.ravel(), np.full(x.size, 2.0), np.repeat(np.arange(reps), pairs), reps, clip=(0.0, 1.0))
        cover = np.mean((r["lo"] <= truth) & (truth <= r["hi"]))
        assert 0.92 <= cover, (truth, pairs, cover)
        assert np.all(r["hi"] > r["lo"]) and np.all(r["hi"] <= 1.0)


# --- clustered on the deal across matchups ------------------------------------------------


def _deal_tournament(pairs: int = 150, seed: int = 11) -> tuple[pd.DataFrame, np.ndarray]:
    """x plays y and z on the same deals (pair k is deal k); a deal that suits x suits it against both."""
    rng = np.random.default_rng(seed)
    good = rng.random(pairs) < 0.5  # the deal suits x: it wins both seats, else it splits or loses
    res_xy = np.where(good[:, None], 1, rng.integers(0, 2, size=(pairs, 2)))
    res_xz = np.where(good[:, None], 1, rng.integers(0, 2, size=(pairs, 2)))
    res_yz = rng.integers(0, 2, size=(pairs, 2))
    return games_from_results([("x", "y", res_xy), ("x", "z", res_xz), ("y", "z", res_yz)]), np.stack([res_xy, res_xz])


def test_a_bots_win_rate_interval_is_clustered_on_the_deal_across_its_matchups():
    # Every matchup plays the same deals, so x's games on deal k against y and against z are one
    # cluster; taken as two independent pairs, x's interval was about 1.25 times too narrow here.
    g, res = _deal_tournament()
    row = st.bot_stats(g).set_index("bot").loc["x"]
    per_deal = res.sum(axis=(0, 2)).astype(float)  # x's wins on each deal, out of 4 games
    p = per_deal.sum() / (4 * per_deal.size)
    se = np.std(per_deal / 4, ddof=1) / np.sqrt(per_deal.size)
    lo, hi = _wilson(p, p * (1 - p) / se**2, sps.t.ppf(0.975, per_deal.size - 1))
    assert row["win_rate"] == pytest.approx(p)
    assert (row["win_rate_ci_low"], row["win_rate_ci_high"]) == pytest.approx((lo, hi))
    by_pair = np.concatenate([res[0].sum(1), res[1].sum(1)]) / 2  # the old clusters: (matchup, pair)
    se_pairs = np.std(by_pair, ddof=1) / np.sqrt(by_pair.size)
    assert se > 1.2 * se_pairs


def test_rating_sandwich_is_clustered_on_the_deal_as_a_slow_sum_over_deals_gives():
    g, _ = _deal_tournament()
    bt = st.bradley_terry(g).set_index("bot")
    bots = list(bt.index)
    th = bt["elo"].to_numpy() / st.ELO_K
    idx = {b: i for i, b in enumerate(bots)}
    n_b = len(bots)
    H, grads = np.zeros((n_b, n_b)), {}
    M_prior = np.zeros((n_b, n_b))
    for (a, b), mg in g.groupby(["bot_a", "bot_b"]):
        i, j = idx[a], idx[b]
        d = np.zeros(n_b)
        d[i], d[j] = 1.0, -1.0
        q = 1.0 / (1.0 + np.exp(-(th[i] - th[j])))
        H += (len(mg) + 1.0) * q * (1 - q) * np.outer(d, d)  # one prior draw per matchup
        M_prior += (0.5 - q) ** 2 * np.outer(d, d)
        for _, game in mg.iterrows():
            y = 1.0 if game["winner"] == a else 0.0
            grads[game["pair"]] = grads.get(game["pair"], np.zeros(n_b)) + (y - q) * d
    G = len(grads)
    M = (sum(np.outer(v, v) for v in grads.values()) + M_prior) * G / (G - 1)
    keep = np.arange(n_b) != 0
    Hinv = np.linalg.pinv(H[np.ix_(keep, keep)])
    cov = np.zeros((n_b, n_b))
    cov[np.ix_(keep, keep)] = Hinv @ M[np.ix_(keep, keep)] @ Hinv
    se = np.sqrt(np.diag(cov)) * st.ELO_K  # against bots[0]
    anchored = st.bradley_terry(g, anchor=bots[0]).set_index("bot").loc[bots]
    assert anchored["elo_se"].to_numpy() == pytest.approx(se, rel=1e-6)


def test_the_win_matrix_gives_each_matchups_interval_from_both_sides():
    # The heatmap wrote "±0.0" under a 0% cell; its ends now come from the matchup's own interval.
    res = np.zeros((100, 2), dtype=int)  # y swept x on every deal
    g = games_from_results([("x", "y", res)])
    ps = st.pair_stats(g).iloc[0]
    lo, hi = st.win_matrix(g, "ci_low"), st.win_matrix(g, "ci_high")
    assert (lo.loc["x", "y"], hi.loc["x", "y"]) == pytest.approx((ps["win_rate_ci_low"], ps["win_rate_ci_high"]))
    mirrored = (1 - ps["win_rate_ci_high"], 1 - ps["win_rate_ci_low"])
    assert (lo.loc["y", "x"], hi.loc["y", "x"]) == pytest.approx(mirrored)
    assert hi.loc["x", "y"] > 0.03


def test_a_bot_swept_on_more_deals_than_buckets_counts_each_deal_once_not_each_bucket():
    # 600 deals fall in 256 buckets; a bot that lost every game read [0.0%, 1.5%] over 240,000
    # games, wider than any of its matchups' own intervals.
    lost = np.zeros((600, 2), dtype=int)
    g = games_from_results([("x", "y", lost), ("x", "z", lost)])
    row = st.bot_stats(g).set_index("bot").loc["x"]
    lo, hi = _wilson(0.0, 600, sps.t.ppf(0.975, DEAL_BUCKETS - 1))
    assert (row["win_rate_ci_low"], row["win_rate_ci_high"]) == pytest.approx((lo, hi))
    ps = st.pair_stats(g)
    assert row["win_rate_ci_high"] <= ps["win_rate_ci_high"].max() + 1e-4


def _with_bystanders(games: pd.DataFrame) -> pd.DataFrame:
    """``games`` plus a bot that only plays itself ("a_self") and one whose every game is void ("a_void")."""
    own = games_from_results([("a_self", "a_self", np.array([[1, 0]] * 20))])
    void = games_from_results([("a_void", "x", np.array([[1, 0]] * 20))])
    void["winner"], void["winner_seat"], void["error"] = "", -1, "crashed"
    extra = pd.concat([own, void], ignore_index=True)
    extra["game_id"] += games["game_id"].max() + 1
    return pd.concat([games, extra], ignore_index=True)


@pytest.mark.parametrize("method", ["sandwich", "fisher"])
def test_ratings_and_their_intervals_ignore_bots_with_no_result_against_another_bot(method):
    """A bot seen only in self-play or void games (sorted first, as the removed reference of the covariance) used to
    collapse every other bot's interval to a point (sandwich) or blow it up to ~1e7 Elo (fisher)."""
    g = _round_robin(np.random.default_rng(5), 200)
    base = st.bradley_terry(g, method=method).set_index("bot")
    bt = st.bradley_terry(_with_bystanders(g), method=method)
    assert sorted(bt["bot"]) == sorted(base.index)
    comps = bt.attrs["components"]
    bt = bt.set_index("bot").loc[base.index]
    assert bt["elo"].to_numpy() == pytest.approx(base["elo"].to_numpy(), abs=1e-4)
    assert bt["elo_se"].to_numpy() == pytest.approx(base["elo_se"].to_numpy(), rel=1e-6)
    assert comps == 1  # the bystanders are not groups of their own ("ratings comparable only within a group")
    with pytest.raises(ValueError, match="no result against another bot"):
        st.bradley_terry(_with_bystanders(g), anchor="a_self")


def test_bots_without_any_result_get_no_rating_rather_than_zero_plus_minus_zero():
    g = games_from_results([("x", "y", np.ones((10, 2), dtype=int))])
    g["winner"], g["winner_seat"], g["error"] = "", -1, "crashed"
    bt = st.bradley_terry(g)
    assert bt[["elo", "elo_se", "elo_ci_low", "elo_ci_high"]].isna().all().all()


@pytest.mark.parametrize("kind", ["split", "drawn"])
def test_a_matchup_whose_pairs_show_no_variance_gets_a_rating_interval_not_a_point(kind):
    """Every pair split 1-1 (or every game drawn): the sandwich's residuals are all 0, so the rating gap was
    0 +- 0.  As for the win rate, each deal then counts as one observation: the gap's interval is about as wide
    as the pair table's Elo interval (Wilson on the deals)."""
    g = games_from_results([("x", "y", np.tile([1, 0], (30, 1)))])
    if kind == "drawn":
        g["winner"], g["winner_seat"] = "", -1
    bt = st.bradley_terry(g, anchor="y").set_index("bot")
    gap_lo, gap_hi = bt.loc["x", "elo_ci_low"], bt.loc["x", "elo_ci_high"]
    ps = st.pair_stats(g).iloc[0]
    assert ps["elo_ci_high"] > 100  # the pair table's interval of the same gap
    assert gap_hi > 0.5 * ps["elo_ci_high"] and gap_lo < 0.5 * ps["elo_ci_low"]
    assert gap_hi < 2 * ps["elo_ci_high"] and gap_lo > 2 * ps["elo_ci_low"]


# --- coverage near 0% and 100%, counted exactly ------------------------------------------------


def _binom_pmf(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1.0 - p) ** (n - k)


def _coverage_games(n: int, p: float) -> float:
    """Exact coverage of the interval of ``n`` independent games (each its own unit, as without duplicate
    pairs) at a true win rate ``p``: the binomial probability of every outcome whose interval holds ``p``."""
    return sum(_binom_pmf(k, n, p) for k, lo, hi in _game_intervals(n) if lo <= p <= hi)


@functools.cache
def _game_intervals(n: int) -> list[tuple[int, float, float]]:
    """Every outcome's interval, worked out once for all the rates a test checks against it."""
    return [(k, *st.share_ci(n, k, k)[1:]) for k in range(n + 1)]


def _coverage_pairs(g: int, p: float) -> float:
    """The same for ``g`` duplicate pairs whose two games are independent wins with chance ``p``: a pair
    is swept (share 1) with chance p^2, split (0.5) with 2p(1-p); every (sweeps, splits) outcome is summed."""
    probs = (p * p, 2 * p * (1 - p), (1 - p) ** 2)
    total = 0.0
    for a, b, lo, hi in _pair_intervals(g):
        if lo <= p <= hi:
            c = g - a - b
            multinomial = math.factorial(g) // (math.factorial(a) * math.factorial(b) * math.factorial(c))
            total += multinomial * probs[0] ** a * probs[1] ** b * probs[2] ** c
    return total


@functools.cache
def _pair_intervals(g: int) -> list[tuple[int, int, float, float]]:
    """Every (sweeps, splits) outcome's interval, worked out once for all the rates checked against it."""
    return [(a, b, *st.share_ci(g, a + 0.5 * b, a + 0.25 * b)[1:]) for a in range(g + 1) for b in range(g + 1 - a)]


@pytest.mark.parametrize("n", [20, 50, 200])
def test_a_rare_winners_interval_covers_near_the_stated_level_counted_over_every_outcome(n):
    """Wilson's interval alone covered about 85% of the time when one side wins once or twice (the true
    rate just below its bound for one win, Brown, Cai and DasGupta 2001); the modified interval does not
    dip that far, at either end, with games or with duplicate pairs."""
    rates = [f / n for f in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)]
    games = [_coverage_games(n, p) for p in rates]
    assert min(games) >= 0.93, dict(zip(rates, games))
    assert min(_coverage_games(n, 1 - p) for p in rates) >= 0.93  # the other end, mirrored
    pairs = [_coverage_pairs(n // 2, p) for p in rates]
    assert min(pairs) >= 0.93, dict(zip(rates, pairs))
    assert max(games) <= 0.999  # not bought with an interval that always covers


def test_one_win_in_fifty_games_gets_a_lower_bound_near_the_exact_one_not_wilsons():
    # The probe's case: 25 duplicate pairs, one split, 24 lost: 2.0% whose Wilson interval was
    # [0.32%, 11.4%]; Clopper-Pearson's is [0.05%, 10.7%].  The lower bound now lies between the exact
    # two-sided (2.5% a side) and one-sided (5%) bounds for 1 win in 50, 1 - (1 - q)^(1/50).
    est, lo, hi = st.share_ci(25, 0.5, 0.25)
    assert est == pytest.approx(0.02)
    assert 1 - 0.975 ** (1 / 50) < lo < 1 - 0.95 ** (1 / 49)
    assert hi == pytest.approx(0.1135, abs=5e-4)  # many losses: the upper bound stays Wilson's
    # and Wilson's still decides where wins are not rare (the matchups tables' usual case)
    p, n, t = 0.4, 100, sps.t.ppf(0.975, 99)
    _, lo, hi = st.share_ci(n, p * n, p * n)
    assert (lo, hi) == pytest.approx(_wilson(p, p * (1 - p) / (p * (1 - p) / (n - 1)), t))
