"""The run store reads Parquet on the calling thread: Arrow's thread pool could abort a command at exit."""

from __future__ import annotations

import pyarrow.parquet as pq
from typer.testing import CliRunner

from arena.cli.main import app
from tests.run.test_replay_store import _run


def test_fsck_report_and_a_game_lookup_read_parquet_without_arrow_s_thread_pool(tmp_path, monkeypatch):
    """A threaded ``pq.read_table`` or ``to_pandas`` starts Arrow's CPU thread pool, whose threads could
    end the process with "terminate called without an active exception" (exit 134) as Python exited,
    after a command had done its work: ``arena fsck`` did about one run in 20 on a 20,000-game folder
    (apache/arrow#34314).  Every Parquet read of the store is asked to stay on the calling thread (and
    so is its conversion to pandas, :func:`arena.run.store.chunks.frame`, which a test cannot intercept:
    a C type's method)."""
    run = _run(tmp_path, games=40)
    threaded: list[str] = []
    read_table = pq.read_table

    seen: list[bool] = []

    def reading(*args, **kw):
        seen.append(kw.get("use_threads", True))
        if kw.get("use_threads", True):
            threaded.append("read_table")
        return read_table(*args, **kw)

    monkeypatch.setattr(pq, "read_table", reading)
    for args in (["fsck", str(run)], ["report", str(run)], ["replay", str(run), "--game", "7"]):
        out = CliRunner().invoke(app, args, catch_exceptions=False)
        assert out.exit_code == 0, out.output
    assert threaded == []
    assert len(seen) >= 3  # the commands did read chunks through it
