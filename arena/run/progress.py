"""Progress of a long command on stderr: a bar on a terminal, whole lines in a log.

A tqdm bar redraws itself with ``\\r``; written to a file (``arena run ... 2> run.log``, a CI log, a
service's journal) it is one endless line.  :func:`progress_bar` gives the tqdm bar only when the stream
is a terminal; anywhere else a :class:`LineProgress`, which writes a whole line each time the count
crosses another tenth of the total, at least every :data:`EVERY` seconds while it moves (an unknown
total: only those), and a last line when it closes.  ``arena run``, ``arena report`` and ``arena
analyze`` show their progress through it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

#: Seconds between two lines of a :class:`LineProgress` whose count moves but crosses no tenth.
EVERY = 30.0
#: A :class:`LineProgress` writes a line each time the count crosses another multiple of this share.
SHARE = 0.1
#: A rate needs this many seconds behind it: counts that arrive together within a few milliseconds
#: of the start (work done before the line began) gave rates like "490,016/s".
RATE_AFTER = 1.0


class Progress(Protocol):
    """What the commands call: add ``n`` done, set the count (and the total, once known), close."""

    def update(self, n: int = 1) -> None: ...

    def set(self, done: int, total: int | None = None) -> None: ...

    def close(self) -> None: ...


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def progress_bar(
    desc: str, unit: str, total: int | None = None, done: int = 0, *, stream: TextIO | None = None, **bar: Any
) -> Progress:
    """A tqdm bar (``bar``: more tqdm settings) when ``stream`` (default stderr) is a terminal, else a
    :class:`LineProgress`.  ``total`` None or 0: not known yet."""
    out = stream if stream is not None else sys.stderr
    if is_terminal(out):
        return _TqdmProgress(desc, unit, total, done, out, bar)
    return LineProgress(desc, unit, total, done, stream=out)


class _TqdmProgress:
    def __init__(self, desc: str, unit: str, total: int | None, done: int, stream: TextIO, bar: dict[str, Any]):
        from tqdm import tqdm

        kw = {"dynamic_ncols": True, **bar}
        self.bar = tqdm(total=total or None, initial=done, unit=unit, desc=desc, file=stream, **kw)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def set(self, done: int, total: int | None = None) -> None:
        if total and total != self.bar.total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()


class LineProgress:
    """Progress as whole lines: ``games: 1,200/4,800 (25%), 40 s, 30/s, about 2 min left``.

    A line when the count crosses another ``share`` of the total, or when ``every`` seconds have passed
    since the last line and the count moved; on :meth:`close`, the count if no line showed it yet.
    ``clock``: seconds (tests pass their own).

    The time left is the count left over the rate.  Work done by several workers at once starts
    slow: each worker's first piece carries its start-up (a process forked, code compiled), and
    they all arrive together.  After :meth:`warm_up` (``workers``), the rate that the time left
    is estimated from is the rate since the ``workers``-th count arrived, when every worker
    has begun its second piece; until then no time left is shown.
    """

    def __init__(
        self,
        desc: str,
        unit: str,
        total: int | None = None,
        done: int = 0,
        *,
        stream: TextIO | None = None,
        every: float = EVERY,
        share: float = SHARE,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.desc, self.unit, self.total, self.done = desc, unit, total or None, done
        self.stream = stream if stream is not None else sys.stderr
        self.every, self.share, self.clock = every, share, clock
        self.start = self.last = clock()
        self.first, self.shown = done, done
        self.step = self._step(done)
        self.closed = False
        self.warmup = 0  # counts that end the warm-up (0: none; the rate is measured from the start)
        self.arrivals = 0  # times the count moved
        self.since: tuple[float, int] | None = None  # (time, count) when the warm-up ended

    def warm_up(self, workers: int) -> None:
        """The first ``workers`` counts carry the start-up: estimate the time left from the rate after them."""
        self.warmup = max(0, workers)

    def _step(self, done: int) -> int:
        return int(done / self.total / self.share + 1e-9) if self.total else 0

    def update(self, n: int = 1) -> None:
        self.set(self.done + n)

    def set(self, done: int, total: int | None = None) -> None:
        if total:
            self.total = total
        now = self.clock()
        if done != self.done:
            self.arrivals += 1
            if self.arrivals == self.warmup:
                self.since = (now, done)
        self.done = done
        step = self._step(done)
        if step > self.step or (done != self.shown and now - self.last >= self.every):
            self.step = max(step, self.step)
            self._line(now)

    def _line(self, now: float) -> None:
        seconds = now - self.start
        text = f"{self.desc}: {self.done:,}"
        if self.total:
            text += f"/{self.total:,} {self.unit}s ({100 * self.done / self.total:.0f}%)"
        else:
            text += f" {self.unit}s"
        text += f", {_duration(seconds)}"
        rate = (self.done - self.first) / seconds if seconds >= RATE_AFTER else 0.0
        if rate > 0:
            text += f", {rate:,.1f}/s" if rate < 10 else f", {rate:,.0f}/s"
            left = self._left(now, rate)
            if left is not None:
                text += f", about {_duration(left)} left"
        print(text, file=self.stream, flush=True)
        self.last, self.shown = now, self.done

    def _left(self, now: float, rate: float) -> float | None:
        """Seconds left, or None when there is nothing left or no rate to tell it by yet."""
        if not self.total or self.done >= self.total:
            return None
        if self.warmup:
            if self.since is None or now <= self.since[0] or self.done <= self.since[1]:
                return None  # still warming up
            rate = (self.done - self.since[1]) / (now - self.since[0])
        return (self.total - self.done) / rate

    def close(self) -> None:
        if not self.closed and self.done != self.shown:
            self._line(self.clock())
        self.closed = True


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
