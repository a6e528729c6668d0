"""A stored game, made ready to replay exactly, and the check that the replay matches its rows.

What ``arena replay`` prints and what the viewer shows both start here: the
stored action log when the run kept one, else the game played again with
the bots of the run's config, refused when a bot changed since.  Below both
the command line and the web, so neither imports the other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bots
from arena.run.store import StoreError


class ReplayRefused(StoreError):
    """A game that cannot be replayed exactly; the message is one line."""


def stored_game(run_dir: Path, game_id: int):
    """``(record, packed, names, log, how)`` of a stored game, ready to replay exactly.

    The log is the stored one when the run kept it.  Otherwise the game is
    played again with the bots of the run's config, but only when each
    bot's hash is the one recorded for the game's matchup; if a bot file
    changed since, this raises :class:`ReplayRefused`.
    """
    from arena.run.store import RunStore

    store = RunStore(run_dir)
    rec = store.game_record(game_id)
    packed = rules_array(store.rules())  # the rules the games were played by, as stored
    g = rec.game
    names = (str(g["bot0"]), str(g["bot1"]))
    if rec.actions is not None:
        from arena.engine.replay import ReplayError, log_from_actions

        try:
            log = log_from_actions(int(g["seed"]), packed, rec.actions)
        except ReplayError as exc:
            raise ReplayRefused(
                f"{run_dir}: game {game_id}: the stored action log does not fit the game: {exc}"
            ) from None
        return rec, packed, names, log, "replayed from the action log stored with the game"
    loaded = {b.name: b for b in load_bots(store.config()).values()}
    ident = {v[0]: v for v in rec.matchup.identity.values() if isinstance(v, list) and v}
    for name in names:
        if name not in loaded:
            raise StoreError(f"{run_dir}: bot '{name}' of game {game_id} is no longer in config.toml")
        old = ident.get(name)
        if old is not None and old[2] != loaded[name].source_hash:
            raise ReplayRefused(
                f"{run_dir}: game {game_id} was stored without an action log and bot '{name}' has changed since "
                f"(hash {loaded[name].source_hash}, the run recorded {old[2]}); it cannot be replayed exactly"
            )
    bots = (loaded[names[0]], loaded[names[1]])
    played = play_batch(bots[0], bots[1], packed, np.array([int(g["seed"])]), record_log=True)
    return rec, packed, names, played.log, "played again with the bots of config.toml (no action log was stored)"


def check_lines(rec, rules_array: np.ndarray, log: np.ndarray) -> tuple[bool, str]:
    """Whether the replay reproduces the stored game row and hand rows, as one line."""
    from arena.engine.replay import ReplayError, compare, replay_game

    g = rec.game
    try:
        rows = replay_game(int(g["seed"]), rules_array, log)
    except ReplayError as exc:
        return False, f"WARNING: the replay does NOT reproduce the stored game: {exc}"
    hands = None if rec.hands is None else rec.hands.to_dict("records")
    diffs = compare(rows, g.to_dict(), hands)
    if diffs:
        more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
        return False, "WARNING: the replay does NOT reproduce the stored game: " + "; ".join(diffs[:3]) + more
    what = "game row and hand rows" if hands is not None else "game row"
    return True, f"check: the replay reproduces the stored {what} (score {int(g['score0'])}-{int(g['score1'])})"
