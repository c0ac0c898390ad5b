"""The ``-o table`` report of ``pysched capacity``, as renderer-neutral blocks (document.py)."""

from __future__ import annotations

import textwrap

from pysched.report.document import (
    BAD,
    OK,
    Block,
    Cell,
    Column,
    Heading,
    Table,
    Text,
    _limit,
    _more,
)
from pysched.scheduler.capacity import LIMIT_REACHED, CapacityAnswer, NodeTemplateAnswer, TemplateAnswer

WIDTH = 78  # the report stays readable at 80 columns


def _distribution(counts: dict[str, int], max_rows: int, what: str) -> Table:
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown, hidden = _limit(rows, max_rows)
    total = sum(counts.values()) or 1
    table = Table(f"Copies per {what}", [Column(what.capitalize()), Column("Copies", "right")],
                  [[Cell(name), Cell(str(n), bar=n / total)] for name, n in shown])
    if hidden:
        table.notes.append(_more(hidden, f"{what}s"))
    return table


def template_blocks(t: TemplateAnswer, max_rows: int, allow_preemption: bool) -> list[Block]:
    blocks: list[Block] = [Heading(f"{t.namespace}/{t.name}: {t.count} more cop{'y' if t.count == 1 else 'ies'} fit",
                                   2)]
    rows = [[Cell("Copies that fit"), Cell(str(t.count), OK)]]
    if t.limiting:
        rows.append([Cell("Runs out first"), Cell(f"{t.limiting} ({t.reasons[t.limiting]} nodes)")])
    if allow_preemption:
        rows.append([Cell("Victims"), Cell(", ".join(t.victims) if t.victims else "none")])
    blocks.append(Table("Answer", [Column(""), Column("")], rows, show_header=False))
    style = OK if t.stop_reason == LIMIT_REACHED else BAD
    for line in textwrap.wrap(f"Stopped by: {t.stop_reason}", WIDTH, subsequent_indent="  ",
                                break_on_hyphens=False):
        blocks.append(Text(line, style))
    if t.per_node:
        blocks.append(_distribution(dict(t.per_node), max_rows, "node"))
    if len(t.per_zone) > 1 or (t.per_zone and "(none)" not in t.per_zone):
        blocks.append(_distribution(dict(t.per_zone), max_rows, "zone"))
    return blocks


def node_template_blocks(nt: NodeTemplateAnswer, max_rows: int) -> list[Block]:
    if nt.needed is None:
        head = f"Node template {nt.name}: even {nt.max_nodes} node(s) do not make every pod fit"
    else:
        head = f"Node template {nt.name}: {nt.needed} node(s) needed"
    blocks: list[Block] = [Heading(head, 1)]
    rows = [[Cell("Nodes needed"), Cell("none found" if nt.needed is None else str(nt.needed),
                                        BAD if nt.needed is None else OK)],
            [Cell("Search (n tried)"), Cell(", ".join(str(n) for n in nt.probed))],
            [Cell("Copies per template"), Cell(str(nt.replicas))],
            [Cell("Pods placed"), Cell(str(len(nt.placement)))]]
    for resource, parts in nt.utilisation.items():
        text = f"{parts.get('all', 0.0):.0%} of the cluster"
        if "added" in parts and nt.needed:
            text += f", {parts['added']:.0%} of the added nodes"
        rows.append([Cell(f"{resource} requested after"), Cell(text, bar=parts.get("all", 0.0))])
    blocks.append(Table("Answer", [Column(""), Column("")], rows, show_header=False))
    if nt.unfittable:
        shown, hidden = _limit(nt.unfittable, max_rows)
        blocks.append(Heading("Pods no number of these nodes would fit", 2))
        for u in shown:
            owner = f" ({u['workload']})" if u.get("workload") else ""
            text = f"{u['pod']}{owner}: {u['plugin']}: {'; '.join(u['reasons'])}"
            blocks.extend(Text(line, BAD) for line in textwrap.wrap(text, WIDTH, subsequent_indent="    ",
                                                                     break_on_hyphens=False))
        if hidden:
            blocks.append(Text(_more(hidden, "pods")))
    return blocks


def build_capacity_document(answer: CapacityAnswer, max_rows: int = 50) -> list[Block]:
    blocks: list[Block] = []
    if answer.templates:
        limit = f", at most {answer.max_copies} each" if answer.max_copies is not None else ""
        blocks.append(Heading(f"Capacity ({answer.mode}{limit})", 1))
        if answer.starting is not None:
            s = answer.starting
            left = f"; {len(s.pending)} pending pod(s) of the snapshot left out" if s.pending else ""
            running = len(s.state.pod_node)
            text = (f"Starting cluster: {s.nodes} nodes, {running} pods running (the snapshot simulated "
                    f"first: {len(s.bindings)} pending pod(s) bound{left}).")
            blocks.extend(Text(line) for line in textwrap.wrap(text, WIDTH, subsequent_indent="  ",
                                                               break_on_hyphens=False))
        summary = Table("Templates", [Column("Template"), Column("Copies", "right"), Column("Stopped by")],
                        [[Cell(f"{t.namespace}/{t.name}"), Cell(str(t.count)), Cell(t.limiting or t.stop_reason)]
                         for t in answer.templates])
        blocks.append(summary)
        for t in answer.templates:
            blocks.extend(template_blocks(t, max_rows, answer.allow_preemption))
    if answer.node_template is not None:
        blocks.extend(node_template_blocks(answer.node_template, max_rows))
    return blocks
