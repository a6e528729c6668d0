"""Faults of the machine and of the operator: one ``error:`` line, a distinct exit code, the real end in the
manifest, and after the fault is gone the same command ends with the same games as an uninterrupted run.

Exit codes: 1 chunks failed (or changed during the run), 2 bad input, 3 the environment (disk full, read-only,
scheduler lost), 130 interrupted (SIGINT or SIGTERM).  The disk-full and read-only tests mount a small tmpfs,
which needs root: they skip with that reason elsewhere, and never where CI=true.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import EXIT_ENV, EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, app
from arena.run import schedule
from arena.run.store import RunStore, StoreError
from tests.tables import same

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, results: Path, *, name="f", bots=("random", "simple"), games=200, chunk=20, workers=1):
    p = tmp_path / f"{name}.toml"
    p.write_text(
        f'name = "{name}"\nbots = {json.dumps(list(bots))}\ngames_per_pair = {games}\nchunk_size = {chunk}\n'
        f'seed = 9\nworkers = {workers}\nresults_dir = "{results}"\n'
    )
    return p


def _invoke(*args: str):
    return CliRunner().invoke(app, [*args], catch_exceptions=False)


def _one_error_line(output: str) -> str:
    """The output holds exactly one ``error:`` line and no traceback; returns that line."""
    assert "Traceback" not in output, output[-3000:]
    errors = [line.strip() for line in output.splitlines() if line.strip().startswith("error:")]
    assert len(errors) == 1, output[-3000:]
    return errors[0]


def _show(fault: str, code: int, line: str, *more: str) -> None:
    """Print what a fault showed (``pytest -rP`` lists it: the closing note's table of faults)."""
    print(f"FAULT | {fault} | exit {code} | {' / '.join(x for x in (line, *more) if x)}")


def _status(run_dir: Path) -> str:
    return json.loads((run_dir / "manifest.json").read_text())["status"]


def _temps(run_dir: Path) -> list[Path]:
    return [p for p in run_dir.rglob(".*.tmp*")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The games of an uninterrupted run of the config every test here plays."""
    tmp = tmp_path_factory.mktemp("ref")
    conf = _config(tmp, tmp / "results")
    out = _invoke("run", str(conf), "--quiet", "--no-report")
    assert out.exit_code == 0, out.output
    return RunStore(tmp / "results" / "f").games()


def _need_root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs these tests as root (they mount a tmpfs)")
        pytest.skip("mounting a tmpfs needs root")


@contextmanager
def _tmpfs(path: Path, size: str):
    _need_root()
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(mount: Path, leave: int) -> Path:
    """Fill a file system but for ``leave`` bytes."""
    st = os.statvfs(mount)
    free = st.f_bavail * st.f_frsize
    filler = mount / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, free - leave))
    return filler


def test_a_full_disk_is_one_line_exit_3_no_temp_file_and_the_rerun_gives_the_same_games(tmp_path, reference):
    with _tmpfs(tmp_path / "disk", "4m") as disk:
        conf = _config(tmp_path, disk / "results")
        filler = _fill(disk, 160 * 1024)  # room for the run's first chunks, not for all
        out = _invoke("run", str(conf), "--quiet", "--no-report")
        assert out.exit_code == EXIT_ENV, out.output
        line = _one_error_line(out.output)
        assert "the disk is full" in line and "cannot write" in line
        _show("disk full: arena run", out.exit_code, line)
        run_dir = disk / "results" / "f"
        assert not _temps(run_dir)
        assert _status(run_dir) == "failed"
        stored = RunStore(run_dir).n_games()
        assert 0 < stored < 400
        # Still full: the rerun and the report say so in one line too.
        again = _invoke("run", str(conf), "--quiet", "--no-report")
        assert again.exit_code == EXIT_ENV and "the disk is full" in _one_error_line(again.output)
        _show("disk full: the rerun, still full", again.exit_code, _one_error_line(again.output))
        rep = _invoke("report", str(run_dir))
        assert rep.exit_code == EXIT_ENV and "the disk is full" in _one_error_line(rep.output)
        _show("disk full: arena report", rep.exit_code, _one_error_line(rep.output))
        assert not _temps(run_dir)
        filler.unlink()
        done = _invoke("run", str(conf), "--quiet", "--no-report")
        assert done.exit_code == 0, done.output
        assert _status(run_dir) == "complete"
        assert same(RunStore(run_dir).games(), reference)


def test_a_read_only_folder_is_one_line_exit_3_for_report_run_and_submit(tmp_path, reference):
    with _tmpfs(tmp_path / "ro", "16m") as disk:
        conf = _config(tmp_path, disk / "results")
        assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
        run_dir = disk / "results" / "f"
        # submit with only games/ read-only: the new matchups can't be stored.
        games = run_dir / "games"
        subprocess.run(["mount", "--bind", str(games), str(games)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(games)], check=True)
            sub = _invoke("submit", "early-knock", "--to", str(run_dir), "--quiet")
            assert sub.exit_code == EXIT_ENV, sub.output
            assert "read-only" in _one_error_line(sub.output)
            _show("submit with a read-only games/", sub.exit_code, _one_error_line(sub.output))
            assert _status(run_dir) == "failed"
        finally:
            subprocess.run(["umount", str(games)], check=False)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        try:
            rep = _invoke("report", str(run_dir))
            assert rep.exit_code == EXIT_ENV and "read-only" in _one_error_line(rep.output), rep.output
            run = _invoke("run", str(conf), "--quiet", "--no-report")
            assert run.exit_code == EXIT_ENV and "read-only" in _one_error_line(run.output), run.output
            fsck = _invoke("fsck", str(run_dir), "--repair")
            assert fsck.exit_code == EXIT_ENV and "read-only" in _one_error_line(fsck.output), fsck.output
            # the analyses store their tables in the folder too: exit 3, not 2 (it is no fault of the input)
            luck = _invoke("luck", str(run_dir))
            assert luck.exit_code == EXIT_ENV and "read-only" in _one_error_line(luck.output), luck.output
            grade = _invoke("analyze", str(run_dir), "--bot", "simple", "--games", "2")
            assert grade.exit_code == EXIT_ENV and "read-only" in _one_error_line(grade.output), grade.output
            for what, res in (
                ("report", rep),
                ("run", run),
                ("fsck --repair", fsck),
                ("luck", luck),
                ("analyze", grade),
            ):
                _show(f"arena {what} on a read-only folder", res.exit_code, _one_error_line(res.output))
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        assert same(RunStore(run_dir).games(), reference)
        sub = _invoke("submit", "early-knock", "--to", str(run_dir), "--quiet")
        assert sub.exit_code == 0, sub.output
        assert len(RunStore(run_dir).games()) == 3 * 200


def test_a_quarantine_the_file_system_refuses_is_one_line_exit_3(tmp_path, reference):
    conf = _config(tmp_path, tmp_path / "results")
    assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "f"
    victim = sorted((run_dir / "games").rglob("*.parquet"))[3]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x20
    victim.write_bytes(bytes(data))
    (run_dir / "quarantine").write_text("a file where the quarantine folder goes")
    out = _invoke("run", str(conf), "--quiet", "--no-report")
    assert out.exit_code == EXIT_ENV, out.output
    line = _one_error_line(out.output)
    assert "cannot move" in line and "quarantine/" in line
    _show("a quarantine move the file system refuses", out.exit_code, line)
    (run_dir / "quarantine").unlink()
    out = _invoke("run", str(conf), "--quiet", "--no-report")
    assert out.exit_code == 0, out.output
    assert same(RunStore(run_dir).games(), reference)


TAMPER_BOT = textwrap.dedent('''
    """Plays like simple; on its first decision it truncates a stored chunk of another matchup."""
    import glob
    import os
    from bots.simple import draw, big_gin, discard, knock
    from bots.simple import take_upcard as simple_take_upcard
    NAME = "tamper"
    DONE = []

    def take_upcard(view, params, memory, rng):
        if not DONE:
            DONE.append(1)
            for path in sorted(glob.glob(os.environ["ARENA_TAMPER_GLOB"]))[:1]:
                os.truncate(path, 200)
        return simple_take_upcard(view, params, memory, rng)
''')


def test_a_chunk_changed_during_the_run_is_quarantined_and_the_run_exits_1_never_0(tmp_path, monkeypatch):
    bot = tmp_path / "tamper.py"
    bot.write_text(TAMPER_BOT)
    results = tmp_path / "results"
    conf = _config(tmp_path, results, bots=("random", "simple", str(bot)), games=40)
    monkeypatch.setenv("ARENA_TAMPER_GLOB", str(results / "f" / "games" / "*" / "00000.parquet"))
    out = _invoke("run", str(conf), "--quiet", "--no-report")
    assert out.exit_code == EXIT_FAILED, out.output
    line = _one_error_line(out.output)
    assert "changed on disk during the run" in line and "chunk 0 of random vs simple" in line
    _show("a stored chunk changed during the run", out.exit_code, line)
    run_dir = results / "f"
    assert _status(run_dir) == "failed"
    assert [p.name for p in (run_dir / "quarantine").iterdir() if "-00000-games-" in p.name]
    # The next run plays that chunk again (the bot tampers no more: its glob finds nothing new to cut
    # before the replayed chunk is stored, so point it nowhere) and ends complete, game for game.
    monkeypatch.setenv("ARENA_TAMPER_GLOB", str(tmp_path / "nothing" / "*"))
    again = _invoke("run", str(conf), "--quiet", "--no-report")
    assert again.exit_code == 0, again.output
    clean_conf = _config(tmp_path, tmp_path / "clean", bots=("random", "simple", str(bot)), games=40)
    assert _invoke("run", str(clean_conf), "--quiet", "--no-report").exit_code == 0
    assert same(RunStore(run_dir).games(), RunStore(tmp_path / "clean" / "f").games())


# --- signals --------------------------------------------------------------------------------------


def _spawn(conf: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(conf), "--quiet", "--no-report", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _wait_for_chunks(run_dir: Path, n: int, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        idx = run_dir / "index.jsonl"
        if idx.exists() and idx.read_text().count('"type":"chunk"') >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError("the run stored no chunk in time")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (its SigCgt mask in /proc)."""
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


def _mute_bot(tmp_path: Path) -> str:
    """A ``cmd:`` bot that never answers its handshake: a command waits on it, outside any run."""
    mute = tmp_path / "mute.py"
    mute.write_text("import time\ntime.sleep(120)\n")
    return f"cmd:{sys.executable} {mute}"


def _sigterm_while_waiting_on_a_bot(*args: str) -> str:
    """Run ``arena ARGS``, send it SIGTERM once it waits on a bot's handshake; its one error line (exit 130)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while not (_catches(proc.pid, signal.SIGTERM) and _children(proc.pid)):  # waiting on the bot's handshake
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err[-3000:]
    return _one_error_line(err)


def test_sigterm_outside_a_run_is_exit_130_and_one_line(tmp_path):
    # A run stops cleanly on SIGTERM while it plays; before that (seconds of loading compiled code)
    # and in the other commands, SIGTERM killed the process with 143 and no word.  Here check-bot
    # waits on a bot that never answers its handshake.
    line = _sigterm_while_waiting_on_a_bot("check-bot", _mute_bot(tmp_path), "--games", "2")
    assert line == "error: interrupted (SIGTERM)"


def test_sigterm_between_a_sweeps_runs_says_that_its_chunks_are_kept(tmp_path):
    """A sweep is a series of runs: SIGTERM outside one (here while it loads an opponent that never
    answers its handshake) said "interrupted" alone, not that the finished runs' chunks are kept and the
    same command resumes, as Ctrl-C and SIGTERM inside a run say."""
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        f'name = "s"\nbot = "early-knock"\nopponents = ["{_mute_bot(tmp_path)}"]\ngames = 20\n'
        f'results_dir = "{tmp_path / "res"}"\n[grid]\nknock_at = [1, 2]\n'
    )
    line = _sigterm_while_waiting_on_a_bot("sweep", str(sweep))
    assert line == "error: interrupted (SIGTERM): finished chunks are saved; run the same command to resume"


#: ``arena run`` whose driver gets ``sys.argv[1]`` (SIGTERM or SIGINT) inside a C library's callback, as a
#: signal does that lands while llvmlite loads compiled code: the handler's exception is "ignored" there.
_SIGNAL_IN_A_CALLBACK = """
import ctypes, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
import arena.run.runner as runner
from arena.cli import main

sig = getattr(signal, sys.argv[1])
warm_up = runner._Bar.warm_up
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

def compare(a, b):
    os.kill(os.getpid(), sig)  # the handler runs here, inside qsort's callback, and its exception is dropped
    return 0

def signalled_warm_up(self, n):
    pair = (ctypes.c_int * 2)(1, 2)
    ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), CMP(compare))
    return warm_up(self, n)

runner._Bar.warm_up = signalled_warm_up
sys.argv = ["arena", "run", *sys.argv[2:]]
main()
"""


#: As above, but the library whose callback dropped the exception then fails on its own half-done work, as
#: numba's cache did ("RuntimeError: no compiled object yet for <Library 'draw'>") for a Ctrl-C that landed
#: in llvmlite's object-code callback while a bot compiled in the driver.
_SIGNAL_THEN_A_LIBRARY_ERROR = _SIGNAL_IN_A_CALLBACK.replace(
    "    return warm_up(self, n)\n",
    "    raise RuntimeError(\"no compiled object yet for <Library 'draw'>\")\n",
)


def _run_with_a_dropped_signal(script: str, sig: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``script`` (one of the above) on a 40-chunk config; it exits as interrupted, the signal dropped."""
    conf = _config(tmp_path, tmp_path / "results", games=800, chunk=20)
    p = subprocess.run(
        [sys.executable, "-c", script, sig, str(conf), "--quiet", "--no-report"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "Exception ignored" in p.stderr  # the signal did land where its exception is dropped
    assert p.returncode == EXIT_INTERRUPTED, p.stderr[-3000:]
    return p


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_error_that_follows_a_dropped_signal_is_the_interrupt(sig, tmp_path):
    """The run's own step never came: the library's RuntimeError ended the command with a traceback, exit 1."""
    p = _run_with_a_dropped_signal(_SIGNAL_THEN_A_LIBRARY_ERROR, sig, tmp_path)
    assert "RuntimeError" not in p.stderr, p.stderr[-3000:]
    errors = [line.strip() for line in p.stderr.splitlines() if line.strip().startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: interrupted ({sig})"), p.stderr[-3000:]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_whose_exception_a_c_callback_drops_still_stops_the_run(sig, tmp_path):
    """A SIGTERM six seconds into a run (llvmlite's callbacks, while numba loads code) was printed as
    "Exception ignored" and lost: the run played every game and exited 0."""
    run_dir = tmp_path / "results" / "f"
    p = _run_with_a_dropped_signal(_SIGNAL_IN_A_CALLBACK, sig, tmp_path)
    errors = [line.strip() for line in p.stderr.splitlines() if line.strip().startswith("error:")]
    assert len(errors) == 1 and f"interrupted ({sig})" in errors[0], p.stderr[-3000:]
    assert _status(run_dir) == "interrupted"
    assert RunStore(run_dir).n_games() < 800  # stopped at its next step, not at the end


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_a_bot_file_imports_is_an_interrupt_not_a_bad_bot(sig, tmp_path):
    """A SIGTERM while a bot file's top-level code ran (a slow import: a model, a table) was caught with the
    file's import errors: "not a bot: importing it failed: Interrupted: SIGTERM", exit 2 (bad input)."""
    mark = tmp_path / "importing"
    slow = tmp_path / "slow.py"
    slow.write_text(f"import pathlib, time\npathlib.Path({str(mark)!r}).touch()\nwhile True:\n    time.sleep(0.01)\n")
    conf = _config(tmp_path, tmp_path / "results", bots=("random", str(slow)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(conf), "--quiet", "--no-report"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        # As in a terminal: the arena leaves an inherited SIG_IGN alone (a background job's), and the full suite
        # has run in processes that ignore SIGINT, where this process then never heard the Ctrl-C.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not mark.exists():  # the bot file's top-level code is running
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a run that missed the signal loops in the bot file for ever: never leave it behind
    assert proc.returncode == EXIT_INTERRUPTED, err[-3000:]
    assert _one_error_line(err).startswith(f"error: interrupted ({signal.Signals(sig).name})"), err[-3000:]


def test_sigterm_of_the_driver_is_handled_like_ctrl_c(tmp_path, reference):
    conf = _config(tmp_path, tmp_path / "results", games=800, chunk=20, workers=2)  # 40 chunks: stopped at 2
    run_dir = tmp_path / "results" / "f"
    proc = _spawn(conf)
    _wait_for_chunks(run_dir, 2, proc)
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err[-3000:]
    line = _one_error_line(err)
    assert "interrupted (SIGTERM)" in line and "run the same command to resume" in line
    _show("SIGTERM of the driver", proc.returncode, line)
    assert _status(run_dir) == "interrupted"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    assert workers and not any(_alive(p) for p in workers)
    assert 0 < RunStore(run_dir).n_games() < 800
    # The same command resumes (here, in this process) to what an uninterrupted run plays: its first 200 games
    # per pair are the reference.
    done = _invoke("run", str(conf), "--quiet", "--no-report")
    assert done.exit_code == 0, done.output
    games = RunStore(run_dir).games()
    assert len(games) == 800 and games["game_id"].is_unique
    first = games[games["pair"] < 100].sort_values("game_id").reset_index(drop=True)
    assert same(first, reference.sort_values("game_id").reset_index(drop=True))


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


CRASH = textwrap.dedent("""
    # arena run, killed by SIGKILL (a real kill -9) at one moment of storing its third chunk.
    import os, signal, sys
    from arena.run import store
    moment, conf = sys.argv[1], sys.argv[2]
    put_chunk, append, atomic_write = store.RunStore.put_chunk, store.RunStore._append, store._atomic_write
    seen = []

    def put(self, mid, chunk, *args, **kwargs):
        seen.append(chunk)
        return put_chunk(self, mid, chunk, *args, **kwargs)

    def write(path, data):
        if moment == "writing a chunk file" and len(seen) == 3 and path.parent.parent.name == "games":
            with open(path.with_name(f".{path.name}.tmp{os.getpid()}"), "wb") as f:
                f.write(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        atomic_write(path, data)

    def line(self, rec):
        if rec.get("type") == "chunk" and len(seen) == 3:
            if moment == "writing its index line":
                with open(self.dir / store.INDEX, "a") as f:
                    f.write(store._line(rec)[:50])
            if moment in ("before its index line", "writing its index line"):
                os.kill(os.getpid(), signal.SIGKILL)
        append(self, rec)

    store.RunStore.put_chunk, store.RunStore._append, store._atomic_write = put, line, write
    sys.argv = ["arena", "run", conf, "--quiet", "--no-report"]
    from arena.cli.main import app
    app()
""")


@pytest.mark.parametrize(
    ("moment", "finding"),
    [
        ("writing a chunk file", None),  # the temp file is deleted, the chunk played again
        ("before its index line", "1 chunk file(s) have no index line"),
        ("writing its index line", "cut short (torn last line); dropped"),
    ],
)
def test_kill_9_of_the_driver_at_three_moments_then_the_same_command_ends_with_the_same_games(
    tmp_path, reference, moment, finding
):
    conf = _config(tmp_path, tmp_path / "results", workers=2)
    run_dir = tmp_path / "results" / "f"
    (tmp_path / "crash.py").write_text(CRASH)
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "crash.py"), moment, str(conf)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == -signal.SIGKILL, err[-3000:]
    assert _status(run_dir) == "running"  # what a killed process leaves: the next run ends it
    assert 2 <= RunStore(run_dir).n_chunks() <= 3
    assert bool(_temps(run_dir)) == (moment == "writing a chunk file")
    records = _Records()
    logging.getLogger("arena.store").addHandler(records)
    try:
        out = _invoke("run", str(conf), "--quiet", "--no-report")
    finally:
        logging.getLogger("arena.store").removeHandler(records)
    assert out.exit_code == 0, out.output
    assert "error:" not in out.output
    if finding:
        assert any(finding in line for line in records.lines), records.lines
    _show(f"kill -9 of the driver {moment}: the same command", out.exit_code, "", *records.lines)
    assert not _temps(run_dir)
    assert _status(run_dir) == "complete"
    assert same(RunStore(run_dir).games(), reference)


def test_sigterm_of_a_worker_costs_nothing(tmp_path, reference):
    # The real command, a worker killed at a moment the test does not choose (busy or between chunks).
    conf = _config(tmp_path, tmp_path / "results", workers=2)
    run_dir = tmp_path / "results" / "f"
    proc = _spawn(conf)
    _wait_for_chunks(run_dir, 1, proc)
    kids = _children(proc.pid)
    if kids:
        with contextlib.suppress(ProcessLookupError):  # it ended between the listing and the kill
            os.kill(kids[0], signal.SIGTERM)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-3000:]
    assert "error:" not in err
    _show("SIGTERM of a worker (the real command)", proc.returncode, "", *err.splitlines()[1:])
    assert _status(run_dir) == "complete"
    assert same(RunStore(run_dir).games(), reference)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP"])
def test_a_signal_to_every_worker_costs_nothing(tmp_path, reference, monkeypatch, sig):
    """Right after the first chunk is stored, every worker gets the signal: the one that sent that chunk is
    idle, waiting for its next one (a worker that died there once ended the driver with exit 1 and no word:
    click's broken-pipe exit), the other is busy.  SIGINT is the driver's own (workers ignore it); a dead or
    stopped worker is replaced and its chunk played again: exit 0, no error line, the same games."""
    monkeypatch.setattr(schedule, "STOPPED_GRACE", 1.0)
    signum = getattr(signal, sig)
    hit: list[int] = []
    put_chunk = RunStore.put_chunk

    def put_then_signal(self, *args, **kwargs):
        put_chunk(self, *args, **kwargs)
        if not hit:
            hit.extend(p.pid for p in multiprocessing.active_children())
            for pid in hit:
                os.kill(pid, signum)
            if sig in ("SIGTERM", "SIGKILL"):  # dead before the driver goes on: the idle one's pipe is broken
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and any(_alive(p) for p in hit):
                    time.sleep(0.01)

    monkeypatch.setattr(RunStore, "put_chunk", put_then_signal)
    records = _Records()
    logging.getLogger("arena.schedule").addHandler(records)
    try:
        out = _invoke("run", str(_config(tmp_path, tmp_path / "results", workers=2)), "--quiet", "--no-report")
    finally:
        logging.getLogger("arena.schedule").removeHandler(records)
    assert len(hit) == 2, hit
    assert out.exit_code == 0, out.output
    assert "error:" not in out.output and "Traceback" not in out.output
    run_dir = tmp_path / "results" / "f"
    assert _status(run_dir) == "complete"
    assert same(RunStore(run_dir).games(), reference)
    _show(f"{sig} of every worker", out.exit_code, "", *records.lines)
    if sig == "SIGINT":
        assert records.lines == []
    elif sig == "SIGSTOP":
        assert len(records.lines) == 2, records.lines
        assert all("was stopped (SIGSTOP) for 1 s" in x and "trying that chunk once more" in x for x in records.lines)
    else:
        # each dead worker is seen once: an idle one when it is given its next chunk, a busy one by its end
        # (its chunk is then played again).  Which of the two each worker was depends on how far the driver
        # had got when the signal came: under a loaded machine (CI's two test processes) both can already
        # hold their next chunk.  Either way the run must end as if nothing happened.
        assert len(records.lines) == 2, records.lines
        assert all(
            "between chunks" in x and "started another" in x or "trying that chunk once more" in x
            for x in records.lines
        ), records.lines
        # SIGTERM runs the driver's inherited handler, which ends a worker with 128 + 15
        how = "exit code 143" if sig == "SIGTERM" else "killed by signal 9"
        assert all(how in x for x in records.lines), records.lines


def test_report_names_each_problem_once_and_exits_1_and_a_damaged_index_line_too(tmp_path, reference):
    conf = _config(tmp_path, tmp_path / "results")
    assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "f"
    victim = sorted((run_dir / "games").rglob("*.parquet"))[2]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x40
    victim.write_bytes(bytes(data))
    out = _invoke("report", str(run_dir))
    assert out.exit_code == EXIT_FAILED, out.output
    named = [line for line in out.output.splitlines() if "chunk 2 of random vs simple" in line]
    assert len(named) == 1, out.output  # said once, though the report reads the chunks in two passes
    assert "1 problem(s)" in _one_error_line(out.output)
    # A damaged index line: the report reads the folder as repaired (every game) and names the line.
    (run_dir / "index.checkpoint.jsonl").unlink()
    victim.unlink()
    assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
    lines = (run_dir / "index.jsonl").read_text().splitlines(keepends=True)
    n = next(i for i, t in enumerate(lines) if '"type":"matchup"' in t)
    lines[n] = lines[n].replace('"bot_a":"', '"bot_a":"X', 1)
    (run_dir / "index.jsonl").write_text("".join(lines))
    out = _invoke("report", str(run_dir))
    assert out.exit_code == EXIT_FAILED, out.output
    named = [line for line in out.output.splitlines() if f"index.jsonl line {n + 1}" in line]
    assert len(named) == 1
    _show("damaged matchup line: arena report", out.exit_code, _one_error_line(out.output), named[0])
    assert "200" in (run_dir / "pairs.csv").read_text()  # every game of the matchup is in the report


# --- damaged chunks and a second run, through the commands ------------------------------------------


def _damage_chunks(run_dir: Path, damage: str) -> None:
    files = sorted((run_dir / "games").rglob("*.parquet"))
    victim, other = files[2], files[3]
    if damage == "flipped":
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0x10
        victim.write_bytes(bytes(data))
    elif damage == "truncated":
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    elif damage == "deleted":
        victim.unlink()
    else:  # swapped: both files whole (their page checksums pass), each in the other's place
        a, b = victim.read_bytes(), other.read_bytes()
        victim.write_bytes(b)
        other.write_bytes(a)


@pytest.mark.parametrize("damage", ["flipped", "truncated", "deleted", "swapped"])
def test_a_damaged_chunk_is_named_by_report_exit_1_and_the_same_command_plays_it_again(tmp_path, reference, damage):
    conf = _config(tmp_path, tmp_path / "results")
    assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "f"
    _damage_chunks(run_dir, damage)
    rep = _invoke("report", str(run_dir))
    assert rep.exit_code == EXIT_FAILED, rep.output
    line = _one_error_line(rep.output)
    n = 2 if damage == "swapped" else 1
    assert f"{n} problem(s) in {run_dir}" in line
    named = [x for x in rep.output.splitlines() if x.startswith("WARNING") and "chunk 2 of random vs simple:" in x]
    assert len(named) == 1, rep.output
    _show(f"{damage} chunk: arena report", rep.exit_code, line, named[0])
    if damage == "truncated":  # a plot drawn without the chunk is no more the run's than the report is
        drawn = _invoke("plot", str(run_dir), "--kind", "scores")
        assert drawn.exit_code == EXIT_FAILED and f"1 problem(s) in {run_dir}" in _one_error_line(drawn.output)
        assert (run_dir / "plots" / "scores.png").is_file()
    records = _Records()
    logging.getLogger("arena.store").addHandler(records)
    try:
        out = _invoke("run", str(conf), "--quiet", "--no-report")
    finally:
        logging.getLogger("arena.store").removeHandler(records)
    assert out.exit_code == 0 and "error:" not in out.output, out.output
    said = [x for x in records.lines if "chunk 2 of random vs simple:" in x]
    assert said and "moved to quarantine/" in said[0] and "to be played again" in said[0], records.lines
    what = {
        "flipped": "does not match its checksum (corrupted)",
        "truncated": "(truncated?)",
        "deleted": "is missing",
        "swapped": "is a whole file of another chunk (chunk 3 of random vs simple, by its metadata: swapped?)",
    }[damage]
    assert f"{what}; left out" in named[0] and what in said[0], (said, named)
    assert (damage == "deleted") == ("its other file(s) moved to quarantine/" in said[0])
    _show(f"{damage} chunk: the same command", out.exit_code, "", said[0])
    assert _status(run_dir) == "complete"
    assert same(RunStore(run_dir).games(), reference)
    assert _invoke("fsck", str(run_dir)).exit_code == 0  # clean again (a report would take seconds more)


def test_a_second_run_on_a_folder_in_use_is_one_line_exit_2_and_touches_nothing(tmp_path, reference):
    conf = _config(tmp_path, tmp_path / "results")
    assert _invoke("run", str(conf), "--quiet", "--no-report").exit_code == 0
    run_dir = tmp_path / "results" / "f"
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    with RunStore.open_for_writing(run_dir, what="arena run") as held:  # another run holds the folder
        assert held is not None
        out = _invoke("run", str(conf), "--quiet", "--no-report", "--fresh")
        sub = _invoke("submit", "early-knock", "--to", str(run_dir), "--quiet")
    for res in (out, sub):
        assert res.exit_code == EXIT_INPUT, res.output
        line = _one_error_line(res.output)
        assert f"{run_dir} is in use by pid {os.getpid()} (arena run); wait for it to finish" in line
    _show("concurrent run (run --fresh, submit)", out.exit_code, line)
    assert before == {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    assert same(RunStore(run_dir).games(), reference)


def test_the_run_holds_the_folder_until_its_report_is_written(tmp_path, reference, monkeypatch):
    """The tables and the report read the whole folder: a --fresh run or a submit let in between the last
    chunk and the report would delete or change it underneath them (the report then counted a folder half
    gone, or failed with "No such file or directory")."""
    from arena.analysis import report as report_module
    from arena.run.store import StoreBusy

    conf = _config(tmp_path, tmp_path / "results")
    run_dir = tmp_path / "results" / "f"
    real = report_module.write_report
    tried: list[str] = []

    def second_writer_first(folder, **kw):
        try:  # what `arena run --fresh` on the same name does first
            RunStore.open_for_writing(folder, fresh=True, what="arena run").close()
            tried.append("let in")
        except StoreBusy as exc:
            tried.append(str(exc))
        return real(folder, **kw)

    monkeypatch.setattr(report_module, "write_report", second_writer_first)
    out = _invoke("run", str(conf), "--quiet")
    assert out.exit_code == 0 and "report:" in out.output, out.output
    assert len(tried) == 1 and f"is in use by pid {os.getpid()} (arena run)" in tried[0], tried
    assert same(RunStore(run_dir).games(), reference) and (run_dir / "report.md").exists()
    RunStore.open_for_writing(run_dir).close()  # and once the command is done, the folder is free


def test_fresh_refuses_a_folder_that_holds_no_run(tmp_path):
    # --results-dir ~ --name Documents by mistake: --fresh must not delete files the arena did not write.
    folder = tmp_path / "Documents"
    (folder / "thesis").mkdir(parents=True)
    (folder / "thesis" / "draft.tex").write_text("precious")
    with pytest.raises(StoreError, match=r"--fresh would delete .*Documents, which holds files but no run"):
        RunStore.open_for_writing(folder, fresh=True)
    assert (folder / "thesis" / "draft.tex").read_text() == "precious"
    assert sorted(p.name for p in folder.iterdir()) == ["thesis"]  # not even a lock file left behind
    # A run folder is still emptied by --fresh, and an empty folder taken as it is.
    RunStore.open_for_writing(tmp_path / "run").close()
    (tmp_path / "run" / "report.md").write_text("old")
    RunStore.open_for_writing(tmp_path / "run", fresh=True).close()
    assert not (tmp_path / "run" / "report.md").exists()
    (tmp_path / "empty").mkdir()
    RunStore.open_for_writing(tmp_path / "empty", fresh=True).close()


def test_a_run_refuses_a_folder_of_other_files_so_a_later_fresh_cannot_delete_them(tmp_path):
    """A run without --fresh wrote its files beside the user's, which made the folder a run's: the
    next --fresh then deleted the user's files with it."""
    folder = tmp_path / "Documents"
    folder.mkdir()
    (folder / "precious.txt").write_text("precious")
    with pytest.raises(StoreError, match=r"cannot run in .*Documents, which holds files but no run \(e.g. precious"):
        RunStore.open_for_writing(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["precious.txt"]  # nothing written, not even a lock
    with pytest.raises(StoreError, match="--fresh would delete"):
        RunStore.open_for_writing(folder, fresh=True)
    assert (folder / "precious.txt").read_text() == "precious"
    # Through the command: one line, exit 2, the user's file intact.
    out = _invoke(
        "run",
        str(ROOT / "configs" / "quick.toml"),
        "--results-dir",
        str(tmp_path),
        "--name",
        "Documents",
        "--games",
        "10",
        "--workers",
        "1",
        "--quiet",
    )
    assert out.exit_code == 2 and "holds files but no run (e.g. precious.txt)" in out.output, out.output
    assert sorted(p.name for p in folder.iterdir()) == ["precious.txt"]
