"""The example external bots (Python and Java) pass check-bot and play exactly like the built-in simple."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import external_bot, external_of
from arena.loading.check import check_bot
from arena.settings.rules import Rules, load_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "external"
PY_CMD = [sys.executable, str(EXAMPLES / "simple_player.py")]
JAVA_OPTS = ["-Xmx64m", "-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=64m"]


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory) -> Path:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac/java not found on PATH: the Java example is not compiled or played here")
    out = tmp_path_factory.mktemp("java")
    out.chmod(0o755)  # the bot runs as its own user, who must be able to read its classes
    r = subprocess.run(
        ["javac", "-Xlint:all", "-Werror", "-d", str(out), str(EXAMPLES / "SimplePlayer.java")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return out


def _same_play(bot, simple, rules, seeds) -> None:
    """Move for move: the games, hands and the logs of every decision are equal."""
    for seats in ((bot, simple), (simple, bot)):
        ours = play_batch(*seats, rules, seeds, record_hands=True, record_log=True)
        ref = play_batch(simple, simple, rules, seeds, record_hands=True, record_log=True)
        assert ours.errors == []
        assert np.array_equal(ours.games, ref.games)
        assert np.array_equal(ours.hands, ref.hands)
        assert np.array_equal(ours.log, ref.log)


def test_the_python_example_imports_nothing_from_the_project():
    tree = ast.parse((EXAMPLES / "simple_player.py").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"json", "sys"}


def test_the_python_example_passes_check_bot():
    report = check_bot("cmd:" + " ".join(PY_CMD), games=6, echo=None)
    assert report.passed, report.lines
    assert [what for status, what, _ in report.lines if status == "PASS"] == [
        "handshake",
        "take_upcard",
        "draw",
        "big_gin",
        "discard",
        "knock",
        "games",
        "replay",
        "timing",
        "bye",
    ] + (["syscalls"] if shutil.which("strace") else [])  # and the sandbox refused none of its calls


def test_check_bot_gives_a_bot_told_bye_the_time_a_run_gives_it(tmp_path):
    """check-bot waited 2 s after bye and said PASS of a bot that exits 1.2 s after it; a run gives 0.5 s and
    killed that bot after every chunk, with a line in each chunk's log."""
    bot = tmp_path / "slow_bye.py"
    source = (EXAMPLES / "simple_player.py").read_text()
    bot.write_text(
        source.replace(
            '        elif kind == "bye":\n            break',
            '        elif kind == "bye":\n            import time\n\n            time.sleep(1.2)\n            break',
        )
    )
    assert "time.sleep(1.2)" in bot.read_text()
    bot.chmod(bot.stat().st_mode | 0o005)
    tmp_path.chmod(tmp_path.stat().st_mode | 0o005)
    report = check_bot(f"cmd:{sys.executable} {bot}", games=2, echo=None)
    said = {what: (status, line) for status, what, line in report.lines}
    assert said["bye"][0] == "WARN" and "within 0.5 s" in said["bye"][1], report.lines


@pytest.mark.skipif(shutil.which("strace") is None, reason="check-bot lists refused calls with strace")
def test_a_python_bot_importing_a_module_without_bytecode_gets_no_refused_call_from_python_itself(tmp_path):
    """Python writes a module's bytecode beside it on first import; in the read-only wall each try was a refused
    mkdir, reported by check-bot as the bot's (seen after ``pip install --no-compile``).  The wall tells
    Python not to try."""
    (tmp_path / "helper_module.py").write_text("ANSWER = 42\n")
    bot = tmp_path / "player.py"
    bot.write_text("import helper_module\n" + (EXAMPLES / "simple_player.py").read_text())
    for path in (tmp_path, bot, tmp_path / "helper_module.py"):
        path.chmod(path.stat().st_mode | 0o005)
    report = check_bot(f"cmd:{sys.executable} {bot}", games=2, echo=None)
    assert not (tmp_path / "__pycache__").exists()
    assert ("PASS", "syscalls") in [(status, what) for status, what, _ in report.lines], report.lines


def test_the_python_example_plays_the_built_in_simples_moves(simple):
    """Its own meld search, repeat guard and xoshiro draws reproduce bots/simple.py exactly."""
    bot = external_bot(None, PY_CMD)
    assert bot.name == "simple-py" and bot.source == "cmd:" + " ".join(PY_CMD) and not bot.fast
    _same_play(bot, simple, rules_array(Rules()), np.arange(60))
    _same_play(bot, simple, rules_array(load_rules("oklahoma")), np.arange(100, 130))
    # Against itself, one process per seat.
    both = play_batch(bot, bot, rules_array(load_rules("eaai")), np.arange(40), record_log=True)
    ref = play_batch(simple, simple, rules_array(load_rules("eaai")), np.arange(40), record_log=True)
    assert np.array_equal(both.games, ref.games) and np.array_equal(both.log, ref.log)
    assert all(s.proc is not None for s in external_of(bot).seats)
    external_of(bot).close()


def test_the_java_example_passes_check_bot_and_plays_the_built_in_simples_moves(java_classes, simple):
    cmd = ["java", *JAVA_OPTS, "-cp", str(java_classes), "SimplePlayer"]
    report = check_bot("cmd:" + " ".join(cmd), games=6, echo=None)
    assert report.passed, report.lines
    bot = external_bot(None, cmd)
    assert bot.name == "simple-java"
    _same_play(bot, simple, rules_array(Rules()), np.arange(40))
    _same_play(bot, simple, rules_array(load_rules("eaai")), np.arange(200, 220))
    external_of(bot).close()


#: Seeds whose first hand ends, in one seating or the other, before one seat is asked anything (the other takes
#: the upcard and knocks at once; seed 189 with the bot in seat 0): a hand_over line is that seat's first.
HAND_OVER_FIRST = np.array([189, *range(40)])


def test_the_python_example_asking_for_hand_over_lines_plays_the_same_games(tmp_path, simple):
    """It ignores them; but where a game's first line was a hand_over, its first decide line said
    ``new_game: false`` without ``params``, and the example played on with the last game's generator."""
    text = (EXAMPLES / "simple_player.py").read_text()
    asked = text.replace('"protocol": 1,', '"protocol": 1, "hand_over": True,', 1)
    assert asked != text
    (tmp_path / "simple_player.py").write_text(asked)
    tmp_path.chmod(0o755)
    bot = external_bot(None, [sys.executable, str(tmp_path / "simple_player.py")])
    assert external_of(bot).hello["hand_over"] is True
    _same_play(bot, simple, rules_array(Rules()), HAND_OVER_FIRST)
    external_of(bot).close()


def test_the_java_example_asking_for_hand_over_lines_plays_the_same_games(tmp_path, java_classes, simple):
    text = (EXAMPLES / "SimplePlayer.java").read_text()
    asked = text.replace('\\"protocol\\":1,', '\\"protocol\\":1,\\"hand_over\\":true,', 1)
    assert asked != text
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "SimplePlayer.java").write_text(asked)
    out = tmp_path / "classes"
    r = subprocess.run(["javac", "-d", str(out), str(tmp_path / "src" / "SimplePlayer.java")], capture_output=True)
    assert r.returncode == 0, r.stderr
    for p in (tmp_path, out):
        p.chmod(0o755)
    bot = external_bot(None, ["java", *JAVA_OPTS, "-cp", str(out), "SimplePlayer"])
    assert external_of(bot).hello["hand_over"] is True
    _same_play(bot, simple, rules_array(Rules()), HAND_OVER_FIRST)
    external_of(bot).close()


def test_check_bot_command_fails_a_broken_bot_and_passes_a_good_one(tmp_path):
    """The command prints one line per check and exits 1 on any FAIL."""
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'name': 'liar', 'protocol': 1}), flush=True)\n"
        "    elif msg['type'] == 'decide':\n"
        "        print(7 if msg['decision'] == 'discard' and 7 not in msg['hand'] else 1, flush=True)\n"
        "    else:\n"
        "        break\n"
    )
    runner = CliRunner()
    bad = runner.invoke(app, ["check-bot", f"cmd:{sys.executable} {liar}", "--games", "2"])
    assert bad.exit_code == 1, bad.output
    assert "FAIL  discard      answered 7, a card not in the hand" in bad.output
    assert "FAIL  games" in bad.output and "result: FAIL" in bad.output
    assert "PASS  handshake" in bad.output and "PASS  knock" in bad.output
    good = runner.invoke(app, ["check-bot", "cmd:" + " ".join(PY_CMD), "--games", "2"])
    assert good.exit_code == 0, good.output
    assert good.output.strip().endswith("result: PASS")
    silent = runner.invoke(app, ["check-bot", f"cmd:{sys.executable} -c pass"])
    assert silent.exit_code == 1 and "FAIL  handshake" in silent.output and "crashed" in silent.output
    # Under the weak sandbox strace itself ran under the allow-list and could not start the bot: the warning
    # blamed the bot's launcher for forking.  It says why there is no list instead.
    weak = runner.invoke(app, ["check-bot", "cmd:" + " ".join(PY_CMD), "--games", "2", "--weak-sandbox"])
    assert weak.exit_code == 0 and "WARN  syscalls     not listed under the weak sandbox" in weak.output, weak.output
    assert "launcher" not in weak.output and "fork" not in weak.output
    negative = runner.invoke(app, ["check-bot", "cmd:" + " ".join(PY_CMD), "--games", "-1"])
    assert (
        negative.exit_code == 2
        and negative.output == "error: --games -1 is negative (0 checks the decisions without full games)\n"
    )


def test_check_bot_warns_of_a_bot_that_does_not_replay_from_its_seed(tmp_path):
    """A bot that decides by an unseeded generator plays legal games, but not the same ones twice:
    a run's results could not be reproduced from its seed. It draws every discard at random from
    about ten legal cards as well as every take, so that two replayed games coinciding by chance
    (a coin on the takes alone did, about once in a thousand runs) is out of reach."""
    dice = tmp_path / "dice.py"
    dice.write_text(
        "import json, random, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'name': 'dice', 'protocol': 1}), flush=True)\n"
        "    elif msg['type'] != 'decide':\n"
        "        break\n"
        "    elif msg['decision'] == 'discard':\n"
        "        print(random.choice([c for c in msg['hand'] if c != msg['just_taken']]), flush=True)\n"
        "    else:\n"
        "        print(random.randint(0, 1) if msg['decision'] == 'take_upcard' else 1, flush=True)\n"
    )
    tmp_path.chmod(0o755)
    report = check_bot(f"cmd:{sys.executable} {dice}", games=4, echo=None)
    assert report.passed, report.lines
    replay = [(status, detail) for status, what, detail in report.lines if what == "replay"]
    assert len(replay) == 1 and replay[0][0] == "WARN", report.lines
    assert replay[0][1].startswith("bot 'dice' does not replay from its seed: ")
    assert replay[0][1].endswith("; seed every random generator from the seed the arena sends with each game")


def test_check_bot_runs_a_sandboxed_file_too():
    """sandbox:file.py goes through the same host as in a tournament (the bot-cache copy included)."""
    report = check_bot("sandbox:bots/simple.py", games=2, echo=None)
    assert report.passed, report.lines
    assert report.lines[0][2].startswith("name 'simple', protocol 1")
    missing = check_bot("sandbox:no/such/bot.py", echo=None)
    assert not missing.passed and missing.lines[0][:2] == ("FAIL", "command")


def test_check_bot_gives_a_sandboxed_file_the_first_answer_allowance_a_run_gives(tmp_path):
    """A run lets a sandboxed file's first answer of each kind take the start limit (its host compiles the
    decision then); check-bot timed it out at the decision limit and failed a bot that runs cleanly."""
    text = (Path(__file__).resolve().parents[2] / "bots" / "TEMPLATE.py").read_text()
    knock = "    return 1 if deadwood(view[V_HAND]) <= params[KNOCK_AT] else 0"
    assert text.count(knock) == 1
    slow = "PLAIN = True\nimport time\n_FIRST = [True]\n" + text.replace(
        knock, "    if _FIRST:\n        _FIRST.pop()\n        time.sleep(3)\n" + knock
    )
    assert "time.sleep(3)" in slow
    path = tmp_path / "slow_first.py"
    path.write_text(slow)
    for p in (tmp_path, path):
        p.chmod(p.stat().st_mode | 0o005)
    report = check_bot(f"sandbox:{path}", games=4, echo=None)
    assert report.passed, report.lines
    timing = next(line for line in report.lines if line[1] == "timing")
    first = re.search(r"the first answer of each kind, which may compile, apart: max (\d+) ms", timing[2])
    assert first and int(first.group(1)) >= 3000, timing  # the 3 s answer, at most slowed by a loaded machine


@pytest.mark.parametrize("memory_mb", [128, 256, 384])
def test_a_java_bot_that_cannot_start_under_memory_mb_is_told_to_raise_it(java_classes, memory_mb):
    """A VM under a small address-space limit fails its handshake in one of several ways (a "garbled" or
    non-JSON first line, a crash), none of which named the limit: the line now says which to raise."""
    from arena.botkit.bot import BotError
    from arena.external.limits import Limits

    cmd = ["java", *JAVA_OPTS, "-cp", str(java_classes), "SimplePlayer"]
    with pytest.raises(BotError) as err:
        external_bot(None, cmd, limits=Limits(memory_mb=memory_mb))
    text = str(err.value)
    assert len(text.splitlines()) == 1 and f"within memory_mb = {memory_mb}" in text and "raise memory_mb" in text, text
