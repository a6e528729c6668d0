"""The run folder's names, its format number and its errors.

Every part of the store names files through these constants, and says a
problem through :func:`say_once`, so a finding that several readers meet
(a damaged line, a bad chunk) reaches the log once per command.
"""

from __future__ import annotations

import datetime as dt
import errno
import logging

log = logging.getLogger("arena.store")

INDEX = "index.jsonl"
CHECKPOINT = "index.checkpoint.jsonl"
LOCK = ".lock"
SECRET = "seed.secret"
STORE_FORMAT = 2  # bumped when the folder layout changes; older folders are refused with a hint
META_KEY = b"arena.chunk"  # a chunk file's description of itself, in its Parquet schema metadata
KINDS = ("games", "hands", "actions")


class StoreError(ValueError):
    """A run folder that cannot be used as asked; the message is one line."""


class StoreBusy(StoreError):
    """Another process holds the folder's lock."""


class StoreDamaged(StoreError):
    """What was asked for is in a chunk whose files are damaged (named when read); a repair and a resume
    bring it back."""


class StoreEnvError(StoreError):
    """The file system refused: disk full, read-only, no permission; the message is one line."""


def as_input_error(exc: Exception, kind: type[Exception]) -> Exception:
    """``exc`` (a store's error, or another a command reads as bad input) as the command's own input error
    ``kind``; a :class:`StoreEnvError` stays itself: the machine's fault (exit 3), not the input's.
    Raise the result ``from None``."""
    return exc if isinstance(exc, StoreEnvError) else kind(str(exc))


_ERRNO_WORDS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
}


def env_error(exc: OSError, doing: str) -> StoreEnvError:
    """One line for a refused file operation: ``cannot <doing>: <why>``."""
    why = _ERRNO_WORDS.get(exc.errno or 0, exc.strerror or str(exc))
    return StoreEnvError(f"cannot {doing}: {why}")


_LOGGED: dict[str, None] = {}  # problem lines logged by this process, in order: each is said once


def say_once(line: str) -> None:
    """Log a problem line, unless this process said it already."""
    if line not in _LOGGED:
        _LOGGED[line] = None
        log.warning("%s", line)


def said(reset: bool = False) -> list[str]:
    """The problem lines logged so far (each once); ``reset`` starts a new list (a new command)."""
    out = list(_LOGGED)
    if reset:
        _LOGGED.clear()
    return out


def now() -> str:
    """The time stamp the store writes into its lines: UTC, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
