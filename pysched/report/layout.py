"""Fitting a :class:`~pysched.report.document.Table` into a terminal width, for every text renderer.

The rules, in the order they are tried until the table fits:

1. the table as it is, one line per row;
2. without the bars of usage cells;
3. with the short headers (plugin names as their initials, ``TaintToleration`` -> ``TT``), and a legend
   under the table;
4. long text (reasons, messages) wrapped at spaces into the room the other columns leave.

Names (pods, nodes, zones: ``Column.key``) and columns marked ``wrap=False`` are never broken; a table whose
unbreakable columns alone are wider than the terminal is printed wider rather than break a name.
"""

from __future__ import annotations

import textwrap

from pysched.lazyclass import dataclass
from pysched.report.document import Table, abbreviate  # noqa: F401 - abbreviate is part of the rules


@dataclass(slots=True)
class Layout:
    widths: list[int]  # per column, the text width (padding and separators excluded)
    headers: list[str]
    rows: list[list[str]]  # cell texts, wrapped with "\n"
    bars: bool  # whether usage bars fit
    legend: str  # "TT = TaintToleration, ..." when short headers are used, else ""


def _longest_word(text: str) -> int:
    return max((len(w) for line in text.split("\n") for w in line.split()), default=0)


def _width(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def lay_out(t: Table, width: int, *, gap: int, bar_width: int = 0, header_pad: int = 0) -> Layout:
    """Column widths and wrapped cells of ``t`` for a ``width``-column terminal; ``gap`` is the space between
    two columns, ``bar_width`` the room a bar takes before a usage cell's text (0: the renderer draws none),
    ``header_pad`` what the renderer adds to a header's width (tabulate: 2)."""
    ncols = len(t.columns)
    has_bars = bar_width > 0 and any(c.bar is not None for row in t.rows for c in row)
    shorts = [c.short if c.short and c.short != c.header else "" for c in t.columns]
    if len({s for s in shorts if s}) != len([s for s in shorts if s]):
        shorts = [""] * ncols  # two columns would share a short header: keep the full ones

    def natural(bars: bool, short: bool) -> tuple[list[int], list[int], list[str]]:
        headers = [(shorts[i] or col.header) if short else col.header for i, col in enumerate(t.columns)]
        nat, low = [], []
        for i, col in enumerate(t.columns):
            head = headers[i] if t.show_header else ""
            texts = [row[i].text for row in t.rows if i < len(row)]
            cells = [len(x) + (bar_width + 1 if bars and row[i].bar is not None else 0)
                     for x, row in zip(texts, t.rows, strict=False)]
            pad = header_pad if t.show_header else 0
            n = max([_width(head) + pad, *cells], default=0)
            nat.append(n)
            if col.key or not col.wrap:
                low.append(n)
            else:
                low.append(max([_longest_word(head) + pad,
                                *(_longest_word(x) for x in texts)], default=0))
        return nat, low, headers

    def total(ws: list[int]) -> int:
        return sum(ws) + gap * max(ncols - 1, 0)

    bars, short = has_bars, False
    nat, low, headers = natural(bars, short)
    if total(nat) > width and bars:
        bars = False
        nat, low, headers = natural(bars, short)
    if total(nat) > width and any(shorts):
        short = True
        nat, low, headers = natural(bars, short)
    widths = list(nat)
    if total(nat) > width:
        widths = _shrink(t, nat, low, width - gap * max(ncols - 1, 0))
    rows = []
    for row in t.rows:
        out = []
        for i, cell in enumerate(row):
            w = widths[i] - (bar_width + 1 if bars and cell.bar is not None else 0)
            out.append(_wrap(cell.text, w) if t.columns[i].wrap and not t.columns[i].key else cell.text)
        rows.append(out)
    pad = header_pad if t.show_header else 0
    shown_headers = [_wrap(h, widths[i] - pad) if t.columns[i].wrap and not t.columns[i].key else h
                     for i, h in enumerate(headers)]
    legend = ""
    if short:
        legend = ", ".join(f"{s} = {c.header}" for s, c in zip(shorts, t.columns, strict=True) if s)
    return Layout(widths, shown_headers, rows, bars, legend)


def _shrink(t: Table, nat: list[int], low: list[int], room: int) -> list[int]:
    """Widths that fit ``room``: unbreakable columns keep theirs, the others share what is left in
    proportion to how much each would like beyond its longest word."""
    flexible = [i for i, col in enumerate(t.columns) if col.wrap and not col.key]
    widths = list(nat)
    fixed = sum(nat[i] for i in range(len(nat)) if i not in flexible)
    left = room - fixed - sum(low[i] for i in flexible)
    if left <= 0:
        for i in flexible:
            widths[i] = low[i]
        return widths
    want = {i: nat[i] - low[i] for i in flexible}
    wanted = sum(want.values()) or 1
    for i in flexible:
        widths[i] = low[i] + min(want[i], left * want[i] // wanted)
    # hand out what integer division left over, leftmost first
    spare = room - fixed - sum(widths[i] for i in flexible)
    for i in flexible:
        extra = min(spare, nat[i] - widths[i])
        widths[i] += extra
        spare -= extra
    return widths


def _wrap(text: str, width: int) -> str:
    if width <= 0 or _width(text) <= width:
        return text
    lines = []
    for para in text.split("\n"):
        lines.extend(textwrap.wrap(para, width, break_long_words=False, break_on_hyphens=False) or [""])
    return "\n".join(lines)


def wrap_text(text: str, width: int, indent: str = "") -> str:
    """A free-standing line (a note, a message) wrapped at spaces, continuation lines indented."""
    if width <= 0 or len(text) <= width:
        return text
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False,
                                   subsequent_indent=indent)) or text
