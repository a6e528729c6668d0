"""An EAAI-kit player uploaded to the league: a jar, or a zip of its class folder, checked and unpacked.

The upload is untrusted bytes.  It is accepted only if it is a zip archive (a jar is one) of at
most ``max_bytes``, whose entries are plain files and folders with relative names inside the
archive (no absolute path, no ``..``, no backslash, no link), at most :data:`MAX_ENTRIES` of
them, unpacking to at most :data:`UNPACKED_FACTOR` times the upload's size (a zip bomb stops at
the first entry past it, measured as it is written, whatever the header claims), and holding
the class to play.  A zip of a class folder may hold the folder itself (``bin/com/x/P.class``):
the root is then that folder.  It is unpacked into its own folder (read-only files, readable
by the bots' user) named by its hash, and played as ``eaai:<folder>:<class>``.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from arena.league.db import LeagueError
from arena.settings.botref import EAAI_PREFIX, BotRef, BotRefError

MAX_ENTRIES = 5000
#: The unpacked files may be at most this many times the upload's size.
UNPACKED_FACTOR = 20


def _names(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    infos = z.infolist()
    if len(infos) > MAX_ENTRIES:
        raise LeagueError(f"the archive holds {len(infos)} entries; the limit is {MAX_ENTRIES}")
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name).parts
        if not name or name.startswith("/") or "\\" in name or "\0" in name or ".." in parts or ":" in name:
            raise LeagueError(f"the archive entry {name[:80]!r} is not a plain relative path")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise LeagueError(f"the archive entry {name[:80]!r} is a link")
    return infos


def store_eaai_upload(folder: Path, data: bytes, class_name: str, max_bytes: int) -> tuple[str, str]:
    """Check and unpack an uploaded player under ``folder``; returns (its spec, the upload's sha256).

    Raises :class:`LeagueError` (one line) for anything refused.
    """
    if len(data) > max_bytes:
        raise LeagueError(f"the archive is {len(data)} bytes; the limit is {max_bytes}", 413)
    try:
        BotRef.parse(f"{EAAI_PREFIX}x.jar:{class_name}")
    except BotRefError:
        raise LeagueError(f"{class_name!r} is not a Java class name (e.g. com.example.MyPlayer)") from None
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise LeagueError("the upload is not a jar or a zip archive") from None
    with z:
        infos = _names(z)
        want = class_name.replace(".", "/") + ".class"
        names = {i.filename for i in infos}
        roots = [n[: -len(want)] for n in names if n == want or n.endswith("/" + want)]
        if not roots:
            raise LeagueError(f"the archive holds no {want}")
        root = min(roots, key=len)
        digest = hashlib.sha256(data).hexdigest()
        dest = folder / "bots" / digest[:32] / "classes"
        if not dest.is_dir():
            dest.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix="upload-", dir=dest.parent))
            try:
                _unpack(z, infos, root, work, budget=UNPACKED_FACTOR * max(len(data), 1))
                os.replace(work, dest)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return f"{EAAI_PREFIX}{dest.resolve()}:{class_name}", digest


def _unpack(z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], root: str, work: Path, budget: int) -> None:
    work.chmod(0o755)
    written = 0
    for info in infos:
        if not info.filename.startswith(root) or info.filename == root:
            continue
        target = work / info.filename[len(root) :]
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with z.open(info) as src, open(target, "wb") as out:
            while chunk := src.read(1 << 16):
                written += len(chunk)
                if written > budget:
                    raise LeagueError(f"the archive unpacks to more than {budget} bytes")
                out.write(chunk)
    for p in work.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
