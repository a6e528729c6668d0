"""The run folder: the one module that writes and reads it.

A run folder ``results/<name>/`` holds::

    config.toml, rules.toml   the config of the latest run on the folder, its resolved rules
    manifest.json             versions, bots, seed, times, machine, status
    index.jsonl               the index: one checked JSON line per matchup and per stored chunk
    index.checkpoint.jsonl    a copy of the index, written by atomic rename at the end of each run
    games/<matchup>/<chunk>.parquet   one row per game  (the games dataset)
    hands/<matchup>/<chunk>.parquet   one row per hand  (the hands dataset)
    actions/<matchup>/<chunk>.parquet one row per game: its action log (exact replays)
    logs/                     what bots printed, per matchup
    quarantine/               files that failed their checks (chunks, a damaged index), moved aside
    seed.secret               the drawn key of a ``seed = "secret"`` run
    .lock                     held by the run or submit writing the folder

The chunk files are the data, and nothing joins them into a second copy;
but a folder also holds superseded matchups, chunks a crash left without
their index line and files that failed their checksum, so read it through
the store: :meth:`RunStore.games`, :meth:`RunStore.chunks` (one verified
chunk at a time) or :meth:`RunStore.dataset` (a pyarrow dataset of exactly
the current, verified chunk files), never with a raw glob of ``games/``.

Why an append-only index with a checksum per file: a chunk counts as stored
only when its index line is there and its bytes hash to what the line says.
A crash between writing a file and its line, a truncated or bit-flipped
file: each shows up as a chunk that is not stored, which a resume plays
again.  Bad files are named in one line and moved to ``quarantine/``, never
read as data.  Lines are appended and fsync'd (never rewritten by a run), so
storing the 5,000th chunk costs what storing the first did.

The index can be rebuilt: every chunk file describes itself (its matchup id
and number, both bots and their hashes, its chunk number and game-id range,
in the Parquet metadata under ``arena.chunk``) and carries Parquet page
checksums.  :meth:`RunStore.check` (``arena fsck``) puts damaged index lines
back from the checkpoint copy, or from the chunk files, and names each
finding in one line; ``run``, ``submit`` and ``report`` call it too, so a
damaged line is never skipped in silence.  The two kinds of line no chunk
file can tell - ``revive`` (which version of a pair is current) and ``limit``
(an SPRT stop) - come back from ``manifest.json``, which names each current
matchup and its limit (:meth:`RunStore.current_state`).

Matchups are kept for good.  A rerun with fewer bots, or the original
command after ``arena submit``, plays only what its plan lacks and leaves
every other stored matchup in place; reports show every current matchup.  A
matchup is *superseded* (kept on disk, left out of reports) only when a
later run stores the same two bots under a new identity: a changed bot file,
other parameters.

Game ids are ``matchup number * games_per_pair + index in the matchup``.  A
matchup's number is fixed when it is first planned, written in its index
line and in every one of its chunk files, and never reused: game ids are the
same on any number of workers and do not move when bots are added, when a
run resumes, or when an index line is lost.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import io
import json
import logging
import os
import re
import secrets
import shutil
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.run.schema import (
    ACTIONS_COLUMNS,
    ACTIONS_SCHEMA,
    GAMES_COLUMNS,
    GAMES_SCHEMA,
    HANDS_COLUMNS,
    HANDS_SCHEMA,
)
from arena.settings.config import ConfigError, TournamentConfig, config_from_dict
from arena.settings.rules import Rules, RulesError, load_rules

log = logging.getLogger("arena.store")

INDEX = "index.jsonl"
CHECKPOINT = "index.checkpoint.jsonl"
LOCK = ".lock"
SECRET = "seed.secret"
STORE_FORMAT = 2  # bumped when the folder layout changes; older folders are refused with a hint
META_KEY = b"arena.chunk"  # a chunk file's description of itself, in its Parquet schema metadata
KINDS = ("games", "hands", "actions")
_CHUNK_FILE = re.compile(r"^(\d{5})\.parquet$")
_TEMP_FILE = re.compile(r"^\..+\.tmp\d+$")


class StoreError(ValueError):
    """A run folder that cannot be used as asked; the message is one line."""


class StoreBusy(StoreError):
    """Another process holds the folder's lock."""


class StoreEnvError(StoreError):
    """The file system refused: disk full, read-only, no permission; the message is one line."""


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


# --- the schemas: arena.run.schema defines them --------------------------------------

_COLUMNS = {"games": GAMES_COLUMNS, "hands": HANDS_COLUMNS, "actions": ACTIONS_COLUMNS}


def actions_table(game_ids: np.ndarray, offsets: np.ndarray, actions: np.ndarray) -> pa.Table:
    """The actions table of ``len(game_ids)`` games: game ``i`` answered ``actions[offsets[i]:offsets[i+1]]``."""
    data = np.ascontiguousarray(actions, dtype=np.uint8).tobytes()
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(offsets) and offsets[-1] >= 2**31:
        raise StoreError("actions of one chunk exceed 2 GiB; use a smaller chunk_size")
    col = pa.BinaryArray.from_buffers(
        pa.binary(),
        len(game_ids),
        [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)],
    )
    return pa.Table.from_arrays([pa.array(np.asarray(game_ids, dtype=np.int64)), col], schema=ACTIONS_SCHEMA)


def to_table(df: pd.DataFrame, schema: pa.Schema, what: str) -> pa.Table:
    """A frame as a table of exactly ``schema`` (column set, order and types), or StoreError."""
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise StoreError(
            f"{what} table does not match the stored schema "
            f"(missing: {', '.join(missing) or '-'}; unexpected: {', '.join(extra) or '-'})"
        )
    df = df[list(schema.names)]
    arrays = []
    for f in schema:
        col = df[f.name]
        if pa.types.is_dictionary(f.type):
            arrays.append(
                pa.array(col.astype(str).to_numpy(dtype=object), type=pa.string()).dictionary_encode().cast(f.type)
            )
        else:
            arrays.append(pa.array(col.to_numpy(), type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _parquet_bytes(table: pa.Table, meta: dict[str, Any] | None = None) -> bytes:
    """Parquet bytes with page checksums, and ``meta`` (JSON) under :data:`META_KEY`."""
    if meta is not None:
        table = table.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", write_page_checksum=True)
    return buf.getvalue()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chunk_meta(data: bytes) -> dict[str, Any]:
    """What a chunk file says of itself, after checking every page checksum and the game ids.

    Raises StoreError (one line) when the bytes are not a whole, intact
    chunk file of this store: not Parquet, a page that fails its CRC, no or
    bad ``arena.chunk`` metadata, or rows that disagree with it.
    """
    try:
        table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"not a readable Parquet file ({str(exc).splitlines()[0][:120]})") from None
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise StoreError("has no arena.chunk metadata (written by an older version?)")
    try:
        meta = json.loads(raw)
        kind = meta["kind"]
        lo, hi = (int(v) for v in meta["game_ids"])
        rows = int(meta["games"] if kind in ("games", "actions") else meta["hands"])
        for key in (
            "matchup",
            "matchup_no",
            "bot_a",
            "bot_b",
            "identity",
            "games_per_pair",
            "chunks",
            "chunk",
        ):
            meta[key]  # noqa: B018 - present, or KeyError
    except (ValueError, KeyError, TypeError):
        raise StoreError("its arena.chunk metadata is unreadable") from None
    if kind not in KINDS or table.schema.names != list(_COLUMNS[kind]):
        raise StoreError(f"its columns are not those of a {kind} chunk")
    if table.num_rows != rows:
        raise StoreError(f"holds {table.num_rows} rows, its metadata says {rows}")
    ids = table.column("game_id").to_numpy()
    if len(ids) and (ids.min() < lo or ids.max() >= hi):
        raise StoreError(f"holds game ids outside its range {lo}..{hi - 1}")
    return meta


# --- index records -------------------------------------------------------------------


def _line(record: dict[str, Any]) -> str:
    body = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return (
        json.dumps(
            {"crc": zlib.crc32(body.encode()), "r": record},
            sort_keys=True,
            separators=(",", ":"),
        )
        + "\n"
    )


def _parse_line(text: str) -> dict[str, Any] | None:
    try:
        outer = json.loads(text)
        rec = outer["r"]
        body = json.dumps(rec, sort_keys=True, separators=(",", ":"))
        if zlib.crc32(body.encode()) != outer["crc"] or not isinstance(rec, dict):
            return None
        return rec
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class Matchup:
    """A matchup registered in the index; ``no`` is its fixed number (game ids start at ``no * games``)."""

    id: str
    no: int
    bot_a: str
    bot_b: str
    games: int  # planned games
    chunks: int  # planned chunks
    identity: dict[str, Any] = field(default_factory=dict)
    superseded: bool = False
    limit: int | None = None  # chunks that count (an SPRT stop), None = all

    @property
    def name(self) -> str:
        return f"{self.bot_a} vs {self.bot_b}"


@dataclass(frozen=True)
class ChunkRecord:
    matchup: str
    chunk: int
    games: int
    hands: int
    files: dict[str, dict[str, Any]]  # kind -> {"path", "sha256", "bytes"}
    ids: tuple[int, int] | None = None  # game ids lo..hi-1 (None in folders from before they were kept)


@dataclass
class StoredChunk:
    """One verified chunk as tables."""

    matchup: str
    bot_a: str
    bot_b: str
    chunk: int
    games: pd.DataFrame
    hands: pd.DataFrame | None
    actions: pd.DataFrame | None = None


@dataclass
class GameRecord:
    """One stored game: its row, its hands (or None) and its action log (or None)."""

    game: pd.Series
    hands: pd.DataFrame | None
    actions: np.ndarray | None
    matchup: Matchup


@dataclass(frozen=True)
class BadLine:
    """An index line that failed its check: its number (from 1) and what it looked like."""

    line: int
    looks_like: str  # "matchup", "chunk", ... or "" when nothing can be told
    torn: bool  # the last line, with no newline: a write cut short

    def describe(self) -> str:
        what = f"a {self.looks_like} line" if self.looks_like else "a line"
        return f"{what} cut short (torn last line)" if self.torn else f"{what} that fails its check (damaged)"


@dataclass
class Index:
    """The index as read: matchups in order, the latest record of each chunk, bad lines."""

    matchups: dict[str, Matchup] = field(default_factory=dict)
    chunks: dict[tuple[str, int], ChunkRecord] = field(default_factory=dict)
    bad: list[BadLine] = field(default_factory=list)
    lines: int = 0

    @property
    def bad_lines(self) -> int:
        return len(self.bad)

    def by_no(self, no: int) -> Matchup | None:
        for m in self.matchups.values():
            if m.no == no:
                return m
        return None

    def next_no(self) -> int:
        return 1 + max((m.no for m in self.matchups.values()), default=-1)


def _read_lines(
    path: Path,
) -> list[tuple[dict[str, Any] | None, BadLine | None]] | None:
    """Each line of an index file, parsed or named bad; None when the file does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise env_error(exc, f"read {path}") from None
    texts = data.split(b"\n")
    last_torn = bool(data) and not data.endswith(b"\n")
    if not last_torn:
        texts = texts[:-1]
    out: list[tuple[dict[str, Any] | None, BadLine | None]] = []
    for i, raw in enumerate(texts):
        if not raw.strip():
            out.append(({}, None))  # blank: left by a torn line's repair; counts as a line for alignment
            continue
        text = raw.decode("utf-8", errors="replace")
        rec = _parse_line(text)
        if rec is None:
            m = re.search(r'"type"\s*:\s*"(\w+)"', text)
            out.append(
                (
                    None,
                    BadLine(
                        i + 1,
                        m.group(1) if m else "",
                        last_torn and i == len(texts) - 1,
                    ),
                )
            )
        else:
            out.append((rec, None))
    return out


def _apply(records: Sequence[dict[str, Any]], idx: Index | None = None) -> Index:
    """The index that a sequence of records describes (records that don't fit are skipped)."""
    idx = idx or Index()
    positional = 0  # numbers of matchup lines written before numbers were stored: their place
    for rec in records:
        try:
            _apply_one(idx, rec, positional)
        except (KeyError, TypeError, ValueError):
            continue
        if rec.get("type") == "matchup":
            positional += 1
    return idx


def _apply_one(idx: Index, rec: dict[str, Any], positional: int) -> None:
    kind = rec.get("type")
    if kind == "matchup":
        mid = rec["id"]
        if mid in idx.matchups:
            idx.matchups[mid].superseded = False
            return
        for other in idx.matchups.values():
            if {other.bot_a, other.bot_b} == {rec["bot_a"], rec["bot_b"]}:
                other.superseded = True
        no = rec.get("no")
        idx.matchups[mid] = Matchup(
            mid,
            int(no) if no is not None else positional,
            str(rec["bot_a"]),
            str(rec["bot_b"]),
            int(rec["games"]),
            int(rec["chunks"]),
            dict(rec.get("identity", {})),
        )
    elif kind == "revive":  # a matchup made current again (its bots came back unchanged)
        revived = idx.matchups.get(rec["id"])
        if revived is not None:
            for other in idx.matchups.values():
                if other is not revived and {other.bot_a, other.bot_b} == {
                    revived.bot_a,
                    revived.bot_b,
                }:
                    other.superseded = True
            revived.superseded = False
    elif kind == "chunk":
        ids = rec.get("ids")
        files = {
            k: {
                "path": str(f["path"]),
                "sha256": str(f["sha256"]),
                "bytes": int(f["bytes"]),
            }
            for k, f in rec["files"].items()
        }
        idx.chunks[(rec["matchup"], int(rec["chunk"]))] = ChunkRecord(
            str(rec["matchup"]),
            int(rec["chunk"]),
            int(rec["games"]),
            int(rec["hands"]),
            files,
            (int(ids[0]), int(ids[1])) if ids else None,
        )
    elif kind == "drop":
        idx.chunks.pop((rec["matchup"], int(rec["chunk"])), None)
    elif kind == "limit":
        limited = idx.matchups.get(rec["matchup"])
        if limited is not None:
            limited.limit = None if rec["chunks"] is None else int(rec["chunks"])


def read_index(path: Path) -> Index:
    """The index file as it reads (bad lines named in ``bad``, nothing recovered)."""
    lines = _read_lines(path) or []
    idx = _apply([rec for rec, _ in lines if rec])
    idx.bad = [bad for _, bad in lines if bad is not None]
    idx.lines = len(lines)
    return idx


@dataclass(frozen=True)
class Finding:
    """One thing :meth:`RunStore.check` found: what is wrong, and what is (or would be) done."""

    what: str
    done: str  # past tense: what repair did or does
    would: str = ""  # what --repair would do, when the check only reads ("" = same as done)

    def line(self, repaired: bool) -> str:
        return f"{self.what}; {self.done if repaired or not self.would else self.would}"


@dataclass
class _Scan:
    records: list[dict[str, Any]]
    findings: list[Finding]
    quarantine: list[tuple[Path, str]]  # files to move aside
    remove: list[Path]  # temp files to delete
    rewrite: bool  # the index file must be rewritten


# --- the store -------------------------------------------------------------------------

_LOGGED: dict[str, None] = {}  # problem lines logged by this process, in order: each is said once


def _say_once(line: str) -> None:
    if line not in _LOGGED:
        _LOGGED[line] = None
        log.warning("%s", line)


def said(reset: bool = False) -> list[str]:
    """The problem lines logged so far (each once); ``reset`` starts a new list (a new command)."""
    out = list(_LOGGED)
    if reset:
        _LOGGED.clear()
    return out


class RunStore:
    """A run folder, for reading; :meth:`open_for_writing` also takes its lock.

    Readers never lock: a report can be drawn while a run goes on, and sees
    the chunks stored so far.  A reader of a folder with a damaged or lost
    index reads it as :meth:`check` would repair it (in memory, changing
    nothing) and names each finding in :attr:`findings`.
    """

    def __init__(self, run_dir: str | Path, *, must_exist: bool = True):
        self.dir = Path(run_dir)
        if must_exist:
            if not self.dir.is_dir():
                raise StoreError(f"no run folder at {self.dir}")
            if not (self.dir / INDEX).exists() and not self._recoverable():
                hint = (
                    " (a folder from an older version: rerun with --fresh)"
                    if (self.dir / "chunks").is_dir() or (self.dir / "games.parquet").exists()
                    else ""
                )
                raise StoreError(f"{self.dir} is not a run folder: it has no {INDEX}{hint}")
        self._lock_fd: int | None = None
        self._index: Index | None = None
        self.problems: list[str] = []  # one line per chunk that failed verification while reading
        self.findings: list[Finding] = []  # what reading the index had to recover (see check())

    def _recoverable(self) -> bool:
        """No index, but its checkpoint or chunk files to rebuild it from."""
        if (self.dir / CHECKPOINT).exists():
            return True
        games = self.dir / "games"
        return games.is_dir() and any(any(sub.glob("*.parquet")) for sub in games.iterdir() if sub.is_dir())

    # --- locking and creating ------------------------------------------------------
    @classmethod
    def open_for_writing(cls, run_dir: str | Path, *, fresh: bool = False, what: str = "arena run") -> RunStore:
        """Create (or continue) a run folder and hold its lock until :meth:`close`.

        ``fresh`` deletes what the folder held, but only once the lock is
        ours: a fresh start never pulls the folder from under another run.
        Temp files an interrupted write left behind are deleted.
        """
        d = Path(run_dir)
        if d.exists() and not d.is_dir():
            raise StoreError(f"results path {d} is a file, not a folder")
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.EEXIST):  # a file on the path: the input is wrong
                raise StoreError(f"cannot create the run folder {d}: a file is in the way ({exc.strerror})") from None
            raise env_error(exc, f"create the run folder {d}") from None
        if not os.access(d, os.W_OK | os.X_OK):
            raise StoreEnvError(f"cannot write to the run folder {d} (read-only?)")
        store = cls(d, must_exist=False)
        store._lock(what)
        try:
            if fresh:
                store._clear()
            store._remove_temps()
            (d / "games").mkdir(exist_ok=True)
            (d / "hands").mkdir(exist_ok=True)
            if not (d / INDEX).exists() and not store._recoverable():
                legacy = (d / "chunks").is_dir() or (d / "games.parquet").exists()
                if legacy:
                    raise StoreError(
                        f"{d} holds a run from an older version of gin-arena; use --fresh or another --name"
                    )
                store._append({"type": "store", "format": STORE_FORMAT, "created": _now()})
        except OSError as exc:
            store.close()
            raise env_error(exc, f"write to the run folder {d}") from None
        except StoreError:
            store.close()
            raise
        return store

    def _lock(self, what: str) -> None:
        path = self.dir / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
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
                raise StoreBusy(f"{self.dir} is in use by {who}; wait for it to finish or use another --name") from None
            raise env_error(exc, f"lock {path}") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({what})\n".encode(), 0)
        except OSError:
            pass  # the lock is held; naming the holder is a courtesy (a full disk may refuse it)
        self._lock_fd = fd
        _HELD_LOCKS.add(fd)

    def close(self) -> None:
        """Release the lock (also released by the OS if the process dies)."""
        if self._lock_fd is not None:
            _HELD_LOCKS.discard(self._lock_fd)
            try:
                os.ftruncate(self._lock_fd, 0)
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _clear(self) -> None:
        for p in self.dir.iterdir():
            if p.name == LOCK:
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        self._index = None

    def _remove_temps(self) -> list[Path]:
        """Delete the temp files of writes cut short (only the lock holder may: no write is under way)."""
        gone = []
        for p in self._temp_files():
            try:
                p.unlink()
                gone.append(p)
            except FileNotFoundError:
                pass
        if gone:
            log.info("deleted %d temp file(s) left by an interrupted write", len(gone))
        return gone

    def _temp_files(self) -> list[Path]:
        out = [p for p in self.dir.iterdir() if _TEMP_FILE.match(p.name)] if self.dir.is_dir() else []
        for kind in KINDS:
            base = self.dir / kind
            if base.is_dir():
                out += [p for p in base.rglob(".*.tmp*") if _TEMP_FILE.match(p.name)]
        return out

    def _writable(self) -> None:
        if self._lock_fd is None:
            raise StoreError(f"{self.dir}: the store was opened for reading")

    # --- the index ------------------------------------------------------------------
    def _append(self, record: dict[str, Any]) -> None:
        """Append one line and fsync it: once this returns, the line survives a crash."""
        self._writable()
        path = self.dir / INDEX
        try:
            torn = False
            if path.exists() and path.stat().st_size:
                with open(path, "rb") as f:  # a line cut short by a crash must not swallow the next one
                    f.seek(-1, os.SEEK_END)
                    torn = f.read(1) != b"\n"
            new = not path.exists()
            with open(path, "a", encoding="utf-8") as f:
                f.write(("\n" if torn else "") + _line(record))
                f.flush()
                os.fsync(f.fileno())
            if new:
                _fsync_dir(self.dir)
        except OSError as exc:
            raise env_error(exc, f"write {path}") from None
        self._index = None

    def index(self) -> Index:
        """The index; when its file is damaged or lost, as :meth:`check` would repair it (in memory)."""
        if self._index is None:
            idx = read_index(self.dir / INDEX)
            if self._damaged(idx):
                scan = self._scan(verify_orphans=True)
                idx = _apply(scan.records)
                idx.bad = read_index(self.dir / INDEX).bad
                self.findings = scan.findings
                for f in scan.findings:
                    _say_once(f"{self.dir}: {f.line(False)}")
            self._index = idx
        return self._index

    def _damaged(self, idx: Index) -> bool:
        """Cheap signs that the index file lost something: bad lines, no file, shorter than its checkpoint."""
        p, ck = self.dir / INDEX, self.dir / CHECKPOINT
        if idx.bad or not p.exists():
            return True
        if any(key[0] not in idx.matchups for key in idx.chunks):
            return True
        try:
            return ck.exists() and ck.stat().st_size > p.stat().st_size
        except OSError:
            return False

    def register(
        self,
        mid: str,
        bot_a: str,
        bot_b: str,
        games: int,
        chunks: int,
        identity: dict[str, Any],
    ) -> Matchup:
        """Add a planned matchup (or make a stored one current again); returns it with its number.

        A new matchup takes the next number never used in this folder; a
        known one keeps the number it was first given.
        """
        idx = self.index()
        m = idx.matchups.get(mid)
        if m is None:
            self._append(
                {
                    "type": "matchup",
                    "id": mid,
                    "no": idx.next_no(),
                    "bot_a": bot_a,
                    "bot_b": bot_b,
                    "games": games,
                    "chunks": chunks,
                    "identity": identity,
                }
            )
        elif m.superseded:
            self._append({"type": "revive", "id": mid})
        return self.index().matchups[mid]

    def set_limit(self, mid: str, chunks: int | None) -> None:
        """Count only the first ``chunks`` chunks of a matchup (an SPRT stop); None counts all."""
        if self.index().matchups[mid].limit != chunks:
            self._append({"type": "limit", "matchup": mid, "chunks": chunks})

    def current_state(self) -> dict[str, int | None]:
        """Each current matchup's id and its SPRT limit (None: every chunk counts), for the manifest.

        The index's ``revive`` and ``limit`` lines say which version of a pair
        is current and how many of its chunks count; no chunk file can say
        it (a revived matchup may play nothing new).  A run writes this into
        ``manifest.json`` (by atomic rename) when it begins and ends, so a
        repair that had to drop such a line puts it back from there.
        """
        return {m.id: m.limit for m in self.matchups()}

    def matchups(self, current: bool = True) -> list[Matchup]:
        """Matchups in index order; only current (not superseded) ones by default."""
        return [m for m in self.index().matchups.values() if not (current and m.superseded)]

    def stored(self, mid: str, chunk: int) -> ChunkRecord | None:
        return self.index().chunks.get((mid, chunk))

    def n_games(self) -> int:
        """Games in the current matchups' stored chunks (within SPRT limits)."""
        return sum(r.games for _, r in self._current_records())

    def n_chunks(self) -> int:
        """Stored chunks of the current matchups (within SPRT limits): what :meth:`chunks` yields at most."""
        return sum(1 for _ in self._current_records())

    def has_hands(self) -> bool:
        return any("hands" in r.files for _, r in self._current_records())

    def has_actions(self) -> bool:
        return any("actions" in r.files for _, r in self._current_records())

    def _current_records(self) -> Iterator[tuple[Matchup, ChunkRecord]]:
        idx = self.index()
        for m in self.matchups():
            n = m.chunks if m.limit is None else min(m.limit, m.chunks)
            for c in range(n):
                r = idx.chunks.get((m.id, c))
                if r is not None:
                    yield m, r

    def checkpoint(self) -> None:
        """Copy the index to :data:`CHECKPOINT` by atomic rename (the end of a run, a repair)."""
        self._writable()
        try:
            data = (self.dir / INDEX).read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise env_error(exc, f"read {self.dir / INDEX}") from None
        _atomic_write(self.dir / CHECKPOINT, data)

    # --- checking and repairing (arena fsck) -------------------------------------------
    def check(self, *, repair: bool = False, verify: bool = True) -> list[str]:
        """Check the folder: index lines, chunk files, checksums; one line per finding.

        The index is rebuilt from its checkpoint copy and the chunk files
        (each describes itself, and its page checksums prove its bytes
        intact): a damaged or torn line, a lost index, a chunk written
        without its line.  What can't be trusted - a file that fails its
        checksum, a stray file - is moved to ``quarantine/``; temp files of
        cut-short writes are deleted.  ``verify`` also hashes every indexed
        file (what :meth:`verify` does).  Without ``repair`` nothing changes
        and each line says what a repair would do.
        """
        if repair:
            self._writable()
        scan = self._scan(verify_orphans=True)
        lines = [f.line(repair) for f in scan.findings]
        if repair:
            try:
                for path in scan.remove:
                    path.unlink(missing_ok=True)
                for path, why in scan.quarantine:
                    self._move_aside(path, why)
                if scan.rewrite:
                    old = self.dir / INDEX
                    if old.exists():
                        self._move_aside(old, "damaged index", copy=True)
                    body = "".join(_line(r) for r in scan.records if r)
                    _atomic_write(old, body.encode())
                    self._index = None
                    self.checkpoint()
            except OSError as exc:
                raise env_error(exc, f"repair {self.dir}") from None
        self._index = None
        self.findings = []
        if not repair:
            self._index = _apply(scan.records)
        for line in lines:
            _say_once(f"{self.dir}: {line}")
        if verify:
            lines += self.verify() if repair else self._verify_lines()
        return lines

    def _verify_lines(self) -> list[str]:
        out = []
        idx = self.index()
        for (mid, c), rec in list(idx.chunks.items()):
            for kind in rec.files:
                problem = self._problem(rec, kind)
                if problem:
                    m = idx.matchups.get(mid)
                    out.append(f"chunk {c} of {m.name if m else mid}: {problem}; --repair moves it to quarantine/")
                    _say_once(f"{self.dir}: {out[-1]}")
                    break
        return out

    def _scan(self, *, verify_orphans: bool) -> _Scan:
        """What the index should say, from its file, its checkpoint and the chunk files (changes nothing)."""
        findings: list[Finding] = []
        quarantine: list[tuple[Path, str]] = []
        lines = _read_lines(self.dir / INDEX)
        ck = _read_lines(self.dir / CHECKPOINT) or []
        ck_recs = [rec for rec, _ in ck]
        aligned = lines is not None and all(
            a == b for (a, _), b in zip(lines, ck_recs, strict=False) if a is not None and b is not None
        )
        records: list[dict[str, Any]] = []
        rewrite = False
        lost: list[BadLine] = []
        if lines is None:
            records = [r for r in ck_recs if r]
            rewrite = True
            src = f"its checkpoint copy ({len(records)} lines) and the chunk files" if ck else "the chunk files"
            findings.append(
                Finding(
                    f"{INDEX} is missing",
                    f"rebuilt from {src}",
                    f"--repair rebuilds it from {src}",
                )
            )
        else:
            for i, (rec, bad) in enumerate(lines):
                if bad is None:
                    records.append(rec or {})
                    continue
                rewrite = True
                alt = ck_recs[i] if aligned and i < len(ck_recs) else None
                if alt:
                    records.append(alt)
                    findings.append(
                        Finding(
                            f"{INDEX} line {bad.line}: {bad.describe()}",
                            f"restored from {CHECKPOINT}",
                            f"--repair restores it from {CHECKPOINT}",
                        )
                    )
                else:
                    lost.append(bad)
            if aligned and len(ck_recs) > len(lines):
                extra = [r for r in ck_recs[len(lines) :] if r]
                if extra:
                    rewrite = True
                    records.extend(extra)
                    findings.append(
                        Finding(
                            f"{INDEX} is shorter than its checkpoint ({len(lines)} lines, not {len(ck_recs)})",
                            f"its last {len(extra)} line(s) restored from {CHECKPOINT}",
                            f"--repair restores {len(extra)} line(s) from {CHECKPOINT}",
                        )
                    )
        for bad in lost:
            findings.append(
                Finding(
                    f"{INDEX} line {bad.line}: {bad.describe()}",
                    "dropped (what it held is rebuilt from the chunk files where they survive)",
                    "--repair drops it (what it held is rebuilt from the chunk files where they survive)",
                )
            )
        idx = _apply(records)
        recovered: dict[tuple[str, int], str] = {}
        known: set[str] = set()  # matchups rebuilt from their chunk files
        # Chunk files the index does not know (or knows from a lost line): rebuilt from their own metadata.
        for kind in KINDS:
            base = self.dir / kind
            if not base.is_dir():
                continue
            for sub in sorted(base.iterdir()):
                if not sub.is_dir():
                    if not _TEMP_FILE.match(sub.name):
                        quarantine.append((sub, f"{kind}/{sub.name}: not a chunk file"))
                    continue
                for f in sorted(sub.iterdir()):
                    rel = f"{kind}/{sub.name}/{f.name}"
                    if _TEMP_FILE.match(f.name):
                        continue  # listed below
                    mt = _CHUNK_FILE.match(f.name)
                    if mt is None or not f.is_file():
                        quarantine.append((f, f"{rel}: not a chunk file"))
                        continue
                    if kind != "games" or not verify_orphans:
                        continue
                    key = (sub.name, int(mt.group(1)))
                    indexed = key in idx.chunks
                    if indexed and (key[0] in known or key[0] in idx.matchups):
                        continue
                    got, why = self._recover_chunk(sub.name, key[1])
                    if got is None:
                        if why and not indexed:
                            quarantine.append((f, f"{rel}: {why}"))
                        continue
                    mrec, crec = got
                    if mrec["id"] not in idx.matchups and mrec["id"] not in known:
                        known.add(mrec["id"])
                        pos = next(
                            (
                                i
                                for i, r in enumerate(records)
                                if r.get("type") == "matchup" and int(r.get("no", -1)) > mrec["no"]
                            ),
                            len(records),
                        )
                        records.insert(pos, mrec)
                        rewrite = True
                        findings.append(
                            Finding(
                                f"matchup {mrec['no']} ({mrec['bot_a']} vs {mrec['bot_b']}) has no index line",
                                "its line rebuilt from its chunk files",
                                "--repair rebuilds its line from its chunk files",
                            )
                        )
                    if not indexed:  # an indexed chunk keeps its line: its checksum is checked, not replaced
                        records.append(crec)
                        recovered[key] = rel
                        rewrite = True
        idx = _apply(records)
        if lost or lines is None:
            records += self._state_from_manifest(idx, findings)
            idx = _apply(records)
        if recovered:
            findings.append(
                Finding(
                    f"{len(recovered)} chunk file(s) have no index line ({', '.join(list(recovered.values())[:3])}"
                    f"{', ...' if len(recovered) > 3 else ''})",
                    "each passed its page checksums and metadata check; its line rebuilt",
                    "each passes its page checksums and metadata check; --repair rebuilds its line",
                )
            )
        unknown = sorted({mid for mid, _ in idx.chunks if mid not in idx.matchups})
        for mid in unknown:
            n = sum(1 for k in idx.chunks if k[0] == mid)
            findings.append(
                Finding(
                    f"{n} chunk line(s) of matchup {mid}, whose matchup line is lost and whose files don't describe it",
                    "left out (a run of its bots plays it again)",
                )
            )
        seen: dict[int, str] = {}
        for m in idx.matchups.values():
            if m.no in seen:
                findings.append(
                    Finding(
                        f"matchups {seen[m.no]} and {m.name} share number {m.no} (their game ids collide)",
                        "left as is; replay one of them into a new folder",
                    )
                )
            seen.setdefault(m.no, m.name)
        temps = self._temp_files()
        if temps:
            findings.append(
                Finding(
                    f"{len(temps)} temp file(s) left by an interrupted write ({temps[0].relative_to(self.dir)})",
                    "deleted",
                    "--repair (or the next run) deletes them",
                )
            )
        for _, why in quarantine:
            findings.append(Finding(why, "moved to quarantine/", "--repair moves it to quarantine/"))
        if rewrite and not any(r.get("type") == "store" for r in records):
            records.insert(0, {"type": "store", "format": STORE_FORMAT, "created": _now(), "rebuilt": True})
        return _Scan(records, findings, quarantine, temps, rewrite)

    def _state_from_manifest(self, idx: Index, findings: list[Finding]) -> list[dict[str, Any]]:
        """The ``revive`` and ``limit`` lines an index that lost lines lacks, from the manifest's ``current``.

        Only these two kinds of line can't be rebuilt from chunk files: which
        of a pair's versions is current (a bot file changed, then changed
        back: the older matchup is revived) and an SPRT stop's limit.  Lost,
        the report would silently show the other version's games, or count
        chunks past the stop.  The manifest, written by the run that wrote
        those lines, names each current matchup and its limit.
        """
        state = self.manifest().get("current")
        if not isinstance(state, dict):
            return []
        out: list[dict[str, Any]] = []
        for mid, limit in state.items():
            m = idx.matchups.get(mid)
            if m is None or not (limit is None or isinstance(limit, int)):
                continue
            if m.superseded:
                out.append({"type": "revive", "id": mid})
                findings.append(
                    Finding(
                        f"matchup {m.no} ({m.name}) is current in manifest.json, superseded in what is left of "
                        f"{INDEX} (its revive line is lost)",
                        "its revive line rebuilt from manifest.json",
                        "--repair rebuilds its revive line from manifest.json",
                    )
                )
            if m.limit != limit:
                out.append({"type": "limit", "matchup": mid, "chunks": limit})
                counts = "every chunk" if limit is None else f"its first {limit} chunk(s)"
                findings.append(
                    Finding(
                        f"matchup {m.no} ({m.name}) counts {counts} in manifest.json, not in what is left of "
                        f"{INDEX} (its limit line is lost)",
                        "its limit line rebuilt from manifest.json",
                        "--repair rebuilds its limit line from manifest.json",
                    )
                )
        return out

    def _recover_chunk(self, mid: str, chunk: int) -> tuple[tuple[dict[str, Any], dict[str, Any]] | None, str]:
        """The matchup and chunk records of a chunk with no index line, from its files; or (None, why)."""
        files: dict[str, dict[str, Any]] = {}
        metas: dict[str, dict[str, Any]] = {}
        for kind in KINDS:
            rel = f"{kind}/{mid}/{chunk:05d}.parquet"
            try:
                data = (self.dir / rel).read_bytes()
            except FileNotFoundError:
                continue
            except OSError as exc:
                return None, f"unreadable ({exc.strerror})"
            try:
                metas[kind] = chunk_meta(data)
            except StoreError as exc:
                return None, f"{rel} {exc}" if kind != "games" else str(exc)
            files[kind] = {"path": rel, "sha256": _sha256(data), "bytes": len(data)}
        g = metas.get("games")
        if g is None:
            return None, ""
        for kind, meta in metas.items():
            if meta["matchup"] != mid or int(meta["chunk"]) != chunk or meta["kind"] != kind:
                return (
                    None,
                    f"its metadata names another chunk ({meta['matchup']} chunk {meta['chunk']})",
                )
            if any(meta[k] != g[k] for k in ("matchup_no", "game_ids", "games")):
                return None, f"its {kind} file disagrees with its games file"
        expected = set(g.get("files", ["games"]))
        if set(files) != expected:
            missing = ", ".join(sorted(expected - set(files))) or "-"
            return None, f"its other files are missing ({missing})"
        mrec = {
            "type": "matchup",
            "id": mid,
            "no": int(g["matchup_no"]),
            "bot_a": g["bot_a"],
            "bot_b": g["bot_b"],
            "games": int(g["games_per_pair"]),
            "chunks": int(g["chunks"]),
            "identity": g["identity"],
        }
        crec = {
            "type": "chunk",
            "matchup": mid,
            "no": int(g["matchup_no"]),
            "chunk": chunk,
            "games": int(g["games"]),
            "hands": int(g["hands"]),
            "ids": list(g["game_ids"]),
            "files": files,
        }
        return (mrec, crec), ""

    def _move_aside(self, src: Path, why: str, *, copy: bool = False) -> Path:
        q = self.dir / "quarantine"
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        rel = src.relative_to(self.dir)
        chunk = _CHUNK_FILE.match(rel.name)
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

    # --- writing chunks ---------------------------------------------------------------
    def put_chunk(
        self,
        mid: str,
        chunk: int,
        games: pd.DataFrame,
        hands: pd.DataFrame | None,
        actions: pa.Table | None = None,
    ) -> ChunkRecord:
        """Store one chunk's tables (atomically, then its fsync'd index line).  Idempotent:
        storing a chunk that is already stored and intact does nothing, so a
        retried task never duplicates games.  ``actions`` is an
        :data:`ACTIONS_SCHEMA` table (see :func:`actions_table`).  Each file
        describes itself in its metadata (see :func:`chunk_meta`)."""
        self._writable()
        old = self.stored(mid, chunk)
        if old is not None and self._intact(old):
            return old
        m = self.index().matchups.get(mid)
        if m is None:
            raise StoreError(f"{self.dir}: chunk {chunk} of an unregistered matchup {mid}")
        lo, hi = m.no * m.games, (m.no + 1) * m.games
        ids = games["game_id"].to_numpy() if len(games) else np.array([lo])
        if ids.min() < lo or ids.max() >= hi:
            raise StoreError(
                f"{self.dir}: chunk {chunk} of {m.name} holds game ids {ids.min()}..{ids.max()}, "
                f"outside its matchup's {lo}..{hi - 1}"
            )
        parts: list[tuple[str, pa.Table]] = [("games", to_table(games, GAMES_SCHEMA, "games"))]
        if hands is not None:
            parts.append(("hands", to_table(hands, HANDS_SCHEMA, "hands")))
        if actions is not None:
            if actions.schema.remove_metadata() != ACTIONS_SCHEMA:
                raise StoreError(f"actions table does not match the stored schema ({actions.schema.names})")
            parts.append(("actions", actions))
        n_games = len(games)
        n_hands = 0 if hands is None else len(hands)
        meta = {
            "store_format": STORE_FORMAT,
            "matchup": mid,
            "matchup_no": m.no,
            "bot_a": m.bot_a,
            "bot_b": m.bot_b,
            "identity": m.identity,
            "games_per_pair": m.games,
            "chunks": m.chunks,
            "chunk": chunk,
            "game_ids": [lo, hi],
            "games": n_games,
            "hands": n_hands,
            "files": [k for k, _ in parts],
        }
        files: dict[str, dict[str, Any]] = {}
        for kind, table in parts:
            data = _parquet_bytes(table, {**meta, "kind": kind})
            rel = f"{kind}/{mid}/{chunk:05d}.parquet"
            _atomic_write(self.dir / rel, data)
            files[kind] = {"path": rel, "sha256": _sha256(data), "bytes": len(data)}
        rec = {
            "type": "chunk",
            "matchup": mid,
            "no": m.no,
            "chunk": chunk,
            "games": n_games,
            "hands": n_hands,
            "ids": [lo, hi],
            "files": files,
        }
        self._append(rec)
        return ChunkRecord(mid, chunk, n_games, n_hands, files, (lo, hi))

    def _intact(self, rec: ChunkRecord) -> bool:
        return all(self._read_verified(rec, kind) is not None for kind in rec.files)

    def verify(self, matchup_ids: Sequence[str] | None = None) -> list[str]:
        """Check every stored chunk (of these matchups) against its checksum.

        A bad or missing file is named in one line (returned and logged),
        moved to ``quarantine/`` and dropped from the index, so the next run
        plays that chunk again.
        """
        self._writable()
        bad = []
        ids = set(matchup_ids) if matchup_ids is not None else None
        for (mid, c), rec in list(self.index().chunks.items()):
            if ids is not None and mid not in ids:
                continue
            for kind in rec.files:
                problem = self._problem(rec, kind)
                if problem:
                    m = self.index().matchups.get(mid)
                    moved = self._quarantine(rec, problem)
                    if rec.files[kind]["path"] in moved:
                        done = "moved to quarantine/ and to be played again"
                    elif moved:
                        done = f"its other file(s) moved to quarantine/ ({', '.join(moved)}); to be played again"
                    else:
                        done = "to be played again"
                    line = f"chunk {c} of {m.name if m else mid}: {problem}; {done}"
                    self._append({"type": "drop", "matchup": mid, "chunk": c, "why": problem})
                    _say_once(f"{self.dir}: {line}")
                    bad.append(line)
                    break
        return bad

    def _quarantine(self, rec: ChunkRecord, why: str) -> list[str]:
        """Move a chunk's files aside; returns the paths of those that were there to move."""
        moved = []
        for f in rec.files.values():
            src = self.dir / f["path"]
            if src.exists():
                self._move_aside(src, why)
                moved.append(f["path"])
        return moved

    def _problem(self, rec: ChunkRecord, kind: str) -> str:
        f = rec.files[kind]
        path = self.dir / f["path"]
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return f"{f['path']} is missing"
        except OSError as exc:
            return f"{f['path']} is unreadable ({exc.strerror})"
        if len(data) == f["bytes"] and _sha256(data) == f["sha256"]:
            return ""
        try:  # whole, but another chunk's file (swapped, copied over)?  Its own metadata says so.
            meta = chunk_meta(data)
        except StoreError:
            meta = None
        if meta is not None and (meta["matchup"], int(meta["chunk"]), meta["kind"]) != (rec.matchup, rec.chunk, kind):
            other = f"chunk {meta['chunk']} of {meta['bot_a']} vs {meta['bot_b']}"
            return f"{f['path']} is a whole file of another chunk ({other}, by its metadata: swapped?)"
        if len(data) != f["bytes"]:
            return f"{f['path']} is {len(data)} bytes, the index says {f['bytes']} (truncated?)"
        return f"{f['path']} does not match its checksum (corrupted)"

    def _read_verified(self, rec: ChunkRecord, kind: str) -> bytes | None:
        f = rec.files[kind]
        try:
            data = (self.dir / f["path"]).read_bytes()
        except OSError:
            return None
        if len(data) != f["bytes"] or _sha256(data) != f["sha256"]:
            return None
        return data

    # --- reading -----------------------------------------------------------------------
    def chunks(
        self,
        games_columns: Sequence[str] | None = None,
        hands: bool | Sequence[str] = False,
        actions: bool = False,
    ) -> Iterator[StoredChunk]:
        """Every stored chunk of the current matchups, verified, in play order.

        A chunk that fails its checksum is skipped, named in one log line and
        in :attr:`problems`; its bytes are never parsed.
        """
        for m, rec in self._current_records():
            g = self._table(m, rec, "games", games_columns)
            if g is None:
                continue
            h = None
            if hands is not False and "hands" in rec.files:
                h = self._table(m, rec, "hands", None if hands is True else hands)
                if h is None:
                    continue
            a = None
            if actions and "actions" in rec.files:
                a = self._table(m, rec, "actions", None)
                if a is None:
                    continue
            yield StoredChunk(m.name, m.bot_a, m.bot_b, rec.chunk, g, h, a)

    def _bad_chunk(self, m: Matchup, rec: ChunkRecord, kind: str) -> None:
        line = f"{self.dir}: chunk {rec.chunk} of {m.name}: {self._problem(rec, kind) or 'unreadable'}; left out"
        if line not in self.problems:
            self.problems.append(line)
            _say_once(line)

    def _table(self, m: Matchup, rec: ChunkRecord, kind: str, columns: Sequence[str] | None) -> pd.DataFrame | None:
        data = self._read_verified(rec, kind)
        if data is None:
            self._bad_chunk(m, rec, kind)
            return None
        cols = None if columns is None else [c for c in columns if c in _COLUMNS[kind]]
        return pq.read_table(pa.BufferReader(data), columns=cols).to_pandas()

    def games(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """All games of the current matchups in one frame (for small runs and notebooks)."""
        parts = [c.games for c in self.chunks(columns)]
        if not parts:
            return pd.DataFrame(columns=list(columns or GAMES_COLUMNS))
        return _concat(parts)

    def hands(self, columns: Sequence[str] | None = None) -> pd.DataFrame | None:
        """All hands of the current matchups in one frame, or None when none were recorded."""
        parts = [
            c.hands for c in self.chunks(["game_id"], hands=list(columns) if columns else True) if c.hands is not None
        ]
        return _concat(parts) if parts else None

    def dataset(self, kind: str = "games") -> Any:
        """A ``pyarrow.dataset`` of exactly the current chunk files of ``kind``, each verified now.

        Superseded matchups, chunks past an SPRT stop, files without an index
        line, quarantined and stray files are not in it; a file that fails its
        checksum is left out and named in :attr:`problems`.  Files are
        checked when this is called: take a new dataset after a run adds to
        the folder.  DuckDB queries it directly (``duckdb.sql("... FROM ds")``).
        """
        import pyarrow.dataset as ds

        if kind not in KINDS:
            raise StoreError(f"no {kind!r} dataset (kinds: {', '.join(KINDS)})")
        schema = {
            "games": GAMES_SCHEMA,
            "hands": HANDS_SCHEMA,
            "actions": ACTIONS_SCHEMA,
        }[kind]
        paths = []
        for m, rec in self._current_records():
            if kind not in rec.files:
                continue
            if self._read_verified(rec, kind) is None:
                self._bad_chunk(m, rec, kind)
                continue
            paths.append(str(self.dir / rec.files[kind]["path"]))
        return ds.dataset(paths, schema=schema, format="parquet")

    def _locate(self, game_id: int) -> tuple[Matchup, list[ChunkRecord]]:
        """The matchup of a game id and the stored chunks that may hold it (by their id ranges)."""
        cfg_games = self.games_per_pair()
        no, local = divmod(int(game_id), cfg_games)
        idx = self.index()
        m = idx.by_no(no) if game_id >= 0 else None
        if m is None:
            top = idx.next_no() * cfg_games - 1
            raise StoreError(f"{self.dir}: no game {game_id} (ids run from 0 to {top})")
        recs = [r for c in range(m.chunks) if (r := idx.chunks.get((m.id, c))) is not None]
        per_chunk = -(-m.games // max(1, m.chunks))
        exact = [r for r in recs if r.chunk == local // per_chunk]
        if exact and exact[0].ids is not None:  # the chunk its number says, known to hold it
            return m, exact
        return m, recs

    def game(self, game_id: int) -> pd.Series:
        """One game's row, found through its matchup (game ids are matchup no * games + index)."""
        m, recs = self._locate(game_id)
        for rec in recs:
            g = self._table(m, rec, "games", None)
            if g is None:
                continue
            hit = g.loc[g["game_id"] == game_id]
            if len(hit):
                return hit.iloc[0]
        local = int(game_id) - m.no * m.games
        raise StoreError(f"{self.dir}: game {game_id} ({m.name}, game {local} of it) is not stored")

    def game_record(self, game_id: int) -> GameRecord:
        """One game's row, its hand rows and its action log (None where the run kept none)."""
        row = self.game(game_id)
        mu, recs = self._locate(game_id)
        hands = actions = None
        for rec in recs:
            g = self._table(mu, rec, "games", ["game_id"])
            if g is None or not (g["game_id"] == game_id).any():
                continue
            if "hands" in rec.files:
                h = self._table(mu, rec, "hands", None)
                if h is not None:
                    hands = h.loc[h["game_id"] == game_id].reset_index(drop=True)
            if "actions" in rec.files:
                data = self._read_verified(rec, "actions")
                if data is None:
                    raise StoreError(
                        f"{self.dir}: chunk {rec.chunk} of {mu.name}: {self._problem(rec, 'actions') or 'unreadable'}"
                    )
                t = pq.read_table(pa.BufferReader(data))
                ids = t.column("game_id").to_numpy()
                hit = np.flatnonzero(ids == game_id)
                if len(hit):
                    actions = np.frombuffer(t.column("actions")[int(hit[0])].as_py(), dtype=np.uint8).astype(np.int64)
            break
        return GameRecord(row, hands, actions, mu)

    def games_per_pair(self) -> int:
        ms = list(self.index().matchups.values())
        if not ms:
            raise StoreError(f"{self.dir}: no games stored")
        return ms[0].games

    # --- the small files ----------------------------------------------------------------
    def write_text(self, name: str, text: str) -> None:
        self._writable()
        _atomic_write(self.dir / name, text.encode())

    def read_text(self, name: str) -> str | None:
        p = self.dir / name
        return p.read_text(encoding="utf-8", errors="replace") if p.is_file() else None

    def config(self) -> TournamentConfig:
        """The config of the latest run on the folder (``config.toml``), with its
        folder as ``results_dir``/``name`` so it continues this folder."""
        import tomllib

        text = self.read_text("config.toml")
        if text is None:
            raise StoreError(f"{self.dir}: not a run folder (no config.toml)")
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise StoreError(f"{self.dir / 'config.toml'}: not valid TOML: {exc}") from None
        d.update(results_dir=str(self.dir.parent), name=self.dir.name)
        try:
            return config_from_dict(d, source=str(self.dir / "config.toml"))
        except ConfigError as exc:
            raise StoreError(str(exc)) from None

    def rules(self) -> Rules:
        """The resolved rules the folder's games were played by (``rules.toml``)."""
        if not (self.dir / "rules.toml").is_file():
            return self.config().resolved_rules()  # a folder from before rules.toml was kept
        try:
            return load_rules(self.dir / "rules.toml")
        except RulesError as exc:
            raise StoreError(f"{self.dir}: {exc}") from None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.write_text("manifest.json", json.dumps(manifest, indent=2, default=str))

    def manifest(self) -> dict[str, Any]:
        text = self.read_text("manifest.json")
        if text is None:
            return {}
        try:
            return json.loads(text)
        except ValueError:
            return {"(unreadable)": "manifest.json"}

    def meta(self) -> dict[str, Any]:
        """What a report shows beside the tables: name, config and rules text, manifest."""
        out: dict[str, Any] = {"name": self.dir.resolve().name}
        for key, fname in (("config", "config.toml"), ("rules", "rules.toml")):
            t = self.read_text(fname)
            if t is not None:
                out[key] = t
        m = self.manifest()
        if m:
            out["manifest"] = m
        return out

    def secret_seed(self) -> int:
        """The folder's drawn seed for ``seed = "secret"`` (drawn on first use, then kept)."""
        p = self.dir / SECRET
        if p.exists():
            try:
                return int(p.read_text().strip())
            except ValueError:
                raise StoreError(f"{p} is unreadable; it holds the run's secret seed") from None
        self._writable()
        value = secrets.randbits(62)
        _atomic_write(p, f"{value}\n".encode())
        os.chmod(p, 0o600)
        return value

    def append_log(self, name: str, text: str) -> None:
        """Add bot output to ``logs/<name>.log``."""
        if not text:
            return
        self._writable()
        d = self.dir / "logs"
        try:
            d.mkdir(exist_ok=True)
        except OSError as exc:
            raise env_error(exc, f"create {d}") from None
        if d.is_symlink() or not d.is_dir():
            raise StoreError(f"{d}: not a plain folder; refusing to write bot logs through it")
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:120]
        path = d / f"{safe}.log"
        # Never follow a link: the arena may run as root, and a log is named after a bot.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StoreError(f"{path}: is a symbolic link; refusing to write a bot's log through it") from None
            raise env_error(exc, f"write logs/{safe}.log") from None
        try:
            with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
                f.write(text if text.endswith("\n") else text + "\n")
        except OSError as exc:
            raise env_error(exc, f"write logs/{safe}.log") from None

    # --- analysis tables (arena analyze) -------------------------------------------------
    # analysis/<name>/index.jsonl: a header line (what was analysed, how), then one checked
    # line per part file written; analysis/<name>/<part>.parquet: the part's rows.  Starting
    # an analysis of a name replaces the previous one of that name.
    def begin_analysis(self, name: str, info: dict[str, Any]) -> None:
        """Start the analysis table ``name`` (letters, digits, - and _), deleting an earlier one of that name."""
        self._writable()
        d = self._analysis_dir(name)
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        _atomic_write(d / INDEX, _line({"type": "analysis", "name": name, "info": info, "created": _now()}).encode())

    def put_analysis(self, name: str, part: int, table: pa.Table) -> None:
        """Store part ``part`` of the analysis table ``name`` (atomically, then its checked index line)."""
        self._writable()
        d = self._analysis_dir(name)
        if not (d / INDEX).is_file():
            raise StoreError(f"{self.dir}: analysis '{name}' was not begun")
        data = _parquet_bytes(table)
        rel = f"{int(part):05d}.parquet"
        _atomic_write(d / rel, data)
        line = _line({"type": "part", "part": int(part), "path": rel, "sha256": _sha256(data), "bytes": len(data)})
        with open(d / INDEX, "rb") as f:  # a line cut short by a crash must not swallow this one
            f.seek(-1, os.SEEK_END)
            torn = f.read(1) != b"\n"
        with open(d / INDEX, "a", encoding="utf-8") as f:
            f.write(("\n" if torn else "") + line)
            f.flush()
            os.fsync(f.fileno())

    def analyses(self) -> list[str]:
        """Names of the analysis tables stored in the folder."""
        root = self.dir / "analysis"
        return sorted(p.name for p in root.iterdir() if (p / INDEX).is_file()) if root.is_dir() else []

    def analysis_info(self, name: str) -> dict[str, Any]:
        """The header the analysis ``name`` was begun with (what was analysed, and how)."""
        head, _ = self._analysis_index(name)
        return head

    def analysis_parts(self, name: str, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """The analysis table ``name`` part by part, each verified (a bad part is named in :attr:`problems`)."""
        _, parts = self._analysis_index(name)
        d = self._analysis_dir(name)
        for rec in parts:
            try:
                data = (d / rec["path"]).read_bytes()
            except OSError:
                data = b""
            if len(data) != rec["bytes"] or _sha256(data) != rec["sha256"]:
                line = f"{self.dir}: analysis '{name}' part {rec['part']}: missing or corrupted; left out"
                if line not in self.problems:
                    self.problems.append(line)
                    log.warning("%s", line)
                continue
            yield pq.read_table(pa.BufferReader(data), columns=list(columns) if columns else None).to_pandas()

    def _analysis_dir(self, name: str) -> Path:
        if not isinstance(name, str) or not name or len(name) > 64 or not all(c.isalnum() or c in "-_" for c in name):
            raise StoreError(f"analysis name {name!r} is not allowed (letters, digits, - and _)")
        return self.dir / "analysis" / name

    def _analysis_index(self, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        path = self._analysis_dir(name) / INDEX
        if not path.is_file():
            raise StoreError(f"{self.dir}: no analysis '{name}' (run arena analyze first)")
        head: dict[str, Any] | None = None
        parts: dict[int, dict[str, Any]] = {}
        for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
            rec = _parse_line(text) if text.strip() else None
            if rec is None:
                continue
            if rec.get("type") == "analysis" and head is None:
                head = rec.get("info", {})
            elif rec.get("type") == "part":
                parts[int(rec["part"])] = rec
        if head is None:
            raise StoreError(f"{path}: no valid header line (corrupted)")
        return head, [parts[k] for k in sorted(parts)]


# Locks held by this process, closed in forked worker processes so a worker
# that outlives its driver for a moment does not keep the folder locked.
_HELD_LOCKS: set[int] = set()


def close_inherited_locks() -> None:
    for fd in list(_HELD_LOCKS):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD_LOCKS.clear()


def _atomic_write(path: Path, data: bytes) -> None:
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


def _fsync_dir(path: Path) -> None:
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


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    from pandas.api.types import union_categoricals

    out = pd.concat(parts, ignore_index=True)
    for col in parts[0].columns:
        if isinstance(parts[0][col].dtype, pd.CategoricalDtype):
            out[col] = (
                union_categoricals([p[col] for p in parts]).astype("category")
                if all(isinstance(p[col].dtype, pd.CategoricalDtype) for p in parts)
                else out[col]
            )
    return out


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
