"""The docs site builds strictly, and its reference pages can't drift from the code.

``mkdocs build --strict`` fails on a broken link, a page missing from the nav or
an API reference that no longer resolves; the reference tables are checked
against the config keys, limits and rule settings they describe.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.settings.config import KEYS, LIMITS, SPRT_KEYS
from arena.settings.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _first_column(page: str) -> set[str]:
    """The backquoted names in the first column of every table of a docs page."""
    text = (DOCS / page).read_text()
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", text, flags=re.M))


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the [docs] extra (part of [test]) builds the site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    # The command reference is generated from the live app: every command and an option of each.
    for command in ("arena run", "arena submit", "arena league serve", "arena analyze"):
        assert command in cli
    assert "--games" in cli and "--scheduler" in cli
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "run_tournament" in api and "RunStore" in api


def test_config_reference_names_every_key_limit_and_sprt_key():
    names = _first_column("reference/config.md")
    assert set(KEYS) <= names, set(KEYS) - names
    assert set(LIMITS) <= names, set(LIMITS) - names
    assert set(SPRT_KEYS) <= names, set(SPRT_KEYS) - names


def test_rules_reference_names_every_setting_with_its_default():
    text = (DOCS / "reference/rules.md").read_text()
    for f in dataclasses.fields(Rules):
        row = re.search(rf"^\| `{f.name}` \| ([^|]+) \|", text, flags=re.M)
        assert row, f"reference/rules.md has no row for {f.name}"
        default = f.default if not isinstance(f.default, bool) else str(f.default).lower()
        assert str(default).strip('"') in row.group(1).replace(",", "").strip(' `"'), (f.name, row.group(1))


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    missing = sorted(p for p in pages if p not in nav and p != "bench/README.md")
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_user_docs_name_no_issue_numbers():
    """The docs speak of the product, not of its history (dated figures live in docs/bench/)."""
    offenders = []
    for p in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        if "bench" in p.relative_to(ROOT).parts:
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"\bissue \d+|\bseeds? 00\d", line, flags=re.I):
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_readme_is_short_and_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert "arena run configs/default.toml" in blocks[0]
    assert "pytest" in blocks[1]


def test_ci_runs_the_readmes_test_command_unchanged_as_its_last_line():
    """CI is the README's second command, nothing weaker: .ci/run only installs system packages before it."""
    readme = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)[1].strip()
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == readme
