"""Limits applied to an external bot's process: rlimits and the seccomp allow-list.

This is the inner layer of the sandbox; the outer one, the wall of
namespaces and another user, is :mod:`arena.external.wall`.  Applied in
the child before the bot program runs, so it cannot lift them:

* ``RLIMIT_AS``: address space (``memory_mb``); an allocation past it fails
  (Python raises MemoryError, a JVM exits), which the arena sees as a crash.
* ``RLIMIT_FSIZE = 0``: no byte can be written to a file.  ``SIGXFSZ`` is
  ignored, so a write fails with ``EFBIG`` instead of killing the bot.
* ``RLIMIT_CORE = 0``: a crash writes no core file.
* ``RLIMIT_NOFILE``: :data:`BOT_OPEN_FILES` open files, soft and hard.  The
  data buffered in a pipe or socket pair is kernel memory, outside the
  address space ``RLIMIT_AS`` bounds, some 450 KiB per ``AF_UNIX`` pair; with
  the limit a container gives (often 2^20, which the bot could raise its
  soft limit to) a bot could hold gigabytes that way.  This bound keeps it
  to some 60 MiB.
* ``RLIMIT_NPROC``: in the wall when the arena runs as root, the tasks
  (processes and threads) of the bot's own uid, :func:`bot_task_limit`: a
  bot that starts threads without end gets EAGAIN at that bound instead of
  filling the machine's pid table or taking other bots' tasks.  Otherwise
  only a fallback (value 0) where seccomp is not available (the kernel
  counts it per user and ignores it for root).
* A seccomp **allow-list** (Linux x86-64; no library needed, see
  :func:`build_filter`): the system calls a Python or JVM program needs to
  compute and to talk on its pipes, threads but no processes, reading
  files but not opening them for writing, signals and ``prlimit64`` only
  on itself; everything else fails with ``EPERM`` (``clone3`` with
  ``ENOSYS``, so the C library falls back to ``clone`` for threads).  In
  the wall bubblewrap loads it (``--seccomp``) right before the program
  starts; with the weak sandbox it is installed here, with
  ``no_new_privs``, every capability dropped from the bounding set, and the
  parent's memory protected by :func:`protect_parent`.
* ``PR_SET_PDEATHSIG``: the bot is killed when the thread that started it
  ends (a worker killed or interrupted leaves no bot behind), and it runs in
  its own session, so a Ctrl-C in the terminal reaches the arena, which
  stops it.

The weak sandbox does not hide files: a bot can read any file its user can
read, and the memory of other dumpable processes of that user.  It is
named as such in the report and the manifest, and never chosen silently.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import struct
import sys
from dataclasses import dataclass, fields

from arena.settings.config import LIMITS, START_SECONDS

#: The two levels of sandbox (see :class:`Limits`).
SANDBOXES = ("wall", "weak")
#: ``RLIMIT_NOFILE`` of a bot (soft and hard): its files, pipes and sockets open at once.  Plenty for a
#: Python host or a JVM (a few dozen), and it bounds the kernel memory a bot holds in pipe and socket buffers.
BOT_OPEN_FILES = 256

# --- the limits ---------------------------------------------------------------------


def batch_limit(decision_s: float, game_s: float, rows: int) -> float:
    """Seconds one ask of ``rows`` decisions may take: a batched policy's call of ``rows`` games gets
    ``rows`` times the time of a decision, at most the larger of that time and ``game_s``.  One rule for
    a walled policy's batch (:meth:`arena.external.client.ExternalBot.act`) and the in-process
    watchdog (:mod:`arena.run.schedule`)."""
    if rows <= 1:
        return decision_s
    return min(rows * decision_s, max(decision_s, game_s))


@dataclass(frozen=True)
class Limits:
    """Time and resource limits of one external bot (picklable, all plain values).

    Times are wall-clock seconds of waiting for the bot.  ``memory_mb`` is
    the address-space limit (0 = none).  ``file_writes``/``processes``/
    ``network`` allow what the sandbox otherwise forbids; ``file_writes``
    opens the wall's private ``/tmp`` (``tmp_mb`` MiB, memory the kernel
    holds outside ``memory_mb``) to the bot, and nothing else.  ``sandbox`` is
    ``"wall"`` (the default: namespaces, another user and the seccomp
    allow-list, see :mod:`arena.external.wall`; refused where it can't be
    built) or ``"weak"`` (the seccomp and rlimit layer alone, asked for
    explicitly on machines without namespaces).  ``max_crashes``: after
    that many games in a row ended by the bot's crash or timeout, it
    forfeits the rest of the chunk at once.
    """

    decision_s: float = LIMITS["decision_seconds"][0]  # one answer
    game_s: float = LIMITS["game_seconds"][0]  # all answers of one game
    start_s: float = START_SECONDS["command"]  # start and handshake
    memory_mb: int = int(LIMITS["memory_mb"][0])
    file_writes: bool = False
    processes: bool = False
    network: bool = False
    log_bytes: int = 64 * 1024  # stderr kept between two drain_log() calls
    tmp_mb: int = 64  # size of the wall's /tmp, the one place file_writes lets a bot write
    sandbox: str = "wall"
    max_crashes: int = int(LIMITS["max_crashes"][0])

    def __post_init__(self) -> None:
        if self.sandbox not in SANDBOXES:
            raise ValueError(f"limit sandbox must be one of {', '.join(SANDBOXES)}, got {self.sandbox!r}")
        if isinstance(self.max_crashes, bool) or not isinstance(self.max_crashes, int) or self.max_crashes < 1:
            raise ValueError(f"limit max_crashes must be an int >= 1, got {self.max_crashes!r}")
        for name in ("decision_s", "game_s", "start_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"limit {name} must be a number of seconds > 0, got {value!r}")
        for name in ("memory_mb", "log_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"limit {name} must be an int >= 0, got {value!r}")
        if isinstance(self.tmp_mb, bool) or not isinstance(self.tmp_mb, int) or not 1 <= self.tmp_mb <= 4096:
            raise ValueError(f"limit tmp_mb must be an int from 1 to 4096, got {self.tmp_mb!r}")

    @classmethod
    def from_dict(cls, d: dict) -> Limits:
        """Limits from a config table; unknown keys are an error naming the known ones."""
        known = {f.name for f in fields(cls)}
        bad = sorted(set(d) - known)
        if bad:
            raise ValueError(f"unknown limit(s) {', '.join(bad)} (known: {', '.join(sorted(known))})")
        return cls(**d)


# --- seccomp (x86-64) -------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2

_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_CLONE_THREAD = 0x00010000
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# x86-64 system call numbers.  The allow-list: what a Python or JVM program needs to compute
# and to talk on its pipes.  Anything not named here fails with EPERM.
_X64_ALLOW = {
    # the hot ones first (the filter is a linear list)
    "read": 0, "write": 1, "poll": 7, "futex": 202, "ppoll": 271, "mmap": 9, "munmap": 11,
    "mprotect": 10, "madvise": 28, "brk": 12, "close": 3, "lseek": 8, "fstat": 5,
    "newfstatat": 262, "statx": 332, "stat": 4, "lstat": 6, "pread64": 17, "readv": 19,
    "writev": 20, "preadv": 295, "pwrite64": 18, "getdents64": 217, "getdents": 78,
    "access": 21, "faccessat": 269, "faccessat2": 439, "readlink": 89, "readlinkat": 267,
    "getcwd": 79, "chdir": 80, "fchdir": 81, "fsync": 74,
    "fdatasync": 75, "readahead": 187, "statfs": 137, "fstatfs": 138,
    "getxattr": 191, "lgetxattr": 192, "fgetxattr": 193, "listxattr": 194, "llistxattr": 195,
    "flistxattr": 196, "dup": 32, "dup2": 33, "dup3": 292, "pipe": 22, "pipe2": 293,
    "close_range": 436, "select": 23, "pselect6": 270, "epoll_create": 213, "epoll_create1": 291,
    "epoll_ctl": 233, "epoll_wait": 232, "epoll_pwait": 281, "epoll_pwait2": 441, "eventfd": 284,
    "eventfd2": 290, "timerfd_create": 283, "timerfd_settime": 286, "timerfd_gettime": 287,
    "signalfd": 282, "signalfd4": 289, "mremap": 25, "msync": 26, "mbind": 237,
    "get_mempolicy": 239, "set_mempolicy": 238, "membarrier": 324, "map_shadow_stack": 453,
    "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "rt_sigpending": 127,
    "rt_sigtimedwait": 128, "rt_sigsuspend": 130, "sigaltstack": 131, "pause": 34,
    "nanosleep": 35, "clock_nanosleep": 230, "clock_gettime": 228, "clock_getres": 229,
    "gettimeofday": 96, "time": 201, "getitimer": 36, "setitimer": 38, "alarm": 37,
    "timer_create": 222, "timer_settime": 223, "timer_gettime": 224, "timer_getoverrun": 225,
    "timer_delete": 226, "sched_yield": 24, "sched_getaffinity": 204, "sched_getparam": 143,
    "sched_getscheduler": 145, "sched_get_priority_max": 146, "sched_get_priority_min": 147,
    "sched_rr_get_interval": 148, "sched_getattr": 315, "getcpu": 309, "getpriority": 140,
    "getpid": 39, "getppid": 110, "gettid": 186, "getuid": 102, "geteuid": 107, "getgid": 104,
    "getegid": 108, "getgroups": 115, "getresuid": 118, "getresgid": 120, "getpgrp": 111,
    "getpgid": 121, "getsid": 124, "getrlimit": 97, "getrusage": 98, "times": 100,
    "sysinfo": 99, "uname": 63, "umask": 95, "getrandom": 318, "capget": 125,
    "set_robust_list": 273, "get_robust_list": 274, "set_tid_address": 218, "rseq": 334,
    "restart_syscall": 219, "arch_prctl": 158, "prctl": 157, "execve": 59, "exit": 60,
    "exit_group": 231, "wait4": 61, "waitid": 247,
    "futex_waitv": 449, "futex_wake": 454, "futex_wait": 455, "futex_requeue": 456,
    # Dropping to the bot's user (setpriv, in the wall as root): without capabilities these
    # can only shuffle a process's own ids and lower its own capabilities.
    "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117,
    "setresgid": 119, "setgroups": 116, "capset": 126,
}  # fmt: skip
_X64_CLONE, _X64_CLONE3 = 56, 435
_X64_OPEN, _X64_OPENAT = 2, 257
#: Allowed only on the bot itself (first argument 0 or its own pid).
_X64_SELF_ONLY = {"kill": 62, "tkill": 200, "tgkill": 234, "prlimit64": 302}
#: ioctl: only the harmless requests the C and Java libraries make on their fds.
_IOCTL = 16
_IOCTL_ALLOWED = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451, 0x540F)  # TCGETS TIOCGWINSZ FIONREAD
# FIONBIO FIONCLEX FIOCLEX TIOCGPGRP
#: socketpair(AF_UNIX, ...) only: a pair of connected sockets inside the bot's own process, which
#: reach nothing outside it (its own net and IPC namespaces, no path).  The JVM makes one when
#: it first opens a file channel (``Files.*``, ``Scanner(File)``, ``FileInputStream.getChannel``:
#: the pre-close descriptor of ``sun.nio.ch.FileDispatcherImpl``), so without it a Java bot
#: cannot read the files beside it.
_SOCKETPAIR = 53
_AF_UNIX = 1
#: Cross-process channels that need no write: two walled processes (a bot's two seats, or two
#: matchups of one bot on two workers) could signal each other through any file both can read.
#: Refused outright: ``flock`` (a lock per bit on a shared file), ``mincore`` (which pages of a
#: shared file are in the page cache).  ``inotify_*``, ``fanotify_*`` and ``cachestat`` are not on
#: the allow-list either.  Refused by argument:
#: ``fcntl`` with a lock, lease or directory-notify command (the other commands, which the C, Python
#: and Java libraries use on their own fds, stay allowed); ``preadv2`` with ``RWF_NOWAIT`` (it fails
#: when the page is not cached: ``mincore`` by another name); ``fadvise64`` with
#: ``POSIX_FADV_DONTNEED`` (it drops a shared file's pages from the cache: the other half of that
#: channel).  What stays is timing: CPU load, page-cache read times and the system-wide counters
#: (``sysinfo``, ``/proc/loadavg``), which a C library and a JVM read; see docs/explanation/wall.md.
_X64_FCNTL = 72
_FCNTL_DENIED = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)  # F_GETLK F_SETLK F_SETLKW F_OFD_GETLK F_OFD_SETLK
# F_OFD_SETLKW F_SETLEASE F_GETLEASE F_NOTIFY
_X64_PREADV2, _RWF_NOWAIT = 327, 0x8
_X64_FADVISE64, _FADV_DONTNEED = 221, 4
#: With ``processes``: starting and waiting for processes.
_X64_NEW_PROCESS = {"fork": 57, "vfork": 58}
#: With ``file_writes``.
_X64_FILE_CHANGE = {
    "creat": 85, "truncate": 76, "ftruncate": 77, "fallocate": 285, "rename": 82, "mkdir": 83,
    "rmdir": 84, "link": 86, "unlink": 87, "symlink": 88, "chmod": 90, "fchmod": 91,
    "mkdirat": 258, "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266,
    "fchmodat": 268, "renameat2": 316,
}  # fmt: skip
#: With ``network``.
_X64_NETWORK = {
    "socket": 41, "connect": 42, "accept": 43, "sendto": 44, "recvfrom": 45, "sendmsg": 46,
    "recvmsg": 47, "shutdown": 48, "bind": 49, "listen": 50, "getsockname": 51,
    "getpeername": 52, "socketpair": 53, "setsockopt": 54, "getsockopt": 55, "accept4": 288,
    "recvmmsg": 299, "sendmmsg": 307,
}  # fmt: skip


def seccomp_available() -> bool:
    """Whether this machine gets the seccomp part of the sandbox (Linux on x86-64)."""
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def _stmt(code: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _arg_lo(i: int) -> int:
    """Offset of the low 32 bits of argument i in struct seccomp_data (little-endian)."""
    return 16 + 8 * i


def build_filter(limits: Limits, pid: int) -> bytes:
    """The BPF program (struct sock_filter[]) for a bot whose pid is ``pid``: an allow-list.

    Allowed: :data:`_X64_ALLOW`; threads (``clone`` with ``CLONE_THREAD``;
    ``clone3`` answers ENOSYS so the C library falls back to ``clone``);
    ``open``/``openat`` without write flags (EACCES with them); ``fcntl``
    but its lock, lease and notify commands, ``preadv2`` without ``RWF_NOWAIT``,
    ``fadvise64`` but ``DONTNEED`` (:data:`_FCNTL_DENIED`); signals and
    ``prlimit64`` aimed at the bot itself (``pid`` or 0); a few ``ioctl``
    requests; ``socketpair`` of the ``AF_UNIX`` family; and what ``processes``, ``file_writes`` and ``network`` add.
    Everything else fails with EPERM: ``flock``, ``mincore``, inotify, fanotify, io_uring, the sigqueue calls,
    ptrace, process_vm_*, openat2, utime, xattr changes, unshare, mount,
    bpf, perf_event_open, keyctl, userfaultfd, memfd_create ...
    """
    eperm, eacces, enosys = (_RET_ERRNO | e for e in (errno.EPERM, errno.EACCES, errno.ENOSYS))
    p = [
        _stmt(_LD_ABS_W, 4),  # arch
        _jump(_JEQ, _AUDIT_ARCH_X86_64, 1, 0),
        _stmt(_RET, _RET_KILL_PROCESS),
        _stmt(_LD_ABS_W, 0),  # syscall number
        _jump(_JGE, 0x40000000, 0, 1),  # the x32 ABI: not for bots
        _stmt(_RET, eperm),
    ]

    def allow(nr: int) -> None:
        p.extend([_jump(_JEQ, nr, 0, 1), _stmt(_RET, _RET_ALLOW)])

    def if_flags(nr: int, arg: int, flags: int, action: int) -> None:
        # if nr: load the argument; any of flags set -> action, else allow
        p.extend(
            [
                _jump(_JEQ, nr, 0, 4),
                _stmt(_LD_ABS_W, _arg_lo(arg)),
                _jump(_JSET, flags, 0, 1),
                _stmt(_RET, action),
                _stmt(_RET, _RET_ALLOW),
            ]
        )

    def self_only(nr: int) -> None:
        # if nr: load argument 0; 0 or pid -> allow, else EPERM
        p.extend(
            [
                _jump(_JEQ, nr, 0, 5),
                _stmt(_LD_ABS_W, _arg_lo(0)),
                _jump(_JEQ, 0, 2, 0),
                _jump(_JEQ, pid, 1, 0),
                _stmt(_RET, eperm),
                _stmt(_RET, _RET_ALLOW),
            ]
        )

    def one_of(nr: int, arg: int, values: tuple[int, ...]) -> None:
        # if nr: load the argument; one of values -> allow, else EPERM
        n = len(values)
        p.extend([_jump(_JEQ, nr, 0, n + 3), _stmt(_LD_ABS_W, _arg_lo(arg))])
        for i, v in enumerate(values):
            p.append(_jump(_JEQ, v, n - i, 0))
        p.extend([_stmt(_RET, eperm), _stmt(_RET, _RET_ALLOW)])

    def none_of(nr: int, arg: int, values: tuple[int, ...]) -> None:
        # if nr: load the argument; one of values -> EPERM, else allow
        n = len(values)
        p.extend([_jump(_JEQ, nr, 0, n + 3), _stmt(_LD_ABS_W, _arg_lo(arg))])
        for i, v in enumerate(values):
            p.append(_jump(_JEQ, v, n - i, 0))
        p.extend([_stmt(_RET, _RET_ALLOW), _stmt(_RET, eperm)])

    for nr in _X64_ALLOW.values():
        allow(nr)
    none_of(_X64_FCNTL, 1, _FCNTL_DENIED)
    if_flags(_X64_PREADV2, 5, _RWF_NOWAIT, eperm)
    none_of(_X64_FADVISE64, 3, (_FADV_DONTNEED,))
    for nr in _X64_SELF_ONLY.values():
        self_only(nr)
    one_of(_IOCTL, 1, _IOCTL_ALLOWED)
    if not limits.network:
        one_of(_SOCKETPAIR, 0, (_AF_UNIX,))
    if limits.file_writes:
        for nr in (_X64_OPEN, _X64_OPENAT, *_X64_FILE_CHANGE.values()):
            allow(nr)
    else:
        if_flags(_X64_OPEN, 1, _WRITE_FLAGS, eacces)
        if_flags(_X64_OPENAT, 2, _WRITE_FLAGS, eacces)
    if limits.processes:
        for nr in (_X64_CLONE, *_X64_NEW_PROCESS.values()):
            allow(nr)
    else:
        # clone: a thread (CLONE_THREAD set) is allowed, a process is not.
        p.extend(
            [
                _jump(_JEQ, _X64_CLONE, 0, 4),
                _stmt(_LD_ABS_W, _arg_lo(0)),
                _jump(_JSET, _CLONE_THREAD, 0, 1),
                _stmt(_RET, _RET_ALLOW),
                _stmt(_RET, eperm),
            ]
        )
    p.extend([_jump(_JEQ, _X64_CLONE3, 0, 1), _stmt(_RET, enosys)])
    if limits.network:
        for nr in _X64_NETWORK.values():
            allow(nr)
    p.append(_stmt(_RET, eperm))
    return b"".join(p)


def filter_allows(prog: bytes, nr: int, args: tuple[int, ...] = ()) -> int:
    """Run the BPF program on one system call; returns its action (tests and ``check-bot``)."""
    data = struct.pack("=iI", nr, _AUDIT_ARCH_X86_64) + struct.pack("=Q", 0)
    data += b"".join(struct.pack("=Q", a) for a in (*args, *(0,) * (6 - len(args))))
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("=HBBI", prog, pc * 8)
        if code == _LD_ABS_W:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == _RET:
            return k
        elif code == _JEQ:
            pc += jt if acc == k else jf
        elif code == _JGE:
            pc += jt if acc >= k else jf
        elif code == _JSET:
            pc += jt if acc & k else jf
        else:
            raise ValueError(f"unknown BPF instruction {code:#x}")
        pc += 1


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
if _libc is not None:
    _prctl = _libc.prctl
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    _prctl.restype = ctypes.c_int


def _cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:  # closed: an open file left was a ResourceWarning on import
            return int(f.read())
    except (OSError, ValueError):
        return 40


_CAP_LAST = _cap_last_cap()


def protect_parent() -> None:
    """Make this (the arena's) process non-dumpable when it runs as a user
    other than root, so that a bot of the same user cannot read its memory
    through /proc (as root, the capabilities the bot lacks already stop it).
    Side effect: no core dumps of the arena process."""
    if _libc is not None and os.geteuid() != 0:
        _prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def bot_task_limit() -> int:
    """``RLIMIT_NPROC`` of a walled bot when the arena runs as root: the tasks (processes and threads)
    the bot may have.

    The kernel counts this limit per uid, and each walled bot runs as a uid of its own
    (:class:`arena.external.wall.BotUid`), so it is that bot's budget alone: a bot that starts
    threads without end gets EAGAIN at it, and the other bots of the moment start as usual.
    A JVM with ``-XX:+UseSerialGC`` runs some 20 threads, a Python host a few: 256 is ample.  On a
    small pid table with many CPUs (a worker per CPU, up to four bot processes each) it is cut so
    that the bots of the busiest legal load, all at their limit, take at most a quarter of the
    table (never under 64).  Without root the bots run as the arena's own user, whose other
    processes count too: no limit is set there (the user's own ``ulimit -u`` applies).
    """
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            pid_max = int(f.read())
    except (OSError, ValueError):
        pid_max = 32768
    bots = 4 * (os.cpu_count() or 1) + 8  # the workers' bots, and the league's checks beside them
    return max(64, min(256, pid_max // 4 // bots))


def make_preexec(limits: Limits, in_wall: bool = False):
    """A ``preexec_fn`` for :class:`subprocess.Popen` that applies ``limits`` in the child.

    It runs between fork and exec; an error is written to fd 2 and the child
    exits with code 126 (the arena reports it as a crash at start).
    ``in_wall``: the child execs bubblewrap, which needs its capabilities to
    build the namespaces and installs the seccomp filter and
    ``no_new_privs`` itself; only the rlimits and the parent-death signal
    are set here.
    """
    use_seccomp = seccomp_available() and not in_wall
    # As root, bwrap and setpriv ignore it; the bot, once dropped to its user, has it.
    tasks = bot_task_limit() if in_wall and os.geteuid() == 0 and _libc is not None else 0

    def preexec() -> None:
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec
            if limits.memory_mb:
                b = limits.memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (b, b))
            if not limits.file_writes:
                resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NOFILE, (BOT_OPEN_FILES, BOT_OPEN_FILES))
            if _libc is None:
                if not limits.processes:
                    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
                return
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if in_wall:
                if tasks:
                    resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
                return
            for cap in range(_CAP_LAST + 1):
                _prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly without CAP_SETPCAP
            _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
            if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
            if use_seccomp:
                prog = build_filter(limits, os.getpid())
                buf = ctypes.create_string_buffer(prog, len(prog))
                fprog = _SockFprog(len(prog) // 8, ctypes.addressof(buf))
                if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
            elif not limits.processes:
                resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except BaseException as exc:  # noqa: BLE001 - report and stop the child, never run unlimited
            os.write(2, f"arena: could not apply the bot's limits: {exc}\n".encode())
            os._exit(126)

    return preexec
