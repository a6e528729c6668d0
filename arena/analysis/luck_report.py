"""Where the luck-adjusted results show: the report's section and the terminal table of ``arena luck``."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from arena.analysis.render import Table, html_table, md_table, text_width

__all__ = ["WHAT_IT_DOES", "what_it_does", "luck_section", "results_table", "results_text", "per_bot_text"]

#: The plain sentence the report and the command print with the results.
WHAT_IT_DOES = (
    "The luck-adjusted result takes out the luck of the cards: at every stock draw and every deal, the value of "
    "the card that came is compared with the average value of the cards that could have come, and the sum of "
    "those differences (the game's luck) is subtracted from the result. That luck averages to exactly zero, so "
    "the adjusted result measures the same thing as the plain one, with less noise; 'x games' is how many times "
    "more games the plain result needs for an interval as narrow. Intervals: 95%, over duplicate pairs."
)


def _has_pairs(res: pd.DataFrame | None) -> bool:
    """Whether the results' units are duplicate pairs: without them each game is its own unit (pairs = games)."""
    return res is None or res.empty or bool((res["pairs"] < res["games"]).any())


def what_it_does(res: pd.DataFrame | None) -> str:
    """:data:`WHAT_IT_DOES`, its last sentence naming the unit the intervals are over: a run without duplicate
    pairs has games, each on its own, and saying "duplicate pairs" there claimed a pairing it did not have."""
    if _has_pairs(res):
        return WHAT_IT_DOES
    return WHAT_IT_DOES.replace(
        "over duplicate pairs.", "over games (the run has no duplicate pairs: each game is its own unit)."
    )


def _ci(lo: float, hi: float, digits: int, pct: bool) -> str:
    """An interval as text; a rate's (``pct``) ends are shown within 0..100%: the adjusted rate's t interval can
    reach past them, where no rate lies."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "-"
    if pct:
        lo, hi = max(lo, 0.0), min(hi, 1.0)
        return f"{100 * lo:.{digits}f}..{100 * hi:.{digits}f}%"
    return f"{lo:+.{digits}f}..{hi:+.{digits}f}"


def _rate(v: float) -> str:
    """A win rate as text, within 0..100% as its interval is (:func:`_ci`): the adjusted rate, a regression
    estimate, can pass an end (101.8% on a run one bot won whole), and was printed outside its own interval."""
    return f"{100 * min(max(v, 0.0), 1.0):.1f}%" if np.isfinite(v) else "-"


def _ratio(v: float) -> str:
    """A games ratio as text; "-" where it is undefined (a variance of 0: every game the same result)."""
    return f"{v:.2f}" if np.isfinite(v) else "-"


def results_table(res: pd.DataFrame) -> Table:
    """Per matchup and bot: points per game and win rate, plain and adjusted, with intervals and games ratios.

    The third column counts the units the intervals are over: duplicate pairs, or games in a run without them.
    """
    head = [
        "bot",
        "opponent",
        "pairs" if _has_pairs(res) else "games",
        "points/game",
        "95% CI",
        "adjusted",
        "95% CI",
        "x games",
        "win rate",
        "95% CI",
        "adjusted",
        "95% CI",
        "x games",
    ]
    rows = []
    for r in res.itertuples():
        rows.append(
            [
                r.bot,
                r.opponent,
                f"{r.pairs:,}",
                f"{r.points_plain:+.2f}",
                _ci(r.points_plain_lo, r.points_plain_hi, 2, False),
                f"{r.points_adjusted:+.2f}",
                _ci(r.points_adjusted_lo, r.points_adjusted_hi, 2, False),
                _ratio(r.points_games_ratio),
                _rate(r.win_plain),
                _ci(r.win_plain_lo, r.win_plain_hi, 1, True),
                _rate(r.win_adjusted),
                _ci(r.win_adjusted_lo, r.win_adjusted_hi, 1, True),
                _ratio(r.win_games_ratio),
            ]
        )
    return Table(head, rows, "llrrrrrrrrrrr")


def results_text(res: pd.DataFrame) -> str:
    """The results as terminal lines (aligned columns)."""
    t = results_table(res)
    cells = [list(t.head)] + [[str(c) for c in row] for row in t.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(t.head))]
    return "\n".join(
        "  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, t.align, strict=True))
        for row in cells
    )


def per_bot_text(per_bot: pd.DataFrame) -> str:
    """Each bot's luck per game and per hand, as terminal lines."""
    w = text_width(per_bot["bot"], 18)
    lines = [f"{'bot':<{w}} {'games':>8} {'hands':>9} {'luck pts/game':>13} {'pts/hand':>9} {'win chance/game':>15}"]
    for r in per_bot.itertuples():
        lines.append(
            f"{str(r.bot):<{w}} {r.games:>8,} {r.hands:>9,} {r.luck_points_per_game:>+13.2f} "
            f"{r.luck_points_per_hand:>+9.2f} {100 * r.luck_win_per_game:>+14.2f}%"
        )
    return "\n".join(lines)


def luck_section(run: Path, run_games: int | None = None) -> tuple[list[str], list[str]]:
    """The report's section (Markdown lines, HTML lines); empty when the run has no luck table.

    ``run_games``: the games the report counts; a luck table measured before later games were played
    (a bot added, a run continued) says how many of them it covers."""
    from arena.analysis.luck import LuckError, stored_results  # its kernels load only for a run that has one

    try:
        res = stored_results(run)
    except LuckError as exc:
        note = f"The stored luck table is not shown: {exc}"
        return ["## Luck-adjusted results", "", note, ""], [
            "<h2>Luck-adjusted results</h2>",
            f"<p>{html.escape(note)}</p>",
        ]
    if res is None or res.empty:
        return [], []
    t = results_table(res)
    what = what_it_does(res)
    md = ["## Luck-adjusted results", "", what, ""]
    h = ["<h2>Luck-adjusted results</h2>", f"<p>{html.escape(what)}</p>"]
    measured = int(res.drop_duplicates("matchup")["games"].sum())
    if run_games is not None and measured < run_games:
        note = (
            f"This table measures {measured:,} of the run's {run_games:,} games: run `arena luck` again "
            "to measure the games played since."
        )
        md += [note, ""]
        h.append(f"<p><b>{html.escape(note)}</b></p>")
    return md + [md_table(t), ""], h + [html_table(t)]
