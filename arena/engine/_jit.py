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

Three flavours, because numba's defaults cost time the engine does not need
(measured in ``docs/bench/PROFILE.md``):

* :func:`jit` - numba's defaults plus the cache: for bots, and for any
  function that allocates arrays (it needs numba's reference counting);
* :func:`kernel` - a public engine kernel that allocates nothing: compiled
  without reference counting (``_nrt=False``), so a call does not
  increment and decrement every array argument (those atomic updates were a
  quarter of the time of a Simple-vs-Simple game);
* :func:`helper` and :func:`inline` - private helpers of the kernels.  A
  helper is compiled only into its callers: no Python or C wrapper (a fifth
  of the compile time of a cold start), not cached on its own (the cached
  caller holds its code), no reference counting.  An ``inline`` helper is
  not compiled at all: numba copies its body into each caller, which saves a
  whole compilation per tiny function.  Neither can be called from Python.

A kernel that needs a small work array takes it from :data:`stack_int64`
(the machine stack), so it still allocates nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numba
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

# ``_nrt`` is said explicitly: numba lets a callee inherit it from its caller
# otherwise, and a kernel's (off) would then forbid arrays in a jit callee.
JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": True}

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


#: A kernel allocates nothing, so it needs no reference counting, and it is
#: never passed to the engine as a bot's decision, so it needs no C wrapper.
KERNEL_OPTIONS: dict[str, Any] = {**JIT_OPTIONS, "_nrt": False, "no_cfunc_wrapper": True}
#: A private helper: only ever called from compiled callers, which hold its code.
HELPER_OPTIONS: dict[str, Any] = {
    "cache": False,
    "nogil": True,
    "_nrt": False,
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
}


def kernel(*args, **kwargs):
    """:func:`jit` for a function that allocates no array (no reference counting)."""
    options = {**KERNEL_OPTIONS, **kwargs}
    return numba.njit(*args, **options)


def helper(fn):
    """A private helper compiled into its compiled callers only (see the module docstring)."""
    return numba.njit(**HELPER_OPTIONS)(fn)


def inline(fn):
    """A tiny private helper whose body numba copies into each compiled caller."""
    return numba.njit(inline="always", **HELPER_OPTIONS)(fn)


def _stack_int64(typingctx, size):
    """An int64 array of ``size`` elements (a constant) on the stack, not zeroed.

    For a kernel that needs a small work array: ``np.zeros`` would make it
    allocate, so it would need reference counting, and it would compile
    numba's array constructors (four functions per shape, 0.3-0.4 s of a
    cold start each time).  The array lives until the function
    returns; its elements hold whatever the stack held, so set each before
    reading it.
    """
    if not isinstance(size, types.IntegerLiteral) or size.literal_value < 1:
        return None
    n = size.literal_value
    array_type = types.int64[::1]

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, context.get_value_type(types.int64), size=n)
        itemsize = context.get_constant(types.intp, 8)
        array = make_array(array_type)(context, builder)
        populate_array(
            array,
            data=data,
            shape=[context.get_constant(types.intp, n)],
            strides=[itemsize],
            itemsize=itemsize,
            meminfo=None,
        )
        return array._getvalue()

    return array_type(size), codegen


#: Called in a kernel as ``stack_int64(SIZE)`` (typed Any: numba's intrinsic
#: object has no Python signature that a type checker could follow).
stack_int64: Any = intrinsic(prefer_literal=True)(_stack_int64)
