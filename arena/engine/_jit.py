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

A helper's code library is LLVM IR only: no module passes and no machine
code of its own, as its callers optimise and emit it (:class:`_HelperLibrary`).
A :func:`jit` or :func:`kernel` function is a :class:`Dual`: compiled callers
get its helper, Python gets numba's cached dispatcher, compiled on the first
Python call.  So a cold start compiles each function once, into the batch
kernel and the bots' decisions, which are the only machine code it makes.

A kernel that needs a small work array takes it from :data:`stack_int64`
(the machine stack), so it still allocates nothing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core import cgutils, types
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import NativeLowering
from numba.core.typing.typeof import typeof_impl
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


@functools.cache
def lock_dir() -> Path:
    """The compile locks of this version of the sources: beside numba's cache, never in it, since a sandboxed
    bot is shown the cache's kernels (:func:`arena.external.wall.host_paths`) and could hold a lock it can read.
    Kept for the process's life: hashing the sources takes some 5 ms, and every load of a built-in asks."""
    numba_dir = cache_dir()
    return numba_dir.parents[1] / "locks" / numba_dir.name


def lock_file(name: str) -> Path:
    """The file whose ``flock`` is the compile lock of ``name``: a built-in (``bots.random``) or a kernel
    (``arena.engine.play.play_games_kernel``, its module and name)."""
    return lock_dir() / f"{name}.lock"


@contextlib.contextmanager
def compile_lock(name: str, wait_s: float = 600.0) -> Iterator[None]:
    """Hold the compiled-code cache's lock for ``name`` (a built-in bot, an engine kernel) while compiling it.

    numba has no lock between processes: processes that start on a cold cache
    at once (a league's server, scheduler and checks; Dask workers on one
    machine; test workers) each compiled the same bot, the search bots for
    half a minute of CPU each.  With the lock, one compiles and writes the
    cache, and the others wait and then load it.  Past ``wait_s``, or where
    there is no lock to take (a read-only cache folder, no ``fcntl``), a
    process compiles on its own, as before.
    """
    try:
        import fcntl

        path = lock_file(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a")  # noqa: SIM115 - closed below
    except (ImportError, OSError):
        yield
        return
    with handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        yield


def jit(*args, **kwargs):
    """``numba.njit`` with the arena's options; accepts a signature like njit.

    ``@jit`` gives a :class:`Dual` (compiled callers hold its code, Python
    calls a cached dispatcher); ``@jit(signature)`` or ``@jit(option=...)``
    gives numba's dispatcher itself.
    """
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return Dual(args[0], JIT_OPTIONS)
    options = {**JIT_OPTIONS, **kwargs}
    return numba.njit(*args, **options)


#: A kernel allocates nothing, so it needs no reference counting, and it is
#: never passed to the engine as a bot's decision, so it needs no C wrapper.
KERNEL_OPTIONS: dict[str, Any] = {**JIT_OPTIONS, "_nrt": False, "no_cfunc_wrapper": True}


class _HelperLibrary(JITCodeLibrary):
    """The code library of a helper: LLVM IR to link into callers, never machine code of its own.

    numba finalizes every compiled function's library the same way: it links
    in the callees' modules, runs LLVM's module passes (twice: a cheap round
    for reference-count pruning, then the full O3 round) over the whole
    linked module, and emits machine code for it.  A caller then links that
    already-finished module into its own and does all of it again, so a
    deep call chain is optimised and emitted once per level.  A helper is
    only ever linked into callers (it has no wrapper that Python could
    call), so its own module passes and machine code are thrown away: here
    they are skipped, and the caller's single O3 round sees the helper's
    function-optimised IR (numba runs the per-function passes on it as it
    is lowered).  This was about a third of a cold start (measured in
    ``docs/bench/PROFILE.md``, fourth pass).  The games are the same: the
    golden records pin them.

    The exception is a :func:`jit` function's helper that reads its
    *environment* (the Python objects numba keeps for a function: an
    ``objmode`` block, an exception with run-time arguments).  numba stores
    the environment's address in a global of the function's own machine
    code, and callers' linked copies of the code resolve to that global, so
    such a helper is finished the usual way.  It is found by its own IR
    (before the callees are linked in) loading the environment global.  The
    engine's kernels and helpers (compiled without reference counting) are
    never checked: they allocate nothing and have no ``objmode``, and the
    one environment read in their code is numba's fallback for calling a bot
    decision that has no compiled address, which the engine never passes
    (it would raise numba's "missing Environment" error, not crash).
    """

    detect_environment = False  # check for an environment read (a jit function's helper)?
    _standalone = False  # finished the usual way (it reads its environment)?

    def finalize(self) -> None:
        # Before linking: only this function's own code, not its callees'.
        if self.detect_environment:
            self._standalone = _READS_ENVIRONMENT.search(str(self._final_module)) is not None
        super().finalize()

    def _optimize_final_module(self) -> None:
        if self._standalone:
            super()._optimize_final_module()
        # else the caller optimises the linked module

    def _finalize_final_module(self) -> None:
        if self._standalone:
            super()._finalize_final_module()
            return
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True  # not added to the execution engine: no machine code

    def get_pointer_to_function(self, name: str) -> int:
        if self._standalone:
            return super().get_pointer_to_function(name)
        self._ensure_finalized()
        return 0  # no wrapper, no machine code: nothing to point at

    @property
    def codegen(self) -> Any:
        # While lowering it is not yet known whether it stands alone: the real codegen.
        if self._finalized and not self._standalone:
            return _HelperCodegen(self._codegen)
        return self._codegen


#: An instruction that loads a function's environment (numba names it ``_ZN08NumbaEnv...``).
_READS_ENVIRONMENT = re.compile(r"= load [^\n]*@_ZN08NumbaEnv")


class _HelperCodegen:
    """The codegen as a helper's library shows it: no environment to store.

    numba stores a compiled function's environment into a global of its
    machine code; a helper that never reads it has no machine code, so
    there is nothing to store.
    """

    def __init__(self, codegen: Any) -> None:
        self._codegen = codegen

    def set_env(self, env_name: str, env: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._codegen, name)


@register_pass(mutates_CFG=True, analysis_only=False)
class _HelperLowering(NativeLowering):
    """numba's lowering pass, into a :class:`_HelperLibrary`.

    A helper with reference counting is a :func:`jit` function's, so it is
    checked for environment reads; one without is a kernel's or an engine
    helper's, which never reads it.
    """

    _name = "gin_arena_helper_lowering"

    def run_pass(self, state: Any) -> bool:
        if state.library is None:
            state.library = _HelperLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            state.library.detect_environment = state.flags.nrt
            state.library.enable_object_caching()
        return super().run_pass(state)


class _HelperCompiler(CompilerBase):
    """numba's nopython pipeline with :class:`_HelperLowering` for its lowering pass."""

    def define_pipelines(self) -> list[Any]:
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(_HelperLowering if p is NativeLowering else p, d) for p, d in pm.passes]
        pm.finalize()
        return [pm]


#: A private helper: only ever called from compiled callers, which hold its code.
HELPER_OPTIONS: dict[str, Any] = {
    "cache": False,
    "nogil": True,
    "_nrt": False,
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
}


def _helper_of(fn: Any, *, nrt: bool) -> Any:
    """The helper dispatcher of ``fn``: an engine helper's (``nrt`` off) or a jit function's.

    A jit function's helper has reference counting and keeps its C wrapper:
    it may be passed as a first-class function value in compiled code, and
    the caller then calls that wrapper, which it holds with the rest of the
    helper's code.
    """
    options = {**HELPER_OPTIONS, "_nrt": True, "no_cfunc_wrapper": False} if nrt else HELPER_OPTIONS
    return numba.njit(pipeline_class=_HelperCompiler, **options)(fn)


class Dual:
    """A function compiled two ways: into compiled callers as a helper, for Python as a cached dispatcher.

    The engine's kernels call each other (the batch kernel calls
    ``apply_action``, which calls ``deadwood_at_most``, ...), the bots call
    the kit's functions and their own, and the tests, the step-by-step
    table and the tools call the same functions from Python.  Called from
    compiled code, numba types this object as ``inner``, a :func:`helper`
    compiled from the same function (with reference counting if the
    function is a :func:`jit` one), so the caller holds its code and no
    machine code, wrapper or cache entry of its own is made (see
    :class:`_HelperLibrary`).  Called from Python, it runs ``public``,
    numba's cached dispatcher, compiled on the first such call only.  A
    cold start to the first game therefore compiles each of them once, as a
    helper.

    A bot's decisions are compiled by the loader from their Python
    functions (``py_func``) for the engine's signature, so what the engine
    calls through a function pointer is never a helper.
    """

    def __init__(self, fn: Any, options: dict[str, Any]) -> None:
        self.public = numba.njit(**options)(fn)
        self.inner = _helper_of(fn, nrt=options["_nrt"])
        self.py_func = fn  # also under NUMBA_DISABLE_JIT, when both are the plain function
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> Any:
        return self.public(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.public, name)  # py_func, signatures, overloads, inspect_*

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (_dual_named, (self.__module__, self.__qualname__))


def _dual_named(module: str, qualname: str) -> Dual:
    """Unpickle a :class:`Dual` as the module's own object (like a function)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@typeof_impl.register(Dual)
def _typeof_dual(val: Dual, c: Any) -> Any:
    return typeof_impl(val.inner, c)


def kernel(*args, **kwargs):
    """:func:`jit` for a function that allocates no array (no reference counting).

    ``@kernel`` gives a :class:`Dual` (a helper to compiled callers, a
    cached kernel to Python); ``@kernel(signature)`` compiles an entry
    point at once (the batch kernel), for Python callers only, under
    :func:`compile_lock` (processes importing the engine at once on a cold
    cache compiled it once each).
    """
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return Dual(args[0], KERNEL_OPTIONS)
    options = {**KERNEL_OPTIONS, **kwargs}
    decorate = numba.njit(*args, **options)
    if not args:  # options only: compiled on the first call
        return decorate

    def compile_now(fn):
        with compile_lock(f"{fn.__module__}.{fn.__qualname__}"):
            return decorate(fn)

    return compile_now


def helper(fn):
    """A private helper compiled into its compiled callers only (see the module docstring)."""
    return _helper_of(fn, nrt=False)


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
