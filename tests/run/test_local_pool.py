"""The local process pool takes its tasks as workers free up."""

from __future__ import annotations

from arena.run import schedule


def test_the_pool_takes_tasks_as_workers_free_up_not_all_before_it_starts():
    """An analysis pass's tasks carry their games and action logs; the pool made a list of them all
    before the first ran, so ``arena luck --workers 2`` held about 0.75 KB per game of the run (747 MB
    for 600,000 games, against 321 MB now)."""
    taken: list[int] = []

    def tasks():
        for i in range(40):
            taken.append(i)
            yield i

    pool = schedule.executor_for(abs, workers=2)
    assert isinstance(pool, schedule.LocalProcesses)
    done = []
    for value in pool.results(tasks()):
        done.append(value)
        assert len(taken) <= len(done) + 2, (len(taken), len(done))  # one in hand per worker, no more
    assert sorted(done) == list(range(40))
