"""Gin Arena: an exact, fast Gin Rummy engine, pluggable bots and tournaments.

The notebook-facing API is re-exported here lazily, so ``import arena.engine.cards``
stays light::

    import arena
    run = arena.run_tournament(arena.load_config("configs/quick.toml"))
    res = arena.results(run)
    res.leaderboard()            # a DataFrame, best first
    res.figure("heatmap")        # a matplotlib Figure
    run.games.head()             # every stored game, one row each

Every name of :data:`__all__` resolves (``tests/test_public_api.py`` imports each).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: Public name -> (module, attribute): imported on first use.
_LAZY = {
    "load_config": ("arena.settings.config", "load_config"),
    "TournamentConfig": ("arena.settings.config", "TournamentConfig"),
    "load_rules": ("arena.settings.rules", "load_rules"),
    "Rules": ("arena.settings.rules", "Rules"),
    "load_bot": ("arena.loading.load", "load_bot"),
    "load_bots": ("arena.loading.load", "load_bots"),
    "play_batch": ("arena.engine.play", "play_batch"),
    "run_tournament": ("arena.run.runner", "run_tournament"),
    "RunStore": ("arena.run.store", "RunStore"),
    "results": ("arena.analysis.notebook", "results"),
    "Results": ("arena.analysis.notebook", "Results"),
    "run_sweep": ("arena.analysis.sweep", "run_sweep"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # found once; later lookups skip this function
        return value
    raise AttributeError(f"module 'arena' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
