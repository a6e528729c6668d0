"""Measure the sweep and the control variate.

    python scripts/bench_sweep.py vrf results/default     # the control variate on a stored run
    python scripts/bench_sweep.py sweep [configs/sweep-knock.toml]   # time a whole sweep

``vrf`` reads a run that recorded hands (e.g. ``arena run configs/default.toml``)
through its store and prints, per matchup, the variance reduction factor (VRF =
raw variance / adjusted variance) of the points margin and of the win rate, on
top of duplicate pairs (the report's unit) and, for scale, with each game as its
own unit; the factor duplicate pairs alone give; and the in-sample R^2 of each
hand's net points on the deal covariates (streamed sums: an upper bound on what
any linear control variate built from them can remove per hand).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def vrf(run_dir: str) -> None:
    from arena.analysis import variance as var
    from arena.run.store import RunStore

    store = RunStore(run_dir)
    t = time.perf_counter()
    k = len(var.COVARIATES)
    xtx = np.zeros((k + 1, k + 1))  # per-hand regression of net points (seat 0) on [1, covariates]
    xty = np.zeros(k + 1)
    yy = 0.0
    n_h = 0
    per_game: dict[str, tuple[list, list]] = {}

    def tee():
        nonlocal yy, n_h
        for ch in store.chunks(var.GAME_COLS, hands=var.HAND_COLS + ["points0", "points1"]):
            g, h = ch.games, ch.hands
            gid = g["game_id"].to_numpy()
            order = np.argsort(gid)
            pos = order[np.searchsorted(gid[order], h["game_id"].to_numpy())]
            cov, _ = var.deal_covariates(g["seed"].to_numpy()[pos], h["hand"], h["dealer"], h["knock_limit"])
            x = np.c_[np.ones(len(h)), cov]
            y = (h["points0"] - h["points1"]).to_numpy().astype(np.float64)
            xtx[:] += x.T @ x
            xty[:] += x.T @ y
            yy += float(y @ y)
            n_h += len(h)
            _, mg, _, zg, _ = var._chunk_rows(g, h)
            pg = per_game.setdefault(ch.matchup, ([], []))
            pg[0].append(mg)
            pg[1].append(zg)
            yield ch

    tables = var.pair_table(tee())
    beta = np.linalg.solve(xtx, xty)
    sse = yy - 2 * beta @ xty + beta @ xtx @ beta
    sst = yy - xty[0] ** 2 / n_h
    print(f"{n_h:,} hands: in-sample R^2 of a hand's net points on the deal covariates = {1 - sse / sst:.3f}")
    head = ("matchup", "pairs", "margin", "adjusted", "VRF", "win VRF", "VRF games", "dup pairs x")
    print(
        f"{head[0]:34s} {head[1]:>7s} {head[2]:>8s} {head[3]:>8s} {head[4]:>6s} "
        f"{head[5]:>8s} {head[6]:>9s} {head[7]:>11s}"
    )
    raw_v = adj_v = 0.0
    vrfs = []
    for m, p in tables.items():
        e = var.cv_estimate(p.margin, p.z, games=int(p.games.sum()))
        w = var.cv_estimate(p.score, p.z)
        y, z = np.concatenate(per_game[m][0]), np.concatenate(per_game[m][1])
        eg = var.cv_estimate(y, z)  # each game its own unit, as if the run were not duplicate
        dup = float(np.var(y, ddof=1)) / len(y) / e.raw_se**2  # per-game variance / n vs the pair-clustered
        vrfs.append(e.vrf)
        raw_v += e.raw_se**2
        adj_v += e.adj_se**2
        print(f"{m:34s} {e.pairs:7,d} {e.raw:+8.2f} {e.adj:+8.2f} {e.vrf:6.3f} {w.vrf:8.3f} {eg.vrf:9.3f} {dup:11.2f}")
    print(
        f"points margin VRF on top of duplicate pairs: median {np.median(vrfs):.3f}, "
        f"range {min(vrfs):.3f}-{max(vrfs):.3f}, pooled (sum of variances) {raw_v / adj_v:.3f} "
        f"= a {100 * (1 - adj_v / raw_v):.1f}% cut of the variance"
    )
    print(f"({time.perf_counter() - t:.1f} s)")


def sweep(path: str) -> None:
    from arena.analysis.sweep import run_sweep

    t = time.perf_counter()
    res = run_sweep(path)
    print(f"sweep {res.spec.name}: {res.status}; played in {res.seconds:.1f} s, {time.perf_counter() - t:.1f} s in all")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "vrf":
        vrf(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "sweep":
        sweep(sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "configs" / "sweep-knock.toml"))
    else:
        print(__doc__)
        sys.exit(2)
