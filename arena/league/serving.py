"""Who is using a league folder: the lock ``arena league serve`` and ``arena league restore`` take on it.

A server reads and writes ``league.db`` for as long as it runs; a restore replaces that file.  Both hold
``DIR/server.lock`` (an advisory ``flock``) while they work, so a restore is refused while a server runs on
the folder (its connections and its scheduler would go on with the file they had), a second server on the
same folder is refused (two schedulers would play every pairing twice), and a server does not start in the
middle of a restore.  The kernel lets the lock go when its holder ends, however it ends (``kill -9``
included), so a crashed server never blocks a restore.  The file names its holder, for the refusal's line.

The lock is the folder's, so a server refuses a ``league.db`` that is a link (symbolic, or a second name of
one file): another folder could name the same database, and its server would take its own lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.league.db import DB_NAME, LeagueError

LOCK_NAME = "server.lock"


class FolderBusy(LeagueError):
    """Another process (a server, a restore) holds the league folder's lock."""


@contextmanager
def holding(folder: str | Path, what: str) -> Iterator[None]:
    """Hold ``folder``'s lock while the block runs, as ``what`` (e.g. ``arena league serve``); FolderBusy
    naming the holder when another process holds it."""
    path = Path(folder) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise LeagueError(f"cannot open the league's lock {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise LeagueError(f"cannot lock {path}: {exc.strerror or exc}") from None
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise FolderBusy(f"{Path(folder)} is in use by {holder}", 409) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({what})\n".encode(), 0)
        except OSError:
            pass  # the lock is held; naming the holder is a courtesy (a full disk may refuse it)
        yield
    finally:
        os.close(fd)  # lets the lock go


def check_own_database(folder: str | Path) -> None:
    """Refuse a league folder whose ``league.db`` is a symbolic link or a hard link (a file with another
    name): two folders' servers, each holding its own folder's lock, would play on one database."""
    path = Path(folder) / DB_NAME
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise LeagueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode) or st.st_nlink > 1:
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else f"one of {st.st_nlink} names of a file"
        raise LeagueError(
            f"{path} is {kind}; a league's database must be a file of its own folder (the server's lock is the "
            "folder's, so another folder's server could use it too): copy it in place of the link"
        )
