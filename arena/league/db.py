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

A damaged file is refused, never served: :func:`check_database` (run by
``arena league serve`` before it starts) names the file and the damage in one
line and says to restore a backup; :func:`backup` and :func:`restore` copy a
live database page by page through SQLite's online backup API, so neither
needs the server stopped.  :class:`Reconnecting` reopens a connection when the
file changes under it (replaced, truncated, written over by something other
than SQLite's own checkpoint... all change its inode, size or mtime), so a
damage that happens while serving reaches every connection at once as a
:class:`sqlite3.DatabaseError`, which the web side answers with a 503 and the
scheduler waits out, instead of one connection's page cache hiding it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from arena.league.migrations import MIGRATIONS

DB_NAME = "league.db"
#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"
#: What a refusal of a damaged database tells the organizer to do.
RESTORE_HINT = "restore it from a backup (arena league restore DIR BACKUP; see docs/how-to/league-admin.md)"


class LeagueError(ValueError):
    """Bad input to the league (a name, a file, a limit); the message is one line."""

    status = 400

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def connect(path: str | Path, *, create: bool = False, busy_seconds: float = 30.0) -> sqlite3.Connection:
    """A connection to the league database, migrated to the current schema.  ``busy_seconds``: how long a
    statement waits for a lock another connection holds before SQLite gives up (``database is locked``)."""
    p = Path(path)
    if not create and not p.exists():
        raise LeagueError(f"no league database at {p} (run 'arena league init' first)")
    private(p)
    conn = sqlite3.connect(p, timeout=busy_seconds, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
    migrate(conn)
    return conn


def private(db: Path) -> None:
    """Make the database file ``db`` (created empty if it is not there) readable by its owner alone, and its
    ``-wal`` and ``-shm`` beside it: it holds every session's CSRF value and the users' token hashes, and any
    account of a shared machine could read a 0644 file.  SQLite gives the ``-wal`` and ``-shm`` it creates
    the database file's mode.  An OSError (a file of another owner, a read-only folder) is left to SQLite's
    own refusal below it.

    Nothing here opens a database that exists: SQLite's locks are POSIX locks, which a process loses on
    closing *any* descriptor of the file, so an open and close beside a live connection (every new
    connection of the server's threads) dropped the others' locks.  Only a file not there yet is made
    (``O_EXCL``), and modes are changed by path."""
    if not db.exists():
        with suppress(OSError):
            os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        with suppress(OSError):
            if f.stat().st_mode & 0o077:
                f.chmod(0o600)


#: What a refusal of a read-only database tells the organizer to do (a restore would lose what it holds).
WRITABLE_HINT = "make it and its folder writable by the user the server runs as (the file is not damaged)"


def _read_only(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused a write because the file or its folder cannot be written (not damage)."""
    return str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_READONLY")


def busy(exc: BaseException) -> bool:
    """Whether SQLite gave up waiting for a lock another connection holds (``database is locked``): the file is
    sound, so what to say is to wait or end that transaction, not to restore a backup."""
    return str(getattr(exc, "sqlite_errorname", "")).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def check_database(path: str | Path, *, backup: bool = False, write: bool = False) -> None:
    """Refuse (:class:`LeagueError`, one line naming the file) a league database that cannot be served as is:
    missing, empty, not SQLite, at a schema version this arena does not know, or failing
    ``PRAGMA integrity_check``.  ``backup``: the file is a backup about to be restored, so the message
    names it as such and does not suggest restoring a backup.  ``write`` (a server about to start): also
    refuse a file SQLite can read but not write (its mode, its folder's, a read-only mount), which would
    serve every read and refuse every write; a write is begun and rolled back, so nothing changes.

    ``integrity_check`` rather than ``quick_check``: it also compares every index with its table, so it
    catches a flipped byte inside a row (a name, a token hash) that the quicker check passes; on a league's
    database (a few MB at most) it takes well under a second, once per start."""
    p = Path(path)
    kind = "the backup" if backup else "the league database"

    def refuse(what: str) -> LeagueError:
        return LeagueError(f"{p}: {what}" if backup else f"{p}: {what}; {RESTORE_HINT}")

    try:
        with open(p, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        if backup:
            raise LeagueError(f"{p}: no such backup file") from None
        raise LeagueError(f"no league database at {p} (run 'arena league init' first, or {RESTORE_HINT})") from None
    except OSError as exc:
        raise LeagueError(f"cannot read {p}: {exc.strerror or exc}") from None
    if not head:
        raise refuse(f"{kind} is empty (0 bytes)")
    if not head.startswith(SQLITE_HEADER) or len(head) < 100:
        raise refuse("this is not an SQLite database (its header is damaged or it is another kind of file)")
    try:
        conn = sqlite3.connect(f"{p.absolute().as_uri()}?mode=rw", uri=True, isolation_level=None, timeout=30.0)
    except sqlite3.Error as exc:
        raise refuse(f"{kind} cannot be opened ({exc})") from None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if not 1 <= version <= len(MIGRATIONS):
            raise refuse(
                f"{kind} is at schema version {version}; this arena knows versions 1..{len(MIGRATIONS)}"
                + (" (upgrade gin-arena if the file is from a newer one)" if version > len(MIGRATIONS) else "")
            )
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)").fetchall()]
        if problems != ["ok"]:
            raise refuse(f"{kind} fails SQLite's integrity check ({'; '.join(problems)[:200]})")
        if write:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"PRAGMA user_version = {version}")  # a write of the value it has, rolled back
            finally:
                conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        if _read_only(exc):
            raise LeagueError(f"{p}: {kind} is read-only ({exc}); {WRITABLE_HINT}") from None
        raise refuse(f"{kind} is damaged ({exc})") from None
    finally:
        conn.close()


def backup(path: str | Path, out: str | Path) -> int:
    """Copy the live database ``path`` to a new file ``out`` with SQLite's online backup API (consistent even
    while the server writes); the copy is checked before it is kept.  Returns its size in bytes."""
    src, dst = Path(path), Path(out)
    if dst.exists():
        raise LeagueError(f"{dst} already exists; give a new file name for the backup")
    check_database(src)
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        private(tmp)  # a backup holds what the database does
        source = sqlite3.connect(src, timeout=30.0)
        target = sqlite3.connect(tmp)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        finally:
            target.close()
            source.close()
        check_database(tmp)
        os.replace(tmp, dst)
    except OSError as exc:
        raise LeagueError(f"cannot write the backup {dst}: {exc.strerror or exc}") from None
    except sqlite3.Error as exc:
        raise LeagueError(f"cannot back up {src}: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return dst.stat().st_size


def restore(path: str | Path, backup_file: str | Path) -> None:
    """Put the backup ``backup_file`` (checked first) in place of the database ``path``.

    A sound live database is overwritten through the backup API, so connections that the server holds see
    the restored pages at once; a damaged one (which SQLite may not even open) is replaced as a file, with
    its ``-wal`` and ``-shm`` removed: then the server must be stopped first, as the docs say."""
    live, bak = Path(path), Path(backup_file)
    check_database(bak, backup=True)
    try:
        check_database(live)
        sound = True
    except LeagueError:
        sound = False
    try:
        if sound:
            source = sqlite3.connect(bak)
            target = sqlite3.connect(live, timeout=30.0)
            try:
                source.backup(target)
            finally:
                target.close()
                source.close()
            return
        tmp = live.with_name(f".{live.name}.{os.getpid()}.tmp")
        private(tmp)
        source = sqlite3.connect(bak)
        target = sqlite3.connect(tmp)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        for suffix in ("-wal", "-shm"):
            Path(f"{live}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, live)
    except OSError as exc:
        raise LeagueError(f"cannot restore {live}: {exc.strerror or exc}") from None
    except sqlite3.Error as exc:
        raise LeagueError(f"cannot restore {live} from {bak}: {exc}") from None


def atomic_write(path: Path, data: bytes) -> None:
    """A file of the league folder written whole or not at all (temp file, fsync, rename), as a backup is:
    ``league.toml`` (:meth:`arena.league.core.League.init`) and an uploaded bot file
    (:func:`arena.league.uploads.store_file`).  Here, below both, so neither imports the other for it.

    A refused write (disk full, no permission) raises its OSError and leaves no temp file behind.  The
    run store's :func:`arena.run.store.files.atomic_write` does the same job, but importing the store
    imports pandas and pyarrow, which the league's web process otherwise never loads.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # the write's own error is the one to report
        raise


def reuse_folder(folder: Path) -> None:
    """Mark the upload folder ``folder`` (``bots/<hash>``) as used now, before a new version points to it.

    An identical upload reuses the folder an earlier one left.  The sweep
    (:func:`arena.league.core.sweep_files`, in the scheduler's process) removes
    a folder no version points to once nothing in it changed for ten minutes:
    a leftover of a failed submission is such a folder, and a new version about
    to point to it must not lose it between its check and its commit.  Its
    time, set here, keeps the sweep off it for ten more minutes.
    """
    try:
        os.utime(folder)
    except OSError:
        pass  # gone or not ours to touch: the write that follows says so in its own words


def file_key(path: str | Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns) of a file; None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class Reconnecting:
    """One connection to a league database, reopened when the file changes under it (see the module's
    docstring), and dropped after a :class:`sqlite3.DatabaseError` so the next use tries afresh."""

    def __init__(self, path: str | Path, busy_seconds: float = 30.0):
        self.path = Path(path)
        self.busy_seconds = busy_seconds
        self.conn: sqlite3.Connection | None = None
        self.key: tuple[int, int, int] | None = None

    def get(self) -> sqlite3.Connection:
        key = file_key(self.path)
        if self.conn is not None and key != self.key:
            self.drop()
        if self.conn is None:
            self.conn = connect(self.path, busy_seconds=self.busy_seconds)
            self.key = key
        return self.conn

    def drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
        self.conn = None


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
    if version == len(MIGRATIONS):
        return version
    # Foreign keys off while the steps run (a PRAGMA that is a no-op inside a transaction, so set here): a
    # step that rebuilds a table drops the old one while rows of other tables still point to its ids.
    keys_on = bool(conn.execute("PRAGMA foreign_keys").fetchone()[0])
    conn.execute("PRAGMA foreign_keys=OFF")
    try:
        for n in range(version, len(MIGRATIONS)):
            conn.execute("BEGIN IMMEDIATE")
            try:
                if schema_version(conn) != n:  # another connection migrated meanwhile
                    conn.execute("ROLLBACK")
                    continue
                for statement in _statements(MIGRATIONS[n]):
                    conn.execute(statement)
                broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise LeagueError(
                        f"schema step {n + 1} would leave {len(broken)} row(s) pointing nowhere "
                        f"(first: table {broken[0][0]}, row {broken[0][1]}); {RESTORE_HINT}"
                    )
                conn.execute(f"PRAGMA user_version = {n + 1}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    finally:
        if keys_on:
            conn.execute("PRAGMA foreign_keys=ON")
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
