"""A run summarised as its chunks arrive: no chunk is read again after ``arena run``, and the tally
equals one pass over the folder, after a resume and after a chunk that failed the end-of-run check.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from arena.analysis.report import write_report
from arena.analysis.tally import Tally, tally_of
from arena.cli.main import app
from arena.run import run_tournament
from arena.run.schedule import Inline
from arena.run.store import RunStore
from arena.settings.config import TournamentConfig

# Read opens of chunk files while ``_READS["on"]``: an audit hook sees every open(), however the store
# reaches its files.  It stays installed for the life of the process, idle unless switched on.
_READS: dict = {"on": False, "paths": []}


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _READS["on"]:
        return
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    if isinstance(path, str) and path.endswith(".parquet") and (not isinstance(mode, str) or "r" in mode):
        _READS["paths"].append(path)


sys.addaudithook(_audit)


def cfg(tmp_path: Path, name: str, **kw) -> TournamentConfig:
    base = dict(
        name=name,
        bots=("random", "simple", "early-knock"),
        games_per_pair=60,
        chunk_size=20,
        seed=5,
        workers=1,
        record_hands=True,
        results_dir=str(tmp_path / "results"),
    )
    base.update(kw)
    return TournamentConfig(**base)


def assert_same(a: Tally, b: Tally) -> None:
    """Two tallies hold the same sums, bit for bit: summaries, histograms, running moments, control variate."""
    va, vb = a.summary.view(), b.summary.view()
    assert va[:2] == vb[:2]
    assert np.array_equal(va[2], vb[2]) and np.array_equal(va[3], vb[3]) and np.array_equal(va[4], vb[4])
    assert a.summary.errors == b.summary.errors and a.summary.has_hands == b.summary.has_hands
    for bot in a.summary.bots:
        assert a.summary.hists[bot].keys() == b.summary.hists[bot].keys()
        for kind, h in a.summary.hists[bot].items():
            assert (h.lo, h.counts.tolist()) == (
                b.summary.hists[bot][kind].lo,
                b.summary.hists[bot][kind].counts.tolist(),
            )
    for m in a.summary.matchups:
        assert np.array_equal(a.summary.running(m), b.summary.running(m)), m
    assert a.cv.keys() == b.cv.keys()
    for m, x in a.cv.items():
        y = b.cv[m]
        for f in ("n", "sy", "syy", "sz", "szz", "szy"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), (m, f)
        assert x.games == y.games


def test_arena_run_reads_each_chunk_once_for_its_check_and_its_report_equals_one_from_the_folder(tmp_path):
    """Before, the tables after a run, the report and its control variate each read every chunk
    again (four reads of each file with the end-of-run check); now only the check reads them."""
    conf = tmp_path / "t.toml"
    conf.write_text(
        'name = "cli"\nbots = ["random", "simple", "early-knock"]\ngames_per_pair = 60\nchunk_size = 20\n'
        f'seed = 5\nworkers = 1\nrecord_hands = true\nresults_dir = "{tmp_path / "results"}"\n'
    )
    _READS.update(on=True, paths=[])
    try:
        out = CliRunner().invoke(app, ["run", str(conf), "--quiet"], catch_exceptions=False)
    finally:
        _READS["on"] = False
    assert out.exit_code == 0, out.output
    run = tmp_path / "results" / "cli"
    files = sorted(str(p) for p in run.glob("*/*/*.parquet"))
    assert len(files) == 3 * 3 * 3  # games, hands and actions of 3 chunks of 3 matchups
    reads = {f: _READS["paths"].count(f) for f in files}
    assert reads == dict.fromkeys(files, 1), reads  # the checksum pass at the end of the run, and nothing else
    assert "random vs simple" in out.output  # the tables were printed

    live = {p.name: p.read_bytes() for p in run.glob("*.csv")} | {"report.md": (run / "report.md").read_bytes()}
    write_report(run)  # the same report from one pass over the folder
    again = {p.name: p.read_bytes() for p in run.glob("*.csv")} | {"report.md": (run / "report.md").read_bytes()}
    assert live == again
    assert b"adjusted" in live["report.md"]  # the control variate's table is in it


class _StopAfter(Tally):
    """A tally that interrupts the run (as Ctrl-C would) after ``n`` chunks."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def add(self, matchup_id, chunk) -> None:
        super().add(matchup_id, chunk)
        if len(self.chunks) == self.n:
            raise KeyboardInterrupt


def test_a_resumed_run_gives_the_same_tally_as_a_fresh_one(tmp_path):
    fresh = Tally()  # fed in play order (the matchups in turn); the pass below reads in store order
    run_tournament(cfg(tmp_path, "fresh"), progress=False, schedule=Inline(), sink=fresh)
    assert fresh.covers(RunStore(tmp_path / "results" / "fresh"))

    first = _StopAfter(4)
    try:
        run_tournament(cfg(tmp_path, "resumed"), progress=False, schedule=Inline(), sink=first)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the run was not interrupted")
    second = Tally()
    res = run_tournament(cfg(tmp_path, "resumed"), progress=False, schedule=Inline(), sink=second)
    assert res.status == "complete" and len(second.chunks) == 9 - 4  # only what the first run left
    assert not second.covers(res.store)
    whole, read = tally_of(res.store, second)
    assert read
    assert_same(whole, fresh)


class _Spoiler(Tally):
    """A tally whose second chunk spoils the first chunk's stored games file (a disk going bad)."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__()
        self.run_dir = run_dir

    def add(self, matchup_id, chunk) -> None:
        super().add(matchup_id, chunk)
        if len(self.chunks) == 2:
            path = next((self.run_dir / "games").glob("*/00000.parquet"))
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0xFF
            path.write_bytes(bytes(data))


def test_a_chunk_that_fails_the_end_of_run_check_is_not_counted(tmp_path):
    c = cfg(tmp_path, "spoilt")
    spoiler = _Spoiler(Path(c.results_dir) / c.name)
    res = run_tournament(c, progress=False, schedule=Inline(), sink=spoiler)
    assert res.status == "failed" and len(res.changed) == 1
    assert spoiler.summary.n_games == 9 * 20  # it saw every chunk as it arrived
    whole, read = tally_of(res.store, spoiler)
    assert read and whole.summary.n_games == 8 * 20 == res.store.n_games()
    assert_same(whole, Tally.of_store(RunStore(res.run_dir)))
