"""Running tournaments: plan, worker, schedule, store, and the runner that joins them.

* :mod:`arena.run.plan`     - matchups to chunks, seeds, ids; bots as content;
* :mod:`arena.run.worker`   - a chunk task in, its tables out (touches no files);
* :mod:`arena.run.schedule` - inline, local processes (with a watchdog), Dask;
* :mod:`arena.run.store`    - the run folder: chunk files, index, checksums, lock, manifest;
* :mod:`arena.run.runner`   - :func:`run_tournament`, which joins them.
"""

from arena.run.runner import TournamentError, TournamentResult, run_tournament

__all__ = ["TournamentError", "TournamentResult", "run_tournament"]
