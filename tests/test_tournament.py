"""The tournament runner: determinism, resuming, submitting, faults, folders."""

from __future__ import annotations

import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from arena.config import ConfigError, TournamentConfig, config_from_dict, load_config
from arena.tournament import TournamentError, run_tournament

SIMPLE_COPY = textwrap.dedent('''
    """A copy of simple under another name (for submit tests)."""
    from bots.simple import take_upcard, draw, big_gin, discard, knock
    NAME = "simple-copy"
''')


def cfg(tmp_path: Path, **kw) -> TournamentConfig:
    base = dict(name="t", bots=("random", "simple"), games_per_pair=120, chunk_size=40, seed=3, workers=1,
                results_dir=str(tmp_path / "results"))
    base.update(kw)
    return TournamentConfig(**base)


def frame_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.reset_index(drop=True).equals(b.reset_index(drop=True))


def test_same_seed_same_results_on_one_or_two_workers_and_any_executor(tmp_path):
    one = run_tournament(cfg(tmp_path, name="one"), progress=False)
    two = run_tournament(cfg(tmp_path, name="two", workers=2), progress=False)
    with ThreadPoolExecutor(3) as ex:
        threads = run_tournament(cfg(tmp_path, name="thr", workers=3), progress=False, executor=ex)
    assert len(one.games) == 120
    assert frame_equal(one.games, two.games) and frame_equal(one.games, threads.games)
    assert frame_equal(one.hands, two.hands)
    other = run_tournament(cfg(tmp_path, name="other", seed=4), progress=False)
    assert not frame_equal(one.games, other.games)


def test_duplicate_pairs_share_a_seed_with_seats_swapped(tmp_path):
    res = run_tournament(cfg(tmp_path), progress=False)
    g = res.games
    for _, pair in g.groupby("pair"):
        assert len(pair) == 2 and pair["seed"].nunique() == 1
        assert sorted(pair["swap"]) == [0, 1]
        assert set(pair["bot0"]) == {"random", "simple"}
    # every matchup plays the same deals
    res3 = run_tournament(cfg(tmp_path, name="three", bots=("random", "simple", "early-knock")), progress=False)
    seeds = res3.games.groupby("matchup")["seed"].apply(lambda s: tuple(sorted(s)))
    assert seeds.nunique() == 1


def test_interrupted_run_resumes_to_the_same_results(tmp_path):
    full = run_tournament(cfg(tmp_path, name="full"), progress=False)
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg(tmp_path, name="cut"), progress=interrupt)
    run_dir = tmp_path / "results" / "cut"
    saved = list((run_dir / "chunks").rglob("*.games.parquet"))
    assert len(saved) == 2  # two chunks finished before the interrupt, one left
    before = {p: p.stat().st_mtime_ns for p in saved}
    resumed = run_tournament(cfg(tmp_path, name="cut"), progress=False)
    assert frame_equal(full.games, resumed.games) and frame_equal(full.hands, resumed.hands)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())  # not replayed


def test_submit_plays_only_the_new_pairs_and_a_changed_bot_is_replayed(tmp_path):
    first = run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    old = {p: p.stat().st_mtime_ns for p in (run_dir / "chunks").rglob("*.games.parquet")}
    bot_file = tmp_path / "simple_copy.py"
    bot_file.write_text(SIMPLE_COPY)
    c = cfg(tmp_path, bots=("random", "simple", str(bot_file)))
    second = run_tournament(c, progress=False)
    assert set(second.games["matchup"]) == {"random vs simple", "random vs simple-copy", "simple vs simple-copy"}
    assert all(p.stat().st_mtime_ns == t for p, t in old.items())
    same = second.games[second.games.matchup == "random vs simple"].drop(columns="game_id")
    assert frame_equal(same, first.games.drop(columns="game_id"))
    # The copy plays exactly like simple: same deals, same results against random.
    a = second.games[second.games.matchup == "random vs simple-copy"]
    assert (a["winner"] == "simple-copy").sum() == (first.games["winner"] == "simple").sum()
    # Editing the bot file changes its hash: its pairs are replayed, the old ones dropped.
    dirs_before = {d.name for d in (run_dir / "chunks").iterdir()}
    bot_file.write_text(SIMPLE_COPY + "\n# edited\n")
    third = run_tournament(c, progress=False)
    dirs_after = {d.name for d in (run_dir / "chunks").iterdir()}
    assert len(dirs_after - dirs_before) == 2 and len(dirs_before - dirs_after) == 2
    assert len(third.games) == 360


def test_a_folder_from_other_rules_is_refused_and_left_intact(tmp_path):
    run_tournament(cfg(tmp_path), progress=False)
    run_dir = tmp_path / "results" / "t"
    snapshot = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with pytest.raises(TournamentError, match="different rules"):
        run_tournament(cfg(tmp_path, rules={"preset": "standard", "knock_limit": 5}), progress=False)
    with pytest.raises(TournamentError, match="seed"):
        run_tournament(cfg(tmp_path, seed=99), progress=False)
    assert snapshot == {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


BAD_BOT = textwrap.dedent('''
    """Plays like simple but blunders: an illegal discard in some games, raises in others."""
    from bots.simple import take_upcard, draw, big_gin, knock
    from bots.simple import discard as simple_discard
    from arena.layout import V_TURN, V_UPCARD
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
    assert res.bot_summary().set_index("bot").loc["bad", "forfeits"] == len(forfeited)
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


def test_a_dead_worker_is_replaced_and_its_chunk_retried_then_reported(tmp_path):
    f = tmp_path / "killer.py"
    f.write_text(KILLER_BOT)
    res = run_tournament(cfg(tmp_path, bots=("random", "simple", str(f)), workers=2), progress=False)
    assert set(res.games["matchup"]) == {"random vs simple"}  # the healthy matchup finished
    assert len(res.failed_chunks) == 6  # 3 chunks per matchup with killer, each tried twice
    assert all("killer" in c for c in res.failed_chunks)
    import json

    manifest = json.loads((tmp_path / "results" / "t" / "manifest.json").read_text())
    assert manifest["status"] == "incomplete" and len(manifest["failed_chunks"]) == 6


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
        config_from_dict({"bots": ["random", "simpel"]}).load_bots()
    with pytest.raises(ConfigError, match="no parameter 'knock_att'"):
        config_from_dict({"bots": ["random", "k"], "variants": {"k": {"bot": "simple", "knock_att": 3}}}).load_bots()
    p = tmp_path / "c.toml"
    p.write_text("bots = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(p)


def test_default_config_loads_with_all_its_bots():
    c = load_config(Path(__file__).resolve().parent.parent / "configs" / "default.toml")
    bots = c.load_bots()
    assert len(c.matchups()) == len(c.bots) * (len(c.bots) - 1) // 2
    assert all(b.fast for b in bots.values())


def test_gauntlet_plays_the_candidate_against_each_bot(tmp_path):
    res = run_tournament(cfg(tmp_path, format="gauntlet", candidate="early-knock", bots=("random", "simple"),
                             games_per_pair=40), progress=False)
    assert list(res.pair_summary()["matchup"]) == ["early-knock vs random", "early-knock vs simple"]
    assert len(res.games) == 80


def test_run_accepts_a_config_path_or_dict_and_saves_bot_paths_absolute(tmp_path, monkeypatch):
    bot_dir = tmp_path / "mybots"
    bot_dir.mkdir()
    (bot_dir / "copy.py").write_text(SIMPLE_COPY)
    conf = bot_dir / "c.toml"
    conf.write_text(f'name = "p"\nbots = ["random", "copy.py"]\ngames_per_pair = 20\nchunk_size = 20\n'
                    f'workers = 1\nresults_dir = "{tmp_path / "results"}"\n')
    res = run_tournament(conf, progress=False)  # the bot path is relative to the config's folder
    assert set(res.games["bot0"]) == {"random", "simple-copy"}
    saved = load_config(tmp_path / "results" / "p" / "config.toml")
    assert str(bot_dir / "copy.py") in saved.bots
    monkeypatch.chdir(tmp_path)
    assert {b.name for b in saved.load_bots().values()} == {"random", "simple-copy"}
    as_dict = run_tournament({"name": "d", "bots": ["random", "simple"], "games_per_pair": 20, "chunk_size": 20,
                              "workers": 1, "results_dir": str(tmp_path / "results")}, progress=False)
    assert len(as_dict.games) == 20
