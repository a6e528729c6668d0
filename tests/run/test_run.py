"""The runner and its store: determinism, resuming, submitting, faults, folders."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from arena.analysis.sprt import SprtGate
from arena.analysis.stats import pair_summary
from arena.analysis.summary import summarize_run
from arena.loading.load import load_bots
from arena.run import TournamentError, run_tournament
from arena.run.schedule import Inline
from arena.run.store import RunStore, StoreBusy, StoreError
from arena.settings.config import ConfigError, TournamentConfig, config_from_dict, load_config
from tests.tables import canonical, same

ROOT = Path(__file__).resolve().parents[2]

SIMPLE_COPY = textwrap.dedent('''
    """A copy of simple under another name (for submit tests)."""
    from bots.simple import take_upcard, draw, big_gin, discard, knock
    NAME = "simple-copy"
''')


def cfg(tmp_path: Path, **kw) -> TournamentConfig:
    base = dict(
        name="t",
        bots=("random", "simple"),
        games_per_pair=120,
        chunk_size=40,
        seed=3,
        workers=1,
        results_dir=str(tmp_path / "results"),
    )
    base.update(kw)
    return TournamentConfig(**base)


def chunk_files(run_dir: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in (run_dir / "games").rglob("*.parquet")}


# --- determinism -----------------------------------------------------------------------------


def test_same_seed_same_games_inline_and_on_one_or_two_worker_processes(tmp_path):
    one = run_tournament(cfg(tmp_path, name="one"), progress=False)
    two = run_tournament(cfg(tmp_path, name="two", workers=2), progress=False)
    inline = run_tournament(cfg(tmp_path, name="inl"), progress=False, schedule=Inline())
    assert one.status == two.status == inline.status == "complete"
    assert len(one.games) == 120 and one.games["game_id"].is_unique
    assert same(one.games, two.games) and same(one.games, inline.games)
    assert canonical(one.hands).equals(canonical(two.hands))
    other = run_tournament(cfg(tmp_path, name="other", seed=4), progress=False)
    assert not same(one.games, other.games)


def test_shared_deals_off_gives_each_matchup_its_own_deals_the_same_on_every_run(tmp_path):
    """A league's rounds are watched as they play: a bot entered later must not meet deals already shown."""
    three = ("random", "simple", "early-knock")
    shared = run_tournament(cfg(tmp_path, name="shared", bots=three, games_per_pair=8, chunk_size=4), progress=False)
    seeds = shared.games.groupby("matchup")["seed"].apply(lambda s: tuple(sorted(s)))
    assert len(seeds) == 3 and seeds.nunique() == 1  # the default: pair i is one deal in every matchup

    own = cfg(tmp_path, name="own", bots=three, games_per_pair=8, chunk_size=4, shared_deals=False)
    first = run_tournament(own, progress=False)
    by_matchup = [set(s) for _, s in first.games.groupby("matchup")["seed"]]
    assert len(by_matchup) == 3 and all(len(s) == 4 for s in by_matchup)  # duplicate pairs: 4 deals each
    assert not (by_matchup[0] & by_matchup[1] or by_matchup[0] & by_matchup[2] or by_matchup[1] & by_matchup[2])
    assert not set(shared.games["seed"]) & set(first.games["seed"])
    again = run_tournament(own.replace(name="own-again"), progress=False)
    assert same(first.games, again.games)  # still fixed by the seed
    assert "shared_deals = false" in (tmp_path / "results" / "own" / "config.toml").read_text()
    # How the games are cut up or kept changes no deal, and more games play the same deals first (the
    # seed was drawn from the matchup id, which holds the chunk size, record_hands and the game count).
    for name, changed in (("chunks", {"chunk_size": 8}), ("no-hands", {"record_hands": False})):
        other = run_tournament(own.replace(name=name, **changed), progress=False)
        assert same(first.games.drop(columns="matchup"), other.games.drop(columns="matchup")), name
    more = run_tournament(own.replace(name="more", games_per_pair=16), progress=False).games
    for (_, mine), (_, theirs) in zip(first.games.groupby("matchup"), more.groupby("matchup")):
        assert set(mine["seed"]) < set(theirs["seed"])
    with pytest.raises(ConfigError, match="shared_deals = 'no' is not allowed"):
        config_from_dict({"shared_deals": "no"})


def test_the_chunk_files_are_the_dataset_and_there_is_no_joined_copy(tmp_path):
    res = run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    assert same(pd.read_parquet(run_dir / "games"), res.games)
    assert len(pd.read_parquet(run_dir / "hands")) == len(res.hands)
    assert not (run_dir / "games.parquet").exists() and not (run_dir / "hands.parquet").exists()
    hands = res.hands
    assert set(hands["game_id"]) == set(res.games["game_id"])  # every hand joins its game


def test_duplicate_pairs_share_a_seed_with_seats_swapped_and_every_matchup_the_same_deals(tmp_path):
    g = run_tournament(cfg(tmp_path), progress=False).games
    for _, pair in g.groupby("pair"):
        assert len(pair) == 2 and pair["seed"].nunique() == 1
        assert sorted(pair["swap"]) == [0, 1]
        assert set(pair["bot0"].astype(str)) == {"random", "simple"}
    res3 = run_tournament(cfg(tmp_path, name="three", bots=("random", "simple", "early-knock")), progress=False)
    seeds = res3.games.groupby("matchup", observed=True)["seed"].apply(lambda s: tuple(sorted(s)))
    assert len(seeds) == 3 and seeds.nunique() == 1


# --- resuming and keeping -----------------------------------------------------------------------


def test_interrupted_run_resumes_to_the_same_games_without_replaying_stored_chunks(tmp_path):
    full = run_tournament(cfg(tmp_path, name="full"), progress=False)
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg(tmp_path, name="cut", workers=2), progress=interrupt)
    assert not multiprocessing.active_children()  # Ctrl-C left no worker behind
    run_dir = tmp_path / "results" / "cut"
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    saved = chunk_files(run_dir)
    assert len(saved) == 2  # two chunks stored before the interrupt, one left
    resumed = run_tournament(cfg(tmp_path, name="cut"), progress=False)
    assert resumed.status == "complete"
    assert same(full.games, resumed.games)
    assert all(p.stat().st_mtime_ns == t for p, t in saved.items())  # not replayed


def test_submit_then_the_original_command_keeps_every_matchup(tmp_path):
    first = run_tournament(cfg(tmp_path), progress=False).games  # read now: the folder grows below
    run_dir = tmp_path / "results" / "t"
    old = chunk_files(run_dir)
    bot_file = tmp_path / "simple_copy.py"
    bot_file.write_text(SIMPLE_COPY)
    with_copy = cfg(tmp_path, bots=("random", "simple", str(bot_file)))
    second = run_tournament(with_copy, progress=False)
    assert set(second.games["matchup"]) == {"random vs simple", "random vs simple-copy", "simple vs simple-copy"}
    assert all(p.stat().st_mtime_ns == t for p, t in old.items())  # nothing replayed
    g = second.games
    a = g[g["matchup"] == "random vs simple-copy"]
    assert (a["winner"] == "simple-copy").sum() == (first["winner"] == "simple").sum()  # same deals
    # The original command (fewer bots) keeps the submitted bot's games and says so.
    third = run_tournament(cfg(tmp_path), progress=False)
    assert third.kept == ["random vs simple-copy", "simple vs simple-copy"]
    assert len(third.games) == 360 and third.store.n_games() == 360
    assert third.status == "complete"


def test_a_changed_bot_file_gets_new_games_and_the_old_ones_are_kept_aside(tmp_path, caplog):
    bot_file = tmp_path / "simple_copy.py"
    bot_file.write_text(SIMPLE_COPY)
    c = cfg(tmp_path, bots=("random", str(bot_file)))
    run_tournament(c, progress=False)
    run_dir = tmp_path / "results" / "t"
    before = chunk_files(run_dir)
    bot_file.write_text(SIMPLE_COPY + "\n# edited\n")
    caplog.clear()
    res = run_tournament(c, progress=False)
    assert len(res.games) == 120  # only the current version's games count
    # ... and the run says so: the table changed with no word but its games count.
    said = [r.getMessage() for r in caplog.records if "changed since" in r.getMessage()]
    assert said == [
        "bot 'simple-copy' changed since the 120 stored game(s) of random vs simple-copy: the matchup is played "
        "again, and its earlier games leave the tables (they stay in the folder)"
    ], said
    caplog.clear()
    run_tournament(c, progress=False)  # the same file again: nothing is replaced, nothing said
    assert not [r for r in caplog.records if "changed since" in r.getMessage()]
    after = chunk_files(run_dir)
    assert set(before) < set(after) and len(after) == 2 * len(before)  # old files kept, new ones added
    store = RunStore(run_dir)
    assert [m.superseded for m in store.matchups(current=False)] == [True, False]


def test_a_folder_from_other_rules_is_refused_and_left_intact(tmp_path):
    run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    snapshot = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    with pytest.raises(TournamentError, match="different rules"):
        run_tournament(cfg(tmp_path, rules={"preset": "standard", "knock_limit": 5}), progress=False)
    with pytest.raises(TournamentError, match="seed"):
        run_tournament(cfg(tmp_path, seed=99), progress=False)
    assert snapshot == {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    # Without its config.toml nothing says what the games were played by: another seed started every
    # matchup over under new ids, the earlier games superseded in silence. Now it is refused, even the same config.
    (run_dir / "config.toml").unlink()
    for again in (cfg(tmp_path, seed=99), cfg(tmp_path)):
        with pytest.raises(TournamentError, match=r"holds 120 games but no config.toml.*restore it "):
            run_tournament(again, progress=False)
    del snapshot[run_dir / "config.toml"]
    assert snapshot == {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}


# --- stored bytes are checked -----------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_chunk_is_named_moved_aside_and_replayed_never_read(tmp_path, damage, caplog):
    clean = run_tournament(cfg(tmp_path, name="clean"), progress=False)
    run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    victim = sorted((run_dir / "games").rglob("*.parquet"))[1]
    data = bytearray(victim.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x10
        data[len(data) // 3] ^= 0x01
    else:
        data = data[: len(data) // 2]
    victim.write_bytes(bytes(data))
    # A reader skips it with one line and never parses it.
    store = RunStore(run_dir)
    assert store.n_games() == 120
    assert len(store.games()) == 80
    assert len(store.problems) == 1 and "chunk 1 of random vs simple" in store.problems[0]
    # The next run names it, moves it aside and plays it again.
    with caplog.at_level("WARNING", logger="arena"):
        again = run_tournament(cfg(tmp_path), progress=False)
    assert any(
        "chunk 1 of random vs simple" in r.getMessage() and "quarantine" in r.getMessage() for r in caplog.records
    )
    moved = sorted(p.name for p in (run_dir / "quarantine").iterdir())
    assert len(moved) == 3 and all("-00001-" in n for n in moved)  # the chunk's games, hands and actions files
    assert again.status == "complete" and same(again.games, clean.games)


def test_storing_a_chunk_twice_keeps_one_copy(tmp_path):
    res = run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    games = res.games
    with RunStore.open_for_writing(run_dir) as store:
        m = store.matchups()[0]
        first = games[games["game_id"] < 40].drop(columns=[]).reset_index(drop=True)
        lines = (run_dir / "index.jsonl").read_text().count("\n")
        store.put_chunk(m.id, 0, first, None)  # already stored and intact: nothing happens
        assert (run_dir / "index.jsonl").read_text().count("\n") == lines
    assert same(RunStore(run_dir).games(), games)


def test_a_torn_index_line_is_named_and_its_chunk_recovered_not_replayed(tmp_path):
    run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    (run_dir / "index.checkpoint.jsonl").unlink()  # as if the run had died before its end
    idx = run_dir / "index.jsonl"
    text = idx.read_text()
    idx.write_text(text[:-25])  # the last chunk's line is cut short
    before = chunk_files(run_dir)
    store = RunStore(run_dir)
    assert store.index().bad_lines == 1 and store.n_games() == 120  # rebuilt from the chunk file itself
    assert "torn last line" in store.findings[0].line(False)
    res = run_tournament(cfg(tmp_path), progress=False)
    assert res.status == "complete" and len(res.games) == 120
    assert any("torn last line" in f for f in res.findings)
    assert chunk_files(run_dir) == before  # nothing played again
    assert RunStore(run_dir).index().bad_lines == 0  # the run's check rewrote the index


# --- locking and folders -------------------------------------------------------------------------


def test_a_second_writer_on_a_folder_in_use_is_refused_naming_the_pid(tmp_path):
    run_dir = tmp_path / "results" / "t"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from arena.run.store import RunStore
        s = RunStore.open_for_writing({str(run_dir)!r})
        print("locked", flush=True)
        time.sleep(60)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusy, match=f"in use by pid {holder.pid}"):
            run_tournament(cfg(tmp_path), progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert run_tournament(cfg(tmp_path), progress=False).status == "complete"  # the lock died with its holder


def test_results_path_that_is_a_file_or_not_writable_is_a_one_line_error(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "t").write_text("not a folder")
    with pytest.raises(StoreError, match="is a file"):
        run_tournament(cfg(tmp_path), progress=False)
    if os.geteuid() == 0:  # root writes anywhere on a normal file system; sysfs refuses even root
        bad = cfg(tmp_path, results_dir="/sys", name="kernel")
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        bad = cfg(tmp_path, results_dir=str(ro))
    with pytest.raises(StoreError, match="cannot"):
        run_tournament(bad, progress=False)


# --- bots that misbehave ------------------------------------------------------------------------------

BAD_BOT = textwrap.dedent('''
    """Plays like simple but blunders: an illegal discard in some games, raises in others."""
    from bots.simple import take_upcard, draw, big_gin, knock
    from bots.simple import discard as simple_discard
    from arena.engine.layout import V_TURN, V_UPCARD
    NAME = "{name}"

    def discard(view, params, memory, rng):
        if view[V_TURN] == 6 and view[V_UPCARD] % 4 == 0:
            return 60          # not a card
        if view[V_TURN] == 6 and view[V_UPCARD] % 4 == 1:
            raise ValueError("oops")
        return simple_discard(view, params, memory, rng)
''')


@pytest.mark.parametrize("workers", [1, 2])
def test_illegal_moves_and_exceptions_forfeit_the_game_and_the_run_goes_on(tmp_path, workers):
    f = tmp_path / "bad.py"
    f.write_text(BAD_BOT.format(name="bad"))
    res = run_tournament(cfg(tmp_path, bots=("simple", str(f)), workers=workers), progress=False)
    g = res.games
    assert len(g) == 120
    forfeited = g[g["forfeit_seat"] >= 0]
    assert len(forfeited) > 5
    loser = forfeited.apply(lambda r: r[f"bot{r.forfeit_seat}"], axis=1)
    assert (loser == "bad").all() and (forfeited["winner"] == "simple").all()
    assert forfeited["error"].str.contains("bot 'bad'").all()
    assert forfeited["error"].str.contains("discard").all()
    assert forfeited["error"].str.contains("raised an exception").any()
    assert forfeited["error"].str.contains("does not hold").any()
    assert (g.loc[g["forfeit_seat"] < 0, "error"] == "").all()


KILLER_BOT = textwrap.dedent('''
    """A bot whose worker process dies in the middle of a game."""
    import os
    from bots.simple import take_upcard, draw, big_gin, discard, knock as _knock
    PLAIN = True
    NAME = "killer"

    def knock(view, params, memory, rng):
        os._exit(3)
''')


def test_a_dead_worker_is_replaced_and_only_its_chunk_retried_then_reported(tmp_path):
    f = tmp_path / "killer.py"
    f.write_text(KILLER_BOT)
    res = run_tournament(cfg(tmp_path, bots=("random", "simple", str(f)), workers=2), progress=False)
    assert res.status == "failed"
    assert set(res.games["matchup"]) == {"random vs simple"}  # the healthy matchup finished
    assert len(res.games) == 120
    assert len(res.failed_chunks) == 6  # 3 chunks in each matchup with killer, each died twice
    assert all("killer" in c and "died twice (exit code 3)" in c for c in res.failed_chunks)
    manifest = json.loads((tmp_path / "results" / "t" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and len(manifest["failed_chunks"]) == 6


EXITING_BOT = textwrap.dedent('''
    """Leaves in the middle of a decision: {how}."""
    import sys
    from bots.simple import take_upcard, draw, big_gin, discard, knock as _knock
    from arena.engine.layout import V_HAND_NO
    PLAIN = True
    NAME = "leaver"

    def knock(view, params, memory, rng):
        if view[V_HAND_NO] == 1:
            {how}
        return _knock(view, params, memory, rng)
''')


@pytest.mark.parametrize("how", ["sys.exit()", "raise KeyboardInterrupt", "raise SystemExit(3)"])
def test_a_bot_that_exits_or_interrupts_forfeits_its_game_not_the_run(tmp_path, how):
    f = tmp_path / "leaver.py"
    f.write_text(EXITING_BOT.format(how=how))
    res = run_tournament(cfg(tmp_path, bots=("simple", str(f))), progress=False)
    assert res.status == "complete"
    g = res.games
    forfeited = g[g["forfeit_seat"] >= 0]
    assert len(forfeited) > 0 and forfeited["error"].str.contains("bot 'leaver'").all()
    assert forfeited["error"].str.contains("SystemExit|KeyboardInterrupt").all()


ANSWER_BOT = textwrap.dedent('''
    """Answers the upcard question with a {kind} instead of an int."""
    from bots.simple import draw, big_gin, discard, knock
    PLAIN = True
    NAME = "typo"

    def take_upcard(view, params, memory, rng):
        return {value}
''')


@pytest.mark.parametrize("kind,value", [("float", "1.7"), ("str", '"1"'), ("bool", "True")])
def test_answers_that_are_not_integers_forfeit(tmp_path, kind, value):
    f = tmp_path / "typo.py"
    f.write_text(ANSWER_BOT.format(kind=kind, value=value))
    res = run_tournament(cfg(tmp_path, bots=("simple", str(f)), games_per_pair=20, chunk_size=20), progress=False)
    g = res.games
    assert (g["forfeit_seat"] >= 0).all() and (g["winner"] == "simple").all()
    assert g["error"].str.contains(f"answered .*{kind}").all()


MUTATING_BOT = textwrap.dedent('''
    """Writes to its params array: each game must still start from the configured values."""
    from bots.simple import take_upcard, draw, big_gin, discard
    from bots.simple import knock as _knock
    from arena.engine._jit import jit
    PARAMS = {"bias": 0.0}
    NAME = "mutator"

    @jit
    def knock(view, params, memory, rng):
        params[0] += 1.0
        if params[0] > 3.0:
            return 0
        return _knock(view, params, memory, rng)
''')


def test_a_bot_that_mutates_its_params_gives_the_same_games_on_one_and_two_workers(tmp_path):
    f = tmp_path / "mutator.py"
    f.write_text(MUTATING_BOT)
    one = run_tournament(cfg(tmp_path, name="m1", bots=("simple", str(f))), progress=False)
    two = run_tournament(cfg(tmp_path, name="m2", bots=("simple", str(f)), workers=2, chunk_size=20), progress=False)
    assert same(one.games, two.games)  # ids match too: same matchup number, same games per matchup


LOOPING_BOT = textwrap.dedent('''
    """Hangs in a compiled loop at its first discard of a later game."""
    from bots.simple import take_upcard, draw, big_gin, knock
    from bots.simple import discard as _discard
    from arena.engine._jit import jit
    from arena.engine.layout import V_MY_SCORE
    NAME = "looper"

    @jit
    def discard(view, params, memory, rng):
        memory[0] += 1.0
        if memory[0] > 1e9:  # never true; keeps the loop from being optimised away
            return 0
        x = 0
        while view[V_MY_SCORE] >= 0:
            x += 1
        return _discard(view, params, memory, rng)
''')


def test_a_chunk_stuck_in_a_compiled_loop_is_stopped_and_reported_and_the_rest_goes_on(tmp_path):
    f = tmp_path / "looper.py"
    f.write_text(LOOPING_BOT)
    c = cfg(
        tmp_path,
        bots=("random", "simple", str(f)),
        games_per_pair=40,
        chunk_size=20,
        workers=2,
        limits={"chunk_min_seconds": 2, "chunk_seconds_per_game": 0.01, "decision_seconds": 3600},
    )
    t0 = time.monotonic()
    res = run_tournament(c, progress=False)
    assert time.monotonic() - t0 < 60
    assert res.status == "failed"
    assert set(res.games["matchup"]) == {"random vs simple"}
    assert len(res.failed_chunks) == 4
    # CPU time against the 2 s limit, or the wall-clock backstop (4x) on a loaded machine
    assert all("timed out after" in x and "while asking bot 'looper' for discard()" in x for x in res.failed_chunks)


def test_an_in_process_bot_stuck_in_a_decision_is_stopped_within_its_decision_seconds(tmp_path):
    """With the default chunk limits (300 s at least), the stuck bot is found by its decision count
    standing still: each of its chunks fails in seconds with one line naming it; nothing finished is lost."""
    f = tmp_path / "looper.py"
    f.write_text(LOOPING_BOT)
    c = cfg(tmp_path, bots=("random", "simple", str(f)), games_per_pair=20, chunk_size=20, workers=2, limits={})
    t0 = time.monotonic()
    res = run_tournament(c, progress=False)
    assert time.monotonic() - t0 < 90  # two stuck chunks side by side, 2 s of CPU each; the chunk limit is 300 s
    assert res.status == "failed"
    assert set(res.games["matchup"]) == {"random vs simple"} and len(res.games) == 20
    assert len(res.failed_chunks) == 2
    for line in res.failed_chunks:
        assert "bot 'looper' was stuck in discard() for " in line, line
        assert "over the 2 s one decision may take ([limits] decision_seconds)" in line, line
        assert "\n" not in line


def test_kill_9_of_the_driver_leaves_no_worker_behind(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text(
        f'name = "k"\nbots = ["simple", "gin-chasing"]\ngames_per_pair = 2000000\nchunk_size = 20000\n'
        f'workers = 2\nresults_dir = "{tmp_path / "results"}"\n'
    )
    driver = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", "run", str(conf), "--quiet", "--no-report"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    children: list[int] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and len(children) < 2 and driver.poll() is None:
        time.sleep(0.5)
        children = _children(driver.pid)
    assert len(children) == 2, (
        f"the workers did not start: {driver.poll()} {driver.stderr.read() if driver.poll() is not None else ''}"
    )
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in children):
        time.sleep(0.2)
    assert not any(_alive(p) for p in children)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- configs ----------------------------------------------------------------------------------------


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match="unknown key 'game_per_pair'.*did you mean 'games_per_pair'"):
        config_from_dict({"game_per_pair": 10})
    with pytest.raises(ConfigError, match="workers = -1"):
        config_from_dict({"workers": -1})
    with pytest.raises(ConfigError, match="must be even"):
        config_from_dict({"games_per_pair": 11})
    with pytest.raises(ConfigError, match="knock_limit"):
        config_from_dict({"rules": {"knock_limit": 11}})
    with pytest.raises(ConfigError, match="unknown bot 'simpel'"):
        load_bots(config_from_dict({"bots": ["random", "simpel"]}))
    with pytest.raises(ConfigError, match="no parameter 'knock_att'"):
        load_bots(config_from_dict({"bots": ["random", "k"], "variants": {"k": {"bot": "simple", "knock_att": 3}}}))
    with pytest.raises(ConfigError, match="elo0 < elo1"):
        config_from_dict({"sprt": {"elo0": 5, "elo1": 0}})
    with pytest.raises(ConfigError, match="sprt.alpha"):
        config_from_dict({"sprt": {"alpha": 0.5}})
    with pytest.raises(ConfigError, match="sprt.beta"):
        config_from_dict({"sprt": {"beta": 0}})
    with pytest.raises(ConfigError, match="limits has no key 'decision_secs'"):
        config_from_dict({"limits": {"decision_secs": 1}})
    with pytest.raises(ConfigError, match="seed"):
        config_from_dict({"seed": "sekret"})
    p = tmp_path / "c.toml"
    p.write_text("bots = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(p)


def test_default_config_loads_with_all_its_bots():
    c = load_config(ROOT / "configs" / "default.toml")
    bots = load_bots(c)
    assert len(c.matchups()) == len(c.bots) * (len(c.bots) - 1) // 2
    assert all(b.fast for b in bots.values())


def test_gauntlet_plays_the_candidate_against_each_bot(tmp_path):
    res = run_tournament(
        cfg(tmp_path, format="gauntlet", candidate="early-knock", bots=("random", "simple"), games_per_pair=40),
        progress=False,
    )
    assert list(pair_summary(res.store)["matchup"]) == ["early-knock vs random", "early-knock vs simple"]
    assert len(res.games) == 80


def test_run_accepts_a_config_path_or_dict_and_saves_bot_paths_absolute(tmp_path, monkeypatch):
    bot_dir = tmp_path / "mybots"
    bot_dir.mkdir()
    (bot_dir / "copy.py").write_text(SIMPLE_COPY)
    conf = bot_dir / "c.toml"
    conf.write_text(
        f'name = "p"\nbots = ["random", "copy.py"]\ngames_per_pair = 20\nchunk_size = 20\n'
        f'workers = 1\nresults_dir = "{tmp_path / "results"}"\n'
    )
    res = run_tournament(conf, progress=False)  # the bot path is relative to the config's folder
    assert set(res.games["bot0"].astype(str)) == {"random", "simple-copy"}
    saved = load_config(tmp_path / "results" / "p" / "config.toml")
    assert str(bot_dir / "copy.py") in saved.bots
    monkeypatch.chdir(tmp_path)
    assert {b.name for b in load_bots(saved).values()} == {"random", "simple-copy"}
    as_dict = run_tournament(
        {
            "name": "d",
            "bots": ["random", "simple"],
            "games_per_pair": 20,
            "chunk_size": 20,
            "workers": 1,
            "results_dir": str(tmp_path / "results"),
        },
        progress=False,
    )
    assert len(as_dict.games) == 20


def test_a_secret_seed_is_drawn_once_kept_in_the_folder_and_resumes_exactly(tmp_path):
    a = run_tournament(cfg(tmp_path, name="s1", seed="secret"), progress=False)
    b = run_tournament(cfg(tmp_path, name="s2", seed="secret"), progress=False)
    secret = (tmp_path / "results" / "s1" / "seed.secret").read_text()
    assert set(a.games["seed"]).isdisjoint(set(b.games["seed"]))  # two draws, two sets of deals
    # Resuming the same folder keeps its seed: delete a chunk's record by damaging it, play again.
    victim = sorted((tmp_path / "results" / "s1" / "games").rglob("*.parquet"))[0]
    victim.write_bytes(b"junk")
    again = run_tournament(cfg(tmp_path, name="s1", seed="secret"), progress=False)
    assert (tmp_path / "results" / "s1" / "seed.secret").read_text() == secret
    assert same(again.games, a.games)
    assert json.loads((tmp_path / "results" / "s1" / "manifest.json").read_text())["seed"] == "secret"
    assert secret.strip() not in (tmp_path / "results" / "s1" / "config.toml").read_text()


def test_a_bot_file_imported_under_its_own_name_first_still_loads_for_a_run(tmp_path):
    """The README's debugging advice imports the file as ``my_bot``; numba then caches its
    functions under that module name.  A later run must not trip over that cache."""
    bot = tmp_path / "my_bot.py"
    bot.write_text((ROOT / "bots" / "TEMPLATE.py").read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import my_bot, numpy as np; from arena.engine.layout import V_SIZE; "
            "my_bot.take_upcard(np.zeros(V_SIZE, np.int64), np.zeros(8), np.zeros(8), "
            "np.zeros(4, np.uint64))",
        ],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli.main",
            "run",
            str(ROOT / "configs" / "quick.toml"),
            "--bot",
            str(bot),
            "--games",
            "20",
            "--workers",
            "1",
            "--no-report",
            "--quiet",
            "--results-dir",
            str(tmp_path / "results"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "my_bot" in out.stdout


def test_fresh_with_a_bot_that_does_not_load_deletes_nothing(tmp_path):
    run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    broken = tmp_path / "broken.py"
    broken.write_text("def take_upcard(view, params, memory, rng):\n    return 0\n")  # four functions missing
    with pytest.raises(ConfigError, match="broken.py: not a bot: missing function"):
        run_tournament(cfg(tmp_path, bots=("random", str(broken))), progress=False, fresh=True)
    assert before == {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    fresh = run_tournament(cfg(tmp_path, games_per_pair=40), progress=False, fresh=True)  # now it may delete
    assert fresh.status == "complete" and fresh.store.n_games() == 40


def test_the_command_exits_1_naming_the_failed_matchups_and_2_for_bad_input(tmp_path):
    f = tmp_path / "killer.py"
    f.write_text(KILLER_BOT)
    conf = tmp_path / "c.toml"
    conf.write_text(
        f'name = "x"\nbots = ["random", "{f}"]\ngames_per_pair = 40\nchunk_size = 20\n'
        f'workers = 1\nresults_dir = "{tmp_path / "results"}"\n'
    )
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "run", str(conf), "--quiet", "--no-report"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr[-2000:]
    last = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(last) == 1 and "2 chunk(s) failed, in random vs killer" in last[0]
    (tmp_path / "file").write_text("")
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "run", str(conf), "--quiet", "--results-dir", str(tmp_path / "file")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and out.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "Traceback" not in out.stderr


def test_sprt_stops_in_chunk_order_at_the_same_place_on_any_number_of_workers(tmp_path):
    base = dict(games_per_pair=2000, chunk_size=20, sprt={"elo0": 0, "elo1": 20})
    one = run_tournament(cfg(tmp_path, name="s1", **base), progress=False, stop=SprtGate)
    two = run_tournament(cfg(tmp_path, name="s2", workers=2, **base), progress=False, stop=SprtGate)
    assert one.status == two.status == "stopped early"
    assert one.stopped_early.startswith("H0 accepted")  # random (bot_a) is not 20 Elo better than simple
    n = one.store.n_games()
    assert 0 < n < 2000 and n % 20 == 0 and two.store.n_games() == n
    assert same(one.games, two.games)
    manifest = json.loads((tmp_path / "results" / "s2" / "manifest.json").read_text())
    assert manifest["status"] == "stopped early" and "SPRT" in manifest["sprt"]
    # Decided on its very last chunk: complete, not "stopped early".
    last = run_tournament(cfg(tmp_path, name="s3", **{**base, "games_per_pair": n}), progress=False, stop=SprtGate)
    assert last.status == "complete" and last.stopped_early == "" and "H0 accepted" in last.sprt


PATCHER_BOT = textwrap.dedent('''
    """Plays simple, and tries to sabotage every other matchup by patching bots.simple."""
    import bots.simple as victim
    from bots.simple import take_upcard, draw, big_gin, discard, knock
    NAME = "patcher"
    PLAIN = True

    def _never(view, params, memory, rng):
        return 0

    victim.knock = _never  # at import time: in the sandbox this is the host's own copy
    import arena.botkit.bot
    arena.botkit.bot.load_bot = lambda spec: (_ for _ in ()).throw(RuntimeError("sabotaged"))
''')


def test_external_and_sandboxed_bots_play_in_a_run_and_a_patching_bot_reaches_nothing(tmp_path):
    ext = f"cmd:{sys.executable} {ROOT / 'examples' / 'external' / 'simple_player.py'}"
    patcher = tmp_path / "patcher.py"
    patcher.write_text(PATCHER_BOT)
    c = cfg(
        tmp_path,
        bots=("random", "simple", ext, str(patcher)),
        games_per_pair=40,
        chunk_size=20,
        workers=2,
        sandbox=True,
    )
    seen: list[str] = []  # the command lines of this process's children while chunks come back

    def children(done: int, total: int) -> None:
        ps = subprocess.run(["ps", "-ww", "--ppid", str(os.getpid()), "-o", "args="], capture_output=True, text=True)
        seen.extend(ps.stdout.splitlines())

    res = run_tournament(c, progress=children)
    assert res.status == "complete"
    # The workers play their own copies of the bots: the processes the loading handshakes started here
    # are gone before the games (they idled through the whole run: a Java VM each for a kit player).
    assert seen and not [a for a in seen if "simple_player.py" in a or "patcher" in a], seen
    g = res.games
    assert (g["forfeit_seat"] < 0).all()
    reference = run_tournament(cfg(tmp_path, name="ref", games_per_pair=40, chunk_size=20), progress=False).games
    rs = g[g["matchup"] == "random vs simple"]
    assert same(rs, reference)  # the patcher, sandboxed, changed nothing in a matchup it does not play
    # The external Simple and the sandboxed patcher (simple's moves) score like simple against random.
    for name in ("simple-py", "patcher"):
        m = g[(g["matchup"] == f"random vs {name}")]
        assert (m["winner"] == name).sum() == (reference["winner"] == "simple").sum()
    assert (tmp_path / "results" / "t" / "logs").is_dir()


def test_a_cmd_bot_runs_in_the_drivers_folder_and_a_file_edited_mid_run_fails_its_chunks(tmp_path, monkeypatch):
    """A relative ``cmd:python3 p.py`` is the driver's p.py: a Dask worker started in another folder
    ran its own p.py there, another program under the driver's matchup.  And a program's files are
    read again at each chunk: one edited during a run played its later chunks as the new program,
    mixed in silence with the old one's games.  Now it runs in the driver's folder, and a chunk whose
    files differ from the ones the run began with fails in one line."""
    from arena.external.client import close_bot
    from arena.loading.load import load
    from arena.run.plan import BotSpec
    from arena.run.worker import WorkerError, bot_from_spec
    from arena.settings.botref import BotRef

    player = (ROOT / "examples" / "external" / "simple_player.py").read_text()
    never_knocks = player.replace(
        'if kind in ("big_gin", "knock"):\n        return 1', 'if kind in ("big_gin", "knock"):\n        return 0'
    )
    assert never_knocks != player
    driver, worker = tmp_path / "driver", tmp_path / "worker"
    for folder, text in ((driver, player), (worker, never_knocks)):
        folder.mkdir()
        (folder / "p.py").write_text(text)
    monkeypatch.chdir(driver)
    ref = f"cmd:{sys.executable} p.py"
    bot = load(BotRef.parse(ref))
    spec = BotSpec.of(bot)
    close_bot(bot)
    assert spec.cwd == str(driver)
    monkeypatch.chdir(worker)  # a worker elsewhere: it plays the driver's file (the hash matches)
    close_bot(bot_from_spec(spec))
    # A machine without the driver's folder: a command of absolute paths plays, in the worker's own folder.
    absolute = load(BotRef.parse(f"cmd:{sys.executable} {driver / 'p.py'}"))
    close_bot(absolute)
    close_bot(bot_from_spec(dataclasses.replace(BotSpec.of(absolute), cwd=str(tmp_path / "not-on-this-machine"))))
    monkeypatch.chdir(driver)

    edited = []

    def edit_after_first_chunk(done: int, total: int) -> None:
        if done and not edited:
            (driver / "p.py").write_text(never_knocks)
            edited.append(done)

    c = cfg(tmp_path, bots=("random", ref), games_per_pair=40, chunk_size=10)
    res = run_tournament(c, progress=edit_after_first_chunk)
    assert edited and res.status != "complete"
    assert len(res.failed_chunks) == 3 and len(res.games) == 10
    assert all("differs on this worker from the driver's" in f and "changed since the run began" in f
               for f in res.failed_chunks), res.failed_chunks  # fmt: skip
    with pytest.raises(WorkerError, match="differs on this worker"):
        bot_from_spec(spec)


def test_a_run_without_sprt_after_an_sprt_stop_plays_and_counts_every_chunk(tmp_path):
    c = cfg(tmp_path, games_per_pair=400, chunk_size=20, sprt={"elo0": 0, "elo1": 20})
    stopped = run_tournament(c, progress=False, stop=SprtGate)
    assert stopped.status == "stopped early" and stopped.store.n_games() < 400
    full = run_tournament(c, progress=False)
    assert full.status == "complete" and full.store.n_games() == 400 and len(full.games) == 400


def test_the_frame_walking_cheat_gains_nothing_in_the_sandbox_game_for_game(tmp_path):
    """In-process, a bot that walks the stack to the engine state peeks at the stock and plays other
    games; sandboxed (its own process, seeing only its view), it plays exactly its honest twin's
    games: all 400 of them, result, score and every counted move alike (so its win rate is the
    twin's at any number of games; a statistical check over 2,000 games said less)."""
    from arena.analysis.stats import pair_stats
    from tests.bots.test_external_sandbox import FRAME_WALKER

    cheat = tmp_path / "peeker.py"
    cheat.write_text(textwrap.dedent(FRAME_WALKER))
    twin = tmp_path / "twin.py"
    twin.write_text(
        '"""The honest twin."""\nimport bots.simple as s\nPLAIN = True\nMEMORY = s.MEMORY\nNAME = "peeker"\n'
        "take_upcard, draw, big_gin, discard, knock = (f.py_func for f in "
        "(s.take_upcard, s.draw, s.big_gin, s.discard, s.knock))\n"
    )
    common = dict(games_per_pair=400, chunk_size=100, workers=2)
    honest = run_tournament(cfg(tmp_path, name="honest", bots=("simple", str(twin)), **common), progress=False)
    inproc = run_tournament(cfg(tmp_path, name="inproc", bots=("simple", str(cheat)), **common), progress=False)
    boxed = run_tournament(
        cfg(tmp_path, name="boxed", bots=("simple", str(cheat)), sandbox=True, **common), progress=False
    )
    h, i, b = (pair_stats(summarize_run(r.store)).iloc[0] for r in (honest, inproc, boxed))
    assert not same(inproc.games, honest.games)  # the peeking changes play in-process
    assert len(boxed.games) == 400 and same(boxed.games, honest.games)  # sandboxed: not one game differs
    assert same(boxed.hands, honest.hands)
    print(
        f"simple's win rate vs honest twin {h['win_rate_a']:.3f}, vs cheat in-process {i['win_rate_a']:.3f}, "
        f"vs cheat sandboxed {b['win_rate_a']:.3f}"
    )


START_UNTIL_MARKED = textwrap.dedent("""
    import os, runpy, sys
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fail-now")):
        sys.exit(1)  # fails before its handshake
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "simple_player.py"), run_name="__main__")
""")


def test_a_bot_that_fails_its_start_on_a_worker_forfeits_those_games_and_the_run_completes(tmp_path, monkeypatch):
    """A bot's program can fail to start where a chunk runs though it started for the run's driver
    (here: every start after the driver's).  The worker no longer starts it to learn its handshake
    (the driver's is in its spec), so a failed start is the game's forfeit under the restart rule,
    as at any later start.  It was a failure of the whole chunk, whose games were then not played
    (in a league: the pairing left incomplete, and the bot spared its losses)."""
    from arena.run.plan import BotSpec

    folder = tmp_path / "flaky"
    folder.mkdir()
    script = folder / "flaky.py"
    script.write_text(START_UNTIL_MARKED)
    (folder / "simple_player.py").write_text((ROOT / "examples" / "external" / "simple_player.py").read_text())
    spec_of = BotSpec.of.__func__

    def of_then_fail(cls, bot):  # the driver has loaded the bots (their handshakes): from now on it fails
        (folder / "fail-now").touch()
        return spec_of(cls, bot)

    monkeypatch.setattr(BotSpec, "of", classmethod(of_then_fail))
    c = cfg(tmp_path, bots=("simple", f"cmd:{sys.executable} {script}"), games_per_pair=40, chunk_size=10, workers=2)
    res = run_tournament(c, progress=False)
    assert res.status == "complete", res.status
    g = res.games
    assert len(g) == 40 and (g["forfeit_seat"] >= 0).all() and (g["winner"] == "simple").all()
    errors = g["error"].astype(str)
    assert errors.str.contains("while asked the handshake|failed to start").all(), errors.unique()


@pytest.mark.parametrize("shared_deals", [True, False])
def test_listing_the_bots_in_another_order_plays_nothing_again(tmp_path, caplog, shared_deals):
    """A matchup's games depend on which bot is its first.  Listed the other way round (or a gauntlet
    after a submit), every stored matchup was played again with the seats swapped, the old games left
    the tables, and the run warned that 'the matchup's settings changed': nothing had."""

    def play(bots):
        c = cfg(tmp_path, bots=bots, games_per_pair=40, chunk_size=20, shared_deals=shared_deals)
        return run_tournament(c, progress=False)

    first = play(("random", "simple", "early-knock"))
    before = chunk_files(tmp_path / "results" / "t")
    caplog.clear()
    again = play(("early-knock", "simple", "random"))
    assert again.status == "complete"
    assert chunk_files(tmp_path / "results" / "t") == before  # no chunk played, none rewritten
    assert "changed since" not in caplog.text
    assert sorted(again.games["matchup"].unique()) == sorted(first.games["matchup"].unique())
    assert same(again.games, first.games)


#: A bot named by its first argument that says so on stderr and plays like the Python example.
NAMED_PLAYER = """
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

name, game = sys.argv[1], None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(f"I am {name}", file=sys.stderr, flush=True)
        print(json.dumps({"name": name, "protocol": 1}), flush=True)
    elif msg["type"] == "decide":
        if msg["new_game"]:
            game = sp.Game(msg["seed"])
        print(sp.decide(msg, game), flush=True)
    else:
        break
"""


def test_bots_whose_names_differ_only_in_punctuation_keep_logs_of_their_own(tmp_path):
    """``a+b`` and ``a_b`` both wrote ``logs/a_b.log``: every character but a letter, a digit, ``_``, ``.`` and
    a lone ``-`` was written ``_``.  Names that hold none of the others keep their files."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "external"
    (tmp_path / "simple_player.py").write_text((examples / "simple_player.py").read_text())
    (tmp_path / "named.py").write_text(NAMED_PLAYER)
    tmp_path.chmod(0o755)
    bots = tuple(f"cmd:{sys.executable} {tmp_path / 'named.py'} {n}" for n in ("a+b", "a_b", "simple-py"))
    res = run_tournament(cfg(tmp_path, bots=bots, games_per_pair=2, chunk_size=2), progress=False)
    assert res.status == "complete"
    logs = tmp_path / "results" / "t" / "logs"
    names = sorted(p.name for p in logs.iterdir())
    assert names == ["a%2Bb.log", "a_b.log", "simple-py.log"], names
    for name, file in (("a+b", "a%2Bb.log"), ("a_b", "a_b.log"), ("simple-py", "simple-py.log")):
        said = {line for line in (logs / file).read_text().splitlines() if line.startswith("I am ")}
        assert said == {f"I am {name}"}, (file, said)


def test_a_log_files_name_is_one_bots_or_one_pairs_only():
    """Every name has a file of its own (:func:`log_stem` is one to one), and so has every pair of names for
    the in-process bots' prints: ``a--b`` against ``c`` is not ``a`` against ``b--c``."""
    from arena.run.store.meta import log_stem, stdout_log_stem

    names = ["simple", "simple-py", "mc_v2.1", "a+b", "a_b", "a%2Bb", "a-", "-a", "a--b", "b--c", "a", "c", "é", "x y"]
    names += ["n" * 200, "n" * 199 + "m", "€" * 100, "a/b", "..", "a~b"]
    stems = [log_stem(n) for n in names]
    assert len(set(stems)) == len(names), stems
    assert stems[:3] == ["simple", "simple-py", "mc_v2.1"]  # the common names keep their files
    assert all(len(s.encode()) <= 120 and "/" not in s and "--" not in s for s in stems)
    pairs = [stdout_log_stem(a, b) for a in names for b in names]
    assert len(set(pairs)) == len(pairs)
    assert not set(pairs) & set(stems)
    assert stdout_log_stem("simple", "random") == "simple--random.stdout"
