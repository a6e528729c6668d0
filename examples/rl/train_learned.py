"""Train the built-in ``learned`` bot: imitation of gin-chasing (behaviour cloning, then DAgger), as MLP weights.

PPO from scratch learns slowly here (a game to 100 is about 140 decisions of
each seat, and a hand's reward comes at its end), so this starts from a
teacher: the built-in ``gin-chasing`` bot, a heuristic that wins about 75% of
whole games against ``simple``.  Its decisions are a function of the seat's
view alone (no memory, no randomness), so it can label any state:

1. **Behaviour cloning.**  ``--envs`` games per opponent and seat on
   :class:`arena.env.games.Games` (one compiled step per batch), against a
   mix of opponents (``--opponents``: by default ``simple``, the early
   knockers ``early-knock`` and ``knock5``, ``gin-chasing`` and
   ``discard-tracking``, so the data holds the positions fast knockers
   make, not only ``simple``'s); the teacher plays, and every decision of the
   agent's seat with more than one legal action is kept: the observation,
   the legal-action mask and the teacher's action id
   (:func:`teacher_actions`, a compiled call per batch).
2. **DAgger.**  Then ``--rounds`` rounds in which the *student* plays (its
   greedy action) and the teacher still labels every state it reaches, so
   the student learns what to do in the positions its own mistakes lead to;
   every round's samples join the data set and the student trains on all of
   it.

The student is a 378-384-384-256-58 ReLU MLP (1.6 MB of float32 weights)
trained with cross-entropy on the masked logits (Adam, PyTorch on one
thread).  The targets are the teacher's action, except for discards: there
gin-chasing weighs a few cards by a cost in deadwood points
(:func:`bots.gin_chasing.discard_scores`), and the target is a softmax of
those costs (``--temperature``), so the student learns which discards are
nearly as good rather than only which one won by a hair.  With one-hot
discard targets the same budget reached about 40% against ``simple``.  After each round the greedy
policy plays ``--eval-pairs`` duplicate pairs of whole games to 100 against
``simple`` (the learning curve, with pair-clustered 95% intervals).  It
writes ``OUT/learned.npz`` (the arena's MLP format: copy it to
``bots/learned.npz`` to ship it), ``OUT/curve.png``, ``OUT/curve.csv`` and
``OUT/train.json`` (command, seed, samples, wall time, results).

Everything is fixed by ``--seed`` (the deals, the shuffles, the
initial weights; torch runs on one thread), so one command gives the same
file bit for bit on the same torch version::

    nice python examples/rl/train_learned.py --seed 1 --out runs/learned

``--smoke`` is a two-minute version (fewer games, a smaller net).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_ppo import mlp_net, plot, win_rate, write_curve  # noqa: E402  (the sibling example)

from arena.botkit.bot import Bot  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE, action_of_answer  # noqa: E402
from arena.engine.cards import popcount  # noqa: E402
from arena.engine.layout import (  # noqa: E402
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    V_DECISION,
    V_SIZE,
)
from arena.engine.melds import deadwood, deadwood_after_discards  # noqa: E402
from arena.engine.mlp import Mlp, save_mlp  # noqa: E402
from arena.engine.rng import RNG_WORDS  # noqa: E402
from arena.engine.step import build_view  # noqa: E402
from arena.env.games import Games  # noqa: E402
from bots import gin_chasing  # noqa: E402

TEACHER = "gin-chasing"
TEACHER_PARAMS = np.array(list(gin_chasing.PARAMS.values()), dtype=np.float64)


@jit
def teacher_actions(st, rules, seat, params, view, memory, rng, out, costs):
    """``out[i]``: gin-chasing's action id for seat ``seat``'s decision in state ``st[i]``; for a
    discard, ``costs[i, c]`` its cost of each card it weighs (infinity for the others).

    The teacher reads the seat's view only (built whole here, as the env
    builds its observation), so its label is the move it would make in the
    student's place.
    """
    for i in range(st.shape[0]):
        build_view(st[i], rules, seat, view)
        phase = view[V_DECISION]
        for c in range(costs.shape[1]):
            costs[i, c] = np.inf
        if phase == PH_DISCARD:
            gin_chasing.discard_scores(view, params, costs[i])
        if phase == PH_DRAW:
            answer = gin_chasing.draw(view, params, memory, rng)
        elif phase == PH_BIG_GIN:
            answer = gin_chasing.big_gin(view, params, memory, rng)
        elif phase == PH_DISCARD:
            answer = gin_chasing.discard(view, params, memory, rng)
        elif phase == PH_KNOCK:
            answer = gin_chasing.knock(view, params, memory, rng)
        else:  # PH_UPCARD_NONDEALER, PH_UPCARD_DEALER
            answer = gin_chasing.take_upcard(view, params, memory, rng)
        out[i] = action_of_answer(phase, answer)
    return 0


def soft_targets(labels: np.ndarray, costs: np.ndarray, temperature: float) -> np.ndarray:
    """Training targets ``[n, NUM_ACTIONS]``: the teacher's action, one-hot; for a discard, a softmax
    of its costs (``exp(-cost / temperature)`` over the cards it weighs), which says how close the
    second-best discards are (0: one-hot everywhere)."""
    target = np.zeros((labels.shape[0], NUM_ACTIONS), dtype=np.float32)
    target[np.arange(labels.shape[0]), labels] = 1.0
    weighed = np.isfinite(costs).any(axis=1)
    if temperature > 0 and weighed.any():
        c = costs[weighed]
        z = np.where(np.isfinite(c), -(c - c.min(axis=1, keepdims=True)) / temperature, -np.inf)
        p = np.exp(z)
        target[weighed] = 0.0
        target[weighed, : c.shape[1]] = p / p.sum(axis=1, keepdims=True)
    return target


OPPONENTS = ("simple", "early-knock", "knock5", "gin-chasing", "discard-tracking")


def opponent_bot(name: str) -> Bot:
    """A compiled opponent: a built-in bot, or ``knock5`` (early-knock knocking at 5 or less, as in
    the default round-robin)."""
    from arena.loading.load import load_bot

    if name == "knock5":
        return load_bot("early-knock").with_params("knock5", {"knock_at": 5.0})
    return load_bot(name)


class Collector:
    """Games against each opponent in both seats, and the teacher's labels of the agent's decisions."""

    def __init__(
        self, envs: int, seed: int, temperature: float = 0.0, opponents: tuple[str, ...] = ("simple",)
    ) -> None:
        self.sides = [Games(envs, opponent_bot(o), seat=s) for o in opponents for s in (0, 1)]
        for k, g in enumerate(self.sides):
            g.reset(np.arange(envs, dtype=np.int64) + seed * 10_000_019 + k * 1_000_003)
        self.view = np.zeros(V_SIZE, dtype=np.int64)
        self.memory = np.zeros(1, dtype=np.float64)
        self.rng = np.zeros(RNG_WORDS, dtype=np.uint64)
        self.labels = np.zeros(envs, dtype=np.int64)
        self.costs = np.zeros((envs, 52), dtype=np.float64)
        self.temperature = temperature
        self.games_done = 0

    def collect(self, steps: int, student: nn.Module | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``steps`` decisions per env and seat, played by the student (or the teacher if None):
        observations, masks and targets (:func:`soft_targets`) of those with a choice."""
        obs, masks, acts = [], [], []
        for _ in range(steps):
            for g in self.sides:
                teacher_actions(g.st, g.rules_array, g.seat, TEACHER_PARAMS, self.view, self.memory, self.rng,
                                self.labels, self.costs)  # fmt: skip
                mask = g.masks.astype(bool)
                choice = mask.sum(axis=1) > 1
                obs.append(g.obs[choice].copy())
                masks.append(mask[choice])
                acts.append(soft_targets(self.labels[choice], self.costs[choice], self.temperature))
                if student is None:
                    play = self.labels
                else:
                    with torch.no_grad():
                        logits = student(torch.from_numpy(g.obs)).masked_fill(~torch.from_numpy(mask), -1e9)
                    play = logits.argmax(dim=1).numpy().astype(np.int64)
                before = int(g.ended.sum())
                g.step(play)
                self.games_done += int(g.ended.sum()) - before
        return np.concatenate(obs), np.concatenate(masks), np.concatenate(acts)


@jit
def aux_targets(obs, out):
    """``out[i]``: the least deadwood of row ``i``'s hand (after its best discard when it holds 11
    cards) and of its hand with the pile's top card taken (after the best other discard), each
    at most 50, over 50.

    Not played: a second head of the student learns them beside its actions (``--aux-weight``),
    so its hidden layers learn the deadwood count that every decision of the teacher turns on,
    and a knock above all (the teacher knocks by deadwood against the stock's length).
    """
    after = np.empty(52, dtype=np.int64)
    for i in range(obs.shape[0]):
        hand = np.int64(0)
        top = -1
        for c in range(52):
            if obs[i, c] > 0.5:
                hand |= np.int64(1) << c
            if obs[i, 52 + c] > 0.5:
                top = c
        n = popcount(hand)
        d = deadwood_after_discards(hand, after) if n == 11 else deadwood(hand)
        d2 = d
        if top >= 0 and n == 10 and not (hand >> top) & 1:
            deadwood_after_discards(hand | (np.int64(1) << top), after)
            d2 = 1 << 30
            for c in range(52):
                if c != top and (hand >> c) & 1:
                    d2 = min(d2, after[c])
        out[i, 0] = min(d, 50) / 50.0
        out[i, 1] = min(d2, 50) / 50.0
    return 0


def student_mlp(net: nn.Sequential) -> Mlp:
    linears = [m for m in net if isinstance(m, nn.Linear)]
    weights = tuple(m.weight.detach().numpy().T.astype(np.float32).copy() for m in linears)
    biases = tuple(m.bias.detach().numpy().astype(np.float32).copy() for m in linears)
    return Mlp(weights, biases, "relu")


def train(
    net: nn.Sequential,
    opt: torch.optim.Optimizer,
    data: tuple,
    epochs: int,
    batch: int,
    gen,
    aux: nn.Linear | None = None,
    aux_weight: float = 0.0,
) -> float:
    """``epochs`` passes of masked cross-entropy against the targets; the last pass's accuracy
    (the student's choice is the teacher's).

    ``aux``: a head on the last hidden layer trained by mean squared error (times ``aux_weight``)
    to the rows' :func:`aux_targets`.
    """
    aux_t = None
    if aux is not None:
        aux_np = np.zeros((data[0].shape[0], 2), dtype=np.float32)
        aux_targets(data[0], aux_np)
        aux_t = torch.from_numpy(aux_np)
    obs, masks, targets = (torch.from_numpy(a) for a in data)
    n = obs.shape[0]
    right = 0
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        right = 0
        for lo in range(0, n, batch):
            idx = perm[lo : lo + batch]
            if aux is None:
                logits = net(obs[idx]).masked_fill(~masks[idx], -1e9)
            else:
                hidden = net[:-1](obs[idx])
                logits = net[-1](hidden).masked_fill(~masks[idx], -1e9)
            t = targets[idx]
            loss = -(t * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            if aux is not None and aux_t is not None:
                loss = loss + aux_weight * ((aux(hidden) - aux_t[idx]) ** 2).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            right += int((logits.argmax(dim=1) == t.argmax(dim=1)).sum())
    return right / n


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--envs", type=int, default=48, help="games per opponent and seat played side by side")
    ap.add_argument("--steps", type=int, default=500, help="decisions per env and seat in each round")
    ap.add_argument("--rounds", type=int, default=11, help="DAgger rounds after behaviour cloning")
    ap.add_argument("--epochs", type=int, default=2, help="passes over the data set after each round")
    ap.add_argument("--hidden", type=int, nargs="+", default=[384, 384, 256])
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lr-decay", type=float, default=0.8, help="learning rate factor per round")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--temperature", type=float, default=0.5, help="of the discards' soft targets (0: one-hot)")
    ap.add_argument("--aux-weight", type=float, default=1.0, help="of a second head learning the deadwood (0: none)")
    ap.add_argument("--eval-pairs", type=int, default=200)
    ap.add_argument("--opponents", nargs="+", default=list(OPPONENTS), help="the games' opponents, in equal numbers")
    ap.add_argument("--out", default="runs/learned")
    ap.add_argument("--smoke", action="store_true", help="a two-minute version: fewer games, a 64x64 net")
    args = ap.parse_args(argv)
    if args.smoke:
        args.envs, args.steps, args.rounds, args.epochs, args.hidden, args.eval_pairs = 26, 200, 1, 2, [64, 64], 100
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from arena.engine.rules_array import rules_array
    from arena.settings.rules import Rules

    rules = rules_array(Rules())
    net = mlp_net([OBS_SIZE, *args.hidden, NUM_ACTIONS])
    aux = nn.Linear(args.hidden[-1], 2) if args.aux_weight > 0 else None
    params = list(net.parameters()) + ([] if aux is None else list(aux.parameters()))
    opt = torch.optim.Adam(params, lr=args.lr)
    collector = Collector(args.envs, args.seed, args.temperature, tuple(args.opponents))
    data: list[np.ndarray] = []
    curve: list[dict] = []
    t0 = time.perf_counter()
    eval_seconds = 0.0

    def evaluate(round_no: int, accuracy: float) -> None:
        nonlocal eval_seconds
        start = time.perf_counter()
        path = out / "learned.npz"
        save_mlp(path, student_mlp(net))
        rate, half = win_rate(path, "simple", args.eval_pairs, rules)
        eval_seconds += time.perf_counter() - start
        row = {
            "round": round_no,
            "steps": int(sum(a.shape[0] for a in data[2::3])),
            "simple": rate,
            "simple_ci": half,
            "accuracy": round(accuracy, 4),
            "train_seconds": round(time.perf_counter() - t0 - eval_seconds, 1),
        }
        curve.append(row)
        print(json.dumps(row), flush=True)

    for round_no in range(args.rounds + 1):
        samples = collector.collect(args.steps, None if round_no == 0 else net)
        data += samples
        merged = tuple(np.concatenate(data[k::3]) for k in range(3))
        for group in opt.param_groups:
            group["lr"] = args.lr * (args.lr_decay**round_no)
        accuracy = train(net, opt, merged, args.epochs, args.batch, gen, aux, args.aux_weight)
        evaluate(round_no, accuracy)
    wall = time.perf_counter() - t0 - eval_seconds
    title = f"Imitation of {TEACHER}: greedy win rate (95% pair-clustered interval)"
    plot(curve, out, ["simple"], title=title, xlabel="teacher-labelled decisions in the data set")
    write_curve(curve, out)
    summary = {
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "teacher": TEACHER,
        "seed": args.seed,
        "hidden": args.hidden,
        "samples": curve[-1]["steps"],
        "games_played": collector.games_done,
        "rounds": args.rounds,
        "opponents": args.opponents,
        "epochs": args.epochs,
        "aux_weight": args.aux_weight,
        "train_seconds": round(wall, 1),
        "eval_seconds": round(eval_seconds, 1),
        "final": curve[-1],
        "torch": torch.__version__,
    }
    (out / "train.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
