"""NodeInfo: a node and the running totals of the pods on it, as upstream's ``framework/types.go``."""

from __future__ import annotations

from pysched.model.objects import HostPort, Node, Pod
from pysched.model.resources import Resource

ZERO_IP = "0.0.0.0"


class ImageState:
    """Upstream ``ImageStateSummary``: an image's size and how many nodes hold it."""

    __slots__ = ("num_nodes", "size")

    def __init__(self, size: int, num_nodes: int) -> None:
        self.size = size
        self.num_nodes = num_nodes


class NodeInfo:
    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node, image_states: dict[str, ImageState] | None = None) -> None:
        self.node = node
        self.name = node.meta.name
        self.pods: list[Pod] = []
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource.from_list(node.allocatable)
        # ip -> {(protocol, port): count}; counted so that removing one of two users keeps the port.
        self.used_ports: dict[str, dict[tuple[str, int], int]] = {}
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.image_states = image_states if image_states is not None else {}
        self.generation = 0

    # ------------------------------------------------------------------ mutation
    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if pod.affinity.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.affinity.required_anti:
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove ``pod`` (the same object, else the pod with its key and UID); False when absent.

        As upstream, the last pod takes the removed one's place: the order of ``pods`` is the order
        preemption considers victims in, so it follows upstream's history of adds and removes."""
        pods = self.pods
        try:
            idx: int | None = pods.index(pod)  # pods compare by identity (eq=False): one scan in C
        except ValueError:
            idx = next((i for i, p in enumerate(pods) if p.uid == pod.uid and p.key == pod.key), None)
        if idx is None:
            return False
        p = pods[idx]
        pods[idx] = pods[-1]
        pods.pop()
        if p.affinity.has_affinity:
            self.pods_with_affinity = [x for x in self.pods_with_affinity if x is not p]
        if p.affinity.required_anti:
            self.pods_with_required_anti_affinity = [x for x in self.pods_with_required_anti_affinity
                                                     if x is not p]
        self._update(p, -1)
        return True

    def _update(self, pod: Pod, sign: int) -> None:
        r = pod.requests
        req = self.requested
        req.milli_cpu += sign * r.milli_cpu
        req.memory += sign * r.memory
        req.ephemeral_storage += sign * r.ephemeral_storage
        if r.scalar:
            s = req.scalar
            for k, v in r.scalar.items():
                s[k] = s.get(k, 0) + sign * v
        self.non_zero_requested.milli_cpu += sign * pod.non0_cpu
        self.non_zero_requested.memory += sign * pod.non0_mem
        for hp in pod.host_ports:
            self._update_port(hp, sign)
        self.generation += 1

    def _update_port(self, hp: HostPort, sign: int) -> None:
        ip = hp.ip or ZERO_IP
        key = (hp.protocol or "TCP", hp.port)
        ports = self.used_ports.setdefault(ip, {})
        n = ports.get(key, 0) + sign
        if n > 0:
            ports[key] = n
        else:
            ports.pop(key, None)
            if not ports:
                del self.used_ports[ip]

    def port_conflict(self, hp: HostPort) -> bool:
        """Upstream ``HostPortInfo.CheckConflict``."""
        ip = hp.ip or ZERO_IP
        key = (hp.protocol or "TCP", hp.port)
        if ip == ZERO_IP:
            for ports in self.used_ports.values():
                if key in ports:
                    return True
            return False
        for check in (ZERO_IP, ip):
            at = self.used_ports.get(check)
            if at and key in at:
                return True
        return False

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.used_ports = {ip: dict(p) for ip, p in self.used_ports.items()}
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.image_states = self.image_states
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, requested={self.requested})"
