"""arena.engine._jit: a kernel reaches compiled callers as a helper that emits no machine code of its own."""

from __future__ import annotations

import pickle

import numba
import numpy as np

from arena.engine import melds
from arena.engine._jit import KERNEL_OPTIONS, Kernel, _HelperLibrary, helper


def _twice_py(x):
    return 2 * x


def _plus_one_py(x):
    return x + 1


def _fresh_kernel() -> Kernel:
    """A kernel of its own per test (not cached, so no test sees another's compilations)."""
    return Kernel(_twice_py, {**KERNEL_OPTIONS, "cache": False})


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
