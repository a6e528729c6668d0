"""Trained policies behind the wall: ``sandbox:agent.py`` and ``sandbox:model.onnx`` (the sandbox host).

A walled policy answers a whole lockstep batch in one ``act`` line (the rows' keys drawn by the
arena, as for the policy in its process), or one decision at a time where the arena asks so, each
decision keyed from the seat's generator as the lockstep driver keys it: either way it plays the
very games it plays in the arena's process.  A policy that reaches out of the wall, hangs, crashes
or answers wrongly (on the host's own protocol stream, too) forfeits the games it was asked with the
reason, as a bot does.  Every test runs the real wall (bubblewrap and seccomp).
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from arena.engine.layout import EXTERNAL_FAILURES, G_FORFEIT, LOG_SEAT
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external.client import close_bot, external_bot, external_of
from arena.external.limits import Limits
from arena.external.protocol import act_reply_limit
from arena.external.wall import wall_problem
from arena.loading.load import load, load_bot
from arena.run import run_tournament
from arena.run.schedule import Inline
from arena.settings.botref import BotRef
from arena.settings.config import TournamentConfig
from arena.settings.rules import Rules
from tests.policy_files import AGENT
from tests.tables import same

PROBLEM = wall_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"needs the wall: {PROBLEM}")
R = rules_array(Rules())


def _policy(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    path.chmod(0o644)
    return path


def _play(spec: str, seeds, limits: Limits | None = None, **kw):
    bot = load(BotRef.parse(spec), limits)
    try:
        return play_batch(bot, load_bot("simple"), R, np.asarray(seeds, dtype=np.int64), **kw)
    finally:
        close_bot(bot)


#: AGENT, saying on stderr (the bot's log) how many rows each act() call got.
COUNTING_AGENT = AGENT.replace(
    "    r = rng.random()\n", "    print('rows', len(mask), file=sys.stderr)\n    r = rng.random()\n"
)
COUNTING_AGENT = COUNTING_AGENT.replace("import numpy as np\n", "import sys\n\nimport numpy as np\n", 1)


def _rows_per_call(log: str) -> list[int]:
    return [int(line.split()[1]) for line in log.splitlines() if line.startswith("rows ")]


def _rows_until(bot, total: int, seconds: float = 20.0) -> list[int]:
    """The ``rows`` lines of the bot's stderr, drained until they count ``total`` rows (or time runs out).

    A reader thread collects the stderr, so the last lines of a batch can arrive just after the
    games end; waiting for the count keeps the test about what the bot was asked, not about timing.
    """
    text = ""
    deadline = time.monotonic() + seconds
    while True:
        text += external_of(bot).drain_log()  # kept whole: a drain may end inside a line
        rows = _rows_per_call(text)
        if sum(rows) >= total or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


def test_a_walled_policy_answers_whole_batches_and_plays_the_games_it_plays_in_process(tmp_path):
    path = _policy(tmp_path / "p", "agent", COUNTING_AGENT)
    seeds = np.arange(5)
    simple = load_bot("simple")
    inside = play_batch(load(BotRef.parse(f"policy:{path}")), simple, R, seeds, record_log=True, record_hands=True)
    asked = int((inside.log // LOG_SEAT == 0).sum())  # the policy's decisions (seat 0)
    walled = load(BotRef.parse(f"sandbox:{path}"))
    try:
        assert walled.batch_act is not None  # the host said batch in its hello
        batched = play_batch(walled, simple, R, seeds, record_log=True, record_hands=True)
        rows = _rows_until(walled, asked)
        one_at_a_time = play_batch(
            dataclasses.replace(walled, batch_act=None), simple, R, seeds, record_log=True, record_hands=True
        )
        single = _rows_until(walled, asked)
    finally:
        close_bot(walled)
    assert set(single) == {1} and len(single) == asked  # one at a time: a call per decision
    assert max(rows) == len(seeds) and sum(rows) == asked and len(rows) < asked / 2  # whole batches
    for played in (batched, one_at_a_time):
        assert played.errors == [] and inside.errors == []
        assert np.array_equal(played.games, inside.games)
        assert np.array_equal(played.hands, inside.hands) and np.array_equal(played.log, inside.log)
    other = _play(f"policy:{path}", seeds + 100, record_log=True)
    assert not np.array_equal(other.log, inside.log)  # the seed, not chance, makes them equal


def test_a_gauntlet_of_a_walled_policy_against_simple_is_the_in_process_policys_game_by_game(tmp_path):
    path = _policy(tmp_path / "p", "agent", AGENT)

    def gauntlet(kind: str):
        cfg = TournamentConfig(
            name=kind,
            format="gauntlet",
            candidate=f"{kind}:{path}",
            bots=("simple",),
            games_per_pair=24,
            chunk_size=8,
            seed=11,
            workers=1,
            results_dir=str(tmp_path / "results"),
        )
        return run_tournament(cfg, progress=False, schedule=Inline())

    walled, inside = gauntlet("sandbox"), gauntlet("policy")
    assert walled.status == inside.status == "complete" and len(walled.games) == 24
    assert (walled.games["error"] == "").all()
    assert same(walled.games, inside.games) and same(walled.hands, inside.hands)


def _attacks(secret: Path, port: int) -> dict[str, tuple[str, str]]:
    """name -> (the policy's act body, a word its forfeit reason must hold)."""
    play = "    return np.argmax(mask, axis=1)\n"
    return {
        "reads-a-file": (f"    open({str(secret)!r}).read()\n" + play, "raised"),
        "opens-a-socket": (
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n" + play,
            "raised",
        ),
        # the first answer may take the start time (as a bot's first, which may compile), so it loops after it
        "loops-forever": ("    CALLS.append(1)\n    while len(CALLS) > 1:\n        pass\n" + play, "0.5 s"),
        "illegal-action": ("    return np.argmin(mask, axis=1)\n", "illegal"),
        "wrong-shape": ("    return np.zeros((len(mask), 2), dtype=np.int64)\n", "shape"),
    }


@pytest.mark.parametrize("attack", ["reads-a-file", "opens-a-socket", "loops-forever", "illegal-action", "wrong-shape"])
def test_a_walled_policy_that_reaches_out_hangs_or_answers_wrongly_forfeits_with_the_reason(tmp_path, listener, attack):
    port, accepted = listener
    secret = tmp_path / "secret.txt"  # outside the policy's folder, readable by anyone outside the wall
    secret.write_text("the league's token\n")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    body, why = _attacks(secret, port)[attack]
    path = _policy(
        tmp_path / "p",
        attack.replace("-", "_"),
        "import socket\nimport numpy as np\n\nCALLS = []\n\ndef act(obs, mask, rng):\n" + body,
    )
    rec = _play(f"sandbox:{path}", [7], Limits(decision_s=0.5, game_s=10, start_s=120))
    assert len(rec.errors) == 1 and why in rec.errors[0], rec.errors
    assert int(rec.games[0, 6]) == 0  # G_FORFEIT: the policy's seat
    assert accepted == []


#: What an attacking policy imports: ``reply(text)`` writes on the host's own protocol stream (found
#: among the process's objects) and then never lets the host write its answer.
ON_THE_WIRE = """
import gc, io, os, sys, time
import numpy as np

CALLS = []


def reply(text):
    out = next(
        f for f in gc.get_objects()
        if isinstance(f, io.TextIOWrapper) and not f.closed and f.writable() and f.fileno() > 2
    )
    out.write(text)
    out.flush()
    time.sleep(600)


def act(obs, mask, rng):
"""

N = 4  # games, so the first batch has 4 rows

BATCH_ATTACKS = {
    "too-few-ids": ("    reply('[0]\\n')\n", "ill-typed answer: act() answered 1 action ids for 4 observations"),
    "too-many-ids": ("    reply('[0,0,0,0,0]\\n')\n", "ill-typed answer: act() answered 5 action ids"),
    "non-integers": ("    reply('[0.5, true, \"1\", 2]\\n')\n", "ill-typed answer: act() must answer integer"),
    "garbage": ("    reply('rm -rf /\\n')\n", "garbled answer: the answer to act() is not JSON"),
    "two-lines": ("    reply('[0,0,0,0]\\n[0,0,0,0]\\n')\n", "garbled answer: act() for a batch of 4: more than one"),
    "oversized": (
        "    reply('[' + '0,' * 4_000_000 + '0]\\n')\n",
        f"garbled answer: act() for a batch of 4: a line longer than {act_reply_limit(N)} bytes",
    ),
    "exits": ("    os._exit(3)\n", "crashed: exited with code 3 while asked act() for a batch of 4"),
}


@pytest.mark.parametrize("attack", sorted(BATCH_ATTACKS))
def test_a_walled_policy_that_answers_a_batch_wrongly_on_the_hosts_own_stream_forfeits_that_batch(tmp_path, attack):
    body, reason = BATCH_ATTACKS[attack]
    name = attack.replace("-", "_")
    path = _policy(tmp_path / "p", name, ON_THE_WIRE + body)
    t0 = time.monotonic()
    rec = _play(f"sandbox:{path}", np.arange(N), Limits(decision_s=2, game_s=10, start_s=120))
    assert time.monotonic() - t0 < 60  # the answer is refused when it comes (or at its size), not at a timeout
    assert len(rec.errors) == N, rec.errors
    for err in rec.errors:
        verb = EXTERNAL_FAILURES[reason.split(":")[0]]  # "answered badly", "crashed"
        assert err.startswith(f"bot '{name}' (seat 0) {verb} in ") and "\n" not in err
        assert reason in err, err
    assert (rec.games[:, G_FORFEIT] == 0).all()


#: A policy that exits once a game of its first batch has ended (a smaller batch comes), if that batch
#: had at least 6 rows.
CRASHES_LATER = AGENT.replace(
    "def act(obs, mask, rng):\n",
    "FIRST = []\n\n\ndef act(obs, mask, rng):\n"
    "    FIRST.append(len(mask))\n"
    "    if FIRST[0] >= 6 and len(mask) < FIRST[0]:\n"
    "        import os\n"
    "        os._exit(3)\n",
)


def test_a_walled_policy_that_crashes_mid_run_forfeits_the_batch_keeps_finished_games_and_the_next_chunk_plays(
    tmp_path,
):
    path = _policy(tmp_path / "p", "crashes_later", CRASHES_LATER)
    twin = _policy(tmp_path / "twin", "agent", AGENT)  # the same moves, in-process, without the exit
    simple = load_bot("simple")
    seeds = np.arange(8)
    bot = load(BotRef.parse(f"sandbox:{path}"))
    try:
        rec = play_batch(bot, simple, R, seeds, record_log=True)
        ext = external_of(bot)
        ext.new_chunk()  # the runner's next chunk: the crash streak starts over
        later = play_batch(bot, simple, R, seeds[:3] + 50, record_log=True)
    finally:
        close_bot(bot)
    inside = play_batch(load(BotRef.parse(f"policy:{twin}")), simple, R, seeds, record_log=True)
    lost = rec.games[:, G_FORFEIT] == 0
    assert 0 < lost.sum() < len(seeds) and len(rec.errors) == lost.sum()
    assert all("crashed: exited with code 3 while asked act() for a batch of" in e for e in rec.errors)
    assert all(e.startswith("bot 'crashes_later' (seat 0)") and "\n" not in e for e in rec.errors)
    assert np.array_equal(rec.games[~lost], inside.games[~lost])  # the games that ended before are kept as played
    assert later.errors == []  # a fresh process plays the next chunk (its first batch is under 6 rows)
    again = play_batch(load(BotRef.parse(f"policy:{twin}")), simple, R, seeds[:3] + 50, record_log=True)
    assert np.array_equal(later.games, again.games) and np.array_equal(later.log, again.log)


#: A policy whose second batch takes 0.5 s.
SLOW_SECOND = AGENT.replace(
    "def act(obs, mask, rng):\n",
    "CALLS = []\n\n\ndef act(obs, mask, rng):\n"
    "    CALLS.append(1)\n"
    "    if len(CALLS) == 2:\n"
    "        import time\n"
    "        time.sleep(0.5)\n",
)


def test_a_batch_may_take_the_time_per_decision_times_its_rows_and_a_hang_past_that_forfeits_it(tmp_path):
    path = _policy(tmp_path / "p", "slow_second", SLOW_SECOND)
    limits = Limits(decision_s=0.1, game_s=10, start_s=120)
    wide = _play(f"sandbox:{path}", np.arange(8), limits)  # 8 rows: 0.8 s for the batch
    assert wide.errors == []
    t0 = time.monotonic()
    narrow = _play(f"sandbox:{path}", np.arange(2), limits)  # 2 rows: 0.2 s
    assert time.monotonic() - t0 < 60
    assert len(narrow.errors) == 2
    assert all("timeout: no answer to act() for a batch of 2 within 0.2 s" in e for e in narrow.errors), narrow.errors


#: A program of its own (no arena import) that says ``batch`` in its hello and answers each act line
#: with every row's first legal action, logging the rows it got.
FIRST_LEGAL_PROGRAM = """
import base64, json, sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "first-legal", "protocol": 1, "batch": True}), flush=True)
    elif msg["type"] == "act":
        n, mask = msg["n"], base64.b64decode(msg["mask"])
        width = len(mask) // n
        print(json.dumps([mask[i * width:(i + 1) * width].index(1) for i in range(n)]), flush=True)
        print("rows", n, file=sys.stderr, flush=True)
    elif msg["type"] == "bye":
        break
    else:
        print(json.dumps({"error": "only act lines"}), flush=True)
"""

#: FIRST_LEGAL_PROGRAM taking 30 ms a row of each batch.
SLOW_PROGRAM = FIRST_LEGAL_PROGRAM.replace("import base64, json, sys", "import base64, json, sys, time").replace(
    '        n, mask = msg["n"]', '        time.sleep(0.03 * msg["n"])\n        n, mask = msg["n"]'
)

FIRST_LEGAL_POLICY = """
import numpy as np


def act(obs, mask, rng):
    return np.argmax(mask, axis=1)
"""


def test_a_program_that_says_batch_in_its_hello_gets_act_lines_and_plays_as_the_same_policy_in_process(tmp_path):
    program = _policy(tmp_path / "prog", "first_legal_program", FIRST_LEGAL_PROGRAM)
    policy = _policy(tmp_path / "pol", "first_legal", FIRST_LEGAL_POLICY)
    seeds = np.arange(4)
    bot = external_bot(None, [sys.executable, str(program)])
    try:
        assert bot.batch_act is not None
        rec = play_batch(bot, load_bot("simple"), R, seeds, record_log=True)
        rows = _rows_per_call(external_of(bot).drain_log())
    finally:
        close_bot(bot)
    inside = play_batch(load(BotRef.parse(f"policy:{policy}")), load_bot("simple"), R, seeds, record_log=True)
    assert rec.errors == [] and max(rows) == len(seeds)
    assert np.array_equal(rec.games, inside.games) and np.array_equal(rec.log, inside.log)


def test_a_batched_program_within_every_batchs_budget_still_forfeits_each_game_its_share_takes_past_the_time_per_game(
    tmp_path,
):
    # 30 ms a row: every batch answers within its own budget (rows x decision_s = rows x 1 s), so
    # only the time per game can stop it.  Each game is charged its share of each batch (30 ms a
    # decision), and a game of simple's has dozens of its decisions: past 0.3 s.
    program = _policy(tmp_path / "prog", "slow_program", SLOW_PROGRAM)
    seeds = np.arange(4)
    for game_s, lost in ((0.3, 4), (120.0, 0)):
        bot = external_bot(None, [sys.executable, str(program)], limits=Limits(decision_s=1.0, game_s=game_s))
        t0 = time.monotonic()
        try:
            rec = play_batch(bot, load_bot("simple"), R, seeds)
        finally:
            close_bot(bot)
        assert len(rec.errors) == lost, rec.errors
        assert (rec.games[:, G_FORFEIT] == 0).sum() == lost
        assert all("ran past the game's time limit (0.3 s of answers" in e for e in rec.errors), rec.errors
        if lost:  # stopped at the limit: about 10 batches of 4 rows, not the whole games
            assert time.monotonic() - t0 < 10


def test_a_batched_program_restarted_between_batches_gets_no_free_compile_time_past_its_first_batch(tmp_path):
    # The attack: a fresh process's first answer may take the start limit and is not charged (it may
    # compile), and a program that exits between batches is simply started again.  A program that
    # exits right after each answer mostly loses its next batch as a crash (it is still exiting when
    # the next line comes), but one that wins that race would make every batch a free "first" one and
    # the time per game would never bind.  The race is won here for it: the process is killed after
    # each answer, before the next batch.  Only the bot's very first batch is free.
    from arena.external.client import ExternalBot, _make_bot

    program = _policy(tmp_path / "prog", "slow_program", SLOW_PROGRAM)
    # first_answer_s as a sandboxed Python file has it (the start limit), on a plain program
    ext = ExternalBot([sys.executable, str(program)], limits=Limits(decision_s=1.0, game_s=0.3), first_answer_s=5.0)

    def act_then_exit(obs, mask, rng):
        actions = ext.act(obs, mask, rng)
        proc = ext.seats[0].proc.proc
        proc.kill()
        proc.wait()
        return actions

    bot = dataclasses.replace(_make_bot(ext, None, "exiting", "", "", ""), batch_act=act_then_exit)
    try:
        rec = play_batch(bot, load_bot("simple"), R, np.arange(4))
    finally:
        close_bot(bot)
    assert ext.restarts >= 3  # it was started afresh for the batches after the first
    assert len(rec.errors) == 4, rec.errors
    assert all("ran past the game's time limit (0.3 s of answers" in e for e in rec.errors), rec.errors
