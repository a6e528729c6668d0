"""The code checks CI depends on, run by the test suite: ruff's lint and format, and mypy.

They are tests so that the README's one test command is the whole of CI: a
change that breaks the lint, the formatting or the types fails ``pytest``
like any other regression.  The versions are pinned in the ``[dev]`` extra
(part of ``[test]``), so every checkout judges the code the same way.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _check(module: str, *args: str) -> None:
    """Run ``python -m module args`` in the checkout; fail with its output when it finds anything."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {module} must be installed (pip install -e '.[test]' brings it)")
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{module} {' '.join(args)}:\n{done.stdout}{done.stderr}"


def test_ruff_finds_no_lint():
    _check("ruff", "check", ".")


def test_the_code_is_formatted_by_ruff():
    _check("ruff", "format", "--check", ".")


@pytest.mark.slow
def test_mypy_finds_no_type_errors():
    _check("mypy")
