"""Analysis tables (``arena analyze``) stored in a run folder.

``analysis/<name>/index.jsonl`` holds a header line (what was analysed, and
how), then one checked line per part file written;
``analysis/<name>/<part>.parquet`` holds the part's rows.  Starting an
analysis of a name replaces the previous one of that name; :func:`rename`
keeps one under another name.  :func:`staged` writes a table that takes
its name only once complete, so a failure halfway loses nothing: not the
earlier table, and not the parts already written, which the next pass of
the same analysis (the same header) keeps and goes on from.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from arena.run.store.chunks import frame, parquet_bytes, parquet_table
from arena.run.store.files import append_line, read_inside, sha256
from arena.run.store.format import INDEX, StoreError, env_error, log, now
from arena.run.store.index import format_line, parse_line

if TYPE_CHECKING:
    from arena.run.store import RunStore


#: The name suffix of an analysis still being written (it takes its own name once complete).
UNFINISHED = "-unfinished"


def begin(store: RunStore, name: str, info: dict[str, Any]) -> None:
    """Start the analysis table ``name`` (letters, digits, - and _), deleting an earlier one of that name."""
    store._writable()
    d = folder(store, name)
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    store._write_file(
        d / INDEX, format_line({"type": "analysis", "name": name, "info": info, "created": now()}).encode()
    )


class Stage:
    """An analysis being written by :func:`staged`: ``stage(part, table)`` stores a part, and
    :meth:`kept` reads back what an interrupted pass of the same analysis stored before."""

    def __init__(self, store: RunStore, name: str, kept_parts: int, first: int):
        self.store, self.name = store, name
        #: Parts kept from an interrupted pass of the same analysis (0: a fresh start).
        self.kept_parts = kept_parts
        self._first = first

    def __call__(self, part: int, table: pa.Table) -> None:
        """Store this pass's part ``part`` (numbered after the kept ones)."""
        put_part(self.store, self.name, self._first + part, table)

    def kept(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """The kept parts' ``columns``, part by part (all intact: :func:`_resumable` checked them)."""
        if self.kept_parts:
            yield from read_parts(self.store, self.name, columns)


@contextlib.contextmanager
def staged(store: RunStore, name: str, info: dict[str, Any], resume: bool = True) -> Iterator[Stage]:
    """Write the analysis ``name`` so that it takes the place of a stored one only once complete.

    Yields a :class:`Stage`.  The parts go to ``name`` + :data:`UNFINISHED`;
    when the block ends normally that table is renamed ``name`` (replacing
    one of that name), and when it raises (a log that doesn't replay, a lost
    worker, Ctrl-C) the stored ``name`` stays as it was.  The unfinished
    table stays too, out of :func:`stored_names`: a later pass with the same
    ``info`` goes on from its parts (:attr:`Stage.kept_parts`), where hours
    of grading a large run used to be thrown away by one Ctrl-C.  A pass
    with other ``info``, or not to ``resume``, starts afresh.
    """
    unfinished = name + UNFINISHED
    kept, first = _resumable(store, unfinished, info) if resume else (0, 0)
    if not kept:
        begin(store, unfinished, info)
    yield Stage(store, unfinished, kept, first)
    rename(store, unfinished, name)


def _resumable(store: RunStore, name: str, info: dict[str, Any]) -> tuple[int, int]:
    """(parts kept, the next part's number) of the unfinished analysis ``name`` when it was begun with
    ``info`` (compared as stored: JSON) and every part is intact, else (0, 0): a damaged part kept would
    stay in the finished table, named as left out at every read."""
    if not (folder(store, name) / INDEX).is_file():
        return 0, 0
    try:
        head, parts = read_index(store, name)
    except (StoreError, OSError, ValueError):
        return 0, 0
    if not parts or json.loads(json.dumps(info, default=str)) != head:
        return 0, 0
    if any(_intact(store, name, rec) is None for rec in parts):
        return 0, 0
    return len(parts), max(int(p["part"]) for p in parts) + 1


def drop(store: RunStore, name: str) -> None:
    """Delete the analysis ``name`` if there is one."""
    store._writable()
    d = folder(store, name)
    if d.exists():
        shutil.rmtree(d)


def rename(store: RunStore, name: str, new: str) -> None:
    """Keep the analysis ``name`` under ``new`` (replacing one of that name), by one rename."""
    store._writable()
    src, dest = folder(store, name), folder(store, new)
    if not (src / INDEX).is_file():
        raise StoreError(f"{store.dir}: no analysis '{name}'")
    try:
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(src, dest)
    except OSError as exc:
        raise env_error(exc, f"keep analysis '{name}' as '{new}'") from None


def put_part(store: RunStore, name: str, part: int, table: pa.Table) -> None:
    """Store part ``part`` of the analysis table ``name`` (atomically, then its checked index line)."""
    store._writable()
    d = folder(store, name)
    if not (d / INDEX).is_file():
        raise StoreError(f"{store.dir}: analysis '{name}' was not begun")
    data = parquet_bytes(table)
    rel = f"{int(part):05d}.parquet"
    store._write_file(d / rel, data)
    line = format_line({"type": "part", "part": int(part), "path": rel, "sha256": sha256(data), "bytes": len(data)})
    append_line(d / INDEX, line)


def stored_names(store: RunStore) -> list[str]:
    """Names of the analysis tables stored in the folder (not one still being written, or interrupted)."""
    root = store.dir / "analysis"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / INDEX).is_file() and not p.name.endswith(UNFINISHED))


def info(store: RunStore, name: str) -> dict[str, Any]:
    """The header the analysis ``name`` was begun with (what was analysed, and how)."""
    head, _ = read_index(store, name)
    return head


def read_parts(store: RunStore, name: str, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
    """The analysis table ``name`` part by part, each verified (a bad part is named in :attr:`problems`)."""
    _, parts = read_index(store, name)
    for rec in parts:
        data = _intact(store, name, rec)
        if data is None:
            line = f"{store.dir}: analysis '{name}' part {rec['part']}: missing or corrupted; left out"
            if line not in store.problems:
                store.problems.append(line)
                log.warning("%s", line)
            continue
        yield frame(parquet_table(data, list(columns) if columns else None))


def _intact(store: RunStore, name: str, rec: dict[str, Any]) -> bytes | None:
    """The bytes of the part ``rec`` of the analysis ``name``, or None when missing or not as its line says."""
    try:
        data = read_inside(folder(store, name), rec["path"], rec["bytes"])
    except OSError:
        return None
    return data if len(data) == rec["bytes"] and sha256(data) == rec["sha256"] else None


def folder(store: RunStore, name: str) -> Path:
    """The folder of the analysis ``name``; StoreError for a name that could leave ``analysis/``."""
    if not isinstance(name, str) or not name or len(name) > 64 or not all(c.isalnum() or c in "-_" for c in name):
        raise StoreError(f"analysis name {name!r} is not allowed (letters, digits, - and _)")
    return store.dir / "analysis" / name


def read_index(store: RunStore, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header of the analysis ``name`` and its part lines (the latest of each part), in part order."""
    path = folder(store, name) / INDEX
    if not path.is_file():
        raise StoreError(f"{store.dir}: no analysis '{name}' (run arena analyze first)")
    head: dict[str, Any] | None = None
    parts: dict[int, dict[str, Any]] = {}
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        rec = parse_line(text) if text.strip() else None
        if rec is None:
            continue
        if rec.get("type") == "analysis" and head is None:
            head = rec.get("info", {})
        elif rec.get("type") == "part":
            parts[int(rec["part"])] = rec
    if head is None:
        raise StoreError(f"{path}: no valid header line (corrupted)")
    return head, [parts[k] for k in sorted(parts)]
