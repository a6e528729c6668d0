"""Bots against the wall's side doors: two processes of one bot passing the duplicate deal between them,
a thread bomb, a peek at other runs' files, control characters in an error line.

Each test is an attacker: a real bot program behind the real wall, doing what a cheat would.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import Limits, external_bot, external_of
from arena.external.limits import bot_task_limit
from arena.external.protocol import ProtocolError, parse_hello
from arena.external.wall import bot_ids, wall_problem
from arena.loading.load import load, load_bot
from arena.run.plan import BotSpec, plan_matchup
from arena.run.worker import play_chunk
from arena.settings.botref import BotRef
from arena.settings.rules import Rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "external"
PROBLEM = wall_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")
LIMITS = Limits(decision_s=2.0, game_s=60.0)
R = rules_array(Rules())


def script(folder: Path, name: str, body: str) -> list[str]:
    """A bot program beside a copy of the Python example (the wall shows a bot its own folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "simple_player.py").write_text((EXAMPLES / "simple_player.py").read_text())
    folder.chmod(0o755)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def play_loop(name: str) -> str:
    """The end of a bot program: the handshake as ``name``, then the Python example's play, game by game."""
    return textwrap.dedent(
        f"""
        game = None
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "hello":
                print(json.dumps({{"name": "{name}", "protocol": 1}}), flush=True)
            elif msg["type"] == "decide":
                if msg["new_game"]:
                    game = sp.Game(msg["seed"])
                print(sp.decide(msg, game), flush=True)
            else:
                break
        """
    )


def chunk_tasks(bot, opponent, pairs: int = 4, chunk_size: int = 4):
    a, b = BotSpec.of(bot), BotSpec.of(opponent)
    _, tasks = plan_matchup(
        a,
        b,
        matchup_no=0,
        rules=Rules(),
        seed=11,
        games=2 * pairs,
        duplicate=True,
        chunk_size=chunk_size,
        record_hands=False,
        per_game_seconds=10.0,
        chunk_floor_seconds=60.0,
    )
    return tasks


# --- the duplicate deal: two processes of one bot may not talk ---------------------------------------

# The probe's covert channel: the process of game 2p (swap 0) holds a lock on a file for each bit of its
# dealt hand; the process of game 2p+1 (swap 1, the other seat of the same deal) reads the bits by trying
# the locks.  Files anyone can read will do; here the bot's own folder.  flock and fcntl locks both.
COVERT = r"""
import fcntl, json, os, struct, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = os.urandom(4).hex()
held = []
def say(*a): print(*a, file=sys.stderr, flush=True)

def lock(fd, how):
    if how == "flock":
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    else:
        fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))

def send(pair, hand):
    for c in hand:
        fd = os.open(f"{HERE}/bit{pair % 2}_{c}", os.O_RDONLY)
        for how in ("flock", "fcntl"):
            try:
                lock(fd, how)
                say("SENT", how, pair, c)
            except OSError as e:
                say("REFUSED", how, e.errno)
        held.append(fd)

def peek(pair):
    # A write lock taken and dropped at once fails where the other process holds a read lock.
    seen = {}
    for how in ("flock", "fcntl"):
        cards = []
        for c in range(52):
            fd = os.open(f"{HERE}/bit{pair % 2}_{c}", os.O_RDONLY)
            try:
                if how == "flock":
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:
                    q = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
                    if struct.unpack("hhqqi", q)[0] != fcntl.F_UNLCK:
                        cards.append(c)
            except BlockingIOError:
                cards.append(c)
            except OSError as e:
                say("REFUSED", how, e.errno)
            os.close(fd)
        seen[how] = cards
    return seen

game = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "covert", "protocol": 1}), flush=True)
    elif msg["type"] == "decide":
        if msg["new_game"]:
            game = sp.Game(msg["seed"])
            pair, swap = divmod(msg["game"], 2)
            say("GAME", msg["game"], "TOKEN", TOKEN, "HAND", json.dumps(sorted(msg["hand"])))
            if swap == 0:
                send(pair, msg["hand"])
            else:
                time.sleep(0.05)
                say("PEEK", msg["game"], json.dumps(peek(pair)))
        print(sp.decide(msg, game), flush=True)
    else:
        break
"""


def _covert_bot(tmp_path: Path):
    folder = tmp_path / "covert"
    cmd = script(folder, "covert", COVERT)
    for pair in range(2):
        for c in range(52):
            (folder / f"bit{pair}_{c}").write_text("")
            (folder / f"bit{pair}_{c}").chmod(0o644)
    return load(BotRef("command", shlex.join(cmd)), LIMITS, name="covert")


def test_the_two_seatings_of_a_deal_cannot_pass_the_hand_through_file_locks(tmp_path):
    bot = _covert_bot(tmp_path)
    simple = load_bot("simple")
    log = ""
    for task in chunk_tasks(bot, simple):
        res = play_chunk(task)
        assert res.errors == []
        log += res.logs["covert"]
    external_of(bot).close()
    hands = {int(g): json.loads(h) for g, h in re.findall(r"^GAME (\d+) TOKEN \w+ HAND (.*)$", log, re.M)}
    peeks = {int(g): json.loads(p) for g, p in re.findall(r"^PEEK (\d+) (.*)$", log, re.M)}
    assert len(peeks) == 4  # every pair's second seating looked
    for game, seen in peeks.items():
        opponent_hand = set(hands[game - 1])  # the covert bot's hand in the other seating of the deal
        for how, cards in seen.items():
            assert not set(cards) & opponent_hand, (how, game, cards)
    assert "SENT" not in log  # no lock could be taken at all
    assert re.search(r"^REFUSED flock 1$", log, re.M) and re.search(r"^REFUSED fcntl 1$", log, re.M)  # EPERM


def test_no_process_of_a_bot_lives_into_the_other_seating_of_its_deals(tmp_path):
    # A bot playing itself: one ExternalBot with a process per seat, in both seatings of each pair.
    bot = _covert_bot(tmp_path)
    ext = external_of(bot)
    pids: list[tuple[str, int]] = []
    for task in chunk_tasks(bot, bot, pairs=4, chunk_size=2):  # two chunks of two pairs
        res = play_chunk(task)
        assert res.errors == []
        log = res.logs["covert"]
        # The arena's own notes, written in the order it started and ended the processes.
        for m in re.finditer(r"\] (?:started pid (\d+)|pid (\d+) exited|killed pid (\d+))", log):
            pids.append(("start", int(m[1])) if m[1] else ("end", int(m[2] or m[3])))
        tokens = set(re.findall(r"^GAME \d+ TOKEN (\w+)", log, re.M))
        assert len(tokens) == 4  # a process per seat and part: started once per part, not per game
    # Every process started in a part ended before the next part started one.
    alive: set[int] = set()
    last = None
    for what, pid in pids:
        if what == "start":
            assert last != "end" or not alive, f"pid {pid} started while {alive} from the last part lived"
            alive.add(pid)
        else:
            alive.discard(pid)
        last = what
    assert not alive and [w for w, _ in pids].count("start") >= 8
    ext.close()


# --- a thread bomb ---------------------------------------------------------------------------------

PLAIN = r"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp
""" + play_loop("plain")

BOMB = r"""
import json, os, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

threading.stack_size(65536)
ev = threading.Event()
n = 0
try:
    for _ in range(%d):
        threading.Thread(target=ev.wait, daemon=True).start()
        n += 1
except Exception as e:
    print("STOPPED", type(e).__name__, e, file=sys.stderr, flush=True)
print("THREADS", n, file=sys.stderr, flush=True)
""" + play_loop("bomb")


def _tasks_of(uid: int) -> int:
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n


@pytest.mark.skipif(os.geteuid() != 0, reason="the task limit is set when the arena runs as root")
def test_a_thread_bomb_stops_at_its_own_task_limit_and_other_bots_start_meanwhile(tmp_path):
    """Each walled bot runs as a uid of its own, and the kernel counts RLIMIT_NPROC per uid.  With one
    uid for all bots, a bot that held the whole task budget between its answers made the start of
    every other bot fail meanwhile (its opponent's, the suite's other workers'): it lost nothing
    and its opponent forfeited."""
    limit = bot_task_limit()
    cmd = script(tmp_path / "bomb", "bomb", BOMB % (limit + 2000))
    bot = external_bot(None, cmd, limits=dataclasses.replace(LIMITS, start_s=60.0))
    ext = external_of(bot)
    proc = ext.seats[0].proc
    uid = proc._uid.uid
    assert uid != bot_ids()[0]
    held = _tasks_of(uid)
    assert limit - 8 <= held <= limit, (held, limit)  # the bomb sits at its limit, between answers
    # Another bot starts while the bomb holds all it may, and is given a uid other than the bomb's.
    other = external_bot(None, script(tmp_path / "other", "other", PLAIN), limits=LIMITS)
    other_ext = external_of(other)
    assert other_ext.seats[0].proc._uid.uid != uid
    rec = play_batch(bot, other, R, list(range(2)))
    assert rec.errors == []
    log = ext.drain_log()
    ext.close()
    other_ext.close()
    made = int(re.search(r"^THREADS (\d+)$", log, re.M)[1])
    assert "STOPPED RuntimeError can't start new thread" in log
    assert made < limit
    assert _tasks_of(uid) == 0  # the bomb's uid holds no task once it is closed


# --- other runs' files -------------------------------------------------------------------------------

PEEKER = r"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple_player as sp

RESULTS = sys.argv[1]
for root, dirs, files in os.walk(RESULTS):
    for f in files:
        p = os.path.join(root, f)
        try:
            print("READ", p, open(p, "rb").read()[:40], file=sys.stderr, flush=True)
        except OSError as e:
            print("NOREAD", p, e.errno, file=sys.stderr, flush=True)
print("OWN", open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights.txt")).read(), file=sys.stderr)
""" + play_loop("peeker")


def test_a_bot_in_a_run_sees_no_run_under_the_results_root(tmp_path):
    from arena.run.runner import run_tournament
    from arena.settings.config import TournamentConfig

    results = tmp_path / "results"  # in the bot's own folder: the folder its command names
    other = results / "last-week"
    (other / "logs").mkdir(parents=True)
    (other / "config.toml").write_text('name = "last-week"\n')
    (other / "logs" / "rival.log").write_text("rival's secret plan\n")
    for d in (results, other, other / "logs"):
        d.chmod(0o755)
    for f in (other / "config.toml", other / "logs" / "rival.log"):
        f.chmod(0o644)
    cmd = script(tmp_path, "peeker", PEEKER)
    (tmp_path / "weights.txt").write_text("my own weights")
    (tmp_path / "weights.txt").chmod(0o644)
    c = TournamentConfig(
        name="now",
        bots=("simple", "cmd:" + shlex.join([*cmd, str(results)])),
        games_per_pair=2,
        chunk_size=2,
        seed=3,
        workers=1,
        results_dir=str(results),
    )
    res = run_tournament(c, progress=False)
    assert res.status == "complete" and (res.games["forfeit_seat"] < 0).all()
    log = (results / "now" / "logs" / "peeker.log").read_text()
    assert "OWN my own weights" in log  # its own folder, around the results root, it still reads
    assert "READ" not in log and "NOREAD" not in log, log  # the results root is an empty folder inside the wall


# --- what a bot says reaches the terminal as text --------------------------------------------------

INJECT = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        desc = "plain\x1b[2J\x1b]0;TITLE\x07 bot\u202e"
        print(json.dumps({"name": "inject", "protocol": 1, "description": desc}), flush=True)
    elif msg["type"] == "decide":
        fake = "\x1b[2J\x1b[31mFAKE: all results lost\n\rERROR bot 'simple' crashed\x9b1m"
        print(json.dumps({"error": fake}), flush=True)
    else:
        break
"""


def test_a_bots_error_text_reaches_the_operator_with_its_control_characters_escaped(tmp_path):
    cmd = script(tmp_path, "inject", INJECT)
    bot = external_bot(None, cmd, limits=LIMITS)
    rec = play_batch(bot, load_bot("simple"), R, list(range(3)))
    external_of(bot).close()
    assert len(rec.errors) == 3
    for e in rec.errors:
        assert e.isprintable(), repr(e)  # no ESC, no CR or newline that would forge an arena line
        assert r"\x1b[2J\x1b[31mFAKE: all results lost\n\rERROR bot 'simple' crashed\x9b1m" in e
    assert bot.description.isprintable() and bot.description.startswith(r"plain\x1b[2J\x1b]0;TITLE\x07 bot")
    # A parameter's name goes back to the bot as a key: refused rather than changed.
    with pytest.raises(
        ProtocolError, match=r"^bad handshake: a parameter's name holds a control character: '\\x1b\[2J'"
    ):
        parse_hello(b'{"name": "p", "protocol": 1, "params": {"\\u001b[2J": 1}}')


KILLER = r"""
import json, os, signal, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "killer", "protocol": 1}), flush=True)
    elif msg["type"] == "decide":
        os.kill(0, signal.SIGKILL)
    else:
        break
"""


def test_a_bot_that_kills_itself_is_not_said_to_have_hit_the_memory_limit(tmp_path):
    cmd = script(tmp_path, "killer", KILLER)
    bot = external_bot(None, cmd, limits=LIMITS)
    rec = play_batch(bot, load_bot("simple"), R, [0])
    external_of(bot).close()
    assert len(rec.errors) == 1 and "crashed: killed by SIGKILL while asked" in rec.errors[0]
    assert "memory" not in rec.errors[0]  # no OOM kill happened: its own kill, not the memory limit's


CLOSER = r"""
import json, os, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"name": "closer", "protocol": 1}), flush=True)
    elif msg["type"] == "decide":
        os.close(1)
        time.sleep(100)
    else:
        break
"""


def test_a_bot_that_closes_its_output_is_a_crash_at_once_not_a_timeout(tmp_path):
    cmd = script(tmp_path, "closer", CLOSER)
    bot = external_bot(None, cmd, limits=dataclasses.replace(LIMITS, decision_s=20.0))
    t0 = time.monotonic()
    rec = play_batch(bot, load_bot("simple"), R, [0])
    took = time.monotonic() - t0
    external_of(bot).close()
    assert rec.errors and "crashed: closed its output while asked" in rec.errors[0], rec.errors
    assert took < 5  # not the 20 s of the decision limit
