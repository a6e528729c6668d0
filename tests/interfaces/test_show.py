"""Replay text (arena/cli/show.py): every move of a hand is shown, in order."""

from __future__ import annotations

import re

from arena.cli.show import game_text
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.rules import Rules


def _hands(text: str) -> list[list[str]]:
    """The move lines of each hand (the indented lines under 'hand N:')."""
    hands: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("hand "):
            hands.append([])
        elif line.startswith("    ") and hands:
            hands[-1].append(line.strip())
    return hands


def test_after_both_pass_the_upcard_the_non_dealers_stock_draw_is_shown():
    a = load_bot("simple")
    b = a.with_params("simple-b", {})  # same play, another name, so each line names its seat
    rules = rules_array(Rules())
    both_passed = 0
    for seed in range(40):
        text = game_text(seed, rules, (a, b), symbols=False)
        for moves, dealer in zip(_hands(text), re.findall(r"^hand \d+: dealer (\S+),", text, re.M)):
            nondealer = "simple-b" if dealer == "simple" else "simple"
            # Every turn draws (or takes the upcard) before it discards.
            draws = sum("draws from the" in m or "takes the upcard" in m for m in moves)
            assert draws == sum("discards" in m for m in moves), moves
            if moves[:2] == [f"{nondealer} passes the upcard", f"{dealer} passes the upcard"]:
                both_passed += 1
                assert moves[2] == f"{nondealer} draws from the stock (both passed the upcard)"
                assert moves[3].startswith(f"{nondealer} discards ")
    assert both_passed >= 10  # the case is common with Simple (it takes only a card that melds)
