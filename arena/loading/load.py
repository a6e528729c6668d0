"""Loading any bot from one :class:`~arena.settings.botref.BotRef`.

The one loader that the config, the worker, ``check-bot`` and the web call:
built-in modules and plain files load in this process
(:mod:`arena.botkit.bot`), and so do trained policies
(:mod:`arena.botkit.policy`); ``sandbox`` and ``command`` refs start their own
process through :mod:`arena.external`, with :func:`limits_for` as their
limits unless the caller gives others.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from arena.botkit.bot import (
    BUILTIN_BOTS,
    Bot,
    BotError,
    builtin_summary,
    check_builtin_settings,
    file_hash,
    is_data_builtin,
    load_bot_file,
    load_builtin,
)
from arena.external.eaai import use_kit
from arena.external.limits import Limits
from arena.settings.botref import BotRef, BotRefError, look_alike_key, name_problem, shown_name
from arena.settings.config import START_SECONDS, ConfigError, TournamentConfig


def limits_for(ref: BotRef, base: Limits | None = None) -> Limits:
    """``base`` (default: the defaults) with the start time of the ref's kind.

    A sandboxed file gets longer to start than a command: its host compiles
    the file with numba, cold, and may not save the cache.
    """
    base = base or Limits()
    start = START_SECONDS.get(ref.kind)
    return dataclasses.replace(base, start_s=start) if start is not None else base


def _builtin(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    return load_builtin(ref.ref)


def _file(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    return load_bot_file(ref.ref, name=name)


def _sandbox(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    from arena.external import sandboxed_bot

    return sandboxed_bot(ref.ref, limits or limits_for(ref), name=name)


def _command(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    from arena.external import external_bot

    return external_bot(name, ref.argv, ref.cwd, limits or limits_for(ref))


def _eaai(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    from arena.external.eaai import eaai_bot

    return eaai_bot(ref, limits or limits_for(ref), name=name)


def _policy(ref: BotRef, limits: Limits | None, name: str | None) -> Bot:
    from arena.botkit.policy import load_policy

    return load_policy(ref.ref, name=name)


#: One loader per kind of reference (:attr:`BotRef.kind`): ``(ref, limits, name) -> Bot``.
#: A new kind of reference is one function here and one entry in this table.
LOADERS: dict[str, Callable[[BotRef, Limits | None, str | None], Bot]] = {
    "builtin": _builtin,
    "file": _file,
    "sandbox": _sandbox,
    "eaai": _eaai,
    "policy": _policy,
    "command": _command,
}


def load(ref: BotRef, limits: Limits | None = None, name: str | None = None) -> Bot:
    """The bot ``ref`` names, under ``name`` (default: its own name), with its
    parameter overrides applied.  ``limits`` (default: :func:`limits_for` the
    ref) bind a bot in its own process.  Any failure is a one-line :class:`BotError`."""
    loader = LOADERS.get(ref.kind)
    if loader is None:
        raise BotError(f"bot '{ref.ref}': no loader for references of kind '{ref.kind}'")
    shown = name or (ref.display if ref.kind == "builtin" else None)
    if ref.kind == "builtin" and ref.params:
        check_builtin_settings(ref.ref, shown or ref.display, dict(ref.params))
    bot = loader(ref, limits, name)
    if ref.params:
        # A built-in with inline settings (early-knock:knock_at=5) is named with them, so it and
        # the plain built-in can play in one run.
        bot = bot.with_params(shown or bot.name, dict(ref.params))
    elif name is not None:
        bot = dataclasses.replace(bot, name=name)
    return dataclasses.replace(bot, ref=ref)


def same_builtin_twice(bots: Mapping[str, Bot]) -> tuple[str, str] | None:
    """Two specs among ``bots`` of one built-in that resolve to the same settings, or None.

    ``early-knock:knock_at=5`` and ``early-knock:knock_at=5.0``, or
    ``early-knock:knock_at=10`` beside the plain ``early-knock`` whose default
    that is, would play as two bots with identical games: a matchup that
    measures nothing and a table that reads as if it did.  (A config's
    variants are not passed: a variant has a name of its own, and a copy
    under another name is how a user measures the noise of a bot against
    itself.)
    """
    seen: dict[tuple[str, bytes], str] = {}
    for spec, bot in bots.items():
        if bot.ref is None or bot.ref.kind != "builtin":
            continue
        key = (bot.ref.ref, bot.params.tobytes())
        if key in seen:
            return seen[key], spec
        seen[key] = spec
    return None


def load_bot(spec: str, base_dir: Path | None = None) -> Bot:
    """A bot by spec (see :mod:`arena.settings.botref`), with the default limits."""
    try:
        ref = BotRef.parse(spec, base_dir)
    except BotRefError as exc:
        raise BotError(str(exc)) from None
    return load(ref)


def load_bots(config: TournamentConfig, base_dir: Path | None = None, *, skip: Collection[str] = ()) -> dict[str, Bot]:
    """Load every bot of a config (but the specs in ``skip``), keyed as listed there (variants resolved).

    A bot file's display name is its ``NAME`` or file stem; a variant's is
    the variant's name, and a built-in's with inline settings is the spec as
    written (``early-knock:knock_at=5``).  A bad bot or two bots with one name is a one-line
    :class:`ConfigError`.  The config's ``eaai_kit`` (relative to ``base_dir``) becomes the kit of
    this process and of the processes it starts (:func:`arena.external.eaai.use_kit`).
    """
    kit = config.kit_in(base_dir)
    if kit is not None:  # the config's kit, named before a kit player's adapter compiles against it
        try:
            use_kit(kit, "config: eaai_kit =")
        except BotError as exc:
            raise ConfigError(f"{exc} (--eaai-kit PATH names another)") from None
    limits = Limits(**config.bot_limits())
    for spec in config.all_bots():
        # A variant under a built-in's name played another bot labelled as that built-in in every table.
        # The built-in itself under its own name ({bot = "simple"} named simple: a league's house bot) is it.
        variant = config.variants.get(spec)
        key = spec.replace("-", "_")
        itself = variant is not None and set(variant) == {"bot"} and str(variant["bot"]).replace("-", "_") == key
        if variant is not None and key in BUILTIN_BOTS and not itself:
            raise ConfigError(
                f"config: variant {shown_name(spec)} takes the name of the built-in bot "
                f"'{spec.replace('_', '-')}'; give the variant a name of its own"
            )
    out: dict[str, Bot] = {}
    refs = config.bot_refs(base_dir)
    for spec, ref in refs.items():
        if spec in skip:
            continue
        try:
            named = spec in config.variants or bool(ref.params)  # a variant, or a built-in's inline settings
            out[spec] = load(ref, limits_for(ref, limits), name=spec if named else None)
        except BotError as exc:
            raise ConfigError(
                str(exc) if str(exc).startswith(("bot ", spec)) else f"bot {shown_name(spec)}: {exc}"
            ) from None
        _refuse_a_builtins_name(spec, ref, out[spec], config)
    if twice := same_builtin_twice({s: b for s, b in out.items() if s not in config.variants}):
        raise ConfigError(
            f"config: bots '{twice[0]}' and '{twice[1]}' are the same built-in with the same settings; list it once"
        )
    names = [b.name for b in out.values()]
    for n in names:
        if names.count(n) > 1:
            raise ConfigError(f"config: two bots are named {shown_name(n)}; {_rename_hint(n, out, config)}")
        if why := name_problem(n):
            raise ConfigError(f"config: the bot name {shown_name(n)} {why}; rename it (NAME = ... or a variant)")
    keys: dict[str, str] = {}
    for n in names:
        other = keys.setdefault(look_alike_key(n), n)
        if other != n:
            raise ConfigError(
                f"config: the bots {shown_name(other)} and {shown_name(n)} read alike in a table (case or "
                "look-alike letters of another script); rename one (NAME = ... in its file, or a variant)"
            )
    return out


def listed_bots(config: TournamentConfig, base_dir: Path | None = None) -> list[tuple[str, str, str, dict[str, float]]]:
    """What ``arena bots --config`` lists beside the built-ins: (name, how it runs, what, parameters) of each
    of the config's variants (played or not), built-ins with inline settings, files and programs.

    A built-in's variant is read from its module and its settings checked there, uncompiled: listing the
    shipped monte-carlo config compiled the search bot, 28 s on a fresh install, to print its settings.
    The rest are loaded (a file's name and parameters are its module's; a program says them in its
    handshake).
    """
    unplayed = tuple(v for v in config.variants if v not in config.all_bots())
    if unplayed:
        config = config.replace(bots=config.bots + unplayed)
    refs = config.bot_refs(base_dir)
    uncompiled = {s for s, r in refs.items() if r.kind == "builtin" and not is_data_builtin(r.ref)}
    loaded = load_bots(config, base_dir, skip=uncompiled)
    rows = []
    for spec, ref in refs.items():
        variant = config.variants.get(spec)
        if spec in uncompiled:
            if variant is None and not ref.params:
                continue  # a built-in as it is: in the built-ins' list
            try:
                check_builtin_settings(ref.ref, spec, dict(ref.params))
            except BotError as exc:
                raise ConfigError(
                    str(exc) if str(exc).startswith("bot ") else f"bot {shown_name(spec)}: {exc}"
                ) from None
            _, how, description, params = builtin_summary(ref.ref)
            name, source = spec, f"bots.{ref.ref.replace('-', '_')}"
            params.update((k, float(v)) for k, v in ref.params)
        elif variant is not None or spec.replace("-", "_") not in BUILTIN_BOTS:  # a file, a program, a sandbox
            b = loaded[spec]
            name, how, description, source, params = b.name, b.path, b.description, b.source, b.param_dict()
        else:
            continue
        if variant is None:
            what = f"{description} ({source})"
        elif "bot" in variant:
            what = f"variant of {variant['bot']}"
        else:
            what = f"external program: {' '.join(variant['command'])}"
        rows.append((name, how, what, params))
    return rows


def check_unplayed_variants(config: TournamentConfig, base_dir: Path | None = None) -> None:
    """Check the variants a config defines but does not play, as far as can be done without loading them.

    Such a variant waits for a ``--gauntlet`` or a later run; a typo in it (``bot = "simpel"``,
    ``knock_att = 5``, a file that is not there) was silent until that day, far from the edit.  A
    built-in's name and settings are checked from its module, uncompiled; a file's existence is
    checked; a program is not started.  A problem is a one-line :class:`ConfigError` naming the variant.
    """
    played = set(config.all_bots())
    unplayed = [v for v in config.variants if v not in played]
    for spec, ref in config.bot_refs(base_dir, unplayed).items():
        where = f"variant {shown_name(spec)} (not played)"
        if ref.kind == "builtin":
            try:
                check_builtin_settings(ref.ref, spec, dict(ref.params))
            except BotError as exc:  # a settings error names the variant already
                said = str(exc)
                raise ConfigError(
                    f"{said}, in a variant not played" if said.startswith("bot ") else f"{where}: {said}"
                ) from None
        elif ref.kind != "command":
            path = ref.player[0] if ref.kind == "eaai" else ref.ref
            if not Path(path).exists():
                raise ConfigError(f"{where}: no such file or folder: {path}")


#: The built-in bots by the form their names share with look-alikes (:func:`look_alike_key`, and ``_`` read
#: as ``-``: a built-in answers to ``gin_chasing`` too, and a copy of ``bots/gin_chasing.py`` is named so).
_BUILTIN_LOOKS = {look_alike_key(b).replace("_", "-"): b.replace("_", "-") for b in BUILTIN_BOTS}


def _builtin_file_hash(builtin: str) -> str:
    """The source hash a bot file has when it is the built-in ``builtin``'s own file, ``bots/<key>.py``."""
    import bots

    return file_hash(Path(bots.__file__).parent / f"{builtin.replace('-', '_')}.py")


def _refuse_a_builtins_name(spec: str, ref: BotRef, bot: Bot, config: TournamentConfig) -> None:
    """A bot that is not the built-in it is named (or looks named) after is refused: a file ``simple.py``,
    a ``NAME = "monte-carlo"``, a program whose hello says ``Simple``, shown in every table and report as
    the built-in, whose results people know.  A run without that built-in never saw two rows to tell apart.
    The built-in itself, bare, as a variant of its own name, or as its own file (``bots/simple.py``,
    byte for byte), is it."""
    name = bot.name
    builtin = _BUILTIN_LOOKS.get(look_alike_key(name).replace("_", "-"))
    if builtin is None or (ref.kind == "builtin" and ref.ref.replace("_", "-") == builtin == name):
        return
    if ref.kind in ("file", "sandbox") and not ref.params and bot.source_hash == _builtin_file_hash(builtin):
        return
    if spec in config.variants:
        how = "give the variant a name of its own"
    elif ref.kind in ("command", "eaai"):  # named by its handshake, which the config can't change
        how = f"name it with a variant, e.g. [variants] my-{builtin} = {{ bot = {json.dumps(spec)} }}"
    else:
        how = "rename it (NAME = ... in its file, or a variant)"
    raise ConfigError(
        f"bot {shown_name(spec)} is named {shown_name(name)}, the name of the built-in bot '{builtin}'; {how}"
    )


def _rename_hint(name: str, bots: dict[str, Bot], config: TournamentConfig) -> str:
    """How to tell apart two bots named ``name``: a program (``cmd:``, ``eaai:``) takes its name from
    its handshake, which the config cannot change, so it can only be named by a variant."""
    listed = [s for s, b in bots.items() if b.name == name and s not in config.variants]
    program = next((s for s in listed if getattr(bots[s].ref, "kind", None) in ("command", "eaai")), None)
    if program is None:
        return "rename one (NAME = ... in its file, or a variant)"
    return (
        f"name one with a variant, e.g. [variants] {name}-2 = {{ bot = {json.dumps(program)} }}, "
        f"and list '{name}-2' in bots instead"
    )
