"""A batch of games against a compiled opponent, stepped by one compiled call.

The core of every env in this layer: :class:`Games` holds ``n`` games as
arrays (states, the opponent's parameters, memories and generators,
the game rows and seeds) and two kernels move them: :func:`reset_games` and
:func:`step_games`.  A step applies the agent's action in each game, lets
the opponent (a numba bot: its five functions are called inside the kernel)
play until the agent is asked again, books finished hands and games, starts
the next episode where one ended (autoreset), and writes each game's
observation and legal-action mask (:mod:`arena.engine.actions`).

Everything the rules decide is the engine's: the actions go through
:func:`~arena.engine.step.apply_action`, the games are begun and dealt by
:func:`~arena.engine.step.begin_game` / :func:`~arena.engine.step.begin_hand`
from the game's seed, and the opponent gets its generator and memory as in a
tournament; so game ``s`` here is game ``s`` of the arena, the same deal, the
same opponent's choices.

Seeds: the first game of env ``i`` after ``reset(seed=s)`` is game seed
``s + i``; a game that ends is followed by game :func:`next_seed` of its seed.

Bad input is refused before anything moves: an illegal or out-of-range action,
or an action array of the wrong shape or dtype, is one :class:`ValueError`
naming the action, the env index and the legal actions; an unknown rules key or
opponent gets the same one-line error as ``arena run``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import types
from numba.core import cgutils
from numba.experimental.function_type import _get_jit_address, _get_wrapper_address
from numba.extending import intrinsic

from arena.botkit.bot import Bot, BotError
from arena.engine._jit import helper, kernel
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE, action_name, answer_of_action, fill_mask, legal_ids, observe
from arena.engine.contract import BOT_SIGNATURE, DecisionType
from arena.engine.layout import (
    G_FORFEIT,
    G_SIZE,
    G_WINNER,
    OUT_FORFEIT,
    PH_DONE,
    S_CUR,
    S_OUTCOME,
    S_PHASE,
    S_POINTS,
    S_SIZE,
    V_SIZE,
)
from arena.engine.play import forfeit_text
from arena.engine.rng import RNG_WORDS, mix_seed
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, forfeit_game, hand_winner
from arena.settings.rules import Rules, load_rules

EPISODES = ("game", "hand")
REWARDS = ("win", "points")
#: The largest game seed (a non-negative int64).
MAX_SEED = 2**63 - 1


def check_seed(seed: Any) -> int:
    """``seed`` as a game seed, or one ValueError naming it (the engine's seeds are int64: a larger one
    surfaced as numpy's overflow)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be an integer 0..{MAX_SEED} or None, not {seed!r}")
    return int(seed)


#: The seed stream that chains a finished game's seed to the next game's.
STREAM_NEXT_GAME = 8_000_000

# Flags of the kernels' ``mode`` argument.
MODE_HAND = 1  # an episode is one hand (else one game)
MODE_POINTS = 2  # reward: the hand's points difference (else +1 / -1 / 0 for a win)
MODE_PENALTY = 4  # an illegal action forfeits the game with reward ``penalty`` (else the step is refused)
ILLEGAL = ("raise", "penalty")

# Bits of what the kernels return (a step that was taken; a refused step returns ``-1 - env``): what happened in
# some env, so that the Python around a step looks at the per-env arrays only when there is something to read.
EV_DONE = 1  # an episode ended (``done``)
EV_CARRIED = 2  # a reward carried held hands (``carried_n``)
EV_FORFEIT = 4  # the opponent forfeited a game before the agent's first decision in it (``forfeits``)
EV_UNSEEN = 8  # another game ended before the agent's first decision in it (``unseen``)

_I1 = types.int64[::1]
_I2 = types.int64[:, ::1]
_F2 = types.float64[:, ::1]
_F3 = types.float64[:, :, ::1]
_U2 = types.uint64[:, ::1]
_U3 = types.uint64[:, :, ::1]
_O2 = types.float32[:, ::1]
_M2 = types.int8[:, ::1]
_F1 = types.float64[::1]
_B1 = types.boolean[::1]
# rules, opponent's decision addresses, its params, seat, mode, states, a view (work space), opponent's params
# per env, memories, generators, scratch, rows, seeds, obs, masks, ids, final obs, last game rows, games ended,
# games the opponent forfeited before the agent's first decision in them, the reward and the number of hands held
# for the agent's next reward, the reward and hands of the last step's reward that were carried, games that ended
# before the agent's first decision in them otherwise, the row and the seed of the last game that ended before the
# agent's first decision in it
_COMMON = (
    _I1,
    _I2,
    _F1,
    types.int64,
    types.int64,
    _I2,
    _I1,
    _F2,
    _F3,
    _U3,
    _U2,
    _I2,
    _I1,
    _O2,
    _M2,
    _I1,
    _O2,
    _I2,
    _I1,
    _I1,
    _F1,
    _I1,
    _F1,
    _I1,
    _I1,
    _I2,
    _I1,
)


def _decision_at(typingctx, c_addr, py_addr, jit_addr):
    """A bot decision (a first-class function of the bot signature) from its three addresses.

    What numba builds when a dispatcher is passed as a function argument
    (the cfunc wrapper, the Python object, the compiled function), made from
    addresses taken once (:func:`decision_addresses`): passing the bot's
    dispatchers on every call would cost numba a few milliseconds of typing
    per call, far more than the step itself.
    """

    def codegen(context, builder, signature, args):
        fn = cgutils.create_struct_proxy(DecisionType)(context, builder)
        ptr = context.get_value_type(types.voidptr)
        fn.c_addr = builder.inttoptr(args[0], ptr)
        fn.py_addr = builder.inttoptr(args[1], ptr)
        fn.jit_addr = builder.inttoptr(args[2], ptr)
        return fn._getvalue()

    return DecisionType(types.int64, types.int64, types.int64), codegen


decision_at: Any = intrinsic(_decision_at)


def decision_addresses(bot: Bot) -> np.ndarray:
    """``(6, 3)`` int64: per decision (``PH_*``) the addresses :func:`decision_at` takes.

    The bot object must outlive every call that uses them (:class:`Games` holds it).
    """
    out = np.zeros((len(bot.functions), 3), dtype=np.int64)
    for k, fn in enumerate(bot.functions):
        out[k] = (_get_wrapper_address(fn, BOT_SIGNATURE), id(fn), _get_jit_address(fn, BOT_SIGNATURE))
    if not out[:, 2].all():
        raise BotError(f"opponent '{bot.name}': a decision function has no compiled code")
    return out


@kernel
def next_seed(seed):
    """The seed of the game an env plays after game ``seed`` (63 bits, never negative)."""
    return np.int64(mix_seed(seed, np.int64(STREAM_NEXT_GAME)) >> np.uint64(1))


@helper
def _new_game(i, rules, opp_params, st, opp_p, mems, rngs, rows, seeds) -> None:
    s = st[i]
    begin_game(s, rules, seeds[i], rngs[i, 0], rngs[i, 1], mems[i, 0], mems[i, 1], rows[i])
    for k in range(opp_params.shape[0]):  # a fresh copy per game, as in a tournament
        opp_p[i, k] = opp_params[k]


@helper
def _advance(
    i, rules, opp, opp_params, seat, mode, st, view, opp_p, mems, rngs, scratch, rows, seeds, final, last, ended,
    forfeits, held, held_n, carried, carried_n, unseen, skipped, skipped_seeds, acted,
):  # fmt: skip
    """Play game ``i`` on until ``seat`` is asked; return ``(reward, done)``.

    The opponent's decisions are its compiled functions, called here with its
    view; an illegal one forfeits the game, as in a tournament.  A finished
    hand is booked (:func:`~arena.engine.step.end_hand`) and its reward
    counted.  When an episode ends, its last observation is written into
    ``final``, the next episode begins (a new game, seed :func:`next_seed`, if
    the game is over) and is played on to the agent's first decision, with
    ``done`` True.  ``acted``: the agent has made a decision in this game
    (False from a reset).

    A hand can end before the agent is asked anything in it: the opponent
    knocks or goes gin on its first turn, at a reset or in the episode that
    follows the one this step ended.  The game's score counts it, so its
    reward is never dropped (the rewards of a game would not add up to its
    score, always in the agent's favour): it is held in ``held[i]`` (and
    ``held_n[i]`` hands) for the agent's next reward, which
    :func:`step_games` pays.  When such a hand ends its game, no later
    decision of the agent can be paid it: if the agent decided in that game
    (``episode="hand"``: this step ended its hand) the held reward is this
    step's, else the agent never decided in the game and no episode reports
    it: it is counted in ``forfeits[i]`` (an opponent's forfeit) or
    ``unseen[i]`` (a first-hand knock that reached the target).

    A finished game's row goes to ``last[i]`` if the agent decided in it, else
    to ``skipped[i]`` (its seed to ``skipped_seeds[i]``): the step that ends
    the agent's game can go on to end such a game too, in the next episode,
    and ``last[i]`` stays the row of the game the agent played.
    """
    s = st[i]
    other = 1 - seat
    reward = 0.0
    done = False
    played = acted  # the agent has made a decision in the game being played
    while True:
        if s[S_PHASE] == PH_DONE:
            forfeit = s[S_OUTCOME] == OUT_FORFEIT
            r = 0.0
            if mode & MODE_POINTS:
                r += s[S_POINTS + seat] - s[S_POINTS + other]
            elif mode & MODE_HAND and not forfeit:
                w = hand_winner(s)
                r += 1.0 if w == seat else (-1.0 if w == other else 0.0)
            over = forfeit or end_hand(s, rules, rows[i])
            if over and not (mode & MODE_POINTS) and (forfeit or not (mode & MODE_HAND)):
                w = rows[i, G_WINNER]
                r += 1.0 if w == seat else (-1.0 if w == other else 0.0)
            if done or not acted:  # the agent has not been asked since this hand began: its next reward pays it
                held[i] += r
                held_n[i] += 1
            else:
                reward += r
            if acted and (over or mode & MODE_HAND) and not done:
                observe(s, rules, seat, view, final)
                done = True
            if over:
                ended[i] += 1
                if played:  # hands held since the agent's last decision in this game are this step's
                    for k in range(G_SIZE):
                        last[i, k] = rows[i, k]
                    reward += held[i]
                    carried[i] += held[i]
                    carried_n[i] += held_n[i]
                else:  # the agent never decided in this game: no episode reports it
                    for k in range(G_SIZE):
                        skipped[i, k] = rows[i, k]
                    skipped_seeds[i] = seeds[i]
                    if forfeit:
                        forfeits[i] += 1
                    else:
                        unseen[i] += 1
                held[i] = 0.0
                held_n[i] = 0
                played = False
                seeds[i] = next_seed(seeds[i])
                _new_game(i, rules, opp_params, st, opp_p, mems, rngs, rows, seeds)
            begin_hand(s, rules, seeds[i], scratch[i])
            continue
        if s[S_CUR] == seat:
            return reward, done
        build_view(s, rules, other, view)
        ph = s[S_PHASE]
        decide = decision_at(opp[ph, 0], opp[ph, 1], opp[ph, 2])
        answer = decide(view, opp_p[i], mems[i, other], rngs[i, other])
        if apply_action(s, rules, answer) != 0:
            forfeit_game(s, rows[i])


@kernel(types.int64(*_COMMON))
def reset_games(
    rules, opp, opp_params, seat, mode, st, view, opp_p, mems, rngs, scratch, rows, seeds, obs, masks, ids, final_obs,
    last_rows, ended, forfeits, held, held_n, carried, carried_n, unseen, skipped, skipped_seeds,
):  # fmt: skip
    """Begin game ``seeds[i]`` in every env and play it to the agent's first decision; return the ``EV_*``
    bits of what happened (``EV_FORFEIT``, ``EV_UNSEEN``).

    What ends before that decision (the opponent's first-turn knock) is held for the first step's reward."""
    events = 0
    for i in range(st.shape[0]):
        held[i] = 0.0
        held_n[i] = 0
        carried[i] = 0.0
        carried_n[i] = 0
        forfeits[i] = 0
        unseen[i] = 0
        _new_game(i, rules, opp_params, st, opp_p, mems, rngs, rows, seeds)
        begin_hand(st[i], rules, seeds[i], scratch[i])
        _advance(
            i, rules, opp, opp_params, seat, mode, st, view, opp_p, mems, rngs, scratch, rows, seeds, final_obs[i],
            last_rows, ended, forfeits, held, held_n, carried, carried_n, unseen, skipped, skipped_seeds, False,
        )  # fmt: skip
        ids[i] = observe(st[i], rules, seat, view, obs[i])
        fill_mask(ids[i], masks[i])
        if forfeits[i]:
            events |= EV_FORFEIT
        if unseen[i]:
            events |= EV_UNSEEN
    return events


@kernel(types.int64(_I1, *_COMMON, types.float64[::1], _B1, _B1, types.float64))
def step_games(
    actions, rules, opp, opp_params, seat, mode, st, view, opp_p, mems, rngs, scratch, rows, seeds, obs, masks, ids,
    final_obs, last_rows, ended, forfeits, held, held_n, carried, carried_n, unseen, skipped, skipped_seeds, rewards,
    done, game_over, penalty,
):  # fmt: skip
    """Apply ``actions[i]`` (an action id) in every env; return the ``EV_*`` bits of what happened in any env,
    or, when the step is refused, ``-1 - i`` for the first env ``i`` whose action is illegal.

    Nothing moves unless every action is legal, or (``MODE_PENALTY``) an
    illegal action forfeits its game, as a bot's does in a tournament, with
    reward ``penalty``.  A finished episode's last observation goes to
    ``final_obs[i]`` (``done[i]`` set), and ``obs[i]`` is then the first
    decision of the next episode (autoreset in the same step).

    Each reward also pays what was held for it: the hands that ended before
    the agent's first decision in them (:func:`_advance`), so that the
    rewards of a game add up to its score; ``carried[i]`` and
    ``carried_n[i]`` say how much of ``rewards[i]`` that is, and of how many
    hands.  ``game_over[i]``: a game ended in env ``i`` (``ended[i]`` grew); ``forfeits`` and ``unseen``
    count this step's.
    """
    n = st.shape[0]
    if not mode & MODE_PENALTY:
        for i in range(n):
            a = actions[i]
            if a < 0 or a >= NUM_ACTIONS or not (ids[i] >> a) & 1:
                return -1 - i
    events = 0
    for i in range(n):
        forfeits[i] = 0
        unseen[i] = 0
        games_ended = ended[i]
        s = st[i]
        a = actions[i]
        legal = 0 <= a < NUM_ACTIONS and (ids[i] >> a) & 1
        if legal:
            apply_action(s, rules, answer_of_action(s[S_PHASE], a))
        else:  # MODE_PENALTY: the engine refuses it (the error slots name it) and the game is forfeit
            apply_action(s, rules, -1 if a < 0 or a >= NUM_ACTIONS else answer_of_action(s[S_PHASE], a))
            forfeit_game(s, rows[i])
        paid = held[i]  # held for this reward: the agent's first decision since those hands ended is this one
        carried[i] = paid
        carried_n[i] = held_n[i]
        held[i] = 0.0
        held_n[i] = 0
        r, d = _advance(
            i, rules, opp, opp_params, seat, mode, st, view, opp_p, mems, rngs, scratch, rows, seeds, final_obs[i],
            last_rows, ended, forfeits, held, held_n, carried, carried_n, unseen, skipped, skipped_seeds, True,
        )  # fmt: skip
        rewards[i] = (r if legal else penalty) + paid
        done[i] = d
        game_over[i] = ended[i] > games_ended
        ids[i] = observe(s, rules, seat, view, obs[i])
        fill_mask(ids[i], masks[i])
        if d:
            events |= EV_DONE
        if carried_n[i]:
            events |= EV_CARRIED
        if forfeits[i]:
            events |= EV_FORFEIT
        if unseen[i]:
            events |= EV_UNSEEN
    return events


def resolve_rules(rules: str | Rules | Mapping[str, Any]) -> Rules:
    """``rules`` as the arena reads them: a preset name or ``.toml`` path, a :class:`Rules`, or a mapping
    of settings (``{"preset": "oklahoma", "knock_limit": 5}``).  A bad key or value is one-line
    :class:`~arena.settings.rules.RulesError`, as in ``arena run``."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, Mapping):
        settings = dict(rules)
        return load_rules(str(settings.pop("preset", "standard")), settings)
    if not isinstance(rules, (str, os.PathLike)):
        raise ValueError(f"rules must be a preset name, a rules file, a Rules or a mapping of settings, not {rules!r}")
    return load_rules(rules)


def resolve_opponent(opponent: str | os.PathLike[str] | Bot) -> Bot:
    """A compiled bot from any reference the arena accepts (a built-in name, a bot file), or a loaded bot.

    The opponent plays inside the compiled step, so it must be a numba bot: an
    external (``cmd:``), sandboxed (``sandbox:``) or plain Python bot is refused
    with one :class:`~arena.botkit.bot.BotError` line.
    """
    from arena.loading.load import load_bot

    if isinstance(opponent, os.PathLike):  # a bot file, as ``rules`` takes a rules file
        opponent = os.fspath(opponent)
    if not isinstance(opponent, (str, Bot)):
        raise ValueError(
            f"opponent must be a bot reference (a name such as 'simple', a bot file) or a Bot, not {opponent!r}"
        )
    if isinstance(opponent, str):
        from arena.settings.botref import BotRef, BotRefError

        try:
            own_process = not BotRef.parse(opponent).in_process
        except BotRefError as exc:
            raise BotError(f"opponent {opponent!r}: {exc}") from None
        if own_process:  # refused before a program is started for nothing
            raise BotError(
                f"opponent {opponent!r} is not a compiled bot: the env plays its opponent inside one compiled "
                "step, so it takes a built-in bot or a numba bot file (not cmd:, sandbox: or eaai:)"
            )
    bot = load_bot(opponent) if isinstance(opponent, str) else opponent
    if not bot.fast and bot.batch_act is not None:  # a policy:*.py or *.onnx: its act() answers whole batches
        raise BotError(
            f"opponent '{bot.name}' is a policy played in batches, not a compiled bot: the env plays its opponent "
            "inside one compiled step, where of the policies only an .npz of MLP weights runs (policy:w.npz)"
        )
    if not bot.fast:
        raise BotError(
            f"opponent '{bot.name}' is not a compiled bot: the env plays its opponent inside one compiled "
            "step, so it takes a built-in bot or a numba bot file (not cmd:, sandbox: or a PLAIN = True file)"
        )
    return bot


class Games:
    """``n`` games against one compiled opponent, the agent in seat ``seat``."""

    def __init__(
        self,
        num_envs: int,
        opponent: str | Bot = "simple",
        rules: str | Rules | Mapping[str, Any] = "standard",
        *,
        episode: str = "game",
        reward: str = "win",
        seat: int = 0,
        illegal: str = "raise",
        penalty: float = -1.0,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, not {num_envs!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}, not {episode!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if isinstance(seat, bool) or seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {', '.join(ILLEGAL)}, not {illegal!r}")
        if (  # a numpy real scalar too (a reward computed with numpy): not a bool, which is no penalty
            isinstance(penalty, (bool, np.bool_))
            or not isinstance(penalty, (int, float, np.integer, np.floating))
            or not np.isfinite(penalty)
        ):
            raise ValueError(f"penalty must be a finite number, not {penalty!r}")
        self.illegal_mode = illegal
        self.penalty = float(penalty)
        n = int(num_envs)
        self.num_envs = n
        self.rules = resolve_rules(rules)
        self.rules_array = rules_array(self.rules)
        self.opponent = resolve_opponent(opponent)
        self.episode = episode
        self.reward = reward
        self.seat = int(seat)
        self.mode = (
            (MODE_HAND if episode == "hand" else 0)
            | (MODE_POINTS if reward == "points" else 0)
            | (MODE_PENALTY if illegal == "penalty" else 0)
        )
        bot = self.opponent
        self.opp_params = np.ascontiguousarray(bot.params, dtype=np.float64)
        self.opp_addresses = decision_addresses(bot)
        self.st = np.zeros((n, S_SIZE), dtype=np.int64)
        self.view = np.zeros(V_SIZE, dtype=np.int64)  # work space: each view is built whole where it is read
        self.opp_p = np.zeros((n, self.opp_params.shape[0]), dtype=np.float64)
        self.mems = np.zeros((n, 2, max(1, bot.memory_size)), dtype=np.float64)
        self.rngs = np.zeros((n, 2, RNG_WORDS), dtype=np.uint64)
        self.scratch = np.zeros((n, RNG_WORDS), dtype=np.uint64)
        self.rows = np.zeros((n, G_SIZE), dtype=np.int64)
        self.seeds = np.zeros(n, dtype=np.int64)
        self.obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self.ids = np.zeros(n, dtype=np.int64)
        self.rewards = np.zeros(n, dtype=np.float64)
        self.done = np.zeros(n, dtype=bool)
        self.final_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        # per env: the row of the last game the agent decided in that ended (on the step that ends one, its row,
        # even when the env played on into a game that ended before the agent's first decision in it)
        self.last_rows = np.zeros((n, G_SIZE), dtype=np.int64)
        self.ended = np.zeros(n, dtype=np.int64)  # games finished per env (the step that ends one adds 1)
        self.game_over = np.zeros(n, dtype=bool)  # per env: the last step ended a game (ended grew)
        # games per env the opponent forfeited before the agent's next decision, in the last reset() or step()
        # (no episode reports them; the kernels count them)
        self.opponent_forfeits = np.zeros(n, dtype=np.int64)
        # per env: the reward (and the number) of hands that ended before the agent's first decision in them, held
        # for its next reward; how much of the last step's reward (and of how many hands) was such a carry; games
        # that ended before the agent's first decision in them other than by the opponent's forfeit (last call)
        self.held = np.zeros(n, dtype=np.float64)
        self.held_hands = np.zeros(n, dtype=np.int64)
        self.carried = np.zeros(n, dtype=np.float64)
        self.carried_hands = np.zeros(n, dtype=np.int64)
        self.unseen_games = np.zeros(n, dtype=np.int64)
        # per env: the row and the seed of the last game that ended before the agent's first decision in it
        self.skipped_rows = np.zeros((n, G_SIZE), dtype=np.int64)
        self.skipped_seeds = np.zeros(n, dtype=np.int64)
        #: The ``EV_*`` bits of the last reset() or step(): what happened in some env.
        self.events = 0
        self._warned = False
        self.broken = False  # the opponent raised mid-step: its game stopped mid-turn until reset()
        self._args = self._common()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Copied or unpickled games (``copy.deepcopy`` or pickle of an env) call their own opponent: the
        decision addresses are retaken from the copy's bot, and the opponent's params and the per-game copies
        of them (mid-game) name the copy's weights, as :meth:`Bot.__setstate__ <arena.botkit.bot.Bot>` does."""
        self.__dict__.update(state)
        self.opp_addresses = decision_addresses(self.opponent)
        repoint = getattr(self.opponent.keep, "repoint", None)
        if repoint is not None:
            repoint(self.opp_params)
            repoint(self.opp_p)
        self._args = self._common()

    def _common(self) -> tuple[Any, ...]:
        """The kernels' arguments after the actions, taken once (``_args``): a step does not gather them anew."""
        return (
            self.rules_array,
            self.opp_addresses,
            self.opp_params,
            self.seat,
            self.mode,
            self.st,
            self.view,
            self.opp_p,
            self.mems,
            self.rngs,
            self.scratch,
            self.rows,
            self.seeds,
            self.obs,
            self.masks,
            self.ids,
            self.final_obs,
            self.last_rows,
            self.ended,
            self.opponent_forfeits,
            self.held,
            self.held_hands,
            self.carried,
            self.carried_hands,
            self.unseen_games,
            self.skipped_rows,
            self.skipped_seeds,
        )

    def reset(self, seeds: np.ndarray) -> None:
        """Begin game ``seeds[i]`` in env ``i`` (seeds >= 0) and play to the agent's first decision."""
        seeds = np.asarray(seeds)
        if seeds.shape != (self.num_envs,) or seeds.dtype.kind not in "iu" or (seeds < 0).any():
            raise ValueError(f"seeds must be {self.num_envs} integers >= 0")
        self.seeds[:] = seeds
        self.broken = False
        try:
            events = reset_games(*self._args)  # the opponent plays up to the agent's first decision
        except Exception as exc:
            raise self._opponent_raised(exc) from exc
        self.rewards[:] = 0.0
        self.done[:] = False
        self.game_over[:] = False
        self.events = events
        if events & EV_FORFEIT:
            self._warn_forfeits()

    def next_game_seed(self, env: int) -> int:
        """The seed of the game env ``env`` plays after the current one."""
        return int(next_seed(int(self.seeds[env])))

    def step(self, actions: Any) -> None:
        """Apply one action id per env; a bad one raises :class:`ValueError` and changes nothing."""
        if self.broken:  # the masks are of the agent's last decision, not of the game as it stopped
            raise BotError(f"opponent '{self.opponent.name}' raised in an earlier step; reset() the env")
        arr = self.check_actions(actions)
        try:
            events = step_games(arr, *self._args, self.rewards, self.done, self.game_over, self.penalty)
        except Exception as exc:  # raised by the opponent's compiled code: its game stopped mid-step
            raise self._opponent_raised(exc) from exc
        if events < 0:
            bad = -1 - events
            raise self.illegal(bad, int(arr[bad]))
        self.events = events
        if events & EV_FORFEIT:
            self._warn_forfeits()

    def _warn_forfeits(self) -> None:
        """Warn of the first game of this object the opponent forfeited before the agent's next decision
        (:attr:`opponent_forfeits`), naming it.

        An episode needs a decision of the agent, so no episode can report such a game: an opponent whose
        first answer of a game is illegal had its games skipped without a word (``reset(seed=s)`` then
        began another game than ``s``).  The game named is the last one skipped (:attr:`skipped_rows`); if, in
        every env with a forfeit, a game that was no forfeit was skipped after it in the same call, the warning
        waits for a later forfeit."""
        if self._warned:
            return
        forfeiter = 1 - self.seat
        for i in np.flatnonzero(self.opponent_forfeits):
            if self.skipped_rows[i, G_FORFEIT] == forfeiter:
                break
        else:
            return
        self._warned = True
        names = (self.opponent.name, "agent") if self.seat else ("agent", self.opponent.name)
        seed = int(self.skipped_seeds[i])
        warnings.warn(
            f"env {i}: {forfeit_text(names, seed, self.skipped_rows[i])}, before the agent's first decision "
            "in it: no episode reports that game (info['opponent_forfeits'] counts them; warned once)",
            RuntimeWarning,
            stacklevel=3,
        )

    def _opponent_raised(self, exc: Exception) -> BotError:
        """The one-line error of an exception from the opponent's code; its game stopped mid-turn."""
        self.broken = True
        return BotError(f"opponent '{self.opponent.name}' raised {type(exc).__name__}: {exc}; reset() the env")

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as an int64 array of ``num_envs`` ids, or a one-line :class:`ValueError`."""
        arr = actions
        if not isinstance(arr, np.ndarray):
            if isinstance(arr, (bool, np.bool_)) or not isinstance(arr, (list, tuple, int, np.integer)):
                raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), not {arr!r}")
            arr = np.asarray(arr)
            if arr.dtype == object and arr.shape == (self.num_envs,):  # ints, some too big for int64?
                arr = self._wide_ints(arr)
        if arr.dtype.kind not in "iu" or arr.shape != (self.num_envs,):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), not {arr.dtype} of shape {arr.shape}"
            )
        if arr.dtype != np.int64 or not arr.flags.c_contiguous or not arr.flags.writeable:  # the kernel's type
            if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
                arr = self._too_big_illegal(arr, np.flatnonzero(arr > np.iinfo(np.int64).max))
            arr = np.array(arr, dtype=np.int64, order="C")  # a copy: writable too
        return arr

    def _wide_ints(self, arr: np.ndarray) -> np.ndarray:
        """Python ints of which some int64 cannot hold (``[2**70, 0, 0]``; numpy makes them an object array)
        as int64 (:meth:`_too_big_illegal`).  Anything else is left for the dtype error."""
        if not all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in arr):
            return arr
        low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
        return self._too_big_illegal(arr, np.array([i for i, a in enumerate(arr) if not low <= a <= high], int))

    def _too_big_illegal(self, arr: np.ndarray, wide: np.ndarray) -> np.ndarray:
        """``arr`` as int64, its entries at ``wide`` (out of int64's range) each an illegal action, as
        :class:`~arena.env.gym.GinEnv` takes one: refused, or -1 (forfeited under ``illegal="penalty"``)."""
        if wide.size and not self.mode & MODE_PENALTY:
            raise self.illegal(int(wide[0]), int(arr[wide[0]]))
        held = arr.copy()
        held[wide] = 0
        out = held.astype(np.int64)
        out[wide] = -1
        return out

    def illegal(self, env: int, action: int) -> ValueError:
        """The one-line error of an action env ``env`` cannot take."""
        legal = legal_ids(int(self.ids[env]))
        words = ", ".join(f"{a} ({action_name(a)})" for a in legal)
        return ValueError(f"env {env}: action {action_name(action)} is not legal now; legal actions: {words}")
