"""NodeUnschedulable: keep pods off cordoned nodes unless they tolerate the unschedulable taint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pysched.framework.batch import BatchVerdict, shape_verdict
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle
from pysched.framework.status import Status
from pysched.framework.whatif import UNSCHEDULABLE, Change, WhatIfPlugin
from pysched.model.objects import Pod, Taint, tolerates_taint
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from pysched.snapshot.columns import NodeColumns

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterPlugin, WhatIfPlugin):
    NAME = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if node.node.unschedulable and not tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return Status.unresolvable(ERR_REASON)
        return None

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        return shape_verdict(self, state, pod, cols, repr(pod.tolerations))

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change:
        """Uncordon the node."""
        return Change(NAME, UNSCHEDULABLE, status.message(), details={"cordoned": True}, uncordon=True)


PLUGIN = NodeUnschedulable


def factory(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
