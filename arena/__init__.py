"""Gin Arena: an exact, fast Gin Rummy engine, pluggable bots and tournaments.

The notebook-facing API is re-exported here lazily, so ``import arena.engine.cards``
stays light::

    import arena
    result = arena.run_tournament(arena.load_config("configs/default.toml"))
    result.games.head()
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "run_tournament": ("arena.run.runner", "run_tournament"),
    "RunStore": ("arena.run.store", "RunStore"),
    "load_config": ("arena.settings.config", "load_config"),
    "TournamentConfig": ("arena.settings.config", "TournamentConfig"),
    "load_bot": ("arena.botkit.bot", "load_bot"),
    "load_rules": ("arena.settings.rules", "load_rules"),
    "Rules": ("arena.settings.rules", "Rules"),
    "play_batch": ("arena.engine.play", "play_batch"),
    "run_sweep": ("arena.analysis.sweep", "run_sweep"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'arena' has no attribute {name!r}")
