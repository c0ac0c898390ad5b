"""The kinds pysched reads: one entry per kind, used by the loader, the live source and export.

An entry says how the kind is spelled (kind, the apiVersions v1.34 serves it as, the resource's plural),
whether it is namespaced, which model function parses it and which :class:`Cluster` field keeps it, and
whether and how ``pysched snapshot`` / a live ``simulate`` lists it. Adding a kind is one entry here (plus
its parse function in ``model/`` and its field on ``Cluster``); ``tests/test_kinds.py`` checks that every
entry loads, exports and, where marked, is listed live.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pysched.lazyclass import dataclass
from pysched.model.dra_objects import API_VERSION as DRA_API_VERSION
from pysched.model.objects import (
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
    parse_workload,
)
from pysched.model.storage import (
    parse_csi_driver,
    parse_csi_node,
    parse_csi_storage_capacity,
    parse_pv,
    parse_pvc,
    parse_storage_class,
    parse_volume_attachment,
)
from pysched.snapshot.admission import parse_limit_range
from pysched.snapshot.cluster import Cluster

#: pods that ran to completion hold no resources: a live listing leaves them out, as the scheduler's informer does
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True, slots=True)
class Live:
    """How a live cluster is listed for the kind (one paginated cluster-wide LIST, GET only)."""

    optional: bool = False  # 403/404 is a warning ("proceeds without them"), not an error
    field_selector: str | None = None


Store = Callable[[Cluster, Mapping, "KindSpec"], None]


@dataclass(frozen=True, slots=True)
class KindSpec:
    kind: str
    api_versions: tuple[str, ...]  # served by Kubernetes v1.34; the first is the one listed live
    plural: str  # the resource name in API paths
    namespaced: bool
    parse: Callable[..., Any]  # the model's parse function (raises FieldError)
    stored_in: str  # the Cluster field (dotted: ``dra.slices``) holding the parsed objects
    live: Live | None = None  # None: not listed from a live cluster
    store: Store | None = None  # None: append to a list field, or key a dict field by the object's name
    creates_pods: bool = False  # a controller the controllers layer expands into pods
    label_checked: bool = False  # ``parse`` takes ``labels_valid`` (it checks label types otherwise)

    @property
    def api_version(self) -> str:
        return self.api_versions[0]

    @property
    def api_path(self) -> str:
        """The cluster-wide list path: ``/api/v1/pods``, ``/apis/storage.k8s.io/v1/csinodes``."""
        v = self.api_version
        return f"/api/{v}/{self.plural}" if "/" not in v else f"/apis/{v}/{self.plural}"

    def add(self, cluster: Cluster, raw: Mapping, labels_valid: bool = False) -> None:
        """Parse ``raw`` (FieldError on bad input) and keep it on ``cluster``. ``labels_valid``: the
        object's labels are known valid (the schema check found it clean); kinds whose parser re-checks
        labels (``label_checked``) then skip that check."""
        if self.store is not None:
            self.store(cluster, raw, self)
            return
        # (labels_valid given by position: a keyword costs more per call; label_checked parsers take it second)
        parsed = self.parse(raw, True) if labels_valid and self.label_checked else self.parse(raw)
        path = self.stored_in
        target = getattr(cluster, path) if "." not in path else stored(cluster, self)  # (most kinds: a field)
        if isinstance(target, list):
            target.append(parsed)
        else:
            target[parsed.name] = parsed


def stored(cluster: Cluster, spec: KindSpec) -> Any:
    """The container on ``cluster`` that holds the objects of ``spec``'s kind."""
    path = spec.stored_in
    if "." not in path:  # (most kinds: a field of the cluster)
        return getattr(cluster, path)
    target: Any = cluster
    for part in path.split("."):
        target = target.get(part, []) if isinstance(target, dict) else getattr(target, part)
    return target


# ----------------------------------------------------------------------------- stores that do more than keep

def _deferred(cluster: Cluster, raw: Mapping, spec: KindSpec) -> None:
    raise AssertionError(f"{spec.kind} objects are parsed by the loader after every given name is known")


def _storage_class(cluster: Cluster, raw: Mapping, spec: KindSpec) -> None:
    sc = spec.parse(raw)
    cluster.storage_classes[sc.name] = sc
    ann = raw["metadata"].get("annotations") or {}
    if isinstance(ann, Mapping) and "true" in (ann.get("storageclass.kubernetes.io/is-default-class"),
                                               ann.get("storageclass.beta.kubernetes.io/is-default-class")):
        cluster.default_class_candidates.append((str(raw["metadata"].get("creationTimestamp") or ""), sc.name))


def _resource_slice(cluster: Cluster, raw: Mapping, spec: KindSpec) -> None:
    cluster.dra.slices.append(spec.parse(raw, len(cluster.dra.slices)))


def _claim_template(cluster: Cluster, raw: Mapping, spec: KindSpec) -> None:
    t = spec.parse(raw)
    cluster.dra.templates[f"{t.meta.namespace}/{t.meta.name}"] = t


def _workload(cluster: Cluster, raw: Mapping, spec: KindSpec) -> None:
    w = spec.parse(raw, spec.kind)
    w.index = len(cluster.workload_order)
    cluster.workloads.setdefault(spec.kind, []).append(w)
    cluster.workload_order.append(w)


def _dra_parser(name: str) -> Callable[..., Any]:
    """The parse function ``name`` of ``pysched.model.dra``, which is imported at the first DRA object: a
    run without any does not import it (nor the CEL compiler it imports)."""

    def parse(*args: Any, **kwargs: Any) -> Any:
        from pysched.model import dra

        return getattr(dra, name)(*args, **kwargs)

    parse.__name__ = parse.__qualname__ = name
    return parse


parse_device_class = _dra_parser("parse_device_class")
parse_resource_slice = _dra_parser("parse_resource_slice")
parse_resource_claim = _dra_parser("parse_resource_claim")
parse_claim_template = _dra_parser("parse_claim_template")


def _workload_kind(kind: str, api: str, plural: str, live: Live | None, creates_pods: bool) -> KindSpec:
    return KindSpec(kind, (api,), plural, True, parse_workload, f"workloads.{kind}", live, _workload, creates_pods)


_STORAGE = "storage.k8s.io/v1"
_OPTIONAL = Live(optional=True)

#: every kind pysched reads; live listings go in this order (cluster-scoped basics first, then pods)
KINDS: tuple[KindSpec, ...] = (
    KindSpec("Node", ("v1",), "nodes", False, parse_node, "nodes", Live(), label_checked=True),
    KindSpec("Namespace", ("v1",), "namespaces", False, parse_namespace, "namespaces", Live()),
    KindSpec("PriorityClass", ("scheduling.k8s.io/v1",), "priorityclasses", False, parse_priority_class,
             "priority_classes", Live()),
    KindSpec("Pod", ("v1",), "pods", True, parse_pod, "pods", Live(field_selector=POD_FIELD_SELECTOR), _deferred),
    KindSpec("PodDisruptionBudget", ("policy/v1",), "poddisruptionbudgets", True, parse_pdb, "pdbs", Live()),
    _workload_kind("Service", "v1", "services", Live(), False),
    _workload_kind("ReplicationController", "v1", "replicationcontrollers", Live(), True),
    _workload_kind("ReplicaSet", "apps/v1", "replicasets", Live(), True),
    _workload_kind("StatefulSet", "apps/v1", "statefulsets", Live(), True),
    KindSpec("PersistentVolume", ("v1",), "persistentvolumes", False, parse_pv, "pvs", _OPTIONAL),
    KindSpec("PersistentVolumeClaim", ("v1",), "persistentvolumeclaims", True, parse_pvc, "pvcs", _OPTIONAL),
    KindSpec("StorageClass", (_STORAGE,), "storageclasses", False, parse_storage_class, "storage_classes",
             _OPTIONAL, _storage_class),
    KindSpec("CSINode", (_STORAGE,), "csinodes", False, parse_csi_node, "csi_nodes", _OPTIONAL),
    KindSpec("CSIDriver", (_STORAGE,), "csidrivers", False, parse_csi_driver, "csi_drivers", _OPTIONAL),
    KindSpec("VolumeAttachment", (_STORAGE,), "volumeattachments", False, parse_volume_attachment,
             "volume_attachments", _OPTIONAL),
    KindSpec("CSIStorageCapacity", (_STORAGE,), "csistoragecapacities", True, parse_csi_storage_capacity,
             "csi_storage_capacities", _OPTIONAL),
    KindSpec("DeviceClass", (DRA_API_VERSION,), "deviceclasses", False, parse_device_class, "dra.classes",
             _OPTIONAL),
    KindSpec("ResourceSlice", (DRA_API_VERSION,), "resourceslices", False, parse_resource_slice, "dra.slices",
             _OPTIONAL, _resource_slice),
    KindSpec("ResourceClaim", (DRA_API_VERSION,), "resourceclaims", True, parse_resource_claim, "dra.claims",
             _OPTIONAL),
    KindSpec("ResourceClaimTemplate", (DRA_API_VERSION,), "resourceclaimtemplates", True, parse_claim_template,
             "dra.templates", _OPTIONAL, _claim_template),
    # listed live as `kubectl get all` lists them: the controllers count the pods a live cluster already
    # holds (owner references, a Job's status), so only --scale, --add-node, --drain ... create new ones
    _workload_kind("Deployment", "apps/v1", "deployments", _OPTIONAL, True),
    _workload_kind("DaemonSet", "apps/v1", "daemonsets", _OPTIONAL, True),
    _workload_kind("Job", "batch/v1", "jobs", _OPTIONAL, True),
    _workload_kind("CronJob", "batch/v1", "cronjobs", _OPTIONAL, True),
    # LimitRanges feed admission of the pods the controllers create
    KindSpec("LimitRange", ("v1",), "limitranges", True, parse_limit_range, "limit_ranges", _OPTIONAL),
)

BY_KIND: dict[str, KindSpec] = {k.kind: k for k in KINDS}
CLUSTER_SCOPED: frozenset[str] = frozenset(k.kind for k in KINDS if not k.namespaced)
#: kinds whose controllers create pods (expanded by the controllers layer)
POD_CREATING: tuple[str, ...] = tuple(k.kind for k in KINDS if k.creates_pods)
LISTED_LIVE: tuple[KindSpec, ...] = tuple(k for k in KINDS if k.live is not None)


def lookup(kind: str) -> KindSpec | None:
    return BY_KIND.get(kind)
