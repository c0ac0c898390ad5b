"""Rich tables for people at a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from pysched.scheduler.simulation import SimulationResult


def render_simulation(result: SimulationResult, console: Console | None = None) -> None:
    console = console or Console()
    last: dict[str, object] = {}
    for c in result.cycles:
        last[c.pod] = c
    table = Table(title=f"pysched simulate: {len(last)} pending pod(s) on {result.nodes} node(s)")
    table.add_column("pod")
    table.add_column("outcome")
    table.add_column("node / reason")
    for key, c in last.items():
        detail = c.node or c.nominated_node or c.message or ""  # type: ignore[attr-defined]
        table.add_row(key, c.outcome, detail)  # type: ignore[attr-defined]
    console.print(table)
    console.print(f"scheduled {len(result.bindings)}, pending {len(result.pending)}")
