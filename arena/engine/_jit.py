"""One place for numba options and the compiled-code cache.

Every kernel in the arena is compiled through :func:`jit`, so caching and
other compiler options are decided here and not scattered over decorators
(the pattern stumpy uses in its ``config`` module).  ``cache=True`` keeps the
compiled machine code on disk so a second start skips compilation;
``nogil=True`` lets threads run kernels side by side.

numba re-validates a cached function only against its own source file, not
against the kernels it calls from other modules, so an edited ``engine/melds.py``
could leave a stale ``engine/step.py`` kernel in the cache.  The cache therefore
lives in a folder named after a hash of every source file of the ``arena``
and ``bots`` packages, subpackages included (``arena/run/``,
``arena/analysis/``, ...): any edit starts a fresh cache.  Setting
``NUMBA_CACHE_DIR`` yourself overrides this.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

JIT_OPTIONS: dict[str, bool] = {"cache": True, "nogil": True}

_ROOT = Path(__file__).resolve().parents[2]  # the folder holding arena/ and bots/


def _source_hash() -> str:
    digest = hashlib.sha256()
    for package in ("arena", "bots"):
        base = _ROOT / package
        for path in sorted(base.rglob("*.py")):
            # The path relative to the package, so a file moved between
            # subpackages changes the hash too.
            digest.update(path.relative_to(base).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where compiled kernels are kept for this exact version of the sources."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gin-arena" / "numba"
    return base / _source_hash()


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = str(cache_dir())  # type: ignore[attr-defined]  # set at import by numba


def jit(*args, **kwargs):
    """``numba.njit`` with the arena's options; accepts a signature like njit."""
    options = {**JIT_OPTIONS, **kwargs}
    return numba.njit(*args, **options)
