"""The compiled code of a sandboxed bot file, kept between its starts.

Inside the wall a bot may not write files, so numba could never save what it
compiled there: every start of a sandboxed bot compiled its decisions again
(seconds of CPU per process: per worker of a run, per league pairing, twice
per ``check-bot``, whose second start runs under strace and took some 20 s).

So, before the first start of a file whose compiled code is not kept yet, the
arena starts the sandbox host once more, behind the same wall, with
``--compile``: the host loads the file (numba compiles it) with numba's cache
writes kept in memory (:func:`capture_cache_writes`), and sends them as one
line (:func:`files_line`).  The arena, outside the wall, stores what the line
holds (:func:`store_files`) in numba's cache folder for that file, which later
starts are shown read-only (:func:`arena.external.wall.host_paths`).

The line is the bot's to forge: the host sends it after the bot's code has
run in its process.  So nothing in it is trusted.  Only files of the one
folder numba uses for that file's copy (named after its text's hash) are
stored, under names numba gives them, within a size and a count; a line with
anything else is dropped whole.  What is stored there is read only by later
starts of that same text: behind the wall, or in the arena's process when a
user loads the same file unsandboxed, which runs the same code anyway.  The
arena's own kernels and other bots' code are never written.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: What the host sends at most: a bot's compiled code is some 0.2 MiB (Simple's five decisions).
MAX_BYTES = 16 << 20
MAX_FILES = 64
#: The line, base64 and JSON included.
MAX_LINE = MAX_BYTES * 4 // 3 + 64 * 1024

#: The names numba gives a cache's files: ``<function>-<line>.py311.nbi`` (the index) and ``.<n>.nbc`` (code).
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\.(?:nbi|[0-9]{1,4}\.nbc)")


def skip_cache_writes() -> None:
    """In the sandbox host serving a bot: numba compiles without saving to its cache (the wall forbids file
    writes; the code a file's starts need was kept beforehand, by ``--compile``)."""
    from numba.core import caching

    # numba accepts a cache folder only if it can write a test file there; reading is all a start needs.
    caching._CacheLocator.ensure_cache_path = lambda self: None  # type: ignore[method-assign]  # a deliberate patch
    original = caching.Cache.save_overload

    def save_overload(self, sig, data):
        try:
            original(self, sig, data)
        except OSError:
            pass

    caching.Cache.save_overload = save_overload  # type: ignore[method-assign]  # a deliberate patch


def capture_cache_writes() -> dict[str, bytes]:
    """In the sandbox host: numba's cache writes kept in memory, as ``{"<folder>/<file>": bytes}``.

    numba saves each compiled function through ``IndexDataCacheFile._open_for_write`` (an index and a data
    file, each written to a temporary name and renamed); here each goes to the returned dictionary instead,
    and numba's check that the cache folder is writable is skipped."""
    from numba.core import caching

    files: dict[str, bytes] = {}

    @contextlib.contextmanager
    def open_for_write(self, filepath: str) -> Iterator[io.BytesIO]:
        buf = io.BytesIO()
        yield buf
        path = Path(filepath)
        files[f"{path.parent.name}/{path.name}"] = buf.getvalue()

    caching._CacheLocator.ensure_cache_path = lambda self: None  # type: ignore[method-assign]  # a deliberate patch
    caching.IndexDataCacheFile._open_for_write = open_for_write  # type: ignore[method-assign]  # a deliberate patch
    return files


def files_line(files: dict[str, bytes]) -> str:
    """The host's answer to ``--compile``: the captured files, base64, in one JSON line."""
    return json.dumps({"files": {k: base64.b64encode(v).decode("ascii") for k, v in files.items()}})


def cache_folder_of(bot_copy: str | os.PathLike) -> Path:
    """The folder of numba's cache that holds the compiled code of a bot file's copy (``arena_bot_<hash>.py``):
    numba names it after the copy's folder and a hash of its path."""
    from numba.core.caching import _CacheLocator

    from arena.engine._jit import cache_dir

    return cache_dir() / _CacheLocator.get_suitable_cache_subpath(str(Path(bot_copy).resolve()))


def store_files(line: bytes, folder: Path) -> int:
    """Store the files a ``--compile`` answer names in ``folder`` (numba's cache folder of one bot file's copy);
    returns how many.  Anything not of that folder, not named as numba names its files, past
    :data:`MAX_FILES` or :data:`MAX_BYTES`, or not base64, and the line is dropped whole (0): it came from
    behind the wall.  The folder appears at once, complete, or not at all (a rename), and an existing one is
    left as it is."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: brackets nested past Python's limit
        return 0
    files = msg.get("files") if isinstance(msg, dict) else None
    if not isinstance(files, dict) or not 0 < len(files) <= MAX_FILES:
        return 0
    decoded: dict[str, bytes] = {}
    total = 0
    for key, value in files.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return 0
        parent, _, name = key.partition("/")
        if parent != folder.name or not _NAME.fullmatch(name):
            return 0
        try:
            data = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return 0
        total += len(data)
        if total > MAX_BYTES:
            return 0
        decoded[name] = data
    if folder.exists():
        return 0
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Named as its folder is (<digest>_...): one left by a crash is shown to that bot's starts alone
    # (arena.external.wall.host_paths shows a folder not named after a bot to every bot).
    tmp = Path(tempfile.mkdtemp(prefix=f"{folder.name}.tmp.", dir=folder.parent))
    try:
        for name, data in decoded.items():
            (tmp / name).write_bytes(data)
            (tmp / name).chmod(0o644)  # the wall runs the bot as another uid, which reads them
        tmp.chmod(0o755)
        os.rename(tmp, folder)  # fails if another process stored it first: that copy stays
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return 0
    return len(decoded)
