"""The viewer's JSON of a game's graded decisions (``arena analyze``), step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.analysis.decisions import game_decisions
from arena.run.store import RunStore, StoreError


def viewer_data(run_dir: str | Path, game_id: int) -> dict[str, Any] | None:
    """One game's grades for ``arena view``: per viewer step, and seat 0's equity curve (None: not analysed)."""
    try:
        found = game_decisions(run_dir, game_id)
        if found is None:
            return None
        table, rows = found
        info = RunStore(run_dir).analysis_info(table)
    except StoreError:
        return None
    doubtful, blunder = float(info["doubtful"]), float(info["blunder"])
    steps: dict[str, Any] = {}
    curve = []
    for r in rows.itertuples():
        loss = 1000 * float(r.loss)
        steps[str(int(r.view_step))] = {
            "bot": str(r.bot),
            "seat": int(r.seat),
            "kind": str(r.kind),
            "chosen": str(r.chosen_text),
            "best": str(r.best_text),
            "eq_chosen": round(float(r.eq_chosen), 4),
            "eq_best": round(float(r.eq_best), 4),
            "loss": round(loss, 1),
            "se": round(1000 * float(r.loss_se), 1),
            "mark": "blunder" if loss >= blunder else "doubtful" if loss >= doubtful else "",
        }
        eq0 = float(r.eq_chosen) if int(r.seat) == 0 else 1.0 - float(r.eq_chosen)
        curve.append([int(r.view_step), round(eq0, 4)])
    return {
        "table": table,
        "hindsight": bool(info.get("perfect")),
        "samples": int(info["samples"]),
        "doubtful": doubtful,
        "blunder": blunder,
        "steps": steps,
        "curve": curve,
    }
