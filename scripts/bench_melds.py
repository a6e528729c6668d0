"""Time the meld kernels in jitted loops over 1,000,000 random hands.

Prints the compile (or cache-load) time of the first calls, then ns per call
for ``deadwood`` on 10 cards and ``deadwood_after_discards`` /
``best_discard`` on 11 cards, each the median of 5 repetitions.
Run: ``python scripts/bench_melds.py``.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena.engine._jit import jit  # noqa: E402
from arena.engine.melds import best_discard, deadwood, deadwood_after_discards  # noqa: E402

N_HANDS = 1_000_000
REPEATS = 5
SEED = 12345

# The loops are not cached: numba's cache would not notice changes to the
# kernels they inline.
loop = jit(cache=False)


@loop
def _loop_deadwood(hands: np.ndarray) -> int:
    acc = 0
    for i in range(hands.shape[0]):
        acc += deadwood(hands[i])
    return acc


@loop
def _loop_discards(hands: np.ndarray) -> int:
    out = np.empty(52, dtype=np.int64)
    acc = 0
    for i in range(hands.shape[0]):
        acc += deadwood_after_discards(hands[i], out)
    return acc


@loop
def _loop_best_discard(hands: np.ndarray) -> int:
    acc = 0
    for i in range(hands.shape[0]):
        card, dw = best_discard(hands[i], -1)
        acc += card + dw
    return acc


def random_hands(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    hands = np.empty(n, dtype=np.int64)
    chunk = 100_000
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        cards = rng.random((m, 52)).argsort(axis=1)[:, :size].astype(np.int64)
        hands[lo : lo + m] = (np.int64(1) << cards).sum(axis=1)
    return hands


def time_ns_per_call(fn, hands: np.ndarray) -> float:
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn(hands)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / hands.size * 1e9


def main() -> None:
    rng = np.random.default_rng(SEED)
    hands10 = random_hands(N_HANDS, 10, rng)
    hands11 = random_hands(N_HANDS, 11, rng)

    t0 = time.perf_counter()
    for fn, hands in ((_loop_deadwood, hands10), (_loop_discards, hands11), (_loop_best_discard, hands11)):
        fn(hands[:10])
    compile_s = time.perf_counter() - t0
    print(f"compile (kernels cached or not, loops not): {compile_s:.2f} s")
    print(f"{N_HANDS:,} hands, median of {REPEATS}")
    print(f"deadwood                 10 cards: {time_ns_per_call(_loop_deadwood, hands10):6.1f} ns")
    print(f"deadwood_after_discards  11 cards: {time_ns_per_call(_loop_discards, hands11):6.1f} ns")
    print(f"best_discard             11 cards: {time_ns_per_call(_loop_best_discard, hands11):6.1f} ns")


if __name__ == "__main__":
    main()
