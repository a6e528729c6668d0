"""The wall: each attack of its threat model, tried as a hostile bot would, fails in a ``cmd:`` and a sandboxed bot.

The attacker is one piece of Python (:data:`ATTACKS`): run as a ``cmd:``
program it answers a request line with the result of each attempt; loaded
as a sandboxed bot file it makes the same attempts at import time and
prints the results to stderr, which the arena keeps in the bot's log.  A
result is ``"OK"`` when the attempt worked, else the error's name.

These tests need the wall (bubblewrap and namespaces); where it can't be
built they skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from arena.botkit.bot import bot_cache_dir
from arena.engine._jit import cache_dir, lock_file
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import Limits, external_bot, external_of, sandboxed_bot
from arena.external.limits import _RET_ALLOW, build_filter, filter_allows
from arena.external.process import BotProcess, LogBuffer
from arena.external.wall import (
    DEFAULT_BOT_ID,
    PID_IN_WALL,
    UID_POOL_BASE,
    UID_POOL_SIZE,
    python_paths,
    wall_problem,
)
from arena.loading.load import load_bot
from arena.settings.rules import Rules

PROBLEM = wall_problem()
if PROBLEM is not None and os.environ.get("CI") == "true":
    raise AssertionError(f"CI must build the bot sandbox: {PROBLEM}")
needs_wall = pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")

ATTACKS = r"""
import ctypes, errno, fcntl, json, os, signal, socket, struct, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sys_call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "OK" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def attempt(fn):
    try:
        out = fn()
        return "OK" if out is None else out
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__
    except Exception as exc:
        return type(exc).__name__


def read(path):
    with open(path, "rb") as f:
        f.read(16)


def write(path):
    with open(path, "ab") as f:
        f.write(b"x")


HELD = []


def hold(path):  # an arena compile lock (flock needs only a read-only file): its compiles would wait on us
    f = open(path, "rb")
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    HELD.append(f)


def connect(port):
    s = socket.socket()
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    s.sendall(b"the bot was here")
    s.close()


def run_attacks(ctx):
    arena, other, run = ctx["arena_pid"], ctx["other_pid"], ctx["run_dir"]
    buf = ctypes.create_string_buffer(128)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 16)
    how = struct.pack("=QQQ", os.O_WRONLY | os.O_CREAT, 0o644, 0)
    how_buf = ctypes.create_string_buffer(how)
    target_buf = ctypes.create_string_buffer(os.path.join(run, "chunks", "c0.parquet").encode())
    r = {
        "io_uring_setup": sys_call(425, 8, ctypes.addressof(buf)),
        "rt_sigqueueinfo": sys_call(129, arena, signal.SIGKILL, ctypes.addressof(buf)),
        "rt_tgsigqueueinfo": sys_call(297, arena, arena, signal.SIGKILL, ctypes.addressof(buf)),
        "kill_parent": attempt(lambda: os.kill(arena, signal.SIGKILL)),
        "kill_ppid": attempt(lambda: os.kill(os.getppid(), signal.SIGKILL)),
        "kill_pid_1": attempt(lambda: os.kill(1, signal.SIGKILL)),
        "kill_other_bot": attempt(lambda: os.kill(other, signal.SIGKILL)),
        "ptrace": sys_call(101, 16, arena, 0, 0),  # PTRACE_ATTACH
        "process_vm_readv": sys_call(310, arena, ctypes.addressof(iov), 1, ctypes.addressof(iov), 1, 0),
        "openat2_write": sys_call(437, -100, ctypes.addressof(target_buf), ctypes.addressof(how_buf), 24),
        "read_seed": attempt(lambda: read(os.path.join(run, "seed.secret"))),
        "hold_compile_lock": attempt(lambda: hold(ctx["lock"])),
        "list_run_folder": attempt(lambda: os.listdir(run)),
        "write_chunk": attempt(lambda: write(os.path.join(run, "chunks", "c0.parquet"))),
        "read_arena_cmdline": attempt(lambda: read(f"/proc/{arena}/cmdline")),
        "read_other_bot_mem": attempt(lambda: read(f"/proc/{other}/mem")),
        "read_root_home": attempt(lambda: sorted(os.listdir("/root"))),
        "read_shadow": attempt(lambda: read("/etc/shadow")),
        "read_passwd": attempt(lambda: read("/etc/passwd")),
        "read_home": attempt(lambda: os.listdir("/home")),
        "utime": attempt(lambda: os.utime(sys.executable, (0, 0))),
        "setxattr": attempt(lambda: os.setxattr("/tmp", "user.x", b"1")),
        "unshare_user": sys_call(272, 0x10000000),
        "fork": attempt(lambda: os._exit(0) if os.fork() == 0 else None),
        "connect_loopback": attempt(lambda: connect(ctx["port"])),
        "symlink_log": attempt(lambda: os.symlink("/etc/passwd", os.path.join(run, "logs", "bot.log"))),
        "symlink_tmp": attempt(lambda: os.symlink("/etc/passwd", "/tmp/x")),
        "memfd_create": sys_call(319, ctypes.addressof(buf), 0),
        "mount": sys_call(165, 0, 0, 0, 0, 0),
    }
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
    r["facts"] = {
        "pids": pids,
        "pid": os.getpid(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "cap_eff": status["CapEff"].strip(),
        "cap_bnd": status["CapBnd"].strip(),
        "no_new_privs": status["NoNewPrivs"].strip(),
        "seccomp": status["Seccomp"].strip(),
        "root_entries": sorted(os.listdir("/")),
        "tmp_entries": sorted(os.listdir("/tmp")),
        "env_keys": sorted(os.environ),
        "dont_write_bytecode": sys.dont_write_bytecode,
    }
    return r
"""

CMD_BOT = (
    ATTACKS
    + r"""
inp, out = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    msg = json.loads(line)
    if msg.get("type") == "bye":
        break
    if msg.get("type") == "attack":
        out.write(json.dumps(run_attacks(msg)).encode() + b"\n")
    else:
        out.write(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    out.flush()
"""
)

#: A sandboxed bot file: attacks at import time, reports on stderr, then plays like simple.
FILE_BOT = (
    ATTACKS
    + r"""
CTX = {ctx}
print("ATTACKS " + json.dumps(run_attacks(CTX)), file=sys.stderr)

from bots.simple import take_upcard, draw, big_gin, discard, knock  # noqa: E402,F401
"""
)

R = rules_array(Rules())
DENIED = {"EPERM", "EACCES", "ENOENT", "ESRCH", "EROFS", "ENOSYS"}


@pytest.fixture()
def run_dir(tmp_path):
    """A run folder like the arena's: a 0600 seed, chunks and logs."""
    run = tmp_path / "runs" / "r1"
    (run / "chunks").mkdir(parents=True)
    (run / "logs").mkdir()
    seed = run / "seed.secret"
    seed.write_text("123456789\n")
    seed.chmod(0o600)
    (run / "chunks" / "c0.parquet").write_bytes(b"PAR1 data")
    (run / "logs" / "bot.log").write_text("")
    return run


def _engine_lock() -> str:
    """The compile lock of the engine's batch kernel, which this process took when it imported the engine."""
    path = lock_file("arena.engine.play.play_games_kernel")
    assert path.is_file(), path
    return str(path)


def _check(r: dict, run_dir, listener_got) -> None:
    home = r.pop("read_root_home")
    if isinstance(home, list):  # only the way to the interpreter and the caches it was given, if they lie there
        bound = [*python_paths(), str(bot_cache_dir()), str(cache_dir())]
        allowed = {Path(p).parts[2] for p in bound if Path(p).parts[:2] == ("/", "root") and len(Path(p).parts) > 2}
        assert set(home) <= allowed, home
    attempts = {k: v if isinstance(v, str) else f"OK {v}" for k, v in r.items() if k != "facts"}
    worked = {k: v for k, v in attempts.items() if v not in DENIED}
    assert not worked, f"attacks that were not refused: {worked}"
    for name in ("io_uring_setup", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "ptrace", "process_vm_readv"):
        assert attempts[name] == "EPERM", (name, attempts[name])  # refused by the allow-list itself
    for name in ("openat2_write", "unshare_user", "utime", "setxattr", "fork", "memfd_create", "mount"):
        assert attempts[name] == "EPERM", (name, attempts[name])
    # The allow-list refuses flock itself, and the arena's compile locks are not even shown to a bot.
    assert attempts["hold_compile_lock"] == "ENOENT", attempts["hold_compile_lock"]
    f = r["facts"]
    assert f["pid"] == PID_IN_WALL and set(f["pids"]) <= {1, PID_IN_WALL}, f["pids"]  # sees no other process
    assert f["cap_eff"] == "0000000000000000" and f["no_new_privs"] == "1" and f["seccomp"] == "2"
    if os.geteuid() == 0:
        # a uid of its own from the pool (no account's), the bots' group, no other group
        assert UID_POOL_BASE <= f["uid"] < UID_POOL_BASE + UID_POOL_SIZE
        assert (f["gid"], f["groups"]) == (DEFAULT_BOT_ID, [])
        assert f["cap_bnd"] == "0000000000000000"
    else:  # a user's own uid, in a user namespace that may make no other (tests/bots/test_wall_as_a_user.py)
        assert f["uid"] == os.getuid() != 0 and f["gid"] == os.getgid()
    assert "HOME" in f["env_keys"]
    assert f["dont_write_bytecode"] is True  # a Python bot does not try to write into the read-only wall
    assert not [k for k in f["env_keys"] if "TOKEN" in k or "SECRET" in k or k.startswith("SSH")]
    # Nothing changed on the arena's side.
    assert (run_dir / "seed.secret").read_text() == "123456789\n"
    assert (run_dir / "chunks" / "c0.parquet").read_bytes() == b"PAR1 data"
    assert not (run_dir / "logs" / "bot.log").is_symlink()
    assert listener_got == []


@needs_wall
def test_every_attack_fails_against_a_cmd_bot(tmp_path, run_dir, listener):
    script = tmp_path / "hostile.py"
    script.write_text(CMD_BOT)
    port, got = listener
    log_a, log_b = LogBuffer(1 << 16), LogBuffer(1 << 16)
    a = BotProcess([sys.executable, str(script)], str(tmp_path), Limits(), log_a)
    b = BotProcess([sys.executable, str(script)], str(tmp_path), Limits(), log_b)
    try:
        assert json.loads(b.request(b'{"type":"pid"}\n', 30, "pid")) == {"pid": PID_IN_WALL}
        ctx = {"type": "attack", "arena_pid": os.getpid(), "other_pid": b.pid, "run_dir": str(run_dir), "port": port}
        ctx["lock"] = _engine_lock()
        r = json.loads(a.request(json.dumps(ctx).encode() + b"\n", 60, "attacks"))
        assert b.proc.poll() is None  # the other bot is alive
    finally:
        a.close()
        b.close()
    _check(r, run_dir, got)


@needs_wall
def test_every_attack_fails_against_a_sandboxed_bot_file(tmp_path, run_dir, listener):
    port, got = listener
    other = external_bot(None, [sys.executable, "examples/external/simple_player.py"])
    other_pid = external_of(other).seats[0].proc.pid
    ctx = {"arena_pid": os.getpid(), "other_pid": other_pid, "run_dir": str(run_dir), "port": port}
    ctx["lock"] = _engine_lock()
    path = tmp_path / "hostile_bot.py"
    path.write_text(FILE_BOT.replace("{ctx}", repr(ctx)))
    try:
        boxed = sandboxed_bot(path)
        log = external_of(boxed).drain_log()
        line = next(x for x in log.splitlines() if x.startswith("ATTACKS "))
        r = json.loads(line[len("ATTACKS ") :])
        assert external_of(other).seats[0].proc.proc.poll() is None
        rec = play_batch(boxed, load_bot("simple"), R, np.arange(4))  # it still plays
        assert rec.errors == []
    finally:
        external_of(other).close()
    external_of(boxed).close()
    _check(r, run_dir, got)


@needs_wall
def test_a_java_bot_runs_inside_the_wall(tmp_path):
    """The allow-list is enough for a JVM: threads, signals to itself, its memory maps."""
    import shutil
    import subprocess

    if shutil.which("javac") is None:
        if os.environ.get("CI") == "true":
            raise AssertionError("CI must have javac")
        pytest.skip("javac not found")
    tmp_path.chmod(0o755)  # the bot's user must be able to read its classes (pytest makes it 0700)
    subprocess.run(["javac", "-d", str(tmp_path), "examples/external/SimplePlayer.java"], check=True, timeout=300)
    cmd = ["java", "-Xmx64m", "-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=64m"]
    cmd += ["-XX:ReservedCodeCacheSize=64m", "-cp", str(tmp_path), "SimplePlayer"]
    bot = external_bot(None, cmd)
    simple = load_bot("simple")
    rec = play_batch(bot, simple, R, np.arange(6))
    ref = play_batch(simple, simple, R, np.arange(6))
    external_of(bot).close()
    assert rec.errors == [] and np.array_equal(rec.games, ref.games)


@needs_wall
def test_a_bot_cannot_read_the_seed_so_a_seed_cheat_plays_like_its_honest_twin(tmp_path, run_dir):
    """The secret-seed cheat: it looks for seed.secret; inside the wall it finds nothing."""
    body = textwrap.dedent(
        f"""
        import os, sys
        FOUND = []
        for path in ({str(run_dir / "seed.secret")!r}, "/proc/1/cmdline", "/proc/self/../1/environ"):
            try:
                FOUND.append(open(path).read()[:40])
            except OSError as exc:
                print("no", path, type(exc).__name__, file=sys.stderr)
        print("FOUND " + repr(FOUND), file=sys.stderr)
        from bots.simple import take_upcard, draw, big_gin, discard, knock  # noqa: E402,F401
        """
    )
    path = tmp_path / "seed_cheat.py"
    path.write_text(body)
    boxed = sandboxed_bot(path)
    log = external_of(boxed).drain_log()
    found = next(line for line in log.splitlines() if line.startswith("FOUND "))
    assert "123456789" not in found and "runs" not in found, found  # neither the seed nor where the run is
    assert f"no {run_dir / 'seed.secret'} FileNotFoundError" in log
    simple = load_bot("simple")
    seeds = np.arange(30)
    ours = play_batch(boxed, simple, R, seeds)
    ref = play_batch(simple, simple, R, seeds)
    external_of(boxed).close()
    assert np.array_equal(ours.games, ref.games)  # exactly the honest twin's games


def test_the_allow_list_refuses_each_attack_call_and_allows_what_a_bot_needs():
    """The filter itself, run on each call (no namespaces needed): this runs everywhere."""
    prog = build_filter(Limits(), PID_IN_WALL)
    eperm = 0x00050000 | 1
    for nr in (425, 426, 427, 129, 297, 101, 310, 311, 437, 132, 235, 280, 188, 189, 190, 272, 308, 165, 57, 58, 41):
        assert filter_allows(prog, nr) == eperm, nr
    assert filter_allows(prog, 62, (PID_IN_WALL, 9)) == _RET_ALLOW  # kill itself
    assert filter_allows(prog, 62, (1, 9)) == eperm  # kill anyone else
    assert filter_allows(prog, 234, (PID_IN_WALL, 5, 10)) == _RET_ALLOW  # a JVM signalling its own thread
    assert filter_allows(prog, 56, (0x00010000 | 0x100,)) == _RET_ALLOW  # clone a thread
    assert filter_allows(prog, 56, (17,)) == eperm  # clone a process (SIGCHLD)
    assert filter_allows(prog, 257, (0, 0, os.O_RDONLY)) == _RET_ALLOW
    assert filter_allows(prog, 257, (0, 0, os.O_WRONLY)) == 0x00050000 | 13  # EACCES
    assert filter_allows(prog, 16, (1, 0x5401)) == _RET_ALLOW  # ioctl TCGETS
    assert filter_allows(prog, 16, (1, 0x5412)) == eperm  # ioctl TIOCSTI
    for nr in (0, 1, 202, 9, 10, 11, 231, 60, 318):
        assert filter_allows(prog, nr) == _RET_ALLOW, nr


def test_the_weak_sandbox_is_chosen_only_explicitly():
    assert Limits().sandbox == "wall"
    with pytest.raises(ValueError, match="sandbox must be one of wall, weak"):
        Limits(sandbox="none")


@needs_wall
def test_check_bot_runs_the_bot_in_the_wall_and_lists_the_calls_the_sandbox_refused(tmp_path):
    import shutil

    from arena.loading.check import check_bot, refused_calls

    if shutil.which("strace") is None:
        if os.environ.get("CI") == "true":
            raise AssertionError("CI must have strace (apt-get install strace)")
        pytest.skip("strace not found")
    tmp_path.chmod(0o755)
    example = Path("examples/external/simple_player.py").read_text()
    bot = tmp_path / "nosy.py"
    prelude = "import os, socket\nfor f in (socket.socket, lambda: os.mkdir('/tmp/x')):\n"
    prelude += "    try:\n        f()\n    except OSError:\n        pass\n"
    bot.write_text(prelude + example)
    report = check_bot(f"cmd:{sys.executable} {bot}", games=2, limits=Limits(), echo=None)
    line = next(x for x in report.lines if x[1] == "syscalls")
    assert line[0] == "WARN" and "socket x" in line[2] and "mkdir x" in line[2], line
    assert report.passed  # a refused call is a warning: the bot played
    # the parser: bwrap's set-up and the kernel's refusals of allowed calls are not counted
    trace = (
        "10 unshare(CLONE_NEWCGROUP) = -1 EPERM (x)\n"
        '[pid 11] io_uring_setup(8, 0x1) = -1 EPERM (x)\n11 openat(AT_FDCWD, "/a", O_WRONLY) = -1 EACCES (x)\n'
        "11 read(3, 0x0, 1) = -1 EPERM (x)\n11 kill(1, SIGKILL) = -1 EPERM (x)\n"
        '12 openat(AT_FDCWD, "/proc/self/coredump_filter", O_RDWR) = -1 EACCES (x)\n'  # the Java VM's own
        '12 openat(AT_FDCWD, "/proc/self/coredump", O_RDWR) = -1 EACCES (x)\n'  # a look-alike counts
        '12 mkdir("/proc/self/coredump_filter", 0777) = -1 EPERM (x)\n'  # the path hides no other call
    )
    assert refused_calls(trace) == {"io_uring_setup": 1, "openat": 2, "kill": 1, "mkdir": 1}


PEEKER = r"""
import json, os, sys
for path in PATHS:
    try:
        print("PEEK", path, len(open(path).read()), file=sys.stderr)
    except OSError as exc:
        print("PEEK", path, type(exc).__name__, file=sys.stderr)
sys.stderr.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"name": "peeker", "protocol": 1}), flush=True)
    elif m["type"] == "decide":
        print(m["hand"][0] if m["decision"] == "discard" else 0, flush=True)
"""


@needs_wall
def test_a_cmd_bot_cannot_read_the_other_bots_files_beside_it(tmp_path):
    """A class's submissions in one folder: the wall shows a command the folder of its script, so it saw
    every other submission there (and below it).  Each other bot's file is covered; its own is not."""
    from arena.run.runner import run_tournament

    subs = tmp_path / "submissions"
    (subs / "deeper").mkdir(parents=True)
    simple_copy = Path("bots/TEMPLATE.py").read_text()
    (subs / "alice.py").write_text(simple_copy)
    (subs / "deeper" / "bob.py").write_text(simple_copy)
    own, alice, bob = subs / "peeker.py", subs / "alice.py", subs / "deeper" / "bob.py"
    link = subs / "notes.txt"  # another name for alice's file, beside the peeker
    link.symlink_to(alice)
    peeker = f"PATHS = {[str(alice), str(bob), str(link), str(own)]!r}\n" + PEEKER
    own.write_text(peeker)
    for p in [tmp_path, *subs.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o005)
    config = {
        "name": "peek",
        "bots": [f"sandbox:{alice}", f"cmd:{sys.executable} {own}", f"sandbox:{bob}"],
        "games_per_pair": 2,
        "workers": 1,
        "results_dir": str(tmp_path / "results"),
    }
    res = run_tournament(config, progress=False)
    assert res.status == "complete" and res.games["forfeit_seat"].eq(-1).all()  # the file bots still play
    log = (tmp_path / "results" / "peek" / "logs" / "peeker.log").read_text()
    peeks = [line for line in log.splitlines() if line.startswith("PEEK ")]
    assert {line.split()[1] for line in peeks} == {str(alice), str(bob), str(link), str(own)}, log
    for line in peeks:
        path, what = line.split()[1:]
        if path == str(own):
            assert what == str(len(peeker)), line  # its own script, as before
        else:
            assert what in ("PermissionError", "FileNotFoundError"), line
