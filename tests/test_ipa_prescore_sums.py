"""InterPodAffinity on the batched path keeps the existing pods' terms counted per domain across cycles
(``_ExistingTerms``) and per incoming pod shape the sums of those that match it (``_MatchedSums``): PreScore's
scoring terms and PreFilter's required anti-affinity terms; the incoming pod's own terms (PreScore's preferred,
PreFilter's required) are kept by replaying the pods that moved (``TopologyArrays.pod_events``, only those with
a label the term's selector requires). Checked here against the upstream rules written out plainly, node by
node and pod by pod, while pods are bound and deleted between the calls: every (topology key, value) entry,
including PreScore entries whose weights cancel out, and Skip exactly when upstream's maps are empty.
PodTopologySpread's per-node match counts, kept the same way, likewise against ``count_matching`` node by
node."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.framework.config import load_config
from pysched.framework.cycle_state import CycleState
from pysched.framework.status import Code
from pysched.model.labels import LabelSelector
from pysched.model.objects import AffinityTerm, Pod
from pysched.plugins import in_tree_registry
from pysched.plugins.interpodaffinity import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    InterPodAffinity,
    term_matches,
)
from pysched.plugins.topology_arrays import count_matching, topology_arrays
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.columns import columns_for
from pysched.snapshot.loader import load_snapshot
from tests.builders import topology_cluster

REGISTRY = in_tree_registry()
CONFIG = load_config(None, REGISTRY)


def _upstream_map(ipa: InterPodAffinity, pod: Pod, sim: Simulation) -> dict[str, dict[str, int]]:
    """processExistingPod over every node, as upstream's PreScore does it (no memo, no arrays)."""
    aff = pod.affinity
    pref: list[tuple[AffinityTerm, int]] = [(t, t.weight) for t in ipa.resolve_terms(aff.preferred_affinity)]
    pref += [(t, -t.weight) for t in ipa.resolve_terms(aff.preferred_anti)]
    ns_labels = sim.state.ns_labels(pod.namespace)
    hard = ipa.hard_pod_affinity_weight
    out: dict[str, dict[str, int]] = {}

    def add(key: str, labels: dict[str, str], w: int) -> None:
        if key in labels:
            m = out.setdefault(key, {})
            m[labels[key]] = m.get(labels[key], 0) + w

    for ni in sim.state.node_infos:
        labels = ni.node.labels
        for ep in (ni.pods if pref else ni.pods_with_affinity):
            for t, w in pref:
                if term_matches(t, ep, None):
                    add(t.topology_key, labels, w)
            ea = ep.affinity
            existing = [(t, hard) for t in ea.required_affinity if hard > 0]
            existing += [(t, t.weight) for t in ea.preferred_affinity] + [(t, -t.weight) for t in ea.preferred_anti]
            for t, w in existing:
                if term_matches(t, pod, ns_labels):
                    add(t.topology_key, labels, w)
    return out


def _upstream_existing_anti(pod: Pod, sim: Simulation) -> dict[tuple[str, str], int]:
    """getExistingAntiAffinityCounts: existing pods' required anti-affinity terms matching the pod."""
    ns_labels = sim.state.ns_labels(pod.namespace)
    out: dict[tuple[str, str], int] = {}
    for ni in sim.state.node_infos:
        labels = ni.node.labels
        for ep in ni.pods_with_required_anti_affinity:
            for t in ep.affinity.required_anti:
                if t.topology_key in labels and term_matches(t, pod, ns_labels):
                    pair = (t.topology_key, labels[t.topology_key])
                    out[pair] = out.get(pair, 0) + 1
    return out


def _upstream_incoming(ipa: InterPodAffinity, pod: Pod, sim: Simulation
                       ) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """getIncomingAffinityAntiAffinityCounts: the existing pods matching all of the pod's required affinity
    terms (counted once per term's key), and those matching each required anti-affinity term."""
    aff = ipa.resolve_terms(pod.affinity.required_affinity)
    anti = ipa.resolve_terms(pod.affinity.required_anti)
    affinity: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    for ni in sim.state.node_infos:
        labels = ni.node.labels
        for ep in ni.pods:
            if aff and all(term_matches(t, ep, None) for t in aff):
                for t in aff:
                    if t.topology_key in labels:
                        pair = (t.topology_key, labels[t.topology_key])
                        affinity[pair] = affinity.get(pair, 0) + 1
            for t in anti:
                if t.topology_key in labels and term_matches(t, ep, None):
                    pair = (t.topology_key, labels[t.topology_key])
                    anti_counts[pair] = anti_counts.get(pair, 0) + 1
    return affinity, anti_counts


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 100_000))
def test_kept_sums_equal_the_upstream_maps_while_pods_come_and_go(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(topology_cluster(seed, 40, 60, 60)))
    sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions())
    ipa = next(p for p in sim.frameworks["default-scheduler"].pre_score if isinstance(p, InterPodAffinity))
    rng = random.Random(seed)
    nodes = sim.state.node_infos
    bound: list[Pod] = [p for p in sim.cluster.pods if p.node_name]
    checked = {"entries": 0, "skip": 0, "deleted": 0, "anti": 0, "counted": 0, "incoming": 0}
    pending = [p for p in sim.cluster.pods if not p.node_name]
    for at, incoming in enumerate(pending):
        # twice (the second call reads the sums kept from the first), and two pods met before: their
        # kept sums replay what moved since
        for pod in [incoming, incoming, *rng.sample(pending[:at], min(2, at))]:
            state = CycleState()
            _, pf = ipa.pre_filter(state, pod, nodes)
            want_anti = _upstream_existing_anti(pod, sim)
            if pf is not None and pf.code == Code.Skip:
                assert want_anti == {} and not pod.affinity.required_affinity and not pod.affinity.required_anti
            else:
                s = state.read(PRE_FILTER_STATE_KEY)
                assert s.existing_anti_affinity_counts == want_anti, pod.key
                checked["anti"] += len(want_anti)
                # the incoming pod's required terms against the pods (kept by replaying the pods that moved)
                want_aff, want_inc_anti = _upstream_incoming(ipa, pod, sim)
                assert (s.affinity_counts, s.anti_affinity_counts) == (want_aff, want_inc_anti), pod.key
                checked["incoming"] += len(want_aff) + len(want_inc_anti)
            status = ipa.pre_score(state, pod, nodes)
            want = _upstream_map(ipa, pod, sim)
            if status is not None and status.code == Code.Skip:
                assert want == {}, pod.key
                checked["skip"] += 1
            else:
                assert status is None
                assert state.read(PRE_SCORE_STATE_KEY).topology_score == want, pod.key
                checked["entries"] += sum(len(v) for v in want.values())
        for app in ("a", "b", "c"):  # PodTopologySpread's counts, with pods moved since their last use
            sel = LabelSelector.from_map({"app": app})
            topo = topology_arrays(columns_for(sim.state))
            got = topo.match_counts(sim.state, sel, "default", ("app", app)).tolist()
            assert got == [count_matching(ni.pods, sel, "default") for ni in topo.cols.infos]
            checked["counted"] += sum(got)
        sim.state.bind(incoming, rng.choice(nodes).name)
        bound.append(incoming)
        if rng.random() < 0.3:  # a pod leaves (as a preemption victim does)
            victim = bound.pop(rng.randrange(len(bound)))
            sim.state.delete_pod(victim)
            checked["deleted"] += 1
    assert checked["entries"] > 50 and checked["anti"] > 20 and checked["deleted"] > 5 \
        and checked["counted"] > 100 and checked["incoming"] > 20, checked


def _pod_doc(name: str, app: str, preferred_app: str | None = None, node: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "img"}]}
    if node:
        spec["nodeName"] = node
    if preferred_app:
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 7, "podAffinityTerm": {"topologyKey": "zone",
                                              "labelSelector": {"matchLabels": {"app": preferred_app}}}}]}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name,
                                                            "labels": {"app": app}}, "spec": spec}


def test_skip_follows_the_kept_sums_as_matching_pods_come_and_go(tmp_path: Path) -> None:
    """A kept per-shape sum goes from empty to holding an entry and back: PreScore skips, scores, skips."""
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
              "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}} for i in range(4)]
    items += [_pod_doc("bystander", "y", preferred_app="nobody", node="n0"), _pod_doc("incoming", "x"),
              _pod_doc("friend", "z", preferred_app="x")]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions())
    ipa = next(p for p in sim.frameworks["default-scheduler"].pre_score if isinstance(p, InterPodAffinity))
    pods = {p.name: p for p in sim.cluster.pods}

    def pre_score() -> object:
        state = CycleState()
        st = ipa.pre_score(state, pods["incoming"], sim.state.node_infos)
        return "Skip" if st is not None and st.code == Code.Skip else state.read(PRE_SCORE_STATE_KEY).topology_score

    assert pre_score() == "Skip"
    sim.state.bind(pods["friend"], "n1")
    assert pre_score() == {"zone": {"z1": 7}}
    sim.state.delete_pod(next(p for ni in sim.state.node_infos for p in ni.pods if p.name == "friend"))
    assert pre_score() == "Skip"


# the incoming pod's preferred term, by what the replay of the pods that moved reads of it: a label hint or
# none (every moved pod asked), listed namespaces, a namespace selector matching the nil labels (any
# namespace) or resolved into names, a key some nodes lack
_TERM_SHAPES = {
    "hint": {"labelSelector": {"matchLabels": {"app": "a"}}},
    "no-hint": {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}},
    "namespaces": {"labelSelector": {"matchLabels": {"app": "a"}}, "namespaces": ["other"]},
    "any-namespace": {"labelSelector": {"matchLabels": {"app": "a"}}, "namespaceSelector": {}},
    "namespace-selector": {"labelSelector": {"matchLabels": {"app": "a"}},
                           "namespaceSelector": {"matchLabels": {"team": "y"}}},
    "rack": {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
             "topologyKey": "rack"},
}


@pytest.mark.parametrize("shape", list(_TERM_SHAPES), ids=list(_TERM_SHAPES))
@pytest.mark.parametrize("anti", [False, True], ids=["affinity", "anti-affinity"])
def test_incoming_sums_replay_the_pods_that_moved(shape: str, anti: bool, tmp_path: Path) -> None:
    """The incoming pod's preferred term against the pods, kept across binds and deletions of pods in
    both namespaces (``_IncomingSums``: made from the labelled pods, then the moves replayed), equals the
    upstream map every time."""
    items: list[dict] = [{"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": ns, "labels": {"team": t}}} for ns, t in (("default", "x"), ("other", "y"))]
    for i in range(6):
        labels = {"zone": f"z{i % 3}"}
        if i % 2:
            labels["rack"] = f"r{i % 4}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels},
                      "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "20"}}})
    term = {"topologyKey": "zone", **_TERM_SHAPES[shape]}
    kind = "podAntiAffinity" if anti else "podAffinity"
    incoming = _pod_doc("incoming", "x")
    incoming["spec"]["affinity"] = {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 9, "podAffinityTerm": term}]}}
    items.append(incoming)
    rng = random.Random(7)
    for i in range(12):
        doc = _pod_doc(f"p{i}", rng.choice(["a", "b", "c"]), node=f"n{rng.randrange(6)}" if i < 4 else "")
        doc["metadata"]["namespace"] = rng.choice(["default", "other"])
        items.append(doc)
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions())
    ipa = next(p for p in sim.frameworks["default-scheduler"].pre_score if isinstance(p, InterPodAffinity))
    pods = {p.name: p for p in sim.cluster.pods}
    nonzero = 0
    for i in range(4, 12):
        state = CycleState()
        status = ipa.pre_score(state, pods["incoming"], sim.state.node_infos)
        want = _upstream_map(ipa, pods["incoming"], sim)
        got = "Skip" if status is not None and status.code == Code.Skip else state.read(PRE_SCORE_STATE_KEY).topology_score
        assert got == (want or "Skip"), i
        nonzero += got != "Skip"
        sim.state.bind(pods[f"p{i}"], f"n{rng.randrange(6)}")
        if i % 3 == 0:  # a pod leaves
            sim.state.delete_pod(next(p for ni in sim.state.node_infos for p in ni.pods if p.name == f"p{i - 2}"))
    assert nonzero >= 2
