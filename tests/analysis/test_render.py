"""Tables, prose and figures to Markdown and HTML (arena/analysis/render.py): what comes in is shown, never run."""

from __future__ import annotations

import re

import pytest

from arena.analysis.render import (
    Bold,
    Table,
    html_figure,
    html_page,
    html_table,
    html_text,
    md_code,
    md_escape,
    md_figure,
    md_table,
    md_text,
)

HOSTILE = "a|b<script>alert(1)</script>"


def md_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, split as GitHub does: at every pipe not escaped by a backslash."""
    assert line.startswith("| ") and line.endswith(" |"), line
    cells = re.split(r"(?<!\\) \| ", line[2:-2])
    return [re.sub(r"\\(.)", r"\1", c) for c in cells]  # the backslash escapes, undone


def test_a_hostile_cell_stays_one_cell_in_markdown():
    t = Table(["bot", "win rate"], [[HOSTILE, "51.0%"], ["simple", "49.0%"]], "lr")
    lines = md_table(t).split("\n")
    assert lines[1] == "|:--|--:|"
    assert md_cells(lines[2]) == [HOSTILE, "51.0%"]  # two cells, the name read back whole
    assert not re.search(r"(?<!\\)<", md_table(t))  # every < escaped: no raw HTML for a renderer to pass through
    assert md_cells(lines[3]) == ["simple", "49.0%"]


def test_markdown_escapes_markup_backslashes_and_line_breaks():
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("x\\|y") == "x\\\\\\|y"  # a backslash of its own cannot un-escape the pipe
    assert md_escape("two\nlines\r\nhere") == "two lines here"
    assert md_escape("*bold* `code` [x](javascript:alert(1)) &amp;") == (
        "\\*bold\\* \\`code\\` [x]\\(javascript:alert(1)) \\&amp;"
    )
    assert md_escape("[1.0%, 2.0%] knock_at=3") == "[1.0%, 2.0%] knock_at=3"  # ordinary cells unchanged
    row = md_table(Table(["a"], [["p\nq|r"]])).split("\n")
    assert len(row) == 3 and md_cells(row[2]) == ["p q|r"] and row[1] == "|--|"


def test_a_hostile_cell_is_text_in_html():
    page = html_table(Table(["bot", "n"], [[HOSTILE, 3]], "lr"))
    assert "<script" not in page
    assert "<td>a|b&lt;script&gt;alert(1)&lt;/script&gt;</td>" in page
    assert '<td class="r">3</td>' in page and '<th class="r">n</th>' in page


def test_prose_bolds_only_what_is_marked_bold():
    text = ["Top: ", Bold(HOSTILE), " at **+5** Elo"]
    assert md_text(text) == "Top: **a\\|b\\<script\\>alert(1)\\</script\\>** at \\*\\*+5\\*\\* Elo"
    assert html_text(text) == "Top: <b>a|b&lt;script&gt;alert(1)&lt;/script&gt;</b> at **+5** Elo"
    assert html_text("plain <i>") == "plain &lt;i&gt;"


def test_rows_that_do_not_fit_the_header_are_refused():
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        md_table(Table(["a", "b", "c"], [["1", "2"]]))
    with pytest.raises(ValueError, match="alignment"):
        html_table(Table(["a", "b"], [["1", "2"]], "l"))


def test_figures_link_in_markdown_and_embed_in_html(tmp_path):
    png = tmp_path / "heatmap-a|b<c>.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    lines = md_figure("heat<map>", "plots/heatmap-a|b<c>.png", ["win rate of ", Bold("x|y")])
    assert lines == ["![heat\\<map\\>](plots/heatmap-a%7Cb%3Cc%3E.png)", "", "*win rate of **x\\|y***", ""]
    assert md_figure("k", "plots/curves.png") == ["![k](plots/curves.png)", ""]
    fig = html_figure('a"b', png, "caption <x>")
    assert fig.startswith('<figure><img alt="a&quot;b" src="data:image/png;base64,iVBORw0KGgpmYWtl">')
    assert fig.endswith("<figcaption>caption &lt;x&gt;</figcaption></figure>")


def test_code_fence_outlasts_backticks_and_page_escapes_its_title():
    assert md_code("a = 1", "toml") == "```toml\na = 1\n```"
    assert md_code('x = "```"') == '````\nx = "```"\n````'
    page = html_page("Sweep <b>", ["<p>body</p>"], "p{color:red}")
    assert "<title>Sweep &lt;b&gt;</title>" in page and "<p>body</p>" in page and page.endswith("</body></html>")
