"""The in-memory cluster the simulation runs against: objects, node order, nominations."""

from __future__ import annotations

import gc
from dataclasses import field
from typing import Any

from pysched.lazyclass import dataclass
from pysched.model.dra_objects import DRAObjects
from pysched.model.labels import NodeSelector
from pysched.model.objects import (
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Workload,
)
from pysched.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_PROVISIONED_BY,
    CLAIM_BOUND,
    CSI_DRIVER_OF_IN_TREE_PLUGIN,
    VOLUME_BOUND,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from pysched.snapshot.dra import DRAState
from pysched.snapshot.nodeinfo import ImageState, NodeInfo

BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"


def zone_key(labels: dict[str, str]) -> str:
    """Upstream ``utilnode.GetZoneKey``: presence of the beta label wins, even when empty."""
    region = labels[BETA_REGION] if BETA_REGION in labels else labels.get(REGION, "")
    zone = labels[BETA_ZONE] if BETA_ZONE in labels else labels.get(ZONE, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def _node_name(n: Node) -> str:
    return n.meta.name  # (Node.name without the property call)


def node_tree_order(nodes: list[Node]) -> list[Node]:
    """Upstream ``nodeTree.list()``: round-robin over zones in first-insertion order. The scheduler's
    informer adds nodes in the order the API server lists them, which is by name, whatever the order of
    the snapshot file."""
    zones: dict[str, list[Node]] = {}
    for n in sorted(nodes, key=_node_name):
        zones.setdefault(zone_key(n.meta.labels), []).append(n)
    out: list[Node] = []
    columns = list(zones.values())
    depth = max((len(c) for c in columns), default=0)
    for i in range(depth):
        for c in columns:
            if i < len(c):
                out.append(c[i])
    return out


@dataclass
class Cluster:
    """Everything loaded from a snapshot, admitted as the API server would admit it."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # running (bound) and pending, in input order
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    workloads: dict[str, list[Workload]] = field(default_factory=dict)  # kind -> objects
    # storage (the volume plugins); claims and volumes are copied by each simulation before it binds them
    pvs: list[PersistentVolume] = field(default_factory=list)
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    volume_attachments: list[VolumeAttachment] = field(default_factory=list)
    csi_storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    dra: DRAObjects = field(default_factory=DRAObjects)  # DeviceClasses, ResourceSlices, claims, templates
    ignored_kinds: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rejected_pods: list[tuple[str, str]] = field(default_factory=list)  # (ns/name, reason)
    sources: list[str] = field(default_factory=list)
    # a kube-scheduler-simulator export's schedulerConfig (as a v1 KubeSchedulerConfiguration), used
    # unless --config is given; the warnings say what in it kube-scheduler v1.34 would refuse
    embedded_config: dict | None = None
    embedded_config_source: str = ""
    embedded_config_warnings: list[str] = field(default_factory=list)
    # workloads and what-if edits (pysched.controllers)
    workload_order: list[Workload] = field(default_factory=list)  # every workload, in input order
    limit_ranges: list = field(default_factory=list)  # admission.LimitRange
    latest_timestamp: str = ""  # the latest metadata.creationTimestamp of any input object
    name_counters: dict[tuple[str, str], int] = field(default_factory=dict)  # generateName counters so far
    pod_workloads: dict[str, str] = field(default_factory=dict)  # pod key -> Kind/namespace/name of its top owner
    # created StatefulSet pods (OrderedReady) -> the lower ordinals that must be bound ahead of them
    ordered_gates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    default_class_candidates: list[tuple[str, str]] = field(default_factory=list)  # (creation, name)
    expansion: object | None = None  # controllers.Expansion: what the edits and the controllers did


class ClusterState:
    """One simulation's view of a loaded :class:`Cluster`: node infos in node-tree order, where pods are
    bound, the nominations made so far and the storage view (``storage``). Binding and preemption change
    this view only, never the loaded objects (upstream schedules a copy of each pod, never the informer's
    object), so one ``Cluster`` can be simulated many times."""

    def __init__(self, cluster: Cluster) -> None:
        # thousands of long-lived objects and no cyclic garbage: the collector would only walk them again
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            self._build(cluster)
        finally:
            if paused:
                gc.enable()

    def _build(self, cluster: Cluster) -> None:
        self.cluster = cluster
        images = _image_states(cluster.nodes)
        ordered = node_tree_order(cluster.nodes)
        self.node_infos: list[NodeInfo] = [NodeInfo(n, images.get(n.meta.name)) for n in ordered]
        self.by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        self.pod_node: dict[str, str] = {}  # pod key -> node name, for bound pods
        # pods this simulation bound: no kubelet ever started them, so they have no status.startTime
        self.bound_here: set[str] = set()
        self.storage = StorageState(cluster)
        self.dra = DRAState(cluster.dra, cluster.pods)
        for p in cluster.pods:
            if p.node_name and p.node_name in self.by_name:
                self.by_name[p.node_name].add_pod(p)
                self.pod_node[p.key] = p.node_name
                self.storage.count_claims(p, 1)
        self.nominated: dict[str, list[Pod]] = {}  # node name -> pods nominated to it
        self.nomination_of: dict[str, str] = {}  # pod key -> node name
        # pod key -> status.nominatedNodeName as this simulation set it ("": cleared); else the input's
        self._nominated_name: dict[str, str] = {}
        self.namespace_labels: dict[str, dict[str, str]] = {n: ns.labels for n, ns in cluster.namespaces.items()}
        # names of the nodes whose pods changed, in order: plugins that keep cluster-wide counts across
        # cycles replay it to update only those nodes
        self.change_log: list[str] = []
        # per entry of ``change_log``: the pod bound there, None where a pod left (those plugins read a
        # bind's pod here rather than compare the node's pods with those it had)
        self.change_pods: list[Pod | None] = []

    # ------------------------------------------------------------------ queries
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def ns_labels(self, namespace: str) -> dict[str, str]:
        return self.namespace_labels.get(namespace, {})

    def nominated_pods_for(self, node_name: str) -> list[Pod]:
        return self.nominated.get(node_name, [])

    def node_name_of(self, pod: Pod) -> str:
        """The node ``pod`` is bound to in this simulation ("": pending); a pod bound in the input to a
        node the snapshot lacks keeps that name."""
        return self.pod_node.get(pod.key) or pod.node_name

    def nominated_node_name(self, pod: Pod) -> str:
        """The pod's ``status.nominatedNodeName`` as this simulation has set or cleared it."""
        return self._nominated_name.get(pod.key, pod.nominated_node_name)

    def current_pod(self, pod: Pod) -> dict[str, Any]:
        """The pod object as the scheduler holds it now (what an extender is sent): the input object with
        admission's ``spec.priority``, the simulation's ``spec.nodeName`` and ``status.nominatedNodeName``.
        A new dict: the loaded object is left as it was."""
        raw = dict(pod.raw)
        spec = dict(raw.get("spec") or {})
        spec["priority"] = pod.priority
        node = self.node_name_of(pod)
        if node:
            spec["nodeName"] = node
        else:
            spec.pop("nodeName", None)
        raw["spec"] = spec
        nominated = self.nominated_node_name(pod)
        if nominated or "nominatedNodeName" in (raw.get("status") or {}):
            status = dict(raw.get("status") or {})
            if nominated:
                status["nominatedNodeName"] = nominated
            else:
                status.pop("nominatedNodeName", None)
            raw["status"] = status
        return raw

    # ------------------------------------------------------------------ mutation
    def bind(self, pod: Pod, node_name: str) -> None:
        key = pod.key
        if key in self.nomination_of:
            self.clear_nomination(pod)
        else:  # (clear_nomination's only step for a pod nominated nowhere, without the call)
            self._nominated_name[key] = ""
        self.by_name[node_name].add_pod(pod)
        self.pod_node[key] = node_name
        self.bound_here.add(key)
        if pod.volumes:  # (count_claims counts nothing for a pod without volumes)
            self.storage.count_claims(pod, 1)
        self.change_log.append(node_name)
        self.change_pods.append(pod)

    def delete_pod(self, pod: Pod) -> None:
        """A victim leaves the cluster."""
        node = self.pod_node.pop(pod.key, None)
        self.bound_here.discard(pod.key)
        if node is not None:
            self.by_name[node].remove_pod(pod)
            self.storage.count_claims(pod, -1)
            self.change_log.append(node)
            self.change_pods.append(None)
        self.clear_nomination(pod)

    def evict(self, pod: Pod) -> None:
        """A preemption victim is deleted: it leaves its node and the resourceclaim controller releases its
        claims at once (in a cluster, when it terminates)."""
        self.delete_pod(pod)
        self.dra.pod_deleted(pod)

    def nominate(self, pod: Pod, node_name: str) -> None:
        self.clear_nomination(pod)
        self.nominated.setdefault(node_name, []).append(pod)
        self.nomination_of[pod.key] = node_name
        self._nominated_name[pod.key] = node_name

    def clear_nomination(self, pod: Pod) -> None:
        node = self.nomination_of.pop(pod.key, None)
        if node is not None:
            lst = self.nominated.get(node, [])
            self.nominated[node] = [p for p in lst if p is not pod]
            if not self.nominated[node]:
                del self.nominated[node]
        self._nominated_name[pod.key] = ""


class StorageState:
    """The storage objects as the volume plugins see them during one simulation.

    Claims and volumes are this simulation's own copies: VolumeBinding's Reserve *assumes* bindings (seen by
    VolumeBinding only, as upstream's assume cache), Unreserve forgets them and PreBind makes them real, as
    the PV controller and the external provisioner would have at once (static: the PV and the claim
    bound; provision: a PV ``pvc-<claim uid>`` created and bound). Classes and CSI objects are read-only.
    ``used_claims`` counts the scheduled pods that reference each claim (upstream's usedPVCSet).
    """

    def __init__(self, cluster: Cluster) -> None:
        self.classes = cluster.storage_classes
        self.csi_nodes = cluster.csi_nodes
        self.csi_drivers = cluster.csi_drivers
        self.attachments = cluster.volume_attachments
        self.capacities = cluster.csi_storage_capacities
        self.claims: dict[str, PersistentVolumeClaim] = {c.key: c.copy() for c in cluster.pvcs}
        self.volumes: dict[str, PersistentVolume] = {v.name: v.copy() for v in cluster.pvs}
        self._by_class: dict[str, list[str]] = {}  # class -> PV names, in input order
        for v in self.volumes.values():
            self._by_class.setdefault(v.storage_class, []).append(v.name)
        self._assumed_claims: dict[str, PersistentVolumeClaim] = {}
        self._assumed_volumes: dict[str, PersistentVolume] = {}
        self.used_claims: dict[str, int] = {}
        self._attachments_by_node: dict[str, list[VolumeAttachment]] | None = None
        #: what became real, in order: ``claim:<ns/name>`` and ``volume:<name>`` (read by caches of what
        #: depends on a claim or a volume, to drop their stale entries)
        self.changes: list[str] = []

    # ------------------------------------------------------------------ queries
    def claim(self, namespace: str, name: str, assumed: bool = False) -> PersistentVolumeClaim | None:
        key = f"{namespace}/{name}"
        if assumed:
            hit = self._assumed_claims.get(key)
            if hit is not None:
                return hit
        return self.claims.get(key)

    def volume(self, name: str, assumed: bool = False) -> PersistentVolume | None:
        if assumed:
            hit = self._assumed_volumes.get(name)
            if hit is not None:
                return hit
        return self.volumes.get(name)

    def volumes_of_class(self, storage_class: str) -> list[PersistentVolume]:
        """The volumes of a class with assumed bindings applied (upstream ``PVAssumeCache.ListPVs``)."""
        assumed = self._assumed_volumes
        return [assumed.get(n) or self.volumes[n] for n in self._by_class.get(storage_class, ())]

    def attachments_on(self, node_name: str) -> list[VolumeAttachment]:
        """The VolumeAttachments naming the node, in input order."""
        if self._attachments_by_node is None:
            self._attachments_by_node = {}
            for va in self.attachments:
                self._attachments_by_node.setdefault(va.node_name, []).append(va)
        return self._attachments_by_node.get(node_name, [])

    def is_used(self, claim_key: str) -> bool:
        return self.used_claims.get(claim_key, 0) > 0

    # ------------------------------------------------------------------ mutation
    def count_claims(self, pod: Pod, sign: int) -> None:
        """A pod entered (1) or left (-1) a node: its PVC volumes count as used (ephemeral ones do not)."""
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, dict):
                continue
            key = f"{pod.namespace}/{ref.get('claimName') or ''}"
            n = self.used_claims.get(key, 0) + sign
            if n > 0:
                self.used_claims[key] = n
            else:
                self.used_claims.pop(key, None)

    def assume_volume(self, pv: PersistentVolume) -> None:
        self._assumed_volumes[pv.name] = pv

    def assume_claim(self, pvc: PersistentVolumeClaim) -> None:
        self._assumed_claims[pvc.key] = pvc

    def restore_volume(self, name: str) -> None:
        self._assumed_volumes.pop(name, None)

    def restore_claim(self, key: str) -> None:
        self._assumed_claims.pop(key, None)

    def bind_static(self, claim: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        """The chosen volume and the claim, bound to each other (what the PV controller completes)."""
        bound = pv.copy()
        bound.claim_ref = ClaimRef(claim.namespace, claim.name, claim.uid)
        bound.annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        bound.phase = VOLUME_BOUND
        self._store_volume(bound)
        self._bind_claim(claim, bound.name)

    def provision(self, claim: PersistentVolumeClaim, node: Node) -> PersistentVolume:
        """A volume provisioned for the claim on the node, bound to it (what the external provisioner and
        the PV controller complete): named ``pvc-<claim uid>``, the claim's request as capacity, and a
        node affinity on the node's values of the driver's CSINode topology keys."""
        cls = self.classes.get(claim.storage_class)
        provisioner = cls.provisioner if cls is not None else ""
        driver = CSI_DRIVER_OF_IN_TREE_PLUGIN.get(provisioner, provisioner)
        csi_node = self.csi_nodes.get(node.name)
        entry = csi_node.driver(driver) if csi_node is not None else None
        exprs = [{"key": k, "operator": "In", "values": [node.labels[k]]}
                 for k in (entry.topology_keys if entry is not None else ()) if k in node.labels]
        affinity = NodeSelector.parse({"nodeSelectorTerms": [{"matchExpressions": exprs}]}) if exprs else None
        name = f"pvc-{claim.uid or claim.namespace + '-' + claim.name}"
        pv = PersistentVolume(
            meta=ObjectMeta(name, "", "", {}, {}, "", [], None),
            capacity=claim.request or 0,
            access_modes=claim.access_modes,
            storage_class=claim.storage_class,
            volume_mode=claim.volume_mode,
            attributes_class=claim.attributes_class,
            claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid),
            node_affinity=affinity,
            phase=VOLUME_BOUND,
            csi_driver=driver,
            csi_handle=name,
            annotations={ANN_PROVISIONED_BY: provisioner},
        )
        if name not in self.volumes:
            self._by_class.setdefault(pv.storage_class, []).append(name)
        self._store_volume(pv)
        self._bind_claim(claim, name)
        return pv

    def _store_volume(self, pv: PersistentVolume) -> None:
        self.volumes[pv.name] = pv
        self.changes.append(f"volume:{pv.name}")
        self._assumed_volumes.pop(pv.name, None)

    def _bind_claim(self, claim: PersistentVolumeClaim, volume_name: str) -> None:
        bound = (self.claims.get(claim.key) or claim).copy()
        bound.annotations.update(claim.annotations)
        bound.volume_name = volume_name
        bound.annotations[ANN_BIND_COMPLETED] = "yes"
        bound.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        bound.phase = CLAIM_BOUND
        self.claims[bound.key] = bound
        self.changes.append(f"claim:{bound.key}")
        self._assumed_claims.pop(bound.key, None)


def _image_states(nodes: list[Node]) -> dict[str, dict[str, ImageState]]:
    """Per node: image name -> (size recorded by the first node reporting it, number of nodes)."""
    first_size: dict[str, int] = {}
    count: dict[str, int] = {}
    per_node: list[dict[str, int]] = []
    for n in nodes:
        names: dict[str, int] = {}  # the node's names, each once, in order
        per_node.append(names)
        if not n.images:
            continue
        for im in n.images:
            size = im.size
            for name in im.names:
                if name not in names:
                    names[name] = size
        for name, size in names.items():
            c = count.get(name)
            if c is None:
                count[name] = 1
                first_size[name] = size
            else:
                count[name] = c + 1
    shared = {name: ImageState(first_size[name], c) for name, c in count.items()}
    # (a node that reports no images gets no entry: NodeInfo then starts from an empty map, as from {})
    return {n.meta.name: {name: shared[name] for name in names}
            for n, names in zip(nodes, per_node, strict=True) if names}
