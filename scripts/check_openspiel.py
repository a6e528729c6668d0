"""Cross-check ``python_gin_arena`` against OpenSpiel's ``gin_rummy`` over many hands.

Both games get the arena's deal for each seed and the same moves; at every
step they must offer the same legal actions and hold the same hands, and
every hand must end with the same returns (:mod:`arena.env.openspiel_crosscheck`
says how the steps that differ by design are translated, and which hands
are counted apart).  Two drivers: random play (an open knock taken half the
time), and greedy play (discard to the least deadwood 80% of the time, knock
30% of the time) which reaches gins, undercuts and layoffs; and greedy play
under Oklahoma rules in both games.

    python scripts/check_openspiel.py                 # 11,500 random, 2,000 greedy, 1,000 Oklahoma hands
    python scripts/check_openspiel.py --random 500 --greedy 200 --oklahoma 100

Exits 1 at the first disagreement, naming the seed and the step.
"""

from __future__ import annotations

import argparse
import sys
import time

from arena.env.openspiel_crosscheck import EXCLUDED, Mismatch, Tally, run


def _report(name: str, tally: Tally, seconds: float) -> None:
    if not tally.hands:
        return
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(tally.kinds.items()))
    print(
        f"{name}: {tally.hands:,} hands, {tally.steps:,} steps, {tally.hands / seconds:.0f} hands/s\n"
        f"  ended: {kinds}\n"
        f"  compared to the end: {tally.compared:,}; counted apart ({', '.join(EXCLUDED)}): "
        f"{tally.hands - tally.compared:,}; dead hands where OpenSpiel's wall knock was open: "
        f"{tally.wall_knock_open:,}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--random", type=int, default=11_500, help="hands of random play (default 11,500)")
    ap.add_argument("--greedy", type=int, default=2_000, help="hands of greedy play (default 2,000)")
    ap.add_argument("--oklahoma", type=int, default=1_000, help="hands of greedy play, Oklahoma (default 1,000)")
    ap.add_argument("--seed", type=int, default=0, help="first deal seed (default 0)")
    args = ap.parse_args()
    try:
        t = time.perf_counter()
        tally = run(args.random, seed=args.seed)
        _report("random play", tally, time.perf_counter() - t)
        t = time.perf_counter()
        tally = run(args.greedy, seed=args.seed + args.random, knock_p=0.3, greedy=True)
        _report("greedy play", tally, time.perf_counter() - t)
        t = time.perf_counter()
        both = {"oklahoma": True}
        tally = run(
            args.oklahoma,
            seed=args.seed + args.random + args.greedy,
            rules=both,
            os_params=both,
            knock_p=0.3,
            greedy=True,
        )
        _report("greedy play, Oklahoma", tally, time.perf_counter() - t)
    except Mismatch as e:
        print(f"MISMATCH {e}", file=sys.stderr)
        return 1
    print("OK: same legal actions at every step, same hands, same returns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
