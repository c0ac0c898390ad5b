"""NodeInfo running totals: adding then removing pods leaves them as they were."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pysched.model.objects import parse_node, parse_pod
from pysched.snapshot.cluster import node_tree_order, zone_key
from pysched.snapshot.nodeinfo import NodeInfo

NODE = parse_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                   "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})

quantities = st.sampled_from(["0", "1m", "100m", "0.5", "1", "1.5Gi", "300Mi", "2"])
pods = st.builds(
    lambda i, cpu, mem, port, sidecar: parse_pod({
        "metadata": {"name": f"p{i}", "namespace": "ns"},
        "spec": {
            "initContainers": [{"name": "s", "restartPolicy": "Always" if sidecar else "Never",
                                "resources": {"requests": {"cpu": cpu}}}],
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem,
                                                                    "example.com/gpu": "1"}},
                            "ports": [{"containerPort": 80, "hostPort": port}] if port else []}]}}),
    st.integers(0, 10**6), quantities, quantities, st.sampled_from([0, 80, 443]), st.booleans())


def _totals(ni: NodeInfo) -> tuple:
    return (ni.requested.as_tuple(), ni.non_zero_requested.as_tuple(), len(ni.pods),
            {ip: dict(p) for ip, p in ni.used_ports.items()})


@settings(max_examples=60, deadline=None)
@given(st.lists(pods, max_size=6, unique_by=lambda p: p.key), st.lists(pods, min_size=1, max_size=6, unique_by=lambda p: p.key))
def test_add_then_remove_restores_totals(base, extra) -> None:
    ni = NodeInfo(NODE)
    for p in base:
        ni.add_pod(p)
    before = _totals(ni)
    extra = [p for p in extra if p.key not in {b.key for b in base}]
    for p in extra:
        ni.add_pod(p)
    for p in reversed(extra):
        assert ni.remove_pod(p)
    assert _totals(ni) == before


@settings(max_examples=30, deadline=None)
@given(st.lists(pods, max_size=5))
def test_clone_is_independent(base) -> None:
    ni = NodeInfo(NODE)
    for p in base:
        ni.add_pod(p)
    before = _totals(ni)
    c = ni.clone()
    for p in base:
        c.remove_pod(p)
    assert _totals(ni) == before


def _pod(name: str, uid: str) -> object:
    return parse_pod({"metadata": {"name": name, "namespace": "ns", "uid": uid},
                      "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})


@pytest.mark.parametrize(("remove", "found", "left"), [
    ("a", True, ["d", "b", "c"]),  # the same object; the last pod takes its place
    ("d", True, ["a", "b", "c"]),
    ("copy of b", True, ["a", "d", "c"]),  # another object with b's namespace/name and UID
    ("b with another uid", False, ["a", "b", "c", "d"]),
    ("e", False, ["a", "b", "c", "d"]),
], ids=["first", "last", "same-key-and-uid", "other-uid", "absent"])
def test_remove_pod_finds_the_object_else_its_key_and_uid(remove: str, found: bool, left: list[str]) -> None:
    ni = NodeInfo(NODE)
    pods = {n: _pod(n, f"uid-{n}") for n in "abcd"}
    for p in pods.values():
        ni.add_pod(p)
    target = {"copy of b": _pod("b", "uid-b"), "b with another uid": _pod("b", "uid-x"),
              "e": _pod("e", "uid-e")}.get(remove) or pods[remove]
    assert ni.remove_pod(target) is found
    assert [p.name for p in ni.pods] == left
    assert ni.requested.milli_cpu == 1000 * len(left)


def _node(name: str, zone: str | None) -> object:
    labels = {"topology.kubernetes.io/zone": zone} if zone else {}
    return parse_node({"metadata": {"name": name, "labels": labels}})


def test_node_tree_interleaves_zones() -> None:
    nodes = [_node("a1", "A"), _node("a2", "A"), _node("a3", "A"), _node("b1", "B")]
    assert [n.name for n in node_tree_order(nodes)] == ["a1", "b1", "a2", "a3"]


def test_zone_key_beta_label_presence_wins() -> None:
    labels = {"failure-domain.beta.kubernetes.io/zone": "", "topology.kubernetes.io/zone": "z"}
    assert zone_key(labels) == ""
