"""Monte Carlo bot: its opponent model, its cost per decision, and its strength against compute.

Subcommands (all under the ``eaai`` rules, the yardstick of the EAAI competition):

``model``   How well each opponent model guesses the opponent's hidden cards,
            on positions of gin-chasing (seat 0) against simple: mean hidden
            cards hit per sampled hand, the log-likelihood of the true hand
            under the cards' sampled frequencies, and the deadwood of sampled
            hands against the true ones.
``cost``    Milliseconds per decision of ``monte-carlo`` (one core, against
            simple, both seats) at each sample budget, by kind of decision,
            and the time a 20,000-game match would take on 2 cores.
``curve``   ``cost`` for the budgets of ``configs/sweep-mc-samples.toml``,
            joined with that sweep's win rates (run ``arena sweep
            sweep-mc-samples`` first): a table and a plot of win rate
            (95% CI) against ms per decision.
``points``  The points a decided hand scores, in the 5-point bins of
            ``arena.botkit.game_value.HAND_POINTS`` (the model behind the bot's
            game-value table).

Run: ``python scripts/bench_monte_carlo.py model|cost|curve|points [options]``.
Time it on a quiet machine: ``cost`` and ``curve`` measure wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botkit.bot import Bot  # noqa: E402
from arena.botkit.lib import opponent_known, pile_cards  # noqa: E402
from arena.botkit.search import sample_state_weighted  # noqa: E402
from arena.engine.cards import popcount  # noqa: E402
from arena.engine.contract import PHASE_FUNCTION  # noqa: E402
from arena.engine.layout import (  # noqa: E402
    G_SIZE,
    H_OUTCOME,
    H_POINTS,
    OUT_DEAD,
    PH_DISCARD,
    PH_DONE,
    S_CUR,
    S_HAND,
    S_PHASE,
    S_SIZE,
    V_HAND,
    V_SEAT,
    V_SIZE,
)
from arena.engine.melds import deadwood  # noqa: E402
from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rng import RNG_WORDS, new_rng  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, new_state  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402
from arena.settings.rules import load_rules  # noqa: E402

RULES = rules_array(load_rules("eaai"))
#: The opponent models compared by ``model``: (refuse, shed, tries, built).
MODELS = {
    "uniform": (1.0, 1.0, 1, False),
    "evidence weights": (0.25, 0.25, 8, False),
    "built hands": (1.0, 1.0, 1, True),
    "built + evidence (the bot's)": (0.25, 0.25, 8, True),
}


def positions(n_games: int, seed: int = 0):
    """(view, true opponent hand) at every discard of gin-chasing (seat 0) against simple."""
    me, opp = load_bot("gin-chasing"), load_bot("simple")
    mems = [np.zeros(me.memory_size), np.zeros(opp.memory_size)]
    rngs = [new_rng(seed + 1), new_rng(seed + 2)]
    bots = (me, opp)
    view = np.zeros(V_SIZE, dtype=np.int64)
    for g in range(n_games):
        st = new_state()
        begin_game(st, RULES, seed + g, rngs[0], rngs[1], mems[0], mems[1], np.zeros(G_SIZE, dtype=np.int64))
        begin_hand(st, RULES, seed + g, np.zeros(RNG_WORDS, dtype=np.uint64))
        while st[S_PHASE] != PH_DONE:  # the first hand of each game
            p = int(st[S_CUR])
            build_view(st, RULES, p, view)
            if p == 0 and st[S_PHASE] == PH_DISCARD:
                yield view.copy(), int(st[S_HAND + 1])
            b = bots[p]
            apply_action(st, RULES, int(b.functions[st[S_PHASE]](view, b.params, mems[p], rngs[p])))


def cmd_model(args: argparse.Namespace) -> None:
    rows = list(positions(args.games))
    k = args.samples
    print(
        f"{len(rows):,} positions (gin-chasing's discards against simple, first hands of {args.games} games), "
        f"{k} sampled hands each"
    )
    print(f"{'model':32s} {'hidden cards hit':>17s} {'log-lik / position':>19s} {'deadwood sampled':>17s} {'true':>6s}")
    st = np.empty(S_SIZE, dtype=np.int64)
    base_hits = None
    for name, (refuse, shed, tries, built) in MODELS.items():
        rng = new_rng(7)
        hits, loglik, dws, true_dw = [], [], [], []
        for view, true in rows:
            known = int(opponent_known(view))
            unseen = ((1 << 52) - 1) & ~int(view[V_HAND]) & ~int(pile_cards(view)) & ~known
            counts = np.zeros(52)
            for _ in range(k):
                sample_state_weighted(view, rng, st, refuse, shed, tries, built, 1.0, 1.0)
                opp = int(st[S_HAND + 1 - int(view[V_SEAT])])
                hits.append(popcount(opp & true & ~known))
                dws.append(deadwood(opp))
                for c in range(52):
                    counts[c] += (opp >> c) & 1
            true_dw.append(deadwood(true))
            # Each unseen card: held or not, scored by its smoothed sampled frequency.
            ll = 0.0
            for c in range(52):
                if (unseen >> c) & 1:
                    q = (counts[c] + 0.5) / (k + 1.0)
                    ll += np.log(q) if (true >> c) & 1 else np.log(1.0 - q)
            loglik.append(ll)
        h = float(np.mean(hits))
        base_hits = base_hits or h
        gain = f" ({(h / base_hits - 1) * 100:+.0f}%)" if name != "uniform" else ""
        print(f"{name:32s} {h:10.3f}{gain:>7s} {np.mean(loglik):19.2f} {np.mean(dws):17.1f} {np.mean(true_dw):6.1f}")


def decision_costs(bot: Bot, n_games: int, seed: int = 1000) -> dict:
    """Time every decision of ``bot`` against simple, both seats, one core: ms by kind and per game."""
    simple = load_bot("simple")
    spent: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    view = np.zeros(V_SIZE, dtype=np.int64)
    start = time.perf_counter()
    for g in range(n_games):
        for seat in (0, 1):
            bots = (bot, simple) if seat == 0 else (simple, bot)
            mems = [np.zeros(b.memory_size) for b in bots]
            rngs = [new_rng(seed + g * 2), new_rng(seed + g * 2 + 1)]
            st = new_state()
            row = np.zeros(G_SIZE, dtype=np.int64)
            begin_game(st, RULES, seed + g, rngs[0], rngs[1], mems[0], mems[1], row)
            while True:
                begin_hand(st, RULES, seed + g, np.zeros(RNG_WORDS, dtype=np.uint64))
                while st[S_PHASE] != PH_DONE:
                    p = int(st[S_CUR])
                    phase = int(st[S_PHASE])
                    build_view(st, RULES, p, view)
                    b = bots[p]
                    if p == seat:
                        t = time.perf_counter()
                        action = b.functions[phase](view, b.params, mems[p], rngs[p])
                        spent[PHASE_FUNCTION[phase]] += time.perf_counter() - t
                        count[PHASE_FUNCTION[phase]] += 1
                    else:
                        action = b.functions[phase](view, b.params, mems[p], rngs[p])
                    apply_action(st, RULES, int(action))
                if end_hand(st, RULES, row):
                    break
    wall = time.perf_counter() - start
    games = 2 * n_games
    total = sum(spent.values())
    n = sum(count.values())
    # The same games through the compiled kernel: the time a run's worker spends per game.
    seeds = np.arange(seed, seed + n_games, dtype=np.int64)
    t = time.perf_counter()
    play_batch(bot, simple, RULES, seeds)
    play_batch(simple, bot, RULES, seeds)
    kernel = (time.perf_counter() - t) / games
    return {
        "ms_per_decision": 1000 * total / n,
        "decisions_per_game": n / games,
        "ms_per_game": 1000 * kernel,
        "by_kind": {kind: (count[kind] / games, 1000 * spent[kind] / count[kind]) for kind in count},
        "loop_seconds": wall,
    }


def cost_table(samples: list[int], n_games: int) -> list[dict]:
    base = load_bot("monte-carlo")
    base_samples = int(base.params[base.param_names.index("samples")])
    rows = []
    for s in samples:
        bot = base if s == base_samples else base.with_params(f"mc-{s}", {"samples": s})
        play_batch(bot, load_bot("simple"), RULES, np.arange(2))  # compile and warm up
        c = decision_costs(bot, n_games)
        c["samples"] = s
        rows.append(c)
        kinds = ", ".join(f"{k} {n:.1f}/game x {ms:.3f} ms" for k, (n, ms) in sorted(c["by_kind"].items()))
        print(
            f"samples {s:5d}{' (default)' if s == base_samples else '          '}: "
            f"{c['ms_per_decision']:.3f} ms per decision, {c['decisions_per_game']:.0f} decisions/game, "
            f"{c['ms_per_game']:.1f} ms/game in the kernel -> 20,000 games on 2 cores in "
            f"{20000 * c['ms_per_game'] / 1000 / 2 / 60:.1f} min\n    {kinds}"
        )
    return rows


def cmd_cost(args: argparse.Namespace) -> None:
    print(f"monte-carlo against simple, {2 * args.games} games per budget (both seats), one core")
    cost_table([int(x) for x in args.samples.split(",")], args.games)


def cmd_curve(args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    folder = Path(args.sweep)
    table = pd.read_csv(folder / "sweep.csv")
    budgets = sorted(int(s) for s in table["samples"].unique())
    print(f"timing {budgets} ({2 * args.games} games each against simple, one core)")
    costs = {c["samples"]: c for c in cost_table(budgets, args.games)}
    table["ms_per_decision"] = table["samples"].map(lambda s: costs[int(s)]["ms_per_decision"])
    table["ms_per_game"] = table["samples"].map(lambda s: costs[int(s)]["ms_per_game"])
    out = table[
        [
            "samples",
            "ms_per_decision",
            "ms_per_game",
            "opponent",
            "games",
            "win_rate",
            "win_rate_ci_low",
            "win_rate_ci_high",
        ]
    ]
    out.to_csv(folder / "strength-vs-compute.csv", index=False)
    print()
    print("| samples | ms per decision | " + " | ".join(f"vs {o} (95% CI)" for o in table["opponent"].unique()) + " |")
    print("|---|---|" + "---|" * table["opponent"].nunique())
    for s in budgets:
        part = table[table["samples"] == s]
        cells = [f"{r.win_rate:.1%} ({r.win_rate_ci_low:.1%}-{r.win_rate_ci_high:.1%})" for r in part.itertuples()]
        print(f"| {s} | {costs[s]['ms_per_decision']:.2f} | " + " | ".join(cells) + " |")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for opp, part in table.groupby("opponent"):
        part = part.sort_values("samples")
        x = part["ms_per_decision"].to_numpy()
        y = part["win_rate"].to_numpy()
        err = np.vstack([y - part["win_rate_ci_low"].to_numpy(), part["win_rate_ci_high"].to_numpy() - y])
        ax.errorbar(x, y, yerr=err, marker="o", capsize=4, label=f"against {opp}")
        for xi, yi, s in zip(x, y, part["samples"]):
            ax.annotate(f"{int(s)}", (xi, yi), textcoords="offset points", xytext=(6, -12), fontsize=8)
    ax.axhline(0.8, color="grey", ls=":", lw=1)
    ax.axhline(0.6, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("ms per decision (one core; labels: samples per decision)")
    ax.set_ylabel("games won (95% CI, pair-clustered)")
    ax.set_title(f"monte-carlo: strength against compute ({table['games'].iloc[0]:,} games per point, eaai)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = folder / "strength-vs-compute.png"
    fig.savefig(path, dpi=120)
    print(f"\nwrote {path} and {folder / 'strength-vs-compute.csv'}")


def cmd_points(args: argparse.Namespace) -> None:
    rec = play_batch(load_bot("gin-chasing"), load_bot("simple"), RULES, np.arange(args.games), record_hands=True)
    h = rec.hands
    pts = (h[:, H_POINTS] + h[:, H_POINTS + 1])[h[:, H_OUTCOME] < OUT_DEAD]
    hist = np.bincount(np.minimum(pts, 100) // 5, minlength=21)[:21] / len(pts)
    print(f"{len(pts):,} decided hands of {args.games:,} games (gin-chasing vs simple, eaai)")
    print(f"mean {pts.mean():.1f} points")
    print("5-point bins (0-4, .., 95-99, 100+):", np.round(hist, 4).tolist())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model", help="opponent models: hidden cards hit and log-likelihood")
    m.add_argument("--games", type=int, default=300)
    m.add_argument("--samples", type=int, default=40, help="sampled hands per position")
    c = sub.add_parser("cost", help="ms per decision at some sample budgets")
    c.add_argument("--samples", default="25,100,400,1000")
    c.add_argument("--games", type=int, default=50, help="games per seat")
    v = sub.add_parser("curve", help="win rate (from the sweep) against ms per decision")
    v.add_argument("--sweep", default=str(ROOT / "results" / "sweep-mc-samples"))
    v.add_argument("--games", type=int, default=50, help="games per seat for the timing")
    p = sub.add_parser("points", help="points per decided hand, binned as HAND_POINTS")
    p.add_argument("--games", type=int, default=50_000)
    args = ap.parse_args()
    {"model": cmd_model, "cost": cmd_cost, "curve": cmd_curve, "points": cmd_points}[args.cmd](args)


if __name__ == "__main__":
    main()
