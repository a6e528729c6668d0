"""Fit the luck analysis's value function (``arena/analysis/luck_value.npz``) from simulated games.

How it is made:

1. Play a round-robin of the fast built-in bots (simple, early-knock,
   gin-chasing, discard-tracking) under the standard rules, duplicate
   pairs, action logs kept, with a seed of its own (never the seeds of the
   games it will later be used on).
2. Replay every game with :func:`arena.analysis.luck.game_luck`'s kernel and
   note, at each stock draw, the drawer's deadwood bin after the best
   discard, the opponent's deadwood bin and the stock bin; at each deal, the
   non-dealer's and the dealer's deadwood bins; and how that hand ended for
   that seat (its margin, whether it won or lost the hand, and the points).
3. Each cell's value is the mean over its events, shrunk toward the cell's
   coarser margin (the cell without the stock bin, then the drawer's bin
   alone) with the weight of ``SHRINK`` events, so thin cells are smooth.

The file holds the tables and, in ``meta``, this command, the games and the
seed.  The analysis reads it and nothing else, and records its SHA-256.

Run: ``nice python scripts/fit_luck_value.py [--games 40000] [--out arena/analysis/luck_value.npz]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis import luck  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.run.runner import run_tournament  # noqa: E402
from arena.run.store import RunStore  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402

BOTS = ("simple", "early-knock", "gin-chasing", "discard-tracking")
SHRINK = 30.0
SEED = 340_001


def collect(run: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-cell sums over events: [count, margin, won, points won, lost, points lost] for draws and deals."""
    store = RunStore(run)
    rules = rules_array(store.rules())
    zero_draw = np.zeros((len(luck.PLANES), luck.NB, luck.NB, luck.NS))
    zero_deal = np.zeros((len(luck.PLANES), luck.NB, luck.NB))
    draw = np.zeros((6, luck.NB, luck.NB, luck.NS))
    deal = np.zeros((6, luck.NB, luck.NB))
    games = 0
    for chunk in store.chunks(["game_id", "seed", "error"], actions=True):
        assert chunk.actions is not None
        acts = dict(zip(chunk.actions["game_id"].tolist(), chunk.actions["actions"].tolist(), strict=True))
        for gid, seed, err in zip(chunk.games["game_id"], chunk.games["seed"], chunk.games["error"], strict=True):
            if err or gid not in acts:
                continue
            ans = np.frombuffer(acts[gid], dtype=np.uint8).astype(np.int64)
            ev = np.zeros((2 * ans.size + 2, len(luck.EVENT_COLUMNS)))
            hands = np.zeros((ans.size + 1, 2))
            n_ev, n_h, status = luck._game_luck(np.int64(seed), rules, ans, zero_draw, zero_deal, ev, hands)
            assert status == 0
            games += 1
            ev = ev[:n_ev]
            first = int(ev[0, 0])
            h = ev[:, 0].astype(np.int64) - first
            keep = h < n_h  # the events of a finished hand (a game's last hand always finishes)
            ev, h = ev[keep], h[keep]
            seat = ev[:, 2].astype(np.int64)
            mine = hands[h, seat]
            theirs = hands[h, 1 - seat]
            vals = np.stack([np.ones(len(ev)), mine - theirs, mine > 0, mine, theirs > 0, theirs])
            a, b, s = ev[:, 5].astype(np.int64), ev[:, 6].astype(np.int64), ev[:, 7].astype(np.int64)
            dr = ev[:, 1] == luck.KIND_DRAW
            for i in range(6):
                np.add.at(draw[i], (a[dr], b[dr], s[dr]), vals[i, dr])
                np.add.at(deal[i], (a[~dr], b[~dr]), vals[i, ~dr])
    return draw, deal, games


def shrunk(total: np.ndarray, weight: np.ndarray, prior: np.ndarray) -> np.ndarray:
    return (total + SHRINK * prior) / (weight + SHRINK)


def planes(sums: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The five value planes from cell sums, each cell shrunk toward its margin over ``axes`` (recursively)."""
    n, margin, won, pts_won, lost, pts_lost = sums
    if axes:
        coarse = planes(sums.sum(axis=axes[0] + 1, keepdims=True), axes[1:])
        prior = np.broadcast_to(coarse, (5, *n.shape))
    else:
        tot = sums.reshape(6, -1).sum(axis=1)
        p = np.array(
            [tot[1] / tot[0], tot[2] / tot[0], tot[3] / max(tot[2], 1), tot[4] / tot[0], tot[5] / max(tot[4], 1)]
        )
        prior = np.broadcast_to(p.reshape(5, *([1] * n.ndim)), (5, *n.shape))
    return np.stack(
        [
            shrunk(margin, n, prior[0]),
            shrunk(won, n, prior[1]),
            shrunk(pts_won, won, prior[2]),
            shrunk(lost, n, prior[3]),
            shrunk(pts_lost, lost, prior[4]),
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=40000, help="games per matchup (default 40000)")
    ap.add_argument("--out", type=Path, default=ROOT / "arena" / "analysis" / "luck_value.npz")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    t0 = time.time()
    results = Path(tempfile.mkdtemp(prefix="fit-luck-"))
    cfg = TournamentConfig(
        name="fit",
        bots=BOTS,
        games_per_pair=args.games,
        chunk_size=2000,
        seed=SEED,
        workers=args.workers,
        record_hands=True,
        record_log=True,
        results_dir=str(results),
    )
    run_tournament(cfg, progress=False)
    draw, deal, games = collect(results / "fit")
    # draw cells: [drawer bin, opponent bin, stock bin]: shrink over the stock bin, then the opponent's bin
    draw_v = planes(draw, (2, 1))
    deal_v = planes(deal, (1,))
    meta = {
        "source": "scripts/fit_luck_value.py",
        "command": " ".join(["python", "scripts/fit_luck_value.py", *sys.argv[1:]]),
        "bots": list(BOTS),
        "rules": "standard",
        "games": games,
        "seed": SEED,
        "draw_events": int(draw[0].sum()),
        "deal_events": int(deal[0].sum()),
        "shrink": SHRINK,
    }
    np.savez_compressed(args.out, draw=draw_v, deal=deal_v, meta=np.array(json.dumps(meta)))
    print(json.dumps(meta))
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
