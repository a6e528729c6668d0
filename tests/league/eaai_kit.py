"""The stand-in EAAI kit and its player, compiled for the league tests that upload Java players.

(Not a test file.)  The real kit is never used: ``tests/bots/eaai/kit`` is the stand-in written for
the tests, named to a league with ``eaai_kit`` in its league.toml, as an organizer names the real one.
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

ROOT = Path(__file__).resolve().parents[2]
EAAI_SOURCES = ROOT / "tests" / "bots" / "eaai"
PROBLEM = wall_problem()
#: The player class of the jar and zip :func:`build_kit` makes.
PLAYER = "players.KitSimplePlayer"


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def build_kit(root: Path, players: dict[str, str] | None = None) -> dict[str, Any]:
    """Compile the stand-in kit and KitSimplePlayer (with ``players``: more player sources, by path under
    ``src/``) under ``root``: the kit folder, a jar and a zip of the player classes; skips without javac or
    the wall (fails under CI)."""
    if shutil.which("javac") is None or PROBLEM is not None:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"CI must have javac and the wall ({PROBLEM or 'no javac'})")
        pytest.skip(f"needs javac and the wall ({PROBLEM or 'no javac'})")
    src, kit, classes = root / "src", root / "kit", root / "classes"
    for rel, text in (players or {}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    sources = [
        *(EAAI_SOURCES / "kit" / "ginrummy").glob("*.java"),
        EAAI_SOURCES / "players" / "players" / "KitSimplePlayer.java",
        *(src / "players").glob("*.java"),
    ]
    subprocess.run(["javac", "-nowarn", "-d", str(classes), *map(str, sources)], check=True, capture_output=True)
    kit.mkdir()
    (classes / "ginrummy").rename(kit / "ginrummy")  # the kit apart from the players, as the organizer has it
    player = {str(p.relative_to(classes)): p.read_bytes() for p in classes.rglob("*.class")}
    for p in [root, *root.rglob("*")]:  # the bots' user reads the kit when the tests run as root
        p.chmod(0o755 if p.is_dir() else 0o644)
    adapter_classes(kit)  # compiled once here, so no check's time limit pays for javac
    return {
        "kit": kit,
        "jar": zip_bytes({"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", **player}),
        "zip": zip_bytes({f"bin/{k}": v for k, v in player.items()}),  # a zip of the class folder itself
        "root": root,
    }
