"""The project as a package: a wheel that runs from anywhere, plain pytest, the numba cache key.

The wheel test builds the wheel, installs it into a fresh virtualenv in a
temporary folder, and runs the installed ``arena`` from a folder that is not
the checkout.

How the dependencies get there: the venv sees exactly the distributions the
wheel's own metadata requires (``Requires-Dist`` without extras), and the ones
those require, linked from the environment running the tests into a folder
that a ``.pth`` file puts on the venv's path.  So the commands fail on any
dependency pyproject forgets, as after a user's ``pip install``, and no
package outside that closure is reachable.  pip installing them afresh
proved no more and was most of the test's time: 22 s of unpacking numba,
scipy, pandas, pyarrow, matplotlib and the rest on an idle 2-core machine,
over a minute under the suite's load.  ``arena`` and ``bots`` come from the
wheel, which the test checks; numba compiles the installed copy afresh.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _games_played(output: str) -> int:
    """The games column of the 'random vs simple' row of arena run's results table."""
    rows = [line.split() for line in output.splitlines() if line.startswith("random vs simple")]
    assert len(rows) == 1, output
    return int(rows[0][3])


def _applies(requirement: Requirement) -> bool:
    """Whether pip installs this requirement for a plain install (no extras, this platform)."""
    return requirement.marker is None or requirement.marker.evaluate({"extra": ""})


def _required_distributions(wheel: Path) -> dict[str, importlib.metadata.Distribution]:
    """The distributions ``pip install <wheel>`` brings: its Requires-Dist, and theirs, as installed here."""
    metadata = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    message = email.parser.Parser().parsestr(zipfile.ZipFile(wheel).read(metadata).decode())
    todo = [r for r in map(Requirement, message.get_all("Requires-Dist") or []) if _applies(r)]
    found: dict[str, importlib.metadata.Distribution] = {}
    while todo:
        requirement = todo.pop()
        key = canonicalize_name(requirement.name)
        if key in found:
            continue
        dist = importlib.metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), (requirement, dist.version)
        found[key] = dist
        todo += [r for r in map(Requirement, dist.requires or []) if _applies(r)]
    return found


def _link_distributions(dists: dict[str, importlib.metadata.Distribution], into: Path) -> None:
    """Link each distribution's top-level files and folders (packages, .libs, .dist-info) into ``into``."""
    into.mkdir()
    for dist in dists.values():
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (into / top).exists():
                (into / top).symlink_to(source)


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_runs_from_any_folder(tmp_path):
    timings: dict[str, float] = {}
    t = time.perf_counter()
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], cwd=tmp_path)
    (wheel,) = dist.glob("gin_arena-*.whl")
    timings["wheel"] = time.perf_counter() - t

    # The wheel holds every package and subpackage of the checkout, the
    # presets, the example configs and the licence.
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg in ("arena", "bots"):
        for py in (ROOT / pkg).rglob("*.py"):
            assert py.relative_to(ROOT).as_posix() in names, f"{py.relative_to(ROOT)} is missing from the wheel"
    for toml in [*(ROOT / "arena" / "presets").glob("*.toml"), *(ROOT / "arena" / "configs").glob("*.toml")]:
        assert toml.relative_to(ROOT).as_posix() in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert "bots/learned.npz" in names  # the learned bot's weights: package data, loaded by bots/learned.py

    t = time.perf_counter()
    # pip must not see the checkout: a PYTHONPATH naming it (as a worktree's
    # tests use) shows pip gin-arena "already installed" and it skips the wheel.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-compile",
            "--no-deps",
            str(wheel),
        ],
        cwd=tmp_path,
        env=clean,
    )
    dists = _required_distributions(wheel)
    assert {"numba", "numpy", "pandas", "pyarrow", "matplotlib", "fastapi"} <= set(dists), sorted(dists)
    assert not {"torch", "gymnasium", "pytest", "mypy"} & set(dists), sorted(dists)  # extras stay out
    _link_distributions(dists, tmp_path / "deps")
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path)
    # Lines of a .pth are appended to sys.path after the venv's own site-packages, so the wheel's arena
    # wins over anything found there.
    Path(purelib.strip(), "_declared_deps.pth").write_text(f"{tmp_path / 'deps'}\n")
    timings["venv + install"] = time.perf_counter() - t

    work = tmp_path / "elsewhere"  # no configs/, no arena/ here
    work.mkdir()
    env = dict(clean)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    arena = str(venv / "bin" / "arena")

    where = _run(
        [str(python), "-c", "import arena, bots; print(arena.__file__); print(bots.__file__)"], cwd=work, env=env
    )
    assert all(Path(line).is_relative_to(venv) for line in where.split()), where
    # Nothing outside the closure is reachable: what the tests' environment has besides (torch, pytest) is not.
    unseen = "import importlib.util as u; print([m for m in ('torch', 'pytest', 'tqdm') if u.find_spec(m) is None])"
    assert _run([str(python), "-c", unseen], cwd=work, env=env).strip() == "['torch', 'pytest']"

    t = time.perf_counter()
    import arena as checkout

    assert _run([arena, "--version"], cwd=work, env=env).startswith(f"gin-arena {checkout.__version__} ")
    standard = _run([arena, "rules", "standard"], cwd=work, env=env)
    assert "knock_limit" in standard and "unknown preset" not in standard
    assert any(
        line.startswith("*big_gin") and "false" in line
        for line in _run([arena, "rules", "eaai"], cwd=work, env=env).splitlines()
    )

    # learned: a built-in whose weights are package data, found in the installed wheel.
    (work / "tiny.toml").write_text('name = "tiny"\nbots = ["random", "simple", "learned"]\nseed = 3\nrules = "eaai"\n')
    out = _run([arena, "run", "tiny.toml", "--games", "20", "--workers", "1", "--quiet"], cwd=work, env=env)
    assert _games_played(out) == 20
    assert any(line.startswith("simple vs learned") and line.split()[3] == "20" for line in out.splitlines()), out
    assert (work / "results" / "tiny" / "report.html").is_file()
    # A shipped example by name, from a folder without configs/.
    out = _run([arena, "run", "quick", "--games", "20", "--workers", "1", "--quiet", "--no-report"], cwd=work, env=env)
    assert _games_played(out) == 20 and (work / "results" / "quick").is_dir()
    timings["commands"] = time.perf_counter() - t
    print("packaging timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))


def test_plain_pytest_command_finds_the_checkout_modules():
    # `pytest` (the script, not `python -m pytest`) must import tests.scripted:
    # pyproject's pythonpath puts the checkout's root on sys.path.
    script = Path(sys.executable).parent / "pytest"
    if not script.exists():
        pytest.skip("no pytest script beside this interpreter")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [
        str(script),
        "--collect-only",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        "tests/engine/test_engine_rules.py",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"test_engine_rules\.py(::|: \d+)", proc.stdout), proc.stdout
    # The setting is what does it: without it the same collection fails.
    proc = subprocess.run([*cmd, "-o", "pythonpath="], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "No module named 'tests'" in proc.stdout + proc.stderr


def test_the_numba_cache_key_covers_every_source_file_in_subpackages(tmp_path, monkeypatch):
    from arena.engine import _jit

    for rel in ("arena/__init__.py", "arena/run/worker.py", "arena/analysis/deep/x.py", "bots/simple.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"# {rel}\n")
    monkeypatch.setattr(_jit, "_ROOT", tmp_path)
    before = _jit._source_hash()
    assert _jit._source_hash() == before  # stable
    (tmp_path / "arena/analysis/deep/x.py").write_text("# edited\n")
    edited = _jit._source_hash()
    assert edited != before
    # Moving a file between subpackages changes the key too.
    (tmp_path / "arena/analysis/deep/x.py").rename(tmp_path / "arena/run/x.py")
    assert _jit._source_hash() != edited
    # Files that are not Python sources do not.
    moved = _jit._source_hash()
    (tmp_path / "arena/run/notes.toml").write_text("a = 1\n")
    assert _jit._source_hash() == moved


def test_the_checkouts_configs_folder_links_to_the_shipped_examples():
    # One copy of each example: configs/ (the README's path) links into the package's arena/configs/,
    # so an edit through either path changes the one file the wheel ships.
    shipped = {p.name for p in (ROOT / "arena" / "configs").glob("*.toml")}
    linked = {p.name for p in (ROOT / "configs").glob("*.toml")}
    assert linked == shipped
    for name in linked:
        p = ROOT / "configs" / name
        assert p.is_symlink() and p.resolve() == (ROOT / "arena" / "configs" / name).resolve(), name
