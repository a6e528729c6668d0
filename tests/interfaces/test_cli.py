"""The arena command, driven through typer's CliRunner: exit codes and output."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from arena.cli.main import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def stored_games(run_dir: Path) -> pd.DataFrame:
    """The games of a run folder, read through its one owner, the store."""
    from arena.run.store import RunStore

    return RunStore(run_dir).games()


def snapshot(run_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    p = tmp_path / "c.toml"
    p.write_text(
        textwrap.dedent(f'''
        name = "cli"
        bots = ["random", "simple"]
        games_per_pair = 40
        chunk_size = 20
        seed = 5
        workers = 1
        results_dir = "{tmp_path / "results"}"
    ''')
    )
    return p


def _squeeze(text: str) -> str:
    """Text without whitespace: help is wrapped (even inside hyphenated words) to the terminal."""
    return "".join(text.split())


def _commands():
    import typer

    return typer.main.get_command(app).commands


def test_help_of_every_command_reads_well():
    # Checked against the commands as registered, so a new command or option is
    # held to the same standard: a summary, and a help text for every parameter
    # that the help output really shows.
    top = invoke("--help")
    assert top.exit_code == 0
    assert "Gin Arena" in top.output and "--version" in top.output
    commands = _commands()
    assert {"run", "submit", "bots", "rules", "replay", "report", "plot"} <= set(commands)
    for name, cmd in commands.items():
        assert cmd.help and cmd.help.strip(), f"arena {name} has no docstring"
        summary = cmd.help.strip().split("\n")[0]
        # The command list shows each command with the start of its summary.
        assert any(
            line.split()[:1] == [name] and _squeeze(summary)[:20] in _squeeze(line) for line in top.output.splitlines()
        ), name
        sub = invoke(name, "--help")
        assert sub.exit_code == 0, name
        out = _squeeze(sub.output)
        assert _squeeze(f"Usage: root {name}") in out or _squeeze(f"Usage: arena {name}") in out
        assert _squeeze(cmd.help) in out, f"arena {name} --help does not show its docstring"
        for param in cmd.params:
            assert param.help, f"arena {name}: {param.name} has no help text"
            assert _squeeze(param.help) in out, f"arena {name} --help does not show {param.name}'s help"
            for opt in getattr(param, "opts", []) if param.param_type_name == "option" else []:
                assert opt in sub.output, f"arena {name} --help does not show {opt}"


def test_plot_help_lists_every_plot_kind():
    from arena.analysis.plots import KINDS

    out = invoke("plot", "--help")
    assert all(kind in out.output for kind in KINDS), out.output


def test_version():
    import arena

    out = invoke("--version")
    assert out.exit_code == 0
    assert out.output.startswith(f"gin-arena {arena.__version__} (python ")
    assert len(out.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["run", "c.toml", "--games", "abc"], "error: Invalid value for '--games': "),
        (["run", "c.toml", "--nosuch"], "error: No such option: --nosuch (see 'root run --help')"),
        (["nosuchcmd"], "error: No such command 'nosuchcmd'. (see 'root --help')"),
        (["league", "serve", ".", "--port", "x"], "error: Invalid value for '--port': "),
        (["run", "--games"], "error: Option '--games' requires an argument."),
    ],
    ids=["bad value", "unknown option", "unknown command", "a league command's bad value", "no value"],
)
def test_a_usage_error_is_one_error_line_and_exit_2(args, line):
    """Every error of the commands is one ``error:`` line (docs/reference/exit-codes.md); click's own usage
    errors were four lines: the usage, a hint, a blank line and ``Error: ...``."""
    out = runner.invoke(app, args)
    lines = [x for x in out.output.splitlines() if x.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and lines[0].startswith(line), out.output
    assert "Usage:" in runner.invoke(app, ["league"]).output  # a group given nothing still shows its help


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ("simple", "is a built-in bot"),
        ("policy:bots/learned.npz", "is a trained policy, played in the arena's process"),
        ("nope", "names no bot (nor a built-in one)"),
    ],
)
def test_check_bot_of_a_bot_that_has_no_process_of_its_own_says_what_it_is(spec, what):
    """check-bot called a trained policy "a built-in bot" (and 'nope' too).  It is bad input: one line, exit 2
    (it was a FAIL report, exit 1, with nothing on stderr)."""
    out = runner.invoke(app, ["check-bot", spec, "--games", "2"])
    assert out.exit_code == 2, out.output
    assert out.output.startswith(f"error: '{spec}' {what}; check-bot checks a bot in its own process")
    assert len(out.output.splitlines()) == 1 and "FAIL" not in out.output, out.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["sandbox:", "--games", "0"], "error: sandbox:: no file after 'sandbox:'"),
        (["eaai:nope.jar"], "error: eaai:nope.jar: write eaai:PLAYER.jar:CLASS or eaai:CLASS_FOLDER:CLASS"),
        (["sandbox:/no/such/bot.py"], "error: /no/such/bot.py: no such bot file"),
        (["cmd:/bin/true", "--decision-s", "inf"], "error: --decision-s inf is not allowed (allowed: 0.001..3600"),
        (["cmd:/bin/true", "--decision-s", "0"], "error: --decision-s 0 is not allowed (allowed: 0.001..3600"),
        (["cmd:/bin/true", "--memory-mb", "5"], "error: --memory-mb 5 is not allowed (allowed: 0 for none, or 16.."),
    ],
)
def test_check_bot_of_a_spec_or_option_that_names_nothing_to_check_is_one_line_exit_2(args, line):
    """A spec that cannot be parsed or found, or an option out of a config's range, was a FAIL report with
    exit 1 and nothing on stderr (and --decision-s inf was taken)."""
    out = runner.invoke(app, ["check-bot", *args])
    assert out.exit_code == 2, out.output
    assert out.output.startswith(line) and len(out.output.splitlines()) == 1, out.output


def test_an_unknown_plot_kind_is_one_error_line_listing_the_kinds(tmp_path):
    out = runner.invoke(app, ["plot", str(tmp_path), "--kind", "pie"])
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1, out.output
    assert lines[0].startswith("error: --kind pie is not a plot kind (kinds: heatmap, ")
    assert "Traceback" not in out.output


def test_run_prints_a_results_table_and_writes_the_run(config, tmp_path):
    out = invoke("run", str(config), "--quiet", "--no-report")
    assert out.exit_code == 0, out.output
    assert "random vs simple" in out.output and "win%" in out.output
    games = stored_games(tmp_path / "results" / "cli")
    assert len(games) == 40
    assert (tmp_path / "results" / "cli" / "manifest.json").exists()


def test_bad_input_is_one_line_and_exit_code_2(config, tmp_path):
    out = invoke("run", str(config), "--quiet", "--set", "knock_limit=12")
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "knock_limit = 12" in lines[0] and "0..10" in lines[0]
    assert invoke("run", str(config), "--quiet", "--bot", "nosuchbot").exit_code == 2
    assert invoke("run", str(tmp_path / "missing.toml")).exit_code == 2
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module\n")
    out = invoke("run", str(config), "--quiet", "--bot", str(broken))
    assert out.exit_code == 2 and "broken.py" in out.output and "No module named" in out.output
    notbot = tmp_path / "notbot.py"
    notbot.write_text("def discard(view, params, memory, rng):\n    return 0\n")
    out = invoke("run", str(config), "--quiet", "--bot", str(notbot))
    assert out.exit_code == 2 and "missing function(s) take_upcard, draw, big_gin, knock" in out.output


def test_rerun_with_other_rules_is_refused_without_touching_results(config, tmp_path):
    assert invoke("run", str(config), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "cli"
    before = snapshot(run_dir)
    assert any(p.suffix == ".parquet" for p in before)
    out = invoke("run", str(config), "--quiet", "--set", "knock_limit=5")
    assert out.exit_code == 2 and "different rules" in out.output
    assert snapshot(run_dir) == before


def test_fresh_with_resume_is_refused_and_keeps_the_run(config, tmp_path):
    """--resume asks to continue a run and --fresh to delete it: together they contradict, and --fresh
    won, deleting the games the user had just asked to keep."""
    assert invoke("run", str(config), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "cli"
    before = snapshot(run_dir)
    out = invoke("run", str(config), "--quiet", "--no-report", "--fresh", "--resume")
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "--fresh" in lines[0] and "--resume" in lines[0]
    assert snapshot(run_dir) == before


def test_secret_seed_with_seed_is_refused(config, tmp_path):
    """--seed 7 beside --secret-seed was dropped without a word: the run drew a secret seed."""
    out = invoke("run", str(config), "--quiet", "--no-report", "--secret-seed", "--seed", "7")
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "--secret-seed" in lines[0] and "--seed" in lines[0]
    assert not (tmp_path / "results" / "cli").exists()


def test_bots_lists_builtins_with_parameters():
    out = invoke("bots", "--config", str(ROOT / "configs" / "default.toml"))
    assert out.exit_code == 0
    for name in ("random", "simple", "early-knock", "gin-chasing", "discard-tracking", "marjj-style", "knock5"):
        assert name in out.output
    assert "knock_at=5" in out.output


def test_bots_lists_every_builtin_without_compiling_one(monkeypatch):
    """Loading a bot compiles it: listing the built-ins that way took 44 s on a fresh install (a cold numba
    cache), the search bots most of it.  The list is read from the modules; compiling now fails the test."""
    from arena.botkit import bot as botkit

    def no_compile(*args, **kwargs):
        raise AssertionError("arena bots compiled a bot")

    monkeypatch.setattr(botkit, "_compile_decision", no_compile)
    out = invoke("bots")
    assert out.exit_code == 0, out.output
    listed = [line.split()[0] for line in out.output.splitlines() if line and not line.startswith(" ")]
    assert listed == [key.replace("_", "-") for key in botkit.BUILTIN_BOTS]


def test_the_listing_of_a_builtin_is_what_loading_it_gives(monkeypatch):
    import arena.botkit.bot as botkit
    from arena.botkit.bot import BUILTIN_BOTS, builtin_summary, load_builtin

    # Loaded without compiling (each decision stays its Python function): what the listing shows is read
    # from the module, and compiling every built-in cost the suite a minute of CPU on a cold cache.  (A
    # decision numba refuses would load as plain; no listing can know that without compiling.)
    monkeypatch.setattr(botkit, "_compile_decision", lambda py, *args, **kwargs: py)
    for key in BUILTIN_BOTS:
        if key == "learned":  # data, whose bot has no named parameters
            continue
        b = load_builtin(key)
        assert builtin_summary(key) == (b.name, b.path, b.description, b.param_dict()), key
    name, how, description, params = builtin_summary("learned")
    assert (name, how, params) == ("learned", "fast (numba)", {}) and description.startswith("Learned: a neural")


def test_bots_lists_a_configs_variants_it_does_not_play_without_compiling_them(tmp_path, monkeypatch):
    # The shipped monte-carlo config plays monte-carlo; mc-fast and mc-strong are --gauntlet choices.
    # Listing them compiled the search bot (28 s on a fresh install) to print its settings.
    import arena.botkit.bot as botkit

    def compiled(*args, **kw):
        raise AssertionError("arena bots compiled a built-in's variant to list it")

    monkeypatch.setattr(botkit, "bot_from_module", compiled)
    out = invoke("bots", "--config", str(ROOT / "configs" / "monte-carlo.toml"))
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    for name, samples in (("mc-fast", "samples=100,"), ("mc-strong", "samples=4096,")):
        at = next(i for i, line in enumerate(lines) if line.startswith(name + " "))
        assert "variant of monte-carlo" in lines[at] and samples in lines[at + 1]
    assert "work=0," in lines[next(i for i, line in enumerate(lines) if line.startswith("mc-strong ")) + 1]
    # A setting the bot does not have is still refused, naming the variant.
    bad = tmp_path / "bad.toml"
    bad.write_text('bots = ["simple", "random"]\n[variants]\nmc = { bot = "monte-carlo", sampels = 10 }\n')
    out = invoke("bots", "--config", str(bad))
    assert out.exit_code == 2 and "mc" in out.output and "sampels" in out.output, out.output


def test_rules_prints_resolved_settings():
    out = invoke("rules", "eaai")
    assert out.exit_code == 0 and "big_gin" in out.output and "false" in out.output
    out = invoke("rules", "standard", "--set", "target=50")
    assert out.exit_code == 0 and "50" in out.output
    assert invoke("rules", "nosuchpreset").exit_code == 2


def test_rules_of_a_file_that_is_not_utf8_is_one_error_line(tmp_path):
    """``arena rules FILE`` peeks at the file's keys first; bytes that are not UTF-8 were a traceback there."""
    p = tmp_path / "r.toml"
    p.write_bytes(b"# r\xe8gles\nknock_limit = 5\n")
    out = invoke("rules", str(p))
    assert out.exit_code == 2, out.output
    assert [line for line in out.output.splitlines() if line.strip()] == [
        f"error: rules ({p}): {p} is not UTF-8 text (byte 0xe8 at offset 3); save it as UTF-8"
    ]


def test_replay_shows_hands_melds_and_scores(config, tmp_path):
    assert invoke("run", str(config), "--quiet", "--no-report").exit_code == 0
    out = invoke("replay", str(tmp_path / "results" / "cli"), "--game", "1", "--letters")
    assert out.exit_code == 0
    text = out.output
    assert "hand 1:" in text and "dealt" in text and "discards" in text and "-> scores" in text
    assert "lays out" in text
    assert invoke("replay", str(tmp_path / "results" / "cli"), "--game", "999").exit_code == 2


def test_submit_adds_a_bot_to_a_run(config, tmp_path):
    assert invoke("run", str(config), "--quiet", "--no-report").exit_code == 0
    bot = tmp_path / "mine.py"
    bot.write_text((ROOT / "bots" / "simple.py").read_text() + '\nNAME = "mine"\n')
    out = invoke("submit", str(bot), "--to", str(tmp_path / "results" / "cli"), "--quiet")
    assert out.exit_code == 0, out.output
    games = stored_games(tmp_path / "results" / "cli")
    assert set(games["matchup"]) == {"random vs simple", "random vs mine", "simple vs mine"}


def test_a_changed_bots_matchup_only_a_submit_played_leaves_the_tables_with_a_warning(config, tmp_path):
    """The config plays random, simple and mine; a submit adds theirs.  When mine.py changes, the next run
    played mine's matchups again but kept 'mine vs theirs' (which it does not play) from the old mine.py:
    the tables mixed the two versions under one name."""
    mine = tmp_path / "mine.py"
    source = (ROOT / "bots" / "simple.py").read_text() + "\nPLAIN = True\n"  # three versions: no compile each
    mine.write_text(source + '\nNAME = "mine"\n')
    (tmp_path / "theirs.py").write_text(source + '\nNAME = "theirs"\n')
    text = config.read_text().replace('bots = ["random", "simple"]', f'bots = ["random", "simple", "{mine}"]')
    config.write_text(text)
    run = tmp_path / "results" / "cli"
    assert invoke("run", str(config), "--quiet", "--no-report").exit_code == 0
    assert invoke("submit", str(tmp_path / "theirs.py"), "--to", str(run), "--quiet").exit_code == 0
    assert "mine vs theirs" in set(stored_games(run)["matchup"]) or "theirs vs mine" in set(
        stored_games(run)["matchup"]
    )
    mine.write_text(source + '\nNAME = "mine"\n# changed\n')
    out = invoke("run", str(config), "--no-report")
    assert out.exit_code == 0, out.output
    pairs = set(stored_games(run)["matchup"])
    assert pairs == {"random vs simple", "random vs mine", "simple vs mine", "random vs theirs", "simple vs theirs"}
    assert "of mine vs theirs changed since its 40 stored game(s), which this run does not play" in out.output
    # A submit of theirs again plays it with the new mine.
    assert invoke("submit", str(tmp_path / "theirs.py"), "--to", str(run), "--quiet").exit_code == 0
    assert len(set(stored_games(run)["matchup"])) == 6


def test_sprt_stops_a_decided_match_early_and_the_report_says_so(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(
        textwrap.dedent(f'''
        name = "sprt"
        bots = ["simple", "random"]  # the SPRT tests the first bot's advantage
        games_per_pair = 1000
        chunk_size = 40
        workers = 1
        results_dir = "{tmp_path / "results"}"
        [sprt]
        elo0 = 0
        elo1 = 50
    ''')
    )
    out = invoke("run", str(p), "--quiet", "--sprt")
    assert out.exit_code == 0, out.output
    assert "stopped early: H1 accepted" in out.output
    games = stored_games(tmp_path / "results" / "sprt")
    assert 0 < len(games) < 1000 and len(games) % 40 == 0
    report = (tmp_path / "results" / "sprt" / "report.md").read_text()
    assert "stopped early" in report and "H1 accepted" in report
    two = invoke("run", str(p), "--quiet", "--sprt", "--workers", "2", "--name", "sprt2", "--no-report")
    assert two.exit_code == 0, two.output
    games2 = stored_games(tmp_path / "results" / "sprt2")
    assert len(games2) == len(games)  # the stop is decided in chunk order: same on any number of workers
    # A submit plays only the new bot's pairs: the stopped match stays where the SPRT stopped it.
    sub = invoke("submit", "early-knock", "--to", str(tmp_path / "results" / "sprt2"), "--quiet")
    assert sub.exit_code == 0, sub.output
    after = stored_games(tmp_path / "results" / "sprt2")
    played = after.groupby("matchup").size().to_dict()
    assert played == {"simple vs random": len(games), "simple vs early-knock": 1000, "random vs early-knock": 1000}


def test_run_without_a_config_uses_the_shipped_default_from_any_folder(tmp_path, monkeypatch):
    from arena.cli.main import DEFAULT_CONFIG
    from arena.settings.config import load_config

    monkeypatch.chdir(tmp_path)  # no configs/ here
    cfg = load_config(DEFAULT_CONFIG)
    assert cfg.name == "default" and "simple" in cfg.bots and len(cfg.bots) >= 5


def test_log_records_still_arrive_after_the_worker_log_pipe_broke(capsys):
    """A worker killed mid-write ends multiprocessing-logging's receiving thread; later records
    must reach the plain handler, not print a "Logging error" traceback."""
    import io
    import logging

    from arena.cli.main import _forwarder

    out = io.StringIO()
    plain = logging.StreamHandler(out)
    fwd = _forwarder("test-forwarder", plain)
    logger = logging.getLogger("arena.test-forwarder")
    logger.addHandler(fwd)
    logger.propagate = False
    try:
        fwd.close()  # what a broken pipe does: the thread stops and the queue closes
        fwd._receive_thread.join(timeout=5)
        assert not fwd._receive_thread.is_alive()
        logger.warning("after the pipe broke")
    finally:
        logger.removeHandler(fwd)
    assert "after the pipe broke" in out.getvalue()
    assert "Logging error" not in capsys.readouterr().err


def test_the_results_table_says_why_games_were_forfeited_and_keeps_long_names_in_line(tmp_path):
    funcs = "".join(
        f"def {f}(view, params, memory, rng):\n    return {r}\n"
        for f, r in (("take_upcard", 0), ("draw", 0), ("big_gin", 1), ("discard", 99), ("knock", 1))
    )
    (tmp_path / "cheat.py").write_text(funcs)
    conf = tmp_path / "c.toml"
    conf.write_text(
        'name = "why"\nbots = ["cheat.py", "gin-chasing:knock_at=7,relax_at=9,relax_step=2"]\n'
        f'games_per_pair = 10\nchunk_size = 10\nworkers = 1\nresults_dir = "{tmp_path / "results"}"\n'
    )
    out = invoke("run", str(conf), "--no-report")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert "10 game(s) ended in an error or a forfeit; the commonest:" in lines
    reasons = [line for line in lines if line.startswith("  ") and " x bot 'cheat'" in line]
    assert reasons and all("discarded a card it does not hold" in line for line in reasons)
    assert sum(int(line.split(" x ")[0]) for line in reasons) == 10
    # The bot table's columns line up however long a name is: every row as wide as the header.
    start = lines.index(next(line for line in lines if line.startswith("bot ")))
    table = lines[start : start + 3]
    assert any(line.startswith("gin-chasing:knock_at=7,relax_at=9,relax_step=2 ") for line in table), table
    assert len({len(line) for line in table}) == 1, table


def test_the_results_table_says_win_pct_counts_a_game_with_no_winner_as_half(tmp_path):
    """Two bots that never knock, one hand a game: every game ends with no winner, so each bot's
    win% is 50.0% without a single win, and the table says why in one line."""
    funcs = "".join(
        f"def {f}(view, params, memory, rng):\n    return {r}\n"
        for f, r in (("take_upcard", 0), ("draw", 0), ("big_gin", 0), ("knock", 0))
    )
    discard = (
        "from arena.botkit.lib import discardable\nfrom arena.engine.cards import lsb\n"
        "from arena.engine.layout import V_HAND\nfrom arena.engine.melds import best_discard\n"
        "def discard(view, params, memory, rng):\n    extra = view[V_HAND] & ~discardable(view)\n"
        "    return best_discard(view[V_HAND], lsb(extra) if extra else -1)[0]\n"
    )
    for name in ("never_a", "never_b"):
        (tmp_path / f"{name}.py").write_text(funcs + discard)
    conf = tmp_path / "c.toml"
    conf.write_text(
        'name = "draws"\nbots = ["never_a.py", "never_b.py"]\ngames_per_pair = 4\nchunk_size = 4\n'
        f'workers = 1\nresults_dir = "{tmp_path / "results"}"\n[rules]\nhand_cap = 1\n'
    )
    out = invoke("run", str(conf), "--quiet", "--no-report")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert any(line.split() == ["never_a", "vs", "never_b", "4", "0", "0", "4", "50.0%"] for line in lines), lines
    assert "win%: wins plus half the games with no winner ('none'), over the games with a result" in lines


@pytest.mark.parametrize(
    "args",
    [
        ("play", "--no-open", "--port", "99999"),
        ("view", "no-such-run", "--no-open", "--port", "-5"),
        ("league", "serve", "no-such-league", "--port", "70000"),
    ],
)
def test_a_port_out_of_range_is_one_error_line_before_any_server_starts(args):
    out = runner.invoke(app, list(args))
    port = args[-1]
    assert out.exit_code == 2, out.output
    assert [line for line in out.output.splitlines() if line.strip()] == [
        f"error: --port {port} is not a port (0..65535)"
    ]


#: A Ctrl-C delivered while the command imports ``module`` for the first time (``sys.argv`` is the command).
_INTERRUPT_DURING_IMPORT = """
import builtins, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
from arena.cli import main
module, sys.argv = sys.argv[1], ["arena", *sys.argv[2:]]
real_import = builtins.__import__
def interrupting_import(name, *args, **kwargs):
    if name == module and name not in sys.modules:
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs at the next bytecode, inside the import
    return real_import(name, *args, **kwargs)
builtins.__import__ = interrupting_import
main()
"""


@pytest.mark.parametrize("module", ["typer", "numba", "pandas"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130(module, config, tmp_path):
    """A Ctrl-C in the first second or two (Python importing typer, numba, pandas) printed a traceback, and
    not always a KeyboardInterrupt: pandas' C modules turned it into a SystemError."""
    import subprocess
    import sys

    cmd = [sys.executable, "-c", _INTERRUPT_DURING_IMPORT, module, "run", str(config)]
    cmd += ["--results-dir", str(tmp_path / "res"), "-q", "--no-report"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 130, (p.returncode, p.stderr[-2000:])
    assert p.stderr.strip().splitlines() == ["error: interrupted (SIGINT)"], p.stderr[-2000:]


#: ``arena run`` that gets a SIGINT of its own once the command has ended and Python shuts down: in an
#: exit function (``atexit``), or while Python tears its modules down (``teardown``).
_INTERRUPT_AT_EXIT = """
import atexit, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
from arena.cli import main
when, sys.argv = sys.argv[1], ["arena", *sys.argv[2:]]
class CtrlC:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
if when == "atexit":
    atexit.register(os.kill, os.getpid(), signal.SIGINT)
else:
    ctrl_c = CtrlC()  # deleted with this module's globals, after Python let go of its signal handlers
main()
"""


def test_ctrl_c_while_a_bot_file_imports_is_exit_130_not_a_bad_bot(tmp_path):
    """A Ctrl-C while a sweep's bot file ran its top-level code (a slow import) was caught with the file's
    import errors: "not a bot: importing it failed: KeyboardInterrupt", exit 2 (bad input)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    mark = tmp_path / "importing"
    slow = tmp_path / "slow.py"
    slow.write_text(f"import pathlib, time\npathlib.Path({str(mark)!r}).touch()\nwhile True:\n    time.sleep(0.01)\n")
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        f'bot = "early-knock"\nopponents = [{str(slow)!r}]\ngames = 20\nchunk_size = 10\nworkers = 1\n'
        f"results_dir = {str(tmp_path / 'res')!r}\n[grid]\nknock_at = [3]\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "import sys; from arena.cli import main; sys.argv = ['arena', *sys.argv[1:]]; main()",
            "sweep",
            str(sweep),
            "-q",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 120
    while not mark.exists():  # the bot file's top-level code is running
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-3000:]
    assert [line for line in err.splitlines() if line.strip()] == ["error: interrupted (SIGINT)"], err[-3000:]


@pytest.mark.parametrize("when", ["atexit", "teardown"])
def test_ctrl_c_after_the_command_ended_leaves_its_exit_code(when, config, tmp_path):
    """The half second after a finished run, while Python shut down, a Ctrl-C killed the process by
    SIGINT with no line (or printed a KeyboardInterrupt traceback from an exit function): the run was
    complete, and the shell saw an interrupted one."""
    import os
    import subprocess
    import sys

    cmd = [sys.executable, "-c", _INTERRUPT_AT_EXIT, when, "run", str(config)]
    cmd += ["--results-dir", str(tmp_path / "res"), "-q", "--no-report"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's arena, not an installed one
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "KeyboardInterrupt" not in p.stderr, p.stderr[-2000:]
    assert len(stored_games(tmp_path / "res" / "cli")) == 40
