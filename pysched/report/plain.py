"""The ``-o table`` report as plain text tables (tabulate): for pipes, files and GitHub markdown.

``plain`` draws no boxes: a dashed rule under each header (tabulate's ``simple``), one line per row, no
colour, no trailing blanks, so the output greps and diffs cleanly. ``github`` gives markdown: headings and
GitHub tables.
"""

from __future__ import annotations

from tabulate import tabulate

from pysched.report.document import DEFAULT_MAX_ROWS, Block, Heading, Table, Text, build_document
from pysched.scheduler.simulation import SimulationResult

FORMATS = ("plain", "github")
_TABLEFMT = {"plain": "simple", "github": "github"}


def render_plain(result: SimulationResult, fmt: str = "plain", *, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """The report of ``result`` as text; ``fmt`` is ``plain`` or ``github``."""
    return render_blocks(build_document(result, max_rows), fmt)


def render_blocks(blocks: list[Block], fmt: str = "plain") -> str:
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
            if not md and isinstance(prev, Text | Heading):
                parts[-1] += "\n" + block.text
            else:
                parts.append(_md_escape(block.text) if md else block.text)
        else:
            parts.append(_table(block, fmt))
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


def _table(t: Table, fmt: str) -> str:
    md = fmt == "github"
    esc = _md_escape if md else _one_line
    rows = [[esc(_one_line(c.text)) for c in row] for row in t.rows]
    align = [c.justify for c in t.columns]
    headers: list[str] = [esc(c.header) for c in t.columns] if t.show_header or md else []
    tablefmt = _TABLEFMT[fmt] if headers else "plain"
    body = tabulate(rows, headers=headers, tablefmt=tablefmt, colalign=align, disable_numparse=True)
    title = f"**{_md_escape(t.title)}**" if md else t.title
    lines = [title, "", body] if md else [title, body]
    if t.notes:
        notes = [_md_escape(n) for n in t.notes] if md else t.notes
        lines.append("\n".join(notes) if not md else "\n" + "\n\n".join(notes))
    return "\n".join(lines)
