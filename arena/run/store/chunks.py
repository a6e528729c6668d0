"""Chunk files: writing them, checking them, reading them back as tables.

A chunk file is Parquet with page checksums that describes itself (its
matchup, number and game-id range, under :data:`META_KEY`); its index line
holds its SHA-256.  Nothing here reads a file's bytes as data before they
hash to what the index says; a file that does not is named in one line,
moved to ``quarantine/`` by :func:`verify`, or left out by the readers.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.run.schema import ACTIONS_SCHEMA, GAMES_COLUMNS, GAMES_SCHEMA, HANDS_SCHEMA
from arena.run.store.files import link_problem, read_inside, sha256
from arena.run.store.format import KINDS, META_KEY, STORE_FORMAT, StoreError, say_once
from arena.run.store.index import ChunkRecord, Matchup
from arena.run.tables import COLUMNS, TableError, to_table

if TYPE_CHECKING:
    from arena.run.store import RunStore


def parquet_bytes(table: pa.Table, meta: dict[str, Any] | None = None) -> bytes:
    """Parquet bytes with page checksums, and ``meta`` (JSON) under :data:`META_KEY`."""
    if meta is not None:
        table = table.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", write_page_checksum=True)
    return buf.getvalue()


def parquet_table(data: bytes, columns: Sequence[str] | None = None, *, verify: bool = False) -> pa.Table:
    """Parquet bytes as a table, read on this thread (``verify``: check every page's checksum).

    A threaded read starts Arrow's thread pool, whose threads could abort the process as Python
    exited ("terminate called without an active exception", exit 134) after a command had done its
    work (apache/arrow#34314; ``arena fsck`` about one run in 20).  A chunk is small: one thread
    reads it about as fast.  :func:`frame` makes the pandas frame the same way."""
    cols = None if columns is None else list(columns)
    return pq.read_table(pa.BufferReader(data), columns=cols, use_threads=False, page_checksum_verification=verify)


def frame(table: pa.Table) -> pd.DataFrame:
    """A table as pandas, converted on this thread (see :func:`parquet_table`)."""
    return table.to_pandas(use_threads=False)


def chunk_meta(data: bytes) -> dict[str, Any]:
    """What a chunk file says of itself, after checking every page checksum and the game ids.

    Raises StoreError (one line) when the bytes are not a whole, intact
    chunk file of this store: not Parquet, a page that fails its CRC, no or
    bad ``arena.chunk`` metadata, or rows that disagree with it.
    """
    try:
        table = parquet_table(data, verify=True)
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
    if kind not in KINDS or table.schema.names != list(COLUMNS[kind]):
        raise StoreError(f"its columns are not those of a {kind} chunk")
    if table.num_rows != rows:
        raise StoreError(f"holds {table.num_rows} rows, its metadata says {rows}")
    ids = table.column("game_id").to_numpy()
    if len(ids) and (ids.min() < lo or ids.max() >= hi):
        raise StoreError(f"holds game ids outside its range {lo}..{hi - 1}")
    return meta


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


def put_chunk(
    store: RunStore,
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
    store._writable()
    old = store.stored(mid, chunk)
    if old is not None and intact(store, old):
        return old
    m = store.index().matchups.get(mid)
    if m is None:
        raise StoreError(f"{store.dir}: chunk {chunk} of an unregistered matchup {mid}")
    lo, hi = m.no * m.games, (m.no + 1) * m.games
    ids = games["game_id"].to_numpy() if len(games) else np.array([lo])
    if ids.min() < lo or ids.max() >= hi:
        raise StoreError(
            f"{store.dir}: chunk {chunk} of {m.name} holds game ids {ids.min()}..{ids.max()}, "
            f"outside its matchup's {lo}..{hi - 1}"
        )
    try:
        parts: list[tuple[str, pa.Table]] = [("games", to_table(games, GAMES_SCHEMA, "games"))]
        if hands is not None:
            parts.append(("hands", to_table(hands, HANDS_SCHEMA, "hands")))
    except TableError as exc:
        raise StoreError(str(exc)) from None
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
        data = parquet_bytes(table, {**meta, "kind": kind})
        rel = f"{kind}/{mid}/{chunk:05d}.parquet"
        store._write_file(store.dir / rel, data)
        files[kind] = {"path": rel, "sha256": sha256(data), "bytes": len(data)}
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
    store._append(rec)
    return ChunkRecord(mid, chunk, n_games, n_hands, files, (lo, hi))


def intact(store: RunStore, rec: ChunkRecord) -> bool:
    """Every file of the chunk hashes to what its line says."""
    return all(read_verified(store, rec, kind) is not None for kind in rec.files)


def verify(store: RunStore, matchup_ids: Sequence[str] | None = None, deep: bool = False) -> list[str]:
    """Check every stored chunk (of these matchups) against its checksum.

    A bad or missing file is named in one line (returned and logged),
    moved to ``quarantine/`` and dropped from the index, so the next run
    plays that chunk again.  ``deep`` (``arena fsck``) also holds each line
    to its file's own description (:func:`line_problem`).
    """
    store._writable()
    bad = []
    ids = set(matchup_ids) if matchup_ids is not None else None
    for (mid, c), rec in list(store.index().chunks.items()):
        if ids is not None and mid not in ids:
            continue
        for kind in rec.files:
            problem = file_problem(store, rec, kind, deep)
            if problem:
                m = store.index().matchups.get(mid)
                # A line naming files not at its own chunk's place (edited to another chunk's) is dropped, and
                # those files, which may be another chunk's whole and indexed ones, stay where they are.
                own = all(f["path"] == f"{k}/{mid}/{c:05d}.parquet" for k, f in rec.files.items())
                moved = quarantine(store, rec, problem) if own else []
                if rec.files[kind]["path"] in moved:
                    done = "moved to quarantine/ and to be played again"
                elif moved:
                    done = f"its other file(s) moved to quarantine/ ({', '.join(moved)}); to be played again"
                else:
                    done = "to be played again"
                line = f"chunk {c} of {m.name if m else mid}: {problem}; {done}"
                store._append({"type": "drop", "matchup": mid, "chunk": c, "why": problem})
                say_once(f"{store.dir}: {line}")
                bad.append(line)
                break
    return bad


def quarantine(store: RunStore, rec: ChunkRecord, why: str) -> list[str]:
    """Move a chunk's files aside; returns the paths of those that were there to move."""
    moved = []
    for f in rec.files.values():
        src = store.dir / f["path"]
        if src.exists():
            store._move_aside(src, why)
            moved.append(f["path"])
    return moved


def file_problem(store: RunStore, rec: ChunkRecord, kind: str, deep: bool = False) -> str:
    """What is wrong with a chunk's file of ``kind`` ("" when its bytes hash to its line), in words.

    ``deep`` (``arena fsck``) also reads the file and holds its line to what the file says of
    itself (:func:`line_problem`), which a plain read does not pay for.
    """
    f = rec.files[kind]
    try:
        data = read_inside(store.dir, f["path"], f["bytes"])
    except FileNotFoundError:
        return f"{f['path']} is missing"
    except OSError as exc:
        return f"{f['path']} is unreadable ({exc.strerror})"
    if len(data) == f["bytes"] and sha256(data) == f["sha256"]:
        return line_problem(store, rec, kind, data) if deep else ""
    longer = len(data) > f["bytes"]
    if longer:  # read to one byte past its length: read whole (up to a bound) to say how long, and whose
        try:
            data = read_inside(store.dir, f["path"], max(16 * f["bytes"], 1 << 26))
        except OSError as exc:
            return f"{f['path']} is unreadable ({exc.strerror})"
    try:  # whole, but another chunk's file (swapped, copied over)?  Its own metadata says so.
        meta = chunk_meta(data)
    except StoreError:
        meta = None
    if meta is not None and (meta["matchup"], int(meta["chunk"]), meta["kind"]) != (rec.matchup, rec.chunk, kind):
        other = f"chunk {meta['chunk']} of {meta['bot_a']} vs {meta['bot_b']}"
        return f"{f['path']} is a whole file of another chunk ({other}, by its metadata: swapped?)"
    if longer:
        size = f"{len(data)} bytes" if len(data) <= max(16 * f["bytes"], 1 << 26) else "far more bytes"
        return f"{f['path']} is {size}, longer than the {f['bytes']} the index says (bytes added?)"
    if len(data) != f["bytes"]:
        return f"{f['path']} is {len(data)} bytes, the index says {f['bytes']} (truncated?)"
    return f"{f['path']} does not match its checksum (corrupted)"


def line_problem(store: RunStore, rec: ChunkRecord, kind: str, data: bytes) -> str:
    """Where a chunk's index line disagrees with its file of ``kind`` ("" if nowhere).

    A line's CRC catches a damaged line, not an edited one: a line saying 10**12 games, or
    another chunk's files, with the files' own hashes kept, passed every check while counts and
    progress read it.  Each file says what it holds (:func:`chunk_meta`), so fsck holds the lines
    to that; the matchup's line is held to its files by :func:`~arena.run.store.repair.scan`.
    """
    f = rec.files[kind]
    try:
        meta = chunk_meta(data)
    except StoreError as exc:
        return f"{f['path']} {exc}"
    said = {
        # which chunk: a line pointed at another chunk's file (its hash and size copied) read its games twice
        "chunk": ((rec.matchup, rec.chunk, kind), (meta["matchup"], int(meta["chunk"]), meta["kind"])),
        "path": (f["path"], f"{kind}/{rec.matchup}/{rec.chunk:05d}.parquet"),
        "files": (sorted(rec.files), sorted(meta["files"])),  # a file left out of the line was never read
        "games": (rec.games, int(meta["games"])),
        "hands": (rec.hands, int(meta["hands"])),
        "game ids": (list(rec.ids) if rec.ids else None, [int(v) for v in meta["game_ids"]]),
    }
    for what, (line, own) in said.items():
        if line is not None and line != own:
            return f"{what}: the index says {line!r}, its file {f['path']} says {own!r} (an edited line?)"
    return ""


def read_verified(store: RunStore, rec: ChunkRecord, kind: str) -> bytes | None:
    """The bytes of a chunk's file of ``kind``, or None unless they hash to what its line says."""
    f = rec.files[kind]
    try:
        data = read_inside(store.dir, f["path"], f["bytes"])
    except OSError:
        return None
    if len(data) != f["bytes"] or sha256(data) != f["sha256"]:
        return None
    return data


def read_chunks(
    store: RunStore,
    games_columns: Sequence[str] | None = None,
    hands: bool | Sequence[str] = False,
    actions: bool = False,
) -> Iterator[StoredChunk]:
    """Every stored chunk of the current matchups, verified, in play order.

    A chunk that fails its checksum is skipped, named in one log line and
    in :attr:`problems`; its bytes are never parsed.
    """
    for m, rec in store._current_records():
        g = read_table(store, m, rec, "games", games_columns)
        if g is None:
            continue
        h = None
        if hands is not False and "hands" in rec.files:
            h = read_table(store, m, rec, "hands", None if hands is True else hands)
            if h is None:
                continue
        a = None
        if actions and "actions" in rec.files:
            a = read_table(store, m, rec, "actions", None)
            if a is None:
                continue
        yield StoredChunk(m.name, m.bot_a, m.bot_b, rec.chunk, g, h, a)


def bad_chunk(store: RunStore, m: Matchup, rec: ChunkRecord, kind: str) -> None:
    """Name a chunk left out of a read, once, in the log and in ``store.problems``."""
    if (store.dir / kind).is_symlink():  # one line for the folder, not one per chunk behind it
        line = f"{link_problem(store.dir, kind)}; its chunks are left out"
    else:
        line = f"{store.dir}: chunk {rec.chunk} of {m.name}: {file_problem(store, rec, kind) or 'unreadable'}; left out"
    if line not in store.problems:
        store.problems.append(line)
        say_once(line)


def read_table(
    store: RunStore, m: Matchup, rec: ChunkRecord, kind: str, columns: Sequence[str] | None
) -> pd.DataFrame | None:
    data = read_verified(store, rec, kind)
    if data is None:
        bad_chunk(store, m, rec, kind)
        return None
    cols = None if columns is None else [c for c in columns if c in COLUMNS[kind]]
    return frame(parquet_table(data, cols))


def read_games(store: RunStore, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """All games of the current matchups in one frame (for small runs and notebooks)."""
    parts = [c.games for c in read_chunks(store, columns)]
    if not parts:
        return pd.DataFrame(columns=list(columns or GAMES_COLUMNS))
    return concat(parts)


def read_hands(store: RunStore, columns: Sequence[str] | None = None) -> pd.DataFrame | None:
    """All hands of the current matchups in one frame, or None when none were recorded."""
    parts = [
        c.hands
        for c in read_chunks(store, ["game_id"], hands=list(columns) if columns else True)
        if c.hands is not None
    ]
    return concat(parts) if parts else None


def dataset(store: RunStore, kind: str = "games") -> Any:
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
    for m, rec in store._current_records():
        if kind not in rec.files:
            continue
        if read_verified(store, rec, kind) is None:
            bad_chunk(store, m, rec, kind)
            continue
        paths.append(str(store.dir / rec.files[kind]["path"]))
    return ds.dataset(paths, schema=schema, format="parquet")


def concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts in one frame; a categorical column stays categorical, its categories joined."""
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
