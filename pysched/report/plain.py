"""The ``-o table`` report as plain text tables (tabulate): for pipes, files and GitHub markdown.

``plain`` draws no boxes: a dashed rule under each header (tabulate's ``simple``), one line per row, no
colour, no trailing blanks, so the output greps and diffs cleanly. ``github`` gives markdown: headings and
GitHub tables.
"""

from __future__ import annotations

import os
import shutil

from tabulate import tabulate

from pysched.report.document import DEFAULT_MAX_ROWS, Block, Heading, Table, Text, build_document
from pysched.report.layout import lay_out, wrap_text
from pysched.scheduler.simulation import SimulationResult

FORMATS = ("plain", "github")
_TABLEFMT = {"plain": "simple", "github": "github"}
PIPE_WIDTH = 100  # the width of plain text when stdout is no terminal and $COLUMNS is not set
_GAP = 2  # tabulate's "simple" puts two spaces between columns


def output_width() -> int:
    """$COLUMNS, else the terminal's width, else ``PIPE_WIDTH``; at least 40."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(int(env), 40)
    return max(shutil.get_terminal_size((PIPE_WIDTH, 24)).columns, 40)


def render_plain(result: SimulationResult, fmt: str = "plain", *, max_rows: int = DEFAULT_MAX_ROWS,
                 width: int | None = None, data: object = None) -> str:
    """The report of ``result`` as text; ``fmt`` is ``plain`` or ``github``."""
    return render_blocks(build_document(result, max_rows, data), fmt, width)  # type: ignore[arg-type]


def render_blocks(blocks: list[Block], fmt: str = "plain", width: int | None = None) -> str:
    """Plain tables fit ``width`` (default: ``output_width()``); GitHub markdown is never wrapped."""
    width = output_width() if width is None else width
    if fmt not in FORMATS:
        raise ValueError(f"unknown plain format {fmt!r}")
    md = fmt == "github"
    parts: list[str] = []
    for i, block in enumerate(blocks):
        prev = blocks[i - 1] if i else None
        if isinstance(block, Heading):
            parts.append(_heading(block, md))
        elif isinstance(block, Text):
            # consecutive text lines stay together (in markdown each line is a paragraph)
            text = block.text  # free-standing lines (messages) stay whole: they are what people grep for
            if not md and isinstance(prev, Text | Heading):
                parts[-1] += "\n" + text
            else:
                parts.append(_md_escape(text) if md else text)
        else:
            parts.append(_table(block, fmt, width))
    text = "\n\n".join(parts)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _heading(h: Heading, md: bool) -> str:
    if md:
        return "#" * (h.level + 1) + " " + _md_escape(h.text)
    if h.level == 1:
        return f"== {h.text} =="
    if h.level == 2:
        return f"-- {h.text} --"
    return h.text


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


def _table(t: Table, fmt: str, width: int) -> str:
    md = fmt == "github"
    align = [c.justify for c in t.columns]
    notes = list(t.notes)
    headers: list[str]
    if md:
        rows = [[_md_escape(_one_line(c.text)) for c in row] for row in t.rows]
        headers = [_md_escape(c.header) for c in t.columns]
    else:
        lay = lay_out(t, width, gap=_GAP, header_pad=2)  # tabulate widens a column to its header + 2
        rows = lay.rows
        headers = lay.headers if t.show_header else []
        if lay.legend:
            notes.append(lay.legend)
    tablefmt = _TABLEFMT[fmt] if headers else "plain"
    body = tabulate(rows, headers=headers, tablefmt=tablefmt, colalign=align, disable_numparse=True)
    title = f"**{_md_escape(t.title)}**" if md else wrap_text(t.title, width, "  ")
    lines = [title, "", body] if md else [title, body]
    if notes:
        if md:
            lines.append("\n" + "\n\n".join(_md_escape(n) for n in notes))
        else:
            lines.append("\n".join(wrap_text(n, width, "  ") for n in notes))
    return "\n".join(lines)
