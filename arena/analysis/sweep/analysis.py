"""The tables of a sweep, from its stored runs alone (nothing is played).

Statistics are streamed from the stores: per matchup a
:class:`~arena.analysis.summary.Summary` (for :func:`~arena.analysis.stats.pair_stats`
and :func:`~arena.analysis.stats.bot_stats`) and per duplicate pair the
values the control variate and the paired comparisons need
(:mod:`arena.analysis.variance`); never a table of all games.

The best value and its equals: see the package doc (:mod:`arena.analysis.sweep`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.analysis import stats as st
from arena.analysis import variance as var
from arena.analysis.quantiles import t_quantile
from arena.analysis.summary import GAME_COLUMNS, HAND_COLUMNS, Summary, merge
from arena.analysis.sweep.report import write_sweep_report
from arena.analysis.sweep.spec import SweepSpec, load_sweep
from arena.run.store import RunStore

__all__ = ["SweepResult", "analyse_sweep"]


@dataclass
class SweepResult:
    """What a sweep left in its folder: the table, the best values, the files written."""

    dir: Path
    spec: SweepSpec
    table: pd.DataFrame
    best: pd.DataFrame
    files: dict[str, Path] = field(default_factory=dict)
    status: str = "complete"
    seconds: float = 0.0


_G_COLS = sorted(set(GAME_COLUMNS) | set(var.GAME_COLS))
_H_COLS = sorted(set(HAND_COLUMNS) | set(var.HAND_COLS))


def _t(n: int, conf: float = 0.95) -> float:
    return t_quantile(conf, max(n - 1, 1))


def _collect(run_dir: Path) -> tuple[dict[str, Summary], dict[str, var.PairTable]]:
    """One streamed pass over a rules folder: a Summary and the per-pair table of each matchup."""
    store = RunStore(run_dir)
    parts: dict[str, list[Summary]] = {}

    def tee() -> Iterator[Any]:
        for ch in store.chunks(_G_COLS, hands=_H_COLS):
            h = ch.hands[list(HAND_COLUMNS)] if ch.hands is not None else None
            parts.setdefault(ch.matchup, []).append(Summary.of_chunk(ch.games[list(GAME_COLUMNS)], h))
            yield ch

    pairs = var.pair_table(tee())
    return {m: merge(p) for m, p in parts.items()}, pairs


def analyse_sweep(sweep: str | Path | Mapping[str, Any] | SweepSpec, *, report: bool = True) -> SweepResult:
    """Build sweep.csv, the plots and the report from the stored runs (nothing is played)."""
    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    by_variant = {spec.variant(p): p for p in spec.points()}
    rows: list[dict[str, Any]] = []
    # per (rules, point, opponent): pair numbers, raw and adjusted pair scores, and whether beta was fitted
    pair_scores: dict[tuple[str, tuple[float, ...], str], tuple[np.ndarray, np.ndarray, np.ndarray, bool]] = {}
    for label, _ in spec.rules:
        run_dir = spec.dir / label
        if not run_dir.exists():
            continue
        summaries, pairs = _collect(run_dir)
        for m, s in summaries.items():
            ps = st.pair_stats(s).iloc[0]
            va, opp = str(ps["bot_a"]), str(ps["bot_b"])
            if va not in by_variant or opp not in spec.opponent_names:
                continue
            point = by_variant[va]
            bs = st.bot_stats(s)
            b = bs[bs["bot"] == va].iloc[0]
            pt = pairs[m]
            wr = var.cv_estimate(pt.score, pt.z, games=int(ps["games"]))
            mg = var.cv_estimate(pt.margin, pt.z, games=int(ps["games"]))
            pair_scores[(label, point, opp)] = (pt.pair, pt.score, var.adjusted_values(pt.score, pt.z), wr.adjusted)
            row: dict[str, Any] = {"rules": label}
            row.update(dict(zip(spec.param_names, point)))
            row.update(
                opponent=opp,
                games=int(ps["games"]),
                pairs=int(ps["pairs"]),
                win_rate=float(ps["win_rate_a"]),
                win_rate_ci_low=float(ps["win_rate_ci_low"]),
                win_rate_ci_high=float(ps["win_rate_ci_high"]),
                win_rate_adj=wr.adj,
                # not adjusted, the figure is the raw win rate: its interval is the raw one (modified Wilson), not t's
                win_rate_adj_ci_low=wr.adj_lo if wr.adjusted else float(ps["win_rate_ci_low"]),
                win_rate_adj_ci_high=wr.adj_hi if wr.adjusted else float(ps["win_rate_ci_high"]),
                points_per_hand=float(b["points_per_hand"]),
                points_per_hand_ci_low=float(b["points_per_hand_ci_low"]),
                points_per_hand_ci_high=float(b["points_per_hand_ci_high"]),
                conceded_per_hand=float(b["conceded_per_hand"]),
                margin=float(ps["margin"]),
                margin_ci_low=float(ps["margin_ci_low"]),
                margin_ci_high=float(ps["margin_ci_high"]),
                margin_adj=mg.adj,
                margin_adj_ci_low=mg.adj_lo,
                margin_adj_ci_high=mg.adj_hi,
                vrf_win_rate=wr.vrf,
                vrf_margin=mg.vrf,
                cv_adjusted=wr.adjusted and mg.adjusted,
                knock_rate=float(b["knock_rate"]),
                gin_rate=float(b["gin_rate"]),
                **_rate_ci("gin_rate", pt, 1),
                undercut_won_rate=float(b["undercut_won_rate"]),
                undercut_suffered_rate=float(b["undercut_suffered_rate"]),
                **_rate_ci("undercut_suffered_rate", pt, 2),
                knock_deadwood=float(b["knock_deadwood"]),
                hands=int(b["hands"]),
            )
            rows.append(row)
    table = pd.DataFrame(rows)
    if len(table):
        order = {lab: i for i, (lab, _) in enumerate(spec.rules)}
        table["_r"] = table["rules"].map(order)
        table["_o"] = table["opponent"].map({o: i for i, o in enumerate(spec.opponent_names)})
        table = table.sort_values(["_r", *spec.param_names, "_o"]).drop(columns=["_r", "_o"]).reset_index(drop=True)
    best = _best(spec, pair_scores)
    res = SweepResult(spec.dir, spec, _whole(table, spec.param_names), _whole(best, spec.param_names))
    if report and len(table):
        res.files = write_sweep_report(res)
    return res


def _rate_ci(name: str, pt: var.PairTable, col: int) -> dict[str, float]:
    """A per-hand rate's pair-clustered 95% interval (ratio estimator over duplicate pairs)."""
    if pt.counts is None or len(pt.pair) < 2:
        return {f"{name}_ci_low": float("nan"), f"{name}_ci_high": float("nan")}
    r = st.ratio_ci(pt.counts[:, col], pt.counts[:, 0], np.zeros(len(pt.pair), dtype=np.int64), 1, clip=(0.0, 1.0))
    return {f"{name}_ci_low": float(r["lo"][0]), f"{name}_ci_high": float(r["hi"][0])}


def _field(
    spec: SweepSpec, pair_scores: dict, label: str, point: tuple[float, ...], adjusted: bool
) -> pd.Series | None:
    """Per pair number, the mean over opponents of the (adjusted) pair score; None when missing."""
    cols = []
    for o in spec.opponent_names:
        v = pair_scores.get((label, point, o))
        if v is None:
            return None
        cols.append(pd.Series(v[2] if adjusted else v[1], index=v[0]))
    return pd.concat(cols, axis=1).dropna().mean(axis=1)


def _whole(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """``frame`` with each parameter column whose values are all whole numbers as integers, so sweep.csv
    says ``knock_at = 5``, as the config did, not 5.0 (the grid holds floats: a point may be 2.5)."""
    for name in names:
        if name in frame and len(frame) and (frame[name] == frame[name].round()).all():
            frame[name] = frame[name].astype("int64")
    return frame


def _best(spec: SweepSpec, pair_scores: dict) -> pd.DataFrame:
    """Per rules value: every grid point's field win rate, the best, and the paired test against it."""
    out = []
    for label, _ in spec.rules:
        fields = {p: _field(spec, pair_scores, label, p, True) for p in spec.points()}
        raw = {p: _field(spec, pair_scores, label, p, False) for p in spec.points()}
        have = {p: f for p, f in fields.items() if f is not None and len(f) > 1}
        if not have:
            continue
        bp = max(have, key=lambda p: float(have[p].mean()))
        for p, f in have.items():
            n = len(f)
            r = raw[p]
            assert r is not None
            d = (have[bp] - f).dropna()
            if p == bp or len(d) < 2:
                dm, dlo, dhi = 0.0, 0.0, 0.0
            else:
                se = float(d.std(ddof=1) / np.sqrt(len(d)))
                dm = float(d.mean())
                dlo, dhi = dm - _t(len(d)) * se, dm + _t(len(d)) * se
            se_f = float(f.std(ddof=1) / np.sqrt(n))
            y = r.to_numpy()
            _, raw_lo, raw_hi = st.share_ci(len(y), float(y.sum()), float(y @ y))
            adjusted = all(pair_scores[(label, p, o)][3] for o in spec.opponent_names)
            row = {"rules": label, **dict(zip(spec.param_names, p))}
            row.update(
                field_win_rate=float(r.mean()),
                field_win_rate_ci_low=raw_lo,
                field_win_rate_ci_high=raw_hi,
                field_win_rate_adj=float(f.mean()),
                # not adjusted, f is r (every slope 0): a share, with the raw figure's interval
                field_win_rate_adj_ci_low=float(f.mean()) - _t(n) * se_f if adjusted else raw_lo,
                field_win_rate_adj_ci_high=float(f.mean()) + _t(n) * se_f if adjusted else raw_hi,
                field_adjusted=adjusted,
                behind_best=dm,
                behind_best_ci_low=dlo,
                behind_best_ci_high=dhi,
                best=p == bp,
                tied_with_best=p == bp or dlo <= 0.0,
            )
            out.append(row)
    return pd.DataFrame(out)
