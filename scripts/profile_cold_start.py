"""Where a cold start's compile time goes: every numba compilation, timed and counted.

Plays one Simple-vs-Simple game in this process and prints, for each
function numba compiled on the way, its CPU seconds excluding the
compilations it triggered (``exc``), including them (``inc``), and the
share of ``exc`` spent typing, in the other front-end and lowering passes,
in LLVM (function passes, module passes, machine code), building the
CPython and C wrappers and writing the cache.  Then the totals and four
counts that do not depend on the machine's load: compilations, call
typings (``Function.get_call_type``), numba IR statements lowered and
characters of LLVM IR optimised.  Run with an empty cache::

    NUMBA_CACHE_DIR=$(mktemp -d) python scripts/profile_cold_start.py [bot]

CPU seconds, not wall time: on a shared machine a process waits for a core
and wall time says little.  The timers wrap numba internals
(``CPUCodeLibrary``, ``CPUContext``, ``Cache``, ``Lower``), so they follow
numba 0.68; other versions may name them differently.
"""

from __future__ import annotations

import collections
import sys
import time
from typing import Any

T = time.process_time
START = T()

from numba.core import caching, codegen, cpu, lowering, typed_passes  # noqa: E402
from numba.core import event as numba_event  # noqa: E402
from numba.core.types import functions as numba_functions  # noqa: E402

CATEGORIES = ("typing", "other", "llvm_fpm", "llvm_mpm", "llvm_mc", "py_wrap", "c_wrap", "cache")
counts: collections.Counter[str] = collections.Counter()
totals: collections.Counter[str] = collections.Counter()
compiles: list[dict[str, Any]] = []
frames: list[dict[str, Any]] = []  # compilations in progress, innermost last
spans: list[list[Any]] = [["other", 0.0]]  # [category, child seconds], innermost last


def _timed(owner: Any, name: str, category: str) -> None:
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = T()
        spans.append([category, 0.0])
        try:
            return original(*args, **kwargs)
        finally:
            _, child = spans.pop()
            spent = T() - start
            spans[-1][1] += spent
            totals[category] += spent - child
            if frames:
                frames[-1]["cats"][category] += spent - child

    setattr(owner, name, timed)


def _counted(owner: Any, name: str, key: str, size: Any = None) -> None:
    original = getattr(owner, name)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts[key] += size(self) if size else 1
        return original(self, *args, **kwargs)

    setattr(owner, name, counted)


_timed(codegen.CPUCodeLibrary, "_optimize_functions", "llvm_fpm")
_timed(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm_mpm")
_timed(codegen.CPUCodeLibrary, "_finalize_final_module", "llvm_mc")
_timed(cpu.CPUContext, "create_cpython_wrapper", "py_wrap")
_timed(cpu.CPUContext, "create_cfunc_wrapper", "c_wrap")
_timed(caching.Cache, "save_overload", "cache")
_timed(typed_passes.BaseTypeInference, "run_pass", "typing")
_counted(numba_functions.Function, "get_call_type", "call_typings")
_counted(lowering.Lower, "lower_inst", "ir_statements_lowered")
_counted(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm_ir_chars", lambda lib: len(str(lib._final_module)))


class _Compiles(numba_event.Listener):
    def on_start(self, event: Any) -> None:
        data = event.data or {}
        fn = getattr(data.get("dispatcher"), "py_func", None)
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
        args = ", ".join(str(a).split("(")[0] if "Array" in str(a) else str(a) for a in data.get("args") or ())
        frames.append({"name": name, "args": args, "start": T(), "child": 0.0, "cats": collections.Counter()})
        spans.append(["other", 0.0])

    def on_end(self, event: Any) -> None:
        frame = frames.pop()
        category, child = spans.pop()
        spent = T() - frame["start"]
        spans[-1][1] += spent
        totals[category] += spent - child
        frame["cats"][category] += spent - child
        if frames:
            frames[-1]["child"] += spent
        frame.update(inc=spent, exc=spent - frame["child"])
        compiles.append(frame)


numba_event.register("numba:compile", _Compiles())


def main() -> None:
    import numpy as np

    from arena.engine.play import play_batch
    from arena.engine.rules_array import rules_array
    from arena.loading.load import load_bot
    from arena.settings.rules import load_rules

    imported = T()
    bot = load_bot(sys.argv[1] if len(sys.argv) > 1 else "simple")
    loaded = T()
    play_batch(bot, bot, rules_array(load_rules("standard")), np.arange(1))
    played = T()
    print(f"{'exc':>5} {'inc':>5} " + " ".join(f"{c:>8}" for c in CATEGORIES) + "  function (argument types)")
    for f in sorted(compiles, key=lambda f: -f["exc"]):
        cells = " ".join(f"{f['cats'][c]:8.2f}" for c in CATEGORIES)
        print(f"{f['exc']:5.2f} {f['inc']:5.2f} {cells}  {f['name']} ({f['args'][:70]})")
    print("CPU seconds by kind: " + ", ".join(f"{c} {totals[c]:.2f}" for c in CATEGORIES))
    print(f"compilations {len(compiles)}, " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
    print(
        f"CPU seconds: imports and the engine's eager compile {imported - START:.2f}, "
        f"loading the bot {loaded - imported:.2f}, first game {played - loaded:.2f}; process {T():.2f}"
    )


if __name__ == "__main__":
    main()
