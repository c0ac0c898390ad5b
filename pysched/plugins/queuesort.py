"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

from pysched.framework.interface import Handle, QueuedPodInfo, QueueSortPlugin

NAME = "PrioritySort"


class PrioritySort(QueueSortPlugin):
    NAME = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1 = a.pod.priority
        p2 = b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


PLUGIN = PrioritySort


def factory(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort()
