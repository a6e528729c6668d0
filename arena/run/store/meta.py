"""Run metadata: the config and rules a folder was played by, its manifest, its secret seed, bot logs."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
from typing import TYPE_CHECKING, Any

from arena.run.store.files import TEXT_LIMIT, link_problem, linked_dirs, lock_problem, read_inside, sha256
from arena.run.store.format import SECRET, StoreError, env_error
from arena.settings.config import ConfigError, TournamentConfig, config_from_dict
from arena.settings.rules import Rules, RulesError, load_rules

if TYPE_CHECKING:
    from arena.run.store import RunStore


def _saved(store: RunStore, text: str) -> dict[str, Any]:
    """The keys of the folder's ``config.toml`` (its text ``text``); ConfigError when they are no run's config.

    A run saves every key, its bots among them.  A file that lost them (truncated to nothing, say) read
    as the defaults: fsck saw no problem, and ``arena submit`` played the defaults' games into the
    folder and saved them over it.
    """
    import tomllib

    d = tomllib.loads(text)
    if not isinstance(d.get("bots"), list):
        what = "is empty" if not d else "names no bots"
        raise ConfigError(f"{store.dir / 'config.toml'} {what}, so it is not the config of a run")
    return d


def config(store: RunStore) -> TournamentConfig:
    """The config of the latest run on the folder (``config.toml``), with its
    folder as ``results_dir``/``name`` so it continues this folder."""
    import tomllib

    text = store.read_text("config.toml")
    if text is None:
        raise StoreError(f"{store.dir}: not a run folder (no config.toml)")
    try:
        d = _saved(store, text)
    except tomllib.TOMLDecodeError as exc:
        raise StoreError(f"{store.dir / 'config.toml'}: not valid TOML: {exc}") from None
    except ConfigError as exc:
        raise StoreError(f"{exc}; restore it from a copy (the games are intact)") from None
    d.update(results_dir=str(store.dir.parent), name=store.dir.name)
    try:
        return config_from_dict(d, source=str(store.dir / "config.toml"))
    except ConfigError as exc:
        raise StoreError(str(exc)) from None


def _check(data: bytes) -> str:
    """The check a small file the games depend on is written with (``seed.secret``, ``rules.toml``)."""
    return "sha256:" + sha256(data)[:16]


#: The last line of a ``rules.toml`` the store wrote: the check of the text above it.
_RULES_CHECK = re.compile(rb"# check: (sha256:[0-9a-f]{16})\n\Z")


def checked_rules_toml(text: str) -> str:
    """``rules.toml``'s text with its check as a last comment line (still plain TOML for any reader)."""
    return f"{text}# check: {_check(text.encode())}\n"


def rules_problem(store: RunStore) -> str:
    """What is wrong with the folder's ``rules.toml`` ("" when it reads back whole, is absent, or predates
    its check line).

    The rules are in every matchup's id.  A digit changed in the file passed ``fsck``; a resume then said
    the games were "played under different rules" and blamed the command, and the report showed rules
    the games were not played by.  (``config.toml`` has no check: a person may edit the saved config, say
    to add a bot, and run it again.)
    """
    try:
        data = read_inside(store.dir, "rules.toml", TEXT_LIMIT)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{store.dir / 'rules.toml'} is unreadable ({exc.strerror})"
    check = _RULES_CHECK.search(data)
    if check is None:
        return ""  # written before the check (a damaged last line reads so too: the TOML is still checked)
    body = data[: check.start()]
    if check.group(1).decode() != _check(body):
        return f"{store.dir / 'rules.toml'} was changed since the run wrote it (its check does not match)"
    return ""


def rules(store: RunStore) -> Rules:
    """The resolved rules the folder's games were played by (``rules.toml``)."""
    if not (store.dir / "rules.toml").is_file():
        return config(store).resolved_rules()  # a folder from before rules.toml was kept
    if problem := rules_problem(store):
        raise StoreError(f"{problem}; restore it from a copy (the games are intact)")
    try:
        return load_rules(store.dir / "rules.toml")
    except RulesError as exc:
        raise StoreError(f"{store.dir}: {exc}") from None


def played_config(store: RunStore) -> TournamentConfig | None:
    """The config the folder's games were played by, its rules read from ``rules.toml``; None if it holds none.

    The rules are the folder's own copy, not the saved config's rules read
    again: a rules file the config names may have changed since.  A folder
    that holds games but lost its config.toml is refused: nothing would say
    what they were played by, and another seed or rules would start every
    matchup over under new ids, leaving the earlier games superseded in silence.
    """
    import tomllib

    text = store.read_text("config.toml")
    if text is None:
        if n_games := store.n_games():
            raise StoreError(
                f"{store.dir} holds {n_games} games but no config.toml, so nothing says what they were played by"
            )
        return None
    if problem := rules_problem(store):
        raise StoreError(problem)
    try:
        saved = _saved(store, text)
        if (store.dir / "rules.toml").is_file():
            saved["rules"] = str(store.dir / "rules.toml")
        return config_from_dict(saved, source=str(store.dir / "config.toml"))
    except (ConfigError, tomllib.TOMLDecodeError) as exc:
        raise StoreError(f"{store.dir}: its config.toml or rules.toml is unreadable ({exc})") from None


def problems(store: RunStore) -> list[str]:
    """One line per damaged file the games can't rebuild (config.toml, rules.toml, manifest.json) or linked folder.

    A chunk or an index line can be rebuilt or set aside by a repair; these
    can't (the games' ids depend on the config and rules), so each line says
    what to restore and what is at stake.
    """
    out = [link_problem(store.dir, name) for name in linked_dirs(store.dir)]
    if lock := lock_problem(store.dir):
        out.append(lock)
    try:
        played_config(store)
    except StoreError as exc:
        out.append(f"{exc}; restore it from a copy (the games are intact): a resume refuses the folder until then")
    if (seed := seed_problem(store)) and _secret(store):
        out.append(f"{seed}; a resume refuses the folder until then")
    held = store.n_games()  # a folder with games lost a file it had when it is missing
    if held and not os.path.lexists(store.dir / "rules.toml"):
        # Every run keeps the rules it played by; without them a replay reads the rules the saved config
        # names, a preset or a file that may say something else by now (an action then "does not fit").
        out.append(
            f"{store.dir} holds {held} games but no rules.toml, so nothing fixes the rules they were "
            "played by; restore it from a copy (the games are intact)"
        )
    if "(unreadable)" in manifest(store):
        out.append(
            f"{store.dir}: its manifest.json is not a JSON object; the report shows no versions or status "
            "until the next run on the folder writes it again"
        )
    elif held and not (store.dir / "manifest.json").exists():
        # A run writes its manifest before its first chunk, so games without one mean it was lost.
        out.append(
            f"{store.dir} holds {held} games but no manifest.json; the report shows no versions or status "
            "until the next run on the folder writes it again"
        )
    return out


def _secret(store: RunStore) -> bool:
    """Whether the folder's games were played with ``seed = "secret"`` (by its config, else its manifest)."""
    try:
        cfg = played_config(store)
    except StoreError:
        cfg = None
    return (cfg.seed if cfg is not None else manifest(store).get("seed")) == "secret"


#: Manifest fields whose value is data, kept whole: ``current`` maps each current matchup to
#: its SPRT limit, and a limit of None (every chunk counts) is what a repair must read back.
DATA_FIELDS = ("current",)


def without_empty(value: Any) -> Any:
    """``value`` with every field that says nothing (None, "", [], {}) left out, at any depth.

    Zeros and False stay: they say something.  :data:`DATA_FIELDS` are kept whole.
    """
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = v if k in DATA_FIELDS else without_empty(v)
            if k in DATA_FIELDS or not (v is None or v == "" or (isinstance(v, (list, tuple, dict)) and not v)):
                out[k] = v
        return out
    if isinstance(value, (list, tuple)):
        return [without_empty(v) for v in value]
    return value


def write_manifest(store: RunStore, manifest: dict[str, Any]) -> None:
    """Write ``manifest.json`` (atomically), listing only the fields that hold something."""
    store.write_text("manifest.json", json.dumps(without_empty(manifest), indent=2, default=str))


def manifest(store: RunStore) -> dict[str, Any]:
    try:
        text = store.read_text("manifest.json")
    except StoreError:  # a link or no regular file: named by problems() as any unreadable manifest
        text = ""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"(unreadable)": "manifest.json"}


def meta(store: RunStore) -> dict[str, Any]:
    """What a report shows beside the tables: name, config and rules text, manifest."""
    out: dict[str, Any] = {"name": store.dir.resolve().name}
    for key, fname in (("config", "config.toml"), ("rules", "rules.toml")):
        t = store.read_text(fname)
        if t is not None:
            out[key] = t
    m = manifest(store)
    if m:
        out["manifest"] = m
    return out


def seed_problem(store: RunStore) -> str:
    """What is wrong with the folder's ``seed.secret`` ("" when it reads back whole, or may be drawn).

    The seed is in every matchup's id: a lost file, or one truncated or with a digit changed,
    read as another seed, so the next run played every matchup again under new ids and left the
    stored games superseded in silence.  A seed is written with its check (``<seed> sha256:<hex>``)
    and read back only whole; a folder that holds games but lost its seed is refused.
    """
    p = store.dir / SECRET
    try:
        data = read_inside(store.dir, SECRET, 200)
    except FileNotFoundError:
        if store.index().chunks:
            return (
                f"{p} is missing, and the games stored in the folder were played by the secret seed it held; "
                "restore it from a copy (a new seed would play every matchup again under new ids)"
            )
        return ""
    except OSError as exc:
        return f"{p} is unreadable ({exc.strerror}); it holds the run's secret seed: restore it from a copy"
    text = data.decode("ascii", errors="replace")
    whole = re.fullmatch(r"(\d{1,30})(?: (sha256:[0-9a-f]{16}))?\n", text)
    if whole is None or (whole.group(2) is not None and whole.group(2) != _check(str(int(whole.group(1))).encode())):
        return f"{p} is damaged (truncated or changed); it holds the run's secret seed: restore it from a copy"
    return ""


def secret_seed(store: RunStore) -> int:
    """The folder's drawn seed for ``seed = "secret"`` (drawn on first use, then kept); StoreError when
    the file is damaged, or lost while the folder holds games (:func:`seed_problem`)."""
    problem = seed_problem(store)
    if problem:
        raise StoreError(problem)
    p = store.dir / SECRET
    if p.exists():
        return int(read_inside(store.dir, SECRET, 200).split()[0])
    store._writable()
    value = secrets.randbits(62)
    store._write_file(p, f"{value} {_check(str(value).encode())}\n".encode())
    os.chmod(p, 0o600)
    return value


#: Bytes of a log file's stem before it is cut and ended with a hash of the name (a file name holds 255).
_LOG_STEM_BYTES = 120


def log_stem(name: str) -> str:
    """The stem of ``logs/<stem>.log`` for a bot's name: one file per name, however alike two names are.

    Letters, digits, ``_`` and ``.`` stay, and so does a ``-`` with no ``-`` beside it and not at
    either end (``simple``, ``simple-py`` and ``mc_v2.1`` keep their files); every other character is
    written ``%XX``, its UTF-8 bytes, ``%`` itself included.  Replacing them all by ``_`` made ``a+b``
    and ``a_b`` write into one file.  No stem holds ``--`` (which joins two of them in
    :func:`stdout_log_stem`), and one past 120 bytes is cut and ended with ``~`` and a hash of the name
    (``~`` is escaped in every other).
    """
    out = []
    for i, ch in enumerate(name):
        if ch.isalnum() or ch in "_.":
            out.append(ch)
        elif ch == "-" and 0 < i < len(name) - 1 and name[i - 1] != "-" and name[i + 1] != "-":
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    stem = "".join(out)
    if len(stem.encode()) <= _LOG_STEM_BYTES:
        return stem
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    while len(stem.encode()) > _LOG_STEM_BYTES - 17:
        stem = stem[:-1]
    return f"{stem}~{digest}"


def stdout_log_stem(bot_a: str, bot_b: str) -> str:
    """The stem of the log of what in-process bots printed in a matchup's chunks: ``<a>--<b>.stdout``
    (each name as :func:`log_stem` writes it, so the pair is read back one way only)."""
    return f"{log_stem(bot_a)}--{log_stem(bot_b)}.stdout"


def append_log(store: RunStore, stem: str, text: str) -> None:
    """Add bot output to ``logs/<stem>.log`` (``stem`` from :func:`log_stem` or :func:`stdout_log_stem`)."""
    if not text:
        return
    store._writable()
    d = store.dir / "logs"
    try:
        d.mkdir(exist_ok=True)
    except OSError as exc:
        raise env_error(exc, f"create {d}") from None
    if d.is_symlink() or not d.is_dir():
        raise StoreError(f"{d}: not a plain folder; refusing to write bot logs through it")
    if "/" in stem or "\0" in stem:  # a stem holds no such character: a name given as it is, never a path
        raise ValueError(f"not a log file's stem: {stem[:80]!r}")
    safe = stem
    path = d / f"{safe}.log"
    # Never follow a link: the arena may run as root, and a log is named after a bot.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(f"{path}: is a symbolic link; refusing to write a bot's log through it") from None
        raise env_error(exc, f"write logs/{safe}.log") from None
    try:
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise env_error(exc, f"write logs/{safe}.log") from None
