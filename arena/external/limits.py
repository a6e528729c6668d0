"""Limits applied to an external bot's process, in the child, just before it runs.

What is applied (between ``fork`` and ``exec``, so the bot program starts
under them and cannot lift them):

* ``RLIMIT_AS``: address space (``memory_mb``); an allocation past it fails
  (Python raises MemoryError, a JVM exits), which the arena sees as a crash.
* ``RLIMIT_FSIZE = 0``: no byte can be written to a file.  ``SIGXFSZ`` is
  ignored, so a write fails with ``EFBIG`` instead of killing the bot.
* ``RLIMIT_CORE = 0``: a crash writes no core file.
* ``RLIMIT_NPROC``: the kernel counts it per *user*, and ignores it for root
  (uid 0 is exempt from the check in ``fork``), so it cannot stop a bot of a
  run started as root, and for other users it counts every thread of every
  process of that user.  It is therefore only a fallback (value 0) where the
  seccomp filter below is not available.
* A seccomp filter (Linux x86-64; no library needed), installed with
  ``no_new_privs`` so it holds across ``exec``:

  - no new processes: ``fork``, ``vfork`` and ``clone`` without
    ``CLONE_THREAD`` fail with ``EPERM`` (threads are allowed: a JVM needs
    them); ``clone3`` fails with ``ENOSYS`` so the C library falls back to
    ``clone`` for threads.  ``exec`` is allowed: it replaces the bot, which
    stays one process under the same limits;
  - no file changes: opening a file for writing, creating, truncating,
    deleting, renaming, linking or changing the mode or owner of files fail
    with ``EACCES`` (``RLIMIT_FSIZE`` alone would still let a bot empty a
    file with ``O_TRUNC`` or delete it);
  - no reaching other processes: ``ptrace``, ``process_vm_readv/writev``,
    pidfd calls, and ``kill``/``tgkill``/``prlimit64``/scheduler settings
    aimed at any process but the bot's own fail with ``EPERM``;
  - no channels to other bots: ``socket`` and System V / POSIX shared
    memory, semaphores and message queues fail with ``EACCES``.

* Capabilities: every capability is dropped from the bounding set, so even
  a bot started by root runs without any (no ``CAP_SYS_PTRACE`` to read the
  arena's memory, no ``CAP_DAC_OVERRIDE``, no raising its own limits).
* ``PR_SET_PDEATHSIG``: the bot is killed when the thread that started it
  ends (a worker killed or interrupted leaves no bot behind), and it runs in
  its own session, so a Ctrl-C in the terminal reaches the arena, which
  stops it.

Reading the arena's memory (``/proc/<pid>/mem``, which seccomp cannot tell
from any other file) is refused by the kernel's ptrace access check: run as
root, the arena holds capabilities the bot lacks; run as another user, the
arena marks its own process non-dumpable when it starts a bot
(:func:`protect_parent`), which has the same effect.

What it does not do: hide files.  A bot can read any file its user can
read, and the memory of other dumpable processes of that user that hold no
more capabilities than it does.  Run the arena as a dedicated user (or in a
container) when bots may be hostile and the machine holds secrets.
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

# --- the limits ---------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Time and resource limits of one external bot (picklable, all plain values).

    Times are wall-clock seconds of waiting for the bot.  ``memory_mb`` is
    the address-space limit (0 = none).  ``file_writes``/``processes``/
    ``network`` allow what the sandbox otherwise forbids.
    """

    decision_s: float = LIMITS["decision_seconds"][0]  # one answer
    game_s: float = LIMITS["game_seconds"][0]  # all answers of one game
    start_s: float = START_SECONDS["command"]  # start and handshake
    memory_mb: int = int(LIMITS["memory_mb"][0])
    file_writes: bool = False
    processes: bool = False
    network: bool = False
    log_bytes: int = 64 * 1024  # stderr kept between two drain_log() calls

    def __post_init__(self) -> None:
        for name in ("decision_s", "game_s", "start_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"limit {name} must be a number of seconds > 0, got {value!r}")
        for name in ("memory_mb", "log_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"limit {name} must be an int >= 0, got {value!r}")

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

# x86-64 system call numbers.
_X64_NEW_PROCESS = {"fork": 57, "vfork": 58}
_X64_CLONE, _X64_CLONE3 = 56, 435
_X64_FILE_CHANGE = {
    "creat": 85,
    "truncate": 76,
    "rename": 82,
    "mkdir": 83,
    "rmdir": 84,
    "link": 86,
    "unlink": 87,
    "symlink": 88,
    "chmod": 90,
    "fchmod": 91,
    "chown": 92,
    "fchown": 93,
    "lchown": 94,
    "mknod": 133,
    "mkdirat": 258,
    "mknodat": 259,
    "fchownat": 260,
    "unlinkat": 263,
    "renameat": 264,
    "linkat": 265,
    "symlinkat": 266,
    "fchmodat": 268,
    "renameat2": 316,
    "fchmodat2": 452,
}
_X64_OPEN, _X64_OPENAT, _X64_OPENAT2 = 2, 257, 437
_X64_OTHER_PROCESS = {
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "pidfd_send_signal": 424,
    "tkill": 200,
    "setpriority": 141,
    "ioprio_set": 251,
    "migrate_pages": 256,
    "move_pages": 279,
    "kcmp": 312,
}
#: Allowed only on the bot itself (first argument 0 or its own pid).
_X64_SELF_ONLY = {
    "kill": 62,
    "tgkill": 234,
    "prlimit64": 302,
    "sched_setaffinity": 203,
    "sched_setparam": 142,
    "sched_setscheduler": 144,
    "sched_setattr": 314,
}
_X64_CHANNELS = {"socket": 41, "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240}


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
    """The BPF program (struct sock_filter[]) for a bot whose pid is ``pid``."""
    eperm, eacces, enosys = (_RET_ERRNO | e for e in (errno.EPERM, errno.EACCES, errno.ENOSYS))
    p = [
        _stmt(_LD_ABS_W, 4),  # arch
        _jump(_JEQ, _AUDIT_ARCH_X86_64, 1, 0),
        _stmt(_RET, _RET_KILL_PROCESS),
        _stmt(_LD_ABS_W, 0),  # syscall number
        _jump(_JGE, 0x40000000, 0, 1),  # the x32 ABI: not for bots
        _stmt(_RET, enosys),
    ]

    def deny(nr: int, action: int) -> None:
        p.extend([_jump(_JEQ, nr, 0, 1), _stmt(_RET, action)])

    def deny_if_flags(nr: int, arg: int, flags: int, action: int) -> None:
        # if nr: load the argument; flags set -> action, else allow
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

    if not limits.processes:
        for nr in _X64_NEW_PROCESS.values():
            deny(nr, eperm)
        deny(_X64_CLONE3, enosys)
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
    if not limits.file_writes:
        for nr in _X64_FILE_CHANGE.values():
            deny(nr, eacces)
        deny(_X64_OPENAT2, enosys)
        deny_if_flags(_X64_OPEN, 1, _WRITE_FLAGS, eacces)
        deny_if_flags(_X64_OPENAT, 2, _WRITE_FLAGS, eacces)
    for nr in _X64_OTHER_PROCESS.values():
        deny(nr, eperm)
    for nr in _X64_SELF_ONLY.values():
        self_only(nr)
    if not limits.network:
        for nr in _X64_CHANNELS.values():
            deny(nr, eacces)
    p.append(_stmt(_RET, _RET_ALLOW))
    return b"".join(p)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
if _libc is not None:
    _prctl = _libc.prctl
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    _prctl.restype = ctypes.c_int


def _cap_last_cap() -> int:
    try:
        return int(open("/proc/sys/kernel/cap_last_cap").read())
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


def make_preexec(limits: Limits):
    """A ``preexec_fn`` for :class:`subprocess.Popen` that applies ``limits`` in the child.

    It runs between fork and exec; an error is written to fd 2 and the child
    exits with code 126 (the arena reports it as a crash at start).
    """
    use_seccomp = seccomp_available()

    def preexec() -> None:
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec
            if limits.memory_mb:
                b = limits.memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (b, b))
            if not limits.file_writes:
                resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if _libc is None:
                if not limits.processes:
                    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
                return
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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
