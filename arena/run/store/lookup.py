"""Finding one stored game by its id.

Game ids are ``matchup number * games_per_pair + index in the matchup``,
so an id names its matchup without a scan, and the matchup's chunk id
ranges name the one chunk to open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from arena.run.store.chunks import file_problem, parquet_table, read_table, read_verified
from arena.run.store.format import StoreDamaged, StoreError
from arena.run.store.index import ChunkRecord, Matchup

if TYPE_CHECKING:
    from arena.run.store import RunStore


@dataclass
class GameRecord:
    """One stored game: its row, its hands (or None) and its action log (or None)."""

    game: pd.Series
    hands: pd.DataFrame | None
    actions: np.ndarray | None
    matchup: Matchup


def locate(store: RunStore, game_id: int) -> tuple[Matchup, list[ChunkRecord]]:
    """The matchup of a game id and the stored chunks that may hold it (by their id ranges)."""
    cfg_games = games_per_pair(store)
    no, local = divmod(int(game_id), cfg_games)
    idx = store.index()
    m = idx.by_no(no) if game_id >= 0 else None
    if m is None:
        top = idx.next_no() * cfg_games - 1
        raise StoreError(f"{store.dir}: no game {game_id} (ids run from 0 to {top})")
    recs = idx.stored_of(m, counted=False)
    # The chunk whose id range holds it.  (Not the chunk number the id gives divided evenly: chunks are
    # chunk_size long but the last, so 30 games in chunks of 20 put game 15 in chunk 0, not in chunk 1.)
    held = [r for r in recs if r.ids is not None and r.ids[0] <= game_id < r.ids[1]]
    return m, held or [r for r in recs if r.ids is None]  # else a folder from before ranges were kept: each


def game(store: RunStore, game_id: int) -> pd.Series:
    """One game's row, found through its matchup (game ids are matchup no * games + index)."""
    m, recs = locate(store, game_id)
    damaged = []
    for rec in recs:
        g = read_table(store, m, rec, "games", None)
        if g is None:
            damaged.append(rec.chunk)
            continue
        hit = g.loc[g["game_id"] == game_id]
        if len(hit):
            return hit.iloc[0]
    local = int(game_id) - m.no * m.games
    if damaged and all(r.ids is not None for r in recs):  # its chunk, by the id ranges, is the damaged one
        raise StoreDamaged(
            f"{store.dir}: game {game_id} ({m.name}, game {local} of it) is in chunk {damaged[0]}, whose file is "
            f"damaged (named above); 'arena fsck {store.dir} --repair', then the run's command plays it again"
        )
    raise StoreError(f"{store.dir}: game {game_id} ({m.name}, game {local} of it) is not stored")


def game_record(store: RunStore, game_id: int) -> GameRecord:
    """One game's row, its hand rows and its action log (None where the run kept none)."""
    row = game(store, game_id)
    mu, recs = locate(store, game_id)
    hands = actions = None
    for rec in recs:
        g = read_table(store, mu, rec, "games", ["game_id"])
        if g is None or not (g["game_id"] == game_id).any():
            continue
        if "hands" in rec.files:
            h = read_table(store, mu, rec, "hands", None)
            if h is not None:
                hands = h.loc[h["game_id"] == game_id].reset_index(drop=True)
        if "actions" in rec.files:
            data = read_verified(store, rec, "actions")
            if data is None:
                why = file_problem(store, rec, "actions") or "unreadable"
                raise StoreError(f"{store.dir}: chunk {rec.chunk} of {mu.name}: {why}")
            t = parquet_table(data)
            ids = t.column("game_id").to_numpy()
            hit = np.flatnonzero(ids == game_id)
            if len(hit):
                actions = np.frombuffer(t.column("actions")[int(hit[0])].as_py(), dtype=np.uint8).astype(np.int64)
        break
    return GameRecord(row, hands, actions, mu)


def games_per_pair(store: RunStore) -> int:
    """The games each matchup plans: game ids are matchup number * this + index in the matchup.

    A count below 1 is refused in one line: it is read from the index, and ids divide by it."""
    ms = list(store.index().matchups.values())
    if not ms:
        raise StoreError(f"{store.dir}: no games stored")
    if ms[0].games < 1:
        raise StoreError(f"{store.dir}: the index plans {ms[0].games} games for {ms[0].name}: no game id can be read")
    return ms[0].games
