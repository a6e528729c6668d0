"""An EAAI-kit player uploaded to the league: a jar, or a zip of its class folder, checked and unpacked.

The upload is untrusted bytes.  It is accepted only if it is a zip archive (a jar is one) of at
most ``max_bytes``, whose entries are plain files and folders with relative names inside the
archive (no absolute path, no ``..``, no backslash, no link), readable (not encrypted, compressed by
one of :data:`METHODS`), no name both a file and a folder, none nested deeper than
:data:`MAX_DEPTH` folders, at most :data:`MAX_ENTRIES` of them, making at most :data:`MAX_FOLDERS`
folders (its folder entries and the folders its names imply), unpacking to at most
:data:`UNPACKED_FACTOR` times the upload's size (each file and folder counted as at least a
:data:`BLOCK` of disk: 4999 entries of empty folders 64 deep made 380,000 folders, 1.25 GB on disk,
from 1.7 MB), every entry's bytes sound (decompressed and CRC-checked in memory, whatever the
headers claim, before a byte is written), and holding the class to play.  A zip of a class folder
may hold the folder itself (``bin/com/x/P.class``): the root is then that folder.  A refusal names
the entry, never a server path.  It is unpacked whole into its own folder (read-only files,
readable by the bots' user) named by its hash, and played as ``eaai:<the folder in it that holds the
class>:<class>``.

:func:`check_eaai_upload` makes every check that needs no disk, so the league refuses a bad upload
before it writes anything; :func:`staged_eaai_upload` unpacks it into a private folder under
:data:`STAGING` before the submission's transaction (the slow part, with no database lock held) and
moves it into place with one rename inside the transaction.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import stat
import tempfile
import time
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from arena.league.db import LeagueError, reuse_folder
from arena.settings.botref import EAAI_PREFIX, BotRef, BotRefError

T = TypeVar("T")

MAX_ENTRIES = 5000
#: The most folders an entry's name may nest (a Java package is a few deep; a name of 64 KB may be 32,000).
MAX_DEPTH = 64
#: The most folders an archive may make, its folder entries and the folders its entries' names imply
#: (``a/b/c.class`` makes ``a`` and ``a/b``): a player's packages are a few dozen.
MAX_FOLDERS = 1000
#: The unpacked files and folders may be at most this many times the upload's size ...
UNPACKED_FACTOR = 20
#: ... or this many bytes, if more: a small jar's few folders and classes, a block each, take more.
MIN_UNPACKED = 65536
#: What each file and folder is counted as on top of its bytes: a block of most file systems, what an
#: empty folder takes on disk.  Without it, folders and empty files cost nothing against the budget.
BLOCK = 4096
#: Where an archive is unpacked before its version is stored, relative to the league folder: under
#: ``bots/`` so the move into place is a rename on one file system; the dot keeps it apart from the
#: folders named by a hash.  Each upload has a folder of its own there, named from its start time.
STAGING = "bots/.unpacking"
#: A folder in :data:`STAGING` older than this is a leftover of a server that stopped mid-upload (an
#: unpack within the limits takes seconds).
STALE_SECONDS = 600


#: What Python's zipfile raises on a damaged archive besides BadZipFile: a version it does not know
#: (NotImplementedError), a stream that does not decompress (zlib, LZMA; bz2 raises OSError, which
#: :func:`_read_entry` also counts as the entry's), an offset before the archive's start (ValueError), a
#: header's name that is not the UTF-8 it claims (UnicodeDecodeError, a ValueError), a truncated entry.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, NotImplementedError, ValueError, RuntimeError)


#: The compression methods an entry may use: those Python's zipfile reads (deflate64, say, it cannot).
METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflated",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def _names(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's entries, each a plain relative file or folder that can be read, and no name both a
    file and a folder; a one-line :class:`LeagueError` naming the first entry that is not."""
    infos = z.infolist()
    if len(infos) > MAX_ENTRIES:
        raise LeagueError(f"the archive holds {len(infos)} entries; the limit is {MAX_ENTRIES}")
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name).parts
        if not parts or name.startswith("/") or "\\" in name or "\0" in name or ".." in parts or ":" in name:
            raise LeagueError(f"the archive entry {name[:80]!r} is not a plain relative path")
        if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
            # A line break or tab in the player's folder ends up in its bot reference, which refuses it at
            # the check, after the upload was kept: refused here, before anything is written.
            raise LeagueError(f"the archive entry {name[:80]!r} holds a control character or line break")
        if len(parts) > MAX_DEPTH + 1:
            raise LeagueError(
                f"the archive entry {name[:80]!r} nests {len(parts) - 1} folders deep; the limit is {MAX_DEPTH}"
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise LeagueError(f"the archive entry {name[:80]!r} is a link")
        if info.flag_bits & 0x1:
            raise LeagueError(f"the archive entry {name[:80]!r} is encrypted; send it unencrypted")
        if info.compress_type not in METHODS:
            raise LeagueError(
                f"the archive entry {name[:80]!r} is compressed with method {info.compress_type}, which the "
                f"server cannot read; use one of {', '.join(METHODS.values())}"
            )
    _no_file_and_folder(infos)
    return infos


def _folders(infos: list[zipfile.ZipInfo]) -> int:
    """How many folders unpacking the entries makes (folder entries and the folders their names imply); a
    one-line :class:`LeagueError` naming the entry that makes one past :data:`MAX_FOLDERS`.

    Kept as a tree of (parent, name) pairs, so the work and memory are bounded by the entries' parts and the
    limit, not by the square of a name's depth."""
    made: dict[tuple[int, str], int] = {}
    for info in infos:
        parts = PurePosixPath(info.filename).parts
        node = 0
        for part in parts if info.is_dir() else parts[:-1]:
            node = made.setdefault((node, part), len(made) + 1)
        if len(made) > MAX_FOLDERS:
            raise LeagueError(
                f"the archive makes more than {MAX_FOLDERS} folders (at its entry {info.filename[:80]!r}); "
                f"the limit is {MAX_FOLDERS}"
            )
    return len(made)


def _no_file_and_folder(infos: list[zipfile.ZipInfo]) -> None:
    """Refuse a name that is a file and also a folder (``com`` beside ``com/x.class``): it cannot be
    unpacked, and the disk's error would name a server path.

    Sorted by their parts (a file before a folder entry of the same name), the names under a file's come
    right after it and its copies, so one pass over neighbours finds them: no set of every prefix, whose
    size grows with the square of a name's depth."""
    named = sorted((PurePosixPath(i.filename).parts, i.is_dir(), i.filename) for i in infos)
    for (parts, is_dir, name), (after, after_is_dir, _) in zip(named, named[1:]):
        if not is_dir and after[: len(parts)] == parts and (after != parts or after_is_dir):
            raise LeagueError(f"the archive entry {name[:80]!r} is a file and also a folder of other entries")


@dataclass(frozen=True)
class CheckedArchive:
    """An upload that passed every check made without touching the disk."""

    class_name: str
    #: The folder inside the archive that holds the class's package (``""``: the archive's top).
    root: str
    #: What the archive takes on disk unpacked: its files' bytes, as their headers declare, and a
    #: :data:`BLOCK` for each file and folder; the quota's measure (a header that lies is caught by the check,
    #: which decompresses every entry: no file gets more bytes).
    unpacked: int
    sha256: str

    @property
    def folder(self) -> str:
        """Where the whole archive is unpacked, relative to the league folder: named by its hash alone, so the
        same bytes are one tree on disk (and once in the quota), whichever class is played from them.  (Older
        leagues unpacked the class's folder alone into ``classes``; their versions keep their folders.)"""
        return f"bots/{self.sha256[:32]}/archive"

    @property
    def player(self) -> str:
        """The player's class folder, relative to the league folder: the one in the archive that holds the class."""
        return f"{self.folder}/{self.root}".rstrip("/")


def check_eaai_upload(data: bytes, class_name: str, max_bytes: int) -> CheckedArchive:
    """Every check of an uploaded player that needs no disk (size, class name, entries, folders, the class,
    the declared unpacked size, then every entry's bytes); a one-line :class:`LeagueError` for the first that
    fails.  The checks of the central directory come first, so an archive refused by them costs no
    decompression."""
    if len(data) > max_bytes:
        raise LeagueError(f"the archive is {len(data)} bytes; the limit is {max_bytes}", 413)
    if not isinstance(class_name, str) or not class_name:
        raise LeagueError("an EAAI-kit player needs its class name (e.g. com.example.MyPlayer)")
    try:
        BotRef.parse(f"{EAAI_PREFIX}x.jar:{class_name}")
    except BotRefError:
        raise LeagueError(f"{class_name[:80]!r} is not a Java class name (e.g. com.example.MyPlayer)") from None
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise LeagueError("the upload is not a jar or a zip archive") from None
    except ZIP_ERRORS as exc:
        raise LeagueError(f"the upload is not a jar or a zip archive the server can read ({_reason(exc)})") from None
    with z:
        infos = _names(z)
        want = class_name.replace(".", "/") + ".class"
        roots = [i.filename[: -len(want)] for i in infos if i.filename == want or i.filename.endswith("/" + want)]
        if not roots:
            raise LeagueError(f"the archive holds no {want}")
        root = min(roots, key=len)
        files = [i for i in infos if not i.is_dir()]
        blocks = BLOCK * (len(files) + _folders(infos))
        unpacked = blocks + sum(i.file_size for i in files)
        budget = _budget(data)
        if unpacked > budget:
            raise _too_big(budget)
        _verify(z, files, budget, blocks)
    return CheckedArchive(class_name, root, unpacked, hashlib.sha256(data).hexdigest())


def _verify(z: zipfile.ZipFile, files: list[zipfile.ZipInfo], budget: int, blocks: int) -> None:
    """Decompress every file entry in memory, counting its bytes (after the ``blocks`` its files and folders
    take) against ``budget`` and checking its CRC (which zipfile does at each entry's end), so a damaged entry,
    last or not, is refused before anything is written: the work is bounded by the budget, however the headers
    lie."""
    read = blocks
    for info in files:
        for chunk in _chunks(z, info):
            read += len(chunk)
            if read > budget:
                raise _too_big(budget)


def _budget(data: bytes) -> int:
    """The most the archive ``data`` may take on disk unpacked (files' bytes, and a block per file and folder)."""
    return max(UNPACKED_FACTOR * len(data), MIN_UNPACKED)


def _too_big(budget: int) -> LeagueError:
    return LeagueError(
        f"the archive unpacks to more than {budget} bytes ({UNPACKED_FACTOR} times its size, at least "
        f"{MIN_UNPACKED}; each file and folder counts {BLOCK} bytes besides its own)"
    )


def unpack_eaai_upload(folder: Path, data: bytes, checked: CheckedArchive) -> Path:
    """Unpack a checked upload, whole, into ``folder / checked.folder`` (once: an upload already there is kept);
    the player's class folder in it.  Nothing is left behind when it fails (:class:`LeagueError`)."""
    with staged_eaai_upload(folder, data, checked) as place:
        return place()


def store_eaai_upload(folder: Path, data: bytes, class_name: str, max_bytes: int) -> tuple[str, str]:
    """Check and unpack an uploaded player under ``folder``; returns (its spec, the upload's sha256).

    Raises :class:`LeagueError` (one line) for anything refused.
    """
    checked = check_eaai_upload(data, class_name, max_bytes)
    player = unpack_eaai_upload(folder, data, checked)
    return f"{EAAI_PREFIX}{player.resolve()}:{class_name}", checked.sha256


@contextmanager
def staged_eaai_upload(folder: Path, data: bytes, checked: CheckedArchive) -> Iterator[Callable[[], Path]]:
    """Unpack a checked upload into a private folder under ``folder / STAGING`` (the slow part, before the
    submission's transaction, so no database lock is held while it runs); yields the quick move of it into
    ``folder / checked.folder`` (a rename, inside the transaction), which returns the player's class folder.
    Whatever was not moved into place is removed on the way out.

    A server killed midway leaves its staging folder, never a half folder where a version points (the rename
    is whole or nothing): the next upload (:func:`clean_staging`) or the next server start removes it.  A
    server killed between the rename and the commit leaves a folder no version points to, which the
    scheduler's sweep removes.  Each upload stages in a folder of its own, so two at once never meet; two of
    the same bytes are put in place one after the other (the transactions are), and the second reuses the
    first's folder."""
    staged = _Staged(folder, data, checked)
    try:
        yield staged.place
    finally:
        staged.discard()


class _Staged:
    """An upload unpacked under :data:`STAGING`, until :meth:`place` moves it where its version points."""

    def __init__(self, folder: Path, data: bytes, checked: CheckedArchive):
        self.folder, self.data, self.checked = folder, data, checked
        self.work: Path | None = None
        dest = folder / checked.folder
        if dest.is_dir():  # the same bytes are there already: reused, marked used so the sweep leaves them
            reuse_folder(dest.parent)
        else:
            self.work = _unpack_staged(folder, data)

    def place(self) -> Path:
        dest = self.folder / self.checked.folder
        if dest.is_dir():
            reuse_folder(dest.parent)  # a leftover the sweep could take before the new version points to it
        else:
            if self.work is None:  # the folder it would reuse went since (the sweep took a leftover)
                self.work = _unpack_staged(self.folder, self.data)
            _move(self.work, dest)
            self.work = None
        return self.folder / self.checked.player

    def discard(self) -> None:
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None


def _unpack_staged(folder: Path, data: bytes) -> Path:
    """A new private folder under :data:`STAGING` holding the whole archive (read-only files); stale folders
    there are removed first.  Nothing is left behind when it fails (:class:`LeagueError`)."""
    staging = folder / STAGING
    try:
        staging.mkdir(parents=True, exist_ok=True)
        clean_staging(folder)
        work = Path(tempfile.mkdtemp(prefix=f"{int(time.time())}-", dir=staging))
    except OSError as exc:  # its text would name the server's folder: the reason alone
        raise LeagueError(f"the server cannot store the archive: {exc.strerror or type(exc).__name__}", 507) from None
    try:
        with _one_line_errors(), zipfile.ZipFile(io.BytesIO(data)) as z:
            _unpack(z, _names(z), work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return work


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Turn what unpacking raises into one :class:`LeagueError` line with no server path in it."""
    try:
        yield
    except OSError as exc:  # its text would name the server's folder: the reason alone
        raise LeagueError(f"the archive cannot be unpacked: {exc.strerror or type(exc).__name__}") from None
    except LeagueError:  # a ValueError too: already its one line
        raise
    except ZIP_ERRORS as exc:
        raise LeagueError(f"the archive cannot be unpacked: {_reason(exc)}") from None


def _move(work: Path, dest: Path) -> None:
    """Rename the unpacked folder ``work`` to ``dest`` (its parent made if need be, and removed again if the
    rename fails); a one-line :class:`LeagueError` (507) when the disk refuses."""
    made = not dest.parent.exists()
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        reuse_folder(dest.parent)  # an old, empty leftover the sweep could take between here and the commit
        os.replace(work, dest)
    except OSError as exc:
        if made:
            shutil.rmtree(dest.parent, ignore_errors=True)
        raise LeagueError(f"the server cannot store the archive: {exc.strerror or type(exc).__name__}", 507) from None


def clean_staging(folder: Path, max_age: float = STALE_SECONDS) -> list[str]:
    """Remove the folders under ``folder / STAGING`` started more than ``max_age`` seconds ago (by the time in
    their names): uploads of a server that stopped midway.  ``max_age`` 0, when the server starts (it holds the
    league folder's lock, so no upload is under way), removes them all.  Their names, for the log."""
    removed = []
    try:
        stale = [p for p in (folder / STAGING).iterdir() if _started(p.name) < time.time() - max_age]
    except OSError:
        return []  # no staging folder yet
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
        removed.append(f"{STAGING}/{p.name}")
    return removed


def _started(name: str) -> float:
    """When the upload staged in folder ``name`` began (a name not made here: long ago, so it is removed)."""
    stamp = name.split("-", 1)[0]
    return float(stamp) if stamp.isdigit() and len(stamp) < 16 else 0.0


def _unpack(z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], work: Path) -> None:
    """Write the entries of a checked archive (:func:`check_eaai_upload` has measured every entry's bytes
    against the budget already) into ``work``, read-only."""
    work.chmod(0o755)
    for info in infos:
        target = work / info.filename
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as out:
            for chunk in _chunks(z, info):
                out.write(chunk)
    for p in work.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)


def _chunks(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """An entry's bytes, decompressed a piece at a time (zipfile checks its CRC at its end)."""
    with _read_entry(info, z.open, info) as src:
        while chunk := _read_entry(info, src.read, 1 << 16):
            yield chunk


def _read_entry(info: zipfile.ZipInfo, read: Callable[[Any], T], arg: Any) -> T:
    """``read(arg)`` (opening an entry, or reading from it); a one-line :class:`LeagueError` naming the entry
    when the archive's bytes are damaged there (an OSError here is bz2's, not the disk's)."""
    try:
        return read(arg)
    except (*ZIP_ERRORS, OSError) as exc:
        raise LeagueError(
            f"the archive cannot be unpacked: its entry {info.filename[:80]!r} is damaged ({_reason(exc)})"
        ) from None


def _reason(exc: BaseException) -> str:
    """An exception's text in one short line, without a path (or its type, when it has no text)."""
    text = " ".join(str(getattr(exc, "strerror", None) or exc).split())[:120]
    return text or type(exc).__name__
