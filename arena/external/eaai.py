"""Players of the EAAI Gin Rummy kit as bots: ``eaai:player.jar:com.example.MyPlayer``.

Students of Todd Neller's EAAI kit write a Java class implementing the kit's
``ginrummy.GinRummyPlayer``.  Such a class plays here as it is: the arena's own
adapter (``eaai_java/EaaiAdapter.java``, compiled once per kit with the JDK on
the machine) speaks the external protocol (``docs/PROTOCOL.md``) and calls the
player's methods in the kit's order.  It runs as a walled ``cmd:`` program, so
it gets the same limits, logs and error reasons as any external bot.

The kit itself is not part of Gin Arena (its repository carries no licence):
the user names its jar or class folder once: with ``--eaai-kit PATH``, with a
tournament config's ``eaai_kit`` key (a league's, for a league), or with the
environment variable ``GIN_ARENA_EAAI_KIT``.  The option wins over the key, the
key over the variable; whichever names it sets the variable (:func:`use_kit`),
so the workers of a run inherit it.  Everything here fails with one line
naming what is missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from arena.external.limits import Limits
from arena.settings.botref import BotRef

#: The environment variable that names the kit's jar or class folder.
KIT_ENV = "GIN_ARENA_EAAI_KIT"
ADAPTER_SOURCE = Path(__file__).resolve().parent / "eaai_java" / "EaaiAdapter.java"
ADAPTER_CLASS = "ginarena.EaaiAdapter"
#: The adapter's Java agent: it rewrites the player's classes as they load, so that the Randoms
#: they make are seeded from the game's seed (``EaaiAdapter.Rewriter``).  A jar holding only a
#: manifest: the class itself is loaded from the adapter's folder on the class path.
AGENT_JAR = "seeding-agent.jar"
AGENT_CLASS = "ginarena.EaaiAdapter$Rewriter"
#: The kit's classes the adapter compiles against.
_KIT_CLASSES = ("ginrummy/GinRummyPlayer.class", "ginrummy/Card.class")
#: The JVM's options (its heap is :func:`heap_option`'s): room within the bot's address-space limit,
#: and the two packages whose generators (Math.random, Collections.shuffle) the adapter seeds per game.
JAVA_OPTIONS = (
    "-Xss4m",
    "-XX:+UseSerialGC",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:ReservedCodeCacheSize=64m",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
)


#: The smallest heap, the one under the default memory limit (2048 MiB of address space).
HEAP_MB = 256
#: What a JVM keeps of the address-space limit outside its heap: its code, classes, and the stacks
#: and malloc arenas of its threads, which grow with a player's threads (one JVM takes a heap of
#: 1536 MiB under 2048 MiB, but not with a pool of threads); the default limit leaves HEAP_MB.
OUTSIDE_HEAP_MB = 1792


#: The least ``memory_mb`` a kit player is started under.  Below it the adapter's VM fails to start in
#: erratic ways: on this project's 2-core machine 512, 640, 896 and 1024 MiB failed (as "garbled" or
#: non-JSON handshakes) and 768 and 1088 to 2112 MiB (in steps of 64) started; a VM's malloc arenas
#: grow with the cores, so the floor keeps a margin above 1088.
MIN_MEMORY_MB = 1280


def heap_option(limits: Limits | None) -> list[str]:
    """The JVM's heap for the bot's limits: what ``memory_mb`` leaves beside the JVM's own reservations,
    at least :data:`HEAP_MB`, so that raising ``memory_mb`` gives a player that needs more its heap;
    with no memory limit (0), the JVM's own default (a quarter of the machine's memory)."""
    memory = (limits or Limits()).memory_mb
    return [f"-Xmx{max(HEAP_MB, memory - OUTSIDE_HEAP_MB)}m"] if memory > 0 else []


def _error(text: str) -> Exception:
    from arena.botkit.bot import BotError

    return BotError(text)


def use_kit(path: Path, named_by: str) -> None:
    """Name ``path`` as the kit to this process and the processes it starts (``GIN_ARENA_EAAI_KIT``).

    ``named_by`` is how the user gave it (``--eaai-kit``, ``eaai_kit = ...``), for the one-line error
    when nothing is there; whether it holds the kit is checked where a player loads
    (:func:`kit_path`), which names the missing class.
    """
    if not path.exists():
        raise _error(f"{named_by} {path}: no such jar or folder")
    os.environ[KIT_ENV] = str(path.resolve())


def kit_path() -> Path:
    """The kit's jar or class folder (``GIN_ARENA_EAAI_KIT``), checked to hold the kit's interface."""
    given = os.environ.get(KIT_ENV, "").strip()
    if not given:
        raise _error(
            f"eaai players need the EAAI kit: give its jar or class folder with --eaai-kit PATH "
            f"(or {KIT_ENV}=PATH); Gin Arena does not ship it"
        )
    path = Path(given).expanduser().resolve()
    if not path.exists():
        raise _error(f"the EAAI kit {path} ({KIT_ENV}) does not exist")
    _check_class_path_entry(path, f"the EAAI kit {path}")
    missing = [c for c in _KIT_CLASSES if c not in _entries(path)]
    if missing:
        raise _error(f"the EAAI kit {path} has no {missing[0]}: give the folder or jar of the kit's compiled classes")
    return path


def _check_class_path_entry(path: Path, what: str) -> None:
    """Refuse a path Java cannot take on its class path: the separator (``:``) would split it in two,
    and Java would then look for the player's class in neither half ("class not found")."""
    if os.pathsep in str(path):
        raise _error(f"{what} contains '{os.pathsep}', so it cannot be used on a Java class path: move or rename it")


def _entries(path: Path) -> set[str]:
    """The file names inside a jar, or the class files under a folder (relative, with /)."""
    if path.is_dir():
        return {c for c in _KIT_CLASSES if (path / c).is_file()}
    try:
        with zipfile.ZipFile(path) as z:
            return set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return set()


def content_hash(path: Path) -> str:
    """A hash of a jar's bytes, or of every file under a class folder (names and bytes)."""
    digest = hashlib.sha256()
    if path.is_dir():
        for p in sorted(path.rglob("*")):
            if p.is_file():
                digest.update(str(p.relative_to(path)).encode() + b"\0" + p.read_bytes())
    else:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _java(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise _error(f"eaai players need a JDK: {tool} is not on PATH (apt-get install openjdk-17-jdk-headless)")
    return found


def adapter_classes(kit: Path) -> Path:
    """The compiled adapter for ``kit``, compiled on first use into the bot cache (by hash)."""
    from arena.botkit.bot import bot_cache_dir

    source = ADAPTER_SOURCE.read_bytes()
    key = hashlib.sha256(source + content_hash(kit).encode()).hexdigest()[:16]
    folder = bot_cache_dir() / f"eaai-adapter-{key}"
    if (folder / AGENT_JAR).is_file():  # written last, after the classes
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="eaai-adapter-", dir=folder.parent))
    except OSError as exc:  # a cache under a file, a read-only home: one line, as for a sandboxed file
        why = exc.strerror or exc
        raise _error(f"the EAAI adapter cannot be compiled into the bot cache {folder.parent}: {why}") from None
    try:
        r = subprocess.run(
            [_java("javac"), "-nowarn", "-encoding", "UTF-8", "-cp", str(kit), "-d", str(work), str(ADAPTER_SOURCE)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or ["no message"])[0]
            raise _error(f"the EAAI adapter does not compile against the kit {kit}: {why}")
        with zipfile.ZipFile(work / AGENT_JAR, "w") as jar:
            jar.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nPremain-Class: {AGENT_CLASS}\n\n")
        for p in [work, *work.rglob("*")]:  # the bots' user reads it when the arena runs as root
            p.chmod(0o755 if p.is_dir() else 0o644)
        try:
            work.rename(folder)
        except OSError:  # another process compiled it first
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def eaai_command(ref: BotRef, limits: Limits | None = None) -> tuple[list[str], str]:
    """(command, cwd) that play the kit player ``ref`` through the adapter, with a heap for ``limits``."""
    path, name = ref.player
    player = Path(path).resolve()
    if not player.exists():
        raise _error(f"{ref.spec()}: {player} does not exist (a jar or a class folder)")
    if player.is_file() and not zipfile.is_zipfile(player):
        # Java skips such a class path entry in silence and then reports the class as not found.
        raise _error(f"{ref.spec()}: {player} is not a jar (a zip file): give the player's jar or class folder")
    _check_class_path_entry(player, f"{ref.spec()}: {player}")
    memory = (limits or Limits()).memory_mb
    if 0 < memory < MIN_MEMORY_MB:
        raise _error(
            f"{ref.spec()}: memory_mb = {memory} is too small for the Java VM of a kit player (it reserves address"
            f" space for its heap of {HEAP_MB} MiB, its code and its threads): give at least {MIN_MEMORY_MB}"
            " (2048 by default)"
        )
    kit = kit_path()
    adapter = adapter_classes(kit)
    _check_class_path_entry(adapter, f"the EAAI adapter's folder {adapter} (the bot cache)")
    if "=" in str(adapter):  # -javaagent:JAR=OPTIONS
        raise _error(f"the EAAI adapter's folder {adapter} (the bot cache) contains '=', which -javaagent cannot take")
    # The player comes first, as in the kit's own projects: a player that finds its files from the
    # class path's root (the kit's GinRummyUtil.FileResource takes getResource("/"), the first folder
    # on it) finds them beside its classes, not in the adapter's cache folder.  So a player that ships
    # its own copy of the kit's classes (a jar exported with the kit inside) plays with that copy: the
    # one it was compiled and tested against.  The adapter needs of the kit only GinRummyPlayer and
    # Card's getCard, getRank and getSuit, alike in every version of the kit.  A player's own
    # ginarena.* classes would shadow the adapter's, which gains it nothing: it runs in the adapter's
    # JVM and can read the adapter's stdin and fields anyway, and the arena checks every answer.
    classpath = os.pathsep.join(str(p) for p in (player, kit, adapter))
    agent = f"-javaagent:{adapter / AGENT_JAR}"
    command = [_java("java"), *heap_option(limits), *JAVA_OPTIONS, agent, "-cp", classpath, ADAPTER_CLASS]
    command += [name, str(player), str(kit)]
    return command, str(player if player.is_dir() else player.parent)


def eaai_bot(ref: BotRef, limits: Limits | None = None, name: str | None = None):
    """A :class:`arena.botkit.bot.Bot` playing the kit player ``ref`` (a walled external program).

    Its ``source`` is the ref's spec and its ``source_hash`` the hash of the player's jar or
    class folder and of the kit, so a changed player is a new bot in the results.
    """
    from arena.external.client import external_bot

    command, cwd = eaai_command(ref, limits)
    return external_bot(name, command, cwd, limits, source=ref.spec(), source_hash=player_hash(ref))


def player_hash(ref: BotRef) -> str:
    """The hash of a kit player as it is here and now: its jar or class folder, the kit and the class."""
    path, name = ref.player
    digest = hashlib.sha256((content_hash(Path(path).resolve()) + content_hash(kit_path()) + name).encode())
    return digest.hexdigest()[:16]
