"""NodeName: a pod with ``spec.nodeName`` fits only that node."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pysched.framework.batch import BatchVerdict, every_row_passes
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle
from pysched.framework.status import Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from pysched.snapshot.columns import NodeColumns

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    NAME = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if pod.node_name and pod.node_name != node.name:
            return Status.unresolvable(ERR_REASON)
        return None

    # (the columns, the verdict that passes every row of them): one shared verdict for every pod without
    # ``spec.nodeName`` (a verdict is only read)
    _passing: tuple[NodeColumns, BatchVerdict] | None = None

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict:
        if not pod.node_name:
            hit = self._passing
            if hit is None or hit[0] is not cols:
                hit = self._passing = (cols, BatchVerdict(every_row_passes(cols), lambda rows: []))
            return hit[1]
        ok = cols.names_arr == pod.node_name
        st = Status.unresolvable(ERR_REASON)  # one shared Status for every other node
        return BatchVerdict(ok, lambda rows: [st] * len(rows))


PLUGIN = NodeName


def factory(args: None, handle: Handle) -> NodeName:
    return NodeName()
