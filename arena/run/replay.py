"""A stored game, made ready to replay exactly, and the check that the replay matches its rows.

What ``arena replay`` prints and what the viewer shows both start here: the
stored action log when the run kept one, else the game played again with
the bots of the run's config, refused when a bot changed since.  Below both
the command line and the web, so neither imports the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.botkit.bot import file_hash
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bots
from arena.run.store import StoreError

if TYPE_CHECKING:
    from arena.settings.config import TournamentConfig


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
    ident = {v[0]: v for v in rec.matchup.identity.values() if isinstance(v, list) and v}
    config = store.config()
    loaded = {b.name: b for b in load_bots(config, skip=_not_played(config, ident, names)).values()}
    for name in names:
        old = ident.get(name)
        if name not in loaded and old is not None and len(old) > 2 and old[1] in _FILE_KINDS:
            raise ReplayRefused(
                f"{run_dir}: game {game_id} was stored without an action log and bot '{name}' has changed since "
                f"(no bot file of config.toml has the hash the run recorded, {old[2]}); it cannot be replayed "
                "exactly, and a changed file is not run"
            )
        if name not in loaded:
            raise StoreError(f"{run_dir}: bot '{name}' of game {game_id} is no longer in config.toml")
        if old is not None and old[2] != loaded[name].source_hash:
            raise ReplayRefused(
                f"{run_dir}: game {game_id} was stored without an action log and bot '{name}' has changed since "
                f"(hash {loaded[name].source_hash}, the run recorded {old[2]}); it cannot be replayed exactly"
            )
    bots = (loaded[names[0]], loaded[names[1]])
    played = play_batch(bots[0], bots[1], packed, np.array([int(g["seed"])]), record_log=True)
    return rec, packed, names, played.log, "played again with the bots of config.toml (no action log was stored)"


#: The bot kinds loaded by importing or reading a file in the arena's own process.
_FILE_KINDS = ("file", "policy")


def _not_played(config: TournamentConfig, ident: dict[str, list[Any]], names: tuple[str, str]) -> set[str]:
    """The config's file and policy bots whose bytes are not those the game's two bots were played with.

    Loading a bot file runs its code, and the game needs only its own two bots: importing every bot file
    of the folder's config before the hash check (as replaying did) ran a changed or foreign file just
    because someone looked at a game.  A file's hash is read from its bytes, with nothing imported.
    """
    wanted = {str(ident[n][2]) for n in names if n in ident and len(ident[n]) > 2}
    out = set()
    for spec, ref in config.bot_refs().items():
        if ref.kind in _FILE_KINDS:
            try:
                if file_hash(Path(ref.ref)) in wanted:
                    continue
            except OSError:
                pass  # a lost file: named below if it is one of the game's bots
            out.add(spec)
    return out


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
