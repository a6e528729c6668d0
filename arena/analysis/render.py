"""Tables, prose and figures to Markdown and to self-contained HTML, escaped.

Both reports (a run's, :mod:`arena.analysis.report`, and a sweep's,
:mod:`arena.analysis.sweep.report`) write each section twice: Markdown with
figures linked from ``plots/``, and one HTML file with the figures embedded.
Much of what they show comes from outside: bot names, rules labels, error
texts a bot raised.  So no caller pastes a value into either format itself:

* :func:`md_table` / :func:`html_table` render a :class:`Table`;
* :func:`md_text` / :func:`html_text` render prose, where :class:`Bold`
  pieces are shown in bold;
* :func:`md_figure` / :func:`html_figure` link or embed a PNG;
* :func:`md_code` fences a block of text (a config file);
* :func:`html_page` wraps the body;
* :func:`write_file` writes an output file (a report, a table, a figure), inside
  a folder :func:`own_folder` made;
* :func:`csv_text` renders a table as CSV, text cells defused for spreadsheets.

Escaping.  Markdown: a ``|`` would end a table cell and a line break the
row, ``<`` would open raw HTML (``<script>`` runs in many renderers), and
``*``, ````` ``, ``&`` or ``](`` would turn text into markup, so each is
backslash-escaped (a backslash too) and line breaks become spaces.  HTML:
:func:`html.escape` with quotes.  A bot named ``a|b<script>`` shows as
exactly that in both.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from arena.settings.botref import FORMULA_STARTS

__all__ = [
    "Bold",
    "csv_text",
    "own_folder",
    "Table",
    "md_escape",
    "md_table",
    "html_table",
    "md_text",
    "html_text",
    "md_code",
    "md_figure",
    "html_figure",
    "html_page",
    "text_width",
    "write_file",
]


class Table(NamedTuple):
    """A table to render: header, rows of cells (any value, shown with ``str``) and alignment.

    ``align`` has one letter per column, ``l`` or ``r`` (right-aligned
    numbers); empty: no alignment is set.
    """

    head: Sequence[str]
    rows: Sequence[Sequence[Any]]
    align: str = ""


def text_width(values: Iterable[Any], least: int) -> int:
    """The width of a terminal table's left column that shows every value whole, at least ``least``
    (names are never cut: two variants of one bot differ at the end, ``early-knock:knock_at=5``)."""
    return max([least, *(len(str(v)) for v in values)])


class Bold(str):
    """A piece of prose shown in bold (``**...**`` in Markdown, ``<b>`` in HTML)."""


#: Prose: one string, or a sequence of strings and :class:`Bold` pieces.
Text = str | Sequence[str]

_MD_SPECIAL = re.compile(r"([\\`*|<>&])")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def md_escape(value: Any) -> str:
    """``str(value)`` as literal Markdown text: markup characters escaped, line breaks as spaces."""
    s = _LINE_BREAK.sub(" ", str(value))
    return _MD_SPECIAL.sub(r"\\\1", s).replace("](", "]\\(")


def _pieces(text: Text) -> Iterable[str]:
    return (text,) if isinstance(text, str) else text


def md_text(text: Text) -> str:
    """Prose as Markdown: every piece escaped, :class:`Bold` pieces in ``**``."""
    return "".join(f"**{md_escape(p)}**" if isinstance(p, Bold) else md_escape(p) for p in _pieces(text))


def html_text(text: Text) -> str:
    """Prose as HTML: every piece escaped, :class:`Bold` pieces in ``<b>``."""
    return "".join(f"<b>{html.escape(p)}</b>" if isinstance(p, Bold) else html.escape(p) for p in _pieces(text))


def _check(t: Table) -> None:
    if t.align and len(t.align) != len(t.head):
        raise ValueError(f"table alignment '{t.align}' has {len(t.align)} letters for {len(t.head)} columns")
    for r in t.rows:
        if len(r) != len(t.head):
            raise ValueError(f"a table row has {len(r)} cells for {len(t.head)} columns: {list(r)!r:.80}")


def md_table(t: Table) -> str:
    """A GitHub-flavoured Markdown table; every cell escaped (:func:`md_escape`)."""
    _check(t)
    rule = {"l": ":--", "r": "--:"}
    out = [
        "| " + " | ".join(md_escape(h) for h in t.head) + " |",
        "|" + "|".join(rule[a] for a in t.align) + "|" if t.align else "|" + "|".join("--" for _ in t.head) + "|",
    ]
    out += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in t.rows]
    return "\n".join(out)


def html_table(t: Table) -> str:
    """An HTML table; every cell escaped, right-aligned columns with ``class="r"``."""
    _check(t)
    cls = [' class="r"' if a == "r" else "" for a in t.align] if t.align else [""] * len(t.head)
    out = [
        "<table>",
        "<thead><tr>" + "".join(f"<th{c}>{html.escape(str(h))}</th>" for h, c in zip(t.head, cls)) + "</tr></thead>",
        "<tbody>",
    ]
    for r in t.rows:
        out.append("<tr>" + "".join(f"<td{c}>{html.escape(str(v))}</td>" for v, c in zip(r, cls)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def md_code(text: str, lang: str = "") -> str:
    """A fenced code block, its fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def md_figure(alt: str, link: str | Path, caption: Text = "") -> list[str]:
    """Markdown lines of a figure linked by relative path (``plots/x.png``), with an italic caption."""
    target = quote(Path(link).as_posix(), safe="/=,@+")
    out = [f"![{md_escape(alt)}]({target})", ""]
    if caption:
        out += [f"*{md_text(caption)}*", ""]
    return out


def html_figure(alt: str, png: Path, caption: Text = "") -> str:
    """A ``<figure>`` with the PNG embedded as base64 (the page needs no other file)."""
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    cap = f"<figcaption>{html_text(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">{cap}</figure>'


def html_page(title: str, body: Iterable[str], css: str) -> str:
    """A whole HTML document: ``title`` escaped, ``body`` (already HTML) and ``css`` as given."""
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{css}</style>",
        "</head><body>",
    ]
    return "\n".join([*head, *body, "</body></html>"])


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Write one output file whole (text as UTF-8), through a temp file renamed over ``path``.

    A run folder may come from elsewhere (a tarball, a shared ``results/``) with ``report.html`` a link to
    ``~/.bashrc``: an ``open(path, "w")`` writes through the link, into that file (and ``pairs.csv``'s
    lines begin with a bot name).  The rename replaces the link itself; and a crash mid-write leaves the
    earlier file, not half a page.  One line (:class:`~arena.run.store.StoreEnvError`) when refused.
    """
    from arena.run.store.files import atomic_write

    path = Path(path)
    atomic_write(path, data.encode("utf-8") if isinstance(data, str) else data)
    return path


def own_folder(path: str | Path) -> Path:
    """The folder ``path`` (a run's ``plots/``), made if missing, and a real folder: a link there is removed.

    :func:`write_file` replaces a link at the file's own name, but a figure written into
    ``plots/`` where ``plots`` is a link to ``~/Pictures`` (a run folder from a tarball) lands in
    that folder, over a file of the same name.  The folder is the report's own, so a link there is
    replaced by an empty folder, as a linked ``report.html`` is replaced by the page.
    """
    path = Path(path)
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


#: First characters of a CSV cell that a spreadsheet reads as a formula or a new cell (OWASP's list).
CSV_FORMULA_STARTS = FORMULA_STARTS + "\t\r"


def csv_text(table: Any) -> str:
    """``table`` (a DataFrame) as CSV, without its index, text cells that start a formula quoted with ``'``.

    A loaded bot's name can't start with ``=`` (:func:`arena.settings.botref.name_problem`), but a
    run folder from elsewhere holds whatever names its files say, and ``=HYPERLINK(..)`` in
    ``leaderboard.csv`` runs when the table is opened.  Only text cells change, so a negative number
    stays a number.
    """

    def defuse(v: Any) -> Any:
        return "'" + v if isinstance(v, str) and v and v[0] in CSV_FORMULA_STARTS else v

    text_cols = [c for c in table.columns if table[c].dtype.kind not in "biufcmM"]  # text, or mixed
    out = table.copy()
    for c in text_cols:
        out[c] = out[c].map(defuse)
    return out.to_csv(index=False)
