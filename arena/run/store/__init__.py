"""The run folder: the one package that writes and reads it; :class:`RunStore` is its face.

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

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from arena.run.schema import ACTIONS_SCHEMA, GAMES_SCHEMA, HANDS_SCHEMA
from arena.run.store import analysis as _analysis
from arena.run.store import chunks as _chunks
from arena.run.store import files as _files
from arena.run.store import lookup as _lookup
from arena.run.store import meta as _meta
from arena.run.store import repair as _repair
from arena.run.store.chunks import StoredChunk, chunk_meta
from arena.run.store.files import atomic_write as _atomic_write
from arena.run.store.files import close_inherited_locks, make_folder
from arena.run.store.format import (
    CHECKPOINT,
    INDEX,
    KINDS,
    LOCK,
    META_KEY,
    SECRET,
    STORE_FORMAT,
    StoreBusy,
    StoreEnvError,
    StoreError,
    as_input_error,
    env_error,
    log,
    now,
    said,
    say_once,
)
from arena.run.store.index import BadLine, ChunkRecord, Index, Matchup, apply_records, read_index
from arena.run.store.index import format_line as _line
from arena.run.store.lookup import GameRecord
from arena.run.store.repair import Finding
from arena.run.tables import actions_table, to_table
from arena.settings.config import TournamentConfig
from arena.settings.rules import Rules

__all__ = [
    "ACTIONS_SCHEMA",
    "CHECKPOINT",
    "GAMES_SCHEMA",
    "HANDS_SCHEMA",
    "INDEX",
    "KINDS",
    "LOCK",
    "META_KEY",
    "SECRET",
    "STORE_FORMAT",
    "BadLine",
    "ChunkRecord",
    "Finding",
    "GameRecord",
    "Index",
    "Matchup",
    "RunStore",
    "StoreBusy",
    "StoreEnvError",
    "as_input_error",
    "StoreError",
    "StoredChunk",
    "actions_table",
    "chunk_meta",
    "close_inherited_locks",
    "env_error",
    "holds_run",
    "make_folder",
    "read_index",
    "said",
    "to_table",
]


#: What a run folder holds (the index, its checkpoint, the tables' folders, an older version's
#: files): ``--fresh`` deletes a folder only if it is empty or holds one of these.
_RUN_MARKS = (INDEX, CHECKPOINT, "games", "hands", "chunks", "games.parquet", "manifest.json")
#: The file that makes a folder a sweep's (written by ``arena sweep`` before its first game): its rules
#: values' run folders are inside it, so it holds no run itself, and no run may be played into it.
SWEEP_MARK = "sweep-folder.txt"


def holds_run(d: Path) -> bool:
    """Whether folder ``d`` holds a run's files (what ``--fresh`` may delete; a sweep asks it of
    its rules values' folders)."""
    return any((d / mark).exists() for mark in _RUN_MARKS)


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
        make_folder(d, "the run folder")
        if not os.access(d, os.W_OK | os.X_OK):
            raise StoreEnvError(f"cannot write to the run folder {d} (read-only?)")
        # Before the lock file is made in a folder that is not ours (again under the lock below): a run
        # written into a folder of other files (a sweep's, a user's) made it a run folder, and a later
        # --fresh deleted all of it.
        cls._refuse_foreign(d, "--fresh would delete" if fresh else "cannot run in")
        store = cls(d, must_exist=False)
        store._lock(what)
        try:
            if fresh:
                store._clear()
            linked = _files.linked_dirs(d)
            if linked:  # reads already refuse them; a write or a repair would reach into another folder
                raise StoreError(_files.link_problem(d, linked[0]))
            store._remove_temps()
            (d / "games").mkdir(exist_ok=True)
            (d / "hands").mkdir(exist_ok=True)
            if not (d / INDEX).exists() and not store._recoverable():
                legacy = (d / "chunks").is_dir() or (d / "games.parquet").exists()
                if legacy:
                    raise StoreError(
                        f"{d} holds a run from an older version of gin-arena; use --fresh or another --name"
                    )
                store._append({"type": "store", "format": STORE_FORMAT, "created": now()})
        except OSError as exc:
            store.close()
            raise env_error(exc, f"write to the run folder {d}") from None
        except StoreError:
            store.close()
            raise
        return store

    def _lock(self, what: str) -> None:
        self._lock_fd = _files.take_lock(self.dir, what)

    def holder(self) -> str | None:
        """Who holds the folder's lock ("pid 1234 (arena run)"), or None when no live process does.

        A run killed outright (SIGKILL, a power cut) leaves "running" in its manifest, but the OS let go of
        its lock: this tells such a run from a live one.  Changes nothing."""
        return _files.lock_holder(self.dir)

    def close(self) -> None:
        """Release the lock (also released by the OS if the process dies)."""
        if self._lock_fd is not None:
            _files.release_lock(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @classmethod
    def _refuse_foreign(cls, d: Path, doing: str = "--fresh would delete") -> None:
        """StoreError when ``d`` holds files but no run (:func:`holds_run`): neither a run nor ``--fresh``
        may take a folder that is not a run's (``doing`` says which was asked)."""
        held = sorted(p.name for p in d.iterdir() if p.name != LOCK)
        if held and not holds_run(d):
            what = "a sweep" if (d / SWEEP_MARK).exists() else "files but no run"
            raise StoreError(
                f"{doing} {d}, which holds {what} (e.g. {held[0]}); give another --name or --results-dir"
                + (", or empty it yourself" if what != "a sweep" else "")
            )

    def _clear(self) -> None:
        """Delete the run folder's contents (``--fresh``), but never a folder that holds no run.

        A name or results folder given by mistake (``--results-dir ~ --name Documents``) would
        otherwise lose files that are not the arena's to delete.
        """
        self._refuse_foreign(self.dir)
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
        return _files.temp_files(self.dir)

    def _writable(self) -> None:
        if self._lock_fd is None:
            raise StoreError(f"{self.dir}: the store was opened for reading")

    # --- the index ------------------------------------------------------------------
    def _append(self, record: dict[str, Any]) -> None:
        """Append one line and fsync it: once this returns, the line survives a crash."""
        self._writable()
        path = self.dir / INDEX
        try:
            _files.append_line(path, _line(record))
        except OSError as exc:
            raise env_error(exc, f"write {path}") from None
        self._index = None

    def index(self) -> Index:
        """The index; when its file is damaged or lost, as :meth:`check` would repair it (in memory)."""
        if self._index is None:
            p = self.dir / INDEX
            odd = p.is_symlink() or (p.exists() and not p.is_file())  # never read: rebuilt as if lost
            idx = apply_records([]) if odd else read_index(p)
            if odd or self._damaged(idx):
                scan = self._scan(verify_orphans=True)
                bad = idx.bad
                idx = apply_records(scan.records)
                idx.bad = bad
                self.findings = scan.findings
                for f in scan.findings:
                    say_once(f"{self.dir}: {f.line(False)}")
            self._index = idx
        return self._index

    def _holds_chunk_folders(self) -> bool:
        """Whether ``games/`` holds a chunk file in a matchup's folder (no link followed): one an index should list."""
        base = self.dir / "games"
        try:
            if base.is_symlink() or not base.is_dir():
                return False
            return any(
                _files.CHUNK_FILE.fullmatch(f.name)
                for d in base.iterdir()
                if d.is_dir() and not d.is_symlink()
                for f in d.iterdir()
            )
        except OSError:
            return False

    def _damaged(self, idx: Index) -> bool:
        """Cheap signs that the index file lost something: bad lines, no file, shorter than its checkpoint."""
        p, ck = self.dir / INDEX, self.dir / CHECKPOINT
        if idx.bad or not p.exists():
            return True
        if any(key[0] not in idx.matchups for key in idx.chunks):
            return True
        if not idx.chunks and self._holds_chunk_folders():  # an index emptied (or cut) with no copy to compare
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
        elif (m.games, m.chunks) != (games, chunks):
            # Both are in the id: a line that says otherwise was edited (a run would call the matchup
            # complete at another count of games, or never).
            raise StoreError(
                f"{self.dir}: the index line of matchup {m.name} says {m.games} games in {m.chunks} chunk(s), "
                f"but its id was planned with {games} in {chunks} (an edited line?); see 'arena fsck {self.dir}'"
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
            for r in idx.stored_of(m):
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
        self._write_file(self.dir / CHECKPOINT, data)

    # --- checking and repairing (arena fsck): arena.run.store.repair ------------------
    def check(self, *, repair: bool = False, verify: bool = True) -> list[str]:
        """Check the folder (one line per finding) and, with ``repair``, mend it: :func:`.repair.check`."""
        return _repair.check(self, repair=repair, verify=verify)

    def _scan(self, *, verify_orphans: bool) -> _repair.Scan:
        return _repair.scan(self, verify_orphans=verify_orphans)

    def _move_aside(self, src: Path, why: str, *, copy: bool = False) -> Path:
        return _files.move_aside(self.dir, src, why, copy=copy)

    def _write_file(self, path: Path, data: bytes) -> None:
        """Write one file of the folder whole or not at all (every writer of the store comes here)."""
        if not _files.inside(self.dir, path):
            raise StoreError(f"{self.dir}: refusing to write {path.relative_to(self.dir)} through a link")
        _atomic_write(path, data)

    # --- chunks: arena.run.store.chunks -----------------------------------------------
    def put_chunk(
        self,
        mid: str,
        chunk: int,
        games: pd.DataFrame,
        hands: pd.DataFrame | None,
        actions: pa.Table | None = None,
    ) -> ChunkRecord:
        """Store one chunk's tables (atomically, then its fsync'd index line); idempotent: :func:`.chunks.put_chunk`."""
        return _chunks.put_chunk(self, mid, chunk, games, hands, actions)

    def verify(self, matchup_ids: Sequence[str] | None = None, deep: bool = False) -> list[str]:
        """Check stored chunks against their checksums; quarantine and drop bad ones: :func:`.chunks.verify`."""
        return _chunks.verify(self, matchup_ids, deep)

    def chunks(
        self,
        games_columns: Sequence[str] | None = None,
        hands: bool | Sequence[str] = False,
        actions: bool = False,
    ) -> Iterator[StoredChunk]:
        """Every stored chunk of the current matchups, verified, in play order: :func:`.chunks.read_chunks`."""
        return _chunks.read_chunks(self, games_columns, hands, actions)

    def _table(self, m: Matchup, rec: ChunkRecord, kind: str, columns: Sequence[str] | None) -> pd.DataFrame | None:
        return _chunks.read_table(self, m, rec, kind, columns)

    def games(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """All games of the current matchups in one frame (for small runs and notebooks)."""
        return _chunks.read_games(self, columns)

    def hands(self, columns: Sequence[str] | None = None) -> pd.DataFrame | None:
        """All hands of the current matchups in one frame, or None when none were recorded."""
        return _chunks.read_hands(self, columns)

    def dataset(self, kind: str = "games") -> Any:
        """A ``pyarrow.dataset`` of exactly the current, verified chunk files of ``kind``: :func:`.chunks.dataset`."""
        return _chunks.dataset(self, kind)

    # --- one game: arena.run.store.lookup ---------------------------------------------
    def game(self, game_id: int) -> pd.Series:
        """One game's row, found through its matchup (game ids are matchup no * games + index)."""
        return _lookup.game(self, game_id)

    def game_record(self, game_id: int) -> GameRecord:
        """One game's row, its hand rows and its action log (None where the run kept none)."""
        return _lookup.game_record(self, game_id)

    def games_per_pair(self) -> int:
        return _lookup.games_per_pair(self)

    # --- run metadata: arena.run.store.meta -------------------------------------------
    def write_text(self, name: str, text: str) -> None:
        self._writable()
        self._write_file(self.dir / name, text.encode())

    def read_text(self, name: str) -> str | None:
        """The text of the folder's own file ``name`` (config, rules, manifest), or None if there is none.

        Read as chunk files are (:func:`.files.read_inside`): never through a
        link, only a regular file, and at most :data:`.files.TEXT_LIMIT` bytes, since
        the text goes into reports and an arena may run as another user than
        the one who made the folder.
        """
        p = self.dir / name
        if not p.exists() and not p.is_symlink():
            return None
        try:
            data = _files.read_inside(self.dir, name, _files.TEXT_LIMIT)
        except OSError as exc:
            raise StoreError(
                f"{p}: not read: {exc.strerror} (the store reads only regular files of the folder)"
            ) from None
        if len(data) > _files.TEXT_LIMIT:
            raise StoreError(f"{p}: longer than {_files.TEXT_LIMIT >> 20} MiB, too long for a run's {name}")
        return data.decode("utf-8", errors="replace")

    def config(self) -> TournamentConfig:
        """The config of the latest run on the folder, set to continue this folder."""
        return _meta.config(self)

    def played_config(self) -> TournamentConfig | None:
        """The config the folder's games were played by, with the rules of its ``rules.toml`` (None: no games)."""
        return _meta.played_config(self)

    def meta_problems(self) -> list[str]:
        """One line per damaged or lost config.toml, rules.toml or manifest.json (which no repair rebuilds)."""
        return _meta.problems(self)

    def rules(self) -> Rules:
        """The resolved rules the folder's games were played by (``rules.toml``)."""
        return _meta.rules(self)

    def write_rules(self, text: str) -> None:
        """Write ``rules.toml`` (the resolved rules' TOML) with the check its readers verify."""
        self.write_text("rules.toml", _meta.checked_rules_toml(text))

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write ``manifest.json`` (atomically), without its empty fields."""
        _meta.write_manifest(self, manifest)

    def manifest(self) -> dict[str, Any]:
        return _meta.manifest(self)

    def meta(self) -> dict[str, Any]:
        """What a report shows beside the tables: name, config and rules text, manifest."""
        return _meta.meta(self)

    def secret_seed(self) -> int:
        """The folder's drawn seed for ``seed = "secret"`` (drawn on first use, then kept)."""
        return _meta.secret_seed(self)

    def append_log(self, stem: str, text: str) -> None:
        """Add bot output to ``logs/<stem>.log`` (never through a link; :func:`arena.run.store.meta.log_stem`)."""
        _meta.append_log(self, stem, text)

    # --- analysis tables (arena analyze): arena.run.store.analysis --------------------
    def begin_analysis(self, name: str, info: dict[str, Any]) -> None:
        """Start the analysis table ``name`` (letters, digits, - and _), deleting an earlier one of that name."""
        _analysis.begin(self, name, info)

    def staged_analysis(
        self, name: str, info: dict[str, Any], resume: bool = True
    ) -> contextlib.AbstractContextManager[_analysis.Stage]:
        """``with store.staged_analysis(name, info) as put:`` the analysis ``name``, put in place only
        if the block ends normally (a failure halfway leaves the stored one as it was, and the parts
        written for the next pass of the same analysis to go on from: :class:`~arena.run.store.analysis.Stage`)."""
        return _analysis.staged(self, name, info, resume)

    def drop_analysis(self, name: str) -> None:
        """Delete the analysis table ``name`` if there is one."""
        _analysis.drop(self, name)

    def rename_analysis(self, name: str, new: str) -> None:
        """Keep the analysis table ``name`` under the name ``new`` (replacing one of that name)."""
        _analysis.rename(self, name, new)

    def put_analysis(self, name: str, part: int, table: pa.Table) -> None:
        """Store part ``part`` of the analysis table ``name`` (atomically, then its checked index line)."""
        _analysis.put_part(self, name, part, table)

    def analyses(self) -> list[str]:
        """Names of the analysis tables stored in the folder."""
        return _analysis.stored_names(self)

    def analysis_info(self, name: str) -> dict[str, Any]:
        """The header the analysis ``name`` was begun with (what was analysed, and how)."""
        return _analysis.info(self, name)

    def analysis_parts(self, name: str, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        """The analysis table ``name`` part by part, each verified (a bad part is named in :attr:`problems`)."""
        return _analysis.read_parts(self, name, columns)
