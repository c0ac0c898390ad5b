"""LeastAllocated's and BalancedAllocation's column scores (the batched path) equal the per-node scorer,
with any resource weights and with nodes that lack a resource (allocatable 0), on random clusters."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from pysched.plugins.noderesources.fit import LEAST_ALLOCATED
from pysched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    balanced_scorer,
    least_allocated_scorer,
)
from pysched.snapshot.columns import NodeColumns
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
