"""The index can be damaged, torn or lost, and game ids never move.

Every chunk file describes itself (matchup id and number, bots and their
hashes, chunk number, game-id range) and carries Parquet page checksums, so
the index is rebuilt from its checkpoint copy or from the chunks.  Each kind
of damage is named in one line, and ids, ``arena replay`` and
``RunStore.game()`` stay right; a resume renumbers nothing and a submitted
bot's games take new ids.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.run import run_tournament
from arena.run.schedule import Inline
from arena.run.store import CHECKPOINT, INDEX, META_KEY, RunStore, StoreError, chunk_meta
from arena.settings.config import TournamentConfig
from tests.tables import same

BOTS = ("random", "simple", "early-knock")
GAMES = 40  # per matchup: two chunks of 20


def _cfg(results: Path, bots=BOTS, **kw) -> TournamentConfig:
    base = dict(name="s", bots=bots, games_per_pair=GAMES, chunk_size=20, seed=7, workers=1, results_dir=str(results))
    base.update(kw)
    return TournamentConfig(**base)


def _play(results: Path, bots=BOTS):
    res = run_tournament(_cfg(results, bots), progress=False, schedule=Inline())
    assert res.status == "complete"
    return res


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    results = tmp_path_factory.mktemp("ref")
    res = _play(results)
    return results / "s", res.games.sort_values("game_id").reset_index(drop=True)


@pytest.fixture
def run_dir(tmp_path, reference) -> Path:
    src, _ = reference
    dst = tmp_path / "results" / "s"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".lock"))
    return dst


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(t)["r"] for t in (run_dir / INDEX).read_text().splitlines() if t.strip()]


def _line_no(run_dir: Path, pred) -> int:
    for i, rec in enumerate(_records(run_dir)):
        if pred(rec):
            return i + 1
    raise AssertionError("no such line")


def _flip_line(run_dir: Path, n: int) -> None:
    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    t = lines[n - 1]
    k = t.index('"bot_a"') + 10 if '"bot_a"' in t else len(t) // 2
    lines[n - 1] = t[:k] + ("Q" if t[k] != "Q" else "R") + t[k + 1 :]
    (run_dir / INDEX).write_text("".join(lines))


def _mtimes(run_dir: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in run_dir.glob("*/*/*.parquet")}


def test_every_chunk_file_describes_itself_and_carries_page_checksums(run_dir):
    store = RunStore(run_dir)
    ms = store.matchups()
    assert [m.no for m in ms] == [0, 1, 2]
    assert [json.loads(t)["r"].get("no") for t in (run_dir / INDEX).read_text().splitlines()].count(1) >= 1
    for m in ms:
        for c in range(2):
            rec = store.stored(m.id, c)
            assert rec is not None and rec.ids == (m.no * GAMES, (m.no + 1) * GAMES)
            for kind, f in rec.files.items():
                meta = chunk_meta((run_dir / f["path"]).read_bytes())
                assert (meta["kind"], meta["matchup"], meta["matchup_no"], meta["chunk"]) == (kind, m.id, m.no, c)
                assert (meta["bot_a"], meta["bot_b"]) == (m.bot_a, m.bot_b)
                assert meta["identity"]["bot_a"][2] == m.identity["bot_a"][2]  # the bot's source hash
                assert meta["game_ids"] == [m.no * GAMES, (m.no + 1) * GAMES]
    victim = run_dir / store.stored(ms[1].id, 0).files["games"]["path"]
    data = bytearray(victim.read_bytes())
    data[len(data) // 3] ^= 0x04  # inside a data page: the page CRC fails
    with pytest.raises(StoreError, match="Parquet|CRC|checksum|rows|range|metadata"):
        chunk_meta(bytes(data))
    import pyarrow.parquet as pq

    assert META_KEY in pq.read_schema(victim).metadata


DAMAGES = ["matchup line", "chunk line", "torn last line", "lost index"]


def _damage(run_dir: Path, damage: str) -> int:
    """Damage the index; returns the line number hit (0 for a lost file)."""
    if damage == "matchup line":
        n = _line_no(run_dir, lambda r: r.get("type") == "matchup" and r.get("no") == 1)
        _flip_line(run_dir, n)
    elif damage == "chunk line":
        n = _line_no(run_dir, lambda r: r.get("type") == "chunk" and r.get("no") == 1 and r["chunk"] == 0)
        _flip_line(run_dir, n)
    elif damage == "torn last line":
        text = (run_dir / INDEX).read_text()
        n = text.count("\n")
        assert json.loads(text.splitlines()[-1])["r"]["type"] == "chunk"
        (run_dir / INDEX).write_text(text[: len(text) - 60])
    else:
        (run_dir / INDEX).unlink()
        n = 0
    return n


@pytest.mark.parametrize("checkpoint", [True, False], ids=["with-checkpoint", "chunks-only"])
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_index_keeps_every_game_id_replay_and_lookup_and_a_resume_renumbers_nothing(
    run_dir, reference, damage, checkpoint
):
    _, ref = reference
    if not checkpoint:
        (run_dir / CHECKPOINT).unlink()
    n = _damage(run_dir, damage)
    before = _mtimes(run_dir)

    # A reader sees every game, under its own id, and names the damage.
    store = RunStore(run_dir)
    got = store.games().sort_values("game_id").reset_index(drop=True)
    assert same(got, ref)
    assert store.findings, "the damage is named"
    what = store.findings[0].what
    assert (f"{INDEX} line {n}" in what) if n else (f"{INDEX} is missing" in what)
    for gid in (0, GAMES + 5, GAMES + 25, 2 * GAMES + 39):  # every matchup, both chunks
        row = store.game(gid)
        expect = ref.loc[ref["game_id"] == gid].iloc[0]
        assert (row["matchup"], row["seed"], row["score0"]) == (expect["matchup"], expect["seed"], expect["score0"])

    # arena replay finds the game through the same store, and it replays exactly.
    out = CliRunner().invoke(app, ["replay", str(run_dir), "--game", str(GAMES + 25)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert f"game {GAMES + 25}:" in out.output

    # fsck names it; --repair rebuilds the index; a check afterwards finds nothing.
    cli = CliRunner()
    found = cli.invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1
    assert (f"{INDEX} line {n}" if n else f"{INDEX} is missing") in found.output
    fixed = cli.invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert fixed.exit_code == 0 and "repaired" in fixed.output
    clean = cli.invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert clean.exit_code == 0 and clean.output.startswith("ok:"), clean.output
    for cmd, res in (("fsck", found), ("fsck --repair", fixed)):  # the closing note's table (pytest -rP)
        said = " / ".join(res.output.splitlines())
        print(f"FAULT | {damage} ({checkpoint=}): arena {cmd} | exit {res.exit_code} | {said}")

    # The original command plays nothing again and renumbers nothing.
    res = run_tournament(_cfg(run_dir.parent), progress=False, schedule=Inline())
    assert res.status == "complete"
    assert _mtimes(run_dir) == before
    assert same(res.games.sort_values("game_id").reset_index(drop=True), ref)
    assert [m.no for m in RunStore(run_dir).matchups()] == [0, 1, 2]


@pytest.mark.parametrize("damage", DAMAGES)
def test_after_damage_a_run_repairs_first_then_a_new_bot_takes_new_ids(run_dir, reference, damage, caplog):
    """The run calls the same check as fsck: the damage is named, and new matchups never reuse a number."""
    _, ref = reference
    (run_dir / CHECKPOINT).unlink()
    n = _damage(run_dir, damage)
    with caplog.at_level("WARNING", logger="arena"):
        res = run_tournament(_cfg(run_dir.parent, (*BOTS, "gin-chasing")), progress=False, schedule=Inline())
    assert res.status == "complete"
    named = [r.getMessage() for r in caplog.records if INDEX in r.getMessage()]
    assert named and ((f"line {n}" in named[0]) if n else ("missing" in named[0]))
    assert res.findings
    games = res.games
    assert games["game_id"].is_unique and len(games) == 6 * GAMES
    old = games[games["game_id"] < 3 * GAMES].sort_values("game_id").reset_index(drop=True)
    assert same(old, ref)  # the stored games, under the ids they had
    nos = {m.name: m.no for m in RunStore(run_dir).matchups()}
    assert sorted(nos.values()) == list(range(6))
    assert all(nos[name] >= 3 for name in nos if "gin-chasing" in name)
    for name, no in nos.items():
        ids = games.loc[games["matchup"] == name, "game_id"]
        assert ids.min() == no * GAMES and ids.max() == (no + 1) * GAMES - 1


def test_a_chunk_written_without_its_line_is_recovered_or_quarantined_and_strays_and_temps_go(run_dir, reference):
    _, ref = reference
    store = RunStore(run_dir)
    m = store.matchups()[2]
    recs = _records(run_dir)
    # Drop the last chunk's line as a crash between file and line would (the checkpoint too).
    (run_dir / INDEX).write_text(_index_without_last(run_dir))
    (run_dir / CHECKPOINT).unlink()
    assert recs[-1]["type"] == "chunk"
    orphan = run_dir / recs[-1]["files"]["games"]["path"]
    # ... and a bit-flipped chunk file with no line, a stray file and a temp file.
    bad = run_dir / "games" / m.id / "00007.parquet"
    data = bytearray(orphan.read_bytes())
    data[len(data) // 3] ^= 0x08
    bad.write_bytes(bytes(data))
    stray = run_dir / "games" / m.id / "notes.txt"
    stray.write_text("not a chunk")
    temp = run_dir / "games" / m.id / ".00001.parquet.tmp4242"
    temp.write_bytes(b"half a chunk")

    lines = RunStore(run_dir).check(repair=False)
    assert any("have no index line" in x and "--repair rebuilds" in x for x in lines)
    assert any("00007.parquet" in x and "quarantine" in x for x in lines)
    assert any("notes.txt: not a chunk file" in x for x in lines)
    assert any("temp file" in x for x in lines)
    with RunStore.open_for_writing(run_dir) as w:
        w.check(repair=True)
    assert not bad.exists() and not stray.exists() and not temp.exists()
    assert {p.name.split("-")[0] for p in (run_dir / "quarantine").iterdir()} >= {"games"}
    after = RunStore(run_dir)
    assert after.check() == []
    assert same(after.games().sort_values("game_id").reset_index(drop=True), ref)


def _index_without_last(run_dir: Path) -> str:
    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    return "".join(lines[:-1])


def test_the_dataset_holds_exactly_the_current_verified_chunks_where_a_raw_glob_does_not(tmp_path, reference):
    bot = tmp_path / "simple_copy.py"
    bot.write_text('"""simple, renamed."""\nfrom bots.simple import take_upcard, draw, big_gin, discard, knock\n')
    results = tmp_path / "results"
    _play(results, ("random", str(bot)))
    bot.write_text(bot.read_text() + "# edited: a new identity, the old games superseded\n")
    res = _play(results, ("random", str(bot)))
    run_dir = results / "s"
    store = RunStore(run_dir)
    want = store.games().sort_values("game_id").reset_index(drop=True)
    assert len(want) == GAMES
    # A raw read of games/ takes the superseded games too.
    assert len(pd.read_parquet(run_dir / "games")) == 2 * GAMES
    ds = RunStore(run_dir).dataset()
    got = ds.to_table().to_pandas().sort_values("game_id").reset_index(drop=True)
    assert same(got, want) and same(got, res.games)
    # A flipped chunk: the raw read takes it without a word; the dataset leaves it out and says so.
    victim = run_dir / store.stored(store.matchups()[0].id, 1).files["games"]["path"]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    fresh = RunStore(run_dir)
    part = fresh.dataset().to_table().to_pandas()
    assert len(part) == GAMES // 2 and fresh.problems and "chunk 1" in fresh.problems[0]
    # A stray file breaks the raw read outright; the dataset does not see it.
    (run_dir / "games" / "README.txt").write_text("notes")
    with pytest.raises(Exception):  # noqa: B017,PT011 - whatever pyarrow raises for a non-Parquet file
        pd.read_parquet(run_dir / "games")
    assert len(RunStore(run_dir).dataset().to_table()) == GAMES // 2
    duckdb = pytest.importorskip("duckdb")
    hands = RunStore(run_dir).dataset("hands")  # noqa: F841 - queried by name below
    games = RunStore(run_dir).dataset()  # noqa: F841
    n, ids = duckdb.sql("SELECT count(*), count(DISTINCT game_id) FROM games").fetchall()[0]
    assert n == ids == GAMES // 2
    joined = duckdb.sql("SELECT count(*) FROM hands JOIN games USING (game_id)").fetchall()[0][0]
    assert joined == int(games.to_table(columns=["hands"]).column("hands").to_numpy().sum())


SIMPLE_RENAMED = '"""simple, renamed."""\nfrom bots.simple import take_upcard, draw, big_gin, discard, knock\n'


def _lose_last_line(run_dir: Path, how: str) -> None:
    """Damage the index's last line (flipped, torn) or lose the whole file, with no checkpoint to help."""
    (run_dir / CHECKPOINT).unlink()
    text = (run_dir / INDEX).read_text()
    if how == "flipped":
        _flip_line(run_dir, text.count("\n"))
    elif how == "torn":
        (run_dir / INDEX).write_text(text[: len(text) - 12])
    else:
        (run_dir / INDEX).unlink()


@pytest.mark.parametrize("how", ["flipped", "torn", "lost index"])
def test_a_lost_revive_line_is_rebuilt_from_the_manifest(tmp_path, how):
    """A bot file changed, then changed back: its first matchup is current again by a ``revive`` line, and
    the revived run plays nothing, so no chunk file can tell.  Lost with no checkpoint, the folder would show
    the second version's games under their ids; the manifest names the current matchups."""
    bot = tmp_path / "simple_copy.py"
    bot.write_text(SIMPLE_RENAMED)
    results = tmp_path / "results"
    first = _play(results, ("random", str(bot))).games  # read now: a result reads the folder as it is
    bot.write_text(SIMPLE_RENAMED + "# edited: a new identity, a new matchup\n")
    second = _play(results, ("random", str(bot))).games
    bot.write_text(SIMPLE_RENAMED)
    third = _play(results, ("random", str(bot))).games
    run_dir = results / "s"
    assert same(third, first) and not same(third, second)  # ids 0..39, not 40..79
    assert _records(run_dir)[-1]["type"] == "revive"
    _lose_last_line(run_dir, how)

    store = RunStore(run_dir)
    assert same(store.games(), first)
    assert any("its revive line is lost" in f.what for f in store.findings), store.findings
    cli = CliRunner()
    found = cli.invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and "--repair rebuilds its revive line from manifest.json" in found.output
    fixed = cli.invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert fixed.exit_code == 0 and "its revive line rebuilt from manifest.json" in fixed.output, fixed.output
    assert _records(run_dir)[-1] == {"type": "revive", "id": store.matchups()[0].id}
    clean = cli.invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert clean.exit_code == 0 and clean.output.startswith("ok:"), clean.output
    assert same(RunStore(run_dir).games(), first)


def test_a_lost_limit_line_is_rebuilt_from_the_manifest(run_dir, reference):
    """An SPRT stop's ``limit`` line (count only the first chunks) is the other line no chunk file can tell."""
    _, ref = reference
    with RunStore.open_for_writing(run_dir) as w:  # what a run that stopped early writes at its end
        mid = w.matchups()[1].id
        w.set_limit(mid, 1)
        w.write_manifest({**w.manifest(), "current": w.current_state()})
    want = RunStore(run_dir).games()
    assert len(want) == 3 * GAMES - GAMES // 2
    _lose_last_line(run_dir, "torn")
    store = RunStore(run_dir)
    assert same(store.games(), want)
    assert any("counts its first 1 chunk(s) in manifest.json" in f.what for f in store.findings), store.findings
    with RunStore.open_for_writing(run_dir) as w:
        assert any("its limit line rebuilt from manifest.json" in line for line in w.check(repair=True))
    assert RunStore(run_dir).check() == [] and same(RunStore(run_dir).games(), want)
    assert same(RunStore(run_dir).games(), ref[ref["game_id"].isin(want["game_id"])])


def test_a_file_name_ending_in_a_newline_is_neither_a_chunk_nor_a_temp_file(run_dir):
    """Chunk and temp file names are matched whole: ``00001.parquet\\n`` is no chunk of the run, and
    ``.00001.parquet.tmp7\\n`` no temp file of a cut-short write (which a repair would delete unasked);
    fsck names both as files that do not belong, and the same names without the newline still count."""
    from arena.run.store.files import temp_files

    folder = next(p for p in sorted((run_dir / "games").iterdir()) if p.is_dir())
    chunk = next(p for p in sorted(folder.iterdir()) if p.name.endswith(".parquet"))
    (folder / "00077.parquet\n").write_bytes(chunk.read_bytes())
    (folder / ".00077.parquet.tmp7\n").write_bytes(b"half a chunk")
    (folder / ".00078.parquet.tmp7").write_bytes(b"half a chunk")  # a real temp file, for contrast
    temps = [p.name for p in temp_files(run_dir)]
    assert temps == [".00078.parquet.tmp7"], temps
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1, found.output
    for name in ("00077.parquet\n", ".00077.parquet.tmp7\n"):
        assert f"games/{folder.name}/{name}: not a chunk file" in found.output, found.output


def test_fsck_of_a_folder_in_use_says_the_finding_may_be_the_chunk_being_written(run_dir):
    # A monitoring job's fsck during a run saw the chunk in the making (a temp file, a file not yet
    # indexed) as damage and told the user to --repair, which the busy folder then refused.
    any_games = next(p for p in (run_dir / "games").iterdir() if p.is_dir())
    with RunStore.open_for_writing(run_dir, what="arena run"):  # the run, which then starts a chunk
        (any_games / ".00099.parquet.tmp4242").write_bytes(b"half a chunk")
        out = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert out.exit_code == 1
    assert f"note: {run_dir} is in use by pid {os.getpid()} (arena run)" in out.output
    assert "repairs them" not in out.output and "check again when it is done" in out.output
    # Once the run has let go, the same finding is a problem to repair, as before.
    out = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert out.exit_code == 1 and "note:" not in out.output and "--repair' repairs them" in out.output


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda d: (d / "config.toml").unlink(), "holds 120 games but no config.toml"),
        (lambda d: (d / "config.toml").write_text("bots = [\n"), "its config.toml or rules.toml is unreadable"),
        (lambda d: (d / "config.toml").write_text(""), "config.toml is empty, so it is not the config of a run"),
        (lambda d: (d / "config.toml").write_text("seed = 7\n"), "config.toml names no bots, so it is not"),
        (lambda d: (d / "rules.toml").write_text("gin_bonus = 'lots'\n"), "config.toml or rules.toml is unreadable"),
        (lambda d: (d / "manifest.json").write_text('{"status": "compl'), "its manifest.json is not a JSON object"),
        (lambda d: (d / "manifest.json").write_text("[1, 2]"), "its manifest.json is not a JSON object"),
        (lambda d: (d / "manifest.json").unlink(), "holds 120 games but no manifest.json"),
        (lambda d: (d / "rules.toml").unlink(), "holds 120 games but no rules.toml"),
    ],
    ids=[
        "config-lost",
        "config-torn",
        "config-empty",
        "config-without-bots",
        "rules-bad-value",
        "manifest-torn",
        "manifest-not-object",
        "manifest-lost",
        "rules-lost",
    ],
)
def test_fsck_names_a_lost_or_damaged_config_rules_or_manifest_which_no_repair_rebuilds(run_dir, damage, named):
    # fsck said "ok, no problems" of a folder whose config.toml was gone, which the next resume then refused.
    damage(run_dir)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1, found.output
    assert f"problem: {run_dir}" in found.output and named in found.output, found.output
    assert "--repair' repairs" not in found.output and "restore what the line(s) above name" in found.output
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 1 and named in repaired.output, repaired.output  # still there: no repair mends it
    report = CliRunner().invoke(app, ["report", str(run_dir), "--verify"], catch_exceptions=False)
    assert report.exit_code == 1 and "restore the file(s) they name" in report.output, report.output


@pytest.mark.parametrize("command", ["submit", "resume"])
def test_a_run_folder_whose_config_toml_was_emptied_is_refused_in_one_line_not_read_as_the_defaults(run_dir, command):
    """An empty config.toml read as the default config: submit played 1000-game matchups of the default
    bots into the folder and saved the defaults over the file."""
    (run_dir / "config.toml").write_text("")
    chunks = sorted(p.name for p in run_dir.rglob("*.parquet"))
    if command == "submit":
        args = ["submit", "early-knock:knock_at=5", "--to", str(run_dir)]
    else:
        (run_dir.parent.parent / "again.toml").write_text(_cfg(run_dir.parent).to_toml())
        args = ["run", str(run_dir.parent.parent / "again.toml"), "--resume", "--no-report"]
    out = CliRunner().invoke(app, [*args, "--quiet"], catch_exceptions=False)
    assert out.exit_code == 2, out.output
    errors = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "config.toml is empty, so it is not the config of a run" in errors[0], out.output
    assert (run_dir / "config.toml").read_text() == "" and sorted(p.name for p in run_dir.rglob("*.parquet")) == chunks


def test_submit_with_workers_out_of_range_names_the_option_not_the_config(run_dir):
    out = CliRunner().invoke(app, ["submit", "early-knock", "--to", str(run_dir), "--workers", "-1", "--quiet"])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: --workers -1: workers = -1 is not allowed (allowed: integer 0..1024)")


def test_fsck_of_a_whole_folder_reads_its_config_rules_and_manifest_as_sound(run_dir):
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 0 and "no problems" in found.output, found.output


def _forge_games_file(run_dir: Path, path: str, n_bytes: int | None = None) -> tuple[str, int]:
    """Rewrite the first chunk's index line (with a valid CRC, as an attacker would) so that its games file is
    ``path``; returns the chunk's (matchup, chunk)."""
    from arena.run.store.index import format_line

    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    for i, t in enumerate(lines):
        rec = json.loads(t)["r"]
        if rec.get("type") == "chunk":
            rec["files"]["games"]["path"] = path
            if n_bytes is not None:
                rec["files"]["games"]["bytes"] = n_bytes
            lines[i] = format_line(rec)
            (run_dir / INDEX).write_text("".join(lines))
            return rec["matchup"], rec["chunk"]
    raise AssertionError("no chunk line")


@pytest.mark.parametrize("how", ["dot-dot", "absolute", "link out", "device"])
def test_a_chunk_file_named_outside_the_run_folder_or_through_a_link_is_never_read(run_dir, tmp_path, how):
    """The viewer served games read from a folder beside the run (an index line naming ../../elsewhere or a
    chunk file that links there), and an index naming /dev/zero read until memory ran out."""
    mid, _ = next((r["matchup"], r["chunk"]) for r in _records(run_dir) if r.get("type") == "chunk")
    rel = f"games/{mid}/00000.parquet"
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(run_dir / rel, outside / "stolen.parquet")  # whole and hashing right: only its place is wrong
    if how == "dot-dot":
        _forge_games_file(run_dir, "../../outside/stolen.parquet")
    elif how == "absolute":
        _forge_games_file(run_dir, str(outside / "stolen.parquet"))
    elif how == "link out":
        (run_dir / rel).unlink()
        (run_dir / rel).symlink_to(outside / "stolen.parquet")
    else:
        _forge_games_file(run_dir, "/dev/zero", 0)
    store = RunStore(run_dir)
    games = store.games()
    assert len(games) == GAMES * 3 - 20  # the chunk is left out ...
    assert any("chunk 0" in p for p in store.problems), store.problems  # ... and named
    out = CliRunner().invoke(app, ["fsck", str(run_dir)])
    assert out.exit_code == 1 and "chunk 0" in out.output, out.output


def test_a_matchup_line_planning_a_trillion_chunks_is_read_by_what_is_stored_not_counted_up_to(run_dir):
    """The readers walked chunk numbers 0 .. the planned count: a forged, well-checked line planning 10**12
    chunks held arena fsck, report, replay and the counts for hours.  They now look up what is stored."""
    import signal

    from arena.run.store.index import format_line

    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    for i, t in enumerate(lines):
        rec = json.loads(t)["r"]
        if rec.get("type") == "matchup":
            rec["chunks"] = 10**12
            lines[i] = format_line(rec)
            break
    (run_dir / INDEX).write_text("".join(lines))
    (run_dir / CHECKPOINT).write_text("".join(lines))

    def stuck(signum, frame):
        raise TimeoutError("still counting chunk numbers after 20 s")

    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(20)
    try:
        store = RunStore(run_dir)
        assert store.n_chunks() == 6 and store.n_games() == 3 * GAMES
        assert len(store.games()) == 3 * GAMES
        assert store.game(0)["game_id"] == 0
        out = CliRunner().invoke(app, ["fsck", str(run_dir)])
        assert out.exit_code == 1, out.output  # fast, and the line named
        assert "says chunks 1000000000000, its files 2 (an edited line?)" in out.output, out.output
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_folder_of_a_newer_store_format_is_refused_in_one_line_and_left_as_it_is(run_dir):
    """The header's format number was written and never read: a folder of format 3 was reported, resumed and
    repaired as format 2, with this version's lines appended to it."""
    from arena.run.store.index import format_line

    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    head = json.loads(lines[0])["r"]
    assert head["type"] == "store"
    head["format"] = 3
    lines[0] = format_line(head)
    (run_dir / INDEX).write_text("".join(lines))
    before = (run_dir / INDEX).read_bytes()
    with pytest.raises(StoreError, match="newer gin-arena .*format 3"):
        RunStore(run_dir).n_games()
    for args in (["report", str(run_dir)], ["fsck", str(run_dir)], ["fsck", str(run_dir), "--repair"]):
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 2, (args, out.output)
        errors = [line for line in out.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "newer gin-arena" in errors[0], (args, out.output)
    res = CliRunner().invoke(
        app, ["run", str(run_dir / "config.toml"), "--quiet", "--results-dir", str(run_dir.parent)]
    )
    assert res.exit_code == 2 and "newer gin-arena" in res.output, res.output
    assert (run_dir / INDEX).read_bytes() == before


def _edit_line(run_dir: Path, kind: str, key: str, value) -> dict:
    """Edit the first ``kind`` line of the index and its checkpoint copy, with a valid CRC (as a person would
    who knows the format); returns the edited record."""
    from arena.run.store.index import format_line

    lines = (run_dir / INDEX).read_text().splitlines(keepends=True)
    for i, t in enumerate(lines):
        rec = json.loads(t)["r"]
        if rec.get("type") == kind:
            rec[key] = value
            lines[i] = format_line(rec)
            break
    (run_dir / INDEX).write_text("".join(lines))
    (run_dir / CHECKPOINT).write_text("".join(lines))
    return rec


@pytest.mark.parametrize(
    "kind, key, value, said",
    [
        ("chunk", "games", 10**12, "games: the index says 1000000000000"),
        ("chunk", "hands", 3, "hands: the index says 3"),
        ("matchup", "bot_a", "champion", "says bot_a 'champion', its files 'random'"),
    ],
)
def test_fsck_holds_each_index_line_to_what_its_chunk_files_say_of_themselves(run_dir, kind, key, value, said):
    """A line's CRC catches damage, not an edit: a chunk line counting 10**12 games (or a matchup line naming
    another bot), with the files' hashes kept, passed fsck as sound while the counts and progress read it.
    A chunk's line is dropped (its chunk played again); a matchup's is rebuilt from its chunk files."""
    _edit_line(run_dir, kind, key, value)
    out = CliRunner().invoke(app, ["fsck", str(run_dir)])
    assert out.exit_code == 1 and said in out.output and "an edited line" in out.output, out.output
    fixed = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"])
    assert fixed.exit_code == 0, fixed.output
    store = RunStore(run_dir)
    if kind == "chunk":
        assert "--repair moves the chunk's files to quarantine/" in out.output
        assert "to be played again" in fixed.output, fixed.output
        assert store.n_games() == len(store.games()) < 3 * GAMES  # what the lines count is what is there
        assert list((run_dir / "quarantine").rglob("*.parquet"))  # set aside, not deleted
    else:
        assert "--repair rebuilds it from its chunk files" in out.output
        assert "rebuilt from its chunk files" in fixed.output, fixed.output
        assert store.n_games() == len(store.games()) == 3 * GAMES  # nothing set aside
        assert store.matchups()[0].bot_a == "random"
    again = CliRunner().invoke(app, ["fsck", str(run_dir)])
    assert again.exit_code == 0 and "no problems" in again.output, again.output


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.unlink(),
        lambda p: p.write_bytes(p.read_bytes()[:5]),
        lambda p: p.write_bytes(bytes([p.read_bytes()[0] ^ 1]) + p.read_bytes()[1:]),
        lambda p: p.write_bytes(b"\0" * len(p.read_bytes())),
    ],
    ids=["lost", "truncated", "digit-flipped", "zero-filled"],
)
def test_a_lost_or_damaged_secret_seed_is_refused_not_replaced_by_a_new_one(tmp_path, damage):
    # A lost, truncated or bit-flipped seed.secret read as a new seed: fsck said "no problems", and the same
    # command played every matchup again under new ids, leaving all the stored games superseded in silence.
    cfg = _cfg(tmp_path, bots=("random", "simple"), seed="secret")
    first = run_tournament(cfg, progress=False, schedule=Inline())
    run_dir = tmp_path / "s"
    before = RunStore(run_dir).games().sort_values("game_id").reset_index(drop=True)
    assert len(before) == GAMES and len(first.games) == GAMES
    damage(run_dir / "seed.secret")
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and "seed.secret" in found.output, found.output
    with pytest.raises(StoreError, match="seed.secret"):
        run_tournament(cfg, progress=False, schedule=Inline())
    store = RunStore(run_dir)
    assert len(store.matchups(current=False)) == 1  # no matchup planned under another seed
    assert same(store.games().sort_values("game_id").reset_index(drop=True), before)


def _ck_flip(d: Path) -> None:
    b = bytearray((d / CHECKPOINT).read_bytes())
    b[len(b) // 2] ^= 1
    (d / CHECKPOINT).write_bytes(bytes(b))


def _ck_link(d: Path) -> None:
    (d / CHECKPOINT).rename(d / "elsewhere.jsonl")
    (d / CHECKPOINT).symlink_to(d / "elsewhere.jsonl")


def _ck_fifo(d: Path) -> None:
    (d / CHECKPOINT).unlink()
    os.mkfifo(d / CHECKPOINT)


def _ck_other(d: Path) -> None:  # not a copy of this index: its second and third lines swapped
    lines = (d / CHECKPOINT).read_text().splitlines(keepends=True)
    lines[1], lines[2] = lines[2], lines[1]
    (d / CHECKPOINT).write_text("".join(lines))


@pytest.mark.parametrize("damage", [_ck_flip, _ck_other, _ck_link, _ck_fifo], ids=["flipped", "other", "link", "fifo"])
def test_a_damaged_or_foreign_checkpoint_is_named_by_fsck_and_rewritten_by_repair(run_dir, damage):
    # fsck said "no problems" of a folder whose checkpoint (the copy a lost index is rebuilt from) was damaged
    # or another index's; a checkpoint that was a link or a FIFO stopped fsck --repair, and every run, with
    # "cannot read index.checkpoint.jsonl: operation not permitted" (exit 3), which no command mended.
    damage(run_dir)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and CHECKPOINT in found.output, found.output
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 0 and CHECKPOINT in repaired.output, repaired.output
    ck = run_dir / CHECKPOINT
    assert not ck.is_symlink() and ck.read_bytes() == (run_dir / INDEX).read_bytes()
    again = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert again.exit_code == 0 and "no problems" in again.output, again.output


def test_a_chunk_file_longer_than_its_line_says_is_named_as_longer_and_a_swap_as_a_swap(run_dir):
    # A file longer than its index line says was read only up to one byte past that length, so fsck named
    # another chunk's (larger) file copied over it, or bytes appended to it, as "N+1 bytes ... (truncated?)".
    files = sorted((run_dir / "games").glob("*/*.parquet"), key=lambda p: p.stat().st_size)
    small, large = files[0], files[-1]
    assert large.stat().st_size > small.stat().st_size
    grown = files[1]
    grown.write_bytes(grown.read_bytes() + b"\0" * 1000)
    shutil.copyfile(large, small)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1, found.output
    rel = lambda p: str(p.relative_to(run_dir))  # noqa: E731
    said = lambda p: next(line for line in found.output.splitlines() if f"{rel(p)} is" in line)  # noqa: E731
    assert "truncated" not in found.output, found.output
    assert f"is {grown.stat().st_size} bytes, longer than" in said(grown), found.output
    assert "a whole file of another chunk" in said(small), found.output


@pytest.mark.parametrize("how", ["link", "fifo"])
def test_an_index_that_is_a_link_or_a_fifo_is_set_aside_and_rebuilt_by_fsck_repair(run_dir, reference, how):
    # An index.jsonl replaced by a link (even to a true copy of itself) or a FIFO is rightly never read, but
    # fsck, fsck --repair and every run then stopped at "cannot read index.jsonl: operation not permitted"
    # (exit 3, a permissions problem by its words), and no command mended the folder.
    _, games = reference
    if how == "link":
        (run_dir / INDEX).rename(run_dir / "copy.jsonl")
        (run_dir / INDEX).symlink_to(run_dir / "copy.jsonl")
    else:
        (run_dir / INDEX).unlink()
        os.mkfifo(run_dir / INDEX)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and f"{INDEX}: not a regular file" in found.output, found.output
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 0, repaired.output
    assert not (run_dir / INDEX).is_symlink() and (run_dir / INDEX).is_file()
    assert same(RunStore(run_dir).games().sort_values("game_id").reset_index(drop=True), games)


def test_another_folders_matchup_copied_in_is_quarantined_not_adopted_over_this_runs_own(run_dir, reference, tmp_path):
    # A matchup folder copied in from another run (same bots, another seed) passed as chunks that had lost their
    # index lines: fsck --repair, and so the next run, rebuilt its matchup line, which then superseded the
    # folder's own matchup of that pair, and the report showed the other run's games in place of this one's.
    _, games = reference
    other = run_tournament(
        _cfg(tmp_path / "other", bots=("random", "simple"), seed=8), progress=False, schedule=Inline()
    )
    assert other.status == "complete"
    (mid,) = [p.name for p in (tmp_path / "other" / "s" / "games").iterdir()]
    for kind in ("games", "hands", "actions"):
        if (tmp_path / "other" / "s" / kind / mid).is_dir():
            shutil.copytree(tmp_path / "other" / "s" / kind / mid, run_dir / kind / mid)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and f"games/{mid}/00000.parquet" in found.output, found.output
    assert "number 0 is taken" in found.output, found.output
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 0, repaired.output
    store = RunStore(run_dir)
    assert mid not in store.index().matchups
    assert same(store.games().sort_values("game_id").reset_index(drop=True), games)
    assert not list((run_dir / "games").glob(f"{mid}/*.parquet"))


def _other_run(run_dir: Path, tmp_path: Path) -> Path:
    other = tmp_path / "other" / "s"
    shutil.copytree(run_dir, other)
    return other


def _files_of(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*.parquet"))}


def test_a_chunks_folder_that_links_to_another_run_is_refused_and_that_run_keeps_every_file(run_dir, tmp_path):
    # fsck --repair (and so a run) on a folder whose games/ was a link to another run's games/ moved every
    # chunk file of that other run into this folder's quarantine/ (or wherever a linked quarantine/ led),
    # and a run would then have written its chunks into the other folder.
    other = _other_run(run_dir, tmp_path)
    before = _files_of(other)
    shutil.rmtree(run_dir / "games")
    (run_dir / "games").symlink_to(other / "games")
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code != 0 and "games is a link" in found.output, found.output
    # No repair mends a link (a repair refuses the folder), so the check must not send the user to one.
    assert "--repair" not in found.output and "no repair mends" in found.output, found.output
    assert found.output.count("is a link") == 1, found.output  # the link, not each chunk behind it
    report = CliRunner().invoke(app, ["report", str(run_dir)], catch_exceptions=False)
    assert report.exit_code != 0, report.output
    # What the report's reads say (logged, by a thread that may write after CliRunner has stopped
    # listening: read from the store): the link, once, not each chunk behind it.
    store = RunStore(run_dir)
    assert store.games().empty
    assert len(store.problems) == 1 and "games is a link" in store.problems[0], store.problems
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 2 and "games is a link" in repaired.output, repaired.output
    with pytest.raises(StoreError, match="games is a link"):
        run_tournament(_cfg(run_dir.parent), progress=False, schedule=Inline())
    assert _files_of(other) == before


def test_a_matchup_folder_that_links_to_another_run_is_set_aside_and_that_run_keeps_every_file(
    run_dir, reference, tmp_path
):
    # The same one level down: games/<matchup> a link to another run's: its files were moved out of that run.
    _, games = reference
    other = _other_run(run_dir, tmp_path)
    before = _files_of(other)
    mid = sorted(p.name for p in (run_dir / "games").iterdir())[0]
    shutil.rmtree(run_dir / "games" / mid)
    (run_dir / "games" / mid).symlink_to(other / "games" / mid)
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 0 and f"games/{mid}: not a chunk folder" in repaired.output, repaired.output
    assert _files_of(other) == before
    run_tournament(_cfg(run_dir.parent), progress=False, schedule=Inline())  # plays that matchup's chunks again
    assert _files_of(other) == before
    assert same(RunStore(run_dir).games().sort_values("game_id").reset_index(drop=True), games)


def test_a_checkpoint_unlike_the_index_is_kept_in_quarantine_when_repair_writes_it_again(run_dir):
    # Which of the two is right is a guess (an index copied in from another folder is unlike its checkpoint
    # too), so the copy a repair replaces is kept, not lost.
    _ck_other(run_dir)
    old = (run_dir / CHECKPOINT).read_bytes()
    repaired = CliRunner().invoke(app, ["fsck", str(run_dir), "--repair"], catch_exceptions=False)
    assert repaired.exit_code == 0, repaired.output
    kept = [p for p in (run_dir / "quarantine").iterdir() if p.name.startswith(CHECKPOINT)]
    assert [p.read_bytes() for p in kept] == [old]


def test_a_changed_digit_in_rules_toml_is_named_as_damage_not_taken_for_other_rules(tmp_path):
    # The rules are in every matchup's id.  A digit changed in rules.toml passed fsck; a resume then said the games
    # were "played under different rules" and blamed the command, and the report showed rules the games were not
    # played by.  rules.toml now ends with a check line; a folder whose file predates it still reads.
    from arena.run.runner import TournamentError
    from arena.run.store import meta

    cfg = _cfg(tmp_path, bots=("random", "simple"))
    run_tournament(cfg, progress=False, schedule=Inline())
    run_dir = tmp_path / "s"
    path = run_dir / "rules.toml"
    text = path.read_text()
    assert "knock_limit = 10\n" in text and text.splitlines()[-1].startswith("# check: sha256:")
    path.write_text(text.replace("knock_limit = 10\n", "knock_limit = 19\n"))
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and "rules.toml was changed since the run wrote it" in found.output, found.output
    with pytest.raises(TournamentError, match=r"rules\.toml was changed since the run wrote it.*restore it"):
        run_tournament(cfg, progress=False, schedule=Inline())
    with pytest.raises(StoreError, match=r"rules\.toml was changed since the run wrote it"):
        RunStore(run_dir).rules()
    path.write_text(text)  # restored: whole again
    assert RunStore(run_dir).rules().knock_limit == 10 and meta.rules_problem(RunStore(run_dir)) == ""
    path.write_text(text[: text.index("# check:")])  # a folder from before the check line
    assert RunStore(run_dir).rules().knock_limit == 10
    assert run_tournament(cfg, progress=False, schedule=Inline()).status == "complete"


def test_a_config_toml_that_links_outside_the_folder_is_named_and_never_read_into_the_report(run_dir, tmp_path):
    # The store's own text files (config.toml, rules.toml, manifest.json) were read through a link: a run
    # folder shared with an arena running as another user (root, the league's) put a file it may not read
    # into report.html as "the config".
    private = tmp_path / "private.toml"
    private.write_text('name = "SECRET-8811"\n')
    (run_dir / "config.toml").unlink()
    (run_dir / "config.toml").symlink_to(private)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and "config.toml" in found.output and "link" in found.output, found.output
    report = CliRunner().invoke(app, ["report", str(run_dir)], catch_exceptions=False)
    shown = report.output + "".join(p.read_text(errors="replace") for p in run_dir.glob("report.*"))
    assert "SECRET-8811" not in shown, shown
    assert report.exit_code != 0 and "config.toml" in report.output, report.output


@pytest.mark.parametrize("kind", ["link", "dangling-link", "fifo", "folder"])
def test_a_lock_file_that_is_not_a_regular_file_is_named_and_nothing_writes_or_waits_through_it(
    run_dir, tmp_path, kind
):
    # A writer opened .lock following links, wrote its pid into the file a link named and emptied it when
    # done (a dangling link made a file wherever it pointed); a pipe there hung fsck and report for ever.
    victim = tmp_path / "victim.txt"
    lock = run_dir / ".lock"
    if kind == "link":
        victim.write_text("precious\n")
        lock.symlink_to(victim)
    elif kind == "dangling-link":
        lock.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    t = time.monotonic()
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and f"{lock} is " in found.output and "regular file" in found.output, found.output
    report = CliRunner().invoke(app, ["report", str(run_dir)], catch_exceptions=False)
    assert report.exit_code == 0, report.output  # a reader takes no lock: the report is written
    assert time.monotonic() - t < 60  # neither waited on a pipe
    with pytest.raises(StoreError, match="regular file"):
        run_tournament(_cfg(run_dir.parent), progress=False, schedule=Inline())
    with pytest.raises(StoreError, match="regular file"):
        RunStore.open_for_writing(run_dir, what="test")
    if kind == "link":
        assert victim.read_text() == "precious\n"
    if kind == "dangling-link":
        assert not victim.exists()


def _edit_lines(run_dir: Path, edit) -> None:
    """Rewrite the index and its checkpoint with ``edit(record)`` applied to each line, each CRC recomputed
    (as an attacker would: a CRC catches damage, not an edit)."""
    from arena.run.store.index import format_line

    for name in (INDEX, CHECKPOINT):
        path = run_dir / name
        if path.exists():
            recs = [json.loads(t)["r"] for t in path.read_text().splitlines() if t.strip()]
            path.write_text("".join(format_line(edit(r) or r) for r in recs))


def _chunk_line_to_another_chunks_files(recs_by_key):
    def edit(r):
        if r.get("type") == "chunk" and (r["matchup"], r["chunk"]) == recs_by_key["dst"]:
            src = recs_by_key["src"]
            return {**r, "files": src["files"], "games": src["games"], "hands": src["hands"], "ids": src["ids"]}
        return None

    return edit


@pytest.mark.parametrize(
    "how",
    ["another-chunks-files", "a-file-left-out", "planned-chunks", "planned-games", "matchup-number", "identity"],
)
def test_an_index_line_edited_with_its_crc_recomputed_is_named_by_fsck(run_dir, how):
    """fsck held a chunk's line to its file's games, hands, id range and bots only: a line pointed at another
    chunk's files (the games read twice, the other chunk's lost), a file left out of a line (never read), or a
    matchup line saying 8 chunks for 2 (complete at half its games) or another number passed as 'no problems'."""
    recs = _records(run_dir)
    chunks = [r for r in recs if r.get("type") == "chunk"]
    mid = chunks[0]["matchup"]
    first, second = (r for r in chunks if r["matchup"] == mid)
    if how == "another-chunks-files":
        edit = _chunk_line_to_another_chunks_files({"dst": (mid, second["chunk"]), "src": first})
    elif how == "a-file-left-out":

        def edit(r):
            if r.get("type") == "chunk" and (r["matchup"], r["chunk"]) == (mid, first["chunk"]):
                return {**r, "files": {k: v for k, v in r["files"].items() if k != "hands"}}
            return None
    else:
        key, value = {
            "planned-chunks": ("chunks", 4),
            "planned-games": ("games", 80),
            "matchup-number": ("no", 7),
            "identity": ("identity", {"a": "x", "b": "y"}),
        }[how]

        def edit(r):
            return {**r, key: value} if r.get("type") == "matchup" and r["id"] == mid else None

    _edit_lines(run_dir, edit)
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 1 and "an edited line?" in found.output, found.output
    # The run (which repairs first) mends it: a matchup line from its chunk files, a chunk played again.
    res = run_tournament(_cfg(run_dir.parent), progress=False, schedule=Inline())
    assert res.status == "complete" and same(res.games, RunStore(run_dir).games())
    assert len(RunStore(run_dir).games()) == 3 * GAMES and RunStore(run_dir).games()["game_id"].is_unique
    found = CliRunner().invoke(app, ["fsck", str(run_dir)], catch_exceptions=False)
    assert found.exit_code == 0 and "no problems" in found.output, found.output


def test_a_stored_matchup_whose_line_plans_other_games_than_its_id_is_refused(run_dir):
    """Games and chunks are in a matchup's id: a line saying otherwise (edited, its files too) is not played."""
    store = RunStore.open_for_writing(run_dir, what="test")
    m = next(iter(store.index().matchups.values()))
    with pytest.raises(StoreError, match=r"says 40 games in 2 chunk\(s\), but its id was planned with 80 in 4"):
        store.register(m.id, m.bot_a, m.bot_b, 80, 4, m.identity)
    store.close()


def test_an_emptied_index_with_no_checkpoint_is_read_from_the_chunk_files_not_as_no_games(run_dir):
    """An index.jsonl emptied (and no checkpoint beside it) read as a folder with no games: report said
    "holds no games (nothing to report)", exit 2, while fsck found every chunk."""
    (run_dir / INDEX).write_text("")
    (run_dir / CHECKPOINT).unlink()
    store = RunStore(run_dir)
    assert len(store.games()) == 3 * GAMES and store.findings
    out = CliRunner().invoke(app, ["report", str(run_dir)], catch_exceptions=False)
    assert out.exit_code == 1 and "holds no games" not in out.output, out.output
    assert "--repair" in out.output


def test_replay_of_a_game_in_a_damaged_chunk_says_so_and_exits_1(run_dir):
    """It named the damaged chunk, then said the game "is not stored" and exited 2, the code of bad input."""
    rec = next(r for r in _records(run_dir) if r.get("type") == "chunk" and r["chunk"] == 0)
    path = run_dir / rec["files"]["games"]["path"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    game = rec["ids"][0] + 3
    out = CliRunner().invoke(app, ["replay", str(run_dir), "--game", str(game)])
    assert out.exit_code == 1, out.output
    assert f"game {game} (" in out.output and "is in chunk 0, whose file is damaged" in out.output, out.output
    assert "--repair', then the run's command plays it again" in out.output
    other = rec["ids"][1]  # a game of an intact chunk still replays
    assert CliRunner().invoke(app, ["replay", str(run_dir), "--game", str(other)]).exit_code == 0
