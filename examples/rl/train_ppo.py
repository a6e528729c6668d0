"""Train a Gin Rummy policy with PPO against a bot, export it, and enter it in a gauntlet.

A short PyTorch PPO (clipped objective, GAE, invalid actions masked out of
the logits) on :class:`arena.env.gym.VectorGinEnv`: ``--envs`` games stepped
by one compiled call, the opponent (``--opponent``, any bot) playing inside
it.  Episodes are single hands rewarded with the hand's points difference
(``/25``): a denser signal than one win per game, and a hand's points are
what wins games.

Every ``--eval-every`` updates the greedy policy is exported
(``policy.npz``) and plays ``--eval-pairs`` duplicate pairs of whole games to
100 against the opponent and against ``simple``, through the arena's own
``play_batch``, so the curve is win rate in games, with a pair-clustered 95%
interval.  At the end it writes:

* ``OUT/policy.npz`` (the actor's weights, :mod:`arena.engine.mlp`) and
  ``OUT/policy.onnx`` (the same MLP as ONNX);
* ``OUT/curve.csv`` and ``OUT/curve.png``: win rate against steps;
* ``OUT/train.json``: the command, seed, steps, wall time, final results;

and with ``--gauntlet N`` it writes ``OUT/gauntlet.toml`` (the field: ``simple``, N games
on duplicate deals) and runs ``arena run OUT/gauntlet.toml --gauntlet policy:OUT/policy.npz
--fresh``, whose report is in ``results/ppo-gauntlet-<seed>/``.

Install: ``pip install 'gin-arena[train]'`` (torch: ``pip install torch==2.13.0``
takes a CPU build).  Run::

    nice python examples/rl/train_ppo.py --minutes 55 --out runs/ppo --gauntlet 2000

``--smoke`` is the check CI runs: a small net against ``random`` for 102,400 agent steps (about
five seconds of training; 50 duplicate pairs for each win rate: 75% of games against 27% untrained), so its
numbers are the same on any machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from arena.botkit.policy import load_policy, mlp_onnx
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
from arena.engine.layout import G_WINNER
from arena.engine.mlp import Mlp, save_mlp
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.env.gym import VectorGinEnv
from arena.loading.load import load_bot
from arena.settings.rules import Rules

#: Deal seeds of the evaluation games: far from the training env's (seed + i) streams.
EVAL_SEED = 9_000_000


def mlp_net(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, hidden: list[int]) -> None:
        super().__init__()
        self.actor = mlp_net([OBS_SIZE, *hidden, NUM_ACTIONS])
        self.critic = mlp_net([OBS_SIZE, *hidden, 1])
        last = self.actor[-1]
        assert isinstance(last, nn.Linear)
        nn.init.orthogonal_(last.weight, gain=0.01)  # a near-uniform first policy
        nn.init.zeros_(last.bias)

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(obs).masked_fill(~mask, -1e9)
        return torch.distributions.Categorical(logits=logits)


def actor_mlp(model: ActorCritic) -> Mlp:
    """The actor as the arena's MLP (weights ``[in, out]``): what ``policy:*.npz`` plays."""
    linears = [m for m in model.actor if isinstance(m, nn.Linear)]
    weights = tuple(m.weight.detach().numpy().T.astype(np.float32).copy() for m in linears)
    biases = tuple(m.bias.detach().numpy().astype(np.float32).copy() for m in linears)
    return Mlp(weights, biases, "relu")


def win_rate(policy_file: Path, opponent: str, pairs: int, rules: np.ndarray) -> tuple[float, float]:
    """Win rate of the policy in ``pairs`` duplicate pairs of whole games, and its pair-clustered 95% half-width."""
    bot, opp = load_policy(policy_file), load_bot(opponent)
    seeds = np.arange(EVAL_SEED, EVAL_SEED + pairs, dtype=np.int64)
    first = play_batch(bot, opp, rules, seeds).games[:, G_WINNER] == 0
    second = play_batch(opp, bot, rules, seeds).games[:, G_WINNER] == 1
    per_pair = (first.astype(float) + second) / 2
    # The spread of the pair means, with one lost and one won pair added (as Agresti-Coull adds
    # successes and failures), so that 0% or 100% of 200 pairs still gets an interval of some width.
    spread = np.concatenate([per_pair, [0.0, 1.0]]).std(ddof=1)
    return float(per_pair.mean()), float(1.96 * spread / math.sqrt(pairs))


def export(model: ActorCritic, out: Path) -> Path:
    mlp = actor_mlp(model)
    path = out / "policy.npz"
    save_mlp(path, mlp)
    (out / "policy.onnx").write_bytes(mlp_onnx(mlp))
    return path


def plot(
    curve: list[dict],
    out: Path,
    opponents: list[str],
    title: str = "PPO policy: greedy win rate (95% pair-clustered interval)",
    xlabel: str = "agent steps (decisions) trained",
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = np.array([c["steps"] for c in curve])
    for opp in opponents:
        rate = np.array([c[opp] for c in curve])
        half = np.array([c[f"{opp}_ci"] for c in curve])
        ax.plot(steps, rate, marker="o", label=f"against {opp}")
        ax.fill_between(steps, rate - half, rate + half, alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("win rate, whole games to 100")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "curve.png", dpi=110)
    plt.close(fig)


def write_curve(curve: list[dict], out: Path) -> None:
    """The learning curve's rows as ``OUT/curve.csv``."""
    with open(out / "curve.csv", "w") as f:
        keys = list(curve[0])
        f.write(",".join(keys) + "\n")
        for row in curve:
            f.write(",".join(str(row[k]) for k in keys) + "\n")


def gauntlet_command(out: Path, games: int, seed: int) -> list[str]:
    """Write ``OUT/gauntlet.toml`` (the field: simple alone; ``games`` games, ``seed``) and return the
    command that enters ``OUT/policy.npz`` in it; its report goes to ``results/ppo-gauntlet-<seed>/``."""
    import tomli_w

    config = {"name": f"ppo-gauntlet-{seed}", "bots": ["simple"], "games_per_pair": games, "seed": seed}
    (out / "gauntlet.toml").write_text(tomli_w.dumps(config))
    run = [sys.executable, "-m", "arena.cli", "run", str(out / "gauntlet.toml")]
    return [*run, "--gauntlet", f"policy:{out / 'policy.npz'}", "--fresh"]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opponent", default="simple")
    ap.add_argument("--minutes", type=float, default=55.0, help="wall-time budget of training (evaluations apart)")
    ap.add_argument("--steps", type=int, default=0, help="stop after this many agent steps (0: the time budget)")
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--rollout", type=int, default=64, help="steps per env per update")
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--minibatch", type=int, default=4096)
    ap.add_argument("--eval-every", type=int, default=20, help="updates between evaluations")
    ap.add_argument("--eval-pairs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="runs/ppo")
    ap.add_argument("--gauntlet", type=int, default=0, help="games of the final gauntlet against simple (0: none)")
    ap.add_argument("--smoke", action="store_true", help="the CI check: a small net, 102,400 steps, against random")
    args = ap.parse_args(argv)
    if args.smoke:
        args.opponent, args.hidden, args.envs, args.rollout = "random", [64, 64], 64, 32
        args.minutes, args.eval_every, args.eval_pairs, args.minibatch = 5.0, 1_000_000, 50, 1024
        args.steps = args.steps or 102_400  # by steps, not time: the same run on a slow or loaded machine
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rules = rules_array(Rules())
    opponents = [args.opponent] + ([] if args.opponent == "simple" or args.smoke else ["simple"])

    model = ActorCritic(args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, eps=1e-5)
    env = VectorGinEnv(args.envs, opponent=args.opponent, episode="hand", reward="points", copy=True)
    obs_np, info = env.reset(seed=args.seed * 1_000_003)
    mask_np = info["action_mask"].astype(bool)
    n, t_len = args.envs, args.rollout
    buf_obs = torch.zeros((t_len, n, OBS_SIZE))
    buf_mask = torch.zeros((t_len, n, NUM_ACTIONS), dtype=torch.bool)
    buf_act = torch.zeros((t_len, n), dtype=torch.long)
    buf_logp = torch.zeros((t_len, n))
    buf_val = torch.zeros((t_len, n))
    buf_rew = torch.zeros((t_len, n))
    buf_done = torch.zeros((t_len, n))

    eval_seconds = [0.0]

    def evaluate(steps: int) -> dict:
        start = time.perf_counter()
        path = export(model, out)
        row: dict = {"steps": steps, "train_seconds": round(start - t0 - eval_seconds[0], 1)}
        for opp in opponents:
            row[opp], row[f"{opp}_ci"] = win_rate(path, opp, args.eval_pairs, rules)
        eval_seconds[0] += time.perf_counter() - start
        print(json.dumps(row), flush=True)
        return row

    t0 = time.perf_counter()
    curve = [evaluate(0)]
    steps = update = 0
    budget = args.minutes * 60
    while time.perf_counter() - t0 - eval_seconds[0] < budget and (args.steps == 0 or steps < args.steps):
        for t in range(t_len):
            obs = torch.from_numpy(obs_np)
            mask = torch.from_numpy(mask_np)
            with torch.no_grad():
                d = model.dist(obs, mask)
                action = d.sample()
                buf_logp[t] = d.log_prob(action)
                buf_val[t] = model.critic(obs).squeeze(-1)
            buf_obs[t], buf_mask[t], buf_act[t] = obs, mask, action
            obs_np, reward, done, _, info = env.step(action.numpy())
            mask_np = info["action_mask"].astype(bool)
            buf_rew[t] = torch.from_numpy(np.asarray(reward, dtype=np.float32) / 25.0)
            buf_done[t] = torch.from_numpy(done.astype(np.float32))
        steps += t_len * n
        with torch.no_grad():
            next_val = model.critic(torch.from_numpy(obs_np)).squeeze(-1)
        adv = torch.zeros_like(buf_rew)
        last = torch.zeros(n)
        for t in reversed(range(t_len)):  # GAE; an episode (a hand) ends where done is set
            nv = next_val if t == t_len - 1 else buf_val[t + 1]
            live = 1.0 - buf_done[t]
            delta = buf_rew[t] + 0.99 * nv * live - buf_val[t]
            last = delta + 0.99 * 0.95 * live * last
            adv[t] = last
        ret = adv + buf_val
        b_obs, b_mask = buf_obs.reshape(-1, OBS_SIZE), buf_mask.reshape(-1, NUM_ACTIONS)
        b_act, b_logp, b_adv, b_ret = buf_act.reshape(-1), buf_logp.reshape(-1), adv.reshape(-1), ret.reshape(-1)
        total = b_obs.shape[0]
        for _ in range(args.epochs):
            perm = torch.randperm(total)
            for lo in range(0, total, args.minibatch):
                idx = perm[lo : lo + args.minibatch]
                d = model.dist(b_obs[idx], b_mask[idx])
                ratio = torch.exp(d.log_prob(b_act[idx]) - b_logp[idx])
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a).mean()
                v_loss = 0.5 * ((model.critic(b_obs[idx]).squeeze(-1) - b_ret[idx]) ** 2).mean()
                loss = pg + 0.5 * v_loss - 0.01 * d.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
        update += 1
        if update % args.eval_every == 0:
            curve.append(evaluate(steps))
    wall = time.perf_counter() - t0 - eval_seconds[0]
    curve.append(evaluate(steps))
    plot(curve, out, opponents)
    write_curve(curve, out)
    summary = {
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "seed": args.seed,
        "opponent": args.opponent,
        "hidden": args.hidden,
        "steps": steps,
        "updates": update,
        "train_seconds": round(wall, 1),
        "eval_seconds": round(eval_seconds[0], 1),
        "first": curve[0],
        "final": curve[-1],
        "torch": torch.__version__,
    }
    (out / "train.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.gauntlet:
        cmd = gauntlet_command(out, args.gauntlet, args.seed)
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env={**os.environ})
    return summary


if __name__ == "__main__":
    main()
