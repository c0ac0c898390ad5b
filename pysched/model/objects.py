"""Slotted dataclasses for the Kubernetes objects the scheduler reads, parsed from plain dicts.

Parsing raises ``FieldError`` with the field path; loaders add the file and object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import Any, TypeVar

from pysched.errors import QuantityError, SelectorError
from pysched.lazyclass import dataclass
from pysched.model.labels import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    label_key_error,
    label_value_error,
    validate_node_selector,
    validate_node_selector_term,
)
from pysched.model.quantity import KNOWN_MILLI, to_milli
from pysched.model.resources import (
    CPU,
    MEMORY,
    NON_ZERO_DEFAULTS,
    Resource,
    add_lists,
    is_pod_level_supported,
    max_lists,
)
from pysched.model.timeutil import parse_text as _parse_time_text, parse_time

#: an instance without ``__init__``, whose fields the caller stores (every one of them)
_new = object.__new__

# ``isinstance(v, Mapping)`` goes through the ABC machinery (~0.4 us); parsed YAML and JSON are plain
# dicts, which the tuple's first member settles at once
_MAP = (dict, Mapping)


class FieldError(ValueError):
    """A field of an object holds something unexpected."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


# --------------------------------------------------------------------------- helpers

def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show(v: object) -> str:
    """A value for an error message: its type and a short repr."""
    text = repr(v)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(v).__name__} {text}"


def _map(raw: Mapping, key: str, path: str) -> dict:
    v = raw.get(key)
    if v is None:
        return {}
    if not isinstance(v, _MAP):
        raise FieldError(_child(path, key), f"expected an object, got {_show(v)}")
    return v  # type: ignore[return-value]


def _list(raw: Mapping, key: str, path: str) -> list:
    v = raw.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise FieldError(_child(path, key), f"expected a list, got {_show(v)}")
    return v


def _str(raw: Mapping, key: str, path: str, default: str = "") -> str:
    v = raw.get(key)
    if v is None:
        return default
    if not isinstance(v, str):
        raise FieldError(_child(path, key), f"expected a string, got {_show(v)}")
    return v


def _int(raw: Mapping, key: str, path: str, default: int | None = None) -> int | None:
    v = raw.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(_child(path, key), f"expected an integer, got {_show(v)}")
    return v


def _bool(raw: Mapping, key: str, path: str) -> bool:
    v = raw.get(key)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise FieldError(_child(path, key), f"expected true or false, got {_show(v)}")
    return v


def _enum(raw: Mapping, key: str, path: str, allowed: tuple[str, ...]) -> str | None:
    """An optional string field that must be one of ``allowed`` (empty counts as absent)."""
    v = raw.get(key)
    if v is None or v == "":
        return None
    if not isinstance(v, str) or v not in allowed:
        raise FieldError(_child(path, key), f"unsupported value {v!r}: supported values: "
                         + ", ".join(f'"{a}"' for a in allowed))
    return v


def _str_list(raw: Mapping, key: str, path: str) -> list[str]:
    items = _list(raw, key, path)
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise FieldError(f"{_child(path, key)}[{i}]", f"expected a string, got {_show(v)}")
    return items


def _time(raw: Mapping, key: str, path: str) -> str | None:
    """An optional RFC 3339 timestamp, kept as its text."""
    v = raw.get(key)
    if v is None:
        return None
    if not isinstance(v, str) or parse_time(v) is None:
        raise FieldError(_child(path, key), f"expected an RFC 3339 timestamp such as 2025-03-01T08:00:00Z, "
                         f"got {_show(v)}")
    return v


def _labels(raw: Mapping, key: str, path: str, validate: bool = False) -> dict[str, str]:
    """A map of label values (strings; YAML turns ``app: 1`` or ``on: true`` into other types).

    ``validate`` also checks keys and values as the API server validates a label map (nodeSelector)."""
    v = _map(raw, key, path)
    for k, val in v.items():
        if not isinstance(k, str):
            raise FieldError(_child(path, key), f"label keys must be strings, got {_show(k)}")
        if not isinstance(val, str):
            hint = ""
            if isinstance(val, bool):
                hint = f' (YAML reads an unquoted {str(val).lower()} as a boolean: quote it, {k}: "{str(val).lower()}")'
            elif isinstance(val, (int, float)):
                hint = f' (YAML reads an unquoted {val} as a number: quote it, {k}: "{val}")'
            raise FieldError(f"{_child(path, key)}.{k}",
                             f"label values must be strings, got {_show(val)}{hint}")
        if validate:
            err = label_key_error(k) or label_value_error(val)
            if err:
                raise FieldError(f"{_child(path, key)}.{k}", err)
    return v


def parse_resource_list(raw: object, path: str, allow_negative: bool = False) -> dict[str, int]:
    if raw is None:
        return {}
    if type(raw) is dict:
        # the usual list: quantity texts read before (a dump repeats a few dozen), non-negative; anything
        # else is read below from the start, which also raises its errors
        known = KNOWN_MILLI.get
        out: dict[str, int] = {}
        for name, q in raw.items():
            milli = known(q) if type(q) is str else None
            if milli is None or milli < 0 or type(name) is not str or not name:
                break
            out[name] = milli
        else:
            return out
    if not isinstance(raw, _MAP):
        raise FieldError(path, f"expected a map of resource quantities, got {type(raw).__name__}")
    out = {}
    for name, q in raw.items():
        if not isinstance(name, str) or not name:
            raise FieldError(path, f"resource names must be non-empty strings, got {_show(name)}")
        try:
            milli = to_milli(q)
        except QuantityError as e:
            raise FieldError(f"{path}.{name}", str(e)) from None
        if milli < 0 and not allow_negative:
            raise FieldError(f"{path}.{name}", f"must be greater than or equal to 0, got {q!r}")
        out[name] = milli
    return out


def _selector(raw: object, path: str) -> LabelSelector:
    try:
        return LabelSelector.parse(raw, path)  # type: ignore[arg-type]
    except SelectorError as e:
        raise _selector_field_error(e, path) from None


def _selector_field_error(e: SelectorError, path: str) -> FieldError:
    return FieldError(getattr(e, "path", path), getattr(e, "detail", str(e)))


def selector_or_error(raw: object, path: str) -> LabelSelector | str:
    """A selector, or its parse error as text (pods with bad selectors fail at PreFilter upstream)."""
    try:
        return LabelSelector.parse(raw, path)  # type: ignore[arg-type]
    except SelectorError as e:
        return str(e)


@dataclass(slots=True)
class ObjectMeta:
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creation: str
    owner_refs: list[dict]
    deletion_timestamp: str | None

    @classmethod
    def parse(cls, raw: object, path: str = "metadata", namespaced: bool = True,
              labels_valid: bool = False) -> ObjectMeta:
        """``labels_valid``: the caller knows ``labels`` is absent or a mapping of valid label keys to
        string values (the schema check found the object clean), so they are not checked again."""
        if not isinstance(raw, _MAP):
            raise FieldError(path, f"expected an object, got {_show(raw)}")
        get = raw.get
        name = get("name")
        if not isinstance(name, str) or not name:
            raise FieldError(f"{path}.name", "required: a non-empty string")
        # each field read in the order of the fields, a string or an absent value taken at once (most
        # metadata): the helpers, which name the path in their errors, judge anything else
        ns = get("namespace")
        if ns is None:  # (cluster-scoped objects: "", as _str returns it, without the call)
            ns = ""
        elif type(ns) is not str:
            ns = _str(raw, "namespace", path)
        uid = get("uid")
        if uid is None:
            uid = ""
        elif type(uid) is not str:
            uid = _str(raw, "uid", path)
        if labels_valid:
            labels = get("labels")
            if labels is None:
                labels = {}
        else:
            labels = _labels(raw, "labels", path)
        annotations = get("annotations")
        if annotations is None:
            annotations = {}
        elif type(annotations) is not dict:
            annotations = _map(raw, "annotations", path)
        creation = get("creationTimestamp")
        if creation is None:
            creation = ""
        elif type(creation) is not str or not creation or _parse_time_text(creation) is None:
            creation = _time(raw, "creationTimestamp", path) or ""
        owners = get("ownerReferences")
        owner_refs = [o for o in _list(raw, "ownerReferences", path) if isinstance(o, dict)] \
            if owners is not None else []
        deletion = get("deletionTimestamp")
        if deletion is not None:
            deletion = _time(raw, "deletionTimestamp", path)
        # the API server defaults an empty namespace. Made by storing each field (every one, in the order
        # of the fields) rather than through cls(...): a class call goes through type.__call__ and a
        # frame of __init__ of its own, which cost more than the stores (~2,800 instructions against ~1,800)
        meta = _new(cls)
        meta.name = name
        meta.namespace = (ns or "default") if namespaced else ""
        meta.uid = uid or ""
        meta.labels = labels
        meta.annotations = annotations
        meta.creation = creation
        meta.owner_refs = owner_refs
        meta.deletion_timestamp = deletion
        return meta

    def controller_ref(self) -> dict | None:
        for o in self.owner_refs:
            if o.get("controller") is True:
                return o
        return None


# --------------------------------------------------------------------------- taints and tolerations

_TAINT_EFFECTS = frozenset(("NoSchedule", "PreferNoSchedule", "NoExecute"))
_TOLERATED_EFFECTS = frozenset(("", "NoSchedule", "PreferNoSchedule", "NoExecute"))
_OPERATORS = frozenset(("", "Equal", "Exists"))
# taints and tolerations read so far, by their field values (bounded: a process may load many snapshots)
_KNOWN_MAX = 4096
_T = TypeVar("_T")
_TAINTS: dict[tuple[str, str, str], Taint] = {}
_TOLERATIONS: dict[tuple[str, str, str, str], Toleration] = {}

@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, raw: object, path: str) -> Taint:
        if type(raw) is dict:
            # the usual taint (string fields, a known effect, a key): read once per distinct value (a node
            # pool's nodes carry the same few); Taint is frozen, so one instance serves them all
            effect, key, value = raw.get("effect"), raw.get("key"), raw.get("value")
            if type(effect) is str and type(key) is str and key and effect in _TAINT_EFFECTS \
                    and (value is None or type(value) is str):
                return _shared(_TAINTS, cls, (key, value or "", effect))
        if not isinstance(raw, _MAP):
            raise FieldError(path, f"expected an object, got {_show(raw)}")
        effect = _str(raw, "effect", path)
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise FieldError(f"{path}.effect", f"unsupported value {effect!r}: supported values: "
                             f"\"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"")
        key = _str(raw, "key", path)
        if not key:
            raise FieldError(f"{path}.key", "required")
        return cls(key, _str(raw, "value", path), effect)


def _shared(known: dict[Any, _T], cls: Callable[..., _T], values: tuple[str, ...]) -> _T:
    """The one frozen instance of ``cls`` for ``values``, made at its first use and kept while ``known``
    holds fewer than _KNOWN_MAX."""
    obj = known.get(values)
    if obj is None:
        obj = cls(*values)
        if len(known) < _KNOWN_MAX:
            known[values] = obj
    return obj


@dataclass(slots=True, frozen=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    @classmethod
    def parse(cls, raw: object, path: str) -> Toleration:
        if type(raw) is dict:
            # the usual toleration (absent or string fields, a known operator and effect): as for Taint
            get = raw.get
            op, effect, key, value = get("operator"), get("effect"), get("key"), get("value")
            if (op is None or type(op) is str) and (effect is None or type(effect) is str) \
                    and (key is None or type(key) is str) and (value is None or type(value) is str) \
                    and (op or "") in _OPERATORS and (effect or "") in _TOLERATED_EFFECTS:
                return _shared(_TOLERATIONS, cls, (key or "", op or "", value or "", effect or ""))
        if not isinstance(raw, _MAP):
            raise FieldError(path, f"expected an object, got {_show(raw)}")
        op = _str(raw, "operator", path)
        if op not in ("", "Equal", "Exists"):
            raise FieldError(f"{path}.operator", f"unsupported value {op!r}: supported values: \"Equal\", \"Exists\"")
        effect = _str(raw, "effect", path)
        if effect not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise FieldError(f"{path}.effect", f"unsupported value {effect!r}: supported values: "
                             f"\"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"")
        return cls(_str(raw, "key", path), op, _str(raw, "value", path), effect)

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerates_taint(tolerations: tuple[Toleration, ...] | list[Toleration], taint: Taint) -> bool:
    for t in tolerations:
        if t.tolerates(taint):
            return True
    return False


# --------------------------------------------------------------------------- pod affinity

@dataclass(slots=True)
class AffinityTerm:
    """A parsed PodAffinityTerm (upstream ``fwk.AffinityTerm``)."""

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    namespace_selector: LabelSelector  # NOTHING when nil
    weight: int = 0

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        # a nil label set is matched as an empty one: a selector that matches {} matches every namespace
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod.labels)
        return False


def _parse_affinity_term(raw: object, path: str, owner: ObjectMeta, weight: int = 0) -> AffinityTerm:
    """A PodAffinityTerm; an invalid selector raises ``SelectorError`` (see ``PodAffinity.parse_error``)."""
    if not isinstance(raw, _MAP):
        raise FieldError(path, f"expected an object, got {_show(raw)}")
    ns_list = _str_list(raw, "namespaces", path)
    ns_sel_raw = raw.get("namespaceSelector")
    sel = LabelSelector.parse(raw.get("labelSelector"), f"{path}.labelSelector")
    ns_sel = LabelSelector.parse(ns_sel_raw, f"{path}.namespaceSelector") if ns_sel_raw is not None else NOTHING
    namespaces = frozenset(ns_list)
    if not namespaces and ns_sel_raw is None:
        namespaces = frozenset((owner.namespace,))
    tk = _str(raw, "topologyKey", path)
    return AffinityTerm(namespaces, sel, tk, ns_sel, weight)


@dataclass(slots=True)
class PodAffinity:
    required_affinity: list[AffinityTerm] = field(default_factory=list)
    preferred_affinity: list[AffinityTerm] = field(default_factory=list)
    required_anti: list[AffinityTerm] = field(default_factory=list)
    preferred_anti: list[AffinityTerm] = field(default_factory=list)
    parse_error: str | None = None
    has_affinity: bool = False  # podAffinity or podAntiAffinity present (upstream podWithAffinity)

    @classmethod
    def parse(cls, affinity: Mapping, path: str, meta: ObjectMeta) -> PodAffinity:
        if affinity.get("podAffinity") is None and affinity.get("podAntiAffinity") is None:
            return cls()  # most pods
        pa = _map(affinity, "podAffinity", path)
        paa = _map(affinity, "podAntiAffinity", path)
        out = cls(has_affinity=bool(affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None))
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        pref = "preferredDuringSchedulingIgnoredDuringExecution"
        try:
            for attr, src, sub in (("required_affinity", pa, "podAffinity"), ("required_anti", paa, "podAntiAffinity")):
                for i, t in enumerate(_list(src, req, f"{path}.{sub}")):
                    getattr(out, attr).append(_parse_affinity_term(t, f"{path}.{sub}.{req}[{i}]", meta))
            for attr, src, sub in (("preferred_affinity", pa, "podAffinity"),
                                   ("preferred_anti", paa, "podAntiAffinity")):
                for i, w in enumerate(_list(src, pref, f"{path}.{sub}")):
                    p = f"{path}.{sub}.{pref}[{i}]"
                    if not isinstance(w, _MAP):
                        raise FieldError(p, f"expected an object, got {_show(w)}")
                    getattr(out, attr).append(_parse_affinity_term(
                        w.get("podAffinityTerm") or {}, f"{p}.podAffinityTerm", meta, _int(w, "weight", p, 0) or 0))
        except SelectorError as e:
            # upstream fails such a pod at PreFilter; the API server would not have admitted it
            # (validate_pod reports it when a snapshot is loaded)
            out.parse_error = str(e)
        return out


# --------------------------------------------------------------------------- topology spread

@dataclass(slots=True)
class SpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector
    min_domains: int | None
    node_affinity_policy: str | None
    node_taints_policy: str | None
    match_label_keys: list[str]

    @classmethod
    def parse(cls, raw: object, path: str) -> SpreadConstraint:
        if not isinstance(raw, _MAP):
            raise FieldError(path, f"expected an object, got {_show(raw)}")
        when = _str(raw, "whenUnsatisfiable", path)
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise FieldError(f"{path}.whenUnsatisfiable", f"unsupported value {when!r}: supported values: "
                             f"\"DoNotSchedule\", \"ScheduleAnyway\"")
        max_skew = _int(raw, "maxSkew", path, None)
        if max_skew is None or max_skew <= 0:
            raise FieldError(f"{path}.maxSkew", "must be greater than zero")
        tk = _str(raw, "topologyKey", path)
        if not tk:
            raise FieldError(f"{path}.topologyKey", "can not be empty")
        return cls(
            max_skew=max_skew,
            topology_key=tk,
            when_unsatisfiable=when,
            selector=_selector(raw.get("labelSelector"), f"{path}.labelSelector"),
            min_domains=_int(raw, "minDomains", path, None),
            node_affinity_policy=_enum(raw, "nodeAffinityPolicy", path, ("Honor", "Ignore")),
            node_taints_policy=_enum(raw, "nodeTaintsPolicy", path, ("Honor", "Ignore")),
            match_label_keys=list(_str_list(raw, "matchLabelKeys", path)),
        )


# --------------------------------------------------------------------------- containers and pods

@dataclass(slots=True)
class ContainerPort:
    host_ip: str
    protocol: str
    host_port: int
    container_port: int


@dataclass(slots=True)
class Container:
    name: str
    image: str
    requests: dict[str, int]
    limits: dict[str, int]
    ports: list[ContainerPort]
    restartable: bool  # init container with restartPolicy Always (a sidecar)

    @classmethod
    def parse(cls, raw: object, path: str) -> Container:
        if not isinstance(raw, _MAP):
            raise FieldError(path, f"expected an object, got {_show(raw)}")
        get = raw.get
        res = get("resources")
        if type(res) is not dict:
            res = _map(raw, "resources", path)
        requests_raw, limits_raw = res.get("requests"), res.get("limits")
        requests = {} if requests_raw is None else parse_resource_list(requests_raw, f"{path}.resources.requests")
        if limits_raw is None:
            limits: dict[str, int] = {}
        else:
            limits = parse_resource_list(limits_raw, f"{path}.resources.limits")
            # API defaulting: a limit without a request sets the request.
            for k, v in limits.items():
                if k not in requests:
                    requests[k] = v
        ports = []
        for i, p in enumerate(_list(raw, "ports", path) if get("ports") is not None else ()):
            pp = f"{path}.ports[{i}]"
            if not isinstance(p, _MAP):
                raise FieldError(pp, f"expected an object, got {_show(p)}")
            ports.append(ContainerPort(_str(p, "hostIP", pp), _str(p, "protocol", pp, "TCP") or "TCP",
                                       _int(p, "hostPort", pp, 0) or 0, _int(p, "containerPort", pp, 0) or 0))
        name, image = get("name"), get("image")  # strings, or the helpers judge them (in this order)
        if type(name) is not str:
            name = _str(raw, "name", path)
        if type(image) is not str:
            image = _str(raw, "image", path)
        return cls(name, image, requests, limits, ports, get("restartPolicy") == "Always")


@dataclass(slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


@dataclass(slots=True, eq=False)
class Pod:
    meta: ObjectMeta
    raw: dict
    node_name: str
    scheduler_name: str
    priority: int
    priority_class_name: str
    preemption_policy: str
    node_selector: dict[str, str] | None
    node_affinity_required: NodeSelector | None
    node_affinity_preferred: list[tuple[int, NodeSelectorTerm | None]] | None
    affinity: PodAffinity
    tolerations: tuple[Toleration, ...]
    spread_constraints: list[SpreadConstraint]
    scheduling_gates: list[str]
    containers: list[Container]
    init_containers: list[Container]
    overhead: dict[str, int]
    pod_requests: dict[str, int]  # spec.resources.requests (pod-level)
    host_network: bool
    volumes: list[dict]
    resource_claims: list[dict]
    phase: str
    start_time: str | None
    nominated_node_name: str
    conditions: list[dict]
    index: int = 0  # input order, for the queue's last tie-break
    # derived
    requests: Any = None  # Resource: PodRequests with pod-level resources and overhead (NodeInfo.Requested)
    non0_cpu: int = 0
    non0_mem: int = 0
    host_ports: list[HostPort] = field(default_factory=list)
    key: str = ""

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    @property
    def uid(self) -> str:
        return self.meta.uid or self.key

    @property
    def terminating(self) -> bool:
        return self.meta.deletion_timestamp is not None

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.affinity.required_anti)

    def all_containers(self) -> list[Container]:
        return self.init_containers + self.containers

    def compute_requests(self, non_missing: Mapping[str, int] | None = None, skip_pod_level: bool = False,
                         exclude_overhead: bool = False) -> dict[str, int]:
        """Upstream ``PodRequests`` in milli-units."""
        reqs: dict[str, int] = {}
        for c in self.containers:
            add_lists(reqs, _with_defaults(c.requests, non_missing))
        sidecars: dict[str, int] = {}
        init_max: dict[str, int] = {}
        for c in self.init_containers:
            creq = _with_defaults(c.requests, non_missing)
            if c.restartable:
                add_lists(reqs, creq)
                add_lists(sidecars, creq)
                usage = sidecars
            else:
                usage = dict(creq)
                add_lists(usage, sidecars)
            max_lists(init_max, usage)
        max_lists(reqs, init_max)
        if not skip_pod_level and self.pod_level_requests_set():
            for k, v in self.pod_requests.items():
                if is_pod_level_supported(k):
                    reqs[k] = v
        if not exclude_overhead and self.overhead:
            add_lists(reqs, self.overhead)
        return reqs

    def pod_level_requests_set(self) -> bool:
        return any(is_pod_level_supported(k) for k in self.pod_requests)


def _with_defaults(reqs: dict[str, int], non_missing: Mapping[str, int] | None) -> dict[str, int]:
    if not non_missing:
        return reqs
    out = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            out[k] = v
    return out


def derive_pod(pod: Pod) -> None:
    """Fill the derived fields NodeInfo and the plugins read many times."""
    if not pod.init_containers and not pod.pod_requests:
        # Most pods: PodRequests is the containers' sum plus overhead, and the non-zero cpu and memory
        # count the defaults for containers that request none; one pass instead of two compute_requests.
        default_cpu, default_mem = NON_ZERO_DEFAULTS[CPU], NON_ZERO_DEFAULTS[MEMORY]
        containers = pod.containers
        if len(containers) == 1:  # most pods: the sum is that container's requests (ints: 0 + v is v)
            r = containers[0].requests
            reqs = dict(r)
            cpu = r.get(CPU, default_cpu)
            mem = r.get(MEMORY, default_mem)
        else:
            reqs = {}
            cpu = mem = 0
            for c in containers:
                r = c.requests
                add_lists(reqs, r)
                cpu += r.get(CPU, default_cpu)
                mem += r.get(MEMORY, default_mem)
        if pod.overhead:
            add_lists(reqs, pod.overhead)
            cpu += pod.overhead.get(CPU, 0)
            mem += pod.overhead.get(MEMORY, 0)
        pod.requests = Resource.from_list(reqs)
        pod.non0_cpu = cpu
        pod.non0_mem = -((-mem) // 1000)
    else:
        reqs = pod.compute_requests()
        pod.requests = Resource.from_list(reqs)
        if pod.pod_level_requests_set():
            non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in reqs}
        else:
            non_missing = NON_ZERO_DEFAULTS
        non0 = pod.compute_requests(non_missing) if non_missing else reqs
        pod.non0_cpu = non0.get(CPU, 0)
        pod.non0_mem = -((-non0.get(MEMORY, 0)) // 1000)
    pod.host_ports = host_ports_of(pod)
    meta = pod.meta
    pod.key = f"{meta.namespace}/{meta.name}"


def host_ports_of(pod: Pod) -> list[HostPort]:
    """Upstream ``GetHostPorts``: sidecar init containers first, then containers; hostPort > 0 only."""
    out: list[HostPort] = []
    init = pod.init_containers
    for c in [c for c in init if c.restartable] + pod.containers if init else pod.containers:
        for p in c.ports:
            hp = p.host_port
            if pod.host_network and hp == 0:
                hp = p.container_port  # hostNetwork pods: API defaulting sets hostPort = containerPort
            if hp > 0:
                out.append(HostPort(p.host_ip, p.protocol or "TCP", hp))
    return out


class _Affinities:
    """The affinities parsed so far in one load (``PodParser``): (namespace, orjson's text) -> the
    affinity, what ``parse_pod`` made of it, and whether it passed ``validate_pod``; confirmed with
    ``==`` as specs are. ``flag``: that last item's entry for the affinity of the pod parsed last.
    Also the topologySpreadConstraints lists parsed so far (by orjson's text, confirmed with ``==``; only
    lists that parsed without error are kept): they depend on nothing else, and ``validate_pod`` does
    not read them."""

    __slots__ = ("_dumps", "_items", "_spreads", "flag")

    def __init__(self, dumps: Any) -> None:
        self._dumps = dumps
        self._items: dict[tuple[str, bytes], tuple[dict, tuple, list[bool]]] = {}
        self._spreads: dict[bytes, tuple[list, list[SpreadConstraint]]] = {}
        self.flag: list[bool] | None = None

    def spread(self, raw: object) -> tuple[bytes | None, list[SpreadConstraint] | None]:
        """(its key, the constraints parsed from an equal list before, or None)."""
        if type(raw) is not list:
            return None, None
        try:
            key = self._dumps(raw)
        except (TypeError, ValueError):
            return None, None
        hit = self._spreads.get(key)
        if hit is None or hit[0] != raw:
            return key, None
        return key, hit[1]

    def keep_spread(self, key: bytes, raw: list, parsed: list[SpreadConstraint]) -> None:
        self._spreads[key] = (raw, parsed)

    def get(self, namespace: str, affinity: object) -> tuple[tuple[str, bytes] | None, tuple | None]:
        """(its key, what parse_pod made of an equal affinity, or None)."""
        if type(affinity) is not dict:
            return None, None
        try:
            key = (namespace, self._dumps(affinity))
        except (TypeError, ValueError):
            return None, None
        hit = self._items.get(key)
        if hit is None or hit[0] != affinity:
            return key, None
        self.flag = hit[2]
        return key, hit[1]

    def put(self, key: tuple[str, bytes], affinity: dict, parsed: tuple) -> None:
        self.flag = [False]
        self._items[key] = (affinity, parsed, self.flag)


def _status_fields(status: Mapping) -> tuple[str, str | None, str, list[dict]]:
    """phase, startTime, nominatedNodeName and conditions of a pod's status, in this order (the usual
    strings and absent fields taken at once, the helpers judging anything else)."""
    get = status.get
    phase = get("phase")
    if type(phase) is not str:
        phase = _str(status, "phase", "status")
    start = get("startTime")
    if start is not None and (type(start) is not str or not start or _parse_time_text(start) is None):
        start = _time(status, "startTime", "status")
    nominated = get("nominatedNodeName")
    if nominated is None:
        nominated = ""
    elif type(nominated) is not str:
        nominated = _str(status, "nominatedNodeName", "status")
    conditions = [] if get("conditions") is None else \
        [c for c in _list(status, "conditions", "status") if isinstance(c, dict)]
    return phase, start, nominated, conditions


def _spec_and_status(raw: Mapping) -> tuple[dict, dict]:
    """An object's spec and status: the plain dicts themselves when they are (the usual case), else through
    ``_map`` with its checks and errors."""
    spec = raw.get("spec")
    if type(spec) is not dict:
        spec = _map(raw, "spec", "")
    status = raw.get("status")
    if type(status) is not dict:
        status = _map(raw, "status", "")
    return spec, status


def parse_pod(raw: Mapping, index: int = 0, labels_valid: bool = False,
              affinities: _Affinities | None = None) -> Pod:
    """A Pod; ``labels_valid`` as for ``ObjectMeta.parse`` (of its metadata). ``affinities``: the
    affinities parsed before (``PodParser``), read from there when this pod's is one of them."""
    # Optional fields most pods leave out are tested for None first: their helpers would return the same
    # empty value, after building the paths their errors would name (a third of the cost of a plain pod).
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", labels_valid=labels_valid)
    spec, status = _spec_and_status(raw)
    sp = "spec"
    given = spec.get
    containers = [Container.parse(c, f"spec.containers[{i}]") for i, c in enumerate(_list(spec, "containers", sp))]
    init = [] if given("initContainers") is None else \
        [Container.parse(c, f"spec.initContainers[{i}]") for i, c in enumerate(_list(spec, "initContainers", sp))]
    req_raw = preferred = None
    known = known_key = None  # (node affinity preferred, required, pod affinity) of an affinity read before
    if given("affinity") is None:
        affinity: dict = {}
        pod_affinity = PodAffinity()
    else:
        affinity = _map(spec, "affinity", sp)
        if affinities is not None:
            known_key, known = affinities.get(meta.namespace, affinity)
        na = _map(affinity, "nodeAffinity", "spec.affinity") if known is None else {}
        nap = "spec.affinity.nodeAffinity"
        req_raw = _map(na, "requiredDuringSchedulingIgnoredDuringExecution", nap) \
            if na.get("requiredDuringSchedulingIgnoredDuringExecution") is not None else None
        if na.get("preferredDuringSchedulingIgnoredDuringExecution") is not None:
            preferred = []
            for i, p in enumerate(_list(na, "preferredDuringSchedulingIgnoredDuringExecution", nap)):
                pp = f"{nap}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                if not isinstance(p, _MAP):
                    raise FieldError(pp, f"expected an object, got {_show(p)}")
                preferred.append((_int(p, "weight", pp, 0) or 0, NodeSelectorTerm.parse(p.get("preference") or {})))
        pod_affinity = None  # parsed below, where it always was (after nodeSelector, tolerations, ...)
    node_selector = given("nodeSelector")
    if node_selector is not None:
        node_selector = _labels(spec, "nodeSelector", sp)
    tolerations = () if given("tolerations") is None else \
        tuple(Toleration.parse(t, f"spec.tolerations[{i}]") for i, t in enumerate(_list(spec, "tolerations", sp)))
    tsc_raw = given("topologySpreadConstraints")
    if tsc_raw is None:
        tsc = []
    else:
        # the constraints of a template recur in specs that differ elsewhere (image, requests): read once
        tsc_key, known_tsc = affinities.spread(tsc_raw) if affinities is not None else (None, None)
        if known_tsc is not None:
            tsc = known_tsc
        else:
            tsc = [SpreadConstraint.parse(c, f"spec.topologySpreadConstraints[{i}]")
                   for i, c in enumerate(_list(spec, "topologySpreadConstraints", sp))]
            if tsc_key is not None and affinities is not None:
                affinities.keep_spread(tsc_key, tsc_raw, tsc)
    gates = []
    for i, g in enumerate(_list(spec, "schedulingGates", sp) if given("schedulingGates") is not None else ()):
        if not isinstance(g, _MAP) or not isinstance(g.get("name"), str):
            raise FieldError(f"spec.schedulingGates[{i}].name", "required: a string")
        gates.append(g["name"])
    if given("resources") is None:
        pod_requests: dict[str, int] = {}
    else:
        pod_res = _map(spec, "resources", sp)
        pod_requests = parse_resource_list(pod_res.get("requests"), "spec.resources.requests")
        pod_limits = parse_resource_list(pod_res.get("limits"), "spec.resources.limits")
        for k, v in pod_limits.items():
            if k not in pod_requests and is_pod_level_supported(k):
                pod_requests[k] = v
    # (an absent string field is "", as _str returns it, without the call: most pods leave these out)
    node_name = given("nodeName")
    if node_name is None:
        node_name = ""
    elif type(node_name) is not str:
        node_name = _str(spec, "nodeName", sp)
    scheduler_name = given("schedulerName")
    if type(scheduler_name) is not str and scheduler_name is not None:
        scheduler_name = _str(spec, "schedulerName", sp)
    scheduler_name = scheduler_name or "default-scheduler"
    priority = given("priority")
    if priority is None:
        priority = 0
    elif type(priority) is not int:
        priority = _int(spec, "priority", sp, 0) or 0
    priority_class_name = given("priorityClassName")
    if priority_class_name is None:
        priority_class_name = ""
    elif type(priority_class_name) is not str:
        priority_class_name = _str(spec, "priorityClassName", sp)
    policy = given("preemptionPolicy")
    preemption_policy = "PreemptLowerPriority" if policy is None or policy == "PreemptLowerPriority" else \
        _enum(spec, "preemptionPolicy", sp, ("Never", "PreemptLowerPriority")) or "PreemptLowerPriority"
    if known is not None:
        preferred, node_affinity_required, pod_affinity = known
    else:
        node_affinity_required = NodeSelector.parse(req_raw) if req_raw is not None else None
        if pod_affinity is None:
            pod_affinity = PodAffinity.parse(affinity, "spec.affinity", meta)
            if known_key is not None and affinities is not None:
                affinities.put(known_key, affinity, (preferred, node_affinity_required, pod_affinity))
    overhead = {} if given("overhead") is None else parse_resource_list(given("overhead"), "spec.overhead")
    pod = Pod(
        meta,
        raw,  # type: ignore[arg-type]
        node_name,
        scheduler_name,
        priority,
        priority_class_name,
        preemption_policy,
        node_selector,
        node_affinity_required,
        preferred,
        pod_affinity,
        tolerations,
        tsc,
        gates,
        containers,
        init,
        overhead,
        pod_requests,
        False if given("hostNetwork") is None else _bool(spec, "hostNetwork", sp),
        [v for v in _list(spec, "volumes", sp) if isinstance(v, dict)] if given("volumes") is not None else [],
        [v for v in _list(spec, "resourceClaims", sp) if isinstance(v, dict)]
        if given("resourceClaims") is not None else [],
        *_status_fields(status),
        index,
    )
    derive_pod(pod)
    return pod


def validate_pod(raw: Mapping, affinity_valid: bool = False) -> None:
    """What the API server's validation rejects in a pod that ``parse_pod`` (the scheduler's view) accepts.

    The scheduler copes with such pods in its own way (a term with an unknown operator matches nothing, an
    invalid pod affinity selector fails PreFilter; upstream's unit tests feed it such pods), but no cluster
    holds them, so a snapshot that does is a mistake: the loader reports it. Raises ``FieldError``; call
    it after ``parse_pod`` succeeded (the types are checked there). ``affinity_valid``: the caller
    validated an equal ``spec.affinity`` before."""
    spec = raw.get("spec")
    if not isinstance(spec, _MAP):
        return
    sp = "spec"
    # None, the usual value of both, is tested first: isinstance of anything but a dict against the
    # Mapping ABC costs a Python-level call
    selector = spec.get("nodeSelector")
    if selector is not None and isinstance(selector, _MAP):
        _labels(spec, "nodeSelector", sp, validate=True)
    affinity = spec.get("affinity")
    if affinity is None or affinity_valid or not isinstance(affinity, _MAP):
        return
    nap = f"{sp}.affinity.nodeAffinity"
    na = affinity.get("nodeAffinity")
    try:
        if na is not None and isinstance(na, _MAP):
            req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                validate_node_selector(req, f"{nap}.requiredDuringSchedulingIgnoredDuringExecution")
            pref = na.get("preferredDuringSchedulingIgnoredDuringExecution")
            for i, p in enumerate(pref if isinstance(pref, list) else []):
                if isinstance(p, _MAP):
                    validate_node_selector_term(
                        p.get("preference"), f"{nap}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference")
        for sub in ("podAffinity", "podAntiAffinity"):
            pa = affinity.get(sub)
            if pa is None or not isinstance(pa, _MAP):
                continue
            path = f"{sp}.affinity.{sub}"
            for group, key in (("requiredDuringSchedulingIgnoredDuringExecution", None),
                               ("preferredDuringSchedulingIgnoredDuringExecution", "podAffinityTerm")):
                terms = pa.get(group)
                for i, t in enumerate(terms if isinstance(terms, list) else []):
                    tp = f"{path}.{group}[{i}]"
                    if key is not None:
                        t, tp = (t.get(key) if isinstance(t, _MAP) else None), f"{tp}.{key}"
                    if not isinstance(t, _MAP):
                        continue
                    LabelSelector.parse(t.get("labelSelector"), f"{tp}.labelSelector")
                    if t.get("namespaceSelector") is not None:
                        LabelSelector.parse(t.get("namespaceSelector"), f"{tp}.namespaceSelector")
    except SelectorError as e:
        raise _selector_field_error(e, f"{sp}.affinity") from None


# the fields of a Pod that ``parse_pod`` reads from ``spec`` alone (pod affinity also from the namespace),
# in the order of Pod's fields, and those ``derive_pod`` computes from them
# (read by name, not by operator.attrgetter, which looks each name up on the type again: about 150
# instructions a field, against a few for a slot read the interpreter has seen at that place before)
def _spec_fields(p: Pod) -> tuple:
    return (p.scheduler_name, p.priority, p.priority_class_name, p.preemption_policy, p.node_selector,
            p.node_affinity_required, p.node_affinity_preferred, p.affinity, p.tolerations, p.spread_constraints,
            p.scheduling_gates, p.containers, p.init_containers, p.overhead, p.pod_requests, p.host_network,
            p.volumes, p.resource_claims)


def _derived_fields(p: Pod) -> tuple:
    return p.requests, p.non0_cpu, p.non0_mem, p.host_ports


class PodParser:
    """``parse_pod`` and ``validate_pod`` for the pods of one load, the fields that depend on the spec
    read once per distinct spec: pods of one template (a Deployment's replicas) differ in their metadata,
    status and nodeName only, and parsing their spec again is most of a pod's cost.

    A spec is known again by its JSON text without ``nodeName`` (orjson, a C call) plus the pod's namespace
    (pod affinity terms without namespaces take it), and confirmed with ``==`` on the spec itself: equal
    texts with unequal values (NaN and null both write ``null``) are parsed anew. The Pods of one spec share
    the parsed values, as copies of a Pod already do (nothing changes them after parsing). A spec that
    parsed with an error is never remembered, and what is read per pod keeps its order, so errors are the
    ones ``parse_pod`` raises. When few specs repeat (under one in eight after ``PROBE`` pods), it stops
    looking them up. The loader looks every pod's spec up first (``expect``), before the schema check,
    which then checks a repeated spec once too."""

    PROBE = 512

    __slots__ = ("_affinities", "_dumps", "_hit", "_hits", "_known", "_memo", "_tries")

    def __init__(self) -> None:
        import orjson  # (here: a start that parses no snapshot does not import it)

        self._dumps = orjson.dumps
        self._affinities = _Affinities(orjson.dumps)  # (also while specs are not looked up)
        # the key of a spec (``_key``), or the identity of the first spec equal to it (``expect``) -> entry
        self._memo: dict[object, tuple[dict, tuple, tuple, list[bool]]] | None = {}
        self._tries = 0
        self._hits = 0
        self._hit: list[bool] | None = None  # the validated flag of the spec of the pod parsed last, if remembered
        # position -> the first spec equal to its own (without nodeName) of the pods whose specs ``expect``
        # looked up, when it was called
        self._known: dict[int, dict] | None = None

    def _key(self, raw: Any) -> tuple[tuple[str, bytes], dict] | None:
        """The memory's key of pod ``raw``'s spec and the spec without ``nodeName`` (a copy when it has
        one); None when the spec is not looked up (no plain spec, or one orjson does not write)."""
        spec = raw.get("spec") if type(raw) is dict else None
        if type(spec) is not dict:
            return None
        meta = raw.get("metadata")
        ns = meta.get("namespace") if type(meta) is dict else None
        if "nodeName" in spec:
            spec = spec.copy()
            del spec["nodeName"]
        try:
            return (ns if type(ns) is str else "", self._dumps(spec)), spec
        except (TypeError, ValueError):  # what orjson does not write (integers over 64 bits, other keys)
            return None

    def expect(self, objects: list[Any], at: Iterable[int], exact: bool = False) -> dict[int, int]:
        """Ahead of parsing, the specs of the pods ``objects[i]`` for ``i`` in ``at`` (in order) looked up
        as ``parse`` looks them up (and no more after ``PROBE`` pods when few specs repeat, nor then does
        ``parse``). ``parse`` given a pod's position (``at``) then remembers its spec by the identity of the
        first spec found equal to it here, without writing or comparing it again. Returns, for each pod
        whose spec (without ``nodeName``) is an earlier pod's, that pod's position: the schema check
        (``validation.Validator``) checks such a spec once. ``exact``: the objects are as orjson read them
        (JSON's own types only, which orjson never writes alike for unequal values): specs written alike
        are equal, and are not compared (a comparison costs about as much as the writing)."""
        known: dict[int, dict] = {}
        repeats: dict[int, int] = {}
        seen: dict[tuple[str, bytes], tuple[dict, int]] = {}
        dumps, probe = self._dumps, self.PROBE
        tries = hits = 0
        for pos in at:
            if tries >= probe and hits * 8 < tries:  # few repeat: not worth the lookups (nor is the memory)
                self._memo = None
                break
            raw = objects[pos]
            # (as _key, written out: a call per pod costs more than the rest of this loop)
            spec = raw.get("spec") if type(raw) is dict else None
            if type(spec) is not dict:
                continue
            meta = raw.get("metadata")
            ns = meta.get("namespace") if type(meta) is dict else None
            if "nodeName" in spec:
                spec = spec.copy()
                del spec["nodeName"]
            try:
                key = (ns if type(ns) is str else "", dumps(spec))
            except (TypeError, ValueError):  # what orjson does not write (integers over 64 bits, other keys)
                continue
            tries += 1
            first = seen.get(key)
            if first is not None and (exact or first[0] == spec):
                hits += 1
                known[pos] = first[0]
                repeats[pos] = first[1]
            else:
                seen[key] = spec, pos
                known[pos] = spec
        self._known = known
        return repeats

    def parse(self, raw: Mapping, index: int = 0, labels_valid: bool = False, at: int = -1) -> Pod:
        """The Pod of ``raw``; ``at``: its position among the objects given to ``expect``, if they were."""
        self._hit = None
        self._affinities.flag = None
        memo = self._memo
        if memo is None or type(raw) is not dict:
            return parse_pod(raw, index, labels_valid, self._affinities)
        known = self._known
        key: object
        if known is None:
            found = self._key(raw)
            if found is None:
                return parse_pod(raw, index, labels_valid, self._affinities)
            key, spec = found
        else:
            # the first spec found equal to this pod's by expect (kept alive there): remembered by its
            # identity, which only equal specs share
            first = known.get(at)
            if first is None:
                return parse_pod(raw, index, labels_valid, self._affinities)
            key, spec = id(first), first
        self._tries += 1
        entry = memo.get(key)
        if entry is None or (entry[0] is not spec and entry[0] != spec):
            pod = parse_pod(raw, index, labels_valid, self._affinities)
            entry = memo[key] = (spec, _spec_fields(pod), _derived_fields(pod), [False])
            self._hit = entry[3]
            if known is None and self._tries >= self.PROBE and self._hits * 8 < self._tries:
                self._memo = None  # few repeat: not worth the lookups
            return pod
        self._hits += 1
        self._hit = entry[3]
        # what parse_pod reads per pod, in its order: metadata, status, nodeName, status fields
        meta_ = ObjectMeta.parse(raw.get("metadata"), "metadata", True, labels_valid)
        status = raw.get("status")
        if type(status) is not dict:
            status = _map(raw, "status", "")
        node_name = raw["spec"].get("nodeName")
        if node_name is None:  # (a pending pod: "", as _str returns it)
            node_name = ""
        elif type(node_name) is not str:
            node_name = _str(raw["spec"], "nodeName", "spec")
        # the usual status (a phase, perhaps a start time, nothing else read) taken here, anything else
        # by _status_fields with its errors
        get = status.get
        phase, start = get("phase"), get("startTime")
        # the derived fields (entry[2]) and the key given to __init__ with the others: no default made for
        # them and set again
        pod_key = f"{meta_.namespace}/{meta_.name}"
        if type(phase) is str and get("nominatedNodeName") is None and get("conditions") is None and (
                start is None or (type(start) is str and start and _parse_time_text(start) is not None)):
            nominated: str = ""
            conditions: list[dict] = []
        else:
            phase, start, nominated, conditions = _status_fields(status)
        # every field of Pod stored, in the order of its fields, the spec's and the derived ones unpacked
        # from the entry's tuples: Pod(...) with the tuples spread costs about twice as much (the arguments
        # gathered into a tuple, type.__call__, a frame of __init__ of its own; ~6,900 instructions against
        # ~3,800). The tests hold this to the fields of Pod.
        pod = _new(Pod)
        pod.meta = meta_
        pod.raw = raw
        pod.node_name = node_name
        (pod.scheduler_name, pod.priority, pod.priority_class_name, pod.preemption_policy, pod.node_selector,
         pod.node_affinity_required, pod.node_affinity_preferred, pod.affinity, pod.tolerations,
         pod.spread_constraints, pod.scheduling_gates, pod.containers, pod.init_containers, pod.overhead,
         pod.pod_requests, pod.host_network, pod.volumes, pod.resource_claims) = entry[1]
        pod.phase = phase
        pod.start_time = start
        pod.nominated_node_name = nominated
        pod.conditions = conditions
        pod.index = index
        pod.requests, pod.non0_cpu, pod.non0_mem, pod.host_ports = entry[2]
        pod.key = pod_key
        return pod

    def validate(self, raw: Mapping) -> None:
        """``validate_pod`` of the pod parsed last; once per distinct spec (it reads nothing else)."""
        hit = self._hit
        if hit is not None and hit[0]:
            return
        affinity = self._affinities.flag
        validate_pod(raw, affinity is not None and affinity[0])
        if hit is not None:
            hit[0] = True
        if affinity is not None:
            affinity[0] = True


# --------------------------------------------------------------------------- nodes

@dataclass(slots=True)
class NodeImage:
    names: list[str]
    size: int


@dataclass(slots=True, eq=False)
class Node:
    meta: ObjectMeta
    raw: dict
    unschedulable: bool
    taints: tuple[Taint, ...]
    allocatable: dict[str, int]
    images: list[NodeImage]

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels


def parse_node(raw: Mapping, labels_valid: bool = False) -> Node:
    """A Node; ``labels_valid`` as for ``ObjectMeta.parse`` (of its metadata)."""
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", False, labels_valid)  # (positional: cheaper)
    spec, status = _spec_and_status(raw)
    taints = () if spec.get("taints") is None else \
        tuple(Taint.parse(t, f"spec.taints[{i}]") for i, t in enumerate(_list(spec, "taints", "spec")))
    alloc_raw, alloc_path = status.get("allocatable"), "status.allocatable"
    if alloc_raw is None:
        alloc_raw, alloc_path = status.get("capacity"), "status.capacity"
    images = []
    for i, im in enumerate(_list(status, "images", "status") if status.get("images") is not None else ()):
        if not isinstance(im, _MAP):
            raise FieldError(f"status.images[{i}]", f"expected an object, got {_show(im)}")
        # a node lists dozens of images: their paths are built only for an error
        names, size = im.get("names"), im.get("sizeBytes")
        names = list(map(str, names)) if type(names) is list else \
            [str(n) for n in _list(im, "names", f"status.images[{i}]")]
        if type(size) is not int:
            size = _int(im, "sizeBytes", f"status.images[{i}]", 0)
        images.append(NodeImage(names, size or 0))
    unschedulable = spec.get("unschedulable")
    if unschedulable is None:  # (most nodes: what _bool returns for it, without the call)
        unschedulable = False
    elif type(unschedulable) is not bool:
        unschedulable = _bool(spec, "unschedulable", "spec")
    return Node(meta, raw, unschedulable, taints,  # type: ignore[arg-type]
                parse_resource_list(alloc_raw, alloc_path), images)


# --------------------------------------------------------------------------- other kinds

@dataclass(slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str | None


def parse_priority_class(raw: Mapping) -> PriorityClass:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    value = _int(raw, "value", "", None)
    if value is None:
        raise FieldError("value", "required: an integer")
    return PriorityClass(meta.name, value, _bool(raw, "globalDefault", ""),
                         _enum(raw, "preemptionPolicy", "", ("Never", "PreemptLowerPriority")))


@dataclass(slots=True)
class PodDisruptionBudget:
    meta: ObjectMeta
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]
    raw: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.meta.namespace}/{self.meta.name}"


def parse_pdb(raw: Mapping) -> PodDisruptionBudget:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata")
    spec = _map(raw, "spec", "")
    status = _map(raw, "status", "")
    sel_raw = spec.get("selector")
    selector = _selector(sel_raw, "spec.selector") if sel_raw is not None else NOTHING
    return PodDisruptionBudget(meta, selector, _int(status, "disruptionsAllowed", "status", 0) or 0,
                               frozenset(str(k) for k in _map(status, "disruptedPods", "status")),
                               raw)  # type: ignore[arg-type]


@dataclass(slots=True)
class Namespace:
    name: str
    labels: dict[str, str]


def parse_namespace(raw: Mapping) -> Namespace:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    labels = dict(meta.labels)
    labels.setdefault("kubernetes.io/metadata.name", meta.name)  # the API server always sets it
    return Namespace(meta.name, labels)


@dataclass(slots=True)
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet: only its selector matters here."""

    kind: str
    meta: ObjectMeta
    selector_map: dict[str, str] | None  # Service / RC: a plain map (None when nil)
    selector: LabelSelector | None  # RS / STS: a LabelSelector
    raw: dict = field(default_factory=dict)
    index: int = 0  # input order among workloads

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.meta.namespace}/{self.meta.name}"


def parse_workload(raw: Mapping, kind: str) -> Workload:
    """Services and controllers (Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job,
    CronJob); the rest of the object stays in ``raw`` for the controllers layer."""
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata")
    spec = _map(raw, "spec", "")
    if kind in ("Service", "ReplicationController"):
        sel = spec.get("selector")
        if sel is not None:
            sel = _labels(spec, "selector", "spec")
        if kind == "ReplicationController" and not sel:
            # the API server defaults an empty selector to the template's labels
            tmpl = _map(spec, "template", "spec")
            tlabels = _labels(_map(tmpl, "metadata", "spec.template"), "labels", "spec.template.metadata")
            sel = dict(tlabels) if tlabels else sel
        return Workload(kind, meta, sel, None, raw)  # type: ignore[arg-type]
    sel_raw = spec.get("selector")
    return Workload(kind, meta, None, _selector(sel_raw, "spec.selector") if sel_raw is not None else NOTHING,
                    raw)  # type: ignore[arg-type]


__all__ = ["EVERYTHING", "NOTHING"]
