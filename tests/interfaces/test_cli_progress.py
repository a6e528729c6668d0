"""Long commands with stderr in a log (a pipe, not a terminal): progress as separate lines, never ``\\r``.

``arena run`` (its games, then its report) and ``arena analyze`` run here as child processes whose stderr is a
pipe, as under nohup, systemd or CI; each line must stand on its own (arena.run.progress).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def arena(*args: str) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "\r" not in out.stderr, repr(out.stderr[-500:])
    return out


def progress(stderr: str, desc: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"{desc}: ")]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, str]:
    """``arena run`` of 4 chunks and its report: the run folder and the run's stderr."""
    tmp = tmp_path_factory.mktemp("progress")
    conf = tmp / "p.toml"
    conf.write_text(
        'name = "p"\nbots = ["simple", "gin-chasing"]\ngames_per_pair = 16\nchunk_size = 4\nseed = 3\n'
        f'workers = 1\nresults_dir = "{tmp / "results"}"\n'
    )
    out = arena("run", str(conf))
    return tmp / "results" / "p", out.stderr


def test_run_shows_the_progress_of_its_games_and_its_report_as_lines_in_a_log(played):
    _, stderr = played
    lines = progress(stderr, "games")
    counts = [int(re.match(r"games: (\d+)/16 games \((\d+)%\)", ln).group(1)) for ln in lines]
    # A line at each tenth crossed: when 4-game chunks are stored, and when the games of a chunk
    # still being played carry the count across one (how many of those depends on the machine).
    assert {4, 8, 12} & set(counts) and counts[-1] == 16, stderr
    tenths = [10 * c // 16 for c in counts]
    assert tenths == sorted(set(tenths)), stderr  # each line a new tenth, never back
    # The report is written from what the run summarised as its chunks arrived: no pass over them to show.
    assert progress(stderr, "report") == [], stderr


def test_analyze_shows_progress_as_lines_in_a_log(played):
    out = arena("analyze", str(played[0]), "--games", "12", "--samples", "4")  # 3 tasks of 4 games
    lines = progress(out.stderr, "graded")
    assert [ln.split(", ")[0] for ln in lines] == [
        "graded: 4/12 games (33%)",
        "graded: 8/12 games (67%)",
        "graded: 12/12 games (100%)",
    ], out.stderr
    assert "decisions in 12 games graded" in out.stdout


def test_on_a_terminal_the_progress_is_a_bar_redrawn_in_place(played):
    """stderr a terminal (a pty of 100 columns): the tqdm bar, redrawn with \\r, and no line of the log form."""
    import fcntl
    import pty
    import struct
    import termios

    master, child_side = pty.openpty()
    fcntl.ioctl(child_side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "analyze", str(played[0]), "--games", "8", "--samples", "4"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=child_side,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    os.close(child_side)
    seen = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed its side
            break
        if not data:
            break
        seen += data
    os.close(master)
    assert proc.wait(timeout=600) == 0, seen[-2000:]
    text = seen.decode(errors="replace")
    assert "\r" in text and "8/8" in text and not progress(text.replace("\r", "\n"), "graded: 8/8 games")
