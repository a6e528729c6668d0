"""The layers of CONTRIBUTING.md hold: no module imports from a layer above it.

Every import counts, function-local ones included, since a lazy import of an
upper layer is still a dependency running the wrong way.  The layers, top
(imported by all) to bottom (imports all):

settings -> engine -> bots (arena.botkit, arena.external, bots/) -> env -> run -> analysis -> interfaces (cli, web)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Layer rank by module prefix; a module may import only ranks <= its own.
LAYERS: list[tuple[str, int]] = [
    ("arena.settings", 0),
    ("arena.engine", 1),
    ("arena.botkit", 2),
    ("arena.external", 2),
    ("bots", 2),
    ("arena.env", 3),
    ("arena.run", 4),
    ("arena.analysis", 5),
    ("arena.league", 6),
    ("arena.cli", 7),
    ("arena.web", 7),
]


def rank(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for prefix, r in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > best[0]:
                best = (len(prefix), r)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if rank(node.module) is None:  # `from arena import cli` imports the submodule arena.cli
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def sources() -> list[Path]:
    return sorted(p for d in ("arena", "bots") for p in (ROOT / d).rglob("*.py"))


def upward_imports(path: Path, name: str | None = None) -> list[str]:
    """The imports of ``path`` (module ``name``, by default its own) that run upward."""
    me = rank(name or module_name(path))
    if me is None:
        return []
    bad = []
    for line, target in imports_of(path):
        r = rank(target)
        if r is not None and r > me:
            bad.append(f"{path.name}:{line} imports {target}")
    return sorted(set(bad))


def test_rank_knows_the_layers():
    assert rank("arena.engine.step") == 1
    assert rank("arena.run.store") == 4
    assert rank("bots.simple") == 2
    assert rank("arena.env.gym") == 3
    assert rank("arena.cli.main") == 7
    assert rank("numpy") is None


def test_checker_catches_a_function_local_upward_import(tmp_path):
    """The checker must see imports inside functions, or the test below proves nothing."""
    fake = tmp_path / "probe.py"
    fake.write_text("import numpy\n\n\ndef f():\n    from arena.run.store import RunStore\n    return RunStore\n")
    assert upward_imports(fake, "arena.engine.probe") == ["probe.py:5 imports arena.run.store"]
    assert upward_imports(fake, "arena.analysis.probe") == []


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_from_a_layer_above_it(path):
    assert upward_imports(path) == []
