"""Who is using a league folder: the lock ``arena league serve`` and ``arena league restore`` take on it.

A server reads and writes ``league.db`` for as long as it runs; a restore replaces that file.  Both hold
``DIR/server.lock`` (an advisory ``flock``) while they work, so a restore is refused while a server runs on
the folder (its connections and its scheduler would go on with the file they had), a second server on the
same folder is refused (two schedulers would play every pairing twice), and a server does not start in the
middle of a restore.  The kernel lets the lock go when its holder ends, however it ends (``kill -9``
included), so a crashed server never blocks a restore.  The file names its holder, for the refusal's line.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.league.db import LeagueError

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
