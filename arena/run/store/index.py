"""The index file's line format and what a sequence of its lines means.

Each line is ``{"crc": crc32(body), "r": record}``: a line that fails its
CRC (damaged, or torn by a crash) is named as a :class:`BadLine`, never
read as data.  :func:`apply_records` turns records into an :class:`Index`
(matchups in order, the latest record of each chunk); the store appends
lines and :mod:`arena.run.store.repair` rebuilds lost ones.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.run.store.files import read_inside
from arena.run.store.format import STORE_FORMAT, StoreError, env_error


def format_line(record: dict[str, Any]) -> str:
    """One index line (with its newline): the record and the CRC of its canonical JSON."""
    body = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return (
        json.dumps(
            {"crc": zlib.crc32(body.encode()), "r": record},
            sort_keys=True,
            separators=(",", ":"),
        )
        + "\n"
    )


def parse_line(text: str) -> dict[str, Any] | None:
    """The record of one index line, or None when the line fails its check."""
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

    def stored_of(self, m: Matchup, counted: bool = True) -> list[ChunkRecord]:
        """The stored chunks of matchup ``m`` in chunk order: those below its planned count, and when
        ``counted`` below its SPRT limit too.

        Looked up by what is stored, never by walking chunk numbers up to the planned count: that
        count is a number read from the file, and a line planning 10**12 chunks held every reader
        for hours.  Both ways cost the stored chunks at most."""
        n = m.chunks if m.limit is None or not counted else min(m.limit, m.chunks)
        if n <= len(self.chunks):
            return [r for c in range(n) if (r := self.chunks.get((m.id, c))) is not None]
        return sorted((r for (mid, c), r in self.chunks.items() if mid == m.id and 0 <= c < n), key=lambda r: r.chunk)


def read_lines(
    path: Path,
) -> list[tuple[dict[str, Any] | None, BadLine | None]] | None:
    """Each line of an index file, parsed or named bad; None when the file does not exist.

    A :class:`StoreError` when its header names a newer store format than this version's: read as
    this format, such a folder's files would be misread, and a run or a repair would write this
    format's lines into it."""
    try:
        data = read_inside(path.parent, path.name)  # a regular file, not a link (to /dev/zero, say)
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
        rec = parse_line(text)
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
            _known_format(path, rec)
            out.append((rec, None))
    return out


def _known_format(path: Path, rec: dict[str, Any]) -> None:
    """Refuse a header line of a store format newer than :data:`STORE_FORMAT` (one line naming both)."""
    fmt = rec.get("format") if rec.get("type") == "store" else None
    if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt > STORE_FORMAT:
        raise StoreError(
            f"{path} was written by a newer gin-arena (store format {fmt}; this version reads format "
            f"{STORE_FORMAT}): read it with that version"
        )


def apply_records(records: Sequence[dict[str, Any]], idx: Index | None = None) -> Index:
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


def _changed_bot(m: Matchup, now: dict[str, Any]) -> bool:
    """Whether matchup ``m`` holds a bot that ``now`` (name -> identity, of a matchup just registered) names
    with another identity: a changed file or parameters.  The bot's name in the tables is the new version
    from then on, so its older games leave them, whoever its opponent (a matchup only an earlier ``arena
    submit`` played stayed, and the tables mixed the two versions under one name).  Lines from before
    identities were kept say nothing."""
    for name, key in ((m.bot_a, "bot_a"), (m.bot_b, "bot_b")):
        was = m.identity.get(key)
        if name in now and now[name] is not None and was is not None and was != now[name]:
            return True
    return False


def _apply_one(idx: Index, rec: dict[str, Any], positional: int) -> None:
    kind = rec.get("type")
    if kind == "matchup":
        mid = rec["id"]
        if mid in idx.matchups:
            idx.matchups[mid].superseded = False
            return
        identity = dict(rec.get("identity", {}))
        now = {rec["bot_a"]: identity.get("bot_a"), rec["bot_b"]: identity.get("bot_b")}
        for other in idx.matchups.values():
            if {other.bot_a, other.bot_b} == {rec["bot_a"], rec["bot_b"]} or _changed_bot(other, now):
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
            now = {revived.bot_a: revived.identity.get("bot_a"), revived.bot_b: revived.identity.get("bot_b")}
            for other in idx.matchups.values():
                if other is not revived and (
                    {other.bot_a, other.bot_b} == {revived.bot_a, revived.bot_b} or _changed_bot(other, now)
                ):
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
    lines = read_lines(path) or []
    idx = apply_records([rec for rec, _ in lines if rec])
    idx.bad = [bad for _, bad in lines if bad is not None]
    idx.lines = len(lines)
    return idx
