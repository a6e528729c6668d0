"""Policy bots against Simple on one core: games/s of the three forms with the same 2x256 MLP.

The forms, each playing the same seeds against ``simple``:

* ``numba``: ``policy:w.npz``, the MLP compiled into the bot's decisions,
  played inside the batch kernel;
* ``numpy``: ``policy:agent.py``, a module whose ``act`` runs the same MLP
  in numpy (BLAS), in lockstep batches;
* ``onnx``: ``policy:w.onnx``, the same MLP exported to ONNX, run by
  onnxruntime on one thread, in lockstep batches;

and ``simple`` against ``simple`` for scale.  ``--walled`` adds ``sandbox:agent.py`` and
``sandbox:w.onnx``: the numpy and ONNX forms behind the wall (the sandbox host), as a league plays
an uploaded policy, each twice: in lockstep batches (one ``act`` line per batch step) and one
decision per protocol round trip (as against a bot that is not compiled).  Each form is timed
``--repeats`` times, interleaved (form by form within a round), after a
warm-up that compiles everything; the table gives the median, and the
check that the three forms played identical games.  Threads are pinned to
one (OpenBLAS, OpenMP, onnxruntime) so "one core" holds.

It also counts the policy's decisions per game and its multiply-adds per
decision (dense, and with the zero inputs the compiled form skips), and
prints what a goal in games/s asks of one core in FLOP/s.  ``--weights``
plays a trained MLP (``bots/learned.npz``: realistic games, as long as a
good player's) instead of an untrained one (which loses quickly, so its
games are short).

Run: ``nice python scripts/bench_policy.py [--games 2000] [--repeats 3] [--hidden 256 256]
[--weights FILE] [--walled]``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botkit.policy import mlp_onnx  # noqa: E402
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE  # noqa: E402
from arena.engine.layout import LOG_SEAT  # noqa: E402
from arena.engine.mlp import load_mlp, random_mlp, save_mlp  # noqa: E402
from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.external.client import close_bot  # noqa: E402
from arena.loading.load import load, load_bot  # noqa: E402
from arena.settings.botref import BotRef  # noqa: E402
from arena.settings.rules import Rules  # noqa: E402

AGENT = '''"""The bench's MLP in numpy: a policy module with a batched act()."""
import numpy as np
from arena.engine.mlp import load_mlp

MLP = load_mlp({path!r})


def act(obs, mask, rng):
    return np.where(mask, MLP.logits(obs), -np.inf).argmax(axis=1)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument(
        "--walled", action="store_true", help="also the numpy and ONNX forms behind the wall (sandbox:), batched or not"
    )
    ap.add_argument("--weights", help="a trained MLP (.npz) instead of an untrained one of --hidden")
    ap.add_argument("--goal", type=float, default=20_000, help="games/s whose FLOP/s cost is printed")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-policy-"))
    if args.weights:
        mlp = load_mlp(args.weights)
    else:
        mlp = random_mlp(OBS_SIZE, NUM_ACTIONS, tuple(args.hidden), seed=1)
    save_mlp(folder / "w.npz", mlp)
    (folder / "w.onnx").write_bytes(mlp_onnx(mlp))
    (folder / "agent.py").write_text(AGENT.format(path=str(folder / "w.npz")))
    simple = load_bot("simple")
    forms = {
        "numba (npz)": load_bot(f"policy:{folder / 'w.npz'}"),
        "numpy (act module)": load_bot(f"policy:{folder / 'agent.py'}"),
        "onnx (onnxruntime)": load_bot(f"policy:{folder / 'w.onnx'}"),
        "simple (no policy)": simple,
    }
    if args.walled:
        folder.chmod(0o755)  # the bots' user reads the files when the bench runs as root
        for name, form in (("agent.py", "numpy"), ("w.onnx", "onnx")):
            for f in ("w.npz", "w.onnx", "agent.py"):
                (folder / f).chmod(0o644)
            walled = load(BotRef.parse(f"sandbox:{folder / name}"))
            assert walled.batch_act is not None, "the sandbox host serves a policy in batches"
            forms[f"{form} walled, batched"] = walled
            forms[f"{form} walled, one at a time"] = dataclasses.replace(walled, batch_act=None)
    rules = rules_array(Rules())
    seeds = np.arange(args.games, dtype=np.int64)
    warm = seeds[:64]
    records = {}
    for bot in forms.values():
        play_batch(bot, simple, rules, warm)
    times: dict[str, list[float]] = {k: [] for k in forms}
    for _ in range(args.repeats):
        for key, bot in forms.items():
            t0 = time.perf_counter()
            records[key] = play_batch(bot, simple, rules, seeds)
            times[key].append(time.perf_counter() - t0)
    widths = "x".join(str(w) for w in mlp.widths)
    print(f"MLP {widths} ({mlp.activation}); {args.games} games against simple, one core, median of {args.repeats}")
    print(f"{'form':<30}{'games/s':>10}{'s/run':>10}  runs (s)")
    for key, ts in times.items():
        med = statistics.median(ts)
        print(f"{key:<30}{args.games / med:>10,.0f}{med:>10.2f}  {', '.join(f'{t:.2f}' for t in ts)}")
    base = records["numba (npz)"].games
    for bot in forms.values():
        close_bot(bot)
    for key in [k for k in records if k.startswith(("numpy", "onnx"))]:
        same = (records[key].games == base).all(axis=1).mean()
        print(f"games identical to numba's: {key}: {same:.1%}")
    for form in ("numpy", "onnx"):
        if f"{form} walled, batched" in times:
            ratio = statistics.median(times[f"{form} walled, one at a time"]) / statistics.median(
                times[f"{form} walled, batched"]
            )
            print(f"{form} walled: batched is {ratio:,.1f}x one at a time")
    wins = (base[:, 2] == 0).mean()
    what = "this MLP" if args.weights else "an untrained MLP"
    print(f"({what}: its win rate against simple is {wins:.1%})")
    cost(mlp, forms["numba (npz)"], simple, rules, seeds, times, args.goal)


def cost(mlp, bot, simple, rules, seeds, times, goal: float) -> None:
    """Decisions per game, multiply-adds per decision, and the FLOP/s each form reached and the goal needs."""
    rec = play_batch(bot, simple, rules, seeds, record_log=True)
    decisions = float((rec.log // LOG_SEAT == 0).sum()) / len(seeds)
    dense = sum(int(w.shape[0]) * int(w.shape[1]) for w in mlp.weights)
    first = int(mlp.weights[0].shape[1])
    print(f"policy decisions per game: {decisions:.1f}; multiply-adds per decision: {dense:,} dense")
    for key in ("numba (npz)", "numpy (act module)", "onnx (onnxruntime)"):
        rate = len(seeds) / statistics.median(times[key])
        print(f"  {key:<22} {rate * decisions * dense * 2 / 1e9:6.1f} GFLOP/s (dense MLP work per second of play)")
    need = goal * decisions * dense * 2 / 1e9
    print(f"{goal:,.0f} games/s needs {need:,.0f} GFLOP/s of MLP work alone (dense; the first layer is")
    print(f"  {mlp.weights[0].shape[0]}x{first} of it, and most observation entries are 0)")


if __name__ == "__main__":
    main()
