"""Loading bots: clear reasons when a file is not a bot, fast vs plain path, the engine compiled once."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from arena.botkit.bot import BotError, load_bot_file
from arena.engine.layout import G_HANDS
from arena.engine.play import IllegalMoveError, play_batch, play_games_kernel
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.rules import Rules

R = rules_array(Rules())

FUNCS = ("take_upcard", "draw", "big_gin", "discard", "knock")


def write(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


def test_missing_function_wrong_signature_and_import_error_are_named(tmp_path):
    p = write(tmp_path, "partial.py", "def take_upcard(view, params, memory, rng):\n    return 0\n")
    with pytest.raises(BotError, match=r"partial.py: not a bot: missing function\(s\) draw, big_gin, discard, knock"):
        load_bot_file(p)
    body = "".join(f"def {f}(view, params, memory, rng):\n    return 0\n" for f in FUNCS[:-1])
    p = write(tmp_path, "sig.py", body + "def knock(view):\n    return 1\n")
    with pytest.raises(BotError, match=r"sig.py: knock\(\) takes 1 argument"):
        load_bot_file(p)
    p = write(tmp_path, "boom.py", "import os\n\nraise RuntimeError('no config')\n")
    with pytest.raises(BotError, match=r"boom.py: not a bot: importing it failed: RuntimeError: no config \(line 3\)$"):
        load_bot_file(p)
    # A syntax error names the user's file and line, never the loader's cached copy (arena_bot_<hash>.py).
    p = write(tmp_path, "typo.py", "NAME = 'x'\ndef discard(view, params, memory, rng)\n    return 0\n")
    with pytest.raises(BotError) as err:
        load_bot_file(p)
    assert str(err.value).endswith("typo.py: not a bot: importing it failed: SyntaxError: expected ':' (line 2)")
    assert "arena_bot_" not in str(err.value)
    with pytest.raises(BotError, match="no such bot file"):
        load_bot_file(tmp_path / "nothing.py")
    (tmp_path / "folder.py").mkdir()  # a folder named like a bot file is said to be one, not "no such file"
    with pytest.raises(BotError, match=r"folder.py: a folder, not a bot file \(give the .py file inside it\)"):
        load_bot_file(tmp_path / "folder.py")
    with pytest.raises(BotError, match="unknown bot 'simpel'"):
        load_bot("simpel")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("NAME = 5", "NAME = 5 is not allowed: it is not text"),
        ('NAME = ["a"]', "NAME = ['a'] is not allowed: it is not text"),
        ("NAME = None", "NAME = None is not allowed: it is not text"),
        ('NAME = ""', "NAME = '' is not allowed: it is empty"),
        ('NAME = "a\\nb"', "NAME = 'a\\nb' is not allowed: it holds a character that does not show"),
        # Taken at load, then every chunk failed with a MemoryError (7 TiB asked).
        ("MEMORY = 10**12", "MEMORY = 1000000000000 is not allowed (allowed: a whole number 1..1048576"),
        ("MEMORY = True", "MEMORY = True is not allowed (allowed: a whole number 1..1048576"),
        ("MEMORY = 0", "MEMORY = 0 is not allowed"),
        ("MEMORY = 2.5", "MEMORY = 2.5 is not allowed"),
    ],
)
def test_a_bot_file_constant_of_the_wrong_kind_is_one_error_naming_the_file_and_the_value(tmp_path, line, message):
    """A NAME that is no bot name was a 53-line TypeError traceback from the run's look-alike check, and
    `arena play` served it."""
    body = "".join(f"def {f}(view, params, memory, rng):\n    return 0\n" for f in FUNCS)
    p = write(tmp_path, "odd.py", f"{body}{line}\n")
    with pytest.raises(BotError) as err:
        load_bot_file(p)
    assert str(err.value).startswith(f"{p}: {message}") and "\n" not in str(err.value), err.value


def test_a_bot_numba_cannot_compile_takes_the_plain_path_and_says_why(tmp_path):
    body = """
        from bots.simple import take_upcard, draw, big_gin, knock
        from bots.simple import discard as _discard
        import collections

        def discard(view, params, memory, rng):
            counts = collections.Counter([1, 2])   # plain Python: numba can't compile this
            return _discard(view, params, memory, rng)
    """
    bot = load_bot_file(write(tmp_path, "pyonly.py", body))
    assert not bot.fast and "discard() does not compile with numba" in bot.plain_reason
    assert "Counter" in bot.plain_reason  # the informative line, not numba's pipeline header
    assert "\x1b" not in bot.plain_reason  # plain text for logs and pipes, not numba's terminal bold
    simple = load_bot("simple")
    plain = play_batch(bot, simple, R, np.arange(10))
    fast = play_batch(simple, simple, R, np.arange(10))
    assert np.array_equal(plain.games, fast.games)  # same rules, same results for the seed


def test_illegal_decision_raises_naming_the_bot_and_decision_when_forfeits_are_off(tmp_path):
    body = """
        from bots.simple import take_upcard, draw, big_gin, discard
        NAME = "stubborn"

        def knock(view, params, memory, rng):
            return 7
    """
    bot = load_bot_file(write(tmp_path, "stubborn.py", body))
    with pytest.raises(
        IllegalMoveError,
        match=r"bot 'stubborn' \(seat 1\) answer must be 0 \(no\) or 1 \(yes\) "
        r"in knock\(\) \(answered 7\)",
    ):
        play_batch(load_bot("simple"), bot, R, np.arange(5), forfeit=False)


def test_the_engine_kernel_is_compiled_once_for_every_pair_of_bots(tmp_path):
    """Every pair of fast bots, a user file among them, runs through the one compiled kernel.

    numba reports each compilation as a ``numba:compile`` event (loads from
    the on-disk cache are not compilations).  After one warm-up game, playing
    every pair must compile nothing: a kernel specialised per bot (numba's
    default for functions passed as arguments) would compile once per pair.
    """
    from numba.core import event

    from arena.engine.contract import BotType

    user = write(tmp_path, "mine.py", "from bots.simple import take_upcard, draw, big_gin, knock, discard\n")
    bots = [load_bot(n) for n in ("random", "simple", "early-knock", "gin-chasing", "discard-tracking")]
    bots.append(load_bot_file(user))
    assert all(b.fast for b in bots), [b.plain_reason for b in bots if not b.fast]
    play_batch(bots[0], bots[1], R, np.arange(2))  # compiles (or loads) the kernel once

    compiled: list[str] = []

    class Count(event.Listener):
        def on_start(self, ev):
            compiled.append(str(ev.data.get("dispatcher", "?")) if isinstance(ev.data, dict) else "?")

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Count()):
        for a in bots:
            for b in bots:
                rec = play_batch(a, b, R, np.arange(2))
                assert not rec.errors and (rec.games[:, G_HANDS] > 0).all()
    assert compiled == []
    (sig,) = play_games_kernel.signatures  # one signature, and bots enter it as the shared BotType
    assert sig[2] == BotType and sig[3] == BotType


def test_a_user_bot_can_call_a_built_in_bots_decisions_on_the_fast_path(tmp_path):
    body = '''
        """Simple, but never takes the upcard."""
        from bots.simple import draw, big_gin, discard, knock
        from bots.simple import take_upcard as simple_take_upcard

        def take_upcard(view, params, memory, rng):
            return 0 * simple_take_upcard(view, params, memory, rng)
    '''
    bot = load_bot_file(write(tmp_path, "reuse.py", body))
    assert bot.fast, bot.plain_reason
    rec = play_batch(bot, load_bot("simple"), R, np.arange(50), record_hands=True)
    from arena.engine.layout import H_UPCARD_TAKER

    assert not rec.errors and (rec.hands[:, H_UPCARD_TAKER] != 0).all()  # seat 0 never took it


def test_a_compiled_decision_that_returns_a_float_is_refused_at_load(tmp_path):
    """numba would cut 1.7 to 1 under the engine's int64 signature, without a word."""
    body = "".join(f"def {f}(view, params, memory, rng):\n    return 0\n" for f in FUNCS if f != "discard")
    p = write(tmp_path, "floaty.py", body + "def discard(view, params, memory, rng):\n    return 1.7\n")
    with pytest.raises(BotError, match=r"floaty.py: discard\(\) returns float64; a decision must return an integer"):
        load_bot_file(p)


def test_bool_and_int32_answers_are_converted_exactly(tmp_path):
    body = "import numpy as np\n"
    body += "def take_upcard(view, params, memory, rng):\n    return view[0] < 0\n"  # a bool: False
    body += "def draw(view, params, memory, rng):\n    return np.int32(0)\n"
    body += "".join(f"def {f}(view, params, memory, rng):\n    return 0\n" for f in ("big_gin", "knock"))
    body += "from bots.simple import discard\n"
    bot = load_bot_file(write(tmp_path, "narrow.py", body))
    assert bot.fast
    view = np.zeros(200, dtype=np.int64)
    args = (view, np.zeros(0), np.zeros(1), np.zeros(4, dtype=np.uint64))
    assert bot.functions[0](*args) == 0 and bot.functions[2](*args) == 0


def test_a_constant_answer_is_compiled_once_and_called_as_an_int64(tmp_path):
    """``return 1`` is typed Literal[int](1), an int64 in the machine code: no second compile."""
    body = "".join(f"def {f}(view, params, memory, rng):\n    return 1\n" for f in ("take_upcard", "big_gin", "knock"))
    body += "def draw(view, params, memory, rng):\n    return 0\n"
    body += "from bots.simple import discard\n"
    bot = load_bot_file(write(tmp_path, "constant.py", body))
    assert bot.fast, bot.plain_reason
    knock = bot.functions[5]
    assert len(knock.overloads) == 1 and str(knock.nopython_signatures[0].return_type) == "Literal[int](1)"
    rec = play_batch(bot, load_bot("simple"), R, np.arange(30), record_hands=True)
    from arena.engine.layout import H_UPCARD_TAKER

    # It takes every upcard it is offered first (seat 0 is the non-dealer every other hand), and a
    # game played through the constant answers ends normally.
    assert not rec.errors and (rec.games[:, G_HANDS] > 0).all()
    assert (rec.hands[:, H_UPCARD_TAKER] >= 0).all()


def test_sys_exit_at_import_is_one_bot_error_not_the_end_of_the_arena(tmp_path):
    p = write(tmp_path, "quitter.py", "import sys\nsys.exit(4)\n")
    with pytest.raises(BotError, match=r"quitter.py: not a bot: importing it called sys.exit\(4\)"):
        load_bot_file(p)


def test_a_built_in_with_inline_settings_loads_under_its_spec_and_round_trips():
    from arena.settings.botref import BotRef

    ref = BotRef.parse("early-knock:knock_at=5, gin_at=1.5")
    assert (ref.kind, ref.ref, ref.params) == ("builtin", "early_knock", (("knock_at", 5.0), ("gin_at", 1.5)))
    assert BotRef.parse(ref.spec()) == ref  # what `arena submit` stores parses back to the same bot
    exact = BotRef.parse("monte-carlo:work=1234567,gap=0.1")
    assert exact.spec() == "monte-carlo:work=1234567,gap=0.1" and BotRef.parse(exact.spec()) == exact
    plain, tuned = load_bot("early-knock"), load_bot("early-knock:knock_at=5")
    assert tuned.name == "early-knock:knock_at=5" != plain.name
    values = dict(zip(tuned.param_names, tuned.params))
    assert values["knock_at"] == 5.0 != dict(zip(plain.param_names, plain.params))["knock_at"]
    # The setting is played: on the same deals the two knock differently.
    seeds = np.arange(40, dtype=np.int64)
    simple = load_bot("simple")
    a = play_batch(plain, simple, R, seeds, record_hands=True)
    b = play_batch(tuned, simple, R, seeds, record_hands=True)
    assert not np.array_equal(a.games, b.games)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("monte-carlo:samples=lots", "parameter 'samples' = 'lots' is not a number"),
        ("monte-carlo:samples=nan", "parameter 'samples' = 'nan' is not a number"),
        ("early-knock:knock_at", "'knock_at' is not key=value"),
        ("early-knock:knock_at=5,knock_at=6", "parameter 'knock_at' is set twice"),
        ("early-knock:", "a built-in takes its parameters as NAME:key=value"),
        ("java:Player", "'Player' is not key=value"),
        ("early-knock:knock_att=5", "'early-knock' has no parameter 'knock_att'"),
        ("monte-carlo:samples=0", "samples = 0.0 must be between 1 and 4096"),
        ("simpel:x=1", "unknown bot 'simpel'"),
        # As an attacker would write them: names that reach into Python, values past any range.
        ("simple:__class__=1", "'simple' has no parameter '__class__'"),
        ("early-knock:knock_at=1e308", "knock_at"),
        ("early-knock:knock_at=5\nimport os", "holds a control character"),
        ("simpel\rsimple", "holds a control character"),
    ],
)
def test_a_bad_inline_setting_is_one_error_naming_it_before_the_bot_compiles(spec, message, monkeypatch):
    """A built-in's settings are checked against its module first: the search bots take half a minute to
    compile on a fresh install, a long wait for a typo."""
    import arena.botkit.bot as botkit

    def no_compile(*args, **kwargs):
        raise AssertionError(f"{spec!r} was compiled before its settings were checked")

    monkeypatch.setattr(botkit, "_compile_decision", no_compile)
    with pytest.raises(BotError) as err:
        load_bot(spec)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_variant_of_a_built_in_with_inline_settings_keeps_them_and_its_own_table_wins(tmp_path):
    from arena.loading.load import load_bots
    from arena.settings.config import config_from_dict

    cfg = config_from_dict(
        {
            "bots": ["simple", "k"],
            "variants": {"k": {"bot": "early-knock:knock_at=5,late_drop=3", "late_drop": 4}},
        }
    )
    k = load_bots(cfg, tmp_path)["k"]
    values = dict(zip(k.param_names, k.params))
    assert k.name == "k" and values["knock_at"] == 5.0 and values["late_drop"] == 4.0


def test_one_built_in_under_two_spellings_is_refused_but_a_named_copy_is_not(tmp_path):
    """``knock_at=5`` and ``knock_at=5.0`` (or a setting equal to the default) are one bot listed twice:
    its games against itself would measure nothing.  A variant under a name of its own is a deliberate
    copy (a bot against itself, to see the noise), so it still plays."""
    from arena.loading.load import load_bots
    from arena.settings.config import ConfigError, config_from_dict

    for bots in (
        ["simple", "early-knock:knock_at=5", "early-knock:knock_at=5.0"],
        ["simple", "early-knock:late_drop=3,knock_at=5", "early-knock:knock_at=5,late_drop=3"],
        ["simple", "early-knock", "early-knock:knock_at=10"],
    ):
        with pytest.raises(ConfigError, match="are the same built-in with the same settings"):
            load_bots(config_from_dict({"bots": bots}), tmp_path)
    ok = load_bots(config_from_dict({"bots": ["early-knock", "early-knock:knock_at=9"]}), tmp_path)
    assert sorted(ok) == ["early-knock", "early-knock:knock_at=9"]
    copy = load_bots(
        config_from_dict({"bots": ["early-knock", "copy"], "variants": {"copy": {"bot": "early-knock"}}}), tmp_path
    )
    assert copy["copy"].name == "copy" and np.array_equal(copy["copy"].params, copy["early-knock"].params)


def test_loading_a_bot_again_reuses_its_compiled_functions_and_keeps_memory_flat():
    """Every load compiled new dispatchers, whose machine code numba never frees: a quarter of a megabyte per
    load, for the life of the process (a league server loads its bots for every pairing)."""
    import gc

    from arena.loading.load import load_bot

    def rss_mb() -> float:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

    first = load_bot("gin-chasing")
    assert all(a is b for a, b in zip(first.functions, load_bot("gin-chasing").functions))
    gc.collect()
    before = rss_mb()
    for _ in range(100):
        load_bot("gin-chasing")
    gc.collect()
    assert rss_mb() - before < 8, "100 loads of one bot grew the process"  # about 27 MB before the fix


def test_a_built_ins_own_file_is_that_built_in_and_an_edited_copy_under_its_name_is_refused(tmp_path):
    """A bot named as a built-in read as that built-in in every table; but ``bots/simple.py`` itself, byte
    for byte, is the built-in, and its name is its own.  One changed byte makes it another bot."""
    from pathlib import Path

    import bots
    from arena.loading.load import load_bots
    from arena.settings.config import ConfigError, config_from_dict

    own = Path(bots.__file__).parent / "simple.py"
    ok = load_bots(config_from_dict({"bots": ["random", str(own)]}), tmp_path)
    assert ok[str(own)].name == "simple"
    edited = tmp_path / "simple.py"
    edited.write_text(own.read_text() + "\n# my change\n")
    with pytest.raises(ConfigError, match=r"is named 'simple', the name of the built-in bot 'simple'; rename it"):
        load_bots(config_from_dict({"bots": ["random", str(edited)]}), tmp_path)


def test_a_built_in_another_process_is_compiling_is_waited_for_then_loaded(tmp_path, monkeypatch):
    """numba has no lock between processes: on a cold cache, processes that start at once each compiled the same
    bot.  The cache's lock for a built-in makes the others wait for the one compiling (this test holds it as
    that process would), then load what it wrote."""
    import fcntl
    import threading

    from arena.botkit.bot import load_builtin
    from arena.engine import _jit

    monkeypatch.setattr(_jit, "lock_dir", lambda: tmp_path)
    load_builtin("random")  # compiled (or loaded) here, so the waiting below is the lock alone
    with open(_jit.lock_file("bots.random"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        loaded: list = []
        waiter = threading.Thread(target=lambda: loaded.append(load_builtin("random")), daemon=True)
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive() and not loaded, "loading did not wait for the lock"
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(30)
    assert len(loaded) == 1 and loaded[0].name == "random"
