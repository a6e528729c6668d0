"""Ctrl-C before a command has its own handling: one line and exit 130, not a traceback.

Commands that keep results (``run``, ``report``...) catch the interrupt themselves and say what was saved.
Elsewhere (while Python imports typer, numpy, pandas or numba, a second or two, or in a command with no
handler) a Ctrl-C printed a traceback, or, once typer had it, ended with exit 130 and no word at all.  And
an interrupt inside a C extension's module initialisation does not always come out as a
``KeyboardInterrupt`` (pandas raises ``SystemError``), so an exception that follows a Ctrl-C is taken for
the Ctrl-C; one without a Ctrl-C is a bug, and its traceback is shown as it is.

Only the standard library here: this module is loaded before anything heavy.
"""

from __future__ import annotations

import signal
import sys

#: The exit code of a command ended by SIGINT or SIGTERM (``arena.cli.main.EXIT_INTERRUPTED``).
EXIT_INTERRUPTED = 130

_received: list[int] = []
_said: list[bool] = []  # a line has said so, in this command
_keeps: list[str] = []  # what the command keeps when a signal ends it at any moment (:func:`keeps`)


def keeps(words: str) -> None:
    """Say what this command keeps if a signal ends it where it has no handler of its own (SIGTERM between
    a sweep's runs ended it with "interrupted" alone, though the runs' chunks were saved)."""
    _keeps[:] = [words]


def kept() -> str:
    """``": <what is kept>"`` for the line of a signal that ends the command, or ``""``."""
    return f": {_keeps[0]}" if _keeps else ""


def _on_interrupt(signum: int, frame: object) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def install() -> None:
    """Note each Ctrl-C as it raises ``KeyboardInterrupt`` (not when the caller ignores SIGINT, as a shell
    does for a background job)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)


def ignore() -> None:
    """Ignore SIGINT from now on: the command has ended (it said what it kept), and the process only exits.
    An ignored SIGINT stays ignored while Python shuts down, when it would otherwise kill the process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def caused(exc: BaseException) -> bool:
    """Whether ``exc`` is, or followed, a Ctrl-C."""
    return isinstance(exc, KeyboardInterrupt) or bool(_received)


def report(detail: str = "", how: str = "SIGINT") -> None:
    """The one line: ``error: interrupted (SIGINT)``, then what a command kept (``detail``), if it says."""
    line = f"error: interrupted ({how})" + (f": {detail}" if detail else "")
    _said.append(True)
    sys.stderr.write(f"\n{line}\n")
    sys.stderr.flush()


def begin() -> None:
    """A command begins: nothing said yet (a test may run several in one process)."""
    _said.clear()
    _keeps.clear()


def signalled() -> bool:
    """A Ctrl-C arrived (typer turns one it catches into exit 130, silently)."""
    return bool(_received)


def report_once() -> None:
    """:func:`report`, unless a command already said what it kept."""
    if not _said:
        report()
