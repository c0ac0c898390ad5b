"""resource.k8s.io/v1 objects DynamicResources reads: DeviceClass, ResourceSlice, ResourceClaim and
ResourceClaimTemplate, parsed from plain dicts with the API server's v1 defaults applied.

Parsing raises ``FieldError`` with the field path (loaders add the file and object). Every CEL selector
is compiled at load: one that does not compile is an input error naming the object and the field, as the
API server would have refused the object. Objects are never mutated: a simulation keeps claim status
(allocation, reservedFor) in its own state.

This module (and the CEL compiler) is imported at a run's first DRA object; what every run uses, the API
version and the container of a snapshot's DRA objects, is in ``pysched.model.dra_objects``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pysched.errors import QuantityError, SelectorError
from pysched.lazyclass import dataclass
from pysched.model.dra_objects import API_VERSION as API_VERSION, DRAObjects as DRAObjects
from pysched.model.dracel import CelError, DeviceInput, Selector, Version, compile_selector, parse_semver
from pysched.model.labels import NodeSelector
from pysched.model.objects import FieldError, ObjectMeta, _bool, _int, _list, _map, _show, _str, _str_list
from pysched.model.quantity import parse_quantity

if TYPE_CHECKING:
    from fractions import Fraction

ANN_POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
FINALIZER = "resource.kubernetes.io/delete-protection"
EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_RESULTS_MAX = 32  # resourceapi.AllocationResultsMaxSize
RESERVED_FOR_MAX = 256  # resourceapi.ResourceClaimReservedForMaxSize


def _selectors(raw: Mapping, key: str, path: str) -> tuple[Selector, ...]:
    out = []
    for i, s in enumerate(_list(raw, key, path)):
        p = f"{path}.{key}[{i}]"
        if not isinstance(s, Mapping):
            raise FieldError(p, f"expected an object, got {_show(s)}")
        cel = _map(s, "cel", p)
        expr = _str(cel, "expression", f"{p}.cel")
        if not expr:
            raise FieldError(f"{p}.cel.expression", "required: a CEL expression")
        try:
            out.append(compile_selector(expr))
        except CelError as e:
            raise FieldError(f"{p}.cel.expression", f"invalid CEL expression {expr!r}: {e}") from None
    return tuple(out)


# --------------------------------------------------------------------------- DeviceClass

@dataclass(slots=True, frozen=True)
class DeviceClass:
    name: str
    selectors: tuple[Selector, ...]
    uid: str = ""


def parse_device_class(raw: Mapping) -> DeviceClass:
    meta = ObjectMeta.parse(raw.get("metadata") or {}, "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    return DeviceClass(meta.name, _selectors(spec, "selectors", "spec"), meta.uid)


# --------------------------------------------------------------------------- ResourceSlice

@dataclass(slots=True)
class Device:
    name: str
    attributes: dict[str, Any]  # qualified name -> int | bool | str | Version
    capacity: dict[str, Fraction]
    node_name: str = ""  # per-device node selection
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    consumes_counters: bool = False
    binding_conditions: bool = False
    cel: DeviceInput | None = None
    node_selector_raw: dict | None = None


@dataclass(slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: NodeSelector | None
    per_device_node_selection: bool
    devices: list[Device]
    index: int = 0  # input order
    node_selector_raw: dict | None = None


def _node_selector(raw: Mapping, key: str, path: str) -> NodeSelector | None:
    v = raw.get(key)
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise FieldError(f"{path}.{key}", f"expected an object, got {_show(v)}")
    try:
        return NodeSelector.parse(v)
    except (SelectorError, ValueError) as e:
        raise FieldError(f"{path}.{key}", str(e)) from None


def _attribute(raw: Any, path: str) -> Any:
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise FieldError(path, "expected exactly one of int, bool, string, version")
    (kind, value), = raw.items()
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "version" and isinstance(value, str):
        try:
            parse_semver(value)
        except ValueError as e:
            raise FieldError(f"{path}.version", f"must be a semantic version: {e}") from None
        return Version(value)
    raise FieldError(f"{path}.{kind}", f"unsupported attribute value {_show(value)}")


def _device(raw: Any, path: str, driver: str) -> Device:
    if not isinstance(raw, Mapping):
        raise FieldError(path, f"expected an object, got {_show(raw)}")
    name = _str(raw, "name", path)
    if not name:
        raise FieldError(f"{path}.name", "required: a non-empty string")
    attrs = {str(k): _attribute(v, f"{path}.attributes.{k}") for k, v in _map(raw, "attributes", path).items()}
    caps: dict[str, Fraction] = {}
    for k, v in _map(raw, "capacity", path).items():
        cp = f"{path}.capacity.{k}"
        if not isinstance(v, Mapping):
            raise FieldError(cp, f"expected an object, got {_show(v)}")
        value: Any = v.get("value")
        try:
            caps[str(k)] = parse_quantity(value)
        except QuantityError as e:
            raise FieldError(f"{cp}.value", str(e)) from None
    d = Device(name, attrs, caps,
               node_name=_str(raw, "nodeName", path), all_nodes=_bool(raw, "allNodes", path),
               node_selector=_node_selector(raw, "nodeSelector", path),
               consumes_counters=bool(_list(raw, "consumesCounters", path)),
               binding_conditions=bool(_list(raw, "bindingConditions", path)),
               node_selector_raw=raw.get("nodeSelector"))
    d.cel = DeviceInput(driver, attrs, caps)
    return d


def parse_resource_slice(raw: Mapping, index: int = 0) -> ResourceSlice:
    meta = ObjectMeta.parse(raw.get("metadata") or {}, "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    driver = _str(spec, "driver", "spec")
    if not driver:
        raise FieldError("spec.driver", "required: a non-empty string")
    pool = _map(spec, "pool", "spec")
    pool_name = _str(pool, "name", "spec.pool")
    if not pool_name:
        raise FieldError("spec.pool.name", "required: a non-empty string")
    devices = [_device(d, f"spec.devices[{i}]", driver) for i, d in enumerate(_list(spec, "devices", "spec"))]
    return ResourceSlice(
        name=meta.name, driver=driver, pool=pool_name,
        generation=_int(pool, "generation", "spec.pool", 0) or 0,
        slice_count=_int(pool, "resourceSliceCount", "spec.pool", 1) or 0,
        node_name=_str(spec, "nodeName", "spec"), all_nodes=_bool(spec, "allNodes", "spec"),
        node_selector=_node_selector(spec, "nodeSelector", "spec"),
        per_device_node_selection=spec.get("perDeviceNodeSelection") is not None,
        devices=devices, index=index, node_selector_raw=spec.get("nodeSelector"))


# --------------------------------------------------------------------------- ResourceClaim

@dataclass(slots=True, frozen=True)
class SubRequest:
    """``exactly`` of a request, or one entry of ``firstAvailable``."""

    name: str
    device_class: str
    mode: str
    count: int
    selectors: tuple[Selector, ...]
    admin_access: bool | None = None
    has_capacity: bool = False


@dataclass(slots=True, frozen=True)
class Request:
    name: str
    exactly: SubRequest | None
    first_available: tuple[SubRequest, ...] = ()


@dataclass(slots=True, frozen=True)
class Constraint:
    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(slots=True, frozen=True)
class ClaimSpec:
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]


@dataclass(slots=True, frozen=True)
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False


@dataclass(slots=True, frozen=True)
class Allocation:
    results: tuple[DeviceResult, ...]
    node_selector: NodeSelector | None


@dataclass(slots=True, frozen=True)
class Consumer:
    resource: str
    name: str
    uid: str


@dataclass(slots=True)
class ResourceClaim:
    meta: ObjectMeta
    spec: ClaimSpec
    allocation: Allocation | None = None
    reserved_for: tuple[Consumer, ...] = ()
    generated: bool = False  # created by the simulation from a template

    @property
    def key(self) -> str:
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def uid(self) -> str:
        return self.meta.uid or self.key


def _sub_request(raw: Mapping, path: str, name: str) -> SubRequest:
    mode = _str(raw, "allocationMode", path) or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise FieldError(f"{path}.allocationMode", f'unsupported value {mode!r}: supported values: "All", "ExactCount"')
    count = _int(raw, "count", path)
    if mode == EXACT_COUNT:
        count = 1 if count is None else count
        if count <= 0:
            raise FieldError(f"{path}.count", f"must be greater than zero, got {count}")
    elif count not in (None, 0):
        raise FieldError(f"{path}.count", "must not be set when allocationMode is All")
    admin = raw.get("adminAccess")
    if admin is not None and not isinstance(admin, bool):
        raise FieldError(f"{path}.adminAccess", f"expected true or false, got {_show(admin)}")
    cls = _str(raw, "deviceClassName", path)
    if not cls:
        raise FieldError(f"{path}.deviceClassName", "required: a non-empty string")
    return SubRequest(name, cls, mode, count or 0, _selectors(raw, "selectors", path), admin,
                      raw.get("capacity") is not None)


def parse_claim_spec(raw: Mapping, path: str) -> ClaimSpec:
    devices = _map(raw, "devices", path)
    dpath = f"{path}.devices" if path else "devices"
    requests = []
    for i, r in enumerate(_list(devices, "requests", dpath)):
        rp = f"{dpath}.requests[{i}]"
        if not isinstance(r, Mapping):
            raise FieldError(rp, f"expected an object, got {_show(r)}")
        name = _str(r, "name", rp)
        if not name:
            raise FieldError(f"{rp}.name", "required: a non-empty string")
        exactly = r.get("exactly")
        first = _list(r, "firstAvailable", rp)
        if (exactly is not None) == bool(first):
            raise FieldError(rp, "exactly one of exactly or firstAvailable is required")
        if exactly is not None:
            if not isinstance(exactly, Mapping):
                raise FieldError(f"{rp}.exactly", f"expected an object, got {_show(exactly)}")
            requests.append(Request(name, _sub_request(exactly, f"{rp}.exactly", name)))
        else:
            subs = []
            for j, s in enumerate(first):
                sp = f"{rp}.firstAvailable[{j}]"
                if not isinstance(s, Mapping):
                    raise FieldError(sp, f"expected an object, got {_show(s)}")
                sname = _str(s, "name", sp)
                if not sname:
                    raise FieldError(f"{sp}.name", "required: a non-empty string")
                subs.append(_sub_request(s, sp, sname))
            requests.append(Request(name, None, tuple(subs)))
    constraints = []
    for i, c in enumerate(_list(devices, "constraints", dpath)):
        cp = f"{dpath}.constraints[{i}]"
        if not isinstance(c, Mapping):
            raise FieldError(cp, f"expected an object, got {_show(c)}")
        constraints.append(Constraint(tuple(_str_list(c, "requests", cp)), _str(c, "matchAttribute", cp) or None,
                                      _str(c, "distinctAttribute", cp) or None))
    return ClaimSpec(tuple(requests), tuple(constraints))


def _allocation(raw: Mapping, path: str) -> Allocation | None:
    alloc = raw.get("allocation")
    if alloc is None:
        return None
    if not isinstance(alloc, Mapping):
        raise FieldError(f"{path}.allocation", f"expected an object, got {_show(alloc)}")
    ap = f"{path}.allocation"
    devices = _map(alloc, "devices", ap)
    results = []
    for i, r in enumerate(_list(devices, "results", f"{ap}.devices")):
        rp = f"{ap}.devices.results[{i}]"
        if not isinstance(r, Mapping):
            raise FieldError(rp, f"expected an object, got {_show(r)}")
        results.append(DeviceResult(_str(r, "request", rp), _str(r, "driver", rp), _str(r, "pool", rp),
                                    _str(r, "device", rp), r.get("adminAccess") is True))
    return Allocation(tuple(results), _node_selector(alloc, "nodeSelector", ap))


def parse_resource_claim(raw: Mapping) -> ResourceClaim:
    meta = ObjectMeta.parse(raw.get("metadata") or {}, "metadata")
    spec = parse_claim_spec(_map(raw, "spec", ""), "spec")
    status = _map(raw, "status", "")
    reserved = []
    for i, c in enumerate(_list(status, "reservedFor", "status")):
        cp = f"status.reservedFor[{i}]"
        if not isinstance(c, Mapping):
            raise FieldError(cp, f"expected an object, got {_show(c)}")
        reserved.append(Consumer(_str(c, "resource", cp), _str(c, "name", cp), _str(c, "uid", cp)))
    return ResourceClaim(meta, spec, _allocation(status, "status"), tuple(reserved))


@dataclass(slots=True, frozen=True)
class ResourceClaimTemplate:
    meta: ObjectMeta
    spec: ClaimSpec


def parse_claim_template(raw: Mapping) -> ResourceClaimTemplate:
    meta = ObjectMeta.parse(raw.get("metadata") or {}, "metadata")
    spec = _map(raw, "spec", "")
    return ResourceClaimTemplate(meta, parse_claim_spec(_map(spec, "spec", "spec"), "spec.spec"))


def generated_claim_name(pod_name: str, pod_claim: str, pod_uid: str) -> str:
    """``<pod>-<claim>-<5 chars>``: the resourceclaim controller's generateName with a suffix derived
    from the pod (the controller's is random)."""
    import hashlib  # only pods with claim templates need it; OpenSSL's start stays off every other run

    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(f"{pod_uid}/{pod_claim}".encode()).digest()
    suffix = "".join(alphabet[b % len(alphabet)] for b in digest[:5])
    base = f"{pod_name}-{pod_claim}"
    if len(base) > 57:  # generateName is cut so that the name stays within 63 characters
        base = base[:57]
    return f"{base}-{suffix}"
