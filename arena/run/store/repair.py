"""Checking and repairing a run folder (``arena fsck``): functions taking the store.

The index is rebuilt from its checkpoint copy and from the chunk files,
each of which describes itself and carries page checksums; the two kinds of
line no chunk file can tell (``revive`` and ``limit``) come back from
``manifest.json``.  :func:`scan` changes nothing and says what it found;
:func:`check` applies it when asked to repair.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.run.store.chunks import chunk_meta, file_problem
from arena.run.store.files import CHUNK_FILE, TEMP_FILE, linked_dirs, read_inside, sha256
from arena.run.store.format import CHECKPOINT, INDEX, KINDS, STORE_FORMAT, StoreError, env_error, now, say_once
from arena.run.store.index import BadLine, Index, apply_records, format_line, read_lines

if TYPE_CHECKING:
    from arena.run.store import RunStore


@dataclass(frozen=True)
class Finding:
    """One thing :func:`check` found: what is wrong, and what is (or would be) done."""

    what: str
    done: str  # past tense: what repair did or does
    would: str = ""  # what --repair would do, when the check only reads ("" = same as done)

    def line(self, repaired: bool) -> str:
        return f"{self.what}; {self.done if repaired or not self.would else self.would}"


@dataclass
class Scan:
    records: list[dict[str, Any]]
    findings: list[Finding]
    quarantine: list[tuple[Path, str]]  # files to move aside
    remove: list[Path]  # temp files to delete
    rewrite: bool  # the index file must be rewritten
    recopy: bool = False  # the checkpoint must be written again from the index


def check(store: RunStore, *, repair: bool = False, verify: bool = True) -> list[str]:
    """Check the folder: index lines, chunk files, checksums; one line per finding.

    The index is rebuilt from its checkpoint copy and the chunk files
    (each describes itself, and its page checksums prove its bytes
    intact): a damaged or torn line, a lost index, a chunk written
    without its line.  What can't be trusted - a file that fails its
    checksum, a stray file - is moved to ``quarantine/``; temp files of
    cut-short writes are deleted.  ``verify`` also hashes every indexed
    file (what :meth:`verify` does) and holds each line to what its files
    say of themselves (an edited line's CRC is as good as a true one's).  Without ``repair`` nothing changes
    and each line says what a repair would do.
    """
    if repair:
        store._writable()
    elif linked_dirs(store.dir):
        # Every chunk behind a linked folder would read as unreadable, and a repair refuses the folder: the
        # link is what to mend, and it is named by :func:`arena.run.store.meta.problems`, not here.
        return []
    found = scan(store, verify_orphans=True)
    lines = [f.line(repair) for f in found.findings]
    if repair:
        try:
            for path in found.remove:
                path.unlink(missing_ok=True)
            for path, why in found.quarantine:
                store._move_aside(path, why)
            ck = store.dir / CHECKPOINT
            if found.recopy and ck.is_file() and not ck.is_symlink():
                store._move_aside(ck, "checkpoint unlike the index", copy=True)  # kept: which is right is a guess
            if found.recopy and not found.rewrite:
                store.checkpoint()
            if found.rewrite:
                old = store.dir / INDEX
                if old.exists():
                    store._move_aside(old, "damaged index", copy=True)
                body = "".join(format_line(r) for r in found.records if r)
                store._write_file(old, body.encode())
                store._index = None
                store.checkpoint()
        except OSError as exc:
            raise env_error(exc, f"repair {store.dir}") from None
    store._index = None
    store.findings = []
    if not repair:
        store._index = apply_records(found.records)
    for line in lines:
        say_once(f"{store.dir}: {line}")
    if verify:
        lines += store.verify(deep=True) if repair else verify_lines(store)
    return lines


def verify_lines(store: RunStore) -> list[str]:
    """One line per indexed chunk whose file fails its checksum or disagrees with its line (changes nothing)."""
    out = []
    idx = store.index()
    for (mid, c), rec in list(idx.chunks.items()):
        for kind in rec.files:
            problem = file_problem(store, rec, kind, deep=True)
            if problem:
                m = idx.matchups.get(mid)
                # "the chunk's files": a missing file is not moved, the chunk's other files are
                out.append(
                    f"chunk {c} of {m.name if m else mid}: {problem}; --repair moves the chunk's files to quarantine/"
                )
                say_once(f"{store.dir}: {out[-1]}")
                break
    return out


def scan(store: RunStore, *, verify_orphans: bool) -> Scan:
    """What the index should say, from its file, its checkpoint and the chunk files (changes nothing)."""
    findings: list[Finding] = []
    quarantine: list[tuple[Path, str]] = []
    # Neither the index nor its copy is read through a link or from a FIFO; one in their place is moved
    # aside unread (else no command could read the folder again) and rebuilt as if lost.
    idx_path = store.dir / INDEX
    idx_odd = idx_path.is_symlink() or (idx_path.exists() and not idx_path.is_file())
    lines = None if idx_odd else read_lines(idx_path)
    if idx_odd:
        quarantine.append((idx_path, f"{INDEX}: not a regular file (a link, a FIFO, a folder?)"))
    ck_path = store.dir / CHECKPOINT
    ck_odd = ck_path.is_symlink() or (ck_path.exists() and not ck_path.is_file())
    ck = [] if ck_odd else (read_lines(ck_path) or [])
    ck_recs = [rec for rec, _ in ck]
    aligned = lines is not None and all(
        a == b for (a, _), b in zip(lines, ck_recs, strict=False) if a is not None and b is not None
    )
    recopy = ck_odd
    if ck_odd:
        quarantine.append((ck_path, f"{CHECKPOINT}: not a regular file (a link, a FIFO, a folder?)"))
    elif lines is not None and ck and (not aligned or any(b is not None for _, b in ck)):
        # A damaged line or another index's lines: nothing lost yet, but the copy a lost index is
        # rebuilt from is not this index's, so it is named and written again.
        recopy = True
        n = next((i + 1 for i, (_, b) in enumerate(ck) if b is not None), None)
        what = f"line {n} is damaged" if n else f"it is not a copy of {INDEX} (its lines differ)"
        findings.append(
            Finding(
                f"{CHECKPOINT}: {what}",
                f"rewritten from {INDEX} (the old copy kept in quarantine/)",
                f"--repair rewrites it from {INDEX} (keeping the old copy in quarantine/)",
            )
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
                f"{INDEX} is missing" if not idx_odd else f"{INDEX} is set aside",
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
    idx = apply_records(records)
    recovered: dict[tuple[str, int], str] = {}
    known: set[str] = set()  # matchups rebuilt from their chunk files
    # Chunk files the index does not know (or knows from a lost line): rebuilt from their own metadata.
    for kind in KINDS:
        base = store.dir / kind
        if base.is_symlink():  # named by meta.problems; a repair refuses the folder before it scans
            continue
        if not base.is_dir():
            continue
        for sub in sorted(base.iterdir()):
            if sub.is_symlink():
                quarantine.append((sub, f"{kind}/{sub.name}: not a chunk folder (a link)"))
                continue
            if not sub.is_dir():
                if not TEMP_FILE.fullmatch(sub.name):
                    quarantine.append((sub, f"{kind}/{sub.name}: not a chunk file"))
                continue
            for f in sorted(sub.iterdir()):
                rel = f"{kind}/{sub.name}/{f.name}"
                if TEMP_FILE.fullmatch(f.name):
                    continue  # listed below
                mt = CHUNK_FILE.fullmatch(f.name)
                if mt is None or not f.is_file():
                    quarantine.append((f, f"{rel}: not a chunk file"))
                    continue
                if kind != "games" or not verify_orphans:
                    continue
                key = (sub.name, int(mt.group(1)))
                indexed = key in idx.chunks
                if indexed and (key[0] in known or key[0] in idx.matchups):
                    continue
                got, why = recover_chunk(store, sub.name, key[1])
                if got is None:
                    if why and not indexed:
                        quarantine.append((f, f"{rel}: {why}"))
                    continue
                mrec, crec = got
                taken = next((m for m in idx.matchups.values() if m.no == mrec["no"] and m.id != mrec["id"]), None)
                if taken is not None and not indexed:
                    # A number is never reused in a folder: this file is from another run folder (copied in),
                    # and adopting its matchup would supersede this folder's own games of that pair.
                    why = (
                        f"its matchup {mrec['id']} ({mrec['bot_a']} vs {mrec['bot_b']}) has no index line and its "
                        f"number {mrec['no']} is taken by {taken.name} ({taken.id}): a file from another run folder?"
                    )
                    for k in KINDS:
                        other = store.dir / k / sub.name / f.name
                        if other.exists() or other.is_symlink():
                            quarantine.append((other, f"{k}/{sub.name}/{f.name}: {why}"))
                    continue
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
    idx = apply_records(records)
    if verify_orphans and matchup_lines_from_files(store, idx, records, findings):
        rewrite = True
        idx = apply_records(records)
    if lost or lines is None:
        records += state_from_manifest(store, idx, findings)
        idx = apply_records(records)
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
    temps = store._temp_files()
    if temps:
        findings.append(
            Finding(
                f"{len(temps)} temp file(s) left by an interrupted write ({temps[0].relative_to(store.dir)})",
                "deleted",
                "--repair (or the next run) deletes them",
            )
        )
    for _, why in quarantine:
        findings.append(Finding(why, "moved to quarantine/", "--repair moves it to quarantine/"))
    if rewrite and not any(r.get("type") == "store" for r in records):
        records.insert(0, {"type": "store", "format": STORE_FORMAT, "created": now(), "rebuilt": True})
    return Scan(records, findings, quarantine, temps, rewrite, recopy)


#: What a matchup's line says that its chunk files say too (each file carries its matchup's line).
MATCHUP_FIELDS = ("no", "bot_a", "bot_b", "games", "chunks", "identity")


def matchup_lines_from_files(
    store: RunStore, idx: Index, records: list[dict[str, Any]], findings: list[Finding]
) -> bool:
    """Put back, from its first readable chunk's files, each matchup line that says otherwise; whether one
    changed.

    A CRC catches a damaged line, not an edited one: a line planning 8 chunks for 2 (the matchup
    "complete" at another count of games), or another number (its game ids elsewhere), passed fsck.
    Quarantining its chunks would not mend it (the line stays, and the run refuses it), so the line
    is rebuilt from what its files say, as a lost line is.
    """
    chunks: dict[str, list[int]] = {}
    for mid, c in sorted(idx.chunks):
        chunks.setdefault(mid, []).append(c)
    lines: dict[str, int] = {}  # each matchup's first line (a later one of the same id only revives it)
    for i, r in enumerate(records):
        if r.get("type") == "matchup":
            lines.setdefault(str(r.get("id")), i)
    changed = False
    for mid, i in lines.items():
        # the first chunk whose files read whole (a damaged one is named by the checksum check)
        own = next((got[0] for c in chunks.get(mid, ()) if (got := recover_chunk(store, mid, c)[0])), None)
        if own is None:
            continue
        r = records[i]
        wrong = [k for k in MATCHUP_FIELDS if r.get(k) != own[k]]
        if not wrong:
            continue
        said = ", ".join(f"{k} {r.get(k)!r}, its files {own[k]!r}" for k in wrong)
        records[i] = {**r, **{k: own[k] for k in MATCHUP_FIELDS}}
        changed = True
        findings.append(
            Finding(
                f"{INDEX}: the line of matchup {own['no']} ({own['bot_a']} vs {own['bot_b']}) says {said} "
                "(an edited line?)",
                "rebuilt from its chunk files",
                "--repair rebuilds it from its chunk files",
            )
        )
    return changed


def state_from_manifest(store: RunStore, idx: Index, findings: list[Finding]) -> list[dict[str, Any]]:
    """The ``revive`` and ``limit`` lines an index that lost lines lacks, from the manifest's ``current``.

    Only these two kinds of line can't be rebuilt from chunk files: which
    of a pair's versions is current (a bot file changed, then changed
    back: the older matchup is revived) and an SPRT stop's limit.  Lost,
    the report would silently show the other version's games, or count
    chunks past the stop.  The manifest, written by the run that wrote
    those lines, names each current matchup and its limit.
    """
    state = store.manifest().get("current")
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


def recover_chunk(store: RunStore, mid: str, chunk: int) -> tuple[tuple[dict[str, Any], dict[str, Any]] | None, str]:
    """The matchup and chunk records of a chunk with no index line, from its files; or (None, why)."""
    files: dict[str, dict[str, Any]] = {}
    metas: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        rel = f"{kind}/{mid}/{chunk:05d}.parquet"
        try:
            data = read_inside(store.dir, rel)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return None, f"unreadable ({exc.strerror})"
        try:
            metas[kind] = chunk_meta(data)
        except StoreError as exc:
            return None, f"{rel} {exc}" if kind != "games" else str(exc)
        files[kind] = {"path": rel, "sha256": sha256(data), "bytes": len(data)}
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
