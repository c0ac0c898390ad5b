"""InterPodAffinity: table-driven cases after upstream's filtering/scoring tests and reference §11."""

from __future__ import annotations

from typing import Any

import pytest

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle, NodeScore
from pysched.framework.plugin_args import InterPodAffinityArgs
from pysched.framework.status import Code
from pysched.model.objects import parse_namespace, parse_node, parse_pod
from pysched.plugins import interpodaffinity as ipa
from pysched.snapshot.cluster import Cluster, ClusterState

AFF = ("UnschedulableAndUnresolvable", "node(s) didn't match pod affinity rules")
ANTI = ("Unschedulable", "node(s) didn't match pod anti-affinity rules")
EXISTING = ("Unschedulable", "node(s) didn't satisfy existing pods anti-affinity rules")
HOST = "kubernetes.io/hostname"
ZONE = "zone"

# --------------------------------------------------------------------------- builders


def node(name: str, labels: dict[str, str] | None = None) -> Any:
    return parse_node({"metadata": {"name": name, "labels": dict(labels or {})},
                       "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})


def zn(name: str, zone: str | None = None, **extra: str) -> Any:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    labels.update(extra)
    return node(name, labels)


def term(key: str, selector: dict | None = None, namespaces: list[str] | None = None,
         ns_selector: dict | None = None) -> dict:
    t: dict[str, Any] = {"topologyKey": key}
    if selector is not None:
        t["labelSelector"] = selector
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def weighted(weight: int, t: dict) -> dict:
    return {"weight": weight, "podAffinityTerm": t}


def ml(**labels: str) -> dict:
    return {"matchLabels": dict(labels)}


def affinity(req: list[dict] | None = None, req_anti: list[dict] | None = None,
             pref: list[dict] | None = None, pref_anti: list[dict] | None = None) -> dict:
    out: dict[str, Any] = {}
    if req is not None or pref is not None:
        pa: dict[str, Any] = {}
        if req is not None:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = req
        if pref is not None:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = pref
        out["podAffinity"] = pa
    if req_anti is not None or pref_anti is not None:
        paa: dict[str, Any] = {}
        if req_anti is not None:
            paa["requiredDuringSchedulingIgnoredDuringExecution"] = req_anti
        if pref_anti is not None:
            paa["preferredDuringSchedulingIgnoredDuringExecution"] = pref_anti
        out["podAntiAffinity"] = paa
    return out


def pod(name: str, labels: dict[str, str] | None = None, on: str = "", ns: str = "default",
        aff: dict | None = None, terminating: bool = False) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if on:
        spec["nodeName"] = on
    if aff is not None:
        spec["affinity"] = aff
    return parse_pod({"metadata": meta, "spec": spec})


NAMESPACES = {"default": {"team": "a"}, "ns1": {"team": "a"}, "ns2": {"team": "b"}, "nsx": {"team": "x"}}


def cluster_state(nodes: list, pods: list, namespaces: dict[str, dict[str, str]] | None = None) -> ClusterState:
    c = Cluster(nodes=list(nodes), pods=list(pods))
    for name, labels in (NAMESPACES if namespaces is None else namespaces).items():
        ns = parse_namespace({"metadata": {"name": name, "labels": labels}})
        c.namespaces[ns.name] = ns
    return ClusterState(c)


def plugin(cs: ClusterState, args: Any = None) -> ipa.InterPodAffinity:
    return ipa.factory(args, Handle(cs))


def run_filter(cs: ClusterState, incoming: Any, args: Any = None) -> dict[str, Any] | str | tuple:
    pl = plugin(cs, args)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, cs.node_infos)
    if st is not None:
        if st.code == Code.Skip:
            return "Skip"
        return (st.code.name, st.message())
    out = {}
    for ni in cs.node_infos:
        r = pl.filter(state, incoming, ni)
        out[ni.name] = None if r is None else (r.code.name, r.message())
    return out


def run_score(cs: ClusterState, incoming: Any, feasible: list[str] | None = None,
              args: Any = None, raw: bool = False) -> dict[str, int] | str:
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
    if not raw:
        assert pl.normalize_score(state, incoming, scores) is None
    return {s.name: s.score for s in scores}


THREE = [zn("a", "z1"), zn("b", "z1"), zn("c", "z2")]

# --------------------------------------------------------------------------- Filter

FILTER_CASES = [
    ("no affinity and no existing anti-affinity: skip", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", {"app": "web"}), "Skip"),
    ("preferred terms alone do not filter", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(pref=[weighted(5, term(ZONE, ml(app="db")))])), "Skip"),
    ("required affinity satisfied in the zone", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": None, "b": None, "c": AFF}),
    ("required affinity with hostname key", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(req=[term(HOST, ml(app="db"))])), {"a": None, "b": AFF, "c": AFF}),
    ("required affinity: node missing the key", [zn("a", "z1"), zn("b")], [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": None, "b": AFF}),
    ("required affinity: all terms must match one pod", THREE,
     [pod("e1", {"app": "db"}, on="a"), pod("e2", {"tier": "cache"}, on="c")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db")), term(ZONE, ml(tier="cache"))])),
     {"a": AFF, "b": AFF, "c": AFF}),
    ("required affinity: two terms matched by one pod", THREE, [pod("e", {"app": "db", "tier": "cache"}, on="c")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db")), term(HOST, ml(tier="cache"))])),
     {"a": AFF, "b": AFF, "c": None}),
    ("required affinity ignores pods of other namespaces", THREE, [pod("e", {"app": "db"}, on="a", ns="ns2")],
     pod("p", {"x": "y"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": AFF, "b": AFF, "c": AFF}),
    ("required affinity with explicit namespaces", THREE, [pod("e", {"app": "db"}, on="a", ns="ns2")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"), namespaces=["ns2"])])), {"a": None, "b": None, "c": AFF}),
    ("required affinity with namespaceSelector", THREE,
     [pod("e", {"app": "db"}, on="a", ns="ns2"), pod("f", {"app": "db"}, on="c", ns="nsx")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"), ns_selector=ml(team="b"))])),
     {"a": None, "b": None, "c": AFF}),
    ("required affinity with empty namespaceSelector: all namespaces", THREE,
     [pod("f", {"app": "db"}, on="c", ns="nsx")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"), ns_selector={})])), {"a": AFF, "b": AFF, "c": None}),
    ("first pod of a group matching its own terms", THREE, [pod("e", {"app": "other"}, on="a")],
     pod("p", {"app": "db"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": None, "b": None, "c": None}),
    ("first pod exception still needs the topology key", [zn("a", "z1"), zn("b")], [],
     pod("p", {"app": "db"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": None, "b": AFF}),
    ("no first pod exception when the pod does not match itself", THREE, [],
     pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": AFF, "b": AFF, "c": AFF}),
    ("no first pod exception once a matching pod exists elsewhere", THREE, [pod("e", {"app": "db"}, on="c")],
     pod("p", {"app": "db"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": AFF, "b": AFF, "c": None}),
    ("first pod exception across namespaces it does not select", THREE, [pod("e", {"app": "db"}, on="c", ns="ns2")],
     pod("p", {"app": "db"}, aff=affinity(req=[term(ZONE, ml(app="db"))])), {"a": None, "b": None, "c": None}),
    ("required anti-affinity by zone", THREE, [pod("e", {"app": "web"}, on="a")],
     pod("p", aff=affinity(req_anti=[term(ZONE, ml(app="web"))])), {"a": ANTI, "b": ANTI, "c": None}),
    ("required anti-affinity by hostname", THREE, [pod("e", {"app": "web"}, on="a")],
     pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"))])), {"a": ANTI, "b": None, "c": None}),
    ("required anti-affinity: node without the key passes", [zn("a", "z1"), zn("b")], [pod("e", {"app": "web"}, on="a")],
     pod("p", aff=affinity(req_anti=[term(ZONE, ml(app="web"))])), {"a": ANTI, "b": None}),
    ("required anti-affinity matching itself only", THREE, [],
     pod("p", {"app": "web"}, aff=affinity(req_anti=[term(ZONE, ml(app="web"))])), {"a": None, "b": None, "c": None}),
    ("required anti-affinity counts terminating pods", THREE, [pod("e", {"app": "web"}, on="c", terminating=True)],
     pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"))])), {"a": None, "b": None, "c": ANTI}),
    ("affinity failure is reported before anti-affinity", THREE,
     [pod("e", {"app": "web"}, on="a"), pod("f", {"app": "db"}, on="c")],
     pod("p", aff=affinity(req=[term(ZONE, ml(app="db"))], req_anti=[term(ZONE, ml(app="web"))])),
     {"a": AFF, "b": AFF, "c": None}),
    ("existing pod's anti-affinity rejects its zone", THREE,
     [pod("e", {"app": "db"}, on="a", aff=affinity(req_anti=[term(ZONE, ml(app="web"))]))],
     pod("p", {"app": "web"}), {"a": EXISTING, "b": EXISTING, "c": None}),
    ("existing pod's anti-affinity on hostname", THREE,
     [pod("e", {"app": "db"}, on="a", aff=affinity(req_anti=[term(HOST, ml(app="web"))]))],
     pod("p", {"app": "web"}), {"a": EXISTING, "b": None, "c": None}),
    ("existing pod's anti-affinity not matching the pod: skip", THREE,
     [pod("e", {"app": "db"}, on="a", aff=affinity(req_anti=[term(ZONE, ml(app="other"))]))],
     pod("p", {"app": "web"}), "Skip"),
    ("existing pod's anti-affinity in its own namespace only", THREE,
     [pod("e", {"app": "db"}, on="a", ns="ns2", aff=affinity(req_anti=[term(ZONE, ml(app="web"))]))],
     pod("p", {"app": "web"}), "Skip"),
    ("existing pod's anti-affinity with namespaceSelector on the pod's namespace labels", THREE,
     [pod("e", {"app": "db"}, on="a", ns="ns2",
          aff=affinity(req_anti=[term(ZONE, ml(app="web"), ns_selector=ml(team="a"))]))],
     pod("p", {"app": "web"}, ns="ns1"), {"a": EXISTING, "b": EXISTING, "c": None}),
    ("existing pod's anti-affinity with metadata.name namespaceSelector", THREE,
     [pod("e", {"app": "db"}, on="c", ns="ns2",
          aff=affinity(req_anti=[term(HOST, ml(app="web"), ns_selector=ml(**{"kubernetes.io/metadata.name": "ns1"}))]))],
     pod("p", {"app": "web"}, ns="ns1"), {"a": None, "b": None, "c": EXISTING}),
    ("existing pod's required affinity does not filter", THREE,
     [pod("e", {"app": "db"}, on="a", aff=affinity(req=[term(ZONE, ml(app="web"))]))],
     pod("p", {"app": "other"}), "Skip"),
    ("quirk: a NotIn namespaceSelector matches every namespace", THREE,
     [pod("e", {"app": "web"}, on="a", ns="nsx")],
     pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"),
                                          ns_selector={"matchExpressions": [
                                              {"key": "team", "operator": "NotIn", "values": ["x"]}]})])),
     {"a": ANTI, "b": None, "c": None}),
    ("namespaceSelector In resolves only the selected namespaces", THREE,
     [pod("e", {"app": "web"}, on="a", ns="nsx"), pod("f", {"app": "web"}, on="c", ns="ns2")],
     pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"),
                                          ns_selector={"matchExpressions": [
                                              {"key": "team", "operator": "In", "values": ["b"]}]})])),
     {"a": None, "b": None, "c": ANTI}),
    ("nil labelSelector matches no pod", THREE, [pod("e", {"app": "web"}, on="a")],
     pod("p", aff=affinity(req_anti=[term(HOST)])), {"a": None, "b": None, "c": None}),
    ("empty labelSelector matches every pod of the namespace", THREE,
     [pod("e", {"app": "web"}, on="a"), pod("f", {"app": "web"}, on="c", ns="ns2")],
     pod("p", aff=affinity(req_anti=[term(HOST, {})])), {"a": ANTI, "b": None, "c": None}),
]


@pytest.mark.parametrize("nodes,pods,incoming,expected", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(nodes: list, pods: list, incoming: Any, expected: Any) -> None:
    assert run_filter(cluster_state(nodes, pods), incoming) == expected


def test_parse_error_is_unresolvable_at_prefilter() -> None:
    bad = term(ZONE, {"matchExpressions": [{"key": "app", "operator": "Foo"}]})
    incoming = pod("p", aff=affinity(req=[bad]))
    assert incoming.affinity.parse_error
    assert run_filter(cluster_state(THREE, []), incoming) == (
        "UnschedulableAndUnresolvable", 'parsing pod: requiredAffinityTerms: "Foo" is not a valid label selector operator')


def test_filter_without_prefilter_state_is_an_error() -> None:
    cs = cluster_state(THREE, [])
    st = plugin(cs).filter(CycleState(), pod("p"), cs.node_infos[0])
    assert st is not None and st.code == Code.Error
    assert st.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


def test_incoming_terms_are_not_mutated() -> None:
    incoming = pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"), ns_selector=ml(team="b"))]))
    cs = cluster_state(THREE, [])
    run_filter(cs, incoming)
    assert incoming.affinity.required_anti[0].namespaces == frozenset()


# --------------------------------------------------------------------------- AddPod / RemovePod


def _prefiltered(pods: list, incoming: Any) -> tuple[ClusterState, ipa.InterPodAffinity, CycleState]:
    cs = cluster_state(THREE, pods)
    pl = plugin(cs)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, cs.node_infos)
    assert st is None
    return cs, pl, state


def test_add_remove_pod_anti_affinity_on_cloned_state() -> None:
    incoming = pod("p", aff=affinity(req_anti=[term(ZONE, ml(app="web"))]))
    cs, pl, state = _prefiltered([pod("e", {"app": "web"}, on="a")], incoming)
    c = cs.by_name["c"]
    assert pl.filter(state, incoming, c) is None
    clone = state.clone()
    nominated = pod("n", {"app": "web"})
    assert pl.add_pod(clone, incoming, nominated, c) is None
    assert (pl.filter(clone, incoming, c).code, pl.filter(state, incoming, c)) == (Code.Unschedulable, None)
    assert pl.remove_pod(clone, incoming, nominated, c) is None
    assert pl.filter(clone, incoming, c) is None
    s = clone.read(ipa.PRE_FILTER_STATE_KEY)
    assert s.anti_affinity_counts == {(ZONE, "z1"): 1}  # entries that fall to 0 are deleted


def test_remove_pod_clears_affinity_and_enables_first_pod_exception() -> None:
    incoming = pod("p", {"app": "db"}, aff=affinity(req=[term(ZONE, ml(app="db"))]))
    existing = pod("e", {"app": "db"}, on="c")
    cs, pl, state = _prefiltered([existing], incoming)
    assert pl.filter(state, incoming, cs.by_name["a"]).code == Code.UnschedulableAndUnresolvable
    assert pl.remove_pod(state, incoming, existing, cs.by_name["c"]) is None
    assert state.read(ipa.PRE_FILTER_STATE_KEY).affinity_counts == {}
    assert pl.filter(state, incoming, cs.by_name["a"]) is None


def test_add_pod_with_required_anti_affinity_updates_existing_counts() -> None:
    incoming = pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, ml(app="db"))]))
    cs, pl, state = _prefiltered([pod("e", {"app": "db"}, on="c")], incoming)
    assert pl.filter(state, incoming, cs.by_name["c"]) is None
    pl.add_pod(state, incoming, pod("n", {"app": "db"}, aff=affinity(req_anti=[term(HOST, ml(app="web"))])),
               cs.by_name["c"])
    assert pl.filter(state, incoming, cs.by_name["c"]).message() == EXISTING[1]


# --------------------------------------------------------------------------- Score


SCORE_CASES = [
    ("nothing to score: skip", THREE, [pod("e", {"app": "db"}, on="a")], pod("p", {"app": "web"}), None, "Skip"),
    ("preferred terms matching no pod: skip", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(pref=[weighted(5, term(ZONE, ml(app="nope")))])), None, "Skip"),
    ("negative scores normalise [-5, 0, 10] to [0, 33, 100]",
     [zn("a", "z1"), zn("b", "z2"), zn("c", "z3")],
     [pod("e", {"app": "web"}, on="a"), pod("f", {"app": "db"}, on="c")],
     pod("p", aff=affinity(pref=[weighted(10, term(ZONE, ml(app="db")))],
                           pref_anti=[weighted(5, term(ZONE, ml(app="web")))])), None,
     {"a": 0, "b": 33, "c": 100}),
    ("raw scores can be negative", [zn("a", "z1"), zn("b", "z2"), zn("c", "z3")],
     [pod("e", {"app": "web"}, on="a"), pod("f", {"app": "db"}, on="c")],
     pod("p", aff=affinity(pref=[weighted(10, term(ZONE, ml(app="db")))],
                           pref_anti=[weighted(5, term(ZONE, ml(app="web")))])), "raw",
     {"a": -5, "b": 0, "c": 10}),
    ("preferred affinity spreads over the topology value", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(pref=[weighted(7, term(ZONE, ml(app="db")))])), "raw", {"a": 7, "b": 7, "c": 0}),
    ("weights add up per matching pod", THREE,
     [pod("e", {"app": "db"}, on="a"), pod("f", {"app": "db"}, on="b"), pod("g", {"app": "db"}, on="c")],
     pod("p", aff=affinity(pref=[weighted(3, term(ZONE, ml(app="db"))), weighted(1, term(HOST, ml(app="db")))])),
     "raw", {"a": 7, "b": 7, "c": 4}),
    ("existing pod's required affinity adds hardPodAffinityWeight", THREE,
     [pod("e", {"app": "db"}, on="c", aff=affinity(req=[term(ZONE, ml(app="web"))]))],
     pod("p", {"app": "web"}), "raw", {"a": 0, "b": 0, "c": 1}),
    ("existing pod's required anti-affinity does not score", THREE,
     [pod("e", {"app": "db"}, on="c", aff=affinity(req_anti=[term(ZONE, ml(app="web"))]))],
     pod("p", {"app": "web"}), None, "Skip"),
    ("existing pod's preferred affinity and anti-affinity", THREE,
     [pod("e", {"app": "db"}, on="c", aff=affinity(pref=[weighted(4, term(ZONE, ml(app="web")))])),
      pod("f", {"app": "db"}, on="a", aff=affinity(pref_anti=[weighted(6, term(HOST, ml(app="web")))]))],
     pod("p", {"app": "web"}), "raw", {"a": -6, "b": 0, "c": 4}),
    ("existing pod's terms match by the incoming namespace's labels", THREE,
     [pod("e", {"app": "db"}, on="c", ns="ns2",
          aff=affinity(pref=[weighted(4, term(ZONE, ml(app="web"), ns_selector=ml(team="a")))]))],
     pod("p", {"app": "web"}, ns="ns1"), "raw", {"a": 0, "b": 0, "c": 4}),
    ("existing pod's terms in their own namespace only", THREE,
     [pod("e", {"app": "db"}, on="c", ns="ns2", aff=affinity(pref=[weighted(4, term(ZONE, ml(app="web")))]))],
     pod("p", {"app": "web"}, ns="ns1"), None, "Skip"),
    ("pods on nodes without labels are skipped", [zn("a", "z1"), node("b", {})],
     [pod("e", {"app": "db"}, on="b")],
     pod("p", aff=affinity(pref=[weighted(5, term(ZONE, ml(app="db")))])), None, "Skip"),
    ("an entry summing to zero still scores", THREE, [pod("e", {"app": "db"}, on="a")],
     pod("p", aff=affinity(pref=[weighted(5, term(ZONE, ml(app="db")))],
                           pref_anti=[weighted(5, term(ZONE, ml(app="db")))])), None,
     {"a": 0, "b": 0, "c": 0}),
    ("truncation of the float normalisation", [zn("a", "z1"), zn("b", "z2"), zn("c", "z3")],
     [pod("e", {"app": "db"}, on="b"), pod("f", {"app": "db"}, on="c"), pod("g", {"app": "db"}, on="c")],
     pod("p", aff=affinity(pref=[weighted(1, term(ZONE, ml(app="db")))])), None,
     {"a": 0, "b": 50, "c": 100}),
    ("scores of non-feasible nodes' pods still count", THREE, [pod("e", {"app": "db"}, on="b")],
     pod("p", aff=affinity(pref=[weighted(5, term(ZONE, ml(app="db")))])), ["a", "c"], {"a": 100, "c": 0}),
    ("preferred term with namespaceSelector", THREE,
     [pod("e", {"app": "db"}, on="a", ns="ns2"), pod("f", {"app": "db"}, on="c", ns="nsx")],
     pod("p", aff=affinity(pref=[weighted(5, term(HOST, ml(app="db"), ns_selector=ml(team="b")))])), "raw",
     {"a": 5, "b": 0, "c": 0}),
]


@pytest.mark.parametrize("nodes,pods,incoming,feasible,expected", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(nodes: list, pods: list, incoming: Any, feasible: Any, expected: Any) -> None:
    raw = feasible == "raw"
    got = run_score(cluster_state(nodes, pods), incoming, None if raw else feasible, raw=raw)
    assert got == expected


@pytest.mark.parametrize("weight,expected", [(0, "Skip"), (1, {"a": 0, "b": 0, "c": 1}),
                                             (10, {"a": 0, "b": 0, "c": 10})])
def test_hard_pod_affinity_weight(weight: int, expected: Any) -> None:
    cs = cluster_state(THREE, [pod("e", {"app": "db"}, on="c", aff=affinity(req=[term(ZONE, ml(app="web"))]))])
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight)
    assert run_score(cs, pod("p", {"app": "web"}), args=args, raw=True) == expected


@pytest.mark.parametrize("incoming,expected", [
    (pod("p", {"app": "web"}), "Skip"),
    (pod("p", {"app": "web"}, aff=affinity(pref=[weighted(2, term(ZONE, ml(app="db")))])),
     {"a": 2, "b": 2, "c": 4}),
], ids=["no-preferred-terms-skip", "preferred-terms-still-score-existing"])
def test_ignore_preferred_terms_of_existing_pods(incoming: Any, expected: Any) -> None:
    cs = cluster_state(THREE, [pod("e", {"app": "db"}, on="c", aff=affinity(pref=[weighted(2, term(ZONE, ml(app="web")))])),
                               pod("f", {"app": "db"}, on="a")])
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    assert run_score(cs, incoming, args=args, raw=True) == expected


@pytest.mark.parametrize("scores,want", [
    ([-5, 0, 10], [0, 33, 100]),
    ([0, 1, 3], [0, 33, 100]),
    ([0, 2, 3], [0, 66, 100]),
    ([7, 7], [0, 0]),
    ([-3, -1], [0, 100]),
], ids=["negative", "third", "two-thirds", "all-equal", "all-negative"])
def test_normalize_score(scores: list[int], want: list[int]) -> None:
    state = CycleState()
    state.write(ipa.PRE_SCORE_STATE_KEY, ipa.PreScoreState({"zone": {"z": 1}}))
    ns = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert plugin(cluster_state([], [])).normalize_score(state, pod("p"), ns) is None
    assert [s.score for s in ns] == want


def test_default_args() -> None:
    pl = ipa.factory(None, Handle(cluster_state([], [])))
    assert (pl.hard_pod_affinity_weight, pl.ignore_preferred_terms_of_existing_pods) == (1, False)
    assert ipa.decode_args({"hardPodAffinityWeight": 5}).hard_pod_affinity_weight == 5


def test_counts_follow_bindings_across_cycles() -> None:
    cs = cluster_state(THREE, [])
    pl = plugin(cs)
    incoming = pod("p", aff=affinity(req_anti=[term(HOST, ml(app="web"))]))

    def verdicts() -> Any:
        state = CycleState()
        _, st = pl.pre_filter(state, incoming, cs.node_infos)
        assert st is None
        return {ni.name: pl.filter(state, incoming, ni) is None for ni in cs.node_infos}

    assert verdicts() == {"a": True, "b": True, "c": True}
    web = pod("w", {"app": "web"})
    cs.bind(web, "b")
    assert verdicts() == {"a": True, "b": False, "c": True}
    cs.delete_pod(web)
    assert verdicts() == {"a": True, "b": True, "c": True}


@pytest.mark.parametrize("seed", range(6))
def test_batch_normalize_equals_normalize_score_below_and_above_the_table_range(seed: int) -> None:
    """The batched normalization (a table of normalized offsets when the highest raw score is 0 and the
    spread is at most ``_TABLE_DIFF``, else the float steps, truncated into the offsets' own array when the
    lowest is not 0) gives normalize_score's numbers, negative scores and spreads of one included."""
    import random

    import numpy as np

    rng = random.Random(seed)
    plugin = ipa.InterPodAffinity(None)
    state = CycleState()
    state.write(ipa.PRE_SCORE_STATE_KEY, ipa.PreScoreState({ZONE: {"a": 1}}))
    for spread in (1, 2, 3, 7, 99, 100, 101, 997, ipa._TABLE_DIFF, ipa._TABLE_DIFF + 1, 50_000):
        lo = rng.randint(-3 * spread, spread)
        raw = [lo, lo + spread] + [rng.randint(lo, lo + spread) for _ in range(rng.randint(0, 40))]
        rng.shuffle(raw)
        scores = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
        plugin.normalize_score(state, None, scores)  # type: ignore[arg-type]
        got = plugin.batch_normalize(state, None, np.array(raw, dtype=np.int64))  # type: ignore[arg-type]
        assert got.dtype == np.int64
        assert got.tolist() == [s.score for s in scores], spread


@pytest.mark.parametrize("raw", [
    pytest.param([0, 3, 1, 2, 0], id="lowest-0"),
    pytest.param([0, 7, 3, 5], id="lowest-0-odd-spread"),
    pytest.param([-100, 0, -50, -30, -1], id="highest-0"),
    pytest.param([-1, 0, 0, -1], id="highest-0-spread-1"),
    pytest.param([-350, -100, 0, -7, -349], id="highest-0-wide"),
    pytest.param([-5, 5, 0, 3], id="around-0"),
    pytest.param([700, 860, 720], id="above-0"),
    pytest.param([-9, -2, -5], id="below-0"),
])
def test_batch_normalize_indexes_by_the_raw_scores_when_the_lowest_or_highest_is_0(raw: list[int]) -> None:
    """The forms that spare the subtraction of the lowest score (lowest 0: the float steps on the scores
    themselves; highest 0: the table rolled by one, indexed by the scores) give normalize_score's numbers,
    as the other spreads do."""
    import numpy as np

    plugin = ipa.InterPodAffinity(None)
    state = CycleState()
    state.write(ipa.PRE_SCORE_STATE_KEY, ipa.PreScoreState({ZONE: {"a": 1}}))
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    plugin.normalize_score(state, None, scores)  # type: ignore[arg-type]
    got = plugin.batch_normalize(state, None, np.array(raw, dtype=np.int64))  # type: ignore[arg-type]
    assert got.dtype == np.int64
    assert got.tolist() == [s.score for s in scores]


def _raw_scores(pl: ipa.InterPodAffinity, cs: ClusterState, incoming: Any) -> dict[str, int]:
    state = CycleState()
    assert pl.pre_score(state, incoming, cs.node_infos) is None
    out = {}
    for ni in cs.node_infos:
        s, err = pl.score(state, incoming, ni)
        assert err is None
        out[ni.name] = s
    return out


@pytest.mark.parametrize("ns_selector, kept", [
    pytest.param(None, True, id="namespaces-listed"),
    pytest.param({}, True, id="every-namespace"),
    pytest.param(ml(team="b"), False, id="selector-reads-namespaces"),
])
def test_pre_score_terms_kept_per_affinity_object_only_when_resolving_reads_no_namespace(
        ns_selector: dict | None, kept: bool) -> None:
    """The incoming pod's resolved preferred terms are kept per affinity object (the pods of one spec share
    it) only when no namespace selector reads the cluster's namespaces: the same pod on a cluster whose
    namespaces are labelled otherwise gets that cluster's scores (as the reference path does)."""
    nodes = [zn("a", "z1"), zn("b", "z2")]
    t = term(ZONE, ml(app="db"), namespaces=None if ns_selector is not None else ["ns2"], ns_selector=ns_selector)
    incoming = pod("p", aff=affinity(pref=[weighted(10, t)], pref_anti=[weighted(3, term(HOST, ml(app="x")))]))
    first = cluster_state(nodes, [pod("d1", {"app": "db"}, on="a", ns="ns2"), pod("d2", {"app": "db"}, on="b", ns="nsx")])
    second = cluster_state(nodes, [pod("d1", {"app": "db"}, on="a", ns="ns2"), pod("d2", {"app": "db"}, on="b", ns="nsx")],
                           {**NAMESPACES, "ns2": {"team": "a"}, "nsx": {"team": "b"}})
    pl = plugin(first)
    want = {"ns2": {"a": 10, "b": 0}, "nsx": {"a": 0, "b": 10}, "both": {"a": 10, "b": 10}}
    for cs, which in ((first, "ns2"), (second, "nsx"), (first, "ns2")):
        pl.handle.snapshot = cs  # type: ignore[union-attr]
        ref = ipa.factory(None, Handle(cs, batched=False))
        got = _raw_scores(pl, cs, incoming)
        assert got == _raw_scores(ref, cs, incoming)
        assert got == want["both" if ns_selector == {} else "ns2" if ns_selector is None else which]
    assert (id(incoming.affinity) in pl._shapes) == kept
    # another pod of an equal spec (another affinity object) shares the kept sums
    twin = pod("q", aff=affinity(pref=[weighted(10, t)], pref_anti=[weighted(3, term(HOST, ml(app="x")))]))
    assert twin.affinity is not incoming.affinity
    assert _raw_scores(pl, first, twin) == _raw_scores(pl, first, incoming)
    assert len(pl._aggregates) == 2 - kept  # (a selector reading namespaces: one signature per cluster)
