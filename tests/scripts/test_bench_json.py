"""The engine benchmark's JSON (scripts/bench_engine.py --json) and its history in docs/bench/."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

from tests.file_module import load_file

ROOT = Path(__file__).resolve().parents[2]

bench = load_file("bench_engine_under_test", ROOT / "scripts" / "bench_engine.py")
plot = load_file("bench_plot_under_test", ROOT / "docs" / "bench" / "plot.py")


def _run(checkout: str, record: bool, rate: float) -> dict:
    return {
        "checkout": checkout,
        "record_hands": record,
        "hands_per_s": rate,
        "hands": 100,
        "seconds": 100 / rate,
        "cpu_seconds": 50 / rate,
    }


def test_machine_info_names_the_cpu_cores_and_versions():
    info = bench.machine_info()
    assert info["cpu"] and info["cpu"] != "unknown"
    assert info["logical_cores"] >= 1 and 1 <= info["usable_cores"] <= info["logical_cores"]
    import numba

    assert info["numba"] == numba.__version__
    assert info["python"] == ".".join(map(str, sys.version_info[:3]))


def test_summary_takes_medians_per_checkout_and_the_ratio():
    runs = [_run("this", False, r) for r in (300.0, 100.0, 200.0)]
    runs += [_run("compare", False, r) for r in (50.0, 150.0, 100.0)]
    runs += [_run("this", True, 90.0), _run("compare", True, 60.0)]
    cold = [{"checkout": "this", "wall_s": 9.0, "cpu_s": 8.0}, {"checkout": "compare", "wall_s": 20.0, "cpu_s": 19.0}]
    s = bench.summarize(runs, cold)
    assert s["this"]["games_only_median_hands_per_s"] == 200.0
    assert s["this"]["games_only_median_hands_per_cpu_s"] == pytest.approx(400.0)
    assert s["compare"]["games_only_median_hands_per_s"] == 100.0
    assert s["this"]["with_hand_records_median_hands_per_s"] == 90.0
    assert s["ratio_this_to_compare"]["games_only_median_hands_per_s"] == pytest.approx(2.0)
    assert s["ratio_this_to_compare"]["cold_start_median_s"] == pytest.approx(0.45)


def test_summary_without_a_comparison_has_no_ratio():
    s = bench.summarize([_run("this", False, 10.0)], [])
    assert s == {"this": {"games_only_median_hands_per_s": 10.0, "games_only_median_hands_per_cpu_s": 20.0}}


def test_bench_rejects_a_folder_that_is_not_a_checkout(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--compare", str(tmp_path), "--no-kernels"])
    assert "not a Gin Arena checkout" in capsys.readouterr().err


def test_every_history_file_is_a_bench_json_whose_summary_matches_its_runs():
    history = plot.load_history(ROOT / "docs" / "bench")
    assert history, "docs/bench/ holds no <version>.json"
    import arena

    assert arena.__version__ in [v for v, _ in history]
    for version, record in history:
        assert record["schema"] == bench.SCHEMA
        assert record["checkouts"]["this"]["version"] == version
        assert record["machine"]["cpu"] and record["machine"]["numba"]
        for name, entry in record["summary"].items():
            if name.startswith("ratio"):
                continue
            rates = [r["hands_per_s"] for r in record["runs"] if r["checkout"] == name and not r["record_hands"]]
            assert entry["games_only_median_hands_per_s"] == pytest.approx(statistics.median(rates))
            for r in record["runs"]:
                assert r["hands_per_s"] == pytest.approx(r["hands"] / r["seconds"])


def test_history_is_in_release_order_not_text_order(tmp_path):
    base = json.loads(json.dumps(plot.load_history(ROOT / "docs" / "bench")[0][1]))
    for version in ("0.10.0", "0.9.1", "0.2.0"):
        (tmp_path / f"{version}.json").write_text(json.dumps(base))
    assert [v for v, _ in plot.load_history(tmp_path)] == ["0.2.0", "0.9.1", "0.10.0"]


def test_a_file_that_is_not_a_bench_json_is_named(tmp_path):
    (tmp_path / "0.3.0.json").write_text(json.dumps({"schema": 1, "runs": []}))
    with pytest.raises(plot.HistoryError, match=r"0\.3\.0\.json: not a bench_engine.py --json file"):
        plot.load_history(tmp_path)


def test_plot_writes_a_png(tmp_path):
    out = plot.plot_history(plot.load_history(ROOT / "docs" / "bench"), tmp_path / "h.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
