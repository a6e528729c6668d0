"""Hostile bots behind the real wall, on angles the other wall tests do not take: a handshake built
to break the arena's own parsing, and kernel memory held through file descriptors, past ``memory_mb``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena.botkit.bot import BotError
from arena.external import Limits, external_bot
from arena.external.process import BotProcess, ExternalBotError, LogBuffer, start_and_handshake
from arena.external.protocol import ProtocolError, parse_hello
from arena.external.wall import wall_problem

PROBLEM = wall_problem()
if PROBLEM is not None and os.environ.get("CI") == "true":
    raise AssertionError(f"CI must build the bot sandbox: {PROBLEM}")
needs_wall = pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")

#: A bot whose hello names a parameter with an integer of 400 digits: valid JSON, a number, finite.
HUGE_PARAM = r"""
import json, sys
for line in sys.stdin:
    if json.loads(line).get("type") == "hello":
        sys.stdout.write('{"name": "huge", "protocol": 1, "params": {"k": 1' + "0" * 400 + '}}\n')
        sys.stdout.flush()
"""


def _walled(folder, name: str, source: str, limits: Limits | None = None, *args: str) -> tuple[BotProcess, LogBuffer]:
    """``source`` saved as ``<name>.py`` in ``folder`` and started in the wall (no handshake), with its log."""
    folder.chmod(0o755)
    script = folder / f"{name}.py"
    script.write_text(source)
    log = LogBuffer(1 << 16)
    return BotProcess([sys.executable, str(script), *args], str(folder), limits or Limits(), log), log


def _bot_processes(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if marker in line and " Z" not in line and "ps -eo" not in line]


@needs_wall
def test_a_hello_with_a_parameter_too_big_for_a_float_is_a_bad_handshake_and_leaves_no_process(tmp_path):
    """``math.isfinite`` of a 400-digit integer raises OverflowError: the load died with a traceback
    (the whole run with it) and the bot's process was never killed."""
    with pytest.raises(ProtocolError, match="^bad handshake: params"):
        parse_hello(b'{"name": "huge", "protocol": 1, "params": {"k": 1' + b"0" * 400 + b"}}")
    tmp_path.chmod(0o755)
    script = tmp_path / "huge_param_bot.py"
    script.write_text(HUGE_PARAM)
    with pytest.raises((ExternalBotError, BotError), match="bad handshake"):
        external_bot(None, [sys.executable, str(script)], str(tmp_path), Limits())
    assert _bot_processes(str(script)) == []
    log = LogBuffer(1 << 16)
    with pytest.raises(ExternalBotError, match="^bad handshake: params"):
        start_and_handshake([sys.executable, str(script)], str(tmp_path), Limits(), log)
    assert _bot_processes(str(script)) == []


#: A bot that holds kernel memory, which ``memory_mb`` (an address-space limit) does not count: it
#: raises its open-files limit as far as it may, then fills the buffers of AF_UNIX socket pairs (the
#: one socket call the allow-list keeps, for the JVM) until no more can be made, or 300 MB are held.
FD_HOARDER = r"""
import ctypes, json, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
except (OSError, ValueError):
    pass
held, pairs, why = 0, 0, ""
chunk = b"x" * 65536
while held < 300 << 20:
    sv = (ctypes.c_int * 2)()
    if libc.socketpair(1, 1 | os.O_NONBLOCK, 0, sv) != 0:
        why = os.strerror(ctypes.get_errno())
        break
    pairs += 1
    for fd in sv:
        while True:
            try:
                held += os.write(fd, chunk)
            except BlockingIOError:
                break
limit = resource.getrlimit(resource.RLIMIT_NOFILE)
for line in sys.stdin:
    if json.loads(line).get("type") == "hello":
        print(json.dumps({"name": "hoarder", "protocol": 1, "description": json.dumps([held, pairs, why, limit])}))
        sys.stdout.flush()
"""


@needs_wall
def test_a_bot_cannot_hold_kernel_memory_past_its_limit_through_open_files(tmp_path):
    """Buffered pipe and socket data is kernel memory, outside the address space that ``memory_mb``
    bounds: with the open-files limit the arena inherited (often 2^20 in a container, which the bot
    could raise its own soft limit to), 1000 socket pairs held 465 MB for a bot of memory_mb = 64, and
    more would exhaust the machine.  The wall bounds the bot's open files, and so that memory."""
    tmp_path.chmod(0o755)
    script = tmp_path / "fd_hoarder.py"
    script.write_text(FD_HOARDER)
    log = LogBuffer(1 << 16)
    proc, hello = start_and_handshake([sys.executable, str(script)], str(tmp_path), Limits(memory_mb=64), log)
    proc.close()
    held, pairs, why, limit = json.loads(hello["description"])
    assert why == "Too many open files", (held, pairs, why, limit)  # stopped by the limit, not by the bot
    assert held < 128 << 20, f"{held >> 20} MB held in {pairs} socket pairs (open-files limit {limit})"


#: A bot that answers its first question twice, the second copy a little later: a line nobody asked for.
ANSWERS_TWICE = r"""
import sys, time
sys.stdin.readline()
print("1", flush=True)
time.sleep(0.2)
print("1", flush=True)
for line in sys.stdin:
    print("0", flush=True)
"""


@needs_wall
def test_a_line_written_before_the_question_is_a_garbled_answer_not_the_next_answer(tmp_path):
    """A bot that answers twice (or answers a ``hand_over``, which wants no answer) left a line in the
    pipe, and the arena read it as the answer to its next question: a move the bot never chose for that
    decision, or a forfeit whose reason named the wrong answer ("answer must be 0 or 1 in draw()
    (answered 20)").  A line waiting before a question is asked is a garbled answer, said as such."""
    import time

    proc, _ = _walled(tmp_path, "answers_twice", ANSWERS_TWICE)
    try:
        assert proc.request(b'{"type":"decide"}\n', 30, "draw()") == b"1"
        time.sleep(0.6)  # the second copy has come by now
        with pytest.raises(ExternalBotError, match=r"^garbled answer: take_upcard\(\): .*before it was asked"):
            proc.request(b'{"type":"decide"}\n', 30, "take_upcard()")
        assert not proc.alive
    finally:
        proc.kill()


#: A bot that writes to stderr without end, as fast as it can, and otherwise answers (slowly, in time).
STDERR_FLOOD = r"""
import json, os, sys, threading

def flood():
    junk = b"x" * 65536
    while True:
        os.write(2, junk)

threading.Thread(target=flood, daemon=True).start()
for line in sys.stdin:
    if json.loads(line).get("type") == "hello":
        print(json.dumps({"name": "flood", "protocol": 1}), flush=True)
"""


@needs_wall
def test_a_bot_flooding_its_stderr_costs_the_arena_little_cpu(tmp_path):
    """The log keeps 64 KiB, but the arena read all of a flood (some 3 GB/s) into it and threw it away:
    half a core of the worker's CPU for as long as the bot lived.  The watchdog measures a chunk by its
    worker's CPU time, so a bot that flooded while answering slowly, within its own limits, made its
    chunk "time out (CPU time of its worker)" and the run fail.  Past the log limit the rest is read at
    a bounded rate (the bot's writes wait, the arena's CPU does not go to them)."""
    import time

    tmp_path.chmod(0o755)
    script = tmp_path / "stderr_flood.py"
    script.write_text(STDERR_FLOOD)
    log = LogBuffer(1 << 16)
    proc, _ = start_and_handshake([sys.executable, str(script)], str(tmp_path), Limits(), log)
    try:
        time.sleep(0.5)
        cpu = time.process_time()
        time.sleep(2.0)
        used = time.process_time() - cpu
    finally:
        proc.kill()
    text = log.drain()
    assert "earlier bytes of output dropped (log limit)" in text and len(text) < 70_000
    assert used < 0.3, f"the arena used {used:.2f} s of CPU in 2 s reading a bot's stderr flood"


def test_an_answer_of_a_huge_integer_is_named_in_a_short_reason():
    """Valid JSON integers reach 4,300 digits; the reason quoted all of them ("draw() answered 1000...0,
    out of range"), into each forfeit's error text, the games table and the report."""
    from arena.external.protocol import parse_answer

    for line in (b"1" + b"0" * 4000, b'{"action": -' + b"9" * 4000 + b"}"):
        with pytest.raises(ProtocolError, match="^ill-typed answer: draw.. answered .*out of range") as err:
            parse_answer(line, "draw")
        assert len(str(err.value)) < 200, len(str(err.value))


#: A bot that writes to stderr what a terminal would obey (clear the screen, retitle the window, ring,
#: return to the line's start and write over it, reverse the text) and lines dressed as the arena's own,
#: one of them behind a NUL (the mark the log gives the arena's lines), then answers.
TERMINAL_TRICKS = r"""
import sys
sys.stderr.buffer.write(
    b"\x1b[2J\x1b]0;pwned\x07cleared\r[arena 12:00:00] killed pid 1 (timeout)\n"
    b"[arena 12:00:01] started pid 2: /bin/true\n"
    b"\x00[arena 12:00:02] exited (code 0)\n"
    + "\u202etxt.exe\x85\u2028[arena 12:00:03] exited (code 0)\n".encode()
)
sys.stderr.flush()
for line in sys.stdin:
    sys.stdout.write("1\n")
    sys.stdout.flush()
"""


@needs_wall
def test_a_bots_log_passes_on_no_terminal_escape_and_no_line_that_passes_for_the_arenas(tmp_path):
    """The log kept the bot's bytes as they came, and people read it with ``cat``: an ESC sequence
    cleared their screen or retitled the window, a carriage return wrote over a line, a bidirectional
    override showed text reversed, and a line starting ``[arena`` read as the arena's own note (a fake
    "killed", a fake "started")."""
    proc, log = _walled(tmp_path, "terminal_tricks", TERMINAL_TRICKS)
    try:
        assert proc.request(b'{"type":"decide"}\n', 30, "draw()") == b"1"
    finally:
        proc.kill("end of test")
    text = log.drain()
    for raw in ("\x1b", "\x07", "\r", "\x00", "\u202e", "\x85", "\u2028"):
        assert raw not in text, f"{raw!r} reached the log as it is"
    assert "\\x1b[2J\\x1b]0;pwned\\x07cleared\\r[arena 12:00:00]" in text
    assert "\\u202etxt.exe\\x85\\u2028[arena 12:00:03]" in text
    arena_lines = [line for line in text.splitlines() if line.startswith("[arena")]
    assert len(arena_lines) == 2 and "started pid" in arena_lines[0] and "killed pid" in arena_lines[1]
    assert "(bot) [arena 12:00:01] started pid 2" in text and "\\x00[arena 12:00:02]" in text


def test_an_arena_note_after_a_bots_unfinished_line_starts_a_line_of_its_own():
    """A bot's last words without a newline had the arena's note glued on ("warning: low on time[arena
    15:17:10] pid 7 exited"), and check-bot quoted that as the bot's last line on stderr."""
    log = LogBuffer(1 << 16)
    log.write(b"warning: low on time")
    log.note("pid 7 exited")
    log.write(b"done\n")
    log.note("pid 8 started")
    lines = log.drain().splitlines()
    assert lines[0] == "warning: low on time" and lines[1].endswith("] pid 7 exited")
    assert lines[2] == "done" and lines[3].endswith("] pid 8 started") and len(lines) == 4


#: A bot that writes 1 MiB blocks to /tmp until 200 MiB or an error, and says how far it got.
TMP_FILLER = r"""
import sys
for line in sys.stdin:
    n, why = 0, "done"
    try:
        with open("/tmp/big", "wb") as f:
            for _ in range(200):
                f.write(b"x" * (1 << 20))
                f.flush()
                n += 1
    except OSError as exc:
        why = f"errno {exc.errno}"
    sys.stderr.write(f"wrote {n} MiB: {why}\n")
    sys.stderr.flush()
    sys.stdout.write("1\n")
    sys.stdout.flush()
"""


@needs_wall
@pytest.mark.parametrize("file_writes", [True, False])
def test_the_walls_tmp_holds_tmp_mb_and_takes_writes_only_with_file_writes(tmp_path, file_writes):
    """The wall's /tmp is a tmpfs, kernel memory that ``memory_mb`` does not count, and bwrap sizes one
    at half the machine's memory: a bot allowed to write filled it without bound (as another user).
    As root the tmpfs was root's, so ``file_writes`` let the bot write nowhere at all.  Now /tmp holds
    ``tmp_mb`` MiB and is the bot's to write only with ``file_writes``."""
    import errno

    proc, log = _walled(tmp_path, "tmp_filler", TMP_FILLER, Limits(file_writes=file_writes, tmp_mb=16, memory_mb=0))
    try:
        assert proc.request(b'{"type":"decide"}\n', 60, "draw()") == b"1"
    finally:
        proc.kill()
    said = [line for line in log.drain().splitlines() if line.startswith("wrote")]
    if file_writes:
        assert said and said[-1].startswith("wrote 1") and said[-1].endswith(f"errno {errno.ENOSPC}"), said
        assert 14 <= int(said[-1].split()[1]) <= 16
    else:
        assert said == [f"wrote 0 MiB: errno {errno.EACCES}"] or said == [f"wrote 0 MiB: errno {errno.EPERM}"]


def test_tmp_mb_must_be_a_whole_number_of_mib_from_1_to_4096():
    for bad in (0, 4097, 1.5, True, "64"):
        with pytest.raises(ValueError, match="^limit tmp_mb must be an int from 1 to 4096"):
            Limits(tmp_mb=bad)


#: A bot that answers at once, and meanwhile keeps a thread busy (``BUSY`` = 1) or computes only while
#: asked, 0.2 s a question (``BUSY`` = 0).
BACKGROUND_SPINNER = r"""
import sys, threading, time
BUSY = int(sys.argv[1])

def spin():
    while True:
        pass

if BUSY:
    threading.Thread(target=spin, daemon=True).start()
for line in sys.stdin:
    if not BUSY:
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
    sys.stdout.write("1\n")
    sys.stdout.flush()
"""


@needs_wall
@pytest.mark.parametrize("busy", [1, 0])
def test_a_bot_that_keeps_the_cpu_busy_between_its_answers_is_stopped_one_busy_only_when_asked_is_not(
    tmp_path, monkeypatch, busy
):
    """Limits bounded a bot's memory, files and answers, not its CPU: a bot answering at once while its
    threads spun in the background took the cores its opponent answers on, until the opponent's answers
    ran out of time (its own forfeits the arena's win).  Now CPU used while not asked past a small
    allowance is a ``timeout``.  The allowance is lowered here (5 s and a quarter of the idle time by
    default) to keep the test short, and so that a spinner with a third of a core, on a loaded machine, is
    still caught."""
    import time

    from arena.external import process

    monkeypatch.setattr(process, "IDLE_CPU_S", 0.5)
    monkeypatch.setattr(process, "IDLE_CPU_SHARE", 0.05)
    proc, _ = _walled(tmp_path, "spinner", BACKGROUND_SPINNER, None, str(busy))
    answers = 0
    try:
        # The spinner is caught in about a second (give it 30 on a machine loaded five times over: it must
        # spin 0.5 s of CPU); the other gives its 8 answers, however loaded the machine.
        end = time.monotonic() + (30.0 if busy else 120.0)
        while time.monotonic() < end and (busy or answers < 8):
            if busy:
                time.sleep(0.2)  # the opponent's turn
            try:
                assert proc.request(b'{"type":"decide"}\n', 30, "draw()") == b"1"
            except ExternalBotError as exc:
                assert busy, f"a bot busy only while asked was stopped: {exc}"
                assert str(exc).startswith("timeout: after draw(): used ") and "not asked" in str(exc)
                assert not proc.alive
                break
            answers += 1
        else:
            assert not busy, f"a bot spinning between {answers} answers for 30 s was never stopped"
    finally:
        proc.kill()
    assert answers >= (1 if busy else 8)
