"""Readable text for one game: the deal, every decision, melds and layoffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.botkit.load import load_bots
from arena.engine.cards import card_str, mask_str
from arena.engine.layout import (
    OUTCOME_NAMES,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    S_DEADWOOD,
    S_DEALER,
    S_DECK,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_HAND,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_LAID_OFF,
    S_OUTCOME,
    S_POINTS,
    S_SCORE,
)
from arena.engine.melds import melds_of
from arena.engine.play import play_batch
from arena.engine.replay import replay_hands
from arena.engine.rules_array import rules_array
from arena.run.store import StoreError


def _melds(sets: int, runs: int, symbols: bool) -> str:
    parts = [mask_str(m, symbols) for m in melds_of(int(sets), int(runs))]
    return " | ".join(parts) if parts else "(none)"


def _action(phase: int, action: int, symbols: bool) -> str:
    if phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER):
        return "takes the upcard" if action else "passes the upcard"
    if phase == PH_DRAW:
        return "draws from the pile" if action else "draws from the stock"
    if phase == PH_BIG_GIN:
        return "declares BIG GIN" if action else "does not declare big gin"
    if phase == PH_DISCARD:
        return f"discards {card_str(action, symbols)}"
    if phase == PH_KNOCK:
        return "KNOCKS" if action else "does not knock"
    return f"? {phase} {action}"


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
    for i, h in enumerate(replay_hands(seed, rules_array, log)):
        st = h.state
        dealer = int(st[S_DEALER])
        deck = st[S_DECK : S_DECK + 52]
        dealt = {1 - dealer: deck[:10], dealer: deck[10:20]}
        lines.append("")
        lines.append(
            f"hand {i + 1}: dealer {names[dealer]}, scores {int(st[S_SCORE])}-{int(st[S_SCORE + 1])}, "
            f"upcard {card_str(int(deck[20]), symbols)}"
        )
        for p in (0, 1):
            lines.append(f"  {names[p]:<18} dealt {mask_str(sum(1 << int(c) for c in dealt[p]), symbols)}")
        for seat, phase, action in h.actions:
            lines.append(f"    {names[seat]} {_action(phase, action, symbols)}")
            if phase == PH_UPCARD_DEALER and action == 0:
                # Both passed: the engine draws for the non-dealer (no decision, so not in the log).
                lines.append(f"    {names[1 - seat]} draws from the stock (both passed the upcard)")
        out = int(st[S_OUTCOME])
        if out < 0:
            lines.append(f"  outcome: forfeit: {errors[0]}" if errors else "  outcome: unfinished")
            break
        lines.append(f"  outcome: {OUTCOME_NAMES[out]}")
        k = int(st[S_KNOCKER])
        if k >= 0:
            d = 1 - k
            lines.append(
                f"  {names[k]} lays out {_melds(st[S_KNOCK_SETS], st[S_KNOCK_RUNS], symbols)}; "
                f"deadwood {int(st[S_DEADWOOD + k])}"
            )
            laid = int(st[S_LAID_OFF])
            lo = f"; lays off {mask_str(laid, symbols)}" if laid else ""
            lines.append(
                f"  {names[d]} melds {_melds(st[S_DEF_SETS], st[S_DEF_RUNS], symbols)}{lo}; "
                f"deadwood {int(st[S_DEADWOOD + d])}"
            )
            lines.append(
                f"  hands at the end: {names[k]} {mask_str(int(st[S_HAND + k]), symbols)} / "
                f"{names[d]} {mask_str(int(st[S_HAND + d]), symbols)}"
            )
        pts = [int(st[S_POINTS]), int(st[S_POINTS + 1])]
        lines.append(
            f"  points {pts[0]}-{pts[1]} -> scores {int(st[S_SCORE]) + pts[0]}-{int(st[S_SCORE + 1]) + pts[1]}"
        )
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
    from arena.settings.config import load_config

    store = RunStore(run_dir)
    rec = store.game_record(game_id)
    cfg = load_config(Path(run_dir) / "config.toml")
    packed = rules_array(cfg.resolved_rules())
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
    loaded = {b.name: b for b in load_bots(cfg).values()}
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
