"""The ``arena`` command (:mod:`arena.cli.main`) and its terminal rendering
of replayed games (:mod:`arena.cli.show`).

The script's entry point, :func:`main`, lives here rather than in
:mod:`arena.cli.main` so that it runs before the command's imports (typer,
numpy, pandas, numba), and ``app`` is imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    """Run the ``arena`` command; a Ctrl-C while it starts is one line and exit 130
    (:mod:`arena.cli.interrupts`)."""
    import sys

    from arena.cli import interrupts

    interrupts.install()
    try:
        from arena.cli.main import app as arena_app

        arena_app()
    except SystemExit as exc:
        if exc.code == interrupts.EXIT_INTERRUPTED and interrupts.signalled():
            interrupts.report_once()
        raise
    except BaseException as exc:
        if not interrupts.caused(exc):
            raise
        interrupts.report()
        sys.exit(interrupts.EXIT_INTERRUPTED)
    finally:
        # The command has ended and said so: a Ctrl-C while Python shuts down (half a second after a run,
        # exit functions and tearing down numba's modules) printed a traceback from an exit function, or,
        # once Python let go of its handlers, killed the process with no line and no exit code of its own.
        interrupts.ignore()


def __getattr__(name: str) -> Any:
    if name == "app":
        from arena.cli.main import app

        return app
    raise AttributeError(f"module 'arena.cli' has no attribute {name!r}")
