"""PodTopologySpread: table-driven cases after upstream's filtering/scoring tests and reference §10."""

from __future__ import annotations

from typing import Any

import pytest

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle, NodeScore
from pysched.framework.plugin_args import PodTopologySpreadArgs
from pysched.framework.status import Code
from pysched.model.objects import parse_namespace, parse_node, parse_pod, parse_workload
from pysched.plugins import podtopologyspread as pts
from pysched.plugins.helper import go_round
from pysched.snapshot.cluster import Cluster, ClusterState

MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
SKEW = "node(s) didn't match pod topology spread constraints"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

# --------------------------------------------------------------------------- builders


def node(name: str, labels: dict[str, str] | None = None, taints: list[dict] | None = None) -> Any:
    return parse_node({"metadata": {"name": name, "labels": dict(labels or {})},
                       "spec": {"taints": taints or []},
                       "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})


def zn(name: str, zone: str | None = None, **extra: str) -> Any:
    """A node with the hostname label, a ``zone`` label (and the well-known zone label)."""
    labels = {HOST: name, "node": name}
    if zone is not None:
        labels["zone"] = zone
        labels[ZONE] = zone
    labels.update(extra)
    return node(name, labels)


def pod(name: str, labels: dict[str, str] | None = None, on: str = "", ns: str = "default",
        constraints: list[dict] | None = None, terminating: bool = False, owner: dict | None = None,
        spec: dict | None = None) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [dict(owner, controller=True)]
    s: dict[str, Any] = {"containers": [{"name": "c"}]}
    if on:
        s["nodeName"] = on
    if constraints:
        s["topologySpreadConstraints"] = constraints
    s.update(spec or {})
    return parse_pod({"metadata": meta, "spec": s})


def pods_on(node_name: str, n: int, labels: dict[str, str], prefix: str = "", **kw: Any) -> list:
    return [pod(f"{prefix or node_name}-p{i}", labels, on=node_name, **kw) for i in range(n)]


def tsc(key: str, max_skew: int = 1, when: str = "DoNotSchedule", selector: dict | None = None,
        **extra: Any) -> dict:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    c.update(extra)
    return c


FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def cluster_state(nodes: list, pods: list, workloads: dict[str, list[dict]] | None = None,
                  namespaces: dict[str, dict[str, str]] | None = None) -> ClusterState:
    c = Cluster(nodes=list(nodes), pods=list(pods))
    for name, labels in (namespaces or {"default": {}}).items():
        ns = parse_namespace({"metadata": {"name": name, "labels": labels}})
        c.namespaces[ns.name] = ns
    for kind, objs in (workloads or {}).items():
        c.workloads[kind] = [parse_workload(o, kind) for o in objs]
    return ClusterState(c)


def plugin(cs: ClusterState, args: Any = None) -> pts.PodTopologySpread:
    return pts.factory(args, Handle(cs))


def run_filter(cs: ClusterState, incoming: Any, args: Any = None) -> dict[str, Any] | str:
    """{node: None | (code, reason)} or "Skip"."""
    pl = plugin(cs, args)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, cs.node_infos)
    if st is not None:
        assert st.code == Code.Skip, st
        return "Skip"
    out = {}
    for ni in cs.node_infos:
        r = pl.filter(state, incoming, ni)
        out[ni.name] = None if r is None else (r.code.name, r.message())
    return out


def run_score(cs: ClusterState, incoming: Any, feasible: list[str] | None = None,
              args: Any = None) -> dict[str, int] | str:
    pl = plugin(cs, args)
    state = CycleState()
    nodes = [cs.by_name[n] for n in feasible] if feasible is not None else cs.node_infos
    st = pl.pre_score(state, incoming, nodes)
    if st is not None:
        assert st.code == Code.Skip, st
        return "Skip"
    scores = []
    for ni in nodes:
        s, err = pl.score(state, incoming, ni)
        assert err is None
        scores.append(NodeScore(ni.name, s))
    assert pl.normalize_score(state, incoming, scores) is None
    return {s.name: s.score for s in scores}


U = ("Unschedulable", SKEW)
R = ("UnschedulableAndUnresolvable", MISSING)

# --------------------------------------------------------------------------- Filter


def _spread_2_1_0_3() -> tuple[list, list]:
    nodes = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
    pods = (pods_on("node-a", 2, {"foo": ""}) + pods_on("node-b", 1, {"foo": ""})
            + pods_on("node-y", 3, {"foo": ""}))
    return nodes, pods


FILTER_CASES = [
    # (id, nodes, existing pods, incoming pod, expected)
    ("no-constraints-skip", [zn("a", "z1")], [], pod("p", {"foo": ""}), "Skip"),
    ("only-schedule-anyway-skip", [zn("a", "z1")], [],
     pod("p", {"foo": ""}, constraints=[tsc("zone", when="ScheduleAnyway", selector=FOO)]), "Skip"),
    ("2/1/0/3 maxSkew1 only node-x fits", *_spread_2_1_0_3(),
     pod("p", {"foo": ""}, constraints=[tsc("node", 1, selector=FOO)]),
     {"node-a": U, "node-b": U, "node-x": None, "node-y": U}),
    ("2/1/0/3 maxSkew2 node-b and node-x fit", *_spread_2_1_0_3(),
     pod("p", {"foo": ""}, constraints=[tsc("node", 2, selector=FOO)]),
     {"node-a": U, "node-b": None, "node-x": None, "node-y": U}),
    ("2/1/0/3 pod does not match itself", *_spread_2_1_0_3(),
     pod("p", {"bar": ""}, constraints=[tsc("node", 1, selector=FOO)]),
     {"node-a": U, "node-b": None, "node-x": None, "node-y": U}),
    ("zone and node constraints together", *_spread_2_1_0_3(),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO), tsc("node", 1, selector=FOO)]),
     # zone1=3, zone2=3: zone skew 1 everywhere; node constraint as above
     {"node-a": U, "node-b": U, "node-x": None, "node-y": U}),
    ("missing label is unresolvable", [zn("a", "z1"), zn("b")], [],
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)]),
     {"a": None, "b": R}),
    ("missing label of the second constraint", [zn("a", "z1"), node("b", {"zone": "z2"})], [],
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO), tsc("node", 1, selector=FOO)]),
     {"a": None, "b": R}),
    ("empty selector counts nothing", [zn("a", "z1"), zn("b", "z2")], pods_on("a", 5, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector={})]),
     {"a": None, "b": None}),
    ("nil selector matches nothing", [zn("a", "z1"), zn("b", "z2")], pods_on("a", 5, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1)]),
     {"a": None, "b": None}),
    ("terminating and foreign-namespace pods are not counted", [zn("a", "z1"), zn("b", "z2")],
     pods_on("a", 3, {"foo": ""}, terminating=True) + pods_on("a", 3, {"foo": ""}, prefix="other", ns="other"),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)]),
     {"a": None, "b": None}),
    ("minDomains below domain count keeps the minimum",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 1, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO, minDomains=2)]),
     {"a": None, "b": None}),
    ("minDomains above domain count makes the minimum 0",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 1, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO, minDomains=3)]),
     {"a": U, "b": U}),
    ("minDomains with maxSkew 2 and empty domains",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 2, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 2, selector=FOO, minDomains=3)]),
     {"a": U, "b": None}),
    ("nodeAffinityPolicy Honor drops nodes the pod cannot use",
     [zn("a", "z1", env="prod"), zn("b", "z2", env="prod"), zn("c", "z3")],
     pods_on("a", 3, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)], spec={"nodeSelector": {"env": "prod"}}),
     {"a": U, "b": None, "c": None}),
    ("nodeAffinityPolicy Ignore counts them",
     [zn("a", "z1", env="prod"), zn("b", "z2", env="prod"), zn("c", "z3")],
     pods_on("a", 3, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO, nodeAffinityPolicy="Ignore")],
         spec={"nodeSelector": {"env": "prod"}}),
     {"a": U, "b": U, "c": None}),
    ("required node affinity is honoured too",
     [zn("a", "z1", env="prod"), zn("b", "z2", env="prod"), zn("c", "z3")],
     pods_on("a", 3, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)],
         spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
             "nodeSelectorTerms": [{"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}]}}}}),
     {"a": U, "b": None, "c": None}),
]


def _tainted_case(policy: str | None) -> tuple:
    nodes = [zn("a", "z1"), zn("b", "z2"),
             node("c", {HOST: "c", "zone": "z3"}, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}])]
    pods = pods_on("a", 3, {"foo": ""}) + pods_on("b", 1, {"foo": ""})
    extra = {"nodeTaintsPolicy": policy} if policy else {}
    return nodes, pods, pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO, **extra)])


FILTER_CASES += [
    ("nodeTaintsPolicy Ignore (default) counts tainted nodes", *_tainted_case(None), {"a": U, "b": U, "c": None}),
    ("nodeTaintsPolicy Honor drops tainted nodes", *_tainted_case("Honor"), {"a": U, "b": None, "c": None}),
    ("nodeTaintsPolicy Honor keeps tolerated tainted nodes",
     *_tainted_case("Honor")[:2],
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO, nodeTaintsPolicy="Honor")],
         spec={"tolerations": [{"key": "t", "operator": "Exists"}]}),
     {"a": U, "b": U, "c": None}),
    ("matchLabelKeys narrows the selector to the pod's version",
     [zn("a", "z1"), zn("b", "z2")],
     pods_on("a", 3, {"app": "foo", "version": "v1"}) + pods_on("b", 1, {"app": "foo", "version": "v2"}, prefix="b2"),
     pod("p", {"app": "foo", "version": "v2"},
         constraints=[tsc("zone", 1, selector={"matchLabels": {"app": "foo"}}, matchLabelKeys=["version"])]),
     {"a": None, "b": U}),
    ("matchLabelKeys makes an empty selector count",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 2, {"version": "v2"}),
     pod("p", {"version": "v2"}, constraints=[tsc("zone", 1, selector={}, matchLabelKeys=["version"])]),
     {"a": U, "b": None}),
    ("matchLabelKeys with a key the pod lacks changes nothing",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 2, {"version": "v2"}),
     pod("p", {"version": "v2"}, constraints=[tsc("zone", 1, selector={}, matchLabelKeys=["missing"])]),
     {"a": None, "b": None}),
    ("matchLabelKeys keeps a nil selector matching nothing",
     [zn("a", "z1"), zn("b", "z2")], pods_on("a", 2, {"version": "v2"}),
     pod("p", {"version": "v2"}, constraints=[tsc("zone", 1, matchLabelKeys=["version"])]),
     {"a": None, "b": None}),
    ("domain without any node in it does not lower the minimum",
     [zn("a", "z1"), zn("b", "z1")], pods_on("a", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)]),
     # one domain z1 with 1 pod: min 1, skew 1+1-1 = 1
     {"a": None, "b": None}),
    ("nodes missing a key are left out of the counts",
     [zn("a", "z1"), zn("b", "z2"), node("c", {"zone": "z3"})],
     pods_on("a", 1, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO), tsc("node", 1, selector=FOO)]),
     {"a": None, "b": None, "c": R}),
]


@pytest.mark.parametrize("nodes,pods,incoming,expected", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(nodes: list, pods: list, incoming: Any, expected: Any) -> None:
    assert run_filter(cluster_state(nodes, pods), incoming) == expected


def test_filter_without_prefilter_state_is_an_error() -> None:
    cs = cluster_state([zn("a", "z1")], [])
    st = plugin(cs).filter(CycleState(), pod("p"), cs.node_infos[0])
    assert st is not None and st.code == Code.Error
    assert st.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# --------------------------------------------------------------------------- AddPod / RemovePod


def _prefiltered(nodes: list, pods: list, incoming: Any) -> tuple[ClusterState, pts.PodTopologySpread, CycleState]:
    cs = cluster_state(nodes, pods)
    pl = plugin(cs)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, cs.node_infos)
    assert st is None
    return cs, pl, state


def test_add_pod_on_a_cloned_state_leaves_the_original_alone() -> None:
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)])
    cs, pl, state = _prefiltered([zn("a", "z1"), zn("b", "z2")], pods_on("a", 1, {"foo": ""}), incoming)
    b = cs.by_name["b"]
    assert pl.filter(state, incoming, b) is None
    assert pl.filter(state, incoming, cs.by_name["a"]).code == Code.Unschedulable
    clone = state.clone()
    assert pl.add_pod(clone, incoming, pod("n1", {"foo": ""}, on="b"), b) is None
    # z1=1, z2=1 → both fit with the clone; the original still rejects a
    assert pl.filter(clone, incoming, cs.by_name["a"]) is None
    assert pl.filter(state, incoming, cs.by_name["a"]).code == Code.Unschedulable
    assert pl.add_pod(clone, incoming, pod("n2", {"foo": ""}, on="b"), b) is None
    assert pl.filter(clone, incoming, b).code == Code.Unschedulable
    assert pl.filter(clone, incoming, cs.by_name["a"]) is None
    assert pl.remove_pod(clone, incoming, pod("n2", {"foo": ""}, on="b"), b) is None
    assert pl.remove_pod(clone, incoming, pod("n1", {"foo": ""}, on="b"), b) is None
    assert pl.filter(clone, incoming, cs.by_name["a"]).code == Code.Unschedulable


@pytest.mark.parametrize("added,changes", [
    (pod("x", {"foo": ""}, ns="other", on="a"), False),
    (pod("x", {"bar": ""}, on="a"), False),
    (pod("x", {"foo": ""}, on="a"), True),
    (pod("x", {"foo": ""}, on="a", terminating=True), True),  # AddPod does not look at deletionTimestamp
], ids=["other-namespace", "not-matching", "matching", "terminating-still-counted"])
def test_add_pod_filters(added: Any, changes: bool) -> None:
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)])
    cs, pl, state = _prefiltered([zn("a", "z1"), zn("b", "z2")], [], incoming)
    pl.add_pod(state, incoming, added, cs.by_name["a"])
    s = state.read(pts.PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num[0].get("z1", 0) == (1 if changes else 0)


def test_add_pod_with_empty_selector_counts_unlike_prefilter() -> None:
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector={})])
    cs, pl, state = _prefiltered([zn("a", "z1"), zn("b", "z2")], pods_on("a", 3, {}), incoming)
    s = state.read(pts.PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num[0] == {"z1": 0, "z2": 0}
    pl.add_pod(state, incoming, pod("x", {}, on="a"), cs.by_name["a"])
    pl.add_pod(state, incoming, pod("y", {}, on="a"), cs.by_name["a"])
    assert s.tp_value_to_match_num[0] == {"z1": 2, "z2": 0}
    assert pl.filter(state, incoming, cs.by_name["a"]).code == Code.Unschedulable


def test_add_pod_on_node_missing_keys_or_ineligible_is_ignored() -> None:
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)],
                   spec={"nodeSelector": {"env": "prod"}})
    cs, pl, state = _prefiltered([zn("a", "z1", env="prod"), zn("b", "z2"), node("c", {})], [], incoming)
    pl.add_pod(state, incoming, pod("x", {"foo": ""}, on="b"), cs.by_name["b"])
    pl.add_pod(state, incoming, pod("y", {"foo": ""}, on="c"), cs.by_name["c"])
    assert state.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num[0] == {"z1": 0}


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "b", "a"], ["b", "a", "c"]])
def test_critical_paths_track_the_minimum(order: list[str]) -> None:
    counts = {"a": 3, "b": 1, "c": 2}
    p = pts.CriticalPaths()
    for v in order:
        p.update(v, counts[v])
    assert p.n0 == 1
    counts["b"] = 5
    p.update("b", 5)
    assert p.n0 == 2
    p.update("a", 0)
    assert (p.v0, p.n0) == ("a", 0)


# --------------------------------------------------------------------------- Score


def _score_case_worked_example() -> tuple:
    nodes = [zn("n1", "z1"), zn("n2", "z2"), zn("n0", "z1")]
    pods = pods_on("n0", 3, {"foo": ""}) + pods_on("n2", 1, {"foo": ""})
    incoming = pod("p", {"foo": ""}, constraints=[tsc(ZONE, 1, "ScheduleAnyway", FOO)])
    return nodes, pods, incoming, ["n1", "n2"], {"n1": 25, "n2": 100}


SCORE_CASES = [
    ("reference 10.5 worked example", *_score_case_worked_example()),
    ("no constraints and no workloads: skip", [zn("a", "z1"), zn("b", "z2")], [], pod("p", {"foo": ""}),
     None, "Skip"),
    ("only DoNotSchedule constraints: skip", [zn("a", "z1"), zn("b", "z2")], [],
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)]), None, "Skip"),
    ("no matching pods: all 100", [zn("a", "z1"), zn("b", "z2")], pods_on("a", 2, {"bar": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)]), None, {"a": 100, "b": 100}),
    ("hostname constraint counts the node's own pods", [zn("a", "z1"), zn("b", "z1"), zn("c", "z1")],
     pods_on("a", 2, {"foo": ""}) + pods_on("b", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc(HOST, 1, "ScheduleAnyway", FOO)]), None,
     # w = ln(3 + 2); a = round(2 * 1.609) = 3, b = round(1.609) = 2, c = 0
     {"a": 0, "b": 33, "c": 100}),
    ("maxSkew is added per constraint", [zn("a", "z1"), zn("b", "z2")], pods_on("a", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 3, "ScheduleAnyway", FOO)]), None,
     # w = ln 4; a = round(1.386 + 2) = 3, b = 2; 100*(3+2-3)//3 = 66, 100*(3+2-2)//3 = 100
     {"a": 66, "b": 100}),
    ("nodes missing a key are ignored with the pod's own constraints",
     [zn("a", "z1"), zn("b", "z2"), node("c", {HOST: "c"})], pods_on("a", 1, {"foo": ""}) + pods_on("c", 4, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)]), None,
     # c is ignored; w = ln 4: a = round(1.386) = 1, b = 0 → 100*(1+0-1)//1 = 0, 100
     {"a": 0, "b": 100, "c": 0}),
    ("every feasible node ignored: all 0", [node("a", {}), node("b", {})], [],
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)]), None, {"a": 0, "b": 0}),
    ("domains are those of the feasible nodes only",
     [zn("a", "z1"), zn("b", "z2"), zn("c", "z3")], pods_on("c", 5, {"foo": ""}) + pods_on("a", 1, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)]), ["a", "b"],
     # z3 is not a domain: w = ln 4, a = 1, b = 0 → a 0, b 100
     {"a": 0, "b": 100}),
    ("counts include non-feasible nodes of a registered domain",
     [zn("a", "z1"), zn("b", "z2"), zn("c", "z1")], pods_on("c", 3, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)]), ["a", "b"],
     # z1 = 3 (from c): a = round(3 * ln 4) = 4, b = 0 → 100*(4-4)//4 = 0, 100
     {"a": 0, "b": 100}),
    ("empty selector counts nothing in scoring", [zn("a", "z1"), zn("b", "z2")], pods_on("a", 3, {}),
     pod("p", {}, constraints=[tsc("zone", 1, "ScheduleAnyway", {}), tsc(HOST, 1, "ScheduleAnyway", {})]),
     None, {"a": 100, "b": 100}),
    ("nodeAffinityPolicy Honor leaves unusable nodes out of the counts",
     [zn("a", "z1", env="prod"), zn("b", "z2", env="prod"), zn("c", "z1")], pods_on("c", 3, {"foo": ""}),
     pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)], spec={"nodeSelector": {"env": "prod"}}),
     ["a", "b"], {"a": 100, "b": 100}),
]


@pytest.mark.parametrize("nodes,pods,incoming,feasible,expected", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(nodes: list, pods: list, incoming: Any, feasible: list[str] | None, expected: Any) -> None:
    assert run_score(cluster_state(nodes, pods), incoming, feasible) == expected


def test_raw_scores_of_worked_example() -> None:
    nodes, pods, incoming, feasible, _ = _score_case_worked_example()
    cs = cluster_state(nodes, pods)
    pl = plugin(cs)
    state = CycleState()
    assert pl.pre_score(state, incoming, [cs.by_name[n] for n in feasible]) is None
    s = state.read(pts.PRE_SCORE_STATE_KEY)
    assert s.topology_normalizing_weight == [1.3862943611198906]
    assert s.topology_value_to_pod_counts == [{"z1": 3, "z2": 1}]
    assert [pl.score(state, incoming, cs.by_name[n])[0] for n in feasible] == [4, 1]


def test_prescore_skips_without_nodes() -> None:
    cs = cluster_state([], [])
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, "ScheduleAnyway", FOO)])
    assert plugin(cs).pre_score(CycleState(), incoming, []).code == Code.Skip


def test_score_without_prescore_state_is_an_error() -> None:
    cs = cluster_state([zn("a", "z1")], [])
    _, st = plugin(cs).score(CycleState(), pod("p"), cs.node_infos[0])
    assert st is not None and st.code == Code.Error


# --------------------------------------------------------------------------- system defaults


def _rs(name: str, selector: dict | None, ns: str = "default", kind: str = "ReplicaSet") -> dict:
    spec = {} if selector is None else {"selector": selector}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _svc(name: str, selector: dict | None, ns: str = "default", kind: str = "Service") -> dict:
    spec = {} if selector is None else {"selector": selector}
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1"}


def _defaults_cluster(workloads: dict[str, list[dict]]) -> ClusterState:
    nodes = [zn("n1", "z1"), zn("n2", "z1"), zn("n3", "z2"), node("n4", {HOST: "n4"})]
    pods = (pods_on("n1", 2, {"app": "web"}) + pods_on("n3", 1, {"app": "web"}) + pods_on("n4", 1, {"app": "web"})
            + pods_on("n2", 3, {"app": "db"}))
    return cluster_state(nodes, pods, workloads)


# hostname w = ln 6, zone domains {z1, z2, ""} → w = ln 5; n1 = 12.80 → 13, n2 = 9.22 → 9,
# n3 = 9.40 → 9, n4 (no zone term) = 3.79 → 4; normalised with min 4, max 13.
SYSTEM_DEFAULT_SCORES = {"n1": 30, "n2": 61, "n3": 61, "n4": 100}

DEFAULT_CASES = [
    ("replicaset owner", {"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]},
     pod("p", {"app": "web"}, owner=RS_OWNER), SYSTEM_DEFAULT_SCORES),
    ("statefulset owner", {"StatefulSet": [_rs("rs1", {"matchLabels": {"app": "web"}}, kind="StatefulSet")]},
     pod("p", {"app": "web"}, owner=dict(RS_OWNER, kind="StatefulSet")), SYSTEM_DEFAULT_SCORES),
    ("replicationcontroller owner", {"ReplicationController": [_svc("rs1", {"app": "web"}, kind="ReplicationController")]},
     pod("p", {"app": "web"}, owner={"apiVersion": "v1", "kind": "ReplicationController", "name": "rs1"}),
     SYSTEM_DEFAULT_SCORES),
    ("service selecting the pod", {"Service": [_svc("s", {"app": "web"})]},
     pod("p", {"app": "web"}), SYSTEM_DEFAULT_SCORES),
    ("service in another namespace is ignored", {"Service": [_svc("s", {"app": "web"}, ns="other")]},
     pod("p", {"app": "web"}), "Skip"),
    ("service not selecting the pod is ignored", {"Service": [_svc("s", {"app": "db"})]},
     pod("p", {"app": "web"}), "Skip"),
    ("service with nil selector is ignored", {"Service": [_svc("s", None)]}, pod("p", {"app": "web"}), "Skip"),
    ("service with empty selector adds nothing", {"Service": [_svc("s", {})]}, pod("p", {"app": "web"}), "Skip"),
    ("owner missing from the snapshot", {}, pod("p", {"app": "web"}, owner=RS_OWNER), "Skip"),
    ("owner of an unsupported group version",
     {"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]},
     pod("p", {"app": "web"}, owner=dict(RS_OWNER, apiVersion="extensions/v1beta1")), "Skip"),
    ("non-controller owner reference is ignored",
     {"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]},
     parse_pod({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                             "ownerReferences": [dict(RS_OWNER, controller=False)]},
                "spec": {"containers": [{"name": "c"}]}}), "Skip"),
    ("replicaset with nil selector adds nothing", {"ReplicaSet": [_rs("rs1", None)]},
     pod("p", {"app": "web"}, owner=RS_OWNER), "Skip"),
]


@pytest.mark.parametrize("workloads,incoming,expected", [c[1:] for c in DEFAULT_CASES],
                         ids=[c[0] for c in DEFAULT_CASES])
def test_system_default_scores(workloads: dict, incoming: Any, expected: Any) -> None:
    cs = _defaults_cluster(workloads)
    assert run_score(cs, incoming) == expected
    # there are no DoNotSchedule system defaults
    assert run_filter(cs, incoming) == "Skip"


def _plain_default_constraints(pl: pts.PodTopologySpread, incoming: Any, action: str) -> list:
    """Upstream's order: the default constraints of that action, then the default selector on each."""
    constraints = pts.filter_constraints(pl.default_constraints, incoming.labels, action)
    if not constraints:
        return []
    selector = pts.default_selector(incoming, pts._WorkloadIndex(pl.handle.snapshot.cluster.workloads))
    if selector.empty:
        return []
    for c in constraints:
        c.selector = selector
    return constraints


def _constraint_view(cs: list) -> list:
    return [(c.max_skew, c.topology_key, pts.selector_key(c.selector), c.min_domains, c.node_affinity_honor,
             c.node_taints_honor) for c in cs]


@pytest.mark.parametrize("args", [None, "list"], ids=["system", "list"])
@pytest.mark.parametrize("workloads,incoming", [c[1:3] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_default_constraints_as_upstream_builds_them(workloads: dict, incoming: Any, args: Any) -> None:
    """build_default_constraints refuses early (no constraint of the action; no Service in the namespace
    and no controller that could own the pod): the same constraints as the plain composition."""
    if args == "list":
        args = _list_args({"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                          {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"})
    pl = plugin(_defaults_cluster(workloads), args)
    for action in ("DoNotSchedule", "ScheduleAnyway"):
        for _ in range(2):  # the second call reads what the first kept
            got = pl.build_default_constraints(incoming, action)
            assert _constraint_view(got) == _constraint_view(_plain_default_constraints(pl, incoming, action))
    expect_some = DEFAULT_CASES[[c[2] for c in DEFAULT_CASES].index(incoming)][3] != "Skip"
    assert bool(pl.build_default_constraints(incoming, "ScheduleAnyway")) == expect_some


def test_pod_with_own_constraints_never_gets_defaults() -> None:
    """Only a DoNotSchedule constraint: scoring skips instead of falling back to the defaults."""
    cs = _defaults_cluster({"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]})
    incoming = pod("p", {"app": "web"}, owner=RS_OWNER,
                   constraints=[tsc("zone", 1, selector={"matchLabels": {"app": "web"}})])
    assert run_score(cs, incoming) == "Skip"
    assert run_filter(cs, incoming) == {"n1": U, "n2": U, "n3": None, "n4": R}


def test_default_selector_merges_service_and_replicaset() -> None:
    cs = _defaults_cluster({"Service": [_svc("s", {"tier": "front"})],
                            "ReplicaSet": [_rs("rs1", {"matchExpressions": [
                                {"key": "app", "operator": "In", "values": ["web"]}]})]})
    incoming = pod("p", {"app": "web", "tier": "front"}, owner=RS_OWNER)
    pl = plugin(cs)
    sel = pts.default_selector(incoming, pl._workloads())
    assert sel.matches({"app": "web", "tier": "front"})
    assert not sel.matches({"app": "web"})
    assert not sel.matches({"tier": "front"})


def _list_args(*constraints: dict) -> PodTopologySpreadArgs:
    return PodTopologySpreadArgs(default_constraints=list(constraints), defaulting_type="List")


def test_list_defaulting_filter_uses_default_selector() -> None:
    cs = _defaults_cluster({"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]})
    incoming = pod("p", {"app": "web"}, owner=RS_OWNER)
    args = _list_args({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"})
    # zone counts: z1 = 2, z2 = 1 (n4 has no zone label: missing-label rejection)
    assert run_filter(cs, incoming, args) == {"n1": U, "n2": U, "n3": None, "n4": R}


def test_list_defaulting_requires_all_topologies_when_scoring() -> None:
    cs = _defaults_cluster({"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]})
    incoming = pod("p", {"app": "web"}, owner=RS_OWNER)
    args = _list_args({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"})
    # n4 lacks the zone label: ignored (0). w = ln 4: n1/n2 = round(2 * 1.386) = 3, n3 = 1
    assert run_score(cs, incoming, args=args) == {"n1": 33, "n2": 33, "n3": 100, "n4": 0}


def test_list_defaulting_without_constraints_skips() -> None:
    cs = _defaults_cluster({"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]})
    incoming = pod("p", {"app": "web"}, owner=RS_OWNER)
    assert run_score(cs, incoming, args=_list_args()) == "Skip"


def test_default_args_are_system() -> None:
    pl = pts.factory(None, Handle(cluster_state([], [])))
    assert pl.system_defaulted
    assert pts.decode_args(None).defaulting_type == "System"


# --------------------------------------------------------------------------- arithmetic and caching


@pytest.mark.parametrize("x,want", [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999999999999996, 2),
                                    (0.49999999999999994, 0), (4.158883083359672, 4), (0.0, 0),
                                    (-0.5, -1), (-2.5, -3), (-0.49999999999999994, 0)])
def test_round_half_away(x: float, want: int) -> None:
    assert pts.round_half_away(x) == want == go_round(x)


@pytest.mark.parametrize("n,want", [(3, 1.0986122886681096), (4, 1.3862943611198906), (2, 0.6931471805599453)])
def test_go_log_matches_go(n: int, want: float) -> None:
    assert pts.go_log(float(n)) == want


@pytest.mark.parametrize("scores,ignored,want", [
    ([4, 1], set(), [25, 100]),
    ([0, 0, 0], set(), [100, 100, 100]),
    ([3, 7, 9], {"n1"}, [100, 0, 100 * (9 + 3 - 9) // 9]),
    ([5, 5], {"n0", "n1"}, [0, 0]),
], ids=["worked-example", "all-zero", "ignored-node", "all-ignored"])
def test_normalize_score(scores: list[int], ignored: set[str], want: list[int]) -> None:
    state = CycleState()
    state.write(pts.PRE_SCORE_STATE_KEY, pts.PreScoreState(ignored_nodes=set(ignored)))
    ns = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    pl = pts.PodTopologySpread(None, PodTopologySpreadArgs())
    assert pl.normalize_score(state, pod("p"), ns) is None
    assert [s.score for s in ns] == want


def test_counts_follow_bindings_across_cycles() -> None:
    """The per-node memo must notice pods added to or removed from a node."""
    cs = cluster_state([zn("a", "z1"), zn("b", "z2")], pods_on("a", 1, {"foo": ""}))
    pl = plugin(cs)
    incoming = pod("p", {"foo": ""}, constraints=[tsc("zone", 1, selector=FOO)])

    def verdicts() -> dict:
        state = CycleState()
        pl.pre_filter(state, incoming, cs.node_infos)
        return {ni.name: pl.filter(state, incoming, ni) is None for ni in cs.node_infos}

    assert verdicts() == {"a": False, "b": True}
    extra = pod("q", {"foo": ""})
    cs.bind(extra, "b")
    assert verdicts() == {"a": True, "b": True}
    cs.bind(pod("r", {"foo": ""}), "b")
    assert verdicts() == {"a": True, "b": False}
    cs.delete_pod(extra)
    assert verdicts() == {"a": True, "b": True}


@pytest.mark.parametrize("seed", range(4))
def test_kept_spread_counts_equal_a_recount_while_pods_come_and_go(seed: int) -> None:
    """``TopologyArrays.spread_counts`` (per domain, kept across binds and evictions from the pod events)
    equals the matching pods counted afresh on the nodes with every key, and its least entry the smallest
    count over the domains holding such a node; selectors with and without a label hint."""
    import random

    import numpy as np

    from pysched.model.labels import LabelSelector
    from pysched.plugins.topology_arrays import count_matching, topology_arrays
    from pysched.snapshot.columns import columns_for
    from tests.builders import cluster_state, make_node, make_pod

    rng = random.Random(seed)
    nodes = []
    for i in range(24):
        b = make_node(f"n{i}").alloc(cpu="64", memory="64Gi")
        if rng.random() < 0.9:
            b = b.label(ZONE, rng.choice(["za", "zb", "zc", "zd"]))
        if rng.random() < 0.9:
            b = b.label(HOST, f"n{i}")
        nodes.append(b)
    def labelled(name: str) -> Any:
        b = make_pod(name, rng.choice(["default", "other"]))
        b._d["metadata"]["labels"] = {"app": rng.choice("abc")}
        return b

    running = [labelled(f"r{i}").node_name(f"n{rng.randrange(24)}") for i in range(30)]
    cluster = cluster_state(nodes, running)
    selectors = [LabelSelector.parse({"matchLabels": {"app": "a"}}),
                 LabelSelector.parse({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b"]}]})]
    keys = (ZONE, HOST)
    n_pods = len(running)
    for step in range(40):
        topo = topology_arrays(columns_for(cluster))
        d = topo.domains(ZONE)
        for sel in selectors:
            for ns in ("default", "other"):
                counts, least = topo.spread_counts(cluster, sel, ns, pts.selector_key(sel), keys, ZONE)
                want = [0] * d.size
                for ni in cluster.node_infos:
                    labels = ni.node.labels
                    if ZONE in labels and HOST in labels:
                        want[d.index[labels[ZONE]]] += count_matching(ni.pods, sel, ns)
                present = {d.index[ni.node.labels[ZONE]] for ni in cluster.node_infos
                           if ZONE in ni.node.labels and HOST in ni.node.labels}
                assert counts == want, (step, ns)
                assert least == (min(want[c] for c in present) if present else 0)
                assert isinstance(np.array(counts, dtype=np.int64), np.ndarray)
        if rng.random() < 0.6 or not any(ni.pods for ni in cluster.node_infos):
            pod = labelled(f"p{step}").pod(n_pods)
            n_pods += 1
            cluster.bind(pod, f"n{rng.randrange(24)}")
        else:
            victim = rng.choice([p for ni in cluster.node_infos for p in ni.pods])
            cluster.evict(victim)


@pytest.mark.parametrize("host_on_zb, least", [
    pytest.param(True, 1, id="every-domain-holds-an-eligible-node"),
    pytest.param(False, 2, id="a-domain-without-one"),
])
def test_spread_counts_least_is_over_the_domains_holding_an_eligible_node(host_on_zb: bool, least: int) -> None:
    """``spread_counts``' least entry: the smallest count over the domains holding a node with every key,
    whether those are all the domains (the smallest of the counts as they are) or not (a domain without
    such a node, counted 0, is left out)."""
    from pysched.model.labels import LabelSelector
    from pysched.plugins.topology_arrays import topology_arrays
    from pysched.snapshot.columns import columns_for
    from tests.builders import cluster_state as build, make_node, make_pod

    def node_(name: str, zone: str, host: bool) -> Any:
        b = make_node(name).alloc(cpu="8", memory="8Gi").label(ZONE, zone)
        return b.label(HOST, name) if host else b

    def app(name: str, on: str) -> Any:
        b = make_pod(name)
        b._d["metadata"]["labels"] = {"app": "a"}
        return b.node_name(on)

    cluster = build([node_("n1", "za", True), node_("n2", "zb", host_on_zb), node_("n3", "za", True)],
                    [app("p1", "n1"), app("p2", "n3"), app("p3", "n2")])
    topo = topology_arrays(columns_for(cluster))
    sel = LabelSelector.parse({"matchLabels": {"app": "a"}})
    counts, got = topo.spread_counts(cluster, sel, "default", pts.selector_key(sel), (ZONE, HOST), ZONE)
    assert counts == [2, 1 if host_on_zb else 0]
    assert got == least


# --------------------------------------------------------------------------- batch_filter's kept reasons

SPREAD_REASON_CASES = {
    "one key, no domain over the skew": [("zone", {"a": 0, "b": 0})],
    "one key, one domain over the skew": [("zone", {"a": 0, "b": 2})],
    "one key, every domain over the skew": [("zone", {"a": 2, "b": 2})],
    "two keys, the first failing one counts": [("zone", {"a": 2, "b": 0}), ("rack", {"r1": 0, "r2": 2})],
    "two keys, a missing label before a skew": [("rack", {"r1": 2, "r2": 0}), ("zone", {"a": 0, "b": 2})],
    "a key no node has": [("nowhere", {})],
}


@pytest.mark.parametrize("name", list(SPREAD_REASON_CASES))
def test_spread_reasons_are_the_first_failing_constraints(name: str) -> None:
    """``_spread_reasons`` (batch_filter's rows' reasons, kept per reason tables): per row the first
    constraint's reason that is not 0 (1: the row lacks the key, else the table's entry for its domain),
    and the rows passing every constraint; both read only."""
    from pysched.plugins.topology_arrays import Domains
    from pysched.snapshot.columns import columns_for

    labels = [{"zone": "a", "rack": "r1"}, {"zone": "b", "rack": "r2"}, {"zone": "a"}, {"rack": "r2"}, {},
              {"zone": "b", "rack": "r1"}]
    state = ClusterState(Cluster(nodes=[node(f"n{i}", lb) for i, lb in enumerate(labels)]))
    cols = columns_for(state)
    tables = []
    for key, over in SPREAD_REASON_CASES[name]:
        d = Domains(cols, key)
        tables.append((d, bytes(over[v] for v in d.values)))
    reason, ok = pts._spread_reasons(tables)
    want = []
    for lb in labels:
        r = 0
        for key, over in SPREAD_REASON_CASES[name]:
            r = 1 if key not in lb else over[lb[key]]
            if r:
                break
        want.append(r)
    assert reason.tolist() == want
    assert ok.tolist() == [r == 0 for r in want]
    assert not reason.flags.writeable and not ok.flags.writeable


@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("seed", range(4))
def test_pod_events_replay_to_the_nodes_pods_while_pods_come_and_go(seed: int, every: int) -> None:
    """``TopologyArrays.pod_events``: a bind is the one event (row, pod, +1), and the rows' pods when the
    events began plus every event replayed are each row's pods now, through binds (some right after a
    removal moved a node's last pod into the freed place) and removals (some of another object with the
    pod's key and UID), the events read after every change or after every third (then a node may see
    binds before and after a removal in one reading)."""
    import copy
    import random
    from collections import Counter

    from pysched.plugins.topology_arrays import topology_arrays
    from pysched.snapshot.columns import columns_for
    from tests.builders import cluster_state, make_node, make_pod

    rng = random.Random(seed)
    running = [make_pod(f"r{i}").node_name(f"n{rng.randrange(6)}") for i in range(12)]
    cluster = cluster_state([make_node(f"n{i}").alloc(cpu="64", memory="64Gi") for i in range(6)], running)
    topo = topology_arrays(columns_for(cluster))
    initial = {r: list(ni.pods) for r, ni in enumerate(cluster.node_infos)}
    assert topo.pod_events(cluster) == []
    placed = [p for ni in cluster.node_infos for p in ni.pods]
    for step in range(60):
        before = len(topo.pod_events(cluster)) if step % every == 0 else -1
        if placed and rng.random() < 0.4:
            gone = placed.pop(rng.randrange(len(placed)))
            # (half the time a copy: the node's own object leaves, found by key and UID)
            cluster.delete_pod(gone if rng.random() < 0.5 else copy.copy(gone))
        else:
            p = make_pod(f"s{step}").pod(100 + step)
            row = rng.randrange(6)
            cluster.bind(p, f"n{row}")
            placed.append(p)
            if before >= 0:
                assert topo.pod_events(cluster)[before:] == [(row, p, 1)], step
        if (step + 1) % every:
            continue
        have: dict[int, Counter] = {r: Counter(map(id, pods)) for r, pods in initial.items()}
        for row, p, d in topo.pod_events(cluster):
            have[row][id(p)] += d
        for r, ni in enumerate(cluster.node_infos):
            assert +have[r] == Counter(map(id, ni.pods)), (step, r)


@pytest.mark.parametrize("extra, shared", [
    pytest.param({}, True, id="selector-alone"),
    pytest.param({"matchLabelKeys": ["version"]}, False, id="match-label-keys"),
])
def test_constraints_kept_per_spec_list_only_without_match_label_keys(extra: dict, shared: bool) -> None:
    """PreFilter's constraints are kept per spread constraints list (the pods of one spec share it) when the
    pod's labels play no part; with matchLabelKeys each pod's selector is merged with its own labels."""
    first = pod("a", {"app": "foo", "version": "v1"},
                constraints=[tsc("zone", 1, selector={"matchLabels": {"app": "foo"}}, **extra)])
    second = pod("b", {"app": "foo", "version": "v2"})
    second.spread_constraints = first.spread_constraints  # (as pods parsed from one spec share it)
    pl = plugin(cluster_state([zn("n1", "z1")], []))
    got = [pl.get_constraints(p, "DoNotSchedule") for p in (first, second, first)]
    assert (got[0] is got[1]) == shared
    assert got[0] is got[2] or not shared
    def plain(cons: list) -> list:
        return [(c.max_skew, c.topology_key, pts.selector_key(c.selector), c.min_domains, c.node_affinity_honor,
                 c.node_taints_honor) for c in cons]

    for p, cons in zip((first, second), got, strict=False):
        assert plain(cons) == plain(pts.filter_constraints(p.spread_constraints, p.labels, "DoNotSchedule"))
    assert [c.selector.matches({"app": "foo", "version": "v2"}) for c in got[1]] == [True]
    assert [c.selector.matches({"app": "foo", "version": "v1"}) for c in got[1]] == [shared]


@pytest.mark.parametrize("change, stale", [
    pytest.param(lambda w: None, False, id="unchanged"),
    pytest.param(lambda w: w["Service"].append(object()), True, id="an-object-added"),
    pytest.param(lambda w: w["ReplicaSet"].pop(), True, id="an-object-removed"),
    pytest.param(lambda w: w.__setitem__("StatefulSet", []), True, id="a-kind-added"),
    pytest.param(lambda w: w.pop("ReplicaSet"), True, id="a-kind-removed"),
    pytest.param(lambda w: (w.pop("ReplicaSet"), w.__setitem__("StatefulSet", [object()])), True,
                 id="a-kind-replaced-same-count"),
])
def test_workload_index_stale_when_the_workloads_change(change: Any, stale: bool) -> None:
    workloads: dict[str, list] = {"Service": [], "ReplicaSet": [object()]}
    index = pts._WorkloadIndex({})
    index.source, index.sizes = workloads, {"Service": 0, "ReplicaSet": 1}
    change(workloads)
    assert index.stale(workloads) is stale
    assert index.stale(dict(workloads)) is True  # another dict


@pytest.mark.parametrize("policies", [
    pytest.param({}, id="default-policies"),
    pytest.param({"nodeAffinityPolicy": "Ignore"}, id="affinity-ignored"),
    pytest.param({"nodeTaintsPolicy": "Honor"}, id="taints-honoured"),
    pytest.param({"labelSelector": {}}, id="empty-selector"),
])
def test_pre_filter_plan_shared_by_pods_with_and_without_a_node_selector(policies: dict) -> None:
    """The batched PreFilter keeps what it reads of a constraints list (``_pre_filter_plan``) for the pods
    sharing it: pods with and without a nodeSelector, in turns, get the counts the per-node path finds
    (a nodeSelector narrows the counted nodes only under nodeAffinityPolicy Honor, the default)."""
    taint = [{"key": "t", "effect": "NoSchedule"}]
    nodes = [zn("a", "z1", pool="p"), zn("b", "z1", pool="q"), zn("c", "z2", pool="q"),
             node("d", {HOST: "d", ZONE: "z3", "zone": "z3", "pool": "p"}, taints=taint), zn("e", "z3", pool="p")]
    cs = cluster_state(nodes, pods_on("a", 2, {"foo": ""}) + pods_on("c", 1, {"foo": ""}, prefix="c")
                       + pods_on("d", 3, {"foo": ""}, prefix="d") + pods_on("e", 1, {"bar": ""}, prefix="e"))
    pl = plugin(cs)
    constraints = [tsc(ZONE, 1, selector=FOO, **policies)]
    plain = pod("x", {"foo": ""}, constraints=constraints)
    selected = pod("y", {"foo": ""}, constraints=constraints, spec={"nodeSelector": {"pool": "p"}})
    selected.spread_constraints = plain.spread_constraints  # (as the pods parsed from one spec share them)
    for incoming in (plain, selected, plain, selected):
        state = CycleState()
        pl.pre_filter(state, incoming, cs.node_infos)
        got = state.read(pts.PRE_FILTER_STATE_KEY)
        assert got.arrays is not None  # (the batched path)
        want = pl.compute_pre_filter_state(incoming, pl.get_constraints(incoming, pts.DO_NOT_SCHEDULE),
                                           list(cs.node_infos))
        assert got.tp_value_to_match_num == want.tp_value_to_match_num, incoming.name
        assert [pl.filter(state, incoming, ni) is None for ni in cs.node_infos] == \
            [pl.filter(_state_of(want), incoming, ni) is None for ni in cs.node_infos]
    assert len(pl._plans) == 1


def _state_of(s: Any) -> CycleState:
    state = CycleState()
    state.write(pts.PRE_FILTER_STATE_KEY, s)
    return state


def test_batch_verdicts_kept_per_reason_tables() -> None:
    """batch_filter keeps one BatchVerdict per constraints' reason tables (its statuses built at the first
    ask): two pods whose counts give the same tables get the same verdict, which agrees with filter node by
    node, statuses too; a pod whose counts differ gets its own."""
    import numpy as np

    from pysched.snapshot.columns import columns_for

    nodes = [zn("a", "z1"), zn("b", "z1"), zn("c", "z2"), node("d", {HOST: "d"})]
    cs = cluster_state(nodes, pods_on("a", 2, {"foo": ""}) + pods_on("c", 1, {"bar": ""}, prefix="c"))
    pl = plugin(cs)
    cols = columns_for(cs)
    constraints = [tsc(ZONE, 1, selector=FOO)]
    verdicts = []
    for incoming in (pod("x", {"foo": ""}, constraints=constraints), pod("y", {"foo": ""}, constraints=constraints),
                     pod("z", {"baz": ""}, constraints=[tsc(ZONE, 1, selector={"matchLabels": {"bar": ""}})])):
        state = CycleState()
        pl.pre_filter(state, incoming, cs.node_infos)
        v = pl.batch_filter(state, incoming, cols)
        want = [pl.filter(state, incoming, ni) for ni in cs.node_infos]
        assert v.ok.tolist() == [st is None for st in want]
        rejected = [r for r, st in enumerate(want) if st is not None]
        got = v.statuses(np.array(rejected, dtype=np.int64))
        assert [(st.code, st.reasons) for st in got] == [(want[r].code, want[r].reasons) for r in rejected]
        verdicts.append(v)
    assert verdicts[0] is verdicts[1] and verdicts[2] is not verdicts[0]


HINT_CASES = {
    "one-label": ({"matchLabels": {"app": "a"}}, True),
    "two-labels": ({"matchLabels": {"app": "a", "tier": "b"}}, False),
    "label-and-exists": ({"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                         False),
    "in-one-value": ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]}, True),
    "in-two-values": ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]}, False),
    "not-in": ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b"]}]}, False),
    "empty": ({}, False),
    "nothing": (None, False),
}


@pytest.mark.parametrize("case", list(HINT_CASES))
def test_hint_decides_only_when_the_hint_is_the_one_requirement(case: str) -> None:
    """``hint_decides``: True only when the selector's label hint is its one requirement; then every set of
    labels carrying the hint matches (the replays that skip the match find pods through that label)."""
    from pysched.model.labels import LabelSelector
    from pysched.plugins.topology_arrays import hint_decides, label_hint

    raw, decides = HINT_CASES[case]
    sel = LabelSelector.parse(raw)
    hint = label_hint(sel)
    assert hint_decides(sel, hint) is decides
    if decides:
        assert hint is not None
        for extra in ({}, {"tier": "b"}, {"app2": "x", "zone": "z"}):
            assert sel.matches({hint[0]: hint[1], **extra})


DOMAIN_CASES = {
    "every-node-keyed": ([{"zone": "a"}, {"zone": "b"}, {"zone": "a"}], [0, 1, 0], ["a", "b"]),
    "some-without-the-key": ([{}, {"zone": "b"}, {"rack": "r"}, {"zone": "a"}], [-1, 0, -1, 1], ["b", "a"]),
    "no-node-keyed": ([{}, {"rack": "r"}], [-1, -1], []),
    "empty-value": ([{"zone": ""}, {"zone": "a"}, {}], [0, 1, -1], ["", "a"]),
}


@pytest.mark.parametrize("case", list(DOMAIN_CASES))
def test_domains_code_the_rows_in_order_of_first_appearance(case: str) -> None:
    """``Domains``: per node row the index of its value among the values in order of first appearance, -1
    without the key; the array, its list and the mask of rows with the key agree."""
    from pysched.plugins.topology_arrays import Domains
    from pysched.snapshot.columns import columns_for

    labels, codes, values = DOMAIN_CASES[case]
    state = ClusterState(Cluster(nodes=[node(f"n{i}", lb) for i, lb in enumerate(labels)]))
    d = Domains(columns_for(state), "zone")
    assert d.codes.tolist() == codes and d.code_list == codes and d.codes.dtype.name == "int64"
    assert d.values == values and d.size == len(values) and d.index == {v: i for i, v in enumerate(values)}
    assert d.has.tolist() == [c >= 0 for c in codes]


PRE_FILTER_DEFAULT_CASES = {
    "system-defaults": (None, [True, True]),
    "list-do-not-schedule": ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                             [False, False]),
    "list-schedule-anyway": ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                             [True, True]),
}


@pytest.mark.parametrize("case", list(PRE_FILTER_DEFAULT_CASES))
def test_pre_filter_without_own_constraints_skips_only_without_do_not_schedule_defaults(case: str) -> None:
    """PreFilter of a pod without constraints of its own, twice (the second time through the kept default
    constraints): Skip exactly when no default constraint is DoNotSchedule."""
    default, skips = PRE_FILTER_DEFAULT_CASES[case]
    cs = _defaults_cluster({"ReplicaSet": [_rs("rs1", {"matchLabels": {"app": "web"}})]})
    pl = plugin(cs, _list_args(default) if default is not None else None)
    incoming = pod("p", {"app": "web"}, owner=RS_OWNER)
    got = []
    for _ in skips:
        _, st = pl.pre_filter(CycleState(), incoming, cs.node_infos)
        got.append(st is not None and st.code == Code.Skip)
    assert got == skips
