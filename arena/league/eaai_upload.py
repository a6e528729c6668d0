"""An EAAI-kit player uploaded to the league: a jar, or a zip of its class folder, checked and unpacked.

The upload is untrusted bytes.  It is accepted only if it is a zip archive (a jar is one) of at
most ``max_bytes``, whose entries are plain files and folders with relative names inside the
archive (no absolute path, no ``..``, no backslash, no link), readable (not encrypted, compressed by
one of :data:`METHODS`), no name both a file and a folder, none nested deeper than
:data:`MAX_DEPTH` folders, at most :data:`MAX_ENTRIES` of them, unpacking to at most
:data:`UNPACKED_FACTOR` times the upload's size (a zip bomb stops at the first entry past it,
measured as it is written, whatever the header claims), and holding the class to play.  A zip of a
class folder may hold the folder itself (``bin/com/x/P.class``): the root is then that folder.  A
refusal names the entry, never a server path.  It is unpacked whole into its own folder (read-only
files, readable by the bots' user) named by its hash, and played as ``eaai:<the folder in it that
holds the class>:<class>``.

:func:`check_eaai_upload` makes every check that needs no disk, so the league refuses a bad upload
before its transaction; :func:`unpack_eaai_upload` writes it, inside the transaction.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from arena.league.db import LeagueError, reuse_folder
from arena.settings.botref import EAAI_PREFIX, BotRef, BotRefError

T = TypeVar("T")

MAX_ENTRIES = 5000
#: The most folders an entry's name may nest (a Java package is a few deep; a name of 64 KB may be 32,000).
MAX_DEPTH = 64
#: The unpacked files may be at most this many times the upload's size.
UNPACKED_FACTOR = 20


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
    #: Bytes the archive's files unpack to, as their headers declare: what it takes on disk, and the quota's
    #: measure (a header that lies is caught while unpacking: no file gets more bytes).
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
    """Every check of an uploaded player that needs no disk (size, class name, entries, the class, the
    declared unpacked size); a one-line :class:`LeagueError` for the first that fails."""
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
        unpacked = sum(i.file_size for i in infos if not i.is_dir())
    budget = _budget(data)
    if unpacked > budget:
        raise LeagueError(f"the archive unpacks to more than {budget} bytes ({UNPACKED_FACTOR} times its size)")
    return CheckedArchive(class_name, root, unpacked, hashlib.sha256(data).hexdigest())


def _budget(data: bytes) -> int:
    return UNPACKED_FACTOR * max(len(data), 1)


def unpack_eaai_upload(folder: Path, data: bytes, checked: CheckedArchive) -> Path:
    """Unpack a checked upload, whole, into ``folder / checked.folder`` (once: an upload already there is kept);
    the player's class folder in it.  Nothing is left behind when it fails (:class:`LeagueError`)."""
    dest = folder / checked.folder
    if dest.is_dir():
        reuse_folder(dest.parent)  # a leftover the sweep could take before the new version points to it
        return folder / checked.player
    made = not dest.parent.exists()
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="upload-", dir=dest.parent))
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            _unpack(z, _names(z), work, budget=_budget(data))
        os.replace(work, dest)
    except OSError as exc:  # its text would name the server's folder: the reason alone
        raise LeagueError(f"the archive cannot be unpacked: {exc.strerror or type(exc).__name__}") from None
    except LeagueError:  # a ValueError too: already its one line
        raise
    except ZIP_ERRORS as exc:
        raise LeagueError(f"the archive cannot be unpacked: {_reason(exc)}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if made and not dest.exists():
            shutil.rmtree(dest.parent, ignore_errors=True)
    return folder / checked.player


def store_eaai_upload(folder: Path, data: bytes, class_name: str, max_bytes: int) -> tuple[str, str]:
    """Check and unpack an uploaded player under ``folder``; returns (its spec, the upload's sha256).

    Raises :class:`LeagueError` (one line) for anything refused.
    """
    checked = check_eaai_upload(data, class_name, max_bytes)
    player = unpack_eaai_upload(folder, data, checked)
    return f"{EAAI_PREFIX}{player.resolve()}:{class_name}", checked.sha256


def _unpack(z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], work: Path, budget: int) -> None:
    work.chmod(0o755)
    written = 0
    for info in infos:
        target = work / info.filename
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with _read_entry(info, z.open, info) as src, open(target, "wb") as out:
            while chunk := _read_entry(info, src.read, 1 << 16):
                written += len(chunk)
                if written > budget:
                    raise LeagueError(f"the archive unpacks to more than {budget} bytes")
                out.write(chunk)
    for p in work.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)


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
