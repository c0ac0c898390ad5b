"""NodeResourcesFit: the node must have room for the pod's requests; scoring by a configurable strategy.

Filter compares the pod's real requests (pod-level resources and overhead included) with
``allocatable - Requested``. Score uses LeastAllocated, MostAllocated or RequestedToCapacityRatio over the
configured resources. Quirk kept from upstream: the scorer embedded in Fit is built without the
pod-level-resources flag, so the incoming pod's ``spec.resources`` are ignored when scoring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pysched.errors import ConfigError
from pysched.framework.batch import BatchVerdict, template_statuses
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import (
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from pysched.framework.status import Code, Status
from pysched.framework.whatif import RESOURCES, Change, Eviction, WhatIfContext, WhatIfPlugin
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.model.resources import Resource, is_extended
from pysched.plugins.helper import decode_plugin_args
from pysched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
)
from pysched.snapshot.columns import NodeColumns, feasible_rows
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

REASON_TOO_MANY_PODS = "Too many pods"


# --------------------------------------------------------------------------- args

def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)


# --------------------------------------------------------------------------- filter helpers

@dataclass(slots=True)
class InsufficientResource:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def fits_request(req: Resource, node: NodeInfo, ignored_resources: set[str] | frozenset[str] = frozenset(),
                 ignored_groups: set[str] | frozenset[str] = frozenset()) -> list[InsufficientResource]:
    """Upstream ``fitsRequest``: every resource the node lacks, in check order."""
    out: list[InsufficientResource] = []
    alloc = node.allocatable
    used = node.requested
    allowed_pods = alloc.allowed_pod_number
    if len(node.pods) + 1 > allowed_pods:
        out.append(InsufficientResource("pods", REASON_TOO_MANY_PODS, 1, len(node.pods), allowed_pods))

    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return out

    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource("cpu", "Insufficient cpu", req.milli_cpu, used.milli_cpu,
                                        alloc.milli_cpu, req.milli_cpu > alloc.milli_cpu))
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(InsufficientResource("memory", "Insufficient memory", req.memory, used.memory,
                                        alloc.memory, req.memory > alloc.memory))
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource("ephemeral-storage", "Insufficient ephemeral-storage",
                                        req.ephemeral_storage, used.ephemeral_storage, alloc.ephemeral_storage,
                                        req.ephemeral_storage > alloc.ephemeral_storage))

    # Upstream walks a Go map here (random order); the pod's own order is used instead.
    for name, q in req.scalar.items():
        if q == 0:
            continue
        if is_extended(name):
            if name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups):
                continue
        have = alloc.scalar.get(name, 0)
        in_use = used.scalar.get(name, 0)
        if q > have - in_use:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, in_use, have, q > have))
    return out


def fits(pod: Pod, node: NodeInfo) -> list[InsufficientResource]:
    """Upstream ``Fits``: the pod's requests against the node, with no ignored resources."""
    return fits_request(pod.requests, node)


def insufficient_status(insufficient: list[InsufficientResource]) -> Status | None:
    if not insufficient:
        return None
    code = Code.Unschedulable
    for r in insufficient:
        if r.unresolvable:
            code = Code.UnschedulableAndUnresolvable
    return Status(code, *(r.reason for r in insufficient))


# --------------------------------------------------------------------------- plugin

def build_scorer(strategy: Any) -> ResourceAllocationScorer:
    if strategy is None:
        raise ConfigError("scoring strategy not specified", field=f"{NAME}.scoringStrategy")
    resources = [(r.name, r.weight) for r in strategy.resources]
    weights = [w for _, w in resources]
    kind = strategy.type
    if kind == LEAST_ALLOCATED:
        fn = least_allocated_scorer(weights)
    elif kind == MOST_ALLOCATED:
        fn = most_allocated_scorer(weights)
    elif kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = [(p.utilization, p.score) for p in (strategy.shape or [])]
        if not shape:
            raise ConfigError("at least one point must be specified", field=f"{NAME}.scoringStrategy.shape")
        fn = requested_to_capacity_ratio_scorer(weights, shape)
    else:
        raise ConfigError(f"scoring strategy {kind} is not supported", field=f"{NAME}.scoringStrategy.type")
    # Built without the pod-level-resources flag, as upstream does (see the module docstring).
    return ResourceAllocationScorer(kind, resources, fn, use_requested=False, pod_level=False)


_ALL = slice(None)  # every row
_BIG = 1 << 62  # requests below it are int64 values (compared as 0-d int64 arrays, ``_request``)
_REQUESTS: dict[int, np.ndarray] = {}


def _request(q: int) -> np.ndarray:
    """``np.array(q, dtype=np.int64)`` (read only; ``0 < q < _BIG``), kept per value: pods ask for a few
    distinct amounts."""
    arr = _REQUESTS.get(q)
    if arr is None:
        if len(_REQUESTS) > 4096:
            _REQUESTS.clear()
        arr = np.array(q, dtype=np.int64)
        arr.flags.writeable = False
        _REQUESTS[q] = arr
    return arr


class Fit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, WhatIfPlugin):
    NAME = NAME
    BATCH_SCORE_SPANS = True  # batch_score takes a slice of rows (score_rows reads through it, never writes)
    BATCH_SCORE_OWNED = True  # every score_rows array is a new one

    def __init__(self, args: Any = None) -> None:
        if args is None:
            args = decode_args(None)
        self.ignored_resources = frozenset(args.ignored_resources or ())
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups or ())
        self.scorer = build_scorer(args.scoring_strategy)
        # batch_score's arrays (LeastAllocated's weighted mean of per-resource scores in [0, MaxNodeScore],
        # or the balanced score) stay in range when every weight is positive
        self.BATCH_SCORES_IN_RANGE = all(w > 0 for w in self.scorer.weights)

    # PreFilter never skips: its state is needed by Filter.
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        # SidecarContainers is GA in v1.34, so the restartable-init-container rejection never applies.
        state.write(PRE_FILTER_STATE_KEY, pod.requests)
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        req = state.read(PRE_FILTER_STATE_KEY)
        if req is None:
            return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return insufficient_status(fits_request(req, node, self.ignored_resources, self.ignored_resource_groups))

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        """``fitsRequest`` over the node columns. A rejected row's kind is a bit set (bit i: check i
        failed, in ``fits_request``'s order; the top bit: some failing resource exceeds allocatable),
        so every row with the same kind shares one Status."""
        return self._verdict(state, cols, _ALL)

    def batch_filter_span(self, state: CycleState, pod: Pod, cols: NodeColumns, lo: int, hi: int
                          ) -> BatchVerdict | None:
        """``batch_filter`` of the rows ``lo .. hi - 1`` only (its ``ok[lo:hi]``; statuses of positions in
        the span)."""
        return self._verdict(state, cols, slice(lo, hi))

    def _verdict(self, state: CycleState, cols: NodeColumns, sl: slice) -> BatchVerdict | None:
        req = state.read(PRE_FILTER_STATE_KEY)
        if req is None:
            return None
        # (reason, whether each row has room, allocatable per row, the pod's request); the pods check
        # first. The room arrays are this verdict's own (the rejected rows' statuses describe the nodes at
        # verdict time); allocatable never changes.
        checks: list[tuple[str, np.ndarray, np.ndarray | None, int]]
        # (the allocatable columns are kept whole and cut to ``sl`` only when statuses are asked; ``sl`` is
        # ``_ALL`` itself for every row, a slice of ints for a span)
        q_cpu, q_mem = req.milli_cpu, req.memory
        if 0 < q_cpu < _BIG and 0 < q_mem < _BIG:
            # each row against a 0-d int64 array: NumPy compares with a Python int at a third more cost
            # (its scalar conversion), and two such comparisons cost less than one over the two-row array
            # with a broadcast column
            # (the kept arrays looked up here: a call to ``_request`` costs about what it saves)
            c0, m0 = _REQUESTS.get(q_cpu), _REQUESTS.get(q_mem)
            if c0 is None or m0 is None:
                c0, m0 = _request(q_cpu), _request(q_mem)
            if sl is _ALL:
                room_cpu, room_mem = cols.free_cpu >= c0, cols.free_mem >= m0
            else:
                room_cpu, room_mem = cols.free_cpu[sl] >= c0, cols.free_mem[sl] >= m0
            checks = [("Insufficient cpu", room_cpu, cols.alloc_cpu, q_cpu),
                      ("Insufficient memory", room_mem, cols.alloc_mem, q_mem)]
            # the common pod: cpu and memory only, and every row has room for one more pod (the pods check
            # is left out, see below): no other check joins these two
            ok: np.ndarray | None = None if req.ephemeral_storage or req.scalar or cols.full_rows \
                else room_cpu & room_mem
        else:
            checks = []
            ok = None
            if q_cpu > 0:
                checks.append(("Insufficient cpu", cols.free_cpu[sl] >= q_cpu, cols.alloc_cpu, q_cpu))
            if q_mem > 0:
                checks.append(("Insufficient memory", cols.free_mem[sl] >= q_mem, cols.alloc_mem, q_mem))
        if ok is None:
            ok = self._other_checks(req, cols, sl, checks)
            if ok is None:
                return None  # the kinds are 64-bit sets
        cache: dict[int, Status] = {}

        def statuses_of(rows: np.ndarray) -> list[Status]:
            # (made here: most verdicts are never asked for statuses)
            top = 1 << len(checks)

            def make(kind: int) -> Status:
                reasons = [checks[i][0] for i in range(len(checks)) if kind >> i & 1]
                code = Code.UnschedulableAndUnresolvable if kind & top else Code.Unschedulable
                return Status(code, *reasons)

            kinds = np.zeros(len(rows), dtype=np.int64)
            unresolvable = np.zeros(len(rows), dtype=bool)
            for bit, (_, room, alloc, q) in enumerate(checks):
                short = ~room[rows]
                kinds |= short.astype(np.int64) << bit
                if alloc is not None:  # (allocatable never changes in one set of columns)
                    unresolvable |= short & (alloc[sl][rows] < q)
            kinds |= unresolvable.astype(np.int64) << len(checks)
            return template_statuses(kinds, make, cache)

        return BatchVerdict(ok, statuses_of)

    def _other_checks(self, req: Resource, cols: NodeColumns, sl: slice,
                      checks: list[tuple[str, np.ndarray, np.ndarray | None, int]]) -> np.ndarray | None:
        """``_verdict``'s checks after cpu and memory (``checks``, extended here): ephemeral storage, the
        scalar resources, then the pods check first when some row is full (or nothing else is checked);
        the rows that pass them all, or None beyond 60 checks."""
        q = req.ephemeral_storage
        if q > 0:
            checks.append(("Insufficient ephemeral-storage", cols.free_eph[sl] >= q, cols.alloc_eph, q))
        if req.scalar:
            for name, q in req.scalar.items():
                if q == 0:
                    continue
                if is_extended(name) and (name in self.ignored_resources or (
                        self.ignored_resource_groups and name.split("/", 1)[0] in self.ignored_resource_groups)):
                    continue
                have, in_use = cols.scalar(name)
                checks.append((f"Insufficient {name}", have[sl] - in_use[sl] >= q, have, q))
        if cols.full_rows or not checks:
            checks.insert(0, (REASON_TOO_MANY_PODS, (cols.pod_room if sl is _ALL else cols.pod_room[sl]).copy(),
                              None, 1))
        # else every row has room for one more pod: the pods check rejects no row and adds no reason to
        # any row's status (it is left out, as a verdict that passes every row is)
        if len(checks) > 60:
            return None
        if len(checks) == 1:
            return checks[0][1]
        ok = checks[0][1] & checks[1][1]
        for check in checks[2:]:
            ok &= check[1]
        return ok

    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads no node)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self.scorer.pod_requests(pod))
        return None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None:
            pod_requests = self.scorer.pod_requests(pod)
        return self.scorer.score(node, pod_requests)

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None or not self.scorer.resources:
            return None
        return self.scorer.score_rows(cols, rows, pod_requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None:
            pod_requests = self.scorer.pod_requests(pod)
        if not self.scorer.resources:
            return [], Status.as_error("resources not found")
        return self.scorer.score_nodes(nodes, pod_requests, feasible_rows(state, nodes)), None

    # ------------------------------------------------------------------ what-if
    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status,
                       ctx: WhatIfContext | None = None) -> Change:
        """Evict the smallest set of lowest-priority pods that frees what is missing; when the pod asks for
        more than the node's allocatable, no eviction helps: say which node has the most."""
        change = Change(NAME, RESOURCES, status.message())
        short = fits_request(pod.requests, node, self.ignored_resources, self.ignored_resource_groups)
        rows: list[dict[str, Any]] = []
        need: dict[str, int] = {}
        for r in short:
            free = r.capacity - r.used
            gap = (r.used + 1 - r.capacity) if r.resource == "pods" else r.requested - free
            rows.append({"resource": r.resource, "requested": r.requested, "used": r.used,
                         "allocatable": r.capacity, "free": free, "need": gap, "exceeds_allocatable": r.unresolvable})
            if not r.unresolvable:
                need[r.resource] = gap
        change.details = {"short": rows}
        nodes = ctx.nodes if ctx is not None else [node]
        if not short or any(r.unresolvable for r in short):
            for row in rows:  # more than the node's allocatable: no eviction makes room; which node has it?
                if row["exceeds_allocatable"]:
                    row["largest_allocatable"] = max(other.allocatable.get(row["resource"]) for other in nodes)
            return change
        running = ctx.node(node.name) if ctx is not None else node  # nominated pods are not on the node
        victims = smallest_eviction(running.pods, need)
        if victims is None:
            change.details["no_eviction"] = True
            return change
        change.evict = [Eviction(p.key, node.name, p.priority, p) for p in victims]
        return change


def _contribution(p: Pod, resource: str) -> int:
    return 1 if resource == "pods" else p.requests.get(resource)


def smallest_eviction(pods: list[Pod], need: dict[str, int]) -> list[Pod] | None:
    """The smallest set of lowest-priority pods whose requests cover ``need`` (resource -> amount), or None.

    Greedy by priority (lowest first), among equal priorities the pod that covers most of what is
    missing; then every pod that is not needed after all is given back, highest priority first.
    """
    if not need:
        return []
    missing = dict(need)
    chosen: list[Pod] = []
    left = list(pods)
    while any(v > 0 for v in missing.values()):
        if not left:
            return None

        def relief(p: Pod) -> float:
            return sum(min(_contribution(p, r), m) / m for r, m in missing.items() if m > 0)

        lowest = min(p.priority for p in left)
        pick = min((p for p in left if p.priority == lowest), key=lambda p: (-relief(p), p.key))
        left.remove(pick)
        if relief(pick) <= 0:
            continue
        chosen.append(pick)
        for r in missing:
            missing[r] -= _contribution(pick, r)
    for p in sorted(chosen, key=lambda p: (-p.priority, p.key)):
        rest = [q for q in chosen if q is not p]
        if all(sum(_contribution(q, r) for q in rest) >= m for r, m in need.items()):
            chosen = rest
    return sorted(chosen, key=lambda p: (p.priority, p.key))


PLUGIN = Fit


def factory(args: Any, handle: Handle) -> Fit:
    return Fit(args)
