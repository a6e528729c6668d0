"""The settings every ``arena`` command group shares (``arena ...`` and ``arena league ...``)."""

from __future__ import annotations

import typer


def typer_app(help: str) -> typer.Typer:
    """A typer app as the arena's commands want it: help on no arguments, plain text, no shell
    completion installer, and plain tracebacks (a bug report shows the real one)."""
    return typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        help=help,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )


def port_problem(port: int) -> str | None:
    """The one-line complaint about a ``--port`` value, or None when it is a port (0: any free one).
    Checked before a server starts: the socket's own error is a traceback (``OverflowError``)."""
    return None if 0 <= port <= 65535 else f"--port {port} is not a port (0..65535)"
