"""The edited and expanded cluster: edits in order, then every workload's controller, in input order.

One ``World`` holds the state the edits and the controllers change (nodes, active pods, PDBs, replicas,
created ReplicaSets and claims); the input ``Cluster`` is only read, and the result is a new ``Cluster``
built from new lists (edited nodes are new ``Node`` objects, removed pods are left out). Rules, names and
orders follow ../shared/conformance/workloads/README.md, itself read from the upstream controllers.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import field
from datetime import UTC, datetime

from pysched.controllers.edits import Edit
from pysched.errors import InputError
from pysched.lazyclass import dataclass
from pysched.model.objects import (
    FieldError,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    Taint,
    Workload,
    parse_node,
    parse_pod,
    parse_workload,
)
from pysched.model.storage import PersistentVolumeClaim, parse_pvc
from pysched.model.timeutil import parse_time
from pysched.snapshot.admission import Admission
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.kinds import BY_KIND, POD_CREATING
from pysched.snapshot.loader import NOTHING_TO_DO
from pysched.snapshot.names import NameGenerator, make_uid, template_hash

GROUP = {kind: BY_KIND[kind].api_version.rpartition("/")[0] for kind in POD_CREATING}  # kind -> API group
API_VERSION = {"apps": "apps/v1", "": "v1", "batch": "batch/v1"}
CONTROLLERS = tuple(GROUP)
HASH_LABEL = "pod-template-hash"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
REASON_PDB = "Cannot evict pod as it would violate the pod's disruption budget."
REASON_MULTI_PDB = ("This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
                    "support.")
DAEMON_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                      ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                      ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                      ("node.kubernetes.io/pid-pressure", "NoSchedule"), (UNSCHEDULABLE_TAINT, "NoSchedule"))
MAX_INT32 = 2**31 - 1


@dataclass
class ExpansionOptions:
    now: str | None = None  # RFC 3339; default: one second after the latest input timestamp
    run_cronjobs: bool = False


@dataclass
class WorkloadReport:
    """What one workload's controller did (``workloads`` in -o json)."""

    kind: str
    namespace: str
    name: str
    desired: int | None = None
    existing: int = 0
    created: list[str] = field(default_factory=list)  # pod keys, creation order
    deleted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (pod name, reason)
    note: str = ""  # why nothing was created (not run, suspended, ...)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass
class Expansion:
    """The edits' and the controllers' outcome, read by the simulation (OrderedReady) and the reports."""

    now: str
    edits: list[dict] = field(default_factory=list)
    workloads: dict[str, WorkloadReport] = field(default_factory=dict)
    created: set[str] = field(default_factory=set)  # pod keys the simulation created (expansion, replacements)
    evicted: dict[str, str] = field(default_factory=dict)  # pod key -> what removed it (for explain)
    replacements: dict[str, str] = field(default_factory=dict)  # replacement pod key -> pod it replaces
    input_pending: list[str] = field(default_factory=list)  # input pods pending once the edits are applied


def default_now(cluster: Cluster) -> str:
    t = parse_time(cluster.latest_timestamp) if cluster.latest_timestamp else None
    base = math.floor(t) if t is not None else 0
    return format_time(base + 1)


def format_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_now(text: str) -> str:
    t = parse_time(text)
    if t is None or "T" not in text:
        raise InputError(f"--now: expected an RFC 3339 time such as 2025-03-01T08:00:00Z, got {text!r}")
    return format_time(math.floor(t))


def expand_cluster(cluster: Cluster, edits: list[Edit] | None = None,
                   options: ExpansionOptions | None = None) -> Cluster:
    """The cluster the simulation runs: ``cluster`` edited and expanded, as a new object."""
    opts = options or ExpansionOptions()
    world = World(cluster, parse_now(opts.now) if opts.now else default_now(cluster), opts)
    for e in edits or ():
        world.apply_edit(e)
    world.expand_all()
    return world.result()


def is_active(pod: Pod) -> bool:
    return pod.phase not in ("Succeeded", "Failed") and pod.meta.deletion_timestamp is None


def is_ready(pod: Pod) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in pod.conditions)


def _group(api_version: object) -> str:
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


# ================================================================================================= world

class World:
    def __init__(self, cluster: Cluster, now: str, options: ExpansionOptions) -> None:
        self.cluster = cluster
        self.options = options
        self.now = now
        self.now_s = parse_time(now) or 0.0
        self.nodes: list[Node] = list(cluster.nodes)
        self.pods: list[Pod] = [p for p in cluster.pods]
        self.pdbs: list[PodDisruptionBudget] = list(cluster.pdbs)
        self.pvcs: list[PersistentVolumeClaim] = list(cluster.pvcs)
        self.workloads: list[Workload] = list(cluster.workload_order)
        self.uids: dict[int, str] = {}  # id(workload) -> uid (given or deterministic)
        self.by_key: dict[tuple[str, str, str], Workload] = {}
        for w in self.workloads:
            self._index(w)
        self.by_owner: dict[int, list[Pod]] = {}  # id(workload) -> its pods, in state order
        for p in self.pods if self.by_key else ():  # (no workload: no pod has an owner among them)
            if p.meta.owner_refs:
                o = self.owner(p.meta)
                if o is not None:
                    self.by_owner.setdefault(id(o), []).append(p)
        self.replicas: dict[str, int] = {}  # workload key -> replicas (Job: parallelism) set by a scale edit
        self.job_removals: dict[str, int] = {}
        self.failed_jobs: set[str] = set()
        self.deleted_jobs: set[str] = set()
        self.created_rs: list[Workload] = []
        self.new_rs_of: dict[str, Workload] = {}
        self.expansion = Expansion(now)
        self.expansion_pods: list[Pod] = []
        self.replacement_pods: list[Pod] = []
        self.gates: dict[str, tuple[str, ...]] = {}
        self._protos: dict[tuple, tuple[Pod | None, str]] = {}
        self.admission = Admission(cluster)
        names = {(p.meta.namespace, p.meta.name) for p in cluster.pods}
        self.pod_names = names
        self.names = NameGenerator(lambda ns, name: (ns, name) in self.pod_names)
        self.names.counters = dict(cluster.name_counters)
        for w in self.workloads:
            if w.kind in CONTROLLERS:
                self.expansion.workloads[w.key] = WorkloadReport(w.kind, w.meta.namespace, w.meta.name)

    # ------------------------------------------------------------------------------------ lookups
    def _index(self, w: Workload) -> None:
        self.by_key.setdefault((w.kind, w.meta.namespace, w.meta.name), w)
        self.uids[id(w)] = w.meta.uid or make_uid(w.kind, w.meta.namespace, w.meta.name, 0)

    def uid(self, w: Workload) -> str:
        return self.uids[id(w)]

    def owner(self, meta: ObjectMeta) -> Workload | None:
        """The workload named by the controller reference, when it is one of the cluster's (or created)."""
        ref = meta.controller_ref()
        if ref is None:
            return None
        kind = str(ref.get("kind") or "")
        if kind not in GROUP or _group(ref.get("apiVersion")) != GROUP[kind]:
            return None
        w = self.by_key.get((kind, meta.namespace, str(ref.get("name") or "")))
        if w is None:
            return None
        ref_uid = ref.get("uid")
        if ref_uid and w.meta.uid and ref_uid != w.meta.uid:
            return None
        return w

    def top_key(self, meta: ObjectMeta) -> str | None:
        """``Kind/namespace/name`` of the top-level owner: controller references followed while the owner is
        known; the last reference reached names it."""
        key = None
        seen = 0
        while seen < 10:
            seen += 1
            ref = meta.controller_ref()
            if ref is None:
                return key
            key = f"{ref.get('kind')}/{meta.namespace}/{ref.get('name')}"
            w = self.owner(meta)
            if w is None:
                return key
            meta = w.meta
        return key

    def pods_of(self, w: Workload) -> list[Pod]:
        return [p for p in self.by_owner.get(id(w), ()) if is_active(p)]

    def deployment_of(self, rs: Workload) -> Workload | None:
        d = self.owner(rs.meta)
        return d if d is not None and d.kind == "Deployment" else None

    def replica_sets_of(self, d: Workload) -> list[Workload]:
        return [w for w in self.workloads if w.kind == "ReplicaSet" and self.owner(w.meta) is d]

    def node(self, name: str) -> Node | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def spec(self, w: Workload) -> Mapping:
        s = w.raw.get("spec")
        return s if isinstance(s, Mapping) else {}

    def desired(self, w: Workload) -> int:
        if w.key in self.replicas:
            return self.replicas[w.key]
        n = self.spec(w).get("replicas")
        return n if isinstance(n, int) and not isinstance(n, bool) else 1

    def report(self, w: Workload) -> WorkloadReport:
        return self.expansion.workloads.setdefault(w.key, WorkloadReport(w.kind, w.meta.namespace, w.meta.name))

    # ------------------------------------------------------------------------------------ pods
    def new_pod(self, owner: Workload, template: Mapping, *, name: str = "", generate: str = "",
                labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
                finalizers: list[str] | None = None, edit_spec=None) -> tuple[Pod | None, str]:
        """A pod from a template, owned by ``owner``, admitted; (None, reason) when admission refuses it."""
        ns = owner.meta.namespace
        tmeta = template.get("metadata") if isinstance(template.get("metadata"), Mapping) else {}
        if not name:
            name = self.names.generate(ns, generate)
        self.pod_names.add((ns, name))
        meta: dict = {"name": name, "namespace": ns, "uid": self.names.uid("Pod", ns, name),
                      "creationTimestamp": self.now}
        all_labels = {**(tmeta.get("labels") or {}), **(labels or {})}  # type: ignore[union-attr]
        if all_labels:
            meta["labels"] = all_labels
        all_ann = {**(tmeta.get("annotations") or {}), **(annotations or {})}  # type: ignore[union-attr]
        if all_ann:
            meta["annotations"] = all_ann
        fins = list(tmeta.get("finalizers") or []) + list(finalizers or [])  # type: ignore[union-attr]
        if fins:
            meta["finalizers"] = fins
        meta["ownerReferences"] = [{"apiVersion": API_VERSION[GROUP[owner.kind]], "kind": owner.kind,
                                    "name": owner.meta.name, "uid": self.uid(owner), "controller": True,
                                    "blockOwnerDeletion": True}]
        # replicas of one template differ only in name and uid: admit the first, copy it for the rest
        proto_key = None if edit_spec is not None else (
            id(owner), id(template), tuple(sorted((labels or {}).items())),
            tuple(sorted((annotations or {}).items())), tuple(finalizers or ()))
        proto = self._protos.get(proto_key) if proto_key is not None else None
        if proto is not None and proto[0] is not None:
            first = proto[0]
            raw = {**first.raw, "metadata": {**first.raw["metadata"], **meta}}
            pod: Pod | None = dataclasses.replace(first, meta=ObjectMeta.parse(raw["metadata"]), raw=raw)
            pod.key = f"{ns}/{name}"  # type: ignore[union-attr]
            reason = ""
        else:
            spec = copy.deepcopy(dict(template.get("spec") or {}))
            spec.pop("nodeName", None)
            if edit_spec is not None:
                edit_spec(spec)
            raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
            pod, reason = self.admission.admit(raw)
            if proto_key is not None:
                self._protos[proto_key] = (pod, reason)
        if pod is None:
            self.report(self.top(owner)).rejected.append((name, reason))
            return None, reason
        self.pods.append(pod)
        self.by_owner.setdefault(id(owner), []).append(pod)
        self.expansion.created.add(pod.key)
        return pod, ""

    def top(self, w: Workload) -> Workload:
        seen = 0
        while seen < 10:
            seen += 1
            o = self.owner(w.meta)
            if o is None:
                return w
            w = o
        return w

    def remove_pod(self, pod: Pod) -> None:
        self.pods = [p for p in self.pods if p is not pod]
        o = self.owner(pod.meta)
        if o is not None and id(o) in self.by_owner:
            self.by_owner[id(o)] = [p for p in self.by_owner[id(o)] if p is not pod]

    # ------------------------------------------------------------------------------------ edits
    def apply_edit(self, e: Edit) -> None:
        handler = getattr(self, "_edit_" + e.kind.replace("-", "_"))
        entry: dict = {"edit": e.kind}
        handler(e, entry)
        self.expansion.edits.append(entry)

    def _need_node(self, e: Edit, name: str) -> Node:
        n = self.node(name)
        if n is None:
            raise e.error(f"no node named {name!r}", [x.name for x in self.nodes], name)
        return n

    def _replace_node(self, old: Node, raw: dict) -> Node:
        node = parse_node(raw)
        self.nodes = [node if n is old else n for n in self.nodes]
        return node

    @staticmethod
    def _node_raw(n: Node) -> dict:
        raw = copy.deepcopy(n.raw)
        raw.setdefault("metadata", {})
        if not isinstance(raw.get("spec"), dict):
            raw["spec"] = {}
        return raw

    def _cordon(self, n: Node, on: bool) -> Node:
        raw = self._node_raw(n)
        spec = raw["spec"]
        taints = [t for t in spec.get("taints") or [] if not (
            isinstance(t, Mapping) and t.get("key") == UNSCHEDULABLE_TAINT and t.get("effect") == "NoSchedule")]
        if on:
            spec["unschedulable"] = True
            taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": self.now})
        else:
            spec.pop("unschedulable", None)
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        return self._replace_node(n, raw)

    def _edit_cordon(self, e: Edit, entry: dict) -> None:
        name = e.node_value()
        entry["target"] = name
        self._cordon(self._need_node(e, name), True)

    def _edit_uncordon(self, e: Edit, entry: dict) -> None:
        name = e.node_value()
        entry["target"] = name
        self._cordon(self._need_node(e, name), False)

    def _pods_on(self, node: str) -> list[Pod]:
        return sorted((p for p in self.pods if p.node_name == node and is_active(p)), key=lambda p: p.key)

    def _edit_drain(self, e: Edit, entry: dict) -> None:
        name = e.node_value()
        entry["target"] = name
        self._cordon(self._need_node(e, name), True)
        evicted: list[str] = []
        deleted: list[str] = []
        refused: dict[str, dict] = {}
        ignored: list[str] = []
        for pod in self._pods_on(name):
            ref = pod.meta.controller_ref()
            if MIRROR_ANNOTATION in pod.meta.annotations or (
                    ref is not None and ref.get("kind") == "DaemonSet" and _group(ref.get("apiVersion")) == "apps"):
                ignored.append(pod.key)
                continue
            pdbs, reason = self._eviction_check(pod)
            if reason:
                refused[pod.key] = {"pdbs": pdbs, "reason": reason}
                continue
            self._evict(pod, f"drain of {name}", evicted, deleted)
        entry.update(evicted=sorted(evicted), deleted=sorted(deleted), refused=refused, ignored=sorted(ignored))

    def _eviction_check(self, pod: Pod) -> tuple[list[str], str]:
        """The eviction API: ([PDB keys], refusal reason or ''); a successful check decrements the PDB."""
        if pod.phase == "Pending" or pod.meta.deletion_timestamp is not None:
            return [], ""
        matching = [b for b in self.pdbs if b.meta.namespace == pod.namespace and b.selector.matches(pod.labels)]
        keys = sorted(b.key for b in matching)
        if len(matching) > 1:
            return keys, REASON_MULTI_PDB
        if not matching:
            return [], ""
        pdb = matching[0]
        spec = pdb.raw.get("spec") if isinstance(pdb.raw.get("spec"), Mapping) else {}
        status = pdb.raw.get("status") if isinstance(pdb.raw.get("status"), Mapping) else {}
        meta = pdb.raw.get("metadata") if isinstance(pdb.raw.get("metadata"), Mapping) else {}
        current = _as_int(status.get("currentHealthy"))  # type: ignore[union-attr]
        desired = _as_int(status.get("desiredHealthy"))  # type: ignore[union-attr]
        if not is_ready(pod) and (spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"  # type: ignore[union-attr]
                                  or current >= desired > 0):
            return keys, ""
        if _as_int(status.get("observedGeneration")) < _as_int(meta.get("generation")):  # type: ignore[union-attr]
            return keys, REASON_PDB
        if pdb.disruptions_allowed < 0:
            return keys, f"poddisruptionbudget.policy \"{pdb.meta.name}\" is forbidden: pdb disruptions allowed is negative"
        if pdb.disruptions_allowed == 0:
            return keys, REASON_PDB
        lowered = dataclasses.replace(pdb, disruptions_allowed=pdb.disruptions_allowed - 1)
        self.pdbs = [lowered if b is pdb else b for b in self.pdbs]
        return keys, ""

    def _evict(self, pod: Pod, why: str, evicted: list[str], deleted: list[str]) -> None:
        """The pod leaves; its controller replaces it (evicted) or nothing does (deleted)."""
        self.remove_pod(pod)
        self.expansion.evicted[pod.key] = why
        replacement = self._replace(pod)
        if replacement is None:
            deleted.append(pod.key)
        else:
            evicted.append(pod.key)
            owner = self.owner(replacement.meta)
            if owner is not None:
                self.report(self.top(owner)).created.append(replacement.key)
            self.replacement_pods.append(replacement)
            self.expansion.replacements[replacement.key] = pod.key

    def _replace(self, pod: Pod) -> Pod | None:
        w = self.owner(pod.meta)
        if w is None:
            return None
        spec = self.spec(w)
        if w.kind in ("ReplicaSet", "ReplicationController"):
            got, _ = self.new_pod(w, spec.get("template") or {}, generate=f"{w.meta.name}-")
            return got
        if w.kind == "StatefulSet":
            start, _ = self._ordinal_range(w)
            ordinal = _ordinal(pod.name, w.meta.name)
            if ordinal is None or not start <= ordinal < start + self.desired(w):
                return None
            return self._sts_pod(w, ordinal)
        if w.kind == "Job":
            if self._job_done(w):
                return None
            self.job_removals[w.key] = self.job_removals.get(w.key, 0) + 1
            status = w.raw.get("status") if isinstance(w.raw.get("status"), Mapping) else {}
            if _as_int(status.get("failed")) + self.job_removals[w.key] > self._job_spec(w)["backoffLimit"]:  # type: ignore[union-attr]
                self.failed_jobs.add(w.key)
                return None
            index = _completion_index(pod)
            return self._job_pod(w, index if self._job_spec(w)["completionMode"] == "Indexed" else None)
        return None

    def _edit_remove_node(self, e: Edit, entry: dict) -> None:
        name = e.node_value()
        entry["target"] = name
        node = self._need_node(e, name)
        evicted: list[str] = []
        deleted: list[str] = []
        for pod in self._pods_on(name):
            self._evict(pod, f"removal of node {name}", evicted, deleted)
        self.nodes = [n for n in self.nodes if n is not node]
        entry.update(evicted=sorted(evicted), deleted=sorted(deleted))

    def _edit_add_node(self, e: Edit, entry: dict) -> None:
        from pysched.snapshot.loader import iter_objects, parse_documents, read_source
        path, count = e.add_node_value()
        try:
            objs = [o for _, o, _ in iter_objects(parse_documents(read_source(path, 16 << 20), path))]
        except InputError as err:
            raise e.error(f"cannot read the node file: {err}") from None
        nodes = [o for o in objs if o.get("kind") == "Node"]
        if len(nodes) != 1 or len(objs) != 1:
            raise e.error(f"{path}: expected exactly one Node, found {len(objs)} object(s)")
        base = nodes[0]
        meta = base.get("metadata") if isinstance(base.get("metadata"), Mapping) else {}
        name = meta.get("name")  # type: ignore[union-attr]
        if not isinstance(name, str) or not name:
            raise e.error(f"{path}: the Node has no metadata.name")
        entry.update(target=name, count=count)
        taken = {n.name for n in self.nodes}
        for i in range(1, count + 1):
            copy_name = f"{name}-{i}"
            if copy_name in taken:
                raise e.error(f"a node named {copy_name!r} already exists")
            raw = copy.deepcopy(dict(base))
            m = dict(raw.get("metadata") or {})
            for k in ("uid", "resourceVersion", "managedFields"):
                m.pop(k, None)
            m["name"] = copy_name
            m["uid"] = self.names.uid("Node", "", copy_name)
            m["creationTimestamp"] = self.now
            m["labels"] = {**(m.get("labels") or {}), "kubernetes.io/hostname": copy_name}
            raw["metadata"] = m
            try:
                self.nodes.append(parse_node(raw))
            except FieldError as err:
                raise e.error(f"{path}: {err.path}: {err.message}") from None

    def _edit_scale(self, e: Edit, entry: dict) -> None:
        kind, ns, name, n = e.scale_value()
        w = self.by_key.get((kind, ns, name))
        if w is None or w in self.created_rs:
            names = [x.key for x in self.workloads if x.kind in CONTROLLERS]
            raise e.error(f"no {kind} {ns}/{name} in the snapshot", names, f"{kind}/{ns}/{name}")
        if kind == "ReplicaSet" and self.deployment_of(w) is not None:
            raise e.error(f"ReplicaSet {ns}/{name} is managed by Deployment {ns}/{self.deployment_of(w).meta.name}"  # type: ignore[union-attr]
                          f": scale the Deployment")
        entry.update(target=w.key, replicas=n)
        self.replicas[w.key] = n
        removed: list[Pod] = []
        if kind in ("ReplicaSet", "ReplicationController", "Deployment"):
            sets = self.replica_sets_of(w) if kind == "Deployment" else [w]
            active = [p for p in self.pods if is_active(p) and self.owner(p.meta) in sets]  # state order
            if len(active) > n:
                related = active if kind == "Deployment" else []
                removed = self._rank_for_deletion(active, related)[: len(active) - n]
        elif kind == "StatefulSet":
            start, _ = self._ordinal_range(w)
            for p in self.pods_of(w):
                o = _ordinal(p.name, w.meta.name)
                if o is None or not start <= o < start + n:
                    removed.append(p)
        else:
            removed = self._job_excess(w)
        for p in removed:
            self.remove_pod(p)
            self.expansion.evicted[p.key] = f"scale of {w.key} to {n}"
        entry["removed"] = sorted(p.key for p in removed)

    def _edit_taint(self, e: Edit, entry: dict) -> None:
        name, key, value, effect = e.taint_value()
        node = self._need_node(e, name)
        entry.update(target=name, taint=f"{key}{'=' + value if value else ''}:{effect}")
        raw = self._node_raw(node)
        taints = [t for t in raw["spec"].get("taints") or []
                  if not (isinstance(t, Mapping) and t.get("key") == key and t.get("effect") == effect)]
        t: dict = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        taints.append(t)
        raw["spec"]["taints"] = taints
        node = self._replace_node(node, raw)
        if effect != "NoExecute":
            return
        evicted: list[str] = []
        deleted: list[str] = []
        no_execute = [t for t in node.taints if t.effect == "NoExecute"]
        for pod in self._pods_on(name):
            if MIRROR_ANNOTATION in pod.meta.annotations or _keeps_tolerating(pod, no_execute):
                continue
            self._evict(pod, f"NoExecute taint {entry['taint']} on {name}", evicted, deleted)
        entry.update(evicted=sorted(evicted), deleted=sorted(deleted))

    def _edit_untaint(self, e: Edit, entry: dict) -> None:
        name, key, effect = e.untaint_value()
        node = self._need_node(e, name)
        entry.update(target=name, taint=f"{key}{':' + effect if effect else ''}")
        raw = self._node_raw(node)
        before = raw["spec"].get("taints") or []
        after = [t for t in before if not (isinstance(t, Mapping) and t.get("key") == key
                                           and (not effect or t.get("effect") == effect))]
        if len(after) == len(before):
            have = [f"{t.key}:{t.effect}" for t in node.taints]
            raise e.error(f"node {name} has no taint {entry['taint']}"
                          + (f" (it has {', '.join(have)})" if have else " (it has none)"))
        if after:
            raw["spec"]["taints"] = after
        else:
            raw["spec"].pop("taints", None)
        self._replace_node(node, raw)

    def _edit_label(self, e: Edit, entry: dict) -> None:
        name, key, value = e.label_value()
        node = self._need_node(e, name)
        entry.update(target=name, label=f"{key}={value}" if value is not None else f"{key}-")
        raw = self._node_raw(node)
        labels = dict(raw["metadata"].get("labels") or {})
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
        raw["metadata"] = {**raw["metadata"], "labels": labels}
        try:
            self._replace_node(node, raw)
        except FieldError as err:
            raise e.error(f"{err.path}: {err.message}") from None

    # ------------------------------------------------------------------------------------ scale-down order
    def _rank_for_deletion(self, pods: list[Pod], related: list[Pod]) -> list[Pod]:
        """``controller.ActivePodsWithRanks`` (rank: related active pods on the same node)."""
        on_node: dict[str, int] = {}
        for p in related:
            if p.node_name:
                on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
        now_ns = int(self.now_s) * 10**9

        def cmp(a: Pod, b: Pod) -> int:
            return _ranked_cmp(a, b, on_node.get(a.node_name, 0) if a.node_name else 0,
                               on_node.get(b.node_name, 0) if b.node_name else 0, now_ns)
        return sorted(pods, key=functools.cmp_to_key(cmp))

    # ------------------------------------------------------------------------------------ expansion
    def expand_all(self) -> None:
        if self.options.run_cronjobs:
            for w in list(self.workloads):
                if w.kind == "CronJob":
                    self._cron_replace(w)
        for w in list(self.workloads):
            getattr(self, "_expand_" + w.kind, lambda _w: None)(w)

    def _created(self, w: Workload, pods: list[Pod]) -> None:
        rep = self.report(self.top(w))
        rep.created.extend(p.key for p in pods)
        self.expansion_pods.extend(pods)

    def _delete(self, w: Workload, pods: list[Pod]) -> None:
        rep = self.report(self.top(w))
        for p in pods:
            self.remove_pod(p)
            rep.deleted.append(p.key)
            self.expansion.evicted[p.key] = f"deleted by the controller of {self.top(w).key}"

    def _expand_ReplicaSet(self, w: Workload) -> None:
        if self.deployment_of(w) is not None:
            self.expansion.workloads.pop(w.key, None)  # its Deployment reports for it
            return
        self._expand_replicas(w, [w], w)

    _expand_ReplicationController = _expand_ReplicaSet

    def _expand_replicas(self, top: Workload, sets: list[Workload], target: Workload) -> None:
        want = self.desired(top)
        active = [p for rs in sets for p in self.pods_of(rs)]
        rep = self.report(top)
        rep.desired, rep.existing = want, len(active)
        template = self.spec(target).get("template") or {}
        made = []
        for _ in range(max(0, want - len(active))):
            pod, _reason = self.new_pod(target, template, generate=f"{target.meta.name}-")
            if pod is not None:
                made.append(pod)
        self._created(top, made)

    def _expand_Deployment(self, d: Workload) -> None:
        sets = self.replica_sets_of(d)
        template = self.spec(d).get("template") or {}
        new_rs = None
        want = _strip_hash(template)
        for rs in sorted(sets, key=lambda r: (parse_time(r.meta.creation) or 0.0, r.meta.name)):
            if _strip_hash(self.spec(rs).get("template") or {}) == want:
                new_rs = rs
                break
        if new_rs is None:
            new_rs = self._create_rs(d, template)
            sets = [*sets, new_rs]
        self.new_rs_of[d.key] = new_rs
        self._expand_replicas(d, sets, new_rs)

    def _create_rs(self, d: Workload, template: Mapping) -> Workload:
        ns = d.meta.namespace
        status = d.raw.get("status") if isinstance(d.raw.get("status"), Mapping) else {}
        cc = _as_int(status.get("collisionCount"))  # type: ignore[union-attr]
        while True:
            h = template_hash(template, cc)
            name = f"{d.meta.name}-{h}"
            if ("ReplicaSet", ns, name) not in self.by_key:
                break
            cc += 1
        tmeta = dict(template.get("metadata") or {})
        tlabels = {**(tmeta.get("labels") or {}), HASH_LABEL: h}
        tmpl = {**copy.deepcopy(dict(template)), "metadata": {**tmeta, "labels": tlabels}}
        selector = copy.deepcopy(dict(self.spec(d).get("selector") or {}))
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
        annotations = {k: v for k, v in d.meta.annotations.items()
                       if k != "kubectl.kubernetes.io/last-applied-configuration"}
        meta: dict = {"name": name, "namespace": ns, "uid": self.names.uid("ReplicaSet", ns, name),
                      "creationTimestamp": self.now, "labels": tlabels,
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": d.meta.name,
                                           "uid": self.uid(d), "controller": True, "blockOwnerDeletion": True}]}
        if annotations:
            meta["annotations"] = annotations
        raw = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta,
               "spec": {"replicas": self.desired(d), "selector": selector, "template": tmpl}}
        rs = parse_workload(raw, "ReplicaSet")
        rs.index = len(self.workloads)
        self.workloads.append(rs)
        self.created_rs.append(rs)
        self._index(rs)
        return rs

    # StatefulSet ------------------------------------------------------------------------------
    def _ordinal_range(self, w: Workload) -> tuple[int, int]:
        ords = self.spec(w).get("ordinals")
        start = _as_int(ords.get("start")) if isinstance(ords, Mapping) else 0
        return start, start + self.desired(w)

    def _sts_pod(self, w: Workload, ordinal: int) -> Pod | None:
        spec = self.spec(w)
        template = spec.get("template") or {}
        sts = w.meta.name
        name = f"{sts}-{ordinal}"
        claims = [c for c in spec.get("volumeClaimTemplates") or [] if isinstance(c, Mapping)]
        claim_names = []
        for c in claims:
            cname = str((c.get("metadata") or {}).get("name") or "")
            claim_names.append(cname)
            self._ensure_claim(w, c, f"{cname}-{sts}-{ordinal}")

        def edit(pod_spec: dict) -> None:
            pod_spec["hostname"] = name
            if spec.get("serviceName"):
                pod_spec["subdomain"] = spec["serviceName"]
            if claims:
                vols = [{"name": cn, "persistentVolumeClaim": {"claimName": f"{cn}-{sts}-{ordinal}"}}
                        for cn in claim_names]
                vols += [v for v in pod_spec.get("volumes") or [] if not (
                    isinstance(v, Mapping) and v.get("name") in claim_names)]
                pod_spec["volumes"] = vols
        labels = {"statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(ordinal),
                  "controller-revision-hash": f"{sts}-{template_hash(template)}"}
        pod, _ = self.new_pod(w, template, name=name, labels=labels, edit_spec=edit)
        return pod

    def _ensure_claim(self, w: Workload, tmpl: Mapping, name: str) -> None:
        ns = w.meta.namespace
        if any(c.meta.namespace == ns and c.meta.name == name for c in self.pvcs):
            return
        tmeta = dict(tmpl.get("metadata") or {})
        sel = self.spec(w).get("selector")
        match = sel.get("matchLabels") if isinstance(sel, Mapping) else None
        labels = {**(tmeta.get("labels") or {}), **(match or {})}
        meta = {**copy.deepcopy(tmeta), "name": name, "namespace": ns,
                "uid": self.names.uid("PersistentVolumeClaim", ns, name), "creationTimestamp": self.now}
        if labels:
            meta["labels"] = labels
        spec = copy.deepcopy(dict(tmpl.get("spec") or {}))
        annotations = meta.get("annotations") or {}
        if not spec.get("storageClassName") and "storageClassName" not in spec \
                and "volume.beta.kubernetes.io/storage-class" not in annotations:
            default = self._default_class()
            if default:
                spec["storageClassName"] = default
        raw = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
               "status": {"phase": "Pending"}}
        self.pvcs.append(parse_pvc(raw))

    def _default_class(self) -> str:
        cands = self.cluster.default_class_candidates
        if not cands:
            return ""
        newest = max(parse_time(c) or 0.0 for c, _ in cands)
        return min(n for c, n in cands if (parse_time(c) or 0.0) == newest)

    def _expand_StatefulSet(self, w: Workload) -> None:
        start, end = self._ordinal_range(w)
        have = {p.name for p in self.pods_of(w)}
        rep = self.report(w)
        rep.desired, rep.existing = end - start, len(have)
        ordered = (self.spec(w).get("podManagementPolicy") or "OrderedReady") == "OrderedReady"
        made = []
        for o in range(start, end):
            name = f"{w.meta.name}-{o}"
            if name in have:
                continue
            pod = self._sts_pod(w, o)
            if pod is None:
                continue
            made.append(pod)
            if ordered and o > start:
                self.gates[pod.key] = tuple(f"{w.meta.namespace}/{w.meta.name}-{i}" for i in range(start, o))
        self._created(w, made)

    # DaemonSet --------------------------------------------------------------------------------
    def _expand_DaemonSet(self, w: Workload) -> None:
        spec = self.spec(w)
        template = spec.get("template") or {}
        tspec = dict(template.get("spec") or {})
        tolerations = _daemon_tolerations(tspec)
        probe_raw = {"metadata": {"name": "probe", "namespace": w.meta.namespace,
                                  "labels": dict((template.get("metadata") or {}).get("labels") or {})},
                     "spec": {**tspec, "tolerations": tolerations}}
        try:
            probe = parse_pod(probe_raw)
        except FieldError:
            self.report(w).note = "template is not a valid pod"
            return
        want_node = str(tspec.get("nodeName") or "")
        by_node: dict[str, list[Pod]] = {}
        node_names = {n.name for n in self.nodes}
        for p in self.pods_of(w):
            target = p.node_name or _target_node(p)
            by_node.setdefault(target, []).append(p)
        generation = w.meta.annotations.get("deprecated.daemonset.template.generation") or "1"
        labels = {"controller-revision-hash": template_hash(template), "pod-template-generation": str(generation)}
        made: list[Pod] = []
        doomed: list[Pod] = []
        desired = 0
        for node in sorted(self.nodes, key=lambda n: n.name):
            should_run, keep = _should_run(probe, node, want_node)
            desired += should_run
            here = by_node.get(node.name, [])
            if should_run and not here:
                pod, _ = self.new_pod(w, template, generate=f"{w.meta.name}-", labels=labels,
                                      edit_spec=_daemon_spec(node.name, tolerations))
                if pod is not None:
                    made.append(pod)
            elif keep and len(here) > 1:
                oldest = min(here, key=lambda p: (not p.node_name, parse_time(p.meta.creation) or 0.0, p.name))
                doomed.extend(p for p in here if p is not oldest)
            elif not keep:
                doomed.extend(here)
        doomed.extend(p for target, ps in by_node.items() if target not in node_names for p in ps)
        rep = self.report(w)
        rep.desired, rep.existing = desired, sum(len(v) for v in by_node.values())
        self._delete(w, sorted(doomed, key=lambda p: p.key))
        self._created(w, made)

    # Job / CronJob ----------------------------------------------------------------------------
    def _job_spec(self, w: Workload) -> dict:
        """``SetDefaults_Job`` (and a scale edit's parallelism)."""
        spec = self.spec(w)
        completions = spec.get("completions")
        parallelism = spec.get("parallelism")
        completions = completions if isinstance(completions, int) and not isinstance(completions, bool) else None
        parallelism = parallelism if isinstance(parallelism, int) and not isinstance(parallelism, bool) else None
        if completions is None and parallelism is None:
            completions = parallelism = 1
        if parallelism is None:
            parallelism = 1
        if w.key in self.replicas:
            parallelism = self.replicas[w.key]
        backoff = spec.get("backoffLimit")
        if not isinstance(backoff, int) or isinstance(backoff, bool):
            backoff = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
        return {"completions": completions, "parallelism": parallelism, "backoffLimit": backoff,
                "completionMode": spec.get("completionMode") or "NonIndexed",
                "suspend": spec.get("suspend") is True, "manualSelector": spec.get("manualSelector") is True}

    def _job_done(self, w: Workload) -> bool:
        if w.key in self.failed_jobs or w.key in self.deleted_jobs:
            return True
        status = w.raw.get("status") if isinstance(w.raw.get("status"), Mapping) else {}
        return any(isinstance(c, Mapping) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                   for c in status.get("conditions") or [])  # type: ignore[union-attr]

    def _job_succeeded(self, w: Workload, completions: int | None) -> set[int] | int:
        status = w.raw.get("status") if isinstance(w.raw.get("status"), Mapping) else {}
        if self._job_spec(w)["completionMode"] == "Indexed":
            done = _parse_indexes(str(status.get("completedIndexes") or ""))  # type: ignore[union-attr]
            return {i for i in done if completions is None or i < completions}
        return _as_int(status.get("succeeded"))  # type: ignore[union-attr]

    def _want_active(self, w: Workload) -> tuple[int, set[int]]:
        js = self._job_spec(w)
        succeeded = self._job_succeeded(w, js["completions"])
        done_set = succeeded if isinstance(succeeded, set) else set()
        n_done = len(succeeded) if isinstance(succeeded, set) else succeeded
        active = len(self.pods_of(w))
        if js["completions"] is None:
            want = js["parallelism"] if n_done == 0 else active
        else:
            want = min(js["completions"] - n_done, js["parallelism"])
        return max(0, want), done_set

    def _job_excess(self, w: Workload) -> list[Pod]:
        """``activePodsForRemoval``: the pods above wantActive."""
        if self._job_done(w) or self._job_spec(w)["suspend"]:
            return []
        want, _ = self._want_active(w)
        active = self.pods_of(w)
        if len(active) <= want:
            return []
        need = len(active) - want
        rm: list[Pod] = []
        left = active
        js = self._job_spec(w)
        if js["completionMode"] == "Indexed":
            rm, left = [], []
            groups: dict[int, list[Pod]] = {}
            for p in active:
                i = _completion_index(p)
                if i is None or (js["completions"] is not None and i >= js["completions"]):
                    rm.append(p)
                else:
                    groups.setdefault(i, []).append(p)
            for i in sorted(groups):
                ps = _active_pods_sorted(groups[i], self.now_s)
                rm.extend(ps[:-1])
                left.append(ps[-1])
        if len(rm) < need:
            rm.extend(_active_pods_sorted(left, self.now_s)[: need - len(rm)])
        return rm

    def _job_pod(self, w: Workload, index: int | None) -> Pod | None:
        js = self._job_spec(w)
        template = self.spec(w).get("template") or {}
        labels: dict[str, str] = {}
        tlabels = (template.get("metadata") or {}).get("labels") or {}
        if not js["manualSelector"]:
            uid = self.uid(w)
            for k, v in (("batch.kubernetes.io/controller-uid", uid), ("controller-uid", uid),
                         ("batch.kubernetes.io/job-name", w.meta.name), ("job-name", w.meta.name)):
                if k not in tlabels:
                    labels[k] = v
        annotations: dict[str, str] = {}
        job = w.meta.name
        if index is None:
            generate = f"{job}-"
            edit = None
        else:
            labels[INDEX_KEY] = annotations[INDEX_KEY] = str(index)
            suffix = f"-{index}-"
            generate = job + suffix
            if len(generate) > 58:
                generate = job[: 58 - len(suffix)] + suffix

            def edit(pod_spec: dict) -> None:
                pod_spec["hostname"] = f"{job}-{index}"
        pod, _ = self.new_pod(w, template, generate=generate, labels=labels, annotations=annotations,
                              finalizers=["batch.kubernetes.io/job-tracking"], edit_spec=edit)
        return pod

    def _expand_Job(self, w: Workload) -> None:
        rep = self.report(self.top(w))
        if w.key in self.deleted_jobs:
            return
        js = self._job_spec(w)
        if js["suspend"] or w.key in self.failed_jobs:
            rep.note = "suspended" if js["suspend"] else "failed: backoffLimit exceeded by evictions"
            self._delete(w, sorted(self.pods_of(w), key=lambda p: p.key))
            return
        if self._job_done(w):
            rep.note = "finished"
            return
        excess = self._job_excess(w)
        self._delete(w, excess)
        want, done = self._want_active(w)
        active = self.pods_of(w)
        rep.desired = (rep.desired or 0) + want
        rep.existing += len(active)
        made = []
        if js["completionMode"] == "Indexed":
            held = {_completion_index(p) for p in active}
            limit = js["completions"] if js["completions"] is not None else 0
            free = [i for i in range(limit) if i not in done and i not in held]
            for i in free[: max(0, want - len(active))]:
                pod = self._job_pod(w, i)
                if pod is not None:
                    made.append(pod)
        else:
            for _ in range(max(0, want - len(active))):
                pod = self._job_pod(w, None)
                if pod is not None:
                    made.append(pod)
        self._created(w, made)

    def _jobs_of(self, cj: Workload) -> list[Workload]:
        return [j for j in self.workloads if j.kind == "Job" and self.owner(j.meta) is cj]

    def _cron_replace(self, cj: Workload) -> None:
        """``Replace``: the CronJob's running Jobs and their pods go before any expansion."""
        spec = self.spec(cj)
        if spec.get("suspend") is True or spec.get("concurrencyPolicy") != "Replace":
            return
        for j in self._jobs_of(cj):
            if self._job_done(j):
                continue
            self._delete(j, sorted(self.pods_of(j), key=lambda p: p.key))
            self.deleted_jobs.add(j.key)

    def _expand_CronJob(self, cj: Workload) -> None:
        rep = self.report(cj)
        spec = self.spec(cj)
        if not self.options.run_cronjobs:
            rep.note = "not run (pass --run-cronjobs to fire it now)"
            return
        if spec.get("suspend") is True:
            rep.note = "suspended"
            return
        if (spec.get("concurrencyPolicy") or "Allow") == "Forbid" and any(
                not self._job_done(j) for j in self._jobs_of(cj)):
            rep.note = "Forbid: a Job of it is still running"
            return
        ns = cj.meta.namespace
        name = f"{cj.meta.name}-{int(self.now_s // 60)}"
        if ("Job", ns, name) in self.by_key:
            rep.note = f"Job {name} already exists"
            return
        jt = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), Mapping) else {}
        jmeta = dict(jt.get("metadata") or {})  # type: ignore[union-attr]
        meta: dict = {"name": name, "namespace": ns, "uid": self.names.uid("Job", ns, name),
                      "creationTimestamp": self.now,
                      "annotations": {**(jmeta.get("annotations") or {}),
                                      "batch.kubernetes.io/cronjob-scheduled-timestamp": self.now},
                      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cj.meta.name,
                                           "uid": self.uid(cj), "controller": True, "blockOwnerDeletion": True}]}
        if jmeta.get("labels"):
            meta["labels"] = dict(jmeta["labels"])
        raw = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
               "spec": copy.deepcopy(dict(jt.get("spec") or {}))}  # type: ignore[union-attr]
        job = parse_workload(raw, "Job")
        job.index = len(self.workloads)
        self.workloads.append(job)
        self._index(job)
        self._expand_Job(job)

    # ------------------------------------------------------------------------------------ result
    def result(self) -> Cluster:
        c = self.cluster
        created = self.expansion.created
        base = max((p.index for p in c.pods), default=-1) + 1
        queue_order = self.expansion_pods + self.replacement_pods
        seq = {id(p): base + i for i, p in enumerate(queue_order)}
        # The input's pods, pending ones too, are the result's objects: a simulation never writes into a Pod
        # (binding and nomination live in its ClusterState; tests/test_unmutated.py), so a copy of each
        # pending pod (2,000 copies: ~21 M instructions) kept nothing more unchanged.
        pods: list[Pod] = list(self.pods)
        if created:
            for p in pods:
                if p.key in created:
                    p.index = seq.get(id(p), base + len(queue_order))
        workloads: dict[str, list[Workload]] = {}
        for w in self.workloads:
            if w.kind in ("Deployment", "DaemonSet", "Job", "CronJob"):
                continue
            workloads.setdefault(w.kind, []).append(w)
        for kind, ws in c.workloads.items():
            if kind not in workloads and kind not in ("Deployment", "DaemonSet", "Job", "CronJob"):
                workloads[kind] = list(ws)
        owners = {}
        for p in pods:
            key = self.top_key(p.meta) if p.meta.owner_refs else None  # (no reference: no owner)
            if key:
                owners[p.key] = key
        self.expansion.input_pending = [p.key for p in pods if not p.node_name and p.key not in created]
        present = {p.key for p in pods}
        gates = {k: v for k, v in self.gates.items() if k in present}
        out = dataclasses.replace(
            c, nodes=list(self.nodes), pods=pods, pdbs=list(self.pdbs), pvcs=list(self.pvcs), workloads=workloads,
            workload_order=list(self.workloads), pod_workloads=owners, ordered_gates=gates,
            expansion=self.expansion, warnings=[w for w in c.warnings if not w.startswith(NOTHING_TO_DO)],
            rejected_pods=list(c.rejected_pods),
            namespaces=dict(c.namespaces))
        self._warn(out)
        return out

    def _warn(self, out: Cluster) -> None:
        for rep in self.expansion.workloads.values():
            for name, reason in rep.rejected:
                out.warnings.append(f"{rep.key}: pod {name} not created: {reason}")
        if any(not p.node_name for p in out.pods):
            return
        workloads = [r for r in self.expansion.workloads.values() if r.kind in CONTROLLERS]
        if workloads:
            notes = sorted({r.note for r in workloads if r.note})
            detail = f" ({'; '.join(notes)})" if notes else ""
            out.warnings.append(f"{NOTHING_TO_DO} the {len(workloads)} workload(s) of the snapshot create no pending "
                                f"pods{detail} and no pod is pending")
        elif out.pods or out.nodes:
            bound = len(out.pods)
            out.warnings.append(f"{NOTHING_TO_DO} the snapshot holds no pending pods "
                                f"({f'{bound} pod(s) bound to nodes' if bound else 'no pods'})")


# ================================================================================================= helpers

def _as_int(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _ordinal(pod_name: str, sts: str) -> int | None:
    prefix = f"{sts}-"
    if not pod_name.startswith(prefix):
        return None
    rest = pod_name[len(prefix):]
    return int(rest) if rest.isdigit() else None


def _completion_index(pod: Pod) -> int | None:
    text = pod.meta.annotations.get(INDEX_KEY) or pod.labels.get(INDEX_KEY)
    if isinstance(text, str) and text.isdigit():
        return int(text)
    return None


def _parse_indexes(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        if a.isdigit() and (not b or b.isdigit()):
            out.update(range(int(a), int(b or a) + 1))
    return out


def _strip_hash(template: Mapping) -> bytes:
    from pysched.snapshot.names import canonical_json
    t = copy.deepcopy(dict(template))
    meta = dict(t.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    labels.pop(HASH_LABEL, None)
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    t["metadata"] = meta
    return canonical_json(t)


def _keeps_tolerating(pod: Pod, taints: list[Taint]) -> bool:
    """The taint manager: every NoExecute taint's first matching toleration exists and has no
    tolerationSeconds."""
    spec = pod.raw.get("spec") if isinstance(pod.raw.get("spec"), Mapping) else {}
    raws = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]  # type: ignore[union-attr]
    for taint in taints:
        for tol, raw in zip(pod.tolerations, raws, strict=False):
            if tol.tolerates(taint):
                if raw.get("tolerationSeconds") is not None:
                    return False
                break
        else:
            return False
    return True


def _daemon_tolerations(tspec: Mapping) -> list:
    tols = [copy.deepcopy(t) for t in tspec.get("tolerations") or []]
    extra = list(DAEMON_TOLERATIONS)
    if tspec.get("hostNetwork") is True:
        extra.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    for key, effect in extra:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tols):
            if isinstance(t, Mapping) and t.get("key", "") == key and t.get("operator", "") == "Exists" \
                    and t.get("value", "") == "" and t.get("effect", "") == effect:
                tols[i] = new
                break
        else:
            tols.append(new)
    return tols


def _daemon_spec(node: str, tolerations: list):
    def edit(spec: dict) -> None:
        spec["tolerations"] = copy.deepcopy(tolerations)
        affinity = dict(spec.get("affinity") or {})
        na = dict(affinity.get("nodeAffinity") or {})
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        affinity["nodeAffinity"] = na
        spec["affinity"] = affinity
    return edit


def _target_node(pod: Pod) -> str:
    """The node a pending DaemonSet pod is meant for (its ``matchFields metadata.name In [node]`` term)."""
    spec = pod.raw.get("spec") if isinstance(pod.raw.get("spec"), Mapping) else {}
    try:
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][  # type: ignore[index]
            "nodeSelectorTerms"]
    except (KeyError, TypeError):
        return ""
    for t in terms or []:
        for f in (t or {}).get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return str(f["values"][0])
    return ""


def _should_run(probe: Pod, node: Node, want_node: str) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (shouldRun, shouldContinueRunning)."""
    if want_node and want_node != node.name:
        return False, False
    if probe.node_selector and any(node.labels.get(k) != v for k, v in probe.node_selector.items()):
        return False, False
    if probe.node_affinity_required is not None and not probe.node_affinity_required.matches(node.labels, node.name):
        return False, False
    untolerated = [t for t in node.taints if t.effect in ("NoSchedule", "NoExecute")
                   and not any(tol.tolerates(t) for tol in probe.tolerations)]
    if not untolerated:
        return True, True
    return False, not any(t.effect == "NoExecute" for t in untolerated)


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def _ready_time(pod: Pod) -> float | None:
    for c in pod.conditions:
        if c.get("type") == "Ready" and c.get("status") == "True":
            return parse_time(c.get("lastTransitionTime"))
    return None


def _restarts(pod: Pod, sidecars: bool) -> int:
    status = pod.raw.get("status") if isinstance(pod.raw.get("status"), Mapping) else {}
    key = "initContainerStatuses" if sidecars else "containerStatuses"
    sidecar_names = {c.name for c in pod.init_containers if c.restartable}
    best = 0
    for s in status.get(key) or []:  # type: ignore[union-attr]
        if not isinstance(s, Mapping) or (sidecars and s.get("name") not in sidecar_names):
            continue
        best = max(best, _as_int(s.get("restartCount")))
    return best


def _log_rank(t: float, now_ns: int) -> int:
    d = now_ns - round(t * 1e9)
    return -1 if d <= 0 else math.floor(math.log2(d))


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    if not t1 or not t2:
        return not t1
    return t1 > t2


def _deletion_cost(pod: Pod) -> int:
    text = pod.meta.annotations.get("controller.kubernetes.io/pod-deletion-cost")
    try:
        return int(text) if isinstance(text, str) else 0
    except ValueError:
        return 0


def _log_less(t1: float | None, t2: float | None, uid1: str, uid2: str, now_ns: int) -> bool:
    if not t1 or not t2 or not now_ns:
        return _after_or_zero(t1, t2)
    diff = _log_rank(t1, now_ns) - _log_rank(t2, now_ns)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _ranked_less(a: Pod, b: Pod, ra: int, rb: int, now_ns: int) -> bool:
    if bool(a.node_name) != bool(b.node_name):
        return not a.node_name
    pa, pb = _PHASE_RANK.get(a.phase, 0), _PHASE_RANK.get(b.phase, 0)
    if pa != pb:
        return pa < pb
    ya, yb = is_ready(a), is_ready(b)
    if ya != yb:
        return not ya
    ca, cb = _deletion_cost(a), _deletion_cost(b)
    if ca != cb:
        return ca < cb
    if ra != rb:
        return ra > rb
    if ya and yb:
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            return _log_less(ta, tb, a.meta.uid, b.meta.uid, now_ns)
    for sidecars in (False, True):
        xa, xb = _restarts(a, sidecars), _restarts(b, sidecars)
        if xa != xb:
            return xa > xb
    ta, tb = parse_time(a.meta.creation), parse_time(b.meta.creation)
    if ta != tb:
        return _log_less(ta, tb, a.meta.uid, b.meta.uid, now_ns)
    return False


def _ranked_cmp(a: Pod, b: Pod, ra: int, rb: int, now_ns: int) -> int:
    if _ranked_less(a, b, ra, rb, now_ns):
        return -1
    if _ranked_less(b, a, rb, ra, now_ns):
        return 1
    return 0


def _active_less(a: Pod, b: Pod) -> bool:
    """``controller.ActivePods``."""
    if bool(a.node_name) != bool(b.node_name):
        return not a.node_name
    pa, pb = _PHASE_RANK.get(a.phase, 0), _PHASE_RANK.get(b.phase, 0)
    if pa != pb:
        return pa < pb
    ya, yb = is_ready(a), is_ready(b)
    if ya != yb:
        return not ya
    if ya and yb:
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            return _after_or_zero(ta, tb)
    for sidecars in (False, True):
        xa, xb = _restarts(a, sidecars), _restarts(b, sidecars)
        if xa != xb:
            return xa > xb
    ta, tb = parse_time(a.meta.creation), parse_time(b.meta.creation)
    if ta != tb:
        return _after_or_zero(ta, tb)
    return False


def _active_pods_sorted(pods: list[Pod], now_s: float) -> list[Pod]:
    def cmp(a: Pod, b: Pod) -> int:
        return -1 if _active_less(a, b) else 1 if _active_less(b, a) else 0
    return sorted(pods, key=functools.cmp_to_key(cmp))
