"""Comparing run tables in tests: one canonical form for games (and hands) tables."""

from __future__ import annotations

import pandas as pd


def canonical(df: pd.DataFrame) -> pd.DataFrame:
    """A games or hands table sorted by game id (and hand), with categoricals as plain strings.

    Two runs of the same seed may store chunks in another order and give
    string columns other category sets; neither is a difference in the games.
    """
    keys = ["game_id", "hand"] if "hand" in df.columns else ["game_id"]
    out = df.sort_values(keys).reset_index(drop=True)
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(str)
    return out


def same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """The two tables hold the same rows (see :func:`canonical`)."""
    return canonical(a).equals(canonical(b))
