"""Plot the engine benchmark history: one JSON per release in this folder.

Each ``<version>.json`` is written by ``python scripts/bench_engine.py --json
docs/bench/<version>.json`` (see docs/bench/README.md).  The plot has two
panels, Simple-vs-Simple hands/s (games only, and with hand records) and the
cold start, one point per release in version order, so a regression shows as
a step down (or up) in a line.  Run::

    python docs/bench/plot.py [--out docs/bench/history.png]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REQUIRED = ("schema", "date", "command", "machine", "runs", "summary")


class HistoryError(ValueError):
    """A benchmark file that is not what scripts/bench_engine.py writes; the message names it."""


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a release number like ``0.10.2`` (numeric, not text, order)."""
    parts = re.findall(r"\d+", version)
    if not parts:
        raise HistoryError(f"'{version}' is not a release number")
    return tuple(int(p) for p in parts)


def load_history(folder: Path = HERE) -> list[tuple[str, dict[str, Any]]]:
    """(version, record) for every ``<version>.json`` in ``folder``, oldest release first."""
    history = []
    for path in folder.glob("*.json"):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HistoryError(f"{path}: not readable JSON: {exc}") from None
        missing = [k for k in REQUIRED if k not in record] if isinstance(record, dict) else list(REQUIRED)
        if missing:
            raise HistoryError(f"{path}: not a bench_engine.py --json file (missing {', '.join(missing)})")
        if "games_only_median_hands_per_s" not in record["summary"].get("this", {}):
            raise HistoryError(f"{path}: its summary has no games-only median for 'this' checkout")
        version_key(path.stem)
        history.append((path.stem, record))
    return sorted(history, key=lambda item: version_key(item[0]))


def plot_history(history: list[tuple[str, dict[str, Any]]], out: Path) -> Path:
    """Draw hands/s and the cold start per release into the PNG ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not history:
        raise HistoryError("no benchmark files to plot")
    versions = [v for v, _ in history]
    x = list(range(len(versions)))
    this = [r["summary"]["this"] for _, r in history]
    fig, (ax_speed, ax_cold) = plt.subplots(1, 2, figsize=(10, 4))
    games_only = [s["games_only_median_hands_per_s"] / 1000 for s in this]
    ax_speed.plot(x, games_only, "o-", label="games only")
    if all("with_hand_records_median_hands_per_s" in s for s in this):
        records = [s["with_hand_records_median_hands_per_s"] / 1000 for s in this]
        ax_speed.plot(x, records, "s--", label="with hand records")
    if all("games_only_median_hands_per_cpu_s" in s for s in this):
        # A busy shared machine makes the process wait for a core: per CPU second shows the engine.
        per_cpu = [s["games_only_median_hands_per_cpu_s"] / 1000 for s in this]
        ax_speed.plot(x, per_cpu, "^:", label="games only, per CPU second")
    ax_speed.axhline(200, color="grey", lw=0.8, ls=":", label="target 200k")
    ax_speed.set_ylabel("thousand hands/s (median, one core)")
    ax_speed.set_title("Simple vs Simple")
    ax_speed.set_ylim(bottom=0)
    ax_speed.legend(loc="center right", fontsize=8)
    if all("cold_start_median_s" in s for s in this):
        ax_cold.plot(x, [s["cold_start_median_s"] for s in this], "o-", label="wall")
        ax_cold.plot(x, [s["cold_start_median_cpu_s"] for s in this], "s--", label="CPU")
    ax_cold.axhline(15, color="grey", lw=0.8, ls=":", label="target 15 s")
    ax_cold.set_ylabel("s, process start to first game, empty cache")
    ax_cold.set_title("Cold start")
    ax_cold.set_ylim(bottom=0)
    ax_cold.legend(loc="lower right", fontsize=8)
    for ax in (ax_speed, ax_cold):
        ax.set_xticks(x, versions)
        ax.set_xlabel("release")
        ax.grid(alpha=0.3)
    machines = sorted({r["machine"]["cpu"] for _, r in history})
    fig.suptitle("Engine benchmark history (" + "; ".join(machines) + ")", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--folder", type=Path, default=HERE, help="where the <version>.json files are")
    ap.add_argument("--out", type=Path, default=HERE / "history.png")
    args = ap.parse_args(argv)
    try:
        print(f"wrote {plot_history(load_history(args.folder), args.out)}")
    except HistoryError as exc:
        raise SystemExit(f"plot.py: {exc}") from None


if __name__ == "__main__":
    main()
