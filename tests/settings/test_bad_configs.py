"""Bad input through the real ``arena run``: exit 2, one ``error:`` line naming the culprit, and the finished
run the config points at left byte for byte as it was.

Every case is a config file (or a command-line override) that names the folder of a finished run, so a
config that got past its checks and touched the folder would show here.  They run in this process
(typer's CliRunner): most stop before a bot loads, so the whole table costs about a second.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import bots
from arena.cli.main import EXIT_INPUT, app

#: The finished run's config; a case changes some keys (None removes one) and may add tables.
BASE = {
    "name": '"done"',
    "bots": '["random", "simple"]',
    "games_per_pair": "40",
    "chunk_size": "20",
    "seed": "9",
    "workers": "1",
}

NOT_A_BOT = "def take_upcard(view, params, memory, rng):\n    return 0\n"  # four functions missing
SYNTAX_ERROR = "def take_upcard(view, params, memory, rng)\n    return 0\n"

#: id -> (keys changed, extra TOML, command-line options, what the error line must name).
CASES: dict[str, tuple[dict[str, str | None], str, list[str], str]] = {
    "unknown key": ({"game_per_pair": "40"}, "", [], "unknown key 'game_per_pair' (did you mean 'games_per_pair'"),
    "name with a slash": ({"name": '"a/b"'}, "", [], "name = 'a/b' is not allowed"),
    "unknown format": ({"format": '"knockout"'}, "", [], "format = 'knockout' is not allowed"),
    "one bot": ({"bots": '["random"]'}, "", [], "at least 2 bots for a round-robin"),
    "a bot twice": ({"bots": '["random", "random"]'}, "", [], "each bot listed once"),
    "gauntlet without candidate": ({"format": '"gauntlet"'}, "", [], "format = 'gauntlet' needs candidate"),
    "gauntlet without opponents": (
        {"format": '"gauntlet"', "candidate": '"simple"', "bots": "[]"},
        "",
        [],
        "a gauntlet plays its candidate 'simple' against each of bots, and bots names no other bot",
    ),
    "gauntlet of the config's only bot": (
        {"bots": '["simple"]'},
        "",
        ["--gauntlet", "simple"],
        "a gauntlet plays its candidate 'simple' against each of bots, and bots names no other bot",
    ),
    "bad seed": ({"seed": '"sekret"'}, "", [], "seed = 'sekret' is not allowed"),
    "odd games": ({"games_per_pair": "41"}, "", [], "games_per_pair = 41 must be even with duplicate = true"),
    "odd chunk": ({"chunk_size": "21"}, "", [], ": chunk_size = 21 must be even with duplicate = true"),
    # Bytes that are no UTF-8 in an argument (bad\xff) come as a lone surrogate, which config.toml cannot
    # hold: the run failed with a traceback, leaving a half-made folder.
    "a name that is no UTF-8": ({}, "", ["--name", "bad\udcff"], "name = 'bad\\udcff' is not allowed"),
    "a results folder that is no UTF-8": (
        {},
        "",
        ["--results-dir", "/tmp/r\udcffdir"],
        "results_dir = '/tmp/r\\udcffdir' is not allowed (allowed: a folder path of UTF-8 text)",
    ),
    "name too long for a folder": ({"name": '"' + "x" * 300 + '"'}, "", [], "a folder name of 1..120 bytes"),
    "name with a newline": ({"name": '"a\\nb"'}, "", [], "name = 'a\\nb' is not allowed"),
    "no games": ({"games_per_pair": "0"}, "", [], "games_per_pair = 0 is not allowed"),
    "a flag for a count": ({"games_per_pair": "true"}, "", [], "games_per_pair = true is not allowed"),
    "negative workers": ({"workers": "-1"}, "", [], "workers = -1 is not allowed"),
    "chunk of one": ({"chunk_size": "1"}, "", [], "chunk_size = 1 is not allowed"),
    "yes for a flag": ({"record_hands": '"yes"'}, "", [], "record_hands = 'yes' is not allowed"),
    "unknown preset": ({"rules": '"standerd"'}, "", [], "standerd"),
    "rule out of range": ({}, "[rules]\nknock_limit = 11\n", [], "knock_limit"),
    "unknown rule": ({}, "[rules]\ngin_bonuss = 20\n", [], "gin_bonuss"),
    "a preset that is a number": ({}, "[rules]\npreset = 5\n", [], "rules.preset = 5 is not allowed"),
    "a candidate without the gauntlet format": (
        {"candidate": '"early-knock"'},
        "",
        [],
        "candidate = 'early-knock' is only played with format = \"gauntlet\"",
    ),
    "rules file missing": ({"rules": '"no_such_rules.toml"'}, "", [], "no_such_rules.toml"),
    "rules file not UTF-8": (
        {"rules": '"{tmp}/latin1_rules.toml"'},
        "",
        [],
        "{tmp}/latin1_rules.toml is not UTF-8 text",
    ),
    "a setting misspelt in a variant not played": (
        {},
        '[variants]\nknock5 = { bot = "early-knock", knock_att = 5 }\n',
        [],
        "bot 'knock5': 'early-knock' has no parameter 'knock_att'",
    ),
    "an unknown built-in in a variant not played": (
        {},
        '[variants]\nspare = { bot = "simpel" }\n',
        [],
        "variant 'spare' (not played): unknown bot 'simpel'",
    ),
    "a missing file in a variant not played": (
        {},
        '[variants]\nmine = { bot = "no_such_bot.py" }\n',
        [],
        "variant 'mine' (not played): no such file or folder:",
    ),
    "sprt the wrong way": ({}, "[sprt]\nelo0 = 5\nelo1 = 0\n", [], "sprt needs elo0 < elo1"),
    "sprt alpha": ({}, "[sprt]\nalpha = 0.5\n", [], "sprt.alpha = 0.5 is not allowed"),
    # Bounds whose LLR is no number: the run crashed in a 70-line traceback after its first chunk was stored.
    "sprt bound infinite": (
        {},
        "[sprt]\nelo1 = inf\n",
        [],
        "sprt.elo1 = inf is not allowed (allowed: a number -4000..4000 (logistic Elo))",
    ),
    "sprt bound minus infinity": ({}, "[sprt]\nelo0 = -inf\n", [], "sprt.elo0 = -inf is not allowed"),
    "sprt bound past the logistic range": ({}, "[sprt]\nelo1 = 6500\n", [], "sprt.elo1 = 6500 is not allowed"),
    "sprt bound past the normalized range": (
        {},
        '[sprt]\nelo = "normalized"\nelo0 = 0\nelo1 = 300\n',
        [],
        "sprt.elo1 = 300 is not allowed (allowed: a number -200..200 (normalized Elo))",
    ),
    "unknown limit": ({}, "[limits]\ndecision_secs = 1\n", [], "limits has no key 'decision_secs'"),
    "limit out of range": ({}, "[limits]\nchunk_min_seconds = 0\n", [], "limits.chunk_min_seconds = 0 is not allowed"),
    "a fraction of a MiB": (
        {},
        "[limits]\nmemory_mb = 100.7\n",
        [],
        "limits.memory_mb = 100.7 is not allowed (allowed: a whole number 16..1048576)",
    ),
    "too little memory": (
        {},
        "[limits]\nmemory_mb = 15\n",
        [],
        "limits.memory_mb = 15 is not allowed (allowed: a whole number 16..1048576)",
    ),
    "half a crash": ({}, "[limits]\nmax_crashes = 2.5\n", [], "limits.max_crashes = 2.5 is not allowed"),
    "scheduler not an address": ({"scheduler": '"nowhere"'}, "", [], "scheduler = 'nowhere' is not allowed"),
    "results_dir not text": ({"results_dir": "5"}, "", [], "results_dir = 5 is not allowed"),
    "unknown bot": ({"bots": '["random", "simpel"]'}, "", [], "unknown bot 'simpel'"),
    "inline setting not a number": (
        {"bots": '["random", "early-knock:knock_at=lots"]'},
        "",
        [],
        "'lots' is not a number",
    ),
    "inline setting on a bot file": (
        {"bots": '["random", "{tmp}/not_a_bot.py:knock_at=3"]'},
        "",
        [],
        "inline settings (NAME:key=value) are for built-in bots; for a bot file, set them in a config's [variants]",
    ),
    "inline setting unknown": ({"bots": '["random", "early-knock:knock_att=5"]'}, "", [], "no parameter 'knock_att'"),
    "inline setting out of range": ({"bots": '["random", "monte-carlo:samples=0"]'}, "", [], "samples = 0.0 must be"),
    "one built-in twice, spelled two ways": (
        {"bots": '["random", "early-knock:knock_at=5", "early-knock:knock_at=5.0"]'},
        "",
        [],
        "bots 'early-knock:knock_at=5' and 'early-knock:knock_at=5.0' are the same built-in with the same settings",
    ),
    "a built-in beside its own defaults": (
        {"bots": '["random", "early-knock", "early-knock:knock_at=10"]'},
        "",
        [],
        "bots 'early-knock' and 'early-knock:knock_at=10' are the same built-in",
    ),
    "bot file missing": ({"bots": '["random", "{tmp}/missing.py"]'}, "", [], "missing.py"),
    "bot file not a bot": ({"bots": '["random", "{tmp}/not_a_bot.py"]'}, "", [], "not a bot: missing function"),
    "bot file with a syntax error": ({"bots": '["random", "{tmp}/syntax.py"]'}, "", [], "syntax.py"),
    "variant with an unknown parameter": (
        {"bots": '["random", "k"]'},
        '[variants.k]\nbot = "simple"\nknock_att = 3\n',
        [],
        "no parameter 'knock_att'",
    ),
    "variant with a cwd that is not text": (
        {"bots": '["random", "k"]'},
        '[variants.k]\ncommand = ["/bin/true"]\ncwd = 5\n',
        [],
        "variants.k.cwd = 5 is not allowed (allowed: a folder path, as text)",
    ),
    "command variant with a parameter": (
        {"bots": '["random", "k"]'},
        '[variants.k]\ncommand = ["/bin/true"]\nknock_at = 5\n',
        [],
        "takes only command and cwd (not knock_at); to set an external bot's parameters, name it as "
        '{ bot = "cmd:program arg ...", knock_at = ... }',
    ),
    'variant with sandbox = "no"': (
        {"bots": '["random", "k"]'},
        '[variants.k]\nbot = "{tmp}/not_a_bot.py"\nsandbox = "no"\n',
        [],
        "variants.k.sandbox = 'no' is not allowed (allowed: true or false)",
    ),
    "variant based on another variant": (
        {"bots": '["random", "a"]'},
        '[variants.a]\nbot = "b"\nknock_at = 3\n[variants.b]\nbot = "early-knock"\nknock_at = 5\n',
        [],
        "variant 'a' is based on the variant 'b': a variant's bot is a built-in bot or a file",
    ),
    "variant without a bot": (
        {"bots": '["random", "k"]'},
        "[variants.k]\nknock_at = 3\n",
        [],
        "variant 'k' must be a table with bot",
    ),
    "a variant that takes a built-in's name": (
        {"bots": '["random", "simple"]'},
        '[variants.simple]\nbot = "early-knock"\n',
        [],
        "variant 'simple' takes the name of the built-in bot 'simple'",
    ),
    "a built-in under its own name with settings": (
        {"bots": '["random", "simple"]'},
        '[variants.simple]\nbot = "simple"\nfoo = 1\n',
        [],
        "variant 'simple' takes the name of the built-in bot 'simple'",
    ),
    # A bot named as a built-in read as that built-in in every table, in a run where the built-in was not.
    "a copy of a built-in's file under its name": (
        {"bots": '["random", "{tmp}/monte_carlo.py"]'},
        "",
        [],
        "bot '{tmp}/monte_carlo.py' is named 'monte_carlo', the name of the built-in bot 'monte-carlo'; rename it",
    ),
    "a bot file whose NAME is a built-in's, but for case": (
        {"bots": '["random", "{tmp}/named_simple.py"]'},
        "",
        [],
        "bot '{tmp}/named_simple.py' is named 'Simple', the name of the built-in bot 'simple'",
    ),
    "a bot file whose NAME is a number": (
        {"bots": '["random", "{tmp}/named_5.py"]'},
        "",
        [],
        "{tmp}/named_5.py: NAME = 5 is not allowed: it is not text",
    ),
    "a variant named like a built-in, with a cyrillic a": (
        {"bots": '["random", "gin-ch\\u0430sing"]'},
        '[variants."gin-ch\\u0430sing"]\nbot = "early-knock"\n',
        [],
        "bot 'gin-ch\\u0430sing' is named 'gin-ch\\u0430sing', the name of the built-in bot 'gin-chasing'; give the "
        "variant a name of its own",
    ),
    "another seed on the finished folder": ({"seed": "10"}, "", [], "was played with seed = 9, not 10"),
    "other rules on the finished folder": ({}, "", ["--set", "knock_limit=5"], "was played under different rules"),
    "override out of range": ({}, "", ["--set", "knock_limit=99"], "knock_limit"),
    "an override given twice": (
        {},
        "",
        ["--set", "target=50", "--set", "target=60"],
        "override 'target' is given twice (target=50 and 'target=60'); give it once",
    ),
    # An option's error names the option: it was "bad.toml: games_per_pair = 0", of a file without it.
    "no games, by an option": ({}, "", ["--games", "0"], "error: --games 0: games_per_pair = 0 is not allowed"),
    "too many workers, by an option": (
        {},
        "",
        ["--workers", "2000"],
        "error: --workers 2000: workers = 2000 is not allowed (allowed: integer 0..1024)",
    ),
    "a negative seed, by an option": ({}, "", ["--seed", "-5"], "error: --seed -5: seed = -5 is not allowed"),
    "a name with a slash, by an option": ({}, "", ["--name", "a/b"], "error: --name a/b: name = 'a/b' is not allowed"),
    "chunk of one, by an option": ({}, "", ["--chunk-size", "1"], "error: --chunk-size 1: chunk_size = 1 is not"),
    "scheduler not an address, by an option": (
        {},
        "",
        ["--scheduler", "nowhere"],
        "error: --scheduler nowhere: scheduler = 'nowhere' is not allowed",
    ),
    "negative retry": ({}, "", ["--retry-scheduler", "-1"], "--retry-scheduler -1 is negative"),
    "results path is a file": ({"results_dir": '"{tmp}/a_file"'}, "", [], "{tmp}/a_file/done: a file is in the way"),
    "a key misspelt at its end": ({"gamez": "40"}, "", [], "unknown key 'gamez' (did you mean 'games_per_pair'"),
    "unknown bot with a no-break space": (
        {"bots": '["random", "simple\\u00a0"]'},
        "",
        [],
        "unknown bot 'simple\\xa0'",
    ),
    "two bots named alike but for case": (
        {"bots": '["random", "fast", "Fast"]'},
        '[variants.fast]\nbot = "simple"\n[variants.Fast]\nbot = "early-knock"\n',
        [],
        "the bots 'fast' and 'Fast' read alike in a table",
    ),
    "two bots named alike but for a cyrillic o": (
        {"bots": '["random", "bot", "b\\u043et"]'},
        '[variants.bot]\nbot = "simple"\n[variants."b\\u043et"]\nbot = "early-knock"\n',
        [],
        "the bots 'bot' and 'b\\u043et' read alike in a table",
    ),
    # Unicode's confusables, not only the hand table's: each read as a built-in in every table.
    "a variant named like a built-in, with a capital I for the l": (
        {"bots": '["random", "simpIe"]'},
        '[variants.simpIe]\nbot = "early-knock"\n',
        [],
        "bot 'simpIe' is named 'simpIe', the name of the built-in bot 'simple'",
    ),
    "a variant named like a built-in, with a dotless i": (
        {"bots": '["random", "g\\u0131n-chasing"]'},
        '[variants."g\\u0131n-chasing"]\nbot = "early-knock"\n',
        [],
        "bot 'g\\u0131n-chasing' is named 'g\\u0131n-chasing', the name of the built-in bot 'gin-chasing'",
    ),
    "a variant named like a built-in, with a Latin alpha": (
        {"bots": '["simple", "r\\u0251ndom"]'},
        '[variants."r\\u0251ndom"]\nbot = "early-knock"\n',
        [],
        "bot 'r\\u0251ndom' is named 'r\\u0251ndom', the name of the built-in bot 'random'",
    ),
    "two bots named alike but for a cyrillic shha": (
        {"bots": '["random", "k5h", "k5\\u04bb"]'},
        '[variants.k5h]\nbot = "simple"\n[variants."k5\\u04bb"]\nbot = "early-knock"\n',
        [],
        "the bots 'k5h' and 'k5\\u04bb' read alike in a table",
    ),
    "a bot name with a zero-width space": (
        {"bots": '["random", "sim\\u200bple2"]'},
        '[variants."sim\\u200bple2"]\nbot = "simple"\n',
        [],
        "the bot name 'sim\\u200bple2' holds a character that does not show",
    ),
    "a bot name a spreadsheet reads as a formula": (
        {"bots": '["random", "=1+1"]'},
        '[variants."=1+1"]\nbot = "simple"\n',
        [],
        "the bot name '=1+1' starts with '=' (a spreadsheet opening the tables would read it as a formula)",
    ),
}

#: A value nested deeper than the TOML reader's recursion goes (it raised RecursionError).
TOO_DEEP = 'bots = ["random", "simple"]\nx = ' + "[" * 5000 + "]" * 5000 + "\n"

RAW_CASES: dict[str, tuple[str | bytes, str]] = {
    "not TOML": ("bots = [\n", "not valid TOML"),
    "not UTF-8": (b'bots = ["random", "simple"]\nname = "caf\xe9"\n', "not UTF-8 text"),
    "nested too deeply": (TOO_DEEP, "nested too deeply"),
    "empty file": ("", "the file is empty"),
    "no bots": ('name = "done"\nseed = 9\n', "no bots"),
    "keys under a table": ('[tournament]\nbots = ["random", "simple"]\n', "unknown table [tournament]"),
}


def _render(results: Path, tmp: Path, changes: dict[str, str | None], extra: str) -> str:
    keys = {**BASE, "results_dir": f'"{results}"', **changes}
    body = "".join(f"{k} = {v}\n" for k, v in keys.items() if v is not None) + extra
    return body.replace("{tmp}", str(tmp))


def _snapshot(run_dir: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished run that every bad config names (its results folder and name)."""
    tmp = tmp_path_factory.mktemp("finished")
    conf = tmp / "good.toml"
    conf.write_text(_render(tmp / "results", tmp, {}, ""))
    out = CliRunner().invoke(app, ["run", str(conf), "--quiet", "--no-report"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return tmp / "results"


def _one_error_line(output: str) -> str:
    assert "Traceback" not in output, output[-3000:]
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output[-3000:]
    return errors[0]


def _bad_run(finished: Path, tmp_path: Path, body: str | bytes, options: list[str]) -> str:
    (tmp_path / "not_a_bot.py").write_text(NOT_A_BOT)
    (tmp_path / "syntax.py").write_text(SYNTAX_ERROR)
    (tmp_path / "a_file").write_text("a file where the results folder goes")
    random_bot = (Path(bots.__file__).parent / "random.py").read_text()
    (tmp_path / "monte_carlo.py").write_text(random_bot)
    (tmp_path / "named_simple.py").write_text(random_bot + '\nNAME = "Simple"\n')
    (tmp_path / "named_5.py").write_text(random_bot + "\nNAME = 5\n")
    (tmp_path / "latin1_rules.toml").write_bytes(b"# r\xe8gles\nknock_limit = 5\n")
    conf = tmp_path / "bad.toml"
    conf.write_bytes(body) if isinstance(body, bytes) else conf.write_text(body)
    before = _snapshot(finished / "done")
    out = CliRunner().invoke(app, ["run", str(conf), "--quiet", "--no-report", *options], catch_exceptions=False)
    assert out.exit_code == EXIT_INPUT, out.output
    assert _snapshot(finished / "done") == before, "the finished run was touched"
    line = _one_error_line(out.output)
    print(f"FAULT | bad config | exit {out.exit_code} | {line}")  # the closing note's table (pytest -rP)
    return line


def test_there_are_at_least_22_distinct_bad_configs():
    bodies = {(repr(c), e, tuple(o)) for c, e, o, _ in CASES.values()} | {b for b, _ in RAW_CASES.values()}
    assert len(bodies) == len(CASES) + len(RAW_CASES) >= 22


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_config_is_one_line_exit_2_naming_it_and_the_finished_run_is_untouched(finished, tmp_path, case):
    changes, extra, options, culprit = CASES[case]
    line = _bad_run(finished, tmp_path, _render(finished, tmp_path, changes, extra), options)
    assert culprit.replace("{tmp}", str(tmp_path)) in line, line


@pytest.mark.parametrize("case", list(RAW_CASES))
def test_a_config_file_that_is_no_config_is_one_line_exit_2_naming_the_file(finished, tmp_path, case):
    body, culprit = RAW_CASES[case]
    line = _bad_run(finished, tmp_path, body, [])
    assert culprit in line and str(tmp_path / "bad.toml") in line, line


def test_a_missing_config_file_is_one_line_exit_2(tmp_path):
    out = CliRunner().invoke(app, ["run", str(tmp_path / "nothere.toml"), "--quiet"], catch_exceptions=False)
    assert out.exit_code == EXIT_INPUT
    assert f"{tmp_path / 'nothere.toml'}: no such config file" in _one_error_line(out.output)


def test_a_config_path_that_is_a_folder_is_said_to_be_one(tmp_path):
    """It was "no such config file, nor a shipped example", of a folder that is there."""
    (tmp_path / "c.toml").mkdir()
    out = CliRunner().invoke(app, ["run", str(tmp_path / "c.toml"), "--quiet"], catch_exceptions=False)
    assert out.exit_code == EXIT_INPUT
    assert (
        _one_error_line(out.output)
        == f"error: {tmp_path / 'c.toml'}: a folder, not a config file (give the .toml file)"
    )


@pytest.mark.parametrize("command", [["run"], ["rules"], ["bots", "--config"]])
def test_a_config_the_machine_will_not_read_is_one_line_exit_3(command):
    """A read that fails (here EIO: /proc/self/mem reads nothing at offset 0; for a user, no permission) was
    an OSError traceback from `arena rules` and `arena run`; it is the machine's fault, so exit 3."""
    out = CliRunner().invoke(app, [*command, "/proc/self/mem"], catch_exceptions=False)
    assert out.exit_code == 3, out.output
    assert _one_error_line(out.output) == "error: /proc/self/mem: cannot read it: Input/output error"


def test_a_built_in_named_as_itself_in_variants_loads_as_that_built_in():
    """A league names each house bot's variant after it ({bot = "simple"} named simple): that is the built-in
    itself, not another bot under its name, and refusing it stopped every house pairing."""
    from arena.loading.load import load_bots
    from arena.settings.config import config_from_dict

    cfg = config_from_dict(
        {
            "bots": ["simple", "early-knock"],
            "variants": {"simple": {"bot": "simple"}, "early-knock": {"bot": "early-knock"}},
        }
    )
    bots = load_bots(cfg)
    assert sorted(bots) == ["early-knock", "simple"] and bots["simple"].name == "simple"
