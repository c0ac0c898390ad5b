"""``scheduler/explain`` and the plugins' ``what_would_fit``: every kind of "what would make it fit" change, checked independently.

Each test builds a small cluster from plain dicts, asks ``compute_whatif`` for the changes, then applies the
change to the *dicts* (evict = drop the pod, toleration = add it to the pod spec, label / uncordon = edit the
node), builds a brand-new cluster and framework from them and runs PreFilter and Filter again: the plugin
that failed before must pass on that node. The what-if's own check (``flips``) must agree.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pysched.framework.config import load_config
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle
from pysched.framework.runtime import Framework
from pysched.framework.status import Code, Status
from pysched.framework.whatif import (
    INTER_POD,
    NODE_AFFINITY,
    PORTS,
    RESOURCES,
    SPREAD,
    TAINTS,
    UNSCHEDULABLE,
    Change,
    toleration_dict,
)
from pysched.model.objects import Pod, parse_node, parse_pod
from pysched.plugins import in_tree_registry
from pysched.plugins.noderesources.fit import smallest_eviction
from pysched.report.explain import change_text
from pysched.scheduler.explain import compute_whatif, explain_pod, preemption_reasoning
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.cluster import Cluster, ClusterState
from pysched.snapshot.loader import load_snapshot

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")
REG = in_tree_registry()
CFG = load_config(None, REG)
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# ---------------------------------------------------------------------------------------------- helpers
def node(name: str, zone: str = "a", cpu: str = "4", labels: dict | None = None, taints: list | None = None,
         unschedulable: bool = False, pods: str = "110") -> dict:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, ZONE: zone, **(labels or {})}},
            "spec": spec, "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": pods}}}


def pod(name: str, on: str | None = None, cpu: str | None = None, labels: dict | None = None, priority: int = 0,
        ns: str = "default", **spec: Any) -> dict:
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    s: dict[str, Any] = {"containers": [container], "priority": priority, **spec}
    if on:
        s["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": s, "status": {"phase": "Running" if on else "Pending"}}


def key(p: dict) -> str:
    return f"{p['metadata']['namespace']}/{p['metadata']['name']}"


def state_of(nodes: list[dict], pods: list[dict]) -> ClusterState:
    return ClusterState(Cluster(nodes=[parse_node(n) for n in nodes],
                                pods=[parse_pod(p, i) for i, p in enumerate(pods)]))


def framework(cs: ClusterState) -> Framework:
    return Framework(CFG.profiles[0], REG, Handle(cs))


def filters(nodes: list[dict], pods: list[dict], pending: dict, on: str) -> dict[str, Status]:
    """A fresh cluster, framework and cycle state: PreFilter, then every Filter plugin on node ``on``."""
    cs = state_of(nodes, pods)
    fwk = framework(cs)
    p = parse_pod(pending, 99)
    state = CycleState()
    _, st, _ = fwk.run_pre_filter(state, p, cs.node_infos)
    assert st is None or st.code == Code.Success, st
    return fwk.run_filter_each(state, p, cs.by_name[on])


def passes(st: Status | None) -> bool:
    return st is None or st.code in (Code.Success, Code.Skip)


def apply(change: Change, on: str, nodes: list[dict], pods: list[dict], pending: dict
          ) -> tuple[list[dict], list[dict], dict]:
    """The change made to copies of the dicts, as a user would make it."""
    nodes, pods, pending = copy.deepcopy(nodes), copy.deepcopy(pods), copy.deepcopy(pending)
    evicted = {e.pod for e in change.evict}
    pods = [p for p in pods if key(p) not in evicted]
    for n in nodes:
        if n["metadata"]["name"] == on:
            labels = n["metadata"]["labels"]
            for k in change.remove_labels:
                labels.pop(k, None)
            labels.update(change.set_labels)
            if change.uncordon:
                n["spec"]["unschedulable"] = False
    if change.add_tolerations:
        pending["spec"].setdefault("tolerations", []).extend(toleration_dict(t) for t in change.add_tolerations)
    return nodes, pods, pending


def whatif(nodes: list[dict], pods: list[dict], pending: dict):
    cs = state_of(nodes, pods)
    return compute_whatif(framework(cs), cs, parse_pod(pending, 99))


def change_for(w, on: str, plugin: str) -> Change:
    s = next(s for s in w.suggestions if s.node == on)
    return next(c for c in s.changes if c.plugin == plugin)


def assert_flips(nodes: list[dict], pods: list[dict], pending: dict, on: str, plugin: str, kind: str) -> Change:
    """The plugin fails on ``on`` now; the suggested change, applied to the dicts, makes it pass."""
    assert not passes(filters(nodes, pods, pending, on)[plugin])
    change = change_for(whatif(nodes, pods, pending), on, plugin)
    assert change.kind == kind
    assert change.has_modification and change.checked and change.flips, change
    after = filters(*apply(change, on, nodes, pods, pending), on)
    assert passes(after[plugin]), (change, after[plugin])
    assert change_text(change, on)  # the report can word it
    return change


# ---------------------------------------------------------------------------------------------- resources
def test_resources_evicts_the_smallest_set_of_lowest_priority_pods() -> None:
    nodes = [node("n1", cpu="4")]
    pods = [pod("low", "n1", "1", priority=0), pod("mid", "n1", "2", priority=10),
            pod("high", "n1", "500m", priority=100)]
    pending = pod("new", cpu="2", priority=50)
    change = assert_flips(nodes, pods, pending, "n1", "NodeResourcesFit", RESOURCES)
    # 500m free, 1500m missing: "low" alone (1 cpu) is not enough, "mid" alone is; "low" is given back
    assert [e.pod for e in change.evict] == ["default/mid"]
    assert change.details["short"][0]["need"] == 1500
    assert "needs 1500m more cpu free" in change_text(change, "n1")
    assert "evicting default/mid (priority 10) would do" in change_text(change, "n1")


def test_resources_prefers_lower_priorities_when_they_suffice() -> None:
    nodes = [node("n1", cpu="4")]
    pods = [pod("a", "n1", "1", priority=0), pod("b", "n1", "1", priority=0), pod("c", "n1", "2", priority=5)]
    pending = pod("new", cpu="2")
    change = assert_flips(nodes, pods, pending, "n1", "NodeResourcesFit", RESOURCES)
    assert sorted(e.pod for e in change.evict) == ["default/a", "default/b"]


def test_resources_too_many_pods() -> None:
    nodes = [node("n1", pods="2")]
    pods = [pod("a", "n1", priority=3), pod("b", "n1", priority=1)]
    pending = pod("new")
    change = assert_flips(nodes, pods, pending, "n1", "NodeResourcesFit", RESOURCES)
    assert [e.pod for e in change.evict] == ["default/b"]


def test_resources_more_than_allocatable_has_no_eviction() -> None:
    nodes = [node("n1", cpu="4"), node("n2", cpu="8")]
    pods = [pod("big", "n2", "7")]
    pending = pod("new", cpu="6")
    w = whatif(nodes, pods, pending)
    change = change_for(w, "n1", "NodeResourcesFit")
    assert not change.has_modification and not change.flips
    assert change.details["short"][0]["largest_allocatable"] == 8000
    assert "no eviction makes room" in change_text(change, "n1")
    assert change_for(w, "n2", "NodeResourcesFit").evict[0].pod == "default/big"


def test_smallest_eviction_none_when_impossible() -> None:
    p = parse_pod(pod("a", "n1", "1"), 0)
    assert smallest_eviction([p], {"cpu": 2000}) is None
    assert smallest_eviction([p], {}) == []


# ---------------------------------------------------------------------------------------------- taints
def test_taints_need_tolerations_for_every_untolerated_taint() -> None:
    nodes = [node("n1", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                                {"key": "maintenance", "effect": "NoExecute"},
                                {"key": "soft", "effect": "PreferNoSchedule"}])]
    pending = pod("new")
    change = assert_flips(nodes, [], pending, "n1", "TaintToleration", TAINTS)
    assert [toleration_dict(t) for t in change.add_tolerations] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}]
    assert change_text(change, "n1") == "needs a toleration for dedicated=gpu:NoSchedule and maintenance:NoExecute"


# ---------------------------------------------------------------------------------------------- unschedulable
def test_cordoned_node_needs_uncordon() -> None:
    nodes = [node("n1", unschedulable=True)]
    change = assert_flips(nodes, [], pod("new"), "n1", "NodeUnschedulable", UNSCHEDULABLE)
    assert change.uncordon
    assert change_text(change, "n1") == "cordoned: uncordon it (kubectl uncordon n1)"


# ---------------------------------------------------------------------------------------------- node affinity
def test_node_selector_missing_label() -> None:
    nodes = [node("n1"), node("n2", labels={"disk": "ssd"})]
    pending = pod("new", nodeSelector={"disk": "ssd"})
    change = assert_flips(nodes, [], pending, "n1", "NodeAffinity", NODE_AFFINITY)
    assert change.set_labels == {"disk": "ssd"}
    assert change.details["matching_examples"] == ["n2"]
    assert "lacks label disk=ssd (nodeSelector)" in change_text(change, "n1")


@pytest.mark.parametrize(("expr", "labels", "want_set", "want_removed"), [
    ({"key": ZONE, "operator": "In", "values": ["c", "b"]}, {}, {ZONE: "b"}, []),
    ({"key": "tier", "operator": "NotIn", "values": ["x"]}, {"tier": "x"}, {}, ["tier"]),
    ({"key": "gpu", "operator": "Exists"}, {}, {"gpu": "true"}, []),
    ({"key": "old", "operator": "DoesNotExist"}, {"old": "1"}, {}, ["old"]),
    ({"key": "cores", "operator": "Gt", "values": ["8"]}, {"cores": "4"}, {"cores": "9"}, []),
])
def test_required_node_affinity_term(expr: dict, labels: dict, want_set: dict, want_removed: list) -> None:
    nodes = [node("n1", labels=labels)]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}}
    change = assert_flips(nodes, [], pod("new", affinity=affinity), "n1", "NodeAffinity", NODE_AFFINITY)
    assert change.set_labels == want_set and change.remove_labels == want_removed


def test_node_affinity_picks_the_cheapest_term() -> None:
    nodes = [node("n1", zone="a")]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]},
                              {"key": "y", "operator": "In", "values": ["2"]}]},
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["c"]}]}]}}}
    change = assert_flips(nodes, [], pod("new", affinity=affinity), "n1", "NodeAffinity", NODE_AFFINITY)
    assert change.set_labels == {ZONE: "c"}
    assert change.details["pod_affinity"]["term"] == 1


# ---------------------------------------------------------------------------------------------- ports
def test_ports_name_the_holder() -> None:
    nodes = [node("n1")]
    holder = pod("web", "n1", priority=5, ports=[{"containerPort": 80, "hostPort": 8080}])
    other = pod("other", "n1", ports=[{"containerPort": 81, "hostPort": 9090}])
    pending = pod("new", ports=[{"containerPort": 80, "hostPort": 8080}])
    change = assert_flips(nodes, [holder, other], pending, "n1", "NodePorts", PORTS)
    assert [e.pod for e in change.evict] == ["default/web"]
    assert change.details["ports"] == [{"protocol": "TCP", "port": 8080, "ip": "0.0.0.0", "held_by": ["default/web"]}]
    assert change_text(change, "n1").startswith("port TCP/8080 is held by default/web; evicting default/web")


# ---------------------------------------------------------------------------------------------- spread
SPREAD_ZONE = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}}]


def test_spread_names_the_domains_and_the_pods_to_move() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="b"), node("n3", zone="b")]
    pods = [pod("w1", "n1", labels={"app": "web"}, priority=3), pod("w2", "n1", labels={"app": "web"}),
            pod("w3", "n1", labels={"app": "web"}, priority=1)]
    pending = pod("new", labels={"app": "web"}, topologySpreadConstraints=SPREAD_ZONE)
    change = assert_flips(nodes, pods, pending, "n1", "PodTopologySpread", SPREAD)
    row = change.details["constraints"][0]
    assert (row["value"], row["count"], row["min"], row["min_domain"], row["skew"]) == ("a", 3, 0, "b", 4)
    assert row["ok_domains"] == [["b", 0]]
    assert [e.pod for e in change.evict] == ["default/w2", "default/w3", "default/w1"]  # lowest priority first
    text = change_text(change, "n1")
    assert f"{ZONE}=a has 3 pods matching app=web, the minimum is 0 ({ZONE}=b): skew 4 > maxSkew 1" in text
    assert f"{ZONE}=b (0) would satisfy maxSkew 1" in text


def test_spread_node_without_the_topology_label() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="b"), {**node("n3"), "metadata": {"name": "n3", "labels": {}}}]
    pods = [pod("w1", "n1", labels={"app": "web"})]
    pending = pod("new", labels={"app": "web"}, topologySpreadConstraints=SPREAD_ZONE)
    change = assert_flips(nodes, pods, pending, "n3", "PodTopologySpread", SPREAD)
    assert change.set_labels == {ZONE: "b"}
    assert change.details["constraints"][0]["missing_label"]


# ---------------------------------------------------------------------------------------------- inter-pod
def _anti(key_: str, **labels: str) -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": key_, "labelSelector": {"matchLabels": labels}}]}}


def _aff(key_: str, **labels: str) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": key_, "labelSelector": {"matchLabels": labels}}]}}


def test_inter_pod_anti_affinity_of_the_pod() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [pod("web-a", "n1", labels={"app": "web"}), pod("db", "n1", labels={"app": "db"})]
    pending = pod("new", labels={"app": "web"}, affinity=_anti(HOST, app="web"))
    change = assert_flips(nodes, pods, pending, "n1", "InterPodAffinity", INTER_POD)
    assert [e.pod for e in change.evict] == ["default/web-a"]
    assert change.details["anti_affinity"][0]["pods"] == ["default/web-a"]


def test_inter_pod_existing_pods_anti_affinity() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="a"), node("n3", zone="b")]
    pods = [pod("loner", "n2", labels={"app": "loner"}, affinity=_anti(ZONE, app="web"))]
    pending = pod("new", labels={"app": "web"})
    change = assert_flips(nodes, pods, pending, "n1", "InterPodAffinity", INTER_POD)
    assert [e.pod for e in change.evict] == ["default/loner"]
    existing = change.details["existing_anti_affinity"][0]
    assert (existing["pod"], existing["node"], existing["value"]) == ("default/loner", "n2", "a")
    assert "default/loner (on n2) has required anti-affinity against it" in change_text(change, "n1")


def test_inter_pod_affinity_points_to_the_domains_with_matching_pods() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="b")]
    pods = [pod("db", "n2", labels={"app": "db"})]
    pending = pod("new", affinity=_aff(ZONE, app="db"))
    change = assert_flips(nodes, pods, pending, "n1", "InterPodAffinity", INTER_POD)
    assert change.set_labels == {ZONE: "b"}
    assert change.details["affinity"][0]["domains_with_matches"] == [["b", 1]]
    assert f"matching pods run in {ZONE}=b (1): nodes there satisfy it" in change_text(change, "n1")


def test_inter_pod_affinity_without_any_matching_pod_has_no_change() -> None:
    nodes = [node("n1", zone="a")]
    pending = pod("new", affinity=_aff(ZONE, app="db"))
    change = change_for(whatif(nodes, [], pending), "n1", "InterPodAffinity")
    assert not change.has_modification
    assert "no pod anywhere matches" in change_text(change, "n1")


# ---------------------------------------------------------------------------------------------- combined
def test_changes_together_make_the_node_fit() -> None:
    nodes = [node("n1", cpu="2", unschedulable=True, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
             node("n2", cpu="500m")]
    pods = [pod("filler", "n1", "2")]
    pending = pod("new", cpu="1")
    w = whatif(nodes, pods, pending)
    assert [s.node for s in w.suggestions] == ["n2", "n1"]  # fewest failing filters first
    s = next(s for s in w.suggestions if s.node == "n1")
    assert [c.kind for c in s.changes] == [UNSCHEDULABLE, TAINTS, RESOURCES]
    assert all(c.flips for c in s.changes)
    assert s.fits_after and not s.still_failing
    n2 = next(s for s in w.suggestions if s.node == "n2")  # 1 cpu requested, 500m allocatable: no change helps
    assert not n2.fits_after and not n2.changes[0].has_modification
    assert n2.still_failing == {"NodeResourcesFit": "Insufficient cpu"}


def test_whatif_leaves_the_state_untouched() -> None:
    nodes = [node("n1", cpu="2", labels={"x": "1"}), node("n2", zone="b", unschedulable=True)]
    pods = [pod("a", "n1", "1500m", labels={"app": "web"}, ports=[{"containerPort": 1, "hostPort": 80}])]
    pending = pod("new", cpu="1", labels={"app": "web"}, nodeSelector={"y": "2"},
                  ports=[{"containerPort": 1, "hostPort": 80}], topologySpreadConstraints=SPREAD_ZONE,
                  affinity=_anti(HOST, app="web"))
    cs = state_of(nodes, pods)

    def snapshot() -> list:
        return [(ni.name, [p.key for p in ni.pods], ni.requested.milli_cpu, dict(ni.node.labels),
                 ni.node.unschedulable, ni.generation, {k: dict(v) for k, v in ni.used_ports.items()})
                for ni in cs.node_infos]

    before = snapshot()
    p = parse_pod(pending, 9)
    w = compute_whatif(framework(cs), cs, p)
    assert w.suggestions and snapshot() == before
    assert p.tolerations == () and cs.nominated == {}


# ---------------------------------------------------------------------------------------------- explain run
def _demo_pods() -> list[str]:
    return [p.key for p in load_snapshot([DEMO]).pods if not p.node_name]


def test_explain_pod_cycles_are_the_simulation_cycles() -> None:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    full = Simulation(load_snapshot([DEMO]), cfg, registry, SimulationOptions(trace=True)).run()
    for key_ in _demo_pods():
        e = explain_pod(load_snapshot([DEMO]), cfg, registry, key_)
        assert [c.to_dict(True) for c in e.cycles] == [c.to_dict(True) for c in full.cycles if c.pod == key_]
        last = e.cycles[-1]
        assert (e.whatif is not None) == (last.outcome in ("Unschedulable", "Nominated"))


def test_explain_pod_what_if_for_the_demo() -> None:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    e = explain_pod(load_snapshot([DEMO]), cfg, registry, "ml/trainer-2")
    assert e.whatif is not None
    first = e.whatif.suggestions[0]
    assert first.node == "node-3" and first.fits_after
    assert first.changes[0].set_labels == {"gpu": "true"}
    gpu = next(s for s in e.whatif.suggestions if s.node == "node-4")
    assert [toleration_dict(t) for t in gpu.changes[0].add_tolerations] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


def test_preemption_reasoning_of_the_demo() -> None:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    e = explain_pod(load_snapshot([DEMO]), cfg, registry, "shop/checkout-1")
    pr = preemption_reasoning(e.cycles[0].preemption)
    assert (pr.chosen, pr.runner_up) == ("node-1", "node-2")
    assert pr.decided_by == "a tie on every criterion, broken by the smallest node name"
    assert [c.node for c in pr.candidates if c.chosen] == ["node-1"]


def test_preemption_reasoning_names_the_deciding_criterion() -> None:
    from pysched.plugins.defaultpreemption import Candidate, PreemptionDetails

    def victims(*prios: int) -> list[Pod]:
        return [parse_pod(pod(f"v{i}-{p}", "n", priority=p), i) for i, p in enumerate(prios)]

    d = PreemptionDetails(potential_nodes=["a", "b", "c"], chosen="b", tied=["b"],
                          candidates=[Candidate("a", victims(5, 1), 0), Candidate("b", victims(5), 0),
                                      Candidate("c", victims(1), 1)])
    pr = preemption_reasoning(d)
    assert (pr.runner_up, pr.decided_by) == ("a", "smallest sum of victim priorities")


def test_explain_pod_waits_for_a_permit_wait_to_settle(tmp_path: Path) -> None:
    """A gang member waits on Permit in its cycle and binds after a later pod's cycle: explain reports the
    settled outcome, not "Waiting" (uses the example Coscheduling plugin of ``plugins/``)."""
    discovery = pytest.importorskip("pysched.framework.discovery")
    registry = discovery.build_registry([str(ROOT / "plugins")], include_repo_plugins=False,
                                        include_entry_points=False, base=in_tree_registry())
    config = tmp_path / "gang.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
                      "      enabled: [{name: Coscheduling}]\n")
    cfg = load_config(str(config), registry)
    docs = [node(n, cpu="1") for n in ("n1", "n2", "n3")]
    for i, name in enumerate("abc"):
        p = pod(name, cpu="1", labels={"pod-group.scheduling.example/name": "train"})
        p["metadata"]["annotations"] = {"pod-group.scheduling.example/min-member": "3"}
        p["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:0{i}Z"
        docs.append(p)
    import yaml
    snap = tmp_path / "gang-snapshot.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    e = explain_pod(load_snapshot([str(snap)]), cfg, registry, "default/a")
    assert [c.outcome for c in e.cycles] == ["Scheduled"]
    assert e.cycles[0].message.startswith("waited on Permit (Coscheduling)")
    assert e.whatif is None


# ---------------------------------------------------------------------------------------------- ranking pass
@pytest.mark.parametrize("fixture", ["whatif.yaml", "demo.yaml"])
def test_not_passing_is_filter_verdicts_without_the_passing_ones(fixture: str) -> None:
    """The what-if ranks every node with ``not_passing`` (no status object for a plugin that passes);
    it must keep exactly the verdicts of ``filter_verdicts`` that do not pass."""
    from pysched.scheduler.explain.checks import filter_verdicts, not_passing

    path = ROOT / "fixtures" / fixture
    cluster = load_snapshot([str(path)])
    cs = ClusterState(cluster)
    fwk = framework(cs)
    pending = [p for p in cluster.pods if not p.node_name]
    assert pending
    for p in pending:
        state = CycleState()
        _, st, _ = fwk.run_pre_filter(state, p, cs.node_infos)
        if st is not None and st.code != Code.Success:
            continue
        for ni in cs.node_infos:
            full = {k: (s.code, s.message()) for k, s in filter_verdicts(fwk, state, p, ni).items() if not passes(s)}
            kept = {k: (s.code, s.message()) for k, s in not_passing(fwk, state, p, ni).items()}
            assert kept == full, (p.key, ni.name)
