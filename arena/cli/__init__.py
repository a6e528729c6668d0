"""The ``arena`` command (:mod:`arena.cli.main`) and its terminal rendering
of replayed games (:mod:`arena.cli.show`)."""

from arena.cli.main import app

__all__ = ["app"]
