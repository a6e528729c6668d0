"""arena.engine._jit.stack_int64: a kernel's work array on the stack."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core.errors import TypingError

from arena.engine._jit import kernel, stack_int64
from arena.engine.melds import defender_deadwood

SIZE = 16


@kernel(cache=False)
def _prefix_sums(values):
    work = stack_int64(SIZE)
    total = 0
    for i in range(values.shape[0]):
        total += values[i]
        work[i] = total
    return work[values.shape[0] - 1], work.shape[0]


@kernel(cache=False)
def _sized_at_run_time(n):
    work = stack_int64(n)
    return work.shape[0]


def test_a_stack_array_holds_what_is_written_and_has_the_constant_size():
    assert _prefix_sums(np.arange(1, 11, dtype=np.int64)) == (55, SIZE)


def test_a_size_known_only_at_run_time_is_refused():
    with pytest.raises(TypingError, match="stack_int64"):
        _sized_at_run_time(4)


def test_defender_deadwood_is_compiled_without_reference_counting():
    """Its work arrays are on the stack, so it needs no reference counting (the `kernel` flavour)."""
    assert defender_deadwood.targetoptions["_nrt"] is False
    # 3c 4c lay off down from the run 5c 6c 7c, one after the other.
    assert defender_deadwood(np.int64(0b1100), np.int64(0), np.int64(0b111 << 4))[:2] == (0, 0b1100)
