"""The compiled decisions of an MLP policy (``policy:weights.npz``): a numba bot like any other.

Each decision builds the seat's observation from its view
(:func:`arena.engine.actions.observe_view`), runs the MLP
(:func:`arena.engine.mlp.mlp_logits`) and answers with the legal action of
the largest logit.  So an MLP plays inside the compiled batch kernel, with
no Python in the loop, against any bot, and as the opponent of the
vectorized env.

The five functions are compiled once (and cached) for every MLP: the
weights are data, not code.  The bot's ``params`` array carries where they
are (:func:`mlp_params`: a tag, the address and length of the packed
float32 weights, the activation, the layer widths), and the loader keeps the
weights alive with the bot (``Bot.keep``, a :class:`Weights`).  An address
is only good in the process and for the array it was taken from, so a copy
of the bot (``copy.deepcopy``, pickle, a worker of a spawned vector env)
re-points its params at its own copy of the weights (:meth:`Weights.repoint`).  ``memory`` is the work
space, read as float32: the observation, the logits and two hidden layers
(the engine zeroes it at each game start, and a decision writes each slot
before reading it).
A params array without the tag (a bot whose parameters were replaced)
answers -1, which the engine refuses: the game is forfeited, never read out
of bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from arena.engine._jit import jit, stack_int64
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE, answer_of_action, observe_view, view_legal_actions
from arena.engine.layout import V_DECISION
from arena.engine.mlp import MAX_LAYERS, Mlp, mlp_logits, outranks

# params slots
P_TAG = 0
P_ADDRESS = 1
P_LENGTH = 2
P_ACTIVATION = 3
P_LAYERS = 4  # number of weight layers
P_WIDTHS = 5  # P_WIDTHS + i: width i (input, hidden..., output)
#: Marks a params array made by :func:`mlp_params` (exact in a float64).
TAG = 7_346_201.0

assert MAX_LAYERS + 1 == 17
MEMORY = 1  # set per MLP by :func:`memory_size`; the loader overrides the module's default
PLAIN = False


def _floats_at(typingctx, address, length):
    """A float32 array of ``length`` elements at memory ``address`` (no copy, not owned)."""
    if not isinstance(address, types.Integer) or not isinstance(length, types.Integer):
        return None
    array_type = types.float32[::1]

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], context.get_value_type(types.float32).as_pointer())
        itemsize = context.get_constant(types.intp, 4)
        array = make_array(array_type)(context, builder)
        n = builder.sext(args[1], cgutils.intp_t) if args[1].type.width < 64 else args[1]
        populate_array(array, data=ptr, shape=[n], strides=[itemsize], itemsize=itemsize, meminfo=None)
        return array._getvalue()

    return array_type(address, length), codegen


floats_at: Any = intrinsic(_floats_at)


class Weights:
    """The packed float32 weights an MLP bot's params name by address (``Bot.keep``).

    The address in the params is of this object's array.  A copy of the bot
    copies the weights to new memory but its params keep the old address,
    which is the original's memory (freed with it: wrong answers or a
    crash), or nothing at all in another process.  So whatever copies a bot
    calls :meth:`repoint` on the copied params: :class:`arena.botkit.bot.Bot`
    as it is copied or unpickled, and the env's games for their per-game copies.
    """

    def __init__(self, flat: np.ndarray) -> None:
        self.flat = np.ascontiguousarray(flat, dtype=np.float32)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.flat = np.ascontiguousarray(state["flat"], dtype=np.float32)  # read in place: C order, float32

    @property
    def address(self) -> int:
        return int(self.flat.ctypes.data)

    def repoint(self, params: np.ndarray) -> None:
        """Write this array's address into ``params`` (one params array or rows of them), in place, where a
        row is :func:`mlp_params`' for weights of this length; other rows (zeros, replaced params) stay."""
        rows = params.reshape(1, -1) if params.ndim == 1 else params
        if rows.shape[1] < P_WIDTHS:
            return
        mine = (rows[:, P_TAG] == TAG) & (rows[:, P_LENGTH] == self.flat.shape[0])
        rows[mine, P_ADDRESS] = float(self.address)  # an address < 2**53: exact in a float64


def mlp_params(mlp: Mlp) -> tuple[np.ndarray, Weights]:
    """``(params, weights)``: the params array naming the packed ``weights`` (keep them alive with the bot)."""
    flat, widths, activation = mlp.packed()
    weights = Weights(flat)
    params = np.zeros(P_WIDTHS + widths.shape[0], dtype=np.float64)
    params[P_TAG] = TAG
    params[P_LENGTH] = weights.flat.shape[0]
    params[P_ACTIVATION] = activation
    params[P_LAYERS] = widths.shape[0] - 1
    params[P_WIDTHS:] = widths
    weights.repoint(params)
    return params, weights


def memory_size(mlp: Mlp) -> int:
    """Memory slots (float64, each holding two float32) a decision works in: observation, logits,
    two of the widest hidden layers."""
    hidden = max((int(w.shape[1]) for w in mlp.weights[:-1]), default=1)
    return (OBS_SIZE + NUM_ACTIONS + 2 * hidden + 1) // 2


@jit
def mlp_answer(view, params, memory):
    """The engine's answer of the MLP that ``params`` names, for the decision in ``view``."""
    if params.shape[0] < P_WIDTHS or params[P_TAG] != TAG:
        return -1
    n_layers = np.int64(params[P_LAYERS])
    if n_layers < 1 or n_layers > MAX_LAYERS or params.shape[0] != P_WIDTHS + n_layers + 1:
        return -1
    widths = stack_int64(17)  # MAX_LAYERS + 1 (a literal: the stack array's size is fixed at compile time)
    for i in range(n_layers + 1):
        widths[i] = np.int64(params[P_WIDTHS + i])
    hidden = np.int64(1)
    for i in range(1, n_layers):
        hidden = max(hidden, widths[i])
    if 2 * memory.shape[0] < OBS_SIZE + NUM_ACTIONS + 2 * hidden:
        return -1
    flat = floats_at(np.int64(params[P_ADDRESS]), np.int64(params[P_LENGTH]))
    # The work space in float32, as the weights: half the memory traffic of float64, twice the vector width.
    mem32 = floats_at(np.int64(memory.ctypes.data), 2 * memory.shape[0])
    obs = mem32[:OBS_SIZE]
    logits = mem32[OBS_SIZE : OBS_SIZE + NUM_ACTIONS]
    work = mem32[OBS_SIZE + NUM_ACTIONS : OBS_SIZE + NUM_ACTIONS + 2 * hidden]
    observe_view(view, True, obs)
    mlp_logits(flat, widths[: n_layers + 1], np.int64(params[P_ACTIVATION]), obs, work, logits)
    ids = view_legal_actions(view)
    best = -1
    for a in range(NUM_ACTIONS):
        if (ids >> a) & 1 and (best < 0 or outranks(logits[a], logits[best])):
            best = a
    if best < 0:
        return -1
    return answer_of_action(view[V_DECISION], np.int64(best))


def take_upcard(view, params, memory, rng):
    return mlp_answer(view, params, memory)


def draw(view, params, memory, rng):
    return mlp_answer(view, params, memory)


def big_gin(view, params, memory, rng):
    return mlp_answer(view, params, memory)


def discard(view, params, memory, rng):
    return mlp_answer(view, params, memory)


def knock(view, params, memory, rng):
    return mlp_answer(view, params, memory)
