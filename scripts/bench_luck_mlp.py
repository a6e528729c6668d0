"""A learned value function for the luck of the draws: a small MLP over the full state, against the shipped table.

Experiment, not shipped.  The value after a stock draw of card ``c`` is a
multilayer perceptron over what is known once the drawer has taken ``c``
and made its least-deadwood discard (from the drawer's side):

* the drawer's ten cards, the opponent's ten cards, the discarded card and
  the discard pile below it (52 bits each);
* the drawer's deadwood, the opponent's, the opponent's if it took the
  discard, the drawer's and the opponent's expected deadwood after one more
  stock draw (live outs), can-knock and gin flags, the stock left and both
  seats' points still needed to win the game.

Two heads: the hand's margin for the drawer (points, regression) and the
drawer's chance of winning the game (logistic).  It is trained offline with
torch on games of a run of its own seed (``--fit-seed``, never the test
run's), then frozen; the test games' luck at each stock draw is
``V(s, c) - mean over the stock's cards c' of V(s, c')``, which has mean
zero whatever V is (the next card is uniform over the stock), so the
adjusted result stays unbiased.  The deals keep the shipped table's term.

Printed: on the test pairs (seed 34, as in ``bench_luck.py gain``), the
points and win variance ratios (plain / adjusted) of the shipped table and of
the MLP, each with a 95% bootstrap interval over pairs, the mean luck per
pair with its interval (unbiasedness), and the seconds per game of each luck kernel.

Run: ``nice python scripts/bench_luck_mlp.py --fit-games 30000 --games 4000 --epochs 4``
     ``nice python scripts/bench_luck_mlp.py --a mc-fast --b simple --games 400 --weights W.npz`` (W from a run above)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_luck  # noqa: E402

from arena.analysis import luck  # noqa: E402
from arena.botkit.lib import mean_deadwood_after_draw  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.layout import (  # noqa: E402
    PH_DONE,
    R_TARGET,
    S_DECK,
    S_HAND,
    S_HAND_NO,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_STOCK_POS,
)
from arena.engine.melds import best_discard, deadwood  # noqa: E402
from arena.engine.rng import RNG_WORDS  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.engine.step import apply_action, begin_hand, end_hand  # noqa: E402
from arena.run.store import RunStore  # noqa: E402

NF = 4 * 52 + 10  # features per candidate card


@jit
def _features(st, drawer, c, stock, target, x):
    """Fill ``x`` with the features of the state after ``drawer`` takes ``c`` and makes its best discard."""
    one = np.int64(1)
    hand = st[S_HAND + drawer] | (one << c)
    disc, left = best_discard(hand, np.int64(-1))
    mine = hand & ~(one << disc)
    opp = st[S_HAND + 1 - drawer]
    rest = stock & ~(one << c)
    x[:] = 0.0
    for k in range(52):
        if (mine >> k) & 1:
            x[k] = 1.0
        if (opp >> k) & 1:
            x[52 + k] = 1.0
    x[104 + disc] = 1.0
    for i in range(st[S_PILE_N]):
        x[156 + st[S_PILE + i]] = 1.0
    o = 208
    dwo = deadwood(opp)
    take = best_discard(opp | (one << disc), disc)[1]
    x[o] = left / 25.0
    x[o + 1] = dwo / 25.0
    x[o + 2] = take / 25.0
    x[o + 3] = mean_deadwood_after_draw(mine, rest) / 25.0
    x[o + 4] = min(mean_deadwood_after_draw(opp, rest), float(take)) / 25.0
    x[o + 5] = 1.0 if left <= 10 else 0.0
    x[o + 6] = 1.0 if left == 0 else 0.0
    x[o + 7] = (52 - st[S_STOCK_POS] - 1) / 32.0
    x[o + 8] = (target - st[S_SCORE + drawer]) / 100.0
    x[o + 9] = (target - st[S_SCORE + 1 - drawer]) / 100.0


@jit
def _forward(x, w1, b1, w2, b2, w3, b3, h1, h2, out):
    """The MLP on one feature vector: out[0] the hand margin (points), out[1] the logit of winning the game."""
    for j in range(w1.shape[1]):
        s = b1[j]
        for i in range(x.shape[0]):
            if x[i] != 0.0:
                s += x[i] * w1[i, j]
        h1[j] = s if s > 0.0 else 0.0
    for j in range(w2.shape[1]):
        s = b2[j]
        for i in range(h1.shape[0]):
            s += h1[i] * w2[i, j]
        h2[j] = s if s > 0.0 else 0.0
    for j in range(w3.shape[1]):
        s = b3[j]
        for i in range(h2.shape[0]):
            s += h2[i] * w3[i, j]
        out[j] = s


@jit
def _replay(seed, rules, answers, fit, feats, meta, w1, b1, w2, b2, w3, b3, luck_out):
    """Replay one game.  ``fit``: write the drawn card's features and (hand no, drawer) per draw into feats/meta;
    else: sum seat 0's luck (points, win) with the MLP into ``luck_out``.  Returns the number of draws."""
    st, row = luck.replay_start(seed, rules)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    target = rules[R_TARGET]
    x = np.zeros(NF)
    h1 = np.zeros(w1.shape[1])
    h2 = np.zeros(w2.shape[1])
    out = np.zeros(w3.shape[1])
    n = 0
    pos = 0
    while pos < answers.shape[0]:
        begin_hand(st, rules, seed, scratch)
        while st[S_PHASE] != PH_DONE and pos < answers.shape[0]:
            a = answers[pos]
            drawer = luck.stock_drawer(st, a)
            if drawer >= 0:
                sp = st[S_STOCK_POS]
                stock = bench_luck.stock_set(st)
                if fit:
                    _features(st, drawer, st[S_DECK + sp], stock, target, feats[n])
                    meta[n, 0] = st[S_HAND_NO]
                    meta[n, 1] = drawer
                else:
                    sp_ = 0.0
                    sw = 0.0
                    gp = 0.0
                    gw = 0.0
                    sc = 0.0
                    gc = 0.0
                    need_me = float(target - st[S_SCORE + drawer])
                    need_opp = float(target - st[S_SCORE + 1 - drawer])
                    for i in range(sp, 52):
                        _features(st, drawer, st[S_DECK + i], stock, target, x)
                        _forward(x, w1, b1, w2, b2, w3, b3, h1, h2, out)
                        pw = 1.0 / (1.0 + np.exp(-out[1]))
                        # the game's chance from the hand's outcome heads and the game-value table, as the table does
                        pc = luck._win_value(
                            1.0 / (1.0 + np.exp(-out[2])), 25.0 * out[3], 1.0 / (1.0 + np.exp(-out[4])),
                            25.0 * out[5], need_me, need_opp,
                        )  # fmt: skip
                        sp_ += out[0]
                        sw += pw
                        sc += pc
                        if i == sp:
                            gp = out[0]
                            gw = pw
                            gc = pc
                    m = 52 - sp
                    sign = 1.0 if drawer == 0 else -1.0
                    luck_out[0] += sign * (gp - sp_ / m)
                    luck_out[1] += sign * (gw - sw / m)
                    luck_out[2] += sign * (gc - sc / m)
                n += 1
            if apply_action(st, rules, a) != 0:
                return n
            pos += 1
        if st[S_PHASE] != PH_DONE or end_hand(st, rules, row):
            break
    return n


_NO_W = (np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 6)), np.zeros(6))


def collect(run: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features of every stock draw of a run's games; the drawer's hand points and the opponent's; whether the
    drawer won the game."""
    xs, ys, ws = [], [], []
    zd = np.zeros((len(luck.PLANES), luck.NB, luck.NB, luck.NS))
    zl = np.zeros((len(luck.PLANES), luck.NB, luck.NB))
    for rules, r, ans in bench_luck.stored_games(run):
        feats = np.zeros((ans.size + 2, NF), dtype=np.float64)
        meta = np.zeros((ans.size + 2, 2), dtype=np.int64)
        n = _replay(np.int64(r.seed), rules, ans, True, feats, meta, *_NO_W, np.zeros(3))
        ev = np.zeros((2 * ans.size + 2, len(luck.EVENT_COLUMNS)))
        hands = np.zeros((ans.size + 1, 2))
        n_lk, n_h, _ = luck._game_luck(np.int64(r.seed), rules, ans, zd, zl, ev, hands)
        first = int(ev[0, 0])
        h = meta[:n, 0] - first
        keep = h < n_h
        seat = meta[:n, 1][keep]
        hk = h[keep]
        winner = 0 if r.score0 > r.score1 else 1
        xs.append(feats[:n][keep].astype(np.float32))
        ys.append(np.column_stack([hands[hk, seat], hands[hk, 1 - seat]]))
        ws.append((seat == winner).astype(np.float32))
    return np.concatenate(xs), np.concatenate(ys).astype(np.float32), np.concatenate(ws)


def train(x: np.ndarray, y: np.ndarray, w: np.ndarray, hidden: int, epochs: int, seed: int) -> tuple:
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    n = len(x)
    perm = np.random.default_rng(seed).permutation(n)
    val = perm[: n // 20]
    tr = perm[n // 20 :]
    X = torch.from_numpy(x)
    Y = torch.from_numpy(y / 25.0)  # (mine, theirs) in units of 25 points
    W = torch.from_numpy(w)
    net = torch.nn.Sequential(
        torch.nn.Linear(NF, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, 6),
    )  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=2e-3, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    bce = torch.nn.BCEWithLogitsLoss()

    def loss(idx):
        """Heads: hand margin, game won (logit), hand won (logit), its points, hand lost (logit), its points."""
        o = net(X[idx])
        y = Y[idx]
        won = (y[:, 0] > 0).float()
        lost = (y[:, 1] > 0).float()
        lm = torch.nn.functional.mse_loss(o[:, 0], y[:, 0] - y[:, 1])
        lw = bce(o[:, 1], W[idx])
        lh = bce(o[:, 2], won) + bce(o[:, 4], lost)
        lh = lh + (won * (o[:, 3] - y[:, 0]) ** 2).mean() + (lost * (o[:, 5] - y[:, 1]) ** 2).mean()
        return lm, lw + lh

    vi = torch.from_numpy(val)
    with torch.no_grad():
        d = Y[:, 0] - Y[:, 1]
        base_m = float(((d[vi] - d[torch.from_numpy(tr)].mean()) ** 2).mean())
    for ep in range(epochs):
        net.train()
        order = torch.from_numpy(np.random.default_rng(seed + ep).permutation(tr))
        for k in range(0, len(order), 512):
            lm, lw = loss(order[k : k + 512])
            opt.zero_grad()
            (lm + lw).backward()
            opt.step()
        sched.step()
        net.eval()
        with torch.no_grad():
            lm, lw = loss(vi)
        print(f"# epoch {ep + 1}: validation margin R^2 {1 - float(lm) / base_m:.3f}, other losses {float(lw):.4f}",
              flush=True)  # fmt: skip
    sd = [p.detach().numpy().astype(np.float64) for p in net.parameters()]
    # torch Linear stores (out, in): the kernel wants (in, out)
    return (
        np.ascontiguousarray(sd[0].T), sd[1], np.ascontiguousarray(sd[2].T), sd[3], np.ascontiguousarray(sd[4].T),
        sd[5],
    )  # fmt: skip


def mlp_luck(run: Path, weights: tuple) -> tuple[pd.DataFrame, float]:
    rows = []
    t = 0.0
    for k, (rules, r, ans) in enumerate(bench_luck.stored_games(run)):
        if k == 1:
            t = time.time()  # the first game compiles the kernel
        lo = np.zeros(3)
        f = np.zeros((1, NF))
        _replay(np.int64(r.seed), rules, ans, False, f, np.zeros((1, 2), dtype=np.int64), *weights, lo)
        sg = 1.0 if r.swap == 0 else -1.0
        # the points head is in units of 25 points
        rows.append((r.game_id, sg * lo[0] * 25.0, sg * lo[1], sg * lo[2]))
    return pd.DataFrame(rows, columns=["game_id", "mlp_points", "mlp_win", "mlp_win_hands"]), time.time() - t


def _ratio_ci(plain: np.ndarray, adj: np.ndarray, seed: int = 7, boots: int = 1000) -> str:
    r = plain.var(ddof=1) / adj.var(ddof=1)
    rng = np.random.default_rng(seed)
    n = len(plain)
    bs = []
    for _ in range(boots):
        i = rng.integers(0, n, n)
        bs.append(plain[i].var(ddof=1) / adj[i].var(ddof=1))
    lo, hi = np.percentile(bs, [2.5, 97.5])
    return f"{r:.2f} ({lo:.2f}, {hi:.2f})"


def _gain_ci(y: np.ndarray, table: np.ndarray, mlp: np.ndarray, seed: int = 8, boots: int = 1000) -> str:
    """var(y - table luck) / var(y - MLP luck): how many times fewer games the MLP needs than the table."""
    g = (y - table).var(ddof=1) / (y - mlp).var(ddof=1)
    rng = np.random.default_rng(seed)
    bs = []
    for _ in range(boots):
        i = rng.integers(0, len(y), len(y))
        bs.append((y[i] - table[i]).var(ddof=1) / (y[i] - mlp[i]).var(ddof=1))
    lo, hi = np.percentile(bs, [2.5, 97.5])
    return f"{g:.3f} ({lo:.3f}, {hi:.3f})"


def _mean_ci(x: np.ndarray) -> str:
    m = x.mean()
    h = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
    return f"{m:+.4f} ({m - h:+.4f}, {m + h:+.4f}), z {m / (h / 1.96):+.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", default="gin-chasing")
    ap.add_argument("--b", default="early-knock")
    ap.add_argument("--fit-games", type=int, default=16000)
    ap.add_argument("--fit-seed", type=int, default=991)
    ap.add_argument("--games", type=int, default=4000)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--results", default="", help="keep the runs in this folder (and reuse those found there)")
    ap.add_argument("--single", action="store_true", help="test on single games, not duplicate pairs")
    ap.add_argument("--weights", default="", help="reuse (or save) the trained weights in this .npz")
    args = ap.parse_args()
    base = bench_luck._base(args, "bench-luck-mlp-")
    test_run = bench_luck.play(base / "test", args.a, args.b, args.games, 34, args.workers, not args.single)
    t = time.time()
    bench_luck.measure(test_run, args.workers)
    t_table = time.time() - t
    wpath = Path(args.weights) if args.weights else None
    reused = wpath is not None and wpath.exists()
    if wpath is not None and reused:
        with np.load(wpath) as z:
            weights = tuple(z[f"a{i}"] for i in range(6))
        print(f"# weights reused from {wpath}")
    else:
        fit_run = bench_luck.play(base / "fit", args.a, args.b, args.fit_games, args.fit_seed, args.workers)
        t = time.time()
        x, y, w = collect(fit_run)
        print(f"# {len(x):,} draws collected in {time.time() - t:.0f} s", flush=True)
        t = time.time()
        weights = train(x, y, w, args.hidden, args.epochs, args.fit_seed)
        print(f"# trained in {time.time() - t:.0f} s", flush=True)
        del x, y, w
        if wpath is not None:
            np.savez(wpath, **{f"a{i}": a for i, a in enumerate(weights)})
    # time the table's kernel alone on the same games, after compiling both
    store = RunStore(test_run)
    tasks = list(luck._tasks(store, tuple(int(v) for v in rules_array(store.rules()))))
    luck.run_task(tasks[0])
    t = time.time()
    for task in tasks:  # the same games the MLP pass times (less its first)
        luck.run_task(task)
    t_table = time.time() - t
    lk, t_mlp = mlp_luck(test_run, weights)
    tab = pd.concat(list(store.analysis_parts(luck.TABLE))).merge(lk, on="game_id")
    p = tab.groupby("pair")[["margin", "win", "luck_points", "luck_win", "deal_points", "deal_win", "mlp_points",
                             "mlp_win", "mlp_win_hands"]].mean()  # fmt: skip
    made = f"from {wpath}" if reused else f"fitted on {args.fit_games:,} games of it (seed {args.fit_seed})"
    print(f"\n{args.a} vs {args.b}: MLP {NF}-{weights[0].shape[1]}-{weights[2].shape[1]}-6 {made}, "
          f"tested on {len(tab):,} games, {len(p):,} pairs (seed 34)")  # fmt: skip
    print(
        "| value at the draws (deals: the shipped table) | points ratio (95% bootstrap) | win ratio (95%) | "
        "corr with pair result, points | mean draw luck per pair, points (95%) | win (95%) | luck pass, s/game |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, lp, lw, dt in (
        ("shipped table", p["luck_points"], p["luck_win"], t_table),
        ("MLP (win: its game-win head)", p["mlp_points"] + p["deal_points"], p["mlp_win"] + p["deal_win"], t_mlp),
        ("MLP (win: its hand heads + the game-value table)", p["mlp_points"] + p["deal_points"],
         p["mlp_win_hands"] + p["deal_win"], t_mlp),
    ):  # fmt: skip
        dp = (lp - p["deal_points"]).to_numpy()
        dw = (lw - p["deal_win"]).to_numpy()
        print(
            f"| {name} | {_ratio_ci(p['margin'].to_numpy(), (p['margin'] - lp).to_numpy())} | "
            f"{_ratio_ci(p['win'].to_numpy(), (p['win'] - lw).to_numpy())} | "
            f"{np.corrcoef(p['margin'], lp)[0, 1]:.2f} | {_mean_ci(dp)} | {_mean_ci(dw)} | {dt / (len(tab) - 1):.5f} |"
        )
    mp = p["mlp_points"] + p["deal_points"]
    mw = p["mlp_win_hands"] + p["deal_win"]
    print("\nMLP ratio / table ratio, the same bootstrap resamples of pairs (95%):")
    print(f"points: {_gain_ci(p['margin'].to_numpy(), p['luck_points'].to_numpy(), mp.to_numpy())}")
    print(f"win (hand heads): {_gain_ci(p['win'].to_numpy(), p['luck_win'].to_numpy(), mw.to_numpy())}")
    mw = p["mlp_win"] + p["deal_win"]
    print(f"win (game-win head): {_gain_ci(p['win'].to_numpy(), p['luck_win'].to_numpy(), mw.to_numpy())}")


if __name__ == "__main__":
    main()
