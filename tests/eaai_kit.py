"""The stand-in EAAI kit and our kit-style players, compiled for the tests (not a test file).

The one place tests build them: the adapter's tests (``tests/bots/test_eaai.py``), a kit
player on Dask (``tests/run/test_dask.py``) and the league's Java uploads
(``tests/league``).  The real kit is never copied in: ``tests/bots/eaai/kit/ginrummy``
is a stand-in written here with the kit's package, class and method names and
signatures, and ``tests/bots/eaai/players/players`` holds our players.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from arena.external.eaai import adapter_classes
from arena.external.wall import wall_problem

SOURCES = Path(__file__).resolve().parent / "bots" / "eaai"
PROBLEM = wall_problem()
needs_java = pytest.mark.skipif(
    shutil.which("javac") is None or PROBLEM is not None,
    reason=f"needs javac and the wall ({PROBLEM or 'no javac'})",
)
#: The player class of the jar and zip :func:`build_kit` makes.
PLAYER = "players.KitSimplePlayer"


def _javac(sources: list[Path], out: Path, *, wall: bool) -> None:
    """Compile ``sources`` into ``out``; skip without javac (or the wall, with ``wall``), fail under CI."""
    missing = shutil.which("javac") is None or (wall and PROBLEM is not None)
    if missing:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"CI must have javac and the wall ({PROBLEM or 'no javac'})")
        pytest.skip(f"needs javac{' and the wall' if wall else ''} ({PROBLEM or 'no javac'})")
    subprocess.run(["javac", "-nowarn", "-d", str(out), *map(str, sources)], check=True, capture_output=True)


def _split_kit(classes: Path, kit: Path, root: Path) -> None:
    """Move the kit's package out of ``classes`` into ``kit`` (as a user has them: apart from the
    players), and make everything under ``root`` readable by the bots' user (the tests may run as root)."""
    kit.mkdir()
    (classes / "ginrummy").rename(kit / "ginrummy")
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def compile_kit(root: Path) -> tuple[Path, Path]:
    """``(kit, players)`` class folders under ``root``: the stand-in kit, and every player of ours beside
    the ``table.txt`` that FileTablePlayer reads."""
    kit, players = root / "kit", root / "players"
    _javac([*(SOURCES / "kit" / "ginrummy").glob("*.java"), *(SOURCES / "players" / "players").glob("*.java")],
           players, wall=False)  # fmt: skip
    (players / "table.txt").write_text("1 2 3\n4 5\n")
    _split_kit(players, kit, root)
    return kit, players


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def build_kit(root: Path, players: dict[str, str] | None = None) -> dict[str, Any]:
    """The stand-in kit and KitSimplePlayer (with ``players``: more player sources, by path under
    ``src/``) compiled under ``root``, as a league organizer and a participant have them: the kit
    folder, and a jar and a zip of the player classes; skips without javac or the wall."""
    src, kit, classes = root / "src", root / "kit", root / "classes"
    for rel, text in (players or {}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    sources = [
        *(SOURCES / "kit" / "ginrummy").glob("*.java"),
        SOURCES / "players" / "players" / "KitSimplePlayer.java",
        *(src / "players").glob("*.java"),
    ]
    _javac(sources, classes, wall=True)
    _split_kit(classes, kit, root)
    player = {str(p.relative_to(classes)): p.read_bytes() for p in classes.rglob("*.class")}
    adapter_classes(kit)  # compiled once here, so no check's time limit pays for javac
    return {
        "kit": kit,
        "jar": zip_bytes({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", **player}),
        "zip": zip_bytes({f"bin/{k}": v for k, v in player.items()}),  # a zip of the class folder itself
        "root": root,
    }
