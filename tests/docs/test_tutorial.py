"""Every command of the tutorial runs, in order, and does what the page says.

The tutorial (docs/tutorial/first-bot.md) is read as a script: each ```bash
block is run in a fresh folder laid out like a checkout (``bots/TEMPLATE.py``,
``configs/``), and each ```python title="FILE" block is the edit the reader
makes: it replaces, in FILE, the statement that starts with the block's first
line and ends with its last.  So a change to the template, a config or a
command's output that breaks the tutorial breaks this test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial" / "first-bot.md"
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```$', flags=re.M | re.S)


def steps(text: str) -> list[tuple[str, str | None, str]]:
    """(kind, file, body) for every bash command block and every titled python edit, in page order."""
    out = []
    for lang, title, body in FENCE.findall(text):
        if lang == "bash":
            out.append(("run", None, body))
        elif lang == "python" and title:
            out.append(("edit", title, body))
    return out


def apply_edit(path: Path, block: str) -> None:
    lines = block.rstrip("\n").split("\n")
    text = path.read_text().split("\n")
    start = text.index(lines[0])  # ValueError: the tutorial's edit no longer matches the file
    end = text.index(lines[-1], start)
    path.write_text("\n".join(text[:start] + lines + text[end + 1 :]))


def test_the_parser_sees_the_tutorials_commands_and_edits():
    found = steps(TUTORIAL.read_text())
    assert [k for k, _, _ in found].count("run") >= 5
    assert [f for k, f, _ in found if k == "edit"] == ["my_bot.py", "my_bot_1.py"]


def test_apply_edit_replaces_one_statement(tmp_path):
    f = tmp_path / "bot.py"
    f.write_text('A = 1\nPARAMS = {\n    "x": 1.0,\n}\nB = 2\n')
    apply_edit(f, 'PARAMS = {\n    "x": 3.0,\n}\n')
    assert f.read_text() == 'A = 1\nPARAMS = {\n    "x": 3.0,\n}\nB = 2\n'
    with pytest.raises(ValueError):
        apply_edit(f, "NOPE = {\n}\n")


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path):
    (tmp_path / "bots").mkdir()
    shutil.copy(ROOT / "bots" / "TEMPLATE.py", tmp_path / "bots" / "TEMPLATE.py")
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    for kind, file, body in steps(TUTORIAL.read_text()):
        if kind == "edit":
            apply_edit(tmp_path / str(file), body)
            continue
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, f"$ {body}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"

    # What the page says happened: the bots, the report, both versions on the same deals.
    run = tmp_path / "results" / "first"
    assert (run / "report.html").exists() and (run / "report.md").exists()
    assert 'knock_at": 1.0' in (tmp_path / "my_bot_1.py").read_text()
    board = pd.read_csv(run / "leaderboard.csv")
    assert {"random", "simple", "my_bot", "my_bot_1"} <= set(board["bot"])
    sys.path.insert(0, str(ROOT))
    import arena

    games = arena.RunStore(run).games()
    vs_simple = games[(games.bot_a == "simple") | (games.bot_b == "simple")]
    assert len(games) == 6 * 400 and len(vs_simple) == 3 * 400
