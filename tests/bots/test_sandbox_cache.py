"""A sandboxed bot file's compiled code is kept between its starts, and nothing else is written from the wall.

The host compiles the file once behind the wall (``--compile``) and sends what numba would have saved; the
arena stores it in numba's folder for that file alone (:mod:`arena.external.sandbox_cache`).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena.botkit.bot import cached_bot_file
from arena.engine._jit import cache_dir
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external import sandboxed_bot
from arena.external.client import external_of
from arena.external.sandbox_cache import MAX_BYTES, MAX_FILES, cache_folder_of, store_files
from arena.external.wall import wall_problem
from arena.settings.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = wall_problem()
needs_wall = pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")


def _bot(tmp_path: Path, prelude: str = "") -> tuple[Path, Path]:
    """The template bot, made a text of its own (so its compiled code is not kept yet), and numba's cache
    folder for it."""
    text = prelude + (ROOT / "bots" / "TEMPLATE.py").read_text() + f"\n# {tmp_path}\n"
    bot = tmp_path / "bot.py"
    bot.write_text(text)
    return bot, cache_folder_of(cached_bot_file(text))


@needs_wall
def test_a_sandboxed_bot_file_is_compiled_once_and_its_check_finds_no_refused_call(tmp_path):
    """Each start compiled the file again (the wall forbids numba's cache writes), and check-bot listed
    those refused writes (``openat x5, unlink x5``) as the bot's own.  Now the compiled code is kept
    before the first start, and the traced start loads it: it tries to write nothing."""
    from arena.loading.check import check_bot

    if shutil.which("strace") is None:
        if os.environ.get("CI") == "true":
            raise AssertionError("CI must have strace (apt-get install strace)")
        pytest.skip("strace not found")
    bot, folder = _bot(tmp_path)
    assert not folder.exists()
    report = check_bot(f"sandbox:{bot}", games=2, echo=None)
    assert report.passed, report.lines
    assert ("PASS", "syscalls") in [(status, what) for status, what, _ in report.lines], report.lines
    kept = sorted(p.name for p in folder.iterdir())
    digest = folder.name.split("_")[0]
    for fname in ("take_upcard", "draw", "big_gin", "discard", "knock"):
        assert any(n.startswith(f"arena_bot_{digest}.{fname}-") and n.endswith(".nbi") for n in kept), kept
    assert all(oct(p.stat().st_mode)[-3:] == "644" for p in folder.iterdir())  # the wall's uid reads them


@needs_wall
def test_a_bot_that_compiles_an_arena_kernel_anew_behind_the_wall_keeps_its_own_code_alone(tmp_path, simple):
    """A bot may call one of the arena's kernels for types nobody compiled it for yet: numba compiles that
    kernel behind the wall too.  The host sends the bot's own code only (the arena refuses an answer
    holding its kernels' files), so the bot's code is still kept, and the kernel's code is not."""
    # nth_card for a uint8 mask and an int8 index: an overload no test compiles outside the wall.
    prelude = "import numpy as _np\nfrom arena.botkit.lib import nth_card as _nth\n_nth(_np.uint8(6), _np.int8(1))\n"
    bot, folder = _bot(tmp_path, prelude)
    boxed = sandboxed_bot(bot)
    try:
        assert folder.is_dir() and any(p.suffix == ".nbi" for p in folder.iterdir())
        rec = play_batch(boxed, simple, rules_array(Rules()), np.arange(1))
        assert not rec.errors, rec.errors
    finally:
        external_of(boxed).close()


#: A bot that compiles nothing (it plays random's functions in plain Python): quick to start twice.
PLAIN_BOT = (
    "from bots.random import MEMORY, PARAMS, big_gin, discard, draw, knock, take_upcard  # noqa: F401\nPLAIN = True\n"
)


@needs_wall
def test_a_bot_that_forges_its_compile_answer_stores_nothing_and_still_plays(tmp_path, simple):
    """The compile answer is sent after the bot's code ran in the host, so the bot can write one first:
    files for the arena's kernels, a name that climbs out of its folder, or a line longer than the arena
    reads.  Each forged answer is dropped whole (the other rules: the next test), and the bot still plays."""
    engine = next(p for p in cache_dir().iterdir() if p.name.startswith("engine_"))
    forged = {
        "kernels": {f"{engine.name}/engine.step-1.py311.nbi": "AAAA"},
        "climbing": {"OWN/../../evil.nbi": "AAAA"},
        # a valid answer padded past the longest line the arena reads (it stops reading and kills the host)
        "endless": {f"OWN/arena_bot_x.discard-1.py311.{i}.nbc": "A" * (1 << 20) for i in range(1, 30)},
    }
    for what, files in forged.items():
        case = tmp_path / what
        case.mkdir()
        text = PLAIN_BOT + f"# {case}\n"
        folder = cache_folder_of(cached_bot_file(text))
        line = json.dumps({"files": {k.replace("OWN", folder.name): v for k, v in files.items()}})
        # Only at --compile: the forged answer, written to the protocol's pipe (the host's fd 3) before the host can.
        text += f"import os, sys\nif '--compile' in sys.argv:\n    os.write(3, {line.encode()!r} + b'\\n')\n"
        (case / "bot.py").write_text(text)
        folder = cache_folder_of(cached_bot_file(text))
        boxed = sandboxed_bot(case / "bot.py")
        try:
            assert not folder.exists(), what
            rec = play_batch(boxed, simple, rules_array(Rules()), np.arange(1))
            assert not rec.errors and len(rec.games) == 1, (what, rec.errors)
        finally:
            external_of(boxed).close()
        assert not (cache_dir().parent / "evil.nbi").exists() and not (cache_dir() / "evil.nbi").exists()
    assert not (engine / "engine.step-1.py311.nbi").exists()  # the forged kernel's index


def test_a_compile_answer_is_stored_only_whole_and_only_in_its_own_folder(tmp_path):
    """The rules :func:`store_files` holds an answer from behind the wall to, without a wall."""
    folder = tmp_path / "numba" / ("0123456789abcdef_" + "f" * 40)
    name = "arena_bot_0.discard-12.py311"

    def line(files: dict[str, bytes | str]) -> bytes:
        enc = {k: v if isinstance(v, str) else base64.b64encode(v).decode() for k, v in files.items()}
        return json.dumps({"files": enc}).encode()

    good = {f"{folder.name}/{name}.nbi": b"index", f"{folder.name}/{name}.1.nbc": b"code"}
    refused = [
        b"not json",
        b'["files"]',
        b"[" * 100_000 + b"]" * 100_000,  # nested past Python's recursion limit
        json.dumps({"files": {}}).encode(),
        line({**good, f"engine_1/{name}.nbi": b"x"}),  # another folder: the whole answer goes
        line({**good, f"{folder.name}/../{name}.nbi": b"x"}),
        line({**good, f"{folder.name}/{name}.pkl": b"x"}),
        line({**good, f"{folder.name}/{name}.2.nbc": "not base64!"}),
        line({f"{folder.name}/{name}.{i}.nbc": b"x" for i in range(MAX_FILES + 1)}),
        line(
            {
                f"{folder.name}/{name}.1.nbc": b"x" * (MAX_BYTES // 2 + 1),
                f"{folder.name}/{name}.2.nbc": b"x" * (MAX_BYTES // 2),
            }
        ),
    ]
    for bad in refused:
        assert store_files(bad, folder) == 0, bad[:80]
        assert not folder.exists() and not any(folder.parent.glob("*")), bad[:80]  # no half-stored folder either
    assert store_files(line(good), folder) == 2
    assert (folder / f"{name}.nbi").read_bytes() == b"index" and (folder / f"{name}.1.nbc").read_bytes() == b"code"
    # A folder already there stays as it is (another process stored it first).
    assert store_files(line({f"{folder.name}/{name}.nbi": b"other"}), folder) == 0
    assert (folder / f"{name}.nbi").read_bytes() == b"index"


def test_a_folder_left_half_stored_by_a_crash_is_shown_to_no_other_bot(tmp_path, monkeypatch):
    """The folder is filled under a temporary name and renamed; killed in between, it stays.  The wall shows
    every bot each cache folder not named after a bot (the arena's kernels), so a leftover named otherwise
    showed one bot's compiled code to all the others.  It is named after its bot, like the folder."""
    import arena.engine._jit as jit_module
    import arena.external.sandbox_cache as sandbox_cache
    from arena.external.wall import host_paths

    numba_dir = tmp_path / "numba"
    (numba_dir / "engine_1").mkdir(parents=True)
    mine = numba_dir / ("a" * 16 + "_" + "f" * 40)
    line = json.dumps({"files": {f"{mine.name}/arena_bot_a.discard-1.py311.nbi": "AAAA"}}).encode()

    def killed(*args):
        raise KeyboardInterrupt  # as a kill between the files and the rename

    monkeypatch.setattr(sandbox_cache.os, "rename", killed)
    with pytest.raises(KeyboardInterrupt):
        store_files(line, mine)
    (left,) = [p for p in numba_dir.iterdir() if p.name != "engine_1"]
    monkeypatch.setattr(jit_module, "cache_dir", lambda: numba_dir)
    other = tmp_path / "other.py"
    other.write_text("# another bot\n")
    shown = host_paths(other, "b" * 16)
    assert str(numba_dir / "engine_1") in shown and str(left) not in shown
    assert str(left) in host_paths(other, "a" * 16)  # its own bot's starts may see it
