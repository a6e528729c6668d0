"""Frames to Arrow tables of exactly the stored schemas (:mod:`arena.run.schema`).

The worker builds a chunk's actions table here and the store converts the
games and hands frames here before it writes them; neither needs the other.
A table that does not fit is a one-line :class:`TableError`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.run.schema import ACTIONS_COLUMNS, ACTIONS_SCHEMA, GAMES_COLUMNS, HANDS_COLUMNS

#: The stored columns of each kind of table, by kind.
COLUMNS = {"games": GAMES_COLUMNS, "hands": HANDS_COLUMNS, "actions": ACTIONS_COLUMNS}


class TableError(ValueError):
    """A table that cannot be stored in the stored schema; the message is one line."""


def actions_table(game_ids: np.ndarray, offsets: np.ndarray, actions: np.ndarray) -> pa.Table:
    """The actions table of ``len(game_ids)`` games: game ``i`` answered ``actions[offsets[i]:offsets[i+1]]``."""
    data = np.ascontiguousarray(actions, dtype=np.uint8).tobytes()
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(offsets) and offsets[-1] >= 2**31:
        raise TableError("actions of one chunk exceed 2 GiB; use a smaller chunk_size")
    col = pa.BinaryArray.from_buffers(
        pa.binary(),
        len(game_ids),
        [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)],
    )
    return pa.Table.from_arrays([pa.array(np.asarray(game_ids, dtype=np.int64)), col], schema=ACTIONS_SCHEMA)


def to_table(df: pd.DataFrame, schema: pa.Schema, what: str) -> pa.Table:
    """A frame as a table of exactly ``schema`` (column set, order and types), or TableError."""
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise TableError(
            f"{what} table does not match the stored schema "
            f"(missing: {', '.join(missing) or '-'}; unexpected: {', '.join(extra) or '-'})"
        )
    df = df[list(schema.names)]
    arrays = []
    for f in schema:
        col = df[f.name]
        if pa.types.is_dictionary(f.type):
            arrays.append(
                pa.array(col.astype(str).to_numpy(dtype=object), type=pa.string()).dictionary_encode().cast(f.type)
            )
        else:
            arrays.append(pa.array(col.to_numpy(), type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)
