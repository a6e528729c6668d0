"""Where a Simple-vs-Simple game's time goes, compiled function by function (Linux ``perf``).

Compiles the engine and Simple into an empty numba cache (so numba still
holds each function's LLVM module), writes ``/tmp/perf-<pid>.map`` naming
the machine code of every compiled function, then starts
``perf record -F 2999 -p <pid>`` on this process, plays ``GAMES`` games and
stops it.  ``perf report`` then names the JIT code::

    NUMBA_CACHE_DIR=$(mktemp -d) python scripts/profile_hands.py [GAMES] [OUT]
    perf report -i OUT --no-children --sort sym

``OUT`` defaults to ``/tmp/gin-arena-hands.perf``.  Only the games are
sampled (not the imports or the compile).  A function's end is taken as the
start of the next one in the map, and a private helper that LLVM inlined
counts for its caller.  Prints the games' CPU seconds and hands, so two
checkouts can be compared per hand: the ``arena`` imported is the one on
``PYTHONPATH`` (``PYTHONPATH=../other-checkout`` profiles that one).
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time

import numpy as np

from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.rules import load_rules


def write_perf_map(path: str) -> int:
    """Name every function of every finalized numba code library; return how many."""
    from numba.core.codegen import CPUCodeLibrary
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine._ee
    addresses: dict[int, str] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, CPUCodeLibrary) or not obj._finalized:
            continue
        module = getattr(obj, "_final_module", None)
        if module is None:  # loaded from the cache: no module to name the code with
            continue
        for fn in module.functions:
            if fn.is_declaration:
                continue
            address = engine.get_function_address(fn.name)
            if address:
                addresses[address] = fn.name
    items = sorted(addresses.items())
    with open(path, "w") as out:
        for i, (address, name) in enumerate(items):
            size = min(items[i + 1][0] - address, 1 << 16) if i + 1 < len(items) else 4096
            out.write(f"{address:x} {size:x} {name}\n")
    return len(items)


def main(argv: list[str]) -> None:
    games = int(argv[0]) if argv else 40_000
    out = argv[1] if len(argv) > 1 else "/tmp/gin-arena-hands.perf"
    simple = load_bot("simple")
    rules = rules_array(load_rules("standard"))
    play_batch(simple, simple, rules, np.arange(10))  # compile everything
    named = write_perf_map(f"/tmp/perf-{os.getpid()}.map")
    if named == 0:
        raise SystemExit("profile_hands: no compiled code to name; run with an empty NUMBA_CACHE_DIR")
    perf = subprocess.Popen(
        ["perf", "record", "-F", "2999", "-p", str(os.getpid()), "-o", out],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # perf attaches
    cpu = time.process_time()
    records = play_batch(simple, simple, rules, np.arange(1000, 1000 + games, dtype=np.int64))
    cpu = time.process_time() - cpu
    perf.send_signal(signal.SIGINT)
    perf.wait()
    hands = int(records.games[:, 3].sum())
    print(f"{games} games, {hands} hands, {cpu:.3f} CPU s ({1e6 * cpu / hands:.2f} us per hand); samples in {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
