"""NodeUnschedulable: keep pods off cordoned nodes unless they tolerate the unschedulable taint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pysched.framework.batch import BatchVerdict, every_row_passes, no_statuses
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
_UNCORDONED = (NAME, "not cordoned")  # key of the rows' mask in NodeColumns.masks


_no_statuses = no_statuses(NAME)


class NodeUnschedulable(FilterPlugin, WhatIfPlugin):
    NAME = NAME
    # (the columns, the verdict passing every row, their rows' not-cordoned mask: every_row_passes when no
    # node is cordoned)
    _passing: tuple[NodeColumns, BatchVerdict, np.ndarray] | None = None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if node.node.unschedulable and not tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return Status.unresolvable(ERR_REASON)
        return None

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        # Two pod shapes only: tolerates the taint (every row passes) or not (the cordoned rows fail). A
        # verdict that passes every row is one shared object per set of columns (a verdict is only read).
        # Nodes never change within one columns object: the mask is kept with it, and without a cordoned
        # node every pod gets the passing verdict (its tolerations unread).
        hit = self._passing
        if hit is None or hit[0] is not cols:
            everyone = every_row_passes(cols)
            ok = cols.masks.get(_UNCORDONED)
            if ok is None:
                ok = np.fromiter((not ni.node.unschedulable for ni in cols.infos), dtype=bool, count=cols.n)
                if ok.all():
                    ok = everyone
                else:
                    ok.flags.writeable = False
                cols.masks[_UNCORDONED] = ok
            hit = self._passing = (cols, BatchVerdict(everyone, _no_statuses), ok)
        passing = hit[1]
        if hit[2] is passing.ok or tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
            return passing  # (no cordoned node, or the pod tolerates the taint: no status to share)
        rejected = Status.unresolvable(ERR_REASON)  # shared by the rejected rows of this verdict
        return BatchVerdict(hit[2], lambda rows: [rejected] * len(rows))

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change:
        """Uncordon the node."""
        return Change(NAME, UNSCHEDULABLE, status.message(), details={"cordoned": True}, uncordon=True)


PLUGIN = NodeUnschedulable


def factory(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
