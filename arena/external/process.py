"""One running bot program: start it under limits, ask a line, get a line, within a time.

:class:`BotProcess` owns the child process and its three pipes.  Every
failure is an :class:`ExternalBotError` whose message starts with the reason
("timeout: ...", "crashed: ...", "garbled answer: ..."), and after any of
them the process is killed: a bot that missed a deadline or wrote garbage is
out of step with the arena and is started afresh for the next game.

stderr is read by a daemon thread into a :class:`LogBuffer`, so a chatty bot
can never block on a full pipe, and the arena keeps at most ``log_bytes`` of
it between two drains.  Nothing is written to disk here.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import threading
import time
from collections import deque

from arena.external.limits import Limits, build_filter, make_preexec, protect_parent
from arena.external.protocol import MAX_LINE, ProtocolError

#: The reason's start for each game a bot forfeits at once after too many failed games in a row
#: (:meth:`arena.external.client.ExternalBot._streak_error`); the report counts these apart.
STREAK_FORFEIT = "forfeits the rest of this chunk"
#: While an answer takes longer than this, a walled bot is checked for having closed its output.
CLOSED_CHECK_S = 0.25
#: Seconds a bot told bye may take to exit before it is killed (a run's and check-bot's alike).
BYE_GRACE = 0.5
#: CPU a bot's program may use while it is not asked, over its life: this many seconds, plus this share of
#: the time it was not asked (after each answer, :meth:`BotProcess._check_idle_cpu`).  While it is asked it
#: may use every core.  A JVM compiles and collects garbage in the background, a second or two over a run;
#: a bot that keeps threads busy between its answers slows the machine its opponent answers on, until the
#: opponent's answers run out of time.  One busy thread is stopped after some 7 s, a core's worth of them
#: after about 3 s (on two cores).
IDLE_CPU_S = 5.0
IDLE_CPU_SHARE = 0.25
#: Looked at no more often than this (reading /proc costs some 25 microseconds, a fast bot's whole answer).
IDLE_CPU_EVERY_S = 0.1
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_CORES = len(os.sched_getaffinity(0))


class ExternalBotError(Exception):
    """An external bot failed a decision; ``reason`` is the first word(s) of the message.

    Reasons: ``timeout``, ``crashed``, ``garbled answer``, ``ill-typed answer``,
    ``bad handshake``, ``bot error`` (the bot resigned with ``{"error": ...}``).
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


#: What a bot's log must not pass on raw: C0 controls but tab and newline (ESC starts the terminal's
#: escape sequences: clear the screen, retitle the window, move the cursor over earlier lines; a carriage
#: return writes over a line), DEL, the C1 controls, and the bidirectional overrides and isolates that
#: show text in another order than it is stored, and the Unicode line and paragraph separators (a line
#: break to ``str.splitlines``).  A person reads the log with ``cat`` or ``less -R``.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
#: Starts each of the arena's own lines in the buffer; the bot's bytes can't hold it once shown, so a
#: bot can't write a line that passes for the arena's (a fake "killed", a fake "started").
_NOTE = "\x00"


def printable(text: str) -> str:
    """``text`` with every control character (:data:`_CONTROL`) written as its escape, e.g. ``\\x1b``."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _shown(text: str) -> str:
    """The buffer as a person may read it: the bot's text made :func:`printable`, and its lines that
    start like the arena's (``[arena``) marked ``(bot)``; the arena's notes as written."""
    out: list[str] = []
    for i, part in enumerate(text.split(_NOTE)):
        if i:  # an arena note runs to the end of its line, and starts its own (after a bot's unfinished line)
            note, newline, part = part.partition("\n")
            if out and out[-1] and not out[-1].endswith("\n"):
                out.append("\n")
            out.append(printable(note) + newline)
        out.append(re.sub(r"(?m)^\[arena", "(bot) [arena", printable(part)))
    return "".join(out)


class LogBuffer:
    """A bounded, thread-safe text buffer: keeps the newest ``limit`` bytes.

    Holds the bot's stderr as it came and the arena's notes; :meth:`drain` gives it printable
    (:func:`_shown`), so a bot's terminal escapes reach no one's terminal.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        """The bot's own output (a NUL in it is kept as the text ``\\x00``, never as a note's mark)."""
        self._append(data.replace(b"\0", b"\\x00"))

    def _append(self, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._size > self.limit and self._chunks:
                extra = self._size - self.limit
                first = self._chunks[0]
                if len(first) <= extra:
                    self._chunks.popleft()
                    self._size -= len(first)
                    self._dropped += len(first)
                else:
                    self._chunks[0] = first[extra:]
                    self._size -= extra
                    self._dropped += extra

    def overflowing(self) -> bool:
        """Output was dropped since the last drain: more came than the log keeps."""
        return self._dropped > 0

    def note(self, text: str) -> None:
        """A line from the arena itself (starts, kills), marked as such."""
        self._append(f"{_NOTE}[arena {time.strftime('%H:%M:%S')}] {text}\n".encode())

    def drain(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)
            dropped = self._dropped
            self._chunks.clear()
            self._size = 0
            self._dropped = 0
        text = _shown(data.decode("utf-8", "replace"))
        if dropped:
            text = f"[arena] ... {dropped} earlier bytes of output dropped (log limit)\n" + text
        return text

    def tail_line(self) -> str:
        """The last non-empty line written (for crash messages)."""
        with self._lock:
            tail: list[bytes] = []
            size = 0
            for chunk in reversed(self._chunks):  # enough of the end to hold whole last lines
                tail.append(chunk)
                size += len(chunk)
                if size >= 4096:
                    break
            data = b"".join(reversed(tail))
        text = re.sub(f"{_NOTE}[^\n]*", "", data.decode("utf-8", "replace"))  # the bot's words only
        lines = [line for line in text.split("\n") if line.strip()]
        return lines[-1].strip()[:200] if lines else ""


#: Once a bot's stderr overflows the log, its reader rests this long after each read (at most 64 KiB):
#: some 6 MB/s, a percent of a core.  Read at full speed, a flood cost the worker half a core for as long
#: as the bot lived, all of it thrown away, and the watchdog, which measures a chunk by its worker's CPU
#: time, failed the chunk of a bot that flooded while it answered slowly within its own limits.  The
#: flooding bot's own writes wait instead.
LOG_FLOOD_REST_S = 0.01


def _read_stderr(fd: int, log: LogBuffer) -> None:
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            log.write(data)
            if log.overflowing():
                time.sleep(LOG_FLOOD_REST_S)
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def _oom_kills() -> int | None:
    """Processes the kernel's OOM killer has killed since boot (any memory cgroup's too), or None."""
    try:
        with open("/proc/vmstat", "rb") as f:
            for line in f:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


class BotProcess:
    """A started bot program (see the module docstring)."""

    def __init__(
        self,
        command: list[str],
        cwd: str | None,
        limits: Limits,
        log: LogBuffer,
        env: dict[str, str] | None = None,
        read_paths: tuple[str, ...] = (),
        tracer: tuple[str, ...] = (),
    ):
        """Start ``command``: inside the wall (``limits.sandbox == "wall"``), else under the weak sandbox.

        ``read_paths``: more files and folders the program may read inside
        the wall (the sandbox host's package and caches); ``tracer``: a
        program the whole is started under (``check-bot``'s strace).  Raises
        :class:`ExternalBotError` ("no sandbox: ...") when the wall can't
        be built here.
        """
        self.limits = limits
        self.log = log
        self.command = command
        argv, in_wall = list(command), limits.sandbox == "wall"
        pass_fds: tuple[int, ...] = ()
        self.in_wall = in_wall
        if cwd is not None and not os.path.isdir(cwd):  # Popen's chdir error reads as the program's
            raise ExternalBotError("crashed", f"could not start {command[0]!r}: its folder {cwd} does not exist (cwd)")
        self._uid = None  # as root: the bot's own uid, held while it runs (arena.external.wall.BotUid)
        if in_wall:
            from arena.external.wall import (
                PID_IN_WALL,
                BotUid,
                WallError,
                resolve_program,
                wall_command,
                wall_env,
                wall_problem,
            )

            problem = wall_problem()
            if problem is not None:
                raise ExternalBotError(
                    "no sandbox", f"{problem} (or accept the weak sandbox explicitly: --weak-sandbox)"
                )
            env = wall_env(env)
            if resolve_program(command[0], cwd or os.getcwd(), env.get("PATH")) is None:
                raise ExternalBotError("crashed", f"could not start {command[0]!r}: no such program")
            # bwrap reads the BPF program and its options from two pipes (each a few KiB: within a
            # pipe's buffer); its command line, which the bot may read as /proc/1/cmdline, names no path.
            rfd, wfd = os.pipe()
            afd, bfd = os.pipe()
            pass_fds = (rfd, afd)
            try:
                self._uid = BotUid() if os.geteuid() == 0 else None
                os.write(wfd, build_filter(limits, PID_IN_WALL))
                full = wall_command(
                    command,
                    cwd,
                    rfd,
                    network=limits.network,
                    extra=read_paths,
                    writable_tmp=limits.file_writes,
                    tmp_mb=limits.tmp_mb,
                    uid=self._uid.uid if self._uid is not None else None,
                )
                cut = full.index("--")  # options through the pipe, the command on the command line
                os.write(bfd, b"".join(a.encode() + b"\0" for a in full[1:cut]))
            except (WallError, OSError) as exc:
                for fd in pass_fds:
                    os.close(fd)
                self._release_uid()
                raise ExternalBotError("no sandbox", str(exc)) from None
            finally:
                os.close(wfd)
                os.close(bfd)
            argv = [full[0], "--args", str(afd), *full[cut:]]
        else:
            protect_parent()
        self._oom_kills = _oom_kills()  # a SIGKILL is blamed on memory only if the OOM killer struck since
        try:
            self.proc = subprocess.Popen(
                [*tracer, *argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                close_fds=True,
                pass_fds=pass_fds,
                start_new_session=True,
                preexec_fn=make_preexec(limits, in_wall=in_wall),
            )
        except OSError as exc:
            self._release_uid()
            raise ExternalBotError("crashed", f"could not start {command[0]!r}: {exc.strerror or exc}") from None
        finally:
            for fd in pass_fds:
                os.close(fd)
        self.pid = self.proc.pid
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # PIPE was asked for each
        self._stdin, self._stdout = stdin, stdout
        self._in = stdin.fileno()
        self._out = stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        err = os.dup(stderr.fileno())
        stderr.close()
        self._stderr_thread = threading.Thread(
            target=_read_stderr, args=(err, log), daemon=True, name=f"bot-stderr-{self.pid}"
        )
        self._stderr_thread.start()
        # Watched for a closed output in the wall (see _wait_answer); not with processes allowed, whose
        # children may hold the output too.
        self._watch_output = in_wall and not limits.processes
        self._closed_output = False
        self._pipe = f"pipe:[{os.fstat(self._out).st_ino}]"
        self._poll_in = select.poll()
        self._poll_in.register(self._out, select.POLLIN)
        self._poll_out = select.poll()
        self._poll_out.register(self._in, select.POLLOUT)
        self.alive = True
        self._answered = False  # no answer read yet: output waiting before the handshake is its hello
        self._told = ""  # the last line sent wanted no answer (a hand_over): what it was
        self._born = time.monotonic()
        self._asked_s = 0.0  # time spent asked (from its start to its first answer, then each question)
        self._program: int | None = None  # the program's pid (inside the wall: bwrap's grandchild)
        self._watch_cpu = not tracer  # under strace the process tree is another shape
        self._cpu_looked = 0.0
        log.note(f"started pid {self.pid}: {' '.join(command)}")

    # --- talking -----------------------------------------------------------------------

    def request(self, line: bytes, timeout: float, what: str, max_line: int = MAX_LINE) -> bytes:
        """Send ``line`` and return the bot's one-line answer (without the newline).

        Raises :class:`ExternalBotError` (and kills the process) on a timeout,
        a crash, an answer longer than ``max_line`` bytes (never read past
        that and one more read), or an answer that is not exactly one line.
        """
        asked = self._born if not self._answered else time.monotonic()  # its start counts as asked
        answer = self._request(line, timeout, what, max_line)
        now = time.monotonic()
        self._asked_s += now - asked
        if self._watch_cpu and now - self._cpu_looked >= IDLE_CPU_EVERY_S:
            self._cpu_looked = now
            self._check_idle_cpu(what)
        return answer

    def _request(self, line: bytes, timeout: float, what: str, max_line: int) -> bytes:
        deadline = time.monotonic() + timeout
        self._send(line, deadline, timeout, what)
        self._told = ""
        self._answered = True  # whatever comes now is read as this answer, or refused
        # The usual case: one wait, one read, one whole line.
        if not self._wait_answer(deadline):
            self._timeout(timeout, what)
        try:
            buf = os.read(self._out, 65536)
        except BlockingIOError:
            buf = b""
            if self._closed_output:
                self._crashed(what)
        else:
            if not buf:
                self._crashed(what)
        if buf and buf.find(b"\n") == len(buf) - 1 and len(buf) <= max_line:
            return buf[:-1].rstrip(b"\r")
        return self._read_rest(buf, deadline, timeout, what, max_line)

    def tell(self, line: bytes, timeout: float, what: str) -> None:
        """Send ``line``, which wants no answer (a ``hand_over``); raises like :meth:`request`."""
        self._send(line, time.monotonic() + timeout, timeout, what)
        self._told = what

    def _send(self, line: bytes, deadline: float, timeout: float, what: str) -> None:
        """Write all of ``line`` by ``deadline``: one write in the usual case, the rest as the pipe drains."""
        if not self.alive:
            raise ExternalBotError("crashed", "the bot's process is not running")
        if self._answered and self._poll_in.poll(0):  # a hello written at start, unasked, is no harm
            self._unasked(what)
        try:
            n = os.write(self._in, line)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, ConnectionResetError):
            self._crashed(what)
        if n < len(line):
            self._write_rest(memoryview(line)[n:], deadline, timeout, what)

    def _unasked(self, what: str) -> None:
        """Output is waiting before a question is sent: a second answer, or an answer to a ``hand_over``.

        Read as it was, it became the answer to the next question (a move the bot never chose for it, or
        a forfeit naming the wrong answer).  Any byte there is a garbled answer; an end of file is left
        to the question itself (a crash).
        """
        try:
            early = os.read(self._out, 80)
        except (BlockingIOError, OSError):
            return
        if early:
            self.kill("garbled answer")
            if self._told:  # a bot that answers every line it gets: say which line took no answer
                raise ExternalBotError(
                    "garbled answer",
                    f"the bot answered a {self._told} line, which takes no answer (it wrote {early!r})",
                )
            raise ExternalBotError("garbled answer", f"{what}: the bot wrote {early!r} before it was asked")

    def _write_rest(self, view: memoryview, deadline: float, timeout: float, what: str) -> None:
        try:
            while view:
                if not self._poll_out.poll(self._ms_left(deadline)):
                    self._timeout(timeout, what)
                try:
                    view = view[os.write(self._in, view) :]
                except BlockingIOError:
                    continue
        except (BrokenPipeError, ConnectionResetError):
            self._crashed(what)

    def _read_rest(self, buf: bytes, deadline: float, timeout: float, what: str, max_line: int) -> bytes:
        """Read until the answer's newline (the answer came in pieces, or more than a line came)."""
        while True:
            nl = buf.find(b"\n")
            if nl > max_line or (nl < 0 and len(buf) > max_line):
                self.kill("garbled answer")
                raise ExternalBotError("garbled answer", f"{what}: a line longer than {max_line} bytes")
            if nl >= 0:
                break
            if not self._wait_answer(deadline):
                self._timeout(timeout, what)
            try:
                data = os.read(self._out, 65536)
            except BlockingIOError:
                if not self._closed_output:
                    continue
                data = b""  # it closed its output: as at an end of file
            if not data:
                if buf.strip():
                    self.kill("garbled answer")
                    raise ExternalBotError(
                        "garbled answer", f"{what}: the bot exited after writing {buf[:80]!r} with no newline"
                    )
                self._crashed(what)
            buf += data
        answer, rest = buf[:nl], buf[nl + 1 :]
        if rest:
            self.kill("garbled answer")
            raise ExternalBotError("garbled answer", f"{what}: more than one line in answer ({rest[:60]!r} follows)")
        return answer.rstrip(b"\r")

    def _wait_answer(self, deadline: float) -> bool:
        """Wait until the bot's output can be read (an answer, or its end); False at the deadline.

        Inside the wall bubblewrap's own two processes keep a copy of the bot's output, so a bot
        that closes its output without exiting leaves the pipe open: no end-of-file comes.  While
        an answer takes longer than :data:`CLOSED_CHECK_S`, the bot's open files are looked at each
        time: once none of them is its output, the output reads as ended (the caller sees a crash,
        "closed its output") instead of a timeout at the deadline.
        """
        if not self._watch_output:
            return bool(self._poll_in.poll(self._ms_left(deadline)))
        step = int(CLOSED_CHECK_S * 1000)
        while True:
            left = self._ms_left(deadline)
            if self._poll_in.poll(min(left, step)):
                return True
            if left <= step:
                return False
            if self._output_closed():
                self._closed_output = True
                return True

    def _program_pid(self) -> int | None:
        """The program's pid: inside the wall bwrap's grandchild (None when that can't be known)."""
        if not self.in_wall:
            return self.pid
        if self._program is not None:
            return self._program
        pid = self.pid  # bwrap, then its reaper (pid 1 in the wall), then the program (pid 2)
        for _ in range(2):
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    kids = f.read().split()
            except OSError:
                return None
            if len(kids) != 1:
                return None
            pid = int(kids[0])
        self._program = pid
        return pid

    def _check_idle_cpu(self, what: str) -> None:
        """Stop a program that used more CPU while it was not asked than :data:`IDLE_CPU_S` and
        :data:`IDLE_CPU_SHARE` allow (a ``timeout``: it overran its time, if not its answers')."""
        pid = self._program_pid()
        if pid is None:
            return
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            cpu = sum(int(x) for x in fields[11:15]) / _CLK_TCK  # utime stime cutime cstime, all threads
        except (OSError, ValueError, IndexError):
            return
        idle = max(0.0, time.monotonic() - self._born - self._asked_s)
        idle_cpu = cpu - _CORES * self._asked_s
        allowed = IDLE_CPU_S + IDLE_CPU_SHARE * idle
        if idle_cpu > allowed:
            self.kill("timeout")
            raise ExternalBotError(
                "timeout",
                f"after {what}: used {idle_cpu:.1f} s of CPU in the {idle:.1f} s it was not asked (at most "
                f"{IDLE_CPU_S:g} s and {IDLE_CPU_SHARE:.0%} of that time): threads or processes kept busy "
                "between answers slow its opponent",
            )

    def _output_closed(self) -> bool:
        """The walled program holds no copy of its output any more (False when that can't be known)."""
        pid = self._program_pid()
        if pid is None:
            return False
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return False
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == self._pipe:
                    return False
            except OSError:
                continue
        return bool(fds)  # an empty list: it is exiting (or hides its fds): not a closed output

    @staticmethod
    def _ms_left(deadline: float) -> int:
        return max(0, int((deadline - time.monotonic()) * 1000) + 1)  # rounded up; 0 once it has passed

    def _timeout(self, timeout: float, what: str):
        self.kill("timeout")
        raise ExternalBotError("timeout", f"no answer to {what} within {timeout:.3g} s")

    def _crashed(self, what: str):
        code = self._reap(1.0)
        self.kill("crashed")
        raise ExternalBotError("crashed", f"{self._exit_text(code)} while asked {what}{self._last_words(code)}")

    def _last_words(self, code: int | None = None) -> str:
        """The bot's last line of stderr, and a hint when it says what the sandbox forbids."""
        time.sleep(0.02)  # let the stderr reader catch the last line
        tail = self.log.tail_line()
        hint = crash_hint(tail, code, self.in_wall)
        if not tail:
            return f" ({hint[2:]})" if hint else ""
        return f" (last stderr line: {tail!r}{hint})"

    def _exit_text(self, code: int | None) -> str:
        if code is None:
            return "closed its output"
        if self.in_wall and 128 < code < 128 + 65:
            code = 128 - code  # bwrap exits with 128 + n when the program was killed by signal n
        if code < 0:
            sig = _signal_name(-code)
            hint = ""
            if sig == "SIGKILL":  # the address-space limit makes an allocation fail; only the OOM killer kills
                now = _oom_kills()
                if now is None or self._oom_kills is None:
                    hint = " (out of memory?)"
                elif now > self._oom_kills:
                    hint = " (the kernel's OOM killer struck meanwhile: out of memory?)"
            return f"killed by {sig}{hint}"
        return f"exited with code {code}"

    def _release_uid(self) -> None:
        """Give the bot's uid back to the pool: its process has ended (its namespace with it)."""
        if self._uid is not None:
            self._uid.release()
            self._uid = None

    def _reap(self, wait: float) -> int | None:
        try:
            return self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            return None

    # --- ending ------------------------------------------------------------------------------

    def kill(self, why: str = "") -> None:
        """Kill the process (and anything it started) and release its pipes."""
        if not self.alive:
            return
        self.alive = False
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except OSError:
            pass
        self._reap(5.0)
        self._release_uid()
        for f in (self._stdin, self._stdout):
            try:
                f.close()
            except OSError:
                pass
        self._stderr_thread.join(0.5)
        if why:
            self.log.note(f"killed pid {self.pid} ({why})")

    def close(self, grace: float = BYE_GRACE) -> None:
        """Say bye, give the bot ``grace`` seconds to exit, then kill it."""
        if not self.alive:
            return
        try:
            os.set_blocking(self._in, True)
            os.write(self._in, b'{"type":"bye"}\n')
            self._stdin.close()
        except OSError:
            pass
        code = self._reap(grace)
        if code is not None:
            self.alive = False
            try:
                os.killpg(self.pid, signal.SIGKILL)  # anything left in its group
            except (ProcessLookupError, PermissionError):
                pass
            self._release_uid()
            try:
                self._stdout.close()
            except OSError:
                pass
            self._stderr_thread.join(0.5)
            self.log.note(f"pid {self.pid} exited ({self._exit_text(code)})")
        else:
            self.kill("did not exit after bye")


#: What a launcher that forks meets in the sandbox (a pyenv shim runs ``pyenv``, a shell script more).
FORK_HINT = (
    "; the sandbox forbids new processes: start the program itself by its real path, not a launcher "
    "script that forks (e.g. a pyenv shim)"
)
#: What a launcher that runs a program from elsewhere meets in the wall (a pyenv shim execs the
#: interpreter under ~/.pyenv, which the wall does not show: bash exits 127, "No such file or directory").
UNSEEN_HINT = (
    "; the sandbox shows a program only the files its command names (and their folders) and the "
    "system's: start the program itself by its real path, not a launcher script that runs one from "
    "elsewhere (e.g. a pyenv shim; python3 -c 'import sys; print(sys.executable)' names the real one)"
)


def crash_hint(tail: str, code: int | None, in_wall: bool) -> str:
    """A hint for a bot that died of what the sandbox forbids, from its last stderr line and exit code
    (127: the shell found no program to run)."""
    low = tail.lower()
    if "fork" in low or "resource temporarily unavailable" in low:
        return FORK_HINT
    if in_wall and (code == 127 or "no such file or directory" in low):
        return UNSEEN_HINT
    return ""


def start_and_handshake(
    command: list[str],
    cwd: str | None,
    limits: Limits,
    log: LogBuffer,
    env: dict[str, str] | None = None,
    read_paths: tuple[str, ...] = (),
    tracer: tuple[str, ...] = (),
) -> tuple[BotProcess, dict]:
    """Start a bot and do the handshake; returns the process and its hello."""
    from arena.external.protocol import hello_line, parse_hello

    proc = BotProcess(command, cwd, limits, log, env, read_paths, tracer)
    limits_info = {"decision_s": limits.decision_s, "game_s": limits.game_s, "memory_mb": limits.memory_mb}
    try:
        line = proc.request(hello_line(limits_info), limits.start_s, "the handshake")
        hello = parse_hello(line)
    except ProtocolError as exc:
        proc.kill(exc.reason)
        raise ExternalBotError(exc.reason, exc.detail + vm_memory_hint(exc.detail, log, limits)) from None
    except ExternalBotError as exc:
        if exc.reason == "timeout":
            raise ExternalBotError("timeout", f"no handshake within {limits.start_s:.3g} s") from None
        hint = vm_memory_hint(exc.detail, log, limits)
        if hint:
            raise ExternalBotError(exc.reason, exc.detail + hint) from None
        raise
    except BaseException:  # a fault of the arena's own checking, or Ctrl-C: never leave the bot running
        proc.kill("the handshake was not finished")
        raise
    return proc, hello


#: What a Java VM says when the address-space limit leaves it too little to start (on stdout or stderr).
VM_MEMORY_WORDS = (
    "error occurred during initialization of vm",
    "insufficient memory for the java runtime",
    "could not reserve enough space",
    "failed to start thread",
    "unable to create native thread",
    "could not allocate compressed class space",
)


def vm_memory_hint(detail: str, log: LogBuffer, limits: Limits) -> str:
    """A hint to raise ``memory_mb`` when a handshake failed with a Java VM's words for too little memory.

    A VM reserves far more address space than it uses (heap, code cache, class space, a stack and a
    malloc arena per thread), and under a small ``memory_mb`` it fails to start in one of half a dozen
    ways, on stdout (a "garbled" handshake) or stderr, none of which names the limit.
    """
    text = (detail + "\n" + log.tail_line()).lower()
    if not limits.memory_mb:
        return ""
    if any(w in text for w in VM_MEMORY_WORDS):
        return (
            f"; a Java VM could not start within memory_mb = {limits.memory_mb} (address space, not memory in"
            " use): raise memory_mb (2048 by default), or give the VM a smaller -Xmx"
        )
    if any(f"killed by {sig}" in text for sig in ("sigsegv", "sigbus", "sigabrt")):  # a VM's silent failures
        return (
            f"; a VM (Java, node, .NET) may not start within memory_mb = {limits.memory_mb} (address space,"
            " not memory in use): if it is one, raise memory_mb (2048 by default)"
        )
    return ""
