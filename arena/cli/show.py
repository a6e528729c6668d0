"""Readable text for one game: the deal, every decision, melds and layoffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.engine.cards import card_str, mask_str
from arena.engine.play import play_batch
from arena.engine.replay import both_passed, describe_action, replay_hands
from arena.engine.table import Table
from arena.run.replay import ReplayRefused, check_lines, stored_game

#: What ``arena replay`` shows; the stored-game checks it prints come from :mod:`arena.run.replay`.
__all__ = ["ReplayRefused", "check_lines", "game_text", "log_text", "replay_report", "replay_text", "stored_game"]


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


def replay_report(run_dir: Path, game_id: int, symbols: bool = True) -> tuple[bool, str]:
    """Game ``game_id`` of a run folder replayed exactly, as text; and whether it matches the stored rows."""
    rec, rules_array, names, log, how = stored_game(run_dir, game_id)
    ok, check = check_lines(rec, rules_array, log)
    body = log_text(int(rec.game["seed"]), rules_array, log, names, str(rec.game.get("error", "") or ""), symbols)
    return ok, f"game {game_id}: {how}\n{check}\n{body}\n{check}"


def replay_text(run_dir: Path, game_id: int, symbols: bool = True) -> str:
    """Describe game ``game_id`` of a run folder, replayed exactly, with a check against the stored rows."""
    return replay_report(run_dir, game_id, symbols)[1]
