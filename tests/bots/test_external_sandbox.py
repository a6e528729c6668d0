"""Sandboxed bot files: the same moves as in-process, and cheats that work in-process gain nothing.

Each cheat is checked both ways: loaded in-process it changes the results
(so the cheat itself works), sandboxed it plays exactly like its honest twin
(so it found nothing to use).
"""

from __future__ import annotations

import importlib
import textwrap
import time

import numpy as np
import pytest

from arena.botkit.bot import BotError, bot_from_module, load_bot_file
from arena.engine.layout import G_FORFEIT
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import Limits, external_of, sandboxed_bot
from arena.loading.load import load_bot
from arena.settings.rules import Rules, load_rules

R = rules_array(Rules())


def write(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


def same_games(a, b) -> bool:
    return np.array_equal(a.games, b.games) and np.array_equal(a.hands, b.hands) and np.array_equal(a.log, b.log)


def play(bot0, bot1, seeds, rules=R):
    return play_batch(bot0, bot1, rules, seeds, record_hands=True, record_log=True)


def test_a_sandboxed_bot_plays_the_same_moves_as_in_process(simple):
    """The host rebuilds the view, keeps memory per game and seeds rng as the engine does."""
    boxed = sandboxed_bot("bots/simple.py")
    assert boxed.source.startswith("sandbox:") and boxed.source.endswith("bots/simple.py")
    assert boxed.source_hash == load_bot_file("bots/simple.py").source_hash
    assert boxed.name == "simple" and not boxed.fast
    seeds = np.arange(40)
    assert same_games(play(boxed, simple, seeds), play(simple, simple, seeds))
    assert same_games(play(simple, boxed, seeds), play(simple, simple, seeds))
    eaai = rules_array(load_rules("eaai"))
    assert same_games(play(boxed, boxed, seeds, eaai), play(simple, simple, seeds, eaai))  # both seats at once
    external_of(boxed).close()


def test_parameters_reach_the_sandboxed_bot_and_are_validated(simple):
    """A config override (with_params) is sent at each game start; bad values are refused by the file's own check."""
    inproc = load_bot("early-knock").with_params("ek", {"knock_at": 3.0, "slack": 0.0})
    boxed = sandboxed_bot("bots/early_knock.py")
    assert boxed.param_names == inproc.param_names
    tuned = boxed.with_params("ek", {"knock_at": 3.0, "slack": 0.0})
    seeds = np.arange(30)
    assert same_games(play(tuned, simple, seeds), play(inproc, simple, seeds))
    assert not same_games(play(boxed, simple, seeds), play(inproc, simple, seeds))  # the override mattered
    bad = boxed.with_params("ek", {"knock_at": 30.0})
    rec = play_batch(bad, simple, R, np.arange(1))
    assert "bot error: take_upcard(): bad parameters: knock_at = 30.0 must be between 0 and 10" in rec.errors[0]
    external_of(boxed).close()


FRAME_WALKER = '''
    """Simple, but it walks up the stack to the engine's state and peeks at the next stock card."""
    import sys

    import numpy as np

    import bots.simple as simple
    from arena.engine.layout import S_DECK, S_SIZE, S_STOCK_POS, V_HAND
    from arena.engine.melds import in_any_meld

    PLAIN = True
    MEMORY = simple.MEMORY
    take_upcard = simple.take_upcard.py_func
    big_gin = simple.big_gin.py_func
    discard = simple.discard.py_func
    knock = simple.knock.py_func


    def _engine_state():
        f = sys._getframe(1)
        while f is not None:
            for v in list(f.f_locals.values()):
                if isinstance(v, np.ndarray) and v.dtype == np.int64 and v.shape == (S_SIZE,):
                    return v
            f = f.f_back
        return None


    def draw(view, params, memory, rng):
        st = _engine_state()
        if st is not None and not in_any_meld(view[V_HAND], st[S_DECK + st[S_STOCK_POS]]):
            simple.draw.py_func(view, params, memory, rng)  # keep Simple's notes
            return 1  # the stock card is useless to me: take the pile instead
        return simple.draw.py_func(view, params, memory, rng)
'''


def test_the_frame_walking_cheat_finds_nothing_in_the_sandbox(tmp_path, simple):
    path = write(tmp_path, "peeker.py", FRAME_WALKER)
    seeds = np.arange(60)
    honest = play(simple, simple, seeds)
    cheating = play(load_bot_file(path), simple, seeds)
    assert not same_games(cheating, honest)  # in-process, peeking changes the play
    boxed = sandboxed_bot(path)
    assert same_games(play(boxed, simple, seeds), honest)  # sandboxed, it is its honest twin
    external_of(boxed).close()


MONKEYPATCHER = '''
    """Simple, which at import makes every other Simple never knock."""
    import bots.simple as victim
    from bots.simple import MEMORY, big_gin, discard, draw, knock, take_upcard

    PLAIN = True


    def _never(view, params, memory, rng):
        return 0


    victim.knock = _never
'''


def test_a_monkeypatching_bot_in_the_sandbox_changes_no_other_matchup(tmp_path, simple):
    path = write(tmp_path, "patcher.py", MONKEYPATCHER)
    module = importlib.import_module("bots.simple")
    original = module.knock
    seeds = np.arange(20)
    baseline = play(simple, simple, seeds)
    try:
        load_bot_file(path)  # in-process: the patch lands in this process's bots.simple
        assert module.knock is not original
        patched = bot_from_module(module, name="simple", source="bots.simple")
        assert not same_games(play(patched, simple, seeds), baseline)
    finally:
        module.knock = original
    boxed = sandboxed_bot(path)
    assert module.knock is original
    fresh = bot_from_module(module, name="simple", source="bots.simple")
    assert same_games(play(fresh, simple, seeds), baseline)
    assert same_games(play(boxed, simple, seeds), baseline)  # the patcher itself plays Simple's moves
    external_of(boxed).close()


LOOPER = '''
    """Simple, except that the second game of its process hangs in a compiled loop."""
    from arena.engine._jit import jit

    import bots.simple as simple

    PLAIN = True
    MEMORY = simple.MEMORY + 1
    GAMES = [0]


    @jit
    def spin(x):
        while x >= 0:
            x = (x * 7 + 1) % 1000003
        return x


    def _tick(memory):
        if memory[-1] == 0:
            memory[-1] = 1
            GAMES[0] += 1


    def take_upcard(view, params, memory, rng):
        _tick(memory)
        return simple.take_upcard(view, params, memory, rng)


    def draw(view, params, memory, rng):
        _tick(memory)
        return simple.draw(view, params, memory, rng)


    def discard(view, params, memory, rng):
        if GAMES[0] == 2:
            return spin(5)
        return simple.discard(view, params, memory, rng)


    big_gin = simple.big_gin
    knock = simple.knock
'''


def test_a_compiled_infinite_loop_in_the_sandbox_forfeits_by_timeout_and_later_games_play(tmp_path, simple):
    # 5 s per decision: far above an honest answer even on a loaded machine (the restarted host's
    # first answers may wait for numba), and the loop still forfeits in bounded time.
    boxed = sandboxed_bot(write(tmp_path, "looper.py", LOOPER), limits=Limits(decision_s=5.0, start_s=120.0))
    t0 = time.monotonic()
    rec = play_batch(boxed, simple, R, np.arange(3))
    assert np.flatnonzero(rec.games[:, G_FORFEIT] >= 0).tolist() == [1]
    assert "timeout: no answer to discard() within 5 s" in rec.errors[0]
    assert time.monotonic() - t0 < 60
    assert external_of(boxed).restarts == 1
    external_of(boxed).close()


@pytest.mark.parametrize(
    "action, words",
    [
        ("raise ValueError('no idea')", "bot error: discard(): raised ValueError: no idea"),
        ("sys.exit(3)", "crashed: exited with code 3"),
        ("raise KeyboardInterrupt", "crashed: killed by SIGINT"),
        ("os._exit(0)", "crashed: exited with code 0"),
        ("return 1.7", "ill-typed answer: discard() must answer an integer, got a float: '1.7'"),
        ("return '3'", "ill-typed answer: discard() must answer an integer, got str"),
    ],
)
def test_exits_exceptions_and_wrong_types_in_a_sandboxed_bot_forfeit_one_game(tmp_path, simple, action, words):
    """sys.exit, KeyboardInterrupt and os._exit end the host, not the run; the next game plays."""
    body = f"""
        import os, sys
        import bots.simple as simple
        PLAIN = True
        MEMORY = simple.MEMORY + 1
        take_upcard, draw, big_gin, knock = simple.take_upcard, simple.draw, simple.big_gin, simple.knock
        GAMES = [0]

        def discard(view, params, memory, rng):
            if memory[-1] == 0:
                memory[-1] = 1
                GAMES[0] += 1
                if GAMES[0] == 2:  # the second game of this process
                    {action}
                print("game", GAMES[0])  # goes to the bot's log, not into the protocol
            return simple.discard(view, params, memory, rng)
    """
    boxed = sandboxed_bot(write(tmp_path, "faulty.py", body))
    rec = play_batch(boxed, simple, R, np.arange(3))
    assert np.flatnonzero(rec.games[:, G_FORFEIT] >= 0).tolist() == [1]
    assert words in rec.errors[0], rec.errors[0]
    ext = external_of(boxed)
    ext.close()  # the bot's stderr is read by a thread: after close every line it wrote is in the log
    assert "game 1" in ext.drain_log()


def test_a_file_that_is_not_a_bot_fails_to_load_with_the_reason(tmp_path):
    path = write(tmp_path, "half.py", "def take_upcard(view, params, memory, rng):\n    return 0\n")
    with pytest.raises(BotError, match=r"bot error: .*half.py: not a bot: missing function\(s\) draw"):
        sandboxed_bot(path)
    with pytest.raises(BotError, match="no such bot file"):
        sandboxed_bot(tmp_path / "nothing.py")
    with pytest.raises(BotError, match="not a bot"):
        load_bot(f"sandbox:{path}")


def test_the_host_of_a_bot_file_does_not_import_the_policy_machinery(tmp_path):
    """Only a policy needs arena.botkit.policy (and the lockstep kernels it loads): about half a second
    of CPU that every sandboxed bot process paid at its start."""
    import subprocess
    import sys

    bot = write(
        tmp_path,
        "plain.py",
        """
        import bots.simple as s
        PLAIN = True
        MEMORY = s.MEMORY
        take_upcard, draw, big_gin, discard, knock = s.take_upcard, s.draw, s.big_gin, s.discard, s.knock
        """,
    )
    code = (
        "import sys\nimport arena.external.host as h\nh.main([sys.argv[1]])\n"
        "heavy = {'arena.botkit.policy', 'arena.engine.lockstep'} & set(sys.modules)\n"
        "print(sorted(heavy), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(bot)], input="{}\n", capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith('{"name":"plain"'), out.stdout  # it loaded the bot and said hello
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
