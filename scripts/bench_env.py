"""Agent steps per second of the env against PettingZoo's ``gin_rummy_v4`` and OpenSpiel's ``gin_rummy``.

One process, one core (``os.sched_setaffinity``), measured side by side: every
round measures each contestant once, in turn, and the table shows each one's
median over the rounds and its ratio to PettingZoo's.  An agent step is one
decision of the learning seat, with a random legal action:

* Gin Arena, :class:`arena.env.gym.VectorGinEnv` against ``--opponent``
  (Simple by default) at batch 1, 64, 1024 and 4096, the random choice made
  by a small numba function over the masks (counted in the time);
* Gin Arena, one :class:`arena.env.gym.GinEnv` through ``gymnasium.make``:
  the median cost of one ``step()`` call (the choice not counted);
* PettingZoo ``gin_rummy_v4`` (an AEC env over RLCard): both seats random,
  every decision counted, as the library is driven in self-play;
* OpenSpiel ``gin_rummy`` through pyspiel: both seats random, every decision
  of a player counted (chance nodes are dealt by sampling, not counted).

PettingZoo dropped ``gin_rummy_v4`` after 1.24 (and it needs ``rlcard``,
which is not a project dependency).  When this interpreter cannot import it,
``--pettingzoo-python PATH`` names an interpreter that can (e.g. a venv with
``pettingzoo==1.24.3 rlcard pygame``); that interpreter runs this same file
with ``--pettingzoo-worker``, pinned to the same core, in the same rounds.

Times are CPU seconds of the measuring process (``time.process_time``), so a
busy neighbour on a shared machine slows a contestant's wall clock, not its
figure; wall-clock figures are printed too.  ``--json`` writes the medians.

``--compare CHECKOUT`` (repeatable) measures Gin Arena's contestants only, in
this checkout and in each other one (a ``git worktree`` or a ``git archive``
of another commit, its kernels compiled once before), interleaved: every round
runs each checkout once, in turn, in a process of its own pinned to the same
core, so a busy machine slows them alike; the table gives each one's median
and its ratio to this checkout's.

Run: ``nice python scripts/bench_env.py [--rounds 3] [--seconds 1.5] [--pettingzoo-python PATH] [--json FILE]``
or ``nice python scripts/bench_env.py --compare ../old [--rounds 5] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BATCHES = (1, 64, 1024, 4096)


def _pin() -> int:
    """Pin this process to one core (the first allowed); return it."""
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


# --- PettingZoo (may run in another interpreter) -----------------------------------------


def pettingzoo_steps(seconds: float, seed: int) -> dict[str, float]:
    """Random legal self-play in ``gin_rummy_v4`` for about ``seconds``: decisions per CPU and wall second."""
    from pettingzoo.classic import gin_rummy_v4

    env = gin_rummy_v4.env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    cpu, wall = time.process_time(), time.perf_counter()
    while True:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            if not env.agents:
                env.reset(seed=int(rng.integers(1 << 30)))
                if time.process_time() - cpu > seconds:
                    break
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return {"cpu": steps / (time.process_time() - cpu), "wall": steps / (time.perf_counter() - wall)}


def _pettingzoo_measure(python: str | None, seconds: float, seed: int) -> dict[str, float] | None:
    if python is None:
        try:
            return pettingzoo_steps(seconds, seed)
        except ImportError:
            return None
    core = min(os.sched_getaffinity(0))
    cmd = ["taskset", "-c", str(core), python, __file__, "--pettingzoo-worker", "--seconds", str(seconds)]
    out = subprocess.run([*cmd, "--seed", str(seed)], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- OpenSpiel ----------------------------------------------------------------------------


def openspiel_steps(seconds: float, seed: int) -> dict[str, float] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(seed)
    steps = 0
    cpu, wall = time.process_time(), time.perf_counter()
    while time.process_time() - cpu < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                steps += 1
    return {"cpu": steps / (time.process_time() - cpu), "wall": steps / (time.perf_counter() - wall)}


# --- Gin Arena ----------------------------------------------------------------------------


def _picker():
    import numba

    @numba.njit(cache=True, nogil=True)
    def pick(masks, out, state):
        """A uniformly random legal action per row of ``masks`` (a 64-bit LCG; returns its new state)."""
        for i in range(masks.shape[0]):
            n = 0
            for a in range(masks.shape[1]):
                n += masks[i, a]
            state = (state * 6364136223846793005 + 1442695040888963407) & 0x7FFFFFFFFFFFFFFF
            k = (state >> 17) % n
            for a in range(masks.shape[1]):
                if masks[i, a]:
                    if k == 0:
                        out[i] = a
                        break
                    k -= 1
        return state

    return pick


def arena_vector_steps(n: int, opponent: str, seconds: float, seed: int, pick: Any) -> dict[str, float]:
    from arena.env.gym import VectorGinEnv

    env = VectorGinEnv(n, opponent=opponent, copy=False)
    _, info = env.reset(seed=seed)
    actions = np.zeros(n, dtype=np.int64)
    state = pick(info["action_mask"], actions, seed + 1)
    steps = 0
    cpu, wall = time.process_time(), time.perf_counter()
    while True:
        for _ in range(max(1, 4096 // n)):
            _, _, _, _, info = env.step(actions)
            state = pick(info["action_mask"], actions, state)
            steps += n
        if time.process_time() - cpu > seconds:
            break
    return {"cpu": steps / (time.process_time() - cpu), "wall": steps / (time.perf_counter() - wall)}


def arena_single_step_us(opponent: str, steps: int, seed: int) -> dict[str, float]:
    """Median microseconds of one ``step()`` of ``gymnasium.make("gin_arena/Gin-v0")`` (wrappers included)."""
    import gymnasium

    import arena.env  # noqa: F401  (registers the id)

    env = gymnasium.make("gin_arena/Gin-v0", opponent=opponent)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    times = np.empty(steps)
    clock = time.perf_counter
    for k in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        t = clock()
        _, _, term, _, info = env.step(a)
        times[k] = clock() - t
        if term:
            _, info = env.reset()
    return {"median_us": float(np.median(times) * 1e6), "p90_us": float(np.quantile(times, 0.9) * 1e6)}


def _warm_arena(opponent: str) -> Any:
    """Compile every kernel a measurement runs before anything is timed; the action picker."""
    pick = _picker()
    arena_vector_steps(4, opponent, 0.05, 0, pick)
    arena_single_step_us(opponent, 50, 0)
    return pick


def _meta(args: argparse.Namespace, core: int, load_before: tuple[float, float, float]) -> dict[str, Any]:
    """What a JSON result records of the machine and the run, beside its figures."""
    meta: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "python": platform.python_version()}
    meta |= {"cpu": platform.processor() or platform.machine(), "core": core, "opponent": args.opponent}
    return meta | {"seconds": args.seconds, "load_before": load_before, "load_after": os.getloadavg()}


def arena_measures(opponent: str, seconds: float, seed: int) -> dict[str, float]:
    """One measurement of this process's checkout: CPU steps/s per batch size, and one step()'s median us."""
    pick = _warm_arena(opponent)
    out = {f"arena batch {n}": arena_vector_steps(n, opponent, seconds, seed, pick)["cpu"] for n in BATCHES}
    out["arena step() us"] = arena_single_step_us(opponent, 20000, seed)["median_us"]
    return out


def compare(args: argparse.Namespace) -> None:
    """Gin Arena in this checkout and in each of ``args.compare``, interleaved (see the module docstring)."""
    roots = [ROOT, *(Path(c).resolve() for c in args.compare)]
    core = min(os.sched_getaffinity(0))
    load_before = os.getloadavg()
    results: list[list[dict[str, float]]] = [[] for _ in roots]
    for r in range(args.rounds):
        seed = args.seed + 1000 * r
        for k in [*range(r % len(roots), len(roots)), *range(r % len(roots))]:  # the order turns each round
            cmd = ["taskset", "-c", str(core), sys.executable, __file__, "--arena-worker", str(roots[k])]
            cmd += ["--seconds", str(args.seconds), "--seed", str(seed), "--opponent", args.opponent]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=roots[k])
            results[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    med = [{m: statistics.median(x[m] for x in res) for m in res[0]} for res in results]
    names = ["this", *args.compare]
    print(f"Gin Arena, median of {args.rounds} interleaved rounds, one core ({core}), opponent {args.opponent}")
    print("| measure | " + " | ".join(names) + " | " + " | ".join(f"{n} / this" for n in names[1:]) + " |")
    print("|---|" + "---:|" * (2 * len(names) - 1))
    for m in med[0]:
        fmt = "{:,.2f}" if m.endswith("us") else "{:,.0f}"
        cells = [fmt.format(x[m]) for x in med] + [f"{x[m] / med[0][m]:.2f}" for x in med[1:]]
        print(f"| {m} | " + " | ".join(cells) + " |")
    if args.json:
        meta = _meta(args, core, load_before) | {"checkouts": [str(r) for r in roots]}
        doc = {"meta": meta, "rounds": args.rounds, "median": dict(zip(names, med, strict=True)), "runs": results}
        args.json.write_text(json.dumps(doc, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per measurement")
    ap.add_argument("--opponent", default="simple")
    ap.add_argument("--pettingzoo-python", default=None, help="an interpreter that can import gin_rummy_v4")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", action="append", default=[], metavar="CHECKOUT", help="another checkout to time")
    ap.add_argument("--pettingzoo-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--arena-worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pettingzoo_worker:
        print(json.dumps(pettingzoo_steps(args.seconds, args.seed)))
        return
    if args.arena_worker:  # one measurement of the checkout named, in this process
        sys.path.insert(0, args.arena_worker)
        import arena

        assert Path(arena.__file__).resolve().is_relative_to(Path(args.arena_worker).resolve()), arena.__file__
        print(json.dumps(arena_measures(args.opponent, args.seconds, args.seed)))
        return
    if args.compare:
        compare(args)
        return
    sys.path.insert(0, str(ROOT))
    load_before = os.getloadavg()
    core = _pin()
    pick = _warm_arena(args.opponent)  # and load both libraries before anything is timed
    openspiel_steps(0.05, 0)
    _pettingzoo_measure(args.pettingzoo_python, 0.05, 0)

    results: dict[str, list[dict[str, float]]] = {}
    for r in range(args.rounds):
        seed = args.seed + 1000 * r
        for n in BATCHES:
            results.setdefault(f"arena batch {n}", []).append(
                arena_vector_steps(n, args.opponent, args.seconds, seed, pick)
            )
        results.setdefault("arena step()", []).append(arena_single_step_us(args.opponent, 20000, seed))
        pz = _pettingzoo_measure(args.pettingzoo_python, args.seconds, seed)
        if pz is not None:
            results.setdefault("pettingzoo gin_rummy_v4", []).append(pz)
        osp = openspiel_steps(args.seconds, seed)
        if osp is not None:
            results.setdefault("openspiel gin_rummy", []).append(osp)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    med = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in results.items()}
    base = med.get("pettingzoo gin_rummy_v4", {}).get("cpu")
    osb = med.get("openspiel gin_rummy", {}).get("cpu")
    print(f"agent steps/s, median of {args.rounds} rounds, one core ({core}), opponent {args.opponent}")
    print("| contestant | steps/s (CPU) | steps/s (wall) | x PettingZoo | x OpenSpiel |")
    print("|---|---:|---:|---:|---:|")
    for k, v in med.items():
        if "cpu" not in v:
            continue
        ratio = f"{v['cpu'] / base:,.0f}" if base else "-"
        ratio_os = f"{v['cpu'] / osb:,.1f}" if osb else "-"
        print(f"| {k} | {v['cpu']:,.0f} | {v['wall']:,.0f} | {ratio} | {ratio_os} |")
    step = med["arena step()"]
    print(f"one gymnasium step(): median {step['median_us']:.1f} us, p90 {step['p90_us']:.1f} us")
    if args.json:
        meta = _meta(args, core, load_before)
        args.json.write_text(json.dumps({"meta": meta, "rounds": args.rounds, "median": med}, indent=1) + "\n")


if __name__ == "__main__":
    main()
