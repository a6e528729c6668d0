"""Progress on stderr (arena.run.progress): a tqdm bar on a terminal, whole lines anywhere else."""

from __future__ import annotations

import io

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
