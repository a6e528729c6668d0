"""Golden records: whole games on fixed seeds, pinned by hash.

Every game a seed gives depends on the deal, the seeding of each bot's
generator, the rules and the bots' play.  These tests play fixed seeds under
each rules preset and compare a SHA-256 of the complete records (the games
and hands arrays of :func:`arena.engine.play.play_batch`, and the forfeit messages)
with the values pinned below, and do the same for the games and hands tables
of a tiny tournament played through :func:`arena.run.run_tournament`, which
also pins the run layer's columns, their types and the game ids.  Any change
to dealing, seeding, a rule, a built-in bot's play or the record layouts
makes them fail; a refactoring, a speed-up or a reformatting must not.

Updating the pinned values ON PURPOSE (the change is meant to alter games):

1. run ``python -m tests.engine.test_golden`` from the checkout; it prints the
   current values in the form of ``PINNED_BATCHES`` and ``PINNED_RUN``;
2. paste them below;
3. say so in the commit message and in CHANGELOG.md: when the games change
   (``PINNED_BATCHES``, or the games table), in an entry marked **results**
   (see CONTRIBUTING.md) naming what changed them; when only the stored
   columns change (the run folder's format), in an entry about that format.

A failure you did not intend is a bug in the change, not in these values.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.config import TournamentConfig
from arena.settings.rules import load_rules

PRESETS = ("standard", "eaai", "oklahoma")
PAIRINGS = (("simple", "gin_chasing"), ("random", "simple"))
#: 300 fixed game seeds per preset and pairing (arbitrary, spread out).
SEEDS = np.arange(300, dtype=np.int64) * 7_919 + 20_230

# (preset, seat 0, seat 1) -> (hand rows, SHA-256 of the records), from ``python -m tests.engine.test_golden``.
# random vs simple is the same under standard and eaai: eaai differs only in having no big gin, and
# none of these games has one (simple vs gin_chasing has 12 under standard).
PINNED_BATCHES: dict[tuple[str, str, str], tuple[int, str]] = {
    ("standard", "simple", "gin_chasing"): (2346, "e5e79746ac394f4257b4d07f60d741a705c71f5f716e47d3de9c778852d32138"),
    ("standard", "random", "simple"): (780, "368cca1e8f4286254a6cde2d5944fd08556fc1be1b8150bef27ec2c06c46bf97"),
    ("eaai", "simple", "gin_chasing"): (2349, "4ebc941a7f5aa55d0e0047f17b7d5477879b72932275e1839a68d42c9c54e0e9"),
    ("eaai", "random", "simple"): (780, "368cca1e8f4286254a6cde2d5944fd08556fc1be1b8150bef27ec2c06c46bf97"),
    ("oklahoma", "simple", "gin_chasing"): (1916, "432f72c50a3596591a3990cafcfa78b9a17c2b087c272f0ba1b694820b5097f6"),
    ("oklahoma", "random", "simple"): (649, "a88457ed173164f9047af62a8d347de659265c0c982e5aaf4ae76e6b319630fd"),
}

# table -> (rows, SHA-256 of the table sorted by game_id), from ``python -m tests.engine.test_golden``
PINNED_RUN: dict[str, tuple[int, str]] = {
    "games": (18, "bc18067f57ec960bebd4992be563f82dd4010abaf487d9f066d10c31192fd16e"),
    # Runs record each game's action log since c315c87: log_start/log_len are offsets, no longer -1/0.
    "hands": (77, "00891c20580331a23df8ce9dce4477a2fbbcc9fdfdd0a508fa957331ccf8fff5"),
}


def batch_digest(preset: str, bot0: str, bot1: str) -> tuple[int, str]:
    """(hand rows, SHA-256 of games, hands and forfeit messages) of the fixed seeds."""
    rec = play_batch(load_bot(bot0), load_bot(bot1), rules_array(load_rules(preset)), SEEDS, record_hands=True)
    h = hashlib.sha256()
    for name, arr in (("games", rec.games), ("hands", rec.hands)):
        a = np.ascontiguousarray(arr, dtype="<i8")  # little-endian int64 on every machine
        h.update(f"{name} {a.shape}\n".encode())
        h.update(a.tobytes())
    h.update("\n".join(rec.errors).encode())
    return len(rec.hands), h.hexdigest()


def table_digest(df: pd.DataFrame) -> str:
    """SHA-256 of a table sorted by game_id (then hand): column names, kinds and values.

    Numeric columns are hashed as their numpy dtype and bytes, so a changed
    column type shows up; text and categorical columns as their values, so
    the digest does not depend on how a pandas version spells a string dtype.
    """
    keys = [k for k in ("game_id", "hand") if k in df.columns]
    df = df.sort_values(keys, kind="stable").reset_index(drop=True)
    h = hashlib.sha256()
    for name in df.columns:
        col = df[name]
        if pd.api.types.is_numeric_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype):
            values = col.to_numpy()
            h.update(f"{name}:{values.dtype.newbyteorder('<').str}\n".encode())
            h.update(values.astype(values.dtype.newbyteorder("<")).tobytes())
        else:
            h.update(f"{name}:text\n".encode())
            h.update("\x1f".join(col.astype(str).tolist()).encode())
    return h.hexdigest()


def tiny_run(results_dir: Path) -> dict[str, tuple[int, str]]:
    """Three bots, 6 games per matchup in chunks of 4 (so a short last chunk), one worker process."""
    from arena.run import run_tournament

    cfg = TournamentConfig(
        name="golden",
        bots=("random", "simple", "gin_chasing"),
        games_per_pair=6,
        chunk_size=4,
        seed=12,
        workers=1,
        record_hands=True,
        results_dir=str(results_dir),
    )
    res = run_tournament(cfg, progress=False)
    assert res.status == "complete"
    return {name: (len(df), table_digest(df)) for name, df in (("games", res.games), ("hands", res.hands))}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("bot0,bot1", PAIRINGS)
def test_fixed_seeds_give_the_pinned_records(preset, bot0, bot1):
    got = batch_digest(preset, bot0, bot1)
    assert got == PINNED_BATCHES[(preset, bot0, bot1)], (
        f"{preset}: {bot0} vs {bot1} played differently on the golden seeds; if that is intended, "
        "update the pinned values as this module's docstring says"
    )


def test_a_tiny_tournament_gives_the_pinned_games_and_hands_tables(tmp_path):
    got = tiny_run(tmp_path)
    assert got == PINNED_RUN, (
        "the tiny run's tables changed (games, ids, columns or their types); if that is intended, "
        "update the pinned values as this module's docstring says"
    )


def test_the_digest_sees_one_changed_value_and_a_changed_column_type():
    """The table digest is not blind: one value or one dtype changed gives another hash."""
    df = pd.DataFrame(
        {
            "game_id": np.array([1, 0], dtype=np.int64),
            "score0": np.array([5, 7], dtype=np.int32),
            "bot0": pd.Categorical(["a", "b"]),
        }
    )
    base = table_digest(df)
    assert table_digest(df.iloc[::-1]) == base  # row order does not matter: sorted by game_id
    changed = df.copy()
    changed.loc[0, "score0"] = 6
    assert table_digest(changed) != base
    assert table_digest(df.astype({"score0": np.int64})) != base
    renamed = df.copy()
    renamed["bot0"] = pd.Categorical(["a", "c"])
    assert table_digest(renamed) != base


if __name__ == "__main__":  # print the current values, to paste above when games change on purpose
    import tempfile

    print("PINNED_BATCHES: dict[tuple[str, str, str], tuple[int, str]] = {")
    for preset in PRESETS:
        for bot0, bot1 in PAIRINGS:
            n, digest = batch_digest(preset, bot0, bot1)
            print(f'    ("{preset}", "{bot0}", "{bot1}"): ({n}, "{digest}"),')
    print("}")
    with tempfile.TemporaryDirectory() as d:
        run = tiny_run(Path(d))
    print("PINNED_RUN: dict[str, tuple[int, str]] = {")
    for name, (n, digest) in run.items():
        print(f'    "{name}": ({n}, "{digest}"),')
    print("}")
