"""arena.engine._jit: kernels and jit functions reach compiled callers as helpers without machine code of their own."""

from __future__ import annotations

import pickle

import numba
import numpy as np
from numba.core.runtime import _nrt_python  # type: ignore[attr-defined]  # numba's C module

from arena.engine import melds
from arena.engine._jit import JIT_OPTIONS, KERNEL_OPTIONS, Dual, _HelperLibrary, helper


def _twice_py(x):
    return 2 * x


def _plus_one_py(x):
    return x + 1


def _fresh_kernel() -> Dual:
    """A kernel of its own per test (not cached, so no test sees another's compilations)."""
    return Dual(_twice_py, {**KERNEL_OPTIONS, "cache": False})


def _defined(library, name: str) -> bool:
    """Does numba's execution engine hold machine code for the symbol ``name``?"""
    return bool(library.codegen._engine.is_symbol_defined(name))


def test_a_kernel_called_from_compiled_code_compiles_only_its_helper():
    twice = _fresh_kernel()

    @numba.njit(cache=False)
    def caller(x):
        return twice(x) + 1

    assert caller(np.int64(3)) == 7
    assert len(twice.inner.signatures) == 1
    assert twice.public.signatures == []  # no Python-callable kernel was compiled for the caller


def test_a_kernel_called_from_python_runs_its_public_kernel():
    twice = _fresh_kernel()
    assert twice(np.int64(5)) == 10
    assert len(twice.public.signatures) == 1
    assert twice.inner.signatures == []
    assert twice.py_func is _twice_py  # everything else is the public kernel's


def test_a_helper_emits_no_machine_code_but_its_caller_holds_the_code():
    plus_one = helper(_plus_one_py)

    @numba.njit(cache=False)
    def caller(x):
        return plus_one(x) * 3

    assert caller(np.int64(4)) == 15
    (inner,) = plus_one.overloads.values()
    (outer,) = caller.overloads.values()
    assert isinstance(inner.library, _HelperLibrary)
    assert not _defined(inner.library, inner.fndesc.mangled_name)
    assert _defined(outer.library, outer.fndesc.mangled_name)


def test_a_kernel_pickles_as_the_module_s_own_object():
    assert pickle.loads(pickle.dumps(melds.deadwood)) is melds.deadwood


def _scaled_py(x):
    return np.arange(3)[1:] * x  # allocates: a jit function, with reference counting


def test_a_jit_function_reaches_compiled_callers_as_a_helper_with_reference_counting():
    scaled = Dual(_scaled_py, {**JIT_OPTIONS, "cache": False})

    @numba.njit(cache=False)
    def caller(x):
        total = 0
        for _ in range(1000):  # leaks would show in numba's allocation counts
            total += scaled(x).sum()
        return total

    rtsys = numba.core.runtime.rtsys
    stats_were_on = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        assert caller(np.int64(5)) == 15_000
        after = rtsys.get_allocation_stats()
    finally:
        if not stats_were_on:
            _nrt_python.memsys_disable_stats()
    assert after.alloc - before.alloc == after.free - before.free >= 1000
    assert scaled.public.signatures == [] and len(scaled.inner.signatures) == 1
    (inner,) = scaled.inner.overloads.values()
    assert isinstance(inner.library, _HelperLibrary)


_INT_FN = numba.types.FunctionType(numba.types.int64(numba.types.int64))


@numba.njit(numba.types.int64(_INT_FN, numba.types.int64), cache=False)
def _call_through_pointer(f, x):
    return f(x)


def test_a_jit_function_passed_as_a_function_value_in_compiled_code_still_works():
    twice = Dual(_twice_py, {**JIT_OPTIONS, "cache": False})

    @numba.njit(cache=False)
    def caller(x):
        return _call_through_pointer(twice, x)

    assert caller(np.int64(21)) == 42


def _clock_py():
    with numba.objmode(t="float64"):
        t = 2.5
    return t


def test_a_jit_function_that_reads_its_environment_still_works_in_a_compiled_caller():
    """objmode needs numba's environment object, which lives in the function's own machine code."""
    clock = Dual(_clock_py, {**JIT_OPTIONS, "cache": False})

    @numba.njit(cache=False)
    def caller():
        return clock() * 2

    assert caller() == 5.0
    (inner,) = clock.inner.overloads.values()
    assert _defined(inner.library, inner.fndesc.mangled_name)  # finished the usual way


def test_a_process_importing_the_engine_waits_while_another_compiles_its_batch_kernel():
    """The batch kernel is compiled at import; on a cold cache every process starting at once compiled it
    (14 s each).  Under the cache's lock for it (held here, as the compiling process would), an import waits."""
    import fcntl
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from arena.engine.play import play_games_kernel  # compiled (or loaded) here first

    assert play_games_kernel.signatures
    from arena.engine._jit import lock_file

    with open(lock_file("arena.engine.play.play_games_kernel"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        child = subprocess.Popen(
            [sys.executable, "-c", "import arena.engine.play; print('imported')"],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        time.sleep(4.0)
        assert child.poll() is None, "the import did not wait for the lock"
        fcntl.flock(held, fcntl.LOCK_UN)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0 and out.strip() == "imported"
