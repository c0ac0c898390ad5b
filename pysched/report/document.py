"""The ``-o table`` report as a list of renderer-neutral blocks (headings, text, tables).

``build_document`` lays the report out once; ``table.py`` draws the blocks with rich (boxes, colour, bars)
and ``plain.py`` with tabulate (plain text or GitHub markdown). Styles are semantic names that the rich
renderer maps to colours and the plain renderers ignore.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field

from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass
from pysched.report import summary as sm
from pysched.safetext import escape, escape_lines
from pysched.scheduler.simulation import SimulationResult
from pysched.scheduler.trace import CycleTrace

DEFAULT_MAX_ROWS = 50

# semantic styles
OK, WARN, BAD, INFO, DIM, STRONG = "ok", "warn", "bad", "info", "dim", "strong"

OUTCOME_STYLE = {sm.SCHEDULED: OK, sm.NOMINATED: INFO, sm.UNSCHEDULABLE: BAD, sm.GATED: WARN, sm.ERROR: BAD,
                 sm.NOT_SIMULATED: DIM, sm.IGNORED: DIM}
OUTCOME_LABEL = {sm.NOT_SIMULATED: "Not simulated"}


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    style: str = ""
    bar: float | None = None  # a fraction in [0, 1+]: rich draws a bar before the text; plain ignores it

    def __post_init__(self) -> None:
        # names, labels, reasons and messages come from the user's files: every renderer draws these
        # blocks, so escaping here keeps control and bidi characters out of every report
        object.__setattr__(self, "text", escape_lines(self.text))


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    justify: str = "left"  # left | right
    wrap: bool = True  # wrap long text at spaces (else the column keeps its width)
    key: bool = False  # names (pods, nodes): never broken, never abbreviated
    short: str = ""  # the header when the full one does not fit (a legend under the table says what it means)


@dataclass(slots=True)
class Table:
    title: str
    columns: list[Column]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)  # lines printed under the table
    show_header: bool = True

    def __post_init__(self) -> None:
        self.title = escape_lines(self.title)
        self.notes = [escape_lines(n) for n in self.notes]


@dataclass(frozen=True, slots=True)
class Heading:
    text: str
    level: int = 1  # 1: a section, 2: a pod in the trace, 3: a cycle of that pod

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", escape(self.text))


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    style: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", escape_lines(self.text))


Block = Heading | Table | Text


def _more(hidden: int, what: str) -> str:
    return f"... {hidden} more {what} not shown (--max-rows 0 shows all)"


def _limit(items: list, max_rows: int) -> tuple[list, int]:
    if max_rows <= 0 or len(items) <= max_rows:
        return items, 0
    return items[:max_rows], len(items) - max_rows


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


_CAPS = re.compile(r"[A-Z][a-z0-9]*")


def abbreviate(name: str) -> str:
    """A plugin name by its initials (``NodeResourcesFit`` -> ``NRF``): the short header of a plugin column
    where the full names do not fit; names with fewer than two capitals stay as they are."""
    words = _CAPS.findall(name)
    return "".join(w[0] for w in words) if len(words) >= 2 else name


# ---------------------------------------------------------------------------------------------- sections
def summary_block(s: sm.Summary) -> Table:
    def row(label: str, n: int, style: str = "", detail: str = "") -> list[Cell]:
        return [Cell(label), Cell(str(n), style if n else ""), Cell(detail if n else "")]

    victims = _plural(s.victims, "victim") + " evicted" if s.preemptors else ""
    rows = [
        row("pending pods simulated", s.simulated, STRONG,
            f"{_plural(s.cycles, 'scheduling cycle')} in {_plural(s.passes, 'pass', 'passes')}"),
        row("scheduled", s.scheduled, OK),
        row("unschedulable", s.unschedulable, BAD),
        row("gated", s.gated, WARN, "waiting for scheduling gates"),
        row("nominated, still pending", s.nominated, INFO),
        row("preempting pods", s.preemptors, INFO, victims),
        row("errors", s.errors, BAD),
        row("not simulated", s.not_simulated, WARN, "not simulated"),
    ]
    if s.ignored:
        rows.append(row("ignored", s.ignored, DIM, "no profile for their schedulerName"))
    title = f"Summary: {_plural(s.nodes, 'node')}, profile {', '.join(s.profiles) or '-'}"
    return Table(title, [Column(""), Column("pods", "right"), Column("")], rows, show_header=False)


def reasons_block(reasons: list[sm.ReasonCount], max_rows: int) -> Table:
    shown, hidden = _limit(reasons, max_rows)
    top = max((r.count for r in reasons), default=1)
    rows = [[Cell(str(r.count), BAD, r.count / top), Cell(sm.fmt_list(r.pods, 2)), Cell(r.message)]
            for r in shown]
    notes = [_more(hidden, "reasons")] if hidden else []
    return Table("Unschedulable pods by reason (their final FailedScheduling message)",
                 [Column("count", "right", wrap=False), Column("pods"), Column("reason")], rows, notes)


def _usage_cell(used: int, total: int, fmt: Callable[[int], str]) -> Cell:
    text = f"{fmt(used)}/{fmt(total)} {sm.fmt_pct(used, total)}"
    frac = sm.fraction(used, total)
    style = "" if frac is None else OK if frac < 0.7 else WARN if frac < 0.9 else BAD
    return Cell(text, style, frac)


def nodes_block(nodes: list[sm.NodeUsage], max_rows: int, *, what: str = "node",
                title: str = "Node utilisation after the simulation (requested/allocatable)") -> Table:
    scalars = sorted({k for u in nodes for k in u.scalar})
    columns = [Column(what, key=True), Column("pods"), Column("cpu (cores)"), Column("memory")]
    columns += [Column(k) for k in scalars]

    def row(u: sm.NodeUsage, style: str = "") -> list[Cell]:
        cells = [Cell(u.name, style), _usage_cell(u.pods, u.pods_allocatable, str),
                 _usage_cell(u.milli_cpu, u.milli_cpu_allocatable, sm.fmt_cpu),
                 _usage_cell(u.memory, u.memory_allocatable, sm.fmt_bytes)]
        for k in scalars:
            req, alloc = u.scalar.get(k, (0, 0))
            cells.append(_usage_cell(req, alloc, str) if req or alloc else Cell("-", DIM))
        return cells

    shown, hidden = _limit(nodes, max_rows)
    rows = [row(u) for u in shown]
    if len(nodes) > 1:
        rows.append(row(sm.total_usage(nodes, f"total ({_plural(len(nodes), what)})"), STRONG))
    notes = [_more(hidden, what + "s")] if hidden else []
    return Table(title, columns, rows, notes)


def zones_block(zones: list[sm.NodeUsage], max_rows: int) -> Table:
    return nodes_block(zones, max_rows, what="zone",
                       title="Zone utilisation after the simulation (requested/allocatable)")


def _pod_detail(r: sm.PodRow) -> str:
    parts = []
    if r.victims:
        passes = ", ".join(str(p) for p in r.preempted_in)
        parts.append(f"preempted {sm.fmt_list(r.victims)} in pass {passes}")
    if r.outcome == sm.SCHEDULED and r.last_pass > 1:
        parts.append(f"bound in pass {r.last_pass}")
    if r.reason:
        parts.append(r.reason)
    return "; ".join(parts)


def pods_block(rows: list[sm.PodRow], max_rows: int) -> Table:
    shown, hidden = _limit(rows, max_rows)
    cells = []
    for r in shown:
        style = OUTCOME_STYLE.get(r.outcome, "")
        cells.append([Cell(str(r.index) if r.index else "-", DIM), Cell(r.pod),
                      Cell("" if r.priority is None else str(r.priority)),
                      Cell(OUTCOME_LABEL.get(r.outcome, r.outcome), style), Cell(r.node or "-"),
                      Cell(_pod_detail(r))])
    notes = [_more(hidden, "pods")] if hidden else []
    return Table("Pods (queue order): outcome of each pod's last cycle",
                 [Column("#", "right", wrap=False), Column("pod", key=True), Column("priority", "right", wrap=False, short="prio"),
                  Column("outcome", wrap=False), Column("node", key=True),
                  Column("preemption / reason")], cells, notes)


# ---------------------------------------------------------------------------------------------- trace
_VERDICT_STYLE = {Code.Success: OK, Code.Skip: DIM, Code.Unschedulable: WARN,
                  Code.UnschedulableAndUnresolvable: BAD, Code.Error: BAD}


def verdict_text(st: Status) -> str:
    if st.code == Code.Success:
        return "pass"
    if st.code == Code.Skip:
        return "skip"
    label = {Code.Unschedulable: "fail", Code.UnschedulableAndUnresolvable: "fail (unresolvable)",
             Code.Error: "error"}.get(st.code, st.code.name)
    msg = st.message()
    return f"{label}: {msg}" if msg else label


def _cycle_headline(c: CycleTrace) -> str:
    if c.outcome == sm.SCHEDULED:
        return f"pass {c.pass_no}: Scheduled on {c.node}"
    if c.outcome == sm.NOMINATED:
        victims = sm.fmt_list(list(c.victims or []), 5) or "no victim deleted"
        return f"pass {c.pass_no}: Nominated to {c.nominated_node}, preempting {victims}"
    return f"pass {c.pass_no}: {c.outcome}"


def cycle_fact_lines(c: CycleTrace) -> list[str]:
    """What happened before and around the filters of one cycle, one line per fact."""
    lines: list[str] = []
    if c.preenqueue_reject is not None:
        lines.append(f"PreEnqueue: {sm.status_text(c.preenqueue_reject)}")
    if c.prefilter_reject is not None:
        lines.append(f"PreFilter rejected the pod: {sm.status_text(c.prefilter_reject)}")
    if c.prefilter_nodes is not None:
        lines.append(f"PreFilter narrowed the nodes to {_plural(len(c.prefilter_nodes), 'node')}: "
                     f"{sm.fmt_list(c.prefilter_nodes, 10)}")
    if c.fast_path:
        lines.append(f"nominated node {c.node or c.nominated_node_before} passed every filter: "
                     "no other node was evaluated")
    elif c.nominated_node_before:
        lines.append(f"nominated node before this cycle: {c.nominated_node_before}")
    if c.message and c.outcome != sm.SCHEDULED:
        lines.append(f"message: {c.message}")
    if c.error and c.error != c.message:
        lines.append(f"error: {c.error}")
    return lines


def cycle_blocks(c: CycleTrace, max_rows: int) -> list[Block]:
    headline = _cycle_headline(c)
    out: list[Block] = [Heading(headline, 3)]
    lines = cycle_fact_lines(c)
    if c.bound_by:
        lines.append(f"bound by {c.bound_by}")
    out.extend(Text(line) for line in lines)
    fm = sm.filter_matrix(c)
    if fm is not None:
        out.append(filter_block(fm, max_rows))
    st = sm.score_table(c)
    if st is not None:
        out.append(score_block(st, max_rows))
    elif c.feasible is not None and len(c.feasible) == 1 and not c.fast_path:
        out.append(Text(f"one feasible node ({c.feasible[0]}): scoring skipped"))
    pv = sm.preemption_view(c)
    if pv is not None and pv.candidates:
        out.append(preemption_block(pv, max_rows))
    elif pv is not None and pv.potential_nodes:
        out.append(Text(f"preemption dry run on {_plural(pv.potential_nodes, 'node')} (those that rejected the pod "
                        "as Unschedulable): no candidate"))
        out.extend(Text(f"  {_plural(n, 'node')}: {why}") for why, n in _limit(pv.rejected, max_rows)[0])
    return out


def filter_block(fm: sm.FilterMatrix, max_rows: int) -> Table:
    shown, hidden = _limit(fm.groups, max_rows)
    rows = []
    for g in shown:
        cells = [Cell(str(len(g.nodes)), "", None), Cell(sm.fmt_list(g.nodes, 6)),
                 Cell(g.result, OK if g.result == sm.FEASIBLE else DIM if g.result == sm.NOT_EVALUATED else BAD)]
        for p in fm.plugins:
            st = g.verdicts.get(p)
            cells.append(Cell(verdict_text(st), _VERDICT_STYLE.get(st.code, "")) if st else Cell("-", DIM))
        rows.append(cells)
    notes = []
    if fm.passed:
        notes.append(f"passed on every node: {', '.join(fm.passed)}")
    if fm.skipped:
        notes.append(f"skipped (PreFilter returned Skip): {', '.join(fm.skipped)}")
    if hidden:
        notes.append(_more(hidden, "node groups"))
    columns = [Column("#", "right", wrap=False), Column("nodes"), Column("result")]
    columns += [Column(p, short=abbreviate(p)) for p in fm.plugins]
    title = (f"Filter verdicts on {_plural(fm.nodes, 'node')} "
             f"({_plural(len(fm.groups), 'group')} of nodes with the same verdicts)")
    return Table(title, columns, rows, notes)


def score_block(st: sm.ScoreTable, max_rows: int) -> Table:
    shown, hidden = _limit(st.rows, max_rows)
    rows = []
    for r in shown:
        style = OK if r.selected else ""
        cells = [Cell(str(r.rank), style), Cell(r.node, style)]
        cells += [Cell(str(r.plugins[p]) if p in r.plugins else "-") for p in st.plugins]
        cells += [Cell(str(r.total), STRONG if r.selected else ""), Cell("selected" if r.selected else "", style)]
        rows.append(cells)
    columns = [Column("rank", "right", wrap=False), Column("node", key=True)]
    columns += [Column(p, "right", short=abbreviate(p)) for p in st.plugins]
    columns += [Column("total", "right", wrap=False), Column("", wrap=False)]
    notes = [_more(hidden, "nodes")] if hidden else []
    return Table(f"Scores on {_plural(len(st.rows), 'feasible node')} (weighted, normalized)", columns, rows,
                 notes)


def preemption_block(pv: sm.PreemptionView, max_rows: int) -> Table:
    shown, hidden = _limit(pv.candidates, max_rows)
    rows = [[Cell(c.node, OK if c.chosen else ""), Cell(str(len(c.victims)), "", None),
             Cell(sm.fmt_list(c.victims, 5)), Cell(str(c.pdb_violations)),
             Cell("chosen" if c.chosen else "", OK if c.chosen else "")] for c in shown]
    notes = [f"{_plural(n, 'other node')}: {why}" for why, n in pv.rejected]
    if len(pv.tied) > 1:
        notes.append(f"tied candidates: {', '.join(pv.tied)}; chosen: {pv.chosen}")
    if hidden:
        notes.append(_more(hidden, "candidates"))
    title = (f"Preemption dry run on {_plural(pv.potential_nodes, 'node')} (those that rejected the pod as "
             f"Unschedulable): {_plural(len(pv.candidates), 'candidate')}")
    return Table(title, [Column("node", key=True), Column("victims", "right", wrap=False), Column("pods"),
                         Column("PDB violations", "right"), Column("", wrap=False)],
                 rows, notes)


def trace_blocks(result: SimulationResult, max_rows: int) -> list[Block]:
    by_pod: dict[str, list[CycleTrace]] = {}
    for c in result.cycles:
        if sm.traced(result, c.pod):
            by_pod.setdefault(c.pod, []).append(c)
    if not by_pod:
        return []
    out: list[Block] = [Heading(f"Trace of {_plural(len(by_pod), 'pod')}")]
    for pod, cycles in by_pod.items():
        out.append(Heading(f"{pod} (priority {cycles[0].priority})", 2))
        for c in cycles:
            out.extend(cycle_blocks(c, max_rows))
    return out


# ---------------------------------------------------------------------------------------------- the report
def build_document(result: SimulationResult, max_rows: int = DEFAULT_MAX_ROWS,
                   data: sm.ReportData | None = None) -> list[Block]:
    """The report of ``result``; ``data`` is its summary when the caller already computed it."""
    data = sm.report_data(result) if data is None else data
    blocks: list[Block] = [summary_block(data.counts)]
    from pysched.report.workloads import workload_blocks  # imports this module
    blocks.extend(workload_blocks(result, max_rows))
    if data.reasons:
        blocks.append(reasons_block(data.reasons, max_rows))
    if data.nodes:
        blocks.append(nodes_block(data.nodes, max_rows))
    if len(data.zones) > 1:
        blocks.append(zones_block(data.zones, max_rows))
    if data.rows:
        blocks.append(pods_block(data.rows, max_rows))
    else:
        blocks.append(Text("no pending pods"))
    blocks.extend(trace_blocks(result, max_rows))
    return blocks
