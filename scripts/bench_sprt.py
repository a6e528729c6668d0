"""The SPRT's models on the built-in matchups: games saved by the pentanomial model, and error rates.

1. Plays the built-in matchups as duplicate pairs (or reads ``--run``), and
   for each takes its measured pair outcomes as the truth.
2. **Games saved.**  The expected games to a decision of the pentanomial test
   and of the trinomial test on the *same* streams of pairs (drawn from the
   measured pairs with replacement), with the bounds ``[E - 10, E]``
   logistic Elo around the matchup's measured Elo ``E`` (so H1 holds: the
   test must find the difference, and needs its most games near there), and
   the ratio the variances predict (games needed scale as the variance of a
   game's score: ``var(game) / (2 var(pair mean))``).
3. **Error rates.**  The measured pair distribution tilted exponentially to
   score exactly at ``elo0`` (H0) and at ``elo1`` (H1): the share of tests
   accepting the wrong hypothesis, pentanomial, both Elo models.

Run: ``nice python scripts/bench_sprt.py [--games 20000] [--tests 1000] [--run results/x]``
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis.sprt import H0_ACCEPTED, H1_ACCEPTED, NELO_PER_T, Sprt, pentanomial  # noqa: E402
from arena.run.runner import run_tournament  # noqa: E402
from arena.run.store import RunStore  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402

PAIR = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: each pentanomial outcome as (losses, draws, wins) of its two games (a split pair as win + loss)
LDW = np.array([[2, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0, 0, 2]])
MATCHUPS = [("gin-chasing", "early-knock"), ("mc-fast", "simple"), ("simple", "simple-b")]


def play(results: Path, games: int) -> Path:
    cfg = TournamentConfig(
        name="sprt-bench",
        format="round-robin",
        bots=("gin-chasing", "early-knock", "mc-fast", "simple", "simple-b"),
        variants={"mc-fast": {"bot": "monte-carlo", "samples": 100}, "simple-b": {"bot": "simple"}},
        games_per_pair=games,
        chunk_size=1000,
        seed=34,
        workers=2,
        record_hands=False,
        record_log=False,
        results_dir=str(results),
    )
    # only the three matchups wanted: a round-robin would play all ten, so play three gauntlets
    for a, b in MATCHUPS:
        run_tournament(cfg.replace(name=f"{a}-vs-{b}", format="gauntlet", candidate=a, bots=(b,)), progress=False)
    return results


def measured(run: Path) -> np.ndarray:
    counts = np.zeros(5, dtype=np.int64)
    for chunk in RunStore(run).chunks(["game_id", "matchup", "bot_a", "bot_b", "pair", "winner", "error"]):
        counts += pentanomial(chunk.games)
    return counts


def elo_of(score: float) -> float:
    return 400.0 * math.log10(score / (1.0 - score))


def tilt(p: np.ndarray, score: float) -> np.ndarray:
    """``p_i exp(theta a_i)`` normalized, with mean per-game score ``score``."""
    lo, hi = -60.0, 60.0
    for _ in range(200):
        th = (lo + hi) / 2
        w = p * np.exp(th * PAIR)
        lo, hi = (th, hi) if np.sum(w * PAIR) / w.sum() < score else (lo, th)
    return w / w.sum()


def sequential(p, rng, elo0, elo1, elo="logistic", trinomial=True, step=10, cap=400_000):
    """Games to a decision (and the decision) of the pentanomial and trinomial tests on one stream of pairs."""
    tests = {"penta": Sprt(elo0, elo1, elo=elo)}
    if trinomial:
        tests["tri"] = Sprt(elo0, elo1, model="trinomial", elo=elo)
    games = dict.fromkeys(tests, 0)
    for _ in range(cap // step):
        k = np.bincount(rng.choice(5, size=step, p=p), minlength=5)
        for name, t in tests.items():
            if t.decision is None:
                t.update(counts=k if name == "penta" else k @ LDW)
                games[name] += 2 * step
        if all(t.decision for t in tests.values()):
            break
    return {n: (t.decision, games[n]) for n, t in tests.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20000, help="games per matchup to measure (default 20000)")
    ap.add_argument("--tests", type=int, default=1000, help="sequential tests per case (default 1000)")
    ap.add_argument("--run", type=Path, help="a results folder of an earlier run of this script")
    args = ap.parse_args()
    rng = np.random.default_rng(34)
    t0 = time.time()
    base = args.run or play(Path(tempfile.mkdtemp(prefix="sprt-bench-")), args.games)
    print(f"# measured in {time.time() - t0:.0f} s: {base}")
    print(
        "| matchup | pairs | penta counts | Elo | predicted tri/penta games | mean games penta | mean games tri | "
        "saved | wrong decisions penta / tri |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for a, b in MATCHUPS:
        counts = measured(base / f"{a}-vs-{b}")
        p = counts / counts.sum()
        mu = float(np.sum(p * PAIR))
        var_pair = float(np.sum(p * (PAIR - mu) ** 2))
        g = p @ LDW / 2.0  # a game's outcome distribution
        var_game = float(g[1] * 0.25 + g[2] * 1.0 - (g[1] * 0.5 + g[2]) ** 2)
        e = elo_of(min(max(mu, 1e-6), 1 - 1e-6))
        predicted = f"{var_game / (2 * var_pair):.3f}" if var_pair > 0 else "inf (every pair split)"
        runs = [sequential(p, rng, e - 10.0, e) for _ in range(args.tests)]
        mp = np.mean([r["penta"][1] for r in runs])
        mt = np.mean([r["tri"][1] for r in runs])
        wrong_p = np.mean([r["penta"][0] == H0_ACCEPTED for r in runs])
        wrong_t = np.mean([r["tri"][0] == H0_ACCEPTED for r in runs])
        print(
            f"| {a} vs {b} | {counts.sum():,} | {counts.tolist()} | {e:+.1f} | {predicted} | "
            f"{mp:,.0f} | {mt:,.0f} | {1 - mp / mt:.1%} | {wrong_p:.3f} / {wrong_t:.3f} |"
        )
        rows.append((a, b, p, e))
    print("\n# error rates, alpha = beta = 0.05, pentanomial, on each matchup's pairs tilted to elo0 / elo1")
    print("| matchup | Elo model | bounds | accepted H1 under H0 | accepted H0 under H1 | mean games |")
    print("|---|---|---|---|---|---|")
    for a, b, p, e in rows:
        for elo in ("logistic", "normalized"):
            if elo == "logistic":
                lo, hi = e - 10.0, e
                p0, p1 = tilt(p, 1 / (1 + 10 ** (-lo / 400))), tilt(p, 1 / (1 + 10 ** (-hi / 400)))
            else:

                def nelo(q: np.ndarray) -> float:
                    m = float(np.sum(q * PAIR))
                    return (m - 0.5) / math.sqrt(2 * float(np.sum(q * (PAIR - m) ** 2))) * NELO_PER_T

                def at(target: float, p: np.ndarray = p) -> np.ndarray:
                    s_lo, s_hi = 1e-4, 1 - 1e-4
                    for _ in range(80):
                        mid = (s_lo + s_hi) / 2
                        s_lo, s_hi = (mid, s_hi) if nelo(tilt(p, mid)) < target else (s_lo, mid)
                    return tilt(p, s_lo)

                n_e = nelo(p)
                lo, hi = n_e - 10.0, n_e
                p0, p1 = at(lo), at(hi)
            r0 = [sequential(p0, rng, lo, hi, elo, trinomial=False)["penta"] for _ in range(args.tests)]
            r1 = [sequential(p1, rng, lo, hi, elo, trinomial=False)["penta"] for _ in range(args.tests)]
            fp = np.mean([d == H1_ACCEPTED for d, _ in r0])
            fn = np.mean([d == H0_ACCEPTED for d, _ in r1])
            mg = np.mean([n for _, n in r0 + r1])
            print(f"| {a} vs {b} | {elo} | [{lo:+.1f}, {hi:+.1f}] | {fp:.3f} | {fn:.3f} | {mg:,.0f} |")
    print(f"# total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
