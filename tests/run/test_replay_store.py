"""Exact replays from the run store: the action log is a checksummed per-chunk table."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from arena.cli.show import ReplayRefused, check_lines, replay_report, stored_game
from arena.engine.replay import ReplayError, log_from_actions, replay_game
from arena.engine.rules_array import rules_array
from arena.run import run_tournament
from arena.run.schedule import Inline
from arena.run.store import INDEX, RunStore
from arena.run.store.format import StoreError
from arena.settings.config import TournamentConfig
from arena.settings.rules import Rules

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, bots=("simple", "random"), **kw) -> Path:
    cfg = TournamentConfig(
        name=kw.pop("name", "r"),
        bots=bots,
        games_per_pair=kw.pop("games", 20),
        chunk_size=kw.pop("chunk_size", 10),
        workers=1,
        seed=11,
        results_dir=str(tmp_path),
        **kw,
    )
    res = run_tournament(cfg, progress=False, schedule=Inline())
    assert res.status == "complete"
    return tmp_path / cfg.name


def test_actions_are_stored_checksummed_and_replay_every_game_exactly(tmp_path):
    d = _run(tmp_path)
    store = RunStore(d)
    assert store.has_actions()
    text = (d / INDEX).read_text()
    assert '"actions":{"bytes"' in text  # indexed with a checksum like games and hands
    files = sorted((d / "actions").rglob("*.parquet"))
    assert len(files) == 2  # one per chunk
    rules = rules_array(Rules())
    for gid in range(20):
        rec = store.game_record(gid)
        assert rec.actions is not None and len(rec.actions) > 10
        # hand offsets index into the game's own log, and cover it without gaps
        starts = rec.hands["log_start"].tolist()
        lens = rec.hands["log_len"].tolist()
        assert starts[0] == 0 and all(s + n == t for s, n, t in zip(starts, lens, starts[1:], strict=False))
        assert starts[-1] + lens[-1] == len(rec.actions)
        assert rec.actions.max() < 52  # one answer per decision: 0/1 or a card
        log = log_from_actions(int(rec.game["seed"]), rules, rec.actions)
        rows = replay_game(int(rec.game["seed"]), rules, log)
        assert len(rows) == int(rec.game["hands"])
        assert rows[-1, 16:18].tolist() == [int(rec.game["score0"]), int(rec.game["score1"])]


def test_every_game_is_found_when_the_last_chunk_is_shorter_than_the_others(tmp_path):
    """30 games in chunks of 20: the lookup took game 15 to be in chunk 1 (30 / 2 chunks, evenly) and,
    that chunk's id range being known, looked nowhere else: games 15-19 were "not stored", in
    ``arena replay``, the viewer, ``analyze`` and ``luck``."""
    d = _run(tmp_path, games=30, chunk_size=20)
    store = RunStore(d)
    for gid in range(30):
        rec = store.game_record(gid)
        assert int(rec.game["game_id"]) == gid and rec.actions is not None
        assert set(rec.hands["game_id"]) == {gid}
    with pytest.raises(StoreError, match="no game 30"):
        store.game_record(30)


def test_replay_report_checks_the_stored_rows_and_says_when_they_differ(tmp_path):
    d = _run(tmp_path)
    ok, text = replay_report(d, 3, symbols=False)
    assert ok and "replayed from the action log" in text and "reproduces the stored game row and hand rows" in text
    rec, rules, _names, log, _how = stored_game(d, 3)
    rec.game["score0"] = int(rec.game["score0"]) + 1
    ok, line = check_lines(rec, rules, log)
    assert not ok and "does NOT reproduce" in line and "final score" in line
    answers = RunStore(d).game_record(3).actions.copy()
    answers[1] = 60  # not a card: illegal where it falls
    with pytest.raises(ReplayError, match="illegal"):
        log_from_actions(int(rec.game["seed"]), rules, answers)
    with pytest.raises(ReplayError, match="game is over"):
        log_from_actions(int(rec.game["seed"]), rules, np.concatenate([RunStore(d).game_record(3).actions, [0]]))
    bad = np.array(log, copy=True)
    bad[0] += 1024  # the wrong seat for the first decision
    ok, line = check_lines(rec, rules, bad)
    assert not ok and "does NOT reproduce" in line


def test_a_damaged_actions_file_is_quarantined_and_played_again(tmp_path):
    d = _run(tmp_path)
    f = sorted((d / "actions").rglob("*.parquet"))[0]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    with RunStore.open_for_writing(d) as store:
        bad = store.verify()
    assert len(bad) == 1 and "actions/" in bad[0] and "checksum" in bad[0]
    _run(tmp_path)  # the same command plays the chunk again
    assert RunStore(d).game_record(0).actions is not None
    assert replay_report(d, 0)[0]


def test_without_a_log_replay_refuses_a_changed_bot_file(tmp_path):
    bot = tmp_path / "mybot.py"
    shutil.copy(ROOT / "bots" / "simple.py", bot)
    d = _run(tmp_path, bots=("simple", str(bot)), record_log=False, name="nolog")
    store = RunStore(d)
    assert not store.has_actions() and not (d / "actions").exists()
    assert (store.hands()["log_start"] == -1).all()
    ok, text = replay_report(d, 0)  # unchanged bots: played again, and checked
    assert ok and "played again" in text
    bot.write_text(bot.read_text() + "\n# edited\n")
    with pytest.raises(ReplayRefused, match="changed since"):
        replay_report(d, 0)
    from typer.testing import CliRunner

    from arena.cli.main import app

    for cmd in (["replay", str(d), "--game", "0"], ["view", str(d), "--game", "0", "--no-open", "--port", "0"]):
        out = CliRunner().invoke(app, cmd)
        assert out.exit_code == 2, out.output
        lines = out.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "changed since" in lines[0]


def test_looking_at_a_game_never_runs_a_bot_file_the_run_did_not_play(tmp_path):
    """Viewing a game stored without its log (arena view, replay, show) imported every bot file of the
    folder's config before the hash check refused a changed one: a run folder from elsewhere ran its code
    by being looked at.  A file bot is imported only when its bytes are those the game's bots were played
    with; the other bots of the run are not loaded at all."""
    bot, other = tmp_path / "mybot.py", tmp_path / "other.py"
    shutil.copy(ROOT / "bots" / "simple.py", bot)
    shutil.copy(ROOT / "bots" / "early_knock.py", other)
    d = _run(tmp_path, bots=("simple", str(bot), str(other)), record_log=False, name="nolog")
    marker = tmp_path / "ran"
    payload = f"\nfrom pathlib import Path as _P\n_P({str(marker)!r}).write_text('ran')\n"
    other.write_text(other.read_text() + payload)  # not a bot of game 0 (simple vs mybot)
    ok, text = replay_report(d, 0)
    assert ok and "played again" in text and not marker.exists()
    bot.write_text(bot.read_text() + payload)
    with pytest.raises(ReplayRefused, match="changed since"):
        replay_report(d, 0)
    assert not marker.exists()


def test_a_matchup_line_planning_no_games_is_one_error_line_for_replay_not_a_division_by_zero(tmp_path):
    """Game ids are matchup number * planned games + index: a well-checked line planning 0 games made
    arena replay (and the viewer, analyze --game) end in a ZeroDivisionError traceback."""
    import json

    from typer.testing import CliRunner

    from arena.cli.main import app
    from arena.run.store import CHECKPOINT, INDEX
    from arena.run.store.index import format_line

    run_dir = _run(tmp_path)
    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    for i, t in enumerate(lines):
        rec = json.loads(t)["r"]
        if rec.get("type") == "matchup":
            rec["games"] = 0
            lines[i] = format_line(rec)
    (run_dir / INDEX).write_text("".join(lines))
    (run_dir / CHECKPOINT).write_text("".join(lines))  # else the reader sees a damaged index and mends the line
    out = CliRunner().invoke(app, ["replay", str(run_dir), "--game", "3"])
    assert out.exit_code == 2, out.output
    assert out.output.count("error:") == 1 and "0 games" in out.output, out.output
