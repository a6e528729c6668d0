"""The run folder: the one module that writes and reads it.

A run folder ``results/<name>/`` holds::

    config.toml, rules.toml   the config of the latest run on the folder, its resolved rules
    manifest.json             versions, bots, seed, times, machine, status
    index.jsonl               the index: one checked JSON line per matchup and per stored chunk
    games/<matchup>/<chunk>.parquet   one row per game  (the games dataset)
    hands/<matchup>/<chunk>.parquet   one row per hand  (the hands dataset)
    actions/<matchup>/<chunk>.parquet one row per game: its action log (exact replays)
    logs/                     what bots printed, per matchup
    quarantine/               chunk files that failed their checksum, moved aside
    seed.secret               the drawn key of a ``seed = "secret"`` run
    .lock                     held by the run or submit writing the folder

The chunk files *are* the data: ``pandas.read_parquet("results/x/games")``
reads every game, and nothing joins them into a second copy.  Streaming
readers take :meth:`RunStore.chunks`, one verified chunk at a time.

Why an append-only index with a checksum per file: a chunk counts as stored
only when its index line is there and its bytes hash to what the line says.
A crash between writing a file and its line, a torn last line, a truncated or
bit-flipped file: each shows up as a chunk that is not stored, which a
resume plays again.  Bad files are named in one line and moved to
``quarantine/``, never read as data.  Lines are appended (never rewritten),
so storing the 5,000th chunk costs what storing the first did.

Matchups are kept for good.  A rerun with fewer bots, or the original
command after ``arena submit``, plays only what its plan lacks and leaves
every other stored matchup in place; reports show every current matchup.  A
matchup is *superseded* (kept on disk, left out of reports) only when a
later run stores the same two bots under a new identity: a changed bot file,
other parameters.

Game ids are ``matchup number * games_per_pair + index in the matchup``
(the matchup number is its place in the index), so they are the same on any
number of workers and do not move when bots are added.
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
LOCK = ".lock"
SECRET = "seed.secret"
STORE_FORMAT = 2  # bumped when the folder layout changes; older folders are refused with a hint


class StoreError(ValueError):
    """A run folder that cannot be used as asked; the message is one line."""


class StoreBusy(StoreError):
    """Another process holds the folder's lock."""


# --- the schemas: arena.run.schema defines them --------------------------------------

_COLUMNS = {"games": GAMES_COLUMNS, "hands": HANDS_COLUMNS, "actions": ACTIONS_COLUMNS}


def actions_table(game_ids: np.ndarray, offsets: np.ndarray, actions: np.ndarray) -> pa.Table:
    """The actions table of ``len(game_ids)`` games: game ``i`` answered ``actions[offsets[i]:offsets[i+1]]``."""
    data = np.ascontiguousarray(actions, dtype=np.uint8).tobytes()
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(offsets) and offsets[-1] >= 2**31:
        raise StoreError("actions of one chunk exceed 2 GiB; use a smaller chunk_size")
    col = pa.BinaryArray.from_buffers(
        pa.binary(), len(game_ids), [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)]
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


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- index records -------------------------------------------------------------------


def _line(record: dict[str, Any]) -> str:
    body = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return json.dumps({"crc": zlib.crc32(body.encode()), "r": record}, sort_keys=True, separators=(",", ":")) + "\n"


def _parse_line(text: str) -> dict[str, Any] | None:
    try:
        outer = json.loads(text)
        rec = outer["r"]
        body = json.dumps(rec, sort_keys=True, separators=(",", ":"))
        if zlib.crc32(body.encode()) != outer["crc"]:
            return None
        return rec
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class Matchup:
    """A matchup registered in the index."""

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


@dataclass
class Index:
    """The index as read: matchups in order, the latest record of each chunk, bad lines."""

    matchups: dict[str, Matchup] = field(default_factory=dict)
    chunks: dict[tuple[str, int], ChunkRecord] = field(default_factory=dict)
    bad_lines: int = 0


def read_index(path: Path) -> Index:
    idx = Index()
    if not path.exists():
        return idx
    with open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            if not text.strip():
                continue
            rec = _parse_line(text)
            if rec is None:
                idx.bad_lines += 1
                continue
            kind = rec.get("type")
            if kind == "matchup":
                mid = rec["id"]
                if mid in idx.matchups:
                    m = idx.matchups[mid]
                    m.superseded = False
                    continue
                for other in idx.matchups.values():
                    if {other.bot_a, other.bot_b} == {rec["bot_a"], rec["bot_b"]}:
                        other.superseded = True
                idx.matchups[mid] = Matchup(
                    mid,
                    len(idx.matchups),
                    rec["bot_a"],
                    rec["bot_b"],
                    rec["games"],
                    rec["chunks"],
                    rec.get("identity", {}),
                )
            elif kind == "revive":  # a matchup made current again (its bots came back unchanged)
                revived = idx.matchups.get(rec["id"])
                if revived is not None:
                    for other in idx.matchups.values():
                        if other is not revived and {other.bot_a, other.bot_b} == {revived.bot_a, revived.bot_b}:
                            other.superseded = True
                    revived.superseded = False
            elif kind == "chunk":
                idx.chunks[(rec["matchup"], rec["chunk"])] = ChunkRecord(
                    rec["matchup"], rec["chunk"], rec["games"], rec["hands"], rec["files"]
                )
            elif kind == "drop":
                idx.chunks.pop((rec["matchup"], rec["chunk"]), None)
            elif kind == "limit":
                limited = idx.matchups.get(rec["matchup"])
                if limited is not None:
                    limited.limit = rec["chunks"]
    return idx


# --- the store -------------------------------------------------------------------------


class RunStore:
    """A run folder, for reading; :meth:`open_for_writing` also takes its lock.

    Readers never lock: a report can be drawn while a run goes on, and sees
    the chunks stored so far.
    """

    def __init__(self, run_dir: str | Path, *, must_exist: bool = True):
        self.dir = Path(run_dir)
        if must_exist:
            if not self.dir.is_dir():
                raise StoreError(f"no run folder at {self.dir}")
            if not (self.dir / INDEX).exists():
                hint = (
                    " (a folder from an older version: rerun with --fresh)"
                    if (self.dir / "chunks").is_dir() or (self.dir / "games.parquet").exists()
                    else ""
                )
                raise StoreError(f"{self.dir} is not a run folder: it has no {INDEX}{hint}")
        self._lock_fd: int | None = None
        self._index: Index | None = None
        self.problems: list[str] = []  # one line per chunk that failed verification while reading

    # --- locking and creating ------------------------------------------------------
    @classmethod
    def open_for_writing(cls, run_dir: str | Path, *, fresh: bool = False, what: str = "arena run") -> RunStore:
        """Create (or continue) a run folder and hold its lock until :meth:`close`.

        ``fresh`` deletes what the folder held, but only once the lock is
        ours: a fresh start never pulls the folder from under another run.
        """
        d = Path(run_dir)
        if d.exists() and not d.is_dir():
            raise StoreError(f"results path {d} is a file, not a folder")
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the run folder {d}: {exc.strerror or exc}") from None
        if not os.access(d, os.W_OK | os.X_OK):
            raise StoreError(f"cannot write to the run folder {d} (read-only?)")
        store = cls(d, must_exist=False)
        store._lock(what)
        if fresh:
            store._clear()
        (d / "games").mkdir(exist_ok=True)
        (d / "hands").mkdir(exist_ok=True)
        if not (d / INDEX).exists():
            legacy = (d / "chunks").is_dir() or (d / "games.parquet").exists()
            if legacy:
                store.close()
                raise StoreError(f"{d} holds a run from an older version of gin-arena; use --fresh or another --name")
            store._append({"type": "store", "format": STORE_FORMAT, "created": _now()})
        return store

    def _lock(self, what: str) -> None:
        path = self.dir / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create the lock file {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = ""
            try:
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            finally:
                os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                who = holder or "another process"
                raise StoreBusy(f"{self.dir} is in use by {who}; wait for it to finish or use another --name") from None
            raise StoreError(f"cannot lock {path}: {exc.strerror or exc}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({what})\n".encode(), 0)
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

    def _writable(self) -> None:
        if self._lock_fd is None:
            raise StoreError(f"{self.dir}: the store was opened for reading")

    # --- the index ------------------------------------------------------------------
    def _append(self, record: dict[str, Any]) -> None:
        self._writable()
        path = self.dir / INDEX
        torn = False
        if path.exists() and path.stat().st_size:
            with open(path, "rb") as f:  # a line cut short by a crash must not swallow the next one
                f.seek(-1, os.SEEK_END)
                torn = f.read(1) != b"\n"
        with open(path, "a", encoding="utf-8") as f:
            f.write(("\n" if torn else "") + _line(record))
            f.flush()
            os.fsync(f.fileno())
        self._index = None

    def index(self) -> Index:
        if self._index is None:
            self._index = read_index(self.dir / INDEX)
        return self._index

    def register(self, mid: str, bot_a: str, bot_b: str, games: int, chunks: int, identity: dict[str, Any]) -> Matchup:
        """Add a planned matchup (or make a stored one current again); returns it with its number."""
        idx = self.index()
        m = idx.matchups.get(mid)
        if m is None:
            self._append(
                {
                    "type": "matchup",
                    "id": mid,
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

    # --- writing chunks ---------------------------------------------------------------
    def put_chunk(
        self,
        mid: str,
        chunk: int,
        games: pd.DataFrame,
        hands: pd.DataFrame | None,
        actions: pa.Table | None = None,
    ) -> ChunkRecord:
        """Store one chunk's tables (atomically, then its index line).  Idempotent:
        storing a chunk that is already stored and intact does nothing, so a
        retried task never duplicates games.  ``actions`` is an
        :data:`ACTIONS_SCHEMA` table (see :func:`actions_table`)."""
        self._writable()
        old = self.stored(mid, chunk)
        if old is not None and self._intact(old):
            return old
        files: dict[str, dict[str, Any]] = {}
        parts: list[tuple[str, pa.Table]] = [("games", to_table(games, GAMES_SCHEMA, "games"))]
        if hands is not None:
            parts.append(("hands", to_table(hands, HANDS_SCHEMA, "hands")))
        if actions is not None:
            if actions.schema != ACTIONS_SCHEMA:
                raise StoreError(f"actions table does not match the stored schema ({actions.schema.names})")
            parts.append(("actions", actions))
        for kind, table in parts:
            data = _parquet_bytes(table)
            rel = f"{kind}/{mid}/{chunk:05d}.parquet"
            _atomic_write(self.dir / rel, data)
            files[kind] = {"path": rel, "sha256": _sha256(data), "bytes": len(data)}
        n_games = len(games)
        n_hands = 0 if hands is None else len(hands)
        rec = {"type": "chunk", "matchup": mid, "chunk": chunk, "games": n_games, "hands": n_hands, "files": files}
        self._append(rec)
        return ChunkRecord(mid, chunk, n_games, n_hands, files)

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
                    line = (
                        f"chunk {c} of {m.name if m else mid}: {problem}; moved to quarantine/ and to be played again"
                    )
                    self._quarantine(rec)
                    self._append({"type": "drop", "matchup": mid, "chunk": c, "why": problem})
                    log.warning("%s", line)
                    bad.append(line)
                    break
        return bad

    def _quarantine(self, rec: ChunkRecord) -> None:
        q = self.dir / "quarantine"
        q.mkdir(exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        for kind, f in rec.files.items():
            src = self.dir / f["path"]
            if src.exists():
                os.replace(src, q / f"{rec.matchup}-{rec.chunk:05d}-{kind}-{stamp}.parquet")

    def _problem(self, rec: ChunkRecord, kind: str) -> str:
        f = rec.files[kind]
        path = self.dir / f["path"]
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return f"{f['path']} is missing"
        except OSError as exc:
            return f"{f['path']} is unreadable ({exc.strerror})"
        if len(data) != f["bytes"]:
            return f"{f['path']} is {len(data)} bytes, the index says {f['bytes']} (truncated?)"
        if _sha256(data) != f["sha256"]:
            return f"{f['path']} does not match its checksum (corrupted)"
        return ""

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

    def _table(self, m: Matchup, rec: ChunkRecord, kind: str, columns: Sequence[str] | None) -> pd.DataFrame | None:
        data = self._read_verified(rec, kind)
        if data is None:
            line = f"{self.dir}: chunk {rec.chunk} of {m.name}: {self._problem(rec, kind) or 'unreadable'}; left out"
            if line not in self.problems:
                self.problems.append(line)
                log.warning("%s", line)
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

    def game(self, game_id: int) -> pd.Series:
        """One game's row, found through its matchup (game ids are matchup no * games + index)."""
        cfg_games = self.games_per_pair()
        no, local = divmod(int(game_id), cfg_games)
        ms = list(self.index().matchups.values())
        if game_id < 0 or no >= len(ms):
            raise StoreError(f"{self.dir}: no game {game_id} (ids run from 0 to {len(ms) * cfg_games - 1})")
        m = ms[no]
        for c in range(m.chunks):
            rec = self.stored(m.id, c)
            if rec is None:
                continue
            g = self._table(m, rec, "games", None)
            if g is None:
                continue
            hit = g.loc[g["game_id"] == game_id]
            if len(hit):
                return hit.iloc[0]
        raise StoreError(f"{self.dir}: game {game_id} ({m.name}, game {local} of it) is not stored")

    def game_record(self, game_id: int) -> GameRecord:
        """One game's row, its hand rows and its action log (None where the run kept none)."""
        row = self.game(game_id)
        cfg_games = self.games_per_pair()
        no = int(game_id) // cfg_games
        mu = list(self.index().matchups.values())[no]
        hands = actions = None
        for c in range(mu.chunks):
            rec = self.stored(mu.id, c)
            if rec is None:
                continue
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
                        f"{self.dir}: chunk {c} of {mu.name}: {self._problem(rec, 'actions') or 'unreadable'}"
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
        d.mkdir(exist_ok=True)
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
            raise
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(text if text.endswith("\n") else text + "\n")

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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
