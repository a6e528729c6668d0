"""What a bot is, and how one is loaded from a module or a file.

A bot is a Python module (a built-in one in ``bots/`` or any ``.py`` file)
with five decision functions, each called with the same four arguments::

    take_upcard(view, params, memory, rng) -> 1 take / 0 pass
    draw(view, params, memory, rng)        -> 1 discard pile / 0 stock
    big_gin(view, params, memory, rng)     -> 1 declare / 0 play on
    discard(view, params, memory, rng)     -> card number 0..51
    knock(view, params, memory, rng)       -> 1 knock / 0 play on

``view`` (int64 array) is all the player sees, laid out by the ``V_*`` names
of :mod:`arena.engine.layout`; ``params`` (float64) holds the bot's ``PARAMS`` in
their order; ``memory`` (float64, ``MEMORY`` slots, zeroed at each game
start) is the bot's own state across turns and hands; ``rng`` is its own
seeded generator for :func:`arena.engine.rng.rand_below` and friends.

Fast path: the loader compiles the five functions with numba for that one
signature, and the compiled engine calls them through first-class function
pointers, so a new bot never recompiles the engine.  Plain path: a module
that sets ``PLAIN = True`` (or whose functions numba cannot compile) is
called from a Python loop that applies the same engine kernels, so the rules
and the results for a seed are identical, only slower.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numba import types
from numba.core.errors import NumbaError, NumbaExperimentalFeatureWarning

from arena.engine._jit import compile_lock, jit
from arena.engine.contract import BOT_SIGNATURE, DECISIONS, DEFAULT_MEMORY, MAX_MEMORY, PHASE_FUNCTION
from arena.settings.botref import BINARY_POLICY_SUFFIXES, BotRef, name_problem, shown_name

warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)


BUILTIN_BOTS = (
    "random",
    "simple",
    "discard_tracking",
    "early_knock",
    "gin_chasing",
    "learned",
    "marjj_style",
    "monte_carlo",
    "analyzer",
)


class BotError(ValueError):
    """A module or file that is not a usable bot; the message names it and why."""


@dataclass(frozen=True)
class Bot:
    """A loaded bot: its decision functions, parameters and identity."""

    name: str
    description: str
    functions: tuple[Callable[..., int], ...]  # in PH_* order (6 entries)
    params: np.ndarray
    param_names: tuple[str, ...]
    memory_size: int
    fast: bool
    source: str  # module name or file path
    source_hash: str
    plain_reason: str = ""
    module: ModuleType | None = field(default=None, repr=False, compare=False)
    #: What the bot was loaded from (set by the loaders; None for a bot built from source text).
    ref: BotRef | None = field(default=None, compare=False)
    #: A trained policy's batched decision ``act(obs, mask, rng)``, when the bot is one
    #: (:mod:`arena.botkit.policy`); the engine then plays it in lockstep batches.
    batch_act: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    #: For a batched bot with a time per game (an external program): what charges each game its share
    #: of the batches' time (:class:`arena.engine.lockstep.GameClock`).
    batch_clock: Any = field(default=None, compare=False, repr=False)
    #: What the bot's compiled code reads but does not own (a policy's weights), kept alive with it.
    keep: Any = field(default=None, compare=False, repr=False)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A copied or unpickled bot (``copy.deepcopy``, pickle, a spawned worker) whose params name what it
        keeps by address (an MLP's weights) names its own copy: the original's address is another array's
        memory, freed with it, or nothing in another process."""
        self.__dict__.update(state)
        repoint = getattr(self.keep, "repoint", None)
        if repoint is not None:
            repoint(self.params)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle a bot that is code as how it was loaded, and unpickle it by loading it so again.

        A module cannot be pickled, so an env whose opponent was a built-in or a bot file could not be
        pickled (nor sent to a spawned worker).  Such a bot pickles as its reference, its name and
        parameters, and a bot file's text (the file may be gone where it is unpickled), and loads back
        compiled as it was, in any process.  A bot that is data (a policy's weights) has no module and
        pickles as it is; any other bot (built by hand from source text, a policy module) has nothing to
        be loaded again from here, and is refused with one line."""
        if self.module is None:
            return super().__reduce_ex__(protocol)
        ref = self.ref
        if ref is None or ref.kind not in ("builtin", "file"):
            raise TypeError(
                f"bot '{self.name}' cannot be pickled: only a built-in bot or a bot file loads again from what a "
                "pickle holds (load it with arena.load_bot, from a built-in name or a bot file)"
            )
        text = None
        if ref.kind == "file":
            text = read_bot_file(getattr(self.module, "__file__", None) or ref.ref)  # the cached copy it ran
        return _unpickled_bot, (ref, text, self.name, self.param_dict(), self.fast, self.source_hash)

    def __copy__(self) -> Bot:
        """A shallow copy sharing everything (``copy.copy`` would otherwise load the bot again)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def __deepcopy__(self, memo: dict[int, Any]) -> Bot:
        """A deep copy that shares the bot's module, as ``copy`` shares functions and classes (a module
        cannot be copied: an env holding a bot file's bot could not be deep-copied at all)."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        state = {k: v if k == "module" else copy.deepcopy(v, memo) for k, v in self.__dict__.items()}
        clone.__setstate__(state)
        return clone

    def param_dict(self) -> dict[str, float]:
        """The parameters by name, in their order."""
        return dict(zip(self.param_names, self.params.tolist()))

    @property
    def path(self) -> str:
        return "fast (numba)" if self.fast else "plain (Python)"

    def with_params(self, name: str, overrides: dict[str, Any]) -> Bot:
        """A variant of this bot under another name with some parameters changed.

        The new params are a copy of this bot's with the named slots changed,
        not rebuilt from ``param_names``: a policy's params (an MLP's layer
        widths and where its weights are) have no names, and a bot rebuilt
        without them forfeited every game.
        """
        params = _overridden(self.params, self.param_names, self.module, self.name, name, overrides)
        return dataclasses.replace(self, name=name, params=params)


def _unpickled_bot(
    ref: BotRef, text: str | None, name: str, params: dict[str, float], fast: bool, source_hash: str
) -> Bot:
    """A pickled bot loaded again (:meth:`Bot.__reduce_ex__`): a built-in by its key, a bot file from its
    text; with the name, parameters and reference it had, and on its path (``as_plain``)."""
    base = load_builtin(ref.ref) if text is None else load_bot_source(text, name=name, source=ref.ref)
    bot = base.with_params(name, params) if params != base.param_dict() else dataclasses.replace(base, name=name)
    bot = dataclasses.replace(bot, ref=ref, source_hash=source_hash)
    return as_plain(bot) if bot.fast and not fast else bot


def _overridden(
    params: np.ndarray,
    param_names: tuple[str, ...],
    module: ModuleType | None,
    bot: str,
    name: str,
    overrides: dict[str, Any],
) -> np.ndarray:
    """A copy of ``params`` with ``overrides`` applied, checked by name, type and the module's
    ``validate_params``: a bad setting is a one-line :class:`BotError` naming ``name``."""
    params = params.copy()
    for key, value in overrides.items():
        if key not in param_names:
            known = ", ".join(param_names) or "none"
            raise BotError(f"bot '{name}': '{bot}' has no parameter '{key}' (its parameters: {known})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BotError(f"bot '{name}': parameter '{key}' = {value!r} must be a number")
        params[param_names.index(key)] = float(value)
    validate = getattr(module, "validate_params", None)
    if validate is not None:
        try:
            validate(dict(zip(param_names, params.tolist())))
        except ValueError as exc:
            raise BotError(f"bot '{name}': {exc}") from None
    return params


def check_builtin_settings(key: str, name: str, overrides: dict[str, Any]) -> None:
    """Refuse a built-in's bad inline settings (``monte-carlo:samples=0``) from its module, before it is
    compiled: on a fresh install the search bots take half a minute to compile, a long wait for a typo.
    :meth:`Bot.with_params` applies the same check to the loaded bot.  A built-in that is data
    (``make_bot``) is left to that check."""
    module = _builtin_module(key.replace("-", "_"))
    if hasattr(module, "make_bot"):
        return
    shown, _, _, params = builtin_summary(key)
    _overridden(np.array(list(params.values()), dtype=np.float64), tuple(params), module, shown, name, overrides)


def as_plain(bot: Bot) -> Bot:
    """The same bot on the plain Python path (for tests and speed comparisons).

    Its functions are the original Python functions; the helpers they call
    stay compiled, exactly as for a plain bot that uses the arena's kernels.
    """
    functions = tuple(getattr(f, "py_func", f) for f in bot.functions)
    return dataclasses.replace(bot, functions=functions, fast=False, plain_reason="converted with as_plain()")


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def _description(module: ModuleType) -> str:
    """What a bot module says it is: its docstring's first line."""
    return _first_line(module.__doc__) or "(no description)"


#: A terminal's colour and style codes, which numba puts in its messages (bold names) when it thinks it has one.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _numba_reason(exc: Exception) -> str:
    """The informative line of a numba compile error (not its 'Failed in ... pipeline' header), as plain
    text: it goes to logs, report files and pipes."""
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Failed in", "During:", "File ", "<source", "^"))]
    return (useful or lines or ["unknown error"])[0]


def bot_from_module(module: ModuleType, name: str | None = None, source: str | None = None) -> Bot:
    """Check a module against the bot contract and compile its functions."""
    source = source or module.__name__
    if hasattr(module, "NAME"):
        # The name of every table row and log file: a NAME = 5 or ["a"] was a TypeError traceback from
        # the run's look-alike check (and `arena play` served it); the rules are those of any bot name.
        own = module.NAME
        why = "is not text" if not isinstance(own, str) else name_problem(own)
        if why:
            raise BotError(f"{source}: NAME = {own!r} is not allowed: it {why} (NAME names the bot in every table)")
    label = name or getattr(module, "NAME", None) or source
    missing = [f for f in DECISIONS if not callable(getattr(module, f, None))]
    if len(missing) == len(DECISIONS) and callable(getattr(module, "act", None)):
        raise BotError(
            f"{source}: not a bot but a policy module (it defines act() and no decision functions): "
            f"write policy:{source}"
        )
    if missing:
        raise BotError(
            f"{source}: not a bot: missing function(s) {', '.join(missing)} "
            f"(a bot defines {', '.join(DECISIONS)}; see bots/TEMPLATE.py)"
        )
    raw = {f: getattr(module, f) for f in DECISIONS}
    for fname, fn in raw.items():
        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "py_func", None), "__code__", None)
        if code is not None and code.co_argcount != 4:
            raise BotError(
                f"{source}: {fname}() takes {code.co_argcount} argument(s); "
                "every decision function takes (view, params, memory, rng)"
            )
    params_spec = getattr(module, "PARAMS", {}) or {}
    if not isinstance(params_spec, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in params_spec.values()
    ):
        raise BotError(f"{source}: PARAMS must be a dict of name -> number")
    memory = getattr(module, "MEMORY", DEFAULT_MEMORY)
    if isinstance(memory, bool) or not isinstance(memory, int) or not 1 <= memory <= MAX_MEMORY:
        raise BotError(
            f"{source}: MEMORY = {memory!r} is not allowed (allowed: a whole number 1..{MAX_MEMORY}, "
            "the float64 slots of state a game keeps)"
        )
    fast = not getattr(module, "PLAIN", False)
    reason = "the module sets PLAIN = True" if not fast else ""
    compiled: dict[str, Callable[..., int]] = {}
    if fast:
        for fname, fn in raw.items():
            py = getattr(fn, "py_func", fn)
            try:
                try:
                    compiled[fname] = _compile_decision(py, fname, source, cache=True)
                except ImportError:
                    # numba's cache entry for this file was written when the file was
                    # imported under another module name (say, `import my_bot` while
                    # debugging); loading it imports that name and fails.  Compile afresh.
                    compiled[fname] = _compile_decision(py, fname, source, cache=False)
            except NumbaError as exc:
                fast = False
                reason = f"{fname}() does not compile with numba: {_numba_reason(exc)}"
                break
    chosen = compiled if fast else {f: getattr(fn, "py_func", fn) for f, fn in raw.items()}
    functions = tuple(chosen[PHASE_FUNCTION[ph]] for ph in sorted(PHASE_FUNCTION))
    file = getattr(module, "__file__", None)
    digest = file_hash(Path(file)) if file else ""
    return Bot(
        name=label,
        description=_description(module),
        functions=functions,
        params=np.array([float(v) for v in params_spec.values()], dtype=np.float64),
        param_names=tuple(params_spec),
        memory_size=memory,
        fast=fast,
        source=source,
        source_hash=digest,
        plain_reason=reason,
        module=module,
    )


#: Each decision function's compiled form, by the Python function (and whether numba's disk cache was used):
#: a bot loaded again (a league's every pairing, a server's every game) reuses it.  A new dispatcher per load
#: loaded the machine code anew each time, and numba never frees it: a quarter of a megabyte per load of a
#: bot, for as long as the process lives.
_COMPILED: weakref.WeakKeyDictionary[Callable[..., Any], dict[bool, Callable[..., int]]] = weakref.WeakKeyDictionary()


def _compile_decision(py: Callable[..., Any], fname: str, source: str, cache: bool) -> Callable[..., int]:
    """One decision function compiled for the engine's signature, once per Python function (:data:`_COMPILED`).

    It is compiled for the argument types, so numba infers what it returns:
    a float answer (1.7, 0.2) would be cut to an int without a word by the
    engine's int64 signature, so it is refused.  An int64 answer is already
    the engine's signature, and so is a constant one (``return 1``, typed
    ``Literal[int](1)``: an int64 in the machine code, and what the engine
    looks up is the argument types), so that compilation is the decision.
    Another integer or a bool (int32, uint64, True: other machine types) is
    compiled once more with the signature, which converts it exactly.
    """
    done = _COMPILED.setdefault(py, {})
    if cache in done:
        return done[cache]
    inferred = jit(BOT_SIGNATURE.args, cache=cache)(py)
    ret = inferred.nopython_signatures[0].return_type
    if not isinstance(ret, (types.Integer, types.Boolean)):
        raise BotError(f"{source}: {fname}() returns {ret}; a decision must return an integer (0/1 or a card number)")
    done[cache] = inferred if types.unliteral(ret) == types.int64 else jit(BOT_SIGNATURE, cache=cache)(py)
    return done[cache]


def bot_cache_dir() -> Path:
    """Where bot files are kept by content hash (``~/.cache/gin-arena/bots``)."""
    import os

    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gin-arena" / "bots"


def text_hash(text: str) -> str:
    """A bot file's text's hash (16 hex digits): it names the text's kept copy, the module imported from it
    and numba's cache folder of its code, and it is a sandboxed file's ``source_hash``."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_bot_file(text: str) -> Path:
    """The copy of a bot's source kept under its hash (written on first use)."""
    import os

    digest = text_hash(text)
    folder = bot_cache_dir() / digest
    path = folder / f"arena_bot_{digest}.py"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return path  # kept already: nothing to write (the sandbox host, which may not even try, ends here)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".arena_bot_{digest}.{os.getpid()}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _import_failure(exc: BaseException, path: Path) -> str:
    """What went wrong importing a bot file, with its line in the user's file.

    The file is imported from its cached copy (``arena_bot_<hash>.py``), whose
    name means nothing to the user, so the message gives only the line number:
    the copy is the file's text, line for line.
    """
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f"{type(exc).__name__}: {exc}" + (f" (line {lines[-1]})" if lines else "")


def import_source(text: str, source: str, prefix: str = "arena_bot") -> ModuleType:
    """Import Python source text as module ``<prefix>_<hash>``, from a copy kept under its hash.

    The text is written once to :func:`bot_cache_dir` under a name made from
    its hash and imported from there, so (1) numba caches its functions
    against that copy: a bot file also imported under another name (``import
    my_bot`` while debugging, or a built-in bot file given by path) can't
    leave a cache entry that names a module this process doesn't have;
    (2) the module name can't clash with a plain ``import`` of the file;
    (3) two versions of a file never mix; and (4) a worker on another
    machine loads exactly what the driver loaded, from the text alone.
    Any failure is a one-line :class:`BotError` naming ``source``.
    """
    mod_name = f"{prefix}_{text_hash(text)}"
    module = sys.modules.get(mod_name)
    if module is not None:
        return module
    try:
        path = cached_bot_file(text)
    except OSError as exc:
        raise BotError(f"{source}: cannot write the bot cache {bot_cache_dir()}: {exc.strerror or exc}") from None
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise BotError(f"{source}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # any import-time failure is the file's fault
        del sys.modules[mod_name]
        if isinstance(exc, SystemExit):
            raise BotError(f"{source}: not a bot: importing it called sys.exit({exc.code!r})") from None
        raise BotError(f"{source}: not a bot: importing it failed: {_import_failure(exc, path)}") from None
    return module


def load_bot_source(text: str, *, name: str | None, source: str) -> Bot:
    """Load a bot from its source text, as module ``arena_bot_<hash>`` (:func:`import_source`)."""
    module = import_source(text, source)
    stem = Path(source).stem
    return bot_from_module(module, name=name or getattr(module, "NAME", None) or stem, source=source)


def read_bot_file(path: str | Path) -> str:
    """A bot file's text, or a one-line :class:`BotError` naming the file."""
    p = Path(path)
    if p.is_dir():
        raise BotError(f"{path}: a folder, not a bot file (give the .py file inside it)")
    if not p.is_file():
        raise BotError(f"{path}: no such bot file")
    if p.suffix.lower() in BINARY_POLICY_SUFFIXES:
        raise BotError(f"{path}: a policy file, not a bot file: write policy:{path}")
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BotError(f"{path}: cannot read it: {exc}") from None


def load_bot_file(path: str | Path, name: str | None = None) -> Bot:
    """Load a bot from a ``.py`` file anywhere on disk (through :func:`load_bot_source`)."""
    bot = load_bot_source(read_bot_file(path), name=name, source=str(path))
    return dataclasses.replace(bot, ref=BotRef("file", str(path)))


def file_hash(path: Path) -> str:
    """A bot file's ``source_hash``: the first 16 hex digits of its bytes' sha256."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _builtin_module(key: str) -> ModuleType:
    """A built-in bot's module, ``bots.<key>`` (``key`` with underscores), or a one-line :class:`BotError`."""
    if key not in BUILTIN_BOTS:
        hint = ""
        if Path(key).suffix.lower() in BINARY_POLICY_SUFFIXES:  # w.npz: a policy file named without its prefix
            here = [f for f in dict.fromkeys((key, key.replace("_", "-"))) if Path(f).is_file()]
            hint = f"; a policy file is written policy:{here[0] if here else 'FILE'}"
        raise BotError(
            f"unknown bot {shown_name(key.replace('_', '-'))} (built-in bots: "
            f"{', '.join(b.replace('_', '-') for b in BUILTIN_BOTS)}; or give a path to a .py file){hint}"
        )
    try:
        return importlib.import_module(f"bots.{key}")
    except Exception as exc:
        raise BotError(
            f"built-in bot '{key.replace('_', '-')}' failed to import: {type(exc).__name__}: {exc}"
        ) from None


def builtin_summary(key: str) -> tuple[str, str, str, dict[str, float]]:
    """(name, how it runs, description, parameters) of a built-in bot, read from its module without compiling
    it: what ``arena bots`` lists.  Loading a bot compiles its decision functions; for the built-ins together
    that took 44 s on a cold numba cache (a fresh install), the search bots most of it, only to print their
    names.  A built-in that is data (``make_bot``: the learned policy) has no named parameters."""
    key = key.replace("-", "_")
    module = _builtin_module(key)
    params = {} if hasattr(module, "make_bot") else dict(getattr(module, "PARAMS", {}) or {})
    how = "plain (Python)" if getattr(module, "PLAIN", False) else "fast (numba)"
    description = _description(module)
    return key.replace("_", "-"), how, description, {k: float(v) for k, v in params.items()}


def is_data_builtin(key: str) -> bool:
    """Whether a built-in is data, not code (``make_bot``: the learned policy's weights), so nothing to compile."""
    return hasattr(_builtin_module(key.replace("-", "_")), "make_bot")


def load_builtin(key: str) -> Bot:
    """A built-in bot by its module key (``simple``, ``early_knock``; dashes allowed)."""
    key = key.replace("-", "_")
    module = _builtin_module(key)
    make_bot = getattr(module, "make_bot", None)
    if make_bot is not None:  # a built-in that is data, not code (the learned policy's weights)
        bot = dataclasses.replace(make_bot(), description=_description(module))
    else:
        with compile_lock(f"bots.{key}"):  # another process compiling it: wait, then load its cache
            bot = bot_from_module(module, name=key.replace("_", "-"), source=f"bots.{key}")
    return dataclasses.replace(bot, name=key.replace("_", "-"), ref=BotRef("builtin", key))
