"""EAAI-kit players (``eaai:``), the end-of-hand message, declared melds, and Java reading its files.

The kit itself is never used here: ``tests/bots/eaai/kit`` is a stand-in written for these
tests (the kit's package, class and method names and signatures), and the players in
``tests/bots/eaai/players`` are ours.  The Java is compiled once per test session (this
file's module fixture; the suite runs whole files per worker).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from arena.botkit.bot import BotError
from arena.engine import layout as lay
from arena.engine.melds import deadwood
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.engine.showdown import ArrangementError, check_declaration, declared_showdown, layoff_steps, table_shows
from arena.engine.step import apply_action, begin_hand
from arena.external.client import close_bot, drain_log, external_bot
from arena.external.eaai import KIT_ENV, kit_path
from arena.external.limits import Limits, build_filter, filter_allows
from arena.external.protocol import ProtocolError, parse_hello, parse_melds
from arena.loading.load import load, load_bot
from arena.settings.botref import BotRef, BotRefError
from arena.settings.rules import load_rules
from tests.eaai_kit import PROBLEM, compile_kit, needs_java
from tests.scripted import new_game, play_out

EAAI = load_rules("eaai")
R = rules_array(EAAI)
#: Our card number of each kit card number (kit suits C H S D, ours c d h s).
OURS = [(0, 2, 3, 1)[k // 13] * 13 + k % 13 for k in range(52)]


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    """The stand-in kit and our players, compiled once; the kit set as the user would set it."""
    kit, players = compile_kit(tmp_path_factory.mktemp("eaai"))
    old = os.environ.get(KIT_ENV)
    os.environ[KIT_ENV] = str(kit)
    yield players
    if old is None:
        os.environ.pop(KIT_ENV, None)
    else:
        os.environ[KIT_ENV] = old


def kit_bot(players: Path, cls: str, **limits):
    return load(BotRef.parse(f"eaai:{players}:players.{cls}"), Limits(**limits) if limits else None)


# --- the bot reference and the kit ----------------------------------------------------------------


def test_an_eaai_spec_names_a_jar_or_folder_and_a_class(tmp_path):
    ref = BotRef.parse("eaai:lib/player.jar:com.example.MyPlayer")
    assert ref.kind == "eaai" and ref.player == ("lib/player.jar", "com.example.MyPlayer")
    assert ref.display == "MyPlayer" and not ref.in_process
    assert BotRef.parse(ref.spec()) == ref
    (tmp_path / "p.jar").write_bytes(b"")
    rel = BotRef.parse("eaai:p.jar:P", base_dir=tmp_path)
    assert rel.player == (str(tmp_path / "p.jar"), "P")
    assert BotRef.parse("eaai:C:/x.jar:a.B").player == ("C:/x.jar", "a.B")  # the class follows the last colon
    for bad in ("eaai:player.jar", "eaai::P", "eaai:p.jar:", "eaai:p.jar:com..Bad", "eaai:p.jar:1x"):
        with pytest.raises(BotRefError, match="eaai"):
            BotRef.parse(bad)
    # the class name is matched whole: a final newline is no part of a Java name (the spec's own is stripped)
    from arena.settings.botref import _JAVA_CLASS

    assert _JAVA_CLASS.fullmatch("com.example.P") and not _JAVA_CLASS.fullmatch("com.example.P\n")
    assert BotRef.parse("eaai:p.jar:com.example.P\n").player[1] == "com.example.P"


def test_without_the_kit_an_eaai_player_fails_in_one_line_naming_the_option(monkeypatch, tmp_path):
    monkeypatch.delenv(KIT_ENV, raising=False)
    with pytest.raises(BotError, match="--eaai-kit") as err:
        load_bot(f"eaai:{tmp_path}:P")
    assert "\n" not in str(err.value)
    monkeypatch.setenv(KIT_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(BotError, match="does not exist"):
        kit_path()
    monkeypatch.setenv(KIT_ENV, str(tmp_path))
    with pytest.raises(BotError, match="no ginrummy/GinRummyPlayer.class"):
        kit_path()


def test_the_cli_takes_the_kit_once_and_check_bot_says_when_it_is_missing(tmp_path, monkeypatch):
    from arena.loading.check import check_bot

    monkeypatch.delenv(KIT_ENV, raising=False)
    report = check_bot(f"eaai:{tmp_path}:P", games=0, echo=None)
    assert not report.passed and [x for x in report.lines if x[0] == "FAIL" and "--eaai-kit" in x[2]]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    cmd = [sys.executable, "-m", "arena.cli", "--eaai-kit", str(tmp_path / "no"), "bots"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stderr.strip() == f"error: --eaai-kit {tmp_path / 'no'}: no such jar or folder"


def test_the_kit_option_may_follow_the_command_as_its_error_message_suggests(tmp_path):
    """The missing-kit error says "give it with --eaai-kit PATH"; a user adds that to the command
    line they have, after the command, and it must mean what it means before it."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    env.pop(KIT_ENV, None)
    for tail in (["--eaai-kit", str(tmp_path / "no")], [f"--eaai-kit={tmp_path / 'no'}"]):
        r = subprocess.run([sys.executable, "-m", "arena.cli", "bots", *tail], capture_output=True, text=True, env=env)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip() == f"error: --eaai-kit {tmp_path / 'no'}: no such jar or folder"


def test_a_configs_eaai_kit_is_a_path_made_absolute_from_its_folder_and_checked_before_the_run(tmp_path):
    from arena.run.runner import run_tournament
    from arena.settings.config import ConfigError, config_from_dict

    for bad in (5, ["kit"], "kit\nx"):
        with pytest.raises(ConfigError, match="eaai_kit") as err:
            config_from_dict({"bots": ["random", "simple"], "eaai_kit": bad})
        assert "\n" not in str(err.value)
    cfg = config_from_dict({"bots": ["random", "simple"], "eaai_kit": "kits/k.jar", "results_dir": str(tmp_path)})
    assert cfg.with_absolute_paths(tmp_path / "cfgs").eaai_kit == str(tmp_path / "cfgs" / "kits" / "k.jar")
    assert cfg.replace(eaai_kit="").with_absolute_paths(tmp_path).eaai_kit == ""
    assert "eaai_kit" in cfg.to_toml()
    # Nothing there: one line naming the key, before the run folder is made.
    with pytest.raises(ConfigError) as err:
        run_tournament(cfg.replace(games_per_pair=2), base_dir=tmp_path, progress=False)
    assert str(err.value) == (
        f"config: eaai_kit = {tmp_path / 'kits' / 'k.jar'}: no such jar or folder (--eaai-kit PATH names another)"
    )
    assert not (tmp_path / "run").exists()


@needs_java
def test_a_kit_named_in_the_config_plays_without_the_option_and_the_option_wins_over_it(java, tmp_path):
    """``eaai_kit`` in the config (relative to its folder) is the kit "given once" for a project: the
    run needs neither ``--eaai-kit`` nor the variable, and its saved config names the kit absolutely
    (so ``arena submit`` and a resume find it).  The option overrides the key, and the key the
    variable."""
    kit = java.parent / "kit"
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(kit, project / "kit")
    shutil.copytree(java, project / "players")
    (project / "kit.toml").write_text(
        'bots = ["eaai:players:players.KitSimplePlayer", "simple"]\ngames_per_pair = 4\nchunk_size = 4\n'
        'workers = 1\nrules = "eaai"\nseed = 7\neaai_kit = "kit"\nresults_dir = "results"\n'
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    env.pop(KIT_ENV, None)

    def arena(*args: str, **extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "arena.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env={**env, **extra}, cwd=tmp_path)

    r = arena("run", str(project / "kit.toml"), "--name", "by-key", "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    saved = (tmp_path / "results" / "by-key" / "config.toml").read_text()  # results_dir: from the working folder
    assert f'eaai_kit = "{project / "kit"}"' in saved
    r = arena("bots", "--config", str(project / "kit.toml"))  # any command that loads the config's bots
    assert r.returncode == 0 and "KitSimplePlayer" in r.stdout, r.stderr
    # The saved config names the player absolutely too: a bot submitted later, from another folder,
    # plays it (its relative path was read from the working folder, and the player "did not exist").
    r = arena("submit", "random", "--to", str(tmp_path / "results" / "by-key"), "-q")
    assert r.returncode == 0, r.stderr
    assert f'"eaai:{project / "players"}:players.KitSimplePlayer"' in saved
    # The kit moved since the run: the saved key names nothing, and --eaai-kit wins over it in submit too.
    (project / "kit").rename(project / "kit2")
    run = str(tmp_path / "results" / "by-key")
    r = arena("submit", "gin-chasing", "--to", run, "-q")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: config: eaai_kit = ")
    assert r.stderr.strip().endswith("(--eaai-kit PATH names another)")
    r = arena("--eaai-kit", str(project / "kit2"), "submit", "gin-chasing", "--to", run)
    assert r.returncode == 0, r.stderr
    (project / "kit2").rename(project / "kit")
    # The key names a folder that is not there: the option wins over it; the variable does not.
    text = (project / "kit.toml").read_text().replace('eaai_kit = "kit"', 'eaai_kit = "gone"')
    (project / "kit.toml").write_text(text)
    r = arena("run", str(project / "kit.toml"), "--name", "by-option", "-q", "--no-report", "--eaai-kit", str(kit))
    assert r.returncode == 0, r.stderr
    r = arena("run", str(project / "kit.toml"), "--name", "by-variable", "-q", "--no-report", **{KIT_ENV: str(kit)})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == (
        f"error: config: eaai_kit = {project / 'gone'}: no such jar or folder (--eaai-kit PATH names another)"
    )


def test_hoisting_moves_only_the_apps_own_options_and_never_past_a_double_dash():
    import typer

    from arena.cli.typer_app import hoist

    opts = ("--eaai-kit",)
    assert hoist(["run", "quick", "--eaai-kit", "k", "--games", "2"], opts) == [
        "--eaai-kit", "k", "run", "quick", "--games", "2",
    ]  # fmt: skip
    assert hoist(["run", "--eaai-kit=k"], opts) == ["--eaai-kit=k", "run"]
    assert hoist(["run", "--", "--eaai-kit", "k"], opts) == ["run", "--", "--eaai-kit", "k"]
    assert hoist(["run", "--bot", "cmd:x --eaai-kit k"], opts) == ["run", "--bot", "cmd:x --eaai-kit k"]
    with pytest.raises(typer.BadParameter, match="no value given"):
        hoist(["run", "quick", "--eaai-kit"], opts)  # not "--eaai-kit run quick": a kit named "run"
    assert hoist(["run", "--eaai-kitchen=k"], opts) == ["run", "--eaai-kitchen=k"]


# --- the adapter, against the table ---------------------------------------------------------------


class _Recording:
    """A decision function that keeps a copy of every view it is shown (and the hooks it had)."""

    def __init__(self, fn, views):
        self.fn, self.views = fn, views
        self.table_hooks = getattr(fn, "table_hooks", None)

    def __call__(self, view, params, memory, rng):
        self.views.append(view.copy())
        return self.fn(view, params, memory, rng)


def _log_until(bot, marker: str, count: int, wait: float = 20.0) -> str:
    """The bot's log once ``count`` lines start with ``marker`` (a program writes its last lines
    after its last answer, in its own time), or what came within ``wait`` seconds."""
    import time

    log, deadline = "", time.monotonic() + wait
    while True:
        log += drain_log(bot)
        if sum(x.startswith(marker) for x in log.splitlines()) >= count or time.monotonic() > deadline:
            return log
        time.sleep(0.05)


def _mask(kit_cards) -> int:
    return sum(1 << OURS[k] for k in kit_cards)


@needs_java
def test_the_wrapped_players_picture_equals_the_arenas_view_at_every_decision(java):
    """A kit player that rebuilds the table from its callbacks alone (PicturePlayer) sees, at each
    of its decisions, exactly the arena's view: hand, pile in order, stock, turn, seat, dealer,
    what each side took, discarded and passed, the scores; and at each hand's end the scores
    the arena booked, also of a hand that ended before its first turn (seed 309's).  Both seats,
    against simple and random, thousands of decisions."""
    compared = ends = unasked = 0
    # random takes and throws back the same cards again and again: a card taken or discarded twice
    for seat, other, games in ((0, "simple", 8), (1, "simple", 10), (0, "random", 2), (1, "random", 2)):
        kit = kit_bot(java, "PicturePlayer", log_bytes=1 << 26)
        views: list[np.ndarray] = []
        rec_bot = dataclasses.replace(kit, functions=tuple(_Recording(f, views) for f in kit.functions))
        opponent = load_bot(other)
        bots = (rec_bot, opponent) if seat == 0 else (opponent, rec_bot)
        rec = play_batch(*bots, R, np.arange(300, 300 + games), record_hands=True)
        log = _log_until(kit, '{"picture":"end"', len(rec.hands))
        close_bot(kit)
        assert rec.errors == []
        pictures = [json.loads(x) for x in log.splitlines() if x.startswith('{"picture"')]
        decisions = [v for v in views if v[lay.V_DECISION] != lay.PH_KNOCK]
        asked = [p for p in pictures if p["picture"] != "end"]
        assert len(asked) == len(decisions) > 30
        for p, v in zip(asked, decisions):
            assert p["picture"] == ("discard" if v[lay.V_DECISION] == lay.PH_DISCARD else "draw")
            assert _mask(p["hand"]) == v[lay.V_HAND]
            assert [OURS[c] for c in p["pile"]] == v[lay.V_PILE : lay.V_PILE + v[lay.V_PILE_N]].tolist()
            for key, slot in (
                ("stock", lay.V_STOCK_N),
                ("turn", lay.V_TURN),
                ("seat", lay.V_SEAT),
                ("is_dealer", lay.V_IS_DEALER),
                ("my_score", lay.V_MY_SCORE),
                ("opp_score", lay.V_OPP_SCORE),
            ):
                assert int(p[key]) == v[slot], key
            for key in ("opp_taken", "opp_discarded", "opp_passed", "my_taken", "my_discarded", "my_passed"):
                assert _mask(p[key]) == v[getattr(lay, "V_" + key.upper())], key
            compared += 1
        hands = rec.hands
        end_pics = [p for p in pictures if p["picture"] == "end"]
        assert len(end_pics) == len(hands)  # every hand's end was shown (the last hand of each game too)
        hand_nos = [int(v[lay.V_HAND_NO]) for v in decisions]
        started = 1 + sum(a != b for a, b in zip(hand_nos, hand_nos[1:]))
        unasked += len(end_pics) - started  # hands that ended before the player's first turn
        for p, row in zip(end_pics, hands):
            assert p["scores"] == [int(row[lay.H_SCORE]), int(row[lay.H_SCORE + 1])]
            assert all(len(h) in (10, 11) for h in p["hands"])
            ends += 1
    assert compared > 2000 and ends > 60 and unasked >= 1


@needs_java
@pytest.mark.slow
def test_a_kit_style_simple_plays_gin_arenas_simple_about_evenly(java):
    """The same algorithm through the adapter wins about half its games under the eaai rules:
    120 games (60 seeds, both seatings); the bounds are about 3 standard errors wide (the 2,000-game
    figure is scripts/bench_eaai.py's)."""
    kit = kit_bot(java, "KitSimplePlayer")
    simple = load_bot("simple")
    seeds = np.arange(5000, 5060)
    a = play_batch(kit, simple, R, seeds)
    b = play_batch(simple, kit, R, seeds)
    close_bot(kit)
    assert a.errors == [] and b.errors == []
    wins = int((a.games[:, lay.G_WINNER] == 0).sum() + (b.games[:, lay.G_WINNER] == 1).sum())
    assert 0.35 <= wins / 120 <= 0.65, wins


@needs_java
@pytest.mark.parametrize(
    "player",
    [
        "KitSimplePlayer",
        "HelperRandPlayer",
        "StartRandPlayer",
        "CtorRandPlayer",
        "LocalRandPlayer",
        "ListRandPlayer",
        "SubRandPlayer",
        "ZooRandPlayer",
    ],
)
def test_a_seed_replays_the_same_games_because_the_players_generators_are_seeded(java, player):
    """Two fresh processes, same seeds: the same games.  KitSimplePlayer breaks ties with a Random in
    a field; HelperRandPlayer takes face-up cards at random from a static Random of another class of
    its own, StartRandPlayer from a Random it makes in startGame, CtorRandPlayer by coin flips its
    constructor draws from a static Random and Math.random (the first game's differed).  The adapter
    can reach none of these: LocalRandPlayer's coin is a new Random in each call, ListRandPlayer's
    one kept in a list, SubRandPlayer's its own subclass of Random, and ZooRandPlayer's are made in
    every way its class rewriting must follow (their games differed before it)."""
    simple = load_bot("simple")
    runs = []
    for _ in range(2):
        kit = kit_bot(java, player)
        runs.append(play_batch(kit, simple, R, np.arange(40, 45), record_hands=True, record_log=True))
        close_bot(kit)
    assert runs[0].errors == []
    assert np.array_equal(runs[0].games, runs[1].games) and np.array_equal(runs[0].log, runs[1].log)


@pytest.fixture(scope="module")
def chunked_runs(java, tmp_path_factory):
    """The same gauntlet of CtorDrawPlayer and HashSetPlayer against simple, run with two chunk sizes:
    each chunk starts the player's process anew, so a game is the first of its process in one run and
    a later one in the other.  {chunk_size: {(kit player, game id): its action log}}."""
    from arena.run.runner import run_tournament
    from arena.run.store import RunStore
    from arena.settings.config import config_from_dict

    folder = tmp_path_factory.mktemp("chunks")
    logs: dict[int, dict[tuple[str, int], list[int]]] = {}
    for size in (2, 10):
        cfg = config_from_dict({
            "name": f"c{size}", "format": "gauntlet", "candidate": "simple",
            "bots": [f"eaai:{java}:players.CtorDrawPlayer", f"eaai:{java}:players.HashSetPlayer"],
            "games_per_pair": 10, "chunk_size": size, "workers": 1, "seed": 5, "rules": "eaai",
            "results_dir": str(folder),
        })  # fmt: skip
        run_tournament(cfg, progress=False)
        logs[size] = {}
        for chunk in RunStore(folder / f"c{size}").chunks(actions=True):
            kit = chunk.bot_b if chunk.bot_a == "simple" else chunk.bot_a
            assert chunk.actions is not None and (chunk.games["error"] == "").all()
            for gid, actions in zip(chunk.actions["game_id"], chunk.actions["actions"]):
                logs[size][(kit, int(gid))] = list(actions)
    return logs


def _games_alike(logs: dict[int, dict[tuple[str, int], list[int]]], player: str) -> tuple[int, int]:
    games = [k for k in logs[10] if k[0] == player]
    return sum(logs[2][k] == logs[10][k] for k in games), len(games)


@needs_java
def test_what_a_constructor_draws_follows_the_games_seed_wherever_the_game_falls_in_its_process(chunked_runs):
    """CtorDrawPlayer's constructor makes a Random it keeps in a list and an anonymous subclass of
    Random, and draws a number, none of which the adapter's search of its fields can reseed: the same
    games with chunks of 2 and of 10.  (The first game of each process got the object made at the
    handshake, from a fixed seed: a game played first in its process differed.)"""
    assert _games_alike(chunked_runs, "CtorDrawPlayer") == (10, 10)


@needs_java
def test_a_hashset_of_cards_iterates_alike_wherever_the_game_falls_in_its_process(chunked_runs):
    """HashSetPlayer breaks discard ties by a HashSet<Card>'s order, which the kit cards' identity
    hashes decide: given out at the adapter's start, they are the same for every game (given as the
    player first hashed them, they depended on the games its process had played before)."""
    assert _games_alike(chunked_runs, "HashSetPlayer") == (10, 10)


@needs_java
def test_a_player_that_cannot_be_made_fails_to_load_in_one_line_naming_why(java):
    """The adapter makes one player object at the handshake (the kit makes one per game): an abstract
    class, or a constructor that raises, is a load error naming it, not a forfeit of every game."""
    for player, why in (
        ("AbstractPlayer", "players.AbstractPlayer is abstract: name a class that can be constructed"),
        ("CtorThrowPlayer", "the constructor of players.CtorThrowPlayer raised java.lang.IllegalStateException: "
                            "no table to load"),
        # a nested class written as Java source names it: the hint names the class file's name
        ("ForeignCardPlayer.SuitFourPlayer", "class players.ForeignCardPlayer.SuitFourPlayer not found on the "
                                             "class path; a nested class is named with a $: "
                                             "players.ForeignCardPlayer$SuitFourPlayer"),
    ):  # fmt: skip
        with pytest.raises(BotError) as err:
            kit_bot(java, player)
        assert str(err.value).endswith(why) and "\n" not in str(err.value)


@needs_java
def test_a_constructor_that_raises_in_a_later_game_forfeits_it_naming_its_exception(java):
    """The second game's player object raises in its constructor: the reason is that exception, not
    the reflection's InvocationTargetException around it."""
    kit = kit_bot(java, "SecondCtorThrowPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(2))
    close_bot(kit)
    assert len(rec.errors) == 1 and "game seed 1:" in rec.errors[0]
    assert rec.errors[0].endswith(
        "the constructor of players.SecondCtorThrowPlayer raised java.lang.IllegalStateException: made twice"
    )


@needs_java
@pytest.mark.parametrize(
    ("player", "why"),
    [("NullMeldPlayer", "getFinalMelds returned a null meld"),
     ("NullCardPlayer", "getFinalMelds returned a meld that holds a null card")],
)  # fmt: skip
def test_a_null_in_the_knocking_melds_forfeits_with_what_was_null(java, player, why):
    kit = kit_bot(java, player)
    rec = play_batch(kit, load_bot("simple"), R, np.arange(3))
    close_bot(kit)
    assert rec.errors and all(e.endswith(f"bot error: melds(): {why}") for e in rec.errors), rec.errors


@needs_java
@pytest.mark.parametrize(
    ("player", "why"),
    [("ForeignCardPlayer", "discard(): getDiscard returned a Card that is not one of the kit's 52 (rank 13, suit 0,"
                           " out of range: made with new Card? return the kit's own, Card.getCard(rank, suit))"),
     ("ForeignCardPlayer$SuitFourPlayer", "discard(): getDiscard returned a Card that is not one of the kit's 52"
                                          " (rank 0, suit 4, out of range: made with new Card?"),
     ("ForeignCardPlayer$CopyCardPlayer", "discard(): getDiscard returned a Card that is not one of the kit's 52"
                                          " (rank "),
     ("ForeignCardPlayer$MeldCopyPlayer", "melds(): getFinalMelds returned a meld holding a Card that is not one of"
                                          " the kit's 52 (rank ")],
)  # fmt: skip
def test_a_card_that_is_not_one_of_the_kits_52_forfeits_naming_it(java, player, why):
    """The kit compares cards by identity: a Card the player made itself is none of the hand's, even
    with a real card's rank and suit (the adapter read rank 13 of clubs as the ace of hearts, and suit 4
    raised an index error reported as the player's)."""
    kit = kit_bot(java, player)
    rec = play_batch(kit, load_bot("simple"), R, np.arange(3))
    close_bot(kit)
    assert len(rec.errors) == 3 and all(f"bot error: {why}" in e for e in rec.errors), rec.errors
    if "Copy" in player:  # a copy of a real card names the card it copies
        assert all(", like " in e and e.endswith("made with new Card? return the kit's own, Card.getCard(rank, suit))")
                   for e in rec.errors)  # fmt: skip


@needs_java
def test_a_player_that_raises_after_the_games_last_hand_leaves_the_reason_in_its_log(java):
    """A fault at a hand's end forfeits the game at its next decision; after the game's last hand
    there is none (the game is scored), so the bot's log is where it shows, not nowhere."""
    kit = kit_bot(java, "EndThrowPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(2))
    close_bot(kit)  # the last hand_over has no answer: bye, and the process's exit, come after it
    log = drain_log(kit)
    assert rec.errors == []
    said = "[eaai adapter] the player raised java.lang.IllegalStateException: scores past the target"
    said += " in reportScores at the end of the last hand"
    assert log.count(said) == 2, log[-2000:]


@needs_java
def test_a_forfeit_says_what_the_player_did_and_in_which_of_its_methods(java):
    """A raise in reportScores forfeits the game at its next decision: the line said the bot "raised an
    exception in take_upcard()", with no word of reportScores; and a null meld "raised an exception in
    knock()".  The bot resigned (the adapter answered with the reason), in the method it names."""
    kit = kit_bot(java, "ScoresThrowPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(2))
    close_bot(kit)
    assert len(rec.errors) == 2, rec.errors
    for e in rec.errors:
        assert re.match(r"bot 'ScoresThrowPlayer' \(seat 0\) resigned in (take_upcard|draw)\(\), game seed \d", e), e
        said = "the player raised java.lang.IllegalStateException: no scores wanted in reportScores"
        assert "ExternalBotError: bot error: " in e and e.endswith(f"{said} at the end of the last hand"), e
    kit = kit_bot(java, "NullMeldPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(1))
    close_bot(kit)
    assert rec.errors and rec.errors[0].startswith("bot 'NullMeldPlayer' (seat 0) resigned in knock(), game seed 0:")


@needs_java
def test_a_player_whose_threads_outlive_the_games_exits_when_told_bye(java):
    """A thread pool never shut down keeps a JVM alive after main returns: the adapter ends the JVM
    at bye, so the arena need not wait out its grace and kill it at every process's end."""
    from arena.external.client import external_of

    kit = kit_bot(java, "PoolPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(1))
    proc = external_of(kit).seats[0].proc
    proc.close(grace=10.0)
    log = drain_log(kit)
    close_bot(kit)
    assert rec.errors == []
    assert f"pid {proc.pid} exited" in log and "did not exit after bye" not in log, log[-1000:]


@needs_java
def test_raising_memory_mb_gives_a_kit_player_the_heap_it_needs(java):
    """The docs say to raise memory_mb for a player that needs more than the JVM's 256 MiB heap: the
    heap grows with it (here a 300 MiB table under 4096 MiB), and stays 256 MiB at the default limit."""
    from arena.external.eaai import eaai_command

    ref = BotRef.parse(f"eaai:{java}:players.BigTablePlayer")
    assert "-Xmx256m" in eaai_command(ref, Limits())[0]
    kit = kit_bot(java, "BigTablePlayer", memory_mb=4096)
    rec = play_batch(kit, load_bot("simple"), R, np.arange(1))
    close_bot(kit)
    assert rec.errors == []


@needs_java
def test_an_adapter_out_of_step_with_the_table_resigns_with_the_reason(java):
    """A table that could not have followed the last one (two opponent discards, nothing on the pile)."""
    from arena.engine.step import build_view
    from arena.external.client import external_of
    from arena.external.protocol import encode_decide

    kit = kit_bot(java, "KitSimplePlayer")
    proc = external_of(kit).seats[0].proc
    st, r, _ = new_game(EAAI, seed=3)
    begin_hand(st, r, 3, np.zeros(4, dtype=np.uint64))
    seat = int(st[lay.S_CUR])
    view = np.zeros(lay.V_SIZE, dtype=np.int64)
    build_view(st, r, np.int64(seat), view)
    first = proc.request(encode_decide(view.tolist(), 1, 5, True, "{}"), 5.0, "take_upcard()")
    assert first in (b"0", b"1")
    bad = view.copy()
    bad[lay.V_DECISION] = lay.PH_DRAW
    others = [c for c in range(52) if not (int(view[lay.V_HAND]) >> c) & 1 and c != view[lay.V_UPCARD]]
    bad[lay.V_OPP_DISCARDED] = (1 << others[0]) | (1 << others[1])
    answer = json.loads(proc.request(encode_decide(bad.tolist(), 1, 5, False), 5.0, "draw()"))
    assert answer["error"] == (
        "eaai adapter out of step with the table: the opponent's takes or discards differ from the table's"
    )
    close_bot(kit)


RETAKER = textwrap.dedent(
    """
    from arena.engine.layout import V_HAND, V_JUST_TAKEN
    PLAIN = True
    PARAMS = {}
    MEMORY = 1

    def take_upcard(view, params, memory, rng):
        return 1

    def draw(view, params, memory, rng):
        return 1

    def big_gin(view, params, memory, rng):
        return 0

    def discard(view, params, memory, rng):
        if view[V_JUST_TAKEN] >= 0:
            return int(view[V_JUST_TAKEN])
        return max(c for c in range(52) if int(view[V_HAND]) >> c & 1)

    def knock(view, params, memory, rng):
        return 0
    """
)


@needs_java
def test_an_opponent_that_throws_back_the_card_it_took_is_followed_not_out_of_step(java, tmp_path):
    """Where the rules let a player discard the card it just took (no_retake = false), an opponent
    that takes the top of the pile and throws it straight back leaves the pile and the stock as they
    were: only the turn count and what it took and discarded show the turn.  The adapter reports it
    (reportDraw, reportDiscard) instead of resigning the kit player's game as out of step."""
    (tmp_path / "retaker.py").write_text(RETAKER)
    rules = rules_array(load_rules("eaai", {"no_retake": False, "turn_cap": 30}))
    kit = kit_bot(java, "KitSimplePlayer")
    retaker = load(BotRef.parse(str(tmp_path / "retaker.py")))
    a = play_batch(kit, retaker, rules, np.arange(2))
    b = play_batch(retaker, kit, rules, np.arange(2))
    close_bot(kit)
    assert a.errors == [] and b.errors == []


# --- the end of a hand and the knocker's melds, for any external program -------------------------------

PROGRAM = textwrap.dedent(
    """
    import itertools, json, sys
    mode = sys.argv[1]
    values = [min(c % 13 + 1, 10) for c in range(52)]

    def melds_of(hand):
        held, out = set(hand), []
        for rank in range(13):
            same = [c for c in sorted(hand) if c % 13 == rank]
            out += [list(x) for k in (3, 4) for x in itertools.combinations(same, k) if len(same) >= k]
        for c in hand:
            run = [c]
            while run[-1] % 13 < 12 and run[-1] + 1 in held:
                run = run + [run[-1] + 1]
                if len(run) >= 3:
                    out.append(run)
        return out

    def arrangements(melds, used=frozenset(), start=0):
        yield []
        for i in range(start, len(melds)):
            if used.isdisjoint(melds[i]):
                for rest in arrangements(melds, used | set(melds[i]), i + 1):
                    yield [melds[i]] + rest

    def fewest_points_shown(hand, limit):
        # the arrangement with the most deadwood within the limit: fewer melds shown, fewer layoffs offered
        def dead(a):
            return sum(values[c] for c in hand if not any(c in m for m in a))
        legal = [a for a in arrangements(melds_of(hand)) if dead(a) <= limit]
        return max(legal, key=lambda a: (dead(a), -len(a)))
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            hello = {"name": "declarer", "protocol": 1}
            if mode != "plain":
                hello.update({"hand_over": True, "melds": True})
            print(json.dumps(hello), flush=True)
        elif kind == "hand_over":
            print("HAND_OVER " + line.strip(), file=sys.stderr, flush=True)
        elif kind == "bye":
            break
        elif msg["decision"] == "melds":
            hand = msg["hand"]
            if mode == "fewer":
                print(json.dumps({"melds": fewest_points_shown(hand, msg["knock_limit"])}), flush=True)
            else:
                print(json.dumps({"melds": [hand[:3]]} if mode == "illegal" else None), flush=True)
        elif msg["decision"] == "discard":
            ok = [c for c in msg["hand"] if c != msg["just_taken"]]
            print(max(ok, key=lambda c: (values[c], c)), flush=True)
        else:
            print(1 if msg["decision"] == "knock" else 0, flush=True)
    """
)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("declarer") / "declarer.py"
    path.write_text(PROGRAM)
    path.parent.chmod(0o755)
    path.chmod(0o644)
    return path


@pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")
def test_hand_over_tells_what_the_table_shows_and_declining_to_declare_changes_nothing(program):
    """A program that asks for hand_over lines and answers melds() with null plays exactly the games
    of the same program that asks for nothing (the golden path); each hand_over line holds the
    hand's outcome, both final hands, the knocker's melds within its hand, and the booked scores."""
    simple = load_bot("simple")
    games = {}
    for mode in ("plain", "auto"):
        bot = external_bot(None, [sys.executable, str(program), mode])
        games[mode] = play_batch(bot, simple, R, np.arange(8), record_hands=True, record_log=True)
        log = _log_until(bot, "HAND_OVER", 0 if mode == "plain" else len(games[mode].hands))
        close_bot(bot)
        lines = [json.loads(x.split(" ", 1)[1]) for x in log.splitlines() if x.startswith("HAND_OVER")]
        assert len(lines) == (0 if mode == "plain" else len(games[mode].hands))
    assert np.array_equal(games["plain"].games, games["auto"].games)
    assert np.array_equal(games["plain"].hands, games["auto"].hands)
    for msg, row in zip(lines, games["auto"].hands):
        assert msg["outcome"] == lay.OUTCOME_NAMES[int(row[lay.H_OUTCOME])]
        assert msg["knocker"] == int(row[lay.H_KNOCKER])
        assert msg["scores"] == [int(row[lay.H_SCORE]), int(row[lay.H_SCORE + 1])]
        assert sorted(msg["hand"]) == sorted(msg["hands"][msg["seat"]])
        if msg["knocker"] >= 0:
            held = set(msg["hands"][msg["knocker"]])
            assert all(set(m) <= held for m in msg["knocker_melds"])
            assert sum(len(x["meld"]) > 0 for x in msg["layoffs"]) == bin(int(row[lay.H_LAID_OFF])).count("1")


@pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")
def test_two_programs_of_one_name_are_told_apart_by_the_variant_the_error_shows(program):
    """A program (cmd:, eaai:) names itself in its handshake, which a config cannot change: the error
    shows the [variants] entry that names one, and that entry, pasted into the config, loads."""
    import tomllib

    from arena.loading.load import load_bots
    from arena.settings.config import ConfigError, config_from_dict

    plain, auto = (f"cmd:{sys.executable} {program} {mode}" for mode in ("plain", "auto"))
    with pytest.raises(ConfigError) as err:
        load_bots(config_from_dict({"bots": [plain, auto]}))
    entry = f"declarer-2 = {{ bot = {json.dumps(plain)} }}"
    assert str(err.value) == (
        f"config: two bots are named 'declarer'; name one with a variant, e.g. [variants] {entry}, "
        "and list 'declarer-2' in bots instead"
    )
    bots = load_bots(
        config_from_dict(tomllib.loads(f"bots = ['declarer-2', {json.dumps(auto)}]\n[variants]\n{entry}\n"))
    )
    assert sorted(b.name for b in bots.values()) == ["declarer", "declarer-2"]
    for b in bots.values():
        close_bot(b)


@pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")
def test_games_with_declared_melds_replay_exactly_from_their_log_and_their_stored_answers(program):
    """The knocker's declared melds are logged after its knock, so a replay scores the hand as it was
    scored.  The log held the decisions alone: a replay scored the automatic arrangement, and ``arena
    replay``, the viewer, ``analyze`` and ``luck`` read other scores (and so other games) than were played."""
    from arena.analysis.luck import game_luck
    from arena.engine.replay import compare, log_from_actions, replay_game

    bot = external_bot(None, [sys.executable, str(program), "fewer"])
    rec = play_batch(bot, load_bot("simple"), R, np.arange(16), record_hands=True, record_log=True)
    close_bot(bot)
    assert not rec.errors, rec.errors[:3]
    declared = 0
    for g, seed in enumerate(rec.seeds):
        hands = rec.hands[rec.hands[:, lay.H_GAME] == g]
        start = int(hands[0, lay.H_LOG_START])
        log = rec.log[start : int(hands[-1, lay.H_LOG_START] + hands[-1, lay.H_LOG_LEN])]
        declared += int(np.sum(log % lay.LOG_KIND == lay.DECLARED_SETS))
        rows = replay_game(int(seed), R, log)
        slots = {"knocker": lay.H_KNOCKER, "deadwood0": lay.H_DEADWOOD, "deadwood1": lay.H_DEADWOOD + 1}
        slots |= {"points0": lay.H_POINTS, "points1": lay.H_POINTS + 1, "score0": lay.H_SCORE}
        slots |= {"score1": lay.H_SCORE + 1, "upcard": lay.H_UPCARD, "turns": lay.H_TURNS}
        stored = [
            {"outcome": lay.OUTCOME_NAMES[int(h[lay.H_OUTCOME])], **{c: int(h[k]) for c, k in slots.items()}}
            for h in hands
        ]
        row = rec.games[g]
        game = {"score0": row[lay.G_SCORE], "score1": row[lay.G_SCORE + 1], "hands": len(hands), "forfeit_seat": -1}
        assert compare(rows, game, stored) == [], g
        assert np.array_equal(rows[:, lay.H_LAID_OFF], hands[:, lay.H_LAID_OFF])
        assert np.array_equal(rows[:, lay.H_LOG_LEN], hands[:, lay.H_LOG_LEN])
        answers = log % lay.LOG_KIND  # as the run store keeps them
        assert np.array_equal(log_from_actions(int(seed), R, answers), log)
        _, points = game_luck(int(seed), R, answers)
        assert np.array_equal(points, hands[:, [lay.H_POINTS, lay.H_POINTS + 1]])
    assert declared >= 3  # the program shows fewer melds than it could in some knocks: they were logged


@pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")
def test_an_illegal_declaration_forfeits_the_game_with_the_reason(program):
    bot = external_bot(None, [sys.executable, str(program), "illegal"])
    rec = play_batch(bot, load_bot("simple"), R, np.arange(4))
    close_bot(bot)
    knocked = [e for e in rec.errors if "knock()" in e]
    assert knocked and all("illegal melds: melds(): " in e for e in knocked)
    assert (rec.games[:, lay.G_FORFEIT] == 0).sum() == len(knocked)


def test_the_handshake_flags_and_the_melds_answer_are_checked():
    hello = parse_hello(b'{"name":"x","protocol":1}')
    assert hello["hand_over"] is False and hello["melds"] is False
    assert parse_hello(b'{"name":"x","protocol":1,"hand_over":true}')["hand_over"] is True
    with pytest.raises(ProtocolError, match="bad handshake: melds must be true or false"):
        parse_hello(b'{"name":"x","protocol":1,"melds":"yes"}')
    assert parse_melds(b"null") is None and parse_melds(b"-1") is None and parse_melds(b'{"melds":null}') is None
    assert parse_melds(b'{"melds":[[0,1,2]]}') == [[0, 1, 2]] and parse_melds(b"[[13,26,39]]") == [[13, 26, 39]]
    for bad in (b"[[1.0,2,3]]", b'"x"', b"[[true,1,2]]", b'{"meld":[]}', b"[1,2,3]"):
        with pytest.raises(ProtocolError, match="ill-typed answer"):
            parse_melds(bad)


# --- the engine's side of a declaration -------------------------------------------------------------


def _knock_states(n: int):
    """States at a knock decision from seeded hands played by least-deadwood discards."""

    def discard(st):
        hand = int(st[lay.S_HAND + int(st[lay.S_CUR])])
        return min((c for c in range(52) if (hand >> c) & 1), key=lambda c: (deadwood(hand & ~(1 << c)), c))

    out = []
    seed = 0
    while len(out) < n:
        seed += 1
        st, r, _ = new_game(EAAI, seed)
        begin_hand(st, r, seed, np.zeros(4, dtype=np.uint64))
        states = []

        def knock(s, states=states):
            states.append(s.copy())
            return "knock"

        play_out(
            st, r, upcard=lambda s: "pass", draw=lambda s: "stock", discard=discard, knock=knock, big_gin=lambda s: 0
        )
        out += states
    return out, r


def test_declaring_the_automatic_melds_scores_exactly_the_automatic_showdown():
    states, r = _knock_states(60)
    changed = 0
    for before in states:
        auto = before.copy()
        assert apply_action(auto, r, 1) == 0
        again = auto.copy()
        declared_showdown(again, r, int(auto[lay.S_KNOCK_SETS]), int(auto[lay.S_KNOCK_RUNS]))
        assert np.array_equal(again, auto)
        # Fewer melds (the last one left out) while within the limit: scored as declared.
        k = int(auto[lay.S_CUR])
        hand = int(auto[lay.S_HAND + k])
        melds = [m for m in table_shows(auto)["knocker_melds"]]
        fewer = melds[:-1]
        try:
            sets, runs = check_declaration(hand, fewer, int(auto[lay.S_KNOCK_LIMIT]))
        except ArrangementError as exc:
            assert "above this hand's knock limit" in str(exc)
            continue
        other = auto.copy()
        declared_showdown(other, r, sets, runs)
        assert other[lay.S_DEADWOOD + k] == deadwood(hand) + sum(min(c % 13 + 1, 10) for c in melds[-1])
        assert other[lay.S_KNOCK_SETS] | other[lay.S_KNOCK_RUNS] == sets | runs
        changed += 1
    assert len(states) >= 60 and changed > 0


def test_an_illegal_declaration_is_refused_with_the_reason_and_leaves_the_state_alone():
    states, r = _knock_states(1)
    auto = states[0].copy()
    apply_action(auto, r, 1)
    hand = int(auto[lay.S_HAND + int(auto[lay.S_CUR])])
    outside = next(c for c in range(52) if not (hand >> c) & 1)
    held = [c for c in range(52) if (hand >> c) & 1]
    for melds, why in (
        ([[outside, held[0], held[1]]], "is not in the hand"),
        ([held[:2]], "a meld needs at least 3"),
        ([], "above this hand's knock limit"),
    ):
        with pytest.raises(ArrangementError, match=why):
            check_declaration(hand, melds, int(auto[lay.S_KNOCK_LIMIT]))
    before = auto.copy()
    with pytest.raises(ArrangementError):
        declared_showdown(auto, r, 0, 0)
    assert np.array_equal(auto, before)


def test_layoffs_are_told_one_by_one_with_chains_in_order():
    # 5c 6c 7c and three 9s; the defender lays off 4c, 3c (a chain) and 9s.
    c = lambda r, s: 13 * s + r  # noqa: E731
    run = (1 << c(4, 0)) | (1 << c(5, 0)) | (1 << c(6, 0))
    nines = (1 << c(8, 0)) | (1 << c(8, 1)) | (1 << c(8, 2))
    laid = (1 << c(3, 0)) | (1 << c(2, 0)) | (1 << c(8, 3))
    steps = layoff_steps([nines, run], laid)
    assert steps == [(c(8, 3), nines), (c(3, 0), run), (c(2, 0), run | (1 << c(3, 0)))]


# --- the wall: a Java bot reads the files beside it ---------------------------------------------------


def test_the_allow_list_gives_socketpair_for_af_unix_only():
    prog = build_filter(Limits(), 2)
    allow = 0x7FFF0000
    assert filter_allows(prog, 53, (1, 1, 0)) == allow  # socketpair(AF_UNIX, SOCK_STREAM, 0)
    for family in (2, 10, 16, 17):  # AF_INET, AF_INET6, AF_NETLINK, AF_PACKET
        assert filter_allows(prog, 53, (family, 1, 0)) != allow
    assert filter_allows(prog, 41, (1, 1, 0)) != allow  # socket() stays refused
    assert filter_allows(prog, 42, (3, 0, 0)) != allow and filter_allows(prog, 49, (3, 0, 0)) != allow


@needs_java
def test_a_java_player_loads_its_table_from_the_file_beside_it_inside_the_wall(java):
    """Files.readAllLines and Scanner(File) while its class loads (the JVM's file channel needs socketpair)."""
    kit = kit_bot(java, "FileTablePlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(4))
    log = drain_log(kit)
    close_bot(kit)
    assert rec.errors == [] and "loaded table: 2 lines, sum 15" in log


@needs_java
def test_a_player_finds_its_files_from_the_class_paths_root(java):
    """The player's folder is first on the class path, as in a kit project: getResource("/") (the
    root the kit's file helper reads from) is the player's folder, not the adapter's."""
    kit = kit_bot(java, "ResourceRootPlayer")
    rec = play_batch(kit, load_bot("simple"), R, np.arange(2))
    log = drain_log(kit)
    close_bot(kit)
    assert rec.errors == [] and "resource root table: 2 lines" in log


def test_a_player_file_that_is_not_a_jar_is_named_as_such_not_as_a_missing_class(tmp_path):
    """A source file, a class file or a damaged download given as the jar: Java would skip it on the
    class path and report the class as not found, which sends the user looking for a typo in the name."""
    for name, data in (("player.jar", b"not a zip"), ("MyPlayer.class", b"\xca\xfe\xba\xbe")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(BotError) as err:
            load(BotRef.parse(f"eaai:{tmp_path / name}:MyPlayer"))
        assert str(err.value).endswith(
            f"{tmp_path / name} is not a jar (a zip file): give the player's jar or class folder"
        ), err.value
        assert "\n" not in str(err.value)


def test_a_bot_cache_that_cannot_be_written_fails_the_load_in_one_line(tmp_path, monkeypatch):
    """The adapter is compiled into the bot cache: a cache under a file (or a read-only home) is a
    one-line BotError naming the cache, not a traceback out of every command that loads the player."""
    kit = tmp_path / "kit" / "ginrummy"
    kit.mkdir(parents=True)
    for name in ("GinRummyPlayer.class", "Card.class"):
        (kit / name).write_bytes(b"")
    (tmp_path / "player").mkdir()
    (tmp_path / "cache").write_text("a file, not a folder")
    monkeypatch.setenv(KIT_ENV, str(kit.parent))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(BotError) as err:
        load(BotRef.parse(f"eaai:{tmp_path / 'player'}:MyPlayer"))
    assert str(err.value) == (
        f"the EAAI adapter cannot be compiled into the bot cache {tmp_path / 'cache' / 'gin-arena' / 'bots'}: "
        "Not a directory"
    )


def test_a_path_holding_the_class_path_separator_is_refused_naming_it(tmp_path, monkeypatch):
    """Java would split it in two and look for the class in neither half ("not found")."""
    player = tmp_path / "my:player"
    player.mkdir()
    with pytest.raises(BotError) as err:
        load(BotRef.parse(f"eaai:{player}:P"))
    assert str(err.value).endswith(
        f"{player} contains ':', so it cannot be used on a Java class path: move or rename it"
    )
    kit = tmp_path / "the:kit"
    kit.mkdir()
    monkeypatch.setenv(KIT_ENV, str(kit))
    with pytest.raises(BotError, match=r"^the EAAI kit .*the:kit contains ':', so it cannot be used on a Java class"):
        kit_path()


# --- in-process bots: the last hand's end in the view -----------------------------------------------


def _expected_shown(shown: dict, seat: int) -> dict[int, int]:
    """The V_SHOWN* slots of ``seat`` for what table_shows said, written out slot by slot."""

    def mask(cards) -> int:
        return sum(1 << c for c in cards)

    def split(melds) -> tuple[int, int]:
        sets = mask(c for m in melds if len({x % 13 for x in m}) == 1 for c in m)
        return sets, mask(c for m in melds for c in m) & ~sets

    ks, kr = split(shown["knocker_melds"])
    ds, dr = split(shown["defender_melds"])
    o = 1 - seat
    return {
        lay.V_SHOWN: shown["hand_no"] + 1,
        lay.V_SHOWN_OUTCOME: lay.OUTCOME_NAMES.index(shown["outcome"]),
        lay.V_SHOWN_KNOCKER: shown["knocker"],
        lay.V_SHOWN_MY_HAND: mask(shown["hands"][seat]),
        lay.V_SHOWN_OPP_HAND: mask(shown["hands"][o]),
        lay.V_SHOWN_KNOCK_SETS: ks,
        lay.V_SHOWN_KNOCK_RUNS: kr,
        lay.V_SHOWN_LAID_OFF: mask(x["card"] for x in shown["layoffs"]),
        lay.V_SHOWN_DEF_SETS: ds,
        lay.V_SHOWN_DEF_RUNS: dr,
        lay.V_SHOWN_MY_POINTS: shown["points"][seat],
        lay.V_SHOWN_OPP_POINTS: shown["points"][o],
        lay.V_SHOWN_MY_DEADWOOD: shown["deadwood"][seat],
        lay.V_SHOWN_OPP_DEADWOOD: shown["deadwood"][o],
    }


def test_each_view_shows_the_last_hands_end_and_nothing_of_the_hand_in_play():
    """Games played step by step: at every decision of hand h, the V_SHOWN slots of each seat hold
    what table_shows said when hand h-1 ended (both final hands, melds, layoffs, points), seat-
    relative, and all zero before the first hand ends; and a decide line carries them whole."""
    from arena.engine.step import begin_game, build_view, end_hand
    from arena.external.protocol import decode_decide, encode_decide

    simple = load_bot("simple")
    slots = [getattr(lay, n) for n in dir(lay) if n.startswith("V_SHOWN")]
    checked = shown_hands = 0
    for seed in range(12):
        st, r, row = new_game(EAAI, seed)
        mem = [np.zeros(simple.memory_size) for _ in range(2)]
        rng = [np.zeros(4, dtype=np.uint64) for _ in range(2)]
        begin_game(st, r, seed, rng[0], rng[1], mem[0], mem[1], row)
        expected = [dict.fromkeys(slots, 0) for _ in range(2)]
        view = np.zeros(lay.V_SIZE, dtype=np.int64)
        while True:
            begin_hand(st, r, seed, np.zeros(4, dtype=np.uint64))
            while st[lay.S_PHASE] != lay.PH_DONE:
                p = int(st[lay.S_CUR])
                for seat in (0, 1):
                    build_view(st, r, np.int64(seat), view)
                    assert {k: int(view[k]) for k in slots} == expected[seat]
                    back = decode_decide(json.loads(encode_decide(view.tolist(), 1, 1, False)))
                    assert back[lay.V_SHOWN : lay.V_SIZE].tolist() == view[lay.V_SHOWN : lay.V_SIZE].tolist()
                    checked += 1
                build_view(st, r, np.int64(p), view)
                answer = simple.functions[int(st[lay.S_PHASE])](view, simple.params, mem[p], rng[p])
                assert apply_action(st, r, answer) == 0
            shown = table_shows(st)
            expected = [_expected_shown(shown, seat) for seat in (0, 1)]
            shown_hands += shown["knocker"] >= 0
            if end_hand(st, r, row):
                break
    assert checked > 2000 and shown_hands > 20


# --- the league: a jar or a zip of a class folder ------------------------------------------------------


def _zip(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            z.writestr(info, "/etc/passwd")
    return buf.getvalue()


def test_a_league_upload_is_checked_like_any_other_before_it_is_unpacked(tmp_path):
    from arena.league.db import LeagueError
    from arena.league.eaai_upload import store_eaai_upload

    good = {"players/P.class": b"\xca\xfe\xba\xbe"}
    for data, why in (
        (b"not a zip", "not a jar or a zip"),
        (_zip({"../evil.class": b"x", **good}), "not a plain relative path"),
        (_zip({"/abs/P.class": b"x", **good}), "not a plain relative path"),
        (_zip(good, links=("players/link",)), "is a link"),
        (_zip({"players/Q.class": b"x"}), "holds no players/P.class"),
        (_zip({**good, "big.bin": bytes(200_000)}), "unpacks to more than"),
        (bytes(3000), "the limit is 2000"),
    ):
        with pytest.raises(LeagueError, match=why):
            store_eaai_upload(tmp_path, data, "players.P", 2000)
    assert not (tmp_path / "bots").exists() or not any((tmp_path / "bots").rglob("*.class"))
    spec, _ = store_eaai_upload(
        tmp_path, _zip({"bin/players/P.class": b"\xca\xfe", "bin/table.txt": b"1"}), "players.P", 2000
    )
    ref = BotRef.parse(spec)
    folder = Path(ref.player[0])
    assert (
        ref.player[1] == "players.P" and (folder / "players" / "P.class").is_file() and (folder / "table.txt").is_file()
    )


@needs_java
def test_an_uploaded_jar_unpacks_to_a_player_that_passes_check_bot(java, tmp_path):
    from arena.league.eaai_upload import store_eaai_upload
    from arena.loading.check import check_bot

    jar = _zip({str(p.relative_to(java)): p.read_bytes() for p in java.rglob("*.class")})
    tmp_path.chmod(0o755)
    spec, _ = store_eaai_upload(tmp_path, jar, "players.KitSimplePlayer", 200_000)
    report = check_bot(spec, games=2, echo=None)
    assert report.passed, report.lines
    assert [x[0] for x in report.lines if x[1] == "replay"] == ["PASS"], report.lines  # played again the same
    if shutil.which("strace"):  # the Java VM's own start-up write is not laid at the player's door
        assert [x[0] for x in report.lines if x[1] == "syscalls"] == ["PASS"], report.lines


@needs_java
def test_a_kit_player_under_too_small_a_memory_mb_is_refused_in_one_line_naming_it(java):
    """Under 1024 MiB the adapter's VM failed its handshake as a garbled answer that did not name the limit."""
    with pytest.raises(BotError, match=r"memory_mb = 1024 is too small .* at least 1280"):
        kit_bot(java, "KitSimplePlayer", memory_mb=1024)
    kit = kit_bot(java, "KitSimplePlayer", memory_mb=1280)
    rec = play_batch(kit, load_bot("simple"), R, np.arange(1))
    close_bot(kit)
    assert rec.errors == []
