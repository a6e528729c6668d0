"""Files of a run folder: whole writes, fsync'd appends, checksums, the lock, quarantine.

Each write here is whole or absent after a crash: a file is written to a
temp name, fsync'd and renamed (:func:`atomic_write`); a line is appended
and fsync'd (:func:`append_line`).  A temp file a crash leaves is found by
:func:`temp_files` and deleted by the next writer, which holds the folder's
lock (:func:`take_lock`).
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
from pathlib import Path

from arena.run.store.format import KINDS, LOCK, StoreBusy, StoreError, env_error

#: A chunk file's name and a temp file's, both checked with ``fullmatch``: ``$`` would also pass a name
#: ending in a newline (``00001.parquet\n`` taken for a chunk, ``.x.tmp1\n`` deleted as a temp file).
CHUNK_FILE = re.compile(r"(\d{5})\.parquet")
TEMP_FILE = re.compile(r"\..+\.tmp\d+")

#: The most bytes the store reads of a run's own text files (config, rules, manifest): more is not one.
TEXT_LIMIT = 4 << 20

#: The folders of a run folder the store writes into or moves files out of: never through a link.
PLAIN_DIRS = (*KINDS, "quarantine", "analysis", "logs")


def linked_dirs(folder: Path) -> list[str]:
    """The :data:`PLAIN_DIRS` of ``folder`` that are links: to another run's, or anywhere."""
    return [n for n in PLAIN_DIRS if (folder / n).is_symlink()]


def link_problem(folder: Path, name: str) -> str:
    """The line naming a linked :data:`PLAIN_DIRS` folder ``name`` of ``folder`` (every reader and writer says it)."""
    return (
        f"{folder / name}: {name} is a link, and the store never reads, writes or moves a run's files "
        "through one (they could be another run's); put the folder itself there"
    )


def inside(folder: Path, path: Path) -> bool:
    """Whether ``path`` (a path under ``folder``) is reached with no link on the way to its last part.

    A chunk folder that links to another run's would have the store write into, or move files out of,
    that other run."""
    rel = path.relative_to(folder)
    return os.path.realpath(path.parent) == os.path.normpath(os.path.join(os.path.realpath(folder), rel.parent))


# Locks held by this process, closed in forked worker processes so a worker
# that outlives its driver for a moment does not keep the folder locked.
_HELD_LOCKS: set[int] = set()


def make_folder(d: Path, what: str) -> None:
    """Create folder ``d`` (``what`` names it: "the run folder"), with its parents.

    A file on its path is the input's fault, a :class:`StoreError` (exit 2); a refused mkdir (no
    permission, a full or read-only disk) the machine's, a :class:`StoreEnvError` (exit 3).  Runs and
    sweeps make their folders by this rule.
    """
    if d.exists() and not d.is_dir():
        raise StoreError(f"results path {d} is a file, not a folder")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.EEXIST):  # a file on the path: the input is wrong
            raise StoreError(f"cannot create {what} {d}: a file is in the way ({exc.strerror})") from None
        raise env_error(exc, f"create {what} {d}") from None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write a file whole or not at all (temp file, fsync, rename); StoreEnvError when refused.

    A temp file a refused write leaves is deleted; one a crash leaves is
    deleted by the next writer (:meth:`RunStore.open_for_writing`).
    """
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise env_error(exc, f"write {path}") from None


def read_inside(folder: Path, rel: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``rel`` of ``folder``, at most ``limit`` + 1 of them (OSError if not).

    ``rel`` comes from a stored line, and a stored byte is not trusted: an
    index that names ``../../elsewhere`` or ``/dev/zero``, or a chunk file
    that is a link out of the folder, would have the store (and the viewer
    over it) read files outside the run, or read without end.  So the path
    must stay inside the folder with no link on the way, the file must be a
    regular file, and a reader that knows how long it should be reads one
    byte more at most (enough to see that it is longer).
    """
    root = os.path.realpath(folder)
    path = os.path.join(root, rel)
    if os.path.isabs(rel) or os.path.realpath(path) != os.path.normpath(path) or ".." in Path(rel).parts:
        raise OSError(errno.EPERM, "outside the run folder or through a link", rel)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read() if limit is None else f.read(limit + 1)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_line(path: Path, line: str) -> None:
    """Append one line and fsync it (OSError passes); a torn last line first gets its newline.

    A line cut short by a crash must not swallow the next one: it stays a
    bad line of its own, named by the reader.
    """
    torn = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            torn = f.read(1) != b"\n"
    new = not path.exists()
    with open(path, "a", encoding="utf-8") as f:
        f.write(("\n" if torn else "") + line)
        f.flush()
        os.fsync(f.fileno())
    if new:
        fsync_dir(path.parent)


#: How the lock file is opened: never through a link (a writer would empty the file it points to), and
#: never waiting (a pipe put there would block the open for ever); :func:`_open_lock` wants a regular file.
_LOCK_FLAGS = os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


def lock_problem(folder: Path) -> str | None:
    """The line naming ``folder``'s lock file when it is not a regular file (a link, a pipe, a folder), else None."""
    try:
        mode = os.lstat(folder / LOCK).st_mode
    except OSError:
        return None  # none yet: the first writer makes it
    if stat.S_ISREG(mode):
        return None
    what = "a link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "not a regular file"
    return (
        f"{folder / LOCK} is {what}; the store takes its lock only in a regular file of its own, "
        "so no run can write here until it is removed"
    )


def _open_lock(folder: Path, flags: int) -> int:
    """The lock file's descriptor; StoreError when it is not a regular file (:func:`lock_problem`)."""
    try:
        fd = os.open(folder / LOCK, flags | _LOCK_FLAGS, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise StoreError(lock_problem(folder) or f"{folder / LOCK}: {exc.strerror}") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(lock_problem(folder) or f"{folder / LOCK} is not a regular file")
    return fd


def lock_holder(folder: Path) -> str | None:
    """Who holds ``folder``'s lock ("pid 1234 (arena run)"), or None when nobody does; changes nothing.

    A shared lock is tried and let go at once: it fails only while a writer holds the folder.  A lock
    file that is not a regular file is held by nobody (no writer can take it; fsck names it).
    """
    try:
        fd = _open_lock(folder, os.O_RDONLY)
    except (OSError, StoreError):
        return None  # no lock file: never written to, so nobody holds it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def take_lock(folder: Path, what: str) -> int:
    """Hold ``folder``'s lock (its file names the holder); StoreBusy when another process holds it."""
    path = folder / LOCK
    try:
        fd = _open_lock(folder, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise env_error(exc, f"lock {path}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        try:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
        finally:
            os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            who = holder or "another process"
            raise StoreBusy(f"{folder} is in use by {who}; wait for it to finish") from None
        raise env_error(exc, f"lock {path}") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({what})\n".encode(), 0)
    except OSError:
        pass  # the lock is held; naming the holder is a courtesy (a full disk may refuse it)
    _HELD_LOCKS.add(fd)
    return fd


def release_lock(fd: int) -> None:
    """Release a lock :func:`take_lock` took (also released by the OS if the process dies)."""
    _HELD_LOCKS.discard(fd)
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass
    os.close(fd)


def close_inherited_locks() -> None:
    for fd in list(_HELD_LOCKS):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD_LOCKS.clear()


def temp_files(folder: Path) -> list[Path]:
    """The temp files of writes cut short, in the folder and its chunk folders."""
    out = [p for p in folder.iterdir() if TEMP_FILE.fullmatch(p.name)] if folder.is_dir() else []
    for kind in KINDS:
        base = folder / kind
        if base.is_dir():
            out += [p for p in base.rglob(".*.tmp*") if TEMP_FILE.fullmatch(p.name)]
    return out


def move_aside(folder: Path, src: Path, why: str, *, copy: bool = False) -> Path:
    """Move (or copy) a file of the folder into ``quarantine/``, under a name saying what it was and when."""
    q = folder / "quarantine"
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    rel = src.relative_to(folder)
    if not inside(folder, src) or q.is_symlink():
        raise StoreError(f"{folder}: refusing to move {rel} to quarantine/ through a link (another folder's file?)")
    chunk = CHUNK_FILE.fullmatch(rel.name)
    if len(rel.parts) == 3 and rel.parts[0] in KINDS and chunk:
        dest = q / f"{rel.parts[1]}-{chunk.group(1)}-{rel.parts[0]}-{stamp}.parquet"
    else:
        dest = q / f"{'-'.join(rel.parts)}-{stamp}"
    try:
        q.mkdir(exist_ok=True)
        if copy:
            shutil.copyfile(src, dest)
        else:
            os.replace(src, dest)
    except OSError as exc:
        raise env_error(exc, f"move {rel} to quarantine/ ({why})") from None
    return dest
