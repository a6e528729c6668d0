"""A task function that fails on a chosen call: a pass of tasks broken halfway, in-process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def failing_on_call(fn: Callable[[Any], Any], n: int, exc: Exception) -> tuple[Callable[[Any], Any], list[Any]]:
    """``fn`` that raises ``exc`` on its ``n``-th call instead, and the list of the tasks it was called with."""
    calls: list[Any] = []

    def wrapped(task: Any) -> Any:
        calls.append(task)
        if len(calls) == n:
            raise exc
        return fn(task)

    return wrapped, calls
