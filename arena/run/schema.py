"""The stored tables, column by column: the one schema of games, hands and actions.

Each :class:`Column` says its name, its stored type and where it comes from:
an engine slot (``G_*`` of a game row, ``H_*`` of a hand row, read through
the engine's names) or, with no slot, a column the run adds (ids, bot names,
errors).  Everything else is derived from these tables: the Parquet schemas
the store writes and checks (:data:`GAMES_SCHEMA`, ...), the frames the worker
builds from the engine's rows (:func:`games_frame`, :func:`hands_frame`), and
the column names analysis, the viewer and ``arena replay`` read.  A new column
is one line here (and, if it is new data, a slot the engine writes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

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
    OUTCOME_NAMES,
    WIN_KINDS,
    WIN_OUTCOMES,
)

#: Repeated strings (bot names, outcomes) are stored dictionary-encoded.
STR = pa.dictionary(pa.int32(), pa.string())


@dataclass(frozen=True)
class Column:
    """One stored column: ``slot`` is the engine row slot it is read from (None:
    the run adds it); ``names`` turns a slot's codes into category names."""

    name: str
    type: pa.DataType
    slot: int | None = None
    names: tuple[str, ...] | None = None

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.type.to_pandas_dtype())


def _seats(name: str, type_: pa.DataType, slot: int) -> tuple[Column, Column]:
    """A per-seat pair: ``name0`` at ``slot``, ``name1`` at ``slot + 1``."""
    return Column(f"{name}0", type_, slot), Column(f"{name}1", type_, slot + 1)


def _seat_columns(p: int) -> tuple[Column, ...]:
    """Seat ``p``'s counting columns of a game, in their stored order."""
    return (
        Column(f"pickups{p}", pa.int32(), G_PICKUPS + p),
        Column(f"discards{p}", pa.int32(), G_DISCARDS + p),
        Column(f"knock_deadwood{p}", pa.int32(), G_KNOCK_DEADWOOD + p),
    )


#: One row per game.  Per-seat columns end in 0/1 (the seat); ``swap`` says
#: which seat ``bot_a`` had; ``winner`` is the winning bot's name ("" for none).
GAMES: tuple[Column, ...] = (
    Column("game_id", pa.int64()),
    Column("matchup", STR),
    Column("bot_a", STR),
    Column("bot_b", STR),
    Column("pair", pa.int64()),
    Column("swap", pa.int8()),
    Column("seed", pa.int64()),
    *_seats("score", pa.int64(), G_SCORE),
    Column("winner_seat", pa.int8(), G_WINNER),
    Column("hands", pa.int32(), G_HANDS),
    Column("turns", pa.int32(), G_TURNS),
    Column("first_dealer", pa.int8(), G_FIRST_DEALER),
    Column("forfeit_seat", pa.int8(), G_FORFEIT),
    *[
        Column(f"{k}_wins{p}", pa.int32(), G_WINS_BY + 4 * p + o)
        for p in (0, 1)
        for k, o in zip(WIN_KINDS, WIN_OUTCOMES)
    ],
    *_seat_columns(0),
    *_seat_columns(1),
    Column("dead", pa.int32(), G_DEAD),
    Column("capped", pa.int32(), G_CAPPED),
    Column("nondealer_wins", pa.int32(), G_NONDEALER_WINS),
    Column("bot0", STR),
    Column("bot1", STR),
    Column("error", pa.string()),
    Column("winner", STR),
)

#: One row per hand; ``game_id`` joins it to its game (the engine's slot holds
#: the game's index in its batch; the worker turns it into the run's id).
HANDS: tuple[Column, ...] = (
    Column("game_id", pa.int64(), H_GAME),
    Column("hand", pa.int32(), H_HAND_NO),
    Column("dealer", pa.int8(), H_DEALER),
    Column("outcome", STR, H_OUTCOME, names=OUTCOME_NAMES),
    Column("knocker", pa.int8(), H_KNOCKER),
    *_seats("deadwood", pa.int16(), H_DEADWOOD),
    *_seats("points", pa.int32(), H_POINTS),
    Column("turns", pa.int16(), H_TURNS),
    Column("stock_left", pa.int8(), H_STOCK_LEFT),
    Column("upcard", pa.int8(), H_UPCARD),
    Column("upcard_taker", pa.int8(), H_UPCARD_TAKER),
    *_seats("pickups", pa.int16(), H_PICKUPS),
    Column("knock_limit", pa.int8(), H_KNOCK_LIMIT),
    Column("mult", pa.int8(), H_MULT),
    *_seats("score", pa.int32(), H_SCORE),
    Column("laid_off", pa.int64(), H_LAID_OFF),
    Column("log_start", pa.int64(), H_LOG_START),
    Column("log_len", pa.int32(), H_LOG_LEN),
)

#: One row per game: its decisions in order, one byte each (the answer: 0/1,
#: or the card discarded).  Who was asked what follows from the rules and the
#: seed, so :func:`arena.engine.replay.log_from_actions` rebuilds the engine's log
#: from these bytes.  A hand's ``log_start``/``log_len`` index into its game's
#: ``actions``.  Kept when hands are recorded and ``record_log`` is on:
#: ``arena replay`` and the viewer replay a game from it exactly, whatever
#: the bot files became.  (A binary column, not list<int16>: 1.35 MB and
#: 0.01 s per 10,000 games against 2.29 MB and 0.29 s.)
ACTIONS: tuple[Column, ...] = (Column("game_id", pa.int64()), Column("actions", pa.binary()))

TABLES: dict[str, tuple[Column, ...]] = {"games": GAMES, "hands": HANDS, "actions": ACTIONS}


def arrow_schema(columns: tuple[Column, ...]) -> pa.Schema:
    return pa.schema([(c.name, c.type) for c in columns])


GAMES_SCHEMA = arrow_schema(GAMES)
HANDS_SCHEMA = arrow_schema(HANDS)
ACTIONS_SCHEMA = arrow_schema(ACTIONS)
GAMES_COLUMNS = tuple(c.name for c in GAMES)
HANDS_COLUMNS = tuple(c.name for c in HANDS)
ACTIONS_COLUMNS = tuple(c.name for c in ACTIONS)

OUTCOME_DTYPE = pd.CategoricalDtype(list(OUTCOME_NAMES))


def engine_frame(columns: tuple[Column, ...], rows: np.ndarray) -> pd.DataFrame:
    """The columns of ``columns`` that the engine writes, read from its int64 ``rows``."""
    out: dict[str, np.ndarray | pd.Categorical] = {}
    for c in columns:
        if c.slot is None:
            continue
        if c.names is not None:
            out[c.name] = pd.Categorical.from_codes(rows[:, c.slot], dtype=pd.CategoricalDtype(list(c.names)))
        else:
            out[c.name] = rows[:, c.slot].astype(c.numpy_dtype)
    return pd.DataFrame(out)


def games_frame(games: np.ndarray, seeds: np.ndarray) -> pd.DataFrame:
    """The engine's game rows as a frame (with their seeds); the run adds ids and names."""
    frame = engine_frame(GAMES, games)
    frame.insert(0, "seed", np.asarray(seeds, dtype=np.int64))
    return frame


def hands_frame(hands: np.ndarray) -> pd.DataFrame:
    """The engine's hand rows as a frame; ``game_id`` still holds the game's batch index."""
    return engine_frame(HANDS, hands)
