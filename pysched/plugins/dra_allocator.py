"""The structured-parameters allocator of v1.34 (k8s.io/dynamic-resource-allocation/structured), with the
feature set of the default v1.34 scheduler: admin access and prioritized lists (firstAvailable) on;
partitionable devices, device taints, binding conditions and consumable capacity off.

Semantics kept from upstream: the pools a node sees (per-node, node-selector and all-nodes slices; the
newest generation of a pool wins; a pool with fewer slices than it announces is incomplete; duplicate
device names make it invalid); claims, requests and devices are tried in order with backtracking and the
first complete solution wins; a device held by any claim's allocation is in use (unless the request asks
for admin access); ``matchAttribute`` constraints; ``All`` takes every selectable device of complete
pools; at most 32 devices per claim. Pools are walked sorted by driver and pool name (upstream walks a Go
map, i.e. at random). Errors (a CEL runtime error, an invalid pool) are ``AllocationError``: the Filter
turns them into an Error status, as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from functools import lru_cache
from typing import Any

from pysched.lazyclass import dataclass
from pysched.model.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX,
    Allocation,
    Constraint,
    DeviceClass,
    DeviceResult,
    ResourceClaim,
    ResourceSlice,
    SubRequest,
)
from pysched.model.dracel import CelError
from pysched.model.labels import NodeSelector

DeviceID = tuple[str, str, str]


class AllocationError(Exception):
    """Allocation cannot proceed (upstream returns an error, the Filter an Error status)."""


class _MaxSize(Exception):
    pass


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice]
    incomplete: bool = False
    invalid_reason: str = ""

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.name}"


def _node_matches(node: Any, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node.labels, node.name)
    return False


def gather_pools(slices: list[ResourceSlice], node: Any) -> list[Pool]:
    """The pools whose devices the node can reach (upstream GatherPools)."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        if s.per_device_node_selection:
            continue  # DRAPartitionableDevices is off in v1.34
        if not (s.node_name or s.all_nodes or s.node_selector is not None):
            continue  # nothing known set: a future extension
        if not _node_matches(node, s.node_name, s.all_nodes, s.node_selector):
            continue
        key = (s.driver, s.pool)
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(s.driver, s.pool, [s])
        elif s.generation < pool.slices[0].generation:
            continue  # out of date
        elif s.generation > pool.slices[0].generation:
            pool.slices = [s]
        else:
            pool.slices.append(s)
    out = []
    for key in sorted(pools):
        pool = pools[key]
        pool.incomplete = len(pool.slices) != pool.slices[0].slice_count
        seen: set[str] = set()
        for s in pool.slices:
            for d in s.devices:
                if d.name in seen and not pool.invalid_reason:
                    pool.invalid_reason = f"duplicate device name {d.name}"
                seen.add(d.name)
        out.append(pool)
    return out


@dataclass(slots=True)
class _RequestData:
    request: SubRequest
    parent: str  # name of the request holding this subrequest ("" when not a subrequest)
    cls: DeviceClass | None
    num_devices: int = 0
    all_devices: list = field(default_factory=list)  # (id, device, slice) for All
    selected_sub: int = 0


class _MatchAttribute:
    __slots__ = ("attribute", "n", "requests", "value")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.value: Any = None
        self.n = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Any, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        value = lookup_attribute(device, did, self.attribute)
        if value is None:
            return False
        if self.n == 0:
            self.value = value
            self.n = 1
            return True
        if type(value) is not type(self.value) or value != self.value:
            return False
        self.n += 1
        return True

    def remove(self, request: str, sub: str, device: Any, did: DeviceID) -> None:
        if self._applies(request, sub):
            self.n -= 1


class _DistinctAttribute(_MatchAttribute):
    __slots__ = ("seen",)

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.seen: dict[DeviceID, Any] = {}

    def add(self, request: str, sub: str, device: Any, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        value = lookup_attribute(device, did, self.attribute)
        if value is None:
            return False
        if any(type(v) is type(value) and v == value for v in self.seen.values()):
            return False
        self.seen[did] = value
        return True

    def remove(self, request: str, sub: str, device: Any, did: DeviceID) -> None:
        if self._applies(request, sub):
            self.seen.pop(did, None)


def lookup_attribute(device: Any, did: DeviceID, name: str) -> Any:
    """A fully qualified attribute; ``<driver>/<id>`` also finds an attribute stored without domain."""
    attrs = device.attributes
    if name in attrs:
        return attrs[name]
    i = name.find("/")
    if i < 0 or name[:i] != did[0]:
        return None
    return attrs.get(name[i + 1:])


MatchCache = dict  # (class name, selectors, id(device)) -> bool | CelError


class Allocator:
    """Built once per pod (PreFilter) and used for every node (Filter)."""

    def __init__(self, classes: Mapping[str, DeviceClass], allocated: Any,
                 pools_for: Callable[[Any], list[Pool]], match_cache: MatchCache | None = None,
                 result_cache: dict | None = None, pool_versions: Mapping[tuple[str, str], int] | None = None) -> None:
        self.classes = classes
        self.allocated = allocated
        self.pools_for = pools_for
        self.match_cache = match_cache  # shared across calls (batched path); None: per call, as upstream
        # Batched path: results by (claim specs, node, versions of the node's pools' devices in use). The
        # outcome of a search depends on nothing else, so pods with alike claims reuse it on every node
        # whose devices did not change. Errors are not kept (their messages name the claim).
        self.result_cache = result_cache
        self.pool_versions = pool_versions or {}
        self._claims: list[ResourceClaim] | None = None
        self._key: tuple = ()

    def allocate(self, node: Any, claims: list[ResourceClaim]) -> list[Allocation] | None:
        cache = self.result_cache
        if cache is None:
            return _Run(self, node, claims).run()
        versions = self.pool_versions
        pools = self.pools_for(node)
        if len(pools) == 1:
            p = pools[0]
            state: Any = versions.get((p.driver, p.name), 0)
        else:
            state = tuple(versions.get((p.driver, p.name), 0) for p in pools)
        key = (self._spec_key(claims), node.name, state)
        hit = cache.get(key, cache)
        if hit is not cache:
            return hit
        result = _Run(self, node, claims).run()
        cache[key] = result
        return result

    def _spec_key(self, claims: list[ResourceClaim]) -> tuple:
        if self._claims is not claims:
            self._claims = claims
            self._key = tuple(id(c.spec) for c in claims)
        return self._key


class _Run:
    def __init__(self, a: Allocator, node: Any, claims: list[ResourceClaim]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.pools = a.pools_for(node)
        self.cache: MatchCache = a.match_cache if a.match_cache is not None else {}
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[str, DeviceID, Any, Any, bool]]] = [[] for _ in claims]

    # ------------------------------------------------------------------ setup
    def run(self) -> list[Allocation] | None:
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, req in enumerate(claim.spec.requests):
                if req.first_available:
                    least = None
                    for si, sub in enumerate(req.first_available):
                        rd = self._validate(claim, sub, req.name, (ci, ri, si))
                        self.data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    minimum += least or 0
                else:
                    assert req.exactly is not None
                    rd = self._validate(claim, req.exactly, "", (ci, ri, 0))
                    self.data[(ci, ri, 0)] = rd
                    minimum += rd.num_devices
            if minimum > ALLOCATION_RESULTS_MAX:
                raise AllocationError(f"claim {claim.key}: number of requested devices {minimum} exceeds the "
                                      f"claim limit of {ALLOCATION_RESULTS_MAX}")
            self.constraints.append([self._constraint(claim, i, c) for i, c in enumerate(claim.spec.constraints)])
        try:
            done = self._one(0, 0, 0, 0, False)
        except _MaxSize:
            done = False
        if not done:
            return None
        out = []
        for ci in range(len(self.claims)):
            results = tuple(DeviceResult(name, did[0], did[1], did[2], admin)
                            for name, did, _dev, _slice, admin in self.results[ci])
            out.append(Allocation(results, self._node_selector(ci)))
        return out

    def _constraint(self, claim: ResourceClaim, i: int, c: Constraint) -> _MatchAttribute:
        if c.match_attribute:
            return _MatchAttribute(c.requests, c.match_attribute)
        if c.distinct_attribute:
            return _DistinctAttribute(c.requests, c.distinct_attribute)
        raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)")

    def _validate(self, claim: ResourceClaim, req: SubRequest, parent: str, key: tuple[int, int, int]) -> _RequestData:
        name = req.name
        if req.has_capacity:
            raise AllocationError(f"claim {claim.key}, request {parent or name}: has capacity requests, but the "
                                  "DRAConsumableCapacity feature is disabled")
        cls = self.a.classes.get(req.device_class)
        if cls is None:
            raise AllocationError(f"claim {claim.key}, request {name}: could not retrieve device class "
                                  f'{req.device_class}: deviceclass.resource.k8s.io "{req.device_class}" not found')
        rd = _RequestData(req, parent, cls)
        if req.mode != ALL:
            rd.num_devices = req.count
            return rd
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(f"claim {claim.key}, request {name}: asks for all devices, but resource pool "
                                      f"{pool.ident} is currently being updated")
            if pool.invalid_reason:
                raise AllocationError(f"claim {claim.key}, request {name}: asks for all devices, but resource pool "
                                      f"{pool.ident} is currently invalid")
            for s in pool.slices:
                for d in s.devices:
                    if self._selectable(claim, rd, s, d):
                        rd.all_devices.append(((s.driver, s.pool, d.name), d, s))
        rd.num_devices = len(rd.all_devices)
        return rd

    # ------------------------------------------------------------------ selection
    def _selectable(self, claim: ResourceClaim, rd: _RequestData, s: ResourceSlice, d: Any) -> bool:
        if d.binding_conditions:
            return False  # DRADeviceBindingConditions is off
        key = (rd.request.device_class, rd.request.selectors, id(d))
        hit = self.cache.get(key)
        if hit is None:
            try:
                hit = self._match(claim, rd, d)
            except AllocationError as e:
                self.cache[key] = e
                raise
            self.cache[key] = hit
        elif isinstance(hit, AllocationError):
            raise hit
        return hit

    def _match(self, claim: ResourceClaim, rd: _RequestData, d: Any) -> bool:
        cls = rd.cls
        if cls is not None:
            for i, sel in enumerate(cls.selectors):
                try:
                    if not sel.matches(d.cel):
                        return False
                except CelError as e:
                    raise AllocationError(f"class {cls.name}: selector #{i}: CEL runtime error: {e}") from None
        for i, sel in enumerate(rd.request.selectors):
            try:
                if not sel.matches(d.cel):
                    return False
            except CelError as e:
                raise AllocationError(f"claim {claim.key}: selector #{i}: CEL runtime error: {e}") from None
        return True

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    # ------------------------------------------------------------------ the search
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _MaxSize:
                return False
        rd = self.data[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    ok = self._one(ci, ri, sub, di, True)
                except _MaxSize:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSize()
            return False
        req = rd.request
        do_all = req.mode == ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX:
            raise _MaxSize()
        if do_all:
            did, d, s = rd.all_devices[di]
            undo = self._take(ci, rd, did, d, s, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(req.admin_access)
        for pool in self.pools:
            if pool.invalid_reason:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            for s in pool.slices:
                for d in s.devices:
                    did = (pool.driver, pool.name, d.name)
                    if admin:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(claim, rd, s, d):
                        continue
                    undo = self._take(ci, rd, did, d, s, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _take(self, ci: int, rd: _RequestData, did: DeviceID, d: Any, s: ResourceSlice,
              must: bool) -> Callable[[], None] | None:
        req = rd.request
        admin = bool(req.admin_access)
        if admin and ci in self.allocating.get(did, ()):
            return None
        if not admin and self._in_use(did):
            return None
        if d.consumes_counters:
            return None  # DRAPartitionableDevices is off
        base, sub = (rd.parent, req.name) if rd.parent else (req.name, "")
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, d, did):
                if must:
                    raise AllocationError(f"claim {self.claims[ci].key}, request {req.name}: cannot add device "
                                          f"{did[0]}/{did[1]}/{did[2]} because a claim constraint would not be "
                                          "satisfied")
                for c2 in constraints[:i]:
                    c2.remove(base, sub, d, did)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        name = f"{rd.parent}/{req.name}" if rd.parent else req.name
        self.results[ci].append((name, did, d, s, admin))
        n = len(self.results[ci]) - 1

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub, d, did)
            self.allocating[did].discard(ci)
            del self.results[ci][n:]
        return undo

    # ------------------------------------------------------------------ result
    def _node_selector(self, ci: int) -> NodeSelector | None:
        fields: list[dict] = []
        exprs: list[dict] = []
        for _name, _did, _d, s, _admin in self.results[ci]:
            node_name = s.node_name
            raw = s.node_selector_raw
            if node_name:
                return node_name_selector(self.node.name)
            if isinstance(raw, dict):
                terms = raw.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(f"create NodeSelector for claim {self.claims[ci].meta.name}: unsupported "
                                          f"ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    _merge(terms[0].get("matchFields") or [], fields)
                    _merge(terms[0].get("matchExpressions") or [], exprs)
        if fields or exprs:
            term: dict = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return NodeSelector.parse({"nodeSelectorTerms": [term]})
        return None


@lru_cache(maxsize=1 << 16)
def node_name_selector(name: str) -> NodeSelector:
    """``metadata.name In [name]`` (selectors are immutable, so one per node is shared)."""
    return NodeSelector.parse({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [name]}]}]})


def _merge(src: list[dict], dst: list[dict]) -> None:
    for r in src:
        values = set(r.get("values") or ())
        if not any(e.get("key") == r.get("key") and e.get("operator") == r.get("operator")
                   and set(e.get("values") or ()) == values for e in dst):
            dst.append(r)
