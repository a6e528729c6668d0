"""A sweep's files: sweep.csv, best.csv, its figures and report.md / report.html.

Tables, prose and figures go through :mod:`arena.analysis.render` (escaped:
bot names and rules labels come from the sweep file); the figures are drawn
by :func:`arena.analysis.plots.sweep_figures`.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.analysis import plots
from arena.analysis.render import (
    Bold,
    Table,
    csv_text,
    html_figure,
    html_page,
    html_table,
    html_text,
    md_escape,
    md_figure,
    md_table,
    md_text,
    own_folder,
    write_file,
)
from arena.analysis.variance import COVARIATES, PAIRS_TO_ADJUST

if TYPE_CHECKING:
    from arena.analysis.sweep.analysis import SweepResult

__all__ = ["write_sweep_report"]


HOW = (
    "The best value has the highest field win rate (the mean over opponents), adjusted by the control variate. "
    "Each other point is compared with it on paired data: every grid point played the same deals, so per "
    "duplicate pair we take the difference of the two field scores (control-variate adjusted) and a 95% t "
    "interval of its mean; a point whose interval reaches 0 can't be told apart from the best (no correction "
    "for multiple comparisons). The control variate (arena/analysis/variance.py) subtracts beta . z from each "
    "pair's value, where z sums the difference of the two seats' dealt deadwood, deadwood with the upcard, "
    "outs and knock-readiness over the game's hands (mean exactly 0), and beta is cross-fitted: each half of "
    "the pairs is adjusted with the beta fitted on the other half. VRF = raw variance / adjusted variance; "
    f"equivalent games = games x VRF. Below {PAIRS_TO_ADJUST} pairs per grid point and opponent there are too few "
    f"to fit beta's {len(COVARIATES)} slopes: those estimates are not adjusted (the tables say so, the field "
    "figure draws the raw line only), and the best is chosen on the raw field win rate."
)

_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#212529}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.85em}th,td{border:1px solid #dee2e6;padding:.25em .5em}"
    "td.r,th.r{text-align:right}th{background:#f1f3f5}img{max-width:100%}"
)


def write_sweep_report(res: SweepResult) -> dict[str, Path]:
    """sweep.csv, best.csv, plots/*.png, report.md and report.html (figures embedded) in the sweep folder."""
    spec = res.spec
    files: dict[str, Path] = {}
    res.dir.mkdir(parents=True, exist_ok=True)
    files["csv"] = res.dir / "sweep.csv"
    write_file(files["csv"], csv_text(res.table))
    if len(res.best):
        files["best_csv"] = res.dir / "best.csv"
        write_file(files["best_csv"], csv_text(res.best))
    files.update(plots.sweep_figures(spec, res.table, res.best, own_folder(res.dir / "plots")))
    grid = ", ".join(f"{p} = {', '.join(f'{v:g}' for v in vals)}" for p, vals in spec.grid)
    fixed = f" (fixed: {', '.join(f'{k} = {v:g}' for k, v in spec.params.items())})" if spec.params else ""
    intro = [
        "Bot ",
        Bold(spec.bot),
        f" over {grid}{fixed}; against {', '.join(spec.opponents)}; rules: {', '.join(lab for lab, _ in spec.rules)}; "
        f"{spec.games:,} games per grid point and opponent (duplicate pairs), seed {spec.seed}.",
    ]
    best_lines: list[list[str]] = []
    for label, g in res.best.groupby("rules", sort=False) if len(res.best) else []:
        bb = g[g["best"]].iloc[0]
        tied = g[g["tied_with_best"] & ~g["best"]]
        pv = ", ".join(f"{p} = {bb[p]:g}" for p in spec.param_names)
        tv = "; ".join(", ".join(f"{p} = {r[p]:g}" for p in spec.param_names) for _, r in tied.iterrows()) or "none"
        raw = "" if bb.get("field_adjusted", True) else " (not adjusted: too few pairs)"
        best_lines.append(
            [
                Bold(str(label)),
                f": best {pv}, field win rate{raw} {bb['field_win_rate_adj']:.3f} "
                f"(95% CI {bb['field_win_rate_adj_ci_low']:.3f}..{bb['field_win_rate_adj_ci_high']:.3f}); "
                f"can't be told apart from it: {tv}.",
            ]
        )
    md = [f"# Sweep {md_escape(spec.name)}", "", md_text(intro), "", "## Best value", ""]
    md += [*[f"- {md_text(b)}" for b in best_lines], "", HOW, ""]
    page = [
        f"<h1>Sweep {html.escape(spec.name)}</h1>",
        f"<p>{html_text(intro)}</p>",
        "<h2>Best value</h2>",
        "<ul>" + "".join(f"<li>{html_text(b)}</li>" for b in best_lines) + "</ul>",
        f"<p>{html.escape(HOW)}</p>",
    ]
    for key in ("plot_field", "plot_curves") + tuple(k for k in files if k.startswith("plot_heatmap")):
        if key in files:
            md += md_figure(key, files[key].relative_to(res.dir))
            page.append(html_figure(key, files[key]))
    for title, table in _tables(res):
        md += [f"## {md_escape(title)}", "", md_table(table), ""]
        page += [f"<h2>{html.escape(title)}</h2>", html_table(table)]
    files["report_md"] = res.dir / "report.md"
    write_file(files["report_md"], "\n".join(md))
    files["report_html"] = res.dir / "report.html"
    write_file(files["report_html"], html_page(f"Sweep {spec.name}", page, _CSS))
    return files


def _fmt(v: Any, digits: int = 3) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else ""
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            return "-"
        return f"{v:.{digits}f}"
    return str(v)


def _tables(res: SweepResult) -> list[tuple[str, Table]]:
    """The report's tables, titled: the field and the best, every point, raw and adjusted estimates."""
    spec, t, b = res.spec, res.table, res.best
    ps = spec.param_names
    out: list[tuple[str, Table]] = []
    params = "r" * len(ps)
    head = ["rules", *ps, "field win rate", "95% CI", "adjusted", "95% CI", "behind best", "95% CI", "best / tied"]
    rows: list[list[str]] = []
    for _, r in b.iterrows():
        adjusted = (
            [
                _fmt(r["field_win_rate_adj"]),
                f"{r['field_win_rate_adj_ci_low']:.3f}..{r['field_win_rate_adj_ci_high']:.3f}",
            ]
            if r.get("field_adjusted", True)
            else ["not adjusted", "-"]  # the raw figures again: shown once, under their name
        )
        rows.append(
            [str(r["rules"]), *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps]]
            + [
                _fmt(r["field_win_rate"]),
                f"{r['field_win_rate_ci_low']:.3f}..{r['field_win_rate_ci_high']:.3f}",
                *adjusted,
                _fmt(r["behind_best"]),
                "-" if r["best"] else f"{r['behind_best_ci_low']:.3f}..{r['behind_best_ci_high']:.3f}",
                "best" if r["best"] else ("tied" if r["tied_with_best"] else ""),
            ]
        )
    out.append(("Win rate against the field, and the best value", Table(head, rows, "l" + params + "rrrrrrl")))
    head = ["rules", *ps, "opponent", "games", "win rate", "95% CI", "pts/hand", "95% CI", "undercut suffered", "gin"]
    rows = []
    for _, r in t.iterrows():
        rows.append(
            [
                str(r["rules"]),
                *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps],
                str(r["opponent"]),
                _fmt(r["games"]),
            ]
            + [
                _fmt(r["win_rate"]),
                f"{r['win_rate_ci_low']:.3f}..{r['win_rate_ci_high']:.3f}",
                _fmt(r["points_per_hand"], 2),
                f"{r['points_per_hand_ci_low']:.2f}..{r['points_per_hand_ci_high']:.2f}",
                _fmt(r["undercut_suffered_rate"]),
                _fmt(r["gin_rate"]),
            ]
        )
    out.append(("Every grid point against every opponent", Table(head, rows, "l" + params + "lrrrrrrr")))
    head = [
        "rules",
        *ps,
        "opponent",
        "margin/game raw",
        "95% CI",
        "adjusted",
        "95% CI",
        "VRF",
        "equiv. games",
        "win rate VRF",
    ]
    rows = []
    for _, r in t.iterrows():
        adjusted = (
            [
                _fmt(r["margin_adj"], 2),
                f"{r['margin_adj_ci_low']:.2f}..{r['margin_adj_ci_high']:.2f}",
                _fmt(r["vrf_margin"], 3),
                f"{r['games'] * r['vrf_margin']:,.0f}",
                _fmt(r["vrf_win_rate"], 3),
            ]
            if r.get("cv_adjusted", True)
            else ["not adjusted", "-", "-", "-", "-"]  # a VRF of 1 by construction is not a measurement
        )
        rows.append(
            [str(r["rules"]), *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps], str(r["opponent"])]
            + [_fmt(r["margin"], 2), f"{r['margin_ci_low']:.2f}..{r['margin_ci_high']:.2f}", *adjusted]
        )
    out.append(
        (
            "Raw and control-variate estimates (points margin per game)",
            Table(head, rows, "l" + params + "lrrrrrrr"),
        )
    )
    return out
