"""arena analyze on a stored run: exact, the same on any number of workers, stored through the run store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from arena.analysis import decisions as dec
from arena.cli import app
from arena.run.runner import run_tournament
from arena.run.store import RunStore, StoreError
from arena.settings.config import TournamentConfig
from tests.analysis.faults import failing_on_call

SETTINGS = dec.AnalysisSettings(samples=12, seed=5)


def played(results: Path, name: str, bots: tuple[str, ...], games: int, chunk: int, seed: int) -> TournamentConfig:
    """Play a small complete run into ``results/name``; returns its config (to play more of it)."""
    cfg = TournamentConfig(
        name=name, bots=bots, games_per_pair=games, chunk_size=chunk, seed=seed, workers=1, results_dir=str(results)
    )
    assert run_tournament(cfg, progress=False).status == "complete"
    return cfg


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("dec")
    played(tmp / "results", "r", ("simple", "gin-chasing"), games=8, chunk=4, seed=9)
    return tmp / "results" / "r"


def frame(run_dir: Path, table: str = dec.TABLE) -> pd.DataFrame:
    return pd.concat(list(RunStore(run_dir).analysis_parts(table)), ignore_index=True)


def test_one_worker_two_workers_one_per_core_and_dask_grade_identically(run):
    dec.analyse_run(run, SETTINGS, games=3, workers=1)
    one = frame(run)
    dec.analyse_run(run, SETTINGS, games=3, workers=2)
    two = frame(run)
    pd.testing.assert_frame_equal(one, two)
    dec.analyse_run(run, SETTINGS, games=3, workers=0)  # 0: one per core, as in arena run
    pd.testing.assert_frame_equal(one, frame(run))
    for bad in (-1, 99_999_999):  # past 1024 it forked a process per task, as run and league serve refuse to
        with pytest.raises(
            dec.AnalysisError, match=rf"^--workers {bad} is not allowed \(0 for one per core, up to 1024\)$"
        ):
            dec.analyse_run(run, SETTINGS, games=3, workers=bad)
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc,
        distributed.Client(lc) as client,
    ):
        dec.analyse_run(run, SETTINGS, games=3, client=client)
    pd.testing.assert_frame_equal(one, frame(run))
    assert one["game_id"].nunique() == 3
    dec.analyse_run(run, dec.AnalysisSettings(samples=12, seed=6), games=3)
    assert not frame(run)["equities"].equals(one["equities"])  # another seed, other deals


def test_every_row_is_consistent_and_only_the_chosen_bot_is_graded(run):
    dec.analyse_run(run, SETTINGS, bot="simple", games=2)
    df = frame(run)
    assert set(df["bot"]) == {"simple"} and set(df["opponent"]) == {"gin-chasing"}
    assert (df["loss"] >= 0).all()
    assert np.allclose(df["loss"], df["eq_best"] - df["eq_chosen"])
    for r in df.itertuples():
        opts = list(r.options)
        assert r.chosen in opts and r.best in opts and len(opts) == r.n_options >= 2
        assert r.eq_best == pytest.approx(max(r.equities))
        assert r.eq_chosen == pytest.approx(r.equities[opts.index(r.chosen)])
    assert set(df["kind"]) <= set(dec.KINDS) and {"draw", "discard"} <= set(df["kind"])
    info = RunStore(run).analysis_info(dec.TABLE)
    assert info["samples"] == 12 and info["bot"] == "simple" and info["perfect"] is False


def test_view_step_points_at_the_decision_in_the_viewer(run):
    from arena.cli.show import stored_game
    from arena.web.table import game_steps

    res, rows = dec.analyse_run(run, SETTINGS, game=1, store_result=False)
    rec, rules, names, log, _ = stored_game(run, 1)
    steps = game_steps(int(rec.game["seed"]), rules, log, names)
    assert rows is not None and len(rows) > 10
    for r in rows.itertuples():
        assert steps[r.view_step]["seat"] == r.seat
        assert r.bot in steps[r.view_step]["text"]


def test_hindsight_is_stored_apart_and_labelled(run):
    dec.analyse_run(run, SETTINGS, games=1)
    dec.analyse_run(run, dec.AnalysisSettings(samples=12, perfect=True), games=1)
    store = RunStore(run)
    assert {dec.TABLE, dec.TABLE_PERFECT} <= set(store.analyses())
    assert store.analysis_info(dec.TABLE_PERFECT)["perfect"] is True
    assert "HINDSIGHT" in dec.game_text(frame(run, dec.TABLE_PERFECT), store.analysis_info(dec.TABLE_PERFECT))


def test_a_corrupted_part_is_left_out_with_one_line_and_names_are_checked(run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    dec.analyse_run(copy, SETTINGS, games=8)  # two tasks of 4 games: two parts
    store = RunStore(copy)
    n = len(list(store.analysis_parts(dec.TABLE)))
    assert n == 2
    part = copy / "analysis" / dec.TABLE / "00001.parquet"
    part.write_bytes(part.read_bytes()[:-10])
    store = RunStore(copy)
    assert len(list(store.analysis_parts(dec.TABLE))) == 1
    assert any("part 1" in p and "corrupted" in p for p in store.problems)
    w = RunStore.open_for_writing(copy)
    try:
        with pytest.raises(StoreError, match="not allowed"):
            w.begin_analysis("../x", {})
    finally:
        w.close()
    with pytest.raises(StoreError, match="no analysis 'nope'"):
        list(store.analysis_parts("nope"))


def test_cli_prints_one_games_losses_and_rejects_bad_input_in_one_line(run):
    cli = CliRunner()
    r = cli.invoke(app, ["analyze", str(run), "--game", "2", "--samples", "12", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "decisions graded at 12 samples" in r.output and "error x1000" in r.output
    assert "simple" in r.output and "gin-chasing" in r.output
    r = cli.invoke(app, ["analyze", str(run), "--bot", "nobody", "--quiet"])
    assert r.exit_code == 2 and "error: " in r.output and "no bot 'nobody'" in r.output
    r = cli.invoke(app, ["analyze", str(run), "--games", "2", "--game", "1", "--quiet"])
    assert r.exit_code == 2 and "not both" in r.output
    r = cli.invoke(app, ["analyze", str(run), "--samples", "1", "--quiet"])
    assert r.exit_code == 2 and "samples = 1" in r.output


def test_the_report_gets_the_section_and_the_viewer_the_grades(run):
    from arena.analysis.report import write_report
    from arena.web.viewer import recorded_game

    dec.analyse_run(run, SETTINGS, games=2)
    files = write_report(run)
    page = files["report_html"].read_text()
    md = files["report_md"].read_text()
    assert "Why bots lose: every decision graded" in page and "at 12 sampled deals per decision" in page
    assert "worst decisions" in page and "http://127.0.0.1:8766/view?game=" in page
    assert page.count("#step=") == min(20, len(frame(run)))
    assert "| simple | all |" in md and "(run)/plots/decisions.png" not in md and (run / "plots/decisions.png").exists()
    data = recorded_game(run, 0)
    a = data["analysis"]
    assert a is not None and a["samples"] == 12 and not a["hindsight"]
    rows = frame(run)
    rows = rows[rows["game_id"] == 0]
    assert set(a["steps"]) == {str(s) for s in rows["view_step"]}
    for k, g in a["steps"].items():
        assert data["steps"][int(k)]["seat"] == g["seat"] and g["loss"] >= 0
    assert all(0 <= e <= 1 for _, e in a["curve"])
    assert recorded_game(run, 7)["analysis"] is None  # game 7 was not graded


def test_looking_at_one_game_leaves_the_runs_analysis_and_the_viewer_finds_it(run, tmp_path):
    """``analyze --game N`` (the how-to's "one game, in the terminal") replaced the run's analysis of the same
    settings for good, and the report then spoke of one game."""
    import shutil

    from arena.web.viewer import recorded_game

    copy = tmp_path / "r"
    shutil.copytree(run, copy)
    dec.analyse_run(copy, SETTINGS, games=3)
    before, names = frame(copy), set(RunStore(copy).analyses())
    res, rows = dec.analyse_run(copy, SETTINGS, game=7)
    assert res.table == dec.TABLE + dec.ONE_GAME and res.earlier == ""
    assert set(rows["game_id"]) == {7}
    assert frame(copy).equals(before) and set(before["game_id"]) == {0, 1, 2}  # the run's analysis, untouched
    assert set(RunStore(copy).analyses()) == names | {dec.TABLE + dec.ONE_GAME}  # nothing set aside
    assert recorded_game(copy, 7)["analysis"] is not None  # the viewer finds the one game's grades
    assert recorded_game(copy, 1)["analysis"] is not None  # and the run's
    dec.analyse_run(copy, SETTINGS, game=5)  # the next one-game look replaces the last
    assert set(frame(copy, dec.TABLE + dec.ONE_GAME)["game_id"]) == {5} and frame(copy).equals(before)


def test_opponent_restricts_the_games_to_one_matchup(run):
    dec.analyse_run(run, SETTINGS, bot="gin-chasing", opponent="simple", games=1)
    df = frame(run)
    assert set(df["bot"]) == {"gin-chasing"} and set(df["opponent"]) == {"simple"} and df["game_id"].nunique() == 1
    with pytest.raises(dec.AnalysisError, match="no bot 'monte-carlo'"):
        dec.analyse_run(run, SETTINGS, opponent="monte-carlo", games=1)


def test_analyses_accumulate_per_bot_and_settings_and_a_rerun_says_what_it_replaces(run, tmp_path):
    import shutil
    from dataclasses import asdict

    copy = tmp_path / "acc"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    first, _ = dec.analyse_run(copy, SETTINGS, bot="simple", games=1)
    assert first.earlier == ""
    kept_simple = dec.kept_name(dec.TABLE, {**asdict(SETTINGS), "bot": "simple", "opponent": None})
    second, _ = dec.analyse_run(copy, SETTINGS, bot="gin-chasing", games=1)
    assert second.earlier == f"the earlier analysis of bot 'simple' at 12 samples, seed 5 is kept as '{kept_simple}'"
    assert RunStore(copy).analyses() == sorted([dec.TABLE, kept_simple])
    assert set(frame(copy, kept_simple)["bot"]) == {"simple"} and set(frame(copy)["bot"]) == {"gin-chasing"}
    third, _ = dec.analyse_run(copy, SETTINGS, bot="gin-chasing", games=2)
    assert third.earlier == (
        "replaces the earlier analysis 'decisions' of bot 'gin-chasing' at 12 samples, seed 5 "
        "(the same bot and settings)"
    )
    assert RunStore(copy).analyses() == sorted([dec.TABLE, kept_simple]) and frame(copy)["game_id"].nunique() == 2
    # simple again: gin-chasing's is kept, and simple's older copy gives way to the new one (no duplicate).
    kept_gin = dec.kept_name(dec.TABLE, {**asdict(SETTINGS), "bot": "gin-chasing", "opponent": None})
    r = CliRunner().invoke(
        app, ["analyze", str(copy), "--bot", "simple", "--games", "1", "--samples", "12", "--seed", "5", "--quiet"]
    )
    assert r.exit_code == 0, r.output
    assert f"is kept as '{kept_gin}'" in r.output
    assert RunStore(copy).analyses() == sorted([dec.TABLE, kept_gin])
    assert set(frame(copy)["bot"]) == {"simple"} and set(frame(copy, kept_gin)["bot"]) == {"gin-chasing"}


def test_a_stored_log_that_does_not_replay_is_one_error_naming_the_game(run):
    """A stored answer the engine refuses (a flipped byte) stops the grading of that game with its number."""
    job = next(dec.game_jobs(RunStore(run), "simple", 1, None))
    settings = dec.AnalysisSettings(samples=4, seed=5)
    rules = dec.run_rules(RunStore(run))
    assert dec.analyse_game(job, rules, settings, positions=range(12))  # the stored log itself grades
    bad = bytearray(job.actions)
    bad[len(bad) // 2] = 99  # no decision has an answer 99
    broken = dec.GameJob(job.game_id, job.seed, bytes(bad), job.names, job.matchup, job.seats)
    with pytest.raises(dec.AnalysisError, match=rf"^game {job.game_id}: the stored action log does not replay: "):
        dec.analyse_game(broken, rules, settings)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"game": 999}, "no game 999"),
        ({"game": 1, "bot": "simple", "opponent": "simple"}, "--bot and --opponent both name 'simple'"),
        ({"game": 1, "bot": "random", "opponent": "simple"}, "no bot 'random' in this run"),
    ],
)
def test_a_game_that_cannot_be_graded_leaves_the_stored_analyses_as_they_were(run, tmp_path, args, message):
    # Before, the error came after the earlier analysis was set aside and an empty one begun in its place.
    import shutil

    copy = tmp_path / "keep"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    dec.analyse_run(copy, SETTINGS, bot="simple", games=1)
    before = frame(copy)
    with pytest.raises(dec.AnalysisError, match=message):
        dec.analyse_run(copy, SETTINGS, **args)
    assert RunStore(copy).analyses() == [dec.TABLE]
    pd.testing.assert_frame_equal(frame(copy), before)


def test_an_analysis_that_fails_halfway_leaves_the_earlier_one_whole(run, tmp_path, monkeypatch):
    # The same bot and settings replace the earlier table, but only once the new one is complete:
    # a failure in the second task of four games must leave the first analysis as it was.
    import shutil

    copy = tmp_path / "half"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    dec.analyse_run(copy, SETTINGS, games=2)
    before = frame(copy)
    graded = dec.run_task
    second_fails, calls = failing_on_call(graded, 2, dec.AnalysisError("the second task fails"))
    monkeypatch.setattr(dec, "run_task", second_fails)
    with pytest.raises(dec.AnalysisError, match="the second task fails"):
        dec.analyse_run(copy, SETTINGS, workers=1)  # all 8 games: two tasks
    assert len(calls) == 2
    assert RunStore(copy).analyses() == [dec.TABLE]  # no half-written table beside it either
    pd.testing.assert_frame_equal(frame(copy), before)
    monkeypatch.setattr(dec, "run_task", graded)
    dec.analyse_run(copy, SETTINGS, workers=1)
    assert frame(copy)["game_id"].nunique() == 8 and RunStore(copy).analyses() == [dec.TABLE]


def test_analyze_and_luck_exit_1_naming_a_chunk_they_had_to_leave_out(run, tmp_path):
    """A damaged chunk is left out with a warning; luck exited 0 and its report section then lacked that
    matchup with no sign of it.  Both commands store what they could read and exit 1, as the report does."""
    import shutil

    copy = tmp_path / "r"
    shutil.copytree(run, copy)
    target = sorted((copy / "actions").rglob("00000.parquet"))[0]
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    cli = CliRunner()
    for args in (["analyze", str(copy), "--samples", "4", "--games", "4", "-q"], ["luck", str(copy), "-q"]):
        out = cli.invoke(app, args)
        assert out.exit_code == 1, out.output
        assert f"problem(s) in {copy}, named above: the stored analysis leaves out what could not be read" in out.output


def test_the_report_counts_every_graded_game_of_three_bots(tmp_path):
    """With three bots no bot plays every game: the section said "in 4 games" (the most one bot played)
    of a run whose 6 games were all graded."""
    from arena.analysis.report import write_report

    played(tmp_path, "three", ("simple", "gin-chasing", "random"), games=2, chunk=2, seed=3)
    res, _ = dec.analyse_run(tmp_path / "three", dec.AnalysisSettings(samples=4, seed=1))
    assert res.games == 6
    md = write_report(tmp_path / "three")["report_md"].read_text()
    assert "Every decision of every bot in 6 games" in md


def test_a_report_says_when_its_luck_and_decision_tables_predate_games_played_since(tmp_path):
    """A bot added after arena luck and arena analyze: the report showed the old tables as if whole."""
    from arena.analysis.luck import analyse_luck
    from arena.analysis.report import write_report

    cfg = played(tmp_path, "grow", ("simple", "random"), games=4, chunk=4, seed=3)
    run = tmp_path / "grow"
    analyse_luck(run)
    dec.analyse_run(run, dec.AnalysisSettings(samples=4, seed=1))
    md = write_report(run)["report_md"].read_text()
    assert "This table measures" not in md and "Every decision of every bot in 4 games, graded" in md
    bigger = cfg.replace(bots=("simple", "random", "gin-chasing"))
    assert run_tournament(bigger, progress=False).status == "complete"
    md = write_report(run)["report_md"].read_text()
    assert "This table measures 4 of the run's 12 games: run `arena luck` again" in md
    assert "Every decision of every bot in 4 games (of the run's 12), graded" in md


def test_a_pass_interrupted_halfway_is_gone_on_from_by_the_next_and_grades_as_one_pass(run, tmp_path, monkeypatch):
    """Ctrl-C in the second task of two: the next pass of the same analysis grades only the second task's
    games (an interrupted pass used to be thrown away whole: hours on a large run), and the table is the one
    a single pass gives; a pass at other settings starts afresh."""
    import shutil

    fresh, copy = tmp_path / "fresh", tmp_path / "half"
    for d in (fresh, copy):
        shutil.copytree(run, d)
        shutil.rmtree(d / "analysis", ignore_errors=True)
    whole, _ = dec.analyse_run(fresh, SETTINGS, workers=1)
    graded = dec.run_task
    second_fails, calls = failing_on_call(graded, 2, KeyboardInterrupt())
    monkeypatch.setattr(dec, "run_task", second_fails)
    with pytest.raises(KeyboardInterrupt):
        dec.analyse_run(copy, SETTINGS, workers=1)
    assert RunStore(copy).analyses() == []  # the half table is not an analysis anyone reads
    counted, again = failing_on_call(graded, 0, AssertionError("never"))
    monkeypatch.setattr(dec, "run_task", counted)
    res, _ = dec.analyse_run(copy, SETTINGS, workers=1)
    assert len(again) == 1 and {j.game_id for j in again[0].games} == set(range(4, 8))
    assert (res.resumed, res.games, res.decisions) == (4, 8, whole.decisions)
    assert 0 < res.resumed_decisions < res.decisions  # the rate shown is over this pass's decisions alone
    key = ["game_id", "step", "seat"]
    pd.testing.assert_frame_equal(
        frame(copy).sort_values(key).reset_index(drop=True), frame(fresh).sort_values(key).reset_index(drop=True)
    )
    assert RunStore(copy).analyses() == [dec.TABLE]
    monkeypatch.setattr(dec, "run_task", second_fails)
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        dec.analyse_run(copy, SETTINGS, workers=1)
    first_fails, tried = failing_on_call(graded, 1, KeyboardInterrupt())
    monkeypatch.setattr(dec, "run_task", first_fails)
    with pytest.raises(KeyboardInterrupt):
        dec.analyse_run(copy, dec.AnalysisSettings(samples=13, seed=5), workers=1)
    # other settings: nothing of the interrupted pass is kept, so its first task holds the games graded before
    assert {j.game_id for j in tried[0].games} == set(range(4))


def test_an_interrupted_pass_with_a_damaged_part_is_not_gone_on_from_but_graded_afresh(run, tmp_path, monkeypatch):
    """A kept part that fails its checksum would stay in the finished table, named as left out at every read:
    the next pass starts afresh instead, and the table it writes reads without a problem."""
    import shutil

    copy = tmp_path / "damaged"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    graded = dec.run_task
    second_fails, _ = failing_on_call(graded, 2, KeyboardInterrupt())
    monkeypatch.setattr(dec, "run_task", second_fails)
    with pytest.raises(KeyboardInterrupt):
        dec.analyse_run(copy, SETTINGS, workers=1)
    part = next((copy / "analysis" / (dec.TABLE + "-unfinished")).glob("*.parquet"))
    part.write_bytes(part.read_bytes()[:-8] + b"damaged!")
    monkeypatch.setattr(dec, "run_task", graded)
    res, _ = dec.analyse_run(copy, SETTINGS, workers=1)
    store = RunStore(copy)
    table = pd.concat(list(store.analysis_parts(dec.TABLE)), ignore_index=True)
    assert res.resumed == 0 and table["game_id"].nunique() == 8 and store.problems == []


def test_ctrl_c_in_analyze_says_the_games_graded_so_far_are_kept(run, tmp_path, monkeypatch):
    """It said "nothing was stored", and the next pass then said it kept the games an interrupted pass graded:
    a user told the first might well have thrown the work away."""
    import shutil

    from typer.testing import CliRunner

    from arena.cli.main import app

    copy = tmp_path / "half"
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "analysis", ignore_errors=True)
    second_fails, _ = failing_on_call(dec.run_task, 2, KeyboardInterrupt())
    monkeypatch.setattr(dec, "run_task", second_fails)
    out = CliRunner().invoke(app, ["analyze", str(copy), "--samples", "12", "--seed", "5", "-q"])
    assert out.exit_code == 130, out.output
    assert "the games graded so far are kept, and the same command goes on from them" in out.output, out.output
    assert "nothing was stored" not in out.output
    monkeypatch.undo()
    again = CliRunner().invoke(app, ["analyze", str(copy), "--samples", "12", "--seed", "5", "-q"])
    assert again.exit_code == 0 and "(4 of the games by an interrupted pass, kept)" in again.output, again.output
