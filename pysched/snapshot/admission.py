"""Admission as the API server runs it on create: pod defaults, LimitRanger, priority.

Loaded pods are taken as already admitted (only priority is resolved, as a dump may lack it); pods the
simulation creates (controllers' pods, replacements) go through every step here, in the API server's
order: ``SetDefaults_Pod`` (a limit without a request sets the request), LimitRanger's defaulting of
container requests and limits, validation (request above limit, LimitRange min/max/ratio), priority.
Nothing given is changed: a created pod's raw object is built anew by the caller and completed here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.errors import QuantityError
from pysched.lazyclass import dataclass
from pysched.model.objects import (
    FieldError,
    Namespace,
    ObjectMeta,
    Pod,
    PriorityClass,
    parse_pod,
    validate_pod,
)
from pysched.model.quantity import to_milli
from pysched.snapshot.cluster import Cluster

BUILTIN_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
# resources whose request may be below the limit; any other resource's request must equal its limit
OVERCOMMITTABLE = ("cpu", "memory", "ephemeral-storage")
CONTAINER_PARTS = ("initContainers", "containers")


# ============================================================================================ LimitRange

@dataclass(slots=True)
class LimitRangeItem:
    """A ``Container`` item after ``SetDefaults_LimitRangeItem`` (default <- max, defaultRequest <- default
    <- min). Values stay the quantity text (written into pods as given) and milli-units (compared)."""

    default: dict[str, object] = field(default_factory=dict)
    default_request: dict[str, object] = field(default_factory=dict)
    min: dict[str, int] = field(default_factory=dict)
    max: dict[str, int] = field(default_factory=dict)
    ratio: dict[str, int] = field(default_factory=dict)  # maxLimitRequestRatio, milli-units


@dataclass(slots=True)
class LimitRange:
    meta: ObjectMeta
    items: list[LimitRangeItem]  # Container items only (Pod and PVC items are not modelled)

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace


def _quantities(raw: object, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FieldError(path, f"expected a map of resource quantities, got {type(raw).__name__}")
    for k, v in raw.items():
        try:
            to_milli(v)
        except QuantityError as e:
            raise FieldError(f"{path}.{k}", str(e)) from None
    return dict(raw)


def _milli(values: Mapping[str, Any]) -> dict[str, int]:
    return {k: to_milli(v) for k, v in values.items()}


def parse_limit_range(raw: Mapping) -> LimitRange:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata")
    spec = raw.get("spec") if isinstance(raw.get("spec"), Mapping) else {}
    limits = spec.get("limits") or []  # type: ignore[union-attr]
    if not isinstance(limits, list):
        raise FieldError("spec.limits", f"expected a list, got {type(limits).__name__}")
    items = []
    for i, it in enumerate(limits):
        path = f"spec.limits[{i}]"
        if not isinstance(it, Mapping):
            raise FieldError(path, f"expected an object, got {type(it).__name__}")
        kind = it.get("type")
        if kind not in ("Container", "Pod", "PersistentVolumeClaim"):
            raise FieldError(f"{path}.type", f"unsupported value {kind!r}: supported values: \"Container\", "
                             f"\"Pod\", \"PersistentVolumeClaim\"")
        default = _quantities(it.get("default"), f"{path}.default")
        default_request = _quantities(it.get("defaultRequest"), f"{path}.defaultRequest")
        mn = _quantities(it.get("min"), f"{path}.min")
        mx = _quantities(it.get("max"), f"{path}.max")
        ratio = _quantities(it.get("maxLimitRequestRatio"), f"{path}.maxLimitRequestRatio")
        if kind != "Container":
            continue
        for k, v in mx.items():  # SetDefaults_LimitRangeItem
            default.setdefault(k, v)
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in mn.items():
            default_request.setdefault(k, v)
        items.append(LimitRangeItem(default, default_request, _milli(mn), _milli(mx), _milli(ratio)))
    return LimitRange(meta, items)


# ============================================================================================ pods

def set_pod_defaults(raw: dict) -> None:
    """``SetDefaults_Pod``: every container limit without a request becomes the request (in place on a
    pod object the caller built)."""
    spec = raw.get("spec") or {}
    for part in CONTAINER_PARTS:
        for c in spec.get(part) or []:
            res = c.get("resources")
            if not isinstance(res, dict) or not isinstance(res.get("limits"), Mapping):
                continue
            requests = dict(res.get("requests") or {})
            for k, v in res["limits"].items():
                requests.setdefault(k, v)
            res["requests"] = requests


def apply_limit_ranges(raw: dict, ranges: list[LimitRange]) -> None:
    """LimitRanger's mutation: defaults fill what each container does not set; first LimitRange (by name)
    to set a resource wins."""
    spec = raw.get("spec") or {}
    for lr in sorted(ranges, key=lambda r: r.name):
        for item in lr.items:
            if not item.default and not item.default_request:
                continue
            for part in CONTAINER_PARTS:
                for c in spec.get(part) or []:
                    res = c.get("resources")
                    if not isinstance(res, dict):
                        res = c["resources"] = {}
                    requests = dict(res.get("requests") or {})
                    limits = dict(res.get("limits") or {})
                    for k, v in item.default_request.items():
                        requests.setdefault(k, v)
                    for k, v in item.default.items():
                        limits.setdefault(k, v)
                    if requests:
                        res["requests"] = requests
                    if limits:
                        res["limits"] = limits


def _fmt(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def validate_resources(raw: Mapping, ranges: list[LimitRange]) -> list[str]:
    """Why the API server would refuse the pod: requests above limits, LimitRange Container min / max /
    maxLimitRequestRatio violated. Empty when it is admitted."""
    problems: list[str] = []
    spec = raw.get("spec") or {}
    for part in CONTAINER_PARTS:
        for i, c in enumerate(spec.get(part) or []):
            res = c.get("resources") or {}
            requests = _milli(res.get("requests") or {})
            limits = _milli(res.get("limits") or {})
            for k, req in requests.items():
                lim = limits.get(k)
                if lim is None:
                    continue
                if k in OVERCOMMITTABLE and req > lim:
                    problems.append(f"spec.{part}[{i}].resources.requests: Invalid value: \"{_fmt(req)}\": must "
                                    f"be less than or equal to {k} limit of {_fmt(lim)}")
                elif k not in OVERCOMMITTABLE and req != lim:
                    problems.append(f"spec.{part}[{i}].resources.requests[{k}]: Invalid value: \"{_fmt(req)}\": "
                                    f"must be equal to {k} limit of {_fmt(lim)}")
            for lr in sorted(ranges, key=lambda r: r.name):
                for item in lr.items:
                    problems.extend(_item_violations(item, requests, limits))
    return problems


def _item_violations(item: LimitRangeItem, requests: dict[str, int], limits: dict[str, int]) -> list[str]:
    out = []
    for k, v in item.min.items():
        req, lim = requests.get(k), limits.get(k)
        if req is None:
            out.append(f"minimum {k} usage per Container is {_fmt(v)}.  No request is specified")
        elif req < v:
            out.append(f"minimum {k} usage per Container is {_fmt(v)}, but request is {_fmt(req)}")
        elif lim is not None and lim < v:
            out.append(f"minimum {k} usage per Container is {_fmt(v)}, but limit is {_fmt(lim)}")
    for k, v in item.max.items():
        req, lim = requests.get(k), limits.get(k)
        if lim is None:
            out.append(f"maximum {k} usage per Container is {_fmt(v)}.  No limit is specified")
        elif lim > v:
            out.append(f"maximum {k} usage per Container is {_fmt(v)}, but limit is {_fmt(lim)}")
        elif req is not None and req > v:
            out.append(f"maximum {k} usage per Container is {_fmt(v)}, but request is {_fmt(req)}")
    for k, v in item.ratio.items():
        req, lim = requests.get(k), limits.get(k)
        if not req:
            out.append(f"{k} max limit to request ratio per Container is {_fmt(v)}, but no request is specified "
                       f"or request is 0.")
        elif not lim:
            out.append(f"{k} max limit to request ratio per Container is {_fmt(v)}, but no limit is specified "
                       f"or limit is 0.")
        elif lim / req > v / 1000:
            out.append(f"{k} max limit to request ratio per Container is {_fmt(v)}, but provided ratio is "
                       f"{lim / req:f}.")
    return out


class Admission:
    """Admits pods the simulation creates, against the (input) cluster's LimitRanges and PriorityClasses."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.ranges: dict[str, list[LimitRange]] = {}
        for lr in cluster.limit_ranges:
            self.ranges.setdefault(lr.namespace, []).append(lr)
        self.default_class = default_priority_class(cluster)

    def admit(self, raw: dict, index: int = 0) -> tuple[Pod | None, str]:
        """The admitted pod (``raw`` completed in place) or None and why it was refused."""
        set_pod_defaults(raw)
        ranges = self.ranges.get(raw["metadata"].get("namespace") or "default", [])
        apply_limit_ranges(raw, ranges)
        problems = validate_resources(raw, ranges)
        name = raw["metadata"]["name"]
        if problems:
            return None, f"pods \"{name}\" is forbidden: [{', '.join(problems)}]"
        try:
            pod = parse_pod(raw, index)
            validate_pod(raw)
        except FieldError as e:
            return None, f"pods \"{name}\" is invalid: {e.path}: {e.message}"
        reason = priority_admission(self.cluster, pod, self.default_class)
        if reason:
            return None, f"pods \"{name}\" is forbidden: {reason}"
        return pod, ""


def copy_template(obj: Mapping) -> dict:
    return copy.deepcopy(dict(obj))


# ============================================================================================ priority

def with_builtin_classes(cluster: Cluster) -> None:
    for name, value in BUILTIN_PRIORITY_CLASSES.items():
        if name not in cluster.priority_classes:
            cluster.priority_classes[name] = PriorityClass(name, value, False, None)


def default_priority_class(cluster: Cluster) -> PriorityClass | None:
    for pc in sorted(cluster.priority_classes.values(), key=lambda c: c.name):
        if pc.global_default:
            return pc
    return None


def admit_loaded_pods(cluster: Cluster, pods: list[Pod]) -> None:
    """What admission and the controllers did before the scheduler saw these pods."""
    with_builtin_classes(cluster)
    default_class = default_priority_class(cluster)
    node_names = {n.meta.name for n in cluster.nodes}
    for ns in {p.meta.namespace for p in pods} - set(cluster.namespaces):
        cluster.namespaces[ns] = Namespace(ns, {"kubernetes.io/metadata.name": ns})
    for pod in pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        # a pod that names no class, with no globalDefault class: priority admission leaves it as it is
        reason = priority_admission(cluster, pod, default_class) \
            if pod.priority_class_name or default_class is not None else ""
        if reason:
            cluster.rejected_pods.append((pod.key, reason))
            cluster.warnings.append(f"Pod {pod.key}: rejected as admission would: {reason}")
            continue
        if pod.node_name and pod.node_name not in node_names:
            cluster.warnings.append(f"Pod {pod.key}: bound to node {pod.node_name!r}, which is not in the "
                                    f"snapshot; the pod is on no node")
            continue
        cluster.pods.append(pod)


def priority_admission(cluster: Cluster, pod: Pod, default_class: PriorityClass | None) -> str:
    """Priority admission; the reason when the pod names a PriorityClass that does not exist.

    A pod that names no class keeps a ``spec.priority`` it already carries (dumps of running clusters
    do); only a pod with neither gets the globalDefault class, as the recorded scheduler saw them.
    """
    if pod.priority_class_name:
        pc = cluster.priority_classes.get(pod.priority_class_name)
        if pc is None:
            return f"no PriorityClass with name {pod.priority_class_name} was found"
        pod.priority = pc.value
        if pc.preemption_policy:
            pod.preemption_policy = pc.preemption_policy
        return ""
    spec = pod.raw.get("spec")
    own = spec.get("priority") if isinstance(spec, (dict, Mapping)) else None
    if default_class is not None and not (isinstance(own, int) and not isinstance(own, bool)):
        pod.priority = default_class.value
        pod.priority_class_name = default_class.name
        if default_class.preemption_policy:
            pod.preemption_policy = default_class.preemption_policy
    return ""
