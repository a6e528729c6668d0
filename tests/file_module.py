"""A script or an example loaded from its file, for the tests that call its functions (not a test file).

``scripts/`` and ``examples/`` are not packages: a test imports one of their files by path, under a name of
its own, registered in ``sys.modules`` (dataclasses and pickling look the module up there).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_file(name: str, path: Path) -> ModuleType:
    """The module in ``path`` (relative to the checkout's root, or absolute), imported as ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
