"""DynamicResources (DRA): ResourceClaims allocated by the scheduler, as upstream's plugin of v1.34 with
the structured-parameters allocator (``dra_allocator``).

- PreEnqueue: every claim of the pod must exist (a template's claim is named in the pod's status), not be
  being deleted, and a template's claim must be owned by the pod.
- PreFilter: the pod's claims; for claims still to allocate, their device classes must exist; builds the
  allocator over the devices in use at that moment. A pod without claims Skips.
- Filter: an allocated claim must be available on the node (its allocation's node selector); the claims
  to allocate must all be allocatable from the devices the node reaches ("cannot allocate all claims").
- PostFilter: deallocates one unavailable claim reserved for nobody (or only for this pod).
- Reserve picks the node's allocation; PreBind writes allocation and ``reservedFor`` into the simulation's
  claims (``ClusterState.dra``), so later cycles see those devices taken.

The batched path keeps selector results across cycles (devices and selectors never change) and the pools
each node reaches; the reference path (``Handle.batched`` off) gathers pools, devices in use and selector
results from scratch in every cycle, as upstream does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import (
    FilterPlugin,
    Handle,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
)
from pysched.framework.status import PRE_FILTER_SKIP, Code, Status
from pysched.framework.whatif import DEVICES, Change, WhatIfPlugin
from pysched.lazyclass import dataclass
from pysched.model.labels import NodeSelector
from pysched.model.objects import Pod
from pysched.snapshot.dra import ClaimLookupError, DRAState
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from types import ModuleType

    from pysched.model.dra import Allocation, ResourceClaim
    from pysched.plugins.dra_allocator import Allocator

NAME = "DynamicResources"
STATE_KEY = NAME
TRACE_KEY = NAME + "/allocation"  # CycleState: what PreBind wrote (the trace's dra_allocation)
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"


@dataclass(slots=True)
class _DynamicResourcesArgs:
    """Used only while ``pysched.framework.plugin_args`` is unavailable; same field names."""

    filter_timeout: float | None = None


def decode_args(raw: Any) -> Any:
    from pysched.framework import plugin_args
    return plugin_args.DECODERS[NAME](raw, "args")


class _State(StateData):
    """The pod's claims as PreFilter saw them; empty when the plugin has nothing to do. Shared, not
    copied, by clones (upstream's Clone returns the same object)."""

    __slots__ = ("allocator", "any_allocated", "available_on", "chosen", "claims", "node_allocations", "todo",
                 "unavailable_on")

    def __init__(self) -> None:
        self.claims: list[ResourceClaim] = []
        self.available_on: list[NodeSelector | None] = []
        self.allocator: Allocator | None = None
        self.node_allocations: dict[str, list[Allocation]] = {}
        self.unavailable_on: dict[str, tuple[int, ...]] = {}  # node -> claims whose allocation excludes it
        self.chosen: dict[int, Allocation] = {}  # claim index -> allocation picked in Reserve
        self.todo: list[ResourceClaim] = []  # the claims to allocate, in order
        self.any_allocated = False

    def to_allocate(self) -> list[int]:
        return [i for i, c in enumerate(self.claims) if c.allocation is None]


_NO_CLAIMS = _State()  # the state of every pod without claims (read only)


def _allocation() -> ModuleType:
    """``pysched.plugins.dra_allocator``, imported at the first pod with claims: a run without DRA objects
    imports neither it nor ``pysched.model.dra`` and its CEL compiler."""
    from pysched.plugins import dra_allocator

    return dra_allocator


def _missing_state() -> Status:
    return Status.as_error("not found")


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ReservePlugin,
                       PreBindPlugin, WhatIfPlugin):
    NAME = NAME

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else _DynamicResourcesArgs()
        self.handle = handle
        self._match_cache: dict = {}
        self._result_cache: dict = {}
        self._cache_owner: Any = None

    def _dra(self) -> DRAState | None:
        if self.handle is None:
            return None
        return self.handle.snapshot.dra

    def _batched(self) -> bool:
        return self.handle is None or self.handle.batched

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims:  # (most pods: before looking the DRA state up)
            return None
        dra = self._dra()
        if dra is None:
            return None
        try:
            dra.pod_claim_objects(pod)
        except ClaimLookupError as e:
            return Status.unresolvable(str(e))
        return None

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        # (a pod without claims, most pods, before the DRA state is looked up)
        dra = self._dra() if pod.resource_claims else None
        if dra is None:
            # written before anything can reject, as upstream; a pod without claims shares one empty state
            # (nothing writes into a state without claims)
            state.write(STATE_KEY, _NO_CLAIMS)
            return None, PRE_FILTER_SKIP
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = dra.pod_claim_objects(pod)
        except ClaimLookupError as e:
            return None, Status.unresolvable(str(e))
        if not claims:
            return None, Status(Code.Skip)
        to_allocate = 0
        for claim in claims:
            if claim.allocation is not None:
                s.available_on.append(claim.allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate += 1
            for req in claim.spec.requests:
                if req.exactly is not None:
                    st = self._check_class(dra, req.exactly.device_class, req.name)
                    if st is not None:
                        return None, st
                elif req.first_available:
                    for sub in req.first_available:
                        st = self._check_class(dra, sub.device_class, f"{req.name}/{sub.name}")
                        if st is not None:
                            return None, st
                else:
                    return None, Status.unresolvable(
                        f"resource claim {claim.key}, request {req.name}: unknown request type")
        s.claims = claims
        s.todo = [c for c in claims if c.allocation is None]
        s.any_allocated = len(s.todo) < len(claims)
        if to_allocate:
            s.allocator = self._allocator(dra)
        return None, None

    @staticmethod
    def _check_class(dra: DRAState, class_name: str, request: str) -> Status | None:
        if class_name not in dra.classes:
            return Status.unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def _allocator(self, dra: DRAState) -> Allocator:
        allocation = _allocation()
        Allocator, gather_pools = allocation.Allocator, allocation.gather_pools
        if not self._batched():
            return Allocator(dra.classes, dra.allocated_devices(from_scratch=True),
                             lambda node: gather_pools(dra.slices, node), None)
        if self._cache_owner is not dra:  # one cache per simulation state
            self._cache_owner = dra
            self._match_cache = {}
            self._result_cache = {}
        # Copies: the devices in use as PreFilter saw them (a PostFilter deallocation or this pod's PreBind
        # changes the live state; upstream's allocator keeps its PreFilter snapshot too).
        return Allocator(dra.classes, set(dra.allocated), lambda node: dra.pools_for(node, gather_pools),
                         self._match_cache, self._result_cache, dict(dra.pool_version))

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if not s.claims:
            return None
        n = node.node
        unavailable = tuple(i for i, sel in enumerate(s.available_on)
                            if sel is not None and not sel.matches(n.labels, n.name)) if s.any_allocated else ()
        allocations = None
        if s.allocator is not None:
            claims = s.todo
            try:
                allocations = s.allocator.allocate(n, claims)
            except _allocation().AllocationError as e:  # (evaluated only when the allocator raised)
                return Status.as_error(str(e))
            if allocations is None or len(allocations) != len(claims):
                return Status.unresolvable(MSG_CANNOT_ALLOCATE)
        if unavailable:
            s.unavailable_on[n.name] = unavailable
            return Status.unresolvable(MSG_NOT_AVAILABLE)
        if allocations is not None:
            s.node_allocations[n.name] = allocations
        return None

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change:
        """No node change frees a device: the change names the failing requests and the claims holding the
        devices they could use (``diagnose``), without a modification."""
        dra = self._dra()
        details = diagnose(dra, pod, node.node) if dra is not None else {}
        return Change(NAME, DEVICES, status.message(), details=details)

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: CycleState, pod: Pod,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        s = state.read(STATE_KEY)
        if s is None:
            return None, _missing_state()
        if not s.claims:
            return None, Status.unschedulable(MSG_NO_NEW_CLAIMS)
        # Upstream collects the claims its Filter found unavailable; the nodes whose final status says so
        # are exactly those (a trace-only Filter run on other nodes must not count).
        unavailable: set[int] = set()
        for name, st in statuses.statuses.items():
            if st.plugin == NAME and MSG_NOT_AVAILABLE in st.reasons:
                unavailable.update(s.unavailable_on.get(name, ()))
        dra = self._dra()
        for i in sorted(unavailable):  # upstream takes one at random (map order)
            claim = s.claims[i]
            rf = claim.reserved_for
            if not rf or (len(rf) == 1 and rf[0].uid == pod.uid):
                if dra is not None:
                    dra.deallocate(claim.key)
                return None, Status.unschedulable(MSG_DEALLOCATED)
        return None, Status.unschedulable(MSG_STILL_NOT_SCHEDULABLE)

    # ------------------------------------------------------------------ Reserve
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if not s.claims:  # (most pods: nothing to allocate, no list made)
            return None
        todo = s.to_allocate()
        if not todo:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            return Status.as_error("claim allocation not found for node")
        if len(allocations) != len(todo):
            return Status.as_error(f"internal error, have {len(allocations)} allocations, {len(todo)} claims to "
                                   f"allocate, want {len(todo)} claims")
        s.chosen = dict(zip(todo, allocations, strict=True))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.read(STATE_KEY)
        dra = self._dra()
        if s is None or not s.claims or dra is None:
            return
        s.chosen = {}
        for claim in s.claims:  # a reservation PreBind made is taken back (the allocation stays)
            cur = dra.claims.get(claim.key)
            if cur is not None and any(c.uid == pod.uid for c in cur.reserved_for):
                dra.unreserve(claim.key, pod.uid)

    # ------------------------------------------------------------------ PreBind
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if not s.claims:
            return Status(Code.Skip)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if not s.claims:  # (most pods: before looking the DRA state up)
            return None
        dra = self._dra()
        if dra is None:
            return None
        trace = []
        for i, claim in enumerate(s.claims):
            allocation = s.chosen.get(i)
            final = claim
            if not any(c.uid == pod.uid for c in claim.reserved_for):
                cur = dra.claims.get(claim.key)
                if cur is None:
                    return Status.as_error(f"claim {claim.key} got deleted in the meantime")
                if allocation is not None and cur.allocation is not None:
                    return Status.as_error(f"claim {claim.key} got allocated elsewhere in the meantime")
                final = dra.allocate_and_reserve(cur, allocation, pod)
            devices = [{"driver": r.driver, "pool": r.pool, "device": r.device, "request": r.request}
                       for r in (final.allocation.results if final.allocation is not None else ())]
            trace.append({"claim": claim.key, "allocated_in_cycle": allocation is not None, "devices": devices})
        state.write(TRACE_KEY, trace)
        return None


PLUGIN = DynamicResources


def factory(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources(args, handle)


# --------------------------------------------------------------------------- explain: why a node has no devices

def diagnose(dra: DRAState, pod: Pod, node: Any) -> dict:
    """Why the pod's claims do not fit the node's devices, request by request (for ``explain``): devices of
    the class on the node, how many the selectors accept, how many of those are free, and the claims that
    hold the others. Read-only; the verdict itself always comes from Filter."""
    out: dict[str, Any] = {"claims": [], "holders": []}
    try:
        claims = dra.pod_claim_objects(pod)
    except ClaimLookupError as e:
        out["error"] = str(e)
        return out
    pools = _allocation().gather_pools(dra.slices, node)
    devices = [((p.driver, p.name, d.name), d) for p in pools for s in p.slices for d in s.devices]
    in_use = dra.allocated
    held: set[tuple[str, str, str]] = set()
    for claim in claims:
        if claim.allocation is not None:
            sel = claim.allocation.node_selector
            if sel is not None and not sel.matches(node.labels, node.name):
                out["claims"].append({"claim": claim.key, "problem": "allocated-elsewhere"})
            continue
        for req in claim.spec.requests:
            for sub, name in ([(req.exactly, req.name)] if req.exactly is not None else
                              [(s, f"{req.name}/{s.name}") for s in req.first_available]):
                row = _request_row(dra, claim, sub, name, devices, in_use)
                held.update(row.pop("held"))
                out["claims"].append(row)
        if claim.spec.constraints and all(r.get("problem") == "ok" for r in out["claims"]
                                          if r.get("claim") == claim.key):
            for con in claim.spec.constraints:
                attr = con.match_attribute or con.distinct_attribute
                kind = "matchAttribute" if con.match_attribute else "distinctAttribute"
                out["claims"].append({"claim": claim.key, "problem": "constraint", "constraint": f"{kind} {attr}"})
    holders = []
    for c in dra.claims.values():
        if c.allocation is not None and any((r.driver, r.pool, r.device) in held for r in c.allocation.results):
            holders.append({"claim": c.key, "pods": [f"{c.meta.namespace}/{x.name}" for x in c.reserved_for]})
    out["holders"] = sorted(holders, key=lambda h: h["claim"])
    return out


def _request_row(dra: DRAState, claim: ResourceClaim, sub: Any, name: str, devices: list, in_use: Any) -> dict:
    from pysched.model.dra import ALL
    from pysched.model.dracel import CelError

    cls = dra.classes.get(sub.device_class)
    of_class = selectable = free = 0
    held = []
    for did, d in devices:
        try:
            if cls is not None and not all(s.matches(d.cel) for s in cls.selectors):
                continue
            of_class += 1
            if not all(s.matches(d.cel) for s in sub.selectors):
                continue
        except CelError:
            continue
        selectable += 1
        if did in in_use:
            held.append(did)
        else:
            free += 1
    wanted = selectable if sub.mode == ALL else sub.count
    if of_class == 0:
        problem = "no-class-device"
    elif selectable == 0:
        problem = "selector-false"
    elif free < wanted:
        problem = "count-too-high"
    else:
        problem = "ok"
    return {"claim": claim.key, "request": name, "class": sub.device_class,
            "need": "all" if sub.mode == ALL else sub.count, "of_class": of_class,
            "selectable": selectable, "free": free, "problem": problem, "held": held}
