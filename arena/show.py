"""Readable text for one game: the deal, every decision, melds and layoffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.cards import card_str, mask_str
from arena.layout import (
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
from arena.melds import melds_of
from arena.play import play_batch
from arena.replay import replay_hands


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
    names = [b.name for b in bots]
    lines = [f"game seed {seed}: seat 0 = {names[0]}, seat 1 = {names[1]}"]
    if rec.errors:
        lines.append(f"forfeit: {rec.errors[0]}")
    for i, h in enumerate(replay_hands(seed, rules_array, rec.log)):
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
            lines.append(f"  outcome: forfeit: {rec.errors[0]}" if rec.errors else "  outcome: unfinished")
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


def replay_text(run_dir: Path, game_id: int, symbols: bool = True) -> str:
    """Describe game ``game_id`` of a run folder (replayed from its seed and bots)."""
    from arena.config import load_config
    from arena.run.store import RunStore, StoreError

    store = RunStore(run_dir)
    r = store.game(game_id)
    cfg = load_config(Path(run_dir) / "config.toml")
    loaded = {b.name: b for b in cfg.load_bots().values()}
    for name in (r.bot0, r.bot1):
        if name not in loaded:
            raise StoreError(f"{run_dir}: bot '{name}' of game {game_id} is no longer in config.toml")
    return game_text(int(r.seed), cfg.resolved_rules().to_array(), (loaded[r.bot0], loaded[r.bot1]), symbols)
