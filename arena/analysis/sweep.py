"""Parameter sweeps: one bot over a grid of its parameters, against a field, under one or more rules.

A sweep file (TOML, or the same as a dict)::

    name = "sweep-knock"
    bot = "early-knock"                  # the bot whose parameters are swept
    opponents = ["simple", "gin-chasing"]
    games = 10000                        # per grid point and opponent (even: duplicate pairs)
    seed = 2026
    workers = 0                          # 0 = one per core
    chunk_size = 2500
    rules = ["standard", "eaai"]         # a preset or .toml path, a list of them,
                                         # or a table label = preset | {preset = ..., setting = value}
    [grid]                               # one or two parameters of the bot
    knock_at = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    [params]                             # optional: fixed parameters of the bot
    late_drop = 0
    [rules_grid]                         # optional, instead of rules: one setting over values
    preset = "standard"
    undercut_bonus = [10, 20, 25]
    [adaptive]                           # optional: successive halving (see _run_adaptive)
    rounds = 3                           # round r plays the best `keep` of round r-1, on new deals,
    keep = 0.5                           # with games * growth**r games
    growth = 2

How it runs
-----------
Each rules value gets a run folder ``<results_dir>/<name>/<rules label>/``.
Each grid point is a variant of the bot (``early-knock@knock_at=3``) played
as a gauntlet against every opponent with :func:`arena.run.run_tournament`
into that folder, so a sweep is resumable (a rerun plays only what is
missing), parallel, deterministic and runs on Dask with ``client=`` or
``scheduler``.  Every grid point plays the same deals (the pair seeds depend
on the run seed and the pair number only), so grid points are compared on
paired data.

What it writes
--------------
Into ``<results_dir>/<name>/``: ``sweep.csv`` (one row per rules value x grid
point x opponent), ``plots/*.png`` (response curves, a heatmap for 2-D grids),
``report.md`` and ``report.html`` (self-contained).

Statistics are streamed from the stores: per matchup a
:class:`~arena.analysis.summary.Summary` (for :func:`~arena.analysis.stats.pair_stats`
and :func:`~arena.analysis.stats.bot_stats`) and per duplicate pair the
values the control variate and the paired comparisons need
(:mod:`arena.analysis.variance`); never a table of all games.

The best value and its equals
-----------------------------
For each rules value the objective is the win rate against the field (the
mean over opponents, each weighted alike).  The best grid point is the one
with the highest control-variate-adjusted field win rate.  Every other point
is compared with it on *paired* data: per duplicate pair ``p``, ``d_p =
field score of the best at p - field score of the point at p`` (both played
the same deals), adjusted by the control variate; a point "can't be told
apart" from the best when the 95% t interval of the mean of ``d_p`` contains
0.  There is no correction for multiple comparisons, and choosing the best on
the same data favours it slightly, so the set is a generous one.
"""

from __future__ import annotations

import html
import itertools
import sys
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from arena.analysis import variance as var
from arena.analysis.summary import GAME_COLUMNS, HAND_COLUMNS, Summary, merge
from arena.botkit.load import load_bots

__all__ = ["SweepError", "SweepSpec", "SweepResult", "load_sweep", "run_sweep", "analyse_sweep"]

KEYS = (
    "name",
    "bot",
    "opponents",
    "games",
    "seed",
    "workers",
    "chunk_size",
    "rules",
    "rules_grid",
    "grid",
    "params",
    "results_dir",
    "scheduler",
    "limits",
    "adaptive",
)


class SweepError(ValueError):
    """A sweep file that cannot be used; the message is one line."""


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep (see the module doc for the keys)."""

    name: str
    bot: str
    opponents: tuple[str, ...]
    grid: tuple[tuple[str, tuple[float, ...]], ...]
    rules: tuple[tuple[str, Any], ...]  # (label, preset name / path / table)
    games: int = 10000
    seed: int = 1
    workers: int = 0
    chunk_size: int = 2500
    params: Mapping[str, float] = field(default_factory=dict)
    results_dir: str = "results"
    scheduler: str = ""
    limits: Mapping[str, float] = field(default_factory=dict)
    #: Successive halving: (rounds, keep, growth); None = play every point once.
    adaptive: tuple[int, float, float] | None = None
    #: Only these grid points (a later round of an adaptive sweep); None = the whole grid.
    only: tuple[tuple[float, ...], ...] | None = None

    @property
    def dir(self) -> Path:
        return Path(self.results_dir) / self.name

    @property
    def param_names(self) -> list[str]:
        return [p for p, _ in self.grid]

    def points(self) -> list[tuple[float, ...]]:
        """Every grid point, in order (the first parameter varies slowest)."""
        pts = list(itertools.product(*[vals for _, vals in self.grid]))
        return pts if self.only is None else [p for p in pts if p in self.only]

    def variant(self, point: Sequence[float]) -> str:
        """The variant name of a grid point, e.g. ``early-knock@knock_at=3``."""
        return self.bot + "@" + ",".join(f"{p}={v:g}" for p, v in zip(self.param_names, point))

    def config(self, label: str, rules: Any, point: Sequence[float]) -> dict[str, Any]:
        """The gauntlet config of one grid point under one rules value."""
        v = self.variant(point)
        cfg: dict[str, Any] = {
            "name": label,
            "format": "gauntlet",
            "candidate": v,
            "bots": list(self.opponents),
            "variants": {v: {"bot": self.bot, **dict(self.params), **dict(zip(self.param_names, point))}},
            "games_per_pair": self.games,
            "seed": self.seed,
            "workers": self.workers,
            "chunk_size": self.chunk_size,
            "rules": rules,
            "record_hands": True,
            "results_dir": str(self.dir),
        }
        if self.scheduler:
            cfg["scheduler"] = self.scheduler
        if self.limits:
            cfg["limits"] = dict(self.limits)
        return cfg


def _num_list(key: str, v: Any) -> tuple[float, ...]:
    if not isinstance(v, list) or not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise SweepError(f"sweep: {key} must be a non-empty list of numbers (got {v!r})")
    return tuple(float(x) for x in v)


def _rules_label(v: Any) -> str:
    return Path(v).stem if isinstance(v, str) else "rules"


def _adaptive(v: Any) -> tuple[int, float, float] | None:
    if v is None or v is False:
        return None
    if v is True:
        v = {}
    if not isinstance(v, Mapping) or set(v) - {"rounds", "keep", "growth"}:
        raise SweepError("sweep: adaptive must be true or a table with rounds, keep, growth")
    rounds, keep, growth = v.get("rounds", 3), v.get("keep", 0.5), v.get("growth", 2)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10:
        raise SweepError(f"sweep: adaptive.rounds must be a whole number 1..10 (got {rounds!r})")
    if not isinstance(keep, (int, float)) or not 0 < keep < 1:
        raise SweepError(f"sweep: adaptive.keep must be a fraction between 0 and 1 (got {keep!r})")
    if not isinstance(growth, (int, float)) or not 1 <= growth <= 16:
        raise SweepError(f"sweep: adaptive.growth must be a number 1..16 (got {growth!r})")
    return int(rounds), float(keep), float(growth)


def load_sweep(source: str | Path | Mapping[str, Any]) -> SweepSpec:
    """Read and check a sweep file (or dict); every problem is one :class:`SweepError` line."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            d = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SweepError(f"sweep: cannot read {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"sweep: {path} is not valid TOML: {exc}") from None
        d.setdefault("name", path.stem)
    else:
        d = dict(source)
    unknown = sorted(set(d) - set(KEYS))
    if unknown:
        raise SweepError(f"sweep: unknown key '{unknown[0]}' (keys: {', '.join(KEYS)})")
    for k in ("bot", "opponents", "grid"):
        if k not in d:
            raise SweepError(f"sweep: missing key '{k}'")
    if not isinstance(d["bot"], str) or not d["bot"]:
        raise SweepError("sweep: bot must be a bot name or a .py path")
    opp = d["opponents"]
    if isinstance(opp, str):
        opp = [opp]
    if not isinstance(opp, list) or not opp or not all(isinstance(x, str) and x for x in opp):
        raise SweepError("sweep: opponents must be a list of bot names")
    grid = d["grid"]
    if not isinstance(grid, Mapping) or not 1 <= len(grid) <= 2:
        raise SweepError("sweep: grid must be a table of one or two parameters, e.g. knock_at = [0, 5, 10]")
    grid_t = tuple((str(k), _num_list(f"grid.{k}", v)) for k, v in grid.items())
    params = d.get("params", {})
    if not isinstance(params, Mapping):
        raise SweepError("sweep: params must be a table of parameter = value")
    overlap = set(params) & set(grid)
    if overlap:
        raise SweepError(f"sweep: parameter '{sorted(overlap)[0]}' is both in grid and in params")
    if "rules" in d and "rules_grid" in d:
        raise SweepError("sweep: give rules or rules_grid, not both")
    rules: list[tuple[str, Any]]
    if "rules_grid" in d:
        rg = dict(d["rules_grid"]) if isinstance(d["rules_grid"], Mapping) else None
        if rg is None:
            raise SweepError("sweep: rules_grid must be a table: preset = ..., setting = [values]")
        preset = rg.pop("preset", "standard")
        lists = {k: v for k, v in rg.items() if isinstance(v, list)}
        if len(lists) != 1:
            raise SweepError("sweep: rules_grid must have exactly one setting with a list of values")
        ((key, values),) = lists.items()
        fixed = {k: v for k, v in rg.items() if k not in lists}
        rules = [
            (f"{key}={v:g}" if isinstance(v, (int, float)) else f"{key}={v}", {"preset": preset, **fixed, key: v})
            for v in values
        ]
    else:
        r = d.get("rules", "standard")
        if isinstance(r, str):
            rules = [(_rules_label(r), r)]
        elif isinstance(r, list) and r and all(isinstance(x, str) for x in r):
            rules = [(_rules_label(x), x) for x in r]
        elif isinstance(r, Mapping) and r and all(isinstance(x, (str, Mapping)) for x in r.values()):
            rules = [(str(k), x if isinstance(x, str) else dict(x)) for k, x in r.items()]
        else:
            raise SweepError("sweep: rules must be a preset or path, a list of them, or a table label = rules")
    labels = [lab for lab, _ in rules]
    if len(set(labels)) != len(labels):
        raise SweepError(f"sweep: two rules values share the label {labels}; use a table label = rules")
    games = d.get("games", 10000)
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise SweepError(f"sweep: games must be an even number >= 2 (got {games!r})")
    chunk = d.get("chunk_size", min(2500, games))
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 2 or chunk % 2:
        raise SweepError(f"sweep: chunk_size must be an even number >= 2 (got {chunk!r})")
    spec = SweepSpec(
        name=str(d.get("name", "sweep")),
        bot=d["bot"],
        opponents=tuple(opp),
        grid=grid_t,
        rules=tuple(rules),
        games=games,
        seed=int(d.get("seed", 1)),
        workers=int(d.get("workers", 0)),
        chunk_size=chunk,
        params={str(k): float(v) for k, v in params.items()},
        results_dir=str(d.get("results_dir", "results")),
        scheduler=str(d.get("scheduler", "")),
        limits=dict(d.get("limits", {})),
        adaptive=_adaptive(d.get("adaptive")),
    )
    from arena.settings.config import ConfigError, config_from_dict

    for label, r in spec.rules:  # every config must load (rules, opponents, parameters) before anything runs
        try:
            cfg = config_from_dict(spec.config(label, r, spec.points()[0]))
            load_bots(cfg)
        except (ConfigError, ValueError) as exc:
            raise SweepError(f"sweep: {exc}") from None
    return spec


# --- running ----------------------------------------------------------------------------------


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


def run_sweep(
    sweep: str | Path | Mapping[str, Any] | SweepSpec,
    *,
    client: Any = None,
    schedule: Any = None,
    progress: bool | Callable[[str], None] = True,
    fresh: bool = False,
    report: bool = True,
) -> SweepResult:
    """Play every grid point (only what is missing) and write sweep.csv, plots and the report.

    ``client``: a ``distributed.Client`` to play on (else the sweep's
    ``scheduler``, else ``workers`` local processes); ``schedule``: any
    object with ``results(tasks)``.  ``fresh``: delete the sweep's results first.
    """
    from arena.run import run_tournament

    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    say: Callable[[str], None]
    if callable(progress):
        say = progress
    elif progress:
        say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    else:
        say = lambda s: None  # noqa: E731
    if fresh and spec.dir.exists():
        import shutil

        shutil.rmtree(spec.dir)
    if spec.adaptive is not None:
        return _run_adaptive(spec, client=client, schedule=schedule, say=say, report=report)
    t0 = time.monotonic()
    status = "complete"
    points = spec.points()
    n = len(points) * len(spec.rules)
    i = 0
    for label, rules in spec.rules:
        for point in points:
            i += 1
            t = time.monotonic()
            res = run_tournament(spec.config(label, rules, point), client=client, schedule=schedule, progress=False)
            if res.status != "complete":
                status = "incomplete"
            say(
                f"[{i}/{n}] {label} {spec.variant(point)}: {res.status} "
                f"({time.monotonic() - t:.1f} s, {time.monotonic() - t0:.0f} s in all)"
            )
    played = time.monotonic() - t0
    out = analyse_sweep(spec, report=report)
    out.status = status
    out.seconds = played
    return out


def _run_adaptive(spec: SweepSpec, *, client: Any, schedule: Any, say: Callable[[str], None], report: bool):
    """Successive halving: each round plays the surviving points on fresh deals, with more games.

    Round 0 is the whole grid in the sweep folder; round r >= 1 goes to
    ``<sweep>/round-<r>/``, with seed ``seed + r`` and ``games * growth**r``
    games (rounded to an even number), and keeps the best ``keep`` fraction of
    the points (by adjusted field win rate, the union over rules values, at
    least 2).  Each round's estimates use only that round's games, so the last
    round's best value and its interval are not biased by the selection.
    """
    import dataclasses

    assert spec.adaptive is not None
    rounds, keep, growth = spec.adaptive
    survivors = spec.points()
    t0 = time.monotonic()
    lines = []
    res: SweepResult | None = None
    for r in range(rounds):
        games = max(2, int(round(spec.games * growth**r / 2)) * 2)
        sr = dataclasses.replace(
            spec,
            name=spec.name if r == 0 else f"{spec.name}/round-{r}",
            seed=spec.seed + r,
            games=games,
            chunk_size=min(spec.chunk_size * int(growth**r), games),
            only=tuple(survivors),
            adaptive=None,
        )
        say(f"round {r}: {len(survivors)} point(s) x {games:,} games")
        res = run_sweep(sr, client=client, schedule=schedule, progress=say, report=report)
        lines.append(
            f"- round {r} ({sr.dir}): {len(survivors)} point(s), {games:,} games each per opponent and rules value"
        )
        if r == rounds - 1 or len(survivors) <= 2:
            break
        b = res.best
        n_keep = max(2, int(np.ceil(keep * len(survivors))))
        chosen: set[tuple[float, ...]] = set()
        for _, g in b.groupby("rules", sort=False):
            top = g.sort_values("field_win_rate_adj", ascending=False).head(n_keep)
            chosen.update(tuple(float(row[p]) for p in spec.param_names) for _, row in top.iterrows())
        survivors = [p for p in spec.points() if p in chosen]
    assert res is not None
    res.seconds = time.monotonic() - t0
    if report:
        spec.dir.mkdir(parents=True, exist_ok=True)
        (spec.dir / "rounds.md").write_text(
            f"# Adaptive sweep {spec.name}\n\n" + "\n".join(lines) + f"\n\nFinal report: {res.dir / 'report.md'}\n",
            encoding="utf-8",
        )
        res.files["rounds"] = spec.dir / "rounds.md"
    return res


# --- analysis ---------------------------------------------------------------------------------

_G_COLS = sorted(set(GAME_COLUMNS) | set(var.GAME_COLS))
_H_COLS = sorted(set(HAND_COLUMNS) | set(var.HAND_COLS))


def _t(n: int, conf: float = 0.95) -> float:
    return float(sps.t.ppf(0.5 + conf / 2, max(n - 1, 1)))


def _collect(run_dir: Path) -> tuple[dict[str, Summary], dict[str, var.PairTable]]:
    """One streamed pass over a rules folder: a Summary and the per-pair table of each matchup."""
    from arena.run.store import RunStore

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
    from arena.analysis import stats as st

    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    by_variant = {spec.variant(p): p for p in spec.points()}
    rows: list[dict[str, Any]] = []
    pair_scores: dict[tuple[str, tuple[float, ...], str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for label, _ in spec.rules:
        run_dir = spec.dir / label
        if not run_dir.exists():
            continue
        summaries, pairs = _collect(run_dir)
        for m, s in summaries.items():
            ps = st.pair_stats(s).iloc[0]
            va, opp = str(ps["bot_a"]), str(ps["bot_b"])
            if va not in by_variant or opp not in spec.opponents:
                continue
            point = by_variant[va]
            bs = st.bot_stats(s)
            b = bs[bs["bot"] == va].iloc[0]
            pt = pairs[m]
            wr = var.cv_estimate(pt.score, pt.z, games=int(ps["games"]))
            mg = var.cv_estimate(pt.margin, pt.z, games=int(ps["games"]))
            pair_scores[(label, point, opp)] = (pt.pair, pt.score, var.adjusted_values(pt.score, pt.z))
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
                win_rate_adj_ci_low=wr.adj_lo,
                win_rate_adj_ci_high=wr.adj_hi,
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
        table["_o"] = table["opponent"].map({o: i for i, o in enumerate(spec.opponents)})
        table = table.sort_values(["_r", *spec.param_names, "_o"]).drop(columns=["_r", "_o"]).reset_index(drop=True)
    best = _best(spec, pair_scores)
    res = SweepResult(spec.dir, spec, table, best)
    if report and len(table):
        res.files = write_sweep_report(res)
    return res


def _rate_ci(name: str, pt: var.PairTable, col: int) -> dict[str, float]:
    """A per-hand rate's pair-clustered 95% interval (ratio estimator over duplicate pairs)."""
    from arena.analysis.stats import ratio_ci

    if pt.counts is None or len(pt.pair) < 2:
        return {f"{name}_ci_low": float("nan"), f"{name}_ci_high": float("nan")}
    r = ratio_ci(pt.counts[:, col], pt.counts[:, 0], np.zeros(len(pt.pair), dtype=np.int64), 1, clip=(0.0, 1.0))
    return {f"{name}_ci_low": float(r["lo"][0]), f"{name}_ci_high": float(r["hi"][0])}


def _field(
    spec: SweepSpec, pair_scores: dict, label: str, point: tuple[float, ...], adjusted: bool
) -> pd.Series | None:
    """Per pair number, the mean over opponents of the (adjusted) pair score; None when missing."""
    cols = []
    for o in spec.opponents:
        v = pair_scores.get((label, point, o))
        if v is None:
            return None
        cols.append(pd.Series(v[2] if adjusted else v[1], index=v[0]))
    return pd.concat(cols, axis=1).dropna().mean(axis=1)


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
            se_r = float(r.std(ddof=1) / np.sqrt(len(r)))
            row = {"rules": label, **dict(zip(spec.param_names, p))}
            row.update(
                field_win_rate=float(r.mean()),
                field_win_rate_ci_low=float(r.mean()) - _t(len(r)) * se_r,
                field_win_rate_ci_high=float(r.mean()) + _t(len(r)) * se_r,
                field_win_rate_adj=float(f.mean()),
                field_win_rate_adj_ci_low=float(f.mean()) - _t(n) * se_f,
                field_win_rate_adj_ci_high=float(f.mean()) + _t(n) * se_f,
                behind_best=dm,
                behind_best_ci_low=dlo,
                behind_best_ci_high=dhi,
                best=p == bp,
                tied_with_best=p == bp or dlo <= 0.0,
            )
            out.append(row)
    return pd.DataFrame(out)


# --- plots ------------------------------------------------------------------------------------


def _plots(res: SweepResult) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec, t = res.spec, res.table
    pdir = res.dir / "plots"
    pdir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    x = spec.param_names[0]
    second = spec.param_names[1] if len(spec.param_names) > 1 else None
    panels = [
        ("win_rate", "win rate", "win_rate_ci_low", "win_rate_ci_high"),
        ("points_per_hand", "points per hand", "points_per_hand_ci_low", "points_per_hand_ci_high"),
        ("undercut_suffered_rate", "undercut suffered per hand", "undercut_suffered_rate_ci_low", None),
        ("gin_rate", "gin per hand", "gin_rate_ci_low", None),
    ]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    groups = list(t.groupby(["rules", "opponent"] + ([second] if second else []), sort=False))
    rules_order = [lab for lab, _ in spec.rules]
    for k, (key, g) in enumerate(groups):
        g = g.sort_values(x)
        lab = " / ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in key)
        ri = rules_order.index(key[0]) if key[0] in rules_order else 0
        oi = spec.opponents.index(key[1]) if key[1] in spec.opponents else k
        c = colours[(oi if not second else k) % len(colours)]
        ls = styles[ri % len(styles)]
        for ax, (col, title, lo, hi) in zip(axes.flat, panels):
            xs = g[x].to_numpy()
            ax.plot(xs, g[col], ls, color=c, marker="o", ms=3, label=lab)
            ax.fill_between(xs, g[lo], g[hi or lo.replace("_low", "_high")], color=c, alpha=0.2, lw=0)
            ax.set_title(title)
            ax.set_xlabel(x)
    axes.flat[0].axhline(0.5, color="grey", lw=0.8)
    axes.flat[0].legend(fontsize=8, title="rules / opponent" + (f" / {second}" if second else ""))
    fig.suptitle(f"{spec.bot}: response to {x} (95% bands)")
    fig.tight_layout()
    files["plot_curves"] = pdir / "curves.png"
    fig.savefig(files["plot_curves"], dpi=90)
    plt.close(fig)

    b = res.best
    if len(b):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for ri, (label, g) in enumerate(b.groupby("rules", sort=False)):
            if second:
                continue
            g = g.sort_values(x)
            c = colours[ri % len(colours)]
            ax.plot(g[x], g["field_win_rate_adj"], "-o", color=c, ms=3, label=f"{label}: adjusted")
            ax.fill_between(g[x], g["field_win_rate_adj_ci_low"], g["field_win_rate_adj_ci_high"], color=c, alpha=0.25)
            ax.plot(g[x], g["field_win_rate"], ":", color=c, lw=1, label=f"{label}: raw")
            tied = g[g["tied_with_best"]]
            ax.plot(tied[x], tied["field_win_rate_adj"], "s", color=c, mfc="none", ms=9)
            bb = g[g["best"]]
            ax.plot(bb[x], bb["field_win_rate_adj"], "*", color=c, ms=14)
        if not second:
            ax.set_xlabel(x)
            ax.set_ylabel("win rate against the field")
            ax.set_title("field win rate (95% bands); star: best, squares: can't be told apart from it")
            ax.legend(fontsize=8)
            fig.tight_layout()
            files["plot_field"] = pdir / "field.png"
            fig.savefig(files["plot_field"], dpi=90)
        plt.close(fig)

    if second:
        for label, g in b.groupby("rules", sort=False):
            m = g.pivot_table(index=second, columns=x, values="field_win_rate_adj")
            fig, ax = plt.subplots(figsize=(1.0 + 0.7 * m.shape[1], 1.2 + 0.5 * m.shape[0]))
            im = ax.imshow(
                m.to_numpy(),
                cmap="RdBu",
                vmin=0.5 - np.nanmax(np.abs(m.to_numpy() - 0.5)),
                vmax=0.5 + np.nanmax(np.abs(m.to_numpy() - 0.5)),
                aspect="auto",
                origin="lower",
            )
            ax.set_xticks(range(m.shape[1]), [f"{v:g}" for v in m.columns])
            ax.set_yticks(range(m.shape[0]), [f"{v:g}" for v in m.index])
            for (i, j), v in np.ndenumerate(m.to_numpy()):
                ax.text(j, i, f"{v:.3f}", ha="center", va="center", fontsize=7)
            ax.set_xlabel(x)
            ax.set_ylabel(second)
            ax.set_title(f"{label}: field win rate (adjusted)")
            fig.colorbar(im, ax=ax)
            fig.tight_layout()
            key = f"plot_heatmap_{label}"
            files[key] = pdir / f"heatmap-{label}.png"
            fig.savefig(files[key], dpi=90)
            plt.close(fig)
    return files


# --- report -----------------------------------------------------------------------------------


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


def _tables(res: SweepResult) -> list[tuple[str, list[str], list[list[str]]]]:
    spec, t, b = res.spec, res.table, res.best
    ps = spec.param_names
    out = []
    head = ["rules", *ps, "field win rate", "95% CI", "adjusted", "95% CI", "behind best", "95% CI", "best / tied"]
    rows = []
    for _, r in b.iterrows():
        rows.append(
            [r["rules"], *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps]]
            + [
                _fmt(r["field_win_rate"]),
                f"{r['field_win_rate_ci_low']:.3f}..{r['field_win_rate_ci_high']:.3f}",
                _fmt(r["field_win_rate_adj"]),
                f"{r['field_win_rate_adj_ci_low']:.3f}..{r['field_win_rate_adj_ci_high']:.3f}",
                _fmt(r["behind_best"]),
                "-" if r["best"] else f"{r['behind_best_ci_low']:.3f}..{r['behind_best_ci_high']:.3f}",
                "best" if r["best"] else ("tied" if r["tied_with_best"] else ""),
            ]
        )
    out.append(("Win rate against the field, and the best value", head, rows))
    head = ["rules", *ps, "opponent", "games", "win rate", "95% CI", "pts/hand", "95% CI", "undercut suffered", "gin"]
    rows = []
    for _, r in t.iterrows():
        rows.append(
            [
                r["rules"],
                *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps],
                r["opponent"],
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
    out.append(("Every grid point against every opponent", head, rows))
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
        rows.append(
            [r["rules"], *[_fmt(r[p], 0 if float(r[p]).is_integer() else 2) for p in ps], r["opponent"]]
            + [
                _fmt(r["margin"], 2),
                f"{r['margin_ci_low']:.2f}..{r['margin_ci_high']:.2f}",
                _fmt(r["margin_adj"], 2),
                f"{r['margin_adj_ci_low']:.2f}..{r['margin_adj_ci_high']:.2f}",
                _fmt(r["vrf_margin"], 3),
                f"{r['games'] * r['vrf_margin']:,.0f}",
                _fmt(r["vrf_win_rate"], 3),
            ]
        )
    out.append(("Raw and control-variate estimates (points margin per game)", head, rows))
    return out


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#212529}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.85em}th,td{border:1px solid #dee2e6;padding:.25em .5em}"
    "td.r,th.r{text-align:right}th{background:#f1f3f5}img{max-width:100%}"
)


def write_sweep_report(res: SweepResult) -> dict[str, Path]:
    """sweep.csv, plots/*.png, report.md and report.html (figures embedded) in the sweep folder."""
    import base64

    spec = res.spec
    files: dict[str, Path] = {}
    res.dir.mkdir(parents=True, exist_ok=True)
    files["csv"] = res.dir / "sweep.csv"
    res.table.to_csv(files["csv"], index=False)
    if len(res.best):
        files["best_csv"] = res.dir / "best.csv"
        res.best.to_csv(files["best_csv"], index=False)
    files.update(_plots(res))
    grid = ", ".join(f"{p} = {', '.join(f'{v:g}' for v in vals)}" for p, vals in spec.grid)
    intro = [
        f"Bot **{spec.bot}** over {grid}"
        + (f" (fixed: {', '.join(f'{k} = {v:g}' for k, v in spec.params.items())})" if spec.params else "")
        + f"; against {', '.join(spec.opponents)}; rules: {', '.join(lab for lab, _ in spec.rules)}; "
        f"{spec.games:,} games per grid point and opponent (duplicate pairs), seed {spec.seed}.",
    ]
    best_lines = []
    for label, g in res.best.groupby("rules", sort=False) if len(res.best) else []:
        bb = g[g["best"]].iloc[0]
        tied = g[g["tied_with_best"] & ~g["best"]]
        pv = ", ".join(f"{p} = {bb[p]:g}" for p in spec.param_names)
        tv = "; ".join(", ".join(f"{p} = {r[p]:g}" for p in spec.param_names) for _, r in tied.iterrows()) or "none"
        best_lines.append(
            f"**{label}**: best {pv}, field win rate {bb['field_win_rate_adj']:.3f} "
            f"(95% CI {bb['field_win_rate_adj_ci_low']:.3f}..{bb['field_win_rate_adj_ci_high']:.3f}); "
            f"can't be told apart from it: {tv}."
        )
    how = (
        "The best value has the highest field win rate (the mean over opponents), adjusted by the control variate. "
        "Each other point is compared with it on paired data: every grid point played the same deals, so per "
        "duplicate pair we take the difference of the two field scores (control-variate adjusted) and a 95% t "
        "interval of its mean; a point whose interval reaches 0 can't be told apart from the best (no correction "
        "for multiple comparisons). The control variate (arena/analysis/variance.py) subtracts beta . z from each "
        "pair's value, where z sums the difference of the two seats' dealt deadwood, deadwood with the upcard, "
        "outs and knock-readiness over the game's hands (mean exactly 0), and beta is cross-fitted: each half of "
        "the pairs is adjusted with the beta fitted on the other half. VRF = raw variance / adjusted variance; "
        "equivalent games = games x VRF."
    )
    tables = _tables(res)
    md = [f"# Sweep {spec.name}", "", *intro, "", "## Best value", "", *[f"- {b}" for b in best_lines], "", how, ""]
    page = [
        f"<h1>Sweep {html.escape(spec.name)}</h1>",
        *[f"<p>{_md_inline(s)}</p>" for s in intro],
        "<h2>Best value</h2>",
        "<ul>" + "".join(f"<li>{_md_inline(b)}</li>" for b in best_lines) + "</ul>",
        f"<p>{html.escape(how)}</p>",
    ]
    for key in ("plot_field", "plot_curves") + tuple(k for k in files if k.startswith("plot_heatmap")):
        if key in files:
            rel = files[key].relative_to(res.dir)
            md += [f"![{key}]({rel.as_posix()})", ""]
            data = base64.b64encode(files[key].read_bytes()).decode()
            page.append(f'<figure><img alt="{key}" src="data:image/png;base64,{data}"></figure>')
    for title, head, rows in tables:
        md += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "|".join("--" for _ in head) + "|"]
        md += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        md.append("")
        page.append(f"<h2>{html.escape(title)}</h2><table><thead><tr>")
        page.append("".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>")
        page += ["<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows]
        page.append("</tbody></table>")
    files["report_md"] = res.dir / "report.md"
    files["report_md"].write_text("\n".join(md), encoding="utf-8")
    files["report_html"] = res.dir / "report.html"
    files["report_html"].write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>Sweep "
        + html.escape(spec.name)
        + f"</title><style>{_CSS}</style></head><body>"
        + "\n".join(page)
        + "</body></html>",
        encoding="utf-8",
    )
    return files


def _md_inline(s: str) -> str:
    parts = html.escape(s).split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
