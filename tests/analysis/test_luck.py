"""Luck at every chance event: exact against a slow reference, unbiased, a known answer, a fixed value.

Statistical checks use fixed seeds; their margins are stated where they are made.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.analysis import luck
from arena.botkit.game_value import WIN_CHANCE
from arena.engine.layout import (
    PH_DONE,
    PH_DRAW,
    PH_UPCARD_DEALER,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_HAND,
    S_PHASE,
    S_SCORE,
    S_STOCK_POS,
)
from arena.engine.replay import begin_replay
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_hand, end_hand
from arena.run.runner import run_tournament
from arena.run.store import RunStore
from arena.settings.config import TournamentConfig
from tests.analysis.faults import failing_on_call
from tests.reference import deadwood_many

BLUNDER = str(Path(__file__).with_name("blunder_bot.py"))
FORFEIT = 0.2


def _play(tmp: Path, name: str, a: str, b: str, games: int, seed: int, variants=None) -> Path:
    cfg = TournamentConfig(
        name=name,
        format="gauntlet",
        candidate=a,
        bots=(b,),
        variants=variants or {},
        games_per_pair=games,
        chunk_size=500,
        seed=seed,
        workers=1,
        results_dir=str(tmp),
    )
    assert run_tournament(cfg, progress=False).status == "complete"
    return tmp / name


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("luck")
    return {
        "ek": _play(tmp, "ek", "simple", "early-knock", 1000, 11),
        "blunder": _play(tmp, "blunder", "simple", "blunder", 4000, 12, {"blunder": {"bot": BLUNDER}}),
    }


def _table(run: Path) -> pd.DataFrame:
    return pd.concat(list(RunStore(run).analysis_parts(luck.TABLE)), ignore_index=True)


# --- the kernel against a slow, obviously correct reference --------------------------------------------


def _bin(d: int) -> int:
    edges = [11, 13, 15, 17, 19, 21, 23, 25, 28, 31, 35, 40, 50]
    return d if d <= 10 else 10 + sum(d >= e for e in edges)


def _w(need_me: float, need_opp: int) -> float:
    def at(i: int, j: int) -> float:
        return 1.0 if i <= 0 else 0.0 if j <= 0 else float(WIN_CHANCE[min(i, 200), min(j, 200)])

    lo = math.floor(need_me)
    return (1 - (need_me - lo)) * at(lo, need_opp) + (need_me - lo) * at(lo + 1, need_opp)


def _win(cell: np.ndarray, need_me: int, need_opp: int) -> float:
    _, pw, gw, pl, gl = cell
    return (
        pw * _w(need_me - gw, need_opp)
        + pl * (1 - _w(need_opp - gl, need_me))
        + max(0.0, 1 - pw - pl) * _w(need_me, need_opp)
    )


def _reference_events(seed: int, rules: np.ndarray, answers: np.ndarray) -> list[tuple[int, float, float]]:
    """(seat, luck in points, luck in win chance) of each chance event, seat 0's sign, by brute force."""
    value = luck.shipped_value()
    st, row, scratch = begin_replay(seed, rules)
    out = []
    pos = 0
    while pos < len(answers):
        begin_hand(st, rules, seed, scratch)
        d = int(st[S_DEALER])
        nd = 1 - d
        hn, hd = (int(x) for x in deadwood_many(np.array([st[S_HAND + nd], st[S_HAND + d]], dtype=np.int64)))
        need = (100 - int(st[S_SCORE + nd]), 100 - int(st[S_SCORE + d]))
        c1, c2 = value.deal[:, _bin(hn), _bin(hd)], value.deal[:, _bin(hd), _bin(hn)]
        sign = 1.0 if nd == 0 else -1.0
        out.append((nd, sign * (c1[0] - c2[0]) / 2, sign * (_win(c1, *need) - _win(c2, *need)) / 2))
        while st[S_PHASE] != PH_DONE and pos < len(answers):
            a, ph, cur = int(answers[pos]), int(st[S_PHASE]), int(st[S_CUR])
            drawer = cur if (ph == PH_DRAW and a == 0) else (1 - cur if ph == PH_UPCARD_DEALER and a == 0 else -1)
            if drawer >= 0:
                sp = int(st[S_STOCK_POS])
                hand = int(st[S_HAND + drawer])
                b = _bin(int(deadwood_many(np.array([st[S_HAND + 1 - drawer]], dtype=np.int64))[0]))
                s = min((52 - sp - 1) // 4, 7)
                need = (100 - int(st[S_SCORE + drawer]), 100 - int(st[S_SCORE + 1 - drawer]))
                vals = []
                for i in range(sp, 52):
                    h11 = hand | (1 << int(st[S_DECK + i]))
                    tens = np.array([h11 & ~(1 << c) for c in range(52) if h11 >> c & 1], dtype=np.int64)
                    cell = value.draw[:, _bin(int(deadwood_many(tens).min())), b, s]
                    vals.append((cell[0], _win(cell, *need)))
                v = np.array(vals)
                sign = 1.0 if drawer == 0 else -1.0
                out.append((drawer, sign * (v[0, 0] - v[:, 0].mean()), sign * (v[0, 1] - v[:, 1].mean())))
            assert apply_action(st, rules, a) == 0
            pos += 1
        if st[S_PHASE] != PH_DONE or end_hand(st, rules, row):
            break
    return out


def test_every_chance_events_luck_equals_a_brute_force_reference(runs):
    store = RunStore(runs["ek"])
    rules = rules_array(store.rules())
    chunk = next(iter(store.chunks(["game_id", "seed"], actions=True)))
    assert chunk.actions is not None
    for gid, answers in list(zip(chunk.actions["game_id"], chunk.actions["actions"], strict=True))[:1]:
        seed = int(chunk.games.set_index("game_id").loc[gid, "seed"])
        ans = np.frombuffer(answers, dtype=np.uint8).astype(np.int64)
        ev, hands = luck.game_luck(seed, rules, ans)
        ref = _reference_events(seed, rules, ans)
        assert len(ev) == len(ref) and (ev[:, 1] == luck.KIND_DRAW).sum() > 20
        np.testing.assert_array_equal(ev[:, 2], [r[0] for r in ref])
        np.testing.assert_allclose(ev[:, 8], [r[1] for r in ref], atol=1e-9)
        np.testing.assert_allclose(ev[:, 9], [r[2] for r in ref], atol=1e-9)
        assert len(hands) >= 1 and np.abs(ev[:, 8]).max() > 0  # the luck is not trivially zero


# --- a run: streamed, on any number of workers, the same --------------------------------------------------


def test_one_worker_two_workers_one_per_core_and_dask_measure_identically(runs):
    luck.analyse_luck(runs["ek"], workers=1)
    one = _table(runs["ek"])
    luck.analyse_luck(runs["ek"], workers=2)
    pd.testing.assert_frame_equal(one, _table(runs["ek"]))
    luck.analyse_luck(runs["ek"], workers=0)  # 0: one per core, as in arena run
    pd.testing.assert_frame_equal(one, _table(runs["ek"]))
    for bad in (-1, 99_999_999):  # past 1024 it forked a process per chunk, as run and league serve refuse to
        with pytest.raises(
            luck.LuckError, match=rf"^--workers {bad} is not allowed \(0 for one per core, up to 1024\)$"
        ):
            luck.analyse_luck(runs["ek"], workers=bad)
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc,
        distributed.Client(lc) as client,
    ):
        luck.analyse_luck(runs["ek"], client=client)
    pd.testing.assert_frame_equal(one, _table(runs["ek"]))
    games = pd.concat([c.games for c in RunStore(runs["ek"]).chunks(["game_id", "score0", "score1", "swap"])])
    assert len(one) == len(games) == 1000 and set(one["game_id"]) == set(games["game_id"])
    # the margin is bot_a's final score minus bot_b's
    g = games.set_index("game_id").loc[one["game_id"]]
    sign = np.where(g["swap"].to_numpy() == 0, 1, -1)
    np.testing.assert_array_equal(one["margin"].to_numpy(), sign * (g["score0"] - g["score1"]).to_numpy())


def test_a_measure_that_fails_halfway_leaves_the_earlier_table_whole(runs, tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "half"
    shutil.copytree(runs["ek"], copy)
    luck.analyse_luck(copy, workers=1)
    before = _table(copy)
    second_fails, calls = failing_on_call(luck.run_task, 2, RuntimeError("the second task fails"))
    monkeypatch.setattr(luck, "run_task", second_fails)
    with pytest.raises((luck.LuckError, RuntimeError), match="the second task fails"):
        luck.analyse_luck(copy, workers=1)
    assert len(calls) == 2
    assert RunStore(copy).analyses() == [luck.TABLE]  # no half-written table beside it either
    pd.testing.assert_frame_equal(_table(copy), before)


def test_the_adjusted_result_lies_in_the_plain_interval_and_is_narrower(runs):
    """Smoke of the unbiasedness check (the 1,000,000-game version is scripts/bench_luck.py): on 500
    pairs the adjusted mean is inside the plain 95% interval, and its interval is narrower."""
    res = luck.luck_results(RunStore(runs["ek"]).analysis_parts(luck.TABLE))
    r = res[res["bot"] == "simple"].iloc[0]
    for what in ("points", "win"):
        assert r[f"{what}_plain_lo"] <= r[f"{what}_adjusted"] <= r[f"{what}_plain_hi"]
        assert r[f"{what}_games_ratio"] > 1.1
        assert r[f"{what}_adjusted_hi"] - r[f"{what}_adjusted_lo"] < r[f"{what}_plain_hi"] - r[f"{what}_plain_lo"]
    mirror = res[res["bot"] == "early-knock"].iloc[0]
    assert mirror["points_adjusted"] == pytest.approx(-r["points_adjusted"])
    assert mirror["win_adjusted"] == pytest.approx(1 - r["win_adjusted"])


def test_a_planted_blunder_of_known_cost_is_recovered_at_the_nominal_coverage(runs):
    """Simple against a copy of itself that forfeits 20% of its games at the first decision: Simple's true
    win rate is exactly 0.6 and its true margin 0 (see blunder_bot.py).  2,000 pairs in 40 blocks of
    50 (each pair has its own seed): the adjusted 95% intervals cover the truth in at least 34 of 40
    blocks (the binomial(40, 0.95) is below 34 with chance 0.014), and the whole run's adjusted estimate
    is within 3 standard errors of the truth."""
    luck.analyse_luck(runs["blunder"])
    t = _table(runs["blunder"])
    pairs = t.groupby("pair")[["margin", "win", "luck_points", "luck_win"]].mean()
    pairs["block"] = np.arange(len(pairs)) // 50
    assert len(pairs) == 2000
    truth = {"win": 0.5 + FORFEIT / 2, "margin": 0.0}
    luck_of = {"win": "luck_win", "margin": "luck_points"}
    q = sps.t.ppf(0.975, 49)
    for what, true in truth.items():
        adj = pairs[what] - pairs[luck_of[what]]
        cover = 0
        for _, x in adj.groupby(pairs["block"]):
            h = q * x.std(ddof=1) / math.sqrt(len(x))
            cover += abs(x.mean() - true) <= h
        assert cover >= 34, (what, cover)
        assert abs(adj.mean() - true) <= 3 * adj.std(ddof=1) / math.sqrt(len(adj))
        assert adj.var() < pairs[what].var()  # and it helps


def test_arena_analyze_prints_each_bots_luck_per_game_and_per_hand_under_its_error_rates(runs):
    """After ``arena luck``, ``arena analyze`` prints, under the error-rate table, each bot's luck per game and
    per hand (points) and per game (chance of winning), each bot in its own sign, over the games it graded
    (``--games 3``: those three, as the error rates; it printed the whole run's 1,000 games there); with a
    luck table of another value function it prints none."""
    from typer.testing import CliRunner

    from arena.analysis import decisions as dec
    from arena.cli import app

    run = runs["ek"]
    luck.analyse_luck(run)
    args = ["analyze", str(run), "--games", "3", "--opponent", "early-knock", "--samples", "4", "--quiet"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    rates = next(i for i, line in enumerate(lines) if line.startswith("bot ") and "error x1000" in line)
    head = lines.index(
        "Luck of the cards in the games graded (arena luck), next to the errors above: + favoured the bot"
    )
    assert rates < head and "luck pts/game" in lines[head + 1] and "pts/hand" in lines[head + 1]
    rows = {line.split()[0]: line.split() for line in lines[head + 2 : head + 4]}
    assert set(rows) == {"simple", "early-knock"}
    graded = set(pd.concat(list(dec.read_parts(run, dec.TABLE, ["game_id"])))["game_id"])
    assert len(graded) == 3
    t = _table(run)
    t = t[t["game_id"].isin(graded)]
    assert len(t) == 3
    for bot in ("simple", "early-knock"):
        sign = np.where(t["bot_a"] == bot, 1.0, -1.0)  # every game has this bot on one side
        games, hands = len(t), int(t["hands"].sum())
        _, g, h, per_game, per_hand, win = rows[bot]
        assert (int(g.replace(",", "")), int(h.replace(",", ""))) == (games, hands)
        assert float(per_game) == pytest.approx((sign * t["luck_points"]).sum() / games, abs=0.006)
        assert float(per_hand) == pytest.approx((sign * t["luck_points"]).sum() / hands, abs=0.006)
        assert float(win.rstrip("%")) == pytest.approx(100 * (sign * t["luck_win"]).sum() / games, abs=0.006)
    assert float(rows["simple"][3]) == pytest.approx(-float(rows["early-knock"][3]), abs=0.011)
    w = RunStore.open_for_writing(run, what="test")
    w.begin_analysis(luck.TABLE, {"value_sha256": "0" * 64})
    w.close()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "error x1000" in again.output and "Luck of the cards" not in again.output
    luck.analyse_luck(run)  # as the other tests expect it


# --- the value function is fixed ------------------------------------------------------------------------


def test_the_value_function_cannot_be_changed_through_the_public_api(runs, tmp_path):
    value = luck.shipped_value()
    with pytest.raises(ValueError, match="read-only"):
        value.draw[0, 0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        value.deal[0, 0, 0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.draw = np.zeros_like(value.draw)  # type: ignore[misc]
    assert luck.shipped_value() is value
    # no entry point takes a value function
    for fn in (luck.analyse_luck, luck.game_luck, luck.luck_results, luck.stored_results):
        assert not {"value", "table", "draw", "deal"} & set(inspect.signature(fn).parameters)
    # a luck table measured with another value is refused when read back
    assert luck.stored_results(runs["ek"]) is not None
    w = RunStore.open_for_writing(runs["ek"], what="test")
    w.begin_analysis(luck.TABLE, {"value_sha256": "0" * 64})
    w.close()
    with pytest.raises(luck.LuckError, match="another value function"):
        luck.stored_results(runs["ek"])
    assert luck.stored_luck_per_bot(runs["ek"]) is None  # nor shown next to the error rates


# --- where it shows: the command and the report ---------------------------------------------------------


def test_arena_luck_prints_plain_and_adjusted_results_and_the_report_shows_them(runs, tmp_path):
    from typer.testing import CliRunner

    from arena.analysis.luck_report import luck_section
    from arena.cli import app

    out = CliRunner().invoke(app, ["luck", str(runs["ek"]), "--quiet"])
    assert out.exit_code == 0, out.output
    assert "luck of 1,000 games measured" in out.output and "takes out the luck of the cards" in out.output
    lines = [line for line in out.output.splitlines() if line.startswith(("simple ", "early-knock "))]
    results = [line for line in lines if " 500 " in line]  # per matchup and side: 500 pairs
    per_bot = [line for line in lines if " 1,000 " in line]  # each bot's luck: 1,000 games
    assert len(results) == 2 and len(per_bot) == 2, out.output
    md_lines, html_lines = luck_section(runs["ek"])  # what the report shows (arena.analysis.report calls it)
    md = "\n".join(md_lines)
    assert "## Luck-adjusted results" in md and "takes out the luck of the cards" in md
    assert "| simple | early-knock | 500 |" in md and "<h2>Luck-adjusted results</h2>" in html_lines
    # a run without action logs: one line, exit 2
    cfg = TournamentConfig(
        name="nolog", bots=("simple", "random"), games_per_pair=20, chunk_size=20, workers=1,
        record_log=False, results_dir=str(tmp_path),
    )  # fmt: skip
    run_tournament(cfg, progress=False)
    bad = CliRunner().invoke(app, ["luck", str(tmp_path / "nolog"), "--quiet"])
    assert bad.exit_code == 2 and "has no stored action logs" in bad.output


def test_the_viewer_marks_very_lucky_and_unlucky_draws_at_their_steps(runs):
    from arena.web.viewer import recorded_game

    store = RunStore(runs["ek"])
    marked = 0
    for gid in range(2):
        game = recorded_game(runs["ek"], gid)
        data = game["luck"]
        assert data is not None
        rec = store.game_record(gid)
        ev, _ = luck.game_luck(int(rec.game["seed"]), rules_array(store.rules()), rec.actions.astype(np.int64))
        draws = ev[ev[:, 1] == luck.KIND_DRAW]
        assert len(data["steps"]) == len(draws)
        for key, s in data["steps"].items():
            step = game["steps"][int(key)]
            assert "draws" in step["text"] or "stock" in step["text"], step["text"]  # the step shows the draw
            assert s["mark"] == (
                "very lucky" if s["luck_win"] >= 0.05 else "very unlucky" if s["luck_win"] <= -0.05 else ""
            )
            marked += bool(s["mark"])
        assert data["seat0_luck_points"] == pytest.approx(ev[:, 8].sum(), abs=0.01)
    assert marked > 0


def test_luck_per_bot_counts_each_side_in_its_own_sign_per_game_and_per_hand():
    part = pd.DataFrame(
        {
            "bot_a": ["x", "x", "y"],
            "bot_b": ["y", "y", "z"],
            "hands": [4, 6, 5],
            "luck_points": [10.0, -4.0, 3.0],
            "luck_win": [0.2, -0.1, 0.05],
        }
    )
    per = luck.luck_per_bot([part.iloc[:2], part.iloc[2:]]).set_index("bot")
    assert per.loc["x", "games"] == 2 and per.loc["x", "hands"] == 10
    assert per.loc["x", "luck_points_per_game"] == pytest.approx(3.0)
    assert per.loc["x", "luck_points_per_hand"] == pytest.approx(0.6)
    # y: -10 and +4 as bot_b, +3 as bot_a: -3 over 3 games and 15 hands
    assert per.loc["y", "luck_points_per_game"] == pytest.approx(-1.0)
    assert per.loc["y", "luck_points_per_hand"] == pytest.approx(-0.2)
    assert per.loc["y", "luck_win_per_game"] == pytest.approx((-0.2 + 0.1 + 0.05) / 3)
    assert per.loc["z", "luck_points_per_game"] == pytest.approx(-3.0)


def test_the_luck_table_shows_two_long_variant_names_whole():
    from arena.analysis.luck_report import per_bot_text

    names = ["early-knock:knock_at=5,late_drop=6", "early-knock:knock_at=5,late_drop=7"]
    per_bot = pd.DataFrame(
        {
            "bot": names,
            "games": [100, 100],
            "hands": [400, 410],
            "luck_points_per_game": [1.5, -1.5],
            "luck_points_per_hand": [0.4, -0.4],
            "luck_win_per_game": [0.01, -0.01],
        }
    )
    lines = per_bot_text(per_bot).splitlines()
    assert [line.split()[0] for line in lines[1:]] == names


def _luck_part(pair: list[int], win: list[float], luck_win: list[float]) -> pd.DataFrame:
    """A stored luck table's part for one matchup x vs y: the given pair numbers, wins and luck; 4 hands a game."""
    n = len(pair)
    return pd.DataFrame(
        {
            "matchup": ["x vs y"] * n,
            "bot_a": ["x"] * n,
            "bot_b": ["y"] * n,
            "pair": pair,
            "hands": [4] * n,
            "margin": [30.0 * (2 * w - 1) for w in win],
            "win": win,
            "luck_points": [0.0] * n,
            "luck_win": luck_win,
        }
    )


def test_the_luck_table_counts_games_and_says_so_for_a_run_without_duplicate_pairs():
    """Without duplicate pairs each game is its own unit: the table's count column is headed "games" and the
    text says the intervals are over games; with duplicate pairs both say pairs."""
    from arena.analysis.luck_report import results_table, what_it_does

    win = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    single = luck.luck_results([_luck_part(list(range(6)), win, [0.0] * 6)])
    assert single["pairs"].tolist() == [6, 6] and single["games"].tolist() == [6, 6]
    assert results_table(single).head[2] == "games"
    assert "over games (the run has no duplicate pairs" in what_it_does(single)
    assert "duplicate pairs." not in what_it_does(single)
    paired = luck.luck_results([_luck_part([0, 0, 1, 1, 2, 2], win, [0.0] * 6)])
    assert paired["pairs"].tolist() == [3, 3]
    assert results_table(paired).head[2] == "pairs"
    assert what_it_does(paired).endswith("Intervals: 95%, over duplicate pairs.")


def test_the_luck_table_shows_win_rate_intervals_within_0_and_100_percent():
    """Luck-adjusted win rates near 0 or 1 have t intervals that reach past them; the table shows the ends at
    0% and 100% (a rate lies nowhere else), and leaves the points intervals as they are."""
    from arena.analysis.luck_report import results_table

    # x wins 9 games of 10, the one loss the unlucky one: adjusted values 0.95 and 1.05, mean 0.99
    win = [1.0] * 9 + [0.0]
    luck_win = [-0.05, 0.05] * 4 + [0.05, -0.95]
    res = luck.luck_results([_luck_part(list(range(10)), win, luck_win)])
    x = res[res["bot"] == "x"].iloc[0]
    assert x["win_adjusted_hi"] > 1.0 and x["win_adjusted_lo"] < 1.0  # the interval reaches past 100%
    y = res[res["bot"] == "y"].iloc[0]
    assert y["win_adjusted_lo"] < 0.0
    table = results_table(res)
    rows = {row[0]: row for row in table.rows}
    win_lo, win_hi = 100 * x["win_adjusted_lo"], 100 * x["win_adjusted_hi"]
    assert rows["x"][11] == f"{win_lo:.1f}..100.0%"
    assert rows["y"][11] == f"0.0..{100 - win_lo:.1f}%"
    assert win_hi > 100.0 and rows["x"][4] == f"{x['points_plain_lo']:+.2f}..{x['points_plain_hi']:+.2f}"


def test_the_luck_table_shows_an_adjusted_win_rate_past_an_end_at_that_end_inside_its_interval():
    """x won every game, mostly unlucky ones: its adjusted rate (win minus luck) is past 100%, and the table
    printed 101.8% beside an interval that ends at 100.0%."""
    from arena.analysis.luck_report import results_table

    res = luck.luck_results([_luck_part(list(range(10)), [1.0] * 10, [-0.05] * 8 + [0.05, 0.05])])
    x, y = (res[res["bot"] == b].iloc[0] for b in ("x", "y"))
    assert x["win_adjusted"] > 1.0 and y["win_adjusted"] < 0.0  # the estimates themselves are kept
    rows = {row[0]: row for row in results_table(res).rows}
    assert rows["x"][10] == "100.0%" and rows["x"][11].endswith("..100.0%")
    assert rows["y"][10] == "0.0%" and rows["y"][11].startswith("0.0..")


def test_an_interrupted_measure_is_gone_on_from_by_the_next_pass_and_measures_as_one(runs, tmp_path, monkeypatch):
    """Ctrl-C in the second chunk: the next pass measures only the chunks not yet stored (it used to start over,
    and the luck of a million games takes hours), and the table equals a single pass's."""
    import shutil

    copy = tmp_path / "half"
    shutil.copytree(runs["ek"], copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    whole = luck.analyse_luck(runs["ek"], workers=1)
    measured = luck.run_task
    second_fails, calls = failing_on_call(measured, 2, KeyboardInterrupt())
    monkeypatch.setattr(luck, "run_task", second_fails)
    with pytest.raises(KeyboardInterrupt):
        luck.analyse_luck(copy, workers=1)
    assert RunStore(copy).analyses() == []
    counted, again = failing_on_call(measured, 0, AssertionError("never"))
    monkeypatch.setattr(luck, "run_task", counted)
    done = luck.analyse_luck(copy, workers=1)
    kept = len(calls[0].games)
    assert done.resumed == kept > 0 and done.games == whole.games
    assert not {int(g) for g in calls[0].games["game_id"]} & {int(g) for t in again for g in t.games["game_id"]}
    pd.testing.assert_frame_equal(
        _table(copy).sort_values("game_id").reset_index(drop=True),
        _table(runs["ek"]).sort_values("game_id").reset_index(drop=True),
    )


@pytest.mark.parametrize("kind", ["swept", "mixed"])
def test_the_luck_tables_plain_win_rate_has_the_matchup_tables_interval_and_never_a_point(kind):
    """The plain win rate is the matchups table's figure: it gets the same interval (Wilson's on the pairs'
    effective sample size).  Its t interval was a point, "0.0..0.0%", for a matchup swept on every pair,
    beside the matchups table's 0.0-3.8% for the same games, and covered far less than 95% near 0 or 1."""
    from arena.analysis import stats as st
    from tests.analysis.test_stats import games_from_results

    res = np.zeros((100, 2), dtype=int) if kind == "swept" else np.random.default_rng(5).integers(0, 2, size=(60, 2))
    win = res.reshape(-1).astype(float).tolist()
    pairs = np.repeat(np.arange(len(res)), 2).tolist()
    table = luck.luck_results([_luck_part(pairs, win, [0.0] * len(win))]).set_index("bot")
    want = st.pair_stats(games_from_results([("x", "y", res)])).iloc[0]
    x, y = table.loc["x"], table.loc["y"]
    assert x["win_plain"] == pytest.approx(want["win_rate_a"])
    assert (x["win_plain_lo"], x["win_plain_hi"]) == pytest.approx((want["win_rate_ci_low"], want["win_rate_ci_high"]))
    assert (y["win_plain_lo"], y["win_plain_hi"]) == pytest.approx((1 - x["win_plain_hi"], 1 - x["win_plain_lo"]))
    assert x["win_plain_hi"] - x["win_plain_lo"] > 0.03


def test_the_games_ratio_of_a_result_that_never_varied_is_undefined_not_zero():
    """Every game won by the same bot: the plain win rate's variance is 0, and "x games" (plain variance over
    adjusted variance) read 0.00, as if the adjustment cost all the games; it is undefined, shown "-"."""
    from arena.analysis.luck_report import results_table

    n = 40
    rng = np.random.default_rng(4)
    lp = rng.normal(0, 5, n)
    parts = pd.DataFrame(
        {
            "matchup": "a vs b", "bot_a": "a", "bot_b": "b", "pair": np.arange(n), "hands": 3,
            "margin": rng.normal(30, 20, n) + lp, "win": 1.0, "luck_points": lp, "luck_win": rng.normal(0, 0.1, n),
        }
    )  # fmt: skip
    res = luck.luck_results([parts])
    assert np.isnan(res["win_games_ratio"]).all()  # the plain win rate never varied
    assert np.isfinite(res["points_games_ratio"]).all() and (res["points_games_ratio"] > 0).all()
    row = results_table(res).rows[0]
    assert row[-1] == "-" and row[7] == f"{res['points_games_ratio'].iloc[0]:.2f}"
