"""Small builders of Pod and Node dicts for tests.

``make_pod("p").req(cpu="1").obj()`` returns the plain dict; ``.pod()`` parses it with ``parse_pod``.
``make_node("n").alloc(cpu="4", memory="8Gi").obj()`` likewise, with ``.node()``.
"""

from __future__ import annotations

import copy
import importlib.util
import random
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from pysched.framework.cycle_state import CycleState
from pysched.model.objects import Node, Pod, parse_node, parse_pod
from pysched.snapshot.cluster import Cluster, ClusterState
from pysched.snapshot.nodeinfo import NodeInfo


def _resources(extra: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(extra or {})
    for k, v in kwargs.items():
        out[k.replace("_", "-")] = v
    return out


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": name, "namespace": namespace},
                                   "spec": {"containers": []}}

    @property
    def spec(self) -> dict[str, Any]:
        return self._d["spec"]

    # containers -------------------------------------------------------------
    def container(self, requests: Mapping[str, Any] | None = None, limits: Mapping[str, Any] | None = None,
                  image: str = "registry.k8s.io/pause:3.10", ports: list[dict] | None = None,
                  name: str | None = None) -> PodBuilder:
        c: dict[str, Any] = {"name": name or f"c{len(self.spec['containers'])}", "image": image}
        res: dict[str, Any] = {}
        if requests:
            res["requests"] = dict(requests)
        if limits:
            res["limits"] = dict(limits)
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        self.spec["containers"].append(c)
        return self

    def req(self, extra: Mapping[str, Any] | None = None, **kwargs: Any) -> PodBuilder:
        """A new container requesting ``kwargs`` (``ephemeral_storage`` → ``ephemeral-storage``) and ``extra``."""
        return self.container(requests=_resources(extra, kwargs))

    def init(self, requests: Mapping[str, Any] | None = None, sidecar: bool = False,
             image: str = "registry.k8s.io/pause:3.10", ports: list[dict] | None = None) -> PodBuilder:
        inits = self.spec.setdefault("initContainers", [])
        c: dict[str, Any] = {"name": f"i{len(inits)}", "image": image}
        if requests:
            c["resources"] = {"requests": dict(requests)}
        if sidecar:
            c["restartPolicy"] = "Always"
        if ports:
            c["ports"] = ports
        inits.append(c)
        return self

    def pod_req(self, extra: Mapping[str, Any] | None = None, **kwargs: Any) -> PodBuilder:
        """Pod-level ``spec.resources.requests``."""
        self.spec.setdefault("resources", {})["requests"] = _resources(extra, kwargs)
        return self

    def overhead(self, extra: Mapping[str, Any] | None = None, **kwargs: Any) -> PodBuilder:
        self.spec["overhead"] = _resources(extra, kwargs)
        return self

    def host_port(self, port: int, ip: str = "", protocol: str = "", container_port: int | None = None) -> PodBuilder:
        p: dict[str, Any] = {"containerPort": container_port or port, "hostPort": port}
        if ip:
            p["hostIP"] = ip
        if protocol:
            p["protocol"] = protocol
        return self.container(ports=[p])

    def host_network(self) -> PodBuilder:
        self.spec["hostNetwork"] = True
        return self

    # placement --------------------------------------------------------------
    def node_selector(self, selector: Mapping[str, str]) -> PodBuilder:
        self.spec["nodeSelector"] = dict(selector)
        return self

    def _node_affinity(self) -> dict[str, Any]:
        return self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})

    def required_terms(self, *terms: Mapping[str, Any]) -> PodBuilder:
        """``requiredDuringScheduling…`` with the given raw NodeSelectorTerms (none → ``[]``)."""
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [copy.deepcopy(dict(t)) for t in terms]}
        return self

    def preferred(self, weight: int, term: Mapping[str, Any]) -> PodBuilder:
        lst = self._node_affinity().setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
        lst.append({"weight": weight, "preference": copy.deepcopy(dict(term))})
        return self

    def preferred_empty(self) -> PodBuilder:
        self._node_affinity()["preferredDuringSchedulingIgnoredDuringExecution"] = []
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "") -> PodBuilder:
        t = {k: v for k, v in (("key", key), ("value", value), ("effect", effect), ("operator", operator)) if v}
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def node_name(self, name: str) -> PodBuilder:
        self.spec["nodeName"] = name
        return self

    # misc -------------------------------------------------------------------
    def gate(self, *names: str) -> PodBuilder:
        self.spec.setdefault("schedulingGates", []).extend({"name": n} for n in names)
        return self

    def priority(self, value: int) -> PodBuilder:
        self.spec["priority"] = value
        return self

    def volume(self, name: str, **source: Any) -> PodBuilder:
        self.spec.setdefault("volumes", []).append({"name": name, **source})
        return self

    def claim(self, name: str, template: str = "tmpl") -> PodBuilder:
        self.spec.setdefault("resourceClaims", []).append({"name": name, "resourceClaimTemplateName": template})
        return self

    def obj(self) -> dict[str, Any]:
        d = copy.deepcopy(self._d)
        if not d["spec"]["containers"]:
            d["spec"]["containers"] = [{"name": "c0", "image": "registry.k8s.io/pause:3.10"}]
        return d

    def pod(self, index: int = 0) -> Pod:
        return parse_pod(self.obj(), index)


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._d: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
                                   "spec": {}, "status": {"allocatable": {"pods": "110"}}}

    def alloc(self, extra: Mapping[str, Any] | None = None, **kwargs: Any) -> NodeBuilder:
        self._d["status"]["allocatable"].update(_resources(extra, kwargs))
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._d["metadata"]["labels"][key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> NodeBuilder:
        self._d["metadata"]["labels"].update(labels)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._d["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self) -> NodeBuilder:
        self._d["spec"]["unschedulable"] = True
        return self

    def image(self, names: list[str], size: int) -> NodeBuilder:
        self._d["status"].setdefault("images", []).append({"names": list(names), "sizeBytes": size})
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._d)

    def node(self) -> Node:
        return parse_node(self.obj())


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def node_info(node: NodeBuilder | Node, *pods: PodBuilder | Pod) -> NodeInfo:
    """A NodeInfo holding ``pods`` (bound to it)."""
    n = node.node() if isinstance(node, NodeBuilder) else node
    ni = NodeInfo(n)
    for i, p in enumerate(pods):
        pod = p.node_name(n.name).pod(i) if isinstance(p, PodBuilder) else p
        ni.add_pod(pod)
    return ni


def verdict_is_filter(plugin: Any, pod: Pod, verdict: Any, infos: list[NodeInfo]) -> list[Any]:
    """Asserts that a batched Filter verdict over ``infos`` agrees with ``plugin.filter`` node by node, the
    rejected rows' statuses too; returns filter's statuses."""
    want = [plugin.filter(CycleState(), pod, ni) for ni in infos]
    assert verdict.ok.tolist() == [st is None for st in want]
    rejected = [r for r, st in enumerate(want) if st is not None]
    got = verdict.statuses(np.array(rejected, dtype=np.int64))
    assert [(st.code, st.reasons) for st in got] == [(want[r].code, want[r].reasons) for r in rejected]
    return want


def cluster_state(nodes: list[NodeBuilder], pods: list[PodBuilder] = ()) -> ClusterState:  # type: ignore[assignment]
    """A ClusterState over ``nodes``; pods with ``nodeName`` are placed on their node."""
    return ClusterState(Cluster(nodes=[n.node() for n in nodes], pods=[p.pod(i) for i, p in enumerate(pods)]))


# ---------------------------------------------------------------------------------------------- workloads
def pod_template(labels: Mapping[str, str], cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    """A pod template: ``labels`` and one container requesting ``cpu``; ``spec`` keys added as given."""
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "main", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}],
                     **spec}}


def make_workload(kind: str, name: str, namespace: str = "default", *, template: Mapping[str, Any] | None = None,
                  spec: Mapping[str, Any] | None = None, owner: tuple[str, str] | None = None,
                  uid: str = "", created: str = "2025-03-01T08:00:00Z", **meta: Any) -> dict[str, Any]:
    """A workload object; ``template`` defaults to one labelled app=<name>; ``owner`` = (kind, name)."""
    api = {"ReplicationController": "v1", "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind, "apps/v1")
    labels = {"app": name}
    t = copy.deepcopy(dict(template)) if template is not None else pod_template(labels)
    body: dict[str, Any] = {"template": t}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        body["selector"] = {"matchLabels": dict(t["metadata"].get("labels") or labels)}
    if kind == "CronJob":
        body = {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": t}}}
    body.update(spec or {})
    m: dict[str, Any] = {"name": name, "namespace": namespace, "creationTimestamp": created, **meta}
    if uid:
        m["uid"] = uid
    if owner:
        o_api = {"Job": "batch/v1", "CronJob": "batch/v1"}.get(owner[0], "apps/v1")
        m["ownerReferences"] = [{"apiVersion": o_api, "kind": owner[0], "name": owner[1], "controller": True}]
    return {"apiVersion": api, "kind": kind, "metadata": m, "spec": body}


def owned(pod: PodBuilder, kind: str, name: str) -> PodBuilder:
    api = {"ReplicationController": "v1", "Job": "batch/v1"}.get(kind, "apps/v1")
    pod._d["metadata"]["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": name, "controller": True}]
    return pod


# ------------------------------------------------------------------ topology clusters

_KEYS = ["topology.kubernetes.io/zone", "kubernetes.io/hostname", "example.com/rack"]
_APPS = ["a", "b", "c"]


def topology_cluster(seed: int, n_nodes: int, n_running: int, n_pending: int) -> dict:
    """A List of Namespaces, a Service, Nodes and Pods for the topology plugins' differential tests:
    nodes missing topology keys or tainted, pods with random spread constraints and pod (anti-)affinity."""
    rng = random.Random(seed)
    items: list[dict] = [{"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, "team": t}}}
                         for ns, t in (("default", "x"), ("other", "y"))]
    items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc-a", "namespace": "default"},
                  "spec": {"selector": {"app": "a"}}})
    for i in range(n_nodes):
        labels = {"kubernetes.io/hostname": f"n{i:03d}", "pool": rng.choice(["p", "q"])}
        if rng.random() < 0.9:
            labels["topology.kubernetes.io/zone"] = f"z{rng.randrange(3)}"
        if rng.random() < 0.75:
            labels["example.com/rack"] = f"r{rng.randrange(6)}"
        spec: dict = {}
        if rng.random() < 0.15:
            spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:03d}", "labels": labels},
                      "spec": spec, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "20"}}})

    def term(key: str | None = None) -> dict:
        t: dict = {"topologyKey": key or rng.choice(_KEYS),
                   "labelSelector": {"matchLabels": {"app": rng.choice(_APPS)}}}
        r = rng.random()
        if r < 0.2:
            t["namespaces"] = [rng.choice(["default", "other"])]
        elif r < 0.3:
            t["namespaceSelector"] = {"matchLabels": {"team": rng.choice(["x", "y"])}}
        return t

    def pod(i: int, node: str | None) -> dict:
        app = rng.choice(_APPS)
        ns = "default" if rng.random() < 0.85 else "other"
        spec: dict = {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "100m"}}}]}
        aff: dict = {}
        if rng.random() < 0.3:
            aff.setdefault("podAntiAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
                term(rng.choice(["kubernetes.io/hostname", "example.com/rack"]))]
        if rng.random() < 0.3:
            aff.setdefault("podAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": term()}]
        if node is None:
            if rng.random() < 0.2:
                aff.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    term(rng.choice(["topology.kubernetes.io/zone", "example.com/rack"]))]
            if rng.random() < 0.3:
                aff.setdefault("podAntiAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": term()}]
            if rng.random() < 0.6:
                cons = []
                for _ in range(rng.randint(1, 2)):
                    hard = rng.random() < 0.6
                    c: dict = {"maxSkew": rng.randint(1, 3), "topologyKey": rng.choice(_KEYS),
                               "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
                               "labelSelector": {"matchLabels": {"app": rng.choice(_APPS)}}}
                    if hard and rng.random() < 0.3:
                        c["minDomains"] = rng.randint(1, 8)
                    if rng.random() < 0.3:
                        c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
                    if rng.random() < 0.3:
                        c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
                    if rng.random() < 0.15:
                        c["matchLabelKeys"] = ["tier"]
                    cons.append(c)
                spec["topologySpreadConstraints"] = cons
            if rng.random() < 0.25:
                spec["nodeSelector"] = {"pool": rng.choice(["p", "q"])}
            if rng.random() < 0.2:
                spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
        else:
            spec["nodeName"] = node
        if aff:
            spec["affinity"] = aff
        labels = {"app": app}
        if rng.random() < 0.5:
            labels["tier"] = rng.choice(["web", "db"])
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"p{i:04d}", "namespace": ns, "labels": labels,
                             "creationTimestamp": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"},
                "spec": spec, "status": {"phase": "Running"} if node else {"phase": "Pending"}}

    for i in range(n_running):
        items.append(pod(i, f"n{rng.randrange(n_nodes):03d}"))
    for i in range(n_running, n_running + n_pending):
        items.append(pod(i, None))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def load_bench() -> ModuleType:
    """``bench/bench.py`` as a module: its workload generators build the tests' larger clusters."""
    spec = importlib.util.spec_from_file_location("pysched_bench", Path(__file__).resolve().parent.parent / "bench" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def key_paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a nest of dicts and lists (keys and indexes), the empty one first."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(key_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(key_paths(v, (*prefix, i)))
    return out


def python_lines(code: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The stdout lines of ``code`` run by this interpreter in a fresh process (for what only a new process
    shows: imports, threads, exit handlers); the test fails with its stderr when it fails."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=None if env is None else dict(env))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
