"""How the commands write what they built: report blocks as tables, data as JSON or YAML, and the
progress bar of a long simulation."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from pysched.cli.common import Output, TableFormat

PROGRESS_DELAY = 1.0  # seconds a simulation takes before the progress bar appears


def table_style(fmt: TableFormat) -> TableFormat:
    """``auto``: rich on a terminal, else plain."""
    if fmt == TableFormat.auto:
        return TableFormat.rich if sys.stdout.isatty() else TableFormat.plain
    return fmt


def print_blocks(blocks: list, fmt: TableFormat, no_color: bool) -> None:
    """Draw report blocks on stdout in the chosen table format."""
    style = table_style(fmt)
    if style == TableFormat.rich:
        from pysched.report.table import make_console, render_blocks
        render_blocks(blocks, make_console(color=not no_color))
    else:
        from pysched.report.plain import render_blocks as render_plain_blocks
        sys.stdout.write(render_plain_blocks(blocks, style.value))


def write_data(data: object, output: Output) -> None:
    """``-o json`` or ``-o yaml``."""
    from pysched.report.serialize import to_json, to_yaml
    sys.stdout.write(to_json(data) if output == Output.json else to_yaml(data))


def emit(output: Output, data: Callable[[], object], blocks: Callable[[], list], fmt: TableFormat,
         no_color: bool) -> None:
    """The one output step: the data as JSON/YAML, or the report blocks as tables."""
    if output == Output.table:
        print_blocks(blocks(), fmt, no_color)
    else:
        write_data(data(), output)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


@contextlib.contextmanager
def progress_bar(quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A delayed progress bar on stderr (only on a terminal, never with -q), else None."""
    if quiet or not stderr_is_terminal():
        yield None
        return
    from pysched.report.progress import DelayedProgress
    with DelayedProgress(delay=PROGRESS_DELAY) as progress:
        yield progress
