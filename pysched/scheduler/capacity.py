"""Capacity planning: how many more copies of a pod fit, and how many nodes of a shape are needed.

The contract is ``conformance/capacity/README.md``. The snapshot is simulated first (``simulate``); the
pods it bound stay, its victims are gone, pods still pending are left out. Copies of a template are then
scheduled one at a time by the full cycle against one live ``ClusterState``: each fitted copy is bound
before the next copy's cycle, so spread, anti-affinity, ports and resources see it. Nothing is simulated
again per copy: the cost of copy i is one cycle.

The node-template search simulates the snapshot with n copies of a Node added (doubling, then
bisection) and reports the smallest n that binds every pod that can fit such a node at all.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from pysched.errors import InputError
from pysched.framework.config import SchedulerConfig
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, ScorePlugin
from pysched.framework.registry import Registry
from pysched.framework.runtime import Framework
from pysched.framework.status import Code
from pysched.lazyclass import dataclass
from pysched.model.objects import FieldError, Node, ObjectMeta, Pod, parse_node, parse_pod, validate_pod
from pysched.model.timeutil import parse_time
from pysched.scheduler.cycle import Scheduler, num_feasible_nodes_to_find
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.cluster import Cluster, zone_key
from pysched.snapshot.columns import columns_for
from pysched.snapshot.loader import NOTHING_TO_DO
from pysched.snapshot.nodeinfo import NodeInfo

LIMIT_REACHED = "limit reached"
DEFAULT_MAX_NODES = 1000
NEVER = "Never"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
_UID_ALPHABET_SEED = "pysched-uid"


# ------------------------------------------------------------------------------------------ inputs
@dataclass
class Template:
    """One ``--pod`` template: the Pod object as given and the file it came from."""

    raw: dict
    source: str

    @property
    def name(self) -> str:
        meta = self.raw.get("metadata") or {}
        name = meta.get("name")
        if isinstance(name, str) and name:
            return name
        gen = meta.get("generateName")
        return gen[:-1] if isinstance(gen, str) and gen.endswith("-") else str(gen or "")

    @property
    def namespace(self) -> str:
        ns = (self.raw.get("metadata") or {}).get("namespace")
        return ns if isinstance(ns, str) and ns else "default"


WORKLOAD_TEMPLATE_PATHS = {"Deployment": ("spec", "template"), "ReplicaSet": ("spec", "template"),
                           "ReplicationController": ("spec", "template"), "StatefulSet": ("spec", "template"),
                           "DaemonSet": ("spec", "template"), "Job": ("spec", "template"),
                           "CronJob": ("spec", "jobTemplate", "spec", "template")}


def pod_of_workload(raw: Mapping, source: str) -> dict:
    """The Pod a ``--workload`` file stands for: its pod template (labels, annotations, spec) named after the
    workload, in the workload's namespace; ``InputError`` when the file is not such a workload."""
    kind = raw.get("kind")
    path = WORKLOAD_TEMPLATE_PATHS.get(kind) if isinstance(kind, str) else None
    if path is None:
        raise InputError(f"a --workload file must hold a {', '.join(WORKLOAD_TEMPLATE_PATHS)}, got kind {kind!r}",
                         file=source, field="kind")
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    node: Any = raw
    for i, key in enumerate(path):
        node = node.get(key) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping):
            raise InputError("required: the workload's pod template", file=source, field=".".join(path[:i + 1]))
    tmeta = node.get("metadata") if isinstance(node.get("metadata"), Mapping) else {}
    md: dict[str, Any] = {"name": meta.get("name"), "namespace": meta.get("namespace") or "default"}  # type: ignore[union-attr]
    for k in ("labels", "annotations"):
        if tmeta.get(k) is not None:
            md[k] = tmeta[k]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": node.get("spec")}


def check_template(raw: Mapping, source: str) -> Template:
    """A template must be one valid Pod that is not bound; raises ``InputError`` otherwise."""
    kind = raw.get("kind")
    if kind != "Pod":
        raise InputError(f"a template must be a Pod, got kind {kind!r}", file=source, field="kind")
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        raise InputError("required: metadata with a name or generateName", file=source, field="metadata")
    name, gen = meta.get("name"), meta.get("generateName")
    if not (isinstance(name, str) and name) and not (isinstance(gen, str) and gen):
        raise InputError("required: metadata.name or metadata.generateName", file=source, field="metadata.name")
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        raise InputError("required: the pod's spec", file=source, field="spec")
    if spec.get("nodeName"):
        raise InputError(f"a template must not be bound: spec.nodeName is {spec.get('nodeName')!r}", file=source,
                         field="spec.nodeName")
    t = Template(dict(raw), source)
    probe = _copy_raw(t, "probe", "", "", admitted_spec(spec, priority=0, policy=NEVER))
    try:
        parse_pod(probe)
        validate_pod(probe)
    except FieldError as e:
        raise InputError(e.message, file=source, obj=f"Pod {t.namespace}/{t.name}", field=e.path) from None
    return t


# ------------------------------------------------------------------------------------------ admission
AdmitFn = Callable[[dict, str, Cluster], dict]  # (spec, namespace, cluster) -> admitted spec


def set_defaults_pod(spec: dict) -> dict:
    """``SetDefaults_Pod``: a container limit without a request becomes the request."""
    out = copy.deepcopy(spec)
    for part in ("initContainers", "containers"):
        for c in out.get(part) or []:
            if not isinstance(c, dict):
                continue
            res = c.get("resources")
            if not isinstance(res, dict) or not isinstance(res.get("limits"), dict):
                continue
            reqs = res.get("requests")
            if not isinstance(reqs, dict):
                reqs = {}
            for k, v in res["limits"].items():
                reqs.setdefault(k, v)
            res["requests"] = reqs
    return out


def admitted_spec(spec: Mapping, priority: int, policy: str) -> dict:
    """The spec of a copy after admission's priority step: the computed priority written in, the class
    name dropped (so nothing later overwrites the policy from the class), ``nodeName`` dropped."""
    out = dict(spec)
    out.pop("nodeName", None)
    out.pop("priorityClassName", None)
    out["priority"] = priority
    out["preemptionPolicy"] = policy
    return out


def resolve_priority(spec: Mapping, cluster: Cluster, source: str) -> tuple[int, str]:
    """Priority admission of a created pod: the class's value (and policy), else the globalDefault
    class, else ``spec.priority`` or 0. A class that does not exist is bad input."""
    name = spec.get("priorityClassName")
    policy = spec.get("preemptionPolicy")
    own_policy = policy if isinstance(policy, str) and policy in ("Never", "PreemptLowerPriority") \
        else "PreemptLowerPriority"
    if isinstance(name, str) and name:
        pc = cluster.priority_classes.get(name)
        if pc is None:
            raise InputError(f"no PriorityClass with name {name} was found", file=source,
                             field="spec.priorityClassName")
        return pc.value, pc.preemption_policy or own_policy
    for pc in sorted(cluster.priority_classes.values(), key=lambda c: c.name):
        if pc.global_default:
            return pc.value, pc.preemption_policy or own_policy
    own = spec.get("priority")
    return (own if isinstance(own, int) and not isinstance(own, bool) else 0), own_policy


def default_admit(spec: dict, namespace: str, cluster: Cluster) -> dict:
    """Admission of a created pod as far as this layer knows it (``SetDefaults_Pod``); the controllers
    layer adds LimitRange defaulting and validation when present."""
    del namespace, cluster
    return set_defaults_pod(spec)


def _controllers_admit() -> AdmitFn | None:
    """The controllers layer's admission (LimitRange defaults and validation), when it exists."""
    try:
        from pysched.controllers import admission  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    fn = getattr(admission, "admit_template_spec", None)
    return fn if callable(fn) else None


# ------------------------------------------------------------------------------------------ copies
def object_uid(kind: str, namespace: str, name: str, k: int = 0) -> str:
    """The deterministic uid of an object the simulation creates (workloads contract, *UIDs*)."""
    b = bytearray(hashlib.sha256(f"{_UID_ALPHABET_SEED}/{kind}/{namespace}/{name}/{k}".encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x40  # version 4 and the RFC 4122 variant, as uuid.UUID(bytes=..., version=4) sets them
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def simulation_now(cluster: Cluster) -> str:
    """*now*: one second after the latest creationTimestamp the loaded objects carry (whole seconds)."""
    stamps = [p.meta.creation for p in cluster.pods] + [n.meta.creation for n in cluster.nodes]
    latest = max((t for t in (parse_time(s) for s in stamps) if t is not None), default=None)
    value = int(latest) + 1 if latest is not None else 1
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _default_now(cluster: Cluster) -> str:
    """*now* as the controllers layer computes it (every object's timestamp) when present, else from the
    pods' and nodes' timestamps."""
    try:
        from pysched.controllers.engine import default_now  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return simulation_now(cluster)
    return str(default_now(cluster))


def _copy_raw(t: Template, name: str, uid: str, now: str, spec: dict) -> dict:
    meta = t.raw.get("metadata") or {}
    md: dict[str, Any] = {"name": name, "namespace": t.namespace}
    if uid:
        md["uid"] = uid
    if now:
        md["creationTimestamp"] = now
    for k in ("labels", "annotations", "ownerReferences"):
        if meta.get(k) is not None:
            md[k] = meta[k]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


class CopyMaker:
    """Makes copy i of a template: parsed once, then each copy is a shallow clone with its own identity
    (the spec's parsed parts are shared and never mutated)."""

    def __init__(self, t: Template, cluster: Cluster, now: str, allow_preemption: bool,
                 admit: AdmitFn | None = None) -> None:
        self.template = t
        self.name = t.name
        self.namespace = t.namespace
        self.now = now
        spec = t.raw.get("spec") or {}
        priority, policy = resolve_priority(spec, cluster, t.source)
        admit = admit or _controllers_admit() or default_admit
        try:
            admitted = admit(dict(spec), t.namespace, cluster)
        except InputError as e:
            raise InputError(f"template rejected by admission: {e.detail}", file=t.source,
                             obj=f"Pod {t.namespace}/{t.name}") from None
        self.spec = admitted_spec(admitted, priority, policy if allow_preemption else NEVER)
        proto_raw = _copy_raw(t, self.copy_name(0), "", now, self.spec)
        try:
            self.proto = parse_pod(proto_raw, 0)
        except FieldError as e:
            raise InputError(e.message, file=t.source, obj=f"Pod {t.namespace}/{t.name}", field=e.path) from None
        # a copy is the prototype's fields (the spec's parsed parts shared, never mutated) with its own
        # identity: the field values in declaration order, name/uid/raw/index/key replaced per copy
        proto = self.proto
        proto.node_name = proto.nominated_node_name = ""
        self._meta_values = [getattr(proto.meta, f.name) for f in dataclasses.fields(ObjectMeta)]
        names = [f.name for f in dataclasses.fields(Pod)]
        self._pod_values = [getattr(proto, n) for n in names]
        self._index_at = names.index("index")
        assert names[:2] == ["meta", "raw"] and names[-1] == "key"
        assert [f.name for f in dataclasses.fields(ObjectMeta)][:3] == ["name", "namespace", "uid"]

    @property
    def key(self) -> str:
        """Names the template in the fast path's caches (one per template)."""
        return f"{self.namespace}/{self.name}@{id(self)}"

    def copy_name(self, i: int) -> str:
        return f"{self.name}-copy-{i}"

    def make(self, i: int, index: int = 0) -> Pod:
        name = self.copy_name(i)
        uid = object_uid("Pod", self.namespace, name)
        meta = self._meta_values
        meta[0], meta[2] = name, uid
        pod = self._pod_values
        pod[0] = ObjectMeta(*meta)
        pod[1] = _copy_raw(self.template, name, uid, self.now, self.spec)
        pod[-1] = f"{self.namespace}/{name}"
        pod[self._index_at] = index
        return Pod(*pod)


# ------------------------------------------------------------------------------------------ results
@dataclass
class TemplateAnswer:
    name: str
    namespace: str
    count: int = 0
    stop_reason: str = ""
    per_node: Counter = field(default_factory=Counter)
    per_zone: Counter = field(default_factory=Counter)
    victims: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)  # the stop reason's node counts, by reason

    @property
    def limiting(self) -> str:
        """What ran out first: the reason that rejected the most nodes for the copy that did not fit."""
        if not self.reasons:
            return ""
        return max(self.reasons.items(), key=lambda kv: (kv[1], kv[0]))[0]

    def to_dict(self, allow_preemption: bool = False) -> dict:
        d: dict[str, Any] = {"name": self.name, "namespace": self.namespace, "count": self.count,
                             "stop_reason": self.stop_reason, "per_node": dict(sorted(self.per_node.items())),
                             "per_zone": dict(sorted(self.per_zone.items())), "limiting": self.limiting}
        if allow_preemption:
            d["victims"] = list(self.victims)
        return d


@dataclass
class NodeTemplateAnswer:
    name: str
    max_nodes: int
    replicas: int
    needed: int | None = None
    probed: list[int] = field(default_factory=list)
    unfittable: list[dict] = field(default_factory=list)
    placement: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)  # pods still pending at n = needed (unfittable ones)
    utilisation: dict[str, dict[str, float]] = field(default_factory=dict)  # resource -> {all, new}
    pruned: dict[int, str] = field(default_factory=dict)  # n -> the resource that cannot suffice (no simulation)

    def to_dict(self) -> dict:
        return {"name": self.name, "needed": self.needed, "max_nodes": self.max_nodes, "replicas": self.replicas,
                "probed": list(self.probed), "unfittable": list(self.unfittable),
                "placement": dict(sorted(self.placement.items())), "pending": list(self.pending),
                "pruned": {str(n): r for n, r in sorted(self.pruned.items())},
                "utilisation": self.utilisation}


@dataclass
class CapacityAnswer:
    mode: str
    templates: list[TemplateAnswer]
    node_template: NodeTemplateAnswer | None
    allow_preemption: bool
    max_copies: int | None
    starting: SimulationResult | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"mode": self.mode,
                             "templates": [t.to_dict(self.allow_preemption) for t in self.templates]}
        if self.max_copies is not None:
            d["max"] = self.max_copies
        if self.node_template is not None:
            d["node_template"] = self.node_template.to_dict()
        if self.starting is not None:
            d["starting_cluster"] = {"nodes": self.starting.nodes, "bound": len(self.starting.bindings),
                                     "left_out": list(self.starting.pending)}
        d["warnings"] = list(self.warnings)
        return d


@dataclass
class CapacityOptions:
    mode: str = "independent"  # independent | together
    max_copies: int | None = None
    allow_preemption: bool = False
    tie_break: str = "name"
    seed: int = 0
    batched: bool = True
    node_template: dict | None = None  # the Node object
    node_template_source: str = ""
    replicas: int = 0
    max_nodes: int = DEFAULT_MAX_NODES
    now: str | None = None
    edits: list[tuple[str, str]] = field(default_factory=list)  # (flag, value) in command-line order
    run_cronjobs: bool = False
    fast_copies: bool = True  # the copies' fast path (same decisions; False: every copy by the plain cycle)


_REASON = re.compile(r"(\d+) (.+)")


def message_reasons(message: str) -> dict[str, int]:
    """The node counts of a FailedScheduling message (``0/6 nodes are available: 6 Insufficient memory.``)."""
    _, sep, rest = message.partition(" nodes are available: ")
    if not sep:
        return {}
    body = rest.split(". ", 1)[0].rstrip(".")
    out: dict[str, int] = {}
    for part in body.split(", "):
        m = _REASON.fullmatch(part.strip())
        if m:
            out[m.group(2)] = int(m.group(1))
    return out


# ------------------------------------------------------------------------------------------ the engine
def starting_cluster(cluster: Cluster, config: SchedulerConfig, registry: Registry,
                     options: SimulationOptions) -> tuple[Cluster, SimulationResult]:
    """The snapshot simulated as ``simulate`` does; the cluster it leaves: bound pods on their nodes, victims
    gone, pods still pending left out (no nominations), storage as the simulation bound it."""
    work = _isolated(cluster)
    sim = Simulation(work, config, registry, options)
    result = sim.run()
    state = sim.state
    # pods bound during the simulation that were not input pods cannot exist here; keep input order. The
    # simulation bound pods in its state only: a pod that now has a node (or loses its nomination) is a copy.
    bound = []
    for p in work.pods:
        node = state.pod_node.get(p.key)
        if node is None:
            continue
        if p.node_name != node or p.nominated_node_name:
            p = copy.copy(p)
            p.node_name = node
            p.nominated_node_name = ""
        bound.append(p)
    start = dataclasses.replace(work, pods=bound, pvcs=list(state.storage.claims.values()),
                                pvs=list(state.storage.volumes.values()),
                                warnings=list(work.warnings), rejected_pods=list(work.rejected_pods))
    return start, result


def _isolated(cluster: Cluster) -> Cluster:
    """A cluster a simulation may run on without touching ``cluster``: a simulation changes only the pending
    pods it binds or nominates (bound pods it deletes stay as they are; claims and volumes it copies)."""
    return dataclasses.replace(cluster, pods=[p if p.node_name else copy.copy(p) for p in cluster.pods])


class _Counter:
    """Copies of one template counted against one simulation's live state."""

    def __init__(self, maker: CopyMaker, answer: TemplateAnswer) -> None:
        self.maker = maker
        self.answer = answer
        self.i = 0
        self.done = False


def _zone_of(node: Node) -> str:
    labels = node.labels
    if ZONE_LABEL in labels:
        return labels[ZONE_LABEL]
    return labels.get("failure-domain.beta.kubernetes.io/zone", "") or "(none)"


def _try_copy(sim: Simulation, c: _Counter, allow_preemption: bool, max_copies: int | None, index: int) -> None:
    """Schedule the next copy of ``c``; mark it done when it does not fit or the limit is reached."""
    if max_copies is not None and c.i >= max_copies:
        c.answer.stop_reason = LIMIT_REACHED
        c.done = True
        return
    c.i += 1
    pod = c.maker.make(c.i, index)
    fwk = sim.frameworks.get(pod.scheduler_name)
    if fwk is None:
        raise InputError(f"the template's schedulerName {pod.scheduler_name!r} has no profile in the scheduler "
                         f"configuration", file=c.maker.template.source, field="spec.schedulerName")
    scheduler = sim.scheduler
    if isinstance(scheduler, CopyScheduler) and fwk.run_pre_enqueue(pod) is None:
        tr = scheduler.schedule_copy(fwk, pod, c.maker.key)
    else:
        tr = sim.cycle(pod, 1)
    if tr.outcome is Outcome.WAITING:  # a Permit plugin holds it: the pass ends now, as for the queue
        sim.scheduler.end_pass(1)
    node = tr.node if tr.outcome is Outcome.SCHEDULED else None
    if node is None and tr.outcome is Outcome.NOMINATED and allow_preemption and tr.nominated_node:
        c.answer.victims.extend(tr.victims or [])
        # the nominated copy is bound to its node before the next copy (its own next cycle would take it)
        again = sim.cycle(pod, 2)
        if again.outcome is Outcome.SCHEDULED:
            node = again.node
        else:
            sim.state.bind(pod, tr.nominated_node)
            node = tr.nominated_node
    if node is None:
        c.answer.stop_reason = tr.message or tr.error or tr.outcome or ""
        c.answer.reasons = message_reasons(c.answer.stop_reason)
        c.done = True
        return
    c.answer.count += 1
    c.answer.per_node[node] += 1
    ni = sim.state.get(node)
    if ni is not None:
        c.answer.per_zone[_zone_of(ni.node)] += 1


def count_copies(start: Cluster, makers: list[CopyMaker], config: SchedulerConfig, registry: Registry,
                 options: CapacityOptions) -> list[TemplateAnswer]:
    """Count the copies of every template, ``independent`` (each alone against ``start``) or
    ``together`` (round-robin on one cluster, a template that stops is dropped)."""
    sim_opts = SimulationOptions(tie_break=options.tie_break, seed=options.seed, batched=options.batched)
    answers = [TemplateAnswer(m.name, m.namespace) for m in makers]
    index = len(start.pods) + 1
    if options.mode == "together":
        sim = _copy_simulation(start, config, registry, sim_opts, options.fast_copies)
        counters = [_Counter(m, a) for m, a in zip(makers, answers, strict=True)]
        while True:
            active = [c for c in counters if not c.done]
            if not active:
                break
            for c in active:
                _try_copy(sim, c, options.allow_preemption, options.max_copies, index)
                index += 1
        return answers
    for m, a in zip(makers, answers, strict=True):
        # a fresh state per template: the previous template's copies were never there
        sim = _copy_simulation(_fresh(start), config, registry, sim_opts, options.fast_copies)
        c = _Counter(m, a)
        while not c.done:
            _try_copy(sim, c, options.allow_preemption, options.max_copies, index)
            index += 1
    return answers


def _copy_simulation(start: Cluster, config: SchedulerConfig, registry: Registry, sim_opts: SimulationOptions,
                     fast: bool) -> Simulation:
    sim = Simulation(start, config, registry, sim_opts)
    sim.scheduler = CopyScheduler(sim.scheduler, fast=fast and sim_opts.batched)
    return sim


def _fresh(start: Cluster) -> Cluster:
    """The starting cluster again; victims of ``--allow-preemption`` and storage bindings are per run."""
    return dataclasses.replace(start, pods=list(start.pods), pvcs=[c.copy() for c in start.pvcs],
                               pvs=[v.copy() for v in start.pvs])


def run_capacity(cluster: Cluster, templates: list[Template], config: SchedulerConfig, registry: Registry,
                 options: CapacityOptions) -> CapacityAnswer:
    if options.mode not in ("independent", "together"):
        raise InputError(f"--mode must be 'independent' or 'together', got {options.mode!r}")
    if options.max_copies is not None and options.max_copies < 0:
        raise InputError(f"--max must be 0 or more, got {options.max_copies}")
    now = options.now or _default_now(cluster)
    sim_opts = SimulationOptions(tie_break=options.tie_break, seed=options.seed, batched=options.batched)
    if options.node_template is not None:
        nt = node_template_search(cluster, templates, config, registry, options, now)
        return CapacityAnswer(options.mode, [], nt, options.allow_preemption, options.max_copies,
                              warnings=list(cluster.warnings))
    prepared = prepare_cluster(cluster, options.edits, now, options.run_cronjobs)
    start, result = starting_cluster(prepared, config, registry, sim_opts)
    makers = [CopyMaker(t, start, now, options.allow_preemption) for t in templates]
    answers = count_copies(start, makers, config, registry, options)
    warnings = [w for w in cluster.warnings if not w.startswith(NOTHING_TO_DO)]
    if result.pending:
        warnings.append(f"{len(result.pending)} pending pod(s) of the snapshot did not fit; they are left out "
                        f"of the starting cluster")
    return CapacityAnswer(options.mode, answers, None, options.allow_preemption, options.max_copies, result,
                          warnings)


# ------------------------------------------------------------------------------------------ node templates
def check_node_template(raw: Mapping, source: str) -> Node:
    if raw.get("kind") != "Node":
        raise InputError(f"a node template must be a Node, got kind {raw.get('kind')!r}", file=source, field="kind")
    try:
        return parse_node(raw)
    except FieldError as e:
        raise InputError(e.message, file=source, obj="Node", field=e.path) from None


def node_copy_names(template: Node, n: int) -> list[str]:
    return [f"{template.name}-{j}" for j in range(1, n + 1)]


def add_nodes(cluster: Cluster, template_raw: dict, n: int, now: str) -> Cluster:
    """The cluster with ``n`` copies of the Node added after its nodes: ``<name>-1`` ... ``<name>-n``
    (hostname label following the name, a fresh uid, creationTimestamp *now*)."""
    base = parse_node(template_raw)
    existing = {x.name for x in cluster.nodes}
    nodes = list(cluster.nodes)
    for name in node_copy_names(base, n):
        if name in existing:
            raise InputError(f"node template copy {name!r} already exists in the snapshot", field="metadata.name")
        raw = copy.deepcopy(template_raw)
        md = raw.setdefault("metadata", {})
        md["name"] = name
        md["uid"] = object_uid("Node", "", name)
        md["creationTimestamp"] = now
        md["labels"] = {**(md.get("labels") or {}), HOSTNAME_LABEL: name}
        nodes.append(parse_node(raw))
    return dataclasses.replace(cluster, nodes=nodes)


def _with_copies(cluster: Cluster, makers: list[CopyMaker], replicas: int) -> tuple[Cluster, list[str]]:
    """The cluster with ``replicas`` copies of each template pending after the snapshot's pods (copies
    have creationTimestamp *now*, so they queue behind the snapshot's pods of equal priority)."""
    pods = list(cluster.pods)
    keys = []
    index = max((p.index for p in pods), default=0) + 1
    for m in makers:
        for i in range(1, replicas + 1):
            p = m.make(i, index)
            index += 1
            pods.append(p)
            keys.append(p.key)
    return dataclasses.replace(cluster, pods=pods), keys


def _fit_verdict(sim: Simulation, pod: Pod, node_name: str) -> dict | None:
    """None when ``pod`` passes PreFilter and Filter on the empty node copy; else its plugin and reasons."""
    fwk = sim.frameworks.get(pod.scheduler_name)
    if fwk is None:
        return {"plugin": "", "reasons": [f"schedulerName {pod.scheduler_name!r} has no profile"]}
    state = CycleState()
    nodes = sim.state.node_infos
    pre_result, st, returned = fwk.run_pre_filter(state, pod, nodes)
    if st is not None and st.code != Code.Success:
        return {"plugin": st.plugin or "", "reasons": list(st.reasons) or [st.message()]}
    if pre_result is not None and not pre_result.all_nodes() and node_name not in (pre_result.node_names or set()):
        plugins = " ".join(sorted(returned))
        return {"plugin": plugins, "reasons": [f"node(s) didn't satisfy plugin(s) [{plugins}]"]}
    ni = sim.state.get(node_name)
    assert ni is not None
    fst = fwk.run_filter(state, pod, ni)
    if fst is None or fst.code == Code.Success:
        return None
    return {"plugin": fst.plugin or "", "reasons": list(fst.reasons) or [fst.message()]}


def _workload_key(pod: Pod, cluster: Cluster) -> str | None:
    """``Kind/namespace/name`` of the pod's controller owner (as far as the snapshot holds it)."""
    ref = pod.meta.controller_ref()
    if ref is None:
        return None
    return f"{ref.get('kind')}/{pod.namespace}/{ref.get('name')}"


def _controllers() -> Any:
    """The controllers layer (workload expansion, edits), when this installation has it."""
    try:
        import pysched.controllers as controllers  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return controllers if hasattr(controllers, "expand_cluster") else None


def prepare_cluster(cluster: Cluster, edits: list[tuple[str, str]], now: str, run_cronjobs: bool = False) -> Cluster:
    """The cluster ``simulate`` would run: the edits applied in order, then the workloads expanded."""
    c = _controllers()
    if c is None:
        if edits:
            raise InputError("what-if edits need the controllers layer, which this installation does not have")
        return cluster
    return c.expand_cluster(cluster, c.parse_edit_flags(list(edits)),
                            c.ExpansionOptions(now=now, run_cronjobs=run_cronjobs))


def _daemon_target(pod: Pod) -> str | None:
    """The node a DaemonSet pod is pinned to (its required ``matchFields metadata.name`` term)."""
    spec = pod.raw.get("spec") if isinstance(pod.raw, Mapping) else None
    try:
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][  # type: ignore[index]
            "nodeSelectorTerms"]
        for term in terms:
            for f in term.get("matchFields") or []:
                if f.get("key") == "metadata.name" and f.get("operator") == "In" and f.get("values"):
                    return str(f["values"][0])
    except (KeyError, TypeError, AttributeError):
        return None
    return None


def _pod_workload(cluster: Cluster, pod: Pod) -> str | None:
    owners = getattr(cluster, "pod_workloads", None) or {}
    return owners.get(pod.key) or _workload_key(pod, cluster)


def _identity(cluster: Cluster, pod: Pod, copy_prefix: str) -> tuple:
    """What names a pod of the workload across node counts: a DaemonSet's pod by its DaemonSet and node (a
    node copy ``<name>-j`` standing for every copy: they share the verdict of ``<name>-1``), any other pod by
    its key."""
    wl = _pod_workload(cluster, pod)
    if wl and wl.startswith("DaemonSet/"):
        target = _daemon_target(pod)
        if target is not None:
            if target.startswith(copy_prefix) and target[len(copy_prefix):].isdigit():
                target = copy_prefix + "*"
            return ("daemon", wl, target)
    return ("pod", pod.key)


def node_template_search(cluster: Cluster, templates: list[Template], config: SchedulerConfig, registry: Registry,
                         options: CapacityOptions, now: str) -> NodeTemplateAnswer:
    raw = options.node_template or {}
    base = check_node_template(raw, options.node_template_source)
    if options.max_nodes < 0:
        raise InputError(f"--max-nodes must be 0 or more, got {options.max_nodes}")
    if options.replicas < 0:
        raise InputError(f"--replicas must be 0 or more, got {options.replicas}")
    answer = NodeTemplateAnswer(base.name, options.max_nodes, options.replicas)
    sim_opts = SimulationOptions(tie_break=options.tie_break, seed=options.seed, batched=options.batched)
    makers = [CopyMaker(t, cluster, now, options.allow_preemption) for t in templates]
    prefix = f"{base.name}-"

    def workload(n: int) -> Cluster:
        """The snapshot with n copies of the node (DaemonSets cover them) and the templates' copies."""
        with_nodes = add_nodes(cluster, raw, n, now) if n else cluster
        prepared = prepare_cluster(with_nodes, options.edits, now, options.run_cronjobs)
        return _with_copies(prepared, makers, options.replicas)[0]

    # unfittable: with one copy of the node, each pending pod alone against the cluster without the others
    one_added = workload(1)
    first = node_copy_names(base, 1)[0]
    pending_one = [p for p in one_added.pods if not p.node_name]
    probe = Simulation(dataclasses.replace(one_added, pods=[p for p in one_added.pods if p.node_name]), config,
                       registry, sim_opts)
    unfit: set[tuple] = set()
    for p in pending_one:
        verdict = _fit_verdict(probe, p, first)
        if verdict is None:
            continue
        unfit.add(_identity(one_added, p, prefix))
        answer.unfittable.append({"pod": p.key, "workload": _pod_workload(one_added, p), **verdict})
    answer.unfittable.sort(key=lambda u: u["pod"])

    results: dict[int, tuple[SimulationResult, list[str]]] = {}
    # the bound below reads requests as NodeResourcesFit enforces them: only when every profile filters by it
    can_prune = all("NodeResourcesFit" in {r.name for r in prof.enabled("filter")} for prof in config.profiles)

    def fits(n: int) -> bool:
        answer.probed.append(n)
        work = _isolated(one_added if n == 1 else workload(n))
        pending = [p.key for p in work.pods if not p.node_name]
        must = {p.key for p in work.pods if not p.node_name and _identity(work, p, prefix) not in unfit}
        short = short_of_resources(work, must) if can_prune else ""
        if short:
            answer.pruned[n] = short
            return False
        res = Simulation(work, config, registry, sim_opts).run()
        results[n] = (res, pending)
        return all(k in res.bindings for k in must)

    needed: int | None = None
    if fits(0):
        needed = 0
    else:
        lo, hi = 0, None
        n = 1
        while n <= options.max_nodes:
            if fits(n):
                hi = n
                break
            lo = n
            n *= 2
        if hi is None and lo < options.max_nodes and fits(options.max_nodes):
            hi = options.max_nodes
        if hi is not None:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if fits(mid):
                    hi = mid
                else:
                    lo = mid
            needed = hi
    answer.needed = needed
    if needed is not None:
        res, pending_keys = results[needed]
        keys = set(pending_keys)
        answer.placement = {k: v for k, v in res.bindings.items() if k in keys}
        answer.pending = sorted(k for k in pending_keys if k not in res.bindings)
        answer.utilisation = _utilisation(res, set(node_copy_names(base, needed)))
    return answer


def short_of_resources(cluster: Cluster, must: set[str]) -> str:
    """A resource the pods of ``must`` together request more of than the whole cluster could ever offer them
    ('' when none): then no simulation can bind them all, so fits(n) is false without one. Sound with
    preemption: the requests of every running pod that one of them could preempt (lower priority than a
    pod of ``must`` that may preempt) count as free."""
    pending = [p for p in cluster.pods if not p.node_name and p.key in must]
    if not pending:
        return ""
    preemptor = max((p.priority for p in pending if p.preemption_policy != NEVER), default=None)
    supply: dict[str, int] = {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": 0}
    for node in cluster.nodes:
        alloc = node.allocatable
        supply["cpu"] += alloc.get("cpu", 0)
        supply["memory"] += alloc.get("memory", 0) // 1000
        supply["ephemeral-storage"] += alloc.get("ephemeral-storage", 0) // 1000
        supply["pods"] += alloc.get("pods", 0) // 1000
    names = {n.name for n in cluster.nodes}
    for p in cluster.pods:
        if not p.node_name or p.node_name not in names or (preemptor is not None and p.priority < preemptor):
            continue
        r = p.requests
        supply["cpu"] -= r.milli_cpu
        supply["memory"] -= r.memory
        supply["ephemeral-storage"] -= r.ephemeral_storage
        supply["pods"] -= 1
    demand = {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": len(pending)}
    for p in pending:
        r = p.requests
        demand["cpu"] += r.milli_cpu
        demand["memory"] += r.memory
        demand["ephemeral-storage"] += r.ephemeral_storage
    for name in ("cpu", "memory", "ephemeral-storage", "pods"):
        if demand[name] > supply[name]:
            return name
    return ""


def _utilisation(res: SimulationResult, new_nodes: set[str]) -> dict[str, dict[str, float]]:
    """Requested / allocatable of cpu and memory, over all nodes and over the added ones."""
    out: dict[str, dict[str, float]] = {}
    for resource in ("cpu", "memory"):
        sums = {"all": [0, 0], "added": [0, 0]}
        for ni in res.state.node_infos:
            used = ni.requested.milli_cpu if resource == "cpu" else ni.requested.memory
            alloc = ni.allocatable.milli_cpu if resource == "cpu" else ni.allocatable.memory
            for part in ("all", "added") if ni.name in new_nodes else ("all",):
                sums[part][0] += used
                sums[part][1] += alloc
        out[resource] = {k: round(u / a, 4) if a else 0.0 for k, (u, a) in sums.items()}
    return out


__all__ = ["CapacityAnswer", "CapacityOptions", "NodeTemplateAnswer", "Template", "TemplateAnswer",
           "check_template", "run_capacity", "zone_key"]


# ------------------------------------------------------------------------------------------ the copies' fast path
# Copies of one template are the same pod but for their names. Their cycles differ only through what the
# previous copies changed: the node each was bound to (``ClusterState.change_log``). When every plugin that
# takes part reads, besides the pod, only the node it judges (Filter) or scores (Score), and when what
# PreFilter and PreScore write depends on the pod alone, the cycle of copy i+1 is the cycle of copy i with
# the changed nodes judged and scored again. The fast path keeps, per template:
#   - the CycleState of PreFilter and PreScore, re-run only when something other than this template's own
#     copies changed the cluster (another template's copy, a victim, a nomination);
#   - every node's Filter verdict (all rows: the batched verdicts when every plugin has one, else each node
#     through the framework's run_filter), then only the changed nodes again, through run_filter;
#   - every examined node's raw score per Score plugin (``batch_score``, else ``score_nodes``), weighted
#     and summed for the plugins without NormalizeScore; the ones with it are normalized per cycle over
#     the cycle's own feasible window (``batch_normalize`` / the framework's normalization).
# The window (rotating start index, adaptive percentageOfNodesToScore, the next feasible node ending it),
# the weights, the tie-break and Reserve..Bind are the cycle's own; a copy that fits nowhere, and any cycle
# that errs, is run again by the plain cycle (which reports it). tests/test_capacity.py checks both paths
# give the same answers.
NODE_LOCAL_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                "NodeResourcesFit"})
NODE_LOCAL_SCORES = frozenset({"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality",
                               "TaintToleration", "NodeAffinity"})
# PreFilter / PreScore plugins whose state is a function of the pod alone (the same for every copy)
POD_ONLY_PRE_FILTER = frozenset({"NodeAffinity", "NodePorts", "NodeResourcesFit"})
POD_ONLY_PRE_SCORE = frozenset({"TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                "NodeResourcesBalancedAllocation"})
# PreFilter / PreScore plugins whose Skip no copy can undo for a template ``_copies_invisible`` accepts: they
# skip on the pod's own fields (ports, node affinity, volumes, claims, best-effort requests, its spread
# constraints and the default ones, which come from Services and workloads, not pods), or on pods with affinity terms or volumes in use,
# which copies of such a template never add
STABLE_SKIPS = frozenset({"NodeAffinity", "NodePorts", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                          "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
                          "NodeResourcesBalancedAllocation"})
# Reserve .. Bind plugins that, for such a template, keep nothing across cycles (no volumes, no claims)
STATELESS_BINDING = frozenset({"VolumeBinding", "DynamicResources", "DefaultBinder"})
FEW_ROWS = 16  # up to this many rows are scored node by node (``score``), more as arrays (batch_score)


def _copies_invisible(pod: Pod) -> bool:
    """Copies of ``pod`` carry no pod (anti-)affinity terms, claims or persistent volumes: the plugins that
    look at other pods (InterPodAffinity's existing terms, volume use, DRA) cannot see them."""
    if pod.affinity.has_affinity or pod.resource_claims:
        return False
    return not any(isinstance(v, Mapping) and (v.get("persistentVolumeClaim") is not None
                                               or v.get("ephemeral") is not None) for v in pod.volumes)


class _TemplateCache:
    """Per template: the shared CycleState, every node's Filter verdict and its raw scores (see above)."""

    def __init__(self, n: int) -> None:
        self.disabled = False  # the template's cycles are not node-local: every copy by the plain cycle
        self.state: CycleState | None = None
        self.prescored = False
        self.clean_pos = -1  # len(change_log) right after this template's last fast bind
        self.filled = False
        self.log_pos = 0  # change_log read up to here
        self.ok = np.zeros(n, dtype=bool)
        self.rows: np.ndarray | None = None  # the feasible rows (ok's), until a verdict flips
        self.to_find = 0  # numFeasibleNodesToFind of the profile (0: not yet known)
        self.active: tuple[str, ...] = ()
        self.plain: list[tuple[ScorePlugin, int]] = []  # (plugin, weight) without NormalizeScore
        self.normalized: list[tuple[ScorePlugin, int]] = []  # (plugin, weight) with NormalizeScore
        self.scored = False  # raw scores known for every feasible row but ``pending``
        self.pending: set[int] = set()  # feasible rows whose raw scores are out of date
        self.raw: dict[str, np.ndarray] = {}
        self.base = np.zeros(n, dtype=np.int64)  # weighted sum of the raw scores of ``plain``
        # base, then the name order (a smaller name ranks higher): the argmax over a window is the host of a
        # window whose normalized scores are equal on every node
        self.key = np.zeros(n, dtype=np.int64)
        self.ref: dict[str, int] = {}  # plugin with NormalizeScore -> one feasible row's raw score
        self.varying: dict[str, set[int]] = {}  # plugin with NormalizeScore -> feasible rows scoring other than ref


class CopyScheduler(Scheduler):
    """The scheduler for copies of templates: the full cycle, with the fast path above when it applies."""

    def __init__(self, base: Scheduler, fast: bool = True) -> None:
        super().__init__(base.state, base.options, extenders=base.extenders, waiting=base.waiting)
        self.next_start_node_index = base.next_start_node_index
        self.fast = fast
        self.caches: dict[str, _TemplateCache] = {}
        self.index_of = {ni.name: i for i, ni in enumerate(self.state.node_infos)}
        infos = self.state.node_infos
        n = len(infos)
        self.infos_arr = np.empty(n, dtype=object)
        self.names_arr = np.empty(n, dtype=object)
        for i, ni in enumerate(infos):
            self.infos_arr[i] = ni
            self.names_arr[i] = ni.name
        rank = np.empty(n, dtype=np.int64)
        rank[np.argsort(self.names_arr, kind="stable")] = np.arange(n, dtype=np.int64)
        self.name_bonus = n - rank  # larger for smaller names
        self.name_bonus_list: list[int] = self.name_bonus.tolist()
        self.fast_cycles = 0
        self._binding_ok: dict[str, bool] = {}  # profile -> only STATELESS_BINDING plugins bind

    def schedule_copy(self, fwk: Framework, pod: Pod, key: str) -> CycleTrace:
        self.settled = []
        tr = self._copy_cycle(fwk, pod, key)
        if len(self.waiting):
            self.settle_waiting(pod.key)
        return tr

    def _copy_cycle(self, fwk: Framework, pod: Pod, key: str) -> CycleTrace:
        if self.fast and not self.extenders and fwk.filter and not self.state.nominated \
                and not self.state.nominated_node_name(pod) and self.state.node_infos:
            tr = self._fast_cycle(fwk, pod, key)
            if tr is not None:
                self.fast_cycles += 1
                return tr
        return self._schedule_one(fwk, pod, 1, False)

    # ------------------------------------------------------------------ what the copies share
    def _stateless_binding(self, fwk: Framework) -> bool:
        ok = self._binding_ok.get(fwk.profile_name)
        if ok is None:
            names = [p.name for point in (fwk.reserve, fwk.pre_bind, fwk.bind) for p in point]
            ok = self._binding_ok[fwk.profile_name] = (not fwk.permit and not fwk.post_bind
                                                       and all(n in STATELESS_BINDING for n in names))
        return ok

    def _pre_filter(self, fwk: Framework, pod: Pod, cache: _TemplateCache) -> CycleState | None:
        """A fresh PreFilter of the copy; None when its outcome is not one every copy shares (then the
        template is left to the plain cycle for good) or rejects the pod (the plain cycle reports it)."""
        state = CycleState()
        pre_result, st, _returned = fwk.run_pre_filter(state, pod, self.state.node_infos)
        if st is not None and st.code != Code.Success:
            return None
        skip = state.skip_filter_plugins
        if (pre_result is not None and not pre_result.all_nodes()) or not _copies_invisible(pod) \
                or not self._stateless_binding(fwk) \
                or any(p.name not in (STABLE_SKIPS if p.name in skip else POD_ONLY_PRE_FILTER) for p in fwk.pre_filter) \
                or any(p.name not in NODE_LOCAL_FILTERS for p in fwk.filter if p.name not in skip):
            cache.disabled = True
            return None
        return state

    def _pre_score(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo],
                   cache: _TemplateCache) -> bool:
        """PreScore on the first window; False when its outcome is not one every copy shares."""
        st = fwk.run_pre_score(state, pod, feasible)
        if st is not None:
            return False
        skip = state.skip_score_plugins
        if any(p.name not in (STABLE_SKIPS if p.name in skip else POD_ONLY_PRE_SCORE) for p in fwk.pre_score):
            cache.disabled = True
            return False
        active = [p for p in fwk.score if p.name not in skip]
        if any(p.name not in NODE_LOCAL_SCORES for p in active):
            cache.disabled = True
            return False
        names = tuple(p.name for p in active)
        if names != cache.active or not (cache.plain or cache.normalized):
            cache.active = names
            weights = fwk.score_weights
            cache.plain = [(p, weights.get(p.name, 1)) for p in active if not p.HAS_NORMALIZE]
            cache.normalized = [(p, weights.get(p.name, 1)) for p in active if p.HAS_NORMALIZE]
            cache.raw = {p.name: np.zeros(len(cache.ok), dtype=np.int64) for p in active if p.HAS_NORMALIZE}
            cache.scored = False
        cache.prescored = True
        return True

    # ------------------------------------------------------------------ Filter verdicts per node
    def _fill(self, fwk: Framework, state: CycleState, pod: Pod, cache: _TemplateCache) -> bool:
        """Every node's verdict: the plugins' batched verdicts when each has one, else node by node."""
        cols = columns_for(self.state)
        mask: np.ndarray | None = None
        for p in fwk.filter:
            if p.name in state.skip_filter_plugins:
                continue
            fn = getattr(p, "batch_filter", None)
            try:
                v = fn(state, pod, cols) if fn is not None else None
            except Exception:
                v = None
            if v is None:
                mask = None
                break
            mask = v.ok.copy() if mask is None else mask & v.ok
        cache.scored = False
        cache.rows = None
        if mask is None:
            return self._judge(fwk, state, pod, cache, range(len(cache.ok)))
        cache.ok[:] = mask
        return True

    def _judge(self, fwk: Framework, state: CycleState, pod: Pod, cache: _TemplateCache, rows: Iterable[int]) -> bool:
        """The verdict of ``rows`` through the framework's run_filter; False on an error (the plain cycle
        reports it). Their raw scores are out of date from now on."""
        nodes = self.state.node_infos
        ok = cache.ok
        pending = cache.pending
        varying = cache.varying.values()
        for i in rows:
            st = fwk.run_filter(state, pod, nodes[i])
            if st is not None and st.code == Code.Error:
                cache.filled = False
                return False
            fits = st is None or st.code == Code.Success
            if ok[i] != fits:
                ok[i] = fits
                cache.rows = None
            for rows_of in varying:
                rows_of.discard(i)
            if fits:
                pending.add(i)
            else:
                pending.discard(i)
        return True

    @staticmethod
    def _feasible(cache: _TemplateCache) -> np.ndarray:
        rows = cache.rows
        if rows is None:
            rows = cache.rows = np.flatnonzero(cache.ok)
        return rows

    # ------------------------------------------------------------------ the cycle
    def _fast_cycle(self, fwk: Framework, pod: Pod, key: str) -> CycleTrace | None:
        """None when the fast path does not apply to this cycle (nothing was changed then)."""
        cache = self.caches.get(key)
        if cache is None:
            cache = self.caches[key] = _TemplateCache(len(self.state.node_infos))
        if cache.disabled:
            return None
        log = self.state.change_log
        state = cache.state
        if state is None or len(log) != cache.clean_pos:
            state = self._pre_filter(fwk, pod, cache)
            cache.state = state
            cache.prescored = False
            if state is None:
                return None
        if not cache.filled:
            cache.log_pos = len(log)
            if not self._fill(fwk, state, pod, cache):
                return None
            cache.filled = True
        elif cache.log_pos < len(log):
            index_of = self.index_of
            changed = {index_of[name] for name in log[cache.log_pos:] if name in index_of}
            cache.log_pos = len(log)
            if not self._judge(fwk, state, pod, cache, sorted(changed)):
                return None
        n = len(cache.ok)
        to_find = cache.to_find
        if not to_find:
            percentage = fwk.percentage_of_nodes_to_score()
            if percentage is None:
                percentage = self.options.global_percentage
            to_find = num_feasible_nodes_to_find(percentage, n)
            if not fwk.has_scoring():
                to_find = 1
            if self.options.evaluate_all_nodes:
                to_find = n
            cache.to_find = to_find
        start = self.next_start_node_index
        # the nodes the cycle's sequential filter would visit from the rotating start, the feasible ones
        # kept; as the cycle, it stops on the next feasible node after them, which the next cycle starts on
        feasible_rows = self._feasible(cache)
        if not len(feasible_rows):
            return None  # fits nowhere: the plain cycle says why (and runs PostFilter)
        split = int(feasible_rows.searchsorted(start))
        head = feasible_rows[split:split + to_find + 1]
        if len(head) <= to_find and split:
            head = np.concatenate((head, feasible_rows[:min(split, to_find + 1 - len(head))]))
        if len(head) > to_find:
            processed = (int(head[to_find]) - start) % n
            window = head[:to_find]
        else:
            processed = n
            window = head
        if len(window) == 1:
            host = self.names_arr[window[0]]
        else:
            if not cache.prescored \
                    and not self._pre_score(fwk, state, pod, self.infos_arr[window].tolist(), cache):
                cache.state = None
                return None
            chosen = self._fast_score(fwk, state, pod, window, cache)
            if chosen is None:
                cache.state = None
                return None
            host = chosen
        self.next_start_node_index = (start + processed) % n
        tr = CycleTrace(1, pod.key, pod.priority, profile=fwk.profile_name)
        tr.evaluated_nodes = processed
        tr = self._assume_and_bind(fwk, state, pod, host, tr)
        if tr.outcome is Outcome.SCHEDULED:
            cache.clean_pos = len(log)
        else:
            cache.state = None
        return tr

    def _fast_score(self, fwk: Framework, state: CycleState, pod: Pod, window: np.ndarray,
                    cache: _TemplateCache) -> str | None:
        """The host the cycle's Score picks among ``window``; None when a plugin errs or goes out of range
        (the plain cycle reports it)."""
        if not cache.active:
            tied = window  # no Score plugin left: every node scores the same
        else:
            if not cache.scored:
                if not self._score_rows(fwk, state, pod, self._feasible(cache), cache, True):
                    return None
            elif cache.pending and not self._score_rows(fwk, state, pod, np.array(sorted(cache.pending)), cache):
                return None
            random = self.options.tie_break == "random"
            if not random and not any(cache.varying[p.name] for p, _ in cache.normalized):
                # every normalized score is the same on every feasible node: a constant added to each node
                # changes no choice (the accepted normalizers map equal raw scores to one equal score)
                return str(self.names_arr[window[int(cache.key[window].argmax())]])
            totals = cache.base[window]
            if cache.normalized:
                totals = totals.copy()
                for p, weight in cache.normalized:
                    vals = cache.raw[p.name][window]
                    if vals.min() == vals.max():
                        continue
                    norm, st = fwk._normalize_array(p, state, pod, self.infos_arr[window].tolist(), vals)
                    if st is not None or int(norm.max()) > MAX_NODE_SCORE or int(norm.min()) < MIN_NODE_SCORE:
                        return None
                    totals += norm * weight
            tied = window[totals == totals.max()]
        names = self.names_arr[tied].tolist()
        if self.options.tie_break == "random":
            return str(self.options.rng.choice(sorted(names)))
        return str(min(names))

    def _score_rows(self, fwk: Framework, state: CycleState, pod: Pod, rows: np.ndarray,
                    cache: _TemplateCache, every: bool = False) -> bool:
        """The raw scores of ``rows`` (``every``: all feasible rows), by batch_score over many rows and
        score_nodes over a few (array operations pay off only over more than a few rows); the weighted sum
        of the plugins without NormalizeScore, the key of the host choice, which rows vary."""
        if len(rows) <= FEW_ROWS:
            return self._score_few(state, pod, rows.tolist(), cache, every)
        cols = columns_for(self.state)
        base = np.zeros(len(rows), dtype=np.int64)
        for p, weight in cache.plain + cache.normalized:
            try:
                fn = getattr(p, "batch_score", None)
                arr = fn(state, pod, cols, rows) if fn is not None else None
                if arr is None:
                    values, st = p.score_nodes(state, pod, self.infos_arr[rows].tolist())
                    if st is not None and st.code != Code.Success:
                        return False
                    arr = np.asarray(values, dtype=np.int64)
            except Exception:
                return False
            if len(arr) != len(rows):
                return False
            name = p.name
            if not p.HAS_NORMALIZE:
                if int(arr.max()) > MAX_NODE_SCORE or int(arr.min()) < MIN_NODE_SCORE:
                    return False
                base += arr * weight
            else:
                if every:
                    cache.ref[name] = int(arr[0])
                    cache.varying[name] = set()
                cache.varying[name].update(rows[arr != cache.ref[name]].tolist())
                cache.raw[name][rows] = arr
        cache.base[rows] = base
        cache.key[rows] = base * (len(cache.ok) + 1) + self.name_bonus[rows]
        cache.pending.clear()
        cache.scored = True
        return True

    def _score_few(self, state: CycleState, pod: Pod, rows: list[int], cache: _TemplateCache, every: bool) -> bool:
        """``_score_rows`` over a few rows, node by node (each plugin's ``score``)."""
        infos = self.state.node_infos
        n1 = len(infos) + 1
        bonus = self.name_bonus_list
        cbase, ckey = cache.base, cache.key
        plain, normalized = cache.plain, cache.normalized
        ref, varying, raw = cache.ref, cache.varying, cache.raw
        if every:
            ref.clear()
            for p, _ in normalized:
                varying[p.name] = set()
        try:
            for i in rows:
                ni = infos[i]
                b = 0
                for p, weight in plain:
                    v, st = p.score(state, pod, ni)
                    if (st is not None and st.code != Code.Success) or v > MAX_NODE_SCORE or v < MIN_NODE_SCORE:
                        return False
                    b += v * weight
                for p, _ in normalized:
                    v, st = p.score(state, pod, ni)
                    if st is not None and st.code != Code.Success:
                        return False
                    name = p.name
                    if v != ref.setdefault(name, v):
                        varying[name].add(i)
                    raw[name][i] = v
                cbase[i] = b
                ckey[i] = b * n1 + bonus[i]
        except Exception:
            return False
        cache.pending.clear()
        cache.scored = True
        return True
