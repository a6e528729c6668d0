"""The wall holds when the arena itself runs as an ordinary user, as it does on a laptop.

The wall has two paths (:func:`arena.external.wall._namespaces`).  As root it
mounts with root's rights and drops each bot to its own user with
``setpriv``; as a user it has bubblewrap make a user namespace
(``--unshare-user --disable-userns``).  When the suite runs as a user,
``test_wall.py`` tries every attack against the second path itself; CI runs
as root, so this test runs ``test_wall.py``'s attack tests again as uid
65534 (``nobody``), in a private mount namespace where the only change is
that folders a user may not pass on the way to this Python (``/root`` for a
pyenv interpreter) are opened to show just that way.

It skips when the suite runs as a user (nothing to add) and, outside CI,
when the wall or ``unshare``/``setpriv`` are missing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.engine._jit import cache_dir
from arena.external.wall import wall_problem

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "the suite runs as a user: tests/bots/test_wall.py covers the user path itself"
    problem = wall_problem()
    if problem is not None:
        return problem
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} (util-linux) not found"
    return None


def _closed_folders(paths: list[Path]) -> dict[Path, set[str]]:
    """Each folder others may not pass on the way to ``paths``, with the entries in it those paths need."""
    closed: dict[Path, set[str]] = {}
    for path in paths:
        for parent in path.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                child = path.relative_to(parent).parts[0]
                closed.setdefault(parent, set()).add(child)
    return closed


def _opening_script(closed: dict[Path, set[str]], aliases: Path) -> str:
    """Shell lines (run as root in the new mount namespace) that open each closed folder just enough."""
    lines = ["set -e", "mount --make-rprivate /"]
    for i, (folder, children) in enumerate(sorted(closed.items())):
        alias = aliases / str(i)
        lines += [f"mkdir -p {alias}", f"mount --bind {shlex.quote(str(folder))} {alias}"]
        lines.append(f"mount -t tmpfs -o mode=0755 tmpfs {shlex.quote(str(folder))}")
        for child in sorted(children):
            target = shlex.quote(str(folder / child))
            src = alias / child
            lines.append(f"if [ -d {src} ]; then mkdir -p {target}; else touch {target}; fi")
            lines.append(f"mount --bind {src} {target}")
    return "\n".join(lines)


def test_every_attack_fails_when_the_arena_runs_as_an_ordinary_user():
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            raise AssertionError(f"CI must run the wall's user path: {missing}")
        pytest.skip(missing)
    needed = [Path(p).resolve() for p in (sys.executable, sys.prefix, sys.base_prefix, REPO)]
    needed += [Path(p).resolve() for p in sys.path if p and Path(p).is_dir()]
    closed = _closed_folders(needed)
    work = Path(tempfile.mkdtemp(prefix="wall-as-user-", dir="/tmp"))
    work.chmod(0o755)  # mkdtemp makes it 0700: nobody could reach its home in it
    try:
        home = work / "home"
        home.mkdir()
        home.chmod(0o777)
        aliases = work / "aliases"
        compiled = cache_dir()
        if compiled.is_dir():  # the kernels this run already compiled: the inner run loads, not compiles, them
            shutil.copytree(compiled, home / ".cache" / "gin-arena" / "numba" / compiled.name)
            for folder, dirs, _files in os.walk(home):
                for d in dirs:
                    os.chown(Path(folder) / d, NOBODY, NOBODY)
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "CI": "true",  # the inner run must not skip for want of the wall: it fails instead
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        inner = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-v", "-rs"]  # -v undoes -q
        inner += ["--basetemp", str(home / "pytest"), "tests/bots/test_wall.py", "-k", "every_attack"]
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
        drop += ["env", "-i", *(f"{k}={v}" for k, v in env.items())]
        script = _opening_script(closed, aliases)
        script += "\n" + shlex.join([*drop, "id", "-u"]) + "\n" + shlex.join([*drop, *inner])
        r = subprocess.run(
            ["unshare", "--mount", "sh", "-c", script],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert out.splitlines()[0] == str(NOBODY), out[:200]  # the inner run was not root
    assert "2 passed" in out and "skipped" not in out and "deselected" in out, out[-2000:]
