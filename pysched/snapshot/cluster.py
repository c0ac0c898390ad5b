"""The in-memory cluster the simulation runs against: objects, node order, nominations."""

from __future__ import annotations

from dataclasses import dataclass, field

from pysched.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Workload,
)
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


def node_tree_order(nodes: list[Node]) -> list[Node]:
    """Upstream ``nodeTree.list()``: round-robin over zones in first-insertion order."""
    zones: dict[str, list[Node]] = {}
    for n in nodes:
        zones.setdefault(zone_key(n.labels), []).append(n)
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
    ignored_kinds: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rejected_pods: list[tuple[str, str]] = field(default_factory=list)  # (ns/name, reason)
    sources: list[str] = field(default_factory=list)


class ClusterState:
    """Node infos in node-tree order plus the nominations made so far; mutated by binding and preemption."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        images = _image_states(cluster.nodes)
        ordered = node_tree_order(cluster.nodes)
        self.node_infos: list[NodeInfo] = [NodeInfo(n, images.get(n.name)) for n in ordered]
        self.by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        self.pod_node: dict[str, str] = {}  # pod key -> node name, for bound pods
        for p in cluster.pods:
            if p.node_name and p.node_name in self.by_name:
                self.by_name[p.node_name].add_pod(p)
                self.pod_node[p.key] = p.node_name
        self.nominated: dict[str, list[Pod]] = {}  # node name -> pods nominated to it
        self.nomination_of: dict[str, str] = {}  # pod key -> node name
        self.namespace_labels: dict[str, dict[str, str]] = {n: ns.labels for n, ns in cluster.namespaces.items()}
        self.generation = 0
        # names of the nodes whose pods changed, in order: plugins that keep cluster-wide counts across
        # cycles replay it to update only those nodes
        self.change_log: list[str] = []

    # ------------------------------------------------------------------ queries
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def ns_labels(self, namespace: str) -> dict[str, str]:
        return self.namespace_labels.get(namespace, {})

    def nodes_with_affinity_pods(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_affinity]

    def nodes_with_required_anti_affinity_pods(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]

    def nominated_pods_for(self, node_name: str) -> list[Pod]:
        return self.nominated.get(node_name, [])

    # ------------------------------------------------------------------ mutation
    def bind(self, pod: Pod, node_name: str) -> None:
        self.clear_nomination(pod)
        self.by_name[node_name].add_pod(pod)
        self.pod_node[pod.key] = node_name
        pod.node_name = node_name
        self.generation += 1
        self.change_log.append(node_name)

    def delete_pod(self, pod: Pod) -> None:
        """A victim leaves the cluster."""
        node = self.pod_node.pop(pod.key, None)
        if node is not None:
            self.by_name[node].remove_pod(pod)
            self.change_log.append(node)
        self.clear_nomination(pod)
        self.generation += 1

    def nominate(self, pod: Pod, node_name: str) -> None:
        self.clear_nomination(pod)
        self.nominated.setdefault(node_name, []).append(pod)
        self.nomination_of[pod.key] = node_name
        pod.nominated_node_name = node_name

    def clear_nomination(self, pod: Pod) -> None:
        node = self.nomination_of.pop(pod.key, None)
        if node is not None:
            lst = self.nominated.get(node, [])
            self.nominated[node] = [p for p in lst if p is not pod]
            if not self.nominated[node]:
                del self.nominated[node]
        pod.nominated_node_name = ""


def _image_states(nodes: list[Node]) -> dict[str, dict[str, ImageState]]:
    """Per node: image name -> (size recorded by the first node reporting it, number of nodes)."""
    first_size: dict[str, int] = {}
    holders: dict[str, set[str]] = {}
    for n in nodes:
        for im in n.images:
            for name in im.names:
                first_size.setdefault(name, im.size)
                holders.setdefault(name, set()).add(n.name)
    shared = {name: ImageState(first_size[name], len(h)) for name, h in holders.items()}
    out: dict[str, dict[str, ImageState]] = {}
    for n in nodes:
        out[n.name] = {name: shared[name] for im in n.images for name in im.names}
    return out
