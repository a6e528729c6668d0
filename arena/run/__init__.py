"""Running tournaments: plan, worker, schedule, store, and the runner that joins them.

* :mod:`arena.run.plan`     - matchups to chunks, seeds, ids; bots as content;
* :mod:`arena.run.worker`   - a chunk task in, its tables out (touches no files);
* :mod:`arena.run.schema`   - the stored columns; :mod:`arena.run.tables` - frames to tables of that schema;
* :mod:`arena.run.schedule` - inline, local processes (with a watchdog), Dask;
* :mod:`arena.run.store`    - the run folder (a package of its jobs; :class:`~arena.run.store.RunStore`);
* :mod:`arena.run.replay`   - a stored game made ready to replay exactly, and its check;
* :mod:`arena.run.runner`   - :func:`run_tournament`, which joins them.

The runner's names are loaded on first use, so reading a run folder
(``arena.run.store``, as reports do) does not import the engine.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TournamentError", "TournamentResult", "run_tournament"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from arena.run import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'arena.run' has no attribute {name!r}")
