"""The recorded game ``arena view`` shows: every step, replayed exactly and checked against the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.analysis.decisions import viewer_data
from arena.web.table import game_steps


def recorded_game(run_dir: str | Path, game_id: int) -> dict[str, Any]:
    """A stored game as the viewer's JSON: names, steps, and whether the replay matches the stored rows."""
    from arena.cli.show import check_lines, stored_game

    rec, rules, names, log, how = stored_game(Path(run_dir), game_id)
    ok, check = check_lines(rec, rules, log)
    g = rec.game
    return {
        "run": Path(run_dir).name,
        "game_id": int(game_id),
        "names": list(names),
        "seed": int(g["seed"]),
        "score": [int(g["score0"]), int(g["score1"])],
        "winner": str(g["winner"]),
        "error": str(g.get("error", "") or ""),
        "how": how,
        "ok": ok,
        "check": check,
        "steps": game_steps(int(g["seed"]), rules, log, names),
        # arena analyze's grades of this game, per step, and its equity curve (None: not analysed)
        "analysis": viewer_data(run_dir, game_id),
    }
