"""The layers of CONTRIBUTING.md hold: no module imports from a layer above it.

Every import counts, function-local ones included, since a lazy import of an
upper layer is still a dependency running the wrong way.  The layers, top
(imported by all) to bottom (imports all):

settings -> engine -> bots (arena.botkit, arena.external, bots/) -> loading -> run -> analysis -> league
-> interfaces (cli, web)

Packages of one rank may import each other only one way: two of them that
import each other (a tie) are one tangled layer, and are refused too.
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
    ("arena.loading", 3),
    ("arena.run", 4),
    ("arena.analysis", 5),
    ("arena.league", 6),
    ("arena.cli", 7),
    ("arena.web", 7),
]


def package(module: str) -> str | None:
    """The package of :data:`LAYERS` that ``module`` belongs to (the longest prefix), or None."""
    best: str | None = None
    for prefix, _ in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best):
                best = prefix
    return best


def rank(module: str) -> int | None:
    pkg = package(module)
    return None if pkg is None else dict(LAYERS)[pkg]


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


def ties(files: list[tuple[Path, str]]) -> list[str]:
    """Pairs of packages of one rank that import each other, with one import each way, from ``(path, module)``."""
    seen: dict[tuple[str, str], str] = {}  # (importer package, imported package) -> where
    for path, name in files:
        me = package(name)
        if me is None:
            continue
        for line, target in imports_of(path):
            other = package(target)
            if other is not None and other != me and rank(other) == rank(me):
                seen.setdefault((me, other), f"{path.name}:{line} imports {target}")
    return sorted(
        f"{a} and {b} import each other ({seen[a, b]}; {seen[b, a]})" for a, b in seen if a < b and (b, a) in seen
    )


def test_rank_knows_the_layers():
    assert rank("arena.engine.step") == 1
    assert rank("arena.run.store") == 4
    assert rank("arena.run.store.repair") == 4
    assert rank("bots.simple") == 2
    assert rank("arena.loading.load") == 3
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


def test_checker_refuses_two_packages_of_one_rank_that_import_each_other(tmp_path):
    """A tie inside a rank (web imports cli, cli imports web) is refused; one way only is allowed."""
    web, cli = tmp_path / "viewer.py", tmp_path / "main.py"
    web.write_text("def f():\n    from arena.cli.show import replay_text\n    return replay_text\n")
    cli.write_text("import typer\nfrom arena.web.server import serve\n")
    one_way = [(cli, "arena.cli.main")]
    assert ties(one_way) == []
    assert ties([(web, "arena.web.viewer"), *one_way]) == [
        "arena.cli and arena.web import each other (main.py:2 imports arena.web.server; "
        "viewer.py:2 imports arena.cli.show)"
    ]
    # Packages of different ranks are the upward check's business, not a tie.
    assert ties([(web, "arena.run.probe"), *one_way]) == []


def test_no_two_packages_of_one_rank_import_each_other():
    assert ties([(p, module_name(p)) for p in sources()]) == []
