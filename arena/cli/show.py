"""Readable text for one game: the deal, every decision, melds and layoffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.botkit.load import load_bots
from arena.engine.cards import card_str, mask_str
from arena.engine.play import play_batch
from arena.engine.replay import both_passed, describe_action, replay_hands
from arena.engine.rules_array import rules_array
from arena.engine.table import Table
from arena.run.store import StoreError


def _melds(melds: list[int], symbols: bool) -> str:
    return " | ".join(mask_str(m, symbols) for m in melds) if melds else "(none)"


def game_text(seed: int, rules_array: np.ndarray, bots, symbols: bool = True) -> str:
    """Play the game seeded ``seed`` again with its bots and describe every hand."""
    rec = play_batch(bots[0], bots[1], rules_array, np.array([seed]), record_log=True)
    return log_text(seed, rules_array, rec.log, [b.name for b in bots], rec.errors[0] if rec.errors else "", symbols)


def log_text(seed: int, rules_array: np.ndarray, log: np.ndarray, names, error: str = "", symbols: bool = True) -> str:
    """Describe every hand of the game seeded ``seed`` replayed from its action ``log``."""
    errors = [error] if error else []
    lines = [f"game seed {seed}: seat 0 = {names[0]}, seat 1 = {names[1]}"]
    if errors:
        lines.append(f"forfeit: {errors[0]}")
    for i, replayed in enumerate(replay_hands(seed, rules_array, log)):
        h = Table(replayed.state)
        scores = h.scores
        lines.append("")
        lines.append(
            f"hand {i + 1}: dealer {names[h.dealer]}, scores {scores[0]}-{scores[1]}, "
            f"upcard {card_str(h.upcard, symbols)}"
        )
        for p in (0, 1):
            lines.append(f"  {names[p]:<18} dealt {mask_str(h.dealt[p], symbols)}")
        for seat, phase, action in replayed.actions:
            lines.append(f"    {names[seat]} {describe_action(phase, action, lambda c: card_str(c, symbols))}")
            if both_passed(phase, action):
                lines.append(f"    {names[1 - seat]} draws from the stock (both passed the upcard)")
        if h.outcome == "unfinished":
            lines.append(f"  outcome: forfeit: {errors[0]}" if errors else "  outcome: unfinished")
            break
        lines.append(f"  outcome: {h.outcome}")
        k = h.knocker
        if k >= 0:
            d = 1 - k
            lines.append(f"  {names[k]} lays out {_melds(h.knocker_melds, symbols)}; deadwood {h.deadwood(k)}")
            lo = f"; lays off {mask_str(h.laid_off, symbols)}" if h.laid_off else ""
            lines.append(f"  {names[d]} melds {_melds(h.defender_melds, symbols)}{lo}; deadwood {h.deadwood(d)}")
            lines.append(
                f"  hands at the end: {names[k]} {mask_str(h.hand(k), symbols)} / "
                f"{names[d]} {mask_str(h.hand(d), symbols)}"
            )
        pts = h.points
        lines.append(f"  points {pts[0]}-{pts[1]} -> scores {scores[0] + pts[0]}-{scores[1] + pts[1]}")
    return "\n".join(lines)


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


def replay_report(run_dir: Path, game_id: int, symbols: bool = True) -> tuple[bool, str]:
    """Game ``game_id`` of a run folder replayed exactly, as text; and whether it matches the stored rows."""
    rec, rules_array, names, log, how = stored_game(run_dir, game_id)
    ok, check = check_lines(rec, rules_array, log)
    body = log_text(int(rec.game["seed"]), rules_array, log, names, str(rec.game.get("error", "") or ""), symbols)
    return ok, f"game {game_id}: {how}\n{check}\n{body}\n{check}"


def replay_text(run_dir: Path, game_id: int, symbols: bool = True) -> str:
    """Describe game ``game_id`` of a run folder, replayed exactly, with a check against the stored rows."""
    return replay_report(run_dir, game_id, symbols)[1]
