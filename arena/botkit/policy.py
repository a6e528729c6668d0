"""Trained policies as bots: ``policy:agent.py``, ``policy:model.onnx``, ``policy:weights.npz``.

A policy maps a batch of observations and legal-action masks
(:mod:`arena.engine.actions`: ``float32[n, OBS_SIZE]``, ``bool[n, NUM_ACTIONS]``)
to one action id per row.  Three file forms:

* **a Python module** exposing ``act(obs, mask, rng) -> ndarray[n]`` (integer
  action ids); ``rng`` is an :class:`arena.engine.lockstep.RowRng`
  (``rng.random()``: one float per row, from that game's own stream).
  Trusted code, loaded in-process like a bot file.
* **an ONNX model** run with onnxruntime on one thread: its first input
  takes the observations ``float32[n, OBS_SIZE]`` (a second input, if it
  has one, the masks as float32), its first output is either logits
  ``[n, NUM_ACTIONS]`` (the legal action of the largest one is played) or
  action ids ``[n]`` (played as given).
* **MLP weights** (``.npz``, :mod:`arena.engine.mlp`): compiled decisions
  (:mod:`arena.botkit.mlp_bot`), played inside the batch kernel like any
  numba bot: the fastest form.

The first two are *batched* bots (``Bot.batch_act``): the engine plays them
in lockstep batches (:mod:`arena.engine.lockstep`), one call per batch of
decisions; behind the wall (``sandbox:``) too, where the sandbox host answers
a whole batch per ``act`` line (:mod:`arena.external.host`).  For the places
that ask one decision at a time (``arena play``, decision analysis, a game
against a plain or external bot) each also has the five decision functions,
which ask ``act`` with a batch of one and draw the row's key from the seat's
generator exactly as the lockstep driver does: the same seed gives the same
game on either path.

A policy travels to workers as content (:func:`policy_source`: the file's
bytes in base64) and is loaded there from it (:func:`load_policy_source`).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from arena.botkit import mlp_bot
from arena.botkit.bot import Bot, BotError, bot_from_module, import_source
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE, fill_mask, observe_view, view_legal_actions
from arena.engine.contract import PHASE_FUNCTION
from arena.engine.layout import V_DECISION
from arena.engine.lockstep import ANSWERS, PolicyAnswerError, RowRng, check_answer, illegal_detail
from arena.engine.mlp import Mlp, MlpError, load_policy_mlp, masked_argmax_rows
from arena.engine.rng import next_u64
from arena.settings.botref import POLICY_SUFFIXES, BotRef

#: Largest policy file accepted (an ONNX model or weights; the learned bot is well under 2 MB).
MAX_POLICY_BYTES = 256 * 1024 * 1024

Act = Callable[[np.ndarray, np.ndarray, RowRng], Any]


def read_policy_file(path: str | Path) -> bytes:
    """A policy file's bytes, or a one-line :class:`BotError` naming it."""
    p = Path(path)
    if p.suffix.lower() not in POLICY_SUFFIXES:
        raise BotError(f"{path}: a policy file ends in {', '.join(POLICY_SUFFIXES)}")
    if not p.is_file():
        raise BotError(f"{path}: no such policy file")
    size = p.stat().st_size
    if size > MAX_POLICY_BYTES:
        raise BotError(f"{path}: {size} bytes; a policy file may hold at most {MAX_POLICY_BYTES}")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise BotError(f"{path}: cannot read it: {exc.strerror or exc}") from None


def policy_source(path: str | Path) -> str:
    """A policy file as the text a chunk task carries (base64 of its bytes)."""
    return base64.b64encode(read_policy_file(path)).decode("ascii")


def cached_policy_file(text: str, ref: str) -> Path:
    """A policy file rebuilt from :func:`policy_source` text, kept under its hash in the bot cache (written
    on first use): where a worker puts a walled policy (``sandbox:model.onnx``) for the sandbox host to read."""
    import os

    from arena.botkit.bot import bot_cache_dir

    data = _decode(text, ref)
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = bot_cache_dir() / digest
    path = folder / f"policy_{digest}{Path(ref).suffix.lower()}"
    folder.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        tmp = folder / f".policy_{digest}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


def _decode(text: str, ref: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise BotError(f"{ref}: the policy's content is not base64") from None


def load_policy_source(text: str, ref: str, name: str | None = None) -> Bot:
    """The policy bot :func:`policy_source` describes (``ref``: the path it was read from, for its suffix)."""
    return load_policy_bytes(_decode(text, ref), ref, name)


def load_policy(path: str | Path, name: str | None = None) -> Bot:
    """The bot of the policy file at ``path`` (its suffix says which form)."""
    return load_policy_bytes(read_policy_file(path), str(path), name)


def load_policy_bytes(data: bytes, source: str, name: str | None = None) -> Bot:
    """A policy bot from a file's bytes; ``source`` (its path) names it and gives its suffix."""
    suffix = Path(source).suffix.lower()
    label = name or Path(source).stem
    digest = hashlib.sha256(data).hexdigest()[:16]
    if suffix == ".npz":
        bot = _mlp_bot(data, source, label)
    elif suffix == ".onnx":
        act, what = _onnx_act(data, source)
        bot = _batched_bot(act, label, source, f"ONNX policy {what}")
    elif suffix == ".py":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BotError(f"{source}: not a UTF-8 Python file") from None
        act, doc = _module_act(text, source)
        bot = _batched_bot(act, label, source, doc or "Python policy (act)")
    else:
        raise BotError(f"{source}: a policy file ends in {', '.join(POLICY_SUFFIXES)}")
    return dataclasses.replace(bot, source_hash=digest, ref=BotRef("policy", source))


# --- the MLP form: compiled decisions ------------------------------------------------------


def _mlp_bot(data: bytes, source: str, label: str) -> Bot:
    try:
        mlp = load_policy_mlp(data, source)
    except MlpError as exc:
        raise BotError(str(exc)) from None
    params, weights = mlp_params(mlp)
    bot = bot_from_module(mlp_bot, name=label, source=source)
    if not bot.fast:
        raise BotError(f"{source}: the MLP decisions did not compile: {bot.plain_reason}")
    widths = "x".join(str(w) for w in mlp.widths)
    return dataclasses.replace(
        bot,
        description=f"MLP policy {widths} ({mlp.activation}), compiled",
        params=params,
        param_names=(),
        memory_size=mlp_bot.memory_size(mlp),
        module=None,
        keep=weights,
    )


mlp_params = mlp_bot.mlp_params


# --- the batched forms: a module's act(), an ONNX model -----------------------------------------


def _module_act(text: str, source: str) -> tuple[Act, str]:
    module = import_source(text, source, prefix="arena_policy")
    act = getattr(module, "act", None)
    if not callable(act):
        raise BotError(f"{source}: not a policy: it defines no act(obs, mask, rng) function")
    try:
        n_args = len(inspect.signature(act).parameters)
    except (TypeError, ValueError):
        n_args = 3
    if n_args != 3:
        raise BotError(f"{source}: act() takes {n_args} argument(s); a policy's act takes (obs, mask, rng)")
    doc = (module.__doc__ or "").strip().splitlines()
    return act, doc[0].strip() if doc else ""


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's whole message on one line (onnxruntime's run across lines: the first one
    broke off at "for the following indices"), cut at ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _onnx_act(data: bytes, source: str) -> tuple[Act, str]:
    try:
        import onnxruntime as ort
    except ImportError:
        raise BotError(f"{source}: an ONNX policy needs onnxruntime (pip install 'gin-arena[rl]')") from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core per worker, as every bot gets
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for a bad model
        first = _one_line(exc)
        raise BotError(f"{source}: not a usable ONNX model: {first}") from None
    inputs = session.get_inputs()
    if not 1 <= len(inputs) <= 2:
        raise BotError(f"{source}: an ONNX policy takes the observations (and optionally the masks): 1 or 2 inputs")
    names = [i.name for i in inputs]
    out_name = session.get_outputs()[0].name
    for i in inputs:
        if i.shape and isinstance(i.shape[0], int):  # a number, not a name ("n", "batch") or None
            raise BotError(
                f"{source}: the ONNX model's input {i.name} has a fixed batch of {i.shape[0]}; a policy is asked "
                "batches of any size: export it with a dynamic first axis (torch.onnx.export(..., "
                f"dynamic_axes={{{i.name!r}: {{0: 'n'}}}}))"
            )

    def act(obs: np.ndarray, mask: np.ndarray, rng: RowRng) -> np.ndarray:
        feed = {names[0]: np.ascontiguousarray(obs, dtype=np.float32)}
        if len(names) == 2:
            feed[names[1]] = mask.astype(np.float32)
        out = np.asarray(session.run([out_name], feed)[0])
        if np.issubdtype(out.dtype, np.floating):  # logits: one row of NUM_ACTIONS per observation
            if out.shape != (obs.shape[0], NUM_ACTIONS):
                raise PolicyAnswerError(
                    f"the model's output {out_name} is {out.dtype}{list(out.shape)} for {obs.shape[0]} observations; "
                    f"logits must be [n, {NUM_ACTIONS}] (or integer action ids [n])"
                )
            return masked_argmax_rows(out, mask)
        return out

    # Two batch sizes: a model that takes one only (a batch fixed inside it) is refused here, not by
    # forfeiting every game of a run whose batches are other sizes.
    for n in (3, 1):
        probe_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        probe_mask = np.zeros((n, NUM_ACTIONS), dtype=np.bool_)
        probe_mask[:, 0] = True
        try:
            check_answer(act(probe_obs, probe_mask, RowRng(np.zeros(n, dtype=np.uint64))), n)
        except Exception as exc:
            first = _one_line(exc)
            raise BotError(
                f"{source}: the ONNX model does not map float32[n, {OBS_SIZE}] observations to logits "
                f"[n, {NUM_ACTIONS}] or action ids [n] (asked with n = {n}): {first}"
            ) from None
    return act, f"({names[0]} -> {out_name})"


def _batched_bot(act: Act, label: str, source: str, description: str) -> Bot:
    """A bot whose decisions all go to ``act``: in batches in lockstep, one at a time elsewhere."""
    decide = _OneAtATime(act)
    functions = tuple(decide for _ in sorted(PHASE_FUNCTION))
    return Bot(
        name=label,
        description=description,
        functions=functions,
        params=np.zeros(0, dtype=np.float64),
        param_names=(),
        memory_size=1,
        fast=False,
        source=source,
        source_hash="",
        plain_reason="a batched policy (lockstep batches against compiled bots)",
        batch_act=act,
    )


class _OneAtATime:
    """One decision through ``act`` with a batch of one, keyed from the seat's generator like the lockstep driver.

    An action id the decision has no answer for becomes -1, which the engine
    refuses: the game is forfeited, as in lockstep.  An illegal action is
    remembered, named with the legal ones (:meth:`refusal`), so the forfeit
    says what the policy chose, word for word as in lockstep.
    """

    def __init__(self, act: Act) -> None:
        self.act = act
        self.obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((1, NUM_ACTIONS), dtype=np.uint8)
        self.refused = ""

    def __call__(self, view: np.ndarray, params: np.ndarray, memory: np.ndarray, rng: np.ndarray) -> int:
        self.refused = ""
        obs, mask = self.obs, self.mask
        observe_view(view, True, obs[0])
        fill_mask(view_legal_actions(view), mask[0])
        keys = np.array([next_u64(rng)], dtype=np.uint64)
        action = int(check_answer(self.act(obs.copy(), mask.view(np.bool_).copy(), RowRng(keys)), 1)[0])
        phase = int(view[V_DECISION])
        if not (0 <= action < NUM_ACTIONS and mask[0, action]):
            self.refused = illegal_detail(action, mask[0])
        return int(ANSWERS[phase, action]) if 0 <= action < NUM_ACTIONS else -1

    def refusal(self) -> str:
        """Why the last answer is refused ("" when it is legal): :func:`arena.engine.contract.refusal`."""
        return self.refused


def warm_up() -> None:
    """Load the kernels a one-at-a-time decision calls (observation, mask, key), from numba's cache, now:
    the sandbox host calls it before its handshake, so a walled policy's first decision pays no load."""
    from arena.engine.layout import V_SIZE
    from arena.engine.rng import RNG_WORDS

    view = np.zeros(V_SIZE, dtype=np.int64)
    observe_view(view, True, np.zeros(OBS_SIZE, dtype=np.float32))
    fill_mask(view_legal_actions(view), np.zeros(NUM_ACTIONS, dtype=np.uint8))
    next_u64(np.zeros(RNG_WORDS, dtype=np.uint64))


def mlp_onnx(mlp: Mlp) -> bytes:
    """The ONNX model of an MLP: input ``obs`` ``float32[n, d]``, output ``logits`` ``[n, A]``.

    The same layers as :meth:`arena.engine.mlp.Mlp.logits` (MatMul, Add, Relu or Tanh), so an
    ``.npz`` and its ``.onnx`` play the same games (``tests/bots/test_policy.py`` checks both).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    x = "obs"
    last = len(mlp.weights) - 1
    for i, (w, b) in enumerate(zip(mlp.weights, mlp.biases)):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]))
        y = "logits" if i == last else f"a{i}"
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [y if i == last else f"z{i}"]))
        if i < last:
            nodes.append(helper.make_node("Relu" if mlp.activation == "relu" else "Tanh", [f"z{i}"], [y]))
        x = y
    graph = helper.make_graph(
        nodes,
        "gin_arena_mlp",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["n", mlp.obs_size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", mlp.num_actions])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="gin-arena")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()
