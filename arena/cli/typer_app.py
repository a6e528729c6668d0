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
