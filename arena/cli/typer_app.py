"""The settings every ``arena`` command group shares (``arena ...`` and ``arena league ...``)."""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

try:  # the click that typer runs: its own copy from typer 0.2x on, whose exceptions are not click's
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - an older typer, on click itself
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

from arena.cli import interrupts


def hoist(args: list[str], options: tuple[str, ...]) -> list[str]:
    """``args`` with each of the app's own ``options`` (and its value) moved to the front.

    Click takes an app's options only before the command's name, so
    ``arena run quick --eaai-kit kit`` would be refused as "no such option"
    though it says what ``arena --eaai-kit kit run quick`` says.  Anything
    after ``--`` stays where it is; an option last with no value is a usage error.
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i:])
            break
        if a in options:
            if i + 1 == len(args):
                raise typer.BadParameter("no value given", param_hint=f"'{a}'")
            front += [a, args[i + 1]]
            i += 2
            continue
        if a.split("=", 1)[0] in options and "=" in a:
            front.append(a)
        else:
            rest.append(a)
        i += 1
    return front + rest


class OneLineUsageError(click_exceptions.UsageError):
    """A usage error (an option's bad value, an unknown option or command) said as every other error of
    the arena's commands is: one line ``error: ...`` on stderr, exit 2 (docs/reference/exit-codes.md).
    click printed the usage, a hint and ``Error: ...`` on four lines."""

    def show(self, file: Any = None) -> None:
        hint = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        typer.echo(f"error: {self.format_message()}{hint}", file=file or sys.stderr)


def one_line(exc: click_exceptions.UsageError) -> click_exceptions.UsageError:
    """``exc`` as a :class:`OneLineUsageError` with its whole message (a bad value's names the option); a
    command given no arguments still shows its help."""
    if isinstance(exc, OneLineUsageError | click_exceptions.NoArgsIsHelpError):
        return exc
    return OneLineUsageError(exc.format_message(), exc.ctx)


class _HoistingGroup(TyperGroup):
    """The app's command group: its own options may also follow the command (:func:`hoist`)."""

    hoisted: tuple[str, ...] = ()

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, hoist(args, self.hoisted))
        except click_exceptions.UsageError as exc:
            raise one_line(exc) from None

    def invoke(self, ctx: Any) -> Any:
        """A Ctrl-C that no command caught is one line and exit 130 (:mod:`arena.cli.interrupts`); typer
        would end it with exit 130 and no word.  A usage error of a command is one line too."""
        interrupts.begin()
        try:
            return super().invoke(ctx)
        except click_exceptions.UsageError as exc:
            raise one_line(exc) from None
        except (typer.Exit, typer.Abort, click_exceptions.ClickException):
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception | KeyboardInterrupt) or not interrupts.caused(exc):
                raise
            interrupts.report_once()
            raise typer.Exit(interrupts.EXIT_INTERRUPTED) from None


def typer_app(help: str, hoisted: tuple[str, ...] = ()) -> typer.Typer:
    """A typer app as the arena's commands want it: help on no arguments, plain text, no shell
    completion installer, and plain tracebacks (a bug report shows the real one).  The app's own
    options named in ``hoisted`` may be given after the command too (:func:`hoist`)."""
    group: Any = type("ArenaGroup", (_HoistingGroup,), {"hoisted": hoisted})
    return typer.Typer(
        cls=group,
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
