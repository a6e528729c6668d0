"""``arena check-bot``: does an external bot speak the protocol well enough to enter?

The check starts the bot under the limits it would play under and reports,
one line each, PASS / WARN / FAIL for:

* the handshake (name, protocol version, time to start);
* one answer to each kind of decision (take_upcard, draw, big_gin, discard,
  knock), asked on views taken from real games, each checked for type and
  legality;
* a few full games against the built-in ``simple`` bot, from both seats,
  with no forfeit;
* the first of those games played again with the same seeds: a bot that
  plays them differently does not replay from its seed (a warning);
* the time per decision (median and maximum, against the limit);
* a clean exit when told ``bye``.

A FAIL in any line fails the check (exit code 1 from the command).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from arena.engine.contract import DECISIONS
from arena.engine.layout import (
    ERR_NONE,
    ERR_NOT_IN_HAND,
    ERR_RETAKE,
    G_WINNER,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    V_DECISION,
    V_HAND,
    V_JUST_TAKEN,
    V_SEAT,
)
from arena.engine.play import BatchRecords, game_log_spans
from arena.engine.rng import RNG_WORDS, bot_seed, seed_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import view_illegal_reason
from arena.external.client import ExternalBot, SandboxTiming, _make_bot, sandbox_setup, sandbox_timing
from arena.external.limits import Limits
from arena.external.process import BYE_GRACE, ExternalBotError
from arena.external.protocol import DECISION_OF_PHASE
from arena.settings.botref import BotRef

#: The seed of check-bot's first game against simple (the next ones count up from it).
CHECK_SEED = 1000
#: Games check-bot plays a second time with the same seeds, to see that the bot replays them.
REPLAYED = 3

#: How each kind of bot draws numbers that replay, for the warning of one that does not.
_REPLAY_HINTS = {
    "command": "seed every random generator from the seed the arena sends with each game",
    "sandbox": "draw every random number from the rng the arena passes to each decision",
    "file": "draw every random number from the rng the arena passes to each decision",
    "eaai": "draw from java.util.Random (the adapter seeds every one the player makes, wherever it is kept, "
    "from the game's seed), not SecureRandom, ThreadLocalRandom or SplittableRandom; let no clock or thread "
    "order decide a move; give the player's own objects kept in a HashSet or a HashMap a hashCode and "
    "equals (or use a LinkedHashMap); keep a game's state in the player object, not in static fields "
    "(docs/how-to/eaai-players.md)",
}


@dataclass
class CheckReport:
    """The lines of a check and whether it passed."""

    spec: str
    lines: list[tuple[str, str, str]] = field(default_factory=list)  # (PASS|WARN|FAIL, what, detail)

    @property
    def passed(self) -> bool:
        return all(status != "FAIL" for status, _, _ in self.lines)

    def add(self, status: str, what: str, detail: str, echo: Callable[[str], None] | None = None) -> None:
        self.lines.append((status, what, detail))
        if echo is not None:
            echo(self.format_line(status, what, detail))

    @staticmethod
    def format_line(status: str, what: str, detail: str) -> str:
        return f"  {status:<4}  {what:<12} {detail}"

    def summary(self) -> str:
        fails = sum(1 for s, _, _ in self.lines if s == "FAIL")
        warns = sum(1 for s, _, _ in self.lines if s == "WARN")
        if fails:
            return f"result: FAIL ({fails} failed, {warns} warning(s))"
        return "result: PASS" + (f" ({warns} warning(s))" if warns else "")


def _command_of(
    ref: BotRef, limits: Limits | None = None
) -> tuple[list[str], str | None, dict[str, str] | None, tuple[str, ...]]:
    """The command, folder, environment and paths to read that run ``ref`` (a command, or a file in the sandbox)."""
    if ref.kind in ("sandbox", "file"):
        from arena.botkit.bot import BotError

        try:
            command, cwd, env, _, read_paths = sandbox_setup(ref.ref, limits)
        except BotError as exc:
            raise ValueError(str(exc)) from None
        return command, cwd, env, read_paths
    if ref.kind == "command":
        return ref.argv, ref.cwd, None, ()
    if ref.kind == "eaai":
        from arena.botkit.bot import BotError
        from arena.external.eaai import eaai_command

        try:
            command, cwd = eaai_command(ref, limits)
        except BotError as exc:
            raise ValueError(str(exc)) from None
        return command, cwd, None, ()
    from arena.botkit.bot import BUILTIN_BOTS

    if ref.kind == "policy":
        what = "is a trained policy, played in the arena's process"
    elif ref.ref in BUILTIN_BOTS:
        what = "is a built-in bot"
    else:  # 'nope' was said to be a built-in bot
        what = "names no bot (nor a built-in one)"
    raise ValueError(
        f"'{ref.spec()}' {what}; check-bot checks a bot in its own process: 'cmd:<program>', a bot file "
        "('sandbox:FILE'), or 'eaai:<kit player>'"
    )


def spec_problem(spec: str, limits: Limits | None = None) -> str:
    """Why ``spec`` names no bot that :func:`check_bot` can start ("" when it does): it does not parse, names
    a file that is not there, or a bot that runs in the arena's process.  ``arena check-bot`` refuses such a
    spec as bad input (exit 2) before its report; the report's FAIL lines are for a bot that started."""
    from arena.loading.load import limits_for

    try:
        ref = BotRef.parse(spec)
        _command_of(ref, limits_for(ref, limits))
    except ValueError as exc:
        return str(exc)
    return ""


#: A failed system call in strace's output: ``[pid 12] name(args) = -1 EPERM (...)``.
_FAILED_CALL = re.compile(r"^(?:\[pid\s+\d+\] |\d+ +)?([a-z0-9_]+)\((.*)\)\s+= -1 (E[A-Z]+)")


#: What bwrap itself calls while it builds the wall (before the filter exists): a failure of one of
#: these is bwrap's, not a refusal of the bot's (the bot's own are refused as well, so a bot that tries
#: them is simply not listed).
_BWRAP_SETUP = frozenset({"unshare", "mount", "umount2", "pivot_root", "chroot", "sethostname", "setns"})


#: The file the Java VM opens for writing at start-up (to say what a core dump holds); the wall refuses it.
_RUNTIME_OPEN = '"/proc/self/coredump_filter"'


def refused_calls(trace: str) -> Counter[str]:
    """The system calls the sandbox refused in an strace log (``-f -e status=failed``).

    A call is counted when it failed with EPERM and is not on the allow-list
    (so the filter refused it, not the kernel), when a process, or a signal
    to another process, was refused, or when an open for writing failed with
    EACCES.  Not counted: ``socket(AF_UNIX, ...)``, which the C library
    tries on its own for every user or group name lookup (nscd), and an open
    of ``/proc/self/coredump_filter``, which the Java VM makes on its own at
    start-up (every kit player's, and nothing it needs).
    """
    from arena.external.limits import _X64_ALLOW, _X64_SELF_ONLY

    allowed = set(_X64_ALLOW) | set(_X64_SELF_ONLY) | {"clone", "clone3", "ioctl", "open", "openat"}
    out: Counter[str] = Counter()
    for line in trace.splitlines():
        m = _FAILED_CALL.match(line)
        if m is None:
            continue
        name, args, err = m.groups()
        if name in _BWRAP_SETUP or (name == "socket" and args.startswith("AF_UNIX")):
            continue
        if name in ("open", "openat") and _RUNTIME_OPEN in args:
            continue
        if (err == "EPERM" and name not in allowed) or (err == "EACCES" and name in ("open", "openat")):
            out[name] += 1
        elif err == "EPERM" and name in ("clone", "kill", "tgkill", "tkill", "prlimit64"):
            out[name] += 1
    return out


def _check_refused(report, command, cwd, env, read_paths, limits, echo) -> None:
    """Play two games under strace and report the system calls the sandbox refused (a WARN line)."""
    if limits.sandbox != "wall":
        # Outside the wall the allow-list is installed before the program starts, so it holds strace too,
        # which may not start a process: every weak-sandbox check warned that the bot's launcher forks.
        report.add(
            "WARN",
            "syscalls",
            "not listed under the weak sandbox (strace would run under the bot's "
            "allow-list, which refuses it the process it starts); check under the wall for the list",
            echo,
        )
        return
    import shutil

    from arena.engine.play import play_batch
    from arena.loading.load import load_bot
    from arena.settings.rules import Rules

    strace = shutil.which("strace")
    if strace is None:
        report.add("WARN", "syscalls", "strace not found: the system calls the sandbox refused are not listed", echo)
        return
    tracer = (strace, "-f", "-qq", "-e", "trace=all", "-e", "status=failed", "-s", "32")  # paths to 32 bytes
    traced = ExternalBot(command, cwd, limits, env=env, read_paths=read_paths, tracer=tracer)
    traced.limits = dataclasses.replace(limits, log_bytes=max(limits.log_bytes, 1 << 20))
    traced.log = type(traced.log)(traced.limits.log_bytes)
    try:
        hello = traced.start(0)
        bot = _make_bot(traced, hello["name"], report.spec, "", "", "")
        play_batch(bot, load_bot("simple"), rules_array(Rules()), np.arange(2000, 2002))
    except ExternalBotError as exc:
        report.add("WARN", "syscalls", f"the bot did not play under strace: {exc}", echo)
        return
    finally:
        traced.close()
    refused = refused_calls(traced.log.drain())
    if refused:
        calls = ", ".join(f"{name} x{n}" for name, n in refused.most_common(12))
        report.add("WARN", "syscalls", f"the sandbox refused: {calls} (harmless if the bot plays without them)", echo)
    else:
        report.add("PASS", "syscalls", "the sandbox refused no system call in two games", echo)


def _check_replay(report, name: str, first: BatchRecords, again: BatchRecords, hint: str, echo) -> None:
    """Compare the games ``again`` played with the first of ``first`` (the same seeds, in the same
    process): a bot whose randomness is not drawn from the game's seed, or that carries state from
    game to game, plays them differently, and its results cannot be reproduced from the run's seed."""
    n = len(again.games)
    s1, n1 = game_log_spans(first.hands, len(first.games))
    s2, n2 = game_log_spans(again.hands, n)
    differ = [
        int(again.seeds[g])
        for g in range(n)
        if not np.array_equal(first.games[g], again.games[g])
        or not np.array_equal(first.log[s1[g] : s1[g] + n1[g]], again.log[s2[g] : s2[g] + n2[g]])
    ]
    if again.errors:
        report.add("WARN", "replay", f"a game played again with the same seed was forfeited: {again.errors[0]}", echo)
    elif differ:
        report.add(
            "WARN",
            "replay",
            f"bot '{name}' does not replay from its seed: {len(differ)} of {n} games differ when played again "
            f"(game seed {', '.join(map(str, differ))}); {hint}",
            echo,
        )
    else:
        played = f"{n} games" if n != 1 else "1 game"
        report.add("PASS", "replay", f"{played} played again with the same seed, move for move the same", echo)


def sample_views(n_games: int = 3, seed: int = 11) -> dict[int, np.ndarray]:
    """One real view per phase (seat 0), from games of simple vs simple, plus a big gin one."""
    import dataclasses

    from arena.engine.play import play_batch
    from arena.loading.load import load_bot
    from arena.settings.rules import Rules

    simple = load_bot("simple")
    found: dict[int, np.ndarray] = {}

    def spy(fn):
        def ask(view, params, memory, rng):
            ph = int(view[V_DECISION])
            if int(view[V_SEAT]) == 0 and ph not in found:
                found[ph] = view.copy()
            return int(fn(view, params, memory, rng))

        return ask

    watcher = dataclasses.replace(simple, functions=tuple(spy(f) for f in simple.functions), fast=False)
    play_batch(watcher, simple, rules_array(Rules()), np.arange(seed, seed + n_games), forfeit=False)
    if PH_BIG_GIN not in found and PH_DISCARD in found:
        # Big gin is rare in play: an 11-card hand that is all melds (A-4 clubs, 5-7 diamonds, 8-J hearts).
        v = found[PH_DISCARD].copy()
        v[V_HAND] = sum(1 << c for c in [0, 1, 2, 3, 17, 18, 19, 33, 34, 35, 36])
        v[V_JUST_TAKEN] = -1
        v[V_DECISION] = PH_BIG_GIN
        found[PH_BIG_GIN] = v
    return found


def _legal(view: np.ndarray, answer: int) -> str:
    """'' if the answer is legal for the view's decision (the engine's query), else why not."""
    err = int(view_illegal_reason(view, max(-1, min(int(answer), 64))))  # clamped: any int stays an int64
    if err == ERR_NONE:
        return ""
    if err == ERR_NOT_IN_HAND:
        return f"answered {answer}, a card not in the hand"
    if err == ERR_RETAKE:
        return f"answered {answer}, the card just taken from the pile"
    return f"answered {answer}; must be 0 or 1"


def check_bot(
    spec: str,
    games: int = 20,
    limits: Limits | None = None,
    echo: Callable[[str], None] | None = print,
    first_seed: int = CHECK_SEED,
) -> CheckReport:
    """Run the check on ``cmd:...`` (or a bot file, run in the sandbox); lines are echoed as they come.
    Its games are seeded ``first_seed``, ``first_seed + 1``...: fixed for ``arena check-bot`` (a failure
    replays), drawn by a league, whose bots must not know a check game from a rated one."""
    from arena.engine.play import play_batch
    from arena.loading.load import limits_for, load_bot
    from arena.settings.rules import Rules

    report = CheckReport(spec)
    if echo:
        echo(f"check-bot {spec}")
    try:
        ref = BotRef.parse(spec)
        limits = limits_for(ref, limits)
        command, cwd, env, read_paths = _command_of(ref, limits)
    except ValueError as exc:
        report.add("FAIL", "command", str(exc), echo)
        if echo:
            echo(report.summary())
        return report
    timing: SandboxTiming = sandbox_timing(ref.ref) if ref.kind in ("sandbox", "file") else {}  # as a run
    ext = ExternalBot(command, cwd, limits, env=env, record_times=True, read_paths=read_paths, **timing)
    try:
        probes = ref.kind != "eaai"
        _check(report, ext, games, echo, load_bot, play_batch, Rules, probes, _REPLAY_HINTS[ref.kind], first_seed)
    finally:
        ext.close()
    if report.passed:
        _check_refused(report, command, cwd, env, read_paths, limits, echo)
    if echo:
        echo(report.summary())
    return report


def _check(
    report, ext, games, echo, load_bot, play_batch, Rules, probes: bool, replay_hint: str, first_seed: int
) -> None:
    """The check's steps; ``probes``: ask each kind of decision once on a sample view, out of any
    game's sequence (not for an EAAI-kit player, whose adapter follows the table move by move and
    rightly refuses a view that could not follow its last one: its decisions are checked in the
    full games); ``replay_hint``: how a bot of this kind makes its games replay."""
    limits = ext.limits
    t0 = time.perf_counter()
    try:
        hello = ext.start(0)
    except ExternalBotError as exc:
        report.add("FAIL", "handshake", str(exc), echo)
        return
    ms = (time.perf_counter() - t0) * 1000
    params = ", ".join(f"{k}={v:g}" for k, v in hello["params"].items()) or "none"
    report.add(
        "PASS",
        "handshake",
        f"name '{hello['name']}', protocol {hello['protocol']}, parameters: {params}; started in {ms:.0f} ms",
        echo,
    )

    # One answer to each kind of decision, on real views.
    views = sample_views()
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    seed_rng(rng, np.uint64(123456789))
    memory = np.zeros(1)
    values = np.array(list(hello["params"].values()), dtype=np.float64)
    asked = {}
    if not probes:
        report.add("PASS", "decisions", "asked in the games below only (an EAAI-kit player follows the table)", echo)
        asked = dict.fromkeys(DECISIONS, True)
    for phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER, PH_DRAW, PH_BIG_GIN, PH_DISCARD, PH_KNOCK):
        name = DECISION_OF_PHASE[phase]
        if phase not in views or name in asked:
            continue
        try:
            answer = ext.decide(phase, views[phase], values, memory, rng)
        except ExternalBotError as exc:
            report.add("FAIL", name, str(exc), echo)
            asked[name] = False
            if not ext.seats[0].proc or not ext.seats[0].proc.alive:
                memory[:] = 0.0  # the next question starts a new game on a fresh process
            continue
        why = _legal(views[phase], answer)
        report.add("FAIL" if why else "PASS", name, why or f"answered {answer}", echo)
        asked[name] = not why
    for name in DECISIONS:
        if name not in asked:
            report.add("WARN", name, "not asked (no sample view)", echo)

    # Full games against simple, from both seats.
    if games > 0:
        bot = _make_bot(ext, hello["name"], report.spec, "", "", "")
        simple = load_bot("simple")
        rules = rules_array(Rules())
        half = max(1, games // 2)
        seeds = np.arange(first_seed, first_seed + half)
        try:
            ext.start(1)  # the second seat's process, so that its start is not timed as play
        except ExternalBotError as exc:
            report.add("FAIL", "games", f"a second process (for seat 1) did not start: {exc}", echo)
            return
        # Each game's id (the protocol's "game"), by the bot's seed in it: the same when it is replayed.
        ext.new_chunk({int(bot_seed(s, seat)): 1 + seat * half + i for seat in (0, 1) for i, s in enumerate(seeds)})
        t0 = time.perf_counter()
        a = play_batch(bot, simple, rules, seeds, record_hands=True, record_log=True)
        b = play_batch(simple, bot, rules, seeds)
        elapsed = time.perf_counter() - t0
        errors = a.errors + b.errors
        won = int((a.games[:, G_WINNER] == 0).sum() + (b.games[:, G_WINNER] == 1).sum())
        n = 2 * half
        if errors:
            report.add("FAIL", "games", f"{len(errors)} of {n} games forfeited; first: {errors[0]}", echo)
        else:
            report.add(
                "PASS",
                "games",
                f"{n} games against simple without a forfeit (won {won}); {n / elapsed:.0f} games/s",
                echo,
            )
            again = play_batch(bot, simple, rules, seeds[:REPLAYED], record_hands=True, record_log=True)
            _check_replay(report, hello["name"], a, again, replay_hint, echo)

    # Timing.
    times = ext.times or []
    if times:
        med = statistics.median(times) * 1000
        worst = max(times) * 1000
        limit = limits.decision_s * 1000
        status = "PASS" if worst < limit else "FAIL"
        if status == "PASS" and worst > limit / 2:
            status = "WARN"
        report.add(
            status,
            "timing",
            f"median {med:.3f} ms, max {worst:.1f} ms per decision over {len(times)} decisions (limit {limit:.0f} ms)"
            + (
                f"; the first answer of each kind, which may compile, apart: max {max(ext.first_times) * 1000:.0f} ms"
                f" (limit {limits.start_s * 1000:.0f} ms)"
                if ext.first_times
                else ""
            ),
            echo,
        )

    # A clean exit on bye.
    proc = ext.seats[0].proc
    if proc is not None and proc.alive:
        proc.close()  # the grace a run gives: a bot slower than that is killed after every chunk of a run
        log = ext.log.drain()
        ext.seats[0].proc = None
        if "did not exit after bye" in log:
            report.add(
                "WARN",
                "bye",
                f'the bot did not exit within {BYE_GRACE:g} s of {{"type":"bye"}}; it was killed (a run kills '
                "it so after each chunk, with a line in the chunk's log)",
                echo,
            )
        else:
            report.add("PASS", "bye", "exited when told bye", echo)
        tail = [line for line in log.splitlines() if line.strip() and not line.startswith("[arena")]
        if tail:
            report.add("WARN", "stderr", f"{len(tail)} line(s) on stderr; last: {tail[-1][:100]!r}", echo)
