"""Policy bots: the three file forms, the MLP format and forward passes, lockstep batches, forfeits."""

from __future__ import annotations

import dataclasses
import io
import textwrap
from pathlib import Path

import numpy as np
import pytest

from arena.analysis.summary import error_key
from arena.botkit.bot import BotError
from arena.botkit.policy import load_policy_source, mlp_onnx, policy_source
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
from arena.engine.layout import G_FORFEIT, G_WINNER
from arena.engine.lockstep import RowRng
from arena.engine.mlp import (
    Mlp,
    MlpError,
    load_mlp,
    masked_argmax,
    masked_argmax_rows,
    mlp_logits,
    random_mlp,
    save_mlp,
)
from arena.engine.play import IllegalMoveError, play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load, load_bot
from arena.settings.botref import BotRef, BotRefError
from arena.settings.rules import Rules
from tests.reference import mlp_logits_reference

RULES = rules_array(Rules())
SEEDS = np.arange(100, 140, dtype=np.int64)

AGENT = '''"""The test MLP in numpy."""
import numpy as np
from arena.engine.mlp import load_mlp

MLP = load_mlp({path!r})


def act(obs, mask, rng):
    return np.where(mask, MLP.logits(obs), -np.inf).argmax(axis=1)
'''

#: A stochastic policy: a uniformly random legal action, drawn with the row's own numbers.
SAMPLER = '''"""Random legal actions from rng."""
import numpy as np


def act(obs, mask, rng):
    u = rng.random()
    counts = mask.sum(axis=1)
    pick = np.minimum((u * counts).astype(np.int64), counts - 1)
    order = np.cumsum(mask, axis=1) - 1
    return np.argmax((order == pick[:, None]) & mask, axis=1)
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("policies")
    mlp = random_mlp(OBS_SIZE, NUM_ACTIONS, (48, 32), seed=7)
    save_mlp(folder / "w.npz", mlp)
    (folder / "w.onnx").write_bytes(mlp_onnx(mlp))
    (folder / "agent.py").write_text(AGENT.format(path=str(folder / "w.npz")))
    (folder / "sampler.py").write_text(SAMPLER)
    return {
        "npz": folder / "w.npz",
        "onnx": folder / "w.onnx",
        "py": folder / "agent.py",
        "sampler": folder / "sampler.py",
    }


@pytest.fixture(scope="module")
def simple():
    return load_bot("simple")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


# --- the reference ----------------------------------------------------------------------------


def test_policy_specs_parse_to_policy_refs_and_a_wrong_suffix_is_one_line():
    ref = BotRef.parse("policy:models/w.npz")
    assert (ref.kind, ref.ref, ref.display, ref.spec()) == ("policy", "models/w.npz", "w", "policy:models/w.npz")
    assert BotRef.parse("policy:a.onnx").kind == BotRef.parse("policy:agent.py").kind == "policy"
    for bad, words in (("policy:", "no file"), ("policy:model.pt", "ends in .py, .onnx, .npz")):
        with pytest.raises(BotRefError, match=words) as err:
            BotRef.parse(bad)
        assert "\n" not in str(err.value)


# --- the MLP: format and forward passes -------------------------------------------------------


def sparse_obs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    obs = (rng.random((n, OBS_SIZE)) < 0.1).astype(np.float32)
    obs[:, -10:] = rng.random((n, 10)).astype(np.float32)
    return obs


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_compiled_numpy_and_onnx_forward_passes_match_the_reference(activation):
    import onnxruntime as ort

    base = random_mlp(OBS_SIZE, NUM_ACTIONS, (40, 24, 16), seed=3)
    mlp = Mlp(base.weights, base.biases, activation)
    obs = sparse_obs(25, 1)
    ref = mlp_logits_reference(mlp.weights, mlp.biases, activation, obs)
    flat, widths, act = mlp.packed()
    work = np.zeros(2 * 40, dtype=np.float32)
    out = np.zeros(NUM_ACTIONS, dtype=np.float32)
    compiled = np.zeros_like(ref)
    for i in range(obs.shape[0]):
        mlp_logits(flat, widths, act, obs[i], work, out)
        compiled[i] = out
    session = ort.InferenceSession(mlp_onnx(mlp), providers=["CPUExecutionProvider"])
    onnx_out = session.run(None, {"obs": obs})[0]
    for got in (compiled, mlp.logits(obs), onnx_out):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert not np.allclose(ref, 0)  # a real signal, not all zeros
    mask = np.zeros(NUM_ACTIONS, dtype=np.int64)
    mask[[3, 17, 52]] = 1
    assert masked_argmax(ref[0], mask) == [3, 17, 52][int(np.argmax(ref[0][[3, 17, 52]]))]
    assert masked_argmax(ref[0], np.zeros(NUM_ACTIONS, dtype=np.int64)) == -1


def test_an_mlp_file_round_trips_and_bad_files_are_one_line(tmp_path):
    mlp = random_mlp(10, 4, (6,), seed=1)
    buf = io.BytesIO()
    save_mlp(buf, mlp)
    back = load_mlp(buf.getvalue())
    assert all(np.array_equal(a, b) for a, b in zip(back.weights + back.biases, mlp.weights + mlp.biases))
    w0, b0, w1 = mlp.weights[0], mlp.biases[0], mlp.weights[1]
    cases = {
        "not npz": (b"garbage", "not an .npz file"),
        "no format": (dict(w0=w0, b0=b0), "not a gin-arena MLP file"),
        "missing bias": (dict(format="gin-arena-mlp-1", w0=w0, b0=b0, w1=w1), "wrong or missing: b1"),
        "float64": (dict(format="gin-arena-mlp-1", w0=w0.astype(np.float64), b0=b0), "w0 must be a 2-d float32"),
        "chain": (dict(format="gin-arena-mlp-1", w0=w0, b0=b0, w1=w0, b1=b0), "w1 takes 10 inputs but layer 0 gives 6"),
        "nan": (dict(format="gin-arena-mlp-1", w0=np.full_like(w0, np.nan), b0=b0), "NaN"),
        "activation": (dict(format="gin-arena-mlp-1", activation="gelu", w0=w0, b0=b0), "activation 'gelu'"),
    }
    for name, (content, words) in cases.items():
        if isinstance(content, bytes):
            data = content
        else:
            b = io.BytesIO()
            np.savez(b, **content)
            data = b.getvalue()
        with pytest.raises(MlpError, match=words) as err:
            load_mlp(data, name)
        assert "\n" not in str(err.value) and name in str(err.value)
    with pytest.raises(MlpError, match="no such file"):
        load_mlp(tmp_path / "missing.npz")


# --- the three forms play the same games ---------------------------------------------------------


def test_the_three_forms_of_one_mlp_play_identical_games_and_the_npz_one_is_compiled(files, simple):
    bots = {k: load_bot(f"policy:{files[k]}") for k in ("npz", "onnx", "py")}
    assert bots["npz"].fast and bots["npz"].batch_act is None  # inside the batch kernel
    assert bots["onnx"].batch_act is not None and bots["py"].batch_act is not None  # lockstep
    recs = {k: play_batch(b, simple, RULES, SEEDS, record_hands=True, record_log=True) for k, b in bots.items()}
    base = recs["npz"]
    assert not base.errors and len(base.log) > 1000
    for key in ("onnx", "py"):
        assert np.array_equal(recs[key].games, base.games), key
        assert np.array_equal(recs[key].hands, base.hands), key
        assert np.array_equal(recs[key].log, base.log), key
    # and in the other seat
    swapped = {k: play_batch(simple, bots[k], RULES, SEEDS[:10], record_log=True) for k in ("npz", "onnx")}
    assert np.array_equal(swapped["npz"].log, swapped["onnx"].log)


def test_nan_logits_rank_last_in_the_compiled_and_the_onnx_form_alike(tmp_path, simple):
    # A diverging network: its one hidden unit overflows to +inf, so every logit is inf * w: NaN
    # where w is 0 (most actions), +inf where w > 0 (here "pass" and "draw from the stock", whose
    # ids come after "take"), -inf where w < 0.  numpy's argmax picked the first NaN, the
    # compiled kernel skipped it: the two forms of one network played different games.
    w0 = np.full((OBS_SIZE, 1), 3e38, np.float32)
    w1 = np.zeros((1, NUM_ACTIONS), np.float32)
    w1[0, [53, 54]] = 1.0
    w1[0, 10] = -1.0
    mlp = Mlp(weights=(w0, w1), biases=(np.zeros(1, np.float32), np.zeros(NUM_ACTIONS, np.float32)), activation="relu")
    save_mlp(tmp_path / "nan.npz", mlp)
    (tmp_path / "nan.onnx").write_bytes(mlp_onnx(mlp))
    recs = [
        play_batch(load_bot(f"policy:{tmp_path / f}"), simple, RULES, SEEDS, record_log=True)
        for f in ("nan.npz", "nan.onnx")
    ]
    assert np.array_equal(recs[0].log, recs[1].log) and np.array_equal(recs[0].games, recs[1].games)
    # The rule itself: NaN below every number, the first legal action when nothing else is left.
    nan, inf = np.nan, np.inf
    logits = np.array([[nan, 1, nan, -inf], [nan, nan, 2, 0], [nan, nan, nan, 5], [nan, -inf, nan, -inf]])
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [0, 1, 1, 0], [1, 0, 1, 1]], dtype=bool)
    want = [1, 3, 1, 3]
    assert list(masked_argmax_rows(logits, mask)) == want
    assert [masked_argmax(logits[i], mask[i].astype(np.int64)) for i in range(len(want))] == want


def test_lockstep_gives_each_game_what_one_decision_at_a_time_gives_even_for_a_random_policy(files, simple):
    sampler = load_bot(f"policy:{files['sampler']}")
    whole = play_batch(sampler, simple, RULES, SEEDS, record_hands=True, record_log=True)
    assert not whole.errors
    # the same games in a smaller batch, and on the one-decision-at-a-time path
    part = play_batch(sampler, simple, RULES, SEEDS[5:12], record_hands=True, record_log=True)
    assert np.array_equal(part.games, whole.games[5:12])
    single = dataclasses.replace(sampler, batch_act=None)  # plain driver: its five decision functions
    plain = play_batch(single, simple, RULES, SEEDS[5:12], record_hands=True, record_log=True)
    assert np.array_equal(plain.games, part.games) and np.array_equal(plain.log, part.log)
    assert not np.array_equal(whole.games[:7], part.games)  # other seeds, other games


def test_a_batched_policy_stops_when_its_caller_sets_the_stop_slot(files, simple):
    from arena.engine.play import C_SIZE, C_STOP, Stopped

    sampler = load_bot(f"policy:{files['sampler']}")
    counters = np.zeros(C_SIZE, dtype=np.int64)
    counters[C_STOP] = 1
    with pytest.raises(Stopped):
        play_batch(sampler, simple, RULES, SEEDS, counters=counters)
    counters[C_STOP] = 0
    assert not play_batch(sampler, simple, RULES, SEEDS, counters=counters).errors


def test_lockstep_progress_names_who_is_asked_and_counts_each_compiled_decision_and_each_policy_call(files, simple):
    """What a watchdog reads while lockstep plays: during act() the policy's seat, a decision and the batch's
    games, the count of asks moved; the compiled opponent's decisions, asked inside the kernel, counted too."""
    from arena.engine.contract import PHASE_FUNCTION
    from arena.engine.layout import LOG_SEAT
    from arena.engine.play import C_ASKED, C_PHASE, C_ROWS, C_SEAT, C_SIZE

    counters = np.zeros(C_SIZE, dtype=np.int64)
    sampler = load_bot(f"policy:{files['sampler']}")
    seen = []

    def watched(obs, mask, rng):
        seen.append((*counters[[C_SEAT, C_PHASE, C_ASKED, C_ROWS]].tolist(), obs.shape[0]))
        return sampler.batch_act(obs, mask, rng)

    rec = play_batch(
        dataclasses.replace(sampler, batch_act=watched), simple, RULES, SEEDS, record_log=True, counters=counters
    )
    assert not rec.errors and len(seen) > 10
    seats, phases, asked, rows, batch = (np.array(x) for x in zip(*seen))
    assert (seats == 0).all() and np.isin(phases, list(PHASE_FUNCTION)).all() and np.array_equal(rows, batch)
    assert (np.diff(asked) > 1).any() and (np.diff(asked) >= 1).all()  # the opponent's decisions in between
    assert counters[C_ROWS] == 0  # no act() runs now
    assert counters[C_ASKED] == len(seen) + int((rec.log // LOG_SEAT == 1).sum())  # each call, each of simple's


def test_two_batched_policies_play_each_other_as_their_compiled_twins_do(files):
    py, onnx, npz = (load_bot(f"policy:{files[k]}") for k in ("py", "onnx", "npz"))
    seeds = SEEDS[:4]
    short = rules_array(Rules(hand_cap=4))  # untrained policies rarely knock: long games otherwise
    both = play_batch(py, onnx, short, seeds, record_log=True)
    compiled = play_batch(npz, npz, short, seeds, record_log=True)
    assert len(compiled.log) > 200
    assert not both.errors and np.array_equal(both.games, compiled.games) and np.array_equal(both.log, compiled.log)


def test_rowrng_rows_depend_on_their_own_key_only():
    a = RowRng(np.array([1, 2, 3], dtype=np.uint64)).random(4)
    b = RowRng(np.array([9, 2], dtype=np.uint64)).random(4)
    assert a.shape == (3, 4) and np.array_equal(a[1], b[1]) and not np.array_equal(a[0], b[0])
    assert ((a >= 0) & (a < 1)).all() and len(set(a.ravel().tolist())) == 12


# --- bad policies -----------------------------------------------------------------------------------


def test_an_illegal_action_a_wrong_shape_and_a_raise_forfeit_the_game_with_the_reason(tmp_path, simple):
    cases = {
        "ace.py": (
            "def act(obs, mask, rng):\n    import numpy as np\n    return np.zeros(len(obs), dtype=int)\n",
            "policy chose action discard",
        ),
        "shape.py": (
            "def act(obs, mask, rng):\n    import numpy as np\n    return np.zeros((len(obs), 2), dtype=int)\n",
            r"act() returned shape",
        ),
        "floats.py": ("def act(obs, mask, rng):\n    return mask.argmax(1) * 1.0\n", "integer action ids"),
        "boom.py": ("def act(obs, mask, rng):\n    raise RuntimeError('kaboom')\n", "RuntimeError: kaboom"),
    }
    for name, (text, words) in cases.items():
        bot = load_bot(f"policy:{write(tmp_path, name, text)}")
        rec = play_batch(bot, simple, RULES, SEEDS[:6])
        assert len(rec.errors) == 6 and (rec.games[:, G_FORFEIT] == 0).all() and (rec.games[:, G_WINNER] == 1).all()
        assert all(words in e and "\n" not in e and f"bot '{Path(name).stem}'" in e for e in rec.errors), rec.errors
        with pytest.raises(IllegalMoveError, match="seat 0"):
            play_batch(bot, simple, RULES, SEEDS[:2], forfeit=False)
    # An action that answers nothing reached the engine as -1: the headline (what the report counts)
    # named the engine's complaint, "answer must be 0 (no) or 1 (yes) in take_upcard() (answered -1)".
    always7 = write(tmp_path, "seven.py", "def act(obs, mask, rng):\n    return 0 * mask.argmax(1) + 7\n")
    rec = play_batch(load_bot(f"policy:{always7}"), simple, RULES, SEEDS[:4])
    heads = {error_key(e) for e in rec.errors}
    assert heads <= {f"bot 'seven' (seat 0) chose an illegal action in {f}()" for f in ("take_upcard", "draw")}, heads
    assert all("(answered" not in e and "policy chose action discard 8c; legal: " in e for e in rec.errors), rec.errors


#: simple as a plain bot file: its decisions asked from Python, so a policy against it is asked one at a time.
PLAIN_SIMPLE = '''"""simple, asked from Python."""
from bots.simple import take_upcard, draw, big_gin, discard, knock
NAME = "plain-simple"
PLAIN = True
'''


def test_an_illegal_action_asked_one_decision_at_a_time_is_reported_as_in_lockstep(tmp_path, simple):
    """Against a plain bot the policy is asked one decision at a time: its forfeits say what it chose and what
    was legal, word for word as in lockstep (they said "answer must be 0 (no) or 1 (yes) ... (answered -1)")."""
    plain = load_bot(str(write(tmp_path, "plain_simple.py", PLAIN_SIMPLE)))
    assert not plain.fast
    for name, text in {
        "seven.py": "def act(obs, mask, rng):\n    return 0 * mask.argmax(1) + 7\n",  # answers no decision
        "wrongcard.py": (  # a card not in the hand, or a card where a yes or no is asked
            "import numpy as np\ndef act(obs, mask, rng):\n    return np.where(mask[:, 51], 50, 51)\n"
        ),
    }.items():
        policy = load_bot(f"policy:{write(tmp_path, name, text)}")
        lockstep = play_batch(policy, simple, RULES, SEEDS[:6]).errors
        one_at_a_time = play_batch(policy, plain, RULES, SEEDS[:6]).errors
        assert len(lockstep) == 6 and one_at_a_time == lockstep, (one_at_a_time, lockstep)
        assert all("chose an illegal action" in e and "; legal: " in e for e in one_at_a_time), one_at_a_time
        with pytest.raises(IllegalMoveError) as raised:
            play_batch(policy, plain, RULES, SEEDS[:1], forfeit=False)
        assert str(raised.value) == lockstep[0]


def test_bad_policy_files_are_one_line_bot_errors(tmp_path, files):
    npz_small = tmp_path / "small.npz"
    save_mlp(npz_small, random_mlp(10, NUM_ACTIONS, (4,)))
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    (tmp_path / "narrow.onnx").write_bytes(mlp_onnx(random_mlp(OBS_SIZE, 10, (4,))))
    (tmp_path / "small.onnx").write_bytes(mlp_onnx(random_mlp(10, NUM_ACTIONS, (4,))))
    cases = {
        # the width, not "returned float32 values; it must return integer action ids"
        str(
            tmp_path / "narrow.onnx"
        ): rf"output \S+ is float32\[3, 10\] for 3 observations; logits must be \[n, {NUM_ACTIONS}\]",
        # onnxruntime's whole message, not its first line broken off at "for the following indices"
        str(tmp_path / "small.onnx"): r"for the following indices \S+",
        str(tmp_path / "missing.npz"): "no such policy file",
        str(npz_small): f"maps 10 inputs to {NUM_ACTIONS} outputs",
        str(tmp_path / "junk.onnx"): "not a usable ONNX model",
        str(write(tmp_path, "noact.py", "X = 1\n")): "defines no act",
        str(write(tmp_path, "twoargs.py", "def act(obs, mask):\n    return 0\n")): r"act\(\) takes 2 argument",
        str(write(tmp_path, "broken.py", "import nothing_here\n")): "importing it failed",
    }
    for path, words in cases.items():
        with pytest.raises(BotError, match=words) as err:
            load_bot(f"policy:{path}")
        assert "\n" not in str(err.value)
    with pytest.raises(BotError, match="has no parameter 'x'"):
        load(dataclasses.replace(BotRef.parse(f"policy:{files['npz']}"), params=(("x", 1.0),)))


def fixed_batch_onnx(batch: int | str, reshape_to: int | None = None) -> bytes:
    """An ONNX policy ``obs -> logits`` whose input declares ``batch`` rows (a number: a fixed batch), and
    which, with ``reshape_to``, reshapes its input to that many rows inside (a fixed batch it does not declare)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((OBS_SIZE, NUM_ACTIONS)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["logits"])]
    if reshape_to is None:
        nodes.insert(0, helper.make_node("Identity", ["obs"], ["x"]))
    else:
        inits.append(numpy_helper.from_array(np.array([reshape_to, OBS_SIZE], dtype=np.int64), "shape"))
        nodes.insert(0, helper.make_node("Reshape", ["obs", "shape"], ["x"]))
    graph = helper.make_graph(
        nodes,
        "fixed",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [batch, OBS_SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, NUM_ACTIONS])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def test_an_onnx_model_of_one_batch_size_is_refused_at_load_in_one_line(tmp_path, simple):
    """A model exported with a fixed batch of 2 passed the load check (one batch of exactly 2 rows), then
    forfeited every game of a run: "Got invalid dimensions for input: obs"."""
    declared = tmp_path / "fixed2.onnx"
    declared.write_bytes(fixed_batch_onnx(2))
    with pytest.raises(BotError) as err:
        load_bot(f"policy:{declared}")
    assert str(err.value).startswith(f"{declared}: the ONNX model's input obs has a fixed batch of 2; ")
    assert "\n" not in str(err.value)
    inside = tmp_path / "inside2.onnx"  # declares any batch, takes 2 rows only
    inside.write_bytes(fixed_batch_onnx("n", reshape_to=2))
    with pytest.raises(BotError) as err:
        load_bot(f"policy:{inside}")
    assert str(err.value).startswith(f"{inside}: the ONNX model does not map float32[n, {OBS_SIZE}] observations")
    assert "(asked with n = 3)" in str(err.value) and "\n" not in str(err.value)
    anyn = tmp_path / "anyn.onnx"  # the same model with a dynamic batch plays
    anyn.write_bytes(fixed_batch_onnx("n"))
    assert play_batch(load_bot(f"policy:{anyn}"), simple, RULES, SEEDS[:3]).games.shape[0] == 3


def test_a_policy_file_given_without_its_prefix_says_to_write_policy(files, monkeypatch):
    """An .npz or .onnx given as a bot file was read as Python source ("cannot read it: 'utf-8' codec can't
    decode ..."), and a policy module was "not a bot: missing function(s) ..." with no word of policy:."""
    from arena.env.gym import VectorGinEnv

    for path in (files["npz"], files["onnx"]):
        with pytest.raises(BotError) as exc:
            load_bot(str(path))
        assert str(exc.value) == f"{path}: a policy file, not a bot file: write policy:{path}"
    with pytest.raises(BotError, match=r"write policy:\S*w\.npz$"):
        VectorGinEnv(2, opponent=str(files["npz"]))
    with pytest.raises(BotError) as exc:
        load_bot(str(files["sampler"]))
    assert str(exc.value) == (
        f"{files['sampler']}: not a bot but a policy module (it defines act() and no decision functions): "
        f"write policy:{files['sampler']}"
    )
    monkeypatch.chdir(files["npz"].parent)  # a bare name is a built-in's: the file here is named in the hint
    with pytest.raises(BotError, match=r"^unknown bot 'w\.onnx' .*; a policy file is written policy:w\.onnx$"):
        load_bot("w.onnx")


def test_an_mlp_bot_whose_params_were_replaced_forfeits_instead_of_reading_memory(files, simple):
    bot = load_bot(f"policy:{files['npz']}")
    broken = dataclasses.replace(bot, params=np.zeros(3))
    rec = play_batch(broken, simple, RULES, SEEDS[:3])
    assert (rec.games[:, G_FORFEIT] == 0).all() and all("answered -1" in e for e in rec.errors)


def test_a_policy_bot_with_params_keeps_its_weights_and_refuses_names_it_has_not(files, simple):
    """A variant with no changes (a config variant, a league entry) plays as the policy: its params were
    rebuilt from its parameter names (none), and the variant forfeited every game."""
    for bot in (load_bot(f"policy:{files['npz']}"), load_bot("learned")):
        variant = bot.with_params("variant", {})
        rec = play_batch(variant, simple, RULES, SEEDS[:5])
        assert (rec.games[:, G_FORFEIT] < 0).all()
        assert variant.name == "variant" and np.array_equal(rec.games, play_batch(bot, simple, RULES, SEEDS[:5]).games)
        with pytest.raises(BotError, match="'variant': '.*' has no parameter 'knock_at' \\(its parameters: none\\)"):
            bot.with_params("variant", {"knock_at": 3})


def test_a_policy_travels_as_content_and_loads_to_the_same_bot(files, simple):
    for key in ("npz", "onnx", "py"):
        text = policy_source(files[key])
        bot = load_policy_source(text, str(files[key]), name="copy")
        orig = load_bot(f"policy:{files[key]}")
        assert bot.source_hash == orig.source_hash and bot.name == "copy"
        a = play_batch(bot, simple, RULES, SEEDS[:5])
        assert np.array_equal(a.games, play_batch(orig, simple, RULES, SEEDS[:5]).games)
    with pytest.raises(BotError, match="not base64"):
        load_policy_source("@@@", "x.npz")


def test_an_mlp_policy_is_the_compiled_opponent_of_the_vectorized_env(files):
    from arena.env.gym import VectorGinEnv

    env = VectorGinEnv(8, opponent=f"policy:{files['npz']}", episode="hand", reward="points")
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        mask = info["action_mask"].astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        _, reward, done, _, info = env.step(actions)
        ended += int(done.sum())
        assert np.isfinite(reward).all()
    assert ended > 8  # hands end: the opponent answered every decision legally inside the compiled step


@pytest.mark.parametrize("form", ["onnx", "npz"])
def test_a_policy_is_the_opponent_in_the_browser_game(files, form):
    from arena.web.session import PlaySession

    s = PlaySession.start(bot=f"policy:{files[form]}", seed=3)
    moves = 0
    for _ in range(30):
        v = s.view()
        if not v["allowed"]:
            break
        action = v["allowed"][0]
        card = v["you"]["cards"][0]["id"] if action in ("discard", "knock") else None
        s.act("discard" if action == "knock" else action, card)
        moves += 1
    events = s.view()["events"]
    assert moves >= 10 and any(e.startswith("w discards") for e in events), events[-5:]
