"""Progress on stderr (arena.run.progress): a tqdm bar on a terminal, whole lines anywhere else."""

from __future__ import annotations

import io

import pytest

from arena.run.progress import LineProgress, progress_bar


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_at_each_tenth_crossed_and_a_last_one_at_close():
    out, clock = io.StringIO(), Clock()
    p = LineProgress("games", "game", 200, stream=out, clock=clock)
    for _ in range(10):  # 20 games a second: each chunk of 50 crosses two or three tenths, one line each time
        clock.now += 2.5
        p.update(50 if p.done < 200 else 0)
    p.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines == [
        "games: 50/200 games (25%), 2 s, 20/s, about 8 s left",
        "games: 100/200 games (50%), 5 s, 20/s, about 5 s left",
        "games: 150/200 games (75%), 8 s, 20/s, about 2 s left",
        "games: 200/200 games (100%), 10 s, 20/s",
    ]


def test_a_slow_count_gets_a_line_every_30_s_while_it_moves_and_none_while_it_stands():
    out, clock = io.StringIO(), Clock()
    p = LineProgress("games", "game", 10_000, done=1_000, stream=out, clock=clock)
    for _ in range(12):  # 10 s apart, 50 games each: no tenth crossed, a line every third update
        clock.now += 10
        p.update(50)
    for _ in range(6):  # stuck: nothing to say
        clock.now += 10
        p.update(0)
    lines = out.getvalue().splitlines()
    assert [ln.split(", ")[0] for ln in lines] == [
        "games: 1,150/10,000 games (12%)",
        "games: 1,300/10,000 games (13%)",
        "games: 1,450/10,000 games (14%)",
        "games: 1,600/10,000 games (16%)",
    ]
    assert lines[0] == "games: 1,150/10,000 games (12%), 30 s, 5.0/s, about 30 min left"  # resumed: rate of this run
    p.close()
    assert out.getvalue().splitlines() == lines  # close adds nothing: the last line showed the count


def test_counts_that_arrive_at_the_start_show_no_rate_until_a_second_has_passed():
    """Work finished before the line began arrives within microseconds: 4 games in 8 us is no rate."""
    out, clock = io.StringIO(), Clock()
    p = LineProgress("graded", "game", 5, stream=out, clock=clock)
    clock.now += 8e-6
    p.set(4)
    clock.now += 1.5
    p.set(5)
    assert out.getvalue().splitlines() == ["graded: 4/5 games (80%), 0 s", "graded: 5/5 games (100%), 2 s, 3.3/s"]


def test_an_unknown_total_gets_lines_by_time_only_and_the_count_at_close():
    out, clock = io.StringIO(), Clock()
    p = LineProgress("graded", "game", None, stream=out, clock=clock)
    for _ in range(7):
        clock.now += 5
        p.set(p.done + 1, None)
    p.close()
    assert out.getvalue().splitlines() == ["graded: 6 games, 30 s, 0.2/s", "graded: 7 games, 35 s, 0.2/s"]


def test_a_terminal_gets_the_tqdm_bar_and_anything_else_lines():
    tty, log = Terminal(), io.StringIO()
    for stream in (tty, log):
        p = progress_bar("report", "chunk", 4, stream=stream)
        for done in range(1, 5):
            p.set(done, 4)
        p.close()
    assert "\r" in tty.getvalue() and "4/4" in tty.getvalue()  # redrawn in place
    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines()[-1].startswith("report: 4/4 chunks (100%)")
    assert len(log.getvalue().splitlines()) == 4  # each quarter crosses a tenth


def _timeline(order, workers: int, warmup_s: float) -> list[tuple[float, int]]:
    """``(time, games)`` of each chunk's arrival when ``workers`` take the chunks of ``order`` in turn.

    A chunk costs its games times its matchup's seconds per game; each worker's first chunk also
    carries ``warmup_s`` (its process forked, the kernels loaded or compiled)."""
    free = [0.0] * workers
    done = []
    for c in order:
        w = min(range(workers), key=lambda i: free[i])
        start = free[w] + (warmup_s if free[w] == 0.0 else 0.0)
        free[w] = start + c.games * c.cost
        done.append((free[w], c.games))
    return sorted(done)


def _estimates(arrivals, total: int, workers: int | None) -> list[tuple[int, float, float]]:
    """``(percent, estimated seconds left, true seconds left)`` of each line that tells the time left."""
    out, clock = io.StringIO(), Clock()
    p = LineProgress("games", "game", total, stream=out, clock=clock)
    if workers is not None:
        p.warm_up(workers)
    t0, end = clock.now, arrivals[-1][0]
    rows, seen = [], 0
    for t, n in arrivals:
        clock.now = t0 + t
        p.update(n)
        lines = out.getvalue().splitlines()
        for line in lines[seen:]:
            if " left" in line:
                left = line.split("about ")[1].removesuffix(" left").split()
                secs = float(left[0]) * {"s": 1, "min": 60, "h": 3600}[left[1]]
                rows.append((int(line.split("(")[1].split("%")[0]), secs, end - t))
        seen = len(lines)
    return rows


@pytest.mark.parametrize("warmup_s,how", [(1.0, "hopeful"), (15.0, "gloomy")])
def test_the_time_left_holds_on_a_round_robin_with_uneven_matchups_and_a_slow_start(warmup_s, how):
    """A synthetic run shaped like the default round robin: 15 matchups of 10 chunks of 4,000
    games, each matchup at its measured cost per game (7 us for random vs simple to 159 us for
    gin-chasing vs discard-tracking: games against the weak bot end in a few hands), 2 workers
    whose first chunk carries a start-up (short with a warm cache, long when the kernels compile).  Played matchup by
    matchup and timed from the start, the line at 10% is far off: too hopeful (the fast
    matchups come first) or too gloomy (the start-up counted as play).  In the runner's play
    order (the matchups in turn), measured after the warm-up, every estimate shown is within a
    third of the truth, from the first tenth on."""
    from types import SimpleNamespace

    from arena.run.plan import play_order

    us_per_game = [7, 13, 44, 35, 17, 35, 83, 100, 35, 113, 122, 60, 159, 122, 123]  # configs/default.toml's order
    chunks = [
        SimpleNamespace(matchup_no=m, chunk=c, games=4000, cost=us * 1e-6)
        for m, us in enumerate(us_per_game)
        for c in range(10)
    ]
    total = sum(c.games for c in chunks)

    old = _estimates(_timeline(chunks, 2, warmup_s), total, None)
    pct, est, true = next(r for r in old if r[0] >= 10)
    assert (est < 0.6 * true) if how == "hopeful" else (est > 1.5 * true), old

    new = _estimates(_timeline(play_order(chunks), 2, warmup_s), total, 2)
    assert set(range(10, 100, 10)) <= {r[0] for r in new}, new  # every tenth's line tells the time left
    for pct, est, true in new:
        assert abs(est - true) <= max(2.0, true / 3), (pct, est, true, new)


SLOW_BOT = '''
"""Random legal play, 2 ms a decision: a chunk of it takes seconds, like a kit player's takes minutes."""
import time

from arena.botkit.lib import discardable, random_card

PARAMS = {}
MEMORY = 1


def _wait():
    time.sleep(0.002)


def take_upcard(view, params, memory, rng):
    _wait()
    return 0


def draw(view, params, memory, rng):
    _wait()
    return 0


def big_gin(view, params, memory, rng):
    return 1


def discard(view, params, memory, rng):
    _wait()
    return random_card(discardable(view), rng)


def knock(view, params, memory, rng):
    _wait()
    return 1
'''


def test_a_chunk_still_being_played_shows_its_games_on_the_progress_line(tmp_path, capsys):
    """A chunk is stored whole when it ends; a slow bot's chunk may take minutes (a kit player's
    2,000 games took 25), and the line stood still at the last stored chunk. Local workers share
    their game count, so the line moves while the chunk plays (the store still gets it whole)."""
    from arena.run import run_tournament
    from arena.settings.config import TournamentConfig

    (tmp_path / "slow.py").write_text(SLOW_BOT)
    cfg = TournamentConfig(
        name="p",
        bots=(str(tmp_path / "slow.py"), "simple"),
        games_per_pair=20,
        chunk_size=20,  # one chunk: before, no line until it was stored
        seed=3,
        workers=1,
        results_dir=str(tmp_path / "results"),
    )
    assert run_tournament(cfg, progress=True).status == "complete"
    counts = [int(line.split("games: ")[1].split("/")[0]) for line in capsys.readouterr().err.splitlines()
              if line.startswith("games: ")]  # fmt: skip
    assert counts and counts[-1] == 20
    assert any(0 < c < 20 for c in counts), counts  # a line while the one chunk was being played
    assert counts == sorted(counts)


def test_a_run_with_a_slow_bot_and_large_chunks_is_told_that_smaller_ones_save_more_often(tmp_path, caplog):
    from arena.run import run_tournament
    from arena.settings.config import TournamentConfig

    (tmp_path / "slow.py").write_text(SLOW_BOT)

    def run(bots, name):
        cfg = TournamentConfig(
            name=name, bots=bots, games_per_pair=2, chunk_size=400, seed=3, workers=1,
            results_dir=str(tmp_path / "results"),
        )  # fmt: skip
        caplog.clear()
        with caplog.at_level("INFO", logger="arena.run"):
            assert run_tournament(cfg, progress=False).status == "complete"
        return [r.getMessage() for r in caplog.records if "stored whole" in r.getMessage()]

    hint = run((str(tmp_path / "slow.py"), "simple"), "slow")
    assert len(hint) == 1 and "chunk_size = 400" in hint[0]
    assert run(("random", "simple"), "fast") == []  # compiled bots' chunks take a second


def test_a_stored_chunk_never_moves_the_line_back_below_the_games_shown_in_flight():
    """Two 40-game chunks under way, 35 and 30 games in: 65 shown. The first is stored (40 games):
    the line must not drop to 40 before the next count of the one still being played."""
    from types import SimpleNamespace

    from arena.run.runner import _Bar

    bar = _Bar(80, 0, False)
    shown: list[int] = []
    bar.bar = SimpleNamespace(set=lambda done, total=None: shown.append(done), close=lambda: None)
    bar.in_flight(65)
    bar.update(40)
    bar.in_flight(32)  # the second chunk, now 32 games in
    bar.update(40)
    assert shown == [65, 65, 72, 80]


def test_dask_progress_events_count_only_this_runs_tasks_in_flight_and_never_go_back():
    """Workers tell a chunk's games as events through the scheduler, which any client of the cluster
    can send: another run's, a finished task's or a malformed event must not move this run's line."""
    from types import SimpleNamespace

    from arena.run.schedule import DaskCluster

    d = DaskCluster(SimpleNamespace(nthreads=lambda: {"tcp://w": 1}))
    d._told["chunk-a"] = 0  # this run's task in flight
    d._hear((1.0, [d.token, "chunk-a", 7]))
    d._hear((1.0, ["another-run", "chunk-a", 50]))
    d._hear((1.0, [d.token, "chunk-gone", 9]))  # not (or no longer) in flight
    d._hear((1.0, [d.token, "chunk-a", "many"]))
    d._hear((1.0, [d.token, "chunk-a"]))
    d._hear((1.0, "junk"))
    d._hear("junk")
    d._hear((1.0, [d.token, "chunk-a", 3]))  # late, and fewer: the line never goes back
    assert d._games_in_flight() == 7
    assert set(d._told) == {"chunk-a"}
