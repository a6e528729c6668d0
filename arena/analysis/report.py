"""Reports of a tournament run, regenerated from the stored results alone.

:func:`write_report` reads a run folder through :class:`arena.run.store.RunStore`,
one chunk at a time, folds every chunk into a
:class:`~arena.analysis.summary.Summary` (per-matchup sums and per-bot
histograms, see that module for why this is exact), and writes, into the
same folder:

* ``report.md``    - Markdown summary, figures linked from ``plots/``;
* ``report.html``  - the same, self-contained (figures embedded as base64 PNG);
* ``leaderboard.csv`` - one row per bot (:func:`arena.analysis.stats.leaderboard`);
* ``pairs.csv``    - one row per matchup (:func:`arena.analysis.stats.pair_stats`);
* ``plots/<kind>.png`` - every figure of :mod:`arena.analysis.plots`.

No table of all games (or hands) is ever built, so the memory a report needs
does not grow with the run.  Nothing is taken from the process that played
the games, so a report can be rebuilt at any time
(``write_report(Path("results/my-run"))``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.analysis import plots
from arena.analysis import stats as st
from arena.analysis.luck_report import luck_section
from arena.analysis.render import (
    Bold,
    Table,
    csv_text,
    html_figure,
    html_page,
    html_table,
    html_text,
    md_code,
    md_escape,
    md_figure,
    md_table,
    md_text,
    own_folder,
    write_file,
)
from arena.analysis.summary import Summary, summarize_run
from arena.analysis.tally import Tally, tally_of
from arena.analysis.variance import COVARIATES, PAIRS_TO_ADJUST
from arena.run.store import RunStore, StoreError

__all__ = ["ReportError", "load_summary", "write_report", "plot_run"]

Progress = Callable[[int, int], None]


class ReportError(ValueError):
    """A run folder that cannot be reported on (missing, empty, unreadable); one line."""


# --- loading ------------------------------------------------------------------------


def _open(run_dir: str | Path) -> RunStore:
    run = Path(run_dir)
    try:
        return RunStore(run)
    except StoreError as exc:
        msg = str(exc)
        raise ReportError(msg if str(run) in msg else f"run folder {run}: {msg}") from None


def load_summary(
    run_dir: str | Path, progress: Progress | None = None, *, hands: bool | None = None
) -> tuple[Summary, dict[str, Any]]:
    """``(summary, meta)`` of a run folder, streamed chunk by chunk; :class:`ReportError` if unusable.

    ``meta`` holds ``name``, and when present ``config`` / ``rules`` (TOML
    text) and ``manifest`` (parsed JSON).  ``hands``: summarise the hands
    too (default: when the run recorded them).  ``progress(chunks done,
    chunks in all)`` is called after each chunk.
    """
    run = Path(run_dir)
    store = _open(run)
    try:
        summary = summarize_run(store, progress, hands=hands)
        meta = store.meta()
        meta["problems"] = list(getattr(store, "problems", []))  # chunks left out: failed their checksum
    except StoreError as exc:
        raise ReportError(f"run folder {run}: {exc}") from None
    if summary.n_games == 0:
        raise ReportError(f"run folder {run} holds no games (nothing to report)")
    return summary, meta


def plot_run(run_dir: str | Path, kind: str, *, anchor: str | None = None) -> Path:
    """Draw one figure (:data:`arena.analysis.plots.KINDS`) of a run into ``<run>/plots/<kind>.png``."""
    if kind not in plots.KINDS:
        raise ValueError(f"unknown plot '{kind}' (kinds: {', '.join(plots.KINDS)})")
    summary, _ = load_summary(run_dir, hands=None if kind in ("scores", "lengths") else False)
    return plots.plot(kind, summary, None, own_folder(Path(run_dir) / "plots") / f"{kind}.png", anchor=anchor)


# --- formatting -----------------------------------------------------------------------


def _f(x: Any, digits: int = 1, sign: bool = False) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def _pct(x: Any, digits: int = 1) -> str:
    v = float(x)
    return "-" if math.isnan(v) else f"{100 * v:.{digits}f}%"


def _ci(lo: Any, hi: Any, digits: int = 1, pct: bool = False, sign: bool = False) -> str:
    if pct:
        return f"[{_pct(lo, digits)}, {_pct(hi, digits)}]" if np.isfinite(lo) else "-"
    return f"[{_f(lo, digits, sign)}, {_f(hi, digits, sign)}]" if np.isfinite(lo) or np.isfinite(hi) else "-"


def _int(x: Any) -> str:
    return f"{int(x):,}"


def _pval(p: Any) -> str:
    v = float(p)
    if math.isnan(v):
        return "-"
    return "<1e-300" if v == 0 else f"{v:.2g}" if v < 0.001 else f"{v:.3f}"


# --- the tables of the report ---------------------------------------------------------------

#: Under a table whose margin (or points) figures include forfeited games.  A forfeit is stored 0-0, so a
#: bot that forfeits every game showed a margin of +0.0, better than a bot that played and lost.
FORFEIT_NOTE = (
    "*: forfeited games count 0–0 in this figure, so a bot that forfeits looks nearer even than it played and "
    "its opponents' margins shrink; -: every game was forfeited (the forfeits column and the win rate count "
    "them as losses)."
)


def _forfeited(ps: pd.DataFrame) -> tuple[dict[str, int], dict[str, int]]:
    """Games ended by a forfeit, of each matchup and of each bot (either side forfeiting; self-play left out)."""
    per_matchup = {str(r.matchup): int(r.forfeits_a + r.forfeits_b) for r in ps.itertuples(index=False)}
    per_bot: dict[str, int] = {}
    for r in ps.itertuples(index=False):
        if r.bot_a != r.bot_b:
            for b in (str(r.bot_a), str(r.bot_b)):
                per_bot[b] = per_bot.get(b, 0) + int(r.forfeits_a + r.forfeits_b)
    return per_matchup, per_bot


def _marked(text: str, forfeited: int, games: int) -> str:
    """A margin or points figure with its :data:`FORFEIT_NOTE` mark: ``*`` when forfeits count 0-0 in it,
    ``-`` when every game was forfeited (the figure then says nothing of play)."""
    if forfeited and forfeited >= games:
        return "-"
    return f"{text}*" if forfeited else text


def _level(conf: float) -> str:
    """An interval's level as the tables name it: 0.95 -> "95%", 0.999 -> "99.9%"."""
    return f"{100 * conf:g}%"


def _leaderboard_table(lb: pd.DataFrame, forfeited: dict[str, int] | None = None, conf: float = 0.95) -> Table:
    ci = f"{_level(conf)} CI"
    head = ["#", "bot", "Elo", ci, "games", "W-L-D", "win rate", ci, "pts/hand", "margin/game", "forfeits"]
    rows = []
    for r in lb.itertuples(index=False):
        lost = (forfeited or {}).get(str(r.bot), 0)
        rows.append(
            [
                str(r.rank),
                str(r.bot),
                _f(r.elo, 0, True),
                _ci(r.elo_ci_low, r.elo_ci_high, 0, sign=True),
                _int(r.games),
                f"{r.wins:,}-{r.losses:,}-{r.draws:,}",
                _pct(r.win_rate),
                _ci(r.win_rate_ci_low, r.win_rate_ci_high, pct=True),
                _marked(_f(r.points_per_hand, 2), lost, int(r.games)),
                _marked(_f(r.margin, 1, True), lost, int(r.games)),
                _int(r.forfeits),
            ]
        )
    return Table(head, rows, "rlrrrrrrrrr")


def _style_table(lb: pd.DataFrame) -> Table:
    has_h = "points_per_hand_won" in lb.columns
    head = [
        "bot",
        "hands",
        "hands won",
        "knock",
        "gin",
        "big gin",
        "undercut won",
        "undercut suffered",
        "dead",
        "forfeit",
        "turns/hand",
        "knock deadwood",
        "discards taken by opp.",
    ]
    if has_h:
        head += ["pts/hand won", "pts/hand lost"]
    rows = []
    for r in lb.itertuples(index=False):
        row = [
            str(r.bot),
            _int(r.hands),
            _pct(r.hand_win_rate),
            _pct(r.knock_rate),
            _pct(r.gin_rate, 2),
            _pct(r.big_gin_rate, 2),
            _pct(r.undercut_won_rate, 2),
            _pct(r.undercut_suffered_rate, 2),
            _pct(r.dead_rate, 2),
            _pct(r.forfeit_rate, 2),
            _f(r.turns_per_hand, 1),
            _f(r.knock_deadwood, 2),
            _pct(r.discard_take_rate),
        ]
        if has_h:
            row += [_f(r.points_per_hand_won, 1), _f(r.points_per_hand_lost, 1)]
        rows.append(row)
    return Table(head, rows, "l" + "r" * (len(head) - 1))


def _pairs_table(ps: pd.DataFrame, conf: float = 0.95) -> Table:
    head = [
        "matchup",
        "games",
        "W-L-D (first bot)",
        "win rate",
        f"{_level(conf)} CI",
        "Elo diff",
        "sweeps",
        "sign test p",
        "margin/game",
        f"{_level(conf)} CI",
    ]
    rows = []
    for r in ps.itertuples(index=False):
        lost = int(r.forfeits_a + r.forfeits_b)
        rows.append(
            [
                str(r.matchup),
                _int(r.games),
                f"{r.wins_a:,}-{r.wins_b:,}-{r.draws:,}",
                _pct(r.win_rate_a),
                _ci(r.win_rate_ci_low, r.win_rate_ci_high, pct=True),
                _f(r.elo_diff, 0, True),
                f"{r.sweeps_a:,}:{r.sweeps_b:,}",
                _pval(r.sign_p),
                _marked(_f(r.margin, 1, True), lost, int(r.games)),
                _marked(_ci(r.margin_ci_low, r.margin_ci_high, 1, sign=True), lost, int(r.games)),
            ]
        )
    return Table(head, rows, "lrrrrrrrrr")


def _first_mover_table(fm: pd.DataFrame, conf: float = 0.95) -> Table:
    ci = f"{_level(conf)} CI"
    head = ["matchup", "decided hands", "non-dealer share", ci, "games won", "first non-dealer share", ci]
    rows = []
    for r in fm.itertuples(index=False):
        rows.append(
            [
                str(r.matchup),
                _int(r.decided_hands),
                _pct(r.nondealer_share),
                _ci(r.ci_low, r.ci_high, pct=True),
                _int(r.games),
                _pct(r.first_nondealer_share),
                _ci(r.game_ci_low, r.game_ci_high, pct=True),
            ]
        )
    return Table(head, rows, "lrrrrrr")


def _manifest_lines(manifest: Any) -> list[tuple[str, str]]:
    if not isinstance(manifest, dict):
        return []
    out = []
    for k, v in manifest.items():
        if isinstance(v, (str, int, float, bool)) or v is None:
            out.append((str(k), str(v)))
        elif isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v) and len(v) <= 20:
            out.append((str(k), ", ".join(map(str, v))))
    return out


def _error_summary(summary: Summary, limit: int = 8) -> list[tuple[str, int]]:
    return [(str(k), int(v)) for k, v in summary.errors.most_common(limit)]


METHODS = [
    "Game score: win 1, loss 0, no winner 0.5; a game with an error and no winner is left out. "
    "A forfeit is a loss for the bot that forfeited.",
    "Intervals are 95% and pair-clustered: the two games of a duplicate pair (same deal, seats swapped) are one "
    "sampling unit; a bot's figures over its matchups, the ratings and the run's first-mover row are clustered on "
    "the pair number (with shared deals, one deal in every matchup). Per-hand rates and margins use the cluster-"
    "robust ratio estimator with a Student t interval; win rates and shares use the modified Wilson interval "
    "(Brown, Cai and DasGupta) on its effective sample size: Wilson's score interval, which stays inside 0-100% and"
    " is never a point after a clean sweep, with the exact one-sided binomial bound near 0% and 100%, where "
    "Wilson's alone covers only about 84% when a bot wins once or twice.",
    "Sign test: exact two-sided binomial test (p = 1/2) over the pairs one bot won both games of.",
    "Ratings: Bradley-Terry (logistic Elo) maximum likelihood over all games, one virtual drawn game per matchup as "
    "a prior (keeps a clean sweep finite), deal-clustered sandwich standard errors, normal 95% interval. With the "
    "mean as the anchor, a bot's interval is for comparing it with another bot: its standard error is its quasi "
    "standard error (Firth and de Menezes), whose squares add up to the variance of the difference of two ratings "
    "(the facts say how closely), so two bots whose intervals do not overlap differ; with a bot as the anchor, each "
    "interval is the difference from that bot.",
    "Per-hand rates divide by the hands the bot played; knock deadwood is the mean deadwood over its knocks that "
    "were not gin; 'discards taken by opp.' is the share of its discards the opponent picked up.",
    "Non-dealer share: hands won by the non-dealer (who moves first) over hands someone won.",
]


#: METHODS' words for duplicate pairs, and what a run without them says instead: there each game is its own
#: sampling unit (the store gives each game a pair of its own), and no pair was won twice.
_UNPAIRED = (
    (
        "Intervals are 95% and pair-clustered: the two games of a duplicate pair (same deal, seats swapped) are one "
        "sampling unit;",
        "Intervals are 95%: this run has no duplicate pairs, so each game is its own sampling unit;",
    ),
    (
        "over the pairs one bot won both games of.",
        "over the pairs one bot won both games of (none here: the run has no duplicate pairs).",
    ),
)


def _paired(ps: pd.DataFrame) -> bool:
    """Whether the run's sampling units are duplicate pairs: without them each game is its own unit (as
    many units as games), and the report's words for pairs claimed a pairing the run did not have."""
    return ps.empty or bool((ps["pairs"] < ps["games"]).any())


def _methods(conf: float, paired: bool = True) -> list[str]:
    """:data:`METHODS` at the tables' level ``conf`` (the figures are drawn at 95% whatever it is), worded
    for a run without duplicate pairs when ``paired`` is False."""
    out = list(METHODS)
    if not paired:
        for old, new in _UNPAIRED:
            out = [m.replace(old, new) for m in out]
    if conf == 0.95:
        return out
    lv = _level(conf)
    return [
        m.replace("Intervals are 95%", f"Intervals are {lv} (the figures': 95%)").replace(
            "normal 95% interval", f"normal {lv} interval"
        )
        for m in out
    ]


def _build(
    run: Path, p: Summary, meta: dict[str, Any], anchor: str | None, conf: float, cv: Table | None = None
) -> tuple[str, str, dict[str, Path]]:
    if anchor is not None and anchor not in p.bots:
        raise ReportError(
            f"run folder {run}: anchor bot '{anchor}' did not play in this run (bots: {', '.join(p.bots)})"
        )
    lb = st.leaderboard(p, anchor=anchor, conf=conf)
    ps = st.pair_stats(p, conf)
    fm = st.first_mover(p, conf)
    files: dict[str, Path] = {}
    files["leaderboard"] = run / "leaderboard.csv"
    write_file(files["leaderboard"], csv_text(lb))
    files["pairs"] = run / "pairs.csv"
    write_file(files["pairs"], csv_text(ps))
    figs: dict[str, Path] = {}
    folder = own_folder(run / "plots")
    for kind in plots.KINDS:
        figs[kind] = plots.plot(kind, p, None, folder / f"{kind}.png", anchor=anchor)
        files[f"plot_{kind}"] = figs[kind]

    name = meta["name"]
    n_games = p.n_games
    n_hands = p.n_hands
    n_void = n_games - int(p.total("valid"))
    paired = _paired(ps)
    anchor_txt = f"'{anchor}' = 0" if anchor else "mean of all bots = 0"
    anchor_fact = anchor_txt
    if not anchor and len(lb) > 2:
        anchor_fact += (
            "; intervals compare two bots (quasi standard errors: a difference's error within "
            f"{100 * lb.attrs.get('quasi_error', 0.0):.0f}%)"
        )
    facts = [
        ("bots", str(len(p.bots))),
        ("matchups", str(len(p.matchups))),
        ("games", f"{n_games:,}" + (f" ({n_void:,} without a result)" if n_void else "")),
        (
            ("duplicate pairs", f"{int(ps['pairs'].sum()):,} ({int(ps['complete_pairs'].sum()):,} complete)")
            if paired
            else ("duplicate pairs", "none: each game is its own sampling unit")
        ),
        ("hands", f"{n_hands:,}" + ("" if p.has_hands else " (no hands recorded: per-hand figures use game totals)")),
        ("games with an error", f"{int(p.total('errors')):,}"),
        ("rating anchor", anchor_fact),
    ]
    stored = meta.get("manifest")
    manifest = stored if isinstance(stored, dict) else {}
    if manifest.get("stopped_early"):
        facts.insert(0, ("stopped early", str(manifest["stopped_early"])))
    status = manifest.get("status")
    if status == "running" and "held_by" in meta and meta["held_by"] is None:
        # the manifest is written "running" when a run begins; a run killed outright never rewrites it
        status = "interrupted (no run holds the folder; resume with the same command)"
    if status and status != "complete":
        facts.insert(0, ("run status", str(status)))
    listed = manifest.get("bots")
    bots_run: dict[str, Any] = listed if isinstance(listed, dict) else {}
    weak = sorted(n for n, b in bots_run.items() if isinstance(b, dict) and b.get("sandbox") == "weak")
    if weak:
        facts.insert(0, ("sandbox", f"WEAK (no namespaces, no separate user) for {', '.join(weak)}"))
    mani = _manifest_lines(meta.get("manifest"))
    warns = []
    sw = ps[(ps["games"] > 0) & ((ps["win_rate_a"] >= 1.0) | (ps["win_rate_a"] <= 0.0))]
    if len(sw):
        warns.append(
            f"{len(sw)} matchup(s) were won by one bot in every game ({', '.join(sw['matchup'].head(6))}"
            f"{', ...' if len(sw) > 6 else ''}): their Elo gap is set by the prior and is a lower bound."
        )
    bt_attrs = lb.attrs
    if bt_attrs.get("components", 1) > 1:
        warns.append(
            f"the bots form {bt_attrs['components']} groups that never met: ratings are comparable only within a group."
        )
    problems = meta.get("problems") or []
    if problems:
        warns.append(
            f"{len(problems)} stored chunk(s) failed their checksum and are left out: "
            f"{'; '.join(problems[:3])}{'; ...' if len(problems) > 3 else ''}"
        )
    selfp = p.n_selfplay
    if selfp:
        warns.append(f"{selfp:,} self-play games are in the pairs table but not in the per-bot figures.")
    errs = _error_summary(p)
    best = lb.iloc[0] if len(lb) else None

    forfeited_m, forfeited_b = _forfeited(ps)
    tables = {
        "leaderboard": _leaderboard_table(lb, forfeited_b, conf),
        "style": _style_table(lb),
        "pairs": _pairs_table(ps, conf),
        "first": _first_mover_table(fm, conf),
    }
    captions = {
        "heatmap": "Win rate of each bot (row) against each opponent (column).",
        "ratings": f"Bradley-Terry ratings with 95% {'' if anchor else 'comparison '}intervals (anchor: {anchor_txt}).",
        "outcomes": "How each bot's hands ended.",
        "scores": "Points per hand won and lost, and final game margins, per bot.",
        "lengths": "Turns per hand and hands per game, per bot.",
        "convergence": "Running win rate of each matchup with its 95% band: has the estimate settled?",
    }
    fm_all = fm[fm["matchup"] == "all"].iloc[0]
    headline: list[str] = []
    if best is not None:
        headline += [
            "Top of the table: ",
            Bold(best["bot"]),
            f" at {_f(best['elo'], 0, True)} Elo ({_ci(best['elo_ci_low'], best['elo_ci_high'], 0, sign=True)}), "
            f"win rate {_pct(best['win_rate'])} against the field. ",
        ]
    headline.append(
        f"The non-dealer won {_pct(fm_all['nondealer_share'])} of decided hands "
        f"({_ci(fm_all['ci_low'], fm_all['ci_high'], pct=True)})."
    )

    # --- markdown
    md = [f"# Tournament report: {md_escape(name)}", ""]
    md += [md_text(headline), ""]
    md += ["## Run", ""] + [f"- {md_text([Bold(k), f': {v}'])}" for k, v in facts] + [""]
    if mani:
        md += ["### Manifest", ""] + [f"- {md_escape(k)}: {md_escape(v)}" for k, v in mani] + [""]
    if warns:
        md += ["**Notes**", ""] + [f"- {md_escape(w)}" for w in warns] + [""]

    def fig(kind: str) -> list[str]:
        return md_figure(kind, f"plots/{kind}.png", captions[kind])

    forfeit_md = [md_escape(FORFEIT_NOTE), ""] if any(forfeited_m.values()) else []
    md += ["## Leaderboard", "", md_table(tables["leaderboard"]), "", *forfeit_md, *fig("ratings")]
    md += ["## Matchups", "", md_table(tables["pairs"]), "", *forfeit_md, *fig("heatmap"), *fig("convergence")]
    if cv is not None:
        md += [
            "## Fewer games for the same certainty: the deal control variate",
            "",
            cv_text(paired),
            "",
            md_table(cv),
            "",
        ]
        md += forfeit_md
    md += ["## Play style (per hand played)", "", md_table(tables["style"]), ""]
    md += [*fig("outcomes"), *fig("scores"), *fig("lengths")]
    md += ["## First-mover effect", "", md_table(tables["first"]), ""]
    if errs:
        md += ["## Errors", ""] + [f"- {n:,} x {md_escape(e)}" for e, n in errs] + [""]
    dec_md, dec_html = _decisions_section(run, p.n_games)
    md += dec_md
    luck_md, luck_html = luck_section(run, p.n_games)
    md += luck_md
    md += ["## Methods", ""] + [f"- {m}" for m in _methods(conf, paired)] + [""]
    for key, label in (("rules", "rules.toml"), ("config", "config.toml")):
        if key in meta:
            md += [f"## {label}", "", md_code(meta[key].rstrip(), "toml"), ""]
    md_page = "\n".join(md)

    # --- html
    def img(kind: str) -> str:
        return html_figure(kind, figs[kind], captions[kind])

    h = [
        f"<h1>Tournament report: {html.escape(name)}</h1>",
        f"<p class=lead>{html_text(headline)}</p>",
        "<h2>Run</h2>",
        "<ul>" + "".join(f"<li>{html_text([Bold(k), f': {v}'])}</li>" for k, v in facts) + "</ul>",
    ]
    if mani:
        h += [
            "<h3>Manifest</h3>",
            "<ul>" + "".join(f"<li>{html.escape(k)}: {html.escape(v)}</li>" for k, v in mani) + "</ul>",
        ]
    if warns:
        h += [
            '<div class="note"><b>Notes</b><ul>' + "".join(f"<li>{html.escape(w)}</li>" for w in warns) + "</ul></div>"
        ]
    forfeit_h = [f"<p>{html.escape(FORFEIT_NOTE)}</p>"] if any(forfeited_m.values()) else []
    h += ["<h2>Leaderboard</h2>", html_table(tables["leaderboard"]), *forfeit_h, img("ratings")]
    h += ["<h2>Matchups</h2>", html_table(tables["pairs"]), *forfeit_h, img("heatmap"), img("convergence")]
    if cv is not None:
        h += [
            "<h2>Fewer games for the same certainty: the deal control variate</h2>",
            f"<p>{html.escape(cv_text(paired))}</p>",
        ]
        h += [html_table(cv), *forfeit_h]
    h += [
        "<h2>Play style (per hand played)</h2>",
        html_table(tables["style"]),
        img("outcomes"),
        img("scores"),
        img("lengths"),
    ]
    h += ["<h2>First-mover effect</h2>", html_table(tables["first"])]
    h += [
        "<h2>Looking at one game</h2>",
        "<p>Step through any game action by action, both hands shown, in your browser: "
        f"<code>arena view {html.escape(str(run))} --game N</code> (it serves the viewer on "
        "<code>http://127.0.0.1:8766/view</code>; the report itself links nowhere); as text: "
        f"<code>arena replay {html.escape(str(run))} --game N</code>. Game ids are the <code>game_id</code> "
        "column of <code>games/</code>.</p>",
    ]
    if errs:
        h += [
            "<h2>Errors</h2>",
            "<ul>" + "".join(f"<li>{n:,} &times; {html.escape(e)}</li>" for e, n in errs) + "</ul>",
        ]
    h += dec_html
    h += luck_html
    h += ["<h2>Methods</h2>", "<ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in _methods(conf, paired)) + "</ul>"]
    for key, label in (("rules", "rules.toml"), ("config", "config.toml")):
        if key in meta:
            h += [f"<h2>{label}</h2>", f"<pre>{html.escape(meta[key].rstrip())}</pre>"]
    return md_page, html_page(f"Tournament report: {name}", h, _CSS), files


def _decisions_section(run: Path, run_games: int | None = None) -> tuple[list[str], list[str]]:
    """The section of ``arena analyze``'s results (Markdown lines, HTML lines); empty without an analysis.
    ``run_games``: the games the report counts, to say how many of them were graded."""
    import base64

    from arena.analysis.decisions import report_data

    d = report_data(run)
    if d is None:
        return [], []
    info = d.info
    hind = (
        " HINDSIGHT: every option was rolled out on the true hidden cards (not a fair grade)."
        if info.get("perfect")
        else ""
    )
    intro = (
        f"Every decision of {info.get('bot') or 'every bot'} in {d.games:,} games"
        + (f" (of the run's {run_games:,})" if run_games is not None and d.games < run_games else "")
        + ", graded by "
        f"`arena analyze` at {info['samples']} sampled deals per decision (seed {info['seed']}): each legal option is "
        "rolled out on the same deals drawn from the bot's own view, and valued as the chance of winning the game. "
        "Loss = best option's equity minus the chosen one's; error rate = mean loss per decision in thousandths of a "
        f"game (x1000). Doubtful: loss >= {info['doubtful']:g}; blunder: >= {info['blunder']:g}. Intervals: 95%, "
        f"clustered by game.{hind}"
    )
    head = ["bot", "kind", "decisions", "error x1000", "95% CI", "doubtful", "blunders", "loss/game x1000"]
    rows = [
        [
            r.bot,
            r.kind.replace("_", " "),
            _int(r.decisions),
            _f(r.error_rate, 2),
            _ci(r.ci_low, r.ci_high, 2),
            _int(r.doubtful),
            _int(r.blunders),
            _f(r.per_game_loss, 1),
        ]
        for r in d.rates.itertuples()
    ]
    table = Table(head, rows, "llrrrrrr")
    img = base64.b64encode(d.plot.read_bytes()).decode("ascii")
    md = ["## Why bots lose: every decision graded", "", intro, "", md_table(table), ""]
    md += [f"![decisions](plots/{d.plot.name})", ""]
    h = ["<h2>Why bots lose: every decision graded</h2>", f"<p>{html.escape(intro)}</p>", html_table(table)]
    h += [f'<figure><img alt="decisions" src="data:image/png;base64,{img}"></figure>']
    if len(d.worst):
        md += [f"### The {len(d.worst)} worst decisions", ""]
        h += [
            f"<h3>The {len(d.worst)} worst decisions</h3>",
            "<p>Each links to the viewer at that step; start it first with "
            f"<code>arena view {html.escape(str(run))} --game N</code>.</p>",
            "<table><thead><tr><th>game</th><th>step</th><th>bot</th><th>kind</th><th>chose</th><th>best</th>"
            '<th class="r">loss x1000</th><th class="r">&plusmn; se</th><th>viewer</th></tr></thead><tbody>',
        ]
        md += ["| game | step | bot | kind | chose | best | loss x1000 | viewer |", "|--:|--:|:--|:--|:--|:--|--:|:--|"]
        for r in d.worst.itertuples():
            url = f"http://127.0.0.1:8766/view?game={int(r.game_id)}#step={int(r.view_step)}"
            cmd = f"arena view {run} --game {int(r.game_id)}"
            md.append(
                f"| {int(r.game_id)} | {int(r.view_step) + 1} | {r.bot} | {r.kind} | {r.chosen_text} | {r.best_text} "
                f"| {1000 * r.loss:.1f} | [step {int(r.view_step) + 1}]({url}) (`{cmd}`) |"
            )
            h.append(
                f"<tr><td>{int(r.game_id)}</td><td>{int(r.view_step) + 1}</td><td>{html.escape(str(r.bot))}</td>"
                f"<td>{html.escape(str(r.kind))}</td><td>{html.escape(str(r.chosen_text))}</td>"
                f'<td>{html.escape(str(r.best_text))}</td><td class="r">{1000 * r.loss:.1f}</td>'
                f'<td class="r">{1000 * r.loss_se:.1f}</td><td><a href="{html.escape(url)}" '
                f'title="{html.escape(cmd)}">step {int(r.view_step) + 1}</a></td></tr>'
            )
        h.append("</tbody></table>")
        md.append("")
    return md, h


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#212529;overflow-wrap:anywhere}
h1{border-bottom:2px solid #dee2e6;padding-bottom:.3em}h2{margin-top:1.8em;border-bottom:1px solid #e9ecef}
table{border-collapse:collapse;margin:1em 0;font-size:.9em;display:block;max-width:100%;overflow-x:auto}th,td{padding:.3em .6em;border-bottom:1px solid #dee2e6;text-align:left}
th{background:#f1f3f5}th,td{overflow-wrap:normal}td.r{white-space:nowrap}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}tbody tr:hover{background:#f8f9fa}
figure{margin:1.2em 0}img{max-width:100%;height:auto}figcaption{color:#495057;font-style:italic}
.lead{font-size:1.1em}.note{background:#fff9db;border-left:4px solid #fab005;padding:.5em 1em}
pre{background:#f8f9fa;padding:.8em;overflow:auto;max-width:100%}
@media (max-width:600px){body{margin:1em auto;padding:0 .6em}table{font-size:.8em}th,td{padding:.25em .4em}}
"""  # noqa: E501 (one CSS rule set per line)


CV_TEXT = (
    "Raw: the mean points margin per game of the first bot (pair-clustered t interval, as in the matchups "
    "table). Adjusted: the same after subtracting beta . z per duplicate pair, where z sums over the games' hands "
    "the difference between the seats' dealt deadwood, deadwood with the upcard, outs and knock-readiness "
    "(recomputed from the stored seeds; mean exactly 0), and beta is cross-fitted (each half of the pairs is "
    "adjusted with the beta fitted on the other half), so the adjusted estimate is unbiased. VRF = raw variance / "
    "adjusted variance; equivalent games = games x VRF: the raw estimate would need that many games for the "
    f"adjusted interval's width. A matchup of fewer than {PAIRS_TO_ADJUST} pairs has too few to fit beta's "
    f"{len(COVARIATES)} slopes: it is not adjusted, and its adjusted columns show 'not adjusted' and '-'."
)


def cv_text(paired: bool = True) -> str:
    """:data:`CV_TEXT`, worded for a run without duplicate pairs when ``paired`` is False: there the unit the
    adjustment, the folds and the least number to fit are counted in is the game."""
    if paired:
        return CV_TEXT
    return (
        CV_TEXT.replace("pair-clustered t interval", "t interval over the games")
        .replace("per duplicate pair", "per game (the run has no duplicate pairs: each game is its own unit)")
        .replace("each half of the pairs", "each half of the games")
        .replace(f"fewer than {PAIRS_TO_ADJUST} pairs", f"fewer than {PAIRS_TO_ADJUST} games")
    )


def _cv_table(tally: Tally, order: list[str], conf: float) -> Table | None:
    """Raw and control-variate-adjusted margins per matchup, in play order (None when unavailable); the
    margins marked as in the matchups table when forfeits count 0-0 in them (:data:`FORFEIT_NOTE`)."""
    if not tally.cv:
        return None
    ci = f"{_level(conf)} CI"
    head = ["matchup", "margin/game", ci, "adjusted", ci, "VRF", "equivalent games"]
    ps = st.pair_stats(tally.summary, conf)
    forfeited, _ = _forfeited(ps)
    n_games = dict(zip(ps["matchup"], ps["games"]))
    rows = []
    for m in sorted(tally.cv, key=lambda m: order.index(m) if m in order else len(order)):
        e = tally.cv[m].estimate("margin", conf)
        lost, games = forfeited.get(m, 0), int(n_games.get(m, 0))
        if lost and lost >= games:  # every game forfeited: no margin of play to adjust
            rows.append([m, "-", "-", "-", "-", "-", "-"])
            continue
        raw = [m, _marked(_f(e.raw, 2, True), lost, games), _marked(_ci(e.raw_lo, e.raw_hi, 2, sign=True), lost, games)]
        if not e.adjusted:  # the raw estimate again, and a VRF of 1 by construction: not a measurement
            rows.append([*raw, "not adjusted", "-", "-", "-"])
            continue
        rows.append(
            [
                *raw,
                _marked(_f(e.adj, 2, True), lost, games),
                _marked(_ci(e.adj_lo, e.adj_hi, 2, sign=True), lost, games),
                _f(e.vrf, 3),
                _int(e.equivalent_games) if np.isfinite(e.equivalent_games) else "-",
            ]
        )
    return Table(head, rows, "lrrrrrr")


def write_report(
    run_dir: str | Path,
    *,
    anchor: str | None = None,
    conf: float = 0.95,
    progress: Progress | None = None,
    tally: Tally | None = None,
) -> dict[str, Path]:
    """Write report.md, report.html, leaderboard.csv, pairs.csv and plots/*.png into the run folder.

    Reads the run through its store in one pass, one chunk at a time (memory does not grow with the
    run), plus config.toml / rules.toml / manifest.json; or nothing but those when ``tally`` (a
    :class:`~arena.analysis.tally.Tally` the run fed as it played) holds every chunk the store counts.
    ``anchor`` names the bot rated 0 (default: the mean of all bots is 0).
    ``progress(chunks done, chunks in all)`` is called as chunks are read.
    Returns the files written: keys ``report_md``, ``report_html``,
    ``leaderboard``, ``pairs`` and ``plot_<kind>`` for every figure.  Raises
    :class:`ReportError` (a ValueError, one line) naming the folder when it
    is missing, not a run folder, or holds no games.
    """
    run = Path(run_dir)
    store = _open(run)
    try:
        t, _ = tally_of(store, tally, progress)
        meta = store.meta()
        meta["problems"] = list(getattr(store, "problems", []))  # chunks left out: failed their checksum
        meta["held_by"] = store.holder()  # a "running" manifest with no live run is an interrupted run
        order = [m.name for m in store.matchups()]
    except StoreError as exc:
        raise ReportError(f"run folder {run}: {exc}") from None
    summary = t.summary
    if summary.n_games == 0:
        raise ReportError(f"run folder {run} holds no games (nothing to report)")
    cv = _cv_table(t, order, conf) if summary.has_hands else None
    md, page, files = _build(run, summary, meta, anchor, conf, cv)
    files["report_md"] = run / "report.md"
    write_file(files["report_md"], md)
    files["report_html"] = run / "report.html"
    write_file(files["report_html"], page)
    return files
