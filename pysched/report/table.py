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
from pysched.report.layout import lay_out
from pysched.scheduler.simulation import SimulationResult

STYLES = {OK: "green", WARN: "yellow", BAD: "red", INFO: "cyan", DIM: "dim", STRONG: "bold"}
BAR_WIDTH = 10
BAR_FULL, BAR_EMPTY = "█", "░"


def make_console(*, color: bool = True, width: int | None = None) -> Console:
    """The stdout console of ``-o table``: colour only on a terminal and unless ``color`` is off."""
    return Console(highlight=False, emoji=False, width=width, color_system="auto" if color else None)


def render_simulation(result: SimulationResult, console: Console | None = None, *,
                      max_rows: int = DEFAULT_MAX_ROWS, data: object = None) -> None:
    """Print the report of ``result`` on ``console`` (stdout by default)."""
    render_blocks(build_document(result, max_rows, data), console or make_console())  # type: ignore[arg-type]


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


def cell_text(cell: Cell, text: str | None = None, bars: bool = True) -> RichText:
    style = STYLES.get(cell.style, "")
    text = cell.text if text is None else text
    if cell.bar is None or not bars:
        return RichText(text, style=style)
    frac = min(max(cell.bar, 0.0), 1.0)
    filled = round(frac * BAR_WIDTH)
    if filled == 0 and frac > 0:
        filled = 1  # something is requested: never draw an empty bar
    out = RichText()
    out.append(BAR_FULL * filled, style=style)
    out.append(BAR_EMPTY * (BAR_WIDTH - filled), style="dim")
    out.append(" " + text)
    return out


_GAP = 3  # SIMPLE_HEAD without edges: a padding blank, the separator blank, a padding blank


def _table(t: Table, console: Console) -> None:
    lay = lay_out(t, console.width, gap=_GAP, bar_width=BAR_WIDTH)
    console.print(RichText(t.title, style="bold"))
    table = RichTable(box=box.SIMPLE_HEAD,
                      show_header=t.show_header, header_style="bold", show_edge=False, pad_edge=False)
    for col, header, w in zip(t.columns, lay.headers, lay.widths, strict=True):
        # the layout wrapped every cell already: rich must neither wrap nor shrink again
        table.add_column(RichText(header), justify=col.justify,  # type: ignore[arg-type]
                         no_wrap=True, width=w, min_width=w)
    for row, texts in zip(t.rows, lay.rows, strict=True):
        table.add_row(*(cell_text(c, x, lay.bars) for c, x in zip(row, texts, strict=True)))
    console.print(table, crop=False)
    for note in [*t.notes, *([lay.legend] if lay.legend else [])]:
        console.print(RichText(note, style="dim"))
