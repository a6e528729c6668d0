"""Reports from a small real run folder: every file written, self-contained HTML, clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from arena import plots
from arena.report import ReportError, plot_run, write_report
from test_stats import build_run

PNG = b"\x89PNG\r\n\x1a\n"
BOTS = {"simple": "simple", "random": "random", "random-b": "random"}


@pytest.fixture(scope="module")
def run_tables():
    return build_run(BOTS, n_pairs=10)


def _write_run(folder: Path, games: pd.DataFrame, hands: pd.DataFrame | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    games.to_parquet(folder / "games.parquet", index=False)
    if hands is not None:
        hands.to_parquet(folder / "hands.parquet", index=False)
    (folder / "rules.toml").write_text("target = 100\nknock_limit = 10\n")
    (folder / "config.toml").write_text('bots = ["simple", "random", "random-b"]\npairs = 10\n')
    (folder / "manifest.json").write_text(json.dumps({"run": folder.name, "seed": 1000, "games": len(games)}))
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
    assert "hands.parquet absent" in files["report_md"].read_text()
    with pytest.raises(ReportError, match="anchor"):
        write_report(run, anchor="nobody")


def test_plot_run_each_kind(tmp_path, run_tables):
    games, hands = run_tables
    run = _write_run(tmp_path / "plots-run", games, hands)
    for kind in ("heatmap", "convergence"):
        path = plot_run(run, kind)
        assert path == run / "plots" / f"{kind}.png" and path.read_bytes()[:8] == PNG
    with pytest.raises(ValueError, match="unknown plot"):
        plot_run(run, "pie")


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
