"""``pysched diff``: two simulations side by side (two configurations, or two snapshots under one).

Everything here reads the two :class:`SimulationResult` objects (the pods' last cycles, their traced scores,
the final NodeInfo totals); nothing is recomputed. ``build_diff`` makes the view, ``diff_data`` the
``-o json|yaml`` document and ``build_diff_document`` the ``-o table`` blocks.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import field
from typing import Any

from pysched.lazyclass import dataclass
from pysched.report import summary as sm
from pysched.report.document import (
    DEFAULT_MAX_ROWS,
    DIM,
    OK,
    OUTCOME_LABEL,
    OUTCOME_STYLE,
    STRONG,
    Block,
    Cell,
    Column,
    Heading,
    Table,
    Text,
    _limit,
    _more,
    _plural,
    _usage_cell,
)
from pysched.scheduler.simulation import SimulationResult
from pysched.scheduler.trace import CycleTrace
from pysched.snapshot.cluster import BETA_ZONE, ZONE

RUNNING, ABSENT = "Running", "Absent"  # pods bound in the snapshot itself; pods missing from one snapshot
METRICS = ("cpu", "memory", "pods")


# ---------------------------------------------------------------------------------------------- placements
@dataclass(slots=True)
class Placement:
    outcome: str  # the outcome of the pod's last cycle, NotSimulated, Ignored, Running or Absent
    node: str | None  # the bound node (the nominated node for Nominated)
    margin: int | None = None  # total score of the chosen node minus the runner-up's
    runner_up: str | None = None
    margin_note: str = ""  # why there is no margin

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"node": self.node, "outcome": self.outcome, "margin": self.margin}
        if self.runner_up is not None:
            d["runner_up"] = self.runner_up
        if self.margin_note:
            d["margin_note"] = self.margin_note
        return d


def margin_of(c: CycleTrace) -> tuple[int | None, str | None, str]:
    """(total of the chosen node minus the runner-up's, the runner-up, a note when there is no margin)."""
    if c.outcome != sm.SCHEDULED:
        return None, None, ""
    if c.fast_path:
        return None, None, "nominated node, no other node evaluated"
    if c.scores is None:
        if c.feasible is not None:
            return None, None, "the only feasible node"
        return None, None, "not traced"
    totals = c.totals()
    others = sorted(((t, n) for n, t in totals.items() if n != c.node), key=lambda tn: (-tn[0], tn[1]))
    if not others or c.node not in totals:
        return None, None, "the only feasible node"
    return totals[c.node] - others[0][0], others[0][1], ""


def placements(result: SimulationResult) -> dict[str, Placement]:
    """Every pod's final placement: pending pods by their last cycle, then pods bound in the snapshot."""
    last = sm.last_cycles(result)
    out: dict[str, Placement] = {}
    for r in sm.pod_rows(result):
        p = Placement(r.outcome, r.node)
        c = last.get(r.pod)
        if c is not None:
            p.margin, p.runner_up, p.margin_note = margin_of(c)
        out[r.pod] = p
    for pod in result.cluster.pods:
        if pod.key not in out and pod.node_name:
            out[pod.key] = Placement(RUNNING, pod.node_name)
    return out


@dataclass(slots=True)
class ChangedPod:
    pod: str
    a: Placement
    b: Placement

    def to_dict(self) -> dict:
        return {"pod": self.pod, "a": self.a.to_dict(), "b": self.b.to_dict()}


def changed_pods(a: dict[str, Placement], b: dict[str, Placement]) -> list[ChangedPod]:
    """Pods whose final outcome or node differs, by name."""
    out = []
    for pod in sorted(set(a) | set(b)):
        pa, pb = a.get(pod, Placement(ABSENT, None)), b.get(pod, Placement(ABSENT, None))
        if (pa.outcome, pa.node) != (pb.outcome, pb.node):
            out.append(ChangedPod(pod, pa, pb))
    return out


# ---------------------------------------------------------------------------------------------- utilisation
@dataclass(slots=True)
class Spread:
    mean: float
    stddev: float
    range: float  # max - min

    def to_dict(self) -> dict:
        return {"mean": round(self.mean, 4), "stddev": round(self.stddev, 4), "range": round(self.range, 4)}


def spread_of(values: list[float]) -> Spread | None:
    if not values:
        return None
    return Spread(statistics.fmean(values), statistics.pstdev(values), max(values) - min(values))


@dataclass(slots=True)
class Usage:
    """Requested and allocatable per metric (cpu in millicores, memory in bytes, pods)."""

    used: dict[str, int]
    total: dict[str, int]
    pods: frozenset[str] = frozenset()  # the pods on a node (empty for zones)

    def fraction(self, metric: str) -> float | None:
        return sm.fraction(self.used[metric], self.total[metric])


@dataclass(slots=True)
class Side:
    label: str  # A or B
    config: str
    snapshot: list[str]
    summary: sm.Summary
    nodes: dict[str, Usage]  # by node name
    zones: dict[str, Usage]  # by zone ("" for nodes without a zone label)
    node_spread: dict[str, Spread | None] = field(default_factory=dict)
    zone_spread: dict[str, Spread | None] = field(default_factory=dict)
    empty_nodes: int = 0

    def counts(self) -> dict[str, int]:
        s = self.summary
        return {"simulated": s.simulated, "scheduled": s.scheduled, "unschedulable": s.unschedulable,
                "gated": s.gated, "nominated": s.nominated, "errors": s.errors, "preemptors": s.preemptors,
                "victims": s.victims, "not_simulated": s.not_simulated, "ignored": s.ignored,
                "nodes": s.nodes, "empty_nodes": self.empty_nodes}

    def to_dict(self) -> dict:
        def fractions(u: Usage) -> dict:
            return {m: (round(f, 4) if (f := u.fraction(m)) is not None else None) for m in METRICS}

        return {"config": self.config, "snapshot": list(self.snapshot), "counts": self.counts(),
                "nodes": {n: fractions(u) for n, u in self.nodes.items()},
                "zones": {z or "(none)": fractions(u) for z, u in self.zones.items()},
                "spread": {"nodes": {m: s.to_dict() if s else None for m, s in self.node_spread.items()},
                           "zones": {m: s.to_dict() if s else None for m, s in self.zone_spread.items()}}}


def _zone(labels: dict[str, str]) -> str:
    return labels.get(ZONE) or labels.get(BETA_ZONE) or ""


def side_of(result: SimulationResult, label: str, config: str, snapshot: list[str]) -> Side:
    nodes: dict[str, Usage] = {}
    zones: dict[str, Usage] = {}
    empty = 0
    for ni in sorted(result.state.node_infos, key=lambda n: n.name):
        used = {"cpu": ni.requested.milli_cpu, "memory": ni.requested.memory, "pods": len(ni.pods)}
        total = {"cpu": ni.allocatable.milli_cpu, "memory": ni.allocatable.memory,
                 "pods": ni.allocatable.allowed_pod_number}
        nodes[ni.name] = Usage(used, total, frozenset(p.key for p in ni.pods))
        z = zones.setdefault(_zone(ni.node.labels), Usage(dict.fromkeys(METRICS, 0), dict.fromkeys(METRICS, 0)))
        for m in METRICS:
            z.used[m] += used[m]
            z.total[m] += total[m]
        empty += 0 if ni.pods else 1
    zones = dict(sorted(zones.items()))
    side = Side(label, config, snapshot, sm.tallies(result)[0], nodes, zones, empty_nodes=empty)
    for m in METRICS:
        side.node_spread[m] = spread_of([f for u in nodes.values() if (f := u.fraction(m)) is not None])
        side.zone_spread[m] = spread_of([f for u in zones.values() if (f := u.fraction(m)) is not None])
    return side


# ---------------------------------------------------------------------------------------------- verdicts
@dataclass(slots=True)
class Metric:
    name: str
    a: str
    b: str
    verdict: str
    changed: bool

    def to_dict(self) -> dict:
        return {"metric": self.name, "a": self.a, "b": self.b, "verdict": self.verdict}


def _count_metric(name: str, a: int, b: int, more: str, fewer: str, unit: str = "") -> Metric:
    if a == b:
        return Metric(name, str(a), str(b), "same", False)
    n = abs(b - a)
    words = more if b > a else fewer
    return Metric(name, str(a), str(b), f"B {words.format(n=n, s='' if n == 1 else 's', unit=unit)}", True)


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _spread_metric(name: str, what: str, a: Spread | None, b: Spread | None) -> Metric | None:
    if a is None or b is None:
        return None
    ta = f"stddev {_pct(a.stddev)}, range {_pct(a.range)}"
    tb = f"stddev {_pct(b.stddev)}, range {_pct(b.range)}"
    da, db = round(a.stddev * 1000), round(b.stddev * 1000)  # compared at 0.1%
    if da == db:
        return Metric(name, ta, tb, "same", False)
    if db < da:
        return Metric(name, ta, tb, f"B spreads {what} more evenly (stddev {_pct(a.stddev)} → {_pct(b.stddev)})",
                      True)
    return Metric(name, ta, tb, f"B concentrates {what} more (stddev {_pct(a.stddev)} → {_pct(b.stddev)})", True)


def metrics(a: Side, b: Side, changed: int) -> list[Metric]:
    ca, cb = a.counts(), b.counts()
    out = [
        Metric("pods placed differently", "", "", (f"{_plural(changed, 'pod')} " + ("differs" if changed == 1 else "differ")) if changed else "none",
               bool(changed)),
        _count_metric("scheduled", ca["scheduled"], cb["scheduled"], "schedules {n} more", "schedules {n} fewer"),
        _count_metric("unschedulable", ca["unschedulable"], cb["unschedulable"], "leaves {n} more unschedulable",
                      "leaves {n} fewer unschedulable"),
        _count_metric("nominated, still pending", ca["nominated"], cb["nominated"], "leaves {n} more nominated",
                      "leaves {n} fewer nominated"),
        _count_metric("preempting pods", ca["preemptors"], cb["preemptors"], "has {n} more preemptor{s}",
                      "has {n} fewer preemptor{s}"),
        _count_metric("victims", ca["victims"], cb["victims"], "evicts {n} more pod{s}", "evicts {n} fewer pod{s}"),
        _count_metric("empty nodes", ca["empty_nodes"], cb["empty_nodes"], "leaves {n} more node{s} empty",
                      "leaves {n} fewer node{s} empty"),
    ]
    if ca["gated"] or cb["gated"]:
        out.insert(3, _count_metric("gated", ca["gated"], cb["gated"], "gates {n} more", "gates {n} fewer"))
    if ca["errors"] or cb["errors"]:
        out.append(_count_metric("errors", ca["errors"], cb["errors"], "has {n} more error{s}",
                                 "has {n} fewer error{s}"))
    for m in METRICS:
        x = _spread_metric(f"{m} across nodes", m, a.node_spread.get(m), b.node_spread.get(m))
        if x is not None:
            out.append(x)
    if len(a.zones) > 1 or len(b.zones) > 1:
        for m in METRICS:
            x = _spread_metric(f"{m} across zones", m, a.zone_spread.get(m), b.zone_spread.get(m))
            if x is not None:
                out.append(x)
    return out


# ---------------------------------------------------------------------------------------------- the view
@dataclass(slots=True)
class DiffView:
    a: Side
    b: Side
    changed: list[ChangedPod]
    metrics: list[Metric]
    same_snapshot: bool


def build_diff(ra: SimulationResult, rb: SimulationResult, *, config_a: str, config_b: str,
               snapshot_a: list[str], snapshot_b: list[str]) -> DiffView:
    a = side_of(ra, "A", config_a, snapshot_a)
    b = side_of(rb, "B", config_b, snapshot_b)
    changed = changed_pods(placements(ra), placements(rb))
    return DiffView(a, b, changed, metrics(a, b, len(changed)), snapshot_a == snapshot_b)


def diff_data(v: DiffView) -> dict:
    return {"a": v.a.to_dict(), "b": v.b.to_dict(), "changed": [c.to_dict() for c in v.changed],
            "summary": {"changed": len(v.changed), "a": v.a.counts(), "b": v.b.counts(),
                        "metrics": [m.to_dict() for m in v.metrics]}}


# ---------------------------------------------------------------------------------------------- blocks
def _placement_cell(p: Placement) -> Cell:
    style = OUTCOME_STYLE.get(p.outcome, DIM if p.outcome in (RUNNING, ABSENT) else "")
    if p.outcome == sm.SCHEDULED:
        return Cell(p.node or "-", style)
    if p.outcome == sm.NOMINATED:
        return Cell(f"nominated to {p.node}", style)
    if p.outcome == RUNNING:
        return Cell(f"running on {p.node}", style)
    return Cell(OUTCOME_LABEL.get(p.outcome, p.outcome), style)


def _margin_cell(p: Placement) -> Cell:
    if p.margin is not None:
        return Cell(f"+{p.margin} over {p.runner_up}" if p.margin else f"tie with {p.runner_up}")
    return Cell(p.margin_note or "-", DIM)


def build_diff_document(v: DiffView, *, max_rows: int = DEFAULT_MAX_ROWS) -> list[Block]:
    if v.same_snapshot:
        head = f"Diff: A = {v.a.config}, B = {v.b.config} (snapshot {', '.join(v.a.snapshot)})"
    else:
        head = (f"Diff: A = snapshot {', '.join(v.a.snapshot)}, B = snapshot {', '.join(v.b.snapshot)} "
                f"(config {v.a.config})")
    blocks: list[Block] = [Heading(head)]
    rows = [[Cell(m.name), Cell(m.a, "", None), Cell(m.b), Cell(m.verdict, STRONG if m.changed else DIM)]
            for m in v.metrics]
    blocks.append(Table("Verdict per metric", [Column("metric", wrap=False), Column("A"), Column("B"),
                                               Column("verdict")], rows))
    if v.changed:
        shown, hidden = _limit(v.changed, max_rows)
        rows = [[Cell(c.pod), _placement_cell(c.a), _placement_cell(c.b), _margin_cell(c.a), _margin_cell(c.b)]
                for c in shown]
        notes = ["margin: total score of the chosen node minus the runner-up's, in that simulation"]
        if any(p.margin_note == "not traced" for c in v.changed for p in (c.a, c.b)):
            notes.append("not traced: on a large cluster the margins are computed for the first pods that "
                         "differ only")
        if hidden:
            notes.append(_more(hidden, "pods"))
        blocks.append(Table(f"Pods whose outcome or node differs ({len(v.changed)})",
                            [Column("pod", key=True), Column("A", wrap=False), Column("B", wrap=False),
                             Column("A margin"), Column("B margin")], rows, notes))
    else:
        blocks.append(Text("every pod has the same outcome and node under A and B", OK))
    blocks.append(_usage_table("Node utilisation after each simulation (requested/allocatable)", "node",
                               v.a.nodes, v.b.nodes, max_rows))
    if len(v.a.zones) > 1 or len(v.b.zones) > 1:
        blocks.append(_usage_table("Zone utilisation (requested/allocatable)", "zone",
                                   {z or "(none)": u for z, u in v.a.zones.items()},
                                   {z or "(none)": u for z, u in v.b.zones.items()}, max_rows))
    return blocks


_FMT: dict[str, Callable[[int], str]] = {"cpu": sm.fmt_cpu, "memory": sm.fmt_bytes, "pods": str}


def _usage_table(title: str, what: str, a: dict[str, Usage], b: dict[str, Usage], max_rows: int) -> Table:
    names = sorted(set(a) | set(b))
    shown, hidden = _limit(names, max_rows)
    columns = [Column(what, key=True)]
    for m in METRICS:
        header = "cpu (cores)" if m == "cpu" else m
        columns += [Column(f"{header} A"), Column(f"{header} B")]
    columns.append(Column("", wrap=False))
    rows = []
    for n in shown:
        ua, ub = a.get(n), b.get(n)
        cells = [Cell(n)]
        for m in METRICS:
            for u in (ua, ub):
                cells.append(_usage_cell(u.used[m], u.total[m], _FMT[m]) if u is not None else Cell("-", DIM))
        differs = ua is None or ub is None or ua.pods != ub.pods or ua.used != ub.used
        cells.append(Cell("*" if differs else "", STRONG))
        rows.append(cells)
    notes = [f"*: the {what} holds different pods under A and B"]
    if hidden:
        notes.append(_more(hidden, f"{what}s"))
    return Table(title, columns, rows, notes)

