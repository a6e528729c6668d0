"""Parameter sweeps (arena/analysis/sweep/): the file format, the runs, the tables, the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from arena.analysis.sweep import SweepError, analyse_sweep, load_sweep, run_sweep
from arena.run.store import RunStore


def _sweep(tmp_path, **kw):
    d = dict(
        name="s",
        bot="early-knock",
        opponents=["simple"],
        games=200,
        chunk_size=100,
        seed=7,
        workers=1,
        grid={"knock_at": [0, 10]},
        params={"late_drop": 0},
        results_dir=str(tmp_path),
    )
    d.update(kw)
    return d


@pytest.mark.parametrize(
    "change, message",
    [
        ({"colour": 1}, "unknown key 'colour'"),
        ({"grid": {}}, "one or two parameters"),
        ({"grid": {"knock_at": [1], "slack": [1], "late_drop": [1]}}, "one or two parameters"),
        ({"grid": {"knock_at": "5"}}, "grid.knock_at must be a non-empty list of numbers"),
        ({"games": 15}, "games must be an even number"),
        ({"rules": "standard", "rules_grid": {"gin_bonus": [20]}}, "not both"),
        ({"rules_grid": {"gin_bonus": 20}}, "exactly one setting with a list"),
        ({"rules_grid": {"undercut_bonus": []}}, r"rules_grid\.undercut_bonus must be a non-empty list"),
        ({"grid": {"no_such_param": [1]}}, "no_such_param"),
        ({"opponents": ["no-such-bot"]}, "no-such-bot"),
        ({"params": {"knock_at": 3, "late_drop": 0}}, "both in grid and in params"),
        # A value out of range at a later point, not only at the first: caught before any game.
        ({"grid": {"knock_at": [0, 5, 99]}}, r"bot 'early-knock@knock_at=99': knock_at = 99\.0 must be between"),
        ({"grid": {"knock_at": [0, 5], "slack": [1, -2]}}, r"early-knock@knock_at=0,slack=-2.*slack = -2"),
        # The sweep's folder is results_dir/name, and --fresh deletes it: never "", ".." or a path.
        ({"name": ".."}, r"name = '\.\.' is not allowed"),
        ({"name": ""}, r"name = '' is not allowed"),
        ({"name": "../escaped"}, r"name = '\.\./escaped' is not allowed"),
        ({"seed": "secret"}, "seed must be an integer"),
        ({"seed": 1.9}, "seed must be an integer"),
        ({"workers": "two"}, "workers must be a whole number"),
        ({"params": {"late_drop": "x"}}, "params.late_drop must be a number"),
        ({"limits": "x"}, r"limits = 'x' is not allowed \(allowed: a table with decision_seconds"),
        ({"limits": 5}, "limits = 5 is not allowed"),
        ({"results_dir": 5}, r"results_dir = 5 is not allowed \(allowed: a folder's path, as text\)"),  # was 5/
        ({"results_dir": ""}, "results_dir = '' is not allowed"),  # was the working folder
        ({"scheduler": 8786}, "scheduler = 8786 is not allowed"),
        ({"game": 10}, "unknown key 'game' \\(did you mean 'games'\\?"),
        ({"limits": {"decision_secs": 1}}, "limits has no key 'decision_secs'"),
    ],
)
def test_bad_sweep_files_are_one_line_errors(tmp_path, change, message):
    with pytest.raises(SweepError, match=message) as exc:
        load_sweep(_sweep(tmp_path, **change))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    "body, message",
    [
        (b'bot = "early-knock"\nname = "caf\xe9"\n', "is not UTF-8 text"),
        ('bot = "early-knock"\nx = ' + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ],
)
def test_a_sweep_file_that_is_not_toml_text_is_one_line_error(tmp_path, body, message):
    path = tmp_path / "s.toml"
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(SweepError, match=message) as exc:
        load_sweep(path)
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)


def test_rules_grid_and_labels(tmp_path):
    s = load_sweep(_sweep(tmp_path, rules_grid={"preset": "eaai", "undercut_bonus": [10, 25]}))
    assert [lab for lab, _ in s.rules] == ["undercut_bonus=10", "undercut_bonus=25"]
    assert s.rules[1][1] == {"preset": "eaai", "undercut_bonus": 25}
    s = load_sweep(_sweep(tmp_path, rules=["standard", "oklahoma"], grid={"knock_at": [2, 8], "slack": [0, 3]}))
    assert [lab for lab, _ in s.rules] == ["standard", "oklahoma"]
    assert s.points() == [(2, 0), (2, 3), (8, 0), (8, 3)]
    assert s.variant((2, 3)) == "early-knock@knock_at=2,slack=3"


def test_a_small_sweep_end_to_end(tmp_path):
    # Two grid points x one opponent x two rules values: one row each, the report and its plots,
    # one run folder per rules value holding one gauntlet matchup per grid point.
    res = run_sweep(_sweep(tmp_path, rules=["standard", "eaai"]), progress=False)
    t = res.table
    assert res.status == "complete"
    assert len(t) == 4 and set(t["rules"]) == {"standard", "eaai"} and set(t["knock_at"]) == {0.0, 10.0}
    assert (t["games"] == 200).all() and (t["pairs"] == 100).all()
    assert ((t["win_rate_ci_low"] <= t["win_rate"]) & (t["win_rate"] <= t["win_rate_ci_high"])).all()
    for rate in ("gin_rate", "undercut_suffered_rate"):  # pair-clustered intervals around each per-hand rate
        assert ((t[f"{rate}_ci_low"] <= t[rate]) & (t[rate] <= t[f"{rate}_ci_high"])).all(), rate
    k10 = t[t["knock_at"] == 10]
    assert (k10["gin_rate_ci_high"] > k10["gin_rate_ci_low"]).all()
    for col in ("points_per_hand", "gin_rate", "undercut_suffered_rate", "margin_adj", "vrf_margin"):
        assert t[col].notna().all(), col
    # knock_at = 0 (late_drop = 0) knocks only with gin: no plain knocks, never undercut, some gins
    k0 = t[t["knock_at"] == 0]
    assert (k0["undercut_suffered_rate"] == 0).all() and (k0["gin_rate"] > 0).all()
    assert (k0["knock_rate"] == 0).all()
    for key in ("csv", "report_md", "report_html", "plot_curves", "plot_field"):
        assert res.files[key].exists(), key
    assert pd.read_csv(res.files["csv"]).shape[0] == 4
    page = res.files["report_html"].read_text()
    assert "data:image/png;base64," in page and 'src="plots/' not in page
    md = res.files["report_md"].read_text()
    assert "## Best value" in md and "can't be told apart" in md
    stores = {lab: RunStore(tmp_path / "s" / lab) for lab in ("standard", "eaai")}
    for store in stores.values():
        assert {m.bot_a for m in store.matchups()} == {"early-knock@knock_at=0", "early-knock@knock_at=10"}
        assert store.n_games() == 400
    # the best: highest adjusted field win rate; every row says how far behind it is
    for _, g in res.best.groupby("rules"):
        assert g["best"].sum() == 1
        b = g[g["best"]].iloc[0]
        assert b["field_win_rate_adj"] == g["field_win_rate_adj"].max()
        others = g[~g["best"]]
        assert ((others["behind_best_ci_low"] <= 0) == others["tied_with_best"]).all()

    # Resuming plays nothing more; rebuilding from the stores gives the same table.
    again = run_sweep(_sweep(tmp_path, rules=["standard", "eaai"]), progress=False, report=False)
    assert stores["standard"].n_games() == 400
    pd.testing.assert_frame_equal(again.table, t)
    pd.testing.assert_frame_equal(analyse_sweep(_sweep(tmp_path, rules=["standard", "eaai"])).table, t)


def test_same_seed_same_sweep_on_any_workers(tmp_path):
    a = run_sweep(_sweep(tmp_path / "a", workers=1), progress=False, report=False)
    b = run_sweep(_sweep(tmp_path / "b", workers=2), progress=False, report=False)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_two_parameter_grid_draws_a_heatmap(tmp_path):
    # The rules label is the sweep file's to choose: it names a folder and a figure, and the report shows it as text.
    label = "a|b<script>"
    grid = {"knock_at": [0, 10], "take_gain": [0, 4]}
    res = run_sweep(_sweep(tmp_path, games=40, chunk_size=40, grid=grid, rules={label: "standard"}), progress=False)
    assert len(res.table) == 4 and len(res.best) == 4
    assert res.files[f"plot_heatmap_{label}"].read_bytes()[:4] == b"\x89PNG"
    assert "plot_field" not in res.files  # a two-parameter grid shows the field as the heatmap
    md = res.files["report_md"].read_text()
    rows = [line for line in md.split("\n") if line.startswith("| a")]
    assert len(rows) == 4 + 4 + 4  # the field table, every point, the raw and adjusted estimates
    assert all(line.startswith("| a\\|b\\<script\\> | ") for line in rows)
    assert "(plots/heatmap-a%7Cb%3Cscript%3E.png)" in md
    page = res.files["report_html"].read_text()
    assert "<script" not in page and page.count("<td>a|b&lt;script&gt;</td>") == 12
    assert page.count("data:image/png;base64,") == 2  # the curves and the heatmap, embedded


def test_fresh_with_a_bad_name_deletes_nothing(tmp_path):
    # An attacker's (or a slip's) name = ".." used to make --fresh empty the results folder's parent.
    box = tmp_path / "box"
    (box / "data").mkdir(parents=True)
    (box / "data" / "x.csv").write_text("precious")
    with pytest.raises(SweepError, match="name"):
        run_sweep(_sweep(box / "res", name=".."), fresh=True, progress=False)
    assert (box / "data" / "x.csv").read_text() == "precious"
    # A good name whose folder holds someone else's files is not deleted either ...
    with pytest.raises(SweepError, match=r"--fresh would delete .*data, which holds files but no sweep"):
        run_sweep(_sweep(box, name="data", games=20, chunk_size=20), fresh=True, progress=False)
    assert (box / "data" / "x.csv").read_text() == "precious"
    # ... while a sweep's own folder is played afresh.
    run_sweep(_sweep(box, name="mine", games=20, chunk_size=20), progress=False, report=False)
    (box / "mine" / "note.txt").write_text("old")
    again = run_sweep(_sweep(box, name="mine", games=20, chunk_size=20), fresh=True, progress=False, report=False)
    assert not (box / "mine" / "note.txt").exists() and len(again.table) == 2


def test_a_sweep_and_a_run_never_take_each_others_folders_nor_a_folder_of_runs(tmp_path):
    """A sweep counted any subfolder holding a run as its own: one named like the results folder took
    it, and its --fresh deleted every run in it.  A run and a sweep of one name shared a folder, and
    each one's --fresh deleted the other's games."""
    from arena.run import run_tournament
    from arena.run.store import RunStore, StoreError
    from arena.settings.config import TournamentConfig

    def run(name: str, results: Path):
        cfg = TournamentConfig(
            name=name, bots=("random", "simple"), games_per_pair=4, chunk_size=4, workers=1, results_dir=str(results)
        )
        return run_tournament(cfg, progress=False)

    top = tmp_path / "top"
    run("base", top)
    run("det1", top)
    for fresh in (False, True):  # a folder of runs (results/ itself) is no sweep's, fresh or not
        with pytest.raises(SweepError, match=r"top, which holds files but no sweep \(e.g. base\)"):
            run_sweep(_sweep(tmp_path, name="top", games=20, chunk_size=20), fresh=fresh, progress=False)
    assert len(RunStore(top / "base").games()) == len(RunStore(top / "det1").games()) == 4
    # A run's folder is no sweep's, and a sweep's folder no run's.
    for fresh in (False, True):
        with pytest.raises(SweepError, match=r"base, which is a run folder \(arena run's\), not a sweep's"):
            run_sweep(_sweep(top, name="base", games=20, chunk_size=20), fresh=fresh, progress=False)
    assert len(RunStore(top / "base").games()) == 4
    mine = run_sweep(_sweep(tmp_path, name="mine", games=20, chunk_size=20), progress=False, report=False)
    assert (tmp_path / "mine" / "sweep-folder.txt").is_file()
    with pytest.raises(StoreError, match=r"cannot run in .*mine, which holds a sweep"):
        run("mine", tmp_path)
    with pytest.raises(StoreError, match=r"--fresh would delete .*mine, which holds a sweep"):
        RunStore.open_for_writing(tmp_path / "mine", fresh=True)
    again = run_sweep(_sweep(tmp_path, name="mine", games=20, chunk_size=20), progress=False, report=False)
    assert again.table.equals(mine.table)  # the sweep's own folder resumes as before


def test_file_and_policy_opponents_are_in_every_table(tmp_path):
    # The stored games name a file bot by its NAME or stem and a policy by its file's stem, not as
    # the sweep file wrote them: every opponent must still reach the rows, the best table and the field.
    from tests.policy_files import AGENT

    bot = tmp_path / "my_bot.py"
    bot.write_text((Path(__file__).parents[2] / "bots" / "simple.py").read_text())
    pol = tmp_path / "pol.py"
    pol.write_text(AGENT)
    opponents = ["gin-chasing", str(bot), f"policy:{pol}"]
    res = run_sweep(_sweep(tmp_path, games=40, chunk_size=40, opponents=opponents), progress=False)
    assert set(res.table["opponent"]) == {"gin-chasing", "my_bot", "pol"}
    assert len(res.table) == 6 and len(res.best) == 2 and res.best["field_win_rate"].notna().all()
    assert res.files["csv"].exists()


def test_a_sweep_too_small_to_adjust_shows_raw_figures_under_their_own_name(tmp_path):
    """20 pairs per point are too few to fit the control variate's slopes: sweep.csv and best.csv say so
    (cv_adjusted, field_adjusted), the tables show "not adjusted" where a VRF of 1.000 and the raw figures
    stood as if measured, and the field figure draws one raw line, labelled so, not an "adjusted" copy of it."""
    from arena.analysis import plots

    res = run_sweep(_sweep(tmp_path, games=40, chunk_size=40), progress=False)
    assert not res.table["cv_adjusted"].any() and not res.best["field_adjusted"].any()
    csv = pd.read_csv(res.files["csv"])
    assert not csv["cv_adjusted"].any()
    md = res.files["report_md"].read_text()
    field = md.split("## Win rate against the field")[1].split("\n## ")[0]
    estimates = md.split("## Raw and control-variate estimates")[1]
    assert field.count("| not adjusted | - |") == 2
    assert estimates.count("| not adjusted | - | - | - | - |") == 2 and "1.000" not in estimates
    ax = plots._sweep_field(res.spec, res.best).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["standard: raw (too few pairs to adjust)"]
    # with enough pairs (as the flag says) the adjusted line and the raw one are both drawn
    ax = plots._sweep_field(res.spec, res.best.assign(field_adjusted=True)).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["standard: adjusted", "standard: raw"]


@pytest.mark.parametrize("label", ["a/b", "..", ""])
def test_a_rules_label_must_name_a_folder(tmp_path, label):
    with pytest.raises(SweepError, match="cannot name a folder"):
        load_sweep(_sweep(tmp_path, rules={label: "standard"}))


def test_cli_sweep(tmp_path):
    from typer.testing import CliRunner

    from arena.cli.main import app

    f = tmp_path / "sw.toml"
    f.write_text(
        'bot = "early-knock"\nopponents = ["simple"]\ngames = 40\nchunk_size = 40\nworkers = 1\n'
        f'results_dir = "{tmp_path}"\n[grid]\nknock_at = [0, 10]\n'
    )
    r = CliRunner().invoke(app, ["sweep", str(f), "-q"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "sw" / "sweep.csv").exists() and "best" in r.output
    for name in ("sweep.csv", "best.csv"):  # the values as the config gave them, not 0.0 and 10.0
        rows = (tmp_path / "sw" / name).read_text().splitlines()
        column = rows[0].split(",").index("knock_at")
        assert sorted(row.split(",")[column] for row in rows[1:]) == ["0", "10"], rows
    r = CliRunner().invoke(app, ["sweep", str(tmp_path / "missing.toml")])
    assert r.exit_code == 2 and "error:" in r.output


def test_a_sweep_whose_results_folder_is_a_file_or_refused_is_one_line_exit_2_or_3(tmp_path, monkeypatch):
    """As a run's: a file in the way is the input's fault (exit 2), a folder the machine will not create is
    the machine's (exit 3).  Both were NotADirectoryError and PermissionError tracebacks."""
    import errno

    from typer.testing import CliRunner

    from arena.cli.main import app

    f = tmp_path / "sw.toml"
    f.write_text('bot = "early-knock"\nopponents = ["simple"]\ngames = 40\nworkers = 1\n[grid]\nknock_at = [0, 10]\n')
    (tmp_path / "a_file").write_text("not a folder")
    r = CliRunner().invoke(app, ["sweep", str(f), "-q", "--results-dir", str(tmp_path / "a_file")])
    assert r.exit_code == 2, r.output
    assert [line for line in r.output.splitlines() if line.startswith("error:")] == [
        f"error: cannot create the sweep folder {tmp_path / 'a_file' / 'sw'}: a file is in the way (Not a directory)"
    ]
    real_mkdir = Path.mkdir

    def refused(self, *args, **kwargs):
        if self.name == "sw":  # as mkdir answers in a folder of another user's (root is not refused)
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refused)
    r = CliRunner().invoke(app, ["sweep", str(f), "-q", "--results-dir", str(tmp_path / "theirs")])
    assert r.exit_code == 3, r.output
    assert [line for line in r.output.splitlines() if line.startswith("error:")] == [
        f"error: cannot create the sweep folder {tmp_path / 'theirs' / 'sw'}: permission denied"
    ]


def test_report_only_of_a_sweep_never_played_or_with_fresh_is_refused(tmp_path):
    """--report-only on a sweep with no games said "complete", exit 0, and wrote nothing; beside --fresh,
    which it ignored, it rebuilt the report of the results --fresh was to delete."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    f = tmp_path / "sw.toml"
    f.write_text(
        'bot = "early-knock"\nopponents = ["simple"]\ngames = 40\nchunk_size = 40\nworkers = 1\n'
        f'results_dir = "{tmp_path}"\n[grid]\nknock_at = [0, 10]\n'
    )
    r = CliRunner().invoke(app, ["sweep", str(f), "-q", "--report-only"])
    assert r.exit_code == 2, r.output
    assert [line for line in r.output.splitlines() if line.startswith("error:")] == [
        f"error: sweep 'sw': no games stored in {tmp_path / 'sw'} yet; run it without --report-only"
    ]
    r = CliRunner().invoke(app, ["sweep", str(f), "-q", "--report-only", "--fresh"])
    assert r.exit_code == 2 and "--report-only" in r.output and "--fresh" in r.output, r.output


def test_adaptive_sweep_halves_the_grid_on_fresh_deals(tmp_path):
    # Successive halving: round 0 plays all 4 points; round 1 plays the 2 best of round 0
    # (by adjusted field win rate) with twice the games, on a new seed, in round-1/.
    d = _sweep(tmp_path, games=40, chunk_size=20, grid={"knock_at": [0, 3, 6, 10]}, adaptive={"rounds": 2})
    res = run_sweep(d, progress=False)
    first = analyse_sweep(_sweep(tmp_path, games=40, chunk_size=20, grid={"knock_at": [0, 3, 6, 10]}), report=False)
    assert len(first.table) == 4
    top2 = set(first.best.sort_values("field_win_rate_adj", ascending=False)["knock_at"].head(2))
    assert res.dir == tmp_path / "s" / "round-1"
    assert set(res.table["knock_at"]) == top2 and (res.table["games"] == 80).all()
    assert (tmp_path / "s" / "rounds.md").exists()
    with pytest.raises(SweepError, match="adaptive.keep"):
        load_sweep(_sweep(tmp_path, adaptive={"keep": 2}))


@pytest.mark.slow
def test_sweep_on_dask_gives_the_same_table(tmp_path):
    # client= reaches every grid point's run: a LocalCluster plays the same games as local processes.
    distributed = pytest.importorskip("distributed")
    local = run_sweep(_sweep(tmp_path / "local", games=40, chunk_size=20), progress=False, report=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as lc, distributed.Client(lc) as c:
        on_dask = run_sweep(_sweep(tmp_path / "dask", games=40, chunk_size=20), client=c, progress=False, report=False)
    pd.testing.assert_frame_equal(local.table, on_dask.table)


def test_overrides_replace_the_files_keys(tmp_path):
    f = tmp_path / "knock.toml"
    f.write_text('bot = "early-knock"\nopponents = ["simple"]\ngames = 400\nworkers = 2\n[grid]\nknock_at = [0, 10]\n')
    s = load_sweep(f, {"games": 40, "workers": None, "results_dir": str(tmp_path / "out")})
    assert (s.name, s.games, s.workers, s.dir) == ("knock", 40, 2, tmp_path / "out" / "knock")
    with pytest.raises(SweepError, match="games must be an even number"):
        load_sweep(f, {"games": 41})


def test_a_sweep_name_that_is_neither_a_file_nor_a_shipped_example_lists_the_examples(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from arena.cli.main import app

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["sweep", "sweep-knok"])
    assert r.exit_code == 2
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: sweep-knok: no such sweep file, nor a shipped example (the examples: sweep-knock, sweep-mc-samples)"
    ]
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("values", [[3, 3], [3, 3.0000000001, 5]])
def test_grid_values_that_name_one_point_are_a_one_line_error_not_one_silent_row(tmp_path, values):
    # A grid point is named by its values as %g: 3 and 3.0000000001 are both 'knock_at=3', one variant, and
    # the sweep played and tabled one point for the two asked, without a word.
    with pytest.raises(SweepError, match=r"grid.knock_at gives the value 3 twice") as exc:
        load_sweep(_sweep(tmp_path, grid={"knock_at": values}))
    assert "\n" not in str(exc.value)


def test_a_sweep_says_how_many_games_it_will_play_before_the_first(tmp_path):
    """A 300 x 300 grid started in silence; the first line now says the size of what was asked."""
    lines: list[str] = []
    spec = _sweep(tmp_path, opponents=["simple", "random"], games=20, chunk_size=20, grid={"knock_at": [0, 5, 10]})
    run_sweep(spec, progress=lines.append, report=False)
    assert lines[0] == "sweep 's': 3 point(s) x 1 rules value(s) x 2 opponent(s) x 20 games = 120 games"
    assert lines[1].startswith("[1/3] ")


def test_a_sweep_changed_since_its_games_names_the_change_and_a_sweeps_way_out_not_run_options(tmp_path):
    """A sweep rerun with another seed (or rules, or sizes) was refused with ``arena run``'s hint, "use
    another --name", an option ``arena sweep`` does not have."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    f = tmp_path / "sw.toml"
    body = (
        'bot = "early-knock"\nopponents = ["simple"]\ngames = 4\nchunk_size = 4\nworkers = 1\nseed = {seed}\n'
        f'results_dir = "{tmp_path}"\n[grid]\nknock_at = [0, 10]\n'
    )
    f.write_text(body.format(seed=1))
    assert CliRunner().invoke(app, ["sweep", str(f), "-q"]).exit_code == 0
    f.write_text(body.format(seed=2))
    r = CliRunner().invoke(app, ["sweep", str(f), "-q"])
    assert r.exit_code == 2, r.output
    assert [line for line in r.output.splitlines() if line.startswith("error:")] == [
        f"error: sweep 'sw': {tmp_path / 'sw' / 'standard'} was played with seed = 1, not 2; set it back to "
        "resume, or start the sweep afresh with --fresh (or give it another name)"
    ]
    assert "--name" not in r.output
    assert CliRunner().invoke(app, ["sweep", str(f), "-q", "--fresh"]).exit_code == 0


@pytest.fixture(scope="module")
def swept_random(tmp_path_factory):
    """A sweep against random, whose every grid point won all its 40 games."""
    folder = tmp_path_factory.mktemp("swept")
    return run_sweep(_sweep(folder, opponents=["random"], games=40, chunk_size=40), progress=False, report=False)


def test_a_point_that_wins_every_game_gets_a_field_interval_not_a_point(swept_random):
    # Against random every grid point won all 40 games: the field win rate's t interval was
    # "1.000..1.000", certainty from 20 pairs, where the matchups tables give a clean sweep Wilson's
    # interval on its pairs (about 0.82..1 here).
    res = swept_random
    b = res.best
    assert len(b) == 2 and (b["field_win_rate"] == 1.0).all()
    for what in ("field_win_rate", "field_win_rate_adj"):
        lo, hi = b[f"{what}_ci_low"], b[f"{what}_ci_high"]
        assert ((lo < 0.9) & (lo > 0.7) & (hi == 1.0)).all(), (what, lo.tolist(), hi.tolist())
    per_opponent = res.table.set_index("knock_at")
    assert b.set_index("knock_at")["field_win_rate_ci_low"].to_dict() == pytest.approx(
        per_opponent["win_rate_ci_low"].to_dict()
    )  # one opponent: the field is that matchup, and its interval the matchups table's


def test_a_matchup_too_small_to_adjust_shows_its_raw_interval_as_the_adjusted_one_in_the_csv(swept_random):
    # Not adjusted, sweep.csv's win_rate_adj is win_rate, but its interval was the t interval: "1.000..1.000"
    # beside win_rate's 0.82..1 on the same row, after a clean sweep of 20 pairs.
    res = swept_random
    t = res.table
    assert len(t) == 2 and not t["cv_adjusted"].any() and (t["win_rate"] == 1.0).all()
    assert (t["win_rate_adj"] == t["win_rate"]).all()
    for end in ("ci_low", "ci_high"):
        assert t[f"win_rate_adj_{end}"].tolist() == pytest.approx(t[f"win_rate_{end}"].tolist()), end
