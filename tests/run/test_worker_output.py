"""What in-process bots print while a chunk plays goes to that chunk's log, however chunks share a process."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from arena.loading.load import load_bot
from arena.run.plan import BotSpec, plan_matchup
from arena.run.worker import LOG_LIMIT, play_chunk
from arena.settings.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
DISCARD_END = "    return card\n"


def _printing_bot(tmp_path: Path, word: str, times: int = 1):
    """The template bot, plain Python, printing ``word`` (``times`` over) at every discard."""
    text = (ROOT / "bots" / "TEMPLATE.py").read_text()
    assert text.count(DISCARD_END) == 1
    said = f"    print({word!r} * {times})\n    time.sleep(0.0005)\n"
    path = tmp_path / f"{word.lower()}.py"
    path.write_text("PLAIN = True\nimport time\n" + text.replace(DISCARD_END, said + DISCARD_END))
    return load_bot(str(path))


def _task(bot, games: int = 8):
    _, tasks = plan_matchup(
        BotSpec.of(bot),
        BotSpec.of(load_bot("simple")),
        matchup_no=0,
        rules=Rules(),
        seed=5,
        games=games,
        duplicate=True,
        chunk_size=games // 2,
        record_hands=False,
        per_game_seconds=10.0,
        chunk_floor_seconds=60.0,
    )
    return tasks[0]


def test_chunks_played_at_once_in_threads_keep_their_own_prints_and_leave_stdout_as_it_was(tmp_path):
    """A Dask worker plays a chunk in each of its threads.  Swapping the process's ``sys.stdout`` per chunk
    put one chunk's prints in another's log, and the swaps undone out of order left the worker's stdout
    writing into a finished chunk's buffer for good (growing with every later print)."""
    before = sys.stdout
    tasks = {word: _task(_printing_bot(tmp_path, word)) for word in ("ALPHA", "BETA")}
    results = {}

    def play(word: str) -> None:
        results[word] = play_chunk(tasks[word])

    for _ in range(3):
        threads = [threading.Thread(target=play, args=(w,)) for w in tasks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sys.stdout is before
        for word, other in (("ALPHA", "BETA"), ("BETA", "ALPHA")):
            (log,) = [text for name, text in results[word].logs.items() if name.endswith(".stdout")]
            assert word in log and other not in log, (word, log[:300])


def test_a_bot_printing_without_end_is_held_to_the_tail_of_its_chunk_log_while_it_plays(tmp_path):
    """The chunk's prints were kept whole until the chunk ended, and only then cut to ``LOG_LIMIT``: a bot
    printing a lot at every decision grew the worker's memory with the chunk's length."""
    from arena.run import worker

    held, written = [], []

    class Watched(worker._Tail):
        def write(self, text: str) -> int:
            n = super().write(text)
            held.append(self.size)
            written.append(len(text.encode()))
            return n

    worker_tail, worker._Tail = worker._Tail, Watched
    try:
        task = _task(_printing_bot(tmp_path, "NOISE", times=4000), games=4)
        (log,) = [t for n, t in play_chunk(task).logs.items() if n.endswith(".stdout")]
    finally:
        worker._Tail = worker_tail
    assert held and max(held) <= 2 * LOG_LIMIT + 4000 * 5 + 1
    assert log.endswith("NOISE\n") and LOG_LIMIT - 100 <= len(log) <= LOG_LIMIT + 200
    # The cut says so: a first line counting what went.
    header, said, kept = log.split("\n", 2)
    assert (
        header.startswith("--- ")
        and said == f"[arena] ... {sum(written) - len(kept)} earlier bytes of output dropped (log limit)"
    )
    assert set(kept) <= set("NOISE\n")  # (its lines are too long to be kept whole: the cut is mid-line)


def test_a_log_cut_to_its_tail_starts_at_a_line_and_counts_what_it_dropped_with_what_was_dropped_before():
    """A bot's stderr cut to the chunk's last ``LOG_LIMIT`` characters began mid-line, and the bot log's own
    first line saying it had dropped output was the first thing cut."""
    from arena.run.worker import log_tail

    text = "[arena] ... 500 earlier bytes of output dropped (log limit)\n" + "".join(
        f"line {i:04}\n" for i in range(1000)
    )
    cut = log_tail(text, 100)
    first, rest = cut.split("\n", 1)
    assert rest.startswith("line ") and text.endswith(rest) and len(rest) <= 100
    went = 500 + len(text) - len(rest) - text.index("line 0000")
    assert first == f"[arena] ... {went} earlier bytes of output dropped (log limit)"
    assert log_tail("short\n", 100) == "short\n"
    assert log_tail(text, 10**6) == text  # nothing cut: the bot log's line kept as it was
