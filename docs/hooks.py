"""MkDocs hooks: the command reference is generated from the live ``arena`` command.

``reference/cli.md`` holds the marker ``<!-- arena-cli -->``; this hook replaces
it with every command's usage, help and options, read from the typer app, so
the page can't drift from the commands.  (typer vendors its own click, which
click-based generators do not recognise; walking the tree here is a few lines.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # the checkout's arena, also when it is not installed
    sys.path.insert(0, ROOT)

MARKER = "<!-- arena-cli -->"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "&#124;")


def _command_docs(cmd: Any, path: list[str], parent: Any, level: int) -> list[str]:
    ctx = type(parent)(cmd, info_name=path[-1], parent=parent) if parent is not None else None
    name = " ".join(path)
    out = [f"{'#' * level} `{name}`", ""]
    if cmd.help:
        out += [cmd.help.strip(), ""]
    if ctx is not None:
        out += ["```text", cmd.get_usage(ctx).strip(), "```", ""]
        rows = []
        for p in cmd.params:
            if getattr(p, "hidden", False):
                continue
            if p.param_type_name == "option":
                opts = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
            else:
                opts = f"`{(p.name or '').upper()}`"
            default = p.default if p.param_type_name == "option" and p.default not in (None, False, ()) else ""
            rows.append(f"| {opts} | {_cell(getattr(p, 'help', '') or '')} | {_cell(default)} |")
        if rows:
            out += ["| option | meaning | default |", "|---|---|---|", *rows, ""]
    for sub_name, sub in sorted(getattr(cmd, "commands", {}).items()):
        out += _command_docs(sub, [*path, sub_name], ctx, min(level + 1, 4))
    return out


def cli_reference() -> str:
    """Markdown for every ``arena`` command, nested by group."""
    import typer.main

    from arena.cli.main import app

    root = typer.main.get_command(app)
    ctx_type = type(root.make_context("arena", [], resilient_parsing=True))
    top = ctx_type(root, info_name="arena")
    out: list[str] = []
    for name, cmd in sorted(root.commands.items()):
        out += _command_docs(cmd, ["arena", name], top, 2)
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
