"""NodeName: a pod with ``spec.nodeName`` fits only that node."""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle
from pysched.framework.status import Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    NAME = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if pod.node_name and pod.node_name != node.name:
            return Status.unresolvable(ERR_REASON)
        return None


PLUGIN = NodeName


def factory(args: None, handle: Handle) -> NodeName:
    return NodeName()
