"""``ClusterState.bind``: the pod leaves any nomination (its nominatedNodeName reads "" afterwards), joins
its node, and its PVC volumes count as used; the node is logged for the caches that follow changes."""

from __future__ import annotations

import pytest

from tests.builders import cluster_state, make_node, make_pod

BIND_CASES = {
    "plain-pod": (None, {}, {}),
    "nominated-to-the-node": ("n1", {}, {}),
    "nominated-elsewhere": ("n0", {}, {}),
    "pvc-volume": (None, {"persistentVolumeClaim": {"claimName": "data"}}, {"default/data": 1}),
    "empty-dir-volume": (None, {"emptyDir": {}}, {}),
}


@pytest.mark.parametrize("case", list(BIND_CASES))
def test_bind_leaves_nominations_and_counts_claims(case: str) -> None:
    nominated_to, volume, claims = BIND_CASES[case]
    state = cluster_state([make_node("n0").alloc({"cpu": "4", "memory": "8Gi", "pods": "110"}),
                           make_node("n1").alloc({"cpu": "4", "memory": "8Gi", "pods": "110"})])
    builder = make_pod("p").container({"cpu": "1", "memory": "1Gi"})
    if volume:
        builder = builder.volume("v", **volume)
    pod = builder.pod(0)
    other = make_pod("q").container({"cpu": "1"}).pod(1)
    if nominated_to is not None:
        state.nominate(pod, nominated_to)
        state.nominate(other, nominated_to)
    state.bind(pod, "n1")
    assert state.nominated_node_name(pod) == "" and pod.key not in state.nomination_of
    assert all(pod not in pods for pods in state.nominated.values())
    if nominated_to is not None:  # the other pod nominated there stays
        assert state.nominated[nominated_to] == [other] and state.nominated_node_name(other) == nominated_to
    assert [p.key for p in state.get("n1").pods] == [pod.key] and state.node_name_of(pod) == "n1"
    assert pod.key in state.bound_here and state.change_log == ["n1"]
    assert state.storage.used_claims == claims


CHANGE_CASES = {
    "one-bind": (["bind p n1"], ["n1"], ["p"]),
    "binds-then-a-delete": (["bind p n1", "bind q n0", "delete p"], ["n1", "n0", "n1"], ["p", "q", None]),
    "delete-of-a-pod-bound-nowhere": (["delete p"], [], []),
}


@pytest.mark.parametrize("case", list(CHANGE_CASES))
def test_change_pods_name_the_bound_pod_of_each_logged_change(case: str) -> None:
    """``change_pods`` runs beside ``change_log``: the pod a bind placed, None where a pod left a node."""
    steps, log, moved = CHANGE_CASES[case]
    state = cluster_state([make_node("n0").alloc({"cpu": "4", "pods": "110"}),
                           make_node("n1").alloc({"cpu": "4", "pods": "110"})])
    pods = {name: make_pod(name).container({"cpu": "1"}).pod(i) for i, name in enumerate("pq")}
    for step in steps:
        verb, name, *node = step.split()
        if verb == "bind":
            state.bind(pods[name], node[0])
        else:
            state.delete_pod(pods[name])
    assert state.change_log == log
    assert [p if p is None else p.name for p in state.change_pods] == moved
