"""Faulty bots cost little: crash streaks forfeit the chunk at once, the watchdog counts CPU time and the
bots' own limits, bad handshakes and exits at import are one line, and ``game`` is the game's id."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from arena.botkit.bot import BotError
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import Limits, external_bot, external_of, sandboxed_bot
from arena.external.protocol import ProtocolError, parse_answer, parse_hello
from arena.external.wall import wall_problem
from arena.loading.check import check_bot
from arena.loading.load import load, load_bot
from arena.run.plan import BotSpec, plan_matchup
from arena.run.schedule import LocalProcesses, _cpu_seconds, bots_allowance
from arena.run.worker import play_chunk
from arena.settings.botref import BotRef
from arena.settings.rules import Rules

R = rules_array(Rules())
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "external"
PROBLEM = wall_problem()
if PROBLEM is not None and os.environ.get("CI") == "true":
    raise AssertionError(f"CI must build the bot sandbox: {PROBLEM}")
# Without the wall these run under the weak sandbox, named as such.
LIMITS = Limits(sandbox="wall" if PROBLEM is None else "weak")


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    """A bot program beside a copy of the Python example (the wall shows a bot its own folder)."""
    (tmp_path / "simple_player.py").write_text((EXAMPLES / "simple_player.py").read_text())
    tmp_path.chmod(0o755)
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


PLAYER = """
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

game = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "faulty", "protocol": 1}), flush=True)
    elif msg["type"] == "decide":
        if msg["new_game"]:
            game = sp.Game(msg["seed"])
            print("GAME", msg["game"], msg["seed"], file=sys.stderr, flush=True)
        %s
        print(sp.decide(msg, game), flush=True)
    else:
        break
"""


def test_a_bot_that_crashes_in_every_game_forfeits_the_rest_of_the_chunk_at_once(tmp_path):
    cmd = script(tmp_path, "crasher", PLAYER % "os._exit(3)")
    bot = external_bot(None, cmd, limits=dataclasses.replace(LIMITS, max_crashes=3))
    ext = external_of(bot)
    simple = load_bot("simple")
    t0 = time.monotonic()
    rec = play_batch(bot, simple, R, np.arange(40))
    assert time.monotonic() - t0 < 60
    assert len(rec.errors) == 40
    assert all("crashed: exited with code 3 while asked take_upcard()" in e for e in rec.errors[:3])
    rest = rec.errors[3:]
    assert all("forfeits the rest of this chunk: 3 games in a row ended by a crash or timeout" in e for e in rest)
    assert "(last: crashed: exited with code 3" in rest[0]
    assert ext.restarts <= 3  # no start was tried after the third crash
    ext.new_chunk()  # the next chunk tries again
    rec = play_batch(bot, simple, R, np.arange(5))
    assert "exited with code 3" in rec.errors[0] and "forfeits the rest" in rec.errors[4]
    ext.close()


def test_a_bot_that_crashes_every_other_game_never_reaches_the_streak(tmp_path):
    cmd = script(tmp_path, "sometimes", PLAYER % 'if msg["new_game"] and msg["game"] % 2 == 0: os._exit(3)')
    bot = external_bot(None, cmd, limits=dataclasses.replace(LIMITS, max_crashes=2))
    simple = load_bot("simple")
    seeds = np.arange(30)
    rec = play_batch(bot, simple, R, seeds)
    external_of(bot).close()
    assert rec.errors and not any("forfeits the rest" in e for e in rec.errors)
    assert all("exited with code 3" in e for e in rec.errors)


def _games_seen(log: str) -> dict[int, int]:
    return {int(s): int(g) for _, g, s in (line.split() for line in log.splitlines() if line.startswith("GAME "))}


def _chunks(a: BotSpec, b: BotSpec, matchup_no: int, games: int, chunk_size: int):
    """The chunk tasks of one matchup with duplicate deals."""
    return plan_matchup(
        a,
        b,
        matchup_no=matchup_no,
        rules=Rules(),
        seed=7,
        games=games,
        duplicate=True,
        chunk_size=chunk_size,
        record_hands=False,
        per_game_seconds=10.0,
        chunk_floor_seconds=60.0,
    )[1]


def test_three_failed_starts_forfeit_the_rest_of_their_chunk_and_later_chunks_in_the_worker_play(tmp_path):
    """A worker keeps a bot for its life: the failed starts of one chunk (here while a file ``down``
    lies beside the bot) must not forfeit the chunks and matchups the worker plays after it."""
    down = tmp_path / "down"
    unless_down = f"import os, sys\nif os.path.exists({str(down)!r}):\n    sys.exit(3)\n"
    cmd = script(tmp_path, "flaky", unless_down + PLAYER % "")
    bot = load(BotRef("command", shlex.join(cmd)), LIMITS, name="flaky")
    flaky = BotSpec.of(bot)
    external_of(bot).close()
    first, second = _chunks(flaky, BotSpec.of(load_bot("simple")), 0, games=16, chunk_size=8)
    (other,) = _chunks(flaky, BotSpec.of(load_bot("random")), 1, games=4, chunk_size=4)
    down.write_text("")
    res = play_chunk(first)
    assert len(res.errors) == 8 and "failed to start 3 times in a row" in res.errors[3], res.errors
    down.unlink()
    assert play_chunk(second).errors == []
    assert play_chunk(other).errors == []


def test_the_game_field_is_the_games_id_in_the_matchup_however_the_chunks_are_cut(tmp_path):
    cmd = script(tmp_path, "echo", PLAYER % "")
    bot = load(BotRef("command", shlex.join(cmd)), LIMITS, name="echo")
    a, b = BotSpec.of(bot), BotSpec.of(load_bot("simple"))
    external_of(bot).close()
    seen = []
    for chunk_size in (12, 4):
        _, tasks = plan_matchup(
            a,
            b,
            matchup_no=0,
            rules=Rules(),
            seed=7,
            games=12,
            duplicate=True,
            chunk_size=chunk_size,
            record_hands=False,
            per_game_seconds=10.0,
            chunk_floor_seconds=60.0,
        )
        log = ""
        for task in tasks:
            res = play_chunk(task)
            assert res.errors == []
            log += res.logs["echo"]
        seen.append(_games_seen(log))
    assert seen[0] == seen[1]  # the same id for each game, in one chunk or three
    assert sorted(set(seen[0].values())) == list(range(12))  # 2 * pair + swap


def test_a_deeply_nested_handshake_or_answer_is_one_line_not_a_recursion_error(tmp_path):
    deep = b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(ProtocolError, match="^bad handshake: the handshake is JSON nested too deeply"):
        parse_hello(deep)
    with pytest.raises(ProtocolError, match="^garbled answer: the answer to draw"):
        parse_answer(deep, "draw")
    # Every unreadable handshake is a bad handshake, as PROTOCOL.md lists it (not JSON, not UTF-8).
    for line, why in ((b"hello there", "is not JSON"), (b"\xff\xfe", "is not UTF-8")):
        with pytest.raises(ProtocolError, match=f"^bad handshake: the handshake {why}"):
            parse_hello(line)
    # Valid JSON that Python won't read at once (an integer of 5,000 digits) is an integer out of range.
    with pytest.raises(ProtocolError, match=r"^ill-typed answer: draw\(\) answered 1000.*\(5001 characters\), out of"):
        parse_answer(b"1" + b"0" * 5000, "draw")
    nested = tmp_path / "nested.py"
    nested.write_text('import sys\nsys.stdin.readline()\nprint("[" * 30000 + "]" * 30000, flush=True)\n')
    tmp_path.chmod(0o755)
    report = check_bot(f"cmd:{sys.executable} {nested}", limits=LIMITS)
    assert not report.passed
    assert report.lines[0][:2] == ("FAIL", "handshake") and "bad handshake" in report.lines[0][2]
    assert "\n" not in report.lines[0][2] and "Traceback" not in report.lines[0][2]


#: A bot asking for hand_over lines that answers the one after a game's last hand (``%s``: what it writes).
ANSWERS_HAND_OVER = """
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

game = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "chatty", "protocol": 1, "hand_over": True}), flush=True)
    elif msg["type"] == "hand_over":
        if max(msg["scores"]) >= 100:
            sys.stdout.write(%r)
            sys.stdout.flush()
    elif msg["type"] == "decide":
        if msg["new_game"]:
            game = sp.Game(msg["seed"])
        print(sp.decide(msg, game), flush=True)
    else:
        break
"""


def test_a_bot_that_answers_a_hand_over_line_is_told_that_line_takes_no_answer(tmp_path):
    """Its answer is found when the next question is sent: the forfeit named that question ("take_upcard():
    the bot wrote b'0\\n' before it was asked"), which the bot had not been sent.  It answers the line after
    a game's last hand, and the next game starts once the answer is surely there (an answer coming after
    the next question is sent is read as that question's answer: nothing tells the two apart)."""
    cmd = script(tmp_path, "chatty", ANSWERS_HAND_OVER % "0\n")
    bot = external_bot(None, cmd, limits=LIMITS)
    simple = load_bot("simple")
    try:
        assert play_batch(bot, simple, R, np.array([0])).errors == []
        time.sleep(0.5)
        (error,) = play_batch(bot, simple, R, np.array([1])).errors
    finally:
        external_of(bot).close()
    assert "garbled answer: the bot answered a hand_over line, which takes no answer (it wrote b'0\\n')" in error


def test_a_launcher_that_runs_a_program_the_wall_does_not_show_is_told_to_name_the_program(tmp_path):
    """A pyenv shim execs the interpreter under ~/.pyenv, which the wall does not show: bash exits 127
    with "No such file or directory", and got no hint (one was given only on "fork" in that line)."""
    if PROBLEM is not None:
        pytest.skip(f"no wall here: {PROBLEM}")
    (tmp_path / "elsewhere").mkdir()
    real = tmp_path / "elsewhere" / "python3"
    real.symlink_to(sys.executable)
    (tmp_path / "shims").mkdir()
    shim = tmp_path / "shims" / "python3"
    shim.write_text(f'#!/bin/bash\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    (tmp_path / "bot").mkdir()
    tmp_path.chmod(0o755)
    bot_file = script(tmp_path / "bot", "plain", PLAYER % "")[1]
    with pytest.raises(BotError) as err:
        external_bot(None, [str(shim), bot_file], limits=LIMITS)
    msg = str(err.value)
    assert "exited with code 127" in msg and "No such file" in msg, msg  # the stderr line is cut at 80 characters
    assert "start the program itself by its real path, not a launcher script" in msg and "pyenv shim" in msg, msg


def test_a_launcher_that_forks_is_told_to_start_the_program_itself_and_nothing_that_does_not_exist():
    """The hint also said "or allow processes in its limits": no config, nor check-bot, can."""
    with pytest.raises(BotError) as err:
        external_bot(None, ["/bin/bash", "-c", "x=$(echo hi); echo $x"], limits=LIMITS)
    msg = str(err.value)
    assert "fork" in msg and "the sandbox forbids new processes: start the program itself by its real path" in msg
    assert "limits" not in msg, msg


def test_sys_exit_at_import_of_a_sandboxed_file_is_one_error_line(tmp_path):
    path = tmp_path / "quitter.py"
    path.write_text("import sys\nsys.exit(4)\n")
    tmp_path.chmod(0o755)
    with pytest.raises(BotError) as err:
        sandboxed_bot(path, dataclasses.replace(LIMITS, start_s=120.0))
    msg = str(err.value)
    assert "\n" not in msg and "importing it called sys.exit(4)" in msg and msg.startswith("sandbox:")


SLEEPER = '''
"""A plain bot that sleeps in each game's first decision: slow by the clock, idle by the CPU."""
import time

from bots.simple import big_gin, discard, draw, knock
from bots.simple import take_upcard as _take


def take_upcard(view, params, memory, rng):
    if memory[0] == 0:
        memory[0] = 1
        time.sleep(1.0)
    return _take(view, params, memory, rng)
'''


def test_the_watchdog_counts_cpu_time_so_a_slow_but_idle_chunk_is_not_killed(tmp_path):
    f = tmp_path / "sleeper.py"
    f.write_text(SLEEPER)
    a, b = BotSpec.of(load(BotRef("file", str(f)))), BotSpec.of(load_bot("simple"))
    _, tasks = plan_matchup(
        a,
        b,
        matchup_no=0,
        rules=Rules(),
        seed=3,
        games=8,
        duplicate=True,
        chunk_size=8,
        record_hands=False,
        per_game_seconds=0.01,
        chunk_floor_seconds=5.0,
    )
    assert tasks[0].time_limit == 5.0  # 8 games * 1 s of sleep: 8 s of wall clock, past it
    t0 = time.monotonic()
    out = list(LocalProcesses(1).results(tasks))
    assert time.monotonic() - t0 > 5.0
    assert [type(o).__name__ for o in out] == ["ChunkResult"], out
    assert len(out[0].games) == 8


def test_cpu_seconds_and_the_bots_allowance():
    before = _cpu_seconds(os.getpid())
    assert before is not None
    t0 = time.process_time()
    while time.process_time() - t0 < 0.3:
        pass
    assert _cpu_seconds(os.getpid()) - before >= 0.2
    spec = BotSpec("x", "command", "prog", "", "h", (), tuple(dataclasses.asdict(Limits(game_s=10, start_s=5)).items()))
    _, tasks = plan_matchup(
        spec,
        BotSpec.of(load_bot("simple")),
        matchup_no=0,
        rules=Rules(),
        seed=1,
        games=20,
        duplicate=True,
        chunk_size=20,
        record_hands=False,
        per_game_seconds=0.5,
        chunk_floor_seconds=1.0,
    )
    # 20 games, each up to 10 s of answers and a 5 s restart, plus six 5 s first answers in each part (the
    # processes start afresh with each seating)
    assert bots_allowance(tasks[0]) == 20 * 15 + 2 * 30
    assert json.loads(json.dumps(dict(spec.limits)))["sandbox"] == "wall"  # the manifest names the sandbox
