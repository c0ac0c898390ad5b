"""Rich tables for people at a terminal: the ``-o table`` report with boxes, bars and colour.

The layout comes from ``document.build_document``; this module only draws it. Colour is whatever the
console allows: none when the console is not a terminal, when ``NO_COLOR`` is set or with ``--no-color``.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text as RichText

from pysched.report.document import (
    BAD,
    DEFAULT_MAX_ROWS,
    DIM,
    INFO,
    OK,
    STRONG,
    WARN,
    Block,
    Cell,
    Heading,
    Table,
    Text,
    build_document,
)
from pysched.scheduler.simulation import SimulationResult

STYLES = {OK: "green", WARN: "yellow", BAD: "red", INFO: "cyan", DIM: "dim", STRONG: "bold"}
BAR_WIDTH = 10
BAR_FULL, BAR_EMPTY = "█", "░"


def make_console(*, color: bool = True, width: int | None = None) -> Console:
    """The stdout console of ``-o table``: colour only on a terminal and unless ``color`` is off."""
    return Console(highlight=False, emoji=False, width=width, color_system="auto" if color else None)


def render_simulation(result: SimulationResult, console: Console | None = None, *,
                      max_rows: int = DEFAULT_MAX_ROWS) -> None:
    """Print the report of ``result`` on ``console`` (stdout by default)."""
    render_blocks(build_document(result, max_rows), console or make_console())


def render_blocks(blocks: list[Block], console: Console) -> None:
    for i, block in enumerate(blocks):
        if i and not (isinstance(block, Text) and isinstance(blocks[i - 1], Text | Heading)):
            console.print()
        if isinstance(block, Heading):
            _heading(block, console)
        elif isinstance(block, Text):
            console.print(RichText(block.text, style=STYLES.get(block.style, "")), soft_wrap=False)
        else:
            _table(block, console)


def _heading(h: Heading, console: Console) -> None:
    if h.level == 1:
        console.rule(RichText(h.text, style="bold"), align="left")
    elif h.level == 2:
        console.print(RichText(h.text, style="bold underline"))
    else:
        console.print(RichText(h.text, style="bold"))


def cell_text(cell: Cell) -> RichText:
    style = STYLES.get(cell.style, "")
    if cell.bar is None:
        return RichText(cell.text, style=style)
    frac = min(max(cell.bar, 0.0), 1.0)
    filled = round(frac * BAR_WIDTH)
    if filled == 0 and frac > 0:
        filled = 1  # something is requested: never draw an empty bar
    out = RichText()
    out.append(BAR_FULL * filled, style=style)
    out.append(BAR_EMPTY * (BAR_WIDTH - filled), style="dim")
    out.append(" " + cell.text)
    return out


def _table(t: Table, console: Console) -> None:
    console.print(RichText(t.title, style="bold"))
    table = RichTable(box=box.SIMPLE_HEAD,
                      show_header=t.show_header, header_style="bold", show_edge=False, pad_edge=False)
    for col in t.columns:
        table.add_column(RichText(col.header), justify=col.justify,  # type: ignore[arg-type]
                         no_wrap=not col.wrap, overflow="fold")
    for row in t.rows:
        table.add_row(*(cell_text(c) for c in row))
    console.print(table)
    for note in t.notes:
        console.print(RichText(note, style="dim"))
