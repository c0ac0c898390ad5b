"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced after placing the pod.

Uses the real requests (no 100m/200Mi defaults) on both sides, honours the incoming pod's pod-level
resources, and skips pods that request none of the configured resources.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle, PreScorePlugin, ScorePlugin
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.plugins.helper import decode_plugin_args
from pysched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    balanced_scorer,
    is_best_effort,
)
from pysched.snapshot.columns import NodeColumns, feasible_rows
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    NAME = NAME
    BATCH_SCORES_IN_RANGE = True  # 100 * (1 - |f0 - f1| / 2) with fractions capped to [0, 1]
    BATCH_SCORE_SPANS = True  # batch_score takes a slice of rows (score_rows reads through it, never writes)
    BATCH_SCORE_OWNED = True  # every score_rows array is a new one

    def __init__(self, args: Any = None) -> None:
        if args is None:
            args = decode_args(None)
        # Weights are validated to be 1 and never used by the balanced scorer.
        resources = [(r.name, r.weight) for r in args.resources]
        self.scorer = ResourceAllocationScorer(NAME, resources, balanced_scorer, use_requested=True, pod_level=True)

    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads no node)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        pod_requests = self.scorer.pod_requests(pod)
        if not any(pod_requests):  # (is_best_effort, without the call: integers, every one is 0)
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, pod_requests)
        return None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None:
            pod_requests = self.scorer.pod_requests(pod)
            if is_best_effort(pod_requests):
                return 0, None
        return self.scorer.score(node, pod_requests)

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None or not self.scorer.resources:
            return None
        return self.scorer.score_rows(cols, rows, pod_requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        pod_requests = state.read(PRE_SCORE_STATE_KEY)
        if pod_requests is None:
            pod_requests = self.scorer.pod_requests(pod)
            if is_best_effort(pod_requests):
                return [0] * len(nodes), None
        if not self.scorer.resources:
            return [], Status.as_error("resources not found")
        return self.scorer.score_nodes(nodes, pod_requests, feasible_rows(state, nodes)), None


PLUGIN = BalancedAllocation


def factory(args: Any, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args)
