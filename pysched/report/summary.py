"""What the ``-o table`` renderers show, read off a :class:`SimulationResult`.

Everything here only reads the traces (``CycleTrace``, ``SimulationResult``, the final ``NodeInfo`` totals):
no scheduling decision is recomputed. Where the traces have no meaningful order the views are sorted, so the
same input always gives the same text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from operator import attrgetter

from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass
from pysched.scheduler.simulation import SimulationResult
from pysched.scheduler.trace import CycleTrace, Outcome

SCHEDULED, NOMINATED, UNSCHEDULABLE, GATED, ERROR = (Outcome.SCHEDULED, Outcome.NOMINATED, Outcome.UNSCHEDULABLE,
                                                     Outcome.GATED, Outcome.ERROR)
# what a pod row shows for pods that had no cycle
NOT_SIMULATED, IGNORED = "NotSimulated", "Ignored"


# ---------------------------------------------------------------------------------------------- per pod
@dataclass(slots=True)
class PodRow:
    """One pending pod: its final outcome and what happened on the way."""

    index: int  # 1-based position in the queue (order of the pod's first cycle); 0 for pods not simulated
    pod: str
    priority: int | None
    outcome: str  # the outcome of the pod's last cycle, NotSimulated or Ignored
    last_pass: int = 0
    node: str | None = None  # the bound node, or the nominated node of a pod still Nominated
    victims: list[str] = field(default_factory=list)  # pods this pod preempted, in every cycle
    preempted_in: list[int] = field(default_factory=list)  # the passes in which it preempted
    reason: str = ""  # FailedScheduling message, gate, error or why it was not simulated


def last_cycles(result: SimulationResult) -> dict[str, CycleTrace]:
    """Each simulated pod's last cycle, in queue order (the order of the pods' first cycles)."""
    last: dict[str, CycleTrace] = {}
    for c in result.cycles:
        last[c.pod] = c
    return last


def pod_rows(result: SimulationResult) -> list[PodRow]:
    """Simulated pods in queue order, then pods not simulated and ignored pods by name."""
    rows: dict[str, PodRow] = {}
    for c in result.cycles:
        outcome = c.outcome
        if outcome == SCHEDULED:  # most cycles: the node, no reason (as cycle_reason and the line below say)
            node: str | None = c.node
            reason = ""
        else:
            node = c.nominated_node if outcome == NOMINATED else None
            reason = cycle_reason(c)
        row = rows.get(c.pod)
        if row is None:  # a pod's first cycle (most pods have one): the row made with its values at once
            row = rows[c.pod] = PodRow(len(rows) + 1, c.pod, c.priority, outcome or "", c.pass_no, node, [], [],
                                       reason)
        else:
            row.outcome = outcome or ""
            row.last_pass = c.pass_no
            row.priority = c.priority
            row.node = node
            row.reason = reason
        if outcome == NOMINATED:
            row.preempted_in.append(c.pass_no)
            row.victims.extend(v for v in (c.victims or []) if v not in row.victims)
    out = list(rows.values())
    out.extend(PodRow(0, p, None, NOT_SIMULATED, reason=r) for p, r in sorted(result.not_simulated))
    out.extend(PodRow(0, p, None, IGNORED, reason=r) for p, r in sorted(result.ignored_pods))
    return out


def cycle_reason(c: CycleTrace) -> str:
    """Why a cycle did not bind its pod, as the scheduler reported it (empty for a binding)."""
    if c.outcome == GATED and c.preenqueue_reject is not None:
        return status_text(c.preenqueue_reject)
    if c.outcome == ERROR:
        return c.error or c.message or ""
    if c.outcome == SCHEDULED:
        return ""
    return c.message or ""


def status_text(st: Status) -> str:
    msg = st.message()
    return f"{st.plugin}: {msg}" if st.plugin and msg else msg or st.plugin or st.code.name


# ---------------------------------------------------------------------------------------------- summary
@dataclass(slots=True)
class Summary:
    simulated: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    gated: int = 0
    nominated: int = 0  # still pending, nominated to a node after preempting
    errors: int = 0
    preemptors: int = 0  # pods that preempted in some cycle
    victims: int = 0  # pods they evicted
    not_simulated: int = 0
    ignored: int = 0
    nodes: int = 0
    cycles: int = 0
    passes: int = 0
    profiles: list[str] = field(default_factory=list)


def summarize(result: SimulationResult, rows: list[PodRow] | None = None) -> Summary:
    """The counts read row by row: the definition that :func:`tallies`, which the reports use, is tested
    against."""
    rows = pod_rows(result) if rows is None else rows
    s = Summary(nodes=result.nodes, cycles=len(result.cycles), profiles=list(result.profiles),
                passes=max((c.pass_no for c in result.cycles), default=0))
    counts = Counter(r.outcome for r in rows)
    s.scheduled, s.unschedulable, s.gated = counts[SCHEDULED], counts[UNSCHEDULABLE], counts[GATED]
    s.nominated, s.errors = counts[NOMINATED], counts[ERROR]
    s.not_simulated, s.ignored = counts[NOT_SIMULATED], counts[IGNORED]
    s.simulated = s.scheduled + s.unschedulable + s.gated + s.nominated + s.errors
    s.preemptors = sum(1 for r in rows if r.preempted_in)
    s.victims = sum(len(r.victims) for r in rows)
    return s


# ---------------------------------------------------------------------------------------------- reasons
@dataclass(slots=True)
class ReasonCount:
    message: str
    count: int
    pods: list[str]  # in queue order


def reason_histogram(rows: list[PodRow]) -> list[ReasonCount]:
    """Unschedulable pods grouped by their final FailedScheduling message: most pods first, then by text (row
    by row: the definition :func:`tallies` is tested against)."""
    groups: dict[str, list[str]] = {}
    for r in rows:
        if r.outcome == UNSCHEDULABLE:
            groups.setdefault(r.reason, []).append(r.pod)
    out = [ReasonCount(m, len(p), p) for m, p in groups.items()]
    out.sort(key=lambda rc: (-rc.count, rc.message))
    return out


# ---------------------------------------------------------------------------------------------- nodes
@dataclass(slots=True)
class NodeUsage:
    name: str
    pods: int
    pods_allocatable: int
    milli_cpu: int
    milli_cpu_allocatable: int
    memory: int
    memory_allocatable: int
    scalar: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (requested, allocatable)
    zone: str = ""  # topology.kubernetes.io/zone (or the beta label); for a zone row: its name
    nodes: int = 1  # nodes counted in this row (a zone or a total)

    def to_dict(self, rounded: dict[tuple[int, int], float] | None = None) -> dict:
        """Requested, allocatable and their fraction (4 decimals) per resource. ``rounded`` keeps the
        fractions already computed by (requested, allocatable), for the rows of one summary."""
        memo: dict[tuple[int, int], float] = {} if rounded is None else rounded
        d: dict = {"name": self.name, "pods": _usage(self.pods, self.pods_allocatable, memo),
                   "cpu_milli": _usage(self.milli_cpu, self.milli_cpu_allocatable, memo),
                   "memory": _usage(self.memory, self.memory_allocatable, memo)}
        if self.scalar:
            d["scalar"] = {k: _usage(r, a, memo) for k, (r, a) in self.scalar.items()}
        return d


def _usage(used: int, total: int, rounded: dict[tuple[int, int], float]) -> dict:
    # round(x, 4) costs about ten dictionary look-ups (it goes through the decimal digits), and nodes of
    # one shape repeat the same (requested, allocatable) pairs: a thousand nodes have ~150 distinct pairs.
    # Keyed by the integers, not by their quotient: 0.0 and -0.0 are one key and round to different floats.
    if total > 0:
        key = (used, total)
        fraction = rounded.get(key)
        if fraction is None:
            fraction = rounded[key] = round(used / total, 4)
        return {"requested": used, "allocatable": total, "fraction": fraction}
    return {"requested": used, "allocatable": total, "fraction": None}


ZONE_LABEL, BETA_ZONE_LABEL = "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"
NO_ZONE = "(none)"


def node_zone(labels: dict[str, str]) -> str:
    return labels.get(ZONE_LABEL) or labels.get(BETA_ZONE_LABEL) or ""


def node_usage(result: SimulationResult) -> list[NodeUsage]:
    """Requested vs allocatable on every node after the simulation, by node name."""
    out = []
    for ni in result.state.node_infos:
        req, alloc = ni.requested, ni.allocatable
        scalar = {k: (req.scalar.get(k, 0), alloc.scalar.get(k, 0))
                  for k in sorted(set(req.scalar) | set(alloc.scalar))
                  if req.scalar.get(k, 0) or alloc.scalar.get(k, 0)} if req.scalar or alloc.scalar else {}
        out.append(NodeUsage(ni.name, len(ni.pods), alloc.allowed_pod_number, req.milli_cpu, alloc.milli_cpu,
                             req.memory, alloc.memory, scalar, node_zone(ni.node.labels)))
    out.sort(key=lambda u: u.name)
    return out


_SUMMED = tuple(attrgetter(f) for f in ("pods", "pods_allocatable", "milli_cpu", "milli_cpu_allocatable", "memory",
                                         "memory_allocatable"))


def total_usage(nodes: list[NodeUsage], name: str | None = None) -> NodeUsage:
    # each count summed in C (integers: the same sums in any order); the scalar resources of the few nodes
    # that have any, node by node
    pods, pods_alloc, cpu, cpu_alloc, mem, mem_alloc = (sum(map(get, nodes)) for get in _SUMMED)
    t = NodeUsage(f"total ({len(nodes)} nodes)" if name is None else name, pods, pods_alloc, cpu, cpu_alloc, mem,
                  mem_alloc, nodes=len(nodes))
    for u in nodes:
        if not u.scalar:
            continue
        for k, (r, a) in u.scalar.items():
            r0, a0 = t.scalar.get(k, (0, 0))
            t.scalar[k] = (r0 + r, a0 + a)
    t.scalar = dict(sorted(t.scalar.items()))
    return t


def zone_usage(nodes: list[NodeUsage]) -> list[NodeUsage]:
    """Requested vs allocatable summed per zone, by zone name; nodes without a zone label under ``(none)``."""
    by_zone: dict[str, list[NodeUsage]] = {}
    for u in nodes:
        by_zone.setdefault(u.zone or NO_ZONE, []).append(u)
    out = []
    for z in sorted(by_zone):
        t = total_usage(by_zone[z], z)
        t.zone = z
        out.append(t)
    return out


# ---------------------------------------------------------------------------------------------- one report
@dataclass(slots=True)
class ReportData:
    """Everything the table, JSON/YAML and HTML renderers show about one simulation, computed once (the pod
    rows when first asked for: JSON and YAML print the counts and reasons alone)."""

    counts: Summary
    reasons: list[ReasonCount]
    nodes: list[NodeUsage]
    zones: list[NodeUsage]
    result: SimulationResult | None = None  # what the rows are read off
    _rows: list[PodRow] | None = None

    @property
    def rows(self) -> list[PodRow]:
        if self._rows is None:
            self._rows = pod_rows(self.result) if self.result is not None else []
        return self._rows

    def to_dict(self) -> dict:
        """The ``summary`` of ``simulate -o json|yaml``."""
        return self._to_dict({})

    def to_json_dict(self) -> dict:
        """:meth:`to_dict` for ``to_json``: a ``Checked`` dict when every fraction in it is a plain float
        (its only floats: the distinct ones, a few hundred, are looked at here rather than every dict of
        it by ``to_json``), else the plain dict."""
        from pysched.report.serialize import Checked, plain_float  # (imported by the JSON output anyway)

        rounded: dict[tuple[int, int], float] = {}
        d = self._to_dict(rounded)
        return Checked(d) if all(map(plain_float, rounded.values())) else d

    def _to_dict(self, rounded: dict[tuple[int, int], float]) -> dict:
        """The summary, every fraction in it kept in ``rounded`` (one memory for every row)."""
        c = self.counts
        return {
            "counts": {"simulated": c.simulated, "scheduled": c.scheduled, "unschedulable": c.unschedulable,
                       "gated": c.gated, "nominated": c.nominated, "errors": c.errors,
                       "preemptors": c.preemptors, "victims": c.victims, "not_simulated": c.not_simulated,
                       "ignored": c.ignored, "cycles": c.cycles, "passes": c.passes, "nodes": c.nodes},
            "reasons": [{"message": r.message, "count": r.count, "pods": list(r.pods)} for r in self.reasons],
            "nodes": [_with(u.to_dict(rounded), "zone", u.zone or NO_ZONE) for u in self.nodes],
            "zones": [_with(u.to_dict(rounded), "nodes", u.nodes) for u in self.zones],
            "total": dict(total_usage(self.nodes, "total").to_dict(rounded), nodes=len(self.nodes)),
        }


def _with(d: dict, key: str, value: object) -> dict:
    d[key] = value
    return d


def report_data(result: SimulationResult) -> ReportData:
    nodes = node_usage(result)
    counts, reasons = tallies(result)
    return ReportData(counts, reasons, nodes, zone_usage(nodes), result)


_POD, _OUTCOME = attrgetter("pod"), attrgetter("outcome")


def tallies(result: SimulationResult) -> tuple[Summary, list[ReasonCount]]:
    """``summarize(result)`` and ``reason_histogram(pod_rows(result))`` read off each pod's last cycle
    and its Nominated cycles, without a row per pod (2,000 rows were half of ``report_data``)."""
    cycles = result.cycles
    last = dict(zip(map(_POD, cycles), cycles, strict=True))  # (a pod's place: its first cycle's, as rows)
    s = Summary(nodes=result.nodes, cycles=len(cycles), profiles=list(result.profiles),
                passes=max((c.pass_no for c in cycles), default=0))
    # a row's outcome is its last cycle's (or ""), or NotSimulated or Ignored for the rows that follow
    counts = Counter(map(_OUTCOME, last.values()))
    s.scheduled, s.unschedulable, s.gated = counts[SCHEDULED], counts[UNSCHEDULABLE], counts[GATED]
    s.nominated, s.errors = counts[NOMINATED], counts[ERROR]
    s.not_simulated, s.ignored = len(result.not_simulated), len(result.ignored_pods)
    s.simulated = s.scheduled + s.unschedulable + s.gated + s.nominated + s.errors
    victims: dict[str, dict[str, None]] = {}  # a pod that preempted: every victim of its cycles, once
    for c in cycles:
        if c.outcome == NOMINATED:
            victims.setdefault(c.pod, {}).update(dict.fromkeys(c.victims or ()))
    s.preemptors = len(victims)
    s.victims = sum(map(len, victims.values()))
    groups: dict[str, list[str]] = {}
    for pod, c in last.items():
        if c.outcome == UNSCHEDULABLE:
            groups.setdefault(cycle_reason(c), []).append(pod)
    reasons = [ReasonCount(m, len(p), p) for m, p in groups.items()]
    reasons.sort(key=lambda rc: (-rc.count, rc.message))
    return s, reasons


# ---------------------------------------------------------------------------------------------- trace views
def traced(result: SimulationResult, pod: str) -> bool:
    """Whether the simulation recorded the full trace of ``pod`` (same rule as the JSON output)."""
    opts = result.options
    return opts.trace and (opts.trace_pods is None or pod in opts.trace_pods)


FEASIBLE, NOT_EVALUATED = "feasible", "not evaluated"


@dataclass(slots=True)
class FilterGroup:
    nodes: list[str]  # sorted
    result: str  # feasible, "rejected by <the first plugin that rejected>" or not evaluated
    verdicts: dict[str, Status]  # plugin -> status, for the matrix columns


@dataclass(slots=True)
class FilterMatrix:
    nodes: int  # nodes the filters ran on
    plugins: list[str]  # matrix columns: plugins that rejected some node, in the profile's order
    groups: list[FilterGroup]
    passed: list[str]  # plugins that passed every node
    skipped: list[str]  # plugins skipped (PreFilter returned Skip) on every node


def _verdict_key(st: Status) -> tuple:
    return (st.code, tuple(st.reasons))


def filter_matrix(c: CycleTrace) -> FilterMatrix | None:
    """Node x plugin verdicts of a traced cycle, nodes with the same verdicts and result grouped."""
    if c.filter_all is None:
        return None
    plugins: list[str] = []
    for verdicts in c.filter_all.values():
        for p in verdicts:
            if p not in plugins:
                plugins.append(p)
    rejecting, passed, skipped = [], [], []
    for p in plugins:
        codes = {v[p].code for v in c.filter_all.values() if p in v}
        if codes <= {Code.Skip}:
            skipped.append(p)
        elif codes <= {Code.Success, Code.Skip}:
            passed.append(p)
        else:
            rejecting.append(p)
    feasible = set(c.feasible or ())
    groups: dict[tuple, FilterGroup] = {}
    for node, verdicts in c.filter_all.items():
        if node in feasible:
            result = FEASIBLE
        elif node in c.filter:
            first = c.filter[node]
            result = f"rejected by {first.plugin}" if first.plugin else first.code.name
        else:
            result = NOT_EVALUATED
        shown = {p: verdicts[p] for p in rejecting if p in verdicts}
        key = (result, tuple((p, _verdict_key(st)) for p, st in shown.items()))
        group = groups.get(key)
        if group is None:
            groups[key] = FilterGroup([node], result, shown)
        else:
            group.nodes.append(node)
    order = {FEASIBLE: 0, NOT_EVALUATED: 2}
    out = sorted(groups.values(), key=lambda g: (order.get(g.result, 1), -len(g.nodes), min(g.nodes)))
    for g in out:
        g.nodes.sort()
    return FilterMatrix(len(c.filter_all), rejecting, out, passed, skipped)


@dataclass(slots=True)
class ScoreRow:
    rank: int  # competition ranking by total: equal totals share a rank
    node: str
    plugins: dict[str, int]
    total: int
    selected: bool


@dataclass(slots=True)
class ScoreTable:
    plugins: list[str]  # in the profile's order
    rows: list[ScoreRow]  # by rank, then node name


def score_table(c: CycleTrace) -> ScoreTable | None:
    if c.scores is None:
        return None
    plugins: list[str] = []
    for per_plugin in c.scores.values():
        for p in per_plugin:
            if p not in plugins:
                plugins.append(p)
    totals = c.totals()
    ordered = sorted(totals, key=lambda n: (-totals[n], n))
    rows, rank, prev = [], 0, None
    for i, n in enumerate(ordered, 1):
        if totals[n] != prev:
            rank, prev = i, totals[n]
        rows.append(ScoreRow(rank, n, dict(c.scores[n]), totals[n], n == c.node))
    return ScoreTable(plugins, rows)


@dataclass(slots=True)
class PreemptionCandidate:
    node: str
    victims: list[str]
    pdb_violations: int
    chosen: bool


@dataclass(slots=True)
class PreemptionView:
    potential_nodes: int
    candidates: list[PreemptionCandidate]  # by node name
    chosen: str
    tied: list[str]
    rejected: list[tuple[str, int]] = field(default_factory=list)  # why the dry run failed: (text, nodes)


def preemption_view(c: CycleTrace) -> PreemptionView | None:
    d = c.preemption
    if d is None:
        return None
    cands = [PreemptionCandidate(x.node, [v.key for v in x.victims], x.num_pdb_violations, x.node == d.chosen)
             for x in d.candidates]
    cands.sort(key=lambda x: x.node)
    why = Counter(status_text(st) for st in d.node_statuses.values())
    rejected = sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))
    return PreemptionView(len(d.potential_nodes), cands, d.chosen, list(d.tied), rejected)


# ---------------------------------------------------------------------------------------------- formatting
def fmt_cpu(milli: int) -> str:
    """Cores: ``4``, ``3.5``, ``0.25``."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli / 1000:.3f}".rstrip("0").rstrip(".")


_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def fmt_bytes(value: int) -> str:
    """Binary units with at most one decimal: ``16Gi``, ``12.5Gi``, ``128Mi``."""
    for suffix, factor in _BINARY:
        if abs(value) >= factor:
            return f"{value / factor:.1f}".rstrip("0").rstrip(".") + suffix
    return str(value)


def fmt_pct(used: int, total: int) -> str:
    """Rounded half up, but ``<1%`` for a little and ``99%`` for nearly all: 0% and 100% are exact."""
    if total <= 0:
        return "-"
    pct = (used * 200 + total) // (2 * total)
    if pct == 0 and used > 0:
        return "<1%"
    if pct == 100 and used < total:
        return "99%"
    return f"{pct}%"


def fraction(used: int, total: int) -> float | None:
    return used / total if total > 0 else None


def fmt_list(items: list[str], limit: int = 3) -> str:
    """``a, b, c`` or ``a, b, c +4 more``."""
    shown = ", ".join(items[:limit])
    return f"{shown} +{len(items) - limit} more" if len(items) > limit else shown
