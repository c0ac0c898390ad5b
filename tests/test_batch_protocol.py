"""The batched plugin protocol (``framework/batch.py``): every ``batch_filter`` verdict and every
``batch_score`` array equals the plugin's own per-node ``filter`` / ``score`` on every node, on random
clusters (resources incl. an extended one, taints, labels, images, bound pods)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle
from pysched.framework.status import Code
from pysched.plugins.imagelocality import ImageLocality
from pysched.plugins.nodeaffinity import NodeAffinity
from pysched.plugins.nodename import NodeName
from pysched.plugins.noderesources.balanced_allocation import BalancedAllocation
from pysched.plugins.noderesources.fit import Fit
from pysched.plugins.nodeunschedulable import NodeUnschedulable
from pysched.plugins.tainttoleration import TaintToleration
from pysched.snapshot.columns import NodeColumns
from tests.builders import cluster_state, make_node, make_pod

GPU = "example.com/gpu"
IMAGES = ["app:1", "app:2", "db:16", "registry.k8s.io/pause:3.10"]

node_spec = st.fixed_dictionaries({
    "cpu": st.sampled_from(["0", "1", "2", "4"]), "mem": st.sampled_from(["0", "1Gi", "4Gi"]),
    "pods": st.sampled_from(["1", "2", "110"]), "gpu": st.sampled_from([None, "0", "1", "4"]),
    "zone": st.sampled_from(["a", "b", "c"]), "taint": st.sampled_from([None, "NoSchedule", "PreferNoSchedule", "spot", "both"]),
    "cordon": st.booleans(), "images": st.lists(st.sampled_from(IMAGES), max_size=3, unique=True),
    "load": st.lists(st.tuples(st.sampled_from(["0", "500m", "1500m"]), st.sampled_from(["0", "512Mi", "3Gi"]),
                               st.sampled_from([0, 0, 1, 3])), max_size=2),
})
pod_spec = st.fixed_dictionaries({
    "cpu": st.sampled_from([None, "0", "100m", "1", "3"]), "mem": st.sampled_from([None, "256Mi", "2Gi", "8Gi"]),
    "gpu": st.sampled_from([None, 1, 2, 8]), "tolerate": st.sampled_from([False, True, "PreferNoSchedule", ""]), "zone": st.sampled_from([None, "a", "b"]),
    "prefer": st.sampled_from([None, "a", "c"]), "images": st.lists(st.sampled_from(IMAGES), min_size=1, max_size=3),
    "node_name": st.sampled_from(["", "n1", "n3"]),
})


def build(nodes: list[dict], pod: dict):
    builders, bound = [], []
    for i, spec in enumerate(nodes):
        alloc = {"cpu": spec["cpu"], "memory": spec["mem"], "pods": spec["pods"]}
        if spec["gpu"] is not None:
            alloc[GPU] = spec["gpu"]
        b = make_node(f"n{i}").alloc(alloc).label("zone", spec["zone"])
        if spec["taint"] == "both":  # two taints: the status names the first untolerated one
            b = b.taint("dedicated", "x", "NoSchedule").taint("spot", "y", "NoExecute")
        elif spec["taint"] == "spot":  # a second untolerated taint: rejected rows with two different statuses
            b = b.taint("spot", "y", "NoExecute")
        elif spec["taint"]:
            b = b.taint("dedicated", "x", spec["taint"])
        if spec["cordon"]:
            b = b.unschedulable()
        for img in spec["images"]:
            b = b.image([img], 300 * 1024 * 1024)
        builders.append(b)
        for j, (cpu, mem, gpu) in enumerate(spec["load"]):
            req = {"cpu": cpu, "memory": mem, **({GPU: str(gpu)} if gpu else {})}
            bound.append(make_pod(f"b{i}-{j}").container(req).node_name(f"n{i}"))
    p = make_pod("incoming")
    req = {k: v for k, v in (("cpu", pod["cpu"]), ("memory", pod["mem"])) if v is not None}
    if pod["gpu"]:
        req[GPU] = str(pod["gpu"])
    for k, img in enumerate(pod["images"]):
        p = p.container(req if k == 0 else {}, image=img)
    if pod["tolerate"] is True:
        p = p.toleration("dedicated", "x", "NoSchedule")
    elif pod["tolerate"] is not False:  # Score's tolerations: PreferNoSchedule, or every effect ("")
        p = p.toleration("dedicated", "x", pod["tolerate"])
    if pod["zone"]:
        p.spec["nodeSelector"] = {"zone": pod["zone"]}
    if pod["prefer"]:
        p = p.preferred(5, {"matchExpressions": [{"key": "zone", "operator": "In", "values": [pod["prefer"]]}]})
    if pod["node_name"]:
        p.spec["nodeName"] = pod["node_name"]
    state = cluster_state(builders, bound)
    return state, p.pod(len(bound))


@settings(max_examples=60, deadline=None)
@given(st.lists(node_spec, min_size=1, max_size=12), pod_spec)
def test_batch_forms_equal_the_per_node_forms(nodes: list[dict], pod_d: dict) -> None:
    cluster, pod = build(nodes, pod_d)
    cols = NodeColumns(cluster)
    infos = cluster.node_infos
    state = CycleState()
    handle = Handle(cluster)
    filters = [Fit(), NodeUnschedulable(), NodeName(), TaintToleration(), NodeAffinity()]
    for p in filters:
        if hasattr(p, "pre_filter"):
            p.pre_filter(state, pod, infos)
    for p in filters:
        v = p.batch_filter(state, pod, cols)
        if v is None:  # a shape met once: the second call builds the mask
            v = p.batch_filter(state, pod, cols)
        assert v is not None, p.name
        per_node = [p.filter(state, pod, ni) for ni in infos]
        assert v.ok.tolist() == [st is None or st.code == Code.Success for st in per_node], p.name
        rejected = np.flatnonzero(~v.ok)
        got = v.statuses(rejected)
        want = [per_node[i] for i in rejected.tolist()]
        assert [(s.code, s.reasons) for s in got] == [(s.code, s.reasons) for s in want], p.name
    rows = np.arange(len(infos), dtype=np.int64)[::-1].copy()  # any order of rows
    scorers = [Fit(), BalancedAllocation(), TaintToleration(), NodeAffinity(), ImageLocality(handle)]
    for p in scorers:
        st = p.pre_score(state, pod, infos) if hasattr(p, "pre_score") else None
        if st is not None and st.code == Code.Skip:
            continue
        arr = p.batch_score(state, pod, cols, rows)
        want = [p.score(state, pod, infos[i])[0] for i in rows.tolist()]
        if arr is not None:
            assert arr.dtype == np.int64
            assert arr.tolist() == want, p.name
            if hasattr(p, "batch_normalize"):
                assert p.batch_normalize(state, pod, arr).tolist() == p.normalize_values(state, pod, want), p.name


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=6), st.lists(st.integers(0, 5), max_size=12),
       st.sampled_from([None, "100m"]))
def test_fit_verdict_follows_the_rows_filling_up(pods: list[str], binds: list[int], cpu: str | None) -> None:
    """The rows without room for one more pod (``NodeColumns.full_rows``) follow binds and removals, and
    NodeResourcesFit's verdict (which leaves its pods check out while no row is full) equals ``filter``."""
    from pysched.snapshot.columns import columns_for

    state = cluster_state([make_node(f"n{i}").alloc({"cpu": "4", "memory": "4Gi", "pods": n})
                           for i, n in enumerate(pods)])
    incoming = make_pod("incoming").container({"cpu": cpu} if cpu else {}).pod(0)
    placed = []
    for k, node in enumerate([*binds, -1, -1]):
        if node >= 0:
            placed.append(make_pod(f"b{k}").container({"cpu": "100m"}).pod(k + 1))
            state.bind(placed[-1], f"n{node % len(pods)}")
        elif placed:  # (then two removals)
            state.delete_pod(placed.pop(0))
        cols = columns_for(state)
        assert cols.full_rows == {i for i, room in enumerate(cols.pod_room.tolist()) if not room}
        assert cols.full_rows == {i for i, ni in enumerate(state.node_infos)
                                  if len(ni.pods) >= ni.allocatable.allowed_pod_number}
        cycle = CycleState()
        fit = Fit()
        fit.pre_filter(cycle, incoming, state.node_infos)
        v = fit.batch_filter(cycle, incoming, cols)
        assert v is not None
        per_node = [fit.filter(cycle, incoming, ni) for ni in state.node_infos]
        assert v.ok.tolist() == [s is None for s in per_node]
        rejected = np.flatnonzero(~v.ok)
        assert [(s.code, s.reasons) for s in v.statuses(rejected)] == \
            [(per_node[i].code, per_node[i].reasons) for i in rejected.tolist()]  # type: ignore[union-attr]


def test_passing_verdicts_are_shared_per_set_of_columns() -> None:
    """NodeName (no nodeName) and NodeUnschedulable (tolerated, or no cordoned node) hand out one verdict
    passing every row per set of columns (its ``ok`` the shared every-row array the batched Filter skips);
    new columns get a new one, and a cordoned node is still rejected."""
    from pysched.framework.batch import every_row_passes

    state = cluster_state([make_node("a"), make_node("b")])
    cols = NodeColumns(state)
    pods = [make_pod("p").pod(0), make_pod("q").toleration("node.kubernetes.io/unschedulable", "", "NoSchedule").pod(1)]
    for plugin in (NodeName(), NodeUnschedulable()):
        verdicts = [plugin.batch_filter(CycleState(), p, cols) for p in pods]
        assert verdicts[0] is verdicts[1] and verdicts[0] is not None
        assert verdicts[0].ok is every_row_passes(cols)
        other = NodeColumns(state)
        again = plugin.batch_filter(CycleState(), pods[0], other)
        assert again is not verdicts[0] and again is not None and again.ok is every_row_passes(other)
    cordoned = NodeColumns(cluster_state([make_node("a"), make_node("b").unschedulable()]))
    v = NodeUnschedulable().batch_filter(CycleState(), pods[0], cordoned)
    assert v is not None and v.ok.tolist() == [True, False]
    assert [s.reasons for s in v.statuses(np.array([1]))] == [["node(s) were unschedulable"]]


@pytest.mark.parametrize(("request_", "full"), [
    ({"cpu": "1", "memory": "1Gi"}, False),
    ({"cpu": "1", "memory": "1Gi"}, True),
    ({"cpu": "1", "memory": "1Gi", "ephemeral-storage": "2Gi"}, False),
    ({"cpu": "3", "memory": "1Gi", GPU: "1"}, False),
    ({"cpu": "1"}, False),
], ids=["cpu-memory", "cpu-memory-a-full-row", "with-ephemeral-storage", "with-a-scalar", "cpu-only"])
def test_fit_verdict_checks_every_requested_resource(request_: dict[str, str], full: bool) -> None:
    """NodeResourcesFit's verdict (its short form for cpu and memory only, and the form with the other
    checks) equals ``filter`` node by node, over every row and over a span of rows."""
    from pysched.snapshot.columns import columns_for

    nodes = [make_node(f"n{i}").alloc({"cpu": cpu, "memory": "4Gi", "ephemeral-storage": eph, "pods": "1" if i == 0 else "9",
                                       GPU: gpu})
             for i, (cpu, eph, gpu) in enumerate([("4", "10Gi", "1"), ("2", "1Gi", "0"), ("4", "3Gi", "2"), ("1", "5Gi", "1")])]
    bound = [make_pod("b").container({"cpu": "500m"}).node_name("n0")] if full else []
    state = cluster_state(nodes, bound)
    incoming = make_pod("incoming").container(request_).pod(len(bound))
    cols = columns_for(state)
    cycle = CycleState()
    fit = Fit()
    fit.pre_filter(cycle, incoming, state.node_infos)
    per_node = [fit.filter(cycle, incoming, ni) for ni in state.node_infos]
    for v, lo in ((fit.batch_filter(cycle, incoming, cols), 0), (fit.batch_filter_span(cycle, incoming, cols, 1, 4), 1)):
        assert v is not None
        want = per_node[lo:]
        assert v.ok.tolist() == [s is None for s in want]
        rejected = np.flatnonzero(~v.ok)
        assert [(s.code, s.reasons) for s in v.statuses(rejected)] == \
            [(want[i].code, want[i].reasons) for i in rejected.tolist()]  # type: ignore[union-attr]
