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


def _default(p: Any) -> str:
    """A parameter's default as ``--help`` shows it: none for a flag that is off, for an empty value, or
    for a required argument (a default of 0 is shown: ``0 == False`` must not hide it)."""
    d = p.default
    if d is None or (isinstance(d, tuple | list) and not d) or getattr(p, "required", False):
        return ""
    if d is False and getattr(p, "is_flag", False):
        return ""
    return str(d)


def _rows(params: list[Any]) -> list[str]:
    rows = []
    for p in params:
        if getattr(p, "hidden", False):
            continue
        if p.param_type_name == "option":
            opts = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
        else:  # named as the usage line names it
            opts = f"`{p.metavar or p.name or ''}`"
        rows.append(f"| {opts} | {_cell(getattr(p, 'help', '') or '')} | {_cell(_default(p))} |")
    return ["| option | meaning | default |", "|---|---|---|", *rows, ""] if rows else []


def _command_docs(cmd: Any, path: list[str], parent: Any, level: int) -> list[str]:
    ctx = type(parent)(cmd, info_name=path[-1], parent=parent) if parent is not None else None
    name = " ".join(path)
    out = [f"{'#' * level} `{name}`", ""]
    if cmd.help:
        out += [cmd.help.strip(), ""]
    if ctx is not None:
        out += ["```text", cmd.get_usage(ctx).strip(), "```", ""]
        out += _rows(cmd.params)
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
    out: list[str] = ["## `arena`", "", "Options given before the command, for every command:", "", "```text"]
    out += [root.get_usage(top).strip(), "```", "", *_rows(root.params)]
    for name, cmd in sorted(root.commands.items()):
        out += _command_docs(cmd, ["arena", name], top, 2)
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
