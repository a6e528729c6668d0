"""Turn the engine's integer records into pandas tables with named columns.

The kernels write fixed-layout int64 rows (``G_*``, ``H_*`` in
:mod:`arena.engine.layout`); this module is the one place that names those columns
for everything downstream (tournament files, statistics, reports).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.engine.layout import (
    G_CAPPED,
    G_DEAD,
    G_DISCARDS,
    G_FIRST_DEALER,
    G_FORFEIT,
    G_HANDS,
    G_KNOCK_DEADWOOD,
    G_NONDEALER_WINS,
    G_PICKUPS,
    G_SCORE,
    G_TURNS,
    G_WINNER,
    G_WINS_BY,
    H_DEADWOOD,
    H_DEALER,
    H_GAME,
    H_HAND_NO,
    H_KNOCK_LIMIT,
    H_KNOCKER,
    H_LAID_OFF,
    H_LOG_LEN,
    H_LOG_START,
    H_MULT,
    H_OUTCOME,
    H_PICKUPS,
    H_POINTS,
    H_SCORE,
    H_STOCK_LEFT,
    H_TURNS,
    H_UPCARD,
    H_UPCARD_TAKER,
    OUT_BIG_GIN,
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    OUTCOME_NAMES,
)

OUTCOME_DTYPE = pd.CategoricalDtype(list(OUTCOME_NAMES))
_WIN_KINDS = (("knock", OUT_KNOCK), ("undercut", OUT_UNDERCUT), ("gin", OUT_GIN), ("big_gin", OUT_BIG_GIN))


def games_frame(games: np.ndarray, seeds: np.ndarray) -> pd.DataFrame:
    """One row per game; per-seat columns end in 0 or 1 (the seat)."""
    cols: dict[str, np.ndarray] = {
        "seed": seeds.astype(np.int64),
        "score0": games[:, G_SCORE],
        "score1": games[:, G_SCORE + 1],
        "winner_seat": games[:, G_WINNER].astype(np.int8),
        "hands": games[:, G_HANDS].astype(np.int32),
        "turns": games[:, G_TURNS].astype(np.int32),
        "first_dealer": games[:, G_FIRST_DEALER].astype(np.int8),
        "forfeit_seat": games[:, G_FORFEIT].astype(np.int8),
    }
    for p in range(2):
        for name, out in _WIN_KINDS:
            cols[f"{name}_wins{p}"] = games[:, G_WINS_BY + 4 * p + out].astype(np.int32)
        cols[f"pickups{p}"] = games[:, G_PICKUPS + p].astype(np.int32)
        cols[f"discards{p}"] = games[:, G_DISCARDS + p].astype(np.int32)
        cols[f"knock_deadwood{p}"] = games[:, G_KNOCK_DEADWOOD + p].astype(np.int32)
    cols["dead"] = games[:, G_DEAD].astype(np.int32)
    cols["capped"] = games[:, G_CAPPED].astype(np.int32)
    cols["nondealer_wins"] = games[:, G_NONDEALER_WINS].astype(np.int32)
    return pd.DataFrame(cols)


def hands_frame(hands: np.ndarray) -> pd.DataFrame:
    """One row per hand; ``outcome`` is categorical (knock, undercut, gin, ...)."""
    cols: dict[str, np.ndarray | pd.Categorical] = {
        "game": hands[:, H_GAME],
        "hand": hands[:, H_HAND_NO].astype(np.int32),
        "dealer": hands[:, H_DEALER].astype(np.int8),
        "outcome": pd.Categorical.from_codes(hands[:, H_OUTCOME], dtype=OUTCOME_DTYPE),
        "knocker": hands[:, H_KNOCKER].astype(np.int8),
        "deadwood0": hands[:, H_DEADWOOD].astype(np.int16),
        "deadwood1": hands[:, H_DEADWOOD + 1].astype(np.int16),
        "points0": hands[:, H_POINTS].astype(np.int32),
        "points1": hands[:, H_POINTS + 1].astype(np.int32),
        "turns": hands[:, H_TURNS].astype(np.int16),
        "stock_left": hands[:, H_STOCK_LEFT].astype(np.int8),
        "upcard": hands[:, H_UPCARD].astype(np.int8),
        "upcard_taker": hands[:, H_UPCARD_TAKER].astype(np.int8),
        "pickups0": hands[:, H_PICKUPS].astype(np.int16),
        "pickups1": hands[:, H_PICKUPS + 1].astype(np.int16),
        "knock_limit": hands[:, H_KNOCK_LIMIT].astype(np.int8),
        "mult": hands[:, H_MULT].astype(np.int8),
        "score0": hands[:, H_SCORE].astype(np.int32),
        "score1": hands[:, H_SCORE + 1].astype(np.int32),
        "laid_off": hands[:, H_LAID_OFF],
        "log_start": hands[:, H_LOG_START],
        "log_len": hands[:, H_LOG_LEN].astype(np.int32),
    }
    return pd.DataFrame(cols)
