"""EAAI-kit players through the adapter: a kit-style Simple against the built-in ``simple``, and speed.

Plays ``--pairs`` duplicate pairs (each seed with both seatings) of the kit-style Simple player
of the tests (``tests/bots/eaai``, compiled here against the stand-in kit, or ``--kit`` and
``--players`` with ``--player`` for any kit and player) against the built-in ``simple`` under
the ``eaai`` rules, and prints the kit player's win rate with a pair-clustered 95% interval,
the protocol errors, and the median time per decision of the kit player (wall clock, from the
question to the answer).

Run: ``python scripts/bench_eaai.py [--pairs 1000] [--kit DIR_OR_JAR --players DIR_OR_JAR --player CLASS]``
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _compile_stand_ins(work: Path) -> tuple[Path, Path]:
    kit, players = work / "kit", work / "players"
    src = ROOT / "tests" / "bots" / "eaai"
    subprocess.run(["javac", "-d", str(kit), *map(str, (src / "kit" / "ginrummy").glob("*.java"))], check=True)
    sources = map(str, (src / "players" / "players").glob("*.java"))
    subprocess.run(["javac", "-cp", str(kit), "-d", str(players), *sources], check=True)
    for p in [work, *work.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return kit, players


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20_000)
    ap.add_argument("--kit")
    ap.add_argument("--players")
    ap.add_argument("--player", default="players.KitSimplePlayer")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-eaai-"))
    work.chmod(0o755)
    kit, players = (Path(args.kit), Path(args.players)) if args.kit else _compile_stand_ins(work)
    os.environ["GIN_ARENA_EAAI_KIT"] = str(kit.resolve())

    from arena.engine.layout import G_WINNER
    from arena.engine.play import play_batch
    from arena.engine.rules_array import rules_array
    from arena.external.client import close_bot, external_of
    from arena.loading.load import load, load_bot
    from arena.settings.botref import BotRef
    from arena.settings.rules import load_rules

    kit_bot = load(BotRef.parse(f"eaai:{players}:{args.player}"))
    external_of(kit_bot).times = []
    simple = load_bot("simple")
    r = rules_array(load_rules("eaai"))
    seeds = np.arange(args.seed, args.seed + args.pairs)
    t0 = time.perf_counter()
    a = play_batch(kit_bot, simple, r, seeds)
    b = play_batch(simple, kit_bot, r, seeds)
    wall = time.perf_counter() - t0
    times = external_of(kit_bot).times or [0.0]
    close_bot(kit_bot)
    per_pair = (a.games[:, G_WINNER] == 0).astype(float) + (b.games[:, G_WINNER] == 1).astype(float)
    rate = per_pair.mean() / 2
    half = 1.96 * per_pair.std(ddof=1) / 2 / math.sqrt(len(per_pair))
    print(f"{args.player} vs simple, eaai rules, {2 * args.pairs} games ({args.pairs} duplicate pairs)")
    print(f"win rate {100 * rate:.1f}% [{100 * (rate - half):.1f}, {100 * (rate + half):.1f}] (pair-clustered 95%)")
    print(f"protocol errors / forfeits: {len(a.errors) + len(b.errors)}")
    print(f"decisions {len(times)}, median {1000 * float(np.median(times)):.3f} ms, wall {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
