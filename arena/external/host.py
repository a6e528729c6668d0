"""The sandbox host: serve one bot file over the external-bot protocol.

    python -m arena.external.host path/to/bot.py   (or a policy: agent.py, model.onnx, weights.npz)
    python -m arena.external.host --compile path/to/bot.py   (compile it, and send what numba would save)

It loads the file as :func:`arena.botkit.bot.load_bot_file` does (compiled with
numba where possible) and answers each ``decide`` line by rebuilding the
view array from the line's fields and calling the bot's function.  A Python
or ONNX policy also says ``batch`` in its hello and answers ``act`` lines: a
whole lockstep batch of observations, masks and keys, given to its ``act``
in one call, as the lockstep driver gives them in the arena's process.  It keeps
the bot's ``memory`` per game (zeroed when a game starts) and seeds its
``rng`` from the line's per-game seed with :func:`arena.engine.rng.seed_rng`, which
is exactly what the engine does in-process, so a sandboxed bot plays the
same moves as the same file loaded in-process.

The host is started by :func:`arena.external.sandboxed_bot` under the
sandbox's limits (no file writes, no new processes; see
:mod:`arena.external.limits`), and it holds no engine state: a bot that
walks the stack finds this loop and its own view, and a bot that patches
modules patches this process's copies only.

The protocol keeps fd 1 for itself; the bot's own ``print()`` goes to
stderr, which the arena keeps in the bot's log.
"""

from __future__ import annotations

import json
import os
import sys


def serve(path: str, out, inp) -> int:
    import numpy as np

    from arena.botkit.bot import Bot, BotError
    from arena.engine.layout import V_DECISION
    from arena.engine.rng import RNG_WORDS, seed_rng
    from arena.external.protocol import PROTOCOL_VERSION, decode_decide

    def send(obj) -> None:
        out.write((obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))) + "\n")
        out.flush()

    try:
        loaded: Bot | str = _load(path)
    except BotError as exc:
        loaded = str(exc)
    except (SystemExit, KeyboardInterrupt) as exc:  # the file's own sys.exit() at import: not a bot
        code = exc.code if isinstance(exc, SystemExit) else "KeyboardInterrupt"
        loaded = f"{path}: not a bot: importing it called sys.exit({code!r})"
    first = inp.readline()
    if not first:
        return 0
    if isinstance(loaded, str):
        send({"error": loaded})
        return 2
    bot = loaded
    hello = {"name": bot.name, "protocol": PROTOCOL_VERSION, "description": bot.description, "params": bot.param_dict()}
    if bot.batch_act is not None:
        hello["batch"] = True  # a Python or ONNX policy: the arena may send act lines (a batch of decisions)
    send(hello)
    functions = bot.functions
    memory = np.zeros(bot.memory_size, dtype=np.float64)
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    params = bot.params.copy()
    names = bot.param_names
    validate = getattr(bot.module, "validate_params", None)
    valid: set[tuple] = set()
    for line in inp:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "bye":
            break
        if kind == "act" and bot.batch_act is not None:
            send(_act(bot.batch_act, msg))
            continue
        if kind != "decide":
            send({"error": f"unknown message type {kind!r}"})
            continue
        if msg["new_game"]:
            memory[:] = 0.0
            seed_rng(rng, np.uint64(msg["seed"]))
            given = msg.get("params") or {}
            if names:  # a compiled MLP policy's params are its weights, which no game overrides
                params = np.array(
                    [float(given.get(n, d)) for n, d in zip(names, bot.params.tolist())], dtype=np.float64
                )
            key = tuple(params.tolist())
            if validate is not None and key not in valid:
                try:
                    validate(dict(zip(names, key)))
                    valid.add(key)
                except ValueError as exc:
                    send({"error": f"bad parameters: {exc}"})
                    continue
        view = decode_decide(msg)
        try:
            answer = functions[view[V_DECISION]](view, params.copy(), memory, rng)
        except Exception as exc:  # the bot's own error: resign this game with the reason
            send({"error": f"raised {type(exc).__name__}: {exc}"})
            continue
        if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, np.integer)):
            # Passed on as it is, so the arena rejects it as it would any program's ill-typed answer.
            if isinstance(answer, (float, np.floating, str, np.bool_)):
                send(json.dumps(answer.item() if isinstance(answer, np.generic) else answer))
            else:
                send({"error": f"answered {type(answer).__name__} {answer!r}; answers must be integers"})
            continue
        send(str(int(answer)))
    return 0


def _act(act, msg: dict) -> str | dict:
    """The answer to an ``act`` line: the policy's ``act(obs, mask, RowRng(keys))`` on the batch, as the
    lockstep driver calls it in the arena's process, its ids as a JSON list (or an error, one line)."""
    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
    from arena.engine.lockstep import RowRng, check_answer
    from arena.external.protocol import decode_act, encode_actions

    try:
        obs, mask, keys = decode_act(msg, OBS_SIZE, NUM_ACTIONS)
    except ValueError as exc:
        return {"error": f"bad act line: {exc}"}
    try:
        ids = check_answer(act(obs, mask, RowRng(keys)), len(keys))
    except Exception as exc:  # the policy's own error: resign the batch's games with the reason
        return {"error": f"raised {type(exc).__name__}: {exc}"[:500]}
    return encode_actions(ids)


def _load(path: str):
    """The bot a file holds: a bot file, or a trained policy (an ``.onnx`` model, MLP weights, or a module
    defining ``act`` and none of a bot's decisions).  A policy answers ``act`` lines (a batch, its rows'
    keys drawn by the arena's lockstep driver) and ``decide`` lines (one decision, its key drawn from the
    seat's generator as the lockstep driver draws it), so it plays the games it plays in-process either way."""
    from arena.botkit.bot import load_bot_file
    from arena.external.client import is_policy_file

    if is_policy_file(path):
        # Only a policy needs the lockstep machinery: importing it costs about half a second of CPU,
        # which every sandboxed bot process paid at its start.
        from arena.botkit.policy import load_policy, warm_up

        bot = load_policy(path)
        warm_up()
        return bot
    return load_bot_file(path)


def compile_only(path: str, out, inp) -> int:
    """``--compile``: load the file (numba compiles it), and answer the first line with what numba would
    have saved to its cache (:mod:`arena.external.sandbox_cache`), which the arena keeps for later starts."""
    from arena.botkit.bot import cached_bot_file, read_bot_file
    from arena.external.sandbox_cache import cache_folder_of, capture_cache_writes, files_line

    files = capture_cache_writes()
    try:
        folder = cache_folder_of(cached_bot_file(read_bot_file(path))).name  # the arena made the copy: no write
        _load(path)
    except BaseException as exc:  # the file's own error, sys.exit() or Ctrl-C: nothing to keep
        files.clear()
        if not isinstance(exc, Exception | SystemExit):
            raise
    if not inp.readline():
        return 0
    # Only the file's own code: the arena's kernels it compiled here (their cache not made yet outside) are
    # the arena's to compile and keep, and the arena refuses an answer that holds them.
    own = {k: v for k, v in files.items() if k.partition("/")[0] == folder}
    out.write(files_line(own) + "\n")
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    compiling = args[:1] == ["--compile"]
    if compiling:
        args = args[1:]
    if len(args) != 1:
        print("usage: python -m arena.external.host [--compile] path/to/bot.py", file=sys.stderr)
        return 2
    # The protocol's own copy of stdout; fd 1 and sys.stdout go to stderr for the bot's prints.
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if compiling:
        return compile_only(args[0], proto, sys.stdin)
    from arena.external.sandbox_cache import skip_cache_writes

    skip_cache_writes()
    return serve(args[0], proto, sys.stdin)


if __name__ == "__main__":
    sys.exit(main())
