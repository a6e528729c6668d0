"""The league database: SQLite, embedded, one file (``DIR/league.db``).

Plain :mod:`sqlite3` with numbered migration steps (:mod:`arena.league.migrations`)
rather than SQLAlchemy and Alembic: the schema is six tables, every query is
a short statement, and the standard library's module needs no install (the
arena's dependencies stay as they are).  What an ORM would add here is a
second way to spell the same SQL.

Every write goes through :func:`transaction` (``BEGIN IMMEDIATE`` ...
``COMMIT``, rolled back on any error), in WAL mode with ``synchronous=FULL``:
a committed write survives a ``kill -9`` or a power cut, and a write cut
short leaves nothing.  Connections are cheap; each request and the scheduler
open their own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.league.migrations import MIGRATIONS

DB_NAME = "league.db"


class LeagueError(ValueError):
    """Bad input to the league (a name, a file, a limit); the message is one line."""

    status = 400

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def connect(path: str | Path, *, create: bool = False) -> sqlite3.Connection:
    """A connection to the league database, migrated to the current schema."""
    p = Path(path)
    if not create and not p.exists():
        raise LeagueError(f"no league database at {p} (run 'arena league init' first)")
    conn = sqlite3.connect(p, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    migrate(conn)
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the missing migration steps, each in one transaction; the version reached."""
    version = schema_version(conn)
    if version > len(MIGRATIONS):
        raise LeagueError(
            f"the league database is at schema version {version}, newer than this arena knows "
            f"({len(MIGRATIONS)}); upgrade gin-arena"
        )
    for n in range(version, len(MIGRATIONS)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(conn) != n:  # another connection migrated meanwhile
                conn.execute("ROLLBACK")
                continue
            for statement in _statements(MIGRATIONS[n]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {n + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return schema_version(conn)


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration script (split on ';' at line ends; no ';' inside strings)."""
    buf: list[str] = []
    for line in script.splitlines():
        code = line.split("--", 1)[0].rstrip()
        if not code:
            continue
        buf.append(code)
        if code.endswith(";"):
            yield "\n".join(buf)
            buf = []
    if buf:
        yield "\n".join(buf)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception rolls everything back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def get_state(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return default if row is None else str(row[0])


def set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set a key of the league's state (inside the caller's transaction, or as its own)."""
    conn.execute(
        "INSERT INTO state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sql, args).fetchall()]
