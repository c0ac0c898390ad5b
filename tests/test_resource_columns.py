"""LeastAllocated's and BalancedAllocation's column scores (the batched path) equal the per-node scorer,
with any resource weights and with nodes that lack a resource (allocatable 0), on random clusters."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pysched.plugins.noderesources.fit import LEAST_ALLOCATED
from pysched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    balanced_scorer,
    least_allocated_scorer,
    pod_request_list,
)
from pysched.snapshot.columns import NodeColumns, columns_for
from tests.builders import cluster_state, make_node, make_pod
from tests.test_batch_protocol import build, node_spec, pod_spec


@settings(max_examples=40, deadline=None)
@given(st.lists(node_spec, min_size=1, max_size=12), pod_spec, st.integers(1, 5), st.integers(1, 5))
def test_column_scores_equal_the_per_node_scores(nodes: list[dict], pod_d: dict, w_cpu: int, w_mem: int) -> None:
    cluster, pod = build(nodes, pod_d)
    cols = NodeColumns(cluster)
    infos = cluster.node_infos
    rows = np.arange(len(infos), dtype=np.int64)[::-1].copy()
    resources = [("cpu", w_cpu), ("memory", w_mem)]
    least = ResourceAllocationScorer(LEAST_ALLOCATED, resources, least_allocated_scorer([w_cpu, w_mem]),
                                     use_requested=False, pod_level=False)
    balanced = ResourceAllocationScorer("BalancedAllocation", [("cpu", 1), ("memory", 1)], balanced_scorer,
                                        use_requested=True, pod_level=True)
    for scorer in (least, balanced):
        reqs = scorer.pod_requests(pod)
        got = scorer.score_rows(cols, rows, reqs)
        assert got is not None
        want = [scorer.score(infos[i], reqs)[0] for i in rows.tolist()]
        assert got.tolist() == want, scorer.name


_amount = st.sampled_from([None, "0", "100m", "1", "250Mi", "2Gi"])
_container = st.fixed_dictionaries({"cpu": _amount, "memory": _amount})


@settings(max_examples=60, deadline=None)
@given(st.lists(_container, min_size=1, max_size=3), st.lists(st.tuples(_container, st.booleans()), max_size=3),
       st.one_of(st.none(), _container), st.one_of(st.none(), _container),
       st.sampled_from([[("cpu", 1), ("memory", 1)], [("memory", 2)], [("cpu", 3)], [("memory", 1), ("cpu", 1)]]))
def test_pod_requests_equal_the_request_list(containers: list[dict], inits: list[tuple[dict, bool]],
                                             pod_level: dict | None, overhead: dict | None,
                                             resources: list[tuple[str, int]]) -> None:
    """The scorers' pod requests (taken from what the parser derived) equal upstream's
    calculatePodResourceRequestList worked out from the containers, for both scorers' settings."""
    b = make_pod("p")
    for c in containers:
        b = b.container({k: v for k, v in c.items() if v is not None})
    for c, sidecar in inits:
        b = b.init({k: v for k, v in c.items() if v is not None}, sidecar=sidecar)
    if pod_level is not None and any(v is not None for v in pod_level.values()):
        b = b.pod_req({k: v for k, v in pod_level.items() if v is not None})
    if overhead is not None and any(v is not None for v in overhead.values()):
        b = b.overhead({k: v for k, v in overhead.items() if v is not None})
    pod = b.pod()
    for use_requested, level in ((False, False), (True, True)):
        scorer = ResourceAllocationScorer(LEAST_ALLOCATED, resources, least_allocated_scorer([1] * len(resources)),
                                          use_requested=use_requested, pod_level=level)
        assert scorer.pod_requests(pod) == pod_request_list(pod, scorer.resources, use_requested, level)


_positive_node = st.fixed_dictionaries({
    "cpu": st.sampled_from(["100m", "1", "2", "4", "96"]), "mem": st.sampled_from(["1", "1Gi", "4Gi", "1Ti"]),
    "load": st.lists(st.tuples(st.sampled_from(["0", "500m", "1500m", "8"]), st.sampled_from(["0", "512Mi", "3Gi", "2Ti"])),
                     max_size=2),
})


@settings(max_examples=40, deadline=None)
@given(st.lists(_positive_node, min_size=1, max_size=10), st.sampled_from([None, "0", "100m", "1", "3", "200"]),
       st.sampled_from([None, "0", "256Mi", "2Gi", "3Ti", "8E"]), st.integers(1, 5), st.integers(1, 5),
       st.booleans(), st.data())
def test_two_row_scores_of_a_span_equal_the_per_node_scores(nodes: list[dict], cpu: str | None, mem: str | None,
                                                            w_cpu: int, w_mem: int, mem_first: bool,
                                                            data: st.DataObject) -> None:
    """Every node has cpu and memory: the scorers read a slice of rows through the columns' two-row arrays
    (``NodeColumns.small``; requests of 8E are beyond SMALL and take the one-resource-at-a-time forms)."""
    builders, bound = [], []
    for i, spec in enumerate(nodes):
        builders.append(make_node(f"n{i}").alloc({"cpu": spec["cpu"], "memory": spec["mem"], "pods": "110"}))
        for j, (c, m) in enumerate(spec["load"]):
            bound.append(make_pod(f"b{i}-{j}").container({"cpu": c, "memory": m}).node_name(f"n{i}"))
    cluster = cluster_state(builders, bound)
    req = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None}
    pod = make_pod("incoming").container(req).pod(len(bound))
    cols = NodeColumns(cluster)
    assert cols.small
    infos = cluster.node_infos
    lo = data.draw(st.integers(0, len(infos) - 1))
    hi = data.draw(st.integers(lo + 1, len(infos)))
    resources = [("cpu", w_cpu), ("memory", w_mem)]
    if mem_first:
        resources.reverse()
    weights = [w for _, w in resources]
    least = ResourceAllocationScorer(LEAST_ALLOCATED, resources, least_allocated_scorer(weights),
                                     use_requested=False, pod_level=False)
    balanced = ResourceAllocationScorer("BalancedAllocation", resources, balanced_scorer,
                                        use_requested=True, pod_level=True)
    for scorer in (least, balanced):
        reqs = scorer.pod_requests(pod)
        got = scorer.score_rows(cols, slice(lo, hi), reqs)
        assert got is not None and got.dtype == np.int64
        want = [scorer.score(infos[i], reqs)[0] for i in range(lo, hi)]
        assert got.tolist() == want, scorer.name


def test_columns_with_quantities_beyond_small_score_one_resource_at_a_time() -> None:
    """A node with 2 PiB of memory: ``small`` is off for good and the slices take the general steps."""
    builders = [make_node("n0").alloc({"cpu": "4", "memory": "2Pi", "pods": "110"}),
                make_node("n1").alloc({"cpu": "2", "memory": "4Gi", "pods": "110"})]
    bound = [make_pod("b").container({"cpu": "1", "memory": "1Gi"}).node_name("n1")]
    cluster = cluster_state(builders, bound)
    pod = make_pod("incoming").container({"cpu": "500m", "memory": "1Gi"}).pod(1)
    cols = NodeColumns(cluster)
    assert not cols.small
    least = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1)], least_allocated_scorer([1, 1]),
                                     use_requested=False, pod_level=False)
    balanced = ResourceAllocationScorer("BalancedAllocation", [("cpu", 1), ("memory", 1)], balanced_scorer,
                                        use_requested=True, pod_level=True)
    for scorer in (least, balanced):
        reqs = scorer.pod_requests(pod)
        got = scorer.score_rows(cols, slice(0, 2), reqs)
        assert got is not None
        assert got.tolist() == [scorer.score(ni, reqs)[0] for ni in cluster.node_infos], scorer.name


def test_columns_follow_binds_and_scores_follow_the_columns() -> None:
    """``columns_for`` refreshes only when the change log moved (the same columns, up to date after a
    bind); a scorer asked of one set of columns, then of another, scores the second one's nodes."""
    least = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1)], least_allocated_scorer([1, 1]),
                                     use_requested=False, pod_level=False)
    states = [cluster_state([make_node(f"n{i}").alloc({"cpu": cpu, "memory": "4Gi", "pods": "110"}) for i in range(3)])
              for cpu in ("2", "8")]
    pod = make_pod("incoming").container({"cpu": "500m", "memory": "1Gi"}).pod(0)
    reqs = least.pod_requests(pod)
    for state in states:
        cols = columns_for(state)
        assert columns_for(state) is cols and cols.log_pos == len(state.change_log)
        assert least.score_rows(cols, slice(None), reqs).tolist() == [least.score(ni, reqs)[0] for ni in state.node_infos]
        state.bind(make_pod("b").container({"cpu": "1", "memory": "1Gi"}).pod(1), "n1")
        assert columns_for(state) is cols and cols.log_pos == len(state.change_log)
        assert cols.nz_cpu.tolist()[1] == 1000
        _assert_python_rows_match(cols)
        assert least.score_rows(cols, slice(None), reqs).tolist() == [least.score(ni, reqs)[0] for ni in state.node_infos]


def _assert_python_rows_match(cols: NodeColumns) -> None:
    """The columns' Python lists (the kept arrays' catch-up reads them) hold the int64 rows' numbers."""
    assert cols.alloc_cpu_py == cols.alloc_cpu.tolist() and cols.alloc_mem_py == cols.alloc_mem.tolist()
    assert cols.alloc_cpu_f == [float(a) for a in cols.alloc_cpu.tolist()]
    assert cols.alloc_mem_f == [float(a) for a in cols.alloc_mem.tolist()]
    assert cols.nz_free100_cpu_py == ((cols.alloc_cpu - cols.nz_cpu) * 100).tolist()
    assert cols.nz_free100_mem_py == ((cols.alloc_mem - cols.nz_mem) * 100).tolist()
    assert cols.req_cpu_f == [float(r) for r in cols.req_cpu.tolist()]
    assert cols.req_mem_f == [float(r) for r in cols.req_mem.tolist()]
    assert all(type(x) is float for x in cols.req_cpu_f + cols.req_mem_f + cols.alloc_cpu_f + cols.alloc_mem_f)


@pytest.mark.parametrize("binds_between", [1, 3, 60], ids=["one-bind", "a-few-binds", "beyond-redo-rows"])
def test_kept_arrays_follow_binds_for_each_request(binds_between: int) -> None:
    """The scorers' kept per-request arrays (``_kept_pair``: cpu and memory, LeastAllocated and balanced)
    are brought up to date with the rows bound to since each request's last use (node by node, or every
    row again past ``_REDO_ROWS``): after every round of binds each scorer's scores of every row, for
    every request, equal the per-node scores."""
    rng = random.Random(binds_between)
    nodes = [make_node(f"n{i}").alloc({"cpu": rng.choice(["2", "4", "16"]), "memory": rng.choice(["4Gi", "64Gi"]),
                                       "pods": "500"}) for i in range(8)]
    state = cluster_state(nodes)
    least = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", 1), ("memory", 1)], least_allocated_scorer([1, 1]),
                                     use_requested=False, pod_level=False)
    balanced = ResourceAllocationScorer("BalancedAllocation", [("cpu", 1), ("memory", 1)], balanced_scorer,
                                        use_requested=True, pod_level=True)
    shapes = [{"cpu": "100m", "memory": "128Mi"}, {"cpu": "1", "memory": "512Mi"}, {"cpu": "250m", "memory": "2Gi"}]
    k = 0
    for _ in range(4):
        for shape in shapes:
            pod = make_pod("incoming").container(shape).pod(0)
            cols = columns_for(state)
            for scorer in (least, balanced):
                reqs = scorer.pod_requests(pod)
                want = [scorer.score(ni, reqs)[0] for ni in state.node_infos]
                assert scorer.score_rows(cols, slice(None), reqs).tolist() == want, (scorer.name, shape)
                assert scorer.score_rows(cols, np.arange(8)[::-1].copy(), reqs).tolist() == want[::-1]
            _assert_python_rows_match(cols)
            for _ in range(binds_between):
                size = rng.choice(shapes)
                state.bind(make_pod(f"b{k}").container(size).pod(k + 1), f"n{rng.randrange(8)}")
                k += 1


@pytest.mark.parametrize(("allocatable", "requested", "fits"),
                         [("1Ei", "7Ei", True), ("1Ei", "10Ei", False), ("10Ei", "1Ki", False), ("0", "1Ki", True)],
                         ids=["requested-below-int64", "requested-beyond-int64", "allocatable-beyond-int64",
                              "no-room-for-the-pod"])
def test_a_row_is_stored_item_by_item_or_raises_as_numpy_does(allocatable: str, requested: str, fits: bool) -> None:
    """``NodeColumns`` stores a node's numbers through memoryviews of the int64 rows (``_read``, and the
    allocatable ones when built): every number lands in its row, ``pod_room`` and ``full_rows`` follow
    the pods, and a number beyond int64 raises NumPy's OverflowError (the stores it falls back to), not
    the memoryview's ValueError."""
    pods = "1" if allocatable == "0" else "110"
    builders = [make_node("n0").alloc({"cpu": "4", "memory": "8Gi", "ephemeral-storage": allocatable, "pods": pods}),
                make_node("n1").alloc({"cpu": "2", "memory": "4Gi", "pods": "110"})]
    bound = [make_pod("b").container({"cpu": "1", "memory": "1Gi", "ephemeral-storage": requested}).node_name("n0")]
    cluster = cluster_state(builders, bound)
    if not fits:
        with pytest.raises(OverflowError):
            NodeColumns(cluster)
        return
    cols = NodeColumns(cluster)
    for i, ni in enumerate(cluster.node_infos):
        r, a, nz = ni.requested, ni.allocatable, ni.non_zero_requested
        assert cols._ints[:, i].tolist() == [a.milli_cpu, a.memory, nz.milli_cpu, nz.memory, a.milli_cpu - r.milli_cpu,
                                             a.memory - r.memory, r.milli_cpu, r.memory, r.ephemeral_storage,
                                             a.ephemeral_storage - r.ephemeral_storage, a.ephemeral_storage,
                                             a.allowed_pod_number]
    full = pods == "1"
    assert cols.pod_room.tolist() == [not full, True] and cols.full_rows == ({0} if full else set())
    _assert_python_rows_match(cols)


@pytest.mark.parametrize(("kind", "weights"), [("least", (1, 1)), ("least", (2, 1)), ("balanced", (1, 1))],
                         ids=["least-allocated", "least-allocated-weighted", "balanced"])
@pytest.mark.parametrize("span", ["all-rows", "same-slice-another-object", "inner-slice"])
def test_the_every_row_span_scores_every_row_and_leaves_the_kept_arrays(kind: str, weights: tuple[int, int],
                                                                        span: str) -> None:
    """``cols.all_rows`` (the host choice's span when it scores every row) is scored from the kept arrays
    themselves, with no view of them: the same scores as the per-node scorer and as any other slice of
    the same rows, in a new array, and the kept arrays unchanged; other slices are read through views."""
    rng = random.Random(7)
    nodes = [make_node(f"n{i}").alloc({"cpu": rng.choice(["2", "4", "16"]), "memory": rng.choice(["4Gi", "64Gi"]),
                                       "pods": "500"}) for i in range(8)]
    state = cluster_state(nodes)
    for k in range(5):
        state.bind(make_pod(f"b{k}").container({"cpu": "500m", "memory": "1Gi"}).pod(k + 1), f"n{rng.randrange(8)}")
    if kind == "least":
        scorer = ResourceAllocationScorer(LEAST_ALLOCATED, [("cpu", weights[0]), ("memory", weights[1])],
                                          least_allocated_scorer(list(weights)), use_requested=False, pod_level=False)
    else:
        scorer = ResourceAllocationScorer("BalancedAllocation", [("cpu", 1), ("memory", 1)], balanced_scorer,
                                          use_requested=True, pod_level=True)
    cols = columns_for(state)
    rows = {"all-rows": cols.all_rows, "same-slice-another-object": slice(0, cols.n),
            "inner-slice": slice(2, 6)}[span]
    reqs = scorer.pod_requests(make_pod("incoming").container({"cpu": "1", "memory": "512Mi"}).pod(0))
    want = [scorer.score(ni, reqs)[0] for ni in state.node_infos][rows]
    got = scorer.score_rows(cols, rows, reqs)
    assert got is not None and got.tolist() == want
    c, m = scorer._kept_pair(cols, *reqs)
    kept = (c.copy(), m.copy())
    again = scorer.score_rows(cols, rows, reqs)
    assert again is not None and again is not got and again.tolist() == want
    assert not np.shares_memory(again, c) and not np.shares_memory(again, m)
    again += 1  # (a caller may sum into it)
    assert c.tolist() == kept[0].tolist() and m.tolist() == kept[1].tolist()


@pytest.mark.parametrize(("alloc", "load", "built", "bound"), [
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "1", "memory": "1Gi"}, True, True),
    ({"cpu": "4", "memory": "64Ti"}, {"cpu": "1", "memory": "1Gi"}, False, False),
    ({"cpu": "4", "memory": "63Ti"}, {"cpu": "1", "memory": "1Gi"}, True, True),
    ({"cpu": "100000000000", "memory": "8Gi"}, {"cpu": "1", "memory": "1Gi"}, False, False),
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "100000000000", "memory": "1Gi"}, True, False),
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "1", "memory": "64Ti"}, True, False),
    ({"cpu": "4", "memory": "8Gi"}, {"cpu": "1"}, True, True),
], ids=["all-small", "allocatable-memory-at-small", "allocatable-memory-below-small", "allocatable-cpu-beyond",
        "requested-cpu-beyond", "requested-memory-beyond", "non-zero-default-memory"])
def test_small_is_every_cpu_and_memory_quantity_below_small(alloc: dict[str, str], load: dict[str, str],
                                                            built: bool, bound: bool) -> None:
    """``NodeColumns.small``: every allocatable, requested and non-zero requested cpu / memory number of
    every row read so far is in [0, SMALL); a bind that brings one to SMALL or beyond turns it off for
    good, and while it holds the rows' Python lists follow the int64 rows."""
    cluster = cluster_state([make_node("n0").alloc({**alloc, "pods": "110"}),
                             make_node("n1").alloc({"cpu": "2", "memory": "4Gi", "pods": "110"})])
    assert columns_for(cluster).small == built
    cluster.bind(make_pod("b").container(load).pod(1), "n0")
    cols = columns_for(cluster)
    assert cols.small == bound
    cluster.bind(make_pod("c").container({"cpu": "1", "memory": "1Gi"}).pod(2), "n1")
    assert columns_for(cluster) is cols and cols.small == bound  # (never on again)
    if bound:
        _assert_python_rows_match(cols)
