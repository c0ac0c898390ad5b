"""FIFOSort: a queue sort that ignores priority — pods are tried in creation order (oldest first).

It replaces PrioritySort; a configuration has one queue sort, the same in every profile:

    profiles:
    - plugins:
        queueSort:
          enabled: [{name: FIFOSort}]
          disabled: [{name: "*"}]

Pods created at the same instant keep their input order.
"""

from __future__ import annotations

from pysched.framework.interface import Handle, QueuedPodInfo, QueueSortPlugin

NAME = "FIFOSort"


class FIFOSort(QueueSortPlugin):
    NAME = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


PLUGIN = FIFOSort


def factory(args: None, handle: Handle) -> FIFOSort:
    return FIFOSort()
